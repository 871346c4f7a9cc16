//! [`Ctx`]: the engine-owned state (clock, tasks as the engine sees them, CPUs, the event
//! queue, the PRNG, the trace) and the services a policy may use inside a hook.
//!
//! The engine (`engine.rs`) holds a `Ctx` beside the policy and passes `&mut Ctx` into every
//! hook, so a policy can read and request but never reach the engine's private program state.

use crate::event::{Event, EventKind, EventQueue};
use crate::sched::WakeFlags;
use crate::timer::{ClassSet, TimerId, TimerTable};
use crate::topology::{SchedDomain, SchedDomains, SdEra, Topology, TopologyMasks};
use crate::trace::writer::PrevState;
use crate::trace::Tracer;
use crate::types::{CpuId, CpuMask, GroupId, SchedAttrs, TaskId, Time};
use schedlab_spec::model::{group_cpus, Cgroup, CpuCgroup};
use schedlab_spec::rng::Rng;

/// A per-task view the engine maintains and policies read.
#[derive(Clone, Copy, Debug)]
pub struct TaskView {
    pub attrs: SchedAttrs,
    pub affinity: CpuMask,
    /// The CPU the task is assigned to (task_cpu()).
    pub cpu: CpuId,
    /// Total CPU time consumed (se.sum_exec_runtime), up to the last accounting point.
    pub sum_exec_ns: u64,
    /// The task that forked this one, if any.
    pub parent: Option<TaskId>,
    /// True while the task is queued (between enqueue and dequeue).
    pub on_rq: bool,
    /// True while the task is the current task of its CPU.
    pub running: bool,
    /// True once the task has exited.
    pub exited: bool,
    /// The cgroup the task is in (`task_group(p)`).
    pub group: GroupId,
    /// How a trace shows the task while it is blocked (`S` or `D`).
    pub(crate) sleep_state: PrevState,
}

/// A cgroup as the classes see it: its place in the tree and its controllers' settings
/// (`struct task_group`).
#[derive(Clone, Debug)]
pub struct Group {
    pub path: String,
    /// `None` for the root.
    pub parent: Option<GroupId>,
    /// The cpu controller's settings as given (defaults where `None`).
    pub cpu: CpuCgroup,
    /// The CPUs its tasks may use (the effective `cpuset.cpus`).
    pub cpus: CpuMask,
}

/// Per-CPU engine state.
#[derive(Clone, Debug)]
pub(crate) struct CpuState {
    /// The running task (rq->curr), `None` = idle.
    pub curr: Option<TaskId>,
    /// Start of the current accounting segment of `curr` (exec_start).
    pub seg_start: Time,
    /// Time the CPU became idle (for idle accounting), valid while `curr` is None.
    pub idle_since: Time,
    /// Generation of the pending completion event; a popped event with another
    /// generation is stale and ignored (lazy deletion keeps the heap allocation-free).
    pub gen: u64,
    /// A tick event is pending for this CPU.
    pub tick_armed: bool,
    /// Context-switch overhead still to be paid before `curr` makes progress.
    pub overhead_left: u64,
    pub busy_ns: u64,
    pub idle_ns: u64,
    pub overhead_ns: u64,
    pub switches: u64,
    /// Scheduler work counted on this CPU and not yet charged as overhead (cost model:
    /// `machine.sched_work_ps`; charged at the CPU's next context switch — a policy timer's
    /// callback's work is not kept here: its interrupt pays it at once).
    pub pending_work: u64,
    /// Scheduling decisions (`schedule()` calls) taken on this CPU since its last switch,
    /// each owed `CoreCosts::sched_decision_ns` at the next one.
    pub pending_decisions: u64,
    /// Sub-nanosecond remainder (ps) of the work already charged, carried to the next
    /// charge so that rounding never loses or invents time.
    pub work_carry_ps: u64,
    /// Classes that queued a balance callback on this CPU (`rq->balance_callback`).
    pub callbacks: ClassSet,
    /// CPU time the current task ran that the policy has not been told of yet
    /// (`update_curr` reports it).
    pub unreported_ns: u64,
}

/// Counters a run keeps per task.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaskCounters {
    pub migrations: u64,
    /// Context switches into the task whose cost was drawn (the index of its next draw,
    /// when the switch cost varies).
    pub switch_draws: u64,
}

/// The engine-owned state and the services available to policies.
pub struct Ctx {
    pub(crate) now: Time,
    pub(crate) hz: u32,
    pub(crate) tick_ns: u64,
    pub(crate) tasks: Vec<TaskView>,
    pub(crate) counters: Vec<TaskCounters>,
    pub(crate) cpus: Vec<CpuState>,
    pub(crate) resched_mask: CpuMask,
    /// CPUs whose reschedule waits for their task's kernel span to allow it (the
    /// preemption model; see `kernel.rs`): need_resched is still set there.
    pub(crate) deferred_resched: CpuMask,
    pub(crate) events: EventQueue,
    pub(crate) seq: u64,
    pub(crate) rng: Rng,
    pub(crate) work_units: u64,
    /// The CPU whose code the current hook stands for (set by the engine before it calls
    /// a hook): counted work is charged to it.
    pub(crate) charge_cpu: usize,
    /// The wake-up in progress (set by the engine before its wake hooks).
    pub(crate) wake: WakeFlags,
    /// Policy timers (hrtimers) armed and pending.
    pub(crate) timers: TimerTable,
    /// The cgroups; `groups[0]` is the root.
    pub(crate) groups: Vec<Group>,
    /// The class of a class stack whose hook is running (0 for a policy that is not a
    /// stack); see [`Ctx::class_index`].
    pub(crate) class: u8,
    pub(crate) tracer: Tracer,
    /// The machine's shape and its Linux scheduling domains (flat unless the engine was
    /// given a topology).
    pub(crate) topology: Topology,
    pub(crate) domains: SchedDomains,
    /// Each task's current job's absolute deadline (see [`Ctx::job_deadline`]);
    /// [`NO_DEADLINE`] for none. Grown as tasks get their first deadline.
    pub(crate) job_deadlines: Vec<Time>,
}

/// [`Ctx::job_deadline`]'s "no deadline" in its table.
const NO_DEADLINE: Time = Time::MAX;

impl Ctx {
    pub(crate) fn new(nr_cpus: usize, hz: u32, seed: u64, tracer: Tracer) -> Ctx {
        let cpu = CpuState {
            curr: None,
            seg_start: 0,
            idle_since: 0,
            gen: 0,
            tick_armed: false,
            overhead_left: 0,
            busy_ns: 0,
            idle_ns: 0,
            overhead_ns: 0,
            switches: 0,
            pending_work: 0,
            pending_decisions: 0,
            work_carry_ps: 0,
            callbacks: ClassSet::EMPTY,
            unreported_ns: 0,
        };
        Ctx {
            now: 0,
            hz,
            tick_ns: 1_000_000_000 / hz as u64,
            tasks: Vec::new(),
            counters: Vec::new(),
            cpus: vec![cpu; nr_cpus],
            resched_mask: CpuMask::empty(),
            deferred_resched: CpuMask::empty(),
            events: EventQueue::with_capacity(1024),
            seq: 0,
            rng: Rng::new(seed),
            work_units: 0,
            charge_cpu: 0,
            wake: WakeFlags::default(),
            timers: TimerTable::default(),
            groups: vec![Group {
                path: "/".into(),
                parent: None,
                cpu: CpuCgroup::default(),
                cpus: CpuMask::first_n(nr_cpus),
            }],
            class: 0,
            tracer,
            topology: Topology::flat(nr_cpus as u32),
            domains: Topology::flat(nr_cpus as u32).build_domains(SdEra::V6_1),
            job_deadlines: Vec::new(),
        }
    }

    /// Give the machine a shape (the engine calls it before the run starts): the
    /// scheduling domains are rebuilt from it. Its CPU count must be the machine's.
    pub(crate) fn set_topology(&mut self, t: Topology) {
        debug_assert_eq!(
            t.nr_cpus() as usize,
            self.cpus.len(),
            "topology of another machine"
        );
        self.domains = t.build_domains(SdEra::V6_1);
        self.topology = t;
    }

    /// Schedule an engine event (allocation-free once the heap has grown to the
    /// workload's steady-state size).
    #[inline]
    pub(crate) fn push(&mut self, time: Time, kind: EventKind) {
        self.seq += 1;
        self.events.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of CPUs of the machine.
    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The machine's tick frequency (HZ).
    #[inline]
    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// Length of one tick (jiffy) in ns.
    #[inline]
    pub fn tick_ns(&self) -> u64 {
        self.tick_ns
    }

    /// Number of tasks created so far (ids are `0..nr_tasks()`).
    #[inline]
    pub fn nr_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// The engine's view of a task.
    #[inline]
    pub fn task(&self, t: TaskId) -> &TaskView {
        &self.tasks[t.idx()]
    }

    /// The absolute deadline of `t`'s current job: its release plus its relative deadline
    /// (`schedlab_core::metrics::relative_deadline`: `dl-deadline`, else the period of the
    /// timer that releases it), the deadline its misses are counted against. A job starts
    /// at each use of a timer (released at the timer's expiry) and at the task's start when
    /// its program uses a timer (rt-app anchors the timer there, so the first job is due by
    /// the timer's first expiry). `None` for a task whose program uses no timer; a task
    /// woken by other means (a condition, a mutex, a pipe) keeps its job's deadline.
    #[inline]
    pub fn job_deadline(&self, t: TaskId) -> Option<Time> {
        self.job_deadlines
            .get(t.idx())
            .copied()
            .filter(|&d| d != NO_DEADLINE)
    }

    /// A new job of `t` is due by `at` (the engine calls it at each release).
    pub(crate) fn set_job_deadline(&mut self, t: TaskId, at: Time) {
        if self.job_deadlines.len() <= t.idx() {
            self.job_deadlines.resize(t.idx() + 1, NO_DEADLINE);
        }
        self.job_deadlines[t.idx()] = at.min(NO_DEADLINE - 1);
    }

    /// A cgroup (`groups[0]` is the root `/`).
    #[inline]
    pub fn group(&self, g: GroupId) -> &Group {
        &self.groups[g as usize]
    }

    /// Number of cgroups (ids are `0..nr_groups()`).
    #[inline]
    pub fn nr_groups(&self) -> usize {
        self.groups.len()
    }

    /// Set the cgroup tree from a spec's (the root first, parents before children).
    pub fn set_groups(&mut self, groups: &[Cgroup]) {
        let machine = CpuMask::first_n(self.nr_cpus());
        self.groups = groups
            .iter()
            .enumerate()
            .map(|(g, c)| Group {
                path: c.path.clone(),
                parent: c.parent,
                cpu: c.cpu.clone(),
                cpus: group_cpus(groups, g as GroupId)
                    .map_or(machine, |cpus| crate::program::mask_of(cpus).and(&machine)),
            })
            .collect();
    }

    /// The task running on `cpu`, if any (rq->curr; `None` = the idle task).
    #[inline]
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.cpus[cpu.idx()].curr
    }

    /// CPU time `cpu`'s current task has run that the policy has not been told of by
    /// `update_curr` (`rq_clock_task() - exec_start`); policies that need an exact `now`
    /// figure use it.
    #[inline]
    pub fn unaccounted_ns(&self, cpu: CpuId) -> u64 {
        let c = &self.cpus[cpu.idx()];
        if c.curr.is_some() {
            c.unreported_ns + (self.now - c.seg_start)
        } else {
            0
        }
    }

    /// Ask the engine to call put_prev/pick_next on `cpu` once this event is handled
    /// (resched_curr()).
    #[inline]
    pub fn resched(&mut self, cpu: CpuId) {
        self.resched_mask.set(cpu);
    }

    /// True if `cpu` will reschedule once the current event is handled
    /// (test_tsk_need_resched(rq->curr)).
    #[inline]
    pub fn need_resched(&self, cpu: CpuId) -> bool {
        self.resched_mask.contains(cpu) || self.deferred_resched.contains(cpu)
    }

    /// Move a queued task that is not running to another CPU (set_task_cpu()): the engine
    /// counts the migration and traces sched_migrate_task. The policy moves it between its
    /// own queues itself.
    pub fn set_task_cpu(&mut self, t: TaskId, cpu: CpuId) {
        let from = self.tasks[t.idx()].cpu;
        debug_assert!(
            !self.tasks[t.idx()].running,
            "set_task_cpu on a running task {t:?}"
        );
        debug_assert!(
            self.tasks[t.idx()].affinity.contains(cpu),
            "set_task_cpu({t:?}, {cpu:?}) outside affinity"
        );
        if from == cpu {
            return;
        }
        self.tasks[t.idx()].cpu = cpu;
        self.counters[t.idx()].migrations += 1;
        if self.tracer.enabled() {
            let prio = self.tasks[t.idx()].attrs.prio();
            let on = self.curr_pid(from);
            self.tracer.migrate(self.now, from, on, t, prio, from, cpu);
        }
    }

    /// Count `units` of scheduler work (list steps, tree levels, bitmap words) for the
    /// scheduler-cost metric. The work is also owed by the CPU the current hook runs on,
    /// which pays for it at its next context switch when the cost model is on (in a
    /// policy timer's callback, at once, in the timer's interrupt).
    #[inline]
    pub fn count_work(&mut self, units: u64) {
        self.work_units += units;
        self.cpus[self.charge_cpu].pending_work += units;
    }

    /// The wake-up being placed (kernel `wake_flags` + the waker's CPU): meaningful in
    /// `select_cpu`, `enqueue` of a waking or new task, and `wakeup_preempt`.
    #[inline]
    pub fn wake_flags(&self) -> WakeFlags {
        self.wake
    }

    /// Arm a one-shot policy timer (`hrtimer_start` with an absolute expiry): at `at` (or
    /// now, if `at` is past) `Scheduler::timer` is called with `token`, unchanged, in the
    /// class that armed it. The handle cancels it.
    ///
    /// Panics when 2^24 timers are pending at once (a policy that never lets its timers
    /// fire or cancels them).
    pub fn arm_timer(&mut self, at: Time, token: u64) -> TimerId {
        let at = at.max(self.now);
        let id = self
            .timers
            .arm(token, self.class, CpuId(self.charge_cpu as u32))
            .expect("more than 2^24 policy timers pending: a policy leaks timers");
        let (slot, gen) = TimerTable::event_key(id);
        self.push(at, EventKind::PolicyTimer { slot, gen });
        id
    }

    /// Cancel a policy timer (`hrtimer_cancel`): it will not fire. Returns false when it
    /// had already fired or been cancelled.
    pub fn cancel_timer(&mut self, id: TimerId) -> bool {
        self.timers.cancel(id)
    }

    /// Queue a balance callback on `cpu` (`queue_balance_callback`): the engine calls
    /// `Scheduler::balance_callback` for this class once the CPU's current scheduling
    /// operation is over — after the context switch of a `schedule()`, or at the end of an
    /// attribute change — as `finish_task_switch`/`balance_callbacks` run the kernel's
    /// queued callbacks. Queuing it twice before it runs is the same as once.
    #[inline]
    pub fn queue_balance_callback(&mut self, cpu: CpuId) {
        debug_assert!(self.class < 32, "class index {} out of range", self.class);
        self.cpus[cpu.idx()].callbacks.0 |= 1 << self.class;
    }

    /// The index, within a class stack, of the class whose hook is running: 0 for the
    /// highest class (and for a policy that is not a stack), then counting down the stack.
    /// Timers and balance callbacks are delivered by this index.
    #[inline]
    pub fn class_index(&self) -> u8 {
        self.class
    }

    /// Run `f` as class `index` of a stack (timers armed and callbacks queued inside are
    /// that class's), restoring the previous index afterwards.
    #[inline]
    pub(crate) fn as_class<R>(&mut self, index: u8, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let saved = std::mem::replace(&mut self.class, index);
        let r = f(self);
        self.class = saved;
        r
    }

    /// A deterministic pseudo-random number from the run's seeded PRNG.
    #[inline]
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// The machine's shape (packages, cores, threads, caches).
    #[inline]
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// `cpu`'s scheduling domains, bottom-up (`for_each_domain`), as Linux 6.1 builds them
    /// (`sd_init` constants of that kernel; a policy modelling another era derives its own
    /// with [`crate::topology::sd_init`]). Empty on a one-CPU machine.
    #[inline]
    pub fn sched_domains(&self, cpu: CpuId) -> &[SchedDomain] {
        self.domains.of(cpu)
    }

    /// The whole hierarchy with its per-CPU shortcuts (`sd_llc`, SMT masks).
    #[inline]
    pub fn domains(&self) -> &SchedDomains {
        &self.domains
    }

    /// The CPUs sharing `cpu`'s last-level cache (`sd_llc`'s span).
    #[inline]
    pub fn llc_span(&self, cpu: CpuId) -> &CpuMask {
        self.domains.llc_span(cpu)
    }

    /// The hardware threads of `cpu`'s core, `cpu` included (`cpu_smt_mask`).
    #[inline]
    pub fn smt_siblings(&self, cpu: CpuId) -> &CpuMask {
        self.domains.smt_siblings(cpu)
    }

    /// The pid shown as the current task of `cpu` in trace lines (0 = idle).
    #[inline]
    pub(crate) fn curr_pid(&self, cpu: CpuId) -> Option<TaskId> {
        self.cpus[cpu.idx()].curr
    }
}

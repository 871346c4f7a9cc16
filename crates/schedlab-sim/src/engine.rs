//! The run loop: events in (time, sequence) order and task programs stepped on their CPUs.
//! Every scheduling operation (fork, wake-up, block, exit, attribute change, yield, tick,
//! timer, `schedule()`) goes through [`SchedCore`], the one implementation of the hook
//! protocol; this file adds what a workload needs around it: programs, synchronisation
//! objects, channels, metrics and their per-task states.
//!
//! Invariants (checked after every event under `--check`, and in debug builds — see
//! `check.rs`): a task is in at most one place (running on one CPU, or queued on one CPU,
//! or blocked, or exited); CPU time is conserved exactly (busy + idle = elapsed, and task
//! CPU time + switch overhead = busy); affinity is respected; channel bytes balance.
//!
//! The hot loop allocates nothing per event: events are `Copy` values in the event queue
//! (`event.rs`), which only grows to the workload's steady-state size; stale events (a
//! completion whose task was preempted) are skipped by generation number instead of being
//! removed.

use schedlab_spec::cost::{draw, CostKey, Spread, Spreads};
use schedlab_spec::kernel::SpanKind;
use schedlab_spec::model::{
    ChannelKind, Event as Op, IoPrio, IoSpec, Phase, Policy, Spec, TimerMode,
};

use crate::budget::{self, Budget};
use crate::ctx::Ctx;
use crate::event::EventKind;
use crate::io::{BlockLayer, IoStep};
use crate::kernel::{KernelModel, Resched};
use crate::metrics::{relative_deadline, ActKind, Metrics, SampleMode};
use crate::program::{first_timer_period, mask_of, Advance, Programs, Walk};
use crate::protocol::{CoreCosts, SchedCore};
use crate::sched::Scheduler;
use crate::smt::Smt;
use crate::sync::{Barrier, Channel, Cond, Misuse, Mutex};
use crate::trace::writer::PrevState;
use crate::types::{CpuId, CpuMask, SchedAttrs, TaskId, Time};

/// A task's next expiry of each unique timer its program uses, in the order of its
/// template's `Engine::unique_timers` (u64::MAX = unused so far): the first inline, as
/// most programs use one timer, the others (rarely any) boxed.
#[derive(Clone, Debug)]
pub(crate) struct TaskTimers {
    /// The first unique timer's slot (u32::MAX if the program uses none).
    first_slot: u32,
    first: Time,
    rest: Box<[Time]>,
}

impl TaskTimers {
    fn new(used: &[u32]) -> Self {
        TaskTimers {
            first_slot: used.first().copied().unwrap_or(u32::MAX),
            first: u64::MAX,
            rest: vec![u64::MAX; used.len().saturating_sub(1)].into(),
        }
    }
}

/// The CPUs a task asks for: the whole machine (most tasks: nothing kept), or a set of
/// its own, boxed once and then rewritten in place (so a phase that changes it allocates
/// at most once per task), which keeps 24 bytes off every task's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct WantCpus(Option<Box<CpuMask>>);

impl WantCpus {
    /// The set, given the machine's CPUs.
    #[inline]
    fn get(&self, machine: CpuMask) -> CpuMask {
        self.0.as_deref().copied().unwrap_or(machine)
    }

    fn set(&mut self, m: CpuMask, machine: CpuMask) {
        match &mut self.0 {
            Some(b) => **b = m,
            None if m == machine => {}
            None => self.0 = Some(Box::new(m)),
        }
    }
}

/// Why a task is blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    Sleep,
    Timer,
    Mutex,
    Cond,
    Barrier,
    Read,
    Write,
    Suspend,
    /// Waiting for a block I/O request to complete (`io_schedule`).
    Io,
    /// Created, waiting for its start `delay` (nothing may wake it early).
    NotStarted,
}

/// A task's engine state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TState {
    /// Queued, not running.
    Runnable,
    /// Current task of its CPU.
    Running,
    Blocked(Block),
    Exited,
}

/// Progress inside the current op (ops that take CPU time or span several wake-ups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The op has not started.
    Fresh,
    /// Consuming CPU time (`remaining` ns left) before the op's effect (`then_effect`).
    Burst,
    /// A `runtime` op running until `until`.
    Until(Time),
    /// A channel transfer with `xfer_left` bytes to go (its CPU cost is paid).
    Transfer,
}

/// Per-task engine state beside the policy-visible [`TaskView`].
#[derive(Clone, Debug)]
pub(crate) struct TaskRt<'a> {
    pub tmpl: u32,
    pub name: String,
    /// Where the task is in its program.
    pub walk: Walk<'a>,
    pub state: TState,
    pub stage: Stage,
    /// The task's CPU time (`sum_exec_ns`) at which the current burst is done.
    pub burst_end: u64,
    /// The length the current burst was given (its draw, when its cost varies).
    pub burst_len: u64,
    /// Draws of varying costs the task has made (its ops' spans and its timers' expiries):
    /// the index of its next draw (`schedlab_spec::cost`).
    pub draws: u64,
    /// CPU time the expiry of the task's pending sleep timer costs.
    pub timer_irq_ns: u64,
    pub xfer_left: u64,
    /// Generation of the pending Wake event (sleep/timer); others are stale.
    pub wake_gen: u64,
    /// Next expiry of each rt-app "unique" timer its program uses (one copy per task).
    pub timers: TaskTimers,
    /// When the task started (rt-app anchors timers at the instance's start).
    pub started_at: Time,
    /// When the task entered its current state (for wait and sleep times).
    pub since: Time,
    /// When its current sleep was asked to end (the release of the activation its
    /// expiry opens, however late the kernel's timer fires).
    pub expiry: Time,
    /// A new phase begins with its next op: apply the phase's attributes first.
    pub phase_pending: bool,
    /// The CPUs the task asks for (its task or phase `cpus`, all if none): its affinity is
    /// this within its cgroup's cpuset (`user_cpus_ptr`, kept across group changes).
    pub want_cpus: WantCpus,
    /// The mutex a condvar wait releases and re-acquires.
    pub cond_mutex: u32,
    /// Woken from a condvar: re-acquire `cond_mutex` before the next op.
    pub reacquire: bool,
    pub wait_ns: u64,
    pub sleep_ns: u64,
    /// The lengths of the kernel spans it completed (system time).
    pub sys_ns: u64,
    /// The interrupt time charged to it (ticks, timer expiries, completions).
    pub irq_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

/// Softirq work (`kernel.softirq_ns`), per CPU: what is pending, the thread that runs what
/// interrupt exits leave, and until when the CPU runs softirq work no reschedule may
/// interrupt.
#[derive(Clone, Debug)]
pub(crate) struct Softirqs {
    /// Work raised and not yet run (ns).
    pub pending: Vec<u64>,
    /// The softirq thread of CPU 0 (the others follow it in CPU order); `None` without
    /// softirq work.
    pub first_thread: Option<TaskId>,
    /// The CPU runs softirq work with preemption off until then (on interrupt exit, or in
    /// ksoftirqd without `rt`): a reschedule asked for before waits for it.
    pub busy_until: Vec<Time>,
    /// An `IrqExit` event is pending for a reschedule that waits for `busy_until`.
    pub exit_armed: Vec<bool>,
}

impl Softirqs {
    fn new(nr_cpus: usize) -> Self {
        Softirqs {
            pending: vec![0; nr_cpus],
            first_thread: None,
            busy_until: vec![0; nr_cpus],
            exit_armed: vec![false; nr_cpus],
        }
    }

    /// The softirq thread of `cpu`.
    #[inline]
    fn thread_of(&self, cpu: CpuId) -> Option<TaskId> {
        self.first_thread.map(|t| TaskId(t.0 + cpu.0))
    }

    /// The CPU whose softirq thread `t` is, if it is one.
    #[inline]
    pub fn cpu_of(&self, t: TaskId, nr_cpus: usize) -> Option<CpuId> {
        let first = self.first_thread?;
        let i = t.0.checked_sub(first.0)?;
        ((i as usize) < nr_cpus).then_some(CpuId(i))
    }
}

/// Run configuration after the spec and command line are merged.
#[derive(Clone, Debug)]
pub(crate) struct RunCfg {
    pub end: Option<Time>,
    /// The costs the scheduler core charges (switches, counted scheduler work).
    pub costs: CoreCosts,
    pub fork_ns: u64,
    pub wakeup_ns: u64,
    pub sleep_ns: u64,
    pub exit_ns: u64,
    /// How the costs above spread (`schedlab_spec::cost`), and the seed they draw from.
    pub spreads: Spreads,
    pub seed: u64,
    /// The kernel's own execution (preemption model, tick, timers, span shapes).
    pub kernel: KernelModel,
    pub check: bool,
    /// Bytes the run may hold (see `budget.rs`).
    pub memory_budget: u64,
    /// The caller's request to stop, asked with the memory count.
    pub cancel: Option<budget::Cancel>,
}

/// Why a run stopped early.
#[derive(Debug)]
pub(crate) struct RunError(pub String);

/// Program steps at one instant after which the engine asks whether the task it is
/// stepping can ever make time pass ([`Engine::loops_without_time`]). A task looping for
/// ever over events that take no time (e.g. only `signal` events) is a workload bug: the
/// run stops with an error instead of hanging. A finite loop ends, however long it is, so
/// the count starts again and the run goes on.
const MAX_ZERO_TIME_STEPS: u32 = 1_000_000;

/// With more tasks than this their state no longer stays in the caches, and the run loop
/// prefetches the state of the next event's task; with fewer it is cached and the look-ahead
/// would only cost.
const PREFETCH_MIN_TASKS: usize = 512;

pub(crate) struct Engine<'a, S: Scheduler> {
    /// The policy and the kernel's side of the machine.
    pub core: SchedCore<S>,
    /// The spec's task programs (template `i` is the spec's task `i`).
    pub programs: Programs<'a>,
    pub rt: Vec<TaskRt<'a>>,
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    pub channels: Vec<Channel>,
    /// Block devices with their I/O schedulers.
    pub blk: BlockLayer,
    /// Per timer: rt-app "unique" (per task) or shared by every task that names it.
    timer_unique: Vec<bool>,
    /// Per template: the unique timers its program uses, sorted (a task keeps an expiry
    /// for each of these only, so memory grows with tasks, not tasks × timers).
    unique_timers: Vec<Box<[u32]>>,
    /// Next expiry of each shared timer (u64::MAX = unused so far).
    shared_timers: Vec<Time>,
    pub metrics: Metrics,
    /// What the run keeps of its samples (`memory`, `file`, `summary`).
    pub sample_mode: &'static str,
    pub cfg: RunCfg,
    pub events: u64,
    /// Per-CPU: a completion event for the current burst is pending.
    pub(crate) burst_armed: Vec<bool>,
    /// Per-CPU: policy timers expired there whose cost was drawn (the index of the next
    /// draw, when `timer_irq_ns` varies).
    policy_timer_draws: Vec<u64>,
    /// Softirq work and the per-CPU threads that run what interrupt exits leave.
    softirq: Softirqs,
    /// CPUs with a deferred reschedule (`Ctx::deferred_resched`; 0 lets the hot loop
    /// skip every check).
    deferred_count: u32,
    /// Per channel: the kind of kernel span its calls run as.
    channel_span: Vec<SpanKind>,
    /// Some machine cost or channel call cost has a spread (else no op cost is drawn).
    costs_vary: bool,
    /// Instances created per template (for names and `resume`).
    pub instances: Vec<Vec<TaskId>>,
    /// Scratch buffer for waking several tasks without allocating.
    scratch: Vec<TaskId>,
    /// Threads of one named process share a tgid.
    process_tgid: Vec<(String, u32)>,
    pub live_tasks: usize,
    pub last_exit: Option<Time>,
    zero_steps: u32,
    pub error: Option<RunError>,
    /// The memory budget (see `budget.rs`).
    budget: Budget,
    /// Why the run stopped before its end with a partial result (its memory budget).
    pub stopped: Option<String>,
    /// SMT siblings sharing their core (`smt.rs`); `None` unless some thread is slowed.
    pub(crate) smt: Option<Box<Smt>>,
    /// The caller stopped the run (`RunCfg::cancel`): there is no result.
    pub cancelled: bool,
}

impl<'a, S: Scheduler> Engine<'a, S> {
    pub fn new(
        spec: &'a Spec,
        ctx: Ctx,
        policy: S,
        cfg: RunCfg,
        samples: SampleMode,
        blk: BlockLayer,
    ) -> Self {
        let programs = Programs::compile(spec);
        let nr_cpus = ctx.nr_cpus();
        let r = &spec.resources;
        let timer_unique: Vec<bool> = (0..r.timers.len())
            .map(|i| r.timer_unique.get(i).copied().unwrap_or(true))
            .collect();
        let unique_timers = (0..programs.len() as u32)
            .map(|t| unique_timers_of(programs.phases(t), &timer_unique))
            .collect();
        let memory_budget = cfg.memory_budget;
        let cfg_costs_vary = cfg.spreads.any() || r.channels.iter().any(|c| c.op_spread.is_some());
        let threads = ctx.topology().threads_per_core;
        let smt = Smt::new(nr_cpus, threads, spec.machine.smt_throughput_milli).map(Box::new);
        let mut core = SchedCore::new(policy, ctx, cfg.costs);
        core.tick_may_stop = cfg.kernel.tick_may_stop;
        Engine {
            core,
            instances: vec![Vec::new(); programs.len()],
            programs,
            rt: Vec::new(),
            mutexes: r.mutexes.iter().map(|n| Mutex::named(n)).collect(),
            conds: vec![Cond::default(); r.conds.len()],
            barriers: r
                .barriers
                .iter()
                .map(|(_, n)| Barrier {
                    needed: *n,
                    ..Barrier::default()
                })
                .collect(),
            channels: r
                .channels
                .iter()
                .map(|c| Channel {
                    capacity: c.capacity,
                    op_cost_ns: c.op_cost_ns,
                    op_spread: c.op_spread,
                    byte_cost_ps: c.byte_cost_ps,
                    ..Channel::default()
                })
                .collect(),
            blk,
            timer_unique,
            unique_timers,
            shared_timers: vec![u64::MAX; r.timers.len()],
            sample_mode: samples.name(),
            metrics: Metrics::new(r.marks.len(), samples),
            cfg,
            events: 0,
            burst_armed: vec![false; nr_cpus],
            policy_timer_draws: vec![0; nr_cpus],
            softirq: Softirqs::new(nr_cpus),
            deferred_count: 0,
            channel_span: r
                .channels
                .iter()
                .map(|c| match c.kind {
                    ChannelKind::Pipe => SpanKind::Pipe,
                    ChannelKind::Socket => SpanKind::Socket,
                })
                .collect(),
            costs_vary: cfg_costs_vary,
            scratch: Vec::with_capacity(64),
            process_tgid: Vec::new(),
            live_tasks: 0,
            last_exit: None,
            zero_steps: 0,
            error: None,
            budget: Budget::new(memory_budget),
            stopped: None,
            smt,
            cancelled: false,
        }
    }

    // ------------------------------------------------------------------ set-up

    /// Create the start-up instances of every template (at time 0 or after their delay).
    pub fn start(&mut self, spec: &Spec) {
        let n: usize = spec.tasks.iter().map(|t| t.instances as usize).sum();
        self.rt.reserve_exact(n);
        self.metrics.reserve_tasks(n);
        self.core.reserve_tasks(n);
        self.start_tasks(spec);
        if let Some(first) = self.blk.flusher_tmpl {
            self.create_flusher_threads(spec, first);
        }
        if self.cfg.kernel.softirqs && !self.halted() {
            self.create_softirq_threads(spec);
        }
    }

    /// Create the softirq threads, one per CPU, from the templates at the end of `spec`
    /// (`kernel::with_softirq_threads`): asleep until work is left for them, and not
    /// counted among the workload's live tasks.
    fn create_softirq_threads(&mut self, spec: &Spec) {
        let nr_cpus = self.core.ctx.nr_cpus();
        let first_tmpl = spec.tasks.len() - nr_cpus;
        for c in 0..nr_cpus {
            if !self.room_for_task() {
                return;
            }
            let tmpl = (first_tmpl + c) as u32;
            let attrs = attrs_of(&spec.tasks[tmpl as usize].attr);
            let mut cpu = CpuMask::empty();
            cpu.set(CpuId(c as u32));
            let id = self.create_task(tmpl, attrs, cpu, None);
            self.live_tasks -= 1;
            if c == 0 {
                self.softirq.first_thread = Some(id);
            }
        }
    }

    /// Create the flusher threads, one per device, from the templates from `first` on
    /// (`io::with_flusher_threads`): asleep until their device has writeback to do, and
    /// not counted among the workload's live tasks.
    fn create_flusher_threads(&mut self, spec: &Spec, first: u32) {
        for d in 0..self.blk.queues.len() as u32 {
            if !self.room_for_task() {
                return;
            }
            let tmpl = first + d;
            let attrs = attrs_of(&spec.tasks[tmpl as usize].attr);
            let aff = self.affinity_of(None);
            let id = self.create_task(tmpl, attrs, aff, None);
            self.live_tasks -= 1;
            self.blk.flushers.push(id);
        }
    }

    /// Create the start-up instances of the spec's tasks.
    fn start_tasks(&mut self, spec: &Spec) {
        for (ti, t) in spec.tasks.iter().enumerate() {
            for _ in 0..t.instances {
                if !self.room_for_task() {
                    return;
                }
                let attrs = attrs_of(&t.attr);
                let aff = self.affinity_of(t.cpus.as_deref());
                let id = self.create_task(ti as u32, attrs, aff, None);
                if t.delay_ns == 0 {
                    self.wake_new(id, None);
                } else {
                    self.core
                        .ctx
                        .push(t.delay_ns, EventKind::Start { task: id });
                }
            }
        }
    }

    fn affinity_of(&self, cpus: Option<&[u32]>) -> CpuMask {
        let all = CpuMask::first_n(self.core.ctx.nr_cpus());
        match cpus {
            Some(c) => mask_of(c).and(&all),
            None => all,
        }
    }

    fn instance_name(&self, tmpl: u32) -> String {
        let base = &self.programs.task(tmpl).name;
        let n = self.instances[tmpl as usize].len();
        if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        }
    }

    fn tgid_for(&mut self, tmpl: u32, pid: u32) -> u32 {
        match &self.programs.task(tmpl).process {
            None => pid,
            Some(p) => {
                if let Some((_, g)) = self.process_tgid.iter().find(|(n, _)| n == p) {
                    *g
                } else {
                    self.process_tgid.push((p.clone(), pid));
                    pid
                }
            }
        }
    }

    /// Create a task (not yet runnable); calls the policy's `task_new`.
    fn create_task(
        &mut self,
        tmpl: u32,
        attrs: SchedAttrs,
        affinity: CpuMask,
        parent: Option<TaskId>,
    ) -> TaskId {
        if self.rt.len() as u64 > crate::event::MAX_EVENT_ID {
            self.error = Some(RunError(format!(
                "more than {} tasks: the simulator's limit (a fork bomb?)",
                crate::event::MAX_EVENT_ID
            )));
        }
        let group = self.programs.task(tmpl).group;
        let id = self
            .core
            .create_task(attrs, self.effective_cpus(affinity, group), parent);
        self.core.ctx.tasks[id.idx()].group = group;
        let name = self.instance_name(tmpl);
        self.instances[tmpl as usize].push(id);
        let tgid = self.tgid_for(tmpl, id.pid());
        self.core.ctx.tracer.register_task(id, &name, tgid);
        let now = self.core.ctx.now;
        let machine = CpuMask::first_n(self.core.ctx.nr_cpus());
        let mut want_cpus = WantCpus::default();
        want_cpus.set(affinity, machine);
        self.rt.push(TaskRt {
            tmpl,
            name,
            walk: self.programs.start(tmpl),
            state: TState::Blocked(Block::NotStarted),
            stage: Stage::Fresh,
            burst_end: 0,
            burst_len: 0,
            draws: 0,
            timer_irq_ns: 0,
            xfer_left: 0,
            wake_gen: 0,
            timers: TaskTimers::new(&self.unique_timers[tmpl as usize]),
            started_at: now,
            since: now,
            expiry: now,
            phase_pending: false,
            want_cpus,
            cond_mutex: 0,
            reacquire: false,
            wait_ns: 0,
            sleep_ns: 0,
            sys_ns: 0,
            irq_ns: 0,
            voluntary: 0,
            involuntary: 0,
        });
        self.metrics.add_task();
        self.live_tasks += 1;
        self.apply_first_phase(id);
        self.core.task_new(id, parent);
        id
    }

    /// The attributes, CPUs and group of a task's first phase, set before it first runs
    /// (no protocol operation: it is not known to the policy yet).
    fn apply_first_phase(&mut self, t: TaskId) {
        let tmpl = self.rt[t.idx()].tmpl;
        let Some(first) = self.programs.phases(tmpl).first() else {
            return;
        };
        let cpus = first.cpus.as_deref().map(mask_of);
        let (attr, group) = (first.attr.as_ref().map(attrs_of), first.group);
        let machine = CpuMask::first_n(self.core.ctx.nr_cpus());
        if let Some(m) = cpus.map(|m| m.and(&machine)).filter(|m| !m.is_empty()) {
            self.rt[t.idx()].want_cpus.set(m, machine);
        }
        let v = &mut self.core.ctx.tasks[t.idx()];
        if let Some(a) = attr {
            v.attrs = a;
        }
        if let Some(g) = group {
            v.group = g;
        }
        let group = v.group;
        let aff = self.effective_cpus(self.rt[t.idx()].want_cpus.get(machine), group);
        let v = &mut self.core.ctx.tasks[t.idx()];
        v.affinity = aff;
        if !aff.contains(v.cpu) {
            v.cpu = aff.first().expect("a non-empty affinity");
        }
    }

    /// The affinity of a task that asks for `want` in cgroup `group`: `want` within the
    /// group's cpuset, or the whole cpuset when they do not meet
    /// (`cpuset_cpus_allowed` / the fallback of `cpuset_attach`).
    fn effective_cpus(&self, want: CpuMask, group: crate::types::GroupId) -> CpuMask {
        let allowed = self.core.ctx.group(group).cpus;
        let m = want.and(&allowed);
        if m.is_empty() {
            allowed
        } else {
            m
        }
    }

    // ------------------------------------------------------------------ the loop

    /// Run until the end time, or until no event is left.
    pub fn run(&mut self) {
        self.process_resched();
        let limit = self.cfg.end.unwrap_or(Time::MAX);
        while let Some(ev) = self.core.ctx.events.pop_due(limit) {
            if self.outlived(&ev.kind) {
                continue;
            }
            debug_assert!(ev.time >= self.core.ctx.now, "time went backwards");
            if ev.time != self.core.ctx.now {
                self.zero_steps = 0;
            }
            self.core.ctx.now = ev.time;
            self.events += 1;
            if self.rt.len() > PREFETCH_MIN_TASKS {
                self.prefetch_next();
            }
            self.handle(ev.kind);
            self.process_resched();
            if self.halted() {
                return;
            }
            if self.rt.len() > PREFETCH_MIN_TASKS {
                self.prefetch_next_buckets();
            }
            if self.budget.due(self.events) {
                self.check_budget();
                if self.halted() {
                    return;
                }
            }
            if self.cfg.check || (cfg!(debug_assertions) && self.cheap_to_check()) {
                if let Err(e) = crate::check::check(self) {
                    self.error = Some(RunError(format!(
                        "invariant violated at t={} ns after event {:?}: {e}",
                        self.core.ctx.now, ev.kind
                    )));
                    return;
                }
            }
        }
        if let Some(end) = self.cfg.end {
            if self.core.ctx.now < end {
                self.core.ctx.now = end;
            }
        }
    }

    /// A scheduler timer left pending when a run without a duration has no task left (a
    /// bandwidth period, the fair server's deadline): it could change nothing any task
    /// sees, so it neither runs nor stretches the run past its last task.
    #[inline]
    fn outlived(&self, kind: &EventKind) -> bool {
        self.cfg.end.is_none()
            && self.live_tasks == 0
            && !self.rt.is_empty()
            && (matches!(kind, EventKind::PolicyTimer { .. })
                || matches!(*kind, EventKind::Device { data, .. } if crate::io::is_flusher_timer(data)))
    }

    /// Ask the cache for the state the next event reads, while the current one runs: the
    /// task a wake-up wakes, or the task whose burst a completion ends. With thousands of
    /// tasks it is rarely cached, and the next event would otherwise wait for it several
    /// times over.
    #[inline]
    fn prefetch_next(&self) {
        let task = match self.core.ctx.events.peek_kind() {
            Some(EventKind::Wake { task, .. }) => task,
            Some(EventKind::Complete { cpu, .. }) => match self.core.ctx.cpus[cpu.idx()].curr {
                Some(t) => t,
                None => return,
            },
            _ => return,
        };
        self.prefetch_task(task);
    }

    /// The second step of [`Self::prefetch_next`], once the event is handled: the next
    /// event's task has its measurement state cached by now, and through it the histogram
    /// entries the activation will count in (a sample's bucket lives on the heap, where no
    /// look-ahead reaches without its histogram).
    #[inline]
    fn prefetch_next_buckets(&self) {
        let m = match self.core.ctx.events.peek_kind() {
            Some(EventKind::Wake { task, .. }) => self.metrics.tasks.get(task.idx()),
            Some(EventKind::Complete { cpu, .. }) => self.core.ctx.cpus[cpu.idx()]
                .curr
                .and_then(|t| self.metrics.tasks.get(t.idx())),
            _ => None,
        };
        if let Some(m) = m {
            prefetch_addr(m.latency.likely_entry() as usize);
            prefetch_addr(m.response.likely_entry() as usize);
        }
    }

    /// Prefetch every cache line of `t`'s engine, core and measurement state.
    #[inline]
    fn prefetch_task(&self, t: TaskId) {
        let i = t.idx();
        prefetch_lines(self.rt.get(i));
        prefetch_lines(self.metrics.tasks.get(i));
        prefetch_lines(self.core.ctx.tasks.get(i));
    }

    /// The run stopped early: an error, or its memory budget.
    #[inline]
    fn halted(&self) -> bool {
        self.error.is_some() || self.stopped.is_some() || self.cancelled
    }

    /// The periodic count of the memory the run holds.
    #[cold]
    fn check_budget(&mut self) {
        if self
            .cfg
            .cancel
            .as_ref()
            .is_some_and(budget::Cancel::requested)
        {
            self.cancelled = true;
            return;
        }
        let used = budget::used(self);
        if used > self.budget.limit() {
            self.stop_for_memory(used);
        }
    }

    /// Is there room in the budget for one more task? If not, the run stops.
    fn room_for_task(&mut self) -> bool {
        if self.stopped.is_none() && self.budget.tasks_exceed(self.rt.len() + 1) {
            let used = budget::used(self) + budget::TASK_BYTES;
            self.stop_for_memory(used);
        }
        self.stopped.is_none()
    }

    fn stop_for_memory(&mut self, used: u64) {
        let samples = if self.metrics.keeps_samples() {
            ", or stream the samples to a file with --samples FILE"
        } else {
            ""
        };
        self.stopped = Some(format!(
            "stopped at t={} ns with {} tasks: the run would need {} ({used} bytes), more than \
             its memory budget of {} ({} bytes; raise it with --memory-budget{samples})",
            self.core.ctx.now,
            self.rt.len(),
            budget::human_bytes(used, 2),
            budget::human_bytes(self.budget.limit(), 1),
            self.budget.limit(),
        ));
    }

    fn cheap_to_check(&self) -> bool {
        self.rt.len() <= 128 || self.events.is_multiple_of(1024)
    }

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::Complete { cpu, gen } => {
                if EventKind::wrap_gen(self.core.ctx.cpus[cpu.idx()].gen) == gen
                    && self.burst_armed[cpu.idx()]
                {
                    self.core.ctx.charge_cpu = cpu.idx();
                    self.burst_armed[cpu.idx()] = false;
                    self.account_cpu(cpu);
                    self.dispatch(cpu);
                }
            }
            EventKind::Wake { task, gen } => {
                if EventKind::wrap_gen(self.rt[task.idx()].wake_gen) == gen {
                    if let TState::Blocked(b @ (Block::Sleep | Block::Timer)) =
                        self.rt[task.idx()].state
                    {
                        let kind = if b == Block::Timer {
                            ActKind::Timer
                        } else {
                            ActKind::Sleep
                        };
                        self.metrics.release(task, self.rt[task.idx()].expiry, kind);
                        self.make_runnable(task, None, false);
                    }
                }
            }
            EventKind::TimerIrq { task, gen } => {
                let rt = &self.rt[task.idx()];
                if EventKind::wrap_gen(rt.wake_gen) == gen
                    && matches!(rt.state, TState::Blocked(Block::Sleep | Block::Timer))
                {
                    // The handler runs now, in the interrupted task's time (its work
                    // stops while it runs); the sleeper wakes at the handler's end.
                    let irq = rt.timer_irq_ns;
                    self.charge_interrupt(self.core.ctx.tasks[task.idx()].cpu, irq);
                    let now = self.core.ctx.now;
                    self.core.ctx.push(now + irq, EventKind::Wake { task, gen });
                }
            }
            EventKind::Start { task } => self.wake_new(task, None),
            EventKind::Tick { cpu } => {
                let tick = self.cfg.kernel.tick_cost(cpu, self.core.ctx.now);
                let softirq = match self.cfg.kernel.softirqs {
                    true => self.tick_softirq(cpu, tick),
                    false => 0,
                };
                self.charge_interrupt(cpu, tick + softirq);
                if softirq > 0 {
                    let until = self.core.ctx.now + tick + softirq;
                    let busy_until = &mut self.softirq.busy_until[cpu.idx()];
                    *busy_until = (*busy_until).max(until);
                }
                self.core.handle_event(kind);
            }
            EventKind::PolicyTimer { slot, gen } => self.policy_timer(slot, gen),
            EventKind::IrqExit { cpu } => {
                self.softirq.exit_armed[cpu.idx()] = false;
                self.core.ctx.resched(cpu);
            }
            EventKind::SoftirqWake { cpu } => self.wake_softirq_thread(cpu),
            EventKind::Device { dev, data } => {
                self.blk.event(&mut self.core.ctx, dev, data);
                self.charge_io_irqs();
                self.wake_io_waiters();
            }
        }
    }

    /// Run `schedule()` on every CPU that asked for it, until none does.
    #[inline(always)]
    fn process_resched(&mut self) {
        // Most events ask for no reschedule: test that before entering the loop.
        if !self.core.ctx.resched_mask.is_empty() {
            self.reschedule_cpus();
        }
    }

    fn reschedule_cpus(&mut self) {
        while let Some(cpu) = self.core.take_resched() {
            self.schedule(cpu);
            if self.halted() {
                return;
            }
        }
    }

    // ------------------------------------------------------------------ accounting

    /// Move a task's state, charging the time spent in the old one to wait or sleep.
    fn set_state(&mut self, t: TaskId, s: TState) {
        let now = self.core.ctx.now;
        let rt = &mut self.rt[t.idx()];
        let spent = now - rt.since;
        match rt.state {
            TState::Runnable => rt.wait_ns += spent,
            TState::Blocked(_) => rt.sleep_ns += spent,
            _ => {}
        }
        rt.since = now;
        rt.state = s;
    }

    // ------------------------------------------------------------------ schedule()

    /// `schedule()` on `cpu` through the core, with the program bookkeeping around it: a
    /// burst due now is finished first, the tasks' states follow the switch, and the
    /// next task's program is stepped.
    fn schedule(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        if self.cfg.kernel.softirqs && self.in_softirq(cpu) {
            return;
        }
        if let Some(p) = self.core.ctx.cpus[c].curr {
            self.account_cpu(cpu);
            self.finish_due_burst(cpu, p);
            if self.cfg.kernel.defers && self.defer_in_span(cpu) {
                return;
            }
        }
        if self.deferred_count > 0 {
            self.undefer(cpu);
        }
        let sw = self.core.schedule(cpu);
        if sw.switched() {
            self.burst_armed[c] = false;
            self.core.ctx.cpus[c].gen += 1;
            if sw.prev.is_none() && self.cfg.kernel.idle_ticks {
                let wait = self.cfg.kernel.idle_tick_left(cpu, self.core.ctx.now);
                self.core.ctx.cpus[c].overhead_left += wait;
            }
            if let Some(p) = sw.prev {
                if self.rt[p.idx()].state == TState::Running {
                    self.rt[p.idx()].involuntary += 1;
                    self.set_state(p, TState::Runnable);
                }
            }
            if let Some(n) = sw.next {
                self.set_state(n, TState::Running);
            }
        }
        if self.smt.is_some() {
            self.smt_switched(cpu);
        }
        if sw.next.is_some() && (sw.switched() || !self.burst_armed[c]) {
            self.dispatch(cpu);
        }
    }

    /// A burst that ends exactly now has done its work even if its completion event is
    /// still queued behind the event that asked for this reschedule: let the task carry on
    /// (it may block) before it is switched out, rather than preempt it with nothing left
    /// to run.
    fn finish_due_burst(&mut self, cpu: CpuId, t: TaskId) {
        let c = cpu.idx();
        if !self.burst_armed[c] || self.core.ctx.cpus[c].overhead_left > 0 {
            return;
        }
        let due = match self.rt[t.idx()].stage {
            Stage::Burst => self.burst_left(t) == 0,
            Stage::Until(until) => until <= self.core.ctx.now,
            _ => false,
        };
        if due {
            self.burst_armed[c] = false;
            self.core.ctx.cpus[c].gen += 1;
            self.dispatch(cpu);
            self.core.ctx.resched_mask.clear(cpu);
        }
    }

    // ------------------------------------------------------------------ wake-ups

    /// wake_up_new_task: first placement of a created task.
    fn wake_new(&mut self, t: TaskId, waker_cpu: Option<CpuId>) {
        let now = self.core.ctx.now;
        self.rt[t.idx()].started_at = now;
        let tmpl = self.rt[t.idx()].tmpl;
        if let Some(period) = first_timer_period(self.programs.phases(tmpl)) {
            let rel = relative_deadline(self.core.ctx.tasks[t.idx()].attrs.dl, period);
            self.core.ctx.set_job_deadline(t, now.saturating_add(rel));
        }
        match self.core.wake_up_new_task(t, waker_cpu) {
            Ok(_) => self.became_runnable(t),
            Err(e) => self.fail(e),
        }
    }

    /// try_to_wake_up: make a blocked task runnable (the activation was opened by the
    /// caller with `metrics.release`).
    /// `sync`: WF_SYNC (a pipe or socket wake-up, see [`crate::sched::WakeFlags::sync`]).
    fn make_runnable(&mut self, t: TaskId, waker_cpu: Option<CpuId>, sync: bool) {
        match self.core.try_to_wake_up(t, waker_cpu, sync) {
            Ok(_) => self.became_runnable(t),
            Err(e) => self.fail(e),
        }
    }

    /// A woken task is queued (or, woken while still on its CPU, runs on).
    fn became_runnable(&mut self, t: TaskId) {
        let s = if self.core.ctx.tasks[t.idx()].running {
            TState::Running
        } else {
            TState::Runnable
        };
        self.set_state(t, s);
        self.metrics.runnable(t, self.core.ctx.now);
    }

    fn fail(&mut self, message: String) {
        self.error.get_or_insert(RunError(message));
    }

    /// The running task of `cpu` blocks.
    fn block(&mut self, cpu: CpuId, t: TaskId, why: Block) {
        let state = match why {
            Block::Mutex | Block::Io => PrevState::Uninterruptible,
            _ => PrevState::Sleeping,
        };
        self.blk.task_blocks(&mut self.core.ctx, t);
        self.core.block(cpu, state);
        self.rt[t.idx()].voluntary += 1;
        self.set_state(t, TState::Blocked(why));
        self.metrics.end(t, self.core.ctx.now);
    }

    // ------------------------------------------------------------------ programs

    /// Step the program of `cpu`'s current task until it needs CPU time (a completion
    /// event is armed), blocks, exits, yields, or something asked for a reschedule.
    fn dispatch(&mut self, cpu: CpuId) {
        let Some(t) = self.core.ctx.cpus[cpu.idx()].curr else {
            return;
        };
        if self.core.ctx.cpus[cpu.idx()].overhead_left > 0 {
            // The context switch is still being paid: the program makes no progress (and
            // nothing it does is visible) until it is.
            return self.arm_burst(cpu, 0);
        }
        self.metrics.started(t, self.core.ctx.now);
        loop {
            if self.core.ctx.resched_mask.contains(cpu) || self.halted() {
                return;
            }
            match self.rt[t.idx()].stage {
                Stage::Burst => {
                    let left = self.burst_left(t);
                    if self.deferred_count > 0 && self.lift_deferred(cpu, t) {
                        // At a preemption point, or the span is over: reschedule first.
                        return;
                    }
                    if left > 0 {
                        let stop = self.next_stop(cpu, t, left);
                        return self.arm_burst(cpu, self.cpu_time_for(cpu, t, stop));
                    }
                    self.count_system_time(t);
                    self.effect(cpu, t);
                    if self.deferred_count > 0 {
                        // The span ended in its effect: back in user mode.
                        self.lift_deferred(cpu, t);
                    }
                }
                Stage::Until(until) => {
                    if until > self.core.ctx.now {
                        return self.arm_burst(cpu, until - self.core.ctx.now);
                    }
                    self.next_op(cpu, t);
                }
                Stage::Fresh | Stage::Transfer => self.begin_op(cpu, t),
            }
            if self.core.ctx.cpus[cpu.idx()].curr != Some(t)
                || self.rt[t.idx()].state != TState::Running
            {
                return;
            }
            self.zero_steps += 1;
            if self.zero_steps > MAX_ZERO_TIME_STEPS {
                if self.loops_without_time(t) {
                    self.error = Some(RunError(format!(
                        "task {} makes no progress: its program loops for ever without \
                         consuming time (add a run or sleep event)",
                        self.rt[t.idx()].name
                    )));
                    return;
                }
                self.zero_steps = 0;
            }
        }
    }

    /// Is `t` in a part of its program that repeats for ever without any event that makes
    /// time pass: a phase with loop -1 whose events take no time, or a task with loop -1
    /// none of whose phases does? A task anywhere else reaches the end of a finite loop.
    #[cold]
    fn loops_without_time(&self, t: TaskId) -> bool {
        let rt = &self.rt[t.idx()];
        let phases = self.programs.phases(rt.tmpl);
        let Some(p) = phases.get(rt.walk.cursor.phase as usize) else {
            return false;
        };
        if p.loop_count < 0 {
            return !p.events.iter().any(|e| self.takes_time(e));
        }
        self.programs.task(rt.tmpl).loop_count < 0
            && !phases
                .iter()
                .any(|p| p.events.iter().any(|e| self.takes_time(e)))
    }

    /// Does `op` by itself make simulated time pass (CPU time or a sleep)? Events that
    /// only block do not: tasks that wake each other at one instant can do so for ever.
    fn takes_time(&self, op: &Op) -> bool {
        match *op {
            Op::Runtime { ns } | Op::Sleep { ns } if ns > 0 => true,
            Op::Timer { .. } => true,
            _ => self.op_cost(op) > 0 || self.op_spread(op).is_some(),
        }
    }

    /// Arm the completion of a burst of `ns` of work (after any switch overhead).
    fn arm_burst(&mut self, cpu: CpuId, ns: u64) {
        let c = &self.core.ctx.cpus[cpu.idx()];
        // Saturating: a `run: -1` burst (RUN_FOREVER) never completes.
        let at = self
            .core
            .ctx
            .now
            .saturating_add(c.overhead_left)
            .saturating_add(ns);
        let gen = c.gen;
        self.burst_armed[cpu.idx()] = true;
        self.core.ctx.push(at, EventKind::Complete { cpu, gen });
    }

    /// CPU time the current burst of `t` still needs.
    #[inline]
    fn burst_left(&self, t: TaskId) -> u64 {
        self.rt[t.idx()]
            .burst_end
            .saturating_sub(self.core.ctx.tasks[t.idx()].sum_exec_ns)
    }

    /// The op under `t`'s cursor (`None` once its program is over).
    #[inline]
    fn current_op(&self, t: TaskId) -> Option<&'a Op> {
        self.rt[t.idx()].walk.op()
    }

    /// Start the op under the cursor: ops that cost CPU time enter `Stage::Burst` first.
    fn begin_op(&mut self, cpu: CpuId, t: TaskId) {
        if self.rt[t.idx()].reacquire {
            let m = self.rt[t.idx()].cond_mutex as usize;
            if !self.try_lock(cpu, t, m) {
                return;
            }
            self.rt[t.idx()].reacquire = false;
        }
        let Some(op) = self.current_op(t) else {
            return self.begin_exit(cpu, t);
        };
        if std::mem::replace(&mut self.rt[t.idx()].phase_pending, false) {
            let rt = &self.rt[t.idx()];
            let p = self.programs.phases(rt.tmpl)[rt.walk.cursor.phase as usize];
            let cpus = p.cpus.as_deref().map(mask_of);
            let (attr, group) = (p.attr.as_ref().map(attrs_of), p.group);
            self.change_attrs(cpu, t, attr, cpus, group);
            return;
        }
        // The ops of periodic work (`run`, `timer`, `sleep`) have their cost read here
        // when no cost varies, without a second dispatch on the op in `op_cost`.
        let cost = match *op {
            Op::Runtime { ns } => {
                self.rt[t.idx()].stage = Stage::Until(self.core.ctx.now + ns);
                return;
            }
            Op::Read { .. } | Op::Write { .. } if self.rt[t.idx()].stage == Stage::Transfer => {
                return self.effect(cpu, t);
            }
            Op::Run { .. } if self.cfg.kernel.softirqs => match self.softirq_cpu(t) {
                Some(home) => self.take_softirq_work(home),
                None => self.draw_op_cost(t, op),
            },
            Op::Run { ns } if !self.costs_vary => ns,
            Op::Timer { .. } | Op::Sleep { .. } if !self.costs_vary => self.cfg.sleep_ns,
            _ => self.draw_op_cost(t, op),
        };
        self.begin_burst(cpu, t, cost);
    }

    /// The op under the cursor costs `cost` of CPU time before its effect.
    fn begin_burst(&mut self, cpu: CpuId, t: TaskId, cost: u64) {
        let done_at = self.core.ctx.tasks[t.idx()]
            .sum_exec_ns
            .saturating_add(cost);
        let rt = &mut self.rt[t.idx()];
        rt.stage = Stage::Burst;
        rt.burst_end = done_at;
        rt.burst_len = cost;
        if cost == 0 {
            self.effect(cpu, t);
        }
    }

    /// The program is over: `exit`, after its kernel span.
    fn begin_exit(&mut self, cpu: CpuId, t: TaskId) {
        let cost = self.draw_cost(t, self.cfg.exit_ns, CostKey::Exit);
        if cost == 0 {
            return self.exit(cpu, t);
        }
        self.begin_burst(cpu, t, cost);
    }

    /// The CPU time `op` costs its task before its effect: the length of its burst, or
    /// of its kernel span.
    #[inline]
    fn op_cost(&self, op: &Op) -> u64 {
        match *op {
            Op::Run { ns } => ns,
            Op::Read { chan, bytes } | Op::Write { chan, bytes } => {
                self.channels[chan as usize].call_cost(bytes)
            }
            Op::Fork { .. } => self.cfg.fork_ns,
            Op::Signal { .. } | Op::Broad { .. } | Op::Resume { .. } => self.cfg.wakeup_ns,
            Op::Sleep { .. } | Op::Timer { .. } => self.cfg.sleep_ns,
            Op::Exit => self.cfg.exit_ns,
            Op::IoBatch(ref s) if !s.direct => self.blk.copy_ns(s),
            _ => 0,
        }
    }

    /// How `op`'s cost spreads above [`Self::op_cost`] (`None`: it does not vary).
    fn op_spread(&self, op: &Op) -> Option<Spread> {
        match *op {
            Op::Read { chan, .. } | Op::Write { chan, .. } => {
                self.channels[chan as usize].op_spread
            }
            _ => self.cfg.spreads.get(op_cost_key(op)?),
        }
    }

    /// The CPU time this occurrence of `op` costs `t`: [`Self::op_cost`], plus its draw
    /// when the cost varies. Inlined with a test of `costs_vary` first: most machines give
    /// no cost a spread, and every op of every task asks.
    #[inline(always)]
    fn draw_op_cost(&mut self, t: TaskId, op: &Op) -> u64 {
        let min = self.op_cost(op);
        if !self.costs_vary {
            return min;
        }
        self.draw_op_spread(t, op, min)
    }

    /// [`Self::draw_op_cost`] on a machine where some cost varies.
    #[inline(never)]
    fn draw_op_spread(&mut self, t: TaskId, op: &Op, min: u64) -> u64 {
        match (self.op_spread(op), op_cost_key(op)) {
            (Some(s), Some(key)) => self.draw_spread(t, min, s, key),
            _ => min,
        }
    }

    /// The CPU time this occurrence of cost `key` (minimum `min`) costs `t`.
    fn draw_cost(&mut self, t: TaskId, min: u64, key: CostKey) -> u64 {
        match self.cfg.spreads.get(key) {
            None => min,
            Some(s) => self.draw_spread(t, min, s, key),
        }
    }

    /// `t`'s next draw of a varying cost: occurrence `draws` of stream `t`, so a task's
    /// n-th varying cost is the same draw whatever the policy did around it.
    fn draw_spread(&mut self, t: TaskId, min: u64, s: Spread, key: CostKey) -> u64 {
        let index = self.next_draw(t);
        draw(min, Some(s), self.cfg.seed, key, t.idx() as u64, index)
    }

    /// The index of `t`'s next draw of a varying cost (its spans' and its timers' alike).
    fn next_draw(&mut self, t: TaskId) -> u64 {
        let rt = &mut self.rt[t.idx()];
        rt.draws += 1;
        rt.draws - 1
    }

    /// The kind of kernel span `op` runs as (`None`: user time, or no CPU cost).
    fn span_kind(&self, op: Option<&Op>) -> Option<SpanKind> {
        Some(match op {
            Some(Op::Read { chan, .. } | Op::Write { chan, .. }) => {
                self.channel_span[*chan as usize]
            }
            Some(Op::Fork { .. }) => SpanKind::Fork,
            Some(Op::Signal { .. } | Op::Broad { .. } | Op::Resume { .. }) => SpanKind::Wake,
            Some(Op::Sleep { .. } | Op::Timer { .. }) => SpanKind::Sleep,
            Some(Op::Exit) | None => SpanKind::Exit,
            // A page-cache copy is the copy loop of a pipe's read or write.
            Some(Op::IoBatch(s)) if !s.direct => SpanKind::Pipe,
            Some(_) => return None,
        })
    }

    // ------------------------------------------------------------------ kernel spans

    /// `t`'s burst has ended: when it was a kernel span, its length is system time.
    #[inline]
    fn count_system_time(&mut self, t: TaskId) {
        let op = self.current_op(t);
        if matches!(op, Some(Op::Run { .. })) || self.span_kind(op).is_none() {
            return;
        }
        let rt = &mut self.rt[t.idx()];
        rt.sys_ns += rt.burst_len;
    }

    /// The kernel span `t` runs, if any: its kind, its length and the work done in it
    /// (an interrupt charged inside it moves its later points with it).
    fn current_span(&self, t: TaskId) -> Option<(SpanKind, u64, u64)> {
        let rt = &self.rt[t.idx()];
        if rt.state != TState::Running || rt.stage != Stage::Burst {
            return None;
        }
        let kind = self.span_kind(self.current_op(t))?;
        let len = rt.burst_len;
        Some((kind, len, len.saturating_sub(self.burst_left(t))))
    }

    /// `t` runs the kernel span of its current op (for the invariant checks).
    pub(crate) fn in_kernel_span(&self, t: TaskId) -> bool {
        self.current_span(t).is_some()
    }

    /// Where a reschedule asked of `t`'s CPU now takes effect: at once in user mode or
    /// between ops; in a kernel span, where the preemption model allows (`kernel.rs`).
    fn resched_point(&self, t: TaskId) -> Resched {
        match self.current_span(t) {
            // At the system call's entry the task is still taken from user mode.
            None | Some((_, _, 0)) => Resched::Now,
            Some((kind, len, done)) => {
                let model = &self.cfg.kernel;
                model.resched_in_span(model.k.span(kind), len, done)
            }
        }
    }

    /// `schedule()` asked of `cpu` while its task runs a kernel span that may not be left
    /// now: keep need_resched set (`Ctx::deferred_resched`), and, if the span has a
    /// preemption point ahead, stop there. True if deferred.
    fn defer_in_span(&mut self, cpu: CpuId) -> bool {
        let c = cpu.idx();
        let Some(t) = self.core.ctx.cpus[c].curr else {
            return false;
        };
        let point = self.resched_point(t);
        if point == Resched::Now {
            return false;
        }
        if !self.core.ctx.deferred_resched.contains(cpu) {
            self.core.ctx.deferred_resched.set(cpu);
            self.deferred_count += 1;
        }
        if matches!(point, Resched::After(_)) && self.burst_armed[c] {
            self.rearm(cpu, t);
        }
        true
    }

    /// If the reschedule deferred on `cpu` may now happen (`t` left its span, or reached
    /// a preemption point), ask for it; true if it did.
    fn lift_deferred(&mut self, cpu: CpuId, t: TaskId) -> bool {
        let lift = self.core.ctx.deferred_resched.contains(cpu)
            && (self.core.ctx.cpus[cpu.idx()].curr != Some(t)
                || self.resched_point(t) == Resched::Now);
        if lift {
            self.undefer(cpu);
            self.core.ctx.resched(cpu);
        }
        lift
    }

    fn undefer(&mut self, cpu: CpuId) {
        if self.core.ctx.deferred_resched.contains(cpu) {
            self.core.ctx.deferred_resched.clear(cpu);
            self.deferred_count -= 1;
        }
    }

    /// How much of its burst `t` runs before the engine looks again: all of it, or up to
    /// the span's next preemption point while a reschedule waits for one.
    #[inline(always)]
    fn next_stop(&self, cpu: CpuId, t: TaskId, left: u64) -> u64 {
        if self.deferred_count == 0 {
            return left;
        }
        self.next_stop_deferred(cpu, t, left)
    }

    #[inline(never)]
    fn next_stop_deferred(&self, cpu: CpuId, t: TaskId, left: u64) -> u64 {
        if !self.core.ctx.deferred_resched.contains(cpu) {
            return left;
        }
        match self.resched_point(t) {
            Resched::After(ns) => ns.min(left),
            _ => left,
        }
    }

    /// Replace the pending completion of `cpu`'s burst (its end moved, or it must stop
    /// at a preemption point).
    pub(crate) fn rearm(&mut self, cpu: CpuId, t: TaskId) {
        self.core.ctx.cpus[cpu.idx()].gen += 1;
        let left = match self.rt[t.idx()].stage {
            Stage::Burst => {
                let stop = self.next_stop(cpu, t, self.burst_left(t));
                self.cpu_time_for(cpu, t, stop)
            }
            Stage::Until(until) => until.saturating_sub(self.core.ctx.now),
            _ => 0,
        };
        self.arm_burst(cpu, left);
    }

    // ------------------------------------------------------------------ SMT sharing

    /// Bring `cpu`'s CPU time up to date, and on a machine whose SMT siblings share their
    /// core, its task's progress (`smt.rs`).
    #[inline(always)]
    fn account_cpu(&mut self, cpu: CpuId) {
        self.core.account_time(cpu);
        if self.smt.is_some() {
            self.smt_settle(cpu);
        }
    }

    /// The CPU time `cpu`'s task `t` needs for `work` ns of its burst: `work` itself,
    /// unless a busy sibling slows the CPU (`smt.rs`).
    #[inline(always)]
    fn cpu_time_for(&self, cpu: CpuId, t: TaskId, work: u64) -> u64 {
        match self.smt.as_deref() {
            None => work,
            Some(smt) => smt.wall_for(cpu.idx(), t, work),
        }
    }

    /// An interrupt handler ran on `cpu` for `ns` (the tick with the softirq work its exit
    /// runs; a sleep or policy timer's expiry): Linux charges its time to the task it
    /// interrupted (without `IRQ_TIME_ACCOUNTING`), whose work is that much later, and so
    /// is the end of softirq work it interrupts. On an idle CPU it delays nothing the model
    /// sees: the expiry's wake-up, or the reschedule, already comes after it.
    fn charge_interrupt(&mut self, cpu: CpuId, ns: u64) {
        if ns == 0 {
            return;
        }
        let c = cpu.idx();
        let Some(t) = self.core.ctx.cpus[c].curr else {
            return;
        };
        self.rt[t.idx()].irq_ns += ns;
        self.account_cpu(cpu);
        let busy_until = &mut self.softirq.busy_until[c];
        if *busy_until > self.core.ctx.now {
            // An interrupt inside softirq work: that work ends later.
            *busy_until = busy_until.saturating_add(ns);
        }
        if self.core.ctx.cpus[c].overhead_left > 0 {
            // Interrupting the context switch: the switch ends later.
            self.core.ctx.cpus[c].overhead_left += ns;
        } else if self.rt[t.idx()].stage == Stage::Burst {
            // A never-ending burst (`run: -1`) ends at u64::MAX and stays there.
            let end = &mut self.rt[t.idx()].burst_end;
            *end = end.saturating_add(ns);
            if let Some(smt) = self.smt.as_deref_mut() {
                smt.interrupt(t, ns);
            }
        } else {
            // `runtime` (wall-clock) work, or between ops: nothing ends later.
            return;
        }
        if self.burst_armed[c] {
            self.rearm(cpu, t);
        }
    }

    /// A policy timer (a scheduler hrtimer: a bandwidth period, a deadline
    /// replenishment, a slice expiry) expires on the CPU that armed it. Every hrtimer
    /// expiry is an interrupt (Linux `hrtimer_interrupt` → `__run_hrtimer` → the
    /// callback, kernel/time/hrtimer.c): it costs `kernel.timer_irq_ns`, as a sleep
    /// timer's expiry does, plus the scheduler work the callback counts, paid in the
    /// interrupt on that CPU — not at its next switch, which a CPU running one task may
    /// never reach. The callback's changes are made at once; the reschedule it asks of its
    /// own CPU waits for the interrupt's end (`irq_exit`), as a sleeper's wake-up does.
    fn policy_timer(&mut self, slot: u32, gen: u64) {
        let Some((cpu, work_ns)) = self.core.fire_timer(slot, gen) else {
            return;
        };
        let irq = self.policy_timer_irq(cpu).saturating_add(work_ns);
        if irq == 0 {
            return;
        }
        self.charge_interrupt(cpu, irq);
        if self.core.ctx.resched_mask.contains(cpu) {
            self.core.ctx.resched_mask.clear(cpu);
            let at = self.core.ctx.now.saturating_add(irq);
            self.core.ctx.push(at, EventKind::IrqExit { cpu });
        }
    }

    /// The expiry cost of the next policy timer to fire on `cpu`.
    fn policy_timer_irq(&mut self, cpu: CpuId) -> u64 {
        let model = &self.cfg.kernel;
        if !model.irq_varies() {
            return model.k.timer_irq_ns;
        }
        let index = &mut self.policy_timer_draws[cpu.idx()];
        *index += 1;
        model.policy_timer_irq_cost(cpu, *index - 1)
    }

    // ------------------------------------------------------------------ softirqs

    /// The tick on busy `cpu`, whose handler costs `tick`, raises its softirq work
    /// (`kernel.softirq_ns`); returns the part its interrupt exit runs in the interrupted
    /// context, with preemption off (the caller charges it and keeps the CPU from
    /// rescheduling until it is done). Linux (kernel/softirq.c): `__irq_exit_rcu` →
    /// `invoke_softirq` → `__do_softirq` runs the pending softirqs with preemption off,
    /// restarting while more are raised, for at most `MAX_SOFTIRQ_TIME` (2 ms, since 3.8)
    /// and `MAX_SOFTIRQ_RESTART` (10) rounds, then `wakeup_softirqd` leaves the rest to
    /// ksoftirqd; 2.6.17 has only the restart limit. Under PREEMPT_RT `invoke_softirq`
    /// only wakes the CPU's softirq thread. The thread wakes when the interrupt is over.
    fn tick_softirq(&mut self, cpu: CpuId, tick: u64) -> u64 {
        let c = cpu.idx();
        let now = self.core.ctx.now;
        if self.core.ctx.cpus[c].curr.is_none() {
            return 0;
        }
        let raised = self.cfg.kernel.softirq_cost(cpu, now);
        self.softirq.pending[c] += raised;
        let run = self.cfg.kernel.softirq_on_exit(self.softirq.pending[c]);
        self.softirq.pending[c] -= run;
        if self.softirq.pending[c] > 0 {
            match tick + run {
                0 => self.wake_softirq_thread(cpu),
                end => self
                    .core
                    .ctx
                    .push(now + end, EventKind::SoftirqWake { cpu }),
            }
        }
        run
    }

    /// A reschedule of `cpu` asked for while it runs softirq work with preemption off
    /// waits for that work's end (an `IrqExit` then); true if it waits. A task that
    /// blocked or exited meanwhile is switched out at once.
    fn in_softirq(&mut self, cpu: CpuId) -> bool {
        let c = cpu.idx();
        let now = self.core.ctx.now;
        let until = self.softirq.busy_until[c];
        let Some(t) = self.core.ctx.cpus[c].curr else {
            return false;
        };
        if now >= until || self.rt[t.idx()].state != TState::Running {
            return false;
        }
        if !self.softirq.exit_armed[c] {
            self.softirq.exit_armed[c] = true;
            self.core.ctx.push(until, EventKind::IrqExit { cpu });
        }
        true
    }

    /// Wake `cpu`'s softirq thread if work is left for it and it sleeps (its first wake-up
    /// is its `wake_up_new_task`: it was created asleep). From interrupt context: no
    /// waker CPU, and no activation of the workload's is opened.
    fn wake_softirq_thread(&mut self, cpu: CpuId) {
        let Some(t) = self.softirq.thread_of(cpu) else {
            return;
        };
        if self.softirq.pending[cpu.idx()] == 0 {
            return;
        }
        match self.rt[t.idx()].state {
            TState::Blocked(Block::NotStarted) => self.wake_new(t, None),
            TState::Blocked(Block::Suspend) => self.make_runnable(t, None, false),
            _ => {}
        }
    }

    /// The softirq work `cpu`'s thread takes now: all that is pending (`handle_softirqs`
    /// run by `run_ksoftirqd`). Without `rt` it runs with bottom halves, and so preemption,
    /// off until done.
    fn take_softirq_work(&mut self, cpu: CpuId) -> u64 {
        let c = cpu.idx();
        let work = std::mem::take(&mut self.softirq.pending[c]);
        if work > 0 && !self.cfg.kernel.threaded_softirqs() {
            // The thread is pinned: it runs on `cpu`.
            let until = self.core.ctx.now + work;
            self.softirq.busy_until[c] = self.softirq.busy_until[c].max(until);
        }
        work
    }

    /// Move to the next op (or exit / change phase).
    fn next_op(&mut self, cpu: CpuId, t: TaskId) {
        let rt = &mut self.rt[t.idx()];
        rt.stage = Stage::Fresh;
        if self.programs.advance(rt.tmpl, &mut rt.walk) == Advance::NewPhase {
            rt.phase_pending = rt.walk.phase_changes;
        }
        let _ = cpu;
    }

    /// The effect of the op under the cursor, once its CPU cost is paid.
    fn effect(&mut self, cpu: CpuId, t: TaskId) {
        let Some(op) = self.current_op(t) else {
            return self.exit(cpu, t);
        };
        let now = self.core.ctx.now;
        match *op {
            Op::Run { .. } | Op::Runtime { .. } => self.next_op(cpu, t),
            Op::Sleep { ns } => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running {
                    self.sleep_until(cpu, t, now + ns, Block::Sleep);
                }
            }
            Op::Timer {
                timer,
                period_ns,
                mode,
            } => self.timer(cpu, t, timer as usize, period_ns, mode),
            Op::Lock { mutex } => {
                if self.try_lock(cpu, t, mutex as usize) {
                    self.next_op(cpu, t);
                }
            }
            Op::Unlock { mutex } => {
                let m = &self.mutexes[mutex as usize];
                if let Err(e) = m.check_unlock(t) {
                    return self.misuse(t, mutex as usize, e);
                }
                self.next_op(cpu, t);
                self.unlock(cpu, mutex as usize);
            }
            Op::Wait { cond, mutex } => {
                self.next_op(cpu, t);
                self.cond_wait(cpu, t, cond as usize, mutex as usize);
            }
            Op::Sync { cond, mutex } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, false);
                self.cond_wait(cpu, t, cond as usize, mutex as usize);
            }
            Op::Signal { cond } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, false);
            }
            Op::Broad { cond } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, true);
            }
            Op::Barrier { barrier } => {
                self.next_op(cpu, t);
                self.barrier(cpu, t, barrier as usize);
            }
            Op::Yield => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running {
                    self.core.yield_current(cpu);
                }
            }
            Op::Fork { task } => {
                self.next_op(cpu, t);
                self.fork(cpu, t, task);
            }
            Op::Suspend => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running && !self.softirq_work_left(t) {
                    self.block(cpu, t, Block::Suspend);
                }
            }
            Op::Resume { task } => {
                self.next_op(cpu, t);
                self.resume(cpu, task);
            }
            Op::Write { chan, bytes } => self.write(cpu, t, chan as usize, bytes),
            Op::Read { chan, bytes } => self.read(cpu, t, chan as usize, bytes),
            Op::Mark { label } => {
                self.metrics.mark(label as usize, t, now);
                self.next_op(cpu, t);
            }
            Op::Exit => self.exit(cpu, t),
            Op::Io {
                dev,
                op,
                bytes,
                offset,
            } => self.io(cpu, t, &IoSpec::single(dev, op, bytes, offset)),
            Op::IoBatch(ref spec) => {
                let spec = **spec;
                self.io(cpu, t, &spec)
            }
            Op::Fsync { file } => {
                let ioprio = self.ioprio_of(t);
                let step = self.blk.fsync(&mut self.core.ctx, t, ioprio, file);
                self.after_io(cpu, t, step);
            }
            Op::Unlink { file } => {
                let ioprio = self.ioprio_of(t);
                let step = self.blk.unlink(&mut self.core.ctx, t, ioprio, file);
                self.after_io(cpu, t, step);
            }
            Op::Writeback { dev } => {
                let ioprio = self.ioprio_of(t);
                self.blk.writeback(&mut self.core.ctx, t, dev, ioprio);
                self.next_op(cpu, t);
                self.block(cpu, t, Block::Suspend);
                self.wake_io_waiters();
            }
        }
    }

    /// `t` runs a `schedlab:io` op: it submits what its depth allows and sleeps until a
    /// completion lets it go on; the op is over once every request is submitted.
    fn io(&mut self, cpu: CpuId, t: TaskId, spec: &IoSpec) {
        let ioprio = self.ioprio_of(t);
        let step = self.blk.io(&mut self.core.ctx, t, ioprio, spec);
        self.after_io(cpu, t, step);
    }

    /// Go on after an I/O op as the block layer says, then wake whoever it let go on
    /// (flushers it kicked, tasks whose pages are in).
    fn after_io(&mut self, cpu: CpuId, t: TaskId, step: IoStep) {
        match step {
            IoStep::Next => self.next_op(cpu, t),
            IoStep::Sleep => {
                self.next_op(cpu, t);
                self.block(cpu, t, Block::Io);
            }
            IoStep::Retry => self.block(cpu, t, Block::Io),
        }
        self.wake_io_waiters();
    }

    /// Wake the tasks whose bios a device event completed (`bio_endio` → the waiter's
    /// wake-up), in bio order.
    /// Charge each completion interrupt the last device event raised to the task running
    /// on its CPU, the one that submitted the request: blk-mq runs a completion on the
    /// submitting CPU (`rq->mq_ctx->cpu`) when `QUEUE_FLAG_SAME_COMP` is set, as it is by
    /// default (`QUEUE_FLAG_MQ_DEFAULT`), by an IPI from the interrupted CPU
    /// (`blk_mq_complete_need_ipi`, `blk_mq_complete_send_ipi`, block/blk-mq.c, Linux
    /// 6.1); the model takes the whole interrupt there (with `rq_affinity` 1 a CPU
    /// sharing the submitter's cache completes the request itself, and where the device's
    /// interrupt lands is not modelled).
    fn charge_io_irqs(&mut self) {
        if self.blk.irqs.is_empty() {
            return;
        }
        let mut irqs = std::mem::take(&mut self.blk.irqs);
        for &(cpu, ns) in &irqs {
            self.charge_interrupt(cpu, ns);
        }
        irqs.clear();
        self.blk.irqs = irqs;
    }

    fn wake_io_waiters(&mut self) {
        let mut woken = std::mem::take(&mut self.blk.woken);
        for &t in &woken {
            if self.rt[t.idx()].state == TState::Blocked(Block::Io) {
                self.metrics.release(t, self.core.ctx.now, ActKind::Wakeup);
                self.make_runnable(t, None, false);
            }
        }
        woken.clear();
        self.blk.woken = woken;
        while let Some(dev) = self.blk.kicks.pop() {
            self.wake_flusher(dev);
        }
    }

    /// Wake `dev`'s flusher thread if it sleeps (its first wake-up is its
    /// `wake_up_new_task`). No activation of the workload's is opened.
    fn wake_flusher(&mut self, dev: u32) {
        let Some(&t) = self.blk.flushers.get(dev as usize) else {
            return;
        };
        match self.rt[t.idx()].state {
            TState::Blocked(Block::NotStarted) => self.wake_new(t, None),
            TState::Blocked(Block::Suspend) => self.make_runnable(t, None, false),
            _ => {}
        }
    }

    /// `t`'s I/O priority: what its spec sets (`ioprio_set`), else what the kernel derives
    /// from its current policy and nice.
    fn ioprio_of(&self, t: TaskId) -> IoPrio {
        let tmpl = self.rt[t.idx()].tmpl;
        self.programs.task(tmpl).ioprio.unwrap_or_else(|| {
            let a = &self.core.ctx.task(t).attrs;
            IoPrio::derived(a.policy, a.nice)
        })
    }

    /// `t` is a kernel thread the engine added (a CPU's softirq thread), not a spec task.
    pub(crate) fn is_kernel_thread(&self, t: TaskId) -> bool {
        self.softirq_cpu(t).is_some() || self.blk.is_flusher(t)
    }

    /// The CPU whose softirq thread `t` is (`None`: `t` is none).
    #[inline]
    fn softirq_cpu(&self, t: TaskId) -> Option<CpuId> {
        self.softirq.cpu_of(t, self.core.ctx.nr_cpus())
    }

    /// `t` is a softirq thread with work pending (it loops instead of sleeping).
    fn softirq_work_left(&self, t: TaskId) -> bool {
        self.cfg.kernel.softirqs
            && self
                .softirq_cpu(t)
                .is_some_and(|c| self.softirq.pending[c.idx()] > 0)
    }

    /// Sleep until `at`: the task wakes when the kernel's timer fires and its handler
    /// is done (`kernel.rs`), which is `at` itself on a machine with exact timers. A
    /// handler that costs CPU time starts at the firing (`EventKind::TimerIrq`), so the
    /// task it interrupts stops there, mid-span if it is in one.
    fn sleep_until(&mut self, cpu: CpuId, t: TaskId, at: Time, why: Block) {
        self.block(cpu, t, why);
        let (fires, irq) = if self.cfg.kernel.exact_timers {
            (at, 0)
        } else {
            let rt_task = !self.core.ctx.tasks[t.idx()].attrs.policy.is_fair();
            let fires = self.cfg.kernel.timer_fires(at, rt_task);
            let irq = match self.cfg.kernel.irq_varies() {
                false => self.cfg.kernel.k.timer_irq_ns,
                true => {
                    let index = self.next_draw(t);
                    self.cfg.kernel.timer_irq_cost(t, index)
                }
            };
            (fires, irq)
        };
        let rt = &mut self.rt[t.idx()];
        rt.wake_gen += 1;
        rt.expiry = at;
        rt.timer_irq_ns = irq;
        let gen = rt.wake_gen;
        // A kernel timer wakes its task from an interrupt: a tick due at the same instant
        // (queued before this sleep's wake-up can be) runs its scheduler hook on the task it
        // interrupts before that wake-up can switch CPUs, so the wake-up follows the
        // handler's event even when the handler costs nothing.
        let kind = match irq == 0 && self.cfg.kernel.exact_timers {
            true => EventKind::Wake { task: t, gen },
            false => EventKind::TimerIrq { task: t, gen },
        };
        self.core.ctx.push(fires, kind);
    }

    /// rt-app's timer (`run_event`, src/rt-app.c): anchored at the task's start (for a
    /// shared timer, the start of its first user); every use waits for the previous expiry
    /// + period (absolute), or, when that is already past, restarts from now (relative).
    fn timer(&mut self, cpu: CpuId, t: TaskId, slot: usize, period: u64, mode: TimerMode) {
        let now = self.core.ctx.now;
        let unique = self.timer_unique[slot];
        let prev = if unique {
            *self.unique_expiry(t, slot)
        } else {
            self.shared_timers[slot]
        };
        let base = if prev == u64::MAX {
            self.rt[t.idx()].started_at
        } else {
            prev
        };
        let mut next = base + period;
        if next <= now && mode == TimerMode::Relative {
            next = now;
        }
        if unique {
            *self.unique_expiry(t, slot) = next;
        } else {
            self.shared_timers[slot] = next;
        }
        let rel = relative_deadline(self.core.ctx.tasks[t.idx()].attrs.dl, period);
        self.metrics.set_deadline(t, rel);
        self.core.ctx.set_job_deadline(t, next.saturating_add(rel));
        self.next_op(cpu, t);
        if self.rt[t.idx()].state != TState::Running {
            return;
        }
        if next > now {
            self.sleep_until(cpu, t, next, Block::Timer);
        } else {
            // Late: rt-app does not sleep; the activation is released in the past and
            // runs at once (the lateness is its wake-up latency).
            self.metrics.end(t, now);
            self.metrics.release(t, next, ActKind::Timer);
            self.metrics.runnable(t, now);
            self.metrics.started(t, now);
        }
    }

    /// Task `t`'s next expiry of unique timer `slot` (one its program uses).
    #[inline(always)]
    fn unique_expiry(&mut self, t: TaskId, slot: usize) -> &mut Time {
        if self.rt[t.idx()].timers.first_slot == slot as u32 {
            return &mut self.rt[t.idx()].timers.first;
        }
        self.other_unique_expiry(t, slot as u32)
    }

    /// `unique_expiry` of a task's second or later unique timer.
    #[cold]
    fn other_unique_expiry(&mut self, t: TaskId, slot: u32) -> &mut Time {
        let rt = &mut self.rt[t.idx()];
        let used = &self.unique_timers[rt.tmpl as usize];
        // A program uses one timer or a few: scan them, search a long list.
        let found = if used.len() <= 8 {
            used.iter().position(|&s| s == slot)
        } else {
            used.binary_search(&slot).ok()
        };
        let i = found.expect("a template's timer ops are among its unique timers");
        &mut rt.timers.rest[i - 1]
    }

    /// Take `mutex` if it is free; else queue on it and block (the op is retried when
    /// the task is woken, as a futex-based lock retries after FUTEX_WAIT returns).
    fn try_lock(&mut self, cpu: CpuId, t: TaskId, mutex: usize) -> bool {
        let m = &mut self.mutexes[mutex];
        if let Err(e) = m.check_lock(t) {
            self.misuse(t, mutex, e);
            return false;
        }
        if m.owner.is_none() {
            m.owner = Some(t);
            return true;
        }
        let prio = self.core.ctx.tasks[t.idx()].attrs.prio();
        m.waiters.push(prio, t);
        self.block(cpu, t, Block::Mutex);
        false
    }

    /// pthread_mutex_unlock of a default (non-PI) mutex: release it and wake the first
    /// waiter, which competes for it when it runs (no hand-off: the unlocker, or anyone
    /// else, may take it again first).
    fn unlock(&mut self, cpu: CpuId, mutex: usize) {
        let m = &mut self.mutexes[mutex];
        m.owner = None;
        if let Some(w) = m.waiters.pop() {
            self.metrics.release(w, self.core.ctx.now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), false);
        }
    }

    /// Stop the run at a misuse of an error-checking mutex, naming the task and mutex.
    #[cold]
    fn misuse(&mut self, t: TaskId, mutex: usize, e: Misuse) {
        let name_of = |o: TaskId| self.rt[o.idx()].name.to_string();
        let message = e.message(&name_of(t), &self.mutexes[mutex].name, name_of);
        self.fail(message);
    }

    fn cond_wait(&mut self, cpu: CpuId, t: TaskId, cond: usize, mutex: usize) {
        if let Err(e) = self.mutexes[mutex].check_wait(t) {
            return self.misuse(t, mutex, e);
        }
        self.unlock(cpu, mutex);
        let prio = self.core.ctx.tasks[t.idx()].attrs.prio();
        self.conds[cond].waiters.push(prio, t);
        self.rt[t.idx()].cond_mutex = mutex as u32;
        if self.rt[t.idx()].state == TState::Running {
            self.block(cpu, t, Block::Cond);
        }
    }

    /// Wake one (signal) or all (broadcast) waiters. Each becomes runnable now (its
    /// activation is released now) and re-acquires its mutex when it runs, before its
    /// next op, as pthread_cond_wait does on return.
    fn cond_wake(&mut self, cpu: CpuId, cond: usize, all: bool) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        if all {
            self.conds[cond].waiters.drain_into(&mut woken);
        } else if let Some(w) = self.conds[cond].waiters.pop() {
            woken.push(w);
        }
        let now = self.core.ctx.now;
        for &w in &woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.rt[w.idx()].reacquire = true;
            self.make_runnable(w, Some(cpu), false);
        }
        self.scratch = woken;
    }

    fn barrier(&mut self, cpu: CpuId, t: TaskId, b: usize) {
        let bar = &mut self.barriers[b];
        bar.arrived += 1;
        if bar.arrived < bar.needed {
            let prio = self.core.ctx.tasks[t.idx()].attrs.prio();
            bar.waiters.push(prio, t);
            if self.rt[t.idx()].state == TState::Running {
                self.block(cpu, t, Block::Barrier);
            }
            return;
        }
        bar.arrived = 0;
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.barriers[b].waiters.drain_into(&mut woken);
        let now = self.core.ctx.now;
        for &w in &woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), false);
        }
        self.scratch = woken;
    }

    fn resume(&mut self, cpu: CpuId, tmpl: u32) {
        let now = self.core.ctx.now;
        for i in 0..self.instances[tmpl as usize].len() {
            let w = self.instances[tmpl as usize][i];
            if self.rt[w.idx()].state == TState::Blocked(Block::Suspend)
                && !self.core.ctx.tasks[w.idx()].exited
            {
                self.metrics.release(w, now, ActKind::Wakeup);
                self.make_runnable(w, Some(cpu), false);
            }
        }
    }

    fn write(&mut self, cpu: CpuId, t: TaskId, chan: usize, bytes: u64) {
        if self.rt[t.idx()].stage != Stage::Transfer {
            self.rt[t.idx()].stage = Stage::Transfer;
            self.rt[t.idx()].xfer_left = bytes;
        }
        let ch = &mut self.channels[chan];
        let n = self.rt[t.idx()].xfer_left.min(ch.capacity - ch.buffered);
        ch.buffered += n;
        ch.written += n;
        self.rt[t.idx()].xfer_left -= n;
        if n > 0 {
            self.wake_all_readers(cpu, chan);
        }
        if self.rt[t.idx()].xfer_left == 0 {
            self.next_op(cpu, t);
        } else if self.rt[t.idx()].state == TState::Running {
            let prio = self.core.ctx.tasks[t.idx()].attrs.prio();
            self.channels[chan].writers.push(prio, t);
            self.block(cpu, t, Block::Write);
        }
    }

    fn read(&mut self, cpu: CpuId, t: TaskId, chan: usize, bytes: u64) {
        if self.rt[t.idx()].stage != Stage::Transfer {
            self.rt[t.idx()].stage = Stage::Transfer;
            self.rt[t.idx()].xfer_left = bytes;
        }
        let ch = &mut self.channels[chan];
        let n = self.rt[t.idx()].xfer_left.min(ch.buffered);
        ch.buffered -= n;
        ch.read += n;
        self.rt[t.idx()].xfer_left -= n;
        if n > 0 {
            self.wake_all_writers(cpu, chan);
        }
        if self.rt[t.idx()].xfer_left == 0 {
            self.next_op(cpu, t);
        } else if self.rt[t.idx()].state == TState::Running {
            let prio = self.core.ctx.tasks[t.idx()].attrs.prio();
            self.channels[chan].readers.push(prio, t);
            self.block(cpu, t, Block::Read);
        }
    }

    fn wake_all_readers(&mut self, cpu: CpuId, chan: usize) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.channels[chan].readers.drain_into(&mut woken);
        self.wake_list(cpu, &woken);
        self.scratch = woken;
    }

    fn wake_all_writers(&mut self, cpu: CpuId, chan: usize) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.channels[chan].writers.drain_into(&mut woken);
        self.wake_list(cpu, &woken);
        self.scratch = woken;
    }

    fn wake_list(&mut self, cpu: CpuId, woken: &[TaskId]) {
        let now = self.core.ctx.now;
        for &w in woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), true);
        }
    }

    fn fork(&mut self, cpu: CpuId, parent: TaskId, tmpl: u32) {
        if !self.room_for_task() {
            return;
        }
        let tp = self.programs.task(tmpl);
        let attrs = attrs_of(&tp.attr);
        let aff = match tp.cpus.as_deref() {
            Some(c) => self.affinity_of(Some(c)),
            None => self.core.ctx.tasks[parent.idx()].affinity,
        };
        let child = self.create_task(tmpl, attrs, aff, Some(parent));
        if self.core.ctx.tracer.enabled() {
            let now = self.core.ctx.now;
            self.core.ctx.tracer.fork(now, cpu, parent, child);
        }
        self.wake_new(child, Some(cpu));
    }

    fn exit(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.core.ctx.now;
        self.core.exit(cpu);
        self.set_state(t, TState::Exited);
        self.metrics.end(t, now);
        self.live_tasks -= 1;
        self.last_exit = Some(now);
    }

    /// Change the running task's cgroup, attributes and CPUs at a phase boundary, through
    /// the core, in the order rt-app does it (`set_thread_taskgroup`, then
    /// `set_thread_param`: sched_move_task, then sched_setattr and sched_setaffinity). A
    /// task no longer allowed on its CPU is moved off it, and becomes runnable elsewhere.
    fn change_attrs(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        attrs: Option<SchedAttrs>,
        cpus: Option<CpuMask>,
        group: Option<crate::types::GroupId>,
    ) {
        if let Some(g) = group {
            self.core.move_group(t, g);
        }
        let machine = CpuMask::first_n(self.core.ctx.nr_cpus());
        if let Some(m) = cpus.map(|m| m.and(&machine)).filter(|m| !m.is_empty()) {
            self.rt[t.idx()].want_cpus.set(m, machine);
        }
        let v = &self.core.ctx.tasks[t.idx()];
        let aff = self.effective_cpus(self.rt[t.idx()].want_cpus.get(machine), v.group);
        let mask = (aff != v.affinity).then_some(aff);
        if let Err(e) = self.core.setattr(t, attrs, mask) {
            let name = &self.rt[t.idx()].name;
            return self.fail(format!("task {name}: {e}"));
        }
        if self.core.ctx.cpus[cpu.idx()].curr != Some(t) {
            self.core.ctx.cpus[cpu.idx()].gen += 1;
            self.burst_armed[cpu.idx()] = false;
            self.rt[t.idx()].involuntary += 1;
            self.set_state(t, TState::Runnable);
        }
    }

    /// Finish accounting at the end of the run.
    pub fn finish(&mut self) {
        let now = self.core.ctx.now;
        self.blk.finish(now);
        for c in 0..self.core.ctx.nr_cpus() {
            self.core.account_time(CpuId(c as u32));
            let cs = &mut self.core.ctx.cpus[c];
            if cs.curr.is_none() {
                cs.idle_ns += now - cs.idle_since;
                cs.idle_since = now;
            }
        }
        for i in 0..self.rt.len() {
            let t = TaskId(i as u32);
            let s = self.rt[i].state;
            self.set_state(t, s);
        }
    }
}

/// Ask the cache for every line of `*v` (nothing for `None`).
#[inline(always)]
fn prefetch_lines<T>(v: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = v {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE: usize = 64;
        let start = v as *const T as usize;
        let end = start + std::mem::size_of::<T>();
        let mut line = start & !(LINE - 1);
        while line < end {
            // SAFETY: a prefetch is only a hint; it never faults and changes no state.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// Ask the cache for the line holding `addr` (any address: a prefetch never faults).
#[inline(always)]
fn prefetch_addr(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint; it never faults and changes no state.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(addr as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// The unique timers a template's program uses, sorted and without repeats.
fn unique_timers_of(phases: &[&Phase], timer_unique: &[bool]) -> Box<[u32]> {
    let mut used: Vec<u32> = phases
        .iter()
        .flat_map(|p| p.events.iter())
        .filter_map(|op| match op {
            Op::Timer { timer, .. } if timer_unique[*timer as usize] => Some(*timer),
            _ => None,
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    used.into()
}

/// Engine attributes from spec attributes.
pub(crate) fn attrs_of(a: &schedlab_spec::model::SchedAttr) -> SchedAttrs {
    let (rt_priority, nice) = match a.policy {
        Policy::Fifo | Policy::Rr => (a.priority, 0),
        Policy::Deadline => (0, 0),
        _ => (0, a.priority),
    };
    SchedAttrs {
        policy: a.policy,
        rt_priority,
        nice,
        dl: a.dl,
        slice_ns: a.slice_ns.filter(|_| a.policy.is_fair()),
    }
}

/// The machine cost an op's kernel span is (`None`: user time, or no cost; a channel
/// call's spread is its channel's).
fn op_cost_key(op: &Op) -> Option<CostKey> {
    Some(match op {
        Op::Read { .. } | Op::Write { .. } => CostKey::ChannelOp,
        Op::Fork { .. } => CostKey::Fork,
        Op::Signal { .. } | Op::Broad { .. } | Op::Resume { .. } => CostKey::Wakeup,
        Op::Sleep { .. } | Op::Timer { .. } => CostKey::Sleep,
        Op::Exit => CostKey::Exit,
        _ => return None,
    })
}

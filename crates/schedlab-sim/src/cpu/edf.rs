//! `edf`: plain earliest-deadline-first scheduling of periodic jobs, for RTOS-style
//! studies beside `fp`.
//!
//! Sources:
//! - C. L. Liu and J. W. Layland, "Scheduling Algorithms for Multiprogramming in a
//!   Hard-Real-Time Environment", JACM 20(1), 1973, §7 ("the deadline driven scheduling
//!   algorithm"): the ready job whose deadline is nearest runs, preempting the others; on
//!   one processor it meets every deadline of a periodic task set with implicit deadlines
//!   if and only if the utilisation is at most 1 (Theorem 7).
//! - Global dispatching as Linux's SCHED_DEADLINE documentation states it
//!   (Documentation/scheduler/sched-deadline.rst, Linux 6.12, §3.3, the Dhall's-effect
//!   example: released together, "global EDF schedules these M tasks first (because their
//!   absolute deadlines ... are smaller)"), and T. Baker, "Multiprocessor EDF and Deadline
//!   Monotonic Schedulability Analysis", RTSS 2003 (§2: at each instant the m ready jobs
//!   with the earliest deadlines run on the m processors).
//!
//! Rules modelled:
//! - a job's absolute deadline is its release plus its task's relative deadline, the
//!   period of the timer that releases it, as deadline misses are counted (docs/results.md);
//!   the engine keeps it (`Ctx::job_deadline`; a job also starts at the task's start, where
//!   rt-app anchors its timer). A task whose program uses no timer has no deadline: it runs
//!   only when no job with a deadline is ready (in the background, first come first served
//!   among such tasks);
//! - the earliest deadline runs; a job released with an earlier deadline than a running
//!   one preempts it at once; an equal deadline never preempts;
//! - ties: equal deadlines are served in arrival order (each enqueue of a woken or new task
//!   takes the next number of one counter), and a preempted job keeps its place among them
//!   (it keeps its number) — the kernel's deadline rbtree queues equal keys behind each
//!   other and keeps `curr` queued, and `dl_entity_preempt` preempts only for a strictly
//!   earlier deadline. `yield` puts the task behind the jobs of equal deadline;
//! - tunable `mode`:
//!   - `partitioned` (default): one deadline-ordered queue per CPU; a task is placed on a
//!     CPU when created and stays there (`partition.rs`: its only CPU if its affinity names
//!     one, else the allowed CPU with the fewest tasks placed so far, lowest number on ties;
//!     moved only when a change of affinity excludes its CPU). Each CPU is a uniprocessor
//!     EDF scheduler, which Liu & Layland's bound covers;
//!   - `global`: one queue for all CPUs; the m earliest-deadline jobs run on the m CPUs. A
//!     released job goes to an idle CPU if it may use one (its previous CPU first, else the
//!     lowest-numbered), else to the CPU running the latest deadline among those it may use
//!     (its previous CPU on ties, else the lowest-numbered), which it preempts if its own
//!     deadline is earlier; a CPU that reschedules takes the earliest queued job it may
//!     run, from wherever it waited (a migration). A job preempted while an earlier-deadline
//!     job could be displaced elsewhere (possible only under affinity restrictions) asks
//!     that CPU to reschedule, as the kernel's push does. Reschedules asked at one instant
//!     are reserved (a CPU asked to take a job counts as running its deadline), so two jobs
//!     released together never pick the same victim.
//!
//! Simplifications: plain EDF, no bandwidth server. SCHED_DEADLINE tasks are refused: their
//! runtime and period ask for the CBS reservation of Linux's deadline class, which this
//! policy does not model (running them without it would run them as something they did
//! not ask to be). Priority and the other classes are ignored: every task is scheduled by
//! its jobs' deadlines;
//! a job released while its task is still running the previous one (an overrun: rt-app's
//! timer already expired) takes its new, later deadline at once, but other CPUs' queues
//! are compared with it only at the next scheduling event of its CPU (a wake-up there,
//! its blocking); no tick is needed otherwise, so the CPUs run tickless.

use super::deadline_queue::{DeadlineQueues, Key};
use super::partition::Partition;
use super::tunables::{self, ChoiceCell, Tunable};
use crate::ctx::Ctx;
use crate::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId, Time};

/// How jobs are spread over the CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdfMode {
    /// One queue per CPU; tasks stay on the CPU they were placed on.
    Partitioned,
    /// One queue for the machine; the m earliest deadlines run.
    Global,
}

impl EdfMode {
    const ALL: [EdfMode; 2] = [EdfMode::Partitioned, EdfMode::Global];

    fn as_str(self) -> &'static str {
        match self {
            EdfMode::Partitioned => "partitioned",
            EdfMode::Global => "global",
        }
    }
}

impl ChoiceCell for EdfMode {
    fn names(&self) -> Vec<&'static str> {
        Self::ALL.map(Self::as_str).to_vec()
    }
    fn name(&self) -> &'static str {
        self.as_str()
    }
    fn select(&mut self, index: usize) {
        *self = Self::ALL[index];
    }
}

/// edf's tunables.
#[derive(Clone, Debug)]
pub struct EdfParams {
    pub mode: EdfMode,
}

impl Default for EdfParams {
    fn default() -> Self {
        EdfParams {
            mode: EdfMode::Partitioned,
        }
    }
}

fn tunables() -> Vec<Tunable<EdfParams>> {
    vec![Tunable::choice(
        "mode",
        "partitioned|global: one deadline queue per CPU, each task staying on the CPU it \
         was placed on; or one queue whose m earliest-deadline jobs run on the m CPUs",
        |p| &mut p.mode,
    )]
}

/// What a CPU is committed to run, for global placement.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Busy {
    /// Idle, and no job has been sent to it.
    Free,
    /// Running (or asked to take) the job with this key.
    Until(Key),
}

pub struct Edf {
    params: EdfParams,
    /// Queued jobs that are not running: one queue per CPU (partitioned) or one (global).
    queues: DeadlineQueues,
    /// Per task: the arrival number of its current job (the tie-break).
    seq: Vec<u64>,
    /// Per task: the CPU it was queued for (what `for_each_queued` reports).
    queued_on: Vec<CpuId>,
    next_seq: u64,
    /// Global: per CPU, the earliest job it was asked to reschedule for, until it does.
    reserved: Vec<Option<Key>>,
    partition: Partition,
    nr_cpus: usize,
}

impl Edf {
    pub fn new(nr_cpus: usize) -> Self {
        Edf {
            params: EdfParams::default(),
            queues: DeadlineQueues::new(nr_cpus),
            seq: Vec::new(),
            queued_on: Vec::new(),
            next_seq: 0,
            reserved: vec![None; nr_cpus],
            partition: Partition::new(nr_cpus),
            nr_cpus,
        }
    }

    fn global(&self) -> bool {
        self.params.mode == EdfMode::Global
    }

    /// The queue a task queued for `cpu` joins.
    fn queue_for(&self, cpu: CpuId) -> usize {
        if self.global() {
            0
        } else {
            cpu.idx()
        }
    }

    fn deadline(ctx: &Ctx, t: TaskId) -> Time {
        ctx.job_deadline(t).unwrap_or(Time::MAX)
    }

    /// `t`'s current job's place in the order.
    fn key(&self, ctx: &Ctx, t: TaskId) -> Key {
        (Self::deadline(ctx, t), self.seq[t.idx()])
    }

    fn new_arrival(&mut self, t: TaskId) {
        self.next_seq += 1;
        self.seq[t.idx()] = self.next_seq;
    }

    fn queue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let key = self.key(ctx, t);
        self.queues.push(self.queue_for(cpu), t, key);
        self.queued_on[t.idx()] = cpu;
        ctx.count_work(self.queues.last_steps() as u64);
    }

    /// What `cpu` runs or is committed to (global placement): the job it was asked to
    /// take, else its current task while that stays runnable, else nothing.
    fn busy(&self, ctx: &Ctx, cpu: CpuId) -> Busy {
        if let Some(k) = self.reserved[cpu.idx()] {
            return Busy::Until(k);
        }
        match ctx.curr(cpu) {
            Some(c) if ctx.task(c).on_rq => Busy::Until(self.key(ctx, c)),
            _ => Busy::Free,
        }
    }

    /// Ask `cpu` to reschedule for a job with `key`, reserving it.
    fn send(&mut self, ctx: &mut Ctx, cpu: CpuId, key: Key) {
        let r = &mut self.reserved[cpu.idx()];
        *r = Some(r.map_or(key, |k| k.min(key)));
        ctx.resched(cpu);
    }

    /// Global placement of `t` among the CPUs it may use (but `exclude`): a free CPU
    /// (`prev` first, else the lowest), else the CPU committed to the latest deadline
    /// (`prev` on ties, else the lowest); `prev` when there is none. Whether the job beats
    /// what runs there is the caller's test.
    fn later_cpu(&self, ctx: &Ctx, t: TaskId, prev: CpuId, exclude: Option<CpuId>) -> CpuId {
        let allowed = ctx.task(t).affinity;
        let rank = |c: CpuId| {
            // Free beats busy; among busy CPUs the later deadline; then prev; then lower.
            let busy = self.busy(ctx, c);
            let lateness = match busy {
                Busy::Free => (1u8, (Time::MAX, u64::MAX)),
                Busy::Until(k) => (0u8, k),
            };
            (lateness, c == prev, std::cmp::Reverse(c.0))
        };
        allowed
            .iter()
            .filter(|&c| c.idx() < self.nr_cpus && Some(c) != exclude)
            .max_by_key(|&c| rank(c))
            .unwrap_or(prev)
    }

    /// Global: a job that was preempted (`t`, queued again) displaces the latest-deadline
    /// job of another CPU it may use, if that deadline is later than its own — Linux's
    /// push of a preempted deadline task (`push_dl_task`). With no affinity restrictions
    /// it never finds one: the preempted job had the latest deadline running.
    fn push_preempted(&mut self, ctx: &mut Ctx, from: CpuId, t: TaskId) {
        let key = self.key(ctx, t);
        let target = self.later_cpu(ctx, t, from, Some(from));
        if target == from || !ctx.task(t).affinity.contains(target) {
            return;
        }
        let beats = match self.busy(ctx, target) {
            Busy::Free => true,
            Busy::Until(k) => key < k,
        };
        if beats {
            self.send(ctx, target, key);
        }
    }
}

impl Scheduler for Edf {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "edf",
            summary: "earliest deadline first over periodic jobs (deadline = release + \
                      timer period), partitioned or global",
            source: "Liu & Layland 1973 (JACM 20(1)) §7; global dispatch: Baker 2003 (RTSS), \
                     Linux 6.12 Documentation/scheduler/sched-deadline.rst §3.3",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "edf", name, value)?;
        let queues = if self.global() { 1 } else { self.nr_cpus };
        self.queues = DeadlineQueues::new(queues);
        Ok(())
    }

    /// Every class but SCHED_DEADLINE is accepted and scheduled by its jobs' deadlines.
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if attrs.policy == Policy::Deadline {
            return Err(
                "edf is plain EDF over timer-released jobs (deadline = release + \
                        timer period); SCHED_DEADLINE's runtime and period ask for a CBS \
                        reservation, which it does not model"
                    .into(),
            );
        }
        Ok(())
    }

    /// Room for the new task's state (grown by doubling, not per event).
    fn task_new(&mut self, _ctx: &mut Ctx, t: TaskId, _parent: Option<TaskId>) {
        self.queues.ensure_task(t);
        if self.seq.len() <= t.idx() {
            let len = (t.idx() + 1).max(self.seq.len() * 2);
            self.seq.resize(len, 0);
            self.queued_on.resize(len, CpuId(0));
        }
    }

    /// select_task_rq_dl: partitioned, the CPU the task was placed on; global, a free CPU
    /// or the one running the latest deadline (`find_later_rq`).
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let allowed = ctx.task(t).affinity;
        if !self.global() {
            return self.partition.select(allowed, prev, kind);
        }
        let prev = if allowed.contains(prev) {
            prev
        } else {
            allowed.first().expect("empty affinity")
        };
        let target = self.later_cpu(ctx, t, prev, None);
        // The key this arrival will get (enqueue numbers it next).
        let key = (Self::deadline(ctx, t), self.next_seq + 1);
        match self.busy(ctx, target) {
            Busy::Free => target,
            Busy::Until(k) if key < k => target,
            Busy::Until(_) => prev,
        }
    }

    /// enqueue_task_dl: a released (or new) job takes the next arrival number and joins the
    /// deadline order; a job re-queued after an attribute or affinity change keeps its
    /// number. A task woken while still current is queued by `put_prev`, like any running
    /// task. Global: an idle CPU it was placed on is reserved for it.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if kind != EnqueueKind::Restore {
            self.new_arrival(t);
        }
        if ctx.task(t).running {
            return;
        }
        self.queue(ctx, cpu, t);
        if self.global() && ctx.curr(cpu).is_none() {
            let key = self.key(ctx, t);
            self.send(ctx, cpu, key);
        }
    }

    /// dequeue_task_dl: a queued job leaves its queue (a running one is in none).
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        self.queues.remove(t);
        ctx.count_work(self.queues.last_steps() as u64);
    }

    /// put_prev_task_dl: a task that stopped running but is still runnable (preempted or
    /// yielding) goes back into the order with its arrival number.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.task(t).on_rq {
            self.queue(ctx, cpu, t);
        }
    }

    /// wakeup_preempt_dl (`check_preempt_curr_dl` → `dl_entity_preempt`): preempt only for
    /// a strictly earlier deadline than what the CPU runs or was already asked to take.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let key = self.key(ctx, t);
        if self.global() {
            let beats = match self.busy(ctx, cpu) {
                Busy::Free => true,
                Busy::Until(k) => key < k,
            };
            if beats {
                self.send(ctx, cpu, key);
            }
        } else if let Some(curr) = ctx.curr(cpu) {
            if key < self.key(ctx, curr) {
                ctx.resched(cpu);
            }
        }
    }

    /// pick_next_task_dl: the earliest deadline of the CPU's queue (global: the earliest
    /// queued job this CPU may run, moved here — not one still current elsewhere, woken at
    /// the instant it blocked). A preempted job that could displace a later deadline on
    /// another CPU is pushed there.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let q = self.queue_for(cpu);
        if !self.global() {
            let (_, t) = self.queues.first(q)?;
            self.queues.remove(t);
            ctx.count_work(self.queues.last_steps() as u64);
            return Some(t);
        }
        self.reserved[cpu.idx()] = None;
        let prev = ctx.curr(cpu);
        let picked = self.queues.take_first_where(q, |t| {
            let v = ctx.task(t);
            v.affinity.contains(cpu) && (!v.running || v.cpu == cpu)
        });
        ctx.count_work(self.queues.last_steps() as u64);
        if let Some(t) = picked {
            if ctx.task(t).cpu != cpu {
                ctx.set_task_cpu(t, cpu);
            }
        }
        if let Some(p) = prev.filter(|&p| Some(p) != picked && ctx.task(p).on_rq) {
            self.push_preempted(ctx, cpu, p);
        }
        picked
    }

    /// Nothing here is tick-driven: run tickless.
    fn can_stop_tick(&self, _ctx: &Ctx, _cpu: CpuId) -> bool {
        true
    }

    /// yield_task_dl gives up the rest of the reservation; plain EDF has none, so the
    /// task goes behind the jobs of equal deadline (keeping its deadline).
    fn yield_task(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        self.new_arrival(t);
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for q in 0..self.queues.nr_queues() {
            for (_, t) in self.queues.iter(q) {
                f(self.queued_on[t.idx()], t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::strategies::{attrs_among, ops, tasks};
    use crate::protocol::testing::Driver;
    use crate::protocol::SchedCore;
    use crate::types::{rt, CpuMask};
    use proptest::prelude::*;

    const C0: CpuId = CpuId(0);

    fn machine(cpus: usize, mode: &str) -> SchedCore<Edf> {
        let mut policy = Edf::new(cpus);
        policy.set_param("mode", mode).unwrap();
        SchedCore::bare(policy, cpus, 1000)
    }

    /// A task allowed on every CPU whose job is due at `deadline` (ns), woken.
    fn job(core: &mut SchedCore<Edf>, deadline: Time) -> TaskId {
        let cpus = core.ctx.nr_cpus();
        let t = core.spawn(rt(Policy::Fifo, 10), CpuMask::first_n(cpus), None);
        core.ctx.set_job_deadline(t, deadline);
        core.wake_up_new_task(t, None).unwrap();
        t
    }

    /// One CPU: the earliest deadline runs, a strictly earlier one preempts, an equal one
    /// does not, and a task without a deadline waits for every job that has one.
    #[test]
    fn earliest_deadline_runs_and_only_an_earlier_one_preempts() {
        let mut core = machine(1, "partitioned");
        let late = job(&mut core, 50);
        core.process_resched();
        let early = job(&mut core, 20);
        assert!(core.ctx.need_resched(C0));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(early));
        let tie = job(&mut core, 20);
        assert!(
            !core.ctx.need_resched(C0),
            "an equal deadline never preempts"
        );
        let background = core.spawn(rt(Policy::Fifo, 99), CpuMask::first_n(1), None);
        core.wake_up_new_task(background, None).unwrap();
        let mut order = Vec::new();
        while let Some(t) = core.ctx.curr(C0) {
            order.push(t);
            core.block(C0, crate::trace::writer::PrevState::Sleeping);
            core.process_resched();
        }
        assert_eq!(order, [early, tie, late, background]);
    }

    /// Global: a job released while every CPU is busy preempts the latest deadline.
    #[test]
    fn global_preempts_the_latest_running_deadline() {
        let mut core = machine(2, "global");
        let a = job(&mut core, 100);
        let b = job(&mut core, 60);
        core.process_resched();
        let (on_a, on_b) = (core.ctx.task(a).cpu, core.ctx.task(b).cpu);
        assert_ne!(on_a, on_b);
        let c = job(&mut core, 80);
        assert!(core.ctx.need_resched(on_a) && !core.ctx.need_resched(on_b));
        core.process_resched();
        assert_eq!(core.ctx.curr(on_a), Some(c));
        assert_eq!(core.ctx.curr(on_b), Some(b));
        assert!(!core.ctx.task(a).running && core.ctx.task(a).on_rq);
    }

    /// Global: jobs released in one operation (the engine wakes a condition's waiters in
    /// one event) displace different CPUs: the CPU asked to take the first counts as
    /// running it when the second is placed.
    #[test]
    fn global_jobs_released_together_displace_different_cpus() {
        let mut core = machine(2, "global");
        let a = job(&mut core, 100);
        let b = job(&mut core, 90);
        core.process_resched();
        let c = job(&mut core, 50);
        let d = job(&mut core, 60);
        assert!(core.ctx.need_resched(C0) && core.ctx.need_resched(CpuId(1)));
        core.process_resched();
        let mut running = [core.ctx.curr(C0).unwrap(), core.ctx.curr(CpuId(1)).unwrap()];
        running.sort();
        assert_eq!(running, [c, d]);
        assert!(core.ctx.task(a).on_rq && core.ctx.task(b).on_rq);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random operations through the scheduler core keep the invariants every policy
        /// must keep (`Driver::check`), in both modes.
        #[test]
        fn random_operations_keep_the_invariants(
            cpus in 1usize..4,
            global in any::<bool>(),
            specs in tasks(attrs_among(&[Policy::Other, Policy::Fifo])),
            ops in proptest::collection::vec(
                ops(20_000_000, attrs_among(&[Policy::Other, Policy::Fifo])), 1..200),
        ) {
            let mut policy = Edf::new(cpus);
            policy.set_param("mode", if global { "global" } else { "partitioned" }).unwrap();
            let mut d = Driver::new(policy, cpus, 1000, &specs);
            d.apply_checked(ops);
        }
    }
}

//! `fp`: a fixed-priority preemptive RTOS kernel with μITRON 4.0 semantics.
//!
//! Source: the μITRON 4.0 specification as implemented by TOPPERS/ASP 1.x
//! (`kernel/task.c`: `make_runnable` l.275, `make_non_runnable` l.302, `change_priority`
//! l.380, `rotate_ready_queue` l.435; `kernel/sys_manage.c` `rot_rdq` l.195). Rules
//! modelled:
//! - the highest-priority ready task runs; FIFO order within a priority;
//! - a task made ready goes to the tail of its priority's queue; a task of equal priority
//!   never preempts; a strictly higher priority preempts at once;
//! - the running task stays at the head of its queue ("precedence"), so a preempted task
//!   resumes before its peers;
//! - `yield` is `rot_rdq(TPRI_SELF)`: the running task moves to the tail of its priority;
//! - a priority change (phase attributes) puts the task at the tail of its new priority
//!   (`chg_pri`'s rule, l.380);
//! - no time slicing (μITRON has none; round robin is done by calling rot_rdq from a cyclic
//!   handler): the `timeslice_ticks` parameter emulates that handler when non-zero.
//!
//! Multiprocessor: partitioned, as TOPPERS/FMP with one ready queue per processor. A task
//! is assigned to a CPU when created — its only CPU if its affinity names one, else the
//! allowed CPU with the fewest tasks assigned so far (lowest number on ties) — and never
//! migrates afterwards unless a change of affinity excludes its CPU (`partition.rs`).
//!
//! Priorities: schedlab maps every task onto one scale, the kernel's `prio`: SCHED_FIFO/RR
//! priority p → 99 − p (0 highest), fair tasks → 120 + nice, so an RT-style task set maps
//! to μITRON's "smaller number = higher priority". SCHED_DEADLINE is rejected.
//!
//! Simplifications: no dispatch-disabled state (`dis_dsp`), no interrupt context.
//!
//! Ready queue: one `schedlab-rtq` queue per CPU, by default `bitmap-lists` —
//! JSP's per-priority lists with a priority bitmap; `--param readyq=` selects another back
//! end (`single-list`, the seed-002 "single ready queue"; `two-level-bitmap`; `tree`). The
//! back end changes no scheduling decision, only the work counted: every queue operation
//! charges `ctx.count_work` with the steps it really took (nodes walked, bitmap words
//! scanned, tree nodes visited).

use schedlab_rtq::{Kind, Prio};

use super::cpu_queues::CpuQueues;
use super::partition::Partition;

use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

/// Priority levels: kernel prio 0..=139 (index = prio).
const LEVELS: usize = 140;

/// The `readyq` tunable (shared with the Linux RT class): the ready-queue back end.
pub(crate) fn readyq_row() -> Tunable<Kind> {
    Tunable::choice(
        "readyq",
        "ready-queue structure (schedlab-rtq back end): \
         single-list|bitmap-lists|two-level-bitmap|tree; decisions are the same, \
         the work counted per queue operation differs",
        |k| k,
    )
}

/// fp's tunables (defaults: μITRON's, with TOPPERS/JSP's ready queue).
#[derive(Clone, Debug)]
pub struct FpParams {
    /// rot_rdq period in ticks (0 = never, μITRON's default).
    pub timeslice_ticks: u32,
    /// Back end of the ready queues.
    pub readyq: Kind,
}

impl Default for FpParams {
    fn default() -> Self {
        FpParams {
            timeslice_ticks: 0,
            readyq: Kind::BitmapLists,
        }
    }
}

fn tunables() -> Vec<Tunable<FpParams>> {
    vec![
        Tunable::int(
            "timeslice_ticks",
            "rotate the running task's priority queue every N ticks, as a cyclic handler \
             calling rot_rdq would (0 = never, uITRON default)",
            0,
            tunables::MAX,
            |p| &mut p.timeslice_ticks,
        ),
        readyq_row().lift(|p: &mut FpParams| &mut p.readyq),
    ]
}

pub struct Fp {
    /// One ready queue per CPU; the running task stays in it, at the head of its priority.
    rq: CpuQueues,
    /// Tunables (the queues' back end among them).
    params: FpParams,
    /// The CPU each new task is assigned to.
    partition: Partition,
    ticks_left: Vec<u32>,
}

impl Fp {
    pub fn new(nr_cpus: usize) -> Self {
        let params = FpParams::default();
        Fp {
            rq: CpuQueues::new(params.readyq, LEVELS, nr_cpus),
            params,
            partition: Partition::new(nr_cpus),
            ticks_left: vec![0; nr_cpus],
        }
    }

    fn level(attrs: &SchedAttrs) -> Prio {
        attrs.prio().clamp(0, LEVELS as i32 - 1) as Prio
    }

    /// The CPU whose queue holds `t`, if it is queued.
    fn queue_of(&self, t: TaskId) -> Option<CpuId> {
        self.rq.cpu_of(t.0)
    }

    /// rot_rdq for the priority of the running `t`: if it has peers it goes behind them.
    /// `t` normally heads its priority (precedence), which is exactly rot_rdq; if a
    /// priority change already put it elsewhere it moves to the tail all the same. Returns
    /// whether it moved.
    fn rotate(&mut self, ctx: &mut Ctx, t: TaskId) -> bool {
        let Some(c) = self.queue_of(t) else {
            return false;
        };
        let q = &mut self.rq;
        let peers = q.next_in_prio(c, t.0).is_some();
        let mut work = q.last_steps(c);
        if peers {
            let prio = q.prio_of(c, t.0).expect("queued");
            if q.prev_in_prio(c, t.0).is_none() {
                q.rotate(c, prio);
            } else {
                q.change_priority(c, t.0, prio);
            }
            work += q.last_steps(c);
        }
        ctx.count_work(work as u64);
        peers
    }
}

impl Scheduler for Fp {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "fp",
            summary: "fixed-priority preemptive RTOS kernel (uITRON 4.0 semantics), partitioned",
            source:
                "TOPPERS/ASP 1.x kernel/task.c l.275-460, kernel/sys_manage.c l.195 (uITRON 4.0)",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "fp", name, value)?;
        self.rq.set_kind(self.params.readyq);
        Ok(())
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if attrs.policy == Policy::Deadline {
            return Err(
                "fp is a fixed-priority kernel; SCHED_DEADLINE tasks need a deadline scheduler"
                    .into(),
            );
        }
        Ok(())
    }

    /// Room for the new task's state (grown by doubling, not per event).
    fn task_new(&mut self, _ctx: &mut Ctx, t: TaskId, _parent: Option<TaskId>) {
        self.rq.ensure_task(t);
    }

    /// Partitioned placement: the CPU chosen at creation is kept (no migration).
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        self.partition.select(ctx.task(t).affinity, prev, kind)
    }

    /// make_runnable: tail of its priority.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        let level = Self::level(&ctx.task(t).attrs);
        self.rq.push_tail(cpu, t.0, level);
        ctx.count_work(self.rq.last_steps(cpu) as u64);
    }

    /// make_non_runnable.
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        let work = self.queue_of(t).map_or(1, |c| {
            self.rq.remove(c, t.0);
            self.rq.last_steps(c)
        });
        ctx.count_work(work as u64);
    }

    /// Preempt only for a strictly higher priority (equal priority never preempts).
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if let Some(curr) = ctx.curr(cpu) {
            if ctx.task(t).attrs.prio() < ctx.task(curr).attrs.prio() {
                ctx.resched(cpu);
            }
        }
    }

    /// search_schedtsk: head of the highest non-empty priority. The running task stays
    /// linked (at the head), so a preempted task keeps its precedence.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let (head, steps) = self.rq.peek_counted(cpu);
        ctx.count_work(steps as u64);
        let t = TaskId(head?);
        if ctx.curr(cpu) != Some(t) {
            self.ticks_left[cpu.idx()] = self.params.timeslice_ticks;
        }
        Some(t)
    }

    /// Without the emulated cyclic handler the tick does nothing (μITRON has no time
    /// slicing): the CPU runs tickless.
    fn can_stop_tick(&self, _ctx: &Ctx, _cpu: CpuId) -> bool {
        self.params.timeslice_ticks == 0
    }

    /// The emulated cyclic handler: rot_rdq every `timeslice_ticks`.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.params.timeslice_ticks == 0 {
            return;
        }
        let left = &mut self.ticks_left[cpu.idx()];
        *left = left.saturating_sub(1);
        if *left == 0 {
            *left = self.params.timeslice_ticks;
            if self.rotate(ctx, t) {
                ctx.resched(cpu);
            }
        }
    }

    /// rot_rdq(TPRI_SELF).
    fn yield_task(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        self.rotate(ctx, t);
    }

    /// chg_pri: the task goes to the tail of its new priority (the core re-enqueued it);
    /// a ready task raised above the running one dispatches at once, as `chg_pri`'s
    /// `change_priority` → `dispatch` does (a running task lowered below a ready one is
    /// rescheduled by the core already).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        let v = ctx.task(t);
        if v.on_rq && !v.running {
            let beats_curr = ctx
                .curr(v.cpu)
                .is_none_or(|c| v.attrs.prio() < ctx.task(c).attrs.prio());
            if beats_curr {
                ctx.resched(v.cpu);
            }
        }
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for c in 0..self.rq.nr_cpus() {
            let cpu = CpuId(c as u32);
            self.rq.for_each(cpu, |t, _| {
                f(cpu, TaskId(t));
                true
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::strategies::{attrs_among, ops, tasks};
    use crate::protocol::testing::Driver;
    use crate::protocol::SchedCore;
    use crate::trace::writer::PrevState;
    use crate::types::{rt, CpuMask};
    use proptest::prelude::*;

    const C0: CpuId = CpuId(0);

    /// fp on `cpus` CPUs at HZ 1000, driven by the scheduler core (the engine's protocol).
    fn machine(cpus: usize) -> SchedCore<Fp> {
        SchedCore::bare(Fp::new(cpus), cpus, 1000)
    }

    /// Create a task of SCHED_FIFO priority `prio` on CPU 0 and wake it; the CPU
    /// reschedules only when the test says so.
    fn start(core: &mut SchedCore<Fp>, prio: i32) -> TaskId {
        let t = core.spawn(rt(Policy::Fifo, prio), CpuMask::first_n(1), None);
        core.wake_up_new_task(t, None).unwrap();
        t
    }

    /// The current task of CPU 0 blocks, then each task that runs in turn does; returns
    /// the order in which they ran.
    fn drain(core: &mut SchedCore<Fp>) -> Vec<TaskId> {
        let mut order = Vec::new();
        while core.ctx.curr(C0).is_some() {
            core.block(C0, PrevState::Sleeping);
            core.process_resched();
            order.extend(core.ctx.curr(C0));
        }
        order
    }

    /// make_runnable puts a task at the tail of its priority and an equal priority never
    /// preempts; a strictly higher one preempts at once; the preempted task keeps the head
    /// of its priority (precedence) and resumes before its peers; rot_rdq(TPRI_SELF) moves
    /// the running task behind its peers.
    #[test]
    fn preempted_task_resumes_first_and_yield_rotates() {
        let mut core = machine(1);
        let a = start(&mut core, 10);
        core.process_resched();
        let b = start(&mut core, 10);
        assert!(!core.ctx.need_resched(C0), "equal priority never preempts");
        let hi = start(&mut core, 50);
        assert!(core.ctx.need_resched(C0));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(hi));
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a), "precedence: a resumes before b");
        core.yield_current(C0);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
        assert_eq!(drain(&mut core), vec![a]);
    }

    /// chg_pri: the task goes to the tail of its new priority, lowered or raised (unlike
    /// Linux's RT class, which puts a lowered task at the head).
    #[test]
    fn priority_change_goes_to_the_tail_of_the_new_priority() {
        let mut core = machine(1);
        start(&mut core, 90);
        core.process_resched();
        let [a, b] = [20, 20].map(|p| start(&mut core, p));
        let c = start(&mut core, 10);
        core.process_resched();
        // b is lowered into the priority that holds c: behind c.
        core.setattr(b, Some(rt(Policy::Fifo, 10)), None).unwrap();
        core.process_resched();
        assert_eq!(drain(&mut core), vec![a, c, b]);
    }

    /// chg_pri of a ready task above the running one: it runs at once.
    #[test]
    fn a_ready_task_raised_above_the_running_one_preempts_it() {
        let mut core = machine(1);
        let a = start(&mut core, 20);
        core.process_resched();
        let b = start(&mut core, 10);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        core.setattr(b, Some(rt(Policy::Fifo, 30)), None).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
    }

    /// Partitioned: a new task goes to the allowed CPU with the fewest tasks assigned so
    /// far and stays there; a CPU never takes another CPU's waiting task.
    #[test]
    fn tasks_are_partitioned_at_creation_and_never_migrate() {
        let mut core = machine(2);
        let all = CpuMask::first_n(2);
        let ts: Vec<TaskId> = (0..4)
            .map(|_| core.spawn(rt(Policy::Fifo, 10), all, None))
            .collect();
        let cpus: Vec<CpuId> = ts
            .iter()
            .map(|&t| core.wake_up_new_task(t, None).unwrap())
            .collect();
        assert_eq!(cpus, [C0, CpuId(1), C0, CpuId(1)]);
        core.process_resched();
        // CPU 1's tasks block: it idles although CPU 0 has a task waiting.
        for _ in 0..2 {
            core.block(CpuId(1), PrevState::Sleeping);
            core.process_resched();
        }
        assert_eq!(core.ctx.curr(CpuId(1)), None);
        assert_eq!(core.ctx.curr(C0), Some(ts[0]));
        assert_eq!(core.ctx.task(ts[2]).cpu, C0);
    }

    const POLICIES: &[Policy] = &[Policy::Other, Policy::Fifo, Policy::Rr];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random operations through the scheduler core keep the invariants every policy
        /// must keep (`Driver::check`), with and without the emulated rot_rdq handler, on
        /// every ready-queue back end.
        #[test]
        fn random_operations_keep_the_invariants(
            cpus in 1usize..4,
            timeslice_ticks in 0u32..4,
            readyq in 0usize..Kind::ALL.len(),
            specs in tasks(attrs_among(POLICIES)),
            ops in proptest::collection::vec(ops(20_000_000, attrs_among(POLICIES)), 1..200),
        ) {
            let mut policy = Fp::new(cpus);
            policy.set_param("timeslice_ticks", &timeslice_ticks.to_string()).unwrap();
            policy.set_param("readyq", Kind::ALL[readyq].name()).unwrap();
            let mut d = Driver::new(policy, cpus, 1000, &specs);
            d.apply_checked(ops);
        }
    }
}

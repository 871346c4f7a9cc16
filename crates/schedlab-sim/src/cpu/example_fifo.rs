//! `example-fifo`: the smallest useful policy, written as a template for your own.
//!
//! One global first-in-first-out queue shared by all CPUs, no preemption, no time slices:
//! a task runs until it blocks, yields or exits; an idle CPU takes the oldest queued task
//! it is allowed to run. This is sched_ext's `scx_simple` in FIFO mode (tools/sched_ext/
//! scx_simple.bpf.c: every task goes to the shared SCX_DSQ_GLOBAL queue) minus its
//! vtime mode.
//!
//! To write a policy: copy this file to `cpu/<your_policy>.rs`, keep per-task state in
//! `Vec`s indexed by `TaskId`, implement the three required hooks (`enqueue`, `dequeue`,
//! `pick_next`) and `for_each_queued`, then add one line to the registry in `cpu/mod.rs`.
//! Tunables are declared once, as rows of a table (`cpu/tunables.rs`) over a params
//! struct whose `Default` holds the defaults; `info()` lists the table and `set_param`
//! parses through it. This policy has none: its table is empty.
//! Run your policy with `schedlab run SPEC --scheduler <name> --check` so the engine
//! verifies its invariants after every event, and test it as the `tests` module below
//! does: through the scheduler core (`protocol::SchedCore`), never by calling hooks.

use std::collections::VecDeque;

use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, TaskId};

/// The tunables table: one `Tunable::flag/int/ns/ms/choice` row per tunable, each naming
/// the field of the params struct it sets (none here, so the struct is `()`).
fn tunables() -> Vec<Tunable<()>> {
    Vec::new()
}

/// The global FIFO policy.
#[derive(Default)]
pub struct ExampleFifo {
    /// Queued tasks in arrival order, with the CPU each is assigned to. (A real policy
    /// would avoid `VecDeque`'s occasional reallocation with an intrusive list; clarity
    /// wins in a template.)
    queue: VecDeque<(TaskId, CpuId)>,
}

impl ExampleFifo {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Scheduler for ExampleFifo {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "example-fifo",
            summary: "template policy: one global FIFO queue, run to completion, no preemption",
            source:
                "sched_ext tools/sched_ext/scx_simple.bpf.c (FIFO mode, global DSQ), Linux 6.12",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut (), "example-fifo", name, value)
    }

    /// select_task_rq: prefer an idle CPU so the task starts at once; else stay.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, _kind: WakeKind) -> CpuId {
        let allowed = ctx.task(t).affinity;
        if allowed.contains(prev) && ctx.curr(prev).is_none() {
            return prev;
        }
        let idle = allowed.iter().find(|&c| ctx.curr(c).is_none());
        idle.unwrap_or(if allowed.contains(prev) {
            prev
        } else {
            allowed.first().unwrap()
        })
    }

    /// enqueue_task: join the tail of the global queue, and kick every idle CPU that may
    /// run the task so one of them takes it (sched_ext's `scx_bpf_kick_cpu`).
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        if ctx.task(t).running {
            // Woken at the instant it blocked, before its CPU switched away: it is still
            // current, and put_prev will queue it (as for any running task).
            return;
        }
        self.queue.push_back((t, cpu));
        let allowed = ctx.task(t).affinity;
        for c in allowed.iter() {
            if ctx.curr(c).is_none() {
                ctx.resched(c);
            }
        }
    }

    /// dequeue_task: a running task is not in the queue; a queued one leaves it. The
    /// search is linear, and counted as such (the steps walked).
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        let found = self.queue.iter().position(|&(x, _)| x == t);
        ctx.count_work(found.map_or(self.queue.len(), |pos| pos + 1) as u64);
        if let Some(pos) = found {
            self.queue.remove(pos);
        }
    }

    /// put_prev_task: a task that stopped running but is still runnable (it yielded)
    /// goes to the back of the line.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.task(t).on_rq {
            self.queue.push_back((t, cpu));
        }
    }

    /// Nothing here is tick-driven (no time slices, no balancing): run tickless.
    fn can_stop_tick(&self, _ctx: &Ctx, _cpu: CpuId) -> bool {
        true
    }

    /// pick_next_task: the oldest task allowed on this CPU, moved here if it was queued
    /// for another CPU (but not one still current on another CPU: a task woken at the
    /// instant it blocked is queued before its CPU has switched away from it).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let pos = self.queue.iter().position(|&(t, _)| {
            let v = ctx.task(t);
            v.affinity.contains(cpu) && (!v.running || v.cpu == cpu)
        })?;
        ctx.count_work(pos as u64 + 1);
        let (t, _) = self.queue.remove(pos)?;
        if ctx.task(t).cpu != cpu {
            ctx.set_task_cpu(t, cpu);
        }
        Some(t)
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for &(t, cpu) in &self.queue {
            f(cpu, t);
        }
    }
}

// Tests drive the policy through `SchedCore`, the scheduler core the engine runs: it calls
// the hooks in the kernel's order (the calling-protocol table of `sched.rs`) and keeps the
// kernel's side of the machine (which task is current, which are runnable, the clock). A
// test acts as the tasks and the machine — it creates tasks, wakes them, blocks, yields or
// exits the running one, advances time — and never calls a hook itself, so that it cannot
// test the policy against a protocol the engine does not follow. Copy this module with the
// policy: keep the scenario tests of your policy's rules, and the random-operation test with
// `Driver::check` (the invariants every policy must keep) plus your policy's own.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::strategies::{attrs_among, ops};
    use crate::protocol::testing::{mask_of_bits, Driver, Hook, Observed, Observer};
    use crate::protocol::SchedCore;
    use crate::trace::writer::PrevState;
    use crate::types::{fair, CpuMask, Policy, SchedAttrs};
    use proptest::prelude::*;

    const C0: CpuId = CpuId(0);
    const C1: CpuId = CpuId(1);

    fn normal() -> SchedAttrs {
        fair(Policy::Other, 0)
    }

    /// The policy on `cpus` CPUs at HZ 1000, driven by the scheduler core.
    fn machine(cpus: usize) -> SchedCore<ExampleFifo> {
        SchedCore::bare(ExampleFifo::new(), cpus, 1000)
    }

    /// Create a task (`sched_fork` → `task_new`) allowed on `affinity` and wake it
    /// (`wake_up_new_task`); the CPUs reschedule only when the test says so.
    fn start(core: &mut SchedCore<ExampleFifo>, affinity: CpuMask) -> TaskId {
        let t = core.spawn(normal(), affinity, None);
        core.wake_up_new_task(t, None)
            .expect("placed within its affinity");
        t
    }

    /// The current task of `cpu` blocks; every CPU that must reschedule does.
    fn block(core: &mut SchedCore<ExampleFifo>, cpu: CpuId) -> TaskId {
        let t = core.block(cpu, PrevState::Sleeping);
        core.process_resched();
        t
    }

    #[test]
    fn one_cpu_runs_tasks_in_wake_up_order_and_never_preempts() {
        let mut core = machine(1);
        let one = CpuMask::first_n(1);
        let [a, b, c] = [(); 3].map(|_| start(&mut core, one));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        assert_eq!(block(&mut core, C0), a);
        assert_eq!(core.ctx.curr(C0), Some(b));
        // a wakes while b runs: it joins the tail and b keeps the CPU.
        core.try_to_wake_up(a, None, false).unwrap();
        assert!(!core.ctx.need_resched(C0), "a wake-up never preempts");
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
        block(&mut core, C0);
        assert_eq!(core.ctx.curr(C0), Some(c), "c was queued before a");
        block(&mut core, C0);
        assert_eq!(core.ctx.curr(C0), Some(a));
        block(&mut core, C0);
        assert_eq!(core.ctx.curr(C0), None);
    }

    #[test]
    fn a_yielding_task_goes_to_the_back_of_the_line() {
        let mut core = machine(1);
        let one = CpuMask::first_n(1);
        let [a, b, c] = [(); 3].map(|_| start(&mut core, one));
        core.process_resched();
        for next in [b, c, a, b] {
            core.yield_current(C0);
            core.process_resched();
            assert_eq!(core.ctx.curr(C0), Some(next));
        }
        // Alone, a yielding task runs on.
        let mut core = machine(1);
        let a = start(&mut core, one);
        core.process_resched();
        core.yield_current(C0);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
    }

    /// A task woken at the instant it blocked, before its CPU switched away
    /// (`ttwu_runnable`), is still current: it is queued by `put_prev` like a task that
    /// yielded, behind the tasks already waiting.
    #[test]
    fn a_task_woken_as_it_blocks_goes_behind_the_waiting_ones() {
        let mut core = machine(1);
        let one = CpuMask::first_n(1);
        let [a, b] = [(); 2].map(|_| start(&mut core, one));
        core.process_resched();
        core.block(C0, PrevState::Sleeping);
        core.try_to_wake_up(a, None, false).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
        block(&mut core, C0);
        assert_eq!(core.ctx.curr(C0), Some(a));
    }

    /// One global queue: a woken task is placed on an idle CPU, and a CPU that runs out of
    /// work takes the oldest waiting task it is allowed to run, from whichever CPU it was
    /// queued for.
    #[test]
    fn an_idle_cpu_takes_the_oldest_task_it_may_run() {
        let mut core = machine(2);
        let both = CpuMask::first_n(2);
        let x = start(&mut core, both);
        let y = start(&mut core, both);
        core.process_resched();
        assert_eq!((core.ctx.curr(C0), core.ctx.curr(C1)), (Some(x), Some(y)));
        // Both CPUs busy: p (CPU 0 only) and then q wait in the global queue.
        let p = start(&mut core, CpuMask::first_n(1));
        let q = start(&mut core, both);
        core.process_resched();
        // CPU 1 runs out of work: p is older but may not run there, q may.
        block(&mut core, C1);
        assert_eq!(core.ctx.curr(C1), Some(q));
        assert_eq!(core.ctx.task(q).cpu, C1);
        block(&mut core, C0);
        assert_eq!(core.ctx.curr(C0), Some(p));
        // Nothing left: CPU 1 idles when q blocks, and a wake-up goes to that idle CPU.
        block(&mut core, C1);
        assert_eq!(core.ctx.curr(C1), None);
        assert_eq!(core.try_to_wake_up(x, None, false), Ok(C1));
        core.process_resched();
        assert_eq!(core.ctx.curr(C1), Some(x));
    }

    /// Sees every hook call (`Observed`): no hook may ask a busy CPU to reschedule — the
    /// policy never preempts (the core itself reschedules a CPU whose task blocks, yields
    /// or exits).
    #[derive(Default)]
    struct NeverPreempts {
        asked_before: Vec<bool>,
    }

    impl Observer<ExampleFifo> for NeverPreempts {
        fn before(&mut self, _hook: Hook, _policy: &ExampleFifo, ctx: &Ctx) {
            self.asked_before = (0..ctx.nr_cpus())
                .map(|c| ctx.need_resched(CpuId(c as u32)))
                .collect();
        }

        fn after(&mut self, hook: Hook, _policy: &ExampleFifo, ctx: &Ctx) {
            for (c, &before) in self.asked_before.iter().enumerate() {
                let cpu = CpuId(c as u32);
                assert!(
                    before || !ctx.need_resched(cpu) || ctx.curr(cpu).is_none(),
                    "{hook:?} asked busy {cpu:?} to reschedule"
                );
            }
        }
    }

    const POLICIES: &[Policy] = &[Policy::Other];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random operations on random machines and affinities keep the invariants every
        /// policy must keep (`Driver::check`), and the policy never preempts.
        #[test]
        fn random_operations_keep_the_invariants(
            cpus in 1usize..4,
            tasks in proptest::collection::vec(1u32..16, 1..8),
            ops in proptest::collection::vec(ops(3_000_000, attrs_among(POLICIES)), 1..150),
        ) {
            let specs: Vec<_> = tasks.iter().map(|&m| (normal(), mask_of_bits(m))).collect();
            let policy = Observed::new(ExampleFifo::new(), NeverPreempts::default());
            let mut d = Driver::new(policy, cpus, 1000, &specs);
            d.apply_checked(ops);
        }
    }
}

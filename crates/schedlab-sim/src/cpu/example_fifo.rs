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
//! verifies its invariants after every event.

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

//! `muqss`: Con Kolivas' Multiple Queue Skiplist Scheduler, the per-CPU-runqueue successor
//! of BFS, one policy owning the whole machine.
//!
//! Source: `Documentation/scheduler/sched-MuQSS.txt` and `kernel/sched/MuQSS.c`
//! (ckolivas/linux, constants at the top of the file). MuQSS keeps BFS's rules (implemented once, in
//! `bfs.rs`, and shared: `prio_ratios`, the virtual deadline `now + prio_ratios[nice+20] *
//! rr_interval * (MS_TO_NS(1)/128)`, `timeslice()`, `time_slice_expired` /
//! `check_deadline`, `can_preempt`, fork's slice sharing, SCHED_ISO at `iso_cpu`,
//! SCHED_IDLEPRIO, `sched_yield_type`); what differs is modelled here:
//! - one run queue per CPU, ordered by (static priority class, then deadline; RT FIFO
//!   order within an RT priority), a woken or preempted task joining the queue of the CPU
//!   it is placed on / ran on;
//! - `earliest_deadline_task` in interactive mode (`interactive=1`, the default
//!   `sched_interactive = 1`): peek at the first eligible entry of this CPU's queue and of
//!   every other CPU's queue, in locality order, and take the globally best one (migrating
//!   it here); in non-interactive mode other queues are only looked at when they hold more
//!   queued tasks than this CPU's (stealing from a more heavily loaded runqueue);
//! - no periodic load balancer: balancing happens only through the wake-up CPU choice and
//!   this selection;
//! - wake-up CPU (`select_best_cpu`): the previous CPU if idle, else an idle allowed CPU,
//!   else the allowed CPU running the worst task (lowest class, then latest deadline;
//!   the previous CPU on ties); `try_preempt(p, rq)` then preempts that CPU's task only if
//!   `can_preempt` says so;
//! - tickless slice expiry (`hrexpiry`): a timer fires exactly when the slice runs out.
//!
//! Simplifications: each runqueue's 8-level skip list (Pugh) is an ordered set with the
//! same order (O(1) peek at the first entry, O(log n) insertion); a peek that finds the
//! first entry not allowed on this CPU walks on along level 0, as MuQSS does; lockless
//! peeking and trylock are not modelled (the simulator is single-threaded); "niffies" =
//! the simulator clock (so `synchronise_niffies` is moot); runqueue sharing (`rqshare`) is
//! not modelled (each CPU has its own queue, `rqshare=none`); the machine is flat, so the
//! locality order is simply this CPU, then the following CPU numbers cyclically; no sticky
//! tasks / cache-distance deadline bias; the ISO limit is tracked machine-wide as in
//! `bfs.rs` (MuQSS keeps it per runqueue). The other simplifications listed in `bfs.rs`
//! apply as well.
//!
//! Tunables: `rr_interval_ms` (6), `iso_cpu` (70), `rt_as_iso` (0), `yield_type` (1),
//! `interactive` (1).

use std::collections::BTreeSet;

use super::bfs::Bfs;
use super::bfs::BfsParams;
use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::PolicyInfo;
use crate::types::{CpuId, TaskId};

/// A MuQSS policy for `nr_cpus` CPUs.
pub fn muqss(nr_cpus: usize) -> Bfs {
    let mut b = Bfs::new(nr_cpus);
    b.muqss = true;
    b.params.locality = 0;
    b.queues = vec![BTreeSet::new(); nr_cpus.max(1)];
    b
}

/// MuQSS's tunables: BFS's shared ones and `interactive`.
pub(super) fn tunables() -> Vec<Tunable<BfsParams>> {
    let mut t = super::bfs::shared_tunables();
    t.push(Tunable::flag(
        "interactive",
        "sched_interactive: 1 = take the earliest deadline across all runqueues, 0 = only \
         steal from more loaded runqueues",
        |p| &mut p.interactive,
    ));
    t
}

impl Bfs {
    pub(super) fn muqss_info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "muqss",
            summary: "Con Kolivas' MuQSS: per-CPU deadline-ordered run queues, earliest \
                      virtual deadline across all of them",
            source: "Documentation/scheduler/sched-MuQSS.txt + kernel/sched/MuQSS.c \
                     (ckolivas/linux 07bd22a6): earliest_deadline_task, select_best_cpu, \
                     try_preempt, time_slice_expired",
            params: tunables::listing(&tunables()),
        }
    }

    /// `earliest_deadline_task` over the per-CPU queues.
    pub(super) fn muqss_best_for(&self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let n = self.queues.len();
        let local_len = self.queues[cpu.idx()].len();
        let mut best: Option<(u8, u64, TaskId)> = None;
        let mut steps = 0u64;
        for i in 0..n {
            let q = (cpu.idx() + i) % n;
            if i > 0 && !self.params.interactive && self.queues[q].len() <= local_len {
                continue;
            }
            steps += 1;
            for &(idx, key, _, id) in &self.queues[q] {
                if let Some((bidx, bkey, _)) = best {
                    if (idx, key) >= (bidx, bkey) {
                        break;
                    }
                }
                steps += 1;
                let t = TaskId(id);
                let v = ctx.task(t);
                if !v.affinity.contains(cpu) || (v.running && v.cpu != cpu) {
                    continue;
                }
                best = Some((idx, key, t));
                break;
            }
        }
        ctx.count_work(steps);
        best.map(|(_, _, t)| t)
    }

    /// `select_best_cpu` when no allowed CPU is idle: the CPU running the worst task.
    pub(super) fn muqss_busy_cpu(&self, ctx: &Ctx, t: TaskId, prev: CpuId) -> CpuId {
        let aff = ctx.task(t).affinity;
        let rank = |c: CpuId| -> (u8, u64) {
            match ctx.curr(c) {
                Some(cur) => (self.run_idx[cur.idx()], self.deadline[cur.idx()]),
                None => (u8::MAX, u64::MAX),
            }
        };
        let mut best = if aff.contains(prev) {
            prev
        } else {
            aff.first().expect("empty affinity")
        };
        for c in aff.iter() {
            if rank(c) > rank(best) {
                best = c;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SchedCore;
    use crate::sched::Scheduler;
    use crate::trace::writer::PrevState;
    use crate::types::{CpuMask, Policy, SchedAttrs};

    const C0: CpuId = CpuId(0);
    const C1: CpuId = CpuId(1);

    fn normal(nice: i32) -> SchedAttrs {
        crate::types::fair(Policy::Other, nice)
    }

    fn queued(core: &SchedCore<Bfs>) -> Vec<(CpuId, TaskId)> {
        let mut seen = Vec::new();
        core.policy.for_each_queued(&mut |c, t| seen.push((c, t)));
        seen.sort();
        seen
    }

    /// Two CPUs busy with h0 and h1 (created at 0), `a` waiting in CPU 0's queue and `b`
    /// in CPU 1's with an earlier deadline: b (created at 0) ran on CPU 1 and slept, a was
    /// created at 2 ms. Neither preempts: a's deadline is later than both runners', b's
    /// equals them. Returns the core and [a, b].
    fn two_queues(interactive: bool) -> (SchedCore<Bfs>, [TaskId; 2]) {
        let mut core = SchedCore::bare(muqss(2), 2, 250);
        let flag = if interactive { "1" } else { "0" };
        core.policy.set_param("interactive", flag).unwrap();
        let all = CpuMask::first_n(2);
        let [h0, h1, b] = [(); 3].map(|_| core.spawn(normal(0), all, None));
        for t in [h0, b] {
            core.wake_up_new_task(t, None).unwrap();
            core.process_resched();
        }
        assert_eq!(core.ctx.curr(C1), Some(b));
        core.set_now(1_000_000);
        core.block(C1, PrevState::Sleeping);
        core.wake_up_new_task(h1, None).unwrap();
        core.process_resched();
        assert_eq!((core.ctx.curr(C0), core.ctx.curr(C1)), (Some(h0), Some(h1)));
        core.set_now(2_000_000);
        let a = core.spawn(normal(0), all, None);
        assert_eq!(core.wake_up_new_task(a, None), Ok(C0));
        assert_eq!(core.try_to_wake_up(b, None, false), Ok(C1));
        assert!(core.policy.deadline_of(b) < core.policy.deadline_of(a));
        assert!(!core.ctx.need_resched(C0) && !core.ctx.need_resched(C1));
        assert_eq!(queued(&core), vec![(C0, a), (C1, b)]);
        (core, [a, b])
    }

    #[test]
    fn tasks_queue_per_cpu_and_the_earliest_deadline_anywhere_is_picked() {
        let (mut core, [a, b]) = two_queues(true);
        // CPU 0 frees up and takes b from CPU 1's queue: its deadline is earlier.
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
        assert_eq!(core.ctx.task(b).cpu, C0);
        // CPU 1 frees up and takes a from CPU 0's queue.
        core.block(C1, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C1), Some(a));
        assert_eq!(queued(&core), vec![]);
    }

    #[test]
    fn non_interactive_mode_only_steals_from_more_loaded_queues() {
        assert!(muqss(2).set_param("locality", "1").is_err());
        let (mut core, [a, b]) = two_queues(false);
        // Equal loads: CPU 0 keeps to its own queue though b's deadline is earlier.
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        // Now CPU 0's queue is empty and CPU 1's is not: steal.
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
    }
}

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
    use crate::sched::{EnqueueKind, Scheduler};
    use crate::types::{CpuMask, Policy, SchedAttrs};

    fn normal(nice: i32) -> SchedAttrs {
        crate::types::fair(Policy::Other, nice)
    }

    #[test]
    fn tasks_queue_per_cpu_and_the_earliest_deadline_anywhere_is_picked() {
        let mut ctx = Ctx::for_test(2, 250);
        let mut m = muqss(2);
        let all = CpuMask::first_n(2);
        let a = ctx.add_task_for_test(normal(0), all);
        let b = ctx.add_task_for_test(normal(0), all);
        ctx.set_now_for_test(10_000_000);
        m.task_new(&mut ctx, a, None); // later deadline
        ctx.set_now_for_test(0);
        m.task_new(&mut ctx, b, None); // earlier deadline
        m.enqueue(&mut ctx, CpuId(0), a, EnqueueKind::Wakeup);
        m.enqueue(&mut ctx, CpuId(1), b, EnqueueKind::Wakeup);
        let mut seen = Vec::new();
        m.for_each_queued(&mut |c, t| seen.push((c, t)));
        seen.sort();
        assert_eq!(seen, vec![(CpuId(0), a), (CpuId(1), b)]);
        // CPU 0 takes b from CPU 1's queue: its deadline is earlier.
        assert_eq!(m.pick_next(&mut ctx, CpuId(0)), Some(b));
        assert_eq!(ctx.task(b).cpu, CpuId(0));
        assert_eq!(m.pick_next(&mut ctx, CpuId(1)), Some(a));
        assert_eq!(m.pick_next(&mut ctx, CpuId(1)), None);
    }

    #[test]
    fn non_interactive_mode_only_steals_from_more_loaded_queues() {
        let mut ctx = Ctx::for_test(2, 250);
        let mut m = muqss(2);
        m.set_param("interactive", "0").unwrap();
        assert!(m.set_param("locality", "1").is_err());
        let all = CpuMask::first_n(2);
        let a = ctx.add_task_for_test(normal(0), all);
        let b = ctx.add_task_for_test(normal(-10), all);
        m.task_new(&mut ctx, a, None);
        m.task_new(&mut ctx, b, None);
        m.enqueue(&mut ctx, CpuId(0), a, EnqueueKind::Wakeup);
        m.enqueue(&mut ctx, CpuId(1), b, EnqueueKind::Wakeup);
        // Equal loads: CPU 0 keeps to its own queue though b's deadline is earlier.
        assert_eq!(m.pick_next(&mut ctx, CpuId(0)), Some(a));
        // Now CPU 0's queue is empty and CPU 1's is not: steal.
        assert_eq!(m.pick_next(&mut ctx, CpuId(0)), Some(b));
    }
}

//! SMT siblings sharing their core's throughput (`machine.smt_throughput`).
//!
//! The hardware threads of a core share its execution resources: with k of its threads
//! busy, each progresses at `min(1, throughput / k)` of the speed of a thread alone, where
//! `throughput` is the core's combined throughput with all its threads busy relative to one
//! thread alone (default 1.3: `schedlab_spec::model::DEFAULT_SMT_THROUGHPUT_MILLI` cites
//! Intel's figure for the two threads of a Hyper-Threading core).
//!
//! Simplifications: the slowdown is uniform — it depends on how many threads of the core
//! are busy, never on what they run (real pairs gain from nothing to much more, by how
//! their instruction mixes and caches compete); a thread is busy while its CPU has a
//! current task (its switch overhead and interrupts included), idle in the idle loop.
//!
//! What is slowed: a task's bursts — its `run` and the kernel spans of its ops — do their
//! work at the thread's rate, so a burst of `w` ns of work needs more than `w` ns of CPU
//! time while a sibling is busy. The machine's own costs keep the lengths it gives them:
//! a context switch's overhead, and an interrupt's time charged into a burst (the tick,
//! timer expiries, the softirq work an interrupt exit runs) — their ends are events at
//! fixed instants (an `IrqExit`, a sleeper's wake-up after the handler; the softirq work
//! a `ksoftirqd` thread takes is its `run`, slowed like any task's, while the window in
//! which it keeps preemption off keeps the work's length). A `runtime` op
//! runs for wall time, as rt-app's does, whatever its speed. A task's CPU time
//! (`sum_exec_ns`, `cpu_ns` in results) is the time it held its CPU, as the kernel
//! charges it; its work is what its program asked for.
//!
//! How: the engine keeps a burst's end as the task's CPU time at which its work is done
//! (`TaskRt::burst_end`), so that `burst_end - sum_exec_ns` is the work left. Here, every
//! stretch of CPU time a task runs at a rate below 1 moves its burst's end later by the
//! CPU time that did no work ([`Smt::settle`], with the sub-nanosecond remainder of the
//! work done carried); a completion is armed at the CPU time the work left needs at the
//! current rate ([`Smt::wall_for`]); when a thread of a core starts or stops being busy,
//! the running siblings are settled at the old rate and their completions re-armed at the
//! new one (the engine's `smt_switched`). A burst ends at the first nanosecond by which its
//! work is done; the work under a nanosecond a task has done when it leaves its CPU
//! mid-burst is not carried to its next stint (`tests/smt_sharing.rs` bounds the work
//! done by this).
//!
//! A machine without SMT (one thread per core, the default topology), or whose cores do a
//! thread's work per thread, builds no [`Smt`]: the engine's hooks test one `Option` and
//! do nothing else, and its results are those of an engine without this module.

use crate::engine::{Engine, Stage};
use crate::sched::Scheduler;
use crate::types::{CpuId, TaskId};

/// The sharing state of an SMT machine.
#[derive(Clone, Debug)]
pub(crate) struct Smt {
    /// Hardware threads per core (> 1).
    threads: u32,
    /// The core's throughput with all threads busy, in thousandths of one thread's.
    milli: u64,
    /// Per core: its busy threads (CPUs with a task recorded in `cpus`).
    busy: Vec<u32>,
    /// Per CPU: the task whose progress is followed, and how far.
    cpus: Vec<CpuProgress>,
    /// Per task: interrupt time charged into its current burst and not yet run (it runs
    /// first, at its own length).
    unslowed: Vec<u64>,
}

/// How far the progress of a CPU's task has been settled.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CpuProgress {
    /// The CPU's task as last seen (`None`: idle).
    pub task: Option<TaskId>,
    /// Its CPU time when last settled.
    settled_exec: u64,
    /// Work done beyond the whole nanoseconds counted, in units of 1/`den` ns of the
    /// current rate.
    frac: u64,
}

/// A thread's speed relative to a thread alone: `num / den`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rate {
    num: u64,
    den: u64,
}

impl Rate {
    const FULL: Rate = Rate { num: 1, den: 1 };
}

impl Smt {
    /// The sharing of a machine of `nr_cpus` CPUs with `threads` per core whose cores,
    /// all threads busy, do `milli` thousandths of one thread's work; `None` when no thread
    /// is ever slowed (one thread per core, or a throughput of a thread per thread).
    pub fn new(nr_cpus: usize, threads: u32, milli: u32) -> Option<Smt> {
        let milli = u64::from(milli);
        if threads <= 1 || milli >= 1000 * u64::from(threads) {
            return None;
        }
        Some(Smt {
            threads,
            milli,
            busy: vec![0; nr_cpus.div_ceil(threads as usize)],
            cpus: vec![CpuProgress::default(); nr_cpus],
            unslowed: Vec::new(),
        })
    }

    /// The core of `cpu` (siblings are consecutive CPUs).
    #[inline]
    fn core_of(&self, cpu: usize) -> usize {
        cpu / self.threads as usize
    }

    /// The CPUs of `cpu`'s core.
    pub fn siblings(&self, cpu: usize) -> std::ops::Range<usize> {
        let first = self.core_of(cpu) * self.threads as usize;
        first..(first + self.threads as usize).min(self.cpus.len())
    }

    /// The speed of each busy thread of `cpu`'s core.
    fn rate(&self, cpu: usize) -> Rate {
        let k = u64::from(self.busy[self.core_of(cpu)]);
        if self.milli >= 1000 * k {
            Rate::FULL
        } else {
            Rate {
                num: self.milli,
                den: 1000 * k,
            }
        }
    }

    /// The task `cpu` was last seen running.
    #[inline]
    pub fn task_of(&self, cpu: usize) -> Option<TaskId> {
        self.cpus[cpu].task
    }

    /// Bring the progress of `cpu`'s task up to its CPU time `exec`: the CPU time since the
    /// last settlement that did no work moves its burst's end (`burst_end`, `None` when it
    /// runs no burst) that much later.
    pub fn settle(&mut self, cpu: usize, exec: u64, burst_end: Option<&mut u64>) {
        let rate = self.rate(cpu);
        let p = &mut self.cpus[cpu];
        let Some(t) = p.task else { return };
        let ran = exec.saturating_sub(p.settled_exec);
        p.settled_exec = exec;
        let unslowed = self.unslowed.get_mut(t.idx());
        let Some(end) = burst_end else {
            p.frac = 0;
            if let Some(u) = unslowed {
                *u = 0;
            }
            return;
        };
        let at_length = unslowed.map_or(0, |u| {
            let n = (*u).min(ran);
            *u -= n;
            n
        });
        let slowed = ran - at_length;
        if rate == Rate::FULL || slowed == 0 {
            return;
        }
        let total = u128::from(slowed) * u128::from(rate.num) + u128::from(p.frac);
        let den = u128::from(rate.den);
        let work = (total / den) as u64;
        p.frac = (total % den) as u64;
        *end = end.saturating_add(slowed - work);
    }

    /// The CPU time `cpu`'s task `t` needs, from its last settlement, to do `work` ns of
    /// its burst at the current rate (interrupt time still owed runs first at its length).
    pub fn wall_for(&self, cpu: usize, t: TaskId, work: u64) -> u64 {
        let rate = self.rate(cpu);
        let at_length = self.unslowed.get(t.idx()).map_or(0, |&u| u.min(work));
        let slowed = work - at_length;
        if rate == Rate::FULL || slowed == 0 {
            return work;
        }
        // The least n with floor((n·num + frac) / den) ≥ slowed.
        let need = (u128::from(slowed) * u128::from(rate.den))
            .saturating_sub(u128::from(self.cpus[cpu].frac));
        let n = need.div_ceil(u128::from(rate.num));
        u64::try_from(n).map_or(u64::MAX, |n| n.saturating_add(at_length))
    }

    /// An interrupt of `ns` was charged into the burst of `t`: those ns run at their
    /// length, before the rest of the burst.
    pub fn interrupt(&mut self, t: TaskId, ns: u64) {
        if self.unslowed.len() <= t.idx() {
            self.unslowed.resize(t.idx() + 1, 0);
        }
        let u = &mut self.unslowed[t.idx()];
        *u = u.saturating_add(ns);
    }

    /// `cpu` now runs `task` (its CPU time `exec`) after the task recorded there was
    /// settled; true if the core's number of busy threads changed (its siblings' rates).
    pub fn switched(&mut self, cpu: usize, task: Option<TaskId>, exec: u64) -> bool {
        let core = self.core_of(cpu);
        let changed = self.cpus[cpu].task.is_some() != task.is_some();
        if changed {
            let old = self.rate(cpu);
            if task.is_some() {
                self.busy[core] += 1;
            } else {
                self.busy[core] -= 1;
            }
            self.rescale_fractions(cpu, old);
        }
        self.cpus[cpu] = CpuProgress {
            task,
            settled_exec: exec,
            frac: 0,
        };
        changed
    }

    /// The siblings' carried work, in units of the old rate's denominator, in the new
    /// rate's (rounded down: less than a picosecond of work at most).
    fn rescale_fractions(&mut self, cpu: usize, old: Rate) {
        let new = self.rate(cpu);
        for s in self.siblings(cpu) {
            let p = &mut self.cpus[s];
            p.frac = match new {
                Rate::FULL => 0,
                _ => (u128::from(p.frac) * u128::from(new.den) / u128::from(old.den)) as u64,
            };
        }
    }
}

/// The engine's side: settling a CPU's task and following its switches.
impl<S: Scheduler> Engine<'_, S> {
    /// Settle the progress of the task last seen on `cpu` up to its CPU time.
    #[inline(never)]
    pub(crate) fn smt_settle(&mut self, cpu: CpuId) {
        let Some(smt) = self.smt.as_deref_mut() else {
            return;
        };
        let Some(t) = smt.task_of(cpu.idx()) else {
            return;
        };
        let exec = self.core.ctx.tasks[t.idx()].sum_exec_ns;
        let rt = &mut self.rt[t.idx()];
        let burst = (rt.stage == Stage::Burst).then_some(&mut rt.burst_end);
        smt.settle(cpu.idx(), exec, burst);
    }

    /// After `schedule()` on `cpu`: if its task changed, settle the one that left; if the
    /// CPU went busy or idle, its siblings change speed: settle them at the old rate and
    /// re-arm their bursts' completions at the new one.
    #[inline(never)]
    pub(crate) fn smt_switched(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        let Some(smt) = self.smt.as_deref() else {
            return;
        };
        let now_running = self.core.ctx.cpus[c].curr;
        let (seen, siblings) = (smt.task_of(c), smt.siblings(c));
        if seen == now_running {
            return;
        }
        self.smt_settle(cpu);
        let was_busy = seen.is_some();
        if was_busy != now_running.is_some() {
            for s in siblings.clone().filter(|&s| s != c) {
                self.core.account_time(CpuId(s as u32));
                self.smt_settle(CpuId(s as u32));
            }
        }
        let exec = now_running.map_or(0, |t| self.core.ctx.tasks[t.idx()].sum_exec_ns);
        let smt = self.smt.as_deref_mut().expect("SMT sharing");
        if !smt.switched(c, now_running, exec) {
            return;
        }
        for s in siblings.filter(|&s| s != c) {
            let Some(t) = self.core.ctx.cpus[s].curr else {
                continue;
            };
            let (sc, rt) = (CpuId(s as u32), &self.rt[t.idx()]);
            if self.burst_armed[s] && rt.stage == Stage::Burst && self.smt_follows(sc, t) {
                self.rearm(sc, t);
            }
        }
    }

    /// The SMT state follows `t` on `cpu` (a task switched out of it by the stop task is
    /// followed until its CPU reschedules).
    fn smt_follows(&self, cpu: CpuId, t: TaskId) -> bool {
        self.smt
            .as_deref()
            .is_some_and(|smt| smt.task_of(cpu.idx()) == Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_sharing_builds_nothing() {
        assert!(Smt::new(4, 1, 1300).is_none(), "no SMT");
        assert!(Smt::new(4, 2, 2000).is_none(), "a thread per thread");
        assert!(Smt::new(4, 2, 1300).is_some());
    }

    #[test]
    fn rates_follow_the_busy_threads() {
        // 4 threads per core, throughput 2: full speed up to 2 busy, then 2/k.
        let mut s = Smt::new(4, 4, 2000).unwrap();
        let rates: Vec<Rate> = (0..4)
            .map(|c| {
                s.switched(c, Some(TaskId(c as u32)), 0);
                s.rate(0)
            })
            .collect();
        assert_eq!(
            rates,
            [
                Rate::FULL,
                Rate::FULL,
                Rate {
                    num: 2000,
                    den: 3000
                },
                Rate {
                    num: 2000,
                    den: 4000
                }
            ]
        );
    }
}

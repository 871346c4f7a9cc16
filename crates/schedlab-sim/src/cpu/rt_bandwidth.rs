//! RT bandwidth: the bookkeeping behind RT throttling and RT group scheduling's limits
//! (`struct rt_bandwidth` per task group, the bandwidth fields of each group's per-CPU
//! `struct rt_rq`), used by the RT class (`linux_rt.rs`), which owns the queues.
//!
//! Primary sources, read through the reference index (function names, so they can be
//! found in any copy):
//! - torvalds/linux `kernel/sched/rt.c`, stored revision 00d6a8a7 (a v5.10-era copy):
//!   `sched_rt_period_timer`, `start_rt_bandwidth`, `sched_rt_runtime` /
//!   `sched_rt_period` (CONFIG_RT_GROUP_SCHED: the rt_rq's own runtime, the group's
//!   period), `do_balance_runtime` and `balance_runtime` (behind the RT_RUNTIME_SHARE
//!   sched feature), `do_sched_rt_period_timer`, `sched_rt_runtime_exceeded`,
//!   `update_curr_rt` (the walk over `for_each_sched_rt_entity`), `inc_rt_group` (the
//!   timer starts when an entity is queued on a group's rt_rq); `kernel/sched/sched.h`
//!   (`RUNTIME_INF`, `rt_bandwidth_enabled`); `kernel/sched/features.h`
//!   (`SCHED_FEAT(RT_RUNTIME_SHARE, false)`: commit 2586af1ac187, "sched/rt: Disable
//!   RT_RUNTIME_SHARE by default", Linux 5.10; true before); `kernel/sched/core.c`
//!   (`sched_rt_handler`, `tg_set_rt_bandwidth`: the settings themselves, checked when a
//!   spec is parsed, in schedlab-spec's cgroup parser).
//! - Linux 2.6.35 `kernel/sched_rt.c` (the copy kept in LeeDroid-/Flyer-2.6.35-HC-MR,
//!   commit ff8b2e40): the same functions, with `balance_runtime` called unconditionally
//!   on SMP (no RT_RUNTIME_SHARE switch: borrowing was always on) and without the
//!   period timer's reset of a CPU's runtime to the group's.
//!
//! - Line ranges, in Linux 6.1's `kernel/sched/rt.c` (the Debian `linux-source-6.1` tree),
//!   where these functions read as the model below describes: `sched_rt_period_timer`
//!   l.70-92, `do_start_rt_bandwidth`/`start_rt_bandwidth` l.106-132 (the first expiry
//!   `hrtimer_forward_now(…, 0)`), `sched_rt_runtime`/`sched_rt_period` l.535-546,
//!   `sched_rt_rq_enqueue`/`sched_rt_rq_dequeue` l.579-614, `do_balance_runtime`
//!   l.732-779, `balance_runtime` l.890-900, `do_sched_rt_period_timer` l.905-988 (the
//!   reset of `rt_runtime` without RT_RUNTIME_SHARE at l.936-937),
//!   `sched_rt_runtime_exceeded` l.1002-1043, `update_curr_rt` l.1049-1089,
//!   `inc_rt_group` l.1221-1229; `kernel/sched/features.h` l.94
//!   (`SCHED_FEAT(RT_RUNTIME_SHARE, false)`).
//!
//! Written from the specification; no kernel code is copied.
//!
//! Model:
//! - Each group has a runtime and a period (`cpu.rt_runtime_us`, `cpu.rt_period_us`;
//!   the root group's are the global `sched_rt_runtime_us` / `sched_rt_period_us`,
//!   950000/1000000 by default, -1 = no limit) and one period timer. Each group has, per
//!   CPU, an rt_rq with `rt_time` (RT time run in the current period), `rt_runtime` (its
//!   share of the runtime, which borrowing moves between CPUs) and `rt_throttled`.
//! - Accounting (`account`, called by the class's `update_curr` for the running task's
//!   group and every ancestor up to the root): `rt_time` grows by the CPU time run; when
//!   it passes `rt_runtime` (after trying to borrow) the rt_rq is throttled and the class
//!   takes it off its parent (`sched_rt_rq_dequeue`) and reschedules. As in the kernel,
//!   this is checked only when `update_curr` runs — at each tick and at each scheduling
//!   operation of the CPU — so a throttled group overruns its runtime by up to one tick.
//! - The period timer (one hrtimer per group, a policy timer here, firing on the CPU that
//!   started it) starts when an entity is queued on any of the group's rt_rqs and nothing
//!   is running it yet; as in v5.10's `start_rt_bandwidth` it first fires one nanosecond
//!   later (`hrtimer_forward_now(timer, 0)`), then every period from there. Each expiry
//!   visits every CPU's rt_rq of the group (one unit of `count_work` per rt_rq visited, so
//!   `machine.sched_work_ps` makes short periods cost throughput): `rt_time -=
//!   min(rt_time, overrun · rt_runtime)`, unthrottle and requeue when `rt_time <
//!   rt_runtime`; the timer stops when no rt_rq of the group has RT time or queued tasks
//!   left (`idle`).
//! - Borrowing (`rt_runtime_share`, the RT_RUNTIME_SHARE feature; off by default as in
//!   Linux ≥ 5.10): a CPU whose rt_time passed its rt_runtime takes from each other CPU's
//!   rt_rq of the same group 1/n of that rt_rq's spare time (its rt_runtime − rt_time; n
//!   the number of CPUs of the root domain: all CPUs here), until its rt_runtime reaches
//!   the period. Borrowed runtime stays where it went; without sharing, each period
//!   resets every rt_rq's runtime to the group's.
//!
//! Simplifications: one root domain holding every CPU (schedlab has no exclusive
//! cpusets), so the timers' span and the borrowing weight are the machine; CPUs never go
//! offline, so `__disable_runtime` / `__enable_runtime` are not modelled; no priority
//! inheritance, so `rt_nr_boosted` is always 0; the global sysctl and the root group's
//! `cpu.rt_runtime_us` are one setting (with RT group scheduling the kernel keeps both;
//! a root runtime of -1 turns all throttling off, as `rt_bandwidth_enabled()` does for
//! the sysctl).
//!
//! Cost: accounting is O(depth of the group tree) per `update_curr`; a period timer and a
//! borrow are O(CPUs).

use crate::ctx::Ctx;
use crate::sched::Throttling;
use crate::types::{CpuId, GroupId, Time};
use schedlab_spec::model::{DEFAULT_RT_PERIOD_US, ROOT_RT_RUNTIME_US};

/// `RUNTIME_INF`: no limit.
pub const RUNTIME_INF: u64 = u64::MAX;

/// The bandwidth of one group (`struct rt_bandwidth`).
#[derive(Clone, Debug)]
struct GroupBw {
    parent: Option<GroupId>,
    /// `rt_runtime` in ns, or [`RUNTIME_INF`].
    runtime: u64,
    /// `rt_period` in ns.
    period: u64,
    /// `rt_period_active`: the period timer is armed.
    active: bool,
    /// The period timer's expiry (`hrtimer_get_expires`).
    expires: Time,
}

/// The bandwidth fields of one group's rt_rq on one CPU.
#[derive(Clone, Copy, Debug, Default)]
struct RqBw {
    rt_time: u64,
    /// This CPU's share of the group's runtime (ns or [`RUNTIME_INF`]).
    rt_runtime: u64,
    throttled: bool,
    /// When the rt_rq was last throttled (while `throttled`).
    throttled_at: Time,
    /// Time spent throttled before `throttled_at`.
    throttled_ns: u64,
    /// Times it was throttled.
    throttles: u64,
}

/// The RT bandwidth of every group on every CPU.
#[derive(Debug, Default)]
pub struct RtBandwidth {
    /// `rt_bandwidth_enabled()`: the root's runtime is not -1.
    enabled: bool,
    /// `sched_feat(RT_RUNTIME_SHARE)`: borrow runtime between CPUs.
    pub share: bool,
    ncpus: usize,
    groups: Vec<GroupBw>,
    /// Per group and CPU: `group * ncpus + cpu`.
    rqs: Vec<RqBw>,
}

/// The rt_rq of `g` on CPU `c` that a period timer asks the class to queue again
/// (`sched_rt_rq_enqueue`).
pub type Unthrottled = (GroupId, CpuId);

impl RtBandwidth {
    /// Read every group's settings from the run's cgroups (before the first task is queued).
    pub fn configure(&mut self, ctx: &Ctx) {
        self.ncpus = ctx.nr_cpus();
        self.groups = (0..ctx.nr_groups() as GroupId)
            .map(|g| {
                let group = ctx.group(g);
                let default = if group.parent.is_none() {
                    ROOT_RT_RUNTIME_US
                } else {
                    0
                };
                let runtime_us = group.cpu.rt_runtime_us.unwrap_or(default);
                let period_us = group.cpu.rt_period_us.unwrap_or(DEFAULT_RT_PERIOD_US);
                GroupBw {
                    parent: group.parent,
                    runtime: u64::try_from(runtime_us)
                        .map_or(RUNTIME_INF, |us| us.saturating_mul(1000)),
                    period: period_us.saturating_mul(1000).max(1),
                    active: false,
                    expires: 0,
                }
            })
            .collect();
        self.enabled = self.groups[0].runtime != RUNTIME_INF;
        self.rqs = self
            .groups
            .iter()
            .flat_map(|g| {
                (0..self.ncpus).map(move |_| RqBw {
                    rt_runtime: g.runtime,
                    ..RqBw::default()
                })
            })
            .collect();
    }

    #[inline]
    fn at(&self, g: GroupId, c: CpuId) -> usize {
        g as usize * self.ncpus + c.idx()
    }

    /// The group's parent (`None` for the root).
    #[inline]
    pub fn parent(&self, g: GroupId) -> Option<GroupId> {
        self.groups[g as usize].parent
    }

    /// Number of groups known.
    pub fn nr_groups(&self) -> usize {
        self.groups.len()
    }

    /// `rt_rq_throttled()` of `g` on `c`.
    #[inline]
    pub fn throttled(&self, g: GroupId, c: CpuId) -> bool {
        self.rqs.get(self.at(g, c)).is_some_and(|rq| rq.throttled)
    }

    /// `update_curr_rt`'s step for one level: `g`'s rt_rq on `c` ran `delta` more.
    /// `Some(true)` when that throttled it (the class then takes it off its parent),
    /// `Some(false)` when it was throttled already, `None` when it may run on (the class
    /// reschedules `c` unless `None`).
    #[inline]
    pub fn account(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId, delta: u64) -> Option<bool> {
        if !self.enabled {
            return None;
        }
        let i = self.at(g, c);
        let rq = &mut self.rqs[i];
        if rq.rt_runtime == RUNTIME_INF {
            return None;
        }
        rq.rt_time += delta;
        if rq.throttled {
            return Some(false);
        }
        if rq.rt_time <= rq.rt_runtime {
            // Within its runtime: `sched_rt_runtime_exceeded` neither borrows (only an
            // rt_rq past its runtime does) nor throttles. The common case, decided here.
            return None;
        }
        self.runtime_exceeded(ctx, g, c).then_some(true)
    }

    /// A deadline task ran `delta` on `c`: `update_curr_dl` adds it to the root (group 0) rt_rq's
    /// `rt_time` when `sched_rt_bandwidth_account` (the root's period timer is armed, or
    /// the rt_rq has not used the root's runtime yet). Throttling is left to the RT
    /// tasks' own `update_curr_rt`.
    pub fn charge_dl_time(&mut self, c: CpuId, delta: u64) {
        if !self.enabled || self.groups.is_empty() {
            return;
        }
        let i = self.at(0, c);
        let root = &self.groups[0];
        if root.active || self.rqs[i].rt_time < root.runtime {
            self.rqs[i].rt_time += delta;
        }
    }

    /// `sched_rt_runtime_exceeded` for an rt_rq not throttled yet.
    #[inline(never)]
    fn runtime_exceeded(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) -> bool {
        let i = self.at(g, c);
        let period = self.groups[g as usize].period;
        if self.rqs[i].rt_runtime >= period {
            return false;
        }
        self.balance_runtime(ctx, g, c);
        let rq = &mut self.rqs[i];
        if rq.rt_runtime == RUNTIME_INF || rq.rt_time <= rq.rt_runtime {
            return false;
        }
        if self.groups[g as usize].runtime == 0 {
            // A group without runtime that ran anyway: forget it rather than throttle
            // (replenishing would give it exactly nothing).
            rq.rt_time = 0;
            return false;
        }
        rq.throttled = true;
        rq.throttled_at = ctx.now();
        rq.throttles += 1;
        true
    }

    /// `balance_runtime`: borrow when sharing is on and this rt_rq ran past its runtime.
    fn balance_runtime(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) {
        let rq = self.rqs[self.at(g, c)];
        if self.share && rq.rt_time > rq.rt_runtime {
            self.do_balance_runtime(ctx, g, c);
        }
    }

    /// `do_balance_runtime`: from each other CPU's rt_rq of the group, take 1/n of its
    /// spare runtime (n = CPUs of the root domain), until this one's reaches the period.
    fn do_balance_runtime(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) {
        let period = self.groups[g as usize].period;
        let weight = self.ncpus as u64;
        let me = self.at(g, c);
        let mut visited = 0;
        for other in (0..self.ncpus as u32).map(CpuId) {
            if other == c {
                continue;
            }
            visited += 1;
            let it = self.at(g, other);
            let lender = self.rqs[it];
            if lender.rt_runtime == RUNTIME_INF || lender.rt_runtime <= lender.rt_time {
                continue;
            }
            let mut diff = (lender.rt_runtime - lender.rt_time) / weight;
            let mine = self.rqs[me].rt_runtime;
            if mine + diff > period {
                diff = period - mine;
            }
            self.rqs[it].rt_runtime -= diff;
            self.rqs[me].rt_runtime += diff;
            if self.rqs[me].rt_runtime == period {
                break;
            }
        }
        ctx.count_work(visited);
    }

    /// `start_rt_bandwidth` for group `g` (an entity was queued on one of its rt_rqs):
    /// arm its period timer unless it runs already, to fire one nanosecond from now.
    #[inline]
    pub fn start(&mut self, ctx: &mut Ctx, g: GroupId) {
        if !self.enabled {
            return;
        }
        let b = &mut self.groups[g as usize];
        if b.active || b.runtime == RUNTIME_INF {
            return;
        }
        b.active = true;
        // hrtimer_forward_now(timer, 0): an expiry in the past moves to now plus the
        // timer resolution (1 ns).
        b.expires = ctx.now() + 1;
        ctx.arm_timer(b.expires, g as u64);
    }

    /// The period timer of group `token` fired (`sched_rt_period_timer`): replenish every
    /// CPU's rt_rq; `nr_running(c)` says whether the group's rt_rq on `c` has tasks.
    /// The rt_rqs to queue again are pushed on `out`; the timer is re-armed unless the
    /// group went idle.
    pub fn period_timer(
        &mut self,
        ctx: &mut Ctx,
        token: u64,
        nr_running: impl Fn(CpuId) -> bool,
        out: &mut Vec<Unthrottled>,
    ) {
        let g = token as GroupId;
        let mut idle = false;
        loop {
            let overrun = self.forward(g, ctx.now());
            if overrun == 0 {
                break;
            }
            idle = self.do_period_timer(ctx, g, overrun, &nr_running, out);
        }
        let b = &mut self.groups[g as usize];
        if idle {
            b.active = false;
        } else {
            ctx.arm_timer(b.expires, token);
        }
    }

    /// `hrtimer_forward_now(timer, period)`: move the expiry past `now` by whole periods;
    /// the number of periods, 0 if the expiry is still ahead.
    fn forward(&mut self, g: GroupId, now: Time) -> u64 {
        let b = &mut self.groups[g as usize];
        if now < b.expires {
            return 0;
        }
        let periods = (now - b.expires) / b.period + 1;
        b.expires += periods * b.period;
        periods
    }

    /// `do_sched_rt_period_timer`: true when the group is idle (the timer may stop).
    fn do_period_timer(
        &mut self,
        ctx: &mut Ctx,
        g: GroupId,
        overrun: u64,
        nr_running: &impl Fn(CpuId) -> bool,
        out: &mut Vec<Unthrottled>,
    ) -> bool {
        let (mut idle, mut throttled) = (true, false);
        let group_runtime = self.groups[g as usize].runtime;
        for c in (0..self.ncpus as u32).map(CpuId) {
            ctx.count_work(1);
            let i = self.at(g, c);
            if !self.share && self.rqs[i].rt_runtime != RUNTIME_INF {
                self.rqs[i].rt_runtime = group_runtime;
            }
            let running = nr_running(c);
            if self.rqs[i].rt_time == 0 && !running {
                continue;
            }
            let mut enqueue = false;
            if self.rqs[i].rt_time > 0 {
                if self.rqs[i].throttled {
                    self.balance_runtime(ctx, g, c);
                }
                let rq = &mut self.rqs[i];
                let runtime = rq.rt_runtime;
                rq.rt_time -= rq.rt_time.min(overrun.saturating_mul(runtime));
                if rq.throttled && rq.rt_time < runtime {
                    rq.throttled = false;
                    rq.throttled_ns += ctx.now() - rq.throttled_at;
                    enqueue = true;
                }
                if rq.rt_time > 0 || running {
                    idle = false;
                }
            } else {
                idle = false;
                enqueue = !self.rqs[i].throttled;
            }
            throttled |= self.rqs[i].throttled;
            if enqueue {
                out.push((g, c));
            }
        }
        if !throttled && (!self.enabled || group_runtime == RUNTIME_INF) {
            return true;
        }
        idle
    }

    /// Is any rt_rq throttled now?
    #[cfg(test)]
    pub fn any_throttled(&self) -> bool {
        self.rqs.iter().any(|rq| rq.throttled)
    }

    /// Every group's throttling per CPU (those ever throttled), with the time still
    /// throttled at `now` counted.
    pub fn stats(&self, now: Time) -> Vec<Throttling> {
        let mut out = Vec::new();
        for (i, rq) in self.rqs.iter().enumerate() {
            if rq.throttles == 0 {
                continue;
            }
            let open = if rq.throttled {
                now.saturating_sub(rq.throttled_at)
            } else {
                0
            };
            out.push(Throttling {
                group: (i / self.ncpus) as GroupId,
                cpu: CpuId((i % self.ncpus) as u32),
                throttles: rq.throttles,
                throttled_ns: rq.throttled_ns + open,
            });
        }
        out
    }
}

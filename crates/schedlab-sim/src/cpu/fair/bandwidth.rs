//! CFS bandwidth control (CONFIG_CFS_BANDWIDTH), written once for CFS and EEVDF.
//!
//! A task group with a quota (`cpu.cfs_quota_us` per `cpu.cfs_period_us`, cgroup v2's
//! `cpu.max`) owns a global pool of runtime (`struct cfs_bandwidth`), refilled by a period
//! timer; each of its run queues (one per CPU) takes slices of runtime from the pool and
//! spends them as its current entity runs. A run queue that has spent its slice and finds
//! the pool empty is throttled: its group entity leaves the parent's run queue, with
//! everything below it, until the period timer hands out fresh runtime.
//!
//! Sources: Linux 6.1.192 `kernel/sched/fair.c` (the Debian `linux-source-6.1` tree):
//! `sysctl_sched_cfs_bandwidth_slice` (l.178), `account_cfs_rq_runtime` from `update_curr`
//! (l.919), `check_enqueue_throttle` from `enqueue_entity` (l.4791-4795),
//! `return_cfs_rq_runtime` from `dequeue_entity` (l.4889), `check_cfs_rq_runtime` from
//! `put_prev_entity` (l.5055), `__refill_cfs_bandwidth_runtime` (l.5159-5175),
//! `__assign_cfs_rq_runtime`/`assign_cfs_rq_runtime` (l.5183-5221),
//! `__account_cfs_rq_runtime` (l.5223-5248), `cfs_rq_throttled`/`throttled_hierarchy`/
//! `throttled_lb_pair` (l.5250-5276), `tg_unthrottle_up`/`tg_throttle_down`
//! (l.5278-5309), `throttle_cfs_rq` (l.5311-5402), `unthrottle_cfs_rq` (l.5404-5479),
//! `distribute_cfs_runtime` (l.5481-5520), `do_sched_cfs_period_timer` (l.5528-5583),
//! `min_cfs_rq_runtime`, `min_bandwidth_expiration`, `cfs_bandwidth_slack_period`
//! (l.5585-5589), `runtime_refresh_within`, `start_cfs_slack_bandwidth`,
//! `__return_cfs_rq_runtime`, `do_sched_cfs_slack_timer` (l.5598-5696),
//! `check_enqueue_throttle` (l.5702-5719), `check_cfs_rq_runtime` (l.5739-5755),
//! `sched_cfs_period_timer` (l.5769-5822), `start_cfs_bandwidth` (l.5846-5856), the
//! throttle checks of `enqueue_task_fair`/`dequeue_task_fair` (l.6130-6240),
//! `check_preempt_wakeup` (l.7681), `pick_next_task_fair` (l.7781, 7838),
//! `can_migrate_task` (l.8328); `kernel/sched/core.c` `tg_set_cfs_bandwidth`
//! (l.10647: the pool is refilled and the period timer started when the quota is set).
//! Linux 6.12.117 `kernel/sched/fair.c` (the Debian `linux-source-6.12` tree) has the same
//! functions (l.5806-6680: `__refill_cfs_bandwidth_runtime` l.5806, `throttle_cfs_rq`
//! l.5973-6075, `unthrottle_cfs_rq` l.6077-6177, `distribute_cfs_runtime` l.6256-6337,
//! `do_sched_cfs_period_timer` l.6344-6396, the slack timer l.6412-6514,
//! `check_enqueue_throttle` l.6516, `check_cfs_rq_runtime` l.6553, `pick_task_fair`
//! l.8956-8981, `can_migrate_task` l.9489) and still throttles whole hierarchies; it
//! differs where [`Era::V6_12`] says: a run queue throttled while empty starts its
//! `throttled_clock` only when an entity is enqueued on it (`enqueue_entity`,
//! l.5460-5473), so `throttled_time` counts only time with something waiting;
//! `set_delayed`/`clear_delayed` stop at a throttled run queue; and `pick_task_fair` checks
//! every level's runtime on its way down, where 6.1's `pick_next_task_fair` checks the
//! levels that had a current entity (here the previous task's path, whose levels its
//! `put_prev` checked already: the same run queues throttle either way). The task-based
//! throttle model that replaced hierarchy throttling after 6.12 (a task of a throttled
//! hierarchy leaves its run queue on its way back to user space, `task_throttle_setup_work`;
//! the "sched/fair: task based throttle model" series, in mainline from 6.18 — its
//! absence from 6.12.117 was checked here, the release it entered was not) is not
//! modelled.
//! Written from the specification; no kernel code is copied.
//!
//! What is modelled: the pool with its quota, period and burst (`runtime = min(runtime +
//! quota, quota + burst)` at each period, the burst statistics `nr_burst`/`burst_time` from
//! `runtime_snap`); the period timer on the grid of whole periods (`hrtimer_forward_now`
//! from expiry 0), going idle after a period in which no run queue asked for runtime and
//! restarted by the next request; per-CPU slices of `sched_cfs_bandwidth_slice_us` (the
//! `cfs_bandwidth_slice_us` tunable) taken at each level's `update_curr`, a reschedule when
//! a slice runs out and the pool is empty; throttling at `put_prev` (each level, from the
//! task up), at the pick (each level on the way down) and when an entity is enqueued on an
//! empty run queue without runtime; unthrottling by the period timer in the order the run
//! queues throttled (`distribute_cfs_runtime`, each given its debt plus 1 ns), an idle CPU
//! then rescheduling; the slack timer (a run queue left empty returns all but
//! `min_cfs_rq_runtime` = 1 ms of its runtime; with throttled run queues waiting and more
//! than a slice in the pool, the pool is handed out `cfs_bandwidth_slack_period` = 5 ms
//! later unless the period ends within 2 ms of that); the hierarchy's throttle counts
//! (`throttle_count`: a throttled group's descendants are in a throttled hierarchy, which
//! wake-up preemption and the load balancer respect); `cpu.stat`'s `nr_periods`,
//! `nr_throttled`, `throttled_time`, `nr_bursts`, `burst_time`. Each level accounts its
//! own run queue's runtime, so a group below a limited group is held by both quotas.
//!
//! Simplifications: no PELT, so nothing is frozen while throttled (`throttled_clock_pelt`)
//! and the weights of the groups above a throttled or unthrottled run queue are
//! recomputed at their next `update_cfs_group`, as the kernel's are; the period timer
//! fires exactly at its expiry, so its overrun is always 1 and the "period too short"
//! doubling of `sched_cfs_period_timer` never happens; 6.12's remote unthrottles
//! (`unthrottle_cfs_rq_async`, an IPI) take effect at once; `cpu.idle` groups and the
//! per-run-queue `throttled_clock_self` (cgroup v2's `cpu.stat.local`) are not modelled;
//! the quota is the one the spec sets at the start (no writes during the run).

use super::group::{self, Deq, Enq, GroupClass, Hierarchy, RqId};
use crate::ctx::Ctx;
use crate::sched::{CfsBandwidthStats, FiredTimer};
use crate::types::{CpuId, GroupId, Time};
use schedlab_spec::model::CpuCgroup;

/// `sysctl_sched_cfs_bandwidth_slice` default (µs).
pub const DEFAULT_SLICE_US: u64 = 5_000;
/// `min_cfs_rq_runtime`: a run queue keeps this much when it returns runtime (ns).
pub const MIN_CFS_RQ_RUNTIME: u64 = 1_000_000;
/// `min_bandwidth_expiration`: no slack is handed out this close to a refill (ns).
pub const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// `cfs_bandwidth_slack_period`: how long returned runtime gathers before it is handed
/// out (ns).
pub const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

/// Timer tokens: the group in the high bits, which timer in the lowest.
const PERIOD_TIMER: u64 = 0;
const SLACK_TIMER: u64 = 1;

/// Which kernel's bookkeeping to follow where 6.1 and 6.12 differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// Linux 6.1 (`linux-cfs`).
    V6_1,
    /// Linux 6.12 (`linux-eevdf`).
    V6_12,
}

/// A group's pool (`struct cfs_bandwidth`).
#[derive(Clone, Debug, Default)]
struct Pool {
    /// `quota` (ns); `None` is RUNTIME_INF.
    quota: Option<u64>,
    period: u64,
    burst: u64,
    runtime: u64,
    runtime_snap: u64,
    /// No run queue took runtime since the last period (`idle`).
    idle: bool,
    period_active: bool,
    /// The period timer's expiry, kept while it is inactive (`hrtimer_forward_now`
    /// continues from it).
    expires: Time,
    slack_started: bool,
    /// `throttled_cfs_rq`, in the order the run queues throttled.
    throttled: Vec<RqId>,
    /// `tg_set_cfs_bandwidth` is still to run (it needs a context to start the timer).
    setup_pending: bool,
    stats: CfsBandwidthStats,
}

/// A run queue's bandwidth state (the `CONFIG_CFS_BANDWIDTH` fields of `struct cfs_rq`).
#[derive(Clone, Copy, Debug, Default)]
struct RqBw {
    runtime_enabled: bool,
    runtime_remaining: i64,
    throttled: bool,
    /// Throttled ancestors, itself included (`throttle_count`).
    throttle_count: u32,
    /// When it was throttled (`throttled_clock`), if that clock runs.
    throttled_clock: Option<Time>,
}

/// The bandwidth state of every group and run queue of a fair class (ids as in
/// [`Hierarchy`]). Kept inside the hierarchy so that its walks see throttled run queues.
#[derive(Clone, Debug)]
pub struct Bandwidth {
    era: Era,
    nr_cpus: u32,
    /// `sched_cfs_bandwidth_slice()` (ns).
    slice_ns: u64,
    pools: Vec<Pool>,
    rqs: Vec<RqBw>,
    parent: Vec<Option<GroupId>>,
    /// Some group has a quota (`cfs_bandwidth_used()`): everything else is skipped
    /// while none has.
    used: bool,
    /// Some group's `tg_set_cfs_bandwidth` is still to run.
    setup_pending: bool,
}

impl Bandwidth {
    /// No groups yet (the root group is added by the hierarchy).
    pub fn new(nr_cpus: usize) -> Bandwidth {
        Bandwidth {
            era: Era::V6_1,
            nr_cpus: nr_cpus as u32,
            slice_ns: DEFAULT_SLICE_US * 1000,
            pools: Vec::new(),
            rqs: Vec::new(),
            parent: Vec::new(),
            used: false,
            setup_pending: false,
        }
    }

    pub fn set_era(&mut self, era: Era) {
        self.era = era;
    }

    /// `sysctl_sched_cfs_bandwidth_slice` (µs).
    pub fn set_slice_us(&mut self, us: u64) {
        self.slice_ns = us * 1000;
    }

    /// Add the next group with its settings (the root's quota is always unlimited).
    pub(super) fn add_group(&mut self, cpu: &CpuCgroup, parent: Option<GroupId>) {
        let quota = cpu
            .cfs_quota_us
            .filter(|&q| q >= 0 && parent.is_some())
            .map(|q| q as u64 * 1000);
        let period = cpu
            .cfs_period_us
            .unwrap_or(schedlab_spec::model::DEFAULT_CFS_PERIOD_US)
            * 1000;
        let burst = cpu.cfs_burst_us.unwrap_or(0) * 1000;
        let room = if quota.is_some() {
            self.nr_cpus as usize
        } else {
            0
        };
        self.pools.push(Pool {
            quota,
            period,
            burst,
            throttled: Vec::with_capacity(room),
            setup_pending: quota.is_some(),
            ..Pool::default()
        });
        self.parent.push(parent);
        let rq = RqBw {
            runtime_enabled: quota.is_some(),
            ..RqBw::default()
        };
        self.rqs
            .extend(std::iter::repeat_n(rq, self.nr_cpus as usize));
        if quota.is_some() {
            self.used = true;
            self.setup_pending = true;
        }
    }

    /// `tg_set_cfs_bandwidth` of every group with a quota not set up yet: the pool is
    /// filled and the period timer started. Called from the first hooks of a run.
    #[inline]
    pub fn setup(&mut self, ctx: &mut Ctx) {
        if self.setup_pending {
            self.setup_groups(ctx);
        }
    }

    #[cold]
    fn setup_groups(&mut self, ctx: &mut Ctx) {
        self.setup_pending = false;
        for g in 0..self.pools.len() {
            if std::mem::take(&mut self.pools[g].setup_pending) {
                self.refill(g);
                self.start(ctx, g);
            }
        }
    }

    /// Is CFS bandwidth in use at all (`cfs_bandwidth_used`)?
    #[inline]
    pub fn used(&self) -> bool {
        self.used
    }

    #[inline]
    fn group_of(&self, rq: RqId) -> usize {
        (rq.0 / self.nr_cpus) as usize
    }

    #[inline]
    fn cpu_of(&self, rq: RqId) -> CpuId {
        CpuId(rq.0 % self.nr_cpus)
    }

    /// `cfs_rq_throttled`.
    #[inline]
    pub fn throttled(&self, rq: RqId) -> bool {
        self.used && self.rqs[rq.idx()].throttled
    }

    /// `throttled_hierarchy`: `rq` or an ancestor is throttled.
    #[inline]
    pub fn throttled_hierarchy(&self, rq: RqId) -> bool {
        self.used && self.rqs[rq.idx()].throttle_count > 0
    }

    /// `throttled_lb_pair`: group `g` is in a throttled hierarchy on either CPU.
    pub fn throttled_lb_pair(&self, g: GroupId, src: CpuId, dst: CpuId) -> bool {
        if !self.used {
            return false;
        }
        let rq = |c: CpuId| RqId(g * self.nr_cpus + c.0);
        self.throttled_hierarchy(rq(src)) || self.throttled_hierarchy(rq(dst))
    }

    /// Group `g`'s `cpu.stat` counters, if it has a quota.
    pub fn stats(&self, g: GroupId) -> Option<CfsBandwidthStats> {
        let p = self.pools.get(g as usize)?;
        p.quota.map(|_| p.stats)
    }

    /// `__refill_cfs_bandwidth_runtime`.
    fn refill(&mut self, g: usize) {
        let p = &mut self.pools[g];
        let Some(quota) = p.quota else { return };
        p.runtime += quota;
        if p.runtime_snap > p.runtime {
            p.stats.burst_time_ns += p.runtime_snap - p.runtime;
            p.stats.nr_bursts += 1;
        }
        p.runtime = p.runtime.min(quota + p.burst);
        p.runtime_snap = p.runtime;
    }

    /// `start_cfs_bandwidth`: (re)arm the period timer at the next period boundary
    /// after now (`hrtimer_forward_now` from its last expiry).
    fn start(&mut self, ctx: &mut Ctx, g: usize) {
        let p = &mut self.pools[g];
        if p.period_active {
            return;
        }
        p.period_active = true;
        let now = ctx.now();
        if now >= p.expires {
            p.expires += ((now - p.expires) / p.period + 1) * p.period;
        }
        ctx.arm_timer(p.expires, (g as u64) << 1 | PERIOD_TIMER);
    }

    /// `__assign_cfs_rq_runtime(cfs_b, cfs_rq, target)`: top `rq` up to `target` from
    /// its group's pool; true if it has runtime left.
    fn assign(&mut self, ctx: &mut Ctx, rq: RqId, target: u64) -> bool {
        let g = self.group_of(rq);
        let min_amount = (target as i64 - self.rqs[rq.idx()].runtime_remaining).max(0) as u64;
        let amount = match self.pools[g].quota {
            None => min_amount,
            Some(_) => {
                self.start(ctx, g);
                let p = &mut self.pools[g];
                if p.runtime > 0 {
                    let amount = p.runtime.min(min_amount);
                    p.runtime -= amount;
                    p.idle = false;
                    amount
                } else {
                    0
                }
            }
        };
        let r = &mut self.rqs[rq.idx()];
        r.runtime_remaining += amount as i64;
        r.runtime_remaining > 0
    }

    /// `account_cfs_rq_runtime(cfs_rq, delta)`: charge `rq` for `delta` ns its current
    /// entity ran (`has_curr`); when its runtime is spent and no more can be had, its
    /// CPU reschedules so that the hierarchy is throttled at `put_prev`.
    #[inline]
    pub fn account(&mut self, ctx: &mut Ctx, rq: RqId, delta: u64, has_curr: bool) {
        if !self.used || !self.rqs[rq.idx()].runtime_enabled {
            return;
        }
        self.account_enabled(ctx, rq, delta, has_curr);
    }

    fn account_enabled(&mut self, ctx: &mut Ctx, rq: RqId, delta: u64, has_curr: bool) {
        let r = &mut self.rqs[rq.idx()];
        r.runtime_remaining -= delta as i64;
        if r.runtime_remaining > 0 || r.throttled {
            return;
        }
        if !self.assign(ctx, rq, self.slice_ns) && has_curr {
            ctx.resched(self.cpu_of(rq));
        }
    }

    /// `return_cfs_rq_runtime`: `rq` (with `nr_running` entities left) gives back all but
    /// `min_cfs_rq_runtime` of its runtime once it is empty; with throttled run queues
    /// waiting and more than a slice in the pool, the slack timer is started.
    #[inline]
    pub fn return_runtime(&mut self, ctx: &mut Ctx, rq: RqId, nr_running: u32) {
        if !self.used || !self.rqs[rq.idx()].runtime_enabled || nr_running > 0 {
            return;
        }
        let slack = self.rqs[rq.idx()].runtime_remaining - MIN_CFS_RQ_RUNTIME as i64;
        if slack <= 0 {
            return;
        }
        let g = self.group_of(rq);
        if self.pools[g].quota.is_some() {
            self.pools[g].runtime += slack as u64;
            let p = &self.pools[g];
            if p.runtime > self.slice_ns && !p.throttled.is_empty() {
                self.start_slack(ctx, g);
            }
        }
        self.rqs[rq.idx()].runtime_remaining -= slack;
    }

    /// `runtime_refresh_within`: the period timer expires within `min_expire` (an
    /// inactive timer's last expiry is in the past).
    fn refresh_within(&self, now: Time, g: usize, min_expire: u64) -> bool {
        (self.pools[g].expires as i128 - now as i128) < min_expire as i128
    }

    /// `start_cfs_slack_bandwidth`.
    fn start_slack(&mut self, ctx: &mut Ctx, g: usize) {
        let min_left = CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION;
        if self.refresh_within(ctx.now(), g, min_left) || self.pools[g].slack_started {
            return;
        }
        self.pools[g].slack_started = true;
        ctx.arm_timer(
            ctx.now() + CFS_BANDWIDTH_SLACK_PERIOD,
            (g as u64) << 1 | SLACK_TIMER,
        );
    }

    /// `tg_throttle_down` (`down`) or `tg_unthrottle_up` over group `g` and its
    /// descendants on `cpu` (`walk_tg_tree_from`).
    fn walk_tree_from(&mut self, g: usize, cpu: CpuId, down: bool) {
        for d in g..self.pools.len() {
            if !self.is_descendant(d, g) {
                continue;
            }
            let r = &mut self.rqs[d * self.nr_cpus as usize + cpu.idx()];
            if down {
                r.throttle_count += 1;
            } else {
                r.throttle_count -= 1;
            }
        }
    }

    /// Is group `d` group `g` or below it? (Parents come before their children.)
    fn is_descendant(&self, mut d: usize, g: usize) -> bool {
        loop {
            if d == g {
                return true;
            }
            match self.parent[d] {
                Some(p) if p as usize >= g => d = p as usize,
                _ => return false,
            }
        }
    }

    /// A run queue is marked throttled, with its clock started where the era says.
    fn mark_throttled(&mut self, rq: RqId, now: Time, nr_running: u32) {
        let era = self.era;
        let r = &mut self.rqs[rq.idx()];
        r.throttled = true;
        if era == Era::V6_1 || nr_running > 0 {
            r.throttled_clock = Some(now);
        }
    }

    /// 6.12's `enqueue_entity`: the first entity enqueued on a throttled run queue starts
    /// its throttled clock if it was not running.
    pub(super) fn enqueued_first(&mut self, rq: RqId, now: Time) {
        if self.era == Era::V6_12 && self.throttled(rq) {
            let r = &mut self.rqs[rq.idx()];
            r.throttled_clock.get_or_insert(now);
        }
    }

    /// The throttled time of `rq` ends now (`unthrottle_cfs_rq`).
    fn end_throttled_time(&mut self, rq: RqId, now: Time) {
        let g = self.group_of(rq);
        let r = &mut self.rqs[rq.idx()];
        r.throttled = false;
        if let Some(since) = r.throttled_clock.take() {
            self.pools[g].stats.throttled_time_ns += now - since;
        }
        let list = &mut self.pools[g].throttled;
        if let Some(i) = list.iter().position(|&q| q == rq) {
            list.remove(i);
        }
    }
}

/// `check_cfs_rq_runtime`: throttle `rq` if it has no runtime left; true if it is (or
/// already was) throttled.
pub fn check_cfs_rq_runtime<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, rq: RqId) -> bool {
    let bw = &c.h().bw;
    if !bw.used {
        return false;
    }
    let r = bw.rqs[rq.idx()];
    if !r.runtime_enabled || r.runtime_remaining > 0 {
        return false;
    }
    if r.throttled {
        return true;
    }
    throttle_cfs_rq(c, ctx, rq)
}

/// `check_enqueue_throttle`: `rq` just got its first entity; if it is not running and
/// has no runtime left (after asking the pool), it is throttled at once.
pub fn check_enqueue_throttle<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, rq: RqId) {
    let h = c.h();
    if !h.bw.used || h.rq(rq).nr_running != 1 {
        return;
    }
    let r = h.bw.rqs[rq.idx()];
    if !r.runtime_enabled || h.rq(rq).curr.is_some() || r.throttled {
        return;
    }
    c.h_mut().bw.account(ctx, rq, 0, false);
    if c.h().bw.rqs[rq.idx()].runtime_remaining <= 0 {
        throttle_cfs_rq(c, ctx, rq);
    }
}

/// `dequeue_entity` followed by its `return_cfs_rq_runtime` of the run queue.
pub fn dequeue_entity<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    rq: RqId,
    e: group::Ent,
    how: Deq,
) -> bool {
    if !c.dequeue_entity(ctx, rq, e, how) {
        return false;
    }
    let nr = c.h().rq(rq).nr_running;
    c.h_mut().bw.return_runtime(ctx, rq, nr);
    true
}

/// `enqueue_entity` followed by its `check_enqueue_throttle` of the run queue (and 6.12's
/// throttled clock of a throttled one).
pub fn enqueue_entity<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    rq: RqId,
    e: group::Ent,
    how: Enq,
) {
    c.enqueue_entity(ctx, rq, e, how);
    if c.h().bw.used && c.h().rq(rq).nr_running == 1 {
        check_enqueue_throttle(c, ctx, rq);
        let now = ctx.now();
        c.h_mut().bw.enqueued_first(rq, now);
    }
}

/// The task counts of a run queue that move with it when it is throttled or unthrottled.
#[derive(Clone, Copy)]
struct Counts {
    nr: u32,
    idle: u32,
    delayed: u32,
    delayed_idle: u32,
}

impl Counts {
    fn of(h: &Hierarchy, rq: RqId) -> Counts {
        let r = h.rq(rq);
        Counts {
            nr: r.h_nr_running,
            idle: r.h_nr_idle,
            delayed: r.h_nr_delayed,
            delayed_idle: r.h_nr_delayed_idle,
        }
    }

    fn sub_from(self, h: &mut Hierarchy, rq: RqId) {
        let r = h.rq_mut(rq);
        r.h_nr_running -= self.nr;
        r.h_nr_idle -= self.idle;
        r.h_nr_delayed -= self.delayed;
        r.h_nr_delayed_idle -= self.delayed_idle;
    }

    fn add_to(self, h: &mut Hierarchy, rq: RqId) {
        let r = h.rq_mut(rq);
        r.h_nr_running += self.nr;
        r.h_nr_idle += self.idle;
        r.h_nr_delayed += self.delayed;
        r.h_nr_delayed_idle += self.delayed_idle;
    }
}

/// `throttle_cfs_rq`: unless the pool still has 1 ns for it, `rq` joins its group's
/// throttled list, its group and every group below on its CPU count one more throttled
/// ancestor, and its group entity leaves the parent's run queue, with each ancestor whose
/// run queue it leaves empty (as sleeps); its tasks stop counting above it.
pub fn throttle_cfs_rq<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, rq: RqId) -> bool {
    if c.h_mut().bw.assign(ctx, rq, 1) {
        return false;
    }
    let (g, cpu) = (c.h().group_of(rq), c.h().cpu_of(rq));
    let bw = &mut c.h_mut().bw;
    bw.pools[g as usize].throttled.push(rq);
    bw.walk_tree_from(g as usize, cpu, true);
    let counts = Counts::of(c.h(), rq);
    let mut at = c.h().owner(rq);
    let mut reached_root = true;
    // Dequeue the group entity and each ancestor whose run queue it leaves empty.
    while let Some(se) = at {
        if !c.h().on_rq(se) {
            reached_root = false;
            break;
        }
        let q = c.h().rq_of(se);
        dequeue_entity(c, ctx, q, se, Deq::Sleep);
        counts.sub_from(c.h_mut(), q);
        at = c.h().owner(q);
        if c.h().rq(q).load > 0 {
            break;
        }
    }
    // The ancestors still queued stop counting the tasks.
    while reached_root {
        let Some(se) = at else { break };
        if !c.h().on_rq(se) {
            reached_root = false;
            break;
        }
        let q = c.h().rq_of(se);
        counts.sub_from(c.h_mut(), q);
        at = c.h().owner(q);
    }
    if reached_root {
        c.h_mut().add_queued_tasks(-(counts.nr as i32));
    }
    let nr = c.h().rq(rq).nr_running;
    c.h_mut().bw.mark_throttled(rq, ctx.now(), nr);
    true
}

/// `unthrottle_cfs_rq`: `rq` leaves the throttled list (its throttled time is counted),
/// the hierarchy below counts one throttled ancestor less, and its group entity is
/// enqueued again (as a wake-up) with each ancestor that is not queued, up to a
/// throttled run queue; an idle CPU then reschedules.
pub fn unthrottle_cfs_rq<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, rq: RqId) {
    let (g, cpu) = (c.h().group_of(rq), c.h().cpu_of(rq));
    let now = ctx.now();
    let bw = &mut c.h_mut().bw;
    bw.end_throttled_time(rq, now);
    bw.walk_tree_from(g as usize, cpu, false);
    if c.h().rq(rq).load > 0 {
        enqueue_throttled_tasks(c, ctx, rq);
    }
    if ctx.curr(cpu).is_none() && c.h().rq(RqId::root(cpu)).nr_running > 0 {
        ctx.resched(cpu);
    }
}

/// The enqueue half of [`unthrottle_cfs_rq`] for a run queue that holds entities.
fn enqueue_throttled_tasks<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, rq: RqId) {
    let counts = Counts::of(c.h(), rq);
    let mut at = c.h().owner(rq);
    while let Some(se) = at {
        if c.h().on_rq(se) {
            break;
        }
        let q = c.h().rq_of(se);
        enqueue_entity(c, ctx, q, se, Enq::Wakeup);
        counts.add_to(c.h_mut(), q);
        if c.h().bw.throttled(q) {
            return;
        }
        at = c.h().owner(q);
    }
    while let Some(se) = at {
        let q = c.h().rq_of(se);
        counts.add_to(c.h_mut(), q);
        if c.h().bw.throttled(q) {
            return;
        }
        at = c.h().owner(q);
    }
    c.h_mut().add_queued_tasks(counts.nr as i32);
}

/// `distribute_cfs_runtime`: the throttled run queues of group `g`, in the order they
/// throttled, each get their debt plus 1 ns from the pool while it lasts, and those left
/// with runtime are unthrottled.
fn distribute<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, g: usize) {
    let mut i = 0;
    while let Some(&rq) = c.h().bw.pools[g].throttled.get(i) {
        let bw = &mut c.h_mut().bw;
        let want = (1 - bw.rqs[rq.idx()].runtime_remaining).max(0) as u64;
        let runtime = want.min(bw.pools[g].runtime);
        bw.pools[g].runtime -= runtime;
        bw.rqs[rq.idx()].runtime_remaining += runtime as i64;
        let remaining = bw.pools[g].runtime;
        if bw.rqs[rq.idx()].runtime_remaining > 0 {
            unthrottle_cfs_rq(c, ctx, rq);
        } else {
            i += 1;
        }
        if remaining == 0 {
            break;
        }
    }
}

/// `do_sched_cfs_period_timer` for one elapsed period: count it, refill, and hand the
/// pool to the throttled run queues; true when the timer goes idle (a period with
/// nothing throttled after one in which no runtime was taken).
fn period_elapsed<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, g: usize) -> bool {
    let bw = &mut c.h_mut().bw;
    if bw.pools[g].quota.is_none() {
        return true;
    }
    let throttled = !bw.pools[g].throttled.is_empty();
    bw.pools[g].stats.nr_periods += 1;
    bw.refill(g);
    let p = &mut bw.pools[g];
    if p.idle && !throttled {
        return true;
    }
    if !throttled {
        p.idle = true;
        return false;
    }
    p.stats.nr_throttled += 1;
    while !c.h().bw.pools[g].throttled.is_empty() && c.h().bw.pools[g].runtime > 0 {
        distribute(c, ctx, g);
    }
    c.h_mut().bw.pools[g].idle = false;
    false
}

/// A bandwidth timer of this class fired (`sched_cfs_period_timer`,
/// `sched_cfs_slack_timer`).
pub fn timer<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, fired: FiredTimer) {
    let g = (fired.token >> 1) as usize;
    if fired.token & 1 == PERIOD_TIMER {
        let period = c.h().bw.pools[g].period;
        c.h_mut().bw.pools[g].expires += period;
        let idle = period_elapsed(c, ctx, g);
        let p = &mut c.h_mut().bw.pools[g];
        if idle {
            p.period_active = false;
        } else {
            let at = p.expires;
            ctx.arm_timer(at, fired.token);
        }
    } else {
        slack_timer(c, ctx, g);
    }
}

/// `do_sched_cfs_slack_timer`: hand out returned runtime unless a refill is near.
fn slack_timer<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, g: usize) {
    let bw = &mut c.h_mut().bw;
    bw.pools[g].slack_started = false;
    if bw.refresh_within(ctx.now(), g, MIN_BANDWIDTH_EXPIRATION) {
        return;
    }
    let p = &bw.pools[g];
    if p.quota.is_some() && p.runtime > bw.slice_ns {
        distribute(c, ctx, g);
    }
}

impl Hierarchy {
    /// The bookkeeping of bandwidth (for tests): a run queue is on its group's throttled
    /// list exactly when it is throttled, once; each run queue's throttle count is the
    /// number of throttled run queues on its path to the root, itself included.
    #[doc(hidden)]
    pub fn check_bandwidth(&self) -> Result<(), String> {
        let bw = &self.bw;
        for (i, r) in bw.rqs.iter().enumerate() {
            let rq = RqId(i as u32);
            let listed = bw.pools[bw.group_of(rq)]
                .throttled
                .iter()
                .filter(|&&q| q == rq)
                .count();
            if listed != usize::from(r.throttled) {
                return Err(format!(
                    "{rq:?} throttled {} but listed {listed} times",
                    r.throttled
                ));
            }
            let mut count = 0;
            let mut at = Some(rq);
            while let Some(q) = at {
                count += u32::from(bw.rqs[q.idx()].throttled);
                at = self.owner(q).map(|ge| self.rq_of(ge));
            }
            if count != r.throttle_count {
                return Err(format!(
                    "{rq:?} throttle_count {} with {count} throttled on its path",
                    r.throttle_count
                ));
            }
        }
        Ok(())
    }
}

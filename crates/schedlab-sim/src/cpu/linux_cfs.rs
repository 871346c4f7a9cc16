//! Linux CFS (the pre-EEVDF Completely Fair Scheduler, ~v5.4–v5.7) as a scheduling class,
//! and the `linux-cfs` policy: `Stacked<LinuxRt, LinuxCfs>` (rt > fair).
//!
//! Primary source: torvalds/linux `kernel/sched/fair.c`, stored revision 00061968 (a
//! v5.7-era copy read through the reference index; the CFS core below is unchanged from
//! v5.4): tunables and `get_update_sysctl_factor`/`update_sysctl` (file top),
//! `__update_inv_weight`/`__calc_delta`, `calc_delta_fair`, `__sched_period`,
//! `sched_slice`, `sched_vslice`, `update_curr`, `update_min_vruntime`, `__enqueue_entity`
//! (ties go right), `place_entity`, `enqueue_entity`/`dequeue_entity` (min_vruntime
//! normalisation), `check_preempt_tick`, `set_next_entity`, `pick_next_entity` (skip/last/
//! next buddies), `put_prev_entity`, `entity_tick`, `wakeup_gran`,
//! `wakeup_preempt_entity`, `check_preempt_wakeup`, `yield_task_fair`,
//! `migrate_task_rq_fair`, `task_fork_fair`, `prio_changed_fair`, and for group
//! scheduling `sched_slice` (the slice scaled by each level's weight share),
//! `set_next_buddy`/`set_last_buddy`/`set_skip_buddy` and `clear_buddies` (up the
//! hierarchy), `check_preempt_wakeup` (`find_matching_se`), `reweight_entity`,
//! `task_move_group_fair` (`detach_task_cfs_rq`/`attach_task_cfs_rq`,
//! `vruntime_normalized`); weights from
//! `kernel/sched/core.c` `sched_prio_to_weight` / `sched_prio_to_wmult` and
//! `set_load_weight` (SCHED_IDLE: `WEIGHT_IDLEPRIO` = 3, `WMULT_IDLEPRIO`), in
//! `cpu/fair/weights.rs`; features from `kernel/sched/features.h`; placement and load
//! balancing in `cpu/fair/` (cited there) with the v5.4 `sd_init` constants of
//! `kernel/sched/topology.c` (`min_interval = sd_weight`, `busy_factor = 32`,
//! `imbalance_pct` 110 SMT / 117 LLC / 125 above, `cache_nice_tries = 1`).
//! Written from the specification; no kernel code is copied.
//!
//! What is modelled exactly: the nice→weight/wmult tables; `__calc_delta`'s 32-bit
//! fixed-point arithmetic (so vruntime rounding matches the kernel bit for bit); the
//! period/slice/vslice formulas with the tunables scaled by `1 + ilog2(min(ncpus, 8))`;
//! vruntime and a monotonic min_vruntime; the timeline ordered by (vruntime, insertion
//! order) with the running entity kept out of it; START_DEBIT and GENTLE_FAIR_SLEEPERS
//! placement that never moves an entity backwards; tick preemption; wake-up preemption
//! with the wakee-weighted granularity, SCHED_BATCH/SCHED_IDLE rules and the last/next
//! buddies; yield through the skip buddy; fork (`task_fork_fair`, child_runs_first);
//! vruntime renormalisation whenever a task changes CPU.
//!
//! SMP: placement (`select_task_rq_fair`: wake_affine, select_idle_sibling with the idle-core
//! search on SMT, find_idlest_cpu for forks) and load balancing over the scheduling domains
//! of the machine's topology (`rebalance_domains` per level at its interval,
//! `find_busiest_group`/`find_busiest_queue`, `detach_tasks` with `task_hot` — a task that
//! ran within `sched_migration_cost_ns`, or a next/last buddy, is cache-hot —, the newidle
//! balance, the NO_HZ idle balance) are the fair classes' shared code in `cpu/fair/`,
//! with v5.4's `sd_init` constants (busy_factor 32, imbalance_pct 125 above the LLC). That
//! code follows the v5.5 rewrite of the load balancer (group and migration types) that
//! the 6.x kernels keep, not v5.4's `find_busiest_group`; see `cpu/fair/mod.rs` for what
//! it leaves out (PELT, active balance).
//!
//! Group scheduling (CONFIG_FAIR_GROUP_SCHED) is the fair classes' shared code in
//! `cpu/fair/group.rs` (the tree of run queues, the hierarchical enqueue, dequeue, pick,
//! put, tick and `update_curr`, `calc_group_shares`, `task_h_load`; cited there); this
//! file gives it CFS's per-level operations: a group entity has a vruntime on its parent's
//! run queue like a task, and is placed with the sleeper credit when its group becomes
//! runnable again (the walk enqueues ancestors as wake-ups); a task sleeping within a
//! still-busy group makes the group's entity next buddy; tick preemption
//! (`check_preempt_tick`) runs on every level with that level's slice; wake-up preemption
//! compares the two tasks' ancestors that share a run queue; yield marks the task and its
//! ancestors as skip buddies; a task moved to another group while asleep gets its old run
//! queue's sleeper credit and keeps its place relative to min_vruntime in the new one.
//!
//! CFS bandwidth (`cpu.cfs_quota_us`, `cpu.max`) is the fair classes' shared code in
//! `cpu/fair/bandwidth.rs`, following Linux 6.1's (cited there; bandwidth burst came with
//! 5.14, after the v5.4 CFS core modelled here): each level's `update_curr` charges its
//! run queue's runtime, `put_prev` throttles a level that has none left, and the
//! period timer (this class's policy timer) refills the pool and unthrottles.
//!
//! Simplifications elsewhere:
//! - No PELT: "load" is the instantaneous sum of queued weights
//!   (`cfs_rq->load.weight`), not `load_avg` (see `cpu/fair/group.rs` for what this
//!   means for group weights).
//! - `check_preempt_wakeup`'s "curr already has TIF_NEED_RESCHED" early exit is not
//!   modelled (the context does not expose pending reschedules).
//!
//! Complexity: the timeline is an indexed binary min-heap preallocated per CPU
//! (allocation-free once grown): enqueue/dequeue/pick O(log n), leftmost and the second
//! entity (skip buddy) O(1); select_cpu O(CPUs); a balance pass O(CPUs + tasks on the
//! busiest CPU) per domain.

use crate::ctx::Ctx;
use crate::sched::{
    BalanceKind, CfsBandwidthStats, DequeueKind, EnqueueKind, Feature, FiredTimer, PolicyInfo,
    Scheduler, WakeKind,
};
use crate::topology::SdEra;
use crate::types::{CpuId, GroupId, Policy, SchedAttrs, TaskId};

use super::fair::bandwidth;
use super::fair::group::{self, Deq, Enq, Ent, GroupClass, Hierarchy, RqId};
use super::fair::{FairParams, FairRq, FairSmp, Scaled, SmpSlot};
use super::linux_rt::LinuxRt;
use super::stack::{SchedClass, StackMeta, Stacked};
use super::tunables::{self, Tunable};

pub use super::fair::weights::{
    calc_delta, calc_delta_fair, sysctl_factor, weight_of, NICE_0_LOAD, SCHED_PRIO_TO_WEIGHT,
    SCHED_PRIO_TO_WMULT, WEIGHT_IDLEPRIO, WMULT_IDLEPRIO,
};

// ------------------------------------------------------------------------------ tunables

/// CFS tunables (sysctls and sched features), effective values.
#[derive(Clone, Debug)]
pub struct CfsTunables {
    /// `sysctl_sched_latency` (ns).
    pub latency: u64,
    /// `sysctl_sched_min_granularity` (ns).
    pub min_granularity: u64,
    /// `sysctl_sched_wakeup_granularity` (ns).
    pub wakeup_granularity: u64,
    /// `sched_nr_latency` = ceil(latency / min_granularity).
    pub nr_latency: u64,
    pub child_runs_first: bool,
    pub gentle_fair_sleepers: bool,
    pub start_debit: bool,
    pub next_buddy: bool,
    pub last_buddy: bool,
    pub cache_hot_buddy: bool,
    pub wakeup_preemption: bool,
}

/// CFS's settings as written (`--param`); [`CfsTunables`] holds the effective values.
#[derive(Clone, Debug)]
pub struct CfsParams {
    pub latency: Scaled,
    pub min_granularity: Scaled,
    pub wakeup_granularity: Scaled,
    pub child_runs_first: bool,
    pub gentle_fair_sleepers: bool,
    pub start_debit: bool,
    pub next_buddy: bool,
    pub last_buddy: bool,
    pub cache_hot_buddy: bool,
    pub fair: FairParams,
}

impl Default for CfsParams {
    /// v5.4 defaults: fair.c `normalized_sysctl_*`, features.h.
    fn default() -> Self {
        CfsParams {
            latency: Scaled::normalized(6_000_000),
            min_granularity: Scaled::normalized(750_000),
            wakeup_granularity: Scaled::normalized(1_000_000),
            child_runs_first: false,
            gentle_fair_sleepers: true,
            start_debit: true,
            next_buddy: false,
            last_buddy: true,
            cache_hot_buddy: true,
            fair: FairParams::default(),
        }
    }
}

/// CFS's tunables table.
fn tunables() -> Vec<Tunable<CfsParams>> {
    let mut rows: Vec<Tunable<CfsParams>> = vec![
        Tunable::ns(
            "sched_latency_ns",
            "targeted preemption latency (sysctl_sched_latency); the default is scaled by \
             sched_tunable_scaling (×(1+ilog2(min(ncpus,8))), e.g. 24000000 on 8+ CPUs); \
             a value set here is used as is, like writing the sysctl",
            1,
            |p| &mut p.latency,
        ),
        Tunable::ns(
            "sched_min_granularity_ns",
            "minimal preemption granularity (sysctl_sched_min_granularity), scaled like \
             sched_latency_ns; sched_nr_latency = ceil(latency / min_granularity)",
            1,
            |p| &mut p.min_granularity,
        ),
        Tunable::ns(
            "sched_wakeup_granularity_ns",
            "wake-up preemption granularity (sysctl_sched_wakeup_granularity), scaled like \
             sched_latency_ns, converted to the wakee's virtual time",
            0,
            |p| &mut p.wakeup_granularity,
        ),
        Tunable::flag(
            "sched_child_runs_first",
            "1: a forked child gets the parent's place if it is ahead (task_fork_fair)",
            |p| &mut p.child_runs_first,
        ),
        Tunable::flag(
            "gentle_fair_sleepers",
            "feature GENTLE_FAIR_SLEEPERS: waking tasks are placed at min_vruntime - \
             latency/2 instead of - latency",
            |p| &mut p.gentle_fair_sleepers,
        ),
        Tunable::flag(
            "start_debit",
            "feature START_DEBIT: new tasks start one vslice after min_vruntime",
            |p| &mut p.start_debit,
        ),
        Tunable::flag(
            "next_buddy",
            "feature NEXT_BUDDY: prefer the last woken task at the next pick",
            |p| &mut p.next_buddy,
        ),
        Tunable::flag(
            "last_buddy",
            "feature LAST_BUDDY: prefer to return the CPU to a wake-up-preempted task",
            |p| &mut p.last_buddy,
        ),
        Tunable::flag(
            "cache_hot_buddy",
            "feature CACHE_HOT_BUDDY: next/last buddies count as cache-hot for balancing",
            |p| &mut p.cache_hot_buddy,
        ),
    ];
    rows.extend(
        FairParams::tunables()
            .into_iter()
            .map(|r| r.lift(|p: &mut CfsParams| &mut p.fair)),
    );
    rows
}

// ------------------------------------------------------------------------------ timeline

const NIL: u32 = u32::MAX;
/// `exec_start` of a task that never ran here or just migrated (never cache-hot).
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    vr: i64,
    seq: u64,
    e: Ent,
}

impl Node {
    /// `entity_before`, with insertion order breaking ties (equal keys go right).
    #[inline]
    fn before(&self, o: &Node) -> bool {
        (self.vr, self.seq) < (o.vr, o.seq)
    }
}

/// The rb-tree equivalent: an indexed binary min-heap on (vruntime, insertion sequence).
/// Positions live in a table shared by all run queues (an entity is on at most one
/// timeline).
#[derive(Clone, Default)]
struct Timeline {
    h: Vec<Node>,
}

impl Timeline {
    /// The leftmost entity (`__pick_first_entity`).
    #[inline]
    fn first(&self) -> Option<Node> {
        self.h.first().copied()
    }

    /// The entity after the leftmost (`__pick_next_entity(leftmost)`).
    #[inline]
    fn second(&self) -> Option<Node> {
        match (self.h.get(1), self.h.get(2)) {
            (Some(a), Some(b)) => Some(if a.before(b) { *a } else { *b }),
            (Some(a), None) => Some(*a),
            _ => None,
        }
    }

    fn insert(&mut self, pos: &mut [u32], n: Node) -> u64 {
        let i = self.h.len();
        self.h.push(n);
        pos[n.e.idx()] = i as u32;
        self.up(pos, i)
    }

    fn remove(&mut self, pos: &mut [u32], e: Ent) -> u64 {
        let i = pos[e.idx()] as usize;
        debug_assert!(
            i < self.h.len() && self.h[i].e == e,
            "{e:?} not on this timeline"
        );
        let last = self.h.len() - 1;
        self.h.swap(i, last);
        self.h.pop();
        pos[e.idx()] = NIL;
        if i < self.h.len() {
            pos[self.h[i].e.idx()] = i as u32;
            self.up(pos, i) + self.down(pos, i)
        } else {
            1
        }
    }

    fn up(&mut self, pos: &mut [u32], mut i: usize) -> u64 {
        let mut steps = 1;
        while i > 0 {
            let p = (i - 1) / 2;
            if !self.h[i].before(&self.h[p]) {
                break;
            }
            self.h.swap(i, p);
            pos[self.h[i].e.idx()] = i as u32;
            pos[self.h[p].e.idx()] = p as u32;
            i = p;
            steps += 1;
        }
        steps
    }

    fn down(&mut self, pos: &mut [u32], mut i: usize) -> u64 {
        let n = self.h.len();
        let mut steps = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.h[r].before(&self.h[l]) {
                r
            } else {
                l
            };
            if !self.h[c].before(&self.h[i]) {
                break;
            }
            self.h.swap(i, c);
            pos[self.h[i].e.idx()] = i as u32;
            pos[self.h[c].e.idx()] = c as u32;
            i = c;
            steps += 1;
        }
        steps
    }
}

// ------------------------------------------------------------------------------ state

/// How an entity's stored vruntime is to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Norm {
    /// Absolute on its run queue (`cfs_rq_of`: queued, or asleep after DEQUEUE_SLEEP).
    Abs,
    /// Relative to min_vruntime (after a non-sleep dequeue, fork, or a class switch).
    Rel,
    /// A start-up task that has not been placed yet (placed with START_DEBIT on its
    /// first enqueue, as `task_fork_fair` would on the CPU it starts on).
    Fresh,
}

/// Per-entity CFS state (`struct sched_entity`; weight, `on_rq` and `cfs_rq_of` are in
/// the shared [`Hierarchy`]).
#[derive(Clone, Copy, Debug)]
struct Se {
    vruntime: i64,
    norm: Norm,
    sum_exec: u64,
    prev_sum_exec: u64,
    /// Last time it was accounted while running (`exec_start`), NEVER if cold.
    exec_start: u64,
    idle_policy: bool,
    normal_policy: bool,
    /// Enqueued by wake_up_new_task and not yet checked for preemption (WF_FORK).
    fork_wake: bool,
}

impl Default for Se {
    fn default() -> Self {
        Se {
            vruntime: 0,
            norm: Norm::Abs,
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: NEVER,
            idle_policy: false,
            normal_policy: true,
            fork_wake: false,
        }
    }
}

/// Per-run-queue CFS state (`struct cfs_rq`; counts, load and `curr` are in the shared
/// [`Hierarchy`]).
#[derive(Clone, Default)]
struct CfsRq {
    tl: Timeline,
    min_vruntime: i64,
    next: Option<Ent>,
    last: Option<Ent>,
    skip: Option<Ent>,
}

/// The CFS class (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE).
pub struct LinuxCfs {
    h: Hierarchy,
    rqs: Vec<CfsRq>,
    se: Vec<Se>,
    /// Timeline positions, indexed by entity.
    hpos: Vec<u32>,
    seq: u64,
    nr_cpus: usize,
    params: CfsParams,
    tun: CfsTunables,
    /// Placement and load balancing (shared with EEVDF), with v5.4's `sd_init`.
    smp: SmpSlot,
}

impl LinuxCfs {
    /// A fair class for a machine with `nr_cpus` CPUs (the tunables are scaled for it).
    pub fn new(nr_cpus: usize) -> Self {
        let nr_cpus = nr_cpus.max(1);
        let mut s = LinuxCfs {
            h: Hierarchy::new(nr_cpus),
            rqs: vec![CfsRq::default(); nr_cpus],
            se: Vec::new(),
            hpos: Vec::new(),
            seq: 0,
            nr_cpus,
            params: CfsParams::default(),
            tun: CfsTunables {
                latency: 0,
                min_granularity: 0,
                wakeup_granularity: 0,
                nr_latency: 8,
                child_runs_first: false,
                gentle_fair_sleepers: false,
                start_debit: false,
                next_buddy: false,
                last_buddy: false,
                cache_hot_buddy: false,
                wakeup_preemption: false,
            },
            smp: SmpSlot::new(FairSmp::new(SdEra::V5_4)),
        };
        s.update_sysctl();
        s
    }

    /// `update_sysctl`: effective values from the settings (explicit ones or scaled
    /// defaults).
    fn update_sysctl(&mut self) {
        let p = &self.params;
        let f = sysctl_factor(self.nr_cpus, p.fair.scaling.value());
        let latency = p.latency.effective(f);
        let min_granularity = p.min_granularity.effective(f);
        self.tun = CfsTunables {
            latency,
            min_granularity,
            wakeup_granularity: p.wakeup_granularity.effective(f),
            nr_latency: latency.div_ceil(min_granularity).max(1),
            child_runs_first: p.child_runs_first,
            gentle_fair_sleepers: p.gentle_fair_sleepers,
            start_debit: p.start_debit,
            next_buddy: p.next_buddy,
            last_buddy: p.last_buddy,
            cache_hot_buddy: p.cache_hot_buddy,
            wakeup_preemption: p.fair.wakeup_preemption,
        };
        self.h.bw.set_slice_us(p.fair.cfs_bandwidth_slice_us);
        self.smp.get_mut().set_params(p.fair.clone());
    }

    /// The effective tunables.
    pub fn tunables(&self) -> &CfsTunables {
        &self.tun
    }

    /// The tree of task groups and run queues.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.h
    }

    /// `__sched_period(nr_running)`.
    pub fn sched_period(&self, nr_running: u64) -> u64 {
        if nr_running > self.tun.nr_latency {
            nr_running * self.tun.min_granularity
        } else {
            self.tun.latency
        }
    }

    /// `sched_slice(cfs_rq_of(se), se)`: the period of its run queue (one more entity if
    /// it is not queued), scaled by its weight's share of each level's load on the way up
    /// (an entity that is not queued counted in).
    fn sched_slice(&self, e: Ent) -> u64 {
        let rq = self.h.rq_of(e);
        let nr = self.h.rq(rq).nr_running as u64 + u64::from(!self.h.on_rq(e));
        let mut slice = self.sched_period(nr);
        for (q, x) in self.h.levels(e) {
            let w = self.h.weight(x) as u64;
            let mut load = self.h.rq(q).load;
            if !self.h.on_rq(x) {
                load += w;
            }
            slice = calc_delta(slice, w, load, 0);
        }
        slice
    }

    /// `sched_vslice`.
    fn sched_vslice(&self, e: Ent) -> u64 {
        let c = &self.h.ents[e.idx()];
        calc_delta_fair(self.sched_slice(e), c.weight, c.inv_weight)
    }

    /// A task's `sched_slice` in its run queue.
    pub fn task_slice(&self, t: TaskId) -> u64 {
        self.sched_slice(Ent::task(t))
    }

    /// A task's vruntime as stored (absolute if queued or asleep, relative to its run
    /// queue's min_vruntime otherwise).
    pub fn vruntime(&self, t: TaskId) -> i64 {
        self.se.get(Ent::task(t).idx()).map_or(0, |s| s.vruntime)
    }

    /// An entity's vruntime as stored.
    pub fn ent_vruntime(&self, e: Ent) -> i64 {
        self.se.get(e.idx()).map_or(0, |s| s.vruntime)
    }

    /// `cfs_rq->min_vruntime` of a run queue.
    pub fn min_vruntime(&self, rq: RqId) -> i64 {
        self.rqs[rq.idx()].min_vruntime
    }

    /// The running fair task of `cpu` (the leaf of the `cfs_rq->curr` chain).
    pub fn cfs_curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.h.curr_task(cpu)
    }

    /// The entities queued on a run queue, in pick order (leftmost first), the running
    /// one excluded.
    pub fn timeline(&self, rq: RqId) -> Vec<(i64, Ent)> {
        let mut v: Vec<Node> = self.rqs[rq.idx()].tl.h.clone();
        v.sort_by_key(|n| (n.vr, n.seq));
        v.into_iter().map(|n| (n.vr, n.e)).collect()
    }

    /// The (skip, last, next) buddies of a run queue.
    pub fn buddies(&self, rq: RqId) -> (Option<Ent>, Option<Ent>, Option<Ent>) {
        let r = &self.rqs[rq.idx()];
        (r.skip, r.last, r.next)
    }

    /// Room for `t` and for every group (allocates only when one is seen first).
    #[inline]
    fn ensure(&mut self, ctx: &Ctx, t: Option<TaskId>) {
        debug_assert_eq!(ctx.nr_cpus(), self.nr_cpus, "a class of another machine");
        if self.h.ensure(ctx, t) {
            self.grow();
        }
    }

    /// Size the class's tables to the hierarchy's.
    #[cold]
    fn grow(&mut self) {
        self.se.resize(self.h.nr_ents(), Se::default());
        self.hpos.resize(self.h.nr_ents(), NIL);
        self.rqs.resize(self.h.nr_rqs(), CfsRq::default());
    }

    /// Weight and policy flags from the task's attributes (`set_load_weight`), while it
    /// is not queued.
    fn refresh_weight(&mut self, ctx: &Ctx, t: TaskId) {
        let a = ctx.task(t).attrs;
        let (w, inv) = weight_of(&a);
        let e = Ent::task(t);
        self.h.set_weight(e, w, inv);
        let se = &mut self.se[e.idx()];
        se.idle_policy = a.policy == Policy::Idle;
        se.normal_policy = a.policy == Policy::Other;
    }

    fn tl_insert(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        self.seq += 1;
        let n = Node {
            vr: self.se[e.idx()].vruntime,
            seq: self.seq,
            e,
        };
        let w = self.rqs[rq.idx()].tl.insert(&mut self.hpos, n);
        ctx.count_work(w);
    }

    fn tl_remove(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        let w = self.rqs[rq.idx()].tl.remove(&mut self.hpos, e);
        ctx.count_work(w);
    }

    /// `update_min_vruntime`.
    fn update_min_vruntime(&mut self, rq: RqId) {
        let curr = self.h.rq(rq).curr.filter(|&c| self.h.on_rq(c));
        let r = &mut self.rqs[rq.idx()];
        let mut v = r.min_vruntime;
        if let Some(c) = curr {
            v = self.se[c.idx()].vruntime;
        }
        if let Some(l) = r.tl.first() {
            v = if curr.is_some() { v.min(l.vr) } else { l.vr };
        }
        r.min_vruntime = r.min_vruntime.max(v);
    }

    /// `place_entity(cfs_rq, se, initial)`; `e`'s run queue is `rq`.
    fn place_entity(&mut self, rq: RqId, e: Ent, initial: bool) {
        let mut v = self.rqs[rq.idx()].min_vruntime;
        if initial && self.tun.start_debit {
            v += self.sched_vslice(e) as i64;
        }
        if !initial {
            let mut thresh = self.tun.latency as i64;
            if self.tun.gentle_fair_sleepers {
                thresh >>= 1;
            }
            v -= thresh;
        }
        let se = &mut self.se[e.idx()];
        se.vruntime = se.vruntime.max(v);
    }

    /// `wakeup_preempt_entity(curr, se)`: -1 (se is not left of curr), 0 (left, within
    /// the granularity in se's virtual time) or 1 (further left: preempt).
    fn wakeup_preempt_entity(&self, curr: Ent, se: Ent) -> i32 {
        let vdiff = self.se[curr.idx()].vruntime - self.se[se.idx()].vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let c = &self.h.ents[se.idx()];
        let gran = calc_delta_fair(self.tun.wakeup_granularity, c.weight, c.inv_weight) as i64;
        i32::from(vdiff > gran)
    }

    /// Is `e` a SCHED_IDLE task (`entity_is_task(se) && task_has_idle_policy`)?
    fn idle_task(&self, e: Ent) -> bool {
        e.is_task() && self.se[e.idx()].idle_policy
    }

    /// `set_next_buddy` / `set_last_buddy` / `set_skip_buddy`: `e` and its ancestors
    /// become that buddy of their run queues (not for a SCHED_IDLE task, nor past an
    /// entity that is not queued).
    fn set_buddy(&mut self, e: Ent, which: fn(&mut CfsRq) -> &mut Option<Ent>) {
        if self.idle_task(e) {
            return;
        }
        let mut at = Some(e);
        while let Some(x) = at {
            if !self.h.on_rq(x) {
                return;
            }
            let rq = self.h.rq_of(x);
            *which(&mut self.rqs[rq.idx()]) = Some(x);
            at = self.h.owner(rq);
        }
    }

    /// `clear_buddies(cfs_rq, se)`: each buddy `e` is, it stops being, and so do its
    /// ancestors that are that buddy of theirs.
    fn clear_buddies(&mut self, e: Ent) {
        let pick: [fn(&mut CfsRq) -> &mut Option<Ent>; 3] =
            [|r| &mut r.next, |r| &mut r.last, |r| &mut r.skip];
        for which in pick {
            let mut at = Some(e);
            while let Some(x) = at {
                let rq = self.h.rq_of(x);
                let b = which(&mut self.rqs[rq.idx()]);
                if *b != Some(x) {
                    break;
                }
                *b = None;
                at = self.h.owner(rq);
            }
        }
    }

    /// `check_preempt_tick`.
    fn check_preempt_tick(&mut self, ctx: &mut Ctx, rq: RqId, curr: Ent) {
        let ideal = self.sched_slice(curr);
        let se = self.se[curr.idx()];
        let delta_exec = se.sum_exec - se.prev_sum_exec;
        if delta_exec > ideal {
            ctx.resched(self.h.cpu_of(rq));
            self.clear_buddies(curr);
            return;
        }
        if delta_exec < self.tun.min_granularity {
            return;
        }
        let Some(left) = self.rqs[rq.idx()].tl.first() else {
            return;
        };
        let delta = se.vruntime - left.vr;
        if delta < 0 {
            return;
        }
        if delta > ideal as i64 {
            ctx.resched(self.h.cpu_of(rq));
        }
    }

    /// `check_preempt_wakeup` for a fair wakee `t` on `cpu`.
    fn check_preempt_wakeup(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = self.h.curr_task(cpu) else {
            if ctx.curr(cpu).is_none() {
                ctx.resched(cpu);
            }
            return;
        };
        if curr == t {
            return;
        }
        if self.h.bw.throttled_hierarchy(self.h.rq_of(Ent::task(t))) {
            // WF_FORK is a flag of this call only.
            self.se[Ent::task(t).idx()].fork_wake = false;
            return;
        }
        let (se, pse) = (Ent::task(curr), Ent::task(t));
        let leaf = self.h.rq_of(se);
        let scale = self.h.rq(leaf).nr_running as u64 >= self.tun.nr_latency;
        let fork = std::mem::replace(&mut self.se[pse.idx()].fork_wake, false);
        let mut next_marked = false;
        if self.tun.next_buddy && scale && !fork {
            self.set_buddy(pse, |r| &mut r.next);
            next_marked = true;
        }
        let mut cse = se;
        let preempt = if self.se[se.idx()].idle_policy && !self.se[pse.idx()].idle_policy {
            // Idle tasks are by definition preempted by non-idle tasks.
            true
        } else if !self.se[pse.idx()].normal_policy || !self.tun.wakeup_preemption {
            // Batch and idle wakees never preempt (the tick does).
            false
        } else {
            let (s, p) = self.h.find_matching_se(se, pse);
            cse = s;
            self.update_curr_rq(ctx, self.h.rq_of(s));
            if self.wakeup_preempt_entity(s, p) == 1 {
                if !next_marked {
                    self.set_buddy(p, |r| &mut r.next);
                }
                true
            } else {
                false
            }
        };
        if !preempt {
            return;
        }
        ctx.resched(cpu);
        if !self.h.on_rq(cse) {
            return;
        }
        if self.tun.last_buddy && scale && cse.is_task() {
            self.set_buddy(cse, |r| &mut r.last);
        }
    }

    /// `update_curr(cfs_rq)`: the current entity's sum_exec_runtime and vruntime advance
    /// by the time it ran since this level was last updated; min_vruntime follows.
    fn update_curr_rq(&mut self, ctx: &mut Ctx, rq: RqId) {
        let delta = std::mem::take(&mut self.h.rq_mut(rq).pending_ns);
        let Some(e) = self.h.rq(rq).curr else { return };
        if delta == 0 {
            return;
        }
        let c = self.h.ents[e.idx()];
        let se = &mut self.se[e.idx()];
        se.sum_exec += delta;
        se.vruntime += calc_delta_fair(delta, c.weight, c.inv_weight) as i64;
        se.exec_start = ctx.now();
        self.update_min_vruntime(rq);
        self.h.bw.account(ctx, rq, delta, true);
    }

    /// A task that is not the current entity of its run queue (it was put by an attribute
    /// change and not picked yet) still ran: charge its own entity.
    fn charge_alone(&mut self, ctx: &mut Ctx, t: TaskId, delta: u64) {
        let e = Ent::task(t);
        let rq = self.h.rq_of(e);
        let queued = self.hpos[e.idx()] != NIL;
        if queued {
            self.tl_remove(ctx, rq, e);
        }
        let c = self.h.ents[e.idx()];
        let se = &mut self.se[e.idx()];
        se.sum_exec += delta;
        se.vruntime += calc_delta_fair(delta, c.weight, c.inv_weight) as i64;
        se.exec_start = ctx.now();
        if queued {
            self.tl_insert(ctx, rq, e);
        }
        self.h.bw.account(ctx, rq, delta, false);
    }

    /// `detach_task` + `attach_task`: move a queued, not running task between CPUs
    /// (`dequeue_task(0)`, its vruntime relative to its run queue, then
    /// `enqueue_task(0)` on the destination's hierarchy).
    fn move_task(&mut self, ctx: &mut Ctx, t: TaskId, dst: CpuId) {
        let idle = self.se[Ent::task(t).idx()].idle_policy;
        group::dequeue_task(self, ctx, t, Deq::Migrate, idle);
        ctx.set_task_cpu(t, dst);
        group::enqueue_task(self, ctx, dst, t, Enq::Migrate, idle);
    }
}

impl GroupClass for LinuxCfs {
    fn h(&self) -> &Hierarchy {
        &self.h
    }

    fn h_mut(&mut self) -> &mut Hierarchy {
        &mut self.h
    }

    /// `enqueue_entity`: renormalise a vruntime that is relative or belongs to another
    /// run queue (before `update_curr` for the current entity, after it otherwise), the
    /// group weight, the accounting, `place_entity` for a wake-up (sleeper credit, group
    /// entities included), and the timeline unless it is the running entity.
    fn enqueue_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, how: Enq) {
        let curr = self.h.rq(rq).curr == Some(e);
        if curr {
            self.renormalise(ctx, rq, e);
            self.update_curr_rq(ctx, rq);
        } else {
            self.update_curr_rq(ctx, rq);
            self.renormalise(ctx, rq, e);
        }
        group::update_cfs_group(self, ctx, e);
        self.h.account_enqueue(rq, e);
        self.se[e.idx()].norm = Norm::Abs;
        if how == Enq::Wakeup {
            self.place_entity(rq, e, false);
        }
        if how == Enq::Migrate {
            self.se[e.idx()].exec_start = NEVER;
        }
        self.se[e.idx()].fork_wake = how == Enq::New;
        if !curr {
            self.tl_insert(ctx, rq, e);
        }
    }

    /// `dequeue_entity`: a sleeping entity keeps its absolute vruntime, any other dequeue
    /// makes it relative to min_vruntime; min_vruntime moves on except for DEQUEUE_SAVE.
    fn dequeue_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, how: Deq) -> bool {
        self.update_curr_rq(ctx, rq);
        self.clear_buddies(e);
        if self.h.rq(rq).curr != Some(e) {
            self.tl_remove(ctx, rq, e);
        }
        self.h.account_dequeue(rq, e);
        if how.sleep() {
            self.se[e.idx()].norm = Norm::Abs;
        } else {
            let min = self.rqs[rq.idx()].min_vruntime;
            let se = &mut self.se[e.idx()];
            se.vruntime -= min;
            se.norm = Norm::Rel;
        }
        group::update_cfs_group(self, ctx, e);
        if how != Deq::Save {
            self.update_min_vruntime(rq);
        }
        true
    }

    fn update_curr(&mut self, ctx: &mut Ctx, rq: RqId) {
        self.update_curr_rq(ctx, rq);
    }

    /// `reweight_entity`: the running entity is brought up to date first; the vruntime is
    /// kept.
    fn reweight_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, weight: u32) {
        if self.h.on_rq(e) && self.h.rq(rq).curr == Some(e) {
            self.update_curr_rq(ctx, rq);
        }
        self.h.set_weight(e, weight, 0);
    }

    /// `put_prev_entity`: a still-queued entity goes back into the timeline.
    fn put_prev_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        if self.h.on_rq(e) {
            self.update_curr_rq(ctx, rq);
            self.tl_insert(ctx, rq, e);
        }
        self.h.rq_mut(rq).curr = None;
        self.h.rq_mut(rq).pending_ns = 0;
        self.se[e.idx()].exec_start = ctx.now();
    }

    /// `pick_next_entity(cfs_rq, NULL)`: the leftmost entity, unless it is the skip buddy
    /// and the second is within the granularity, or the last or next buddy is; the
    /// picked entity's buddies are cleared.
    fn pick_entity(&mut self, _ctx: &mut Ctx, rq: RqId) -> Option<Ent> {
        let r = &self.rqs[rq.idx()];
        let left = r.tl.first()?;
        let mut pick = left.e;
        if r.skip == Some(left.e) {
            if let Some(second) = r.tl.second() {
                if self.wakeup_preempt_entity(second.e, left.e) < 1 {
                    pick = second.e;
                }
            }
        }
        if let Some(l) = r.last {
            if self.wakeup_preempt_entity(l, left.e) < 1 {
                pick = l;
            }
        }
        if let Some(nx) = r.next {
            if self.wakeup_preempt_entity(nx, left.e) < 1 {
                pick = nx;
            }
        }
        self.clear_buddies(pick);
        Some(pick)
    }

    /// `set_next_entity`: out of the timeline, current, its slice starting now.
    fn set_next_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        self.tl_remove(ctx, rq, e);
        self.h.rq_mut(rq).curr = Some(e);
        self.h.rq_mut(rq).pending_ns = 0;
        let se = &mut self.se[e.idx()];
        se.prev_sum_exec = se.sum_exec;
        se.exec_start = ctx.now();
    }

    /// `entity_tick`: `check_preempt_tick` when more than one entity is queued here.
    fn entity_tick(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        if self.h.rq(rq).nr_running > 1 {
            self.check_preempt_tick(ctx, rq, e);
        }
    }

    /// `dequeue_task_fair`: "bias pick_next to pick a task from this cfs_rq, as p is
    /// sleeping when it is within its sched_slice".
    fn sleeper_parent(&mut self, parent: Ent) {
        self.set_buddy(parent, |r| &mut r.next);
    }
}

impl LinuxCfs {
    /// The vruntime of `e`, about to be queued on `rq`, made absolute there: relative
    /// ones get min_vruntime added (`renorm`); an absolute one from another run queue (a
    /// task woken on another CPU: `migrate_task_rq_fair` then ENQUEUE_MIGRATED) moves
    /// by the difference of the two and is no longer cache-hot; a start-up task is placed
    /// as a new one (START_DEBIT).
    fn renormalise(&mut self, _ctx: &mut Ctx, rq: RqId, e: Ent) {
        let old = self.h.rq_of(e);
        let min = self.rqs[rq.idx()].min_vruntime;
        match self.se[e.idx()].norm {
            Norm::Rel => self.se[e.idx()].vruntime += min,
            Norm::Abs if old != rq => {
                let d = min - self.rqs[old.idx()].min_vruntime;
                let se = &mut self.se[e.idx()];
                se.vruntime += d;
                se.exec_start = NEVER;
            }
            Norm::Abs => {}
            Norm::Fresh => {
                self.h.ents[e.idx()].rq = rq;
                self.se[e.idx()].vruntime = 0;
                self.place_entity(rq, e, true);
            }
        }
        self.h.ents[e.idx()].rq = rq;
    }
}

impl Scheduler for LinuxCfs {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-cfs-fair",
            summary: "Linux CFS fair class (pre-EEVDF, v5.4): vruntime, min_vruntime, \
                      latency-based slices, buddies, group scheduling, pull load balancing",
            source: "torvalds/linux kernel/sched/fair.c (v5.7-era stored copy 00061968; CFS core \
                     as in v5.4): place_entity, check_preempt_tick, pick_next_entity, \
                     check_preempt_wakeup, task_fork_fair, load_balance, calc_group_shares; \
                     core.c sched_prio_to_weight/wmult",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "linux-cfs", name, value)?;
        self.update_sysctl();
        Ok(())
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if !(-20..=19).contains(&attrs.nice) {
            return Err(format!("nice must be in -20..=19, got {}", attrs.nice));
        }
        Ok(())
    }

    /// Fair group scheduling is modelled; custom slices are not: v5.4's
    /// `__setscheduler_params` takes only the nice value of a fair task's `sched_attr`.
    fn models(&self, feature: Feature) -> Result<(), String> {
        match feature {
            Feature::FairGroupSched | Feature::CfsBandwidth => Ok(()),
            Feature::CustomSlice => Err("linux-cfs models Linux v5.4, whose sched_setattr \
                                         ignores sched_runtime for SCHED_OTHER/BATCH/IDLE \
                                         tasks (custom slices came with EEVDF in 6.12)"
                .into()),
            Feature::RtBandwidth => Err(feature.not_modelled_by("the fair class")),
        }
    }

    /// `task_fork_fair` for a forked task (the child starts at the vruntime of the
    /// current entity of its parent's run queue, placed there with START_DEBIT and stored
    /// relative); a start-up task is placed on its first enqueue instead.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        self.ensure(ctx, Some(t));
        self.h.bw.setup(ctx);
        self.refresh_weight(ctx, t);
        let e = Ent::task(t);
        let leaf = self.h.rq_of_group(ctx.task(t).group, ctx.task(t).cpu);
        self.h.ents[e.idx()].rq = leaf;
        let se = &mut self.se[e.idx()];
        se.sum_exec = 0;
        se.prev_sum_exec = 0;
        se.exec_start = NEVER;
        se.vruntime = 0;
        se.fork_wake = false;
        let Some(p) = parent else {
            se.norm = Norm::Fresh;
            return;
        };
        self.ensure(ctx, Some(p));
        let rq = self.h.rq_of(Ent::task(p));
        self.h.ents[e.idx()].rq = rq;
        self.update_curr_rq(ctx, rq);
        let curr = self.h.rq(rq).curr;
        if let Some(c) = curr {
            self.se[e.idx()].vruntime = self.se[c.idx()].vruntime;
        }
        self.place_entity(rq, e, true);
        if self.tun.child_runs_first {
            if let Some(c) = curr {
                if self.se[c.idx()].vruntime < self.se[e.idx()].vruntime {
                    let cv = self.se[c.idx()].vruntime;
                    self.se[c.idx()].vruntime = self.se[e.idx()].vruntime;
                    self.se[e.idx()].vruntime = cv;
                    ctx.resched(self.h.cpu_of(rq));
                }
            }
        }
        let se = &mut self.se[e.idx()];
        se.vruntime -= self.rqs[rq.idx()].min_vruntime;
        se.norm = Norm::Rel;
    }

    /// `task_dead_fair`.
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, Some(t));
        group::put_prev_task(self, ctx, t);
    }

    /// `select_task_rq_fair` (cpu/fair/placement.rs).
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        self.ensure(ctx, Some(t));
        let mut smp = self.smp.take();
        let cpu = smp.select_task_rq(ctx, self, t, prev, kind);
        self.smp.put(smp);
        cpu
    }

    /// `enqueue_task_fair` (cpu/fair/group.rs) with the task's weight taken from its
    /// attributes.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.ensure(ctx, Some(t));
        debug_assert!(!self.h.on_rq(Ent::task(t)), "fair enqueue of queued {t:?}");
        self.refresh_weight(ctx, t);
        let how = match kind {
            EnqueueKind::Wakeup => Enq::Wakeup,
            EnqueueKind::New => Enq::New,
            EnqueueKind::Restore => Enq::Restore,
        };
        let idle = self.se[Ent::task(t).idx()].idle_policy;
        self.h.bw.setup(ctx);
        group::enqueue_task(self, ctx, cpu, t, how, idle);
    }

    /// `dequeue_task_fair` (cpu/fair/group.rs).
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.ensure(ctx, Some(t));
        if !self.h.on_rq(Ent::task(t)) {
            return;
        }
        let how = match kind {
            DequeueKind::Sleep => Deq::Sleep,
            DequeueKind::Exit => Deq::Exit,
            DequeueKind::Save => Deq::Save,
        };
        let idle = self.se[Ent::task(t).idx()].idle_policy;
        group::dequeue_task(self, ctx, t, how, idle);
    }

    /// `check_preempt_wakeup`.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, Some(t));
        self.check_preempt_wakeup(ctx, cpu, t);
    }

    /// `put_prev_task_fair`.
    fn put_prev(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        self.ensure(ctx, Some(t));
        group::put_prev_task(self, ctx, t);
        self.se[Ent::task(t).idx()].exec_start = ctx.now();
    }

    /// `pick_next_task_fair`: descend from the root run queue.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        self.ensure(ctx, None);
        group::pick_next_task(self, ctx, cpu)
    }

    /// `update_curr`, owed to every level of the task's path (cpu/fair/group.rs).
    fn update_curr(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, delta_ns: u64) {
        self.ensure(ctx, Some(t));
        if !group::update_curr_task(self, ctx, t, delta_ns) {
            self.charge_alone(ctx, t, delta_ns);
        }
    }

    /// `task_tick_fair`: `entity_tick` on every level.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.h.curr_task(cpu) == Some(t) {
            group::tick_task(self, ctx, t);
        }
    }

    /// `yield_task_fair`: the task and its ancestors become skip buddies.
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, Some(t));
        if self.h.rq(RqId::root(cpu)).h_nr_running <= 1 {
            return;
        }
        let e = Ent::task(t);
        self.clear_buddies(e);
        if ctx.task(t).attrs.policy != Policy::Batch {
            self.update_curr_rq(ctx, self.h.rq_of(e));
        }
        self.set_buddy(e, |r| &mut r.skip);
    }

    /// `prio_changed_fair` (the new weight itself is taken at the ENQUEUE_RESTORE, as
    /// `reweight_task` does while the entity is off the queue).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        self.ensure(ctx, Some(t));
        let e = Ent::task(t);
        if !self.h.on_rq(e) {
            return;
        }
        let cpu = self.h.cpu_of(self.h.rq_of(e));
        if self.h.rq(RqId::root(cpu)).h_nr_running == 1 {
            return;
        }
        if ctx.curr(cpu) == Some(t) {
            if ctx.task(t).attrs.prio() > old.prio() {
                ctx.resched(cpu);
            }
        } else {
            self.check_preempt_wakeup(ctx, cpu, t);
        }
    }

    /// `task_change_group_fair` (v5.4 `task_move_group_fair`): `detach_task_cfs_rq` —
    /// a sleeping task's absolute vruntime gets the sleeper credit of its old run queue
    /// (`place_entity(cfs_rq, se, 0)`) and is made relative to it — then
    /// `attach_task_cfs_rq` makes it absolute on the new group's run queue. A queued task
    /// was made relative by its DEQUEUE_SAVE and is placed by its ENQUEUE_RESTORE.
    fn task_change_group(&mut self, ctx: &mut Ctx, t: TaskId, _from: GroupId) {
        self.ensure(ctx, Some(t));
        let e = Ent::task(t);
        let old = self.h.rq_of(e);
        let new = self.h.rq_of_group(ctx.task(t).group, self.h.cpu_of(old));
        if self.se[e.idx()].norm == Norm::Abs && !self.h.on_rq(e) {
            self.place_entity(old, e, false);
            let d = self.rqs[new.idx()].min_vruntime - self.rqs[old.idx()].min_vruntime;
            self.se[e.idx()].vruntime += d;
        }
        self.h.ents[e.idx()].rq = new;
    }

    /// Periodic (`rebalance_domains`, plus the NO_HZ idle balance it kicks) and newidle
    /// load balancing over the scheduling domains (cpu/fair/balance.rs).
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        self.ensure(ctx, None);
        let mut smp = self.smp.take();
        smp.balance(ctx, self, cpu, kind);
        self.smp.put(smp);
    }

    /// The CFS bandwidth timers (`sched_cfs_period_timer`, `sched_cfs_slack_timer`).
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        self.ensure(ctx, None);
        bandwidth::timer(self, ctx, timer);
    }

    fn cfs_bandwidth(&self, g: GroupId) -> Option<CfsBandwidthStats> {
        self.h.bw.stats(g)
    }

    fn is_throttled(&self, t: TaskId) -> bool {
        self.h.task_throttled(t)
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        let e = Ent::task(t);
        let se = self.se.get(e.idx())?;
        let v = match se.norm {
            Norm::Abs => se.vruntime,
            Norm::Rel => se.vruntime + self.rqs.get(self.h.rq_of(e).idx())?.min_vruntime,
            Norm::Fresh => return None,
        };
        Some(("vruntime", v))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (i, rq) in self.rqs.iter().enumerate() {
            let cpu = self.h.cpu_of(RqId(i as u32));
            for n in &rq.tl.h {
                if let Some(t) = n.e.task_id() {
                    f(cpu, t);
                }
            }
        }
    }
}

impl SchedClass for LinuxCfs {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        matches!(attrs.policy, Policy::Other | Policy::Batch | Policy::Idle)
    }

    fn has_queued(&self, cpu: CpuId) -> bool {
        self.h
            .rqs
            .get(cpu.idx())
            .is_some_and(|rq| rq.h_nr_running > 0)
    }

    /// `switched_from_fair` → `detach_task_cfs_rq`: keep the vruntime relative to
    /// min_vruntime while the task is in another class.
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, Some(t));
        let e = Ent::task(t);
        let rq = self.h.rq_of(e);
        group::put_prev_task(self, ctx, t);
        if !self.h.on_rq(e) && self.se[e.idx()].norm == Norm::Abs {
            let min = self.rqs[rq.idx()].min_vruntime;
            let se = &mut self.se[e.idx()];
            se.vruntime -= min;
            se.norm = Norm::Rel;
        }
    }

    /// `switched_to_fair` → `attach_task_cfs_rq`: the relative vruntime is made absolute
    /// on the next enqueue.
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, Some(t));
        self.refresh_weight(ctx, t);
    }
}

impl FairRq for LinuxCfs {
    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.h.h_nr_runnable(cpu)
    }

    fn idle_h_nr_running(&self, cpu: CpuId) -> u32 {
        self.h.h_nr_idle_runnable(cpu)
    }

    fn any_queued(&self) -> bool {
        self.h.nr_queued_tasks() > 0
    }

    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.h.cpu_load(cpu)
    }

    fn task_load(&self, t: TaskId) -> u64 {
        self.h.task_h_load(t)
    }

    /// The tasks of each of the CPU's run queues, root first, each timeline array from
    /// its end (the kernel walks `cfs_tasks` from its least-recently-run tail; the array
    /// order stands in for it).
    fn migration_candidates(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        for rq in self.h.rqs_of(cpu) {
            let tl = &self.rqs[rq.idx()].tl.h;
            out.extend(tl.iter().rev().filter_map(|n| n.e.task_id()));
        }
    }

    fn exec_start(&self, t: TaskId) -> Option<u64> {
        let s = self.se[Ent::task(t).idx()].exec_start;
        (s != NEVER).then_some(s)
    }

    /// CACHE_HOT_BUDDY: a next or last buddy of its run queue is cache-hot.
    fn is_buddy(&self, _cpu: CpuId, t: TaskId) -> bool {
        let e = Ent::task(t);
        let r = &self.rqs[self.h.rq_of(e).idx()];
        self.tun.cache_hot_buddy && (r.next == Some(e) || r.last == Some(e))
    }

    fn throttled_lb_pair(&self, ctx: &Ctx, t: TaskId, src: CpuId, dst: CpuId) -> bool {
        self.h.bw.throttled_lb_pair(ctx.task(t).group, src, dst)
    }

    fn move_queued(&mut self, ctx: &mut Ctx, t: TaskId, _src: CpuId, dst: CpuId) {
        self.move_task(ctx, t, dst);
    }

    /// `check_preempt_curr`: an idle CPU reschedules; a fair current task is checked with
    /// `check_preempt_wakeup`; a higher class's is never preempted.
    fn attach_preempt(&mut self, ctx: &mut Ctx, dst: CpuId, t: TaskId) {
        if ctx.curr(dst).is_none() {
            ctx.resched(dst);
        } else if self.h.curr_task(dst).is_some() {
            self.check_preempt_wakeup(ctx, dst, t);
        }
    }
}

// ------------------------------------------------------------------------------ policy

use super::dl_bandwidth::DlKernel;
use super::linux_dl::LinuxDl;

/// The `linux-cfs` policy: the RT class above CFS.
pub type LinuxCfsStack = Stacked<LinuxDl, Stacked<LinuxRt, LinuxCfs>>;

/// Summary line of the `linux-cfs` policy.
pub const LINUX_CFS_SUMMARY: &str =
    "Linux v5.4 CFS with SCHED_FIFO/RR and Linux 6.1's SCHED_DEADLINE above it (dl > rt > \
     fair class stack), SMP push/pull and load balancing";

/// Source citation of the `linux-cfs` policy.
pub const LINUX_CFS_SOURCE: &str = "torvalds/linux kernel/sched/fair.c (v5.7-era copy 00061968, \
     CFS core = v5.4: place_entity, check_preempt_tick, pick_next_entity, check_preempt_wakeup, \
     task_fork_fair, load_balance), kernel/sched/rt.c (v5.10-era copy 00d6a8a7), \
     kernel/sched/deadline.c and cpudeadline.c (Linux 6.1), core.c \
     sched_prio_to_weight/wmult and pick_next_task";

/// The `linux-cfs` policy for a machine with `nr_cpus` CPUs.
pub fn linux_cfs(nr_cpus: usize) -> LinuxCfsStack {
    let meta = StackMeta {
        name: "linux-cfs",
        summary: LINUX_CFS_SUMMARY,
        source: LINUX_CFS_SOURCE,
    };
    Stacked::new(
        LinuxDl::new(nr_cpus, DlKernel::V6_1),
        Stacked::new(LinuxRt::new(nr_cpus), LinuxCfs::new(nr_cpus), meta),
        meta,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::{mask_of_bits, Driver, Op};
    use crate::protocol::SchedCore;
    use crate::trace::writer::PrevState;
    use crate::types::CpuMask;
    use crate::types::{fair, rt};
    use proptest::prelude::*;
    use schedlab_spec::model::{Cgroup, CpuCgroup};

    const MS: u64 = 1_000_000;
    const C0: CpuId = CpuId(0);
    const ROOT0: RqId = RqId(0);

    /// CFS on one CPU at HZ=1000 behind the scheduler core, with these tunables.
    fn one_cpu(params: &[(&str, &str)]) -> SchedCore<LinuxCfs> {
        let mut s = LinuxCfs::new(1);
        for (k, v) in params {
            s.set_param(k, v).unwrap();
        }
        SchedCore::bare(s, 1, 1000)
    }

    fn start(core: &mut SchedCore<LinuxCfs>, attrs: SchedAttrs) -> TaskId {
        let t = core.spawn(attrs, CpuMask::first_n(1), None);
        core.wake_up_new_task(t, None).unwrap();
        t
    }

    /// Reschedule CPU 0 now; returns what runs.
    fn resched(core: &mut SchedCore<LinuxCfs>) -> Option<TaskId> {
        core.ctx.resched(C0);
        core.process_resched();
        core.ctx.curr(C0)
    }

    /// The current task blocks; CPU 0 reschedules.
    fn block(core: &mut SchedCore<LinuxCfs>) -> Option<TaskId> {
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        core.ctx.curr(C0)
    }

    /// `a` runs alone for 100 ms while `b` sleeps (b ran once at the start), then `b`
    /// wakes with the sleeper credit `latency / 2` (GENTLE_FAIR_SLEEPERS, START_DEBIT off):
    /// `b` is placed exactly that far left of `a`.
    fn sleeper_waking_behind(
        latency: u64,
        b_attrs: SchedAttrs,
    ) -> (SchedCore<LinuxCfs>, TaskId, TaskId) {
        let latency = latency.to_string();
        let mut core = one_cpu(&[
            ("start_debit", "0"),
            ("sched_latency_ns", &latency),
            ("sched_min_granularity_ns", "100000"),
        ]);
        let b = start(&mut core, b_attrs);
        let a = start(&mut core, fair(Policy::Other, 0));
        assert_eq!(resched(&mut core), Some(b));
        assert_eq!(block(&mut core), Some(a));
        core.run_until(100 * MS);
        core.try_to_wake_up(b, None, false).unwrap();
        (core, a, b)
    }

    #[test]
    fn wakeup_preemption_exactly_at_granularity() {
        // 1 CPU: factor 1, wakeup_granularity = 1 ms; a nice-0 wakee's gran is 1 ms of
        // vruntime, a nice-5 wakee's is calc_delta_fair(1 ms) = 3056716. The wakee is
        // placed latency/2 left of the running task: vdiff = gran + extra preempts iff
        // extra > 0.
        for (nice, gran) in [(0, 1_000_000u64), (5, 3_056_716)] {
            for (extra, expect) in [(0u64, false), (1, true)] {
                let (core, a, b) =
                    sleeper_waking_behind(2 * (gran + extra), fair(Policy::Other, nice));
                let s = &core.policy;
                assert_eq!(s.vruntime(a) - s.vruntime(b), (gran + extra) as i64);
                assert_eq!(
                    core.ctx.need_resched(C0),
                    expect,
                    "nice {nice}: vdiff = gran + {extra}"
                );
                if expect {
                    assert_eq!(
                        s.buddies(ROOT0).2,
                        Some(Ent::task(b)),
                        "the preempting wakee is next buddy"
                    );
                }
            }
        }
    }

    #[test]
    fn batch_never_wake_preempts_and_idle_is_always_preempted() {
        let (core, a, b) = sleeper_waking_behind(6 * MS, fair(Policy::Batch, 0));
        assert!(core.policy.vruntime(a) - core.policy.vruntime(b) > 1_000_000);
        assert!(
            !core.ctx.need_resched(C0),
            "SCHED_BATCH wakee must not preempt"
        );

        // A SCHED_IDLE task runs; a nice-0 task starting far right of it preempts.
        let mut core = one_cpu(&[]);
        let idle = start(&mut core, fair(Policy::Idle, 0));
        core.process_resched();
        core.run_until(MS);
        let n = start(&mut core, fair(Policy::Other, 0));
        assert!(core.policy.vruntime(n) > core.policy.vruntime(idle));
        assert!(
            core.ctx.need_resched(C0),
            "a SCHED_IDLE curr is always preempted"
        );
        assert_eq!(weight_of(&fair(Policy::Idle, -20)), (3, WMULT_IDLEPRIO));
    }

    #[test]
    fn tick_preempts_when_ran_exceeds_ideal_slice() {
        // Two nice-0 tasks at vruntime 0 on 1 CPU: ideal = sched_slice = 2999998 ns. The
        // first runs; at a tick 2999998 ns after its pick it stays (and is not more than
        // ideal right of the other), 1 ns later it is preempted.
        for (ran, expect) in [(2_999_998u64, false), (2_999_999, true)] {
            let mut core = one_cpu(&[("start_debit", "0")]);
            let a = start(&mut core, fair(Policy::Other, 0));
            let _b = start(&mut core, fair(Policy::Other, 0));
            assert_eq!(resched(&mut core), Some(a));
            assert_eq!(core.policy.task_slice(a), 2_999_998);
            core.set_now(ran);
            core.tick(C0);
            assert_eq!(core.ctx.need_resched(C0), expect, "ran {ran}");
        }
        // Second rule: ran >= min_granularity and curr is more than `ideal` right of the
        // leftmost entity. a runs alone for 10 ms and is picked again; b wakes 3 ms left
        // of it (sleeper credit; WAKEUP_PREEMPTION off so that a keeps running).
        let mut core = one_cpu(&[("start_debit", "0"), ("wakeup_preemption", "0")]);
        let b = start(&mut core, fair(Policy::Other, 0));
        let a = start(&mut core, fair(Policy::Other, 0));
        assert_eq!(resched(&mut core), Some(b));
        assert_eq!(block(&mut core), Some(a));
        core.run_until(10 * MS);
        assert_eq!(resched(&mut core), Some(a));
        core.try_to_wake_up(b, None, false).unwrap();
        assert!(!core.ctx.need_resched(C0));
        core.set_now(10 * MS + 749_999);
        core.tick(C0);
        assert!(!core.ctx.need_resched(C0), "below min_granularity");
        core.set_now(10 * MS + 750_000);
        core.tick(C0);
        assert!(core.ctx.need_resched(C0), "vruntime lead > ideal");
    }

    #[test]
    fn yield_uses_the_skip_buddy() {
        // b runs first, then a, leaving b's vruntime `lead` right of a's; a yields.
        for (lead, next) in [(500_000u64, 1), (1_000_001, 0)] {
            let mut core = one_cpu(&[("start_debit", "0")]);
            let b = start(&mut core, fair(Policy::Other, 0));
            let a = start(&mut core, fair(Policy::Other, 0));
            assert_eq!(resched(&mut core), Some(b));
            core.set_now(MS + lead);
            assert_eq!(resched(&mut core), Some(a));
            core.set_now(2 * MS + lead);
            core.yield_current(C0);
            assert_eq!(core.policy.buddies(ROOT0).0, Some(Ent::task(a)));
            core.process_resched();
            // Within the wake-up granularity the yielder is skipped; further, the
            // leftmost runs even though it yielded.
            assert_eq!(core.ctx.curr(C0), Some([a, b][next]), "lead {lead}");
        }
    }

    #[test]
    fn child_runs_first_swaps_with_the_parent() {
        let mut core = one_cpu(&[("sched_child_runs_first", "1")]);
        let p = start(&mut core, fair(Policy::Other, 0));
        core.process_resched();
        core.set_now(MS);
        core.account(C0);
        let pv = core.policy.vruntime(p);
        let c = core.spawn(fair(Policy::Other, 0), CpuMask::first_n(1), Some(p));
        assert!(core.ctx.need_resched(C0));
        // The parent took the child's START_DEBIT place; the child the parent's.
        assert_eq!(
            core.policy.vruntime(c) + core.policy.min_vruntime(ROOT0),
            pv
        );
        assert!(core.policy.vruntime(p) > pv);
    }

    /// Groups /a and /b (shares 1024) on one CPU.
    fn groups(core: &mut SchedCore<impl Scheduler>, shares: &[u64]) {
        let mut tree = vec![Cgroup::root()];
        for (i, &s) in shares.iter().enumerate() {
            tree.push(Cgroup {
                path: format!("/g{i}"),
                parent: Some(0),
                cpu: CpuCgroup {
                    shares: Some(s),
                    ..CpuCgroup::default()
                },
                cpuset_cpus: None,
            });
        }
        core.ctx.set_groups(&tree);
    }

    #[test]
    fn a_sleeper_in_a_busy_group_makes_the_group_entity_next_buddy() {
        // Two tasks in /g0, one in /g1, started in that order (START_DEBIT: each at
        // min_vruntime + its vslice, half as long for the second of /g0, which so runs
        // first; the group entities are placed at the root's min_vruntime as wake-ups,
        // /g0's queued first and leftmost). When that task blocks while its sibling is
        // still queued in /g0, /g0's entity
        // becomes next buddy of the root run queue (dequeue_task_fair); when /g1's task
        // blocks alone in its group, its group entity leaves and nothing is marked.
        let mut core = one_cpu(&[]);
        groups(&mut core, &[1024, 1024]);
        let ts: Vec<TaskId> = (0..3)
            .map(|_| core.spawn(fair(Policy::Other, 0), CpuMask::first_n(1), None))
            .collect();
        for (t, g) in ts.iter().zip([1, 1, 2]) {
            core.move_group(*t, g);
            core.wake_up_new_task(*t, None).unwrap();
        }
        let h = core.policy.hierarchy();
        let (g0, g1) = (
            h.parent_ent(Ent::task(ts[0])).unwrap(),
            h.parent_ent(Ent::task(ts[2])).unwrap(),
        );
        assert_eq!(h.rq(ROOT0).nr_running, 2, "two group entities at the root");
        assert_eq!(resched(&mut core), Some(ts[1]));
        core.policy.hierarchy().check(&core.ctx).unwrap();
        core.block(C0, PrevState::Sleeping);
        assert_eq!(core.policy.buddies(ROOT0).2, Some(g0));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(ts[0]), "the buddy's group runs on");
        core.policy.hierarchy().check(&core.ctx).unwrap();
        // ts[0] runs out its slice at the ticks; /g1's task gets the CPU, then blocks.
        core.run_until(20 * MS);
        while core.ctx.curr(C0) != Some(ts[2]) {
            let now = core.ctx.now() + MS;
            core.run_until(now);
        }
        core.block(C0, PrevState::Sleeping);
        assert_ne!(core.policy.buddies(ROOT0).2, Some(g1));
        assert!(!core.policy.hierarchy().on_rq(g1), "an empty group leaves");
        core.process_resched();
        core.policy.hierarchy().check(&core.ctx).unwrap();
    }

    // --------------------------------------------------------------- random operations

    /// What the `linux-cfs` stack must keep true after every operation, beyond what every
    /// policy must (`Driver::check`): the hierarchy's counts and weights (tasks below a
    /// throttled run queue not counted above it) and its bandwidth bookkeeping, monotonic
    /// min_vruntime on every run queue, each queued entity in its run queue's timeline
    /// or its current entity (never both), RT push/pull settled, RT work never waiting
    /// behind fair work.
    fn check_stack(core: &SchedCore<LinuxCfsStack>, last_min: &mut Vec<i64>) {
        let ctx = &core.ctx;
        let n = ctx.nr_tasks();
        let cfs = &core.policy.lo.lo;
        cfs.h.check(ctx).unwrap();
        last_min.resize(cfs.rqs.len(), i64::MIN);
        for (i, last) in last_min.iter_mut().enumerate() {
            let rq = RqId(i as u32);
            let mv = cfs.min_vruntime(rq);
            assert!(mv >= *last, "min_vruntime of {rq:?} went backwards");
            *last = mv;
            let mut held: Vec<Ent> = cfs.timeline(rq).into_iter().map(|(_, e)| e).collect();
            held.extend(cfs.h.rq(rq).curr.filter(|&c| cfs.h.on_rq(c)));
            held.sort();
            assert_eq!(
                held,
                cfs.h.queued_on(rq),
                "{rq:?}: timeline and current entity"
            );
        }
        for c in 0..ctx.nr_cpus() {
            let cpu = CpuId(c as u32);
            let mut nr = 0;
            for i in 0..n {
                let v = ctx.task(TaskId(i as u32));
                let throttled = cfs
                    .h
                    .bw
                    .throttled_hierarchy(cfs.h.rq_of_group(v.group, cpu));
                if v.on_rq && v.cpu == cpu && cfs.owns(&v.attrs) && !throttled {
                    nr += 1;
                }
            }
            assert_eq!(cfs.h.rq(RqId::root(cpu)).h_nr_running, nr, "cpu {c}");
            if let Some(cur) = cfs.cfs_curr(cpu) {
                assert_eq!(ctx.curr(cpu), Some(cur));
            }
            // A waiting migratable RT task has no allowed CPU running lower-priority work
            // (push/pull settled).
            for i in 0..n {
                let t = TaskId(i as u32);
                let v = ctx.task(t);
                if !v.on_rq || v.running || v.attrs.prio() >= 100 || v.affinity.count() < 2 {
                    continue;
                }
                for d in v.affinity.iter().filter(|&d| d != v.cpu) {
                    let dp = ctx.curr(d).map_or(140, |x| ctx.task(x).attrs.prio());
                    assert!(
                        dp <= v.attrs.prio(),
                        "{t:?} (prio {}) waits on {:?} while {d:?} runs prio {dp}",
                        v.attrs.prio(),
                        v.cpu
                    );
                }
            }
            // RT never leaves a CPU running fair work while it has RT work queued.
            if core.policy.lo.hi.has_queued(cpu) {
                let cur = ctx.curr(cpu).expect("RT work queued on an idle CPU");
                assert!(
                    ctx.task(cur).attrs.prio() < 100,
                    "fair task runs over queued RT"
                );
            }
        }
    }

    /// A random operation, a task moved to another group (`sched_move_task`), or time
    /// passing with the policy timers (the CFS bandwidth timers) firing on the way.
    #[derive(Clone, Copy, Debug)]
    enum GOp {
        Op(Op),
        Move(usize, u32),
        Run(u64),
    }

    fn op() -> impl Strategy<Value = GOp> {
        prop_oneof![
            4 => (0usize..12).prop_map(|i| GOp::Op(Op::Wake(i))),
            4 => (1u64..5_000_000).prop_map(|d| GOp::Op(Op::Advance(d))),
            2 => (0usize..4).prop_map(|c| GOp::Op(Op::Block(c))),
            1 => (0usize..4).prop_map(|c| GOp::Op(Op::Bounce(c))),
            1 => (0usize..4).prop_map(|c| GOp::Op(Op::Yield(c))),
            3 => Just(GOp::Op(Op::Tick)),
            1 => ((0usize..4), 0u8..5, -20i32..20)
                .prop_map(|(c, p, v)| GOp::Op(Op::Change(c, attrs_for(p, v)))),
            1 => ((0usize..12), 0u32..4).prop_map(|(t, g)| GOp::Move(t, g)),
            2 => (1u64..8_000_000).prop_map(GOp::Run),
        ]
    }

    fn attrs_for(kind: u8, v: i32) -> SchedAttrs {
        match kind {
            0 => fair(Policy::Other, v.clamp(-20, 19)),
            1 => fair(Policy::Batch, v.clamp(-20, 19)),
            2 => fair(Policy::Idle, 0),
            3 => rt(Policy::Fifo, v.rem_euclid(99) + 1),
            _ => rt(Policy::Rr, v.rem_euclid(99) + 1),
        }
    }

    /// The cgroups of the property tests: /g0 (shares 2048) with /g0/g1 (100) inside,
    /// and /g2 (1024); group ids 1..=3. With `quotas`, /g0 may run 6 ms per 10 ms, /g0/g1
    /// 2 ms per 5 ms with a 1 ms burst, and /g2 3 ms per 20 ms (the slice 1 ms), so that
    /// run queues throttle and unthrottle often, at two levels.
    fn tree(quotas: bool) -> Vec<Cgroup> {
        let group = |path: &str, parent, shares, bw: (i64, u64, u64)| Cgroup {
            path: path.into(),
            parent: Some(parent),
            cpu: CpuCgroup {
                shares: Some(shares),
                cfs_quota_us: quotas.then_some(bw.0),
                cfs_period_us: quotas.then_some(bw.1),
                cfs_burst_us: quotas.then_some(bw.2),
                ..CpuCgroup::default()
            },
            cpuset_cpus: None,
        };
        vec![
            Cgroup::root(),
            group("/g0", 0, 2048, (6_000, 10_000, 0)),
            group("/g0/g1", 1, 100, (2_000, 5_000, 1_000)),
            group("/g2", 0, 1024, (3_000, 20_000, 0)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(std::env::var("SCHEDLAB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)))]
        /// Random operations on tasks spread over the root and three nested groups, moved
        /// between groups at random too.
        #[test]
        fn stack_keeps_queues_consistent_and_min_vruntime_monotonic(
            ncpu in 1usize..4,
            tasks in proptest::collection::vec((0u8..5, -20i32..20, 1u32..16, 0u32..4), 1..12),
            ops in proptest::collection::vec(op(), 1..250),
            quotas in proptest::bool::ANY,
        ) {
            let specs: Vec<(SchedAttrs, CpuMask)> = tasks
                .iter()
                .map(|&(k, v, m, _)| (attrs_for(k, v), mask_of_bits(m)))
                .collect();
            let mut stack = linux_cfs(ncpu);
            stack.set_param("sched_cfs_bandwidth_slice_us", "1000").unwrap();
            let mut d = Driver::new(stack, ncpu, 250, &specs);
            d.core.ctx.set_groups(&tree(quotas));
            for (i, &(.., g)) in tasks.iter().enumerate() {
                d.core.move_group(TaskId(i as u32), g);
            }
            let mut last_min = Vec::new();
            for o in ops {
                match o {
                    GOp::Op(op) => d.apply(op),
                    GOp::Move(t, g) => {
                        let t = TaskId((t % tasks.len()) as u32);
                        d.core.move_group(t, g);
                        // A task moved out of a throttled group while it waits on an idle
                        // CPU waits on (`sched_move_task` reschedules only a running task)
                        // until that CPU schedules again; the engine moves only running
                        // tasks (rt-app's phase `taskgroup`), so here the CPU does at once.
                        let cpu = d.core.ctx.task(t).cpu;
                        if d.core.ctx.curr(cpu).is_none() {
                            d.core.ctx.resched(cpu);
                        }
                        d.core.process_resched();
                    }
                    GOp::Run(dt) => {
                        let to = d.core.ctx.now() + dt;
                        d.core.run_until(to);
                    }
                }
                d.check();
                check_stack(&d.core, &mut last_min);
            }
        }
    }
}

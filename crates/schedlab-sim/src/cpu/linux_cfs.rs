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
//! `migrate_task_rq_fair`, `task_fork_fair`, `prio_changed_fair`; weights from
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
//! Simplifications elsewhere:
//! - No group (cgroup) scheduling, no CFS bandwidth, no PELT: "load" is the instantaneous
//!   sum of queued weights (`cfs_rq->load.weight`), not `load_avg`.
//! - `check_preempt_wakeup`'s "curr already has TIF_NEED_RESCHED" early exit is not
//!   modelled (the context does not expose pending reschedules).
//!
//! Complexity: the timeline is an indexed binary min-heap preallocated per CPU
//! (allocation-free once grown): enqueue/dequeue/pick O(log n), leftmost and the second
//! entity (skip buddy) O(1); select_cpu O(CPUs); a balance pass O(CPUs + tasks on the
//! busiest CPU) per domain.

use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

use crate::topology::SdEra;

use super::fair::{FairParams, FairRq, FairSmp, Scaled};
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
    t: TaskId,
}

impl Node {
    /// `entity_before`, with insertion order breaking ties (equal keys go right).
    #[inline]
    fn before(&self, o: &Node) -> bool {
        (self.vr, self.seq) < (o.vr, o.seq)
    }
}

/// The rb-tree equivalent: an indexed binary min-heap on (vruntime, insertion sequence).
/// Positions live in a table shared by all CPUs (a task is on at most one timeline).
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
        pos[n.t.idx()] = i as u32;
        self.up(pos, i)
    }

    fn remove(&mut self, pos: &mut [u32], t: TaskId) -> u64 {
        let i = pos[t.idx()] as usize;
        debug_assert!(
            i < self.h.len() && self.h[i].t == t,
            "{t:?} not on this timeline"
        );
        let last = self.h.len() - 1;
        self.h.swap(i, last);
        self.h.pop();
        pos[t.idx()] = NIL;
        if i < self.h.len() {
            pos[self.h[i].t.idx()] = i as u32;
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
            pos[self.h[i].t.idx()] = i as u32;
            pos[self.h[p].t.idx()] = p as u32;
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
            pos[self.h[i].t.idx()] = i as u32;
            pos[self.h[c].t.idx()] = c as u32;
            i = c;
            steps += 1;
        }
        steps
    }
}

// ------------------------------------------------------------------------------ state

/// How a task's stored vruntime is to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Norm {
    /// Absolute on the run queue of `Se::cpu` (queued, or asleep after DEQUEUE_SLEEP).
    Abs,
    /// Relative to min_vruntime (after a non-sleep dequeue, fork, or a class switch).
    Rel,
    /// A start-up task that has not been placed yet (placed with START_DEBIT on its
    /// first enqueue, as `task_fork_fair` would on the CPU it starts on).
    Fresh,
}

/// Per-task CFS state (`struct sched_entity`).
#[derive(Clone, Copy, Debug)]
struct Se {
    vruntime: i64,
    norm: Norm,
    weight: u32,
    inv_weight: u32,
    on_rq: bool,
    cpu: CpuId,
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
            norm: Norm::Rel,
            weight: NICE_0_LOAD as u32,
            inv_weight: SCHED_PRIO_TO_WMULT[20],
            on_rq: false,
            cpu: CpuId(0),
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: NEVER,
            idle_policy: false,
            normal_policy: true,
            fork_wake: false,
        }
    }
}

/// Per-CPU fair run queue (`struct cfs_rq`).
#[derive(Clone)]
struct CfsRq {
    tl: Timeline,
    /// The running fair entity (kept out of the timeline).
    curr: Option<TaskId>,
    /// Queued entities including curr.
    nr_running: u32,
    /// Queued SCHED_IDLE entities (`idle_h_nr_running`).
    nr_idle: u32,
    /// Sum of queued weights (`load.weight`, unscaled).
    load: u64,
    min_vruntime: i64,
    next: Option<TaskId>,
    last: Option<TaskId>,
    skip: Option<TaskId>,
}

impl CfsRq {
    fn new() -> Self {
        CfsRq {
            tl: Timeline::default(),
            curr: None,
            nr_running: 0,
            nr_idle: 0,
            load: 0,
            min_vruntime: 0,
            next: None,
            last: None,
            skip: None,
        }
    }
}

/// The CFS class (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE).
pub struct LinuxCfs {
    rqs: Vec<CfsRq>,
    se: Vec<Se>,
    /// Timeline positions, indexed by TaskId.
    hpos: Vec<u32>,
    seq: u64,
    nr_cpus: usize,
    params: CfsParams,
    tun: CfsTunables,
    /// Placement and load balancing (shared with EEVDF), with v5.4's `sd_init`.
    smp: FairSmp,
}

impl LinuxCfs {
    /// A fair class for a machine with `nr_cpus` CPUs (the tunables are scaled for it).
    pub fn new(nr_cpus: usize) -> Self {
        let nr_cpus = nr_cpus.max(1);
        let mut s = LinuxCfs {
            rqs: vec![CfsRq::new(); nr_cpus],
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
            smp: FairSmp::new(SdEra::V5_4),
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
        self.smp.params = p.fair.clone();
    }

    /// The effective tunables.
    pub fn tunables(&self) -> &CfsTunables {
        &self.tun
    }

    /// `__sched_period(nr_running)`.
    pub fn sched_period(&self, nr_running: u64) -> u64 {
        if nr_running > self.tun.nr_latency {
            nr_running * self.tun.min_granularity
        } else {
            self.tun.latency
        }
    }

    /// `sched_slice(cfs_rq_of(t), t)` on `cpu` (t need not be queued there: a not-queued
    /// entity is counted in, as in the kernel).
    pub fn sched_slice(&self, cpu: CpuId, t: TaskId) -> u64 {
        let rq = &self.rqs[cpu.idx()];
        let se = &self.se[t.idx()];
        let on_rq = se.on_rq && se.cpu == cpu;
        let nr = rq.nr_running as u64 + u64::from(!on_rq);
        let load = rq.load + if on_rq { 0 } else { se.weight as u64 };
        calc_delta(self.sched_period(nr), se.weight as u64, load, 0)
    }

    /// `sched_vslice`.
    pub fn sched_vslice(&self, cpu: CpuId, t: TaskId) -> u64 {
        let se = &self.se[t.idx()];
        calc_delta_fair(self.sched_slice(cpu, t), se.weight, se.inv_weight)
    }

    /// A task's vruntime as stored (absolute if queued or asleep, relative to
    /// min_vruntime otherwise).
    pub fn vruntime(&self, t: TaskId) -> i64 {
        self.se.get(t.idx()).map_or(0, |s| s.vruntime)
    }

    /// `cfs_rq->min_vruntime` of `cpu`.
    pub fn min_vruntime(&self, cpu: CpuId) -> i64 {
        self.rqs[cpu.idx()].min_vruntime
    }

    /// The running fair task of `cpu` (`cfs_rq->curr`).
    pub fn cfs_curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.idx()].curr
    }

    /// Queued fair tasks of `cpu`, running one included (`cfs_rq->nr_running`).
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs[cpu.idx()].nr_running
    }

    /// Sum of queued weights of `cpu` (`cfs_rq->load.weight`).
    pub fn load(&self, cpu: CpuId) -> u64 {
        self.rqs[cpu.idx()].load
    }

    /// The timeline of `cpu` in pick order (leftmost first).
    pub fn timeline(&self, cpu: CpuId) -> Vec<(i64, TaskId)> {
        let mut v: Vec<Node> = self.rqs[cpu.idx()].tl.h.clone();
        v.sort_by_key(|n| (n.vr, n.seq));
        v.into_iter().map(|n| (n.vr, n.t)).collect()
    }

    /// The (skip, last, next) buddies of `cpu`.
    pub fn buddies(&self, cpu: CpuId) -> (Option<TaskId>, Option<TaskId>, Option<TaskId>) {
        let rq = &self.rqs[cpu.idx()];
        (rq.skip, rq.last, rq.next)
    }

    fn ensure(&mut self, ctx: &Ctx, t: TaskId) {
        if self.se.len() <= t.idx() {
            let n = (t.idx() + 1).max(ctx.nr_tasks());
            self.se.resize(n, Se::default());
            self.hpos.resize(n, NIL);
        }
        if self.rqs.len() < ctx.nr_cpus() {
            self.rqs.resize(ctx.nr_cpus(), CfsRq::new());
        }
    }

    /// Refresh weight and policy flags from the task's attributes (`set_load_weight`).
    fn refresh_weight(&mut self, ctx: &Ctx, t: TaskId) {
        let a = ctx.task(t).attrs;
        let (w, inv) = weight_of(&a);
        let se = &mut self.se[t.idx()];
        se.weight = w;
        se.inv_weight = inv;
        se.idle_policy = a.policy == Policy::Idle;
        se.normal_policy = a.policy == Policy::Other;
    }

    fn tl_insert(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.seq += 1;
        let n = Node {
            vr: self.se[t.idx()].vruntime,
            seq: self.seq,
            t,
        };
        let w = self.rqs[cpu.idx()].tl.insert(&mut self.hpos, n);
        ctx.count_work(w);
    }

    fn tl_remove(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let w = self.rqs[cpu.idx()].tl.remove(&mut self.hpos, t);
        ctx.count_work(w);
    }

    /// `update_min_vruntime`.
    fn update_min_vruntime(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.idx()];
        let curr = rq.curr.filter(|c| self.se[c.idx()].on_rq);
        let mut v = rq.min_vruntime;
        if let Some(c) = curr {
            v = self.se[c.idx()].vruntime;
        }
        if let Some(l) = rq.tl.first() {
            v = if curr.is_some() { v.min(l.vr) } else { l.vr };
        }
        rq.min_vruntime = rq.min_vruntime.max(v);
    }

    /// `place_entity(cfs_rq, se, initial)`.
    fn place_entity(&mut self, cpu: CpuId, t: TaskId, initial: bool) {
        let mut v = self.rqs[cpu.idx()].min_vruntime;
        if initial && self.tun.start_debit {
            v += self.sched_vslice(cpu, t) as i64;
        }
        if !initial {
            let mut thresh = self.tun.latency as i64;
            if self.tun.gentle_fair_sleepers {
                thresh >>= 1;
            }
            v -= thresh;
        }
        let se = &mut self.se[t.idx()];
        se.vruntime = se.vruntime.max(v);
    }

    /// `wakeup_preempt_entity(curr, se)`: -1 (se is not left of curr), 0 (left, within
    /// the wakee-weighted granularity) or 1 (further left: preempt).
    pub fn wakeup_preempt_entity(&self, curr: TaskId, se: TaskId) -> i32 {
        let c = &self.se[curr.idx()];
        let s = &self.se[se.idx()];
        let vdiff = c.vruntime - s.vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let gran = calc_delta_fair(self.tun.wakeup_granularity, s.weight, s.inv_weight) as i64;
        i32::from(vdiff > gran)
    }

    fn clear_buddies(&mut self, cpu: CpuId, t: TaskId) {
        let rq = &mut self.rqs[cpu.idx()];
        for b in [&mut rq.next, &mut rq.last, &mut rq.skip] {
            if *b == Some(t) {
                *b = None;
            }
        }
    }

    /// `account_entity_enqueue`.
    fn account_enqueue(&mut self, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        se.on_rq = true;
        se.cpu = cpu;
        se.norm = Norm::Abs;
        let rq = &mut self.rqs[cpu.idx()];
        rq.nr_running += 1;
        rq.load += se.weight as u64;
        rq.nr_idle += u32::from(se.idle_policy);
    }

    /// `account_entity_dequeue`.
    fn account_dequeue(&mut self, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        se.on_rq = false;
        let rq = &mut self.rqs[cpu.idx()];
        rq.nr_running -= 1;
        rq.load -= se.weight as u64;
        rq.nr_idle -= u32::from(se.idle_policy);
    }

    /// `check_preempt_tick`.
    fn check_preempt_tick(&mut self, ctx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let ideal = self.sched_slice(cpu, curr);
        let se = self.se[curr.idx()];
        let delta_exec = se.sum_exec - se.prev_sum_exec;
        if delta_exec > ideal {
            ctx.resched(cpu);
            self.clear_buddies(cpu, curr);
            return;
        }
        if delta_exec < self.tun.min_granularity {
            return;
        }
        let Some(left) = self.rqs[cpu.idx()].tl.first() else {
            return;
        };
        let delta = se.vruntime - left.vr;
        if delta < 0 {
            return;
        }
        if delta > ideal as i64 {
            ctx.resched(cpu);
        }
    }

    /// `check_preempt_wakeup` for a fair wakee `t` on `cpu` whose current is fair.
    fn check_preempt_wakeup(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = self.rqs[cpu.idx()].curr else {
            if ctx.curr(cpu).is_none() {
                ctx.resched(cpu);
            }
            return;
        };
        if curr == t {
            return;
        }
        let scale = self.rqs[cpu.idx()].nr_running as u64 >= self.tun.nr_latency;
        let fork = std::mem::replace(&mut self.se[t.idx()].fork_wake, false);
        let pse = self.se[t.idx()];
        let cse = self.se[curr.idx()];
        let mut next_marked = false;
        if self.tun.next_buddy && scale && !fork && !pse.idle_policy {
            self.rqs[cpu.idx()].next = Some(t);
            next_marked = true;
        }
        let preempt = if cse.idle_policy && !pse.idle_policy {
            // Idle tasks are by definition preempted by non-idle tasks.
            true
        } else if !pse.normal_policy || !self.tun.wakeup_preemption {
            // Batch and idle wakees never preempt (the tick does).
            false
        } else if self.wakeup_preempt_entity(curr, t) == 1 {
            if !next_marked && !pse.idle_policy {
                self.rqs[cpu.idx()].next = Some(t);
            }
            true
        } else {
            false
        };
        if !preempt {
            return;
        }
        ctx.resched(cpu);
        if !cse.on_rq {
            return;
        }
        if self.tun.last_buddy && scale && !cse.idle_policy {
            self.rqs[cpu.idx()].last = Some(curr);
        }
    }

    /// `detach_task` + `attach_task` for a queued, not running task: move it between
    /// run queues with its vruntime renormalised (`dequeue_entity`/`enqueue_entity` with
    /// flags 0).
    fn move_task(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.clear_buddies(src, t);
        self.tl_remove(ctx, src, t);
        self.account_dequeue(src, t);
        let se = &mut self.se[t.idx()];
        se.vruntime =
            se.vruntime - self.rqs[src.idx()].min_vruntime + self.rqs[dst.idx()].min_vruntime;
        se.exec_start = NEVER;
        self.update_min_vruntime(src);
        ctx.set_task_cpu(t, dst);
        self.account_enqueue(dst, t);
        self.tl_insert(ctx, dst, t);
    }

}

impl Scheduler for LinuxCfs {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-cfs-fair",
            summary: "Linux CFS fair class (pre-EEVDF, v5.4): vruntime, min_vruntime, \
                      latency-based slices, buddies, pull load balancing",
            source: "torvalds/linux kernel/sched/fair.c (v5.7-era stored copy 00061968; CFS core \
                     as in v5.4): place_entity, check_preempt_tick, pick_next_entity, \
                     check_preempt_wakeup, task_fork_fair, load_balance; core.c \
                     sched_prio_to_weight/wmult",
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

    /// `task_fork_fair` for a forked task (the child starts at the parent's vruntime,
    /// placed with START_DEBIT, stored relative); a start-up task is placed on its first
    /// enqueue instead.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        self.ensure(ctx, t);
        self.refresh_weight(ctx, t);
        let se = &mut self.se[t.idx()];
        se.on_rq = false;
        se.sum_exec = 0;
        se.prev_sum_exec = 0;
        se.exec_start = NEVER;
        se.vruntime = 0;
        let Some(p) = parent else {
            se.norm = Norm::Fresh;
            return;
        };
        let cpu = ctx.task(p).cpu;
        self.ensure(ctx, p);
        let curr = self.rqs[cpu.idx()].curr;
        if let Some(c) = curr {
            self.se[t.idx()].vruntime = self.se[c.idx()].vruntime;
        }
        self.place_entity(cpu, t, true);
        if self.tun.child_runs_first {
            if let Some(c) = curr {
                if self.se[c.idx()].vruntime < self.se[t.idx()].vruntime {
                    let cv = self.se[c.idx()].vruntime;
                    self.se[c.idx()].vruntime = self.se[t.idx()].vruntime;
                    self.se[t.idx()].vruntime = cv;
                    ctx.resched(cpu);
                }
            }
        }
        let se = &mut self.se[t.idx()];
        se.vruntime -= self.rqs[cpu.idx()].min_vruntime;
        se.norm = Norm::Rel;
        se.cpu = cpu;
    }

    /// `task_dead_fair`.
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        for rq in &mut self.rqs {
            if rq.curr == Some(t) {
                rq.curr = None;
            }
        }
    }

    /// `select_task_rq_fair` (cpu/fair/placement.rs).
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        self.ensure(ctx, t);
        let mut smp = std::mem::take(&mut self.smp);
        let cpu = smp.select_task_rq(ctx, self, t, prev, kind);
        self.smp = smp;
        cpu
    }

    /// `enqueue_task_fair` → `enqueue_entity`: renormalise a vruntime that is relative or
    /// belongs to another CPU's queue, account the weight, `place_entity` a waking task,
    /// insert into the timeline unless it is the running entity.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.ensure(ctx, t);
        self.refresh_weight(ctx, t);
        let se = self.se[t.idx()];
        debug_assert!(!se.on_rq, "fair enqueue of queued {t:?}");
        let min = self.rqs[cpu.idx()].min_vruntime;
        match se.norm {
            Norm::Rel => self.se[t.idx()].vruntime += min,
            Norm::Abs if se.cpu != cpu => {
                // migrate_task_rq_fair (-= old min_vruntime) + ENQUEUE_MIGRATED (+= new).
                let old = self.rqs[se.cpu.idx()].min_vruntime;
                self.se[t.idx()].vruntime += min - old;
                self.se[t.idx()].exec_start = NEVER;
            }
            Norm::Abs => {}
            Norm::Fresh => {
                self.se[t.idx()].vruntime = 0;
                self.place_entity(cpu, t, true);
            }
        }
        self.account_enqueue(cpu, t);
        if kind == EnqueueKind::Wakeup {
            self.place_entity(cpu, t, false);
        }
        self.se[t.idx()].fork_wake = kind == EnqueueKind::New;
        if self.rqs[cpu.idx()].curr != Some(t) {
            self.tl_insert(ctx, cpu, t);
        }
    }

    /// `dequeue_task_fair` → `dequeue_entity`: a sleeping task keeps its absolute
    /// vruntime, any other dequeue makes it relative to min_vruntime; min_vruntime moves
    /// on except for DEQUEUE_SAVE.
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.ensure(ctx, t);
        if !self.se[t.idx()].on_rq {
            return;
        }
        self.clear_buddies(cpu, t);
        if self.rqs[cpu.idx()].curr != Some(t) {
            self.tl_remove(ctx, cpu, t);
        }
        self.account_dequeue(cpu, t);
        match kind {
            DequeueKind::Sleep | DequeueKind::Exit => {
                self.se[t.idx()].norm = Norm::Abs;
                self.update_min_vruntime(cpu);
            }
            DequeueKind::Save => {
                let min = self.rqs[cpu.idx()].min_vruntime;
                let se = &mut self.se[t.idx()];
                se.vruntime -= min;
                se.norm = Norm::Rel;
            }
        }
    }

    /// `check_preempt_wakeup`.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        self.check_preempt_wakeup(ctx, cpu, t);
    }

    /// `put_prev_task_fair` → `put_prev_entity`: a still-queued entity goes back into the
    /// timeline.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        if self.rqs[cpu.idx()].curr == Some(t) {
            self.rqs[cpu.idx()].curr = None;
            if self.se[t.idx()].on_rq {
                self.tl_insert(ctx, cpu, t);
            }
        }
        self.se[t.idx()].exec_start = ctx.now();
    }

    /// `pick_next_task_fair` → `pick_next_entity` + `set_next_entity`.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if cpu.idx() >= self.rqs.len() {
            return None;
        }
        if let Some(c) = self.rqs[cpu.idx()].curr.take() {
            // Not put back by put_prev (e.g. it changed class while running).
            if self.se[c.idx()].on_rq {
                self.tl_insert(ctx, cpu, c);
            }
        }
        let left = self.rqs[cpu.idx()].tl.first()?;
        let mut pick = left.t;
        let rq = &self.rqs[cpu.idx()];
        if rq.skip == Some(left.t) {
            if let Some(second) = rq.tl.second() {
                if self.wakeup_preempt_entity(second.t, left.t) < 1 {
                    pick = second.t;
                }
            }
        }
        if let Some(l) = rq.last {
            if self.wakeup_preempt_entity(l, left.t) < 1 {
                pick = l;
            }
        }
        if let Some(nx) = rq.next {
            if self.wakeup_preempt_entity(nx, left.t) < 1 {
                pick = nx;
            }
        }
        self.clear_buddies(cpu, pick);
        self.tl_remove(ctx, cpu, pick);
        self.rqs[cpu.idx()].curr = Some(pick);
        let se = &mut self.se[pick.idx()];
        se.prev_sum_exec = se.sum_exec;
        se.exec_start = ctx.now();
        Some(pick)
    }

    /// `update_curr`: sum_exec_runtime and vruntime advance, min_vruntime follows.
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        self.ensure(ctx, t);
        let in_tree = self.rqs[cpu.idx()].curr != Some(t) && self.se[t.idx()].on_rq;
        if in_tree {
            self.tl_remove(ctx, cpu, t);
        }
        let se = &mut self.se[t.idx()];
        se.sum_exec += delta_ns;
        se.vruntime += calc_delta_fair(delta_ns, se.weight, se.inv_weight) as i64;
        se.exec_start = ctx.now();
        if in_tree {
            self.tl_insert(ctx, cpu, t);
        }
        self.update_min_vruntime(cpu);
    }

    /// `task_tick_fair` → `entity_tick` → `check_preempt_tick` when more than one
    /// entity is queued.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.rqs[cpu.idx()].curr != Some(t) {
            return;
        }
        if self.rqs[cpu.idx()].nr_running > 1 {
            self.check_preempt_tick(ctx, cpu, t);
        }
    }

    /// `yield_task_fair`: become the skip buddy.
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        if self.rqs[cpu.idx()].nr_running <= 1 {
            return;
        }
        self.clear_buddies(cpu, t);
        self.rqs[cpu.idx()].skip = Some(t);
    }

    /// `prio_changed_fair` (the new weight itself is taken at the ENQUEUE_RESTORE, as
    /// `reweight_task` does while the entity is off the queue).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        self.ensure(ctx, t);
        let se = self.se[t.idx()];
        if !se.on_rq {
            return;
        }
        let cpu = se.cpu;
        if self.rqs[cpu.idx()].nr_running == 1 {
            return;
        }
        if self.rqs[cpu.idx()].curr == Some(t) {
            if ctx.task(t).attrs.prio() > old.prio() {
                ctx.resched(cpu);
            }
        } else {
            self.check_preempt_wakeup(ctx, cpu, t);
        }
    }

    /// Periodic (`rebalance_domains`, plus the NO_HZ idle balance it kicks) and newidle
    /// load balancing over the scheduling domains (cpu/fair/balance.rs).
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if cpu.idx() >= self.rqs.len() {
            return;
        }
        let mut smp = std::mem::take(&mut self.smp);
        smp.balance(ctx, self, cpu, kind);
        self.smp = smp;
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        let se = self.se.get(t.idx())?;
        let v = match se.norm {
            Norm::Abs => se.vruntime,
            Norm::Rel => se.vruntime + self.rqs.get(se.cpu.idx())?.min_vruntime,
            Norm::Fresh => return None,
        };
        Some(("vruntime", v))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (i, rq) in self.rqs.iter().enumerate() {
            for n in &rq.tl.h {
                f(CpuId(i as u32), n.t);
            }
        }
    }
}

impl SchedClass for LinuxCfs {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        matches!(attrs.policy, Policy::Other | Policy::Batch | Policy::Idle)
    }

    fn has_queued(&self, cpu: CpuId) -> bool {
        self.rqs.get(cpu.idx()).is_some_and(|rq| rq.nr_running > 0)
    }

    /// `switched_from_fair` → `detach_task_cfs_rq`: keep the vruntime relative to
    /// min_vruntime while the task is in another class.
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        let se = self.se[t.idx()];
        if self.rqs[se.cpu.idx()].curr == Some(t) {
            self.rqs[se.cpu.idx()].curr = None;
        }
        if !se.on_rq && se.norm == Norm::Abs {
            let min = self.rqs[se.cpu.idx()].min_vruntime;
            let s = &mut self.se[t.idx()];
            s.vruntime -= min;
            s.norm = Norm::Rel;
        }
    }

    /// `switched_to_fair` → `attach_task_cfs_rq`: the relative vruntime is made absolute
    /// on the next enqueue.
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        self.refresh_weight(ctx, t);
    }
}

impl FairRq for LinuxCfs {
    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs.get(cpu.idx()).map_or(0, |rq| rq.nr_running)
    }

    fn idle_h_nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs.get(cpu.idx()).map_or(0, |rq| rq.nr_idle)
    }

    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.rqs.get(cpu.idx()).map_or(0, |rq| rq.load)
    }

    fn task_load(&self, t: TaskId) -> u64 {
        self.se.get(t.idx()).map_or(NICE_0_LOAD, |se| se.weight as u64)
    }

    /// The timeline array from its end (the kernel walks `cfs_tasks` from its
    /// least-recently-run tail; the array order stands in for it).
    fn migration_candidates(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        out.extend(self.rqs[cpu.idx()].tl.h.iter().rev().map(|n| n.t));
    }

    fn exec_start(&self, t: TaskId) -> Option<u64> {
        let s = self.se[t.idx()].exec_start;
        (s != NEVER).then_some(s)
    }

    /// CACHE_HOT_BUDDY: a next or last buddy is cache-hot.
    fn is_buddy(&self, cpu: CpuId, t: TaskId) -> bool {
        let rq = &self.rqs[cpu.idx()];
        self.tun.cache_hot_buddy && (rq.next == Some(t) || rq.last == Some(t))
    }

    fn move_queued(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.move_task(ctx, t, src, dst);
    }

    /// `check_preempt_curr`: an idle CPU reschedules; a fair current task is checked with
    /// `check_preempt_wakeup`; a higher class's is never preempted.
    fn attach_preempt(&mut self, ctx: &mut Ctx, dst: CpuId, t: TaskId) {
        if ctx.curr(dst).is_none() {
            ctx.resched(dst);
        } else if self.rqs[dst.idx()].curr.is_some() {
            self.check_preempt_wakeup(ctx, dst, t);
        }
    }
}

// ------------------------------------------------------------------------------ policy

/// The `linux-cfs` policy: the RT class above CFS.
pub type LinuxCfsStack = Stacked<LinuxRt, LinuxCfs>;

/// Summary line of the `linux-cfs` policy.
pub const LINUX_CFS_SUMMARY: &str =
    "Linux v5.4 CFS with SCHED_FIFO/RR above it (rt > fair class stack), SMP push/pull and \
     load balancing";

/// Source citation of the `linux-cfs` policy.
pub const LINUX_CFS_SOURCE: &str = "torvalds/linux kernel/sched/fair.c (v5.7-era copy 00061968, \
     CFS core = v5.4: place_entity, check_preempt_tick, pick_next_entity, check_preempt_wakeup, \
     task_fork_fair, load_balance), kernel/sched/rt.c (v5.10-era copy 00d6a8a7), core.c \
     sched_prio_to_weight/wmult and pick_next_task";

/// The `linux-cfs` policy for a machine with `nr_cpus` CPUs.
pub fn linux_cfs(nr_cpus: usize) -> LinuxCfsStack {
    Stacked::new(
        LinuxRt::new(nr_cpus),
        LinuxCfs::new(nr_cpus),
        StackMeta {
            name: "linux-cfs",
            summary: LINUX_CFS_SUMMARY,
            source: LINUX_CFS_SOURCE,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::{mask_of_bits, Driver, Op};
    use crate::protocol::SchedCore;
    use crate::types::CpuMask;
    use crate::types::{fair, rt};
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// Put `t` on `cpu`'s timeline with a chosen vruntime (bypassing placement).
    fn queue_at(s: &mut LinuxCfs, ctx: &mut Ctx, cpu: CpuId, t: TaskId, vr: i64) {
        s.ensure(ctx, t);
        s.refresh_weight(ctx, t);
        s.se[t.idx()].vruntime = vr;
        s.account_enqueue(cpu, t);
        s.tl_insert(ctx, cpu, t);
    }

    /// Make `t` (queued) the running entity of `cpu`.
    fn run_it(s: &mut LinuxCfs, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        s.tl_remove(ctx, cpu, t);
        s.rqs[cpu.idx()].curr = Some(t);
        let se = &mut s.se[t.idx()];
        se.prev_sum_exec = se.sum_exec;
        ctx.set_curr_for_test(cpu, Some(t));
    }

    fn one_cpu() -> (Ctx, LinuxCfs, CpuId, CpuMask) {
        (
            Ctx::for_test(1, 1000),
            LinuxCfs::new(1),
            CpuId(0),
            CpuMask::first_n(1),
        )
    }

    #[test]
    fn wakeup_preemption_exactly_at_granularity() {
        // 1 CPU: factor 1, wakeup_granularity = 1 ms; a nice-0 wakee's gran is 1 ms of
        // vruntime, a nice-5 wakee's is calc_delta_fair(1 ms) = 3056716.
        for (nice, gran) in [(0, 1_000_000i64), (5, 3_056_716)] {
            for (extra, expect) in [(0i64, false), (1, true)] {
                let (mut ctx, mut s, c0, one) = one_cpu();
                let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
                let b = ctx.add_task_for_test(fair(Policy::Other, nice), one);
                queue_at(&mut s, &mut ctx, c0, a, 50 * MS as i64);
                run_it(&mut s, &mut ctx, c0, a);
                queue_at(&mut s, &mut ctx, c0, b, 50 * MS as i64 - gran - extra);
                s.wakeup_preempt(&mut ctx, c0, b);
                assert_eq!(
                    ctx.resched_mask.contains(c0),
                    expect,
                    "nice {nice}: vdiff = gran + {extra}"
                );
                assert_eq!(s.wakeup_preempt_entity(a, b), i32::from(expect));
                if expect {
                    assert_eq!(
                        s.buddies(c0).2,
                        Some(b),
                        "the preempting wakee is next buddy"
                    );
                }
            }
        }
    }

    #[test]
    fn batch_never_wake_preempts_and_idle_is_always_preempted() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        let b = ctx.add_task_for_test(fair(Policy::Batch, 0), one);
        queue_at(&mut s, &mut ctx, c0, a, 100 * MS as i64);
        run_it(&mut s, &mut ctx, c0, a);
        queue_at(&mut s, &mut ctx, c0, b, 0);
        s.wakeup_preempt(&mut ctx, c0, b);
        assert!(
            !ctx.resched_mask.contains(c0),
            "SCHED_BATCH wakee must not preempt"
        );

        let (mut ctx, mut s, c0, one) = one_cpu();
        let idle = ctx.add_task_for_test(fair(Policy::Idle, 0), one);
        let n = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        queue_at(&mut s, &mut ctx, c0, idle, 0);
        run_it(&mut s, &mut ctx, c0, idle);
        queue_at(&mut s, &mut ctx, c0, n, 100 * MS as i64);
        s.wakeup_preempt(&mut ctx, c0, n);
        assert!(
            ctx.resched_mask.contains(c0),
            "a SCHED_IDLE curr is always preempted"
        );
        assert_eq!(weight_of(&fair(Policy::Idle, -20)), (3, WMULT_IDLEPRIO));
    }

    #[test]
    fn tick_preempts_when_ran_exceeds_ideal_slice() {
        // Two nice-0 tasks on 1 CPU: ideal = sched_slice = 2999998 ns.
        for (ran, expect) in [(2_999_998u64, false), (2_999_999, true)] {
            let (mut ctx, mut s, c0, one) = one_cpu();
            let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
            let b = ctx.add_task_for_test(fair(Policy::Other, 0), one);
            queue_at(&mut s, &mut ctx, c0, a, 0);
            queue_at(&mut s, &mut ctx, c0, b, 0);
            run_it(&mut s, &mut ctx, c0, a);
            assert_eq!(s.sched_slice(c0, a), 2_999_998);
            s.se[a.idx()].sum_exec += ran; // ran without vruntime moving ahead of b
            s.tick(&mut ctx, c0, a);
            assert_eq!(ctx.resched_mask.contains(c0), expect, "ran {ran}");
        }
        // Second rule: ran >= min_granularity and curr is more than `ideal` right of the
        // leftmost entity.
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        let b = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        queue_at(&mut s, &mut ctx, c0, a, 10 * MS as i64);
        queue_at(&mut s, &mut ctx, c0, b, 0);
        run_it(&mut s, &mut ctx, c0, a);
        s.se[a.idx()].sum_exec += 749_999;
        s.tick(&mut ctx, c0, a);
        assert!(!ctx.resched_mask.contains(c0), "below min_granularity");
        s.se[a.idx()].sum_exec += 1;
        s.tick(&mut ctx, c0, a);
        assert!(ctx.resched_mask.contains(c0), "vruntime lead > ideal");
    }

    #[test]
    fn yield_uses_the_skip_buddy() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        let b = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        queue_at(&mut s, &mut ctx, c0, a, 0);
        queue_at(&mut s, &mut ctx, c0, b, 500_000); // within gran of a
        run_it(&mut s, &mut ctx, c0, a);
        s.yield_task(&mut ctx, c0, a);
        assert_eq!(s.buddies(c0).0, Some(a));
        s.put_prev(&mut ctx, c0, a);
        assert_eq!(s.pick_next(&mut ctx, c0), Some(b), "the yielder is skipped");
        // Further than gran: the leftmost runs even though it yielded.
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        let b = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        queue_at(&mut s, &mut ctx, c0, a, 0);
        queue_at(&mut s, &mut ctx, c0, b, 1_000_001);
        run_it(&mut s, &mut ctx, c0, a);
        s.yield_task(&mut ctx, c0, a);
        s.put_prev(&mut ctx, c0, a);
        assert_eq!(s.pick_next(&mut ctx, c0), Some(a));
    }

    #[test]
    fn child_runs_first_swaps_with_the_parent() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        s.set_param("sched_child_runs_first", "1").unwrap();
        let p = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        let c = ctx.add_task_for_test(fair(Policy::Other, 0), one);
        queue_at(&mut s, &mut ctx, c0, p, 0);
        run_it(&mut s, &mut ctx, c0, p);
        s.update_curr(&mut ctx, c0, p, MS);
        let pv = s.vruntime(p);
        s.task_new(&mut ctx, c, Some(p));
        assert!(ctx.resched_mask.contains(c0));
        // The parent took the child's START_DEBIT place; the child the parent's.
        assert_eq!(s.vruntime(c) + s.min_vruntime(c0), pv);
        assert!(s.vruntime(p) > pv);
    }

    // --------------------------------------------------------------- random operations

    /// What the `linux-cfs` stack must keep true after every operation, beyond what every
    /// policy must (`Driver::check`): monotonic min_vruntime, CFS's counts and load, the
    /// running entity out of the timeline, RT push/pull settled, RT work never waiting
    /// behind fair work.
    fn check_stack(core: &SchedCore<LinuxCfsStack>, last_min: &mut [i64]) {
        let ctx = &core.ctx;
        let n = ctx.nr_tasks();
        let cfs = &core.policy.lo;
        for (c, last) in last_min.iter_mut().enumerate() {
            let cpu = CpuId(c as u32);
            let mv = cfs.min_vruntime(cpu);
            assert!(mv >= *last, "min_vruntime of cpu {c} went backwards");
            *last = mv;
            let (mut nr, mut load) = (0u32, 0u64);
            for i in 0..n {
                let v = ctx.task(TaskId(i as u32));
                if v.on_rq && v.cpu == cpu && cfs.owns(&v.attrs) {
                    nr += 1;
                    load += weight_of(&v.attrs).0 as u64;
                }
            }
            assert_eq!(cfs.nr_running(cpu), nr, "cfs nr_running of cpu {c}");
            assert_eq!(cfs.load(cpu), load, "cfs load of cpu {c}");
            // The running fair task is never in the tree.
            if let Some(cur) = cfs.cfs_curr(cpu) {
                assert!(cfs.timeline(cpu).iter().all(|&(_, t)| t != cur));
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
            if core.policy.hi.has_queued(cpu) {
                let cur = ctx.curr(cpu).expect("RT work queued on an idle CPU");
                assert!(
                    ctx.task(cur).attrs.prio() < 100,
                    "fair task runs over queued RT"
                );
            }
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0usize..12).prop_map(Op::Wake),
            4 => (1u64..5_000_000).prop_map(Op::Advance),
            2 => (0usize..4).prop_map(Op::Block),
            1 => (0usize..4).prop_map(Op::Yield),
            3 => Just(Op::Tick),
            1 => ((0usize..4), 0u8..5, -20i32..20)
                .prop_map(|(c, p, v)| Op::Change(c, attrs_for(p, v))),
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(std::env::var("SCHEDLAB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)))]
        #[test]
        fn stack_keeps_queues_consistent_and_min_vruntime_monotonic(
            ncpu in 1usize..4,
            tasks in proptest::collection::vec((0u8..5, -20i32..20, 1u32..16), 1..12),
            ops in proptest::collection::vec(op(), 1..250),
        ) {
            let specs: Vec<(SchedAttrs, CpuMask)> = tasks
                .iter()
                .map(|&(k, v, m)| (attrs_for(k, v), mask_of_bits(m)))
                .collect();
            let mut d = Driver::new(linux_cfs(ncpu), ncpu, 250, &specs);
            let mut last_min = vec![i64::MIN; ncpu];
            for o in ops {
                d.apply(o);
                d.check();
                check_stack(&d.core, &mut last_min);
            }
        }
    }
}

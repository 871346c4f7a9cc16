//! Linux EEVDF (Earliest Eligible Virtual Deadline First, the fair class of Linux 6.6+) as a
//! scheduling class, and the `linux-eevdf` policy: `Stacked<LinuxRt, LinuxEevdf>` (rt > fair).
//!
//! Primary source: torvalds/linux `kernel/sched/fair.c` of a 6.6–6.9 tree, read through the
//! search index (file id 2155571; a 6.7/6.8-era revision: it has `vruntime_eligible`, `__pick_root_entity` and the
//! ENFORCE_ELIGIBILITY feature):
//! `avg_vruntime_add`/`avg_vruntime_sub`/`avg_vruntime_update`, `avg_vruntime`,
//! `entity_lag`/`update_entity_lag`, `entity_eligible`/`vruntime_eligible`,
//! `__update_min_vruntime`/`update_min_vruntime`, `pick_eevdf` (RUN_TO_PARITY through the
//! `vlag == deadline` stash of `set_next_entity`), `update_deadline`, `update_curr`,
//! `place_entity` (PLACE_LAG, PLACE_DEADLINE_INITIAL), `enqueue_entity`/`dequeue_entity`,
//! `check_preempt_wakeup_fair` (6.6 name `check_preempt_wakeup`), `yield_task_fair`,
//! `reweight_entity` (6.7+: a dequeued entity's `vlag` is scaled by `w_old / w_new`),
//! `prio_changed_fair`; sysctl `sysctl_sched_base_slice` (0.75 ms normalised, scaled like the
//! CFS tunables by `get_update_sysctl_factor`); features from `kernel/sched/features.h`;
//! PREEMPT_SHORT from 6.12 `check_preempt_wakeup_fair`. Weights, `calc_delta_fair` (the
//! kernel's 32-bit fixed point) and `get_update_sysctl_factor` are the fair classes'
//! (`cpu/fair/weights.rs`), and so are placement and load balancing (`cpu/fair/`). The algorithm: I. Stoica, H. Abdel-Wahab, "Earliest Eligible
//! Virtual Deadline First: A Flexible and Accurate Mechanism for Proportional Share Resource
//! Allocation", Old Dominion Univ. TR-95-22, 1995. Written from the specification; no
//! kernel code is copied.
//!
//! What is modelled exactly: the weighted average virtual time
//! `V = v0 + floor(Σ (v_i − v0)·w_i / Σ w_i)` with `v0 = min_vruntime` (kept incrementally
//! in `avg_vruntime`/`avg_load` over the tree, the running entity added on the fly, and
//! shifted when min_vruntime advances); eligibility `avg_vruntime ≥ (v_i − v0)·load`
//! computed exactly (128-bit); the lag `V − v_i` clamped to
//! `±calc_delta_fair(max(2·slice, TICK_NSEC))` and saved at every dequeue; virtual deadlines
//! `vd = v + calc_delta_fair(slice)`; `update_deadline` (request consumed ⇒ new deadline and
//! a reschedule if more than one entity is queued; there is no tick preemption otherwise);
//! `pick_eevdf` (earliest eligible deadline, RUN_TO_PARITY, prefer curr when it is eligible
//! and its deadline is earlier); wake-up preemption iff `pick_eevdf` would pick the wakee
//! (SCHED_IDLE/SCHED_BATCH rules as in the kernel); `place_entity` with PLACE_LAG (the saved
//! lag inflated by `(W + w)/W`, truncating division as `div_s64`) and PLACE_DEADLINE_INITIAL
//! (half a slice for a new task); yield (`deadline += calc_delta_fair(slice)`); a nice
//! change preserves the entity's real lag (`vlag·w_old/w_new`).
//!
//! `dynamic_prio` reports `("deadline", vd)`: the virtual deadline (ns of virtual time).
//!
//! Simplifications:
//! - DELAY_DEQUEUE / DELAY_ZERO (6.12) are optional features, off by default as in the
//!   6.6–6.9 tree (then a sleeping entity leaves the queue at once and keeps its clamped
//!   lag). With `delay_dequeue=1` a task that blocks while not eligible stays in the tree
//!   (counted in V, load and nr_running, hidden from `for_each_queued`, not migrated by the
//!   balancer) until `pick_next` selects it (its dequeue then completes and another entity
//!   is picked) or it wakes: on its CPU it is requeued keeping v and vd (DELAY_ZERO:
//!   re-placed with zero lag if its lag turned positive); woken on another CPU, reweighted or
//!   switched to another class, its dequeue completes first. `select_cpu` keeps a delayed
//!   task on its CPU when allowed (`ttwu_runnable`). PELT/`h_nr_delayed` refinements are
//!   not modelled. PLACE_REL_DEADLINE (6.12) is not modelled: every enqueue (wake-up,
//!   migration, attribute change) gets a fresh deadline from `place_entity`, as in 6.6.
//!   NEXT_BUDDY (default off) is not modelled.
//! - No per-task slices (`sched_attr.sched_runtime`, 6.12): every request is
//!   `sched_base_slice_ns`, so PREEMPT_SHORT (a wakee with a shorter slice cancels the
//!   RUN_TO_PARITY protection) never fires; it is exposed as a feature for completeness.
//! - The `check_preempt_wakeup` "curr already has TIF_NEED_RESCHED" early exit uses
//!   `Ctx::need_resched`.
//! - `yield_task_fair`'s "only task on the rq" test counts only fair tasks.
//! - SMP: placement and load balancing over the scheduling domains are the fair classes'
//!   shared code (`cpu/fair/`, see there for what it leaves out: PELT, active balance),
//!   with 6.1's `sd_init` constants (busy_factor 16, imbalance_pct 117). A task that ran
//!   within `sched_migration_cost_ns` is cache-hot (`task_hot`; `exec_start` is kept for
//!   it); there are no buddies (NEXT_BUDDY is off). A migrated entity keeps its lag
//!   (dequeue saves it, `place_entity` on the destination restores it), which is how 6.6
//!   renormalises across CPUs.
//! - No group scheduling, bandwidth, or `sched_attr` slice requests. ENFORCE_ELIGIBILITY
//!   (a debug feature, default on) is always on.
//!
//! Complexity: the timeline is a treap (randomised balanced BST with deterministic
//! priorities) keyed by (deadline, insertion sequence) and augmented with the subtree-minimum
//! vruntime, as the kernel's augmented rb-tree: insert/remove/pick O(log n) expected. Its
//! nodes live in a table indexed by TaskId shared by all CPUs (a task is in at most one
//! tree), so nothing is allocated per event once the tables have grown. select_cpu is
//! O(CPUs); a balance pass O(CPUs + tasks on the busiest CPU) per domain.

use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

use super::fair::weights::{calc_delta_fair, sysctl_factor, weight_of};
use super::fair::{FairParams, FairRq, FairSmp, Scaled};
use crate::topology::SdEra;
use super::linux_rt::LinuxRt;
use super::stack::{SchedClass, StackMeta, Stacked};
use super::tunables::{self, Tunable};

/// `normalized_sysctl_sched_base_slice` (ns).
pub const NORMALIZED_BASE_SLICE: u64 = 750_000;

const NIL: u32 = u32::MAX;
/// `exec_start` of a task that never ran here or just migrated (never cache-hot).
const NEVER: u64 = u64::MAX;
/// "No RUN_TO_PARITY protection" (never equal to a real deadline).
const NO_PROTECT: i64 = i64::MIN;

// ------------------------------------------------------------------------------ timeline

/// A treap node (one per task): key (deadline, seq), augmented with the subtree minimum
/// vruntime (`se->min_vruntime`).
#[derive(Clone, Copy, Debug)]
struct Node {
    dl: i64,
    seq: u64,
    v: i64,
    minv: i64,
    l: u32,
    r: u32,
    pri: u64,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            dl: 0,
            seq: 0,
            v: 0,
            minv: 0,
            l: NIL,
            r: NIL,
            pri: 0,
        }
    }
}

#[inline]
fn key(n: &[Node], i: u32) -> (i64, u64) {
    let x = &n[i as usize];
    (x.dl, x.seq)
}

/// splitmix64: deterministic treap priorities.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `min_vruntime_update` (the augment callback).
#[inline]
fn pull(n: &mut [Node], i: u32) {
    let x = n[i as usize];
    let mut m = x.v;
    if x.l != NIL {
        m = m.min(n[x.l as usize].minv);
    }
    if x.r != NIL {
        m = m.min(n[x.r as usize].minv);
    }
    n[i as usize].minv = m;
}

/// Split `root` into (keys < k, keys ≥ k).
fn split(n: &mut [Node], root: u32, k: (i64, u64), w: &mut u64) -> (u32, u32) {
    if root == NIL {
        return (NIL, NIL);
    }
    *w += 1;
    if key(n, root) < k {
        let (a, b) = split(n, n[root as usize].r, k, w);
        n[root as usize].r = a;
        pull(n, root);
        (root, b)
    } else {
        let (a, b) = split(n, n[root as usize].l, k, w);
        n[root as usize].l = b;
        pull(n, root);
        (a, root)
    }
}

/// Merge two treaps, every key of `a` below every key of `b`.
fn merge(n: &mut [Node], a: u32, b: u32, w: &mut u64) -> u32 {
    if a == NIL {
        return b;
    }
    if b == NIL {
        return a;
    }
    *w += 1;
    if n[a as usize].pri > n[b as usize].pri {
        let r = merge(n, n[a as usize].r, b, w);
        n[a as usize].r = r;
        pull(n, a);
        a
    } else {
        let l = merge(n, a, n[b as usize].l, w);
        n[b as usize].l = l;
        pull(n, b);
        b
    }
}

fn t_insert(n: &mut [Node], root: u32, i: u32, w: &mut u64) -> u32 {
    *w += 1;
    if root == NIL {
        n[i as usize].l = NIL;
        n[i as usize].r = NIL;
        pull(n, i);
        return i;
    }
    if n[i as usize].pri > n[root as usize].pri {
        let (a, b) = split(n, root, key(n, i), w);
        n[i as usize].l = a;
        n[i as usize].r = b;
        pull(n, i);
        return i;
    }
    if key(n, i) < key(n, root) {
        let l = t_insert(n, n[root as usize].l, i, w);
        n[root as usize].l = l;
    } else {
        let r = t_insert(n, n[root as usize].r, i, w);
        n[root as usize].r = r;
    }
    pull(n, root);
    root
}

fn t_remove(n: &mut [Node], root: u32, i: u32, w: &mut u64) -> u32 {
    *w += 1;
    assert!(root != NIL, "treap: entity {i} not in this tree");
    if root == i {
        let (l, r) = (n[i as usize].l, n[i as usize].r);
        n[i as usize].l = NIL;
        n[i as usize].r = NIL;
        return merge(n, l, r, w);
    }
    if key(n, i) < key(n, root) {
        let l = t_remove(n, n[root as usize].l, i, w);
        n[root as usize].l = l;
    } else {
        let r = t_remove(n, n[root as usize].r, i, w);
        n[root as usize].r = r;
    }
    pull(n, root);
    root
}

/// In-order (deadline order) traversal.
fn t_walk(n: &[Node], i: u32, f: &mut dyn FnMut(u32)) {
    if i == NIL {
        return;
    }
    t_walk(n, n[i as usize].l, f);
    f(i);
    t_walk(n, n[i as usize].r, f);
}

// ------------------------------------------------------------------------------ state

/// Per-task EEVDF state (`struct sched_entity`).
#[derive(Clone, Copy, Debug)]
struct Se {
    vruntime: i64,
    deadline: i64,
    vlag: i64,
    /// The request size r_i (ns).
    slice: u64,
    weight: u32,
    inv_weight: u32,
    on_rq: bool,
    in_tree: bool,
    cpu: CpuId,
    /// Placed at least once (a task that never was is placed as new).
    placed: bool,
    idle_policy: bool,
    normal_policy: bool,
    /// RUN_TO_PARITY stash: the deadline the entity was picked with (the kernel keeps it
    /// in `vlag` while the entity runs).
    protect: i64,
    /// DELAY_DEQUEUE: blocked while not eligible, still queued here (`se->sched_delayed`).
    delayed: bool,
    /// When it last ran (`exec_start`), NEVER if it never ran here or just migrated.
    exec_start: u64,
}

impl Default for Se {
    fn default() -> Self {
        let (w, inv) = weight_of(&SchedAttrs {
            policy: Policy::Other,
            rt_priority: 0,
            nice: 0,
            dl: None,
        });
        Se {
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            slice: NORMALIZED_BASE_SLICE,
            weight: w,
            inv_weight: inv,
            on_rq: false,
            in_tree: false,
            cpu: CpuId(0),
            placed: false,
            idle_policy: false,
            normal_policy: true,
            protect: NO_PROTECT,
            delayed: false,
            exec_start: NEVER,
        }
    }
}

/// Per-CPU fair run queue (`struct cfs_rq`).
#[derive(Clone, Debug)]
struct EevdfRq {
    root: u32,
    curr: Option<TaskId>,
    /// Queued entities including curr.
    nr_running: u32,
    nr_idle: u32,
    /// Sum of queued weights including curr (`load.weight`).
    load: u64,
    min_vruntime: i64,
    /// Σ (v_i − min_vruntime)·w_i over the tree (curr excluded).
    avg_vruntime: i128,
    /// Σ w_i over the tree.
    avg_load: u64,
    /// Delayed-dequeue entities (counted in nr_running / nr_idle / load).
    nr_delayed: u32,
    nr_delayed_idle: u32,
}

impl EevdfRq {
    fn new() -> Self {
        EevdfRq {
            root: NIL,
            curr: None,
            nr_running: 0,
            nr_idle: 0,
            load: 0,
            min_vruntime: 0,
            avg_vruntime: 0,
            avg_load: 0,
            nr_delayed: 0,
            nr_delayed_idle: 0,
        }
    }
}

/// EEVDF tunables (sysctl and features), effective values.
#[derive(Clone, Debug)]
pub struct EevdfTunables {
    /// `sysctl_sched_base_slice` (ns).
    pub base_slice: u64,
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub run_to_parity: bool,
    pub preempt_short: bool,
    pub delay_dequeue: bool,
    pub delay_zero: bool,
    pub wakeup_preemption: bool,
}

/// EEVDF's settings as written (`--param`); [`EevdfTunables`] holds the effective values.
#[derive(Clone, Debug)]
pub struct EevdfParams {
    pub base_slice: Scaled,
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub run_to_parity: bool,
    pub preempt_short: bool,
    pub delay_dequeue: bool,
    pub delay_zero: bool,
    pub fair: FairParams,
}

impl Default for EevdfParams {
    /// The 6.6-6.9 defaults (fair.c `normalized_sysctl_sched_base_slice`, features.h);
    /// DELAY_DEQUEUE, a 6.12 feature, off.
    fn default() -> Self {
        EevdfParams {
            base_slice: Scaled::normalized(NORMALIZED_BASE_SLICE),
            place_lag: true,
            place_deadline_initial: true,
            run_to_parity: true,
            preempt_short: false,
            delay_dequeue: false,
            delay_zero: true,
            fair: FairParams::default(),
        }
    }
}

/// EEVDF's tunables table.
fn tunables() -> Vec<Tunable<EevdfParams>> {
    let mut rows: Vec<Tunable<EevdfParams>> = vec![
        Tunable::ns(
            "sched_base_slice_ns",
            "EEVDF request size r (sysctl_sched_base_slice); the default is scaled by \
             sched_tunable_scaling (×(1+ilog2(min(ncpus,8))), e.g. 3000000 on 8+ CPUs); \
             a value set here is used as is",
            1,
            |p| &mut p.base_slice,
        ),
        Tunable::flag(
            "place_lag",
            "feature PLACE_LAG: a (re)enqueued task keeps the lag saved at dequeue \
             (inflated by (W+w)/W); 0 places every task at V",
            |p| &mut p.place_lag,
        ),
        Tunable::flag(
            "place_deadline_initial",
            "feature PLACE_DEADLINE_INITIAL: a new task's first request is half a slice",
            |p| &mut p.place_deadline_initial,
        ),
        Tunable::flag(
            "run_to_parity",
            "feature RUN_TO_PARITY: a running task is not wake-up-preempted before its \
             request completes while it stays eligible",
            |p| &mut p.run_to_parity,
        ),
        Tunable::flag(
            "preempt_short",
            "feature PREEMPT_SHORT (6.12): a wakee with a shorter slice cancels \
             RUN_TO_PARITY; a no-op here (all slices are the base slice)",
            |p| &mut p.preempt_short,
        ),
        Tunable::flag(
            "delay_dequeue",
            "feature DELAY_DEQUEUE (6.12): a task that blocks while not eligible stays \
             queued (counted in V) until it is picked or wakes; off in the 6.6-6.9 tree \
             modelled here",
            |p| &mut p.delay_dequeue,
        ),
        Tunable::flag(
            "delay_zero",
            "feature DELAY_ZERO (6.12): a delayed task's positive lag is dropped when it \
             finally leaves or is requeued",
            |p| &mut p.delay_zero,
        ),
    ];
    rows.extend(
        FairParams::tunables()
            .into_iter()
            .map(|r| r.lift(|p: &mut EevdfParams| &mut p.fair)),
    );
    rows
}

/// The EEVDF fair class (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE).
pub struct LinuxEevdf {
    rqs: Vec<EevdfRq>,
    se: Vec<Se>,
    nodes: Vec<Node>,
    seq: u64,
    nr_cpus: usize,
    params: EevdfParams,
    tun: EevdfTunables,
    /// Placement and load balancing (shared with CFS), with 6.1's `sd_init`.
    smp: FairSmp,
}

impl LinuxEevdf {
    /// An EEVDF class for a machine with `nr_cpus` CPUs (base slice scaled for it).
    pub fn new(nr_cpus: usize) -> Self {
        let nr_cpus = nr_cpus.max(1);
        let mut s = LinuxEevdf {
            rqs: vec![EevdfRq::new(); nr_cpus],
            se: Vec::new(),
            nodes: Vec::new(),
            seq: 0,
            nr_cpus,
            params: EevdfParams::default(),
            tun: EevdfTunables {
                base_slice: NORMALIZED_BASE_SLICE,
                place_lag: false,
                place_deadline_initial: false,
                run_to_parity: false,
                preempt_short: false,
                delay_dequeue: false,
                delay_zero: false,
                wakeup_preemption: false,
            },
            smp: FairSmp::new(SdEra::V6_1),
        };
        s.update_sysctl();
        s
    }

    /// `update_sysctl`: effective values from the settings.
    fn update_sysctl(&mut self) {
        let p = &self.params;
        let f = sysctl_factor(self.nr_cpus, p.fair.scaling.value());
        self.tun = EevdfTunables {
            base_slice: p.base_slice.effective(f),
            place_lag: p.place_lag,
            place_deadline_initial: p.place_deadline_initial,
            run_to_parity: p.run_to_parity,
            preempt_short: p.preempt_short,
            delay_dequeue: p.delay_dequeue,
            delay_zero: p.delay_zero,
            wakeup_preemption: p.fair.wakeup_preemption,
        };
        self.smp.params = p.fair.clone();
    }

    /// The effective tunables.
    pub fn tunables(&self) -> &EevdfTunables {
        &self.tun
    }

    /// A task's (vruntime, deadline, vlag).
    pub fn entity(&self, t: TaskId) -> (i64, i64, i64) {
        self.se
            .get(t.idx())
            .map_or((0, 0, 0), |s| (s.vruntime, s.deadline, s.vlag))
    }

    /// A task's weight as this class last saw it.
    pub fn weight(&self, t: TaskId) -> u32 {
        self.se.get(t.idx()).map_or(0, |s| s.weight)
    }

    /// `cfs_rq->min_vruntime` of `cpu`.
    pub fn min_vruntime(&self, cpu: CpuId) -> i64 {
        self.rqs[cpu.idx()].min_vruntime
    }

    /// The running fair task of `cpu` (`cfs_rq->curr`).
    pub fn eevdf_curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.idx()].curr
    }

    /// Queued fair tasks of `cpu`, running one included.
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs[cpu.idx()].nr_running
    }

    /// Sum of queued weights of `cpu`, running one included.
    pub fn load(&self, cpu: CpuId) -> u64 {
        self.rqs[cpu.idx()].load
    }

    /// Queued tasks of `cpu` (the running one included if it is queued).
    pub fn queued(&self, cpu: CpuId) -> Vec<TaskId> {
        let rq = &self.rqs[cpu.idx()];
        let mut v = Vec::new();
        t_walk(&self.nodes, rq.root, &mut |i| v.push(TaskId(i)));
        if let Some(c) = rq.curr {
            if self.se[c.idx()].on_rq {
                v.push(c);
            }
        }
        v
    }

    fn ensure(&mut self, ctx: &Ctx, t: TaskId) {
        if self.se.len() <= t.idx() {
            let n = (t.idx() + 1).max(ctx.nr_tasks());
            self.se.resize(n, Se::default());
            self.nodes.resize(n, Node::default());
        }
        if self.rqs.len() < ctx.nr_cpus() {
            self.rqs.resize(ctx.nr_cpus(), EevdfRq::new());
        }
    }

    /// Policy flags from the attributes (the weight is taken at enqueue).
    fn refresh_policy(&mut self, ctx: &Ctx, t: TaskId) {
        let a = ctx.task(t).attrs;
        let se = &mut self.se[t.idx()];
        se.idle_policy = a.policy == Policy::Idle;
        se.normal_policy = a.policy == Policy::Other;
    }

    /// (Σ (v_i − v0)·w_i, Σ w_i) over the queued entities, curr included if queued.
    #[inline]
    fn sums(&self, cpu: CpuId) -> (i128, i128) {
        let rq = &self.rqs[cpu.idx()];
        let mut avg = rq.avg_vruntime;
        let mut load = rq.avg_load as i128;
        if let Some(c) = rq.curr {
            let s = &self.se[c.idx()];
            if s.on_rq && !s.in_tree {
                avg += (s.vruntime - rq.min_vruntime) as i128 * s.weight as i128;
                load += s.weight as i128;
            }
        }
        (avg, load)
    }

    /// `avg_vruntime`: V, the load-weighted average vruntime, rounded down.
    pub fn avg_vruntime(&self, cpu: CpuId) -> i64 {
        let (avg, load) = self.sums(cpu);
        let q = if load > 0 { avg.div_euclid(load) } else { avg };
        self.rqs[cpu.idx()].min_vruntime + q as i64
    }

    /// `vruntime_eligible`: V ≥ v, exactly.
    pub fn vruntime_eligible(&self, cpu: CpuId, v: i64) -> bool {
        let (avg, load) = self.sums(cpu);
        avg >= (v - self.rqs[cpu.idx()].min_vruntime) as i128 * load
    }

    /// `entity_lag(avruntime, se)`: V − v clamped to ±calc_delta_fair(max(2·slice, tick)).
    fn entity_lag(&self, tick_ns: u64, avruntime: i64, t: TaskId) -> i64 {
        let se = &self.se[t.idx()];
        let limit = calc_delta_fair((2 * se.slice).max(tick_ns), se.weight, se.inv_weight) as i64;
        (avruntime - se.vruntime).clamp(-limit, limit)
    }

    fn tree_insert(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.seq += 1;
        let se = &mut self.se[t.idx()];
        debug_assert!(!se.in_tree);
        se.in_tree = true;
        let (v, w) = (se.vruntime, se.weight as u64);
        self.nodes[t.idx()] = Node {
            dl: se.deadline,
            seq: self.seq,
            v,
            minv: v,
            l: NIL,
            r: NIL,
            pri: mix(self.seq),
        };
        let rq = &mut self.rqs[cpu.idx()];
        rq.avg_vruntime += (v - rq.min_vruntime) as i128 * w as i128;
        rq.avg_load += w;
        let mut work = 0;
        rq.root = t_insert(&mut self.nodes, rq.root, t.0, &mut work);
        ctx.count_work(work);
    }

    fn tree_remove(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        debug_assert!(se.in_tree);
        se.in_tree = false;
        let (v, w) = (self.nodes[t.idx()].v, se.weight as u64);
        let rq = &mut self.rqs[cpu.idx()];
        rq.avg_vruntime -= (v - rq.min_vruntime) as i128 * w as i128;
        rq.avg_load -= w;
        let mut work = 0;
        rq.root = t_remove(&mut self.nodes, rq.root, t.0, &mut work);
        ctx.count_work(work);
    }

    /// `update_min_vruntime` + `__update_min_vruntime` (never backwards; shifts the
    /// `avg_vruntime` sum with v0).
    fn update_min_vruntime(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu.idx()];
        let curr = rq
            .curr
            .filter(|c| self.se[c.idx()].on_rq && !self.se[c.idx()].in_tree);
        let mut v = rq.min_vruntime;
        if let Some(c) = curr {
            v = self.se[c.idx()].vruntime;
        }
        if rq.root != NIL {
            let m = self.nodes[rq.root as usize].minv;
            v = if curr.is_some() { v.min(m) } else { m };
        }
        let rq = &mut self.rqs[cpu.idx()];
        if v > rq.min_vruntime {
            let d = (v - rq.min_vruntime) as i128;
            rq.avg_vruntime -= rq.avg_load as i128 * d;
            rq.min_vruntime = v;
        }
    }

    /// `place_entity(cfs_rq, se, flags)`; `t` is not accounted on `cpu` yet.
    fn place_entity(&mut self, cpu: CpuId, t: TaskId, initial: bool) {
        let vavg = self.avg_vruntime(cpu);
        let slice = self.tun.base_slice;
        let rq = &self.rqs[cpu.idx()];
        let se = self.se[t.idx()];
        let mut vslice = calc_delta_fair(slice, se.weight, se.inv_weight) as i64;
        let mut lag = 0i64;
        if self.tun.place_lag && rq.nr_running > 0 {
            let mut load = rq.avg_load;
            if let Some(c) = rq.curr {
                let cs = &self.se[c.idx()];
                if c != t && cs.on_rq && !cs.in_tree {
                    load += cs.weight as u64;
                }
            }
            let num = se.vlag as i128 * (load + se.weight as u64) as i128;
            // div_s64 truncates toward zero.
            lag = (num / load.max(1) as i128) as i64;
        }
        if initial && self.tun.place_deadline_initial {
            vslice /= 2;
        }
        let s = &mut self.se[t.idx()];
        s.slice = slice;
        s.vruntime = vavg - lag;
        s.deadline = s.vruntime + vslice;
        s.placed = true;
    }

    /// `update_deadline`: a consumed request gets a new deadline (and a reschedule if
    /// others wait, when `resched`).
    fn update_deadline(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, resched: bool) -> bool {
        let base = self.tun.base_slice;
        let se = &mut self.se[t.idx()];
        if se.vruntime < se.deadline {
            return false;
        }
        se.slice = base;
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.weight, se.inv_weight) as i64;
        if resched && self.rqs[cpu.idx()].nr_running > 1 {
            ctx.resched(cpu);
        }
        true
    }

    /// `pick_eevdf(cfs_rq)` with `curr` the running entity (or none, as after
    /// put_prev): the eligible entity with the earliest virtual deadline.
    pub fn pick_eevdf(&self, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
        let rq = &self.rqs[cpu.idx()];
        let curr = curr.filter(|c| {
            let s = &self.se[c.idx()];
            s.on_rq && !s.in_tree && s.cpu == cpu
        });
        if rq.nr_running == 1 {
            return curr.or(if rq.root == NIL {
                None
            } else {
                Some(TaskId(rq.root))
            });
        }
        let curr = curr.filter(|c| self.vruntime_eligible(cpu, self.se[c.idx()].vruntime));
        if let Some(c) = curr {
            let s = &self.se[c.idx()];
            if self.tun.run_to_parity && s.protect == s.deadline {
                return Some(c);
            }
        }
        let mut node = rq.root;
        let mut best: Option<u32> = None;
        while node != NIL {
            let n = &self.nodes[node as usize];
            if n.l != NIL && self.vruntime_eligible(cpu, self.nodes[n.l as usize].minv) {
                node = n.l;
                continue;
            }
            if self.vruntime_eligible(cpu, n.v) {
                best = Some(node);
                break;
            }
            node = n.r;
        }
        let best = best.map(TaskId);
        match (best, curr) {
            (None, c) => c.or_else(|| self.leftmost(cpu)),
            (Some(b), Some(c)) if self.se[c.idx()].deadline < self.nodes[b.idx()].dl => Some(c),
            (b, _) => b,
        }
    }

    /// The entity with the earliest deadline (`__pick_first_entity`).
    fn leftmost(&self, cpu: CpuId) -> Option<TaskId> {
        let mut i = self.rqs[cpu.idx()].root;
        if i == NIL {
            return None;
        }
        while self.nodes[i as usize].l != NIL {
            i = self.nodes[i as usize].l;
        }
        Some(TaskId(i))
    }

    fn account_enqueue(&mut self, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        se.on_rq = true;
        se.cpu = cpu;
        let rq = &mut self.rqs[cpu.idx()];
        rq.nr_running += 1;
        rq.load += se.weight as u64;
        rq.nr_idle += u32::from(se.idle_policy);
    }

    fn account_dequeue(&mut self, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        se.on_rq = false;
        let rq = &mut self.rqs[cpu.idx()];
        rq.nr_running -= 1;
        rq.load -= se.weight as u64;
        rq.nr_idle -= u32::from(se.idle_policy);
    }

    /// `dequeue_entity` without the min_vruntime update: save the lag, leave the tree.
    fn dequeue_entity(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let v = self.avg_vruntime(cpu);
        self.se[t.idx()].vlag = self.entity_lag(ctx.tick_ns(), v, t);
        if self.se[t.idx()].in_tree {
            self.tree_remove(ctx, cpu, t);
        }
        self.account_dequeue(cpu, t);
    }

    /// `check_preempt_wakeup_fair` for a fair wakee `t` on `cpu`.
    fn check_preempt_wakeup(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = self.rqs[cpu.idx()].curr else {
            if ctx.curr(cpu).is_none() {
                ctx.resched(cpu);
            }
            return;
        };
        if curr == t || ctx.need_resched(cpu) || !self.tun.wakeup_preemption {
            return;
        }
        let pse = self.se[t.idx()];
        let cse = self.se[curr.idx()];
        if cse.idle_policy && !pse.idle_policy {
            ctx.resched(cpu);
            return;
        }
        if cse.idle_policy != pse.idle_policy || !pse.normal_policy {
            return;
        }
        if self.tun.preempt_short && pse.slice < cse.slice {
            // cancel_protect_slice
            self.se[curr.idx()].protect = NO_PROTECT;
        }
        if self.pick_eevdf(cpu, Some(curr)) == Some(t) {
            ctx.resched(cpu);
        }
    }

    /// Runnable (not delayed) fair tasks of `cpu`.
    pub fn nr_runnable(&self, cpu: CpuId) -> u32 {
        let rq = &self.rqs[cpu.idx()];
        rq.nr_running - rq.nr_delayed
    }

    fn set_delayed(&mut self, cpu: CpuId, t: TaskId, on: bool) {
        let se = &mut self.se[t.idx()];
        debug_assert_ne!(se.delayed, on);
        se.delayed = on;
        let idle = u32::from(se.idle_policy);
        let rq = &mut self.rqs[cpu.idx()];
        if on {
            rq.nr_delayed += 1;
            rq.nr_delayed_idle += idle;
        } else {
            rq.nr_delayed -= 1;
            rq.nr_delayed_idle -= idle;
        }
    }

    /// `dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED)` →
    /// `finish_delayed_dequeue_entity`: the delayed entity finally leaves; DELAY_ZERO
    /// clips a positive lag to 0.
    fn finish_delayed_dequeue(&mut self, ctx: &mut Ctx, t: TaskId) {
        let cpu = self.se[t.idx()].cpu;
        self.set_delayed(cpu, t, false);
        self.dequeue_entity(ctx, cpu, t);
        self.update_min_vruntime(cpu);
        if self.tun.delay_zero && self.se[t.idx()].vlag > 0 {
            self.se[t.idx()].vlag = 0;
        }
    }

    /// detach_task + attach_task: the lag is saved on `src` and restored on `dst`.
    fn move_task(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.dequeue_entity(ctx, src, t);
        self.update_min_vruntime(src);
        ctx.set_task_cpu(t, dst);
        self.se[t.idx()].exec_start = NEVER;
        self.place_entity(dst, t, false);
        self.account_enqueue(dst, t);
        self.tree_insert(ctx, dst, t);
    }
}

impl Scheduler for LinuxEevdf {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-eevdf-fair",
            summary: "Linux EEVDF fair class (6.6+): weighted average vruntime, lag, eligibility, \
                      virtual deadlines, PLACE_LAG, RUN_TO_PARITY, pull load balancing",
            source: "torvalds/linux kernel/sched/fair.c (6.6-6.9 tree, reference index file \
                     2155571): avg_vruntime, entity_lag, vruntime_eligible, pick_eevdf, \
                     update_deadline, place_entity; Stoica & Abdel-Wahab TR-95-22 (1995)",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "linux-eevdf", name, value)?;
        self.update_sysctl();
        Ok(())
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if !(-20..=19).contains(&attrs.nice) {
            return Err(format!("nice must be in -20..=19, got {}", attrs.nice));
        }
        Ok(())
    }

    /// `task_fork_fair`/`__sched_fork`: zero lag; placed (with ENQUEUE_INITIAL) on the CPU
    /// `wake_up_new_task` enqueues it on.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, _parent: Option<TaskId>) {
        self.ensure(ctx, t);
        self.refresh_policy(ctx, t);
        let (w, inv) = weight_of(&ctx.task(t).attrs);
        let se = &mut self.se[t.idx()];
        *se = Se {
            weight: w,
            inv_weight: inv,
            cpu: ctx.task(t).cpu,
            idle_policy: se.idle_policy,
            normal_policy: se.normal_policy,
            ..Se::default()
        };
    }

    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        if self.se[t.idx()].delayed {
            self.finish_delayed_dequeue(ctx, t);
        }
        for rq in &mut self.rqs {
            if rq.curr == Some(t) {
                rq.curr = None;
            }
        }
    }

    /// `select_task_rq_fair` (cpu/fair/placement.rs); a delayed task is still queued:
    /// `ttwu_runnable` requeues it where it is.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        self.ensure(ctx, t);
        let se = self.se[t.idx()];
        if se.delayed && ctx.task(t).affinity.contains(se.cpu) {
            return se.cpu;
        }
        let mut smp = std::mem::take(&mut self.smp);
        let cpu = smp.select_task_rq(ctx, self, t, prev, kind);
        self.smp = smp;
        cpu
    }

    /// `enqueue_task_fair` → `enqueue_entity`: a weight change while off the queue scales
    /// the saved lag (`reweight_entity`), `place_entity` sets v and vd from V and the lag,
    /// then the entity is accounted and inserted unless it is the running one.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.ensure(ctx, t);
        let (w, inv) = weight_of(&ctx.task(t).attrs);
        if self.se[t.idx()].delayed {
            let se = self.se[t.idx()];
            let same_policy = se.idle_policy == (ctx.task(t).attrs.policy == Policy::Idle);
            if se.cpu == cpu && se.weight == w && same_policy {
                // requeue_delayed_entity: v and vd are kept unless DELAY_ZERO finds a positive
                // lag, which is dropped (the entity is re-placed at V).
                let v = self.avg_vruntime(cpu);
                let lag = self.entity_lag(ctx.tick_ns(), v, t);
                if !(self.tun.delay_zero && lag > 0) {
                    self.set_delayed(cpu, t, false);
                    return;
                }
            }
            // Woken elsewhere, reweighted or re-placed: finish the delayed dequeue first.
            self.finish_delayed_dequeue(ctx, t);
        }
        self.refresh_policy(ctx, t);
        debug_assert!(!self.se[t.idx()].on_rq, "eevdf enqueue of queued {t:?}");
        let se = &mut self.se[t.idx()];
        if se.placed && w != se.weight {
            se.vlag = (se.vlag as i128 * se.weight as i128 / w as i128) as i64;
        }
        se.weight = w;
        se.inv_weight = inv;
        let initial = kind == EnqueueKind::New || !se.placed;
        self.place_entity(cpu, t, initial);
        self.account_enqueue(cpu, t);
        if self.rqs[cpu.idx()].curr != Some(t) {
            self.tree_insert(ctx, cpu, t);
        }
    }

    /// `dequeue_task_fair` → `dequeue_entity`: `update_entity_lag`, leave the tree,
    /// min_vruntime moves on except for DEQUEUE_SAVE.
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.ensure(ctx, t);
        if !self.se[t.idx()].on_rq {
            return;
        }
        if self.se[t.idx()].delayed {
            self.finish_delayed_dequeue(ctx, t);
            return;
        }
        debug_assert_eq!(self.se[t.idx()].cpu, cpu);
        let cpu = self.se[t.idx()].cpu;
        if kind == DequeueKind::Sleep
            && self.tun.delay_dequeue
            && !self.vruntime_eligible(cpu, self.se[t.idx()].vruntime)
        {
            // DELAY_DEQUEUE: a non-eligible sleeper stays queued to burn off its negative
            // lag; it leaves when picked (or woken elsewhere).
            self.set_delayed(cpu, t, true);
            return;
        }
        self.dequeue_entity(ctx, cpu, t);
        if kind != DequeueKind::Save {
            self.update_min_vruntime(cpu);
        }
    }

    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        self.check_preempt_wakeup(ctx, cpu, t);
    }

    /// `put_prev_entity`: a still-queued entity goes back into the tree.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        if self.rqs[cpu.idx()].curr == Some(t) {
            self.rqs[cpu.idx()].curr = None;
            let s = self.se[t.idx()];
            if s.on_rq && !s.in_tree {
                self.tree_insert(ctx, cpu, t);
            }
        }
        self.se[t.idx()].exec_start = ctx.now();
    }

    /// `pick_next_task_fair` (simple path: prev already put) → `pick_eevdf` +
    /// `set_next_entity` (stash the deadline for RUN_TO_PARITY).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if cpu.idx() >= self.rqs.len() {
            return None;
        }
        if let Some(c) = self.rqs[cpu.idx()].curr.take() {
            let s = self.se[c.idx()];
            if s.on_rq && !s.in_tree {
                self.tree_insert(ctx, cpu, c);
            }
        }
        let pick = loop {
            if self.rqs[cpu.idx()].root == NIL {
                return None;
            }
            let p = self.pick_eevdf(cpu, None)?;
            if !self.se[p.idx()].delayed {
                break p;
            }
            // pick_next_entity of a delayed entity: finish its dequeue and pick again.
            self.finish_delayed_dequeue(ctx, p);
        };
        self.tree_remove(ctx, cpu, pick);
        self.rqs[cpu.idx()].curr = Some(pick);
        let se = &mut self.se[pick.idx()];
        se.protect = se.deadline;
        se.exec_start = ctx.now();
        Some(pick)
    }

    /// `update_curr`: v += calc_delta_fair(delta), `update_deadline`, min_vruntime.
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        self.ensure(ctx, t);
        let s = self.se[t.idx()];
        let tree_cpu = s.cpu;
        if s.in_tree {
            self.tree_remove(ctx, tree_cpu, t);
        }
        let se = &mut self.se[t.idx()];
        se.vruntime += calc_delta_fair(delta_ns, se.weight, se.inv_weight) as i64;
        se.exec_start = ctx.now();
        let is_curr = self.rqs[cpu.idx()].curr == Some(t);
        self.update_deadline(ctx, cpu, t, is_curr);
        if s.in_tree {
            self.tree_insert(ctx, tree_cpu, t);
        }
        self.update_min_vruntime(cpu);
    }

    /// `task_tick_fair` → `entity_tick`: only `update_curr` (done by the engine); EEVDF
    /// has no tick preemption besides `update_deadline`.
    fn tick(&mut self, _ctx: &mut Ctx, _cpu: CpuId, _t: TaskId) {}

    /// `yield_task_fair`: the current request counts as done (`deadline += r/w`).
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        if self.rqs[cpu.idx()].nr_running <= 1 {
            return;
        }
        let s = self.se[t.idx()];
        if s.in_tree {
            self.tree_remove(ctx, s.cpu, t);
        }
        let se = &mut self.se[t.idx()];
        se.deadline += calc_delta_fair(se.slice, se.weight, se.inv_weight) as i64;
        if s.in_tree {
            self.tree_insert(ctx, s.cpu, t);
        }
    }

    /// `prio_changed_fair` (the new weight was applied at the ENQUEUE_RESTORE).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        self.ensure(ctx, t);
        let se = self.se[t.idx()];
        if !se.on_rq || se.delayed {
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

    /// Periodic, NO_HZ idle and newidle load balancing over the scheduling domains
    /// (cpu/fair/balance.rs).
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
        se.placed.then_some(("deadline", se.deadline))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (i, rq) in self.rqs.iter().enumerate() {
            t_walk(&self.nodes, rq.root, &mut |n| {
                // A delayed entity is blocked as far as the engine is concerned.
                if !self.se[n as usize].delayed {
                    f(CpuId(i as u32), TaskId(n))
                }
            });
        }
    }
}

impl SchedClass for LinuxEevdf {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        matches!(attrs.policy, Policy::Other | Policy::Batch | Policy::Idle)
    }

    fn has_queued(&self, cpu: CpuId) -> bool {
        self.rqs
            .get(cpu.idx())
            .is_some_and(|rq| rq.nr_running > rq.nr_delayed)
    }

    /// `switched_from_fair`: the task keeps its saved lag (a delayed entity is dequeued
    /// first).
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        if self.se[t.idx()].delayed {
            self.finish_delayed_dequeue(ctx, t);
        }
        for rq in &mut self.rqs {
            if rq.curr == Some(t) {
                rq.curr = None;
            }
        }
    }

    /// `switched_to_fair`: placed with its lag at the next enqueue.
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        self.refresh_policy(ctx, t);
    }
}

impl FairRq for LinuxEevdf {
    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs.get(cpu.idx()).map_or(0, |rq| rq.nr_running - rq.nr_delayed)
    }

    fn idle_h_nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs
            .get(cpu.idx())
            .map_or(0, |rq| rq.nr_idle - rq.nr_delayed_idle)
    }

    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.rqs.get(cpu.idx()).map_or(0, |rq| rq.load)
    }

    fn task_load(&self, t: TaskId) -> u64 {
        self.se.get(t.idx()).map_or(1024, |se| se.weight as u64)
    }

    /// The tree in deadline order from its end (standing in for `cfs_tasks` from its
    /// least-recently-run tail).
    fn migration_candidates(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        let start = out.len();
        t_walk(&self.nodes, self.rqs[cpu.idx()].root, &mut |i| {
            out.push(TaskId(i))
        });
        out[start..].reverse();
    }

    /// A delayed entity is blocked: it is not migrated.
    fn can_detach(&self, t: TaskId) -> bool {
        !self.se[t.idx()].delayed
    }

    fn exec_start(&self, t: TaskId) -> Option<u64> {
        let s = self.se[t.idx()].exec_start;
        (s != NEVER).then_some(s)
    }

    fn move_queued(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.move_task(ctx, t, src, dst);
    }

    /// `check_preempt_curr`: an idle CPU reschedules; a fair current task is checked with
    /// `check_preempt_wakeup_fair`; a higher class's is never preempted.
    fn attach_preempt(&mut self, ctx: &mut Ctx, dst: CpuId, t: TaskId) {
        if ctx.curr(dst).is_none() {
            ctx.resched(dst);
        } else if self.rqs[dst.idx()].curr.is_some() {
            self.check_preempt_wakeup(ctx, dst, t);
        }
    }
}

// ------------------------------------------------------------------------------ policy

/// The `linux-eevdf` policy: the RT class above EEVDF.
pub type LinuxEevdfStack = Stacked<LinuxRt, LinuxEevdf>;

/// Summary line of the `linux-eevdf` policy.
pub const LINUX_EEVDF_SUMMARY: &str =
    "Linux 6.6+ EEVDF fair class with SCHED_FIFO/RR above it (rt > fair class stack), SMP \
     push/pull and load balancing";

/// Source citation of the `linux-eevdf` policy.
pub const LINUX_EEVDF_SOURCE: &str = "torvalds/linux kernel/sched/fair.c (6.6-6.9 tree, \
     reference index file 2155571: avg_vruntime, entity_lag, vruntime_eligible, pick_eevdf, \
     update_deadline, place_entity, check_preempt_wakeup), kernel/sched/rt.c, core.c \
     sched_prio_to_weight/wmult; Stoica & Abdel-Wahab, EEVDF, TR-95-22 (1995)";

/// The `linux-eevdf` policy for a machine with `nr_cpus` CPUs.
pub fn linux_eevdf(nr_cpus: usize) -> LinuxEevdfStack {
    Stacked::new(
        LinuxRt::new(nr_cpus),
        LinuxEevdf::new(nr_cpus),
        StackMeta {
            name: "linux-eevdf",
            summary: LINUX_EEVDF_SUMMARY,
            source: LINUX_EEVDF_SOURCE,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::{mask_of_bits, Driver, Hook, Observed, Observer, Op};
    use crate::protocol::SchedCore;
    use crate::types::fair;
    use crate::types::CpuMask;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn one_cpu() -> (Ctx, LinuxEevdf, CpuId, CpuMask) {
        (
            Ctx::for_test(1, 1000),
            LinuxEevdf::new(1),
            CpuId(0),
            CpuMask::first_n(1),
        )
    }

    fn add(ctx: &mut Ctx, s: &mut LinuxEevdf, nice: i32, aff: CpuMask) -> TaskId {
        let t = ctx.add_task_for_test(fair(Policy::Other, nice), aff);
        s.task_new(ctx, t, None);
        t
    }

    /// Make the picked task current in the context too.
    fn pick(s: &mut LinuxEevdf, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if let Some(p) = ctx.curr(cpu) {
            s.put_prev(ctx, cpu, p);
        }
        let n = s.pick_next(ctx, cpu);
        ctx.set_curr_for_test(cpu, n);
        n
    }

    fn run(s: &mut LinuxEevdf, ctx: &mut Ctx, cpu: CpuId, dt: u64) {
        let t = ctx.curr(cpu).unwrap();
        let now = ctx.now() + dt;
        ctx.set_now_for_test(now);
        ctx.tasks[t.idx()].sum_exec_ns += dt;
        s.update_curr(ctx, cpu, t, dt);
    }

    #[test]
    fn base_slice_scales_with_log_cpus() {
        for (n, want) in [(1, 750_000), (2, 1_500_000), (4, 2_250_000), (8, 3_000_000)] {
            assert_eq!(LinuxEevdf::new(n).tunables().base_slice, want);
        }
        assert_eq!(LinuxEevdf::new(64).tunables().base_slice, 3_000_000);
        let mut s = LinuxEevdf::new(4);
        s.set_param("sched_base_slice_ns", "1000000").unwrap();
        assert_eq!(s.tunables().base_slice, 1_000_000);
        assert!(s.set_param("place_lag", "maybe").is_err());
    }

    #[test]
    fn a_new_task_starts_at_v_with_half_a_slice() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 1_234_567);
        for nice in [0, 5, -3] {
            let v = s.avg_vruntime(c0);
            let n = add(&mut ctx, &mut s, nice, one);
            s.enqueue(&mut ctx, c0, n, EnqueueKind::New);
            let (vr, dl, _) = s.entity(n);
            assert_eq!(vr, v, "nice {nice}: placed at V");
            let (w, inv) = weight_of(&fair(Policy::Other, nice));
            assert_eq!(dl - vr, calc_delta_fair(750_000, w, inv) as i64 / 2);
            // A zero-lag entity does not move V (up to the floor).
            assert!((s.avg_vruntime(c0) - v).abs() <= 1);
        }
        // PLACE_DEADLINE_INITIAL off: a whole slice.
        s.set_param("place_deadline_initial", "0").unwrap();
        let n = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, n, EnqueueKind::New);
        let (vr, dl, _) = s.entity(n);
        assert_eq!(dl - vr, 750_000);
    }

    #[test]
    fn place_entity_with_lag_keeps_the_saved_lag() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        let c = add(&mut ctx, &mut s, 0, one);
        for t in [a, b, c] {
            s.enqueue(&mut ctx, c0, t, EnqueueKind::New);
        }
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 900_000);
        // V = (900000 + 0 + 0) / 3; b's lag is V - 0.
        assert_eq!(s.avg_vruntime(c0), 300_000);
        s.dequeue(&mut ctx, c0, b, DequeueKind::Sleep);
        assert_eq!(s.entity(b).2, 300_000, "update_entity_lag");
        assert_eq!(s.avg_vruntime(c0), 450_000);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::Wakeup);
        // Inflated by (W + w) / W = 3/2: v = 450000 - 450000 = 0, and V is back at 300000.
        assert_eq!(s.entity(b).0, 0);
        assert_eq!(s.avg_vruntime(c0) - s.entity(b).0, 300_000);
        // The running task has negative lag; sleeping and waking keeps it.
        let lag_a = s.avg_vruntime(c0) - s.entity(a).0;
        assert_eq!(lag_a, -600_000);
        s.dequeue(&mut ctx, c0, a, DequeueKind::Sleep);
        assert_eq!(s.entity(a).2, -600_000);
        s.put_prev(&mut ctx, c0, a);
        ctx.set_curr_for_test(c0, None);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::Wakeup);
        let lag = s.avg_vruntime(c0) - s.entity(a).0;
        assert!((lag + 600_000).abs() <= 1, "lag {lag}");
        // PLACE_LAG off: placed at V.
        s.set_param("place_lag", "0").unwrap();
        s.dequeue(&mut ctx, c0, a, DequeueKind::Sleep);
        let v = s.avg_vruntime(c0);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::Wakeup);
        assert_eq!(s.entity(a).0, v);
    }

    #[test]
    fn entity_lag_is_clamped() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 20 * MS);
        // limit = calc_delta_fair(max(2 * 750 us, 1 ms tick)) = 1.5 ms.
        s.dequeue(&mut ctx, c0, b, DequeueKind::Sleep);
        assert_eq!(s.entity(b).2, 1_500_000);
        s.dequeue(&mut ctx, c0, a, DequeueKind::Sleep);
        assert_eq!(s.entity(a).2, 0, "alone: V = v");
    }

    #[test]
    fn update_deadline_renews_a_consumed_request_and_reschedules() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        // First request: half a slice (375 us).
        run(&mut s, &mut ctx, c0, 374_999);
        assert_eq!(s.entity(a).1, 375_000);
        run(&mut s, &mut ctx, c0, 1);
        assert_eq!(s.entity(a).1, 375_000 + 750_000);
        assert!(!ctx.need_resched(c0), "alone: no resched");
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        ctx.resched_mask = CpuMask::empty();
        run(&mut s, &mut ctx, c0, 749_999);
        assert!(!ctx.need_resched(c0));
        run(&mut s, &mut ctx, c0, 1);
        assert!(ctx.need_resched(c0), "request consumed with others queued");
        assert_eq!(s.entity(a).1, 1_125_000 + 750_000);
        // A nice-5 entity's request is calc_delta_fair(slice) of virtual time.
        s.set_param("place_deadline_initial", "0").unwrap();
        let c = ctx.add_task_for_test(fair(Policy::Other, 5), one);
        s.task_new(&mut ctx, c, None);
        s.enqueue(&mut ctx, c0, c, EnqueueKind::Wakeup);
        let (v, d, _) = s.entity(c);
        assert_eq!(d - v, calc_delta_fair(750_000, 335, 12_820_798) as i64);
    }

    #[test]
    fn yield_pushes_the_deadline_by_one_request() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        let d = s.entity(a).1;
        s.yield_task(&mut ctx, c0, a);
        assert_eq!(s.entity(a).1, d + 750_000);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(b));
    }

    #[test]
    fn reweight_keeps_the_real_lag() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 1_000_000);
        // b waits with lag +500 us (V = 500 us); renice it to -5 (w 3121).
        s.dequeue(&mut ctx, c0, b, DequeueKind::Save);
        assert_eq!(s.entity(b).2, 500_000);
        let old = ctx.task(b).attrs;
        ctx.tasks[b.idx()].attrs.nice = -5;
        s.enqueue(&mut ctx, c0, b, EnqueueKind::Restore);
        s.prio_changed(&mut ctx, b, old);
        assert_eq!(s.entity(b).2, 500_000 * 1024 / 3121);
        let lag = s.avg_vruntime(c0) - s.entity(b).0;
        assert!((lag - 500_000 * 1024 / 3121).abs() <= 1, "lag {lag}");
    }

    #[test]
    fn wakeup_preempts_iff_pick_eevdf_picks_the_wakee() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        // a consumes its first (half) request alone: new deadline 400 + 750 us, no resched.
        run(&mut s, &mut ctx, c0, 400_000);
        assert_eq!(s.entity(a).1, 1_150_000);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        // b wakes at V = 400 us with deadline 775 us, earlier than a's, but a is eligible
        // and protected by RUN_TO_PARITY: no preemption.
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(s.entity(b), (400_000, 775_000, 0));
        ctx.resched_mask = CpuMask::empty();
        s.wakeup_preempt(&mut ctx, c0, b);
        assert!(!ctx.need_resched(c0), "RUN_TO_PARITY protects curr");
        assert_eq!(s.pick_eevdf(c0, Some(a)), Some(a));
        // Without RUN_TO_PARITY pick_eevdf picks b (eligible, earlier deadline): preempt.
        s.set_param("run_to_parity", "0").unwrap();
        assert_eq!(s.pick_eevdf(c0, Some(a)), Some(b));
        s.wakeup_preempt(&mut ctx, c0, b);
        assert!(ctx.need_resched(c0));
        // A curr that is no longer eligible loses its protection.
        s.set_param("run_to_parity", "1").unwrap();
        ctx.resched_mask = CpuMask::empty();
        run(&mut s, &mut ctx, c0, 100_000); // v_a = 500 us > V = 450 us
        assert!(!s.vruntime_eligible(c0, s.entity(a).0));
        s.wakeup_preempt(&mut ctx, c0, b);
        assert!(ctx.need_resched(c0));
        // SCHED_BATCH wakees never preempt.
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = ctx.add_task_for_test(fair(Policy::Batch, 0), one);
        s.task_new(&mut ctx, b, None);
        s.set_param("run_to_parity", "0").unwrap();
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 300_000);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        ctx.resched_mask = CpuMask::empty();
        s.wakeup_preempt(&mut ctx, c0, b);
        assert!(!ctx.need_resched(c0));
    }

    #[test]
    fn delay_dequeue_keeps_a_non_eligible_sleeper_until_it_is_picked() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        s.set_param("delay_dequeue", "1").unwrap();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 300_000);
        // a (v 300 us) is not eligible (V = 150 us): it blocks but stays queued.
        s.dequeue(&mut ctx, c0, a, DequeueKind::Sleep);
        assert!(s.se[a.idx()].delayed);
        assert_eq!(s.avg_vruntime(c0), 150_000, "still counted in V");
        assert_eq!((s.nr_running(c0), s.nr_runnable(c0)), (2, 1));
        let mut seen = Vec::new();
        s.put_prev(&mut ctx, c0, a);
        ctx.set_curr_for_test(c0, None);
        s.for_each_queued(&mut |_, t| seen.push(t));
        assert_eq!(seen, vec![b], "the engine sees only b queued");
        // b runs; a becomes eligible and is picked → its dequeue completes (lag clipped
        // to 0 by DELAY_ZERO) and b is picked instead.
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(b));
        run(&mut s, &mut ctx, c0, 400_000);
        s.put_prev(&mut ctx, c0, b);
        ctx.set_curr_for_test(c0, None);
        assert_eq!(s.pick_next(&mut ctx, c0), Some(b));
        assert!(!s.se[a.idx()].delayed && !s.se[a.idx()].on_rq);
        assert_eq!(s.entity(a).2, 0, "DELAY_ZERO");
        // Off (the 6.6 default): the sleeper leaves at once with its negative lag.
        let (mut ctx, mut s, c0, one) = one_cpu();
        let a = add(&mut ctx, &mut s, 0, one);
        let b = add(&mut ctx, &mut s, 0, one);
        s.enqueue(&mut ctx, c0, a, EnqueueKind::New);
        s.enqueue(&mut ctx, c0, b, EnqueueKind::New);
        assert_eq!(pick(&mut s, &mut ctx, c0), Some(a));
        run(&mut s, &mut ctx, c0, 300_000);
        s.dequeue(&mut ctx, c0, a, DequeueKind::Sleep);
        assert!(!s.se[a.idx()].on_rq);
        assert_eq!(s.entity(a).2, -150_000);
    }

    #[test]
    fn treap_picks_match_a_linear_scan_on_many_entities() {
        let (mut ctx, mut s, c0, one) = one_cpu();
        let n = 200;
        for i in 0..n {
            let t = add(&mut ctx, &mut s, (i % 40) - 20, one);
            s.enqueue(&mut ctx, c0, t, EnqueueKind::New);
        }
        for _ in 0..2000 {
            let p = pick(&mut s, &mut ctx, c0).unwrap();
            check_pick(&s, c0, p);
            check_tree(&s, c0);
            run(&mut s, &mut ctx, c0, 97_000);
        }
    }

    // --------------------------------------------------------------- reference checks

    /// The queued entities of `cpu` as (task, v, vd, w), curr included.
    fn queued(s: &LinuxEevdf, cpu: CpuId) -> Vec<(TaskId, i64, i64, i128)> {
        s.queued(cpu)
            .into_iter()
            .map(|t| {
                let e = &s.se[t.idx()];
                (t, e.vruntime, e.deadline, e.weight as i128)
            })
            .collect()
    }

    /// Brute-force EEVDF: `p` is eligible (v ≤ Σ w v / Σ w, exactly) and no eligible entity
    /// has an earlier deadline.
    fn check_pick(s: &LinuxEevdf, cpu: CpuId, p: TaskId) {
        let q = queued(s, cpu);
        let sw: i128 = q.iter().map(|e| e.3).sum();
        let swv: i128 = q.iter().map(|e| e.3 * e.1 as i128).sum();
        let elig = |v: i64| v as i128 * sw <= swv;
        let best = q
            .iter()
            .filter(|e| elig(e.1))
            .map(|e| e.2)
            .min()
            .expect("some entity is always eligible");
        let pe = q.iter().find(|e| e.0 == p).expect("picked a queued task");
        assert!(elig(pe.1), "picked non-eligible {p:?}");
        assert_eq!(
            pe.2, best,
            "picked {p:?} is not the earliest eligible deadline"
        );
    }

    /// Treap order, heap priorities, subtree minima and the incremental sums.
    fn check_tree(s: &LinuxEevdf, cpu: CpuId) {
        fn walk(s: &LinuxEevdf, i: u32, lo: Option<(i64, u64)>, hi: Option<(i64, u64)>) -> i64 {
            let n = &s.nodes[i as usize];
            let k = (n.dl, n.seq);
            assert!(
                lo.is_none_or(|l| l < k) && hi.is_none_or(|h| k < h),
                "order"
            );
            assert_eq!(n.dl, s.se[i as usize].deadline);
            assert_eq!(n.v, s.se[i as usize].vruntime);
            let mut m = n.v;
            for c in [n.l, n.r] {
                if c != NIL {
                    assert!(s.nodes[c as usize].pri <= n.pri, "heap");
                }
            }
            if n.l != NIL {
                m = m.min(walk(s, n.l, lo, Some(k)));
            }
            if n.r != NIL {
                m = m.min(walk(s, n.r, Some(k), hi));
            }
            assert_eq!(n.minv, m, "augmented min_vruntime");
            m
        }
        let rq = &s.rqs[cpu.idx()];
        if rq.root != NIL {
            walk(s, rq.root, None, None);
        }
        let (mut avg, mut load) = (0i128, 0u64);
        t_walk(&s.nodes, rq.root, &mut |i| {
            let e = &s.se[i as usize];
            avg += (e.vruntime - rq.min_vruntime) as i128 * e.weight as i128;
            load += e.weight as u64;
        });
        assert_eq!(rq.avg_vruntime, avg, "avg_vruntime bookkeeping");
        assert_eq!(rq.avg_load, load, "avg_load bookkeeping");
    }

    /// Σ w_i·(V − v_i) over the queued entities is 0 up to the floor of V: in (−W, 0].
    fn check_lag_sum(s: &LinuxEevdf, cpu: CpuId) {
        let q = queued(s, cpu);
        if q.is_empty() {
            return;
        }
        let v = s.avg_vruntime(cpu) as i128;
        let sw: i128 = q.iter().map(|e| e.3).sum();
        let sum: i128 = q.iter().map(|e| e.3 * (v - e.1 as i128)).sum();
        assert!(-sw < sum && sum <= 0, "Σ w·lag = {sum}, W = {sw}");
    }

    // --------------------------------------------------------------- random operations

    /// Checks made inside an operation, at the hook where they hold: PLACE_LAG (right after
    /// a wake-up's enqueue the entity's lag is its saved lag — zero for a new task or onto
    /// an empty queue; a delayed entity requeued keeps a lag ≤ 0 or is re-placed at zero)
    /// and every pick is the brute-force earliest eligible deadline.
    #[derive(Default)]
    struct InHookChecks {
        /// The wake-up being enqueued: (task, CPU, saved vlag, nr_running, delayed, new).
        pending: Option<(TaskId, CpuId, i64, u32, bool, bool)>,
    }

    impl Observer<LinuxEevdf> for InHookChecks {
        fn before(&mut self, hook: Hook, s: &LinuxEevdf, _ctx: &Ctx) {
            if let Hook::Enqueue(cpu, t, kind @ (EnqueueKind::Wakeup | EnqueueKind::New)) = hook {
                let se = &s.se[t.idx()];
                // place_entity counts delayed entities too (cfs_rq->nr_running).
                let nr = s.nr_running(cpu);
                self.pending = Some((t, cpu, se.vlag, nr, se.delayed, kind == EnqueueKind::New));
            }
        }

        fn after(&mut self, hook: Hook, s: &LinuxEevdf, _ctx: &Ctx) {
            match hook {
                Hook::Enqueue(..) => {
                    let Some((t, cpu, vlag, nr, delayed, new)) = self.pending.take() else {
                        return;
                    };
                    let lag = s.avg_vruntime(cpu) - s.se[t.idx()].vruntime;
                    if delayed {
                        assert!(lag <= 2, "{t:?}: requeued delayed entity with lag {lag}");
                    } else {
                        let want = if nr > 0 && !new { vlag } else { 0 };
                        assert!(
                            (lag - want).abs() <= 2,
                            "{t:?}: lag after placement {lag}, saved {want}"
                        );
                    }
                }
                Hook::PickNext(cpu) => {
                    if let Some(p) = s.eevdf_curr(cpu) {
                        check_pick(s, cpu, p);
                    }
                }
                _ => {}
            }
        }
    }

    type Checked = Observed<LinuxEevdf, InHookChecks>;

    /// What EEVDF keeps true after every operation, beyond what every policy must
    /// (`Driver::check`): monotonic min_vruntime, counts and load (delayed entities
    /// counted in the load only), the treap and its sums, Σ w·lag = 0, no idle CPU with
    /// fair work queued.
    fn check_rqs(core: &SchedCore<Checked>, last_min: &mut [i64]) {
        let ctx = &core.ctx;
        let s = &core.policy.inner;
        for (c, last) in last_min.iter_mut().enumerate() {
            let cpu = CpuId(c as u32);
            let mv = s.min_vruntime(cpu);
            assert!(mv >= *last, "min_vruntime went backwards");
            *last = mv;
            let (mut nr, mut load) = (0u32, 0u64);
            for i in 0..ctx.nr_tasks() {
                let t = TaskId(i as u32);
                let se = &s.se[i];
                if ctx.task(t).on_rq && ctx.task(t).cpu == cpu {
                    assert!(!se.delayed, "{t:?} queued and delayed");
                    nr += 1;
                    load += weight_of(&ctx.task(t).attrs).0 as u64;
                } else if se.delayed && se.cpu == cpu {
                    assert!(!ctx.task(t).on_rq && se.on_rq);
                    load += se.weight as u64;
                }
            }
            assert_eq!(s.nr_runnable(cpu), nr);
            assert_eq!(s.load(cpu), load);
            check_tree(s, cpu);
            check_lag_sum(s, cpu);
            if nr > 0 {
                assert!(ctx.curr(cpu).is_some(), "queued work on an idle CPU");
            }
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0usize..12).prop_map(Op::Wake),
            5 => (1u64..3_000_000).prop_map(Op::Advance),
            2 => (0usize..4).prop_map(Op::Block),
            1 => (0usize..4).prop_map(Op::Bounce),
            1 => (0usize..4).prop_map(Op::Yield),
            3 => Just(Op::Tick),
            1 => ((0usize..4), 0u8..3, -20i32..20)
                .prop_map(|(c, p, v)| Op::Change(c, attrs_for(p, v))),
        ]
    }

    fn attrs_for(kind: u8, v: i32) -> SchedAttrs {
        match kind {
            0 => fair(Policy::Other, v),
            1 => fair(Policy::Batch, v),
            _ => fair(Policy::Idle, 0),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(std::env::var("SCHEDLAB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)))]
        /// After every operation: Σ w·lag = 0 (up to rounding), the tree and the incremental
        /// sums are consistent, min_vruntime is monotonic, and every pick is the earliest
        /// eligible virtual deadline of a brute-force reference; a woken entity's lag after
        /// placement equals its saved lag.
        #[test]
        fn lag_is_conserved_and_only_eligible_tasks_are_picked(
            ncpu in 1usize..4,
            tasks in proptest::collection::vec((0u8..3, -20i32..20, 1u32..16), 1..12),
            ops in proptest::collection::vec(op(), 1..250),
            features in 0u8..8,
        ) {
            let mut s = LinuxEevdf::new(ncpu);
            s.set_param("run_to_parity", if features & 1 != 0 { "1" } else { "0" }).unwrap();
            s.set_param("place_deadline_initial", if features & 2 != 0 { "1" } else { "0" })
                .unwrap();
            s.set_param("delay_dequeue", if features & 4 != 0 { "1" } else { "0" }).unwrap();
            let specs: Vec<(SchedAttrs, CpuMask)> = tasks
                .iter()
                .map(|&(k, v, m)| (attrs_for(k, v), mask_of_bits(m)))
                .collect();
            let checked = Observed::new(s, InHookChecks::default());
            let mut d = Driver::new(checked, ncpu, 250, &specs);
            let mut last_min = vec![i64::MIN; ncpu];
            for o in ops {
                d.apply(o);
                d.check();
                check_rqs(&d.core, &mut last_min);
            }
        }
    }
}

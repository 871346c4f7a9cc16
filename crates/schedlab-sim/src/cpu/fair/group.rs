//! Fair group scheduling (CONFIG_FAIR_GROUP_SCHED), written once for CFS and EEVDF.
//!
//! Every task group (cgroup of the cpu controller) has, on every CPU, a run queue of its
//! own and a group entity queued in its parent group's run queue of that CPU; the root
//! group's run queues are the CPUs' (`rq->cfs`). Each class's per-CPU run queue is so a
//! tree of run queues, and a task's entity sits in the leaf of its group.
//!
//! Sources: Linux 6.1.192 `kernel/sched/fair.c` (the Debian `linux-source-6.1` tree;
//! group scheduling as v5.4 has it, checked against the v5.7-era stored copy 00061968 of
//! torvalds/linux): `is_same_group`/`find_matching_se` (l.448-490), `enqueue_task_fair`
//! (l.6093-6170: entities are enqueued up the tree while their run queue was empty, then
//! every ancestor's group weight is recomputed), `dequeue_task_fair` (l.6187-6250: up the
//! tree while a run queue becomes empty, a sleeper's parent entity becomes next buddy),
//! `put_prev_task_fair` (l.7939), `pick_next_task_fair` (l.7794: on its path from a
//! fair task, every level is picked before any is set), `task_tick_fair` (l.11901:
//! `entity_tick` per level), `update_cfs_rq_h_load`/`task_h_load` (l.8763-8815);
//! Linux 6.12.117 `kernel/sched/fair.c` (the Debian `linux-source-6.12` tree):
//! `calc_group_shares` (l.4033-4068), `update_cfs_group` (l.4072-4094: an empty group
//! keeps its weight), `enqueue_task_fair`/`dequeue_entities` (l.7020-7275, the same
//! walks, with a group entity's slice the smallest of its run queue's), `pick_task_fair`
//! (l.8956-8981: `pick_next_entity` per level, which may complete a delayed dequeue and
//! restart the descent) and `set_next_task_fair` (l.13408: `set_next_entity` from the
//! task up).
//!
//! What is modelled: `calc_group_shares` sets a group entity's weight to
//! `shares · load / Σ load` clamped to `MIN_SHARES..=shares`, where `load` is its run
//! queue's weight on that CPU and `Σ load` the group's over every CPU (`tg->load_avg`),
//! recomputed where the kernel calls `update_cfs_group` (enqueue and dequeue of the
//! entity, the ancestors of a task enqueued or dequeued, every level at each tick); the
//! hierarchical task load `task_h_load` for the balancer and `wake_affine`; per-level
//! `update_curr`, done lazily as in the kernel (a level's current entity is charged when
//! that level is next updated: its tick, an enqueue or dequeue there, a preemption check
//! there, or when it is put).
//!
//! Simplifications: without PELT, a run queue's "load" (`cfs_rq->avg.load_avg` in
//! `calc_group_shares` and `task_h_load`) is its instantaneous queued weight
//! (`cfs_rq->load.weight`), and `tg->load_avg` the exact sum of those over the CPUs, kept
//! up to date (the kernel refreshes it when a CPU's contribution moved by more than 1/64).
//! Weights are unscaled (`scale_load` is the identity, as on a 32-bit kernel), so group
//! shares have the resolution of `cpu.shares` itself. A group that becomes empty keeps
//! its entity's weight (6.12's rule; v5.4's `calc_group_shares` of an empty queue gives
//! `MIN_SHARES` under this model, which a dequeued CFS entity never uses: its weight is
//! recomputed before its next enqueue). No `cpu.idle` (SCHED_IDLE groups). Autogroups are
//! not modelled: only the spec's cgroups exist.
//!
//! CFS bandwidth (`bandwidth.rs`) lives in the hierarchy ([`Hierarchy::bw`]): the walks
//! here stop at a throttled run queue as the kernel's do (`enqueue_task_fair` and
//! `dequeue_task_fair` "end evaluation on encountering a throttled cfs_rq"; a task counts
//! in the root's `h_nr_running` only when no run queue on its path is throttled), enqueue
//! and dequeue an entity with the run queue's `check_enqueue_throttle` and
//! `return_cfs_rq_runtime`, and `put_prev` and the pick check each level's runtime
//! (`check_cfs_rq_runtime`).

use super::bandwidth::{self, Bandwidth};
use super::weights::NICE_0_LOAD;
use crate::ctx::Ctx;
use crate::types::{CpuId, GroupId, TaskId};
use schedlab_spec::model::DEFAULT_SHARES;

/// `MIN_SHARES`: the smallest weight a group entity gets.
pub const MIN_SHARES: u64 = 2;

/// A scheduling entity (`struct sched_entity`): a task, or a task group's entity on one
/// CPU. Tasks take the even numbers (`2·t`), group entities the odd ones, so that one
/// table indexed by entity holds both and grows with the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ent(pub u32);

impl Ent {
    /// A task's entity (`p->se`).
    #[inline]
    pub const fn task(t: TaskId) -> Ent {
        Ent(t.0 << 1)
    }

    /// The group entity of slot `k` (group `g ≥ 1` on CPU `c`: `(g − 1)·nr_cpus + c`).
    #[inline]
    const fn group_slot(k: u32) -> Ent {
        Ent(k << 1 | 1)
    }

    /// The task, if this is a task's entity (`entity_is_task`).
    #[inline]
    pub fn task_id(self) -> Option<TaskId> {
        (self.0 & 1 == 0).then_some(TaskId(self.0 >> 1))
    }

    #[inline]
    pub fn is_task(self) -> bool {
        self.0 & 1 == 0
    }

    /// Index into per-entity tables.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// A run queue (`struct cfs_rq`): group `g` on CPU `c` is `g·nr_cpus + c`, so the root
/// group's are the CPUs' own (`rq->cfs`) and their ids are the CPU numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RqId(pub u32);

impl RqId {
    /// The root run queue of `cpu` (`&rq->cfs`).
    #[inline]
    pub fn root(cpu: CpuId) -> RqId {
        RqId(cpu.0)
    }

    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// The class-independent part of a run queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqCounts {
    /// The entity running at this level (`cfs_rq->curr`), kept out of the tree.
    pub curr: Option<Ent>,
    /// Queued entities, curr included (`nr_running`).
    pub nr_running: u32,
    /// Sum of the queued entities' weights, curr included (`load.weight`).
    pub load: u64,
    /// Tasks queued in this run queue's subtree (`h_nr_running`), delayed ones included.
    pub h_nr_running: u32,
    /// The SCHED_IDLE ones among them (`idle_h_nr_running`).
    pub h_nr_idle: u32,
    /// Tasks of the subtree kept queued by DELAY_DEQUEUE (`h_nr_delayed`).
    pub h_nr_delayed: u32,
    /// The SCHED_IDLE ones among those.
    pub h_nr_delayed_idle: u32,
    /// CPU time `curr` ran that this level's `update_curr` has not charged yet.
    pub pending_ns: u64,
}

/// The class-independent part of an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntCommon {
    /// `se->load.weight`.
    pub weight: u32,
    /// `se->load.inv_weight`: a task's `sched_prio_to_wmult`; 0 for a group entity
    /// (`__calc_delta` then divides, as `__update_inv_weight` does).
    pub inv_weight: u32,
    /// Queued (`se->on_rq`).
    pub on_rq: bool,
    /// The run queue it is, or was last, queued on (`cfs_rq_of(se)`).
    pub rq: RqId,
}

impl Default for EntCommon {
    fn default() -> Self {
        EntCommon {
            weight: NICE_0_LOAD as u32,
            inv_weight: 0,
            on_rq: false,
            rq: RqId(0),
        }
    }
}

/// The tree of task groups and run queues of one fair class, with the counts and weights
/// the classes share. The class keeps its own per-entity and per-run-queue state (virtual
/// times, timelines) in tables indexed the same way.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    nr_cpus: u32,
    /// Per group: its parent (`None` for the root), its depth (root 0) and `cpu.shares`.
    parent: Vec<Option<GroupId>>,
    depth: Vec<u32>,
    shares: Vec<u64>,
    /// Per run queue.
    pub rqs: Vec<RqCounts>,
    /// Per group: the queued weight of its run queues over every CPU (`tg->load_avg`).
    tg_load: Vec<u64>,
    /// Per entity.
    pub ents: Vec<EntCommon>,
    /// Tasks queued on every CPU together (Σ of the root run queues' `h_nr_running`):
    /// when 0, the balancer knows without a scan that there is nothing to pull.
    nr_queued_tasks: u32,
    /// CFS bandwidth: every group's pool and every run queue's runtime and throttling.
    pub bw: Bandwidth,
}

impl Hierarchy {
    /// A machine of `nr_cpus` CPUs with the root group only.
    pub fn new(nr_cpus: usize) -> Hierarchy {
        let mut bw = Bandwidth::new(nr_cpus);
        bw.add_group(&Default::default(), None);
        Hierarchy {
            nr_cpus: nr_cpus as u32,
            parent: vec![None],
            depth: vec![0],
            shares: vec![DEFAULT_SHARES],
            rqs: vec![RqCounts::default(); nr_cpus],
            tg_load: vec![0],
            ents: Vec::new(),
            nr_queued_tasks: 0,
            bw,
        }
    }

    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.nr_cpus as usize
    }

    #[inline]
    pub fn nr_groups(&self) -> usize {
        self.parent.len()
    }

    /// Size the tables for `ctx`'s groups and for task `t`. Groups only ever grow (the
    /// spec's tree is set before the run), and ids stay put when they do. Returns true
    /// when anything grew (the class then grows its own tables to [`Self::nr_ents`] and
    /// [`Self::nr_rqs`]).
    #[inline]
    pub fn ensure(&mut self, ctx: &Ctx, t: Option<TaskId>) -> bool {
        let task_fits = t.is_none_or(|t| Ent::task(t).idx() < self.ents.len());
        if task_fits && ctx.nr_groups() <= self.nr_groups() {
            return false;
        }
        self.grow(ctx, t)
    }

    /// [`Self::ensure`] when something is missing: add the new groups, and room for every
    /// task created so far.
    #[cold]
    fn grow(&mut self, ctx: &Ctx, t: Option<TaskId>) -> bool {
        let mut grew = false;
        let n = ctx.nr_groups();
        if n > self.nr_groups() {
            for g in self.nr_groups()..n {
                let info = ctx.group(g as GroupId);
                let parent = info.parent;
                self.parent.push(parent);
                self.depth
                    .push(parent.map_or(0, |p| self.depth[p as usize] + 1));
                self.shares
                    .push(info.cpu.shares.unwrap_or(DEFAULT_SHARES).max(MIN_SHARES));
                self.tg_load.push(0);
                self.bw.add_group(&info.cpu, parent);
                for c in 0..self.nr_cpus {
                    self.rqs.push(RqCounts::default());
                    let e = self.group_ent(RqId(g as u32 * self.nr_cpus + c));
                    let parent_rq = RqId(parent.unwrap_or(0) * self.nr_cpus + c);
                    self.grow_ents(e.idx() + 1);
                    self.ents[e.idx()].rq = parent_rq;
                }
            }
            grew = true;
        }
        if let Some(t) = t {
            let last = t.0.max((ctx.nr_tasks() as u32).saturating_sub(1));
            let need = Ent::task(TaskId(last)).idx() + 1;
            if self.ents.len() < need {
                self.grow_ents(need);
                grew = true;
            }
        }
        grew
    }

    fn grow_ents(&mut self, n: usize) {
        if self.ents.len() < n {
            self.ents.resize(n, EntCommon::default());
        }
    }

    /// Length of per-entity tables.
    #[inline]
    pub fn nr_ents(&self) -> usize {
        self.ents.len()
    }

    /// Length of per-run-queue tables.
    #[inline]
    pub fn nr_rqs(&self) -> usize {
        self.rqs.len()
    }

    /// Group `g`'s run queue on `cpu` (`tg->cfs_rq[cpu]`).
    #[inline]
    pub fn rq_of_group(&self, g: GroupId, cpu: CpuId) -> RqId {
        RqId(g * self.nr_cpus + cpu.0)
    }

    /// The CPU a run queue belongs to (`rq_of(cfs_rq)`).
    #[inline]
    pub fn cpu_of(&self, rq: RqId) -> CpuId {
        CpuId(rq.0 % self.nr_cpus)
    }

    /// The group a run queue belongs to (`cfs_rq->tg`).
    #[inline]
    pub fn group_of(&self, rq: RqId) -> GroupId {
        rq.0 / self.nr_cpus
    }

    /// The group entity that owns `rq` (`tg->se[cpu]`); `None` for a root run queue.
    #[inline]
    pub fn owner(&self, rq: RqId) -> Option<Ent> {
        (rq.0 >= self.nr_cpus).then(|| self.group_ent(rq))
    }

    #[inline]
    fn group_ent(&self, rq: RqId) -> Ent {
        Ent::group_slot(rq.0 - self.nr_cpus)
    }

    /// The run queue a group entity owns (`group_cfs_rq(se)`); `None` for a task.
    #[inline]
    pub fn my_q(&self, e: Ent) -> Option<RqId> {
        (!e.is_task()).then(|| RqId((e.0 >> 1) + self.nr_cpus))
    }

    /// The entity `e` is queued under (`parent_entity`): the owner of its run queue.
    #[inline]
    pub fn parent_ent(&self, e: Ent) -> Option<Ent> {
        self.owner(self.ents[e.idx()].rq)
    }

    /// `se->depth`: 0 for entities in a root run queue.
    #[inline]
    pub fn depth(&self, e: Ent) -> u32 {
        let rq = self.ents[e.idx()].rq;
        self.depth[self.group_of(rq) as usize]
    }

    #[inline]
    pub fn on_rq(&self, e: Ent) -> bool {
        self.ents[e.idx()].on_rq
    }

    #[inline]
    pub fn rq_of(&self, e: Ent) -> RqId {
        self.ents[e.idx()].rq
    }

    #[inline]
    pub fn weight(&self, e: Ent) -> u32 {
        self.ents[e.idx()].weight
    }

    #[inline]
    pub fn rq(&self, rq: RqId) -> &RqCounts {
        &self.rqs[rq.idx()]
    }

    #[inline]
    pub fn rq_mut(&mut self, rq: RqId) -> &mut RqCounts {
        &mut self.rqs[rq.idx()]
    }

    /// The running task's entity at the leaf of `cpu`'s tree, if a fair task runs.
    pub fn curr_task(&self, cpu: CpuId) -> Option<TaskId> {
        let mut rq = RqId::root(cpu);
        loop {
            let e = self.rqs[rq.idx()].curr?;
            match self.my_q(e) {
                Some(q) => rq = q,
                None => return e.task_id(),
            }
        }
    }

    /// `account_entity_enqueue`: `e` is queued on `rq`.
    pub fn account_enqueue(&mut self, rq: RqId, e: Ent) {
        let ent = &mut self.ents[e.idx()];
        ent.on_rq = true;
        ent.rq = rq;
        let w = ent.weight as u64;
        let r = &mut self.rqs[rq.idx()];
        r.nr_running += 1;
        r.load += w;
        let g = self.group_of(rq) as usize;
        self.tg_load[g] += w;
    }

    /// `account_entity_dequeue`.
    pub fn account_dequeue(&mut self, rq: RqId, e: Ent) {
        let ent = &mut self.ents[e.idx()];
        ent.on_rq = false;
        let w = ent.weight as u64;
        let r = &mut self.rqs[rq.idx()];
        r.nr_running -= 1;
        r.load -= w;
        let g = self.group_of(rq) as usize;
        self.tg_load[g] -= w;
    }

    /// `update_load_set` of an entity, moving the queued weight of its run queue along
    /// (`update_load_sub` / `update_load_add` around it when it is queued).
    pub fn set_weight(&mut self, e: Ent, weight: u32, inv_weight: u32) {
        let ent = self.ents[e.idx()];
        if ent.on_rq {
            let (old, new) = (ent.weight as u64, weight as u64);
            let r = &mut self.rqs[ent.rq.idx()];
            r.load = r.load - old + new;
            let g = self.group_of(ent.rq) as usize;
            self.tg_load[g] = self.tg_load[g] - old + new;
        }
        let ent = &mut self.ents[e.idx()];
        ent.weight = weight;
        ent.inv_weight = inv_weight;
    }

    /// `calc_group_shares` for the group entity owning `grq`:
    /// `shares · load / Σ load`, clamped to `MIN_SHARES..=shares`.
    pub fn calc_group_shares(&self, grq: RqId) -> u64 {
        let g = self.group_of(grq) as usize;
        let tg_shares = self.shares[g];
        let load = self.rqs[grq.idx()].load;
        let tg_weight = self.tg_load[g];
        let shares = match (tg_shares * load).checked_div(tg_weight) {
            Some(s) => s,
            None => tg_shares * load,
        };
        shares.clamp(MIN_SHARES, tg_shares)
    }

    /// `cpu.shares` of the group of `rq`.
    pub fn shares_of(&self, rq: RqId) -> u64 {
        self.shares[self.group_of(rq) as usize]
    }

    /// `find_matching_se`: walk `se` and `pse` up to the ancestors that share a run queue.
    pub fn find_matching_se(&self, mut se: Ent, mut pse: Ent) -> (Ent, Ent) {
        let (mut sd, mut pd) = (self.depth(se), self.depth(pse));
        while sd > pd {
            sd -= 1;
            se = self.parent_ent(se).expect("depth > 0 has a parent");
        }
        while pd > sd {
            pd -= 1;
            pse = self.parent_ent(pse).expect("depth > 0 has a parent");
        }
        while self.rq_of(se) != self.rq_of(pse) {
            se = self
                .parent_ent(se)
                .expect("entities of one CPU meet at its root");
            pse = self
                .parent_ent(pse)
                .expect("entities of one CPU meet at its root");
        }
        (se, pse)
    }

    /// The ancestor of `e` (or `e` itself) queued on `rq`, if its path goes through it.
    pub fn ancestor_on(&self, mut e: Ent, rq: RqId) -> Option<Ent> {
        loop {
            if self.rq_of(e) == rq {
                return Some(e);
            }
            e = self.parent_ent(e)?;
        }
    }

    /// `cfs_rq->h_load` of `rq` (`update_cfs_rq_h_load`): the root's load, scaled down
    /// each level by `se.weight / (parent load + 1)`.
    pub fn h_load(&self, rq: RqId) -> u64 {
        match self.owner(rq) {
            None => self.rqs[rq.idx()].load,
            Some(ge) => {
                let prq = self.rq_of(ge);
                self.h_load(prq) * self.weight(ge) as u64 / (self.rqs[prq.idx()].load + 1)
            }
        }
    }

    /// `task_h_load`: the load a task contributes to its CPU's root run queue.
    pub fn task_h_load(&self, t: TaskId) -> u64 {
        let e = Ent::task(t);
        let Some(ent) = self.ents.get(e.idx()) else {
            return NICE_0_LOAD;
        };
        let rq = ent.rq;
        ent.weight as u64 * self.h_load(rq) / (self.rqs[rq.idx()].load + 1)
    }

    /// `rq->cfs.h_nr_running` less the delayed tasks (`h_nr_runnable`).
    pub fn h_nr_runnable(&self, cpu: CpuId) -> u32 {
        self.rqs
            .get(cpu.idx())
            .map_or(0, |r| r.h_nr_running - r.h_nr_delayed)
    }

    /// The SCHED_IDLE ones among them.
    pub fn h_nr_idle_runnable(&self, cpu: CpuId) -> u32 {
        self.rqs
            .get(cpu.idx())
            .map_or(0, |r| r.h_nr_idle - r.h_nr_delayed_idle)
    }

    /// Tasks queued on every CPU together, delayed ones included.
    #[inline]
    pub fn nr_queued_tasks(&self) -> u32 {
        self.nr_queued_tasks
    }

    /// The root run queue's weight (`cpu_load`).
    pub fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.rqs.get(cpu.idx()).map_or(0, |r| r.load)
    }

    /// The run queues of `cpu`, root first (parents before children).
    pub fn rqs_of(&self, cpu: CpuId) -> impl Iterator<Item = RqId> + '_ {
        (0..self.nr_groups() as u32).map(move |g| RqId(g * self.nr_cpus + cpu.0))
    }

    /// Walk the levels from `e` up: `(rq, entity)` for the entity and each ancestor.
    pub fn levels(&self, e: Ent) -> Levels<'_> {
        Levels {
            h: self,
            at: Some(e),
        }
    }

    /// Add `n` (and `idle` of them SCHED_IDLE) to the task counts of `rq` and every run
    /// queue above it, up to a throttled one.
    pub fn add_h_nr(&mut self, rq: RqId, n: i32, idle: i32) {
        let mut at = Some(rq);
        while let Some(q) = at {
            let r = &mut self.rqs[q.idx()];
            r.h_nr_running = r.h_nr_running.wrapping_add_signed(n);
            r.h_nr_idle = r.h_nr_idle.wrapping_add_signed(idle);
            if self.bw.throttled(q) {
                return;
            }
            at = self.owner(q).map(|ge| self.rq_of(ge));
        }
        self.add_queued_tasks(n);
    }

    /// Tasks now counted at (`n` > 0) or no longer counted at (`n` < 0) a root run queue.
    #[inline]
    pub(super) fn add_queued_tasks(&mut self, n: i32) {
        self.nr_queued_tasks = self.nr_queued_tasks.wrapping_add_signed(n);
    }

    /// Add `n` (`idle` of them SCHED_IDLE) to the delayed counts of `rq` and above
    /// (`set_delayed` / `clear_delayed`), up to a throttled one.
    pub fn add_h_delayed(&mut self, rq: RqId, n: i32, idle: i32) {
        let mut at = Some(rq);
        while let Some(q) = at {
            let r = &mut self.rqs[q.idx()];
            r.h_nr_delayed = r.h_nr_delayed.wrapping_add_signed(n);
            r.h_nr_delayed_idle = r.h_nr_delayed_idle.wrapping_add_signed(idle);
            if self.bw.throttled(q) {
                return;
            }
            at = self.owner(q).map(|ge| self.rq_of(ge));
        }
    }
}

/// Iterator of [`Hierarchy::levels`].
pub struct Levels<'a> {
    h: &'a Hierarchy,
    at: Option<Ent>,
}

impl Iterator for Levels<'_> {
    type Item = (RqId, Ent);
    fn next(&mut self) -> Option<(RqId, Ent)> {
        let e = self.at?;
        let rq = self.h.rq_of(e);
        self.at = self.h.owner(rq);
        Some((rq, e))
    }
}

/// How an entity is enqueued (the kernel's ENQUEUE_* flags as the classes use them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enq {
    /// A wake-up (ENQUEUE_WAKEUP); every ancestor enqueued on the way up is one too.
    Wakeup,
    /// A new task's first enqueue (ENQUEUE_INITIAL).
    New,
    /// Back after an attribute or group change (ENQUEUE_RESTORE).
    Restore,
    /// Attached by the load balancer or an affinity move (ENQUEUE_MIGRATED).
    Migrate,
}

/// How an entity is dequeued (DEQUEUE_* flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deq {
    /// It blocked (DEQUEUE_SLEEP); every ancestor dequeued on the way up is one too.
    Sleep,
    /// It exited.
    Exit,
    /// Taken off to change its attributes or group (DEQUEUE_SAVE without DEQUEUE_MOVE:
    /// the run queue's virtual clock is left where it is).
    Save,
    /// Detached by the load balancer or an affinity move (flags 0).
    Migrate,
    /// A DELAY_DEQUEUE entity finally leaves (DEQUEUE_SLEEP | DEQUEUE_DELAYED).
    Delayed,
}

impl Deq {
    /// DEQUEUE_SLEEP.
    pub fn sleep(self) -> bool {
        matches!(self, Deq::Sleep | Deq::Exit | Deq::Delayed)
    }
}

/// The per-level operations a fair class provides for the walks written here once.
pub trait GroupClass {
    fn h(&self) -> &Hierarchy;
    fn h_mut(&mut self) -> &mut Hierarchy;
    /// `enqueue_entity(cfs_rq, se, flags)`: `update_curr(cfs_rq)`, [`update_cfs_group`]
    /// of `e`, placement, accounting ([`Hierarchy::account_enqueue`]) and the timeline,
    /// in the class's order. `e` is not the task entity of a delayed task.
    fn enqueue_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, how: Enq);
    /// `dequeue_entity(cfs_rq, se, flags)`; false when `e` stays queued (DELAY_DEQUEUE).
    fn dequeue_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, how: Deq) -> bool;
    /// `update_curr(cfs_rq)`: charge `rq`'s current entity with the time it ran
    /// ([`RqCounts::pending_ns`]).
    fn update_curr(&mut self, ctx: &mut Ctx, rq: RqId);
    /// `reweight_entity(cfs_rq, se, weight)` of a group entity.
    fn reweight_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent, weight: u32);
    /// `put_prev_entity`: `e` stops being `rq`'s current entity.
    fn put_prev_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent);
    /// `pick_next_entity` on a non-empty `rq`, which leaves the entity where it is;
    /// `None` when the pick completed a delayed dequeue instead (the pick starts again
    /// from the root).
    fn pick_entity(&mut self, ctx: &mut Ctx, rq: RqId) -> Option<Ent>;
    /// `set_next_entity`: `e`, queued on `rq`, becomes its current entity.
    fn set_next_entity(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent);
    /// What `entity_tick` does after `update_curr` and `update_cfs_group` (CFS:
    /// `check_preempt_tick`).
    fn entity_tick(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        let _ = (ctx, rq, e);
    }
    /// `dequeue_task_fair` found the sleeper's run queue still busy: `parent` (the
    /// entity above it) becomes next buddy (`set_next_buddy`), where the class keeps
    /// buddies.
    fn sleeper_parent(&mut self, parent: Ent) {
        let _ = parent;
    }
    /// An entity's slice moved (the smallest slice of the run queue it owns, 6.12):
    /// EEVDF keeps it; CFS has none.
    fn group_slice_changed(&mut self, ctx: &mut Ctx, rq: RqId, e: Ent) {
        let _ = (ctx, rq, e);
    }
}

/// `update_cfs_group(se)`: a group entity's weight from [`Hierarchy::calc_group_shares`]
/// of the run queue it owns; an empty group keeps its weight.
pub fn update_cfs_group<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, e: Ent) {
    let Some(grq) = c.h().my_q(e) else { return };
    if c.h().rq(grq).load == 0 {
        return;
    }
    let shares = c.h().calc_group_shares(grq) as u32;
    if c.h().weight(e) != shares {
        let rq = c.h().rq_of(e);
        c.reweight_entity(ctx, rq, e, shares);
    }
}

/// `enqueue_task_fair`: queue task `t` in its group's run queue of `cpu`, and each
/// ancestor whose run queue was empty in its parent's (as a wake-up); then bring the
/// weights of the ancestors that were queued already up to date. Both walks end at a
/// throttled run queue.
pub fn enqueue_task<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    cpu: CpuId,
    t: TaskId,
    how: Enq,
    idle: bool,
) {
    let leaf = c.h().rq_of_group(ctx.task(t).group, cpu);
    let mut e = Ent::task(t);
    let mut rq = leaf;
    let mut how = how;
    let mut above = loop {
        bandwidth::enqueue_entity(c, ctx, rq, e, how);
        c.h_mut().rq_mut(rq).h_nr_running += 1;
        c.h_mut().rq_mut(rq).h_nr_idle += u32::from(idle);
        if c.h().bw.throttled(rq) {
            return;
        }
        let Some(ge) = c.h().owner(rq) else {
            c.h_mut().nr_queued_tasks += 1;
            return;
        };
        c.group_slice_changed(ctx, c.h().rq_of(ge), ge);
        if c.h().on_rq(ge) {
            break Some(ge);
        }
        e = ge;
        rq = c.h().rq_of(ge);
        how = Enq::Wakeup;
    };
    while let Some(ge) = above {
        let rq = c.h().rq_of(ge);
        update_cfs_group(c, ctx, ge);
        let r = c.h_mut().rq_mut(rq);
        r.h_nr_running += 1;
        r.h_nr_idle += u32::from(idle);
        if c.h().bw.throttled(rq) {
            return;
        }
        above = c.h().owner(rq);
        if let Some(up) = above {
            c.group_slice_changed(ctx, c.h().rq_of(up), up);
        }
    }
    c.h_mut().nr_queued_tasks += 1;
}

/// `dequeue_task_fair` / `dequeue_entities` from entity `e` (a task's, or its delayed
/// task's for [`Deq::Delayed`]): dequeue it, and each ancestor whose run queue became
/// empty (as a sleep); then bring the weights of the ancestors still queued up to date.
/// Returns false when the task entity stayed queued (DELAY_DEQUEUE). Both walks end at
/// a throttled run queue.
pub fn dequeue_task<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    t: TaskId,
    how: Deq,
    idle: bool,
) -> bool {
    let mut e = Ent::task(t);
    let mut how = how;
    let task_sleep = how.sleep();
    let mut above = loop {
        let rq = c.h().rq_of(e);
        if !bandwidth::dequeue_entity(c, ctx, rq, e, how) {
            return false;
        }
        let r = c.h_mut().rq_mut(rq);
        r.h_nr_running -= 1;
        r.h_nr_idle -= u32::from(idle);
        if c.h().bw.throttled(rq) {
            return true;
        }
        let parent = c.h().owner(rq);
        if c.h().rq(rq).load > 0 {
            if let Some(p) = parent {
                if task_sleep && !c.h().bw.throttled_hierarchy(rq) {
                    c.sleeper_parent(p);
                }
                c.group_slice_changed(ctx, c.h().rq_of(p), p);
            }
            break parent;
        }
        let Some(p) = parent else {
            c.h_mut().nr_queued_tasks -= 1;
            return true;
        };
        e = p;
        how = Deq::Sleep;
    };
    while let Some(ge) = above {
        let rq = c.h().rq_of(ge);
        update_cfs_group(c, ctx, ge);
        let r = c.h_mut().rq_mut(rq);
        r.h_nr_running -= 1;
        r.h_nr_idle -= u32::from(idle);
        if c.h().bw.throttled(rq) {
            return true;
        }
        above = c.h().owner(rq);
        if let Some(up) = above {
            c.group_slice_changed(ctx, c.h().rq_of(up), up);
        }
    }
    c.h_mut().nr_queued_tasks -= 1;
    true
}

/// `update_curr_fair` for the running task `t`: the time is owed to every level of its
/// path; its own run queue's `update_curr` charges it now, the levels above when they
/// are next updated. False when `t` is not its run queue's current entity (an attribute
/// change put it and it has not been picked again): the class charges it alone.
pub fn update_curr_task<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    t: TaskId,
    delta: u64,
) -> bool {
    let e = Ent::task(t);
    let leaf = c.h().rq_of(e);
    if c.h().rq(leaf).curr != Some(e) {
        return false;
    }
    let mut at = Some(leaf);
    while let Some(rq) = at {
        c.h_mut().rq_mut(rq).pending_ns += delta;
        at = c.h().owner(rq).map(|ge| c.h().rq_of(ge));
    }
    c.update_curr(ctx, leaf);
    true
}

/// `put_prev_task_fair`: `put_prev_entity` on every level of `t`'s path, if `t` is the
/// current fair task of its CPU (else nothing: it was put already). Each level's run
/// queue is throttled there if its runtime is spent (`check_cfs_rq_runtime`, which the
/// kernel calls inside `put_prev_entity` before the entity goes back into the tree: the
/// entity is the same either way, as throttling moves only the level above).
pub fn put_prev_task<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, t: TaskId) {
    let cpu = c.h().cpu_of(c.h().rq_of(Ent::task(t)));
    if c.h().curr_task(cpu) != Some(t) {
        return;
    }
    let mut at = Some(Ent::task(t));
    while let Some(e) = at {
        let rq = c.h().rq_of(e);
        if c.h().rq(rq).curr == Some(e) {
            c.put_prev_entity(ctx, rq, e);
            bandwidth::check_cfs_rq_runtime(c, ctx, rq);
        }
        at = c.h().owner(rq);
    }
}

/// `pick_next_task_fair`: `pick_task_fair` picks an entity per level from `cpu`'s root
/// run queue down to a task, changing nothing but what a completed delayed dequeue or a
/// throttled level (`check_cfs_rq_runtime`) changes (then it starts again from the
/// root); only then does `set_next_task_fair` make the task's entity and each ancestor
/// current, from the task up. Setting a level
/// during the descent would leave a group entity out of its tree and no longer current
/// when a delayed dequeue below it restarts the pick.
pub fn pick_next_task<C: GroupClass + ?Sized>(
    c: &mut C,
    ctx: &mut Ctx,
    cpu: CpuId,
) -> Option<TaskId> {
    if let Some(prev) = c.h().curr_task(cpu) {
        // Not put back by put_prev (e.g. it changed class while running).
        put_prev_task(c, ctx, prev);
    }
    let task = 'again: loop {
        let mut rq = RqId::root(cpu);
        if c.h().rq(rq).nr_running == 0 {
            return None;
        }
        loop {
            if bandwidth::check_cfs_rq_runtime(c, ctx, rq) {
                continue 'again;
            }
            debug_assert!(c.h().rq(rq).nr_running > 0, "picking from an empty {rq:?}");
            let Some(e) = c.pick_entity(ctx, rq) else {
                continue 'again;
            };
            match c.h().my_q(e) {
                Some(q) => rq = q,
                None => break 'again e,
            }
        }
    };
    let mut at = Some(task);
    while let Some(e) = at {
        let rq = c.h().rq_of(e);
        c.set_next_entity(ctx, rq, e);
        at = c.h().owner(rq);
    }
    task.task_id()
}

/// `task_tick_fair`: `entity_tick` on every level of the running task's path.
pub fn tick_task<C: GroupClass + ?Sized>(c: &mut C, ctx: &mut Ctx, t: TaskId) {
    let mut at = Some(Ent::task(t));
    while let Some(e) = at {
        let rq = c.h().rq_of(e);
        if c.h().rq(rq).curr != Some(e) {
            return;
        }
        c.update_curr(ctx, rq);
        update_cfs_group(c, ctx, e);
        c.entity_tick(ctx, rq, e);
        at = c.h().owner(rq);
    }
}

impl Hierarchy {
    /// Is task `t` queued below a throttled run queue (CFS bandwidth), so that it may wait
    /// on an idle CPU? (`Scheduler::is_throttled` of both fair classes.)
    pub fn task_throttled(&self, t: TaskId) -> bool {
        let e = Ent::task(t);
        let queued = e.idx() < self.nr_ents() && self.on_rq(e);
        queued && self.bw.throttled_hierarchy(self.rq_of(e))
    }

    /// The entities queued on `rq` (`on_rq` there), in id order: what its class's tree
    /// and current entity must hold between them (for tests).
    #[doc(hidden)]
    pub fn queued_on(&self, rq: RqId) -> Vec<Ent> {
        (0..self.ents.len() as u32)
            .map(Ent)
            .filter(|&e| self.on_rq(e) && self.rq_of(e) == rq)
            .collect()
    }

    /// The bookkeeping every operation must leave consistent (for tests): each run
    /// queue's entity count and weight are those of the entities queued on it, and each
    /// group's total is the sum over its run queues; a group entity is queued exactly when
    /// its run queue is neither empty nor throttled; each run queue's task counts are
    /// those of the tasks queued below it up to a throttled run queue; a queued task sits
    /// in its group's run queue on its CPU; a run queue's current entity is queued there
    /// or was dequeued from there; the bandwidth bookkeeping holds
    /// ([`Hierarchy::check_bandwidth`]).
    #[doc(hidden)]
    pub fn check(&self, ctx: &Ctx) -> Result<(), String> {
        let n = self.rqs.len();
        let (mut nr, mut load) = (vec![0u32; n], vec![0u64; n]);
        let (mut h_nr, mut h_idle) = (vec![0u32; n], vec![0u32; n]);
        for (i, ent) in self.ents.iter().enumerate() {
            let e = Ent(i as u32);
            if !ent.on_rq {
                continue;
            }
            nr[ent.rq.idx()] += 1;
            load[ent.rq.idx()] += ent.weight as u64;
            if let Some(t) = e.task_id() {
                let v = ctx.task(t);
                let want = self.rq_of_group(v.group, v.cpu);
                if ent.rq != want {
                    return Err(format!("{t:?} is queued on {:?}, not {want:?}", ent.rq));
                }
                let idle = u32::from(v.attrs.policy == crate::types::Policy::Idle);
                for (q, _) in self.levels(e) {
                    h_nr[q.idx()] += 1;
                    h_idle[q.idx()] += idle;
                    if self.bw.throttled(q) {
                        break;
                    }
                }
            }
        }
        for (i, r) in self.rqs.iter().enumerate() {
            let rq = RqId(i as u32);
            if (r.nr_running, r.load) != (nr[i], load[i]) {
                return Err(format!(
                    "{rq:?}: nr_running {} load {}, its entities make {} and {}",
                    r.nr_running, r.load, nr[i], load[i]
                ));
            }
            if (r.h_nr_running, r.h_nr_idle) != (h_nr[i], h_idle[i]) {
                return Err(format!(
                    "{rq:?}: h_nr_running {} (idle {}), the tasks below make {} ({})",
                    r.h_nr_running, r.h_nr_idle, h_nr[i], h_idle[i]
                ));
            }
            if let Some(ge) = self.owner(rq) {
                let throttled = self.bw.throttled(rq);
                if self.on_rq(ge) != (r.nr_running > 0 && !throttled) {
                    return Err(format!(
                        "{ge:?} queued {} while its {rq:?} holds {} (throttled {throttled})",
                        self.on_rq(ge),
                        r.nr_running
                    ));
                }
            }
            if let Some(c) = r.curr {
                if self.rq_of(c) != rq {
                    return Err(format!(
                        "{rq:?}'s current {c:?} belongs to {:?}",
                        self.rq_of(c)
                    ));
                }
            }
        }
        let queued: u32 = (0..self.nr_cpus()).map(|c| self.rqs[c].h_nr_running).sum();
        if queued != self.nr_queued_tasks {
            return Err(format!(
                "{} tasks counted queued, the root run queues hold {queued}",
                self.nr_queued_tasks
            ));
        }
        for g in 0..self.nr_groups() {
            let sum: u64 = (0..self.nr_cpus)
                .map(|c| self.rqs[g * self.nr_cpus() + c as usize].load)
                .sum();
            if sum != self.tg_load[g] {
                return Err(format!("group {g}: load {} ≠ Σ {sum}", self.tg_load[g]));
            }
        }
        self.check_bandwidth()
    }
}

//! Where a waking or new fair task is queued: `select_task_rq_fair`.
//!
//! Source: Linux 6.1.192 `kernel/sched/fair.c`: `record_wakee` and `wake_wide`
//! (l.6340-6385), `wake_affine_idle`, `wake_affine_weight` and `wake_affine`
//! (l.6400-6486), `find_idlest_group_cpu` and `find_idlest_cpu` (l.6496-6602),
//! `__select_idle_cpu` (l.6605), `select_idle_core`, `select_idle_smt` (l.6672-6725),
//! `select_idle_cpu` (l.6751-6840), `select_idle_sibling` (l.6910-7012),
//! `select_task_rq_fair` (l.7460-7520), and for forks `update_sg_wakeup_stats`,
//! `update_pick_idlest` and `find_idlest_group` (l.9540-9850) with `group_classify`
//! (l.9076-9140); `select_fallback_rq`'s rule (kernel/sched/core.c) when the choice is
//! not allowed.
//!
//! Simplifications: the waker's CPU is the engine's (`Ctx::wake_flags`); a timer or a
//! first start wakes from the sleeper's previous CPU. The SIS_PROP/SIS_UTIL limits on the
//! LLC scan are not modelled (it scans the whole LLC), nor energy-aware placement, asym
//! capacity, core scheduling or per-CPU kthread stacking. `has_idle_cores` is exact (the
//! kernel's hint is set when a core goes idle and cleared by a scan that found none).
//! Without PELT, `wake_affine_weight` compares instantaneous queued loads (the wakee,
//! asleep, is in neither); `find_idlest_group_cpu` takes the first idle CPU (no idle
//! states or idle timestamps), else the least loaded.

use super::{idle_cpu, idle_for_wakee, nr_running, FairRq, FairSmp};
use crate::ctx::Ctx;
use crate::sched::WakeKind;
use crate::topology::{SchedDomain, SdFlags};
use crate::types::{CpuId, CpuMask, TaskId};

/// SCHED_CAPACITY_SCALE: the capacity of every CPU.
pub(crate) const CAPACITY: u64 = 1024;

/// `enum group_type`, in increasing order of busyness (the ones modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// `struct sg_lb_stats` (the fields the model keeps).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupStats {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub weight: u32,
    pub capacity: u64,
    pub avg_load: u64,
}

impl GroupStats {
    /// Statistics of the CPUs of `group` within `cpus` (`update_sg_lb_stats` and
    /// `update_sg_wakeup_stats` without PELT: a CPU with anything runnable is fully
    /// utilised, its runnable average is its task count).
    pub(crate) fn of<R: FairRq>(ctx: &Ctx, rq: &R, group: &CpuMask, cpus: &CpuMask) -> Self {
        let mut s = GroupStats::default();
        for c in group.iter().filter(|&c| cpus.contains(c)) {
            let nr = nr_running(ctx, rq, c);
            s.load += rq.cpu_load(c);
            s.sum_nr_running += nr;
            s.sum_h_nr_running += rq.h_nr_running(c);
            s.runnable += nr as u64 * CAPACITY;
            if nr > 0 || super::staying_curr(ctx, c).is_some() {
                s.util += CAPACITY;
            } else if idle_cpu(ctx, rq, c) {
                s.idle_cpus += 1;
            }
        }
        s.weight = group.count();
        s.capacity = s.weight as u64 * CAPACITY;
        s
    }

    /// `group_classify` (overloaded, fully busy or with spare capacity).
    pub(crate) fn classify(&self, imbalance_pct: u64) -> GroupType {
        if self.is_overloaded(imbalance_pct) {
            GroupType::Overloaded
        } else if !self.has_capacity(imbalance_pct) {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        }
    }

    /// `group_is_overloaded`.
    fn is_overloaded(&self, pct: u64) -> bool {
        self.sum_nr_running > self.weight
            && (self.capacity * 100 < self.util * pct || self.capacity * pct < self.runnable * 100)
    }

    /// `group_has_capacity`.
    fn has_capacity(&self, pct: u64) -> bool {
        if self.sum_nr_running < self.weight {
            return true;
        }
        if self.capacity * pct < self.runnable * 100 {
            return false;
        }
        self.capacity * 100 > self.util * pct
    }

    /// `avg_load` = load scaled by capacity.
    pub(crate) fn compute_avg_load(&mut self) {
        self.avg_load = self.load * CAPACITY / self.capacity.max(1);
    }
}

impl FairSmp {
    /// `select_task_rq_fair`: the CPU `t` is queued on when it wakes (`WF_TTWU`) or
    /// starts (`WF_FORK`).
    pub fn select_task_rq<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &R,
        t: TaskId,
        prev: CpuId,
        kind: WakeKind,
    ) -> CpuId {
        self.ensure_task(ctx, t);
        let aff = ctx.task(t).affinity;
        let wf = ctx.wake_flags();
        let this = wf.waker_cpu.unwrap_or(prev);
        let sync = wf.sync;
        let mut new_cpu = prev;
        let mut want_affine = false;
        if kind == WakeKind::Wakeup {
            self.record_wakee(ctx, this, t);
            want_affine = !self.wake_wide(ctx, this, t) && aff.contains(this);
        }
        let sd_flag = match kind {
            WakeKind::Wakeup => SdFlags::BALANCE_WAKE,
            WakeKind::Fork => SdFlags::BALANCE_FORK,
        };
        let mut slow: Option<usize> = None;
        let nr_doms = ctx.sched_domains(this).len();
        for i in 0..nr_doms {
            let sd = &ctx.sched_domains(this)[i];
            if want_affine && sd.flags().has(SdFlags::WAKE_AFFINE) && sd.span.contains(prev) {
                if this != prev {
                    let sd = self.view(sd);
                    new_cpu = self.wake_affine(ctx, rq, &sd, t, this, prev, sync);
                }
                slow = None;
                break;
            }
            if sd.flags().has(sd_flag) {
                slow = Some(i);
            } else if !want_affine {
                break;
            }
        }
        if let Some(i) = slow {
            new_cpu = self.find_idlest_cpu(ctx, rq, i, t, this, prev, sd_flag);
        } else if kind == WakeKind::Wakeup {
            new_cpu = self.select_idle_sibling(ctx, rq, t, prev, new_cpu);
        }
        if aff.contains(new_cpu) {
            new_cpu
        } else if aff.contains(prev) {
            prev
        } else {
            aff.first().expect("empty affinity")
        }
    }

    /// `record_wakee`: the waker (the task running on the waking CPU) counts how often it
    /// switches wakees, halved once a second.
    fn record_wakee(&mut self, ctx: &Ctx, this: CpuId, wakee: TaskId) {
        let Some(waker) = ctx.curr(this) else { return };
        if waker == wakee {
            return;
        }
        self.ensure_task(ctx, waker);
        let jiffies = jiffies(ctx);
        let w = &mut self.tasks[waker.idx()];
        if jiffies > w.wakee_flip_decay + ctx.hz() as i64 {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay = jiffies;
        }
        if w.last_wakee != Some(wakee) {
            w.last_wakee = Some(wakee);
            w.wakee_flips += 1;
        }
    }

    /// `wake_wide`: an M:N waker/wakee relation wider than the LLC spreads instead of
    /// pulling the wakee to the waker.
    fn wake_wide(&self, ctx: &Ctx, this: CpuId, wakee: TaskId) -> bool {
        let waker_flips = ctx
            .curr(this)
            .and_then(|w| self.tasks.get(w.idx()))
            .map_or(0, |w| w.wakee_flips);
        let wakee_flips = self.tasks[wakee.idx()].wakee_flips;
        let factor = ctx.llc_span(this).count();
        let (master, slave) = if waker_flips < wakee_flips {
            (wakee_flips, waker_flips)
        } else {
            (waker_flips, wakee_flips)
        };
        !(slave < factor || master < slave * factor)
    }

    /// `wake_affine`: the waker's CPU `this` if the wakee would run sooner there, else
    /// `prev`.
    #[allow(clippy::too_many_arguments)]
    fn wake_affine<R: FairRq>(
        &self,
        ctx: &mut Ctx,
        rq: &R,
        sd: &DomainView,
        t: TaskId,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> CpuId {
        let mut target = None;
        if self.params.wa_idle {
            target = wake_affine_idle(ctx, rq, this, prev, sync);
        }
        if self.params.wa_weight && target.is_none() {
            target = self.wake_affine_weight(ctx, rq, sd, t, this, prev, sync);
        }
        if target == Some(this) {
            this
        } else {
            prev
        }
    }

    /// `wake_affine_weight`: compare the waker's CPU's load (plus the wakee, minus a sync
    /// waker) with the previous CPU's, the latter favoured by half of `imbalance_pct`.
    #[allow(clippy::too_many_arguments)]
    fn wake_affine_weight<R: FairRq>(
        &self,
        ctx: &Ctx,
        rq: &R,
        sd: &DomainView,
        t: TaskId,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> Option<CpuId> {
        let mut this_eff = rq.cpu_load(this) as i128;
        if sync {
            let current = ctx
                .curr(this)
                .filter(|&c| rq.is_fair(ctx, c))
                .map_or(0, |c| rq.task_load(c)) as i128;
            if current > this_eff {
                return Some(this);
            }
            this_eff -= current;
        }
        this_eff += rq.task_load(t) as i128;
        if self.params.wa_bias {
            this_eff *= 100;
        }
        this_eff *= CAPACITY as i128;
        let mut prev_eff = rq.cpu_load(prev) as i128;
        if self.params.wa_bias {
            prev_eff *= 100 + (sd.imbalance_pct as i128 - 100) / 2;
        }
        prev_eff *= CAPACITY as i128;
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this)
    }

    /// `select_idle_sibling`: an idle CPU sharing the cache with `target`, preferring
    /// `target`, then `prev`, the recently used CPU, an idle core (SMT), an idle sibling
    /// of `prev`, any idle CPU of the LLC; else `target`.
    fn select_idle_sibling<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &R,
        t: TaskId,
        prev: CpuId,
        target: CpuId,
    ) -> CpuId {
        let doms = ctx.domains();
        if idle_for_wakee(ctx, rq, target) {
            return target;
        }
        if prev != target && doms.share_cache(prev, target) && idle_for_wakee(ctx, rq, prev) {
            return prev;
        }
        let aff = ctx.task(t).affinity;
        let recent = self.tasks[t.idx()].recent_used_cpu.unwrap_or(prev);
        self.tasks[t.idx()].recent_used_cpu = Some(prev);
        if recent != prev
            && recent != target
            && doms.share_cache(recent, target)
            && idle_for_wakee(ctx, rq, recent)
            && aff.contains(recent)
        {
            return recent;
        }
        let Some(llc) = doms.llc_index(target) else {
            return target;
        };
        let span = ctx.sched_domains(target)[llc].span;
        let mut has_idle_core = false;
        if doms.smt_active() {
            has_idle_core = has_idle_cores(ctx, rq, &span);
            if !has_idle_core && doms.share_cache(prev, target) {
                if let Some(c) = select_idle_smt(ctx, rq, &aff, &span, prev) {
                    return c;
                }
            }
        }
        select_idle_cpu(ctx, rq, &aff, &span, has_idle_core, target).unwrap_or(target)
    }

    /// `find_idlest_cpu` from domain `level` of `cpu` down: the idlest group's idlest CPU,
    /// then again in that CPU's lower domains.
    #[allow(clippy::too_many_arguments)]
    fn find_idlest_cpu<R: FairRq>(
        &self,
        ctx: &mut Ctx,
        rq: &R,
        level: usize,
        t: TaskId,
        cpu: CpuId,
        prev: CpuId,
        sd_flag: SdFlags,
    ) -> CpuId {
        let aff = ctx.task(t).affinity;
        if ctx.sched_domains(cpu)[level].span.and(&aff).is_empty() {
            return prev;
        }
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let mut sd = Some(level);
        while let Some(i) = sd {
            let dom = self.view(&ctx.sched_domains(cpu)[i]);
            let child = i.checked_sub(1);
            if !dom.flags.has(sd_flag) {
                sd = child;
                continue;
            }
            let Some(group) = self.find_idlest_group(ctx, rq, cpu, i, &aff) else {
                sd = child;
                continue;
            };
            new_cpu = find_idlest_group_cpu(ctx, rq, &group, &aff, cpu);
            if new_cpu == cpu {
                sd = child;
                continue;
            }
            cpu = new_cpu;
            sd = None;
            for (j, tmp) in ctx.sched_domains(cpu).iter().enumerate() {
                if dom.weight <= tmp.weight() {
                    break;
                }
                if tmp.flags().has(sd_flag) {
                    sd = Some(j);
                }
            }
        }
        new_cpu
    }

    /// `find_idlest_group` in domain `level` of `this`: the least busy group, if it is
    /// worth leaving the local one for.
    fn find_idlest_group<R: FairRq>(
        &self,
        ctx: &mut Ctx,
        rq: &R,
        this: CpuId,
        level: usize,
        aff: &CpuMask,
    ) -> Option<CpuMask> {
        let sd = &ctx.sched_domains(this)[level];
        let pct = self.params.domain(self.era, sd).imbalance_pct;
        let (all, numa, imb_numa_nr) = (sd.span, sd.flags().has(SdFlags::NUMA), sd.imb_numa_nr);
        let local_allowed = sd.local_group().and(aff).count();
        let mut local: Option<(GroupStats, GroupType)> = None;
        let mut idlest: Option<(CpuMask, GroupStats, GroupType)> = None;
        let mut work = 0;
        for g in ctx.sched_domains(this)[level].groups.iter() {
            if g.and(aff).is_empty() {
                continue;
            }
            work += g.count() as u64;
            let mut s = GroupStats::of(ctx, rq, g, &all);
            let ty = s.classify(pct);
            if matches!(ty, GroupType::FullyBusy | GroupType::Overloaded) {
                s.compute_avg_load();
            }
            if g.contains(this) {
                local = Some((s, ty));
                continue;
            }
            let better = match &idlest {
                None => true,
                Some((_, is, ity)) => pick_idlest(&s, ty, is, *ity),
            };
            if better {
                idlest = Some((*g, s, ty));
            }
        }
        ctx.count_work(work);
        let (group, is, ity) = idlest?;
        let Some((ls, lty)) = local else {
            return Some(group);
        };
        if lty < ity {
            return None;
        }
        if lty > ity {
            return Some(group);
        }
        match lty {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = CAPACITY * (pct - 100) / 100;
                if numa && is.avg_load + imbalance >= ls.avg_load {
                    return None;
                }
                if is.avg_load >= ls.avg_load + imbalance {
                    return None;
                }
                if 100 * ls.avg_load <= pct * is.avg_load {
                    return None;
                }
            }
            GroupType::HasSpare => {
                if numa {
                    let imb_numa_nr = imb_numa_nr.min(local_allowed);
                    let imbalance = ls.idle_cpus.abs_diff(is.idle_cpus);
                    if adjust_numa_imbalance(imbalance, ls.sum_nr_running + 1, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                if ls.idle_cpus >= is.idle_cpus {
                    return None;
                }
            }
        }
        Some(group)
    }
}

/// The constants of a domain a placement decision reads.
struct DomainView {
    flags: SdFlags,
    weight: u32,
    imbalance_pct: u64,
}

impl FairSmp {
    /// The few facts of a domain placement reads (no group list, nothing allocated).
    fn view(&self, sd: &SchedDomain) -> DomainView {
        DomainView {
            flags: sd.flags(),
            weight: sd.weight(),
            imbalance_pct: self.params.domain(self.era, sd).imbalance_pct,
        }
    }
}

/// `update_pick_idlest`: is `s` (of type `ty`) idler than the current idlest?
fn pick_idlest(s: &GroupStats, ty: GroupType, idlest: &GroupStats, ity: GroupType) -> bool {
    if ty != ity {
        return ty < ity;
    }
    match ty {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > s.avg_load,
        GroupType::HasSpare => {
            idlest.idle_cpus < s.idle_cpus
                || (idlest.idle_cpus == s.idle_cpus && idlest.util > s.util)
        }
    }
}

/// `adjust_numa_imbalance`: a NUMA level tolerates an imbalance of up to
/// NUMA_IMBALANCE_MIN (2) tasks while the destination runs at most `imb_numa_nr`.
pub(crate) fn adjust_numa_imbalance(imbalance: u32, dst_running: u32, imb_numa_nr: u32) -> u32 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= 2 {
        0
    } else {
        imbalance
    }
}

/// `wake_affine_idle`.
fn wake_affine_idle<R: FairRq>(
    ctx: &Ctx,
    rq: &R,
    this: CpuId,
    prev: CpuId,
    sync: bool,
) -> Option<CpuId> {
    if idle_cpu(ctx, rq, this) && ctx.domains().share_cache(this, prev) {
        return Some(if idle_cpu(ctx, rq, prev) { prev } else { this });
    }
    if sync && nr_running(ctx, rq, this) == 1 {
        return Some(this);
    }
    if idle_cpu(ctx, rq, prev) {
        return Some(prev);
    }
    None
}

/// `find_idlest_group_cpu`: the first idle (or SCHED_IDLE-only) CPU of the group, else
/// the least loaded one (`this` when nothing is lighter than nothing).
fn find_idlest_group_cpu<R: FairRq>(
    ctx: &mut Ctx,
    rq: &R,
    group: &CpuMask,
    aff: &CpuMask,
    this: CpuId,
) -> CpuId {
    if group.count() == 1 {
        return group.first().expect("a group has a CPU");
    }
    let mut least: Option<(u64, CpuId)> = None;
    let mut idle: Option<CpuId> = None;
    let mut steps = 0;
    for c in group.iter().filter(|&c| aff.contains(c)) {
        steps += 1;
        if super::sched_idle_cpu(ctx, rq, c) {
            ctx.count_work(steps);
            return c;
        }
        if idle_cpu(ctx, rq, c) {
            idle = idle.or(Some(c));
        } else if idle.is_none() {
            let l = rq.cpu_load(c);
            if least.is_none_or(|(m, _)| l < m) {
                least = Some((l, c));
            }
        }
    }
    ctx.count_work(steps);
    idle.or(least.map(|(_, c)| c)).unwrap_or(this)
}

/// Is some core of `span` idle on all its threads (`test_idle_cores`, kept exact)?
fn has_idle_cores<R: FairRq>(ctx: &Ctx, rq: &R, span: &CpuMask) -> bool {
    span.iter()
        .any(|c| ctx.smt_siblings(c).iter().all(|s| idle_cpu(ctx, rq, s)))
}

/// `select_idle_smt`: an idle sibling of `prev` in the LLC.
fn select_idle_smt<R: FairRq>(
    ctx: &Ctx,
    rq: &R,
    aff: &CpuMask,
    span: &CpuMask,
    prev: CpuId,
) -> Option<CpuId> {
    ctx.smt_siblings(prev)
        .iter()
        .filter(|&c| c != prev && aff.contains(c) && span.contains(c))
        .find(|&c| idle_for_wakee(ctx, rq, c))
}

/// `select_idle_cpu` over the LLC `span`, from `target + 1` wrapping around: with an idle
/// core somewhere, the first core idle on all its threads (`select_idle_core`; failing
/// that, the first idle thread seen); else the first idle CPU.
fn select_idle_cpu<R: FairRq>(
    ctx: &mut Ctx,
    rq: &R,
    aff: &CpuMask,
    span: &CpuMask,
    has_idle_core: bool,
    target: CpuId,
) -> Option<CpuId> {
    let mut cpus = span.and(aff);
    let n = ctx.nr_cpus();
    let mut idle_thread = None;
    let mut steps = 0;
    for k in 1..=n {
        let c = CpuId(((target.idx() + k) % n) as u32);
        if !cpus.contains(c) {
            continue;
        }
        steps += 1;
        if has_idle_core {
            let mut core_idle = true;
            for s in ctx.smt_siblings(c).iter() {
                if idle_cpu(ctx, rq, s) {
                    if idle_thread.is_none() && cpus.contains(s) {
                        idle_thread = Some(s);
                    }
                } else {
                    core_idle = false;
                    if idle_thread.is_none()
                        && super::sched_idle_cpu(ctx, rq, s)
                        && cpus.contains(s)
                    {
                        idle_thread = Some(s);
                    }
                }
            }
            if core_idle {
                ctx.count_work(steps);
                return Some(c);
            }
            for s in ctx.smt_siblings(c).iter() {
                cpus.clear(s);
            }
        } else if idle_for_wakee(ctx, rq, c) {
            ctx.count_work(steps);
            return Some(c);
        }
    }
    ctx.count_work(steps);
    idle_thread
}

/// Jiffies since boot.
pub(crate) fn jiffies(ctx: &Ctx) -> i64 {
    (ctx.now() / ctx.tick_ns()) as i64
}

//! Load balancing over the scheduling domains, shared by the fair classes.
//!
//! Source: Linux 6.1.192 `kernel/sched/fair.c`: `task_hot` (l.8207-8245),
//! `can_migrate_task` (l.8313-8400: affinity with LBF_SOME/DST/ALL_PINNED, the running
//! task, cache-hotness unless `nr_balance_failed > cache_nice_tries`), `detach_tasks`
//! (l.8455-8560: migrate_load/util/task, `shr_bound(load, nr_balance_failed)`, one task
//! on a newly idle CPU as under CONFIG_PREEMPTION), `attach_tasks` (l.8620),
//! `group_has_capacity`/`group_is_overloaded`/`group_classify` (l.9076-9140),
//! `update_sg_lb_stats` (l.9257-9345), `update_sd_pick_busiest` (l.9349-9460),
//! `update_sd_lb_stats` (l.9903-9972, `prefer_sibling` from the child domain),
//! `calculate_imbalance` (l.9975-10170), `find_busiest_group` (l.10172-10298),
//! `find_busiest_queue` (l.10301-10400), `should_we_balance` (l.10502-10540),
//! `load_balance` (l.10544-10805: redo without an all-pinned CPU, LBF_DST_PINNED retry,
//! `nr_balance_failed`, `balance_interval` doubling up to `max_interval` while balanced),
//! `get_sd_balance_interval` (l.10811-10832), `update_next_balance`,
//! `rebalance_domains` (l.10991-11080), `nohz_balancer_kick` (l.11147-11240),
//! `_nohz_idle_balance` (l.11391-11490) and the newly idle balance
//! (`newidle_balance`, l.11575-11690).
//!
//! Simplifications: no PELT (see `mod.rs`); no active balance (a CPU's running task is
//! never migrated: the engine has no stopper class), so a lone task on each of two SMT
//! siblings stays there; no misfit or asym-packing groups, no `group_imbalanced`
//! (`sgc->imbalance`), no NUMA-balancing `fbq_type`, no LB_MIN; the newidle balance runs
//! whenever some CPU has two runnable tasks (`rd->overload` computed exactly; no
//! `avg_idle` / `max_newidle_lb_cost` cut-off, no NI_RANDOM). The NO_HZ idle balance runs
//! from the kicking busy CPU's tick for every idle CPU that is due (the kernel sends it to
//! an idle "ilb" CPU; idle CPUs take no ticks here either), and its work is charged to
//! the kicking CPU.

use super::placement::{adjust_numa_imbalance, jiffies, GroupStats, GroupType, CAPACITY};
use super::{idle_cpu, nr_running, sched_idle_cpu, FairRq, FairSmp};
use crate::ctx::Ctx;
use crate::sched::BalanceKind;
use crate::topology::{SdFlags, SdInit};
use crate::types::{CpuId, CpuMask, Policy, TaskId};

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdleType {
    NotIdle,
    Idle,
    NewlyIdle,
}

/// `enum migration_type` (the ones modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Migration {
    Load,
    Util,
    Task,
}

/// The time as one balance call sees it: jiffies, HZ and the longest balance interval,
/// read from the context once.
struct Clock {
    /// Jiffies since boot.
    now: i64,
    hz: i64,
    /// `max_load_balance_interval`: HZ·ncpus/10 jiffies, at least 1.
    max_interval: i64,
}

impl Clock {
    fn of(ctx: &Ctx) -> Clock {
        let hz = ctx.hz() as i64;
        Clock {
            now: jiffies(ctx),
            hz,
            max_interval: (hz * ctx.nr_cpus() as i64 / 10).max(1),
        }
    }

    /// `get_sd_balance_interval` in jiffies: `balance_interval` ms, × busy_factor and one
    /// jiffy less for a busy CPU, within 1 .. `max_interval`.
    #[inline]
    fn interval(&self, level_ms: u64, c: &SdInit, busy: bool) -> i64 {
        let ms = if busy {
            level_ms * c.busy_factor
        } else {
            level_ms
        };
        let mut j = (ms * self.hz as u64).div_ceil(1000) as i64;
        if busy {
            j -= 1;
        }
        j.clamp(1, self.max_interval)
    }
}

/// `MAX_PINNED_INTERVAL` (ms).
const MAX_PINNED_INTERVAL: u64 = 512;

/// What `find_busiest_group` decided.
struct Busiest {
    group: CpuMask,
    imbalance: i64,
    migration: Migration,
}

/// The moving parts of one `load_balance` (`struct lb_env`).
struct Env {
    level: usize,
    idle: IdleType,
    dst: CpuId,
    cpus: CpuMask,
    dst_grpmask: CpuMask,
    sd_flags: SdFlags,
    cache_nice_tries: u32,
    nr_balance_failed: u32,
    imbalance: i64,
    migration: Migration,
    loop_max: u32,
    all_pinned: bool,
    dst_pinned: Option<CpuId>,
}

impl FairSmp {
    /// The class's `balance` hook: the periodic balance from a busy CPU's tick
    /// (`trigger_load_balance`: `rebalance_domains` when due, then the NO_HZ kick), or
    /// the newly idle balance.
    pub fn balance<R: FairRq>(&mut self, ctx: &mut Ctx, rq: &mut R, cpu: CpuId, kind: BalanceKind) {
        if ctx.nr_cpus() < 2 || ctx.sched_domains(cpu).is_empty() {
            return;
        }
        self.ensure_cpus(ctx);
        let clock = Clock::of(ctx);
        match kind {
            BalanceKind::NewIdle => self.newidle_balance(ctx, rq, cpu, &clock),
            BalanceKind::Tick => {
                if clock.now >= self.cpus[cpu.idx()].next_balance {
                    let idle = if idle_cpu(ctx, rq, cpu) {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    self.rebalance_domains(ctx, rq, cpu, idle, &clock);
                }
                self.nohz_balancer_kick(ctx, rq, cpu, &clock);
            }
        }
    }

    /// `rebalance_domains`: every domain of `cpu` whose interval has passed balances,
    /// bottom-up, until `should_we_balance` says another CPU of the group does it.
    fn rebalance_domains<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &mut R,
        cpu: CpuId,
        mut idle: IdleType,
        clock: &Clock,
    ) {
        self.ensure_domains(ctx, cpu);
        let now = clock.now;
        let mut busy = idle != IdleType::Idle && !sched_idle_cpu(ctx, rq, cpu);
        let mut next_balance = now + 60 * clock.hz;
        let mut continue_balancing = true;
        for level in 0..ctx.sched_domains(cpu).len() {
            if !continue_balancing {
                break;
            }
            let c = self.cpus[cpu.idx()].inits[level];
            let st = self.cpus[cpu.idx()].domains[level];
            let mut interval = clock.interval(st.balance_interval, &c, busy);
            if now >= st.last_balance + interval {
                if self.load_balance(ctx, rq, cpu, level, idle, &mut continue_balancing) > 0 {
                    idle = if idle_cpu(ctx, rq, cpu) {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    busy = idle != IdleType::Idle && !sched_idle_cpu(ctx, rq, cpu);
                }
                let st = &mut self.cpus[cpu.idx()].domains[level];
                st.last_balance = now;
                let ms = st.balance_interval;
                interval = clock.interval(ms, &c, busy);
            }
            let last = self.cpus[cpu.idx()].domains[level].last_balance;
            next_balance = next_balance.min(last + interval);
        }
        self.cpus[cpu.idx()].next_balance = next_balance;
    }

    /// `nohz_balancer_kick` + `_nohz_idle_balance`: when `nohz.next_balance` is due and
    /// this CPU has two runnable tasks or shares its LLC with another busy CPU, every idle
    /// CPU whose own balance is due runs `rebalance_domains` as an idle CPU.
    fn nohz_balancer_kick<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &mut R,
        cpu: CpuId,
        clock: &Clock,
    ) {
        let now = clock.now;
        if now < self.nohz_next_balance {
            return;
        }
        let n = ctx.nr_cpus();
        let any_idle = (0..n).any(|c| c != cpu.idx() && idle_cpu(ctx, rq, CpuId(c as u32)));
        if !any_idle {
            return;
        }
        let busy_in_llc = ctx
            .llc_span(cpu)
            .iter()
            .filter(|&c| !idle_cpu(ctx, rq, c))
            .count();
        if nr_running(ctx, rq, cpu) < 2 && busy_in_llc <= 1 {
            return;
        }
        let mut next_balance = now + 60 * clock.hz;
        let mut update = false;
        // Every CPU once, starting after this one and wrapping around.
        let mut i = cpu.idx();
        for _ in 0..n {
            i = if i + 1 == n { 0 } else { i + 1 };
            let c = CpuId(i as u32);
            if !idle_cpu(ctx, rq, c) || ctx.sched_domains(c).is_empty() {
                continue;
            }
            if now >= self.cpus[c.idx()].next_balance {
                self.rebalance_domains(ctx, rq, c, IdleType::Idle, clock);
            }
            next_balance = next_balance.min(self.cpus[c.idx()].next_balance);
            update = true;
        }
        if update {
            self.nohz_next_balance = next_balance;
        }
    }

    /// The newly idle balance: walk `cpu`'s domains bottom-up until a task was pulled.
    fn newidle_balance<R: FairRq>(&mut self, ctx: &mut Ctx, rq: &mut R, cpu: CpuId, clock: &Clock) {
        if nr_running(ctx, rq, cpu) > 0 {
            return;
        }
        self.ensure_domains(ctx, cpu);
        let now = clock.now;
        let mut next_balance = now + clock.hz;
        // rd->overload: some CPU has two runnable tasks; one of them must be fair.
        let overload =
            rq.any_queued() && (0..ctx.nr_cpus()).any(|c| nr_running(ctx, rq, CpuId(c as u32)) > 1);
        let levels = ctx.sched_domains(cpu).len();
        for level in 0..levels {
            let c = self.cpus[cpu.idx()].inits[level];
            let st = self.cpus[cpu.idx()].domains[level];
            next_balance =
                next_balance.min(st.last_balance + clock.interval(st.balance_interval, &c, false));
            if !overload {
                break;
            }
            let mut pulled = 0;
            if c.flags.has(SdFlags::BALANCE_NEWIDLE) {
                let mut cont = true;
                pulled = self.load_balance(ctx, rq, cpu, level, IdleType::NewlyIdle, &mut cont);
            }
            if pulled > 0 || nr_running(ctx, rq, cpu) > 0 {
                break;
            }
        }
        let st = &mut self.cpus[cpu.idx()];
        st.next_balance = st.next_balance.min(next_balance);
    }

    /// `load_balance` of `this` at domain `level`: returns the number of tasks pulled.
    fn load_balance<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &mut R,
        this: CpuId,
        level: usize,
        idle: IdleType,
        continue_balancing: &mut bool,
    ) -> u32 {
        let sd = &ctx.sched_domains(this)[level];
        let c = self.cpus[this.idx()].inits[level];
        let mut env = Env {
            level,
            idle,
            dst: this,
            cpus: sd.span,
            dst_grpmask: *sd.local_group(),
            sd_flags: c.flags,
            cache_nice_tries: c.cache_nice_tries,
            nr_balance_failed: self.cpus[this.idx()].domains[level].nr_balance_failed,
            imbalance: 0,
            migration: Migration::Load,
            loop_max: 0,
            all_pinned: false,
            dst_pinned: None,
        };
        let mut moved = 0;
        let balanced = loop {
            if !self.should_we_balance(ctx, rq, &env) {
                *continue_balancing = false;
                break true;
            }
            let Some(b) = self.find_busiest_group(ctx, rq, this, &c, &env) else {
                break true;
            };
            env.imbalance = b.imbalance;
            env.migration = b.migration;
            let Some(src) = find_busiest_queue(ctx, rq, &b.group, &env) else {
                break true;
            };
            let nr = nr_running(ctx, rq, src);
            if nr > 1 {
                env.all_pinned = true;
                env.loop_max = self.params.nr_migrate.min(nr);
                moved += self.detach_attach(ctx, rq, src, &mut env);
                while let Some(new_dst) = env.dst_pinned.take() {
                    if env.imbalance <= 0 {
                        break;
                    }
                    env.cpus.clear(env.dst);
                    env.dst = new_dst;
                    moved += self.detach_attach(ctx, rq, src, &mut env);
                }
                if env.all_pinned {
                    // Nothing on `src` may come here: look again without it.
                    env.cpus.clear(src);
                    if !is_subset(&env.cpus, &env.dst_grpmask) {
                        continue;
                    }
                    break true;
                }
            }
            break false;
        };
        let st = &mut self.cpus[this.idx()].domains[level];
        if !balanced {
            if moved == 0 {
                if idle != IdleType::NewlyIdle {
                    st.nr_balance_failed += 1;
                }
            } else {
                st.nr_balance_failed = 0;
            }
            st.balance_interval = c.min_interval;
            return moved;
        }
        st.nr_balance_failed = 0;
        if idle != IdleType::NewlyIdle
            && ((env.all_pinned && st.balance_interval < MAX_PINNED_INTERVAL)
                || st.balance_interval < c.max_interval)
        {
            st.balance_interval *= 2;
        }
        moved
    }

    /// `should_we_balance`: a newly idle CPU balances if it is still idle; otherwise only
    /// the first idle CPU of the local group, or its first CPU when none is idle.
    fn should_we_balance<R: FairRq>(&self, ctx: &Ctx, rq: &R, env: &Env) -> bool {
        if !env.cpus.contains(env.dst) {
            return false;
        }
        if env.idle == IdleType::NewlyIdle {
            return nr_running(ctx, rq, env.dst) == 0;
        }
        let group = env.dst_grpmask.and(&env.cpus);
        let first_idle = group.iter().find(|&c| idle_cpu(ctx, rq, c));
        match first_idle {
            Some(c) => c == env.dst,
            None => env.dst_grpmask.first() == Some(env.dst),
        }
    }

    /// `find_busiest_group` with `update_sd_lb_stats` and `calculate_imbalance`.
    fn find_busiest_group<R: FairRq>(
        &self,
        ctx: &mut Ctx,
        rq: &R,
        this: CpuId,
        c: &SdInit,
        env: &Env,
    ) -> Option<Busiest> {
        let doms = ctx.sched_domains(this);
        let sd = &doms[env.level];
        if !rq.any_queued() {
            // No group has a fair task: none can be the busiest (`update_sd_pick_busiest`
            // needs `sum_h_nr_running`). The scan's work is counted all the same.
            ctx.count_work(self.cpus[this.idx()].domains[env.level].groups_weight as u64);
            return None;
        }
        let prefer_sibling = env
            .level
            .checked_sub(1)
            .is_some_and(|i| doms[i].flags().has(SdFlags::PREFER_SIBLING));
        let (numa, imb_numa_nr) = (sd.flags().has(SdFlags::NUMA), sd.imb_numa_nr);
        let share_pkg = sd.flags().has(SdFlags::SHARE_PKG_RESOURCES);
        let pct = c.imbalance_pct;
        let mut local = GroupStats::default();
        let mut busiest: Option<(CpuMask, GroupStats, GroupType)> = None;
        let (mut total_load, mut total_capacity) = (0u64, 0u64);
        let mut work = 0;
        for g in &sd.groups {
            work += g.count() as u64;
            let mut s = GroupStats::of(ctx, rq, g, &env.cpus);
            let ty = s.classify(pct);
            if ty == GroupType::Overloaded {
                s.compute_avg_load();
            }
            total_load += s.load;
            total_capacity += s.capacity;
            if g.contains(env.dst) {
                local = s;
                continue;
            }
            if pick_busiest(&s, ty, busiest.as_ref().map(|(_, b, bt)| (b, *bt))) {
                busiest = Some((*g, s, ty));
            }
        }
        ctx.count_work(work);
        let (group, bs, bty) = busiest?;
        let lty = local.classify(pct);
        if lty == GroupType::Overloaded {
            local.compute_avg_load();
        }
        let sds_avg = total_load * CAPACITY / total_capacity.max(1);
        if lty > bty {
            return None;
        }
        let mut force = false;
        let local_no_worse = local.avg_load >= bs.avg_load
            || local.avg_load >= sds_avg
            || 100 * bs.avg_load <= pct * local.avg_load;
        if lty == GroupType::Overloaded && local_no_worse {
            return None;
        }
        if prefer_sibling
            && lty == GroupType::HasSpare
            && bs.sum_nr_running > local.sum_nr_running + 1
        {
            force = true;
        }
        if !force && bty != GroupType::Overloaded {
            if env.idle == IdleType::NotIdle {
                return None;
            }
            if bs.weight > 1 && local.idle_cpus <= bs.idle_cpus + 1 {
                return None;
            }
            if bs.sum_h_nr_running == 1 {
                return None;
            }
        }
        // calculate_imbalance
        let (migration, imbalance) = if lty == GroupType::HasSpare {
            if bty > GroupType::FullyBusy && !share_pkg {
                let spare = local.capacity.max(local.util) - local.util;
                if env.idle != IdleType::NotIdle && spare == 0 {
                    (Migration::Task, 1)
                } else {
                    (Migration::Util, spare as i64)
                }
            } else {
                let mut imb = if bs.weight == 1 || prefer_sibling {
                    bs.sum_nr_running.saturating_sub(local.sum_nr_running)
                } else {
                    local.idle_cpus.saturating_sub(bs.idle_cpus)
                };
                if numa {
                    imb = adjust_numa_imbalance(imb, local.sum_nr_running + 1, imb_numa_nr);
                }
                (Migration::Task, (imb >> 1) as i64)
            }
        } else {
            if lty < GroupType::Overloaded {
                local.compute_avg_load();
                if local.avg_load >= bs.avg_load || local.avg_load >= sds_avg {
                    return None;
                }
            }
            // Unsigned arithmetic as in the kernel: a negative difference wraps and loses
            // the min().
            let above = bs.avg_load.wrapping_sub(sds_avg).wrapping_mul(bs.capacity);
            let below = sds_avg
                .wrapping_sub(local.avg_load)
                .wrapping_mul(local.capacity);
            (Migration::Load, (above.min(below) / CAPACITY) as i64)
        };
        (imbalance > 0).then_some(Busiest {
            group,
            imbalance,
            migration,
        })
    }

    /// `detach_tasks` from `src` to `env.dst` and `attach_tasks`: returns how many moved.
    fn detach_attach<R: FairRq>(
        &mut self,
        ctx: &mut Ctx,
        rq: &mut R,
        src: CpuId,
        env: &mut Env,
    ) -> u32 {
        if nr_running(ctx, rq, src) <= 1 {
            env.all_pinned = false;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let mut cands = std::mem::take(&mut self.scratch);
        cands.clear();
        rq.migration_candidates(src, &mut cands);
        let mut moved = 0;
        let mut looked = 0;
        let dst = env.dst;
        for i in 0..cands.len() {
            let t = cands[i];
            if env.idle != IdleType::NotIdle && nr_running(ctx, rq, src) <= 1 {
                break;
            }
            looked += 1;
            if looked > env.loop_max {
                break;
            }
            ctx.count_work(1);
            if !self.can_migrate_task(ctx, rq, t, src, env) {
                continue;
            }
            match env.migration {
                Migration::Load => {
                    let load = rq.task_load(t).max(1);
                    if (load >> env.nr_balance_failed.min(63)) as i64 > env.imbalance {
                        continue;
                    }
                    env.imbalance -= load as i64;
                }
                Migration::Util => {
                    if (CAPACITY >> env.nr_balance_failed.min(63)) as i64 > env.imbalance {
                        continue;
                    }
                    env.imbalance -= CAPACITY as i64;
                }
                Migration::Task => env.imbalance -= 1,
            }
            rq.move_queued(ctx, t, src, dst);
            cands[moved] = t;
            moved += 1;
            if env.idle == IdleType::NewlyIdle || env.imbalance <= 0 {
                break;
            }
        }
        for &t in &cands[..moved] {
            rq.attach_preempt(ctx, dst, t);
        }
        self.scratch = cands;
        moved as u32
    }

    /// `can_migrate_task`: allowed on the destination (else note another CPU of its group
    /// that is), not running, not cache-hot unless balancing keeps failing.
    fn can_migrate_task<R: FairRq>(
        &self,
        ctx: &Ctx,
        rq: &R,
        t: TaskId,
        src: CpuId,
        env: &mut Env,
    ) -> bool {
        if !rq.can_detach(t) || rq.throttled_lb_pair(ctx, t, src, env.dst) {
            return false;
        }
        let aff = ctx.task(t).affinity;
        if !aff.contains(env.dst) {
            if env.idle == IdleType::NewlyIdle || env.dst_pinned.is_some() {
                return false;
            }
            env.dst_pinned = env
                .dst_grpmask
                .and(&env.cpus)
                .iter()
                .find(|&c| c != env.dst && aff.contains(c));
            return false;
        }
        env.all_pinned = false;
        if ctx.task(t).running {
            return false;
        }
        !self.task_hot(ctx, rq, t, src, env) || env.nr_balance_failed > env.cache_nice_tries
    }

    /// `task_hot`: recently run (within `sched_migration_cost`), or a buddy.
    fn task_hot<R: FairRq>(&self, ctx: &Ctx, rq: &R, t: TaskId, src: CpuId, env: &Env) -> bool {
        if ctx.task(t).attrs.policy == Policy::Idle || env.sd_flags.has(SdFlags::SHARE_CPUCAPACITY)
        {
            return false;
        }
        if nr_running(ctx, rq, env.dst) > 0 && rq.is_buddy(src, t) {
            return true;
        }
        let cost = self.params.migration_cost;
        match rq.exec_start(t) {
            Some(start) if cost > 0 => ctx.now().saturating_sub(start) < cost,
            _ => false,
        }
    }
}

/// `update_sd_pick_busiest`: is `s` (of type `ty`) busier than the current busiest?
fn pick_busiest(s: &GroupStats, ty: GroupType, busiest: Option<(&GroupStats, GroupType)>) -> bool {
    if s.sum_h_nr_running == 0 {
        return false;
    }
    // init_sd_lb_stats: the first candidate is compared with an empty "has spare" group
    // with every CPU idle.
    let Some((b, bty)) = busiest else {
        return true;
    };
    if ty != bty {
        return ty > bty;
    }
    match ty {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load > b.avg_load,
        GroupType::HasSpare => {
            s.idle_cpus < b.idle_cpus
                || (s.idle_cpus == b.idle_cpus && s.sum_nr_running > b.sum_nr_running)
        }
    }
}

/// `find_busiest_queue`: the CPU of `group` to pull from, by the migration type.
fn find_busiest_queue<R: FairRq>(ctx: &Ctx, rq: &R, group: &CpuMask, env: &Env) -> Option<CpuId> {
    let mut best: Option<(u64, CpuId)> = None;
    for c in group.iter().filter(|&c| env.cpus.contains(c)) {
        let nr = rq.h_nr_running(c);
        if nr == 0 {
            continue;
        }
        let key = match env.migration {
            Migration::Load => {
                let load = rq.cpu_load(c);
                if nr == 1 && load as i64 > env.imbalance {
                    continue;
                }
                load
            }
            Migration::Util => {
                if nr <= 1 {
                    continue;
                }
                CAPACITY
            }
            Migration::Task => nr as u64,
        };
        if best.is_none_or(|(k, _)| key > k) {
            best = Some((key, c));
        }
    }
    let _ = ctx;
    best.map(|(_, c)| c)
}

fn is_subset(a: &CpuMask, b: &CpuMask) -> bool {
    a.and(b) == *a
}

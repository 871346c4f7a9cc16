//! Infrastructure shared by the fair classes (CFS, `linux_cfs.rs`, and EEVDF,
//! `linux_eevdf.rs`), written once against [`FairRq`], the trait through which both expose
//! their run queues and entities:
//! - `weights.rs`: load weights and the kernel's fixed-point `calc_delta`;
//! - `placement.rs`: `select_task_rq_fair` (wake_affine, select_idle_sibling with the
//!   idle-core search on SMT, find_idlest_cpu for forks);
//! - `group.rs`: group scheduling — the tree of task groups and run queues, and the
//!   hierarchical enqueue, dequeue, pick, put, tick and `update_curr` walks;
//! - `balance.rs`: load balancing over the scheduling domains (`rebalance_domains`,
//!   `load_balance`, newidle balance, the NO_HZ idle balance);
//! - this file: the trait, the tunables both classes share and [`FairSmp`], the SMP state
//!   (per-CPU and per-domain balance state, per-task placement history).
//!
//! Source: Linux 6.1.192 `kernel/sched/fair.c` (the Debian `linux-source-6.1` tree); each
//! file cites its functions and lines. The v5.4 CFS class uses the same code with v5.4's
//! `sd_init` constants ([`SdEra::V5_4`]): the load balancer was rewritten in v5.5
//! (group types and migration types), and this is that rewrite, unchanged in its rules up
//! to the 6.6-6.9 tree the EEVDF class models.
//!
//! What the model leaves out, everywhere: PELT. "Load" is the instantaneous sum of queued
//! weights (`cfs_rq->load.weight`), a CPU's utilisation is full while it has anything
//! runnable and nothing otherwise, its runnable average is its number of runnable tasks
//! (× SCHED_CAPACITY_SCALE); there is no blocked load. All CPUs have the same capacity.
//!
//! Group scheduling (`group.rs`): a task group has per-CPU group entities queued in its
//! parent's run queues, so each class's per-CPU run queue is a tree of run queues. The
//! balancer and placement read only the trait's loads: `FairRq::cpu_load` is the root
//! run queue's load and `FairRq::task_load` the hierarchical `task_h_load` (the task's
//! weight scaled down the hierarchy by each level's `group_entity.weight / cfs_rq.load`),
//! and `FairRq::move_queued` detaches a task from its leaf run queue and enqueues it up
//! the hierarchy of the destination.

pub mod balance;
pub mod bandwidth;
pub mod group;
pub mod placement;
pub mod weights;

use super::tunables::{ChoiceCell, IntCell, Tunable, MAX};
use crate::ctx::Ctx;
use crate::topology::{SchedDomain, SdEra, SdInit};
use crate::types::{CpuId, Policy, TaskId};

/// What a fair class exposes to the shared placement and balancing code: its run-queue
/// counts and loads, its entities' weights and cache-hotness, and how to move a queued
/// task between its run queues.
pub trait FairRq {
    /// Runnable fair tasks queued on `cpu`, the running one included
    /// (`cfs_rq->h_nr_running`; EEVDF's delayed entities excluded).
    fn h_nr_running(&self, cpu: CpuId) -> u32;
    /// The SCHED_IDLE ones among them (`idle_h_nr_running`).
    fn idle_h_nr_running(&self, cpu: CpuId) -> u32;
    /// Whether any task of the class is queued on any CPU (delayed ones count): when none
    /// is, every CPU's `h_nr_running` is 0 and the balancer has nothing to look for.
    fn any_queued(&self) -> bool;
    /// `cpu_load`: the queued fair weight of `cpu`.
    fn cpu_load(&self, cpu: CpuId) -> u64;
    /// `task_h_load`: the load `t` contributes.
    fn task_load(&self, t: TaskId) -> u64;
    /// Whether `t` belongs to this class (it is queued in, or running as, a fair task).
    fn is_fair(&self, ctx: &Ctx, t: TaskId) -> bool {
        matches!(
            ctx.task(t).attrs.policy,
            Policy::Other | Policy::Batch | Policy::Idle
        )
    }
    /// The tasks `detach_tasks` may look at on `cpu`, in the order it looks at them
    /// (`cfs_tasks` from its tail: least recently run first), the running one excluded.
    fn migration_candidates(&self, cpu: CpuId, out: &mut Vec<TaskId>);
    /// A class-specific veto on moving `t` (EEVDF: a delayed-dequeue entity).
    fn can_detach(&self, t: TaskId) -> bool {
        let _ = t;
        true
    }
    /// `throttled_lb_pair`: `t`'s group is in a throttled hierarchy on `src` or `dst`.
    fn throttled_lb_pair(&self, ctx: &Ctx, t: TaskId, src: CpuId, dst: CpuId) -> bool {
        let _ = (ctx, t, src, dst);
        false
    }
    /// When `t` last ran (`se.exec_start`, ns), `None` if it never ran here or just
    /// migrated (never cache-hot).
    fn exec_start(&self, t: TaskId) -> Option<u64>;
    /// `t` is a next or last buddy on `cpu` (`task_hot`'s CACHE_HOT_BUDDY test).
    fn is_buddy(&self, cpu: CpuId, t: TaskId) -> bool {
        let _ = (cpu, t);
        false
    }
    /// `detach_task` + `attach_task`: move the queued, not running `t` from `src` to
    /// `dst` (the class renormalises its virtual time and calls `ctx.set_task_cpu`).
    fn move_queued(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId);
    /// `check_preempt_curr(dst, t)` after an attach: may the pulled `t` preempt `dst`?
    fn attach_preempt(&mut self, ctx: &mut Ctx, dst: CpuId, t: TaskId);
}

/// The task running on `cpu` that stays there: a current task that is no longer queued
/// (it blocked or exited and its CPU is in `schedule()`, e.g. during a newidle balance)
/// is already leaving.
pub(crate) fn staying_curr(ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
    ctx.curr(cpu).filter(|&t| ctx.task(t).on_rq)
}

/// `rq->nr_running` as far as a fair class can see it: its runnable tasks plus a running
/// task of another class.
pub(crate) fn nr_running<R: FairRq>(ctx: &Ctx, rq: &R, cpu: CpuId) -> u32 {
    let other = staying_curr(ctx, cpu).is_some_and(|t| !rq.is_fair(ctx, t));
    rq.h_nr_running(cpu) + u32::from(other)
}

/// `idle_cpu`: nothing runs and nothing is queued.
#[inline]
pub(crate) fn idle_cpu<R: FairRq>(ctx: &Ctx, rq: &R, cpu: CpuId) -> bool {
    // With no current task staying, `nr_running` is the fair count alone.
    staying_curr(ctx, cpu).is_none() && rq.h_nr_running(cpu) == 0
}

/// `sched_idle_cpu`: everything runnable is SCHED_IDLE.
pub(crate) fn sched_idle_cpu<R: FairRq>(ctx: &Ctx, rq: &R, cpu: CpuId) -> bool {
    let nr = nr_running(ctx, rq, cpu);
    nr > 0 && nr == rq.idle_h_nr_running(cpu)
}

/// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`: a CPU a wakee can run on at once.
pub(crate) fn idle_for_wakee<R: FairRq>(ctx: &Ctx, rq: &R, cpu: CpuId) -> bool {
    idle_cpu(ctx, rq, cpu) || sched_idle_cpu(ctx, rq, cpu)
}

/// `sysctl_sched_tunable_scaling` (`enum sched_tunable_scaling`): how the latency
/// defaults grow with the number of CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scaling {
    /// SCHED_TUNABLESCALING_NONE: × 1.
    None,
    /// SCHED_TUNABLESCALING_LOG: × (1 + ilog2(min(ncpus, 8))), the default.
    #[default]
    Log,
    /// SCHED_TUNABLESCALING_LINEAR: × min(ncpus, 8).
    Linear,
}

impl Scaling {
    /// The sysctl's numeric value.
    pub fn value(self) -> u32 {
        self as u32
    }
}

impl ChoiceCell for Scaling {
    fn names(&self) -> Vec<&'static str> {
        vec!["0", "1", "2"]
    }
    fn name(&self) -> &'static str {
        ["0", "1", "2"][*self as usize]
    }
    fn select(&mut self, index: usize) {
        *self = [Scaling::None, Scaling::Log, Scaling::Linear][index];
    }
}

/// A latency sysctl: its normalised value (`normalized_sysctl_*`, scaled by the factor of
/// `get_update_sysctl_factor`) unless a value was written, which is used as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    pub normalized: u64,
    pub explicit: Option<u64>,
}

impl Scaled {
    pub const fn normalized(ns: u64) -> Scaled {
        Scaled {
            normalized: ns,
            explicit: None,
        }
    }

    /// The effective value for a scaling factor (`update_sysctl`).
    pub fn effective(self, factor: u64) -> u64 {
        self.explicit.unwrap_or(factor * self.normalized)
    }
}

impl IntCell for Scaled {
    fn get(&self) -> Option<i64> {
        Some(self.explicit.unwrap_or(self.normalized) as i64)
    }
    fn set(&mut self, v: i64) {
        self.explicit = Some(v as u64);
    }
}

/// The tunables CFS and EEVDF share: scaling, wake-up preemption, the wake-affine
/// features, and the load balancer's (per-domain constants come from `sd_init`; a value
/// set here overrides them on every level).
#[derive(Clone, Debug)]
pub struct FairParams {
    pub scaling: Scaling,
    /// Feature WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// `sysctl_sched_migration_cost` (ns): a task that ran within it is cache-hot.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// Features WA_IDLE, WA_WEIGHT, WA_BIAS (`wake_affine`).
    pub wa_idle: bool,
    pub wa_weight: bool,
    pub wa_bias: bool,
    /// Overrides of `sd_init`'s per-domain constants (`None` = the domain's own).
    pub balance_interval_ms: Option<u64>,
    pub busy_factor: Option<u64>,
    pub imbalance_pct: Option<u64>,
    pub cache_nice_tries: Option<u32>,
    /// `sysctl_sched_cfs_bandwidth_slice` (µs): the runtime a run queue takes from its
    /// group's pool at a time.
    pub cfs_bandwidth_slice_us: u64,
}

impl Default for FairParams {
    fn default() -> Self {
        FairParams {
            scaling: Scaling::Log,
            wakeup_preemption: true,
            migration_cost: 500_000,
            nr_migrate: 32,
            wa_idle: true,
            wa_weight: true,
            wa_bias: true,
            balance_interval_ms: None,
            busy_factor: None,
            imbalance_pct: None,
            cache_nice_tries: None,
            cfs_bandwidth_slice_us: bandwidth::DEFAULT_SLICE_US,
        }
    }
}

impl FairParams {
    /// The shared rows of the fair classes' tunables tables.
    pub fn tunables() -> Vec<Tunable<FairParams>> {
        vec![
            Tunable::choice(
                "sched_tunable_scaling",
                "how the latency defaults scale with CPUs: 0 none, 1 log (1+ilog2), 2 linear",
                |p| &mut p.scaling,
            ),
            Tunable::flag(
                "wakeup_preemption",
                "feature WAKEUP_PREEMPTION: SCHED_NORMAL wake-ups may preempt",
                |p| &mut p.wakeup_preemption,
            ),
            Tunable::ns(
                "sched_migration_cost_ns",
                "a task that ran within this time is cache-hot and not migrated by the load \
                 balancer (task_hot; 0: never hot)",
                0,
                |p| &mut p.migration_cost,
            ),
            Tunable::int(
                "sched_nr_migrate",
                "most tasks looked at by one balance pass (sysctl_sched_nr_migrate)",
                1,
                MAX,
                |p| &mut p.nr_migrate,
            ),
            Tunable::flag(
                "wa_idle",
                "feature WA_IDLE: wake_affine prefers an idle waker or previous CPU",
                |p| &mut p.wa_idle,
            ),
            Tunable::flag(
                "wa_weight",
                "feature WA_WEIGHT: wake_affine compares the waker's and the previous CPU's \
                 loads",
                |p| &mut p.wa_weight,
            ),
            Tunable::flag(
                "wa_bias",
                "feature WA_BIAS: that comparison favours the previous CPU by half of \
                 imbalance_pct",
                |p| &mut p.wa_bias,
            ),
            Tunable::ms(
                "balance_interval_ms",
                "every domain's min_interval in ms, the balance interval of an idle CPU (a \
                 busy CPU uses it × busy_factor; it doubles up to 2 × min_interval while \
                 balanced)",
                1,
                MAX,
                |p: &mut FairParams| &mut p.balance_interval_ms,
            )
            .derived("sd_weight of each domain"),
            Tunable::int(
                "busy_factor",
                "balance-interval multiplier for a busy CPU, every domain",
                1,
                MAX,
                |p: &mut FairParams| &mut p.busy_factor,
            )
            .derived("sd_init: 32 (v5.4), 16 (6.1)"),
            Tunable::int(
                "imbalance_pct",
                "every domain's imbalance_pct: an overloaded CPU pulls only if the busiest \
                 group's load × 100 > its own × imbalance_pct",
                100,
                MAX,
                |p: &mut FairParams| &mut p.imbalance_pct,
            )
            .derived("sd_init: SMT 110, LLC 117, above 125 (v5.4) or 117 (6.1)"),
            Tunable::int(
                "cache_nice_tries",
                "every domain's failed balance passes after which cache-hot tasks may be \
                 migrated",
                0,
                MAX,
                |p: &mut FairParams| &mut p.cache_nice_tries,
            )
            .derived("sd_init: SMT 0, NUMA 2, others 1"),
            Tunable::int(
                "sched_cfs_bandwidth_slice_us",
                "CFS bandwidth: the runtime (µs) a CPU's run queue of a group with a quota \
                 takes from the group's pool at a time (sysctl_sched_cfs_bandwidth_slice)",
                1,
                i32::MAX as i64,
                |p| &mut p.cfs_bandwidth_slice_us,
            ),
        ]
    }

    /// A domain's constants for `era`, with the overrides applied.
    pub fn domain(&self, era: SdEra, sd: &SchedDomain) -> SdInit {
        self.apply(sd.init_for(era))
    }

    /// `sd_init`'s constants `c` with the overrides applied.
    fn apply(&self, mut c: SdInit) -> SdInit {
        if let Some(ms) = self.balance_interval_ms {
            c.min_interval = ms;
            c.max_interval = 2 * ms;
        }
        if let Some(f) = self.busy_factor {
            c.busy_factor = f;
        }
        if let Some(p) = self.imbalance_pct {
            c.imbalance_pct = p;
        }
        if let Some(n) = self.cache_nice_tries {
            c.cache_nice_tries = n;
        }
        c
    }
}

/// Balance state of one domain of one CPU (the mutable part of `struct sched_domain`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DomainState {
    /// `sd->last_balance` (jiffies).
    pub last_balance: i64,
    /// `sd->balance_interval` (ms).
    pub balance_interval: u64,
    pub nr_balance_failed: u32,
    /// The CPUs of the domain's groups, counted (the work of one scan of them).
    pub groups_weight: u32,
}

/// Per-CPU balance state.
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuState {
    /// `rq->next_balance` (jiffies).
    pub next_balance: i64,
    pub domains: Vec<DomainState>,
    /// Each domain's constants ([`FairParams::domain`]), computed once; and `sd_init`'s
    /// own, from which they are derived again when the tunables change.
    pub inits: Vec<SdInit>,
    sd_inits: Vec<SdInit>,
}

/// Per-task placement history (`p->recent_used_cpu`, `wakee_flips`, `last_wakee`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskState {
    pub recent_used_cpu: Option<CpuId>,
    pub wakee_flips: u32,
    /// `wakee_flip_decay_ts` (jiffies).
    pub wakee_flip_decay: i64,
    pub last_wakee: Option<TaskId>,
}

/// The SMP side of a fair class: placement and balancing state, the shared tunables and
/// the `sd_init` era. A class owns one and lends itself (as [`FairRq`]) to its methods.
#[derive(Clone, Debug)]
pub struct FairSmp {
    pub era: SdEra,
    pub params: FairParams,
    pub(crate) cpus: Vec<CpuState>,
    pub(crate) tasks: Vec<TaskState>,
    /// `nohz.next_balance` (jiffies).
    pub(crate) nohz_next_balance: i64,
    pub(crate) scratch: Vec<TaskId>,
}

impl Default for FairSmp {
    fn default() -> Self {
        FairSmp::new(SdEra::V6_1)
    }
}

/// Where a fair class keeps its [`FairSmp`]: lent out (one pointer moved, nothing
/// copied or rebuilt) for the duration of a placement or balance call, during which the
/// class itself is borrowed as the [`FairRq`] of that call.
#[derive(Debug)]
pub struct SmpSlot(Option<Box<FairSmp>>);

impl SmpSlot {
    pub fn new(smp: FairSmp) -> SmpSlot {
        SmpSlot(Some(Box::new(smp)))
    }

    /// The state (not lent out).
    #[inline]
    pub fn get(&self) -> &FairSmp {
        self.0.as_deref().expect("FairSmp is lent out")
    }

    #[inline]
    pub fn get_mut(&mut self) -> &mut FairSmp {
        self.0.as_deref_mut().expect("FairSmp is lent out")
    }

    /// Lend the state out; [`SmpSlot::put`] gives it back.
    #[inline]
    pub fn take(&mut self) -> Box<FairSmp> {
        self.0.take().expect("FairSmp is lent out")
    }

    #[inline]
    pub fn put(&mut self, smp: Box<FairSmp>) {
        self.0 = Some(smp);
    }
}

impl FairSmp {
    pub fn new(era: SdEra) -> FairSmp {
        FairSmp {
            era,
            params: FairParams::default(),
            cpus: Vec::new(),
            tasks: Vec::new(),
            nohz_next_balance: 0,
            scratch: Vec::new(),
        }
    }

    /// Size the per-CPU state for `ctx`'s machine (allocates only on the first call).
    #[inline]
    pub(crate) fn ensure_cpus(&mut self, ctx: &Ctx) {
        if self.cpus.len() != ctx.nr_cpus() {
            self.cpus.resize_with(ctx.nr_cpus(), CpuState::default);
        }
    }

    /// Size `cpu`'s per-domain state for its domains (allocates only the first time, or
    /// after the topology changed).
    #[inline]
    pub(crate) fn ensure_domains(&mut self, ctx: &Ctx, cpu: CpuId) {
        if self.cpus[cpu.idx()].domains.len() != ctx.sched_domains(cpu).len() {
            self.build_domains(ctx, cpu);
        }
    }

    #[cold]
    fn build_domains(&mut self, ctx: &Ctx, cpu: CpuId) {
        let doms = ctx.sched_domains(cpu);
        let sd_inits: Vec<SdInit> = doms.iter().map(|sd| sd.init_for(self.era)).collect();
        let inits: Vec<SdInit> = sd_inits.iter().map(|&c| self.params.apply(c)).collect();
        let st = &mut self.cpus[cpu.idx()];
        st.domains = doms
            .iter()
            .zip(&inits)
            .map(|(sd, c)| DomainState {
                last_balance: 0,
                balance_interval: c.min_interval,
                nr_balance_failed: 0,
                groups_weight: sd.groups.iter().map(|g| g.count()).sum(),
            })
            .collect();
        st.inits = inits;
        st.sd_inits = sd_inits;
    }

    /// Set the tunables (and the domain constants derived from them).
    pub fn set_params(&mut self, params: FairParams) {
        self.params = params;
        for st in &mut self.cpus {
            for (c, &sd) in st.inits.iter_mut().zip(&st.sd_inits) {
                *c = self.params.apply(sd);
            }
        }
    }

    /// Room for task `t`'s placement history.
    pub(crate) fn ensure_task(&mut self, ctx: &Ctx, t: TaskId) {
        if self.tasks.len() <= t.idx() {
            self.tasks
                .resize((t.idx() + 1).max(ctx.nr_tasks()), TaskState::default());
        }
    }
}

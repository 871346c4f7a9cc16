//! Linux's deadline class: SCHED_DEADLINE (`dl_sched_class`), a Constant Bandwidth Server
//! per task scheduled by global EDF through per-CPU run queues with push and pull.
//!
//! Primary source: torvalds/linux `kernel/sched/deadline.c`, Linux 6.1 (Debian
//! linux-source-6.1), with the Linux 6.12 differences noted where they are modelled:
//! - CBS: `replenish_dl_new_period` / `setup_new_dl_entity` (l. 775-835),
//!   `replenish_dl_entity` (l. 837-907: postpone the deadline by periods until the runtime
//!   is positive; a yielded task forfeits what it had left), `dl_entity_overflow` (l. 909-
//!   933, both sides shifted by `DL_SCALE`), `update_dl_revised_wakeup` (l. 956-966: a
//!   constrained task keeps its deadline with `runtime = dl_density × laxity`),
//!   `update_dl_entity` (l. 1018-1035), `dl_next_period` / `start_dl_timer` (l. 1037-1108:
//!   the replenishment timer at the next period's start, not armed when that is already
//!   more than a microsecond past), `dl_task_timer` (l. 1110-1215), `dl_check_constrained_dl`
//!   (l. 1243-1257), `update_curr_dl` (l. 1309-1407: runtime consumed, GRUB's rate for a
//!   reclaiming task, throttling), `yield_task_dl` (l. 1801-1821);
//! - GRUB's active utilisation: `task_non_contending` (l. 392-446: 0-lag time
//!   `deadline - runtime × dl_period / dl_runtime`, the inactive timer),
//!   `task_contending` (l. 448-483), `inactive_task_timer` (l. 1410-1450),
//!   `migrate_task_rq_dl` (l. 1882-1913), the `add/sub_running_bw` / `add/sub_rq_bw`
//!   calls of `enqueue_task_dl` / `dequeue_task_dl` (l. 1673-1799); `grub_reclaim` is in
//!   `dl_bandwidth.rs` (6.1's and 6.12's formulas);
//! - EDF per CPU: the deadline-ordered tree (`__dl_less`: equal deadlines behind each
//!   other; the running task stays in it), `pick_next_task_dl`, `check_preempt_curr_dl` /
//!   `check_preempt_equal_dl` (l. 1915-1976), `dl_entity_preempt` (strictly earlier);
//! - global EDF: `select_task_rq_dl` (l. 1833-1880), `find_later_rq` (l. 2138-2223) over
//!   `cpudl_find` (cpudeadline.c l. 116-161: the free CPUs, else the CPU whose earliest
//!   deadline is the latest), `find_lock_later_rq`, `push_dl_task` / `push_dl_tasks`
//!   (l. 2329-2412), `pull_dl_task` (l. 2414-2508), `task_woken_dl` (l. 2510-2520),
//!   `balance_dl` (l. 1936-1951), the pushable tree, the overload mask
//!   (`update_dl_migration`: two queued deadline tasks, one of them migratory);
//! - `switched_from_dl` / `switched_to_dl` / `prio_changed_dl` (l. 2621-2741);
//! - admission: `sched_dl_overflow` (l. 2870-2934) and `__dl_overflow`; the affinity rule
//!   of `__sched_setscheduler` (core.c l. 7655-7669: while the deadline bandwidth is
//!   enforced, a task whose affinity is smaller than its root domain, or any task when
//!   the limit is 0, cannot become SCHED_DEADLINE, EPERM) and of `dl_task_check_affinity`
//!   (core.c l. 8200-8212: `sched_setaffinity` of a deadline task to a smaller mask, EBUSY);
//! - HRTICK_DL (`start_hrtick_dl`, `hrtick_start`'s 10 µs floor in core.c), off by default
//!   (`SCHED_FEAT(HRTICK_DL, false)`, features.h l. 41).
//! - the deadline class's share of the RT bandwidth: `update_curr_dl` (6.1 l. 1384-1407)
//!   adds a deadline task's time to its CPU's root rt_rq's `rt_time` while RT bandwidth
//!   is enabled and `sched_rt_bandwidth_account` holds; Linux 6.12.117
//!   (`update_curr_dl_se`, l. 1554-1586) still does under CONFIG_RT_GROUP_SCHED, which
//!   linux-eevdf's RT class models, and never for the fair server. The class stack
//!   passes the time to the RT class (`SchedClass::charge_rt_time`);
//! - Linux 6.12's fair server: one per CPU (`dl_server.rs`), picked like a deadline
//!   entity, which runs the fair class's pick (`SchedClass::pick_or_serve` /
//!   `server_pick` through the class stack).
//!
//! Simplifications:
//! - admission is checked for the spec as a whole before the run (`admit`): every task
//!   counts with the largest bandwidth any of its requests asks, all at once, and none is
//!   freed. rt-app's threads set their attributes when they start, at the beginning of the
//!   run, and it exits when `sched_setattr` fails, so an over-subscribed set is refused
//!   outright; a spec that would only overflow late (a phase switching to SCHED_DEADLINE
//!   after another deadline task exited) is refused too. Instances created by `fork`
//!   events are not counted (how many there will be is known only as the run goes; in the
//!   kernel a SCHED_DEADLINE thread cannot fork at all, `sched_fork` fails with EAGAIN).
//!   The root domain is the whole machine (no exclusive cpusets);
//! - runtime overruns are seen at the next tick (or, with `hrtick_dl=1`, at the hrtick);
//!   the CPU capacity and frequency are the maximum, so runtime is consumed 1:1 without
//!   GRUB;
//! - no priority inheritance (deadline boosting), no `SCHED_FLAG_DL_OVERRUN` signal, no
//!   RT_PUSH_IPI-style pull;
//! - `cpumask_any_and_distribute` rotates per calling CPU as the kernel does; `cpudl`'s
//!   max-heap ties go to the lowest-numbered CPU;
//! - 6.12's fair server (`dl_server.rs`, which cites its sources and simplifications)
//!   counts in the admitted bandwidth and in GRUB's `extra_bw` / `this_bw` with its
//!   runtime / period (`fair_server_runtime_ns` / `fair_server_period_ns`), as an inactive
//!   reservation (its `running_bw` is not counted while it runs);
//! - `SCHED_FLAG_RECLAIM` is a tunable (`dl_reclaim`) for every deadline task: rt-app's
//!   grammar has no key for sched_flags.

use super::deadline_queue::{DeadlineQueues, Key};
use super::dl_bandwidth::{
    grub_reclaim, to_ratio, DlKernel, GlobalBw, GrubRq, BW_SHIFT, DL_SCALE, FAIR_SERVER_PERIOD_NS,
    FAIR_SERVER_RUNTIME_NS,
};
use super::dl_server::{After, FairServer};
use super::stack::{ClassPick, SchedClass};
use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{
    AdmissionRequest, ClassSet, DequeueKind, EnqueueKind, FiredTimer, PolicyInfo, Scheduler,
    TimerId, WakeKind,
};
use crate::topology::SdFlags;
use crate::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId, Time};
use schedlab_spec::model::{Cgroup, CpuCgroup, ROOT_GROUP};

/// The deadline class's tunables.
#[derive(Clone, Debug)]
pub struct DlTunables {
    /// SCHED_FLAG_RECLAIM on every deadline task.
    pub reclaim: bool,
    /// `sched_feat(HRTICK_DL)`.
    pub hrtick_dl: bool,
    /// Every CPU's fair server (Linux 6.12): runtime and period in ns
    /// (debugfs `fair_server/cpuN/{runtime,period}`); runtime 0 disables it.
    pub fair_server_runtime_ns: i64,
    pub fair_server_period_ns: i64,
}

impl Default for DlTunables {
    fn default() -> Self {
        DlTunables {
            reclaim: false,
            hrtick_dl: false,
            fair_server_runtime_ns: FAIR_SERVER_RUNTIME_NS as i64,
            fair_server_period_ns: FAIR_SERVER_PERIOD_NS as i64,
        }
    }
}

/// `fair_server_period_min` / `fair_server_period_max` of the debugfs writer (debug.c).
const FAIR_SERVER_PERIOD_MIN_NS: i64 = 100_000;
const FAIR_SERVER_PERIOD_MAX_NS: i64 = (1 << 22) * 1000;

/// The tunables of the class of `kernel`: the fair server's exist from 6.12 on.
fn tunables(kernel: DlKernel) -> Vec<Tunable<DlTunables>> {
    let mut all = common_tunables();
    if kernel == DlKernel::V6_12 {
        all.push(Tunable::int(
            "fair_server_runtime_ns",
            "runtime of every CPU's fair server per period in ns (debugfs \
             fair_server/cpuN/runtime; 0 disables it): fair tasks starved by RT or deadline \
             tasks get this much per period",
            0,
            FAIR_SERVER_PERIOD_MAX_NS,
            |p| &mut p.fair_server_runtime_ns,
        ));
        all.push(Tunable::int(
            "fair_server_period_ns",
            "period of every CPU's fair server in ns (debugfs fair_server/cpuN/period)",
            FAIR_SERVER_PERIOD_MIN_NS,
            FAIR_SERVER_PERIOD_MAX_NS,
            |p| &mut p.fair_server_period_ns,
        ));
    }
    all
}

fn common_tunables() -> Vec<Tunable<DlTunables>> {
    vec![
        Tunable::flag(
            "dl_reclaim",
            "SCHED_FLAG_RECLAIM for every SCHED_DEADLINE task: GRUB reclaims the bandwidth \
             left unused (rt-app has no key for sched_flags)",
            |p| &mut p.reclaim,
        ),
        Tunable::flag(
            "hrtick_dl",
            "sched_feat HRTICK_DL: a high-resolution tick at each deadline task's runtime \
             exhaustion (off: overruns are seen at the next tick)",
            |p| &mut p.hrtick_dl,
        ),
    ]
}

/// `hrtick_start`: no hrtick shorter than this (core.c, "Don't schedule slices shorter
/// than 10000ns").
const HRTICK_MIN_NS: i64 = 10_000;

/// Timer kinds (the low two bits of a token; the rest is a task or CPU index).
const T_REPLENISH: u64 = 0;
const T_INACTIVE: u64 = 1;
const T_HRTICK: u64 = 2;
const T_SERVER: u64 = 3;

/// Per-task state (`struct sched_dl_entity`).
#[derive(Clone, Copy, Debug, Default)]
struct DlSe {
    /// The task's parameters (`dl_runtime`, `dl_deadline`, `dl_period`), and
    /// `dl_bw = runtime/period`, `dl_density = runtime/deadline` in 2^-20.
    dl_runtime: u64,
    dl_deadline: u64,
    dl_period: u64,
    dl_bw: u64,
    dl_density: u64,
    /// The current instance: runtime left and absolute deadline.
    runtime: i64,
    deadline: u64,
    /// Has parameters (`dl_runtime != 0`; cleared by `__dl_clear_params`).
    has_params: bool,
    /// Its bandwidth is counted in the root domain's `total_bw`.
    admitted: bool,
    dl_throttled: bool,
    dl_yielded: bool,
    dl_non_contending: bool,
    /// Queued in the core's sense (between enqueue and dequeue; `task_on_rq_queued`).
    queued: bool,
    /// The CPU whose `this_bw` holds the task, and whose `running_bw` does.
    rq_bw_cpu: Option<CpuId>,
    running_bw_cpu: Option<CpuId>,
    dl_timer: Option<TimerId>,
    inactive_timer: Option<TimerId>,
    /// Was SCHED_DEADLINE at some point (its throttles are reported).
    ever_dl: bool,
    /// Runtime exhaustions (throttles with runtime ≤ 0; a yield is not counted).
    throttles: u64,
}

/// Per-CPU state (`struct dl_rq`).
#[derive(Clone, Copy, Debug, Default)]
struct DlRq {
    /// The deadline task running here (set by pick_next, cleared by put_prev).
    curr: Option<TaskId>,
    /// Entities in the tree (`dl_nr_running`) and the migratory ones among them.
    nr_running: u32,
    nr_migratory: u32,
    running_bw: u64,
    this_bw: u64,
    /// A pull is due before the next pick (`balance_dl` / `deadline_queue_pull_task`).
    pull_due: bool,
    /// A push is due in the balance callback (`deadline_queue_push_tasks`).
    push_due: bool,
    hrtick: Option<TimerId>,
    /// `distribute_cpu_mask_prev` of this CPU (`cpumask_any_and_distribute`).
    distribute_prev: u32,
}

impl DlRq {
    /// `update_dl_migration`: in the overload mask.
    fn overloaded(&self) -> bool {
        self.nr_migratory > 0 && self.nr_running > 1
    }
}

/// The deadline class.
pub struct LinuxDl {
    kernel: DlKernel,
    params: DlTunables,
    global: GlobalBw,
    se: Vec<DlSe>,
    rqs: Vec<DlRq>,
    /// Per CPU, the entities in its tree (`dl_rq->root`), running one included.
    tree: DeadlineQueues,
    /// Per CPU, the queued tasks that may be pushed (`pushable_dl_tasks_root`).
    pushable: DeadlineQueues,
    /// Arrival numbers: equal deadlines keep their order of insertion.
    next_seq: u64,
    /// The root domain's admitted bandwidth (`dl_b->total_bw`).
    total_bw: u64,
    /// Σ `tsk_bw / cpus` over the admitted tasks: what `__dl_add` took from every CPU's
    /// `extra_bw`.
    extra_taken: u64,
    /// Each CPU's fair server (6.12; empty for 6.1).
    servers: Vec<FairServer>,
}

impl LinuxDl {
    /// A deadline class of `kernel` for a machine with `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize, kernel: DlKernel) -> Self {
        let params = DlTunables::default();
        let n = nr_cpus.max(1);
        let mut s = LinuxDl {
            kernel,
            global: GlobalBw::of_root(&CpuCgroup::default()),
            params,
            se: Vec::new(),
            rqs: vec![DlRq::default(); n],
            tree: DeadlineQueues::new(n),
            pushable: DeadlineQueues::new(n),
            next_seq: 0,
            total_bw: 0,
            extra_taken: 0,
            servers: Vec::new(),
        };
        s.reset_bandwidth();
        s
    }

    /// The fair servers' reservations (6.12) in the root domain and each CPU's `this_bw`.
    fn reset_bandwidth(&mut self) {
        self.servers = if self.kernel.fair_server_bw() == 0 {
            Vec::new()
        } else {
            let (runtime, period) = (
                self.params.fair_server_runtime_ns as u64,
                self.params.fair_server_period_ns as u64,
            );
            vec![FairServer::new(runtime, period); self.rqs.len()]
        };
        let fs = self.fair_server_bw();
        self.total_bw = fs * self.rqs.len() as u64;
        for rq in &mut self.rqs {
            rq.this_bw = fs;
        }
    }

    /// Each CPU's fair server's bandwidth (`dl_server_apply_params`; 0 before 6.12).
    fn fair_server_bw(&self) -> u64 {
        if self.kernel.fair_server_bw() == 0 {
            return 0;
        }
        to_ratio(
            self.params.fair_server_period_ns as u64,
            self.params.fair_server_runtime_ns as u64,
        )
    }

    /// `extra_bw` of every CPU: `max_bw` less each reservation's share per CPU
    /// (`__dl_add`: `tsk_bw / cpus`, an integer division per reservation; each CPU's
    /// fair server took its share from every CPU).
    fn extra_bw(&self) -> u64 {
        let cpus = self.rqs.len() as u64;
        let servers = self.fair_server_bw() / cpus * cpus;
        self.global
            .max_bw
            .saturating_sub(servers + self.extra_taken)
    }

    /// `__dl_add` of `t`'s bandwidth to the root domain.
    fn dl_add(&mut self, t: TaskId) {
        let cpus = self.rqs.len() as u64;
        let se = &mut self.se[t.idx()];
        if !se.admitted {
            se.admitted = true;
            self.total_bw += se.dl_bw;
            self.extra_taken += se.dl_bw / cpus;
        }
    }

    /// `__dl_sub` of `t`'s bandwidth from the root domain.
    fn dl_sub(&mut self, t: TaskId) {
        let cpus = self.rqs.len() as u64;
        let se = &mut self.se[t.idx()];
        if se.admitted {
            se.admitted = false;
            self.total_bw -= se.dl_bw;
            self.extra_taken -= se.dl_bw / cpus;
        }
    }

    #[inline]
    fn ensure(&mut self, t: TaskId) {
        if self.se.len() <= t.idx() {
            let n = (t.idx() + 1).max(self.se.len() * 2);
            self.se.resize(n, DlSe::default());
            self.tree.ensure_task(TaskId(n as u32 - 1));
            self.pushable.ensure_task(TaskId(n as u32 - 1));
        }
    }

    fn is_dl(ctx: &Ctx, t: TaskId) -> bool {
        ctx.task(t).attrs.policy == Policy::Deadline
    }

    fn migratory(ctx: &Ctx, t: TaskId) -> bool {
        ctx.task(t).affinity.count() > 1
    }

    // ------------------------------------------------------------ parameters, bandwidth

    /// `__setparam_dl` from the task's attributes; `sched_dl_overflow`'s `__dl_add` /
    /// `__dl_sub` of the change in the root domain (checked before the run by `admit`).
    fn set_params(&mut self, ctx: &mut Ctx, t: TaskId) {
        let Some(p) = ctx.task(t).attrs.dl else {
            return;
        };
        let se = self.se[t.idx()];
        let period = if p.period_ns == 0 {
            p.deadline_ns
        } else {
            p.period_ns
        };
        let bw = super::dl_bandwidth::to_ratio(period, p.runtime_ns);
        if se.has_params
            && se.dl_runtime == p.runtime_ns
            && se.dl_period == period
            && se.dl_deadline == p.deadline_ns
        {
            self.dl_add(t);
            return;
        }
        self.dl_sub(t);
        let se = &mut self.se[t.idx()];
        let old_bw = se.dl_bw;
        se.dl_runtime = p.runtime_ns;
        se.dl_deadline = p.deadline_ns;
        se.dl_period = period;
        se.dl_bw = bw;
        se.dl_density = super::dl_bandwidth::to_ratio(p.deadline_ns, p.runtime_ns);
        se.has_params = true;
        se.ever_dl = true;
        // dl_change_utilization (a task not queued) / the SAVE-RESTORE pair (queued): the
        // CPU's shares follow the new bandwidth.
        if let Some(c) = se.rq_bw_cpu {
            let rq = &mut self.rqs[c.idx()];
            rq.this_bw = rq.this_bw - old_bw + bw;
        }
        if let Some(c) = se.running_bw_cpu {
            if se.dl_non_contending {
                // dl_change_utilization: a non-contending task stops counting at once.
                self.rqs[c.idx()].running_bw -= old_bw;
                se.running_bw_cpu = None;
                se.dl_non_contending = false;
                if let Some(id) = se.inactive_timer.take() {
                    ctx.cancel_timer(id);
                }
            } else {
                let rq = &mut self.rqs[c.idx()];
                rq.running_bw = rq.running_bw - old_bw + bw;
            }
        }
        self.dl_add(t);
    }

    /// `__dl_sub` + `__dl_clear_params`: the task's reservation is given back.
    fn release_bandwidth(&mut self, t: TaskId) {
        self.dl_sub(t);
        let se = &mut self.se[t.idx()];
        se.has_params = false;
        se.dl_throttled = false;
        se.dl_yielded = false;
        se.dl_non_contending = false;
    }

    fn add_rq_bw(&mut self, t: TaskId, cpu: CpuId) {
        self.sub_rq_bw(t);
        let se = &mut self.se[t.idx()];
        se.rq_bw_cpu = Some(cpu);
        self.rqs[cpu.idx()].this_bw += se.dl_bw;
    }

    fn sub_rq_bw(&mut self, t: TaskId) {
        let se = &mut self.se[t.idx()];
        if let Some(c) = se.rq_bw_cpu.take() {
            self.rqs[c.idx()].this_bw -= se.dl_bw;
        }
    }

    fn add_running_bw(&mut self, t: TaskId, cpu: CpuId) {
        self.sub_running_bw(t);
        let se = &mut self.se[t.idx()];
        se.running_bw_cpu = Some(cpu);
        self.rqs[cpu.idx()].running_bw += se.dl_bw;
    }

    fn sub_running_bw(&mut self, t: TaskId) {
        let se = &mut self.se[t.idx()];
        if let Some(c) = se.running_bw_cpu.take() {
            self.rqs[c.idx()].running_bw -= se.dl_bw;
        }
    }

    /// `task_non_contending`: a task leaving the CPU (blocking, exiting, leaving the
    /// class) stays active until its 0-lag time.
    fn task_non_contending(&mut self, ctx: &mut Ctx, t: TaskId, dead: bool) {
        let se = self.se[t.idx()];
        if !se.has_params {
            return;
        }
        let lag = (se.runtime as i128 * se.dl_period as i128) / se.dl_runtime as i128;
        let zerolag = se.deadline as i128 - lag - ctx.now() as i128;
        let dl_task = Self::is_dl(ctx, t) && !dead;
        if zerolag < 0 || se.inactive_timer.is_some() {
            if Self::is_dl(ctx, t) {
                self.sub_running_bw(t);
            }
            if !dl_task {
                if dead {
                    self.sub_rq_bw(t);
                }
                self.release_bandwidth(t);
            }
            return;
        }
        self.se[t.idx()].dl_non_contending = true;
        let at = ctx.now() + zerolag as u64;
        let id = ctx.arm_timer(at, (t.0 as u64) << 2 | T_INACTIVE);
        self.se[t.idx()].inactive_timer = Some(id);
    }

    /// `task_contending` on `cpu`.
    fn task_contending(&mut self, ctx: &mut Ctx, t: TaskId, cpu: CpuId) {
        if !self.se[t.idx()].has_params {
            return;
        }
        if self.se[t.idx()].rq_bw_cpu != Some(cpu) {
            self.add_rq_bw(t, cpu);
        }
        let se = &mut self.se[t.idx()];
        if se.dl_non_contending {
            se.dl_non_contending = false;
            if let Some(id) = se.inactive_timer.take() {
                ctx.cancel_timer(id);
            }
            if se.running_bw_cpu != Some(cpu) {
                self.add_running_bw(t, cpu);
            }
        } else {
            self.add_running_bw(t, cpu);
        }
    }

    /// `migrate_task_rq_dl`: a waking task placed on another CPU leaves its old CPU's
    /// shares (`task_contending` with ENQUEUE_MIGRATED adds them to the new one).
    fn migrate_task_rq(&mut self, ctx: &mut Ctx, t: TaskId) {
        let se = &mut self.se[t.idx()];
        if se.dl_non_contending {
            se.dl_non_contending = false;
            if let Some(id) = se.inactive_timer.take() {
                ctx.cancel_timer(id);
            }
            self.sub_running_bw(t);
        }
        self.sub_rq_bw(t);
    }

    // ------------------------------------------------------------------- CBS rules

    /// `replenish_dl_new_period`.
    fn new_period(&mut self, ctx: &Ctx, t: TaskId) {
        let se = &mut self.se[t.idx()];
        se.deadline = ctx.now() + se.dl_deadline;
        se.runtime = se.dl_runtime as i64;
    }

    /// `setup_new_dl_entity`.
    fn setup_new(&mut self, ctx: &Ctx, t: TaskId) {
        if !self.se[t.idx()].dl_throttled {
            self.new_period(ctx, t);
        }
    }

    /// `replenish_dl_entity`.
    fn replenish(&mut self, ctx: &Ctx, t: TaskId) {
        let now = ctx.now();
        let se = &mut self.se[t.idx()];
        if se.dl_deadline == 0 {
            self.new_period(ctx, t);
        }
        let se = &mut self.se[t.idx()];
        if se.dl_yielded && se.runtime > 0 {
            se.runtime = 0;
        }
        while se.runtime <= 0 {
            se.deadline += se.dl_period;
            se.runtime += se.dl_runtime as i64;
        }
        if dl_time_before(se.deadline, now) {
            self.new_period(ctx, t);
        }
        let se = &mut self.se[t.idx()];
        se.dl_yielded = false;
        se.dl_throttled = false;
    }

    /// `dl_entity_overflow`: `runtime / (deadline - t) > dl_runtime / dl_deadline`, in
    /// the kernel's scaled integer form.
    fn overflow(se: &DlSe, now: Time) -> bool {
        let left = (se.dl_deadline >> DL_SCALE).wrapping_mul((se.runtime >> DL_SCALE) as u64);
        let right =
            (se.deadline.wrapping_sub(now) >> DL_SCALE).wrapping_mul(se.dl_runtime >> DL_SCALE);
        dl_time_before(right, left)
    }

    /// `update_dl_entity`: the CBS wake-up rule (the revised rule for constrained
    /// deadlines).
    fn update_dl_entity(&mut self, ctx: &Ctx, t: TaskId) {
        let now = ctx.now();
        let se = &mut self.se[t.idx()];
        if dl_time_before(se.deadline, now) || Self::overflow(se, now) {
            if se.dl_deadline != se.dl_period && !dl_time_before(se.deadline, now) {
                // update_dl_revised_wakeup
                let laxity = se.deadline - now;
                se.runtime = ((se.dl_density as u128 * laxity as u128) >> BW_SHIFT) as i64;
                return;
            }
            self.new_period(ctx, t);
        }
    }

    /// `dl_next_period`.
    fn next_period(se: &DlSe) -> u64 {
        se.deadline - se.dl_deadline + se.dl_period
    }

    /// `start_dl_timer`: arm the replenishment at the next period's start; false when
    /// that is already past (by a microsecond or more: `ktime_us_delta(act, now) < 0`).
    fn start_dl_timer(&mut self, ctx: &mut Ctx, t: TaskId) -> bool {
        let se = self.se[t.idx()];
        let act = Self::next_period(&se);
        let delta_us = (act as i128 - ctx.now() as i128) / 1000;
        if delta_us < 0 {
            return false;
        }
        if se.dl_timer.is_none() {
            let id = ctx.arm_timer(act, (t.0 as u64) << 2 | T_REPLENISH);
            self.se[t.idx()].dl_timer = Some(id);
        }
        true
    }

    /// `dl_check_constrained_dl`: a constrained task woken after its deadline but before
    /// its next period waits for that period.
    fn check_constrained(&mut self, ctx: &mut Ctx, t: TaskId) {
        let now = ctx.now();
        let se = self.se[t.idx()];
        if dl_time_before(se.deadline, now)
            && dl_time_before(now, Self::next_period(&se))
            && self.start_dl_timer(ctx, t)
        {
            let se = &mut self.se[t.idx()];
            se.dl_throttled = true;
            if se.runtime > 0 {
                se.runtime = 0;
            }
        }
    }

    // ------------------------------------------------------------------- the tree

    fn key(&mut self, t: TaskId) -> Key {
        self.next_seq += 1;
        (self.se[t.idx()].deadline, self.next_seq)
    }

    /// `__enqueue_dl_entity` (+ `enqueue_pushable_dl_task` when it may move).
    fn tree_add(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let key = self.key(t);
        self.tree.push(cpu.idx(), t, key);
        let mut work = self.tree.last_steps();
        let migratory = Self::migratory(ctx, t);
        let rq = &mut self.rqs[cpu.idx()];
        rq.nr_running += 1;
        rq.nr_migratory += u32::from(migratory);
        if rq.curr != Some(t) && !ctx.task(t).running && migratory {
            self.pushable.push(cpu.idx(), t, key);
            work += self.pushable.last_steps();
        }
        ctx.count_work(work as u64);
    }

    /// `__dequeue_dl_entity` + `dequeue_pushable_dl_task`.
    fn tree_remove(&mut self, ctx: &mut Ctx, t: TaskId) {
        let Some(q) = self.tree.queue_of(t) else {
            return;
        };
        self.tree.remove(t);
        let mut work = self.tree.last_steps();
        if self.pushable.remove(t) {
            work += self.pushable.last_steps();
        }
        ctx.count_work(work as u64);
        let migratory = Self::migratory(ctx, t);
        let rq = &mut self.rqs[q];
        rq.nr_running -= 1;
        rq.nr_migratory -= u32::from(migratory);
    }

    fn on_dl_rq(&self, t: TaskId) -> bool {
        self.tree.queue_of(t).is_some()
    }

    /// `earliest_dl.curr`: the earliest deadline queued on `cpu`.
    fn earliest(&self, cpu: CpuId) -> Option<u64> {
        self.tree.first(cpu.idx()).map(|((d, _), _)| d)
    }

    /// `dl_task_is_earliest_deadline(p, rq)`.
    fn is_earliest_deadline(&self, t: TaskId, cpu: CpuId) -> bool {
        self.earliest(cpu)
            .is_none_or(|e| dl_time_before(self.se[t.idx()].deadline, e))
    }

    /// `dl_entity_preempt(a, b)`: strictly earlier deadline.
    fn preempts(&self, a: TaskId, b: TaskId) -> bool {
        dl_time_before(self.se[a.idx()].deadline, self.se[b.idx()].deadline)
    }

    /// The deadline task `cpu` runs (`dl_task(rq->curr)`).
    fn dl_curr(ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        ctx.curr(cpu).filter(|&c| Self::is_dl(ctx, c))
    }

    // ------------------------------------------------------------------- throttling

    /// The throttling part of `update_curr_dl`: runtime exhausted (or yielded) → out of
    /// the tree until the replenishment timer; reschedule unless it is still leftmost.
    fn throttle_if_exhausted(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let se = self.se[t.idx()];
        if !(se.runtime <= 0 || se.dl_yielded) {
            return;
        }
        let se = &mut self.se[t.idx()];
        se.dl_throttled = true;
        se.throttles += u64::from(se.runtime <= 0);
        self.tree_remove(ctx, t);
        if !self.start_dl_timer(ctx, t) {
            self.replenish(ctx, t);
            self.tree_add(ctx, cpu, t);
        }
        if self.tree.first(cpu.idx()).map(|f| f.1) != Some(t) {
            ctx.resched(cpu);
        }
    }

    /// `enqueue_task_dl(.., ENQUEUE_REPLENISH)` from the replenishment timer.
    fn replenish_and_enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.replenish(ctx, t);
        self.tree_add(ctx, cpu, t);
    }

    // ------------------------------------------------------------------- global EDF

    /// `cpudl_find`: the CPUs `t` could run on at once (the free ones it may use), else
    /// the CPU whose earliest deadline is the latest if `t`'s is earlier.
    fn cpudl_find(&self, ctx: &mut Ctx, t: TaskId) -> CpuMask {
        let aff = ctx.task(t).affinity;
        let mut free = CpuMask::empty();
        let mut latest: Option<(u64, CpuId)> = None;
        for c in (0..self.rqs.len() as u32).map(CpuId) {
            match self.earliest(c) {
                None => {
                    if aff.contains(c) {
                        free.set(c);
                    }
                }
                Some(d) => {
                    if latest.is_none_or(|(l, _)| dl_time_before(l, d)) {
                        latest = Some((d, c));
                    }
                }
            }
        }
        ctx.count_work(self.rqs.len() as u64);
        if !free.is_empty() {
            return free;
        }
        let mut mask = CpuMask::empty();
        if let Some((d, c)) = latest {
            if aff.contains(c) && dl_time_before(self.se[t.idx()].deadline, d) {
                mask.set(c);
            }
        }
        mask
    }

    /// `cpumask_any_and_distribute(mask, span)` as called on `this`: the next CPU of both
    /// after the one it returned last, wrapping around.
    fn any_distribute(&mut self, this: usize, mask: &CpuMask, span: &CpuMask) -> Option<CpuId> {
        let both = mask.and(span);
        let prev = self.rqs[this].distribute_prev;
        let next = both.iter().find(|c| c.0 > prev).or_else(|| both.first())?;
        self.rqs[this].distribute_prev = next.0;
        Some(next)
    }

    /// `find_later_rq`: where `t` could preempt later work (or run on a free CPU).
    fn find_later_rq(&mut self, ctx: &mut Ctx, t: TaskId) -> Option<CpuId> {
        if !Self::migratory(ctx, t) {
            return None;
        }
        let later = self.cpudl_find(ctx, t);
        if later.is_empty() {
            return None;
        }
        let cpu = ctx.task(t).cpu;
        if later.contains(cpu) {
            return Some(cpu);
        }
        let this = ctx.charge_cpu;
        let this_in = later.contains(CpuId(this as u32));
        for sd in ctx.sched_domains(cpu) {
            if !sd.flags().has(SdFlags::WAKE_AFFINE) {
                continue;
            }
            if this_in && sd.span.contains(CpuId(this as u32)) {
                return Some(CpuId(this as u32));
            }
            if let Some(best) = self.any_distribute(this, &later, &sd.span) {
                return Some(best);
            }
        }
        if this_in {
            return Some(CpuId(this as u32));
        }
        let all = CpuMask::first_n(self.rqs.len());
        self.any_distribute(this, &later, &all)
    }

    /// The earliest pushable task of `cpu` allowed on `dst` (`pick_earliest_pushable_dl_task`;
    /// any CPU with `None`: `pick_next_pushable_dl_task`).
    fn earliest_pushable(&self, ctx: &Ctx, cpu: CpuId, dst: Option<CpuId>) -> Option<TaskId> {
        let fits = |t: TaskId| {
            !ctx.task(t).running && dst.is_none_or(|d| ctx.task(t).affinity.contains(d))
        };
        match self.pushable.first(cpu.idx()) {
            Some((_, t)) if fits(t) => Some(t),
            Some(_) => self
                .pushable
                .iter(cpu.idx())
                .filter(|&(_, t)| fits(t))
                .min_by_key(|&(k, _)| k)
                .map(|(_, t)| t),
            None => None,
        }
    }

    /// Move queued, not running `t` from `src` to `dst` (`deactivate_task` +
    /// `set_task_cpu` + `activate_task`: its CPU shares move with it).
    fn migrate(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.tree_remove(ctx, t);
        self.sub_running_bw(t);
        self.sub_rq_bw(t);
        ctx.set_task_cpu(t, dst);
        self.add_rq_bw(t, dst);
        self.add_running_bw(t, dst);
        debug_assert_ne!(src, dst);
        self.tree_add(ctx, dst, t);
    }

    /// `push_dl_task`: move the earliest pushable task of `cpu` to a CPU where it would
    /// run at once. True if one moved.
    fn push_dl_task(&mut self, ctx: &mut Ctx, cpu: CpuId) -> bool {
        if !self.rqs[cpu.idx()].overloaded() {
            return false;
        }
        let Some(next) = self.earliest_pushable(ctx, cpu, None) else {
            return false;
        };
        if let Some(curr) = Self::dl_curr(ctx, cpu) {
            if self.preempts(next, curr) && Self::migratory(ctx, curr) {
                ctx.resched(cpu);
                return false;
            }
        }
        // find_lock_later_rq (with no lock dropped, one try decides).
        let Some(later) = self.find_later_rq(ctx, next) else {
            return false;
        };
        if later == cpu || !self.is_earliest_deadline(next, later) {
            return false;
        }
        self.migrate(ctx, next, cpu, later);
        ctx.resched(later);
        true
    }

    /// `push_dl_tasks`.
    fn push_dl_tasks(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        while self.push_dl_task(ctx, cpu) {}
    }

    /// `pull_dl_task`: take from overloaded CPUs the earliest-deadline tasks that would
    /// run here at once.
    fn pull_dl_task(&mut self, ctx: &mut Ctx, this: CpuId) {
        // `rd->dlo_mask`, in CPU order; a pull only takes tasks from the CPU it visits.
        let mut overloaded = CpuMask::empty();
        for c in (0..self.rqs.len() as u32).map(CpuId) {
            if c != this && self.rqs[c.idx()].overloaded() {
                overloaded.set(c);
            }
        }
        if overloaded.is_empty() {
            return;
        }
        let mut dmin = u64::MAX >> 1;
        let mut resched = false;
        for src in overloaded.iter() {
            let next = self.pushable.first(src.idx()).map(|((d, _), _)| d);
            if let (Some(e), Some(n)) = (self.earliest(this), next) {
                if dl_time_before(e, n) {
                    continue;
                }
            }
            if self.rqs[src.idx()].nr_running <= 1 {
                continue;
            }
            let Some(p) = self.earliest_pushable(ctx, src, Some(this)) else {
                continue;
            };
            let pd = self.se[p.idx()].deadline;
            if !(dl_time_before(pd, dmin) && self.is_earliest_deadline(p, this)) {
                continue;
            }
            let src_curr = Self::dl_curr(ctx, src).map_or(0, |c| self.se[c.idx()].deadline);
            if dl_time_before(pd, src_curr) {
                continue;
            }
            self.migrate(ctx, p, src, this);
            dmin = pd;
            resched = true;
        }
        if resched {
            ctx.resched(this);
        }
    }

    /// `check_preempt_equal_dl`: equal deadlines; reschedule only when the current task
    /// could go elsewhere and the woken one could not.
    fn check_preempt_equal(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, curr: TaskId) {
        if !Self::migratory(ctx, curr) || self.cpudl_find(ctx, curr).is_empty() {
            return;
        }
        if Self::migratory(ctx, t) && !self.cpudl_find(ctx, t).is_empty() {
            return;
        }
        ctx.resched(cpu);
    }

    /// `check_preempt_curr_dl` (both deadline tasks).
    fn check_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, curr: TaskId) {
        if self.preempts(t, curr) {
            ctx.resched(cpu);
            return;
        }
        if self.se[t.idx()].deadline == self.se[curr.idx()].deadline && !ctx.need_resched(cpu) {
            self.check_preempt_equal(ctx, cpu, t, curr);
        }
    }

    // ------------------------------------------------------------------- timers

    fn dl_task_timer(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.se[t.idx()].dl_timer = None;
        if !Self::is_dl(ctx, t) || ctx.task(t).exited || !self.se[t.idx()].dl_throttled {
            return;
        }
        if !self.se[t.idx()].queued {
            self.replenish(ctx, t);
            return;
        }
        let cpu = ctx.task(t).cpu;
        self.replenish_and_enqueue(ctx, cpu, t);
        match Self::dl_curr(ctx, cpu) {
            Some(curr) if curr != t => self.check_preempt(ctx, cpu, t, curr),
            Some(_) => {}
            None => ctx.resched(cpu),
        }
        if self.pushable.first(cpu.idx()).is_some() {
            self.push_dl_task(ctx, cpu);
        }
    }

    fn inactive_task_timer(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.se[t.idx()].inactive_timer = None;
        let dead = ctx.task(t).exited;
        if !Self::is_dl(ctx, t) || dead {
            if dead && self.se[t.idx()].dl_non_contending {
                self.sub_running_bw(t);
                self.sub_rq_bw(t);
            }
            self.release_bandwidth(t);
            return;
        }
        if !self.se[t.idx()].dl_non_contending {
            return;
        }
        self.sub_running_bw(t);
        self.se[t.idx()].dl_non_contending = false;
    }

    /// `start_hrtick_dl` at `set_next_task_dl`, when HRTICK_DL is on.
    fn start_hrtick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if let Some(id) = self.rqs[cpu.idx()].hrtick.take() {
            ctx.cancel_timer(id);
        }
        if !self.params.hrtick_dl {
            return;
        }
        let delay = self.se[t.idx()].runtime.max(HRTICK_MIN_NS) as u64;
        let id = ctx.arm_timer(ctx.now() + delay, (cpu.0 as u64) << 2 | T_HRTICK);
        self.rqs[cpu.idx()].hrtick = Some(id);
    }

    // ------------------------------------------------------------------- fair server

    fn server_token(cpu: CpuId) -> u64 {
        (cpu.0 as u64) << 2 | T_SERVER
    }

    /// Is `cpu`'s fair server runnable and earlier than every deadline task queued there
    /// (ties go to the task)?
    fn server_first(&self, cpu: CpuId) -> bool {
        self.servers.get(cpu.idx()).is_some_and(|s| {
            s.queued
                && self
                    .earliest(cpu)
                    .is_none_or(|e| dl_time_before(s.deadline, e))
        })
    }

    /// The reschedule a server operation asks for.
    fn server_after(&mut self, ctx: &mut Ctx, cpu: CpuId, after: After) {
        let server = self.servers[cpu.idx()];
        let resched = match after {
            After::Nothing => false,
            After::PreemptCheck => Self::dl_curr(ctx, cpu)
                .is_none_or(|c| dl_time_before(server.deadline, self.se[c.idx()].deadline)),
            After::ReschedUnlessLeftmost => !self.server_first(cpu),
        };
        if resched {
            ctx.resched(cpu);
        }
    }

    fn grub_rq(&self, cpu: CpuId) -> GrubRq {
        let rq = &self.rqs[cpu.idx()];
        GrubRq {
            this_bw: rq.this_bw,
            running_bw: rq.running_bw,
            extra_bw: self.extra_bw(),
        }
    }
}

/// `dl_time_before(a, b)`: `(s64)(a - b) < 0`.
#[inline]
fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

impl Scheduler for LinuxDl {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-dl",
            summary: "Linux SCHED_DEADLINE class: CBS per task, EDF per CPU, push/pull, GRUB",
            source: "torvalds/linux kernel/sched/deadline.c (6.1; 6.12 for grub_reclaim and \
                     the fair server), cpudeadline.c, core.c __checkparam_dl / sched_dl_overflow",
            params: tunables::listing(&tunables(self.kernel)),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(
            &tunables(self.kernel),
            &mut self.params,
            "linux-dl",
            name,
            value,
        )?;
        self.reset_bandwidth();
        Ok(())
    }

    /// The parameters were checked by the spec's parser (`__checkparam_dl`).
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match attrs.dl {
            Some(_) => Ok(()),
            None => Err("SCHED_DEADLINE needs dl-runtime, dl-deadline and dl-period".into()),
        }
    }

    /// `__sched_setscheduler`'s affinity rule and `sched_dl_overflow` over the run's
    /// deadline tasks.
    fn admit(
        &self,
        nr_cpus: usize,
        groups: &[Cgroup],
        requests: &[AdmissionRequest],
    ) -> Result<(), String> {
        let global = GlobalBw::of_root(&groups[ROOT_GROUP as usize].cpu);
        // Checked here, once every parameter is set, whatever their order.
        let p = &self.params;
        if p.fair_server_runtime_ns > p.fair_server_period_ns {
            return Err(format!(
                "fair_server_runtime_ns ({}) must not exceed fair_server_period_ns ({}) \
                 (sched_fair_server_write: EINVAL)",
                p.fair_server_runtime_ns, p.fair_server_period_ns
            ));
        }
        let machine = CpuMask::first_n(nr_cpus);
        // dl_bandwidth_enabled(): sched_rt_runtime_us is not -1.
        let enforced = global.bw.is_some();
        let spans = |m: &CpuMask| !enforced || m.and(&machine) == machine;
        let mut total = self.fair_server_bw() * nr_cpus as u64;
        let mut i = 0;
        while i < requests.len() {
            let task = requests[i].task;
            let mut largest: Option<(u64, &AdmissionRequest)> = None;
            let mut prev: Option<SchedAttrs> = None;
            while i < requests.len() && requests[i].task == task {
                let r = &requests[i];
                i += 1;
                let only_cpus = prev == Some(r.attrs);
                prev = Some(r.attrs);
                if r.attrs.policy != Policy::Deadline {
                    continue;
                }
                let Some(p) = r.attrs.dl else { continue };
                if global.bw == Some(0) {
                    return Err(format!(
                        "{}: sched_setattr() refuses SCHED_DEADLINE with EPERM when no \
                         deadline bandwidth is available (sched_rt_runtime_us = 0)",
                        r.path
                    ));
                }
                if !spans(&r.affinity) {
                    let (call, err) = if only_cpus {
                        ("sched_setaffinity", "EBUSY")
                    } else {
                        ("sched_setattr", "EPERM")
                    };
                    return Err(format!(
                        "{}: a SCHED_DEADLINE task must be allowed on every CPU of its root \
                         domain (the machine's {nr_cpus}): {call}() refuses a smaller affinity \
                         with {err}",
                        r.path
                    ));
                }
                let period = if p.period_ns == 0 {
                    p.deadline_ns
                } else {
                    p.period_ns
                };
                let bw = super::dl_bandwidth::to_ratio(period, p.runtime_ns);
                if largest.is_none_or(|(b, _)| bw > b) {
                    largest = Some((bw, r));
                }
            }
            let Some((bw, r)) = largest else { continue };
            for _ in 0..r.instances {
                if global.overflows(nr_cpus, total, 0, bw) {
                    let limit = global.limit().unwrap_or(f64::INFINITY);
                    let reserved = self.fair_server_bw() as f64 * nr_cpus as f64
                        / super::dl_bandwidth::BW_UNIT as f64;
                    let fair = if reserved > 0.0 {
                        format!(" (the CPUs' fair servers hold {reserved:.3} of it)")
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "{}: sched_setattr() fails with EBUSY: admitting this task's \
                         bandwidth {:.3} would raise the deadline bandwidth to {:.3}{fair}, \
                         over the root domain's limit {:.3} (sched_rt_runtime_us / \
                         sched_rt_period_us = {limit:.3} per CPU, {nr_cpus} CPU(s); \
                         sched_dl_overflow, {})",
                        r.path,
                        bw as f64 / super::dl_bandwidth::BW_UNIT as f64,
                        (total + bw) as f64 / super::dl_bandwidth::BW_UNIT as f64,
                        limit * nr_cpus as f64,
                        self.kernel.name()
                    ));
                }
                total += bw;
            }
        }
        Ok(())
    }

    /// `__setparam_dl` for a task created as SCHED_DEADLINE (rt-app's thread sets it
    /// itself as it starts).
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, _parent: Option<TaskId>) {
        if self.rqs.len() < ctx.nr_cpus() {
            self.rqs.resize(ctx.nr_cpus(), DlRq::default());
            self.tree = DeadlineQueues::new(ctx.nr_cpus());
            self.pushable = DeadlineQueues::new(ctx.nr_cpus());
            self.reset_bandwidth();
        }
        // The global limit is the root cgroup's RT bandwidth (`sched_rt_runtime_us` /
        // `sched_rt_period_us`), the one the RT class throttles by.
        self.global = GlobalBw::of_root(&ctx.group(ROOT_GROUP).cpu);
        self.ensure(t);
        self.se[t.idx()] = DlSe::default();
        self.set_params(ctx, t);
    }

    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(t);
        if let Some(id) = self.se[t.idx()].dl_timer.take() {
            ctx.cancel_timer(id);
        }
    }

    /// `select_task_rq_dl`.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        self.ensure(t);
        let aff = ctx.task(t).affinity;
        let cpu = if aff.contains(prev) {
            prev
        } else {
            aff.first().expect("empty affinity")
        };
        if kind != WakeKind::Wakeup {
            return cpu;
        }
        let select = Self::dl_curr(ctx, cpu).is_some_and(|curr| {
            (!Self::migratory(ctx, curr) || !self.preempts(t, curr)) && Self::migratory(ctx, t)
        });
        if select {
            if let Some(target) = self.find_later_rq(ctx, t) {
                if self.is_earliest_deadline(t, target) {
                    return target;
                }
            }
        }
        cpu
    }

    /// `enqueue_task_dl` → `enqueue_dl_entity`.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.ensure(t);
        if kind == EnqueueKind::Restore || kind == EnqueueKind::New {
            self.set_params(ctx, t);
        }
        if kind == EnqueueKind::Wakeup && self.se[t.idx()].rq_bw_cpu.is_some_and(|c| c != cpu) {
            self.migrate_task_rq(ctx, t);
        }
        self.se[t.idx()].queued = true;
        let se = self.se[t.idx()];
        if !se.dl_throttled && se.dl_deadline != se.dl_period {
            self.check_constrained(ctx, t);
        }
        if kind != EnqueueKind::Wakeup {
            // ENQUEUE_RESTORE / a new task: add_rq_bw + add_running_bw.
            self.add_rq_bw(t, cpu);
            self.add_running_bw(t, cpu);
        }
        if self.se[t.idx()].dl_throttled {
            if kind == EnqueueKind::Wakeup {
                self.task_contending(ctx, t, cpu);
            }
            return;
        }
        match kind {
            EnqueueKind::Wakeup => {
                self.task_contending(ctx, t, cpu);
                self.update_dl_entity(ctx, t);
            }
            EnqueueKind::Restore | EnqueueKind::New => {
                if dl_time_before(self.se[t.idx()].deadline, ctx.now())
                    || self.se[t.idx()].deadline == 0
                {
                    self.setup_new(ctx, t);
                }
            }
        }
        self.tree_add(ctx, cpu, t);
    }

    /// `dequeue_task_dl` (`update_curr_dl` came first, from the core).
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.ensure(t);
        let _ = cpu;
        self.tree_remove(ctx, t);
        self.se[t.idx()].queued = false;
        match kind {
            DequeueKind::Save => {
                self.sub_running_bw(t);
                self.sub_rq_bw(t);
            }
            DequeueKind::Sleep => self.task_non_contending(ctx, t, false),
            DequeueKind::Exit => self.task_non_contending(ctx, t, true),
        }
    }

    /// `check_preempt_curr_dl`, then `task_woken_dl`.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = Self::dl_curr(ctx, cpu) else {
            ctx.resched(cpu);
            return;
        };
        self.check_preempt(ctx, cpu, t, curr);
        if !ctx.task(t).running
            && !ctx.need_resched(cpu)
            && Self::migratory(ctx, t)
            && (!Self::migratory(ctx, curr) || !self.preempts(t, curr))
        {
            self.push_dl_tasks(ctx, cpu);
        }
    }

    /// `put_prev_task_dl`: back among the pushable tasks if still queued; a pull is due
    /// if it left the tree (`balance_dl`).
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(t);
        let rq = &mut self.rqs[cpu.idx()];
        if rq.curr == Some(t) {
            rq.curr = None;
        }
        if let Some(id) = rq.hrtick.take() {
            ctx.cancel_timer(id);
        }
        if self.tree.queue_of(t) == Some(cpu.idx()) {
            if Self::migratory(ctx, t) && self.pushable.queue_of(t).is_none() {
                let key = self.key(t);
                self.pushable.push(cpu.idx(), t, key);
                ctx.count_work(self.pushable.last_steps() as u64);
            }
        } else if Self::is_dl(ctx, t) {
            self.rqs[cpu.idx()].pull_due = true;
        }
    }

    /// `pick_next_task_dl` + `set_next_task_dl` (after `balance_dl`'s pull).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if cpu.idx() >= self.rqs.len() {
            return None;
        }
        if std::mem::take(&mut self.rqs[cpu.idx()].pull_due) {
            self.pull_dl_task(ctx, cpu);
        }
        let (_, t) = self.tree.first(cpu.idx())?;
        if self.pushable.remove(t) {
            ctx.count_work(self.pushable.last_steps() as u64);
        }
        self.rqs[cpu.idx()].curr = Some(t);
        self.start_hrtick(ctx, cpu, t);
        if self.pushable.first(cpu.idx()).is_some() {
            self.rqs[cpu.idx()].push_due = true;
            ctx.queue_balance_callback(cpu);
        }
        Some(t)
    }

    /// `update_curr_dl`.
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        self.ensure(t);
        if !Self::is_dl(ctx, t) || !self.on_dl_rq(t) {
            return;
        }
        let scaled = if self.params.reclaim {
            grub_reclaim(
                self.kernel,
                &self.global,
                &self.grub_rq(cpu),
                self.se[t.idx()].dl_bw,
                delta_ns,
            )
        } else {
            delta_ns
        };
        self.se[t.idx()].runtime -= scaled as i64;
        self.throttle_if_exhausted(ctx, cpu, t);
    }

    /// `yield_task_dl`: give up the rest of this instance's runtime until the next period.
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(t);
        if !self.on_dl_rq(t) {
            return;
        }
        self.se[t.idx()].dl_yielded = true;
        self.throttle_if_exhausted(ctx, cpu, t);
    }

    /// `prio_changed_dl` (and the preemption test of `switched_to_dl` for a queued task).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        self.ensure(t);
        let _ = old;
        self.set_params(ctx, t);
        let cpu = ctx.task(t).cpu;
        if !(self.se[t.idx()].queued || ctx.task(t).running) {
            return;
        }
        if !self.rqs[cpu.idx()].overloaded() {
            self.rqs[cpu.idx()].pull_due = true;
            ctx.queue_balance_callback(cpu);
        }
        if ctx.task(t).running {
            if self
                .earliest(cpu)
                .is_some_and(|e| dl_time_before(e, self.se[t.idx()].deadline))
            {
                ctx.resched(cpu);
            }
        } else {
            // switched_to_dl: a task joining the class may overload its CPU; push (after a
            // change of parameters the kernel leaves that to the CPU's next pick).
            if Self::migratory(ctx, t) && self.rqs[cpu.idx()].overloaded() {
                self.rqs[cpu.idx()].push_due = true;
                ctx.queue_balance_callback(cpu);
            }
            match Self::dl_curr(ctx, cpu) {
                Some(curr) => self.check_preempt(ctx, cpu, t, curr),
                None => ctx.resched(cpu),
            }
        }
    }

    /// The replenishment timer, the inactive timer, and the hrtick.
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        let id = (timer.token >> 2) as u32;
        match timer.token & 3 {
            T_REPLENISH => self.dl_task_timer(ctx, TaskId(id)),
            T_INACTIVE => self.inactive_task_timer(ctx, TaskId(id)),
            T_SERVER => {
                let cpu = CpuId(id);
                let after = self.servers[cpu.idx()].timer(ctx, Self::server_token(cpu));
                self.server_after(ctx, cpu, after);
            }
            _ => {
                // hrtick → task_tick_dl → update_curr_dl, which a reschedule runs.
                let cpu = CpuId(id);
                self.rqs[cpu.idx()].hrtick = None;
                if Self::dl_curr(ctx, cpu).is_some() {
                    ctx.resched(cpu);
                }
            }
        }
    }

    /// The pushes queued by `set_next_task_dl` and the pulls of `prio_changed_dl` /
    /// `switched_from_dl`.
    fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, _classes: ClassSet) {
        if cpu.idx() >= self.rqs.len() {
            return;
        }
        if std::mem::take(&mut self.rqs[cpu.idx()].push_due) {
            self.push_dl_tasks(ctx, cpu);
        }
        if std::mem::take(&mut self.rqs[cpu.idx()].pull_due) {
            self.pull_dl_task(ctx, cpu);
        }
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (i, rq) in self.rqs.iter().enumerate() {
            for (_, t) in self.tree.iter(i) {
                if rq.curr != Some(t) {
                    f(CpuId(i as u32), t);
                }
            }
        }
        // Throttled tasks are queued in the core's sense but out of the tree.
        for (i, se) in self.se.iter().enumerate() {
            let t = TaskId(i as u32);
            if se.queued && se.dl_throttled && self.tree.queue_of(t).is_none() {
                if let Some(c) = se.rq_bw_cpu {
                    if self.rqs[c.idx()].curr != Some(t) {
                        f(c, t);
                    }
                }
            }
        }
    }

    fn dl_throttles(&self, t: TaskId) -> Option<u64> {
        self.se
            .get(t.idx())
            .filter(|s| s.ever_dl)
            .map(|s| s.throttles)
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.se
            .get(t.idx())
            .filter(|s| s.has_params)
            .map(|s| ("deadline", s.deadline as i64))
    }
}

impl SchedClass for LinuxDl {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        attrs.policy == Policy::Deadline
    }

    /// `__pick_task_dl`: the fair server when it is the earliest entity.
    fn pick_or_serve(&mut self, ctx: &mut Ctx, cpu: CpuId) -> ClassPick {
        if cpu.idx() < self.rqs.len() && std::mem::take(&mut self.rqs[cpu.idx()].pull_due) {
            self.pull_dl_task(ctx, cpu);
        }
        if self.server_first(cpu) {
            return ClassPick::Server;
        }
        match self.pick_next(ctx, cpu) {
            Some(t) => ClassPick::Task(t),
            None => ClassPick::Nothing,
        }
    }

    /// `dl_server_stop` from `__pick_task_dl`.
    fn server_empty(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        if let Some(s) = self.servers.get_mut(cpu.idx()) {
            s.stop(ctx);
        }
    }

    /// `dl_server_start`.
    fn server_start(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        if cpu.idx() < self.servers.len() {
            let after = self.servers[cpu.idx()].start(ctx, Self::server_token(cpu));
            self.server_after(ctx, cpu, after);
        }
    }

    /// `dl_server_update` (from the fair class's `update_curr`, while the server is
    /// active).
    fn server_update(&mut self, ctx: &mut Ctx, cpu: CpuId, delta_ns: u64) {
        if cpu.idx() < self.servers.len() {
            let after = self.servers[cpu.idx()].update(ctx, delta_ns, Self::server_token(cpu));
            self.server_after(ctx, cpu, after);
        }
    }

    /// `update_curr_dl_se`: "for now we share the rt bandwidth" (6.1 l. 1384-1407; 6.12
    /// l. 1554-1586, under CONFIG_RT_GROUP_SCHED, which the RT class models, and not for
    /// the fair server).
    fn shares_rt_bandwidth(&self) -> bool {
        true
    }

    /// `sched_dl_runnable`: a deadline task in the CPU's tree.
    fn has_queued(&self, cpu: CpuId) -> bool {
        self.rqs.get(cpu.idx()).is_some_and(|rq| rq.nr_running > 0)
    }

    /// `switched_from_dl`.
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(t);
        let cpu = ctx.task(t).cpu;
        if self.rqs[cpu.idx()].curr == Some(t) {
            self.rqs[cpu.idx()].curr = None;
        }
        let queued = ctx.task(t).on_rq;
        if queued && self.se[t.idx()].has_params {
            self.task_non_contending(ctx, t, false);
        }
        if !queued {
            if self.se[t.idx()].dl_non_contending {
                self.sub_running_bw(t);
            }
            self.sub_rq_bw(t);
            if self.se[t.idx()].inactive_timer.is_none() {
                self.release_bandwidth(t);
            }
        }
        self.se[t.idx()].dl_non_contending = false;
        self.se[t.idx()].queued = false;
        if queued && self.rqs[cpu.idx()].nr_running == 0 {
            self.rqs[cpu.idx()].pull_due = true;
            ctx.queue_balance_callback(cpu);
        }
    }

    /// `switched_to_dl` (`__setparam_dl` and the admission's `__dl_add` before it).
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(t);
        if let Some(id) = self.se[t.idx()].inactive_timer.take() {
            ctx.cancel_timer(id);
        }
        self.se[t.idx()].dl_non_contending = false;
        // A replenishment timer that fired while the task was in another class left it
        // throttled with no timer to end it: it starts afresh at its enqueue.
        if self.se[t.idx()].dl_timer.is_none() {
            self.se[t.idx()].dl_throttled = false;
        }
        self.set_params(ctx, t);
        if !ctx.task(t).on_rq {
            let cpu = ctx.task(t).cpu;
            self.add_rq_bw(t, cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::linux_cfs::{linux_cfs, LinuxCfsStack};
    use crate::protocol::testing::strategies::{ops, tasks};
    use crate::protocol::testing::{Driver, Op};
    use crate::types::{fair, rt, DlParams};
    use proptest::prelude::*;

    /// Deadline (runtime 1..5 ms every 10..40 ms), FIFO and fair attributes.
    fn attrs() -> impl Strategy<Value = SchedAttrs> + Clone {
        (0u8..3, 1u64..5, 1u64..5, 0i32..99).prop_map(|(k, r, p, v)| match k {
            0 => SchedAttrs {
                policy: Policy::Deadline,
                rt_priority: 0,
                nice: 0,
                dl: Some(DlParams {
                    runtime_ns: r * 1_000_000,
                    deadline_ns: p * 10_000_000,
                    period_ns: p * 10_000_000,
                }),
                slice_ns: None,
            },
            1 => rt(Policy::Fifo, v + 1),
            _ => fair(Policy::Other, v % 40 - 20),
        })
    }

    /// What every policy keeps (`Driver::check`), but a throttled deadline task may wait
    /// on an idle CPU for its replenishment; and the class's own bookkeeping: each CPU's
    /// tree count, and the bandwidth sums of the CPUs and of the root domain.
    fn check(d: &Driver<LinuxCfsStack>) {
        let ctx = &d.core.ctx;
        let dl = &d.core.policy.hi;
        let mut seen = vec![0u32; ctx.nr_tasks()];
        d.core.policy.for_each_queued(&mut |cpu, t| {
            seen[t.idx()] += 1;
            let v = ctx.task(t);
            assert!(v.on_rq && v.cpu == cpu && v.affinity.contains(cpu), "{t:?}");
        });
        for (i, &times) in seen.iter().enumerate() {
            let t = TaskId(i as u32);
            let v = ctx.task(t);
            if v.running {
                assert!(times <= 1 && ctx.curr(v.cpu) == Some(t), "{t:?}");
            } else {
                assert_eq!(times, u32::from(v.on_rq), "{t:?}");
                let throttled = dl.se.get(i).is_some_and(|s| s.dl_throttled);
                if v.on_rq && !throttled {
                    assert!(ctx.curr(v.cpu).is_some(), "{t:?} waits on an idle CPU");
                }
            }
        }
        for (c, rq) in dl.rqs.iter().enumerate() {
            assert_eq!(rq.nr_running as usize, dl.tree.iter(c).count(), "cpu {c}");
            let fs = dl.kernel.fair_server_bw();
            let this: u64 = dl
                .se
                .iter()
                .filter(|s| s.rq_bw_cpu == Some(CpuId(c as u32)))
                .map(|s| s.dl_bw)
                .sum::<u64>();
            assert_eq!(rq.this_bw, fs + this, "this_bw of cpu {c}");
            let running: u64 = dl
                .se
                .iter()
                .filter(|s| s.running_bw_cpu == Some(CpuId(c as u32)))
                .map(|s| s.dl_bw)
                .sum();
            assert_eq!(rq.running_bw, running, "running_bw of cpu {c}");
        }
        let admitted: u64 = dl.se.iter().filter(|s| s.admitted).map(|s| s.dl_bw).sum();
        let servers = dl.kernel.fair_server_bw() * dl.rqs.len() as u64;
        assert_eq!(dl.total_bw, servers + admitted, "total_bw");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Random operations through the scheduler core, with time passing through ticks
        /// and the class's timers (replenishment, inactive, hrtick), tasks changing class
        /// and parameters, yields and bounces.
        #[test]
        fn random_operations_keep_the_invariants(
            cpus in 1usize..4,
            reclaim in any::<bool>(),
            hrtick in any::<bool>(),
            specs in tasks(attrs()),
            ops in proptest::collection::vec(ops(30_000_000, attrs()), 1..200),
        ) {
            let mut policy = linux_cfs(cpus);
            policy.set_param("dl_reclaim", if reclaim { "1" } else { "0" }).unwrap();
            policy.set_param("hrtick_dl", if hrtick { "1" } else { "0" }).unwrap();
            let mut d = Driver::new(policy, cpus, 250, &specs);
            for op in ops {
                match op {
                    Op::Advance(dt) => {
                        let to = d.core.ctx.now() + dt;
                        d.core.run_until(to);
                    }
                    op => d.apply(op),
                }
                check(&d);
            }
        }
    }
}

//! The CPU-scheduler plug-in API.
//!
//! [`Scheduler`] mirrors Linux's `struct sched_class` (kernel/sched/sched.h) and sched_ext's
//! `struct sched_ext_ops` (include/linux/sched/ext.h): three required hooks (enqueue,
//! dequeue, pick_next) and optional ones with defaults. The engine owns tasks, CPUs and the
//! clock; a policy owns its run queues and its per-task state (kept in its own tables indexed
//! by [`TaskId`]). A policy sees the machine only through [`Ctx`], the engine-owned state
//! with the services a hook may use.
//!
//! # Calling protocol
//!
//! [`crate::protocol::SchedCore`] is the one implementation of this protocol; the engine,
//! the scheduler-cost instrument and the policies' tests all drive policies through it.
//! Each operation calls the hooks in this order (`[…]` = only when it applies; a hook's
//! kind in parentheses). `tests/protocol.rs` records the hooks the core calls and checks
//! every recorded sequence against this table.
//!
//! | operation (kernel function) | hooks, in order |
//! |---|---|
//! | create (`sched_fork`) | `task_new` |
//! | first wake-up (`wake_up_new_task`) | `select_cpu(Fork) enqueue(New) [[update_curr] wakeup_preempt]` |
//! | wake-up (`try_to_wake_up`) | `select_cpu(Wakeup) enqueue(Wakeup) [[update_curr] wakeup_preempt]` |
//! | wake-up of a task still current (`ttwu_runnable`) | `enqueue(Wakeup)` |
//! | block (`__schedule` → `deactivate_task`) | `[update_curr] dequeue(Sleep)` |
//! | exit (`do_exit`) | `[update_curr] dequeue(Exit)` |
//! | yield (`do_sched_yield`) | `[update_curr] yield_task` |
//! | tick (`sched_tick`) | `[update_curr] tick balance(Tick)` |
//! | schedule (`__schedule`) | `[update_curr] [put_prev] pick_next [balance(NewIdle) pick_next] [task_exit] [balance_callback]` |
//! | attribute change (`__sched_setscheduler`) | `[update_curr] [dequeue(Save)] [put_prev] [enqueue(Restore)] prio_changed [balance_callback]` |
//! | group change (`sched_move_task`) | `[update_curr] [dequeue(Save)] [put_prev] task_change_group [enqueue(Restore)] [balance_callback]` |
//! | affinity change that moves a queued task (`move_queued_task`) | `[update_curr] dequeue(Save) [put_prev] enqueue(Restore) [[update_curr] wakeup_preempt] [balance_callback]` |
//! | timer expiry (hrtimer callback) | `timer` |
//!
//! What the core guarantees around them:
//! - `task_new` is called once per task before anything else about it.
//! - A task is *queued* from `enqueue` until `dequeue`; it may be running while queued (as
//!   in the kernel, where `curr` stays `on_rq`). Only queued tasks may be returned by
//!   `pick_next`, and only on a CPU they are assigned to (`Ctx::task_cpu`).
//! - When a task stops running on a CPU (it blocked, was preempted or yielded), `put_prev`
//!   is called *before* the next `pick_next` on that CPU; for a task that blocked or exited,
//!   `dequeue` has already been called. After an attribute change the task was put already
//!   and is not put again: the `pick_next` that follows stands for `set_next_task`.
//! - The value `pick_next` returns runs at once; returning `None` idles the CPU.
//! - `enqueue` may be called for a task that is still the current task of its CPU: it
//!   blocked and was woken at the same instant, before its CPU switched away
//!   (`ttwu_runnable`). Such a task is enqueued on that CPU; a policy with a shared queue
//!   must not pick it on another CPU while `Ctx::task(t).running` is true.
//! - `update_curr` is called with the CPU time the running task consumed since the previous
//!   call, before any other hook that concerns that CPU at the same instant.
//! - `task_exit` of a task that exited comes after its CPU switched away from it
//!   (`finish_task_switch`), in that CPU's `schedule`.
//! - Within a class stack (`cpu::stack`) the same order holds per class: the task a
//!   deadline server takes from a lower class (`pick_next` answered through the
//!   stack's `pick_or_serve` / `server_pick`, as `__pick_task_dl` does) is picked by that
//!   class's own `pick_next` after the previous task's `put_prev`, and is then put,
//!   charged (`update_curr`, whose time the stack also passes to the server) and ticked
//!   by its own class.
//! - Hooks request a reschedule of a CPU with [`Ctx::resched`]; the core runs `schedule`
//!   for every such CPU once the current operation is handled. Balance callbacks queued
//!   with [`Ctx::queue_balance_callback`] run at the end of that CPU's next `schedule` or
//!   attribute change.

pub use crate::ctx::{Ctx, TaskView};
pub use crate::timer::{ClassSet, FiredTimer, TimerId};
use crate::types::{CpuId, CpuMask, GroupId, SchedAttrs, TaskId, Time};
pub use schedlab_core::result::CfsBandwidthStats;
use schedlab_spec::model::Cgroup;

/// Why a task is being enqueued (kernel ENQUEUE_* flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueKind {
    /// A blocked task woke up (ENQUEUE_WAKEUP).
    Wakeup,
    /// A newly created task (wake_up_new_task, ENQUEUE_INITIAL).
    New,
    /// A task moved between queues or re-added after an attribute change (ENQUEUE_RESTORE).
    Restore,
}

/// Why a task is being dequeued (kernel DEQUEUE_* flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequeueKind {
    /// The task blocked (DEQUEUE_SLEEP).
    Sleep,
    /// The task exited (do_exit → DEQUEUE_SLEEP in the kernel; distinguished here).
    Exit,
    /// Temporarily removed to change attributes or move it (DEQUEUE_SAVE).
    Save,
}

/// What kind of wake-up `select_cpu` is placing (kernel WF_* flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeKind {
    /// try_to_wake_up of a blocked task (WF_TTWU).
    Wakeup,
    /// wake_up_new_task after fork (WF_FORK).
    Fork,
}

/// The wake-up being processed, as the kernel passes it to `select_task_rq` and
/// `wakeup_preempt` (`wake_flags`, and the waker's CPU, `smp_processor_id()` in
/// try_to_wake_up). Read it with [`Ctx::wake_flags`] during `select_cpu`, `enqueue`
/// (Wakeup/New) and `wakeup_preempt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeFlags {
    /// WF_SYNC: the waker promises to leave the CPU soon. Pipe and socket wake-ups are
    /// sync (`wake_up_interruptible_sync*` in fs/pipe.c and sock_def_readable); condvar
    /// (futex), mutex, barrier and timer wake-ups are not.
    pub sync: bool,
    /// The CPU the waker runs on; `None` for a timer (interrupt context, the sleeper's
    /// CPU) or a task's first start.
    pub waker_cpu: Option<CpuId>,
}

impl WakeFlags {
    /// A sync wake-up onto the waker's own CPU: 2.6-era try_to_wake_up skipped the
    /// preemption test then (`if (!sync || cpu != this_cpu)`).
    pub fn sync_on(&self, cpu: CpuId) -> bool {
        self.sync && self.waker_cpu == Some(cpu)
    }
}

/// Why `balance` is being called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceKind {
    /// From the periodic tick of a busy CPU (sched_balance_trigger / rebalance_domains).
    Tick,
    /// The CPU is about to go idle (newidle balance, sched_balance_newidle).
    NewIdle,
}

/// A kernel feature a spec may use that not every policy models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Custom slices: a fair-class task's `sched_attr.sched_runtime`
    /// ([`SchedAttrs::slice_ns`]), which Linux 6.12+ uses as its slice.
    CustomSlice,
    /// Fair group scheduling (CONFIG_FAIR_GROUP_SCHED): cgroups' `cpu.shares` divide the
    /// CPU between groups of fair-class tasks.
    FairGroupSched,
    /// CFS bandwidth control (CONFIG_CFS_BANDWIDTH): a cgroup's quota per period
    /// (`cpu.cfs_quota_us`, `cpu.cfs_period_us`, `cpu.cfs_burst_us`, `cpu.max`,
    /// `cpu.max.burst`) limits the CPU time of its fair-class tasks.
    CfsBandwidth,
    /// RT bandwidth (`cpu.rt_runtime_us` / `cpu.rt_period_us` of a cgroup, the root's
    /// being the global `sched_rt_runtime_us` / `sched_rt_period_us`): RT throttling and
    /// RT group scheduling (CONFIG_RT_GROUP_SCHED).
    RtBandwidth,
}

impl Feature {
    /// What a spec uses when it needs the feature, as a run's note names it.
    pub fn what(self) -> &'static str {
        match self {
            Feature::CustomSlice => "custom slices (dl-runtime on a fair-class task)",
            Feature::FairGroupSched => {
                "the cgroups' cpu.shares and the division of the CPU between groups of \
                 fair-class tasks"
            }
            Feature::CfsBandwidth => {
                "the CFS bandwidth limits (cpu.cfs_quota_us, cpu.max and their period and \
                 burst)"
            }
            Feature::RtBandwidth => {
                "the cgroups' RT bandwidth (cpu.rt_runtime_us, cpu.rt_period_us) and RT \
                 group scheduling"
            }
        }
    }

    /// Why a policy without the feature ignores it (the default of
    /// [`Scheduler::models`]).
    pub fn not_modelled_by(self, policy: &str) -> String {
        match self {
            Feature::CustomSlice => format!(
                "{policy} has no custom slices for fair-class tasks (sched_attr.sched_runtime, \
                 honoured from Linux 6.12 on)"
            ),
            Feature::FairGroupSched => {
                format!("{policy} has no fair group scheduling (CONFIG_FAIR_GROUP_SCHED)")
            }
            Feature::CfsBandwidth => {
                format!("{policy} has no CFS bandwidth control (CONFIG_CFS_BANDWIDTH)")
            }
            Feature::RtBandwidth => format!(
                "{policy} has no RT throttling or RT group scheduling (only linux-cfs and \
                 linux-eevdf, whose RT class models kernel/sched/rt.c's, do)"
            ),
        }
    }
}

/// One request a task makes of the kernel's scheduling calls (`sched_setattr`,
/// `sched_setaffinity`) as the run will make it: at its start, then at each phase that
/// changes its attributes or CPUs. See [`Scheduler::admit`].
#[derive(Clone, Debug)]
pub struct AdmissionRequest {
    /// Index of the task in the spec (a task's requests come together, in order).
    pub task: usize,
    /// The JSON path of what is requested (the task, or the phase).
    pub path: String,
    /// The attributes in force after the request.
    pub attrs: SchedAttrs,
    /// The CPUs the task may use after the request (its `cpus` within its cgroup's).
    pub affinity: CpuMask,
    /// How many copies of the task run (`instances`).
    pub instances: u32,
}

/// How often and how long one group's RT tasks were throttled on one CPU (RT
/// bandwidth), as [`Scheduler::rt_throttling`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Throttling {
    pub group: GroupId,
    pub cpu: CpuId,
    /// Times the group's rt_rq on this CPU was throttled.
    pub throttles: u64,
    /// Time it spent throttled, up to `now`.
    pub throttled_ns: u64,
}

/// A tunable a policy exposes (plugsched put these in `/sys/cpusched/<sched>/<param>`).
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    /// The default, as text in the unit the description states.
    pub default: String,
    pub description: &'static str,
}

/// Static facts about a policy, for `schedlab schedulers`.
#[derive(Clone, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Primary source (file, version, lines).
    pub source: &'static str,
    pub params: Vec<ParamInfo>,
}

/// A CPU scheduling policy (sched_class / sched_ext_ops). See the module docs for the
/// calling protocol.
pub trait Scheduler {
    /// Static description, tunables and source.
    fn info(&self) -> PolicyInfo;

    /// Set a tunable by name; `Err` explains what is wrong with the value or the name.
    /// Called before the run starts.
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let _ = value;
        Err(format!("unknown parameter '{name}'"))
    }

    /// Can this policy run a task with these attributes? `Err` says why not (e.g.
    /// "SCHED_DEADLINE is not modelled by linux-cfs"); the run then fails with that message
    /// before it starts (sched_setattr() returning EINVAL). The default accepts every
    /// policy but SCHED_DEADLINE, whose runtime, deadline and period a policy must model
    /// to honour (ignoring them would run the task as something it did not ask to be).
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if attrs.policy == crate::types::Policy::Deadline {
            return Err(format!(
                "SCHED_DEADLINE is not modelled by {}",
                self.info().name
            ));
        }
        Ok(())
    }

    /// Admission control over the whole run, before it starts: the requests every task
    /// will make to the kernel (its own attributes and affinity, then each phase's), in
    /// spec order, on a machine of `nr_cpus` CPUs whose cgroup tree is `groups` (the
    /// root's `cpu.rt_runtime_us` / `cpu.rt_period_us` being the global RT limit). `Err`
    /// says why one would be refused (e.g. `sched_dl_overflow`'s EBUSY), naming the
    /// request's JSON path; the run then fails before it starts. The default admits
    /// everything.
    fn admit(
        &self,
        nr_cpus: usize,
        groups: &[Cgroup],
        requests: &[AdmissionRequest],
    ) -> Result<(), String> {
        let _ = (nr_cpus, groups, requests);
        Ok(())
    }

    /// Does this policy model `feature`? `Err` says why not (the kernel it models has no
    /// such thing); a run whose spec uses it goes on without it, and the result says so
    /// in `run.notes`. The default: a policy models none of them unless it says so.
    fn models(&self, feature: Feature) -> Result<(), String> {
        Err(feature.not_modelled_by(self.info().name))
    }

    /// Prepare per-task state for a new task. `parent` is the forking task (sched_class
    /// `task_fork` when `Some`, sched_ext `init_task`). The task is not queued yet.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        let _ = (ctx, t, parent);
    }

    /// The task has exited and been dequeued (sched_class `task_dead`, sched_ext `exit_task`).
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        let _ = (ctx, t);
    }

    /// Choose the CPU a waking or new task is queued on (`select_task_rq`,
    /// sched_ext `select_cpu`). Must return a CPU in the task's affinity. The default keeps
    /// the previous CPU when allowed, else the first allowed one.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let _ = kind;
        let aff = ctx.task(t).affinity;
        if aff.contains(prev) {
            prev
        } else {
            aff.first().expect("empty affinity")
        }
    }

    /// Make `t` runnable on `cpu` (`enqueue_task`, sched_ext `enqueue`).
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind);

    /// `t` stops being runnable on `cpu` (`dequeue_task`, sched_ext `dequeue`). `t` may be
    /// the running task.
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind);

    /// Should the newly queued `t` preempt what `cpu` runs (`wakeup_preempt`, formerly
    /// `check_preempt_curr`)? Call `ctx.resched(cpu)` if so. Only called when `cpu` is busy
    /// (an idle CPU is always rescheduled).
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let _ = (ctx, cpu, t);
    }

    /// `t` stops running on `cpu` (`put_prev_task`, sched_ext `stopping`); called before the
    /// next `pick_next` on that CPU. If `t` is still queued it was preempted or yielded.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let _ = (ctx, cpu, t);
    }

    /// Choose the task to run next on `cpu` (`pick_next_task` + `set_next_task`,
    /// sched_ext `dispatch`). `None` idles the CPU.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId>;

    /// The running task consumed `delta_ns` of CPU time (`update_curr`).
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        let _ = (ctx, cpu, t, delta_ns);
    }

    /// May `cpu` run without its periodic tick (`sched_can_stop_tick`, the NO_HZ_FULL
    /// test in kernel/sched/core.c)? Only if `tick` and tick-driven `balance` would do
    /// nothing until the next enqueue on this CPU (the engine asks again after each). The
    /// default keeps the tick.
    fn can_stop_tick(&self, ctx: &Ctx, cpu: CpuId) -> bool {
        let _ = (ctx, cpu);
        false
    }

    /// Periodic tick on a busy CPU with `t` running (`task_tick`, sched_ext `tick`).
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let _ = (ctx, cpu, t);
    }

    /// The running task called sched_yield() (`yield_task`). The engine reschedules
    /// the CPU afterwards.
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let _ = (ctx, cpu, t);
    }

    /// A task's policy, priority or nice changed (`prio_changed` / `switched_to` /
    /// `reweight_task`). `old` holds the previous attributes. As `__sched_setscheduler`
    /// does, the engine first dequeues the task (`DequeueKind::Save`) and puts it (put_prev)
    /// if it was running, changes the attributes, re-enqueues it (`EnqueueKind::Restore`),
    /// then calls this hook, then reschedules its CPU.
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        let _ = (ctx, t, old);
    }

    /// `t` moved from cgroup `from` to `ctx.task(t).group` (`task_change_group`, called by
    /// `sched_move_task` between DEQUEUE_SAVE/`put_prev` and ENQUEUE_RESTORE, as for an
    /// attribute change). A class with group scheduling moves the task's entity between
    /// its groups' run queues here.
    fn task_change_group(&mut self, ctx: &mut Ctx, t: TaskId, from: GroupId) {
        let _ = (ctx, t, from);
    }

    /// Load balancing (`balance` / `sched_balance_rq`, sched_ext `dispatch` from a global
    /// queue). Move queued tasks with `ctx.set_task_cpu`.
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        let _ = (ctx, cpu, kind);
    }

    /// A timer this class armed with `Ctx::arm_timer` expired (the hrtimer's callback:
    /// `hrtick`, `sched_rt_period_timer`, …). Runs as the timer's CPU (`timer.cpu`), in
    /// its hrtimer interrupt: the engine charges `kernel.timer_irq_ns` and the work counted
    /// here (`count_work`, at `sched_work_ps`) to the task running on that CPU at once, and
    /// a `resched` of that CPU takes effect when the interrupt ends.
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        let _ = (ctx, timer);
    }

    /// The balance callbacks queued on `cpu` with `Ctx::queue_balance_callback` run now
    /// (`__balance_callbacks`, e.g. `push_rt_tasks` queued by `set_next_task_rt`): after
    /// the context switch of a `schedule()` on `cpu` (or after it picked the same task
    /// again), and at the end of an attribute change of a task of `cpu`. `classes` holds
    /// the classes that queued one; only a class stack needs it.
    fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, classes: ClassSet) {
        let _ = (ctx, cpu, classes);
    }

    /// The policy's notion of a task's dynamic priority, traced as a counter
    /// (`C|pid|<name>|<value>`) at every switch: prio for O(1)-style policies, vruntime for
    /// CFS, virtual deadline for EEVDF/BFS. `None` = nothing to report.
    /// How often the deadline class throttled `t` with its runtime exhausted (the CBS
    /// of SCHED_DEADLINE: the result's `dl_throttles`); `None` for a task that was never
    /// SCHED_DEADLINE or a policy without a deadline class.
    fn dl_throttles(&self, t: TaskId) -> Option<u64> {
        let _ = t;
        None
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        let _ = t;
        None
    }

    /// The timeslice this policy gives a task with these attributes when it is alone / at
    /// its static priority, in ns, at a tick rate of `hz`, computed by the policy's own code
    /// (`task_timeslice` in O(1), the staircase slice, BFS `rr_interval` × …, 100 ms for
    /// SCHED_RR). `None` when the policy has no per-task slice (CFS/EEVDF: the slice depends
    /// on load) or does not run tasks with these attributes. Used by the seed-000
    /// instruments (`timeslice_table`, `schedlab timeslice`); the engine never calls it.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        let _ = (attrs, hz);
        None
    }

    /// Is the queued task `t` held back by bandwidth control (its CFS group, or an
    /// ancestor, is throttled on its CPU)? Such a task may wait on an idle CPU.
    fn is_throttled(&self, t: TaskId) -> bool {
        let _ = t;
        false
    }

    /// Group `g`'s CFS bandwidth statistics (its `cpu.stat`), if the policy models CFS
    /// bandwidth and the group has a quota; read once the run is over.
    fn cfs_bandwidth(&self, g: GroupId) -> Option<CfsBandwidthStats> {
        let _ = g;
        None
    }

    /// RT throttling so far, at `now`: every group's rt_rq on every CPU that was ever
    /// throttled (`nr_throttled`, time throttled). Empty for a policy without RT bandwidth.
    fn rt_throttling(&self, now: Time) -> Vec<Throttling> {
        let _ = now;
        Vec::new()
    }

    /// Every task the policy holds in its run queues, with the CPU queue it sits on; used by
    /// the invariant checker (no task in two places, affinity respected). The running task
    /// may be included (policies that keep `curr` linked, like the RT class) or not (CFS
    /// keeps `curr` out of its tree).
    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId));
}

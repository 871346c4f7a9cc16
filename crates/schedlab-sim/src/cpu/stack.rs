//! The scheduling-class stack: compose a Linux-style scheduler from reusable classes.
//!
//! Source: torvalds/linux `kernel/sched/core.c` (v5.x): `pick_next_task` walks the classes
//! in priority order (`for_each_class`: stop > dl > rt > fair > idle) and returns the first
//! task any class offers; `check_preempt_curr` lets the woken task's class decide when it
//! is the running task's class and otherwise preempts iff the woken task's class is higher;
//! `check_class_changed` calls `switched_from`/`switched_to` when `sched_setattr` moves a
//! task between classes; every other per-task hook goes to `p->sched_class`.
//!
//! # How to add a Linux-like class
//!
//! 1. Write the class in its own file (`cpu/<class>.rs`) as a [`Scheduler`] that only ever
//!    sees its own tasks, and implement [`SchedClass`] for it: `owns` says which
//!    [`SchedAttrs`] belong to it (e.g. `Policy::Fifo | Policy::Rr` for the RT class),
//!    `has_queued` reports whether it has work on a CPU (used to stop a newidle balance
//!    once a higher class found work), and `switched_from`/`switched_to` are told when a
//!    task leaves or joins the class through an attribute change.
//! 2. Compose: `Stacked::new(Higher::new(..), Lower::new(..), meta)` runs `Higher` strictly
//!    above `Lower`. A `Stacked` is itself a [`SchedClass`], so deeper stacks nest to the
//!    right: `Stacked<Dl, Stacked<Rt, Fair>>` is the kernel's dl > rt > fair order.
//! 3. Register the composed value under its policy name (see `linux_cfs::linux_cfs`).
//!
//! Routing rules (what `Stacked` does for you):
//! - every task belongs to exactly one class, the first (highest) whose `owns` is true;
//!   `accepts` fails for attributes no class owns (e.g. SCHED_DEADLINE without a dl class);
//! - `pick_next` asks the higher class first and the lower one only if it has nothing;
//! - `wakeup_preempt`: same class as the running task → that class decides; a higher
//!   class → reschedule at once; a lower class → never;
//! - `select_cpu`, `enqueue`, `dequeue`, `put_prev`, `update_curr`, `tick`, `yield_task`,
//!   `prio_changed`, `task_change_group`, `task_new`, `task_exit`, `dynamic_prio` go to the
//!   task's class;
//! - `balance` goes to both (a newidle balance stops after the higher class if that
//!   class now has work on the CPU, like the kernel's `balance` loop in
//!   `pick_next_task`/`put_prev_task_balance`); `for_each_queued` reports both;
//! - every hook runs with [`Ctx::class_index`] set to the class's index in the stack (the
//!   highest class 0, then down the stack; nested stacks count on), so timers a class arms
//!   and balance callbacks it queues come back to that class alone: `timer` and
//!   `balance_callback` are routed by that index (each class has its own timer namespace);
//! - tunables are the union of both classes' tunables; a name both list is one sysctl
//!   both read, set in both;
//! - `models` is answered by the class that runs the tasks concerned: fair-class tasks
//!   for custom slices, fair group scheduling and CFS bandwidth (whose statistics,
//!   `cfs_bandwidth`, come from that class too), SCHED_FIFO tasks for RT bandwidth.
//!
//! - deadline servers (`dl_server`, Linux 6.12's fair server): a higher class may hold a
//!   server for the lower classes' tasks. Its `pick_or_serve` answers
//!   [`ClassPick::Server`] when the server is its earliest entity; the stack then asks
//!   the lower class's `server_pick` (`pick_task_fair`) and runs that task, or tells the
//!   higher class `server_empty` (`dl_server_stop`) and asks it again. The task runs as
//!   a task of its own class (its `put_prev`, `update_curr`, `tick` go there), and its
//!   time then goes to the server too (`server_update`). Enqueueing a served task, or a
//!   balance that leaves served tasks on a CPU, calls `server_start` there;
//! - a class whose time shares the RT bandwidth (`shares_rt_bandwidth`: the deadline
//!   class) has its tasks' CPU time passed to the classes below (`charge_rt_time`).
//!
//! Cost: routing is O(1) per hook (one byte per task records the class holding it).

use crate::ctx::Ctx;
use crate::sched::{
    AdmissionRequest, BalanceKind, CfsBandwidthStats, ClassSet, DequeueKind, EnqueueKind, Feature,
    FiredTimer, PolicyInfo, Scheduler, Throttling, WakeKind,
};
use crate::types::{fair, rt, CpuId, GroupId, Policy, SchedAttrs, TaskId, Time};
use schedlab_spec::model::Cgroup;

/// A scheduling class that can sit in a [`Stacked`] (the kernel's `struct sched_class`
/// seen as one layer of the class list).
pub trait SchedClass: Scheduler {
    /// Does this class schedule tasks with these attributes (`p->sched_class` selection
    /// in `__setscheduler_prio`)?
    fn owns(&self, attrs: &SchedAttrs) -> bool;

    /// Does the class have any queued task (running or not) on `cpu`
    /// (`sched_rt_runnable`, `sched_fair_runnable`)?
    fn has_queued(&self, cpu: CpuId) -> bool;

    /// `t` leaves this class through an attribute change (`switched_from`). It has
    /// already been dequeued if it was queued.
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        let _ = (ctx, t);
    }

    /// `t` joins this class through an attribute change (`switched_to`); it will be
    /// enqueued with `EnqueueKind::Restore` if it is runnable.
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        let _ = (ctx, t);
    }

    /// How many classes this is (1; a stack counts its classes): the width of its range of
    /// class indices.
    fn nr_classes(&self) -> u8 {
        1
    }

    /// `pick_task` of a class that may hold a deadline server (`__pick_task_dl`): a task
    /// of its own, [`ClassPick::Server`] when the server of a lower class is its earliest
    /// entity, or nothing. The default is the class's `pick_next`.
    fn pick_or_serve(&mut self, ctx: &mut Ctx, cpu: CpuId) -> ClassPick {
        match self.pick_next(ctx, cpu) {
            Some(t) => ClassPick::Task(t),
            None => ClassPick::Nothing,
        }
    }

    /// The pick a deadline server asks of the class it serves (`server_pick_task`:
    /// `fair_server_pick_task` → `pick_task_fair`); like `pick_next`, the task returned
    /// runs at once. `None` for a class no server serves.
    fn server_pick(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let _ = (ctx, cpu);
        None
    }

    /// The server found nothing to run on `cpu` (`__pick_task_dl` → `dl_server_stop`).
    fn server_empty(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        let _ = (ctx, cpu);
    }

    /// Does a deadline server serve this class's tasks (the fair class: `rq->fair_server`)?
    fn is_served(&self, ctx: &Ctx, t: TaskId) -> bool {
        let _ = (ctx, t);
        false
    }

    /// Has the served class runnable tasks on `cpu` (`rq->cfs.h_nr_queued`)?
    fn server_has_tasks(&self, cpu: CpuId) -> bool {
        let _ = cpu;
        false
    }

    /// A served task was queued on `cpu` (`enqueue_task_fair` → `dl_server_start`, a no-op
    /// for a server running already).
    fn server_start(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        let _ = (ctx, cpu);
    }

    /// A served task ran `delta_ns` on `cpu` (`update_curr` of the fair class →
    /// `dl_server_update`).
    fn server_update(&mut self, ctx: &mut Ctx, cpu: CpuId, delta_ns: u64) {
        let _ = (ctx, cpu, delta_ns);
    }

    /// Is the CPU time of this class's tasks charged to the RT bandwidth of their CPU's
    /// root rt_rq (the deadline class: `update_curr_dl`, "for now we share the rt
    /// bandwidth")?
    fn shares_rt_bandwidth(&self) -> bool {
        false
    }

    /// A higher class whose time shares the RT bandwidth ran `delta_ns` on `cpu`: the RT
    /// class adds it to the root rt_rq's `rt_time` (when `sched_rt_bandwidth_account`).
    fn charge_rt_time(&mut self, ctx: &mut Ctx, cpu: CpuId, delta_ns: u64) {
        let _ = (ctx, cpu, delta_ns);
    }
}

/// What [`SchedClass::pick_or_serve`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassPick {
    /// A task of the class itself.
    Task(TaskId),
    /// The class's deadline server is its earliest entity: the stack asks the served
    /// class for a task ([`SchedClass::server_pick`]).
    Server,
    /// Nothing on this CPU.
    Nothing,
}

/// Name, summary and source of a composed policy (what `info()` reports).
#[derive(Clone, Copy, Debug)]
pub struct StackMeta {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
}

const HI: u8 = 0;
const LO: u8 = 1;
const NONE: u8 = 2;

/// Two classes with `Hi` strictly above `Lo` (e.g. `Stacked<LinuxRt, LinuxCfs>`).
pub struct Stacked<Hi, Lo> {
    pub hi: Hi,
    pub lo: Lo,
    meta: StackMeta,
    /// The class holding each task (HI, LO or NONE), indexed by TaskId.
    holder: Vec<u8>,
}

/// Call hook `$m` of class `$cls` (HI or LO) with `ctx` set to that class's index.
macro_rules! route {
    ($self:ident, $ctx:ident, $cls:expr, $m:ident ( $($a:expr),* )) => {
        match $cls {
            HI => {
                let index = $ctx.class_index();
                $ctx.as_class(index, |$ctx| $self.hi.$m($ctx, $($a),*))
            }
            _ => {
                let index = $self.lo_index($ctx);
                $ctx.as_class(index, |$ctx| $self.lo.$m($ctx, $($a),*))
            }
        }
    };
}

impl<Hi: SchedClass, Lo: SchedClass> Stacked<Hi, Lo> {
    pub fn new(hi: Hi, lo: Lo, meta: StackMeta) -> Self {
        Stacked {
            hi,
            lo,
            meta,
            holder: Vec::new(),
        }
    }

    /// The class that owns these attributes.
    #[inline]
    fn owner(&self, attrs: &SchedAttrs) -> u8 {
        if self.hi.owns(attrs) {
            HI
        } else if self.lo.owns(attrs) {
            LO
        } else {
            NONE
        }
    }

    /// The class currently holding `t` (falls back to its attributes' owner).
    #[inline]
    fn class_of(&self, ctx: &Ctx, t: TaskId) -> u8 {
        match self.holder.get(t.idx()) {
            Some(&c) if c != NONE => c,
            _ => self.owner(&ctx.task(t).attrs),
        }
    }

    #[inline]
    fn set_holder(&mut self, t: TaskId, c: u8) {
        if self.holder.len() <= t.idx() {
            self.holder.resize(t.idx() + 1, NONE);
        }
        self.holder[t.idx()] = c;
    }

    /// Move `t` from class `from` to class `to` (`check_class_changed`).
    fn switch_class(&mut self, ctx: &mut Ctx, t: TaskId, from: u8, to: u8) {
        if from != NONE {
            route!(self, ctx, from, switched_from(t));
        }
        if to != NONE {
            route!(self, ctx, to, switched_to(t));
        }
        self.set_holder(t, to);
    }

    /// The higher class's pick, its deadline server served by the lower class
    /// (`__pick_task_dl`'s loop: a server with nothing to serve is stopped).
    fn pick_or_serve_hi(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        loop {
            match route!(self, ctx, HI, pick_or_serve(cpu)) {
                ClassPick::Task(t) => return Some(t),
                ClassPick::Nothing => return None,
                ClassPick::Server => {
                    if let Some(t) = route!(self, ctx, LO, server_pick(cpu)) {
                        return Some(t);
                    }
                    route!(self, ctx, HI, server_empty(cpu));
                }
            }
        }
    }

    /// The class index of the lower class: the higher one takes this stack's first index.
    #[inline]
    fn lo_index(&self, ctx: &Ctx) -> u8 {
        ctx.class_index() + self.hi.nr_classes()
    }
}

impl<Hi: SchedClass, Lo: SchedClass> Scheduler for Stacked<Hi, Lo> {
    /// A name both classes list is one sysctl they both read: listed once.
    fn info(&self) -> PolicyInfo {
        let mut params = self.hi.info().params;
        for p in self.lo.info().params {
            if !params.iter().any(|q| q.name == p.name) {
                params.push(p);
            }
        }
        PolicyInfo {
            name: self.meta.name,
            summary: self.meta.summary,
            source: self.meta.source,
            params,
        }
    }

    /// Set in every class that lists the name (a shared sysctl is set in both).
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let in_hi = self.hi.info().params.iter().any(|p| p.name == name);
        let in_lo = self.lo.info().params.iter().any(|p| p.name == name);
        if in_hi {
            self.hi.set_param(name, value)?;
        }
        if in_lo {
            self.lo.set_param(name, value)?;
        }
        if !(in_hi || in_lo) {
            let known = self.info().params;
            return Err(super::tunables::unknown(
                self.meta.name,
                name,
                known.iter().map(|p| p.name),
            ));
        }
        Ok(())
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match self.owner(attrs) {
            HI => self.hi.accepts(attrs),
            LO => self.lo.accepts(attrs),
            _ => Err(format!(
                "{} is not modelled by {} yet",
                attrs.policy.as_str(),
                self.meta.name
            )),
        }
    }

    /// Both classes check the requests (each those of its own tasks).
    fn admit(
        &self,
        nr_cpus: usize,
        groups: &[Cgroup],
        requests: &[AdmissionRequest],
    ) -> Result<(), String> {
        self.hi.admit(nr_cpus, groups, requests)?;
        self.lo.admit(nr_cpus, groups, requests)
    }

    /// Asked of the class that runs the tasks the feature concerns: fair-class tasks for
    /// custom slices, fair group scheduling and CFS bandwidth, SCHED_FIFO tasks for RT
    /// bandwidth.
    fn models(&self, feature: Feature) -> Result<(), String> {
        let concerned = match feature {
            Feature::RtBandwidth => rt(Policy::Fifo, 1),
            Feature::CustomSlice | Feature::FairGroupSched | Feature::CfsBandwidth => {
                fair(Policy::Other, 0)
            }
        };
        match self.owner(&concerned) {
            HI => self.hi.models(feature),
            LO => self.lo.models(feature),
            _ => Err(feature.not_modelled_by(self.meta.name)),
        }
    }

    /// `sched_fork` → `p->sched_class->task_fork`.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        let c = self.owner(&ctx.task(t).attrs);
        self.set_holder(t, c);
        if c != NONE {
            route!(self, ctx, c, task_new(t, parent));
        }
    }

    /// `task_dead`.
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, task_exit(t))
    }

    /// `select_task_rq` of the class the task is about to be enqueued in.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let c = self.owner(&ctx.task(t).attrs);
        route!(self, ctx, c, select_cpu(t, prev, kind))
    }

    /// `enqueue_task` → `p->sched_class->enqueue_task`. If the task's attributes moved it
    /// to another class without a `prio_changed` (e.g. set before its first run), the
    /// class change is applied first; a never-run task is simply initialised afresh.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        let want = self.owner(&ctx.task(t).attrs);
        let have = self.holder.get(t.idx()).copied().unwrap_or(NONE);
        if want != have {
            if kind == EnqueueKind::New || have == NONE {
                self.set_holder(t, want);
                let parent = ctx.task(t).parent;
                route!(self, ctx, want, task_new(t, parent));
            } else {
                self.switch_class(ctx, t, have, want);
            }
        }
        route!(self, ctx, want, enqueue(cpu, t, kind));
        if want == LO && self.lo.is_served(ctx, t) {
            route!(self, ctx, HI, server_start(cpu));
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, dequeue(cpu, t, kind))
    }

    /// `check_preempt_curr` (core.c): same class → the class decides; a higher class
    /// preempts at once; a lower class never does.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = ctx.curr(cpu) else {
            ctx.resched(cpu);
            return;
        };
        if curr == t {
            return;
        }
        let ct = self.class_of(ctx, t);
        let cc = self.class_of(ctx, curr);
        if ct == cc {
            route!(self, ctx, ct, wakeup_preempt(cpu, t))
        } else if ct < cc {
            ctx.resched(cpu);
        }
    }

    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, put_prev(cpu, t))
    }

    /// `pick_next_task`: `for_each_class(class) { p = class->pick_task(rq); if (p)
    /// return p; }`, where the higher class's deadline server, when it is that class's
    /// earliest entity, takes the served class's pick (`__pick_task_dl`), and is stopped
    /// and the higher class asked again when that class has nothing.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if let Some(t) = self.pick_or_serve_hi(ctx, cpu) {
            return Some(t);
        }
        route!(self, ctx, LO, pick_next(cpu))
    }

    /// Charged to the task's class; then a served task's time goes to the higher class's
    /// server (`dl_server_update`), and a deadline task's to the RT bandwidth below it.
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, update_curr(cpu, t, delta_ns));
        if c == LO && self.lo.is_served(ctx, t) {
            route!(self, ctx, HI, server_update(cpu, delta_ns));
        } else if c == HI && self.hi.shares_rt_bandwidth() {
            route!(self, ctx, LO, charge_rt_time(cpu, delta_ns));
        }
    }

    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, tick(cpu, t))
    }

    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, yield_task(cpu, t))
    }

    /// `check_class_changed`: a class change calls `switched_from`/`switched_to` (and
    /// reschedules a running task, as `switched_to_fair`/`switched_to_rt` do); otherwise
    /// the class's `prio_changed`.
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        let from = self.class_of(ctx, t);
        let to = self.owner(&ctx.task(t).attrs);
        if from != to {
            self.switch_class(ctx, t, from, to);
            if ctx.task(t).running {
                let cpu = ctx.task(t).cpu;
                ctx.resched(cpu);
            }
        } else {
            route!(self, ctx, to, prio_changed(t, old))
        }
    }

    fn task_change_group(&mut self, ctx: &mut Ctx, t: TaskId, from: GroupId) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, task_change_group(t, from))
    }

    /// A served task the lower class pulled to `cpu` starts the server there, as its
    /// `enqueue_task_fair` would.
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        route!(self, ctx, HI, balance(cpu, kind));
        if kind == BalanceKind::NewIdle && self.hi.has_queued(cpu) {
            return;
        }
        route!(self, ctx, LO, balance(cpu, kind));
        if self.lo.server_has_tasks(cpu) {
            route!(self, ctx, HI, server_start(cpu));
        }
    }

    /// Delivered to the class that armed it (by class index).
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        if timer.class < self.lo_index(ctx) {
            route!(self, ctx, HI, timer(timer))
        } else {
            route!(self, ctx, LO, timer(timer))
        }
    }

    /// Run the callbacks of each class that queued one (higher class first, as the
    /// kernel's callback list runs in the order classes queued them during one pick).
    fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, classes: ClassSet) {
        let lo = self.lo_index(ctx);
        if classes.any_in(ctx.class_index(), self.hi.nr_classes()) {
            route!(self, ctx, HI, balance_callback(cpu, classes));
        }
        if classes.any_in(lo, self.lo.nr_classes()) {
            route!(self, ctx, LO, balance_callback(cpu, classes));
        }
    }

    fn is_throttled(&self, t: TaskId) -> bool {
        match self.holder.get(t.idx()).copied().unwrap_or(NONE) {
            HI => self.hi.is_throttled(t),
            LO => self.lo.is_throttled(t),
            _ => false,
        }
    }

    /// Either class may have throttled it (it may have left the class since).
    fn dl_throttles(&self, t: TaskId) -> Option<u64> {
        self.hi.dl_throttles(t).or_else(|| self.lo.dl_throttles(t))
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        match self.holder.get(t.idx()).copied().unwrap_or(NONE) {
            HI => self.hi.dynamic_prio(t),
            LO => self.lo.dynamic_prio(t),
            _ => None,
        }
    }

    /// Asked of the class that owns these attributes (CFS/EEVDF answer `None`: their slice
    /// depends on the load).
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        match self.owner(attrs) {
            HI => self.hi.timeslice_ns(attrs, hz),
            LO => self.lo.timeslice_ns(attrs, hz),
            _ => None,
        }
    }

    /// Answered by the class that runs fair-class tasks, as `models` is.
    fn cfs_bandwidth(&self, g: GroupId) -> Option<CfsBandwidthStats> {
        match self.owner(&fair(Policy::Other, 0)) {
            HI => self.hi.cfs_bandwidth(g),
            LO => self.lo.cfs_bandwidth(g),
            _ => None,
        }
    }

    fn rt_throttling(&self, now: Time) -> Vec<Throttling> {
        let mut all = self.hi.rt_throttling(now);
        all.extend(self.lo.rt_throttling(now));
        all
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        self.hi.for_each_queued(f);
        self.lo.for_each_queued(f);
    }
}

impl<Hi: SchedClass, Lo: SchedClass> SchedClass for Stacked<Hi, Lo> {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        self.owner(attrs) != NONE
    }

    fn has_queued(&self, cpu: CpuId) -> bool {
        self.hi.has_queued(cpu) || self.lo.has_queued(cpu)
    }

    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        let c = self.class_of(ctx, t);
        if c != NONE {
            route!(self, ctx, c, switched_from(t));
        }
        self.set_holder(t, NONE);
    }

    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        let c = self.owner(&ctx.task(t).attrs);
        if c != NONE {
            route!(self, ctx, c, switched_to(t));
        }
        self.set_holder(t, c);
    }

    fn nr_classes(&self) -> u8 {
        self.hi.nr_classes() + self.lo.nr_classes()
    }

    /// A stack under a server-holding class serves through whichever of its classes is
    /// served.
    fn server_pick(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if let Some(t) = route!(self, ctx, HI, server_pick(cpu)) {
            return Some(t);
        }
        route!(self, ctx, LO, server_pick(cpu))
    }

    fn is_served(&self, ctx: &Ctx, t: TaskId) -> bool {
        match self.class_of(ctx, t) {
            HI => self.hi.is_served(ctx, t),
            LO => self.lo.is_served(ctx, t),
            _ => false,
        }
    }

    fn server_has_tasks(&self, cpu: CpuId) -> bool {
        self.hi.server_has_tasks(cpu) || self.lo.server_has_tasks(cpu)
    }

    fn charge_rt_time(&mut self, ctx: &mut Ctx, cpu: CpuId, delta_ns: u64) {
        route!(self, ctx, HI, charge_rt_time(cpu, delta_ns));
        route!(self, ctx, LO, charge_rt_time(cpu, delta_ns));
    }
}

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
//! - tunables are the union of both classes' tunables (names must not collide);
//! - `models` is answered by the class that runs the tasks concerned: fair-class tasks
//!   for custom slices and fair group scheduling, SCHED_FIFO tasks for RT bandwidth.
//!
//! Cost: routing is O(1) per hook (one byte per task records the class holding it).

use crate::ctx::Ctx;
use crate::sched::{
    BalanceKind, ClassSet, DequeueKind, EnqueueKind, Feature, FiredTimer, PolicyInfo, Scheduler,
    Throttling, WakeKind,
};
use crate::types::{fair, rt, CpuId, GroupId, Policy, SchedAttrs, TaskId, Time};

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

    /// The class index of the lower class: the higher one takes this stack's first index.
    #[inline]
    fn lo_index(&self, ctx: &Ctx) -> u8 {
        ctx.class_index() + self.hi.nr_classes()
    }
}

impl<Hi: SchedClass, Lo: SchedClass> Scheduler for Stacked<Hi, Lo> {
    fn info(&self) -> PolicyInfo {
        let mut params = self.hi.info().params;
        params.extend(self.lo.info().params);
        PolicyInfo {
            name: self.meta.name,
            summary: self.meta.summary,
            source: self.meta.source,
            params,
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        if self.hi.info().params.iter().any(|p| p.name == name) {
            self.hi.set_param(name, value)
        } else if self.lo.info().params.iter().any(|p| p.name == name) {
            self.lo.set_param(name, value)
        } else {
            let known = self.info().params;
            Err(super::tunables::unknown(
                self.meta.name,
                name,
                known.iter().map(|p| p.name),
            ))
        }
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

    /// Asked of the class that runs the tasks the feature concerns: fair-class tasks for
    /// custom slices and fair group scheduling, SCHED_FIFO tasks for RT bandwidth.
    fn models(&self, feature: Feature) -> Result<(), String> {
        let concerned = match feature {
            Feature::RtBandwidth => rt(Policy::Fifo, 1),
            Feature::CustomSlice | Feature::FairGroupSched => fair(Policy::Other, 0),
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
        route!(self, ctx, want, enqueue(cpu, t, kind))
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

    /// `pick_next_task`: `for_each_class(class) { p = class->pick_next_task(rq); if (p)
    /// return p; }`.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if let Some(t) = route!(self, ctx, HI, pick_next(cpu)) {
            return Some(t);
        }
        route!(self, ctx, LO, pick_next(cpu))
    }

    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        let c = self.class_of(ctx, t);
        route!(self, ctx, c, update_curr(cpu, t, delta_ns))
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

    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        route!(self, ctx, HI, balance(cpu, kind));
        if kind == BalanceKind::NewIdle && self.hi.has_queued(cpu) {
            return;
        }
        route!(self, ctx, LO, balance(cpu, kind));
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
}

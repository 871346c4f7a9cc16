//! The scheduling protocol: the order in which the kernel's scheduler core
//! (kernel/sched/core.c) calls a policy's hooks for each operation — fork, wake-up,
//! block, exit, attribute and affinity change, yield, tick, timer, and `schedule()` with
//! its pick, switch and balance callbacks. [`SchedCore`] is its one implementation: the
//! engine drives every run through it, and so do the scheduler-cost instrument and the
//! policies' tests, so that no copy can drift from what the engine does.
//!
//! `SchedCore` owns the policy and the [`Ctx`] it sees, and keeps the kernel's side of the
//! machine: which task is current on each CPU, which are queued, CPU time accounting
//! (`update_curr`, switch overhead, the scheduler-work cost model), ticks and policy
//! timers. It knows nothing of task programs: the engine steps programs and asks the core
//! to block, wake, fork or exit tasks. Without an engine (tests, the cost instrument)
//! every task is a CPU hog that runs until the caller blocks it, and [`SchedCore::run_until`]
//! advances time through ticks and timers.
//!
//! The hook order of every operation is documented once, in the calling-protocol table of
//! [`crate::sched`]; `tests/protocol.rs` records the hooks this code calls and checks them
//! against that table.

use schedlab_spec::cost::{draw, CostKey, Spread};

use crate::ctx::{Ctx, TaskCounters, TaskView};
use crate::event::EventKind;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, Scheduler, WakeFlags, WakeKind};
use crate::trace::writer::PrevState;
use crate::trace::Tracer;
use crate::types::{CpuId, CpuMask, GroupId, SchedAttrs, TaskId, Time, ROOT_GROUP};

/// CPU time the core charges for its own work (the `schedlab.machine` costs it owns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreCosts {
    /// A context switch, paid by the next task before it makes progress (the minimum,
    /// when it varies).
    pub context_switch_ns: u64,
    /// How a switch's cost spreads above `context_switch_ns`: the k-th switch into a task
    /// draws occurrence k of the task's stream under `seed` (`schedlab_spec::cost`).
    pub switch_spread: Option<Spread>,
    pub seed: u64,
    /// Cost model: picoseconds per unit of scheduler work a policy counts.
    pub sched_work_ps: u64,
    /// Cost model: nanoseconds per scheduling decision (`schedule()`), whatever it counts:
    /// the fixed part of the policy's code, owed and paid like its counted work.
    pub sched_decision_ns: u64,
}

/// What one `schedule()` did on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    pub prev: Option<TaskId>,
    pub next: Option<TaskId>,
}

impl Switch {
    /// A different task (or idle) now runs.
    #[inline]
    pub fn switched(&self) -> bool {
        self.prev != self.next
    }
}

/// Where a task was when a change to it began ([`SchedCore::change_begin`]).
struct Change {
    cpu: CpuId,
    queued: bool,
    running: bool,
}

/// A reason the core refuses an operation (a policy broke the protocol, or an attribute
/// change the policy does not accept).
pub type ProtocolError = String;

/// The kernel's scheduler core around one policy. See the module docs.
pub struct SchedCore<S: Scheduler> {
    pub policy: S,
    pub ctx: Ctx,
    costs: CoreCosts,
    /// Per CPU: the current task was already put (`put_prev`) by an attribute change, so
    /// the next `schedule()` must not put it again (the kernel's `set_next_task` that
    /// follows makes it current again; here the reschedule's pick does).
    prev_put: Vec<bool>,
    /// Per CPU: a task that exited on it and awaits `task_exit` after the switch
    /// (`finish_task_switch` → `put_task_struct` → `task_dead`).
    dead: Vec<Option<TaskId>>,
    /// Per task: the dynamic priority last traced as a counter (empty when not tracing).
    traced_dprio: Vec<Option<i64>>,
    /// Scheduling decisions taken (`pick_next` calls).
    pub decisions: u64,
    /// A busy CPU's tick may stop when the policy says it would change nothing (a kernel
    /// with `NO_HZ_FULL`, or a tick that costs nothing and so cannot be seen to stop).
    pub tick_may_stop: bool,
}

impl<S: Scheduler> SchedCore<S> {
    /// A core around `policy` on the machine `ctx` describes.
    pub fn new(policy: S, ctx: Ctx, costs: CoreCosts) -> Self {
        let n = ctx.nr_cpus();
        SchedCore {
            policy,
            ctx,
            costs,
            prev_put: vec![false; n],
            dead: vec![None; n],
            traced_dprio: Vec::new(),
            decisions: 0,
            tick_may_stop: true,
        }
    }

    /// A bare core for policy tests and instruments: `nr_cpus` CPUs at `hz`, no trace, no
    /// costs.
    pub fn bare(policy: S, nr_cpus: usize, hz: u32) -> Self {
        Self::new(
            policy,
            Ctx::new(nr_cpus, hz, 1, Tracer::disabled()),
            CoreCosts::default(),
        )
    }

    // ------------------------------------------------------------------ tasks

    /// `sched_fork`: create a task (not yet runnable) and call `task_new`. It is assigned
    /// to its parent's CPU when allowed there, else to its first allowed CPU.
    pub fn create_task(
        &mut self,
        attrs: SchedAttrs,
        affinity: CpuMask,
        parent: Option<TaskId>,
    ) -> TaskId {
        let id = TaskId(self.ctx.tasks.len() as u32);
        let cpu = match parent {
            Some(p) if affinity.contains(self.ctx.tasks[p.idx()].cpu) => {
                self.ctx.tasks[p.idx()].cpu
            }
            _ => affinity.first().unwrap_or(CpuId(0)),
        };
        self.ctx.tasks.push(TaskView {
            attrs,
            affinity,
            cpu,
            sum_exec_ns: 0,
            parent,
            on_rq: false,
            running: false,
            exited: false,
            group: ROOT_GROUP,
            sleep_state: PrevState::Sleeping,
        });
        self.ctx.counters.push(TaskCounters::default());
        if self.ctx.tracer.enabled() {
            self.traced_dprio.push(None);
        }
        id
    }

    /// Room for `n` more tasks in the per-task tables (a run reserves its start-up tasks at
    /// once, so that the tables are not left up to twice as large as needed by doubling).
    pub fn reserve_tasks(&mut self, n: usize) {
        self.ctx.tasks.reserve_exact(n);
        self.ctx.counters.reserve_exact(n);
        if self.ctx.tracer.enabled() {
            self.traced_dprio.reserve_exact(n);
        }
    }

    /// The policy's `task_new` for a task just created (`sched_fork` →
    /// `sched_class->task_fork`); separate from [`Self::create_task`] so that the caller
    /// may set the task's initial attributes and affinity first.
    pub fn task_new(&mut self, t: TaskId, parent: Option<TaskId>) {
        self.policy.task_new(&mut self.ctx, t, parent);
    }

    /// A task in one step: [`Self::create_task`] then [`Self::task_new`].
    pub fn spawn(
        &mut self,
        attrs: SchedAttrs,
        affinity: CpuMask,
        parent: Option<TaskId>,
    ) -> TaskId {
        let t = self.create_task(attrs, affinity, parent);
        self.task_new(t, parent);
        t
    }

    // ------------------------------------------------------------------ wake-ups

    /// `wake_up_new_task`: the first placement of a created task; `waker` is the forking
    /// task's CPU (`None` for a task started by the machine). Returns the CPU it was
    /// queued on.
    pub fn wake_up_new_task(
        &mut self,
        t: TaskId,
        waker: Option<CpuId>,
    ) -> Result<CpuId, ProtocolError> {
        let prev = self.ctx.tasks[t.idx()].cpu;
        self.ctx.charge_cpu = waker.unwrap_or(prev).idx();
        self.ctx.wake = WakeFlags {
            sync: false,
            waker_cpu: waker,
        };
        let cpu = self
            .policy
            .select_cpu(&mut self.ctx, t, prev, WakeKind::Fork);
        self.check_placement(t, cpu)?;
        // __set_task_cpu: a first placement, not a migration.
        self.ctx.tasks[t.idx()].cpu = cpu;
        self.activate(t, cpu, EnqueueKind::New, waker);
        Ok(cpu)
    }

    /// `try_to_wake_up` of a blocked task; `waker` is the waking task's CPU (`None` for a
    /// timer, which wakes from interrupt context on the sleeper's CPU), `sync` is WF_SYNC.
    /// Returns the CPU it was queued on.
    pub fn try_to_wake_up(
        &mut self,
        t: TaskId,
        waker: Option<CpuId>,
        sync: bool,
    ) -> Result<CpuId, ProtocolError> {
        debug_assert!(!self.ctx.tasks[t.idx()].on_rq, "waking a queued task {t:?}");
        let prev = self.ctx.tasks[t.idx()].cpu;
        self.ctx.charge_cpu = waker.unwrap_or(prev).idx();
        self.ctx.wake = WakeFlags {
            sync,
            waker_cpu: waker,
        };
        if self.ctx.tasks[t.idx()].running {
            // It blocked at this very instant and its CPU has not switched away yet
            // (`ttwu_runnable`): it is queued again where it is and keeps running.
            self.ctx.tasks[t.idx()].on_rq = true;
            self.policy
                .enqueue(&mut self.ctx, prev, t, EnqueueKind::Wakeup);
            self.ctx.resched(prev);
            return Ok(prev);
        }
        let cpu = self
            .policy
            .select_cpu(&mut self.ctx, t, prev, WakeKind::Wakeup);
        self.check_placement(t, cpu)?;
        self.ctx.set_task_cpu(t, cpu);
        self.activate(t, cpu, EnqueueKind::Wakeup, waker);
        Ok(cpu)
    }

    fn check_placement(&mut self, t: TaskId, cpu: CpuId) -> Result<(), ProtocolError> {
        let aff = self.ctx.tasks[t.idx()].affinity;
        if aff.contains(cpu) && cpu.idx() < self.ctx.nr_cpus() {
            Ok(())
        } else {
            Err(format!(
                "policy placed task {} on cpu {} outside its affinity {aff:?}",
                t.pid(),
                cpu.0
            ))
        }
    }

    /// `activate_task` + `wakeup_preempt` (`ttwu_do_activate`): queue `t` on `cpu` and let
    /// the policy decide whether it preempts what runs there.
    fn activate(&mut self, t: TaskId, cpu: CpuId, kind: EnqueueKind, waker: Option<CpuId>) {
        self.ctx.tasks[t.idx()].on_rq = true;
        self.policy.enqueue(&mut self.ctx, cpu, t, kind);
        if self.ctx.tracer.enabled() {
            let on_cpu = waker.unwrap_or(cpu);
            let on = self.ctx.curr(on_cpu);
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            let new = kind == EnqueueKind::New;
            let now = self.ctx.now;
            self.ctx.tracer.wakeup(now, on_cpu, on, t, prio, cpu, new);
        }
        self.check_preempt(cpu, t);
    }

    /// `wakeup_preempt` (`check_preempt_curr`) for `t` just queued on `cpu`: an idle CPU
    /// simply reschedules; a busy one is brought up to date and asks the policy.
    fn check_preempt(&mut self, cpu: CpuId, t: TaskId) {
        if self.ctx.cpus[cpu.idx()].curr.is_none() {
            self.ctx.resched(cpu);
        } else {
            self.account(cpu);
            self.policy.wakeup_preempt(&mut self.ctx, cpu, t);
            // One more runnable task may need the tick back (sched_update_tick_dependency).
            self.arm_tick(cpu);
        }
    }

    // ------------------------------------------------------------------ the current task

    /// The current task of `cpu` blocks (`deactivate_task(DEQUEUE_SLEEP)` in
    /// `__schedule`); the CPU reschedules. `state` is how a trace shows it (`S` or `D`).
    pub fn block(&mut self, cpu: CpuId, state: PrevState) -> TaskId {
        let t = self.ctx.cpus[cpu.idx()].curr.expect("block on an idle CPU");
        self.ctx.charge_cpu = cpu.idx();
        self.account(cpu);
        let v = &mut self.ctx.tasks[t.idx()];
        v.on_rq = false;
        v.sleep_state = state;
        self.policy
            .dequeue(&mut self.ctx, cpu, t, DequeueKind::Sleep);
        self.ctx.resched(cpu);
        t
    }

    /// The current task of `cpu` exits (`do_exit` → `do_task_dead`): it is dequeued now;
    /// `task_exit` follows once the CPU has switched away from it (`finish_task_switch`).
    pub fn exit(&mut self, cpu: CpuId) -> TaskId {
        let t = self.ctx.cpus[cpu.idx()].curr.expect("exit on an idle CPU");
        self.ctx.charge_cpu = cpu.idx();
        self.account(cpu);
        let v = &mut self.ctx.tasks[t.idx()];
        v.on_rq = false;
        v.exited = true;
        self.policy
            .dequeue(&mut self.ctx, cpu, t, DequeueKind::Exit);
        if self.ctx.tracer.enabled() {
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            self.ctx.tracer.exit(self.ctx.now, cpu, t, prio);
        }
        self.dead[cpu.idx()] = Some(t);
        self.ctx.resched(cpu);
        t
    }

    /// The current task of `cpu` calls sched_yield() (`do_sched_yield`).
    pub fn yield_current(&mut self, cpu: CpuId) {
        let t = self.ctx.cpus[cpu.idx()].curr.expect("yield on an idle CPU");
        self.ctx.charge_cpu = cpu.idx();
        self.account(cpu);
        self.policy.yield_task(&mut self.ctx, cpu, t);
        self.ctx.resched(cpu);
    }

    /// `sched_setattr` / `sched_setaffinity` on `t` (`__sched_setscheduler`,
    /// `__set_cpus_allowed_ptr`): new attributes and/or a new affinity (already limited
    /// to the machine; an empty mask is ignored). Nothing happens if nothing changes, as
    /// the kernel returns early. Returns `Err` with the policy's reason when it does not
    /// accept the attributes (sched_setattr's EINVAL).
    ///
    /// Order (v6.x): `update_curr`; `dequeue(Save)` if queued; `put_prev` if running;
    /// change; then, if the task may stay on its CPU, `enqueue(Restore)` if it was queued
    /// and `prio_changed` (a class stack turns a class change into `switched_from` /
    /// `switched_to`); if not, it is moved like `move_queued_task`: its CPU switches away
    /// and it is queued on its first allowed CPU (`enqueue(Restore)`, then
    /// `wakeup_preempt` there). Balance callbacks queued meanwhile run at the end.
    pub fn setattr(
        &mut self,
        t: TaskId,
        attrs: Option<SchedAttrs>,
        affinity: Option<CpuMask>,
    ) -> Result<(), ProtocolError> {
        let v = self.ctx.tasks[t.idx()];
        let old = v.attrs;
        let new_attrs = attrs.unwrap_or(old);
        let new_mask = affinity.filter(|m| !m.is_empty()).unwrap_or(v.affinity);
        if new_attrs == old && new_mask == v.affinity {
            return Ok(());
        }
        self.policy.accepts(&new_attrs)?;
        let Change {
            cpu,
            queued,
            running,
        } = self.change_begin(t);
        let v = &mut self.ctx.tasks[t.idx()];
        v.attrs = new_attrs;
        v.affinity = new_mask;
        if new_mask.contains(cpu) {
            self.change_restore(t, cpu, queued, running);
            self.policy.prio_changed(&mut self.ctx, t, old);
        } else if queued {
            // A sleeping task is simply placed by its next wake-up; a queued or running
            // one moves now.
            if running {
                self.switch_out(cpu);
            }
            let dest = new_mask.first().expect("non-empty affinity");
            self.ctx.set_task_cpu(t, dest);
            self.ctx.tasks[t.idx()].on_rq = true;
            self.policy
                .enqueue(&mut self.ctx, dest, t, EnqueueKind::Restore);
            self.check_preempt(dest, t);
        }
        self.change_end(cpu, running);
        Ok(())
    }

    /// `sched_move_task`: move `t` to cgroup `to` (nothing happens if it is there). Order:
    /// `update_curr`; `dequeue(Save)` if queued; `put_prev` if running; the move and
    /// `task_change_group`; `enqueue(Restore)` if it was queued; the balance callbacks;
    /// a reschedule if it runs. Its affinity is the caller's to update (the new group's
    /// cpuset), with [`Self::setattr`].
    pub fn move_group(&mut self, t: TaskId, to: GroupId) {
        let from = self.ctx.tasks[t.idx()].group;
        if from == to {
            return;
        }
        let Change {
            cpu,
            queued,
            running,
        } = self.change_begin(t);
        self.ctx.tasks[t.idx()].group = to;
        self.policy.task_change_group(&mut self.ctx, t, from);
        self.change_restore(t, cpu, queued, running);
        self.change_end(cpu, running);
    }

    /// The first half of a change to a task's scheduling state (the kernel's `sched_change`
    /// pattern of `__sched_setscheduler` and `sched_move_task`): `update_curr` if it runs,
    /// `dequeue(Save)` if queued, `put_prev` if running.
    fn change_begin(&mut self, t: TaskId) -> Change {
        let v = self.ctx.tasks[t.idx()];
        let (cpu, queued, running) = (v.cpu, v.on_rq, v.running);
        self.ctx.charge_cpu = cpu.idx();
        if running {
            self.account(cpu);
        }
        if queued {
            self.ctx.tasks[t.idx()].on_rq = false;
            self.policy
                .dequeue(&mut self.ctx, cpu, t, DequeueKind::Save);
        }
        if running {
            self.ctx.tasks[t.idx()].running = false;
            self.policy.put_prev(&mut self.ctx, cpu, t);
            self.prev_put[cpu.idx()] = true;
        }
        Change {
            cpu,
            queued,
            running,
        }
    }

    /// Put the task back where it was: `enqueue(Restore)` if it was queued, current again
    /// if it was running (the reschedule's pick stands for `set_next_task`).
    fn change_restore(&mut self, t: TaskId, cpu: CpuId, queued: bool, running: bool) {
        if queued {
            self.ctx.tasks[t.idx()].on_rq = true;
            self.policy
                .enqueue(&mut self.ctx, cpu, t, EnqueueKind::Restore);
        }
        self.ctx.tasks[t.idx()].running = running;
    }

    /// The end of a change: the balance callbacks it queued, and a reschedule of the CPU
    /// the task ran on.
    fn change_end(&mut self, cpu: CpuId, running: bool) {
        self.run_balance_callbacks(cpu);
        if running {
            self.ctx.resched(cpu);
        }
    }

    /// The stop task takes `cpu` from its current task, which has already been put: the
    /// CPU is left idle until it reschedules (the migration of a running task whose
    /// affinity no longer includes its CPU).
    fn switch_out(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        let prev = self.ctx.cpus[c].curr.take();
        self.prev_put[c] = false;
        if let Some(p) = prev {
            self.ctx.tasks[p.idx()].running = false;
            if self.ctx.tracer.enabled() {
                self.trace_switch(cpu, Some(p), None);
            }
        }
        let now = self.ctx.now;
        let cs = &mut self.ctx.cpus[c];
        cs.idle_since = now;
        cs.overhead_left = 0;
        cs.switches += 1;
    }

    // ------------------------------------------------------------------ time

    /// `update_curr`: bring `cpu`'s CPU time up to date ([`Self::account_time`]) and
    /// tell the policy how much its current task ran since it was last told.
    pub fn account(&mut self, cpu: CpuId) {
        self.account_time(cpu);
        let c = &mut self.ctx.cpus[cpu.idx()];
        let work = std::mem::take(&mut c.unreported_ns);
        if work > 0 {
            let t = c.curr.expect("unreported time on an idle CPU");
            self.policy.update_curr(&mut self.ctx, cpu, t, work);
        }
    }

    /// Charge the time since the last accounting point to `cpu`'s current task — first
    /// any switch overhead still owed, then the task's own work — without calling the
    /// policy: the engine does this when a task's program reaches an event, which the
    /// kernel does not see; the policy hears of the time at its next hook on this CPU
    /// (the kernel calls `update_curr` only from scheduler operations).
    pub fn account_time(&mut self, cpu: CpuId) {
        let now = self.ctx.now;
        let c = &mut self.ctx.cpus[cpu.idx()];
        let Some(t) = c.curr else { return };
        let delta = now - c.seg_start;
        if delta == 0 {
            return;
        }
        c.seg_start = now;
        c.busy_ns += delta;
        let ov = delta.min(c.overhead_left);
        c.overhead_left -= ov;
        c.overhead_ns += ov;
        let work = delta - ov;
        c.unreported_ns += work;
        self.ctx.tasks[t.idx()].sum_exec_ns += work;
    }

    /// The periodic tick of `cpu` (`sched_tick`): `task_tick` of the current task, the
    /// load-balance trigger (`balance(Tick)`), and the next tick if the CPU still needs one.
    pub fn tick(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        self.ctx.cpus[c].tick_armed = false;
        let Some(t) = self.ctx.cpus[c].curr else {
            return;
        };
        self.ctx.charge_cpu = c;
        self.account(cpu);
        self.policy.tick(&mut self.ctx, cpu, t);
        self.policy.balance(&mut self.ctx, cpu, BalanceKind::Tick);
        self.arm_tick(cpu);
    }

    /// Arm the next tick of a busy CPU on the global tick grid (ticks are aligned across
    /// CPUs). Idle CPUs take none (NO_HZ idle), nor do busy CPUs whose policy says the
    /// tick would change nothing (NO_HZ full, `sched_can_stop_tick`).
    #[inline(always)]
    pub(crate) fn arm_tick(&mut self, cpu: CpuId) {
        let c = &self.ctx.cpus[cpu.idx()];
        if c.tick_armed
            || c.curr.is_none()
            || (self.tick_may_stop && self.policy.can_stop_tick(&self.ctx, cpu))
        {
            return;
        }
        self.start_tick(cpu);
    }

    #[inline(never)]
    fn start_tick(&mut self, cpu: CpuId) {
        self.ctx.cpus[cpu.idx()].tick_armed = true;
        let tick = self.ctx.tick_ns;
        let next = (self.ctx.now / tick + 1) * tick;
        self.ctx.push(next, EventKind::Tick { cpu });
    }

    /// A policy timer's event popped: call the policy if the timer is still armed. The
    /// callback runs in the hrtimer interrupt of the CPU that armed it, so the scheduler
    /// work it counts is not owed to that CPU's next switch: it is returned, as CPU time
    /// (the cost model's `sched_work_ps`, remainder carried), with that CPU, for the
    /// caller to charge as part of the interrupt (`None`: the timer was stale).
    pub(crate) fn fire_timer(&mut self, slot: u32, gen: u64) -> Option<(CpuId, u64)> {
        let fired = self.ctx.timers.expire(slot, gen)?;
        let (cpu, c) = (fired.cpu, fired.cpu.idx());
        self.ctx.charge_cpu = c;
        let owed_before = self.ctx.cpus[c].pending_work;
        self.policy.timer(&mut self.ctx, fired);
        let units = self.ctx.cpus[c].pending_work - owed_before;
        self.ctx.cpus[c].pending_work = owed_before;
        Some((cpu, self.work_ns(c, units)))
    }

    /// Handle an event the core owns (ticks and policy timers); false for any other.
    /// Without an engine there is no task program for an interrupt to delay, so a timer
    /// callback's work costs nothing here.
    pub(crate) fn handle_event(&mut self, kind: EventKind) -> bool {
        match kind {
            EventKind::Tick { cpu } => self.tick(cpu),
            EventKind::PolicyTimer { slot, gen } => {
                self.fire_timer(slot, gen);
            }
            _ => return false,
        }
        true
    }

    // ------------------------------------------------------------------ schedule()

    /// The next CPU that asked to reschedule (`need_resched`), cleared; `None` when none
    /// is pending.
    #[inline]
    pub fn take_resched(&mut self) -> Option<CpuId> {
        let cpu = self.ctx.resched_mask.first()?;
        self.ctx.resched_mask.clear(cpu);
        Some(cpu)
    }

    /// Drop every pending reschedule request (for drivers that reschedule on their own).
    pub fn clear_resched(&mut self) {
        self.ctx.resched_mask = CpuMask::empty();
    }

    /// `__schedule()` on `cpu`: `update_curr`, `put_prev` of the current task (unless an
    /// attribute change already put it), `pick_next` (with a newidle `balance` and a
    /// second pick when it finds nothing), the context switch, `task_exit` of a task that
    /// exited on this CPU, and the balance callbacks. Panics (debug) if the policy picks a
    /// task that is not queued on `cpu`.
    pub fn schedule(&mut self, cpu: CpuId) -> Switch {
        let c = cpu.idx();
        self.ctx.charge_cpu = c;
        let prev = self.ctx.cpus[c].curr;
        if let Some(p) = prev {
            self.account(cpu);
            if !std::mem::replace(&mut self.prev_put[c], false) {
                self.policy.put_prev(&mut self.ctx, cpu, p);
            }
        }
        self.decisions += 1;
        self.ctx.cpus[c].pending_decisions += 1;
        let mut next = self.policy.pick_next(&mut self.ctx, cpu);
        if next.is_none() {
            self.policy
                .balance(&mut self.ctx, cpu, BalanceKind::NewIdle);
            self.decisions += 1;
            next = self.policy.pick_next(&mut self.ctx, cpu);
        }
        if let Some(n) = next {
            debug_assert!(
                self.ctx.tasks[n.idx()].on_rq,
                "picked {n:?} which is not queued"
            );
            debug_assert_eq!(
                self.ctx.tasks[n.idx()].cpu,
                cpu,
                "picked {n:?} queued elsewhere"
            );
        }
        let sw = Switch { prev, next };
        if sw.switched() {
            self.context_switch(cpu, prev, next);
        } else if let Some(n) = next {
            // Picked again (`set_next_task` after an attribute change, or no change).
            self.ctx.tasks[n.idx()].running = true;
        }
        if let Some(d) = self.dead[c].take() {
            self.policy.task_exit(&mut self.ctx, d);
        }
        self.run_balance_callbacks(cpu);
        sw
    }

    fn context_switch(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let c = cpu.idx();
        let now = self.ctx.now;
        if let Some(p) = prev {
            self.ctx.tasks[p.idx()].running = false;
        } else {
            let cs = &mut self.ctx.cpus[c];
            cs.idle_ns += now - cs.idle_since;
        }
        self.ctx.cpus[c].switches += 1;
        if self.ctx.tracer.enabled() {
            self.trace_switch(cpu, prev, next);
        }
        match next {
            Some(n) => {
                let overhead = self.switch_cost(n) + self.sched_work_cost(c);
                let cs = &mut self.ctx.cpus[c];
                cs.curr = Some(n);
                cs.seg_start = now;
                cs.overhead_left = overhead;
                self.ctx.tasks[n.idx()].running = true;
                self.arm_tick(cpu);
            }
            None => {
                let cs = &mut self.ctx.cpus[c];
                cs.curr = None;
                cs.idle_since = now;
                cs.overhead_left = 0;
            }
        }
    }

    /// The CPU time the switch into `next` costs it.
    #[inline]
    fn switch_cost(&mut self, next: TaskId) -> u64 {
        let c = &self.costs;
        let Some(spread) = c.switch_spread else {
            return c.context_switch_ns;
        };
        let counters = &mut self.ctx.counters[next.idx()];
        let index = counters.switch_draws;
        counters.switch_draws += 1;
        let (min, key) = (c.context_switch_ns, CostKey::ContextSwitch);
        draw(min, Some(spread), c.seed, key, next.idx() as u64, index)
    }

    /// Cost model: the CPU time owed for the scheduler work counted and the decisions
    /// taken on CPU `c` since its last switch (zero, and nothing owed, when the model
    /// charges neither).
    fn sched_work_cost(&mut self, c: usize) -> u64 {
        let cs = &mut self.ctx.cpus[c];
        let decisions = std::mem::take(&mut cs.pending_decisions);
        let fixed = decisions.saturating_mul(self.costs.sched_decision_ns);
        if self.costs.sched_work_ps == 0 {
            // Nothing per unit: nothing is owed for them and no remainder is ever carried.
            cs.pending_work = 0;
            return fixed;
        }
        let units = std::mem::take(&mut cs.pending_work);
        fixed + self.work_ns(c, units)
    }

    /// The CPU time of `units` of scheduler work done on CPU `c` under the cost model,
    /// carrying the sub-nanosecond remainder to the CPU's next charge.
    fn work_ns(&mut self, c: usize, units: u64) -> u64 {
        let cs = &mut self.ctx.cpus[c];
        let ps = units.saturating_mul(self.costs.sched_work_ps) + cs.work_carry_ps;
        cs.work_carry_ps = ps % 1000;
        ps / 1000
    }

    /// Run the balance callbacks queued on `cpu` (`__balance_callbacks`).
    fn run_balance_callbacks(&mut self, cpu: CpuId) {
        let classes = std::mem::take(&mut self.ctx.cpus[cpu.idx()].callbacks);
        if !classes.is_empty() {
            self.ctx.charge_cpu = cpu.idx();
            self.policy.balance_callback(&mut self.ctx, cpu, classes);
        }
    }

    /// sched_switch, and the dynamic priorities of both tasks as counters when they moved.
    fn trace_switch(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let now = self.ctx.now;
        let state = prev.map_or(PrevState::Runnable, |p| {
            let v = &self.ctx.tasks[p.idx()];
            if v.exited {
                PrevState::Dead
            } else if v.on_rq {
                PrevState::Preempted
            } else {
                v.sleep_state
            }
        });
        let pprio = prev.map_or(120, |p| self.ctx.tasks[p.idx()].attrs.prio());
        let nprio = next.map_or(120, |n| self.ctx.tasks[n.idx()].attrs.prio());
        self.ctx
            .tracer
            .switch(now, cpu, prev, pprio, state, next, nprio);
        for t in [prev, next].into_iter().flatten() {
            if let Some((name, v)) = self.policy.dynamic_prio(t) {
                // A counter track only needs a sample when the value moves.
                if self.traced_dprio[t.idx()] != Some(v) {
                    self.traced_dprio[t.idx()] = Some(v);
                    self.ctx.tracer.counter(now, cpu, next, t, name, v);
                }
            }
        }
    }

    // ------------------------------------------------------------------ without an engine

    /// Set the clock (drivers without an event loop). Time must not go backwards.
    pub fn set_now(&mut self, now: Time) {
        debug_assert!(now >= self.ctx.now, "time went backwards");
        self.ctx.now = now;
    }

    /// Reschedule every CPU that asked for it, until none does.
    pub fn process_resched(&mut self) {
        while let Some(cpu) = self.take_resched() {
            self.schedule(cpu);
        }
    }

    /// Advance the clock to `to`, handling ticks and policy timers on the way (each
    /// followed by the reschedules it asked for), as a machine whose tasks only compute:
    /// running tasks consume CPU time until the caller blocks them. Events other than
    /// ticks and timers must not be pending (drivers without an engine create none).
    pub fn run_until(&mut self, to: Time) {
        self.process_resched();
        while let Some(time) = self.ctx.events.peek_time() {
            if time > to {
                break;
            }
            let ev = self.ctx.events.pop().expect("peeked");
            self.ctx.now = ev.time.max(self.ctx.now);
            let handled = self.handle_event(ev.kind);
            debug_assert!(handled, "an engine event in a bare core: {:?}", ev.kind);
            self.process_resched();
        }
        self.ctx.now = to.max(self.ctx.now);
        for c in 0..self.ctx.nr_cpus() {
            self.account(CpuId(c as u32));
        }
    }
}

/// Tools for policy tests built on the core: a wrapper that shows every hook call to an
/// observer, and a driver of random operations with the checks every policy must pass.
#[doc(hidden)]
pub mod testing {
    use super::SchedCore;
    use crate::ctx::Ctx;
    use crate::sched::{
        BalanceKind, ClassSet, DequeueKind, EnqueueKind, Feature, FiredTimer, PolicyInfo,
        Scheduler, WakeKind,
    };
    use crate::trace::writer::PrevState;
    use crate::types::{CpuId, CpuMask, GroupId, SchedAttrs, TaskId};

    /// One call of a policy hook that can change its state (queries are not shown).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Hook {
        TaskNew(TaskId),
        TaskExit(TaskId),
        SelectCpu(TaskId, WakeKind),
        Enqueue(CpuId, TaskId, EnqueueKind),
        Dequeue(CpuId, TaskId, DequeueKind),
        WakeupPreempt(CpuId, TaskId),
        PutPrev(CpuId, TaskId),
        PickNext(CpuId),
        UpdateCurr(CpuId, TaskId),
        Tick(CpuId, TaskId),
        YieldTask(CpuId, TaskId),
        PrioChanged(TaskId),
        TaskChangeGroup(TaskId),
        Balance(CpuId, BalanceKind),
        Timer,
        BalanceCallback(CpuId),
    }

    impl Hook {
        /// The hook's name as the calling-protocol table of `sched.rs` writes it, with the
        /// kind of an enqueue, dequeue, select_cpu or balance in parentheses.
        pub fn name(&self) -> String {
            match self {
                Hook::TaskNew(_) => "task_new".into(),
                Hook::TaskExit(_) => "task_exit".into(),
                Hook::SelectCpu(_, k) => format!("select_cpu({k:?})"),
                Hook::Enqueue(_, _, k) => format!("enqueue({k:?})"),
                Hook::Dequeue(_, _, k) => format!("dequeue({k:?})"),
                Hook::WakeupPreempt(..) => "wakeup_preempt".into(),
                Hook::PutPrev(..) => "put_prev".into(),
                Hook::PickNext(_) => "pick_next".into(),
                Hook::UpdateCurr(..) => "update_curr".into(),
                Hook::Tick(..) => "tick".into(),
                Hook::YieldTask(..) => "yield_task".into(),
                Hook::PrioChanged(_) => "prio_changed".into(),
                Hook::TaskChangeGroup(_) => "task_change_group".into(),
                Hook::Balance(_, k) => format!("balance({k:?})"),
                Hook::Timer => "timer".into(),
                Hook::BalanceCallback(_) => "balance_callback".into(),
            }
        }
    }

    /// Sees every hook call of an [`Observed`] policy, before and after it runs.
    pub trait Observer<S> {
        fn before(&mut self, hook: Hook, policy: &S, ctx: &Ctx) {
            let _ = (hook, policy, ctx);
        }
        fn after(&mut self, hook: Hook, policy: &S, ctx: &Ctx) {
            let _ = (hook, policy, ctx);
        }
    }

    /// An observer that keeps the hook calls in order.
    #[derive(Default)]
    pub struct Recorder {
        pub hooks: Vec<Hook>,
    }

    impl<S> Observer<S> for Recorder {
        fn before(&mut self, hook: Hook, _policy: &S, _ctx: &Ctx) {
            self.hooks.push(hook);
        }
    }

    /// `inner` with every hook call shown to `observer`.
    pub struct Observed<S, O> {
        pub inner: S,
        pub observer: O,
    }

    impl<S: Scheduler, O: Observer<S>> Observed<S, O> {
        pub fn new(inner: S, observer: O) -> Self {
            Observed { inner, observer }
        }

        fn around<R>(
            &mut self,
            ctx: &mut Ctx,
            hook: Hook,
            f: impl FnOnce(&mut S, &mut Ctx) -> R,
        ) -> R {
            self.observer.before(hook, &self.inner, ctx);
            let r = f(&mut self.inner, ctx);
            self.observer.after(hook, &self.inner, ctx);
            r
        }
    }

    impl<S: Scheduler, O: Observer<S>> Scheduler for Observed<S, O> {
        fn info(&self) -> PolicyInfo {
            self.inner.info()
        }
        fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
            self.inner.set_param(name, value)
        }
        fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
            self.inner.accepts(attrs)
        }
        fn models(&self, feature: Feature) -> Result<(), String> {
            self.inner.models(feature)
        }
        fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
            self.around(ctx, Hook::TaskNew(t), |s, ctx| s.task_new(ctx, t, parent))
        }
        fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
            self.around(ctx, Hook::TaskExit(t), |s, ctx| s.task_exit(ctx, t))
        }
        fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
            self.around(ctx, Hook::SelectCpu(t, kind), |s, ctx| {
                s.select_cpu(ctx, t, prev, kind)
            })
        }
        fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
            self.around(ctx, Hook::Enqueue(cpu, t, kind), |s, ctx| {
                s.enqueue(ctx, cpu, t, kind)
            })
        }
        fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
            self.around(ctx, Hook::Dequeue(cpu, t, kind), |s, ctx| {
                s.dequeue(ctx, cpu, t, kind)
            })
        }
        fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
            self.around(ctx, Hook::WakeupPreempt(cpu, t), |s, ctx| {
                s.wakeup_preempt(ctx, cpu, t)
            })
        }
        fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
            self.around(ctx, Hook::PutPrev(cpu, t), |s, ctx| s.put_prev(ctx, cpu, t))
        }
        fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
            self.around(ctx, Hook::PickNext(cpu), |s, ctx| s.pick_next(ctx, cpu))
        }
        fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
            self.around(ctx, Hook::UpdateCurr(cpu, t), |s, ctx| {
                s.update_curr(ctx, cpu, t, delta_ns)
            })
        }
        fn can_stop_tick(&self, ctx: &Ctx, cpu: CpuId) -> bool {
            self.inner.can_stop_tick(ctx, cpu)
        }
        fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
            self.around(ctx, Hook::Tick(cpu, t), |s, ctx| s.tick(ctx, cpu, t))
        }
        fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
            self.around(ctx, Hook::YieldTask(cpu, t), |s, ctx| {
                s.yield_task(ctx, cpu, t)
            })
        }
        fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
            self.around(ctx, Hook::PrioChanged(t), |s, ctx| {
                s.prio_changed(ctx, t, old)
            })
        }
        fn task_change_group(&mut self, ctx: &mut Ctx, t: TaskId, from: GroupId) {
            self.around(ctx, Hook::TaskChangeGroup(t), |s, ctx| {
                s.task_change_group(ctx, t, from)
            })
        }
        fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
            self.around(ctx, Hook::Balance(cpu, kind), |s, ctx| {
                s.balance(ctx, cpu, kind)
            })
        }
        fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
            self.around(ctx, Hook::Timer, |s, ctx| s.timer(ctx, timer))
        }
        fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, classes: ClassSet) {
            self.around(ctx, Hook::BalanceCallback(cpu), |s, ctx| {
                s.balance_callback(ctx, cpu, classes)
            })
        }
        fn is_throttled(&self, t: TaskId) -> bool {
            self.inner.is_throttled(t)
        }
        fn cfs_bandwidth(&self, g: GroupId) -> Option<crate::sched::CfsBandwidthStats> {
            self.inner.cfs_bandwidth(g)
        }
        fn dl_throttles(&self, t: TaskId) -> Option<u64> {
            self.inner.dl_throttles(t)
        }
        fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
            self.inner.dynamic_prio(t)
        }
        fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
            self.inner.timeslice_ns(attrs, hz)
        }
        fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
            self.inner.for_each_queued(f)
        }
    }

    /// The CPUs whose bits are set in `bits` (bit `c` = CPU `c`); property tests draw
    /// affinities this way ([`Driver::new`] turns an empty or out-of-machine mask into all
    /// CPUs).
    pub fn mask_of_bits(bits: u32) -> CpuMask {
        let mut m = CpuMask::empty();
        for c in 0..32 {
            if bits & (1 << c) != 0 {
                m.set(CpuId(c));
            }
        }
        m
    }

    /// A random operation of a property test.
    #[derive(Clone, Copy, Debug)]
    pub enum Op {
        /// Wake task `i % tasks` (its first wake-up is `wake_up_new_task`); nothing if it
        /// is runnable already.
        Wake(usize),
        /// Let time pass: every CPU's current task runs this many ns.
        Advance(u64),
        /// The current task of CPU `c % cpus` blocks.
        Block(usize),
        /// The current task of CPU `c % cpus` blocks and is woken at the same instant,
        /// before its CPU switches away (`ttwu_runnable`).
        Bounce(usize),
        /// The current task of CPU `c % cpus` yields.
        Yield(usize),
        /// Every busy CPU takes its tick.
        Tick,
        /// The current task of CPU `c % cpus` changes its attributes (refused ones are
        /// skipped).
        Change(usize, SchedAttrs),
    }

    /// The random operations and attributes the policies' property tests draw.
    #[cfg(feature = "testing")]
    pub mod strategies {
        use super::{mask_of_bits, Op};
        use crate::types::{fair, rt, CpuMask, Policy, SchedAttrs};
        use proptest::prelude::*;

        /// Attributes of one of `policies`: a fair policy's nice in -20..=19, an RT
        /// policy's priority in 1..=99.
        pub fn attrs_among(
            policies: &'static [Policy],
        ) -> impl Strategy<Value = SchedAttrs> + Clone {
            (0..policies.len(), 0i32..1000).prop_map(move |(k, v)| match policies[k] {
                p @ (Policy::Fifo | Policy::Rr) => rt(p, v % 99 + 1),
                p => fair(p, v % 40 - 20),
            })
        }

        /// One to nine tasks for [`super::Driver`], with attributes drawn from `attrs` and
        /// affinities among the first four CPUs (never empty).
        pub fn tasks(
            attrs: impl Strategy<Value = SchedAttrs> + Clone + 'static,
        ) -> impl Strategy<Value = Vec<(SchedAttrs, CpuMask)>> {
            proptest::collection::vec(
                (attrs, 1u32..16).prop_map(|(a, m)| (a, mask_of_bits(m))),
                1..10,
            )
        }

        /// Random operations for [`super::Driver`]: wake-ups of up to ten tasks, clock
        /// advances of up to `max_advance_ns`, blocks, bounces, yields and ticks on up to
        /// four CPUs, and changes to attributes drawn from `attrs`.
        pub fn ops(
            max_advance_ns: u64,
            attrs: impl Strategy<Value = SchedAttrs> + Clone + 'static,
        ) -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => (0usize..10).prop_map(Op::Wake),
                3 => (1..max_advance_ns).prop_map(Op::Advance),
                2 => (0usize..4).prop_map(Op::Block),
                1 => (0usize..4).prop_map(Op::Bounce),
                1 => (0usize..4).prop_map(Op::Yield),
                3 => Just(Op::Tick),
                1 => (0usize..4, attrs).prop_map(|(c, a)| Op::Change(c, a)),
            ]
        }
    }

    /// Drives a [`SchedCore`] through [`Op`]s, every task a CPU hog; each operation ends
    /// with the reschedules it asked for.
    pub struct Driver<S: Scheduler> {
        pub core: SchedCore<S>,
        started: Vec<bool>,
    }

    impl<S: Scheduler> Driver<S> {
        /// `policy` on `nr_cpus` CPUs at `hz`, with one task per (attributes, affinity)
        /// created (`task_new`) but not woken.
        pub fn new(policy: S, nr_cpus: usize, hz: u32, tasks: &[(SchedAttrs, CpuMask)]) -> Self {
            let mut core = SchedCore::bare(policy, nr_cpus, hz);
            let all = CpuMask::first_n(nr_cpus);
            for &(attrs, aff) in tasks {
                let aff = aff.and(&all);
                core.spawn(attrs, if aff.is_empty() { all } else { aff }, None);
            }
            Driver {
                core,
                started: vec![false; tasks.len()],
            }
        }

        fn cpu(&self, c: usize) -> CpuId {
            CpuId((c % self.core.ctx.nr_cpus()) as u32)
        }

        /// Apply one operation (see [`Op`]).
        pub fn apply(&mut self, op: Op) {
            let n = self.started.len();
            match op {
                Op::Wake(i) if n > 0 => self.wake(TaskId((i % n) as u32)),
                Op::Wake(_) => {}
                Op::Advance(dt) => {
                    let now = self.core.ctx.now() + dt;
                    self.core.set_now(now);
                    for c in 0..self.core.ctx.nr_cpus() {
                        self.core.account(CpuId(c as u32));
                    }
                }
                Op::Block(c) => {
                    let cpu = self.cpu(c);
                    if self.core.ctx.curr(cpu).is_some() {
                        self.core.block(cpu, PrevState::Sleeping);
                    }
                }
                Op::Bounce(c) => {
                    let cpu = self.cpu(c);
                    if self.core.ctx.curr(cpu).is_some() {
                        let t = self.core.block(cpu, PrevState::Sleeping);
                        self.wake(t);
                    }
                }
                Op::Yield(c) => {
                    let cpu = self.cpu(c);
                    if self.core.ctx.curr(cpu).is_some() {
                        self.core.yield_current(cpu);
                    }
                }
                Op::Tick => {
                    for c in 0..self.core.ctx.nr_cpus() {
                        self.core.tick(CpuId(c as u32));
                    }
                }
                Op::Change(c, attrs) => {
                    let cpu = self.cpu(c);
                    if let Some(t) = self.core.ctx.curr(cpu) {
                        let _refused = self.core.setattr(t, Some(attrs), None);
                    }
                }
            }
            self.core.process_resched();
        }

        /// Wake `t` if it is not runnable: `wake_up_new_task` the first time, else
        /// `try_to_wake_up`.
        pub fn wake(&mut self, t: TaskId) {
            if self.core.ctx.task(t).on_rq {
                return;
            }
            let placed = if std::mem::replace(&mut self.started[t.idx()], true) {
                self.core.try_to_wake_up(t, None, false)
            } else {
                self.core.wake_up_new_task(t, None)
            };
            placed.expect("the policy placed a task outside its affinity");
        }

        /// Applies `ops` one by one, checking the invariants ([`Driver::check`]) after
        /// each.
        pub fn apply_checked(&mut self, ops: impl IntoIterator<Item = Op>) {
            for op in ops {
                self.apply(op);
                self.check();
            }
        }

        /// The checks every policy must pass after every operation: its queues hold each
        /// runnable task that is not running exactly once (the running one at most once),
        /// on the CPU the core assigned it to, within its affinity; a CPU's current task is
        /// runnable and runs nowhere else; no CPU idles while a task queued on it waits.
        pub fn check(&self) {
            let ctx = &self.core.ctx;
            let mut seen = vec![0u32; ctx.nr_tasks()];
            self.core.policy.for_each_queued(&mut |cpu, t| {
                seen[t.idx()] += 1;
                let v = ctx.task(t);
                assert!(v.on_rq, "{t:?} is queued but not runnable");
                assert_eq!(v.cpu, cpu, "{t:?} is queued on the wrong CPU");
                assert!(
                    v.affinity.contains(cpu),
                    "{t:?} is queued outside its affinity"
                );
            });
            for (i, &times) in seen.iter().enumerate() {
                let t = TaskId(i as u32);
                let v = ctx.task(t);
                if v.running {
                    assert!(times <= 1, "running {t:?} is queued {times} times");
                    assert_eq!(
                        ctx.curr(v.cpu),
                        Some(t),
                        "{t:?} runs where it is not current"
                    );
                    assert!(v.on_rq, "{t:?} runs but is not runnable");
                } else {
                    let want = u32::from(v.on_rq);
                    assert_eq!(
                        times, want,
                        "{t:?} (runnable: {}) is queued {times} times",
                        v.on_rq
                    );
                    if v.on_rq && !self.core.policy.is_throttled(t) {
                        assert!(ctx.curr(v.cpu).is_some(), "{t:?} waits on an idle CPU");
                    }
                }
            }
        }
    }
}

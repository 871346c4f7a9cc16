//! The run loop: events in (time, sequence) order, task programs stepped on their CPUs,
//! wake-ups and blocking, and the scheduler hooks called in the kernel's order.
//!
//! Invariants (checked after every event under `--check`, and in debug builds — see
//! `check.rs`): a task is in at most one place (running on one CPU, or queued on one CPU,
//! or blocked, or exited); CPU time is conserved exactly (busy + idle = elapsed, and task
//! CPU time + switch overhead = busy); affinity is respected; channel bytes balance.
//!
//! The hot loop allocates nothing per event: events are `Copy` values in a `BinaryHeap`
//! that only grows to the workload's steady-state size; stale events (a completion whose
//! task was preempted) are skipped by generation number instead of being removed.

use schedlab_spec::model::{Event as Op, Policy, Spec, TimerMode};

use crate::ctx::{Ctx, TaskCounters, TaskView};
use crate::event::EventKind;
use crate::metrics::{ActKind, Metrics};
use crate::program::{mask_of, Advance, Cursor, Template};
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, Scheduler, WakeFlags, WakeKind};
use crate::sync::{Barrier, Channel, Cond, Mutex};
use crate::trace::writer::PrevState;
use crate::types::{CpuId, CpuMask, SchedAttrs, TaskId, Time};

/// Why a task is blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    Sleep,
    Timer,
    Mutex,
    Cond,
    Barrier,
    Read,
    Write,
    Suspend,
    /// Created, waiting for its start `delay` (nothing may wake it early).
    NotStarted,
}

/// A task's engine state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TState {
    /// Queued, not running.
    Runnable,
    /// Current task of its CPU.
    Running,
    Blocked(Block),
    Exited,
}

/// Progress inside the current op (ops that take CPU time or span several wake-ups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The op has not started.
    Fresh,
    /// Consuming CPU time (`remaining` ns left) before the op's effect (`then_effect`).
    Burst,
    /// A `runtime` op running until `until`.
    Until(Time),
    /// A channel transfer with `xfer_left` bytes to go (its CPU cost is paid).
    Transfer,
}

/// Per-task engine state beside the policy-visible [`TaskView`].
#[derive(Clone, Debug)]
pub(crate) struct TaskRt {
    pub tmpl: u32,
    pub name: String,
    pub cursor: Cursor,
    pub state: TState,
    pub stage: Stage,
    /// CPU time left in the current burst.
    pub remaining: u64,
    pub xfer_left: u64,
    /// Generation of the pending Wake event (sleep/timer); others are stale.
    pub wake_gen: u64,
    /// Next expiry of each rt-app "unique" timer (one copy per task; u64::MAX = unused).
    pub timers: Vec<Time>,
    /// When the task started (rt-app anchors timers at the instance's start).
    pub started_at: Time,
    /// Period of the timer that released the current activation (for deadlines).
    pub since: Time,
    /// A new phase begins with its next op: apply the phase's attributes first.
    pub phase_pending: bool,
    /// The dynamic priority last written to the trace as a counter.
    pub traced_dprio: Option<i64>,
    /// The mutex a condvar wait releases and re-acquires.
    pub cond_mutex: u32,
    /// Woken from a condvar: re-acquire `cond_mutex` before the next op.
    pub reacquire: bool,
    pub wait_ns: u64,
    pub sleep_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

/// Run configuration after the spec and command line are merged.
#[derive(Clone, Debug)]
pub(crate) struct RunCfg {
    pub end: Option<Time>,
    pub context_switch_ns: u64,
    /// Cost model: picoseconds of CPU charged per counted unit of scheduler work.
    pub sched_work_ps: u64,
    pub fork_ns: u64,
    pub wakeup_ns: u64,
    pub check: bool,
}

/// Why a run stopped early.
#[derive(Debug)]
pub(crate) struct RunError(pub String);

/// A zero-time loop that runs longer than this at one instant is a workload bug
/// (e.g. a loop of only `signal` events): the run stops with an error instead of hanging.
const MAX_ZERO_TIME_STEPS: u32 = 1_000_000;

pub(crate) struct Engine<S: Scheduler> {
    pub ctx: Ctx,
    pub policy: S,
    pub templates: Vec<Template>,
    pub rt: Vec<TaskRt>,
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    pub channels: Vec<Channel>,
    pub nr_timers: usize,
    /// Per timer: rt-app "unique" (per task) or shared by every task that names it.
    timer_unique: Vec<bool>,
    /// Next expiry of each shared timer (u64::MAX = unused so far).
    shared_timers: Vec<Time>,
    pub metrics: Metrics,
    pub cfg: RunCfg,
    pub events: u64,
    pub decisions: u64,
    /// Per-CPU: a completion event for the current burst is pending.
    burst_armed: Vec<bool>,
    /// Per-CPU: the current task was already put_prev'd (attribute change) this instant.
    prev_put: Vec<bool>,
    /// Instances created per template (for names and `resume`).
    pub instances: Vec<Vec<TaskId>>,
    /// Scratch buffer for waking several tasks without allocating.
    scratch: Vec<TaskId>,
    /// Threads of one named process share a tgid.
    process_tgid: Vec<(String, u32)>,
    pub live_tasks: usize,
    pub last_exit: Option<Time>,
    zero_steps: u32,
    pub error: Option<RunError>,
}

impl<S: Scheduler> Engine<S> {
    pub fn new(spec: &Spec, ctx: Ctx, policy: S, cfg: RunCfg, collect_samples: bool) -> Self {
        let templates = crate::program::compile(spec);
        let nr_cpus = ctx.nr_cpus();
        let r = &spec.resources;
        Engine {
            ctx,
            policy,
            instances: vec![Vec::new(); templates.len()],
            templates,
            rt: Vec::new(),
            mutexes: vec![Mutex::default(); r.mutexes.len()],
            conds: vec![Cond::default(); r.conds.len()],
            barriers: r
                .barriers
                .iter()
                .map(|(_, n)| Barrier {
                    needed: *n,
                    ..Barrier::default()
                })
                .collect(),
            channels: r
                .channels
                .iter()
                .map(|c| Channel {
                    capacity: c.capacity,
                    op_cost_ns: c.op_cost_ns,
                    byte_cost_ps: c.byte_cost_ps,
                    ..Channel::default()
                })
                .collect(),
            nr_timers: r.timers.len(),
            timer_unique: (0..r.timers.len())
                .map(|i| r.timer_unique.get(i).copied().unwrap_or(true))
                .collect(),
            shared_timers: vec![u64::MAX; r.timers.len()],
            metrics: Metrics::new(r.marks.len(), collect_samples),
            cfg,
            events: 0,
            decisions: 0,
            burst_armed: vec![false; nr_cpus],
            prev_put: vec![false; nr_cpus],
            scratch: Vec::with_capacity(64),
            process_tgid: Vec::new(),
            live_tasks: 0,
            last_exit: None,
            zero_steps: 0,
            error: None,
        }
    }

    // ------------------------------------------------------------------ set-up

    /// Create the start-up instances of every template (at time 0 or after their delay).
    pub fn start(&mut self, spec: &Spec) {
        for (ti, t) in spec.tasks.iter().enumerate() {
            for _ in 0..t.instances {
                let attrs = attrs_of(&t.attr);
                let aff = self.affinity_of(t.cpus.as_deref());
                let id = self.create_task(ti as u32, attrs, aff, None);
                if t.delay_ns == 0 {
                    self.wake_new(id, None);
                } else {
                    self.ctx.push(t.delay_ns, EventKind::Start { task: id });
                }
            }
        }
    }

    fn affinity_of(&self, cpus: Option<&[u32]>) -> CpuMask {
        let all = CpuMask::first_n(self.ctx.nr_cpus());
        match cpus {
            Some(c) => mask_of(c).and(&all),
            None => all,
        }
    }

    fn instance_name(&self, tmpl: u32) -> String {
        let base = &self.templates[tmpl as usize].name;
        let n = self.instances[tmpl as usize].len();
        if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        }
    }

    fn tgid_for(&mut self, tmpl: u32, pid: u32) -> u32 {
        match &self.templates[tmpl as usize].process {
            None => pid,
            Some(p) => {
                if let Some((_, g)) = self.process_tgid.iter().find(|(n, _)| n == p) {
                    *g
                } else {
                    self.process_tgid.push((p.clone(), pid));
                    pid
                }
            }
        }
    }

    /// Create a task (not yet runnable); calls the policy's `task_new`.
    fn create_task(
        &mut self,
        tmpl: u32,
        attrs: SchedAttrs,
        affinity: CpuMask,
        parent: Option<TaskId>,
    ) -> TaskId {
        let id = TaskId(self.rt.len() as u32);
        if id.0 as u64 > crate::event::MAX_EVENT_ID {
            self.error = Some(RunError(format!(
                "more than {} tasks: the simulator's limit (a fork bomb?)",
                crate::event::MAX_EVENT_ID
            )));
        }
        let cpu = match parent {
            Some(p) if affinity.contains(self.ctx.tasks[p.idx()].cpu) => {
                self.ctx.tasks[p.idx()].cpu
            }
            _ => affinity.first().unwrap_or(CpuId(0)),
        };
        let name = self.instance_name(tmpl);
        self.instances[tmpl as usize].push(id);
        self.ctx.tasks.push(TaskView {
            attrs,
            affinity,
            cpu,
            sum_exec_ns: 0,
            parent,
            on_rq: false,
            running: false,
            exited: false,
        });
        self.ctx.counters.push(TaskCounters::default());
        let tgid = self.tgid_for(tmpl, id.pid());
        self.ctx.tracer.register_task(id, &name, tgid);
        self.rt.push(TaskRt {
            tmpl,
            name,
            cursor: Cursor::default(),
            state: TState::Blocked(Block::NotStarted),
            stage: Stage::Fresh,
            remaining: 0,
            xfer_left: 0,
            wake_gen: 0,
            timers: vec![u64::MAX; self.nr_timers],
            started_at: self.ctx.now,
            since: self.ctx.now,
            phase_pending: false,
            traced_dprio: None,
            cond_mutex: 0,
            reacquire: false,
            wait_ns: 0,
            sleep_ns: 0,
            voluntary: 0,
            involuntary: 0,
        });
        self.metrics.add_task();
        self.live_tasks += 1;
        if let Some(first) = self.templates[tmpl as usize].phases.first() {
            self.apply_phase_attrs_initial(id, first.attr.clone(), first.cpus);
        }
        self.policy.task_new(&mut self.ctx, id, parent);
        id
    }

    fn apply_phase_attrs_initial(
        &mut self,
        t: TaskId,
        attr: Option<schedlab_spec::model::SchedAttr>,
        cpus: Option<CpuMask>,
    ) {
        if let Some(a) = attr {
            self.ctx.tasks[t.idx()].attrs = attrs_of(&a);
        }
        if let Some(m) = cpus {
            let m = m.and(&CpuMask::first_n(self.ctx.nr_cpus()));
            if !m.is_empty() {
                self.ctx.tasks[t.idx()].affinity = m;
                if !m.contains(self.ctx.tasks[t.idx()].cpu) {
                    self.ctx.tasks[t.idx()].cpu = m.first().unwrap();
                }
            }
        }
    }

    // ------------------------------------------------------------------ the loop

    /// Run until the end time, or until no event is left.
    pub fn run(&mut self) {
        self.process_resched();
        while let Some(time) = self.ctx.events.peek_time() {
            if self.cfg.end.is_some_and(|end| time > end) {
                break;
            }
            let ev = self.ctx.events.pop().expect("peeked");
            debug_assert!(ev.time >= self.ctx.now, "time went backwards");
            if ev.time != self.ctx.now {
                self.zero_steps = 0;
            }
            self.ctx.now = ev.time;
            self.events += 1;
            self.handle(ev.kind);
            self.process_resched();
            if self.error.is_some() {
                return;
            }
            if self.cfg.check || (cfg!(debug_assertions) && self.cheap_to_check()) {
                if let Err(e) = crate::check::check(self) {
                    self.error = Some(RunError(format!(
                        "invariant violated at t={} ns after event {:?}: {e}",
                        self.ctx.now, ev.kind
                    )));
                    return;
                }
            }
        }
        if let Some(end) = self.cfg.end {
            if self.ctx.now < end {
                self.ctx.now = end;
            }
        }
    }

    fn cheap_to_check(&self) -> bool {
        self.rt.len() <= 128 || self.events.is_multiple_of(1024)
    }

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::Tick { cpu } => {
                self.ctx.charge_cpu = cpu.idx();
                self.on_tick(cpu)
            }
            EventKind::Complete { cpu, gen } => {
                if EventKind::wrap_gen(self.ctx.cpus[cpu.idx()].gen) == gen
                    && self.burst_armed[cpu.idx()]
                {
                    self.ctx.charge_cpu = cpu.idx();
                    self.burst_armed[cpu.idx()] = false;
                    self.account(cpu);
                    self.burst_done(cpu);
                }
            }
            EventKind::Wake { task, gen } => {
                if EventKind::wrap_gen(self.rt[task.idx()].wake_gen) == gen {
                    if let TState::Blocked(b @ (Block::Sleep | Block::Timer)) =
                        self.rt[task.idx()].state
                    {
                        let kind = if b == Block::Timer {
                            ActKind::Timer
                        } else {
                            ActKind::Sleep
                        };
                        self.metrics.release(task, self.ctx.now, kind);
                        self.make_runnable(task, None, false);
                    }
                }
            }
            EventKind::Start { task } => self.wake_new(task, None),
            EventKind::PolicyTimer { token } => self.policy.timer(&mut self.ctx, token),
        }
    }

    fn on_tick(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        self.ctx.cpus[c].tick_armed = false;
        let Some(t) = self.ctx.cpus[c].curr else {
            return;
        };
        self.account(cpu);
        self.policy.tick(&mut self.ctx, cpu, t);
        self.policy.balance(&mut self.ctx, cpu, BalanceKind::Tick);
        self.arm_tick(cpu);
    }

    /// Arm the next tick of a busy CPU on the global tick grid (ticks are aligned across
    /// CPUs). Idle CPUs take none (NO_HZ idle), nor do busy CPUs whose policy says the
    /// tick would change nothing (NO_HZ full, `sched_can_stop_tick`).
    fn arm_tick(&mut self, cpu: CpuId) {
        if self.ctx.cpus[cpu.idx()].tick_armed
            || self.ctx.cpus[cpu.idx()].curr.is_none()
            || self.policy.can_stop_tick(&self.ctx, cpu)
        {
            return;
        }
        let c = &mut self.ctx.cpus[cpu.idx()];
        c.tick_armed = true;
        let tick = self.ctx.tick_ns;
        let next = (self.ctx.now / tick + 1) * tick;
        self.ctx.push(next, EventKind::Tick { cpu });
    }

    /// Run put_prev/pick_next on every CPU that asked for it, until none does.
    fn process_resched(&mut self) {
        while !self.ctx.resched_mask.is_empty() {
            let Some(cpu) = self.ctx.resched_mask.first() else {
                break;
            };
            self.ctx.resched_mask.clear(cpu);
            self.schedule(cpu);
            if self.error.is_some() {
                return;
            }
        }
    }

    // ------------------------------------------------------------------ accounting

    /// Charge the time since the last accounting point to `cpu`'s current task
    /// (update_curr): first any pending switch overhead, then the task's own work.
    fn account(&mut self, cpu: CpuId) {
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
        if work == 0 {
            return;
        }
        self.ctx.tasks[t.idx()].sum_exec_ns += work;
        let rt = &mut self.rt[t.idx()];
        if rt.stage == Stage::Burst {
            rt.remaining = rt.remaining.saturating_sub(work);
        }
        self.policy.update_curr(&mut self.ctx, cpu, t, work);
    }

    /// Move a task's state, charging the time spent in the old one to wait or sleep.
    fn set_state(&mut self, t: TaskId, s: TState) {
        let now = self.ctx.now;
        let rt = &mut self.rt[t.idx()];
        let spent = now - rt.since;
        match rt.state {
            TState::Runnable => rt.wait_ns += spent,
            TState::Blocked(_) => rt.sleep_ns += spent,
            _ => {}
        }
        rt.since = now;
        rt.state = s;
    }

    // ------------------------------------------------------------------ schedule()

    /// The kernel's __schedule() for one CPU: put_prev, pick_next (with a newidle
    /// balance if nothing is runnable), and the context switch.
    fn schedule(&mut self, cpu: CpuId) {
        let c = cpu.idx();
        self.ctx.charge_cpu = c;
        let prev = self.ctx.cpus[c].curr;
        if let Some(p) = prev {
            self.account(cpu);
            self.finish_due_burst(cpu, p);
            if !std::mem::replace(&mut self.prev_put[c], false) {
                self.policy.put_prev(&mut self.ctx, cpu, p);
            }
        }
        self.decisions += 1;
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
        if next == prev {
            if let Some(n) = next {
                if !self.burst_armed[c] {
                    self.dispatch(cpu);
                }
                let _ = n;
            }
            return;
        }
        self.switch(cpu, prev, next);
    }

    /// A burst that ends exactly now has done its work even if its completion event is
    /// still queued behind the event that asked for this reschedule: let the task carry on
    /// (it may block) before it is switched out, rather than preempt it with nothing left
    /// to run.
    fn finish_due_burst(&mut self, cpu: CpuId, t: TaskId) {
        let c = cpu.idx();
        if !self.burst_armed[c] || self.ctx.cpus[c].overhead_left > 0 {
            return;
        }
        let due = match self.rt[t.idx()].stage {
            Stage::Burst => self.rt[t.idx()].remaining == 0,
            Stage::Until(until) => until <= self.ctx.now,
            _ => false,
        };
        if due {
            self.burst_armed[c] = false;
            self.ctx.cpus[c].gen += 1;
            self.dispatch(cpu);
            self.ctx.resched_mask.clear(cpu);
        }
    }

    fn switch(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let c = cpu.idx();
        let now = self.ctx.now;
        let mut prev_state = PrevState::Runnable;
        if let Some(p) = prev {
            self.ctx.tasks[p.idx()].running = false;
            self.burst_armed[c] = false;
            self.ctx.cpus[c].gen += 1;
            match self.rt[p.idx()].state {
                TState::Running => {
                    self.rt[p.idx()].involuntary += 1;
                    self.set_state(p, TState::Runnable);
                    prev_state = PrevState::Preempted;
                }
                TState::Blocked(b) => {
                    prev_state = match b {
                        Block::Mutex => PrevState::Uninterruptible,
                        _ => PrevState::Sleeping,
                    }
                }
                TState::Exited => prev_state = PrevState::Dead,
                TState::Runnable => {}
            }
        } else {
            let cs = &mut self.ctx.cpus[c];
            cs.idle_ns += now - cs.idle_since;
        }
        self.ctx.cpus[c].switches += 1;
        if self.ctx.tracer.enabled() {
            self.trace_switch(cpu, prev, prev_state, next);
        }
        match next {
            Some(n) => {
                let overhead = self.cfg.context_switch_ns + self.sched_work_cost(c);
                let cs = &mut self.ctx.cpus[c];
                cs.curr = Some(n);
                cs.seg_start = now;
                cs.overhead_left = overhead;
                self.ctx.tasks[n.idx()].running = true;
                self.set_state(n, TState::Running);
                self.arm_tick(cpu);
                self.dispatch(cpu);
            }
            None => {
                let cs = &mut self.ctx.cpus[c];
                cs.curr = None;
                cs.idle_since = now;
                cs.overhead_left = 0;
            }
        }
    }

    /// Cost model: the CPU time owed for the scheduler work counted on CPU `c` since its
    /// last switch (zero, and nothing owed, when `sched_work_ps` is 0).
    fn sched_work_cost(&mut self, c: usize) -> u64 {
        let cs = &mut self.ctx.cpus[c];
        let units = std::mem::take(&mut cs.pending_work);
        let ps = units.saturating_mul(self.cfg.sched_work_ps) + cs.work_carry_ps;
        cs.work_carry_ps = ps % 1000;
        ps / 1000
    }

    fn trace_switch(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        st: PrevState,
        next: Option<TaskId>,
    ) {
        let now = self.ctx.now;
        let pprio = prev.map_or(120, |p| self.ctx.tasks[p.idx()].attrs.prio());
        let nprio = next.map_or(120, |n| self.ctx.tasks[n.idx()].attrs.prio());
        self.ctx
            .tracer
            .switch(now, cpu, prev, pprio, st, next, nprio);
        for t in [prev, next].into_iter().flatten() {
            if let Some((name, v)) = self.policy.dynamic_prio(t) {
                // A counter track only needs a sample when the value moves.
                if self.rt[t.idx()].traced_dprio != Some(v) {
                    self.rt[t.idx()].traced_dprio = Some(v);
                    self.ctx.tracer.counter(now, cpu, next, t, name, v);
                }
            }
        }
    }

    // ------------------------------------------------------------------ wake-ups

    /// wake_up_new_task: first placement of a created task.
    fn wake_new(&mut self, t: TaskId, waker_cpu: Option<CpuId>) {
        self.rt[t.idx()].started_at = self.ctx.now;
        let prev = self.ctx.tasks[t.idx()].cpu;
        self.ctx.charge_cpu = waker_cpu.unwrap_or(prev).idx();
        self.ctx.wake = WakeFlags {
            sync: false,
            waker_cpu,
        };
        let cpu = self
            .policy
            .select_cpu(&mut self.ctx, t, prev, WakeKind::Fork);
        self.place(t, prev, cpu, waker_cpu, true);
    }

    /// try_to_wake_up: make a blocked task runnable (the activation was opened by the
    /// caller with `metrics.release`).
    /// `sync`: WF_SYNC (a pipe or socket wake-up, see [`WakeFlags::sync`]).
    fn make_runnable(&mut self, t: TaskId, waker_cpu: Option<CpuId>, sync: bool) {
        let prev = self.ctx.tasks[t.idx()].cpu;
        // The waker runs try_to_wake_up; a timer's wake-up runs on the sleeper's CPU.
        self.ctx.charge_cpu = waker_cpu.unwrap_or(prev).idx();
        self.ctx.wake = WakeFlags { sync, waker_cpu };
        if self.ctx.tasks[t.idx()].running {
            // It blocked at this very instant and its CPU has not switched away yet
            // (ttwu_runnable): it is simply queued again where it is.
            self.set_state(t, TState::Running);
            self.metrics.runnable(t, self.ctx.now);
            self.ctx.tasks[t.idx()].on_rq = true;
            self.policy
                .enqueue(&mut self.ctx, prev, t, EnqueueKind::Wakeup);
            self.ctx.resched(prev);
            return;
        }
        let cpu = self
            .policy
            .select_cpu(&mut self.ctx, t, prev, WakeKind::Wakeup);
        self.place(t, prev, cpu, waker_cpu, false);
    }

    fn place(&mut self, t: TaskId, prev: CpuId, cpu: CpuId, waker_cpu: Option<CpuId>, new: bool) {
        if !self.ctx.tasks[t.idx()].affinity.contains(cpu) {
            self.error = Some(RunError(format!(
                "policy placed task {} on cpu {} outside its affinity {:?}",
                self.rt[t.idx()].name,
                cpu.0,
                self.ctx.tasks[t.idx()].affinity
            )));
            return;
        }
        if cpu != prev {
            if new {
                // wake_up_new_task uses __set_task_cpu: a first placement, not a migration.
                self.ctx.tasks[t.idx()].cpu = cpu;
            } else {
                self.ctx.set_task_cpu(t, cpu);
            }
        }
        self.set_state(t, TState::Runnable);
        self.metrics.runnable(t, self.ctx.now);
        self.ctx.tasks[t.idx()].on_rq = true;
        let kind = if new {
            EnqueueKind::New
        } else {
            EnqueueKind::Wakeup
        };
        self.policy.enqueue(&mut self.ctx, cpu, t, kind);
        if self.ctx.tracer.enabled() {
            let on_cpu = waker_cpu.unwrap_or(cpu);
            let on = self.ctx.curr(on_cpu);
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            self.ctx
                .tracer
                .wakeup(self.ctx.now, on_cpu, on, t, prio, cpu, new);
        }
        if self.ctx.cpus[cpu.idx()].curr.is_none() {
            self.ctx.resched(cpu);
        } else {
            self.account(cpu);
            self.policy.wakeup_preempt(&mut self.ctx, cpu, t);
            // One more runnable task may need the tick back (sched_update_tick_dependency).
            self.arm_tick(cpu);
        }
    }

    /// The running task of `cpu` blocks (deactivate_task with DEQUEUE_SLEEP).
    fn block(&mut self, cpu: CpuId, t: TaskId, why: Block) {
        self.ctx.tasks[t.idx()].on_rq = false;
        self.policy
            .dequeue(&mut self.ctx, cpu, t, DequeueKind::Sleep);
        self.rt[t.idx()].voluntary += 1;
        self.set_state(t, TState::Blocked(why));
        self.metrics.end(t, self.ctx.now);
        self.ctx.resched(cpu);
    }

    // ------------------------------------------------------------------ programs

    /// Step the program of `cpu`'s current task until it needs CPU time (a completion
    /// event is armed), blocks, exits, yields, or something asked for a reschedule.
    fn dispatch(&mut self, cpu: CpuId) {
        let Some(t) = self.ctx.cpus[cpu.idx()].curr else {
            return;
        };
        if self.ctx.cpus[cpu.idx()].overhead_left > 0 {
            // The context switch is still being paid: the program makes no progress (and
            // nothing it does is visible) until it is.
            return self.arm_burst(cpu, 0);
        }
        self.metrics.started(t, self.ctx.now);
        loop {
            if self.ctx.resched_mask.contains(cpu) || self.error.is_some() {
                return;
            }
            match self.rt[t.idx()].stage {
                Stage::Burst => {
                    if self.rt[t.idx()].remaining > 0 {
                        return self.arm_burst(cpu, self.rt[t.idx()].remaining);
                    }
                    self.effect(cpu, t);
                }
                Stage::Until(until) => {
                    if until > self.ctx.now {
                        return self.arm_burst(cpu, until - self.ctx.now);
                    }
                    self.next_op(cpu, t);
                }
                Stage::Fresh | Stage::Transfer => self.begin_op(cpu, t),
            }
            if self.ctx.cpus[cpu.idx()].curr != Some(t) || self.rt[t.idx()].state != TState::Running
            {
                return;
            }
            self.zero_steps += 1;
            if self.zero_steps > MAX_ZERO_TIME_STEPS {
                self.error = Some(RunError(format!(
                    "task {} makes no progress: its program loops without consuming time or blocking \
                     (add a run or sleep event)",
                    self.rt[t.idx()].name
                )));
                return;
            }
        }
    }

    /// Arm the completion of a burst of `ns` of work (after any switch overhead).
    fn arm_burst(&mut self, cpu: CpuId, ns: u64) {
        let c = &self.ctx.cpus[cpu.idx()];
        // Saturating: a `run: -1` burst (RUN_FOREVER) never completes.
        let at = self
            .ctx
            .now
            .saturating_add(c.overhead_left)
            .saturating_add(ns);
        let gen = c.gen;
        self.burst_armed[cpu.idx()] = true;
        self.ctx.push(at, EventKind::Complete { cpu, gen });
    }

    /// A completion event fired: the switch overhead or the burst is over (`account` has
    /// brought `remaining` down by the work done); carry on with the program.
    fn burst_done(&mut self, cpu: CpuId) {
        self.dispatch(cpu);
    }

    fn current_op(&self, t: TaskId) -> Option<Op> {
        let rt = &self.rt[t.idx()];
        self.templates[rt.tmpl as usize].op(&rt.cursor).cloned()
    }

    /// Start the op under the cursor: ops that cost CPU time enter `Stage::Burst` first.
    fn begin_op(&mut self, cpu: CpuId, t: TaskId) {
        if self.rt[t.idx()].reacquire {
            let m = self.rt[t.idx()].cond_mutex as usize;
            if !self.try_lock(cpu, t, m) {
                return;
            }
            self.rt[t.idx()].reacquire = false;
        }
        let Some(op) = self.current_op(t) else {
            return self.exit(cpu, t);
        };
        if std::mem::replace(&mut self.rt[t.idx()].phase_pending, false) {
            let rt = &self.rt[t.idx()];
            let p = &self.templates[rt.tmpl as usize].phases[rt.cursor.phase as usize];
            let (attr, cpus) = (p.attr.as_ref().map(attrs_of), p.cpus);
            self.change_attrs(cpu, t, attr, cpus);
            return;
        }
        let cost = match op {
            Op::Run { ns } => ns,
            Op::Runtime { ns } => {
                self.rt[t.idx()].stage = Stage::Until(self.ctx.now + ns);
                return;
            }
            Op::Read { chan, bytes } | Op::Write { chan, bytes } => {
                if self.rt[t.idx()].stage == Stage::Transfer {
                    return self.effect(cpu, t);
                }
                self.channels[chan as usize].call_cost(bytes)
            }
            Op::Fork { .. } => self.cfg.fork_ns,
            Op::Signal { .. } | Op::Broad { .. } | Op::Resume { .. } => self.cfg.wakeup_ns,
            _ => 0,
        };
        let rt = &mut self.rt[t.idx()];
        rt.stage = Stage::Burst;
        rt.remaining = cost;
        if cost == 0 {
            self.effect(cpu, t);
        }
    }

    /// Move to the next op (or exit / change phase).
    fn next_op(&mut self, cpu: CpuId, t: TaskId) {
        let rt = &mut self.rt[t.idx()];
        rt.stage = Stage::Fresh;
        let tmpl = &self.templates[rt.tmpl as usize];
        if tmpl.advance(&mut rt.cursor) == Advance::NewPhase {
            let p = &tmpl.phases[rt.cursor.phase as usize];
            rt.phase_pending = p.attr.is_some() || p.cpus.is_some();
        }
        let _ = cpu;
    }

    /// The effect of the op under the cursor, once its CPU cost is paid.
    fn effect(&mut self, cpu: CpuId, t: TaskId) {
        let Some(op) = self.current_op(t) else {
            return self.exit(cpu, t);
        };
        let now = self.ctx.now;
        match op {
            Op::Run { .. } | Op::Runtime { .. } => self.next_op(cpu, t),
            Op::Sleep { ns } => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running {
                    self.sleep_until(cpu, t, now + ns, Block::Sleep);
                }
            }
            Op::Timer {
                timer,
                period_ns,
                mode,
            } => self.timer(cpu, t, timer as usize, period_ns, mode),
            Op::Lock { mutex } => {
                if self.try_lock(cpu, t, mutex as usize) {
                    self.next_op(cpu, t);
                }
            }
            Op::Unlock { mutex } => {
                self.next_op(cpu, t);
                self.unlock(cpu, mutex as usize);
            }
            Op::Wait { cond, mutex } => {
                self.next_op(cpu, t);
                self.cond_wait(cpu, t, cond as usize, mutex as usize);
            }
            Op::Sync { cond, mutex } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, false);
                self.cond_wait(cpu, t, cond as usize, mutex as usize);
            }
            Op::Signal { cond } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, false);
            }
            Op::Broad { cond } => {
                self.next_op(cpu, t);
                self.cond_wake(cpu, cond as usize, true);
            }
            Op::Barrier { barrier } => {
                self.next_op(cpu, t);
                self.barrier(cpu, t, barrier as usize);
            }
            Op::Yield => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running {
                    self.policy.yield_task(&mut self.ctx, cpu, t);
                    self.ctx.resched(cpu);
                }
            }
            Op::Fork { task } => {
                self.next_op(cpu, t);
                self.fork(cpu, t, task);
            }
            Op::Suspend => {
                self.next_op(cpu, t);
                if self.rt[t.idx()].state == TState::Running {
                    self.block(cpu, t, Block::Suspend);
                }
            }
            Op::Resume { task } => {
                self.next_op(cpu, t);
                self.resume(cpu, task);
            }
            Op::Write { chan, bytes } => self.write(cpu, t, chan as usize, bytes),
            Op::Read { chan, bytes } => self.read(cpu, t, chan as usize, bytes),
            Op::Mark { label } => {
                self.metrics.mark(label as usize, now);
                self.next_op(cpu, t);
            }
            Op::Exit => self.exit(cpu, t),
            Op::Io { .. } => {
                self.error = Some(RunError(
                    "block I/O is not simulated by this engine yet".to_string(),
                ));
            }
        }
    }

    fn sleep_until(&mut self, cpu: CpuId, t: TaskId, at: Time, why: Block) {
        self.block(cpu, t, why);
        let rt = &mut self.rt[t.idx()];
        rt.wake_gen += 1;
        let gen = rt.wake_gen;
        self.ctx.push(at, EventKind::Wake { task: t, gen });
    }

    /// rt-app's timer (`run_event`, src/rt-app.c): anchored at the task's start (for a
    /// shared timer, the start of its first user); every use waits for the previous expiry
    /// + period (absolute), or, when that is already past, restarts from now (relative).
    fn timer(&mut self, cpu: CpuId, t: TaskId, slot: usize, period: u64, mode: TimerMode) {
        let now = self.ctx.now;
        let unique = self.timer_unique[slot];
        let prev = if unique {
            self.rt[t.idx()].timers[slot]
        } else {
            self.shared_timers[slot]
        };
        let base = if prev == u64::MAX {
            self.rt[t.idx()].started_at
        } else {
            prev
        };
        let mut next = base + period;
        if next <= now && mode == TimerMode::Relative {
            next = now;
        }
        if unique {
            self.rt[t.idx()].timers[slot] = next;
        } else {
            self.shared_timers[slot] = next;
        }
        let rel = self.ctx.tasks[t.idx()]
            .attrs
            .dl
            .map_or(period, |d| d.deadline_ns);
        self.metrics.set_deadline(t, rel);
        self.next_op(cpu, t);
        if self.rt[t.idx()].state != TState::Running {
            return;
        }
        if next > now {
            self.sleep_until(cpu, t, next, Block::Timer);
        } else {
            // Late: rt-app does not sleep; the activation is released in the past and
            // runs at once (the lateness is its wake-up latency).
            self.metrics.end(t, now);
            self.metrics.release(t, next, ActKind::Timer);
            self.metrics.runnable(t, now);
            self.metrics.started(t, now);
        }
    }

    /// Take `mutex` if it is free; else queue on it and block (the op is retried when
    /// the task is woken, as a futex-based lock retries after FUTEX_WAIT returns).
    fn try_lock(&mut self, cpu: CpuId, t: TaskId, mutex: usize) -> bool {
        let m = &mut self.mutexes[mutex];
        if m.owner.is_none() {
            m.owner = Some(t);
            return true;
        }
        let prio = self.ctx.tasks[t.idx()].attrs.prio();
        m.waiters.push(prio, t);
        self.block(cpu, t, Block::Mutex);
        false
    }

    /// pthread_mutex_unlock of a default (non-PI) mutex: release it and wake the first
    /// waiter, which competes for it when it runs (no hand-off: the unlocker, or anyone
    /// else, may take it again first).
    fn unlock(&mut self, cpu: CpuId, mutex: usize) {
        let m = &mut self.mutexes[mutex];
        m.owner = None;
        if let Some(w) = m.waiters.pop() {
            self.metrics.release(w, self.ctx.now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), false);
        }
    }

    fn cond_wait(&mut self, cpu: CpuId, t: TaskId, cond: usize, mutex: usize) {
        if self.mutexes[mutex].owner == Some(t) {
            self.unlock(cpu, mutex);
        }
        let prio = self.ctx.tasks[t.idx()].attrs.prio();
        self.conds[cond].waiters.push(prio, t);
        self.rt[t.idx()].cond_mutex = mutex as u32;
        if self.rt[t.idx()].state == TState::Running {
            self.block(cpu, t, Block::Cond);
        }
    }

    /// Wake one (signal) or all (broadcast) waiters. Each becomes runnable now (its
    /// activation is released now) and re-acquires its mutex when it runs, before its
    /// next op, as pthread_cond_wait does on return.
    fn cond_wake(&mut self, cpu: CpuId, cond: usize, all: bool) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        if all {
            self.conds[cond].waiters.drain_into(&mut woken);
        } else if let Some(w) = self.conds[cond].waiters.pop() {
            woken.push(w);
        }
        let now = self.ctx.now;
        for &w in &woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.rt[w.idx()].reacquire = true;
            self.make_runnable(w, Some(cpu), false);
        }
        self.scratch = woken;
    }

    fn barrier(&mut self, cpu: CpuId, t: TaskId, b: usize) {
        let bar = &mut self.barriers[b];
        bar.arrived += 1;
        if bar.arrived < bar.needed {
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            bar.waiters.push(prio, t);
            if self.rt[t.idx()].state == TState::Running {
                self.block(cpu, t, Block::Barrier);
            }
            return;
        }
        bar.arrived = 0;
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.barriers[b].waiters.drain_into(&mut woken);
        let now = self.ctx.now;
        for &w in &woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), false);
        }
        self.scratch = woken;
    }

    fn resume(&mut self, cpu: CpuId, tmpl: u32) {
        let now = self.ctx.now;
        for i in 0..self.instances[tmpl as usize].len() {
            let w = self.instances[tmpl as usize][i];
            if self.rt[w.idx()].state == TState::Blocked(Block::Suspend)
                && !self.ctx.tasks[w.idx()].exited
            {
                self.metrics.release(w, now, ActKind::Wakeup);
                self.make_runnable(w, Some(cpu), false);
            }
        }
    }

    fn write(&mut self, cpu: CpuId, t: TaskId, chan: usize, bytes: u64) {
        if self.rt[t.idx()].stage != Stage::Transfer {
            self.rt[t.idx()].stage = Stage::Transfer;
            self.rt[t.idx()].xfer_left = bytes;
        }
        let ch = &mut self.channels[chan];
        let n = self.rt[t.idx()].xfer_left.min(ch.capacity - ch.buffered);
        ch.buffered += n;
        ch.written += n;
        self.rt[t.idx()].xfer_left -= n;
        if n > 0 {
            self.wake_all_readers(cpu, chan);
        }
        if self.rt[t.idx()].xfer_left == 0 {
            self.next_op(cpu, t);
        } else if self.rt[t.idx()].state == TState::Running {
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            self.channels[chan].writers.push(prio, t);
            self.block(cpu, t, Block::Write);
        }
    }

    fn read(&mut self, cpu: CpuId, t: TaskId, chan: usize, bytes: u64) {
        if self.rt[t.idx()].stage != Stage::Transfer {
            self.rt[t.idx()].stage = Stage::Transfer;
            self.rt[t.idx()].xfer_left = bytes;
        }
        let ch = &mut self.channels[chan];
        let n = self.rt[t.idx()].xfer_left.min(ch.buffered);
        ch.buffered -= n;
        ch.read += n;
        self.rt[t.idx()].xfer_left -= n;
        if n > 0 {
            self.wake_all_writers(cpu, chan);
        }
        if self.rt[t.idx()].xfer_left == 0 {
            self.next_op(cpu, t);
        } else if self.rt[t.idx()].state == TState::Running {
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            self.channels[chan].readers.push(prio, t);
            self.block(cpu, t, Block::Read);
        }
    }

    fn wake_all_readers(&mut self, cpu: CpuId, chan: usize) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.channels[chan].readers.drain_into(&mut woken);
        self.wake_list(cpu, &woken);
        self.scratch = woken;
    }

    fn wake_all_writers(&mut self, cpu: CpuId, chan: usize) {
        let mut woken = std::mem::take(&mut self.scratch);
        woken.clear();
        self.channels[chan].writers.drain_into(&mut woken);
        self.wake_list(cpu, &woken);
        self.scratch = woken;
    }

    fn wake_list(&mut self, cpu: CpuId, woken: &[TaskId]) {
        let now = self.ctx.now;
        for &w in woken {
            self.metrics.release(w, now, ActKind::Wakeup);
            self.make_runnable(w, Some(cpu), true);
        }
    }

    fn fork(&mut self, cpu: CpuId, parent: TaskId, tmpl: u32) {
        let tp = &self.templates[tmpl as usize];
        let attrs = attrs_of(&tp.attr);
        let aff = match tp.cpus.clone() {
            Some(c) => self.affinity_of(Some(&c)),
            None => self.ctx.tasks[parent.idx()].affinity,
        };
        let child = self.create_task(tmpl, attrs, aff, Some(parent));
        if self.ctx.tracer.enabled() {
            self.ctx.tracer.fork(self.ctx.now, cpu, parent, child);
        }
        self.wake_new(child, Some(cpu));
    }

    fn exit(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.ctx.now;
        self.ctx.tasks[t.idx()].on_rq = false;
        self.policy
            .dequeue(&mut self.ctx, cpu, t, DequeueKind::Exit);
        self.set_state(t, TState::Exited);
        self.ctx.tasks[t.idx()].exited = true;
        self.metrics.end(t, now);
        if self.ctx.tracer.enabled() {
            let prio = self.ctx.tasks[t.idx()].attrs.prio();
            self.ctx.tracer.exit(now, cpu, t, prio);
        }
        self.policy.task_exit(&mut self.ctx, t);
        self.live_tasks -= 1;
        self.last_exit = Some(now);
        self.ctx.resched(cpu);
    }

    /// Change the running task's attributes at a phase boundary (sched_setattr on self, in
    /// `__sched_setscheduler`'s order): dequeue(SAVE), put_prev, change, enqueue(RESTORE),
    /// prio_changed; the reschedule that follows stands in for `set_next_task`. A task no
    /// longer allowed on its CPU is placed elsewhere like a waking task (prio_changed is not
    /// called: it is a new arrival on its new CPU).
    fn change_attrs(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        attrs: Option<SchedAttrs>,
        cpus: Option<CpuMask>,
    ) {
        let old = self.ctx.tasks[t.idx()].attrs;
        let new_attrs = attrs.unwrap_or(old);
        let new_mask = cpus.map(|m| m.and(&CpuMask::first_n(self.ctx.nr_cpus())));
        let new_mask = new_mask.filter(|m| !m.is_empty());
        if new_attrs == old && new_mask.is_none_or(|m| m == self.ctx.tasks[t.idx()].affinity) {
            // __sched_setscheduler returns early when nothing changes: no requeue.
            return;
        }
        if let Err(e) = self.policy.accepts(&new_attrs) {
            self.error = Some(RunError(format!("task {}: {e}", self.rt[t.idx()].name)));
            return;
        }
        self.account(cpu);
        let v = &mut self.ctx.tasks[t.idx()];
        v.on_rq = false;
        v.running = false;
        self.policy
            .dequeue(&mut self.ctx, cpu, t, DequeueKind::Save);
        self.policy.put_prev(&mut self.ctx, cpu, t);
        self.prev_put[cpu.idx()] = true;
        self.ctx.tasks[t.idx()].attrs = new_attrs;
        if let Some(m) = cpus {
            let m = m.and(&CpuMask::first_n(self.ctx.nr_cpus()));
            if !m.is_empty() {
                self.ctx.tasks[t.idx()].affinity = m;
            }
        }
        self.ctx.tasks[t.idx()].on_rq = true;
        if self.ctx.tasks[t.idx()].affinity.contains(cpu) {
            self.policy
                .enqueue(&mut self.ctx, cpu, t, EnqueueKind::Restore);
            self.ctx.tasks[t.idx()].running = true;
            self.policy.prio_changed(&mut self.ctx, t, old);
        } else {
            // Not allowed here any more: leave the CPU and be placed elsewhere, as
            // sched_setaffinity's migration does.
            self.ctx.cpus[cpu.idx()].gen += 1;
            self.burst_armed[cpu.idx()] = false;
            let c = &mut self.ctx.cpus[cpu.idx()];
            c.curr = None;
            c.idle_since = self.ctx.now;
            c.overhead_left = 0;
            self.prev_put[cpu.idx()] = false;
            self.rt[t.idx()].involuntary += 1;
            if self.ctx.tracer.enabled() {
                self.trace_switch(cpu, Some(t), PrevState::Preempted, None);
            }
            self.set_state(t, TState::Blocked(Block::Suspend));
            let dest = self.ctx.tasks[t.idx()]
                .affinity
                .first()
                .expect("non-empty affinity");
            self.ctx.tasks[t.idx()].on_rq = false;
            self.ctx.set_task_cpu(t, dest);
            self.ctx.wake = WakeFlags {
                sync: false,
                waker_cpu: Some(cpu),
            };
            let sel = self
                .policy
                .select_cpu(&mut self.ctx, t, dest, WakeKind::Wakeup);
            self.place(t, dest, sel, Some(cpu), false);
        }
        self.ctx.resched(cpu);
    }

    /// Finish accounting at the end of the run.
    pub fn finish(&mut self) {
        let now = self.ctx.now;
        for c in 0..self.ctx.nr_cpus() {
            let cpu = CpuId(c as u32);
            self.account(cpu);
            let cs = &mut self.ctx.cpus[c];
            if cs.curr.is_none() {
                cs.idle_ns += now - cs.idle_since;
                cs.idle_since = now;
            }
        }
        for i in 0..self.rt.len() {
            let t = TaskId(i as u32);
            let s = self.rt[i].state;
            self.set_state(t, s);
        }
    }
}

/// Engine attributes from spec attributes.
pub(crate) fn attrs_of(a: &schedlab_spec::model::SchedAttr) -> SchedAttrs {
    let (rt_priority, nice) = match a.policy {
        Policy::Fifo | Policy::Rr => (a.priority, 0),
        Policy::Deadline => (0, 0),
        _ => (0, a.priority),
    };
    SchedAttrs {
        policy: a.policy,
        rt_priority,
        nice,
        dl: a.dl,
    }
}

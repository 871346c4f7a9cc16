//! `staircase`: Con Kolivas' Staircase CPU scheduler, version 16, for Linux 2.6.17.
//!
//! Source: LKML "[ckpatch][3/29] 2.6.17-smpnice-staircase-16", Con Kolivas, 18 Jun 2006
//! (Message-ID 200606181729.05532.kernel@kolivas.org, full diff of kernel/sched.c), plus
//! "[ckpatch][4/29] sched-staircase16_interactive_tunable" and "[ckpatch][5/29]
//! sched-staircase16_compute_tunable" (same day), read in the `ammarfaizi2/lore-inbox`
//! archive. Functions modelled (patch names): `rr_interval`, `slice`, `bonus`,
//! `inc_bonus`, `dec_bonus`, `slice_overrun`, `effective_prio`, `continue_slice`,
//! `recalc_task_prio`, `activate_task`, `dequeue_task`/`enqueue_task`/`requeue_task`,
//! `preempt` (compute-mode version), `wake_up_new_task`, `time_slice_expired`,
//! `scheduler_tick`, `schedule` (prev->runtime / timestamp), `sys_sched_yield`,
//! `set_user_nice`, `__setscheduler`, `move_tasks`/`pull_task`, `rebalance_tick`.
//!
//! Model: one policy owns the whole machine. Each CPU has ONE priority array (no expired
//! array): 140 FIFO lists (kernel prio 0..=139; RT tasks at 99 − rt_priority, normal tasks
//! at 100..=139) and a bitmap, scanned from the best priority. The running task stays
//! linked in its list (as `curr` stays queued in the kernel).
//! - `RR_INTERVAL = 6·HZ/1001 + 1` jiffies (×10 in compute mode);
//!   `rr_interval(p) = RR_INTERVAL·(20 − nice)/20` for nice < 0 (non-RT), else RR_INTERVAL;
//!   `slice(p) = rr_interval(p)·(20 − nice)` for non-RT (the patch writes
//!   `rr + (39 − (nice+20))·rr`), `rr_interval(p)` for RT.
//! - `effective_prio = min(139, 100 + (nice+20) − bonus + used_slice / rr_interval)`, the
//!   bonus counted only when `interactive` is on, `compute` is off and the task is not
//!   SCHED_BATCH: a task enters at its best stair and drops one priority per rr_interval of
//!   CPU; when the whole slice is used it loses one bonus point and restarts at its (now
//!   lower) best stair with a full slice.
//! - Tick (`scheduler_tick`): SCHED_FIFO is never charged; otherwise a tick is charged only
//!   once a jiffy of CPU has accumulated (`ns_debit`): `--slice` (at 0: dec_bonus,
//!   totalrun = 0, full slice, requeue at best stair), else `--time_slice` (at 0: requeue
//!   one stair lower with a new rr_interval). SCHED_RR tasks rotate every rr_interval.
//! - Wake-up (`activate_task` → `recalc_task_prio`) exactly as the patch: the "ran down to
//!   its last stair" rule, totalrun/sleep comparison, `inc_bonus` (one step when
//!   sleep/(totalrun+1) exceeds the bonus), `continue_slice` / `slice_overrun`.
//! - Fork (`wake_up_new_task`): the child gets bonus 0 and a fresh full slice; the parent is
//!   flagged PF_FORKED so its next activation earns no sleep credit; child-runs-first
//!   (resched) when the child lands on the parent's CPU.
//! - Yield (`sys_sched_yield`): full slice, time_slice = rr_interval, requeued at prio 139
//!   (MIN_USER_PRIO) for non-RT tasks, at the tail of its own priority for RT tasks.
//!   NOTE: the seed slide (Toshiba, 2006) says yield sets the dynamic priority to the *best*;
//!   the patch (and the spec) requeue at the *worst* user priority with a refilled slice,
//!   so the task restarts its staircase from the top stair only at its next requeue. The
//!   patch is followed.
//! - Wake-up preemption: strictly better dynamic priority (`p.prio < curr.prio`); in
//!   compute mode a user task's preemption waits until the CPU's current task has run
//!   CACHE_DELAY = 10·HZ/1001 + 1 ticks (`rq->preempted`, `rq->cache_ticks`).
//! - Nice change (`set_user_nice`): prio shifted by the nice delta, bonus capped at
//!   nice+20; policy change (`__setscheduler`): prio = static priority.
//!
//! Tunables (the patch's /proc/sys/kernel knobs, plugsched /sys/cpusched/staircase/):
//! `interactive` (default 1), `compute` (default 0).
//!
//! Simplifications:
//! - No system time (`systime` is always 0) and no TASK_UNINTERRUPTIBLE distinction: the
//!   engine does not say why a task slept, so PF_NONSLEEP is never set and every sleep may
//!   earn a bonus.
//! - `ns_debit` is the CPU time accumulated since the task was last queued/requeued (the
//!   engine's `update_curr` deltas) rather than the kernel's timestamp arithmetic; a tick is
//!   charged when it reaches one jiffy, the remainder is kept (`ns_debit %= NSJIFFY`).
//! - A forked child is activated without `recalc_task_prio` (in the kernel it runs
//!   recalc with fields copied from the parent; with totalrun 0 and no sleep that gives the
//!   same result: bonus 0, full slice). Every fork is treated as !CLONE_VM
//!   (child-runs-first).
//! - A task woken while still current of its CPU (`ttwu_runnable`) is requeued without
//!   reactivation (in the kernel it never left the runqueue).
//! - SMP: wake placement keeps the previous CPU when it is idle, else takes an idle allowed
//!   CPU, else keeps the previous CPU (2.6.17's wake_affine/wake_idle reduced to this);
//!   fork placement takes the allowed CPU with the fewest runnable tasks
//!   (sched_balance_self). Balancing (`balance`, every tick on a busy CPU and when a CPU goes
//!   idle, as staircase's `rebalance_tick` without busy_factor) pulls from the CPU with the
//!   most runnable tasks when it has at least 2 more than this one, half the difference,
//!   scanning the single array from the best priority (tail of each list first, as
//!   `move_tasks`), never the running task; counts replace smpnice load weights, no
//!   sched-domain hierarchy, no cache-hot test.
//! - No kernel threads (`!p->mm`), so compute-mode preemption deferral applies to every
//!   non-RT task. SCHED_DEADLINE and SCHED_IDLE do not exist in 2.6.17 staircase and are
//!   rejected.
//!
//! Uncertain: the plugsched 6.3 staircase driver (v15 diff) differs in details listed in
//! the spec (dec_bonus zeroing totalrun, doubled systime); v16 standalone is modelled. The
//! `RR_INTERVAL` compute factor (×10) is taken from the spec's summary of the compute
//! tunable patch.

use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

/// Priority levels: kernel prio 0..=139 (index = prio).
const LEVELS: usize = 140;
const WORDS: usize = LEVELS.div_ceil(64);
const NIL: u32 = u32::MAX;
/// MAX_RT_PRIO.
const MAX_RT_PRIO: i32 = 100;
/// MIN_USER_PRIO = MAX_PRIO − 1.
pub const MIN_USER_PRIO: i32 = 139;

/// `RR_INTERVAL` in jiffies: `6·HZ/1001 + 1`, ×10 in compute mode.
pub fn rr_base(hz: u32, compute: bool) -> u32 {
    (6 * hz / 1001 + 1) * if compute { 10 } else { 1 }
}

/// `CACHE_DELAY` in jiffies (compute mode): `10·HZ/1001 + 1`.
pub fn cache_delay(hz: u32) -> u32 {
    10 * hz / 1001 + 1
}

fn is_rt(a: &SchedAttrs) -> bool {
    matches!(a.policy, Policy::Fifo | Policy::Rr)
}

/// `rr_interval(p)` in jiffies.
pub fn rr_interval(hz: u32, compute: bool, a: &SchedAttrs) -> u32 {
    let rr = rr_base(hz, compute);
    if a.nice < 0 && !is_rt(a) {
        rr * (20 - a.nice) as u32 / 20
    } else {
        rr
    }
}

/// `slice(p)` in jiffies: `rr + (39 − TASK_USER_PRIO)·rr` for non-RT, `rr` for RT.
pub fn slice(hz: u32, compute: bool, a: &SchedAttrs) -> u32 {
    let rr = rr_interval(hz, compute, a);
    if is_rt(a) {
        rr
    } else {
        rr + (39 - (a.nice + 20)) as u32 * rr
    }
}

/// `p->slice % rr ? : rr`: the jiffies of the first stair of a fresh slice.
fn first_time_slice(full: u32, rr: u32) -> u32 {
    match full % rr {
        0 => rr,
        r => r,
    }
}

/// `bonus(p)`: the largest bonus a task may hold, TASK_USER_PRIO = nice + 20.
fn max_bonus(a: &SchedAttrs) -> u32 {
    (a.nice + 20).max(0) as u32
}

/// Per-task scheduler state (the patch's task_struct fields) and list links.
#[derive(Clone, Copy, Debug)]
struct Task {
    /// Dynamic priority (p->prio).
    prio: i32,
    bonus: u32,
    /// Jiffies left of the full slice.
    slice: u32,
    /// Jiffies left on the current stair.
    time_slice: u32,
    /// ns of the last run (set at schedule()).
    runtime: u64,
    /// ns accumulated towards the slice.
    totalrun: u64,
    /// Sub-jiffy ns not yet charged by the tick.
    ns_debit: u64,
    /// sched_clock of the last switch in/out or activation.
    timestamp: u64,
    /// PF_FORKED: forked since its last activation.
    forked: bool,
    /// The attributes last seen (to tell a nice change from a policy change).
    attrs: SchedAttrs,
    next: u32,
    prev: u32,
    queued: bool,
    cpu: u32,
}

/// One CPU's run queue: a FIFO list per priority plus a bitmap of non-empty levels.
struct RunQueue {
    head: [u32; LEVELS],
    tail: [u32; LEVELS],
    bitmap: [u64; WORDS],
    nr_running: u32,
    cache_ticks: u32,
    preempted: bool,
}

impl RunQueue {
    fn new() -> Self {
        RunQueue {
            head: [NIL; LEVELS],
            tail: [NIL; LEVELS],
            bitmap: [0; WORDS],
            nr_running: 0,
            cache_ticks: 0,
            preempted: false,
        }
    }

    fn top(&self) -> Option<usize> {
        self.bitmap
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }
}

pub struct Staircase {
    rq: Vec<RunQueue>,
    tasks: Vec<Task>,
    params: StaircaseParams,
}

/// Staircase's tunables (the patch's `/proc/sys/kernel/` knobs).
#[derive(Clone, Debug)]
pub struct StaircaseParams {
    /// sched_interactive (1 = bonuses on).
    pub interactive: bool,
    /// sched_compute (1 = long rr_interval, no bonus, delayed preemption).
    pub compute: bool,
}

impl Default for StaircaseParams {
    fn default() -> Self {
        StaircaseParams {
            interactive: true,
            compute: false,
        }
    }
}

fn tunables() -> Vec<Tunable<StaircaseParams>> {
    vec![
        Tunable::flag(
            "interactive",
            "1 = sleepers earn a bonus (start on a higher stair); 0 = every task starts at \
             100 + nice + 20 (sched_interactive)",
            |p| &mut p.interactive,
        ),
        Tunable::flag(
            "compute",
            "1 = compute mode: rr_interval x10, no bonus, wake-up preemption delayed by \
             CACHE_DELAY ticks (sched_compute)",
            |p| &mut p.compute,
        ),
    ]
}

impl Staircase {
    pub fn new(nr_cpus: usize) -> Self {
        Staircase {
            rq: (0..nr_cpus).map(|_| RunQueue::new()).collect(),
            tasks: Vec::new(),
            params: StaircaseParams::default(),
        }
    }

    /// The task's current bonus (for tests).
    #[doc(hidden)]
    pub fn bonus_of(&self, t: TaskId) -> u32 {
        self.tasks[t.idx()].bonus
    }

    /// The task's (slice, time_slice) in jiffies (for tests).
    #[doc(hidden)]
    pub fn slices_of(&self, t: TaskId) -> (u32, u32) {
        let p = &self.tasks[t.idx()];
        (p.slice, p.time_slice)
    }

    /// The task's totalrun in ns (for tests).
    #[doc(hidden)]
    pub fn totalrun_of(&self, t: TaskId) -> u64 {
        self.tasks[t.idx()].totalrun
    }

    fn rr(&self, ctx: &Ctx, t: TaskId) -> u32 {
        rr_interval(ctx.hz(), self.params.compute, &ctx.task(t).attrs)
    }

    fn full_slice(&self, ctx: &Ctx, t: TaskId) -> u32 {
        slice(ctx.hz(), self.params.compute, &ctx.task(t).attrs)
    }

    /// `effective_prio`.
    fn effective_prio(&self, ctx: &Ctx, t: TaskId) -> i32 {
        let a = ctx.task(t).attrs;
        if is_rt(&a) {
            return a.prio();
        }
        let p = &self.tasks[t.idx()];
        let full = self.full_slice(ctx, t);
        let used = full.saturating_sub(p.slice);
        let mut prio = MAX_RT_PRIO + max_bonus(&a) as i32;
        if self.params.interactive && !self.params.compute && a.policy != Policy::Batch {
            prio -= p.bonus as i32;
        }
        prio += (used / self.rr(ctx, t)) as i32;
        prio.clamp(MAX_RT_PRIO, MIN_USER_PRIO)
    }

    fn dec_bonus(&mut self, t: TaskId) {
        let p = &mut self.tasks[t.idx()];
        p.bonus = p.bonus.saturating_sub(1);
    }

    /// `inc_bonus`: one step up when sleep/(totalrun+1) exceeds the current bonus.
    fn inc_bonus(&mut self, ctx: &Ctx, t: TaskId, totalrun: u64, sleep: u64) {
        let best = sleep / (totalrun + 1);
        let max = max_bonus(&ctx.task(t).attrs);
        let p = &mut self.tasks[t.idx()];
        if p.bonus as u64 >= best {
            return;
        }
        if p.bonus < max {
            p.bonus += 1;
        }
    }

    /// `continue_slice` (with `slice_overrun`).
    fn continue_slice(&mut self, ctx: &Ctx, t: TaskId) {
        let nsj = ctx.tick_ns();
        let rr = self.rr(ctx, t);
        let total_run = self.tasks[t.idx()].totalrun / nsj;
        if total_run >= self.tasks[t.idx()].slice as u64 {
            let ns_slice = self.tasks[t.idx()].slice as u64 * nsj;
            loop {
                self.tasks[t.idx()].totalrun -= ns_slice;
                self.dec_bonus(t);
                if self.tasks[t.idx()].totalrun <= ns_slice {
                    break;
                }
            }
        } else {
            let p = &mut self.tasks[t.idx()];
            p.slice -= total_run as u32;
            let rem = p.slice % rr;
            if rem != 0 {
                p.time_slice = rem;
            }
        }
    }

    /// `recalc_task_prio`.
    fn recalc_task_prio(&mut self, ctx: &Ctx, t: TaskId, now: u64) {
        let nsj = ctx.tick_ns();
        {
            let p = &self.tasks[t.idx()];
            let ran = p.totalrun / nsj;
            if p.slice > p.time_slice
                && (p.slice as u64)
                    .checked_sub(ran)
                    .is_some_and(|left| left < p.time_slice as u64)
            {
                // Ran down to its last stair: lose a bonus point, restart at the top.
                self.dec_bonus(t);
                self.tasks[t.idx()].totalrun = 0;
                return;
            }
        }
        let forked = self.tasks[t.idx()].forked;
        let p = &mut self.tasks[t.idx()];
        // systime is always 0 here (no system time is modelled).
        p.totalrun += p.runtime;
        let sleep = if now >= p.timestamp {
            now - p.timestamp
        } else {
            1
        };
        if !forked {
            if sleep >= p.totalrun {
                // PF_NONSLEEP is never set (no uninterruptible sleep in the model).
                let totalrun = p.totalrun;
                self.inc_bonus(ctx, t, totalrun, sleep);
                self.tasks[t.idx()].totalrun = 0;
                return;
            }
            p.totalrun -= sleep;
        }
        self.continue_slice(ctx, t);
    }

    /// `activate_task` for a waking task (prio computed; not linked yet).
    fn activate(&mut self, ctx: &Ctx, t: TaskId) {
        let now = ctx.now();
        let rr = self.rr(ctx, t);
        let full = self.full_slice(ctx, t);
        {
            let p = &mut self.tasks[t.idx()];
            p.slice = full;
            p.time_slice = first_time_slice(full, rr);
        }
        if !is_rt(&ctx.task(t).attrs) {
            self.recalc_task_prio(ctx, t, now);
            self.tasks[t.idx()].prio = self.effective_prio(ctx, t);
            self.tasks[t.idx()].forked = false;
        } else {
            self.tasks[t.idx()].prio = ctx.task(t).attrs.prio();
        }
        self.tasks[t.idx()].timestamp = now;
    }

    fn push_tail(&mut self, cpu: CpuId, t: TaskId) {
        let level = self.tasks[t.idx()].prio.clamp(0, LEVELS as i32 - 1) as usize;
        let rq = &mut self.rq[cpu.idx()];
        let id = t.0;
        let old_tail = rq.tail[level];
        {
            let p = &mut self.tasks[t.idx()];
            p.next = NIL;
            p.prev = old_tail;
            p.queued = true;
            p.cpu = cpu.0;
        }
        if old_tail == NIL {
            rq.head[level] = id;
        } else {
            self.tasks[old_tail as usize].next = id;
        }
        rq.tail[level] = id;
        rq.bitmap[level / 64] |= 1 << (level % 64);
        rq.nr_running += 1;
    }

    fn unlink(&mut self, t: TaskId) {
        let p = self.tasks[t.idx()];
        if !p.queued {
            return;
        }
        let level = p.prio.clamp(0, LEVELS as i32 - 1) as usize;
        let rq = &mut self.rq[p.cpu as usize];
        if p.prev == NIL {
            rq.head[level] = p.next;
        } else {
            self.tasks[p.prev as usize].next = p.next;
        }
        if p.next == NIL {
            rq.tail[level] = p.prev;
        } else {
            self.tasks[p.next as usize].prev = p.prev;
        }
        if rq.head[level] == NIL {
            rq.bitmap[level / 64] &= !(1 << (level % 64));
        }
        rq.nr_running -= 1;
        self.tasks[t.idx()].queued = false;
    }

    /// `requeue_task`: tail of `prio` (ns_debit cleared).
    fn requeue(&mut self, t: TaskId, prio: i32) {
        let cpu = CpuId(self.tasks[t.idx()].cpu);
        let queued = self.tasks[t.idx()].queued;
        self.unlink(t);
        self.tasks[t.idx()].prio = prio;
        self.tasks[t.idx()].ns_debit = 0;
        if queued {
            self.push_tail(cpu, t);
        }
    }

    /// `time_slice_expired`.
    fn time_slice_expired(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        ctx.resched(cpu);
        self.tasks[t.idx()].time_slice = self.rr(ctx, t);
        let prio = self.effective_prio(ctx, t);
        self.requeue(t, prio);
    }

    /// `preempt(p, rq)` for a busy CPU.
    fn preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(curr) = ctx.curr(cpu) else {
            ctx.resched(cpu);
            return;
        };
        if self.tasks[t.idx()].prio >= self.tasks[curr.idx()].prio {
            return;
        }
        let rq = &mut self.rq[cpu.idx()];
        if !self.params.compute
            || rq.cache_ticks >= cache_delay(ctx.hz())
            || is_rt(&ctx.task(t).attrs)
        {
            ctx.resched(cpu);
            return;
        }
        rq.preempted = true;
    }

    fn cpu_idle(&self, ctx: &Ctx, c: CpuId) -> bool {
        ctx.curr(c).is_none() && self.rq[c.idx()].nr_running == 0
    }
}

impl Scheduler for Staircase {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "staircase",
            summary: "Con Kolivas' Staircase v16: one priority array, dynamic priority descends \
                      one stair per rr_interval, sleep bonus",
            source: "LKML [ckpatch][3/29] 2.6.17-smpnice-staircase-16 (Con Kolivas, 18 Jun 2006, \
                     kernel/sched.c) + [4/29] interactive and [5/29] compute tunables",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "staircase", name, value)
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match attrs.policy {
            Policy::Deadline => Err("SCHED_DEADLINE does not exist in staircase (2.6.17)".into()),
            Policy::Idle => Err("SCHED_IDLE does not exist in staircase v16 (2.6.17)".into()),
            _ => Ok(()),
        }
    }

    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        debug_assert_eq!(t.idx(), self.tasks.len());
        let attrs = ctx.task(t).attrs;
        self.tasks.push(Task {
            prio: attrs.prio().clamp(0, MIN_USER_PRIO),
            bonus: 0,
            slice: 0,
            time_slice: 0,
            runtime: 0,
            totalrun: 0,
            ns_debit: 0,
            timestamp: ctx.now(),
            forked: false,
            attrs,
            next: NIL,
            prev: NIL,
            queued: false,
            cpu: 0,
        });
        if let Some(p) = parent {
            // wake_up_new_task: the parent's next activation earns no sleep credit.
            self.tasks[p.idx()].forked = true;
        }
    }

    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let allowed = ctx.task(t).affinity;
        match kind {
            WakeKind::Fork => {
                let first = if allowed.contains(prev) {
                    prev
                } else {
                    allowed.first().expect("empty affinity")
                };
                let mut best = first;
                for c in allowed.iter() {
                    if self.rq[c.idx()].nr_running < self.rq[best.idx()].nr_running {
                        best = c;
                    }
                }
                best
            }
            WakeKind::Wakeup => {
                if allowed.contains(prev) && self.cpu_idle(ctx, prev) {
                    return prev;
                }
                if let Some(c) = allowed.iter().find(|&c| self.cpu_idle(ctx, c)) {
                    return c;
                }
                if allowed.contains(prev) {
                    prev
                } else {
                    allowed
                        .iter()
                        .min_by_key(|c| (self.rq[c.idx()].nr_running, c.0))
                        .expect("empty affinity")
                }
            }
        }
    }

    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        ctx.count_work(1);
        let attrs = ctx.task(t).attrs;
        match kind {
            EnqueueKind::Wakeup => {
                if !ctx.task(t).running {
                    self.activate(ctx, t);
                }
            }
            EnqueueKind::New => {
                // wake_up_new_task: no bonus, fresh slice at the best stair.
                let rr = self.rr(ctx, t);
                let full = self.full_slice(ctx, t);
                {
                    let p = &mut self.tasks[t.idx()];
                    p.bonus = 0;
                    p.slice = full;
                    p.time_slice = first_time_slice(full, rr);
                    p.totalrun = 0;
                    p.runtime = 0;
                    p.timestamp = ctx.now();
                }
                self.tasks[t.idx()].prio = self.effective_prio(ctx, t);
                // Child-runs-first when it lands on its parent's CPU.
                if let Some(parent) = ctx.task(t).parent {
                    if ctx.curr(cpu) == Some(parent) {
                        ctx.resched(cpu);
                    }
                }
            }
            EnqueueKind::Restore => {
                let old = self.tasks[t.idx()].attrs;
                if old != attrs {
                    if old.policy != attrs.policy || old.rt_priority != attrs.rt_priority {
                        // __setscheduler: prio = static priority.
                        self.tasks[t.idx()].prio = attrs.prio().clamp(0, MIN_USER_PRIO);
                    } else if !is_rt(&attrs) {
                        // set_user_nice: shift by the delta, cap the bonus.
                        let p = &mut self.tasks[t.idx()];
                        p.prio = (p.prio + attrs.nice - old.nice).clamp(MAX_RT_PRIO, MIN_USER_PRIO);
                        p.bonus = p.bonus.min(max_bonus(&attrs));
                    }
                }
            }
        }
        self.tasks[t.idx()].attrs = attrs;
        self.tasks[t.idx()].ns_debit = 0;
        self.push_tail(cpu, t);
    }

    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        ctx.count_work(1);
        self.unlink(t);
        self.tasks[t.idx()].ns_debit = 0;
    }

    /// try_to_wake_up in the patch (hunk `@@ -1392,10 +1353,9 @@ out_activate:`):
    /// `if (!sync || cpu != this_cpu) preempt(p, rq);` — a sync wake-up onto the waker's
    /// own CPU never preempts.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if !ctx.wake_flags().sync_on(cpu) {
            self.preempt(ctx, cpu, t);
        }
    }

    /// schedule(): prev->runtime = now − timestamp; prev->timestamp = now.
    fn put_prev(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        let now = ctx.now();
        let p = &mut self.tasks[t.idx()];
        p.runtime = now.saturating_sub(p.timestamp);
        p.timestamp = now;
    }

    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        ctx.count_work(WORDS as u64);
        let rq = &self.rq[cpu.idx()];
        let level = rq.top()?;
        let t = TaskId(rq.head[level]);
        if ctx.curr(cpu) != Some(t) {
            let rq = &mut self.rq[cpu.idx()];
            rq.cache_ticks = 0;
            rq.preempted = false;
            self.tasks[t.idx()].timestamp = ctx.now();
        }
        Some(t)
    }

    fn update_curr(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId, delta_ns: u64) {
        self.tasks[t.idx()].ns_debit += delta_ns;
    }

    /// scheduler_tick.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if !self.tasks[t.idx()].queued {
            ctx.resched(cpu);
            return;
        }
        if ctx.task(t).attrs.policy == Policy::Fifo {
            return;
        }
        let nsj = ctx.tick_ns();
        {
            let p = &mut self.tasks[t.idx()];
            if p.ns_debit < nsj {
                return;
            }
            p.ns_debit %= nsj;
            p.slice = p.slice.saturating_sub(1);
        }
        if self.tasks[t.idx()].slice == 0 {
            self.dec_bonus(t);
            self.tasks[t.idx()].totalrun = 0;
            self.tasks[t.idx()].slice = self.full_slice(ctx, t);
            self.time_slice_expired(ctx, cpu, t);
            return;
        }
        {
            let p = &mut self.tasks[t.idx()];
            p.time_slice = p.time_slice.saturating_sub(1);
        }
        if self.tasks[t.idx()].time_slice == 0 {
            self.time_slice_expired(ctx, cpu, t);
            return;
        }
        if self.params.compute {
            let delay = cache_delay(ctx.hz());
            let rq = &mut self.rq[cpu.idx()];
            rq.cache_ticks += 1;
            if rq.preempted && rq.cache_ticks >= delay {
                ctx.resched(cpu);
            }
        }
    }

    /// set_user_nice's bonus cap (also for a task changed while asleep; a queued task had
    /// its priority shifted in `enqueue(Restore)`).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        let attrs = ctx.task(t).attrs;
        let p = &mut self.tasks[t.idx()];
        p.bonus = p.bonus.min(max_bonus(&attrs));
        if !p.queued && !is_rt(&attrs) {
            p.prio = p.prio.clamp(MAX_RT_PRIO, MIN_USER_PRIO);
        }
        p.attrs = attrs;
    }

    /// sys_sched_yield.
    fn yield_task(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        let full = self.full_slice(ctx, t);
        let rr = self.rr(ctx, t);
        self.tasks[t.idx()].slice = full;
        self.tasks[t.idx()].time_slice = rr;
        let prio = if is_rt(&ctx.task(t).attrs) {
            self.tasks[t.idx()].prio
        } else {
            MIN_USER_PRIO
        };
        self.requeue(t, prio);
    }

    /// rebalance_tick / idle_balance → load_balance → move_tasks (simplified, see header).
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        let n = self.rq.len();
        if n < 2 {
            return;
        }
        let this_load = self.rq[cpu.idx()].nr_running;
        let mut busiest: Option<usize> = None;
        for c in 0..n {
            if c == cpu.idx() {
                continue;
            }
            let l = self.rq[c].nr_running;
            if l >= this_load + 2 && busiest.is_none_or(|b| l > self.rq[b].nr_running) {
                busiest = Some(c);
            }
        }
        ctx.count_work(n as u64);
        let Some(b) = busiest else { return };
        let mut to_move = (self.rq[b].nr_running - this_load) / 2;
        let mut moved = Vec::new();
        'levels: for level in 0..LEVELS {
            if self.rq[b].bitmap[level / 64] & (1 << (level % 64)) == 0 {
                continue;
            }
            let mut x = self.rq[b].tail[level];
            while x != NIL {
                ctx.count_work(1);
                let prev = self.tasks[x as usize].prev;
                let tx = TaskId(x);
                if !ctx.task(tx).running && ctx.task(tx).affinity.contains(cpu) {
                    moved.push(tx);
                    to_move -= 1;
                    if to_move == 0 {
                        break 'levels;
                    }
                }
                x = prev;
            }
        }
        for t in moved {
            // pull_task: dequeue, set_task_cpu, enqueue at the same prio, preempt check.
            self.unlink(t);
            self.tasks[t.idx()].ns_debit = 0;
            ctx.set_task_cpu(t, cpu);
            self.push_tail(cpu, t);
            if kind == BalanceKind::Tick {
                self.preempt(ctx, cpu, t);
            }
        }
    }

    /// The full staircase `slice(p)` in ns (for RT tasks one `rr_interval`); SCHED_FIFO
    /// never expires.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        if attrs.policy == Policy::Fifo || self.accepts(attrs).is_err() {
            return None;
        }
        Some(slice(hz, self.params.compute, attrs) as u64 * (1_000_000_000 / hz as u64))
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.tasks.get(t.idx()).map(|p| ("prio", p.prio as i64))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, rq) in self.rq.iter().enumerate() {
            for level in 0..LEVELS {
                let mut x = rq.head[level];
                while x != NIL {
                    f(CpuId(c as u32), TaskId(x));
                    x = self.tasks[x as usize].next;
                }
            }
        }
    }
}

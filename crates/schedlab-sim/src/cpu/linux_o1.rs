//! `linux-o1`: the Linux 2.6.18 O(1) scheduler ("ingosched"), one policy owning the whole
//! machine, RT tasks included (they live at priorities 0..=99 of the same 140-level arrays,
//! as in the kernel).
//!
//! Source: vanilla Linux 2.6.18 `kernel/sched.c` (GitHub `rocklee104/linux-2.6.18`, the
//! unmodified import):
//! - constants and macros l.60-186 (`CURRENT_BONUS` l.131, `TIMESLICE_GRANULARITY`
//!   l.136-144, `DELTA` l.149, `TASK_INTERACTIVE` l.153, `INTERACTIVE_SLEEP` l.156,
//!   `TASK_PREEMPTS_CURR` l.160, `SCALE_PRIO`/`static_prio_timeslice`/`task_timeslice`
//!   l.164-186);
//! - `prio_array` + bitmap l.190-268, enqueue/dequeue/requeue l.663-695;
//! - `__normal_prio`/`normal_prio`/`effective_prio` l.713-830, `set_load_weight` l.737-765;
//! - `__activate_task` (SCHED_BATCH to the expired array) l.834-840, `recalc_task_prio`
//!   l.855-920, `activate_task` l.927-970;
//! - `try_to_wake_up` l.1362-1518 (preemption test), `sched_fork`/`wake_up_new_task`/
//!   `sched_exit` l.1536-1720;
//! - `move_tasks`/`pull_task`/`can_migrate_task` l.2089-2205, `find_busiest_group`
//!   l.2213-2495 (reduced, see below), `expired_starving` l.2897-2905, `scheduler_tick`
//!   l.2988-3080, `schedule()` l.3257-3425 (sleep_avg charge, array switch, on-runqueue
//!   credit), `set_user_nice` l.3865-3915, `__setscheduler` l.4023-4040,
//!   `sys_sched_yield` l.4405-4450.
//!
//! Every constant plugsched exposed under `/sys/cpusched/ingosched/` is a `--param`
//! (see `info()`); times are given in ms and converted to jiffies with the kernel's
//! `x*HZ/1000` rounding.
//!
//! Simplifications:
//! - Sleep types: the engine does not say whether a sleep was interruptible or whether the
//!   waker ran in interrupt context, so every wake-up is an interruptible sleep woken from
//!   process context (`SLEEP_INTERACTIVE`, on-runqueue credit weighted by
//!   ON_RUNQUEUE_WEIGHT); `SLEEP_NONINTERACTIVE` arises only from the long-sleep ceiling
//!   rule of `recalc_task_prio`. Every task is a user task (`p->mm != NULL`).
//! - fork is always a process fork (no CLONE_VM): a child on its parent's CPU is linked
//!   just ahead of the running parent and the CPU is rescheduled.
//! - No PI boosting (prio of RT tasks is `99 - rt_priority`), no SMT `dependent_sleeper`,
//!   no sched_clock drift compensation (one clock), no `cpu_load[]` history.
//! - SMP placement: a waking task stays on its previous CPU when that CPU is idle or no
//!   allowed CPU is idle; otherwise it goes to the first idle allowed CPU after it (a
//!   reduced `wake_idle` + passive balance; the wake-affine test is not modelled). A forked
//!   child stays on its parent's CPU (2.6.18's CPU-level domain has no SD_BALANCE_FORK);
//!   start-up tasks (no parent) go to the least-loaded allowed CPU, as if exec balancing
//!   had placed them.
//! - Load balancing, one flat domain: a busy CPU balances every `busy_balance_ms`
//!   (balance_interval × busy_factor of SD_CPU_INIT, no interval doubling); a CPU about to
//!   go idle balances at once (idle_balance); an idle CPU's own 1-tick rebalance (idle CPUs
//!   take no ticks here) is run from every busy CPU's tick, pulling from that CPU. Load is
//!   `raw_weighted_load` (smpnice weights), imbalance = half the difference, with the
//!   "small imbalance" one-task rule (imbn = 2); `move_tasks` scans the busiest CPU's
//!   expired then active array, best priority first, each list from its tail, skipping the
//!   running task, disallowed CPUs and cache-hot tasks (`now - last_ran < cache_hot`)
//!   unless `nr_balance_failed > cache_nice_tries`. No active balancing (the running task
//!   is never pushed).
//! - SCHED_IDLE and SCHED_DEADLINE did not exist in 2.6.18: such tasks are rejected.
//! - There is no `interactive_credit`: 2.6.18's `recalc_task_prio` has none (it was dropped
//!   before 2.6.17); the wake-up rules are exactly the ceiling / NONINTERACTIVE ones above.
//! - As in the kernel, `time_slice` is counted in whole ticks (a task running at a tick is
//!   charged the jiffy), while sleep_avg is kept in ns.
//! - `load_balance`'s interval doubling, `cpu_load[]` averaging, sched groups / cpu_power
//!   and `SD_BALANCE_EXEC` are not modelled.

use super::tunables::{self, Tunable, MAX};
use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

/// MAX_PRIO: 100 RT levels + 40 nice levels.
pub const MAX_PRIO: usize = 140;
const MAX_RT_PRIO: i32 = 100;
const MAX_USER_PRIO: i64 = 40;
pub(crate) const WORDS: usize = MAX_PRIO.div_ceil(64);
pub(crate) const NIL: u32 = u32::MAX;
/// SCHED_LOAD_SCALE (include/linux/sched.h:616).
const SCHED_LOAD_SCALE: u64 = 128;

/// One `prio_array`: a FIFO list per priority plus the bitmap of non-empty levels.
#[derive(Clone)]
pub(crate) struct PrioArray {
    pub(crate) head: [u32; MAX_PRIO],
    pub(crate) tail: [u32; MAX_PRIO],
    pub(crate) bitmap: [u64; WORDS],
    pub(crate) nr_active: u32,
}

impl PrioArray {
    pub(crate) fn new() -> Self {
        PrioArray {
            head: [NIL; MAX_PRIO],
            tail: [NIL; MAX_PRIO],
            bitmap: [0; WORDS],
            nr_active: 0,
        }
    }

    /// sched_find_first_bit: word 0 (RT levels) first.
    pub(crate) fn first(&self) -> Option<usize> {
        self.bitmap
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }
}

/// Per-CPU `struct rq` (the parts the policy uses).
#[derive(Clone)]
struct Rq {
    arrays: [PrioArray; 2],
    /// Index of `rq->active` in `arrays` (the other one is `rq->expired`).
    active: usize,
    nr_running: u32,
    raw_weighted_load: u64,
    /// `rq->expired_timestamp` in jiffies (`None` = 0 in the kernel).
    expired_timestamp: Option<u64>,
    best_expired_prio: i32,
    nr_balance_failed: u32,
    /// Jiffy of the next busy rebalance.
    next_balance: u64,
}

impl Rq {
    fn new() -> Self {
        Rq {
            arrays: [PrioArray::new(), PrioArray::new()],
            active: 0,
            nr_running: 0,
            raw_weighted_load: 0,
            expired_timestamp: None,
            best_expired_prio: MAX_PRIO as i32,
            nr_balance_failed: 0,
            next_balance: 0,
        }
    }
}

/// `enum sleep_type` (include/linux/sched.h:761-764).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepType {
    Normal,
    NonInteractive,
    Interactive,
    Interrupted,
}

/// Per-task scheduler state (the O(1) fields of `task_struct`).
#[derive(Clone, Copy)]
struct Task {
    next: u32,
    prev: u32,
    queued: bool,
    cpu: u32,
    /// Which of the CPU's two arrays the task is linked in (`p->array`).
    arr: u8,
    /// Array index remembered across a DEQUEUE_SAVE / ENQUEUE_RESTORE pair or a
    /// block-and-wake at the same instant.
    saved_arr: u8,
    /// Load weight the task was linked with (subtracted exactly on unlink).
    weight: u64,
    static_prio: i32,
    normal_prio: i32,
    prio: i32,
    /// Level the task is linked at (equals `prio` except transiently).
    level: u8,
    sleep_avg: u64,
    timestamp: u64,
    last_ran: u64,
    sleep_type: SleepType,
    /// Remaining slice in jiffies.
    time_slice: u32,
    first_time_slice: bool,
    /// The forking task (`p->parent`), as given to `task_new`.
    parent: u32,
}

/// The tunables (plugsched's `/sys/cpusched/ingosched/*`), times in ms.
#[derive(Clone, Debug)]
pub struct Params {
    pub min_timeslice_ms: u64,
    pub def_timeslice_ms: u64,
    pub granularity_ms: u64,
    pub prio_bonus_ratio: u64,
    pub interactive_delta: i64,
    /// `None` = DEF_TIMESLICE × MAX_BONUS (the kernel's definition).
    pub max_sleep_avg_ms: Option<u64>,
    /// `None` = MAX_SLEEP_AVG.
    pub starvation_limit_ms: Option<u64>,
    pub on_runqueue_weight: u64,
    pub child_penalty: u64,
    pub parent_penalty: u64,
    pub exit_weight: u64,
    pub imbalance_pct: u64,
    pub busy_balance_ms: u64,
    pub cache_hot_us: u64,
    pub cache_nice_tries: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_timeslice_ms: 5,
            def_timeslice_ms: 100,
            granularity_ms: 10,
            prio_bonus_ratio: 25,
            interactive_delta: 2,
            max_sleep_avg_ms: None,
            starvation_limit_ms: None,
            on_runqueue_weight: 30,
            child_penalty: 95,
            parent_penalty: 100,
            exit_weight: 3,
            imbalance_pct: 125,
            busy_balance_ms: 64,
            cache_hot_us: 2500,
            cache_nice_tries: 1,
        }
    }
}

/// The constants of kernel/sched.c l.60-186 evaluated for one HZ and parameter set.
#[derive(Clone, Copy, Debug)]
pub struct Consts {
    pub hz: u64,
    pub tick_ns: u64,
    /// MIN_TIMESLICE, DEF_TIMESLICE in jiffies.
    pub min_timeslice: u64,
    pub def_timeslice: u64,
    pub max_bonus: i64,
    /// MAX_SLEEP_AVG in jiffies, NS_MAX_SLEEP_AVG in ns.
    pub max_sleep_avg: u64,
    pub ns_max_sleep_avg: u64,
    /// STARVATION_LIMIT in jiffies.
    pub starvation_limit: u64,
    /// GRANULARITY in jiffies.
    pub granularity: u64,
    pub interactive_delta: i64,
}

impl Consts {
    pub fn new(p: &Params, hz: u32) -> Consts {
        let hz = hz as u64;
        let ms = |x: u64| x * hz / 1000;
        let def_timeslice = ms(p.def_timeslice_ms);
        let max_bonus = MAX_USER_PRIO * p.prio_bonus_ratio as i64 / 100;
        let max_sleep_avg = match p.max_sleep_avg_ms {
            Some(v) => ms(v),
            None => def_timeslice * max_bonus.max(0) as u64,
        }
        .max(1);
        let tick_ns = 1_000_000_000 / hz;
        Consts {
            hz,
            tick_ns,
            min_timeslice: ms(p.min_timeslice_ms).max(1),
            def_timeslice: def_timeslice.max(1),
            max_bonus: max_bonus.max(1),
            max_sleep_avg,
            ns_max_sleep_avg: max_sleep_avg * tick_ns,
            starvation_limit: match p.starvation_limit_ms {
                Some(v) => ms(v),
                None => max_sleep_avg,
            },
            granularity: ms(p.granularity_ms).max(1),
            interactive_delta: p.interactive_delta,
        }
    }

    /// SCALE_PRIO / static_prio_timeslice (l.164-186), in jiffies.
    pub fn static_prio_timeslice(&self, static_prio: i32) -> u64 {
        let base = if static_prio < 120 {
            self.def_timeslice * 4
        } else {
            self.def_timeslice
        };
        let sp = static_prio.clamp(MAX_RT_PRIO, MAX_PRIO as i32 - 1) as u64;
        (base * (MAX_PRIO as u64 - sp) / (MAX_USER_PRIO as u64 / 2)).max(self.min_timeslice)
    }

    /// CURRENT_BONUS (l.131): `NS_TO_JIFFIES(sleep_avg) * MAX_BONUS / MAX_SLEEP_AVG`.
    pub fn current_bonus(&self, sleep_avg: u64) -> i64 {
        ((sleep_avg / self.tick_ns) as i64 * self.max_bonus) / self.max_sleep_avg as i64
    }

    /// `__normal_prio` (within l.713-830): static_prio − (bonus − MAX_BONUS/2), clamped to 100..139.
    pub fn normal_prio(&self, static_prio: i32, sleep_avg: u64) -> i32 {
        let bonus = self.current_bonus(sleep_avg) - self.max_bonus / 2;
        (static_prio as i64 - bonus).clamp(MAX_RT_PRIO as i64, MAX_PRIO as i64 - 1) as i32
    }

    /// DELTA(p) (l.149): SCALE(nice+20, 40, MAX_BONUS) − SCALE(20, 40, MAX_BONUS) + INTERACTIVE_DELTA.
    pub fn delta(&self, static_prio: i32) -> i64 {
        let nice = static_prio as i64 - 120;
        (nice + 20) * self.max_bonus / MAX_USER_PRIO - 20 * self.max_bonus / MAX_USER_PRIO
            + self.interactive_delta
    }

    /// TASK_INTERACTIVE(p) (l.153).
    pub fn task_interactive(&self, prio: i32, static_prio: i32) -> bool {
        prio as i64 <= static_prio as i64 - self.delta(static_prio)
    }

    /// INTERACTIVE_SLEEP(p) (l.156), in ns.
    pub fn interactive_sleep(&self, static_prio: i32) -> u64 {
        let j = self.max_sleep_avg as i64 * (self.max_bonus / 2 + self.delta(static_prio) + 1)
            / self.max_bonus
            - 1;
        j.max(0) as u64 * self.tick_ns
    }

    /// TIMESLICE_GRANULARITY(p) (l.136-144), in jiffies, times the number of CPUs on SMP.
    pub fn timeslice_granularity(&self, sleep_avg: u64, nr_cpus: usize) -> u64 {
        let d = (self.max_bonus - self.current_bonus(sleep_avg)).max(1);
        let shift = (d - 1).min(40) as u32;
        self.granularity * (1u64 << shift) * nr_cpus as u64
    }

    /// LOAD_WEIGHT (l.737-765): a timeslice in jiffies scaled so nice 0 weighs 128.
    fn load_weight(&self, ts: u64) -> u64 {
        ts * SCHED_LOAD_SCALE / self.def_timeslice
    }
}

fn is_rt(a: &SchedAttrs) -> bool {
    matches!(a.policy, Policy::Fifo | Policy::Rr)
}

/// The policy.
pub struct LinuxO1 {
    rq: Vec<Rq>,
    tasks: Vec<Task>,
    params: Params,
}

impl LinuxO1 {
    pub fn new(nr_cpus: usize) -> Self {
        LinuxO1 {
            rq: (0..nr_cpus).map(|_| Rq::new()).collect(),
            tasks: Vec::new(),
            params: Params::default(),
        }
    }

    /// The constants for this run's HZ.
    pub fn consts(&self, hz: u32) -> Consts {
        Consts::new(&self.params, hz)
    }

    /// `task_timeslice(p)` in jiffies for a task of static priority `static_prio`.
    pub fn task_timeslice(&self, hz: u32, static_prio: i32) -> u64 {
        self.consts(hz).static_prio_timeslice(static_prio)
    }

    // ---- read-only accessors for tests and traces
    pub fn prio(&self, t: TaskId) -> i32 {
        self.tasks[t.idx()].prio
    }
    pub fn static_prio(&self, t: TaskId) -> i32 {
        self.tasks[t.idx()].static_prio
    }
    pub fn sleep_avg(&self, t: TaskId) -> u64 {
        self.tasks[t.idx()].sleep_avg
    }
    pub fn time_slice(&self, t: TaskId) -> u32 {
        self.tasks[t.idx()].time_slice
    }
    pub fn first_time_slice(&self, t: TaskId) -> bool {
        self.tasks[t.idx()].first_time_slice
    }
    pub fn sleep_type(&self, t: TaskId) -> SleepType {
        self.tasks[t.idx()].sleep_type
    }
    /// `Some(true)` if queued in its CPU's expired array, `Some(false)` if in the active
    /// one, `None` if not queued.
    pub fn in_expired(&self, t: TaskId) -> Option<bool> {
        let x = &self.tasks[t.idx()];
        x.queued
            .then(|| x.arr as usize != self.rq[x.cpu as usize].active)
    }
    /// Tasks queued on `cpu`'s active array at `prio`, head first.
    pub fn active_list(&self, cpu: CpuId, prio: usize) -> Vec<TaskId> {
        let rq = &self.rq[cpu.idx()];
        let mut v = Vec::new();
        let mut x = rq.arrays[rq.active].head[prio];
        while x != NIL {
            v.push(TaskId(x));
            x = self.tasks[x as usize].next;
        }
        v
    }
    /// Set a task's sleep_avg and recompute its priority (test helper).
    #[doc(hidden)]
    pub fn set_sleep_avg_for_test(&mut self, ctx: &Ctx, t: TaskId, ns: u64) {
        let k = self.consts(ctx.hz());
        let x = &mut self.tasks[t.idx()];
        x.sleep_avg = ns;
        if !is_rt(&ctx.task(t).attrs) {
            x.normal_prio = k.normal_prio(x.static_prio, ns);
            x.prio = x.normal_prio;
        }
    }
    /// Set a task's remaining slice (test helper).
    #[doc(hidden)]
    pub fn set_time_slice_for_test(&mut self, t: TaskId, ticks: u32) {
        self.tasks[t.idx()].time_slice = ticks;
    }

    // ---- list primitives (enqueue_task / dequeue_task / requeue_task)

    fn task_weight(&self, k: &Consts, a: &SchedAttrs, static_prio: i32) -> u64 {
        if is_rt(a) {
            k.load_weight(k.static_prio_timeslice(MAX_RT_PRIO))
                + k.load_weight(a.rt_priority as u64)
        } else {
            k.load_weight(k.static_prio_timeslice(static_prio))
        }
    }

    /// Link `t` at the tail (or head) of `cpu`'s array `arr` at level `prio`.
    fn link(&mut self, cpu: usize, arr: usize, t: TaskId, head: bool, weight: u64) {
        let level = self.tasks[t.idx()].prio.clamp(0, MAX_PRIO as i32 - 1) as usize;
        let id = t.0;
        let a = &mut self.rq[cpu].arrays[arr];
        let (prev, next) = if head {
            (NIL, a.head[level])
        } else {
            (a.tail[level], NIL)
        };
        if prev == NIL {
            a.head[level] = id;
        } else {
            self.tasks[prev as usize].next = id;
        }
        if next == NIL {
            a.tail[level] = id;
        } else {
            self.tasks[next as usize].prev = id;
        }
        a.bitmap[level / 64] |= 1 << (level % 64);
        a.nr_active += 1;
        let x = &mut self.tasks[t.idx()];
        x.next = next;
        x.prev = prev;
        x.queued = true;
        x.cpu = cpu as u32;
        x.arr = arr as u8;
        x.level = level as u8;
        x.weight = weight;
        let rq = &mut self.rq[cpu];
        rq.nr_running += 1;
        rq.raw_weighted_load += weight;
    }

    /// Link `t` immediately before `before` (same array and level).
    fn link_before(&mut self, t: TaskId, before: TaskId, weight: u64) {
        let b = self.tasks[before.idx()];
        let (cpu, arr, level) = (b.cpu as usize, b.arr as usize, b.level as usize);
        let a = &mut self.rq[cpu].arrays[arr];
        if b.prev == NIL {
            a.head[level] = t.0;
        } else {
            self.tasks[b.prev as usize].next = t.0;
        }
        a.nr_active += 1;
        self.tasks[before.idx()].prev = t.0;
        let x = &mut self.tasks[t.idx()];
        x.next = before.0;
        x.prev = b.prev;
        x.queued = true;
        x.cpu = cpu as u32;
        x.arr = arr as u8;
        x.level = level as u8;
        x.weight = weight;
        let rq = &mut self.rq[cpu];
        rq.nr_running += 1;
        rq.raw_weighted_load += weight;
    }

    fn unlink(&mut self, t: TaskId) {
        let x = self.tasks[t.idx()];
        if !x.queued {
            return;
        }
        let (cpu, level) = (x.cpu as usize, x.level as usize);
        let a = &mut self.rq[cpu].arrays[x.arr as usize];
        if x.prev == NIL {
            a.head[level] = x.next;
        } else {
            self.tasks[x.prev as usize].next = x.next;
        }
        if x.next == NIL {
            a.tail[level] = x.prev;
        } else {
            self.tasks[x.next as usize].prev = x.prev;
        }
        if a.head[level] == NIL {
            a.bitmap[level / 64] &= !(1 << (level % 64));
        }
        a.nr_active -= 1;
        let rq = &mut self.rq[cpu];
        rq.nr_running -= 1;
        rq.raw_weighted_load -= x.weight;
        let x = &mut self.tasks[t.idx()];
        x.queued = false;
        x.saved_arr = x.arr;
    }

    /// Move a queued task to another array / the tail of its (possibly new) prio level.
    fn relink(&mut self, t: TaskId, arr: usize) {
        let x = self.tasks[t.idx()];
        self.unlink(t);
        self.link(x.cpu as usize, arr, t, false, x.weight);
    }

    fn active(&self, cpu: usize) -> usize {
        self.rq[cpu].active
    }

    fn expired(&self, cpu: usize) -> usize {
        1 - self.rq[cpu].active
    }

    // ---- priority bookkeeping

    /// effective_prio(): RT tasks keep 99 − rt_priority, others get normal_prio.
    fn effective_prio(&mut self, k: &Consts, a: &SchedAttrs, t: TaskId) -> i32 {
        let x = &mut self.tasks[t.idx()];
        x.normal_prio = if is_rt(a) {
            MAX_RT_PRIO - 1 - a.rt_priority
        } else {
            k.normal_prio(x.static_prio, x.sleep_avg)
        };
        x.normal_prio
    }

    /// recalc_task_prio (l.855-920) with `sleep_time` already computed.
    fn recalc_task_prio(&mut self, k: &Consts, a: &SchedAttrs, t: TaskId, sleep_time: u64) -> i32 {
        let sleep_time = if a.policy == Policy::Batch {
            0
        } else {
            sleep_time
        };
        let x = &mut self.tasks[t.idx()];
        if sleep_time > 0 {
            let ceiling = k.interactive_sleep(x.static_prio);
            // p->mm is always set: every task is a user task.
            if sleep_time > ceiling && x.sleep_avg < ceiling {
                x.sleep_avg = ceiling;
                x.sleep_type = SleepType::NonInteractive;
            } else {
                let mut st = sleep_time;
                if x.sleep_type == SleepType::NonInteractive {
                    if x.sleep_avg >= ceiling {
                        st = 0;
                    } else if x.sleep_avg + st >= ceiling {
                        x.sleep_avg = ceiling;
                        st = 0;
                    }
                }
                x.sleep_avg += st;
            }
            x.sleep_avg = x.sleep_avg.min(k.ns_max_sleep_avg);
        }
        self.effective_prio(k, a, t)
    }

    /// The body of scheduler_tick for the running non-idle task `t` (l.2988-3080).
    fn do_tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let c = cpu.idx();
        if !self.tasks[t.idx()].queued {
            return;
        }
        if self.tasks[t.idx()].arr as usize != self.active(c) {
            ctx.resched(cpu);
            return;
        }
        let k = self.consts(ctx.hz());
        let a = ctx.task(t).attrs;
        ctx.count_work(1);
        if is_rt(&a) {
            if a.policy == Policy::Rr {
                let x = &mut self.tasks[t.idx()];
                x.time_slice = x.time_slice.saturating_sub(1);
                if x.time_slice == 0 {
                    x.time_slice = k.static_prio_timeslice(x.static_prio) as u32;
                    x.first_time_slice = false;
                    ctx.resched(cpu);
                    self.relink(t, self.active(c));
                }
            }
            return;
        }
        let x = &mut self.tasks[t.idx()];
        x.time_slice = x.time_slice.saturating_sub(1);
        if x.time_slice == 0 {
            // dequeue_task leaves rq->nr_running alone; our unlink does not, so count
            // the task back in for expired_starving below.
            let nr_running = self.rq[c].nr_running;
            self.unlink(t);
            ctx.resched(cpu);
            let prio = self.effective_prio(&k, &a, t);
            let x = &mut self.tasks[t.idx()];
            x.prio = prio;
            x.time_slice = k.static_prio_timeslice(x.static_prio) as u32;
            x.first_time_slice = false;
            let jiffies = ctx.now() / k.tick_ns;
            if self.rq[c].expired_timestamp.is_none() {
                self.rq[c].expired_timestamp = Some(jiffies);
            }
            let sp = self.tasks[t.idx()].static_prio;
            let w = self.task_weight(&k, &a, sp);
            if !k.task_interactive(prio, sp)
                || self.expired_starving(&k, c, sp, jiffies, nr_running)
            {
                self.link(c, self.expired(c), t, false, w);
                let rq = &mut self.rq[c];
                rq.best_expired_prio = rq.best_expired_prio.min(sp);
            } else {
                self.link(c, self.active(c), t, false, w);
            }
        } else {
            let x = self.tasks[t.idx()];
            let ts = k.static_prio_timeslice(x.static_prio);
            let gran = k.timeslice_granularity(x.sleep_avg, ctx.nr_cpus());
            if k.task_interactive(x.prio, x.static_prio)
                && ts.saturating_sub(x.time_slice as u64).is_multiple_of(gran)
                && x.time_slice as u64 >= gran
            {
                self.relink(t, self.active(c));
                ctx.resched(cpu);
            }
        }
    }

    /// expired_starving(rq) (l.2897-2905), with `rq->curr->static_prio` = `curr_sp`.
    fn expired_starving(
        &self,
        k: &Consts,
        c: usize,
        curr_sp: i32,
        jiffies: u64,
        nr_running: u32,
    ) -> bool {
        let rq = &self.rq[c];
        if curr_sp > rq.best_expired_prio {
            return true;
        }
        if k.starvation_limit == 0 {
            return false;
        }
        match rq.expired_timestamp {
            Some(ts) => jiffies - ts > k.starvation_limit * nr_running as u64,
            None => false,
        }
    }

    fn cpu_idle(&self, ctx: &Ctx, c: CpuId) -> bool {
        ctx.curr(c).is_none() && self.rq[c.idx()].nr_running == 0
    }

    /// can_migrate_task (within l.2089-2205): not running, allowed on `to`, not cache-hot unless
    /// balancing keeps failing.
    fn can_migrate(&self, ctx: &Ctx, t: TaskId, to: CpuId, hot_ok: bool) -> bool {
        let v = ctx.task(t);
        if v.running || !v.affinity.contains(to) {
            return false;
        }
        hot_ok
            || ctx.now().saturating_sub(self.tasks[t.idx()].last_ran)
                >= self.params.cache_hot_us * 1000
    }

    /// load_balance / load_balance_newidle / the idle CPU's rebalance: pull from `from`
    /// (the busiest CPU) to `this`. Returns the number of tasks moved.
    fn pull_from(&mut self, ctx: &mut Ctx, this: CpuId, from: CpuId, newidle: bool) -> u32 {
        let (fc, tc) = (from.idx(), this.idx());
        let max_load = self.rq[fc].raw_weighted_load;
        let this_load = self.rq[tc].raw_weighted_load;
        let nr = self.rq[fc].nr_running;
        if nr < 2 || 100 * max_load <= self.params.imbalance_pct * this_load {
            return 0;
        }
        let diff = max_load - this_load;
        let per_task = max_load / nr as u64;
        let mut rem = diff / 2;
        let mut one = false;
        if rem < per_task {
            // "small imbalance": move one task's worth if that helps (imbn = 2).
            if diff < per_task * 2 {
                return 0;
            }
            one = true;
        }
        let hot_ok = self.rq[tc].nr_balance_failed > self.params.cache_nice_tries;
        let mut moved = 0;
        let arrays = [self.expired(fc), self.active(fc)];
        'scan: for arr in arrays {
            let mut bits = self.rq[fc].arrays[arr].bitmap;
            while let Some(level) = first_bit(&bits) {
                bits[level / 64] &= !(1 << (level % 64));
                let mut x = self.rq[fc].arrays[arr].tail[level];
                while x != NIL {
                    let t = TaskId(x);
                    let prevx = self.tasks[x as usize].prev;
                    ctx.count_work(1);
                    if self.can_migrate(ctx, t, this, hot_ok) {
                        let w = self.tasks[t.idx()].weight;
                        if one || w <= rem || moved == 0 && w / 2 <= rem {
                            // pull_task: same-named array on this CPU.
                            let dest_arr = if arr == self.active(fc) {
                                self.active(tc)
                            } else {
                                self.expired(tc)
                            };
                            self.unlink(t);
                            ctx.set_task_cpu(t, this);
                            self.link(tc, dest_arr, t, false, w);
                            moved += 1;
                            rem = rem.saturating_sub(w);
                            match ctx.curr(this) {
                                Some(c) => {
                                    if self.tasks[t.idx()].prio < self.tasks[c.idx()].prio {
                                        ctx.resched(this);
                                    }
                                }
                                None => {
                                    if !newidle {
                                        ctx.resched(this);
                                    }
                                }
                            }
                            if one || rem == 0 {
                                break 'scan;
                            }
                        }
                    }
                    x = prevx;
                }
            }
        }
        if moved == 0 {
            self.rq[tc].nr_balance_failed += 1;
        } else {
            self.rq[tc].nr_balance_failed = 0;
        }
        moved
    }

    /// find_busiest_queue over the CPUs (one flat domain).
    fn busiest(&self, ctx: &Ctx, this: CpuId) -> Option<CpuId> {
        (0..self.rq.len())
            .map(|c| CpuId(c as u32))
            .filter(|&c| c != this && self.rq[c.idx()].nr_running >= 2)
            .max_by_key(|c| (self.rq[c.idx()].raw_weighted_load, std::cmp::Reverse(c.0)))
            .filter(|_| ctx.nr_cpus() > 1)
    }
}

/// The lowest set bit of a priority bitmap (`sched_find_first_bit`).
pub(super) fn first_bit(bits: &[u64; WORDS]) -> Option<usize> {
    bits.iter()
        .enumerate()
        .find(|(_, w)| **w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

/// Wake-up and fork placement of the O(1) family (2.6 `wake_up_new_task` /
/// `try_to_wake_up` as modelled here; nicksched shares it): a forked task starts on its
/// parent's CPU when allowed, else on the least-loaded allowed CPU; a woken task goes to
/// its previous CPU if idle, else to the next idle allowed CPU after it, else stays on its
/// previous CPU (or the least-loaded one if that is no longer allowed). `load` orders the
/// CPUs (ties by number), `idle` says whether a CPU has nothing to run.
pub(super) fn wake_placement(
    ctx: &Ctx,
    aff: CpuMask,
    prev: CpuId,
    kind: WakeKind,
    parent_cpu: Option<CpuId>,
    load: impl Fn(CpuId) -> (u32, u64),
    idle: impl Fn(CpuId) -> bool,
) -> CpuId {
    let least_loaded = || {
        aff.iter()
            .min_by_key(|&c| (load(c), c.0))
            .expect("empty affinity")
    };
    match kind {
        WakeKind::Fork => parent_cpu
            .filter(|&pc| aff.contains(pc))
            .unwrap_or_else(least_loaded),
        WakeKind::Wakeup => {
            let n = ctx.nr_cpus() as u32;
            (0..n)
                .map(|i| CpuId((prev.0 + i) % n))
                .find(|&c| aff.contains(c) && idle(c))
                .unwrap_or_else(|| {
                    if aff.contains(prev) {
                        prev
                    } else {
                        least_loaded()
                    }
                })
        }
    }
}

/// The O(1) scheduler's tunables (`#define`s of kernel/sched.c made settable).
fn tunables() -> Vec<Tunable<Params>> {
    vec![
        Tunable::ms(
            "min_timeslice",
            "MIN_TIMESLICE in ms (at least one jiffy)",
            0,
            MAX,
            |p| &mut p.min_timeslice_ms,
        ),
        Tunable::ms(
            "def_timeslice",
            "DEF_TIMESLICE in ms (nice 0 slice)",
            1,
            MAX,
            |p| &mut p.def_timeslice_ms,
        ),
        Tunable::ms(
            "granularity",
            "GRANULARITY in ms: round-robin interval of interactive tasks at full bonus",
            0,
            MAX,
            |p| &mut p.granularity_ms,
        ),
        Tunable::int(
            "prio_bonus_ratio",
            "PRIO_BONUS_RATIO in percent of the 40 nice levels (MAX_BONUS = 40*ratio/100)",
            3,
            100,
            |p| &mut p.prio_bonus_ratio,
        ),
        Tunable::int(
            "interactive_delta",
            "INTERACTIVE_DELTA: bonus margin for TASK_INTERACTIVE",
            -MAX,
            MAX,
            |p| &mut p.interactive_delta,
        ),
        Tunable::ms(
            "max_sleep_avg",
            "MAX_SLEEP_AVG in ms",
            1,
            MAX,
            |p: &mut Params| &mut p.max_sleep_avg_ms,
        )
        .derived("DEF_TIMESLICE*MAX_BONUS (1000)"),
        Tunable::ms(
            "starvation_limit",
            "STARVATION_LIMIT in ms per runnable task (0 = never starving)",
            0,
            MAX,
            |p: &mut Params| &mut p.starvation_limit_ms,
        )
        .derived("MAX_SLEEP_AVG (1000)"),
        Tunable::int(
            "on_runqueue_weight",
            "ON_RUNQUEUE_WEIGHT: percent of runqueue wait credited as sleep",
            0,
            MAX,
            |p| &mut p.on_runqueue_weight,
        ),
        Tunable::int(
            "child_penalty",
            "CHILD_PENALTY: percent of sleep_avg bonus a forked child keeps",
            0,
            MAX,
            |p| &mut p.child_penalty,
        ),
        Tunable::int(
            "parent_penalty",
            "PARENT_PENALTY: percent of sleep_avg bonus the parent keeps at fork",
            0,
            MAX,
            |p| &mut p.parent_penalty,
        ),
        Tunable::int(
            "exit_weight",
            "EXIT_WEIGHT: parent:child blend of sleep_avg when a child exits",
            0,
            MAX,
            |p| &mut p.exit_weight,
        ),
        Tunable::int(
            "imbalance_pct",
            "sched domain imbalance_pct (SD_CPU_INIT)",
            100,
            MAX,
            |p| &mut p.imbalance_pct,
        ),
        Tunable::ms(
            "busy_balance_ms",
            "busy CPU rebalance interval in ms (balance_interval 1 ms x busy_factor 64)",
            0,
            MAX,
            |p| &mut p.busy_balance_ms,
        ),
        Tunable::int(
            "cache_hot_us",
            "cache_hot_time in us (calibrated at boot in the kernel)",
            0,
            MAX,
            |p| &mut p.cache_hot_us,
        ),
        Tunable::int(
            "cache_nice_tries",
            "balance failures after which cache-hot tasks may migrate",
            0,
            MAX,
            |p| &mut p.cache_nice_tries,
        ),
    ]
}

impl Scheduler for LinuxO1 {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-o1",
            summary: "Linux 2.6.18 O(1) scheduler: per-CPU active/expired 140-level priority \
                      arrays, sleep_avg interactivity bonus, nice-scaled timeslices",
            source: "Linux 2.6.18 kernel/sched.c l.60-186, 663-970, 1362-1720, 2089-2495, \
                     2897-3080, 3257-3425, 3865-3915, 4023-4040, 4405-4450",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "linux-o1", name, value)
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match attrs.policy {
            Policy::Deadline => {
                Err("SCHED_DEADLINE is not modelled by linux-o1 (added in Linux 3.14)".into())
            }
            Policy::Idle => {
                Err("SCHED_IDLE is not modelled by linux-o1 (added in Linux 2.6.23)".into())
            }
            _ => Ok(()),
        }
    }

    /// sched_fork (within l.1536-1720): prio from the parent's normal_prio, half the parent's
    /// remaining slice (rounded up for the child), first_time_slice.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        debug_assert_eq!(t.idx(), self.tasks.len());
        let k = self.consts(ctx.hz());
        let a = ctx.task(t).attrs;
        let static_prio = 120 + a.nice.clamp(-20, 19);
        let mut x = Task {
            next: NIL,
            prev: NIL,
            queued: false,
            cpu: ctx.task(t).cpu.0,
            arr: 0,
            saved_arr: 0,
            weight: 0,
            static_prio,
            normal_prio: 0,
            prio: 0,
            level: 0,
            sleep_avg: 0,
            timestamp: ctx.now(),
            last_ran: ctx.now(),
            sleep_type: SleepType::Normal,
            time_slice: k.static_prio_timeslice(static_prio) as u32,
            first_time_slice: false,
            parent: parent.map_or(NIL, |p| p.0),
        };
        let parent = parent.filter(|p| !ctx.task(*p).exited);
        if let Some(p) = parent {
            // The child is a copy of the parent: sleep_avg and sleep_type are inherited.
            let px = self.tasks[p.idx()];
            // (A SCHED_BATCH child of a non-batch template starts at sleep_avg 0, as
            // __setscheduler would leave it.)
            x.sleep_avg = if a.policy == Policy::Batch {
                0
            } else {
                px.sleep_avg
            };
            x.sleep_type = px.sleep_type;
            x.time_slice = px.time_slice.div_ceil(2);
            x.first_time_slice = true;
            self.tasks[p.idx()].time_slice = px.time_slice / 2;
        }
        self.tasks.push(x);
        let np = self.effective_prio(&k, &a, t);
        self.tasks[t.idx()].prio = np;
        if let Some(p) = parent {
            if self.tasks[p.idx()].time_slice == 0 {
                // The parent's slice was used up by the split: it gets one jiffy and
                // scheduler_tick() runs at once, expiring it.
                self.tasks[p.idx()].time_slice = 1;
                let pv = ctx.task(p);
                if pv.running {
                    let cpu = pv.cpu;
                    self.do_tick(ctx, cpu, p);
                }
            }
        }
    }

    /// sched_exit (within l.1536-1720): give an unused first slice back to the parent and blend
    /// sleep_avg 3:1.
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        let k = self.consts(ctx.hz());
        let p = self.tasks[t.idx()].parent;
        if p == NIL {
            return;
        }
        let p = TaskId(p);
        if ctx.task(p).exited {
            return;
        }
        let cx = self.tasks[t.idx()];
        let same_cpu = ctx.task(t).cpu == ctx.task(p).cpu;
        let px = &mut self.tasks[p.idx()];
        if cx.first_time_slice && same_cpu {
            let cap = k.static_prio_timeslice(cx.static_prio) as u32;
            px.time_slice = (px.time_slice + cx.time_slice).min(cap);
        }
        if cx.sleep_avg < px.sleep_avg {
            let w = self.params.exit_weight;
            px.sleep_avg = px.sleep_avg / (w + 1) * w + cx.sleep_avg / (w + 1);
        }
    }

    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let parent = Some(self.tasks[t.idx()].parent).filter(|&p| p != NIL);
        let parent_cpu = parent.map(|p| ctx.task(TaskId(p)).cpu);
        wake_placement(
            ctx,
            ctx.task(t).affinity,
            prev,
            kind,
            parent_cpu,
            |c| {
                let rq = &self.rq[c.idx()];
                (rq.nr_running, rq.raw_weighted_load)
            },
            |c| self.cpu_idle(ctx, c),
        )
    }

    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        let k = self.consts(ctx.hz());
        let a = ctx.task(t).attrs;
        let c = cpu.idx();
        ctx.count_work(1);
        let now = ctx.now();
        match kind {
            EnqueueKind::Wakeup if ctx.task(t).running => {
                // Blocked and woken at the same instant before its CPU switched away: in
                // 2.6.18 it was never deactivated (schedule() had not run yet).
                let arr = self.tasks[t.idx()].saved_arr as usize;
                let w = self.task_weight(&k, &a, self.tasks[t.idx()].static_prio);
                self.link(c, arr, t, true, w);
            }
            EnqueueKind::Wakeup => {
                // activate_task (l.927-970).
                if !is_rt(&a) {
                    let st = now.saturating_sub(self.tasks[t.idx()].timestamp);
                    let p = self.recalc_task_prio(&k, &a, t, st);
                    self.tasks[t.idx()].prio = p;
                }
                let x = &mut self.tasks[t.idx()];
                if x.sleep_type == SleepType::Normal {
                    x.sleep_type = SleepType::Interactive;
                }
                x.timestamp = now;
                let arr = if a.policy == Policy::Batch {
                    self.expired(c)
                } else {
                    self.active(c)
                };
                let w = self.task_weight(&k, &a, self.tasks[t.idx()].static_prio);
                self.link(c, arr, t, false, w);
            }
            EnqueueKind::New => {
                // wake_up_new_task (within l.1536-1720).
                let parent = Some(self.tasks[t.idx()].parent)
                    .filter(|&p| p != NIL)
                    .map(TaskId)
                    .filter(|p| !ctx.task(*p).exited);
                let w = self.task_weight(&k, &a, self.tasks[t.idx()].static_prio);
                let x = &mut self.tasks[t.idx()];
                if parent.is_some() {
                    let b = k.current_bonus(x.sleep_avg);
                    x.sleep_avg = ((b * self.params.child_penalty as i64 / 100
                        * k.max_sleep_avg as i64
                        / k.max_bonus)
                        .max(0) as u64)
                        * k.tick_ns;
                }
                x.timestamp = now;
                let p = self.effective_prio(&k, &a, t);
                self.tasks[t.idx()].prio = p;
                match parent {
                    Some(par)
                        if ctx.task(par).cpu == cpu
                            && ctx.curr(cpu) == Some(par)
                            && self.tasks[par.idx()].queued =>
                    {
                        // Linked just ahead of the running parent with its prio; the child
                        // runs first.
                        let px = self.tasks[par.idx()];
                        let x = &mut self.tasks[t.idx()];
                        x.prio = px.prio;
                        x.normal_prio = px.normal_prio;
                        self.link_before(t, par, w);
                        ctx.resched(cpu);
                    }
                    _ => {
                        let arr = if a.policy == Policy::Batch {
                            self.expired(c)
                        } else {
                            self.active(c)
                        };
                        self.link(c, arr, t, false, w);
                    }
                }
                if let Some(par) = parent {
                    let px = &mut self.tasks[par.idx()];
                    let b = k.current_bonus(px.sleep_avg);
                    px.sleep_avg = ((b * self.params.parent_penalty as i64 / 100
                        * k.max_sleep_avg as i64
                        / k.max_bonus)
                        .max(0) as u64)
                        * k.tick_ns;
                }
            }
            EnqueueKind::Restore => {
                // set_user_nice / __setscheduler (l.3865-3915, 4023-4040): new static_prio,
                // prio = effective_prio (bonus retained), same array.
                let x = &mut self.tasks[t.idx()];
                x.static_prio = 120 + a.nice.clamp(-20, 19);
                if a.policy == Policy::Batch {
                    x.sleep_avg = 0;
                }
                let arr = if is_rt(&a) {
                    self.active(c)
                } else {
                    self.tasks[t.idx()].saved_arr as usize
                };
                let p = self.effective_prio(&k, &a, t);
                self.tasks[t.idx()].prio = p;
                let w = self.task_weight(&k, &a, self.tasks[t.idx()].static_prio);
                self.link(c, arr, t, false, w);
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        ctx.count_work(1);
        self.unlink(t);
    }

    /// TASK_PREEMPTS_CURR (l.160): strictly better prio — tested only when the wake-up is
    /// not a sync one onto the waker's own CPU (try_to_wake_up, `if (!sync || cpu !=
    /// this_cpu)`: the waker is about to sleep, so the wakee gets the CPU then).
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.wake_flags().sync_on(cpu) {
            return;
        }
        if let Some(curr) = ctx.curr(cpu) {
            if self.tasks[t.idx()].prio < self.tasks[curr.idx()].prio {
                ctx.resched(cpu);
            }
        }
    }

    /// The prev half of schedule(): charge run time against sleep_avg, divided by the
    /// bonus (within l.3257-3425).
    fn put_prev(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        let k = self.consts(ctx.hz());
        let now = ctx.now();
        let x = &mut self.tasks[t.idx()];
        let run_time = now.saturating_sub(x.timestamp).min(k.ns_max_sleep_avg);
        let run_time = run_time / k.current_bonus(x.sleep_avg).max(1) as u64;
        x.sleep_avg = x.sleep_avg.saturating_sub(run_time);
        x.timestamp = now;
        x.last_ran = now;
    }

    /// The pick half of schedule() (within l.3257-3425): array switch, find-first-set, on-runqueue
    /// credit for tasks woken from an interactive sleep.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let c = cpu.idx();
        ctx.count_work(WORDS as u64);
        if self.rq[c].nr_running == 0 {
            self.rq[c].expired_timestamp = None;
            return None;
        }
        let rq = &mut self.rq[c];
        if rq.arrays[rq.active].nr_active == 0 {
            rq.active = 1 - rq.active;
            rq.expired_timestamp = None;
            rq.best_expired_prio = MAX_PRIO as i32;
        }
        let act = rq.active;
        let idx = rq.arrays[act].first()?;
        let next = TaskId(rq.arrays[act].head[idx]);
        let a = ctx.task(next).attrs;
        let now = ctx.now();
        let x = self.tasks[next.idx()];
        if !is_rt(&a)
            && matches!(
                x.sleep_type,
                SleepType::Interactive | SleepType::Interrupted
            )
        {
            let k = self.consts(ctx.hz());
            let mut delta = now.saturating_sub(x.timestamp);
            if x.sleep_type == SleepType::Interactive {
                delta = delta * (self.params.on_runqueue_weight * 128 / 100) / 128;
            }
            let np = self.recalc_task_prio(&k, &a, next, delta);
            if np != self.tasks[next.idx()].prio {
                self.tasks[next.idx()].prio = np;
                let arr = self.tasks[next.idx()].arr as usize;
                self.relink(next, arr);
            }
        }
        let x = &mut self.tasks[next.idx()];
        x.sleep_type = SleepType::Normal;
        if ctx.curr(cpu) != Some(next) {
            x.timestamp = now;
        }
        Some(next)
    }

    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.do_tick(ctx, cpu, t);
    }

    /// sys_sched_yield (l.4405-4450): to the expired array (RT: tail of its active list).
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if !self.tasks[t.idx()].queued {
            return;
        }
        let c = cpu.idx();
        let target = if is_rt(&ctx.task(t).attrs) {
            self.active(c)
        } else {
            self.expired(c)
        };
        self.relink(t, target);
    }

    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        let cpu = ctx.task(t).cpu;
        ctx.resched(cpu);
    }

    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if ctx.nr_cpus() < 2 {
            return;
        }
        match kind {
            BalanceKind::NewIdle => {
                // idle_balance (load_balance_newidle): pull from the busiest CPU.
                if let Some(b) = self.busiest(ctx, cpu) {
                    self.pull_from(ctx, cpu, b, true);
                }
            }
            BalanceKind::Tick => {
                // The idle CPUs' own rebalance_tick (every jiffy when idle), pulling from
                // this busy CPU.
                if self.rq[cpu.idx()].nr_running >= 2 {
                    for i in 0..ctx.nr_cpus() {
                        let ic = CpuId(i as u32);
                        if ic != cpu && self.cpu_idle(ctx, ic) {
                            self.pull_from(ctx, ic, cpu, false);
                            if self.rq[cpu.idx()].nr_running < 2 {
                                break;
                            }
                        }
                    }
                }
                // This CPU's busy rebalance.
                let k = self.consts(ctx.hz());
                let jiffies = ctx.now() / k.tick_ns;
                if jiffies >= self.rq[cpu.idx()].next_balance {
                    let interval = (self.params.busy_balance_ms * k.hz / 1000).max(1);
                    self.rq[cpu.idx()].next_balance = jiffies + interval;
                    if let Some(b) = self.busiest(ctx, cpu) {
                        self.pull_from(ctx, cpu, b, false);
                    }
                }
            }
        }
    }

    /// `task_timeslice(p)` (l.164-186) at the task's static priority, in ns; SCHED_FIFO
    /// has no slice (scheduler_tick only counts SCHED_RR and SCHED_OTHER/BATCH slices).
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        if attrs.policy == Policy::Fifo || self.accepts(attrs).is_err() {
            return None;
        }
        let k = self.consts(hz);
        Some(self.task_timeslice(hz, crate::types::DEFAULT_PRIO + attrs.nice) * k.tick_ns)
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.tasks.get(t.idx()).map(|x| ("prio", x.prio as i64))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, rq) in self.rq.iter().enumerate() {
            for a in &rq.arrays {
                for level in 0..MAX_PRIO {
                    let mut x = a.head[level];
                    while x != NIL {
                        f(CpuId(c as u32), TaskId(x));
                        x = self.tasks[x as usize].next;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(hz: u32) -> Consts {
        Consts::new(&Params::default(), hz)
    }

    /// Constants table of spec §1.1 at HZ=1000.
    #[test]
    fn constants_at_hz_1000() {
        let k = k(1000);
        assert_eq!(k.min_timeslice, 5);
        assert_eq!(k.def_timeslice, 100);
        assert_eq!(k.max_bonus, 10);
        assert_eq!(k.max_sleep_avg, 1000);
        assert_eq!(k.ns_max_sleep_avg, 1_000_000_000);
        assert_eq!(k.starvation_limit, 1000);
        assert_eq!(k.granularity, 10);
    }

    /// Worked timeslices of spec §1.2 (l.164-186).
    #[test]
    fn worked_timeslices() {
        let k = k(1000);
        for (nice, ms) in [
            (-20, 800),
            (-10, 600),
            (-1, 420),
            (0, 100),
            (5, 75),
            (10, 50),
            (15, 25),
            (19, 5),
        ] {
            assert_eq!(k.static_prio_timeslice(120 + nice), ms, "nice {nice}");
        }
    }

    /// DELTA and TASK_INTERACTIVE thresholds (l.149-153): nice 0 needs bonus >= 7,
    /// nice -20 needs >= 2, nice 19 never qualifies.
    #[test]
    fn interactive_thresholds() {
        let k = k(1000);
        assert_eq!(k.delta(120), 2);
        assert_eq!(k.delta(100), -3);
        let need = |sp: i32| {
            (0..=10).find(|b| k.task_interactive(k.normal_prio(sp, *b as u64 * 100_000_000), sp))
        };
        assert_eq!(need(120), Some(7));
        assert_eq!(need(100), Some(2));
        assert_eq!(need(139), None);
    }

    /// INTERACTIVE_SLEEP (l.156): nice 0 -> 799 jiffies.
    #[test]
    fn interactive_sleep_nice0() {
        assert_eq!(k(1000).interactive_sleep(120), 799_000_000);
        assert_eq!(k(100).interactive_sleep(120), 79 * 10_000_000);
    }

    /// TIMESLICE_GRANULARITY (l.136-144): bonus 10/9 -> 10 ms, 8 -> 20, 7 -> 40; x CPUs.
    #[test]
    fn granularity() {
        let k = k(1000);
        let g = |b: u64, cpus| k.timeslice_granularity(b * 100_000_000, cpus);
        assert_eq!(g(10, 1), 10);
        assert_eq!(g(9, 1), 10);
        assert_eq!(g(8, 1), 20);
        assert_eq!(g(7, 1), 40);
        assert_eq!(g(7, 4), 160);
    }

    /// Load weights (l.737-765): nice 0 weighs SCHED_LOAD_SCALE.
    #[test]
    fn load_weight_nice0() {
        let k250 = k(250);
        assert_eq!(k250.load_weight(k250.static_prio_timeslice(120)), 128);
        // HZ 250: nice 10 slice 12 jiffies -> 12*128/25 = 61 (truncating, as the kernel).
        assert_eq!(k250.load_weight(k250.static_prio_timeslice(130)), 61);
        let k = k(1000);
        assert_eq!(k.load_weight(k.static_prio_timeslice(130)), 64);
    }
}

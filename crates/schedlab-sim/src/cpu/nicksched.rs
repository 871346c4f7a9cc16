//! `nicksched`: Nick Piggin's scheduler policy, an O(1)-scheduler derivative with a
//! sleep-history dynamic priority and a timeslice that depends on how far a task's dynamic
//! priority is from the best priority queued on its CPU (expired array included).
//!
//! Version modelled: **v8**, LKML "[PATCH] Nick's scheduler policy v8", 28 Aug 2003,
//! against 2.6.0-test4 (Message-ID 3F4DC208.8050606@cyberone.com.au). It is the only version whose code survives;
//! plugsched 6.3's nicksched (seed 000) descends from later versions (v30, the -mm patch,
//! "nicksched for 2.6.11") that were published only as dead URLs, so this is *not* exactly
//! what seed 000 measured. The rules (§2.2):
//! - O(1) active/expired priority arrays (`PrioArray`, imported from `linux_o1`), and a
//!   per-runqueue `array_sequence` bumped at every array switch.
//! - History: `add_task_time(p, t, sleep)` (t in jiffies, capped at MAX_SLEEP = HZ; a capped
//!   t resets the history, otherwise the history decays by (MAX_SLEEP − t)/MAX_SLEEP,
//!   rounded); `total_time += 1000t`, `sleep_time += 1000t` for a sleep;
//!   `sleep_avg = 1000·sleep_time/total_time` (‰).
//! - Priority: `bonus = 40·sleep_avg/1000/2` (0..20),
//!   `prio = 100 + (nice+20)/2 + 20 − bonus`, clamped to 100..139.
//! - Timeslice: `idx = min(first non-RT level of active, of expired, p.prio)`,
//!   `delta = p.prio − idx`, `base = MIN_TIMESLICE·41/(delta+2)`,
//!   `timeslice = base·((idx−100)+8)/8` (≥ 1); RT tasks MAX_TIMESLICE = 40·MIN_TIMESLICE;
//!   MIN_TIMESLICE = max(HZ/1000, 1).
//! - Preemption: better prio, or equal prio and better static priority.
//! - Wake-up: sleep = min(jiffies − timestamp, MAX_SLEEP) credited as sleep, prio
//!   recomputed, `used_slice = 0` if the CPU switched arrays meanwhile; queued in the active
//!   array.
//! - schedule(): the outgoing task's run time is added as non-sleep.
//! - Tick: `used_slice++`; at `used_slice ≥ timeslice` prio is recomputed, `used_slice = 0`
//!   and the task always goes to the expired array (no interactive reinsertion, no
//!   starvation test). SCHED_RR: same counter, requeued at the tail of the active array.
//! - Fork: the parent's remaining slice is split (child `used = used + (ts−used)/2`, parent
//!   `used += ⌈(ts−used)/2⌉`); child `total_time = parent.total/10`,
//!   `sleep_time = parent.sleep/10 + (parent.total − parent.sleep)/20`; the parent keeps
//!   3/4 of its `sleep_time`. Exit: the parent gets the child's unused slice back and, if
//!   the child slept less, is charged `(parent.sleep_avg − child.sleep_avg)/2` of run time.
//! - Migration: a task is cache-hot if `jiffies − timestamp ≤ cache_decay_ticks`, checked
//!   only when the pulling CPU is idle (2.6.0's CAN_MIGRATE_TASK).
//!
//! The seed-000 slide gives nicksched's timeslice as a formula of dprio and minprio (the
//! best priority among the task itself and the expired array); its extracted text is
//! garbled ("60 (dprio−minprio)2 2 ∗ 40 170−minprio 2 ∗ HZ/1000 4") and describes the
//! plugsched-6.3 descendant. It has the v8 shape (a slice falling with dprio − minprio and
//! scaled by minprio) but its constants cannot be recovered, so the v8 formula is used.
//!
//! Uncertain (not stated by the surviving summary; choices flagged "reconstructed"):
//! - The initial history of a task without a parent: empty (sleep_avg 0, prio 130 at nice 0).
//! - At fork the parent's sleep_avg is recomputed from its reduced sleep_time, but its prio
//!   changes only at its next recomputation (wake-up or slice expiry). The child is queued
//!   at the tail of the active array at its own prio (no "child runs first" splice), and
//!   may preempt the parent by the normal preemption test.
//! - The exit charge is applied as `add_task_time(parent, (Δsleep_avg)/2 jiffies, run)`.
//! - sched_yield: as 2.6.0's sys_sched_yield, the task moves to the tail of the expired
//!   array at its prio (RT: tail of its active list); its prio and slice are not touched
//!   (the seed: "Ingosched, Nicksched は特に何も").
//! - SMP balancing of 2.6.0-test4 (no sched domains), reduced: busy rebalance every
//!   `busy_balance_ms` towards the CPU with most runnable tasks when it has
//!   more than imbalance_pct % of ours, moving half the difference (best priority first, expired
//!   array first, each list from its tail); an idle CPU pulls at once before idling
//!   (newidle) and, since idle CPUs take no ticks here, from every busy CPU's tick.
//!
//! Simplifications:
//! - The engine does not say who woke a task, nor whether from interrupt context: every
//!   wake-up credits the whole sleep to the wakee, with no interrupt bonus, no half-share
//!   to the waker and no slice stealing (`steal`) between waker and wakee.
//! - Times are kept in jiffies as in the patch (a sleep or run shorter than a jiffy that
//!   does not cross a jiffy boundary counts 0).
//! - SCHED_BATCH, SCHED_IDLE and SCHED_DEADLINE did not exist in 2.6.0: rejected. RT tasks
//!   use levels 0..99 of the same arrays (prio 99 − rt_priority), no PI.
//! - Placement: a waking task stays on its previous CPU when that is idle, else goes to the
//!   first idle allowed CPU after it, else stays; a forked child starts on its parent's
//!   CPU; start-up tasks go to the least-loaded allowed CPU.

use super::tunables::{self, Tunable, MAX};
use crate::cpu::linux_o1::{first_bit, wake_placement, PrioArray, MAX_PRIO, NIL, WORDS};
use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

const MAX_RT_PRIO: i32 = 100;

/// The tunables, times in ms (converted with the kernel's `x*HZ/1000`).
#[derive(Clone, Debug)]
pub struct Params {
    /// MIN_TIMESLICE (v8: 1 ms).
    pub min_timeslice_ms: u64,
    /// MAX_TIMESLICE, the RT slice; `None` = 40 × MIN_TIMESLICE.
    pub max_timeslice_ms: Option<u64>,
    /// MAX_SLEEP (v8: HZ = 1 s): history horizon and sleep credit cap.
    pub max_sleep_ms: u64,
    /// cache_decay_ticks in ms (per-arch in 2.6.0; reconstructed default).
    pub cache_decay_ms: u64,
    /// BUSY_REBALANCE_TICK in ms (2.6.0: HZ/5).
    pub busy_balance_ms: u64,
    /// Busiest-queue threshold in percent (2.6.0: 25 % imbalance).
    pub imbalance_pct: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_timeslice_ms: 1,
            max_timeslice_ms: None,
            max_sleep_ms: 1000,
            cache_decay_ms: 10,
            busy_balance_ms: 200,
            imbalance_pct: 125,
        }
    }
}

/// The v8 constants evaluated at one HZ, in jiffies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Consts {
    pub min_timeslice: u64,
    pub max_timeslice: u64,
    pub max_sleep: u64,
    pub cache_decay: u64,
}

impl Consts {
    pub fn new(p: &Params, hz: u32) -> Consts {
        let ms = |x: u64| x * hz as u64 / 1000;
        let min_timeslice = ms(p.min_timeslice_ms).max(1);
        Consts {
            min_timeslice,
            max_timeslice: p
                .max_timeslice_ms
                .map_or(40 * min_timeslice, |v| ms(v).max(1)),
            max_sleep: ms(p.max_sleep_ms).max(1),
            cache_decay: ms(p.cache_decay_ms),
        }
    }

    /// The v8 `task_timeslice` for a non-RT task at dynamic priority `prio` when the best
    /// non-RT level queued on its CPU (both arrays) is `best` (`None` = none queued), in
    /// jiffies.
    pub fn timeslice(&self, prio: i32, best: Option<i32>) -> u64 {
        let idx = best.map_or(prio, |b| b.min(prio));
        let delta = (prio - idx) as u64;
        let base = self.min_timeslice * (40 + 1) / (delta + 2);
        (base * ((idx - MAX_RT_PRIO) as u64 + 8) / 8).max(1)
    }
}

/// The v8 priority: `100 + (nice+20)/2 + 20 − 40·sleep_avg/1000/2`, clamped to 100..139.
pub fn nick_prio(nice: i32, sleep_avg: u64) -> i32 {
    let bonus = (40 * sleep_avg.min(1000) / 1000 / 2) as i32;
    (MAX_RT_PRIO + (nice.clamp(-20, 19) + 20) / 2 + 20 - bonus).clamp(MAX_RT_PRIO, 139)
}

/// Sleep history of one task (`total_time`, `sleep_time` ×1000 fixed point, `sleep_avg` ‰).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct History {
    pub total_time: u64,
    pub sleep_time: u64,
    pub sleep_avg: u64,
}

impl History {
    /// `add_task_time(p, t, sleep)` with `t` in jiffies.
    pub fn add(&mut self, t: u64, sleep: bool, max_sleep: u64) {
        let mut t = t;
        if t >= max_sleep {
            t = max_sleep;
            self.total_time = 0;
            self.sleep_time = 0;
        } else {
            let r = max_sleep - t;
            self.total_time = (self.total_time * r + max_sleep / 2) / max_sleep;
            self.sleep_time = (self.sleep_time * r + max_sleep / 2) / max_sleep;
        }
        self.total_time += 1000 * t;
        if sleep {
            self.sleep_time += 1000 * t;
        }
        self.recalc();
    }

    fn recalc(&mut self) {
        if let Some(avg) = (1000 * self.sleep_time).checked_div(self.total_time) {
            self.sleep_avg = avg.min(1000);
        }
    }
}

#[derive(Clone)]
struct Rq {
    arrays: [PrioArray; 2],
    active: usize,
    nr_running: u32,
    array_sequence: u64,
    /// Jiffy of the next busy rebalance.
    next_balance: u64,
}

#[derive(Clone, Copy)]
struct Task {
    next: u32,
    prev: u32,
    queued: bool,
    cpu: u32,
    arr: u8,
    level: u8,
    /// Whether the task sat in the expired array when last unlinked.
    was_expired: bool,
    nice: i32,
    prio: i32,
    hist: History,
    used_slice: u64,
    array_sequence: u64,
    /// Jiffies.
    timestamp: u64,
    parent: u32,
}

fn is_rt(a: &SchedAttrs) -> bool {
    matches!(a.policy, Policy::Fifo | Policy::Rr)
}

/// The policy.
pub struct Nicksched {
    rq: Vec<Rq>,
    tasks: Vec<Task>,
    params: Params,
}

impl Nicksched {
    pub fn new(nr_cpus: usize) -> Self {
        Nicksched {
            rq: (0..nr_cpus)
                .map(|_| Rq {
                    arrays: [PrioArray::new(), PrioArray::new()],
                    active: 0,
                    nr_running: 0,
                    array_sequence: 0,
                    next_balance: 0,
                })
                .collect(),
            tasks: Vec::new(),
            params: Params::default(),
        }
    }

    pub fn consts(&self, hz: u32) -> Consts {
        Consts::new(&self.params, hz)
    }

    // ---- read-only accessors for tests
    pub fn prio(&self, t: TaskId) -> i32 {
        self.tasks[t.idx()].prio
    }
    pub fn history(&self, t: TaskId) -> History {
        self.tasks[t.idx()].hist
    }
    pub fn used_slice(&self, t: TaskId) -> u64 {
        self.tasks[t.idx()].used_slice
    }
    /// `Some(true)` if queued in its CPU's expired array, `Some(false)` if active.
    pub fn in_expired(&self, t: TaskId) -> Option<bool> {
        let x = &self.tasks[t.idx()];
        x.queued
            .then(|| x.arr as usize != self.rq[x.cpu as usize].active)
    }
    /// `task_timeslice(p, rq)` in jiffies for `t` on its current CPU.
    pub fn task_timeslice(&self, ctx: &Ctx, t: TaskId) -> u64 {
        let k = self.consts(ctx.hz());
        if is_rt(&ctx.task(t).attrs) {
            return k.max_timeslice;
        }
        let x = &self.tasks[t.idx()];
        k.timeslice(x.prio, self.best_user_prio(x.cpu as usize))
    }
    /// Set a task's history (test helper); prio is recomputed.
    #[doc(hidden)]
    pub fn set_history_for_test(&mut self, t: TaskId, h: History) {
        let x = &mut self.tasks[t.idx()];
        x.hist = h;
        x.prio = nick_prio(x.nice, h.sleep_avg);
    }
    #[doc(hidden)]
    pub fn set_used_slice_for_test(&mut self, t: TaskId, used: u64) {
        self.tasks[t.idx()].used_slice = used;
    }

    /// The first queued level ≥ MAX_RT_PRIO in either array of `cpu`.
    fn best_user_prio(&self, cpu: usize) -> Option<i32> {
        self.rq[cpu]
            .arrays
            .iter()
            .filter_map(|a| first_from(a, MAX_RT_PRIO as usize))
            .min()
            .map(|l| l as i32)
    }

    fn effective_prio(&self, a: &SchedAttrs, x: &Task) -> i32 {
        if is_rt(a) {
            MAX_RT_PRIO - 1 - a.rt_priority
        } else {
            nick_prio(x.nice, x.hist.sleep_avg)
        }
    }

    fn link(&mut self, cpu: usize, arr: usize, t: TaskId, head: bool) {
        let level = self.tasks[t.idx()].prio.clamp(0, MAX_PRIO as i32 - 1) as usize;
        let a = &mut self.rq[cpu].arrays[arr];
        let (prev, next) = if head {
            (NIL, a.head[level])
        } else {
            (a.tail[level], NIL)
        };
        if prev == NIL {
            a.head[level] = t.0;
        } else {
            self.tasks[prev as usize].next = t.0;
        }
        if next == NIL {
            a.tail[level] = t.0;
        } else {
            self.tasks[next as usize].prev = t.0;
        }
        a.bitmap[level / 64] |= 1 << (level % 64);
        a.nr_active += 1;
        self.rq[cpu].nr_running += 1;
        let x = &mut self.tasks[t.idx()];
        x.next = next;
        x.prev = prev;
        x.queued = true;
        x.cpu = cpu as u32;
        x.arr = arr as u8;
        x.level = level as u8;
    }

    fn unlink(&mut self, t: TaskId) {
        let x = self.tasks[t.idx()];
        if !x.queued {
            return;
        }
        let (cpu, level) = (x.cpu as usize, x.level as usize);
        let was_expired = x.arr as usize != self.rq[cpu].active;
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
        self.rq[cpu].nr_running -= 1;
        let x = &mut self.tasks[t.idx()];
        x.queued = false;
        x.was_expired = was_expired;
    }

    fn relink(&mut self, t: TaskId, arr: usize) {
        let cpu = self.tasks[t.idx()].cpu as usize;
        self.unlink(t);
        self.link(cpu, arr, t, false);
    }

    fn jiffies(ctx: &Ctx) -> u64 {
        ctx.now() / ctx.tick_ns()
    }

    fn cpu_idle(&self, ctx: &Ctx, c: CpuId) -> bool {
        ctx.curr(c).is_none() && self.rq[c.idx()].nr_running == 0
    }

    /// CAN_MIGRATE_TASK (2.6.0): not running, allowed, and cold if the puller is idle.
    fn can_migrate(&self, ctx: &Ctx, t: TaskId, to: CpuId, idle: bool) -> bool {
        let v = ctx.task(t);
        if v.running || !v.affinity.contains(to) {
            return false;
        }
        let k = self.consts(ctx.hz());
        !idle || Self::jiffies(ctx).saturating_sub(self.tasks[t.idx()].timestamp) > k.cache_decay
    }

    /// pull_task loop of load_balance: move up to `max` tasks from `from` to `this`.
    fn pull(&mut self, ctx: &mut Ctx, this: CpuId, from: CpuId, max: u32, idle: bool) -> u32 {
        let (fc, tc) = (from.idx(), this.idx());
        let mut moved = 0;
        let arrays = [1 - self.rq[fc].active, self.rq[fc].active];
        'scan: for arr in arrays {
            let mut bits = self.rq[fc].arrays[arr].bitmap;
            while let Some(level) = first_bit(&bits) {
                bits[level / 64] &= !(1 << (level % 64));
                let mut x = self.rq[fc].arrays[arr].tail[level];
                while x != NIL {
                    let t = TaskId(x);
                    let prevx = self.tasks[x as usize].prev;
                    ctx.count_work(1);
                    if self.can_migrate(ctx, t, this, idle) {
                        let dest = if arr == self.rq[fc].active {
                            self.rq[tc].active
                        } else {
                            1 - self.rq[tc].active
                        };
                        self.unlink(t);
                        ctx.set_task_cpu(t, this);
                        self.link(tc, dest, t, false);
                        moved += 1;
                        match ctx.curr(this) {
                            Some(c) if self.tasks[t.idx()].prio < self.tasks[c.idx()].prio => {
                                ctx.resched(this)
                            }
                            Some(_) => {}
                            None => ctx.resched(this),
                        }
                        if moved >= max {
                            break 'scan;
                        }
                    }
                    x = prevx;
                }
            }
        }
        moved
    }

    /// find_busiest_queue + load_balance for `this` (2.6.0: by nr_running, 25 % imbalance).
    fn load_balance(&mut self, ctx: &mut Ctx, this: CpuId, idle: bool) {
        let this_nr = self.rq[this.idx()].nr_running as u64;
        let busiest = (0..self.rq.len())
            .map(|c| CpuId(c as u32))
            .filter(|&c| c != this)
            .max_by_key(|c| (self.rq[c.idx()].nr_running, std::cmp::Reverse(c.0)));
        let Some(b) = busiest else { return };
        let max_nr = self.rq[b.idx()].nr_running as u64;
        if max_nr < 2 || max_nr <= this_nr || 100 * max_nr <= self.params.imbalance_pct * this_nr {
            return;
        }
        let imbalance = ((max_nr - this_nr) / 2).max(1) as u32;
        self.pull(ctx, this, b, imbalance, idle);
    }

    /// Wake-up / new-task queueing (activate_task): active array tail.
    fn activate(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, sleep: Option<u64>) {
        let k = self.consts(ctx.hz());
        let a = ctx.task(t).attrs;
        let c = cpu.idx();
        let seq = self.rq[c].array_sequence;
        let jiffies = Self::jiffies(ctx);
        let mut x = self.tasks[t.idx()];
        if let Some(s) = sleep {
            x.hist.add(s.min(k.max_sleep), true, k.max_sleep);
            if x.array_sequence != seq {
                x.used_slice = 0;
            }
        }
        x.prio = self.effective_prio(&a, &x);
        x.array_sequence = seq;
        x.timestamp = jiffies;
        self.tasks[t.idx()] = x;
        let act = self.rq[c].active;
        self.link(c, act, t, false);
    }
}

/// First set bit at or after `start`.
fn first_from(a: &PrioArray, start: usize) -> Option<usize> {
    (start / 64..WORDS).find_map(|w| {
        let mut bits = a.bitmap[w];
        if w == start / 64 {
            bits &= !0u64 << (start % 64);
        }
        (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
    })
}

/// nicksched's tunables (the patch's constants made settable).
fn tunables() -> Vec<Tunable<Params>> {
    vec![
        Tunable::ms(
            "min_timeslice",
            "MIN_TIMESLICE in ms (at least one jiffy); the nicksched base slice",
            0,
            MAX,
            |p| &mut p.min_timeslice_ms,
        ),
        Tunable::ms(
            "max_timeslice",
            "MAX_TIMESLICE in ms: the slice of RT tasks",
            0,
            MAX,
            |p: &mut Params| &mut p.max_timeslice_ms,
        )
        .derived("40*MIN_TIMESLICE (40)"),
        Tunable::ms(
            "max_sleep",
            "MAX_SLEEP in ms (HZ): history decay horizon and sleep credit cap",
            1,
            MAX,
            |p| &mut p.max_sleep_ms,
        ),
        Tunable::ms(
            "cache_decay",
            "cache_decay_ticks in ms: an idle CPU does not pull tasks that ran this recently",
            0,
            MAX,
            |p| &mut p.cache_decay_ms,
        ),
        Tunable::ms(
            "busy_balance_ms",
            "BUSY_REBALANCE_TICK in ms (HZ/5)",
            0,
            MAX,
            |p| &mut p.busy_balance_ms,
        ),
        Tunable::int(
            "imbalance_pct",
            "busiest queue must hold more than this percent of ours",
            100,
            MAX,
            |p| &mut p.imbalance_pct,
        ),
    ]
}

impl Scheduler for Nicksched {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "nicksched",
            summary: "Nick Piggin's scheduler v8 (2003): O(1) arrays, sleep-history priority, \
                      timeslice from the distance to the best queued priority (expired included)",
            source: "LKML \"[PATCH] Nick's scheduler policy v8\", 28 Aug 2003, 2.6.0-test4 \
                     (Message-ID 3F4DC208.8050606@cyberone.com.au)",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "nicksched", name, value)
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match attrs.policy {
            Policy::Deadline => Err("SCHED_DEADLINE is not modelled by nicksched (v8 is for \
                                     Linux 2.6.0; added in 3.14)"
                .into()),
            Policy::Idle => Err("SCHED_IDLE is not modelled by nicksched (v8 is for Linux \
                                 2.6.0; added in 2.6.23)"
                .into()),
            Policy::Batch => Err("SCHED_BATCH is not modelled by nicksched (v8 is for Linux \
                                  2.6.0; added in 2.6.16)"
                .into()),
            _ => Ok(()),
        }
    }

    /// sched_fork: slice split and history inheritance (§2.2 "Fork").
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        debug_assert_eq!(t.idx(), self.tasks.len());
        let a = ctx.task(t).attrs;
        let cpu = ctx.task(t).cpu.idx();
        let mut x = Task {
            next: NIL,
            prev: NIL,
            queued: false,
            cpu: cpu as u32,
            arr: 0,
            level: 0,
            was_expired: false,
            nice: a.nice.clamp(-20, 19),
            prio: 0,
            hist: History::default(),
            used_slice: 0,
            array_sequence: self.rq[cpu].array_sequence,
            timestamp: Self::jiffies(ctx),
            parent: parent.map_or(NIL, |p| p.0),
        };
        if let Some(p) = parent.filter(|p| !ctx.task(*p).exited) {
            let ts = self.task_timeslice(ctx, p);
            let px = &mut self.tasks[p.idx()];
            let rem = ts.saturating_sub(px.used_slice);
            x.used_slice = px.used_slice + rem / 2;
            px.used_slice += rem.div_ceil(2);
            x.hist.total_time = px.hist.total_time / 10;
            x.hist.sleep_time = px.hist.sleep_time / 10
                + px.hist.total_time.saturating_sub(px.hist.sleep_time) / 20;
            x.hist.recalc();
            px.hist.sleep_time = px.hist.sleep_time * 3 / 4;
            px.hist.recalc();
        }
        x.prio = self.effective_prio(&a, &x);
        self.tasks.push(x);
    }

    /// sched_exit: unused slice back to the parent, run-time charge if the child slept less.
    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        let p = self.tasks[t.idx()].parent;
        if p == NIL || ctx.task(TaskId(p)).exited {
            return;
        }
        let k = self.consts(ctx.hz());
        let ts = self.task_timeslice(ctx, t);
        let cx = self.tasks[t.idx()];
        let px = &mut self.tasks[p as usize];
        px.used_slice = px
            .used_slice
            .saturating_sub(ts.saturating_sub(cx.used_slice));
        if cx.hist.sleep_avg < px.hist.sleep_avg {
            let charge = (px.hist.sleep_avg - cx.hist.sleep_avg) / 2;
            px.hist.add(charge, false, k.max_sleep);
        }
    }

    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let p = self.tasks[t.idx()].parent;
        let parent_cpu = (p != NIL).then(|| ctx.task(TaskId(p)).cpu);
        wake_placement(
            ctx,
            ctx.task(t).affinity,
            prev,
            kind,
            parent_cpu,
            |c| (self.rq[c.idx()].nr_running, 0),
            |c| self.cpu_idle(ctx, c),
        )
    }

    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        ctx.count_work(1);
        let c = cpu.idx();
        match kind {
            EnqueueKind::Wakeup if ctx.task(t).running => {
                // Blocked and woken before its CPU switched away: never deactivated.
                let x = self.tasks[t.idx()];
                let arr = if x.was_expired && x.cpu as usize == c {
                    1 - self.rq[c].active
                } else {
                    self.rq[c].active
                };
                self.link(c, arr, t, true);
            }
            EnqueueKind::Wakeup => {
                let sleep = Self::jiffies(ctx).saturating_sub(self.tasks[t.idx()].timestamp);
                self.activate(ctx, cpu, t, Some(sleep));
            }
            EnqueueKind::New => self.activate(ctx, cpu, t, None),
            EnqueueKind::Restore => {
                let a = ctx.task(t).attrs;
                let mut x = self.tasks[t.idx()];
                x.nice = a.nice.clamp(-20, 19);
                x.prio = self.effective_prio(&a, &x);
                let arr = if x.was_expired && !is_rt(&a) {
                    1 - self.rq[c].active
                } else {
                    self.rq[c].active
                };
                self.tasks[t.idx()] = x;
                self.link(c, arr, t, false);
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        ctx.count_work(1);
        self.unlink(t);
    }

    /// Better prio, or equal prio and better static priority (nice) — and never for a
    /// sync wake-up. That rule is the 2.6.0-test base kernel's try_to_wake_up (`if (sync)
    /// __activate_task(p, rq); else { activate_task(p, rq); if (TASK_PREEMPTS_CURR(p, rq))
    /// resched_task(rq->curr); }`, visible as context in LKML "Demo patch - no
    /// interactivity 2.6", 24 Nov 2003, against 2.6.0-test9); the v8 summary does not say
    /// the patch changed it, so it is assumed kept (uncertain, like the rest of §2.2's
    /// gaps).
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.wake_flags().sync {
            return;
        }
        if let Some(curr) = ctx.curr(cpu) {
            let (p, q) = (&self.tasks[t.idx()], &self.tasks[curr.idx()]);
            let sp = |t: TaskId, x: &Task| {
                let a = ctx.task(t).attrs;
                if is_rt(&a) {
                    x.prio
                } else {
                    120 + x.nice
                }
            };
            if p.prio < q.prio || (p.prio == q.prio && sp(t, p) < sp(curr, q)) {
                ctx.resched(cpu);
            }
        }
    }

    /// schedule(): the outgoing task's run time is history as non-sleep.
    fn put_prev(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        let k = self.consts(ctx.hz());
        let now = Self::jiffies(ctx);
        let x = &mut self.tasks[t.idx()];
        let run = now.saturating_sub(x.timestamp);
        x.hist.add(run, false, k.max_sleep);
        x.timestamp = now;
    }

    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let c = cpu.idx();
        ctx.count_work(WORDS as u64);
        let rq = &mut self.rq[c];
        if rq.nr_running == 0 {
            return None;
        }
        if rq.arrays[rq.active].nr_active == 0 {
            rq.active = 1 - rq.active;
            rq.array_sequence += 1;
        }
        let idx = rq.arrays[rq.active].first()?;
        let next = TaskId(rq.arrays[rq.active].head[idx]);
        if ctx.curr(cpu) != Some(next) {
            self.tasks[next.idx()].timestamp = Self::jiffies(ctx);
        }
        Some(next)
    }

    /// scheduler_tick: count the slice; on expiry recompute prio and go to the expired
    /// array (RR: tail of the active one).
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let c = cpu.idx();
        let x = self.tasks[t.idx()];
        if !x.queued {
            return;
        }
        if x.arr as usize != self.rq[c].active {
            ctx.resched(cpu);
            return;
        }
        let a = ctx.task(t).attrs;
        if a.policy == Policy::Fifo {
            return;
        }
        ctx.count_work(1);
        let ts = self.task_timeslice(ctx, t);
        let x = &mut self.tasks[t.idx()];
        x.used_slice += 1;
        if x.used_slice < ts {
            return;
        }
        x.used_slice = 0;
        ctx.resched(cpu);
        if a.policy == Policy::Rr {
            self.relink(t, self.rq[c].active);
        } else {
            self.unlink(t);
            let x = self.tasks[t.idx()];
            self.tasks[t.idx()].prio = self.effective_prio(&a, &x);
            self.link(c, 1 - self.rq[c].active, t, false);
        }
    }

    /// sys_sched_yield (2.6.0): tail of the expired array (RT: tail of its active list).
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if !self.tasks[t.idx()].queued {
            return;
        }
        let c = cpu.idx();
        let target = if is_rt(&ctx.task(t).attrs) {
            self.rq[c].active
        } else {
            1 - self.rq[c].active
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
            BalanceKind::NewIdle => self.load_balance(ctx, cpu, true),
            BalanceKind::Tick => {
                // Idle CPUs' IDLE_REBALANCE_TICK, pulling from this busy CPU.
                for i in 0..ctx.nr_cpus() {
                    if self.rq[cpu.idx()].nr_running < 2 {
                        break;
                    }
                    let ic = CpuId(i as u32);
                    if ic != cpu && self.cpu_idle(ctx, ic) {
                        self.pull(ctx, ic, cpu, 1, true);
                    }
                }
                let jiffies = Self::jiffies(ctx);
                if jiffies >= self.rq[cpu.idx()].next_balance {
                    let interval = (self.params.busy_balance_ms * ctx.hz() as u64 / 1000).max(1);
                    self.rq[cpu.idx()].next_balance = jiffies + interval;
                    self.load_balance(ctx, cpu, false);
                }
            }
        }
    }

    /// The slice of a task alone on its CPU with an empty history (prio at sleep_avg 0,
    /// delta 0), in ns; SCHED_RR gets MAX_TIMESLICE, SCHED_FIFO has none.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        if attrs.policy == Policy::Fifo || self.accepts(attrs).is_err() {
            return None;
        }
        let k = self.consts(hz);
        let tick_ns = 1_000_000_000 / hz as u64;
        let j = if is_rt(attrs) {
            k.max_timeslice
        } else {
            k.timeslice(nick_prio(attrs.nice, 0), None)
        };
        Some(j * tick_ns)
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

    #[test]
    fn constants_at_hz_100_250_1000() {
        let p = Params::default();
        for (hz, min, max, sleep, decay) in [
            (100u32, 1u64, 40u64, 100u64, 1u64),
            (250, 1, 40, 250, 2),
            (1000, 1, 40, 1000, 10),
        ] {
            let k = Consts::new(&p, hz);
            assert_eq!(
                (k.min_timeslice, k.max_timeslice, k.max_sleep, k.cache_decay),
                (min, max, sleep, decay),
                "HZ {hz}"
            );
        }
    }

    #[test]
    fn timeslice_formula_spot_values() {
        let k = Consts::new(&Params::default(), 1000);
        // base = 41/(delta+2); slice = base·(idx−100+8)/8.
        assert_eq!(k.timeslice(130, None), 95);
        assert_eq!(k.timeslice(130, Some(140)), 95);
        assert_eq!(k.timeslice(130, Some(129)), 13 * 37 / 8);
        assert_eq!(k.timeslice(139, Some(100)), 1);
        assert_eq!(k.timeslice(100, Some(100)), 20);
        // One step better best prio roughly halves the others' slices at first.
        assert!(k.timeslice(120, Some(119)) * 10 <= k.timeslice(120, Some(120)) * 7);
    }

    #[test]
    fn first_from_skips_rt_levels() {
        let mut a = PrioArray::new();
        assert_eq!(first_from(&a, 100), None);
        a.bitmap[0] |= 1 << 5; // RT level 5
        assert_eq!(first_from(&a, 100), None);
        a.bitmap[2] |= 1 << (135 - 128);
        assert_eq!(first_from(&a, 100), Some(135));
        a.bitmap[1] |= 1 << (101 - 64);
        assert_eq!(first_from(&a, 100), Some(101));
        assert_eq!(first_from(&a, 102), Some(135));
    }

    #[test]
    fn history_sleep_avg_is_per_mille() {
        let mut h = History::default();
        h.add(3, true, 1000);
        h.add(1, false, 1000);
        // total = round(3000·999/1000) + 1000 = 3997; sleep = round(3000·999/1000) = 2997.
        assert_eq!((h.total_time, h.sleep_time), (3997, 2997));
        assert_eq!(h.sleep_avg, 1000 * 2997 / 3997);
        assert_eq!(
            nick_prio(0, h.sleep_avg),
            130 - (40 * h.sleep_avg / 1000 / 2) as i32
        );
    }
}

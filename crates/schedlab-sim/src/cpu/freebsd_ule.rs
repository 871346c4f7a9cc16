//! `freebsd-ule`: FreeBSD's ULE scheduler (`options SCHED_ULE`) as maintained today.
//!
//! Source: FreeBSD sys/kern/sched_ule.c as held by the freebsd/freebsd-src repository
//! (stored revision d8d5f03610e905815989a61bef515126c14bd736: one `struct tdq` per CPU,
//! lines 232–258, with `tdq_realtime`, `tdq_timeshare` and `tdq_idle`).
//! Line numbers are those of sched_ule.c at that revision:
//! - the priority ranges (lines 121–171): `PRI_INTERACT_RANGE = (PRI_TIMESHARE_RANGE −
//!   SCHED_PRI_NRESV) / 2` (line 127) = 32, interactive 120..151
//!   (`PRI_MIN_INTERACT`..`PRI_MAX_INTERACT`, lines 130–131), batch 152..223
//!   (`PRI_MIN_BATCH`..`PRI_MAX_BATCH`, lines 132–133), `SCHED_PRI_MIN` / `SCHED_PRI_MAX`
//!   = 172 / 203 (lines 166–167; `NHALF` = 20 batch priorities reachable only by nice at
//!   either end, line 165), `SCHED_PRI_TICKS` (lines 169–171: the recent CPU use
//!   `ts_ticks` over `SCHED_TICK_TOTAL`, line 150, in `SCHED_PRI_RANGE` = 32 steps,
//!   line 168);
//! - the interactivity score: `sched_interact_score` (lines 1532–1566: sleep / run
//!   history scaled to 0..100, `SCHED_INTERACT_HALF` = 50, line 189),
//!   `sched_interact_update` (lines 1624–1661: the history kept under
//!   `SCHED_SLP_RUN_MAX = (5 hz) << SCHED_TICK_SHIFT`, line 186), `sched_interact_fork`
//!   (lines 1669–1683: a child keeps at most `SCHED_SLP_RUN_FORK = (hz / 2) << 10`,
//!   line 187), `SCHED_INTERACT_THRESH` = 30 (line 190; `kern.sched.interact`);
//! - `sched_priority` (lines 1572–1617: a score plus nice below the threshold gives
//!   `PRI_MIN_INTERACT + (32 / interact) · score`, otherwise `SCHED_PRI_MIN` + the ticks
//!   part + nice), `sched_pctcpu_update` (lines 1722–1742: `ts_ticks`, `ts_ltick`,
//!   `ts_ftick` over `SCHED_TICK_TARG = 10 hz`, `SCHED_TICK_MAX`, lines 146–147);
//! - slices: `sched_initticks` (lines 1473–1507: `sched_slice = realstathz / 10`,
//!   `sched_slice_min = sched_slice / 6`, `tickincr`, `balance_interval = realstathz`,
//!   `affinity = max(1, hz / 1000)`), `tdq_slice` (lines 577–593: the slice shrinks to
//!   `sched_slice / (load − 1)`, down to `sched_slice_min` from 7 threads on the queue),
//!   `sched_clock` (lines 2403–2462: the calendar's `tdq_idx` advance, run time charged
//!   per tick, the slice end `TDF_SLICEEND`; FIFO threads have no slice),
//!   `sched_fork_thread` (lines 2262–2303: the child starts with only `sched_slice_min`
//!   of its slice left), `sched_wakeup` (lines 2211–2237: sleep ticks added to the
//!   history, slice reset), `sched_sleep` (lines 2188–2203: the `static_boost` to
//!   `PRI_MIN_BATCH` while asleep), `sched_exit_thread` (lines 2339–2355: the child's run
//!   time charged to the parent), `sched_fork` (lines 2243–2257: a tick of run time
//!   charged to the parent);
//! - the per-CPU queues: `tdq_runq_add` (lines 459–503: priorities below `PRI_MIN_BATCH`
//!   on the real-time queue; batch priorities spread over the 64 queues of the timeshare
//!   calendar from `tdq_idx`, one slot short of `tdq_ridx`; a preempted thread at the
//!   head of `tdq_ridx`), `tdq_runq_rem` (lines 510–531: `runq_remove_idx` moving
//!   `tdq_ridx` past a queue it empties), `tdq_choose` (lines 1376–1401: real-time, then
//!   `runq_choose_from(tdq_ridx)`, then idle), `tdq_add` (lines 2548–2565),
//!   `tdq_load_add` / `tdq_load_rem` (lines 537–549 / 555–569), `tdq_setlowpri`
//!   (lines 599–612), `sched_choose` (lines 2500–2516), `sched_switch` (lines 2047–2164:
//!   `ts_rltick`; a thread switched out by a preemption goes to the head,
//!   `SRQ_PREEMPTED`);
//! - preemption: `sched_shouldpreempt` (lines 421–452: always preempt the idle thread;
//!   priorities at or below `preempt_thresh` = `PRI_MIN_KERN` = 80, the PREEMPTION
//!   kernel's default, line 218; remote CPUs also when an interactive thread wakes
//!   against a batch one), `sched_setpreempt` (lines 2522–2541: a better priority woken
//!   on this CPU reschedules it, `TDF_NEEDRESCHED`), `tdq_notify` (lines 1067–1104: a
//!   remote CPU is interrupted only when `sched_shouldpreempt(pri, cpri, 1)`);
//! - CPU choice: `sched_add` (lines 2573–2624), `sched_pickcpu` (lines 1241–1370: the
//!   last CPU while it and its SMT siblings idle and the thread ran there within
//!   `SCHED_AFFINITY(ts, CG_SHARE_L2)`, line 268; otherwise the least loaded idle CPU
//!   of the highest cache group still within affinity, then a CPU running worse
//!   priorities, then the least loaded CPU; the waker's CPU instead of a busy one when
//!   it holds at most one thread more and runs a worse priority, lines 1357–1366),
//!   `cpu_search` / `sched_lowest` / `sched_highest` (lines 666–775 / 805–818 /
//!   823–833: the least or most loaded CPU on the least or most loaded path through the
//!   `cpu_group` tree: load × 256, −64 for the preferred CPU, minus `sched_random() %
//!   32`, `sched_random` at lines 622–631);
//! - stealing and balancing: `tdq_idled` (lines 983–1062: an idle CPU takes a thread
//!   from the busiest CPU of its group, then of each parent group, holding at least
//!   `steal_thresh` = 2 threads, line 277), `tdq_move` / `tdq_steal` / `runq_steal` /
//!   `runq_steal_from` (lines 949–977 / 1183–1195 / 1154–1178 / 1110–1149: real-time
//!   first; from the calendar, the first thread found is skipped when another can go),
//!   `sched_balance` (lines 880–891: every `balance_interval / 2 + random %
//!   balance_interval` ticks of the first CPU), `sched_balance_group` /
//!   `sched_balance_pair` (lines 835–878 / 921–944).
//!
//! The `cpu_group` tree (`struct cpu_group` of sys/sys/smp.h, which the kernel's
//! machine-dependent code fills; neither was read here) is built by this model from the
//! spec's topology, with the levels and flags sched_ule.c tests: the hardware threads of
//! a core share L1 and L2 (`CG_SHARE_L2`, `CG_FLAG_THREAD`), the cores of a last-level
//! cache share L3 (`CG_SHARE_L3`), packages and a machine of several caches share
//! nothing (`CG_SHARE_NONE`); a group that would hold the same CPUs as its parent is not
//! made.
//!
//! Where the model simplifies:
//! - Two clocks, as in the kernel: `ticks` counts the machine's `hz` (the engine's tick
//!   count, `now / tick_ns`; the histories, `ts_ticks` and cache affinity use it), and
//!   the statclock runs at `stathz` (default 127 Hz, `realstathz`'s boot value in the
//!   source, the rate of its "~94 ms, 12 stathz ticks" slice; `--param stathz`):
//!   slices, the balancer's interval and `tickincr` count its ticks. Its ticks are
//!   counted at the engine's ticks of a busy CPU (`sched_clock(td, cnt)` with the stat
//!   ticks since the last one; those of an idle spell are dropped), so they fall on hz
//!   tick boundaries. The rate matters beyond the slice length: the calendar advances
//!   one queue per stat tick, so at stathz = 1000 it would sweep more than its 64
//!   queues in one 100-tick slice and nice would barely separate CPU hogs.
//! - The priority a thread's history gives it takes effect at once (the kernel applies
//!   `td_user_pri` at the thread's next return to user mode, `sched_userret`, whose slow
//!   path is `sched_userret_slowpath`, lines 2388–2397). The kernel sleep priorities a
//!   thread holds until then (`msleep`'s `PRIBIO`, `PWAIT`, …) are not modelled: a woken
//!   time-sharing thread waits at its user priority, or at `static_boost`
//!   (`PRI_MIN_BATCH`) when that is better, as `sched_sleep` leaves it.
//! - `sched_random`'s per-CPU linear congruential generator is the run's seeded PRNG
//!   (`Ctx::random`), as are the balancer's intervals.
//! - Idle CPUs do not tick here, so the periodic balancer counts the ticks of the first
//!   CPU while it is busy (the kernel's statclock also ticks an idle CPU). An idle CPU
//!   steals only as it goes idle (`tdq_idled` at the newidle balance; `tdq_trysteal`'s
//!   shorter search in `sched_switch`, lines 1919–1995, is subsumed), not again while
//!   idle.
//! - A wake-up from a timer is placed as if the CPU taking the interrupt were the one the
//!   thread last ran on (the callout's CPU).
//! - No interrupt threads, no bound or pinned threads (`td_pinned`, `sched_bind`
//!   at lines 2711–2730), no priority lending (`sched_lend_prio`, lines 1804–1810,
//!   turnstiles), no `tdq_switchcnt` spinning or idle-thread spin; `ts_pctcpu`
//!   is kept only as `ts_ticks` feeds the priority.
//! - Attributes are taken as a Linux binary running on FreeBSD would pass them, through
//!   the Linux ABI (`freebsd_runq::linux_abi_accepts`): SCHED_OTHER's nice is FreeBSD's
//!   nice; SCHED_FIFO and SCHED_RR priorities 1..=99 map onto the real-time range 48..79;
//!   SCHED_BATCH, SCHED_IDLE and SCHED_DEADLINE are refused, so the idle queue
//!   (`tdq_idle`, priorities 224..255) never holds a thread and is not kept.

use super::freebsd_runq::{
    self, is_timeshare, queue_of, rt_priority, RunQueue, PRIO_MAX, PRIO_MIN, PRI_MAX_IDLE,
    PRI_MAX_TIMESHARE, PRI_MIN_IDLE, PRI_MIN_TIMESHARE, RQ_NQS,
};
use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::topology::Topology;
use crate::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

/// `SCHED_TICK_SHIFT`: histories are kept in ticks << 10.
pub const SCHED_TICK_SHIFT: u32 = 10;
/// `SCHED_INTERACT_MAX`, `SCHED_INTERACT_HALF`, `SCHED_INTERACT_THRESH`.
pub const SCHED_INTERACT_MAX: u32 = 100;
pub const SCHED_INTERACT_HALF: u32 = SCHED_INTERACT_MAX / 2;
pub const SCHED_INTERACT_THRESH: u32 = 30;
/// `SCHED_PRI_NRESV`: the nice values (`PRIO_MAX - PRIO_MIN`).
pub const SCHED_PRI_NRESV: u32 = (PRIO_MAX - PRIO_MIN) as u32;
pub const SCHED_PRI_NHALF: u32 = SCHED_PRI_NRESV / 2;
/// The time-sharing range split into interactive and batch priorities.
pub const PRI_TIMESHARE_RANGE: u32 = PRI_MAX_TIMESHARE - PRI_MIN_TIMESHARE + 1;
pub const PRI_INTERACT_RANGE: u32 = (PRI_TIMESHARE_RANGE - SCHED_PRI_NRESV) / 2;
pub const PRI_BATCH_RANGE: u32 = PRI_TIMESHARE_RANGE - PRI_INTERACT_RANGE;
pub const PRI_MIN_INTERACT: u32 = PRI_MIN_TIMESHARE;
pub const PRI_MAX_INTERACT: u32 = PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE - 1;
pub const PRI_MIN_BATCH: u32 = PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE;
pub const PRI_MAX_BATCH: u32 = PRI_MAX_TIMESHARE;
/// The batch priorities CPU use reaches; nice adds to them.
pub const SCHED_PRI_MIN: u32 = PRI_MIN_BATCH + SCHED_PRI_NHALF;
pub const SCHED_PRI_MAX: u32 = PRI_MAX_BATCH - SCHED_PRI_NHALF;
pub const SCHED_PRI_RANGE: u32 = SCHED_PRI_MAX - SCHED_PRI_MIN + 1;
/// `PRI_MIN_KERN` (sys/sys/priority.h): `preempt_thresh` of a PREEMPTION kernel.
pub const PRI_MIN_KERN: u32 = 80;
/// `SCHED_SLICE_DEFAULT_DIVISOR`, `SCHED_SLICE_MIN_DIVISOR`.
pub const SCHED_SLICE_DEFAULT_DIVISOR: u32 = 10;
pub const SCHED_SLICE_MIN_DIVISOR: u32 = 6;
/// `SCHED_TICK_SECS`: seconds of CPU use the batch priority averages over.
pub const SCHED_TICK_SECS: u32 = 10;

/// `cg_level`: what a CPU group's members share (sys/sys/smp.h).
pub const CG_SHARE_NONE: u8 = 0;
pub const CG_SHARE_L2: u8 = 2;
pub const CG_SHARE_L3: u8 = 3;

/// `SCHED_SLP_RUN_MAX` at `hz`.
pub fn slp_run_max(hz: u32) -> u32 {
    (hz * 5) << SCHED_TICK_SHIFT
}

/// `SCHED_SLP_RUN_FORK` at `hz`.
pub fn slp_run_fork(hz: u32) -> u32 {
    (hz / 2) << SCHED_TICK_SHIFT
}

/// `sched_interact_score`: 0 (sleeps only) .. 100 (runs only) from the run and sleep
/// histories; `interact` is the threshold (`kern.sched.interact`), whose shortcut returns
/// the half score for a thread that ran at least as long as it slept.
pub fn interact_score(runtime: u32, slptime: u32, interact: u32) -> u32 {
    if interact <= SCHED_INTERACT_HALF && runtime >= slptime {
        return SCHED_INTERACT_HALF;
    }
    if runtime > slptime {
        let div = (runtime / SCHED_INTERACT_HALF).max(1);
        return SCHED_INTERACT_HALF + (SCHED_INTERACT_HALF - slptime / div);
    }
    if slptime > runtime {
        let div = (slptime / SCHED_INTERACT_HALF).max(1);
        return runtime / div;
    }
    if runtime > 0 {
        SCHED_INTERACT_HALF
    } else {
        0
    }
}

/// `sched_interact_update`: the histories scaled back once their sum passes
/// `SCHED_SLP_RUN_MAX`.
pub fn interact_update(runtime: u32, slptime: u32, hz: u32) -> (u32, u32) {
    let max = slp_run_max(hz);
    let sum = runtime.saturating_add(slptime);
    if sum < max {
        return (runtime, slptime);
    }
    if sum > max * 2 {
        return if runtime > slptime {
            (max, 1)
        } else {
            (1, max)
        };
    }
    if sum > (max / 5) * 6 {
        return (runtime / 2, slptime / 2);
    }
    ((runtime / 5) * 4, (slptime / 5) * 4)
}

/// `sched_interact_fork`: a child's inherited history cut to `SCHED_SLP_RUN_FORK`.
pub fn interact_fork(runtime: u32, slptime: u32, hz: u32) -> (u32, u32) {
    let fork = slp_run_fork(hz).max(1);
    let sum = runtime + slptime;
    if sum > fork {
        let ratio = sum / fork;
        return (runtime / ratio, slptime / ratio);
    }
    (runtime, slptime)
}

/// `SCHED_PRI_TICKS`: the part of a batch priority from recent CPU use, `ts_ticks` over
/// `total` ticks of history (`SCHED_TICK_TOTAL`, at least `hz`).
pub fn pri_ticks(ts_ticks: u32, total_ticks: u32) -> u32 {
    let per_step = total_ticks.div_ceil(SCHED_PRI_RANGE);
    (ts_ticks >> SCHED_TICK_SHIFT) / per_step.max(1)
}

/// `sched_priority` for a time-sharing thread: its interactivity `score`, `nice`, and the
/// ticks part of a batch priority (`pri_ticks`, used when `ts_ticks` is not zero).
pub fn user_priority(score: u32, nice: i32, ticks_part: Option<u32>, interact: u32) -> u32 {
    let score = (score as i32 + nice).max(0) as u32;
    if score < interact {
        PRI_MIN_INTERACT + ((PRI_MAX_INTERACT - PRI_MIN_INTERACT + 1) / interact) * score
    } else {
        let mut pri = SCHED_PRI_MIN;
        if let Some(part) = ticks_part {
            pri += part.min(SCHED_PRI_RANGE - 1);
        }
        (pri as i32 + nice) as u32
    }
}

/// `sched_slice` (stat ticks) at a statclock of `stathz` (`realstathz`).
pub fn sched_slice(stathz: u32) -> u32 {
    stathz / SCHED_SLICE_DEFAULT_DIVISOR
}

/// `sched_slice_min` (stat ticks).
pub fn sched_slice_min(stathz: u32) -> u32 {
    sched_slice(stathz) / SCHED_SLICE_MIN_DIVISOR
}

/// `tdq_slice`: the slice (stat ticks) on a queue of `load` threads (the running one
/// included).
pub fn tdq_slice(load: u32, stathz: u32) -> u32 {
    let load = load as i64 - 1;
    if load >= SCHED_SLICE_MIN_DIVISOR as i64 {
        return sched_slice_min(stathz);
    }
    if load <= 1 {
        return sched_slice(stathz);
    }
    sched_slice(stathz) / load as u32
}

/// `tickincr`: the run time a stat tick is worth in hz ticks << 10.
pub fn tickincr(hz: u32, stathz: u32) -> u32 {
    ((hz << SCHED_TICK_SHIFT) / stathz.max(1)).max(1)
}

/// The statclock rate modelled by default: sched_ule.c's boot value of `realstathz`, the
/// rate its "~94 ms, 12 stathz ticks" slice assumes.
pub const DEFAULT_STATHZ: u32 = 127;

/// `sched_shouldpreempt`: may a thread of priority `pri` preempt one of `cpri`?
pub fn should_preempt(pri: u32, cpri: u32, remote: bool, preempt_thresh: u32) -> bool {
    if pri >= cpri {
        return false;
    }
    if cpri >= PRI_MIN_IDLE {
        return true;
    }
    if preempt_thresh == 0 {
        return false;
    }
    if pri <= preempt_thresh {
        return true;
    }
    remote && pri <= PRI_MAX_INTERACT && cpri > PRI_MAX_INTERACT
}

/// Tunables: the kernel's `kern.sched.*` sysctls this model honours.
#[derive(Clone, Debug)]
pub struct UleParams {
    /// `realstathz`: the statclock's rate (Hz).
    pub stathz: u32,
    /// `kern.sched.interact`.
    pub interact: u32,
    /// `kern.sched.preempt_thresh`.
    pub preempt_thresh: u32,
    /// `kern.sched.static_boost`.
    pub static_boost: u32,
    /// `kern.sched.balance`.
    pub balance: bool,
    /// `kern.sched.balance_interval` (stat ticks); `None` = realstathz.
    pub balance_interval: Option<u32>,
    /// `kern.sched.steal_idle`.
    pub steal_idle: bool,
    /// `kern.sched.steal_thresh`.
    pub steal_thresh: u32,
}

impl Default for UleParams {
    fn default() -> Self {
        Self {
            stathz: DEFAULT_STATHZ,
            interact: SCHED_INTERACT_THRESH,
            preempt_thresh: PRI_MIN_KERN,
            static_boost: PRI_MIN_BATCH,
            balance: true,
            balance_interval: None,
            steal_idle: true,
            steal_thresh: 2,
        }
    }
}

fn tunables() -> Vec<Tunable<UleParams>> {
    vec![
        Tunable::int(
            "stathz",
            "statclock rate in Hz (realstathz): slices, the balancer's interval and the run \
             time charged per stat tick count its ticks",
            1,
            100_000,
            |p: &mut UleParams| &mut p.stathz,
        ),
        Tunable::int(
            "interact",
            "interactivity score threshold (kern.sched.interact)",
            1,
            SCHED_INTERACT_MAX as i64,
            |p: &mut UleParams| &mut p.interact,
        ),
        Tunable::int(
            "preempt_thresh",
            "maximal (lowest) priority for preemption (kern.sched.preempt_thresh; 0 = none)",
            0,
            PRI_MAX_IDLE as i64,
            |p: &mut UleParams| &mut p.preempt_thresh,
        ),
        Tunable::int(
            "static_boost",
            "priority a sleeping time-sharing thread is raised to (kern.sched.static_boost; \
             0 = none)",
            0,
            PRI_MAX_TIMESHARE as i64,
            |p: &mut UleParams| &mut p.static_boost,
        ),
        Tunable::flag(
            "balance",
            "1 = run the periodic load balancer (kern.sched.balance)",
            |p: &mut UleParams| &mut p.balance,
        ),
        Tunable::int(
            "balance_interval",
            "average stat ticks between balancer runs (kern.sched.balance_interval)",
            1,
            tunables::MAX,
            |p: &mut UleParams| &mut p.balance_interval,
        )
        .derived("stathz"),
        Tunable::flag(
            "steal_idle",
            "1 = a CPU going idle steals from a busy one (kern.sched.steal_idle)",
            |p: &mut UleParams| &mut p.steal_idle,
        ),
        Tunable::int(
            "steal_thresh",
            "minimum load of a CPU stolen from (kern.sched.steal_thresh)",
            1,
            tunables::MAX,
            |p: &mut UleParams| &mut p.steal_thresh,
        ),
    ]
}

/// The run queue of a tdq a thread sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runq {
    Realtime,
    Timeshare,
}

/// Per-thread state (`struct td_sched` and the thread fields ULE uses).
#[derive(Clone, Copy, Debug)]
struct Td {
    /// `ts_runtime`, `ts_slptime`: the interactivity histories (ticks << 10).
    runtime: u32,
    slptime: u32,
    /// `ts_ticks` (ticks << 10), `ts_ltick`, `ts_ftick`: recent CPU use.
    ticks: u32,
    ltick: i64,
    ftick: i64,
    /// `ts_slice`: ticks of the slice used.
    slice: u32,
    /// `td_slptick`: the tick it went to sleep at.
    slptick: Option<i64>,
    /// `ts_rltick`: the last tick it ran (cache affinity).
    rltick: i64,
    /// `td_user_pri`: the priority its history and nice give it.
    user_pri: u32,
    /// `td_priority`: the priority it is queued and runs at.
    pri: u32,
    /// The run queue and queue index it sits on (`ts_runq`, `td_rqindex`), if queued.
    rq: Option<(Runq, u8)>,
    /// The tdq counting it in its load (`tdq_load`), from enqueue to dequeue.
    load_cpu: Option<CpuId>,
    /// `TDF_SLICEEND`: its slice ended at the last tick.
    sliceend: bool,
    parent: Option<TaskId>,
    alive: bool,
}

impl Default for Td {
    fn default() -> Self {
        Self {
            runtime: 0,
            slptime: 0,
            ticks: 0,
            ltick: 0,
            ftick: 0,
            slice: 0,
            slptick: None,
            rltick: 0,
            user_pri: PRI_MIN_INTERACT,
            pri: PRI_MIN_INTERACT,
            rq: None,
            load_cpu: None,
            sliceend: false,
            parent: None,
            alive: false,
        }
    }
}

/// `struct tdq`: one CPU's queues and counts.
#[derive(Clone, Debug)]
struct Tdq {
    realtime: RunQueue,
    timeshare: RunQueue,
    /// `tdq_load`: threads running or queued here.
    load: u32,
    /// `tdq_transferable`: queued threads that may migrate.
    transferable: u32,
    /// `tdq_idx`, `tdq_ridx`: the calendar's insert and removal indices.
    idx: u8,
    ridx: u8,
    /// The statclock tick this CPU's `sched_clock` last counted.
    stat_seen: u64,
    /// `tdq_owepreempt`: the reschedule asked of this CPU is a preemption
    /// (`SW_PREEMPT`: the thread switched out goes to the head of its queue).
    owepreempt: bool,
}

impl Tdq {
    fn new() -> Self {
        Self {
            realtime: RunQueue::new(),
            timeshare: RunQueue::new(),
            load: 0,
            transferable: 0,
            idx: 0,
            ridx: 0,
            stat_seen: 0,
            owepreempt: false,
        }
    }

    fn runq(&mut self, which: Runq) -> &mut RunQueue {
        match which {
            Runq::Realtime => &mut self.realtime,
            Runq::Timeshare => &mut self.timeshare,
        }
    }
}

/// A `struct cpu_group`: the CPUs sharing a cache level, and its child groups.
#[derive(Clone, Debug)]
struct CpuGroup {
    mask: CpuMask,
    parent: Option<usize>,
    children: Vec<usize>,
    /// `cg_level`.
    level: u8,
    /// `CG_FLAG_THREAD`: the hardware threads of one core.
    thread: bool,
}

/// Which group of a tree level a CPU belongs to.
type LevelKey = fn(&Topology, u32) -> u32;

/// The `cpu_group` tree of a machine (`smp_topo`) and each CPU's own group
/// (`tdq_cg`).
#[derive(Clone, Debug, Default)]
struct CpuTopology {
    groups: Vec<CpuGroup>,
    leaf: Vec<usize>,
}

impl CpuTopology {
    /// Groups for packages, last-level caches and cores, each made only when it holds
    /// fewer CPUs than its parent.
    fn build(t: &Topology) -> Self {
        let n = t.nr_cpus();
        let mask_of = |f: &dyn Fn(u32) -> bool| {
            let mut m = CpuMask::empty();
            for c in (0..n).filter(|&c| f(c)) {
                m.set(CpuId(c));
            }
            m
        };
        let llcs = t.packages * t.cores_per_package / t.cores_per_llc.max(1);
        let root_level = if llcs <= 1 {
            CG_SHARE_L3
        } else {
            CG_SHARE_NONE
        };
        let mut topo = CpuTopology {
            groups: vec![CpuGroup {
                mask: mask_of(&|_| true),
                parent: None,
                children: Vec::new(),
                level: root_level,
                thread: false,
            }],
            leaf: vec![0; n as usize],
        };
        let package_level = if t.cores_per_llc >= t.cores_per_package {
            CG_SHARE_L3
        } else {
            CG_SHARE_NONE
        };
        // Each level: the key of a CPU's group, the group's cache share, whether SMT.
        let levels: [(LevelKey, u8, bool); 3] = [
            (|t, c| t.package_of(c), package_level, false),
            (|t, c| t.llc_of(c), CG_SHARE_L3, false),
            (|t, c| t.core_of(c), CG_SHARE_L2, true),
        ];
        for (key, level, thread) in levels {
            for c in 0..n {
                let parent = topo.leaf[c as usize];
                let k = key(t, c);
                let mask = mask_of(&|x| key(t, x) == k);
                if mask == topo.groups[parent].mask {
                    continue;
                }
                if let Some(g) = topo.groups[parent]
                    .children
                    .iter()
                    .copied()
                    .find(|&g| topo.groups[g].mask == mask)
                {
                    topo.leaf[c as usize] = g;
                    continue;
                }
                let g = topo.groups.len();
                topo.groups.push(CpuGroup {
                    mask,
                    parent: Some(parent),
                    children: Vec::new(),
                    level,
                    thread,
                });
                topo.groups[parent].children.push(g);
                topo.leaf[c as usize] = g;
            }
        }
        topo
    }
}

/// A `cpu_search` candidate: the CPU and its load with the random offset (`cs_load`).
#[derive(Clone, Copy, Debug)]
struct Found {
    cpu: CpuId,
    cs_load: i64,
}

/// What `cpu_search` looks for.
#[derive(Clone, Copy, Debug)]
enum Search {
    /// `CPU_SEARCH_LOWEST`: a CPU whose best priority is worse than `pri` (`cs_pri`;
    /// -1 = any) with at most `limit` threads; `prefer` counts 64 less.
    Lowest { pri: i64, limit: u32, prefer: CpuId },
    /// `CPU_SEARCH_HIGHEST`: a CPU with at least `limit` threads, one of them queued.
    Highest { limit: u32 },
}

/// The ULE policy: a tdq per CPU, threads placed by `sched_pickcpu`.
pub struct FreebsdUle {
    tdq: Vec<Tdq>,
    td: Vec<Td>,
    topo: CpuTopology,
    params: UleParams,
    /// `balance_ticks`: ticks of the first CPU until the next `sched_balance`.
    balance_ticks: i64,
    /// The CPU the wake-up being placed runs on (`PCPU_GET(cpuid)` in `sched_add`).
    waker: Option<CpuId>,
}

impl FreebsdUle {
    pub fn new(nr_cpus: usize) -> Self {
        Self {
            tdq: (0..nr_cpus.max(1)).map(|_| Tdq::new()).collect(),
            td: Vec::new(),
            topo: CpuTopology::default(),
            params: UleParams::default(),
            balance_ticks: 0,
            waker: None,
        }
    }

    /// A thread's run-queue priority `td_priority`.
    pub fn priority(&self, t: TaskId) -> u32 {
        self.td[t.idx()].pri
    }

    /// A thread's interactivity score as `sched_interact_score` computes it now.
    pub fn score(&self, t: TaskId) -> u32 {
        let td = &self.td[t.idx()];
        interact_score(td.runtime, td.slptime, self.params.interact)
    }

    /// A thread's (run, sleep) history in ticks << 10.
    pub fn history(&self, t: TaskId) -> (u32, u32) {
        let td = &self.td[t.idx()];
        (td.runtime, td.slptime)
    }

    /// `tdq_load` of `cpu`.
    pub fn load(&self, cpu: CpuId) -> u32 {
        self.tdq[cpu.idx()].load
    }

    fn ticks(ctx: &Ctx) -> i64 {
        (ctx.now() / ctx.tick_ns()) as i64
    }

    fn ensure(&mut self, ctx: &Ctx, t: TaskId) {
        if self.td.len() <= t.idx() {
            let len = (t.idx() + 1).max(self.td.len() * 2);
            self.td.resize(len, Td::default());
        }
        if self.topo.groups.is_empty() {
            self.topo = CpuTopology::build(ctx.topology());
            self.balance_ticks = self.balance_interval() as i64;
        }
    }

    fn balance_interval(&self) -> u32 {
        self.params
            .balance_interval
            .unwrap_or(self.params.stathz)
            .max(1)
    }

    /// Statclock ticks since boot at `now`.
    fn stat_ticks(&self, ctx: &Ctx) -> u64 {
        (ctx.now() as u128 * self.params.stathz as u128 / 1_000_000_000) as u64
    }

    // ------------------------------------------------------------ priority

    /// `sched_pctcpu_update`: slide the window of recent CPU use to `now` ticks,
    /// crediting the ticks since `ts_ltick` when the thread ran them.
    fn pctcpu_update(&mut self, t: TaskId, now: i64, run: bool, hz: u32) {
        let targ = (hz * SCHED_TICK_SECS) as i64;
        let max = targ + hz as i64;
        let td = &mut self.td[t.idx()];
        if now - td.ltick >= targ {
            td.ticks = 0;
            td.ftick = now - targ;
        } else if now - td.ftick >= max {
            let span = (td.ltick - td.ftick).max(1);
            let keep = (td.ltick - (now - targ)).max(0);
            td.ticks = ((td.ticks as i64 / span) * keep) as u32;
            td.ftick = now - targ;
        }
        if run {
            td.ticks = td
                .ticks
                .saturating_add(((now - td.ltick).max(0) as u32) << SCHED_TICK_SHIFT);
        }
        td.ltick = now;
    }

    /// `sched_priority` (time-sharing threads; real-time ones keep their fixed priority):
    /// the user priority from the score, nice and recent CPU use.
    fn user_pri_of(&self, ctx: &Ctx, t: TaskId) -> u32 {
        let attrs = ctx.task(t).attrs;
        if !is_timeshare(&attrs) {
            return rt_priority(&attrs);
        }
        let td = &self.td[t.idx()];
        let score = interact_score(td.runtime, td.slptime, self.params.interact);
        let total = ((td.ltick - td.ftick).max(ctx.hz() as i64)) as u32;
        let ticks_part = (td.ticks != 0).then(|| pri_ticks(td.ticks, total));
        user_priority(score, attrs.nice, ticks_part, self.params.interact)
    }

    /// `sched_priority` + `sched_user_prio`.
    fn sched_priority(&mut self, ctx: &Ctx, t: TaskId) {
        self.td[t.idx()].user_pri = self.user_pri_of(ctx, t);
    }

    /// `sched_interact_update` on a thread.
    fn update_history(&mut self, t: TaskId, hz: u32) {
        let td = &mut self.td[t.idx()];
        (td.runtime, td.slptime) = interact_update(td.runtime, td.slptime, hz);
    }

    /// The priority now in force moves to what the history gives (`sched_prio` /
    /// `sched_userret`); a queued thread changes queue if it must.
    fn set_priority(&mut self, t: TaskId, pri: u32) {
        let td = &mut self.td[t.idx()];
        if td.pri == pri {
            return;
        }
        td.pri = pri;
        if let (Some((which, q)), Some(cpu)) = (td.rq, td.load_cpu) {
            let fits = match which {
                Runq::Realtime => pri < PRI_MIN_BATCH && q as usize == queue_of(pri),
                Runq::Timeshare => pri >= PRI_MIN_BATCH,
            };
            if !fits {
                self.runq_rem(cpu, t);
                self.runq_add(cpu, t, false);
            }
        }
    }

    // ------------------------------------------------------------ run queues

    /// `tdq_runq_add`: the real-time queue below `PRI_MIN_BATCH`; for batch priorities,
    /// the calendar slot `tdq_idx` + the priority's offset (one short of `tdq_ridx`), or
    /// the head of `tdq_ridx` for a preempted thread.
    fn runq_add(&mut self, cpu: CpuId, t: TaskId, preempted: bool) {
        let pri = self.td[t.idx()].pri;
        let tdq = &mut self.tdq[cpu.idx()];
        tdq.transferable += 1;
        let (which, q) = if pri < PRI_MIN_BATCH {
            (Runq::Realtime, queue_of(pri))
        } else if preempted {
            (Runq::Timeshare, tdq.ridx as usize)
        } else {
            let offset = RQ_NQS * (pri - PRI_MIN_BATCH) as usize / PRI_BATCH_RANGE as usize;
            let mut q = (offset + tdq.idx as usize) % RQ_NQS;
            if tdq.ridx != tdq.idx && q == tdq.ridx as usize {
                q = (q + RQ_NQS - 1) % RQ_NQS;
            }
            (Runq::Timeshare, q)
        };
        tdq.runq(which).add(q, t, preempted);
        self.td[t.idx()].rq = Some((which, q as u8));
    }

    /// `tdq_runq_rem`: out of its queue; a calendar queue emptied at `tdq_ridx` moves
    /// `tdq_ridx` on while the calendar drains (`runq_remove_idx`). Returns the entries
    /// looked at.
    fn runq_rem(&mut self, cpu: CpuId, t: TaskId) -> usize {
        let Some((which, q)) = self.td[t.idx()].rq.take() else {
            return 0;
        };
        let tdq = &mut self.tdq[cpu.idx()];
        tdq.transferable -= 1;
        let steps = tdq.runq(which).remove(q as usize, t);
        if which == Runq::Timeshare
            && tdq.idx != tdq.ridx
            && tdq.ridx == q
            && tdq.timeshare.queue(q as usize).is_empty()
        {
            tdq.ridx = ((q as usize + 1) % RQ_NQS) as u8;
        }
        steps
    }

    /// `tdq_choose`: the first real-time thread, else the calendar's from `tdq_ridx`.
    fn choose(&self, cpu: CpuId) -> (Option<TaskId>, u64) {
        let tdq = &self.tdq[cpu.idx()];
        let (rt, s1) = tdq.realtime.choose(|_| true);
        if rt.is_some() {
            return (rt, s1);
        }
        let (ts, s2) = tdq.timeshare.choose_from(tdq.ridx as usize, |_| true);
        (ts, s1 + s2)
    }

    /// `tdq_lowpri`: the best priority running or queued on `cpu` (`PRI_MAX_IDLE` when
    /// idle), as `tdq_add`, `sched_choose` and `tdq_setlowpri` keep it.
    fn lowpri(&self, ctx: &Ctx, cpu: CpuId) -> u32 {
        let running = ctx.curr(cpu).map_or(PRI_MAX_IDLE, |c| self.td[c.idx()].pri);
        let queued = self
            .choose(cpu)
            .0
            .map_or(PRI_MAX_IDLE, |q| self.td[q.idx()].pri);
        running.min(queued)
    }

    /// `tdq_add` (the load counted, then the queue) for a thread on `cpu`.
    fn tdq_add(&mut self, cpu: CpuId, t: TaskId, preempted: bool) {
        self.runq_add(cpu, t, preempted);
        self.load_add(cpu, t);
    }

    fn load_add(&mut self, cpu: CpuId, t: TaskId) {
        let td = &mut self.td[t.idx()];
        if td.load_cpu.is_none() {
            td.load_cpu = Some(cpu);
            self.tdq[cpu.idx()].load += 1;
        }
    }

    fn load_rem(&mut self, t: TaskId) {
        if let Some(cpu) = self.td[t.idx()].load_cpu.take() {
            self.tdq[cpu.idx()].load -= 1;
        }
    }

    // ------------------------------------------------------------ CPU search

    /// `cpu_search` over group `g`: the group's total load (load × 256, the preferred CPU
    /// counting 64 less) and the best candidate on the least (or most) loaded path.
    fn cpu_search(
        &self,
        ctx: &mut Ctx,
        g: usize,
        mask: &CpuMask,
        how: Search,
    ) -> (i64, Option<Found>) {
        let group = &self.topo.groups[g];
        let mut rest = group.mask;
        let mut total = 0i64;
        let mut best: Option<(i64, Found)> = None;
        let consider = |load: i64, found: Option<Found>, best: &mut Option<(i64, Found)>| {
            let Some(f) = found else { return };
            let better = match (how, *best) {
                (_, None) => true,
                (Search::Lowest { .. }, Some((bl, bf))) => {
                    load < bl || (load == bl && f.cs_load < bf.cs_load)
                }
                (Search::Highest { .. }, Some((bl, bf))) => {
                    load > bl || (load == bl && f.cs_load > bf.cs_load)
                }
            };
            if better {
                *best = Some((load, f));
            }
        };
        for &child in group.children.iter().rev() {
            for c in self.topo.groups[child].mask.iter() {
                rest.clear(c);
            }
            let (load, found) = self.cpu_search(ctx, child, mask, how);
            total += load;
            consider(load, found, &mut best);
        }
        for cpu in rest.iter() {
            let tdq = &self.tdq[cpu.idx()];
            let mut load = tdq.load as i64 * 256;
            let rnd = (ctx.random() % 32) as i64;
            ctx.count_work(1);
            let found = match how {
                Search::Lowest { pri, limit, prefer } => {
                    if cpu == prefer {
                        load -= 64;
                    }
                    let ok = self.lowpri(ctx, cpu) as i64 > pri
                        && tdq.load <= limit
                        && mask.contains(cpu);
                    ok.then_some(Found {
                        cpu,
                        cs_load: load - rnd,
                    })
                }
                Search::Highest { limit } => {
                    let ok = tdq.load >= limit && tdq.transferable > 0 && mask.contains(cpu);
                    ok.then_some(Found {
                        cpu,
                        cs_load: load - rnd,
                    })
                }
            };
            total += load;
            consider(load, found, &mut best);
        }
        (total, best.map(|(_, f)| f))
    }

    /// `sched_lowest`.
    fn sched_lowest(
        &self,
        ctx: &mut Ctx,
        g: usize,
        mask: &CpuMask,
        pri: i64,
        limit: u32,
        prefer: CpuId,
    ) -> Option<CpuId> {
        let how = Search::Lowest { pri, limit, prefer };
        self.cpu_search(ctx, g, mask, how).1.map(|f| f.cpu)
    }

    /// `sched_highest`.
    fn sched_highest(&self, ctx: &mut Ctx, g: usize, mask: &CpuMask, min: u32) -> Option<CpuId> {
        let how = Search::Highest { limit: min };
        self.cpu_search(ctx, g, mask, how).1.map(|f| f.cpu)
    }

    /// `SCHED_AFFINITY(ts, level)`: it ran within `level` × `affinity` ticks.
    fn affine(&self, ctx: &Ctx, t: TaskId, level: u8) -> bool {
        let affinity = (ctx.hz() / 1000).max(1) as i64;
        self.td[t.idx()].rltick > Self::ticks(ctx) - level as i64 * affinity
    }

    /// `sched_pickcpu`: the CPU a waking or new thread is queued on; `last` is `ts_cpu`,
    /// `me` the CPU the wake-up runs on.
    fn pickcpu(&self, ctx: &mut Ctx, t: TaskId, last: CpuId, me: CpuId) -> CpuId {
        let mask = ctx.task(t).affinity;
        let pri = self.td[t.idx()].pri;
        let mut g = self.topo.leaf[last.idx()];
        if mask.contains(last)
            && self.lowpri(ctx, last) >= PRI_MIN_IDLE
            && self.affine(ctx, t, CG_SHARE_L2)
        {
            let group = &self.topo.groups[g];
            if !group.thread
                || group
                    .mask
                    .iter()
                    .all(|c| self.lowpri(ctx, c) >= PRI_MIN_IDLE)
            {
                return last;
            }
        }
        // The highest cache group still within the thread's affinity, unless it is the
        // whole machine.
        let mut llc = None;
        loop {
            let group = &self.topo.groups[g];
            let skip = group.thread
                || group.children.len() == 1
                || group.mask.count() == 1
                || group.level == CG_SHARE_NONE
                || !self.affine(ctx, t, group.level);
            if !skip {
                llc = Some(g);
            }
            match group.parent {
                Some(p) => g = p,
                None => break,
            }
        }
        let llc = llc.filter(|&g| g != 0);
        let mut cpu = llc.and_then(|g| {
            let idle = pri.max(PRI_MAX_TIMESHARE) as i64;
            self.sched_lowest(ctx, g, &mask, idle, u32::MAX, last)
        });
        if cpu.is_none() {
            cpu = self.sched_lowest(ctx, 0, &mask, pri as i64, u32::MAX, last);
        }
        let cpu = cpu
            .or_else(|| self.sched_lowest(ctx, 0, &mask, -1, u32::MAX, last))
            .expect("the affinity holds a CPU");
        let here = &self.tdq[me.idx()];
        if mask.contains(me)
            && self.lowpri(ctx, me) > pri
            && self.lowpri(ctx, cpu) < PRI_MIN_IDLE
            && here.load <= self.tdq[cpu.idx()].load + 1
        {
            return me;
        }
        cpu
    }

    // ------------------------------------------------------------ stealing, balancing

    /// `tdq_steal` (`runq_steal`, `runq_steal_from`): a queued thread of `from` that may
    /// run on `to`; in the calendar, the first thread met is taken only when no later
    /// one can go.
    fn steal_candidate(&self, ctx: &Ctx, from: CpuId, to: CpuId) -> Option<TaskId> {
        let tdq = &self.tdq[from.idx()];
        let can = |t: TaskId| ctx.task(t).affinity.contains(to);
        if let (Some(t), _) = tdq.realtime.choose(can) {
            return Some(t);
        }
        let mut first = None;
        let (found, _) = tdq.timeshare.choose_from(tdq.ridx as usize, |t| {
            if first.is_none() {
                first = Some(t);
                return false;
            }
            can(t)
        });
        found.or(first.filter(|&t| can(t)))
    }

    /// `tdq_move`: a thread of `from` moved to `to` (`sched_rem`, then `tdq_add` with
    /// `SRQ_YIELDING`).
    fn tdq_move(&mut self, ctx: &mut Ctx, from: CpuId, to: CpuId) -> Option<TaskId> {
        let t = self.steal_candidate(ctx, from, to)?;
        let steps = self.runq_rem(from, t);
        ctx.count_work(steps as u64 + 1);
        self.load_rem(t);
        ctx.set_task_cpu(t, to);
        self.tdq_add(to, t, false);
        Some(t)
    }

    /// `tdq_notify`: interrupt `cpu` when the thread put there should preempt what it
    /// runs (`sched_shouldpreempt(…, remote)`); an idle CPU always wakes.
    fn notify(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let pri = self.td[t.idx()].pri;
        let cpri = ctx.curr(cpu).map_or(PRI_MAX_IDLE, |c| self.td[c.idx()].pri);
        if should_preempt(pri, cpri, true, self.params.preempt_thresh) {
            self.tdq[cpu.idx()].owepreempt = ctx.curr(cpu).is_some();
            ctx.resched(cpu);
        }
    }

    /// `tdq_idled`: the idle `cpu` takes a thread from the busiest CPU of its group
    /// holding `steal_thresh` threads, looking in ever wider groups.
    fn idled(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        if !self.params.steal_idle || self.tdq[cpu.idx()].load > 0 {
            return;
        }
        let mut mask = CpuMask::first_n(ctx.nr_cpus());
        mask.clear(cpu);
        let mut g = Some(self.topo.leaf[cpu.idx()]);
        while let Some(group) = g {
            match self.sched_highest(ctx, group, &mask, self.params.steal_thresh) {
                None => g = self.topo.groups[group].parent,
                Some(victim) => {
                    if self.tdq_move(ctx, victim, cpu).is_some() {
                        return;
                    }
                    mask.clear(victim);
                }
            }
        }
    }

    /// `sched_balance` + `sched_balance_group(cpu_top)`: repeatedly move a thread from
    /// the most loaded CPU to the least loaded one with fewer threads.
    fn balance_all(&mut self, ctx: &mut Ctx, me: CpuId) {
        let interval = self.balance_interval() as i64;
        self.balance_ticks = (interval / 2).max(1) + (ctx.random() % interval as u64) as i64;
        let mut hmask = CpuMask::first_n(ctx.nr_cpus());
        'high: while let Some(high) = self.sched_highest(ctx, 0, &hmask, 2) {
            hmask.clear(high);
            let mut lmask = hmask;
            if lmask.is_empty() {
                break;
            }
            let mut anylow = true;
            loop {
                let limit = self.tdq[high.idx()].load.saturating_sub(1);
                let low = self.sched_lowest(ctx, 0, &lmask, -1, limit, high);
                let Some(low) = low else {
                    if anylow {
                        break 'high;
                    }
                    continue 'high;
                };
                if self.balance_pair(ctx, high, low, me) {
                    hmask.clear(low);
                    continue 'high;
                }
                lmask.clear(low);
                anylow = false;
            }
        }
    }

    /// `sched_balance_pair`: one thread from `high` to `low` if `high` has more.
    fn balance_pair(&mut self, ctx: &mut Ctx, high: CpuId, low: CpuId, me: CpuId) -> bool {
        let (h, l) = (&self.tdq[high.idx()], &self.tdq[low.idx()]);
        if h.transferable == 0 || h.load <= l.load {
            return false;
        }
        let Some(t) = self.tdq_move(ctx, high, low) else {
            return false;
        };
        if low != me {
            self.notify(ctx, low, t);
        }
        true
    }

    /// `sched_clock(td, cnt)`: the balancer's countdown on the first CPU, the calendar's
    /// advance, the stat ticks charged to a time-sharing thread's history and priority,
    /// and the slice (`tdq_slice` of the queue's load; none for FIFO threads).
    fn sched_clock(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, cnt: u32) {
        let (hz, stathz) = (ctx.hz(), self.params.stathz);
        if cpu.idx() == 0 && self.params.balance && ctx.nr_cpus() > 1 {
            self.balance_ticks -= cnt as i64;
            if self.balance_ticks <= 0 {
                self.balance_all(ctx, cpu);
            }
        }
        let tdq = &mut self.tdq[cpu.idx()];
        if tdq.idx == tdq.ridx {
            tdq.idx = ((tdq.idx as usize + 1) % RQ_NQS) as u8;
            if tdq.timeshare.queue(tdq.ridx as usize).is_empty() {
                tdq.ridx = tdq.idx;
            }
        }
        let now = Self::ticks(ctx);
        self.pctcpu_update(t, now, true, hz);
        let attrs = ctx.task(t).attrs;
        if attrs.policy == Policy::Fifo {
            return;
        }
        if is_timeshare(&attrs) {
            let td = &mut self.td[t.idx()];
            td.runtime = td.runtime.saturating_add(tickincr(hz, stathz) * cnt);
            self.update_history(t, hz);
            self.sched_priority(ctx, t);
            let user = self.td[t.idx()].user_pri;
            self.set_priority(t, user);
        }
        let slice = tdq_slice(self.tdq[cpu.idx()].load, stathz);
        let td = &mut self.td[t.idx()];
        td.slice += cnt;
        if td.slice >= slice {
            td.slice = 0;
            td.sliceend = true;
            ctx.resched(cpu);
        }
    }

    /// `sched_wakeup`'s history: the ticks slept (when it slept across a tick) join the
    /// sleep history; the slice starts again.
    fn account_sleep(&mut self, ctx: &Ctx, t: TaskId) {
        let now = Self::ticks(ctx);
        let hz = ctx.hz();
        let td = &mut self.td[t.idx()];
        td.slice = 0;
        let Some(slept_at) = td.slptick.take() else {
            return;
        };
        if slept_at != now {
            let slept = ((now - slept_at) as u32) << SCHED_TICK_SHIFT;
            td.slptime = td.slptime.saturating_add(slept);
            self.update_history(t, hz);
            self.pctcpu_update(t, now, false, hz);
        }
    }
}

impl Scheduler for FreebsdUle {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "freebsd-ule",
            summary: "FreeBSD's ULE scheduler: per-CPU queues, interactivity score from sleep \
                      and run history, timeshare calendar, load-dependent slices, \
                      topology-aware CPU choice, idle stealing and periodic balancing",
            source: "FreeBSD sys/kern/sched_ule.c (freebsd-src d8d5f036): sched_interact_score, \
                     sched_priority, tdq_slice, sched_clock, tdq_runq_add, sched_pickcpu, \
                     cpu_search, tdq_idled, sched_balance; sys/sys/runq.h, kern/kern_switch.c",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "freebsd-ule", name, value)
    }

    /// What FreeBSD's Linux ABI accepts: SCHED_OTHER, SCHED_FIFO and SCHED_RR.
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        freebsd_runq::linux_abi_accepts("freebsd-ule", attrs)
    }

    /// `sched_fork` / `sched_fork_thread`: the child inherits the parent's CPU-use and
    /// interactivity histories (cut by `sched_interact_fork`) and starts with
    /// `sched_slice_min` of its slice left; the parent is charged a tick. A thread the
    /// run starts with begins with empty histories (`schedinit`'s thread0).
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        self.ensure(ctx, t);
        let now = Self::ticks(ctx);
        let hz = ctx.hz();
        let parent_td = parent.filter(|p| self.td.len() > p.idx() && self.td[p.idx()].alive);
        let mut td = Td {
            ltick: now,
            ftick: now,
            parent,
            alive: true,
            ..Td::default()
        };
        if let Some(p) = parent_td {
            self.pctcpu_update(p, now, true, hz);
            let ptd = self.td[p.idx()];
            td.ticks = ptd.ticks;
            td.ltick = ptd.ltick;
            td.ftick = ptd.ftick;
            (td.runtime, td.slptime) = interact_fork(ptd.runtime, ptd.slptime, hz);
            let here = self.tdq[ctx.task(p).cpu.idx()].load;
            let stathz = self.params.stathz;
            td.slice = tdq_slice(here, stathz).saturating_sub(sched_slice_min(stathz));
        }
        self.td[t.idx()] = td;
        self.sched_priority(ctx, t);
        let pri = self.td[t.idx()].user_pri;
        self.td[t.idx()].pri = pri;
        if let Some(p) = parent_td {
            self.td[p.idx()].runtime += tickincr(hz, self.params.stathz);
            self.update_history(p, hz);
            self.sched_priority(ctx, p);
        }
    }

    fn task_exit(&mut self, _ctx: &mut Ctx, t: TaskId) {
        self.td[t.idx()].alive = false;
    }

    /// `sched_wakeup` (the sleep joins the history) and `sched_add`'s `sched_priority`
    /// and `sched_pickcpu`.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        if kind == WakeKind::Wakeup {
            self.account_sleep(ctx, t);
        }
        self.sched_priority(ctx, t);
        let me = ctx.wake_flags().waker_cpu.unwrap_or(prev);
        self.waker = Some(me);
        let cpu = self.pickcpu(ctx, t, prev, me);
        ctx.count_work(1);
        cpu
    }

    /// `tdq_add`: onto `cpu`'s queues, counted in its load.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if kind == EnqueueKind::Wakeup {
            self.account_sleep(ctx, t);
            self.sched_priority(ctx, t);
        } else {
            if kind == EnqueueKind::Restore {
                // A move, not a wake-up: the CPU is told as a remote one.
                self.waker = None;
            }
            self.sched_priority(ctx, t);
            let user = self.td[t.idx()].user_pri;
            self.set_priority(t, user);
        }
        if ctx.task(t).running {
            // Still current on its CPU (woken as it blocked): sched_switch queues it.
            self.load_add(cpu, t);
            return;
        }
        self.tdq_add(cpu, t, false);
        ctx.count_work(1);
    }

    /// `sched_sleep` (the tick it slept at; `static_boost`), `sched_rem`, and for an exit
    /// `sched_exit_thread` (the parent is charged the child's run time).
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        let steps = self.runq_rem(cpu, t);
        ctx.count_work(steps as u64 + 1);
        self.load_rem(t);
        let hz = ctx.hz();
        match kind {
            DequeueKind::Save => {}
            DequeueKind::Sleep => {
                self.td[t.idx()].slptick = Some(Self::ticks(ctx));
                let boost = self.params.static_boost;
                let pri = self.td[t.idx()].pri;
                if is_timeshare(&ctx.task(t).attrs) && boost != 0 && pri > boost {
                    self.set_priority(t, boost);
                }
            }
            DequeueKind::Exit => {
                let (child, parent) = (self.td[t.idx()].runtime, self.td[t.idx()].parent);
                if let Some(p) = parent.filter(|p| self.td[p.idx()].alive) {
                    let ptd = &mut self.td[p.idx()];
                    ptd.runtime = ptd.runtime.saturating_add(child);
                    self.update_history(p, hz);
                    self.sched_priority(ctx, p);
                }
            }
        }
    }

    /// `sched_setpreempt` for a wake-up on the waker's own CPU (any better priority
    /// reschedules it at its return to user mode), `tdq_notify` for another CPU.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.waker == Some(cpu) {
            let Some(cur) = ctx.curr(cpu) else { return };
            let (pri, cpri) = (self.td[t.idx()].pri, self.td[cur.idx()].pri);
            if pri < cpri {
                let thresh = self.params.preempt_thresh;
                self.tdq[cpu.idx()].owepreempt = should_preempt(pri, cpri, false, thresh);
                ctx.resched(cpu);
            }
        } else {
            self.notify(ctx, cpu, t);
        }
    }

    /// `sched_switch`: the CPU-use window and `ts_rltick` updated; a thread still
    /// runnable goes back on its queue — at the head of `tdq_ridx` when it was preempted
    /// (`SRQ_PREEMPTED`), by its priority otherwise.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let now = Self::ticks(ctx);
        self.pctcpu_update(t, now, true, ctx.hz());
        let owed = std::mem::take(&mut self.tdq[cpu.idx()].owepreempt);
        let td = &mut self.td[t.idx()];
        td.rltick = now;
        let preempted = owed && !std::mem::take(&mut td.sliceend);
        td.sliceend = false;
        if ctx.task(t).on_rq && td.rq.is_none() {
            self.load_add(cpu, t);
            self.runq_add(cpu, t, preempted);
        }
    }

    /// `sched_choose`: the best real-time thread, else the calendar's next; it runs at
    /// its user priority (`sched_userret`).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let (found, steps) = self.choose(cpu);
        ctx.count_work(steps);
        let t = found?;
        self.runq_rem(cpu, t);
        if ctx.curr(cpu).is_none() {
            // The stat ticks of the idle time were the idle thread's.
            self.tdq[cpu.idx()].stat_seen = self.stat_ticks(ctx);
        }
        let now = Self::ticks(ctx);
        self.pctcpu_update(t, now, false, ctx.hz());
        let user = self.td[t.idx()].user_pri;
        self.td[t.idx()].pri = user;
        Some(t)
    }

    /// The statclock's ticks since this CPU's last one go to `sched_clock`.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let stat = self.stat_ticks(ctx);
        let cnt = stat.saturating_sub(self.tdq[cpu.idx()].stat_seen) as u32;
        self.tdq[cpu.idx()].stat_seen = stat;
        if cnt > 0 {
            self.sched_clock(ctx, cpu, t, cnt);
        }
    }

    /// `tdq_idled`: a CPU about to idle steals.
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if kind == BalanceKind::NewIdle && ctx.nr_cpus() > 1 {
            self.idled(ctx, cpu);
        }
    }

    /// `sched_relinquish`: the engine reschedules; `sched_switch` queues the thread by
    /// its priority.
    fn yield_task(&mut self, _ctx: &mut Ctx, _cpu: CpuId, _t: TaskId) {}

    /// `sched_nice` / `rtp_to_pri`: enqueue(Restore) already placed the thread at the
    /// priority its new attributes give.
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        self.sched_priority(ctx, t);
        let user = self.td[t.idx()].user_pri;
        self.set_priority(t, user);
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.td
            .get(t.idx())
            .map(|td| ("td_priority", td.pri as i64))
    }

    /// The slice of a thread alone on its CPU (`tdq_slice` at load 1: `sched_slice` =
    /// realstathz / 10 stat ticks, whatever `hz`); FIFO threads have none.
    fn timeslice_ns(&self, attrs: &SchedAttrs, _hz: u32) -> Option<u64> {
        self.accepts(attrs).ok()?;
        if attrs.policy == Policy::Fifo {
            return None;
        }
        let stathz = self.params.stathz as u64;
        Some(tdq_slice(1, self.params.stathz) as u64 * 1_000_000_000 / stathz)
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, tdq) in self.tdq.iter().enumerate() {
            for t in tdq.realtime.iter().chain(tdq.timeshare.iter()) {
                f(CpuId(c as u32), t);
            }
        }
    }
}

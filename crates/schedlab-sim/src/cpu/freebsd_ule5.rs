//! `freebsd-ule5`: the ULE scheduler of FreeBSD 5.x/6.0 (`options SCHED_ULE`), the one
//! the 4BSD-against-ULE comparisons of the FreeBSD 5.4 days ran.
//!
//! Source: FreeBSD sys/kern/sched_ule.c revision 1.161 (`$FreeBSD: src/sys/kern/sched_ule.c,v
//! 1.161 2005/12/27 12:02:03 davidxu Exp $`), as held by the TrustedBSD/sebsd repository
//! (commit fd5de6f587183087cf930779701d5713e8ca64cc). No RELENG_5 revision of the file (the
//! 1.1xx revisions of early 2005 that 5.4 shipped) could be read: the newer histories hold
//! the 2007 rewrite (`tdq`, no current/next queues) and later, so 1.161, the closest
//! surviving revision to 5.4 with the same design (per-CPU `kseq`, interactivity from
//! `kg_slptime` / `kg_runtime`, current/next queues), is the one modelled. The priority
//! ranges of that era are those of sys/sys/priority.h before FreeBSD 9 (interrupt threads
//! 0–63, kernel 64–127, real-time user threads 128–159, time-sharing 160–223, idle
//! 224–255), read from a token history of the file; the run queue (64 queues of 4
//! priorities) is the shared `freebsd_runq::RunQueue`.
//!
//! Line numbers are those of 1.161 at that commit; modelled here:
//! - `struct kseq` (lines 228–245): two time-sharing run queues, `ksq_curr` and
//!   `ksq_next`, swapped by `kseq_choose` (lines 863–906) when the current one is empty;
//!   `ksq_load`, `ksq_load_timeshare`, the nice bins `ksq_nice[]` and `ksq_nicemin`
//!   (`kseq_load_add` / `kseq_load_rem`, lines 376–394 / 396–415, `kseq_nice_add` /
//!   `kseq_nice_rem`, lines 417–425 / 427–453), `ksq_transferable` (`kseq_runq_add` /
//!   `kseq_runq_rem`, lines 348–361 / 363–374).
//! - Interactivity: `sched_interact_score` (lines 1170–1189; run > sleep: `50 + (50 −
//!   slp / max(1, run / 50))`; sleep > run: `run / max(1, slp / 50)`; else 0),
//!   `sched_interact_update` (lines 1134–1154; history capped at `SCHED_SLP_RUN_MAX =
//!   (hz · 5) << 10`, line 179: halved above 6/5 of it, else scaled by 4/5),
//!   `sched_interact_fork` (lines 1156–1168; the child keeps at most
//!   `SCHED_SLP_RUN_FORK = (hz / 2) << 10`, line 180), `SCHED_INTERACTIVE` (lines
//!   209–210; score < `SCHED_INTERACT_THRESH` = 30, line 183) and `SCHED_CURR` (lines
//!   211–213; interactive threads go on the current queue, the others on the next).
//! - `sched_priority` (lines 1046–1066): `PRI_MIN_TIMESHARE + score · SCHED_PRI_RANGE /
//!   100 + nice` (`SCHED_PRI_INTERACT`, lines 167–168), clamped to the time-sharing range
//!   (SCHED_PRI_RANGE = 64 with this era's ranges, line 163).
//! - `sched_slice` (lines 1072–1126): an interactive thread gets
//!   `SCHED_SLICE_INTERACTIVE` (= slice_max); a non-interactive one `SCHED_SLICE_MAX` when
//!   its queue has no time-sharing load or it is the least nice, `SCHED_SLICE_NICE(nice −
//!   nicemin)` within `SCHED_SLICE_NTHRESH` (19) of the least nice, else
//!   `SCHED_SLICE_MIN` (the macros at lines 196–203); slice_min = stathz / 100, slice_max
//!   = stathz / 7 (`sched_initticks`, lines 1023–1039).
//! - `sched_clock` (lines 1625–1688): the balancers when their tick has come (`bal_tick`,
//!   `gbal_tick`), then for a time-sharing thread `kg_runtime += tickincr`,
//!   `sched_interact_update`, and at the end of its slice a new priority, slice and queue
//!   and `TDF_NEEDRESCHED`.
//! - `sched_sleep` / `sched_wakeup` (lines 1462–1468 / 1470–1497: the ticks slept, `<<
//!   10`, added to `kg_slptime`, or the history reset to `slp = SLP_RUN_MAX, run = 1`
//!   after a longer sleep; then `sched_priority` and `sched_slice`), `sched_fork_ksegrp` /
//!   `sched_fork_thread` (lines 1513–1525 / 1527–1544: the child inherits the parent's
//!   history through `sched_interact_fork` and starts with a slice of one tick; the
//!   parent is charged `tickincr`), `sched_exit_ksegrp` (lines 1609–1615: the child's run
//!   time is charged to the parent).
//! - `sched_add` (lines 1765–1881): real-time threads on the current queue, time-sharing
//!   ones on the current or next queue by `SCHED_CURR`; the thread is queued on the CPU
//!   that adds it (the waker's, line 1870), unless that CPU was idle (lines 1854–1866),
//!   or its load exceeds 1 and `kseq_transfer` (lines 765–855) finds an idle CPU (first
//!   the thread's previous group if all of it is idle, then any fully idle group's first
//!   CPU, then an idle CPU of the adding CPU's group; lines 1867–1869); the added thread
//!   asks the CPU to reschedule when it outranks the running thread and sits on the
//!   current queue (lines 1872–1874; a transfer, `kseq_notify`, lines 677–718, asks the
//!   remote CPU when it outranks its thread or the CPU idles). `maybe_preempt` (of
//!   kern_switch.c, which 1.161 includes at its end) without FULL_PREEMPTION preempts
//!   only for interrupt threads, which a workload has none of, so no thread preempts at
//!   once.
//! - `sched_switch` (lines 1346–1427; a thread still runnable is added back with
//!   `KEF_HOLD`: it stays on its CPU), `sched_choose` (lines 1733–1763) / `kseq_choose`,
//!   and `kseq_idled` (lines 613–651: before idling a CPU steals from the other members
//!   of its kseq group — `kseq_steal`, lines 747–763, the next queue first — else marks
//!   itself in the group's idle mask, and the group in `kseq_idle`, line 271, when all
//!   of it idles).
//! - The balancers: `sched_balance` (lines 472–503: every `random() % (2 · hz)` ticks:
//!   the most loaded group with transferable threads against the least loaded, from a
//!   random start) and `sched_balance_groups` (lines 505–515: the members of each SMT
//!   group, `sched_balance_group`, lines 517–538), both through `sched_balance_pair`
//!   (lines 540–578: move `⌈diff / 2⌉` threads, at most the transferable count) and
//!   `kseq_move` (lines 580–611). Kseq groups are the SMT siblings of the machine's
//!   topology (consecutive CPUs), as `sched_setup` (lines 920–1020) builds them from
//!   `smp_topology`; without SMT each CPU is a group of one. A group's list of members is
//!   in `LIST_INSERT_HEAD` order (its highest CPU first), which `sched_balance_pair` and
//!   `kseq_idled` walk.
//!
//! Where the model simplifies:
//! - stathz = hz = the machine's `hz`: `tickincr` is 1 << 10 and slices count schedlab
//!   ticks (at hz 1000: slice_min 10, slice_max 142 ticks).
//! - Threads are their own ksegrp and process (one thread per process, as a Linux
//!   binary's tasks are): `kg_runtime`, `kg_slptime` and `p_nice` are per thread.
//!   `ke_pctcpu` (only ps(1) reads it), priority lending (`TDF_BORROWING`),
//!   `KEF_PREEMPTED` (set only by an interrupt thread's preemption) and the kernel-mode
//!   sleep priorities a thread holds until `sched_userret` (lines 1717–1731) are not
//!   modelled: a thread's priority is its user priority.
//! - The idle run queue `ksq_idle` holds PRI_IDLE threads, which the Linux ABI cannot
//!   create (SCHED_IDLE is refused), so it is left out: `kseq_choose` ends with the two
//!   time-sharing queues.
//! - `KSE_CAN_MIGRATE` (lines 322–323): a thread whose affinity holds more than one CPU
//!   is transferable; a steal or transfer takes only a thread that may run on the
//!   receiving CPU, and the idle masks `kseq_transfer` reads are restricted to the
//!   thread's CPUs.
//! - A wake-up by a timer (a sleep's expiry) is added by the sleeper's own CPU; a start-up
//!   task (no parent) begins with no history and a slice of one tick, as a fork does.
//! - `kseq_notify`'s cross-CPU assignment (`ksq_assigned` and the IPI, taken by the remote
//!   CPU's `kseq_assign`, lines 653–675) moves the thread at once.
//! - Real-time threads are not sliced (this revision's `sched_clock` slices only
//!   time-sharing threads): SCHED_RR runs like SCHED_FIFO. Attributes pass FreeBSD's
//!   Linux ABI as in `freebsd_runq` (SCHED_OTHER's nice is FreeBSD's nice; FIFO/RR 1..=99
//!   map onto rtprio 0..=31, here above this era's PRI_MIN_REALTIME = 128).

use super::freebsd_runq::{self, is_timeshare, queue_of, RunQueue, PRIO_MAX, PRIO_MIN};
use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{BalanceKind, DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, CpuMask, SchedAttrs, TaskId};

/// sys/sys/priority.h before FreeBSD 9: real-time user threads 128..159, time-sharing
/// 160..223.
pub const PRI_MIN_REALTIME: u32 = 128;
pub const PRI_MIN_TIMESHARE: u32 = 160;
pub const PRI_MAX_TIMESHARE: u32 = 223;
/// `SCHED_PRI_RANGE`: the time-sharing range.
pub const SCHED_PRI_RANGE: u32 = PRI_MAX_TIMESHARE - PRI_MIN_TIMESHARE + 1;
/// `SCHED_PRI_NRESV` (nice values) and `SCHED_PRI_NHALF`.
pub const SCHED_PRI_NRESV: usize = (PRIO_MAX - PRIO_MIN) as usize + 1;
pub const SCHED_PRI_NHALF: i32 = SCHED_PRI_NRESV as i32 / 2;
/// `SCHED_INTERACT_MAX`, `_HALF`, `_THRESH`.
pub const SCHED_INTERACT_MAX: u32 = 100;
pub const SCHED_INTERACT_HALF: u32 = SCHED_INTERACT_MAX / 2;
pub const SCHED_INTERACT_THRESH: u32 = 30;
/// `SCHED_SLICE_NTHRESH`: the nice window that receives slices.
pub const SCHED_SLICE_NTHRESH: i32 = SCHED_PRI_NHALF - 1;
/// `tickincr` with stathz = hz: one tick in the `<< 10` scale of the history.
pub const TICKINCR: u32 = 1 << 10;

/// `SCHED_SLP_RUN_MAX`: the history kept, `(hz · 5) << 10`.
pub fn slp_run_max(hz: u32) -> u32 {
    (hz * 5) << 10
}

/// `SCHED_SLP_RUN_FORK`: the history a child inherits at most, `(hz / 2) << 10`.
pub fn slp_run_fork(hz: u32) -> u32 {
    (hz / 2) << 10
}

/// `slice_min` (`realstathz / 100`, 10 ms) and `slice_max` (`realstathz / 7`, ~140 ms).
pub fn slice_min(hz: u32) -> i32 {
    (hz / 100) as i32
}
pub fn slice_max(hz: u32) -> i32 {
    (hz / 7) as i32
}

/// `sched_interact_score`: 0 (sleeps only) .. 100 (runs only); below 30 is interactive.
pub fn interact_score(runtime: u32, slptime: u32) -> u32 {
    if runtime > slptime {
        let div = (runtime / SCHED_INTERACT_HALF).max(1);
        SCHED_INTERACT_HALF + (SCHED_INTERACT_HALF - slptime / div)
    } else if slptime > runtime {
        let div = (slptime / SCHED_INTERACT_HALF).max(1);
        runtime / div
    } else {
        0
    }
}

/// `sched_interact_update`: keep run + sleep under `SCHED_SLP_RUN_MAX`.
pub fn interact_update(runtime: &mut u32, slptime: &mut u32, hz: u32) {
    let max = slp_run_max(hz);
    let sum = *runtime + *slptime;
    if sum < max {
        return;
    }
    if sum > (max / 5) * 6 {
        *runtime /= 2;
        *slptime /= 2;
        return;
    }
    *runtime = (*runtime / 5) * 4;
    *slptime = (*slptime / 5) * 4;
}

/// `sched_interact_fork`: scale a child's inherited history down to `SCHED_SLP_RUN_FORK`.
pub fn interact_fork(runtime: &mut u32, slptime: &mut u32, hz: u32) {
    let fork = slp_run_fork(hz).max(1);
    let sum = *runtime + *slptime;
    if sum > fork {
        let ratio = sum / fork;
        *runtime /= ratio;
        *slptime /= ratio;
    }
}

/// `sched_priority`: a time-sharing thread's user priority from its score and nice.
pub fn user_priority(score: u32, nice: i32) -> u32 {
    let pri = (score * SCHED_PRI_RANGE / SCHED_INTERACT_MAX + PRI_MIN_TIMESHARE) as i32 + nice;
    pri.clamp(PRI_MIN_TIMESHARE as i32, PRI_MAX_TIMESHARE as i32) as u32
}

/// `sched_slice`: the slice in ticks of a thread of `nice` on a queue whose least nice is
/// `nicemin` and whose time-sharing load is `load_timeshare`.
pub fn slice_ticks(
    interactive: bool,
    nice: i32,
    nicemin: i32,
    load_timeshare: u32,
    hz: u32,
) -> i32 {
    let (min, max) = (slice_min(hz), slice_max(hz));
    if interactive {
        return max;
    }
    let rel = nice - nicemin;
    if load_timeshare == 0 || nice < nicemin {
        max
    } else if rel <= SCHED_SLICE_NTHRESH {
        // SCHED_SLICE_NICE: max − rel · (max − min + 1) / NTHRESH.
        max - rel * (max - min + 1) / SCHED_SLICE_NTHRESH
    } else {
        min
    }
}

/// The real-time priority of this era: PRI_MIN_REALTIME + rtprio (rtprio through the
/// Linux ABI's mapping, as `freebsd_runq::rt_priority` gives it above today's base).
fn rt_priority(attrs: &SchedAttrs) -> u32 {
    freebsd_runq::rt_priority(attrs) - freebsd_runq::PRI_MIN_REALTIME + PRI_MIN_REALTIME
}

/// Per-thread state (`struct kse` with the `kg_sched` fields of its one-thread ksegrp).
#[derive(Clone, Copy, Debug)]
struct Td {
    /// `kg_runtime`, `kg_slptime`: ticks << 10.
    runtime: u32,
    slptime: u32,
    /// `ke_slice`: ticks left.
    slice: i32,
    /// `td_priority` (= `kg_user_pri` for a time-sharing thread).
    pri: u32,
    /// `ke_cpu`: the kseq it belongs to.
    cpu: CpuId,
    /// The run queue it is on: (0 or 1 of `ksq_timeshare`, queue index).
    rq: Option<(u8, u8)>,
    /// Counted as transferable (`KEF_XFERABLE`).
    xferable: bool,
    /// Counted in its kseq's load, with the class and nice it was counted with.
    loaded: Option<(bool, i32)>,
    /// `td_slptime`: the tick it went to sleep.
    slept_at: Option<u64>,
    parent: Option<TaskId>,
    alive: bool,
}

impl Default for Td {
    fn default() -> Self {
        Self {
            runtime: 0,
            slptime: 0,
            slice: 1,
            pri: PRI_MAX_TIMESHARE,
            cpu: CpuId(0),
            rq: None,
            xferable: false,
            loaded: None,
            slept_at: None,
            parent: None,
            alive: false,
        }
    }
}

/// `struct kseq`: one CPU's queues and counts.
#[derive(Clone, Debug)]
struct Kseq {
    timeshare: [RunQueue; 2],
    /// Which of `timeshare` is `ksq_curr` (the other is `ksq_next`).
    curr: usize,
    load: u32,
    load_timeshare: u32,
    /// `ksq_nice[]` (counted wider than the kernel's `short`, which would wrap at 32 768
    /// threads of one nice on one CPU).
    nice: [u32; SCHED_PRI_NRESV],
    nicemin: i32,
    transferable: u32,
    group: usize,
}

impl Kseq {
    fn new() -> Self {
        Self {
            timeshare: [RunQueue::new(), RunQueue::new()],
            curr: 0,
            load: 0,
            load_timeshare: 0,
            nice: [0; SCHED_PRI_NRESV],
            nicemin: 0,
            transferable: 0,
            group: 0,
        }
    }

    /// `kseq_nice_add`.
    fn nice_add(&mut self, nice: i32) {
        self.nice[(nice + SCHED_PRI_NHALF) as usize] += 1;
        if nice < self.nicemin || self.load_timeshare == 1 {
            self.nicemin = nice;
        }
    }

    /// `kseq_nice_rem`: a new least nice is searched upwards when the last of it leaves.
    fn nice_rem(&mut self, nice: i32) {
        let n = (nice + SCHED_PRI_NHALF) as usize;
        self.nice[n] -= 1;
        if nice != self.nicemin || self.nice[n] != 0 || self.load_timeshare == 0 {
            return;
        }
        if let Some(i) = (n..SCHED_PRI_NRESV).find(|&i| self.nice[i] != 0) {
            self.nicemin = i as i32 - SCHED_PRI_NHALF;
        }
    }
}

/// `struct kseq_group`: CPUs that share threads cheaply (SMT siblings).
#[derive(Clone, Debug)]
struct KseqGroup {
    cpumask: CpuMask,
    /// `ksg_members` in list order (`LIST_INSERT_HEAD`: the highest CPU first).
    members: Vec<CpuId>,
    /// `ksg_mask`: the group's first CPU, its bit in `kseq_idle`.
    first: CpuId,
    idlemask: CpuMask,
    load: i64,
    transferable: u32,
}

/// No tunables: the revision's constants (slice_min/slice_max follow hz) are used.
fn tunables() -> Vec<Tunable<()>> {
    Vec::new()
}

/// The ULE policy of FreeBSD 5.x: a kseq per CPU.
pub struct FreebsdUle5 {
    td: Vec<Td>,
    kseq: Vec<Kseq>,
    groups: Vec<KseqGroup>,
    /// `kseq_idle`: the first CPU of every group whose CPUs all idle.
    kseq_idle: CpuMask,
    bal_tick: u64,
    gbal_tick: u64,
    balance_groups: bool,
    set_up: bool,
}

impl FreebsdUle5 {
    pub fn new(nr_cpus: usize) -> Self {
        Self {
            td: Vec::new(),
            kseq: (0..nr_cpus.max(1)).map(|_| Kseq::new()).collect(),
            groups: Vec::new(),
            kseq_idle: CpuMask::empty(),
            bal_tick: 0,
            gbal_tick: 0,
            balance_groups: false,
            set_up: false,
        }
    }

    /// A thread's priority `td_priority`.
    pub fn priority(&self, t: TaskId) -> u32 {
        self.td[t.idx()].pri
    }

    /// A thread's interactivity score.
    pub fn score(&self, t: TaskId) -> u32 {
        let td = &self.td[t.idx()];
        interact_score(td.runtime, td.slptime)
    }

    /// A thread's history (`kg_runtime`, `kg_slptime`), ticks << 10.
    pub fn history(&self, t: TaskId) -> (u32, u32) {
        let td = &self.td[t.idx()];
        (td.runtime, td.slptime)
    }

    /// A thread's slice left, in ticks.
    pub fn slice(&self, t: TaskId) -> i32 {
        self.td[t.idx()].slice
    }

    /// Whether `t` is queued on its CPU's current queue (`Some(true)`), next queue
    /// (`Some(false)`), or not queued.
    pub fn on_current_queue(&self, t: TaskId) -> Option<bool> {
        let td = &self.td[t.idx()];
        td.rq
            .map(|(which, _)| which as usize == self.kseq[td.cpu.idx()].curr)
    }

    /// `ksq_load` of a CPU.
    pub fn load(&self, cpu: CpuId) -> u32 {
        self.kseq[cpu.idx()].load
    }

    fn ticks(ctx: &Ctx) -> u64 {
        ctx.now() / ctx.tick_ns().max(1)
    }

    /// `sched_setup`: the kseq groups from the SMT siblings, and the balancers' first ticks.
    /// Every group starts idle, in its idle mask and in `kseq_idle`: before a workload
    /// starts each CPU runs its idle thread, which `sched_choose` (lines 1733–1763) gives it
    /// after `kseq_idled` (lines 613–651) has marked the CPU idle; the engine calls no
    /// `schedule()` on a CPU before something is placed there, so the marks are made here.
    fn setup(&mut self, ctx: &mut Ctx) {
        if self.set_up {
            return;
        }
        self.set_up = true;
        let n = self.kseq.len();
        let mut seen = CpuMask::empty();
        for c in 0..n {
            let cpu = CpuId(c as u32);
            if seen.contains(cpu) {
                continue;
            }
            let mut mask = ctx.smt_siblings(cpu).and(&CpuMask::first_n(n));
            mask.set(cpu);
            let g = self.groups.len();
            let mut members: Vec<CpuId> = mask.iter().collect();
            members.reverse();
            for &m in &members {
                seen.set(m);
                self.kseq[m.idx()].group = g;
            }
            if members.len() > 1 {
                self.balance_groups = true;
            }
            self.kseq_idle.set(mask.first().unwrap_or(cpu));
            self.groups.push(KseqGroup {
                cpumask: mask,
                first: mask.first().unwrap_or(cpu),
                members,
                idlemask: mask,
                load: 0,
                transferable: 0,
            });
        }
        let (ticks, hz) = (Self::ticks(ctx), ctx.hz() as u64);
        self.bal_tick = ticks + hz;
        if self.balance_groups {
            self.gbal_tick = ticks + hz / 2;
        }
    }

    fn ensure(&mut self, t: TaskId) {
        if self.td.len() <= t.idx() {
            let len = (t.idx() + 1).max(self.td.len() * 2);
            self.td.resize(len, Td::default());
        }
    }

    fn interactive(&self, t: TaskId) -> bool {
        self.score(t) < SCHED_INTERACT_THRESH
    }

    /// `sched_priority` (time-sharing) or the fixed real-time priority; a queued thread
    /// whose queue changes moves within its run queue.
    fn set_priority(&mut self, ctx: &Ctx, t: TaskId) {
        let attrs = ctx.task(t).attrs;
        let pri = if is_timeshare(&attrs) {
            user_priority(self.score(t), attrs.nice)
        } else {
            rt_priority(&attrs)
        };
        let td = &mut self.td[t.idx()];
        td.pri = pri;
        if let Some((which, q)) = td.rq {
            if q as usize != queue_of(pri) {
                let rq = &mut self.kseq[td.cpu.idx()].timeshare[which as usize];
                rq.remove(q as usize, t);
                rq.add(queue_of(pri), t, false);
                td.rq = Some((which, queue_of(pri) as u8));
            }
        }
    }

    /// `sched_slice`, from the thread's kseq.
    fn set_slice(&mut self, ctx: &Ctx, t: TaskId) {
        let interactive = self.interactive(t);
        let nice = ctx.task(t).attrs.nice;
        let k = &self.kseq[self.td[t.idx()].cpu.idx()];
        let slice = slice_ticks(interactive, nice, k.nicemin, k.load_timeshare, ctx.hz());
        self.td[t.idx()].slice = slice;
    }

    /// `kseq_load_add`.
    fn load_add(&mut self, ctx: &Ctx, cpu: CpuId, t: TaskId) {
        let attrs = ctx.task(t).attrs;
        let ts = is_timeshare(&attrs);
        let k = &mut self.kseq[cpu.idx()];
        if ts {
            k.load_timeshare += 1;
        }
        k.load += 1;
        self.groups[k.group].load += 1;
        if ts {
            k.nice_add(attrs.nice);
        }
        let td = &mut self.td[t.idx()];
        td.loaded = Some((ts, attrs.nice));
        td.cpu = cpu;
    }

    /// `kseq_load_rem`, with the class and nice the thread was counted with.
    fn load_rem(&mut self, t: TaskId) {
        let td = &mut self.td[t.idx()];
        let Some((ts, nice)) = td.loaded.take() else {
            return;
        };
        let k = &mut self.kseq[td.cpu.idx()];
        if ts {
            k.load_timeshare -= 1;
        }
        self.groups[k.group].load -= 1;
        k.load -= 1;
        if ts {
            k.nice_rem(nice);
        }
    }

    /// `sched_add`'s choice of queue and `kseq_runq_add`: real-time and interactive
    /// threads on the current queue, the others on the next (`SCHED_CURR`); real-time
    /// threads get `SCHED_SLICE_MAX`.
    fn runq_add(&mut self, ctx: &Ctx, cpu: CpuId, t: TaskId) {
        let attrs = ctx.task(t).attrs;
        let current = if is_timeshare(&attrs) {
            self.interactive(t)
        } else {
            self.td[t.idx()].slice = slice_max(ctx.hz());
            true
        };
        let k = &mut self.kseq[cpu.idx()];
        let which = if current { k.curr } else { 1 - k.curr };
        let q = queue_of(self.td[t.idx()].pri);
        k.timeshare[which].add(q, t, false);
        let xfer = ctx.task(t).affinity.count() > 1;
        if xfer {
            k.transferable += 1;
            self.groups[k.group].transferable += 1;
        }
        let td = &mut self.td[t.idx()];
        td.rq = Some((which as u8, q as u8));
        td.xferable = xfer;
        td.cpu = cpu;
    }

    /// `kseq_runq_rem`. Returns the entries looked at.
    fn runq_rem(&mut self, t: TaskId) -> usize {
        let td = &mut self.td[t.idx()];
        let Some((which, q)) = td.rq.take() else {
            return 0;
        };
        let k = &mut self.kseq[td.cpu.idx()];
        if std::mem::take(&mut td.xferable) {
            k.transferable -= 1;
            self.groups[k.group].transferable -= 1;
        }
        k.timeshare[which as usize].remove(q as usize, t)
    }

    /// A CPU that was idle is busy again: out of its group's idle mask, and the group out
    /// of `kseq_idle` (`sched_add` on that CPU, `kseq_notify`).
    fn unidle(&mut self, cpu: CpuId) {
        let g = &mut self.groups[self.kseq[cpu.idx()].group];
        if g.idlemask.contains(cpu) {
            if g.idlemask == g.cpumask {
                self.kseq_idle.clear(g.first);
            }
            g.idlemask.clear(cpu);
        }
    }

    /// `sched_add` of a thread on `cpu`'s kseq (its placement was decided already).
    fn sched_add(&mut self, ctx: &Ctx, cpu: CpuId, t: TaskId) {
        self.unidle(cpu);
        self.load_add(ctx, cpu, t);
        self.runq_add(ctx, cpu, t);
    }

    /// `kseq_transfer`: an idle CPU for a thread added to the busy `here`.
    fn transfer_target(&self, here: CpuId, old: CpuId, allowed: &CpuMask) -> Option<CpuId> {
        let idle_groups = self.kseq_idle.and(allowed);
        if !self.kseq_idle.is_empty() {
            let old_group = &self.groups[self.kseq[old.idx()].group];
            if self.kseq_idle.contains(old_group.first) {
                if let Some(c) = old_group.idlemask.and(allowed).first() {
                    return Some(c);
                }
            }
            if let Some(c) = idle_groups.first() {
                return Some(c);
            }
        }
        self.groups[self.kseq[here.idx()].group]
            .idlemask
            .and(allowed)
            .first()
    }

    /// `runq_steal` over `kseq_steal`'s order (next queue, then current): the first
    /// transferable thread that may run on `to`.
    fn steal(&self, ctx: &Ctx, from: CpuId, to: CpuId) -> Option<TaskId> {
        let k = &self.kseq[from.idx()];
        if k.transferable == 0 {
            return None;
        }
        [1 - k.curr, k.curr].into_iter().find_map(|which| {
            k.timeshare[which]
                .iter()
                .find(|&t| self.td[t.idx()].xferable && ctx.task(t).affinity.contains(to))
        })
    }

    /// Move the queued `t` to `to`'s kseq (`kseq_move` / `kseq_notify` + `kseq_assign`, or
    /// `kseq_idled`'s steal): the remote CPU reschedules when `t` outranks its thread or it
    /// idles.
    fn migrate(&mut self, ctx: &mut Ctx, t: TaskId, to: CpuId) {
        let steps = self.runq_rem(t);
        ctx.count_work(steps as u64 + 1);
        self.load_rem(t);
        ctx.set_task_cpu(t, to);
        self.sched_add(ctx, to, t);
        match ctx.curr(to) {
            None => ctx.resched(to),
            Some(cur) if self.td[t.idx()].pri < self.td[cur.idx()].pri => ctx.resched(to),
            Some(_) => {}
        }
    }

    /// `kseq_idled`: before idling, steal from a sibling of the kseq group; else mark the
    /// CPU idle in its group (and the group in `kseq_idle` when all of it idles).
    fn kseq_idled(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        let g = self.kseq[cpu.idx()].group;
        if self.groups[g].members.len() > 1 && self.groups[g].transferable > 0 {
            for i in 0..self.groups[g].members.len() {
                let s = self.groups[g].members[i];
                if s == cpu {
                    continue;
                }
                if let Some(t) = self.steal(ctx, s, cpu) {
                    self.migrate(ctx, t, cpu);
                    return;
                }
            }
        }
        let grp = &mut self.groups[g];
        grp.idlemask.set(cpu);
        if grp.idlemask == grp.cpumask {
            self.kseq_idle.set(grp.first);
        }
    }

    /// `sched_balance`: the most loaded group with transferable threads against the least
    /// loaded, searched from a random group.
    fn sched_balance(&mut self, ctx: &mut Ctx) {
        let hz2 = 2 * ctx.hz() as u64;
        self.bal_tick = Self::ticks(ctx) + ctx.random() % hz2.max(1);
        let n = self.groups.len();
        let start = (ctx.random() % n as u64) as usize;
        let (mut high, mut low): (Option<usize>, Option<usize>) = (None, None);
        for k in 0..n {
            let i = (start + k) % n;
            let g = &self.groups[i];
            if high.is_none_or(|h| g.load > self.groups[h].load) && g.transferable > 0 {
                high = Some(i);
            }
            if low.is_none_or(|l| g.load < self.groups[l].load) {
                low = Some(i);
            }
        }
        if let (Some(h), Some(l)) = (high, low) {
            if h != l {
                let (from, to) = (self.groups[h].members[0], self.groups[l].members[0]);
                self.balance_pair(ctx, from, to);
            }
        }
    }

    /// `sched_balance_groups`: each SMT group's most and least loaded members.
    fn sched_balance_groups(&mut self, ctx: &mut Ctx) {
        let hz2 = 2 * ctx.hz() as u64;
        self.gbal_tick = Self::ticks(ctx) + ctx.random() % hz2.max(1);
        for g in 0..self.groups.len() {
            if self.groups[g].transferable == 0 {
                continue;
            }
            let (mut high, mut low): (Option<CpuId>, Option<CpuId>) = (None, None);
            for &m in &self.groups[g].members {
                let load = self.kseq[m.idx()].load;
                if high.is_none_or(|h| load > self.kseq[h.idx()].load) {
                    high = Some(m);
                }
                if low.is_none_or(|l| load < self.kseq[l.idx()].load) {
                    low = Some(m);
                }
            }
            if let (Some(h), Some(l)) = (high, low) {
                if h != l {
                    self.balance_pair(ctx, h, l);
                }
            }
        }
    }

    /// `sched_balance_pair`: move half the load difference (rounded up), at most the
    /// transferable threads, from `high` to `low`.
    fn balance_pair(&mut self, ctx: &mut Ctx, high: CpuId, low: CpuId) {
        let (gh, gl) = (self.kseq[high.idx()].group, self.kseq[low.idx()].group);
        let (transferable, diff) = if gh == gl {
            let (h, l) = (&self.kseq[high.idx()], &self.kseq[low.idx()]);
            (h.transferable, h.load as i64 - l.load as i64)
        } else {
            (
                self.groups[gh].transferable,
                self.groups[gh].load - self.groups[gl].load,
            )
        };
        if transferable == 0 || diff <= 0 {
            return;
        }
        let moves = (diff / 2 + (diff & 1)).min(transferable as i64);
        for _ in 0..moves {
            if !self.kseq_move(ctx, high, low) {
                break;
            }
        }
    }

    /// `kseq_move`: one thread from `from` (or, failing that, another member of its group)
    /// to `to`. False when none may go there.
    fn kseq_move(&mut self, ctx: &mut Ctx, from: CpuId, to: CpuId) -> bool {
        let mut found = self.steal(ctx, from, to).map(|t| (from, t));
        if found.is_none() {
            let g = self.kseq[from.idx()].group;
            found = self.groups[g]
                .members
                .iter()
                .filter(|&&m| m != from && self.kseq[m.idx()].transferable > 0)
                .find_map(|&m| self.steal(ctx, m, to).map(|t| (m, t)));
        }
        let Some((src, t)) = found else {
            return false;
        };
        if src != to {
            self.migrate(ctx, t, to);
        }
        true
    }
}

impl Scheduler for FreebsdUle5 {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "freebsd-ule5",
            summary: "FreeBSD 5.x's ULE: per-CPU kseq with current/next queues, interactivity \
                      score from sleep and run time, slices by nice, SMT kseq groups",
            source: "FreeBSD sys/kern/sched_ule.c 1.161 (2005-12-27, TrustedBSD/sebsd \
                     fd5de6f5): sched_interact_score/update/fork, sched_priority, \
                     sched_slice, sched_clock, sched_add, kseq_choose, kseq_idled, \
                     kseq_transfer, sched_balance(_groups); sys/sys/priority.h (pre-9 ranges)",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut (), "freebsd-ule5", name, value)
    }

    /// What FreeBSD's Linux ABI accepts (see `freebsd_runq::linux_abi_accepts`).
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        freebsd_runq::linux_abi_accepts("freebsd-ule5", attrs)
    }

    /// `sched_fork_ksegrp` + `sched_fork_thread`: the child inherits the parent's history
    /// scaled by `sched_interact_fork` and a slice of one tick; the parent is charged a
    /// tick of run time.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        self.setup(ctx);
        self.ensure(t);
        let hz = ctx.hz();
        let mut td = Td {
            parent,
            alive: true,
            cpu: ctx.task(t).cpu,
            ..Td::default()
        };
        if let Some(p) = parent.filter(|p| self.td.get(p.idx()).is_some_and(|x| x.alive)) {
            let pt = &mut self.td[p.idx()];
            td.runtime = pt.runtime;
            td.slptime = pt.slptime;
            td.cpu = pt.cpu;
            interact_fork(&mut td.runtime, &mut td.slptime, hz);
            pt.runtime += TICKINCR;
            interact_update(&mut pt.runtime, &mut pt.slptime, hz);
        }
        self.td[t.idx()] = td;
        self.set_priority(ctx, t);
    }

    fn task_exit(&mut self, _ctx: &mut Ctx, t: TaskId) {
        self.td[t.idx()].alive = false;
    }

    /// `sched_add`'s placement: the CPU that adds the thread (the waker's), unless it is
    /// not allowed; when that CPU is busy with more than one thread, `kseq_transfer`'s idle
    /// CPU.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, _kind: WakeKind) -> CpuId {
        self.setup(ctx);
        let allowed = ctx.task(t).affinity;
        let here = ctx.wake_flags().waker_cpu.unwrap_or(prev);
        if !allowed.contains(here) {
            return if allowed.contains(prev) {
                prev
            } else {
                allowed.first().expect("empty affinity")
            };
        }
        let g = &self.groups[self.kseq[here.idx()].group];
        if g.idlemask.contains(here) {
            return here;
        }
        if allowed.count() > 1 && self.kseq[here.idx()].load > 1 {
            if let Some(c) = self.transfer_target(here, self.td[t.idx()].cpu, &allowed) {
                return c;
            }
        }
        here
    }

    /// `sched_wakeup` (the sleep credited to the history; new priority and slice) and
    /// `sched_add`.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if kind == EnqueueKind::Wakeup {
            let ticks = Self::ticks(ctx);
            let hz = ctx.hz();
            let td = &mut self.td[t.idx()];
            if let Some(at) = td.slept_at.take() {
                let slept = ((ticks - at) << 10).min(u32::MAX as u64) as u32;
                if slept >= slp_run_max(hz) {
                    td.slptime = slp_run_max(hz);
                    td.runtime = 1;
                } else {
                    td.slptime += slept;
                    interact_update(&mut td.runtime, &mut td.slptime, hz);
                }
                self.set_priority(ctx, t);
                self.set_slice(ctx, t);
            }
        }
        if ctx.task(t).running {
            // Still current on its CPU (woken as it blocked): put_prev queues it.
            self.load_add(ctx, cpu, t);
            return;
        }
        self.sched_add(ctx, cpu, t);
    }

    /// `sched_add`'s `TDF_NEEDRESCHED`: the new thread outranks the running one and sits on
    /// the current queue; added by another CPU (`kseq_notify`), it need only outrank it.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let Some(cur) = ctx.curr(cpu) else {
            return;
        };
        let local = ctx.wake_flags().waker_cpu.is_none_or(|w| w == cpu);
        let better = self.td[t.idx()].pri < self.td[cur.idx()].pri;
        if better && (!local || self.on_current_queue(t) == Some(true)) {
            ctx.resched(cpu);
        }
    }

    /// `sched_rem` / `sched_switch`'s load removal; `sched_sleep` notes the tick; an exit
    /// charges the child's run time to its parent (`sched_exit_ksegrp`).
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, kind: DequeueKind) {
        let steps = self.runq_rem(t);
        ctx.count_work(steps as u64 + 1);
        self.load_rem(t);
        match kind {
            DequeueKind::Save => {}
            DequeueKind::Sleep => self.td[t.idx()].slept_at = Some(Self::ticks(ctx)),
            DequeueKind::Exit => {
                let (run, parent) = (self.td[t.idx()].runtime, self.td[t.idx()].parent);
                if let Some(p) = parent.filter(|p| self.td[p.idx()].alive) {
                    let hz = ctx.hz();
                    let pt = &mut self.td[p.idx()];
                    pt.runtime = pt.runtime.saturating_add(run);
                    interact_update(&mut pt.runtime, &mut pt.slptime, hz);
                }
            }
        }
    }

    /// `sched_switch`: a thread still runnable is added back to its own CPU (`KEF_HOLD`),
    /// its load removed and added again.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.task(t).on_rq && self.td[t.idx()].rq.is_none() {
            self.load_rem(t);
            self.sched_add(ctx, cpu, t);
        }
    }

    /// `sched_choose` / `kseq_choose`: the best thread of the current queue; when it is
    /// empty the queues swap, once.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let mut swapped = false;
        let t = loop {
            let k = &mut self.kseq[cpu.idx()];
            let (found, steps) = k.timeshare[k.curr].choose(|_| true);
            ctx.count_work(steps);
            match found {
                Some(t) => break t,
                None if swapped => return None,
                None => {
                    k.curr = 1 - k.curr;
                    swapped = true;
                }
            }
        };
        self.runq_rem(t);
        Some(t)
    }

    /// `sched_clock`: the balancers when due; a time-sharing thread is charged the tick and
    /// at the end of its slice gets a new priority, slice and queue, and yields the CPU.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let ticks = Self::ticks(ctx);
        if ticks >= self.bal_tick {
            self.sched_balance(ctx);
        }
        if self.balance_groups && ticks >= self.gbal_tick {
            self.sched_balance_groups(ctx);
        }
        if !is_timeshare(&ctx.task(t).attrs) {
            return;
        }
        let hz = ctx.hz();
        let td = &mut self.td[t.idx()];
        td.runtime += TICKINCR;
        interact_update(&mut td.runtime, &mut td.slptime, hz);
        td.slice -= 1;
        if td.slice > 0 {
            return;
        }
        self.load_rem(t);
        self.set_priority(ctx, t);
        self.set_slice(ctx, t);
        self.load_add(ctx, cpu, t);
        ctx.resched(cpu);
    }

    /// `kseq_idled` when the CPU finds nothing to run.
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if kind == BalanceKind::NewIdle {
            self.kseq_idled(ctx, cpu);
        }
    }

    /// `sched_relinquish`: the engine reschedules; put_prev adds the thread back.
    fn yield_task(&mut self, _ctx: &mut Ctx, _cpu: CpuId, _t: TaskId) {}

    /// `sched_nice` / `sched_class`: the new attributes give the new priority (the nice
    /// bins were recounted by the dequeue and enqueue around the change).
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        self.set_priority(ctx, t);
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.td
            .get(t.idx())
            .map(|td| ("td_priority", td.pri as i64))
    }

    /// A time-sharing thread alone on its CPU: `SCHED_SLICE_MAX` (interactive or not, as
    /// `sched_slice` gives with no other time-sharing load); real-time threads are not
    /// sliced in this revision.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        self.accepts(attrs).ok()?;
        if !is_timeshare(attrs) || hz == 0 {
            return None;
        }
        let ticks = slice_ticks(false, attrs.nice, attrs.nice, 0, hz).max(1) as u64;
        Some(ticks * 1_000_000_000 / hz as u64)
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, k) in self.kseq.iter().enumerate() {
            for rq in &k.timeshare {
                for t in rq.iter() {
                    f(CpuId(c as u32), t);
                }
            }
        }
    }
}

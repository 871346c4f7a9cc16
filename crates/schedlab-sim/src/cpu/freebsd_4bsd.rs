//! `freebsd-4bsd`: FreeBSD's traditional BSD scheduler (`options SCHED_4BSD`).
//!
//! Source: FreeBSD sys/kern/sched_4bsd.c as held by the freebsd/freebsd-src repository
//! (stored revision 000ffb6f24c498bc665b887fafdd1bd4e96f598f, the main branch); line
//! numbers are those of sched_4bsd.c at that revision: `sched_clock_tick` /
//! `sched_clock` (lines 724–767 / 769–775: estcpu per stat tick, `ESTCPULIM`, lines
//! 76–78, the per-thread slice `ts_slice` of `sched_slice = realstathz / 10`,
//! `sched_initticks`, lines 650–658), `schedcpu` (lines 461–557, once a second:
//! `loadfactor(loadav) = 2 * loadav`, `decay_cpu(lf, cpu) = lf * cpu / (lf + FSCALE)`,
//! lines 434–435, the `ts_slptime` count of seconds asleep), `updatepri` (lines 577–595:
//! the decay owed for a sleep, applied at wake-up, or estcpu cleared after more than
//! `5 * loadfactor` seconds), `resetpriority` (lines 602–615: user priority `PUSER +
//! estcpu / INVERSE_ESTCPU_WEIGHT + NICE_WEIGHT * (nice - PRIO_MIN)`, clamped to the
//! time-sharing range; the weights at lines 79–84), `resetpriority_thread` /
//! `sched_priority` (lines 621–634 / 857–880: a queued thread whose queue changes is
//! removed and re-added), `sched_add` (lines 1312–1414, the SMP variant: forward_wakeup,
//! lines 1163–1248, to idle CPUs, else `maybe_resched`, lines 303–310, of the current
//! CPU; `maybe_preempt`, lines 318–367, without FULL_PREEMPTION never lets a
//! time-sharing or real-time thread preempt at once), `sched_wakeup` (lines 1135–1160),
//! `sched_fork_thread` (lines 813–830: the child inherits estcpu, slice 1),
//! `sched_exit_thread` (lines 791–805: the parent is charged the child's estcpu),
//! `sched_switch` (lines 1007–1133) and `sched_choose` (lines 1490–1533); the run queue
//! of sys/sys/runq.h / kern/kern_switch.c (`RQ_NQS = 64` queues of `RQ_PPQ = 4`
//! priorities, a status bitmap, `runq_add` at the tail, the lowest set bit chosen
//! first); the load average of kern/kern_synch.c `loadav` (every 5 s, `ldavg = (cexp *
//! ldavg + nrun * FSCALE * (FSCALE - cexp)) >> FSHIFT`, cexp[0] = exp(-1/12));
//! priorities of sys/sys/priority.h (real-time 48..79, time-sharing 120..223, `PUSER =
//! PRI_MIN_TIMESHARE`) and POSIX's mapping in kern/ksched.c (`p4prio_to_rtpprio`: rtprio
//! = RTP_PRIO_MAX − POSIX priority, 0..31); the run queue, priority ranges and Linux ABI
//! mapping are shared with ULE in `freebsd_runq.rs`. The line numbers cite
//! sched_4bsd.c only; the other files are cited by function.
//!
//! FreeBSD 5.4's own revision (RELENG_5's sched_4bsd.c) could not be read for this
//! model, so the revision above is the one modelled. Its estcpu, decay and priority
//! formulas have the form 4.4BSD gave them (McKusick, Bostic, Karels and Quarterman, The
//! Design and Implementation of the 4.4BSD Operating System, 1996, §4.4), with FreeBSD's
//! weights. Older revisions counted the quantum in hz ticks (`sched_quantum = hz / 10`,
//! as the FreeBSD 8-era revision still does) rather than as a per-thread slice of stat
//! ticks; this revision's per-thread slice is what is modelled (100 ms either way with
//! stathz = hz, as here).
//!
//! Where the model simplifies:
//! - One tick rate: stathz = hz = the machine's `hz` (FreeBSD's i386/amd64 statclock
//!   runs at 128 Hz, hz at 1000 Hz); estcpu, the slice and `sched_slice = hz / 10` all
//!   count schedlab ticks.
//! - `INVERSE_ESTCPU_WEIGHT` is this revision's SMP value, `8 * smp_cpus` (8 on one CPU).
//! - schedcpu and loadav run exactly on the second and on every fifth second (the kernel
//!   runs schedcpu from a kthread pausing `hz` ticks, `schedcpu_thread`, lines 562–570,
//!   and jitters the loadav callout), loadav before schedcpu when both are due; they run
//!   at the first scheduler event at or after their instant, which is the same instant on
//!   a busy machine (the tick).
//! - A woken thread is queued at its user priority: the kernel-mode sleep priority a
//!   thread holds until it returns to user mode (`sleepq` priorities, `sched_userret`,
//!   whose slow path is `sched_userret_slowpath`, lines 1552–1560) is not modelled, nor
//!   `ts_pctcpu` (only ps(1) reads it).
//! - One global run queue with affinity honoured at choose time (the revision also keeps
//!   per-CPU queues for bound threads, `sched_pickcpu`, lines 1286–1309, and
//!   `kick_other_cpu`, lines 1250–1282, and `runq_fuzz`, line 228).
//! - Attributes are taken as a Linux binary running on FreeBSD would pass them, through
//!   the Linux ABI (sys/compat/linux/linux_misc.c `linux_sched_setscheduler` with
//!   `compat.linux.map_sched_prio` on): SCHED_OTHER's nice is FreeBSD's nice; SCHED_FIFO
//!   and SCHED_RR priorities 1..=99 map onto POSIX 0..=31 (rounding down) and then onto
//!   the real-time queue range; SCHED_BATCH, SCHED_IDLE and SCHED_DEADLINE are refused
//!   (EINVAL there). sched_4bsd ends a slice for any non-interrupt thread, so a FIFO
//!   thread round-robins with equal peers just as an RR one does.

use super::freebsd_runq::{
    self, is_timeshare, queue_of, rt_priority, RunQueue, PRIO_MAX, PRIO_MIN, PRI_MAX_TIMESHARE,
    PRI_MIN_TIMESHARE, PUSER, RQ_PPQ,
};
use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, SchedAttrs, TaskId};

/// NICE_WEIGHT of sched_4bsd.c.
pub const NICE_WEIGHT: u32 = 1;
/// Fixed-point shift and scale of the load average (sys/sys/param.h).
pub const FSHIFT: u32 = 11;
pub const FSCALE: u64 = 1 << FSHIFT;
/// exp(-1/12) in fixed point: the 1-minute load average's decay per 5 s (kern_synch.c).
pub const CEXP_1MIN: u64 = (0.920_044_414_629_323_2 * FSCALE as f64) as u64;
/// Seconds between load-average samples.
pub const LOADAV_PERIOD_S: u64 = 5;

const NS_PER_S: u64 = 1_000_000_000;

/// `INVERSE_ESTCPU_WEIGHT` for `cpus` CPUs (8 * smp_cpus).
pub fn inverse_estcpu_weight(cpus: usize) -> u32 {
    8 * cpus as u32
}

/// `ESTCPULIM`'s ceiling for this weight.
pub fn estcpu_limit(iew: u32) -> u32 {
    iew * (NICE_WEIGHT * (PRIO_MAX - PRIO_MIN) as u32 - RQ_PPQ) + iew - 1
}

/// `decay_cpu(loadfactor(ldavg), estcpu)`, `ldavg` in FSCALE fixed point.
pub fn decay_cpu(ldavg: u64, estcpu: u32) -> u32 {
    let lf = 2 * ldavg;
    (lf * estcpu as u64 / (lf + FSCALE)) as u32
}

/// One loadav sample: the 1-minute average after `nrun` runnable threads.
pub fn loadav_step(ldavg: u64, nrun: u64) -> u64 {
    (CEXP_1MIN * ldavg + nrun * FSCALE * (FSCALE - CEXP_1MIN)) >> FSHIFT
}

/// `resetpriority`: the user priority of a time-sharing thread.
pub fn user_priority(estcpu: u32, iew: u32, nice: i32) -> u32 {
    let p = PUSER + estcpu / iew + NICE_WEIGHT * (nice - PRIO_MIN) as u32;
    p.clamp(PRI_MIN_TIMESHARE, PRI_MAX_TIMESHARE)
}

/// `updatepri`: estcpu after `slptime` seconds counted asleep by schedcpu. As in the
/// source, the seconds are compared with the fixed-point load factor itself
/// (`slptime > 5 * loadfac`), so the estcpu is cleared only when the load average is
/// below `slptime / 10` in FSCALE units (in practice: no load at all).
pub fn updatepri(ldavg: u64, estcpu: u32, slptime: u32) -> u32 {
    let lf = 2 * ldavg;
    if slptime as u64 > 5 * lf {
        return 0;
    }
    let mut newcpu = estcpu;
    // schedcpu counted the second of the wake-up already.
    let mut left = slptime.saturating_sub(1);
    while newcpu != 0 && left > 1 {
        left -= 1;
        newcpu = decay_cpu(ldavg, newcpu);
    }
    newcpu
}

/// Per-thread state (`struct td_sched` and the thread fields sched_4bsd uses).
#[derive(Clone, Copy, Debug)]
struct Td {
    estcpu: u32,
    slptime: u32,
    /// Stat ticks left in the slice.
    slice: u32,
    /// `td_priority`: the run-queue priority.
    pri: u32,
    /// Ran since the last schedcpu (`TDF_DIDRUN`).
    didrun: bool,
    /// The run queue it is on (`td_rqindex`), if queued.
    rqindex: Option<u8>,
    /// Counted in `sched_tdcnt` (runnable or running).
    counted: bool,
    /// The CPU it was queued from (reported to the invariant checker).
    qcpu: CpuId,
    parent: Option<TaskId>,
    alive: bool,
}

impl Default for Td {
    fn default() -> Self {
        Self {
            estcpu: 0,
            slptime: 0,
            slice: 0,
            pri: PRI_MAX_TIMESHARE,
            didrun: false,
            rqindex: None,
            counted: false,
            qcpu: CpuId(0),
            parent: None,
            alive: false,
        }
    }
}

/// No tunables: the revision's constants are used as they are.
fn tunables() -> Vec<Tunable<()>> {
    Vec::new()
}

/// The 4BSD policy: one global run queue of 64 FIFO queues.
pub struct Freebsd4Bsd {
    runq: RunQueue,
    td: Vec<Td>,
    iew: u32,
    /// `averunnable.ldavg[0]`, FSCALE fixed point.
    ldavg: u64,
    /// `sched_tdcnt`.
    nrun: u64,
    /// Seconds of schedcpu done so far.
    seconds_done: u64,
}

impl Freebsd4Bsd {
    pub fn new(nr_cpus: usize) -> Self {
        Self {
            runq: RunQueue::new(),
            td: Vec::new(),
            iew: inverse_estcpu_weight(nr_cpus.max(1)),
            ldavg: 0,
            nrun: 0,
            seconds_done: 0,
        }
    }

    /// A thread's estcpu (for tests and reports).
    pub fn estcpu(&self, t: TaskId) -> u32 {
        self.td[t.idx()].estcpu
    }

    /// A thread's run-queue priority `td_priority`.
    pub fn priority(&self, t: TaskId) -> u32 {
        self.td[t.idx()].pri
    }

    /// The 1-minute load average, FSCALE fixed point.
    pub fn ldavg(&self) -> u64 {
        self.ldavg
    }

    /// `sched_slice`: 100 ms of ticks.
    fn sched_slice(hz: u32) -> u32 {
        (hz / 10).max(1)
    }

    /// `resetpriority` + `resetpriority_thread`'s `sched_prio`: a time-sharing thread's
    /// priority follows its estcpu and nice; a queued one moves if its queue changes.
    fn reset_priority(&mut self, ctx: &Ctx, t: TaskId) {
        let attrs = ctx.task(t).attrs;
        let pri = if is_timeshare(&attrs) {
            user_priority(self.td[t.idx()].estcpu, self.iew, attrs.nice)
        } else {
            rt_priority(&attrs)
        };
        self.set_priority(t, pri);
    }

    /// `sched_priority`: a queued thread whose queue changes is removed and re-added.
    fn set_priority(&mut self, t: TaskId, pri: u32) {
        let td = &mut self.td[t.idx()];
        if td.pri == pri {
            return;
        }
        td.pri = pri;
        if let Some(q) = td.rqindex {
            if q as u32 != pri / RQ_PPQ {
                let cpu = self.td[t.idx()].qcpu;
                self.runq_remove(t);
                self.runq_add(t, cpu);
            }
        }
    }

    /// `runq_add`: the tail of the thread's queue; the status bit set.
    fn runq_add(&mut self, t: TaskId, cpu: CpuId) {
        self.td[t.idx()].qcpu = cpu;
        let q = queue_of(self.td[t.idx()].pri);
        self.runq.add(q, t, false);
        self.td[t.idx()].rqindex = Some(q as u8);
    }

    /// `runq_remove`: out of its queue; the status bit cleared when it empties.
    fn runq_remove(&mut self, t: TaskId) -> usize {
        let Some(q) = self.td[t.idx()].rqindex.take() else {
            return 0;
        };
        self.runq.remove(q as usize, t)
    }

    /// Run every schedcpu (and loadav) whose second has come.
    fn catch_up(&mut self, ctx: &mut Ctx) {
        let due = ctx.now() / NS_PER_S;
        while self.seconds_done < due {
            self.seconds_done += 1;
            if self.seconds_done.is_multiple_of(LOADAV_PERIOD_S) {
                self.ldavg = loadav_step(self.ldavg, self.nrun);
            }
            self.schedcpu(ctx);
        }
    }

    /// `schedcpu`: once a second, decay the estcpu of every thread awake during the
    /// second; count seconds asleep for the others (their decay is `updatepri`'s). The
    /// kernel walks every process and thread (`FOREACH_PROC_IN_SYSTEM`,
    /// `FOREACH_THREAD_IN_PROC`): one unit of work per live thread visited, counted on the
    /// CPU whose scheduler event ran it.
    fn schedcpu(&mut self, ctx: &mut Ctx) {
        let live = self.td.iter().filter(|td| td.alive).count() as u64;
        ctx.count_work(live);
        for i in 0..self.td.len() {
            let t = TaskId(i as u32);
            let td = &mut self.td[i];
            if !td.alive {
                continue;
            }
            let running = ctx.task(t).running;
            let awake = td.rqindex.is_some() || running || td.didrun;
            if !running {
                td.didrun = false;
            }
            if awake {
                if td.slptime > 1 {
                    td.estcpu = updatepri(self.ldavg, td.estcpu, td.slptime);
                }
                td.slptime = 0;
            } else {
                td.slptime += 1;
            }
            if td.slptime > 1 {
                continue;
            }
            td.estcpu = decay_cpu(self.ldavg, td.estcpu);
            self.reset_priority(ctx, t);
        }
    }

    /// `forward_wakeup` / `maybe_resched`: an idle CPU the thread may use is woken;
    /// without one, the CPU the wake-up runs on is asked to reschedule when the thread's
    /// priority is better than its current thread's.
    fn kick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let allowed = ctx.task(t).affinity;
        let mut forwarded = false;
        for c in allowed.iter() {
            if ctx.curr(c).is_none() {
                ctx.resched(c);
                forwarded = true;
            }
        }
        if forwarded {
            return;
        }
        let here = ctx.wake_flags().waker_cpu.unwrap_or(cpu);
        if let Some(cur) = ctx.curr(here) {
            if self.td[t.idx()].pri < self.td[cur.idx()].pri {
                ctx.resched(here);
            }
        }
    }

    fn ensure(&mut self, t: TaskId) {
        if self.td.len() <= t.idx() {
            let len = (t.idx() + 1).max(self.td.len() * 2);
            self.td.resize(len, Td::default());
        }
    }
}

impl Scheduler for Freebsd4Bsd {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "freebsd-4bsd",
            summary: "FreeBSD's 4BSD scheduler: estcpu decayed by load, 64×4 global run queue, \
                      100 ms round robin",
            source: "FreeBSD sys/kern/sched_4bsd.c (freebsd-src main, 000ffb6f): \
                     sched_clock_tick, schedcpu, updatepri, resetpriority, sched_add; \
                     sys/sys/runq.h, kern/kern_switch.c, kern/kern_synch.c loadav",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut (), "freebsd-4bsd", name, value)
    }

    /// What FreeBSD's Linux ABI (`linux_sched_setscheduler`) accepts: SCHED_OTHER, and
    /// SCHED_FIFO / SCHED_RR of priority 1..=99 (mapped onto rtprio); SCHED_BATCH,
    /// SCHED_IDLE and SCHED_DEADLINE get EINVAL there.
    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        freebsd_runq::linux_abi_accepts("freebsd-4bsd", attrs)
    }

    /// `sched_fork_thread`: a forked thread inherits its parent's estcpu and starts with
    /// a slice of one tick; a thread the run starts with begins at zero and a full slice.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        self.ensure(t);
        let slice = Self::sched_slice(ctx.hz());
        let (estcpu, slice) = match parent {
            Some(p) if self.td.len() > p.idx() && self.td[p.idx()].alive => {
                (self.td[p.idx()].estcpu, 1)
            }
            _ => (0, slice),
        };
        self.td[t.idx()] = Td {
            estcpu,
            slice,
            parent,
            alive: true,
            ..Td::default()
        };
        self.reset_priority(ctx, t);
    }

    /// The thread is gone (its exit was charged to the parent in `dequeue`).
    fn task_exit(&mut self, _ctx: &mut Ctx, t: TaskId) {
        self.td[t.idx()].alive = false;
    }

    /// The global queue serves every CPU: place the thread on an idle CPU it may use so
    /// that CPU takes it at once, else keep its CPU.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, _kind: WakeKind) -> CpuId {
        let allowed = ctx.task(t).affinity;
        if allowed.contains(prev) && ctx.curr(prev).is_none() {
            return prev;
        }
        let idle = allowed.iter().find(|&c| ctx.curr(c).is_none());
        idle.unwrap_or(if allowed.contains(prev) {
            prev
        } else {
            allowed.first().expect("empty affinity")
        })
    }

    /// `sched_wakeup` + `sched_add`: a sleeper is owed updatepri's decay for the seconds
    /// it slept and gets a fresh slice; the thread joins the tail of its queue and an
    /// idle CPU, or the current one when it is outranked, reschedules.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.catch_up(ctx);
        if kind != EnqueueKind::Restore {
            let td = &mut self.td[t.idx()];
            if !td.counted {
                td.counted = true;
                self.nrun += 1;
            }
        }
        if kind == EnqueueKind::Wakeup {
            let slice = Self::sched_slice(ctx.hz());
            let td = &mut self.td[t.idx()];
            if td.slptime > 1 {
                td.estcpu = updatepri(self.ldavg, td.estcpu, td.slptime);
            }
            td.slptime = 0;
            td.slice = slice;
        }
        self.reset_priority(ctx, t);
        if ctx.task(t).running {
            // Still current on its CPU (woken as it blocked): put_prev queues it.
            return;
        }
        self.runq_add(t, cpu);
        if kind != EnqueueKind::Restore {
            self.kick(ctx, cpu, t);
        }
    }

    /// `sched_rem` (and, for an exit, `sched_exit`: the parent is charged the child's
    /// estcpu, up to ESTCPULIM).
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.catch_up(ctx);
        let steps = self.runq_remove(t);
        ctx.count_work(steps as u64 + 1);
        if kind == DequeueKind::Save {
            return;
        }
        let td = &mut self.td[t.idx()];
        if td.counted {
            td.counted = false;
            self.nrun -= 1;
        }
        if kind == DequeueKind::Exit {
            let (child, parent) = (td.estcpu, td.parent);
            if let Some(p) = parent.filter(|p| self.td[p.idx()].alive) {
                let lim = estcpu_limit(self.iew);
                let pe = &mut self.td[p.idx()].estcpu;
                *pe = (*pe + child).min(lim);
            }
        }
    }

    /// `sched_switch`: a thread still runnable when it leaves the CPU (its slice ended,
    /// it was outranked or it yielded) goes to the tail of its queue.
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.catch_up(ctx);
        if ctx.task(t).on_rq && self.td[t.idx()].rqindex.is_none() {
            self.runq_add(t, cpu);
        }
    }

    /// `sched_choose` / `runq_choose`: the first thread of the lowest-numbered non-empty
    /// queue that may run here (and is not current on another CPU).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        self.catch_up(ctx);
        let (found, steps) = self.runq.choose(|t| {
            let v = ctx.task(t);
            v.affinity.contains(cpu) && (!v.running || v.cpu == cpu)
        });
        ctx.count_work(steps);
        let t = found?;
        self.runq_remove(t);
        if ctx.task(t).cpu != cpu {
            ctx.set_task_cpu(t, cpu);
        }
        self.td[t.idx()].didrun = true;
        Some(t)
    }

    /// `sched_clock`: one stat tick of the running thread: estcpu + 1 (up to ESTCPULIM),
    /// a new user priority at every INVERSE_ESTCPU_WEIGHT, and at the end of its slice
    /// (`sched_slice` ticks) a reschedule (`TDF_SLICEEND`).
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.catch_up(ctx);
        let lim = estcpu_limit(self.iew);
        let td = &mut self.td[t.idx()];
        td.estcpu = (td.estcpu + 1).min(lim);
        if td.estcpu.is_multiple_of(self.iew) {
            self.reset_priority(ctx, t);
        }
        let slice = Self::sched_slice(ctx.hz());
        let td = &mut self.td[t.idx()];
        td.slice = td.slice.saturating_sub(1);
        if td.slice == 0 {
            td.slice = slice;
            ctx.resched(cpu);
        }
    }

    /// `sched_relinquish`: the engine reschedules; put_prev queues the thread at its tail.
    fn yield_task(&mut self, _ctx: &mut Ctx, _cpu: CpuId, _t: TaskId) {}

    /// `sched_nice` / `rtp_to_pri`: the new attributes give the new priority.
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, _old: SchedAttrs) {
        self.reset_priority(ctx, t);
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.td
            .get(t.idx())
            .map(|td| ("td_priority", td.pri as i64))
    }

    /// The 100 ms round-robin quantum (`sched_slice`), whatever the attributes.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        self.accepts(attrs).ok()?;
        Some(Self::sched_slice(hz) as u64 * NS_PER_S / hz as u64)
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for t in self.runq.iter() {
            f(self.td[t.idx()].qcpu, t);
        }
    }
}

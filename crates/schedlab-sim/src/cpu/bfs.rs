//! `bfs`: Con Kolivas' Brain Fuck Scheduler, one policy owning the whole machine.
//!
//! Source: `Documentation/scheduler/sched-BFS.txt` and the BFS 0.4xx code of the 3.x era
//! (`kernel/sched/bfs.c`); the
//! functions modelled are named where they are used: `prio_ratios` init (`sched_init`),
//! `prio_deadline_diff`, `timeslice`, `time_slice_expired`, `check_deadline`,
//! `earliest_deadline_task`, `can_preempt`, `try_preempt`, `resched_suitable_idle`,
//! `wake_up_new_task`, `task_running_tick`, the ISO refractory test and `sys_sched_yield`
//! (MuQSS's `sched_yield_type`).
//!
//! Rules modelled:
//! - one global run queue (`grq`) for all CPUs, ordered by (queue index, key): queue indices
//!   0..99 are the RT priorities (kernel prio, FIFO order within one: key = arrival
//!   sequence), then `ISO_PRIO`, `NORMAL_PRIO` (SCHED_OTHER and SCHED_BATCH), `IDLE_PRIO`
//!   (SCHED_IDLE = SCHED_IDLEPRIO), each ordered by virtual deadline. The running task is
//!   taken off the queue (`take_task`) and returned when it stops (`return_task`);
//! - `prio_ratios[0] = 128`, `prio_ratios[i] = prio_ratios[i-1] * 11 / 10`;
//!   virtual deadline on refill = `now + prio_ratios[nice + 20] * rr_interval *
//!   (MS_TO_NS(1) / 128)` with `MS_TO_NS(x) = x << 20`; time slice = `timeslice()` =
//!   `MS_TO_US(rr_interval)` = `rr_interval << 10` µs;
//! - `check_deadline`: a task whose slice fell below `RESCHED_US` (100 µs), or any
//!   SCHED_BATCH task, gets a fresh slice and a new deadline (`time_slice_expired`) when it
//!   is descheduled; SCHED_FIFO tasks never expire; SCHED_RR tasks go to the tail of their
//!   priority on expiry;
//! - sleeping keeps the slice and the deadline, so a waking task usually has an earlier
//!   deadline than the CPU hogs and preempts one;
//! - `can_preempt(p, prio, deadline)`: a better queue index wins; on an equal one
//!   SCHED_BATCH never preempts, otherwise the earlier deadline does;
//! - a sync wake-up (pipes, sockets: `WakeFlags::sync`) only kicks an idle CPU, never
//!   preempts (`ttwu_activate`); MuQSS keeps the plain `try_preempt` here, as no MuQSS
//!   source for that rule was checked;
//! - `try_preempt`: an idle CPU the wakee may run on is kicked; otherwise the CPU running the
//!   worst task (highest queue index, then latest deadline) among the wakee's CPUs is
//!   rescheduled if `can_preempt` says so;
//! - pick (`earliest_deadline_task`): the first RT task in priority/FIFO order, otherwise
//!   the earliest deadline, among tasks allowed on this CPU and not current on another CPU;
//!   the picked task is migrated here. A *sticky* task (descheduled involuntarily with slice
//!   left; one per CPU, `rq->sticky_task`) looked at from another CPU has its deadline
//!   shifted left by `locality` bits (`dl = deadline << locality_diff`);
//! - when a descheduled task stays queued, an idle CPU it may run on is kicked
//!   (`resched_suitable_idle`);
//! - fork (`wake_up_new_task`): the parent's remaining slice is halved; below `RESCHED_US`
//!   the parent is rescheduled (its slice expires) and the child gets a fresh slice and
//!   deadline; otherwise the child gets the halved slice and inherits the parent's deadline,
//!   and runs first if the parent is current on a CPU the child may use and no such CPU is
//!   idle. A child of a SCHED_FIFO parent gets a fresh slice;
//! - SCHED_ISO: runs at `ISO_PRIO` (above every normal task, round robin by deadline)
//!   while the rolling average of ISO CPU use over `ISO_PERIOD` (5 s) stays at or below
//!   `iso_cpu` % of all CPUs; beyond that ISO tasks are queued as NORMAL ("refractory") and
//!   a running ISO task has its slice expired at the next tick;
//! - yield (`sched_yield_type`): 0 and 1 leave slice and deadline alone (the engine
//!   reschedules, and the best task, possibly the yielder, runs); 2 expires the slice.
//!
//! Simplifications (each deliberate):
//! - schedlab has no SCHED_ISO policy value: with `rt_as_iso=1` every SCHED_FIFO/RR task
//!   runs as SCHED_ISO, which is what BFS's `sched_setscheduler` does for an unprivileged
//!   caller asking for real-time; with the default 0 there are no ISO tasks;
//! - the ISO rolling average is an exponentially decaying sum of ISO CPU time with time
//!   constant `ISO_PERIOD`, updated from `update_curr` (bfs.c keeps a per-tick counter
//!   `iso_ticks`); there is no hysteresis on leaving the refractory state; RT time is not
//!   counted; a task's ISO/NORMAL class is fixed while it sits in the queue;
//! - niffies = the simulator clock (one monotonic ns clock for the machine);
//! - slice expiry: with `hrexpiry=1` (default) a policy timer fires exactly when the slice
//!   runs out; with 0 it is noticed at the next tick as in BFS 0.4xx `task_running_tick`;
//! - the machine is flat (no SMT/cache/NUMA): every other CPU is at the same locality
//!   distance `locality` (default 2 = shared cache), no cpufreq "scaling" CPUs, and an
//!   idle CPU for a wake-up is the task's previous CPU if idle, else the lowest-numbered idle
//!   allowed CPU;
//! - RT tasks of equal priority never preempt each other (POSIX), and a preempted RT task
//!   keeps its place at the head of its priority;
//! - a nice change keeps the current deadline (applies from the next refill);
//! - SCHED_DEADLINE is rejected;
//! - the global queue is kept as one sorted set instead of BFS's per-level lists, so the
//!   pick can stop at the first candidate; the *counted* work still follows bfs.c: the
//!   whole list of the picked non-RT level is walked (O(n) in the queued tasks, "Now we're
//!   in O(n) territory"), an RT level up to its first suitable task, and a queue insertion
//!   or removal is one step (list link + bitmap bit). MuQSS counts its skip lists:
//!   ⌈log2(n+1)⌉ per insertion or removal.
//!
//! Tunables: `rr_interval_ms` (6, 1..=1000), `iso_cpu` (70, 0..=100), `rt_as_iso` (0),
//! `yield_type` (1, 0..=2), `locality` (2, 0..=8), `hrexpiry` (1).
//!
//! `muqss.rs` reuses this implementation with one queue per CPU (`muqss::muqss()`; the
//! `muqss`-only paths are marked where they branch).

use std::collections::BTreeSet;

use super::tunables::{self, Tunable};
use crate::ctx::Ctx;
use crate::sched::{
    DequeueKind, EnqueueKind, FiredTimer, PolicyInfo, Scheduler, TimerId, WakeKind,
};
use crate::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId, Time};

/// Queue index of SCHED_ISO tasks (after the 100 RT priorities).
pub const ISO_PRIO: u8 = 100;
/// Queue index of SCHED_NORMAL and SCHED_BATCH tasks.
pub const NORMAL_PRIO: u8 = 101;
/// Queue index of SCHED_IDLEPRIO tasks.
pub const IDLE_PRIO: u8 = 102;
/// `RESCHED_US`: a slice below 100 µs counts as used up (in ns here).
pub const RESCHED_NS: u64 = 100_000;
/// `ISO_PERIOD` = 5 s (5 * HZ jiffies).
pub const ISO_PERIOD_NS: u64 = 5_000_000_000;

/// `MS_TO_NS(x) = x << 20` (approximate ns).
pub const fn ms_to_ns(ms: u64) -> u64 {
    ms << 20
}

/// `MS_TO_US(x) = x << 10` (approximate µs).
pub const fn ms_to_us(ms: u64) -> u64 {
    ms << 10
}

/// The `prio_ratios` table (`sched_init`): 128 for nice -20, each nice level 10 % more,
/// integer arithmetic as in bfs.c.
pub const fn prio_ratios() -> [u64; 40] {
    let mut r = [0u64; 40];
    r[0] = 128;
    let mut i = 1;
    while i < 40 {
        r[i] = r[i - 1] * 11 / 10;
        i += 1;
    }
    r
}

const PRIO_RATIOS: [u64; 40] = prio_ratios();

/// `prio_deadline_diff(user_prio)`: how far ahead of now a refilled deadline lies.
pub fn prio_deadline_diff(nice: i32, rr_interval_ms: u64) -> u64 {
    let idx = (nice + 20).clamp(0, 39) as usize;
    PRIO_RATIOS[idx] * rr_interval_ms * (ms_to_ns(1) / 128)
}

/// `timeslice()` in ns: `MS_TO_US(rr_interval)` µs.
pub fn timeslice_ns(rr_interval_ms: u64) -> u64 {
    ms_to_us(rr_interval_ms) * 1000
}

/// Queue entry: (queue index, key, sequence, task). Key = arrival sequence for RT
/// indices, virtual deadline otherwise.
pub(super) type Entry = (u8, u64, u64, u32);

pub struct Bfs {
    /// BFS (one global queue) or MuQSS (one queue per CPU; see `muqss.rs`).
    pub(super) muqss: bool,
    /// Tunables (`locality` is fixed at 0 for MuQSS, `interactive` is MuQSS's).
    pub(super) params: BfsParams,
    /// The run queues: BFS's global `grq` (one), or MuQSS's per-CPU queues.
    pub(super) queues: Vec<BTreeSet<Entry>>,
    /// Each task's entry while it is queued, and the queue it is in.
    pub(super) qentry: Vec<Option<(usize, Entry)>>,
    /// Queued tasks per queue index over all queues (the length of BFS's per-level list).
    level_len: [u32; IDLE_PRIO as usize + 1],
    /// The CPU each queued task was queued for (reported to the checker).
    qcpu: Vec<CpuId>,
    pub(super) deadline: Vec<u64>,
    time_slice: Vec<u64>,
    /// FIFO position within an RT priority (kept when preempted).
    rt_seq: Vec<u64>,
    /// Child-runs-first request from `wake_up_new_task` (the parent).
    crf_parent: Vec<Option<TaskId>>,
    /// Queue index the task was picked at (its class while running).
    pub(super) run_idx: Vec<u8>,
    /// `rq->sticky_task` per CPU.
    sticky: Vec<Option<TaskId>>,
    /// Per CPU: the armed slice-expiry timer (`rq->hrexpiry_timer`).
    expiry: Vec<Option<TimerId>>,
    seq: u64,
    // ISO accounting.
    iso_acc: f64,
    iso_last: Time,
    iso_refractory: bool,
}

/// The tunables of BFS and MuQSS (one struct: MuQSS is BFS's code with per-CPU queues).
#[derive(Clone, Debug)]
pub struct BfsParams {
    /// `rr_interval` in ms: time slice and deadline scale.
    pub rr_interval_ms: u64,
    /// `sched_iso_cpu`: percent of all CPUs SCHED_ISO may use over ISO_PERIOD.
    pub iso_cpu: u32,
    /// SCHED_FIFO/RR requests run as SCHED_ISO.
    pub rt_as_iso: bool,
    /// `sched_yield_type`.
    pub yield_type: u8,
    /// Bits a sticky task's deadline is shifted when seen from another CPU (BFS).
    pub locality: u32,
    /// Expire slices at the exact ns (BFS's hrexpiry).
    pub hrexpiry: bool,
    /// MuQSS `sched_interactive`: pick the earliest deadline across all runqueues.
    pub interactive: bool,
}

impl Default for BfsParams {
    fn default() -> Self {
        BfsParams {
            rr_interval_ms: 6,
            iso_cpu: 70,
            rt_as_iso: false,
            yield_type: 1,
            locality: 2,
            hrexpiry: true,
            interactive: true,
        }
    }
}

impl Bfs {
    pub fn new(nr_cpus: usize) -> Self {
        Bfs {
            muqss: false,
            params: BfsParams::default(),
            queues: vec![BTreeSet::new()],
            qentry: Vec::new(),
            level_len: [0; IDLE_PRIO as usize + 1],
            qcpu: Vec::new(),
            deadline: Vec::new(),
            time_slice: Vec::new(),
            rt_seq: Vec::new(),
            crf_parent: Vec::new(),
            run_idx: Vec::new(),
            sticky: vec![None; nr_cpus],
            expiry: vec![None; nr_cpus],
            seq: 0,
            iso_acc: 0.0,
            iso_last: 0,
            iso_refractory: false,
        }
    }

    /// The task's virtual deadline (ns of simulated time).
    pub fn deadline_of(&self, t: TaskId) -> u64 {
        self.deadline[t.idx()]
    }

    /// The task's remaining time slice (ns).
    pub fn time_slice_of(&self, t: TaskId) -> u64 {
        self.time_slice[t.idx()]
    }

    /// Is the machine in the ISO refractory state (ISO tasks demoted to NORMAL)?
    pub fn iso_refractory(&self) -> bool {
        self.iso_refractory
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn is_iso(&self, a: &SchedAttrs) -> bool {
        self.params.rt_as_iso && matches!(a.policy, Policy::Fifo | Policy::Rr)
    }

    /// The queue index of a task with these attributes now.
    fn queue_idx(&self, a: &SchedAttrs) -> u8 {
        match a.policy {
            Policy::Fifo | Policy::Rr if self.params.rt_as_iso => {
                if self.iso_refractory {
                    NORMAL_PRIO
                } else {
                    ISO_PRIO
                }
            }
            Policy::Fifo | Policy::Rr => a.prio().clamp(0, 99) as u8,
            Policy::Idle => IDLE_PRIO,
            _ => NORMAL_PRIO,
        }
    }

    /// `time_slice_expired`: fresh slice, new deadline, new place in RT FIFO order.
    fn time_slice_expired(&mut self, ctx: &Ctx, t: TaskId) {
        let nice = ctx.task(t).attrs.nice;
        self.time_slice[t.idx()] = timeslice_ns(self.params.rr_interval_ms);
        self.deadline[t.idx()] = ctx.now() + prio_deadline_diff(nice, self.params.rr_interval_ms);
        self.rt_seq[t.idx()] = self.next_seq();
    }

    /// Does the task's slice never run out (SCHED_FIFO as real RT)?
    fn never_expires(&self, a: &SchedAttrs) -> bool {
        a.policy == Policy::Fifo && !self.params.rt_as_iso
    }

    /// Queue `t` (`enqueue_task`): BFS links it at the tail of its priority's list and sets
    /// the bitmap bit (one step); MuQSS inserts it into its CPU's skip list (counted as
    /// the skip list's expected levels, ⌈log2(n+1)⌉).
    fn insert(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.qentry[t.idx()].is_some() {
            return;
        }
        let a = ctx.task(t).attrs;
        let idx = self.queue_idx(&a);
        let key = if idx < ISO_PRIO {
            self.rt_seq[t.idx()]
        } else {
            self.deadline[t.idx()]
        };
        let e = (idx, key, self.next_seq(), t.0);
        let q = if self.muqss { cpu.idx() } else { 0 };
        self.queues[q].insert(e);
        self.qentry[t.idx()] = Some((q, e));
        self.qcpu[t.idx()] = cpu;
        self.level_len[idx as usize] += 1;
        ctx.count_work(self.queue_op_steps(q));
    }

    /// Unqueue `t` (`dequeue_task`): a list unlink in BFS, a skip-list removal in MuQSS.
    fn remove(&mut self, ctx: &mut Ctx, t: TaskId) {
        if let Some((q, e)) = self.qentry[t.idx()].take() {
            self.queues[q].remove(&e);
            self.level_len[e.0 as usize] -= 1;
            ctx.count_work(self.queue_op_steps(q));
        }
    }

    /// The counted cost of one insertion or removal on queue `q` (see [`Self::insert`]).
    fn queue_op_steps(&self, q: usize) -> u64 {
        if self.muqss {
            u64::from(usize::BITS - self.queues[q].len().leading_zeros()).max(1)
        } else {
            1
        }
    }

    /// `can_preempt(p, prio, deadline)` against a running task `curr` of class `cidx`.
    fn can_preempt(&self, ctx: &Ctx, p: TaskId, pidx: u8, curr: TaskId, cidx: u8) -> bool {
        if pidx != cidx {
            return pidx < cidx;
        }
        if pidx < ISO_PRIO || ctx.task(p).attrs.policy == Policy::Batch {
            return false;
        }
        self.deadline[p.idx()] < self.deadline[curr.idx()]
    }

    /// Kick an idle CPU `t` may run on (other than `except`); true if one was found.
    fn resched_suitable_idle(&self, ctx: &mut Ctx, t: TaskId, except: Option<CpuId>) -> bool {
        let aff = ctx.task(t).affinity;
        let idle = aff
            .iter()
            .find(|&c| Some(c) != except && ctx.curr(c).is_none());
        if let Some(c) = idle {
            ctx.resched(c);
            true
        } else {
            false
        }
    }

    /// `try_preempt`: idle CPU first, else the CPU running the worst task.
    /// MuQSS (`try_preempt(p, rq)`) only looks at the CPU whose queue `t` joined.
    fn try_preempt(&self, ctx: &mut Ctx, t: TaskId, cpu: CpuId) {
        if self.resched_suitable_idle(ctx, t, None) {
            return;
        }
        let pidx = match self.qentry[t.idx()] {
            Some((_, e)) => e.0,
            None => return,
        };
        let aff = if self.muqss {
            let mut m = CpuMask::empty();
            m.set(cpu);
            m
        } else {
            ctx.task(t).affinity
        };
        let mut worst: Option<(u8, u64, CpuId, TaskId)> = None;
        for c in aff.iter() {
            let Some(cur) = ctx.curr(c) else { continue };
            let cidx = self.run_idx[cur.idx()];
            let dl = self.deadline[cur.idx()];
            let worse = match worst {
                None => true,
                Some((widx, wdl, _, _)) => cidx > widx || (cidx == widx && dl > wdl),
            };
            if worse {
                worst = Some((cidx, dl, c, cur));
            }
        }
        if let Some((cidx, _, c, cur)) = worst {
            if self.can_preempt(ctx, t, pidx, cur, cidx) {
                ctx.resched(c);
            }
        }
    }

    /// Bring the ISO rolling average up to now, adding `iso_ns` of ISO CPU time, and
    /// update the refractory state.
    fn iso_account(&mut self, ctx: &Ctx, iso_ns: u64) {
        let now = ctx.now();
        if now > self.iso_last {
            let dt = (now - self.iso_last) as f64;
            self.iso_acc *= (-dt / ISO_PERIOD_NS as f64).exp();
            self.iso_last = now;
        }
        self.iso_acc += iso_ns as f64;
        let limit =
            ISO_PERIOD_NS as f64 * ctx.nr_cpus() as f64 * self.params.iso_cpu as f64 / 100.0;
        self.iso_refractory = self.iso_acc > limit;
    }

    /// `hrexpiry_clear`: cancel `cpu`'s slice-expiry timer, if armed.
    fn cancel_expiry(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        if let Some(id) = self.expiry[cpu.idx()].take() {
            ctx.cancel_timer(id);
        }
    }

    /// `hrexpiry_start`: fire when `t`'s slice on `cpu` runs out.
    fn arm_expiry(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.cancel_expiry(ctx, cpu);
        if !self.params.hrexpiry || self.never_expires(&ctx.task(t).attrs) {
            return;
        }
        let left = self.time_slice[t.idx()];
        self.expiry[cpu.idx()] = Some(ctx.arm_timer(ctx.now() + left, cpu.0 as u64));
    }

    /// The best task allowed on `cpu` (`earliest_deadline_task`), without removing it.
    fn best_for(&self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if self.muqss {
            return self.muqss_best_for(ctx, cpu);
        }
        let mut best: Option<(u8, u64, TaskId)> = None;
        let mut steps = 0u64;
        let (mut level, mut seen_in_level) = (u8::MAX, 0u64);
        for &(idx, key, _, id) in &self.queues[0] {
            if let Some((bidx, bdl, _)) = best {
                // Sorted by (level, deadline): nothing further can win (a sticky penalty
                // only raises a key).
                if idx != bidx || key >= bdl || idx < ISO_PRIO {
                    break;
                }
            }
            steps += 1;
            if idx == level {
                seen_in_level += 1;
            } else {
                (level, seen_in_level) = (idx, 1);
            }
            let t = TaskId(id);
            let v = ctx.task(t);
            if !v.affinity.contains(cpu) || (v.running && v.cpu != cpu) {
                continue;
            }
            let mut dl = key;
            if idx >= ISO_PRIO && v.cpu != cpu && self.sticky[v.cpu.idx()] == Some(t) {
                dl = if key.leading_zeros() < self.params.locality {
                    u64::MAX
                } else {
                    key << self.params.locality
                };
            }
            if best.is_none_or(|(_, bdl, _)| dl < bdl) {
                best = Some((idx, dl, t));
            }
        }
        // bfs.c walks the whole list of a non-RT level ("Now we're in O(n) territory"):
        // count the entries the sorted set let us skip.
        if let Some((bidx, _, _)) = best.filter(|b| b.0 >= ISO_PRIO) {
            steps += u64::from(self.level_len[bidx as usize]).saturating_sub(seen_in_level);
        }
        ctx.count_work(steps);
        best.map(|(_, _, t)| t)
    }
}

impl Scheduler for Bfs {
    fn info(&self) -> PolicyInfo {
        if self.muqss {
            return self.muqss_info();
        }
        PolicyInfo {
            name: "bfs",
            summary: "Con Kolivas' BFS: one global queue, earliest virtual deadline first, \
                      RT and ISO above normal tasks",
            source: "Documentation/scheduler/sched-BFS.txt + kernel/sched/bfs.c (BFS 0.4xx, \
                     3.x era): prio_ratios, time_slice_expired, earliest_deadline_task, \
                     can_preempt, try_preempt, wake_up_new_task",
            params: tunables::listing(&bfs_tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        if self.muqss {
            tunables::set(
                &super::muqss::tunables(),
                &mut self.params,
                "muqss",
                name,
                value,
            )
        } else {
            tunables::set(&bfs_tunables(), &mut self.params, "bfs", name, value)
        }
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if attrs.policy == Policy::Deadline {
            return Err(format!(
                "SCHED_DEADLINE is not modelled by {}",
                self.info().name
            ));
        }
        Ok(())
    }

    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        let n = t.idx() + 1;
        if self.qentry.len() < n {
            self.qentry.resize(n, None);
            self.qcpu.resize(n, CpuId(0));
            self.deadline.resize(n, 0);
            self.time_slice.resize(n, 0);
            self.rt_seq.resize(n, 0);
            self.crf_parent.resize(n, None);
            self.run_idx.resize(n, NORMAL_PRIO);
        }
        self.time_slice_expired(ctx, t);
        let Some(p) = parent else { return };
        if ctx.task(p).attrs.policy == Policy::Fifo {
            return;
        }
        // wake_up_new_task: share the parent's remaining slice.
        let pv = *ctx.task(p);
        let used = if pv.running {
            ctx.unaccounted_ns(pv.cpu)
        } else {
            0
        };
        let remaining = self.time_slice[p.idx()].saturating_sub(used);
        let half = remaining / 2;
        if half < RESCHED_NS {
            // Parent rescheduled: its slice is used up; the child keeps its fresh one.
            self.time_slice[p.idx()] = 0;
            if pv.running {
                ctx.resched(pv.cpu);
            }
        } else {
            self.time_slice[p.idx()] = half + used;
            self.time_slice[t.idx()] = half;
            self.deadline[t.idx()] = self.deadline[p.idx()];
            if pv.running {
                self.crf_parent[t.idx()] = Some(p);
            }
        }
    }

    fn task_exit(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.remove(ctx, t);
        for s in self.sticky.iter_mut() {
            if *s == Some(t) {
                *s = None;
            }
        }
    }

    /// The previous CPU if idle, else an idle allowed CPU, else the previous CPU (or the
    /// first allowed one); `try_preempt` in `enqueue` then chooses whom to preempt.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, _kind: WakeKind) -> CpuId {
        let aff = ctx.task(t).affinity;
        if aff.contains(prev) && ctx.curr(prev).is_none() {
            return prev;
        }
        if let Some(c) = aff.iter().find(|&c| ctx.curr(c).is_none()) {
            return c;
        }
        if self.muqss {
            return self.muqss_busy_cpu(ctx, t, prev);
        }
        if aff.contains(prev) {
            prev
        } else {
            aff.first().expect("empty affinity")
        }
    }

    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if ctx.task(t).running {
            // ttwu_runnable: still current on its CPU; put_prev returns it to the queue.
            return;
        }
        // A woken, new or requeued RT task joins the tail of its priority.
        self.rt_seq[t.idx()] = self.next_seq();
        self.insert(ctx, cpu, t);
        if kind == EnqueueKind::New {
            if let Some(p) = self.crf_parent[t.idx()].take() {
                let pv = *ctx.task(p);
                let aff = ctx.task(t).affinity;
                let idle = aff.iter().any(|c| ctx.curr(c).is_none());
                if pv.running && aff.contains(pv.cpu) && !idle {
                    // Child runs first: the parent goes back behind the child (same
                    // deadline, later sequence).
                    ctx.resched(pv.cpu);
                    return;
                }
            }
        }
        if kind == EnqueueKind::Wakeup && !self.muqss && ctx.wake_flags().sync {
            // BFS `ttwu_activate`: a sync wake-up preempts nobody unless a suitable CPU
            // is idle (`if (!is_sync || suitable_idle_cpus(p)) try_preempt(p, rq)`).
            self.resched_suitable_idle(ctx, t, None);
            return;
        }
        self.try_preempt(ctx, t, cpu);
    }

    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.remove(ctx, t);
        if kind != DequeueKind::Save && self.sticky[cpu.idx()] == Some(t) {
            self.sticky[cpu.idx()] = None;
        }
    }

    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.cancel_expiry(ctx, cpu);
        let a = ctx.task(t).attrs;
        // check_deadline
        let expired = !self.never_expires(&a) && self.time_slice[t.idx()] < RESCHED_NS;
        if expired || a.policy == Policy::Batch {
            self.time_slice_expired(ctx, t);
        }
        if !ctx.task(t).on_rq {
            return;
        }
        if !expired && !self.muqss {
            // Involuntarily descheduled with slice left: sticky to this CPU.
            self.sticky[cpu.idx()] = Some(t);
        } else if self.sticky[cpu.idx()] == Some(t) {
            self.sticky[cpu.idx()] = None;
        }
        self.insert(ctx, cpu, t);
        self.resched_suitable_idle(ctx, t, Some(cpu));
    }

    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let t = self.best_for(ctx, cpu)?;
        let (_, e) = self.qentry[t.idx()].expect("picked task is queued");
        self.remove(ctx, t);
        self.run_idx[t.idx()] = e.0;
        let from = ctx.task(t).cpu;
        if self.sticky[from.idx()] == Some(t) {
            self.sticky[from.idx()] = None;
        }
        if from != cpu {
            ctx.set_task_cpu(t, cpu);
        }
        self.arm_expiry(ctx, cpu, t);
        Some(t)
    }

    fn update_curr(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, delta_ns: u64) {
        let a = ctx.task(t).attrs;
        if !self.never_expires(&a) {
            let s = &mut self.time_slice[t.idx()];
            *s = s.saturating_sub(delta_ns);
        }
        let iso_ns = if self.is_iso(&a) && self.run_idx[t.idx()] == ISO_PRIO {
            delta_ns
        } else {
            0
        };
        self.iso_account(ctx, iso_ns);
    }

    /// `task_running_tick`: expire a used-up slice (and a running ISO task's slice once
    /// the ISO limit is hit).
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let a = ctx.task(t).attrs;
        if self.iso_refractory && self.run_idx[t.idx()] == ISO_PRIO {
            self.time_slice[t.idx()] = 0;
        }
        if !self.never_expires(&a) && self.time_slice[t.idx()] < RESCHED_NS {
            ctx.resched(cpu);
        }
    }

    /// `hrexpiry`: the running task's slice ran out.
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        let cpu = CpuId(timer.token as u32);
        // Every re-arm cancels the previous timer, so the one firing is the current one.
        debug_assert_eq!(self.expiry[cpu.idx()], Some(timer.id));
        self.expiry[cpu.idx()] = None;
        if ctx.curr(cpu).is_some() {
            ctx.resched(cpu);
        }
    }

    fn yield_task(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        if self.params.yield_type == 2 {
            self.time_slice[t.idx()] = 0;
        }
    }

    /// `timeslice()` = `MS_TO_US(rr_interval)`, the same for every nice level (nice only
    /// moves the virtual deadline, `prio_deadline_diff`); SCHED_FIFO as real RT never
    /// expires. Shared by `muqss`.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        let _ = hz;
        if self.never_expires(attrs) || self.accepts(attrs).is_err() {
            return None;
        }
        Some(timeslice_ns(self.params.rr_interval_ms))
    }

    fn dynamic_prio(&self, t: TaskId) -> Option<(&'static str, i64)> {
        self.deadline
            .get(t.idx())
            .map(|&d| ("deadline", d.min(i64::MAX as u64) as i64))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for q in &self.queues {
            for &(_, _, _, id) in q {
                f(self.qcpu[id as usize], TaskId(id));
            }
        }
    }
}

/// The tunables BFS and MuQSS share (MuQSS adds `interactive`, BFS `locality` and
/// `hrexpiry`).
pub(super) fn shared_tunables() -> Vec<Tunable<BfsParams>> {
    vec![
        Tunable::ms(
            "rr_interval_ms",
            "rr_interval in ms (1..=1000): time slice and deadline scale",
            1,
            1000,
            |p| &mut p.rr_interval_ms,
        ),
        Tunable::int(
            "iso_cpu",
            "percent of all CPUs SCHED_ISO tasks may use over ISO_PERIOD (5 s) before running \
             as normal tasks (0..=100)",
            0,
            100,
            |p| &mut p.iso_cpu,
        ),
        Tunable::flag(
            "rt_as_iso",
            "1 = SCHED_FIFO/RR tasks run as SCHED_ISO (BFS's and MuQSS's treatment of \
             unprivileged real-time requests)",
            |p| &mut p.rt_as_iso,
        ),
        Tunable::int(
            "yield_type",
            "sched_yield_type: 0 none, 1 yield to better tasks only, 2 expire the slice",
            0,
            2,
            |p| &mut p.yield_type,
        ),
    ]
}

fn bfs_tunables() -> Vec<Tunable<BfsParams>> {
    let mut t = shared_tunables();
    t.push(Tunable::int(
        "locality",
        "bits a sticky task's deadline is shifted left when looked at from another CPU \
         (0 = no cache-locality bias)",
        0,
        8,
        |p| &mut p.locality,
    ));
    t.push(Tunable::flag(
        "hrexpiry",
        "1 = expire slices at the exact ns (high-res timer), 0 = at the next tick",
        |p| &mut p.hrexpiry,
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SchedCore;
    use crate::trace::writer::PrevState;
    use crate::types::CpuMask;

    const C0: CpuId = CpuId(0);
    const C1: CpuId = CpuId(1);

    fn normal(nice: i32) -> SchedAttrs {
        crate::types::fair(Policy::Other, nice)
    }

    /// BFS on `n` CPUs at HZ 250, driven by the scheduler core (the engine's protocol).
    fn machine(n: usize) -> SchedCore<Bfs> {
        SchedCore::bare(Bfs::new(n), n, 250)
    }

    /// A parent of the given remaining slice that starts running at `at` and forks at once
    /// (nothing of its slice used yet).
    fn running_parent(core: &mut SchedCore<Bfs>, slice: u64, at: u64) -> TaskId {
        let p = core.spawn(normal(0), CpuMask::first_n(1), None);
        core.policy.time_slice[p.idx()] = slice;
        core.set_now(at);
        core.wake_up_new_task(p, None).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(p));
        p
    }

    #[test]
    fn fork_halves_the_parent_slice_and_child_inherits_the_deadline() {
        let mut core = machine(1);
        let p = running_parent(&mut core, 4_000_000, 3_000_000);
        let c = core.spawn(normal(5), CpuMask::first_n(1), Some(p));
        assert_eq!(core.policy.time_slice_of(p), 2_000_000);
        assert_eq!(core.policy.time_slice_of(c), 2_000_000);
        assert_eq!(core.policy.deadline_of(c), core.policy.deadline_of(p));
        // The child runs first: the parent, put back with the same deadline, queues
        // behind it.
        core.wake_up_new_task(c, Some(C0)).unwrap();
        assert!(core.ctx.need_resched(C0));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(c));
    }

    #[test]
    fn fork_with_a_nearly_used_slice_gives_the_child_a_fresh_one() {
        let mut core = machine(1);
        let p = running_parent(&mut core, 150_000, 7_000_000);
        let c = core.spawn(normal(0), CpuMask::first_n(1), Some(p));
        assert_eq!(core.policy.time_slice_of(p), 0);
        assert!(core.ctx.need_resched(C0));
        assert_eq!(core.policy.time_slice_of(c), timeslice_ns(6));
        assert_eq!(
            core.policy.deadline_of(c),
            7_000_000 + prio_deadline_diff(0, 6)
        );
    }

    #[test]
    fn can_preempt_batch_never_on_equal_class_rt_always_above() {
        let mut core = machine(1);
        let one = CpuMask::first_n(1);
        let mut ba = normal(0);
        ba.policy = Policy::Batch;
        let [cur, bt, nt] = [normal(0), ba, normal(0)].map(|a| core.spawn(a, one, None));
        let b = &mut core.policy;
        b.deadline[cur.idx()] = 100;
        b.deadline[bt.idx()] = 10;
        b.deadline[nt.idx()] = 10;
        let (b, ctx) = (&core.policy, &core.ctx);
        assert!(!b.can_preempt(ctx, bt, NORMAL_PRIO, cur, NORMAL_PRIO));
        assert!(b.can_preempt(ctx, nt, NORMAL_PRIO, cur, NORMAL_PRIO));
        assert!(!b.can_preempt(ctx, cur, NORMAL_PRIO, nt, NORMAL_PRIO));
        assert!(b.can_preempt(ctx, bt, 50, cur, NORMAL_PRIO));
        assert!(!b.can_preempt(ctx, nt, IDLE_PRIO, cur, NORMAL_PRIO));
        assert!(!b.can_preempt(ctx, nt, 50, cur, 50));
    }

    /// A task queued while it is still current on its CPU (an attribute change re-queues
    /// the running task) is not picked by another CPU, even with the earlier deadline.
    #[test]
    fn a_task_current_on_another_cpu_is_not_picked() {
        let mut core = machine(2);
        let all = CpuMask::first_n(2);
        let a = core.spawn(normal(0), all, None);
        core.set_now(1_000_000);
        let c = core.spawn(normal(0), all, None);
        assert!(core.policy.deadline_of(a) < core.policy.deadline_of(c));
        core.wake_up_new_task(a, None).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        // c goes to the idle CPU 1, which has not rescheduled yet when a's nice changes.
        assert_eq!(core.wake_up_new_task(c, None), Ok(C1));
        core.setattr(a, Some(normal(1)), None).unwrap();
        assert!(core.ctx.task(a).on_rq && core.ctx.task(a).running);
        assert_eq!(core.schedule(C1).next, Some(c));
        assert_eq!(core.schedule(C0).next, Some(a));
    }

    /// A task descheduled involuntarily with slice left is sticky to its CPU
    /// (`rq->sticky_task`): looked at from another CPU its deadline counts shifted left by
    /// `locality` (2) bits, so that CPU prefers a later deadline; its own CPU takes it
    /// back at its real deadline.
    #[test]
    fn a_sticky_task_is_biased_from_other_cpus() {
        let mut core = machine(2);
        let all = CpuMask::first_n(2);
        let [a, h] = [0, 0].map(|n| core.spawn(normal(n), all, None));
        core.set_now(1_000_000);
        let c = core.spawn(normal(0), all, None);
        let r = core.spawn(
            crate::types::rt(Policy::Fifo, 10),
            CpuMask::first_n(1),
            None,
        );
        let (da, dc) = (core.policy.deadline_of(a), core.policy.deadline_of(c));
        assert!(da < dc && da << 2 > dc, "a wins unbiased, loses biased");
        // a runs on CPU 0, h on CPU 1; c waits (its deadline is later than both).
        for t in [a, h] {
            core.wake_up_new_task(t, None).unwrap();
            core.process_resched();
        }
        assert_eq!((core.ctx.curr(C0), core.ctx.curr(C1)), (Some(a), Some(h)));
        core.wake_up_new_task(c, None).unwrap();
        assert!(!core.ctx.need_resched(C0) && !core.ctx.need_resched(C1));
        // An RT task preempts a, which has slice left: sticky to CPU 0.
        core.wake_up_new_task(r, None).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(r));
        assert_eq!(core.policy.sticky[0], Some(a));
        // CPU 1 frees up: a's deadline counts as da << 2 there, later than c's.
        core.block(C1, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C1), Some(c));
        // CPU 0 frees up: it takes its sticky task back.
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        assert_eq!(core.policy.sticky[0], None);
    }
}

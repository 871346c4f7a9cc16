//! Instruments of seed 000 ("Linux-family schedulers"): facts about a policy computed by
//! the policy's own code, without running a workload.
//!
//! - [`timeslice_table`]: the timeslice each nice level gets from
//!   [`Scheduler::timeslice_ns`] (O(1) `task_timeslice`, the staircase `slice`, BFS's
//!   `timeslice()`, …), for `schedlab timeslice`.
//! - [`sched_cost`] / [`sched_cost_sweep`]: the scheduler-cost study (seed 000's
//!   "time spent inside scheduler functions", seed 001's claim that ULE does not slow down
//!   with the number of threads): the work a policy counts per scheduling decision
//!   (`Ctx::count_work`, exact) and the wall nanoseconds its hooks take, with N runnable
//!   tasks, for `schedlab cost` and `make bench`. [`sched_cost`] defines one decision.

use std::collections::VecDeque;
use std::time::Instant;

use crate::cpu::{self, PolicyVisitor};
use crate::ctx::Ctx;
use crate::event::EventKind;
use crate::protocol::SchedCore;
use crate::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler};
use crate::trace::writer::PrevState;
use crate::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId, MAX_CPUS};
use crate::{check_hz, SimError};

/// The nice levels of SCHED_OTHER, best first.
pub const NICE_RANGE: std::ops::RangeInclusive<i32> = -20..=19;

/// The timeslice (ns) `scheduler` gives a lone SCHED_OTHER task of each nice level −20..=19
/// at tick rate `hz`, in nice order. `None` for a nice level means the policy has no
/// per-task slice (CFS/EEVDF: it depends on the load). The policy is built through the
/// registry with its default tunables. Errors: unknown scheduler, unsupported HZ.
pub fn timeslice_table(scheduler: &str, hz: u32) -> Result<Vec<(i32, Option<u64>)>, SimError> {
    check_hz(hz)?;
    cpu::construct(scheduler, 1, Timeslices { hz }).map_err(SimError::input)
}

/// The best non-RT priorities [`nicksched_dprio_timeslices`] tabulates against.
pub const NICKSCHED_BEST_PRIOS: [i32; 4] = [100, 110, 120, 130];

/// One row of [`nicksched_dprio_timeslices`]: the best queued priority and, for every
/// dynamic priority from it to 139, the slice in ns.
pub type DprioSlices = (i32, Vec<(i32, u64)>);

/// nicksched's timeslice against dynamic priority (seed 000 gives it as a function of
/// `dprio` and `minprio`, the best priority queued on the CPU): for each `best` of
/// [`NICKSCHED_BEST_PRIOS`], the slice (ns) of a task at every dynamic priority
/// `best..=139`, from the policy's own `Consts::timeslice` with its default tunables.
pub fn nicksched_dprio_timeslices(hz: u32) -> Result<Vec<DprioSlices>, SimError> {
    check_hz(hz)?;
    let k = cpu::nicksched::Consts::new(&cpu::nicksched::Params::default(), hz);
    let tick = 1_000_000_000 / hz as u64;
    Ok(NICKSCHED_BEST_PRIOS
        .iter()
        .map(|&best| {
            let row = (best..=139)
                .map(|prio| (prio, k.timeslice(prio, Some(best)) * tick))
                .collect();
            (best, row)
        })
        .collect())
}

struct Timeslices {
    hz: u32,
}

impl PolicyVisitor for Timeslices {
    type Out = Vec<(i32, Option<u64>)>;

    fn visit<S: Scheduler>(self, policy: S) -> Self::Out {
        NICE_RANGE
            .map(|nice| {
                let attrs = SchedAttrs {
                    policy: Policy::Other,
                    rt_priority: 0,
                    nice,
                    dl: None,
                    slice_ns: None,
                };
                (nice, policy.timeslice_ns(&attrs, self.hz))
            })
            .collect()
    }
}

// ---------------------------------------------------------------------- scheduler cost

/// The numbers of runnable tasks the cost study measures by default.
pub const COST_SIZES: [usize; 6] = [1, 10, 100, 1_000, 10_000, 100_000];
/// The largest number of runnable tasks [`sched_cost`] accepts (memory: every policy keeps
/// per-task tables).
pub const MAX_COST_TASKS: usize = 1_000_000;
/// Tasks kept asleep beside the N runnable ones, so that a decision in which the current
/// task blocks can wake one of them and keep N constant.
const SLEEPERS: usize = 8;
/// The measured decisions are timed in this many equal chunks and the fastest chunk is
/// kept: a shared machine's noise only ever adds time.
const CHUNKS: u64 = 10;

/// The scheduling class of the cost study's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostClass {
    /// SCHED_OTHER, nice 0 (the fair / time-sharing class).
    Other,
    /// SCHED_FIFO with user priorities spread over 1..=99 (`1 + 37·i mod 99`), so that
    /// RTOS-style ready queues (fp, the Linux RT class, `readyq=...`) see many levels.
    Fifo,
}

impl CostClass {
    /// The name used in options and JSON (`other`, `fifo`).
    pub fn name(self) -> &'static str {
        match self {
            CostClass::Other => "other",
            CostClass::Fifo => "fifo",
        }
    }

    /// Parse `other` / `fifo`.
    pub fn parse(s: &str) -> Result<CostClass, SimError> {
        match s {
            "other" => Ok(CostClass::Other),
            "fifo" => Ok(CostClass::Fifo),
            _ => Err(SimError::input(format!(
                "class: expected 'other' or 'fifo', got '{s}'"
            ))),
        }
    }

    /// The attributes of the `i`-th task.
    fn attrs(self, i: usize) -> SchedAttrs {
        match self {
            CostClass::Other => crate::types::fair(Policy::Other, 0),
            CostClass::Fifo => crate::types::rt(Policy::Fifo, 1 + (37 * i % 99) as i32),
        }
    }
}

/// How [`sched_cost`] drives a policy.
#[derive(Clone, Debug)]
pub struct CostConfig {
    /// Tunables applied with `Scheduler::set_param`, in order (as `--param k=v`).
    pub params: Vec<(String, String)>,
    /// Measured decisions (after a warm-up of a quarter as many).
    pub decisions: u64,
    /// CPUs of the machine; decisions rotate over them.
    pub cpus: usize,
    /// Tick rate: the clock advances one tick per round of decisions.
    pub hz: u32,
    pub class: CostClass,
    /// Also time the harness with a trivial O(1) policy and subtract it (see
    /// [`CostPoint::harness_ns_per_decision`]); off = report the raw loop time.
    pub subtract_harness: bool,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            params: Vec::new(),
            decisions: 20_000,
            cpus: 1,
            hz: 1000,
            class: CostClass::Other,
            subtract_harness: true,
        }
    }
}

/// One measurement of [`sched_cost`].
#[derive(Clone, Debug, PartialEq)]
pub struct CostPoint {
    pub scheduler: String,
    pub params: Vec<(String, String)>,
    pub class: CostClass,
    pub cpus: usize,
    /// Runnable tasks at every pick (the current task included, as `nr_running` counts it).
    pub nr_runnable: usize,
    /// Measured decisions.
    pub decisions: u64,
    /// Work units the policy counted over the measured decisions (exact, deterministic).
    pub work_units: u64,
    /// `work_units / decisions`.
    pub work_per_decision: f64,
    /// Wall ns per decision spent in the policy's hooks: the fastest chunk of the measured
    /// loop, minus [`Self::harness_ns_per_decision`] (never below 0). Machine-dependent.
    pub ns_per_decision: f64,
    /// Wall ns per decision of the same loop driving a trivial O(1) ring-buffer policy at
    /// the same N: the harness's own bookkeeping (clock, accounting, task flags, sleeper
    /// pool) plus a few ns of `VecDeque` operations; 0 when not measured.
    pub harness_ns_per_decision: f64,
}

/// Measure the cost of `scheduler`'s scheduling decisions with `nr_runnable` runnable
/// tasks.
///
/// Set-up (not measured): the policy is built through the registry with `cfg.params`;
/// `nr_runnable + 8` tasks of `cfg.class`, allowed on every CPU, are created as at
/// start-up (`task_new`, `select_cpu(Fork)`, `enqueue(New)`), every CPU picks, and then
/// decisions in which the current task blocks put 8 of them to sleep, leaving exactly
/// `nr_runnable` runnable.
///
/// One **decision** on CPU `c` (CPUs take turns; the clock advances one tick before CPU 0's
/// turn, and due policy timers fire first) is what the engine does around one `schedule()`:
/// 1. `update_curr(curr, tick)` then `tick(curr)` and `balance(Tick)`: the periodic tick
///    that precedes a preemption;
/// 2. on every other round, a *block*: the longest-sleeping task wakes
///    (`select_cpu(Wakeup)`, `set_task_cpu` if it moves, `enqueue(Wakeup)`, then
///    `update_curr` + `wakeup_preempt` on its CPU if busy) and the current task blocks
///    (`dequeue(Sleep)`) and joins the sleepers; on the other rounds it is a *preemption*
///    and the current task stays queued;
/// 3. `put_prev(curr)`, `pick_next(c)` (with `balance(NewIdle)` and a second pick if it
///    returns none), and the switch.
///
/// The machine thus holds exactly `nr_runnable` runnable tasks at every pick (on one CPU,
/// the pick chooses among all of them; on several, each CPU's share follows the policy's
/// placement and balancing). An idle CPU's decision is step 3 only. Reschedule requests
/// are dropped: every decision reschedules anyway.
/// After a warm-up of `decisions / 4`, `decisions` decisions are measured: the work the
/// policy counts (`Ctx::count_work`) and the wall time in 10 equal chunks (the fastest
/// kept). At the end every runnable task must still be queued or current, on its CPU.
pub fn sched_cost(
    scheduler: &str,
    cfg: &CostConfig,
    nr_runnable: usize,
) -> Result<CostPoint, SimError> {
    check_cost_config(cfg, nr_runnable)?;
    let run = CostRun {
        cfg,
        params: &cfg.params,
        nr_runnable,
    };
    let raw = cpu::construct(scheduler, cfg.cpus, run).map_err(SimError::input)??;
    let harness = if cfg.subtract_harness {
        let baseline = CostRun {
            cfg,
            params: &[],
            nr_runnable,
        };
        baseline.visit(RingBaseline::new(cfg.cpus))?
    } else {
        Measured::default()
    };
    let d = cfg.decisions as f64;
    Ok(CostPoint {
        scheduler: scheduler.to_string(),
        params: cfg.params.clone(),
        class: cfg.class,
        cpus: cfg.cpus,
        nr_runnable,
        decisions: cfg.decisions,
        work_units: raw.work_units,
        work_per_decision: raw.work_units as f64 / d,
        ns_per_decision: (raw.best_ns_per_decision - harness.best_ns_per_decision).max(0.0),
        harness_ns_per_decision: harness.best_ns_per_decision,
    })
}

/// [`sched_cost`] for each number of runnable tasks in `sizes`, in order.
pub fn sched_cost_sweep(
    scheduler: &str,
    cfg: &CostConfig,
    sizes: &[usize],
) -> Result<Vec<CostPoint>, SimError> {
    sizes
        .iter()
        .map(|&n| sched_cost(scheduler, cfg, n))
        .collect()
}

fn check_cost_config(cfg: &CostConfig, nr_runnable: usize) -> Result<(), SimError> {
    check_hz(cfg.hz)?;
    if !(1..=MAX_COST_TASKS).contains(&nr_runnable) {
        return Err(SimError::input(format!(
            "number of runnable tasks: expected 1..={MAX_COST_TASKS}, got {nr_runnable}"
        )));
    }
    if cfg.decisions == 0 {
        return Err(SimError::input("decisions: expected at least 1, got 0"));
    }
    if cfg.cpus == 0 || cfg.cpus > MAX_CPUS {
        return Err(SimError::input(format!(
            "cpus: expected 1..={MAX_CPUS}, got {}",
            cfg.cpus
        )));
    }
    Ok(())
}

/// What one harness run measured.
#[derive(Default)]
struct Measured {
    work_units: u64,
    best_ns_per_decision: f64,
}

struct CostRun<'a> {
    cfg: &'a CostConfig,
    /// The policy's tunables (none for the harness baseline).
    params: &'a [(String, String)],
    nr_runnable: usize,
}

impl PolicyVisitor for CostRun<'_> {
    type Out = Result<Measured, SimError>;

    fn visit<S: Scheduler>(self, mut policy: S) -> Self::Out {
        let name = policy.info().name;
        for (k, v) in self.params {
            policy
                .set_param(k, v)
                .map_err(|e| SimError::input(format!("{name}: --param {k}={v}: {e}")))?;
        }
        policy
            .accepts(&self.cfg.class.attrs(0))
            .map_err(|e| SimError::input(format!("{name}: {e}")))?;
        let mut h = Harness::new(policy, self.cfg, self.nr_runnable)?;
        let warm = (self.cfg.decisions / 4).max(1);
        for _ in 0..warm {
            h.decision(true)?;
        }
        let measured = h.measure(self.cfg.decisions)?;
        h.check().map_err(|m| SimError {
            message: format!("{name} with {} runnable tasks: {m}", self.nr_runnable),
            bad_input: false,
        })?;
        Ok(measured)
    }
}

/// Drives one policy through decisions with the scheduler core ([`SchedCore`], the same
/// protocol implementation the engine runs), with tasks that only compute.
struct Harness<S: Scheduler> {
    core: SchedCore<S>,
    /// Blocked tasks, longest asleep first.
    sleepers: VecDeque<TaskId>,
    nr_runnable: usize,
    /// Decisions made so far (CPU `k % cpus` makes the `k`-th).
    k: u64,
}

impl<S: Scheduler> Harness<S> {
    fn new(policy: S, cfg: &CostConfig, nr_runnable: usize) -> Result<Self, SimError> {
        let mut h = Harness {
            core: SchedCore::bare(policy, cfg.cpus, cfg.hz),
            sleepers: VecDeque::with_capacity(SLEEPERS + 1),
            nr_runnable,
            k: 0,
        };
        h.start(cfg.class, nr_runnable + SLEEPERS)?;
        // Put SLEEPERS tasks to sleep the way tasks fall asleep: the current task blocks.
        let guard = 4 * (SLEEPERS as u64 + 1) * cfg.cpus as u64;
        while h.sleepers.len() < SLEEPERS && h.k < guard {
            h.decision(false)?;
        }
        if h.sleepers.len() < SLEEPERS {
            return Err(SimError {
                message: "the policy left every CPU idle with runnable tasks queued".into(),
                bad_input: false,
            });
        }
        Ok(h)
    }

    /// Create `n` tasks and wake them as the engine's start-up does, then let every CPU
    /// pick.
    fn start(&mut self, class: CostClass, n: usize) -> Result<(), SimError> {
        let all = CpuMask::first_n(self.core.ctx.nr_cpus());
        for i in 0..n {
            let t = self.core.spawn(class.attrs(i), all, None);
            self.core.wake_up_new_task(t, None).map_err(engine_error)?;
        }
        for c in 0..self.core.ctx.nr_cpus() {
            self.core.schedule(CpuId(c as u32));
        }
        self.core.clear_resched();
        Ok(())
    }

    /// One decision (see [`sched_cost`]); `wake`: a blocking task wakes a sleeper (the
    /// steady state) or not (set-up).
    fn decision(&mut self, wake: bool) -> Result<(), SimError> {
        let nr_cpus = self.core.ctx.nr_cpus() as u64;
        let c = (self.k % nr_cpus) as usize;
        let blocks = (self.k / nr_cpus).is_multiple_of(2);
        self.k += 1;
        let cpu = CpuId(c as u32);
        if c == 0 {
            let next = self.core.ctx.now() + self.core.ctx.tick_ns();
            self.advance(next);
        }
        if self.core.ctx.curr(cpu).is_some() {
            self.core.tick(cpu);
            if blocks {
                if wake {
                    if let Some(t) = self.sleepers.pop_front() {
                        self.core
                            .try_to_wake_up(t, Some(cpu), false)
                            .map_err(engine_error)?;
                    }
                }
                let t = self.core.block(cpu, PrevState::Sleeping);
                self.sleepers.push_back(t);
            }
        }
        self.core.schedule(cpu);
        self.core.clear_resched();
        Ok(())
    }

    /// Fire the policy timers due by `to`, then set the clock to `to`. Tick events are
    /// dropped: every decision ticks its CPU itself.
    fn advance(&mut self, to: u64) {
        while self.core.ctx.events.peek_time().is_some_and(|t| t <= to) {
            let ev = self.core.ctx.events.pop().expect("peeked");
            self.core.set_now(ev.time.max(self.core.ctx.now()));
            if let EventKind::PolicyTimer { .. } = ev.kind {
                self.core.handle_event(ev.kind);
            }
        }
        self.core.set_now(to);
    }

    /// Run `decisions` steady-state decisions: counted work over all of them, wall time
    /// per decision of the fastest of [`CHUNKS`] chunks.
    fn measure(&mut self, decisions: u64) -> Result<Measured, SimError> {
        let work0 = self.core.ctx.work_units;
        let mut best = f64::INFINITY;
        let mut done = 0;
        for i in 0..CHUNKS {
            let n = decisions * (i + 1) / CHUNKS - done;
            if n == 0 {
                continue;
            }
            let t = Instant::now();
            for _ in 0..n {
                self.decision(true)?;
            }
            best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
            done += n;
        }
        Ok(Measured {
            work_units: self.core.ctx.work_units - work0,
            best_ns_per_decision: best,
        })
    }

    /// Every runnable task is queued (by `for_each_queued`) or current, on its own CPU,
    /// and there are `nr_runnable` of them.
    fn check(&self) -> Result<(), String> {
        let ctx = &self.core.ctx;
        let mut seen = vec![false; ctx.nr_tasks()];
        let mut bad = None;
        self.core.policy.for_each_queued(&mut |cpu, t| {
            let v = &ctx.tasks[t.idx()];
            if !v.on_rq || v.cpu != cpu || seen[t.idx()] {
                bad.get_or_insert(format!(
                    "{t:?} queued on {cpu:?} but not runnable there, or queued twice"
                ));
            }
            seen[t.idx()] = true;
        });
        if let Some(m) = bad {
            return Err(m);
        }
        for c in &ctx.cpus {
            if let Some(t) = c.curr {
                seen[t.idx()] |= ctx.tasks[t.idx()].on_rq;
            }
        }
        let held = seen.iter().filter(|&&s| s).count();
        let runnable = ctx.tasks.iter().filter(|v| v.on_rq).count();
        if held != runnable || runnable != self.nr_runnable {
            return Err(format!(
                "{runnable} tasks runnable, {held} held by the policy, {} expected",
                self.nr_runnable
            ));
        }
        Ok(())
    }
}

/// A protocol violation by the measured policy.
fn engine_error(message: String) -> SimError {
    SimError {
        message,
        bad_input: false,
    }
}

/// The harness's yardstick: a per-CPU ring (push at the tail, pop at the head), O(1) in
/// every hook, counting no work. Timing it gives the harness's own cost per decision.
struct RingBaseline {
    rings: Vec<VecDeque<TaskId>>,
}

impl RingBaseline {
    fn new(nr_cpus: usize) -> Self {
        RingBaseline {
            rings: vec![VecDeque::new(); nr_cpus],
        }
    }
}

impl Scheduler for RingBaseline {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "ring-baseline",
            summary: "per-CPU ring, O(1) hooks: the cost harness's yardstick",
            source: "none (measurement harness)",
            params: Vec::new(),
        }
    }

    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        if !ctx.task(t).running {
            self.rings[cpu.idx()].push_back(t);
        }
    }

    /// Only the running task (never in a ring) is dequeued by the harness.
    fn dequeue(&mut self, _ctx: &mut Ctx, _cpu: CpuId, _t: TaskId, _kind: DequeueKind) {}

    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if ctx.task(t).on_rq {
            self.rings[cpu.idx()].push_back(t);
        }
    }

    fn pick_next(&mut self, _ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        self.rings[cpu.idx()].pop_front()
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, ring) in self.rings.iter().enumerate() {
            for &t in ring {
                f(CpuId(c as u32), t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::{Hook, Observed, Observer};

    /// v8 `task_timeslice` at HZ 1000 (MIN_TIMESLICE = 1 jiffy): base = 41 / (delta + 2),
    /// slice = base · ((idx − 100) + 8) / 8, at least one jiffy.
    #[test]
    fn nicksched_slice_against_dprio_follows_v8() {
        let t = nicksched_dprio_timeslices(1000).unwrap();
        let at = |best: i32, prio: i32| {
            let row = &t.iter().find(|r| r.0 == best).unwrap().1;
            row.iter().find(|x| x.0 == prio).unwrap().1 / 1_000_000
        };
        assert_eq!(at(100, 100), 20); // 41/2 = 20, ·8/8
        assert_eq!(at(100, 139), 1); // 41/41 = 1
        assert_eq!(at(100, 110), 3); // 41/12 = 3
        assert_eq!(at(120, 120), 70); // 20 · (20 + 8) / 8
        assert_eq!(at(130, 139), 14); // 41/11 = 3, 3 · (30 + 8) / 8
        assert_eq!(t.len(), NICKSCHED_BEST_PRIOS.len());
        assert!(t
            .iter()
            .all(|(b, row)| row.first().unwrap().0 == *b && row.last().unwrap().0 == 139));
        assert!(nicksched_dprio_timeslices(200).is_err());
    }

    fn ms(v: u64) -> Option<u64> {
        Some(v * 1_000_000)
    }

    #[test]
    fn o1_matches_task_timeslice() {
        // Pinned in tests/linux_o1.rs and linux_o1.rs `worked_timeslices` (jiffies → ns).
        let t = timeslice_table("linux-o1", 1000).unwrap();
        assert_eq!(t.len(), 40);
        let at = |n: i32| t.iter().find(|x| x.0 == n).unwrap().1;
        for (nice, v) in [
            (-20, 800),
            (-10, 600),
            (-1, 420),
            (0, 100),
            (5, 75),
            (10, 50),
            (15, 25),
            (19, 5),
        ] {
            assert_eq!(at(nice), ms(v), "HZ 1000 nice {nice}");
        }
        // HZ 100: 139 → 1 jiffy, 120 → 10, 100 → 80 (tests/linux_o1.rs).
        let t = timeslice_table("linux-o1", 100).unwrap();
        let at = |n: i32| t.iter().find(|x| x.0 == n).unwrap().1;
        assert_eq!(at(19), ms(10));
        assert_eq!(at(0), ms(100));
        assert_eq!(at(-20), ms(800));
        // HZ 250: nice 10 → 12 jiffies = 48 ms (the load_weight_nice0 test's slice).
        let t = timeslice_table("linux-o1", 250).unwrap();
        assert_eq!(t.iter().find(|x| x.0 == 10).unwrap().1, ms(48));
    }

    #[test]
    fn other_policies() {
        for fair in ["linux-cfs", "linux-eevdf"] {
            assert!(timeslice_table(fair, 1000)
                .unwrap()
                .iter()
                .all(|x| x.1.is_none()));
        }
        // BFS/MuQSS: rr_interval 6 ms as MS_TO_US(6) µs, whatever the nice.
        for vd in ["bfs", "muqss"] {
            let t = timeslice_table(vd, 1000).unwrap();
            assert!(t.iter().all(|x| x.1 == Some((6u64 << 10) * 1000)), "{vd}");
        }
        // Staircase at HZ 1000: RR_INTERVAL = 6 jiffies; nice 0 slice = 20 stairs.
        let t = timeslice_table("staircase", 1000).unwrap();
        assert_eq!(t.iter().find(|x| x.0 == 0).unwrap().1, ms(6 * 20));
        assert_eq!(t.iter().find(|x| x.0 == 19).unwrap().1, ms(6));
    }

    /// SCHED_RR gets `RR_TIMESLICE` (100 ms) from linux-rt under linux-cfs/eevdf and from
    /// `task_timeslice` at nice 0 under O(1); SCHED_FIFO has no slice anywhere.
    #[test]
    fn rt_policies() {
        struct Ask(SchedAttrs, u32);
        impl PolicyVisitor for Ask {
            type Out = Option<u64>;
            fn visit<S: Scheduler>(self, policy: S) -> Option<u64> {
                policy.timeslice_ns(&self.0, self.1)
            }
        }
        let rt = |policy| SchedAttrs {
            policy,
            rt_priority: 10,
            nice: 0,
            dl: None,
            slice_ns: None,
        };
        for name in ["linux-cfs", "linux-eevdf", "linux-o1"] {
            for hz in [100, 250, 1000] {
                let rr = cpu::construct(name, 1, Ask(rt(Policy::Rr), hz)).unwrap();
                assert_eq!(rr, ms(100), "{name} HZ {hz}");
                let fifo = cpu::construct(name, 1, Ask(rt(Policy::Fifo), hz)).unwrap();
                assert_eq!(fifo, None, "{name} HZ {hz}");
            }
        }
    }

    #[test]
    fn bad_input() {
        let e = timeslice_table("nope", 1000).unwrap_err();
        assert!(e.bad_input && e.message.contains("unknown scheduler"));
        let e = timeslice_table("linux-o1", 123).unwrap_err();
        assert!(e.bad_input && e.message.contains("hz"));
    }

    /// Sees every hook the cost harness has the core call on the ring policy
    /// (`Observed`), and checks the calling protocol of sched.rs there: flags set as the
    /// engine sets them, `put_prev` with the task still current, and exactly N runnable
    /// tasks at every pick of the steady state.
    #[derive(Default)]
    struct Probe {
        expect_runnable: Option<usize>,
        picks: u64,
        broken: Vec<String>,
    }

    impl Observer<RingBaseline> for Probe {
        fn before(&mut self, hook: Hook, _ring: &RingBaseline, ctx: &Ctx) {
            let problem = match hook {
                Hook::Enqueue(cpu, t, _) if !ctx.task(t).on_rq || ctx.task(t).cpu != cpu => {
                    Some(format!("enqueue {t:?}: on_rq unset or on another CPU"))
                }
                Hook::Dequeue(cpu, t, kind)
                    if ctx.task(t).on_rq
                        || ctx.curr(cpu) != Some(t)
                        || kind != DequeueKind::Sleep =>
                {
                    Some(format!("dequeue {t:?}: not the blocking current task"))
                }
                Hook::PutPrev(cpu, t) if ctx.curr(cpu) != Some(t) || !ctx.task(t).running => {
                    Some(format!("put_prev {t:?}: not current"))
                }
                Hook::PickNext(_) => {
                    self.picks += 1;
                    let runnable = (0..ctx.nr_tasks())
                        .filter(|&i| ctx.task(TaskId(i as u32)).on_rq)
                        .count();
                    self.expect_runnable
                        .filter(|&n| n != runnable)
                        .map(|n| format!("pick with {runnable} runnable, not {n}"))
                }
                _ => None,
            };
            self.broken.extend(problem);
        }
    }

    #[test]
    fn harness_keeps_the_engine_protocol_and_n_runnable() {
        for (cpus, n) in [(1, 1), (1, 7), (2, 1), (3, 50)] {
            let cfg = CostConfig {
                cpus,
                ..Default::default()
            };
            let probe = Observed::new(RingBaseline::new(cpus), Probe::default());
            let mut h = Harness::new(probe, &cfg, n).unwrap();
            assert_eq!(h.sleepers.len(), SLEEPERS);
            h.core.policy.observer.expect_runnable = Some(n);
            let before = h.core.policy.observer.picks;
            h.measure(200).unwrap();
            // One pick per decision; a CPU left idle (N < CPUs, or the ring's lack of
            // balancing drained it) picks again after its newidle balance.
            let picks = h.core.policy.observer.picks - before;
            if cpus == 1 {
                assert_eq!(picks, 200, "{cpus} CPUs, N={n}");
            } else {
                assert!((200..=400).contains(&picks), "{cpus} CPUs, N={n}: {picks}");
            }
            let broken = &h.core.policy.observer.broken;
            assert!(broken.is_empty(), "{:?}", &broken[..1]);
            h.check().unwrap();
            // Every other round blocks: the sleepers rotate through the runnable set.
            assert!(h.core.ctx.tasks.iter().all(|v| v.sum_exec_ns > 0) || n > 7);
        }
    }
}

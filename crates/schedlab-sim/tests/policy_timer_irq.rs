//! A policy timer's expiry is an interrupt, through the real engine: it charges
//! `kernel.timer_irq_ns` to the task running on the CPU where it fires, and the scheduler
//! work its callback counts is paid in that interrupt (`machine.sched_work_ps`), not at the
//! CPU's next context switch — a CPU running one task for ever never switches. A reschedule
//! the callback asks for takes effect at the interrupt's end.
//!
//! The probe policy is a one-CPU FIFO whose only hrtimer fires every `PERIOD` from the first
//! task's creation, counts `WORK` units of scheduler work and (when told to) asks its CPU to
//! reschedule.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use schedlab_sim::sched::{DequeueKind, EnqueueKind, FiredTimer, PolicyInfo, Scheduler};
use schedlab_sim::types::{CpuId, TaskId};
use schedlab_sim::{Ctx, SimConfig};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const PERIOD: u64 = MS;
const WORK: u64 = 5_000;

/// Expiry times the probe saw.
type Log = Rc<RefCell<Vec<u64>>>;

struct PeriodicTimer {
    queue: VecDeque<TaskId>,
    armed: bool,
    /// Tasks created and not exited: the timer stops once none is left, so the run ends.
    live: usize,
    resched: bool,
    log: Log,
}

impl PeriodicTimer {
    fn new(resched: bool, log: &Log) -> Self {
        PeriodicTimer {
            queue: VecDeque::new(),
            armed: false,
            live: 0,
            resched,
            log: log.clone(),
        }
    }
}

impl Scheduler for PeriodicTimer {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "periodic-timer-probe",
            summary: "FIFO with a periodic hrtimer that counts work",
            source: "none (test)",
            params: Vec::new(),
        }
    }

    fn task_new(&mut self, ctx: &mut Ctx, _t: TaskId, _parent: Option<TaskId>) {
        self.live += 1;
        if !self.armed {
            self.armed = true;
            let at = ctx.now() + PERIOD;
            ctx.arm_timer(at, 0);
        }
    }

    fn task_exit(&mut self, _ctx: &mut Ctx, _t: TaskId) {
        self.live -= 1;
    }

    fn enqueue(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        self.queue.push_back(t);
    }

    fn dequeue(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        self.queue.retain(|&q| q != t);
    }

    /// A task preempted by the timer's reschedule goes to the back (round robin).
    fn put_prev(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId) {
        if ctx.task(t).on_rq {
            self.queue.push_back(t);
        }
    }

    fn pick_next(&mut self, _ctx: &mut Ctx, _cpu: CpuId) -> Option<TaskId> {
        self.queue.pop_front()
    }

    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        self.log.borrow_mut().push(ctx.now());
        ctx.count_work(WORK);
        if self.resched {
            ctx.resched(timer.cpu);
        }
        if self.live > 0 {
            let at = ctx.now() + PERIOD;
            ctx.arm_timer(at, 0);
        }
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for &t in &self.queue {
            f(CpuId(0), t);
        }
    }
}

/// One task that runs `run_ns` then exits, on one CPU, with `machine` merged into the spec's
/// machine; the result and the expiries the probe saw.
fn busy_task(run_ns: u64, machine: &str, resched: bool) -> (serde_json::Value, Vec<u64>) {
    let tasks = format!(r#""hog": {{"loop": 1, "run": {}}}"#, run_ns / US);
    simulate(&tasks, machine, resched)
}

/// `tasks` (JSON members) on one CPU under the probe.
fn simulate(tasks: &str, machine: &str, resched: bool) -> (serde_json::Value, Vec<u64>) {
    let text = format!(
        r#"{{
        "tasks": {{{tasks}}},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 100 {machine}}}}}
    }}"#
    );
    let spec = schedlab_spec::parse_spec(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let log: Log = Rc::default();
    let cfg = SimConfig {
        check: true,
        ..SimConfig::default()
    };
    let out = schedlab_sim::simulate_policy(&spec, &cfg, PeriodicTimer::new(resched, &log))
        .expect("the run succeeds");
    let expiries = log.borrow().clone();
    (out.json(), expiries)
}

fn makespan(r: &serde_json::Value) -> u64 {
    r["summary"]["makespan_ns"]
        .as_u64()
        .expect("the task exits")
}

/// Expiries at 1, 2, … ms while the task runs: each costs it `timer_irq_ns` + the callback's
/// work (5000 units × 2 ps = 10 ns), so 10 ms of work end after the 10th expiry (at 10 ms),
/// 10 × (20 µs + 10 ns) late.
#[test]
fn each_policy_timer_expiry_costs_the_running_task_its_interrupt_and_its_work() {
    let run = 10 * MS;
    let (free, _) = busy_task(run, "", false);
    assert_eq!(makespan(&free), run);
    for resched in [false, true] {
        let machine = r#", "sched_work_ps": 2, "kernel": {"timer_irq_ns": 20000}"#;
        let (r, expiries) = busy_task(run, machine, resched);
        let during: Vec<u64> = expiries
            .iter()
            .copied()
            .filter(|&t| t < makespan(&r))
            .collect();
        assert_eq!(during, (1..=10).map(|k| k * PERIOD).collect::<Vec<_>>());
        let per_expiry = 20 * US + WORK * 2 / 1000;
        assert_eq!(makespan(&r), run + 10 * per_expiry, "resched {resched}");
        // Paid as the task's time, not as switch overhead: the one task never switches.
        assert_eq!(r["cpus"][0]["overhead_ns"], 0);
        assert_eq!(r["tasks"][0]["cpu_ns"], run + 10 * per_expiry);
    }
}

/// Work alone (no expiry cost) is paid at once too, with the sub-ns remainder carried: 5000
/// units at 1001 ps are 5005 ns per expiry.
#[test]
fn a_callbacks_counted_work_is_paid_in_its_interrupt() {
    let (r, _) = busy_task(10 * MS, r#", "sched_work_ps": 1001"#, false);
    assert_eq!(makespan(&r), 10 * MS + 10 * 5_005);
    assert_eq!(r["cpus"][0]["overhead_ns"], 0);
}

/// Varying expiry costs: the run is deterministic and each expiry costs at least the minimum.
#[test]
fn varying_expiry_costs_are_drawn_once_per_expiry_and_deterministic() {
    let machine = r#", "kernel": {"timer_irq_ns":
        {"min_ns": 10000, "dist": "exponential", "mean_ns": 30000}}"#;
    let (a, _) = busy_task(10 * MS, machine, true);
    let (b, _) = busy_task(10 * MS, machine, true);
    assert_eq!(makespan(&a), makespan(&b));
    assert!(makespan(&a) >= 10 * MS + 10 * 10 * US);
    assert!(
        makespan(&a) > 10 * MS + 10 * 10 * US,
        "the spread adds something"
    );
}

/// With every cost 0 the expiries change nothing.
#[test]
fn free_expiries_change_nothing() {
    let (a, _) = busy_task(10 * MS, r#", "kernel": {"timer_irq_ns": 0}"#, true);
    assert_eq!(makespan(&a), 10 * MS);
    assert_eq!(a["tasks"][0]["switches_involuntary"], 0);
}

/// The callback's reschedule takes effect when the interrupt returns: `b` runs first and
/// sleeps until 0.5 ms, is queued behind `a` when its sleep ends, and runs when the
/// round-robin timer's interrupt at 1 ms is over, 20 µs later.
#[test]
fn the_callbacks_reschedule_waits_for_the_interrupts_end() {
    let tasks = r#""b": {"loop": 1, "sleep": 500, "run": 1000}, "a": {"loop": 1, "run": 5000}"#;
    let latency = |machine: &str| {
        let (r, _) = simulate(tasks, machine, true);
        let tasks = r["tasks"].as_array().unwrap();
        let b = tasks.iter().find(|t| t["name"] == "b").unwrap();
        assert_eq!(b["wakeup_latency_ns"]["count"], 1, "{b}");
        b["wakeup_latency_ns"]["max"].as_u64().unwrap()
    };
    assert_eq!(
        latency(r#", "kernel": {"timer_irq_ns": 20000}"#),
        PERIOD + 20 * US - 500 * US
    );
    assert_eq!(latency(""), PERIOD - 500 * US);
}

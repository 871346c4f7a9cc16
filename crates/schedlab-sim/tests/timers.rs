//! Policy timers and balance callbacks through the real engine: armed timers fire at their
//! expiry with the token they were armed with (all 64 bits), cancelled ones never fire,
//! each class of a stack receives only its own timers and callbacks, and callbacks run
//! after the context switch. Then the Linux RT class's push, which depends on them.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use schedlab_sim::cpu::stack::{SchedClass, StackMeta, Stacked};
use schedlab_sim::sched::{
    ClassSet, DequeueKind, EnqueueKind, FiredTimer, PolicyInfo, Scheduler, TimerId,
};
use schedlab_sim::types::{CpuId, Policy, SchedAttrs, TaskId};
use schedlab_sim::{Ctx, SimConfig};

const MS: u64 = 1_000_000;

/// What the probes saw, in order: (class name, what, time, detail).
type Log = Rc<RefCell<Vec<(&'static str, &'static str, u64, u64)>>>;

/// A one-queue-per-CPU FIFO class owning one policy. When a task of its own is created it
/// arms two timers with the same tokens as its neighbour class uses, and cancels one; every
/// pick queues a balance callback.
struct Probe {
    name: &'static str,
    policy: Policy,
    queues: Vec<VecDeque<TaskId>>,
    cancelled: Vec<TimerId>,
    picked: Vec<Option<TaskId>>,
    log: Log,
}

impl Probe {
    fn new(name: &'static str, policy: Policy, cpus: usize, log: Log) -> Probe {
        Probe {
            name,
            policy,
            queues: vec![VecDeque::new(); cpus],
            cancelled: Vec::new(),
            picked: vec![None; cpus],
            log,
        }
    }

    fn record(&self, what: &'static str, at: u64, detail: u64) {
        self.log.borrow_mut().push((self.name, what, at, detail));
    }
}

impl Scheduler for Probe {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: self.name,
            summary: "timer probe",
            source: "none (test)",
            params: Vec::new(),
        }
    }

    fn task_new(&mut self, ctx: &mut Ctx, _t: TaskId, _parent: Option<TaskId>) {
        let now = ctx.now();
        ctx.arm_timer(now + MS, u64::MAX);
        let doomed = ctx.arm_timer(now + 2 * MS, 0x5254_5055_0000_0001);
        ctx.arm_timer(now + 3 * MS, 0x5254_5055_0000_0001);
        assert!(ctx.cancel_timer(doomed));
        assert!(!ctx.cancel_timer(doomed), "a timer is cancelled once");
        self.cancelled.push(doomed);
    }

    fn enqueue(&mut self, _ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        if self.picked[cpu.idx()] != Some(t) {
            self.queues[cpu.idx()].push_back(t);
        }
    }

    fn dequeue(&mut self, _ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        self.queues[cpu.idx()].retain(|&q| q != t);
        if self.picked[cpu.idx()] == Some(t) {
            self.picked[cpu.idx()] = None;
        }
    }

    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.picked[cpu.idx()] == Some(t) {
            self.picked[cpu.idx()] = None;
            if ctx.task(t).on_rq {
                self.queues[cpu.idx()].push_back(t);
            }
        }
    }

    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let t = self.queues[cpu.idx()].pop_front()?;
        self.picked[cpu.idx()] = Some(t);
        ctx.queue_balance_callback(cpu);
        Some(t)
    }

    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        assert!(
            !self.cancelled.contains(&timer.id),
            "a cancelled timer fired"
        );
        self.record("timer", ctx.now(), timer.token);
    }

    fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, _classes: ClassSet) {
        // After the switch: the task this class picked is the CPU's current task.
        let curr = ctx.curr(cpu).map_or(u64::MAX, |t| t.0 as u64);
        assert_eq!(
            Some(curr),
            self.picked[cpu.idx()].map(|t| t.0 as u64),
            "callback before the switch"
        );
        self.record("callback", ctx.now(), curr);
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, q) in self.queues.iter().enumerate() {
            for &t in q {
                f(CpuId(c as u32), t);
            }
        }
    }
}

impl SchedClass for Probe {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        attrs.policy == self.policy
    }

    fn has_queued(&self, cpu: CpuId) -> bool {
        !self.queues[cpu.idx()].is_empty() || self.picked[cpu.idx()].is_some()
    }
}

fn probe_stack(log: &Log) -> Stacked<Probe, Stacked<Probe, Probe>> {
    let meta = StackMeta {
        name: "probe-stack",
        summary: "three timer probes",
        source: "none (test)",
    };
    let rt = Probe::new("rt", Policy::Fifo, 1, log.clone());
    let fair = Probe::new("fair", Policy::Other, 1, log.clone());
    let idle = Probe::new("idle", Policy::Idle, 1, log.clone());
    Stacked::new(rt, Stacked::new(fair, idle, meta), meta)
}

#[test]
fn timers_fire_once_with_their_full_token_in_their_own_class() {
    let text = r#"{
        "tasks": {
            "f": {"policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 5000},
            "o": {"policy": "SCHED_OTHER", "loop": 1, "delay": 500, "run": 5000},
            "i": {"policy": "SCHED_IDLE", "loop": 1, "delay": 700, "run": 5000}
        },
        "schedlab": {"machine": {"cpus": 1}}
    }"#;
    let spec = schedlab_spec::parse_spec(text).unwrap();
    let log: Log = Rc::default();
    let cfg = SimConfig {
        check: true,
        ..SimConfig::default()
    };
    schedlab_sim::simulate_policy(&spec, &cfg, probe_stack(&log)).expect("the run succeeds");
    let log = log.borrow();
    let timers = |class: &str| -> Vec<(u64, u64)> {
        log.iter()
            .filter(|e| e.0 == class && e.1 == "timer")
            .map(|e| (e.2, e.3))
            .collect()
    };
    // Every class armed the same tokens when its task was created (all at start-up, time
    // 0); each receives exactly its own two, at their expiry, and never the cancelled one.
    let tag = 0x5254_5055_0000_0001;
    for class in ["rt", "fair", "idle"] {
        assert_eq!(
            timers(class),
            vec![(MS, u64::MAX), (3 * MS, tag)],
            "{class}"
        );
    }
    // Callbacks: one per pick, to the class that picked (RT first, then fair, then idle).
    let callbacks: Vec<&str> = log
        .iter()
        .filter(|e| e.1 == "callback")
        .map(|e| e.0)
        .collect();
    assert_eq!(callbacks, vec!["rt", "fair", "idle"]);
}

/// 2 CPUs: a SCHED_OTHER hog pinned to CPU 1, a FIFO 10 task running on CPU 0, and a FIFO
/// 20 task pinned to CPU 0 that wakes at 5 ms and runs 20 ms. Linux pushes the preempted
/// FIFO 10 task to CPU 1 at once (`set_next_task_rt` → `rt_queue_push_tasks` →
/// `push_rt_tasks` after the switch: CPU 1 runs only CFS work), so it never waits.
#[test]
fn a_preempted_rt_task_is_pushed_to_a_cpu_running_a_lower_class() {
    let text = r#"{
        "tasks": {
            "hog": {"loop": 1, "cpus": [1], "run": 60000},
            "fifo10": {"policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 20000},
            "fifo20": {"policy": "SCHED_FIFO", "priority": 20, "cpus": [0], "loop": 1,
                       "delay": 5000, "run": 20000}
        },
        "schedlab": {"machine": {"cpus": 2, "hz": 1000}}
    }"#;
    for scheduler in ["linux-cfs", "linux-eevdf"] {
        let cfg = SimConfig {
            scheduler: Some(scheduler.into()),
            check: true,
            ..SimConfig::default()
        };
        let out = schedlab_sim::simulate_text(text, &cfg).expect("the run succeeds");
        let json = out.json();
        let tasks = json["tasks"].as_array().unwrap();
        let fifo10 = tasks.iter().find(|t| t["name"] == "fifo10").unwrap();
        assert_eq!(
            fifo10["migrations"], 1,
            "{scheduler}: fifo10 was pushed once"
        );
        assert_eq!(fifo10["wait_ns"], 0, "{scheduler}: fifo10 never waited");
        let hog = tasks.iter().find(|t| t["name"] == "hog").unwrap();
        assert_eq!(
            hog["wait_ns"],
            15 * MS,
            "{scheduler}: the hog gave CPU 1 to fifo10 from 5 ms to 20 ms"
        );
    }
}

//! Spec builders shared by the simulator's integration tests (specs built in Rust, so
//! these tests do not depend on the JSON parser).
#![allow(dead_code)]

use schedlab_spec::model::*;

pub const US: u64 = 1_000;
pub const MS: u64 = 1_000_000;

pub fn attr(policy: Policy, priority: i32) -> SchedAttr {
    SchedAttr {
        policy,
        priority,
        dl: None,
    }
}

pub fn task(name: &str, attr: SchedAttr, loop_count: i64, events: Vec<Event>) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        instances: 1,
        loop_count,
        delay_ns: 0,
        attr,
        cpus: None,
        phases: vec![Phase {
            name: "p0".into(),
            loop_count: 1,
            events,
            attr: None,
            cpus: None,
        }],
        process: None,
    }
}

pub fn spec(cpus: u32, tasks: Vec<TaskSpec>, resources: Resources) -> Spec {
    Spec {
        duration_ns: None,
        tasks,
        resources,
        machine: Machine {
            cpus,
            ..Machine::default()
        },
        scheduler: SchedulerChoice::default(),
        headline: Headline::None,
        seed: None,
    }
}

/// A periodic task: each job waits for its timer then runs `c` (timer slot = index).
pub fn periodic(name: &str, slot: u32, c: u64, t: u64, prio: i32, jobs: i64) -> TaskSpec {
    task(
        name,
        attr(Policy::Fifo, prio),
        jobs,
        vec![
            Event::Timer {
                timer: slot,
                period_ns: t,
                mode: TimerMode::Absolute,
            },
            Event::Run { ns: c },
        ],
    )
}

pub fn timers(n: usize) -> Resources {
    Resources {
        timers: (0..n).map(|i| format!("t{i}")).collect(),
        ..Resources::default()
    }
}

pub fn run(spec: &Spec, scheduler: &str, check: bool) -> schedlab_sim::SimOutput {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(scheduler.into()),
        check,
        samples: true,
        ..Default::default()
    };
    schedlab_sim::simulate(spec, &cfg).unwrap_or_else(|e| panic!("{scheduler}: {e}"))
}

pub fn task_json<'a>(out: &'a schedlab_sim::SimOutput, name: &str) -> &'a serde_json::Value {
    out.result["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

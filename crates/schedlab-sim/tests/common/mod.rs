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
        slice_ns: None,
        uclamp: schedlab_spec::model::Uclamp::default(),
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
            group: None,
        }],
        process: None,
        group: schedlab_spec::model::ROOT_GROUP,
        ioprio: None,
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
        cgroups: vec![schedlab_spec::model::Cgroup::root()],
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
        samples: schedlab_sim::SampleOutput::Memory,
        ..Default::default()
    };
    schedlab_sim::simulate(spec, &cfg).unwrap_or_else(|e| panic!("{scheduler}: {e}"))
}

pub fn task_json(out: &schedlab_sim::SimOutput, name: &str) -> serde_json::Value {
    out.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
        .clone()
}

// ---------------------------------------------------------------- cross-policy helpers
// (added for random_workloads.rs and hackbench.rs)

/// Names of every policy the registry can run (`schedulers()` filtered by `available`).
pub fn available_schedulers() -> Vec<String> {
    schedlab_sim::schedulers()
        .into_iter()
        .filter(|e| e.available)
        .map(|e| e.info.name.to_string())
        .collect()
}

/// Run `spec` under `scheduler` with a fixed seed, samples on, and the invariant checker
/// on or off; the error is returned, not unwrapped.
pub fn try_run(
    spec: &Spec,
    scheduler: &str,
    seed: u64,
    check: bool,
) -> Result<schedlab_sim::SimOutput, schedlab_sim::SimError> {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(scheduler.into()),
        seed: Some(seed),
        check,
        samples: schedlab_sim::SampleOutput::Memory,
        ..Default::default()
    };
    schedlab_sim::simulate(spec, &cfg)
}

/// True when the error is the policy refusing a task's attributes before the run starts
/// (`Scheduler::accepts`, reported as bad input at the task's JSON path: `$.tasks.<name>`).
pub fn is_rejected_attrs(e: &schedlab_sim::SimError) -> bool {
    e.bad_input && e.message.starts_with("$.tasks.")
}

/// The result JSON with the only non-deterministic field (`run.wall_s`) zeroed, as text.
pub fn result_bytes(out: &schedlab_sim::SimOutput) -> String {
    let mut r = out.json();
    r["run"]["wall_s"] = serde_json::json!(0);
    r.to_string()
}

fn u(v: &serde_json::Value, what: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("{what} is not an unsigned integer: {v}"))
}

/// Accounting properties every result must have, finished or not:
/// - every task's cpu_ns + wait_ns + sleep_ns <= run.sim_ns;
/// - Σ CPU busy_ns == Σ task cpu_ns + Σ CPU overhead_ns;
/// - per CPU busy_ns + idle_ns == run.sim_ns;
/// - one sample per activation (Σ activations == samples.len()), and every sample is
///   ordered release <= wake <= start <= end where set;
/// - for a finished workload (summary.makespan_ns set): every task's activations equal
///   its number of response samples, and nothing is blocked at the end.
pub fn check_accounting(out: &schedlab_sim::SimOutput) -> Result<(), String> {
    check_accounting_lenient(out, false)
}

/// [`check_accounting`], optionally tolerating a sample whose wake time is after its start
/// (the engine bug shown by random_workloads.rs
/// `bug_ttwu_runnable_wakeup_leaves_wake_time_unset`).
pub fn check_accounting_lenient(
    out: &schedlab_sim::SimOutput,
    allow_wake_after_start: bool,
) -> Result<(), String> {
    let r = &out.json();
    let sim = u(&r["run"]["sim_ns"], "run.sim_ns")?;
    let tasks = r["tasks"].as_array().ok_or("no tasks array")?;
    let mut cpu_sum = 0u64;
    let mut act_sum = 0u64;
    let finished = !r["summary"]["makespan_ns"].is_null();
    for t in tasks {
        let name = t["name"].as_str().unwrap_or("?");
        let cpu = u(&t["cpu_ns"], "cpu_ns")?;
        let wait = u(&t["wait_ns"], "wait_ns")?;
        let sleep = u(&t["sleep_ns"], "sleep_ns")?;
        if cpu + wait + sleep > sim {
            return Err(format!(
                "task {name}: cpu_ns {cpu} + wait_ns {wait} + sleep_ns {sleep} = {} > sim_ns {sim}",
                cpu + wait + sleep
            ));
        }
        cpu_sum += cpu;
        let acts = u(&t["activations"], "activations")?;
        act_sum += acts;
        if finished {
            let resp = u(&t["response_ns"]["count"], "response_ns.count")?;
            if acts != resp {
                return Err(format!(
                    "task {name}: finished workload but activations {acts} != response samples {resp}"
                ));
            }
        }
    }
    let cpus = r["cpus"].as_array().ok_or("no cpus array")?;
    let (mut busy_sum, mut ov_sum) = (0u64, 0u64);
    for c in cpus {
        let busy = u(&c["busy_ns"], "busy_ns")?;
        let idle = u(&c["idle_ns"], "idle_ns")?;
        let ov = u(&c["overhead_ns"], "overhead_ns")?;
        if busy + idle != sim {
            return Err(format!(
                "cpu {}: busy_ns {busy} + idle_ns {idle} != sim_ns {sim}",
                c["cpu"]
            ));
        }
        busy_sum += busy;
        ov_sum += ov;
    }
    if busy_sum != cpu_sum + ov_sum {
        return Err(format!(
            "Σ busy_ns {busy_sum} != Σ task cpu_ns {cpu_sum} + Σ overhead_ns {ov_sum}"
        ));
    }
    let s = &out.samples;
    if s.len() as u64 != act_sum {
        return Err(format!("{} samples but Σ activations = {act_sum}", s.len()));
    }
    for i in 0..s.len() {
        let (rel, wake, start, end) = (s.release_ns[i], s.wake_ns[i], s.start_ns[i], s.end_ns[i]);
        let bad = wake < rel
            || (start >= 0 && (start as u64) < wake && !allow_wake_after_start)
            || (start >= 0 && (start as u64) < rel)
            || (end >= 0 && (end as u64) < wake)
            || (end >= 0 && start >= 0 && end < start);
        if bad {
            return Err(format!(
                "sample {i} of tid {} out of order: release {rel} wake {wake} start {start} end {end} (kind {})",
                s.tid[i], s.kind[i]
            ));
        }
    }
    if finished && r["summary"]["blocked_at_end"] != 0 {
        return Err(format!(
            "makespan set but blocked_at_end = {}",
            r["summary"]["blocked_at_end"]
        ));
    }
    let sum = |keys: &[&str]| -> u64 {
        tasks
            .iter()
            .flat_map(|t| keys.iter().map(move |k| t[*k].as_u64().unwrap_or(0)))
            .sum()
    };
    let totals = &r["summary"]["totals"];
    for (key, fields) in [
        (
            "switches",
            &["switches_voluntary", "switches_involuntary"][..],
        ),
        ("migrations", &["migrations"][..]),
        ("deadline_misses", &["deadline_misses"][..]),
        ("activations", &["activations"][..]),
    ] {
        if totals[key].as_u64() != Some(sum(fields)) {
            return Err(format!(
                "summary.totals.{key} = {} is not the tasks' sum",
                totals[key]
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- spec text runs, JSON results

/// Run a spec's text under `scheduler` with these tunables, for `duration_ns` (the
/// spec's duration when `None`), with the invariant checker on: the result as JSON, or
/// the error's text.
pub fn run_text(
    text: &str,
    scheduler: &str,
    params: &[(&str, &str)],
    duration_ns: Option<u64>,
) -> Result<serde_json::Value, String> {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(scheduler.into()),
        duration_ns,
        check: true,
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    };
    schedlab_sim::simulate_text(text, &cfg)
        .map(|o| o.json())
        .map_err(|e| e.to_string())
}

/// The task named `name` (an instance name as the result gives it) in the JSON result `r`.
pub fn task_in<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

/// CPU time of the task named `name` in the JSON result `r`.
pub fn cpu_ns_in(r: &serde_json::Value, name: &str) -> u64 {
    task_in(r, name)["cpu_ns"].as_u64().unwrap()
}

/// The length of a tick of the run that gave the JSON result `r`.
pub fn tick_ns_of(r: &serde_json::Value) -> u64 {
    1_000_000_000 / r["run"]["hz"].as_u64().expect("run.hz")
}

/// A block-I/O spec run under `linux-cfs` with samples kept and `--check` on, its ftrace
/// text written to `trace` if given: the run every I/O test file makes.
pub fn run_io(text: &str, trace: Option<std::path::PathBuf>) -> serde_json::Value {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some("linux-cfs".into()),
        samples: schedlab_sim::SampleOutput::Memory,
        check: true,
        trace,
        ..Default::default()
    };
    schedlab_sim::simulate_text(text, &cfg)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .json()
}

/// The ftrace text of the `linux-cfs` run of `text` (`tag` names its scratch folder).
pub fn trace_of(text: &str, tag: &str) -> String {
    trace_under(text, tag, "linux-cfs")
}

/// The ftrace text of the run of `text` under `scheduler`, with the invariant checks on.
pub fn trace_under(text: &str, tag: &str, scheduler: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "schedlab-{tag}-{}-{:x}",
        std::process::id(),
        text.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.trace");
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(scheduler.into()),
        trace: Some(path.clone()),
        check: true,
        ..Default::default()
    };
    schedlab_sim::simulate_text(text, &cfg).unwrap_or_else(|e| panic!("{e}"));
    let trace = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    trace
}

//! A run that would hold more than its memory budget stops with a partial result that says
//! why, at the same event on every run: a fork bomb at its fork, a spec of too many
//! instances while they are created, samples kept in memory as they accumulate.

use schedlab_sim::budget::{SAMPLE_BYTES, TASK_BYTES};
use schedlab_sim::{SampleOutput, SimConfig};
use serde_json::Value;

const FORK_BOMB: &str = r#"{"global": {"duration": 1},
    "tasks": {"b": {"loop": -1, "run": 10, "fork": "b"}},
    "schedlab": {"machine": {"cpus": 2}}}"#;

fn run(spec: &str, budget: u64, samples: SampleOutput) -> Value {
    let cfg = SimConfig {
        scheduler: Some("linux-cfs".into()),
        memory_budget: Some(budget),
        samples,
        ..SimConfig::default()
    };
    let mut r = schedlab_sim::simulate_text(spec, &cfg)
        .expect("a run over its budget still returns its partial result")
        .json();
    r["run"]["wall_s"] = Value::Null;
    r
}

fn stopped(r: &Value) -> &str {
    r["run"]["stopped"]
        .as_str()
        .expect("the result says why it stopped")
}

#[test]
fn a_fork_bomb_stops_at_the_fork_that_would_exceed_the_budget() {
    let budget = 4 << 20;
    let r = run(FORK_BOMB, budget, SampleOutput::Summary);
    let tasks = r["tasks"].as_array().unwrap().len() as u64;
    assert_eq!(
        tasks,
        budget / TASK_BYTES,
        "every task that fits, and no more"
    );
    let why = stopped(&r);
    assert!(why.contains("memory budget of 4.0 MiB"), "{why}");
    assert!(why.contains("--memory-budget"), "{why}");
    assert!(
        r["run"]["sim_ns"].as_u64().unwrap() < 1_000_000_000,
        "it stopped before its end"
    );
    assert_eq!(
        r,
        run(FORK_BOMB, budget, SampleOutput::Summary),
        "and at the same point on a second run"
    );
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/spec.md"))
        .expect("docs/spec.md");
    assert!(
        doc.contains(why),
        "docs/spec.md shows the message as it reads: {why}"
    );
}

#[test]
fn too_many_instances_stop_while_they_are_created() {
    let spec = r#"{"global": {"duration": 1},
        "tasks": {"t": {"instance": 100000, "run": 1000, "sleep": 1000}}}"#;
    let r = run(spec, 1 << 20, SampleOutput::Summary);
    assert_eq!(
        r["tasks"].as_array().unwrap().len() as u64,
        (1 << 20) / TASK_BYTES
    );
    assert!(stopped(&r).contains("stopped at t=0 ns"), "{}", stopped(&r));
}

#[test]
fn samples_kept_in_memory_count_toward_the_budget() {
    let spec = r#"{"global": {"duration": 10},
        "tasks": {"t": {"run": 10, "timer": {"ref": "unique", "period": 100}}}}"#;
    let budget = TASK_BYTES + 20_000 * SAMPLE_BYTES;
    let r = run(spec, budget, SampleOutput::Memory);
    let why = stopped(&r);
    assert!(why.contains("--samples FILE"), "{why}");
    let kept = r["run"]["samples"]["count"].as_u64().unwrap();
    // The samples are counted every 65 536 events: at most that many late.
    assert!(
        (20_000..20_000 + 65_536).contains(&kept),
        "stopped within one check of the budget: {kept} samples"
    );
    // The same run keeping only histograms fits and runs to its end.
    let r = run(spec, budget, SampleOutput::Summary);
    assert!(r["run"]["stopped"].is_null());
    assert_eq!(r["run"]["sim_ns"], 10_000_000_000u64);
}

#[test]
fn a_run_within_its_budget_says_nothing() {
    let spec =
        r#"{"global": {"duration": 1}, "tasks": {"t": {"instance": 3, "run": 100, "sleep": 900}}}"#;
    let r = run(spec, u64::MAX, SampleOutput::Summary);
    assert!(r["run"]["stopped"].is_null());
    assert_eq!(r["run"]["sim_ns"], 1_000_000_000u64);
}

//! Spec features the parser accepts and this engine bounds, notes or refuses: each is run
//! through `simulate_text`, as a user's spec would be.

use schedlab_sim::{simulate_text, RunError, SimConfig};

fn run(text: &str) -> Result<schedlab_sim::SimOutput, RunError> {
    simulate_text(text, &SimConfig::default())
}

fn sim_error(text: &str) -> String {
    match run(text) {
        Err(RunError::Sim(e)) => e.message,
        other => panic!("expected a run error, got {other:?}"),
    }
}

#[test]
fn run_for_ever_is_cut_by_the_duration() {
    let out = run(r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1, "run": -1}}}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    // The burst never completes: the task runs until the run stops at one second.
    assert_eq!(out.json()["run"]["sim_ns"], 1_000_000_000u64);
    assert_eq!(out.json()["tasks"][0]["cpu_ns"], 1_000_000_000u64);
    assert!(out.json()["summary"]["makespan_ns"].is_null());
}

#[test]
fn cgroup_cfs_bandwidth_is_refused() {
    let m = sim_error(
        r#"{"tasks": {"t": {"loop": 1, "run": 10, "taskgroup": "/a"}},
            "schedlab": {"cgroups": {"/a": {"cpu.cfs_quota_us": 50000}}}}"#,
    );
    assert!(
        m.starts_with(
            "$.schedlab.cgroups[\"/a\"]: CFS bandwidth (cpu.cfs_*, cpu.max) is not simulated"
        ),
        "{m}"
    );
}

/// A custom slice (dl-runtime on a SCHED_OTHER task) runs under the default linux-cfs,
/// which models v5.4 where sched_runtime means nothing to a fair task, and the result
/// says it was ignored.
#[test]
fn a_custom_slice_under_linux_cfs_runs_with_a_note() {
    let out = run(r#"{"tasks": {"t": {"loop": 1, "run": 10, "dl-runtime": 3000}}}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let r = out.json();
    assert_eq!(r["run"]["scheduler"], "linux-cfs");
    let notes = r["run"]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0]
            .as_str()
            .unwrap()
            .starts_with("custom slices (dl-runtime on a fair-class task) are ignored: linux-cfs models Linux v5.4"),
        "{notes:?}"
    );
}

#[test]
fn a_topology_sizes_the_machine_and_cannot_be_resized() {
    let text = r#"{"tasks": {"t": {"loop": 1, "run": 10}},
            "schedlab": {"machine": {"topology": {"cores": 2, "threads": 2}}}}"#;
    let out = run(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.json()["run"]["cpus"], 4);
    assert_eq!(out.json()["run"]["cpus_source"], "topology");
    let cfg = SimConfig {
        cpus: Some(8),
        ..SimConfig::default()
    };
    match simulate_text(text, &cfg) {
        Err(RunError::Sim(e)) => assert!(
            e.bad_input && e.message.contains("the spec's topology has 4 CPUs"),
            "{e}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn clamps_and_inferred_machines_run() {
    let out = run(
        r#"{"tasks": {"t": {"loop": 2, "run": 10, "sleep": 10, "cpus": [3],
                             "util_min": 128, "util_max": 512}}}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.json()["run"]["cpus"],
        4,
        "the machine is inferred from CPU 3"
    );
}

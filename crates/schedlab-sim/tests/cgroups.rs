//! Cgroups through the engine: a group's cpuset restricts its tasks' CPUs, settings no
//! class models yet are refused with a reason, and what has no effect, or what a policy
//! does not model, says so.

use schedlab_sim::SimConfig;

fn run(text: &str) -> Result<serde_json::Value, String> {
    let cfg = SimConfig {
        scheduler: Some("linux-cfs".into()),
        check: true,
        ..SimConfig::default()
    };
    schedlab_sim::simulate_text(text, &cfg)
        .map(|o| o.json())
        .map_err(|e| e.to_string())
}

#[test]
fn a_cpuset_keeps_its_tasks_on_its_cpus() {
    let r = run(r#"{
        "tasks": {
            "pinned": {"instance": 2, "loop": 1, "run": 10000, "taskgroup": "/a"},
            "free": {"policy": "SCHED_FIFO", "loop": 1, "delay": 1000, "run": 5000}
        },
        "schedlab": {"machine": {"cpus": 2}, "cgroups": {"/a": {"cpuset.cpus": "1"}}}
    }"#)
    .unwrap();
    // Both tasks of /a share CPU 1 (20 ms of work there); the RT task in / takes CPU 0.
    assert_eq!(r["cpus"][1]["busy_ns"], 20_000_000);
    assert_eq!(r["cpus"][0]["busy_ns"], 5_000_000);
    assert_eq!(r["summary"]["makespan_ns"], 20_000_000);
}

#[test]
fn a_task_asking_for_cpus_outside_its_cpuset_gets_the_cpuset() {
    let r = run(r#"{
        "tasks": {"t": {"loop": 1, "cpus": [0], "run": 1000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 2}, "cgroups": {"/a": {"cpuset.cpus": [1]}}}
    }"#);
    // The parser refuses a task whose cpus miss its group's cpuset entirely.
    let e = r.unwrap_err();
    assert!(e.contains("cpus"), "{e}");
}

#[test]
fn bandwidth_settings_are_refused() {
    let e = run(r#"{
        "tasks": {"t": {"loop": 1, "run": 1000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 50000}}}
    }"#)
    .unwrap_err();
    assert_eq!(
        e,
        "$.schedlab.cgroups[\"/a\"]: CFS bandwidth (cpu.cfs_*, cpu.max) is not simulated by this \
         engine yet"
    );
}

/// With every fair task in one group the group's entity is alone on the root run queue,
/// whatever its shares, so the tasks share the CPU among themselves as without groups and
/// each gets the same CPU time (the extra level only moves the fixed-point roundings of
/// the slices by a few ns, and so the interleaving and the makespan).
#[test]
fn fair_tasks_all_in_one_group_share_the_cpu_as_without_groups() {
    let grouped = run(r#"{
        "tasks": {"a": {"instance": 3, "loop": 5, "run": 3000, "sleep": 1000, "taskgroup": "/g"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/g": {"cpu.shares": 100}}}
    }"#)
    .unwrap();
    let flat = run(r#"{
        "tasks": {"a": {"instance": 3, "loop": 5, "run": 3000, "sleep": 1000}},
        "schedlab": {"machine": {"cpus": 1}}
    }"#)
    .unwrap();
    for (g, f) in grouped["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .zip(flat["tasks"].as_array().unwrap())
    {
        for key in ["cpu_ns", "sleep_ns", "activations"] {
            assert_eq!(g[key], f[key], "{key} of {}", g["name"]);
        }
    }
}

/// A policy without group scheduling runs the tasks as if there were no cgroups, and
/// says so.
#[test]
fn a_policy_without_group_scheduling_says_it_ignores_the_groups() {
    let cfg = SimConfig {
        scheduler: Some("linux-o1".into()),
        check: true,
        ..SimConfig::default()
    };
    let r = schedlab_sim::simulate_text(
        r#"{
        "tasks": {
            "a": {"loop": 1, "run": 1000, "taskgroup": "/a"},
            "b": {"loop": 1, "run": 1000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.shares": 512}}}
    }"#,
        &cfg,
    )
    .unwrap()
    .json();
    assert_eq!(
        r["run"]["notes"],
        serde_json::json!([
            "the cgroups' cpu.shares and the division of the CPU between groups of fair-class \
             tasks are ignored: linux-o1 has no fair group scheduling (CONFIG_FAIR_GROUP_SCHED)"
        ])
    );
}

#[test]
fn clamps_and_an_inferred_machine_are_stated_in_the_result() {
    let r = run(r#"{
        "tasks": {"t": {"loop": 1, "cpus": [2], "run": 1000, "util_min": 512}}
    }"#)
    .unwrap();
    assert_eq!(r["run"]["cpus"], 3);
    assert_eq!(r["run"]["cpus_source"], "inferred");
    let notes: Vec<&str> = r["run"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(notes
        .iter()
        .any(|n| n.contains("smallest machine that has them (3 CPUs)")));
    assert!(notes.iter().any(|n| n.starts_with("utilization clamps")));
}

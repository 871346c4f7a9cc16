//! Cgroups through the engine: a group's cpuset restricts its tasks' CPUs, settings no
//! class models yet are refused with a reason, and what has no effect says so.

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
fn settings_no_class_models_yet_are_refused() {
    let e = run(r#"{
        "tasks": {"t": {"loop": 1, "run": 1000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.shares": 512}}}
    }"#)
    .unwrap_err();
    assert!(
        e.contains("cgroup /a: cpu.shares") && e.ends_with("not simulated by this engine yet"),
        "{e}"
    );
    let e = run(r#"{
        "tasks": {
            "a": {"loop": 1, "run": 1000, "taskgroup": "/a"},
            "b": {"loop": 1, "run": 1000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1}}
    }"#)
    .unwrap_err();
    assert!(e.contains("CFS group scheduling"), "{e}");
}

#[test]
fn fair_tasks_all_in_one_group_run_as_without_groups() {
    let grouped = run(r#"{
        "tasks": {"a": {"instance": 3, "loop": 5, "run": 3000, "sleep": 1000, "taskgroup": "/g"}},
        "schedlab": {"machine": {"cpus": 1}}
    }"#)
    .unwrap();
    let flat = run(r#"{
        "tasks": {"a": {"instance": 3, "loop": 5, "run": 3000, "sleep": 1000}},
        "schedlab": {"machine": {"cpus": 1}}
    }"#)
    .unwrap();
    assert_eq!(grouped["tasks"], flat["tasks"]);
    assert_eq!(grouped["summary"], flat["summary"]);
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

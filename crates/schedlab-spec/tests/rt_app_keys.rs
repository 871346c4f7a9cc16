//! rt-app keys and workgen conventions the parser reads (bare suspend, repeated phases,
//! run -1, taskgroup, util_min/util_max, dl-runtime as a custom slice) and the machine
//! size inferred from the CPUs a spec names; each rule with its bad input.

use schedlab_spec::model::{CpusSource, Event, Policy, Uclamp, RUN_FOREVER};
use schedlab_spec::{parse_spec, Spec};

fn spec(text: &str) -> Spec {
    parse_spec(text).unwrap_or_else(|e| panic!("{e}"))
}

/// The error for `text`: (path, message).
fn err(text: &str) -> (String, String) {
    let e = parse_spec(text).expect_err("expected an error");
    (e.path, e.message)
}

fn assert_err(text: &str, path: &str, contains: &str) {
    let (p, m) = err(text);
    assert_eq!(p, path, "{m}");
    assert!(m.contains(contains), "{p}: {m}\nwanted: {contains}");
}

#[test]
fn a_bare_suspend_suspends_on_the_tasks_name() {
    let s = spec(
        r#"{"tasks": {"w": {"loop": 1, "run": 1, "suspend"},
                      "k": {"loop": 1, "phases": {"p": {"suspend", "resume": "w"}}}}}"#,
    );
    let w = s.resources.mutexes.iter().position(|m| m == "w").unwrap() as u32;
    let k = s.resources.mutexes.iter().position(|m| m == "k").unwrap() as u32;
    assert_eq!(s.tasks[0].phases[0].events[1], Event::Lock { mutex: w });
    assert_eq!(s.tasks[1].phases[0].events[0], Event::Lock { mutex: k });
}

#[test]
fn only_suspend_may_be_bare() {
    assert_err(
        r#"{"tasks": {"t": {"run", "sleep": 1}}}"#,
        "$.tasks.t.run",
        "has no value",
    );
    assert_err(
        r#"{"global": {"gnuplot"}, "tasks": {"t": {"run": 1}}}"#,
        "$.global.gnuplot",
        "only a bare \"suspend\"",
    );
    // A bare suspend at task level of a task with phases is an event in the wrong place.
    assert_err(
        r#"{"tasks": {"t": {"suspend", "phases": {"p": {"run": 1}}}}}"#,
        "$.tasks.t.suspend",
        "put its events inside a phase",
    );
}

#[test]
fn repeated_phases_are_distinct_phases_named_as_workgen_names_them() {
    let s = spec(
        r#"{"tasks": {"t": {"phases": {"p": {"run": 1}, "q": {"sleep": 1}, "p": {"run": 2}, "p": {"run": 3}}}}}"#,
    );
    let names: Vec<&str> = s.tasks[0].phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["p", "q", "p1", "p2"]);
    assert_eq!(s.tasks[0].phases[3].events, [Event::Run { ns: 3_000 }]);
    // Errors inside a repeated phase name its repetition.
    assert_err(
        r#"{"tasks": {"t": {"phases": {"p": {"run": 1}, "p": {"run": "x"}}}}}"#,
        "$.tasks.t.phases.p#2.run",
        "found the string \"x\"",
    );
    // Task names may not repeat (a fork could not tell them apart).
    assert_err(
        r#"{"tasks": {"t": {"run": 1}, "t": {"run": 2}}}"#,
        "$.tasks.t#2",
        "duplicate key \"t\"",
    );
}

#[test]
fn run_minus_one_runs_for_ever() {
    let s = spec(r#"{"tasks": {"t": {"run": -1}}, "global": {"duration": 1}}"#);
    assert_eq!(
        s.tasks[0].phases[0].events,
        [Event::Run { ns: RUN_FOREVER }]
    );
    assert_err(
        r#"{"tasks": {"t": {"run": -2}}}"#,
        "$.tasks.t.run",
        "≥ 0, or -1 to run for ever, found -2",
    );
    assert_err(
        r#"{"tasks": {"t": {"runtime": -1}}}"#,
        "$.tasks.t.runtime",
        "≥ 0, found -1",
    );
}

#[test]
fn taskgroups_become_cgroups() {
    let s = spec(
        r#"{"tasks": {"a": {"taskgroup": "/x//y/", "run": 1},
                      "b": {"taskgroup": "", "phases": {"p": {"taskgroup": "/x", "run": 1}, "q": {"run": 1}}}}}"#,
    );
    let paths: Vec<&str> = s.cgroups.iter().map(|g| g.path.as_str()).collect();
    assert_eq!(paths, ["/", "/x", "/x/y"]);
    assert_eq!((s.tasks[0].group, s.tasks[1].group), (2, 0));
    assert_eq!(
        (s.tasks[1].phases[0].group, s.tasks[1].phases[1].group),
        (Some(1), None)
    );
    assert_err(
        r#"{"tasks": {"t": {"taskgroup": "tg", "run": 1}}}"#,
        "$.tasks.t.taskgroup",
        "has to start with \"/\"",
    );
    assert_err(
        r#"{"tasks": {"t": {"phases": {"p": {"taskgroup": "/a/../b", "run": 1}}}}}"#,
        "$.tasks.t.phases.p.taskgroup",
        "contains \"..\"",
    );
    assert_err(
        r#"{"tasks": {"t": {"taskgroup": 3, "run": 1}}}"#,
        "$.tasks.t.taskgroup",
        "expected a taskgroup",
    );
}

#[test]
fn rt_app_accepts_at_most_32_taskgroups() {
    let phases = |n: usize| {
        (0..n)
            .map(|i| format!(r#""p{i}": {{"taskgroup": "/g{i}", "run": 1}}"#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    spec(&format!(
        r#"{{"tasks": {{"t": {{"phases": {{{}}}}}}}}}"#,
        phases(32)
    ));
    assert_err(
        &format!(r#"{{"tasks": {{"t": {{"phases": {{{}}}}}}}}}"#, phases(33)),
        "$.tasks.t.phases.p32.taskgroup",
        "at most 32",
    );
}

#[test]
fn utilization_clamps() {
    let s = spec(
        r#"{"tasks": {"t": {"util_min": 128, "util_max": -1, "phases": {
              "a": {"run": 1},
              "b": {"util_max": 512, "run": 1},
              "c": {"util_min": -1, "run": 1},
              "d": {"priority": 5, "run": 1}}}}}"#,
    );
    let t = &s.tasks[0];
    assert_eq!(
        t.attr.uclamp,
        Uclamp {
            min: Some(128),
            max: None
        }
    );
    let phase = |i: usize| t.phases[i].attr.as_ref().map(|a| a.uclamp);
    assert_eq!(phase(0), None, "a phase that sets nothing changes nothing");
    // A phase that sets any scheduling key sets both clamps (the other returns to the
    // default), as rt-app passes -1 for the one not given.
    assert_eq!(
        phase(1),
        Some(Uclamp {
            min: None,
            max: Some(512)
        })
    );
    assert_eq!(phase(2), None, "util_min -1 alone is no scheduling data");
    assert_eq!(phase(3), Some(Uclamp::default()));
    assert_err(
        r#"{"tasks": {"t": {"util_min": 1025, "run": 1}}}"#,
        "$.tasks.t.util_min",
        "in 0..=1024, found 1025",
    );
    assert_err(
        r#"{"tasks": {"t": {"util_min": 600, "util_max": 500, "run": 1}}}"#,
        "$.tasks.t.util_max",
        "util_max ≥ util_min (600), found 500",
    );
    assert_err(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "util_max": 500, "run": 1}}}"#,
        "$.tasks.t.util_max",
        "no effect on a SCHED_DEADLINE task",
    );
}

#[test]
fn dl_runtime_on_a_fair_task_is_a_custom_slice() {
    let s = spec(
        r#"{"tasks": {"t": {"dl-runtime": 3000, "phases": {
              "a": {"run": 1},
              "b": {"priority": 5, "run": 1},
              "c": {"policy": "SCHED_FIFO", "run": 1},
              "d": {"policy": "SCHED_BATCH", "run": 1},
              "e": {"dl-runtime": 500, "run": 1}}}}}"#,
    );
    let t = &s.tasks[0];
    assert_eq!(t.attr.slice_ns, Some(3_000_000));
    let slice = |i: usize| t.phases[i].attr.as_ref().map(|a| a.slice_ns);
    assert_eq!(
        slice(1),
        Some(Some(3_000_000)),
        "a fair phase keeps the slice"
    );
    assert_eq!(slice(2), Some(None), "an RT task has no slice");
    assert_eq!(slice(3), Some(None), "nothing to keep after an RT phase");
    assert_eq!(
        t.phases[4].attr.as_ref().map(|a| (a.policy, a.slice_ns)),
        Some((Policy::Batch, Some(500_000)))
    );
    assert_eq!(schedlab_spec::model::custom_slice_ns(1_000), 100_000);
    assert_eq!(schedlab_spec::model::custom_slice_ns(3_000_000), 3_000_000);
    assert_eq!(schedlab_spec::model::custom_slice_ns(u64::MAX), 100_000_000);
    assert_err(
        r#"{"tasks": {"t": {"dl-runtime": 3000, "dl-period": 9000, "run": 1}}}"#,
        "$.tasks.t.dl-period",
        "only dl-runtime has a meaning",
    );
    assert_err(
        r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "dl-runtime": 3000, "run": 1}}}"#,
        "$.tasks.t.dl-runtime",
        "only apply to SCHED_DEADLINE",
    );
}

#[test]
fn refused_rt_app_features_say_why() {
    assert_err(
        r#"{"tasks": {"t": {"run": 1, "memrun": 4096}}}"#,
        "$.tasks.t.memrun",
        "schedlab has no memory model",
    );
    assert_err(
        r#"{"tasks": {"t": {"phases": {"p": {"iorun": 4096}}}}}"#,
        "$.tasks.t.phases.p.iorun",
        "through the page cache",
    );
    assert_err(
        r#"{"tasks": {"t": {"exec": 5000, "period": 5000, "lock_order": ["m"]}}}"#,
        "$.tasks.t.exec",
        "pre-2015 rt-app grammar",
    );
    assert_err(
        r#"{"tasks": {"t": {"nodes_membind": [0], "run": 1}}}"#,
        "$.tasks.t.nodes_membind",
        "not modelled yet",
    );
}

#[test]
fn legacy_resources_take_rt_apps_types() {
    spec(
        r#"{"resources": {"s": {"type": "signal", "target": "w"}, "w": {"type": "wait"}},
            "tasks": {"t": {"run": 1}}}"#,
    );
    assert_err(
        r#"{"resources": {"s": {"type": "semaphore"}}, "tasks": {"t": {"run": 1}}}"#,
        "$.resources.s.type",
        "found \"semaphore\"",
    );
    // rt-app looks for "tasks" first, so a resources-only file is refused for that.
    assert_err(
        r#"{"resources": {"s": {"type": "semaphore"}}}"#,
        "$.tasks",
        "missing \"tasks\"",
    );
}

#[test]
fn the_machine_is_given_sized_by_a_topology_inferred_or_one_cpu() {
    let m = |text: &str| {
        let s = spec(text);
        (s.machine.cpus, s.machine.cpus_source)
    };
    assert_eq!(
        m(r#"{"tasks": {"t": {"run": 1}}}"#),
        (1, CpusSource::Default)
    );
    assert_eq!(
        m(r#"{"tasks": {"t": {"cpus": [5, 2], "phases": {"p": {"cpus": [7], "run": 1}}}}}"#),
        (8, CpusSource::Inferred)
    );
    assert_eq!(
        m(
            r#"{"tasks": {"t": {"run": 1}}, "schedlab": {"cgroups": {"/a": {"cpuset.cpus": "0-3"}}}}"#
        ),
        (4, CpusSource::Inferred)
    );
    assert_eq!(
        m(r#"{"tasks": {"t": {"cpus": [1], "run": 1}}, "schedlab": {"machine": {"cpus": 4}}}"#),
        (4, CpusSource::Given)
    );
    assert_eq!(
        m(
            r#"{"tasks": {"t": {"run": 1}}, "schedlab": {"machine": {"topology": {"packages": 2, "cores": 4, "threads": 2}}}}"#
        ),
        (16, CpusSource::Topology)
    );
    let s = spec(r#"{"tasks": {"t": {"cpus": [2], "run": 1}}}"#);
    assert_eq!(s.machine.topology.nr_cpus(), 3);
    // A CPU the given machine lacks is reported where it is named, wherever "schedlab" is.
    assert_err(
        r#"{"tasks": {"t": {"phases": {"p": {"cpus": [0, 6], "run": 1}}}}, "schedlab": {"machine": {"cpus": 4}}}"#,
        "$.tasks.t.phases.p.cpus[1]",
        "CPU 6 is out of range: the machine has 4 CPUs",
    );
    assert_err(
        r#"{"tasks": {"t": {"cpus": [256], "run": 1}}}"#,
        "$.tasks.t.cpus[0]",
        "at most 256 CPUs",
    );
}

//! `schedlab validate` and `schedlab run` agree: `validate_text` makes every check a run
//! makes before its first event (one implementation, `schedlab_sim::check`, called by
//! both), so each refusal reads the same from both and names its JSON path. Then the
//! checks a run can only make as it goes: error-checking mutexes and loops that never make
//! time pass.

use schedlab_sim::{simulate, simulate_text, validate_text, RunError, SimConfig};
use schedlab_spec::model::Event;

fn cfg(scheduler: &str) -> SimConfig {
    SimConfig {
        scheduler: Some(scheduler.to_string()),
        ..Default::default()
    }
}

fn message(e: RunError) -> String {
    match e {
        RunError::Spec(e) => e.to_string(),
        RunError::Sim(e) => {
            assert!(e.bad_input, "{e}");
            e.message
        }
    }
}

/// The refusal of `text` by `validate` (under the spec's scheduler, or `scheduler`) and
/// by a run, which must be the same.
fn refusal(text: &str, scheduler: Option<&str>) -> String {
    let (c, names) = match scheduler {
        Some(s) => (cfg(s), vec![s.to_string()]),
        None => (SimConfig::default(), vec![]),
    };
    let v = validate_text(text, &c, &names).expect_err("validate refuses it");
    let r = simulate_text(text, &c).expect_err("run refuses it");
    let (v, r) = (message(v), message(r));
    assert_eq!(v, r, "validate and run disagree");
    v
}

#[test]
fn the_corpus_entries_a_run_refuses_are_refused_by_validate_alike() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad_specs");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut n = 0;
    for (file, want) in expected.as_object().unwrap() {
        if want["stage"] != "run" {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let m = refusal(&text, None);
        let path = want["path"].as_str().unwrap();
        assert!(m.starts_with(&format!("{path}: ")), "{file}: {m}");
        assert!(
            m.contains(want["contains"].as_str().unwrap()),
            "{file}: {m}"
        );
        n += 1;
    }
    assert!(n >= 3, "{n} run-stage entries");
}

#[test]
fn an_unknown_scheduler_named_in_the_spec_is_refused_at_its_path() {
    let m = refusal(
        r#"{"tasks": {"t": {"loop": 1, "run": 10}}, "schedlab": {"scheduler": {"name": "cfs"}}}"#,
        None,
    );
    assert!(
        m.starts_with("$.schedlab.scheduler.name: unknown scheduler 'cfs' (available: linux-cfs,"),
        "{m}"
    );
}

#[test]
fn an_unknown_tunable_in_the_spec_is_refused_at_its_path() {
    let m = refusal(
        r#"{"tasks": {"t": {"loop": 1, "run": 10}},
            "schedlab": {"scheduler": {"name": "linux-cfs", "params": {"base_slice_ns": "3000000"}}}}"#,
        None,
    );
    assert!(
        m.starts_with(
            "$.schedlab.scheduler.params.base_slice_ns: unknown parameter 'base_slice_ns'"
        ),
        "{m}"
    );
    assert!(!m.contains("--param"), "{m}");
}

#[test]
fn a_task_looping_forever_without_a_duration_is_refused() {
    let text = r#"{"tasks": {"t": {"run": 10}}}"#;
    let m = refusal(text, Some("fp"));
    assert_eq!(
        m,
        "$.tasks.t: task t loops forever (its loop is -1), and the spec has no duration: set \
         global.duration or pass --duration"
    );
    // Every policy refuses it alike: validate without a scheduler says it once.
    let all = message(validate_text(text, &SimConfig::default(), &[]).unwrap_err());
    assert_eq!(all, m);
    let phase = refusal(
        r#"{"tasks": {"t": {"loop": 1, "phases": {"p": {"loop": -1, "run": 10}}}}}"#,
        Some("fp"),
    );
    assert!(phase.contains("(phase p has loop -1)"), "{phase}");
    // Given a duration, both accept it.
    let d = SimConfig {
        duration_ns: Some(1_000_000),
        ..cfg("fp")
    };
    validate_text(text, &d, &["fp".into()]).unwrap();
    simulate_text(text, &d).unwrap();
}

#[test]
fn attributes_a_policy_refuses_are_refused_by_validate_too() {
    let text = r#"{"tasks": {"t": {"loop": 1, "policy": "SCHED_DEADLINE", "dl-runtime": 1000,
                  "dl-period": 10000, "run": 10}}}"#;
    let m = refusal(text, Some("muqss"));
    assert_eq!(m, "$.tasks.t: SCHED_DEADLINE is not modelled by muqss");
    // A spec that names no scheduler is checked against every policy; the message says
    // which refused it first and which others did.
    let all = message(validate_text(text, &SimConfig::default(), &[]).unwrap_err());
    assert!(
        all.starts_with("under linux-cfs: $.tasks.t: SCHED_DEADLINE"),
        "{all}"
    );
    assert!(all.contains("also refused by fp,"), "{all}");
}

#[test]
fn a_refused_phase_attribute_names_the_phase() {
    let m = refusal(
        r#"{"tasks": {"t": {"loop": 1, "phases": {"a": {"run": 10},
            "b": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "run": 10}}}}}"#,
        Some("fp"),
    );
    assert!(m.starts_with("$.tasks.t.phases.b: "), "{m}");
}

#[test]
fn cgroup_bandwidth_is_refused_by_validate_too() {
    let m = refusal(
        r#"{"tasks": {"t": {"loop": 1, "run": 10, "taskgroup": "/a"}},
            "schedlab": {"cgroups": {"/a": {"cpu.cfs_quota_us": 50000}}}}"#,
        Some("linux-cfs"),
    );
    assert!(
        m.starts_with("$.schedlab.cgroups[\"/a\"]: CFS bandwidth"),
        "{m}"
    );
}

#[test]
fn rt_bandwidth_under_a_policy_without_it_is_refused_by_validate_too() {
    let m = refusal(
        r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 10}},
            "schedlab": {"cgroups": {"/": {"cpu.rt_runtime_us": 900000}}}}"#,
        Some("fp"),
    );
    assert!(
        m.starts_with("$.schedlab.cgroups[\"/\"][\"cpu.rt_runtime_us\"]: fp has no RT throttling"),
        "{m}"
    );
}

#[test]
fn the_spec_tunables_apply_to_its_own_scheduler_only() {
    let text = r#"{"tasks": {"t": {"loop": 1, "run": 10}},
        "schedlab": {"scheduler": {"name": "linux-eevdf", "params": {"sched_base_slice_ns": 3000000}}}}"#;
    let own = simulate_text(text, &SimConfig::default()).unwrap();
    assert_eq!(
        own.result.run.params,
        vec![("sched_base_slice_ns".to_string(), "3000000".to_string())]
    );
    let other = simulate_text(text, &cfg("fp")).unwrap();
    assert!(other.result.run.params.is_empty());
    let note = other.result.run.notes.join("\n");
    assert!(
        note.contains("are linux-eevdf's and were not applied: this run uses fp"),
        "{note}"
    );
    validate_text(text, &cfg("fp"), &["fp".into()]).unwrap();
}

#[test]
fn tunables_without_a_scheduler_name_are_refused() {
    let e = validate_text(
        r#"{"tasks": {"t": {"loop": 1, "run": 10}},
            "schedlab": {"scheduler": {"params": {"sched_base_slice_ns": 3000000}}}}"#,
        &SimConfig::default(),
        &[],
    )
    .unwrap_err();
    let RunError::Spec(e) = e else { panic!("{e}") };
    assert_eq!(e.path, "$.schedlab.scheduler.params");
    assert!(e.message.contains("give its \"name\" too"), "{e}");
}

/// A spec the parser accepts, with its model then edited as code may build one.
fn edited(text: &str, edit: impl FnOnce(&mut schedlab_spec::Spec)) -> schedlab_spec::Spec {
    let mut s = schedlab_spec::parse_spec(text).unwrap();
    edit(&mut s);
    s
}

#[test]
fn the_engine_stops_at_an_unlock_by_a_task_that_does_not_hold_the_mutex() {
    // Built in code (the parser refuses it): b unlocks the mutex a holds.
    let s = edited(
        r#"{"tasks": {"a": {"loop": 1, "lock": "m", "run": 1000, "unlock": "m"},
                      "b": {"loop": 1, "run": 100, "lock": "m", "unlock": "m"}},
            "schedlab": {"machine": {"cpus": 2}}}"#,
        |s| {
            s.tasks[1].phases[0].events.remove(1);
        },
    );
    let e = simulate(&s, &cfg("fp")).unwrap_err();
    assert!(
        e.message.starts_with(
            "task b unlocks mutex \"m\", which it does not hold (it is held by a): an \
             error-checking mutex refuses this (EPERM)"
        ),
        "{e}"
    );
}

#[test]
fn the_engine_stops_at_a_relock_and_at_a_wait_without_the_mutex() {
    let relock = edited(
        r#"{"tasks": {"t": {"loop": 1, "lock": "m", "run": 10, "unlock": "m"}}}"#,
        |s| s.tasks[0].phases[0].events[1] = Event::Lock { mutex: 0 },
    );
    let e = simulate(&relock, &cfg("fp")).unwrap_err();
    assert!(
        e.message
            .starts_with("task t locks mutex \"m\", which it already holds"),
        "{e}"
    );
    let wait = edited(
        r#"{"tasks": {"t": {"loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"},
                      "u": {"loop": 1, "run": 10, "lock": "m", "signal": "c", "unlock": "m"}}}"#,
        |s| {
            s.tasks[0].phases[0].events.remove(0);
        },
    );
    let e = simulate(&wait, &cfg("fp")).unwrap_err();
    assert!(
        e.message.starts_with(
            "task t waits on a condition with mutex \"m\", which it does not hold (it is not \
             locked)"
        ),
        "{e}"
    );
}

#[test]
fn a_long_finite_loop_of_zero_time_events_runs_to_its_end() {
    // 600 000 rounds of lock/unlock: 1.2 million steps at one instant, more than the
    // engine takes before it asks whether the loop ends. It does: the task exits.
    let text = r#"{"tasks": {"t": {"loop": 600000, "lock": "m", "unlock": "m"}}}"#;
    let out = simulate_text(text, &cfg("fp")).unwrap();
    assert_eq!(out.json()["summary"]["blocked_at_end"], 0);
}

#[test]
fn an_endless_loop_of_zero_time_events_is_reported() {
    let no_progress = |text: &str| {
        let e = simulate_text(text, &cfg("fp")).unwrap_err();
        message_of(e)
    };
    // One task, for ever, at one instant.
    let m = no_progress(
        r#"{"global": {"duration": 1}, "tasks": {"t": {"lock": "m", "unlock": "m", "run": 0}}}"#,
    );
    assert!(
        m.starts_with(
            "task t makes no progress: its program loops for ever without consuming time"
        ),
        "{m}"
    );
    // A phase that repeats for ever after a finite one.
    let m = no_progress(
        r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 1, "phases": {
            "warm": {"loop": 3, "run": 100}, "spin": {"loop": -1, "yield": ""}}}}}"#,
    );
    assert!(m.contains("makes no progress"), "{m}");
    // Two tasks waking each other for ever without time passing.
    let m = no_progress(
        r#"{"global": {"duration": 1}, "tasks": {
            "a": {"lock": "m", "signal": "b", "wait": {"ref": "a", "mutex": "m"}, "unlock": "m"},
            "b": {"lock": "m", "signal": "a", "wait": {"ref": "b", "mutex": "m"}, "unlock": "m"}}}"#,
    );
    assert!(m.contains("makes no progress"), "{m}");
}

#[test]
fn an_endless_loop_that_makes_time_pass_between_long_zero_time_phases_runs() {
    // Each round: 600 000 zero-time lock/unlock pairs, then 1 ms of work.
    let text = r#"{"global": {"duration": 1}, "tasks": {"t": {"phases": {
        "spin": {"loop": 600000, "lock": "m", "unlock": "m"}, "work": {"run": 1000}}}}}"#;
    let c = SimConfig {
        duration_ns: Some(3_000_000),
        ..cfg("fp")
    };
    simulate_text(text, &c).unwrap();
}

fn message_of(e: RunError) -> String {
    match e {
        RunError::Spec(e) => panic!("the spec is valid: {e}"),
        RunError::Sim(e) => e.message,
    }
}

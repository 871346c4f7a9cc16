//! The rt-app rules the parser implements, each pinned by a small spec.

use schedlab_spec::model::{Event, Headline, Policy, TimerMode};
use schedlab_spec::{parse_spec, parse_value};

fn spec(text: &str) -> schedlab_spec::Spec {
    parse_spec(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn event_keys_match_by_prefix_in_file_order() {
    let s = spec(r#"{"tasks": {"t": {"run0": 10, "sleep1": 20, "runtime2": 30, "run1": 40}}}"#);
    let ev = &s.tasks[0].phases[0].events;
    assert_eq!(
        ev,
        &[
            Event::Run { ns: 10_000 },
            Event::Sleep { ns: 20_000 },
            Event::Runtime { ns: 30_000 },
            Event::Run { ns: 40_000 }
        ]
    );
}

#[test]
fn repeated_event_keys_are_distinct_events_like_workgen() {
    let s = spec(r#"{"tasks": {"t": {"run": 1, "sleep": 2, "run": 3}}}"#);
    assert_eq!(s.tasks[0].phases[0].events.len(), 3);
    let e = parse_spec(r#"{"tasks": {"t": {"loop": 1, "loop": 2, "run": 3}}}"#).unwrap_err();
    assert_eq!(e.path, "$.tasks.t.loop#2");
    assert!(e.message.contains("duplicate key"));
}

#[test]
fn implicit_phase_and_loop_defaults() {
    // No phases, no loop: the task loops for ever over a phase that runs once.
    let s = spec(r#"{"tasks": {"t": {"run": 1}}}"#);
    assert_eq!(
        (s.tasks[0].loop_count, s.tasks[0].phases[0].loop_count),
        (-1, 1)
    );
    // No phases, loop given: the phase loops, the task runs its phases once.
    let s = spec(r#"{"tasks": {"t": {"loop": 5, "run": 1}}}"#);
    assert_eq!(
        (s.tasks[0].loop_count, s.tasks[0].phases[0].loop_count),
        (1, 5)
    );
    // Phases: task loop defaults to -1, phase loop to 1.
    let s =
        spec(r#"{"tasks": {"t": {"phases": {"a": {"run": 1}, "b": {"loop": 3, "sleep": 1}}}}}"#);
    assert_eq!(s.tasks[0].loop_count, -1);
    assert_eq!(s.tasks[0].phases[1].loop_count, 3);
    assert_eq!(s.tasks[0].phases[0].name, "a");
}

#[test]
fn policies_priorities_and_defaults() {
    let s = spec(
        r#"{"global": {"default_policy": "SCHED_FIFO"},
            "tasks": {"a": {"run": 1}, "b": {"policy": "SCHED_OTHER", "priority": -5, "run": 1},
                      "c": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "run": 1}}}"#,
    );
    assert_eq!(
        (s.tasks[0].attr.policy, s.tasks[0].attr.priority),
        (Policy::Fifo, 10)
    );
    assert_eq!(
        (s.tasks[1].attr.policy, s.tasks[1].attr.priority),
        (Policy::Other, -5)
    );
    let dl = s.tasks[2].attr.dl.unwrap();
    assert_eq!(
        (dl.runtime_ns, dl.deadline_ns, dl.period_ns),
        (100_000, 1_000_000, 1_000_000)
    );
}

#[test]
fn phase_attributes_resolve_against_the_current_policy() {
    let s = spec(
        r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 50, "phases": {
              "a": {"run": 1},
              "b": {"priority": 60, "run": 1},
              "c": {"policy": "SCHED_RR", "run": 1},
              "d": {"policy": "SCHED_OTHER", "priority": 3, "run": 1}}}}}"#,
    );
    let p = &s.tasks[0].phases;
    assert!(p[0].attr.is_none());
    assert_eq!(
        p[1].attr.as_ref().map(|a| (a.policy, a.priority)),
        Some((Policy::Fifo, 60))
    );
    assert_eq!(
        p[2].attr.as_ref().map(|a| (a.policy, a.priority)),
        Some((Policy::Rr, 10))
    );
    assert_eq!(
        p[3].attr.as_ref().map(|a| (a.policy, a.priority)),
        Some((Policy::Other, 3))
    );
    // A priority-only phase after an OTHER phase is a nice value.
    let e = parse_spec(
        r#"{"tasks": {"t": {"phases": {"a": {"policy": "SCHED_OTHER", "run": 1}, "b": {"priority": 50, "run": 1}}}}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "$.tasks.t.phases.b.priority");
}

#[test]
fn timers_default_relative_absolute_wins_unique_is_per_task() {
    let s = spec(
        r#"{"tasks": {
            "a": {"timer": {"ref": "shared", "period": 100}, "timer1": {"ref": "unique", "period": 50}},
            "b": {"timer": {"ref": "shared", "period": 100, "mode": "absolute"}, "timer1": {"ref": "unique", "period": 50}}}}"#,
    );
    assert_eq!(s.resources.timers, ["shared", "a/unique", "b/unique"]);
    assert_eq!(s.resources.timer_unique, [false, true, true]);
    let mode = |t: usize, e: usize| match s.tasks[t].phases[0].events[e] {
        Event::Timer { mode, .. } => mode,
        _ => unreachable!(),
    };
    assert_eq!(
        mode(0, 0),
        TimerMode::Absolute,
        "absolute on any use makes the timer absolute"
    );
    assert_eq!(
        mode(0, 1),
        TimerMode::Relative,
        "rt-app's default mode is relative"
    );
}

#[test]
fn barrier_counts_instances_of_every_user() {
    let s = spec(
        r#"{"tasks": {"a": {"instance": 3, "barrier": "B", "run": 1}, "b": {"barrier": "B", "run": 1}}}"#,
    );
    assert_eq!(s.resources.barriers, [("B".to_string(), 4)]);
}

#[test]
fn suspend_and_resume_are_rt_apps_mutex_and_condvar_sequences() {
    let s =
        spec(r#"{"tasks": {"w": {"suspend": "", "run": 1}, "k": {"resume": "w", "sleep": 10}}}"#);
    assert_eq!(
        s.tasks[0].phases[0].events[..3],
        [
            Event::Lock { mutex: 0 },
            Event::Wait { cond: 0, mutex: 0 },
            Event::Unlock { mutex: 0 }
        ]
    );
    assert_eq!(
        s.tasks[1].phases[0].events[..3],
        [
            Event::Lock { mutex: 0 },
            Event::Broad { cond: 0 },
            Event::Unlock { mutex: 0 }
        ]
    );
}

#[test]
fn fork_resolves_task_templates_anywhere_in_the_file() {
    let s = spec(
        r#"{"tasks": {"parent": {"loop": 2, "fork": "child", "sleep": 1}, "child": {"instance": 0, "run": 5}}}"#,
    );
    assert_eq!(s.tasks[0].phases[0].events[0], Event::Fork { task: 1 });
    assert_eq!(s.tasks[1].instances, 0);
}

#[test]
fn units_microseconds_and_duration_in_seconds() {
    let s = spec(r#"{"global": {"duration": 3}, "tasks": {"t": {"delay": 7, "run": 2}}}"#);
    assert_eq!(s.duration_ns, Some(3_000_000_000));
    assert_eq!(s.tasks[0].delay_ns, 7_000);
    assert_eq!(
        spec(r#"{"global": {"duration": -1}, "tasks": {"t": {"run": 1}}}"#).duration_ns,
        None
    );
}

#[test]
fn schedlab_extensions() {
    let s = spec(
        r#"{"tasks": {"w": {"schedlab:process": "app", "loop": 1, "schedlab:mark": "go", "schedlab:write": {"chan": "p", "bytes": 10}, "schedlab:exit": true},
                      "r": {"loop": 1, "schedlab:read": {"chan": "p", "bytes": 10}}},
            "schedlab": {"machine": {"cpus": 4, "hz": 1000}, "pipes": {"p": {}}, "seed": 9,
                         "scheduler": {"name": "cfs", "params": {"latency_ns": 6000000, "x": true}},
                         "headline": {"type": "elapsed_since_mark", "mark": "go"}}}"#,
    );
    assert_eq!((s.machine.cpus, s.machine.hz), (4, 1000));
    assert_eq!(s.resources.channels[0].capacity, 65536);
    assert_eq!(s.seed, Some(9));
    assert_eq!(
        s.scheduler.params[0],
        ("latency_ns".to_string(), "6000000".to_string())
    );
    assert_eq!(s.tasks[0].process.as_deref(), Some("app"));
    assert_eq!(
        s.headline,
        Headline::ElapsedSinceMark {
            mark: 0,
            name: "elapsed_since_go".into()
        }
    );
}

#[test]
fn parse_value_and_parse_spec_agree() {
    let text =
        r#"{"tasks": {"t": {"priority": 5, "run": 1, "sleep": 2}}, "global": {"duration": 1}}"#;
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(parse_value(&v).unwrap(), parse_spec(text).unwrap());
}

#[test]
fn a_rate_headline_names_a_mark_that_is_used() {
    let tasks = r#"{"t": {"loop": 1, "schedlab:mark": "commit", "run": 1}}"#;
    let s = spec(&format!(
        r#"{{"tasks": {tasks}, "schedlab": {{"headline": {{"type": "rate", "mark": "commit"}}}}}}"#
    ));
    assert_eq!(
        s.headline,
        Headline::MarkRate {
            mark: 0,
            name: "commit_rate".into()
        }
    );
    let e = parse_spec(&format!(
        r#"{{"tasks": {tasks}, "schedlab": {{"headline": {{"type": "rate", "mark": "done"}}}}}}"#
    ))
    .unwrap_err();
    assert_eq!(e.path, "$.schedlab.headline.mark", "{e}");
    assert!(e.to_string().contains("\"done\""), "{e}");
}

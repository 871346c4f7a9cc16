//! rt-app's own example files (tests/data/rt-app-examples: verbatim copies of
//! scheduler-tools/rt-app doc/examples, see PROVENANCE.md there) read as rt-app, after its
//! workgen script, reads them. The ones rt-app itself cannot run, or that use what schedlab
//! does not model, are refused with exactly the error pinned here.

use schedlab_spec::model::{CpusSource, Event, Policy, Spec};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/rt-app-examples")
}

fn json_files(d: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p.strip_prefix(dir()).unwrap().display().to_string());
        }
    }
}

fn parse(rel: &str) -> Result<Spec, schedlab_spec::SpecError> {
    schedlab_spec::parse_spec(&std::fs::read_to_string(dir().join(rel)).unwrap())
}

fn spec(rel: &str) -> Spec {
    parse(rel).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The files that are refused: (file, path, start of the message).
const REFUSED: &[(&str, &str, &str)] = &[
    ("merge/global.json", "$.tasks", "missing \"tasks\""),
    ("merge/resources.json", "$.tasks", "missing \"tasks\""),
    (
        "merge/thread0.json",
        "$.tasks.thread0.exec",
        "\"exec\" belongs to the pre-2015 rt-app grammar",
    ),
    (
        "merge/thread1.json",
        "$.tasks.thread1.exec",
        "\"exec\" belongs to the pre-2015 rt-app grammar",
    ),
    (
        "merge/thread2.json",
        "$.tasks.thread2.exec",
        "\"exec\" belongs to the pre-2015 rt-app grammar",
    ),
    (
        "merge/thread3.json",
        "$.tasks.thread3.exec",
        "\"exec\" belongs to the pre-2015 rt-app grammar",
    ),
    (
        "tutorial/example6.json",
        "$.tasks.thread0.mem",
        "not modelled yet: the \"mem\" event",
    ),
];

#[test]
fn every_example_parses_or_is_refused_as_pinned() {
    let mut files = Vec::new();
    json_files(&dir(), &mut files);
    files.sort();
    assert_eq!(files.len(), 28, "{files:?}");
    let mut failures = Vec::new();
    for f in &files {
        let refused = REFUSED.iter().find(|(name, _, _)| name == f);
        match (parse(f), refused) {
            (Ok(_), None) => {}
            (Err(e), Some((_, path, msg))) if e.path == *path && e.message.starts_with(msg) => {}
            (Ok(_), Some(_)) => failures.push(format!("{f}: accepted, expected a refusal")),
            (Err(e), _) => failures.push(format!("{f}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(files.len() - REFUSED.len(), 21);
}

#[test]
fn bare_suspend_waits_on_the_tasks_own_name() {
    let s = spec("video-short.json");
    let t = s.tasks.iter().find(|t| t.name == "surfaceflinger").unwrap();
    let m = s
        .resources
        .mutexes
        .iter()
        .position(|n| n == "surfaceflinger");
    let c = s.resources.conds.iter().position(|n| n == "surfaceflinger");
    let (m, c) = (m.unwrap() as u32, c.unwrap() as u32);
    assert_eq!(
        t.phases[0].events[..3],
        [
            Event::Lock { mutex: m },
            Event::Wait { cond: c, mutex: m },
            Event::Unlock { mutex: m }
        ]
    );
    // A phase's bare suspend too; DispSync's p2 loops twice over suspend + run.
    let d = s.tasks.iter().find(|t| t.name == "DispSync").unwrap();
    assert_eq!(d.phases[1].loop_count, 2);
    assert!(matches!(d.phases[1].events[1], Event::Wait { .. }));
}

#[test]
fn repeated_keys_are_distinct_events_and_phases() {
    // tutorial/example5: thread1 has run ×3 and suspend ×2 among its events.
    let s = spec("tutorial/example5.json");
    let t1 = &s.tasks[1];
    let runs = t1.phases[0]
        .events
        .iter()
        .filter(|e| matches!(e, Event::Run { .. }))
        .count();
    assert_eq!(runs, 3);
    // spreading-tasks: "heavy1" twice in thread2, named as workgen names the second.
    let s = spec("spreading-tasks.json");
    let names: Vec<&str> = s.tasks[1].phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["light1", "heavy1", "light2", "heavy11"]);
    assert_eq!(s.tasks[1].phases[3].loop_count, 600);
}

#[test]
fn taskgroups_and_custom_slices() {
    let s = spec("tutorial/example11.json");
    let paths: Vec<&str> = s.cgroups.iter().map(|g| g.path.as_str()).collect();
    assert_eq!(paths, ["/", "/tg1", "/tg1/tg11"]);
    assert_eq!(s.cgroups[2].parent, Some(1));
    let ph = &s.tasks[0].phases;
    assert_eq!(
        (ph[0].group, ph[1].group, ph[2].group),
        (Some(2), None, Some(0))
    );
    let s = spec("tutorial/example10.json");
    assert_eq!(s.tasks[0].group, 1);

    let s = spec("custom-slice.json");
    assert_eq!(
        (s.tasks[0].attr.policy, s.tasks[0].attr.priority),
        (Policy::Other, -19)
    );
    assert_eq!(s.tasks[0].attr.slice_ns, Some(100_000_000));
    assert_eq!(s.tasks[1].attr.slice_ns, None);
    assert_eq!(s.tasks[1].attr.dl.unwrap().period_ns, 200_000_000);
}

#[test]
fn machines_are_inferred_from_the_cpus_named() {
    let m = |f: &str| {
        let s = spec(f);
        (s.machine.cpus, s.machine.cpus_source)
    };
    assert_eq!(
        m("cpufreq_governor_efficiency/dvfs.json"),
        (2, CpusSource::Inferred)
    );
    assert_eq!(m("tutorial/example8.json"), (3, CpusSource::Inferred));
    assert_eq!(m("mp3-long.json"), (1, CpusSource::Inferred));
    assert_eq!(m("browser-long.json"), (1, CpusSource::Default));
}

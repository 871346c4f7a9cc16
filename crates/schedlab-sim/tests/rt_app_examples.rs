//! Every rt-app example file the spec accepts (tests/data/rt-app-examples; the parser's
//! own test pins the 7 it refuses) runs through the engine under the Linux schedulers, or
//! is refused before the run with the reason pinned here.

use std::path::{Path, PathBuf};

use schedlab_sim::SimConfig;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/rt-app-examples")
}

fn json_files(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// Files the engine refuses, and the start of its message. (custom-slice.json's
/// SCHED_OTHER thread with a custom slice is accepted, by linux-eevdf as Linux 6.12 does
/// and by linux-cfs with a note; its SCHED_DEADLINE thread asks for a bandwidth of 1 —
/// runtime = period = 200 ms — which the one-CPU machine's admission control refuses, as
/// the kernel's `sched_dl_overflow` does with its default limit of 0.95.)
const REFUSED: &[(&str, &str)] = &[(
    "custom-slice.json",
    "$.tasks.thread1: sched_setattr() fails with EBUSY",
)];

#[test]
fn every_accepted_example_runs() {
    let mut files = Vec::new();
    json_files(&dir(), &mut files);
    files.sort();
    let mut ran = 0;
    let mut failures = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(dir()).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        if schedlab_spec::parse_spec(&text).is_err() {
            continue; // refused by the parser, pinned by its own test
        }
        for scheduler in ["linux-cfs", "linux-eevdf"] {
            let cfg = SimConfig {
                scheduler: Some(scheduler.into()),
                duration_ns: Some(200_000_000),
                check: true,
                ..SimConfig::default()
            };
            let refused = REFUSED.iter().find(|(f, _)| *f == rel);
            match (schedlab_sim::simulate_text(&text, &cfg), refused) {
                (Ok(out), None) => {
                    let r = out.json();
                    assert_eq!(r["run"]["sim_ns"], 200_000_000u64, "{rel}");
                    ran += 1;
                }
                (Err(e), Some((_, msg))) if e.to_string().starts_with(msg) => {}
                (Ok(_), Some(_)) => failures.push(format!("{rel}: ran, expected a refusal")),
                (Err(e), _) => failures.push(format!("{rel} under {scheduler}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ran, 2 * 20, "20 examples ran under both schedulers");
}

/// custom-slice.json without its SCHED_DEADLINE thread (refused on one CPU, above):
/// thread0, SCHED_OTHER with dl-runtime 100 ms, runs under linux-eevdf, which
/// takes the runtime as its slice as Linux 6.12 does, and under linux-cfs, whose result
/// says the custom slice was ignored.
#[test]
fn the_custom_slice_example_runs_its_fair_thread_under_both_fair_classes() {
    let text = std::fs::read_to_string(dir().join("custom-slice.json")).unwrap();
    let mut spec = schedlab_spec::parse_spec(&text).unwrap();
    spec.tasks.retain(|t| t.name != "thread1");
    assert_eq!(spec.tasks.len(), 1, "thread0 is left");
    for (scheduler, note) in [
        ("linux-eevdf", None),
        (
            "linux-cfs",
            Some("custom slices (dl-runtime on a fair-class task) are ignored: linux-cfs"),
        ),
    ] {
        let cfg = SimConfig {
            scheduler: Some(scheduler.into()),
            duration_ns: Some(200_000_000),
            check: true,
            ..SimConfig::default()
        };
        let out = schedlab_sim::simulate(&spec, &cfg).unwrap_or_else(|e| panic!("{e}"));
        let r = out.json();
        assert_eq!(r["run"]["sim_ns"], 200_000_000u64, "{scheduler}");
        let notes: Vec<&str> = r["run"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        match note {
            None => assert!(notes.is_empty(), "{scheduler}: {notes:?}"),
            Some(n) => assert!(
                notes.len() == 1 && notes[0].starts_with(n),
                "{scheduler}: {notes:?}"
            ),
        }
    }
}

/// tutorial/example11: one thread moves from /tg1/tg11 to / and back each loop, through
/// `sched_move_task` and the class's `task_change_group`.
#[test]
fn a_task_moves_between_cgroups_at_its_phases() {
    let text = std::fs::read_to_string(dir().join("tutorial/example11.json")).unwrap();
    let spec = schedlab_spec::parse_spec(&text).unwrap();
    assert_eq!(spec.cgroups.len(), 3, "/, /tg1, /tg1/tg11");
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    struct Groups(std::rc::Rc<std::cell::RefCell<Vec<u32>>>);
    impl<S> schedlab_sim::protocol::testing::Observer<S> for Groups {
        fn after(
            &mut self,
            hook: schedlab_sim::protocol::testing::Hook,
            _p: &S,
            ctx: &schedlab_sim::Ctx,
        ) {
            if let schedlab_sim::protocol::testing::Hook::TaskChangeGroup(t) = hook {
                self.0.borrow_mut().push(ctx.task(t).group);
            }
        }
    }
    let policy = schedlab_sim::protocol::testing::Observed::new(
        schedlab_sim::cpu::linux_cfs::linux_cfs(1),
        Groups(log.clone()),
    );
    let cfg = SimConfig {
        duration_ns: Some(650_000_000),
        check: true,
        ..SimConfig::default()
    };
    schedlab_sim::simulate_policy(&spec, &cfg, policy).unwrap();
    // Starts in /tg1/tg11 (2); phase 2 moves it to / (0), the next loop's phase 0 back.
    assert_eq!(*log.borrow(), vec![0, 2, 0, 2]);
}

//! The example specs in examples/specs all parse (rt-app originals rewritten, and one using
//! the schedlab extensions).

use schedlab_spec::model::Policy;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs")
}

#[test]
fn every_example_parses() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            schedlab_spec::parse_spec(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 4, "only {n} examples");
}

#[test]
fn examples_mean_what_they_say() {
    let read = |f: &str| {
        schedlab_spec::parse_spec(&std::fs::read_to_string(dir().join(f)).unwrap()).unwrap()
    };
    let relay = read("rtapp-barrier-relay.json");
    assert_eq!(relay.resources.barriers.len(), 3);
    assert!(relay.resources.barriers.iter().all(|(_, n)| *n == 2));
    let ui = read("rtapp-ui-pipeline.json");
    let main = &ui.tasks[0];
    assert_eq!(main.loop_count, 4);
    // "run" twice in the load phase; resume expands to lock/broad/unlock.
    assert_eq!(main.phases[0].events.len(), 1 + 1 + 3 + 1 + 1);
    let mixed = read("rtapp-mixed-classes.json");
    assert_eq!(mixed.tasks[0].attr.policy, Policy::Rr);
    assert_eq!(mixed.tasks[1].phases[1].attr.as_ref().unwrap().priority, 60);
    assert_eq!(mixed.tasks[1].phases[1].cpus.as_deref(), Some(&[1u32][..]));
    let pp = read("schedlab-pipe-pingpong.json");
    assert_eq!(pp.resources.channels.len(), 2);
    assert_eq!(pp.machine.context_switch_ns, 1500);
}

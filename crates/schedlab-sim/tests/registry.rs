//! The policy registry (`cpu/mod.rs`) is one table: every listed name constructs a policy
//! that calls itself by that name and runs a spec through the real path; every module
//! under `cpu/` is declared in the table, as a policy or as shared infrastructure, so a
//! policy file cannot be forgotten; the listing is complete and every tunable listed can
//! be set to its listed default.

use std::collections::BTreeSet;
use std::path::Path;

use schedlab_sim::cpu::{INFRASTRUCTURE, MODULES, NAMES};
use schedlab_sim::SimConfig;

const TINY: &str = r#"{
    "tasks": {
        "a": {"loop": 3, "run": 2000, "sleep": 1000},
        "b": {"loop": 3, "run": 1000, "sleep": 2000}
    },
    "schedlab": {"machine": {"cpus": 2, "hz": 1000}}
}"#;

#[test]
fn every_listed_name_constructs_under_its_name_and_runs_a_spec() {
    assert!(!NAMES.is_empty());
    assert_eq!(NAMES.len(), MODULES.len());
    let listed = schedlab_sim::schedulers();
    for &name in NAMES {
        let entry = listed
            .iter()
            .find(|e| e.info.name == name)
            .unwrap_or_else(|| panic!("{name} is registered but schedulers() lacks it"));
        assert!(entry.available, "{name}");
        assert!(!entry.family.is_empty(), "{name} has no family");
        let cfg = SimConfig {
            scheduler: Some(name.into()),
            check: true,
            ..SimConfig::default()
        };
        let out = schedlab_sim::simulate_text(TINY, &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.json()["run"]["scheduler"], name);
        for t in out.json()["tasks"].as_array().unwrap() {
            assert_eq!(t["activations"], 3, "{name}: {}", t["name"]);
        }
    }
}

#[test]
fn the_listing_has_every_name_once_and_unavailable_ones_say_why() {
    let listed = schedlab_sim::schedulers();
    let names: Vec<&str> = listed.iter().map(|e| e.info.name).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "a name is listed twice: {names:?}"
    );
    let available: Vec<&str> = listed
        .iter()
        .filter(|e| e.available)
        .map(|e| e.info.name)
        .collect();
    assert_eq!(available, NAMES);
    for e in listed.iter().filter(|e| !e.available) {
        assert!(
            e.reason.as_deref().is_some_and(|r| !r.is_empty()),
            "{}",
            e.info.name
        );
        let cfg = SimConfig {
            scheduler: Some(e.info.name.into()),
            ..SimConfig::default()
        };
        let err = schedlab_sim::simulate_text(TINY, &cfg).unwrap_err();
        assert!(err.to_string().contains("unknown scheduler"), "{err}");
    }
}

/// Every file or directory under `src/cpu/` is a module the table declares: a registered
/// policy's module or listed infrastructure. A new policy file that is not registered is
/// not even compiled, so it would otherwise vanish silently.
#[test]
fn every_module_under_cpu_is_registered_or_infrastructure() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cpu");
    let declared: BTreeSet<&str> = MODULES.iter().chain(INFRASTRUCTURE).copied().collect();
    let mut seen = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("src/cpu exists") {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if !is_module || stem == "mod" {
            continue;
        }
        assert!(
            declared.contains(stem.as_str()),
            "src/cpu/{stem} is neither a registered policy nor listed infrastructure"
        );
        seen.insert(stem);
    }
    for m in declared {
        assert!(
            seen.contains(m),
            "the registry declares {m} but src/cpu has no such module"
        );
    }
}

#[test]
fn every_listed_default_is_accepted_by_its_own_tunable() {
    for e in schedlab_sim::schedulers()
        .into_iter()
        .filter(|e| e.available)
    {
        for p in &e.info.params {
            // Derived defaults are described in words, not values.
            if p.default.parse::<i64>().is_err() && !p.default.contains('-') {
                continue;
            }
            let cfg = SimConfig {
                scheduler: Some(e.info.name.into()),
                params: vec![(p.name.to_string(), p.default.clone())],
                ..SimConfig::default()
            };
            schedlab_sim::simulate_text(TINY, &cfg)
                .unwrap_or_else(|err| panic!("{} {}={}: {err}", e.info.name, p.name, p.default));
        }
    }
}

/// No policy runs a SCHED_DEADLINE task as something else: one that does not model the
/// class refuses it before the run starts (the trait's default refuses it too, so a policy
/// written from the template cannot ignore a task's runtime, deadline and period); the
/// Linux stacks with a deadline class run it there.
#[test]
fn no_policy_ignores_a_sched_deadline_task() {
    let spec = r#"{"global": {"duration": 1},
        "tasks": {"d": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000,
                        "dl-deadline": 10000, "dl-period": 10000, "run": 500, "sleep": 9000}}}"#;
    for &name in NAMES {
        let cfg = SimConfig {
            scheduler: Some(name.into()),
            ..SimConfig::default()
        };
        match schedlab_sim::simulate_text(spec, &cfg) {
            Ok(out) if ["linux-cfs", "linux-eevdf"].contains(&name) => {
                assert_eq!(out.json()["tasks"][0]["policy"], "SCHED_DEADLINE", "{name}");
            }
            Ok(out) => panic!("{name} ran it: {}", out.json()["tasks"][0]["policy"]),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("SCHED_DEADLINE"), "{name}: {msg}");
                assert!(msg.contains(name), "{name} does not name itself: {msg}");
            }
        }
    }
}

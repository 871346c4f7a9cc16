//! Every shipped example (examples/specs) passes `schedlab validate` and runs, for a short
//! simulated time, under every available scheduler: the check `validate` makes and the
//! run agree on each of them.

use schedlab_sim::{simulate_text, validate_text, SimConfig};
use std::path::PathBuf;

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("examples/specs")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("an example"))
        })
        .collect();
    out.sort();
    assert!(out.len() >= 4, "only {} examples", out.len());
    out
}

#[test]
fn every_example_validates_and_runs_under_every_scheduler() {
    let short = SimConfig {
        duration_ns: Some(200_000_000),
        ..Default::default()
    };
    for (file, text) in examples() {
        // As `schedlab validate FILE` checks it: the spec's own scheduler, else every one.
        validate_text(&text, &SimConfig::default(), &[])
            .unwrap_or_else(|e| panic!("schedlab validate {file}: {e}"));
        for s in schedlab_sim::schedulers()
            .into_iter()
            .filter(|s| s.available)
        {
            let name = s.info.name.to_string();
            let cfg = SimConfig {
                scheduler: Some(name.clone()),
                ..short.clone()
            };
            validate_text(&text, &cfg, std::slice::from_ref(&name))
                .unwrap_or_else(|e| panic!("schedlab validate -s {name} {file}: {e}"));
            let out = simulate_text(&text, &cfg)
                .unwrap_or_else(|e| panic!("schedlab run -s {name} {file}: {e}"));
            let acts: u64 = out.result.tasks.iter().map(|t| t.activations).sum();
            assert!(acts > 0, "{file} under {name}: no activation in 200 ms");
        }
    }
}

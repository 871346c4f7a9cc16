//! The bad-input corpus in tests/data/bad_specs: every file must be rejected with exactly the
//! JSON path given in expected.json and a message containing the given text. The Python CLI
//! tests read the same corpus. Entries with `"stage": "run"` are valid specs that a run
//! refuses before it starts; schedlab-sim's `tests/validate_run.rs` checks those.

use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad_specs")
}

#[test]
fn every_bad_spec_fails_with_the_expected_path_and_message() {
    let dir = corpus();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let expected = expected.as_object().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") && n != "expected.json")
        .collect();
    files.sort();
    assert!(
        files.len() >= 25,
        "the corpus has only {} files",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        let Some(want) = expected.get(f) else {
            failures.push(format!("{f}: no entry in expected.json"));
            continue;
        };
        let path = want["path"].as_str().unwrap();
        let contains = want["contains"].as_str().unwrap();
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        if want["stage"] == "run" {
            // A valid spec a run refuses before it starts: schedlab-sim's validate_run.rs.
            if let Err(e) = schedlab_spec::parse_spec(&text) {
                failures.push(format!("{f}: the spec is valid, but {e}"));
            }
            continue;
        }
        match schedlab_spec::parse_spec(&text) {
            Ok(_) => failures.push(format!("{f}: accepted")),
            Err(e) => {
                if e.path != path || !e.message.contains(contains) {
                    failures.push(format!(
                        "{f}: got {e}\n    want path {path} and a message containing {contains:?}"
                    ));
                }
            }
        }
    }
    for name in expected.keys() {
        if !files.contains(name) {
            failures.push(format!("{name}: listed in expected.json but missing"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

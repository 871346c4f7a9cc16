//! A caller stops a run through `SimConfig::cancel`, which the engine asks every 65,536
//! events (with its memory count): a `true` stops the run at that check with an error
//! that says so, and a cancel that never fires changes nothing in the result.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use schedlab_sim::budget::Cancel;
use schedlab_sim::{SimConfig, CANCELLED};
use serde_json::Value;

/// One task woken every millisecond: some 2,000 events per simulated second.
fn ticker(seconds: u32) -> String {
    format!(
        r#"{{"global": {{"duration": {seconds}}},
        "tasks": {{"ticker": {{"loop": -1, "run": 100, "timer": {{"ref": "tick", "period": 1000}}}}}}}}"#
    )
}

/// A cancel that answers `true` from its `fire_at`-th question on, and counts them.
fn counting_cancel(fire_at: u64) -> (Cancel, Arc<AtomicU64>) {
    let asked = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&asked);
    let cancel = Cancel::new(move || count.fetch_add(1, Relaxed) + 1 >= fire_at);
    (cancel, asked)
}

fn config(scheduler: &str, cancel: Option<Cancel>) -> SimConfig {
    SimConfig {
        scheduler: Some(scheduler.into()),
        cancel,
        ..SimConfig::default()
    }
}

#[test]
fn a_cancel_stops_the_run_at_the_check_that_asks_it() {
    for policy in ["fp", "linux-cfs"] {
        let (cancel, asked) = counting_cancel(3);
        let err = schedlab_sim::simulate_text(&ticker(1000), &config(policy, Some(cancel)))
            .expect_err("a cancelled run has no result");
        let schedlab_sim::RunError::Sim(e) = err else {
            panic!("{policy}: not a simulation error: {err}");
        };
        assert!(e.cancelled() && !e.bad_input, "{policy}: {e:?}");
        assert_eq!(e.message, CANCELLED);
        assert_eq!(
            asked.load(Relaxed),
            3,
            "{policy}: stopped at the third check"
        );
    }
}

#[test]
fn a_cancel_that_never_fires_changes_nothing() {
    let spec = ticker(200);
    let (cancel, asked) = counting_cancel(u64::MAX);
    let result = |cfg: &SimConfig| {
        let mut r = schedlab_sim::simulate_text(&spec, cfg)
            .expect("the run finishes")
            .json();
        r["run"]["wall_s"] = Value::Null;
        r
    };
    let with = result(&config("fp", Some(cancel)));
    assert_eq!(with, result(&config("fp", None)));
    let events = with["run"]["events"].as_u64().unwrap();
    assert!(events > 4 << 16, "long enough to be asked several times");
    assert_eq!(
        asked.load(Relaxed),
        events >> 16,
        "asked every 65,536 events"
    );
}

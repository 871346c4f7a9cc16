//! The `oltp` generator's specs through the engine: the `rate` headline counts every
//! `commit` mark (transactions per second) and its statistics are the transactions'
//! latencies; the number of transactions run is the one the options ask for.

use schedlab_sim::{SampleOutput, SimConfig};
use serde_json::Value;

fn oltp(opts: &[(&str, &str)]) -> String {
    let o: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = schedlab_spec::gen::generate("oltp", &o).unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_string(&v).unwrap()
}

fn run(text: &str) -> Value {
    let cfg = SimConfig {
        scheduler: Some("linux-cfs".into()),
        samples: SampleOutput::Summary,
        check: true,
        ..SimConfig::default()
    };
    schedlab_sim::simulate_text(text, &cfg)
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
}

/// Transactions the run committed: the rate × the simulated time.
fn commits(r: &Value) -> f64 {
    let tps = r["summary"]["headline"]["value"].as_f64().unwrap();
    tps * r["run"]["sim_ns"].as_f64().unwrap() / 1e9
}

#[test]
fn a_bounded_run_commits_exactly_the_transactions_asked_for() {
    for (mode, device) in [("read_write", "null_blk"), ("read_only", "ssd")] {
        let r = run(&oltp(&[
            ("threads", "3"),
            ("events", "40"),
            ("mode", mode),
            ("device", device),
        ]));
        assert_eq!(r["summary"]["headline"]["name"], "tps");
        assert_eq!(r["summary"]["headline"]["unit"], "1/s");
        assert!((commits(&r) - 40.0).abs() < 1e-6, "{mode}: {}", commits(&r));
        // One latency per commit: each commit's gap is from its own transaction's begin.
        assert_eq!(r["summary"]["headline"]["stats_ns"]["count"], 40);
        // Every miss is a read; (read-write) every commit's fsync writes the 4 KiB page
        // holding its 2 KiB redo record (the page cache writes whole pages; a page
        // written again while its last write is in flight is written once more when
        // that write ends), then flushes the device's cache.
        let dev = &r["devices"][0];
        assert!(
            dev["bytes_read"].as_u64().unwrap() > 0,
            "{mode}: no page was read"
        );
        let written = dev["bytes_written"].as_u64().unwrap();
        if mode == "read_write" {
            assert_eq!(written, 40 * 4096, "one redo page per commit");
        } else {
            assert_eq!(written, 0, "a read-only transaction writes no redo");
        }
    }
}

#[test]
fn transaction_latency_grows_with_the_miss_rate() {
    let latency = |miss: &str| {
        let r = run(&oltp(&[
            ("threads", "2"),
            ("events", "30"),
            ("miss_pct", miss),
            ("device", "hdd"),
        ]));
        r["summary"]["headline"]["stats_ns"]["mean"]
            .as_f64()
            .unwrap()
    };
    let (none, all) = (latency("0"), latency("100"));
    // All hits: CPU time, the redo page's write into the disk's cache and the fsync's
    // flush, which waits until the page is on the media (a seek and part of a
    // revolution); all misses: ~20 disk reads of ~10 ms on top.
    assert!(none > 4e6, "miss 0 %: {none} ns");
    assert!(
        all > 10.0 * none,
        "miss 0 %: {none} ns, miss 100 %: {all} ns"
    );
}

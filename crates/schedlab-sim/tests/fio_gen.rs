//! `schedlab gen fio`'s jobs through the engine: the I/O they do is what fio's options
//! say (numjobs × size bytes in bs requests, iodepth in flight, the read/write mix).

mod common;

use common::{run_text, task_in};

fn fio(opts: &[(&str, &str)]) -> serde_json::Value {
    let o: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = schedlab_spec::gen::generate("fio", &o).unwrap();
    run_text(&spec.to_string(), "linux-cfs", &[], None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn randread_at_depth_16_keeps_16_requests_in_flight() {
    // 1 MiB in 4 KiB random direct reads, 16 in flight on a 64-tag null_blk of 10 µs:
    // 256 requests in 16 rounds of 10 µs.
    let r = fio(&[
        ("rw", "randread"),
        ("direct", "1"),
        ("iodepth", "16"),
        ("size", "1048576"),
    ]);
    let io = &task_in(&r, "job0")["io"];
    assert_eq!(io["requests"], 256);
    assert_eq!(io["bytes_read"], 1 << 20);
    assert_eq!(io["latency_ns"]["max"], 10_000);
    assert_eq!(r["summary"]["makespan_ns"], 16 * 10_000);
    // fio's summary: 256 I/Os and 1 MiB in 160 µs, clat 10 µs each.
    let sum = &r["summary"]["io"];
    assert_eq!(sum["read"]["ios"], 256);
    assert_eq!(sum["write"]["ios"], 0);
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-6 * want;
    assert!(close(&sum["read"]["iops"], 256.0 / 160e-6), "{sum}");
    assert!(close(&sum["read"]["bw_kib_s"], 1024.0 / 160e-6), "{sum}");
    assert_eq!(sum["clat_ns"]["p99"], 10_000);
}

#[test]
fn numjobs_write_their_own_files_and_the_mix_is_kept() {
    let r = fio(&[
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("direct", "1"),
        ("numjobs", "2"),
        ("size", "409600"),
    ]);
    for j in ["job0", "job1"] {
        let io = &task_in(&r, j)["io"];
        // 100 requests of 4 KiB: 70 reads, 30 writes.
        assert_eq!(io["bytes_read"], 70 * 4096, "{j}");
        assert_eq!(io["bytes_written"], 30 * 4096, "{j}");
    }
}

#[test]
fn prioclass_sets_the_jobs_io_priority() {
    let o: Vec<(String, String)> = [("prioclass", "1"), ("prio", "2")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = schedlab_spec::gen::generate("fio", &o).unwrap();
    assert_eq!(
        spec["tasks"]["job0"]["schedlab:ioprio"],
        serde_json::json!({"class": "rt", "level": 2})
    );
}

//! Kyber (block/kyber-iosched.c, Linux 6.1) through the engine, on null_blk devices:
//! every request completes exactly once; a domain starts with `kyber_depth` tokens (256
//! reads, 128 writes in flight at most, whatever the device takes); when reads take
//! longer than their 2 ms target on the device, the 100 ms timer throttles the writes,
//! whose latency is within their 10 ms target, and reads stop queueing behind them.

mod common;

use schedlab_sim::SimConfig;
use serde_json::Value;

const MS: u64 = 1_000_000;

fn run(text: &str) -> Value {
    common::run_io(text, None)
}

/// `tasks` on 4 CPUs, one null_blk `nvme0` of `depth` tags and `completion_ns`.
fn spec(
    tasks: &str,
    elevator: &str,
    depth: u32,
    completion_ns: u64,
    duration_s: Option<f64>,
) -> String {
    let global = duration_s.map_or(String::new(), |d| {
        format!(r#""global": {{"duration": {d}}},"#)
    });
    format!(
        r#"{{
        {global}
        "tasks": {{ {tasks} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nvme0": {{"model": "null_blk", "completion_ns": {completion_ns},
                                   "queue_depth": {depth}, "scheduler": "{elevator}"}}}}
        }}
    }}"#
    )
}

/// A 4 KiB `op`, each at the same sector for every task doing `op` (reads at the start,
/// writes a GiB in): requests with the same start are never adjacent, so none merge.
fn io(op: &str) -> String {
    let offset: u64 = if op == "read" { 0 } else { 1 << 30 };
    format!(r#""schedlab:io": {{"dev": "nvme0", "op": "{op}", "bytes": 4096, "offset": {offset}}}"#)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Tasks whose name starts with `prefix`: (requests submitted, time asleep on them).
fn per_request(r: &Value, prefix: &str) -> (u64, u64) {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with(prefix))
        .fold((0, 0), |(n, s), t| {
            (n + u(&t["switches_voluntary"]), s + u(&t["sleep_ns"]))
        })
}

/// `n` tasks submit one `op` each at time 0 to a device that takes 1024 at once.
fn one_burst(op: &str, n: u32) -> Value {
    let tasks = format!(r#""t": {{"instance": {n}, "loop": 1, {}}}"#, io(op));
    let r = run(&spec(&tasks, "kyber", 1024, MS, None));
    assert_eq!(u(&r["devices"][0]["merges"]), 0);
    assert_eq!(
        u(&r["devices"][0]["requests"]),
        n as u64,
        "each completes once"
    );
    assert_eq!(per_request(&r, "t").0, n as u64);
    assert_eq!(r["summary"]["blocked_at_end"], 0);
    r
}

#[test]
fn reads_start_with_256_tokens_and_writes_with_128() {
    // Within the tokens every request is on the device at once: done in one service time.
    assert_eq!(u(&one_burst("read", 256)["summary"]["makespan_ns"]), MS);
    assert_eq!(u(&one_burst("write", 128)["summary"]["makespan_ns"]), MS);
    // One more waits for a token to come back.
    assert_eq!(u(&one_burst("read", 257)["summary"]["makespan_ns"]), 2 * MS);
    let r = one_burst("write", 129);
    assert_eq!(u(&r["summary"]["makespan_ns"]), 2 * MS);
    assert_eq!(u(&r["devices"][0]["latency_ns"]["max"]), 2 * MS);
}

/// 16 readers and 16 writers, each with one request at a time, for `seconds` on a device
/// of 24 tags taking 3 ms a request: (reads, time readers slept, writes).
fn mixed(elevator: &str, seconds: f64) -> (u64, u64, u64) {
    let tasks = format!(
        r#""reader": {{"instance": 16, "loop": -1, {}}},
           "writer": {{"instance": 16, "loop": -1, {}}}"#,
        io("read"),
        io("write")
    );
    let r = run(&spec(&tasks, elevator, 24, 3 * MS, Some(seconds)));
    // Each completed request woke its task once; every task has one request on the device
    // or waiting for a token when the run ends.
    assert_eq!(u(&r["summary"]["blocked_at_end"]), 32);
    assert_eq!(u(&r["devices"][0]["merges"]), 0);
    assert_eq!(
        u(&r["devices"][0]["requests"]),
        per_request(&r, "reader").0 + per_request(&r, "writer").0 - 32,
    );
    let (reads, read_sleep) = per_request(&r, "reader");
    let (writes, _) = per_request(&r, "writer");
    (reads, read_sleep, writes)
}

/// What happens between 3 s and 6 s (the runs are identical up to 3 s): (mean read
/// latency, writes per second).
fn steady_state(elevator: &str) -> (f64, f64) {
    let (reads_3, sleep_3, writes_3) = mixed(elevator, 3.0);
    let (reads_6, sleep_6, writes_6) = mixed(elevator, 6.0);
    let latency = (sleep_6 - sleep_3) as f64 / (reads_6 - reads_3) as f64;
    (latency, (writes_6 - writes_3) as f64 / 3.0)
}

#[test]
fn reads_over_target_throttle_writes_until_reads_no_longer_wait() {
    // First come, first served: 32 requests on 24 tags, 4 ms each.
    let (latency, writes_per_s) = steady_state("none");
    assert!(
        (latency - 4e6).abs() < 0.02 * 4e6,
        "none: read latency {latency}"
    );
    assert!(
        (writes_per_s - 4000.0).abs() < 0.02 * 4000.0,
        "none: {writes_per_s} writes/s"
    );

    // Kyber: the device's 3 ms is over the 2 ms read target (p90 of I/O latency in bucket
    // 5 of quarters of it: congestion), while writes' p99 total latency is within half to
    // three quarters of their 10 ms target (bucket 2): each adjustment scales the write
    // depth by (2 + 1) / 4, 128 → 96 → 72 → 54 → 40 → 30 → 22 → 16 → 12 → 9 → 6, until
    // the writers' own waits for tokens bring their p99 into the last bucket within target
    // (× 4/4). With 6 write tokens, 16 reads and 6 writes fit the 24 tags: no read waits.
    let (latency, writes_per_s) = steady_state("kyber");
    assert!(
        (latency - 3e6).abs() < 0.01 * 3e6,
        "kyber: read latency {latency}"
    );
    let write_tokens = writes_per_s * 3e-3;
    assert!(
        (write_tokens - 6.0).abs() < 0.1,
        "kyber: {write_tokens} writes in flight"
    );
}

#[test]
fn a_latency_target_that_is_not_a_number_is_refused_naming_the_tunable() {
    let text = spec(
        &format!(r#""r": {{"loop": 1, {}}}"#, io("read")),
        "kyber",
        1,
        MS,
        None,
    )
    .replace(
        r#""scheduler": "kyber""#,
        r#""scheduler": "kyber", "params": {"read_lat_nsec": "2ms"}"#,
    );
    let e = schedlab_sim::simulate_text(&text, &SimConfig::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("device nvme0 scheduler kyber: read_lat_nsec=2ms: '2ms' is not a non-negative integer (ns)"),
        "{e}"
    );
}

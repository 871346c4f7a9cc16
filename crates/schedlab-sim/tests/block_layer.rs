//! The block layer's own mechanisms through the engine: bios of different tasks merged
//! into one request (Linux 6.1 `elv_merge`: the one-hit cache, then the back-merge hash),
//! every waiting task woken at the merged request's completion, the `queue/nomerges` and
//! `queue/max_sectors_kb` limits.

mod common;

use common::{run_text, task_in};

/// A 4-CPU machine with one null_blk device of one tag, 10 µs per request, and `params`
/// (a JSON object's body) as its tunables.
fn spec(tasks: &str, params: &str) -> String {
    format!(
        r#"{{
        "tasks": {{ {tasks} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 10000,
                                     "queue_depth": 1, "scheduler": "none",
                                     "params": {{ {params} }}}}}}
        }}
    }}"#
    )
}

/// One read of 4 KiB at byte `offset` by task `name` (tasks start in declaration order at
/// time 0, each on its own CPU).
fn reader(name: &str, offset: u64) -> String {
    format!(
        r#""{name}": {{"loop": 1, "schedlab:io": {{"dev": "nullb0", "op": "read", "bytes": 4096, "offset": {offset}}}}}"#
    )
}

fn run(text: &str) -> serde_json::Value {
    run_text(text, "linux-cfs", &[], None).unwrap_or_else(|e| panic!("{e}"))
}

/// `blocker` takes the device's one tag for 10 µs; `a` (sectors 0..8) and `b` (8..16) wait
/// behind it, so `b`'s bio can join `a`'s queued request.
fn two_adjacent(params: &str) -> String {
    let tasks = [
        reader("blocker", 1 << 30),
        reader("a", 0),
        reader("b", 4096),
    ]
    .join(",");
    spec(&tasks, params)
}

#[test]
fn adjacent_requests_of_two_tasks_merge_and_both_tasks_wake_at_its_completion() {
    let r = run(&two_adjacent(""));
    let dev = &r["devices"][0];
    assert_eq!(dev["merges"], 1);
    assert_eq!(dev["requests"], 2, "blocker's, and a's with b's bio in it");
    assert_eq!(dev["bytes_read"], 3 * 4096);
    // The merged request waited for the blocker, then took one service time.
    assert_eq!(dev["latency_ns"]["max"], 20_000);
    for t in ["a", "b"] {
        assert_eq!(task_in(&r, t)["sleep_ns"], 20_000, "{t}");
        assert_eq!(task_in(&r, t)["activations"], 1, "{t} woken once");
        // Each task's own request, as it saw it: submitted at 0, completed at 20 µs.
        let io = &task_in(&r, t)["io"];
        assert_eq!(io["requests"], 1, "{t}");
        assert_eq!(io["bytes_read"], 4096, "{t}");
        assert_eq!(io["bytes_written"], 0, "{t}");
        assert_eq!(io["latency_ns"]["max"], 20_000, "{t}");
    }
    assert_eq!(task_in(&r, "blocker")["io"]["latency_ns"]["max"], 10_000);
    assert_eq!(r["summary"]["makespan_ns"], 20_000);
}

#[test]
fn nomerges_2_keeps_every_bio_in_its_own_request() {
    let r = run(&two_adjacent(r#""queue/nomerges": "2""#));
    let dev = &r["devices"][0];
    assert_eq!(dev["merges"], 0);
    assert_eq!(dev["requests"], 3);
    assert_eq!(task_in(&r, "a")["sleep_ns"], 20_000);
    assert_eq!(task_in(&r, "b")["sleep_ns"], 30_000);
}

#[test]
fn max_sectors_kb_refuses_a_merge_that_would_exceed_it() {
    let r = run(&two_adjacent(r#""queue/max_sectors_kb": "4""#));
    assert_eq!(r["devices"][0]["merges"], 0);
    assert_eq!(r["devices"][0]["requests"], 3);
    let r = run(&two_adjacent(r#""queue/max_sectors_kb": "8""#));
    assert_eq!(r["devices"][0]["merges"], 1, "8 KiB fits exactly");
}

#[test]
fn nomerges_1_merges_only_into_the_one_hit_cache() {
    // a (sectors 0..8) is the first queued request: the one-hit cache. c (2048..2056)
    // queues behind it; b joins a through the cache, d joins c only through the hash.
    let tasks = [
        reader("blocker", 1 << 30),
        reader("a", 0),
        reader("c", 1 << 20),
        reader("b", 4096),
    ]
    .join(",");
    let d = r#""d": {"delay": 1, "loop": 1, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 1052672}}"#;
    let tasks = format!("{tasks}, {d}");
    let merges = |params: &str| run(&spec(&tasks, params))["devices"][0]["merges"].clone();
    assert_eq!(merges(""), 2);
    assert_eq!(merges(r#""queue/nomerges": "1""#), 1);
    assert_eq!(merges(r#""queue/nomerges": "2""#), 0);
}

#[test]
fn bios_of_different_io_priorities_do_not_merge() {
    let tasks = [
        reader("blocker", 1 << 30),
        reader("a", 0),
        r#""b": {"loop": 1, "schedlab:ioprio": {"class": "be", "level": 0},
                 "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 4096}}"#
            .to_string(),
    ]
    .join(",");
    let r = run(&spec(&tasks, ""));
    assert_eq!(r["devices"][0]["merges"], 0);
}

#[test]
fn every_bio_completes_once_when_many_tasks_merge() {
    // Eight writers, each writing its own 4 KiB blocks sequentially from sector 0, through
    // two tags: their requests touch each other's and merge in many ways.
    let text = r#"{
        "tasks": {
            "w": {"instance": 8, "loop": 25, "run": 3,
                  "schedlab:io": {"dev": "nullb0", "op": "write", "bytes": 4096}}
        },
        "schedlab": {
            "machine": {"cpus": 2, "hz": 1000},
            "devices": {"nullb0": {"model": "null_blk", "completion_ns": 10000,
                                   "queue_depth": 2, "scheduler": "none"}}
        }
    }"#;
    let r = run(text);
    let dev = &r["devices"][0];
    let merges = dev["merges"].as_u64().unwrap();
    assert!(merges > 0, "sequential writers merged: {dev}");
    assert_eq!(dev["requests"].as_u64().unwrap() + merges, 8 * 25);
    assert_eq!(dev["bytes_written"], 8 * 25 * 4096);
    for t in r["tasks"].as_array().unwrap() {
        assert_eq!(t["activations"], 25, "{}: woken once per bio", t["name"]);
    }
    assert_eq!(r["summary"]["blocked_at_end"], 0);
}

/// One task's `schedlab:io` op with `keys` (a JSON object's body) on device nullb0 of
/// `depth` tags.
fn one_op(keys: &str, tags: u32, params: &str) -> String {
    format!(
        r#"{{
        "tasks": {{ "t": {{"loop": 1, "schedlab:io": {{ {keys} }}}} }},
        "schedlab": {{
            "machine": {{"cpus": 1, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 10000,
                                     "queue_depth": {tags}, "scheduler": "none",
                                     "params": {{ {params} }}}}}},
            "files": {{"f": {{"dev": "nullb0", "offset": 1048576, "bytes": 65536}}}}
        }}
    }}"#
    )
}

#[test]
fn a_batch_of_more_than_two_requests_is_plugged_and_merged_on_the_plug() {
    // io_submit of 8 sequential 4 KiB writes (more than AIO_PLUG_THRESHOLD): they meet on
    // the task's plug and leave it as one 32 KiB request.
    let r = run(&one_op(
        r#""dev": "nullb0", "op": "write", "bytes": 4096, "count": 8, "depth": 8"#,
        64,
        "",
    ));
    let dev = &r["devices"][0];
    assert_eq!(dev["requests"], 1);
    assert_eq!(dev["merges"], 7);
    assert_eq!(dev["bytes_written"], 8 * 4096);
    let t = task_in(&r, "t");
    assert_eq!(t["sleep_ns"], 10_000, "one service time for all eight");
    assert_eq!(
        t["activations"], 1,
        "woken once, when the last bio completed"
    );
}

#[test]
fn two_requests_are_not_plugged_and_go_out_separately() {
    // Two requests are at most AIO_PLUG_THRESHOLD: each goes to the device at once.
    let r = run(&one_op(
        r#""dev": "nullb0", "op": "write", "bytes": 4096, "count": 2, "depth": 2"#,
        64,
        "",
    ));
    assert_eq!(r["devices"][0]["requests"], 2);
    assert_eq!(r["devices"][0]["merges"], 0);
    assert_eq!(
        task_in(&r, "t")["sleep_ns"],
        10_000,
        "both in flight at once"
    );
}

#[test]
fn the_plug_keeps_requests_apart_under_nomerges_2() {
    let r = run(&one_op(
        r#""dev": "nullb0", "op": "write", "bytes": 4096, "count": 8, "depth": 8"#,
        64,
        r#""queue/nomerges": "2""#,
    ));
    assert_eq!(r["devices"][0]["requests"], 8);
    assert_eq!(r["devices"][0]["merges"], 0);
}

#[test]
fn depth_bounds_the_requests_in_flight() {
    // 12 random reads (no merges) with 4 in flight on a device of 64 tags: three rounds
    // of 10 µs, each completion letting the task submit one more.
    let r = run(&one_op(
        r#""dev": "nullb0", "op": "read", "bytes": 4096, "offset": "random", "count": 12, "depth": 4"#,
        64,
        "",
    ));
    let dev = &r["devices"][0];
    assert_eq!(dev["requests"], 12);
    assert_eq!(dev["merges"], 0);
    assert_eq!(
        dev["latency_ns"]["max"], 10_000,
        "never more than the tags allow"
    );
    assert_eq!(task_in(&r, "t")["sleep_ns"], 30_000);
    assert_eq!(r["summary"]["makespan_ns"], 30_000);
}

#[test]
fn depth_one_submits_one_request_at_a_time() {
    let r = run(&one_op(
        r#""dev": "nullb0", "op": "read", "bytes": 4096, "offset": "random", "count": 5"#,
        64,
        "",
    ));
    assert_eq!(r["devices"][0]["requests"], 5);
    assert_eq!(task_in(&r, "t")["sleep_ns"], 50_000);
    assert_eq!(task_in(&r, "t")["activations"], 5);
}

/// The start sectors of the requests `text` issues, from its ftrace output.
fn issued_sectors(text: &str) -> Vec<u64> {
    let trace = common::trace_of(text, "blklayer");
    let issue = regex::Regex::new(r"block_rq_issue: 251,0 [RW] \d+ \(\) (\d+) \+").unwrap();
    issue
        .captures_iter(&trace)
        .map(|c| c[1].parse().unwrap())
        .collect()
}

#[test]
fn sequential_requests_on_a_file_stay_inside_it_and_wrap_at_its_end() {
    // The file is 64 KiB at 1 MiB: 20 sequential 8 KiB reads, one at a time, walk it
    // twice and a half, sectors 2048.. 2160 then back to 2048.
    let sectors = issued_sectors(&one_op(
        r#""file": "f", "op": "read", "bytes": 8192, "count": 20"#,
        64,
        "",
    ));
    let expect: Vec<u64> = (0..20).map(|i| 2048 + (i % 8) * 16).collect();
    assert_eq!(sectors, expect);
}

#[test]
fn plug_merges_grow_a_request_up_to_max_sectors_kb() {
    // 40 sequential 4 KiB writes in one io_submit merge on the plug into one 160 KiB
    // request; with max_sectors_kb = 128 the 33rd starts a second request.
    let batch = r#""dev": "nullb0", "op": "write", "bytes": 4096, "count": 40, "depth": 40"#;
    let r = run(&one_op(batch, 64, ""));
    assert_eq!(r["devices"][0]["requests"], 1);
    assert_eq!(r["devices"][0]["merges"], 39);
    let limited = one_op(batch, 64, r#""queue/max_sectors_kb": "128""#);
    assert_eq!(run(&limited)["devices"][0]["merges"], 38);
    assert_eq!(issued_sectors(&limited), vec![0, 256]);
}

#[test]
fn random_requests_on_a_file_stay_inside_it() {
    let r = run(&one_op(
        r#""file": "f", "op": "write", "bytes": 4096, "offset": "random", "count": 50, "depth": 50"#,
        64,
        "",
    ));
    // Each of the 50 lands in one of the file's 16 blocks: many touch and merge, and the
    // bytes written are exactly what was asked.
    assert_eq!(r["devices"][0]["bytes_written"], 50 * 4096);
    let text = one_op(
        r#""file": "f", "op": "write", "bytes": 4096, "offset": "random", "count": 50"#,
        64,
        "",
    );
    let sectors = issued_sectors(&text);
    assert_eq!(sectors.len(), 50);
    assert!(
        sectors.iter().all(|s| (2048..=2048 + 120).contains(s)),
        "{sectors:?}"
    );
    let dev = &r["devices"][0];
    assert_eq!(
        dev["requests"].as_u64().unwrap() + dev["merges"].as_u64().unwrap(),
        50
    );
}

#[test]
fn the_trace_shows_requests_entering_the_scheduler_but_not_bios_merged_into_them() {
    // blocker's and a's requests are inserted (block_rq_insert); b's bio joins a's.
    let dir = std::env::temp_dir().join(format!("schedlab-blkins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.trace");
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some("linux-cfs".into()),
        trace: Some(path.clone()),
        check: true,
        ..Default::default()
    };
    schedlab_sim::simulate_text(&two_adjacent(""), &cfg).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let insert = regex::Regex::new(
        r"(\w+)-\d+ .* block_rq_insert: 251,0 R \d+ \(\) (\d+) \+ (\d+) \[(\w+)\]",
    )
    .unwrap();
    let got: Vec<(String, u64, u64)> = insert
        .captures_iter(&text)
        .map(|c| {
            (
                c[4].to_string(),
                c[2].parse().unwrap(),
                c[3].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [("blocker".to_string(), 2097152, 8), ("a".to_string(), 0, 8)],
        "{text}"
    );
    // The merged request is issued whole.
    assert!(
        text.contains("block_rq_issue: 251,0 R 8192 () 0 + 16 [swapper]"),
        "{text}"
    );
}

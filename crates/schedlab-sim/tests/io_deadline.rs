//! The deadline family of I/O schedulers through the engine: `noop` and `deadline`
//! (Linux 3.12), seed 004's `deadline-lowprio`, and `mq-deadline` (Linux 6.1), on a
//! null_blk device whose every request takes exactly `completion_ns`. A task that sleeps,
//! submits one request and exits has slept until that request completed, so its
//! `sleep_ns` is the request's completion time.

mod common;

use schedlab_sim::SimConfig;
use serde_json::Value;

const MS: u64 = 1_000_000;

fn run(text: &str) -> Value {
    run_traced(text, None)
}

fn run_traced(text: &str, trace: Option<std::path::PathBuf>) -> Value {
    common::run_io(text, trace)
}

/// A spec of `tasks` (JSON members) on one null_blk device.
fn spec(tasks: &[String], depth: u32, completion_ns: u64, elevator: &str, params: &str) -> String {
    format!(
        r#"{{
        "tasks": {{ {} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": {completion_ns},
                                     "queue_depth": {depth}, "scheduler": "{elevator}",
                                     "params": {{ {params} }}}}}}
        }}
    }}"#,
        tasks.join(",\n")
    )
}

/// A task that sleeps `delay_us`, then submits one request at `sector` and exits.
fn one_request(name: &str, delay_us: u64, op: &str, sector: u64, ioprio: &str) -> String {
    let sleep = if delay_us > 0 {
        format!(r#""sleep": {delay_us}, "#)
    } else {
        String::new()
    };
    let prio = if ioprio.is_empty() {
        String::new()
    } else {
        format!(r#""schedlab:ioprio": {{"class": "{ioprio}"}}, "#)
    };
    format!(
        r#""{name}": {{"loop": 1, {prio}{sleep}"schedlab:io": {{"dev": "nullb0", "op": "{op}", "bytes": 4096, "offset": {}}}}}"#,
        sector * 512
    )
}

fn task<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

/// When the one request of task `name` completed.
fn done(r: &Value, name: &str) -> u64 {
    task(r, name)["sleep_ns"].as_u64().unwrap()
}

const ELEVATORS: &[&str] = &[
    "none",
    "noop",
    "deadline",
    "deadline-lowprio",
    "mq-deadline",
];

#[test]
fn every_request_completes_exactly_once_under_each_scheduler() {
    let io = |op: &str, off: &str| {
        format!(
            r#""schedlab:io": {{"dev": "nullb0", "op": "{op}", "bytes": 8192, "offset": {off}}}"#
        )
    };
    let tasks = [
        format!(
            r#""reader": {{"instance": 3, "loop": 50, "run": 20, {}}}"#,
            io("read", r#""random""#)
        ),
        format!(
            r#""writer": {{"instance": 2, "loop": 50, {}}}"#,
            io("write", r#""seq""#)
        ),
        format!(
            r#""idle": {{"loop": 20, "schedlab:ioprio": {{"class": "idle"}}, {}}}"#,
            io("read", r#""random""#)
        ),
        format!(
            r#""rt": {{"loop": 20, "schedlab:ioprio": {{"class": "rt"}}, "sleep": 300, {}}}"#,
            io("write", r#""random""#)
        ),
    ];
    let dir = std::env::temp_dir().join(format!("schedlab-io-deadline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for elevator in ELEVATORS {
        let path = dir.join(format!("{elevator}.trace"));
        let r = run_traced(&spec(&tasks, 4, 100_000, elevator, ""), Some(path.clone()));
        let dev = &r["devices"][0];
        // The trace shows each request issued once and completed once.
        let trace = std::fs::read_to_string(&path).unwrap();
        let issued = trace.matches("block_rq_issue:").count() as u64;
        let completed = trace.matches("block_rq_complete:").count() as u64;
        assert_eq!(
            (issued, completed),
            (dev["requests"].as_u64().unwrap(), issued),
            "{elevator}"
        );
        assert_eq!(dev["scheduler"], *elevator);
        // Requests that merged into others were not completed on their own.
        let completed = dev["requests"].as_u64().unwrap() + dev["merges"].as_u64().unwrap();
        assert_eq!(completed, 3 * 50 + 2 * 50 + 20 + 20, "{elevator}");
        assert_eq!(dev["bytes_read"], (3 * 50 + 20) * 8192, "{elevator}");
        assert_eq!(dev["bytes_written"], (2 * 50 + 20) * 8192, "{elevator}");
        for t in r["tasks"].as_array().unwrap() {
            let loops = match t["name"].as_str().unwrap() {
                n if n.starts_with("reader") || n.starts_with("writer") => 50,
                _ => 20,
            };
            // One uninterruptible sleep per request (and one per `sleep` of `rt`): every
            // request woke its task exactly once.
            let sleeps = if t["name"] == "rt" { 2 * loops } else { loops };
            assert_eq!(t["switches_voluntary"], sleeps, "{elevator} {}", t["name"]);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Seed 004's scenario in miniature for the FIFO test: on a one-tag device busy with
/// `first` (sector 400) for the first millisecond, `second` (sector 450, 10 µs) is the
/// oldest request then and starts a batch that sweeps up through `hi0..hi19` (sectors
/// 600 + 16k, queued at 100 + k µs: 4 KiB each, not adjacent, so none merge); `victim` (sector 0, queued at 50 µs) lies behind the
/// sweep. Returns when `victim` completed.
fn victim_done(elevator: &str, params: &str) -> u64 {
    let mut tasks = vec![
        one_request("first", 0, "read", 400, ""),
        one_request("second", 10, "read", 450, ""),
        one_request("victim", 50, "read", 0, ""),
    ];
    for k in 0..20 {
        tasks.push(one_request(
            &format!("hi{k:02}"),
            100 + k,
            "read",
            600 + 16 * k,
            "",
        ));
    }
    let r = run(&spec(&tasks, 1, MS, elevator, params));
    assert_eq!(r["devices"][0]["requests"], 23);
    done(&r, "victim")
}

#[test]
fn deadline_serves_an_expired_read_at_the_end_of_the_batch_not_in_sector_order() {
    // Not expired: second at 1 ms, hi00..hi19 at 2..21 ms, the sweep ends, and the FIFO's
    // oldest (victim) goes at 22 ms.
    assert_eq!(victim_done("deadline", ""), 23 * MS);
    // read_expire 5 ms: at the end of the first batch (16 requests, t = 17 ms) the oldest
    // read has expired and is served before the sweep's next request.
    assert_eq!(victim_done("deadline", r#""read_expire": 5"#), 18 * MS);
    // The batch length is fifo_batch: with 4 (8) the expired victim goes at 5 (9) ms.
    for batch in [4, 8] {
        let params = format!(r#""read_expire": 2, "fifo_batch": {batch}"#);
        assert_eq!(
            victim_done("deadline", &params),
            (batch + 2) * MS,
            "{params}"
        );
    }
    // mq-deadline runs the same batches and expiry within a class.
    assert_eq!(victim_done("mq-deadline", r#""read_expire": 5"#), 18 * MS);
    assert_eq!(victim_done("mq-deadline", ""), 23 * MS);
    // noop serves in arrival order: victim is third.
    assert_eq!(victim_done("noop", ""), 3 * MS);
}

/// `first` (a read at sector 400) holds the one tag for 1 ms; `writer` queues a write at
/// 50 µs, `r00..r11` reads at 100 + k µs (sectors 600 + 16k, not adjacent). Returns when the write completed.
fn write_done(params: &str) -> u64 {
    let mut tasks = vec![
        one_request("first", 0, "read", 400, ""),
        one_request("writer", 50, "write", 0, ""),
    ];
    for k in 0..12 {
        tasks.push(one_request(
            &format!("r{k:02}"),
            100 + k,
            "read",
            600 + 16 * k,
            "",
        ));
    }
    let r = run(&spec(&tasks, 1, MS, "deadline", params));
    assert_eq!(r["devices"][0]["requests"], 14);
    done(&r, "writer")
}

#[test]
fn deadline_gives_writes_the_device_after_writes_starved_read_batches() {
    // fifo_batch 4: each read batch is 4 ms; the write starts at 1 + 4 · writes_starved ms.
    for starved in [0, 1, 2] {
        let params = format!(r#""fifo_batch": 4, "writes_starved": {starved}"#);
        assert_eq!(write_done(&params), (2 + 4 * starved) * MS, "{params}");
    }
    // The default is 2.
    assert_eq!(write_done(r#""fifo_batch": 4"#), 10 * MS);
    // A negative writes_starved is a huge unsigned bound in the kernel's comparison:
    // writes wait for every read (12 reads after first, the write at 13 ms).
    assert_eq!(
        write_done(r#""fifo_batch": 4, "writes_starved": -1"#),
        14 * MS
    );
}

/// Ten idle-class tasks each queue one read at 0 while `normal` reads every 10 ms (at
/// 9, 19, …, 999 ms) on a 64-tag device.
fn lowprio_run(elevator: &str) -> (Vec<u64>, Value) {
    let mut tasks: Vec<String> = (0..10)
        .map(|k| one_request(&format!("low{k}"), 0, "read", 1 << 20, "idle"))
        .collect();
    tasks.push(
        r#""normal": {"loop": 100, "sleep": 9000, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096}}"#
            .to_string(),
    );
    let params = if elevator == "deadline-lowprio" {
        r#""alpha_ms": 200, "beta_ms": 500"#
    } else {
        ""
    };
    let r = run(&spec(&tasks, 64, MS, elevator, params));
    assert_eq!(r["devices"][0]["requests"], 110);
    let mut low: Vec<u64> = (0..10).map(|k| done(&r, &format!("low{k}"))).collect();
    low.sort_unstable();
    (low, r)
}

#[test]
fn deadline_lowprio_releases_one_low_request_per_alpha_then_all_beta_after_the_last_normal_one() {
    let (low, r) = lowprio_run("deadline-lowprio");
    // α = 200 ms: one released at 200, 400, …, 1400 ms (each done 1 ms later) while the
    // scheduler stays in normal mode; the last normal request arrives at 999 ms, so batch
    // mode starts at 1499 ms and releases the other three at once.
    let mut expected: Vec<u64> = (1..=7).map(|k| k * 200 * MS + MS).collect();
    expected.extend([1500 * MS; 3]);
    assert_eq!(low, expected);
    // Normal requests are never held: each takes the device time alone.
    assert_eq!(task(&r, "normal")["sleep_ns"], 100 * (9 * MS + MS));
    // Plain deadline holds nothing back: every low request is done at 1 ms.
    let (low, _) = lowprio_run("deadline");
    assert_eq!(low, vec![MS; 10]);
}

#[test]
fn deadline_lowprio_leaves_batch_mode_at_the_next_normal_request() {
    // `early` reads at 9, 19, …, 99 ms; `late` at 809, 819, …, 899 ms. Batch mode runs
    // from 599 ms (β after 99 ms) to 809 ms: a low request then is released at once; one
    // before or after waits for the α timer armed when it was held.
    let normal = |name: &str, delay: &str| {
        format!(
            r#""{name}": {{"loop": 1, "phases": {{ {delay} "p": {{"loop": 10, "sleep": 9000, "schedlab:io": {{"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 0}}}}}}}}"#
        )
    };
    let tasks = [
        normal("early", ""),
        normal("late", r#""d": {"sleep": 800000},"#),
        one_request("low_start", 0, "read", 1 << 20, "idle"),
        one_request("low_batch", 700_000, "read", 1 << 21, "idle"),
        one_request("low_after", 900_000, "read", 1 << 22, "idle"),
    ];
    let r = run(&spec(&tasks, 64, MS, "deadline-lowprio", ""));
    assert_eq!(
        [
            done(&r, "low_start"),
            done(&r, "low_batch"),
            done(&r, "low_after")
        ],
        [201 * MS, 701 * MS, 1101 * MS]
    );
}

#[test]
fn mq_deadline_serves_rt_before_be_before_idle() {
    // One tag, busy with `first` (BE) for 1 ms; idle, BE and RT requests queue in that
    // order; they are served by class.
    let tasks = [
        one_request("first", 0, "read", 400, ""),
        one_request("idle", 50, "read", 0, "idle"),
        one_request("be", 60, "read", 8, "be"),
        one_request("rt", 70, "read", 16, "rt"),
    ];
    let r = run(&spec(&tasks, 1, MS, "mq-deadline", ""));
    assert_eq!(
        [done(&r, "rt"), done(&r, "be"), done(&r, "idle")],
        [2 * MS, 3 * MS, 4 * MS]
    );
    // Under deadline, which knows no classes, they go in FIFO order (sector order does
    // not start a batch: nothing followed `first` when it was dispatched).
    let r = run(&spec(&tasks, 1, MS, "deadline", ""));
    assert_eq!(
        [done(&r, "idle"), done(&r, "be"), done(&r, "rt")],
        [2 * MS, 3 * MS, 4 * MS]
    );
}

#[test]
fn mq_deadline_holds_a_lower_class_while_a_higher_one_is_in_flight() {
    // dd_queued counts requests until they complete: with 64 free tags the BE request
    // still waits for the RT one to finish.
    let tasks = [
        one_request("rt", 0, "read", 0, "rt"),
        one_request("be", 50, "read", 8, "be"),
    ];
    let r = run(&spec(&tasks, 64, MS, "mq-deadline", ""));
    assert_eq!(done(&r, "be"), 2 * MS);
    let r = run(&spec(&tasks, 64, MS, "none", ""));
    assert_eq!(done(&r, "be"), MS + 50_000);
}

#[test]
fn mq_deadline_ages_a_starved_class_after_prio_aging_expire() {
    // Two RT readers (each rereading its own sector, so nothing merges) keep one RT
    // request queued and one in flight on a one-tag device for 120 ms; a BE read queued
    // at 50 µs.
    let tasks = [
        r#""rt_a": {"loop": 60, "schedlab:ioprio": {"class": "rt"}, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 0}}"#.to_string(),
        r#""rt_b": {"loop": 60, "schedlab:ioprio": {"class": "rt"}, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096, "offset": 524288}}"#.to_string(),
        one_request("be", 50, "read", 1 << 20, "be"),
    ];
    // Default aging (10 s): the BE request waits for the last RT request.
    let r = run(&spec(&tasks, 1, MS, "mq-deadline", ""));
    assert_eq!(done(&r, "be"), 121 * MS);
    // prio_aging_expire 20 ms: at the first dispatch 20 ms after it was queued (21 ms).
    let r = run(&spec(
        &tasks,
        1,
        MS,
        "mq-deadline",
        r#""prio_aging_expire": 20"#,
    ));
    assert_eq!(done(&r, "be"), 22 * MS);
    assert_eq!(r["devices"][0]["requests"], 121);
}

#[test]
fn bad_tunables_are_refused_naming_the_device_and_the_parameter() {
    let tasks = [one_request("a", 0, "read", 0, "")];
    for (elevator, params, message) in [
        (
            "deadline",
            r#""fifo_batch": "many""#,
            r#"device nullb0 scheduler deadline: fifo_batch=many: expected an integer, found "many""#,
        ),
        (
            "mq-deadline",
            r#""quantum": 4"#,
            "device nullb0 scheduler mq-deadline: quantum=4: unknown parameter 'quantum'",
        ),
        (
            "deadline-lowprio",
            r#""alpha_ms": 1.5"#,
            r#"device nullb0 scheduler deadline-lowprio: alpha_ms=1.5: expected an integer, found "1.5""#,
        ),
    ] {
        let e = schedlab_sim::simulate_text(
            &spec(&tasks, 1, MS, elevator, params),
            &SimConfig::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(message), "{e}");
    }
}

/// On a one-tag device busy with `first` for 1 ms: `x` (sector 1000) is queued first and
/// holds the block layer's one-hit merge cache, `a` queues a read at sector 16, then `b`
/// a read of sectors 8..16, which only the elevator's sort list offers for a front merge.
fn front_merge_run(elevator: &str, params: &str) -> Value {
    let tasks = [
        one_request("first", 0, "read", 400, ""),
        one_request("x", 10, "read", 1000, ""),
        one_request("a", 20, "read", 16, ""),
        one_request("b", 30, "read", 8, ""),
    ];
    run(&spec(&tasks, 1, MS, elevator, params))
}

#[test]
fn the_deadline_schedulers_offer_front_merges_from_their_sort_lists() {
    for elevator in ["deadline", "deadline-lowprio", "mq-deadline"] {
        let r = front_merge_run(elevator, "");
        let dev = &r["devices"][0];
        assert_eq!(dev["merges"], 1, "{elevator}");
        assert_eq!(dev["requests"], 3, "{elevator}");
        // b's bio went into a's request: both wake when it completes (x first: FIFO).
        assert_eq!(
            [done(&r, "a"), done(&r, "b")],
            [3 * MS, 3 * MS],
            "{elevator}"
        );
        let r = front_merge_run(elevator, r#""front_merges": 0"#);
        assert_eq!(r["devices"][0]["merges"], 0, "{elevator}");
        assert_eq!(r["devices"][0]["requests"], 4, "{elevator}");
    }
    // noop has no front-merge lookup of its own.
    assert_eq!(front_merge_run("noop", "")["devices"][0]["merges"], 0);
}

#[test]
fn a_request_merged_into_another_passes_on_its_earlier_expiry_and_fifo_place() {
    // One tag busy with `first` for 1 ms. Queued: x (sector 1000, 5 µs, holds the merge
    // cache), n (sectors 16..24, 10 µs), z (sector 2000, 15 µs), m (sectors 0..8, 20 µs).
    // At 30 µs g's bio (8..16) back-merges into m, which then reaches n: n is merged
    // into m, and m takes n's expiry and FIFO place, ahead of z. With every read
    // expired (read_expire 0) and batches of one, the FIFO order is the dispatch
    // order: x, m (+n, g), z.
    let tasks = [
        one_request("first", 0, "read", 400, ""),
        one_request("x", 5, "read", 1000, ""),
        one_request("n", 10, "read", 16, ""),
        one_request("z", 15, "read", 2000, ""),
        one_request("m", 20, "read", 0, ""),
        one_request("g", 30, "read", 8, ""),
    ];
    for elevator in ["deadline", "mq-deadline"] {
        let r = run(&spec(
            &tasks,
            1,
            MS,
            elevator,
            r#""read_expire": 0, "fifo_batch": 1"#,
        ));
        assert_eq!(r["devices"][0]["merges"], 2, "{elevator}");
        let times: Vec<u64> = ["x", "m", "n", "g", "z"]
            .iter()
            .map(|t| done(&r, t))
            .collect();
        assert_eq!(
            times,
            [2 * MS, 3 * MS, 3 * MS, 3 * MS, 4 * MS],
            "{elevator}"
        );
    }
}

#[test]
fn deadline_lowprio_merges_held_requests_and_releases_them_as_one() {
    // Held idle-class reads of sectors 0..8 (at 0), 16..24 (10 µs) and 8..16 (20 µs):
    // the last back-merges into the first, which then reaches the second; the one
    // request left is released by the α timer at 200 ms.
    let tasks = [
        one_request("a", 0, "read", 0, "idle"),
        one_request("c", 10, "read", 16, "idle"),
        one_request("b", 20, "read", 8, "idle"),
    ];
    let r = run(&spec(&tasks, 64, MS, "deadline-lowprio", ""));
    assert_eq!(r["devices"][0]["merges"], 2);
    assert_eq!(r["devices"][0]["requests"], 1);
    assert_eq!(
        [done(&r, "a"), done(&r, "b"), done(&r, "c")],
        [201 * MS, 201 * MS, 201 * MS]
    );
}

#[test]
fn a_front_merged_request_is_re_sorted_by_its_new_start() {
    // One tag busy with `first` for 1 ms. Queued: x (sectors 0..8, 5 µs; it holds the
    // merge cache), a (104..112, 10 µs), s (100..108, 20 µs); at 30 µs b's bio (96..104)
    // front-merges into a, which now starts at 96, before s. x goes first (the oldest)
    // and the batch continues in sector order: a (with b), then s.
    let tasks = [
        one_request("first", 0, "read", 400, ""),
        one_request("x", 5, "read", 0, ""),
        one_request("a", 10, "read", 104, ""),
        one_request("s", 20, "read", 100, ""),
        one_request("b", 30, "read", 96, ""),
    ];
    for elevator in ["deadline", "mq-deadline"] {
        let r = run(&spec(&tasks, 1, MS, elevator, ""));
        assert_eq!(r["devices"][0]["merges"], 1, "{elevator}");
        let times: Vec<u64> = ["x", "a", "b", "s"].iter().map(|t| done(&r, t)).collect();
        assert_eq!(times, [2 * MS, 3 * MS, 3 * MS, 4 * MS], "{elevator}");
    }
}

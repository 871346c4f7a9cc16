//! CFQ (block/cfq-iosched.c, Linux 3.x) through the engine: readers on a null_blk device
//! of one tag (a disk serving one request at a time), 1 ms a request. Every request
//! completes exactly once; the RT class goes first; best-effort levels share the disk in
//! proportion to `cfq_prio_slice`; the idle class waits for every other queue, idling
//! included; a sync reader keeps the disk while it idles for the reader's next request.

mod common;

use schedlab_sim::SimConfig;
use serde_json::Value;

const MS: u64 = 1_000_000;
/// The device's service time.
const COMPLETION_NS: u64 = MS;

fn run(text: &str) -> Value {
    common::run_io(text, None)
}

/// `tasks` (JSON members) on 4 CPUs with one rotational device `sda` (one tag) under
/// `elevator` and `params` (JSON object), `duration_s` seconds if given.
fn spec(tasks: &str, elevator: &str, params: &str, duration_s: Option<f64>) -> String {
    let global = duration_s.map_or(String::new(), |d| {
        format!(r#""global": {{"duration": {d}}},"#)
    });
    format!(
        r#"{{
        {global}
        "tasks": {{ {tasks} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"sda": {{"model": "null_blk", "completion_ns": {COMPLETION_NS},
                                  "queue_depth": 1, "rotational": true, "scheduler": "{elevator}",
                                  "params": {params}}}}}
        }}
    }}"#
    )
}

/// A 4 KiB read in the `region`-th GiB of the disk, the same for each read of a task:
/// tasks read apart, so that no request of one is adjacent to another's and none merge.
fn read(region: u64) -> String {
    format!(
        r#""schedlab:io": {{"dev": "sda", "op": "read", "bytes": 4096, "offset": {}}}"#,
        region << 30
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

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Every request submitted completed exactly once: the device counted `requests` (none
/// merged), each task was woken once per request, and no task is left waiting.
fn assert_each_request_completed_once(r: &Value, per_task: &[(&str, u64)]) {
    let total: u64 = per_task.iter().map(|&(_, n)| n).sum();
    assert_eq!(u(&r["devices"][0]["merges"]), 0);
    assert_eq!(u(&r["devices"][0]["requests"]), total);
    for &(name, n) in per_task {
        assert_eq!(u(&task(r, name)["switches_voluntary"]), n, "{name}");
    }
    assert_eq!(r["summary"]["blocked_at_end"], 0);
}

/// `cfq_prio_slice`: base + base / CFQ_SLICE_SCALE × (4 − level), base slice_sync 100 ms.
fn prio_slice_ms(level: i64) -> i64 {
    100 + 100 / 5 * (4 - level)
}

#[test]
fn the_rt_class_is_served_before_best_effort() {
    let tasks = format!(
        r#""be": {{"loop": 100, {}}},
           "rt": {{"loop": 100, "schedlab:ioprio": {{"class": "rt", "level": 4}}, {}}}"#,
        read(1),
        read(2)
    );
    let r = run(&spec(&tasks, "cfq", "{}", None));
    assert_each_request_completed_once(&r, &[("be", 100), ("rt", 100)]);
    let rt = u(&task(&r, "rt")["sleep_ns"]);
    let be = u(&task(&r, "be")["sleep_ns"]);
    // The RT reader waits at most for the one best-effort request already on the disk.
    assert!(rt <= 101 * COMPLETION_NS, "rt slept {rt}");
    // The best-effort reader waits for all of the RT reader's requests.
    assert!(be >= 200 * COMPLETION_NS, "be slept {be}");

    // Without classes (first come, first served) the two interleave.
    let r = run(&spec(&tasks, "none", "{}", None));
    let rt = u(&task(&r, "rt")["sleep_ns"]);
    assert!(rt >= 190 * COMPLETION_NS, "rt slept {rt} under none");
}

/// Disk time of two continuous best-effort readers at `levels` over `seconds`: requests
/// served per reader.
fn served_at_levels(levels: [i64; 2], seconds: f64) -> [u64; 2] {
    let tasks = format!(
        r#""a": {{"loop": -1, "schedlab:ioprio": {{"class": "be", "level": {}}}, {}}},
           "b": {{"loop": -1, "schedlab:ioprio": {{"class": "be", "level": {}}}, {}}}"#,
        levels[0],
        read(1),
        levels[1],
        read(2)
    );
    let r = run(&spec(&tasks, "cfq", "{}", Some(seconds)));
    let a = u(&task(&r, "a")["switches_voluntary"]);
    let b = u(&task(&r, "b")["switches_voluntary"]);
    [a, b]
}

#[test]
fn best_effort_levels_share_the_disk_in_proportion_to_their_slices() {
    for levels in [[0, 7], [4, 7], [2, 5]] {
        let [a, b] = served_at_levels(levels, 4.0);
        let ratio = a as f64 / b as f64;
        let expected = prio_slice_ms(levels[0]) as f64 / prio_slice_ms(levels[1]) as f64;
        // A slice ends at the first dispatch past it: at most one more 1 ms request.
        assert!(
            (ratio - expected).abs() / expected < 0.03,
            "levels {levels:?}: served {a} and {b}, ratio {ratio:.3}, cfq_prio_slice says {expected:.3}"
        );
    }
}

#[test]
fn the_idle_class_gets_the_disk_only_when_no_other_queue_is_busy_or_idling() {
    // The best-effort reader reads 50 times back to back; the idle-class reader asks
    // once, 100 µs in, while the best-effort queue holds the disk.
    let tasks = format!(
        r#""be": {{"loop": 50, {}}},
           "idle": {{"loop": 1, "schedlab:ioprio": {{"class": "idle"}}, "run": 100, {}}}"#,
        read(1),
        read(2)
    );
    let r = run(&spec(&tasks, "cfq", "{}", None));
    assert_each_request_completed_once(&r, &[("be", 50), ("idle", 1)]);
    assert_eq!(u(&task(&r, "be")["sleep_ns"]), 50 * COMPLETION_NS);
    // The last best-effort request completes at 50 ms; its queue idles slice_idle = 8 ms
    // (to the jiffy the timer fires on) for a next request that never comes; only then is
    // the idle class served, for 1 ms.
    let idle_sleep = u(&task(&r, "idle")["sleep_ns"]);
    let submitted = 100_000;
    assert_eq!(idle_sleep, 50 * MS + 8 * MS + COMPLETION_NS - submitted);

    // Without the idle window (slice_idle = 0) the best-effort queue empties at its first
    // completion, before its reader asks again (group_idle does not hold the disk for a
    // group with two busy queues), and the idle class is served then.
    let r = run(&spec(&tasks, "cfq", r#"{"slice_idle": 0}"#, None));
    assert_each_request_completed_once(&r, &[("be", 50), ("idle", 1)]);
    let idle_sleep = u(&task(&r, "idle")["sleep_ns"]);
    assert_eq!(idle_sleep, COMPLETION_NS + COMPLETION_NS - submitted);
}

#[test]
fn a_sync_reader_keeps_the_disk_while_it_thinks_less_than_slice_idle() {
    // "thinker" reads 20 times with 3.5 ms of CPU work between reads; "streamer" reads
    // back to back, starting 500 µs later so that the thinker's queue is served first.
    let tasks = format!(
        r#""thinker": {{"loop": 20, {}, "run": 3500}},
           "streamer": {{"loop": 100, "run": 500, {}}}"#,
        read(1),
        read(2)
    );
    let r = run(&spec(&tasks, "cfq", "{}", None));
    assert_each_request_completed_once(&r, &[("thinker", 20), ("streamer", 100)]);
    // Its 20 reads fit in one 100 ms slice: the disk idles for each next request (3.5 ms <
    // slice_idle 8 ms) and no read of the thinker ever waits.
    assert_eq!(u(&task(&r, "thinker")["sleep_ns"]), 20 * COMPLETION_NS);

    // With slice_idle = 0 the streamer takes the disk whenever the thinker's queue empties,
    // and each later read of the thinker waits for the streamer's request on the disk
    // (preempting the streamer, whose queue is empty and does not idle): 0.5 ms.
    let r = run(&spec(&tasks, "cfq", r#"{"slice_idle": 0}"#, None));
    assert_each_request_completed_once(&r, &[("thinker", 20), ("streamer", 100)]);
    let thinker = u(&task(&r, "thinker")["sleep_ns"]);
    assert_eq!(thinker, 20 * COMPLETION_NS + 19 * COMPLETION_NS / 2);
}

#[test]
fn an_unknown_tunable_is_refused_naming_the_device_and_the_tunables() {
    let text = spec(
        &format!(r#""r": {{"loop": 1, {}}}"#, read(1)),
        "cfq",
        r#"{"slice_idel": 8}"#,
        None,
    );
    let e = schedlab_sim::simulate_text(&text, &SimConfig::default()).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("device sda scheduler cfq: slice_idel=8: unknown parameter 'slice_idel'"),
        "{e}"
    );
    assert!(e.contains("slice_idle"), "{e}");
}

/// A read of 4 KiB at byte `offset`.
fn read_at(offset: u64) -> String {
    format!(r#""schedlab:io": {{"dev": "sda", "op": "read", "bytes": 4096, "offset": {offset}}}"#)
}

#[test]
fn requests_the_block_layer_merges_complete_once_and_leave_cfqs_queues() {
    // While "first" holds the disk, "a" queues a read at 0 and "c" one at 8 KiB; "b"'s
    // read at 4 KiB touches both, but a bio may join only a request of its own process's
    // queue (cfq_allow_merge), so it becomes a request of its own. That new request is
    // then offered to the queued request ending where it starts (elv_attempt_insert_merge,
    // which asks no elevator): it is merged into a's and leaves b's queue
    // (cfq_merged_requests). "e"'s read ends where "d"'s queued one starts, but CFQ offers
    // front merges only from the submitter's own queue (`cfq_merge`), so it stays a
    // request of its own.
    let tasks = format!(
        r#""first": {{"loop": 1, {}}},
           "a": {{"loop": 1, "run": 10, {}}},
           "c": {{"loop": 1, "run": 20, {}}},
           "b": {{"loop": 1, "run": 30, {}}},
           "d": {{"loop": 1, "run": 40, {}}},
           "e": {{"loop": 1, "run": 50, {}}}"#,
        read_at(1 << 30),
        read_at(0),
        read_at(8192),
        read_at(4096),
        read_at(2 << 30),
        read_at((2 << 30) - 4096),
    );
    // A CPU for each task, so that each submits after its own CPU work.
    let text = spec(&tasks, "cfq", "{}", None).replace(r#""cpus": 4"#, r#""cpus": 8"#);
    let r = run(&text);
    let dev = &r["devices"][0];
    assert_eq!(u(&dev["requests"]), 5, "first's, a+b, c's, d's, e's");
    assert_eq!(u(&dev["merges"]), 1);
    assert_eq!(u(&dev["bytes_read"]), 6 * 4096);
    for name in ["first", "a", "b", "c", "d", "e"] {
        assert_eq!(u(&task(&r, name)["switches_voluntary"]), 1, "{name}");
    }
    assert_eq!(r["summary"]["blocked_at_end"], 0);
    // a and b wake together (they submitted at 10 and 30 µs); c does not.
    let sleep = |n: &str| u(&task(&r, n)["sleep_ns"]);
    assert_eq!(sleep("a"), sleep("b") + 20_000);
    assert_ne!(sleep("c"), sleep("b") + 10_000);
    assert_ne!(sleep("d"), sleep("e") + 10_000);
}

#[test]
fn on_a_non_rotational_device_cfq_does_not_idle() {
    // The thinker of the test above on a non-rotational device: until cfq_update_hw_tag
    // has seen the device not queueing (50 samples with more than 5 requests around, never
    // reached here) it is taken to queue, and blk_queue_nonrot && hw_tag switches idling
    // off (cfq_should_idle, cfq_arm_slice_timer): the streamer takes the disk whenever the
    // thinker's queue empties, as with slice_idle = 0 on the rotational disk.
    let tasks = format!(
        r#""thinker": {{"loop": 20, {}, "run": 3500}},
           "streamer": {{"loop": 100, "run": 500, {}}}"#,
        read(1),
        read(2)
    );
    let rot = spec(&tasks, "cfq", "{}", None);
    let nonrot = run(&rot.replace(r#""rotational": true"#, r#""rotational": false"#));
    let no_idle = run(&spec(&tasks, "cfq", r#"{"slice_idle": 0}"#, None));
    assert_each_request_completed_once(&nonrot, &[("thinker", 20), ("streamer", 100)]);
    let sleep = |r: &serde_json::Value| u(&task(r, "thinker")["sleep_ns"]);
    assert!(sleep(&nonrot) > 20 * COMPLETION_NS, "{}", sleep(&nonrot));
    assert_eq!(sleep(&nonrot), sleep(&no_idle));
}

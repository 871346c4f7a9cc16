//! `freebsd-ule5` pinned to FreeBSD's sys/kern/sched_ule.c 1.161: the interactivity score
//! and its history limits (`sched_interact_score`, `sched_interact_update`,
//! `sched_interact_fork`), the user priority (`sched_priority`) and the slice by nice
//! (`sched_slice`) against the source's formulas written out here; and runs of specs
//! through the engine: an interactive sleeper outranks a CPU hog, the current/next queue
//! swap shares the CPU between hogs of different nice in proportion to their slices, an
//! idle CPU steals from its SMT sibling (`kseq_idled`) but not across kseq groups, and runs
//! are deterministic.
mod common;
use common::*;

use schedlab_sim::cpu::freebsd_ule5::{
    interact_fork, interact_score, interact_update, slice_ticks, user_priority, FreebsdUle5,
};
use schedlab_sim::sched::Scheduler;
use schedlab_sim::types::{Policy, SchedAttrs};

const MS: u64 = 1_000_000;

// The source's constants for hz = stathz = 1000, written out: SCHED_SLP_RUN_MAX =
// (1000 * 5) << 10, SCHED_SLP_RUN_FORK = (1000 / 2) << 10, slice_min = 1000 / 100,
// slice_max = 1000 / 7, SCHED_PRI_RANGE = 223 - 160 + 1.
const SLP_RUN_MAX: u32 = 5_120_000;
const SLP_RUN_FORK: u32 = 512_000;
const SLICE_MIN: i32 = 10;
const SLICE_MAX: i32 = 142;

/// `sched_interact_score` by hand for a few histories (ticks << 10).
#[test]
fn the_interactivity_score_is_the_sources() {
    // Sleep > run: run / max(1, slp / 50).
    assert_eq!(interact_score(0, 0), 0);
    assert_eq!(interact_score(1024, 4096), 1024 / (4096 / 50));
    assert_eq!(interact_score(1024, 3072), 16, "1024 / 61");
    assert_eq!(interact_score(20 * 1024, 30 * 1024), 33, "20480 / 614");
    assert_eq!(interact_score(10, 40), 10, "div clamps to 1");
    // Run > sleep: 50 + (50 - slp / max(1, run / 50)).
    assert_eq!(interact_score(1024, 0), 100);
    assert_eq!(interact_score(4096, 1024), 50 + (50 - 1024 / 81));
    assert_eq!(
        interact_score(30 * 1024, 20 * 1024),
        67,
        "50 + 50 - 20480 / 614"
    );
    // Equal: 0.
    assert_eq!(interact_score(5000, 5000), 0);
    // The threshold: a thread running a third of the time is interactive, half is not.
    assert!(interact_score(1024, 2048) < 30);
    assert_eq!(interact_score(2048, 2048 + 1), 51, "2048 / 40");
    assert!(interact_score(3 * 1024, 2 * 1024) >= 30);
}

/// `sched_interact_update` (history capped at 5 s of ticks: × 4/5 up to 6/5 of the cap,
/// halved above) and `sched_interact_fork` (scaled down to half a second).
#[test]
fn the_history_is_capped_as_the_source_caps_it() {
    let upd = |run: u32, slp: u32| {
        let (mut r, mut s) = (run, slp);
        interact_update(&mut r, &mut s, 1000);
        (r, s)
    };
    assert_eq!(upd(1000, 2000), (1000, 2000), "below the cap: unchanged");
    assert_eq!(
        upd(3_000_000, 2_120_000),
        (3_000_000 / 5 * 4, 2_120_000 / 5 * 4),
        "at the cap"
    );
    let over = SLP_RUN_MAX / 5 * 6 + 2;
    assert_eq!(
        upd(over - 1000, 1000),
        ((over - 1000) / 2, 500),
        "above 6/5"
    );
    let fork = |run: u32, slp: u32| {
        let (mut r, mut s) = (run, slp);
        interact_fork(&mut r, &mut s, 1000);
        (r, s)
    };
    assert_eq!(fork(1000, 1000), (1000, 1000));
    let (r, s) = (3 * SLP_RUN_FORK, SLP_RUN_FORK + 10);
    assert_eq!(fork(r, s), (r / 4, s / 4), "ratio (r + s) / FORK = 4");
}

/// `sched_priority`: 160 + score · 64 / 100 + nice, within 160..=223.
#[test]
fn the_user_priority_is_score_and_nice() {
    assert_eq!(user_priority(0, 0), 160);
    assert_eq!(user_priority(29, 0), 160 + 29 * 64 / 100);
    assert_eq!(user_priority(100, 0), 223, "160 + 64 = 224, clamped to 223");
    assert_eq!(user_priority(50, 10), 160 + 32 + 10);
    assert_eq!(user_priority(0, -20), 160, "clamped at PRI_MIN_TIMESHARE");
    assert_eq!(user_priority(100, 19), 223);
}

/// `sched_slice` at hz 1000: SCHED_SLICE_NICE(n) = 142 − n · 133 / 19 within the window,
/// the maximum for the least nice or an empty queue, the minimum beyond.
#[test]
fn slices_follow_nice_relative_to_the_least_nice() {
    let nice = |n: i32| SLICE_MAX - n * (SLICE_MAX - SLICE_MIN + 1) / 19;
    // Interactive: SCHED_SLICE_INTERACTIVE = slice_max, whatever the nice.
    assert_eq!(slice_ticks(true, 19, -20, 5, 1000), SLICE_MAX);
    // No time-sharing load, or less nice than every other thread: the maximum.
    assert_eq!(slice_ticks(false, 10, 0, 0, 1000), SLICE_MAX);
    assert_eq!(slice_ticks(false, -5, 0, 3, 1000), SLICE_MAX);
    for (n, min) in [(0, 0), (5, 0), (10, 0), (19, 0), (0, -10), (15, -4)] {
        assert_eq!(
            slice_ticks(false, n, min, 2, 1000),
            nice(n - min),
            "nice {n}, least nice {min}"
        );
    }
    assert_eq!(nice(0), 142);
    assert_eq!(nice(10), 72);
    assert_eq!(nice(19), 9);
    // Beyond the window of 19: the minimum.
    assert_eq!(slice_ticks(false, 19, -1, 2, 1000), SLICE_MIN);
    assert_eq!(slice_ticks(false, 0, -20, 2, 1000), SLICE_MIN);
}

fn run(text: &str, duration_ms: u64) -> serde_json::Value {
    run_text(text, "freebsd-ule5", &[], Some(duration_ms * MS)).unwrap_or_else(|e| panic!("{e}"))
}

/// A sleeper running 1 ms of every 20 stays interactive (score < 30) and is woken at a
/// priority better than the hog's (whose score is 100 after its first tick), on the
/// current queue: its CPU reschedules at once, so it never waits.
#[test]
fn an_interactive_sleeper_outranks_a_hog() {
    let text = r#"{"global": {"duration": 2},
        "tasks": {"hog": {"loop": 1, "run": -1},
                  "sleeper": {"loop": -1, "run": 1000, "sleep": 19000}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let r = run(text, 2000);
    let s = task_in(&r, "sleeper");
    assert_eq!(s["wakeup_latency_ns"]["max"], 0, "{s}");
    // 2 s / 20 ms activations of 1 ms each.
    let cpu = cpu_ns_in(&r, "sleeper");
    assert!(cpu.abs_diff(100 * MS) <= 2 * MS, "sleeper cpu {cpu}");
}

/// Two hogs of nice 0 and nice 10 on one CPU. Both are non-interactive and go to the next
/// queue at each slice's end; the queues swap when the current one empties, so the nice-10
/// hog runs its slice after each of the nice-0 hog's (no starvation, though its priority
/// is 10 worse): nice 0 is the least nice and gets slice_max = 142 ticks; nice 10 gets
/// SCHED_SLICE_NICE(10) = 72. Its share is 72 / (142 + 72), measured over 3 s past the
/// first second (± one slice).
#[test]
fn the_queue_swap_shares_by_slice_not_priority() {
    let text = r#"{"global": {"duration": 5},
        "tasks": {"a": {"priority": 0, "loop": 1, "run": -1},
                  "b": {"priority": 10, "loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let (early, late) = (run(text, 1000), run(text, 4000));
    let db = cpu_ns_in(&late, "b") - cpu_ns_in(&early, "b");
    let da = cpu_ns_in(&late, "a") - cpu_ns_in(&early, "a");
    let want_b = 3000.0 * 72.0 / 214.0;
    let got_b = db as f64 / MS as f64;
    assert!(
        (got_b - want_b).abs() <= 72.0,
        "nice 10 ran {got_b:.1} ms of 3000, want {want_b:.1} (nice 0 ran {} ms)",
        da / MS
    );
}

/// A hog beside three interactive sleepers (each running 2 ms of every 10, score about
/// 12): the sleepers outrank it and take the current queue, and the hog, preempted, goes
/// back to the next queue (`SCHED_CURR` is false for it). It runs whenever the current
/// queue empties and the queues swap, so it gets the 40 % the sleepers leave, not nothing.
#[test]
fn interactive_threads_do_not_starve_the_next_queue() {
    let text = r#"{"global": {"duration": 3},
        "tasks": {"hog": {"loop": 1, "run": -1},
                  "sleeper": {"instance": 3, "loop": -1, "run": 2000, "sleep": 8000}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let (early, late) = (run(text, 1000), run(text, 3000));
    let hog = (cpu_ns_in(&late, "hog") - cpu_ns_in(&early, "hog")) as f64 / (2000 * MS) as f64;
    assert!((0.35..=0.45).contains(&hog), "the hog's share {hog:.3}");
}

/// A spec where a task pinned to CPU 1 runs 50 ms and exits while three hogs queue on
/// CPU 0 (the pinned task starts first, so no CPU is idle when the hogs are added and
/// `kseq_transfer` has nowhere to send the third). With CPUs 0 and 1 SMT siblings (one
/// kseq group) CPU 1 steals a hog as it idles (`kseq_idled`): the hogs run 100 + 50 ms in
/// the first 100 ms. As separate cores (groups of one) this revision does not steal
/// across groups and the balancers are not due before 500 ms: the hogs get CPU 0's
/// 100 ms only. Siblings do not share a core's throughput here (`smt_throughput` =
/// threads), so the CPU times are the work done.
#[test]
fn an_idle_cpu_steals_from_its_smt_sibling_only() {
    let spec = |threads: u32, cores: u32| {
        format!(
            r#"{{"global": {{"duration": 1}},
            "tasks": {{"pinned": {{"cpus": [1], "loop": 1, "run": 50000}},
                      "hog": {{"instance": 3, "cpus": [0, 1], "loop": 1, "run": -1}}}},
            "schedlab": {{"machine": {{"cpus": 2, "hz": 1000, "smt_throughput": {threads},
                "topology": {{"packages": 1, "cores": {cores}, "threads": {threads}}}}}}}}}"#
        )
    };
    let hogs = |r: &serde_json::Value| -> u64 {
        r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("hog"))
            .map(|t| t["cpu_ns"].as_u64().unwrap())
            .sum()
    };
    let smt = run(&spec(2, 1), 100);
    assert!(
        hogs(&smt).abs_diff(150 * MS) <= 2 * MS,
        "SMT: {}",
        hogs(&smt)
    );
    let cores = run(&spec(1, 2), 100);
    assert!(
        hogs(&cores).abs_diff(100 * MS) <= 2 * MS,
        "cores: {}",
        hogs(&cores)
    );
}

/// Three hogs started on CPU 0 of two single-thread cores: the first two stay there
/// (`sched_add`, lines 1854–1870: the adding CPU is idle, then its load is 1), the third
/// finds the load above 1 and goes to CPU 1 (`kseq_transfer`), idle since the start as
/// every CPU's idle thread left it in `kseq_idle`. The hogs run 200 ms in the first
/// 100 ms, long before the first balancer (1 s in) could move one.
#[test]
fn a_third_thread_goes_to_a_cpu_idle_since_the_start() {
    let text = r#"{"global": {"duration": 1},
        "tasks": {"hog": {"instance": 3, "loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 2, "hz": 1000}}}"#;
    let r = run(text, 100);
    let busy: Vec<u64> = r["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["busy_ns"].as_u64().unwrap())
        .collect();
    assert!(busy.iter().all(|&b| b.abs_diff(100 * MS) <= MS), "{busy:?}");
}

/// FIFO/RR priorities map through the Linux ABI onto this era's real-time range 128..159;
/// batch, idle and deadline are refused; only time-sharing threads have a slice.
#[test]
fn attributes_map_onto_the_5x_ranges() {
    let p = FreebsdUle5::new(1);
    let attrs = |policy, prio, nice| SchedAttrs {
        policy,
        rt_priority: prio,
        nice,
        dl: None,
        slice_ns: None,
    };
    for pol in [Policy::Batch, Policy::Idle, Policy::Deadline] {
        let e = p.accepts(&attrs(pol, 0, 0)).unwrap_err();
        assert!(e.contains("freebsd-ule5"), "{e}");
    }
    assert!(p.accepts(&attrs(Policy::Fifo, 99, 0)).is_ok());
    assert_eq!(
        p.timeslice_ns(&attrs(Policy::Other, 0, 0), 1000),
        Some(142 * MS)
    );
    assert_eq!(p.timeslice_ns(&attrs(Policy::Rr, 10, 0), 1000), None);
    let text = r#"{"global": {"duration": 1},
        "tasks": {"rt": {"policy": "SCHED_FIFO", "priority": 99, "loop": 1, "run": 1000}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let r = run(text, 10);
    assert_eq!(cpu_ns_in(&r, "rt"), MS);
}

/// A spec with sleepers, hogs, nice values and four CPUs in two SMT cores gives the same
/// bytes twice.
#[test]
fn runs_are_deterministic() {
    let text = r#"{"global": {"duration": 3},
        "tasks": {"hog": {"instance": 5, "loop": -1, "run": 30000, "sleep": 1000},
                  "io": {"instance": 3, "priority": 5, "loop": -1, "run": 2000, "sleep": 20000}},
        "schedlab": {"machine": {"cpus": 4, "hz": 250,
            "topology": {"packages": 1, "cores": 2, "threads": 2}}}}"#;
    let once = || {
        let mut r = run(text, 3000);
        r["run"]["wall_s"] = serde_json::json!(0);
        r.to_string()
    };
    assert_eq!(once(), once());
}

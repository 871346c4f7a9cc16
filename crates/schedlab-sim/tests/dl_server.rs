//! Linux 6.12's fair server (`cpu/dl_server.rs`, in linux-eevdf's deadline class) and the
//! deadline class's share of the RT bandwidth, through the engine: a SCHED_OTHER task
//! starved by a SCHED_FIFO hog gets the server's runtime per period, deferred to the
//! zero-laxity time; no server in linux-cfs (Linux 6.1) or with runtime 0; nothing changes
//! for a fair-only workload; a deadline task's time counts against the RT limit.

mod common;

use common::{cpu_ns_in as cpu_ns, tick_ns_of as tick_ns, MS};
use schedlab_sim::{simulate_text, SimConfig};
use serde_json::Value;

fn run(text: &str, scheduler: &str, params: &[(&str, &str)]) -> Value {
    run_for(text, None, scheduler, params)
}

/// Run `text` for `ms` milliseconds (the spec's duration when `None`).
fn run_for(text: &str, ms: Option<u64>, scheduler: &str, params: &[(&str, &str)]) -> Value {
    common::run_text(text, scheduler, params, ms.map(|ms| ms * MS))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A FIFO hog and a SCHED_OTHER busy loop on one CPU, the global RT limit lifted
/// (`sched_rt_runtime_us` = -1) unless `limit`.
fn starved(limit: bool) -> String {
    let root = if limit {
        ""
    } else {
        r#", "cgroups": {"/": {"cpu.rt_runtime_us": -1}}"#
    };
    format!(
        r#"{{"global": {{"duration": 100}},
            "tasks": {{"hog": {{"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": -1}},
                      "other": {{"loop": 1, "run": -1}}}},
            "schedlab": {{"machine": {{"cpus": 1}}{root}}}}}"#
    )
}

/// The server starts with the fair task at 0 (deadline 1 s, runtime 50 ms), deferred
/// to its zero-laxity time, 950 ms: until then the hog keeps the CPU. At 950 ms the
/// replenishment finds the reservation would overflow (50 ms left before the deadline
/// at density 1) and starts a new period (deadline 1.95 s); the fair task runs 50 ms
/// (the tick notices the exhaustion), then the server waits for its next period, 1.95 s,
/// and is not deferred again (`dl_defer_running`): 50 ms at the start of each period.
#[test]
fn a_starved_fair_task_gets_the_servers_runtime_at_the_zero_laxity_time() {
    let r = run_for(&starved(false), Some(949), "linux-eevdf", &[]);
    assert_eq!(cpu_ns(&r, "other"), 0, "deferred until 950 ms");
    let tick = tick_ns(&r);

    let r = run_for(&starved(false), Some(1000), "linux-eevdf", &[]);
    let other = cpu_ns(&r, "other");
    assert!(
        (50 * MS - tick..=50 * MS).contains(&other),
        "950-1000 ms: the server's 50 ms, got {other}"
    );

    let r = run_for(&starved(false), Some(1950), "linux-eevdf", &[]);
    let first = cpu_ns(&r, "other");
    assert!(
        (50 * MS..=50 * MS + tick).contains(&first),
        "nothing more until the next period at 1.95 s, got {first}"
    );

    let r = run_for(&starved(false), Some(10_000), "linux-eevdf", &[]);
    let other = cpu_ns(&r, "other");
    // Periods start at 0.95, 1.95, …, 9.95 s: ten slices of 50 ms, each up to a tick more.
    assert!(
        (500 * MS..=500 * MS + 10 * tick).contains(&other),
        "ten slices of 50 ms in 10 s, got {other}"
    );
    assert_eq!(cpu_ns(&r, "hog") + other, 10_000 * MS);
}

/// Writing 0 to `fair_server/cpuN/runtime` disables the server: the hog keeps the CPU.
#[test]
fn a_server_with_runtime_zero_gives_nothing() {
    let r = run_for(
        &starved(false),
        Some(3000),
        "linux-eevdf",
        &[("fair_server_runtime_ns", "0")],
    );
    assert_eq!(cpu_ns(&r, "other"), 0);
}

/// The server's runtime and period are tunables: 100 ms per 500 ms gives 20 %.
#[test]
fn the_servers_runtime_and_period_are_tunable() {
    let r = run_for(
        &starved(false),
        Some(10_000),
        "linux-eevdf",
        &[
            ("fair_server_runtime_ns", "100000000"),
            ("fair_server_period_ns", "500000000"),
        ],
    );
    let other = cpu_ns(&r, "other");
    let tick = tick_ns(&r);
    // Zero laxity at 0.4 s, then periods from 0.9 to 9.9 s: twenty slices of 100 ms, each
    // up to a tick more (the last one cut at 10 s).
    assert!(
        (2000 * MS - tick..=2000 * MS + 20 * tick).contains(&other),
        "about 20 %, got {other}"
    );
    let bad = simulate_text(
        &starved(false),
        &SimConfig {
            scheduler: Some("linux-eevdf".into()),
            params: vec![("fair_server_runtime_ns".into(), "2000000000".into())]
                .into_iter()
                .collect(),
            ..SimConfig::default()
        },
    );
    let err = match bad {
        Ok(_) => panic!("a runtime above the period is refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("fair_server_runtime_ns"), "{err}");
}

/// Linux 6.1 has no fair server: without the RT limit the hog keeps the CPU, with it
/// SCHED_OTHER gets what RT throttling leaves (5 %).
#[test]
fn linux_cfs_has_no_fair_server() {
    let r = run_for(&starved(false), Some(3000), "linux-cfs", &[]);
    assert_eq!(cpu_ns(&r, "other"), 0);
    let r = run_for(&starved(true), Some(10_000), "linux-cfs", &[]);
    let other = cpu_ns(&r, "other") as f64 / (100.0 * MS as f64);
    assert!((other - 5.0).abs() <= 0.1, "SCHED_OTHER got {other:.3} %");
    let unknown = simulate_text(
        &starved(false),
        &SimConfig {
            scheduler: Some("linux-cfs".into()),
            params: vec![("fair_server_runtime_ns".into(), "0".into())]
                .into_iter()
                .collect(),
            ..SimConfig::default()
        },
    );
    match unknown {
        Ok(_) => panic!("linux-cfs has no fair_server_runtime_ns"),
        Err(e) => assert!(e.to_string().contains("fair_server_runtime_ns"), "{e}"),
    }
}

/// With the RT limit on, the fair task runs in the window RT throttling leaves, which
/// the tick makes up to a tick short (the hog is throttled at the first tick past its
/// 950 ms). That time is consumed from the server in the background; what is left of
/// its 50 ms arms the zero-laxity timer at `deadline - runtime`, and the server runs the
/// rest: with it SCHED_OTHER gets its full 50 ms per second.
#[test]
fn with_the_rt_limit_on_the_server_makes_up_what_throttling_left_short() {
    let with = run_for(&starved(true), Some(10_000), "linux-eevdf", &[]);
    let without = run_for(
        &starved(true),
        Some(10_000),
        "linux-eevdf",
        &[("fair_server_runtime_ns", "0")],
    );
    let tick = tick_ns(&with);
    let (other, short) = (cpu_ns(&with, "other"), cpu_ns(&without, "other"));
    assert!(
        short < 500 * MS && short + 10 * tick >= 500 * MS,
        "without: {short}"
    );
    assert!(other.abs_diff(500 * MS) <= tick, "with the server: {other}");
}

/// The result without what differs between two runs of one spec under different
/// parameters (the wall time and the parameters themselves) and without the engine's
/// counts in `also`.
fn comparable(mut r: Value, also: &[&str]) -> Value {
    let run = r["run"].as_object_mut().unwrap();
    for key in ["wall_s", "params"].iter().chain(also) {
        run.remove(*key);
    }
    r
}

/// Fair-only workloads run exactly as without the server: every task's and CPU's
/// figures are the same. On busy CPUs the fair tasks consume its runtime in the
/// background (a new period each time it is used up), so it never runs: only its timer
/// expiries are extra events. On a mostly idle CPU its zero-laxity timer does fire and
/// queue it; its reschedule of the idle CPU is one more scheduling decision, and a task
/// it picks is found without asking the RT class (less counted work, which costs no
/// time unless `machine.sched_work_ps` is set), but it picks what the fair class would.
#[test]
fn a_fair_only_workload_is_unchanged_by_the_server() {
    let busy = r#"{"global": {"duration": 6},
        "tasks": {
            "busy": {"instance": 3, "loop": 1, "run": -1},
            "light": {"loop": -1, "run": 2000, "sleep": 48000},
            "periodic": {"instance": 2, "loop": -1, "run": 3000, "timer": {"ref": "p", "period": 10000}},
            "nice": {"priority": 5, "loop": -1, "run": 20000, "sleep": 5000}},
        "schedlab": {"machine": {"cpus": 2}}}"#;
    let idle = r#"{"global": {"duration": 6},
        "tasks": {
            "light": {"loop": -1, "run": 2000, "sleep": 48000},
            "burst": {"loop": -1, "run": 30000, "sleep": 1500000}},
        "schedlab": {"machine": {"cpus": 1}}}"#;
    let counts: [&[&str]; 2] = [&["events"], &["events", "decisions", "work_units"]];
    for (spec, also) in [busy, idle].into_iter().zip(counts) {
        let with = run(spec, "linux-eevdf", &[]);
        let without = run(spec, "linux-eevdf", &[("fair_server_runtime_ns", "0")]);
        assert!(with["run"]["events"].as_u64() > without["run"]["events"].as_u64());
        assert_eq!(comparable(with, also), comparable(without, also));
    }
}

/// Linux 6.1's `update_curr_dl` adds a deadline task's time to its CPU's root rt_rq
/// (`rt_time`): with the RT limit (950 ms per 1 s) a deadline task running 100 ms per
/// second leaves the FIFO hog 850 ms, and SCHED_OTHER keeps its 5 %. Linux 6.12 with RT
/// group scheduling (as linux-eevdf's RT class models) does the same.
#[test]
fn deadline_time_counts_against_the_rt_limit() {
    let spec = r#"{"global": {"duration": 10},
        "tasks": {
            "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100000, "dl-period": 1000000,
                   "loop": 1, "run": -1},
            "hog": {"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": -1},
            "other": {"loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 1}}}"#;
    for scheduler in ["linux-cfs", "linux-eevdf"] {
        let r = run(spec, scheduler, &[]);
        let pct = |name| cpu_ns(&r, name) as f64 / (100.0 * MS as f64);
        let (dl, hog, other) = (pct("dl"), pct("hog"), pct("other"));
        assert!((dl - 10.0).abs() <= 0.1, "{scheduler}: dl got {dl:.3} %");
        assert!((hog - 85.0).abs() <= 0.2, "{scheduler}: hog got {hog:.3} %");
        assert!(
            (other - 5.0).abs() <= 0.2,
            "{scheduler}: other got {other:.3} %"
        );
    }
}

/// Without the charge the hog would run its 950 ms beside the deadline task's 100 ms and
/// leave SCHED_OTHER nothing: with the RT limit lifted the charge changes nothing, and the
/// hog takes all the deadline task leaves.
#[test]
fn without_the_rt_limit_deadline_time_is_not_charged() {
    let spec = r#"{"global": {"duration": 10},
        "tasks": {
            "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100000, "dl-period": 1000000,
                   "loop": 1, "run": -1},
            "hog": {"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": -1},
            "other": {"loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/": {"cpu.rt_runtime_us": -1}}}}"#;
    let r = run(spec, "linux-cfs", &[]);
    assert_eq!(cpu_ns(&r, "other"), 0);
    assert_eq!(cpu_ns(&r, "hog") + cpu_ns(&r, "dl"), 10_000 * MS);
}

/// After the last fair task leaves, the server stays active with its zero-laxity timer
/// pending (6.12.117 stops it only when a pick finds nothing). A run without a duration
/// still ends with its last task: a scheduler timer pending when no task is left changes
/// nothing any task sees, so it neither runs nor stretches the run.
#[test]
fn a_run_without_a_duration_ends_with_its_last_task_despite_the_server_timer() {
    let spec = r#"{"tasks": {"t": {"loop": 1, "run": 120000}},
                  "schedlab": {"machine": {"cpus": 1}}}"#;
    for (sched, params) in [
        ("linux-eevdf", &[][..]),
        ("linux-eevdf", &[("fair_server_runtime_ns", "0")][..]),
        ("linux-cfs", &[][..]),
    ] {
        let r = run(spec, sched, params);
        assert_eq!(r["summary"]["makespan_ns"], 120 * MS, "{sched} {params:?}");
        assert_eq!(r["run"]["sim_ns"], 120 * MS, "{sched} {params:?}");
    }
}

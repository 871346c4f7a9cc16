//! `freebsd-ule` pinned to FreeBSD's sys/kern/sched_ule.c: the interactivity score of
//! `sched_interact_score` for given run and sleep histories, the history limits of
//! `sched_interact_update` and `sched_interact_fork`, the priority `sched_priority` gives
//! a score and a nice value, the slices of `tdq_slice` for given loads — each compared
//! with the source's formulas written out here — and runs of specs through the engine:
//! an interactive sleeper outranks a CPU hog, the timeshare calendar lets a nice 19 hog
//! run beside nice 0 ones, an idle CPU steals, the periodic balancer moves a thread, two
//! hogs on an SMT machine go to different cores, runs are deterministic.
mod common;
use common::*;

use schedlab_sim::cpu::freebsd_ule::{
    interact_fork, interact_score, interact_update, should_preempt, tdq_slice, user_priority,
    FreebsdUle,
};
use schedlab_sim::sched::Scheduler;
use schedlab_sim::types::{Policy, SchedAttrs};

const MS: u64 = 1_000_000;

// The source's constants, written out: SCHED_TICK_SHIFT 10, SCHED_INTERACT_HALF 50,
// SCHED_SLP_RUN_MAX = (5 hz) << 10, SCHED_SLP_RUN_FORK = (hz / 2) << 10, the interactive
// range 120..151 (32 priorities), SCHED_PRI_MIN 172, SCHED_PRI_RANGE 32.
const HALF: u64 = 50;
const SHIFT: u32 = 10;

/// sched_interact_score for a threshold above 50 (no shortcut).
fn score_by_formula(run: u64, slp: u64) -> u64 {
    if run > slp {
        let div = (run / HALF).max(1);
        HALF + (HALF - slp / div)
    } else if slp > run {
        let div = (slp / HALF).max(1);
        run / div
    } else if run > 0 {
        HALF
    } else {
        0
    }
}

#[test]
fn the_interactivity_score_follows_the_sleep_to_run_ratio() {
    let t = |ticks: u64| ticks << SHIFT;
    for (run, slp) in [
        (0, 0),
        (t(1), 0),
        (0, t(1)),
        (t(10), t(90)),
        (t(90), t(10)),
        (t(50), t(50)),
        (t(3), t(1000)),
        (t(1000), t(3)),
        (t(25), t(75)),
        (7, 1000),
    ] {
        let want = score_by_formula(run, slp);
        assert_eq!(
            interact_score(run as u32, slp as u32, 60) as u64,
            want,
            "run {run} slp {slp}"
        );
    }
    // Worked by hand: 10 ticks run and 90 slept (×1024) score 10240 / (92160 / 50) =
    // 10240 / 1843 = 5; the reverse scores 50 + (50 − 5) = 95.
    assert_eq!(interact_score(t(10) as u32, t(90) as u32, 60), 5);
    assert_eq!(interact_score(t(90) as u32, t(10) as u32, 60), 95);
    // With the default threshold (30 ≤ 50) a thread that ran at least as long as it
    // slept takes the shortcut: 50.
    assert_eq!(interact_score(t(90) as u32, t(10) as u32, 30), 50);
    assert_eq!(interact_score(t(10) as u32, t(90) as u32, 30), 5);
}

#[test]
fn the_history_is_kept_under_slp_run_max_and_cut_at_fork() {
    let hz = 1000u64;
    let max = (hz * 5) << SHIFT;
    // Under the limit: unchanged.
    assert_eq!(interact_update(100, 200, hz as u32), (100, 200));
    // Just over: each part × 4/5 (by fifths, rounding down first).
    let (r, s) = (max as u32 / 2 + 7, max as u32 / 2);
    assert_eq!(interact_update(r, s, hz as u32), ((r / 5) * 4, (s / 5) * 4));
    // Over 6/5 of the limit: halved.
    let (r, s) = (max as u32, max as u32 / 4);
    assert_eq!(interact_update(r, s, hz as u32), (r / 2, s / 2));
    // Over twice the limit: the larger part set to the limit, the other to 1.
    assert_eq!(
        interact_update(3 * max as u32, 1000, hz as u32),
        (max as u32, 1)
    );
    assert_eq!(
        interact_update(1000, 3 * max as u32, hz as u32),
        (1, max as u32)
    );
    // sched_interact_fork: a history over (hz / 2) << 10 divided by sum / that.
    let fork = (hz / 2) << SHIFT;
    assert_eq!(interact_fork(100, 200, hz as u32), (100, 200));
    let (r, s) = (3 * fork as u32, fork as u32);
    assert_eq!(interact_fork(r, s, hz as u32), (r / 4, s / 4));
}

#[test]
fn priority_from_score_and_nice() {
    // Interactive: score + nice below 30 → 120 + (32 / 30) · (score + nice).
    assert_eq!(user_priority(0, 0, None, 30), 120);
    assert_eq!(user_priority(11, 0, None, 30), 131);
    assert_eq!(user_priority(11, -5, None, 30), 126);
    assert_eq!(
        user_priority(5, -20, None, 30),
        120,
        "negative sums count as 0"
    );
    // Nice pushes a score over the threshold: batch, SCHED_PRI_MIN + nice.
    assert_eq!(user_priority(25, 5, None, 30), 172 + 5);
    // Batch: 172 + min(ticks part, 31) + nice.
    assert_eq!(user_priority(50, 0, Some(10), 30), 182);
    assert_eq!(user_priority(50, 0, Some(400), 30), 172 + 31);
    assert_eq!(user_priority(50, 19, Some(400), 30), 222);
    assert_eq!(user_priority(50, -20, Some(0), 30), 152);
}

#[test]
fn slices_shrink_with_the_load_and_not_with_nice() {
    // sched_slice = realstathz / 10, sched_slice_min = sched_slice / 6 (stat ticks);
    // load − 1 threads wait.
    for stathz in [100u32, 127, 1000] {
        let (slice, min) = (stathz / 10, stathz / 10 / 6);
        for load in 1..=10u32 {
            let waiting = load as i64 - 1;
            let want = if waiting >= 6 {
                min
            } else if waiting <= 1 {
                slice
            } else {
                slice / waiting as u32
            };
            assert_eq!(tdq_slice(load, stathz), want, "stathz {stathz} load {load}");
        }
    }
    // At the default statclock of 127 Hz: 12 stat ticks (≈ 94.5 ms) alone or with one
    // waiting, 6 with two, 2 (12 / 6) from seven on.
    assert_eq!(tdq_slice(1, 127), 12);
    assert_eq!(tdq_slice(3, 127), 6);
    assert_eq!(tdq_slice(7, 127), 2);
    // The slice of a thread alone does not depend on nice or hz: 12 stat ticks of
    // 1/127 s; FIFO threads have none.
    let mut p = FreebsdUle::new(1);
    let alone_ns = 12 * 1_000_000_000 / 127;
    let other = |nice| SchedAttrs {
        policy: Policy::Other,
        rt_priority: 0,
        nice,
        dl: None,
        slice_ns: None,
    };
    for nice in [-20, 0, 19] {
        assert_eq!(p.timeslice_ns(&other(nice), 1000), Some(alone_ns));
        assert_eq!(p.timeslice_ns(&other(nice), 100), Some(alone_ns));
    }
    let fifo = SchedAttrs {
        policy: Policy::Fifo,
        rt_priority: 10,
        ..other(0)
    };
    assert_eq!(p.timeslice_ns(&fifo, 1000), None);
    let rr = SchedAttrs {
        policy: Policy::Rr,
        ..fifo
    };
    assert_eq!(p.timeslice_ns(&rr, 250), Some(alone_ns));
    p.set_param("stathz", "1000").unwrap();
    assert_eq!(p.timeslice_ns(&rr, 250), Some(100 * MS));
}

/// sched_shouldpreempt with the PREEMPTION kernel's threshold PRI_MIN_KERN = 80: the idle
/// thread always yields; real-time priorities (≤ 80) preempt anything worse; time-sharing
/// ones never preempt locally, and remotely only an interactive one (≤ 151) against a
/// batch one (> 151).
#[test]
fn preemption_follows_sched_shouldpreempt() {
    let t = 80;
    assert!(
        should_preempt(200, 255, false, t),
        "idle is always preempted"
    );
    assert!(!should_preempt(200, 200, true, t), "equal never");
    assert!(
        should_preempt(60, 70, false, t),
        "real-time against real-time"
    );
    assert!(should_preempt(79, 130, false, t));
    assert!(
        !should_preempt(125, 180, false, t),
        "interactive, locally: no"
    );
    assert!(
        should_preempt(125, 180, true, t),
        "interactive against batch, remotely"
    );
    assert!(
        !should_preempt(125, 140, true, t),
        "interactive against interactive"
    );
    assert!(!should_preempt(160, 200, true, t), "batch against batch");
    assert!(!should_preempt(60, 70, true, 0), "preemption off");
    assert!(should_preempt(60, 255, true, 0), "but idle still yields");
}

/// Run a spec's text under freebsd-ule with the invariant checker on.
fn run(text: &str, params: &[(&str, &str)], duration_ms: u64) -> serde_json::Value {
    run_text(text, "freebsd-ule", params, Some(duration_ms * MS)).unwrap_or_else(|e| panic!("{e}"))
}

/// A sleeper running 1 ms every 10 ms against a hog on one CPU at HZ 1000: the sleeper
/// scores interactive (120..151, the real-time queue) while the hog's run history makes
/// it batch, so each of its wake-ups preempts the hog at once (`sched_setpreempt`): its
/// latency stays within a tick, and it gets all the CPU it asks for.
#[test]
fn an_interactive_sleeper_outranks_a_cpu_hog() {
    let text = r#"{"global": {"duration": 2},
        "tasks": {"hog": {"loop": 1, "run": -1},
                  "sleeper": {"loop": -1, "run": 1000, "sleep": 9000}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let r = run(text, &[], 2000);
    let sleeper = cpu_ns_in(&r, "sleeper");
    // About 200 activations of 1 ms in 2 s.
    assert!(sleeper >= 190 * MS, "sleeper ran {sleeper} ns");
    let lat = &task_in(&r, "sleeper")["wakeup_latency_ns"];
    let max = lat["max"].as_f64().expect("wakeup_latency_ns.max");
    assert!(max <= 2e6, "worst wake-up latency {max} ns");
    // Against a second hog in its place, the same load gets only about half the CPU.
    let hogs = r#"{"global": {"duration": 2},
        "tasks": {"hog": {"loop": 1, "run": -1},
                  "other": {"loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let r = run(hogs, &[], 2000);
    let (a, b) = (cpu_ns_in(&r, "hog"), cpu_ns_in(&r, "other"));
    assert!(a.abs_diff(b) <= 300 * MS, "two hogs share: {a} / {b}");
}

/// Three hogs of nice 0, 0 and 19 on one CPU for 10 s: all three are batch, and the
/// timeshare calendar (insertion at `tdq_idx` + the priority's offset, removal from
/// `tdq_ridx`, one queue further per stat tick) lets the nice 19 one run, less than the
/// others (its offset is larger, about 43 queues against 26) but far from starved.
#[test]
fn the_calendar_queue_lets_worse_priorities_run() {
    let text = r#"{"global": {"duration": 10},
        "tasks": {"a": {"loop": 1, "run": -1},
                  "b": {"loop": 1, "run": -1},
                  "niced": {"priority": 19, "loop": 1, "run": -1}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000}}}"#;
    let r = run(text, &[], 10_000);
    let (a, b, n) = (
        cpu_ns_in(&r, "a"),
        cpu_ns_in(&r, "b"),
        cpu_ns_in(&r, "niced"),
    );
    assert!(n >= 1500 * MS, "nice 19 ran {n} ns of 10 s");
    assert!(
        5 * n < 4 * a.min(b),
        "nice 19 {n} well below nice 0 {a}, {b}"
    );
    // A statclock as fast as hz = 1000 sweeps the 64 queues within one slice: nice
    // hardly separates the hogs any more.
    let r = run(text, &[("stathz", "1000")], 10_000);
    let (a, n) = (cpu_ns_in(&r, "a"), cpu_ns_in(&r, "niced"));
    assert!(10 * n > 9 * a, "at stathz 1000: nice 19 {n}, nice 0 {a}");
}

/// Two hogs start pinned to CPU 0 (a 1 ms first phase), then may use both CPUs; a third
/// task pinned to CPU 1 runs 100 ms and exits. With the balancer off, CPU 1 going idle
/// steals one hog (`tdq_idled`: CPU 0 holds `steal_thresh` = 2 threads); with stealing
/// off too, both hogs stay on CPU 0 and share it.
#[test]
fn an_idle_cpu_steals_from_a_busy_one() {
    let text = r#"{"global": {"duration": 2},
        "tasks": {
          "h1": {"loop": 1, "phases": {"pin": {"cpus": [0], "run": 1000},
                                       "free": {"cpus": [0, 1], "run": 5000000}}},
          "h2": {"loop": 1, "phases": {"pin": {"cpus": [0], "run": 1000},
                                       "free": {"cpus": [0, 1], "run": 5000000}}},
          "x": {"cpus": [1], "loop": 1, "run": 100000}},
        "schedlab": {"machine": {"cpus": 2, "hz": 1000}}}"#;
    let both = |r: &serde_json::Value| cpu_ns_in(r, "h1") + cpu_ns_in(r, "h2");
    let stealing = run(text, &[("balance", "0")], 1000);
    let pinned = run(text, &[("balance", "0"), ("steal_idle", "0")], 1000);
    // Stealing: CPU 0 for 1 s and CPU 1 from 100 ms on: about 1.9 s between them.
    assert!(
        both(&stealing) >= 1850 * MS,
        "with stealing {}",
        both(&stealing)
    );
    // No stealing: only CPU 0's second.
    assert!(both(&pinned) <= 1010 * MS, "without {}", both(&pinned));
}

/// The same start with stealing off: the periodic balancer (`sched_balance`, about every
/// `balance_interval` = hz ticks of CPU 0, randomised) moves one hog to the idle CPU
/// within a few seconds.
#[test]
fn the_periodic_balancer_moves_a_thread_to_an_idle_cpu() {
    let text = r#"{"global": {"duration": 5},
        "tasks": {
          "h1": {"loop": 1, "phases": {"pin": {"cpus": [0], "run": 1000},
                                       "free": {"cpus": [0, 1], "run": 50000000}}},
          "h2": {"loop": 1, "phases": {"pin": {"cpus": [0], "run": 1000},
                                       "free": {"cpus": [0, 1], "run": 50000000}}},
          "x": {"cpus": [1], "loop": 1, "run": 100000}},
        "schedlab": {"machine": {"cpus": 2, "hz": 1000}}}"#;
    let both = |r: &serde_json::Value| cpu_ns_in(r, "h1") + cpu_ns_in(r, "h2");
    let balanced = run(text, &[("steal_idle", "0")], 5000);
    let not = run(text, &[("steal_idle", "0"), ("balance", "0")], 5000);
    // Balanced by 1.5 s at the latest (interval / 2 + up to interval ticks).
    assert!(both(&balanced) >= 8400 * MS, "balanced {}", both(&balanced));
    assert!(both(&not) <= 5010 * MS, "not balanced {}", both(&not));
}

/// The CPUs each task was switched in on, from the run's ftrace text.
fn cpus_of(text: &str, tag: &str) -> Vec<(String, u32)> {
    let trace = trace_under(text, tag, "freebsd-ule");
    let mut seen = Vec::new();
    for line in trace.lines().filter(|l| l.contains("sched_switch:")) {
        let cpu = line
            .split('[')
            .nth(1)
            .and_then(|s| s.split(']').next())
            .and_then(|s| s.trim().parse::<u32>().ok());
        let next = line
            .split("next_comm=")
            .nth(1)
            .and_then(|s| s.split_whitespace().next());
        if let (Some(cpu), Some(next)) = (cpu, next) {
            let e = (next.to_string(), cpu);
            if !seen.contains(&e) {
                seen.push(e);
            }
        }
    }
    seen
}

/// Two cores of two hardware threads each: two hogs run on different cores (the
/// `cpu_search` over the core groups finds the idle core's total load lower), not on the
/// two threads of one core; on every run each stays where it was placed.
#[test]
fn two_hogs_on_an_smt_machine_take_different_cores() {
    let text = r#"{"global": {"duration": 1},
        "tasks": {"a": {"loop": 1, "run": -1}, "b": {"loop": 1, "run": -1}},
        "schedlab": {"machine": {"hz": 1000,
            "topology": {"packages": 1, "cores": 2, "threads": 2}}}}"#;
    let seen = cpus_of(text, "smt");
    let on = |name: &str| -> Vec<u32> {
        seen.iter()
            .filter(|(n, _)| n.starts_with(name))
            .map(|&(_, c)| c)
            .collect()
    };
    let (a, b) = (on("a"), on("b"));
    assert_eq!(a.len(), 1, "a ran on {a:?}");
    assert_eq!(b.len(), 1, "b ran on {b:?}");
    assert_ne!(
        a[0] / 2,
        b[0] / 2,
        "a on CPU {}, b on CPU {}: one core",
        a[0],
        b[0]
    );
}

/// FIFO/RR priorities map through FreeBSD's Linux ABI as under 4BSD; batch, idle and
/// deadline are refused.
#[test]
fn attributes_map_as_the_linux_abi_does() {
    let p = FreebsdUle::new(1);
    let rt = |policy, prio| SchedAttrs {
        policy,
        rt_priority: prio,
        nice: 0,
        dl: None,
        slice_ns: None,
    };
    assert!(p.accepts(&rt(Policy::Fifo, 99)).is_ok());
    for pol in [Policy::Batch, Policy::Idle, Policy::Deadline] {
        let e = p.accepts(&rt(pol, 0)).unwrap_err();
        assert!(e.contains("freebsd-ule"), "{e}");
    }
}

/// A spec with sleepers and hogs on four CPUs in two SMT cores gives the same bytes
/// twice (the search's random offsets and the balancer's intervals come from the
/// run's seed).
#[test]
fn runs_are_deterministic() {
    let text = r#"{"global": {"duration": 3},
        "tasks": {"hog": {"instance": 3, "loop": -1, "run": 30000, "sleep": 1000},
                  "io": {"instance": 3, "priority": 5, "loop": -1, "run": 2000, "sleep": 20000}},
        "schedlab": {"machine": {"hz": 250,
            "topology": {"packages": 1, "cores": 2, "threads": 2}}}}"#;
    let once = || {
        let mut r = run(text, &[], 3000);
        r["run"]["wall_s"] = serde_json::json!(0);
        r.to_string()
    };
    assert_eq!(once(), once());
}

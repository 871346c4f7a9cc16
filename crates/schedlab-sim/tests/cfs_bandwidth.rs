//! CFS bandwidth control (CONFIG_CFS_BANDWIDTH) through the engine, for `linux-cfs` and
//! `linux-eevdf`: specs give cgroups a quota per period (`cpu.cfs_quota_us` /
//! `cpu.cfs_period_us`, cgroup v2's `cpu.max`) and a burst, and the CPU time and the
//! `cpu.stat` counters of the result are checked against the kernel's rules
//! (kernel/sched/fair.c, 6.1 and 6.12):
//! - a group's run queues together spend at most `quota` of CPU time per period; a run
//!   queue that ran out is throttled until the period timer refills the pool, and the
//!   time it ran past its last slice (up to a tick, as runtime is charged at the tick) is
//!   a debt paid from the next period, so over whole periods the group gets exactly
//!   `quota / period` of a CPU;
//! - the pool is refilled to `min(runtime + quota, quota + burst)`, so a group that left
//!   its quota unused may run up to `quota + burst` in one period; a period that used
//!   more than the quota counts in `nr_bursts` and `burst_time`;
//! - each level's run queue accounts its own runtime: a group below a limited group is
//!   held by the smaller of the two;
//! - `nr_periods` counts the periods the timer ran through, `nr_throttled` those that
//!   ended with a run queue of the group throttled.

use schedlab_sim::{SimConfig, SimOutput};

const MS: u64 = 1_000_000;
const FAIR: [&str; 2] = ["linux-cfs", "linux-eevdf"];
/// One tick at the default 250 Hz: how far a run queue may run past its runtime before
/// the tick's `update_curr` sees it.
const TICK: u64 = 4 * MS;

fn run(text: &str, sched: &str, ms: u64) -> SimOutput {
    let cfg = SimConfig {
        scheduler: Some(sched.into()),
        check: true,
        duration_ns: Some(ms * MS),
        ..SimConfig::default()
    };
    schedlab_sim::simulate_text(text, &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"))
}

fn cpu_ns(out: &SimOutput, name: &str) -> u64 {
    let r = out.json();
    let t = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
        .clone();
    t["cpu_ns"].as_u64().unwrap()
}

/// The `cpu.stat` counters of the group at `path` (`None` when it reports none).
fn stat(out: &SimOutput, path: &str) -> Option<serde_json::Value> {
    let r = out.json();
    r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["path"] == path)
        .map(|g| g["cfs_bandwidth"].clone())
}

fn counter(out: &SimOutput, path: &str, name: &str) -> u64 {
    let s = stat(out, path).unwrap_or_else(|| panic!("{path} reports no CFS bandwidth"));
    s[name].as_u64().unwrap()
}

/// `got` (a share of one CPU) is within 0.1 percentage point of `want`.
fn assert_share(sched: &str, what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 0.001,
        "{sched}: {what} got {got:.5} of a CPU, quota/period gives {want:.5}"
    );
}

/// One CPU, one busy loop in a group: over whole periods it runs `quota / period` of the
/// time, whatever the quota, the period and the slice; every period ends throttled.
#[test]
fn a_busy_loop_gets_quota_over_period_of_one_cpu() {
    for (quota, period) in [
        (30_000, 100_000),
        (50_000, 100_000),
        (7_000, 10_000),
        (250_000, 500_000),
    ] {
        let text = format!(
            r#"{{
            "tasks": {{"hog": {{"loop": -1, "run": 100000, "taskgroup": "/a"}}}},
            "schedlab": {{"machine": {{"cpus": 1}}, "cgroups": {{"/a": {{
                "cpu.cfs_quota_us": {quota}, "cpu.cfs_period_us": {period}}}}}}}
        }}"#
        );
        for sched in FAIR {
            let periods = 4_000_000 / period;
            let out = run(&text, sched, periods * period / 1000);
            let elapsed = (periods * period * 1000) as f64;
            let got = cpu_ns(&out, "hog") as f64 / elapsed;
            assert_share(sched, "hog", got, quota as f64 / period as f64);
            assert_eq!(counter(&out, "/a", "nr_periods"), periods, "{sched}");
            assert_eq!(counter(&out, "/a", "nr_throttled"), periods, "{sched}");
        }
    }
}

/// Two CPUs, a quota of 1.5 CPUs (150 ms per 100 ms) over two busy loops in the group:
/// together they get 1.5 CPUs, each (the CPUs' run queues taking 5 ms slices from one
/// pool alternately) about 0.75.
#[test]
fn a_quota_of_one_and_a_half_cpus_is_shared_by_two_busy_loops() {
    let text = r#"{
        "tasks": {"hog": {"instance": 2, "loop": -1, "run": 100000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 2}, "cgroups": {"/a": {
            "cpu.cfs_quota_us": 150000, "cpu.cfs_period_us": 100000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 4_000);
        let elapsed = (4_000 * MS) as f64;
        let (a, b) = (cpu_ns(&out, "hog"), cpu_ns(&out, "hog-1"));
        assert_share(sched, "the group", (a + b) as f64 / elapsed, 1.5);
        for (name, t) in [("hog", a), ("hog-1", b)] {
            let got = t as f64 / elapsed;
            assert!((got - 0.75).abs() < 0.02, "{sched}: {name} got {got:.4}");
        }
    }
}

/// The group's tasks share their quota; a task outside the group takes the rest of the
/// CPU: with 30 ms per 100 ms for /a, its task gets 0.3 and the other 0.7.
#[test]
fn a_task_outside_the_group_gets_what_the_quota_leaves() {
    let text = r#"{
        "tasks": {"limited": {"loop": -1, "run": 100000, "taskgroup": "/a"},
                  "free": {"loop": -1, "run": 100000}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 30000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 4_000);
        let elapsed = (4_000 * MS) as f64;
        assert_share(
            sched,
            "limited",
            cpu_ns(&out, "limited") as f64 / elapsed,
            0.3,
        );
        assert_share(sched, "free", cpu_ns(&out, "free") as f64 / elapsed, 0.7);
    }
}

/// Burst: /a (40 ms per 100 ms, burst 30 ms) sleeps through its first three periods, so
/// its pool fills to quota + burst = 70 ms; from 300 ms on it is busy. In the period
/// [300, 400) ms it runs the 70 ms (plus the 1 ms its run queue kept when it last went
/// idle, `min_cfs_rq_runtime`, and what it overran by up to a tick), and from then on 40 ms
/// per period: by 1 s, 70 + 6 · 40 ms. The refill at 400 ms counts one burst of 30 ms.
#[test]
fn burst_lets_an_idle_then_busy_group_run_quota_plus_burst_in_one_period() {
    let text = r#"{
        "tasks": {"t": {"loop": 1, "taskgroup": "/a", "phases": {
            "idle": {"loop": 1, "sleep": 300000},
            "busy": {"loop": -1, "run": 100000}}}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {
            "cpu.cfs_quota_us": 40000, "cpu.cfs_burst_us": 30000}}}
    }"#;
    for sched in FAIR {
        let first = cpu_ns(&run(text, sched, 400), "t");
        assert!(
            (70 * MS..=71 * MS + TICK).contains(&first),
            "{sched}: ran {first} ns in the first busy period"
        );
        let out = run(text, sched, 1_000);
        let total = cpu_ns(&out, "t");
        assert!(
            (first + 6 * 40 * MS - TICK..=first + 6 * 40 * MS + TICK).contains(&total),
            "{sched}: ran {total} ns by 1 s after {first} ns in the first busy period"
        );
        assert_eq!(counter(&out, "/a", "nr_bursts"), 1, "{sched}");
        assert_eq!(counter(&out, "/a", "burst_time_ns"), 30 * MS, "{sched}");
    }
}

/// Without a burst the same group runs 40 ms in its first busy period and no more.
#[test]
fn without_burst_an_idle_then_busy_group_runs_only_its_quota() {
    let text = r#"{
        "tasks": {"t": {"loop": 1, "taskgroup": "/a", "phases": {
            "idle": {"loop": 1, "sleep": 300000},
            "busy": {"loop": -1, "run": 100000}}}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 40000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 400);
        let first = cpu_ns(&out, "t");
        assert!(
            (40 * MS..=41 * MS + TICK).contains(&first),
            "{sched}: ran {first} ns in the first busy period"
        );
        assert_eq!(counter(&out, "/a", "nr_bursts"), 0, "{sched}");
    }
}

/// Hierarchical quotas: /p has 60 ms per 100 ms, its child /p/c 20 ms. A busy loop in
/// /p/c is held by its own quota (0.2); a busy loop directly in /p gets the rest of /p's
/// (0.4); together they stay within /p's 0.6.
#[test]
fn a_child_with_a_smaller_quota_than_its_parent_is_held_by_its_own() {
    let text = r#"{
        "tasks": {"child": {"loop": -1, "run": 100000, "taskgroup": "/p/c"},
                  "parent": {"loop": -1, "run": 100000, "taskgroup": "/p"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {
            "/p": {"cpu.cfs_quota_us": 60000},
            "/p/c": {"cpu.cfs_quota_us": 20000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 4_000);
        let elapsed = (4_000 * MS) as f64;
        assert_share(sched, "child", cpu_ns(&out, "child") as f64 / elapsed, 0.2);
        assert_share(
            sched,
            "parent",
            cpu_ns(&out, "parent") as f64 / elapsed,
            0.4,
        );
    }
}

/// The other way round (cgroup v2 allows a child a larger quota than its parent's): a
/// busy loop in /p/c with 50 ms per 100 ms below /p with 30 ms is held by /p's quota.
#[test]
fn a_child_with_a_larger_quota_than_its_parent_is_held_by_the_parent() {
    let text = r#"{
        "tasks": {"child": {"loop": -1, "run": 100000, "taskgroup": "/p/c"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {
            "/p": {"cpu.max": "30000 100000"},
            "/p/c": {"cpu.max": "50000 100000"}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 4_000);
        let elapsed = (4_000 * MS) as f64;
        assert_share(sched, "child", cpu_ns(&out, "child") as f64 / elapsed, 0.3);
        assert_eq!(counter(&out, "/p/c", "nr_throttled"), 0, "{sched}");
        assert_eq!(counter(&out, "/p", "nr_throttled"), 40, "{sched}");
    }
}

/// A quota of -1 (and cgroup v2's "max") means no limit: the task runs all the time,
/// exactly as without the setting, and the group reports no bandwidth statistics.
#[test]
fn an_unlimited_quota_never_throttles() {
    let plain = r#"{
        "tasks": {"t": {"loop": -1, "run": 100000, "taskgroup": "/a"}, "u": {"loop": -1, "run": 100000}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.shares": 1024}}}
    }"#;
    for sched in FAIR {
        let want = run(plain, sched, 1_000);
        for knob in [r#""cpu.cfs_quota_us": -1"#, r#""cpu.max": "max 50000""#] {
            let text = plain.replace(r#""cpu.shares": 1024"#, knob);
            let text = if knob.contains("cpu.max") {
                text.replace(r#""cpu.max""#, r#""cpu.weight": 100, "cpu.max""#)
            } else {
                text
            };
            let out = run(&text, sched, 1_000);
            assert_eq!(cpu_ns(&out, "t"), cpu_ns(&want, "t"), "{sched} {knob}");
            assert_eq!(cpu_ns(&out, "u"), cpu_ns(&want, "u"), "{sched} {knob}");
            assert!(stat(&out, "/a").is_none(), "{sched} {knob}");
        }
    }
}

/// cgroup v2's `cpu.max` "50000 100000" and `cpu.max.burst` are the v1 files'
/// `cpu.cfs_quota_us` 50000, `cpu.cfs_period_us` 100000 and `cpu.cfs_burst_us`: the
/// results are the same byte for byte but for the spec's hash and the host time.
#[test]
fn cpu_max_gives_the_same_result_as_the_v1_files() {
    let tasks = r#""tasks": {
            "hog": {"instance": 2, "loop": -1, "run": 30000, "sleep": 10000, "taskgroup": "/a"},
            "other": {"loop": -1, "run": 100000}}"#;
    let v1 = format!(
        r#"{{{tasks}, "schedlab": {{"machine": {{"cpus": 2}}, "cgroups": {{"/a": {{
            "cpu.cfs_quota_us": 50000, "cpu.cfs_period_us": 100000, "cpu.cfs_burst_us": 20000}}}}}}}}"#
    );
    let v2 = format!(
        r#"{{{tasks}, "schedlab": {{"machine": {{"cpus": 2}}, "cgroups": {{"/a": {{
            "cpu.max": "50000 100000", "cpu.max.burst": 20000}}}}}}}}"#
    );
    for sched in FAIR {
        let text = |spec: &str| {
            let mut r = run(spec, sched, 1_000).json();
            r["run"]["wall_s"] = serde_json::Value::Null;
            r["run"]["spec_sha256"] = serde_json::Value::Null;
            serde_json::to_string(&r).unwrap()
        };
        let (a, b) = (text(&v1), text(&v2));
        assert!(a.contains(r#""nr_throttled""#), "{sched}: {a}");
        assert_eq!(a, b, "{sched}");
    }
}

/// `nr_throttled` counts the periods that ran out of quota. A periodic task (an absolute
/// 100 ms timer, on the period grid) needs 35 ms in even periods and 5 ms in odd ones
/// under a quota of 30 ms: each even period runs out (and what is left over runs in the
/// next, which then needs 10 ms or so), each odd one does not. Over 1 s: 10 periods, 5
/// throttled.
#[test]
fn nr_throttled_counts_the_periods_that_ran_out_of_quota() {
    let text = r#"{
        "tasks": {"t": {"loop": -1, "taskgroup": "/a", "phases": {
            "heavy": {"loop": 1, "run": 35000, "timer": {"ref": "tick", "period": 100000, "mode": "absolute"}},
            "light": {"loop": 1, "run": 5000,
                      "timer": {"ref": "tick", "period": 100000, "mode": "absolute"}}}}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 30000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 1_000);
        assert_eq!(counter(&out, "/a", "nr_periods"), 10, "{sched}");
        assert_eq!(counter(&out, "/a", "nr_throttled"), 5, "{sched}");
        // Each heavy period is throttled from when its 30 ms (and the 1 ms its run queue
        // kept when the task last slept) ran out, seen at a tick, to its end.
        let throttled = counter(&out, "/a", "throttled_time_ns");
        assert!(
            (5 * (69 * MS - TICK)..=5 * 70 * MS).contains(&throttled),
            "{sched}: throttled {throttled} ns"
        );
    }
}

/// Same spec, same seed: the same result (CPU times, switches, cpu.stat), with quotas
/// at two levels, a burst and two CPUs.
#[test]
fn bandwidth_runs_are_deterministic() {
    let text = r#"{
        "tasks": {
            "a": {"instance": 3, "loop": -1, "run": 7000, "sleep": 3000, "taskgroup": "/p/c"},
            "b": {"instance": 2, "loop": -1, "run": 20000, "sleep": 1000, "taskgroup": "/p"},
            "c": {"loop": -1, "run": 50000}},
        "schedlab": {"machine": {"cpus": 2}, "cgroups": {
            "/p": {"cpu.cfs_quota_us": 120000, "cpu.cfs_burst_us": 40000},
            "/p/c": {"cpu.cfs_quota_us": 30000, "cpu.cfs_period_us": 50000}}}
    }"#;
    for sched in FAIR {
        let once = |_| {
            let mut r = run(text, sched, 2_000).json();
            r["run"]["wall_s"] = serde_json::Value::Null;
            serde_json::to_string(&r).unwrap()
        };
        let (a, b) = (once(0), once(1));
        assert!(a.contains(r#""path":"/p/c""#), "{sched}: {a}");
        assert_eq!(a, b, "{sched}");
    }
}

/// A policy that does not model CFS bandwidth runs the spec without it, and the result
/// says so, naming the policy and the limited group.
#[test]
fn other_policies_note_that_they_ignore_the_quota() {
    let text = r#"{
        "tasks": {"t": {"loop": -1, "run": 100000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 30000}}}
    }"#;
    let out = run(text, "linux-o1", 500);
    let r = out.json();
    let notes: Vec<&str> = r["run"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("CFS bandwidth")
            && n.contains("$.schedlab.cgroups[\"/a\"]")
            && n.contains("linux-o1")),
        "{notes:?}"
    );
    assert_eq!(cpu_ns(&out, "t"), 500 * MS);
    assert!(r["groups"].as_array().unwrap().is_empty());
}

/// The slack timer: /a has 20 ms per 100 ms on three CPUs. "x" (CPU 0) is busy; the two
/// "y" tasks wake at 9 ms, each CPU's run queue taking a 5 ms slice from the pool, which
/// empties it: x is throttled at 10 ms. The y tasks sleep again after 1.2 ms, and their run
/// queues, left empty, return all but `min_cfs_rq_runtime` (1 ms) of their slices; with x
/// throttled and more than a slice back in the pool, the slack timer hands it to x 5 ms
/// later, and x runs until the pool is empty again and is throttled a second time. The
/// group so uses its quota but for the 1 ms each y run queue keeps (x's last tick may
/// overrun by up to 1 ms at 1000 Hz). Without the slack timer the returned runtime would
/// wait in the pool until the refill, which caps it at the quota: x would stop at 10 ms.
#[test]
fn the_slack_timer_hands_returned_runtime_to_a_throttled_cpu() {
    let text = r#"{
        "tasks": {
            "x": {"loop": -1, "run": 100000, "cpus": [0], "taskgroup": "/a"},
            "y": {"instance": 2, "loop": 1, "taskgroup": "/a", "phases": {
                "wait": {"loop": 1, "sleep": 9000},
                "work": {"loop": 1, "run": 1200},
                "rest": {"loop": 1, "sleep": 500000}}}},
        "schedlab": {"machine": {"cpus": 3, "hz": 1000},
                     "cgroups": {"/a": {"cpu.cfs_quota_us": 20000}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 100);
        let r = out.json();
        let x = &r["tasks"][0];
        assert_eq!(x["name"], "x");
        assert_eq!(x["switches_involuntary"], 2, "{sched}: x throttled twice");
        let used = cpu_ns(&out, "x") + cpu_ns(&out, "y") + cpu_ns(&out, "y-1");
        assert!(
            (18 * MS..=19 * MS).contains(&used),
            "{sched}: the group used {used} ns of its 20 ms"
        );
    }
}

/// The period timer stops once a period passes in which no run queue asked for runtime
/// (`cfs_b->idle` set by one expiry, the timer not restarted by the next): a run without a
/// duration ends two period boundaries after its last task exits, at the expiry that
/// finds the group idle. 150 ms of work at 20 ms per 100 ms ends in the eighth period.
/// (linux-eevdf's fair server is disabled here: its own zero-laxity timer, pending when
/// the last task exits, would end the run when it fires, `tests/dl_server.rs`.)
#[test]
fn the_period_timer_stops_after_an_idle_period() {
    let text = r#"{
        "global": {"duration": 2},
        "tasks": {"t": {"loop": 3, "run": 50000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a": {"cpu.cfs_quota_us": 20000}}}
    }"#;
    for sched in FAIR {
        let params = match sched {
            "linux-eevdf" => [("fair_server_runtime_ns".to_string(), "0".to_string())]
                .into_iter()
                .collect(),
            _ => Default::default(),
        };
        let cfg = SimConfig {
            scheduler: Some(sched.into()),
            check: true,
            params,
            ..SimConfig::default()
        };
        let out = schedlab_sim::simulate_text(text, &cfg).unwrap();
        let r = out.json();
        let exit = r["summary"]["makespan_ns"].as_u64().unwrap();
        assert_eq!(
            exit / (100 * MS),
            7,
            "{sched}: the last task exited at {exit} ns"
        );
        // Periods ending at 100 … 800 ms found runtime used; the one ending at 900 ms
        // found none, and the timer stopped there, 1.1 s before the run did.
        assert_eq!(counter(&out, "/a", "nr_periods"), 9, "{sched}");
    }
}

/// Runtime is handed out in slices (`sched_cfs_bandwidth_slice_us`): with 8 ms per 100 ms
/// for two busy loops on two CPUs, the run queue that asks first takes a whole 5 ms slice
/// and the two share the 3 ms left, so one CPU gets most of the quota; with 1 ms slices
/// they take turns and split it evenly. Either way the group gets its 8 ms per period.
#[test]
fn the_slice_tunable_sets_how_runtime_is_handed_to_cpus() {
    let text = r#"{
        "tasks": {"hog": {"instance": 2, "loop": -1, "run": 100000, "taskgroup": "/a"}},
        "schedlab": {"machine": {"cpus": 2, "hz": 1000},
                     "cgroups": {"/a": {"cpu.cfs_quota_us": 8000}}}
    }"#;
    for sched in FAIR {
        for slice in [5_000u64, 1_000] {
            let cfg = SimConfig {
                scheduler: Some(sched.into()),
                params: vec![("sched_cfs_bandwidth_slice_us".into(), slice.to_string())],
                check: true,
                duration_ns: Some(1_000 * MS),
                ..SimConfig::default()
            };
            let out = schedlab_sim::simulate_text(text, &cfg).unwrap();
            let (a, b) = (cpu_ns(&out, "hog"), cpu_ns(&out, "hog-1"));
            assert!(
                (80 * MS..=81 * MS).contains(&(a + b)),
                "{sched}, slice {slice}: {a} + {b}"
            );
            let apart = a.abs_diff(b);
            if slice == 1_000 {
                assert!(apart <= 2 * MS, "{sched}, slice {slice}: {a} and {b}");
            } else {
                assert!(apart >= 20 * MS, "{sched}, slice {slice}: {a} and {b}");
            }
        }
    }
}

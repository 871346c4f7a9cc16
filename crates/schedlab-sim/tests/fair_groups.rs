//! Fair group scheduling (CONFIG_FAIR_GROUP_SCHED) through the engine, for `linux-cfs`
//! (v5.4) and `linux-eevdf` (6.6+): specs put CPU hogs in cgroups (`taskgroup`,
//! `schedlab.cgroups`) and the CPU time each gets is checked against the kernel's rules.
//!
//! The rules the expectations are derived from (kernel/sched/fair.c): a group's entity on
//! a CPU weighs `calc_group_shares` = `cpu.shares · load / Σ load` (its run queue's queued
//! weight there over the group's on every CPU), clamped to 2..=cpu.shares; entities
//! share their run queue in proportion to their weights, level by level, so a task's
//! share of a CPU is the product of its entity's and its ancestors' shares of their run
//! queues. On one CPU `load / Σ load` = 1: every group entity weighs exactly its group's
//! `cpu.shares`.

use schedlab_sim::{SimConfig, SimOutput};

const MS: u64 = 1_000_000;
const FAIR: [&str; 2] = ["linux-cfs", "linux-eevdf"];

fn run(text: &str, sched: &str, ms: u64) -> SimOutput {
    let cfg = SimConfig {
        scheduler: Some(sched.into()),
        check: true,
        duration_ns: Some(ms * MS),
        ..SimConfig::default()
    };
    schedlab_sim::simulate_text(text, &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"))
}

/// Each task's share of the elapsed time (its CPU time over the run's length).
fn shares(out: &SimOutput) -> Vec<(String, f64)> {
    let r = out.json();
    let elapsed = r["run"]["sim_ns"].as_u64().unwrap() as f64;
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_string();
            (name, t["cpu_ns"].as_u64().unwrap() as f64 / elapsed)
        })
        .collect()
}

fn share_of(out: &SimOutput, name: &str) -> f64 {
    shares(out)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no task {name}"))
        .1
}

/// `got` is within `tol` (relative) of `want`.
fn assert_share(sched: &str, name: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want,
        "{sched}: {name} got {got:.5} of the CPU, the kernel's rules give {want:.5}"
    );
}

/// One CPU, groups /a and /b with the default shares (1024): /a runs one hog, /b four.
/// Each group entity weighs 1024 (one CPU), so each group gets half of the CPU: the /a
/// hog 1/2, each /b hog 1/2 · 1/4 = 1/8. Without groups the five equal hogs would get 1/5
/// each.
#[test]
fn two_groups_with_equal_shares_split_one_cpu_in_half() {
    let grouped = r#"{
        "tasks": {
            "a": {"loop": -1, "run": 100000, "taskgroup": "/a"},
            "b": {"instance": 4, "loop": -1, "run": 100000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1}}
    }"#;
    let flat = r#"{
        "tasks": {
            "a": {"loop": -1, "run": 100000},
            "b": {"instance": 4, "loop": -1, "run": 100000}
        },
        "schedlab": {"machine": {"cpus": 1}}
    }"#;
    for sched in FAIR {
        let out = run(grouped, sched, 6_000);
        assert_share(sched, "a", share_of(&out, "a"), 0.5, 0.005);
        for b in ["b", "b-1", "b-2", "b-3"] {
            assert_share(sched, b, share_of(&out, b), 0.125, 0.01);
        }
        let out = run(flat, sched, 6_000);
        for (name, got) in shares(&out) {
            assert_share(sched, &name, got, 0.2, 0.01);
        }
    }
}

/// cpu.shares 2048 for /a (one hog) against 1024 for /b (two hogs) on one CPU: the group
/// entities weigh 2048 and 1024, so /a gets 2/3 and /b 1/3, 1/6 for each of its hogs.
/// cgroup v2's `cpu.weight` 200 is stored as shares round(200 · 1024 / 100) = 2048 and
/// gives the same split.
#[test]
fn shares_2048_against_1024_give_two_thirds_and_one_third() {
    for file in [r#""cpu.shares": 2048"#, r#""cpu.weight": 200"#] {
        let text = format!(
            r#"{{
            "tasks": {{
                "a": {{"loop": -1, "run": 100000, "taskgroup": "/a"}},
                "b": {{"instance": 2, "loop": -1, "run": 100000, "taskgroup": "/b"}}
            }},
            "schedlab": {{"machine": {{"cpus": 1}}, "cgroups": {{"/a": {{{file}}}}}}}
        }}"#
        );
        for sched in FAIR {
            let out = run(&text, sched, 6_000);
            assert_share(sched, "a", share_of(&out, "a"), 2.0 / 3.0, 0.005);
            for b in ["b", "b-1"] {
                assert_share(sched, b, share_of(&out, b), 1.0 / 6.0, 0.01);
            }
        }
    }
}

/// A nested hierarchy on one CPU: / holds /a and /b (1024 each); /a holds a hog of its
/// own and the groups /a/x (1024) and /a/y (3072), one hog each; /b one hog. The root
/// splits 1024 : 1024, so /b's hog gets 1/2; inside /a the task (nice 0, 1024), /a/x's
/// entity (1024) and /a/y's (3072) split /a's half 1 : 1 : 3, so they get 1/10, 1/10 and
/// 3/10.
#[test]
fn a_nested_hierarchy_divides_each_level_by_weight() {
    let text = r#"{
        "tasks": {
            "a": {"loop": -1, "run": 100000, "taskgroup": "/a"},
            "x": {"loop": -1, "run": 100000, "taskgroup": "/a/x"},
            "y": {"loop": -1, "run": 100000, "taskgroup": "/a/y"},
            "b": {"loop": -1, "run": 100000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1}, "cgroups": {"/a/y": {"cpu.shares": 3072}}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 6_000);
        assert_share(sched, "b", share_of(&out, "b"), 0.5, 0.005);
        assert_share(sched, "a", share_of(&out, "a"), 0.1, 0.01);
        assert_share(sched, "x", share_of(&out, "x"), 0.1, 0.01);
        assert_share(sched, "y", share_of(&out, "y"), 0.3, 0.01);
    }
}

/// A task that moves between /a and /b at its phases (as rt-app's tutorial/example11
/// moves its thread), each phase running 200 ms, among one hog in each group, on one CPU.
/// Each group always gets 1/2; the group the mover is in splits its half 1 : 1, so the
/// mover gets 1/4 in either, and its two phases last equally long (200 ms at 1/4:
/// 800 ms); the hog it joins gets 1/4, the other 1/2: each hog averages 3/8. (A phase
/// ends when the mover's share of the tick-long slices has added up to 200 ms, up to one
/// slice earlier than the smooth share would have it: within 0.5 % here.) The moved
/// entity keeps its place relative to the run queues' virtual time (CFS) or its lag
/// (EEVDF), and the invariant checker runs after every event.
#[test]
fn a_task_moving_between_groups_keeps_the_shares_and_the_invariants() {
    let text = r#"{
        "tasks": {
            "mover": {"loop": -1, "phases": {
                "in_a": {"run": 200000, "taskgroup": "/a"},
                "in_b": {"run": 200000, "taskgroup": "/b"}
            }},
            "hog_a": {"loop": -1, "run": 100000, "taskgroup": "/a"},
            "hog_b": {"loop": -1, "run": 100000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1}}
    }"#;
    for sched in FAIR {
        let out = run(text, sched, 8_000);
        assert_share(sched, "mover", share_of(&out, "mover"), 0.25, 0.01);
        assert_share(sched, "hog_a", share_of(&out, "hog_a"), 0.375, 0.01);
        assert_share(sched, "hog_b", share_of(&out, "hog_b"), 0.375, 0.01);
    }
}

/// Two CPUs, /a (cpu.shares 3072) and /b (1024) with two hogs each, /a's started on CPU 0
/// and /b's on CPU 1 (a first phase pinned there for 1 ms, then both CPUs allowed). Two
/// tasks on each CPU, but the CPUs' root loads — their group entities' weights — are
/// 3072 and 1024: the balancer pulls by hierarchical load. CPU 1 (overloaded, like CPU 0,
/// sds avg 2048) has an imbalance of min(3072 − 2048, 2048 − 1024) = 1024 and pulls an
/// /a hog once its `task_h_load` (3072·3072/3073 · 1024/2049 = 1534) shifted right by
/// the failed attempts fits in it; then CPU 0 (load 1536, one task) pulls a /b hog
/// (task_h_load 2560·1024/2561 · 1024/2049 = 511 ≤ 2048 − 1536), and the CPUs stay at
/// 1536 + 512 each. From then on each CPU runs one /a hog and one /b hog, weighted 1536 :
/// 512: /a's get 3/4 of a CPU each, /b's 1/4. With equal shares the loads are 1024 each
/// from the start and nothing moves: every hog keeps half of its CPU.
#[test]
fn on_two_cpus_the_balancer_weighs_tasks_by_their_hierarchical_load() {
    let text = |shares: u64| {
        format!(
            r#"{{
            "tasks": {{
                "a": {{"instance": 2, "loop": 1, "taskgroup": "/a", "phases": {{
                    "start": {{"cpus": [0], "run": 1000}},
                    "free": {{"cpus": [0, 1], "run": 100000000}}}}}},
                "b": {{"instance": 2, "loop": 1, "taskgroup": "/b", "phases": {{
                    "start": {{"cpus": [1], "run": 1000}},
                    "free": {{"cpus": [0, 1], "run": 100000000}}}}}}
            }},
            "schedlab": {{"machine": {{"cpus": 2}}, "cgroups": {{"/a": {{"cpu.shares": {shares}}}}}}}
        }}"#
        )
    };
    let migrations = |out: &SimOutput| -> Vec<u64> {
        out.json()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["migrations"].as_u64().unwrap())
            .collect()
    };
    for sched in FAIR {
        let out = run(&text(3072), sched, 6_000);
        let moved = migrations(&out);
        assert_eq!(
            moved[..2].iter().sum::<u64>(),
            1,
            "{sched}: one /a hog moves"
        );
        assert_eq!(
            moved[2..].iter().sum::<u64>(),
            1,
            "{sched}: one /b hog moves"
        );
        for a in ["a", "a-1"] {
            assert_share(sched, a, share_of(&out, a), 0.75, 0.02);
        }
        for b in ["b", "b-1"] {
            assert_share(sched, b, share_of(&out, b), 0.25, 0.04);
        }
        let out = run(&text(1024), sched, 2_000);
        assert_eq!(
            migrations(&out),
            vec![0; 4],
            "{sched}: balanced from the start"
        );
        for (name, got) in shares(&out) {
            assert_share(sched, &name, got, 0.5, 0.01);
        }
    }
}

/// DELAY_DEQUEUE under a group (linux-eevdf with `delay_dequeue=1`, 6.12's default), on
/// one CPU: /a holds a hog and a task that runs 1 ms and sleeps 20 ms, /b a hog. The
/// sleeper blocks while not eligible and stays queued in /a until `pick_task_fair`, having
/// picked /a's entity at the root, picks it inside /a and completes its dequeue instead;
/// the pick then starts again from the root, where /a's entity, still queued for its hog,
/// must be back in the tree (nothing is made current before the pick reaches a task).
/// /a is never empty, so its entity weighs 1024 like /b's and each group gets half of
/// the CPU.
#[test]
fn a_delayed_dequeue_completed_by_the_pick_inside_a_group_keeps_the_group_queued() {
    let text = r#"{
        "tasks": {
            "sleeper": {"loop": -1, "run": 1000, "sleep": 20000, "taskgroup": "/a"},
            "hog_a": {"loop": -1, "run": 100000, "taskgroup": "/a"},
            "hog_b": {"loop": -1, "run": 100000, "taskgroup": "/b"}
        },
        "schedlab": {"machine": {"cpus": 1},
                     "scheduler": {"name": "linux-eevdf", "params": {"delay_dequeue": 1}}}
    }"#;
    let out = run(text, "linux-eevdf", 2_000);
    let sched = "linux-eevdf";
    let a = share_of(&out, "sleeper") + share_of(&out, "hog_a");
    assert_share(sched, "/a", a, 0.5, 0.005);
    assert_share(sched, "hog_b", share_of(&out, "hog_b"), 0.5, 0.005);
    assert!(
        share_of(&out, "sleeper") > 0.03,
        "{sched}: the sleeper runs"
    );
}

//! `edf` through the engine: Liu & Layland's theorem on one CPU (every deadline of an
//! implicit-deadline periodic set is met if and only if its utilisation is at most 1),
//! global dispatch on hand-checked examples (the m earliest deadlines run; a released job
//! preempts the latest running deadline; Dhall's effect as Linux's sched-deadline.rst
//! states it), and partitioned tasks staying on their CPU.

mod common;

use common::task_in as task;
use proptest::prelude::*;
use schedlab_sim::{simulate_text, SimConfig, SimOutput};
use serde_json::{json, Value};

const MS: u64 = 1_000;

fn run(spec: &Value, mode: &str) -> SimOutput {
    let cfg = SimConfig {
        scheduler: Some("edf".into()),
        params: vec![("mode".into(), mode.into())],
        check: true,
        ..SimConfig::default()
    };
    simulate_text(&spec.to_string(), &cfg).unwrap_or_else(|e| panic!("edf {mode}: {e}"))
}

fn max_response_us(out: &Value, name: &str) -> u64 {
    task(out, name)["response_ns"]["max"].as_u64().unwrap() / 1_000
}

/// A periodic task in µs: each job waits for its own timer, then runs `c`; `jobs` jobs.
fn periodic(c: u64, t: u64, priority: u32, jobs: u64, name: &str) -> Value {
    json!({
        "policy": "SCHED_FIFO", "priority": priority, "loop": jobs,
        "timer": {"ref": format!("unique_{name}"), "period": t, "mode": "absolute"},
        "run": c,
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One CPU, two hyperperiods of releases. Priorities are the reverse of rate-monotonic
/// (the longest period highest) so that a fixed-priority reading of them would miss:
/// `edf` ignores them.
fn one_cpu_set(set: &[(u64, u64)]) -> Value {
    let hyper = set.iter().fold(1, |a, &(_, t)| a / gcd(a, t) * t);
    let mut tasks = serde_json::Map::new();
    for (i, &(c, t)) in set.iter().enumerate() {
        let name = format!("t{i}");
        let prio = 1 + (t / MS / 2) as u32;
        tasks.insert(name.clone(), periodic(c, t, prio, 2 * hyper / t, &name));
    }
    json!({"tasks": tasks, "schedlab": {"machine": {"cpus": 1}}})
}

/// C_i (µs) for periods `ts` (ms) with weights `ws`, so that Σ C_i/T_i = `u_pct` % at
/// most (each C rounded down, at least 1 µs).
fn scaled(ts: &[u64], ws: &[u64], u_pct: u64) -> Vec<(u64, u64)> {
    let total: u64 = ws.iter().sum();
    ts.iter()
        .zip(ws)
        .map(|(&t, &w)| {
            let t = t * MS;
            ((t * w * u_pct / (100 * total)).max(1), t)
        })
        .collect()
}

fn utilisation(set: &[(u64, u64)]) -> f64 {
    set.iter().map(|&(c, t)| c as f64 / t as f64).sum()
}

fn set_strategy(u_pct: std::ops::RangeInclusive<u64>) -> impl Strategy<Value = Vec<(u64, u64)>> {
    let periods = prop::sample::select(vec![10u64, 20, 25, 40, 50, 100]);
    (prop::collection::vec((periods, 1u64..10), 2..7), u_pct).prop_map(|(tw, u)| {
        let (ts, ws): (Vec<u64>, Vec<u64>) = tw.into_iter().unzip();
        scaled(&ts, &ws, u)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// U ≤ 1 on one CPU: no deadline miss, and no job's response exceeds its period.
    #[test]
    fn utilisation_at_most_one_meets_every_deadline(set in set_strategy(60..=100)) {
        prop_assume!(utilisation(&set) <= 1.0);
        let out = run(&one_cpu_set(&set), "partitioned").json();
        prop_assert_eq!(out["summary"]["totals"]["deadline_misses"].as_u64(), Some(0));
        for (i, &(_, t)) in set.iter().enumerate() {
            prop_assert!(max_response_us(&out, &format!("t{i}")) <= t, "t{} of {:?}", i, set);
        }
    }

    /// U > 1 on one CPU: over the second hyperperiod the jobs due in it need more than
    /// its length, so some deadline is missed.
    #[test]
    fn utilisation_above_one_misses(set in set_strategy(105..=150)) {
        prop_assume!(utilisation(&set) > 1.0);
        let out = run(&one_cpu_set(&set), "partitioned").json();
        prop_assert!(out["summary"]["totals"]["deadline_misses"].as_u64().unwrap() > 0);
    }
}

/// The set Buttazzo's "Hard Real-Time Computing Systems" uses to compare rate-monotonic
/// and EDF scheduling: (C, T) = (2, 5), (4, 7), U = 0.4 + 4/7 ≈ 0.97. Under fixed priorities by rate the second task misses its
/// deadline at 7 (it completes at 8); under EDF it does not.
#[test]
fn edf_schedules_what_rate_monotonic_misses() {
    let set = [(2 * MS, 5 * MS), (4 * MS, 7 * MS)];
    let mut spec = one_cpu_set(&set);
    let out = run(&spec, "partitioned").json();
    assert_eq!(out["summary"]["totals"]["deadline_misses"], 0);
    // The same set under fp with rate-monotonic priorities misses.
    spec["tasks"]["t0"]["priority"] = json!(20);
    spec["tasks"]["t1"]["priority"] = json!(10);
    let cfg = SimConfig {
        scheduler: Some("fp".into()),
        ..SimConfig::default()
    };
    let fp = simulate_text(&spec.to_string(), &cfg).unwrap().json();
    assert!(fp["summary"]["totals"]["deadline_misses"].as_u64().unwrap() > 0);
}

/// A task in µs with one job: it starts after `delay`, waits for its timer of period `t`
/// and runs `c`; the job is released at `delay + t` and due one period later.
fn job(c: u64, t: u64, delay: u64, name: &str) -> Value {
    json!({
        "policy": "SCHED_FIFO", "delay": delay, "loop": 1,
        "timer": {"ref": format!("unique_{name}"), "period": t}, "run": c,
    })
}

/// Global, 2 CPUs: a (C 10, D 30) and b (C 10, D 20) are released at 30 ms and run on
/// both CPUs; c (C 5, D 8) is released at 32 ms and preempts a — the latest deadline
/// running (60 against b's 50) —, which resumes when c completes at 37 and ends at 45.
/// Responses: a 15, b 10, c 5 ms; no deadline is missed.
#[test]
fn global_a_released_job_preempts_the_latest_running_deadline() {
    let spec = json!({
        "tasks": {
            "a": job(10 * MS, 30 * MS, 0, "a"),
            "b": job(10 * MS, 20 * MS, 10 * MS, "b"),
            "c": job(5 * MS, 8 * MS, 24 * MS, "c"),
        },
        "schedlab": {"machine": {"cpus": 2}}
    });
    let out = run(&spec, "global").json();
    let responses: Vec<u64> = ["a", "b", "c"]
        .iter()
        .map(|n| max_response_us(&out, n))
        .collect();
    assert_eq!(responses, [15 * MS, 10 * MS, 5 * MS]);
    assert_eq!(out["summary"]["totals"]["deadline_misses"], 0);
}

/// Dhall's effect as Linux's sched-deadline.rst §3.3 states it, on 2 CPUs: two light tasks
/// (C 2, D 9 ms) and a heavy one (C 9, D 10 ms) released together at 10 ms; global EDF
/// runs the two earlier deadlines first (the second light job preempts the heavy one), so
/// the heavy job ends at 21 ms and misses its deadline, although the 13 ms of work due
/// within 10 ms fit in two CPUs.
#[test]
fn global_dhall_effect() {
    let spec = json!({
        "tasks": {
            "heavy": job(9 * MS, 10 * MS, 0, "heavy"),
            "light1": job(2 * MS, 9 * MS, MS, "light1"),
            "light2": job(2 * MS, 9 * MS, MS, "light2"),
        },
        "schedlab": {"machine": {"cpus": 2}}
    });
    let out = run(&spec, "global").json();
    assert_eq!(max_response_us(&out, "light1"), 2 * MS);
    assert_eq!(max_response_us(&out, "light2"), 2 * MS);
    assert_eq!(max_response_us(&out, "heavy"), 11 * MS);
    assert_eq!(task(&out, "heavy")["deadline_misses"], 1);
}

/// Partitioned, 2 CPUs, four tasks released together at 30 ms with equal deadlines:
/// placement alternates (p0, p2 on CPU 0; p1, p3 on CPU 1). CPU 1's short jobs end at
/// 32 ms and it idles while p2 waits behind p0 on CPU 0: nothing migrates, p2 responds
/// in 20 ms. Global moves p2 to CPU 1 when p1 ends at 31 ms: it responds in 11 ms.
#[test]
fn partitioned_tasks_stay_on_their_cpu() {
    let spec = json!({
        "tasks": {
            "p0": job(10 * MS, 30 * MS, 0, "p0"),
            "p1": job(MS, 30 * MS, 0, "p1"),
            "p2": job(10 * MS, 30 * MS, 0, "p2"),
            "p3": job(MS, 30 * MS, 0, "p3"),
        },
        "schedlab": {"machine": {"cpus": 2}}
    });
    let part = run(&spec, "partitioned").json();
    assert_eq!(part["summary"]["totals"]["migrations"], 0);
    assert_eq!(max_response_us(&part, "p2"), 20 * MS);
    let global = run(&spec, "global").json();
    assert_eq!(max_response_us(&global, "p2"), 11 * MS);
    assert!(task(&global, "p2")["migrations"].as_u64().unwrap() > 0);
}

/// The mode tunable is listed with its choices and refuses others.
#[test]
fn mode_is_a_tunable_with_two_values() {
    let info = schedlab_sim::schedulers()
        .into_iter()
        .find(|e| e.info.name == "edf")
        .unwrap()
        .info;
    let mode = info.params.iter().find(|p| p.name == "mode").unwrap();
    assert_eq!(mode.default, "partitioned");
    let cfg = SimConfig {
        scheduler: Some("edf".into()),
        params: vec![("mode".into(), "clustered".into())],
        ..SimConfig::default()
    };
    let err = simulate_text(&one_cpu_set(&[(MS, 10 * MS)]).to_string(), &cfg).unwrap_err();
    assert!(err.to_string().contains("partitioned"), "{err}");
}

//! `analyze_text` through the real path: specs parsed, analysed and simulated under `fp`
//! and `edf`. The simulated worst response equals exact response-time analysis on random
//! fixed-priority sets (synchronous release on one CPU with no costs: the critical instant
//! makes the first job after it the worst); the utilisation bounds follow their formulas
//! on known sets; the EDF test accepts and refuses known sets; blocking, unmodelled tasks
//! and the flags behave as documented.
use proptest::prelude::*;
use schedlab_analysis::analyze_text;
use serde_json::{json, Map, Value};

const MS: u64 = 1_000;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A periodic SCHED_FIFO task (µs): each job waits for its timer, then runs `c`.
fn periodic(c: u64, t: u64, priority: u32, jobs: u64, name: &str) -> Value {
    json!({
        "policy": "SCHED_FIFO", "priority": priority, "loop": jobs,
        "timer": {"ref": format!("unique_{name}"), "period": t, "mode": "absolute"},
        "run": c,
    })
}

/// One CPU, tasks (C, T, priority) in µs, released for two hyperperiods.
fn one_cpu(set: &[(u64, u64, u32)]) -> String {
    let hyper = set.iter().fold(1, |a, &(_, t, _)| a / gcd(a, t) * t);
    let mut tasks = Map::new();
    for (i, &(c, t, p)) in set.iter().enumerate() {
        let name = format!("t{i}");
        tasks.insert(name.clone(), periodic(c, t, p, 2 * hyper / t, &name));
    }
    json!({"tasks": tasks, "schedlab": {"machine": {"cpus": 1}}}).to_string()
}

fn analyse(text: &str) -> Value {
    analyze_text(text).unwrap_or_else(|e| panic!("{e}"))
}

fn fp_task<'a>(a: &'a Value, name: &str) -> &'a Value {
    a["fp"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
}

fn random_set() -> impl Strategy<Value = Vec<(u64, u64, u32)>> {
    let task = (
        prop::sample::select(vec![10u64, 20, 25, 40, 50, 100]),
        1u64..40,
    );
    (
        prop::collection::vec(task, 1..6),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(raw, rot)| {
            // C in 0.1 ms, at most 40 % of its period; distinct priorities in an arbitrary
            // (rotated) order, not only rate-monotonic.
            let n = raw.len();
            raw.into_iter()
                .enumerate()
                .map(|(i, (t, c))| {
                    let prio = 10 + ((i + rot.index(n)) % n) as u32;
                    ((c * 100).min(t * MS * 2 / 5), t * MS, prio)
                })
                .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Every task the recurrence bounds has exactly that worst response in the simulation,
    /// and no flag is raised.
    #[test]
    fn simulated_worst_response_equals_rta(set in random_set()) {
        let a = analyse(&one_cpu(&set));
        prop_assert_eq!(a["flags"].as_array().unwrap().len(), 0, "{}", a["flags"]);
        for i in 0..set.len() {
            let t = fp_task(&a, &format!("t{i}"));
            prop_assert_eq!(&t["exact"], &json!(t["response_ns"].is_u64()));
            if let Some(r) = t["response_ns"].as_u64() {
                prop_assert_eq!(t["simulated_max_ns"].as_u64(), Some(r), "t{} of {:?}", i, set);
            }
        }
    }
}

/// Liu & Layland's and the hyperbolic bounds on known rate-monotonic sets (ms):
/// - (1, 4), (2, 6), (3, 12): U ≈ 0.833 > 3(2^{1/3} − 1) ≈ 0.780 and Π(U+1) ≈ 2.083 > 2,
///   both fail, yet response-time analysis finds R = 1, 3, 10 (the bounds are sufficient);
/// - (7, 10), (3, 20): U = 0.85 > 2(√2 − 1) ≈ 0.828 fails Liu & Layland, but
///   Π(U+1) = 1.7 · 1.15 = 1.955 ≤ 2 passes the hyperbolic bound (Bini, Buttazzo & Buttazzo
///   2003 show the hyperbolic bound accepts every set Liu & Layland's does, and more);
/// - (1, 10), (2, 20): U = 0.2, both pass.
#[test]
fn utilisation_bounds_follow_their_formulas() {
    let a = analyse(&one_cpu(&[
        (MS, 4 * MS, 30),
        (2 * MS, 6 * MS, 20),
        (3 * MS, 12 * MS, 10),
    ]));
    let cpu = &a["fp"]["cpus"][0];
    assert!((cpu["utilisation"].as_f64().unwrap() - (0.25 + 1.0 / 3.0 + 0.25)).abs() < 1e-12);
    let ll3 = 3.0 * (2f64.cbrt() - 1.0);
    assert!((cpu["liu_layland"]["bound"].as_f64().unwrap() - ll3).abs() < 1e-12);
    assert_eq!(cpu["liu_layland"]["passes"], false);
    let product = 1.25 * (1.0 + 1.0 / 3.0) * 1.25;
    assert!((cpu["hyperbolic"]["product"].as_f64().unwrap() - product).abs() < 1e-12);
    assert_eq!(cpu["hyperbolic"]["passes"], false);
    let rs: Vec<u64> = (0..3)
        .map(|i| {
            fp_task(&a, &format!("t{i}"))["response_ns"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(rs, [1_000_000, 3_000_000, 10_000_000]);

    let a = analyse(&one_cpu(&[(7 * MS, 10 * MS, 20), (3 * MS, 20 * MS, 10)]));
    let cpu = &a["fp"]["cpus"][0];
    assert_eq!(cpu["liu_layland"]["passes"], false);
    assert!((cpu["hyperbolic"]["product"].as_f64().unwrap() - 1.7 * 1.15).abs() < 1e-12);
    assert_eq!(cpu["hyperbolic"]["passes"], true);

    let a = analyse(&one_cpu(&[(MS, 10 * MS, 20), (2 * MS, 20 * MS, 10)]));
    let cpu = &a["fp"]["cpus"][0];
    assert_eq!(cpu["liu_layland"]["passes"], true);
    assert_eq!(cpu["hyperbolic"]["passes"], true);

    // Priorities that are not rate-monotonic: the bounds do not apply, and say why.
    let a = analyse(&one_cpu(&[(MS, 10 * MS, 10), (2 * MS, 20 * MS, 20)]));
    let cpu = &a["fp"]["cpus"][0];
    assert_eq!(cpu["liu_layland"]["passes"], Value::Null);
    assert!(cpu["not_applicable"]
        .as_str()
        .unwrap()
        .contains("rate-monotonic"));
}

/// The set Buttazzo's "Hard Real-Time Computing Systems" uses to compare rate-monotonic
/// and EDF scheduling, (C, T) = (2, 5), (4, 7) ms, U ≈ 0.97: EDF accepts it (U ≤ 1, the
/// simulation under edf meets every deadline), response-time analysis under rate-monotonic
/// priorities refuses the second task (its iterates pass its period: 4, 6, 8).
#[test]
fn edf_accepts_what_rate_monotonic_refuses() {
    let a = analyse(&one_cpu(&[(2 * MS, 5 * MS, 20), (4 * MS, 7 * MS, 10)]));
    let edf = &a["edf"]["cpus"][0];
    assert_eq!(edf["test"], "utilisation");
    assert_eq!(edf["schedulable"], true);
    assert_eq!(a["edf"]["simulation"]["deadline_misses"], 0);
    assert_eq!(fp_task(&a, "t1")["schedulable"], false);
    assert_eq!(fp_task(&a, "t1")["response_ns"], Value::Null);
    assert!(a["fp"]["simulation"]["deadline_misses"].as_u64().unwrap() > 0);
    assert_eq!(a["flags"], json!([]));
}

/// A SCHED_DEADLINE task (µs) with its own deadline, waiting for its timer of period `t`.
fn dl_task(c: u64, d: u64, t: u64, name: &str) -> Value {
    json!({
        "policy": "SCHED_DEADLINE", "dl-runtime": c, "dl-deadline": d, "dl-period": t,
        "loop": 4, "timer": {"ref": format!("unique_{name}"), "period": t}, "run": c,
    })
}

/// Constrained deadlines go to the processor-demand test: Linux's sched-deadline.rst §3.2
/// set (C, D, T) = (50, 50, 100), (10, 100, 100) ms is accepted (density 1.1 > 1); with the
/// second deadline at 55 ms, dbf(55 ms) = 60 ms > 55 ms refuses it. Neither `fp` nor `edf`
/// runs SCHED_DEADLINE tasks: the simulations say so, and nothing is flagged.
#[test]
fn edf_demand_test_accepts_and_refuses_known_sets() {
    let spec = |d2: u64| {
        json!({"tasks": {
            "a": dl_task(50 * MS, 50 * MS, 100 * MS, "a"),
            "b": dl_task(10 * MS, d2 * MS, 100 * MS, "b"),
        }})
        .to_string()
    };
    let ok = analyse(&spec(100));
    let cpu = &ok["edf"]["cpus"][0];
    assert_eq!(cpu["test"], "processor-demand");
    assert_eq!(cpu["schedulable"], true);
    assert_eq!(cpu["horizon_ns"], 100_000_000);
    let bad = analyse(&spec(55));
    let cpu = &bad["edf"]["cpus"][0];
    assert_eq!(cpu["schedulable"], false);
    assert_eq!(cpu["first_failure_ns"], 55_000_000);
    assert_eq!(bad["edf"]["simulation"]["ran"], false);
    assert!(bad["edf"]["simulation"]["error"]
        .as_str()
        .unwrap()
        .contains("SCHED_DEADLINE"));
    assert_eq!(bad["flags"], json!([]));
}

/// Blocking: `low` and `high` share mutex m (low holds it for 3 ms of its 4 ms job) with
/// no task between them: B_high = 3 ms and R = C + B = 5 ms. Released 1.5 ms after low,
/// while low holds m, high waits until low unlocks at 4 ms: 4.5 ms, within the bound. A task of middle priority makes the inversion unbounded: no bound, and the
/// reason names the missing priority inheritance.
#[test]
fn blocking_from_a_lower_priority_critical_section() {
    let low = json!({
        "policy": "SCHED_FIFO", "priority": 10, "loop": 20,
        "timer": {"ref": "unique_low", "period": 20 * MS, "mode": "absolute"},
        "run": MS, "lock": "m", "run1": 3 * MS, "unlock": "m",
    });
    let high = json!({
        "policy": "SCHED_FIFO", "priority": 30, "delay": 1_500, "loop": 20,
        "timer": {"ref": "unique_high", "period": 20 * MS, "mode": "absolute"},
        "lock": "m", "run": 2 * MS, "unlock": "m",
    });
    let spec = json!({"tasks": {"low": low, "high": high}}).to_string();
    let a = analyse(&spec);
    let h = fp_task(&a, "high");
    assert_eq!(h["blocking_ns"], 3_000_000);
    assert_eq!(h["response_ns"], 5_000_000);
    assert_eq!(h["exact"], false);
    assert_eq!(h["simulated_max_ns"], 4_500_000);
    assert_eq!(a["flags"], json!([]));

    let mid = periodic(MS, 20 * MS, 20, 20, "mid");
    let spec = json!({"tasks": {"low": low, "mid": mid, "high": high}}).to_string();
    let a = analyse(&spec);
    let h = fp_task(&a, "high");
    assert_eq!(h["response_ns"], Value::Null);
    assert!(
        h["note"].as_str().unwrap().contains("priority inheritance"),
        "{}",
        h["note"]
    );
}

/// Tasks the model cannot describe are listed with the reason, and a higher-priority one
/// leaves the tasks it may preempt without a bound; lower-priority ones do not matter.
#[test]
fn unmodelled_tasks_are_named_with_the_reason() {
    let spec = json!({"tasks": {
        "sleeper": {"policy": "SCHED_FIFO", "priority": 50, "loop": 3, "run": 100, "sleep": 10_000},
        "p": periodic(MS, 10 * MS, 20, 3, "p"),
        "background": {"policy": "SCHED_OTHER", "loop": 3, "run": 100, "sleep": 1_000},
    }})
    .to_string();
    let a = analyse(&spec);
    let un = a["model"]["unmodelled"].as_array().unwrap();
    assert_eq!(un.len(), 2);
    assert_eq!(un[0]["name"], "sleeper");
    assert_eq!(un[0]["path"], "$.tasks.sleeper");
    assert!(
        un[0]["reason"].as_str().unwrap().contains("sleep"),
        "{}",
        un[0]["reason"]
    );
    let p = fp_task(&a, "p");
    assert_eq!(p["response_ns"], Value::Null);
    assert!(p["note"].as_str().unwrap().contains("sleeper"));
    // Without the higher-priority sleeper, the SCHED_OTHER background task is no obstacle.
    let spec = json!({"tasks": {
        "p": periodic(MS, 10 * MS, 20, 3, "p"),
        "background": {"policy": "SCHED_OTHER", "loop": 3, "run": 100, "sleep": 1_000},
    }})
    .to_string();
    assert_eq!(fp_task(&analyse(&spec), "p")["response_ns"], 1_000_000);
}

/// A run that charges costs the analysis leaves out (a context switch) can exceed the
/// bounds: each such task is flagged, with both numbers, and the run's overhead is given.
#[test]
fn a_simulated_case_above_a_bound_is_flagged() {
    let mut spec: Value =
        serde_json::from_str(&one_cpu(&[(2 * MS, 10 * MS, 20), (3 * MS, 20 * MS, 10)])).unwrap();
    spec["schedlab"]["machine"]["context_switch_ns"] = json!(50_000);
    let a = analyse(&spec.to_string());
    let flags = a["flags"].as_array().unwrap();
    assert!(!flags.is_empty());
    let f = flags.iter().find(|f| f["analysis"] == "fp-rta").unwrap();
    assert!(f["simulated_ns"].as_u64() > f["bound_ns"].as_u64());
    assert!(a["fp"]["simulation"]["overhead_ns"].as_u64().unwrap() > 0);
}

/// Bad input is the parser's error, with its JSON path.
#[test]
fn a_bad_spec_is_an_error_with_its_path() {
    let e = analyze_text(r#"{"tasks": {"t": {"run": "x"}}}"#).unwrap_err();
    assert!(e.path.starts_with("$.tasks.t"), "{e}");
}

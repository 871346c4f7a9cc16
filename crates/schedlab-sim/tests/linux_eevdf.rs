//! `linux-eevdf` end to end (source: torvalds/linux kernel/sched/fair.c of a 6.6-6.9 tree,
//! `place_entity`, `pick_eevdf`, `update_deadline`):
//! CPU hogs share one CPU by weight, a sleeper keeps the lag it earned and so gets low
//! wake-up latency, and runs pass the engine invariant checker (`check: true`), hackbench
//! included.
mod common;
use common::*;
use schedlab_spec::model::*;

const WEIGHTS: [(i32, f64); 6] = [
    (-10, 9548.0),
    (-5, 3121.0),
    (0, 1024.0),
    (3, 526.0),
    (5, 335.0),
    (10, 110.0),
];

fn hog(name: &str, nice: i32) -> TaskSpec {
    task(
        name,
        attr(Policy::Other, nice),
        -1,
        vec![Event::Run { ns: 50 * MS }],
    )
}

fn run_with(spec: &Spec, params: &[(&str, &str)], check: bool) -> schedlab_sim::SimOutput {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some("linux-eevdf".into()),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        check,
        samples: schedlab_sim::SampleOutput::Memory,
        ..Default::default()
    };
    schedlab_sim::simulate(spec, &cfg).unwrap_or_else(|e| panic!("linux-eevdf: {e}"))
}

fn cpu_ns(out: &schedlab_sim::SimOutput, name: &str) -> f64 {
    task_json(out, name)["cpu_ns"].as_u64().unwrap() as f64
}

/// sched_prio_to_weight shares within 1 % (EEVDF's lag is bounded by one request).
#[test]
fn nice_levels_share_one_cpu_in_proportion_to_their_weights() {
    for hz in [100, 250, 1000] {
        let mut s = spec(
            1,
            WEIGHTS
                .iter()
                .map(|&(n, _)| hog(&format!("nice{n}"), n))
                .collect(),
            Resources::default(),
        );
        s.duration_ns = Some(60_000 * MS);
        s.machine.hz = hz;
        let out = run(&s, "linux-eevdf", false);
        let total: f64 = WEIGHTS.iter().map(|&(_, w)| w).sum();
        let elapsed = out.json()["run"]["sim_ns"].as_u64().unwrap() as f64;
        for &(nice, w) in &WEIGHTS {
            let got = cpu_ns(&out, &format!("nice{nice}")) / elapsed;
            let want = w / total;
            let rel = (got - want).abs() / want;
            assert!(
                rel < 0.01,
                "HZ={hz} nice {nice}: share {got:.5}, weight share {want:.5} ({:.2} % off)",
                rel * 100.0
            );
        }
    }
}

fn sleeper_spec(with_sleeper: bool) -> Spec {
    let mut tasks: Vec<TaskSpec> = (0..3).map(|i| hog(&format!("hog{i}"), 0)).collect();
    if with_sleeper {
        tasks.push(task(
            "sleeper",
            attr(Policy::Other, 0),
            -1,
            vec![Event::Sleep { ns: 10 * MS }, Event::Run { ns: 200 * US }],
        ));
    }
    let mut s = spec(1, tasks, Resources::default());
    s.duration_ns = Some(5_000 * MS);
    s.machine.hz = 250;
    s
}

fn latency(out: &schedlab_sim::SimOutput, name: &str, what: &str) -> f64 {
    task_json(out, name)["wakeup_latency_ns"][what]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no wakeup latency {what}"))
}

/// An interactive task (10 ms sleep, 0.2 ms burst) among three nice-0 hogs at HZ=250. In
/// 6.6 a sleeper keeps the lag it had when it slept (PLACE_LAG) rather than gaining any
/// while asleep; having used far less than its share it sleeps with positive lag, so it
/// wakes eligible with the earliest deadline. A hog's consumed request is only noticed at
/// a tick (`update_curr` → `update_deadline`; no HRTICK), and RUN_TO_PARITY (default on)
/// lets the current hog keep the CPU until then: the sleeper waits for the next tick, on
/// average half of one and never more than one. With RUN_TO_PARITY off, PLACE_LAG makes
/// the woken sleeper preempt at once, while without PLACE_LAG (placed at V with a full
/// request, not earlier than the running hog's deadline) it still waits for the tick. It
/// also gets its whole demand while the hogs split the rest equally.
#[test]
fn an_interactive_sleeper_gets_low_latency_among_equal_weight_hogs() {
    let base = run_with(&sleeper_spec(false), &[], false);
    let hog_alone = cpu_ns(&base, "hog0");
    let lag = run_with(&sleeper_spec(true), &[], true);
    let mean_lag = latency(&lag, "sleeper", "mean");
    let max_lag = latency(&lag, "sleeper", "max");
    let tick = 4_000_000.0;
    assert!(mean_lag < tick / 2.0, "mean {mean_lag}");
    assert!(max_lag <= tick, "max {max_lag}");
    let no_parity = [("run_to_parity", "0")];
    let lag_np = run_with(&sleeper_spec(true), &no_parity, true);
    let nolag_np = run_with(
        &sleeper_spec(true),
        &[("run_to_parity", "0"), ("place_lag", "0")],
        false,
    );
    assert_eq!(
        latency(&lag_np, "sleeper", "max"),
        0.0,
        "PLACE_LAG without RUN_TO_PARITY: the sleeper preempts at once"
    );
    let mean_nolag_np = latency(&nolag_np, "sleeper", "mean");
    assert!(
        mean_nolag_np > tick / 4.0,
        "without PLACE_LAG the sleeper waits for the tick: mean {mean_nolag_np}"
    );
    let elapsed = lag.json()["run"]["sim_ns"].as_u64().unwrap() as f64;
    let sleeper = cpu_ns(&lag, "sleeper") / elapsed;
    let acts = task_json(&lag, "sleeper")["activations"].as_u64().unwrap() as f64;
    assert!(
        (sleeper - acts * 200_000.0 / elapsed).abs() < 0.002,
        "the sleeper gets its demand"
    );
    for i in 0..3 {
        let h = cpu_ns(&lag, &format!("hog{i}")) / elapsed;
        assert!((h - (1.0 - sleeper) / 3.0).abs() < 0.01, "hog{i} {h}");
        assert!(cpu_ns(&lag, &format!("hog{i}")) < hog_alone);
    }
}

/// RT above EEVDF, several CPUs, sleeps, nice and policy changes, affinity: the invariant
/// checker stays quiet and the workload finishes.
#[test]
fn mixed_workload_passes_the_invariant_checker() {
    let mut tasks = Vec::new();
    for i in 0..6 {
        tasks.push(task(
            &format!("f{i}"),
            attr(Policy::Other, i - 3),
            40,
            vec![
                Event::Run {
                    ns: (300 + 150 * i as u64) * US,
                },
                Event::Sleep {
                    ns: (1 + i as u64) * MS,
                },
            ],
        ));
    }
    tasks.push(task(
        "batch",
        attr(Policy::Batch, 0),
        20,
        vec![Event::Run { ns: 3 * MS }, Event::Sleep { ns: 500 * US }],
    ));
    tasks.push(task(
        "idle",
        attr(Policy::Idle, 0),
        10,
        vec![Event::Run { ns: 2 * MS }],
    ));
    let mut pinned = task(
        "pinned",
        attr(Policy::Other, 0),
        30,
        vec![Event::Run { ns: MS }, Event::Sleep { ns: 2 * MS }],
    );
    pinned.cpus = Some(vec![1]);
    tasks.push(pinned);
    tasks.push(periodic("rt", 0, 500 * US, 4 * MS, 50, 50));
    let s = spec(3, tasks, timers(1));
    for (hz, params) in [
        (100, &[][..]),
        (1000, &[][..]),
        (250, &[("delay_dequeue", "1")][..]),
        (250, &[("run_to_parity", "0"), ("place_lag", "0")][..]),
    ] {
        let mut s = s.clone();
        s.machine.hz = hz;
        let out = run_with(&s, params, true);
        assert!(
            !out.json()["summary"]["makespan_ns"].is_null(),
            "HZ={hz}: did not finish"
        );
        check_accounting(&out).unwrap();
    }
}

fn hackbench(opts: &[(&str, &str)]) -> Spec {
    let opts: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = schedlab_spec::gen::generate("hackbench", &opts).expect("generate hackbench");
    schedlab_spec::parse_value(&v).expect("generated hackbench parses")
}

#[test]
fn hackbench_completes_with_the_checker() {
    for (cpus, mode) in [("1", "pipe"), ("4", "socket"), ("8", "pipe")] {
        let s = hackbench(&[
            ("groups", "2"),
            ("loops", "20"),
            ("fds", "5"),
            ("mode", mode),
            ("cpus", cpus),
        ]);
        for params in [&[][..], &[("delay_dequeue", "1")][..]] {
            let out = run_with(&s, params, true);
            assert!(
                !out.json()["summary"]["makespan_ns"].is_null(),
                "cpus {cpus} {mode} {params:?}: did not finish"
            );
            check_accounting(&out).unwrap();
        }
    }
}

#[test]
fn params_are_listed_and_validated() {
    let e = schedlab_sim::schedulers()
        .into_iter()
        .find(|e| e.info.name == "linux-eevdf")
        .expect("linux-eevdf registered");
    for p in [
        "sched_base_slice_ns",
        "place_lag",
        "place_deadline_initial",
        "run_to_parity",
        "preempt_short",
        "sched_rr_timeslice_ms",
    ] {
        assert!(e.info.params.iter().any(|x| x.name == p), "{p}");
    }
    let s = sleeper_spec(true);
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some("linux-eevdf".into()),
        params: vec![("run_to_parity".into(), "perhaps".into())],
        ..Default::default()
    };
    assert!(schedlab_sim::simulate(&s, &cfg).is_err());
}

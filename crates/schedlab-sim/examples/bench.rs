//! `make bench`: the simulator's speed figures, printed as a Markdown table for the README.
//!
//! 1. Task activations per second on one core: 10 periodic tasks on 4 CPUs (the anchors'
//!    workload: SimSo ~465 jobs/s, scx_simulator 150–440 k activations/s on this machine).
//! 2. `hackbench 30` (1,200 tasks, 1.2 M messages of 100 bytes over pipes) per policy:
//!    simulated time and wall time.
//! 3. Scheduler cost per decision: the policy's counted work units per pick, and the
//!    engine's wall nanoseconds per pick (everything included).
//! 4. Tracing overhead: the same hackbench run with the ftrace writer on, over off.
//! 5. Scheduler cost against the number of runnable tasks (`instruments::sched_cost`, the
//!    table `schedlab cost` prints): counted work units and hook ns per decision with 1,
//!    100 and 10 000 runnable SCHED_OTHER tasks on one CPU.
//!
//! Timings are noisy on shared machines: each figure is the best of `REPEATS` runs (the
//! cost table: the fastest of 10 chunks). `bench cost` prints only the cost table.

use std::time::Instant;

use schedlab_sim::{sched_cost, simulate, CostConfig, SimConfig, SimOutput};
use schedlab_spec::model::Spec;

const REPEATS: usize = 3;

fn spec_of(gen: &str, opts: &[(&str, &str)]) -> Spec {
    let opts: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = schedlab_spec::gen::generate(gen, &opts).unwrap_or_else(|e| panic!("{gen}: {e}"));
    schedlab_spec::parse_value(&v).unwrap_or_else(|e| panic!("{gen}: {e}"))
}

/// Best wall time of `REPEATS` runs, and the last output.
fn timed(spec: &Spec, cfg: &SimConfig) -> (f64, SimOutput) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..REPEATS {
        let t = Instant::now();
        let o = simulate(spec, cfg).unwrap_or_else(|e| panic!("{e}"));
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(o);
    }
    (best, out.unwrap())
}

fn activations(out: &SimOutput) -> u64 {
    out.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["activations"].as_u64().unwrap())
        .sum()
}

fn policies() -> Vec<&'static str> {
    schedlab_sim::schedulers()
        .into_iter()
        .filter(|e| e.available)
        .map(|e| e.info.name)
        .collect()
}

fn main() {
    if std::env::args().nth(1).as_deref() != Some("cost") {
        speed();
    }
    cost();
}

/// Section 5: the scheduler-cost table, one row per policy, two columns per N.
fn cost() {
    const SIZES: [usize; 3] = [1, 100, 10_000];
    let cfg = CostConfig {
        decisions: 20_000,
        ..Default::default()
    };
    println!("\n## Scheduler cost per decision (SCHED_OTHER, 1 CPU, 20 000 decisions)\n");
    let head: Vec<String> = SIZES
        .iter()
        .map(|n| format!("work N={n} | ns N={n}"))
        .collect();
    println!("| policy | {} |", head.join(" | "));
    println!("|---|{}", "---:|".repeat(2 * SIZES.len()));
    for p in policies() {
        let cells: Vec<String> = SIZES
            .iter()
            .map(|&n| {
                let c = sched_cost(p, &cfg, n).unwrap_or_else(|e| panic!("{p}: {e}"));
                format!("{:.1} | {:.0}", c.work_per_decision, c.ns_per_decision)
            })
            .collect();
        println!("| {p} | {} |", cells.join(" | "));
    }
}

/// Sections 1–4: activations per second, hackbench, tracing overhead.
fn speed() {
    let periodic = spec_of(
        "periodic",
        &[
            ("n", "10"),
            ("utilization", "2.4"),
            ("seed", "1"),
            ("pmin_us", "5000"),
            ("pmax_us", "50000"),
            ("duration_s", "1000"),
            ("cpus", "4"),
        ],
    );
    println!("## Activations per second (10 periodic tasks, 4 CPUs, 1000 s simulated, one core)\n");
    println!("| policy | activations | wall s | activations/s |");
    println!("|---|---:|---:|---:|");
    for p in policies() {
        let cfg = SimConfig {
            scheduler: Some(p.into()),
            cpus: Some(4),
            samples: schedlab_sim::SampleOutput::Summary,
            ..Default::default()
        };
        let (wall, out) = timed(&periodic, &cfg);
        let a = activations(&out);
        println!("| {p} | {a} | {wall:.3} | {:.2} M |", a as f64 / wall / 1e6);
    }

    let hb = spec_of(
        "hackbench",
        &[("groups", "30"), ("loops", "100"), ("mode", "pipe")],
    );
    println!("\n## hackbench 30 (pipes, processes, 100 loops), 2 CPUs\n");
    println!("| policy | simulated s | wall s | decisions | work units/decision | wall ns/decision | trace on/off |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let trace = std::env::temp_dir().join(format!("schedlab-bench-{}.trace", std::process::id()));
    for p in policies() {
        let cfg = SimConfig {
            scheduler: Some(p.into()),
            cpus: Some(2),
            samples: schedlab_sim::SampleOutput::Summary,
            ..Default::default()
        };
        let (wall, out) = timed(&hb, &cfg);
        let traced = SimConfig {
            trace: Some(trace.clone()),
            ..cfg.clone()
        };
        let (wall_traced, _) = timed(&hb, &traced);
        let run = &out.json()["run"];
        let decisions = run["decisions"].as_u64().unwrap().max(1);
        let units = run["work_units"].as_u64().unwrap();
        let headline = &out.json()["summary"]["headline"]["value"];
        println!(
            "| {p} | {} | {wall:.3} | {decisions} | {:.1} | {:.0} | {:.2}x |",
            headline
                .as_f64()
                .map_or("—".to_string(), |v| format!("{v:.3}")),
            units as f64 / decisions as f64,
            wall * 1e9 / decisions as f64,
            wall_traced / wall,
        );
    }
    std::fs::remove_file(&trace).ok();
}

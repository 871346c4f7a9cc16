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
//! 6. Scaling: periodic SCHED_FIFO task sets from 10 tasks on 4 CPUs to 100 000 tasks on
//!    256 CPUs under `fp` and `linux-cfs` — activations per second, the peak resident set
//!    of the process, and the heap the run needs per task (counted by this program's
//!    allocator: the peak of the bytes live during `simulate` above those live before,
//!    i.e. engine, policy and result without the spec). Each point runs in a child
//!    process of its own (this program, `bench point ...`), so that one point's memory
//!    cannot hide in another's peak.
//!
//! Timings are noisy on shared machines: each figure is the best of `REPEATS` runs (the
//! cost table: the fastest of 10 chunks; a scaling point: one run). `bench cost` prints
//! only the cost table, `bench scale` only the scaling table, `bench speed` only sections 1–4.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use schedlab_sim::{sched_cost, simulate, CostConfig, SimConfig, SimOutput};
use schedlab_spec::model::Spec;

const REPEATS: usize = 3;

/// The system allocator, counting the bytes live and their peak: the scaling table's
/// measure of the memory a run needs, apart from its spec and from the allocator's reuse
/// of freed memory (which makes resident-set growth an underestimate).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn count_alloc(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counters only record sizes and never touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this `layout` (every allocation does).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and the caller's guarantees for `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            count_alloc(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

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

/// Activations of every task (from the typed result: its JSON tree would cost more
/// memory than the run itself at 100 000 tasks).
fn activations(out: &SimOutput) -> u64 {
    out.result.tasks.iter().map(|t| t.activations).sum()
}

fn policies() -> Vec<&'static str> {
    schedlab_sim::schedulers()
        .into_iter()
        .filter(|e| e.available)
        .map(|e| e.info.name)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("point") => point(&args[1..]),
        Some("cost") => cost(),
        Some("speed") => speed(),
        Some("scale") => scale(),
        _ => {
            speed();
            scale();
            cost();
        }
    }
}

/// The scaling points: (tasks, CPUs, seconds simulated). The largest is the memory target's
/// run (100 000 tasks on 256 CPUs for 10 s); the others simulate about as many activations
/// as one core does in a few seconds.
const SCALE: [(usize, u32, u32); 5] = [
    (10, 4, 1000),
    (100, 16, 100),
    (1_000, 16, 10),
    (10_000, 64, 2),
    (100_000, 256, 10),
];

/// Section 6: one child process per (policy, point). The table gives activations per
/// second of the run (set-up and result included), the child's peak resident set (the
/// spec's JSON and model included) and the heap the run needs per task (its peak above
/// the spec, divided by the tasks).
fn scale() {
    println!(
        "\n## Scaling (periodic SCHED_FIFO tasks, utilisation 0.6 per CPU, summary samples, one core)\n"
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("Load average when the table started: {}.\n", load.join(" "));
    println!("| policy | tasks | CPUs | simulated s | activations | wall s | activations/s | peak RSS MB | run bytes/task |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let exe = std::env::current_exe().expect("the bench's own path");
    for p in ["fp", "linux-cfs"] {
        for (n, cpus, secs) in SCALE {
            let args = [n.to_string(), cpus.to_string(), secs.to_string()];
            let out = std::process::Command::new(&exe)
                .arg("point")
                .arg(p)
                .args(&args)
                .output()
                .expect("run a scaling point");
            let text = String::from_utf8_lossy(&out.stdout);
            let f: Vec<f64> = text
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let [acts, wall, peak, run] = f[..] else {
                let why = String::from_utf8_lossy(&out.stderr);
                println!(
                    "| {p} | {n} | {cpus} | {secs} | failed: {} | | | | |",
                    why.trim()
                );
                continue;
            };
            println!(
                "| {p} | {n} | {cpus} | {secs} | {acts} | {wall:.3} | {:.2} M | {:.1} | {:.0} |",
                acts / wall / 1e6,
                peak / 1e6,
                run / n as f64,
            );
        }
    }
}

/// A periodic task set of `n` SCHED_FIFO tasks on `cpus` CPUs (total utilisation 0.6 per
/// CPU, UUniFast-Discard, log-uniform periods of 5–50 ms, the periodic generator's tasks)
/// with rate-monotonic priorities in 99 bands: the shortest periods get 99.
fn periodic_json(n: usize, cpus: u32, secs: u32) -> serde_json::Value {
    let u = format!("{}", 0.6 * cpus as f64);
    let opts: Vec<(String, String)> = [
        ("n", n.to_string()),
        ("utilization", u),
        ("seed", "1".into()),
        ("pmin_us", "5000".into()),
        ("pmax_us", "50000".into()),
        ("duration_s", secs.to_string()),
        ("cpus", cpus.to_string()),
        ("policy", "other".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut v = schedlab_spec::gen::generate("periodic", &opts).unwrap_or_else(|e| panic!("{e}"));
    let tasks = v["tasks"].as_object_mut().expect("tasks");
    let mut order: Vec<(u64, usize)> = tasks
        .values()
        .enumerate()
        .map(|(i, t)| (t["timer"]["period"].as_u64().expect("period"), i))
        .collect();
    order.sort_unstable();
    let mut prio = vec![0; n];
    for (rank, &(_, i)) in order.iter().enumerate() {
        prio[i] = 99 - (rank * 99 / n) as i64;
    }
    for (i, t) in tasks.values_mut().enumerate() {
        t["policy"] = "SCHED_FIFO".into();
        t["priority"] = prio[i].into();
    }
    v
}

/// This process's peak resident set (`VmHWM`) or another size field of
/// `/proc/self/status`, bytes.
fn rss(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb * 1024.0)
}

/// `bench point POLICY TASKS CPUS SECONDS`: one scaling point. Prints the activations, the
/// run's wall seconds, the process's peak resident set (spec generation included), and the
/// peak of the heap live during the run above the heap live before it (the spec).
fn point(args: &[String]) {
    let [p, n, cpus, secs] = args else {
        panic!("usage: bench point POLICY TASKS CPUS SECONDS");
    };
    let n = n.parse().expect("tasks");
    let spec = {
        let json = periodic_json(
            n,
            cpus.parse().expect("CPUs"),
            secs.parse().expect("seconds"),
        );
        schedlab_spec::parse_value(&json).unwrap_or_else(|e| panic!("{e}"))
    };
    let cfg = SimConfig {
        scheduler: Some(p.clone()),
        samples: schedlab_sim::SampleOutput::Summary,
        ..Default::default()
    };
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let t = Instant::now();
    let out = simulate(&spec, &cfg).unwrap_or_else(|e| panic!("{e}"));
    let wall = t.elapsed().as_secs_f64();
    let run_heap = PEAK.load(Relaxed) - before;
    let acts = activations(&out);
    println!("{acts} {wall} {} {run_heap}", rss("VmHWM:"));
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

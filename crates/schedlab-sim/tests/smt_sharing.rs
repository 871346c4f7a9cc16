//! SMT siblings sharing their core's throughput (`machine.smt_throughput`, `src/smt.rs`),
//! through the engine: with k threads of a core busy each progresses at
//! min(1, throughput / k) of a thread alone; finish instants are worked out from that
//! rate in each test's comment.

use proptest::prelude::*;
use schedlab_sim::trace::parse::{parse_file, Event};
use schedlab_sim::{simulate_text, RunError, SimConfig, SimOutput};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
const POLICIES: [&str; 3] = ["fp", "linux-cfs", "linux-eevdf"];

/// A scratch directory for traces, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("schedlab-smt-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

fn run_traced(spec: &Value, sched: &str, trace: Option<std::path::PathBuf>) -> SimOutput {
    let cfg = SimConfig {
        scheduler: Some(sched.into()),
        check: true,
        trace,
        ..SimConfig::default()
    };
    simulate_text(&spec.to_string(), &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"))
}

/// Each task's exit instant (ns), by name, from the run's trace.
fn exits(spec: &Value, sched: &str) -> Vec<(String, u64)> {
    let dir = Scratch::new("exits");
    let path = dir.0.join(format!("{sched}.trace"));
    let out = run_traced(spec, sched, Some(path.clone()));
    let names = tids(&out);
    let mut v: Vec<(String, u64)> = parse_file(&path)
        .unwrap()
        .into_iter()
        .filter_map(|r| match r.data {
            Event::Exit { pid, .. } => Some((names[&pid].clone(), r.ts)),
            _ => None,
        })
        .collect();
    v.sort();
    v
}

/// tid → task name.
fn tids(out: &SimOutput) -> std::collections::BTreeMap<u32, String> {
    out.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let tid = t["tid"].as_u64().unwrap() as u32;
            (tid, t["name"].as_str().unwrap().to_string())
        })
        .collect()
}

/// A CPU hog doing `run_us` of work once on `cpu`.
fn hog(cpu: u32, run_us: u64) -> Value {
    json!({"loop": 1, "cpus": [cpu], "run": run_us})
}

fn machine(cores: u32, threads: u32, throughput: Option<f64>) -> Value {
    let mut m = json!({"topology": {"cores": cores, "threads": threads}, "hz": 1000});
    if let Some(x) = throughput {
        m["smt_throughput"] = json!(x);
    }
    m
}

fn spec(tasks: Value, machine: Value) -> Value {
    json!({"tasks": tasks, "schedlab": {"machine": machine}})
}

/// Two hogs of 13 ms of work on the two threads of one core with throughput 1.3: each
/// runs at 1.3 / 2 = 0.65, so both finish at 13 / 0.65 = 20 ms, each having held its CPU
/// for 20 ms (`cpu_ns` is CPU time, not work).
#[test]
fn two_hogs_on_siblings_finish_at_work_over_half_the_throughput() {
    let s = spec(
        json!({"a": hog(0, 13_000), "b": hog(1, 13_000)}),
        machine(1, 2, Some(1.3)),
    );
    for sched in POLICIES {
        assert_eq!(
            exits(&s, sched),
            [("a".into(), 20 * MS), ("b".into(), 20 * MS)],
            "{sched}"
        );
        let out = run_traced(&s, sched, None);
        for t in out.json()["tasks"].as_array().unwrap() {
            assert_eq!(t["cpu_ns"], 20 * MS, "{sched}: {t}");
        }
    }
}

/// The same hogs on two cores (CPUs 0 and 2 of 2 × 2 threads) each have a core to
/// itself: both finish at 13 ms.
#[test]
fn two_hogs_on_two_cores_run_at_full_speed() {
    let s = spec(
        json!({"a": hog(0, 13_000), "b": hog(2, 13_000)}),
        machine(2, 2, Some(1.3)),
    );
    for sched in POLICIES {
        assert_eq!(
            exits(&s, sched),
            [("a".into(), 13 * MS), ("b".into(), 13 * MS)],
            "{sched}"
        );
    }
}

/// Siblings with 6.5 and 13 ms of work at 0.65 each: `a` is done at 6.5 / 0.65 = 10 ms,
/// when `b` has done 6.5 ms of its work too; alone on the core from then on, `b` runs
/// the other 6.5 ms at full speed and finishes at 16.5 ms.
#[test]
fn a_sibling_speeds_up_when_the_other_finishes() {
    let s = spec(
        json!({"a": hog(0, 6_500), "b": hog(1, 13_000)}),
        machine(1, 2, Some(1.3)),
    );
    for sched in POLICIES {
        assert_eq!(
            exits(&s, sched),
            [("a".into(), 10 * MS), ("b".into(), 16_500_000)],
            "{sched}"
        );
    }
}

/// A sibling that starts later slows the running one from then on: `a` (12 ms of work)
/// runs alone for 4 ms; `b` (3 ms of work) starts at 4 ms; both then run at 0.75 (a
/// throughput of 1.5): `b` is done at 4 + 3 / 0.75 = 8 ms, when `a` has done 4 + 3 = 7
/// ms; its last 5 ms run alone, to 13 ms.
#[test]
fn a_sibling_that_starts_later_slows_the_running_one() {
    let tasks = json!({
        "a": hog(0, 12_000),
        "b": {"loop": 1, "cpus": [1], "delay": 4000, "run": 3000}
    });
    let s = spec(tasks, machine(1, 2, Some(1.5)));
    for sched in POLICIES {
        assert_eq!(
            exits(&s, sched),
            [("a".into(), 13 * MS), ("b".into(), 8 * MS)],
            "{sched}"
        );
    }
}

/// Four threads per core with a throughput of 2: two busy threads run at full speed,
/// three at 2/3 each. Three hogs of 4 ms: all finish at 4 / (2/3) = 6 ms; two of them
/// alone on the core would finish at 4 ms.
#[test]
fn wider_cores_slow_only_past_their_throughput() {
    for (n, want) in [(2u32, 4 * MS), (3, 6 * MS)] {
        let tasks: serde_json::Map<String, Value> =
            (0..n).map(|c| (format!("h{c}"), hog(c, 4_000))).collect();
        let s = spec(Value::Object(tasks), machine(1, 4, Some(2.0)));
        let got = exits(&s, "fp");
        assert!(got.iter().all(|(_, at)| *at == want), "{n} hogs: {got:?}");
    }
}

/// Interrupts keep their length: with a 100 µs tick handler (ticks at 1, 2, … ms on both
/// busy siblings), each tick takes 100 µs of wall time from the work, which goes at 0.65
/// between ticks. Work done: 0.65 ms in the first millisecond, then 0.9 × 0.65 = 0.585 ms
/// per millisecond, so 0.65 + 21 × 0.585 = 12.935 ms by 22 ms; the tick at 22 ms takes
/// 100 µs, and the last 0.065 ms of work 0.1 ms: both exit at 22.2 ms. (Were the
/// handlers slowed too, each would take 100 / 0.65 µs.)
#[test]
fn interrupt_time_is_not_slowed() {
    let mut m = machine(1, 2, Some(1.3));
    m["kernel"] = json!({"tick_ns": 100_000});
    let s = spec(json!({"a": hog(0, 13_000), "b": hog(1, 13_000)}), m);
    assert_eq!(
        exits(&s, "fp"),
        [("a".into(), 22_200_000), ("b".into(), 22_200_000)]
    );
}

/// Same spec, same seed: the same result (apart from the run's wall time) under SMT
/// sharing, with tasks that move between siblings and cores.
#[test]
fn sharing_is_deterministic() {
    let tasks = json!({
        "w": {"instance": 6, "loop": 20, "run": 700, "sleep": 300},
        "h": {"instance": 2, "loop": 5, "run": 3000, "sleep": 1000}
    });
    let s = spec(tasks, machine(2, 2, Some(1.25)));
    for sched in POLICIES {
        let mut a = run_traced(&s, sched, None).json().clone();
        let mut b = run_traced(&s, sched, None).json().clone();
        a["run"]["wall_s"] = json!(0);
        b["run"]["wall_s"] = json!(0);
        assert_eq!(a, b, "{sched}");
    }
}

/// Results without `run.wall_s` and `run.spec_sha256` (the spec's bytes differ).
fn comparable(out: &SimOutput) -> Value {
    let mut v = out.json().clone();
    v["run"]["wall_s"] = json!(0);
    v["run"]["spec_sha256"] = json!(null);
    v
}

/// `spreading-tasks.json`, rt-app's own example as shipped, with `machine` added.
fn spreading_tasks(machine: &Value) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/rt-app-examples/spreading-tasks.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    // rt-app's file is read by schedlab's parser (it has trailing commas): the machine
    // goes in as text, before the final brace.
    let end = text.rfind('}').unwrap();
    format!(
        "{}, \"schedlab\": {{\"machine\": {machine}}}}}",
        &text[..end]
    )
}

fn run_200ms(text: &str, sched: &str) -> Value {
    let cfg = SimConfig {
        scheduler: Some(sched.into()),
        duration_ns: Some(200 * MS),
        check: true,
        ..SimConfig::default()
    };
    comparable(&simulate_text(text, &cfg).unwrap())
}

/// Where sharing cannot matter the results are those of the spec without the key: on
/// machines without SMT (one thread per core, sized by `cpus` or by a topology), whatever
/// the throughput. The workload is rt-app's `spreading-tasks.json` example.
#[test]
fn the_setting_changes_nothing_without_smt() {
    let machines = [
        json!({"cpus": 4}),
        json!({"topology": {"cores": 4, "threads": 1}}),
        json!({"cpus": 1}),
    ];
    for sched in POLICIES {
        for m in &machines {
            let without = run_200ms(&spreading_tasks(m), sched);
            for x in [1.3, 2.0, 4.0] {
                let mut with = m.clone();
                with["smt_throughput"] = json!(x);
                let got = run_200ms(&spreading_tasks(&with), sched);
                assert_eq!(without, got, "{sched}, {with}");
            }
        }
    }
}

/// On one core of two threads the example's two tasks are siblings: without the key the
/// core shares at the default 1.3, and a throughput of 2 (no sharing) or 1.5 changes the
/// result — so the comparison above is one that can fail.
#[test]
fn the_default_throughput_is_1_3_and_others_differ() {
    let core = json!({"topology": {"cores": 1, "threads": 2}});
    let with = |x: f64| {
        let mut m = core.clone();
        m["smt_throughput"] = json!(x);
        spreading_tasks(&m)
    };
    for sched in POLICIES {
        let default = run_200ms(&spreading_tasks(&core), sched);
        assert_eq!(default, run_200ms(&with(1.3), sched), "{sched}");
        assert_ne!(default, run_200ms(&with(2.0), sched), "{sched}");
        assert_ne!(default, run_200ms(&with(1.5), sched), "{sched}");
    }
}

fn refusal(machine: Value) -> String {
    let s = spec(json!({"t": {"loop": 1, "run": 10}}), machine);
    match simulate_text(&s.to_string(), &SimConfig::default()) {
        Err(RunError::Spec(e)) => e.to_string(),
        other => panic!("expected a spec error, got {other:?}"),
    }
}

#[test]
fn bad_throughputs_are_refused_at_their_path() {
    let at = "$.schedlab.machine.smt_throughput";
    for (x, says) in [
        (json!(0.9), "one thread alone is 1"),
        (json!(0), "one thread alone is 1"),
        (json!("1.3"), "found the string"),
        (json!(1.2345), "at most three decimals"),
        (json!(2.5), "expected at most 2 for a core of 2 threads"),
    ] {
        let mut m = machine(2, 2, None);
        m["smt_throughput"] = x.clone();
        let e = refusal(m);
        assert!(e.contains(at) && e.contains(says), "{x}: {e}");
    }
    // Without SMT any throughput ≥ 1 is accepted (it changes nothing).
    let s = spec(
        json!({"t": {"loop": 1, "run": 10}}),
        json!({"cpus": 2, "smt_throughput": 3}),
    );
    simulate_text(&s.to_string(), &SimConfig::default()).unwrap();
}

// ---------------------------------------------------------------- work is conserved

/// Work the trace says each task did: every stretch between two switches on the core
/// counts for each task running then min(1, throughput / busy threads) of its length.
/// In units of 1 / (1000 · lcm(1..=threads)) ns, so the sum is exact.
fn work_from_trace(
    path: &std::path::Path,
    threads: u32,
    milli: u64,
    cpus: usize,
) -> std::collections::BTreeMap<u32, u128> {
    let lcm = (1..=u64::from(threads)).fold(1u64, |l, k| l / gcd(l, k) * k);
    let rate = |k: u64| -> u128 {
        if milli >= 1000 * k {
            u128::from(1000 * lcm)
        } else {
            u128::from(milli * lcm / k)
        }
    };
    let mut running = vec![0u32; cpus];
    let mut since = 0u64;
    let mut work = std::collections::BTreeMap::new();
    let mut credit = |running: &[u32], from: u64, to: u64| {
        for core in running.chunks(threads as usize) {
            let k = core.iter().filter(|&&p| p != 0).count() as u64;
            for &p in core.iter().filter(|&&p| p != 0) {
                *work.entry(p).or_insert(0u128) += u128::from(to - from) * rate(k);
            }
        }
    };
    for r in parse_file(path).unwrap() {
        if let Event::Switch { next_pid, .. } = r.data {
            credit(&running, since, r.ts);
            since = r.ts;
            running[r.cpu as usize] = next_pid;
        }
    }
    work
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random tasks pinned to random threads of a core (so siblings come and go, and
    /// tasks share a thread): the work the trace shows each task did is the sum of its
    /// program's runs, to within a nanosecond per burst and per time it was switched in
    /// (a burst ends at the first nanosecond its work is done; a preempted task's work
    /// under a nanosecond is not carried).
    #[test]
    fn work_done_is_the_programs_runs(
        threads in 2u32..=4,
        milli in 1000u64..=4000,
        tasks in prop::collection::vec((0u32..4, 1u64..=3000, 0u64..=2000, 1i64..=4), 1..6),
        sched in 0usize..3,
    ) {
        let milli = milli.min(1000 * u64::from(threads));
        let cpus = threads as usize;
        let mut t = serde_json::Map::new();
        for (i, &(cpu, run, sleep, loops)) in tasks.iter().enumerate() {
            t.insert(format!("t{i}"), json!({
                "loop": loops, "cpus": [cpu % threads], "run": run, "sleep": sleep
            }));
        }
        let m = json!({
            "topology": {"cores": 1, "threads": threads},
            "smt_throughput": milli as f64 / 1000.0,
        });
        let s = spec(Value::Object(t), m);
        let dir = Scratch::new("work");
        let path = dir.0.join("run.trace");
        let out = run_traced(&s, POLICIES[sched], Some(path.clone()));
        let lcm = (1..=u64::from(threads)).fold(1u64, |l, k| l / gcd(l, k) * k);
        let unit = u128::from(1000 * lcm);
        let work = work_from_trace(&path, threads, milli, cpus);
        for (i, &(_, run, _, loops)) in tasks.iter().enumerate() {
            let task = out.json()["tasks"].as_array().unwrap().iter()
                .find(|x| x["name"] == format!("t{i}")).unwrap().clone();
            let tid = task["tid"].as_u64().unwrap() as u32;
            let asked = u128::from(run * 1000) * loops as u128 * unit;
            let done = work.get(&tid).copied().unwrap_or(0);
            let switches = task["switches_voluntary"].as_u64().unwrap()
                + task["switches_involuntary"].as_u64().unwrap();
            let slack = (loops as u128 + u128::from(switches) + 1) * unit;
            prop_assert!(done >= asked, "t{i}: did {done}, asked {asked} (units of 1/{unit} ns)");
            prop_assert!(done <= asked + slack, "t{i}: did {done}, asked {asked}, slack {slack}");
        }
    }
}

/// Sharing makes SMT-aware placement measurable. Two hogs of 13 ms started together on
/// two 2-thread cores: the fair classes' fork placement (`find_idlest_group` at the MC
/// level picks the idler core, `tests/fair_smp.rs`) gives each a core, and both finish at
/// 13 ms; `fp` partitions tasks onto the allowed CPU with the fewest tasks in CPU order,
/// CPUs 0 and 1 — siblings — and both finish at 13 / 0.65 = 20 ms.
#[test]
fn an_idle_core_beats_an_idle_sibling() {
    let tasks = json!({"a": {"loop": 1, "run": 13000}, "b": {"loop": 1, "run": 13000}});
    let s = spec(tasks, machine(2, 2, Some(1.3)));
    for (sched, at) in [
        ("linux-cfs", 13 * MS),
        ("linux-eevdf", 13 * MS),
        ("fp", 20 * MS),
    ] {
        assert_eq!(
            exits(&s, sched),
            [("a".into(), at), ("b".into(), at)],
            "{sched}"
        );
    }
}

/// Every policy runs a workload of kernel spans with preemption points (pipes, fork,
/// wake-ups, sleeps, exits), a mutex, `runtime` work, ticks that cost time and raise
/// softirq work, on two 2-thread cores sharing at 1.3, with every invariant checked after
/// each event (`check: true`) and the same result twice.
#[test]
fn every_policy_keeps_the_invariants_on_shared_cores() {
    let text = json!({
        "tasks": {
            "w": {"instance": 3, "loop": 20, "schedlab:write": {"chan": "p", "bytes": 2000},
                  "lock": "m", "run": 300, "unlock": "m", "sleep": 200},
            "r": {"instance": 2, "loop": 30, "schedlab:read": {"chan": "p", "bytes": 3000},
                  "runtime": 150, "resume": "f"},
            "f": {"loop": 5, "run": 900, "fork": "child", "sleep": 700, "suspend": "f"},
            "child": {"instance": 0, "loop": 1, "run": 400},
            "h": {"loop": -1, "run": 5000}
        },
        "schedlab": {
            "pipes": {"p": {"capacity": 8192}},
            "machine": {
                "topology": {"cores": 2, "threads": 2}, "hz": 1000,
                "context_switch_ns": 3000, "fork_ns": 20000, "wakeup_ns": 1500,
                "sleep_ns": 1000, "exit_ns": 5000,
                "kernel": {"preempt": "voluntary", "tick_ns": 2000, "softirq_ns": 3000,
                           "timer_irq_ns": 1000,
                           "spans": {"pipe": {"nonpreempt_ns": 500, "point_ns": 700},
                                     "fork": {"nonpreempt_ns": 5000, "point_ns": 4000}}}
            }
        }
    });
    for &name in schedlab_sim::cpu::NAMES {
        let cfg = SimConfig {
            scheduler: Some(name.into()),
            check: true,
            duration_ns: Some(50 * MS),
            ..SimConfig::default()
        };
        let run = || match simulate_text(&text.to_string(), &cfg) {
            Ok(out) => Some(comparable(&out)),
            // A policy that refuses the workload (its softirq threads' class, the spec's
            // attributes) says so before running.
            Err(RunError::Sim(e)) if e.bad_input => None,
            Err(e) => panic!("{name}: {e}"),
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{name}");
    }
}

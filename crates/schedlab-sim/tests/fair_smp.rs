//! The fair classes' SMP code (`cpu/fair/`) on machines with a topology, through the
//! engine: Linux 6.1 `select_task_rq_fair` (fork placement by `find_idlest_cpu` over the
//! domains, `select_idle_sibling`'s idle-core search on SMT, `wake_affine`'s sync rule)
//! and `rebalance_domains` at each domain's own interval. Every expected CPU and instant
//! is worked out from the kernel's rules in the comments, for both `linux-cfs` and
//! `linux-eevdf`.

use schedlab_sim::topology::Topology;
use schedlab_sim::trace::parse::{parse_file, Event};
use schedlab_sim::{SimConfig, SimOutput};

const MS: u64 = 1_000_000;
const FAIR: [&str; 2] = ["linux-cfs", "linux-eevdf"];

/// Run `text` for `ms` milliseconds on `topology`.
fn run(
    text: &str,
    sched: &str,
    topology: Topology,
    ms: u64,
    params: &[(&str, &str)],
    trace: Option<std::path::PathBuf>,
) -> SimOutput {
    let cfg = SimConfig {
        scheduler: Some(sched.into()),
        check: true,
        duration_ns: Some(ms * MS),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        trace,
        ..SimConfig::default()
    };
    let text = with_topology(text, topology);
    schedlab_sim::simulate_text(&text, &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"))
}

/// `text` with `schedlab.machine.topology` set to `t` (its `cpus` must agree).
fn with_topology(text: &str, t: Topology) -> String {
    let mut spec: serde_json::Value = serde_json::from_str(text).unwrap();
    spec["schedlab"]["machine"]["topology"] = serde_json::json!({
        "packages": t.packages,
        "cores": t.cores_per_package,
        "threads": t.threads_per_core,
        "llc_cores": t.cores_per_llc,
    });
    spec.to_string()
}

fn topo(packages: u32, cores: u32, threads: u32, llc: u32) -> Topology {
    Topology {
        packages,
        cores_per_package: cores,
        threads_per_core: threads,
        cores_per_llc: llc,
    }
}

/// Busy time of each CPU (ns).
fn busy(out: &SimOutput) -> Vec<u64> {
    out.json()["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["busy_ns"].as_u64().unwrap())
        .collect()
}

fn busy_cpus(out: &SimOutput) -> Vec<usize> {
    busy(out)
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0)
        .map(|(c, _)| c)
        .collect()
}

/// Two CPU hogs started together on one package of two 2-thread cores (CPUs 0-1 and
/// 2-3). The first goes to CPU 0 (every group is equally idle, so `find_idlest_group`
/// keeps the local one at both levels). For the second, at the MC level the local core
/// {0,1} has one idle CPU and core {2,3} two: `find_idlest_group` picks the idler core
/// and its first idle CPU, 2. On a flat 4-CPU machine the groups are single CPUs and the
/// second hog goes to the first idle one, CPU 1 — its SMT sibling, had there been SMT.
#[test]
fn two_hogs_start_on_different_cores_of_an_smt_package() {
    let text = r#"{
        "tasks": {"a": {"loop": -1, "run": 10000}, "b": {"loop": -1, "run": 10000}},
        "schedlab": {"machine": {"cpus": 4, "hz": 1000}}
    }"#;
    for sched in FAIR {
        let smt = run(text, sched, topo(1, 2, 2, 2), 50, &[], None);
        assert_eq!(busy_cpus(&smt), [0, 2], "{sched}: one hog per core");
        let flat = run(text, sched, Topology::flat(4), 50, &[], None);
        assert_eq!(busy_cpus(&flat), [0, 1], "{sched}: flat machine");
    }
}

/// Three 2-thread cores (CPUs 0-1, 2-3, 4-5); hogs pinned to CPUs 0, 1 and 2. `w` runs
/// pinned to CPU 1, then, free to run anywhere, sleeps 10 ms and runs 30 ms. Its timer
/// wakes it on CPU 1 (prev = target), which is busy: `select_idle_sibling` finds an
/// idle core in the LLC (core 4-5) and `select_idle_cpu`, scanning from CPU 2, passes
/// over CPU 3 (idle, but its sibling 2 is busy) to the first fully idle core, CPU 4.
/// Without SMT (flat machine) the scan takes the first idle CPU, 3.
#[test]
fn a_wakee_prefers_an_idle_core_to_an_idle_sibling() {
    let text = r#"{
        "tasks": {
            "h0": {"loop": -1, "cpus": [0], "run": 10000},
            "h1": {"loop": -1, "cpus": [1], "run": 10000},
            "h2": {"loop": -1, "cpus": [2], "run": 10000},
            "w": {"loop": 1, "phases": {
                "pinned": {"cpus": [1], "run": 1000},
                "free": {"cpus": [0, 1, 2, 3, 4, 5], "sleep": 10000, "run": 30000}
            }}
        },
        "schedlab": {"machine": {"cpus": 6, "hz": 1000}}
    }"#;
    for sched in FAIR {
        let smt = run(text, sched, topo(1, 3, 2, 3), 60, &[], None);
        let b = busy(&smt);
        assert_eq!((b[3], b[5]), (0, 0), "{sched}: {b:?}");
        assert_eq!(b[4], 30 * MS, "{sched}: w ran on the idle core: {b:?}");
        let flat = run(text, sched, Topology::flat(6), 60, &[], None);
        let b = busy(&flat);
        assert_eq!((b[3], b[4], b[5]), (30 * MS, 0, 0), "{sched}: flat: {b:?}");
    }
}

/// Two LLCs of four cores (CPUs 0-3 and 4-7). The reader runs on CPU 5, then blocks on
/// a pipe (or a condition variable); the writer, pinned to CPU 0, wakes it 5 ms in and
/// keeps running. At the DIE level (it spans both CPUs) `wake_affine_idle` decides: the
/// waker's CPU is busy; a sync wake-up (pipe) with the waker alone on its CPU returns the
/// waker's CPU, and `select_idle_sibling` then places the reader on the first idle CPU of
/// the waker's LLC, CPU 1. A futex wake-up is not sync, so the idle previous CPU wins and
/// the reader stays on CPU 5.
#[test]
fn a_sync_wakeup_pulls_the_wakee_into_the_wakers_llc() {
    let spec = |sync: bool| {
        let (wait, wake) = if sync {
            (
                r#""schedlab:read": {"chan": "p", "bytes": 64}"#,
                r#""schedlab:write": {"chan": "p", "bytes": 64}"#,
            )
        } else {
            (
                r#""lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m""#,
                r#""lock": "m", "signal": "c", "unlock": "m""#,
            )
        };
        format!(
            r#"{{
            "tasks": {{
                "writer": {{"loop": 1, "cpus": [0], "sleep": 5000, {wake}, "run": 20000}},
                "reader": {{"loop": 1, "phases": {{
                    "warm": {{"cpus": [5], "run": 1000}},
                    "wait": {{"cpus": [0, 1, 2, 3, 4, 5, 6, 7], {wait}, "run": 10000}}
                }}}}
            }},
            "schedlab": {{
                "machine": {{"cpus": 8, "hz": 1000}},
                "pipes": {{"p": {{"capacity": 65536, "op_cost_ns": 0, "byte_cost_ps": 0}}}}
            }}
        }}"#
        )
    };
    let two_llcs = topo(1, 8, 1, 4);
    for sched in FAIR {
        let b = busy(&run(&spec(true), sched, two_llcs, 30, &[], None));
        assert_eq!((b[1], b[5]), (10 * MS, MS), "{sched}: pipe: {b:?}");
        let b = busy(&run(&spec(false), sched, two_llcs, 30, &[], None));
        assert_eq!((b[1], b[5]), (0, 11 * MS), "{sched}: futex: {b:?}");
    }
}

/// Two packages of two cores (CPUs 0-1 and 2-3, one LLC each): the domains are MC
/// (weight 2) and NUMA (weight 4, min_interval 4 ms, max_interval 8 ms). Hogs pinned to
/// CPUs 0 and 1 keep package 0 busy from the start, so the busy CPUs' ticks kick the NO_HZ
/// idle balance: idle CPU 2 (the first idle CPU of its group) balances MC at 2 ms (then
/// every 4 ms) and NUMA at 4 ms, finding package 0 within the NUMA imbalance allowance
/// (2 tasks, `adjust_numa_imbalance` tolerates up to 2); balanced, the NUMA interval
/// doubles to its maximum, 8 ms: attempts at 4, 12, 20 ms. At 13 ms two more tasks wake
/// on CPU 0 (a wake-up stays in its LLC), overloading package 0. CPU 2's MC attempts at
/// 14 and 18 ms cannot pull across packages; the first migration into package 1 comes
/// with the NUMA attempt at 20 ms. Cache-hotness is off (`sched_migration_cost_ns=0`) so
/// that whichever task is waiting may move.
#[test]
fn balancing_across_packages_happens_at_the_machine_levels_interval() {
    let text = r#"{
        "tasks": {
            "x": {"loop": -1, "cpus": [0], "run": 10000},
            "y": {"loop": -1, "cpus": [1], "run": 10000},
            "z": {"instance": 2, "loop": 1, "phases": {
                "start": {"cpus": [0], "run": 1},
                "later": {"cpus": [0, 1, 2, 3], "sleep": 13000, "run": 20000}
            }}
        },
        "schedlab": {"machine": {"cpus": 4, "hz": 1000}}
    }"#;
    let dir = std::env::temp_dir().join(format!("schedlab-fair-smp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for sched in FAIR {
        let path = dir.join(format!("{sched}.trace"));
        run(
            text,
            sched,
            topo(2, 2, 1, 2),
            40,
            &[("sched_migration_cost_ns", "0")],
            Some(path.clone()),
        );
        let first = parse_file(&path)
            .unwrap()
            .into_iter()
            .find_map(|r| match r.data {
                Event::Migrate { dest_cpu, .. } if dest_cpu >= 2 => Some(r.ts),
                _ => None,
            });
        assert_eq!(first, Some(20 * MS), "{sched}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Two CPUs. An RT task on CPU 0 runs until 5 ms, then sleeps; two fair hogs woke on
/// CPU 1 at 1 ms (CPU 0, running the RT task, was not idle for `select_idle_sibling`).
/// When the RT task blocks, CPU 0's `schedule()` finds nothing to run and its newidle
/// balance (`rd->overload`: CPU 1 has two tasks) pulls the waiting hog at once, at 5 ms:
/// the task that blocked is no longer counted on CPU 0.
#[test]
fn a_cpu_whose_rt_task_blocks_pulls_a_waiting_fair_task_at_once() {
    let text = r#"{
        "tasks": {
            "r": {"loop": 1, "policy": "SCHED_FIFO", "priority": 50, "cpus": [0],
                  "run": 5000, "sleep": 30000},
            "h": {"instance": 2, "loop": 1, "phases": {
                "start": {"cpus": [1], "run": 1},
                "hog": {"cpus": [0, 1], "sleep": 1000, "run": 20000}
            }}
        },
        "schedlab": {"machine": {"cpus": 2, "hz": 1000}}
    }"#;
    let dir = std::env::temp_dir().join(format!("schedlab-newidle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for sched in FAIR {
        let path = dir.join(format!("{sched}.trace"));
        run(text, sched, Topology::flat(2), 30, &[], Some(path.clone()));
        let to_cpu0: Vec<u64> = parse_file(&path)
            .unwrap()
            .into_iter()
            .filter_map(|r| match r.data {
                Event::Migrate { dest_cpu: 0, .. } => Some(r.ts),
                _ => None,
            })
            .collect();
        assert_eq!(to_cpu0.first(), Some(&(5 * MS)), "{sched}: {to_cpu0:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

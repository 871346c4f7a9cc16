//! `bfs` (and `muqss`) pinned to the source (sched-BFS.txt, bfs.c, sched-MuQSS.txt): the
//! prio_ratios table, the virtual-deadline formula on
//! refill, earliest-deadline picking against a brute-force reference, the CPU share two
//! hogs get on one CPU, RT before normal, wake-up preemption by a sleeper's old deadline,
//! SCHED_BATCH never wake-preempting, SCHED_ISO's CPU limit — the unit tests driven
//! through the scheduler core (`SchedCore`, the engine's protocol) — and end-to-end runs
//! (hackbench from the generator, mixed policies) with the invariant checker.
mod common;
use common::*;

use proptest::prelude::*;
use schedlab_sim::cpu::bfs::{self, Bfs};
use schedlab_sim::protocol::testing::strategies::{attrs_among, ops, tasks};
use schedlab_sim::protocol::testing::Driver;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{CpuId, CpuMask, SchedAttrs};
use schedlab_spec::model::*;

fn attrs(policy: Policy, rt_priority: i32, nice: i32) -> SchedAttrs {
    SchedAttrs {
        policy,
        rt_priority,
        nice,
        dl: None,
        slice_ns: None,
    }
}

/// `MS_TO_NS(1) / 128` = 8192.
const UNIT: u64 = (1 << 20) / 128;

#[test]
fn prio_ratios_table_is_128_then_plus_ten_percent_integer() {
    let r = bfs::prio_ratios();
    assert_eq!(
        r,
        [
            128, 140, 154, 169, 185, 203, 223, 245, 269, 295, 324, 356, 391, 430, 473, 520, 572,
            629, 691, 760, 836, 919, 1010, 1111, 1222, 1344, 1478, 1625, 1787, 1965, 2161, 2377,
            2614, 2875, 3162, 3478, 3825, 4207, 4627, 5089
        ]
    );
    // prio_deadline_diff(nice 0) with rr_interval 6: prio_ratios[20] * 6 * 8192 ns.
    assert_eq!(bfs::prio_deadline_diff(0, 6), 836 * 6 * UNIT);
    assert_eq!(bfs::prio_deadline_diff(-20, 6), 128 * 6 * UNIT);
    assert_eq!(bfs::prio_deadline_diff(19, 1), 5089 * UNIT);
    // timeslice() = MS_TO_US(rr_interval) = 6 << 10 µs.
    assert_eq!(bfs::timeslice_ns(6), 6144 * 1000);
}

const C0: CpuId = CpuId(0);

#[test]
fn deadline_on_creation_and_after_slice_refill_is_now_plus_ratio_times_rr() {
    let mut core = SchedCore::bare(Bfs::new(1), 1, 250);
    core.policy.set_param("rr_interval_ms", "4").unwrap();
    let mut ts = Vec::new();
    for (i, nice) in [-20, -3, 0, 7, 19].into_iter().enumerate() {
        let now = 1_000_000 * (i as u64 + 1);
        core.set_now(now);
        let t = core.spawn(attrs(Policy::Other, 0, nice), CpuMask::first_n(1), None);
        let ratio = bfs::prio_ratios()[(nice + 20) as usize];
        assert_eq!(
            core.policy.deadline_of(t),
            now + ratio * 4 * UNIT,
            "nice {nice}"
        );
        assert_eq!(core.policy.time_slice_of(t), bfs::timeslice_ns(4));
        ts.push((t, nice));
    }
    // Start them all at 100 ms; run each to the end of its slice, then it blocks and is
    // descheduled: new deadline from now (check_deadline at the switch).
    core.set_now(100_000_000);
    for &(t, _) in &ts {
        core.wake_up_new_task(t, None).unwrap();
    }
    core.process_resched();
    for _ in 0..ts.len() {
        let t = core.ctx.curr(C0).unwrap();
        let now = core.ctx.now() + core.policy.time_slice_of(t);
        core.set_now(now);
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        let nice = ts.iter().find(|x| x.0 == t).unwrap().1;
        let ratio = bfs::prio_ratios()[(nice + 20) as usize];
        assert_eq!(
            core.policy.deadline_of(t),
            now + ratio * 4 * UNIT,
            "refill of nice {nice}"
        );
        assert_eq!(core.policy.time_slice_of(t), bfs::timeslice_ns(4));
    }
    assert_eq!(core.ctx.curr(C0), None);
}

#[test]
fn sleeping_keeps_slice_and_deadline() {
    let mut core = SchedCore::bare(Bfs::new(1), 1, 250);
    let t = core.spawn(attrs(Policy::Other, 0, 0), CpuMask::first_n(1), None);
    core.wake_up_new_task(t, None).unwrap();
    core.process_resched();
    let d = core.policy.deadline_of(t);
    assert_eq!(core.ctx.curr(C0), Some(t));
    core.set_now(1_000_000);
    core.block(C0, PrevState::Sleeping);
    core.process_resched();
    core.set_now(500_000_000);
    core.try_to_wake_up(t, None, false).unwrap();
    assert_eq!(core.policy.deadline_of(t), d);
    assert_eq!(
        core.policy.time_slice_of(t),
        bfs::timeslice_ns(6) - 1_000_000
    );
}

/// One queued task for the brute-force reference.
#[derive(Clone, Debug)]
struct QTask {
    policy: Policy,
    level: i32,
    created_us: u64,
    cpus: u8,
}

fn qtask() -> impl Strategy<Value = QTask> {
    (0u8..5, 0i32..40, 0u64..50_000, 1u8..16).prop_map(|(p, level, created_us, cpus)| {
        let policy = [
            Policy::Other,
            Policy::Other,
            Policy::Batch,
            Policy::Idle,
            Policy::Fifo,
        ][p as usize];
        QTask {
            policy,
            level,
            created_us,
            cpus,
        }
    })
}

const POLICIES: &[Policy] = &[
    Policy::Other,
    Policy::Batch,
    Policy::Idle,
    Policy::Fifo,
    Policy::Rr,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// earliest_deadline_task: RT by priority then FIFO, then earliest deadline among
    /// normal, then among SCHED_IDLEPRIO tasks, restricted to tasks allowed on the CPU.
    /// MuQSS (interactive) must pick the same task across its per-CPU queues.
    #[test]
    fn pick_matches_brute_force_earliest_deadline(
        tasks in proptest::collection::vec(qtask(), 1..24),
        cpus in proptest::collection::vec(0u32..4, 1..40),
        muqss in any::<bool>(),
    ) {
        let policy = if muqss { schedlab_sim::cpu::muqss::muqss(4) } else { Bfs::new(4) };
        let mut core = SchedCore::bare(policy, 4, 250);
        let mut ids = Vec::new();
        let mut sorted = tasks.clone();
        sorted.sort_by_key(|t| t.created_us);
        for q in &sorted {
            core.set_now(q.created_us * 1000);
            let mut m = CpuMask::empty();
            for c in 0..4 {
                if q.cpus & (1 << c) != 0 {
                    m.set(CpuId(c));
                }
            }
            let a = match q.policy {
                Policy::Fifo => attrs(Policy::Fifo, 1 + q.level % 5, 0),
                p => attrs(p, 0, q.level - 20),
            };
            let t = core.spawn(a, m, None);
            ids.push((t, a, m));
        }
        core.set_now(60_000_000);
        // Start them in id order (RT FIFO order = wake-up order): every CPU is idle, so
        // each is queued for its first allowed CPU.
        for &(t, _, m) in &ids {
            prop_assert_eq!(core.wake_up_new_task(t, None), Ok(m.first().unwrap()));
        }
        // Each step, one CPU schedules; the task it picked before blocks first, so every
        // task is picked at most once.
        let mut left: Vec<usize> = (0..ids.len()).collect();
        for &c in &cpus {
            let cpu = CpuId(c);
            if core.ctx.curr(cpu).is_some() {
                core.block(cpu, PrevState::Sleeping);
            }
            let want = left
                .iter()
                .copied()
                .filter(|&i| ids[i].2.contains(cpu))
                .min_by_key(|&i| {
                    let (t, a, _) = ids[i];
                    let class = match a.policy {
                        Policy::Fifo => a.prio(),
                        Policy::Idle => 102,
                        _ => 101,
                    };
                    let key = if a.policy == Policy::Fifo { i as u64 } else { core.policy.deadline_of(t) };
                    (class, key, i)
                });
            let got = core.schedule(cpu).next;
            if muqss {
                // Equal (class, deadline) keys may resolve to either queue; compare keys.
                prop_assert_eq!(got.is_some(), want.is_some());
                if let (Some(g), Some(i)) = (got, want) {
                    prop_assert_eq!(core.policy.deadline_of(g), core.policy.deadline_of(ids[i].0));
                    prop_assert_eq!(core.ctx.task(g).attrs.prio(), ids[i].1.prio());
                    let gi = ids.iter().position(|x| x.0 == g).unwrap();
                    left.retain(|&x| x != gi);
                }
            } else {
                prop_assert_eq!(got, want.map(|i| ids[i].0), "cpu {}", c);
                if let Some(i) = want {
                    left.retain(|&x| x != i);
                }
            }
            if let Some(g) = got {
                prop_assert_eq!(core.ctx.task(g).cpu, cpu);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random operations through the scheduler core keep the invariants every policy must
    /// keep (`Driver::check`), for BFS and MuQSS, with ISO tasks and every yield type.
    #[test]
    fn random_operations_keep_the_invariants(
        cpus in 1usize..4,
        muqss in any::<bool>(),
        rt_as_iso in any::<bool>(),
        yield_type in 0u8..3,
        specs in tasks(attrs_among(POLICIES)),
        ops in proptest::collection::vec(ops(10_000_000, attrs_among(POLICIES)), 1..200),
    ) {
        let mut policy = if muqss { schedlab_sim::cpu::muqss::muqss(cpus) } else { Bfs::new(cpus) };
        policy.set_param("rt_as_iso", if rt_as_iso { "1" } else { "0" }).unwrap();
        policy.set_param("yield_type", &yield_type.to_string()).unwrap();
        let mut d = Driver::new(policy, cpus, 250, &specs);
        d.apply_checked(ops);
    }
}

/// The CPU two hogs get on one CPU under the deadline rule alone: run the earliest
/// deadline (ties: the one queued first) for a whole slice, then refill its deadline.
fn reference_share(nices: &[i32], rr_ms: u64, dur: u64) -> Vec<u64> {
    let s = bfs::timeslice_ns(rr_ms);
    let mut dl: Vec<(u64, u64)> = nices
        .iter()
        .enumerate()
        .map(|(i, &n)| (bfs::prio_deadline_diff(n, rr_ms), i as u64))
        .collect();
    let mut cpu = vec![0u64; nices.len()];
    let (mut now, mut seq) = (0u64, nices.len() as u64);
    while now < dur {
        let i = (0..nices.len()).min_by_key(|&i| dl[i]).unwrap();
        let run = s.min(dur - now);
        cpu[i] += run;
        now += run;
        dl[i] = (now + bfs::prio_deadline_diff(nices[i], rr_ms), seq);
        seq += 1;
    }
    cpu
}

fn hog(name: &str, policy: Policy, prio: i32) -> TaskSpec {
    task(
        name,
        attr(policy, prio),
        -1,
        vec![Event::Run { ns: 50 * MS }],
    )
}

fn run_with(
    sched: &str,
    s: &Spec,
    params: &[(&str, &str)],
    check: bool,
) -> schedlab_sim::SimOutput {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(sched.into()),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        check,
        samples: schedlab_sim::SampleOutput::Memory,
        ..Default::default()
    };
    schedlab_sim::simulate(s, &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"))
}

fn run_bfs(s: &Spec, params: &[(&str, &str)], check: bool) -> schedlab_sim::SimOutput {
    run_with("bfs", s, params, check)
}

#[test]
fn nice0_and_nice10_hogs_share_one_cpu_as_the_deadlines_imply() {
    let dur = 10_000 * MS;
    let want = reference_share(&[0, 10], 6, dur);
    // nice 10's refilled deadline lies (2161 - 836) * 6 * 8192 ns = 65.1 ms further out
    // than nice 0's: nice 0 runs 11 slices of 6.144 ms (11 * 6.144 > 65.1 > 10 * 6.144) for
    // each one of nice 10.
    assert!(
        (want[0] as f64 / want[1] as f64 - 11.0).abs() < 0.1,
        "{want:?}"
    );
    for sched in ["bfs", "muqss"] {
        for hz in [100, 250, 1000] {
            let mut s = spec(
                1,
                vec![hog("n0", Policy::Other, 0), hog("n10", Policy::Other, 10)],
                Resources::default(),
            );
            s.duration_ns = Some(dur);
            s.machine.hz = hz;
            let out = run_with(sched, &s, &[], true);
            for (name, w) in [("n0", want[0]), ("n10", want[1])] {
                let got = task_json(&out, name)["cpu_ns"].as_u64().unwrap();
                let rel = (got as f64 - w as f64).abs() / w as f64;
                assert!(
                    rel < 0.005,
                    "{sched} HZ={hz} {name}: cpu {got} vs reference {w}"
                );
            }
        }
    }
}

#[test]
fn rt_runs_before_normal_and_preempts_at_once() {
    for sched in ["bfs", "muqss"] {
        let mut s = spec(
            1,
            vec![
                hog("hog", Policy::Other, -20),
                periodic("rt", 0, MS, 10 * MS, 50, 20),
            ],
            timers(1),
        );
        s.duration_ns = Some(300 * MS);
        let out = run_with(sched, &s, &[], true);
        let rt = task_json(&out, "rt");
        assert_eq!(rt["activations"], 20);
        assert_eq!(
            rt["wakeup_latency_ns"]["max"], 0,
            "{sched}: RT preempts at once"
        );
        assert_eq!(rt["cpu_ns"], 20 * MS);
    }
}

#[test]
fn waking_sleeper_keeps_its_early_deadline_and_preempts_a_hog() {
    let sleeper = task(
        "sleeper",
        attr(Policy::Other, 0),
        30,
        vec![Event::Sleep { ns: 20 * MS }, Event::Run { ns: MS }],
    );
    let mut s = spec(
        1,
        vec![hog("hog", Policy::Other, 0), sleeper],
        Resources::default(),
    );
    s.duration_ns = Some(1_000 * MS);
    let out = run_bfs(&s, &[], true);
    let sl = task_json(&out, "sleeper");
    assert_eq!(sl["activations"], 30);
    assert_eq!(sl["wakeup_latency_ns"]["max"], 0);
}

#[test]
fn batch_never_wake_preempts() {
    let sleeper = task(
        "batch",
        attr(Policy::Batch, 0),
        10,
        vec![Event::Sleep { ns: 20 * MS }, Event::Run { ns: MS }],
    );
    let mut s = spec(
        1,
        vec![hog("hog", Policy::Other, 0), sleeper],
        Resources::default(),
    );
    s.duration_ns = Some(400 * MS);
    let out = run_bfs(&s, &[], true);
    let b = task_json(&out, "batch");
    assert!(b["wakeup_latency_ns"]["max"].as_u64().unwrap() > 0);
}

#[test]
fn iso_tasks_are_limited_to_iso_cpu() {
    let mk = || {
        let mut s = spec(
            1,
            vec![
                hog("iso", Policy::Fifo, 10),
                hog("normal", Policy::Other, 0),
            ],
            Resources::default(),
        );
        s.duration_ns = Some(20_000 * MS);
        s
    };
    // Real RT: the normal hog starves.
    let out = run_bfs(&mk(), &[], false);
    assert_eq!(task_json(&out, "normal")["cpu_ns"], 0);
    // As SCHED_ISO with iso_cpu 100: never over the limit, runs like RT.
    let out = run_bfs(&mk(), &[("rt_as_iso", "1"), ("iso_cpu", "100")], false);
    assert_eq!(task_json(&out, "normal")["cpu_ns"], 0);
    // iso_cpu 30: ISO priority for ~30 % of the CPU, shared by deadline otherwise.
    let out = run_bfs(&mk(), &[("rt_as_iso", "1"), ("iso_cpu", "30")], true);
    let sim = out.json()["run"]["sim_ns"].as_u64().unwrap() as f64;
    let n = task_json(&out, "normal")["cpu_ns"].as_u64().unwrap() as f64 / sim;
    assert!(n > 0.2 && n < 0.5, "normal share {n}");
}

#[test]
fn params_are_validated() {
    let mut b = Bfs::new(2);
    assert!(b.set_param("rr_interval_ms", "0").is_err());
    assert!(b.set_param("rr_interval_ms", "1001").is_err());
    assert!(b.set_param("iso_cpu", "101").is_err());
    assert!(b.set_param("yield_type", "3").is_err());
    assert!(b.set_param("interactive", "1").is_err());
    assert!(b.set_param("nope", "1").is_err());
    for (k, v) in [
        ("rr_interval_ms", "10"),
        ("iso_cpu", "50"),
        ("rt_as_iso", "1"),
        ("yield_type", "2"),
        ("locality", "0"),
        ("hrexpiry", "0"),
    ] {
        b.set_param(k, v).unwrap();
    }
    assert!(b.accepts(&attrs(Policy::Deadline, 0, 0)).is_err());
    let mut m = schedlab_sim::cpu::muqss::muqss(2);
    assert_eq!(m.info().name, "muqss");
    assert!(m.set_param("hrexpiry", "1").is_err());
    m.set_param("interactive", "0").unwrap();
    m.set_param("rr_interval_ms", "3").unwrap();
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
fn hackbench_completes_with_checker_under_several_tunings() {
    let s = hackbench(&[("groups", "2"), ("loops", "20")]);
    let cases: [(&str, Vec<(&str, &str)>); 5] = [
        ("bfs", vec![]),
        ("bfs", vec![("rr_interval_ms", "1"), ("hrexpiry", "0")]),
        ("bfs", vec![("locality", "0"), ("yield_type", "2")]),
        ("muqss", vec![]),
        ("muqss", vec![("interactive", "0")]),
    ];
    for (sched, params) in cases {
        let mut s = s.clone();
        s.machine.cpus = 4;
        let out = run_with(sched, &s, &params, true);
        assert!(
            !out.json()["summary"]["makespan_ns"].is_null(),
            "{sched} {params:?}: hackbench did not finish"
        );
        check_accounting(&out).unwrap();
    }
}

#[test]
fn mixed_policies_end_to_end_with_checker() {
    let mut tasks = vec![
        periodic("rt", 0, 2 * MS, 10 * MS, 20, 50),
        task(
            "batch",
            attr(Policy::Batch, 5),
            40,
            vec![Event::Run { ns: 3 * MS }, Event::Yield],
        ),
        task(
            "idle",
            attr(Policy::Idle, 0),
            20,
            vec![Event::Run { ns: 5 * MS }],
        ),
    ];
    for i in 0..6 {
        tasks.push(task(
            &format!("w{i}"),
            attr(Policy::Other, i * 3 - 5),
            40,
            vec![
                Event::Run {
                    ns: (i as u64 + 1) * MS,
                },
                Event::Sleep { ns: 2 * MS },
            ],
        ));
    }
    let s = spec(3, tasks, timers(1));
    for sched in ["bfs", "muqss"] {
        for params in [vec![], vec![("rt_as_iso", "1"), ("iso_cpu", "20")]] {
            let out = run_with(sched, &s, &params, true);
            assert!(!out.json()["summary"]["makespan_ns"].is_null());
            check_accounting(&out).unwrap();
        }
    }
}

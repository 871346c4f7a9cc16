//! `linux-o1` pinned to vanilla Linux 2.6.18 kernel/sched.c: timeslice formula (l.164-186), effective_prio (l.713-830),
//! scheduler_tick's expiry rules and EXPIRED_STARVING (l.2897-3080), sched_fork /
//! sched_exit (l.1536-1720), sys_sched_yield (l.4405-4450) — driven through the scheduler
//! core (`SchedCore`, the engine's protocol) — and end-to-end runs with the invariant
//! checker.
mod common;
use common::*;

use proptest::prelude::*;
use schedlab_sim::cpu::linux_o1::LinuxO1;
use schedlab_sim::protocol::testing::strategies::{attrs_among, ops, tasks};
use schedlab_sim::protocol::testing::Driver;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};
use schedlab_spec::model::{Event, Resources, Spec};

const C0: CpuId = CpuId(0);

fn other(nice: i32) -> SchedAttrs {
    SchedAttrs {
        policy: Policy::Other,
        rt_priority: 0,
        nice,
        dl: None,
        slice_ns: None,
    }
}

/// The kernel's formula written out independently: DEF_TIMESLICE = 100*HZ/1000,
/// MIN_TIMESLICE = max(5*HZ/1000, 1), SCALE_PRIO(x, p) = max(x*(140-p)/20, MIN).
fn kernel_timeslice(hz: u64, nice: i64) -> u64 {
    let def = 100 * hz / 1000;
    let min = (5 * hz / 1000).max(1);
    let sp = 120 + nice;
    let x = if sp < 120 { def * 4 } else { def };
    (x * (140 - sp as u64) / 20).max(min)
}

#[test]
fn task_timeslice_for_every_nice_and_hz() {
    let p = LinuxO1::new(1);
    for hz in [100u32, 250, 1000] {
        for nice in -20..=19 {
            assert_eq!(
                p.task_timeslice(hz, 120 + nice),
                kernel_timeslice(hz as u64, nice as i64),
                "HZ {hz} nice {nice}"
            );
        }
    }
    // Spot values at HZ 100 (jiffies): nice 19 floors at MIN_TIMESLICE = 1.
    assert_eq!(p.task_timeslice(100, 139), 1);
    assert_eq!(p.task_timeslice(100, 120), 10);
    assert_eq!(p.task_timeslice(100, 100), 80);
}

/// linux-o1 on one CPU at `hz`, driven by the scheduler core (the engine's protocol).
fn o1(hz: u32) -> SchedCore<LinuxO1> {
    SchedCore::bare(LinuxO1::new(1), 1, hz)
}

/// A start-up SCHED_OTHER task (no parent) of nice `nice`, created but not yet woken.
fn spawn(core: &mut SchedCore<LinuxO1>, nice: i32) -> TaskId {
    core.spawn(other(nice), CpuMask::first_n(1), None)
}

/// Wake created tasks in order (`wake_up_new_task`) and let CPU 0 schedule.
fn start(core: &mut SchedCore<LinuxO1>, tasks: &[TaskId]) {
    for &t in tasks {
        core.wake_up_new_task(t, None).unwrap();
    }
    core.process_resched();
}

/// CPU 0's periodic tick (`scheduler_tick`) at `now`; the reschedule it may ask for is
/// left pending for the test to see.
fn tick_at(core: &mut SchedCore<LinuxO1>, now: u64) {
    core.set_now(now);
    core.tick(C0);
}

/// effective_prio = static_prio − (CURRENT_BONUS − MAX_BONUS/2), CURRENT_BONUS =
/// jiffies(sleep_avg) × 10 / 1000 (l.131, 713-830), as wake_up_new_task computes it.
#[test]
fn effective_prio_bonus_from_sleep_avg() {
    for (ms, bonus) in [
        (0u64, 0i32),
        (99, 0),
        (100, 1),
        (500, 5),
        (799, 7),
        (1000, 10),
    ] {
        let mut core = o1(1000);
        let t: Vec<_> = [0, -20, 19].map(|n| spawn(&mut core, n)).into();
        for &x in &t {
            core.policy
                .set_sleep_avg_for_test(&core.ctx, x, ms * 1_000_000);
        }
        start(&mut core, &t);
        for (i, nice) in [(0usize, 0), (1, -20), (2, 19)] {
            let want = (120 + nice - (bonus - 5)).clamp(100, 139);
            assert_eq!(
                core.policy.prio(t[i]),
                want,
                "nice {nice} sleep_avg {ms} ms"
            );
            assert_eq!(core.policy.dynamic_prio(t[i]), Some(("prio", want as i64)));
        }
    }
}

/// scheduler_tick (within l.2988-3080): an interactive task whose slice runs out is re-queued
/// on the active array; a non-interactive one goes to the expired array.
#[test]
fn interactive_task_requeued_on_active_at_expiry() {
    let mut core = o1(1000);
    let (a, b) = (spawn(&mut core, 0), spawn(&mut core, 0));
    // bonus 10 -> prio 115, interactive; b: sleep_avg 0, prio 125, not interactive.
    core.policy
        .set_sleep_avg_for_test(&core.ctx, a, 1_000_000_000);
    start(&mut core, &[a, b]);
    assert_eq!(core.ctx.curr(C0), Some(a));
    core.policy.set_time_slice_for_test(a, 1);
    tick_at(&mut core, 1_000_000);
    assert_eq!(
        core.policy.in_expired(a),
        Some(false),
        "interactive: stays active"
    );
    assert_eq!(
        core.policy.time_slice(a),
        100,
        "refilled with task_timeslice"
    );
    assert!(core.ctx.need_resched(C0));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(a), "still the best task");
    // a blocks; b's slice runs out: not interactive -> expired.
    core.block(C0, PrevState::Sleeping);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(b));
    core.policy.set_time_slice_for_test(b, 1);
    tick_at(&mut core, 2_000_000);
    assert_eq!(core.policy.in_expired(b), Some(true));
}

/// EXPIRED_STARVING (l.2897-2905), first clause: a better static_prio waits in the
/// expired array -> an interactive task expires to the expired array too.
#[test]
fn starvation_by_better_expired_static_prio() {
    let mut core = o1(1000);
    let (hi, a) = (spawn(&mut core, -5), spawn(&mut core, 0));
    // hi (nice -5, sleep_avg 0 -> prio 120, not interactive) runs first and expires.
    start(&mut core, &[hi, a]);
    assert_eq!(core.ctx.curr(C0), Some(hi));
    core.policy.set_time_slice_for_test(hi, 1);
    tick_at(&mut core, 1_000_000);
    assert_eq!(core.policy.in_expired(hi), Some(true));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(a));
    // a is interactive (bonus 10) but static_prio 120 > best_expired_prio 115.
    core.policy
        .set_sleep_avg_for_test(&core.ctx, a, 1_000_000_000);
    core.policy.set_time_slice_for_test(a, 1);
    tick_at(&mut core, 2_000_000);
    assert_eq!(
        core.policy.in_expired(a),
        Some(true),
        "starving: interactive task expires"
    );
}

/// EXPIRED_STARVING second clause: the first expiry is older than STARVATION_LIMIT ×
/// nr_running jiffies. (The ticks between the two expiries are skipped: only the age of
/// the first expiry matters.)
#[test]
fn starvation_by_age_of_first_expiry() {
    for (wait_jiffies, starving) in [(2000u64, false), (2001, true)] {
        let mut core = o1(1000);
        let (b, a) = (spawn(&mut core, 0), spawn(&mut core, 0));
        start(&mut core, &[b, a]);
        assert_eq!(core.ctx.curr(C0), Some(b));
        core.policy.set_time_slice_for_test(b, 1);
        tick_at(&mut core, 10_000_000); // expired_timestamp = jiffy 10, best_expired_prio = 120
        assert_eq!(core.policy.in_expired(b), Some(true));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        core.policy
            .set_sleep_avg_for_test(&core.ctx, a, 1_000_000_000);
        core.policy.set_time_slice_for_test(a, 1);
        tick_at(&mut core, (10 + wait_jiffies) * 1_000_000);
        // nr_running = 2 -> limit 2000 jiffies; "> limit" starves.
        assert_eq!(
            core.policy.in_expired(a),
            Some(starving),
            "waited {wait_jiffies}"
        );
    }
}

/// TIMESLICE_GRANULARITY round robin (scheduler_tick, within l.2988-3080): an interactive task at bonus 10 is
/// requeued to the tail of its level every 10 ms of its slice, keeping the slice.
#[test]
fn interactive_round_robin_every_granularity() {
    let mut core = o1(1000);
    let (a, b) = (spawn(&mut core, 0), spawn(&mut core, 0));
    for x in [a, b] {
        core.policy
            .set_sleep_avg_for_test(&core.ctx, x, 1_000_000_000);
    }
    start(&mut core, &[a, b]);
    assert_eq!(core.policy.active_list(C0, 115), vec![a, b]);
    assert_eq!(core.ctx.curr(C0), Some(a));
    for i in 1..=9 {
        tick_at(&mut core, i * 1_000_000);
        assert_eq!(core.policy.active_list(C0, 115), vec![a, b], "tick {i}");
        assert!(!core.ctx.need_resched(C0));
    }
    tick_at(&mut core, 10_000_000); // 10 jiffies used: (100 - 90) % 10 == 0
    assert_eq!(core.policy.active_list(C0, 115), vec![b, a]);
    assert_eq!(core.policy.time_slice(a), 90);
    assert!(core.ctx.need_resched(C0));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(b));
}

/// sched_fork (within l.1536-1720): the child gets (ts+1)/2, the parent ts/2; sched_exit
/// (same range) gives an unused first slice back, capped at task_timeslice(child).
#[test]
fn fork_splits_and_exit_gives_back_the_slice() {
    let one = CpuMask::first_n(1);
    for (ts, child, parent) in [(7u32, 4u32, 3u32), (100, 50, 50), (2, 1, 1)] {
        let mut core = o1(1000);
        let par = spawn(&mut core, 0);
        start(&mut core, &[par]);
        core.policy.set_time_slice_for_test(par, ts);
        let c = core.spawn(other(0), one, Some(par));
        assert_eq!(
            (core.policy.time_slice(c), core.policy.time_slice(par)),
            (child, parent)
        );
        assert!(core.policy.first_time_slice(c));
        // wake_up_new_task: same CPU -> linked just ahead of the running parent.
        core.wake_up_new_task(c, Some(C0)).unwrap();
        let prio = core.policy.prio(par);
        assert_eq!(core.policy.prio(c), prio);
        assert_eq!(core.policy.active_list(C0, prio as usize), vec![c, par]);
        assert!(core.ctx.need_resched(C0));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(c), "the child runs first");
        // The child exits without finishing its first slice.
        core.exit(C0);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(par));
        assert_eq!(core.policy.time_slice(par), child + parent, "ts {ts}");
    }
    // Cap at task_timeslice(child): a nice 19 child (5 jiffies) of a nice 0 parent.
    let mut core = o1(1000);
    let par = spawn(&mut core, 0);
    start(&mut core, &[par]);
    core.policy.set_time_slice_for_test(par, 100);
    let c = core.spawn(other(19), one, Some(par));
    core.wake_up_new_task(c, Some(C0)).unwrap();
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(c));
    core.exit(C0);
    core.process_resched();
    assert_eq!(core.policy.time_slice(par), 5);
}

/// A parent whose slice the split empties gets 1 jiffy and scheduler_tick() runs at once,
/// expiring it (sched_fork, within l.1536-1720).
#[test]
fn fork_with_one_jiffy_left_expires_the_parent() {
    let mut core = o1(1000);
    let par = spawn(&mut core, 0);
    start(&mut core, &[par]);
    core.policy.set_time_slice_for_test(par, 1);
    let c = core.spawn(other(0), CpuMask::first_n(1), Some(par));
    assert_eq!(core.policy.time_slice(c), 1);
    assert_eq!(core.policy.time_slice(par), 100, "expired and refilled");
    assert_eq!(core.policy.in_expired(par), Some(true));
    assert!(core.ctx.need_resched(C0));
}

/// wake_up_new_task: child sleep_avg = bonus×CHILD_PENALTY/100 (truncated) ×
/// MAX_SLEEP_AVG/MAX_BONUS: bonus 10 -> 9 -> 900 ms.
#[test]
fn child_penalty_quantises_sleep_avg() {
    let mut core = o1(1000);
    let par = spawn(&mut core, 0);
    core.policy
        .set_sleep_avg_for_test(&core.ctx, par, 1_000_000_000);
    start(&mut core, &[par]);
    let c = core.spawn(other(0), CpuMask::first_n(1), Some(par));
    core.wake_up_new_task(c, Some(C0)).unwrap();
    assert_eq!(core.policy.sleep_avg(c), 900_000_000);
    assert_eq!(
        core.policy.sleep_avg(par),
        1_000_000_000,
        "PARENT_PENALTY 100"
    );
}

/// sys_sched_yield (l.4405-4450): SCHED_OTHER goes to the expired array.
#[test]
fn yield_moves_to_expired() {
    let mut core = o1(1000);
    let t = [spawn(&mut core, 0), spawn(&mut core, 5)];
    start(&mut core, &t);
    assert_eq!(core.ctx.curr(C0), Some(t[0]));
    core.yield_current(C0);
    assert_eq!(core.policy.in_expired(t[0]), Some(true));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(t[1]), "nice 5 in active runs first");
}

fn hog(name: &str, nice: i32) -> schedlab_spec::model::TaskSpec {
    task(
        name,
        attr(Policy::Other, nice),
        -1,
        vec![Event::Run { ns: 50 * MS }],
    )
}

/// Two CPU hogs of nice 0 and 10 on one CPU share it in the ratio of their timeslices
/// (100:50 ms, in whole jiffies): both have
/// sleep_avg 0, are never interactive and alternate through the expired array.
#[test]
fn two_hogs_share_in_ratio_of_timeslices() {
    for hz in [100, 250, 1000] {
        let mut s = spec(1, vec![hog("n0", 0), hog("n10", 10)], Resources::default());
        s.duration_ns = Some(30_000 * MS);
        s.machine.hz = hz;
        let out = run(&s, "linux-o1", true);
        let a = task_json(&out, "n0")["cpu_ns"].as_u64().unwrap() as f64;
        let b = task_json(&out, "n10")["cpu_ns"].as_u64().unwrap() as f64;
        let r = a / b;
        // In jiffies: HZ 250 gives 25 vs 12 (truncated), so 2.083, not 2.
        let want = kernel_timeslice(hz as u64, 0) as f64 / kernel_timeslice(hz as u64, 10) as f64;
        assert!(
            (r / want - 1.0).abs() < 0.01,
            "HZ {hz}: ratio {r}, want {want}"
        );
    }
}

/// An interactive sleeper beside a hog gets the bonus and its wake-ups preempt the hog.
#[test]
fn sleeper_gets_bonus_and_preempts_hog_end_to_end() {
    let sleeper = task(
        "sleeper",
        attr(Policy::Other, 0),
        200,
        vec![Event::Run { ns: MS }, Event::Sleep { ns: 20 * MS }],
    );
    let s = spec(1, vec![hog("hog", 0), sleeper], Resources::default());
    let mut s = s;
    s.duration_ns = Some(10_000 * MS);
    let out = run(&s, "linux-o1", true);
    let sl = task_json(&out, "sleeper");
    assert_eq!(sl["cpu_ns"].as_u64().unwrap(), 200 * MS, "{sl}");
    // Without the bonus each wake-up would wait for the hog's slice (tens of ms); with it
    // (prio < 125 after a few sleeps) TASK_PREEMPTS_CURR holds and it runs at once.
    assert!(sl["wait_ns"].as_u64().unwrap() < 1_000 * MS, "{sl}");
    let hog = task_json(&out, "hog");
    assert!(hog["switches_involuntary"].as_u64().unwrap() > 150, "{hog}");
}

fn hackbench(opts: &[(&str, &str)]) -> Spec {
    let opts: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = schedlab_spec::gen::generate("hackbench", &opts).expect("generate hackbench");
    schedlab_spec::parse_value(&v).expect("generated hackbench parses")
}

/// hackbench from the generator completes on 1, 2 and 4 CPUs with the checker on.
#[test]
fn hackbench_completes_with_checker() {
    for cpus in [1u32, 2, 4] {
        let mut s = hackbench(&[("groups", "2"), ("loops", "20")]);
        s.machine.cpus = cpus;
        let out = run(&s, "linux-o1", true);
        for t in out.json()["tasks"].as_array().unwrap() {
            assert!(t["cpu_ns"].as_u64().unwrap() > 0, "{cpus} CPUs: {t}");
        }
    }
}

/// SMP: four hogs on two CPUs end up two per CPU (placement + balancing), each getting
/// about half a CPU; with affinity pinned to CPU 0 nothing migrates.
#[test]
fn smp_balancing_respects_affinity() {
    let mut s = spec(
        2,
        (0..4).map(|i| hog(&format!("h{i}"), 0)).collect(),
        Resources::default(),
    );
    s.duration_ns = Some(5_000 * MS);
    let out = run(&s, "linux-o1", true);
    for i in 0..4 {
        let c = task_json(&out, &format!("h{i}"))["cpu_ns"]
            .as_u64()
            .unwrap() as f64;
        let share = c / (5_000 * MS) as f64;
        assert!((share - 0.5).abs() < 0.05, "h{i}: share {share}");
    }
    let mut pinned = s.clone();
    for t in &mut pinned.tasks {
        t.cpus = Some(vec![0]);
    }
    let out = run(&pinned, "linux-o1", true);
    for i in 0..4 {
        let t = task_json(&out, &format!("h{i}"));
        assert_eq!(t["migrations"].as_u64().unwrap_or(0), 0, "{t}");
    }
}

/// Tunables are listed and settable; unknown ones are refused.
#[test]
fn params_listed_and_settable() {
    let mut p = LinuxO1::new(1);
    let names: Vec<_> = p.info().params.iter().map(|x| x.name).collect();
    for n in [
        "min_timeslice",
        "def_timeslice",
        "child_penalty",
        "parent_penalty",
        "starvation_limit",
        "prio_bonus_ratio",
        "interactive_delta",
        "max_sleep_avg",
        "exit_weight",
    ] {
        assert!(names.contains(&n), "{n}");
        assert!(p.set_param(n, "50").is_ok(), "{n}");
    }
    assert!(p.set_param("nope", "1").is_err());
    let mut p = LinuxO1::new(1);
    p.set_param("def_timeslice", "200").unwrap();
    assert_eq!(p.task_timeslice(1000, 120), 200);
}

const POLICIES: &[Policy] = &[Policy::Other, Policy::Batch, Policy::Fifo, Policy::Rr];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random operations through the scheduler core keep the invariants every policy must
    /// keep (`Driver::check`): each runnable task queued once, on its CPU, within its
    /// affinity; no CPU idle while a task waits on it.
    #[test]
    fn random_operations_keep_the_invariants(
        cpus in 1usize..4,
        hz in prop_oneof![Just(100u32), Just(250), Just(1000)],
        specs in tasks(attrs_among(POLICIES)),
        ops in proptest::collection::vec(ops(20_000_000, attrs_among(POLICIES)), 1..200),
    ) {
        let mut d = Driver::new(LinuxO1::new(cpus), cpus, hz, &specs);
        d.apply_checked(ops);
    }
}

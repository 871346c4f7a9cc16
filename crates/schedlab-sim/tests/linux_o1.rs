//! `linux-o1` pinned to vanilla Linux 2.6.18 kernel/sched.c: timeslice formula (l.164-186), effective_prio (l.713-830),
//! scheduler_tick's expiry rules and EXPIRED_STARVING (l.2897-3080), sched_fork /
//! sched_exit (l.1536-1720), sys_sched_yield (l.4405-4450), and end-to-end runs with the
//! invariant checker.
mod common;
use common::*;

use schedlab_sim::cpu::linux_o1::LinuxO1;
use schedlab_sim::sched::{DequeueKind, EnqueueKind, Scheduler};
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};
use schedlab_sim::Ctx;
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

/// One CPU at `hz` with `n` SCHED_OTHER tasks of the given nice values, each enqueued as
/// a start-up task (no parent).
fn setup(hz: u32, nices: &[i32]) -> (Ctx, LinuxO1, Vec<TaskId>) {
    let mut ctx = Ctx::for_test(1, hz);
    let mut p = LinuxO1::new(1);
    let mut v = Vec::new();
    for &n in nices {
        let t = ctx.add_task_for_test(other(n), CpuMask::first_n(1));
        p.task_new(&mut ctx, t, None);
        p.enqueue(&mut ctx, C0, t, EnqueueKind::New);
        v.push(t);
    }
    (ctx, p, v)
}

/// effective_prio = static_prio − (CURRENT_BONUS − MAX_BONUS/2), CURRENT_BONUS =
/// jiffies(sleep_avg) × 10 / 1000 (l.131, 713-830).
#[test]
fn effective_prio_bonus_from_sleep_avg() {
    let (ctx, mut p, t) = setup(1000, &[0, -20, 19]);
    for (ms, bonus) in [
        (0u64, 0i32),
        (99, 0),
        (100, 1),
        (500, 5),
        (799, 7),
        (1000, 10),
    ] {
        for (i, nice) in [(0usize, 0), (1, -20), (2, 19)] {
            p.set_sleep_avg_for_test(&ctx, t[i], ms * 1_000_000);
            let want = (120 + nice - (bonus - 5)).clamp(100, 139);
            assert_eq!(p.prio(t[i]), want, "nice {nice} sleep_avg {ms} ms");
            assert_eq!(p.dynamic_prio(t[i]), Some(("prio", want as i64)));
        }
    }
}

/// scheduler_tick (within l.2988-3080): an interactive task whose slice runs out is re-queued
/// on the active array; a non-interactive one goes to the expired array.
#[test]
fn interactive_task_requeued_on_active_at_expiry() {
    let (mut ctx, mut p, t) = setup(1000, &[0, 0]);
    let (a, b) = (t[0], t[1]);
    p.set_sleep_avg_for_test(&ctx, a, 1_000_000_000); // bonus 10 -> prio 115, interactive
    ctx.set_now_for_test(5_000_000);
    assert_eq!(p.pick_next(&mut ctx, C0), Some(a));
    ctx.set_curr_for_test(C0, Some(a));
    p.set_time_slice_for_test(a, 1);
    p.tick(&mut ctx, C0, a);
    assert_eq!(p.in_expired(a), Some(false), "interactive: stays active");
    assert_eq!(p.time_slice(a), 100, "refilled with task_timeslice");
    assert!(ctx.need_resched(C0));
    // b: sleep_avg 0, not interactive -> expired.
    p.put_prev(&mut ctx, C0, a);
    ctx.set_curr_for_test(C0, Some(b));
    p.set_time_slice_for_test(b, 1);
    p.tick(&mut ctx, C0, b);
    assert_eq!(p.in_expired(b), Some(true));
}

/// EXPIRED_STARVING (l.2897-2905), first clause: a better static_prio waits in the
/// expired array -> an interactive task expires to the expired array too.
#[test]
fn starvation_by_better_expired_static_prio() {
    let (mut ctx, mut p, t) = setup(1000, &[-5, 0]);
    let (hi, a) = (t[0], t[1]);
    ctx.set_now_for_test(1_000_000);
    // hi (nice -5, sleep_avg 0 -> prio 120, not interactive) expires first.
    ctx.set_curr_for_test(C0, Some(hi));
    p.set_time_slice_for_test(hi, 1);
    p.tick(&mut ctx, C0, hi);
    assert_eq!(p.in_expired(hi), Some(true));
    // a is interactive (bonus 10) but static_prio 120 > best_expired_prio 115.
    p.set_sleep_avg_for_test(&ctx, a, 1_000_000_000);
    ctx.set_curr_for_test(C0, Some(a));
    p.set_time_slice_for_test(a, 1);
    p.tick(&mut ctx, C0, a);
    assert_eq!(
        p.in_expired(a),
        Some(true),
        "starving: interactive task expires"
    );
}

/// EXPIRED_STARVING second clause: the first expiry is older than STARVATION_LIMIT ×
/// nr_running jiffies.
#[test]
fn starvation_by_age_of_first_expiry() {
    for (wait_jiffies, starving) in [(2000u64, false), (2001, true)] {
        let (mut ctx, mut p, t) = setup(1000, &[0, 0]);
        let (b, a) = (t[0], t[1]);
        ctx.set_now_for_test(10_000_000); // jiffy 10
        ctx.set_curr_for_test(C0, Some(b));
        p.set_time_slice_for_test(b, 1);
        p.tick(&mut ctx, C0, b); // expired_timestamp = 10, best_expired_prio = 120
        assert_eq!(p.in_expired(b), Some(true));
        p.set_sleep_avg_for_test(&ctx, a, 1_000_000_000);
        ctx.set_now_for_test((10 + wait_jiffies) * 1_000_000);
        ctx.set_curr_for_test(C0, Some(a));
        p.set_time_slice_for_test(a, 1);
        p.tick(&mut ctx, C0, a);
        // nr_running = 2 -> limit 2000 jiffies; "> limit" starves.
        assert_eq!(p.in_expired(a), Some(starving), "waited {wait_jiffies}");
    }
}

/// TIMESLICE_GRANULARITY round robin (scheduler_tick, within l.2988-3080): an interactive task at bonus 10 is
/// requeued to the tail of its level every 10 ms of its slice, keeping the slice.
#[test]
fn interactive_round_robin_every_granularity() {
    let (mut ctx, mut p, t) = setup(1000, &[0, 0]);
    let (a, b) = (t[0], t[1]);
    p.set_sleep_avg_for_test(&ctx, a, 1_000_000_000);
    p.set_sleep_avg_for_test(&ctx, b, 1_000_000_000);
    // Re-link both at their new prio (115) by a save/restore.
    for x in [a, b] {
        p.dequeue(&mut ctx, C0, x, DequeueKind::Save);
        p.enqueue(&mut ctx, C0, x, EnqueueKind::Restore);
    }
    assert_eq!(p.active_list(C0, 115), vec![a, b]);
    ctx.set_now_for_test(1_000_000);
    ctx.set_curr_for_test(C0, Some(a));
    for i in 1..=9 {
        p.tick(&mut ctx, C0, a);
        assert_eq!(p.active_list(C0, 115), vec![a, b], "tick {i}");
    }
    p.tick(&mut ctx, C0, a); // 10 jiffies used: (100 - 90) % 10 == 0
    assert_eq!(p.active_list(C0, 115), vec![b, a]);
    assert_eq!(p.time_slice(a), 90);
    assert!(ctx.need_resched(C0));
}

/// sched_fork (within l.1536-1720): the child gets (ts+1)/2, the parent ts/2; sched_exit
/// (same range) gives an unused first slice back, capped at task_timeslice(child).
#[test]
fn fork_splits_and_exit_gives_back_the_slice() {
    for (ts, child, parent) in [(7u32, 4u32, 3u32), (100, 50, 50), (2, 1, 1)] {
        let (mut ctx, mut p, t) = setup(1000, &[0]);
        let par = t[0];
        ctx.set_curr_for_test(C0, Some(par));
        assert_eq!(p.pick_next(&mut ctx, C0), Some(par));
        p.set_time_slice_for_test(par, ts);
        let c = ctx.add_task_for_test(other(0), CpuMask::first_n(1));
        p.task_new(&mut ctx, c, Some(par));
        assert_eq!((p.time_slice(c), p.time_slice(par)), (child, parent));
        assert!(p.first_time_slice(c));
        // wake_up_new_task: same CPU -> linked just ahead of the running parent.
        p.enqueue(&mut ctx, C0, c, EnqueueKind::New);
        assert_eq!(p.prio(c), p.prio(par));
        assert_eq!(p.active_list(C0, p.prio(par) as usize), vec![c, par]);
        assert!(ctx.need_resched(C0));
        // The child exits without finishing its first slice.
        p.dequeue(&mut ctx, C0, c, DequeueKind::Exit);
        p.task_exit(&mut ctx, c);
        assert_eq!(p.time_slice(par), child + parent, "ts {ts}");
    }
    // Cap at task_timeslice(child): a nice 19 child (5 jiffies) of a nice 0 parent.
    let (mut ctx, mut p, t) = setup(1000, &[0]);
    let par = t[0];
    ctx.set_curr_for_test(C0, Some(par));
    p.set_time_slice_for_test(par, 100);
    let c = ctx.add_task_for_test(other(19), CpuMask::first_n(1));
    p.task_new(&mut ctx, c, Some(par));
    p.enqueue(&mut ctx, C0, c, EnqueueKind::New);
    p.dequeue(&mut ctx, C0, c, DequeueKind::Exit);
    p.task_exit(&mut ctx, c);
    assert_eq!(p.time_slice(par), 5);
}

/// A parent whose slice the split empties gets 1 jiffy and scheduler_tick() runs at once,
/// expiring it (sched_fork, within l.1536-1720).
#[test]
fn fork_with_one_jiffy_left_expires_the_parent() {
    let (mut ctx, mut p, t) = setup(1000, &[0]);
    let par = t[0];
    ctx.set_curr_for_test(C0, Some(par));
    p.set_time_slice_for_test(par, 1);
    let c = ctx.add_task_for_test(other(0), CpuMask::first_n(1));
    p.task_new(&mut ctx, c, Some(par));
    assert_eq!(p.time_slice(c), 1);
    assert_eq!(p.time_slice(par), 100, "expired and refilled");
    assert_eq!(p.in_expired(par), Some(true));
}

/// wake_up_new_task: child sleep_avg = bonus×CHILD_PENALTY/100 (truncated) ×
/// MAX_SLEEP_AVG/MAX_BONUS: bonus 10 -> 9 -> 900 ms.
#[test]
fn child_penalty_quantises_sleep_avg() {
    let (mut ctx, mut p, t) = setup(1000, &[0]);
    let par = t[0];
    ctx.set_curr_for_test(C0, Some(par));
    p.set_sleep_avg_for_test(&ctx, par, 1_000_000_000);
    let c = ctx.add_task_for_test(other(0), CpuMask::first_n(1));
    p.task_new(&mut ctx, c, Some(par));
    p.enqueue(&mut ctx, C0, c, EnqueueKind::New);
    assert_eq!(p.sleep_avg(c), 900_000_000);
    assert_eq!(p.sleep_avg(par), 1_000_000_000, "PARENT_PENALTY 100");
}

/// sys_sched_yield (l.4405-4450): SCHED_OTHER goes to the expired array.
#[test]
fn yield_moves_to_expired() {
    let (mut ctx, mut p, t) = setup(1000, &[0, 5]);
    ctx.set_curr_for_test(C0, Some(t[0]));
    assert_eq!(p.pick_next(&mut ctx, C0), Some(t[0]));
    p.yield_task(&mut ctx, C0, t[0]);
    assert_eq!(p.in_expired(t[0]), Some(true));
    p.put_prev(&mut ctx, C0, t[0]);
    assert_eq!(
        p.pick_next(&mut ctx, C0),
        Some(t[1]),
        "nice 5 in active runs first"
    );
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

//! `nicksched` pinned to Nick Piggin's scheduler policy v8 (LKML, 28 Aug 2003): the timeslice as a function of the dynamic
//! priority and the best priority queued in the active *and expired* arrays at HZ
//! 100/250/1000, the sleep history and priority of a sleeper vs a hog, slice expiry always
//! to the expired array, fork/exit slice and history rules, yield, preemption — driven
//! through the scheduler core (`SchedCore`, the engine's protocol) — and end-to-end runs with the invariant checker (hackbench from the generator included).
mod common;

use proptest::prelude::*;
use schedlab_sim::cpu::nicksched::{nick_prio, History, Nicksched};
use schedlab_sim::protocol::testing::strategies::{attrs_among, ops, tasks};
use schedlab_sim::protocol::testing::Driver;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

const C0: CpuId = CpuId(0);

fn attrs(policy: Policy, nice: i32, rt_priority: i32) -> SchedAttrs {
    SchedAttrs {
        policy,
        rt_priority,
        nice,
        dl: None,
        slice_ns: None,
    }
}

fn other(nice: i32) -> SchedAttrs {
    attrs(Policy::Other, nice, 0)
}

/// The v8 formula written out independently (jiffies): MIN_TIMESLICE = max(HZ/1000, 1),
/// idx = min(best queued user prio, prio), base = MIN*41/(prio-idx+2),
/// slice = max(base*(idx-100+8)/8, 1).
fn v8_timeslice(hz: u64, prio: i64, best: i64) -> u64 {
    let min = (hz / 1000).max(1) as i64;
    let idx = best.min(prio);
    let base = min * 41 / (prio - idx + 2);
    (base * (idx - 100 + 8) / 8).max(1) as u64
}

/// A history of 1000 jiffies of which `sleep_avg` ‰ asleep.
fn history(sleep_avg: u64) -> History {
    History {
        total_time: 1_000_000,
        sleep_time: sleep_avg * 1000,
        sleep_avg,
    }
}

/// nicksched on one CPU at `hz`, driven by the scheduler core (the engine's protocol).
fn machine(hz: u32) -> SchedCore<Nicksched> {
    SchedCore::bare(Nicksched::new(1), 1, hz)
}

/// A start-up task (no parent) of nice `nice`, created with the sleep history `h` (set
/// before it is woken), not yet woken.
fn spawn(core: &mut SchedCore<Nicksched>, nice: i32, h: History) -> TaskId {
    let t = core.spawn(other(nice), CpuMask::first_n(1), None);
    core.policy.set_history_for_test(t, h);
    t
}

/// Wake created tasks in order (`wake_up_new_task`) and let the CPU schedule.
fn start(core: &mut SchedCore<Nicksched>, tasks: &[TaskId]) {
    for &t in tasks {
        core.wake_up_new_task(t, None).unwrap();
    }
    core.process_resched();
}

/// One CPU at `hz` running tasks of the given nice values and histories (sleep_avg ‰),
/// started in order.
fn setup(hz: u32, tasks: &[(i32, u64)]) -> (SchedCore<Nicksched>, Vec<TaskId>) {
    let mut core = machine(hz);
    let v: Vec<TaskId> = tasks
        .iter()
        .map(|&(nice, sa)| spawn(&mut core, nice, history(sa)))
        .collect();
    start(&mut core, &v);
    (core, v)
}

/// One jiffy passes with the current task running: its tick, and a schedule() if the tick
/// asks for one.
fn tick(core: &mut SchedCore<Nicksched>) {
    let to = core.ctx.now() + core.ctx.tick_ns();
    core.run_until(to);
}

/// The current task blocks and the CPU switches away.
fn block(core: &mut SchedCore<Nicksched>) -> TaskId {
    let t = core.block(C0, PrevState::Sleeping);
    core.process_resched();
    t
}

#[test]
fn timeslice_tracks_dynamic_prio_and_best_prio_at_hz_100_250_1000() {
    // Spot values at HZ 1000 (MIN_TIMESLICE = 1 ms): alone at prio 130 (nice 0, no
    // sleep) 41/2 = 20 → 20·38/8 = 95; alone at 110 → 20·18/8 = 45; at 120 with the best
    // at 110: 41/12 = 3 → 3·18/8 = 6.
    assert_eq!(v8_timeslice(1000, 130, 130), 95);
    assert_eq!(v8_timeslice(1000, 110, 110), 45);
    assert_eq!(v8_timeslice(1000, 120, 110), 6);
    for hz in [100u32, 250, 1000] {
        let k = Nicksched::new(1).consts(hz);
        assert_eq!(k.min_timeslice, (hz as u64 / 1000).max(1), "HZ {hz}");
        assert_eq!(k.max_timeslice, 40 * k.min_timeslice);
        assert_eq!(k.max_sleep, hz as u64);
        for prio in 100..140 {
            for best in 100..140 {
                assert_eq!(
                    k.timeslice(prio, Some(best)),
                    v8_timeslice(hz as u64, prio as i64, best as i64),
                    "HZ {hz} prio {prio} best {best}"
                );
            }
        }
        // Through the policy: the best prio is found in the expired array too.
        // a: nice 0, sleep_avg 0 → prio 130; b: nice 0, sleep_avg 1000 → prio 110.
        let (mut core, t) = setup(hz, &[(0, 0), (0, 1000)]);
        let (a, b) = (t[0], t[1]);
        let s = |core: &SchedCore<Nicksched>, x| core.policy.task_timeslice(&core.ctx, x);
        assert_eq!((core.policy.prio(a), core.policy.prio(b)), (130, 110));
        assert_eq!(core.ctx.curr(C0), Some(b));
        assert_eq!(s(&core, a), v8_timeslice(hz as u64, 130, 110));
        assert_eq!(s(&core, b), v8_timeslice(hz as u64, 110, 110));
        // b yields: now in the expired array, it still bounds a's slice.
        core.yield_current(C0);
        assert_eq!(core.policy.in_expired(b), Some(true));
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        assert_eq!(s(&core, a), v8_timeslice(hz as u64, 130, 110));
        // a yields too: the arrays switch and b runs; once b blocks, a is alone and gets
        // the big slice.
        core.yield_current(C0);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(b));
        block(&mut core);
        assert_eq!(core.ctx.curr(C0), Some(a));
        assert_eq!(s(&core, a), v8_timeslice(hz as u64, 130, 130));
        let s = &core.policy;
        // Trait hook: alone with an empty history; SCHED_RR gets MAX_TIMESLICE.
        let tick = 1_000_000_000 / hz as u64;
        assert_eq!(
            s.timeslice_ns(&other(0), hz),
            Some(v8_timeslice(hz as u64, 130, 130) * tick)
        );
        assert_eq!(
            s.timeslice_ns(&other(-20), hz),
            Some(v8_timeslice(hz as u64, 120, 120) * tick)
        );
        assert_eq!(
            s.timeslice_ns(&attrs(Policy::Rr, 0, 10), hz),
            Some(40 * k.min_timeslice * tick)
        );
        assert_eq!(s.timeslice_ns(&attrs(Policy::Fifo, 0, 10), hz), None);
        assert_eq!(s.timeslice_ns(&attrs(Policy::Batch, 0, 0), hz), None);
    }
}

#[test]
fn prio_from_nice_and_sleep_avg() {
    // prio = 100 + (nice+20)/2 + 20 − (40·sleep_avg/1000)/2.
    for nice in -20..=19 {
        for sa in [0u64, 24, 25, 50, 499, 500, 525, 975, 999, 1000] {
            let want = 100 + (nice + 20) / 2 + 20 - ((40 * sa / 1000) / 2) as i32;
            assert_eq!(
                nick_prio(nice, sa),
                want.clamp(100, 139),
                "nice {nice} sa {sa}"
            );
        }
    }
    assert_eq!(nick_prio(0, 0), 130);
    assert_eq!(nick_prio(0, 1000), 110);
    assert_eq!(nick_prio(-20, 1000), 100);
    assert_eq!(nick_prio(19, 0), 139);
}

#[test]
fn history_decays_and_resets() {
    let ms = 1000; // MAX_SLEEP at HZ 1000
    let mut h = History::default();
    h.add(100, false, ms);
    assert_eq!((h.total_time, h.sleep_time, h.sleep_avg), (100_000, 0, 0));
    // t = 500: history × (1000−500)/1000, rounded, then += 1000·500.
    h.add(500, true, ms);
    assert_eq!(h.total_time, 50_000 + 500_000);
    assert_eq!(h.sleep_time, 500_000);
    assert_eq!(h.sleep_avg, 1000 * 500_000 / 550_000);
    // t ≥ MAX_SLEEP: capped and the history restarts.
    h.add(5000, false, ms);
    assert_eq!((h.total_time, h.sleep_time, h.sleep_avg), (1_000_000, 0, 0));
    // t = 0 changes nothing.
    let before = h;
    h.add(0, true, ms);
    assert_eq!(h, before);
}

/// A task that runs 1 jiffy per 10 ends near sleep_avg 900 (prio 112); a hog stays at 0
/// (prio 130), both driven through the scheduler core on one CPU.
#[test]
fn sleeper_rises_and_hog_stays_at_the_bottom() {
    // Pure formula first.
    let mut h = History::default();
    for _ in 0..200 {
        h.add(1, false, 1000);
        h.add(9, true, 1000);
    }
    assert!((880..=910).contains(&h.sleep_avg), "{}", h.sleep_avg);
    assert_eq!(
        nick_prio(0, h.sleep_avg),
        130 - (40 * h.sleep_avg / 1000 / 2) as i32
    );

    let mut core = machine(1000);
    let (hog, sl) = (
        spawn(&mut core, 0, History::default()),
        spawn(&mut core, 0, History::default()),
    );
    start(&mut core, &[hog, sl]);
    assert_eq!(core.ctx.curr(C0), Some(hog));
    let tick_ns = core.ctx.tick_ns();
    let mut wake_at: Option<u64> = None;
    let mut sleeper_prios = Vec::new();
    for _ in 0..5000 {
        tick(&mut core);
        if core.ctx.curr(C0) == Some(sl) {
            // The sleeper ran a jiffy: it blocks for 9.
            block(&mut core);
            wake_at = Some(core.ctx.now() + 9 * tick_ns);
        }
        if wake_at.is_some_and(|w| core.ctx.now() >= w) {
            wake_at = None;
            let curr = core.ctx.curr(C0).unwrap();
            core.try_to_wake_up(sl, None, false).unwrap();
            sleeper_prios.push(core.policy.prio(sl));
            if core.policy.prio(sl) < core.policy.prio(curr) {
                assert!(core.ctx.need_resched(C0), "a better prio preempts");
            }
            core.process_resched();
        }
    }
    let s = &core.policy;
    assert!(sleeper_prios.len() > 300, "{}", sleeper_prios.len());
    assert!(s.history(sl).sleep_avg >= 800, "{:?}", s.history(sl));
    assert!(s.prio(sl) <= 114, "sleeper prio {}", s.prio(sl));
    assert_eq!(s.history(hog).sleep_avg, 0);
    assert_eq!(s.prio(hog), 130);
    assert!(sleeper_prios.iter().all(|&p| p <= 130));
}

/// At slice end a task always goes to the expired array, even a maximally interactive
/// one, with its used slice reset and its prio recomputed.
#[test]
fn expiry_always_goes_to_the_expired_array() {
    let (mut core, t) = setup(1000, &[(0, 1000), (0, 0)]);
    let (a, b) = (t[0], t[1]);
    assert_eq!(core.ctx.curr(C0), Some(a));
    let ts = core.policy.task_timeslice(&core.ctx, a);
    assert_eq!(ts, v8_timeslice(1000, 110, 110));
    for i in 1..ts {
        tick(&mut core);
        assert_eq!(core.policy.used_slice(a), i);
        assert_eq!(core.ctx.curr(C0), Some(a));
    }
    tick(&mut core);
    assert_eq!(core.policy.used_slice(a), 0);
    assert_eq!(core.policy.in_expired(a), Some(true));
    assert_eq!(core.ctx.curr(C0), Some(b));
    // The prio is recomputed at expiry from the history as it stands then: the run enters
    // the history only when schedule() switches the task out, right after the tick.
    let pa = core.policy.prio(a);
    assert_eq!(pa, nick_prio(0, 1000));
    let mut ran = history(1000);
    ran.add(ts, false, 1000);
    assert_eq!(core.policy.history(a), ran);
    // b's slice is bounded by a's prio in the expired array.
    assert_eq!(
        core.policy.task_timeslice(&core.ctx, b),
        v8_timeslice(1000, core.policy.prio(b) as i64, pa as i64)
    );
}

/// Wake-up preemption: better prio, or equal prio with a better static priority.
#[test]
fn wakeup_preemption_rule() {
    // nice 0 / sleep_avg 0 → 130; nice -2 → 100 + 9 + 20 = 129; nice 2 → 131;
    // nice 1 → 100 + 10 + 20 = 130 (equal prio, worse nice).
    for (nice, sa, preempts) in [
        (-2, 0, true),
        (2, 0, false),
        (1, 0, false),
        (0, 0, false),
        (0, 50, true),
        (5, 1000, true),
    ] {
        let (mut core, t) = setup(1000, &[(0, 0)]);
        let w = spawn(&mut core, nice, history(sa));
        assert_eq!(core.ctx.curr(C0), Some(t[0]));
        core.wake_up_new_task(w, None).unwrap();
        assert_eq!(
            core.ctx.need_resched(C0),
            preempts,
            "nice {nice} sleep_avg {sa}"
        );
    }
}

/// Equal prio, better static priority preempts (nice 0 waking against a nice 1 current,
/// both at prio 130).
/// A wake-up after the CPU switched arrays starts a fresh slice; one within the same
/// array epoch keeps the used part.
#[test]
fn wakeup_resets_slice_only_after_an_array_switch() {
    for switch in [false, true] {
        let (mut core, t) = setup(1000, &[(0, 0), (0, 0)]);
        let (a, b) = (t[0], t[1]);
        assert_eq!(core.ctx.curr(C0), Some(a));
        for _ in 0..3 {
            tick(&mut core);
        }
        block(&mut core);
        assert_eq!(core.policy.used_slice(a), 3);
        assert_eq!(core.ctx.curr(C0), Some(b));
        if switch {
            // b runs out its slice: to the expired array, the active one is empty, the CPU
            // switches arrays and b runs again.
            let ts = core.policy.task_timeslice(&core.ctx, b);
            for _ in 0..ts {
                tick(&mut core);
            }
            assert_eq!(core.policy.used_slice(b), 0);
            assert_eq!(core.policy.in_expired(b), Some(false));
            assert_eq!(core.ctx.curr(C0), Some(b));
        } else {
            tick(&mut core);
            tick(&mut core);
        }
        core.try_to_wake_up(a, None, false).unwrap();
        assert_eq!(core.policy.used_slice(a), if switch { 0 } else { 3 });
        assert!(core.policy.history(a).sleep_avg > 0);
    }
}

/// sched_fork: the remaining slice is split, history shared out as in the patch.
#[test]
fn fork_splits_slice_and_history() {
    let mut core = machine(1000);
    let p = spawn(
        &mut core,
        0,
        History {
            total_time: 800_000,
            sleep_time: 480_000,
            sleep_avg: 600,
        },
    );
    start(&mut core, &[p]);
    assert_eq!(core.ctx.curr(C0), Some(p));
    core.policy.set_used_slice_for_test(p, 7);
    let ts = core.policy.task_timeslice(&core.ctx, p);
    let c = core.spawn(other(0), CpuMask::first_n(1), Some(p));
    let s = &core.policy;
    let rem = ts - 7;
    assert_eq!(s.used_slice(c), 7 + rem / 2);
    assert_eq!(s.used_slice(p), 7 + rem.div_ceil(2));
    let ch = s.history(c);
    assert_eq!(ch.total_time, 80_000);
    assert_eq!(ch.sleep_time, 48_000 + (800_000 - 480_000) / 20);
    assert_eq!(ch.sleep_avg, 1000 * ch.sleep_time / ch.total_time);
    assert_eq!(s.prio(c), nick_prio(0, ch.sleep_avg));
    let ph = s.history(p);
    assert_eq!(ph.sleep_time, 360_000);
    assert_eq!(ph.sleep_avg, 450);
    // The child is queued in the active array; its better prio (sleep_avg 800 against the
    // parent's 600 when its prio was computed) preempts the parent.
    core.wake_up_new_task(c, Some(C0)).unwrap();
    assert_eq!(core.policy.in_expired(c), Some(false));
    assert!(core.ctx.need_resched(C0));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(c));

    // sched_exit: the child's unused slice goes back to the parent; it slept less than
    // the parent → the parent is charged (Δsleep_avg)/2 jiffies of run time.
    let used_p = core.policy.used_slice(p);
    let cu = core.policy.used_slice(c);
    // The child's slice as task_timeslice computes it at exit (on its CPU, dequeued, the
    // parent queued there).
    let cts = v8_timeslice(1000, core.policy.prio(c) as i64, core.policy.prio(p) as i64);
    core.exit(C0);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(p));
    assert_eq!(
        core.policy.used_slice(p),
        used_p.saturating_sub(cts.saturating_sub(cu))
    );
    let mut want = ph;
    if ch.sleep_avg < ph.sleep_avg {
        want.add((ph.sleep_avg - ch.sleep_avg) / 2, false, 1000);
    }
    assert_eq!(core.policy.history(p), want);
}

/// sys_sched_yield: to the expired array at the same prio, slice untouched; RR tasks to
/// the tail of their active list.
#[test]
fn yield_moves_to_expired_without_changing_prio() {
    let (mut core, t) = setup(1000, &[(0, 500), (0, 0)]);
    let (a, b) = (t[0], t[1]);
    assert_eq!(core.ctx.curr(C0), Some(a));
    tick(&mut core);
    let (pa, ua) = (core.policy.prio(a), core.policy.used_slice(a));
    core.yield_current(C0);
    assert_eq!(core.policy.in_expired(a), Some(true));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(b));
    assert_eq!((core.policy.prio(a), core.policy.used_slice(a)), (pa, ua));
    // b yields too: active array empty → switch, a (better prio) runs.
    core.yield_current(C0);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(a));
    assert_eq!(core.policy.in_expired(a), Some(false));
}

#[test]
fn params_and_rejections() {
    let mut s = Nicksched::new(1);
    let names: Vec<_> = s.info().params.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "min_timeslice",
            "max_timeslice",
            "max_sleep",
            "cache_decay",
            "busy_balance_ms",
            "imbalance_pct"
        ]
    );
    s.set_param("min_timeslice", "4").unwrap();
    let k = s.consts(1000);
    assert_eq!((k.min_timeslice, k.max_timeslice), (4, 160));
    s.set_param("max_timeslice", "100").unwrap();
    s.set_param("max_sleep", "500").unwrap();
    let k = s.consts(250);
    assert_eq!(
        (k.min_timeslice, k.max_timeslice, k.max_sleep),
        (1, 25, 125)
    );
    assert!(s.set_param("max_sleep", "0").is_err());
    assert!(s.set_param("imbalance_pct", "99").is_err());
    assert!(s.set_param("nope", "1").is_err());
    assert!(s.accepts(&attrs(Policy::Batch, 0, 0)).is_err());
    assert!(s.accepts(&attrs(Policy::Idle, 0, 0)).is_err());
    assert!(s.accepts(&attrs(Policy::Rr, 0, 5)).is_ok());
}

const POLICIES: &[Policy] = &[Policy::Other, Policy::Fifo, Policy::Rr];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random operations through the scheduler core keep the invariants every policy must
    /// keep (`Driver::check`).
    #[test]
    fn random_operations_keep_the_invariants(
        cpus in 1usize..4,
        hz in prop_oneof![Just(100u32), Just(250), Just(1000)],
        specs in tasks(attrs_among(POLICIES)),
        ops in proptest::collection::vec(ops(20_000_000, attrs_among(POLICIES)), 1..200),
    ) {
        let mut d = Driver::new(Nicksched::new(cpus), cpus, hz, &specs);
        d.apply_checked(ops);
    }
}

// ------------------------------------------------------------------ end to end

mod e2e {
    use super::common::*;
    use schedlab_sim::{simulate, SimConfig, SimOutput};
    use schedlab_spec::model::*;

    fn run_with(spec: &Spec, params: &[(&str, &str)], hz: Option<u32>) -> SimOutput {
        let cfg = SimConfig {
            scheduler: Some("nicksched".into()),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            hz,
            check: true,
            samples: schedlab_sim::SampleOutput::Memory,
            ..Default::default()
        };
        simulate(spec, &cfg).unwrap_or_else(|e| panic!("nicksched: {e}"))
    }

    fn hog(name: &str, nice: i32) -> TaskSpec {
        task(
            name,
            attr(Policy::Other, nice),
            -1,
            vec![Event::Run { ns: 100 * MS }],
        )
    }

    fn cpu_ns(out: &SimOutput, name: &str) -> u64 {
        task_json(out, name)["cpu_ns"].as_u64().unwrap()
    }

    #[test]
    fn hogs_share_and_nice_matters() {
        let mut s = spec(
            1,
            vec![hog("a", 0), hog("b", 0), hog("n10", 10)],
            Resources::default(),
        );
        s.duration_ns = Some(10_000 * MS);
        for hz in [100, 250, 1000] {
            let out = run_with(&s, &[], Some(hz));
            let (a, b, n) = (cpu_ns(&out, "a"), cpu_ns(&out, "b"), cpu_ns(&out, "n10"));
            let r = a as f64 / b as f64;
            assert!((r - 1.0).abs() < 0.15, "HZ={hz}: a/b = {r}");
            assert!(n < a, "HZ={hz}: nice 10 got {n} >= nice 0 {a}");
        }
    }

    /// An interactive task beside hogs gains priority and preempts them on wake-up.
    #[test]
    fn sleeper_preempts_hogs() {
        let sleeper = task(
            "sleeper",
            attr(Policy::Other, 0),
            200,
            vec![Event::Run { ns: MS / 2 }, Event::Sleep { ns: 10 * MS }],
        );
        let mut s = spec(
            1,
            vec![hog("h1", 0), hog("h2", 0), sleeper],
            Resources::default(),
        );
        s.duration_ns = Some(4_000 * MS);
        let out = run_with(&s, &[], Some(1000));
        let sl = task_json(&out, "sleeper");
        assert!(sl["cpu_ns"].as_u64().unwrap() >= 200 * MS / 2);
        let lat = &sl["wakeup_latency_ns"];
        assert!(lat["count"].as_u64().unwrap() >= 100);
        let p50 = lat["p50"]
            .as_f64()
            .or_else(|| lat["mean"].as_f64())
            .unwrap();
        assert!(p50 <= 2.0 * MS as f64, "median wake-up latency {p50}");
    }

    #[test]
    fn fork_yield_rt_mix_on_four_cpus() {
        let mut child = task(
            "child",
            attr(Policy::Other, 5),
            20,
            vec![
                Event::Run { ns: 3 * MS },
                Event::Yield,
                Event::Sleep { ns: MS },
            ],
        );
        child.instances = 0;
        let parent = task(
            "parent",
            attr(Policy::Other, 0),
            10,
            vec![
                Event::Fork { task: 0 },
                Event::Run { ns: 2 * MS },
                Event::Sleep { ns: 5 * MS },
            ],
        );
        let rr = task(
            "rr",
            attr(Policy::Rr, 20),
            50,
            vec![Event::Run { ns: 2 * MS }, Event::Sleep { ns: 3 * MS }],
        );
        let fifo = task(
            "fifo",
            attr(Policy::Fifo, 50),
            50,
            vec![Event::Run { ns: MS }, Event::Sleep { ns: 7 * MS }],
        );
        let mut s = spec(
            4,
            vec![child, parent, rr, fifo, hog("h", -5), hog("h2", 3)],
            Resources::default(),
        );
        s.duration_ns = Some(2_000 * MS);
        for hz in [100, 250, 1000] {
            let out = run_with(&s, &[], Some(hz));
            assert!(cpu_ns(&out, "parent") >= 20 * MS);
            assert!(cpu_ns(&out, "rr") >= 100 * MS);
        }
    }

    #[test]
    fn attribute_changes_run_clean() {
        let phase = |name: &str, a: SchedAttr, events: Vec<Event>| Phase {
            name: name.into(),
            loop_count: 3,
            events,
            attr: Some(a),
            cpus: None,
            group: None,
        };
        let mut t = task("changer", attr(Policy::Other, 10), 20, vec![]);
        t.phases = vec![
            phase(
                "n10",
                attr(Policy::Other, 10),
                vec![Event::Run { ns: MS }, Event::Sleep { ns: 20 * MS }],
            ),
            phase(
                "rr",
                attr(Policy::Rr, 30),
                vec![Event::Run { ns: 3 * MS }, Event::Sleep { ns: MS }],
            ),
            phase(
                "n-15",
                attr(Policy::Other, -15),
                vec![Event::Run { ns: 5 * MS }, Event::Yield],
            ),
        ];
        let mut s = spec(
            2,
            vec![t, hog("h1", 0), hog("h2", 19)],
            Resources::default(),
        );
        s.duration_ns = Some(3_000 * MS);
        for hz in [100, 1000] {
            let out = run_with(&s, &[], Some(hz));
            assert!(cpu_ns(&out, "changer") > 0);
        }
    }

    #[test]
    fn hackbench_completes() {
        let v = schedlab_spec::gen::generate("hackbench", &[]).expect("generate hackbench");
        let s = schedlab_spec::parse_value(&v).expect("parse hackbench");
        for hz in [100, 1000] {
            let out = run_with(&s, &[], Some(hz));
            assert!(out.json()["tasks"].as_array().unwrap().len() > 1);
        }
        let out = run_with(&s, &[("min_timeslice", "4"), ("max_sleep", "200")], None);
        assert!(out.json()["tasks"].as_array().unwrap().len() > 1);
    }
}

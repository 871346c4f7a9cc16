//! `linux-cfs` (dl > rt > fair class stack): behaviour pinned to kernel/sched/fair.c (v5.4 CFS),
//! kernel/sched/rt.c and core.c, driven through the scheduler core (`SchedCore`: task
//! starts, wake-ups, blocks, ticks and `schedule()` in the kernel's hook order, every task
//! a CPU hog), plus end-to-end runs through `simulate`.
//!
//! Expected numbers were worked out from the kernel's formulas (`__calc_delta` in 32-bit
//! fixed point), not from this implementation.

mod common;

use schedlab_sim::cpu::fair::group::{Ent, RqId};
use schedlab_sim::cpu::linux_cfs::{
    calc_delta, calc_delta_fair, linux_cfs, sysctl_factor, weight_of, LinuxCfs,
    SCHED_PRIO_TO_WEIGHT, SCHED_PRIO_TO_WMULT, WEIGHT_IDLEPRIO, WMULT_IDLEPRIO,
};
use schedlab_sim::cpu::linux_rt::LinuxRt;
use schedlab_sim::cpu::stack::SchedClass;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::PrevState;
use schedlab_sim::types::{fair, rt};
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

const MS: u64 = 1_000_000;
const C0: CpuId = CpuId(0);
const ROOT0: RqId = RqId(0);

fn one() -> CpuMask {
    CpuMask::first_n(1)
}

fn only(cpu: u32) -> CpuMask {
    let mut m = CpuMask::empty();
    m.set(CpuId(cpu));
    m
}

/// A CFS class on `ncpu` CPUs at HZ=1000 behind the scheduler core, with these tunables.
fn cfs(ncpu: usize, params: &[(&str, &str)]) -> SchedCore<LinuxCfs> {
    let mut s = LinuxCfs::new(ncpu);
    for (k, v) in params {
        s.set_param(k, v).unwrap();
    }
    SchedCore::bare(s, ncpu, 1000)
}

/// Create a task and start it (`wake_up_new_task`); it is queued, and runs once its CPU
/// reschedules.
fn start<S: Scheduler>(core: &mut SchedCore<S>, attrs: SchedAttrs, aff: CpuMask) -> TaskId {
    let t = core.spawn(attrs, aff, None);
    core.wake_up_new_task(t, None).unwrap();
    t
}

fn nice(n: i32) -> SchedAttrs {
    fair(Policy::Other, n)
}

/// Let `cpu`'s current task run until `t` and charge it (no tick).
fn run_to<S: Scheduler>(core: &mut SchedCore<S>, cpu: CpuId, t: u64) {
    core.set_now(t);
    core.account(cpu);
}

/// `schedule()` on `cpu` now (`resched_curr` + the switch); returns what runs.
fn resched<S: Scheduler>(core: &mut SchedCore<S>, cpu: CpuId) -> Option<TaskId> {
    core.ctx.resched(cpu);
    core.process_resched();
    core.ctx.curr(cpu)
}

// ------------------------------------------------------------------ weights (§3.1)

#[test]
fn weight_and_wmult_tables_match_core_c_for_all_40_nices() {
    // sched_prio_to_weight as printed in kernel/sched/core.c, nice -20 .. 19.
    let weight: [u32; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100,
        4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172,
        137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    let wmult: [u32; 40] = [
        48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
        704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
        6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
        49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294,
        286331153,
    ];
    assert_eq!(SCHED_PRIO_TO_WEIGHT, weight);
    assert_eq!(SCHED_PRIO_TO_WMULT, wmult);
    for nice in -20..=19 {
        let i = (nice + 20) as usize;
        assert_eq!(
            weight_of(&fair(Policy::Other, nice)),
            (weight[i], wmult[i]),
            "nice {nice}"
        );
        assert_eq!(
            weight_of(&fair(Policy::Batch, nice)),
            (weight[i], wmult[i]),
            "nice {nice}"
        );
        // wmult = 2^32 / weight (rounded), and each nice step is ~1.25x.
        let exact = (1u64 << 32) as f64 / weight[i] as f64;
        assert!((wmult[i] as f64 - exact).abs() <= 1.0, "nice {nice}");
        if nice < 19 {
            let r = weight[i] as f64 / weight[i + 1] as f64;
            assert!((1.15..1.35).contains(&r), "nice {nice} ratio {r}");
        }
    }
    assert_eq!(weight[20], 1024, "NICE_0_LOAD");
    // SCHED_IDLE ignores nice: WEIGHT_IDLEPRIO / WMULT_IDLEPRIO.
    assert_eq!((WEIGHT_IDLEPRIO, WMULT_IDLEPRIO), (3, 1_431_655_765));
    assert_eq!(weight_of(&fair(Policy::Idle, -20)), (3, 1_431_655_765));
}

#[test]
fn calc_delta_fair_rounds_like_the_kernel() {
    // (nice, delta, __calc_delta result). Where the 32-bit fixed point differs from exact
    // division the kernel's value is kept (e.g. nice 5: 377372393.8 → 377372396).
    let cases: &[(i32, u64, u64)] = &[
        (-20, 1, 0),
        (-20, 999, 11),
        (-20, 1_000_000, 11_536),
        (-20, 123_456_789, 1_424_271),
        (-5, 999, 327),
        (-5, 4_000_000, 1_312_399),
        (1, 1, 1),
        (1, 999, 1_247),
        (1, 1_000_000, 1_248_780),
        (5, 1, 3),
        (5, 999, 3_053),
        (5, 1_000_000, 3_056_716),
        (5, 123_456_789, 377_372_396),
        (19, 1, 68),
        (19, 1_000_000, 68_266_666),
        (19, 123_456_789, 8_427_983_460),
    ];
    for &(nice, delta, want) in cases {
        let (w, inv) = weight_of(&fair(Policy::Other, nice));
        assert_eq!(
            calc_delta_fair(delta, w, inv),
            want,
            "nice {nice} delta {delta}"
        );
    }
    // nice 0 is the identity; SCHED_IDLE: 1 ms of CPU is 341.33 ms of vruntime.
    assert_eq!(calc_delta_fair(123_456_789, 1024, 4_194_304), 123_456_789);
    assert_eq!(
        calc_delta_fair(MS, WEIGHT_IDLEPRIO, WMULT_IDLEPRIO),
        341_333_333
    );
    // A run-queue weight has no cached inverse: WMULT_CONST / load is used.
    assert_eq!(calc_delta(6_000_000, 1024, 1024 + 335, 0), 4_520_971);
    assert_eq!(calc_delta(6_000_000, 335, 1024 + 335, 0), 1_479_028);
}

// ------------------------------------------------------------------ period and slice

/// A CFS class on `ncpu` CPUs with `n` nice-0 tasks started (queued, none running) on
/// CPU 0.
fn queued(ncpu: usize, n: usize) -> (SchedCore<LinuxCfs>, Vec<TaskId>) {
    let mut core = cfs(ncpu, &[]);
    let ts = (0..n).map(|_| start(&mut core, nice(0), only(0))).collect();
    (core, ts)
}

#[test]
fn sched_period_and_slice_for_1_to_20_tasks() {
    // 1 CPU (factor 1): latency 6 ms, min_granularity 0.75 ms, nr_latency 8.
    let slices: [u64; 20] = [
        5_999_998, 2_999_998, 1_999_999, 1_499_998, 1_199_998, 999_999, 857_142, 749_998, 749_998,
        749_999, 749_999, 749_999, 749_998, 749_999, 749_999, 749_997, 749_997, 749_997, 749_997,
        749_999,
    ];
    for n in 1..=20usize {
        let (core, ts) = queued(1, n);
        let s = &core.policy;
        let period = if n <= 8 { 6 * MS } else { n as u64 * 750_000 };
        assert_eq!(s.sched_period(n as u64), period, "period n={n}");
        assert_eq!(s.hierarchy().rq(ROOT0).nr_running as usize, n);
        for &t in &ts {
            assert_eq!(s.task_slice(t), slices[n - 1], "slice n={n}");
        }
    }
    // 4 CPUs: factor 1 + ilog2(4) = 3 → latency 18 ms, min_granularity 2.25 ms.
    for (n, want) in [
        (1, 17_999_995u64),
        (2, 8_999_995),
        (3, 5_999_998),
        (8, 2_249_995),
        (9, 2_249_996),
    ] {
        let (core, ts) = queued(4, n);
        assert_eq!(core.policy.task_slice(ts[0]), want, "4 CPUs, n={n}");
    }
    // Mixed weights: nice 0 and nice 5 share a 6 ms period 1024 : 335.
    let mut core = cfs(1, &[]);
    let a = start(&mut core, nice(0), one());
    let b = start(&mut core, nice(5), one());
    assert_eq!(core.policy.task_slice(a), 4_520_971);
    assert_eq!(core.policy.task_slice(b), 1_479_028);
}

#[test]
fn tunables_scale_with_log2_of_cpus_and_can_be_set() {
    for (ncpu, f) in [(1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (64, 4)] {
        assert_eq!(sysctl_factor(ncpu, 1), f, "{ncpu} CPUs");
        let s = LinuxCfs::new(ncpu);
        let t = s.tunables();
        assert_eq!(
            (t.latency, t.min_granularity, t.wakeup_granularity),
            (6 * MS * f, 750_000 * f, MS * f)
        );
        assert_eq!(t.nr_latency, 8);
    }
    assert_eq!(sysctl_factor(8, 0), 1);
    assert_eq!(sysctl_factor(16, 2), 8);
    let mut s = LinuxCfs::new(8);
    s.set_param("sched_latency_ns", "10000000").unwrap();
    s.set_param("sched_min_granularity_ns", "3000000").unwrap();
    assert_eq!(
        s.tunables().latency,
        10 * MS,
        "an explicit value is used as is"
    );
    assert_eq!(s.tunables().nr_latency, 4, "ceil(10 / 3)");
    assert_eq!(
        s.tunables().wakeup_granularity,
        4 * MS,
        "still the scaled default"
    );
    s.set_param("sched_tunable_scaling", "0").unwrap();
    assert_eq!(s.tunables().wakeup_granularity, MS);
    s.set_param("gentle_fair_sleepers", "false").unwrap();
    assert!(!s.tunables().gentle_fair_sleepers);
    assert!(s.set_param("start_debit", "maybe").is_err());
    assert!(s.set_param("sched_latency_ns", "-1").is_err());
    assert!(s.set_param("no_such_knob", "1").is_err());
}

// ------------------------------------------------------------------ place_entity

#[test]
fn place_entity_for_new_forked_and_waking_tasks() {
    let mut core = cfs(1, &[]);
    let a = start(&mut core, nice(0), one());
    // START_DEBIT on an empty queue: min_vruntime (0) + vslice(n = 1) = 5999998.
    assert_eq!(core.policy.vruntime(a), 5_999_998);
    assert_eq!(resched(&mut core, C0), Some(a));
    core.run_until(10 * MS);
    assert_eq!(core.policy.vruntime(a), 15_999_998);
    assert_eq!(
        core.policy.min_vruntime(ROOT0),
        15_999_998,
        "min_vruntime follows the running curr"
    );

    // Fork (task_fork_fair): parent's vruntime, then min_vruntime + vslice with the parent
    // queued (period 6 ms over 2 → 2999998), stored relative to min_vruntime.
    let b = core.spawn(nice(0), one(), Some(a));
    assert_eq!(core.policy.vruntime(b), 2_999_998, "relative after fork");
    core.wake_up_new_task(b, Some(C0)).unwrap();
    assert_eq!(core.policy.vruntime(b), 15_999_998 + 2_999_998);

    // A long sleeper wakes at min_vruntime - latency/2 (GENTLE_FAIR_SLEEPERS): c runs
    // once and blocks, then a runs on alone for 90 ms.
    let mut core = cfs(1, &[("start_debit", "0")]);
    let c = start(&mut core, nice(0), one());
    let a = start(&mut core, nice(0), one());
    assert_eq!(resched(&mut core, C0), Some(c));
    assert_eq!(block(&mut core), Some(a));
    core.run_until(90 * MS);
    let min = core.policy.min_vruntime(ROOT0);
    assert!(core.policy.vruntime(c) < min - 3 * MS as i64);
    core.try_to_wake_up(c, None, false).unwrap();
    assert_eq!(core.policy.vruntime(c), min - 3 * MS as i64);

    // A short sleeper keeps its vruntime: placement never moves an entity backwards. c
    // runs and blocks at once; min_vruntime has not moved, so its credit would put it
    // no further back than it is.
    let before = core.policy.vruntime(c);
    assert_eq!(resched(&mut core, C0), Some(c));
    assert_eq!(block(&mut core), Some(a));
    core.try_to_wake_up(c, None, false).unwrap();
    assert_eq!(core.policy.vruntime(c), before);

    // Without GENTLE_FAIR_SLEEPERS the credit is a full latency.
    let mut core = cfs(1, &[("gentle_fair_sleepers", "0"), ("start_debit", "0")]);
    let c = start(&mut core, nice(0), one());
    let a = start(&mut core, nice(0), one());
    assert_eq!(core.policy.vruntime(a), 0, "no START_DEBIT");
    assert_eq!(resched(&mut core, C0), Some(c));
    assert_eq!(block(&mut core), Some(a));
    core.run_until(50 * MS);
    core.try_to_wake_up(c, None, false).unwrap();
    assert_eq!(core.policy.vruntime(c), 50 * MS as i64 - 6 * MS as i64);
}

#[test]
fn timeline_is_vruntime_ordered_fifo_on_ties_and_excludes_curr() {
    let mut core = cfs(1, &[("start_debit", "0")]);
    let ts: Vec<TaskId> = (0..5).map(|_| start(&mut core, nice(0), one())).collect();
    let order = |core: &SchedCore<LinuxCfs>| -> Vec<Ent> {
        core.policy
            .timeline(ROOT0)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    };
    let ents: Vec<Ent> = ts.iter().map(|&t| Ent::task(t)).collect();
    // All at vruntime 0: insertion order.
    assert_eq!(order(&core), ents);
    assert_eq!(resched(&mut core, C0), Some(ts[0]));
    assert!(!order(&core).contains(&ents[0]), "curr is not in the tree");
    // ts[0] runs 1 ms (within its 1.2 ms slice), then the CPU reschedules: it goes back
    // behind the others, and ts[1] runs.
    run_to(&mut core, C0, MS);
    assert_eq!(resched(&mut core, C0), Some(ts[1]));
    assert_eq!(order(&core), vec![ents[2], ents[3], ents[4], ents[0]]);
    assert_eq!(
        core.policy.dynamic_prio(ts[0]),
        Some(("vruntime", MS as i64))
    );
}

#[test]
fn load_balancing_pulls_to_an_idle_cpu_and_respects_affinity() {
    let mut core = cfs(2, &[("start_debit", "0")]); // all start at vruntime 0: FIFO order
    let both = CpuMask::first_n(2);
    // Three tasks start on CPU 0; then b may use both CPUs, a and p stay pinned there.
    let a = start(&mut core, nice(0), only(0));
    let p = start(&mut core, nice(0), only(0));
    let b = start(&mut core, nice(0), only(0));
    core.setattr(b, None, Some(both)).unwrap();
    assert_eq!(resched(&mut core, C0), Some(a));
    core.run_until(10 * MS);
    // CPU 1 goes newly idle: it pulls exactly one task that may run there (b, not p).
    let sw = core.schedule(CpuId(1));
    assert_eq!(sw.next, Some(b));
    assert_eq!(core.ctx.task(b).cpu, CpuId(1));
    assert_eq!(core.ctx.task(p).cpu, C0);
    let h = core.policy.hierarchy();
    assert_eq!(h.rq(RqId(1)).h_nr_running, 1);
    assert_eq!(h.rq(ROOT0).load, 2048);
}

#[test]
fn select_cpu_prefers_idle_cpus() {
    let all = CpuMask::first_n(4);
    // w last ran on CPU 1, which is idle: it wakes there.
    let mut core = cfs(4, &[]);
    let hog = start(&mut core, nice(0), only(2));
    let w = start(&mut core, nice(0), only(1));
    core.process_resched();
    assert_eq!(core.ctx.curr(CpuId(2)), Some(hog));
    core.block(CpuId(1), PrevState::Sleeping);
    core.process_resched();
    core.setattr(w, None, Some(all)).unwrap();
    assert_eq!(
        core.try_to_wake_up(w, None, false),
        Ok(CpuId(1)),
        "idle prev"
    );
    // w last ran on CPU 2, where the hog runs now: the next idle CPU after it.
    let mut core = cfs(4, &[]);
    let w = start(&mut core, nice(0), only(2));
    core.process_resched();
    core.block(CpuId(2), PrevState::Sleeping);
    let hog = start(&mut core, nice(0), only(2));
    core.process_resched();
    assert_eq!(core.ctx.curr(CpuId(2)), Some(hog));
    core.setattr(w, None, Some(all)).unwrap();
    assert_eq!(
        core.try_to_wake_up(w, None, false),
        Ok(CpuId(3)),
        "next idle after prev"
    );
}

// ------------------------------------------------------------------ RT class (§4.1)

/// The RT class alone behind the scheduler core, with these tasks created (not started).
fn rt_class(hz: u32, tasks: &[SchedAttrs]) -> (SchedCore<LinuxRt>, Vec<TaskId>) {
    let mut core = SchedCore::bare(LinuxRt::new(1), 1, hz);
    let ts = tasks.iter().map(|&a| core.spawn(a, one(), None)).collect();
    (core, ts)
}

/// Start (first) or wake a created task.
fn wake<S: Scheduler>(core: &mut SchedCore<S>, t: TaskId, first: bool) {
    if first {
        core.wake_up_new_task(t, None).unwrap();
    } else {
        core.try_to_wake_up(t, None, false).unwrap();
    }
}

/// The current task of CPU 0 blocks; the CPU reschedules.
fn block<S: Scheduler>(core: &mut SchedCore<S>) -> Option<TaskId> {
    core.block(C0, PrevState::Sleeping);
    core.process_resched();
    core.ctx.curr(C0)
}

#[test]
fn fifo_head_on_preempt_tail_on_wakeup_and_yield() {
    let (mut core, ts) = rt_class(
        1000,
        &[
            rt(Policy::Fifo, 10),
            rt(Policy::Fifo, 10),
            rt(Policy::Fifo, 10),
            rt(Policy::Fifo, 80),
        ],
    );
    let (a, b, c, hi) = (ts[0], ts[1], ts[2], ts[3]);
    for t in [a, b, c] {
        wake(&mut core, t, true);
    }
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(a));
    // A higher priority preempts; `a` stays at the head of its list.
    wake(&mut core, hi, true);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(hi));
    assert_eq!(
        block(&mut core),
        Some(a),
        "preempted FIFO task resumes first"
    );
    // sched_yield: to the tail.
    core.yield_current(C0);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(b));
    // b blocks and wakes again: tail, behind c and a.
    assert_eq!(block(&mut core), Some(c));
    wake(&mut core, b, false);
    assert_eq!(block(&mut core), Some(a), "c blocked");
    assert_eq!(block(&mut core), Some(b), "a blocked");
    // FIFO has no slice: 900 ms of ticks (within the global RT limit of 950 ms per
    // second) never rotate.
    wake(&mut core, a, false);
    core.run_until(900 * MS);
    assert_eq!(core.ctx.curr(C0), Some(b));
}

#[test]
fn rr_rotates_every_100ms_of_ticks() {
    for (hz, ticks) in [(1000u32, 100u64), (250, 25), (100, 10)] {
        let (mut core, ts) = rt_class(
            hz,
            &[rt(Policy::Rr, 5), rt(Policy::Rr, 5), rt(Policy::Rr, 5)],
        );
        assert_eq!(core.policy.rr_timeslice_ticks(hz), ticks as u32);
        for &t in &ts {
            wake(&mut core, t, true);
        }
        core.process_resched();
        let tick = 1_000_000_000 / hz as u64;
        let mut order = vec![core.ctx.curr(C0).unwrap()];
        for k in 1..=5 {
            let cur = *order.last().unwrap();
            core.run_until((k * ticks - 1) * tick);
            assert_eq!(core.ctx.curr(C0), Some(cur), "hz {hz}: rotated early");
            core.run_until(k * ticks * tick);
            order.push(core.ctx.curr(C0).unwrap());
        }
        assert_eq!(
            order,
            vec![ts[0], ts[1], ts[2], ts[0], ts[1], ts[2]],
            "hz {hz}"
        );
    }
    // An RR task alone on its list keeps the CPU when its slice ends.
    let (mut core, ts) = rt_class(1000, &[rt(Policy::Rr, 5), rt(Policy::Rr, 4)]);
    wake(&mut core, ts[0], true);
    wake(&mut core, ts[1], true);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(ts[0]));
    core.run_until(250 * MS);
    assert_eq!(core.ctx.curr(C0), Some(ts[0]));
    // The tunable is rounded up to whole jiffies (msecs_to_jiffies).
    let mut s = LinuxRt::new(1);
    s.set_param("sched_rr_timeslice_ms", "30").unwrap();
    assert_eq!(s.rr_timeslice_ticks(250), 8);
    s.set_param("sched_rr_timeslice_ms", "0").unwrap();
    assert_eq!(
        s.rr_timeslice_ticks(300),
        30,
        "RR_TIMESLICE = 100 * HZ / 1000"
    );
}

// ------------------------------------------------------------------ the class stack

/// SCHED_DEADLINE with runtime 1 ms every 10 ms.
fn attrs_dl() -> SchedAttrs {
    SchedAttrs {
        policy: Policy::Deadline,
        rt_priority: 0,
        nice: 0,
        dl: Some(schedlab_spec::model::DlParams {
            runtime_ns: MS,
            deadline_ns: 10 * MS,
            period_ns: 10 * MS,
        }),
        slice_ns: None,
    }
}

#[test]
fn stack_picks_rt_before_cfs_and_names_the_policy() {
    let mut core = SchedCore::bare(linux_cfs(1), 1, 1000);
    let f = start(&mut core, nice(-20), one());
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(f));
    let r = start(&mut core, rt(Policy::Fifo, 1), one());
    core.process_resched();
    assert_eq!(
        core.ctx.curr(C0),
        Some(r),
        "the lowest RT prio beats nice -20"
    );
    assert_eq!(block(&mut core), Some(f));
    let s = &mut core.policy;
    // dl > rt > fair.
    let (dl_class, rt_class, fair_class) = (&s.hi, &s.lo.hi, &s.lo.lo);
    assert!(dl_class.owns(&attrs_dl()) && !dl_class.owns(&rt(Policy::Rr, 3)));
    assert!(rt_class.owns(&rt(Policy::Rr, 3)) && !rt_class.owns(&fair(Policy::Other, 0)));
    assert!(fair_class.owns(&fair(Policy::Idle, 0)) && fair_class.owns(&fair(Policy::Batch, 0)));
    assert_eq!(s.dynamic_prio(f).map(|(n, _)| n), Some("vruntime"));

    let info = s.info();
    assert_eq!(info.name, "linux-cfs");
    assert!(info.source.contains("fair.c") && info.source.contains("rt.c"));
    let names: Vec<&str> = info.params.iter().map(|p| p.name).collect();
    for want in [
        "sched_rr_timeslice_ms",
        "sched_latency_ns",
        "sched_min_granularity_ns",
        "sched_wakeup_granularity_ns",
        "sched_child_runs_first",
        "sched_migration_cost_ns",
        "gentle_fair_sleepers",
        "start_debit",
        "dl_reclaim",
    ] {
        assert!(names.contains(&want), "missing tunable {want}");
    }
    let mut dedup = names.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), names.len(), "tunable names collide");
    s.set_param("sched_rr_timeslice_ms", "10").unwrap();
    s.set_param("sched_latency_ns", "12000000").unwrap();
    assert_eq!(s.lo.lo.tunables().latency, 12 * MS);
    assert!(s.set_param("bogus", "1").is_err());

    assert!(s.accepts(&attrs_dl()).is_ok(), "the deadline class runs it");
    assert!(
        s.accepts(&rt(Policy::Fifo, 0)).is_err(),
        "RT priority 0 is invalid"
    );
    assert!(s.accepts(&fair(Policy::Other, 19)).is_ok());
}

// ------------------------------------------------------------------ end to end

mod e2e {
    use super::common::*;
    use schedlab_sim::{simulate, SimConfig, SimOutput};
    use schedlab_spec::model::*;

    /// Run under `linux-cfs` with the invariant checker on; `None` (test skipped) while
    /// the policy is not registered in `cpu/mod.rs`.
    fn try_run(spec: &Spec, params: &[(&str, &str)]) -> Option<SimOutput> {
        let cfg = SimConfig {
            scheduler: Some("linux-cfs".into()),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            check: true,
            samples: schedlab_sim::SampleOutput::Memory,
            ..Default::default()
        };
        match simulate(spec, &cfg) {
            Ok(o) => Some(o),
            Err(e) if e.message.contains("unknown scheduler") => {
                eprintln!("skipped: linux-cfs is not registered yet ({e})");
                None
            }
            Err(e) => panic!("linux-cfs: {e}"),
        }
    }

    fn hog(name: &str, nice: i32) -> TaskSpec {
        task(
            name,
            attr(Policy::Other, nice),
            -1,
            vec![Event::Run { ns: 100 * MS }],
        )
    }

    fn cpu_ns(out: &SimOutput, name: &str) -> f64 {
        task_json(out, name)["cpu_ns"].as_u64().unwrap() as f64
    }

    #[test]
    fn nice_levels_share_a_cpu_by_weight() {
        let mut s = spec(
            1,
            vec![hog("n0", 0), hog("n5", 5), hog("n0b", 0)],
            Resources::default(),
        );
        s.duration_ns = Some(6_000 * MS);
        let Some(out) = try_run(&s, &[]) else { return };
        let r = cpu_ns(&out, "n0") / cpu_ns(&out, "n5");
        assert!(
            (r - 1024.0 / 335.0).abs() < 0.05,
            "nice 0 : nice 5 = {r}, want 3.06"
        );
        let eq = cpu_ns(&out, "n0") / cpu_ns(&out, "n0b");
        assert!((eq - 1.0).abs() < 0.01, "equal nice ratio {eq}");
    }

    #[test]
    fn rt_wakes_straight_through_fair_hogs() {
        let rt = periodic("rt", 0, MS, 10 * MS, 50, 100);
        let mut s = spec(1, vec![hog("h1", -20), hog("h2", 0), rt], timers(1));
        s.duration_ns = Some(1_200 * MS);
        let Some(out) = try_run(&s, &[]) else { return };
        let rt = task_json(&out, "rt");
        assert_eq!(rt["cpu_ns"], 100 * MS);
        assert_eq!(rt["wakeup_latency_ns"]["max"], 0, "RT preempts CFS at once");
    }

    #[test]
    fn load_balancing_spreads_hogs_over_cpus() {
        let mut s = spec(
            2,
            vec![hog("a", 0), hog("b", 0), hog("c", 0), hog("d", 0)],
            Resources::default(),
        );
        s.duration_ns = Some(2_000 * MS);
        let Some(out) = try_run(&s, &[]) else { return };
        for c in out.json()["cpus"].as_array().unwrap() {
            let busy = c["busy_ns"].as_u64().unwrap() as f64;
            assert!(busy > 0.99 * 2_000.0 * MS as f64, "cpu {c} not kept busy");
        }
        for n in ["a", "b", "c", "d"] {
            let share = cpu_ns(&out, n) / (2_000.0 * MS as f64);
            assert!((0.4..0.6).contains(&share), "{n} got {share} of a CPU");
        }
    }

    #[test]
    fn mixed_rt_and_fair_workload_keeps_invariants_and_is_deterministic() {
        let res = Resources {
            mutexes: vec!["m".into()],
            conds: vec!["c".into()],
            timers: vec!["t".into()],
            ..Resources::default()
        };
        let mut tasks = vec![task(
            "bcast",
            attr(Policy::Fifo, 80),
            40,
            vec![
                Event::Timer {
                    timer: 0,
                    period_ns: 2 * MS,
                    mode: TimerMode::Absolute,
                },
                Event::Lock { mutex: 0 },
                Event::Broad { cond: 0 },
                Event::Unlock { mutex: 0 },
            ],
        )];
        for i in 0..6 {
            let pol = [Policy::Other, Policy::Batch, Policy::Idle, Policy::Rr][i % 4];
            let prio = if pol == Policy::Rr { 10 } else { i as i32 - 3 };
            tasks.push(task(
                &format!("w{i}"),
                attr(pol, prio),
                40,
                vec![
                    Event::Lock { mutex: 0 },
                    Event::Wait { cond: 0, mutex: 0 },
                    Event::Unlock { mutex: 0 },
                    Event::Run { ns: 300 * US },
                    Event::Yield,
                ],
            ));
        }
        tasks.push(hog("bg", 5));
        let mut s = spec(3, tasks, res);
        s.duration_ns = Some(100 * MS);
        let Some(a) = try_run(&s, &[("sched_rr_timeslice_ms", "1")]) else {
            return;
        };
        let b = try_run(&s, &[("sched_rr_timeslice_ms", "1")]).unwrap();
        let strip = |o: &SimOutput| {
            let mut v = o.json();
            v["run"]["wall_s"] = serde_json::Value::Null;
            v
        };
        assert_eq!(strip(&a), strip(&b));
        assert_eq!(task_json(&a, "bcast")["activations"], 40);
    }
}

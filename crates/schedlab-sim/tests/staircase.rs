//! `staircase` (Con Kolivas' Staircase v16 for 2.6.17): behaviour pinned to the LKML patch
//! "[ckpatch][3/29] 2.6.17-smpnice-staircase-16" (rr_interval, slice, effective_prio,
//! recalc_task_prio, inc_bonus, continue_slice, scheduler_tick, sys_sched_yield,
//! wake_up_new_task), driven through the scheduler core (`SchedCore`, the engine's protocol:
//! real ticks on the tick grid, `schedule()` only when a CPU must reschedule), plus
//! end-to-end runs through `simulate` with the invariant checker on.
//!
//! Expected numbers are worked out from the patch's formulas, not from the implementation.

mod common;

use proptest::prelude::*;
use schedlab_sim::cpu::staircase::{rr_base, rr_interval, slice, Staircase};
use schedlab_sim::protocol::testing::strategies::{attrs_among, ops, tasks};
use schedlab_sim::protocol::testing::Driver;
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{fair, rt};
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};

const MS: u64 = 1_000_000;
const C0: CpuId = CpuId(0);

fn prio(core: &SchedCore<Staircase>, t: TaskId) -> i64 {
    core.policy.dynamic_prio(t).unwrap().1
}

/// staircase on `cpus` CPUs at `hz`, driven by the scheduler core.
fn machine(cpus: usize, hz: u32) -> SchedCore<Staircase> {
    SchedCore::bare(Staircase::new(cpus), cpus, hz)
}

/// A start-up task (no parent) allowed on CPU 0 only, created but not yet woken.
fn spawn(core: &mut SchedCore<Staircase>, a: SchedAttrs) -> TaskId {
    core.spawn(a, CpuMask::first_n(1), None)
}

/// Wake created tasks in order (`wake_up_new_task`) and let the CPUs schedule.
fn start(core: &mut SchedCore<Staircase>, tasks: &[TaskId]) {
    for &t in tasks {
        core.wake_up_new_task(t, None).unwrap();
    }
    core.process_resched();
}

/// Let `ns` pass: the running tasks compute, taking their ticks (on the tick grid) and the
/// reschedules those ask for on the way.
fn run_for(core: &mut SchedCore<Staircase>, ns: u64) {
    let to = core.ctx.now() + ns;
    core.run_until(to);
}

/// CPU 0's task runs `ns` more, then blocks, and the CPU switches away.
fn run_then_block(core: &mut SchedCore<Staircase>, ns: u64) -> TaskId {
    run_for(core, ns);
    let t = core.block(C0, PrevState::Sleeping);
    core.process_resched();
    t
}

/// `ns` pass (the CPU runs whatever else is runnable), then `t` wakes and the CPU
/// reschedules if the wake-up asks it to.
fn sleep_then_wake(core: &mut SchedCore<Staircase>, t: TaskId, ns: u64) {
    run_for(core, ns);
    core.try_to_wake_up(t, None, false).unwrap();
    core.process_resched();
}

/// One cycle of a task that sleeps less than it runs: 0.75 ms of CPU (never a whole jiffy,
/// so no tick charges it) and a 0.25 ms sleep. Each wake-up adds runtime − sleep = 0.5 ms
/// to totalrun and continues the slice (continue_slice).
fn creep(core: &mut SchedCore<Staircase>, t: TaskId) {
    run_then_block(core, 3 * MS / 4);
    sleep_then_wake(core, t, MS / 4);
}

// ------------------------------------------------------------------ formulas

#[test]
fn rr_interval_and_slice_for_every_nice_at_hz_100_250_1000() {
    for (hz, rr) in [(100u32, 1u32), (250, 2), (1000, 6)] {
        // RR_INTERVAL = 6*HZ/1001 + 1.
        assert_eq!(rr_base(hz, false), rr, "HZ={hz}");
        assert_eq!(rr_base(hz, false), 6 * hz / 1001 + 1);
        assert_eq!(rr_base(hz, true), 10 * rr, "compute mode x10");
        for nice in -20..=19 {
            let a = fair(Policy::Other, nice);
            let want_rr = if nice < 0 {
                rr * (20 - nice) as u32 / 20
            } else {
                rr
            };
            assert_eq!(rr_interval(hz, false, &a), want_rr, "HZ={hz} nice={nice}");
            // slice = rr + (39 - TASK_USER_PRIO) * rr = rr * (20 - nice).
            let want_slice = want_rr + (39 - (nice + 20)) as u32 * want_rr;
            assert_eq!(slice(hz, false, &a), want_slice, "HZ={hz} nice={nice}");
            assert_eq!(want_slice, want_rr * (20 - nice) as u32);
        }
        // RT tasks: one rr_interval whatever the priority.
        for p in [1, 50, 99] {
            assert_eq!(slice(hz, false, &rt(Policy::Rr, p)), rr);
            assert_eq!(rr_interval(hz, false, &rt(Policy::Rr, p)), rr);
        }
    }
    // Worked values from the spec (HZ=1000): nice 0 → 120 ms, +19 → 6 ms, -20 → 12 ms x 40.
    assert_eq!(slice(1000, false, &fair(Policy::Other, 0)), 120);
    assert_eq!(slice(1000, false, &fair(Policy::Other, 19)), 6);
    assert_eq!(rr_interval(1000, false, &fair(Policy::Other, -20)), 12);
    assert_eq!(slice(1000, false, &fair(Policy::Other, -20)), 480);
    // HZ=250: rr = 2 jiffies = 8 ms; nice 0 slice = 40 jiffies = 160 ms.
    assert_eq!(slice(250, false, &fair(Policy::Other, 0)), 40);
    // HZ=100: nice -20 rr = 2 jiffies, slice 80.
    assert_eq!(slice(100, false, &fair(Policy::Other, -20)), 80);
}

// ------------------------------------------------------------------ the staircase

/// A CPU hog (never sleeps, bonus 0) at nice n: after i charged ticks its prio is
/// min(139, 100 + (n+20) + (i mod slice) / rr), and it returns to its top stair every
/// full slice (`scheduler_tick`: --time_slice → one stair lower; --slice == 0 → dec_bonus
/// and a full slice at the best stair).
#[test]
fn cpu_hog_descends_one_stair_per_rr_interval() {
    for hz in [100u32, 250, 1000] {
        for nice in [-20, -5, 0, 7, 19] {
            let a = fair(Policy::Other, nice);
            let mut core = machine(1, hz);
            let t = spawn(&mut core, a);
            start(&mut core, &[t]);
            let rr = rr_interval(hz, false, &a) as u64;
            let full = slice(hz, false, &a) as u64;
            let top = 100 + (nice + 20) as i64;
            assert_eq!(prio(&core, t), top, "HZ={hz} nice={nice} start");
            let tick = core.ctx.tick_ns();
            for i in 1..=(3 * full) {
                run_for(&mut core, tick);
                let want = (top + ((i % full) / rr) as i64).min(139);
                assert_eq!(prio(&core, t), want, "HZ={hz} nice={nice} after {i} ticks");
                // Still the only task: it keeps the CPU.
                assert_eq!(core.ctx.curr(C0), Some(t));
            }
        }
    }
}

/// Sub-jiffy runs are not charged at the tick (ns_debit < NSJIFFY): a task that starts
/// half-way through a jiffy is charged at its second tick, not its first.
#[test]
fn tick_charges_only_whole_jiffies() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 0));
    core.set_now(MS / 2);
    start(&mut core, &[t]);
    run_for(&mut core, MS / 2); // the tick at 1 ms sees 0.5 ms
    assert_eq!(core.policy.slices_of(t), (120, 6));
    run_for(&mut core, MS); // the tick at 2 ms sees 1.5 ms: one jiffy charged
    assert_eq!(core.policy.slices_of(t), (119, 5));
}

/// SCHED_RR rotates every rr_interval; SCHED_FIFO is never charged.
#[test]
fn rr_rotates_every_rr_interval_and_fifo_never() {
    let mut core = machine(1, 1000);
    let ts = [rt(Policy::Rr, 10), rt(Policy::Rr, 10)].map(|a| spawn(&mut core, a));
    start(&mut core, &ts);
    assert_eq!(core.ctx.curr(C0), Some(ts[0]));
    for _ in 0..5 {
        run_for(&mut core, MS);
        assert_eq!(core.ctx.curr(C0), Some(ts[0]));
    }
    run_for(&mut core, MS);
    assert_eq!(core.ctx.curr(C0), Some(ts[1]));
    assert_eq!(prio(&core, ts[0]), 89);

    let mut core = machine(1, 1000);
    let ts = [rt(Policy::Fifo, 10), rt(Policy::Fifo, 10)].map(|a| spawn(&mut core, a));
    start(&mut core, &ts);
    let decisions = core.decisions;
    run_for(&mut core, 1000 * MS);
    assert_eq!(core.decisions, decisions, "1000 ticks, no reschedule");
    assert_eq!(core.ctx.curr(C0), Some(ts[0]));
}

// ------------------------------------------------------------------ sleep bonus

/// recalc_task_prio: a task that sleeps at least as long as it ran gains one bonus
/// point per wake-up (inc_bonus, while sleep/(totalrun+1) > bonus), up to nice+20, and
/// enters one stair higher each time.
#[test]
fn sleeping_longer_than_running_earns_one_bonus_point_per_wakeup() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 0));
    start(&mut core, &[t]);
    for k in 1..=25u32 {
        // sleep 100 ms after a 2 ms run: best = 100e6 / (2e6 + 1) = 49.
        run_then_block(&mut core, 2 * MS);
        sleep_then_wake(&mut core, t, 100 * MS);
        let want = k.min(20);
        assert_eq!(core.policy.bonus_of(t), want, "after wake-up {k}");
        assert_eq!(prio(&core, t), 120 - want as i64);
        assert_eq!(core.policy.totalrun_of(t), 0);
        assert_eq!(core.policy.slices_of(t), (120, 6), "fresh slice");
    }
    // nice 10: the bonus is capped at nice + 20 = 30 → top stair 100.
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 10));
    start(&mut core, &[t]);
    for _ in 0..40 {
        run_then_block(&mut core, MS / 10);
        sleep_then_wake(&mut core, t, 100 * MS);
    }
    assert_eq!(core.policy.bonus_of(t), 30);
    assert_eq!(prio(&core, t), 100);
}

/// inc_bonus needs sleep/(totalrun+1) > bonus: with bonus b a task must sleep more than
/// b times what it ran to gain another point; sleep ≥ run but below that keeps the bonus
/// (and still refills the slice, totalrun = 0).
#[test]
fn bonus_growth_needs_sleep_to_run_ratio_above_the_bonus() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 0));
    start(&mut core, &[t]);
    for _ in 0..5 {
        run_then_block(&mut core, MS);
        sleep_then_wake(&mut core, t, 50 * MS);
    }
    assert_eq!(core.policy.bonus_of(t), 5);
    // Run 1 ms, sleep 3 ms: best = 3e6/(1e6+1) = 2 < 5 → no change.
    run_then_block(&mut core, MS);
    sleep_then_wake(&mut core, t, 3 * MS);
    assert_eq!(core.policy.bonus_of(t), 5);
    assert_eq!(core.policy.totalrun_of(t), 0);
    assert_eq!(prio(&core, t), 115);
    // Run 1 ms, sleep 6 ms: best = 5 (5.99) — not above 5 → no change.
    run_then_block(&mut core, MS);
    sleep_then_wake(&mut core, t, 6 * MS);
    assert_eq!(core.policy.bonus_of(t), 5);
    // Run 1 ms, sleep 7 ms: best = 6 > 5 → 6.
    run_then_block(&mut core, MS);
    sleep_then_wake(&mut core, t, 7 * MS);
    assert_eq!(core.policy.bonus_of(t), 6);
}

/// A task that sleeps less than it runs continues its old slice part-way down the
/// staircase (continue_slice): totalrun −= sleep, slice −= jiffies(totalrun), time_slice =
/// slice % rr. (One long run cannot get there: schedule() restarts prev->runtime, and the
/// tick's time_slice expiry reschedules every rr_interval; totalrun grows over wake-ups.)
#[test]
fn short_sleep_continues_the_slice_part_way_down() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 0));
    start(&mut core, &[t]);
    // Run 0.75 ms, sleep 0.25 ms: totalrun 0.5 ms, less than a jiffy: the full slice.
    creep(&mut core, t);
    assert_eq!(core.policy.totalrun_of(t), MS / 2);
    assert_eq!(core.policy.slices_of(t), (120, 6));
    assert_eq!(prio(&core, t), 120);
    // 16 cycles: totalrun = 8 ms → slice 112, time_slice 112 % 6 = 4, prio 120 + 8/6 = 121.
    for _ in 1..16 {
        creep(&mut core, t);
    }
    assert_eq!(core.policy.bonus_of(t), 0);
    assert_eq!(core.policy.totalrun_of(t), 8 * MS);
    assert_eq!(core.policy.slices_of(t), (112, 4));
    assert_eq!(prio(&core, t), 121);
}

/// A task that ran down to its last stair loses a bonus point on wake-up and restarts at
/// its best stair (first rule of recalc_task_prio).
#[test]
fn running_down_to_the_last_stair_costs_a_bonus_point() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Other, 0));
    start(&mut core, &[t]);
    for _ in 0..3 {
        run_then_block(&mut core, MS);
        sleep_then_wake(&mut core, t, 50 * MS);
    }
    assert_eq!(core.policy.bonus_of(t), 3);
    // 230 cycles of 0.5 ms net run: totalrun 115 ms → 120 - 115 = 5 jiffies left, on the
    // last stair (slice 5, time_slice 5, prio 117 + 115/6 = 136). The first rule has not
    // fired: each wake-up saw totalrun ≤ 114.5 ms before adding the run (120 − 114 ≥ 6).
    for _ in 0..230 {
        creep(&mut core, t);
    }
    assert_eq!(core.policy.totalrun_of(t), 115 * MS);
    assert_eq!(core.policy.slices_of(t), (5, 5));
    assert_eq!(prio(&core, t), 136);
    assert_eq!(core.policy.bonus_of(t), 3);
    // The next wake-up sees slice − jiffies(totalrun) = 120 − 115 < 6: dec_bonus, restart.
    creep(&mut core, t);
    assert_eq!(core.policy.bonus_of(t), 2);
    assert_eq!(core.policy.totalrun_of(t), 0);
    assert_eq!(prio(&core, t), 118);
}

// ------------------------------------------------------------------ fork and yield

/// wake_up_new_task: the child gets no bonus (starts at 100 + nice + 20 with a full slice)
/// and the parent's next activation earns no sleep credit (PF_FORKED).
#[test]
fn fork_child_gets_no_bonus_and_parent_loses_its_next_sleep_credit() {
    let a = fair(Policy::Other, 0);
    let mut core = machine(1, 1000);
    let parent = spawn(&mut core, a);
    start(&mut core, &[parent]);
    for _ in 0..4 {
        run_then_block(&mut core, MS);
        sleep_then_wake(&mut core, parent, 50 * MS);
    }
    assert_eq!(core.policy.bonus_of(parent), 4);
    let child = core.spawn(a, CpuMask::first_n(1), Some(parent));
    core.wake_up_new_task(child, Some(C0)).unwrap();
    assert_eq!(core.policy.bonus_of(child), 0);
    assert_eq!(prio(&core, child), 120);
    assert_eq!(core.policy.slices_of(child), (120, 6));
    // Child-runs-first asks for a reschedule, but the parent's stair (116) is better.
    assert!(core.ctx.need_resched(C0));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(parent));
    // Parent runs 1 ms, sleeps long while the child runs: no bonus, totalrun kept
    // (continue_slice).
    run_then_block(&mut core, MS);
    assert_eq!(core.ctx.curr(C0), Some(child));
    sleep_then_wake(&mut core, parent, 500 * MS);
    assert_eq!(core.policy.bonus_of(parent), 4);
    assert_eq!(core.policy.slices_of(parent).0, 119);
    assert_eq!(core.ctx.curr(C0), Some(parent), "preempts the child");
    // The flag is cleared by that activation: the next sleep counts again.
    run_then_block(&mut core, MS);
    sleep_then_wake(&mut core, parent, 500 * MS);
    assert_eq!(core.policy.bonus_of(parent), 5);
}

/// sys_sched_yield: a non-RT task is requeued at MIN_USER_PRIO (139) with a refilled
/// slice and a new rr_interval; it re-enters its staircase one stair below the top after
/// one rr_interval. (The seed slide's "dynamic priority to best" is the refilled slice; the
/// patch's requeue priority is 139.) RT tasks go to the tail of their own priority.
#[test]
fn yield_requeues_at_139_with_a_full_slice() {
    let a = fair(Policy::Other, 0);
    let mut core = machine(1, 1000);
    let (y, other) = (spawn(&mut core, a), spawn(&mut core, a));
    start(&mut core, &[y, other]);
    assert_eq!(core.ctx.curr(C0), Some(y));
    run_for(&mut core, 3 * MS);
    core.yield_current(C0);
    assert_eq!(prio(&core, y), 139);
    assert_eq!(core.policy.slices_of(y), (120, 6));
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(other));
    // Alone again: y runs from 139; after one rr_interval it requeues at 121.
    core.exit(C0);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(y));
    run_for(&mut core, 6 * MS);
    assert_eq!(prio(&core, y), 121);

    let mut core = machine(1, 1000);
    let ts = [rt(Policy::Fifo, 5), rt(Policy::Fifo, 5)].map(|a| spawn(&mut core, a));
    start(&mut core, &ts);
    core.yield_current(C0);
    assert_eq!(prio(&core, ts[0]), 94);
    core.process_resched();
    assert_eq!(core.ctx.curr(C0), Some(ts[1]));
}

// ------------------------------------------------------------------ preemption, tunables

#[test]
fn wakeup_preempts_only_for_a_strictly_better_dynamic_prio() {
    // A hog starts at its top stair 120 as w wakes. A w that crept down its slice (16
    // cycles of 0.75 ms runs and 0.25 ms sleeps: totalrun 8 ms) continues it at 121: no
    // preemption. One that ran 1 ms and slept 50 ms gains a bonus point → 119 < 120:
    // preemption (TASK_PREEMPTS_CURR, strict).
    let a = fair(Policy::Other, 0);
    let crept = vec![(3 * MS / 4, MS / 4); 16];
    for (history, want_prio, preempts) in [(crept, 121, false), (vec![(MS, 50 * MS)], 119, true)] {
        let mut core = machine(1, 1000);
        let (hog, w) = (spawn(&mut core, a), spawn(&mut core, a));
        start(&mut core, &[w]);
        let ((ran, slept), before) = history.split_last().unwrap();
        for &(r, s) in before {
            run_then_block(&mut core, r);
            sleep_then_wake(&mut core, w, s);
        }
        run_then_block(&mut core, *ran);
        run_for(&mut core, *slept);
        core.wake_up_new_task(hog, None).unwrap();
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(hog));
        assert_eq!(prio(&core, hog), 120);
        core.try_to_wake_up(w, None, false).unwrap();
        assert_eq!(prio(&core, w), want_prio);
        assert_eq!(core.ctx.need_resched(C0), preempts);
    }
    // Equal priority never preempts.
    let mut core = machine(1, 1000);
    let ts = [a, a].map(|a| spawn(&mut core, a));
    start(&mut core, &ts[..1]);
    core.wake_up_new_task(ts[1], None).unwrap();
    assert!(!core.ctx.need_resched(C0));
}

#[test]
fn interactive_and_compute_tunables() {
    let mut s = Staircase::new(1);
    assert!(s.set_param("interactive", "2").is_err());
    assert!(s.set_param("nope", "1").is_err());
    let info = s.info();
    let names: Vec<_> = info.params.iter().map(|p| p.name).collect();
    assert_eq!(names, ["interactive", "compute"]);

    // interactive = 0: the bonus still accrues but is not applied.
    for (param, want_prio, rr) in [("interactive", 120, 6u32), ("compute", 120, 60)] {
        let mut core = machine(1, 1000);
        core.policy
            .set_param(param, if param == "interactive" { "0" } else { "1" })
            .unwrap();
        let t = spawn(&mut core, fair(Policy::Other, 0));
        start(&mut core, &[t]);
        for _ in 0..3 {
            run_then_block(&mut core, MS);
            sleep_then_wake(&mut core, t, 500 * MS);
        }
        assert_eq!(prio(&core, t), want_prio, "{param}");
        assert_eq!(core.policy.slices_of(t), (20 * rr, rr), "{param}");
    }
}

#[test]
fn batch_tasks_never_use_their_bonus() {
    let mut core = machine(1, 1000);
    let t = spawn(&mut core, fair(Policy::Batch, 0));
    start(&mut core, &[t]);
    for _ in 0..3 {
        run_then_block(&mut core, MS);
        sleep_then_wake(&mut core, t, 500 * MS);
    }
    assert_eq!(prio(&core, t), 120);
}

// ------------------------------------------------------------------ SMP

/// move_tasks (simplified): a CPU about to go idle pulls half the difference from the
/// busiest CPU, scanning from the best priority, never the running task, respecting
/// affinity.
#[test]
fn newidle_balance_pulls_best_prio_movable_tasks() {
    let mut core = machine(2, 1000);
    let c1 = CpuId(1);
    let mut on_cpu1 = CpuMask::empty();
    on_cpu1.set(c1);
    let x = core.spawn(fair(Policy::Other, 0), on_cpu1, None);
    start(&mut core, &[x]);
    // Four tasks start on CPU 0 (created there), then all but the last are allowed on
    // both CPUs (sched_setaffinity): they stay queued on CPU 0.
    let ts: Vec<TaskId> = [0, 5, -5, 10]
        .map(|nice| spawn(&mut core, fair(Policy::Other, nice)))
        .into();
    start(&mut core, &ts);
    for &t in &ts[..3] {
        core.setattr(t, None, Some(CpuMask::first_n(2))).unwrap();
    }
    core.process_resched();
    // CPU 0 runs the nice -5 task (prio 115); queued: 120, 125, 130 (pinned).
    assert_eq!(core.ctx.curr(C0), Some(ts[2]));
    assert!(ts.iter().all(|&t| core.ctx.task(t).cpu == C0));
    // x blocks: CPU 1 finds nothing and balances before idling.
    core.block(c1, PrevState::Sleeping);
    core.process_resched();
    // 4 vs 0 → move 2: the best movable ones, 120 then 125; CPU 1 runs the first.
    assert_eq!(core.ctx.curr(c1), Some(ts[0]));
    let queued_on = |core: &SchedCore<Staircase>, cpu| {
        let mut v = Vec::new();
        core.policy.for_each_queued(&mut |c, t| {
            if c == cpu {
                v.push(t)
            }
        });
        v.sort();
        v
    };
    assert_eq!(queued_on(&core, c1), vec![ts[0], ts[1]]);
    assert_eq!(core.ctx.task(ts[0]).cpu, c1);
    // Balanced now: the ticks' balancing moves nothing more.
    run_for(&mut core, 5 * MS);
    assert_eq!(queued_on(&core, c1), vec![ts[0], ts[1]]);
    assert_eq!(queued_on(&core, C0), vec![ts[2], ts[3]]);
}

const POLICIES: &[Policy] = &[Policy::Other, Policy::Batch, Policy::Fifo, Policy::Rr];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random operations through the scheduler core keep the invariants every policy must
    /// keep (`Driver::check`), with and without compute mode.
    #[test]
    fn random_operations_keep_the_invariants(
        cpus in 1usize..4,
        hz in prop_oneof![Just(100u32), Just(250), Just(1000)],
        compute in any::<bool>(),
        specs in tasks(attrs_among(POLICIES)),
        ops in proptest::collection::vec(ops(20_000_000, attrs_among(POLICIES)), 1..200),
    ) {
        let mut policy = Staircase::new(cpus);
        policy.set_param("compute", if compute { "1" } else { "0" }).unwrap();
        let mut d = Driver::new(policy, cpus, hz, &specs);
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
            scheduler: Some("staircase".into()),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            hz,
            check: true,
            samples: schedlab_sim::SampleOutput::Memory,
            ..Default::default()
        };
        simulate(spec, &cfg).unwrap_or_else(|e| panic!("staircase: {e}"))
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

    /// Equal hogs share a CPU equally; nice 0 vs nice 10 by slice length over a round of
    /// the staircase (both restart at their top stair every full slice).
    #[test]
    fn hogs_share_and_nice_matters() {
        let mut s = spec(
            1,
            vec![hog("a", 0), hog("b", 0), hog("n10", 10)],
            Resources::default(),
        );
        s.duration_ns = Some(5_000 * MS);
        for hz in [100, 250, 1000] {
            let out = run_with(&s, &[], Some(hz));
            let (a, b, n) = (cpu_ns(&out, "a"), cpu_ns(&out, "b"), cpu_ns(&out, "n10"));
            let r = a as f64 / b as f64;
            assert!((r - 1.0).abs() < 0.1, "HZ={hz}: a/b = {r}");
            assert!(n < a, "HZ={hz}: nice 10 got {n} >= nice 0 {a}");
        }
    }

    /// An interactive task (short runs, long sleeps) beside CPU hogs is woken with a bonus
    /// and preempts them: its wake-up latency stays far below a hog's rr_interval chain.
    #[test]
    fn sleeper_preempts_hogs() {
        let sleeper = task(
            "sleeper",
            attr(Policy::Other, 0),
            200,
            vec![Event::Run { ns: MS / 2 }, Event::Sleep { ns: 10 * MS }],
        );
        let s = spec(
            1,
            vec![hog("h1", 0), hog("h2", 0), sleeper],
            Resources::default(),
        );
        let mut s = s;
        s.duration_ns = Some(4_000 * MS);
        for params in [
            &[][..],
            &[("compute", "1")][..],
            &[("interactive", "0")][..],
        ] {
            let out = run_with(&s, params, Some(1000));
            let sl = task_json(&out, "sleeper");
            assert!(sl["cpu_ns"].as_u64().unwrap() >= 200 * MS / 2, "{params:?}");
        }
        let out = run_with(&s, &[], Some(1000));
        let lat = &task_json(&out, "sleeper")["wakeup_latency_ns"];
        let max = lat["max"].as_f64().expect("wake-up latency max");
        assert!(lat["count"].as_u64().unwrap() >= 100);
        // The sleeper wakes with a bonus above the hogs' stairs and preempts at once.
        assert!(max <= 6.0 * MS as f64, "max wake-up latency {max}");
    }

    #[test]
    fn fork_yield_rt_mix_on_four_cpus() {
        let child = task(
            "child",
            attr(Policy::Other, 5),
            20,
            vec![
                Event::Run { ns: 3 * MS },
                Event::Yield,
                Event::Sleep { ns: MS },
            ],
        );
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
        let mut child = child;
        child.instances = 0;
        let rr = task(
            "rr",
            attr(Policy::Rr, 20),
            50,
            vec![Event::Run { ns: 2 * MS }, Event::Sleep { ns: 3 * MS }],
        );
        let s = spec(
            4,
            vec![child, parent, rr, hog("h", -5)],
            Resources::default(),
        );
        let mut s = s;
        s.duration_ns = Some(2_000 * MS);
        let out = run_with(&s, &[], None);
        assert!(cpu_ns(&out, "parent") >= 20 * MS);
    }

    /// Phase attribute changes (set_user_nice / __setscheduler through dequeue(SAVE),
    /// enqueue(RESTORE), prio_changed) while running and while asleep, beside hogs.
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
            phase(
                "batch",
                attr(Policy::Batch, 0),
                vec![Event::Run { ns: 2 * MS }, Event::Sleep { ns: 2 * MS }],
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
        let out = run_with(&s, &[], None);
        assert!(out.json()["tasks"].as_array().unwrap().len() > 1);
        let out = run_with(&s, &[("compute", "1")], None);
        assert!(out.json()["tasks"].as_array().unwrap().len() > 1);
    }
}

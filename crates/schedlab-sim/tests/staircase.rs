//! `staircase` (Con Kolivas' Staircase v16 for 2.6.17): behaviour pinned to the LKML patch
//! "[ckpatch][3/29] 2.6.17-smpnice-staircase-16" (rr_interval, slice, effective_prio,
//! recalc_task_prio, inc_bonus, continue_slice, scheduler_tick, sys_sched_yield,
//! wake_up_new_task), driven through the hooks with `Ctx::for_test`, plus end-to-end runs
//! through `simulate` with the invariant checker on.
//!
//! Expected numbers are worked out from the patch's formulas, not from the implementation.

mod common;

use schedlab_sim::cpu::staircase::{rr_base, rr_interval, slice, Staircase};
use schedlab_sim::sched::{DequeueKind, EnqueueKind, Scheduler};
use schedlab_sim::types::{fair, rt};
use schedlab_sim::types::{CpuId, CpuMask, Policy, SchedAttrs, TaskId};
use schedlab_sim::Ctx;

const MS: u64 = 1_000_000;
const C0: CpuId = CpuId(0);

fn prio(s: &Staircase, t: TaskId) -> i64 {
    s.dynamic_prio(t).unwrap().1
}

/// A one-CPU context with the given tasks created (start-up tasks, no parent), not queued.
fn setup(hz: u32, attrs: &[SchedAttrs]) -> (Ctx, Staircase, Vec<TaskId>) {
    let mut ctx = Ctx::for_test(1, hz);
    let mut s = Staircase::new(1);
    let mut ts = Vec::new();
    for a in attrs {
        let t = ctx.add_task_for_test(*a, CpuMask::first_n(1));
        s.task_new(&mut ctx, t, None);
        ts.push(t);
    }
    (ctx, s, ts)
}

/// Make `t` the running task (as the engine's schedule() would).
fn run(ctx: &mut Ctx, s: &mut Staircase, t: TaskId) {
    if let Some(prev) = ctx.curr(C0) {
        s.put_prev(ctx, C0, prev);
    }
    ctx.set_curr_for_test(C0, Some(t));
}

/// Advance time by one jiffy with `t` running and deliver the tick.
fn tick(ctx: &mut Ctx, s: &mut Staircase, t: TaskId) {
    let j = ctx.tick_ns();
    ctx.set_now_for_test(ctx.now() + j);
    s.update_curr(ctx, C0, t, j);
    s.tick(ctx, C0, t);
}

/// `t` (running) runs `ns` more, then blocks and is switched out.
fn run_then_block(ctx: &mut Ctx, s: &mut Staircase, t: TaskId, ns: u64) {
    ctx.set_now_for_test(ctx.now() + ns);
    s.update_curr(ctx, C0, t, ns);
    s.dequeue(ctx, C0, t, DequeueKind::Sleep);
    s.put_prev(ctx, C0, t);
    ctx.set_curr_for_test(C0, None);
}

fn sleep_then_wake(ctx: &mut Ctx, s: &mut Staircase, t: TaskId, ns: u64) {
    ctx.set_now_for_test(ctx.now() + ns);
    s.enqueue(ctx, C0, t, EnqueueKind::Wakeup);
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
            let (mut ctx, mut s, ts) = setup(hz, &[a]);
            let t = ts[0];
            s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
            assert_eq!(s.pick_next(&mut ctx, C0), Some(t));
            run(&mut ctx, &mut s, t);
            let rr = rr_interval(hz, false, &a) as u64;
            let full = slice(hz, false, &a) as u64;
            let top = 100 + (nice + 20) as i64;
            assert_eq!(prio(&s, t), top, "HZ={hz} nice={nice} start");
            for i in 1..=(3 * full) {
                tick(&mut ctx, &mut s, t);
                let want = (top + ((i % full) / rr) as i64).min(139);
                assert_eq!(prio(&s, t), want, "HZ={hz} nice={nice} after {i} ticks");
                // Still the only task: it keeps the CPU.
                assert_eq!(s.pick_next(&mut ctx, C0), Some(t));
            }
        }
    }
}

/// Sub-jiffy runs are not charged at the tick (ns_debit < NSJIFFY).
#[test]
fn tick_charges_only_whole_jiffies() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    ctx.set_now_for_test(MS / 2);
    s.update_curr(&mut ctx, C0, t, MS / 2);
    s.tick(&mut ctx, C0, t);
    assert_eq!(s.slices_of(t), (120, 6));
    ctx.set_now_for_test(MS + MS / 2);
    s.update_curr(&mut ctx, C0, t, MS);
    s.tick(&mut ctx, C0, t);
    assert_eq!(s.slices_of(t), (119, 5));
}

/// SCHED_RR rotates every rr_interval; SCHED_FIFO is never charged.
#[test]
fn rr_rotates_every_rr_interval_and_fifo_never() {
    let (mut ctx, mut s, ts) = setup(1000, &[rt(Policy::Rr, 10), rt(Policy::Rr, 10)]);
    for &t in &ts {
        s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    }
    assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[0]));
    run(&mut ctx, &mut s, ts[0]);
    for _ in 0..5 {
        tick(&mut ctx, &mut s, ts[0]);
        assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[0]));
    }
    tick(&mut ctx, &mut s, ts[0]);
    assert!(ctx.need_resched(C0));
    assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[1]));
    assert_eq!(prio(&s, ts[0]), 89);

    let (mut ctx, mut s, ts) = setup(1000, &[rt(Policy::Fifo, 10), rt(Policy::Fifo, 10)]);
    for &t in &ts {
        s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    }
    run(&mut ctx, &mut s, ts[0]);
    for _ in 0..1000 {
        tick(&mut ctx, &mut s, ts[0]);
    }
    assert!(!ctx.need_resched(C0));
    assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[0]));
}

// ------------------------------------------------------------------ sleep bonus

/// recalc_task_prio: a task that sleeps at least as long as it ran gains one bonus
/// point per wake-up (inc_bonus, while sleep/(totalrun+1) > bonus), up to nice+20, and
/// enters one stair higher each time.
#[test]
fn sleeping_longer_than_running_earns_one_bonus_point_per_wakeup() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    for k in 1..=25u32 {
        run_then_block(&mut ctx, &mut s, t, 2 * MS);
        // sleep 10 ms after a 2 ms run: best = 10e6 / (2e6 + 1) = 4.
        sleep_then_wake(&mut ctx, &mut s, t, 100 * MS);
        let want = k.min(20);
        assert_eq!(s.bonus_of(t), want, "after wake-up {k}");
        assert_eq!(prio(&s, t), 120 - want as i64);
        assert_eq!(s.totalrun_of(t), 0);
        assert_eq!(s.slices_of(t), (120, 6), "fresh slice");
        run(&mut ctx, &mut s, t);
    }
    // nice 10: the bonus is capped at nice + 20 = 30 → top stair 100.
    let (mut ctx, mut s, ts) = setup(1000, &[fair(Policy::Other, 10)]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    for _ in 0..40 {
        run_then_block(&mut ctx, &mut s, t, MS / 10);
        sleep_then_wake(&mut ctx, &mut s, t, 100 * MS);
        run(&mut ctx, &mut s, t);
    }
    assert_eq!(s.bonus_of(t), 30);
    assert_eq!(prio(&s, t), 100);
}

/// inc_bonus needs sleep/(totalrun+1) > bonus: with bonus b a task must sleep more than
/// b times what it ran to gain another point; sleep ≥ run but below that keeps the bonus
/// (and still refills the slice, totalrun = 0).
#[test]
fn bonus_growth_needs_sleep_to_run_ratio_above_the_bonus() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    for _ in 0..5 {
        run_then_block(&mut ctx, &mut s, t, MS);
        sleep_then_wake(&mut ctx, &mut s, t, 50 * MS);
        run(&mut ctx, &mut s, t);
    }
    assert_eq!(s.bonus_of(t), 5);
    // Run 1 ms, sleep 3 ms: best = 3e6/(1e6+1) = 2 < 5 → no change.
    run_then_block(&mut ctx, &mut s, t, MS);
    sleep_then_wake(&mut ctx, &mut s, t, 3 * MS);
    assert_eq!(s.bonus_of(t), 5);
    assert_eq!(s.totalrun_of(t), 0);
    assert_eq!(prio(&s, t), 115);
    run(&mut ctx, &mut s, t);
    // Run 1 ms, sleep 6 ms: best = 5 (5.99) — not above 5 → no change.
    run_then_block(&mut ctx, &mut s, t, MS);
    sleep_then_wake(&mut ctx, &mut s, t, 6 * MS);
    assert_eq!(s.bonus_of(t), 5);
    run(&mut ctx, &mut s, t);
    // Run 1 ms, sleep 7 ms: best = 6 > 5 → 6.
    run_then_block(&mut ctx, &mut s, t, MS);
    sleep_then_wake(&mut ctx, &mut s, t, 7 * MS);
    assert_eq!(s.bonus_of(t), 6);
}

/// A short sleep after a long run continues the old slice part-way down the staircase
/// (continue_slice): totalrun −= sleep, slice −= jiffies(totalrun), time_slice = slice %
/// rr.
#[test]
fn short_sleep_continues_the_slice_part_way_down() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    // Run 10 ms (no ticks delivered), sleep 2 ms: totalrun = 8 ms → slice 112, time_slice
    // 112 % 6 = 4, prio 120 + 8/6 = 121.
    run_then_block(&mut ctx, &mut s, t, 10 * MS);
    sleep_then_wake(&mut ctx, &mut s, t, 2 * MS);
    assert_eq!(s.bonus_of(t), 0);
    assert_eq!(s.totalrun_of(t), 8 * MS);
    assert_eq!(s.slices_of(t), (112, 4));
    assert_eq!(prio(&s, t), 121);
}

/// A task that ran down to its last stair loses a bonus point on wake-up and restarts at
/// its best stair (first rule of recalc_task_prio).
#[test]
fn running_down_to_the_last_stair_costs_a_bonus_point() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    for _ in 0..3 {
        run_then_block(&mut ctx, &mut s, t, MS);
        sleep_then_wake(&mut ctx, &mut s, t, 50 * MS);
        run(&mut ctx, &mut s, t);
    }
    assert_eq!(s.bonus_of(t), 3);
    // Run 116 ms, sleep 1 ms: totalrun 115 ms → 120 - 115 = 5 < time_slice 6.
    run_then_block(&mut ctx, &mut s, t, 116 * MS);
    sleep_then_wake(&mut ctx, &mut s, t, MS);
    // This wake-up: the first rule sees totalrun 0; then totalrun = 116 − 1 ms and the
    // slice continues on its last stair (slice 5, prio 117 + 19 = 136).
    assert_eq!(s.totalrun_of(t), 115 * MS);
    assert_eq!(s.slices_of(t), (5, 5));
    assert_eq!(prio(&s, t), 136);
    run(&mut ctx, &mut s, t);
    // The next wake-up sees slice − jiffies(totalrun) = 120 − 115 < 6: dec_bonus, restart.
    run_then_block(&mut ctx, &mut s, t, 0);
    sleep_then_wake(&mut ctx, &mut s, t, MS / 2);
    assert_eq!(s.bonus_of(t), 2);
    assert_eq!(s.totalrun_of(t), 0);
    assert_eq!(prio(&s, t), 118);
}

// ------------------------------------------------------------------ fork and yield

/// wake_up_new_task: the child gets no bonus (starts at 100 + nice + 20 with a full slice)
/// and the parent's next activation earns no sleep credit (PF_FORKED).
#[test]
fn fork_child_gets_no_bonus_and_parent_loses_its_next_sleep_credit() {
    let a = fair(Policy::Other, 0);
    let mut ctx = Ctx::for_test(1, 1000);
    let mut s = Staircase::new(1);
    let parent = ctx.add_task_for_test(a, CpuMask::first_n(1));
    s.task_new(&mut ctx, parent, None);
    s.enqueue(&mut ctx, C0, parent, EnqueueKind::New);
    run(&mut ctx, &mut s, parent);
    for _ in 0..4 {
        run_then_block(&mut ctx, &mut s, parent, MS);
        sleep_then_wake(&mut ctx, &mut s, parent, 50 * MS);
        run(&mut ctx, &mut s, parent);
    }
    assert_eq!(s.bonus_of(parent), 4);
    let child = ctx.add_task_for_test(a, CpuMask::first_n(1));
    s.task_new(&mut ctx, child, Some(parent));
    s.enqueue(&mut ctx, C0, child, EnqueueKind::New);
    assert_eq!(s.bonus_of(child), 0);
    assert_eq!(prio(&s, child), 120);
    assert_eq!(s.slices_of(child), (120, 6));
    // Parent runs 1 ms, sleeps long: no bonus, totalrun kept (continue_slice).
    run_then_block(&mut ctx, &mut s, parent, MS);
    sleep_then_wake(&mut ctx, &mut s, parent, 500 * MS);
    assert_eq!(s.bonus_of(parent), 4);
    assert_eq!(s.slices_of(parent).0, 119);
    run(&mut ctx, &mut s, parent);
    // The flag is cleared by that activation: the next sleep counts again.
    run_then_block(&mut ctx, &mut s, parent, MS);
    sleep_then_wake(&mut ctx, &mut s, parent, 500 * MS);
    assert_eq!(s.bonus_of(parent), 5);
}

/// sys_sched_yield: a non-RT task is requeued at MIN_USER_PRIO (139) with a refilled
/// slice and a new rr_interval; it re-enters its staircase one stair below the top after
/// one rr_interval. (The seed slide's "dynamic priority to best" is the refilled slice; the
/// patch's requeue priority is 139.) RT tasks go to the tail of their own priority.
#[test]
fn yield_requeues_at_139_with_a_full_slice() {
    let a = fair(Policy::Other, 0);
    let (mut ctx, mut s, ts) = setup(1000, &[a, a]);
    let (y, other) = (ts[0], ts[1]);
    s.enqueue(&mut ctx, C0, y, EnqueueKind::New);
    s.enqueue(&mut ctx, C0, other, EnqueueKind::New);
    run(&mut ctx, &mut s, y);
    for _ in 0..3 {
        tick(&mut ctx, &mut s, y);
    }
    s.yield_task(&mut ctx, C0, y);
    assert_eq!(prio(&s, y), 139);
    assert_eq!(s.slices_of(y), (120, 6));
    assert_eq!(s.pick_next(&mut ctx, C0), Some(other));
    run(&mut ctx, &mut s, other);
    // Alone again: y runs from 139; after one rr_interval it requeues at 121.
    s.dequeue(&mut ctx, C0, other, DequeueKind::Exit);
    assert_eq!(s.pick_next(&mut ctx, C0), Some(y));
    run(&mut ctx, &mut s, y);
    for _ in 0..6 {
        tick(&mut ctx, &mut s, y);
    }
    assert_eq!(prio(&s, y), 121);

    let (mut ctx, mut s, ts) = setup(1000, &[rt(Policy::Fifo, 5), rt(Policy::Fifo, 5)]);
    for &t in &ts {
        s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    }
    run(&mut ctx, &mut s, ts[0]);
    s.yield_task(&mut ctx, C0, ts[0]);
    assert_eq!(prio(&s, ts[0]), 94);
    assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[1]));
}

// ------------------------------------------------------------------ preemption, tunables

#[test]
fn wakeup_preempts_only_for_a_strictly_better_dynamic_prio() {
    // A hog runs at its top stair 120 (no tick charged yet). A waker that ran 10 ms and
    // slept 2 ms continues its slice at 121: no preemption. One that ran 1 ms and slept
    // 50 ms gains a bonus point → 119 < 120: preemption (TASK_PREEMPTS_CURR, strict).
    let a = fair(Policy::Other, 0);
    for (ran, slept, want_prio, preempts) in
        [(10 * MS, 2 * MS, 121, false), (MS, 50 * MS, 119, true)]
    {
        let (mut ctx, mut s, ts) = setup(1000, &[a, a]);
        let (hog, w) = (ts[0], ts[1]);
        s.enqueue(&mut ctx, C0, w, EnqueueKind::New);
        run(&mut ctx, &mut s, w);
        run_then_block(&mut ctx, &mut s, w, ran);
        s.enqueue(&mut ctx, C0, hog, EnqueueKind::New);
        run(&mut ctx, &mut s, hog);
        assert!(!ctx.need_resched(C0));
        sleep_then_wake(&mut ctx, &mut s, w, slept);
        s.wakeup_preempt(&mut ctx, C0, w);
        assert_eq!(prio(&s, w), want_prio);
        assert_eq!(ctx.need_resched(C0), preempts);
    }
    // Equal priority never preempts.
    let (mut ctx, mut s, ts) = setup(1000, &[a, a]);
    s.enqueue(&mut ctx, C0, ts[0], EnqueueKind::New);
    run(&mut ctx, &mut s, ts[0]);
    s.enqueue(&mut ctx, C0, ts[1], EnqueueKind::New);
    s.wakeup_preempt(&mut ctx, C0, ts[1]);
    assert!(!ctx.need_resched(C0));
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
        let a = fair(Policy::Other, 0);
        let (mut ctx, mut s, ts) = setup(1000, &[a]);
        s.set_param(param, if param == "interactive" { "0" } else { "1" })
            .unwrap();
        let t = ts[0];
        s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
        run(&mut ctx, &mut s, t);
        for _ in 0..3 {
            run_then_block(&mut ctx, &mut s, t, MS);
            sleep_then_wake(&mut ctx, &mut s, t, 500 * MS);
            run(&mut ctx, &mut s, t);
        }
        assert_eq!(prio(&s, t), want_prio, "{param}");
        assert_eq!(s.slices_of(t), (20 * rr, rr), "{param}");
    }
}

#[test]
fn batch_tasks_never_use_their_bonus() {
    let (mut ctx, mut s, ts) = setup(1000, &[fair(Policy::Batch, 0)]);
    let t = ts[0];
    s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
    run(&mut ctx, &mut s, t);
    for _ in 0..3 {
        run_then_block(&mut ctx, &mut s, t, MS);
        sleep_then_wake(&mut ctx, &mut s, t, 500 * MS);
        run(&mut ctx, &mut s, t);
    }
    assert_eq!(prio(&s, t), 120);
}

// ------------------------------------------------------------------ SMP

/// move_tasks (simplified): an idle CPU pulls half the difference from the busiest CPU,
/// scanning from the best priority, never the running task, respecting affinity.
#[test]
fn newidle_balance_pulls_best_prio_movable_tasks() {
    use schedlab_sim::sched::BalanceKind;
    let mut ctx = Ctx::for_test(2, 1000);
    let mut s = Staircase::new(2);
    let mut ts = Vec::new();
    for (i, nice) in [0, 5, -5, 10].into_iter().enumerate() {
        // Task 3 may only run on CPU 0.
        let aff = if i == 3 {
            CpuMask::first_n(1)
        } else {
            CpuMask::first_n(2)
        };
        let t = ctx.add_task_for_test(fair(Policy::Other, nice), aff);
        s.task_new(&mut ctx, t, None);
        s.enqueue(&mut ctx, C0, t, EnqueueKind::New);
        ts.push(t);
    }
    // CPU 0 runs the nice -5 task (prio 115); queued: 120, 125, 130 (pinned).
    assert_eq!(s.pick_next(&mut ctx, C0), Some(ts[2]));
    ctx.set_curr_for_test(C0, Some(ts[2]));
    let c1 = CpuId(1);
    s.balance(&mut ctx, c1, BalanceKind::NewIdle);
    // 4 vs 0 → move 2: the best movable ones, 120 then 125.
    assert_eq!(s.pick_next(&mut ctx, c1), Some(ts[0]));
    let mut on1 = Vec::new();
    s.for_each_queued(&mut |c, t| {
        if c == c1 {
            on1.push(t)
        }
    });
    on1.sort();
    assert_eq!(on1, vec![ts[0], ts[1]]);
    assert_eq!(ctx.task(ts[0]).cpu, c1);
    // Balanced now: nothing more moves.
    s.balance(&mut ctx, c1, BalanceKind::NewIdle);
    let mut n1 = 0;
    s.for_each_queued(&mut |c, _| n1 += (c == c1) as usize);
    assert_eq!(n1, 2);
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

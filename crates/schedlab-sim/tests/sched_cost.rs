//! The scheduler-cost study (`instruments::sched_cost`): the work each policy counts per
//! decision against the number of runnable tasks, pinned to the complexity each policy's
//! header states. Counted work only: it is exact and deterministic (wall ns never appear in
//! a test).

use schedlab_sim::{sched_cost, sched_cost_sweep, CostClass, CostConfig};

/// Sizes for the growth tests: three decades, so O(log N) and O(N) separate clearly.
const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

fn cfg(class: CostClass) -> CostConfig {
    CostConfig {
        decisions: 1_000,
        class,
        subtract_harness: false,
        ..Default::default()
    }
}

/// Counted work per decision at each of `SIZES`.
fn work(policy: &str, class: CostClass) -> Vec<f64> {
    sched_cost_sweep(policy, &cfg(class), &SIZES)
        .unwrap_or_else(|e| panic!("{policy}: {e}"))
        .iter()
        .map(|c| c.work_per_decision)
        .collect()
}

/// Bounded: no size costs more than 25% over the smallest. O(log N) growth over three
/// decades (×4 in tree depth) or O(N) (×1000) fails this.
fn assert_bounded(policy: &str, class: CostClass) {
    let w = work(policy, class);
    assert!(w[0] > 0.0, "{policy} counts no work: {w:?}");
    for (n, x) in SIZES.iter().zip(&w) {
        assert!(*x <= 1.25 * w[0], "{policy} {class:?} at N={n}: {w:?}");
    }
}

/// Header complexities: linux-o1 and nicksched ("O(1) active/expired priority arrays",
/// a bitmap find-first-set and a list head), staircase (the same arrays), fp ("per-priority
/// intrusive list with a priority bitmap").
#[test]
fn bounded_policies_do_constant_work() {
    for p in ["linux-o1", "nicksched", "staircase", "fp"] {
        assert_bounded(p, CostClass::Other);
    }
}

/// Linear: BFS 0.4xx walks the whole list of the picked level ("O(n) lookup of all tasks
/// in the global runqueue", bfs.rs header), and example-fifo searches its one queue on
/// every dequeue. Each decade of N multiplies the work by several times (×10 asymptotically).
#[test]
fn linear_scanners_grow_linearly() {
    for p in ["bfs", "example-fifo"] {
        let w = work(p, CostClass::Other);
        for i in 1..w.len() {
            assert!(w[i] > 5.0 * w[i - 1], "{p}: not linear {w:?}");
        }
    }
}

/// CFS ("enqueue/dequeue/pick O(log n)", linux_cfs.rs header), EEVDF ("insert/remove/
/// pick O(log n) expected") and MuQSS (skip lists, ⌈log2(n+1)⌉ per insertion or removal):
/// every decade of N adds levels — at least one work unit per decade — but far less than
/// linear growth would (×10 per decade).
#[test]
fn logarithmic_queues_grow_logarithmically() {
    for p in ["linux-cfs", "linux-eevdf", "muqss"] {
        let w = work(p, CostClass::Other);
        for i in 1..w.len() {
            let step = w[i] - w[i - 1];
            assert!(step >= 1.0, "{p}: no log growth {w:?}");
            assert!(w[i] < 3.0 * w[i - 1], "{p}: faster than log {w:?}");
        }
        assert!(
            w[3] < 4.0 * w[1],
            "{p}: 100 → 10 000 should be ~×2, not ×100: {w:?}"
        );
    }
}

/// The Linux RT class under CFS/EEVDF ("enqueue/dequeue/pick O(1) (two-word bitmap)",
/// linux_rt.rs header) and fp with SCHED_FIFO tasks spread over 99 priorities: bounded.
#[test]
fn rt_ready_queues_do_constant_work() {
    for p in ["linux-cfs", "linux-eevdf", "fp", "linux-o1"] {
        assert_bounded(p, CostClass::Fifo);
    }
}

/// Counted work is a pure function of the policy, its params and the harness: two runs
/// agree exactly, on one CPU and on four.
#[test]
fn counted_work_is_deterministic() {
    for cpus in [1, 4] {
        let c = CostConfig {
            cpus,
            ..cfg(CostClass::Other)
        };
        for p in ["linux-cfs", "bfs", "muqss"] {
            let a = sched_cost(p, &c, 500).unwrap();
            let b = sched_cost(p, &c, 500).unwrap();
            assert_eq!(a.work_units, b.work_units, "{p} on {cpus} CPUs");
            assert_eq!(a.nr_runnable, 500);
            assert_eq!(a.decisions, 1_000);
        }
    }
}

/// Every policy takes 100 000 runnable tasks (the study's largest N), and the harness's
/// end check (every runnable task still queued or current, on its CPU) passes.
#[test]
fn every_policy_handles_100k_tasks() {
    let c = CostConfig {
        decisions: 50,
        ..cfg(CostClass::Other)
    };
    for e in schedlab_sim::schedulers()
        .into_iter()
        .filter(|e| e.available)
    {
        let p = sched_cost(e.info.name, &c, 100_000).unwrap_or_else(|err| panic!("{err}"));
        assert!(p.work_units > 0, "{}", e.info.name);
    }
}

/// Parameters reach the policy: an unknown one is refused by name, a valid one accepted.
#[test]
fn params_pass_through() {
    let mut c = cfg(CostClass::Other);
    c.params = vec![("no_such_knob".into(), "1".into())];
    let e = sched_cost("linux-o1", &c, 10).unwrap_err();
    assert!(
        e.bad_input && e.message.contains("--param no_such_knob=1"),
        "{e}"
    );
    c.params = vec![("rr_interval_ms".into(), "0".into())];
    let e = sched_cost("bfs", &c, 10).unwrap_err();
    assert!(e.bad_input && e.message.contains("rr_interval_ms"), "{e}");
    // Accepted, with the harness baseline subtracted (the baseline takes no params).
    c.params = vec![("rr_interval_ms".into(), "3".into())];
    c.subtract_harness = true;
    let p = sched_cost("bfs", &c, 10).unwrap();
    assert_eq!(p.params, c.params);
}

#[test]
fn bad_input_is_reported() {
    let c = cfg(CostClass::Other);
    let e = sched_cost("nope", &c, 10).unwrap_err();
    assert!(
        e.bad_input && e.message.contains("unknown scheduler"),
        "{e}"
    );
    let e = sched_cost("fp", &c, 0).unwrap_err();
    assert!(e.bad_input && e.message.contains("runnable"), "{e}");
    let e = sched_cost(
        "fp",
        &CostConfig {
            decisions: 0,
            ..c.clone()
        },
        10,
    )
    .unwrap_err();
    assert!(e.bad_input && e.message.contains("decisions"), "{e}");
    let e = sched_cost(
        "fp",
        &CostConfig {
            cpus: 0,
            ..c.clone()
        },
        10,
    )
    .unwrap_err();
    assert!(e.bad_input && e.message.contains("cpus"), "{e}");
    let e = sched_cost("fp", &CostConfig { hz: 7, ..c }, 10).unwrap_err();
    assert!(e.bad_input && e.message.contains("hz"), "{e}");
    let e = CostClass::parse("rr").unwrap_err();
    assert!(e.bad_input && e.message.contains("class"), "{e}");
}

/// `--param readyq=` reaches fp's `schedlab-rtq` queue and its counted steps show in the
/// study (fp.rs header: "every queue operation charges `ctx.count_work` with the steps it
/// really took"). With every task at one priority, the single sorted list walks past all
/// of them to reach the tail (seed 002's single ready queue: O(N)); the per-priority lists
/// with a bitmap stay bounded; the tree grows with its depth (sub-linear).
#[test]
fn readyq_back_ends_show_in_fp_cost() {
    let with = |rq: &str| {
        let mut c = cfg(CostClass::Other);
        c.params = vec![("readyq".into(), rq.into())];
        sched_cost_sweep("fp", &c, &SIZES)
            .unwrap_or_else(|e| panic!("{rq}: {e}"))
            .iter()
            .map(|p| p.work_per_decision)
            .collect::<Vec<_>>()
    };
    let single = with("single-list");
    assert!(
        single[3] > 300.0 * single[0],
        "single-list not O(N): {single:?}"
    );
    for rq in ["bitmap-lists", "two-level-bitmap"] {
        let w = with(rq);
        assert!(
            w.iter().all(|&x| x <= 1.25 * w[0]),
            "{rq} not bounded: {w:?}"
        );
    }
    let tree = with("tree");
    assert!(
        tree[3] > tree[0] + 3.0 && tree[3] < 10.0 * tree[0],
        "tree: {tree:?}"
    );
}

/// Seed 001's claim, as the sources give it: 4BSD's `schedcpu` walks every thread once a
/// second (`FOREACH_PROC_IN_SYSTEM`, sched_4bsd.c), one unit per live thread; the rest of
/// a decision (one global run queue of 64 bitmap-indexed queues) is bounded. So with the
/// harness's one tick per decision on one CPU, N runnable tasks (and its 8 sleepers) add
/// exactly (N + 8) units per second crossed: the work at two sizes differs by the
/// difference in threads times the seconds the measured decisions span, the same count
/// at every pair of sizes. ULE (both versions) walks no such list: bounded.
#[test]
fn freebsd_4bsd_schedcpu_walks_every_thread_and_ule_does_not() {
    let units = |n: usize| {
        sched_cost("freebsd-4bsd", &cfg(CostClass::Other), n)
            .unwrap()
            .work_units
    };
    let (a, b, c) = (units(10), units(1_000), units(10_000));
    assert_eq!((b - a) % 990, 0, "{a} {b} {c}");
    let seconds = (b - a) / 990;
    // 1 000 measured decisions at one tick each span one second, crossed once or twice.
    assert!((1..=2).contains(&seconds), "{a} {b} {c}");
    assert_eq!(c - a, 9_990 * seconds, "{a} {b} {c}");
    for p in ["freebsd-ule5", "freebsd-ule"] {
        assert_bounded(p, CostClass::Other);
    }
}

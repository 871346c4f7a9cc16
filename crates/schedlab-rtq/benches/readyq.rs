//! criterion benchmarks of the ready-queue back ends (seed 002): act_tsk, chg_pri
//! and rot_rdq against the number of ready tasks N, at the priority that is the single
//! list's worst case (the lowest, so it walks every ready task).
//!
//! Scenario (the same as `rtq-probe`, docs/readyq.md): 16 levels; task i is ready at
//! priority i % 16, pushed in index order; act_tsk activates task N at priority 15;
//! chg_pri moves the head of the dispatch order to priority 15; rot_rdq rotates priority
//! 15. Each operation ends with `peek`, as the kernel picks the next task. The queue is
//! rebuilt outside the measurement before every batch element (`iter_batched_ref`).
//!
//! `make bench` runs these with short warm-up and measurement times; the full study with
//! averages over priorities, worst cases, cold caches and instruction counts is
//! `schedlab readyq`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion};
use schedlab_rtq::{
    BitmapLists, Fixed, Prio, ReadyQueue, SingleList, TaskIdx, Tree, TwoLevelBitmap,
};

const LEVELS: usize = 16;
type Store = Fixed<256, LEVELS, 1>;
const WORST_PRIO: Prio = (LEVELS - 1) as Prio;
const NS: [usize; 5] = [1, 5, 10, 32, 128];

fn populate<Q: ReadyQueue>(mut q: Q, n: usize) -> Q {
    for i in 0..n {
        q.push_tail(i as TaskIdx, (i % LEVELS) as Prio);
    }
    q
}

fn bench_backend<Q: ReadyQueue>(c: &mut Criterion, make: fn() -> Q) {
    for (op, run) in [
        ("act_tsk", act as fn(&mut Q, usize) -> Option<TaskIdx>),
        ("chg_pri", chg),
        ("rot_rdq", rot),
    ] {
        let mut g = c.benchmark_group(format!("{op}/{}", Q::NAME));
        for n in NS {
            g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
                b.iter_batched_ref(
                    || populate(make(), n),
                    |q| black_box(run(q, n)),
                    BatchSize::SmallInput,
                )
            });
        }
        g.finish();
    }
}

fn act<Q: ReadyQueue>(q: &mut Q, n: usize) -> Option<TaskIdx> {
    q.push_tail(black_box(n as TaskIdx), black_box(WORST_PRIO));
    q.peek()
}

fn chg<Q: ReadyQueue>(q: &mut Q, _n: usize) -> Option<TaskIdx> {
    // task 0 (priority 0) heads the dispatch order
    q.change_priority(black_box(0), black_box(WORST_PRIO));
    q.peek()
}

fn rot<Q: ReadyQueue>(q: &mut Q, _n: usize) -> Option<TaskIdx> {
    q.rotate(black_box(WORST_PRIO));
    q.peek()
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300))
        .sample_size(10)
        .configure_from_args();
    bench_backend(&mut c, || SingleList::<Store>::new(LEVELS));
    bench_backend(&mut c, || BitmapLists::<Store>::new(LEVELS));
    bench_backend(&mut c, || TwoLevelBitmap::<Store>::new(LEVELS));
    bench_backend(&mut c, || Tree::<Store>::new(LEVELS));
    c.final_summary();
}

//! The measured service calls follow TOPPERS/JSP 1.4's `schedtsk` rules (`kernel/task.c`
//! v1.10): which of them search the ready queue for the next task, and when.
//!
//! A wrapper queue counts the searches (`peek`, `top_prio`: `search_schedtsk`) the kernel
//! asks of the JSP-searched bitmap lists; the kernel code is the one the measured entry
//! points run.

use std::cell::Cell;

use proptest::prelude::*;
use schedlab_rtq::{Prio, ReadyQueue, TaskIdx};
use schedlab_rtq_probe::backends::{for_each_backend, Backend, BitmapListsJspQ, Visitor};
use schedlab_rtq_probe::kernel::Kernel;
use schedlab_rtq_probe::plan::{arguments, populate, Op, Plan, LEVELS};

/// A ready queue that counts the searches for the highest-priority task asked of it.
struct Counted<Q> {
    inner: Q,
    searches: Cell<u32>,
}

impl<Q: ReadyQueue> Counted<Q> {
    fn new(inner: Q) -> Self {
        Counted {
            inner,
            searches: Cell::new(0),
        }
    }
}

impl<Q: ReadyQueue> ReadyQueue for Counted<Q> {
    const NAME: &'static str = Q::NAME;
    fn levels(&self) -> usize {
        self.inner.levels()
    }
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        self.inner.push_tail(t, prio)
    }
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        self.inner.push_head(t, prio)
    }
    fn remove(&mut self, t: TaskIdx) {
        self.inner.remove(t)
    }
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        self.inner.change_priority(t, new)
    }
    fn rotate(&mut self, prio: Prio) {
        self.inner.rotate(prio)
    }
    fn peek(&self) -> Option<TaskIdx> {
        self.searches.set(self.searches.get() + 1);
        self.inner.peek()
    }
    fn top_prio(&self) -> Option<Prio> {
        self.searches.set(self.searches.get() + 1);
        self.inner.top_prio()
    }
    fn is_queued(&self, t: TaskIdx) -> bool {
        self.inner.is_queued(t)
    }
    fn prio_of(&self, t: TaskIdx) -> Option<Prio> {
        self.inner.prio_of(t)
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn for_each(&self, f: impl FnMut(TaskIdx, Prio) -> bool) {
        self.inner.for_each(f)
    }
    fn last_steps(&self) -> u32 {
        self.inner.last_steps()
    }
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        self.inner.prev_in_prio(t)
    }
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        self.inner.next_in_prio(t)
    }
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        self.inner.insert_after(t, after)
    }
    fn check_invariants(&self) {
        self.inner.check_invariants()
    }
}

type Jsp = Kernel<Counted<BitmapListsJspQ>>;

/// The JSP-searched lists with tasks 0..n ready as the plan makes them.
fn jsp_kernel(n: usize) -> Jsp {
    let mut k = Kernel::new(Counted::new(BitmapListsJspQ::new(LEVELS)));
    populate(&mut k, n);
    k.queue().searches.set(0);
    k
}

/// Runs one plan case through the kernel (as the measured entry point does) and returns
/// the number of searches it made.
fn searches_of(op: Op, n: usize, t: TaskIdx, p: Prio) -> (u32, Jsp) {
    let mut k = jsp_kernel(n);
    let next = match op {
        Op::ActTsk => k.make_runnable(t, p),
        Op::ChgPri => k.change_priority(t, p),
        Op::RotRdq => k.rotate_ready_queue(p),
    };
    let searches = k.queue().searches.get();
    assert_eq!(next, k.queue().inner.peek(), "{op:?} N={n} p={p}: schedtsk");
    (searches, k)
}

const NS: [usize; 8] = [0, 1, 2, 5, 16, 17, 40, 254];

#[test]
fn building_the_population_never_searches() {
    let mut k = Kernel::new(Counted::new(BitmapListsJspQ::new(LEVELS)));
    populate(&mut k, 254);
    assert_eq!(k.queue().searches.get(), 0, "make_runnable compares, l.191");
    assert_eq!(k.schedtsk(), Some(0));
}

#[test]
fn act_tsk_never_searches_whatever_the_priority() {
    // make_runnable (task.c l.181-196): a comparison with schedtsk's priority
    for n in NS {
        for case in Plan::cases(Op::ActTsk) {
            let (t, p) = arguments(Op::ActTsk, case, n);
            let (searches, k) = searches_of(Op::ActTsk, n, t, p);
            assert_eq!(searches, 0, "act_tsk N={n} p={p}");
            // the new task is schedtsk only when none was ready (every p is then the best)
            assert_eq!(k.schedtsk() == Some(t), n == 0, "act_tsk N={n} p={p}");
        }
    }
    // a task of higher priority than schedtsk takes its place, still without a search
    let mut k = Kernel::new(Counted::new(BitmapListsJspQ::new(LEVELS)));
    k.make_runnable(0, 5);
    k.make_runnable(1, 9);
    assert_eq!(k.make_runnable(2, 3), Some(2));
    assert_eq!(k.make_runnable(3, 3), Some(2), "equal priority: behind it");
    assert_eq!(k.queue().searches.get(), 0);
}

#[test]
fn rot_rdq_never_searches_and_takes_the_rotated_queues_new_head() {
    // rotate_ready_queue (task.c l.336-351)
    for n in NS.into_iter().filter(|&n| n > 0) {
        for case in Plan::cases(Op::RotRdq) {
            let (t, p) = arguments(Op::RotRdq, case, n);
            let (searches, k) = searches_of(Op::RotRdq, n, t, p);
            assert_eq!(searches, 0, "rot_rdq N={n} p={p}");
            // task 0 is schedtsk; rotating priority 0 with a second task there moves it back
            let moved = p == 0 && n > LEVELS;
            let want = if moved { LEVELS as TaskIdx } else { 0 };
            assert_eq!(k.schedtsk(), Some(want), "rot_rdq N={n} p={p}");
        }
    }
}

#[test]
fn chg_pri_searches_exactly_when_schedtsk_does_not_rise() {
    // change_priority (task.c l.298-324): search iff tcb == schedtsk && newpri >= oldpri
    for n in NS.into_iter().filter(|&n| n > 0) {
        for case in Plan::cases(Op::ChgPri) {
            let (t, p) = arguments(Op::ChgPri, case, n);
            let k0 = jsp_kernel(n);
            let was_sched = k0.schedtsk() == Some(t);
            let old = k0.queue().prio_of(t).unwrap();
            let (searches, _) = searches_of(Op::ChgPri, n, t, p);
            let want = u32::from(was_sched && p >= old);
            assert_eq!(searches, want, "chg_pri N={n} {case:?}");
        }
    }
    // schedtsk raised: it stays, no search; another task raised above it: no search
    let mut k = Kernel::new(Counted::new(BitmapListsJspQ::new(LEVELS)));
    k.make_runnable(0, 5);
    k.make_runnable(1, 9);
    assert_eq!(k.change_priority(0, 2), Some(0));
    assert_eq!(k.change_priority(1, 1), Some(1));
    assert_eq!(
        k.change_priority(0, 7),
        Some(1),
        "not schedtsk, not above it"
    );
    assert_eq!(k.queue().searches.get(), 0);
    // schedtsk lowered below another task: one search finds it
    assert_eq!(k.change_priority(1, 8), Some(0));
    assert_eq!(k.queue().searches.get(), 1);
}

#[test]
fn make_non_runnable_searches_only_when_schedtsks_queue_empties() {
    // make_non_runnable (task.c l.210-232)
    let mut k = Kernel::new(Counted::new(BitmapListsJspQ::new(LEVELS)));
    for (t, p) in [(0, 2), (1, 2), (2, 6)] {
        k.make_runnable(t, p);
    }
    assert_eq!(k.make_non_runnable(2), Some(0), "not schedtsk");
    assert_eq!(k.make_non_runnable(0), Some(1), "the next of its priority");
    assert_eq!(k.queue().searches.get(), 0);
    k.make_runnable(2, 6);
    assert_eq!(
        k.make_non_runnable(1),
        Some(2),
        "its queue empties: a search"
    );
    assert_eq!(k.queue().searches.get(), 1);
    assert_eq!(k.make_non_runnable(2), None, "the last ready task");
}

/// Random kernel operations on every back end: `schedtsk` is always the queue's
/// highest-priority task, so the searches it skips were never needed.
struct RandomOps<'a>(&'a [(u8, u8, u8)]);
impl Visitor for RandomOps<'_> {
    fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
        let mut k = Kernel::new((b.make)());
        let tasks = 24;
        for &(kind, task, prio) in self.0 {
            let t = TaskIdx::from(task) % tasks;
            let p = Prio::from(prio) % LEVELS as Prio;
            let queued = k.queue().is_queued(t);
            match (kind % 4, queued) {
                (0, false) | (1, false) => {
                    k.make_runnable(t, p);
                }
                (0, true) | (1, true) => {
                    k.change_priority(t, p);
                }
                (2, true) => {
                    k.make_non_runnable(t);
                }
                _ => {
                    k.rotate_ready_queue(p);
                }
            }
            assert_eq!(k.schedtsk(), k.queue().peek(), "{}", b.name);
        }
        k.queue().check_invariants();
    }
}

proptest! {
    #[test]
    fn schedtsk_is_always_the_highest_priority_ready_task(
        ops in proptest::collection::vec((0u8..4, 0u8..24, 0u8..16), 1..200)
    ) {
        for_each_backend(&mut RandomOps(&ops));
    }
}

//! RTOS ready queues with μITRON 4.0 semantics and interchangeable back ends (seed 002:
//! "performance comparison of ready-queue structures in an ITRON kernel").
//!
//! One trait, [`ReadyQueue`], and four back ends, each in its own file with its primary
//! source in the header comment:
//!
//! | back end | structure | source |
//! |---|---|---|
//! | [`SingleList`] | one doubly linked list in priority order, linear insertion search | seed 002's "single ready queue"; Zephyr `CONFIG_SCHED_DUMB`/`SIMPLE` |
//! | [`BitmapLists`] | one FIFO list per priority + bitmap, find-first-set over the words | TOPPERS/JSP & ASP `ready_queue[]`/`ready_primap`; FreeRTOS port-optimised selection; Linux `rt_prio_array`; Zephyr `CONFIG_SCHED_MULTIQ` |
//! | [`TwoLevelBitmap`] | the same lists, a summary word over the bitmap words (P up to 4096) | two-level find-first-set as used for large priority ranges |
//! | [`Tree`] | AVL tree keyed by (priority, arrival sequence) in a node arena | Zephyr `CONFIG_SCHED_SCALABLE` (`z_priq_rb_*`, red-black there) |
//!
//! For seed 002's comparison two more, written as the seed's C would be: [`LeanList`] (the
//! single queue on one circular list with a header node, no counters, at most 255 tasks) and
//! [`BitmapListsJsp`] (the bitmap lists searched with TOPPERS/JSP's software `bitmap_search`,
//! [`JspSearch`], for CPUs without a find-first-set instruction). They are not in
//! `AnyQueue`: the simulator has no use for them.
//!
//! Semantics (μITRON 4.0, as TOPPERS/JSP implements them): priority 0 is the highest; a task made ready goes
//! to the TAIL of its priority (FIFO within a priority); `push_head` lets a preempted
//! running task keep its precedence; `change_priority` (chg_pri) moves a ready task to the
//! tail of its new priority; `rotate` (rot_rdq) moves the head of a priority to its tail
//! and does nothing when fewer than two tasks are there.
//!
//! Memory: every back end is generic over a [`Storage`]: [`Fixed`] (arrays sized by const
//! generics, `no_std` without allocation) or, with the `alloc` feature, [`Heap`] (vectors
//! sized at construction and by `grow`, never inside an operation). [`AnyQueue`] (alloc)
//! picks the back end at run time.
//!
//! Cost accounting: after every operation [`ReadyQueue::last_steps`] reports the work it
//! really did — list nodes walked, bitmap words scanned, tree nodes visited — so that a
//! simulator can charge it as scheduler cost.
//!
//! ```
//! use schedlab_rtq::{BitmapLists, Fixed, ReadyQueue, SingleList};
//! // 8 task slots, 16 priorities, one bitmap word; no allocation.
//! let mut q: BitmapLists<Fixed<8, 16, 1>> = BitmapLists::new(16);
//! q.push_tail(0, 5);
//! q.push_tail(1, 5);
//! q.push_tail(2, 3);
//! assert_eq!(q.peek(), Some(2));
//! q.rotate(5); // rot_rdq: 0 goes behind 1
//! q.remove(2);
//! assert_eq!(q.peek(), Some(1));
//! let mut s: SingleList<Fixed<8, 16, 1>> = SingleList::new(16);
//! s.push_tail(0, 9);
//! s.push_tail(1, 9);
//! assert_eq!(s.last_steps(), 2); // walked past task 0 to the end of the list
//! ```
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[cfg(feature = "alloc")]
mod any;
mod bitmap_lists;
mod jsp_search;
mod lean_list;
mod single_list;
mod storage;
mod tree;
mod two_level_bitmap;

#[cfg(feature = "alloc")]
pub use any::{AnyQueue, Kind};
pub use bitmap_lists::{BitmapLists, BitmapListsJsp, FlatBitmap, PrioBitmap, PrioLists};
pub use jsp_search::{jsp_bitmap_search, FirstSet, HardwareFfs, JspSearch, NIBBLE_LOWEST_BIT};
pub use lean_list::{LeanList, LEAN_CAPACITY};
pub use single_list::SingleList;
#[cfg(feature = "alloc")]
pub use storage::Heap;
pub use storage::{Fixed, Storage};
pub use tree::Tree;
pub use two_level_bitmap::{TwoLevel, TwoLevelBitmap};

/// Index of a task in the caller's task table (0..capacity).
pub type TaskIdx = u32;
/// Priority, 0 = highest (μITRON's TMIN_TPRI maps to 0). Range 0..levels.
pub type Prio = u16;

/// The "no task" link value in the intrusive lists and the tree.
pub(crate) const NIL: u32 = u32::MAX;

/// A ready queue: tasks ordered by priority, FIFO within a priority (μITRON 4.0).
///
/// Complexities are stated on each back end's methods in N (ready tasks) and P (levels).
/// Misuse (pushing a queued task, removing one that is not queued, a priority out of
/// range, a task index beyond capacity) panics in debug builds.
pub trait ReadyQueue {
    /// Short stable name of the back end: "single-list", "bitmap-lists", "two-level-bitmap", "tree".
    const NAME: &'static str;
    /// Number of priority levels this queue was built with.
    fn levels(&self) -> usize;
    /// Number of task slots (task indices 0..capacity).
    fn capacity(&self) -> usize;
    /// Make `t` ready at the TAIL of `prio` (act_tsk, wup_tsk, rsm_tsk: make_runnable).
    fn push_tail(&mut self, t: TaskIdx, prio: Prio);
    /// Make `t` ready at the HEAD of `prio` (a preempted running task keeps precedence;
    /// Linux ENQUEUE_HEAD).
    fn push_head(&mut self, t: TaskIdx, prio: Prio);
    /// Remove a ready task (wait, suspend, terminate: make_non_runnable).
    fn remove(&mut self, t: TaskIdx);
    /// chg_pri: a ready task moves to the tail of its new priority (also when unchanged).
    fn change_priority(&mut self, t: TaskIdx, new: Prio);
    /// rot_rdq: the head task of `prio` moves to that priority's tail (no-op if < 2 tasks there).
    fn rotate(&mut self, prio: Prio);
    /// The highest-priority ready task (head of the best non-empty priority), if any.
    fn peek(&self) -> Option<TaskIdx>;
    /// The best non-empty priority.
    fn top_prio(&self) -> Option<Prio>;
    /// Is `t` in the queue?
    fn is_queued(&self, t: TaskIdx) -> bool;
    /// The priority `t` is queued at, if queued.
    fn prio_of(&self, t: TaskIdx) -> Option<Prio>;
    /// Number of ready tasks.
    fn len(&self) -> usize;
    /// No ready task?
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Visit ready tasks in dispatch order (priority, then FIFO); stop when `f` returns false.
    fn for_each(&self, f: impl FnMut(TaskIdx, Prio) -> bool);

    // --- Extensions (API-NOTES.md): cost reporting and what Linux's rt_prio_array needs.

    /// Work done by the most recent operation (including `peek`/`top_prio`): list nodes
    /// walked, bitmap words scanned or tree nodes visited; at least 1.
    fn last_steps(&self) -> u32;
    /// The task just before `t` in its priority's FIFO order (None if `t` heads it or is
    /// not queued).
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx>;
    /// The task just after `t` in its priority's FIFO order.
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx>;
    /// Insert the unqueued `t` right after the queued `after`, at `after`'s priority
    /// (Linux restores a DEQUEUE_SAVE'd task to its old place this way).
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx);
    /// Check every invariant of the structure (O(N + P)); panics with a message on the
    /// first violation. For tests; operations check their local invariants in debug builds.
    fn check_invariants(&self);
}

/// Shared helpers of the back ends.
pub(crate) mod util {
    use core::cell::Cell;

    /// The step counter behind `last_steps`: a `Cell` so that read-only operations
    /// (peek, top_prio) can report their work too.
    #[derive(Debug, Default, Clone)]
    pub struct Steps(Cell<u32>);

    impl Steps {
        #[inline]
        pub fn set(&self, n: u32) {
            self.0.set(n);
        }
        #[inline]
        pub fn get(&self) -> u32 {
            self.0.get()
        }
    }

    /// A task slot of the list back ends (single list, per-priority lists): doubly linked
    /// list links, the priority, and whether the task is queued.
    #[derive(Debug, Clone, Copy)]
    pub struct ListNode {
        pub next: u32,
        pub prev: u32,
        pub prio: super::Prio,
        pub queued: bool,
    }

    /// An unused list slot.
    pub const FREE_LIST_NODE: ListNode = ListNode {
        next: super::NIL,
        prev: super::NIL,
        prio: 0,
        queued: false,
    };

    /// What every back end's slot tells about its task.
    pub trait Slot {
        fn queued(&self) -> bool;
        fn prio(&self) -> super::Prio;
    }

    impl Slot for ListNode {
        #[inline]
        fn queued(&self) -> bool {
            self.queued
        }
        #[inline]
        fn prio(&self) -> super::Prio {
            self.prio
        }
    }

    /// `prio_of` over a slot array (`is_queued` is its `is_some`). O(1).
    #[inline]
    pub fn slot_prio<N: Slot>(nodes: &[N], t: super::TaskIdx) -> Option<super::Prio> {
        nodes.get(t as usize).filter(|n| n.queued()).map(Slot::prio)
    }
}

/// μITRON 4.0 semantics pinned on every back end (TOPPERS/ASP `kernel/task.c`, reference
/// §7.1): FIFO within a priority, chg_pri to the tail, rot_rdq no-op below two tasks,
/// push_head precedence.
#[cfg(test)]
mod tests {
    use super::*;

    type F = Fixed<8, 16, 1>;

    fn order<Q: ReadyQueue>(q: &Q) -> Vec<(TaskIdx, Prio)> {
        let mut v = Vec::new();
        q.for_each(|t, p| {
            v.push((t, p));
            true
        });
        v
    }

    fn fifo_within_a_priority<Q: ReadyQueue>(mut q: Q) {
        for (t, p) in [(0, 5), (1, 3), (2, 5), (3, 3), (4, 9)] {
            q.push_tail(t, p);
        }
        q.check_invariants();
        assert_eq!(order(&q), vec![(1, 3), (3, 3), (0, 5), (2, 5), (4, 9)]);
        assert_eq!((q.peek(), q.top_prio(), q.len()), (Some(1), Some(3), 5));
        q.remove(1);
        assert_eq!(
            q.peek(),
            Some(3),
            "the next of the same priority, in arrival order"
        );
        q.remove(3);
        assert_eq!((q.peek(), q.top_prio()), (Some(0), Some(5)));
        q.check_invariants();
    }

    fn chg_pri_goes_to_the_tail<Q: ReadyQueue>(mut q: Q) {
        for t in 0..4 {
            q.push_tail(t, 4);
        }
        // Unchanged priority: still behind its peers (change_priority l.380: newpri >= oldpri).
        q.change_priority(0, 4);
        assert_eq!(order(&q), vec![(1, 4), (2, 4), (3, 4), (0, 4)]);
        // Raised: tail of the new priority, behind a task already there.
        q.push_tail(5, 2);
        q.change_priority(2, 2);
        assert_eq!(order(&q), vec![(5, 2), (2, 2), (1, 4), (3, 4), (0, 4)]);
        assert_eq!(q.prio_of(2), Some(2));
        q.check_invariants();
    }

    fn rot_rdq<Q: ReadyQueue>(mut q: Q) {
        q.rotate(3); // empty priority: no-op
        assert!(q.is_empty());
        q.push_tail(0, 3);
        q.push_tail(1, 5);
        q.rotate(3); // a single task: no-op
        assert_eq!(order(&q), vec![(0, 3), (1, 5)]);
        q.push_tail(2, 3);
        q.push_tail(3, 3);
        q.rotate(3);
        assert_eq!(order(&q), vec![(2, 3), (3, 3), (0, 3), (1, 5)]);
        q.rotate(5);
        assert_eq!(q.peek(), Some(2));
        q.check_invariants();
    }

    fn push_head_keeps_precedence<Q: ReadyQueue>(mut q: Q) {
        q.push_tail(0, 7);
        q.push_tail(1, 7);
        q.push_head(2, 7); // a preempted running task goes back in front of its peers
        assert_eq!(order(&q), vec![(2, 7), (0, 7), (1, 7)]);
        q.push_tail(3, 6);
        assert_eq!(q.peek(), Some(3), "a higher priority still wins");
        q.remove(3);
        assert_eq!(q.peek(), Some(2));
        q.check_invariants();
    }

    fn neighbours_and_insert_after<Q: ReadyQueue>(mut q: Q) {
        for t in 0..3 {
            q.push_tail(t, 1);
        }
        q.push_tail(3, 0);
        assert_eq!((q.prev_in_prio(0), q.next_in_prio(0)), (None, Some(1)));
        assert_eq!((q.prev_in_prio(2), q.next_in_prio(2)), (Some(1), None));
        assert_eq!((q.prev_in_prio(3), q.next_in_prio(3)), (None, None));
        q.remove(1);
        q.insert_after(1, 0); // back to its old place
        assert_eq!(order(&q), vec![(3, 0), (0, 1), (1, 1), (2, 1)]);
        q.remove(2);
        q.insert_after(2, 1); // after the last: the tail
        assert_eq!(order(&q), vec![(3, 0), (0, 1), (1, 1), (2, 1)]);
        q.check_invariants();
    }

    fn steps_reported<Q: ReadyQueue>(mut q: Q) {
        for t in 0..8 {
            q.push_tail(t, 15 - t as Prio);
            assert!(q.last_steps() >= 1);
        }
        q.peek();
        assert!(q.last_steps() >= 1);
    }

    macro_rules! for_all_back_ends {
        ($($test:ident),*) => {$(
            #[test]
            fn $test() {
                super::tests::$test(SingleList::<F>::new(16));
                super::tests::$test(BitmapLists::<F>::new(16));
                super::tests::$test(BitmapListsJsp::<F>::new(16));
                super::tests::$test(LeanList::with_capacity(16, 8));
                super::tests::$test(TwoLevelBitmap::<F>::new(16));
                super::tests::$test(Tree::<F>::new(16));
            }
        )*};
    }

    mod each {
        use super::*;
        for_all_back_ends!(
            fifo_within_a_priority,
            chg_pri_goes_to_the_tail,
            rot_rdq,
            push_head_keeps_precedence,
            neighbours_and_insert_after,
            steps_reported
        );
    }

    /// The single list walks the list to insert at the tail; the bitmap lists do not.
    #[test]
    fn single_list_walks_bitmap_lists_do_not() {
        let mut s = SingleList::<Fixed<64, 16, 1>>::new(16);
        let mut b = BitmapLists::<Fixed<64, 16, 1>>::new(16);
        for t in 0..40 {
            s.push_tail(t, 3);
            b.push_tail(t, 3);
        }
        s.push_tail(40, 3);
        b.push_tail(40, 3);
        assert_eq!(s.last_steps(), 41, "40 nodes compared + the end");
        assert_eq!(b.last_steps(), 1);
        // Linux's 100 RT levels: two bitmap words, the second scanned when the first is empty.
        let mut l = BitmapLists::<Fixed<4, 100, 2>>::new(100);
        l.push_tail(0, 90);
        l.peek();
        assert_eq!(l.last_steps(), 2);
        let mut t = TwoLevelBitmap::<Fixed<4, 512, 8>>::new(512);
        t.push_tail(0, 500);
        assert_eq!((t.peek(), t.last_steps()), (Some(0), 2));
    }

    #[test]
    fn tree_renumbers_when_keys_run_out() {
        let mut q = Tree::<Fixed<64, 4, 1>>::new(4);
        q.push_tail(0, 2);
        q.push_tail(1, 2);
        // Each insert_after halves the gap after task 0: force renumbering many times.
        for round in 0..100 {
            let t = 2 + (round % 2);
            if q.is_queued(t) {
                q.remove(t);
            }
            q.insert_after(t, 0);
            let other = 5 - t;
            if q.is_queued(other) {
                q.remove(other);
            }
            q.insert_after(other, t);
            q.check_invariants();
        }
        let v = order(&q);
        assert_eq!(v[0], (0, 2));
        assert_eq!(v.last(), Some(&(1, 2)));
    }
}

//! `LeanList`: seed 002's single ready queue as a small kernel would write it in C — the
//! ready tasks on ONE circular doubly linked list with a header, in priority order, FIFO
//! within a priority, found by a linear insertion search; nothing else.
//!
//! Sources: seed 002 (Y. Watanabe, K. Ito, A. Miyauchi, S. Arai, "Performance comparison
//! of ready queue of ITRON method kernel", Musashi Institute of Technology: one queue of
//! every ready task in priority order replacing TOPPERS/JSP's `ready_queue[]` and
//! `ready_primap`); the list primitives it would have kept are TOPPERS/JSP 1.4's
//! `include/queue.h` (`QUEUE`: a circular list whose header is a node, so
//! `queue_insert_prev` and `queue_delete` need no test for an empty list or an end). Own
//! code.
//!
//! What makes it lean, against [`crate::SingleList`] (which serves the simulator):
//! - the header is a node (slot [`HEAD`]): inserting and unlinking are branch-free, as
//!   with JSP's `QUEUE`; `SingleList` keeps separate head/tail fields and tests for them;
//! - links are bytes into a 256-slot array, so an index is always in bounds and no bounds
//!   check is compiled (the crate has no `unsafe`; C's pointers have no checks either);
//! - no counters: no `len`, and the walk counts nothing. The work `last_steps` reports is
//!   recomputed on demand from ONE record stored per operation (which node the operation
//!   placed or stopped at): that store is the only bookkeeping the seed's code lacks.
//!   `last_steps` reports exactly what `SingleList` reports for the same operation
//!   (`tests/model.rs` checks it), at O(N) per call; `len` is O(N) too.
//!
//! Capacity: at most [`LEAN_CAPACITY`] = 255 tasks (slot 255 is the header), as a kernel
//! configured for at most 255 tasks. Searches start from the head for every operation
//! (`change_priority` unlinks, then searches from the head, as `SingleList` does).

use core::cell::Cell;

use crate::{Prio, ReadyQueue, TaskIdx};

/// The most tasks a [`LeanList`] holds (task indices 0..255).
pub const LEAN_CAPACITY: usize = 255;
/// The header node's slot.
pub const HEAD: u8 = 255;
/// `last_steps` record of an operation that did one step (no walk).
const ONE_STEP: u32 = u32::MAX;

/// A task's links, its priority and its state (the TCB's `tstat`: ready or not).
#[derive(Debug, Clone, Copy)]
struct Link {
    next: u8,
    prev: u8,
    prio: Prio,
    queued: bool,
}

const UNLINKED: Link = Link {
    next: HEAD,
    prev: HEAD,
    prio: 0,
    queued: false,
};

/// One circular list of all ready tasks in priority order (see the module doc).
pub struct LeanList {
    nodes: [Link; 256],
    levels: usize,
    capacity: usize,
    /// What the last operation placed or stopped at, for `last_steps`: the node in the low
    /// byte, extra steps above it; [`ONE_STEP`] for an operation without a walk.
    last: Cell<u32>,
}

impl LeanList {
    /// An empty queue with `levels` priorities and 255 task slots; no allocation.
    pub fn new(levels: usize) -> Self {
        Self::with_capacity(levels, LEAN_CAPACITY)
    }

    /// An empty queue with `levels` priorities for task indices 0..n (n ≤ 255).
    pub fn with_capacity(levels: usize, n: usize) -> Self {
        assert!(
            levels >= 1 && levels <= Prio::MAX as usize + 1,
            "levels out of range"
        );
        assert!(
            n <= LEAN_CAPACITY,
            "a lean list holds at most {LEAN_CAPACITY} tasks"
        );
        LeanList {
            nodes: [UNLINKED; 256],
            levels,
            capacity: n,
            last: Cell::new(ONE_STEP),
        }
    }

    /// Room for task indices 0..n: true if n ≤ 255 (the array is fixed).
    pub fn grow(&mut self, n: usize) -> bool {
        if n > LEAN_CAPACITY {
            return false;
        }
        self.capacity = self.capacity.max(n);
        true
    }

    #[inline]
    fn at(&self, x: u8) -> &Link {
        &self.nodes[x as usize]
    }

    #[inline]
    fn at_mut(&mut self, x: u8) -> &mut Link {
        &mut self.nodes[x as usize]
    }

    /// The first node, from the head, that does not satisfy `keep_going(prio)` (HEAD at
    /// the end).
    #[inline]
    fn search(&self, keep_going: impl Fn(Prio) -> bool) -> u8 {
        let mut x = self.at(HEAD).next;
        while x != HEAD && keep_going(self.at(x).prio) {
            x = self.at(x).next;
        }
        x
    }

    /// Link unqueued `t` before `at` (JSP's `queue_insert_prev`).
    #[inline]
    fn insert_before(&mut self, t: u8, prio: Prio, at: u8) {
        let prev = self.at(at).prev;
        *self.at_mut(t) = Link {
            next: at,
            prev,
            prio,
            queued: true,
        };
        self.at_mut(prev).next = t;
        self.at_mut(at).prev = t;
    }

    /// Unlink `t` (JSP's `queue_delete`) and mark it not ready.
    #[inline]
    fn unlink(&mut self, t: u8) {
        let Link { next, prev, .. } = *self.at(t);
        self.at_mut(prev).next = next;
        self.at_mut(next).prev = prev;
        self.at_mut(t).queued = false;
    }

    /// Nodes before `x` from the head (the number of ready tasks for HEAD).
    fn position(&self, x: u8) -> u32 {
        let (mut y, mut k) = (self.at(HEAD).next, 0);
        while y != x && y != HEAD {
            y = self.at(y).next;
            k += 1;
        }
        k
    }

    fn check_push(&self, t: TaskIdx, prio: Prio) -> u8 {
        debug_assert!((t as usize) < self.capacity, "task {t} beyond capacity");
        debug_assert!(
            (prio as usize) < self.levels,
            "priority {prio} out of range"
        );
        debug_assert!(!self.at(t as u8).queued, "task {t} queued twice");
        t as u8
    }

    #[inline]
    fn record(&self, x: u8, extra: u32) {
        self.last.set(x as u32 | extra << 8);
    }
}

impl ReadyQueue for LeanList {
    const NAME: &'static str = "single-list-lean";

    fn levels(&self) -> usize {
        self.levels
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    /// Search from the head for the first lower-priority task, insert before it. O(N).
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        let t = self.check_push(t, prio);
        let at = self.search(|p| p <= prio);
        self.insert_before(t, prio, at);
        self.record(t, 0);
    }

    /// Before the first task of equal or lower priority. O(N).
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        let t = self.check_push(t, prio);
        let at = self.search(|p| p < prio);
        self.insert_before(t, prio, at);
        self.record(t, 0);
    }

    /// Unlink. O(1).
    fn remove(&mut self, t: TaskIdx) {
        debug_assert!(self.is_queued(t), "remove of unqueued task {t}");
        self.unlink(t as u8);
        self.last.set(ONE_STEP);
    }

    /// Unlink, then search from the head for the tail of `new`. O(N).
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        debug_assert!(self.is_queued(t), "chg_pri of unqueued task {t}");
        debug_assert!((new as usize) < self.levels, "priority {new} out of range");
        let t = t as u8;
        self.unlink(t);
        let at = self.search(|p| p <= new);
        self.insert_before(t, new, at);
        self.record(t, 1);
    }

    /// Search for the priority's first task, then walk past its peers, and move the first
    /// behind the last. O(N).
    fn rotate(&mut self, prio: Prio) {
        let first = self.search(|p| p < prio);
        if first == HEAD || self.at(first).prio != prio {
            self.record(first, 0);
            return;
        }
        let mut after = self.at(first).next;
        while after != HEAD && self.at(after).prio == prio {
            after = self.at(after).next;
        }
        if after != self.at(first).next {
            self.unlink(first);
            self.insert_before(first, prio, after);
        }
        self.record(first, 0);
    }

    /// The head. O(1).
    fn peek(&self) -> Option<TaskIdx> {
        self.last.set(ONE_STEP);
        let h = self.at(HEAD).next;
        (h != HEAD).then_some(h as TaskIdx)
    }

    /// The head's priority. O(1).
    fn top_prio(&self) -> Option<Prio> {
        self.last.set(ONE_STEP);
        let h = self.at(HEAD).next;
        (h != HEAD).then(|| self.at(h).prio)
    }

    /// O(1).
    fn is_queued(&self, t: TaskIdx) -> bool {
        self.prio_of(t).is_some()
    }

    /// O(1).
    fn prio_of(&self, t: TaskIdx) -> Option<Prio> {
        ((t as usize) < self.capacity && self.at(t as u8).queued).then(|| self.at(t as u8).prio)
    }

    /// O(N): the list keeps no count.
    fn len(&self) -> usize {
        self.position(HEAD) as usize
    }

    /// O(N).
    fn for_each(&self, mut f: impl FnMut(TaskIdx, Prio) -> bool) {
        let mut x = self.at(HEAD).next;
        while x != HEAD && f(x as TaskIdx, self.at(x).prio) {
            x = self.at(x).next;
        }
    }

    /// Recomputed from the last operation's record: O(N).
    fn last_steps(&self) -> u32 {
        match self.last.get() {
            ONE_STEP => 1,
            r => self.position((r & 0xff) as u8) + 1 + (r >> 8),
        }
    }

    /// O(1).
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = *self.at(t as u8);
        (self.is_queued(t) && n.prev != HEAD && self.at(n.prev).prio == n.prio)
            .then_some(n.prev as TaskIdx)
    }

    /// O(1).
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = *self.at(t as u8);
        (self.is_queued(t) && n.next != HEAD && self.at(n.next).prio == n.prio)
            .then_some(n.next as TaskIdx)
    }

    /// O(1).
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        debug_assert!(
            self.is_queued(after),
            "insert_after an unqueued task {after}"
        );
        let Link { next, prio, .. } = *self.at(after as u8);
        let t = self.check_push(t, prio);
        self.insert_before(t, prio, next);
        self.last.set(ONE_STEP);
    }

    fn check_invariants(&self) {
        let (mut x, mut prev, mut count) = (self.at(HEAD).next, HEAD, 0usize);
        while x != HEAD {
            let n = self.at(x);
            assert!(
                (x as usize) < self.capacity,
                "slot {x} beyond capacity listed"
            );
            assert!(n.queued, "listed task {x} not marked queued");
            assert_eq!(n.prev, prev, "broken back link at {x}");
            assert!((n.prio as usize) < self.levels, "priority out of range");
            assert!(prev == HEAD || self.at(prev).prio <= n.prio, "order broken");
            count += 1;
            assert!(
                count <= self.capacity,
                "more tasks listed than slots (a cycle?)"
            );
            prev = x;
            x = n.next;
        }
        assert_eq!(
            self.at(HEAD).prev,
            prev,
            "the header's back link (the tail)"
        );
        let marked = self.nodes[..self.capacity]
            .iter()
            .filter(|n| n.queued)
            .count();
        assert_eq!(marked, count, "queued flags");
    }
}

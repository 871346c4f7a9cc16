//! `Tree`: a balanced binary search tree of the ready tasks keyed by (priority, arrival
//! sequence), its nodes in a fixed arena indexed by task — Zephyr's "scalable" ready queue.
//!
//! Source: zephyrproject-rtos/zephyr `kernel/include/priority_q.h`, revision 0202bd86:
//! `z_priq_rb_add` (l.94-115: the thread gets `order_key = pq->next_order_key++` and is
//! inserted into a red-black tree ordered by priority, then order key, so equal priorities
//! stay FIFO; the keys are renumbered in tree order when the counter wraps),
//! `z_priq_rb_remove` (l.117-124: the counter restarts when the tree empties),
//! `z_priq_rb_best` (l.126-135: `rb_get_min`); the order is `z_priq_rb_lessthan`
//! (`kernel/priority_queues.c`; `kernel/sched.c` before 2024); `CONFIG_SCHED_SCALABLE`;
//! doc `doc/kernel/services/scheduling/index.rst`. Own code.
//!
//! Differences: an AVL tree instead of Zephyr's red-black tree (same O(log N) bounds,
//! simpler to verify); head insertion (`push_head`) and `insert_after` need keys before the
//! head / between two neighbours, so the sequence numbers start in the middle of the u64
//! range and are spaced by `GAP`: tail pushes count up, head pushes count down, and
//! `insert_after` takes the midpoint; when no gap is left, every key is renumbered in
//! order (O(N), rare: once per `GAP` consecutive `insert_after`s at one place).
//! `peek` descends to the minimum (Zephyr's `rb_get_min` does too).

use crate::storage::Storage;
use crate::util::Steps;
use crate::{Prio, ReadyQueue, TaskIdx, NIL};

/// Sequence numbers start here (tail pushes up, head pushes down).
const MID: u64 = 1 << 63;
/// Distance between consecutive sequence numbers.
const GAP: u64 = 1 << 20;

/// A tree node (one per task slot).
#[derive(Debug, Clone, Copy)]
pub struct Node {
    left: u32,
    right: u32,
    seq: u64,
    prio: Prio,
    height: u8,
    queued: bool,
}

impl crate::util::Slot for Node {
    #[inline]
    fn queued(&self) -> bool {
        self.queued
    }
    #[inline]
    fn prio(&self) -> Prio {
        self.prio
    }
}

const FREE: Node = Node {
    left: NIL,
    right: NIL,
    seq: 0,
    prio: 0,
    height: 0,
    queued: false,
};

/// AVL tree ordered by (priority, arrival sequence) (see the module doc).
pub struct Tree<S: Storage> {
    nodes: S::Nodes<Node>,
    root: u32,
    len: usize,
    levels: usize,
    /// Next tail sequence number (increasing) and next head one (decreasing).
    tail_seq: u64,
    head_seq: u64,
    /// Nodes visited by the running mutation.
    walked: u32,
    steps: Steps,
}

impl<const N: usize, const P: usize, const W: usize> Tree<crate::Fixed<N, P, W>> {
    /// An empty queue with `levels` priorities and N task slots; no allocation.
    pub fn new(levels: usize) -> Self {
        Self::with_capacity(levels, N)
    }
}

impl<S: Storage> Tree<S> {
    /// An empty queue with `levels` priorities and room for `n` tasks (a `Fixed` storage
    /// always has its N slots and checks `n <= N`). O(n).
    pub fn with_capacity(levels: usize, n: usize) -> Self {
        assert!(
            levels >= 1 && levels <= Prio::MAX as usize + 1,
            "levels out of range"
        );
        Tree {
            nodes: S::nodes(n, FREE),
            root: NIL,
            len: 0,
            levels,
            tail_seq: MID,
            head_seq: MID - GAP,
            walked: 0,
            steps: Steps::default(),
        }
    }

    /// Room for task indices 0..n (allocates with `Heap`; a `Fixed` storage returns false
    /// if n > N). Never called by the operations themselves. O(n).
    pub fn grow(&mut self, n: usize) -> bool {
        S::grow_nodes(&mut self.nodes, n, FREE)
    }

    #[inline]
    fn n(&self, x: u32) -> &Node {
        &self.nodes.as_ref()[x as usize]
    }

    #[inline]
    fn n_mut(&mut self, x: u32) -> &mut Node {
        &mut self.nodes.as_mut()[x as usize]
    }

    #[inline]
    fn key(&self, x: u32) -> (Prio, u64) {
        let n = self.n(x);
        (n.prio, n.seq)
    }

    #[inline]
    fn height(&self, x: u32) -> u8 {
        if x == NIL {
            0
        } else {
            self.n(x).height
        }
    }

    fn update(&mut self, x: u32) {
        let h = 1 + self
            .height(self.n(x).left)
            .max(self.height(self.n(x).right));
        self.n_mut(x).height = h;
    }

    fn rot_right(&mut self, x: u32) -> u32 {
        let l = self.n(x).left;
        self.n_mut(x).left = self.n(l).right;
        self.n_mut(l).right = x;
        self.update(x);
        self.update(l);
        l
    }

    fn rot_left(&mut self, x: u32) -> u32 {
        let r = self.n(x).right;
        self.n_mut(x).right = self.n(r).left;
        self.n_mut(r).left = x;
        self.update(x);
        self.update(r);
        r
    }

    /// Restore the AVL balance at `x` after one of its subtrees changed height by one.
    fn balance(&mut self, x: u32) -> u32 {
        self.update(x);
        let (l, r) = (self.n(x).left, self.n(x).right);
        let bf = self.height(l) as i32 - self.height(r) as i32;
        if bf > 1 {
            if self.height(self.n(l).left) < self.height(self.n(l).right) {
                let nl = self.rot_left(l);
                self.n_mut(x).left = nl;
            }
            self.rot_right(x)
        } else if bf < -1 {
            if self.height(self.n(r).right) < self.height(self.n(r).left) {
                let nr = self.rot_right(r);
                self.n_mut(x).right = nr;
            }
            self.rot_left(x)
        } else {
            x
        }
    }

    /// Insert the prepared node `t` into the subtree `x`; returns the new subtree root.
    fn insert_at(&mut self, x: u32, t: u32) -> u32 {
        if x == NIL {
            return t;
        }
        self.walked += 1;
        if self.key(t) < self.key(x) {
            let l = self.insert_at(self.n(x).left, t);
            self.n_mut(x).left = l;
        } else {
            let r = self.insert_at(self.n(x).right, t);
            self.n_mut(x).right = r;
        }
        self.balance(x)
    }

    /// Remove the minimum of subtree `x`: (new subtree root, the minimum).
    fn remove_min(&mut self, x: u32) -> (u32, u32) {
        self.walked += 1;
        let l = self.n(x).left;
        if l == NIL {
            return (self.n(x).right, x);
        }
        let (nl, m) = self.remove_min(l);
        self.n_mut(x).left = nl;
        (self.balance(x), m)
    }

    /// Remove node `t` from subtree `x`; returns the new subtree root.
    fn remove_at(&mut self, x: u32, t: u32) -> u32 {
        debug_assert!(x != NIL, "task {t} not in the tree");
        self.walked += 1;
        if x == t {
            let Node { left, right, .. } = *self.n(x);
            if left == NIL {
                return right;
            }
            if right == NIL {
                return left;
            }
            let (nr, m) = self.remove_min(right);
            self.n_mut(m).left = left;
            self.n_mut(m).right = nr;
            return self.balance(m);
        }
        if self.key(t) < self.key(x) {
            let l = self.remove_at(self.n(x).left, t);
            self.n_mut(x).left = l;
        } else {
            let r = self.remove_at(self.n(x).right, t);
            self.n_mut(x).right = r;
        }
        self.balance(x)
    }

    /// Put unqueued `t` into the tree with key (prio, seq).
    fn insert(&mut self, t: TaskIdx, prio: Prio, seq: u64) {
        debug_assert!((t as usize) < self.capacity(), "task {t} beyond capacity");
        debug_assert!(
            (prio as usize) < self.levels,
            "priority {prio} out of range"
        );
        debug_assert!(!self.n(t).queued, "task {t} queued twice");
        *self.n_mut(t) = Node {
            left: NIL,
            right: NIL,
            seq,
            prio,
            height: 1,
            queued: true,
        };
        self.root = self.insert_at(self.root, t);
        self.len += 1;
    }

    fn take(&mut self, t: TaskIdx) {
        debug_assert!(self.n(t).queued, "remove of unqueued task {t}");
        self.root = self.remove_at(self.root, t);
        *self.n_mut(t) = FREE;
        self.len -= 1;
        if self.len == 0 {
            // Like Zephyr: the key counter restarts when the tree empties.
            self.tail_seq = MID;
            self.head_seq = MID - GAP;
        }
    }

    /// Next tail sequence number, renumbering first if the range above is used up.
    fn next_tail_seq(&mut self) -> u64 {
        if self.tail_seq > u64::MAX - GAP {
            self.renumber();
        }
        let s = self.tail_seq;
        self.tail_seq += GAP;
        s
    }

    /// Next head sequence number, renumbering first if the range below is used up.
    fn next_head_seq(&mut self) -> u64 {
        if self.head_seq < GAP {
            self.renumber();
        }
        let s = self.head_seq;
        self.head_seq -= GAP;
        s
    }

    /// Give every node a fresh sequence number in key order, `GAP` apart from `MID` on.
    fn renumber(&mut self) {
        let mut next = MID;
        self.renumber_at(self.root, &mut next);
        self.head_seq = MID - GAP;
        self.tail_seq = next;
    }

    fn renumber_at(&mut self, x: u32, next: &mut u64) {
        if x == NIL {
            return;
        }
        self.walked += 1;
        self.renumber_at(self.n(x).left, next);
        self.n_mut(x).seq = *next;
        *next += GAP;
        self.renumber_at(self.n(x).right, next);
    }

    /// The first node with key > `k` (`above`) or < `k` (!`above`), and nodes visited.
    fn neighbour(&self, k: (Prio, u64), above: bool) -> (u32, u32) {
        let (mut x, mut best, mut walked) = (self.root, NIL, 0);
        while x != NIL {
            walked += 1;
            let xk = self.key(x);
            if (above && xk > k) || (!above && xk < k) {
                best = x;
                x = if above {
                    self.n(x).left
                } else {
                    self.n(x).right
                };
            } else {
                x = if above {
                    self.n(x).right
                } else {
                    self.n(x).left
                };
            }
        }
        (best, walked)
    }

    /// The minimum node and the nodes visited.
    fn min(&self) -> (u32, u32) {
        let (mut x, mut walked) = (self.root, 1);
        if x == NIL {
            return (NIL, 1);
        }
        while self.n(x).left != NIL {
            x = self.n(x).left;
            walked += 1;
        }
        (x, walked)
    }

    fn walk(&self, x: u32, f: &mut impl FnMut(TaskIdx, Prio) -> bool) -> bool {
        if x == NIL {
            return true;
        }
        let n = self.n(x);
        self.walk(n.left, f) && f(x, n.prio) && self.walk(n.right, f)
    }

    /// (height, count) of subtree `x` after checking order, balance and heights.
    fn check_at(&self, x: u32, lo: Option<(Prio, u64)>, hi: Option<(Prio, u64)>) -> (u8, usize) {
        if x == NIL {
            return (0, 0);
        }
        let n = self.n(x);
        let k = self.key(x);
        assert!(n.queued, "task {x} in the tree but not marked queued");
        assert!((n.prio as usize) < self.levels, "priority out of range");
        assert!(
            lo.is_none_or(|lo| lo < k) && hi.is_none_or(|hi| k < hi),
            "key order"
        );
        let (hl, cl) = self.check_at(n.left, lo, Some(k));
        let (hr, cr) = self.check_at(n.right, Some(k), hi);
        assert!((hl as i32 - hr as i32).abs() <= 1, "AVL balance at {x}");
        assert_eq!(n.height, 1 + hl.max(hr), "height at {x}");
        (n.height, cl + cr + 1)
    }
}

impl<S: Storage> ReadyQueue for Tree<S> {
    const NAME: &'static str = "tree";

    fn levels(&self) -> usize {
        self.levels
    }

    fn capacity(&self) -> usize {
        self.nodes.as_ref().len()
    }

    /// Insert with the next tail sequence number. O(log N) average and worst.
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        self.walked = 1;
        let seq = self.next_tail_seq();
        self.insert(t, prio, seq);
        self.steps.set(self.walked);
    }

    /// Insert with the next head sequence number. O(log N) average and worst.
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        self.walked = 1;
        let seq = self.next_head_seq();
        self.insert(t, prio, seq);
        self.steps.set(self.walked);
    }

    /// Delete by key. O(log N) average and worst.
    fn remove(&mut self, t: TaskIdx) {
        self.walked = 1;
        self.take(t);
        self.steps.set(self.walked);
    }

    /// Delete, insert with the new priority and a tail sequence number. O(log N).
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        self.walked = 1;
        self.take(t);
        let seq = self.next_tail_seq();
        self.insert(t, new, seq);
        self.steps.set(self.walked);
    }

    /// Find the priority's first task (lower bound of (prio, 0)); if a task of the same
    /// priority follows it, re-insert it with a tail sequence number. O(log N).
    fn rotate(&mut self, prio: Prio) {
        let (first, w1) = self.neighbour((prio, 0), true);
        let mut walked = w1.max(1);
        if first != NIL && self.n(first).prio == prio {
            let (next, w2) = self.neighbour(self.key(first), true);
            walked += w2;
            if next != NIL && self.n(next).prio == prio {
                self.walked = 0;
                self.take(first);
                let seq = self.next_tail_seq();
                self.insert(first, prio, seq);
                walked += self.walked;
            }
        }
        self.steps.set(walked);
    }

    /// The leftmost node. O(log N) average and worst.
    fn peek(&self) -> Option<TaskIdx> {
        let (m, walked) = self.min();
        self.steps.set(walked);
        (m != NIL).then_some(m)
    }

    /// The leftmost node's priority. O(log N).
    fn top_prio(&self) -> Option<Prio> {
        self.peek().map(|m| self.n(m).prio)
    }

    /// O(1).
    fn is_queued(&self, t: TaskIdx) -> bool {
        self.prio_of(t).is_some()
    }

    /// O(1).
    fn prio_of(&self, t: TaskIdx) -> Option<Prio> {
        crate::util::slot_prio(self.nodes.as_ref(), t)
    }

    /// O(1).
    fn len(&self) -> usize {
        self.len
    }

    /// In-order walk. O(N).
    fn for_each(&self, mut f: impl FnMut(TaskIdx, Prio) -> bool) {
        self.walk(self.root, &mut f);
    }

    fn last_steps(&self) -> u32 {
        self.steps.get()
    }

    /// Predecessor by key. O(log N).
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        if !self.is_queued(t) {
            return None;
        }
        let (p, walked) = self.neighbour(self.key(t), false);
        self.steps.set(walked);
        (p != NIL && self.n(p).prio == self.n(t).prio).then_some(p)
    }

    /// Successor by key. O(log N).
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        if !self.is_queued(t) {
            return None;
        }
        let (s, walked) = self.neighbour(self.key(t), true);
        self.steps.set(walked);
        (s != NIL && self.n(s).prio == self.n(t).prio).then_some(s)
    }

    /// A sequence number between `after` and its successor (renumbering all keys first if
    /// they are adjacent). O(log N) amortised, O(N) worst.
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        debug_assert!(
            self.n(after).queued,
            "insert_after an unqueued task {after}"
        );
        self.walked = 1;
        let prio = self.n(after).prio;
        let (mut succ, w) = self.neighbour(self.key(after), true);
        self.walked += w;
        if succ != NIL && self.n(succ).prio != prio {
            succ = NIL;
        }
        let seq = if succ == NIL {
            self.next_tail_seq()
        } else {
            if self.n(succ).seq - self.n(after).seq < 2 {
                self.renumber();
            }
            let (a, b) = (self.n(after).seq, self.n(succ).seq);
            a + (b - a) / 2
        };
        self.insert(t, prio, seq);
        self.steps.set(self.walked);
    }

    fn check_invariants(&self) {
        let (_, count) = self.check_at(self.root, None, None);
        assert_eq!(count, self.len, "len");
        let marked = self.nodes.as_ref().iter().filter(|n| n.queued).count();
        assert_eq!(marked, self.len, "queued flags");
        self.for_each(|t, p| {
            let k = self.key(t);
            assert!(
                k.1 < self.tail_seq && k.1 > self.head_seq,
                "seq {k:?} outside the counters (prio {p})"
            );
            true
        });
    }
}

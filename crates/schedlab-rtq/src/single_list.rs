//! `SingleList`: every ready task on ONE doubly linked list kept in priority order, FIFO
//! within a priority; no bitmap.
//!
//! Sources: seed 002 (Musashi Institute of Technology, "single ready queue": one list of
//! all ready tasks in priority order, found by a linear insertion search; smaller object
//! code than TOPPERS/JSP's per-priority queues, faster with ≤ 5 tasks, slower beyond ~10);
//! Zephyr `kernel/include/priority_q.h` (revision 0202bd86) `z_priq_dumb_add` (l.231-245:
//! walk from the head and insert before the first thread the new one beats, else append:
//! FIFO among equals), `z_priq_dumb_remove` (l.67-72) and `z_priq_dumb_best` (l.74-83: the
//! head), `CONFIG_SCHED_DUMB`/`CONFIG_SCHED_SIMPLE`. Own code.
//!
//! Simplifications: tail insertion walks from the head like Zephyr's (a kernel could
//! also search from the tail); `rotate` finds the priority's first and last task by walking.

use crate::storage::Storage;
use crate::util::Steps;
use crate::{Prio, ReadyQueue, TaskIdx, NIL};

/// Per-task links.
pub type Node = crate::util::ListNode;

const FREE: Node = crate::util::FREE_LIST_NODE;

/// One list of all ready tasks in priority order (see the module doc).
pub struct SingleList<S: Storage> {
    nodes: S::Nodes<Node>,
    head: u32,
    tail: u32,
    len: usize,
    levels: usize,
    steps: Steps,
}

impl<const N: usize, const P: usize, const W: usize> SingleList<crate::Fixed<N, P, W>> {
    /// An empty queue with `levels` priorities (≤ P) and N task slots; no allocation.
    pub fn new(levels: usize) -> Self {
        Self::with_capacity(levels, N)
    }
}

impl<S: Storage> SingleList<S> {
    /// An empty queue with `levels` priorities and room for `n` tasks (a `Fixed` storage
    /// always has its N slots and checks `n <= N`). O(n).
    pub fn with_capacity(levels: usize, n: usize) -> Self {
        assert!(
            levels >= 1 && levels <= Prio::MAX as usize + 1,
            "levels out of range"
        );
        SingleList {
            nodes: S::nodes(n, FREE),
            head: NIL,
            tail: NIL,
            len: 0,
            levels,
            steps: Steps::default(),
        }
    }

    /// Room for task indices 0..n (allocates with `Heap`; a `Fixed` storage returns false
    /// if n > N). Never called by the operations themselves. O(n).
    pub fn grow(&mut self, n: usize) -> bool {
        S::grow_nodes(&mut self.nodes, n, FREE)
    }

    #[inline]
    fn node(&self, x: u32) -> &Node {
        &self.nodes.as_ref()[x as usize]
    }

    #[inline]
    fn node_mut(&mut self, x: u32) -> &mut Node {
        &mut self.nodes.as_mut()[x as usize]
    }

    /// Link unqueued `t` (priority `prio`) just before `at` (NIL = at the tail).
    fn link_before(&mut self, t: TaskIdx, prio: Prio, at: u32) {
        let prev = if at == NIL {
            self.tail
        } else {
            self.node(at).prev
        };
        *self.node_mut(t) = Node {
            next: at,
            prev,
            prio,
            queued: true,
        };
        if prev == NIL {
            self.head = t;
        } else {
            self.node_mut(prev).next = t;
        }
        if at == NIL {
            self.tail = t;
        } else {
            self.node_mut(at).prev = t;
        }
        self.len += 1;
        debug_assert!(prev == NIL || self.node(prev).prio <= prio, "order broken");
        debug_assert!(at == NIL || self.node(at).prio >= prio, "order broken");
    }

    fn unlink(&mut self, t: TaskIdx) {
        let Node { next, prev, .. } = *self.node(t);
        if prev == NIL {
            self.head = next;
        } else {
            self.node_mut(prev).next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.node_mut(next).prev = prev;
        }
        *self.node_mut(t) = FREE;
        self.len -= 1;
    }

    /// The first node (from the head) for which `stop(prio)` holds, and the nodes visited.
    fn find_first(&self, stop: impl Fn(Prio) -> bool) -> (u32, u32) {
        let (mut x, mut walked) = (self.head, 1);
        while x != NIL && !stop(self.node(x).prio) {
            x = self.node(x).next;
            walked += 1;
        }
        (x, walked)
    }

    fn check_push(&self, t: TaskIdx, prio: Prio) {
        debug_assert!((t as usize) < self.capacity(), "task {t} beyond capacity");
        debug_assert!(
            (prio as usize) < self.levels,
            "priority {prio} out of range"
        );
        debug_assert!(!self.node(t).queued, "task {t} queued twice");
    }
}

impl<S: Storage> ReadyQueue for SingleList<S> {
    const NAME: &'static str = "single-list";

    fn levels(&self) -> usize {
        self.levels
    }

    fn capacity(&self) -> usize {
        self.nodes.as_ref().len()
    }

    /// Linear insertion search from the head, before the first lower-priority task.
    /// O(N) average and worst.
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        self.check_push(t, prio);
        let (at, walked) = self.find_first(|p| p > prio);
        self.link_before(t, prio, at);
        self.steps.set(walked);
    }

    /// Before the first task of equal or lower priority. O(N) average and worst.
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        self.check_push(t, prio);
        let (at, walked) = self.find_first(|p| p >= prio);
        self.link_before(t, prio, at);
        self.steps.set(walked);
    }

    /// Unlink. O(1).
    fn remove(&mut self, t: TaskIdx) {
        debug_assert!(self.node(t).queued, "remove of unqueued task {t}");
        self.unlink(t);
        self.steps.set(1);
    }

    /// Unlink and insert at the tail of `new`. O(N) average and worst.
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        self.remove(t);
        self.push_tail(t, new);
        self.steps.set(self.steps.get() + 1);
    }

    /// Walk to the priority's first task, then to its last, and move the first behind the
    /// last. O(N) average and worst.
    fn rotate(&mut self, prio: Prio) {
        let (first, mut walked) = self.find_first(|p| p >= prio);
        if first == NIL || self.node(first).prio != prio {
            self.steps.set(walked);
            return;
        }
        let mut last = first;
        while self.node(last).next != NIL && self.node(self.node(last).next).prio == prio {
            last = self.node(last).next;
            walked += 1;
        }
        if last != first {
            let after = self.node(last).next;
            self.unlink(first);
            self.link_before(first, prio, after);
        }
        self.steps.set(walked);
    }

    /// The head. O(1).
    fn peek(&self) -> Option<TaskIdx> {
        self.steps.set(1);
        (self.head != NIL).then_some(self.head)
    }

    /// The head's priority. O(1).
    fn top_prio(&self) -> Option<Prio> {
        self.steps.set(1);
        (self.head != NIL).then(|| self.node(self.head).prio)
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

    /// O(N).
    fn for_each(&self, mut f: impl FnMut(TaskIdx, Prio) -> bool) {
        let mut x = self.head;
        while x != NIL && f(x, self.node(x).prio) {
            x = self.node(x).next;
        }
    }

    fn last_steps(&self) -> u32 {
        self.steps.get()
    }

    /// O(1).
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = self.node(t);
        (n.queued && n.prev != NIL && self.node(n.prev).prio == n.prio).then_some(n.prev)
    }

    /// O(1).
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = self.node(t);
        (n.queued && n.next != NIL && self.node(n.next).prio == n.prio).then_some(n.next)
    }

    /// O(1).
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        debug_assert!(
            self.node(after).queued,
            "insert_after an unqueued task {after}"
        );
        let prio = self.node(after).prio;
        self.check_push(t, prio);
        let at = self.node(after).next;
        self.link_before(t, prio, at);
        self.steps.set(1);
    }

    fn check_invariants(&self) {
        let (mut x, mut prev, mut count) = (self.head, NIL, 0);
        while x != NIL {
            let n = self.node(x);
            assert!(n.queued, "listed task {x} not marked queued");
            assert_eq!(n.prev, prev, "broken back link at {x}");
            assert!((n.prio as usize) < self.levels, "priority out of range");
            assert!(
                prev == NIL || self.node(prev).prio <= n.prio,
                "order broken"
            );
            count += 1;
            assert!(count <= self.len, "more tasks listed than len (a cycle?)");
            prev = x;
            x = n.next;
        }
        assert_eq!(prev, self.tail, "tail");
        assert_eq!(count, self.len, "len");
        let marked = self.nodes.as_ref().iter().filter(|n| n.queued).count();
        assert_eq!(marked, self.len, "queued flags");
    }
}

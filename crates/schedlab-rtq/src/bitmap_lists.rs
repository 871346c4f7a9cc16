//! `BitmapLists`: one FIFO doubly linked list per priority plus a bitmap of the non-empty
//! priorities; the best priority is found with find-first-set over the bitmap words.
//!
//! Sources:
//! - TOPPERS/JSP and TOPPERS/ASP 1.x `kernel/task.c`: `QUEUE ready_queue[TNUM_TPRI]` and
//!   `ready_primap` (l.127-132), `bitmap_search` (l.191-209), `search_schedtsk` (l.256),
//!   `make_runnable` (l.275: append at the tail, set the bit), `make_non_runnable` (l.302:
//!   unlink, clear the bit when the queue empties), `change_priority` (l.380: tail of the
//!   new queue), `rotate_ready_queue` (l.435: head to tail if ≥ 2 tasks); the queue
//!   primitives of `include/queue.h` (`queue_insert_prev`, `queue_delete`).
//! - FreeRTOS-Kernel `tasks.c` (revision 4269c69, reference §7.2) `prvAddTaskToReadyList`
//!   (l.287-294: record the priority, insert at the list end), `taskRECORD_READY_PRIORITY` /
//!   `taskRESET_READY_PRIORITY` / `taskSELECT_HIGHEST_PRIORITY_TASK` (port-optimised,
//!   l.227-261) with `portGET_HIGHEST_PRIORITY` (ARM_CM4F `portmacro.h` l.161-171:
//!   `31 - clz(bitmap)`).
//! - Linux `kernel/sched/sched.h` `struct rt_prio_array` (l.311 in v6.x: a bitmap of
//!   `MAX_RT_PRIO + 1` bits and `queue[MAX_RT_PRIO]` list heads) and `kernel/sched/rt.c`
//!   `__enqueue_rt_entity` (`list_add`/`list_add_tail`, `__set_bit`), `__delist_rt_entity`
//!   (`__clear_bit` when the list empties), `pick_next_rt_entity` (`sched_find_first_bit`,
//!   which tests the bitmap's words in order: `include/asm-generic/bitops/sched.h`); rt.c
//!   cited by function (stored copies 00d6a8a7 / 251c226c), not by line.
//! - Zephyr `kernel/include/priority_q.h` (revision 0202bd86) `z_priq_mq_add` (l.190-197:
//!   append, set the bit), `z_priq_mq_remove` (l.199-208: clear the bit when the list
//!   empties), `z_priq_mq_best` (l.138-161: the first non-zero word, count trailing zeros,
//!   the list head) (`CONFIG_SCHED_MULTIQ`).
//!
//! Own code. Priority 0 is the highest, so find-first-set is "lowest set bit"
//! (`trailing_zeros`); FreeRTOS counts the other way (highest set bit, `clz`). How the
//! lowest set bit is found is the bitmap's type parameter ([`crate::FirstSet`]): the CPU's
//! instruction ([`BitmapLists`], the default) or TOPPERS/JSP's software `bitmap_search`
//! for CPUs without one ([`BitmapListsJsp`], seed 002's SH3).
//! Simplifications: the lists are NIL-terminated, not circular with a header node as in
//! TOPPERS' `QUEUE`; the same behaviour.
//!
//! [`PrioLists`] is shared with the two-level variant ([`crate::TwoLevelBitmap`]): only the
//! bitmap differs ([`PrioBitmap`]).

use crate::jsp_search::{FirstSet, HardwareFfs, JspSearch};
use crate::storage::Storage;
use crate::util::Steps;
use crate::{Prio, ReadyQueue, TaskIdx, NIL};

/// The bitmap of non-empty priorities.
pub trait PrioBitmap<S: Storage> {
    /// The back end's name (`ReadyQueue::NAME`).
    const NAME: &'static str;
    /// An empty bitmap for `levels` priorities.
    fn with_levels(levels: usize) -> Self;
    /// Mark `p` non-empty. O(1).
    fn set(&mut self, p: usize);
    /// Mark `p` empty. O(1).
    fn clear(&mut self, p: usize);
    /// Is `p` marked? O(1).
    fn get(&self, p: usize) -> bool;
    /// The lowest set bit and the number of words read to find it.
    fn first(&self) -> (Option<usize>, u32);
    /// The words of the bitmap, lowest priorities first.
    fn words(&self) -> &[u64];
    /// Check the bitmap's own invariants (a summary level, if any); panics if broken.
    fn check(&self) {}
}

/// A single-level bitmap: find-first-set scans the words in order (Linux
/// `sched_find_first_bit`; one word in TOPPERS and FreeRTOS) and finds the lowest set bit
/// of the first non-zero word with `F` (the CPU's instruction by default).
pub struct FlatBitmap<S: Storage, F: FirstSet = HardwareFfs> {
    words: S::Words,
    search: core::marker::PhantomData<F>,
}

impl<S: Storage, F: FirstSet> PrioBitmap<S> for FlatBitmap<S, F> {
    const NAME: &'static str = F::BACKEND_NAME;

    fn with_levels(levels: usize) -> Self {
        FlatBitmap {
            words: S::words(levels.div_ceil(64)),
            search: core::marker::PhantomData,
        }
    }

    #[inline]
    fn set(&mut self, p: usize) {
        self.words.as_mut()[p / 64] |= 1 << (p % 64);
    }

    #[inline]
    fn clear(&mut self, p: usize) {
        self.words.as_mut()[p / 64] &= !(1 << (p % 64));
    }

    #[inline]
    fn get(&self, p: usize) -> bool {
        self.words.as_ref()[p / 64] & (1 << (p % 64)) != 0
    }

    /// O(P/64) words average and worst (1 word for P ≤ 64, 2 for Linux's 100 RT levels).
    #[inline]
    fn first(&self) -> (Option<usize>, u32) {
        for (i, w) in self.words.as_ref().iter().enumerate() {
            if *w != 0 {
                return (Some(i * 64 + F::lowest_set(*w) as usize), i as u32 + 1);
            }
        }
        (None, self.words.as_ref().len().max(1) as u32)
    }

    fn words(&self) -> &[u64] {
        self.words.as_ref()
    }
}

/// Per-task links.
pub type Node = crate::util::ListNode;

const FREE: Node = crate::util::FREE_LIST_NODE;

/// Head and tail of one priority's list.
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    head: u32,
    tail: u32,
}

const EMPTY: Ends = Ends {
    head: NIL,
    tail: NIL,
};

/// Per-priority FIFO lists plus a bitmap `B` of the non-empty ones.
pub struct PrioLists<S: Storage, B: PrioBitmap<S>> {
    nodes: S::Nodes<Node>,
    ends: S::Levels<Ends>,
    bitmap: B,
    len: usize,
    levels: usize,
    steps: Steps,
}

/// Per-priority lists with a single-level bitmap (TOPPERS/JSP's structure) searched with
/// the CPU's find-first-set.
pub type BitmapLists<S> = PrioLists<S, FlatBitmap<S>>;
/// The same structure searched as TOPPERS/JSP does on a CPU without a bit-search
/// instruction (`bitmap_search`: halves, nibbles, a table; [`crate::JspSearch`]).
pub type BitmapListsJsp<S> = PrioLists<S, FlatBitmap<S, JspSearch>>;

impl<const N: usize, const P: usize, const W: usize, B: PrioBitmap<crate::Fixed<N, P, W>>>
    PrioLists<crate::Fixed<N, P, W>, B>
{
    /// An empty queue with `levels` priorities (≤ P) and N task slots; no allocation.
    pub fn new(levels: usize) -> Self {
        Self::with_capacity(levels, N)
    }
}

impl<S: Storage, B: PrioBitmap<S>> PrioLists<S, B> {
    /// An empty queue with `levels` priorities and room for `n` tasks (a `Fixed` storage
    /// always has its N slots and checks `n <= N`). O(n + P).
    pub fn with_capacity(levels: usize, n: usize) -> Self {
        assert!(
            levels >= 1 && levels <= Prio::MAX as usize + 1,
            "levels out of range"
        );
        PrioLists {
            nodes: S::nodes(n, FREE),
            ends: S::levels(levels, EMPTY),
            bitmap: B::with_levels(levels),
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

    #[inline]
    fn ends(&self, p: Prio) -> Ends {
        self.ends.as_ref()[p as usize]
    }

    #[inline]
    fn ends_mut(&mut self, p: Prio) -> &mut Ends {
        &mut self.ends.as_mut()[p as usize]
    }

    /// Link unqueued `t` into `prio`'s list between `prev` and `next` (NIL = list end).
    fn link(&mut self, t: TaskIdx, prio: Prio, prev: u32, next: u32) {
        debug_assert!((t as usize) < self.capacity(), "task {t} beyond capacity");
        debug_assert!(
            (prio as usize) < self.levels,
            "priority {prio} out of range"
        );
        debug_assert!(!self.node(t).queued, "task {t} queued twice");
        *self.node_mut(t) = Node {
            next,
            prev,
            prio,
            queued: true,
        };
        if prev == NIL {
            self.ends_mut(prio).head = t;
        } else {
            self.node_mut(prev).next = t;
        }
        if next == NIL {
            self.ends_mut(prio).tail = t;
        } else {
            self.node_mut(next).prev = t;
        }
        self.bitmap.set(prio as usize);
        self.len += 1;
    }

    fn unlink(&mut self, t: TaskIdx) {
        debug_assert!(self.node(t).queued, "remove of unqueued task {t}");
        let Node {
            next, prev, prio, ..
        } = *self.node(t);
        if prev == NIL {
            self.ends_mut(prio).head = next;
        } else {
            self.node_mut(prev).next = next;
        }
        if next == NIL {
            self.ends_mut(prio).tail = prev;
        } else {
            self.node_mut(next).prev = prev;
        }
        if self.ends(prio).head == NIL {
            self.bitmap.clear(prio as usize);
        }
        *self.node_mut(t) = FREE;
        self.len -= 1;
        debug_assert_eq!(
            self.bitmap.get(prio as usize),
            self.ends(prio).head != NIL,
            "bitmap bit ⇔ list non-empty"
        );
    }
}

impl<S: Storage, B: PrioBitmap<S>> ReadyQueue for PrioLists<S, B> {
    const NAME: &'static str = B::NAME;

    fn levels(&self) -> usize {
        self.levels
    }

    fn capacity(&self) -> usize {
        self.nodes.as_ref().len()
    }

    /// Append to the priority's list, set its bit (make_runnable). O(1).
    fn push_tail(&mut self, t: TaskIdx, prio: Prio) {
        let tail = self.ends(prio).tail;
        self.link(t, prio, tail, NIL);
        self.steps.set(1);
    }

    /// Prepend to the priority's list, set its bit. O(1).
    fn push_head(&mut self, t: TaskIdx, prio: Prio) {
        let head = self.ends(prio).head;
        self.link(t, prio, NIL, head);
        self.steps.set(1);
    }

    /// Unlink, clear the bit if the list empties (make_non_runnable). O(1).
    fn remove(&mut self, t: TaskIdx) {
        self.unlink(t);
        self.steps.set(1);
    }

    /// Unlink, append to the new priority's list. O(1).
    fn change_priority(&mut self, t: TaskIdx, new: Prio) {
        self.unlink(t);
        self.push_tail(t, new);
        self.steps.set(2);
    }

    /// Head to tail of the same list. O(1).
    fn rotate(&mut self, prio: Prio) {
        self.steps.set(1);
        let Ends { head, tail } = self.ends(prio);
        if head != tail {
            self.unlink(head);
            self.link(head, prio, tail, NIL);
        }
    }

    /// find-first-set, then the list head. Flat bitmap: O(P/64) words (average and worst
    /// case); two-level: O(1).
    fn peek(&self) -> Option<TaskIdx> {
        self.top_prio().map(|p| self.ends(p).head)
    }

    /// find-first-set over the bitmap (see `peek`).
    fn top_prio(&self) -> Option<Prio> {
        let (p, scanned) = self.bitmap.first();
        self.steps.set(scanned);
        p.map(|p| p as Prio)
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

    /// Walks the set bits in order, each list from its head. O(N + P/64).
    fn for_each(&self, mut f: impl FnMut(TaskIdx, Prio) -> bool) {
        for (w, word) in self.bitmap.words().iter().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let p = (w * 64 + bits.trailing_zeros() as usize) as Prio;
                bits &= bits - 1;
                let mut x = self.ends(p).head;
                while x != NIL {
                    if !f(x, p) {
                        return;
                    }
                    x = self.node(x).next;
                }
            }
        }
    }

    fn last_steps(&self) -> u32 {
        self.steps.get()
    }

    /// O(1).
    fn prev_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = self.node(t);
        (n.queued && n.prev != NIL).then_some(n.prev)
    }

    /// O(1).
    fn next_in_prio(&self, t: TaskIdx) -> Option<TaskIdx> {
        let n = self.node(t);
        (n.queued && n.next != NIL).then_some(n.next)
    }

    /// O(1).
    fn insert_after(&mut self, t: TaskIdx, after: TaskIdx) {
        debug_assert!(
            self.node(after).queued,
            "insert_after an unqueued task {after}"
        );
        let Node { next, prio, .. } = *self.node(after);
        self.link(t, prio, after, next);
        self.steps.set(1);
    }

    fn check_invariants(&self) {
        let mut total = 0;
        for p in 0..self.levels {
            let Ends { head, tail } = self.ends(p as Prio);
            assert_eq!(
                self.bitmap.get(p),
                head != NIL,
                "bitmap bit {p} ⇔ list non-empty"
            );
            let (mut x, mut prev) = (head, NIL);
            while x != NIL {
                let n = self.node(x);
                assert!(
                    n.queued && n.prio as usize == p,
                    "task {x} on the wrong list"
                );
                assert_eq!(n.prev, prev, "broken back link at {x}");
                total += 1;
                assert!(total <= self.len, "more tasks listed than len (a cycle?)");
                prev = x;
                x = n.next;
            }
            assert_eq!(prev, tail, "tail of {p}");
        }
        let set: u32 = self.bitmap.words().iter().map(|w| w.count_ones()).sum();
        let nonempty = (0..self.levels).filter(|p| self.bitmap.get(*p)).count();
        assert_eq!(set as usize, nonempty, "bits beyond the levels");
        self.bitmap.check();
        assert_eq!(total, self.len, "len");
        let marked = self.nodes.as_ref().iter().filter(|n| n.queued).count();
        assert_eq!(marked, self.len, "queued flags");
    }
}

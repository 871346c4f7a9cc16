//! Ready queues ordered by deadline, for policies that run the earliest deadline first:
//! one or several indexed binary min-heaps over (absolute deadline, arrival sequence),
//! with each task's place kept so that a task leaves its queue in O(log n).
//!
//! The role of the kernel's deadline-ordered run queue (`dl_rq->root`, an rbtree keyed by
//! `dl_se->deadline`, kernel/sched/deadline.c), with the tie made explicit: equal deadlines
//! are ordered by the sequence number the policy gives each arrival, so the order is total
//! and a run never depends on the heap's shape. Storage grows with the number of tasks and
//! is reused: no operation allocates once the heaps have reached their largest size.

use crate::types::{TaskId, Time};

/// The order of queued jobs: absolute deadline, then arrival sequence (earlier first).
pub type Key = (Time, u64);

const NOT_QUEUED: u32 = u32::MAX;

/// Several deadline-ordered queues (one per CPU, or one shared by all).
pub struct DeadlineQueues {
    heaps: Vec<Vec<(Key, TaskId)>>,
    /// Per task: (queue, index in that queue's heap), `NOT_QUEUED` when in none.
    place: Vec<(u32, u32)>,
    /// Heap levels moved by the last operation (the work `ctx.count_work` is charged).
    steps: u32,
}

impl DeadlineQueues {
    pub fn new(nr_queues: usize) -> Self {
        DeadlineQueues {
            heaps: (0..nr_queues).map(|_| Vec::new()).collect(),
            place: Vec::new(),
            steps: 0,
        }
    }

    /// Room for task `t`'s place (grown by doubling, not per event).
    pub fn ensure_task(&mut self, t: TaskId) {
        if self.place.len() <= t.idx() {
            let len = (t.idx() + 1).max(self.place.len() * 2);
            self.place.resize(len, (NOT_QUEUED, 0));
        }
    }

    pub fn nr_queues(&self) -> usize {
        self.heaps.len()
    }

    /// The queue holding `t`, if any.
    pub fn queue_of(&self, t: TaskId) -> Option<usize> {
        self.place
            .get(t.idx())
            .filter(|p| p.0 != NOT_QUEUED)
            .map(|p| p.0 as usize)
    }

    /// Heap levels walked by the last `push`, `remove` or `take_first_where`, at least 1.
    pub fn last_steps(&self) -> u32 {
        self.steps.max(1)
    }

    /// Queue `t` (not queued anywhere) in queue `q` with `key`.
    pub fn push(&mut self, q: usize, t: TaskId, key: Key) {
        self.ensure_task(t);
        debug_assert_eq!(self.place[t.idx()].0, NOT_QUEUED, "{t:?} queued twice");
        let i = self.heaps[q].len();
        self.heaps[q].push((key, t));
        self.place[t.idx()] = (q as u32, i as u32);
        self.steps = 0;
        self.sift_up(q, i);
    }

    /// Take `t` out of its queue; false if it was in none.
    pub fn remove(&mut self, t: TaskId) -> bool {
        let Some(q) = self.queue_of(t) else {
            self.steps = 0;
            return false;
        };
        let i = self.place[t.idx()].1 as usize;
        self.remove_at(q, i);
        true
    }

    /// The first job of queue `q`.
    pub fn first(&self, q: usize) -> Option<(Key, TaskId)> {
        self.heaps[q].first().copied()
    }

    /// Take out of queue `q` the earliest job that `fits`: the first one when it fits (the
    /// common case, O(log n)), else found by a scan of the queue.
    pub fn take_first_where(
        &mut self,
        q: usize,
        mut fits: impl FnMut(TaskId) -> bool,
    ) -> Option<TaskId> {
        let heap = &self.heaps[q];
        let found = match heap.first() {
            Some(&(_, t)) if fits(t) => Some(0),
            Some(_) => heap
                .iter()
                .enumerate()
                .filter(|(_, (_, t))| fits(*t))
                .min_by_key(|(_, (k, _))| *k)
                .map(|(i, _)| i),
            None => None,
        };
        let scanned = if found == Some(0) { 0 } else { heap.len() };
        let i = found?;
        let t = heap[i].1;
        self.remove_at(q, i);
        self.steps += scanned as u32;
        Some(t)
    }

    /// Every queued task of queue `q` with its key, in heap order (not sorted).
    pub fn iter(&self, q: usize) -> impl Iterator<Item = (Key, TaskId)> + '_ {
        self.heaps[q].iter().copied()
    }

    fn remove_at(&mut self, q: usize, i: usize) {
        let heap = &mut self.heaps[q];
        let (_, t) = heap.swap_remove(i);
        self.place[t.idx()] = (NOT_QUEUED, 0);
        self.steps = 0;
        if i < heap.len() {
            let moved = heap[i].1;
            self.place[moved.idx()].1 = i as u32;
            let i = self.sift_up(q, i);
            self.sift_down(q, i);
        }
    }

    /// Move the entry at `i` up to its place; returns where it ended.
    fn sift_up(&mut self, q: usize, mut i: usize) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heaps[q][parent].0 <= self.heaps[q][i].0 {
                break;
            }
            self.swap(q, i, parent);
            i = parent;
        }
        i
    }

    fn sift_down(&mut self, q: usize, mut i: usize) {
        let len = self.heaps[q].len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < len && self.heaps[q][l].0 < self.heaps[q][least].0 {
                least = l;
            }
            if r < len && self.heaps[q][r].0 < self.heaps[q][least].0 {
                least = r;
            }
            if least == i {
                return;
            }
            self.swap(q, i, least);
            i = least;
        }
    }

    fn swap(&mut self, q: usize, a: usize, b: usize) {
        let heap = &mut self.heaps[q];
        heap.swap(a, b);
        self.place[heap[a].1.idx()].1 = a as u32;
        self.place[heap[b].1.idx()].1 = b as u32;
        self.steps += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a plain model (a list searched for its least key) after every
        /// operation: the same first job, the same members, each task in its queue.
        #[test]
        fn behaves_as_a_sorted_list(
            ops in proptest::collection::vec((0u8..3, 0u32..12, 0u64..8, 0usize..2), 1..200)
        ) {
            let mut q = DeadlineQueues::new(2);
            let mut model: Vec<Vec<(Key, TaskId)>> = vec![Vec::new(), Vec::new()];
            let mut seq = 0;
            for (op, task, deadline, queue) in ops {
                let t = TaskId(task);
                match op {
                    0 if q.queue_of(t).is_none() => {
                        seq += 1;
                        q.push(queue, t, (deadline, seq));
                        model[queue].push(((deadline, seq), t));
                    }
                    1 => {
                        let was = model.iter().any(|m| m.iter().any(|e| e.1 == t));
                        prop_assert_eq!(q.remove(t), was);
                        for m in &mut model {
                            m.retain(|e| e.1 != t);
                        }
                    }
                    _ => {
                        // Take the earliest job with an even task id.
                        let even = |x: TaskId| x.0.is_multiple_of(2);
                        let want = model[queue]
                            .iter()
                            .filter(|e| even(e.1))
                            .min()
                            .map(|e| e.1);
                        prop_assert_eq!(q.take_first_where(queue, even), want);
                        model[queue].retain(|e| Some(e.1) != want);
                    }
                }
                for (i, m) in model.iter().enumerate() {
                    prop_assert_eq!(q.first(i), m.iter().min().copied());
                    let mut got: Vec<_> = q.iter(i).collect();
                    got.sort();
                    let mut want = m.clone();
                    want.sort();
                    prop_assert_eq!(got, want);
                    for e in m {
                        prop_assert_eq!(q.queue_of(e.1), Some(i));
                    }
                }
            }
        }
    }
}

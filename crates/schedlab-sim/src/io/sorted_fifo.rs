//! A queue of block requests kept twice, as the kernel's elevators keep them: sorted by
//! start sector (the red-black `sort_list` of deadline, CFQ and BFQ, walked with
//! `rb_next` / `rb_prev`) and in arrival order with each request's FIFO deadline
//! (`rq->fifo_time` on the `fifo` list, `rq_entry_fifo`).
//!
//! Both are vectors that keep their capacity, so a queue allocates only while it grows
//! past its largest backlog. Inserting and removing are O(n) in the queue's backlog (a
//! shift) and lookups by id O(n) — per-process queues hold a handful of requests.

use std::collections::VecDeque;

use super::RqId;
use crate::types::Time;

/// Requests by sector and by arrival.
#[derive(Clone, Debug, Default)]
pub struct SortedFifo {
    /// (start sector, id), ascending; the id breaks ties between equal sectors.
    sorted: Vec<(u64, RqId)>,
    /// (FIFO deadline, id) in arrival order.
    fifo: VecDeque<(Time, RqId)>,
}

impl SortedFifo {
    /// Add `rq` starting at `sector`, expiring at `fifo_time`.
    pub fn insert(&mut self, sector: u64, rq: RqId, fifo_time: Time) {
        let at = self.sorted.partition_point(|&e| e < (sector, rq));
        self.sorted.insert(at, (sector, rq));
        self.fifo.push_back((fifo_time, rq));
    }

    /// Where `rq` is in the sector order (found by id: a front merge may have moved its
    /// start since it was sorted).
    fn sorted_index(&self, rq: RqId) -> usize {
        self.sorted
            .iter()
            .position(|&(_, r)| r == rq)
            .expect("a queued request is in the sort list")
    }

    /// Take `rq` out of both orders.
    pub fn remove(&mut self, rq: RqId) {
        let at = self.sorted_index(rq);
        self.sorted.remove(at);
        let pos = self
            .fifo
            .iter()
            .position(|&(_, r)| r == rq)
            .expect("a queued request is in the FIFO");
        self.fifo.remove(pos);
    }

    /// `rq` now starts at `sector` (a front merge): move it in the sector order.
    pub fn resort(&mut self, rq: RqId, sector: u64) {
        let at = self.sorted_index(rq);
        self.sorted.remove(at);
        let to = self.sorted.partition_point(|&e| e < (sector, rq));
        self.sorted.insert(to, (sector, rq));
    }

    /// `rq`'s FIFO deadline.
    pub fn fifo_time(&self, rq: RqId) -> Option<Time> {
        self.fifo.iter().find(|&&(_, r)| r == rq).map(|&(t, _)| t)
    }

    /// Swap the FIFO places (and deadlines) of `rq` and `next`: when `next` is merged
    /// into `rq` and was older, `rq` inherits its place and deadline (deadline, CFQ and
    /// BFQ do this in `requests_merged`) before `next` is removed.
    pub fn swap_fifo_places(&mut self, rq: RqId, next: RqId) {
        let find = |r: RqId| {
            self.fifo
                .iter()
                .position(|&(_, x)| x == r)
                .expect("a queued request is in the FIFO")
        };
        let (a, b) = (find(rq), find(next));
        let (ta, tb) = (self.fifo[a].0, self.fifo[b].0);
        self.fifo[a] = (ta, next);
        self.fifo[b] = (tb, rq);
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// The lowest-sector request (`rb_first`).
    pub fn first(&self) -> Option<RqId> {
        self.sorted.first().map(|&(_, r)| r)
    }

    /// The requests just before and just after `rq` in sector order (`rb_prev`,
    /// `rb_next`).
    pub fn neighbours(&self, rq: RqId) -> (Option<RqId>, Option<RqId>) {
        let at = self.sorted_index(rq);
        let prev = at.checked_sub(1).map(|i| self.sorted[i].1);
        let next = self.sorted.get(at + 1).map(|&(_, r)| r);
        (prev, next)
    }

    /// The oldest request and its FIFO deadline.
    pub fn fifo_front(&self) -> Option<(Time, RqId)> {
        self.fifo.front().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_order_and_arrival_order_are_kept_apart() {
        let mut q = SortedFifo::default();
        q.insert(800, RqId(1), 10);
        q.insert(8, RqId(2), 20);
        q.insert(400, RqId(3), 30);
        assert_eq!(q.first(), Some(RqId(2)));
        assert_eq!(q.fifo_front(), Some((10, RqId(1))));
        assert_eq!(q.neighbours(RqId(3)), (Some(RqId(2)), Some(RqId(1))));
        q.remove(RqId(1));
        assert_eq!(q.fifo_front(), Some((20, RqId(2))));
        assert_eq!(q.neighbours(RqId(3)), (Some(RqId(2)), None));
        assert_eq!(q.len(), 2);
        q.resort(RqId(3), 0);
        assert_eq!(q.first(), Some(RqId(3)));
        q.swap_fifo_places(RqId(3), RqId(2));
        assert_eq!(q.fifo_front(), Some((20, RqId(3))));
        assert_eq!(q.fifo_time(RqId(2)), Some(30));
    }
}

//! A queue of block requests kept twice, as the kernel's elevators keep them: sorted by
//! start sector (the red-black `sort_list` of deadline, CFQ and BFQ, walked with
//! `rb_next` / `rb_prev`) and in arrival order with each request's FIFO deadline
//! (`rq->fifo_time` on the `fifo` list, `rq_entry_fifo`).
//!
//! Both are vectors that keep their capacity, so a queue allocates only while it grows
//! past its largest backlog. Inserting and removing are O(n) in the queue's backlog (a
//! shift), lookups O(log n) — per-process queues hold a handful of requests.

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

    /// Take `rq` (which starts at `sector`) out of both orders.
    pub fn remove(&mut self, sector: u64, rq: RqId) {
        let at = self
            .sorted
            .binary_search(&(sector, rq))
            .expect("a queued request is in the sort list");
        self.sorted.remove(at);
        let pos = self
            .fifo
            .iter()
            .position(|&(_, r)| r == rq)
            .expect("a queued request is in the FIFO");
        self.fifo.remove(pos);
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

    /// The requests just before and just after `rq` (at `sector`) in sector order
    /// (`rb_prev`, `rb_next`).
    pub fn neighbours(&self, sector: u64, rq: RqId) -> (Option<RqId>, Option<RqId>) {
        let at = self
            .sorted
            .binary_search(&(sector, rq))
            .expect("a queued request is in the sort list");
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
        assert_eq!(q.neighbours(400, RqId(3)), (Some(RqId(2)), Some(RqId(1))));
        q.remove(800, RqId(1));
        assert_eq!(q.fifo_front(), Some((20, RqId(2))));
        assert_eq!(q.neighbours(400, RqId(3)), (Some(RqId(2)), None));
        assert_eq!(q.len(), 2);
    }
}

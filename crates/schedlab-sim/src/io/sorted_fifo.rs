//! A queue of requests kept twice: sorted by start sector (the elevator's `sort_list`
//! red-black tree, block/elevator.c `elv_rb_add` / `elv_rb_del` / `elv_rb_find`) and in
//! arrival order with an expiry time each (the `fifo` list whose entries carry
//! `rq_fifo_time`). Deadline-style and CFQ-style elevators keep one per queue.
//!
//! Requests with the same start sector keep their arrival order in the sorted view, as
//! `elv_rb_add` links an equal key to the right.
//!
//! Both views are vectors: insertion and removal are O(n) in the queue's length, with no
//! allocation once the vectors have grown to the longest the queue has been.

use std::collections::VecDeque;

use super::RqId;

/// Requests by sector and by arrival.
#[derive(Clone, Debug, Default)]
pub struct SortedFifo {
    by_sector: Vec<(u64, RqId)>,
    fifo: VecDeque<(RqId, u64)>,
}

impl SortedFifo {
    pub fn is_empty(&self) -> bool {
        self.by_sector.is_empty()
    }

    pub fn len(&self) -> usize {
        self.by_sector.len()
    }

    /// Queue `rq` starting at `sector`, expiring at `expires` (in the caller's clock).
    pub fn insert(&mut self, rq: RqId, sector: u64, expires: u64) {
        let at = self.by_sector.partition_point(|&(s, _)| s <= sector);
        self.by_sector.insert(at, (sector, rq));
        self.fifo.push_back((rq, expires));
    }

    /// Take `rq` (queued at `sector`) out of both views.
    pub fn remove(&mut self, rq: RqId, sector: u64) {
        let at = self.sorted_index(rq, sector);
        self.by_sector.remove(at);
        let pos = self
            .fifo
            .iter()
            .position(|&(r, _)| r == rq)
            .expect("a queued request is in the FIFO");
        self.fifo.remove(pos);
    }

    /// `rq` now starts at `new_sector` (a front merge): re-sort it, keeping its FIFO place.
    pub fn reposition(&mut self, rq: RqId, old_sector: u64, new_sector: u64) {
        let at = self.sorted_index(rq, old_sector);
        self.by_sector.remove(at);
        let at = self.by_sector.partition_point(|&(s, _)| s <= new_sector);
        self.by_sector.insert(at, (new_sector, rq));
    }

    /// The oldest request and its expiry (`rq_entry_fifo(fifo.next)`).
    pub fn fifo_front(&self) -> Option<(RqId, u64)> {
        self.fifo.front().copied()
    }

    /// The expiry recorded for `rq`.
    pub fn expiry(&self, rq: RqId) -> Option<u64> {
        self.fifo.iter().find(|&&(r, _)| r == rq).map(|&(_, e)| e)
    }

    /// Give `rq` a new expiry and move it just before `before` in the FIFO (a merge that
    /// keeps the older of two requests' deadlines).
    pub fn take_fifo_place(&mut self, rq: RqId, before: RqId, expires: u64) {
        let from = self.fifo.iter().position(|&(r, _)| r == rq);
        if let Some(from) = from {
            self.fifo.remove(from);
        }
        let to = self
            .fifo
            .iter()
            .position(|&(r, _)| r == before)
            .unwrap_or(self.fifo.len());
        self.fifo.insert(to, (rq, expires));
    }

    /// The lowest-sector request (`rb_first`).
    pub fn first(&self) -> Option<RqId> {
        self.by_sector.first().map(|&(_, r)| r)
    }

    /// The requests just before and just after `rq` (at `sector`) in sector order
    /// (`rb_prev`, `rb_next`).
    pub fn neighbours(&self, rq: RqId, sector: u64) -> (Option<RqId>, Option<RqId>) {
        let at = self.sorted_index(rq, sector);
        let prev = at.checked_sub(1).map(|i| self.by_sector[i].1);
        let next = self.by_sector.get(at + 1).map(|&(_, r)| r);
        (prev, next)
    }

    /// A request starting exactly at `sector` (`elv_rb_find`), the first queued there.
    pub fn find_at(&self, sector: u64) -> Option<RqId> {
        let at = self.by_sector.partition_point(|&(s, _)| s < sector);
        match self.by_sector.get(at) {
            Some(&(s, r)) if s == sector => Some(r),
            _ => None,
        }
    }

    /// Requests in sector order.
    pub fn iter_sorted(&self) -> impl Iterator<Item = RqId> + '_ {
        self.by_sector.iter().map(|&(_, r)| r)
    }

    fn sorted_index(&self, rq: RqId, sector: u64) -> usize {
        let from = self.by_sector.partition_point(|&(s, _)| s < sector);
        from + self.by_sector[from..]
            .iter()
            .position(|&(_, r)| r == rq)
            .expect("a queued request is in the sorted view at its sector")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sectors_keep_arrival_order_and_the_fifo_keeps_arrival() {
        let mut q = SortedFifo::default();
        q.insert(RqId(1), 80, 10);
        q.insert(RqId(2), 8, 11);
        q.insert(RqId(3), 80, 12);
        let sorted: Vec<_> = q.iter_sorted().collect();
        assert_eq!(sorted, vec![RqId(2), RqId(1), RqId(3)]);
        assert_eq!(q.fifo_front(), Some((RqId(1), 10)));
        assert_eq!(q.neighbours(RqId(1), 80), (Some(RqId(2)), Some(RqId(3))));
        assert_eq!(q.find_at(80), Some(RqId(1)));
        q.remove(RqId(1), 80);
        assert_eq!(q.fifo_front(), Some((RqId(2), 11)));
        q.reposition(RqId(3), 80, 0);
        assert_eq!(q.first(), Some(RqId(3)));
        assert_eq!(q.len(), 2);
    }
}

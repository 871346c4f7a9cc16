//! The queues Linux's deadline family keeps for each data direction: a list sorted by
//! start sector (the `sort_list` red-black tree, `elv_rb_add` / `elv_rb_del` /
//! `elv_rb_find` of block/elevator.c) and a list in arrival order (the `fifo_list`, whose
//! requests carry an expiry time, `rq->fifo_time`). A request sits on both lists of its
//! direction. Used by `deadline` (Linux 3.12 block/deadline-iosched.c), by
//! `deadline-lowprio` through it, by `mq-deadline` (one per priority class,
//! Linux 6.1 block/mq-deadline.c `struct dd_per_prio`), by `cfq` and by `bfq` (one per
//! queue, whose `sort_list` and `fifo` hold both directions: each uses one direction's
//! pair).
//!
//! Also [`RqList`], the kernel's intrusive `list_head` over requests (FIFO with removal
//! from the middle), which `noop`'s queue and `deadline-lowprio`'s held requests use.
//!
//! Storage is indexed by request id and grows with the number of requests a device
//! holds at once, never with the number of events: the sorted lists are vectors kept in
//! order (binary search for the kernel's rbtree walk; an insertion or removal moves the
//! entries after it, O(n) in the requests queued, cheap for the hundreds a queue holds),
//! the FIFOs are linked through slots.

use schedlab_spec::model::IoOp;

use super::RqId;
use crate::types::Time;

/// `READ` / `WRITE` (`rq_data_dir`), the index of a direction's lists.
pub const READ: usize = 0;
pub const WRITE: usize = 1;

/// The direction index of an operation.
pub fn dir_of(op: IoOp) -> usize {
    match op {
        IoOp::Read => READ,
        IoOp::Write => WRITE,
    }
}

const NIL: u32 = u32::MAX;

/// An intrusive doubly linked list of requests (`struct list_head` threaded through
/// `rq->queuelist`): append, remove any member, move one after another, all O(1).
pub struct RqList {
    head: u32,
    tail: u32,
    len: usize,
    links: Vec<Link>,
}

#[derive(Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
    linked: bool,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    linked: false,
};

impl Default for RqList {
    fn default() -> Self {
        RqList::new()
    }
}

impl RqList {
    pub fn new() -> RqList {
        RqList {
            head: NIL,
            tail: NIL,
            len: 0,
            links: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn contains(&self, rq: RqId) -> bool {
        self.links.get(rq.0 as usize).is_some_and(|l| l.linked)
    }

    /// The oldest member (`list_first_entry`).
    pub fn first(&self) -> Option<RqId> {
        (self.head != NIL).then_some(RqId(self.head))
    }

    /// `list_add_tail`.
    pub fn push_back(&mut self, rq: RqId) {
        let i = rq.0 as usize;
        if self.links.len() <= i {
            self.links.resize(i + 1, UNLINKED);
        }
        debug_assert!(!self.links[i].linked, "request {i} listed twice");
        self.links[i] = Link {
            prev: self.tail,
            next: NIL,
            linked: true,
        };
        match self.tail {
            NIL => self.head = rq.0,
            t => self.links[t as usize].next = rq.0,
        }
        self.tail = rq.0;
        self.len += 1;
    }

    /// Take the oldest member off.
    pub fn pop_front(&mut self) -> Option<RqId> {
        let first = self.first()?;
        self.remove(first);
        Some(first)
    }

    /// `list_del_init`; false if `rq` was not listed.
    pub fn remove(&mut self, rq: RqId) -> bool {
        if !self.contains(rq) {
            return false;
        }
        let l = self.links[rq.0 as usize];
        match l.prev {
            NIL => self.head = l.next,
            p => self.links[p as usize].next = l.next,
        }
        match l.next {
            NIL => self.tail = l.prev,
            n => self.links[n as usize].prev = l.prev,
        }
        self.links[rq.0 as usize] = UNLINKED;
        self.len -= 1;
        true
    }

    /// `list_move(&rq->queuelist, &after->queuelist)`: `rq` right after `after`.
    pub fn move_after(&mut self, rq: RqId, after: RqId) {
        if rq == after || !self.contains(after) || !self.remove(rq) {
            return;
        }
        let a = self.links[after.0 as usize];
        self.links[rq.0 as usize] = Link {
            prev: after.0,
            next: a.next,
            linked: true,
        };
        match a.next {
            NIL => self.tail = rq.0,
            n => self.links[n as usize].prev = rq.0,
        }
        self.links[after.0 as usize].next = rq.0;
        self.len += 1;
    }
}

/// Per request: where it sits in its sorted list, and its FIFO expiry.
#[derive(Clone, Copy, Default)]
struct Entry {
    dir: u8,
    sector: u64,
    /// Insertion order among requests at the same sector: `elv_rb_add` puts a request
    /// to the right of those already at its sector.
    seq: u64,
    fifo_time: Time,
}

/// The sort list and FIFO of each direction (`sort_list[2]`, `fifo_list[2]`).
#[derive(Default)]
pub struct SortedFifo {
    sorted: [Vec<(u64, u64, RqId)>; 2],
    fifo: [RqList; 2],
    entries: Vec<Entry>,
    seq: u64,
}

impl SortedFifo {
    pub fn new() -> SortedFifo {
        SortedFifo::default()
    }

    /// Nothing queued in direction `dir` (`list_empty(&fifo_list[dir])`).
    pub fn is_empty(&self, dir: usize) -> bool {
        self.fifo[dir].is_empty()
    }

    pub fn len(&self, dir: usize) -> usize {
        self.fifo[dir].len()
    }

    pub fn contains(&self, rq: RqId) -> bool {
        self.fifo.iter().any(|f| f.contains(rq))
    }

    /// `deadline_add_rq_rb` + `list_add_tail` on the FIFO, with expiry `fifo_time`.
    pub fn add(&mut self, rq: RqId, dir: usize, sector: u64, fifo_time: Time) {
        let i = rq.0 as usize;
        if self.entries.len() <= i {
            self.entries.resize(i + 1, Entry::default());
        }
        self.entries[i].fifo_time = fifo_time;
        self.entries[i].dir = dir as u8;
        self.sort_in(rq, sector);
        self.fifo[dir].push_back(rq);
    }

    /// Off both lists (`deadline_remove_request`); false if it was not queued.
    pub fn remove(&mut self, rq: RqId) -> bool {
        let Some(dir) = self.queued_dir(rq) else {
            return false;
        };
        self.fifo[dir].remove(rq);
        self.sort_out(rq);
        true
    }

    /// The oldest request of `dir` (`rq_entry_fifo(fifo_list[dir].next)`).
    pub fn fifo_first(&self, dir: usize) -> Option<RqId> {
        self.fifo[dir].first()
    }

    /// `rq_fifo_time`.
    pub fn fifo_time(&self, rq: RqId) -> Time {
        self.entries[rq.0 as usize].fifo_time
    }

    /// The request after `rq` in sector order (`deadline_latter_request`, `rb_next`).
    pub fn latter(&self, rq: RqId) -> Option<RqId> {
        let (dir, at) = self.position(rq);
        self.sorted[dir].get(at + 1).map(|&(_, _, r)| r)
    }

    /// The request before `rq` in sector order (`elv_rb_former_request`, `rb_prev`).
    pub fn former(&self, rq: RqId) -> Option<RqId> {
        let (dir, at) = self.position(rq);
        at.checked_sub(1).map(|i| self.sorted[dir][i].2)
    }

    /// The lowest-sector request of `dir` (`rb_first`).
    pub fn sorted_first(&self, dir: usize) -> Option<RqId> {
        self.sorted[dir].first().map(|&(_, _, r)| r)
    }

    /// The first request of `dir` starting at `sector` (`elv_rb_find`): the candidate
    /// for a front merge of a bio that ends there.
    pub fn find_at(&self, dir: usize, sector: u64) -> Option<RqId> {
        let list = &self.sorted[dir];
        let at = list.partition_point(|&(s, _, _)| s < sector);
        list.get(at).filter(|e| e.0 == sector).map(|&(_, _, r)| r)
    }

    /// `rq`'s start sector changed (a front merge): `elv_rb_del` then `elv_rb_add`.
    pub fn resort(&mut self, rq: RqId, sector: u64) {
        if self.queued_dir(rq).is_some() {
            self.sort_out(rq);
            self.sort_in(rq, sector);
        }
    }

    /// `next` is being merged into `rq`: if `next` expires first, `rq` takes its place
    /// in the FIFO and its expiry (`deadline_merged_requests`). The caller then removes
    /// `next`.
    pub fn inherit_expiry(&mut self, rq: RqId, next: RqId) {
        let (Some(d1), Some(d2)) = (self.queued_dir(rq), self.queued_dir(next)) else {
            return;
        };
        if d1 == d2 && self.fifo_time(next) < self.fifo_time(rq) {
            self.fifo[d1].move_after(rq, next);
            self.entries[rq.0 as usize].fifo_time = self.fifo_time(next);
        }
    }

    fn queued_dir(&self, rq: RqId) -> Option<usize> {
        let e = self.entries.get(rq.0 as usize)?;
        let dir = e.dir as usize;
        self.fifo[dir].contains(rq).then_some(dir)
    }

    fn key(&self, rq: RqId) -> (u64, u64, RqId) {
        let e = &self.entries[rq.0 as usize];
        (e.sector, e.seq, rq)
    }

    fn position(&self, rq: RqId) -> (usize, usize) {
        let dir = self.entries[rq.0 as usize].dir as usize;
        let at = self.sorted[dir]
            .binary_search(&self.key(rq))
            .expect("a queued request is in its sort list");
        (dir, at)
    }

    fn sort_in(&mut self, rq: RqId, sector: u64) {
        self.seq += 1;
        let e = &mut self.entries[rq.0 as usize];
        e.sector = sector;
        e.seq = self.seq;
        let dir = e.dir as usize;
        let key = self.key(rq);
        let at = self.sorted[dir].partition_point(|k| *k < key);
        self.sorted[dir].insert(at, key);
    }

    fn sort_out(&mut self, rq: RqId) {
        let (dir, at) = self.position(rq);
        self.sorted[dir].remove(at);
    }
}

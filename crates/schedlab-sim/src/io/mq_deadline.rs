//! `mq-deadline`: the blk-mq Deadline scheduler of Linux 6.1, block/mq-deadline.c
//! (Jens Axboe, 2016; I/O priority classes and their aging added later, before 6.1).
//! Requests are queued per I/O priority class (`struct dd_per_prio` for RT, BE and IDLE,
//! `ioprio_class_to_prio`: no class counts as BE), each with Deadline's sorted lists and
//! FIFOs per direction and its own `next_rq`; the batch state (`last_dir`, `batching`,
//! `starved`) is shared by the classes. `dd_dispatch_request`:
//! - first `dd_dispatch_prio_aged_requests`: when at least two classes have requests
//!   queued (`dd_queued` = inserted − completed, so dispatched requests still in the
//!   device count), BE then IDLE may dispatch a request that started at least
//!   `prio_aging_expire` (10 s) ago (`started_after`: its FIFO time minus its
//!   direction's expiry, i.e. its insertion);
//! - then the classes in order RT, BE, IDLE: `__dd_dispatch_request` of a class, and a
//!   lower class is not looked at while a higher one has requests queued or in flight.
//!
//! `__dd_dispatch_request` is 3.12's `deadline_dispatch_requests` per class, except that
//! the batch continues from the class's `next_rq` in `last_dir` (not "write first"),
//! writes count as pending only if their FIFO has a dispatchable request
//! (`deadline_fifo_request`), the FIFO check is `time_after_eq` (at the expiry itself),
//! and a request younger than `latest_start` is not dispatched (after `last_dir` and
//! `batching` were updated, as the source does).
//!
//! Tunables (sysfs `queue/iosched/`, `deadline_attrs`): `read_expire`, `write_expire`,
//! `prio_aging_expire` (ms), `writes_starved`, `fifo_batch`, `front_merges`,
//! `async_depth`, clamped as `STORE_FUNCTION` clamps them.
//!
//! Line numbers in 6.1's file: `dd_request_merged` 200, `dd_merged_requests` 220,
//! `deadline_check_fifo` 280, `started_after` 409, `__dd_dispatch_request` 423–534,
//! `dd_dispatch_prio_aged_requests` 540, `dd_dispatch_request` 572, `dd_request_merge`
//! 732, `dd_insert_request` 784, `dd_finish_request` 892, the sysfs stores 962–991.
//!
//! Linux 6.12 (block/mq-deadline.c of 6.12) changed: `next_rq` became `latest_pos`, the
//! batch continuing at the first request at or after the position of the last one
//! dispatched (`deadline_from_pos`) rather than at the request after it; the zoned-device
//! write locking left (zone write plugging took it over, so `deadline_fifo_request` is
//! the FIFO's head for writes too); `async_depth` is passed to the tag allocator
//! unscaled; the at-head `dispatch` list moved from each class to the scheduler. schedlab
//! models 6.1.
//!
//! Simplifications: no zoned devices; no at-head insertions (the block layer makes none,
//! so the per-class `dispatch` lists stay empty); `async_depth` limits the scheduler tags
//! asynchronous requests and writes may allocate, which the block layer does not model
//! (one table of requests per device): it is kept and has no effect; times are
//! nanoseconds, not jiffies.
//!
//! Merging (the block layer finds back merges and merges queued requests, io/merge.rs):
//! `dd_request_merge` offers a front-merge candidate from the sort list of the bio's
//! class and direction; schedlab's elevator API does not pass the bio's I/O priority, so
//! the classes are searched RT, BE, IDLE and the block layer refuses a candidate of
//! another priority (`blk_rq_merge_ok`). `dd_request_merged` re-sorts after a front
//! merge; `dd_merged_requests` passes the earlier expiry on and forgets the merged
//! request, which counts as completed in its class (`dd_finish_request` when it is
//! freed).

use schedlab_spec::model::IoPrioClass;

use super::deadline::{expired, front_merge_candidate, store_int, store_ms, DeadlineTunables};
use super::sorted_fifo::{dir_of, SortedFifo, READ, WRITE};
use super::{Bio, IoCtx, IoSchedInfo, IoScheduler, MergeKind, RqId};
use crate::types::Time;

const MS: Time = 1_000_000;

/// `enum dd_prio`.
const DD_RT_PRIO: usize = 0;
const DD_BE_PRIO: usize = 1;
const DD_IDLE_PRIO: usize = 2;
const DD_PRIO_COUNT: usize = 3;

/// `ioprio_class_to_prio`.
fn prio_of(class: IoPrioClass) -> usize {
    match class {
        IoPrioClass::Rt => DD_RT_PRIO,
        IoPrioClass::Be => DD_BE_PRIO,
        IoPrioClass::Idle => DD_IDLE_PRIO,
    }
}

/// `struct dd_per_prio` with its `io_stats_per_prio` counters.
#[derive(Default)]
struct PerPrio {
    lists: SortedFifo,
    next_rq: [Option<RqId>; 2],
    inserted: u32,
    completed: u32,
}

impl PerPrio {
    /// `dd_queued`: inserted and not yet completed (the counters may wrap).
    fn queued(&self) -> u32 {
        self.inserted.wrapping_sub(self.completed)
    }
}

/// `struct deadline_data` of Linux 6.1.
pub struct MqDeadline {
    per_prio: [PerPrio; DD_PRIO_COUNT],
    /// Direction of the last request dispatched (`DD_WRITE` at init).
    last_dir: usize,
    batching: u32,
    starved: u32,
    tunables: DeadlineTunables,
    prio_aging_expire: Time,
    /// `None`: the scheduler's request count (`dd_depth_updated`).
    async_depth: Option<u32>,
}

impl Default for MqDeadline {
    fn default() -> Self {
        MqDeadline {
            per_prio: Default::default(),
            last_dir: WRITE,
            batching: 0,
            starved: 0,
            tunables: DeadlineTunables::default(),
            prio_aging_expire: 10_000 * MS,
            async_depth: None,
        }
    }
}

impl MqDeadline {
    /// `started_after`: was `rq` inserted after `latest_start`?
    fn started_after(&self, p: usize, rq: RqId, io: &IoCtx, latest_start: i128) -> bool {
        let dir = dir_of(io.request(rq).op);
        let start =
            self.per_prio[p].lists.fifo_time(rq) as i128 - self.tunables.fifo_expire[dir] as i128;
        start > latest_start
    }

    /// `deadline_check_fifo`: has the oldest request of `dir` expired?
    fn check_fifo(&self, p: usize, dir: usize, io: &IoCtx) -> bool {
        let lists = &self.per_prio[p].lists;
        let first = lists.fifo_first(dir).expect("a non-empty FIFO");
        expired(io.now(), lists.fifo_time(first), true)
    }

    /// `__dd_dispatch_request` for class `p`, for requests started by `latest_start`.
    fn dispatch_from(&mut self, p: usize, io: &IoCtx, latest_start: i128) -> Option<RqId> {
        let batch_next = self.per_prio[p].next_rq[self.last_dir];
        let rq = match batch_next {
            Some(rq) if self.batching < self.tunables.fifo_batch => rq,
            _ => {
                let lists = &self.per_prio[p].lists;
                let (reads, writes) = (!lists.is_empty(READ), !lists.is_empty(WRITE));
                let dir =
                    if reads && !(writes && self.tunables.writes_have_starved(&mut self.starved)) {
                        READ
                    } else if writes {
                        self.starved = 0;
                        WRITE
                    } else {
                        return None;
                    };
                let rq = match self.per_prio[p].next_rq[dir] {
                    Some(next) if !self.check_fifo(p, dir, io) => next,
                    _ => self.per_prio[p].lists.fifo_first(dir)?,
                };
                self.last_dir = dir;
                self.batching = 0;
                rq
            }
        };
        if self.started_after(p, rq, io, latest_start) {
            return None;
        }
        self.batching += 1;
        let pp = &mut self.per_prio[p];
        let dir = dir_of(io.request(rq).op);
        pp.next_rq[dir] = pp.lists.latter(rq);
        pp.lists.remove(rq);
        Some(rq)
    }

    /// `dd_dispatch_prio_aged_requests`.
    fn dispatch_aged(&mut self, io: &IoCtx) -> Option<RqId> {
        let busy = self.per_prio.iter().filter(|pp| pp.queued() > 0).count();
        if busy < 2 {
            return None;
        }
        let latest_start = io.now() as i128 - self.prio_aging_expire as i128;
        (DD_BE_PRIO..=DD_IDLE_PRIO).find_map(|p| self.dispatch_from(p, io, latest_start))
    }
}

impl IoScheduler for MqDeadline {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "mq-deadline",
            summary: "Linux 6.1 mq-deadline: Deadline per I/O priority class, RT before BE before IDLE, aging after prio_aging_expire",
            source: "torvalds/linux v6.1 block/mq-deadline.c: dd_insert_request, dd_dispatch_request, __dd_dispatch_request, dd_dispatch_prio_aged_requests, dd_finish_request",
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "prio_aging_expire" => self.prio_aging_expire = store_ms(value)?,
            "async_depth" => self.async_depth = Some(store_int(value, 1, i32::MAX as i64)? as u32),
            _ => {
                if !self.tunables.set(name, value)? {
                    return Err(format!(
                        "unknown parameter '{name}' (mq-deadline has read_expire, write_expire, writes_starved, fifo_batch, front_merges, async_depth, prio_aging_expire)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// `dd_request_merge`.
    fn request_merge(&mut self, _io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        self.per_prio.iter().find_map(|pp| {
            front_merge_candidate(&pp.lists, &self.tunables, bio.sector, bio.bytes, bio.op)
        })
    }

    /// `dd_request_merged`: a front merge moved the request's start.
    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            let r = io.request(rq);
            self.per_prio[prio_of(r.ioprio.class)]
                .lists
                .resort(rq, r.sector);
        }
    }

    fn merges_requests(&self) -> bool {
        true
    }

    /// `dd_merged_requests`.
    fn requests_merged(&mut self, io: &mut IoCtx, rq: RqId, next: RqId) {
        let pp = &mut self.per_prio[prio_of(io.request(next).ioprio.class)];
        if !pp.lists.contains(next) {
            // A new request merged before it was inserted.
            return;
        }
        pp.lists.inherit_expiry(rq, next);
        let dir = dir_of(io.request(next).op);
        if pp.next_rq[dir] == Some(next) {
            pp.next_rq[dir] = pp.lists.latter(next);
        }
        pp.lists.remove(next);
        pp.completed = pp.completed.wrapping_add(1);
    }

    /// `dd_insert_request`: counted in its class, on the sort list and at the FIFO's tail.
    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        let r = io.request(rq);
        let dir = dir_of(r.op);
        let pp = &mut self.per_prio[prio_of(r.ioprio.class)];
        pp.inserted = pp.inserted.wrapping_add(1);
        let expiry = io.now() + self.tunables.fifo_expire[dir];
        pp.lists.add(rq, dir, r.sector, expiry);
    }

    /// `dd_has_work`.
    fn has_work(&self, _io: &IoCtx) -> bool {
        self.per_prio
            .iter()
            .any(|pp| !pp.lists.is_empty(READ) || !pp.lists.is_empty(WRITE))
    }

    /// `dd_dispatch_request`.
    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId> {
        if let Some(rq) = self.dispatch_aged(io) {
            return Some(rq);
        }
        let now = io.now() as i128;
        for p in 0..DD_PRIO_COUNT {
            let rq = self.dispatch_from(p, io, now);
            if rq.is_some() || self.per_prio[p].queued() > 0 {
                return rq;
            }
        }
        None
    }

    /// `dd_finish_request`.
    fn completed(&mut self, io: &mut IoCtx, rq: RqId) {
        let pp = &mut self.per_prio[prio_of(io.request(rq).ioprio.class)];
        pp.completed = pp.completed.wrapping_add(1);
    }
}

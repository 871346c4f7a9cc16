//! `deadline`: the legacy (single-queue) Deadline I/O scheduler of Linux 3.12,
//! block/deadline-iosched.c (Jens Axboe, 2002; unchanged in its dispatch logic from
//! 2.6.x to 4.x). Each direction has a sector-sorted list and a FIFO whose requests
//! expire `read_expire` (500 ms) or `write_expire` (5 s) after they were queued
//! (`deadline_add_request`). `deadline_dispatch_requests`:
//! - a batch continues in sector order (`next_rq`, the request after the last one
//!   dispatched, write preferred; only one direction has one) while fewer than
//!   `fifo_batch` (16) requests were dispatched in it;
//! - otherwise reads are chosen unless writes are pending and reads have already been
//!   chosen `writes_starved` (2) times since writes last were (`starved++ >=
//!   writes_starved`, an unsigned comparison: a negative `writes_starved` means never);
//! - in the chosen direction the batch starts at the FIFO's oldest request if it has
//!   expired (`deadline_check_fifo`: `time_after(jiffies, fifo_time)`, strictly after)
//!   or there is no `next_rq` in that direction, else at `next_rq`.
//!
//! `deadline_move_request` clears both `next_rq` and sets the dispatched direction's to
//! the request after it in sector order; removing `next_rq` from the lists moves it on
//! (`deadline_del_rq_rb`).
//!
//! Tunables (sysfs `queue/iosched/`, `deadline_attrs`): `read_expire`, `write_expire`
//! (ms), `writes_starved`, `fifo_batch`, `front_merges` (0/1), clamped as
//! `STORE_FUNCTION` clamps them.
//!
//! Simplifications: times are nanoseconds rather than jiffies (`msecs_to_jiffies` is
//! exact at HZ=1000; at lower HZ the kernel rounds expiries up to a tick); the legacy
//! dispatch queue holds one request at a time (the block layer asks for the next request
//! when a tag frees, as `__elv_next_request` calls `elevator_dispatch_fn` when the
//! dispatch list is empty); no forced dispatch (`force`, used only on queue drain).
//!
//! Merging (the block layer finds back merges and merges queued requests, io/merge.rs):
//! `deadline_merge` offers the request of the bio's direction that starts where the bio
//! ends (a front merge, with `front_merges` = 1); `deadline_merged_request` re-sorts a
//! request whose start moved; `deadline_merged_requests` gives the surviving request the
//! earlier expiry and FIFO place of the one merged into it, then forgets that one.

use schedlab_spec::model::{IoOp, SECTOR_BYTES};

use super::sorted_fifo::{dir_of, SortedFifo, READ, WRITE};
use super::{Bio, IoCtx, IoSchedInfo, IoScheduler, MergeKind, RqId};
use crate::types::Time;

const MS: Time = 1_000_000;

/// The tunables Linux 3.12's deadline and Linux 6.1's mq-deadline share, with their
/// defaults (`read_expire = HZ / 2`, `write_expire = 5 * HZ`, `writes_starved = 2`,
/// `fifo_batch = 16`, `front_merges = 1`).
#[derive(Clone, Copy, Debug)]
pub struct DeadlineTunables {
    /// `fifo_expire[READ]`, `fifo_expire[WRITE]`.
    pub fifo_expire: [Time; 2],
    pub fifo_batch: u32,
    pub writes_starved: i32,
    pub front_merges: bool,
}

impl Default for DeadlineTunables {
    fn default() -> Self {
        DeadlineTunables {
            fifo_expire: [500 * MS, 5_000 * MS],
            fifo_batch: 16,
            writes_starved: 2,
            front_merges: true,
        }
    }
}

impl DeadlineTunables {
    /// `starved++ >= writes_starved`: the kernel compares the unsigned counter with the
    /// int tunable converted to unsigned (so -1 is 4294967295).
    pub fn writes_have_starved(&self, starved: &mut u32) -> bool {
        let before = *starved;
        *starved = starved.wrapping_add(1);
        before >= self.writes_starved as u32
    }

    /// Store one of the shared tunables; `Ok(false)` if `name` is not one of them.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "read_expire" => self.fifo_expire[READ] = store_ms(value)?,
            "write_expire" => self.fifo_expire[WRITE] = store_ms(value)?,
            "writes_starved" => {
                self.writes_starved = store_int(value, i32::MIN as i64, i32::MAX as i64)? as i32
            }
            "fifo_batch" => self.fifo_batch = store_int(value, 0, i32::MAX as i64)? as u32,
            "front_merges" => self.front_merges = store_int(value, 0, 1)? == 1,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A sysfs integer store: an integer, clamped to `min..=max` as `STORE_FUNCTION` does.
pub fn store_int(value: &str, min: i64, max: i64) -> Result<i64, String> {
    let v: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("expected an integer, found {value:?}"))?;
    Ok(v.clamp(min, max))
}

/// A sysfs time in milliseconds (0..=INT_MAX, `msecs_to_jiffies`), as nanoseconds.
pub fn store_ms(value: &str) -> Result<Time, String> {
    Ok(store_int(value, 0, i32::MAX as i64)? as Time * MS)
}

/// `time_after(now, fifo_time)` (3.12) or `time_after_eq` (6.1, `inclusive`).
pub fn expired(now: Time, fifo_time: Time, inclusive: bool) -> bool {
    if inclusive {
        now >= fifo_time
    } else {
        now > fifo_time
    }
}

/// `struct deadline_data` of Linux 3.12.
#[derive(Default)]
pub struct Deadline {
    lists: SortedFifo,
    /// The next request in sector order per direction; at most one is set.
    next_rq: [Option<RqId>; 2],
    /// Requests dispatched in the current batch.
    batching: u32,
    /// Times reads were chosen while writes were pending.
    starved: u32,
    pub tunables: DeadlineTunables,
}

impl Deadline {
    /// `deadline_add_request`: on the sort list and at the FIFO's tail, expiring
    /// `fifo_expire` from now.
    pub fn add_request(&mut self, io: &IoCtx, rq: RqId) {
        let r = io.request(rq);
        let dir = dir_of(r.op);
        let expiry = io.now() + self.tunables.fifo_expire[dir];
        self.lists.add(rq, dir, r.sector, expiry);
    }

    /// `deadline_remove_request`: off both lists, moving `next_rq` past it.
    fn remove_request(&mut self, rq: RqId) {
        for next in &mut self.next_rq {
            if *next == Some(rq) {
                *next = self.lists.latter(rq);
            }
        }
        self.lists.remove(rq);
    }

    /// `deadline_move_request`: only the dispatched direction keeps a `next_rq`.
    fn move_request(&mut self, io: &IoCtx, rq: RqId) {
        let dir = dir_of(io.request(rq).op);
        self.next_rq = [None, None];
        self.next_rq[dir] = self.lists.latter(rq);
        self.lists.remove(rq);
    }

    /// `deadline_check_fifo`: has the oldest request of `dir` expired?
    fn check_fifo(&self, io: &IoCtx, dir: usize) -> bool {
        let first = self.lists.fifo_first(dir).expect("a non-empty FIFO");
        expired(io.now(), self.lists.fifo_time(first), false)
    }

    /// `deadline_dispatch_requests`.
    fn dispatch_requests(&mut self, io: &IoCtx) -> Option<RqId> {
        let reads = !self.lists.is_empty(READ);
        let writes = !self.lists.is_empty(WRITE);
        let batch_next = self.next_rq[WRITE].or(self.next_rq[READ]);
        let rq = match batch_next {
            Some(rq) if self.batching < self.tunables.fifo_batch => rq,
            _ => {
                let dir =
                    if reads && !(writes && self.tunables.writes_have_starved(&mut self.starved)) {
                        READ
                    } else if writes {
                        self.starved = 0;
                        WRITE
                    } else {
                        return None;
                    };
                self.batching = 0;
                match self.next_rq[dir] {
                    Some(next) if !self.check_fifo(io, dir) => next,
                    _ => self.lists.fifo_first(dir).expect("a non-empty FIFO"),
                }
            }
        };
        self.batching += 1;
        self.move_request(io, rq);
        Some(rq)
    }

    /// Is `rq` on Deadline's lists?
    pub fn holds(&self, rq: RqId) -> bool {
        self.lists.contains(rq)
    }
}

/// `deadline_merge` / `dd_request_merge`: the request of the bio's direction in `lists`
/// that starts where the bio ends, for a front merge.
pub fn front_merge_candidate(
    lists: &SortedFifo,
    tunables: &DeadlineTunables,
    sector: u64,
    bytes: u64,
    op: IoOp,
) -> Option<(RqId, MergeKind)> {
    if !tunables.front_merges {
        return None;
    }
    let end = sector + bytes / SECTOR_BYTES;
    lists
        .find_at(dir_of(op), end)
        .map(|rq| (rq, MergeKind::Front))
}

impl IoScheduler for Deadline {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "deadline",
            summary: "Linux 3.12 Deadline: sector-sorted batches, read/write FIFO expiry, writes_starved",
            source: "torvalds/linux v3.12 block/deadline-iosched.c: deadline_add_request, deadline_dispatch_requests, deadline_check_fifo, deadline_move_request",
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        if self.tunables.set(name, value)? {
            Ok(())
        } else {
            Err(format!(
                "unknown parameter '{name}' (deadline has read_expire, write_expire, writes_starved, fifo_batch, front_merges)"
            ))
        }
    }

    fn request_merge(&mut self, _io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        front_merge_candidate(&self.lists, &self.tunables, bio.sector, bio.bytes, bio.op)
    }

    /// `deadline_merged_request`: a front merge moved the request's start.
    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            self.lists.resort(rq, io.request(rq).sector);
        }
    }

    fn merges_requests(&self) -> bool {
        true
    }

    /// `deadline_merged_requests`.
    fn requests_merged(&mut self, _io: &mut IoCtx, rq: RqId, next: RqId) {
        self.lists.inherit_expiry(rq, next);
        self.remove_request(next);
    }

    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        self.add_request(io, rq);
    }

    fn has_work(&self, _io: &IoCtx) -> bool {
        !self.lists.is_empty(READ) || !self.lists.is_empty(WRITE)
    }

    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId> {
        self.dispatch_requests(io)
    }
}

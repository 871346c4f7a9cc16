//! `noop`: the legacy (single-queue) no-op elevator of Linux 3.12,
//! block/noop-iosched.c. `noop_add_request` appends a request to one FIFO;
//! `noop_dispatch` hands the device the oldest (`elv_dispatch_sort` of one request on an
//! empty dispatch list keeps that order); `noop_merged_requests` drops a request merged
//! into another from the FIFO. noop finds no merges itself (it has no
//! `elevator_merge_fn`): the block layer's back merges (`elv_merge` through the request
//! hash) are all it gets.
//!
//! How it relates to `none`: noop was the legacy block layer's "no scheduling"
//! elevator. blk-mq (Linux 3.13 on) runs without an elevator instead, which sysfs shows
//! as `none` (io/none.rs); Linux 5.0 removed the legacy path and noop with it, and
//! `none` is what a system asking for noop gets since. Both serve requests in
//! submission order; the difference in the kernel is where merges are found (the
//! elevator's hash for noop, the plug and the software queues for `none`). In schedlab
//! both keep one FIFO; noop lets the block layer merge queued requests
//! (`merges_requests`), as the legacy elevator did through `noop_merged_requests`.

use super::sorted_fifo::RqList;
use super::{IoCtx, IoSchedInfo, IoScheduler, RqId};

/// One FIFO of requests.
#[derive(Default)]
pub struct Noop {
    queue: RqList,
}

impl IoScheduler for Noop {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "noop",
            summary: "Linux 3.12 noop: one FIFO, merges only (the legacy block layer's 'none')",
            source: "torvalds/linux v3.12 block/noop-iosched.c: noop_add_request, noop_dispatch, noop_merged_requests",
        }
    }

    fn merges_requests(&self) -> bool {
        true
    }

    /// `noop_merged_requests`: `next` leaves the FIFO.
    fn requests_merged(&mut self, _io: &mut IoCtx, _rq: RqId, next: RqId) {
        self.queue.remove(next);
    }

    fn insert(&mut self, _io: &mut IoCtx, rq: RqId) {
        self.queue.push_back(rq);
    }

    fn has_work(&self, _io: &IoCtx) -> bool {
        !self.queue.is_empty()
    }

    fn dispatch(&mut self, _io: &mut IoCtx) -> Option<RqId> {
        self.queue.pop_front()
    }
}

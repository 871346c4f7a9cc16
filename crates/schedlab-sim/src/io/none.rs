//! `none`: blk-mq without an I/O scheduler. Requests go to the hardware queue in the
//! order they were submitted (block/blk-mq.c: with no elevator, `blk_mq_submit_bio`
//! issues directly, and requests that find every tag taken wait on the hardware
//! context's dispatch list, which is FIFO — `blk_mq_request_bypass_insert` /
//! `blk_mq_dispatch_rq_list`). Linux v6.x.
//!
//! Complexity: O(1) per operation.

use std::collections::VecDeque;

use super::{IoCtx, IoSchedInfo, IoScheduler, RqId};

/// First come, first served.
#[derive(Default)]
pub struct NoneSched {
    fifo: VecDeque<RqId>,
}

impl IoScheduler for NoneSched {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "none",
            summary: "no I/O scheduler: requests go to the device in submission order",
            source: "torvalds/linux block/blk-mq.c (v6.x): blk_mq_submit_bio, blk_mq_request_bypass_insert",
        }
    }

    fn insert(&mut self, _io: &mut IoCtx, rq: RqId) {
        self.fifo.push_back(rq);
    }

    fn has_work(&self, _io: &IoCtx) -> bool {
        !self.fifo.is_empty()
    }

    fn dispatch(&mut self, _io: &mut IoCtx) -> Option<RqId> {
        self.fifo.pop_front()
    }
}

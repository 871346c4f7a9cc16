//! Plugging, as Linux 6.1 does it (block/blk-core.c `blk_start_plug`, `blk_finish_plug`,
//! `__blk_flush_plug`; block/blk-mq.c `blk_add_rq_to_plug`, `blk_mq_flush_plug_list`,
//! `blk_mq_dispatch_plug_list`; block/blk-merge.c `blk_attempt_plug_merge`;
//! kernel/sched/core.c `sched_submit_work`).
//!
//! A task that opens a plug keeps the requests it submits on its own list instead of
//! handing them to the elevator: a new bio first tries to join the newest request on the
//! plug for its device (back or front, same checks as any merge, nothing with
//! `queue/nomerges` = 2), then a request already queued; a bio that joins neither becomes
//! a request on the plug. The plug is flushed — its requests inserted in submission order,
//! each one first offered to the queued requests (`elv_attempt_insert_merge`), device by
//! device, then each device's queue run — when the task closes it (`blk_finish_plug`),
//! when it blocks with it open (`sched_submit_work`), and before a request is added to a
//! plug that already holds `BLK_MAX_REQUEST_COUNT` (32; 64 when it spans devices) or
//! whose newest request has reached `BLK_PLUG_FLUSH_SIZE` (128 KiB) with merging on.
//!
//! Who plugs, in this model: a `schedlab:io` op that submits more than two requests in one
//! call (fs/aio.c `io_submit`: `AIO_PLUG_THRESHOLD` = 2), and the kernel's own batches
//! (writeback, read-ahead). Simplifications: the queue run after a flush is synchronous
//! (the kernel defers it to kblockd when the flush comes from `schedule()`); no plug
//! callbacks (MD/DM); no cached requests.

use super::merge::{bio_joins, NoMerges};
use super::{BlockLayer, RqId};
use crate::ctx::Ctx;
use crate::types::TaskId;

/// `BLK_MAX_REQUEST_COUNT` (include/linux/blkdev.h, 6.1).
pub const BLK_MAX_REQUEST_COUNT: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (include/linux/blkdev.h, 6.1): 128 KiB.
pub const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;

/// A task's plug (`struct blk_plug`).
#[derive(Default)]
pub(crate) struct Plug {
    open: bool,
    /// Plugged requests, oldest first (device, request).
    rqs: Vec<(u32, RqId)>,
    multiple_queues: bool,
}

impl BlockLayer {
    fn plug_of(&mut self, t: TaskId) -> &mut Plug {
        if self.plugs.len() <= t.idx() {
            self.plugs.resize_with(t.idx() + 1, Plug::default);
        }
        &mut self.plugs[t.idx()]
    }

    /// `blk_start_plug` (a nested plug is no plug: the outer one stays).
    pub fn start_plug(&mut self, t: TaskId) {
        self.plug_of(t).open = true;
    }

    /// `blk_finish_plug`: flush and close `t`'s plug.
    pub fn finish_plug(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.flush_plug(ctx, t);
        if let Some(p) = self.plugs.get_mut(t.idx()) {
            p.open = false;
        }
    }

    /// `t` blocks (`sched_submit_work`): its plugged requests go to their queues.
    pub fn task_blocks(&mut self, ctx: &mut Ctx, t: TaskId) {
        if self.plugs.get(t.idx()).is_some_and(|p| !p.rqs.is_empty()) {
            self.flush_plug(ctx, t);
        }
    }

    /// Whether `t` has a plug open.
    pub(super) fn plugged(&self, t: TaskId) -> bool {
        self.plugs.get(t.idx()).is_some_and(|p| p.open)
    }

    /// `blk_attempt_plug_merge`: put bio `b` for device `dev` into the newest plugged
    /// request of that device if it joins it.
    pub(super) fn try_plug_merge(&mut self, t: TaskId, dev: u32, b: u32) -> bool {
        let plug = &self.plugs[t.idx()];
        let q = &mut self.queues[dev as usize];
        if q.limits.nomerges == NoMerges::Never {
            return false;
        }
        let bio = q.bios[b as usize];
        for &(d, id) in plug.rqs.iter().rev() {
            if d == dev {
                let rq = q.reqs[id.0 as usize].as_ref().expect("a plugged request");
                return bio_joins(rq, &bio).is_some_and(|kind| q.append_bio(id, b, kind));
            }
            if !plug.multiple_queues {
                break;
            }
        }
        false
    }

    /// `blk_add_rq_to_plug`: hold new request `id` of device `dev` on `t`'s plug,
    /// flushing the plug first if it is full.
    pub(super) fn add_to_plug(&mut self, ctx: &mut Ctx, t: TaskId, dev: u32, id: RqId) {
        let full = {
            let plug = &self.plugs[t.idx()];
            plug.rqs.last().is_some_and(|&(d, last)| {
                let max = if plug.multiple_queues {
                    2 * BLK_MAX_REQUEST_COUNT
                } else {
                    BLK_MAX_REQUEST_COUNT
                };
                let q = &self.queues[d as usize];
                let last_bytes = q.reqs[last.0 as usize].as_ref().map_or(0, |r| r.bytes);
                plug.rqs.len() >= max
                    || (self.queues[dev as usize].limits.nomerges != NoMerges::Never
                        && last_bytes >= BLK_PLUG_FLUSH_SIZE)
            })
        };
        if full {
            self.flush_plug(ctx, t);
        }
        let plug = &mut self.plugs[t.idx()];
        if plug.rqs.last().is_some_and(|&(d, _)| d != dev) {
            plug.multiple_queues = true;
        }
        plug.rqs.push((dev, id));
        if let Some(rq) = self.queues[dev as usize].reqs[id.0 as usize].as_mut() {
            rq.plugged = true;
        }
    }

    /// `blk_mq_flush_plug_list`: insert the plugged requests, device by device in the
    /// order each device first appears, each device's in submission order, and run each
    /// device's queue.
    pub(super) fn flush_plug(&mut self, ctx: &mut Ctx, t: TaskId) {
        let Some(plug) = self.plugs.get_mut(t.idx()) else {
            return;
        };
        let mut rqs = std::mem::take(&mut plug.rqs);
        plug.multiple_queues = false;
        while let Some(&(dev, _)) = rqs.first() {
            let q = &mut self.queues[dev as usize];
            for &(_, id) in rqs.iter().filter(|&&(d, _)| d == dev) {
                if let Some(rq) = q.reqs[id.0 as usize].as_mut() {
                    rq.plugged = false;
                }
                q.insert(ctx, dev, id);
            }
            q.run(ctx, dev);
            rqs.retain(|&(d, _)| d != dev);
        }
        self.plugs[t.idx()].rqs = rqs;
    }
}

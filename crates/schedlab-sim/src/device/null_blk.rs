//! Linux's null_blk in timer mode (`irqmode=2`): every request completes `completion_nsec`
//! after it is issued, whatever its size or position, with `hw_queue_depth` tags.
//! Source: torvalds/linux Documentation/block/null_blk.rst (v6.x: `irqmode`,
//! `completion_nsec` default 10,000, `hw_queue_depth` default 64, `gb` default 250) and
//! drivers/block/null_blk/main.c (`null_handle_cmd` → `nullb_complete_cmd` → the
//! hrtimer for IRQ_TIMER).

use super::{DevCtx, Device};
use crate::io::{Request, RqId};

pub struct NullBlk {
    pub completion_ns: u64,
    pub queue_depth: u32,
    pub size_bytes: u64,
}

impl Device for NullBlk {
    fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// The completion timer: one event per request, its token the request's tag.
    fn queue(&mut self, dc: &mut DevCtx, id: RqId, _rq: &Request) {
        let at = dc.now() + self.completion_ns;
        dc.arm(at, id.0 as u64);
    }

    fn event(&mut self, _dc: &mut DevCtx, token: u64) -> Option<RqId> {
        Some(RqId(token as u32))
    }
}

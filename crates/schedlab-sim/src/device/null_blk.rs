//! Linux's null_blk in timer mode (`irqmode=2`): every request completes `completion_nsec`
//! after it is issued, whatever its size or position, with `hw_queue_depth` tags.
//! Source: torvalds/linux Documentation/block/null_blk.rst (v6.x: `irqmode`,
//! `completion_nsec` default 10,000, `hw_queue_depth` default 64, `gb` default 250) and
//! drivers/block/null_blk/main.c (`null_handle_cmd` → `nullb_complete_cmd` → the
//! hrtimer for IRQ_TIMER).

use super::Device;
use crate::io::Request;
use crate::types::Time;

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

    fn service_ns(&mut self, _rq: &Request, _now: Time) -> u64 {
        self.completion_ns
    }
}

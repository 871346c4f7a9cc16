//! Block device models: how a device services the requests the block layer hands it, and
//! how many it takes at once. One model per file; [`construct`] builds the model a spec
//! names.
//!
//! A device is told of each request when it is issued ([`Device::queue`], blk-mq's
//! `queue_rq`) and decides itself when each completes: it arms its own events through
//! [`DevCtx::arm`] and, when one fires ([`Device::event`]), says which request (if any)
//! it completes. So a device may reorder what it holds (a disk's command queueing), keep
//! working between requests (destaging its write cache) or complete requests at once
//! from a cache, and the block layer only counts tags.

pub mod hdd;
pub mod null_blk;
pub mod ssd;

use schedlab_spec::model::DeviceModel;

use crate::ctx::Ctx;
use crate::event::EventKind;
use crate::io::{Request, RqId};
use crate::types::Time;

/// Device event tokens are below 2^35 (the block layer keeps bit 35 of a device event's
/// word for its I/O scheduler's timers).
pub const TOKEN_LIMIT: u64 = 1 << 35;

/// What a device may do when called: read the clock and arm its own events.
pub struct DevCtx<'a> {
    ctx: &'a mut Ctx,
    dev: u32,
}

impl<'a> DevCtx<'a> {
    pub(crate) fn new(ctx: &'a mut Ctx, dev: u32) -> Self {
        DevCtx { ctx, dev }
    }

    pub fn now(&self) -> Time {
        self.ctx.now()
    }

    /// Call [`Device::event`] with `token` (< [`TOKEN_LIMIT`]) at `at` (not before now).
    /// Events at the same time fire in the order they were armed.
    pub fn arm(&mut self, at: Time, token: u64) {
        assert!(
            token < TOKEN_LIMIT,
            "device event token {token:#x} too wide"
        );
        let at = at.max(self.ctx.now());
        let dev = self.dev;
        self.ctx.push(at, EventKind::Device { dev, data: token });
    }
}

/// A device behind a hardware queue (`struct blk_mq_ops`'s side of the block layer).
pub trait Device {
    /// Requests it takes at once (the tag set's `queue_depth`).
    fn queue_depth(&self) -> u32;

    /// Capacity in bytes.
    fn size_bytes(&self) -> u64;

    /// The device takes request `rq`, tag `id`, at `dc.now()` (`queue_rq`). It reports the
    /// request's completion exactly once, as the value of a later [`Device::event`].
    fn queue(&mut self, dc: &mut DevCtx, id: RqId, rq: &Request);

    /// An event armed with [`DevCtx::arm`] fires: the request it completes, if any.
    fn event(&mut self, dc: &mut DevCtx, token: u64) -> Option<RqId>;
}

/// The model a spec's device names.
pub fn construct(model: &DeviceModel) -> Box<dyn Device> {
    match model {
        DeviceModel::NullBlk {
            completion_ns,
            queue_depth,
            size_bytes,
            ..
        } => Box::new(null_blk::NullBlk {
            completion_ns: *completion_ns,
            queue_depth: *queue_depth,
            size_bytes: *size_bytes,
        }),
        DeviceModel::Hdd(p) => Box::new(hdd::Hdd::new(p.clone())),
        DeviceModel::Ssd(p) => Box::new(ssd::Ssd::new(p.clone())),
    }
}

/// Time (ns, rounded up) to move `bytes` at `bps` bytes per second (the parser bounds
/// both, so it fits with room to add).
pub(crate) fn transfer_ns(bytes: u64, bps: u64) -> u64 {
    let ns = (bytes as u128 * 1_000_000_000).div_ceil(bps as u128);
    ns.min(u64::MAX as u128 / 4) as u64
}

//! Block device models: how long a device takes to service a request, and how many it
//! takes at once. One model per file; [`construct`] builds the model a spec names.

pub mod null_blk;

use schedlab_spec::model::DeviceModel;

use crate::io::Request;
use crate::types::Time;

/// A device behind a hardware queue (`struct blk_mq_ops`'s side of the block layer).
pub trait Device {
    /// Requests it takes at once (the tag set's `queue_depth`).
    fn queue_depth(&self) -> u32;

    /// Capacity in bytes.
    fn size_bytes(&self) -> u64;

    /// The device starts `rq` at `now` (`queue_rq`): how long until it completes. Models
    /// with state (a disk head) update it here.
    fn service_ns(&mut self, rq: &Request, now: Time) -> u64;
}

/// The model a spec's device names.
pub fn construct(model: &DeviceModel) -> Box<dyn Device> {
    match *model {
        DeviceModel::NullBlk {
            completion_ns,
            queue_depth,
            size_bytes,
        } => Box::new(null_blk::NullBlk {
            completion_ns,
            queue_depth,
            size_bytes,
        }),
    }
}

//! Which per-process queue a request goes to, as CFQ and BFQ choose it: every task has
//! its own synchronous queue (`bic->bfqq[1]`, `cic->cfqq[1]`), and asynchronous requests
//! (writeback) share one queue per I/O priority — one per level of the RT and
//! best-effort classes, one for the idle class (block/bfq-iosched.c, Linux 6.1:
//! `bfq_get_queue`, `bfq_async_queue_prio`; block/cfq-iosched.c, 3.12:
//! `cfq_async_queue_prio`).
//!
//! The table maps to queue indices; the scheduler keeps the queues themselves. The sync
//! queues are per-task slots of [`TaskTable`]; it grows with the tasks, never with
//! requests.

use schedlab_spec::model::{IoPrio, IoPrioClass, IOPRIO_LEVELS};

use super::task_table::TaskTable;
use crate::types::TaskId;

const NONE: u32 = u32::MAX;

/// The shared asynchronous queues: one per level of the RT and best-effort classes, one
/// for the idle class (`async_cfqq` / `async_bfqq` and their idle-class queue).
#[derive(Clone, Debug)]
pub struct AsyncQueues {
    /// [RT, BE][level].
    by_prio: [[u32; IOPRIO_LEVELS as usize]; 2],
    idle: u32,
}

impl Default for AsyncQueues {
    fn default() -> Self {
        AsyncQueues {
            by_prio: [[NONE; IOPRIO_LEVELS as usize]; 2],
            idle: NONE,
        }
    }
}

impl AsyncQueues {
    /// The async queue of `ioprio`, if it was created.
    pub fn get(&self, ioprio: IoPrio) -> Option<u32> {
        let level = ioprio.level.min(IOPRIO_LEVELS - 1) as usize;
        let slot = match ioprio.class {
            IoPrioClass::Rt => self.by_prio[0][level],
            IoPrioClass::Be => self.by_prio[1][level],
            IoPrioClass::Idle => self.idle,
        };
        (slot != NONE).then_some(slot)
    }

    /// The async queue of `ioprio` (`cfq_async_queue_prio` / `bfq_async_queue_prio`),
    /// created with `create` (given the index the new queue will have) the first time.
    pub fn get_or_create(&mut self, ioprio: IoPrio, create: impl FnOnce() -> u32) -> u32 {
        let level = ioprio.level.min(IOPRIO_LEVELS - 1) as usize;
        let slot = match ioprio.class {
            IoPrioClass::Rt => &mut self.by_prio[0][level],
            IoPrioClass::Be => &mut self.by_prio[1][level],
            IoPrioClass::Idle => &mut self.idle,
        };
        if *slot == NONE {
            *slot = create();
        }
        *slot
    }
}

/// Task and priority → the index of the queue a request belongs to.
#[derive(Clone, Debug, Default)]
pub struct ProcessQueues {
    sync: TaskTable<u32>,
    asyncs: AsyncQueues,
}

impl ProcessQueues {
    /// The queue of a request from `task` at `ioprio`, created with `create` (given the
    /// index the new queue will have) the first time.
    pub fn get_or_create(
        &mut self,
        task: TaskId,
        ioprio: IoPrio,
        sync: bool,
        create: impl FnMut() -> u32,
    ) -> u32 {
        if sync {
            return *self.sync.get_or_insert_with(task, create);
        }
        self.asyncs.get_or_create(ioprio, create)
    }

    /// The queue a request of `task` at `ioprio` goes to, if it exists (no queue is
    /// created).
    pub fn get(&self, task: TaskId, ioprio: IoPrio, sync: bool) -> Option<u32> {
        if sync {
            self.sync.get(task).copied()
        } else {
            self.asyncs.get(ioprio)
        }
    }

    /// The shared async queue a task of `ioprio` writes back through (`bic->bfqq[0]`),
    /// if it exists.
    pub fn async_queue(&self, ioprio: IoPrio) -> Option<u32> {
        self.asyncs.get(ioprio)
    }
}

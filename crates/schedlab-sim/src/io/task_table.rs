//! Per-process elevator state (the kernel's `io_context` with an elevator's `io_cq` in it,
//! block/blk-ioc.c): one slot per task that has submitted I/O to the device, created at
//! its first request and kept for the run, indexed by task id.

use crate::types::TaskId;

/// `T` per task, created on first use.
#[derive(Clone, Debug)]
pub struct TaskTable<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for TaskTable<T> {
    fn default() -> Self {
        TaskTable { slots: Vec::new() }
    }
}

impl<T> TaskTable<T> {
    pub fn get(&self, t: TaskId) -> Option<&T> {
        self.slots.get(t.idx()).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, t: TaskId) -> Option<&mut T> {
        self.slots.get_mut(t.idx()).and_then(Option::as_mut)
    }

    /// `t`'s slot, made with `make` if `t` has none yet.
    pub fn get_or_insert_with(&mut self, t: TaskId, make: impl FnOnce() -> T) -> &mut T {
        if self.slots.len() <= t.idx() {
            self.slots.resize_with(t.idx() + 1, || None);
        }
        self.slots[t.idx()].get_or_insert_with(make)
    }
}

//! Synchronisation objects and byte channels: plain data plus wait queues. The engine
//! decides who blocks and who wakes; this module only keeps the queues in order.
//!
//! Wait queues are ordered by kernel priority (lower `prio()` first), FIFO among equals —
//! the order futex wake-ups follow (kernel/futex: waiters sit on a priority-sorted plist).

use crate::types::TaskId;

/// A wait queue ordered by (priority, arrival).
#[derive(Clone, Debug, Default)]
pub struct WaitQueue {
    /// (prio, task) in wake order.
    q: Vec<(i32, TaskId)>,
}

impl WaitQueue {
    /// Add a waiter behind every waiter of equal or better priority. O(n).
    pub fn push(&mut self, prio: i32, t: TaskId) {
        let pos = self
            .q
            .iter()
            .position(|&(p, _)| p > prio)
            .unwrap_or(self.q.len());
        self.q.insert(pos, (prio, t));
    }

    /// Remove and return the first waiter.
    pub fn pop(&mut self) -> Option<TaskId> {
        if self.q.is_empty() {
            None
        } else {
            Some(self.q.remove(0).1)
        }
    }

    /// Move every waiter out into `out` (in wake order), leaving the queue empty but
    /// keeping its allocation.
    pub fn drain_into(&mut self, out: &mut Vec<TaskId>) {
        out.extend(self.q.iter().map(|&(_, t)| t));
        self.q.clear();
    }
}

/// A pthread mutex with direct hand-off to the first waiter on unlock.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    pub owner: Option<TaskId>,
    pub waiters: WaitQueue,
}

/// A condition variable.
#[derive(Clone, Debug, Default)]
pub struct Cond {
    /// Waiters with the mutex they must re-acquire.
    pub waiters: WaitQueue,
}

/// A barrier for `needed` participants (rt-app `barrier`: all users meet, then all go).
#[derive(Clone, Debug, Default)]
pub struct Barrier {
    pub needed: u32,
    pub arrived: u32,
    pub waiters: WaitQueue,
}

/// One direction of a pipe or socket pair: a bounded byte buffer.
#[derive(Clone, Debug, Default)]
pub struct Channel {
    pub capacity: u64,
    pub buffered: u64,
    pub written: u64,
    pub read: u64,
    pub op_cost_ns: u64,
    pub byte_cost_ps: u64,
    pub readers: WaitQueue,
    pub writers: WaitQueue,
}

impl Channel {
    /// CPU time one read or write call of `bytes` costs the caller.
    pub fn call_cost(&self, bytes: u64) -> u64 {
        self.op_cost_ns + bytes.saturating_mul(self.byte_cost_ps) / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_queue_is_priority_ordered_and_fifo_within_a_priority() {
        let mut q = WaitQueue::default();
        q.push(120, TaskId(1));
        q.push(50, TaskId(2));
        q.push(120, TaskId(3));
        q.push(50, TaskId(4));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|t| t.0).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }
}

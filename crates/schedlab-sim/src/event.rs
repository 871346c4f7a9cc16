//! Engine events, ordered by (time, sequence) so that ties break identically every run.

use crate::types::{CpuId, TaskId, Time};

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Periodic scheduler tick on a CPU (only armed while the CPU is busy: NO_HZ idle).
    Tick { cpu: CpuId },
    /// The running task of `cpu` finishes its current CPU burst; stale if `gen` differs
    /// from the CPU's current generation.
    Complete { cpu: CpuId, gen: u64 },
    /// A blocked task's sleep, timer or runtime deadline expires.
    Wake { task: TaskId, gen: u64 },
    /// A task template instance is created at start-up after its `delay`.
    Start { task: TaskId },
    /// A timer armed by the policy.
    PolicyTimer { token: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub time: Time,
    pub seq: u64,
    pub kind: EventKind,
}

impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

//! The memory budget of a run.
//!
//! What grows with a run is counted, not measured: the tasks (their engine, policy and
//! measurement state, and their result as the caller will hold it), the samples kept in
//! memory, the histograms' buckets and the pending events. The count is a deterministic
//! function of the run, so a run that exceeds its budget stops at the same event on every
//! machine, with the same partial result. It leaves out what does not grow with the run (the
//! spec, the program text, per-CPU state) and the allocator's own overhead, so it is a
//! little below what the process really holds; the per-task figure is rounded up to make
//! up for that.
//!
//! Checked whenever a task is created (a fork bomb stops at its fork) and every
//! [`CHECK_EVERY`] events (samples and buckets grow slowly). The caller's [`Cancel`] is
//! asked at the same events, so that neither costs the loop anything per event.

use crate::engine::Engine;
use crate::sched::Scheduler;

/// The caller's way to stop a run before its end, shared with the host runner: asked
/// every [`CHECK_EVERY`] events here.
pub use schedlab_core::cancel::Cancel;

/// The budget when the caller gives none (`--memory-budget`).
pub const DEFAULT_MEMORY_BUDGET: u64 = 4 << 30;

/// Events between two full counts.
const CHECK_EVERY: u64 = 1 << 16;

/// What one task instance costs besides its buckets: the engine's and the core's state
/// (about 1 KB with the policy's), its result, and the front end's copy of that result
/// (the Python layer turns a task's result into a dict of some 50 objects: 10–16 KB).
pub const TASK_BYTES: u64 = 20 << 10;

/// One sample kept in memory (33 bytes): in the engine's columns, which grow by doubling
/// (up to twice their length), then once handed to the caller as bytes and once in its
/// DataFrame.
pub const SAMPLE_BYTES: u64 = 4 * 33;

/// One pending event.
const EVENT_BYTES: u64 = 24;

/// The budget of one run and where it stands.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    limit: u64,
    next_check: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Self {
        Budget {
            limit,
            next_check: CHECK_EVERY,
        }
    }

    /// Would `tasks` tasks alone exceed the budget? (Asked as each task is created.)
    #[inline]
    pub fn tasks_exceed(&self, tasks: usize) -> bool {
        (tasks as u64).saturating_mul(TASK_BYTES) > self.limit
    }

    /// Is a full count due after event number `events`? (Then the next is scheduled.)
    #[inline]
    pub fn due(&mut self, events: u64) -> bool {
        if events < self.next_check {
            return false;
        }
        self.next_check = events + CHECK_EVERY;
        true
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }
}

/// The bytes the run counts toward its budget now.
pub(crate) fn used<S: Scheduler>(e: &Engine<S>) -> u64 {
    let tasks = e.rt.len() as u64 * TASK_BYTES;
    let buckets: u64 = e.metrics.tasks.iter().map(|m| m.heap_bytes() as u64).sum();
    let samples = e.metrics.samples().map_or(0, |s| s.len() as u64) * SAMPLE_BYTES;
    let events = e.core.ctx.events.len() as u64 * EVENT_BYTES;
    tasks + buckets + samples + events
}

/// `n` bytes for a reader, with `digits` decimals (`1.5 GiB`).
pub fn human_bytes(n: u64, digits: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.digits$} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_a_person_writes_them() {
        assert_eq!(human_bytes(512, 1), "512 B");
        assert_eq!(human_bytes(3 << 29, 1), "1.5 GiB");
        assert_eq!(human_bytes(DEFAULT_MEMORY_BUDGET, 1), "4.0 GiB");
        assert_eq!(human_bytes((4 << 20) + 20_000, 2), "4.02 MiB");
    }
}

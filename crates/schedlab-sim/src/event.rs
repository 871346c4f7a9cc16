//! Engine events, ordered by (time, sequence) so that ties break identically every run,
//! kept in a 4-ary min-heap of 24-byte entries.
//!
//! Why not `std::collections::BinaryHeap`: popping is the single largest cost of the hot
//! loop, and a 4-ary heap of packed entries halves the tree depth and keeps a node's
//! children in one cache line. The heap's vector only grows to the workload's
//! steady-state number of pending events, so pushing allocates nothing per event.

use crate::types::{CpuId, TaskId, Time};

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Periodic scheduler tick on a CPU (only armed while the CPU is busy: NO_HZ idle).
    Tick { cpu: CpuId },
    /// The running task of `cpu` finishes its current CPU burst; stale if `gen` differs
    /// from the CPU's current generation.
    Complete { cpu: CpuId, gen: u64 },
    /// A blocked task's sleep or timer expires; stale if `gen` differs from the task's.
    Wake { task: TaskId, gen: u64 },
    /// A task template instance is created at start-up after its `delay`.
    Start { task: TaskId },
    /// A policy timer expires: slot and generation in the timer table (`timer.rs`);
    /// stale if the slot was cancelled or re-armed since.
    PolicyTimer { slot: u32, gen: u64 },
    /// An event of a block device (`io.rs`): its index and a word the device layer
    /// interprets (a request slot and its generation).
    Device { dev: u32, data: u64 },
}

/// Bits of a packed payload: 4 tag bits, then the kind's fields.
const TAG_BITS: u32 = 4;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
const ID_BITS: u32 = 24;
const GEN_BITS: u32 = 64 - TAG_BITS - ID_BITS;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const GEN_MASK: u64 = (1 << GEN_BITS) - 1;

/// The largest task or CPU id an event can carry.
pub(crate) const MAX_EVENT_ID: u64 = ID_MASK;

impl EventKind {
    /// Pack into one word. Generations are kept modulo 2^36: a stale event could only be
    /// mistaken for a live one after 68 billion re-arms of the same CPU or task while it
    /// is pending, which cannot happen within a run's event budget. Every field that is
    /// not a generation must fit exactly (asserted).
    fn pack(self) -> u64 {
        let (tag, id, gen) = match self {
            EventKind::Tick { cpu } => (0, cpu.0 as u64, 0),
            EventKind::Complete { cpu, gen } => (1, cpu.0 as u64, gen),
            EventKind::Wake { task, gen } => (2, task.0 as u64, gen),
            EventKind::Start { task } => (3, task.0 as u64, 0),
            EventKind::PolicyTimer { slot, gen } => (4, slot as u64, gen),
            EventKind::Device { dev, data } => {
                assert!(data <= GEN_MASK, "device event word {data:#x} does not fit");
                (5, dev as u64, data)
            }
        };
        // Ids are bounded where they are made (task creation, the timer and device tables).
        debug_assert!(
            id <= ID_MASK,
            "event id {id} does not fit in {ID_BITS} bits"
        );
        tag | (id << TAG_BITS) | ((gen & GEN_MASK) << (TAG_BITS + ID_BITS))
    }

    fn unpack(w: u64) -> EventKind {
        let id = ((w >> TAG_BITS) & ID_MASK) as u32;
        let gen = w >> (TAG_BITS + ID_BITS);
        match w & TAG_MASK {
            0 => EventKind::Tick { cpu: CpuId(id) },
            1 => EventKind::Complete {
                cpu: CpuId(id),
                gen,
            },
            2 => EventKind::Wake {
                task: TaskId(id),
                gen,
            },
            3 => EventKind::Start { task: TaskId(id) },
            4 => EventKind::PolicyTimer { slot: id, gen },
            _ => EventKind::Device { dev: id, data: gen },
        }
    }

    /// A generation as it survives packing (compare stored generations through this).
    pub(crate) fn wrap_gen(gen: u64) -> u64 {
        gen & GEN_MASK
    }
}

/// An event as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub time: Time,
    pub seq: u64,
    pub kind: EventKind,
}

#[derive(Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    payload: u64,
}

impl Entry {
    /// (time, seq) as one integer, so that comparisons compile to flag arithmetic and
    /// conditional moves instead of unpredictable branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// A 4-ary min-heap of events keyed by (time, seq), with a one-entry front slot.
///
/// The front slot holds an entry strictly earlier than everything in the heap. A discrete
/// event simulation often schedules an event that becomes the very next one (a CPU burst
/// shorter than every pending timer); such an event goes to the slot and is popped from
/// there, skipping a heap insertion and removal.
pub(crate) struct EventQueue {
    front: Option<Entry>,
    heap: Vec<Entry>,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            front: None,
            heap: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub fn push(&mut self, ev: Event) {
        let e = Entry {
            time: ev.time,
            seq: ev.seq,
            payload: ev.kind.pack(),
        };
        let spill = match self.front {
            Some(f) if e.key() < f.key() => {
                self.front = Some(e);
                f
            }
            Some(_) => e,
            None if self.heap.first().is_none_or(|top| e.key() < top.key()) => {
                self.front = Some(e);
                return;
            }
            None => e,
        };
        self.heap_push(spill);
    }

    /// The earliest event's time, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        match self.front {
            Some(f) => Some(f.time),
            None => self.heap.first().map(|e| e.time),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let top = match self.front.take() {
            Some(f) => f,
            None => self.heap_pop()?,
        };
        Some(Event {
            time: top.time,
            seq: top.seq,
            kind: EventKind::unpack(top.payload),
        })
    }

    #[inline]
    fn heap_push(&mut self, e: Entry) {
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.heap[parent].key() <= e.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    #[inline]
    fn heap_pop(&mut self) -> Option<Entry> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("non-empty");
        let n = self.heap.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = 4 * i + 1;
                if first >= n {
                    break;
                }
                let end = (first + 4).min(n);
                let mut best = first;
                let mut best_key = self.heap[first].key();
                for c in first + 1..end {
                    let k = self.heap[c].key();
                    let less = k < best_key;
                    best = if less { c } else { best };
                    best_key = if less { k } else { best_key };
                }
                if best_key >= last.key() {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
        }
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn kinds_survive_packing() {
        for k in [
            EventKind::Tick { cpu: CpuId(255) },
            EventKind::Complete {
                cpu: CpuId(3),
                gen: 123_456_789,
            },
            EventKind::Wake {
                task: TaskId(1_000_000),
                gen: 7,
            },
            EventKind::Start { task: TaskId(42) },
            EventKind::PolicyTimer {
                slot: (1 << 24) - 1,
                gen: 0xdead_beef,
            },
            EventKind::Device {
                dev: 3,
                data: GEN_MASK,
            },
        ] {
            assert_eq!(EventKind::unpack(k.pack()), k);
        }
    }

    proptest! {
        #[test]
        fn pops_in_time_then_sequence_order(times in prop::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::with_capacity(4);
            for (seq, &t) in times.iter().enumerate() {
                q.push(Event { time: t, seq: seq as u64, kind: EventKind::Tick { cpu: CpuId(0) } });
            }
            let mut expected: Vec<(u64, u64)> = times.iter().enumerate().map(|(s, &t)| (t, s as u64)).collect();
            expected.sort();
            let got: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.seq)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}

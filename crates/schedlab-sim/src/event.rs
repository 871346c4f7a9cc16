//! Engine events, ordered by (time, sequence) so that ties break identically every run,
//! kept as 24-byte entries in a sorted vector while few are pending, in a 4-ary min-heap
//! when many are.
//!
//! Why not `std::collections::BinaryHeap`: popping is the single largest cost of the hot
//! loop. With the dozen events a small machine has pending, a sorted vector pops for the
//! price of `Vec::pop`; with thousands, a 4-ary heap of packed entries halves the depth of
//! a binary one and keeps a node's children in one cache line. The vector only grows to
//! the workload's steady-state number of pending events, so pushing allocates nothing per
//! event.

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
    /// A blocked task's sleep timer fires and its expiry handler starts running on the
    /// task's CPU (a machine whose expiry costs CPU time); the `Wake` follows when the
    /// handler is done. Stale as `Wake` is.
    TimerIrq { task: TaskId, gen: u64 },
    /// The interrupt in which a policy timer expired returns on `cpu`: the reschedule its
    /// callback asked of that CPU takes effect now (`irq_exit` → preemption).
    IrqExit { cpu: CpuId },
    /// The interrupt that left softirq work on `cpu` is over: its softirq thread wakes.
    SoftirqWake { cpu: CpuId },
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
            EventKind::TimerIrq { task, gen } => (6, task.0 as u64, gen),
            EventKind::IrqExit { cpu } => (7, cpu.0 as u64, 0),
            EventKind::SoftirqWake { cpu } => (8, cpu.0 as u64, 0),
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
            5 => EventKind::Device { dev: id, data: gen },
            7 => EventKind::IrqExit { cpu: CpuId(id) },
            8 => EventKind::SoftirqWake { cpu: CpuId(id) },
            _ => EventKind::TimerIrq {
                task: TaskId(id),
                gen,
            },
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

/// The pending events, keyed by (time, seq): a sorted vector while they are few, a 4-ary
/// min-heap when they are many.
///
/// A run usually has a few events pending per CPU and per sleeping task — a dozen on a
/// small machine. Kept sorted with the next event last, popping is `Vec::pop` and pushing
/// a short scan and move from the near end, which costs less than sifting through a heap. A
/// sorted insertion moves O(n) entries, though, so past `SORTED_MAX` entries the vector
/// becomes a heap (an array sorted the other way round already is one); it is sorted again
/// once it has shrunk below `SORTED_MIN`, the gap between the two keeping a queue that
/// hovers around one size from switching back and forth. Either way the pops come out in
/// exactly (time, seq) order: the keys are unique.
///
/// In front of either sits one slot for an event pushed while it was due before everything
/// queued: the completion of a short burst usually is, and it is then popped without ever
/// entering the vector.
pub(crate) struct EventQueue {
    /// Due before every entry of `v`, when set.
    front: Option<Entry>,
    /// Sorted: decreasing keys (the next event last). Heap: a min-heap (the next first).
    v: Vec<Entry>,
    heap: bool,
    /// The last sequence number pushed (checked to increase).
    #[cfg(debug_assertions)]
    last_seq: u64,
}

/// The most entries kept sorted.
const SORTED_MAX: usize = 48;
/// A heap with fewer entries than this is sorted again.
const SORTED_MIN: usize = 16;

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            front: None,
            v: Vec::with_capacity(n),
            heap: false,
            #[cfg(debug_assertions)]
            last_seq: 0,
        }
    }

    /// Queue an event. Its sequence number must exceed every one pushed before (the
    /// `Ctx` counter), so that it sorts after every pending event of the same time: the
    /// insertions below compare times only.
    #[inline(always)]
    pub fn push(&mut self, ev: Event) {
        #[cfg(debug_assertions)]
        {
            assert!(
                ev.seq > self.last_seq,
                "event sequence numbers must increase"
            );
            self.last_seq = ev.seq;
        }
        let e = Entry {
            time: ev.time,
            seq: ev.seq,
            payload: ev.kind.pack(),
        };
        // A later sequence number sorts after every pending event of the same time, so
        // only a strictly earlier time may take the front.
        match self.front {
            Some(f) if e.time < f.time => {
                self.front = Some(e);
                self.push_earliest(f);
            }
            Some(_) => self.push_queued(e),
            None if self.queued_next().is_none_or(|q| e.time < q.time) => self.front = Some(e),
            None => self.push_queued(e),
        }
    }

    #[inline(always)]
    fn push_queued(&mut self, e: Entry) {
        if !self.heap {
            if self.v.len() < SORTED_MAX {
                return self.sorted_insert(e);
            }
            self.switch_to_heap();
        }
        self.heap_push(e);
    }

    /// Queue `e`, which is due before every entry of `v` (the front it held until now).
    #[inline]
    fn push_earliest(&mut self, e: Entry) {
        if !self.heap {
            if self.v.len() < SORTED_MAX {
                return self.v.push(e);
            }
            self.switch_to_heap();
        }
        // It belongs at the root: every entry on the way there moves down one level.
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[0] = e;
    }

    /// The kind of the next event, if any.
    #[inline]
    pub fn peek_kind(&self) -> Option<EventKind> {
        self.next().map(|e| EventKind::unpack(e.payload))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.v.len() + self.front.is_some() as usize
    }

    /// The next entry of `v`.
    #[inline(always)]
    fn queued_next(&self) -> Option<&Entry> {
        if self.heap {
            self.v.first()
        } else {
            self.v.last()
        }
    }

    /// The next event's entry: the front slot's, else the vector's.
    #[inline(always)]
    fn next(&self) -> Option<&Entry> {
        self.front.as_ref().or_else(|| self.queued_next())
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.next().map(|e| e.time)
    }

    /// The earliest event (of equal times, the first pushed). Inlined: the sorted case is
    /// a `Vec::pop`, and the event then stays in registers.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Event> {
        let top = if let Some(f) = self.front.take() {
            f
        } else if self.heap {
            self.pop_from_heap()?
        } else {
            self.v.pop()?
        };
        Some(Event {
            time: top.time,
            seq: top.seq,
            kind: EventKind::unpack(top.payload),
        })
    }

    /// The earliest event if it is due by `limit`; else it stays queued. One look at the
    /// queue's state where a `peek_time` and a `pop` take two.
    #[inline(always)]
    pub fn pop_due(&mut self, limit: Time) -> Option<Event> {
        let top = if let Some(f) = self.front {
            if f.time > limit {
                return None;
            }
            self.front = None;
            f
        } else if self.heap {
            if self.v.first()?.time > limit {
                return None;
            }
            self.pop_from_heap()?
        } else {
            if self.v.last()?.time > limit {
                return None;
            }
            self.v.pop()?
        };
        Some(Event {
            time: top.time,
            seq: top.seq,
            kind: EventKind::unpack(top.payload),
        })
    }

    #[inline(never)]
    fn pop_from_heap(&mut self) -> Option<Entry> {
        let top = self.heap_pop()?;
        if self.v.len() < SORTED_MIN {
            self.switch_to_sorted();
        }
        Some(top)
    }

    /// Insert into the sorted vector (latest first): after every entry due later than `e`
    /// and every entry due at its time (pushed earlier). The scan starts from the earliest
    /// end, where most events land (a burst's completion is near, a timer's expiry far but
    /// among few).
    #[inline]
    fn sorted_insert(&mut self, e: Entry) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 && self.v[i - 1].time <= e.time {
            self.v[i] = self.v[i - 1];
            i -= 1;
        }
        self.v[i] = e;
    }

    #[cold]
    fn switch_to_heap(&mut self) {
        self.v.reverse();
        self.heap = true;
    }

    /// Heap to sorted (decreasing).
    #[cold]
    fn switch_to_sorted(&mut self) {
        self.v.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
        self.heap = false;
    }

    #[inline]
    fn heap_push(&mut self, e: Entry) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            // The parent's sequence number is smaller (see `push`): compare times.
            if self.v[parent].time <= e.time {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    #[inline]
    fn heap_pop(&mut self) -> Option<Entry> {
        let top = *self.v.first()?;
        let last = self.v.pop().expect("non-empty");
        let v = &mut self.v[..];
        let n = v.len();
        if n == 0 {
            return Some(top);
        }
        let lk = last.key();
        let mut i = 0;
        // Move the hole down along the least children while they precede `last`.
        loop {
            let first = 4 * i + 1;
            let (best, best_key) = if first + 4 <= n {
                // All four children: a two-round tournament, branch-free.
                let c = &v[first..first + 4];
                let (k0, k1, k2, k3) = (c[0].key(), c[1].key(), c[2].key(), c[3].key());
                let (a, ka) = if k1 < k0 { (1, k1) } else { (0, k0) };
                let (b, kb) = if k3 < k2 { (3, k3) } else { (2, k2) };
                if kb < ka {
                    (first + b, kb)
                } else {
                    (first + a, ka)
                }
            } else if first < n {
                let mut best = first;
                let mut best_key = v[first].key();
                for (c, e) in v.iter().enumerate().take(n).skip(first + 1) {
                    let k = e.key();
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                (best, best_key)
            } else {
                break;
            };
            if best_key >= lk {
                break;
            }
            v[i] = v[best];
            i = best;
        }
        v[i] = last;
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
            EventKind::TimerIrq {
                task: TaskId(77),
                gen: 9,
            },
            EventKind::IrqExit { cpu: CpuId(5) },
            EventKind::SoftirqWake { cpu: CpuId(6) },
        ] {
            assert_eq!(EventKind::unpack(k.pack()), k);
        }
    }

    proptest! {
        /// Pushes and pops interleaved, the queue growing past the sorted limit and
        /// shrinking back (both switches), against an ordered set.
        #[test]
        fn interleaved_pushes_and_pops_come_out_in_order(
            steps in prop::collection::vec((0u64..400, 0usize..4), 0..1500),
        ) {
            let mut q = EventQueue::with_capacity(4);
            let mut model = std::collections::BTreeSet::new();
            let mut now = 0;
            for (seq, &(dt, pops)) in steps.iter().enumerate() {
                let ev = Event { time: now + dt, seq: seq as u64 + 1, kind: EventKind::Tick { cpu: CpuId(0) } };
                q.push(ev);
                model.insert((ev.time, ev.seq));
                // Pop less often than we push for the first half, more often after.
                let pops = if seq < steps.len() / 2 { pops / 3 } else { pops };
                for _ in 0..pops {
                    let want = model.pop_first();
                    let got = q.pop().map(|e| (e.time, e.seq));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                    prop_assert_eq!(q.peek_time(), model.first().map(|&(t, _)| t));
                }
            }
            while let Some(want) = model.pop_first() {
                prop_assert_eq!(q.pop().map(|e| (e.time, e.seq)), Some(want));
            }
            prop_assert!(q.pop().is_none());
        }

        #[test]
        fn pops_in_time_then_sequence_order(times in prop::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::with_capacity(4);
            for (seq, &t) in times.iter().enumerate() {
                q.push(Event { time: t, seq: seq as u64 + 1, kind: EventKind::Tick { cpu: CpuId(0) } });
            }
            let mut expected: Vec<(u64, u64)> = times.iter().enumerate().map(|(s, &t)| (t, s as u64 + 1)).collect();
            expected.sort();
            let got: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.seq)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}

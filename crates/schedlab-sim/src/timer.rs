//! Policy timers: what a scheduling class arms when it needs to act at a time of its own
//! choosing rather than at a tick (the kernel's hrtimers as the scheduler uses them:
//! `hrtick` ending a slice exactly, the RT and CFS bandwidth period timers, BFS/MuQSS's
//! `hrexpiry`).
//!
//! A timer is armed through [`crate::Ctx::arm_timer`] with an absolute expiry and a 64-bit
//! token the class chooses; arming returns a [`TimerId`] handle that
//! [`crate::Ctx::cancel_timer`] accepts (`hrtimer_cancel`). When the timer expires the
//! engine calls `Scheduler::timer` with a [`FiredTimer`] carrying the token unchanged, all
//! 64 bits of it. Each class of a class stack has its own namespace: a timer is delivered
//! to the class that armed it, never to its neighbours, so classes need not tag tokens.
//!
//! Storage is a slab of slots reused through a free list: arming and cancelling allocate
//! nothing once the slab has grown to the largest number of timers pending at once, and
//! the event queue carries only (slot, generation). A cancelled or re-armed slot bumps its
//! generation, so the event of the old timer is recognised as stale when it pops.

use crate::types::CpuId;

/// The largest number of policy timers pending at once (the event queue carries a slot
/// index in 24 bits).
pub(crate) const MAX_TIMERS: usize = 1 << 24;

/// A handle on an armed policy timer (a `struct hrtimer` the class owns). It stays valid
/// until the timer fires or is cancelled; afterwards it refers to nothing (cancelling it
/// again does nothing), even when its slot is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId {
    slot: u32,
    gen: u32,
}

/// A timer that expired, as `Scheduler::timer` receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FiredTimer {
    /// The handle `arm_timer` returned (now spent).
    pub id: TimerId,
    /// The token given to `arm_timer`, unchanged.
    pub token: u64,
    /// The CPU whose hook armed it: hrtimers are per CPU and their callback runs there
    /// (its counted work is charged to that CPU).
    pub cpu: CpuId,
    /// The class (in a class stack) that armed it; see [`crate::Ctx::class_index`].
    pub(crate) class: u8,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    token: u64,
    gen: u32,
    cpu: u32,
    class: u8,
    armed: bool,
}

/// The slab of policy timers (owned by `Ctx`).
#[derive(Debug, Default)]
pub(crate) struct TimerTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl TimerTable {
    /// Take a slot for a new timer; `None` when [`MAX_TIMERS`] are pending.
    pub fn arm(&mut self, token: u64, class: u8, cpu: CpuId) -> Option<TimerId> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() < MAX_TIMERS => {
                self.slots.push(Slot {
                    token: 0,
                    gen: 0,
                    cpu: 0,
                    class: 0,
                    armed: false,
                });
                (self.slots.len() - 1) as u32
            }
            None => return None,
        };
        let s = &mut self.slots[slot as usize];
        debug_assert!(!s.armed, "a free timer slot is armed");
        s.token = token;
        s.class = class;
        s.cpu = cpu.0;
        s.armed = true;
        Some(TimerId { slot, gen: s.gen })
    }

    /// Disarm `id` if it is still pending; true if it was.
    pub fn cancel(&mut self, id: TimerId) -> bool {
        match self.slots.get_mut(id.slot as usize) {
            Some(s) if s.armed && s.gen == id.gen => {
                self.release(id.slot);
                true
            }
            _ => false,
        }
    }

    /// The timer whose event (slot, generation) just popped, if it is still armed; its slot
    /// is freed.
    pub fn expire(&mut self, slot: u32, gen: u64) -> Option<FiredTimer> {
        let s = *self.slots.get(slot as usize)?;
        if !s.armed || s.gen as u64 != gen {
            return None;
        }
        self.release(slot);
        Some(FiredTimer {
            id: TimerId { slot, gen: s.gen },
            token: s.token,
            cpu: CpuId(s.cpu),
            class: s.class,
        })
    }

    /// The event identity of a pending timer: (slot, generation).
    pub fn event_key(id: TimerId) -> (u32, u64) {
        (id.slot, id.gen as u64)
    }

    /// Timers armed and not yet fired or cancelled.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    fn release(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        s.armed = false;
        s.gen = s.gen.wrapping_add(1);
        self.free.push(slot);
    }
}

/// A set of classes of a class stack (bit `i` = the class with [`crate::Ctx::class_index`]
/// `i`): the classes that queued a balance callback on a CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassSet(pub(crate) u32);

impl ClassSet {
    /// No class.
    pub const EMPTY: ClassSet = ClassSet(0);

    /// Does the set hold class `index`?
    #[inline]
    pub fn contains(self, index: u8) -> bool {
        index < 32 && self.0 & (1 << index) != 0
    }

    /// Does the set hold any class in `first..first + n`?
    #[inline]
    pub fn any_in(self, first: u8, n: u8) -> bool {
        (first..first.saturating_add(n)).any(|i| self.contains(i))
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_token_width_survives_and_slots_are_reused() {
        let mut t = TimerTable::default();
        let a = t.arm(u64::MAX, 3, CpuId(1)).unwrap();
        let (slot, gen) = TimerTable::event_key(a);
        let fired = t.expire(slot, gen).unwrap();
        assert_eq!(
            (fired.token, fired.class, fired.id, fired.cpu),
            (u64::MAX, 3, a, CpuId(1))
        );
        // The slot is reused with a new generation: the old event is stale.
        let b = t.arm(7, 0, CpuId(0)).unwrap();
        assert_ne!(a, b);
        assert!(t.expire(slot, gen).is_none());
        assert_eq!(t.pending(), 1);
    }

    #[test]
    fn a_cancelled_timer_never_fires_and_cancelling_twice_is_harmless() {
        let mut t = TimerTable::default();
        let a = t.arm(1, 0, CpuId(0)).unwrap();
        assert!(t.cancel(a));
        assert!(!t.cancel(a));
        let (slot, gen) = TimerTable::event_key(a);
        assert!(t.expire(slot, gen).is_none());
        assert_eq!(t.pending(), 0);
    }
}

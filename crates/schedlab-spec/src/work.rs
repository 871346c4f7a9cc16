//! The steps validation takes, counted so that a test can check that validating a spec
//! stays O(n log n) in its size without timing anything.
//!
//! What counts as a step: a lookup or insertion in a name index ([`Names`]), and every
//! group the cgroup tree visits while it builds or checks itself. These are the places
//! where validation relates one entity to others (a channel to the channels declared
//! before it, a group to its parent and children, an event to the resource it names);
//! each does O(1) steps per entity, so a spec of n entities takes O(n) steps. A scan over
//! the entities before each one, which made validation quadratic, would show as n² steps.
//!
//! The count is per thread; [`counted`] reads it around one call.

use std::cell::Cell;
use std::collections::HashMap;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Count `n` steps of validation work.
#[inline]
pub(crate) fn step(n: u64) {
    STEPS.with(|s| s.set(s.get().wrapping_add(n)));
}

/// Run `f` and return its result with the validation steps it took on this thread.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = STEPS.with(Cell::get);
    let r = f();
    (r, STEPS.with(Cell::get).wrapping_sub(before))
}

/// Names of one kind (channels, devices, cgroups, resources, …) and their indices in
/// first-insertion order: the one way validation finds an entity by name.
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: HashMap<String, u32>,
}

impl Names {
    /// The index of `name`, if it was inserted.
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        step(1);
        self.ids.get(name).copied()
    }

    /// Insert `name` with the next index; `Err` holds the index it already has.
    pub(crate) fn insert(&mut self, name: &str) -> Result<u32, u32> {
        step(1);
        let next = self.ids.len() as u32;
        match self.ids.get(name) {
            Some(&i) => Err(i),
            None => {
                self.ids.insert(name.to_string(), next);
                Ok(next)
            }
        }
    }

    /// The index of `name`, inserting it if it is new.
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        self.insert(name).unwrap_or_else(|i| i)
    }
}

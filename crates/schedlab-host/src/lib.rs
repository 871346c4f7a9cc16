//! schedlab on the real Linux kernel of the machine it runs on.
//!
//! For now this crate holds the probes that measure the host's costs, so that the
//! simulator's cost model (`machine.context_switch_ns`, channel `op_cost_ns`) can be set
//! from measurements instead of guesses. The host runner (DESIGN.md: journal, restore,
//! verify what the kernel applied) will live here too.

pub mod probe;

pub use probe::{channel_costs, ChannelCosts, ChannelKind};

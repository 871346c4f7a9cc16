//! schedlab on the real Linux kernel of the machine it runs on.
//!
//! For now this crate holds the probes that measure the host's costs, so that the
//! simulator's cost model (`machine.context_switch_ns`, channel `op_cost_ns`, the kernel
//! spans' `sleep_ns` and `fork_ns`, the timer model's `timer_irq_ns`) can be set from
//! measurements instead of guesses: `probe` (channels), `kernel_costs` (syscall paths and
//! the timer wake-up latency). The host runner (DESIGN.md: journal, restore,
//! verify what the kernel applied) will live here too.

pub mod kernel_costs;
pub mod probe;

pub use kernel_costs::{syscall_costs, timer_latency, SyscallCosts, TimerLatency, TimerPolicy};
pub use probe::{channel_costs, ChannelCosts, ChannelKind};

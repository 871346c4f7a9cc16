//! schedlab on the real Linux kernel of the machine it runs on.
//!
//! - `probe` (channels) and `kernel_costs` (syscall paths, timer wake-up latency) measure
//!   the host's costs, so that the simulator's cost model (`machine.context_switch_ns`,
//!   channel `op_cost_ns`, the kernel spans' `sleep_ns` and `fork_ns`, the timer model's
//!   `timer_irq_ns`) can be set from measurements instead of guesses.
//! - `clock`: CLOCK_MONOTONIC, absolute sleeps, thread CPU time.
//! - `facts`: the kernel facts recorded with every host run.
//! - `doctor`: what this kernel and these privileges allow, changing nothing.
//! - `policy`: a real thread's scheduling attributes, set and read back.
//! - `journal`: the restore journal every system change goes through first.
//! - `loopdev`: loop block devices bound to backing files with direct I/O.
//! - `runner`: a spec on the real kernel, reported in the simulator's result schema.
//! - `fio_check`: the runner's block I/O against fio's on one loop device.
//! - `trace`: ftrace capture of a host run, in the simulator's trace text.

pub mod clock;
pub mod doctor;
pub mod facts;
pub mod fio_check;
pub mod journal;
pub mod kernel_costs;
pub mod loopdev;
pub mod policy;
pub mod probe;
pub mod runner;
pub mod trace;

pub use kernel_costs::{syscall_costs, timer_latency, SyscallCosts, TimerLatency, TimerPolicy};
pub use probe::{channel_costs, ChannelCosts, ChannelKind};

//! schedlab-core: what every schedlab engine shares — the simulator (`schedlab-sim`) and
//! the host runner (`schedlab-host`) run the same task programs, measure activations with
//! the same definitions and report the same typed result.
//!
//! - [`types`]: task and CPU ids, CPU masks, scheduling attributes.
//! - [`io`]: where a block I/O request goes in its device or file (`schedlab:io`'s `offset`).
//! - [`cancel`]: the caller's way to stop a run before its end.
//! - [`program`]: a spec's tasks compiled into programs, and the cursor that walks them
//!   with rt-app's loop, phase and timer semantics.
//! - [`sync`]: mutexes, condition variables, barriers and byte channels as data with
//!   priority-ordered wait queues (who waits, who is woken, how many bytes are buffered).
//! - [`metrics`]: activations (release → runnable → start → end) and what is kept of them.
//! - [`stats`]: summary statistics (exact, and from mergeable histograms).
//! - [`result`]: the `schedlab.result/1` object, typed.
//! - [`series`]: the statistics a result reports (exact from samples, else histograms)
//!   and the workload's headline.
//!
//! Nothing here makes an OS call or reads a clock: engines pass times in.

pub mod cancel;
pub mod io;
pub mod metrics;
pub mod program;
pub mod result;
pub mod series;
pub mod stats;
pub mod sync;
pub mod types;

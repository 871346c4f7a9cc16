//! schedlab-sim: a deterministic discrete-event model of an SMP machine running a
//! pluggable CPU scheduler. No OS calls: the same spec and seed give byte-identical
//! results and traces.
//!
//! Codemap: `types` (ids, masks, attributes), `sched` (the policy trait), `ctx` (engine
//! state visible to policies), `event` (the event queue's keys), `engine` (the run loop,
//! task programs, sync objects), `metrics`/`stats`/`result` (what a run reports),
//! `trace` (ftrace text writer and parser), `cpu/<policy>.rs` (one policy per file).

pub mod cpu;
pub mod ctx;
pub(crate) mod event;
pub mod sched;
pub mod trace;
pub mod types;

pub use ctx::Ctx;
pub use sched::Scheduler;

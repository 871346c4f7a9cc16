//! Scheduler traces in the ftrace text format (what `cat /sys/kernel/tracing/trace` prints),
//! so that Perfetto's UI and trace processor, trace-cmd users and our own parser read a
//! simulated trace exactly like a capture from the host.
//!
//! - [`Tracer`]: the engine's streaming writer (buffered; the engine calls it only when a
//!   trace was requested, behind `enabled()`). Its module doc lists the exact line
//!   formats and what Perfetto requires of them, with sources.
//! - [`parse`]: the one parser for both simulated traces and real captures
//!   (`scripts/capture-ftrace.sh`), plus [`parse::analyze`], per-task run time and
//!   switch counts from sched_switch records.
//!
//! Line format (kernel/trace/trace_output.c, `trace_print_context` and
//! `trace_print_lat_fmt`, then the event's `TP_printk`):
//! `<comm>-<pid> (<tgid>) [<cpu:03>] <flags> <secs>.<frac>: <event>: <fields>`;
//! timestamps are written with nanosecond precision (9 decimals); real captures have 6,
//! the parser reads both.

pub mod parse;
pub mod writer;

pub use writer::{PrevState, Tracer};

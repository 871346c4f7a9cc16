//! Scheduler traces in the ftrace text format (what `cat /sys/kernel/tracing/trace` prints),
//! so that Perfetto's UI and trace processor, trace-cmd users and our own parser read a
//! simulated trace exactly like a capture from the host.
//!
//! - [`Tracer`]: the engine's streaming writer (buffered; the engine calls it only when a
//!   trace was requested, behind `enabled()`).
//! - [`parse`]: the one parser for both simulated traces and real captures.
//!
//! Line format (kernel/trace/trace_output.c, `trace_print_context` + event `TP_printk`):
//! `<comm>-<pid> [<cpu:03>] <flags> <secs>.<frac>: <event>: <fields>`; timestamps are
//! written with nanosecond precision (9 decimals); real captures have 6, the parser reads both.

pub mod parse;
mod writer;

pub use writer::Tracer;

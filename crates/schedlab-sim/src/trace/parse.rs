//! Parser for the ftrace text format: one parser for simulated traces and real captures.
//! (Implemented by the trace work item; see ARCHITECTURE.md.)

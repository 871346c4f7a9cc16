//! schedlab's workload spec: rt-app's JSON grammar read as rt-app reads it, plus schedlab's
//! namespaced extensions; validation that names the JSON path of every error; and the
//! built-in workload generators.
//!
//! Entry points: [`parse_spec`] (text → validated [`model::Spec`]), [`parse_value`],
//! [`gen::generate`] / [`gen::list`], [`spec_sha256`] (a spec's identity: the hash of its
//! exact text) and [`spec_view`] (the text as a plain JSON value, for editing). Modules:
//! `json` (a json-c-compatible reader that keeps repeated keys), `parse` (grammar and
//! validation, one sub-module per concern), `model` (the validated types), `view` (identity
//! and view), `profile` (machine profiles), `gen` (generators), `rng` (the seeded PRNG), `work` (the count of validation
//! steps, and the name index every lookup by name goes through). The user-facing grammar is
//! docs/spec.md.

pub mod cost;
pub mod device;
pub mod error;
pub mod gen;
mod json;
pub mod kernel;
pub mod model;
mod parse;
pub mod profile;
pub mod rng;
mod view;
pub mod work;

pub use error::SpecError;
pub use model::Spec;
pub use view::{spec_sha256, spec_view};

/// Parse and validate a spec from JSON text.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    parse::parse_text(text)
}

/// Validate an already-parsed JSON value.
pub fn parse_value(v: &serde_json::Value) -> Result<Spec, SpecError> {
    parse::parse_value(v)
}

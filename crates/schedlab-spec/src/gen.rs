//! Workload generators. Each one writes an ordinary spec (rt-app JSON with schedlab
//! extensions, as a `serde_json::Value`) so that every generated experiment can be saved,
//! read and edited, and goes through the same validation as a hand-written file.
//!
//! Generators are deterministic functions of their options; the ones that draw random
//! numbers take a `seed` option and use [`crate::rng::Rng`].
//!
//! Options arrive as text (`name=value` from the command line). Unknown or repeated options
//! and bad values are [`SpecError`]s with the path `options.<name>`.

mod broadcast;
mod cyclictest;
mod fio;
mod hackbench;
mod interbench;
mod oltp;
mod opts;
mod periodic;

use crate::SpecError;
pub use periodic::{uunifast, uunifast_discard};

/// One option of a generator, for `schedlab gen --help` and the Python front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOption {
    pub name: &'static str,
    /// The default, as text (what `generate` uses when the option is not given).
    pub default: String,
    pub help: &'static str,
}

/// A generator's name, what it builds, and its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratorInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub options: Vec<GenOption>,
}

/// Every built-in generator.
pub fn list() -> Vec<GeneratorInfo> {
    vec![
        hackbench::info(),
        cyclictest::info(),
        broadcast::info(),
        periodic::info(),
        interbench::info(),
        fio::info(),
        oltp::info(),
    ]
}

/// Run generator `name` with `options` (`(name, value)` pairs; omitted options take their
/// defaults). The result always parses with [`crate::parse_value`].
pub fn generate(name: &str, options: &[(String, String)]) -> Result<serde_json::Value, SpecError> {
    match name {
        "hackbench" => hackbench::generate(options),
        "cyclictest" => cyclictest::generate(options),
        "broadcast-wakeup" => broadcast::generate(options),
        "periodic" => periodic::generate(options),
        "interbench" => interbench::generate(options),
        "fio" => fio::generate(options),
        "oltp" => oltp::generate(options),
        _ => Err(SpecError::new(
            "generator",
            format!(
                "unknown generator {name:?}; expected one of: {}",
                list().iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// `ceil(ns / 1 s)` plus one second of margin: rt-app's `global.duration` is whole seconds.
fn duration_s_covering(ns: u128) -> u64 {
    (ns.div_ceil(1_000_000_000) as u64).saturating_add(1)
}

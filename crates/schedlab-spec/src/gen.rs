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
mod buildworld;
mod cyclictest;
mod fio;
mod hackbench;
mod httpd;
mod interbench;
mod oltp;
mod opts;
mod periodic;
mod threads;

use crate::SpecError;
pub use buildworld::{buildworld_totals, BuildTotals};
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
        buildworld::info(),
        httpd::info(),
        threads::info(),
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
        "buildworld" => buildworld::generate(options),
        "httpd" => httpd::generate(options),
        "threads" => threads::generate(options),
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

/// A phase's events under distinct keys (`run`, `run1`, `run2`, … as rt-app numbers them).
#[derive(Default)]
struct Events(serde_json::Map<String, serde_json::Value>);

impl Events {
    fn push(&mut self, kind: &str, v: serde_json::Value) {
        let mut key = kind.to_string();
        let mut n = 0;
        while self.0.contains_key(&key) {
            n += 1;
            key = format!("{kind}{n}");
        }
        self.0.insert(key, v);
    }
}

/// `total` split in proportion to `weights` by largest remainders: the parts add up to
/// `total` exactly, and ties go to the earlier index (so a seed gives one split). Weights
/// of zero get nothing unless every weight is zero, when the split is even.
fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let n = weights.len();
    if n == 0 {
        return Vec::new();
    }
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    let (weights, sum): (Vec<u128>, u128) = match sum {
        0 => (vec![1; n], n as u128),
        s => (weights.iter().map(|&w| w as u128).collect(), s),
    };
    let mut parts: Vec<u64> = Vec::with_capacity(n);
    let mut rems: Vec<(u128, usize)> = Vec::with_capacity(n);
    for (i, w) in weights.iter().enumerate() {
        let exact = total as u128 * w;
        parts.push((exact / sum) as u64);
        rems.push((exact % sum, i));
    }
    let left = total - parts.iter().sum::<u64>();
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rems.iter().take(left as usize) {
        parts[i] += 1;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::apportion;

    #[test]
    fn apportion_keeps_the_total_and_the_proportions() {
        assert_eq!(apportion(10, &[1, 1, 1]), [4, 3, 3]);
        assert_eq!(apportion(7, &[0, 2, 5]), [0, 2, 5]);
        assert_eq!(apportion(5, &[0, 0]), [3, 2]);
        assert_eq!(apportion(0, &[3, 1]), [0, 0]);
        let p = apportion(1_000_003, &[17, 1, 999, 4]);
        assert_eq!(p.iter().sum::<u64>(), 1_000_003);
    }
}

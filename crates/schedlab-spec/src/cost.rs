//! Machine costs that vary: a cost given as a distribution instead of a number.
//!
//! A cost such as `context_switch_ns` is a number (every occurrence costs exactly that) or an
//! object naming a distribution of its occurrences, `{"dist": "exponential", "min_ns": m,
//! "mean_ns": μ}` or `{"dist": "uniform", "min_ns": m, "max_ns": M}`. The model keeps the
//! minimum in the cost's own field (so code that reads the number reads the floor) and the
//! rest as a [`Spread`]: the excess over the minimum that each occurrence draws.
//!
//! Draws are counter-based: occurrence `index` of stream `stream` (a task, a CPU) of cost
//! `key` under seed `seed` always draws the same value, whatever else the run did before
//! ([`crate::rng::keyed_u64`]). So two runs that differ only in their scheduling policy give
//! the k-th context switch into a task, or its k-th pipe call, the same cost: a comparison of
//! policies is not blurred by noise that only reflects which draw came when (common random
//! numbers, the standard variance reduction for comparing simulated systems).

use crate::rng::{keyed_u64, unit_f64};

/// The largest cost one occurrence can draw: one second, the bound of every machine cost.
pub const MAX_DRAW_NS: u64 = 1_000_000_000;

/// How one cost's occurrences spread above its minimum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread {
    /// Uniform over [min, min + width].
    Uniform { width_ns: u64 },
    /// Exponential above the minimum with this mean excess (mean of the cost = min + mean).
    Exponential { mean_excess_ns: u64 },
}

impl Eq for Spread {}

/// Distribution names the grammar accepts.
pub const DIST_NAMES: [&str; 2] = ["uniform", "exponential"];

impl Spread {
    /// The excess over the minimum for a uniform draw `u` in [0, 1).
    fn excess(self, u: f64) -> u64 {
        let x = match self {
            Spread::Uniform { width_ns } => u * (width_ns as f64 + 1.0),
            // Inverse transform: -ln(1 - u) is Exp(1); 1 - u is in (0, 1], so finite.
            Spread::Exponential { mean_excess_ns } => -(1.0 - u).ln() * mean_excess_ns as f64,
        };
        (x as u64).min(MAX_DRAW_NS)
    }

    /// The mean of the cost whose minimum is `min_ns` (ns, rounded down).
    pub fn mean_ns(self, min_ns: u64) -> u64 {
        min_ns
            + match self {
                Spread::Uniform { width_ns } => width_ns / 2,
                Spread::Exponential { mean_excess_ns } => mean_excess_ns,
            }
    }
}

/// The machine costs that may carry a spread; each draws from its own streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostKey {
    ContextSwitch,
    Fork,
    Wakeup,
    Sleep,
    Exit,
    Tick,
    TimerIrq,
    /// A pipe or socket call (the channel's `op_cost_ns`).
    ChannelOp,
    /// The softirq work a tick raises.
    Softirq,
}

impl CostKey {
    pub const COUNT: usize = 9;
    pub const ALL: [CostKey; CostKey::COUNT] = [
        CostKey::ContextSwitch,
        CostKey::Fork,
        CostKey::Wakeup,
        CostKey::Sleep,
        CostKey::Exit,
        CostKey::Tick,
        CostKey::TimerIrq,
        CostKey::ChannelOp,
        CostKey::Softirq,
    ];

    /// The key's name in `schedlab.machine` (a channel's own is `<channel>.op_cost_ns`).
    pub fn spec_name(self) -> &'static str {
        match self {
            CostKey::ContextSwitch => "context_switch_ns",
            CostKey::Fork => "fork_ns",
            CostKey::Wakeup => "wakeup_ns",
            CostKey::Sleep => "sleep_ns",
            CostKey::Exit => "exit_ns",
            CostKey::Tick => "kernel.tick_ns",
            CostKey::TimerIrq => "kernel.timer_irq_ns",
            // Channels carry their own spreads; results name them per channel.
            CostKey::ChannelOp => "op_cost_ns",
            CostKey::Softirq => "kernel.softirq_ns",
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The spread of each machine-level cost ([`CostKey`]; channels carry their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spreads([Option<Spread>; CostKey::COUNT]);

impl Spreads {
    #[inline]
    pub fn get(&self, key: CostKey) -> Option<Spread> {
        self.0[key.index()]
    }

    pub fn set(&mut self, key: CostKey, spread: Option<Spread>) {
        self.0[key.index()] = spread;
    }

    /// Whether any cost varies.
    pub fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }
}

/// One occurrence of a cost whose minimum is `min_ns`: the minimum itself without a spread,
/// else the minimum plus occurrence `index` of stream `stream`'s draw (see the module docs).
#[inline]
pub fn draw(
    min_ns: u64,
    spread: Option<Spread>,
    seed: u64,
    key: CostKey,
    stream: u64,
    index: u64,
) -> u64 {
    match spread {
        None => min_ns,
        Some(s) => {
            let u = unit_f64(keyed_u64(seed, key.index() as u64, stream, index));
            min_ns
                .saturating_add(s.excess(u))
                .min(MAX_DRAW_NS.max(min_ns))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_cost_is_its_minimum() {
        assert_eq!(draw(1234, None, 7, CostKey::Tick, 0, 9), 1234);
    }

    #[test]
    fn same_key_same_draw_and_keys_differ() {
        let s = Some(Spread::Exponential {
            mean_excess_ns: 1000,
        });
        let a = draw(10, s, 1, CostKey::ContextSwitch, 3, 4);
        assert_eq!(a, draw(10, s, 1, CostKey::ContextSwitch, 3, 4));
        let others = [
            draw(10, s, 2, CostKey::ContextSwitch, 3, 4),
            draw(10, s, 1, CostKey::Fork, 3, 4),
            draw(10, s, 1, CostKey::ContextSwitch, 4, 4),
            draw(10, s, 1, CostKey::ContextSwitch, 3, 5),
        ];
        assert!(others.iter().all(|&o| o != a), "{a} {others:?}");
    }

    /// The sample means approach the distributions' means (10⁵ draws; the bounds are six
    /// standard errors wide, so a correct sampler fails them with probability < 10⁻⁸ and
    /// the draws are fixed by the seed anyway).
    #[test]
    fn sample_means_match_the_distributions() {
        let n = 100_000u64;
        for (spread, sd) in [
            (Spread::Uniform { width_ns: 1000 }, 1000.0 / 12f64.sqrt()),
            (
                Spread::Exponential {
                    mean_excess_ns: 1000,
                },
                1000.0,
            ),
        ] {
            let sum: u64 = (0..n)
                .map(|i| draw(500, Some(spread), 42, CostKey::Wakeup, 0, i))
                .sum();
            let mean = sum as f64 / n as f64;
            let want = spread.mean_ns(500) as f64;
            let tol = 6.0 * sd / (n as f64).sqrt() + 1.0;
            assert!(
                (mean - want).abs() < tol,
                "{spread:?}: mean {mean}, want {want}"
            );
        }
    }

    #[test]
    fn uniform_stays_in_its_range_and_draws_are_capped() {
        for i in 0..10_000 {
            let d = draw(
                100,
                Some(Spread::Uniform { width_ns: 50 }),
                5,
                CostKey::Sleep,
                1,
                i,
            );
            assert!((100..=150).contains(&d), "{d}");
        }
        let huge = Some(Spread::Exponential {
            mean_excess_ns: MAX_DRAW_NS,
        });
        for i in 0..1000 {
            assert!(draw(10, huge, 5, CostKey::Exit, 1, i) <= MAX_DRAW_NS);
        }
    }
}

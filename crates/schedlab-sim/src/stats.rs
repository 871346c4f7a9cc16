//! Summary statistics of a sample set, as the result schema defines them
//! (docs/results.md): population standard deviation, nearest-rank percentiles, and the
//! seed-000 variant recomputed over the samples within 6σ of the mean.

use serde_json::{json, Value};

/// Statistics of one sample set (all `None` when it is empty).
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub count: usize,
    pub mean: Option<f64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub stddev: Option<f64>,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
}

impl Stats {
    /// Compute over `xs` (sorted in place).
    pub fn of(xs: &mut [u64]) -> Stats {
        xs.sort_unstable();
        let n = xs.len();
        if n == 0 {
            return Stats {
                count: 0,
                mean: None,
                min: None,
                max: None,
                stddev: None,
                p50: None,
                p90: None,
                p99: None,
                p999: None,
            };
        }
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        Stats {
            count: n,
            mean: Some(mean),
            min: Some(xs[0]),
            max: Some(xs[n - 1]),
            stddev: Some(var.sqrt()),
            p50: Some(nearest_rank(xs, 0.50)),
            p90: Some(nearest_rank(xs, 0.90)),
            p99: Some(nearest_rank(xs, 0.99)),
            p999: Some(nearest_rank(xs, 0.999)),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "count": self.count,
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "stddev": self.stddev,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
            "p999": self.p999,
        })
    }
}

/// The nearest-rank percentile of sorted data: the smallest value with at least `q` of
/// the samples at or below it.
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The stats object of the schema: raw statistics plus `filtered6sigma`.
pub fn stats_json(samples: &mut [u64]) -> Value {
    let raw = Stats::of(samples);
    // `Stats::of` sorted the samples, so those within 6σ of the mean are one contiguous
    // run: no copy, and re-sorting a sorted run is linear.
    let kept = match (raw.mean, raw.stddev) {
        (Some(m), Some(sd)) => {
            let lo = samples.partition_point(|&x| (x as f64) < m - 6.0 * sd);
            let hi = samples.partition_point(|&x| (x as f64) <= m + 6.0 * sd);
            lo..hi
        }
        _ => 0..0,
    };
    let mut v = raw.to_json();
    v["filtered6sigma"] = Stats::of(&mut samples[kept]).to_json();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_stats_and_percentiles() {
        let mut xs: Vec<u64> = (1..=100).collect();
        let s = Stats::of(&mut xs);
        assert_eq!(s.count, 100);
        assert_eq!(s.mean, Some(50.5));
        assert_eq!((s.min, s.max), (Some(1), Some(100)));
        assert_eq!(
            (s.p50, s.p90, s.p99, s.p999),
            (Some(50), Some(90), Some(99), Some(100))
        );
        let sd = s.stddev.unwrap();
        assert!((sd - 28.866_070_047_722_12).abs() < 1e-9);
    }

    #[test]
    fn empty_is_all_null() {
        let v = stats_json(&mut []);
        assert_eq!(v["count"], 0);
        assert!(v["mean"].is_null());
        assert!(v["filtered6sigma"]["p99"].is_null());
    }

    #[test]
    fn six_sigma_filter_drops_a_lone_outlier() {
        // 999 samples of 100 and one of 10^6: the outlier is ~31.6 sigma away.
        let mut xs = vec![100u64; 999];
        xs.push(1_000_000);
        let v = stats_json(&mut xs);
        assert_eq!(v["count"], 1000);
        assert_eq!(v["filtered6sigma"]["count"], 999);
        assert_eq!(v["filtered6sigma"]["max"], 100);
    }
}

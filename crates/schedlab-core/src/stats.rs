//! Summary statistics of a sample set, as the result schema defines them
//! (docs/results.md): count, mean, min, max, population standard deviation, nearest-rank
//! percentiles, and the seed-000 variant recomputed over the samples within 6σ of the mean.
//!
//! Two sources give the same object:
//! - [`Summary::exact`] from the samples themselves (kept in memory): every value exact;
//! - [`Summary::of_histogram`] from a [`Histogram`], which keeps O(buckets) memory however
//!   many samples it sees and merges with others (a task's histograms pool into a
//!   template's or the machine's): count, min, max and mean are exact, the standard
//!   deviation is exact up to floating-point rounding, and the percentiles and the 6σ
//!   subset are resolved to a bucket, whose width is at most 1/64 of its values
//!   ([`HISTOGRAM_RELATIVE_ERROR`]; values below 128 are exact).

use serde::Serialize;
use serde_json::Value;

/// Statistics of one sample set (all `None` when it is empty).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub count: u64,
    pub mean: Option<f64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub stddev: Option<f64>,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
}

/// The schema's STATS object: the statistics and their 6σ-filtered variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    pub all: Stats,
    pub filtered6sigma: Stats,
}

const EMPTY: Stats = Stats {
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

/// The percentiles the schema reports.
const QUANTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

impl Stats {
    /// Compute over `xs` (sorted in place).
    pub fn of(xs: &mut [u64]) -> Stats {
        xs.sort_unstable();
        Self::of_sorted(xs)
    }

    /// Compute over sorted `xs`.
    pub fn of_sorted(xs: &[u64]) -> Stats {
        let n = xs.len();
        if n == 0 {
            return EMPTY;
        }
        let sum: u128 = xs.iter().map(|&x| x as u128).sum();
        let mean = sum as f64 / n as f64;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        let [p50, p90, p99, p999] = QUANTILES.map(|q| Some(xs[nearest_rank(n as u64, q) - 1]));
        Stats {
            count: n as u64,
            mean: Some(mean),
            min: Some(xs[0]),
            max: Some(xs[n - 1]),
            stddev: Some(var.sqrt()),
            p50,
            p90,
            p99,
            p999,
        }
    }
}

/// The 1-based nearest rank of quantile `q` among `n` samples: the smallest rank with at
/// least `q` of the samples at or below it.
fn nearest_rank(n: u64, q: f64) -> usize {
    ((q * n as f64).ceil() as u64).clamp(1, n) as usize
}

impl Summary {
    /// Exact statistics of `samples` (sorted in place). The samples within 6σ of the mean
    /// are one contiguous run of the sorted samples: no copy.
    pub fn exact(samples: &mut [u64]) -> Summary {
        samples.sort_unstable();
        let all = Stats::of_sorted(samples);
        let kept = match (all.mean, all.stddev) {
            (Some(m), Some(sd)) => {
                let lo = samples.partition_point(|&x| (x as f64) < m - 6.0 * sd);
                let hi = samples.partition_point(|&x| (x as f64) <= m + 6.0 * sd);
                lo..hi
            }
            _ => 0..0,
        };
        Summary {
            all,
            filtered6sigma: Stats::of_sorted(&samples[kept]),
        }
    }

    /// Statistics from a histogram (see the module docs for what is exact).
    pub fn of_histogram(h: &Histogram) -> Summary {
        let all = h.stats();
        let filtered = match (all.mean, all.stddev) {
            (Some(m), Some(sd)) => h.within(m - 6.0 * sd, m + 6.0 * sd).stats(),
            _ => EMPTY,
        };
        Summary {
            all,
            filtered6sigma: filtered,
        }
    }

    /// As a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("stats serialise")
    }
}

/// The schema's STATS object of `samples` (sorted in place), exact.
pub fn stats_json(samples: &mut [u64]) -> Value {
    Summary::exact(samples).to_json()
}

// ------------------------------------------------------------------------------ histogram

/// Sub-buckets per power of two: a bucket spans at most 1/64 of its lower bound.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// The largest relative width of a histogram bucket (values below 128 are exact).
pub const HISTOGRAM_RELATIVE_ERROR: f64 = 1.0 / SUB as f64;

/// The bucket of `v`: values below 2·64 are their own bucket; above, each power of two is
/// cut into 64 equal buckets (log-linear, as HdrHistogram does).
#[inline]
fn bucket_of(v: u64) -> u16 {
    if v < 2 * SUB {
        return v as u16;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (SUB * shift as u64 + (v >> shift)) as u16
}

/// The smallest and largest value of bucket `b`.
fn bucket_bounds(b: u16) -> (u64, u64) {
    let b = b as u64;
    if b < 2 * SUB {
        return (b, b);
    }
    let shift = b / SUB - 1;
    let m = b - SUB * shift;
    let low = m << shift;
    (low, low + ((1u64 << shift) - 1))
}

/// Bits of a bucket entry that hold its count; the bucket number sits above them.
const COUNT_BITS: u32 = 52;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// A histogram entry: bucket `b` (< 2^12: the last bucket is 3775) with count `c` (< 2^52).
#[inline]
fn entry(b: u16, c: u64) -> u64 {
    (b as u64) << COUNT_BITS | c
}

#[inline]
fn entry_bucket(e: u64) -> u16 {
    (e >> COUNT_BITS) as u16
}

#[inline]
fn entry_count(e: u64) -> u64 {
    e & COUNT_MASK
}

/// A mergeable log-linear histogram of `u64` samples with exact count, sum, min and max and
/// an online variance. Memory is O(buckets touched): a sorted vector of the touched
/// buckets, each with its count, packed in one word.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// [`entry`]s in increasing bucket order.
    buckets: Vec<u64>,
    /// The entry the last sample went to (samples often repeat their bucket).
    last: u32,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    /// Welford's running mean and sum of squared deviations (Chan et al. to merge).
    mean: f64,
    m2: f64,
}

/// Equal when they hold the same samples (`last` is a lookup hint, not content).
impl PartialEq for Histogram {
    fn eq(&self, o: &Self) -> bool {
        (self.buckets == o.buckets && self.count == o.count && self.sum == o.sum)
            && (self.min, self.max) == (o.min, o.max)
            && (self.mean, self.m2) == (o.mean, o.m2)
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one sample. O(1) when it falls in the bucket of the previous one, else
    /// O(log buckets) to find its bucket, plus a shift when it is new.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        match self.buckets.get_mut(self.last as usize) {
            Some(e) if entry_bucket(*e) == b => *e += 1,
            _ => self.count_in_bucket(b),
        }
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += v as u128;
        let d = v as f64 - self.mean;
        self.mean += d / self.count as f64;
        self.m2 += d * (v as f64 - self.mean);
    }

    /// One more sample in bucket `b`, which is not the last one used.
    fn count_in_bucket(&mut self, b: u16) {
        let i = match self.buckets.binary_search_by_key(&b, |&e| entry_bucket(e)) {
            Ok(i) => {
                self.buckets[i] += 1;
                i
            }
            Err(i) => {
                if self.buckets.len() == self.buckets.capacity() {
                    // Grow by a quarter, not by doubling: a run keeps three histograms per
                    // task, and a doubled vector is a third empty on average.
                    let n = self.buckets.len();
                    self.buckets.reserve_exact((n / 4).max(4));
                }
                self.buckets.insert(i, entry(b, 1));
                i
            }
        };
        self.last = i as u32;
    }

    /// Add every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        let mut merged = Vec::with_capacity(self.buckets.len() + other.buckets.len());
        let (mut i, mut j) = (0, 0);
        while i < self.buckets.len() || j < other.buckets.len() {
            let a = self.buckets.get(i).copied();
            let b = other.buckets.get(j).copied();
            match (a, b) {
                (Some(x), Some(y)) if entry_bucket(x) == entry_bucket(y) => {
                    merged.push(x + entry_count(y));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if entry_bucket(x) < entry_bucket(y) => {
                    merged.push(x);
                    i += 1;
                }
                (Some(x), None) => {
                    merged.push(x);
                    i += 1;
                }
                (_, Some(y)) => {
                    merged.push(y);
                    j += 1;
                }
                (None, None) => unreachable!(),
            }
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let d = other.mean - self.mean;
        let n = na + nb;
        self.mean += d * nb / n;
        self.m2 += other.m2 + d * d * na * nb / n;
        self.buckets = merged;
        self.last = 0;
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes this histogram holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<u64>()
    }

    /// The statistics (see the module docs for what is exact).
    pub fn stats(&self) -> Stats {
        if self.count == 0 {
            return EMPTY;
        }
        let n = self.count;
        let percentiles = QUANTILES.map(|q| Some(self.value_at_rank(nearest_rank(n, q) as u64)));
        let [p50, p90, p99, p999] = percentiles;
        Stats {
            count: n,
            mean: Some(self.sum as f64 / n as f64),
            min: Some(self.min),
            max: Some(self.max),
            stddev: Some((self.m2.max(0.0) / n as f64).sqrt()),
            p50,
            p90,
            p99,
            p999,
        }
    }

    /// The value reported for the sample of 1-based rank `rank`: the top of its bucket,
    /// within the exact [min, max] (so a percentile is never below the true one by more
    /// than a bucket and never outside the samples' range).
    fn value_at_rank(&self, rank: u64) -> u64 {
        let mut seen = 0;
        for &e in &self.buckets {
            seen += entry_count(e);
            if seen >= rank {
                return bucket_bounds(entry_bucket(e)).1.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The samples whose bucket lies within [lo, hi] (by the bucket's midpoint), as a new
    /// histogram: each bucket's samples are taken to sit at its midpoint for the sums.
    fn within(&self, lo: f64, hi: f64) -> Histogram {
        let mut h = Histogram::new();
        for &e in &self.buckets {
            let (b, c) = (entry_bucket(e), entry_count(e));
            let (l, u) = bucket_bounds(b);
            let l = l.max(self.min);
            let u = u.min(self.max);
            let mid = l as f64 / 2.0 + u as f64 / 2.0;
            if mid < lo || mid > hi {
                continue;
            }
            let v = mid.round() as u64;
            h.buckets.push(e);
            if h.count == 0 {
                h.min = l;
            }
            h.max = u;
            let na = h.count as f64;
            h.count += c;
            h.sum += v as u128 * c as u128;
            let d = v as f64 - h.mean;
            h.mean += d * c as f64 / h.count as f64;
            h.m2 += d * d * na * c as f64 / h.count as f64;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
        let mut h = Histogram::new();
        xs.iter().for_each(|&x| h.record(x));
        let s = Summary::of_histogram(&h);
        assert_eq!(s.filtered6sigma.count, 999);
        assert_eq!(s.filtered6sigma.max, Some(100));
    }

    #[test]
    fn buckets_tile_the_range_and_stay_within_the_relative_error() {
        let mut prev_high = None;
        for b in 0..=bucket_of(u64::MAX) {
            let (l, u) = bucket_bounds(b);
            if let Some(p) = prev_high {
                assert_eq!(l, p + 1, "bucket {b} does not follow its predecessor");
            }
            assert_eq!(bucket_of(l), b);
            assert_eq!(bucket_of(u), b);
            assert!((u - l) as f64 <= l as f64 * HISTOGRAM_RELATIVE_ERROR);
            prev_high = Some(u);
        }
        assert_eq!(prev_high, Some(u64::MAX));
    }

    proptest! {
        /// Count, min, max and mean are exact, the standard deviation matches to rounding,
        /// every percentile lies in the bucket of the exact one, and merging two
        /// histograms equals recording everything into one.
        #[test]
        fn histogram_agrees_with_the_exact_statistics(
            a in prop::collection::vec(0u64..1u64 << 40, 1..300),
            b in prop::collection::vec(0u64..5_000u64, 0..300),
        ) {
            let mut all: Vec<u64> = a.iter().chain(b.iter()).copied().collect();
            let exact = Stats::of(&mut all);
            let (mut ha, mut hb, mut hall) = (Histogram::new(), Histogram::new(), Histogram::new());
            a.iter().for_each(|&x| { ha.record(x); hall.record(x) });
            b.iter().for_each(|&x| { hb.record(x); hall.record(x) });
            ha.merge(&hb);
            prop_assert_eq!(&ha.buckets, &hall.buckets);
            let got = ha.stats();
            prop_assert_eq!(got.count, exact.count);
            prop_assert_eq!((got.min, got.max), (exact.min, exact.max));
            prop_assert_eq!(got.mean, exact.mean);
            let (gs, es) = (got.stddev.unwrap(), exact.stddev.unwrap());
            prop_assert!((gs - es).abs() <= 1e-6 * es.max(1.0), "stddev {} vs {}", gs, es);
            for (g, e) in [(got.p50, exact.p50), (got.p90, exact.p90), (got.p99, exact.p99), (got.p999, exact.p999)] {
                let (g, e) = (g.unwrap(), e.unwrap());
                prop_assert!(g >= e, "percentile {} below the exact {}", g, e);
                prop_assert_eq!(bucket_of(g), bucket_of(e));
            }
        }
    }
}

//! Summary statistics of a sample set, as the result schema defines them
//! (docs/results.md): count, mean, min, max, population standard deviation, nearest-rank
//! percentiles, and the seed-000 variant recomputed over the samples within 6σ of the mean.
//!
//! Two sources give the same object:
//! - [`Summary::exact`] from the samples themselves (kept in memory): every value exact;
//! - [`Summary::of_histogram`] from a [`Histogram`], which keeps O(buckets) memory however
//!   many samples it sees and merges with others (a task's histograms pool into a
//!   template's or the machine's): count, min, max and mean are exact, the standard
//!   deviation is computed from exact integer sums (one final rounding; from the buckets
//!   only once Σv² passes 2^128), and the percentiles and the 6σ
//!   subset are resolved to a bucket, whose width is at most 1/64 of its values
//!   ([`HISTOGRAM_RELATIVE_ERROR`]; values below 128 are exact).

use serde::Serialize;
use serde_json::Value;

/// Statistics of one sample set: the count and, unless it is empty, the values (the
/// schema writes them as `null` when it is). Kept compact: a run holds two [`Summary`]s
/// per task in its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub values: Option<StatValues>,
}

/// The statistics of a non-empty sample set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatValues {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
}

impl Stats {
    pub fn mean(&self) -> Option<f64> {
        self.values.map(|v| v.mean)
    }
    pub fn min(&self) -> Option<u64> {
        self.values.map(|v| v.min)
    }
    pub fn max(&self) -> Option<u64> {
        self.values.map(|v| v.max)
    }
    pub fn stddev(&self) -> Option<f64> {
        self.values.map(|v| v.stddev)
    }
    /// p50, p90, p99 and p999.
    pub fn percentiles(&self) -> [Option<u64>; 4] {
        self.values
            .map_or([None; 4], |v| [v.p50, v.p90, v.p99, v.p999].map(Some))
    }
}

/// The schema's STATS fields, in order, `null` for an empty set.
impl Serialize for Stats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let v = self.values;
        let mut m = s.serialize_map(Some(9))?;
        m.serialize_entry("count", &self.count)?;
        m.serialize_entry("mean", &v.map(|v| v.mean))?;
        m.serialize_entry("min", &v.map(|v| v.min))?;
        m.serialize_entry("max", &v.map(|v| v.max))?;
        m.serialize_entry("stddev", &v.map(|v| v.stddev))?;
        m.serialize_entry("p50", &v.map(|v| v.p50))?;
        m.serialize_entry("p90", &v.map(|v| v.p90))?;
        m.serialize_entry("p99", &v.map(|v| v.p99))?;
        m.serialize_entry("p999", &v.map(|v| v.p999))?;
        m.end()
    }
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
    values: None,
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
        let [p50, p90, p99, p999] = QUANTILES.map(|q| xs[nearest_rank(n as u64, q) - 1]);
        Stats {
            count: n as u64,
            values: Some(StatValues {
                mean,
                min: xs[0],
                max: xs[n - 1],
                stddev: var.sqrt(),
                p50,
                p90,
                p99,
                p999,
            }),
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
        let kept = match (all.mean(), all.stddev()) {
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
        let filtered = match (all.mean(), all.stddev()) {
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
const fn bucket_of(v: u64) -> u16 {
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
const COUNT_BITS: u32 = 20;
/// The count of a full entry: a bucket with more samples continues in the next entry.
const COUNT_MAX: u32 = (1 << COUNT_BITS) - 1;
const _: () = assert!(
    (bucket_of(u64::MAX) as u32) < 1 << (32 - COUNT_BITS),
    "every bucket number fits above the count bits"
);

/// A histogram entry: bucket `b` (< 2^12: the last bucket is 3775) with count `c` (≤ 2^20 − 1).
#[inline]
fn entry(b: u16, c: u32) -> u32 {
    debug_assert!(c <= COUNT_MAX);
    (b as u32) << COUNT_BITS | c
}

#[inline]
fn entry_bucket(e: u32) -> u16 {
    (e >> COUNT_BITS) as u16
}

#[inline]
fn entry_count(e: u32) -> u64 {
    (e & COUNT_MAX) as u64
}

#[inline]
fn entry_full(e: u32) -> bool {
    e & COUNT_MAX == COUNT_MAX
}

/// Append `c` samples of bucket `b` to sorted entries: full entries, then the rest.
fn push_count(entries: &mut Vec<u32>, b: u16, mut c: u64) {
    while c > 0 {
        let k = c.min(COUNT_MAX as u64);
        entries.push(entry(b, k as u32));
        c -= k;
    }
}

/// The sum of squares once it no longer fits in 128 bits.
const SQUARES_OVERFLOWED: u128 = u128::MAX;

/// A mergeable log-linear histogram of `u64` samples with exact count, sum, sum of squares,
/// min and max. Memory is O(buckets touched): a sorted vector of the touched buckets, each
/// with its count, packed in 32 bits (a bucket holding more than 2^20 − 1 samples takes
/// several entries).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// [`entry`]s in increasing bucket order; every entry of a bucket but its last is full.
    buckets: Vec<u32>,
    /// The entry the last sample went to (samples often repeat their bucket).
    last: u32,
    count: u64,
    sum: u128,
    /// Σ v², exact while it fits ([`SQUARES_OVERFLOWED`] after: the standard deviation is
    /// then taken from the buckets).
    sum_sq: u128,
    min: u64,
    max: u64,
}

/// Equal when they hold the same samples (`last` is a lookup hint, not content).
impl PartialEq for Histogram {
    fn eq(&self, o: &Self) -> bool {
        (self.buckets == o.buckets && self.count == o.count && self.sum == o.sum)
            && (self.min, self.max, self.sum_sq) == (o.min, o.max, o.sum_sq)
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
            Some(e) if entry_bucket(*e) == b && !entry_full(*e) => *e += 1,
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
        self.add_squares(v as u128 * v as u128);
    }

    #[inline(always)]
    fn add_squares(&mut self, sq: u128) {
        self.sum_sq = self.sum_sq.checked_add(sq).unwrap_or(SQUARES_OVERFLOWED);
    }

    /// One more sample in bucket `b`, whose last entry is not the last one used or is full.
    fn count_in_bucket(&mut self, b: u16) {
        // The entries of bucket `b` end just before `i`.
        let i = self.buckets.partition_point(|&e| entry_bucket(e) <= b);
        if let Some(e) = i.checked_sub(1).map(|j| &mut self.buckets[j]) {
            if entry_bucket(*e) == b && !entry_full(*e) {
                *e += 1;
                self.last = (i - 1) as u32;
                return;
            }
        }
        if self.buckets.len() == self.buckets.capacity() {
            // Grow by a quarter, not by doubling: a run keeps three histograms per task, and
            // a doubled vector is a third empty on average.
            let n = self.buckets.len();
            self.buckets.reserve_exact((n / 4).max(4));
        }
        self.buckets.insert(i, entry(b, 1));
        self.last = i as u32;
    }

    /// Each touched bucket with its whole count, in increasing bucket order.
    fn runs(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            let b = entry_bucket(*self.buckets.get(i)?);
            let mut c = 0;
            while let Some(&e) = self.buckets.get(i).filter(|&&e| entry_bucket(e) == b) {
                c += entry_count(e);
                i += 1;
            }
            Some((b, c))
        })
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
        let (mut a, mut b) = (self.runs().peekable(), other.runs().peekable());
        loop {
            let next = match (a.peek().copied(), b.peek().copied()) {
                (Some((x, cx)), Some((y, cy))) if x == y => {
                    a.next();
                    b.next();
                    (x, cx + cy)
                }
                (Some(run @ (x, _)), Some((y, _))) if x < y => {
                    a.next();
                    run
                }
                (_, Some(run)) => {
                    b.next();
                    run
                }
                (Some(run), None) => {
                    a.next();
                    run
                }
                (None, None) => break,
            };
            push_count(&mut merged, next.0, next.1);
        }
        drop((a, b));
        self.buckets = merged;
        self.last = 0;
        self.count += other.count;
        self.sum += other.sum;
        self.add_squares(other.sum_sq);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The entry the next sample most likely goes to (the last one's), for a caller that
    /// asks the cache for it ahead of time. Only an address: it may be dangling.
    #[inline]
    pub fn likely_entry(&self) -> *const u32 {
        self.buckets.as_ptr().wrapping_add(self.last as usize)
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Give back the room kept for buckets not touched yet.
    pub fn shrink_to_fit(&mut self) {
        self.buckets.shrink_to_fit();
    }

    /// Bytes this histogram holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<u32>()
    }

    /// The statistics (see the module docs for what is exact).
    pub fn stats(&self) -> Stats {
        if self.count == 0 {
            return EMPTY;
        }
        let n = self.count;
        let [p50, p90, p99, p999] =
            QUANTILES.map(|q| self.value_at_rank(nearest_rank(n, q) as u64));
        Stats {
            count: n,
            values: Some(StatValues {
                mean: self.sum as f64 / n as f64,
                min: self.min,
                max: self.max,
                stddev: (self.squared_deviations().max(0.0) / n as f64).sqrt(),
                p50,
                p90,
                p99,
                p999,
            }),
        }
    }

    /// Σ (v − mean)²: from the exact sums while the sum of squares fits, else from the
    /// buckets' midpoints. With s = Σv = q·n + r, s²/n = q·(s + r) + r²/n, so only r²/n
    /// is not an integer.
    fn squared_deviations(&self) -> f64 {
        let n = self.count as u128;
        let (q, r) = (self.sum / n, self.sum % n);
        let exact = (self.sum_sq != SQUARES_OVERFLOWED)
            .then(|| q.checked_mul(self.sum.checked_add(r)?))
            .flatten()
            .and_then(|qsr| self.sum_sq.checked_sub(qsr));
        match exact {
            Some(int_part) => int_part as f64 - (r * r) as f64 / n as f64,
            None => {
                let mean = self.sum as f64 / n as f64;
                self.runs()
                    .map(|(b, c)| (self.midpoint(b) - mean).powi(2) * c as f64)
                    .sum()
            }
        }
    }

    /// The middle of bucket `b`'s values within the exact [min, max].
    fn midpoint(&self, b: u16) -> f64 {
        let (l, u) = bucket_bounds(b);
        l.max(self.min) as f64 / 2.0 + u.min(self.max) as f64 / 2.0
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
        for (b, c) in self.runs() {
            let mid = self.midpoint(b);
            if mid < lo || mid > hi {
                continue;
            }
            let (l, u) = bucket_bounds(b);
            let v = mid.round() as u128;
            push_count(&mut h.buckets, b, c);
            if h.count == 0 {
                h.min = l.max(self.min);
            }
            h.max = u.min(self.max);
            h.count += c;
            h.sum += v * c as u128;
            let sq = (v * v).checked_mul(c as u128).unwrap_or(SQUARES_OVERFLOWED);
            h.add_squares(sq);
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
        assert_eq!(s.mean(), Some(50.5));
        assert_eq!((s.min(), s.max()), (Some(1), Some(100)));
        assert_eq!(s.percentiles(), [Some(50), Some(90), Some(99), Some(100)]);
        let sd = s.stddev().unwrap();
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
        assert_eq!(s.filtered6sigma.max(), Some(100));
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

    #[test]
    fn a_bucket_outgrowing_one_entry_continues_in_the_next() {
        let n = COUNT_MAX as u64 * 2 + 7;
        let mut h = Histogram::new();
        for i in 0..n {
            h.record(if i % 3 == 0 { 1_000 } else { 5 });
        }
        let runs: Vec<_> = h.runs().collect();
        let fives = n - n.div_ceil(3);
        assert_eq!(runs, vec![(5, fives), (bucket_of(1_000), n.div_ceil(3))]);
        assert!(h.buckets.len() > 2, "the count of 5 spans several entries");
        let mut twice = h.clone();
        twice.merge(&h);
        let runs: Vec<_> = twice.runs().collect();
        assert_eq!(
            runs,
            vec![(5, 2 * fives), (bucket_of(1_000), 2 * n.div_ceil(3))]
        );
        assert_eq!(twice.stats().percentiles()[0], Some(5));
        assert_eq!(twice.count(), 2 * n);
    }

    #[test]
    fn standard_deviation_survives_squares_beyond_128_bits() {
        let mut h = Histogram::new();
        let big = [u64::MAX - 10, u64::MAX / 2, u64::MAX - 3, u64::MAX / 2 + 5];
        big.iter().for_each(|&x| h.record(x));
        assert_eq!(h.sum_sq, SQUARES_OVERFLOWED);
        let exact = Stats::of(&mut big.to_vec());
        let (got, want) = (h.stats().stddev().unwrap(), exact.stddev().unwrap());
        assert!(
            (got - want).abs() <= want * HISTOGRAM_RELATIVE_ERROR,
            "{got} vs {want}"
        );
        assert_eq!(h.stats().mean(), exact.mean());
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
            prop_assert_eq!((got.min(), got.max()), (exact.min(), exact.max()));
            prop_assert_eq!(got.mean(), exact.mean());
            let (gs, es) = (got.stddev().unwrap(), exact.stddev().unwrap());
            prop_assert!((gs - es).abs() <= 1e-6 * es.max(1.0), "stddev {} vs {}", gs, es);
            for (g, e) in got.percentiles().into_iter().zip(exact.percentiles()) {
                let (g, e) = (g.unwrap(), e.unwrap());
                prop_assert!(g >= e, "percentile {} below the exact {}", g, e);
                prop_assert_eq!(bucket_of(g), bucket_of(e));
            }
        }
    }
}

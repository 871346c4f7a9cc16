//! Time mode: nanoseconds per operation with `std::time::Instant`.
//!
//! Every sample times ONE operation on a freshly built queue (building is not timed).
//! The operations cost a few to a few hundred nanoseconds, below the 10 ns granularity
//! `Instant` has on some VMs, so on x86-64 the clock is the time-stamp counter (`lfence;
//! rdtsc` on both sides), converted to ns with a rate calibrated against `Instant` over
//! [`CALIBRATE_MS`]; elsewhere it is `Instant`. On this project's VM both tick in 10 ns
//! steps, so a single sample is quantised; but the start of a sample falls at a random
//! phase of the clock's step, so the MEAN of many quantised samples estimates the true
//! duration without that bias. The per-case figure is therefore a trimmed mean
//! ([`trimmed_mean`]: the samples above the 95th percentile, interrupts and migrations,
//! are dropped) less the clock's own cost, calibrated the same way on back-to-back reads.
//! * warm: the queue was just built (its data is in L1) and the operation's code ran on
//!   the previous repetition; the per-case figure is the trimmed mean of `reps_warm` samples.
//! * cold: before the sample the probe walks a buffer larger than this core's L2
//!   ([`EVICT_BYTES`]) and, on x86-64, flushes the queue object and the first bytes of
//!   the operation's code from every cache level with `clflush`; the per-case figure is
//!   the median of `reps_cold` samples (cold samples are hundreds of ns, so quantisation
//!   does not matter and the median resists the odd interrupt best). TLBs and branch predictors are not reset, and the
//!   rest of the code path is still in L3: this is "cold caches", not the seed's "cache off".

use std::hint::black_box;
use std::time::Instant;

use schedlab_rtq::ReadyQueue;

use crate::backends::Backend;
use crate::plan::{arguments, populated, Case, Op, Plan};

/// Bytes walked to evict the private caches before a cold sample (4 MiB: twice this
/// machine's 2 MiB per-core L2; more than the L1 and L2 of any current x86 core).
pub const EVICT_BYTES: usize = 4 << 20;
/// Code bytes flushed from the operation's entry (bounded by the end of its page, so
/// that the flush never touches an unmapped address).
const CODE_FLUSH_BYTES: usize = 1024;
const LINE: usize = 64;

/// How long the tick rate is calibrated against `Instant`.
pub const CALIBRATE_MS: u64 = 20;

/// A fine-grained clock: raw ticks, their rate, and the cost of one reading.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Ticks per nanosecond.
    pub ticks_per_ns: f64,
    /// Mean ticks between two back-to-back readings (trimmed as the samples are).
    pub overhead_ticks: f64,
    /// "tsc" or "instant".
    pub source: &'static str,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ticks() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence and rdtsc have no memory-safety preconditions on x86-64.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn ticks() -> u64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Clock {
    /// Calibrate the tick rate and the reading overhead.
    pub fn calibrate() -> Clock {
        let source = if cfg!(target_arch = "x86_64") {
            "tsc"
        } else {
            "instant"
        };
        let (i0, t0) = (Instant::now(), ticks());
        while i0.elapsed().as_millis() < u128::from(CALIBRATE_MS) {
            std::hint::spin_loop();
        }
        let (i1, t1) = (Instant::now(), ticks());
        let ticks_per_ns = (t1 - t0) as f64 / (i1 - i0).as_nanos() as f64;
        let v: Vec<f64> = (0..4001)
            .map(|_| {
                let a = ticks();
                let b = ticks();
                b.wrapping_sub(a) as f64
            })
            .collect();
        Clock {
            ticks_per_ns,
            overhead_ticks: trimmed_mean(v),
            source,
        }
    }

    /// Nanoseconds of a mean interval of `t` ticks, less the reading overhead (floored at 0).
    pub fn ns(&self, t: f64) -> f64 {
        (t - self.overhead_ticks).max(0.0) / self.ticks_per_ns
    }
}

/// Evicts caches before a cold sample (see the module doc).
pub struct Evictor {
    buf: Vec<u8>,
    step: u8,
}

impl Default for Evictor {
    fn default() -> Self {
        Evictor {
            buf: vec![1; EVICT_BYTES],
            step: 0,
        }
    }
}

impl Evictor {
    /// Walk the buffer (writing, so that dirty lines displace the old ones), then flush
    /// `data` and the code at `code`.
    pub fn evict<T>(&mut self, data: &T, code: *const u8) {
        self.step = self.step.wrapping_add(1);
        for i in (0..self.buf.len()).step_by(LINE) {
            self.buf[i] = self.buf[i].wrapping_add(self.step);
        }
        black_box(&self.buf);
        flush(data as *const T as *const u8, std::mem::size_of::<T>());
        let page_left = 4096 - (code as usize % 4096);
        flush(code, CODE_FLUSH_BYTES.min(page_left));
    }
}

#[cfg(target_arch = "x86_64")]
fn flush(start: *const u8, len: usize) {
    use std::arch::x86_64::{_mm_clflush, _mm_mfence};
    for off in (0..len).step_by(LINE) {
        // SAFETY: `start..start+len` lies inside one live object or inside the mapped
        // page of a function's entry (the caller bounds it); clflush only needs the
        // address to be mapped, it does not change memory contents.
        unsafe { _mm_clflush(start.wrapping_add(off)) };
    }
    // SAFETY: a fence has no memory-safety preconditions.
    unsafe { _mm_mfence() };
}

#[cfg(not(target_arch = "x86_64"))]
fn flush(_start: *const u8, _len: usize) {}

/// Per-case medians (ns) of one back end, operation and N: (warm, cold).
pub fn time_cases<Q: ReadyQueue>(
    b: &Backend<Q>,
    op: Op,
    n: usize,
    cases: &[Case],
    plan: &Plan,
    clock: &Clock,
    ev: &mut Evictor,
) -> (Vec<f64>, Vec<f64>) {
    let f = b.ops[op as usize];
    let mut warm = Vec::with_capacity(cases.len());
    let mut cold = Vec::with_capacity(cases.len());
    for &case in cases {
        let (t, p) = arguments(op, case, n);
        let sample = |evict: bool, ev: &mut Evictor| {
            let mut q = populated(b.make, n);
            if evict {
                ev.evict(&q, f as *const u8);
            }
            let t0 = ticks();
            let r = f(black_box(&mut q), black_box(t), black_box(p));
            let t1 = ticks();
            black_box(r);
            t1.wrapping_sub(t0) as f64
        };
        let w: Vec<f64> = (0..plan.reps_warm).map(|_| sample(false, ev)).collect();
        let c: Vec<f64> = (0..plan.reps_cold).map(|_| sample(true, ev)).collect();
        warm.push(clock.ns(trimmed_mean(w)));
        cold.push(clock.ns(median(c)));
    }
    (warm, cold)
}

/// Mean of the samples at or below the 95th percentile (nearest rank): drops the rare
/// interrupt or migration that would dominate a plain mean, keeps the quantisation
/// averaging of the rest.
pub fn trimmed_mean(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "mean of no samples");
    v.sort_unstable_by(f64::total_cmp);
    let keep = (v.len() * 95).div_ceil(100).max(1);
    v[..keep].iter().sum::<f64>() / keep as f64
}

/// Median of samples (the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "median of no samples");
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

//! `kyber`: the blk-mq scheduler that keeps read and write latencies near targets by
//! limiting how many requests of each kind the device holds.
//!
//! Source: block/kyber-iosched.c of Linux 6.1 (lines cited from that file):
//! - domains (`kyber_sched_domain`, 198-210): READ, WRITE, DISCARD, OTHER by operation;
//! - tokens (`kyber_depth`, 62-67: 256, 128, 64, 16 at the start; `kyber_resize_domain`,
//!   268-277, keeps a depth within 1..=that; `kyber_get_domain_token`, 707-752;
//!   `kyber_finish_request` / `rq_clear_domain_token`, 542-554 and 615-620, frees the token
//!   at completion): a request reaches the device only with a token of its domain;
//! - dispatch (`kyber_dispatch_request`, 804-848, `kyber_dispatch_cur_domain`, 754-802):
//!   batches of `kyber_batch_size` (82-87: 16 reads, 8 writes, 1, 1) from one domain, then
//!   the next domain round-robin, skipping domains without requests or tokens;
//! - latency feedback (`kyber_completed_request`, 640-664, `add_latency_sample`,
//!   622-638): each completion records its total latency (submission → completion) and
//!   its I/O latency (issue → completion) in a histogram of 8 buckets of a quarter of the
//!   domain's target (`kyber_latency_targets`, 72-76: read 2 ms, write 10 ms, discard
//!   5 s), and makes sure the timer fires within 100 ms (`timer_reduce(jiffies + HZ/10)`);
//!   the timer (`kyber_timer_fn`, 279-357, `calculate_percentile`, 228-266 — a percentile
//!   only once 500 samples or a second since the first) finds congestion when some
//!   domain's p90 I/O latency passes its target, and then scales the depth of every domain
//!   by its p99 total latency bucket: depth × (bucket + 1) / 4 — domains within target are
//!   throttled, domains over it get more tokens (over-target domains grow even without
//!   congestion);
//! - tunables (`kyber_sched_attrs`, 865-897): `read_lat_nsec`, `write_lat_nsec`.
//!
//! Simplifications: the per-CPU software queues (`kyber_ctx_queue`, their `kcq_map` and
//! the flush into the hardware context's lists) are collapsed into one FIFO per domain
//! (one hardware queue); the per-CPU latency histograms into one; a domain's tokens are a
//! count (a token is free while fewer than its depth are held), where the kernel's
//! sbitmap, after shrinking, may still hand out a bit below the new depth while bits above
//! it are held; the async share of scheduler tags (`kyber_limit_depth`, `async_depth`)
//! limits request allocation, which the block layer does not model; requests are never
//! merged (`kyber_bio_merge`); the timer fires exactly 100 ms after the first completion
//! that finds it idle (not on a jiffy).
//!
//! Complexity: O(1) per request; the timer is O(buckets).

use std::collections::VecDeque;

use schedlab_spec::model::IoOp;

use super::{IoCtx, IoSchedInfo, IoScheduler, RqId};
use crate::types::Time;

const READ: usize = 0;
const WRITE: usize = 1;
/// Domains: READ, WRITE, DISCARD, OTHER.
const DOMAINS: usize = 4;
/// Domains with latency targets (all but OTHER).
const TIMED_DOMAINS: usize = 3;

/// `kyber_depth`: each domain's token count at the start, and its most.
pub const START_DEPTH: [u32; DOMAINS] = [256, 128, 64, 16];
/// `kyber_batch_size`.
const BATCH_SIZE: [u32; DOMAINS] = [16, 8, 1, 1];
/// `kyber_latency_targets`, ns.
const LATENCY_TARGETS: [u64; TIMED_DOMAINS] = [2_000_000, 10_000_000, 5_000_000_000];
/// `KYBER_LATENCY_SHIFT`: buckets are a quarter of the target wide.
const LATENCY_SHIFT: u32 = 2;
/// `KYBER_GOOD_BUCKETS`: the buckets within the target.
const GOOD_BUCKETS: i32 = 1 << LATENCY_SHIFT;
/// `KYBER_LATENCY_BUCKETS`.
const BUCKETS: usize = 2 << LATENCY_SHIFT;
const TOTAL_LATENCY: usize = 0;
const IO_LATENCY: usize = 1;
/// The timer's period, `HZ / 10`.
const TIMER_PERIOD_NS: Time = 100_000_000;
/// `calculate_percentile` waits for this many samples, or
const MIN_SAMPLES: u32 = 500;
/// this long after its first look at a domain (`HZ`).
const SAMPLE_TIMEOUT_NS: Time = 1_000_000_000;

/// Kyber's state for one device (`kyber_queue_data` with its one `kyber_hctx_data`).
#[derive(Clone, Debug)]
pub struct Kyber {
    /// Requests without a token yet, per domain, in arrival order.
    waiting: [VecDeque<RqId>; DOMAINS],
    /// Each domain's token count (`domain_tokens[].sb.depth`).
    depth: [u32; DOMAINS],
    /// Tokens held by requests on the device.
    held: [u32; DOMAINS],
    cur_domain: usize,
    batching: u32,
    latency_targets: [u64; TIMED_DOMAINS],
    /// `latency_buckets[domain][type][bucket]`.
    buckets: [[[u32; BUCKETS]; 2]; TIMED_DOMAINS],
    /// `latency_timeout`: when a percentile is computed even with few samples.
    latency_timeout: [Option<Time>; TIMED_DOMAINS],
    /// `domain_p99`: the p99 bucket kept for the next congested period, or -1.
    domain_p99: [i32; TIMED_DOMAINS],
    /// When the pending timer fires.
    timer_at: Option<Time>,
}

impl Default for Kyber {
    /// `kyber_queue_data_alloc`.
    fn default() -> Self {
        Kyber {
            waiting: Default::default(),
            depth: START_DEPTH,
            held: [0; DOMAINS],
            cur_domain: READ,
            batching: 0,
            latency_targets: LATENCY_TARGETS,
            buckets: [[[0; BUCKETS]; 2]; TIMED_DOMAINS],
            latency_timeout: [None; TIMED_DOMAINS],
            domain_p99: [-1; TIMED_DOMAINS],
            timer_at: None,
        }
    }
}

/// `kyber_sched_domain`: requests are reads or writes here.
fn domain(op: IoOp) -> usize {
    match op {
        IoOp::Read => READ,
        IoOp::Write => WRITE,
    }
}

/// `add_latency_sample`'s bucket for `latency` against `target`.
fn latency_bucket(target: u64, latency: u64) -> usize {
    if latency == 0 {
        return 0;
    }
    let width = (target >> LATENCY_SHIFT).max(1);
    (((latency - 1) / width) as usize).min(BUCKETS - 1)
}

impl Kyber {
    /// `kyber_dispatch_cur_domain`: the next request of the current domain, if it has one
    /// and a token is free.
    fn dispatch_cur_domain(&mut self) -> Option<RqId> {
        let d = self.cur_domain;
        if self.waiting[d].is_empty() || self.held[d] >= self.depth[d] {
            return None;
        }
        self.held[d] += 1;
        self.batching += 1;
        self.waiting[d].pop_front()
    }

    /// `calculate_percentile`: the bucket holding the `percentile`-th sample of a domain's
    /// histogram, or -1 while samples are too few; computing it empties the histogram.
    fn percentile(&mut self, d: usize, ty: usize, percentile: u32, now: Time) -> i32 {
        let buckets = &mut self.buckets[d][ty];
        let samples: u32 = buckets.iter().sum();
        if samples == 0 {
            return -1;
        }
        let timeout = *self.latency_timeout[d].get_or_insert(now + SAMPLE_TIMEOUT_NS);
        if samples < MIN_SAMPLES && now < timeout {
            return -1;
        }
        self.latency_timeout[d] = None;
        let mut rank = (samples * percentile).div_ceil(100);
        let mut bucket = 0;
        while bucket < BUCKETS - 1 {
            if buckets[bucket] >= rank {
                break;
            }
            rank -= buckets[bucket];
            bucket += 1;
        }
        *buckets = [0; BUCKETS];
        bucket as i32
    }

    /// `kyber_resize_domain`.
    fn resize_domain(&mut self, d: usize, depth: u32) {
        self.depth[d] = depth.clamp(1, START_DEPTH[d]);
    }

    /// `kyber_timer_fn`.
    fn adjust_depths(&mut self, now: Time) {
        // Congestion: some domain's p90 I/O latency is past its target.
        let mut bad = false;
        for d in 0..TIMED_DOMAINS {
            if self.percentile(d, IO_LATENCY, 90, now) >= GOOD_BUCKETS {
                bad = true;
            }
        }
        for d in 0..TIMED_DOMAINS {
            let mut p99 = self.percentile(d, TOTAL_LATENCY, 99, now);
            // A domain without enough samples in this window uses the p99 it had when it
            // last had them, once, when there is congestion.
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = -1;
            } else if p99 >= 0 {
                self.domain_p99[d] = p99;
            }
            if p99 < 0 {
                continue;
            }
            if bad || p99 >= GOOD_BUCKETS {
                let depth = (self.depth[d] * (p99 as u32 + 1)) >> LATENCY_SHIFT;
                self.resize_domain(d, depth);
            }
        }
    }
}

impl IoScheduler for Kyber {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "kyber",
            summary: "per-domain (read, write, discard, other) token limits on the device \
                      queue, resized every 100 ms from latency histograms against targets",
            source: "block/kyber-iosched.c (Linux 6.1): kyber_dispatch_request, \
                     kyber_completed_request, kyber_timer_fn",
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let d = match name {
            "read_lat_nsec" => READ,
            "write_lat_nsec" => WRITE,
            _ => {
                return Err(format!(
                    "unknown parameter '{name}' (kyber has read_lat_nsec, write_lat_nsec)"
                ))
            }
        };
        self.latency_targets[d] = value
            .trim()
            .parse()
            .map_err(|_| format!("'{value}' is not a non-negative integer (ns)"))?;
        Ok(())
    }

    /// `kyber_insert_requests`.
    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        let d = domain(io.request(rq).op);
        self.waiting[d].push_back(rq);
    }

    /// `kyber_has_work`.
    fn has_work(&self, _io: &IoCtx) -> bool {
        self.waiting.iter().any(|w| !w.is_empty())
    }

    /// `kyber_dispatch_request`.
    fn dispatch(&mut self, _io: &mut IoCtx) -> Option<RqId> {
        if self.batching < BATCH_SIZE[self.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain() {
                return Some(rq);
            }
        }
        // Start another batch with the next domain that has requests and tokens, back
        // round to this one if no other has.
        self.batching = 0;
        for _ in 0..DOMAINS {
            self.cur_domain = (self.cur_domain + 1) % DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain() {
                return Some(rq);
            }
        }
        None
    }

    /// `kyber_completed_request` and `kyber_finish_request`.
    fn completed(&mut self, io: &mut IoCtx, rq: RqId) {
        let r = io.request(rq);
        let now = io.now();
        let d = domain(r.op);
        self.held[d] -= 1;
        let target = self.latency_targets[d];
        let issued = r.issued.expect("a completed request was issued");
        self.buckets[d][TOTAL_LATENCY][latency_bucket(target, now - r.submitted)] += 1;
        self.buckets[d][IO_LATENCY][latency_bucket(target, now - issued)] += 1;
        if self.timer_at.is_none() {
            let at = now + TIMER_PERIOD_NS;
            self.timer_at = Some(at);
            io.arm_timer(at, 0);
        }
    }

    fn timer(&mut self, io: &mut IoCtx, _token: u64) {
        self.timer_at = None;
        self.adjust_depths(io.now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_quarters_of_the_target() {
        let target = 2_000_000;
        assert_eq!(latency_bucket(target, 0), 0);
        assert_eq!(latency_bucket(target, 500_000), 0);
        assert_eq!(latency_bucket(target, 500_001), 1);
        assert_eq!(latency_bucket(target, 2_000_000), 3);
        assert_eq!(latency_bucket(target, 3_000_000), 5);
        assert_eq!(latency_bucket(target, 1_000_000_000), BUCKETS - 1);
    }
}

//! The host runner's block I/O against fio on one loop device (`schedlab_host::fio_check`):
//! a `schedlab gen fio` job and fio with the same rw, bs, iodepth and direct=1, five pairs
//! of runs back to back, alternating which goes first, caches dropped before each; the
//! median over the pairs of host / fio must lie within the tolerances below. Skipped (with
//! the reason) when not root, without loop devices or without fio.

use std::sync::Mutex;

use schedlab_host::fio_check::{compare, CheckError, FioCase, Measured};

/// One comparison at a time: they share the restore journal.
static SERIAL: Mutex<()> = Mutex::new(());

fn check(case: FioCase) -> Option<Measured> {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var(
        "SCHEDLAB_JOURNAL",
        std::env::temp_dir().join(format!("schedlab-fio-check-{}.jsonl", std::process::id())),
    );
    match compare(&case, PAIRS) {
        Ok(c) => {
            eprintln!("{}", c.to_json());
            Some(c.median_ratio())
        }
        Err(CheckError::Skipped(why)) => {
            eprintln!("fio cross-check not run: {why}");
            None
        }
        Err(CheckError::Failed(m)) => panic!("{m}"),
    }
}

/// A ratio within [1/f, f].
fn within(what: &str, r: f64, f: f64) {
    assert!(
        (1.0 / f..=f).contains(&r),
        "{what}: host / fio = {r:.2} (median over the pairs), allowed 1/{f}..{f}"
    );
}

// The tolerances. The same calls reach the same device, so a difference beyond the
// machine's noise is the runner's. The noise, measured on this kind of machine (a 2-vCPU
// VM shared with compilers, load ~10, whose virtual disk the host caches): five fio runs
// of the random case at SCHED_FIFO 50, as the check runs them, spread by 1.34x in IOPS
// (21.0k..28.1k), 1.27x in clat p50 and 3.2x in p99 (0.94..3.0 ms: the VM's hiccups fall
// in the tail). A pair's ratio can carry both tools' spread at once (1.34² ≈ 1.8); the
// median of five pairs keeps the two worst pairs out: within 1.8 for IOPS and p50, and 3
// for p99, which one run's hiccups decide.
const IOPS: f64 = 1.8;
/// Pairs of runs per comparison.
const PAIRS: usize = 5;
const P50: f64 = 1.8;
const P99: f64 = 3.0;

#[test]
fn random_4k_reads_at_depth_4_match_fio() {
    let case = FioCase {
        rw: "randread".into(),
        bs: 4096,
        iodepth: 4,
        size: 32 << 20,
        scheduler: "none".into(),
    };
    if let Some(r) = check(case) {
        within("IOPS", r.iops, IOPS);
        within("clat p50", r.clat_p50_ns, P50);
        within("clat p99", r.clat_p99_ns, P99);
    }
}

#[test]
fn sequential_128k_reads_at_depth_16_match_fio() {
    let case = FioCase {
        rw: "read".into(),
        bs: 128 << 10,
        iodepth: 16,
        size: 64 << 20,
        scheduler: "mq-deadline".into(),
    };
    if let Some(r) = check(case) {
        within("IOPS", r.iops, IOPS);
        within("clat p50", r.clat_p50_ns, P50);
        within("clat p99", r.clat_p99_ns, P99);
    }
}

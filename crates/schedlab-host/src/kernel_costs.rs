//! Probes of the host kernel's own paths, for the simulator's kernel spans
//! (`machine.sleep_ns`, `fork_ns`, `exit_ns`, `wakeup_ns`) and its timer model
//! (`machine.kernel.timer_irq_ns`):
//!
//! - **sleep set-up**: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to an expiry already
//!   past: the syscall path of a sleep without the wait. `do_nanosleep`
//!   (kernel/time/hrtimer.c) arms the sleeper's hrtimer as for any sleep; an expired timer
//!   makes `hrtimer_reprogram` program the clock event device at its minimum delta, and the
//!   caller calls `schedule()` unless the timer has already woken it. Whether it blocked is
//!   counted (voluntary context switches per call), so a reader can tell a set-up cost from
//!   one that includes a block, a timer interrupt and a wake-up.
//! - **futex wake**: `FUTEX_WAKE_PRIVATE` on a word nobody waits on: the syscall path of a
//!   wake-up that finds no one to wake.
//! - **fork + exit + wait**: `fork(2)`, the child `_exit(0)`s at once, the parent
//!   `waitpid(2)`s; both pinned to the caller's CPU, so the path is serial: the fork, the
//!   parent blocking, a switch to the child, its exit waking the parent, a switch back.
//! - **timer latency**: a thread sleeping to an absolute `CLOCK_MONOTONIC` expiry every
//!   `interval_ns` (cyclictest's loop, rt-tests 2.4: `clock_nanosleep(TIMER_ABSTIME)`,
//!   `next += interval`) measures wake-up time − expiry, at SCHED_FIFO when the kernel
//!   allows it, else at SCHED_OTHER (whose sleeps carry the thread's timer slack).
//!
//! The syscall probes report medians over repetitions (the lab machines are shared VMs);
//! the calling thread's CPU affinity is saved before pinning and always restored. The timer
//! probe runs on a thread of its own, unpinned as cyclictest is without `-a`, and reports
//! the distribution of its samples.

use crate::clock;
use crate::policy;
use crate::probe::{current_cpu, median, Pinned};
use std::io;
use std::time::Instant;

/// What [`syscall_costs`] measured (nanoseconds per operation, medians over `reps`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyscallCosts {
    /// One `clock_nanosleep(TIMER_ABSTIME)` to an expiry already past.
    pub sleep_setup_ns: f64,
    /// Voluntary context switches per such call (median): about 1 where the kernel
    /// programs the expired timer to fire at once and the caller blocks until it does, so
    /// that `sleep_setup_ns` includes a block, a timer interrupt and a wake-up; about 0
    /// where the call returns without blocking.
    pub sleep_blocks_per_call: f64,
    /// One `FUTEX_WAKE_PRIVATE` with no waiter.
    pub futex_wake_ns: f64,
    /// One fork, the child's exit and the parent's wait, on one CPU.
    pub fork_exit_wait_ns: f64,
    /// The CPU the probes were pinned to.
    pub cpu: usize,
    /// Calls per repetition of the sleep and futex probes.
    pub calls: u32,
    /// Forks per repetition.
    pub forks: u32,
    pub reps: u32,
}

/// Measure [`SyscallCosts`]: `calls` sleeps and futex wakes and `forks` forks per
/// repetition, `reps` repetitions, pinned to the CPU the caller runs on.
pub fn syscall_costs(calls: u32, forks: u32, reps: u32) -> io::Result<SyscallCosts> {
    if calls == 0 || forks == 0 || reps == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "syscall_costs: calls, forks and reps must be > 0",
        ));
    }
    let cpu = current_cpu()?;
    let _pin = Pinned::to(cpu)?;
    let mut sleeps = Vec::with_capacity(reps as usize);
    let mut blocks = Vec::with_capacity(reps as usize);
    let mut wakes = Vec::with_capacity(reps as usize);
    let mut spawns = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        let switches = voluntary_switches()?;
        sleeps.push(past_sleeps(calls)? / calls as f64);
        blocks.push((voluntary_switches()? - switches) as f64 / calls as f64);
        wakes.push(futex_wakes(calls)? / calls as f64);
        spawns.push(fork_exit_waits(forks)? / forks as f64);
    }
    Ok(SyscallCosts {
        sleep_setup_ns: median(&mut sleeps),
        sleep_blocks_per_call: median(&mut blocks),
        futex_wake_ns: median(&mut wakes),
        fork_exit_wait_ns: median(&mut spawns),
        cpu,
        calls,
        forks,
        reps,
    })
}

fn monotonic_ns() -> io::Result<i64> {
    Ok(clock::monotonic() as i64)
}

fn sleep_until(ns: i64) -> io::Result<()> {
    clock::sleep_until_abs(ns.max(0) as u64)
}

/// The calling thread's voluntary context switches so far (`RUSAGE_THREAD`).
fn voluntary_switches() -> io::Result<i64> {
    // SAFETY: rusage is plain data, written by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage to write to.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ru.ru_nvcsw)
}

/// ns for `calls` absolute sleeps to an expiry one second in the past.
fn past_sleeps(calls: u32) -> io::Result<f64> {
    let past = (monotonic_ns()? - 1_000_000_000).max(0);
    let t = Instant::now();
    for _ in 0..calls {
        sleep_until(past)?;
    }
    Ok(t.elapsed().as_nanos() as f64)
}

/// ns for `calls` FUTEX_WAKE_PRIVATE on a word with no waiter.
fn futex_wakes(calls: u32) -> io::Result<f64> {
    let word: u32 = 0;
    let t = Instant::now();
    for _ in 0..calls {
        // SAFETY: the futex word is a live, aligned u32; FUTEX_WAKE reads no other argument.
        let woken = unsafe {
            libc::syscall(
                libc::SYS_futex,
                &word as *const u32,
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
            )
        };
        if woken < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(t.elapsed().as_nanos() as f64)
}

/// ns for `forks` × (fork, the child exits, the parent reaps it).
fn fork_exit_waits(forks: u32) -> io::Result<f64> {
    let t = Instant::now();
    for _ in 0..forks {
        // SAFETY: the child calls only _exit, which is async-signal-safe.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: leave the child at once, without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: reaps the child forked above.
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            return Err(io::Error::last_os_error());
        }
        if status != 0 {
            return Err(io::Error::other("syscall_costs: a forked child failed"));
        }
    }
    Ok(t.elapsed().as_nanos() as f64)
}

/// The scheduling policy the timer probe's thread ran at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerPolicy {
    /// SCHED_FIFO at the given priority.
    Fifo(u8),
    /// SCHED_OTHER at nice 0 (SCHED_FIFO was refused).
    Other,
}

/// What [`timer_latency`] measured: wake-up time − programmed expiry (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct TimerLatency {
    pub min_ns: i64,
    /// Nearest-rank percentiles, as the simulator's stats give them.
    pub p50_ns: i64,
    pub p99_ns: i64,
    pub max_ns: i64,
    pub samples: u32,
    pub interval_ns: u64,
    pub policy: TimerPolicy,
    /// Why SCHED_FIFO was not used (empty when it was).
    pub fifo_refused: String,
}

/// Measure the host's timer wake-up latency: one thread sleeps to an absolute expiry every
/// `interval_ns` (10 µs..=1 s) `samples` times, at SCHED_FIFO `priority` (1..=99) if the
/// kernel allows it, else at SCHED_OTHER.
pub fn timer_latency(interval_ns: u64, samples: u32, priority: u8) -> io::Result<TimerLatency> {
    if !(10_000..=1_000_000_000).contains(&interval_ns)
        || samples == 0
        || !(1..=99).contains(&priority)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "timer_latency: interval_ns must be 10000..=1000000000, samples > 0, priority 1..=99",
        ));
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let (policy, fifo_refused) = match set_fifo(priority) {
                Ok(()) => (TimerPolicy::Fifo(priority), String::new()),
                Err(e) => (TimerPolicy::Other, e.to_string()),
            };
            let mut lat = cyclic_sleeps(interval_ns as i64, samples)?;
            lat.sort_unstable();
            Ok(TimerLatency {
                min_ns: lat[0],
                p50_ns: nearest_rank(&lat, 50.0),
                p99_ns: nearest_rank(&lat, 99.0),
                max_ns: lat[lat.len() - 1],
                samples,
                interval_ns,
                policy,
                fifo_refused,
            })
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("timer_latency: the probe thread panicked")))
    })
}

/// Make the calling thread SCHED_FIFO at `priority` (it is a thread of its own: the
/// policy ends with it).
fn set_fifo(priority: u8) -> io::Result<()> {
    let mut attr = policy::SchedAttr::new(policy::SCHED_FIFO);
    attr.priority = priority as u32;
    policy::set(0, &attr)
}

/// `samples` latencies (ns) of absolute sleeps on an `interval` grid starting one interval
/// from now.
fn cyclic_sleeps(interval: i64, samples: u32) -> io::Result<Vec<i64>> {
    let mut lat = Vec::with_capacity(samples as usize);
    let mut next = monotonic_ns()? + interval;
    for _ in 0..samples {
        sleep_until(next)?;
        let now = monotonic_ns()?;
        lat.push(now - next);
        next += interval;
        // After an overrun (a wake-up later than the next expiry) the next expiry is the
        // first one still in the future, as in cyclictest's loop.
        while next <= now {
            next += interval;
        }
    }
    Ok(lat)
}

/// Nearest-rank percentile of sorted `v`: the smallest value with at least p % of the
/// samples at or below it.
fn nearest_rank(v: &[i64], p: f64) -> i64 {
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 50.0), 50);
        assert_eq!(nearest_rank(&v, 99.0), 99);
        assert_eq!(nearest_rank(&[7], 99.0), 7);
    }

    /// The probes run, give positive figures and leave the caller's affinity as it was.
    /// (No bound on the values: they are timings of a shared machine.)
    #[test]
    fn syscall_probes_measure_and_restore_affinity() {
        let before = crate::probe::tests::affinity();
        let c = syscall_costs(200, 5, 3).unwrap();
        assert!(c.sleep_setup_ns > 0.0 && c.futex_wake_ns > 0.0 && c.fork_exit_wait_ns > 0.0);
        assert_eq!((c.calls, c.forks, c.reps), (200, 5, 3));
        assert_eq!(crate::probe::tests::affinity(), before);
    }

    #[test]
    fn timer_probe_orders_its_statistics() {
        let t = timer_latency(100_000, 20, 80).unwrap();
        assert!(t.min_ns >= 0, "a sleep never ends before its expiry: {t:?}");
        assert!(t.min_ns <= t.p50_ns && t.p50_ns <= t.p99_ns && t.p99_ns <= t.max_ns);
        assert_eq!((t.samples, t.interval_ns), (20, 100_000));
        match t.policy {
            TimerPolicy::Fifo(p) => assert!(p == 80 && t.fifo_refused.is_empty()),
            TimerPolicy::Other => assert!(!t.fifo_refused.is_empty()),
        }
    }

    #[test]
    fn rejects_bad_arguments() {
        for (c, f, r) in [(0, 1, 1), (1, 0, 1), (1, 1, 0)] {
            let e = syscall_costs(c, f, r).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        for (i, n, p) in [
            (9_999, 1, 80),
            (1_000_000, 0, 80),
            (1_000_000, 1, 0),
            (1_000_000, 1, 100),
        ] {
            let e = timer_latency(i, n, p).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
    }
}

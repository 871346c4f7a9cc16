//! The host's clocks, for the probes and the runner: CLOCK_MONOTONIC in nanoseconds
//! (absolute, or counted from a run's start `t0`), sleeps to absolute expiries as
//! cyclictest sleeps (`clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`), and the calling
//! thread's CPU time.

use std::io;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the kernel fills the timespec on this frame.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Absolute CLOCK_MONOTONIC now.
pub fn monotonic() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// Now on the run's clock.
pub fn now(t0: u64) -> u64 {
    monotonic().saturating_sub(t0)
}

/// The calling thread's CPU time.
pub fn thread_cpu() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn timespec(abs_ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (abs_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (abs_ns % 1_000_000_000) as libc::c_long,
    }
}

/// The CLOCK_MONOTONIC timespec of run time `at`.
pub fn timespec_at(at: u64, t0: u64) -> libc::timespec {
    timespec(t0 + at)
}

/// The CLOCK_REALTIME timespec of run time `at` (for `pthread_mutex_timedlock`, which
/// takes no other clock).
pub fn abs_timespec_realtime(at: u64, t0: u64) -> libc::timespec {
    let left = (t0 + at).saturating_sub(monotonic());
    timespec(read(libc::CLOCK_REALTIME) + left)
}

/// Sleep until run time `at` (an absolute expiry), resuming after signals.
pub fn sleep_until(at: u64, t0: u64) {
    // An absolute CLOCK_MONOTONIC sleep fails only for a bad timespec, which this is not.
    let _ = sleep_until_abs(t0 + at);
}

/// Sleep until the absolute CLOCK_MONOTONIC time `abs_ns`, resuming after signals.
pub fn sleep_until_abs(abs_ns: u64) -> io::Result<()> {
    let ts = timespec(abs_ns);
    loop {
        // SAFETY: the timespec lives on this frame; no remainder is asked for.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        match rc {
            0 => return Ok(()),
            libc::EINTR => continue,
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

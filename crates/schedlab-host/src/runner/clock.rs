//! The run's clock: CLOCK_MONOTONIC in nanoseconds, counted from the run's start (`t0`,
//! an absolute CLOCK_MONOTONIC time), as cyclictest measures; sleeps to absolute expiries
//! (`clock_nanosleep(TIMER_ABSTIME)`); the calling thread's CPU time.

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

/// Sleep until run time `at` (an absolute expiry, as cyclictest sleeps), resuming after
/// signals.
pub fn sleep_until(at: u64, t0: u64) {
    let ts = timespec_at(at, t0);
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
        if rc != libc::EINTR {
            return;
        }
    }
}

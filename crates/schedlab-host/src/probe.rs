//! Probes of the host's costs, measured the way `perf bench sched pipe` and hackbench
//! exercise them: two processes bouncing a message over two pipes (or two AF_UNIX stream
//! socketpairs, hackbench's default) on one CPU.
//!
//! - **call**: one `write(2)` or `read(2)` of `bytes` on the channel when nobody has to wait:
//!   one process writes and reads back its own message (no block, no wake-up, no switch).
//! - **hop**: what a message costs beyond its two calls when the reader is asleep: the
//!   reader blocks, the writer wakes it (try_to_wake_up), the CPU switches to it. Two
//!   processes pinned to the same CPU bounce a message (`perf bench sched pipe`'s loop), so
//!   a round trip is 2 writes + 2 reads + 2 hops, and `hop = (round trip − 4 calls) / 2`.
//!
//! Medians over repetitions, because the lab machines are shared VMs. The calling thread's
//! CPU affinity is saved before pinning and always restored.

use std::io;
use std::time::Instant;

/// The channel a probe bounces its messages over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// `pipe(2)`.
    Pipe,
    /// One direction of an AF_UNIX `SOCK_STREAM` `socketpair(2)`.
    UnixStream,
}

/// What [`channel_costs`] measured (nanoseconds, medians over `reps`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelCosts {
    pub kind: ChannelKind,
    /// One uncontended `write` or `read` of `bytes`.
    pub call_ns: f64,
    /// Block + wake-up + context switch, per message handed to a sleeping reader.
    pub hop_ns: f64,
    /// A full ping-pong round trip.
    pub round_trip_ns: f64,
    /// The CPU both processes were pinned to.
    pub cpu: usize,
    pub bytes: usize,
    pub messages: u32,
    pub reps: u32,
}

/// Measure [`ChannelCosts`] on `kind` with `messages` messages of `bytes` (1..=4096) per
/// repetition, `reps` repetitions, both processes pinned to the CPU the caller runs on.
pub fn channel_costs(
    kind: ChannelKind,
    messages: u32,
    bytes: usize,
    reps: u32,
) -> io::Result<ChannelCosts> {
    if !(1..=4096).contains(&bytes) || messages == 0 || reps == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "channel_costs: bytes must be 1..=4096, messages and reps > 0",
        ));
    }
    let cpu = current_cpu()?;
    let _pin = Pinned::to(cpu)?;
    let mut calls = Vec::with_capacity(reps as usize);
    let mut trips = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        calls.push(self_loop(kind, messages, bytes)? / (2.0 * messages as f64));
        trips.push(ping_pong(kind, messages, bytes)? / messages as f64);
    }
    let call_ns = median(&mut calls);
    let round_trip_ns = median(&mut trips);
    Ok(ChannelCosts {
        kind,
        call_ns,
        hop_ns: ((round_trip_ns - 4.0 * call_ns) / 2.0).max(0.0),
        round_trip_ns,
        cpu,
        bytes,
        messages,
        reps,
    })
}

pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub(crate) fn current_cpu() -> io::Result<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a value.
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(c as usize)
}

/// The calling thread pinned to one CPU; its previous affinity comes back on drop.
pub(crate) struct Pinned {
    saved: libc::cpu_set_t,
}

impl Pinned {
    pub(crate) fn to(cpu: usize) -> io::Result<Pinned> {
        // SAFETY: cpu_set_t is plain data; the calls get valid pointers and its size.
        unsafe {
            let mut saved: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut saved) != 0 {
                return Err(io::Error::last_os_error());
            }
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, size, &one) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Pinned { saved })
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: restores the mask read in `to`.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.saved);
        }
    }
}

/// One direction of a channel (a pipe, or a socketpair used one way, as hackbench uses
/// each receiver's); both descriptors are closed on drop.
struct Link {
    rd: libc::c_int,
    wr: libc::c_int,
}

impl Link {
    fn new(kind: ChannelKind) -> io::Result<Link> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors pipe(2)/socketpair(2) write.
        let rc = unsafe {
            match kind {
                ChannelKind::Pipe => libc::pipe(fds.as_mut_ptr()),
                ChannelKind::UnixStream => {
                    libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
                }
            }
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Link {
            rd: fds[0],
            wr: fds[1],
        })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // SAFETY: both descriptors are owned by this value.
        unsafe {
            libc::close(self.rd);
            libc::close(self.wr);
        }
    }
}

/// Write all of `buf` (a pipe write of ≤ PIPE_BUF bytes is atomic, so one call).
fn write_all(fd: libc::c_int, buf: &[u8]) -> io::Result<()> {
    // SAFETY: buf is a valid slice for its length.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n as usize != buf.len() {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn read_exact(fd: libc::c_int, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the destination is the unread tail of buf.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n <= 0 {
            return Err(io::Error::last_os_error());
        }
        got += n as usize;
    }
    Ok(())
}

/// ns for `messages` × (write + read back) in one process.
fn self_loop(kind: ChannelKind, messages: u32, bytes: usize) -> io::Result<f64> {
    let p = Link::new(kind)?;
    let mut buf = vec![0u8; bytes];
    let t = Instant::now();
    for _ in 0..messages {
        write_all(p.wr, &buf)?;
        read_exact(p.rd, &mut buf)?;
    }
    Ok(t.elapsed().as_nanos() as f64)
}

/// ns for `messages` round trips between this process and a forked child on one CPU.
fn ping_pong(kind: ChannelKind, messages: u32, bytes: usize) -> io::Result<f64> {
    let there = Link::new(kind)?;
    let back = Link::new(kind)?;
    let mut buf = vec![0u8; bytes];
    // SAFETY: the child only makes async-signal-safe calls (read, write, _exit) on
    // memory allocated before the fork, then exits without unwinding.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let mut ok = true;
        for _ in 0..messages {
            ok = ok && read_exact(there.rd, &mut buf).is_ok() && write_all(back.wr, &buf).is_ok();
        }
        // SAFETY: leave the child at once, without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let t = Instant::now();
    let mut res = Ok(());
    for _ in 0..messages {
        res = write_all(there.wr, &buf).and_then(|_| read_exact(back.rd, &mut buf));
        if res.is_err() {
            break;
        }
    }
    let elapsed = t.elapsed().as_nanos() as f64;
    drop(there);
    let mut status = 0;
    // SAFETY: reaps the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    res?;
    if status != 0 {
        return Err(io::Error::other(
            "channel_costs: the ping-pong child failed",
        ));
    }
    Ok(elapsed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    /// The probe runs, gives positive figures and a round trip that contains its four
    /// calls, and leaves the caller's affinity as it was. (No bound on the values: they
    /// are timings of a shared machine.)
    #[test]
    fn measures_and_restores_affinity() {
        let before = affinity();
        for kind in [ChannelKind::Pipe, ChannelKind::UnixStream] {
            let c = channel_costs(kind, 200, 100, 3).unwrap();
            assert!(c.call_ns > 0.0 && c.round_trip_ns > 0.0, "{c:?}");
            assert!(c.hop_ns >= 0.0);
            assert_eq!((c.kind, c.bytes, c.messages, c.reps), (kind, 100, 200, 3));
            assert_eq!(affinity(), before);
        }
    }

    #[test]
    fn rejects_bad_arguments() {
        for (m, b, r) in [(0, 100, 1), (10, 0, 1), (10, 5000, 1), (10, 100, 0)] {
            let e = channel_costs(ChannelKind::Pipe, m, b, r).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
    }

    /// The calling thread's CPU affinity (the probes' tests check it is restored).
    pub(crate) fn affinity() -> Vec<usize> {
        // SAFETY: reads the calling thread's mask into a zeroed cpu_set_t.
        unsafe {
            let mut s: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut s);
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &s))
                .collect()
        }
    }
}

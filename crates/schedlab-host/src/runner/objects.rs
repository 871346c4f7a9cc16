//! The spec's shared objects as real kernel objects: error-checking pthread mutexes,
//! condition variables on CLOCK_MONOTONIC, barriers, pipes and socket pairs, periodic
//! timers. Each object also keeps the time of the last action that can wake a waiter
//! (an unlock, a signal, the last arrival, a write, a read), which a woken thread takes as
//! its activation's release: the kernel does not say when it made a thread runnable.

use std::cell::UnsafeCell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use schedlab_spec::model::{ChannelKind, Spec};

use crate::clock::{abs_timespec_realtime, timespec_at};

/// How a wait that may block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// Woken (or did not need to wait).
    Done,
    /// The run's end came first.
    Stopped,
}

fn check(rc: libc::c_int, what: &str) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::new(
            io::Error::from_raw_os_error(rc).kind(),
            format!("{what}: {}", io::Error::from_raw_os_error(rc)),
        ))
    }
}

/// An error-checking pthread mutex (rt-app's are default mutexes; schedlab's spec rules
/// are those of error-checking ones, and validation already refused misuse).
pub struct PMutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
    /// When it was last unlocked (ns on the run's clock).
    pub last_unlock: AtomicU64,
}

// SAFETY: a pthread mutex is made to be shared between threads; it never moves (boxed).
unsafe impl Sync for PMutex {}
unsafe impl Send for PMutex {}

impl PMutex {
    pub fn new() -> io::Result<Self> {
        let raw = Box::new(UnsafeCell::new(unsafe { std::mem::zeroed() }));
        // SAFETY: the attribute lives on this frame; the mutex is boxed and never moves.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            check(
                libc::pthread_mutexattr_init(&mut attr),
                "pthread_mutexattr_init",
            )?;
            check(
                libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_ERRORCHECK),
                "pthread_mutexattr_settype",
            )?;
            check(
                libc::pthread_mutex_init(raw.get(), &attr),
                "pthread_mutex_init",
            )?;
            libc::pthread_mutexattr_destroy(&mut attr);
        }
        Ok(Self {
            raw,
            last_unlock: AtomicU64::new(0),
        })
    }

    fn ptr(&self) -> *mut libc::pthread_mutex_t {
        self.raw.get()
    }

    /// Take it without waiting, if free.
    pub fn try_lock(&self) -> bool {
        // SAFETY: an initialised mutex.
        unsafe { libc::pthread_mutex_trylock(self.ptr()) == 0 }
    }

    /// Take it, waiting at most until `end` (ns on the run's clock).
    pub fn lock_until(&self, end: Option<u64>, t0: u64) -> io::Result<Waited> {
        // SAFETY: an initialised mutex; the timespec lives on this frame.
        let rc = match end {
            None => unsafe { libc::pthread_mutex_lock(self.ptr()) },
            Some(end) => {
                let ts = abs_timespec_realtime(end, t0);
                unsafe { libc::pthread_mutex_timedlock(self.ptr(), &ts) }
            }
        };
        match rc {
            0 => Ok(Waited::Done),
            libc::ETIMEDOUT => Ok(Waited::Stopped),
            e => check(e, "pthread_mutex_lock").map(|_| Waited::Done),
        }
    }

    pub fn unlock(&self, now: u64) -> io::Result<()> {
        self.last_unlock.store(now, Ordering::Release);
        // SAFETY: an initialised mutex this thread holds (validation checked the spec).
        check(
            unsafe { libc::pthread_mutex_unlock(self.ptr()) },
            "pthread_mutex_unlock",
        )
    }
}

impl Drop for PMutex {
    fn drop(&mut self) {
        // SAFETY: no thread uses it any more (the run joined them all).
        unsafe { libc::pthread_mutex_destroy(self.ptr()) };
    }
}

/// A condition variable whose timed waits run on CLOCK_MONOTONIC.
pub struct PCond {
    raw: Box<UnsafeCell<libc::pthread_cond_t>>,
    /// When it was last signalled or broadcast.
    pub last_signal: AtomicU64,
}

// SAFETY: as for PMutex.
unsafe impl Sync for PCond {}
unsafe impl Send for PCond {}

impl PCond {
    pub fn new() -> io::Result<Self> {
        let raw = Box::new(UnsafeCell::new(unsafe { std::mem::zeroed() }));
        // SAFETY: as for PMutex::new.
        unsafe {
            let mut attr: libc::pthread_condattr_t = std::mem::zeroed();
            check(
                libc::pthread_condattr_init(&mut attr),
                "pthread_condattr_init",
            )?;
            check(
                libc::pthread_condattr_setclock(&mut attr, libc::CLOCK_MONOTONIC),
                "pthread_condattr_setclock",
            )?;
            check(
                libc::pthread_cond_init(raw.get(), &attr),
                "pthread_cond_init",
            )?;
            libc::pthread_condattr_destroy(&mut attr);
        }
        Ok(Self {
            raw,
            last_signal: AtomicU64::new(0),
        })
    }

    /// Wait on it with `m` held, at most until `end`.
    pub fn wait_until(&self, m: &PMutex, end: Option<u64>, t0: u64) -> io::Result<Waited> {
        // SAFETY: initialised objects; `m` is held by this thread.
        let rc = match end {
            None => unsafe { libc::pthread_cond_wait(self.raw.get(), m.ptr()) },
            Some(end) => {
                let ts = timespec_at(end, t0);
                unsafe { libc::pthread_cond_timedwait(self.raw.get(), m.ptr(), &ts) }
            }
        };
        match rc {
            0 => Ok(Waited::Done),
            libc::ETIMEDOUT => Ok(Waited::Stopped),
            e => check(e, "pthread_cond_wait").map(|_| Waited::Done),
        }
    }

    pub fn signal(&self, now: u64) {
        self.last_signal.store(now, Ordering::Release);
        // SAFETY: an initialised condition variable.
        unsafe { libc::pthread_cond_signal(self.raw.get()) };
    }

    pub fn broadcast(&self, now: u64) {
        self.last_signal.store(now, Ordering::Release);
        // SAFETY: an initialised condition variable.
        unsafe { libc::pthread_cond_broadcast(self.raw.get()) };
    }
}

impl Drop for PCond {
    fn drop(&mut self) {
        // SAFETY: no thread waits on it any more.
        unsafe { libc::pthread_cond_destroy(self.raw.get()) };
    }
}

/// A barrier of `parties` arrivals (a mutex, a condition and a generation count, so that
/// a wait can end at the run's end, which `pthread_barrier_wait` cannot).
pub struct PBarrier {
    parties: u32,
    state: PMutex,
    cond: PCond,
    arrived: UnsafeCell<u32>,
    generation: UnsafeCell<u64>,
    /// When the last party arrived.
    pub last_release: AtomicU64,
}

// SAFETY: `arrived` and `generation` are only touched with `state` held.
unsafe impl Sync for PBarrier {}
unsafe impl Send for PBarrier {}

impl PBarrier {
    pub fn new(parties: u32) -> io::Result<Self> {
        Ok(Self {
            parties: parties.max(1),
            state: PMutex::new()?,
            cond: PCond::new()?,
            arrived: UnsafeCell::new(0),
            generation: UnsafeCell::new(0),
            last_release: AtomicU64::new(0),
        })
    }

    /// Arrive. `None`: this thread was the last, and released the others; else the
    /// generation to wait out with [`wait_release`](Self::wait_release).
    pub fn arrive(&self, now: u64, t0: u64) -> io::Result<Option<u64>> {
        self.state.lock_until(None, t0)?;
        // SAFETY: `state` is held.
        let (arrived, generation) =
            unsafe { (&mut *self.arrived.get(), &mut *self.generation.get()) };
        *arrived += 1;
        if *arrived < self.parties {
            let mine = *generation;
            self.state.unlock(now)?;
            return Ok(Some(mine));
        }
        *arrived = 0;
        *generation += 1;
        self.last_release.store(now, Ordering::Release);
        self.cond.broadcast(now);
        self.state.unlock(now)?;
        Ok(None)
    }

    /// Wait, at most until `until`, for the arrivals of generation `mine` to be released.
    pub fn wait_release(&self, mine: u64, until: Option<u64>, t0: u64) -> io::Result<Waited> {
        self.state.lock_until(None, t0)?;
        let mut how = Waited::Done;
        // SAFETY: `generation` is read with `state` held.
        while unsafe { *self.generation.get() } == mine {
            if self.cond.wait_until(&self.state, until, t0)? == Waited::Stopped {
                how = Waited::Stopped;
                break;
            }
        }
        // SAFETY: an initialised mutex this thread holds.
        unsafe { libc::pthread_mutex_unlock(self.state.ptr()) };
        Ok(how)
    }
}

/// One direction of a pipe or socket pair, with the time of the last write and read.
pub struct Chan {
    pub read: OwnedFd,
    pub write: OwnedFd,
    pub last_write: AtomicU64,
    pub last_read: AtomicU64,
    /// The buffer the kernel gave (pipes: F_GETPIPE_SZ after asking for the spec's
    /// capacity; sockets: the kernel's default).
    pub capacity: u64,
    /// A socket pair (blocking, with send and receive timeouts of [`SOCKET_WAIT`]), not a
    /// pipe (non-blocking).
    pub socket: bool,
}

/// How long a blocking socket call waits before it returns EAGAIN and the task looks at
/// the run's end and at deadlocks.
pub const SOCKET_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

impl Chan {
    /// A pipe (sized to `capacity` as far as the kernel allows; non-blocking, so that a
    /// call that would block returns EAGAIN and the task waits with `poll`) or an
    /// AF_UNIX stream socket pair of which one direction is used (blocking with timeouts:
    /// a call tries with MSG_DONTWAIT first, then blocks as hackbench's do, so that a
    /// writer is woken as soon as there is room, not when `poll` would say writable).
    pub fn new(kind: ChannelKind, capacity: u64) -> io::Result<Self> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: the kernel fills the two descriptors.
        let rc = unsafe {
            match kind {
                ChannelKind::Pipe => {
                    libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK)
                }
                ChannelKind::Socket => libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                    0,
                    fds.as_mut_ptr(),
                ),
            }
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two fresh descriptors this process owns.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let capacity = match kind {
            ChannelKind::Pipe => {
                // SAFETY: fcntl on a descriptor we own. A size the kernel refuses keeps
                // the default; what it applied is read back.
                unsafe {
                    libc::fcntl(
                        write.as_raw_fd(),
                        libc::F_SETPIPE_SZ,
                        capacity as libc::c_int,
                    )
                };
                let got = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_GETPIPE_SZ) };
                got.max(0) as u64
            }
            ChannelKind::Socket => {
                let tv = libc::timeval {
                    tv_sec: 0,
                    tv_usec: SOCKET_WAIT.as_micros() as libc::suseconds_t,
                };
                for fd in [read.as_raw_fd(), write.as_raw_fd()] {
                    for opt in [libc::SO_SNDTIMEO, libc::SO_RCVTIMEO] {
                        // SAFETY: a timeval on this frame, passed with its size.
                        let rc = unsafe {
                            libc::setsockopt(
                                fd,
                                libc::SOL_SOCKET,
                                opt,
                                (&tv as *const libc::timeval).cast(),
                                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                            )
                        };
                        if rc != 0 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                }
                capacity
            }
        };
        Ok(Self {
            read,
            write,
            last_write: AtomicU64::new(0),
            last_read: AtomicU64::new(0),
            capacity,
            socket: kind == ChannelKind::Socket,
        })
    }
}

/// A shared periodic timer's next expiry (`None` until its first use).
pub type SharedTimer = Mutex<Option<u64>>;

/// All the shared objects of a run.
pub struct Objects {
    pub mutexes: Vec<PMutex>,
    pub conds: Vec<PCond>,
    pub barriers: Vec<PBarrier>,
    pub chans: Vec<Chan>,
    pub timers: Vec<SharedTimer>,
}

impl Objects {
    /// What the kernel gave where it differs from what the spec asked (pipe sizes).
    pub fn applied_notes(&self, spec: &Spec) -> Vec<String> {
        (spec.resources.channels.iter().zip(&self.chans))
            .filter(|(c, k)| c.kind == ChannelKind::Pipe && c.capacity != k.capacity)
            .map(|(c, k)| {
                format!(
                    "pipe {}: the kernel gave a {}-byte buffer for the {} bytes asked",
                    c.name, k.capacity, c.capacity
                )
            })
            .collect()
    }

    pub fn of(spec: &Spec) -> io::Result<Self> {
        let r = &spec.resources;
        Ok(Self {
            mutexes: r
                .mutexes
                .iter()
                .map(|_| PMutex::new())
                .collect::<io::Result<_>>()?,
            conds: r
                .conds
                .iter()
                .map(|_| PCond::new())
                .collect::<io::Result<_>>()?,
            barriers: (r.barriers.iter())
                .map(|(_, n)| PBarrier::new(*n))
                .collect::<io::Result<_>>()?,
            chans: (r.channels.iter())
                .map(|c| Chan::new(c.kind, c.capacity))
                .collect::<io::Result<_>>()?,
            timers: r.timers.iter().map(|_| Mutex::new(None)).collect(),
        })
    }
}

//! One task instance as a real thread: it takes its scheduling attributes and affinity
//! (read back to verify what the kernel applied) and walks its program with the core's
//! cursor, doing each event for real. What it measures goes into its own log, so that
//! threads share nothing on the measuring path; the run replays the logs into the core's
//! metrics afterwards.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Scope;

use schedlab_core::metrics::{relative_deadline, ActKind};
use schedlab_core::program::{self, Advance, Walk};
use schedlab_spec::model::{Event, IoSpec, Policy, SchedAttr, RUN_FOREVER};

use super::objects::Waited;
use super::World;
use crate::clock;
use crate::policy::{self as host_policy, SchedAttr as KernelAttr};

/// How long an object wait lasts before the run's end and deadlocks are looked at.
const SLICE_NS: u64 = 50_000_000;
/// What channel writes send (their bytes carry nothing), and the size of a read buffer.
static ZEROS: [u8; 4096] = [0; 4096];
/// How long every live thread must have waited on an object with none woken before the
/// run is taken as deadlocked: many slices, so that a loaded machine that leaves woken
/// threads unscheduled for a while is not mistaken for a deadlock.
const DEADLOCK_NS: u64 = 1_000_000_000;

/// What a thread records, in its own order.
#[derive(Clone, Copy, Debug)]
pub enum Rec {
    /// It blocked (or began a wait that may block): the open activation ends.
    End(u64),
    /// An activation released at `.0` (clamped to no earlier than the block), of `.1`'s
    /// kind, started running at `.2`.
    Woke(u64, ActKind, u64),
    /// The relative deadline of its timer activations.
    Deadline(u64),
    /// It hit mark `label` at `.1`.
    Mark(usize, u64),
}

/// A finished thread's measurements.
#[derive(Debug)]
pub struct TaskLog {
    /// Creation order (the task's id).
    pub id: u32,
    pub name: String,
    pub policy: Policy,
    /// RT priority for FIFO/RR, nice for the others (0 for DEADLINE).
    pub priority: i32,
    pub recs: Vec<Rec>,
    pub cpu_ns: u64,
    /// System time (`ru_stime`).
    pub sys_ns: u64,
    pub wait_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
    pub migrations: u64,
    pub started_at: u64,
    /// When it exited, if it ran to the end of its program.
    pub exited_at: Option<u64>,
    /// It was waiting when the run ended.
    pub blocked_at_end: bool,
    /// Its block I/O, if it did any.
    pub io: Option<super::io::IoLog>,
}

/// How one event went.
enum Flow {
    Next,
    Exit,
    Stop,
}

pub struct Runner<'scope, 'env> {
    world: &'env World<'env>,
    scope: &'scope Scope<'scope, 'env>,
    tmpl: u32,
    log: TaskLog,
    attrs: &'env SchedAttr,
    unique_timers: Vec<(usize, Option<u64>)>,
    last_block: u64,
    io: super::io::TaskIo,
    /// The thread's channel read buffer (allocated at its first read).
    scratch: Vec<u8>,
}

impl<'scope, 'env> Runner<'scope, 'env> {
    pub fn new(
        world: &'env World<'env>,
        scope: &'scope Scope<'scope, 'env>,
        tmpl: u32,
        id: u32,
        name: String,
    ) -> Self {
        let attrs = &world.programs.task(tmpl).attr;
        Self {
            world,
            scope,
            tmpl,
            log: TaskLog {
                id,
                name,
                policy: attrs.policy,
                priority: attrs.priority,
                recs: Vec::new(),
                cpu_ns: 0,
                sys_ns: 0,
                wait_ns: 0,
                voluntary: 0,
                involuntary: 0,
                migrations: 0,
                started_at: 0,
                exited_at: None,
                blocked_at_end: false,
                io: None,
            },
            attrs,
            unique_timers: Vec::new(),
            last_block: 0,
            io: super::io::TaskIo::new(world.spec, id),
            scratch: Vec::new(),
        }
    }

    fn t0(&self) -> u64 {
        self.world.t0.load(Ordering::Acquire)
    }

    fn now(&self) -> u64 {
        clock::now(self.t0())
    }

    fn past_end(&self, at: u64) -> bool {
        self.world.past_end(at)
    }

    /// Whether the run has ended now (the clock is read only when the run has an end).
    fn ended(&self) -> bool {
        self.world.stop.load(Ordering::Relaxed) || self.world.end.is_some_and(|e| self.now() >= e)
    }

    /// Take the task's name as the thread's, and the template's group, attributes and
    /// CPUs, overridden by its first phase's (set before the task first runs, as the
    /// simulator does). An error names the task.
    pub fn set_up(&mut self) -> Result<(), String> {
        let task = self.world.programs.task(self.tmpl);
        let first = self.world.programs.phases(self.tmpl).first();
        let group = first.and_then(|p| p.group).unwrap_or(task.group);
        let attrs = first.and_then(|p| p.attr.as_ref()).unwrap_or(&task.attr);
        let cpus = first
            .and_then(|p| p.cpus.as_deref())
            .or(task.cpus.as_deref());
        set_comm(&self.log.name);
        self.join(group as usize)?;
        self.apply(attrs, cpus)?;
        match task.ioprio {
            Some(p) => super::io::set_ioprio(p).map_err(|e| format!("task {}: {e}", self.log.name)),
            None => Ok(()),
        }
    }

    /// Join cgroup `id` (before any RT policy: the kernel refuses SCHED_FIFO in a group
    /// without RT runtime).
    fn join(&self, id: usize) -> Result<(), String> {
        (self.world.groups.join(id)).map_err(|e| format!("task {}: {e}", self.log.name))
    }

    fn apply(&mut self, attrs: &'env SchedAttr, cpus: Option<&[u32]>) -> Result<(), String> {
        let name = &self.log.name;
        if let Some(cpus) = cpus {
            set_affinity(cpus).map_err(|e| format!("task {name}: sched_setaffinity: {e}"))?;
        }
        let want = kernel_attr(attrs);
        host_policy::set(0, &want)
            .map_err(|e| format!("task {name}: sched_setattr({}): {e}", attrs.policy.as_str()))?;
        let got = host_policy::get(0).map_err(|e| format!("task {name}: sched_getattr: {e}"))?;
        if got.policy != want.policy || got.priority != want.priority || got.nice != want.nice {
            return Err(format!(
                "task {name}: the kernel applied policy {} priority {} nice {} instead of {}",
                got.policy,
                got.priority,
                got.nice,
                attrs.policy.as_str()
            ));
        }
        self.attrs = attrs;
        self.log.policy = attrs.policy;
        self.log.priority = attrs.priority;
        Ok(())
    }

    /// Walk the program from its start, then record the thread's totals.
    pub fn run(mut self, delay_ns: u64) -> TaskLog {
        if delay_ns > 0 {
            clock::sleep_until(delay_ns.min(self.world.end.unwrap_or(u64::MAX)), self.t0());
        }
        self.log.started_at = self.now();
        let mut walk = self.world.programs.start(self.tmpl);
        let flow = self.walk(&mut walk);
        self.finish(flow);
        self.log
    }

    fn walk(&mut self, walk: &mut Walk<'env>) -> Flow {
        loop {
            if self.ended() {
                return Flow::Stop;
            }
            let Some(op) = walk.op() else {
                return Flow::Exit;
            };
            match self.exec(op) {
                Flow::Next => {}
                other => return other,
            }
            if self.world.programs.advance(self.tmpl, walk) == Advance::NewPhase
                && walk.phase_changes
            {
                let phase = self.world.programs.phases(self.tmpl)[walk.cursor.phase as usize];
                let attrs = phase.attr.as_ref().unwrap_or(self.attrs);
                let joined = phase.group.map_or(Ok(()), |g| self.join(g as usize));
                if let Err(e) = joined.and_then(|_| self.apply(attrs, phase.cpus.as_deref())) {
                    self.world.fail(e);
                    return Flow::Stop;
                }
            }
        }
    }

    fn finish(&mut self, flow: Flow) {
        let now = self.now();
        match flow {
            Flow::Exit => {
                self.log.recs.push(Rec::End(now));
                self.log.exited_at = Some(now);
            }
            Flow::Stop | Flow::Next => {}
        }
        self.log.cpu_ns = clock::thread_cpu();
        if let Some((_, wait, _)) = schedstat() {
            self.log.wait_ns = wait;
        }
        let (vol, invol, sys_ns) = rusage();
        self.log.voluntary = vol;
        self.log.involuntary = invol;
        self.log.sys_ns = sys_ns;
        self.log.migrations = migrations().unwrap_or(0);
        self.log.io = self.io.log.take();
    }

    fn block(&mut self) {
        let now = self.now();
        self.last_block = now;
        self.log.recs.push(Rec::End(now));
    }

    fn woke(&mut self, release: u64, kind: ActKind) {
        let now = self.now();
        let release = release.clamp(self.last_block, now);
        self.log.recs.push(Rec::Woke(release, kind, now));
    }

    fn exec(&mut self, op: &Event) -> Flow {
        let w = self.world;
        match *op {
            Event::Run { ns } => self.spin(ns, clock::thread_cpu),
            Event::Runtime { ns } => self.spin(ns, clock::monotonic),
            Event::Sleep { ns } => {
                let target = self.now() + ns;
                self.sleep_to(target, ActKind::Sleep)
            }
            Event::Timer {
                timer,
                period_ns,
                mode,
            } => self.timer(timer as usize, period_ns, mode),
            Event::Lock { mutex } => self.lock(mutex as usize),
            Event::Unlock { mutex } => {
                self.io_flow(w.objects.mutexes[mutex as usize].unlock(self.now()))
            }
            Event::Wait { cond, mutex } => self.wait(cond as usize, mutex as usize),
            Event::Signal { cond } => {
                w.objects.conds[cond as usize].signal(self.now());
                Flow::Next
            }
            Event::Broad { cond } => {
                w.objects.conds[cond as usize].broadcast(self.now());
                Flow::Next
            }
            Event::Sync { cond, mutex } => {
                w.objects.conds[cond as usize].signal(self.now());
                self.wait(cond as usize, mutex as usize)
            }
            Event::Barrier { barrier } => self.barrier(barrier as usize),
            Event::Yield => {
                // SAFETY: no arguments.
                unsafe { libc::sched_yield() };
                Flow::Next
            }
            Event::Fork { task } => {
                super::spawn_forked(self.scope, w, task);
                Flow::Next
            }
            Event::Write { chan, bytes } => self.write(chan as usize, bytes),
            Event::Read { chan, bytes } => self.read(chan as usize, bytes),
            Event::Mark { label } => {
                let now = self.now();
                self.log.recs.push(Rec::Mark(label as usize, now));
                Flow::Next
            }
            Event::Exit => Flow::Exit,
            Event::Io {
                dev,
                op,
                bytes,
                offset,
            } => self.block_io(&IoSpec::single(dev, op, bytes, offset)),
            Event::IoBatch(ref call) => self.block_io(call),
            Event::Fsync { file } => {
                let r = self.io.fsync(w.spec, &w.devices, file);
                self.io_flow(r)
            }
            // Refused before the run starts (`super::unsupported`).
            _ => Flow::Stop,
        }
    }

    /// A `schedlab:io` op (`io.rs`).
    fn block_io(&mut self, call: &IoSpec) -> Flow {
        let (w, t0) = (self.world, self.t0());
        let stopped = || w.past_end(clock::now(t0));
        match self.io.op(w.spec, &w.devices, call, &stopped) {
            Ok(super::io::Done::Complete) => Flow::Next,
            Ok(super::io::Done::Stopped) => Flow::Stop,
            Err(e) => self.io_flow(Err(e)),
        }
    }

    fn io_flow(&self, r: io::Result<()>) -> Flow {
        match r {
            Ok(()) => Flow::Next,
            Err(e) => {
                self.world.fail(format!("task {}: {e}", self.log.name));
                Flow::Stop
            }
        }
    }

    /// Busy until `clock` has advanced by `ns` (CPU time for `run`, wall time for
    /// `runtime`) or the run ends.
    fn spin(&mut self, ns: u64, clock_fn: fn() -> u64) -> Flow {
        let start = clock_fn();
        loop {
            let spent = clock_fn() - start;
            if ns != RUN_FOREVER && spent >= ns {
                return Flow::Next;
            }
            if self.past_end(self.now()) {
                return Flow::Stop;
            }
            std::hint::spin_loop();
        }
    }

    fn sleep_to(&mut self, target: u64, kind: ActKind) -> Flow {
        self.block();
        if self.past_end(target) {
            let end = self.world.end.unwrap_or(target);
            clock::sleep_until(end, self.t0());
            self.log.blocked_at_end = true;
            return Flow::Stop;
        }
        clock::sleep_until(target, self.t0());
        self.woke(target, kind);
        Flow::Next
    }

    fn timer(&mut self, slot: usize, period: u64, mode: schedlab_spec::model::TimerMode) -> Flow {
        let now = self.now();
        let unique = self.world.spec.resources.timer_unique[slot];
        let started = self.log.started_at;
        let next = if unique {
            let entry = match self.unique_timers.iter().position(|(s, _)| *s == slot) {
                Some(i) => i,
                None => {
                    self.unique_timers.push((slot, None));
                    self.unique_timers.len() - 1
                }
            };
            let next =
                program::next_timer_expiry(self.unique_timers[entry].1, started, period, now, mode);
            self.unique_timers[entry].1 = Some(next);
            next
        } else {
            let mut shared = self.world.objects.timers[slot].lock().unwrap();
            let next = program::next_timer_expiry(*shared, started, period, now, mode);
            *shared = Some(next);
            next
        };
        let rel = relative_deadline(self.attrs.dl, period);
        self.log.recs.push(Rec::Deadline(rel));
        if next > now {
            return self.sleep_to(next, ActKind::Timer);
        }
        // Late: rt-app does not sleep; the activation is released in the past.
        self.log.recs.push(Rec::End(now));
        self.log.recs.push(Rec::Woke(next, ActKind::Timer, now));
        Flow::Next
    }

    fn lock(&mut self, m: usize) -> Flow {
        let mutex = &self.world.objects.mutexes[m];
        if mutex.try_lock() {
            return Flow::Next;
        }
        self.block();
        let t0 = self.t0();
        let waited = self.wait_object(|until| mutex.lock_until(until, t0));
        self.after_wait(waited, &mutex.last_unlock)
    }

    fn wait(&mut self, c: usize, m: usize) -> Flow {
        let (cond, mutex) = (&self.world.objects.conds[c], &self.world.objects.mutexes[m]);
        self.block();
        let t0 = self.t0();
        let waited = self.wait_object(|until| cond.wait_until(mutex, until, t0));
        if matches!(waited, Ok(Waited::Stopped)) {
            // A timed-out wait holds the mutex again; nothing runs after the stop.
            let _ = mutex.unlock(self.now());
        }
        self.after_wait(waited, &cond.last_signal)
    }

    fn barrier(&mut self, b: usize) -> Flow {
        let barrier = &self.world.objects.barriers[b];
        let t0 = self.t0();
        let mine = match barrier.arrive(self.now(), t0) {
            Ok(None) => return Flow::Next,
            Ok(Some(generation)) => generation,
            Err(e) => return self.io_flow(Err(e)),
        };
        self.block();
        let waited = self.wait_object(|until| barrier.wait_release(mine, until, t0));
        self.after_wait(waited, &barrier.last_release)
    }

    /// The end of a wait on an object: woken (released at the waker's last action on
    /// `last`), stopped by the run's end or a deadlock, or failed.
    fn after_wait(&mut self, waited: io::Result<Waited>, last: &AtomicU64) -> Flow {
        match waited {
            Ok(Waited::Done) => {
                self.woke(last.load(Ordering::Acquire), ActKind::Wakeup);
                Flow::Next
            }
            Ok(Waited::Stopped) => {
                self.log.blocked_at_end = true;
                Flow::Stop
            }
            Err(e) => self.io_flow(Err(e)),
        }
    }

    /// Wait on an object through `attempt(until)` in slices of [`SLICE_NS`], until it is
    /// done, the run ends, or the run is deadlocked: every live thread waiting on an
    /// object and none woken for [`DEADLOCK_NS`] (the simulator's end with every task
    /// blocked; a real kernel would wait for ever).
    fn wait_object(
        &mut self,
        mut attempt: impl FnMut(Option<u64>) -> io::Result<Waited>,
    ) -> io::Result<Waited> {
        let w = self.world;
        w.waiting.fetch_add(1, Ordering::AcqRel);
        let mut seen = w.progress.load(Ordering::Acquire);
        let mut since = self.now();
        let outcome = loop {
            let now = self.now();
            if self.past_end(now) {
                break Ok(Waited::Stopped);
            }
            let until = (now + SLICE_NS).min(w.end.unwrap_or(u64::MAX));
            match attempt(Some(until)) {
                Ok(Waited::Stopped) => {
                    let progress = w.progress.load(Ordering::Acquire);
                    let all_waiting =
                        w.waiting.load(Ordering::Acquire) == w.live.load(Ordering::Acquire);
                    let now = self.now();
                    if !all_waiting || progress != seen {
                        since = now;
                    } else if now - since >= DEADLOCK_NS {
                        w.deadlocked.store(true, Ordering::Release);
                        w.stop.store(true, Ordering::Release);
                        break Ok(Waited::Stopped);
                    }
                    seen = progress;
                }
                other => break other,
            }
        };
        w.waiting.fetch_sub(1, Ordering::AcqRel);
        if matches!(outcome, Ok(Waited::Done)) {
            w.progress.fetch_add(1, Ordering::AcqRel);
        }
        outcome
    }

    /// Write `bytes` into the channel, blocking while it is full. A call first tries
    /// without blocking (a non-blocking pipe, MSG_DONTWAIT on a socket), so a call that
    /// does not block costs one system call, as hackbench's does; one that would block
    /// ends the activation and waits (`poll` on a pipe, a blocking `send` on a socket).
    fn write(&mut self, c: usize, bytes: u64) -> Flow {
        let chan = &self.world.objects.chans[c];
        let fd = chan.write.as_raw_fd();
        let socket = chan.socket;
        let mut left = bytes;
        while left > 0 {
            let n = left.min(ZEROS.len() as u64) as usize;
            // SAFETY: `n` bytes of a buffer on this frame to a descriptor the run owns.
            let put = |flags: i32| {
                retry(|| unsafe {
                    if socket {
                        libc::send(fd, ZEROS.as_ptr().cast(), n, flags | libc::MSG_NOSIGNAL)
                    } else {
                        libc::write(fd, ZEROS.as_ptr().cast(), n)
                    }
                })
            };
            chan.last_write.store(self.now(), Ordering::Release);
            match put(libc::MSG_DONTWAIT) {
                Ok(k) => left -= k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && socket => {
                    match self.blocking(|| put(0), &chan.last_read) {
                        Some(k) => left -= k,
                        None => return Flow::Stop,
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match self.ready(fd, libc::POLLOUT, &chan.last_read) {
                        Ok(true) => {}
                        Ok(false) => return Flow::Stop,
                        Err(e) => return self.io_flow(Err(e)),
                    }
                }
                Err(e) => return self.io_flow(Err(e)),
            }
        }
        Flow::Next
    }

    /// Read exactly `bytes` from the channel, blocking until they have arrived.
    fn read(&mut self, c: usize, bytes: u64) -> Flow {
        let mut buf = std::mem::take(&mut self.scratch);
        if buf.is_empty() {
            buf = vec![0; ZEROS.len()];
        }
        let flow = self.read_into(c, bytes, &mut buf);
        self.scratch = buf;
        flow
    }

    fn read_into(&mut self, c: usize, bytes: u64, buf: &mut [u8]) -> Flow {
        let chan = &self.world.objects.chans[c];
        let fd = chan.read.as_raw_fd();
        let socket = chan.socket;
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            let ptr = buf.as_mut_ptr();
            // SAFETY: at most `n` bytes into the thread's read buffer.
            let get = |flags: i32| {
                retry(|| unsafe {
                    if socket {
                        libc::recv(fd, ptr.cast(), n, flags)
                    } else {
                        libc::read(fd, ptr.cast(), n)
                    }
                })
            };
            match get(libc::MSG_DONTWAIT) {
                Ok(0) => return Flow::Stop,
                Ok(k) => left -= k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && socket => {
                    match self.blocking(|| get(0), &chan.last_write) {
                        Some(0) | None => return Flow::Stop,
                        Some(k) => left -= k,
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match self.ready(fd, libc::POLLIN, &chan.last_write) {
                        Ok(true) => continue,
                        Ok(false) => return Flow::Stop,
                        Err(e) => return self.io_flow(Err(e)),
                    }
                }
                Err(e) => return self.io_flow(Err(e)),
            }
            chan.last_read.store(self.now(), Ordering::Release);
        }
        Flow::Next
    }

    /// A blocking socket call (`call`, whose timeout is [`super::objects::SOCKET_WAIT`])
    /// after a non-blocking one said it would block: the wait ends the activation and is
    /// released at the other side's last action (`last`); the bytes it moved, or `None`
    /// when the run ended or failed.
    fn blocking(
        &mut self,
        mut call: impl FnMut() -> io::Result<u64>,
        last: &AtomicU64,
    ) -> Option<u64> {
        self.block();
        let mut moved = None;
        let waited = self.wait_object(|_| match call() {
            Ok(k) => {
                moved = Some(k);
                Ok(Waited::Done)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Waited::Stopped),
            Err(e) => Err(e),
        });
        match self.after_wait(waited, last) {
            Flow::Stop => None,
            _ => moved,
        }
    }

    /// Wait until `fd` is ready for `events`, after a call on it said it would block: the
    /// wait ends the activation and is released at the other side's last action (`last`).
    /// `Ok(false)`: the run ended.
    fn ready(&mut self, fd: i32, events: i16, last: &AtomicU64) -> io::Result<bool> {
        self.block();
        let t0 = self.t0();
        let waited = self.wait_object(|until| {
            let left_ms = until.map_or(-1, |u| {
                (u.saturating_sub(clock::now(t0)) / 1_000_000).max(1) as i32
            });
            Ok(if poll(fd, events, left_ms)? {
                Waited::Done
            } else {
                Waited::Stopped
            })
        });
        Ok(!matches!(self.after_wait(waited, last), Flow::Stop))
    }
}

/// A read or write call, repeated when a signal interrupts it.
fn retry(mut call: impl FnMut() -> isize) -> io::Result<u64> {
    loop {
        let rc = call();
        if rc >= 0 {
            return Ok(rc as u64);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn poll(fd: i32, events: i16, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd on this frame.
        let rc = unsafe { libc::poll(&mut p, 1, timeout_ms) };
        if rc >= 0 {
            return Ok(rc > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The kernel's form of a spec's attributes.
fn kernel_attr(a: &SchedAttr) -> KernelAttr {
    let policy = match a.policy {
        Policy::Other => host_policy::SCHED_OTHER,
        Policy::Batch => host_policy::SCHED_BATCH,
        Policy::Idle => host_policy::SCHED_IDLE,
        Policy::Fifo => host_policy::SCHED_FIFO,
        Policy::Rr => host_policy::SCHED_RR,
        Policy::Deadline => host_policy::SCHED_DEADLINE,
    };
    let mut k = KernelAttr::new(policy);
    match a.policy {
        Policy::Fifo | Policy::Rr => k.priority = a.priority as u32,
        Policy::Deadline => {
            if let Some(d) = a.dl {
                k.runtime_ns = d.runtime_ns;
                k.deadline_ns = d.deadline_ns;
                k.period_ns = d.period_ns;
            }
        }
        _ => k.nice = a.priority,
    }
    k
}

/// Name the calling thread after its task (the kernel keeps 15 bytes), so that `ps`, `top`
/// and a trace show the spec's names.
fn set_comm(name: &str) {
    let bytes: Vec<u8> = name.bytes().filter(|&b| b != 0).take(15).collect();
    if let Ok(c) = std::ffi::CString::new(bytes) {
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
        unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr(), 0, 0, 0) };
    }
}

fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t filled with CPU_SET, passed by pointer with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `/proc/thread-self/schedstat`: time on the CPU, time waiting on a run queue, slices.
fn schedstat() -> Option<(u64, u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// Voluntary and involuntary context switches and system time (ns) of the calling
/// thread.
fn rusage() -> (u64, u64, u64) {
    // SAFETY: the kernel fills the rusage on this frame.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return (0, 0, 0);
    }
    let stime = ru.ru_stime.tv_sec as u64 * 1_000_000_000 + ru.ru_stime.tv_usec as u64 * 1000;
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64, stime)
}

/// `se.nr_migrations` of `/proc/thread-self/sched` (kernels with scheduler debugging).
fn migrations() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
    s.lines()
        .find(|l| l.starts_with("se.nr_migrations"))?
        .split(':')
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

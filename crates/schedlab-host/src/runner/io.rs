//! A task's block I/O on the host: `schedlab:io`, `schedlab:fsync` and the task's
//! `schedlab:ioprio`, on the loop devices of `devices.rs`.
//!
//! Requests go where the simulator sends them (`schedlab_core::io::place`: the same
//! sequential, random and fixed offsets, per task and per device or file); a random
//! offset is drawn from a PRNG of the task's own, seeded from the spec's seed and the
//! task's id (the same distribution as the simulator's draws from the run's PRNG, not
//! the same sequence). A direct op of `count` requests with at most `depth` in flight
//! runs as the simulator's model of a libaio program does, with Linux's native AIO
//! (`io_setup`, `io_submit`, `io_getevents`, called directly): one `io_submit` of
//! `min(depth, count)` requests on an `O_DIRECT` descriptor of the device (buffers
//! aligned to 4096 bytes), then `io_getevents` with `min_nr` = 1 and, per return, one
//! `io_submit` of as many as the depth allows, until all have completed. Native AIO
//! rather than io_uring or a thread per request: it is the interface the simulator
//! models and fio's `libaio` engine uses, so the cross-check against fio compares the
//! same calls, and it needs neither threads nor a kernel newer than the loop device's.
//! `count` = `depth` = 1 is one `pread`/`pwrite` on the `O_DIRECT` descriptor, as the
//! simulator's synchronous request. Buffered ops (`"direct": false`) are `pread`/
//! `pwrite` on a descriptor without `O_DIRECT`, through the block device's page cache
//! (not a file system's), one at a time; `fsync` is `fsync(2)` on the device (all of
//! its dirty pages, not the file's alone, and a cache flush).
//!
//! A request's latency (`clat`, fio's name) runs from the return of the `io_submit` that
//! took it to the return of the `io_getevents` that reaped it, as fio's libaio engine
//! times it (its issue time is taken after `io_submit`); a synchronous call's is the
//! call's. An I/O wait is not an activation on the host (its completion's time is not
//! observable from user space): the simulator counts it as one.
//!
//! I/O priority: a task with `schedlab:ioprio` calls `ioprio_set(IOPRIO_WHO_PROCESS, 0,
//! IOPRIO_PRIO_VALUE(class, level))` for its own thread before it runs and reads it back
//! with `ioprio_get`; native AIO takes the submitting thread's priority for each request
//! (fs/aio.c `aio_prep_rw`: `get_current_ioprio()`), as do `pread`/`pwrite`.

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use schedlab_core::stats::Histogram;
use schedlab_spec::model::{IoOffset, IoOp, IoPrio, IoPrioClass, IoSpec, IoTarget, Spec};
use schedlab_spec::rng::{keyed_u64, Rng};

use super::devices::Devices;
use crate::clock;

/// How long one `io_getevents` waits before the run's end is looked at.
const WAIT_SLICE_NS: i64 = 50_000_000;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const BUF_ALIGN: usize = 4096;

/// `struct iocb` (include/uapi/linux/aio_abi.h, little-endian layout).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// What a task's I/O did, as the result reports it.
#[derive(Clone, Debug, Default)]
pub struct IoLog {
    pub requests: u64,
    pub reads: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Each request's completion latency (ns).
    pub latency: Histogram,
}

impl IoLog {
    fn count(&mut self, op: IoOp, bytes: u64, ns: u64) {
        self.requests += 1;
        match op {
            IoOp::Read => {
                self.reads += 1;
                self.bytes_read += bytes;
            }
            IoOp::Write => self.bytes_written += bytes,
        }
        self.latency.record(ns);
    }
}

/// A native AIO context.
struct Aio {
    ctx: libc::c_ulong,
    size: u32,
}

impl Aio {
    fn new(size: u32) -> io::Result<Aio> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id to `ctx`.
        if unsafe { libc::syscall(libc::SYS_io_setup, size as libc::c_long, &mut ctx) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Aio { ctx, size })
    }

    /// Submit every iocb of `list`, resubmitting the rest after a partial submission. An
    /// error comes with how many were submitted before it.
    fn submit(&self, list: &mut [*mut Iocb]) -> Result<(), (usize, io::Error)> {
        let mut done = 0;
        while done < list.len() {
            let rest = &mut list[done..];
            // SAFETY: the pointers name iocbs that live until their events are reaped.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
                    continue;
                }
                return Err((done, e));
            }
            done += rc as usize;
        }
        Ok(())
    }

    /// Reap between `min` and `events.len()` completions, waiting at most `timeout_ns`
    /// (`None`: until `min` have completed).
    fn reap(
        &self,
        min: usize,
        events: &mut [IoEvent],
        timeout_ns: Option<i64>,
    ) -> io::Result<usize> {
        let ts = timeout_ns.map(|ns| libc::timespec {
            tv_sec: ns / 1_000_000_000,
            tv_nsec: ns % 1_000_000_000,
        });
        let tp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        loop {
            // SAFETY: the kernel writes at most `events.len()` events into `events`.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    events.len() as libc::c_long,
                    events.as_mut_ptr(),
                    tp,
                )
            };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // SAFETY: the context is this object's; every request was reaped.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

/// Buffers for `slots` requests of `bytes` bytes, aligned for `O_DIRECT`.
struct Buffers {
    ptr: *mut u8,
    layout: Layout,
    bytes: usize,
}

impl Buffers {
    fn new(slots: usize, bytes: usize) -> Buffers {
        let layout = Layout::from_size_align(slots * bytes, BUF_ALIGN).expect("buffer layout");
        // SAFETY: a non-zero size (bytes ≥ 512, slots ≥ 1).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Buffers { ptr, layout, bytes }
    }

    fn fits(&self, slots: usize, bytes: usize) -> bool {
        slots * bytes <= self.layout.size() && bytes == self.bytes
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: within the allocation for every slot `fits` admitted.
        unsafe { self.ptr.add(i * self.bytes) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { alloc::dealloc(self.ptr, self.layout) };
    }
}

/// How an op ended.
pub enum Done {
    Complete,
    /// The run ended while it was in progress (what was in flight has completed).
    Stopped,
}

/// One task's I/O state.
pub struct TaskIo {
    /// Per device: an `O_DIRECT` descriptor and a buffered one, opened on first use.
    fds: Vec<[Option<File>; 2]>,
    /// Sequential positions: per device, then per file.
    pos: Vec<Option<u64>>,
    rng: Rng,
    aio: Option<Aio>,
    bufs: Option<Buffers>,
    pub log: Option<IoLog>,
}

impl TaskIo {
    pub fn new(spec: &Spec, task_id: u32) -> TaskIo {
        let r = &spec.resources;
        TaskIo {
            fds: (0..r.devices.len()).map(|_| [None, None]).collect(),
            pos: vec![None; r.devices.len() + r.files.len()],
            rng: Rng::new(keyed_u64(spec.seed.unwrap_or(0), 0x10, task_id as u64, 0)),
            aio: None,
            bufs: None,
            log: None,
        }
    }

    fn fd(&mut self, devs: &Devices, dev: u32, direct: bool) -> io::Result<i32> {
        let slot = &mut self.fds[dev as usize][usize::from(!direct)];
        if slot.is_none() {
            let l = devs.devs[dev as usize]
                .as_ref()
                .expect("a device a task uses is made");
            let mut o = OpenOptions::new();
            o.read(true).write(true);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            *slot = Some(o.open(&l.path)?);
        }
        Ok(slot.as_ref().map(|f| f.as_raw_fd()).unwrap_or(-1))
    }

    /// The device and byte offset of the next request of `call`.
    fn locate(&mut self, spec: &Spec, devs: &Devices, call: &IoSpec) -> (u32, u64) {
        let ndev = spec.resources.devices.len();
        let (dev, base, size, space) = match call.target {
            IoTarget::Dev(d) => {
                let size = devs.devs[d as usize].as_ref().map_or(0, |l| l.size);
                (d, 0, size, d as usize)
            }
            IoTarget::File(f) => {
                let file = &spec.resources.files[f as usize];
                (file.dev, file.offset, file.bytes, ndev + f as usize)
            }
        };
        let pos = &mut self.pos[space];
        if call.offset == IoOffset::Sequential && pos.is_none() {
            *pos = Some(0);
        }
        let rng = &mut self.rng;
        let at = schedlab_core::io::place(pos.as_mut(), size, call.bytes, call.offset, || {
            rng.next_u64()
        });
        (dev, base + at)
    }

    fn buffers(&mut self, slots: usize, bytes: usize) -> &Buffers {
        if !self.bufs.as_ref().is_some_and(|b| b.fits(slots, bytes)) {
            self.bufs = Some(Buffers::new(slots, bytes));
        }
        self.bufs.as_ref().expect("just made")
    }

    /// Run op `call`; `stopped()` says whether the run has ended.
    pub fn op(
        &mut self,
        spec: &Spec,
        devs: &Devices,
        call: &IoSpec,
        stopped: &dyn Fn() -> bool,
    ) -> io::Result<Done> {
        self.log.get_or_insert_with(IoLog::default);
        if !call.direct || (call.count == 1 && call.depth == 1) {
            for _ in 0..call.count {
                if stopped() {
                    return Ok(Done::Stopped);
                }
                self.sync_request(spec, devs, call)?;
            }
            return Ok(Done::Complete);
        }
        self.aio_op(spec, devs, call, stopped)
    }

    fn sync_request(&mut self, spec: &Spec, devs: &Devices, call: &IoSpec) -> io::Result<()> {
        let (dev, at) = self.locate(spec, devs, call);
        let fd = self.fd(devs, dev, call.direct)?;
        let bytes = call.bytes as usize;
        let buf = self.buffers(1, bytes).slot(0);
        let t = clock::monotonic();
        let rc = loop {
            // SAFETY: `buf` holds `bytes` bytes for this call only.
            let rc = unsafe {
                match call.op {
                    IoOp::Read => libc::pread(fd, buf.cast(), bytes, at as libc::off_t),
                    IoOp::Write => libc::pwrite(fd, buf.cast(), bytes, at as libc::off_t),
                }
            };
            if rc >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break rc;
            }
        };
        let ns = clock::monotonic() - t;
        let res = if rc < 0 {
            -(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as i64)
        } else {
            rc as i64
        };
        check(res, bytes, &spec.resources.devices[dev as usize].name, at)?;
        self.log
            .as_mut()
            .expect("made by op")
            .count(call.op, call.bytes, ns);
        Ok(())
    }

    fn aio_op(
        &mut self,
        spec: &Spec,
        devs: &Devices,
        call: &IoSpec,
        stopped: &dyn Fn() -> bool,
    ) -> io::Result<Done> {
        let depth = call.depth.min(call.count) as usize;
        if self.aio.as_ref().is_none_or(|a| (a.size as usize) < depth) {
            self.aio = None;
            self.aio = Some(Aio::new(depth as u32)?);
        }
        self.buffers(depth, call.bytes as usize);
        let mut in_flight = 0usize;
        let r = self.aio_requests(spec, devs, call, stopped, depth, &mut in_flight);
        if r.is_err() && in_flight > 0 {
            // The kernel still writes to the buffers: wait for those requests (their
            // results do not matter now) before anything else may reuse or free them.
            let aio = self.aio.as_ref().expect("made above");
            let mut events = vec![IoEvent::default(); in_flight];
            while in_flight > 0 {
                match aio.reap(in_flight, &mut events[..in_flight], None) {
                    Ok(n) => in_flight -= n,
                    Err(_) => break,
                }
            }
        }
        r
    }

    /// The submit-and-reap loop of [`TaskIo::aio_op`]; `in_flight` is kept current, so
    /// that an error leaves the requests still in flight known.
    fn aio_requests(
        &mut self,
        spec: &Spec,
        devs: &Devices,
        call: &IoSpec,
        stopped: &dyn Fn() -> bool,
        depth: usize,
        in_flight: &mut usize,
    ) -> io::Result<Done> {
        let mut iocbs = vec![Iocb::default(); depth];
        let mut issued = vec![0u64; depth];
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut events = vec![IoEvent::default(); depth];
        let mut list: Vec<*mut Iocb> = Vec::with_capacity(depth);
        let mut left = call.count as u64;
        let opcode = match call.op {
            IoOp::Read => IOCB_CMD_PREAD,
            IoOp::Write => IOCB_CMD_PWRITE,
        };
        let mut stop = false;
        loop {
            if !stop && stopped() {
                stop = true;
            }
            if !stop && left > 0 {
                list.clear();
                while left > 0 {
                    let Some(slot) = free.pop() else { break };
                    let (dev, at) = self.locate(spec, devs, call);
                    let fd = self.fd(devs, dev, true)?;
                    let buf = self.bufs.as_ref().expect("made above").slot(slot);
                    iocbs[slot] = Iocb {
                        aio_data: slot as u64 | (dev as u64) << 32,
                        aio_lio_opcode: opcode,
                        aio_fildes: fd as u32,
                        aio_buf: buf as u64,
                        aio_nbytes: call.bytes,
                        aio_offset: at as i64,
                        ..Iocb::default()
                    };
                    list.push(&mut iocbs[slot]);
                    left -= 1;
                }
                let aio = self.aio.as_ref().expect("made above");
                if let Err((done, e)) = aio.submit(&mut list) {
                    *in_flight += done;
                    return Err(e);
                }
                let t = clock::monotonic();
                for &p in &list {
                    // SAFETY: `p` points into `iocbs`, alive here.
                    let slot = unsafe { (*p).aio_data } as u32 as usize;
                    issued[slot] = t;
                }
                *in_flight += list.len();
            }
            if *in_flight == 0 {
                return Ok(if stop { Done::Stopped } else { Done::Complete });
            }
            let aio = self.aio.as_ref().expect("made above");
            // After a stop, what is in flight is reaped before the buffers go.
            let timeout = (!stop).then_some(WAIT_SLICE_NS);
            let min = if stop { *in_flight } else { 1 };
            let n = aio.reap(min, &mut events[..*in_flight], timeout)?;
            let t = clock::monotonic();
            *in_flight -= n;
            let log = self.log.as_mut().expect("made by op");
            for ev in &events[..n] {
                let slot = ev.data as u32 as usize;
                let dev = (ev.data >> 32) as usize;
                let at = iocbs[slot].aio_offset as u64;
                check(
                    ev.res,
                    call.bytes as usize,
                    &spec.resources.devices[dev].name,
                    at,
                )?;
                log.count(call.op, call.bytes, t - issued[slot]);
                free.push(slot);
            }
        }
    }

    /// `fsync(2)` on the device of `file`.
    pub fn fsync(&mut self, spec: &Spec, devs: &Devices, file: u32) -> io::Result<()> {
        let dev = spec.resources.files[file as usize].dev;
        let fd = self.fd(devs, dev, false)?;
        // SAFETY: a descriptor this task owns.
        if unsafe { libc::fsync(fd) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// A request's result (bytes done, or −errno): all of its bytes, or an error naming
/// where.
fn check(res: i64, bytes: usize, dev: &str, at: u64) -> io::Result<()> {
    if res < 0 {
        let e = io::Error::from_raw_os_error((-res) as i32);
        return Err(io::Error::new(
            e.kind(),
            format!("I/O of {bytes} bytes at {at} on device {dev}: {e}"),
        ));
    }
    if res as usize != bytes {
        return Err(io::Error::other(format!(
            "I/O of {bytes} bytes at {at} on device {dev}: only {res} done"
        )));
    }
    Ok(())
}

const IOPRIO_WHO_PROCESS: libc::c_int = 1;
const IOPRIO_CLASS_SHIFT: u32 = 13;

/// `IOPRIO_PRIO_VALUE(class, level)` (include/uapi/linux/ioprio.h).
fn ioprio_value(p: IoPrio) -> libc::c_int {
    let class = match p.class {
        IoPrioClass::Rt => 1,
        IoPrioClass::Be => 2,
        IoPrioClass::Idle => 3,
    };
    let level = if p.class == IoPrioClass::Idle {
        0
    } else {
        p.level as u32
    };
    ((class << IOPRIO_CLASS_SHIFT) | level) as libc::c_int
}

/// Give the calling thread I/O priority `p` and check the kernel kept it.
pub fn set_ioprio(p: IoPrio) -> Result<(), String> {
    let want = ioprio_value(p);
    // SAFETY: ioprio_set on the calling thread (who = 0).
    if unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, want) } != 0 {
        return Err(format!(
            "ioprio_set({} {}): {}",
            p.class.as_str(),
            p.level,
            io::Error::last_os_error()
        ));
    }
    // SAFETY: ioprio_get on the calling thread.
    let got = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if got != want as libc::c_long {
        return Err(format!(
            "ioprio_set({} {}): the kernel applied {got:#x} instead of {want:#x}",
            p.class.as_str(),
            p.level
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_structures_have_their_uapi_sizes() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }

    #[test]
    fn ioprio_values_are_ionices() {
        let idle = IoPrio {
            class: IoPrioClass::Idle,
            level: 0,
        };
        assert_eq!(ioprio_value(idle), 3 << 13);
        let be2 = IoPrio {
            class: IoPrioClass::Be,
            level: 2,
        };
        assert_eq!(ioprio_value(be2), (2 << 13) | 2);
    }
}

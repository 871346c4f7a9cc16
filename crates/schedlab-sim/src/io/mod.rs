//! The block layer: requests from tasks, an I/O scheduler (elevator) per device that
//! orders them, and a device model that services them; a completion wakes the task that
//! waited for it.
//!
//! I/O schedulers and device models are plug-ins chosen at run time (`Box<dyn …>`), so
//! the engine is compiled once per CPU policy whatever I/O scheduler a run uses. The
//! elevator API mirrors the kernel's `struct elevator_mq_ops` (include/linux/elevator.h):
//! `insert_requests`, `dispatch_request`, `has_work`, `completed_request`,
//! `request_merge`; a device is what `blk_mq_ops->queue_rq` reaches (a hardware queue of
//! `queue_depth` tags) with a service time.
//!
//! The flow, as blk-mq runs it (block/blk-mq.c): a task submits a request
//! (`submit_bio` → `blk_mq_submit_bio`) and sleeps uninterruptibly (`io_schedule`); the
//! request goes to the elevator (`insert`); the hardware queue is run
//! (`blk_mq_run_hw_queue` → `__blk_mq_sched_dispatch_requests`): while the device has a
//! free tag and the elevator has work, `dispatch` hands it the next request
//! (`block_rq_issue`); the device completes it after its service time (an interrupt:
//! `blk_mq_complete_request`, `block_rq_complete`), the elevator is told (`completed`),
//! the waiting task is woken, and the queue is run again.
//!
//! A request holds one or more bios (`merge.rs`: bios join queued requests, and queued
//! requests join each other, as 6.1's `elv_merge` and `attempt_merge` allow); each bio
//! names the task that waits for it, and every one of them is woken when the request
//! completes.
//!
//! Simplifications: one hardware queue per device; no plugging; no request timeouts or
//! errors.

pub mod bfq;
pub mod cfq;
pub mod deadline;
pub mod deadline_lowprio;
pub mod kyber;
pub mod merge;
pub mod mq_deadline;
pub mod none;
pub mod noop;
pub mod process_queues;
pub mod seek;
pub mod service_tree;
pub mod sorted_fifo;
pub mod task_table;

pub use merge::{Bio, MergeKind, NoMerges, QueueLimits};

use schedlab_spec::model::{BlockDevice, IoOffset, IoOp, IoPrio, IO_SCHEDULERS, SECTOR_BYTES};

use crate::ctx::Ctx;
use crate::device::{self, DevCtx, Device};
use crate::event::EventKind;
use crate::types::{TaskId, Time};

/// A request in a device's table (its tag in the elevator's eyes), reused once completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RqId(pub u32);

/// A block I/O request (`struct request`) with its bios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The task whose bio started it.
    pub task: TaskId,
    pub op: IoOp,
    /// First sector (512-byte units).
    pub sector: u64,
    pub bytes: u64,
    /// The submitter's I/O priority when it submitted (`req_get_ioprio`).
    pub ioprio: IoPrio,
    /// A synchronous request (`op_is_sync`: a read, or a write its task waits for), which
    /// CFQ and BFQ queue apart from asynchronous writes (writeback).
    pub sync: bool,
    /// When its first bio was submitted (the earlier of two merged requests' times, as
    /// `attempt_merge` keeps `start_time_ns`).
    pub submitted: Time,
    /// When the device started it (`block_rq_issue`); `None` while queued.
    pub issued: Option<Time>,
    /// Bios merged into it (1 for an unmerged request).
    pub nr_bios: u32,
    /// Its first and last bio in the queue's bio table (`rq->bio`, `rq->biotail`).
    bio_head: u32,
    bio_tail: u32,
}

impl Request {
    /// Sectors covered (`blk_rq_sectors`).
    pub fn nr_sectors(&self) -> u64 {
        self.bytes / SECTOR_BYTES
    }

    /// The sector after its last (`blk_rq_pos + blk_rq_sectors`, the request hash's key).
    pub fn end_sector(&self) -> u64 {
        self.sector + self.nr_sectors()
    }
}

/// What an I/O scheduler sees and may do: the requests by id, the clock, its own timers.
pub struct IoCtx<'a> {
    reqs: &'a [Option<Request>],
    now: Time,
    dev: u32,
    events: &'a mut Ctx,
}

impl IoCtx<'_> {
    /// A request the elevator holds.
    pub fn request(&self, rq: RqId) -> &Request {
        self.reqs[rq.0 as usize].as_ref().expect("a live request")
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Call `IoScheduler::timer` with `token` at `at` (a kernel timer of the elevator);
    /// `token` must fit in 35 bits.
    pub fn arm_timer(&mut self, at: Time, token: u64) {
        assert!(
            token < TIMER_FLAG,
            "elevator timer token {token:#x} too wide"
        );
        let at = at.max(self.now);
        self.events.push(
            at,
            EventKind::Device {
                dev: self.dev,
                data: TIMER_FLAG | token,
            },
        );
    }
}

/// Static facts about an I/O scheduler.
#[derive(Clone, Debug)]
pub struct IoSchedInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Primary source (file, version, lines).
    pub source: &'static str,
}

/// An I/O scheduler (`struct elevator_mq_ops`). The block layer calls `insert` for every
/// new request, then `dispatch` while the device has a free tag and `has_work` is true.
pub trait IoScheduler {
    fn info(&self) -> IoSchedInfo;

    /// Set a tunable (sysfs `queue/iosched/<name>`).
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let _ = value;
        Err(format!("unknown parameter '{name}'"))
    }

    /// A queued request a new bio of `bytes` bytes at `sector` could join, and how
    /// (`request_merge`: mq-deadline and BFQ offer front merges from their sector-sorted
    /// trees). Asked only after the block layer's own one-hit cache and back-merge hash
    /// found nothing; the block layer checks the candidate (still queued, same direction
    /// and priority, adjacent, within `max_sectors_kb`) and does the merge.
    fn request_merge(
        &mut self,
        io: &IoCtx,
        sector: u64,
        bytes: u64,
        op: IoOp,
    ) -> Option<(RqId, MergeKind)> {
        let _ = (io, sector, bytes, op);
        None
    }

    /// A bio was merged into queued request `rq` (`request_merged`); after a front merge
    /// its start sector is earlier, and a sector-sorted elevator re-sorts it.
    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        let _ = (io, rq, kind);
    }

    /// Whether queued requests may be merged with each other (`true` only for an
    /// elevator that implements `requests_merged`; the kernel's `none` and kyber have
    /// none).
    fn merges_requests(&self) -> bool {
        false
    }

    /// Queued request `next` was appended to queued request `rq` and goes away
    /// (`requests_merged`): drop it from every queue, keeping what it should pass on (an
    /// earlier FIFO deadline). `next` may also be a new request that was never inserted
    /// (`elv_attempt_insert_merge`). `rq` is already grown; `next` is still readable.
    fn requests_merged(&mut self, io: &mut IoCtx, rq: RqId, next: RqId) {
        let _ = (io, rq, next);
    }

    /// Queue a new request (`insert_requests`).
    fn insert(&mut self, io: &mut IoCtx, rq: RqId);

    /// Is there a request to dispatch now (`has_work`)?
    fn has_work(&self, io: &IoCtx) -> bool;

    /// The next request for the device (`dispatch_request`), or `None` to hold back.
    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId>;

    /// A dispatched request completed (`completed_request` / `finish_request`).
    fn completed(&mut self, io: &mut IoCtx, rq: RqId) {
        let _ = (io, rq);
    }

    /// A timer armed with `IoCtx::arm_timer` fired.
    fn timer(&mut self, io: &mut IoCtx, token: u64) {
        let _ = (io, token);
    }
}

/// `block_rq_issue` / `block_rq_complete` on the CPU of the task the request is for.
fn trace_rq(ctx: &mut Ctx, dev: u32, rq: &Request, issue: bool) {
    if !ctx.tracer.enabled() {
        return;
    }
    let cpu = ctx.task(rq.task).cpu;
    let on = ctx.curr(cpu);
    let write = rq.op == IoOp::Write;
    let now = ctx.now();
    ctx.tracer
        .block_rq(now, cpu, on, dev, write, rq.sector, rq.nr_sectors(), issue);
}

/// Bit of a device event's word that marks an elevator timer (below it: a request id).
const TIMER_FLAG: u64 = 1 << 35;

/// Build the I/O scheduler called `name` (one of [`IO_SCHEDULERS`]).
pub fn construct(name: &str) -> Result<Box<dyn IoScheduler>, String> {
    match name {
        "none" => Ok(Box::new(none::NoneSched::default())),
        "noop" => Ok(Box::new(noop::Noop::default())),
        "deadline" => Ok(Box::new(deadline::Deadline::default())),
        "deadline-lowprio" => Ok(Box::new(deadline_lowprio::DeadlineLowprio::default())),
        "mq-deadline" => Ok(Box::new(mq_deadline::MqDeadline::default())),
        "cfq" => Ok(Box::new(cfq::Cfq::default())),
        "kyber" => Ok(Box::new(kyber::Kyber::default())),
        "bfq" => Ok(Box::new(bfq::Bfq::default())),
        _ => Err(format!(
            "unknown I/O scheduler '{name}' (available: {})",
            IO_SCHEDULERS.join(", ")
        )),
    }
}

/// Per-device totals for the result.
#[derive(Clone, Debug, Default)]
pub struct DeviceStats {
    pub requests: u64,
    /// Merges, as /proc/diskstats counts them: a bio joining a queued request and a
    /// request joining another (`blk_account_io_merge_bio`,
    /// `blk_account_io_merge_request`).
    pub merges: u64,
    /// Bios completed (each woke its task).
    pub bios: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time with at least one request on the device.
    pub busy_ns: u64,
    /// Submission → completion of each request.
    pub latency: schedlab_core::stats::Histogram,
}

/// One device with its elevator and its request table.
pub struct BlockQueue {
    pub name: String,
    pub elevator: Box<dyn IoScheduler>,
    pub device: Box<dyn Device>,
    reqs: Vec<Option<Request>>,
    free: Vec<u32>,
    bios: Vec<Bio>,
    free_bios: Vec<u32>,
    /// Queued requests by end sector (`elv_rqhash`) and by start sector.
    by_end: merge::SectorHash,
    by_start: merge::SectorHash,
    /// The one-hit merge cache (`q->last_merge`).
    last_merge: Option<RqId>,
    /// The elevator can forget a request merged away (`IoScheduler::merges_requests`).
    merges_requests: bool,
    pub limits: QueueLimits,
    in_flight: u32,
    busy_since: Time,
    /// Per task: where its next sequential request starts (bytes).
    next_offset: Vec<u64>,
    pub stats: DeviceStats,
}

/// Every device of the machine.
#[derive(Default)]
pub struct BlockLayer {
    pub queues: Vec<BlockQueue>,
    /// The tasks whose bios the last event completed, one entry per bio, in bio order
    /// (drained by the engine).
    pub woken: Vec<TaskId>,
}

impl BlockLayer {
    /// The devices a spec declares, with their elevators and tunables.
    pub fn new(devices: &[BlockDevice]) -> Result<BlockLayer, String> {
        let queues = devices
            .iter()
            .map(|d| {
                let mut elevator =
                    construct(&d.scheduler).map_err(|e| format!("device {}: {e}", d.name))?;
                let mut limits = QueueLimits::default();
                for (k, v) in &d.params {
                    if limits
                        .set(k, v)
                        .map_err(|e| format!("device {}: {k}={v}: {e}", d.name))?
                    {
                        continue;
                    }
                    elevator.set_param(k, v).map_err(|e| {
                        format!("device {} scheduler {}: {k}={v}: {e}", d.name, d.scheduler)
                    })?;
                }
                let merges_requests = elevator.merges_requests();
                Ok(BlockQueue {
                    name: d.name.clone(),
                    elevator,
                    device: device::construct(&d.model),
                    reqs: Vec::new(),
                    free: Vec::new(),
                    bios: Vec::new(),
                    free_bios: Vec::new(),
                    by_end: Default::default(),
                    by_start: Default::default(),
                    last_merge: None,
                    merges_requests,
                    limits,
                    in_flight: 0,
                    busy_since: 0,
                    next_offset: Vec::new(),
                    stats: DeviceStats::default(),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(BlockLayer {
            queues,
            woken: Vec::new(),
        })
    }

    /// `t` submits a request to device `dev` at I/O priority `ioprio`; the caller puts it
    /// to sleep until [`Self::event`] reports it complete.
    #[allow(clippy::too_many_arguments)]
    pub fn submit(
        &mut self,
        ctx: &mut Ctx,
        dev: u32,
        t: TaskId,
        ioprio: IoPrio,
        op: IoOp,
        bytes: u64,
        offset: IoOffset,
    ) {
        let q = &mut self.queues[dev as usize];
        let size = q.device.size_bytes();
        let start = match offset {
            IoOffset::At(b) => b,
            IoOffset::Sequential => {
                if q.next_offset.len() <= t.idx() {
                    q.next_offset.resize(t.idx() + 1, 0);
                }
                let at = q.next_offset[t.idx()];
                if at + bytes > size {
                    0
                } else {
                    at
                }
            }
            IoOffset::Random => {
                let slots = (size - bytes) / SECTOR_BYTES + 1;
                (ctx.random() % slots) * SECTOR_BYTES
            }
        };
        if let Some(n) = q.next_offset.get_mut(t.idx()) {
            *n = start + bytes;
        }
        let b = q.alloc_bio(Bio {
            task: t,
            sector: start / SECTOR_BYTES,
            bytes,
            next: merge::NIL,
        });
        if !q.try_bio_merge(ctx, dev, b, op, ioprio) {
            let rq = Request {
                task: t,
                op,
                sector: start / SECTOR_BYTES,
                bytes,
                ioprio,
                sync: true,
                submitted: ctx.now(),
                issued: None,
                nr_bios: 1,
                bio_head: b,
                bio_tail: b,
            };
            let id = q.alloc(rq);
            q.insert(ctx, dev, id);
        }
        q.run(ctx, dev);
    }

    /// A device event popped: a completion (its bios' tasks are left in `woken`) or an
    /// elevator timer.
    pub fn event(&mut self, ctx: &mut Ctx, dev: u32, data: u64) {
        let q = &mut self.queues[dev as usize];
        let now = ctx.now();
        if data & TIMER_FLAG != 0 {
            let mut io = IoCtx {
                reqs: &q.reqs,
                now,
                dev,
                events: ctx,
            };
            q.elevator.timer(&mut io, data & !TIMER_FLAG);
            q.run(ctx, dev);
            return;
        }
        let Some(id) = q.device.event(&mut DevCtx::new(ctx, dev), data) else {
            // The device's own work (a disk destaging its cache): nothing completed.
            return;
        };
        let rq = q.reqs[id.0 as usize].expect("a completed request is live");
        trace_rq(ctx, dev, &rq, false);
        let mut io = IoCtx {
            reqs: &q.reqs,
            now,
            dev,
            events: ctx,
        };
        q.elevator.completed(&mut io, id);
        q.in_flight -= 1;
        if q.in_flight == 0 {
            q.stats.busy_ns += now - q.busy_since;
        }
        q.stats.requests += 1;
        match rq.op {
            IoOp::Read => q.stats.bytes_read += rq.bytes,
            IoOp::Write => q.stats.bytes_written += rq.bytes,
        }
        q.stats.latency.record(now - rq.submitted);
        q.end_bios(&rq, &mut self.woken);
        q.release(id);
        q.run(ctx, dev);
    }

    /// Close the busy intervals still open at `now` (the end of the run).
    pub fn finish(&mut self, now: Time) {
        for q in &mut self.queues {
            if q.in_flight > 0 {
                q.stats.busy_ns += now - q.busy_since;
                q.busy_since = now;
            }
        }
    }
}

impl BlockQueue {
    fn alloc(&mut self, rq: Request) -> RqId {
        match self.free.pop() {
            Some(i) => {
                self.reqs[i as usize] = Some(rq);
                RqId(i)
            }
            None => {
                self.reqs.push(Some(rq));
                RqId(self.reqs.len() as u32 - 1)
            }
        }
    }

    fn release(&mut self, id: RqId) {
        self.unhash(id);
        self.reqs[id.0 as usize] = None;
        self.free.push(id.0);
    }

    fn alloc_bio(&mut self, bio: Bio) -> u32 {
        match self.free_bios.pop() {
            Some(i) => {
                self.bios[i as usize] = bio;
                i
            }
            None => {
                self.bios.push(bio);
                self.bios.len() as u32 - 1
            }
        }
    }

    /// `blk_update_request` → `bio_endio` for each bio of a completed request: its task
    /// is to be woken.
    fn end_bios(&mut self, rq: &Request, woken: &mut Vec<TaskId>) {
        let mut b = rq.bio_head;
        while b != merge::NIL {
            let bio = self.bios[b as usize];
            woken.push(bio.task);
            self.stats.bios += 1;
            self.free_bios.push(b);
            b = bio.next;
        }
    }

    /// Queue a new request: merged into queued ones if the elevator allows
    /// (`elv_attempt_insert_merge`), else inserted into the elevator and indexed.
    fn insert(&mut self, ctx: &mut Ctx, dev: u32, id: RqId) {
        if self.try_insert_merge(ctx, dev, id) {
            return;
        }
        let mut io = IoCtx {
            reqs: &self.reqs,
            now: ctx.now(),
            dev,
            events: ctx,
        };
        self.elevator.insert(&mut io, id);
        self.hash_queued(id);
    }

    /// `blk_mq_run_hw_queue`: hand the device requests while it has a free tag.
    fn run(&mut self, ctx: &mut Ctx, dev: u32) {
        let now = ctx.now();
        while self.in_flight < self.device.queue_depth() {
            let mut io = IoCtx {
                reqs: &self.reqs,
                now,
                dev,
                events: ctx,
            };
            if !self.elevator.has_work(&io) {
                break;
            }
            let Some(id) = self.elevator.dispatch(&mut io) else {
                break;
            };
            let rq = self.reqs[id.0 as usize]
                .as_mut()
                .expect("a dispatched request is live");
            rq.issued = Some(now);
            let rq = *rq;
            if self.in_flight == 0 {
                self.busy_since = now;
            }
            self.in_flight += 1;
            trace_rq(ctx, dev, &rq, true);
            self.device.queue(&mut DevCtx::new(ctx, dev), id, &rq);
        }
    }
}

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
//! A task that submits several requests at once holds them on its plug (`plug.rs`)
//! until it is done or blocks. A task's `schedlab:io` op submits its requests as libaio
//! does (`submit.rs`).
//!
//! Simplifications: one hardware queue per device; no request timeouts or errors.

pub mod bfq;
pub mod buffered;
pub mod cfq;
pub mod deadline;
pub mod deadline_lowprio;
pub mod kyber;
pub mod merge;
pub mod mq_deadline;
pub mod none;
pub mod noop;
pub mod pagecache;
pub mod plug;
pub mod process_queues;
pub mod seek;
pub mod service_tree;
pub mod sorted_fifo;
pub mod submit;
pub mod task_table;

pub use merge::{Bio, MergeKind, NoMerges, QueueLimits};
pub use submit::IoStep;

use schedlab_spec::model::{
    ChannelKind, Event, IoOp, IoPrio, Phase, Policy, SchedAttr, Spec, TaskSpec, Uclamp,
    IO_SCHEDULERS, ROOT_GROUP, SECTOR_BYTES,
};

use crate::ctx::Ctx;
use crate::device::{self, DevCtx, Device};
use crate::event::EventKind;
use crate::trace::writer::RqTrace;
use crate::types::{CpuId, TaskId, Time};

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
    /// The CPU its first bio was submitted on (`rq->mq_ctx->cpu`), where its completion
    /// is run.
    pub cpu: CpuId,
    /// When the device started it (`block_rq_issue`); `None` while queued.
    pub issued: Option<Time>,
    /// Bios merged into it (1 for an unmerged request).
    pub nr_bios: u32,
    /// A cache flush with no data (`REQ_OP_FLUSH`, `bytes` 0): never merged.
    pub flush: bool,
    /// Its first and last bio in the queue's bio table (`rq->bio`, `rq->biotail`).
    bio_head: u32,
    bio_tail: u32,
    /// On its submitter's plug, not yet in the elevator.
    plugged: bool,
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
    /// `token` must be below 2^35 − 1.
    pub fn arm_timer(&mut self, at: Time, token: u64) {
        assert!(
            token <= MAX_ELEVATOR_TOKEN,
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

    /// The device's `queue/rotational` flag, told once before any tunable is set (an
    /// elevator's `init_sched` reads `blk_queue_nonrot`).
    fn set_rotational(&mut self, rotational: bool) {
        let _ = rotational;
    }

    /// Set a tunable (sysfs `queue/iosched/<name>`).
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let _ = value;
        Err(format!("unknown parameter '{name}'"))
    }

    /// A queued request the new `bio` could join, and how (`request_merge`: deadline and
    /// mq-deadline offer front merges from their sector-sorted trees, CFQ and BFQ from the
    /// submitting process's queue). Asked only after the block layer's own one-hit cache
    /// and back-merge hash found nothing; the block layer checks the candidate (still
    /// queued, same direction and priority, adjacent, within `max_sectors_kb`, allowed
    /// by [`IoScheduler::allow_merge`]) and does the merge.
    fn request_merge(&mut self, io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        let _ = (io, bio);
        None
    }

    /// Whether `bio` may join queued request `rq` (`allow_merge`, asked by
    /// `elv_bio_merge_ok` for every candidate `elv_merge` finds): CFQ and BFQ keep a
    /// bio out of another process's queue and a sync bio out of an async request.
    fn allow_merge(&self, io: &IoCtx, rq: RqId, bio: &Bio) -> bool {
        let _ = (io, rq, bio);
        true
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

/// `block_rq_insert`, `block_rq_issue` or `block_rq_complete` (`issue`: true for the
/// issue, false for the completion) on the CPU of the task the request is for.
fn trace_rq(ctx: &mut Ctx, dev: u32, rq: &Request, issue: bool) {
    let kind = if issue {
        RqTrace::Issue
    } else {
        RqTrace::Complete
    };
    trace_rq_as(ctx, dev, rq, kind);
}

fn trace_rq_as(ctx: &mut Ctx, dev: u32, rq: &Request, kind: RqTrace) {
    if !ctx.tracer.enabled() {
        return;
    }
    let cpu = ctx.task(rq.task).cpu;
    let on = ctx.curr(cpu);
    let now = ctx.now();
    ctx.tracer.block_rq(
        now,
        cpu,
        on,
        dev,
        rwbs(rq),
        rq.sector,
        rq.nr_sectors(),
        kind,
    );
}

/// The request's `rwbs` as `blk_fill_rwbs` spells it (Linux 6.1), without the flag
/// letters schedlab does not track (S, M, A): `R`, `W`, or `FF` for a cache flush
/// (block/blk-flush.c: `REQ_OP_FLUSH | REQ_PREFLUSH`).
fn rwbs(rq: &Request) -> &'static [u8] {
    match (rq.flush, rq.op) {
        (true, _) => b"FF",
        (false, IoOp::Write) => b"W",
        (false, IoOp::Read) => b"R",
    }
}

/// Bit of a device event's word that marks an elevator timer (below it: a request id).
const TIMER_FLAG: u64 = 1 << 35;
/// The largest token an elevator's timer may carry (the one above it is the flusher's).
const MAX_ELEVATOR_TOKEN: u64 = TIMER_FLAG - 2;

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

/// Whether a device event's word is a flusher's timer (which, like a policy timer, does
/// not outlive the workload's last task).
pub fn is_flusher_timer(data: u64) -> bool {
    data == buffered::FLUSHER_TIMER
}

/// Whether `spec` reads or writes through the page cache (buffered I/O, `fsync`,
/// `unlink`): only then are the page cache and the flusher threads built.
pub fn uses_page_cache(spec: &Spec) -> bool {
    spec.tasks
        .iter()
        .flat_map(|t| &t.phases)
        .flat_map(|p| &p.events)
        .any(|e| {
            matches!(e, Event::Fsync { .. } | Event::Unlink { .. })
                || matches!(e, Event::IoBatch(s) if !s.direct)
        })
}

/// `spec` with one flusher thread template per device appended (`flush-251:<dev>`, a
/// `SCHED_OTHER` kernel thread at nice 0 whose program is a writeback pass, for ever),
/// if it uses the page cache.
pub fn with_flusher_threads(spec: &Spec) -> Option<Spec> {
    if !uses_page_cache(spec) {
        return None;
    }
    let mut with = spec.clone();
    for d in 0..spec.resources.devices.len() as u32 {
        with.tasks.push(TaskSpec {
            name: format!("flush-251:{d}"),
            instances: 0,
            loop_count: -1,
            delay_ns: 0,
            attr: SchedAttr {
                policy: Policy::Other,
                priority: 0,
                dl: None,
                slice_ns: None,
                uclamp: Uclamp::default(),
            },
            cpus: None,
            phases: vec![Phase {
                name: "writeback".into(),
                loop_count: 1,
                events: vec![Event::Writeback { dev: d }],
                attr: None,
                cpus: None,
                group: None,
            }],
            process: None,
            group: ROOT_GROUP,
            ioprio: None,
        });
    }
    Some(with)
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
    /// CPU time of one completion interrupt (`irq_ns` of the device).
    irq_ns: u64,
}

/// Every device of the machine.
#[derive(Default)]
pub struct BlockLayer {
    pub queues: Vec<BlockQueue>,
    /// The tasks the last event made ready to go on, in bio order (drained by the engine).
    pub woken: Vec<TaskId>,
    /// The completion interrupts the last event raised: (CPU, cost), drained by the
    /// engine, which charges each to the task running on that CPU.
    pub irqs: Vec<(CpuId, u64)>,
    /// Bios the last event completed, in completion order.
    ended: Vec<Bio>,
    /// Per task: its I/O op in progress and its plug.
    tasks: Vec<submit::TaskIo>,
    plugs: Vec<plug::Plug>,
    /// Files (`schedlab.files`): extents of the devices.
    files: Vec<submit::FileExtent>,
    /// The page cache, when the spec reads or writes through it.
    cache: Option<pagecache::PageCache>,
    /// Devices whose flusher is to be woken (drained by the engine).
    pub kicks: Vec<u32>,
    /// Per device: its flusher's timer is pending; where its journal's head is.
    flusher_timer: Vec<bool>,
    journal_head: Vec<u64>,
    /// The flusher threads, per device (set by the engine when it creates them).
    pub flushers: Vec<TaskId>,
    /// The template of the first flusher thread, if the spec has them.
    pub flusher_tmpl: Option<u32>,
    /// Scratch list of page runs to write.
    wb_ios: Vec<pagecache::PageIo>,
    /// Per task: its completed bios.
    task_stats: Vec<TaskIoStats>,
}

/// A task's completed bios.
#[derive(Clone, Debug, Default)]
pub struct TaskIoStats {
    pub requests: u64,
    /// Of them, reads.
    pub reads: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Submission → completion of each.
    pub latency: schedlab_core::stats::Histogram,
}

impl BlockLayer {
    /// The devices and files a spec declares, with the devices' elevators and tunables,
    /// and the page cache if the spec uses it.
    pub fn new(spec: &Spec) -> Result<BlockLayer, String> {
        let res = &spec.resources;
        let queues: Vec<BlockQueue> = res
            .devices
            .iter()
            .map(|d| {
                let mut elevator =
                    construct(&d.scheduler).map_err(|e| format!("device {}: {e}", d.name))?;
                elevator.set_rotational(d.model.rotational());
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
                    irq_ns: d.irq_ns,
                })
            })
            .collect::<Result<_, String>>()?;
        let files: Vec<submit::FileExtent> = (res.files.iter())
            .map(|f| submit::FileExtent::new(f.dev, f.offset, f.bytes))
            .collect();
        let cache = uses_page_cache(spec).then(|| {
            let mappings = (res.files.iter())
                .map(|f| pagecache::Mapping::new(f.dev, f.offset, f.bytes))
                .chain(
                    (queues.iter().enumerate())
                        .map(|(d, q)| pagecache::Mapping::new(d as u32, 0, q.device.size_bytes())),
                )
                .collect();
            let ra_pages = (queues.iter())
                .map(|q| q.limits.read_ahead_kb * 1024 / pagecache::PAGE_BYTES)
                .collect();
            let copy = (res.vm.copy_byte_ps)
                .unwrap_or(spec.machine.channel_costs[ChannelKind::Pipe.index()].byte_cost_ps);
            pagecache::PageCache::new(res.vm, copy, mappings, ra_pages)
        });
        let n = queues.len();
        Ok(BlockLayer {
            queues,
            files,
            cache,
            flusher_timer: vec![false; n],
            journal_head: vec![0; n],
            ..BlockLayer::default()
        })
    }

    /// `t`'s completed bios, if it submitted any.
    pub fn task_stats(&self, t: TaskId) -> Option<&TaskIoStats> {
        self.task_stats.get(t.idx()).filter(|s| s.requests > 0)
    }

    /// Count a completed bio for its task at `now`.
    fn account_bio(&mut self, bio: &Bio, now: Time) {
        let i = bio.task.idx();
        if self.task_stats.len() <= i {
            self.task_stats.resize_with(i + 1, TaskIoStats::default);
        }
        let s = &mut self.task_stats[i];
        s.requests += 1;
        match bio.op {
            IoOp::Read => {
                s.reads += 1;
                s.bytes_read += bio.bytes
            }
            IoOp::Write => s.bytes_written += bio.bytes,
        }
        s.latency.record(now - bio.submitted);
    }

    /// Whether `t` is a flusher thread.
    pub fn is_flusher(&self, t: TaskId) -> bool {
        self.flushers.contains(&t)
    }

    /// A device event popped: a completion (the tasks it wakes are left in `woken`) or
    /// an elevator timer.
    pub fn event(&mut self, ctx: &mut Ctx, dev: u32, data: u64) {
        if data == buffered::FLUSHER_TIMER {
            return self.flusher_timer_fired(dev);
        }
        self.device_event(ctx, dev, data);
        let now = ctx.now();
        for i in 0..self.ended.len() {
            let bio = self.ended[i];
            self.account_bio(&bio, now);
        }
        self.end_io();
    }

    fn device_event(&mut self, ctx: &mut Ctx, dev: u32, data: u64) {
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
        if q.irq_ns > 0 {
            self.irqs.push((rq.cpu, q.irq_ns));
        }
        q.end_bios(&rq, &mut self.ended);
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
    /// hears of it.
    fn end_bios(&mut self, rq: &Request, ended: &mut Vec<Bio>) {
        let mut b = rq.bio_head;
        while b != merge::NIL {
            let bio = self.bios[b as usize];
            ended.push(bio);
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
        let rq = *self.reqs[id.0 as usize]
            .as_ref()
            .expect("an inserted request");
        trace_rq_as(ctx, dev, &rq, RqTrace::Insert);
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

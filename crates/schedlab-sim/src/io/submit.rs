//! A task's `schedlab:io` op: where its requests go, and how it submits them and waits.
//!
//! An op of `count` requests with `depth` in flight behaves as a libaio program does
//! (`io_submit` then `io_getevents` with `min_nr` = 1, the way fio's libaio engine keeps
//! its queue full): the task submits `min(depth, count)` requests in one call — plugged
//! when they are more than two (fs/aio.c, Linux 6.1: `AIO_PLUG_THRESHOLD`) — and sleeps;
//! each completion that leaves requests still to submit wakes it, and it submits as many
//! as the depth allows in one call; when all are submitted it sleeps until the last one
//! completes, and the op is over. `count` = `depth` = 1 is one synchronous request
//! (`pread`/`pwrite` on an `O_DIRECT` file): submit, sleep until it completes.
//!
//! Offsets: `seq` starts right after the previous request of the same task on the same
//! device or file (0 for its first) and wraps to 0 when the request would not fit;
//! `random` is a uniformly random sector-aligned offset at which the request fits, drawn
//! from the run's seeded PRNG; a number is that byte offset. On a file, offsets are
//! relative to its first byte and requests stay inside it.

use schedlab_spec::model::{IoOffset, IoPrio, IoSpec, IoTarget, SECTOR_BYTES};

use super::merge::{Bio, NIL};
use super::{BlockLayer, Request};
use crate::ctx::Ctx;
use crate::types::TaskId;

/// `AIO_PLUG_THRESHOLD` (fs/aio.c, 6.1): `io_submit` plugs when it submits more.
pub const AIO_PLUG_THRESHOLD: u32 = 2;

/// What the engine does with a task after its I/O op ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoStep {
    /// The op is over: go on with the program.
    Next,
    /// The op is over once the task is woken: move on, then sleep.
    Sleep,
    /// Sleep, then run the op again (it has more to do).
    Retry,
}

/// A task's op in progress.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskIo {
    /// Requests still to submit.
    pub(super) left: u32,
    /// Requests submitted and not completed that it waits for.
    pub(super) in_flight: u32,
    /// A buffered read that waits for its pages: its byte offset in its mapping.
    pub(super) pending: Option<u64>,
    /// Where an `fsync` or `unlink` is.
    pub(super) sync: super::buffered::SyncStage,
}

/// A file: a contiguous extent of a device, and each task's sequential position in it.
pub(crate) struct FileExtent {
    pub dev: u32,
    pub offset: u64,
    pub bytes: u64,
    next_offset: Vec<u64>,
}

impl FileExtent {
    pub(crate) fn new(dev: u32, offset: u64, bytes: u64) -> FileExtent {
        FileExtent {
            dev,
            offset,
            bytes,
            next_offset: Vec::new(),
        }
    }
}

/// Where request of `bytes` bytes by `t` starts within a space of `size` bytes
/// (`schedlab_core::io::place`), and the space's sequential positions per task (grown on
/// a task's first sequential request; a task with none keeps none, so a fixed or random
/// request never starts one).
fn place(
    ctx: &mut Ctx,
    next_offset: &mut Vec<u64>,
    t: TaskId,
    size: u64,
    bytes: u64,
    offset: IoOffset,
) -> u64 {
    if offset == IoOffset::Sequential && next_offset.len() <= t.idx() {
        next_offset.resize(t.idx() + 1, 0);
    }
    let pos = next_offset.get_mut(t.idx());
    schedlab_core::io::place(pos, size, bytes, offset, || ctx.random())
}

impl BlockLayer {
    pub(super) fn task_io(&mut self, t: TaskId) -> &mut TaskIo {
        if self.tasks.len() <= t.idx() {
            self.tasks.resize(t.idx() + 1, TaskIo::default());
        }
        &mut self.tasks[t.idx()]
    }

    /// `t` runs its `schedlab:io` op `call`: a direct one submits what the depth allows
    /// (and always sleeps), a buffered one goes through the page cache.
    pub fn io(&mut self, ctx: &mut Ctx, t: TaskId, ioprio: IoPrio, call: &IoSpec) -> IoStep {
        if !call.direct {
            return self.buffered(ctx, t, ioprio, call);
        }
        if self.io_submit(ctx, t, ioprio, call) {
            IoStep::Sleep
        } else {
            IoStep::Retry
        }
    }

    /// Submit what the depth allows of direct op `call`; `true` when every request of
    /// the op is submitted.
    fn io_submit(&mut self, ctx: &mut Ctx, t: TaskId, ioprio: IoPrio, call: &IoSpec) -> bool {
        let st = self.task_io(t);
        if st.left == 0 && st.in_flight == 0 {
            st.left = call.count;
        }
        let n = call.depth.saturating_sub(st.in_flight).min(st.left);
        st.left -= n;
        st.in_flight += n;
        let done = st.left == 0;
        let plugged = n > AIO_PLUG_THRESHOLD && !self.plugged(t);
        if plugged {
            self.start_plug(t);
        }
        let now = ctx.now();
        for _ in 0..n {
            let (dev, start) = self.locate(ctx, t, call);
            let bio = Bio {
                task: t,
                op: call.op,
                ioprio,
                sync: true,
                sector: start / SECTOR_BYTES,
                bytes: call.bytes,
                submitted: now,
                next: NIL,
                mapping: NIL,
                waiter: true,
            };
            self.submit_bio(ctx, dev, bio);
        }
        if plugged {
            self.finish_plug(ctx, t);
        }
        done
    }

    /// The device and byte offset of `t`'s next request of `call`.
    pub(super) fn locate(&mut self, ctx: &mut Ctx, t: TaskId, call: &IoSpec) -> (u32, u64) {
        match call.target {
            IoTarget::Dev(dev) => {
                let q = &mut self.queues[dev as usize];
                let size = q.device.size_bytes();
                let start = place(ctx, &mut q.next_offset, t, size, call.bytes, call.offset);
                (dev, start)
            }
            IoTarget::File(f) => {
                let file = &mut self.files[f as usize];
                let at = place(
                    ctx,
                    &mut file.next_offset,
                    t,
                    file.bytes,
                    call.bytes,
                    call.offset,
                );
                (file.dev, file.offset + at)
            }
        }
    }

    /// `submit_bio` → `blk_mq_submit_bio`: `bio` for device `dev`, merged into a
    /// plugged or queued request if one takes it, else a new request on its task's plug
    /// or in the elevator (then the queue is run).
    pub(super) fn submit_bio(&mut self, ctx: &mut Ctx, dev: u32, bio: Bio) {
        let t = bio.task;
        let q = &mut self.queues[dev as usize];
        let b = q.alloc_bio(bio);
        let plugged = self.plugged(t);
        if bio.bytes > 0 {
            if plugged && self.try_plug_merge(t, dev, b) {
                return;
            }
            if self.queues[dev as usize].try_bio_merge(ctx, dev, b) {
                return;
            }
        }
        let q = &mut self.queues[dev as usize];
        let id = q.alloc(Request {
            task: t,
            op: bio.op,
            sector: bio.sector,
            bytes: bio.bytes,
            ioprio: bio.ioprio,
            sync: bio.sync,
            submitted: bio.submitted,
            cpu: ctx.tasks[t.idx()].cpu,
            issued: None,
            nr_bios: 1,
            flush: bio.bytes == 0,
            bio_head: b,
            bio_tail: b,
            plugged: false,
        });
        if plugged {
            self.add_to_plug(ctx, t, dev, id);
        } else {
            q.insert(ctx, dev, id);
            q.run(ctx, dev);
        }
    }

    /// The bios a completion ended: each one's task has one request fewer in flight, and
    /// is woken when it may submit more or has nothing left in flight (`io_getevents`).
    pub(super) fn end_io(&mut self) {
        for i in 0..self.ended.len() {
            let bio = self.ended[i];
            if bio.mapping != NIL {
                self.end_cached(&bio);
            }
            if !bio.waiter {
                continue;
            }
            let t = bio.task;
            let st = self.task_io(t);
            st.in_flight -= 1;
            if st.left > 0 || st.in_flight == 0 {
                self.woken.push(t);
            }
        }
        self.ended.clear();
    }
}

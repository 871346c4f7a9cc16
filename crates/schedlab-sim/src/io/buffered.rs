//! Buffered I/O, `fsync` and `unlink`: the block layer's side of the page cache
//! (`pagecache.rs` has the cache's rules).
//!
//! - A buffered op of `count` requests runs them one after the other (each a `read(2)` or
//!   `write(2)`): a write dirties its pages and goes on unless the writer is throttled; a
//!   read copies cached pages and goes on, or starts read-ahead (under a plug, as
//!   `read_pages` does) and sleeps until the pages it needs are in.
//! - The flusher of a device (a kernel thread the engine adds when a spec uses the page
//!   cache) runs a writeback pass when woken, under a plug.
//! - `fsync` (`ext4_sync_file` → `file_write_and_wait_range`, then the journal's cache
//!   flush): the task writes the file's dirty pages (synchronous writes at its own I/O
//!   priority), waits until none of the file's pages is under writeback (its own writes
//!   and the flusher's), then sends a FLUSH request with no data and waits for it. A
//!   dirty page still under writeback (rewritten while its last write is in flight) is
//!   written once that writeback ends (`WB_SYNC_ALL`: `wait_on_page_writeback`); here the
//!   task waits for the file's whole writeback, then writes what is dirty then in a
//!   second pass. The journal commit of the inode's metadata is not modelled.
//! - `unlink` of a file (ext4 with 4 KiB blocks, 32768-block — 128 MiB — block groups,
//!   flex_bg of 16 groups and 64-byte group descriptors: Linux kernel documentation,
//!   "ext4 Data Structures and Algorithms", Block Groups and Block Group Descriptors).
//!   Assumed model: freeing the file's blocks updates, for each block group it covers, the
//!   group's block bitmap and its group descriptor, plus the inode's table block; jbd2
//!   commits them as one transaction — a descriptor block, the updated blocks and a commit
//!   block written in sequence at the journal's head, then a cache flush (the commit
//!   block's `REQ_PREFLUSH`), all waited for by the unlinking task (as if the unlink were
//!   followed by the commit); then the checkpoint writes each updated block to its home
//!   (asynchronous writes, not waited for). Assumed places: the journal is a 128 MiB
//!   circular area in the middle of the device; a group's block bitmap is block
//!   64 + (g mod 16) of the first group of its flex group; group descriptors are in the
//!   table that starts at block 1 (64 to a block); the inode's table block is block 80
//!   of group 0. The file's cached pages are dropped (`truncate_inode_pages`: dirty ones
//!   are never written), and the file stays usable, as a new empty file in the same
//!   place.

use schedlab_spec::model::{IoOp, IoPrio, IoSpec, IoTarget, SECTOR_BYTES};

use super::merge::{Bio, NIL};
use super::pagecache::{PageCache, PageIo, ReadOutcome, PAGE_BYTES};
use super::submit::IoStep;
use super::BlockLayer;
use crate::ctx::Ctx;
use crate::event::EventKind;
use crate::types::TaskId;

/// Where an `fsync` or `unlink` is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SyncStage {
    #[default]
    Idle,
    /// `fsync`: waiting for the writeback of dirty pages it found under writeback, to
    /// write them then (`write_cache_pages` in `WB_SYNC_ALL` mode:
    /// `wait_on_page_writeback`).
    Rewriting,
    /// `fsync`: waiting for the file's writeback to drain.
    Writing,
    /// `unlink`: waiting for the journal writes.
    Journal,
    /// Waiting for the FLUSH request.
    Flushing,
}

/// The device event word of the flusher's timer: the one elevator-timer token elevators
/// may not use.
pub(super) const FLUSHER_TIMER: u64 = super::TIMER_FLAG | (super::MAX_ELEVATOR_TOKEN + 1);

/// ext4 with 4 KiB blocks: blocks per group (8 × the block size), flex group size,
/// group descriptors per block, the assumed journal size.
const GROUP_BLOCKS: u64 = 32768;
const FLEX_GROUPS: u64 = 16;
const DESCS_PER_BLOCK: u64 = 4096 / 64;
const JOURNAL_BYTES: u64 = 128 << 20;

impl BlockLayer {
    /// The page cache: present when the spec uses buffered I/O, `fsync` or `unlink`.
    fn cache(&mut self) -> &mut PageCache {
        self.cache
            .as_mut()
            .expect("a spec with buffered I/O has a page cache")
    }

    /// The page-cache mapping of an I/O target: a file's, or a device's own.
    fn mapping_of(&self, target: IoTarget) -> u32 {
        match target {
            IoTarget::File(f) => f,
            IoTarget::Dev(d) => self.files.len() as u32 + d,
        }
    }

    /// The CPU time a buffered op copies for: every byte of its requests.
    pub fn copy_ns(&self, spec: &IoSpec) -> u64 {
        let Some(c) = &self.cache else { return 0 };
        let bytes = spec.bytes.saturating_mul(spec.count as u64);
        (bytes as u128 * c.copy_byte_ps as u128 / 1000) as u64
    }

    /// `t` runs buffered op `call` (requests one after the other).
    pub(super) fn buffered(
        &mut self,
        ctx: &mut Ctx,
        t: TaskId,
        ioprio: IoPrio,
        call: &IoSpec,
    ) -> IoStep {
        let m = self.mapping_of(call.target);
        let dev = self.cache().mappings[m as usize].dev;
        let base = self.cache().mappings[m as usize].base;
        let st = self.task_io(t);
        if st.left == 0 && st.pending.is_none() {
            st.left = call.count;
        }
        while self.task_io(t).left > 0 {
            let start = match self.task_io(t).pending.take() {
                Some(s) => s,
                None => self.locate(ctx, t, call).1 - base,
            };
            let (first, end) = PageCache::page_range(start, call.bytes);
            match call.op {
                IoOp::Write => {
                    self.task_io(t).left -= 1;
                    let now = ctx.now();
                    if self.cache().write(m, first, end, now) {
                        self.arm_flusher(ctx, dev);
                    }
                    if self.cache().over_background() {
                        self.kick_flusher(dev);
                    }
                    if self.cache().over_limit() {
                        // balance_dirty_pages: wait for writeback.
                        self.cache().throttled.push(t);
                        self.kick_flusher(dev);
                        return if self.task_io(t).left == 0 {
                            IoStep::Sleep
                        } else {
                            IoStep::Retry
                        };
                    }
                }
                IoOp::Read => {
                    let outcome = self.cache().read(t, m, first, end);
                    // Synchronous and asynchronous read-ahead alike go out now.
                    let reads = std::mem::take(&mut self.cache().reads);
                    self.submit_pages(ctx, t, ioprio, IoOp::Read, true, &reads);
                    self.cache().reads = reads;
                    if outcome == ReadOutcome::Wait {
                        self.task_io(t).pending = Some(start);
                        self.cache().page_waiters.push(t);
                        return IoStep::Retry;
                    }
                    self.task_io(t).left -= 1;
                }
            }
        }
        IoStep::Next
    }

    /// Submit page runs as bios of `t` under one plug.
    fn submit_pages(
        &mut self,
        ctx: &mut Ctx,
        t: TaskId,
        ioprio: IoPrio,
        op: IoOp,
        sync: bool,
        ios: &[PageIo],
    ) {
        if ios.is_empty() {
            return;
        }
        let plugged = !self.plugged(t);
        if plugged {
            self.start_plug(t);
        }
        let now = ctx.now();
        for io in ios {
            let c = self.cache.as_ref().expect("a page cache");
            let dev = c.mappings[io.mapping as usize].dev;
            let bio = Bio {
                task: t,
                op,
                ioprio,
                sync,
                sector: c.sector_of(io.mapping, io.index),
                bytes: io.pages * PAGE_BYTES,
                submitted: now,
                next: NIL,
                mapping: io.mapping,
                waiter: false,
            };
            self.submit_bio(ctx, dev, bio);
        }
        if plugged {
            self.finish_plug(ctx, t);
        }
    }

    /// A page-cache bio completed: its pages are in or clean, and whoever waited for
    /// them may go on.
    pub(super) fn end_cached(&mut self, bio: &Bio) {
        let Some(c) = self.cache.as_mut() else { return };
        let m = bio.mapping;
        let first = c.page_of(m, bio.sector);
        let pages = PageCache::pages_of(bio.bytes);
        match bio.op {
            IoOp::Read => {
                c.end_read(m, first, pages);
                self.woken.append(&mut c.page_waiters);
            }
            IoOp::Write => {
                c.end_write(m, first, pages);
                if !c.mappings[m as usize].writeback_pending() {
                    self.woken.append(&mut c.mappings[m as usize].fsync_waiters);
                }
                if !c.over_limit() {
                    self.woken.append(&mut c.throttled);
                }
            }
        }
    }

    /// The flusher of `dev` runs (task `t`, at `ioprio`): a writeback pass, then its timer
    /// again while dirty pages remain.
    pub fn writeback(&mut self, ctx: &mut Ctx, t: TaskId, dev: u32, ioprio: IoPrio) {
        let now = ctx.now();
        let mut ios = std::mem::take(&mut self.wb_ios);
        ios.clear();
        self.cache().writeback_pass(dev, now, &mut ios);
        self.submit_pages(ctx, t, ioprio, IoOp::Write, false, &ios);
        self.wb_ios = ios;
        if self.cache().dev_dirty(dev) {
            self.arm_flusher(ctx, dev);
        }
    }

    /// `wb_wakeup_delayed`: wake `dev`'s flusher after `dirty_writeback_centisecs`, unless
    /// its timer is pending (or the period is 0: periodic writeback off).
    fn arm_flusher(&mut self, ctx: &mut Ctx, dev: u32) {
        let period = self.cache().vm.dirty_writeback_centisecs as u64 * 10_000_000;
        if period == 0 || self.flusher_timer[dev as usize] {
            return;
        }
        self.flusher_timer[dev as usize] = true;
        ctx.push(
            ctx.now() + period,
            EventKind::Device {
                dev,
                data: FLUSHER_TIMER,
            },
        );
    }

    /// Wake `dev`'s flusher (the engine does, from `kicks`).
    pub(super) fn kick_flusher(&mut self, dev: u32) {
        if !self.kicks.contains(&dev) {
            self.kicks.push(dev);
        }
    }

    /// The flusher's timer fired.
    pub(super) fn flusher_timer_fired(&mut self, dev: u32) {
        self.flusher_timer[dev as usize] = false;
        self.kick_flusher(dev);
    }

    /// `t` runs `fsync` on file `f` at `ioprio`.
    pub fn fsync(&mut self, ctx: &mut Ctx, t: TaskId, ioprio: IoPrio, f: u32) -> IoStep {
        let m = self.mapping_of(IoTarget::File(f));
        let dev = self.files[f as usize].dev;
        loop {
            match self.task_io(t).sync {
                SyncStage::Idle | SyncStage::Rewriting => {
                    let again = self.task_io(t).sync == SyncStage::Rewriting;
                    if again && self.cache().mappings[m as usize].writeback_pending() {
                        self.cache().mappings[m as usize].fsync_waiters.push(t);
                        return IoStep::Retry;
                    }
                    let mut ios = std::mem::take(&mut self.wb_ios);
                    ios.clear();
                    let skipped = self.cache().write_mapping(m, &mut ios, |_, _| false);
                    self.submit_pages(ctx, t, ioprio, IoOp::Write, true, &ios);
                    self.wb_ios = ios;
                    self.task_io(t).sync = if skipped && !again {
                        SyncStage::Rewriting
                    } else {
                        SyncStage::Writing
                    };
                }
                SyncStage::Writing => {
                    if self.cache().mappings[m as usize].writeback_pending() {
                        self.cache().mappings[m as usize].fsync_waiters.push(t);
                        return IoStep::Retry;
                    }
                    self.submit_flush(ctx, t, ioprio, dev);
                    return IoStep::Retry;
                }
                SyncStage::Journal | SyncStage::Flushing => {
                    self.task_io(t).sync = SyncStage::Idle;
                    return IoStep::Next;
                }
            }
        }
    }

    /// A FLUSH request (`REQ_OP_FLUSH`, no data) of `t`'s, which it waits for.
    fn submit_flush(&mut self, ctx: &mut Ctx, t: TaskId, ioprio: IoPrio, dev: u32) {
        self.task_io(t).sync = SyncStage::Flushing;
        self.task_io(t).in_flight += 1;
        let bio = Bio {
            task: t,
            op: IoOp::Write,
            ioprio,
            sync: true,
            sector: 0,
            bytes: 0,
            submitted: ctx.now(),
            next: NIL,
            mapping: NIL,
            waiter: true,
        };
        self.submit_bio(ctx, dev, bio);
    }

    /// `t` runs `unlink` on file `f` at `ioprio` (the model in the module's header).
    pub fn unlink(&mut self, ctx: &mut Ctx, t: TaskId, ioprio: IoPrio, f: u32) -> IoStep {
        let dev = self.files[f as usize].dev;
        match self.task_io(t).sync {
            SyncStage::Idle => {
                let m = self.mapping_of(IoTarget::File(f));
                self.cache().drop_mapping(m);
                let homes = self.metadata_blocks(f);
                let journal = self.journal_area(dev);
                // Descriptor block, the updated blocks, the commit block.
                let n = homes.len() as u64 + 2;
                let at = self.journal_head[dev as usize];
                self.journal_head[dev as usize] = (at + n * 4096) % JOURNAL_BYTES;
                self.start_plug(t);
                let now = ctx.now();
                for i in 0..n {
                    let byte = journal + (at + i * 4096) % JOURNAL_BYTES;
                    self.task_io(t).in_flight += 1;
                    self.submit_bio(ctx, dev, meta_bio(t, ioprio, byte, true, now));
                }
                self.finish_plug(ctx, t);
                self.task_io(t).sync = SyncStage::Journal;
                IoStep::Retry
            }
            SyncStage::Journal => {
                self.submit_flush(ctx, t, ioprio, dev);
                IoStep::Retry
            }
            SyncStage::Rewriting | SyncStage::Writing | SyncStage::Flushing => {
                // The commit is done: jbd2 checkpoints the blocks to their homes.
                let homes = self.metadata_blocks(f);
                let now = ctx.now();
                self.start_plug(t);
                for &byte in &homes {
                    let mut bio = meta_bio(t, ioprio, byte, false, now);
                    bio.waiter = false;
                    self.submit_bio(ctx, dev, bio);
                }
                self.finish_plug(ctx, t);
                self.task_io(t).sync = SyncStage::Idle;
                IoStep::Next
            }
        }
    }

    /// The home bytes of the metadata blocks deleting file `f` updates: block bitmaps of
    /// its groups, their descriptor blocks, the inode's table block (ascending).
    fn metadata_blocks(&self, f: u32) -> Vec<u64> {
        let file = &self.files[f as usize];
        let group_bytes = GROUP_BLOCKS * 4096;
        let g0 = file.offset / group_bytes;
        let g1 = (file.offset + file.bytes - 1) / group_bytes;
        let mut out = Vec::new();
        for d in g0 / DESCS_PER_BLOCK..=g1 / DESCS_PER_BLOCK {
            out.push((1 + d) * 4096);
        }
        out.push(80 * 4096);
        for g in g0..=g1 {
            let flex_first = g - g % FLEX_GROUPS;
            out.push((flex_first * GROUP_BLOCKS + 64 + g % FLEX_GROUPS) * 4096);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The first byte of `dev`'s journal: 128 MiB in the middle of the device.
    fn journal_area(&self, dev: u32) -> u64 {
        let size = self.queues[dev as usize].device.size_bytes();
        (size / 2).saturating_sub(JOURNAL_BYTES / 2) / 4096 * 4096
    }
}

/// A 4 KiB metadata write of `t`'s at `byte`.
fn meta_bio(t: TaskId, ioprio: IoPrio, byte: u64, sync: bool, now: crate::types::Time) -> Bio {
    Bio {
        task: t,
        op: IoOp::Write,
        ioprio,
        sync,
        sector: byte / SECTOR_BYTES,
        bytes: 4096,
        submitted: now,
        next: NIL,
        mapping: NIL,
        waiter: true,
    }
}

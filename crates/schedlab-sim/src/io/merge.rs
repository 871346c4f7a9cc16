//! Request merging, as Linux 6.1's block layer does it (block/elevator.c `elv_merge`,
//! `elv_attempt_insert_merge`, `elv_merged_request`, `elv_merge_requests`; block/blk-merge.c
//! `blk_rq_merge_ok`, `blk_try_merge`, `bio_attempt_back_merge`,
//! `bio_attempt_front_merge`, `ll_back_merge_fn`, `attempt_merge`, `attempt_back_merge`,
//! `attempt_front_merge`, `blk_mq_sched_try_merge`).
//!
//! A new bio (one `schedlab:io` request) is merged into a queued request, in this order
//! (`elv_merge`): nothing with `queue/nomerges` = 2; the one-hit cache `last_merge` (the
//! last request that merged or was queued first), back or front; only that with
//! `nomerges` = 1; a back merge into a request whose end sector is the bio's start, found
//! in the request hash (`elv_rqhash_find`); else a candidate the elevator offers
//! (`request_merge`, front merges in mq-deadline and BFQ). A bio merges only into a
//! request still queued (not dispatched), with the same direction and I/O priority
//! (`blk_rq_merge_ok`), and only if the result fits `max_sectors_kb` (`ll_back_merge_fn`,
//! `ll_front_merge_fn`); when the one candidate found fails those checks the bio starts a
//! request of its own (the kernel does not look for another).
//!
//! After a bio merge the grown request may now touch its neighbour: a back merge tries
//! the request that starts at its new end (`attempt_back_merge`), a front merge the one
//! that ends at its new start (`attempt_front_merge`); two requests merge under the same
//! rules (`attempt_merge`: same direction and priority, adjacent, within
//! `max_sectors_kb`), the later one's bios are appended, the earlier submission time is
//! kept, and the elevator is told (`requests_merged`) so that it drops the one that goes
//! away; otherwise it hears of the grown request (`request_merged`). A new request is
//! first offered to the queued requests that end where it starts, repeatedly
//! (`elv_attempt_insert_merge`), before it is inserted.
//!
//! Merging two queued requests asks the elevator to forget one, so it happens only with
//! elevators that say they can (`IoScheduler::merges_requests`; the kernel's mq-deadline
//! and BFQ, the 3.12 elevators — not `none` or kyber, which have no `requests_merged`).
//! The kernel finds the neighbour through the elevator's sector-sorted tree
//! (`elv_rb_latter_request`, `elv_rb_former_request`); the block layer here finds it in a
//! start-sector index, which gives the same request whenever queued requests do not
//! overlap.
//!
//! With `none`, queued requests stand for the software queue (`ctx->rq_lists`), where
//! 6.1 back-merges bios through `blk_bio_list_merge`; that function also front-merges and
//! looks at the last 8 requests only, which is not modelled. Every candidate is also
//! offered to the elevator's `allow_merge` (`elv_bio_merge_ok`), which CFQ and BFQ use to
//! keep a bio out of another process's queue; merges on a task's plug are not
//! (`blk_attempt_plug_merge` asks no elevator). Not modelled: discard merges, segment
//! limits (`max_segments`) and the splitting of a bio larger than `max_sectors_kb`.

use std::collections::HashMap;

use schedlab_spec::model::{IoOp, IoPrio, SECTOR_BYTES};

use super::{BlockQueue, IoCtx, RqId};
use crate::ctx::Ctx;
use crate::types::TaskId;

/// No index (end of a chain, no bio).
pub(crate) const NIL: u32 = u32::MAX;

/// Which sector index to search: end sectors (`elv_rqhash`) or start sectors.
#[derive(Clone, Copy)]
enum Index {
    End,
    Start,
}

/// How a bio or request joined a queued request (`enum elv_merge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MergeKind {
    /// Appended at the end (`ELEVATOR_BACK_MERGE`): the start sector is unchanged.
    Back,
    /// Prepended (`ELEVATOR_FRONT_MERGE`): the request now starts earlier.
    Front,
}

/// `queue/nomerges` (block/blk-sysfs.c `queue_nomerges_store`): 0 merges, 1 only the
/// one-hit cache (`QUEUE_FLAG_NOXMERGES`), 2 none (`QUEUE_FLAG_NOMERGES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NoMerges {
    #[default]
    Merge,
    OneHitOnly,
    Never,
}

impl NoMerges {
    /// The kernel's reading of the sysfs value: 2 sets NOMERGES, any other non-zero value
    /// NOXMERGES.
    pub fn from_sysfs(v: u64) -> NoMerges {
        match v {
            0 => NoMerges::Merge,
            2 => NoMerges::Never,
            _ => NoMerges::OneHitOnly,
        }
    }
}

/// The queue limits merging obeys (`struct queue_limits`), and the queue's read-ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimits {
    pub nomerges: NoMerges,
    /// `max_sectors_kb` in sectors: no merge makes a request larger.
    pub max_sectors: u64,
    /// `read_ahead_kb` (`bdi->ra_pages` in KiB): the largest read-ahead window.
    pub read_ahead_kb: u64,
}

/// `VM_READAHEAD_PAGES` (include/linux/mm.h, 6.1): 128 KiB.
pub const DEFAULT_READ_AHEAD_KB: u64 = 128;

/// `BLK_DEF_MAX_SECTORS` (include/linux/blkdev.h, 6.1): 2560 sectors = 1280 KiB, the
/// `max_sectors_kb` of a disk that states no smaller limit (most SATA disks).
pub const DEFAULT_MAX_SECTORS: u64 = 2560;

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            nomerges: NoMerges::Merge,
            max_sectors: DEFAULT_MAX_SECTORS,
            read_ahead_kb: DEFAULT_READ_AHEAD_KB,
        }
    }
}

impl QueueLimits {
    /// Apply a queue tunable (`queue/<name>` in sysfs); `Ok(false)` if `name` is not one.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "queue/nomerges" => {
                let v: u64 = value
                    .parse()
                    .map_err(|_| format!("'{value}' is not a non-negative integer"))?;
                self.nomerges = NoMerges::from_sysfs(v);
            }
            "queue/max_sectors_kb" => {
                // queue_max_sectors_store refuses less than a page (4 KiB).
                let kb: u64 = value
                    .parse()
                    .ok()
                    .filter(|&kb| kb >= 4)
                    .ok_or_else(|| format!("'{value}' is not a size in KiB of at least 4"))?;
                self.max_sectors = kb * 1024 / SECTOR_BYTES;
            }
            "queue/read_ahead_kb" => {
                self.read_ahead_kb = value
                    .parse()
                    .map_err(|_| format!("'{value}' is not a size in KiB"))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// One bio: a task's request as submitted, waiting inside a (possibly merged) request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bio {
    /// The task woken when it completes.
    pub task: TaskId,
    pub op: IoOp,
    /// Its submitter's I/O priority (`bio_prio`).
    pub ioprio: IoPrio,
    /// Synchronous (`REQ_SYNC`).
    pub sync: bool,
    pub sector: u64,
    pub bytes: u64,
    /// When its task submitted it.
    pub submitted: crate::types::Time,
    /// The next bio of its request.
    pub(crate) next: u32,
    /// The page-cache mapping whose pages it reads or writes (`NIL`: direct I/O).
    pub(crate) mapping: u32,
    /// Its task sleeps until it completes (direct I/O, `fsync`'s flush, `unlink`'s
    /// writes); a page-cache bio wakes whoever waits for its pages instead.
    pub(crate) waiter: bool,
}

/// Requests keyed by a sector, newest first within a key (the kernel's `hash_add` puts an
/// entry at the head of its bucket): `elv_rqhash` by end sector, and the start-sector
/// index that stands for the elevator's sorted neighbours. Chained through the request
/// slots, so adding and removing allocate nothing once the table has grown.
#[derive(Default)]
pub(crate) struct SectorHash {
    heads: HashMap<u64, u32>,
    links: Vec<Link>,
}

#[derive(Clone, Copy)]
struct Link {
    key: u64,
    next: u32,
    hashed: bool,
}

impl SectorHash {
    pub(crate) fn add(&mut self, key: u64, id: RqId) {
        let i = id.0 as usize;
        if self.links.len() <= i {
            self.links.resize(
                i + 1,
                Link {
                    key: 0,
                    next: NIL,
                    hashed: false,
                },
            );
        }
        debug_assert!(!self.links[i].hashed);
        let next = self.heads.insert(key, id.0).unwrap_or(NIL);
        self.links[i] = Link {
            key,
            next,
            hashed: true,
        };
    }

    pub(crate) fn del(&mut self, id: RqId) {
        let Some(&Link {
            key, next, hashed, ..
        }) = self.links.get(id.0 as usize)
        else {
            return;
        };
        if !hashed {
            return;
        }
        self.links[id.0 as usize].hashed = false;
        let head = self.heads[&key];
        if head == id.0 {
            if next == NIL {
                self.heads.remove(&key);
            } else {
                self.heads.insert(key, next);
            }
            return;
        }
        let mut at = head;
        while self.links[at as usize].next != id.0 {
            at = self.links[at as usize].next;
        }
        self.links[at as usize].next = next;
    }

    /// Move `id` to `key` (`elv_rqhash_reposition`).
    pub(crate) fn reposition(&mut self, key: u64, id: RqId) {
        self.del(id);
        self.add(key, id);
    }

    /// The newest request under `key`.
    pub(crate) fn find(&self, key: u64) -> Option<RqId> {
        self.heads.get(&key).map(|&i| RqId(i))
    }
}

/// `blk_rq_merge_ok` and `blk_try_merge`: how `bio` would join `rq` (same direction and
/// priority, adjacent), if at all.
pub(super) fn bio_joins(rq: &super::Request, bio: &Bio) -> Option<MergeKind> {
    if rq.op != bio.op || rq.ioprio != bio.ioprio || rq.flush || bio.bytes == 0 {
        return None;
    }
    if rq.end_sector() == bio.sector {
        Some(MergeKind::Back)
    } else if rq.sector.checked_sub(bio.bytes / SECTOR_BYTES) == Some(bio.sector) {
        Some(MergeKind::Front)
    } else {
        None
    }
}

impl BlockQueue {
    /// A queued request: in the elevator, not yet dispatched.
    fn queued(&self, id: RqId) -> Option<&super::Request> {
        self.reqs
            .get(id.0 as usize)?
            .as_ref()
            .filter(|r| r.issued.is_none() && !r.plugged)
    }

    /// Put bio `b` into request `id` at its end or its front (`bio_attempt_back_merge`,
    /// `bio_attempt_front_merge`), if the request stays within `max_sectors_kb`
    /// (`ll_back_merge_fn`, `ll_front_merge_fn`).
    pub(super) fn append_bio(&mut self, id: RqId, b: u32, kind: MergeKind) -> bool {
        let bio = self.bios[b as usize];
        let rq = self.reqs[id.0 as usize].as_mut().expect("a live request");
        if rq.nr_sectors() + bio.bytes / SECTOR_BYTES > self.limits.max_sectors {
            return false;
        }
        rq.bytes += bio.bytes;
        rq.nr_bios += 1;
        match kind {
            MergeKind::Back => {
                self.bios[rq.bio_tail as usize].next = b;
                rq.bio_tail = b;
            }
            MergeKind::Front => {
                self.bios[b as usize].next = rq.bio_head;
                rq.bio_head = b;
                rq.sector = bio.sector;
            }
        }
        self.stats.merges += 1;
        true
    }

    /// `elv_merge`: the queued request a new bio could join, and how.
    fn bio_merge_candidate(
        &mut self,
        ctx: &mut Ctx,
        dev: u32,
        bio: &Bio,
    ) -> Option<(RqId, MergeKind)> {
        if self.limits.nomerges == NoMerges::Never {
            return None;
        }
        let last = self.last_merge;
        let hashed = if self.limits.nomerges == NoMerges::OneHitOnly {
            None
        } else {
            self.find_queued(Index::End, bio.sector)
        };
        let io = IoCtx {
            reqs: &self.reqs,
            now: ctx.now(),
            dev,
            events: ctx,
        };
        // elv_bio_merge_ok: blk_rq_merge_ok, then the elevator's allow_merge.
        let fits = |elevator: &dyn super::IoScheduler, id: RqId| {
            let r = io.reqs.get(id.0 as usize)?.as_ref();
            let kind = bio_joins(r.filter(|r| r.issued.is_none() && !r.plugged)?, bio)?;
            elevator.allow_merge(&io, id, bio).then_some(kind)
        };
        if let Some(last) = last {
            if let Some(kind) = fits(self.elevator.as_ref(), last) {
                return Some((last, kind));
            }
        }
        if self.limits.nomerges == NoMerges::OneHitOnly {
            return None;
        }
        if let Some(id) = hashed {
            if fits(self.elevator.as_ref(), id) == Some(MergeKind::Back) {
                return Some((id, MergeKind::Back));
            }
        }
        let (id, kind) = self.elevator.request_merge(&io, bio)?;
        (fits(self.elevator.as_ref(), id) == Some(kind)).then_some((id, kind))
    }

    /// `blk_mq_sched_try_merge`: merge bio `b` into a queued request if one takes it;
    /// `false` if the bio needs a request of its own.
    pub(super) fn try_bio_merge(&mut self, ctx: &mut Ctx, dev: u32, b: u32) -> bool {
        let bio = self.bios[b as usize];
        let Some((id, kind)) = self.bio_merge_candidate(ctx, dev, &bio) else {
            return false;
        };
        if !self.append_bio(id, b, kind) {
            return false;
        }
        self.rehash(id);
        let merged = self.merges_requests
            && match kind {
                MergeKind::Back => {
                    let end = self.request(id).end_sector();
                    self.find_queued(Index::Start, end)
                        .is_some_and(|next| self.attempt_merge(ctx, dev, id, next))
                }
                MergeKind::Front => {
                    let start = self.request(id).sector;
                    self.find_queued(Index::End, start)
                        .is_some_and(|prev| self.attempt_merge(ctx, dev, prev, id))
                }
            };
        if !merged {
            // elv_merged_request
            let mut io = IoCtx {
                reqs: &self.reqs,
                now: ctx.now(),
                dev,
                events: ctx,
            };
            self.elevator.request_merged(&mut io, id, kind);
            self.last_merge = Some(id);
        }
        true
    }

    /// `attempt_merge`: append queued request `next` to queued request `rq` if they are
    /// adjacent and compatible; `next` goes away.
    fn attempt_merge(&mut self, ctx: &mut Ctx, dev: u32, rq: RqId, next: RqId) -> bool {
        if rq == next {
            return false;
        }
        let (Some(a), Some(b)) = (self.queued(rq), self.queued(next)) else {
            return false;
        };
        if a.op != b.op
            || a.flush
            || b.flush
            || a.ioprio != b.ioprio
            || a.end_sector() != b.sector
            || a.nr_sectors() + b.nr_sectors() > self.limits.max_sectors
        {
            return false;
        }
        let b = *b;
        let a = self.reqs[rq.0 as usize].as_mut().expect("a queued request");
        self.bios[a.bio_tail as usize].next = b.bio_head;
        a.bio_tail = b.bio_tail;
        a.bytes += b.bytes;
        a.nr_bios += b.nr_bios;
        a.submitted = a.submitted.min(b.submitted);
        a.sync |= b.sync;
        // elv_merge_requests: the elevator drops `next` while it can still see it.
        let mut io = IoCtx {
            reqs: &self.reqs,
            now: ctx.now(),
            dev,
            events: ctx,
        };
        self.elevator.requests_merged(&mut io, rq, next);
        self.rehash(rq);
        self.last_merge = Some(rq);
        self.stats.merges += 1;
        self.unhash(next);
        self.reqs[next.0 as usize] = None;
        self.free.push(next.0);
        true
    }

    /// `elv_attempt_insert_merge`: merge new request `rq` into the queued requests that
    /// end where it starts, repeatedly; `true` if it went away.
    pub(super) fn try_insert_merge(&mut self, ctx: &mut Ctx, dev: u32, mut rq: RqId) -> bool {
        if !self.merges_requests || self.limits.nomerges == NoMerges::Never {
            return false;
        }
        if let Some(last) = self.last_merge {
            if self.attempt_merge(ctx, dev, last, rq) {
                return true;
            }
        }
        if self.limits.nomerges == NoMerges::OneHitOnly {
            return false;
        }
        let mut merged = false;
        while let Some(prev) = self.find_queued(Index::End, self.request(rq).sector) {
            if !self.attempt_merge(ctx, dev, prev, rq) {
                break;
            }
            merged = true;
            rq = prev;
        }
        merged
    }

    /// Index a request just queued (`elv_rqhash_add`; the first one fills the one-hit
    /// cache, as the elevators' `insert_requests` do).
    pub(super) fn hash_queued(&mut self, id: RqId) {
        let rq = self.request(id);
        if rq.flush {
            // A cache flush is never merged (`rq_mergeable`): not hashed.
            return;
        }
        let (start, end) = (rq.sector, rq.end_sector());
        self.by_end.add(end, id);
        self.by_start.add(start, id);
        // A dispatched request leaves the cache (mq-deadline's `deadline_remove_request`);
        // here it is found stale instead.
        if self
            .last_merge
            .is_none_or(|last| self.queued(last).is_none())
        {
            self.last_merge = Some(id);
        }
    }

    /// Forget a request that leaves the queue (dispatched or merged away).
    pub(super) fn unhash(&mut self, id: RqId) {
        self.by_end.del(id);
        self.by_start.del(id);
        if self.last_merge == Some(id) {
            self.last_merge = None;
        }
    }

    /// The newest queued request under `key` in an index; dispatched ones met on the way
    /// are dropped from it (`elv_rqhash_find` drops requests no longer mergeable).
    fn find_queued(&mut self, index: Index, key: u64) -> Option<RqId> {
        loop {
            let id = self.index(index).find(key)?;
            if self.queued(id).is_some() {
                return Some(id);
            }
            self.index(index).del(id);
        }
    }

    fn index(&mut self, index: Index) -> &mut SectorHash {
        match index {
            Index::End => &mut self.by_end,
            Index::Start => &mut self.by_start,
        }
    }

    fn rehash(&mut self, id: RqId) {
        let rq = self.request(id);
        let (start, end) = (rq.sector, rq.end_sector());
        self.by_end.reposition(end, id);
        self.by_start.reposition(start, id);
    }

    fn request(&self, id: RqId) -> &super::Request {
        self.reqs[id.0 as usize].as_ref().expect("a live request")
    }
}

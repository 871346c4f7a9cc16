//! `cfq`: Completely Fair Queueing, the default Linux I/O scheduler of the 3.x series.
//!
//! Source: block/cfq-iosched.c of Linux 3.10, as kept in the AndreiLux/ref-3.10 tree (no
//! 3.12 tree was at hand to read; 3.12's file may differ from 3.10's in details not
//! checked here; CFQ was removed in Linux 5.0), configured with CONFIG_CFQ_GROUP_IOSCHED
//! (without it `cfq_init` sets `group_idle` to 0). Functions modelled, by their names
//! there:
//! - queues: `cfq_get_queue` / `cfq_async_queue_prio` (one sync queue per process, async
//!   queues shared per class and level), `cfq_init_cfqq`, `cfq_init_prio_data` (the idle
//!   class runs at level 7 and never idles), `check_ioprio_changed`;
//! - requests: `cfq_insert_request` (FIFO expiry `fifo_expire_sync`/`_async`),
//!   `cfq_add_rq_rb`, `cfq_remove_request`, `cfq_choose_req` (the one-way elevator with
//!   short back seeks of at most `back_seek_max` KiB at `back_seek_penalty` times the cost),
//!   `cfq_find_next_rq`, `cfq_check_fifo` (one FIFO check per slice);
//! - service trees: `cfq_service_tree_add` (key = `cfq_slice_offset` + now − residual slice;
//!   idle-class queues `CFQ_IDLE_DELAY` after the last; preempting queues one second before
//!   the first), `cfq_add_cfqq_rr`, `cfq_del_cfqq_rr`, `cfq_resort_rr_list`;
//! - slices: `cfq_prio_slice` (base + base/5 × (4 − level), base `slice_sync` 100 ms or
//!   `slice_async` 40 ms), `cfq_scaled_cfqq_slice` (low_latency: slices shrunk so that
//!   the average busy queues of the class fit in `target_latency`, not below
//!   2 × `slice_idle` scaled likewise), `cfq_group_get_avg_queues`, `cfq_set_prio_slice`
//!   (the slice starts at the queue's first completion), `cfq_slice_used`;
//! - selection: `cfq_select_queue`, `choose_wl_class_and_type` (RT before BE before IDLE;
//!   workload types SYNC, SYNC_NOIDLE, ASYNC with workload slices out of
//!   `target_latency`), `cfq_choose_wl_type`, `cfq_choose_cfqg` (saved workload state),
//!   `cfq_set_active_queue`, `__cfq_slice_expired` (residual slice kept on a time-out);
//! - dispatch: `cfq_dispatch_requests`, `cfq_dispatch_request`, `cfq_may_dispatch`
//!   (`quantum`, async held back while sync I/O is in flight and ramped up after delayed
//!   sync I/O, one request at a time for the idle class), `cfq_prio_to_maxrq`
//!   (`slice_async_rq`), `cfq_slice_used_soon`;
//! - idling: `cfq_should_idle`, `cfq_arm_slice_timer` (`slice_idle`, `group_idle`),
//!   `cfq_idle_slice_timer`, `cfq_should_wait_busy`, `cfq_update_idle_window`,
//!   `cfq_update_io_thinktime` / `__cfq_update_io_thinktime`, `cfq_update_io_seektime`
//!   (`CFQQ_SEEKY`);
//! - preemption: `cfq_rq_enqueued`, `cfq_should_preempt`, `cfq_preempt_queue`;
//! - completion: `cfq_completed_request`;
//! - tunables: `cfq_attrs` (sysfs `queue/iosched/*`, clamped as `STORE_FUNCTION` does).
//!
//! Simplifications:
//! - Time is counted in jiffies at HZ = 1000 (the kernel's tunables are jiffies, shown in
//!   ms); the idle timer fires on a jiffy boundary as `mod_timer` does.
//! - One blkio group (the root group, `cfq_group_slice` = `target_latency`): no blkio
//!   cgroups, so the group service tree, `vdisktime` and weights have nothing to order;
//!   what the root group does for its queues is kept (its busy-queue count for
//!   `group_idle` and `cfq_should_wait_busy`, its think time, its saved workload).
//! - The device's `queue/rotational` flag is read as `blk_queue_nonrot`: on a
//!   non-rotational device that queues (`cfq_update_hw_tag`: 5 requests seen in flight;
//!   until 50 samples say otherwise it is taken to) a queue's idle window does not make
//!   CFQ idle and no idle slice is armed (`cfq_should_idle`, `cfq_arm_slice_timer`), and a
//!   small request, not a far one, counts as a seek (`cfq_update_io_seektime`). What
//!   `hw_tag` does to group charging is left out (one group).
//! - Close cooperators (`cfq_close_cooperator`, the prio trees, queue merging and
//!   splitting) and `REQ_PRIO` / `REQ_NOIDLE` requests are not modelled; a process is
//!   never seen to exit (`ioc->active_ref`), so idling for an exited process lasts its
//!   `slice_idle`.
//! - Merging: the block layer merges bios and requests (`io/merge.rs`); CFQ offers the
//!   request of the submitter's queue that starts where a bio ends (`cfq_merge`), keeps a
//!   bio out of another process's queue and a sync bio out of an async request
//!   (`cfq_allow_merge`), re-sorts a request after a front merge (`cfq_merged_request`)
//!   and drops a request merged into another (`cfq_merged_requests`). The block layer
//!   offers every new request to the queued one it continues (6.1's
//!   `elv_attempt_insert_merge`, which asks no elevator); 3.12 does so only for requests
//!   coming from a plug (`ELEVATOR_INSERT_SORT_MERGE`), so here two processes' requests
//!   may merge where 3.12 keeps them apart.
//! - The idle class waits for no grace period: `CFQ_IDLE_DELAY` (200 ms) is only an
//!   offset of idle-class queues' keys on their tree; an idle-class queue is served as soon
//!   as no RT or BE queue is busy, and a busy queue includes the active one while the disk
//!   idles for it (`choose_wl_class_and_type`, `cfq_service_tree_add`).
//!
//! Complexity: O(queues on a service tree + requests in one queue) per operation.

use schedlab_spec::model::{IoPrio, IoPrioClass, IOPRIO_LEVELS, SECTOR_BYTES};

use super::process_queues::AsyncQueues;
use super::seek::{self, BackSeek};
use super::service_tree::ServiceTree;
use super::sorted_fifo::SortedFifo;
use super::task_table::TaskTable;
use super::{Bio, IoCtx, IoSchedInfo, IoScheduler, MergeKind, Request, RqId};
use crate::types::{TaskId, Time};

/// Jiffies per second the model counts in.
const HZ: i64 = 1000;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ as u64;
/// The jiffy count at time 0: far from 0, so that 0 stays "not set" as in the kernel.
const JIFFIES_AT_ZERO: i64 = 1 << 32;
/// `CFQ_IDLE_DELAY`: an idle-class queue's key offset from the end of its tree.
const IDLE_DELAY: i64 = HZ / 5;
/// `CFQ_MIN_TT`: the shortest workload slice.
const MIN_TT: i64 = 2;
/// `CFQ_SLICE_SCALE`.
const SLICE_SCALE: i64 = 5;
/// `cfq_hist_divisor`.
const HIST_DIVISOR: u32 = 4;
/// `CFQQ_SEEK_THR`: a request farther than this (sectors) from the last is a seek.
const SEEK_THR: u64 = 8 * 100;
/// `CFQQ_SECT_THR_NONROT`: on a non-rotational device a request smaller than this
/// (sectors) is a seek.
const SECT_THR_NONROT: u64 = 2 * 32;
/// `CFQ_HW_QUEUE_MIN`.
const HW_QUEUE_MIN: u32 = 5;
/// `CFQQ_CLOSE_THR`: a request this close (sectors) to the head is as good as sequential.
const CLOSE_THR: u64 = 8 * 1024;
/// `PAGE_CACHE_SIZE`.
const PAGE_BYTES: u64 = 4096;
/// The one sort list and FIFO of a queue (a queue holds both directions): the shared
/// [`SortedFifo`]'s first pair; FIFO expiries are kept in jiffies.
const LIST: usize = 0;
/// Width of an idle-timer token (`IoCtx::arm_timer` takes 35 bits).
const TOKEN_MASK: u64 = (1 << 35) - 1;

/// The sysfs tunables (`cfq_attrs`), times in jiffies (= ms at HZ 1000).
#[derive(Clone, Debug)]
struct Tunables {
    quantum: u32,
    /// By `rq_is_sync`: [async, sync].
    fifo_expire: [i64; 2],
    /// KiB.
    back_max: u64,
    back_penalty: u64,
    /// By sync: [async, sync].
    slice: [i64; 2],
    slice_async_rq: u32,
    slice_idle: i64,
    group_idle: i64,
    low_latency: bool,
    target_latency: i64,
}

impl Default for Tunables {
    /// The defaults at the top of cfq-iosched.c.
    fn default() -> Self {
        Tunables {
            quantum: 8,
            fifo_expire: [HZ / 4, HZ / 8],
            back_max: 16 * 1024,
            back_penalty: 2,
            slice: [HZ / 25, HZ / 10],
            slice_async_rq: 2,
            slice_idle: HZ / 125,
            group_idle: HZ / 125,
            low_latency: true,
            target_latency: HZ * 3 / 10,
        }
    }
}

/// `enum wl_class_t`, in the kernel's order (it indexes `busy_queues_avg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WlClass {
    Be = 0,
    Rt = 1,
    Idle = 2,
}

/// `enum wl_type_t`, in the kernel's order (`cfq_choose_wl_type` scans it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WlType {
    Async = 0,
    SyncNoidle = 1,
    Sync = 2,
}

const WL_TYPES: [WlType; 3] = [WlType::Async, WlType::SyncNoidle, WlType::Sync];

/// `struct cfq_ttime`: a decaying average of the time between a completion and the next
/// request, in jiffies, with its sample weight.
#[derive(Clone, Copy, Debug, Default)]
struct ThinkTime {
    last_end_request: i64,
    total: u64,
    samples: u64,
    mean: u64,
}

impl ThinkTime {
    fn starting(now: i64) -> ThinkTime {
        ThinkTime {
            last_end_request: now,
            ..ThinkTime::default()
        }
    }

    /// `__cfq_update_io_thinktime`.
    fn update(&mut self, now: i64, slice_idle: i64) {
        let elapsed = (now - self.last_end_request).clamp(0, 2 * slice_idle) as u64;
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean = (self.total + 128) / self.samples;
    }

    /// `sample_valid`.
    fn valid(&self) -> bool {
        self.samples > 80
    }
}

/// `struct cfq_rb_root`: one service tree with its think time.
#[derive(Clone, Debug, Default)]
struct Tree {
    queues: ServiceTree,
    ttime: ThinkTime,
}

/// `struct cfq_queue`.
struct Queue {
    sync: bool,
    class: IoPrioClass,
    /// Level 0..7 (7 in the idle class).
    ioprio: u8,
    /// `cfq_cfqq_prio_changed`: class and level are read again at the next request.
    prio_changed: bool,
    reqs: SortedFifo,
    /// If the FIFO has nothing expired, the request to serve next.
    next_rq: Option<RqId>,
    dispatched: u32,
    on_rr: bool,
    /// The service tree the queue is on, with its key there.
    tree: Option<(WlClass, WlType)>,
    rb_key: i64,
    slice_dispatch: u32,
    slice_start: i64,
    slice_end: i64,
    slice_resid: i64,
    wait_request: bool,
    must_dispatch: bool,
    fifo_expire: bool,
    idle_window: bool,
    slice_new: bool,
    deep: bool,
    wait_busy: bool,
    seek_history: u32,
    last_request_pos: u64,
}

impl Queue {
    /// `cfq_init_cfqq`: a sync queue starts with its idle window open.
    fn new(sync: bool) -> Queue {
        Queue {
            sync,
            class: IoPrioClass::Be,
            ioprio: 4,
            prio_changed: true,
            reqs: SortedFifo::new(),
            next_rq: None,
            dispatched: 0,
            on_rr: false,
            tree: None,
            rb_key: 0,
            slice_dispatch: 0,
            slice_start: 0,
            slice_end: 0,
            slice_resid: 0,
            wait_request: false,
            must_dispatch: false,
            fifo_expire: false,
            idle_window: sync,
            slice_new: false,
            deep: false,
            wait_busy: false,
            seek_history: 0,
            last_request_pos: 0,
        }
    }

    fn wl_class(&self) -> WlClass {
        match self.class {
            IoPrioClass::Rt => WlClass::Rt,
            IoPrioClass::Be => WlClass::Be,
            IoPrioClass::Idle => WlClass::Idle,
        }
    }

    /// `cfqq_type`.
    fn wl_type(&self) -> WlType {
        if !self.sync {
            WlType::Async
        } else if !self.idle_window {
            WlType::SyncNoidle
        } else {
            WlType::Sync
        }
    }

    /// `CFQQ_SEEKY`: more than 4 of the last 32 requests were seeks.
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 32 / 8
    }
}

/// `struct cfq_io_cq`: a process's link to its sync queue, its think time and the
/// priority it last submitted at.
#[derive(Clone, Debug)]
struct ProcessState {
    sync_queue: Option<u32>,
    ttime: ThinkTime,
    ioprio: IoPrio,
}

/// The root `struct cfq_group`.
#[derive(Clone, Debug, Default)]
struct Group {
    /// Queues of the group on a service tree.
    nr_cfqq: u32,
    /// By `WlClass` (BE, RT; the idle slot unused).
    busy_queues_avg: [u32; 3],
    saved_wl_slice: i64,
    saved_wl_type: Option<WlType>,
    saved_wl_class: Option<WlClass>,
    dispatched: u32,
    ttime: ThinkTime,
}

/// Where `cfq_select_queue` goes after its checks on the active queue.
enum Selection {
    Keep(Option<u32>),
    Expire,
}

/// CFQ's per-device state (`struct cfq_data`).
pub struct Cfq {
    t: Tunables,
    queues: Vec<Queue>,
    processes: TaskTable<ProcessState>,
    /// `async_cfqq[0]` (RT) and `[1]` (BE) by level, and `async_idle_cfqq`.
    async_queues: AsyncQueues,
    /// `service_trees[class][type]` for BE and RT, and `service_tree_idle`.
    trees: [[Tree; 3]; 2],
    idle_tree: Tree,
    group: Group,
    serving_class: WlClass,
    serving_type: WlType,
    workload_expires: i64,
    busy_queues: u32,
    busy_sync_queues: u32,
    rq_in_flight: [u32; 2],
    rq_queued: u32,
    /// Expiry of the pending idle-slice timer, if one is pending.
    idle_timer: Option<i64>,
    /// Token of the idle-slice timer last armed (earlier ones are stale when they fire).
    timer_token: u64,
    active: Option<u32>,
    active_process: Option<TaskId>,
    last_position: u64,
    last_delayed_sync: i64,
    /// `RQ_CFQQ`, by request id.
    rq_queue: Vec<u32>,
    /// Jiffies at the hook being run.
    now: i64,
    /// `blk_queue_nonrot`: the device is not rotational.
    nonrot: bool,
    /// `cfq_update_hw_tag`: -1 until known, then whether the device queues requests.
    hw_tag: i8,
    hw_tag_est_depth: u32,
    hw_tag_samples: u32,
}

impl Default for Cfq {
    /// `cfq_init_queue`.
    fn default() -> Self {
        Cfq {
            t: Tunables::default(),
            queues: Vec::new(),
            processes: TaskTable::default(),
            async_queues: AsyncQueues::default(),
            trees: Default::default(),
            idle_tree: Tree::default(),
            group: Group::default(),
            serving_class: WlClass::Be,
            serving_type: WlType::Async,
            workload_expires: 0,
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_in_flight: [0; 2],
            rq_queued: 0,
            idle_timer: None,
            timer_token: 0,
            active: None,
            active_process: None,
            last_position: 0,
            // Sync I/O is taken as not delayed in the last second, for a deeper async start.
            last_delayed_sync: JIFFIES_AT_ZERO - HZ,
            rq_queue: Vec::new(),
            now: JIFFIES_AT_ZERO,
            nonrot: false,
            hw_tag: -1,
            hw_tag_est_depth: 0,
            hw_tag_samples: 0,
        }
    }
}

fn jiffies(t: Time) -> i64 {
    JIFFIES_AT_ZERO + (t / NS_PER_JIFFY) as i64
}

fn time_of(j: i64) -> Time {
    (j - JIFFIES_AT_ZERO).max(0) as u64 * NS_PER_JIFFY
}

/// `cfq_prio_slice`: the slice of a queue at level `prio`.
fn prio_slice(base: i64, prio: u8) -> i64 {
    base + base / SLICE_SCALE * (4 - prio as i64)
}

impl Cfq {
    fn tree(&self, class: WlClass, ty: WlType) -> &Tree {
        match class {
            WlClass::Idle => &self.idle_tree,
            _ => &self.trees[class as usize][ty as usize],
        }
    }

    fn tree_mut(&mut self, class: WlClass, ty: WlType) -> &mut Tree {
        match class {
            WlClass::Idle => &mut self.idle_tree,
            _ => &mut self.trees[class as usize][ty as usize],
        }
    }

    /// `st_for`, with the idle class's one tree named one way.
    fn tree_id(class: WlClass, ty: WlType) -> (WlClass, WlType) {
        match class {
            WlClass::Idle => (WlClass::Idle, WlType::Sync),
            _ => (class, ty),
        }
    }

    /// `cfq_prio_to_slice`.
    fn prio_to_slice(&self, q: u32) -> i64 {
        let q = &self.queues[q as usize];
        prio_slice(self.t.slice[q.sync as usize], q.ioprio)
    }

    /// `cfq_group_busy_queues_wl`.
    fn busy_queues_wl(&self, class: WlClass) -> u32 {
        match class {
            WlClass::Idle => self.idle_tree.queues.len() as u32,
            _ => self.trees[class as usize]
                .iter()
                .map(|t| t.queues.len() as u32)
                .sum(),
        }
    }

    /// `cfqg_busy_async_queues`.
    fn busy_async_queues(&self) -> u32 {
        (self.trees[WlClass::Rt as usize][WlType::Async as usize]
            .queues
            .len()
            + self.trees[WlClass::Be as usize][WlType::Async as usize]
                .queues
                .len()) as u32
    }

    /// `cfq_group_get_avg_queues`: an average that follows increases fast and decays slowly.
    fn group_avg_queues(&mut self, rt: bool) -> u32 {
        let class = if rt { WlClass::Rt } else { WlClass::Be };
        let busy = self.busy_queues_wl(class);
        let avg = &mut self.group.busy_queues_avg[class as usize];
        let (min_q, max_q) = ((*avg).min(busy), (*avg).max(busy));
        *avg = ((HIST_DIVISOR - 1) * max_q + min_q + HIST_DIVISOR / 2) / HIST_DIVISOR;
        *avg
    }

    /// `cfq_scaled_cfqq_slice`.
    fn scaled_slice(&mut self, q: u32) -> i64 {
        let mut slice = self.prio_to_slice(q);
        if self.t.low_latency {
            let iq = self.group_avg_queues(self.queues[q as usize].class == IoPrioClass::Rt);
            let sync_slice = self.t.slice[1];
            let expect_latency = sync_slice * iq as i64;
            let group_slice = self.t.target_latency;
            if expect_latency > group_slice {
                let base_low_slice = 2 * self.t.slice_idle;
                let low_slice = slice.min(base_low_slice * slice / sync_slice);
                slice = (slice * group_slice / expect_latency).max(low_slice);
            }
        }
        slice
    }

    /// `cfq_set_prio_slice`.
    fn set_prio_slice(&mut self, q: u32) {
        let slice = self.scaled_slice(q);
        let now = self.now;
        let q = &mut self.queues[q as usize];
        q.slice_start = now;
        q.slice_end = now + slice;
    }

    /// `cfq_slice_used`.
    fn slice_used(&self, q: u32) -> bool {
        let q = &self.queues[q as usize];
        !q.slice_new && self.now >= q.slice_end
    }

    /// `cfq_choose_req`: which of two requests to serve next from head position `last`.
    fn choose_req(
        &self,
        io: &IoCtx,
        rq1: Option<RqId>,
        rq2: Option<RqId>,
        last: u64,
    ) -> Option<RqId> {
        let back = BackSeek {
            max_kib: self.t.back_max,
            penalty: self.t.back_penalty,
        };
        seek::choose_req(io, rq1, rq2, last, back)
    }

    /// `cfq_find_next_rq`: the request to follow `last` in its queue.
    fn find_next_rq(&self, io: &IoCtx, q: u32, last: RqId) -> Option<RqId> {
        let reqs = &self.queues[q as usize].reqs;
        let prev = reqs.former(last);
        let next = reqs
            .latter(last)
            .or_else(|| reqs.sorted_first(LIST).filter(|&f| f != last));
        self.choose_req(io, next, prev, io.request(last).sector)
    }

    /// `cfq_slice_offset`.
    fn slice_offset(&self, q: u32) -> i64 {
        let queue = &self.queues[q as usize];
        (self.group.nr_cfqq as i64 - 1).max(0)
            * (prio_slice(self.t.slice[1], 0)
                - prio_slice(self.t.slice[queue.sync as usize], queue.ioprio))
    }

    /// `cfq_service_tree_add`.
    fn service_tree_add(&mut self, q: u32, add_front: bool) {
        let now = self.now;
        let queue = &self.queues[q as usize];
        let (class, ty) = Self::tree_id(queue.wl_class(), queue.wl_type());
        let rb_key = if class == WlClass::Idle {
            let last = self.tree(class, ty).queues.last();
            IDLE_DELAY
                + match last {
                    Some((key, id)) if id != q => key,
                    _ => now,
                }
        } else if !add_front {
            let key = self.slice_offset(q) + now - self.queues[q as usize].slice_resid;
            self.queues[q as usize].slice_resid = 0;
            key
        } else {
            -HZ + self
                .tree(class, ty)
                .queues
                .first()
                .map_or(now, |(key, _)| key)
        };
        let mut new_queue = true;
        if let Some((c, t)) = self.queues[q as usize].tree {
            new_queue = false;
            let old_key = self.queues[q as usize].rb_key;
            if rb_key == old_key && (c, t) == (class, ty) {
                return;
            }
            self.tree_mut(c, t).queues.remove(old_key, q);
            self.queues[q as usize].tree = None;
        }
        self.tree_mut(class, ty).queues.insert(rb_key, q);
        let queue = &mut self.queues[q as usize];
        queue.rb_key = rb_key;
        queue.tree = Some((class, ty));
        if add_front || !new_queue {
            return;
        }
        // cfq_group_notify_queue_add
        self.group.nr_cfqq += 1;
    }

    /// `cfq_resort_rr_list`.
    fn resort_rr_list(&mut self, q: u32) {
        if self.queues[q as usize].on_rr {
            self.service_tree_add(q, false);
        }
    }

    /// `cfq_add_cfqq_rr`.
    fn add_cfqq_rr(&mut self, q: u32) {
        let queue = &mut self.queues[q as usize];
        queue.on_rr = true;
        self.busy_queues += 1;
        if queue.sync {
            self.busy_sync_queues += 1;
        }
        self.resort_rr_list(q);
    }

    /// `cfq_del_cfqq_rr` with `cfq_group_notify_queue_del`.
    fn del_cfqq_rr(&mut self, q: u32) {
        let queue = &mut self.queues[q as usize];
        queue.on_rr = false;
        let sync = queue.sync;
        if let Some((c, t)) = queue.tree.take() {
            let key = queue.rb_key;
            self.tree_mut(c, t).queues.remove(key, q);
        }
        self.group.nr_cfqq -= 1;
        if self.group.nr_cfqq == 0 {
            self.group.saved_wl_slice = 0;
        }
        self.busy_queues -= 1;
        if sync {
            self.busy_sync_queues -= 1;
        }
    }

    /// The queue a bio of its submitter goes to, if the process has one
    /// (`cfq_cic_lookup`, then `cic_to_cfqq(cic, cfq_bio_sync(bio))`; the async queue of the
    /// bio's priority stands for the one the process last used).
    fn bio_queue(&self, bio: &Bio) -> Option<u32> {
        let process = self.processes.get(bio.task)?;
        if bio.sync {
            process.sync_queue
        } else {
            self.async_queues.get(bio.ioprio)
        }
    }

    /// `cfq_get_queue` (with `check_ioprio_changed`): the queue a request of `task` goes to.
    fn get_queue(&mut self, task: TaskId, sync: bool, ioprio: IoPrio) -> u32 {
        let now = self.now;
        let process = self.processes.get_or_insert_with(task, || ProcessState {
            sync_queue: None,
            ttime: ThinkTime::starting(now),
            ioprio,
        });
        if process.ioprio != ioprio {
            process.ioprio = ioprio;
            if let Some(q) = process.sync_queue {
                self.queues[q as usize].prio_changed = true;
            }
        }
        if sync {
            if let Some(q) = self.processes.get(task).and_then(|p| p.sync_queue) {
                return q;
            }
            let q = self.new_queue(true, ioprio);
            self.processes
                .get_mut(task)
                .expect("created above")
                .sync_queue = Some(q);
            return q;
        }
        let next = self.queues.len() as u32;
        let q = self.async_queues.get_or_create(ioprio, || next);
        if q == next {
            self.new_queue(false, ioprio);
        }
        q
    }

    fn new_queue(&mut self, sync: bool, ioprio: IoPrio) -> u32 {
        let q = self.queues.len() as u32;
        self.queues.push(Queue::new(sync));
        self.init_prio_data(q, ioprio);
        q
    }

    /// `cfq_init_prio_data`.
    fn init_prio_data(&mut self, q: u32, ioprio: IoPrio) {
        let queue = &mut self.queues[q as usize];
        if !queue.prio_changed {
            return;
        }
        queue.class = ioprio.class;
        match ioprio.class {
            IoPrioClass::Rt | IoPrioClass::Be => queue.ioprio = ioprio.level,
            IoPrioClass::Idle => {
                queue.ioprio = 7;
                queue.idle_window = false;
            }
        }
        queue.prio_changed = false;
    }

    /// `cfq_remove_request` (with `cfq_del_rq_rb`).
    fn remove_request(&mut self, io: &IoCtx, q: u32, rq: RqId) {
        if self.queues[q as usize].next_rq == Some(rq) {
            self.queues[q as usize].next_rq = self.find_next_rq(io, q, rq);
        }
        self.queues[q as usize].reqs.remove(rq);
        self.rq_queued -= 1;
    }

    /// `cfq_update_io_seektime`: on a non-rotational device a small request counts as a
    /// seek, on a rotational one a far one.
    fn update_seek_history(&mut self, q: u32, rq: &Request) {
        let nonrot = self.nonrot;
        let queue = &mut self.queues[q as usize];
        let distance = if queue.last_request_pos != 0 {
            queue.last_request_pos.abs_diff(rq.sector)
        } else {
            0
        };
        let seek = if nonrot {
            rq.nr_sectors() < SECT_THR_NONROT
        } else {
            distance > SEEK_THR
        };
        queue.seek_history <<= 1;
        queue.seek_history |= seek as u32;
    }

    /// `cfq_update_hw_tag`: whether the device is seen holding `CFQ_HW_QUEUE_MIN`
    /// requests, decided after 50 samples taken while enough requests were around.
    fn update_hw_tag(&mut self) {
        let in_driver = self.rq_in_flight[0] + self.rq_in_flight[1];
        self.hw_tag_est_depth = self.hw_tag_est_depth.max(in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.rq_queued <= HW_QUEUE_MIN && in_driver <= HW_QUEUE_MIN {
            return;
        }
        if let Some(q) = self.active {
            let queue = &self.queues[q as usize];
            if queue.idle_window
                && queue.dispatched + (queue.reqs.len(LIST) as u32) < HW_QUEUE_MIN
                && in_driver < HW_QUEUE_MIN
            {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= 50 {
            return;
        }
        self.hw_tag = (self.hw_tag_est_depth >= HW_QUEUE_MIN) as i8;
    }

    /// SSD-like: a non-rotational device that queues (or is not yet known not to), for
    /// which idling is off (`blk_queue_nonrot(q) && cfqd->hw_tag`).
    fn nonrot_queueing(&self) -> bool {
        self.nonrot && self.hw_tag != 0
    }

    /// `cfq_update_io_thinktime`.
    fn update_think_times(&mut self, q: u32, task: TaskId) {
        let (now, slice_idle, group_idle) = (self.now, self.t.slice_idle, self.t.group_idle);
        let queue = &self.queues[q as usize];
        if queue.sync {
            let (c, t) = queue.tree.expect("a queue with a request is on a tree");
            if let Some(p) = self.processes.get_mut(task) {
                p.ttime.update(now, slice_idle);
            }
            self.tree_mut(c, t).ttime.update(now, slice_idle);
        }
        self.group.ttime.update(now, group_idle);
    }

    /// `cfq_update_idle_window`.
    fn update_idle_window(&mut self, q: u32, task: TaskId) {
        let ttime = self.processes.get(task).map(|p| p.ttime);
        let slice_idle = self.t.slice_idle;
        let queue = &mut self.queues[q as usize];
        if !queue.sync || queue.class == IoPrioClass::Idle {
            return;
        }
        if queue.reqs.len(LIST) >= 4 {
            queue.deep = true;
        }
        if slice_idle == 0 || (!queue.deep && queue.seeky()) {
            queue.idle_window = false;
        } else if let Some(tt) = ttime.filter(ThinkTime::valid) {
            queue.idle_window = tt.mean <= slice_idle as u64;
        }
    }

    /// `cfq_io_thinktime_big`.
    fn thinktime_big(&self, ttime: &ThinkTime, group_idle: bool) -> bool {
        if !ttime.valid() {
            return false;
        }
        let slice = if group_idle {
            self.t.group_idle
        } else {
            self.t.slice_idle
        };
        ttime.mean > slice as u64
    }

    /// `cfq_should_idle`.
    fn should_idle(&self, q: u32) -> bool {
        let queue = &self.queues[q as usize];
        if self.t.slice_idle == 0 || queue.class == IoPrioClass::Idle {
            return false;
        }
        if queue.idle_window && !self.nonrot_queueing() {
            return true;
        }
        let Some((c, t)) = queue.tree else {
            return false;
        };
        let tree = self.tree(c, t);
        tree.queues.len() == 1 && queue.sync && !self.thinktime_big(&tree.ttime, false)
    }

    /// `cfq_rq_close`: `rq` starts near the head.
    fn rq_close(&self, rq: &Request) -> bool {
        rq.sector.abs_diff(self.last_position) <= CLOSE_THR
    }

    /// `cfq_should_preempt`: does a new request `rq` for queue `new` take the disk?
    fn should_preempt(&self, new: u32, rq: &Request) -> bool {
        let Some(active) = self.active else {
            return false;
        };
        let (nq, aq) = (&self.queues[new as usize], &self.queues[active as usize]);
        if nq.class == IoPrioClass::Idle {
            return false;
        }
        if aq.class == IoPrioClass::Idle {
            return true;
        }
        if aq.class == IoPrioClass::Rt && nq.class != IoPrioClass::Rt {
            return false;
        }
        if rq.sync && !aq.sync {
            return true;
        }
        if self.slice_used(active) {
            return true;
        }
        if self.serving_type == WlType::SyncNoidle
            && nq.wl_type() == WlType::SyncNoidle
            && nq
                .tree
                .is_some_and(|(c, t)| self.tree(c, t).queues.len() == 2)
            && aq.reqs.is_empty(LIST)
        {
            return true;
        }
        if nq.class == IoPrioClass::Rt && aq.class != IoPrioClass::Rt {
            return true;
        }
        if aq.reqs.is_empty(LIST) && !self.should_idle(active) {
            return true;
        }
        if self.active_process.is_none() || !aq.wait_request {
            return false;
        }
        self.rq_close(rq)
    }

    /// `cfq_preempt_queue`.
    fn preempt_queue(&mut self, q: u32) {
        let old_type = self.active.map(|a| self.queues[a as usize].wl_type());
        self.slice_expired(true);
        if old_type != Some(self.queues[q as usize].wl_type()) {
            self.group.saved_wl_slice = 0;
        }
        self.service_tree_add(q, true);
        let queue = &mut self.queues[q as usize];
        queue.slice_end = 0;
        queue.slice_new = true;
    }

    /// `cfq_rq_enqueued`.
    fn rq_enqueued(&mut self, q: u32, rq: &Request) {
        self.rq_queued += 1;
        self.update_think_times(q, rq.task);
        self.update_seek_history(q, rq);
        self.update_idle_window(q, rq.task);
        self.queues[q as usize].last_request_pos = rq.sector + rq.nr_sectors();
        if self.active == Some(q) {
            // The process sent its next request while the disk idled for it.
            if self.queues[q as usize].wait_request {
                if rq.bytes > PAGE_BYTES || self.busy_queues > 1 {
                    self.del_timer();
                    self.queues[q as usize].wait_request = false;
                } else {
                    self.queues[q as usize].must_dispatch = true;
                }
            }
        } else if self.should_preempt(q, rq) {
            self.preempt_queue(q);
        }
    }

    fn del_timer(&mut self) {
        self.idle_timer = None;
    }

    fn mod_timer(&mut self, io: &mut IoCtx, expires: i64) {
        self.timer_token = (self.timer_token + 1) & TOKEN_MASK;
        self.idle_timer = Some(expires);
        io.arm_timer(time_of(expires), self.timer_token);
    }

    /// `__cfq_set_active_queue`.
    fn set_active_queue(&mut self, q: Option<u32>) {
        if let Some(q) = q {
            let queue = &mut self.queues[q as usize];
            queue.slice_start = 0;
            queue.slice_end = 0;
            queue.slice_dispatch = 0;
            queue.wait_request = false;
            queue.must_dispatch = false;
            queue.fifo_expire = false;
            queue.slice_new = true;
            self.del_timer();
        }
        self.active = q;
    }

    /// `cfq_slice_expired`.
    fn slice_expired(&mut self, timed_out: bool) {
        if let Some(q) = self.active {
            self.expire_queue(q, timed_out);
        }
    }

    /// `__cfq_slice_expired`.
    fn expire_queue(&mut self, q: u32, timed_out: bool) {
        if self.queues[q as usize].wait_request {
            self.del_timer();
        }
        self.queues[q as usize].wait_request = false;
        self.queues[q as usize].wait_busy = false;
        if timed_out {
            let resid = if self.queues[q as usize].slice_new {
                self.scaled_slice(q)
            } else {
                self.queues[q as usize].slice_end - self.now
            };
            self.queues[q as usize].slice_resid = resid;
        }
        self.group_served();
        if self.queues[q as usize].on_rr && self.queues[q as usize].reqs.is_empty(LIST) {
            self.del_cfqq_rr(q);
        }
        self.resort_rr_list(q);
        if self.active == Some(q) {
            self.active = None;
        }
        self.active_process = None;
    }

    /// `cfq_group_served`, for the one group: save the workload being served.
    fn group_served(&mut self) {
        if self.workload_expires > self.now {
            self.group.saved_wl_slice = self.workload_expires - self.now;
            self.group.saved_wl_type = Some(self.serving_type);
            self.group.saved_wl_class = Some(self.serving_class);
        } else {
            self.group.saved_wl_slice = 0;
        }
    }

    /// `cfq_choose_wl_type`: the type whose first queue has waited longest.
    fn choose_wl_type(&self, class: WlClass) -> WlType {
        let mut best = WlType::SyncNoidle;
        let mut lowest: Option<i64> = None;
        for ty in WL_TYPES {
            if let Some((key, _)) = self.tree(class, ty).queues.first() {
                if lowest.is_none_or(|l| key < l) {
                    lowest = Some(key);
                    best = ty;
                }
            }
        }
        best
    }

    /// `choose_wl_class_and_type`.
    fn choose_wl_class_and_type(&mut self) {
        let original = self.serving_class;
        self.serving_class = if self.busy_queues_wl(WlClass::Rt) > 0 {
            WlClass::Rt
        } else if self.busy_queues_wl(WlClass::Be) > 0 {
            WlClass::Be
        } else {
            self.serving_class = WlClass::Idle;
            self.workload_expires = self.now + 1;
            return;
        };
        if original == self.serving_class {
            let count = self
                .tree(self.serving_class, self.serving_type)
                .queues
                .len();
            if count > 0 && self.now <= self.workload_expires {
                return;
            }
        }
        let class = self.serving_class;
        self.serving_type = self.choose_wl_type(class);
        let count = self.tree(class, self.serving_type).queues.len() as i64;
        let group_slice = self.t.target_latency;
        let busy = self.group.busy_queues_avg[class as usize].max(self.busy_queues_wl(class));
        let mut slice = group_slice * count / busy as i64;
        if self.serving_type == WlType::Async {
            let tmp =
                self.t.target_latency * self.busy_async_queues() as i64 / self.busy_queues as i64;
            slice = slice.min(tmp);
            slice = slice * self.t.slice[0] / self.t.slice[1];
        } else {
            slice = slice.max(2 * self.t.slice_idle);
        }
        self.workload_expires = self.now + slice.max(MIN_TT);
    }

    /// `cfq_choose_cfqg`, for the one group.
    fn choose_cfqg(&mut self) {
        if self.group.saved_wl_slice > 0 {
            self.workload_expires = self.now + self.group.saved_wl_slice;
            if let (Some(ty), Some(class)) = (self.group.saved_wl_type, self.group.saved_wl_class) {
                self.serving_type = ty;
                self.serving_class = class;
            }
        } else {
            self.workload_expires = self.now - 1;
        }
        self.choose_wl_class_and_type();
    }

    /// `cfq_get_next_queue`.
    fn next_queue(&self) -> Option<u32> {
        if self.rq_queued == 0 {
            return None;
        }
        self.tree(self.serving_class, self.serving_type)
            .queues
            .first()
            .map(|(_, q)| q)
    }

    /// The checks of `cfq_select_queue` on the active queue `q`.
    fn keep_or_expire(&mut self, q: u32) -> Selection {
        if self.rq_queued == 0 {
            return Selection::Keep(None);
        }
        let queue = &self.queues[q as usize];
        if queue.wait_busy && !queue.reqs.is_empty(LIST) {
            return Selection::Expire;
        }
        if self.slice_used(q) && !queue.must_dispatch {
            // The slice ran out while idling for the last request: let the group fill up.
            if self.group.nr_cfqq == 1
                && queue.reqs.is_empty(LIST)
                && queue.dispatched > 0
                && self.should_idle(q)
            {
                return Selection::Keep(None);
            }
            return self.check_group_idle();
        }
        if !queue.reqs.is_empty(LIST) {
            return Selection::Keep(Some(q));
        }
        if self.idle_timer.is_some() {
            return Selection::Keep(None);
        }
        // A seeky queue with a deep queue of its own: idling does not pay.
        let now = self.now;
        let queue = &mut self.queues[q as usize];
        if queue.seeky()
            && queue.idle_window
            && (queue.slice_new || queue.slice_end - now > now - queue.slice_start)
        {
            queue.deep = false;
            queue.idle_window = false;
        }
        if self.queues[q as usize].dispatched > 0 && self.should_idle(q) {
            return Selection::Keep(None);
        }
        self.check_group_idle()
    }

    /// The `check_group_idle` step of `cfq_select_queue`.
    fn check_group_idle(&self) -> Selection {
        if self.t.group_idle > 0
            && self.group.nr_cfqq == 1
            && self.group.dispatched > 0
            && !self.thinktime_big(&self.group.ttime, true)
        {
            return Selection::Keep(None);
        }
        Selection::Expire
    }

    /// `cfq_select_queue`.
    fn select_queue(&mut self) -> Option<u32> {
        if let Some(q) = self.active {
            match self.keep_or_expire(q) {
                Selection::Keep(kept) => return kept,
                Selection::Expire => self.slice_expired(false),
            }
        }
        self.choose_cfqg();
        let next = self.next_queue();
        self.set_active_queue(next);
        next
    }

    /// `cfq_slice_used_soon`.
    fn slice_used_soon(&self, q: u32) -> bool {
        let queue = &self.queues[q as usize];
        queue.slice_new || self.now + self.t.slice_idle * queue.dispatched as i64 > queue.slice_end
    }

    /// `cfq_may_dispatch`.
    fn may_dispatch(&self, q: u32) -> bool {
        let queue = &self.queues[q as usize];
        // Drain async requests before sync I/O starts; async waits for sync in flight.
        if self.should_idle(q) && self.rq_in_flight[0] > 0 {
            return false;
        }
        if self.rq_in_flight[1] > 0 && !queue.sync {
            return false;
        }
        let idle_class = queue.class == IoPrioClass::Idle;
        let mut max_dispatch = if idle_class {
            1
        } else {
            (self.t.quantum / 2).max(1)
        };
        if queue.dispatched >= max_dispatch {
            if idle_class {
                return false;
            }
            let promote_sync = queue.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(q) && !promote_sync {
                return false;
            }
            max_dispatch = if self.busy_queues == 1 || promote_sync {
                u32::MAX
            } else {
                self.t.quantum
            };
        }
        if !queue.sync && self.t.low_latency {
            let last_sync = self.now - self.last_delayed_sync;
            let mut depth = (last_sync / self.t.slice[1]).max(0) as u32;
            if depth == 0 && queue.dispatched == 0 {
                depth = 1;
            }
            max_dispatch = max_dispatch.min(depth);
        }
        queue.dispatched < max_dispatch
    }

    /// `cfq_check_fifo`: the oldest request if it expired, once per slice.
    fn check_fifo(&mut self, q: u32) -> Option<RqId> {
        let queue = &mut self.queues[q as usize];
        if queue.fifo_expire {
            return None;
        }
        queue.fifo_expire = true;
        let rq = queue.reqs.fifo_first(LIST)?;
        (self.now >= queue.reqs.fifo_time(rq) as i64).then_some(rq)
    }

    /// `cfq_dispatch_request` with `cfq_dispatch_insert` and the driver's
    /// `cfq_activate_request`.
    fn dispatch_from(&mut self, io: &IoCtx, q: u32) -> Option<RqId> {
        if !self.may_dispatch(q) {
            return None;
        }
        let rq = self
            .check_fifo(q)
            .or(self.queues[q as usize].next_rq)
            .expect("a queue with requests has a next one");
        self.queues[q as usize].next_rq = self.find_next_rq(io, q, rq);
        self.remove_request(io, q, rq);
        let sync = self.queues[q as usize].sync;
        self.queues[q as usize].dispatched += 1;
        self.group.dispatched += 1;
        self.rq_in_flight[sync as usize] += 1;
        let r = io.request(rq);
        if self.active_process.is_none() {
            self.active_process = Some(r.task);
        }
        self.last_position = r.sector + r.nr_sectors();
        Some(rq)
    }

    /// `cfq_prio_to_maxrq`: requests an async queue dispatches in one slice.
    fn prio_to_maxrq(&self, q: u32) -> u32 {
        2 * self.t.slice_async_rq * (IOPRIO_LEVELS as u32 - self.queues[q as usize].ioprio as u32)
    }

    /// `cfq_should_wait_busy`.
    fn should_wait_busy(&self, q: u32) -> bool {
        let queue = &self.queues[q as usize];
        if !queue.reqs.is_empty(LIST) || self.group.nr_cfqq > 1 {
            return false;
        }
        if self.thinktime_big(&self.group.ttime, true) {
            return false;
        }
        if self.slice_used(q) {
            return true;
        }
        let left = queue.slice_end - self.now;
        let ttime = self
            .active_process
            .and_then(|t| self.processes.get(t))
            .map(|p| p.ttime);
        if ttime.is_some_and(|tt| tt.valid() && left < tt.mean as i64) {
            return true;
        }
        left == 1
    }

    /// `cfq_arm_slice_timer`: idle for the active queue's next request.
    fn arm_slice_timer(&mut self, io: &mut IoCtx) {
        let Some(q) = self.active else {
            return;
        };
        if self.nonrot_queueing() {
            return;
        }
        let mut group_idle = 0;
        if !self.should_idle(q) {
            if self.t.group_idle > 0 {
                group_idle = self.t.group_idle;
            } else {
                return;
            }
        }
        if self.queues[q as usize].dispatched > 0 {
            return;
        }
        let Some(process) = self.active_process.and_then(|t| self.processes.get(t)) else {
            return;
        };
        // Do not idle past the slice for a process that thinks longer than what is left.
        let left = self.queues[q as usize].slice_end - self.now;
        if process.ttime.valid() && left < process.ttime.mean as i64 {
            return;
        }
        if group_idle > 0 && self.group.nr_cfqq > 1 {
            return;
        }
        self.queues[q as usize].wait_request = true;
        let sl = if group_idle > 0 {
            group_idle
        } else {
            self.t.slice_idle
        };
        self.mod_timer(io, self.now + sl);
    }

    /// `cfq_idle_slice_timer`.
    fn idle_slice_timer(&mut self) {
        let mut timed_out = true;
        if let Some(q) = self.active {
            timed_out = false;
            let queue = &self.queues[q as usize];
            if queue.must_dispatch {
                return;
            }
            if !self.slice_used(q) {
                if self.busy_queues == 0 || !queue.reqs.is_empty(LIST) {
                    return;
                }
                self.queues[q as usize].deep = false;
            }
        }
        self.slice_expired(timed_out);
    }

    /// `RQ_CFQQ` of a request queued here (not one dispatched, merged away or never
    /// inserted).
    fn queue_of(&self, rq: RqId) -> Option<u32> {
        let q = *self.rq_queue.get(rq.0 as usize)?;
        self.queues
            .get(q as usize)
            .is_some_and(|queue| queue.reqs.contains(rq))
            .then_some(q)
    }

    fn set_rq_queue(&mut self, rq: RqId, q: u32) {
        let i = rq.0 as usize;
        if self.rq_queue.len() <= i {
            self.rq_queue.resize(i + 1, u32::MAX);
        }
        self.rq_queue[i] = q;
    }
}

/// Parse a tunable's value as sysfs does (`simple_strtoul`) and clamp it to [min, max].
fn parse_clamped(value: &str, min: u64, max: u64) -> Result<u64, String> {
    let v: u64 = value
        .trim()
        .parse()
        .map_err(|_| format!("'{value}' is not a non-negative integer"))?;
    Ok(v.clamp(min, max))
}

impl IoScheduler for Cfq {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "cfq",
            summary: "Completely Fair Queueing: per-process queues served in time slices by I/O \
                      class and level, idling for a process's next sync request",
            source: "block/cfq-iosched.c (Linux 3.10): cfq_select_queue, \
                     cfq_dispatch_requests, cfq_completed_request, cfq_prio_slice",
        }
    }

    fn set_rotational(&mut self, rotational: bool) {
        self.nonrot = !rotational;
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        const MAX: u64 = u32::MAX as u64;
        let t = &mut self.t;
        let ms = |v: u64| v as i64;
        match name {
            "quantum" => t.quantum = parse_clamped(value, 1, MAX)? as u32,
            "fifo_expire_sync" => t.fifo_expire[1] = ms(parse_clamped(value, 1, MAX)?),
            "fifo_expire_async" => t.fifo_expire[0] = ms(parse_clamped(value, 1, MAX)?),
            "back_seek_max" => t.back_max = parse_clamped(value, 0, MAX)?,
            "back_seek_penalty" => t.back_penalty = parse_clamped(value, 1, MAX)?,
            "slice_sync" => t.slice[1] = ms(parse_clamped(value, 1, MAX)?),
            "slice_async" => t.slice[0] = ms(parse_clamped(value, 1, MAX)?),
            "slice_async_rq" => t.slice_async_rq = parse_clamped(value, 1, MAX)? as u32,
            "slice_idle" => t.slice_idle = ms(parse_clamped(value, 0, MAX)?),
            "group_idle" => t.group_idle = ms(parse_clamped(value, 0, MAX)?),
            "low_latency" => t.low_latency = parse_clamped(value, 0, 1)? == 1,
            "target_latency" => t.target_latency = ms(parse_clamped(value, 1, MAX)?),
            _ => {
                return Err(format!(
                    "unknown parameter '{name}' (cfq has quantum, fifo_expire_sync, \
                     fifo_expire_async, back_seek_max, back_seek_penalty, slice_sync, \
                     slice_async, slice_async_rq, slice_idle, group_idle, low_latency, \
                     target_latency)"
                ))
            }
        }
        Ok(())
    }

    /// `cfq_set_request` + `cfq_insert_request`.
    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        self.now = jiffies(io.now());
        let r = *io.request(rq);
        let q = self.get_queue(r.task, r.sync, r.ioprio);
        self.set_rq_queue(rq, q);
        self.init_prio_data(q, r.ioprio);
        let expires = self.now + self.t.fifo_expire[r.sync as usize];
        self.queues[q as usize]
            .reqs
            .add(rq, LIST, r.sector, expires as Time);
        // cfq_add_rq_rb
        if !self.queues[q as usize].on_rr {
            self.add_cfqq_rr(q);
        }
        let next = self.queues[q as usize].next_rq;
        self.queues[q as usize].next_rq = self.choose_req(io, next, Some(rq), self.last_position);
        self.rq_enqueued(q, &r);
    }

    /// `cfq_merge` (`cfq_find_rq_fmerge`): a request of the submitter's queue for the bio's
    /// direction of sync-ness that starts where the bio ends.
    fn request_merge(&mut self, _io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        let q = self.bio_queue(bio)?;
        let end = bio.sector + bio.bytes / SECTOR_BYTES;
        let rq = self.queues[q as usize].reqs.find_at(LIST, end)?;
        Some((rq, MergeKind::Front))
    }

    /// `cfq_allow_merge`: no sync bio into an async request, and a bio only into a
    /// request of the queue it would be queued with.
    fn allow_merge(&self, io: &IoCtx, rq: RqId, bio: &Bio) -> bool {
        if bio.sync && !io.request(rq).sync {
            return false;
        }
        self.bio_queue(bio)
            .is_some_and(|q| self.queue_of(rq) == Some(q))
    }

    /// `cfq_merged_request`: a front merge moved `rq`'s start, so it is sorted again and
    /// may now be its queue's best next request (`cfq_reposition_rq_rb`).
    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        if kind != MergeKind::Front {
            return;
        }
        let Some(q) = self.queue_of(rq) else {
            return;
        };
        let sector = io.request(rq).sector;
        self.queues[q as usize].reqs.resort(rq, sector);
        let next = self.queues[q as usize].next_rq;
        self.queues[q as usize].next_rq = self.choose_req(io, next, Some(rq), self.last_position);
    }

    fn merges_requests(&self) -> bool {
        true
    }

    /// `cfq_merged_requests`: queued `next` joined queued `rq`. Within one queue `rq` takes
    /// `next`'s FIFO place and expiry if `next` expires first; `next` leaves its queue,
    /// and that queue leaves its service tree if it is now empty and not the active one.
    fn requests_merged(&mut self, io: &mut IoCtx, rq: RqId, next: RqId) {
        self.now = jiffies(io.now());
        let Some(next_q) = self.queue_of(next) else {
            return;
        };
        if self.queue_of(rq) == Some(next_q) {
            let queue = &mut self.queues[next_q as usize];
            if queue.next_rq == Some(next) {
                queue.next_rq = Some(rq);
            }
            queue.reqs.inherit_expiry(rq, next);
        }
        self.remove_request(io, next_q, next);
        let queue = &self.queues[next_q as usize];
        if queue.on_rr && queue.reqs.is_empty(LIST) && self.active != Some(next_q) {
            self.del_cfqq_rr(next_q);
        }
    }

    fn has_work(&self, _io: &IoCtx) -> bool {
        self.busy_queues > 0
    }

    /// `cfq_dispatch_requests`.
    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId> {
        self.now = jiffies(io.now());
        if self.busy_queues == 0 {
            return None;
        }
        let q = self.select_queue()?;
        let rq = self.dispatch_from(io, q)?;
        let queue = &mut self.queues[q as usize];
        queue.slice_dispatch += 1;
        queue.must_dispatch = false;
        // An async queue that used its requests, and an idle-class queue after one
        // request, give the disk up when others wait.
        let queue = &self.queues[q as usize];
        if self.busy_queues > 1
            && ((!queue.sync && queue.slice_dispatch >= self.prio_to_maxrq(q))
                || queue.class == IoPrioClass::Idle)
        {
            self.queues[q as usize].slice_end = self.now + 1;
            self.slice_expired(false);
        }
        Some(rq)
    }

    /// `cfq_completed_request`.
    fn completed(&mut self, io: &mut IoCtx, rq: RqId) {
        self.now = jiffies(io.now());
        self.update_hw_tag();
        let now = self.now;
        let r = *io.request(rq);
        let q = self.rq_queue[rq.0 as usize];
        let queue = &mut self.queues[q as usize];
        queue.dispatched -= 1;
        self.group.dispatched -= 1;
        self.rq_in_flight[queue.sync as usize] -= 1;
        if r.sync {
            if let Some(p) = self.processes.get_mut(r.task) {
                p.ttime.last_end_request = now;
            }
            let queue = &self.queues[q as usize];
            let (c, t) = match queue.tree {
                Some(ct) if queue.on_rr => ct,
                _ => Self::tree_id(queue.wl_class(), queue.wl_type()),
            };
            self.tree_mut(c, t).ttime.last_end_request = now;
            if jiffies(r.submitted) + self.t.fifo_expire[1] <= now {
                self.last_delayed_sync = now;
            }
        }
        self.group.ttime.last_end_request = now;
        if self.active != Some(q) {
            return;
        }
        let empty = self.queues[q as usize].reqs.is_empty(LIST);
        if self.queues[q as usize].slice_new {
            self.set_prio_slice(q);
            self.queues[q as usize].slice_new = false;
        }
        if self.should_wait_busy(q) {
            let extend = if self.t.slice_idle > 0 {
                self.t.slice_idle
            } else {
                self.t.group_idle
            };
            let queue = &mut self.queues[q as usize];
            queue.slice_end = now + extend;
            queue.wait_busy = true;
        }
        if self.slice_used(q) || self.queues[q as usize].class == IoPrioClass::Idle {
            self.slice_expired(true);
        } else if r.sync && empty {
            self.arm_slice_timer(io);
        }
    }

    fn timer(&mut self, io: &mut IoCtx, token: u64) {
        if self.idle_timer.is_none() || token != self.timer_token {
            return;
        }
        self.idle_timer = None;
        self.now = jiffies(io.now());
        self.idle_slice_timer();
    }
}

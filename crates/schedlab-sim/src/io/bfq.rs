//! `bfq`: Budget Fair Queueing, as in Linux 6.1 (block/bfq-iosched.c, block/bfq-wf2q.c,
//! block/bfq-iosched.h), after P. Valente and F. Checconi, "High Throughput Disk
//! Scheduling with Fair Bandwidth Distribution", IEEE Transactions on Computers, 2010, and
//! P. Valente and M. Andreolini, "Improving application responsiveness with the BFQ disk
//! I/O scheduler", SYSTOR 2012.
//!
//! Every task has its own synchronous queue and asynchronous requests share one queue
//! per I/O priority (`bfq_get_queue`, [`super::process_queues`]). A queue is served
//! alone for a slot: until its budget (sectors) is used up (`BFQQE_BUDGET_EXHAUSTED`),
//! its budget timeout passes (`BFQQE_BUDGET_TIMEOUT`, `timeout_sync` × its raising
//! coefficient), or it has no more requests (`BFQQE_NO_MORE_REQUESTS`) — a synchronous
//! queue that empties may keep the device for `slice_idle` waiting for its next request
//! (`bfq_arm_slice_timer`; `BFQQE_TOO_IDLE` if none comes), when `bfq_better_to_idle`
//! says idling pays for throughput or is needed for the service guarantees
//! (`idling_needed_for_service_guarantees`: a weight-raised queue, an asymmetric
//! scenario — different weights or classes among the queues with pending I/O — or the
//! only busy queue). Which queue is next is B-WF2Q+ over the queues' budgets and weights
//! (`bfq/wf2q.rs`), one service tree per class, RT before best effort before idle; a
//! weight is `(IOPRIO_NR_LEVELS - level) × BFQ_WEIGHT_CONVERSION_COEFF`
//! (`bfq_ioprio_to_weight`). The next budget follows how the slot ended
//! (`__bfq_bfqq_recalc_budget`: doubled after a timeout or while requests were still out,
//! quadrupled when exhausted, cut to the service received when the queue emptied), and a
//! queue's budget follows its next request (`bfq_updated_next_req`); a slow queue is
//! charged for the time it held the device (`bfq_bfqq_charge_time`).
//!
//! With `low_latency` (`bfq_bfqq_handle_idle_busy_switch`,
//! `bfq_update_bfqq_wr_on_rq_arrival`, `bfq_update_wr_data`): a synchronous queue of
//! default weight that becomes busy after being idle for `bfq_wr_min_idle_time` (2 s), or
//! is new, is deemed interactive and weight-raised × `bfq_wr_coeff` (30) for
//! `bfq_wr_duration` (reference rate × reference duration / peak rate, 3 to 25 s) or until
//! it has received `max_service_from_wr` sectors; one whose requests come no faster than
//! `bfq_wr_max_softrt_rate` (7000 sectors/s) after idle pauses is soft real-time
//! (`bfq_bfqq_softrt_next_start`) and raised × 30 × `BFQ_SOFTRT_WEIGHT_FACTOR` (100) for
//! `bfq_wr_rt_max_time` (300 ms).
//!
//! Injection (`bfq_select_queue`, `bfq_choose_bfqq_for_injection`,
//! `bfq_update_inject_limit`, `bfq_reset_inject_limit`, `bfq_check_waker`): while the
//! queue in service is empty and idled for, `bfq_select_queue` may dispatch another
//! queue's request — first the same process's async I/O, then its waker's (a queue
//! after whose completions this one thrice got I/O within 4 ms, `bfq_check_waker`),
//! then the queue it wakes (the head of its woken list), and otherwise, unless idling
//! boosts throughput for it, the most recently queued queue whose budget covers its
//! next request, while fewer requests than the in-service queue's `inject_limit` are in
//! flight. The limit adapts: the total service time (arrival to completion) of a first
//! request of the queue in service is measured with the drive empty (the baseline,
//! `last_serv_time_ns`; the limit then becomes at least 1) or with injected I/O in
//! flight, and the limit drops when that time reaches 1.5 × the baseline and grows
//! otherwise; it is reset every second, and while no baseline exists it is 0 for a
//! queue with a short think time and 1 otherwise. The kernel's fallback that lets one
//! request in after idling for `slice_idle` adds that time in ns to a jiffies count;
//! it is kept so (1 ms jiffies), which makes it wait for slice_idle-in-ns milliseconds.
//! A process's requests (`RQ_BIC(rq)->requests`) are counted as its sync queue's
//! queued and dispatched ones: its async requests, which the flusher thread submits
//! here, are not counted. The woken-queue branch (`blocked_bfqq`, the head of the queue
//! in service's `woken_list`) is read from a later bfq-iosched.c than 6.1, on the reading
//! that it came with the waker-detection rework of 5.14 (`tentative_waker_bfqq`,
//! `num_waker_detections`), which 6.1 has.
//!
//! The peak rate is estimated from dispatches and completions as `bfq_update_peak_rate` /
//! `bfq_update_rate_reset` do, and sets the raising duration and, with `max_budget` 0
//! (auto, the default), the maximum budget: the sectors transferred in `timeout_sync` at
//! the peak rate (`bfq_calc_max_budget`), used once `bfq_stats_min_budgets` budgets have
//! been assigned (16384 sectors before). A non-zero `max_budget` fixes it.
//!
//! Tunables (sysfs `queue/iosched/`, `bfq_attrs`; the units the kernel's show/store use):
//! `slice_idle` (ms, 8), `slice_idle_us`, `timeout_sync` (ms, 125), `max_budget`
//! (sectors, 0 = auto), `back_seek_max` (KiB, 16384), `back_seek_penalty` (2),
//! `fifo_expire_sync` (ms, 125), `fifo_expire_async` (ms, 250), `low_latency` (1),
//! `strict_guarantees` (0).
//!
//! Simplifications (what Linux 6.1 does that this model does not):
//! - one flat group: no blkio cgroup weights (bfq-cgroup.c), so no hierarchical entities;
//! - no cooperating-queue merging (`bfq_setup_cooperator`, stable merges), no burst
//!   detection (`bfq_handle_burst`: queues created in a large burst are never raised);
//!   a queue's exit is not seen, so a waker is never forgotten (`bfq_put_queue` empties
//!   its woken list);
//! - merging is modelled (`bfq_request_merge` offers the submitter's queue's request
//!   starting where a bio ends, `bfq_allow_bio_merge` keeps a bio out of another queue's
//!   request, `bfq_request_merged` re-sorts after a front merge, `bfq_requests_merged`
//!   drops the request merged away, keeping the older FIFO deadline), but the early
//!   queue merging `bfq_allow_bio_merge` also starts (`bfq_setup_cooperator`) is not;
//! - the device's `queue/rotational` flag is read as `blk_queue_nonrot` (seekiness,
//!   whether idling boosts throughput, the large-request rule of injection, the
//!   reference rate and raising duration);
//! - a task's exit is not seen (`bfq_exit_icq`): its queue may idle for it once more;
//! - times are kept in ns where the kernel uses jiffies (a jiffy is taken as 1 ms where a
//!   jiffy count is a constant: the 4 jiffies of `bfq_bfqq_softrt_next_start`).
//!
//! Kept as the kernel has it, though it may surprise: with nothing active,
//! `bfq_forget_idle` sets the virtual time to the idle set's last finish time; and the
//! queue of the smallest weight is not idled for (`bfq_asymmetric_scenario`), so a reader
//! with one request at a time at the lowest weight gets less than its share unless
//! `strict_guarantees` is set. A busy idle-class queue (one that always has a request
//! waiting) makes every scenario asymmetric (`bfq_asymmetric_scenario`:
//! `multiple_classes_busy`), so each sync best-effort queue is idled for when it empties
//! and keeps the device until its budget or budget timeout runs out: concurrent sync
//! readers with short think times would then be served one at a time; injection lets
//! the other queues' requests into the drive while it is idled for, within the inject
//! limit.
//!
//! Complexity: O(queues with requests) per scheduling decision (the active sets are
//! scanned), O(backlog of one queue) per insert and removal. Each queue's sort list and
//! FIFO (the shared `sorted_fifo.rs`) is indexed by request id, so memory grows with
//! queues × the requests a device holds at once.

mod wf2q;

use schedlab_spec::model::{IoPrio, IoPrioClass, IOPRIO_LEVELS, SECTOR_BYTES};

use super::process_queues::ProcessQueues;
use super::seek::{self, BackSeek};
use super::sorted_fifo::{SortedFifo, READ};
use super::{Bio, IoCtx, IoSchedInfo, IoScheduler, MergeKind, Request, RqId};
use crate::types::{TaskId, Time};
use wf2q::{Entity, Wf2q, CLASSES, CLASS_IDLE};

/// Signed ns: the kernel's "farthest past instant" (`bfq_smallest_from_now`) is
/// representable.
type Stamp = i64;
const NEVER: Stamp = i64::MIN / 4;
const MS: i64 = 1_000_000;

/// `BFQ_WEIGHT_CONVERSION_COEFF`.
const WEIGHT_CONVERSION_COEFF: u64 = 10;
/// `bfq_default_max_budget` (sectors).
const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// `bfq_stats_min_budgets`: budgets assigned before the estimated maximum is used.
const STATS_MIN_BUDGETS: u64 = 194;
/// `bfq_async_charge_factor`.
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// `bfq_timeout` (HZ / 8), the constant `bfq_bfqq_charge_time` scales by.
const DEFAULT_TIMEOUT: Stamp = 125 * MS;
/// `BFQ_MIN_TT`.
const MIN_TT: Stamp = 2 * MS;
/// `BFQ_HW_QUEUE_THRESHOLD`, `BFQ_HW_QUEUE_SAMPLES`.
const HW_QUEUE_THRESHOLD: u32 = 3;
const HW_QUEUE_SAMPLES: u32 = 32;
/// `BFQQ_SEEK_THR`, `BFQQ_SECT_THR_NONROT` (sectors).
const SEEK_THR: u64 = 8 * 100;
const SECT_THR_NONROT: u64 = 2 * 32;
/// `BFQ_RATE_MIN_SAMPLES`, `BFQ_RATE_MIN_INTERVAL`, `BFQ_RATE_REF_INTERVAL`,
/// `BFQ_RATE_SHIFT` (rates are sectors/µs << 16).
const RATE_MIN_SAMPLES: u32 = 32;
const RATE_MIN_INTERVAL: Stamp = 300 * MS;
const RATE_REF_INTERVAL: Stamp = 1000 * MS;
const RATE_SHIFT: u32 = 16;
/// `ref_rate` and `ref_wr_duration` ([rotational, non-rotational]; `bfq_init`).
const REF_RATE: [u64; 2] = [14_000, 33_000];
const REF_WR_DURATION_MS: [u64; 2] = [7_000, 2_500];
/// `max_service_from_wr` (sectors).
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// `BFQ_SOFTRT_WEIGHT_FACTOR`.
const SOFTRT_WEIGHT_FACTOR: u64 = 100;
/// Default weight of a queue (`bfq_ioprio_to_weight(BFQ_DEFAULT_QUEUE_IOPRIO)`): only
/// queues of this weight are raised.
const DEFAULT_WEIGHT: u64 = 40;

/// `enum bfqq_expiration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiration {
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
    Preempted,
}

/// `bfq_ioprio_to_weight`.
fn ioprio_to_weight(level: u8) -> u64 {
    (IOPRIO_LEVELS as u64 - level as u64) * WEIGHT_CONVERSION_COEFF
}

/// The service tree of a class (`ioprio_class - 1`) and the level BFQ uses
/// (`bfq_set_next_ioprio_data`: the idle class takes the lowest level).
fn class_and_level(p: IoPrio) -> (usize, u8) {
    match p.class {
        IoPrioClass::Rt => (0, p.level.min(IOPRIO_LEVELS - 1)),
        IoPrioClass::Be => (1, p.level.min(IOPRIO_LEVELS - 1)),
        IoPrioClass::Idle => (CLASS_IDLE, IOPRIO_LEVELS - 1),
    }
}

/// `struct bfq_queue` (its `bfq_entity` lives in [`Wf2q`] under the same index).
struct BfqQueue {
    sync: bool,
    ioprio: IoPrio,
    rqs: SortedFifo,
    next_rq: Option<RqId>,
    dispatched: u32,
    busy: bool,
    /// The class it is counted under in `busy_queues`.
    busy_class: usize,
    max_budget: u64,
    budget_timeout: Stamp,
    wait_request: bool,
    non_blocking_wait_rq: bool,
    fifo_expire: bool,
    just_created: bool,
    has_short_ttime: bool,
    io_bound: bool,
    softrt_update: bool,
    wr_cur_max_time: Stamp,
    last_wr_start_finish: Stamp,
    wr_start_at_switch_to_srt: Stamp,
    service_from_wr: u64,
    soft_rt_next_start: Stamp,
    last_idle_bklogged: Stamp,
    service_from_backlogged: u64,
    last_end_request: Stamp,
    ttime_samples: u64,
    ttime_total: u64,
    ttime_mean: u64,
    seek_history: u32,
    last_request_pos: u64,
    io_start_time: Stamp,
    tot_idle_time: Stamp,
    /// The task whose synchronous queue this is (`bfqq->bic`); `None` for a shared
    /// asynchronous queue.
    task: Option<TaskId>,
    /// Requests in flight up to which other queues' I/O may be injected while this one
    /// is in service and empty (`inject_limit`).
    inject_limit: u32,
    /// Baseline total service time of a first request with nothing else in flight
    /// (`last_serv_time_ns`; 0 = not measured yet).
    last_serv_time_ns: Stamp,
    /// Last time the inject limit was lowered or reset (`decrease_time_jif`).
    decrease_time: Stamp,
    /// The queue whose completions this one's I/O waits for (`waker_bfqq`).
    waker: Option<u32>,
    tentative_waker: Option<u32>,
    num_waker_detections: u32,
    waker_detection_started: Stamp,
    /// Position in its waker's `woken_list`: the highest value is the list's head.
    woken_order: u64,
}

/// The scheduler (`struct bfq_data`).
pub struct Bfq {
    queues: Vec<BfqQueue>,
    table: ProcessQueues,
    wf: Wf2q,
    /// Queue of each request (`RQ_BFQQ`), by request id.
    rq_queue: Vec<u32>,
    /// Whether a request is in its queue's sort list (`!RB_EMPTY_NODE(&rq->rb_node)`):
    /// inserted, not yet dispatched or merged away.
    rq_queued: Vec<bool>,
    in_service: Option<u32>,
    queued: u32,
    rq_in_driver: u32,
    busy_queues: [u32; CLASSES],
    wr_busy_queues: u32,
    /// -1 until known, then whether the device is seen queueing requests.
    hw_tag: i8,
    max_rq_in_driver: u32,
    hw_tag_samples: u32,
    budgets_assigned: u64,
    max_budget: u64,
    user_max_budget: u64,
    // Peak-rate estimation.
    peak_rate: u64,
    peak_rate_samples: u32,
    sequential_samples: u32,
    tot_sectors_dispatched: u64,
    last_rq_max_size: u64,
    delta_from_first: Stamp,
    first_dispatch: Stamp,
    last_dispatch: Stamp,
    last_completion: Stamp,
    last_position: u64,
    last_budget_start: Stamp,
    last_idling_start: Stamp,
    // Injection (`bfq_update_inject_limit`): the total service time of the in-service
    // queue's first request is measured from its arrival (`last_empty_occupied_ns`)
    // once it is dispatched (`wait_dispatch`, then `waited_rq`) to its completion.
    rqs_injected: bool,
    wait_dispatch: bool,
    waited_rq: Option<RqId>,
    last_empty_occupied: Stamp,
    last_completed_rq_bfqq: Option<u32>,
    /// Counter ordering the woken lists (`hlist_add_head`).
    woken_seq: u64,
    /// Generation of the idle slice timer: a fired timer of an older one was cancelled.
    timer_gen: u64,
    now: Stamp,
    // Tunables.
    fifo_expire: [Stamp; 2],
    back_max: u64,
    back_penalty: u64,
    slice_idle: Stamp,
    timeout: Stamp,
    low_latency: bool,
    strict_guarantees: bool,
    wr_coeff: u64,
    wr_rt_max_time: Stamp,
    wr_min_idle_time: Stamp,
    wr_min_inter_arr_async: Stamp,
    wr_max_softrt_rate: u64,
    rate_dur_prod: u64,
    /// `blk_queue_nonrot`: the device is not rotational.
    nonrot: bool,
}

impl Default for Bfq {
    /// `bfq_init_queue`'s defaults.
    fn default() -> Self {
        Bfq {
            queues: Vec::new(),
            table: ProcessQueues::default(),
            wf: Wf2q::default(),
            rq_queue: Vec::new(),
            rq_queued: Vec::new(),
            in_service: None,
            queued: 0,
            rq_in_driver: 0,
            busy_queues: [0; CLASSES],
            wr_busy_queues: 0,
            hw_tag: -1,
            max_rq_in_driver: 0,
            hw_tag_samples: 0,
            budgets_assigned: 0,
            max_budget: DEFAULT_MAX_BUDGET,
            user_max_budget: 0,
            peak_rate: REF_RATE[1] * 2 / 3,
            peak_rate_samples: 0,
            sequential_samples: 0,
            tot_sectors_dispatched: 0,
            last_rq_max_size: 0,
            delta_from_first: 0,
            first_dispatch: 0,
            last_dispatch: 0,
            last_completion: 0,
            last_position: 0,
            last_budget_start: 0,
            last_idling_start: 0,
            rqs_injected: false,
            wait_dispatch: false,
            waited_rq: None,
            last_empty_occupied: 0,
            last_completed_rq_bfqq: None,
            woken_seq: 0,
            timer_gen: 0,
            now: 0,
            fifo_expire: [250 * MS, 125 * MS],
            back_max: 16 * 1024,
            back_penalty: 2,
            slice_idle: 8 * MS,
            timeout: DEFAULT_TIMEOUT,
            low_latency: true,
            strict_guarantees: false,
            wr_coeff: 30,
            wr_rt_max_time: 300 * MS,
            wr_min_idle_time: 2000 * MS,
            wr_min_inter_arr_async: 500 * MS,
            wr_max_softrt_rate: 7000,
            rate_dur_prod: REF_RATE[1] * REF_WR_DURATION_MS[1],
            nonrot: true,
        }
    }
}

/// A sysfs value: a non-negative integer.
fn parse_value(value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("expected a non-negative integer, found '{value}'"))
}

const TIMER_TOKEN_MASK: u64 = (1 << 32) - 1;

/// A queue's requests are in one sorted list and one FIFO whatever their direction (a
/// `bfq_queue` has one `sort_list` and one `fifo`).
const LIST: usize = READ;

impl Bfq {
    fn q(&self, q: u32) -> &BfqQueue {
        &self.queues[q as usize]
    }

    fn qm(&mut self, q: u32) -> &mut BfqQueue {
        &mut self.queues[q as usize]
    }

    fn ent(&self, q: u32) -> &Entity {
        &self.wf.ent[q as usize]
    }

    fn wr_coeff_of(&self, q: u32) -> u64 {
        self.ent(q).wr_coeff
    }

    fn set_wr_coeff(&mut self, q: u32, c: u64) {
        self.wf.ent[q as usize].wr_coeff = c;
    }

    fn tot_busy_queues(&self) -> u32 {
        self.busy_queues.iter().sum()
    }

    fn class_idle(&self, q: u32) -> bool {
        self.ent(q).class == CLASS_IDLE
    }

    fn seeky(&self, q: u32) -> bool {
        self.q(q).seek_history.count_ones() > 19
    }

    fn budget_left(&self, q: u32) -> u64 {
        let e = self.ent(q);
        e.budget.saturating_sub(e.service)
    }

    /// `bfq_max_budget`, `bfq_min_budget`.
    fn max_budget_now(&self) -> u64 {
        if self.budgets_assigned < STATS_MIN_BUDGETS {
            DEFAULT_MAX_BUDGET
        } else {
            self.max_budget
        }
    }

    fn min_budget(&self) -> u64 {
        self.max_budget_now() / 32
    }

    /// `bfq_calc_max_budget`: sectors transferred in `timeout_sync` at the peak rate.
    fn calc_max_budget(&self) -> u64 {
        let timeout_ms = (self.timeout / MS) as u64;
        (self.peak_rate * 1000 * timeout_ms) >> RATE_SHIFT
    }

    /// `bfq_wr_duration`.
    fn wr_duration(&self) -> Stamp {
        let ms = self.rate_dur_prod / self.peak_rate.max(1);
        (ms as Stamp).clamp(3000, 25000) * MS
    }

    /// `bfq_asymmetric_scenario`.
    fn asymmetric(&self, q: u32) -> bool {
        let classes_busy = self.busy_queues.iter().filter(|&&n| n > 0).count();
        self.wf.varied_weights_for(q) || classes_busy > 1
    }

    /// `bfq_serv_to_charge`.
    fn serv_to_charge(&self, io: &IoCtx, rq: RqId, q: u32) -> u64 {
        let sectors = io.request(rq).nr_sectors();
        if self.q(q).sync || self.wr_coeff_of(q) > 1 || self.asymmetric(q) {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// `bfq_choose_req`: of two requests, the one to serve next from head position
    /// `last` (`seek::choose_req`, the rule BFQ kept from CFQ).
    fn choose_req(&self, io: &IoCtx, a: Option<RqId>, b: Option<RqId>, last: u64) -> Option<RqId> {
        let back = BackSeek {
            max_kib: self.back_max,
            penalty: self.back_penalty,
        };
        seek::choose_req(io, a, b, last, back)
    }

    /// `bfq_check_fifo`: the oldest request if it expired (once per slot).
    fn check_fifo(&mut self, q: u32, last: RqId) -> Option<RqId> {
        if self.q(q).fifo_expire {
            return None;
        }
        self.qm(q).fifo_expire = true;
        let rqs = &self.q(q).rqs;
        let rq = rqs.fifo_first(LIST)?;
        if rq == last || self.now < rqs.fifo_time(rq) as Stamp {
            return None;
        }
        Some(rq)
    }

    /// `bfq_find_next_rq`: what follows `last` (still queued).
    fn find_next_rq(&mut self, io: &IoCtx, q: u32, last: RqId) -> Option<RqId> {
        if let Some(rq) = self.check_fifo(q, last) {
            return Some(rq);
        }
        let pos = io.request(last).sector;
        let rqs = &self.q(q).rqs;
        let prev = rqs.former(last);
        let next = rqs
            .latter(last)
            .or_else(|| rqs.sorted_first(LIST).filter(|&f| f != last));
        self.choose_req(io, next, prev, pos)
    }

    /// `bfq_updated_next_req`: a queued (not in-service) queue's budget follows its next
    /// request.
    fn updated_next_req(&mut self, io: &IoCtx, q: u32) {
        let Some(next) = self.q(q).next_rq else {
            return;
        };
        if self.in_service == Some(q) {
            return;
        }
        let charge = self.serv_to_charge(io, next, q);
        let new_budget = self.q(q).max_budget.max(charge).max(self.ent(q).service);
        if self.ent(q).budget != new_budget {
            self.wf.ent[q as usize].budget = new_budget;
            if self.q(q).busy {
                self.wf.requeue(q);
            }
        }
    }

    /// `bfq_init_bfqq` with `bfq_set_next_ioprio_data`.
    fn new_queue(&mut self, ioprio: IoPrio, sync: bool, task: TaskId) -> u32 {
        let (class, level) = class_and_level(ioprio);
        let idle = class == CLASS_IDLE;
        let max_budget = 2 * self.max_budget_now() / 3;
        let id = self
            .wf
            .add_entity(Entity::new(ioprio_to_weight(level), class, max_budget));
        self.queues.push(BfqQueue {
            sync,
            ioprio,
            rqs: SortedFifo::default(),
            next_rq: None,
            dispatched: 0,
            busy: false,
            busy_class: class,
            max_budget,
            budget_timeout: NEVER,
            wait_request: false,
            non_blocking_wait_rq: false,
            fifo_expire: false,
            just_created: sync,
            has_short_ttime: sync && !idle,
            io_bound: true,
            softrt_update: false,
            wr_cur_max_time: 0,
            last_wr_start_finish: self.now,
            wr_start_at_switch_to_srt: NEVER,
            service_from_wr: 0,
            soft_rt_next_start: self.now,
            last_idle_bklogged: 0,
            service_from_backlogged: 0,
            last_end_request: self.now + 1,
            ttime_samples: 0,
            ttime_total: 0,
            ttime_mean: 0,
            seek_history: 1,
            last_request_pos: 0,
            io_start_time: self.now,
            tot_idle_time: 0,
            task: sync.then_some(task),
            inject_limit: 0,
            last_serv_time_ns: 0,
            decrease_time: self.now,
            waker: None,
            tentative_waker: None,
            num_waker_detections: 0,
            waker_detection_started: 0,
            woken_order: 0,
        });
        id
    }

    /// `bfq_check_ioprio_change`: a task's queue follows its I/O priority.
    fn check_ioprio_change(&mut self, q: u32, ioprio: IoPrio) {
        if self.q(q).ioprio == ioprio {
            return;
        }
        self.qm(q).ioprio = ioprio;
        let (class, level) = class_and_level(ioprio);
        let e = &mut self.wf.ent[q as usize];
        e.new_weight = ioprio_to_weight(level);
        e.new_class = class;
        e.prio_changed = true;
    }

    /// `bfq_update_io_thinktime`.
    fn update_io_thinktime(&mut self, q: u32) {
        let slice_idle = self.slice_idle;
        let now = self.now;
        let b = self.qm(q);
        if b.dispatched > 0 || b.busy {
            return;
        }
        let elapsed = if now < b.last_end_request {
            2 * slice_idle
        } else {
            (now - b.last_end_request).min(2 * slice_idle)
        };
        b.ttime_samples = (7 * b.ttime_samples + 256) / 8;
        b.ttime_total = (7 * b.ttime_total + 256 * elapsed as u64) / 8;
        b.ttime_mean = (b.ttime_total + 128) / b.ttime_samples;
    }

    /// `bfq_update_has_short_ttime`; while no baseline service time has been measured,
    /// the inject limit follows the think time: a change of state resets it, at most
    /// every 100 ms for a queue whose think time became short.
    fn update_has_short_ttime(&mut self, q: u32) {
        if !self.q(q).sync || self.class_idle(q) || self.slice_idle == 0 {
            return;
        }
        let half = (self.slice_idle / 2) as u64;
        let b = self.qm(q);
        let short = !(b.ttime_samples > 80 && b.ttime_mean > half);
        let changed = short != b.has_short_ttime;
        b.has_short_ttime = short;
        if changed
            && self.q(q).last_serv_time_ns == 0
            && (self.now >= self.q(q).decrease_time + 100 * MS || !short)
        {
            self.reset_inject_limit(q);
        }
    }

    /// `bfq_reset_inject_limit`: forget the baseline; start from no injection for a
    /// queue with a short think time, from one request otherwise.
    fn reset_inject_limit(&mut self, q: u32) {
        self.waited_rq = None;
        let now = self.now;
        let b = self.qm(q);
        b.last_serv_time_ns = 0;
        b.inject_limit = if b.has_short_ttime { 0 } else { 1 };
        b.decrease_time = now;
    }

    /// `bfq_check_waker`: a synchronous queue that gets I/O within 4 ms of another
    /// queue's completion, three times within 128 × `slice_idle`, and whose think time is
    /// long, is taken to be woken by that queue.
    fn check_waker(&mut self, q: u32) {
        let Some(last) = self.last_completed_rq_bfqq else {
            return;
        };
        let now = self.now;
        if last == q
            || self.q(q).has_short_ttime
            || now - self.last_completion >= 4 * MS
            || self.q(q).waker == Some(last)
        {
            return;
        }
        let slice_idle = self.slice_idle;
        let b = self.qm(q);
        if b.tentative_waker != Some(last) || now > b.waker_detection_started + 128 * slice_idle {
            b.tentative_waker = Some(last);
            b.num_waker_detections = 1;
            b.waker_detection_started = now;
        } else {
            b.num_waker_detections += 1;
        }
        if b.num_waker_detections == 3 {
            b.waker = Some(last);
            b.tentative_waker = None;
            self.woken_seq += 1;
            self.qm(q).woken_order = self.woken_seq;
        }
    }

    /// The head of the in-service queue's woken list: of the queues it wakes, the one
    /// most recently added to the list or made busy (`bfq_add_bfqq_busy` moves a woken
    /// queue to the head).
    fn blocked_queue(&self, waker: u32) -> Option<u32> {
        (0..self.queues.len() as u32)
            .filter(|&b| self.q(b).waker == Some(waker))
            .max_by_key(|&b| self.q(b).woken_order)
    }

    /// Whether `q` is busy with a next request its budget covers: a queue I/O may be
    /// injected from.
    fn injectable(&self, io: &IoCtx, q: u32) -> bool {
        let b = self.q(q);
        b.busy
            && b.next_rq
                .is_some_and(|n| self.serv_to_charge(io, n, q) <= self.budget_left(q))
    }

    /// `bfq_choose_bfqq_for_injection`: the first queue on the active list (most
    /// recently queued first) with a request its budget covers, while fewer requests than
    /// the in-service queue's inject limit are in flight; on a non-rotational device a
    /// large request (≥ `BFQQ_SECT_THR_NONROT`) is injected only into an empty drive.
    fn choose_bfqq_for_injection(&mut self, io: &IoCtx) -> Option<u32> {
        let s = self.in_service?;
        let mut limit = self.q(s).inject_limit;
        let always_inject = self.wr_coeff_of(s) == 1 || !self.q(s).has_short_ttime;
        // The kernel adds `bfq_slice_idle` (ns) to a jiffies count here: with 1 ms
        // jiffies the limit is raised only after slice_idle-in-ns milliseconds of idling.
        if limit == 0
            && self.q(s).last_serv_time_ns == 0
            && self.q(s).wait_request
            && self.now >= self.last_idling_start + self.slice_idle * MS
        {
            limit = 1;
        }
        if self.rq_in_driver >= limit {
            return None;
        }
        let base_limit = self.q(s).inject_limit;
        let found = self
            .wf
            .active_ids()
            .filter(|&q| {
                let b = self.q(q);
                let Some(next) = b.next_rq else {
                    return false;
                };
                if !(always_inject || self.wr_coeff_of(q) > 1)
                    || self.serv_to_charge(io, next, q) > self.budget_left(q)
                {
                    return false;
                }
                let l = if self.nonrot && io.request(next).nr_sectors() >= SECT_THR_NONROT {
                    limit.min(1)
                } else {
                    base_limit
                };
                self.rq_in_driver < l
            })
            .max_by_key(|&q| self.wf.active_order(q));
        if found.is_some() {
            self.rqs_injected = true;
        }
        found
    }

    /// `bfq_update_inject_limit`, at the completion of the measured first request: with
    /// injection, lower the limit if the total service time exceeded 1.5 × the
    /// baseline, else raise it (up to one more than the drive was seen holding); with
    /// nothing else in flight, (re)measure the baseline.
    fn update_inject_limit(&mut self, q: u32) {
        let tot = self.now - self.last_empty_occupied;
        let now = self.now;
        let (rqs_injected, rq_in_driver, max_in_driver) =
            (self.rqs_injected, self.rq_in_driver, self.max_rq_in_driver);
        let b = self.qm(q);
        let old_limit = b.inject_limit;
        if b.last_serv_time_ns > 0 && rqs_injected {
            let threshold = (b.last_serv_time_ns * 3) >> 1;
            if tot >= threshold && old_limit > 0 {
                b.inject_limit -= 1;
                b.decrease_time = now;
            } else if tot < threshold && old_limit <= max_in_driver {
                b.inject_limit += 1;
            }
        }
        if (b.last_serv_time_ns == 0 && rq_in_driver == 1) || tot < b.last_serv_time_ns {
            if b.last_serv_time_ns == 0 {
                b.inject_limit = old_limit.max(1);
            }
            b.last_serv_time_ns = tot;
        } else if !rqs_injected && rq_in_driver == 1 {
            b.last_serv_time_ns = tot;
        }
        self.waited_rq = None;
        self.rqs_injected = false;
    }

    /// What `bfq_add_request` does for a synchronous queue whose process has no other
    /// request (`RQ_BIC(rq)->requests <= 1`): waker detection, the periodic reset of the
    /// inject limit (every second), and, for the queue in service, the start of a total
    /// service time measurement when the drive is empty or injection is under way.
    fn add_request_injection(&mut self, q: u32) {
        self.check_waker(q);
        if self.now >= self.q(q).decrease_time + 1000 * MS {
            self.reset_inject_limit(q);
        }
        if self.in_service == Some(q)
            && (self.rq_in_driver == 0
                || (self.q(q).last_serv_time_ns > 0 && self.rqs_injected && self.rq_in_driver > 0))
            && self.now >= self.q(q).decrease_time + 10 * MS
        {
            self.last_empty_occupied = self.now;
            self.wait_dispatch = true;
            if self.rq_in_driver == 0 {
                self.rqs_injected = false;
            }
        }
    }

    /// `BFQ_RQ_SEEKY`: a far request, and on a non-rotational device a small one.
    fn rq_seeky(&self, last_pos: u64, rq: &Request) -> bool {
        let dist = if last_pos != 0 {
            rq.sector.abs_diff(last_pos)
        } else {
            0
        };
        dist > SEEK_THR && (!self.nonrot || rq.nr_sectors() < SECT_THR_NONROT)
    }

    /// `bfq_update_io_seektime`.
    fn update_io_seektime(&mut self, q: u32, rq: &Request) {
        let seeky = self.rq_seeky(self.q(q).last_request_pos, rq);
        let b = self.qm(q);
        b.seek_history = (b.seek_history << 1) | seeky as u32;
        if self.wr_coeff_of(q) > 1
            && self.q(q).wr_cur_max_time == self.wr_rt_max_time
            && self.q(q).seek_history == u32::MAX
        {
            self.srt_ends(q);
        }
    }

    /// A soft real-time raising ends: back to the interactive raising it interrupted if
    /// that would still run (`switch_back_to_interactive_wr`), else no raising.
    fn srt_ends(&mut self, q: u32) {
        if self.now > self.q(q).wr_start_at_switch_to_srt + self.wr_duration() {
            self.end_wr(q);
        } else {
            let (c, d) = (self.wr_coeff, self.wr_duration());
            self.set_wr_coeff(q, c);
            let b = self.qm(q);
            b.wr_cur_max_time = d;
            b.last_wr_start_finish = b.wr_start_at_switch_to_srt;
            self.wf.ent[q as usize].prio_changed = true;
        }
    }

    /// `bfq_update_io_intensity`.
    fn update_io_intensity(&mut self, q: u32) {
        let now = self.now;
        let b = self.qm(q);
        let tot_io_time = now - b.io_start_time;
        if b.rqs.is_empty(LIST) && b.dispatched == 0 {
            b.tot_idle_time += now - b.last_end_request;
        }
        if b.just_created {
            return;
        }
        b.io_bound = b.tot_idle_time * 5 <= tot_io_time;
        if tot_io_time > 200 * MS {
            b.io_start_time = now - tot_io_time / 2;
            b.tot_idle_time /= 2;
        }
    }

    /// `bfq_bfqq_end_wr`.
    fn end_wr(&mut self, q: u32) {
        let now = self.now;
        if self.q(q).wr_cur_max_time != self.wr_rt_max_time {
            self.qm(q).soft_rt_next_start = now;
        }
        if self.q(q).busy {
            self.wr_busy_queues -= 1;
        }
        self.set_wr_coeff(q, 1);
        let b = self.qm(q);
        b.wr_cur_max_time = 0;
        b.last_wr_start_finish = now;
        self.wf.ent[q as usize].prio_changed = true;
    }

    /// `bfq_bfqq_update_budg_for_activation`: a queue that emptied with budget left and
    /// is back in time keeps what is left (and may preempt); else a fresh budget.
    fn update_budg_for_activation(&mut self, io: &IoCtx, q: u32, arrived_in_time: bool) -> bool {
        if self.q(q).non_blocking_wait_rq && arrived_in_time && self.budget_left(q) > 0 {
            let left = self.budget_left(q);
            let e = &mut self.wf.ent[q as usize];
            e.budget = left.min(self.queues[q as usize].max_budget);
            e.service = 0;
            return true;
        }
        let next = self.q(q).next_rq.expect("an activated queue has a request");
        let charge = self.serv_to_charge(io, next, q);
        let e = &mut self.wf.ent[q as usize];
        e.service = 0;
        e.budget = self.queues[q as usize].max_budget.max(charge);
        self.qm(q).non_blocking_wait_rq = false;
        false
    }

    /// `bfq_update_bfqq_wr_on_rq_arrival`.
    fn update_wr_on_rq_arrival(
        &mut self,
        q: u32,
        old_wr_coeff: u64,
        wr_or_deserves_wr: bool,
        interactive: bool,
        soft_rt: bool,
    ) {
        let now = self.now;
        if old_wr_coeff == 1 && wr_or_deserves_wr {
            if interactive {
                let (c, d) = (self.wr_coeff, self.wr_duration());
                self.set_wr_coeff(q, c);
                let b = self.qm(q);
                b.service_from_wr = 0;
                b.wr_cur_max_time = d;
            } else {
                let (c, d) = (self.wr_coeff * SOFTRT_WEIGHT_FACTOR, self.wr_rt_max_time);
                self.set_wr_coeff(q, c);
                let b = self.qm(q);
                b.wr_start_at_switch_to_srt = NEVER;
                b.wr_cur_max_time = d;
            }
            let cap = 2 * self.min_budget();
            let e = &mut self.wf.ent[q as usize];
            e.budget = e.budget.min(cap);
        } else if old_wr_coeff > 1 {
            if interactive {
                let (c, d) = (self.wr_coeff, self.wr_duration());
                self.set_wr_coeff(q, c);
                self.qm(q).wr_cur_max_time = d;
            } else if soft_rt {
                if self.q(q).wr_cur_max_time != self.wr_rt_max_time {
                    let (c, d) = (self.wr_coeff * SOFTRT_WEIGHT_FACTOR, self.wr_rt_max_time);
                    self.set_wr_coeff(q, c);
                    let b = self.qm(q);
                    b.wr_start_at_switch_to_srt = b.last_wr_start_finish;
                    b.wr_cur_max_time = d;
                }
                self.qm(q).last_wr_start_finish = now;
            }
        }
    }

    /// `bfq_bfqq_higher_class_or_weight` (one flat group).
    fn higher_class_or_weight(&self, q: u32, other: u32) -> bool {
        let (a, b) = (self.ent(q), self.ent(other));
        a.class < b.class || (a.class == b.class && a.weight > b.weight)
    }

    /// `bfq_add_bfqq_busy`.
    fn add_busy(&mut self, q: u32) {
        let nbwr = self.q(q).non_blocking_wait_rq;
        self.wf.activate(q, nbwr);
        let class = self.ent(q).class;
        let b = self.qm(q);
        b.non_blocking_wait_rq = false;
        b.busy = true;
        b.busy_class = class;
        self.busy_queues[class] += 1;
        if self.q(q).dispatched == 0 && self.wr_coeff_of(q) == 1 {
            self.wf.weights_add(q);
        }
        if self.wr_coeff_of(q) > 1 {
            self.wr_busy_queues += 1;
        }
        if self.q(q).waker.is_some() {
            self.woken_seq += 1;
            self.qm(q).woken_order = self.woken_seq;
        }
    }

    /// `bfq_del_bfqq_busy`.
    fn del_busy(&mut self, q: u32) {
        let b = self.qm(q);
        b.busy = false;
        let class = b.busy_class;
        self.busy_queues[class] -= 1;
        if self.wr_coeff_of(q) > 1 {
            self.wr_busy_queues -= 1;
        }
        self.wf.deactivate(q, true);
        if self.q(q).dispatched == 0 {
            self.wf.weights_remove(q);
        }
    }

    /// `bfq_bfqq_handle_idle_busy_switch`: a queue gets its first request after being
    /// empty — raising decisions, its budget, and whether it preempts the queue in
    /// service.
    fn handle_idle_busy_switch(&mut self, io: &mut IoCtx, q: u32, old_wr_coeff: u64) -> bool {
        let now = self.now;
        let b = self.q(q);
        let idle_for_long_time =
            b.dispatched == 0 && now > b.budget_timeout + self.wr_min_idle_time;
        let arrived_in_time = now <= b.last_end_request + 3 * self.slice_idle;
        let default_weight = self.ent(q).new_weight == DEFAULT_WEIGHT;
        let soft_rt = self.wr_max_softrt_rate > 0
            && b.seek_history != u32::MAX
            && now > b.soft_rt_next_start
            && b.dispatched == 0
            && default_weight;
        let interactive = idle_for_long_time && default_weight;
        let wr_or_deserves_wr =
            self.low_latency && (old_wr_coeff > 1 || (b.sync && (interactive || soft_rt)));
        let wants_to_preempt = self.update_budg_for_activation(io, q, arrived_in_time);
        self.qm(q).just_created = false;
        if self.low_latency {
            self.update_wr_on_rq_arrival(q, old_wr_coeff, wr_or_deserves_wr, interactive, soft_rt);
            if old_wr_coeff != self.wr_coeff_of(q) {
                self.wf.ent[q as usize].prio_changed = true;
            }
        }
        let b = self.qm(q);
        b.last_idle_bklogged = now;
        b.service_from_backlogged = 0;
        b.softrt_update = false;
        self.add_busy(q);
        if let Some(s) = self.in_service {
            let preempt = (wants_to_preempt && self.wr_coeff_of(q) >= self.wr_coeff_of(s))
                || self.higher_class_or_weight(q, s)
                || !self.better_to_idle(s);
            if preempt && self.wf.has_active() {
                self.expire(io, s, false, Expiration::Preempted);
            }
        }
        interactive
    }

    /// `bfq_add_request`.
    fn add_request(&mut self, io: &mut IoCtx, q: u32, rq: RqId) {
        let r = *io.request(rq);
        let old_wr_coeff = self.wr_coeff_of(q);
        self.queued += 1;
        if self.q(q).sync && self.q(q).rqs.is_empty(LIST) && self.q(q).dispatched == 0 {
            self.add_request_injection(q);
        }
        if self.q(q).sync {
            self.update_io_intensity(q);
        }
        let fifo_time = self.now + self.fifo_expire[r.sync as usize];
        self.qm(q).rqs.add(rq, LIST, r.sector, fifo_time as Time);
        let prev = self.q(q).next_rq;
        let next = self.choose_req(io, prev, Some(rq), self.last_position);
        self.qm(q).next_rq = next;
        let mut interactive = false;
        if !self.q(q).busy {
            interactive = self.handle_idle_busy_switch(io, q, old_wr_coeff);
        } else {
            if self.low_latency
                && old_wr_coeff == 1
                && !r.sync
                && self.now > self.q(q).last_wr_start_finish + self.wr_min_inter_arr_async
            {
                let (c, d) = (self.wr_coeff, self.wr_duration());
                self.set_wr_coeff(q, c);
                self.qm(q).wr_cur_max_time = d;
                self.wr_busy_queues += 1;
                self.wf.ent[q as usize].prio_changed = true;
            }
            if prev != self.q(q).next_rq {
                self.updated_next_req(io, q);
            }
        }
        if self.low_latency && (old_wr_coeff == 1 || self.wr_coeff_of(q) == 1 || interactive) {
            let now = self.now;
            self.qm(q).last_wr_start_finish = now;
        }
    }

    /// `bfq_rq_enqueued`: a request for the queue being waited for ends the wait.
    fn rq_enqueued(&mut self, io: &mut IoCtx, q: u32, rq: &Request) {
        self.qm(q).last_request_pos = rq.sector + rq.nr_sectors();
        if self.in_service == Some(q) && self.q(q).wait_request {
            let small_req = self.q(q).rqs.len(LIST) == 1 && rq.nr_sectors() < 32;
            let budget_timeout = self.budget_timeout(q);
            if small_req && self.idling_boosts_thr_without_issues(q) && !budget_timeout {
                return;
            }
            self.cancel_idle_timer(q);
            if budget_timeout {
                self.expire(io, q, false, Expiration::BudgetTimeout);
            }
        }
    }

    fn cancel_idle_timer(&mut self, q: u32) {
        self.qm(q).wait_request = false;
        self.timer_gen = (self.timer_gen + 1) & TIMER_TOKEN_MASK;
    }

    /// `bfq_remove_request`.
    fn remove_request(&mut self, io: &IoCtx, q: u32, rq: RqId) {
        if self.q(q).next_rq == Some(rq) {
            let next = self.find_next_rq(io, q, rq);
            self.qm(q).next_rq = next;
            self.updated_next_req(io, q);
        }
        self.queued -= 1;
        self.qm(q).rqs.remove(rq);
        self.rq_queued[rq.0 as usize] = false;
        if self.q(q).rqs.is_empty(LIST) {
            self.qm(q).next_rq = None;
            if self.q(q).busy && self.in_service != Some(q) {
                self.del_busy(q);
                let e = &mut self.wf.ent[q as usize];
                e.budget = 0;
                e.service = 0;
            }
        }
    }

    fn budget_timeout(&self, q: u32) -> bool {
        self.now >= self.q(q).budget_timeout
    }

    /// `bfq_may_expire_for_budg_timeout`.
    fn may_expire_for_budg_timeout(&self, q: u32) -> bool {
        (!self.q(q).wait_request || self.budget_left(q) >= self.ent(q).budget / 3)
            && self.budget_timeout(q)
    }

    /// `idling_boosts_thr_without_issues`: on a rotational device that is not seen
    /// queueing always, else for a sequential, I/O-bound queue with a short think time
    /// on a rotational or non-queueing device; never while a queue is weight-raised.
    /// (`hw_tag` is -1 until known, which the kernel's `!bfqd->hw_tag` reads as queueing.)
    fn idling_boosts_thr_without_issues(&self, q: u32) -> bool {
        let b = self.q(q);
        let sequential_and_io_bound = !self.seeky(q) && b.io_bound && b.has_short_ttime;
        let no_queueing = self.hw_tag == 0;
        let rot_without_queueing = !self.nonrot && no_queueing;
        let boosts =
            rot_without_queueing || ((!self.nonrot || no_queueing) && sequential_and_io_bound);
        boosts && self.wr_busy_queues == 0
    }

    /// `idling_needed_for_service_guarantees`.
    fn idling_needed_for_service_guarantees(&self, q: u32) -> bool {
        let tot = self.tot_busy_queues();
        (self.wr_coeff_of(q) > 1
            && (self.wr_busy_queues < tot || self.rq_in_driver >= self.q(q).dispatched + 4))
            || self.asymmetric(q)
            || tot == 1
    }

    /// `bfq_better_to_idle`.
    fn better_to_idle(&self, q: u32) -> bool {
        if self.strict_guarantees {
            return true;
        }
        if self.slice_idle == 0 || !self.q(q).sync || self.class_idle(q) {
            return false;
        }
        self.idling_boosts_thr_without_issues(q) || self.idling_needed_for_service_guarantees(q)
    }

    /// `bfq_bfqq_must_idle`.
    fn must_idle(&self, q: u32) -> bool {
        self.q(q).rqs.is_empty(LIST) && self.better_to_idle(q)
    }

    /// `bfq_arm_slice_timer`.
    fn arm_slice_timer(&mut self, io: &mut IoCtx, q: u32) {
        self.qm(q).wait_request = true;
        let mut sl = self.slice_idle;
        if self.seeky(q) && self.wr_coeff_of(q) == 1 && !self.asymmetric(q) {
            sl = sl.min(MIN_TT);
        } else if self.wr_coeff_of(q) > 1 {
            sl = sl.max(20 * MS);
        }
        self.last_idling_start = self.now;
        self.timer_gen = (self.timer_gen + 1) & TIMER_TOKEN_MASK;
        io.arm_timer((self.now + sl) as Time, self.timer_gen);
    }

    /// `bfq_bfqq_served` for the queue's own counters, then the service tree.
    fn served(&mut self, q: u32, served: u64) {
        let raised = self.wr_coeff_of(q) > 1;
        let b = self.qm(q);
        if raised {
            b.service_from_wr += served;
        }
        b.service_from_backlogged += served;
        self.wf.served(q, served);
    }

    /// `bfq_bfqq_charge_time`: a slow queue pays for the time it held the device as the
    /// share of the maximum budget that time is worth.
    fn charge_time(&mut self, q: u32, time_ms: u64) {
        let timeout_ms = (DEFAULT_TIMEOUT / MS) as u64;
        let bounded = time_ms.min(timeout_ms);
        let for_time = self.max_budget * bounded / timeout_ms;
        let service = self.ent(q).service;
        let total = for_time.max(service);
        if total > self.ent(q).budget {
            self.wf.ent[q as usize].budget = total;
        }
        self.served(q, total - service);
    }

    /// `bfq_bfqq_is_slow`: (slow, ms the slot lasted).
    fn is_slow(&self, q: u32, compensate: bool) -> (bool, u64) {
        if !self.q(q).sync {
            return (false, 0);
        }
        let mut slow = self.seeky(q);
        let end = if compensate {
            self.last_idling_start
        } else {
            self.now
        };
        let delta_us = ((end - self.last_budget_start) / 1000).max(0) as u64;
        if delta_us < 1000 {
            return (slow, (MIN_TT / MS) as u64);
        }
        if delta_us > 20_000 {
            slow = self.ent(q).service < self.max_budget / 2;
        }
        (slow, delta_us / 1000)
    }

    /// `bfq_bfqq_softrt_next_start`: the earliest time the queue's next burst may come
    /// for it to be soft real-time (rate ≤ `wr_max_softrt_rate`, after an idle pause).
    fn softrt_next_start(&self, q: u32) -> Stamp {
        let b = self.q(q);
        let by_rate = b.last_idle_bklogged
            + (b.service_from_backlogged * 1_000_000_000 / self.wr_max_softrt_rate) as Stamp;
        b.soft_rt_next_start
            .max(by_rate)
            .max(self.now + self.slice_idle + 4 * MS)
    }

    /// `__bfq_bfqq_recalc_budget`: the next budget from how this slot ended.
    fn recalc_budget(&mut self, io: &IoCtx, q: u32, reason: Expiration) {
        let min_budget = self.min_budget();
        let mut budget = if self.wr_coeff_of(q) == 1 {
            self.q(q).max_budget
        } else {
            2 * min_budget
        };
        let sync = self.q(q).sync;
        if sync && self.wr_coeff_of(q) == 1 {
            budget = match reason {
                Expiration::TooIdle => {
                    if self.q(q).dispatched > 0 {
                        (budget * 2).min(self.max_budget)
                    } else if budget > 5 * min_budget {
                        budget - 4 * min_budget
                    } else {
                        min_budget
                    }
                }
                Expiration::BudgetTimeout => (budget * 2).min(self.max_budget),
                Expiration::BudgetExhausted => (budget * 4).min(self.max_budget),
                Expiration::NoMoreRequests => self.ent(q).service.max(min_budget),
                Expiration::Preempted => return,
            };
        } else if !sync {
            budget = self.max_budget;
        }
        let mut max_budget = budget;
        if self.budgets_assigned >= STATS_MIN_BUDGETS && self.user_max_budget == 0 {
            max_budget = max_budget.min(self.max_budget);
        }
        self.qm(q).max_budget = max_budget;
        if let Some(next) = self.q(q).next_rq {
            let charge = self.serv_to_charge(io, next, q);
            self.wf.ent[q as usize].budget = max_budget.max(charge);
        }
    }

    /// `bfq_bfqq_expire` (with `__bfq_bfqq_expire`): end the queue's slot.
    fn expire(&mut self, io: &mut IoCtx, q: u32, compensate: bool, reason: Expiration) {
        let now = self.now;
        let (slow, delta_ms) = self.is_slow(q, compensate);
        let wr1 = self.wr_coeff_of(q) == 1;
        if wr1
            && (slow
                || (reason == Expiration::BudgetTimeout
                    && self.budget_left(q) >= self.ent(q).budget / 3))
        {
            self.charge_time(q, delta_ms);
        }
        if self.low_latency && wr1 {
            self.qm(q).last_wr_start_finish = now;
        }
        if self.low_latency && self.wr_max_softrt_rate > 0 && self.q(q).rqs.is_empty(LIST) {
            if self.q(q).dispatched == 0 {
                let t = self.softrt_next_start(q);
                self.qm(q).soft_rt_next_start = t;
            } else {
                self.qm(q).softrt_update = true;
            }
        }
        self.rqs_injected = false;
        self.wait_dispatch = false;
        self.waited_rq = None;
        self.recalc_budget(io, q, reason);
        if self.q(q).rqs.is_empty(LIST)
            && !(reason == Expiration::Preempted && self.idling_needed_for_service_guarantees(q))
        {
            if self.q(q).dispatched == 0 {
                self.qm(q).budget_timeout = now;
            }
            self.del_busy(q);
        } else {
            self.wf.requeue(q);
        }
        self.cancel_idle_timer(q);
        self.in_service = None;
        self.wf.reset_in_service();
        if !self.q(q).busy
            && reason != Expiration::BudgetTimeout
            && reason != Expiration::BudgetExhausted
        {
            self.qm(q).non_blocking_wait_rq = true;
        } else {
            self.wf.ent[q as usize].service = 0;
        }
    }

    /// `bfq_set_budget_timeout`.
    fn set_budget_timeout(&mut self, q: u32) {
        let coeff = if self.q(q).wr_cur_max_time == self.wr_rt_max_time {
            1
        } else {
            (self.ent(q).weight / self.ent(q).orig_weight.max(1)) as Stamp
        };
        self.last_budget_start = self.now;
        self.qm(q).budget_timeout = self.now + self.timeout * coeff;
    }

    /// `bfq_set_in_service_queue`: the next queue B-WF2Q+ picks starts its slot.
    fn set_in_service(&mut self) -> Option<u32> {
        if self.tot_busy_queues() == 0 {
            return None;
        }
        let q = self.wf.get_next(self.now as Time)?;
        let now = self.now;
        self.qm(q).fifo_expire = false;
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
        let b = self.q(q);
        if now > b.last_wr_start_finish
            && self.wr_coeff_of(q) > 1
            && b.wr_cur_max_time == self.wr_rt_max_time
            && now > b.budget_timeout
        {
            let b = self.qm(q);
            if b.budget_timeout > b.last_wr_start_finish {
                b.last_wr_start_finish += now - b.budget_timeout;
            } else {
                b.last_wr_start_finish = now;
            }
        }
        self.set_budget_timeout(q);
        self.in_service = Some(q);
        Some(q)
    }

    /// `bfq_select_queue`: keep the queue in service, or expire it and pick the next.
    /// While the queue in service is empty and idled for, another queue's request may
    /// be injected: its process's own async I/O, its waker's, the I/O of the queue it
    /// wakes, or (`bfq_choose_bfqq_for_injection`) any queue's within the inject limit;
    /// `None` while idling with nothing to inject.
    fn select_queue(&mut self, io: &mut IoCtx) -> Option<u32> {
        let mut cur = match self.in_service {
            Some(q) if self.may_expire_for_budg_timeout(q) && !self.must_idle(q) => {
                self.expire(io, q, false, Expiration::BudgetTimeout);
                self.set_in_service()
            }
            Some(q) => Some(q),
            None => self.set_in_service(),
        };
        while let Some(q) = cur {
            if let Some(next) = self.q(q).next_rq {
                if self.serv_to_charge(io, next, q) > self.budget_left(q) {
                    self.expire(io, q, false, Expiration::BudgetExhausted);
                    cur = self.set_in_service();
                    continue;
                }
                if self.q(q).wait_request {
                    self.cancel_idle_timer(q);
                }
                return Some(q);
            }
            if self.q(q).wait_request || (self.q(q).dispatched != 0 && self.better_to_idle(q)) {
                return self.injection_source(io, q);
            }
            self.expire(io, q, false, Expiration::NoMoreRequests);
            cur = self.set_in_service();
        }
        None
    }

    /// The queue `bfq_select_queue` injects from while idling for `q`, in the kernel's
    /// order of preference.
    fn injection_source(&mut self, io: &IoCtx, q: u32) -> Option<u32> {
        let b = self.q(q);
        let own_async = b
            .task
            .and_then(|t| self.table.async_queue(b.ioprio).map(|a| (t, a)))
            .filter(|&(t, a)| {
                self.injectable(io, a) && self.q(a).next_rq.is_some_and(|n| io.request(n).task == t)
            });
        if let Some((_, a)) = own_async {
            return Some(a);
        }
        if let Some(w) = self.q(q).waker.filter(|&w| self.injectable(io, w)) {
            return Some(w);
        }
        if let Some(blocked) = self.blocked_queue(q).filter(|&b| self.injectable(io, b)) {
            return Some(blocked);
        }
        if !self.idling_boosts_thr_without_issues(q)
            && (self.wr_coeff_of(q) == 1 || self.wr_busy_queues > 1 || !self.q(q).has_short_ttime)
        {
            return self.choose_bfqq_for_injection(io);
        }
        None
    }

    /// `bfq_update_wr_data`: end a raising period that ran out.
    fn update_wr_data(&mut self, q: u32) {
        if self.wr_coeff_of(q) > 1 {
            let b = self.q(q);
            if self.now > b.last_wr_start_finish + b.wr_cur_max_time {
                if b.wr_cur_max_time != self.wr_rt_max_time
                    || self.now > b.wr_start_at_switch_to_srt + self.wr_duration()
                {
                    self.end_wr(q);
                } else {
                    self.srt_ends(q);
                }
            }
            if self.wr_coeff_of(q) > 1
                && self.q(q).wr_cur_max_time != self.wr_rt_max_time
                && self.q(q).service_from_wr > MAX_SERVICE_FROM_WR
            {
                self.end_wr(q);
            }
        }
        let e = self.ent(q);
        if (e.weight > e.orig_weight) != (e.wr_coeff > 1) {
            self.wf.update_weight_prio(q, false);
        }
    }

    /// `bfq_reset_rate_computation`.
    fn reset_rate_computation(&mut self, rq: Option<&Request>) {
        match rq {
            Some(rq) => {
                self.last_dispatch = self.now;
                self.first_dispatch = self.now;
                self.peak_rate_samples = 1;
                self.sequential_samples = 0;
                self.tot_sectors_dispatched = rq.nr_sectors();
                self.last_rq_max_size = rq.nr_sectors();
            }
            None => self.peak_rate_samples = 0,
        }
    }

    /// `bfq_update_rate_reset`: fold the interval's rate into the peak rate (a low-pass
    /// filter weighted by how sequential and how long the interval was).
    fn update_rate_reset(&mut self, rq: Option<&Request>) {
        if self.peak_rate_samples >= RATE_MIN_SAMPLES && self.delta_from_first >= RATE_MIN_INTERVAL
        {
            self.delta_from_first = self
                .delta_from_first
                .max(self.last_completion - self.first_dispatch);
            let us = (self.delta_from_first / 1000).max(1) as u64;
            let mut rate = (self.tot_sectors_dispatched << RATE_SHIFT) / us;
            let few_sequential = self.sequential_samples < (3 * self.peak_rate_samples) >> 2;
            if !((few_sequential && rate <= self.peak_rate) || rate > 20 << RATE_SHIFT) {
                let weight = (9 * self.sequential_samples as u64) / self.peak_rate_samples as u64;
                let weight =
                    (weight * self.delta_from_first as u64 / RATE_REF_INTERVAL as u64).min(8);
                let divisor = 10 - weight;
                self.peak_rate = self.peak_rate * (divisor - 1) / divisor;
                rate /= divisor;
                self.peak_rate = (self.peak_rate + rate).max(1);
                if self.user_max_budget == 0 {
                    self.max_budget = self.calc_max_budget();
                }
            }
        }
        self.reset_rate_computation(rq);
    }

    /// `bfq_update_peak_rate` at a dispatch.
    fn update_peak_rate(&mut self, rq: &Request) {
        let now = self.now;
        if self.peak_rate_samples == 0 {
            self.reset_rate_computation(Some(rq));
        } else if now - self.last_dispatch > 100 * MS && self.rq_in_driver == 0 {
            self.update_rate_reset(Some(rq));
        } else {
            self.peak_rate_samples += 1;
            if (self.rq_in_driver > 0 || now - self.last_completion < MIN_TT)
                && !self.rq_seeky(self.last_position, rq)
            {
                self.sequential_samples += 1;
            }
            self.tot_sectors_dispatched += rq.nr_sectors();
            self.last_rq_max_size = if !self.peak_rate_samples.is_multiple_of(32) {
                self.last_rq_max_size.max(rq.nr_sectors())
            } else {
                rq.nr_sectors()
            };
            self.delta_from_first = now - self.first_dispatch;
            if self.delta_from_first >= RATE_REF_INTERVAL {
                self.update_rate_reset(Some(rq));
            }
        }
        self.last_position = rq.sector + rq.nr_sectors();
        self.last_dispatch = now;
    }

    /// `bfq_dispatch_rq_from_bfqq`.
    fn dispatch_rq_from_bfqq(&mut self, io: &mut IoCtx, q: u32) -> RqId {
        let rq = self.q(q).next_rq.expect("a selected queue has a request");
        let charge = self.serv_to_charge(io, rq, q);
        self.served(q, charge);
        if self.in_service == Some(q) && self.wait_dispatch {
            self.wait_dispatch = false;
            self.waited_rq = Some(rq);
        }
        self.qm(q).dispatched += 1;
        let r = *io.request(rq);
        self.update_peak_rate(&r);
        self.remove_request(io, q, rq);
        if self.in_service == Some(q) {
            self.update_wr_data(q);
            if self.tot_busy_queues() > 1 && self.class_idle(q) {
                self.expire(io, q, false, Expiration::BudgetExhausted);
            }
        }
        rq
    }

    /// `bfq_update_hw_tag`: whether the device is seen holding several requests.
    fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.rq_in_driver);
        if self.hw_tag == 1 || self.rq_in_driver + self.queued <= HW_QUEUE_THRESHOLD {
            return;
        }
        if let Some(s) = self.in_service {
            let b = self.q(s);
            if b.has_short_ttime
                && b.dispatched + (b.rqs.len(LIST) as u32) < HW_QUEUE_THRESHOLD
                && self.rq_in_driver < HW_QUEUE_THRESHOLD
            {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = (self.max_rq_in_driver > HW_QUEUE_THRESHOLD) as i8;
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }

    fn queue_of(&self, rq: RqId) -> u32 {
        self.rq_queue[rq.0 as usize]
    }

    fn is_queued(&self, rq: RqId) -> bool {
        self.rq_queued.get(rq.0 as usize).copied().unwrap_or(false)
    }
}

/// A sysfs time in ms, as ns.
fn ms(v: u64) -> Stamp {
    (v.min(i32::MAX as u64) as Stamp) * MS
}

impl IoScheduler for Bfq {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "bfq",
            summary: "Budget Fair Queueing: per-process queues served in budgets (sectors) \
                      by B-WF2Q+ over ioprio weights, RT > BE > idle, idling for sync \
                      queues, weight raising for interactive and soft real-time queues",
            source: "torvalds/linux block/bfq-iosched.c, bfq-wf2q.c, bfq-iosched.h (v6.1): \
                     bfq_select_queue, bfq_bfqq_expire, __bfq_bfqq_recalc_budget, \
                     bfq_bfqq_handle_idle_busy_switch, bfq_update_wr_data, \
                     bfq_update_peak_rate, bfq_lookup_next_entity, \
                     bfq_choose_bfqq_for_injection, bfq_update_inject_limit, \
                     bfq_check_waker; Valente & Checconi, \
                     IEEE TC 2010; Valente & Andreolini, SYSTOR 2012",
        }
    }

    /// `bfq_init_queue`: the reference rate and raising duration of the device's kind.
    fn set_rotational(&mut self, rotational: bool) {
        self.nonrot = !rotational;
        let k = self.nonrot as usize;
        self.peak_rate = REF_RATE[k] * 2 / 3;
        self.rate_dur_prod = REF_RATE[k] * REF_WR_DURATION_MS[k];
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = parse_value(value)?;
        match name {
            "slice_idle" => self.slice_idle = ms(v),
            "slice_idle_us" => self.slice_idle = (v.min(u32::MAX as u64) * 1000) as Stamp,
            "timeout_sync" => {
                self.timeout = ms(v.max(1));
                if self.user_max_budget == 0 {
                    self.max_budget = self.calc_max_budget();
                }
            }
            "max_budget" => {
                let v = v.min(i32::MAX as u64);
                self.max_budget = if v == 0 { self.calc_max_budget() } else { v };
                self.user_max_budget = v;
            }
            "back_seek_max" => self.back_max = v.min(i32::MAX as u64),
            "back_seek_penalty" => self.back_penalty = v.clamp(1, i32::MAX as u64),
            "fifo_expire_sync" => self.fifo_expire[1] = ms(v.max(1)),
            "fifo_expire_async" => self.fifo_expire[0] = ms(v.max(1)),
            "low_latency" => {
                let on = v >= 1;
                if !on && self.low_latency {
                    for q in 0..self.queues.len() as u32 {
                        if self.wr_coeff_of(q) > 1 {
                            self.end_wr(q);
                        }
                    }
                }
                self.low_latency = on;
            }
            "strict_guarantees" => {
                let on = v >= 1;
                if on && !self.strict_guarantees && self.slice_idle < 8 * MS {
                    self.slice_idle = 8 * MS;
                }
                self.strict_guarantees = on;
            }
            _ => return Err(format!("unknown parameter '{name}'")),
        }
        Ok(())
    }

    /// `bfq_insert_request` → `__bfq_insert_request`.
    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        self.now = io.now() as Stamp;
        let r = *io.request(rq);
        let fresh = self.queues.len() as u32;
        let q = self.table.get_or_create(r.task, r.ioprio, r.sync, || fresh);
        if q == fresh {
            self.new_queue(r.ioprio, r.sync, r.task);
        }
        self.check_ioprio_change(q, r.ioprio);
        if self.rq_queue.len() <= rq.0 as usize {
            self.rq_queue.resize(rq.0 as usize + 1, u32::MAX);
            self.rq_queued.resize(rq.0 as usize + 1, false);
        }
        self.rq_queue[rq.0 as usize] = q;
        self.rq_queued[rq.0 as usize] = true;
        self.update_io_thinktime(q);
        self.update_has_short_ttime(q);
        self.update_io_seektime(q, &r);
        self.add_request(io, q, rq);
        self.rq_enqueued(io, q, &r);
    }

    /// `bfq_request_merge` (`bfq_find_rq_fmerge`): a request of the submitter's queue
    /// (`bfqd->bio_bfqq`) that starts where the bio ends.
    fn request_merge(&mut self, _io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        let q = self.table.get(bio.task, bio.ioprio, bio.sync)?;
        let end = bio.sector + bio.bytes / SECTOR_BYTES;
        let rq = self.q(q).rqs.find_at(LIST, end)?;
        Some((rq, MergeKind::Front))
    }

    /// `bfq_allow_bio_merge`: no sync bio into an async request, and a bio only into a
    /// request of the queue it would be queued with (`bfqq == RQ_BFQQ(rq)`).
    fn allow_merge(&self, io: &IoCtx, rq: RqId, bio: &Bio) -> bool {
        if bio.sync && !io.request(rq).sync {
            return false;
        }
        self.table
            .get(bio.task, bio.ioprio, bio.sync)
            .is_some_and(|q| self.is_queued(rq) && self.queue_of(rq) == q)
    }

    /// `bfq_request_merged`: a front merge moved the request's start; re-sort it, and it
    /// may now be its queue's next request.
    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        self.now = io.now() as Stamp;
        if kind != MergeKind::Front || !self.is_queued(rq) {
            return;
        }
        let q = self.queue_of(rq);
        let sector = io.request(rq).sector;
        let prev = self.q(q).rqs.former(rq);
        self.qm(q).rqs.resort(rq, sector);
        if prev.is_some_and(|p| sector < io.request(p).sector) {
            let old = self.q(q).next_rq;
            let next = self.choose_req(io, old, Some(rq), self.last_position);
            self.qm(q).next_rq = next;
            if old != next {
                self.updated_next_req(io, q);
            }
        }
    }

    fn merges_requests(&self) -> bool {
        true
    }

    /// `bfq_requests_merged`: `next` joined `rq`; `rq` keeps the older FIFO deadline of
    /// the two (same queue), replaces `next` as its queue's next request, and `next`
    /// leaves its queue (unless it was never inserted).
    fn requests_merged(&mut self, io: &mut IoCtx, rq: RqId, next: RqId) {
        self.now = io.now() as Stamp;
        if !self.is_queued(next) {
            return;
        }
        let next_q = self.queue_of(next);
        if self.is_queued(rq) {
            let q = self.queue_of(rq);
            if self.q(q).next_rq == Some(next) {
                self.qm(q).next_rq = Some(rq);
            }
            if q == next_q {
                // `rq` takes `next`'s FIFO place and expiry if `next` is older.
                self.qm(q).rqs.inherit_expiry(rq, next);
            }
        }
        self.remove_request(io, next_q, next);
    }

    fn has_work(&self, _io: &IoCtx) -> bool {
        self.queued > 0
    }

    /// `__bfq_dispatch_request`.
    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId> {
        self.now = io.now() as Stamp;
        if self.tot_busy_queues() == 0 || (self.strict_guarantees && self.rq_in_driver > 0) {
            return None;
        }
        let q = self.select_queue(io)?;
        let rq = self.dispatch_rq_from_bfqq(io, q);
        self.rq_in_driver += 1;
        Some(rq)
    }

    /// `bfq_completed_request`.
    fn completed(&mut self, io: &mut IoCtx, rq: RqId) {
        self.now = io.now() as Stamp;
        let now = self.now;
        let q = self.queue_of(rq);
        if self.waited_rq == Some(rq) {
            self.update_inject_limit(q);
        }
        self.update_hw_tag();
        self.rq_in_driver -= 1;
        self.qm(q).dispatched -= 1;
        if self.q(q).dispatched == 0 && !self.q(q).busy {
            self.qm(q).budget_timeout = now;
            self.wf.weights_remove(q);
        }
        self.qm(q).last_end_request = now;
        let delta_us = ((now - self.last_completion) / 1000) as u64;
        if delta_us > (MIN_TT / 1000) as u64
            && (self.last_rq_max_size << RATE_SHIFT) / delta_us < 1 << (RATE_SHIFT - 10)
        {
            self.update_rate_reset(None);
        }
        self.last_completion = now;
        self.last_completed_rq_bfqq = Some(q);
        let b = self.q(q);
        if b.softrt_update
            && b.dispatched == 0
            && b.rqs.is_empty(LIST)
            && self.wr_coeff_of(q) != self.wr_coeff
        {
            let t = self.softrt_next_start(q);
            self.qm(q).soft_rt_next_start = t;
        }
        if self.in_service == Some(q) {
            if self.must_idle(q) {
                if self.q(q).dispatched == 0 {
                    self.arm_slice_timer(io, q);
                }
            } else if self.may_expire_for_budg_timeout(q) {
                self.expire(io, q, false, Expiration::BudgetTimeout);
            } else if self.q(q).rqs.is_empty(LIST)
                && (self.q(q).dispatched == 0 || !self.better_to_idle(q))
            {
                self.expire(io, q, false, Expiration::NoMoreRequests);
            }
        }
    }

    /// `bfq_idle_slice_timer_body`: the queue in service did not get a request in time.
    fn timer(&mut self, io: &mut IoCtx, token: u64) {
        self.now = io.now() as Stamp;
        if token != self.timer_gen {
            return;
        }
        let Some(q) = self.in_service else {
            return;
        };
        if !self.q(q).wait_request {
            return;
        }
        self.qm(q).wait_request = false;
        let reason = if self.budget_timeout(q) {
            Expiration::BudgetTimeout
        } else if self.q(q).rqs.is_empty(LIST) {
            Expiration::TooIdle
        } else {
            return;
        };
        self.expire(io, q, true, reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_bfq_ioprio_to_weight() {
        assert_eq!(ioprio_to_weight(0), 80);
        assert_eq!(ioprio_to_weight(4), DEFAULT_WEIGHT);
        assert_eq!(ioprio_to_weight(7), 10);
    }

    #[test]
    fn tunables_take_the_kernel_units_and_refuse_text() {
        let mut b = Bfq::default();
        b.set_param("slice_idle", "0").unwrap();
        assert_eq!(b.slice_idle, 0);
        b.set_param("strict_guarantees", "1").unwrap();
        assert_eq!(
            b.slice_idle,
            8 * MS,
            "strict guarantees raise slice_idle to 8 ms"
        );
        b.set_param("max_budget", "4096").unwrap();
        assert_eq!((b.max_budget, b.user_max_budget), (4096, 4096));
        b.set_param("timeout_sync", "0").unwrap();
        assert_eq!(b.timeout, MS, "at least 1 ms");
        assert!(b
            .set_param("low_latency", "yes")
            .unwrap_err()
            .contains("'yes'"));
        assert!(b
            .set_param("quantum", "4")
            .unwrap_err()
            .contains("unknown parameter"));
    }

    #[test]
    fn the_raising_duration_follows_the_peak_rate_within_3_to_25_s() {
        let mut b = Bfq::default();
        // 33000 × 2500 ms / (33000 × 2/3).
        assert_eq!(b.wr_duration(), 3750 * MS);
        b.peak_rate = 1;
        assert_eq!(b.wr_duration(), 25_000 * MS);
        b.peak_rate = 1 << 30;
        assert_eq!(b.wr_duration(), 3000 * MS);
    }
}

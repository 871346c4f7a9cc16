//! `deadline-lowprio`: Linux 3.12's Deadline scheduler (io/deadline.rs, used as it is)
//! with a queue of low-priority requests beside it, from Takamura, Ugawa and Iwasaki,
//! "A Deadline IO Scheduler Equipped with Low Priority Assignment" (低優先度処理を指定可能な
//! リアルタイム処理向け I/O スケジューラ), IPSJ SIGOS, 7 March 2014 (University of
//! Electro-Communications; slides, Linux 3.12.7).
//!
//! What the slides state:
//! - normal requests are handled by Deadline unchanged (slides 11, 13, 28);
//! - low-priority requests are held in a queue of their own (slide 13, 36) and, in
//!   normal mode, one is released every α (slides 14, 19, 40: a kernel timer, `set(α)`,
//!   each expiry `dispatch()`es one);
//! - when no normal request has arrived for β, batch mode: every held low-priority
//!   request is released and they are no longer throttled (slides 15–19, 40: `set(β)`,
//!   `mode(batch)`); a normal request brings normal mode back (slide 17, `mode(normal)`);
//! - the evaluation uses α = 200 ms, β = 500 ms (slide 21; β = 5000 ms on slide 25).
//!
//! Inferred (the scheduler's source was not published):
//! - which requests are low-priority: the slides say only that a low-priority process
//!   can be designated. schedlab takes the I/O priority class idle (`ionice -c 3`,
//!   `IOPRIO_CLASS_IDLE`), the kernel's own marking of a process whose I/O should yield;
//!   every other class is normal;
//! - a released request joins Deadline's sort list and FIFO as a new request would, its
//!   expiry counted from its release (slides 36–38 show it entering both lists at the
//!   FIFO's tail);
//! - the held queue is first come, first served (slide 36: the request added last
//!   waits behind the earlier one);
//! - the α timer is armed when a request is held and none is pending, and re-armed
//!   after each release while requests remain held (slide 40: `set(α)` after each
//!   `dispatch()`);
//! - β runs from the last normal request's arrival, restarted by each one (`mod_timer`),
//!   and from the elevator's start before any (slide 40 opens with `set(β)`); batch mode
//!   starts exactly β after the last normal request; an arrival is a request inserted
//!   into the scheduler (`elevator_add_req_fn`), not a bio merged into a queued one;
//! - merging (the seed does not mention it): Deadline's merging applies to released
//!   requests; a held request takes bios by back merge (the block layer's) and is not
//!   offered for front merges (it is on no sort list); when two requests merge and only
//!   one of them was released, the survivor is released too (its data already passed
//!   the throttle).
//!
//! Tunables: `alpha_ms`, `beta_ms` (the slides' α and β, in ms) and Deadline's own
//! (`read_expire`, `write_expire`, `writes_starved`, `fifo_batch`, `front_merges`).

use schedlab_spec::model::IoPrioClass;

use super::deadline::{store_ms, Deadline};
use super::sorted_fifo::RqList;
use super::{Bio, IoCtx, IoSchedInfo, IoScheduler, MergeKind, RqId};
use crate::types::Time;

const MS: Time = 1_000_000;

/// Timer tokens.
const ALPHA: u64 = 0;
const BETA: u64 = 1;

/// Throttled (normal) or unthrottled (batch) release of low-priority requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Normal,
    Batch,
}

pub struct DeadlineLowprio {
    deadline: Deadline,
    /// Low-priority requests not yet released to Deadline.
    held: RqList,
    mode: Mode,
    alpha: Time,
    beta: Time,
    /// Arrival of the last normal request (the elevator's start before any).
    last_normal: Time,
    alpha_armed: bool,
    beta_armed: bool,
}

impl Default for DeadlineLowprio {
    fn default() -> Self {
        DeadlineLowprio {
            deadline: Deadline::default(),
            held: RqList::new(),
            mode: Mode::Normal,
            alpha: 200 * MS,
            beta: 500 * MS,
            last_normal: 0,
            alpha_armed: false,
            beta_armed: false,
        }
    }
}

impl DeadlineLowprio {
    fn is_low(io: &IoCtx, rq: RqId) -> bool {
        io.request(rq).ioprio.class == IoPrioClass::Idle
    }

    /// Keep the β timer pending; when it fires early (a normal request came since it
    /// was armed) it is armed again for β after that request.
    fn arm_beta(&mut self, io: &mut IoCtx) {
        if !self.beta_armed {
            self.beta_armed = true;
            io.arm_timer(self.last_normal + self.beta, BETA);
        }
    }

    fn arm_alpha(&mut self, io: &mut IoCtx) {
        if !self.alpha_armed && !self.held.is_empty() {
            self.alpha_armed = true;
            let at = io.now() + self.alpha;
            io.arm_timer(at, ALPHA);
        }
    }

    /// Give one held request to Deadline.
    fn release_one(&mut self, io: &IoCtx) -> bool {
        match self.held.pop_front() {
            Some(rq) => {
                self.deadline.add_request(io, rq);
                true
            }
            None => false,
        }
    }

    fn alpha_expired(&mut self, io: &mut IoCtx) {
        self.alpha_armed = false;
        if self.mode == Mode::Normal {
            self.release_one(io);
            self.arm_alpha(io);
        }
    }

    fn beta_expired(&mut self, io: &mut IoCtx) {
        self.beta_armed = false;
        if io.now() < self.last_normal + self.beta {
            self.arm_beta(io);
            return;
        }
        self.mode = Mode::Batch;
        while self.release_one(io) {}
    }
}

impl IoScheduler for DeadlineLowprio {
    fn info(&self) -> IoSchedInfo {
        IoSchedInfo {
            name: "deadline-lowprio",
            summary: "Deadline with a throttled low-priority (idle-class) queue: one released per alpha, all after beta without normal I/O",
            source: "Takamura, Ugawa, Iwasaki: A Deadline IO Scheduler Equipped with Low Priority Assignment, IPSJ SIGOS 2014 (slides 13-19, 36-40), on torvalds/linux v3.12 block/deadline-iosched.c",
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "alpha_ms" => self.alpha = store_ms(value)?,
            "beta_ms" => self.beta = store_ms(value)?,
            _ => {
                if !self.deadline.tunables.set(name, value)? {
                    return Err(format!(
                        "unknown parameter '{name}' (deadline-lowprio has alpha_ms, beta_ms, read_expire, write_expire, writes_starved, fifo_batch, front_merges)"
                    ));
                }
            }
        }
        Ok(())
    }

    fn request_merge(&mut self, io: &IoCtx, bio: &Bio) -> Option<(RqId, MergeKind)> {
        self.deadline.request_merge(io, bio)
    }

    fn request_merged(&mut self, io: &mut IoCtx, rq: RqId, kind: MergeKind) {
        if self.deadline.holds(rq) {
            self.deadline.request_merged(io, rq, kind);
        }
    }

    fn merges_requests(&self) -> bool {
        true
    }

    fn requests_merged(&mut self, io: &mut IoCtx, rq: RqId, next: RqId) {
        if self.held.remove(next) {
            return;
        }
        if self.held.remove(rq) {
            self.deadline.add_request(io, rq);
        }
        self.deadline.requests_merged(io, rq, next);
    }

    fn insert(&mut self, io: &mut IoCtx, rq: RqId) {
        if Self::is_low(io, rq) {
            if self.mode == Mode::Batch {
                self.deadline.add_request(io, rq);
            } else {
                self.held.push_back(rq);
                self.arm_beta(io);
                self.arm_alpha(io);
            }
        } else {
            self.last_normal = io.now();
            self.mode = Mode::Normal;
            self.arm_beta(io);
            self.arm_alpha(io);
            self.deadline.add_request(io, rq);
        }
    }

    fn has_work(&self, io: &IoCtx) -> bool {
        self.deadline.has_work(io)
    }

    fn dispatch(&mut self, io: &mut IoCtx) -> Option<RqId> {
        self.deadline.dispatch(io)
    }

    fn timer(&mut self, io: &mut IoCtx, token: u64) {
        match token {
            ALPHA => self.alpha_expired(io),
            _ => self.beta_expired(io),
        }
    }
}

//! Linux 6.12's fair server: a deferred deadline server per CPU (`rq->fair_server`) that
//! gives fair-class tasks up to `runtime` per `period` (50 ms per 1 s) when higher
//! classes would starve them.
//!
//! Primary source: torvalds/linux `kernel/sched/deadline.c`, Linux 6.12.117 (Debian
//! linux-source-6.12): `replenish_dl_new_period` (l. 773-787: a deferred server that is
//! not running for a starvation case is throttled and armed), `replenish_dl_entity`
//! (l. 847-940: the deferred replenishment returns disarmed; otherwise a server not
//! running yet is deferred again to its zero-laxity time), `update_dl_entity`
//! (l. 1075-1107), `start_dl_timer` (l. 1124-1181: an armed server's timer at
//! `deadline - runtime`, else at the next period), `dl_server_timer` (l. 1202-1251: the
//! zero-laxity timer pushed forward while the server's runtime is consumed in the
//! background, by at least `dl_server_min_res` = 1 ms; then `dl_defer_running`),
//! `update_curr_dl_se` (l. 1474-1587: runtime consumed by fair tasks whether they ran
//! for the server or not; a deferred server that used it all in the background starts
//! a new period; a running one throttles until its next period; the fair server's time
//! is not charged to the RT bandwidth), `dl_server_update` (l. 1622-1627),
//! `dl_server_start` / `dl_server_stop` (l. 1829-1871: 50 ms / 1 s, `dl_defer` set;
//! starting reschedules a CPU that runs no deadline task), `enqueue_dl_entity`
//! (l. 2198-2275), `__pick_task_dl` (l. 2612-2634: the server takes `pick_task_fair`'s
//! task, and is stopped when there is none). `kernel/sched/fair.c`: `update_curr`
//! (l. 1230-1264: `dl_server_update` while the server is active), `enqueue_task_fair`
//! (l. 7117-7122: `dl_server_start` when the CPU's first fair task is queued),
//! `fair_server_pick_task` (l. 9072-9075). Deferral (`dl_defer`) came with commit
//! a110a81c52a9 ("sched/deadline: Deferrable dl server", Linux 6.12); the tree read has
//! the stable fix that clears `dl_defer_running` when `update_dl_entity` starts a new
//! period (commit 115135422562, "sched/deadline: Fix 'stuck' dl_server").
//!
//! Simplifications: the server is not an entity of the CPU's deadline tree: the pick
//! compares its deadline with the earliest deadline task's (ties go to the task), and
//! push, pull and `cpudl` do not see it; idle time is not charged to it
//! (`dl_server_update_idle_time`); CFS bandwidth throttling does not stop or start it;
//! GRUB's `running_bw` does not count it (its bandwidth is in `this_bw` and the
//! admission total, `linux_dl.rs`); it is not boosted and has no hrtick.

use super::dl_bandwidth::{to_ratio, BW_SHIFT, DL_SCALE};
use crate::ctx::Ctx;
use crate::sched::TimerId;
use crate::types::Time;

/// `dl_server_min_res`: the zero-laxity timer is not pushed forward by less.
const MIN_RES_NS: u64 = 1_000_000;

/// One CPU's fair server (`struct sched_dl_entity` with `dl_server` and `dl_defer` set).
#[derive(Clone, Copy, Debug, Default)]
pub struct FairServer {
    /// `dl_runtime`; 0 disables the server.
    pub dl_runtime: u64,
    /// `dl_period` (= `dl_deadline`).
    pub dl_period: u64,
    pub runtime: i64,
    pub deadline: u64,
    /// `dl_server`: parameters set up by the first start.
    initialised: bool,
    /// `dl_server_active`.
    pub active: bool,
    throttled: bool,
    defer_armed: bool,
    defer_running: bool,
    /// In the CPU's deadline tree (runnable for the deadline class).
    pub queued: bool,
    timer: Option<TimerId>,
}

/// What a server operation asks of its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Nothing,
    /// Reschedule the CPU if it runs no deadline task or one the server's deadline beats
    /// (`!dl_task(rq->curr) || dl_entity_preempt(dl_se, &rq->curr->dl)`).
    PreemptCheck,
    /// Reschedule unless the server is the earliest entity (`!is_leftmost`).
    ReschedUnlessLeftmost,
}

fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

impl FairServer {
    pub fn new(runtime: u64, period: u64) -> Self {
        FairServer {
            dl_runtime: runtime,
            dl_period: period,
            ..FairServer::default()
        }
    }

    /// `replenish_dl_new_period`.
    fn new_period(&mut self, now: Time) {
        self.deadline = now + self.dl_period;
        self.runtime = self.dl_runtime as i64;
        if !self.defer_running {
            self.throttled = true;
            self.defer_armed = true;
        }
    }

    /// `dl_entity_overflow`, in the kernel's scaled form (`dl_deadline` = `dl_period`).
    fn overflow(&self, now: Time) -> bool {
        let left = (self.dl_period >> DL_SCALE).wrapping_mul((self.runtime >> DL_SCALE) as u64);
        let right =
            (self.deadline.wrapping_sub(now) >> DL_SCALE).wrapping_mul(self.dl_runtime >> DL_SCALE);
        dl_time_before(right, left)
    }

    /// `start_dl_timer`: false when the activation is already past (by 1 µs or more).
    fn start_timer(&mut self, ctx: &mut Ctx, token: u64) -> bool {
        let act = if self.defer_armed {
            self.deadline.wrapping_sub(self.runtime as u64)
        } else {
            self.deadline
        };
        if (act as i128 - ctx.now() as i128) / 1000 < 0 {
            return false;
        }
        if self.timer.is_none() {
            self.timer = Some(ctx.arm_timer(act, token));
        }
        true
    }

    fn cancel_timer(&mut self, ctx: &mut Ctx) {
        if let Some(id) = self.timer.take() {
            ctx.cancel_timer(id);
        }
    }

    /// `replenish_dl_entity`.
    fn replenish(&mut self, ctx: &mut Ctx, token: u64) {
        let now = ctx.now();
        if self.defer_armed && self.overflow(now) {
            self.deadline = now + self.dl_period;
            self.runtime = self.dl_runtime as i64;
        }
        while self.runtime <= 0 {
            self.deadline += self.dl_period;
            self.runtime += self.dl_runtime as i64;
        }
        if dl_time_before(self.deadline, now) {
            self.new_period(now);
        }
        self.throttled = false;
        if self.defer_armed {
            self.defer_armed = false;
            return;
        }
        if !self.defer_running
            && dl_time_before(now, self.deadline.wrapping_sub(self.runtime as u64))
        {
            self.defer_armed = true;
            self.throttled = true;
            if !self.start_timer(ctx, token) {
                self.cancel_timer(ctx);
                self.defer_armed = false;
                self.throttled = false;
            }
        }
    }

    /// `update_dl_entity`: the CBS wake-up rule (the revised rule for a server running
    /// for a starvation case).
    fn update_dl_entity(&mut self, now: Time) {
        if dl_time_before(self.deadline, now) || self.overflow(now) {
            if self.defer_running && !dl_time_before(self.deadline, now) {
                let laxity = self.deadline - now;
                let density = to_ratio(self.dl_period, self.dl_runtime);
                self.runtime = ((density as u128 * laxity as u128) >> BW_SHIFT) as i64;
                return;
            }
            self.defer_running = false;
            self.new_period(now);
        } else if !self.defer_running {
            self.defer_armed = true;
            self.throttled = true;
        }
    }

    /// `enqueue_dl_entity` with ENQUEUE_WAKEUP (`wakeup`) or ENQUEUE_REPLENISH: queued
    /// unless still deferred.
    fn enqueue(&mut self, ctx: &mut Ctx, wakeup: bool, token: u64) {
        if wakeup {
            self.update_dl_entity(ctx.now());
        } else {
            self.replenish(ctx, token);
        }
        if self.throttled && self.start_timer(ctx, token) {
            return;
        }
        if self.throttled {
            self.cancel_timer(ctx);
            self.defer_armed = false;
            self.throttled = false;
        }
        self.queued = true;
    }

    /// `dl_server_start`.
    pub fn start(&mut self, ctx: &mut Ctx, token: u64) -> After {
        if !self.initialised {
            self.initialised = true;
            self.new_period(ctx.now());
        }
        if self.dl_runtime == 0 || self.active {
            return After::Nothing;
        }
        self.active = true;
        self.enqueue(ctx, true, token);
        After::PreemptCheck
    }

    /// `dl_server_stop`.
    pub fn stop(&mut self, ctx: &mut Ctx) {
        if self.dl_runtime == 0 {
            return;
        }
        self.queued = false;
        self.cancel_timer(ctx);
        self.defer_armed = false;
        self.throttled = false;
        self.active = false;
    }

    /// `dl_server_update` → `update_curr_dl_se`: a fair task ran `delta` (called while
    /// the server is active).
    pub fn update(&mut self, ctx: &mut Ctx, delta: u64, token: u64) -> After {
        if !self.active || self.dl_runtime == 0 || delta == 0 {
            return After::Nothing;
        }
        self.runtime -= delta as i64;
        if self.throttled && self.runtime <= 0 {
            // Used up in the background: not needed this period.
            self.defer_running = false;
            self.cancel_timer(ctx);
            self.new_period(ctx.now());
            self.start_timer(ctx, token);
            return After::Nothing;
        }
        if self.runtime > 0 {
            return After::Nothing;
        }
        self.throttled = true;
        self.queued = false;
        if !self.start_timer(ctx, token) {
            self.enqueue(ctx, false, token);
        }
        After::ReschedUnlessLeftmost
    }

    /// `dl_server_timer`.
    pub fn timer(&mut self, ctx: &mut Ctx, token: u64) -> After {
        self.timer = None;
        if !self.throttled || self.dl_runtime == 0 {
            return After::Nothing;
        }
        let now = ctx.now();
        if self.defer_armed {
            let zero_laxity = self.deadline.wrapping_sub(self.runtime as u64);
            if dl_time_before(now, zero_laxity.wrapping_sub(MIN_RES_NS)) {
                self.timer = Some(ctx.arm_timer(zero_laxity, token));
                return After::Nothing;
            }
            self.defer_running = true;
        }
        self.enqueue(ctx, false, token);
        After::PreemptCheck
    }
}

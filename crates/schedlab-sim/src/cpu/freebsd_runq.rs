//! What FreeBSD's schedulers share: the run queue of sys/sys/runq.h / kern/kern_switch.c,
//! the priority ranges of sys/sys/priority.h and the way a Linux binary's scheduling
//! attributes reach them through FreeBSD's Linux ABI.
//!
//! Sources (freebsd/freebsd-src, main, 000ffb6f24c4): sys/sys/runq.h (`RQ_NQS = 64`
//! queues of `RQ_PPQ = 4` priorities, the `rq_status` bitmap), kern/kern_switch.c
//! (`runq_add` / `runq_add_pri` at the tail or, with `SRQ_PREEMPTED`, the head;
//! `runq_remove`; `runq_choose` takes the first thread of the lowest-numbered non-empty
//! queue; `runq_choose_from` searches from a starting queue and wraps), sys/sys/priority.h
//! (real-time 48..79, time-sharing 120..223), sys/sys/rtprio.h (`RTP_PRIO_MAX`),
//! kern/ksched.c (`p4prio_to_rtpprio`) and sys/compat/linux/linux_misc.c
//! (`linux_sched_setscheduler` with `compat.linux.map_sched_prio` on).

use std::collections::VecDeque;

use crate::types::{Policy, SchedAttrs, TaskId};

/// Run queues (`RQ_NQS`) and priorities per queue (`RQ_PPQ`), sys/sys/runq.h.
pub const RQ_NQS: usize = 64;
pub const RQ_PPQ: u32 = 4;
/// sys/sys/priority.h.
pub const PRI_MIN_REALTIME: u32 = 48;
pub const PRI_MAX_REALTIME: u32 = 79;
pub const PRI_MIN_TIMESHARE: u32 = 120;
pub const PRI_MAX_TIMESHARE: u32 = 223;
pub const PRI_MIN_IDLE: u32 = 224;
pub const PRI_MAX_IDLE: u32 = 255;
pub const PUSER: u32 = PRI_MIN_TIMESHARE;
/// The real-time priorities `rtprio` offers (RTP_PRIO_MAX, sys/sys/rtprio.h).
pub const RTP_PRIO_MAX: i32 = 31;
/// Nice range (PRIO_MIN, PRIO_MAX of sys/sys/resource.h).
pub const PRIO_MIN: i32 = -20;
pub const PRIO_MAX: i32 = 20;

/// Linux's MAX_USER_RT_PRIO (the Linux ABI's `LINUX_MAX_RT_PRIO`).
pub const LINUX_MAX_RT_PRIO: i32 = 100;

/// The Linux ABI's mapping of a Linux RT priority (1..=99) onto FreeBSD's POSIX range
/// 0..=RTP_PRIO_MAX, rounding down (`linux_sched_setscheduler` with
/// `compat.linux.map_sched_prio` on).
pub fn linux_rt_to_posix(linux_prio: i32) -> i32 {
    (linux_prio - 1) * (RTP_PRIO_MAX + 1) / (LINUX_MAX_RT_PRIO - 1)
}

/// The fixed priority of a real-time thread: PRI_MIN_REALTIME + rtprio, where
/// rtprio = RTP_PRIO_MAX − the POSIX priority the Linux one maps to (`p4prio_to_rtpprio`).
pub fn rt_priority(attrs: &SchedAttrs) -> u32 {
    let posix = linux_rt_to_posix(attrs.rt_priority.clamp(1, LINUX_MAX_RT_PRIO - 1));
    PRI_MIN_REALTIME + (RTP_PRIO_MAX - posix) as u32
}

/// Whether `attrs` are time-sharing (SCHED_OTHER) rather than real-time.
pub fn is_timeshare(attrs: &SchedAttrs) -> bool {
    matches!(attrs.policy, Policy::Other)
}

/// What FreeBSD's Linux ABI (`linux_sched_setscheduler`) accepts: SCHED_OTHER, and
/// SCHED_FIFO / SCHED_RR of priority 1..=99 (mapped onto rtprio); SCHED_BATCH,
/// SCHED_IDLE and SCHED_DEADLINE get EINVAL there. `policy` names the scheduler in the
/// message.
pub fn linux_abi_accepts(policy: &str, attrs: &SchedAttrs) -> Result<(), String> {
    let refused = |what: &str| {
        Err(format!(
            "{what} is not modelled by {policy}: FreeBSD's Linux ABI refuses it \
             (linux_sched_setscheduler accepts SCHED_OTHER, SCHED_FIFO and SCHED_RR)"
        ))
    };
    match attrs.policy {
        Policy::Other => Ok(()),
        Policy::Fifo | Policy::Rr if (1..LINUX_MAX_RT_PRIO).contains(&attrs.rt_priority) => Ok(()),
        Policy::Fifo | Policy::Rr => Err(format!(
            "{policy}: real-time priority {} is outside 1..={} \
             (linux_sched_setscheduler returns EINVAL)",
            attrs.rt_priority,
            LINUX_MAX_RT_PRIO - 1
        )),
        Policy::Batch => refused("SCHED_BATCH"),
        Policy::Idle => refused("SCHED_IDLE"),
        Policy::Deadline => refused("SCHED_DEADLINE"),
    }
}

/// The queue a priority lives on (`pri / RQ_PPQ`).
pub fn queue_of(pri: u32) -> usize {
    (pri / RQ_PPQ) as usize
}

/// `struct runq`: 64 FIFO queues and the bitmap of the non-empty ones. The caller keeps
/// which queue each thread is on (`td_rqindex`), as the kernel does.
#[derive(Clone, Debug)]
pub struct RunQueue {
    queues: Vec<VecDeque<TaskId>>,
    /// Bit `q` set when queue `q` is not empty (`rq_status`).
    status: u64,
}

impl Default for RunQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl RunQueue {
    pub fn new() -> Self {
        Self {
            queues: (0..RQ_NQS).map(|_| VecDeque::new()).collect(),
            status: 0,
        }
    }

    /// `runq_add_pri`: `t` joins queue `q`, at the tail or (`SRQ_PREEMPTED`) the head.
    pub fn add(&mut self, q: usize, t: TaskId, head: bool) {
        if head {
            self.queues[q].push_front(t);
        } else {
            self.queues[q].push_back(t);
        }
        self.status |= 1 << q;
    }

    /// `runq_remove`: `t` leaves queue `q`; the status bit is cleared when it empties.
    /// Returns the number of entries looked at to find it (the work a list walk costs).
    pub fn remove(&mut self, q: usize, t: TaskId) -> usize {
        let pos = self.queues[q].iter().position(|&x| x == t);
        if let Some(pos) = pos {
            self.queues[q].remove(pos);
        }
        if self.queues[q].is_empty() {
            self.status &= !(1 << q);
        }
        pos.map_or(self.queues[q].len(), |p| p + 1)
    }

    /// Whether no queue holds a thread.
    pub fn is_empty(&self) -> bool {
        self.status == 0
    }

    /// The non-empty queues' bitmap (`rq_status`).
    pub fn status(&self) -> u64 {
        self.status
    }

    /// The threads of queue `q`, head first.
    pub fn queue(&self, q: usize) -> &VecDeque<TaskId> {
        &self.queues[q]
    }

    /// `runq_choose` with a filter: the first thread, in queue order from the
    /// lowest-numbered non-empty queue, that `ok` accepts. Returns it with the number of
    /// queues and entries examined.
    pub fn choose(&self, ok: impl FnMut(TaskId) -> bool) -> (Option<TaskId>, u64) {
        self.choose_from(0, ok)
    }

    /// `runq_choose_from`: as [`choose`](Self::choose), searching from queue `start`
    /// upwards and then wrapping to the queues below it (the timeshare calendar).
    pub fn choose_from(
        &self,
        start: usize,
        mut ok: impl FnMut(TaskId) -> bool,
    ) -> (Option<TaskId>, u64) {
        let start = start % RQ_NQS;
        let high = self.status & (u64::MAX << start);
        let low = self.status & !(u64::MAX << start);
        let mut steps = 0u64;
        for mut bits in [high, low] {
            while bits != 0 {
                let q = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                steps += 1;
                if let Some(pos) = self.queues[q].iter().position(|&t| ok(t)) {
                    return (Some(self.queues[q][pos]), steps + pos as u64);
                }
            }
        }
        (None, steps.max(1))
    }

    /// Every queued thread, queue by queue.
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.queues.iter().flat_map(|q| q.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_takes_the_lowest_queue_first_and_wraps_from_a_start() {
        let mut rq = RunQueue::new();
        rq.add(40, TaskId(1), false);
        rq.add(10, TaskId(2), false);
        rq.add(10, TaskId(3), true);
        assert_eq!(rq.choose(|_| true).0, Some(TaskId(3)));
        assert_eq!(rq.choose_from(20, |_| true).0, Some(TaskId(1)));
        assert_eq!(rq.choose_from(41, |_| true).0, Some(TaskId(3)));
        assert_eq!(rq.choose(|t| t != TaskId(3)).0, Some(TaskId(2)));
        rq.remove(10, TaskId(2));
        rq.remove(10, TaskId(3));
        assert_eq!(rq.status(), 1 << 40);
    }

    #[test]
    fn the_linux_abi_maps_99_linux_priorities_onto_32_rtprios() {
        assert_eq!(linux_rt_to_posix(1), 0);
        assert_eq!(linux_rt_to_posix(99), RTP_PRIO_MAX);
    }
}

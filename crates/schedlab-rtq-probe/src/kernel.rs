//! The kernel's side of a measured service call: TOPPERS/JSP's cached `schedtsk` (the
//! highest-priority ready task) kept over any ready queue, updated exactly where and how
//! JSP updates it, so that each measured operation does the work the kernel does in that
//! service call and no more.
//!
//! Source: TOPPERS/JSP 1.4 `kernel/task.c` (`$Id: task.c,v 1.10 2004/05/18`; stored copy:
//! the ryoon/toppers-jsp mirror, commit 5fffc77b). The ready queue is touched only by the
//! four functions below; `search_schedtsk` (l.162-169: `bitmap_search` on `ready_primap`,
//! then the head of that priority's queue) is called by two of them, and only when the
//! cached `schedtsk` itself leaves the head:
//!
//! | JSP function | service call measured | lines | when `schedtsk` changes, and how |
//! |---|---|---|---|
//! | `make_runnable` | `act_tsk` (via `make_active`, `task_manage.c` v1.1) | l.181-196 | when there was none or the new task's priority is higher (l.191): `schedtsk = tcb`. NEVER searches. |
//! | `change_priority` | `chg_pri` of a ready task (`task_manage.c` v1.1) | l.298-324 | if it was `schedtsk` and its priority did not rise (`newpri >= oldpri`, l.311-313): `search_schedtsk()`; if it was not and now beats `schedtsk`'s priority (l.318-319): `schedtsk = tcb`. Searches only in the first case. |
//! | `rotate_ready_queue` | `rot_rdq` (`sys_manage.c` v1.4) | l.336-351 | if the rotated head was `schedtsk` (l.345-346): the new head of that priority's queue. NEVER searches. |
//! | `make_non_runnable` | (not measured: the size-only `remove`) | l.210-232 | if it was `schedtsk`: the next of its priority (l.226-227), or, when that queue empties, `search_schedtsk()` (l.219-221; none when no task is ready). |
//!
//! [`Kernel`] is the one implementation of those rules; every back end runs it, so the
//! measured difference between two back ends is their queue operations and their
//! `search_schedtsk`, which is [`ReadyQueue::peek`]: a bitmap search on the per-priority
//! lists, the list head on a single list (the seed's single queue keeps its highest
//! priority task first, so its "search" is one read).
//!
//! Where it differs from JSP's C (the same decisions, slightly different reads):
//! `schedtsk`'s priority is read through [`ReadyQueue::prio_of`] (JSP reads
//! `schedtsk->priority` from the TCB); `rotate_ready_queue` recognises that `schedtsk` is
//! the rotated head by its priority (the highest-priority ready task heads its
//! priority's queue) and takes its successor before the rotation
//! ([`ReadyQueue::next_in_prio`]), where JSP compares pointers and reads the queue's new
//! head after it; `make_non_runnable` asks for the successor before unlinking. The
//! dispatch request JSP's functions return (`enadsp`) is not modelled: the measured
//! functions return the new `schedtsk`.

use schedlab_rtq::{Prio, ReadyQueue, TaskIdx};

/// A ready queue and the cached highest-priority ready task, as TOPPERS/JSP keeps them.
#[derive(Debug, Clone)]
pub struct Kernel<Q> {
    queue: Q,
    schedtsk: Option<TaskIdx>,
}

impl<Q: ReadyQueue> Kernel<Q> {
    /// A kernel over an empty queue (no task ready, `schedtsk` none: `task_initialize`).
    pub fn new(queue: Q) -> Self {
        debug_assert!(queue.is_empty(), "a kernel starts with no ready task");
        Kernel {
            queue,
            schedtsk: None,
        }
    }

    /// The ready queue (read-only: every change goes through the kernel's rules).
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// The cached highest-priority ready task (`schedtsk`).
    pub fn schedtsk(&self) -> Option<TaskIdx> {
        self.schedtsk
    }

    /// `search_schedtsk`: the head of the best non-empty priority, found by the queue.
    #[inline]
    fn search_schedtsk(&self) -> Option<TaskIdx> {
        self.queue.peek()
    }

    /// `schedtsk->priority`.
    #[inline]
    fn schedtsk_prio(&self) -> Option<Prio> {
        self.schedtsk.and_then(|s| self.queue.prio_of(s))
    }

    /// `make_runnable` (act_tsk): `t` joins the tail of `prio`; it becomes `schedtsk` when
    /// none was ready or its priority is higher. No search. Returns `schedtsk`.
    #[inline]
    pub fn make_runnable(&mut self, t: TaskIdx, prio: Prio) -> Option<TaskIdx> {
        self.queue.push_tail(t, prio);
        match self.schedtsk_prio() {
            Some(best) if prio >= best => {}
            _ => self.schedtsk = Some(t),
        }
        self.schedtsk
    }

    /// `change_priority` (chg_pri of a ready task): `t` moves to the tail of `new`. If `t`
    /// was `schedtsk` and its priority did not rise, search; if it was not and it now
    /// beats `schedtsk`, it becomes `schedtsk`. Returns `schedtsk`.
    #[inline]
    pub fn change_priority(&mut self, t: TaskIdx, new: Prio) -> Option<TaskIdx> {
        let old = self.queue.prio_of(t);
        self.queue.change_priority(t, new);
        if self.schedtsk == Some(t) {
            if old.is_some_and(|old| new >= old) {
                self.schedtsk = self.search_schedtsk();
            }
        } else if self.schedtsk_prio().is_some_and(|best| new < best) {
            self.schedtsk = Some(t);
        }
        self.schedtsk
    }

    /// `rotate_ready_queue` (rot_rdq): the head of `prio` moves to its tail; if that head
    /// was `schedtsk`, its successor in `prio` becomes `schedtsk`. No search. Returns
    /// `schedtsk`.
    #[inline]
    pub fn rotate_ready_queue(&mut self, prio: Prio) -> Option<TaskIdx> {
        let successor = match self.schedtsk {
            Some(s) if self.queue.prio_of(s) == Some(prio) => self.queue.next_in_prio(s),
            _ => None,
        };
        self.queue.rotate(prio);
        if successor.is_some() {
            self.schedtsk = successor;
        }
        self.schedtsk
    }

    /// `make_non_runnable` (a ready task waits, is suspended or terminated): `t` leaves
    /// the queue; if it was `schedtsk`, the next of its priority takes its place, or a
    /// search finds the new one when its priority's queue empties. Returns `schedtsk`.
    #[inline]
    pub fn make_non_runnable(&mut self, t: TaskIdx) -> Option<TaskIdx> {
        let leaving = self.schedtsk == Some(t);
        let successor = if leaving {
            self.queue.next_in_prio(t)
        } else {
            None
        };
        self.queue.remove(t);
        if leaving {
            self.schedtsk = match successor {
                Some(next) => Some(next),
                None => self.search_schedtsk(),
            };
        }
        self.schedtsk
    }
}

//! Synchronisation objects and byte channels: plain data plus wait queues. The engine
//! decides who blocks and who wakes; this module only keeps the queues in order.
//!
//! Wait queues are ordered by kernel priority (lower `prio()` first), FIFO among equals —
//! the order futex wake-ups follow (kernel/futex: waiters sit on a priority-sorted plist).

use crate::types::TaskId;

/// A wait queue ordered by (priority, arrival).
#[derive(Clone, Debug, Default)]
pub struct WaitQueue {
    /// (prio, task) in wake order.
    q: Vec<(i32, TaskId)>,
}

impl WaitQueue {
    /// Add a waiter behind every waiter of equal or better priority. O(n).
    pub fn push(&mut self, prio: i32, t: TaskId) {
        let pos = self
            .q
            .iter()
            .position(|&(p, _)| p > prio)
            .unwrap_or(self.q.len());
        self.q.insert(pos, (prio, t));
    }

    /// Remove and return the first waiter.
    pub fn pop(&mut self) -> Option<TaskId> {
        if self.q.is_empty() {
            None
        } else {
            Some(self.q.remove(0).1)
        }
    }

    /// Move every waiter out into `out` (in wake order), leaving the queue empty but
    /// keeping its allocation.
    pub fn drain_into(&mut self, out: &mut Vec<TaskId>) {
        out.extend(self.q.iter().map(|&(_, t)| t));
        self.q.clear();
    }
}

/// A pthread mutex of type `PTHREAD_MUTEX_ERRORCHECK`: only its owner may unlock it or
/// wait on a condition with it, and its owner may not lock it again. The engine stops the
/// run at such a misuse, naming the task and the mutex (validation refuses the specs where
/// it happens: see `schedlab-spec`'s ownership check).
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    /// The spec's name of the mutex, for messages.
    pub name: Box<str>,
    pub owner: Option<TaskId>,
    pub waiters: WaitQueue,
}

/// What an error-checking mutex refuses, with the errno POSIX gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// `lock` by the owner: EDEADLK.
    Relock,
    /// `unlock` by a task that does not own it (`owner`, or nobody): EPERM.
    Unlock { owner: Option<TaskId> },
    /// A condition wait with a mutex the task does not own: EPERM.
    Wait { owner: Option<TaskId> },
}

impl Mutex {
    /// A free mutex called `name`.
    pub fn named(name: &str) -> Mutex {
        Mutex {
            name: name.into(),
            ..Mutex::default()
        }
    }

    /// May `t` lock this mutex (free or not)? Only if it does not own it already.
    pub fn check_lock(&self, t: TaskId) -> Result<(), Misuse> {
        if self.owner == Some(t) {
            return Err(Misuse::Relock);
        }
        Ok(())
    }

    /// May `t` unlock this mutex? Only if it owns it.
    pub fn check_unlock(&self, t: TaskId) -> Result<(), Misuse> {
        match self.owner {
            Some(o) if o == t => Ok(()),
            owner => Err(Misuse::Unlock { owner }),
        }
    }

    /// May `t` wait on a condition with this mutex? Only if it owns it.
    pub fn check_wait(&self, t: TaskId) -> Result<(), Misuse> {
        match self.owner {
            Some(o) if o == t => Ok(()),
            owner => Err(Misuse::Wait { owner }),
        }
    }
}

impl Misuse {
    /// The message for task `task` misusing mutex `mutex`; `name_of` names the owner.
    pub fn message(&self, task: &str, mutex: &str, name_of: impl Fn(TaskId) -> String) -> String {
        let owner = |o: &Option<TaskId>| match o {
            Some(o) => format!("it is held by {}", name_of(*o)),
            None => "it is not locked".to_string(),
        };
        match self {
            Misuse::Relock => format!(
                "task {task} locks mutex {mutex:?}, which it already holds: an error-checking \
                 mutex refuses this (EDEADLK)"
            ),
            Misuse::Unlock { owner: o } => format!(
                "task {task} unlocks mutex {mutex:?}, which it does not hold ({}): an \
                 error-checking mutex refuses this (EPERM)",
                owner(o)
            ),
            Misuse::Wait { owner: o } => format!(
                "task {task} waits on a condition with mutex {mutex:?}, which it does not hold \
                 ({}): pthread_cond_wait needs the caller to hold it (EPERM)",
                owner(o)
            ),
        }
    }
}

/// A condition variable.
#[derive(Clone, Debug, Default)]
pub struct Cond {
    /// Waiters with the mutex they must re-acquire.
    pub waiters: WaitQueue,
}

/// A barrier for `needed` participants (rt-app `barrier`: all users meet, then all go).
#[derive(Clone, Debug, Default)]
pub struct Barrier {
    pub needed: u32,
    pub arrived: u32,
    pub waiters: WaitQueue,
}

/// One direction of a pipe or socket pair: a bounded byte buffer.
#[derive(Clone, Debug, Default)]
pub struct Channel {
    pub capacity: u64,
    pub buffered: u64,
    pub written: u64,
    pub read: u64,
    pub op_cost_ns: u64,
    /// How a call's cost spreads above `op_cost_ns` (the engine draws it per call).
    pub op_spread: Option<schedlab_spec::cost::Spread>,
    pub byte_cost_ps: u64,
    pub readers: WaitQueue,
    pub writers: WaitQueue,
}

impl Channel {
    /// CPU time one read or write call of `bytes` costs the caller, at the call's
    /// minimum cost when it varies.
    pub fn call_cost(&self, bytes: u64) -> u64 {
        self.op_cost_ns + bytes.saturating_mul(self.byte_cost_ps) / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_checking_mutex_names_each_misuse() {
        let mut m = Mutex::named("m");
        assert_eq!(
            m.check_unlock(TaskId(1)),
            Err(Misuse::Unlock { owner: None })
        );
        assert_eq!(m.check_wait(TaskId(1)), Err(Misuse::Wait { owner: None }));
        m.owner = Some(TaskId(2));
        assert_eq!(m.check_lock(TaskId(2)), Err(Misuse::Relock));
        assert_eq!(m.check_lock(TaskId(1)), Ok(()));
        assert_eq!(m.check_unlock(TaskId(2)), Ok(()));
        let e = m.check_unlock(TaskId(1)).unwrap_err();
        let text = e.message("a-0", &m.name, |t| format!("b-{}", t.0));
        assert!(text.contains("task a-0 unlocks mutex \"m\""), "{text}");
        assert!(
            text.contains("held by b-2") && text.contains("EPERM"),
            "{text}"
        );
    }

    #[test]
    fn wait_queue_is_priority_ordered_and_fifo_within_a_priority() {
        let mut q = WaitQueue::default();
        q.push(120, TaskId(1));
        q.push(50, TaskId(2));
        q.push(120, TaskId(3));
        q.push(50, TaskId(4));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|t| t.0).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }
}

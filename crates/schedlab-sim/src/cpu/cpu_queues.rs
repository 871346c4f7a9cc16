//! One `schedlab-rtq` ready queue per CPU, with room in each for the tasks queued there
//! rather than for every task of the run.
//!
//! A `schedlab-rtq` back end keeps a node per task slot (links, priority, tree keys). Indexed
//! by task id, every CPU's queue would need a slot for every task: memory CPUs × tasks (a
//! few GB for 100 000 tasks on 256 CPUs). Here a task takes a slot in a CPU's queue when it
//! is queued there and gives it back when it leaves, so a queue holds as many slots as the
//! most tasks ever queued on its CPU at once, and memory grows with the number of tasks.
//!
//! The slot numbers change nothing a policy can see: every back end orders tasks by
//! priority and arrival (lists, or the tree's arrival sequence), never by index, and the
//! steps it reports depend only on that order. Slots are reused last-freed first; a queue
//! grows (by doubling) only when more tasks are queued on its CPU than ever before, never
//! in steady state.

use schedlab_rtq::{AnyQueue, Kind, Prio, ReadyQueue};

use crate::types::{CpuId, TaskId};

const NIL: u32 = u32::MAX;
/// `CpuQueues::at` of a task in no queue.
const NOWHERE: u64 = u64::MAX;
/// Slots a CPU's queue starts with.
const INITIAL_SLOTS: usize = 4;

/// One CPU's queue: the back end over slots, and which task holds each slot.
struct CpuQueue {
    q: AnyQueue,
    /// The task in each slot taken; in a free slot, the next free one.
    task: Vec<u32>,
    /// The first free slot (`NIL` if none): free slots are chained through `task`, the
    /// last freed first.
    free: u32,
    /// Slots taken: the tasks queued.
    len: u32,
}

impl CpuQueue {
    fn new(kind: Kind, levels: usize) -> Self {
        CpuQueue {
            q: AnyQueue::new(kind, levels, INITIAL_SLOTS),
            task: Vec::with_capacity(INITIAL_SLOTS),
            free: NIL,
            len: 0,
        }
    }

    /// A free slot for a task about to be queued (a new one when all are taken).
    #[inline(always)]
    fn take_slot(&mut self, t: u32) -> u32 {
        self.len += 1;
        let s = self.free;
        if s == NIL {
            return self.new_slot(t);
        }
        self.free = std::mem::replace(&mut self.task[s as usize], t);
        s
    }

    /// One more slot, growing the back end by doubling when it is full.
    #[cold]
    fn new_slot(&mut self, t: u32) -> u32 {
        let s = self.task.len();
        if s >= self.q.capacity() {
            self.q.grow((2 * s).max(INITIAL_SLOTS));
        }
        self.task.push(t);
        s as u32
    }

    #[inline(always)]
    fn give_slot(&mut self, s: u32) {
        self.len -= 1;
        self.task[s as usize] = std::mem::replace(&mut self.free, s);
    }
}

/// The ready queues of every CPU (see the module doc). Tasks are `TaskId::0` values (the
/// `schedlab-rtq` task index) in and out; slots never show.
pub(crate) struct CpuQueues {
    kind: Kind,
    levels: usize,
    /// The steps the back end takes to look for the best task of an empty queue: the
    /// same every time for every back end (a bitmap's words, a list's or a tree's
    /// empty root), measured once on an empty queue.
    empty_look_steps: u32,
    queues: Vec<CpuQueue>,
    /// Per task: the CPU whose queue holds it (high half) and its slot there (low half),
    /// or `NOWHERE`.
    at: Vec<u64>,
}

impl CpuQueues {
    /// Empty queues of back end `kind` with `levels` priorities for `nr_cpus` CPUs.
    pub fn new(kind: Kind, levels: usize, nr_cpus: usize) -> Self {
        let empty = AnyQueue::new(kind, levels, 0);
        let found = empty.peek();
        debug_assert!(found.is_none());
        CpuQueues {
            kind,
            levels,
            empty_look_steps: empty.last_steps(),
            queues: (0..nr_cpus).map(|_| CpuQueue::new(kind, levels)).collect(),
            at: Vec::new(),
        }
    }

    /// Replace every queue by an empty one of back end `kind` (before the run: the
    /// queues must be empty).
    pub fn set_kind(&mut self, kind: Kind) {
        debug_assert!(
            (0..self.queues.len()).all(|c| self.is_empty(CpuId(c as u32))),
            "readyq set mid-run"
        );
        *self = CpuQueues::new(kind, self.levels, self.queues.len());
    }

    /// Queues for CPUs `0..n` (new ones empty).
    #[inline]
    pub fn ensure_cpus(&mut self, n: usize) {
        while self.queues.len() < n {
            self.queues.push(CpuQueue::new(self.kind, self.levels));
        }
    }

    /// Room for task `t` in the task-to-slot map (grown by doubling, as a task is created).
    pub fn ensure_task(&mut self, t: TaskId) {
        if self.at.len() <= t.idx() {
            self.at.resize(t.idx() + 1, NOWHERE);
        }
    }

    #[inline(always)]
    fn at(&self, t: u32) -> u64 {
        self.at.get(t as usize).copied().unwrap_or(NOWHERE)
    }

    /// The CPU whose queue holds `t`, if any.
    #[inline(always)]
    pub fn cpu_of(&self, t: u32) -> Option<CpuId> {
        let at = self.at(t);
        (at != NOWHERE).then_some(CpuId((at >> 32) as u32))
    }

    /// The slot `t` holds on `cpu`, if it is queued there.
    #[inline(always)]
    fn slot_on(&self, cpu: CpuId, t: u32) -> Option<u32> {
        let at = self.at(t);
        (at >> 32 == cpu.0 as u64).then_some(at as u32)
    }

    #[inline(always)]
    fn task_in(&self, cpu: CpuId, s: u32) -> u32 {
        self.queues[cpu.idx()].task[s as usize]
    }

    #[inline(always)]
    fn take_slot(&mut self, cpu: CpuId, t: u32) -> u32 {
        debug_assert_eq!(self.at(t), NOWHERE, "task {t} is queued twice");
        let s = self.queues[cpu.idx()].take_slot(t);
        self.at[t as usize] = (cpu.0 as u64) << 32 | s as u64;
        s
    }

    /// Queue `t` at the tail of priority `prio` on `cpu`.
    #[inline(always)]
    pub fn push_tail(&mut self, cpu: CpuId, t: u32, prio: Prio) {
        let s = self.take_slot(cpu, t);
        self.queues[cpu.idx()].q.push_tail(s, prio);
    }

    /// Queue `t` at the head of priority `prio` on `cpu`.
    #[inline]
    pub fn push_head(&mut self, cpu: CpuId, t: u32, prio: Prio) {
        let s = self.take_slot(cpu, t);
        self.queues[cpu.idx()].q.push_head(s, prio);
    }

    /// Queue `t` right after `after` (queued on `cpu`), at its priority.
    pub fn insert_after(&mut self, cpu: CpuId, t: u32, after: u32) {
        let a = self
            .slot_on(cpu, after)
            .expect("insert_after an unqueued task");
        let s = self.take_slot(cpu, t);
        self.queues[cpu.idx()].q.insert_after(s, a);
    }

    /// Take `t` (queued on `cpu`) out.
    #[inline(always)]
    pub fn remove(&mut self, cpu: CpuId, t: u32) {
        let s = self.slot_on(cpu, t).expect("remove of an unqueued task");
        let q = &mut self.queues[cpu.idx()];
        q.q.remove(s);
        q.give_slot(s);
        self.at[t as usize] = NOWHERE;
    }

    /// Move `t` (queued on `cpu`) to the tail of priority `prio`.
    pub fn change_priority(&mut self, cpu: CpuId, t: u32, prio: Prio) {
        let s = self
            .slot_on(cpu, t)
            .expect("change_priority of an unqueued task");
        self.queues[cpu.idx()].q.change_priority(s, prio);
    }

    /// Move the head of priority `prio` on `cpu` to its tail.
    pub fn rotate(&mut self, cpu: CpuId, prio: Prio) {
        self.queues[cpu.idx()].q.rotate(prio);
    }

    /// The best non-empty priority on `cpu`.
    #[inline]
    pub fn top_prio(&self, cpu: CpuId) -> Option<Prio> {
        self.queues[cpu.idx()].q.top_prio()
    }

    /// The first task of the best priority on `cpu` and the steps the back end took to
    /// find it; an empty queue is answered without asking the back end (it would take
    /// its fixed `empty_look_steps`), and then [`Self::last_steps`] is left as it was.
    #[inline(always)]
    pub fn peek_counted(&self, cpu: CpuId) -> (Option<u32>, u32) {
        let q = &self.queues[cpu.idx()];
        if q.len == 0 {
            debug_assert!(q.q.peek().is_none() && q.q.last_steps() == self.empty_look_steps);
            return (None, self.empty_look_steps);
        }
        let s = q.q.peek();
        (s.map(|s| q.task[s as usize]), q.q.last_steps())
    }

    /// [`Self::top_prio`] and the steps it took, answered like [`Self::peek_counted`]
    /// when `cpu`'s queue is empty.
    #[inline(always)]
    pub fn top_prio_counted(&self, cpu: CpuId) -> (Option<Prio>, u32) {
        let q = &self.queues[cpu.idx()];
        if q.len == 0 {
            debug_assert!(q.q.top_prio().is_none() && q.q.last_steps() == self.empty_look_steps);
            return (None, self.empty_look_steps);
        }
        (q.q.top_prio(), q.q.last_steps())
    }

    /// The priority `t` is queued at on `cpu`.
    pub fn prio_of(&self, cpu: CpuId, t: u32) -> Option<Prio> {
        let s = self.slot_on(cpu, t)?;
        self.queues[cpu.idx()].q.prio_of(s)
    }

    /// No task is queued on `cpu`.
    #[inline]
    pub fn is_empty(&self, cpu: CpuId) -> bool {
        debug_assert_eq!(
            self.queues[cpu.idx()].len == 0,
            self.queues[cpu.idx()].q.is_empty()
        );
        self.queues[cpu.idx()].len == 0
    }

    /// The task before `t` (queued on `cpu`) within its priority.
    pub fn prev_in_prio(&self, cpu: CpuId, t: u32) -> Option<u32> {
        let s = self
            .slot_on(cpu, t)
            .expect("prev_in_prio of an unqueued task");
        let p = self.queues[cpu.idx()].q.prev_in_prio(s)?;
        Some(self.task_in(cpu, p))
    }

    /// The task after `t` (queued on `cpu`) within its priority.
    pub fn next_in_prio(&self, cpu: CpuId, t: u32) -> Option<u32> {
        let s = self
            .slot_on(cpu, t)
            .expect("next_in_prio of an unqueued task");
        let n = self.queues[cpu.idx()].q.next_in_prio(s)?;
        Some(self.task_in(cpu, n))
    }

    /// The tasks queued on `cpu` in order (best priority first, FIFO within one) with
    /// their priorities, until `f` returns false.
    #[inline(always)]
    pub fn for_each(&self, cpu: CpuId, mut f: impl FnMut(u32, Prio) -> bool) {
        let q = &self.queues[cpu.idx()];
        q.q.for_each(|s, p| f(q.task[s as usize], p));
    }

    /// The steps (nodes, words) the last operation on `cpu`'s queue took.
    #[inline(always)]
    pub fn last_steps(&self, cpu: CpuId) -> u32 {
        self.queues[cpu.idx()].q.last_steps()
    }

    /// Number of CPUs with a queue.
    pub fn nr_cpus(&self) -> usize {
        self.queues.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(q: &CpuQueues, cpu: CpuId) -> Vec<u32> {
        let mut v = Vec::new();
        q.for_each(cpu, |t, _| {
            v.push(t);
            true
        });
        v
    }

    /// Slots are per CPU and reused: a queue holds as many as the most tasks queued on its
    /// CPU at once, whatever the task ids.
    #[test]
    fn a_queue_holds_slots_for_the_tasks_queued_on_its_cpu_only() {
        for kind in Kind::ALL {
            let mut q = CpuQueues::new(kind, 140, 2);
            q.ensure_task(TaskId(1_000_002));
            let (c0, c1) = (CpuId(0), CpuId(1));
            for round in 0..3u32 {
                for t in [1_000_000 + round, 7, 99_999] {
                    q.push_tail(c0, t, 5);
                }
                q.push_head(c1, 3, 9);
                assert_eq!(order(&q, c0), vec![1_000_000 + round, 7, 99_999]);
                assert_eq!(q.peek_counted(c1).0, Some(3));
                assert_eq!(q.cpu_of(7), Some(c0));
                assert_eq!(q.next_in_prio(c0, 7), Some(99_999));
                assert_eq!(q.prev_in_prio(c0, 7), Some(1_000_000 + round));
                q.insert_after(c0, 8, 7);
                assert_eq!(order(&q, c0), vec![1_000_000 + round, 7, 8, 99_999]);
                q.change_priority(c0, 1_000_000 + round, 5);
                assert_eq!(order(&q, c0), vec![7, 8, 99_999, 1_000_000 + round]);
                for t in [7, 8, 99_999, 1_000_000 + round] {
                    q.remove(c0, t);
                }
                q.remove(c1, 3);
                assert!(q.is_empty(c0) && q.is_empty(c1));
            }
            assert_eq!(q.queues[0].task.len(), 4, "{kind:?}: slots reused");
            assert_eq!(q.queues[1].task.len(), 1);
        }
    }

    /// The counted looks report what the back end itself reports, empty or not.
    #[test]
    fn counted_looks_take_the_back_ends_own_steps() {
        for kind in Kind::ALL {
            let mut q = CpuQueues::new(kind, 140, 1);
            q.ensure_task(TaskId(9));
            let c = CpuId(0);
            let back_end = |q: &CpuQueues| {
                let b = &q.queues[0].q;
                let top = b.top_prio();
                let top_steps = b.last_steps();
                let head = b.peek().map(|s| q.task_in(c, s));
                (head, b.last_steps(), top, top_steps)
            };
            let counted = |q: &CpuQueues| {
                let (head, steps) = q.peek_counted(c);
                let (top, top_steps) = q.top_prio_counted(c);
                (head, steps, top, top_steps)
            };
            assert_eq!(counted(&q), back_end(&q), "{kind:?}: empty");
            for (t, p) in [(4, 90), (9, 7), (2, 7), (6, 139)] {
                q.push_tail(c, t, p);
                assert_eq!(counted(&q), back_end(&q), "{kind:?}: {t} queued");
            }
            for t in [9, 6, 2, 4] {
                q.remove(c, t);
                assert_eq!(counted(&q), back_end(&q), "{kind:?}: {t} removed");
            }
        }
    }
}

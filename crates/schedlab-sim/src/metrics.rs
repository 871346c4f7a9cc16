//! Per-activation measurement (docs/results.md): an activation opens at a release
//! (timer expiry, sleep end or wake-up by another task), records when the task became
//! runnable and when it first ran, and closes when the task blocks again or exits.

use crate::types::{TaskId, Time};

const UNSET: Time = Time::MAX;

/// What released an activation (the `kind` column of the samples).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ActKind {
    Timer = 0,
    Sleep = 1,
    Wakeup = 2,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    open: bool,
    release: Time,
    wake: Time,
    start: Time,
    kind: ActKind,
}

/// Per-task measurement state and totals.
#[derive(Clone, Debug)]
pub(crate) struct TaskMetrics {
    cur: Open,
    /// Relative deadline of timer activations (dl-deadline, else the timer period).
    pub rel_deadline: Option<u64>,
    pub activations: u64,
    pub deadline_misses: u64,
    pub latency: Vec<u64>,
    pub response: Vec<u64>,
    /// Wake-up latencies of timer releases only (cyclictest's metric).
    pub timer_latency: Vec<u64>,
}

/// Columnar per-activation samples (for DataFrames / Parquet).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub tid: Vec<u32>,
    pub release_ns: Vec<u64>,
    pub wake_ns: Vec<u64>,
    /// -1 if the task never ran during the activation.
    pub start_ns: Vec<i64>,
    /// -1 if the activation had not ended when the run stopped.
    pub end_ns: Vec<i64>,
    pub kind: Vec<u8>,
}

pub(crate) struct Metrics {
    pub tasks: Vec<TaskMetrics>,
    pub samples: Option<Samples>,
    /// First time each mark label was hit.
    pub marks: Vec<Option<Time>>,
}

impl Metrics {
    pub fn new(nr_marks: usize, collect_samples: bool) -> Metrics {
        Metrics {
            tasks: Vec::new(),
            samples: collect_samples.then(Samples::default),
            marks: vec![None; nr_marks],
        }
    }

    pub fn add_task(&mut self) {
        self.tasks.push(TaskMetrics {
            cur: Open {
                open: false,
                release: 0,
                wake: UNSET,
                start: UNSET,
                kind: ActKind::Wakeup,
            },
            rel_deadline: None,
            activations: 0,
            deadline_misses: 0,
            latency: Vec::new(),
            response: Vec::new(),
            timer_latency: Vec::new(),
        });
    }

    /// Open an activation released at `at` (kept if one is already open: a condvar waiter
    /// that then queues on its mutex keeps the broadcast as its release).
    #[inline]
    pub fn release(&mut self, t: TaskId, at: Time, kind: ActKind) {
        let m = &mut self.tasks[t.idx()];
        if m.cur.open {
            return;
        }
        m.cur = Open {
            open: true,
            release: at,
            wake: UNSET,
            start: UNSET,
            kind,
        };
        m.activations += 1;
    }

    /// The task became runnable.
    #[inline]
    pub fn runnable(&mut self, t: TaskId, now: Time) {
        let c = &mut self.tasks[t.idx()].cur;
        if c.open && c.wake == UNSET {
            c.wake = now;
        }
    }

    /// The task runs its first instruction at `at` (after any switch overhead).
    #[inline]
    pub fn started(&mut self, t: TaskId, at: Time) {
        let m = &mut self.tasks[t.idx()];
        if m.cur.open && m.cur.start == UNSET {
            m.cur.start = at;
            let lat = at.saturating_sub(m.cur.release);
            m.latency.push(lat);
            if m.cur.kind == ActKind::Timer {
                m.timer_latency.push(lat);
            }
        }
    }

    /// The task blocked or exited: the open activation (if any) ends.
    #[inline]
    pub fn end(&mut self, t: TaskId, now: Time) {
        let m = &mut self.tasks[t.idx()];
        if !m.cur.open {
            return;
        }
        m.cur.open = false;
        let c = m.cur;
        let response = now.saturating_sub(c.release);
        m.response.push(response);
        if c.kind == ActKind::Timer {
            if let Some(d) = m.rel_deadline {
                if response > d {
                    m.deadline_misses += 1;
                }
            }
        }
        if let Some(s) = self.samples.as_mut() {
            s.push(t, c, now as i64);
        }
    }

    /// Record the relative deadline of the task's timer activations.
    #[inline]
    pub fn set_deadline(&mut self, t: TaskId, rel: u64) {
        self.tasks[t.idx()].rel_deadline = Some(rel);
    }

    pub fn mark(&mut self, label: usize, now: Time) {
        if self.marks[label].is_none() {
            self.marks[label] = Some(now);
        }
    }

    /// Close the samples of activations still open at the end of the run (end = -1).
    pub fn flush_open(&mut self) {
        let Some(s) = self.samples.as_mut() else {
            return;
        };
        for (i, m) in self.tasks.iter().enumerate() {
            if m.cur.open {
                s.push(TaskId(i as u32), m.cur, -1);
            }
        }
    }
}

impl Samples {
    fn push(&mut self, t: TaskId, c: Open, end: i64) {
        self.tid.push(t.pid());
        self.release_ns.push(c.release);
        self.wake_ns
            .push(if c.wake == UNSET { c.release } else { c.wake });
        self.start_ns
            .push(if c.start == UNSET { -1 } else { c.start as i64 });
        self.end_ns.push(end);
        self.kind.push(c.kind as u8);
    }

    pub fn len(&self) -> usize {
        self.tid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tid.is_empty()
    }
}

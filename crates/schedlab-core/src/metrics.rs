//! Per-activation measurement (docs/results.md): an activation opens at a release
//! (timer expiry, sleep end or wake-up by another task), records when the task became
//! runnable and when it first ran, and closes when the task blocks again or exits.
//!
//! What is kept of the activations is the caller's choice ([`SampleMode`]):
//! - `Memory`: every sample, columnar ([`Samples`]); statistics are computed exactly from
//!   them. Memory grows with the number of activations.
//! - `Stream`: each sample is handed to a [`SampleWriter`] as it ends (e.g. an Arrow IPC
//!   file, [`IpcSampleWriter`]) and per-task histograms are kept for the statistics.
//! - `Summary`: only the per-task histograms.
//!
//! With `Stream` and `Summary` memory grows with the number of tasks (a few buckets per
//! histogram), not with the number of activations.

use std::io::{self, Write};

use crate::stats::Histogram;
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

/// One finished (or, at the end of a run, still open) activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The task's pid in traces.
    pub tid: u32,
    pub release_ns: u64,
    /// When it became runnable (the release if it never did).
    pub wake_ns: u64,
    /// When it first ran; -1 if it never did.
    pub start_ns: i64,
    /// When it ended; -1 if it had not when the run stopped.
    pub end_ns: i64,
    pub kind: u8,
}

/// Where finished activations go, one at a time.
pub trait SampleWriter {
    fn write(&mut self, s: &Sample) -> io::Result<()>;
    /// Flush everything and close the output.
    fn finish(&mut self) -> io::Result<()>;
}

/// How a run keeps its samples.
pub enum SampleMode {
    /// Keep them all in memory.
    Memory,
    /// Stream them to a writer (and keep per-task histograms).
    Stream(Box<dyn SampleWriter>),
    /// Keep only per-task histograms.
    Summary,
}

impl SampleMode {
    /// The name the result uses (`memory`, `file`, `summary`).
    pub fn name(&self) -> &'static str {
        match self {
            SampleMode::Memory => "memory",
            SampleMode::Stream(_) => "file",
            SampleMode::Summary => "summary",
        }
    }
}

/// Per-task measurement state and totals.
#[derive(Clone, Debug)]
pub struct TaskMetrics {
    cur: Open,
    /// Relative deadline of timer activations (dl-deadline, else the timer period).
    pub rel_deadline: Option<u64>,
    pub activations: u64,
    pub deadline_misses: u64,
    /// Wake-up latencies and response times; empty when the samples are kept in memory.
    pub latency: Histogram,
    pub response: Histogram,
    /// The wake-up latencies of timer releases only (cyclictest's metric): see
    /// [`TaskMetrics::timer_latency`].
    timer_latency: TimerLatency,
}

/// The timer-release latencies of a task. While every latency recorded was a timer
/// release's (a periodic task's, or none yet), they are the task's latency histogram
/// itself, sample for sample, and take no memory of their own; the first other latency
/// splits them off as a copy.
#[derive(Clone, Debug)]
enum TimerLatency {
    SameAsLatency,
    /// Boxed: most tasks never need it, and the enum stays one word.
    Own(Box<Histogram>),
}

impl TaskMetrics {
    /// The wake-up latencies of the timer-released activations.
    pub fn timer_latency(&self) -> &Histogram {
        match &self.timer_latency {
            TimerLatency::SameAsLatency => &self.latency,
            TimerLatency::Own(h) => h,
        }
    }

    /// Bytes the task's histograms hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        let timer = match &self.timer_latency {
            TimerLatency::SameAsLatency => 0,
            TimerLatency::Own(h) => std::mem::size_of::<Histogram>() + h.heap_bytes(),
        };
        self.latency.heap_bytes() + self.response.heap_bytes() + timer
    }

    /// Free the histograms once their statistics are taken (they are then empty).
    pub fn drop_histograms(&mut self) {
        self.latency = Histogram::new();
        self.response = Histogram::new();
        self.timer_latency = TimerLatency::SameAsLatency;
    }

    /// Record a wake-up latency (of a timer release or not).
    #[inline]
    fn record_latency(&mut self, lat: u64, timer: bool) {
        match (&mut self.timer_latency, timer) {
            (TimerLatency::Own(h), true) => h.record(lat),
            (TimerLatency::Own(_), false) | (TimerLatency::SameAsLatency, true) => {}
            (TimerLatency::SameAsLatency, false) => {
                // The timer latencies so far are all the latencies so far: a copy (taken
                // once per task) before this one joins only the latencies.
                self.timer_latency = TimerLatency::Own(Box::new(self.latency.clone()));
            }
        }
        self.latency.record(lat);
    }
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

enum Store {
    Memory(Samples),
    Stream(Box<dyn SampleWriter>),
    Summary,
}

/// The measurement of a run.
pub struct Metrics {
    pub tasks: Vec<TaskMetrics>,
    store: Store,
    /// First time each mark label was hit.
    pub marks: Vec<Option<Time>>,
    /// Times each mark label was hit.
    pub mark_hits: Vec<u64>,
    /// Per label: at each hit, the time since the same task's previous mark of any label
    /// (for a transaction marked `begin` … `commit`, the commit's gaps are its latencies).
    pub mark_gaps: Vec<Histogram>,
    /// Per task: when it last hit any mark.
    last_mark: Vec<Time>,
    /// Activations recorded (ended, or flushed open at the end).
    pub recorded: u64,
    error: Option<io::Error>,
}

impl Metrics {
    pub fn new(nr_marks: usize, mode: SampleMode) -> Metrics {
        let store = match mode {
            SampleMode::Memory => Store::Memory(Samples::default()),
            SampleMode::Stream(w) => Store::Stream(w),
            SampleMode::Summary => Store::Summary,
        };
        Metrics {
            tasks: Vec::new(),
            store,
            marks: vec![None; nr_marks],
            mark_hits: vec![0; nr_marks],
            mark_gaps: vec![Histogram::new(); nr_marks],
            last_mark: Vec::new(),
            recorded: 0,
            error: None,
        }
    }

    /// True when every sample is kept in memory (statistics are then exact).
    pub fn keeps_samples(&self) -> bool {
        matches!(self.store, Store::Memory(_))
    }

    /// The samples kept in memory (empty in the other modes).
    pub fn samples(&self) -> Option<&Samples> {
        match &self.store {
            Store::Memory(s) => Some(s),
            _ => None,
        }
    }

    /// Take the samples kept in memory.
    pub fn take_samples(&mut self) -> Samples {
        match &mut self.store {
            Store::Memory(s) => std::mem::take(s),
            _ => Samples::default(),
        }
    }

    /// Room for `n` more tasks (a run reserves its start-up tasks at once, so that the
    /// per-task table is not left up to twice as large as needed by doubling).
    pub fn reserve_tasks(&mut self, n: usize) {
        self.tasks.reserve_exact(n);
        self.last_mark.reserve_exact(n);
    }

    pub fn add_task(&mut self) {
        self.last_mark.push(UNSET);
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
            latency: Histogram::new(),
            response: Histogram::new(),
            timer_latency: TimerLatency::SameAsLatency,
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
    #[inline(always)]
    pub fn started(&mut self, t: TaskId, at: Time) {
        // Called whenever a task is dispatched; only the first time in an activation
        // records anything (the test is inlined, the recording is not).
        let c = &self.tasks[t.idx()].cur;
        if c.open && c.start == UNSET {
            self.first_start(t, at);
        }
    }

    fn first_start(&mut self, t: TaskId, at: Time) {
        let histograms = !self.keeps_samples();
        let m = &mut self.tasks[t.idx()];
        m.cur.start = at;
        if histograms {
            let lat = at.saturating_sub(m.cur.release);
            m.record_latency(lat, m.cur.kind == ActKind::Timer);
        }
    }

    /// The task blocked or exited: the open activation (if any) ends.
    #[inline]
    pub fn end(&mut self, t: TaskId, now: Time) {
        let histograms = !self.keeps_samples();
        let m = &mut self.tasks[t.idx()];
        if !m.cur.open {
            return;
        }
        m.cur.open = false;
        let c = m.cur;
        let response = now.saturating_sub(c.release);
        if histograms {
            m.response.record(response);
        }
        if c.kind == ActKind::Timer {
            if let Some(d) = m.rel_deadline {
                if response > d {
                    m.deadline_misses += 1;
                }
            }
        }
        self.keep(t, c, now as i64);
    }

    /// Record the relative deadline of the task's timer activations.
    #[inline]
    pub fn set_deadline(&mut self, t: TaskId, rel: u64) {
        self.tasks[t.idx()].rel_deadline = Some(rel);
    }

    /// Task `t` hit mark `label`.
    pub fn mark(&mut self, label: usize, t: TaskId, now: Time) {
        if self.marks[label].is_none() {
            self.marks[label] = Some(now);
        }
        self.mark_hits[label] += 1;
        let last = std::mem::replace(&mut self.last_mark[t.idx()], now);
        if last != UNSET {
            self.mark_gaps[label].record(now - last);
        }
    }

    /// Close the samples of activations still open at the end of the run (end = -1),
    /// and the sample writer. A write error of the writer is returned (once).
    pub fn finish(&mut self) -> io::Result<()> {
        for i in 0..self.tasks.len() {
            let c = self.tasks[i].cur;
            if c.open {
                self.keep(TaskId(i as u32), c, -1);
            }
            // No more samples: the histograms give back their room to grow before the
            // result is built beside them.
            self.tasks[i].latency.shrink_to_fit();
            self.tasks[i].response.shrink_to_fit();
        }
        if let Store::Stream(w) = &mut self.store {
            if let Err(e) = w.finish() {
                self.error.get_or_insert(e);
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    #[inline]
    fn keep(&mut self, t: TaskId, c: Open, end: i64) {
        self.recorded += 1;
        if matches!(self.store, Store::Summary) {
            return;
        }
        let s = Sample {
            tid: t.pid(),
            release_ns: c.release,
            wake_ns: if c.wake == UNSET { c.release } else { c.wake },
            start_ns: if c.start == UNSET { -1 } else { c.start as i64 },
            end_ns: end,
            kind: c.kind as u8,
        };
        match &mut self.store {
            Store::Memory(m) => m.push(&s),
            Store::Stream(w) if self.error.is_none() => {
                if let Err(e) = w.write(&s) {
                    self.error = Some(e);
                }
            }
            _ => {}
        }
    }
}

impl Samples {
    fn push(&mut self, s: &Sample) {
        self.tid.push(s.tid);
        self.release_ns.push(s.release_ns);
        self.wake_ns.push(s.wake_ns);
        self.start_ns.push(s.start_ns);
        self.end_ns.push(s.end_ns);
        self.kind.push(s.kind);
    }

    pub fn len(&self) -> usize {
        self.tid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tid.is_empty()
    }

    /// The wake-up latencies (start − release of the activations that ran), the response
    /// times (end − release of those that ended) and the timer-released latencies of each
    /// task, indexed by task id (pid − 1), for `nr_tasks` tasks.
    pub fn per_task(&self, nr_tasks: usize) -> Vec<[Vec<u64>; 3]> {
        let mut out: Vec<[Vec<u64>; 3]> = (0..nr_tasks).map(|_| Default::default()).collect();
        for i in 0..self.len() {
            let t = (self.tid[i] - 1) as usize;
            let release = self.release_ns[i];
            if self.start_ns[i] >= 0 {
                let lat = (self.start_ns[i] as u64).saturating_sub(release);
                out[t][0].push(lat);
                if self.kind[i] == ActKind::Timer as u8 {
                    out[t][2].push(lat);
                }
            }
            if self.end_ns[i] >= 0 {
                out[t][1].push((self.end_ns[i] as u64).saturating_sub(release));
            }
        }
        out
    }
}

// ------------------------------------------------------------------------- Arrow IPC

/// Rows buffered before a record batch is written.
const BATCH_ROWS: usize = 64 * 1024;

/// Streams samples into an Arrow IPC file (the Feather v2 format that polars' `read_ipc`
/// and pyarrow read), one record batch per 65,536 samples, with the columns of
/// [`Samples`]. Memory is one batch, whatever the number of samples.
pub struct IpcSampleWriter {
    writer: Option<arrow_ipc::writer::FileWriter<Box<dyn Write>>>,
    schema: std::sync::Arc<arrow_schema::Schema>,
    rows: Samples,
}

impl IpcSampleWriter {
    /// Start an IPC file on `out` (which need not be buffered).
    pub fn new(out: Box<dyn Write>) -> io::Result<Self> {
        use arrow_schema::{DataType, Field, Schema};
        let schema = std::sync::Arc::new(Schema::new(vec![
            Field::new("tid", DataType::UInt32, false),
            Field::new("release_ns", DataType::UInt64, false),
            Field::new("wake_ns", DataType::UInt64, false),
            Field::new("start_ns", DataType::Int64, false),
            Field::new("end_ns", DataType::Int64, false),
            Field::new("kind", DataType::UInt8, false),
        ]));
        let writer = arrow_ipc::writer::FileWriter::try_new(
            Box::new(io::BufWriter::new(out)) as Box<dyn Write>,
            &schema,
        )
        .map_err(io::Error::other)?;
        Ok(IpcSampleWriter {
            writer: Some(writer),
            schema,
            rows: Samples::default(),
        })
    }

    fn flush_batch(&mut self) -> io::Result<()> {
        use arrow_array::{Int64Array, RecordBatch, UInt32Array, UInt64Array, UInt8Array};
        if self.rows.is_empty() {
            return Ok(());
        }
        let r = std::mem::take(&mut self.rows);
        let batch = RecordBatch::try_new(
            self.schema.clone(),
            vec![
                std::sync::Arc::new(UInt32Array::from(r.tid)),
                std::sync::Arc::new(UInt64Array::from(r.release_ns)),
                std::sync::Arc::new(UInt64Array::from(r.wake_ns)),
                std::sync::Arc::new(Int64Array::from(r.start_ns)),
                std::sync::Arc::new(Int64Array::from(r.end_ns)),
                std::sync::Arc::new(UInt8Array::from(r.kind)),
            ],
        )
        .map_err(io::Error::other)?;
        let w = self.writer.as_mut().expect("writer open");
        w.write(&batch).map_err(io::Error::other)
    }
}

impl SampleWriter for IpcSampleWriter {
    fn write(&mut self, s: &Sample) -> io::Result<()> {
        self.rows.push(s);
        if self.rows.len() >= BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.writer.is_none() {
            return Ok(());
        }
        self.flush_batch()?;
        let mut w = self.writer.take().expect("writer open");
        w.finish().map_err(io::Error::other)?;
        w.into_inner().map_err(io::Error::other)?.flush()
    }
}

/// The relative deadline of a task's timer-released jobs (docs/results.md): its
/// `dl-deadline` when it has SCHED_DEADLINE parameters, else the period of the timer that
/// releases them. The one statement of the rule: deadline misses, the policies that
/// schedule by deadline and the schedulability analysis all read it here.
#[inline]
pub fn relative_deadline(dl: Option<crate::types::DlParams>, timer_period_ns: u64) -> u64 {
    dl.map_or(timer_period_ns, |d| d.deadline_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activation(m: &mut Metrics, t: TaskId, release: u64, start: u64, end: u64) {
        m.release(t, release, ActKind::Timer);
        m.runnable(t, release);
        m.started(t, start);
        m.end(t, end);
    }

    #[test]
    fn histograms_in_summary_mode_and_samples_in_memory_mode_agree() {
        let mut mem = Metrics::new(0, SampleMode::Memory);
        let mut sum = Metrics::new(0, SampleMode::Summary);
        for m in [&mut mem, &mut sum] {
            m.add_task();
            for i in 0..100u64 {
                activation(m, TaskId(0), i * 1000, i * 1000 + i, i * 1000 + 3 * i);
            }
            m.finish().unwrap();
        }
        assert_eq!(mem.recorded, 100);
        assert_eq!(sum.recorded, 100);
        let [lat, resp, timer] = mem.samples().unwrap().per_task(1).remove(0);
        assert_eq!(lat, (0..100).collect::<Vec<u64>>());
        assert_eq!(resp, (0..100).map(|i| 3 * i).collect::<Vec<u64>>());
        assert_eq!(timer, lat);
        let h = &sum.tasks[0];
        assert_eq!(h.latency.count(), 100);
        assert_eq!(h.response.stats().max(), Some(297));
        assert_eq!(
            mem.tasks[0].latency.count(),
            0,
            "no histograms beside the samples"
        );
    }

    /// The timer latencies are the latencies while every activation is a timer release,
    /// and only the timer releases' once others come.
    #[test]
    fn timer_latencies_follow_the_timer_releases_only() {
        let mut m = Metrics::new(0, SampleMode::Summary);
        m.add_task();
        let t = TaskId(0);
        let mut timer_only = Histogram::new();
        for i in 0..50u64 {
            activation(&mut m, t, 1000 * i, 1000 * i + i % 7, 1000 * i + 500);
            timer_only.record(i % 7);
        }
        assert_eq!(m.tasks[0].timer_latency(), &m.tasks[0].latency);
        for i in 50..80u64 {
            let kind = if i % 3 == 0 {
                ActKind::Wakeup
            } else {
                ActKind::Timer
            };
            m.release(t, 1000 * i, kind);
            m.started(t, 1000 * i + 3 * (i % 5));
            m.end(t, 1000 * i + 900);
            if kind == ActKind::Timer {
                timer_only.record(3 * (i % 5));
            }
        }
        let tm = &m.tasks[0];
        assert_eq!(tm.timer_latency(), &timer_only);
        assert_eq!(tm.latency.count(), 80);
        // A task woken only by others has no timer latencies.
        m.add_task();
        for i in 0..5u64 {
            m.release(TaskId(1), i * 10, ActKind::Wakeup);
            m.started(TaskId(1), i * 10 + 1);
            m.end(TaskId(1), i * 10 + 2);
        }
        assert_eq!(m.tasks[1].timer_latency().count(), 0);
        assert_eq!(m.tasks[1].latency.count(), 5);
    }

    #[test]
    fn an_ipc_file_holds_every_sample() {
        struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let buf = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let w = IpcSampleWriter::new(Box::new(Shared(buf.clone()))).unwrap();
        let mut m = Metrics::new(0, SampleMode::Stream(Box::new(w)));
        m.add_task();
        let n = BATCH_ROWS as u64 + 10;
        for i in 0..n {
            activation(&mut m, TaskId(0), i, i + 1, i + 2);
        }
        m.release(TaskId(0), n, ActKind::Sleep);
        m.finish().unwrap();
        let bytes = buf.borrow().clone();
        let reader =
            arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows as u64, n + 1);
    }
}

//! The host runner: a spec on this machine's real kernel, one thread per task instance,
//! reported in the simulator's result schema (`engine: "host"`) with the kernel facts of
//! the run.
//!
//! It shares with the simulator the spec reader (`schedlab-spec`), the program cursor
//! and rt-app's timer rule (`schedlab_core::program`), the activation metrics and the
//! statistics and headline definitions (`schedlab_core::metrics`, `series`) and the typed
//! result; only the doing is its own: busy work consumes the thread's CPU time
//! (CLOCK_THREAD_CPUTIME_ID), sleeps and timers are absolute CLOCK_MONOTONIC expiries
//! (`clock_nanosleep(TIMER_ABSTIME)`, as cyclictest), mutexes are error-checking pthread
//! mutexes, conditions wait on CLOCK_MONOTONIC, channels are pipes and AF_UNIX socket
//! pairs, and attributes go through `sched_setattr` and are read back.
//!
//! How the host measures differs from the simulator where the kernel does not say:
//! an activation's release is the expiry (timers, sleeps) or the waker's last action on
//! the object (unlock, signal, last barrier arrival, channel write or read), and it is
//! taken as runnable at its release (`wake_ns = release_ns`); start is when the woken
//! thread's first instruction after the wait ran. Task ids are schedlab's (creation
//! order), not the kernel's.
//!
//! The spec's cgroups are made as cgroup v1 groups through the restore journal
//! (`cgroups.rs`), and put back when the run ends, however it ends.
//!
//! Block I/O (`schedlab:io`, `schedlab:fsync`, `schedlab:ioprio`) runs on loop devices
//! over files on this machine's disk, made through the journal (`devices.rs`), with the
//! device's I/O scheduler as the spec names it; each task's requests are submitted as
//! `io.rs` says, and the result reports them as the simulator does (each task's `io`,
//! `summary.io` in fio's terms).
//!
//! Not run on the host yet, refused with the reason before anything starts:
//! `schedlab:unlink`; RT policies while RT throttling is off (a SCHED_FIFO busy loop
//! never runs without it).

mod cgroups;
pub(crate) mod devices;
mod io;
mod objects;
mod task;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread::Scope;
use std::time::Instant;

use schedlab_core::cancel::Cancel;
use schedlab_core::metrics::{Metrics, SampleMode, Samples};
use schedlab_core::program::{self, Programs};
use schedlab_core::result::{
    CpuResult, EngineKind, IoSummary, KernelInfo, RunInfo, RunResult, RunSummary, SampleInfo,
    TaskIoCounts, TaskIoResult, TaskResult, Totals, SCHEMA,
};
use schedlab_core::series::{self, Series, SeriesStats};
use schedlab_core::stats::Summary;
use schedlab_core::types::TaskId;
use schedlab_spec::model::{Event, Spec, RUN_FOREVER};

use crate::clock;
use crate::facts::KernelFacts;
use crate::journal::{self, Journal};
use crate::trace::Capture;
use cgroups::Groups;
use devices::Devices;
use objects::Objects;
use task::{Rec, Runner, TaskLog};

/// How a host run is asked for.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stop after this long (else the spec's `global.duration`, else when every task has
    /// exited).
    pub duration_ns: Option<u64>,
    /// Asked by the run's main thread every [`CANCEL_POLL`]; a `true` stops every task at
    /// its next event or wait slice, and the run returns [`HostError::Cancelled`] after
    /// putting the machine back.
    pub cancel: Option<Cancel>,
    /// Loop devices the caller bound, by spec device name, used instead of making one
    /// (`devices.rs`).
    pub devices: Vec<(String, std::path::PathBuf)>,
    /// Capture the run's scheduler events through tracefs into this file, in the
    /// simulator's trace text (`crate::trace`).
    pub trace: Option<std::path::PathBuf>,
}

/// How often the main thread asks [`RunOptions::cancel`].
pub const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// A finished host run: its result and the samples of its activations.
pub struct HostOutput {
    pub result: RunResult,
    pub samples: Samples,
}

/// Why a host run did not happen or did not finish.
#[derive(Debug, PartialEq, Eq)]
pub enum HostError {
    /// The spec is invalid, or asks for something the host runner does not do (the
    /// message names the JSON path).
    BadInput(String),
    /// The kernel or the caller's privileges forbid it.
    Refused(String),
    /// The caller stopped it ([`RunOptions::cancel`]); the machine was put back.
    Cancelled,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::BadInput(m) | HostError::Refused(m) => f.write_str(m),
            HostError::Cancelled => f.write_str("the run was stopped by its caller"),
        }
    }
}

/// What every thread of a run shares.
pub struct World<'s> {
    spec: &'s Spec,
    programs: Programs<'s>,
    objects: Objects,
    groups: Groups,
    devices: Devices,
    /// The run's start, absolute CLOCK_MONOTONIC ns (set when every start-up thread is
    /// ready).
    t0: AtomicU64,
    /// The run's end on its clock, if it has one.
    end: Option<u64>,
    stop: AtomicBool,
    /// Every live thread waited on an object and none was woken for a whole slice.
    deadlocked: AtomicBool,
    /// Threads alive, and those of them waiting on an object (a mutex, a condition, a
    /// barrier, a channel).
    live: AtomicUsize,
    waiting: AtomicUsize,
    /// Object waits that ended in a wake-up, ever.
    progress: AtomicU64,
    next_id: AtomicU32,
    /// Instances created so far, per template (for their names).
    instances: Mutex<Vec<usize>>,
    logs: Mutex<Vec<TaskLog>>,
    errors: Mutex<Vec<String>>,
}

impl World<'_> {
    /// Whether the run is over at `at` (its end, or stopped).
    fn past_end(&self, at: u64) -> bool {
        self.stop.load(Ordering::Relaxed) || self.end.is_some_and(|e| at >= e)
    }

    /// Stop the run with an error.
    fn fail(&self, message: String) {
        self.errors.lock().unwrap().push(message);
        self.stop.store(true, Ordering::Release);
    }

    /// A new instance of template `tmpl`: its id and name.
    fn new_instance(&self, tmpl: u32) -> (u32, String) {
        let id = self.next_id.fetch_add(1, Ordering::AcqRel);
        let mut counts = self.instances.lock().unwrap();
        let n = &mut counts[tmpl as usize];
        let name = program::instance_name(&self.programs.task(tmpl).name, *n);
        *n += 1;
        (id, name)
    }
}

/// Run `text` on this machine.
pub fn run(text: &str, opts: &RunOptions) -> Result<HostOutput, HostError> {
    let started = Instant::now();
    let spec = schedlab_spec::parse_spec(text).map_err(|e| HostError::BadInput(e.to_string()))?;
    let facts = KernelFacts::read();
    check_supported(&spec, &facts)?;
    let end = opts.duration_ns.or(spec.duration_ns);
    check_ends(&spec, end)?;
    let objects = Objects::of(&spec).map_err(|e| HostError::Refused(e.to_string()))?;
    // The journal puts every cgroup and setting back when it is dropped: at the end of
    // this function, whatever way it ends.
    let mut journal = None;
    let groups = if Groups::needed(&spec) {
        let j = journal.insert(open_journal()?);
        Groups::make(&spec, j).map_err(HostError::Refused)?
    } else {
        Groups::none(&spec)
    };
    let devices = if Devices::needed(&spec) {
        if Devices::changes(&spec, &opts.devices) && journal.is_none() {
            journal = Some(open_journal_for("schedlab:io: making loop devices")?);
        }
        Devices::make(&spec, journal.as_mut(), &opts.devices).map_err(HostError::Refused)?
    } else {
        Devices::none(&spec)
    };
    let capture = match &opts.trace {
        Some(_) => {
            let j = match journal.as_mut() {
                Some(j) => j,
                None => journal.insert(open_journal_for("--trace: tracing")?),
            };
            Some(Capture::prepare(j).map_err(HostError::Refused)?)
        }
        None => None,
    };
    let programs = Programs::compile(&spec);
    let world = World {
        spec: &spec,
        instances: Mutex::new(vec![0; programs.len()]),
        programs,
        objects,
        groups,
        devices,
        t0: AtomicU64::new(0),
        end,
        stop: AtomicBool::new(false),
        deadlocked: AtomicBool::new(false),
        live: AtomicUsize::new(0),
        waiting: AtomicUsize::new(0),
        progress: AtomicU64::new(0),
        next_id: AtomicU32::new(0),
        logs: Mutex::new(Vec::new()),
        errors: Mutex::new(Vec::new()),
    };
    let initial: usize = spec.tasks.iter().map(|t| t.instances as usize).sum();
    let gate = Barrier::new(initial + 1);
    let cpu_before = cpu_times();
    let mut cancelled = false;
    if let Some(c) = &capture {
        c.on().map_err(HostError::Refused)?;
    }
    std::thread::scope(|s| {
        start(s, &world, &gate);
        cancelled = watch(&world, opts.cancel.as_ref());
    });
    let traced = match (&capture, &opts.trace) {
        (Some(c), Some(out)) => Some(
            c.finish(world.t0.load(Ordering::Acquire), out)
                .map_err(HostError::Refused)?,
        ),
        _ => None,
    };
    drop(capture);
    let cpu_after = cpu_times();
    if cancelled {
        return Err(HostError::Cancelled);
    }
    let errors = std::mem::take(&mut *world.errors.lock().unwrap());
    if let Some(first) = errors.into_iter().next() {
        return Err(HostError::Refused(first));
    }
    let logs = std::mem::take(&mut *world.logs.lock().unwrap());
    let (mut result, samples) = build(&spec, logs, &facts, end, cpu_before, cpu_after);
    result.run.notes.extend(world.objects.applied_notes(&spec));
    if let (Some(w), Some(out)) = (traced, &opts.trace) {
        result.run.notes.push(format!(
            "host trace: {} scheduler events of every CPU written to {} ({} before the \
             run's start left out, {} lost to ring-buffer overruns)",
            w.events,
            out.display(),
            w.before_start,
            w.lost
        ));
    }
    result.groups = world.groups.results(&spec);
    result.run.notes.extend(world.devices.notes(&spec));
    result.devices = world.devices.results(&spec);
    let deadlocked = world.deadlocked.load(Ordering::Acquire);
    // The devices are closed before the journal releases them.
    drop(world);
    drop(journal);
    if deadlocked {
        result.run.notes.push(
            "host run: stopped when every task waited on an object no task would release"
                .to_string(),
        );
    }
    result.run.spec_sha256 = Some(schedlab_spec::spec_sha256(text));
    result.run.wall_s = started.elapsed().as_secs_f64();
    Ok(HostOutput { result, samples })
}

/// Start every start-up instance, all at once: each takes its attributes, then the run's
/// clock starts and they are released together.
fn start<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    world: &'env World<'env>,
    gate: &'env Barrier,
) {
    let initial: Vec<u32> = (0..world.programs.len() as u32)
        .flat_map(|tmpl| (0..world.programs.task(tmpl).instances).map(move |_| tmpl))
        .collect();
    for tmpl in initial {
        let (id, name) = world.new_instance(tmpl);
        world.live.fetch_add(1, Ordering::AcqRel);
        s.spawn(move || {
            let mut r = Runner::new(world, s, tmpl, id, name);
            let ok = r.set_up().map_err(|e| world.fail(e)).is_ok();
            gate.wait();
            gate.wait();
            if ok && !world.stop.load(Ordering::Acquire) {
                let log = r.run(world.programs.task(tmpl).delay_ns);
                world.logs.lock().unwrap().push(log);
            }
            world.live.fetch_sub(1, Ordering::AcqRel);
        });
    }
    gate.wait();
    world.t0.store(clock::monotonic(), Ordering::Release);
    gate.wait();
}

/// The main thread while the tasks run: ask the caller's cancel check until every thread
/// has ended; a request stops them all. Returns whether the run was cancelled.
fn watch(world: &World<'_>, cancel: Option<&Cancel>) -> bool {
    let Some(cancel) = cancel else {
        return false;
    };
    while world.live.load(Ordering::Acquire) > 0 {
        if cancel.requested() {
            world.stop.store(true, Ordering::Release);
            return true;
        }
        std::thread::sleep(CANCEL_POLL);
    }
    false
}

/// Spawn a forked instance of `tmpl` on the run's scope: it starts at once.
pub(crate) fn spawn_forked<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    world: &'env World<'env>,
    tmpl: u32,
) {
    let (id, name) = world.new_instance(tmpl);
    world.live.fetch_add(1, Ordering::AcqRel);
    s.spawn(move || {
        let mut r = Runner::new(world, s, tmpl, id, name);
        match r.set_up() {
            Ok(()) => {
                let log = r.run(0);
                world.logs.lock().unwrap().push(log);
            }
            Err(e) => world.fail(e),
        }
        world.live.fetch_sub(1, Ordering::AcqRel);
    });
}

/// The restore journal, for a run that changes the system. A journal a killed run left
/// is restored first; one that cannot be is an error.
fn open_journal() -> Result<Journal, HostError> {
    open_journal_for("$.schedlab.cgroups: making cgroups")
}

/// [`open_journal`] for `what` (the message when the caller is not root).
fn open_journal_for(what: &str) -> Result<Journal, HostError> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(HostError::Refused(format!("{what} needs root")));
    }
    let path = journal::default_path();
    let (j, restored) = Journal::open(&path)
        .map_err(|e| HostError::Refused(format!("restore journal {}: {e}", path.display())))?;
    if let Some((change, e)) = restored.failed.first() {
        return Err(HostError::Refused(format!(
            "{}: a change of an earlier run could not be undone ({change:?}: {e}); \
             see `schedlab host restore`",
            path.display()
        )));
    }
    Ok(j)
}

/// Refuse, before anything runs, what the host runner does not do.
fn check_supported(spec: &Spec, facts: &KernelFacts) -> Result<(), HostError> {
    let throttling_off = match (facts.sched_rt_runtime_us, spec.cgroups[0].cpu.rt_runtime_us) {
        (_, Some(-1)) => Some("the spec's root group sets cpu.rt_runtime_us = -1"),
        (Some(-1), _) => Some("kernel.sched_rt_runtime_us = -1 on this machine"),
        _ => None,
    };
    for t in &spec.tasks {
        let mut attrs =
            std::iter::once(&t.attr).chain(t.phases.iter().filter_map(|p| p.attr.as_ref()));
        if let Some(why) = throttling_off.filter(|_| attrs.any(|a| a.policy.is_rt())) {
            return Err(HostError::Refused(format!(
                "$.tasks.{}: RT throttling would be off ({why}): the host runner never runs a \
                 SCHED_FIFO/RR task without it",
                t.name
            )));
        }
        let cpus = t
            .cpus
            .iter()
            .chain(t.phases.iter().filter_map(|p| p.cpus.as_ref()));
        if let Some(c) = cpus.flatten().find(|&&c| c as usize >= facts.cpus) {
            return Err(HostError::BadInput(format!(
                "$.tasks.{}.cpus: CPU {c} does not exist here (this machine has {} CPUs)",
                t.name, facts.cpus
            )));
        }
        for p in &t.phases {
            if let Some(what) = p.events.iter().find_map(unsupported) {
                return Err(HostError::BadInput(format!(
                    "$.tasks.{}: {what} is not run by the host runner yet; run this spec in \
                     the simulator",
                    t.name
                )));
            }
        }
    }
    Ok(())
}

/// The name of an event the host runner does not do.
fn unsupported(e: &Event) -> Option<&'static str> {
    match e {
        Event::Unlink { .. } => Some("schedlab:unlink"),
        Event::Writeback { .. } => Some("a writeback pass"),
        Event::Suspend | Event::Resume { .. } => Some("suspend/resume built in code"),
        _ => None,
    }
}

/// A workload that never ends needs a duration on the host (the simulator would run it to
/// its memory budget; a real machine would run it for ever).
fn check_ends(spec: &Spec, end: Option<u64>) -> Result<(), HostError> {
    if end.is_some() {
        return Ok(());
    }
    let forever = spec.tasks.iter().find(|t| {
        t.loop_count < 0
            || t.phases.iter().any(|p| {
                p.loop_count < 0
                    || p.events
                        .iter()
                        .any(|e| matches!(e, Event::Run { ns } if *ns == RUN_FOREVER))
            })
    });
    match forever {
        Some(t) => Err(HostError::BadInput(format!(
            "$.tasks.{}: runs for ever; give global.duration or --duration for a host run",
            t.name
        ))),
        None => Ok(()),
    }
}

/// Replay every thread's log into the core's metrics and build the result.
fn build(
    spec: &Spec,
    mut logs: Vec<TaskLog>,
    facts: &KernelFacts,
    end: Option<u64>,
    before: Vec<(u64, u64)>,
    after: Vec<(u64, u64)>,
) -> (RunResult, Samples) {
    logs.sort_by_key(|l| l.id);
    let mut metrics = Metrics::new(spec.resources.marks.len(), SampleMode::Memory);
    metrics.reserve_tasks(logs.len());
    let mut first_marks: Vec<Option<u64>> = vec![None; spec.resources.marks.len()];
    for (i, log) in logs.iter().enumerate() {
        metrics.add_task();
        replay(&mut metrics, TaskId(i as u32), log, &mut first_marks);
    }
    metrics.marks = first_marks;
    let _ = metrics.finish();
    let all_exited = !logs.is_empty() && logs.iter().all(|l| l.exited_at.is_some());
    let makespan = all_exited
        .then(|| logs.iter().filter_map(|l| l.exited_at).max())
        .flatten();
    let span = end.or(makespan).unwrap_or(0);
    let mut stats = SeriesStats::of(&metrics, logs.len());
    let summary_latency = stats.pooled(&metrics, Series::Latency, |_| true);
    let headline = series::headline(&spec.headline, &metrics, &mut stats, span, makespan, |t| {
        logs[t].name.as_str()
    });
    let tasks: Vec<TaskResult> = (logs.iter().enumerate())
        .map(|(i, l)| task_result(&metrics, &mut stats, i, l, span))
        .collect();
    let marks = (spec.resources.marks.iter().zip(metrics.marks.iter()))
        .filter_map(|(name, t)| t.map(|t| (name.clone(), t)))
        .collect();
    let summary = RunSummary {
        makespan_ns: makespan,
        wakeup_latency_ns: summary_latency,
        headline,
        marks,
        blocked_at_end: logs.iter().filter(|l| l.blocked_at_end).count(),
        totals: Totals::of(&tasks),
        io: io_summary(&logs, makespan.unwrap_or(span)),
    };
    let result = RunResult {
        schema: SCHEMA,
        run: run_info(facts, span, &metrics, &logs),
        tasks,
        cpus: cpu_results(&before, &after),
        devices: Vec::new(),
        groups: Vec::new(),
        summary,
    };
    (result, metrics.take_samples())
}

/// fio's view of the tasks' block I/O over the workload's time (as the simulator's).
fn io_summary(logs: &[TaskLog], ns: u64) -> Option<IoSummary> {
    let tasks = logs
        .iter()
        .filter_map(|l| l.io.as_ref())
        .map(|s| TaskIoCounts {
            reads: s.reads,
            writes: s.requests - s.reads,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            latency: &s.latency,
        });
    IoSummary::pooled(tasks, ns)
}

fn replay(metrics: &mut Metrics, t: TaskId, log: &TaskLog, first_marks: &mut [Option<u64>]) {
    for rec in &log.recs {
        match *rec {
            Rec::End(at) => metrics.end(t, at),
            Rec::Woke(release, kind, start) => {
                metrics.release(t, release, kind);
                metrics.runnable(t, release);
                metrics.started(t, start);
            }
            Rec::Deadline(rel) => metrics.set_deadline(t, rel),
            Rec::Mark(label, at) => {
                metrics.mark(label, t, at);
                let first = &mut first_marks[label];
                *first = Some(first.map_or(at, |f| f.min(at)));
            }
        }
    }
}

fn task_result(
    metrics: &Metrics,
    stats: &mut SeriesStats,
    i: usize,
    l: &TaskLog,
    span: u64,
) -> TaskResult {
    let m = &metrics.tasks[i];
    let lifetime = l.exited_at.unwrap_or(span).saturating_sub(l.started_at);
    TaskResult {
        name: l.name.clone(),
        tid: TaskId(i as u32).pid(),
        policy: l.policy.as_str(),
        priority: l.priority,
        nice: if l.policy.is_rt() { 0 } else { l.priority },
        cpu_ns: l.cpu_ns,
        sys_ns: l.sys_ns,
        irq_ns: 0,
        wait_ns: l.wait_ns,
        sleep_ns: lifetime.saturating_sub(l.cpu_ns + l.wait_ns),
        switches_voluntary: l.voluntary,
        switches_involuntary: l.involuntary,
        migrations: l.migrations,
        activations: m.activations,
        deadline_misses: m.deadline_misses,
        dl_throttles: None,
        wakeup_latency_ns: stats.task(metrics, i, Series::Latency),
        response_ns: stats.task(metrics, i, Series::Response),
        kernel_thread: false,
        io: l.io.as_ref().filter(|s| s.requests > 0).map(|s| {
            Box::new(TaskIoResult {
                requests: s.requests,
                bytes_read: s.bytes_read,
                bytes_written: s.bytes_written,
                latency_ns: Summary::of_histogram(&s.latency),
            })
        }),
    }
}

fn run_info(facts: &KernelFacts, span: u64, metrics: &Metrics, logs: &[TaskLog]) -> RunInfo {
    RunInfo {
        engine: EngineKind::Host,
        scheduler: "host".to_string(),
        params: Vec::new(),
        seed: 0,
        spec_sha256: None,
        sim_ns: span,
        wall_s: 0.0,
        events: logs.iter().map(|l| l.recs.len() as u64).sum(),
        cpus: facts.cpus,
        hz: facts.hz.unwrap_or(0),
        decisions: 0,
        work_units: 0,
        version: env!("CARGO_PKG_VERSION"),
        cpus_source: "host",
        kernel: KernelInfo {
            preempt: static_preempt(facts.preempt.as_deref()),
            timers: "hrtimer",
            tick: "host",
            profile: None,
            varying_costs: Vec::new(),
        },
        samples: SampleInfo {
            mode: "memory",
            count: metrics.recorded,
            path: None,
            percentiles: "exact",
        },
        notes: vec![
            "host run: activations are released at the expiry or at the waker's last action \
             on the object, and taken as runnable then (wake_ns = release_ns); task ids are \
             creation order, not the kernel's"
                .to_string(),
            "host run: events counts the measurement records, decisions and work_units are \
             not observable (0)"
                .to_string(),
        ],
        stopped: None,
        host: Some(facts.to_json()),
    }
}

fn static_preempt(p: Option<&str>) -> &'static str {
    match p {
        Some("none") => "none",
        Some("voluntary") => "voluntary",
        Some("full") => "full",
        Some("lazy") => "lazy",
        Some("rt") => "rt",
        _ => "unknown",
    }
}

/// Per-CPU busy and idle time since boot (ns) from `/proc/stat`.
fn cpu_times() -> Vec<(u64, u64)> {
    // SAFETY: sysconf has no side effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            let busy = v.iter().take(8).sum::<u64>() - idle;
            (busy * 1_000_000_000 / hz, idle * 1_000_000_000 / hz)
        })
        .collect()
}

fn cpu_results(before: &[(u64, u64)], after: &[(u64, u64)]) -> Vec<CpuResult> {
    (before.iter().zip(after))
        .enumerate()
        .map(|(cpu, (b, a))| CpuResult {
            cpu,
            busy_ns: a.0.saturating_sub(b.0),
            idle_ns: a.1.saturating_sub(b.1),
            overhead_ns: 0,
        })
        .collect()
}

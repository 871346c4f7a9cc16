//! The typed `schedlab.result/1` object (`schedlab_core::result`, docs/results.md) built
//! from a finished engine.

use schedlab_core::result::{
    CpuResult, DeviceResult, EngineKind, GroupResult, Headline as HeadlineOut, IoDirSummary,
    IoSummary, KernelInfo, RtThrottleResult, RunInfo, RunResult, RunSummary, SampleInfo,
    TaskIoResult, TaskResult, Totals, SCHEMA,
};
use schedlab_core::stats::{Histogram, Summary};
use schedlab_spec::model::{Headline, Spec};

use crate::engine::{Engine, TState};
use crate::sched::Scheduler;
use crate::types::TaskId;

/// Metadata of a run that the engine does not know itself.
pub(crate) struct RunMeta<'a> {
    pub scheduler: &'a str,
    pub params: &'a [(String, String)],
    pub seed: u64,
    pub spec_sha256: Option<String>,
    pub cpus_source: &'static str,
    pub sample_path: Option<String>,
    pub notes: Vec<String>,
}

/// Which latencies of a task a statistic is about.
#[derive(Clone, Copy)]
enum Series {
    Latency = 0,
    Response = 1,
    TimerLatency = 2,
}

/// The samples of each series per task, when they are kept in memory (statistics are then
/// exact); else the histograms are used.
struct Source {
    exact: Option<Vec<[Vec<u64>; 3]>>,
}

impl Source {
    fn of<S: Scheduler>(e: &Engine<S>) -> Source {
        Source {
            exact: e.metrics.samples().map(|s| s.per_task(e.rt.len())),
        }
    }

    fn histogram<'e, S: Scheduler>(
        e: &'e Engine<'_, S>,
        t: usize,
        series: Series,
    ) -> &'e Histogram {
        let m = &e.metrics.tasks[t];
        match series {
            Series::Latency => &m.latency,
            Series::Response => &m.response,
            Series::TimerLatency => m.timer_latency(),
        }
    }

    /// The statistics of one task's series.
    fn task<S: Scheduler>(&mut self, e: &Engine<S>, t: usize, series: Series) -> Summary {
        match &mut self.exact {
            Some(per) => Summary::exact(&mut per[t][series as usize]),
            None => Summary::of_histogram(Self::histogram(e, t, series)),
        }
    }

    /// The statistics of a series pooled over the tasks `keep` selects.
    fn pooled<S: Scheduler>(
        &mut self,
        e: &Engine<S>,
        series: Series,
        keep: impl Fn(usize) -> bool,
    ) -> Summary {
        match &mut self.exact {
            Some(per) => {
                let mut all: Vec<u64> = (0..per.len())
                    .filter(|&t| keep(t))
                    .flat_map(|t| per[t][series as usize].iter().copied())
                    .collect();
                Summary::exact(&mut all)
            }
            None => {
                let mut h = Histogram::new();
                for t in (0..e.rt.len()).filter(|&t| keep(t)) {
                    h.merge(Self::histogram(e, t, series));
                }
                Summary::of_histogram(&h)
            }
        }
    }
}

/// The result of a finished run. The pooled statistics are taken first; then each task's
/// histograms are dropped as soon as its own statistics are (the result's per-task objects
/// replace them instead of adding to them at the run's peak of memory).
pub(crate) fn build<S: Scheduler>(e: &mut Engine<S>, spec: &Spec, meta: RunMeta<'_>) -> RunResult {
    let mut src = Source::of(e);
    let run = RunInfo {
        engine: EngineKind::Sim,
        scheduler: meta.scheduler.to_string(),
        params: meta.params.to_vec(),
        seed: meta.seed,
        spec_sha256: meta.spec_sha256,
        sim_ns: e.core.ctx.now,
        wall_s: 0.0,
        events: e.events,
        cpus: e.core.ctx.nr_cpus(),
        hz: e.core.ctx.hz(),
        decisions: e.core.decisions,
        work_units: e.core.ctx.work_units,
        version: env!("CARGO_PKG_VERSION"),
        cpus_source: meta.cpus_source,
        kernel: KernelInfo::of(spec),
        samples: SampleInfo {
            mode: e.sample_mode,
            count: e.metrics.recorded,
            path: meta.sample_path,
            percentiles: if src.exact.is_some() {
                "exact"
            } else {
                "histogram"
            },
        },
        notes: meta.notes,
        stopped: e.stopped.clone(),
    };
    let mut summary = summary(e, &mut src, spec);
    let tasks: Vec<TaskResult> = (0..e.rt.len())
        .map(|i| {
            let name = std::mem::take(&mut e.rt[i].name);
            let r = task(e, &mut src, i, name);
            e.metrics.tasks[i].drop_histograms();
            r
        })
        .collect();
    let cpus = e
        .core
        .ctx
        .cpus
        .iter()
        .enumerate()
        .map(|(c, cs)| CpuResult {
            cpu: c,
            busy_ns: cs.busy_ns,
            idle_ns: cs.idle_ns,
            overhead_ns: cs.overhead_ns,
        })
        .collect();
    let devices = e
        .blk
        .queues
        .iter()
        .map(|q| DeviceResult {
            name: q.name.clone(),
            scheduler: q.elevator.info().name.to_string(),
            requests: q.stats.requests,
            merges: q.stats.merges,
            bytes_read: q.stats.bytes_read,
            bytes_written: q.stats.bytes_written,
            busy_ns: q.stats.busy_ns,
            latency_ns: Summary::of_histogram(&q.stats.latency),
        })
        .collect();
    let groups = group_results(e, spec);
    summary.totals = Totals::of(&tasks);
    RunResult {
        schema: SCHEMA,
        run,
        tasks,
        cpus,
        devices,
        groups,
        summary,
    }
}

/// The cgroups whose policy state has statistics to report (CFS bandwidth, RT throttling).
fn group_results<S: Scheduler>(e: &Engine<S>, spec: &Spec) -> Vec<GroupResult> {
    let mut throttling = e.core.policy.rt_throttling(e.core.ctx.now);
    throttling.sort_by_key(|t| (t.group, t.cpu));
    spec.cgroups
        .iter()
        .enumerate()
        .filter_map(|(g, c)| {
            let g = g as crate::types::GroupId;
            let cfs_bandwidth = e.core.policy.cfs_bandwidth(g);
            let rt_throttling: Vec<RtThrottleResult> = throttling
                .iter()
                .filter(|t| t.group == g)
                .map(|t| RtThrottleResult {
                    cpu: t.cpu.idx(),
                    throttles: t.throttles,
                    throttled_ns: t.throttled_ns,
                })
                .collect();
            (cfs_bandwidth.is_some() || !rt_throttling.is_empty()).then(|| GroupResult {
                path: c.path.clone(),
                cfs_bandwidth,
                rt_throttling,
            })
        })
        .collect()
}

/// Task `i`'s result, under `name` (moved out of the engine: the run no longer needs it).
fn task<S: Scheduler>(e: &Engine<S>, src: &mut Source, i: usize, name: String) -> TaskResult {
    let v = e.core.ctx.tasks[i];
    let rt = &e.rt[i];
    let m = &e.metrics.tasks[i];
    TaskResult {
        name,
        tid: TaskId(i as u32).pid(),
        policy: v.attrs.policy.as_str(),
        priority: if v.attrs.policy.is_rt() {
            v.attrs.rt_priority
        } else {
            v.attrs.nice
        },
        nice: v.attrs.nice,
        cpu_ns: v.sum_exec_ns,
        wait_ns: rt.wait_ns,
        sleep_ns: rt.sleep_ns,
        switches_voluntary: rt.voluntary,
        switches_involuntary: rt.involuntary,
        migrations: e.core.ctx.counters[i].migrations,
        activations: m.activations,
        deadline_misses: m.deadline_misses,
        dl_throttles: e.core.policy.dl_throttles(TaskId(i as u32)),
        wakeup_latency_ns: src.task(e, i, Series::Latency),
        response_ns: src.task(e, i, Series::Response),
        kernel_thread: e.is_kernel_thread(TaskId(i as u32)),
        io: e.blk.task_stats(TaskId(i as u32)).map(|s| {
            Box::new(TaskIoResult {
                requests: s.requests,
                bytes_read: s.bytes_read,
                bytes_written: s.bytes_written,
                latency_ns: Summary::of_histogram(&s.latency),
            })
        }),
    }
}

fn summary<S: Scheduler>(e: &Engine<S>, src: &mut Source, spec: &Spec) -> RunSummary {
    let all_exited = e.live_tasks == 0 && !e.rt.is_empty();
    let makespan = if all_exited { e.last_exit } else { None };
    let marks = spec
        .resources
        .marks
        .iter()
        .zip(e.metrics.marks.iter())
        .filter_map(|(name, t)| t.map(|t| (name.clone(), t)))
        .collect();
    // A kernel thread asleep is idle, not stuck.
    let blocked_at_end = (0..e.rt.len())
        .filter(|&t| matches!(e.rt[t].state, TState::Blocked(_)))
        .filter(|&t| !e.is_kernel_thread(TaskId(t as u32)))
        .count();
    RunSummary {
        makespan_ns: makespan,
        wakeup_latency_ns: src.pooled(e, Series::Latency, |_| true),
        headline: headline(e, src, spec, makespan),
        marks,
        blocked_at_end,
        totals: Totals::default(),
        io: io_summary(e, makespan),
    }
}

/// fio's view of the spec's tasks' block I/O over the workload's time: until its last
/// task exited, or the whole run when it does not end.
fn io_summary<S: Scheduler>(e: &Engine<S>, makespan: Option<u64>) -> Option<IoSummary> {
    let mut clat = Histogram::new();
    let (mut reads, mut writes, mut rbytes, mut wbytes) = (0, 0, 0, 0);
    let mut any = false;
    for t in (0..e.rt.len() as u32).map(TaskId) {
        let Some(s) = e.blk.task_stats(t).filter(|_| !e.is_kernel_thread(t)) else {
            continue;
        };
        any = true;
        reads += s.reads;
        writes += s.requests - s.reads;
        rbytes += s.bytes_read;
        wbytes += s.bytes_written;
        clat.merge(&s.latency);
    }
    let ns = makespan.unwrap_or(e.core.ctx.now);
    any.then(|| IoSummary {
        read: IoDirSummary::over(reads, rbytes, ns),
        write: IoDirSummary::over(writes, wbytes, ns),
        clat_ns: Summary::of_histogram(&clat),
    })
}

fn headline<S: Scheduler>(
    e: &Engine<S>,
    src: &mut Source,
    spec: &Spec,
    makespan: Option<u64>,
) -> Option<HeadlineOut> {
    match &spec.headline {
        Headline::None => None,
        Headline::ElapsedSinceMark { mark, name } => {
            let value = match (
                e.metrics.marks.get(*mark as usize).copied().flatten(),
                makespan,
            ) {
                (Some(m), Some(end)) => Some((end - m) as f64 / 1e9),
                _ => None,
            };
            Some(HeadlineOut {
                name: name.clone(),
                value,
                unit: "s",
                stats_ns: None,
            })
        }
        Headline::MarkRate { mark, name } => Some(rate_headline(e, *mark as usize, name)),
        Headline::WakeupLatency { task_prefix, name } => {
            Some(latency_headline(e, src, task_prefix, name, Series::Latency))
        }
        Headline::TimerLatency { task_prefix, name } => Some(latency_headline(
            e,
            src,
            task_prefix,
            name,
            Series::TimerLatency,
        )),
    }
}

/// Hits of mark `label` per second of simulated time (the run's end: its duration, or
/// the last exit), with the statistics of the gaps from each hitting task's previous mark.
fn rate_headline<S: Scheduler>(e: &Engine<S>, label: usize, name: &str) -> HeadlineOut {
    let hits = e.metrics.mark_hits[label];
    let span_ns = e.core.ctx.now;
    let gaps = &e.metrics.mark_gaps[label];
    HeadlineOut {
        name: name.to_string(),
        value: (span_ns > 0).then(|| hits as f64 * 1e9 / span_ns as f64),
        unit: "1/s",
        stats_ns: (gaps.count() > 0).then(|| Summary::of_histogram(gaps)),
    }
}

/// The pooled latency of every task whose name starts with `prefix`; value = mean in µs.
fn latency_headline<S: Scheduler>(
    e: &Engine<S>,
    src: &mut Source,
    prefix: &str,
    name: &str,
    series: Series,
) -> HeadlineOut {
    let stats = src.pooled(e, series, |t| e.rt[t].name.starts_with(prefix));
    HeadlineOut {
        name: name.to_string(),
        value: stats.all.mean().map(|m| m / 1e3),
        unit: "us",
        stats_ns: Some(stats),
    }
}

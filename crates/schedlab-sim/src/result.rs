//! The typed `schedlab.result/1` object (`schedlab_core::result`, docs/results.md) built
//! from a finished engine.

use schedlab_core::result::{
    CpuResult, DeviceResult, EngineKind, GroupResult, IoSummary, KernelInfo, RtThrottleResult,
    RunInfo, RunResult, RunSummary, SampleInfo, TaskIoCounts, TaskIoResult, TaskResult, Totals,
    SCHEMA,
};
use schedlab_core::series::{self, Series, SeriesStats};
use schedlab_core::stats::Summary;
use schedlab_spec::model::Spec;

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

/// The result of a finished run. The pooled statistics are taken first; then each task's
/// histograms are dropped as soon as its own statistics are (the result's per-task objects
/// replace them instead of adding to them at the run's peak of memory).
pub(crate) fn build<S: Scheduler>(e: &mut Engine<S>, spec: &Spec, meta: RunMeta<'_>) -> RunResult {
    let mut src = SeriesStats::of(&e.metrics, e.rt.len());
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
            percentiles: if src.is_exact() { "exact" } else { "histogram" },
        },
        notes: meta.notes,
        stopped: e.stopped.clone(),
        host: None,
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
fn task<S: Scheduler>(e: &Engine<S>, src: &mut SeriesStats, i: usize, name: String) -> TaskResult {
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
        sys_ns: rt.sys_ns,
        irq_ns: rt.irq_ns,
        wait_ns: rt.wait_ns,
        sleep_ns: rt.sleep_ns,
        switches_voluntary: rt.voluntary,
        switches_involuntary: rt.involuntary,
        migrations: e.core.ctx.counters[i].migrations,
        activations: m.activations,
        deadline_misses: m.deadline_misses,
        dl_throttles: e.core.policy.dl_throttles(TaskId(i as u32)),
        wakeup_latency_ns: src.task(&e.metrics, i, Series::Latency),
        response_ns: src.task(&e.metrics, i, Series::Response),
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

fn summary<S: Scheduler>(e: &Engine<S>, src: &mut SeriesStats, spec: &Spec) -> RunSummary {
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
        wakeup_latency_ns: src.pooled(&e.metrics, Series::Latency, |_| true),
        headline: series::headline(
            &spec.headline,
            &e.metrics,
            src,
            rate_span(e, makespan),
            makespan,
            |t| e.rt[t].name.as_str(),
        ),
        marks,
        blocked_at_end,
        totals: Totals::default(),
        io: io_summary(e, makespan),
    }
}

/// fio's view of the spec's tasks' block I/O over the workload's time: until its last
/// task exited, or the whole run when it does not end.
fn io_summary<S: Scheduler>(e: &Engine<S>, makespan: Option<u64>) -> Option<IoSummary> {
    let tasks = (0..e.rt.len() as u32)
        .map(TaskId)
        .filter(|&t| !e.is_kernel_thread(t))
        .filter_map(|t| e.blk.task_stats(t))
        .map(|s| TaskIoCounts {
            reads: s.reads,
            writes: s.requests - s.reads,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            latency: &s.latency,
        });
    IoSummary::pooled(tasks, makespan.unwrap_or(e.core.ctx.now))
}

/// The time a rate headline is taken over: the run's duration, or, for a run without one
/// whose every task exited, the last exit (such a run can still pop an event after it, a
/// tick, which is not the workload's time).
fn rate_span<S: Scheduler>(e: &Engine<S>, makespan: Option<u64>) -> u64 {
    match (e.cfg.end, makespan) {
        (None, Some(last_exit)) => last_exit,
        _ => e.core.ctx.now,
    }
}

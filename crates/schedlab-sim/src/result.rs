//! The `schedlab.result/1` object (docs/results.md) built from a finished engine.

use schedlab_spec::model::{Headline, Spec};
use serde_json::{json, Map, Value};

use crate::engine::Engine;
use crate::sched::Scheduler;
use crate::stats::stats_json;

/// Metadata of a run that the engine does not know itself.
pub(crate) struct RunMeta<'a> {
    pub scheduler: &'a str,
    pub params: &'a [(String, String)],
    pub seed: u64,
    pub spec_sha256: &'a str,
    pub wall_s: f64,
}

pub(crate) fn build<S: Scheduler>(e: &mut Engine<S>, spec: &Spec, meta: &RunMeta<'_>) -> Value {
    let params: Map<String, Value> = meta
        .params
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let run = json!({
        "engine": "sim",
        "scheduler": meta.scheduler,
        "params": params,
        "seed": meta.seed,
        "spec_sha256": meta.spec_sha256,
        "sim_ns": e.core.ctx.now,
        "wall_s": meta.wall_s,
        "events": e.events,
        "cpus": e.core.ctx.nr_cpus(),
        "hz": e.core.ctx.hz(),
        "decisions": e.core.decisions,
        "work_units": e.core.ctx.work_units,
        "version": env!("CARGO_PKG_VERSION"),
    });
    let tasks: Vec<Value> = (0..e.rt.len()).map(|i| task_json(e, i)).collect();
    let cpus: Vec<Value> = e
        .core
        .ctx
        .cpus
        .iter()
        .enumerate()
        .map(|(c, cs)| {
            json!({"cpu": c, "busy_ns": cs.busy_ns, "idle_ns": cs.idle_ns, "overhead_ns": cs.overhead_ns})
        })
        .collect();
    json!({
        "schema": "schedlab.result/1",
        "run": run,
        "tasks": tasks,
        "cpus": cpus,
        "summary": summary(e, spec),
    })
}

fn task_json<S: Scheduler>(e: &mut Engine<S>, i: usize) -> Value {
    let v = e.core.ctx.tasks[i];
    let rt = &e.rt[i];
    let priority = if v.attrs.policy.is_rt() {
        v.attrs.rt_priority
    } else {
        v.attrs.nice
    };
    let m = &mut e.metrics.tasks[i];
    json!({
        "name": rt.name,
        "tid": crate::types::TaskId(i as u32).pid(),
        "policy": v.attrs.policy.as_str(),
        "priority": priority,
        "nice": v.attrs.nice,
        "cpu_ns": v.sum_exec_ns,
        "wait_ns": rt.wait_ns,
        "sleep_ns": rt.sleep_ns,
        "switches_voluntary": rt.voluntary,
        "switches_involuntary": rt.involuntary,
        "migrations": e.core.ctx.counters[i].migrations,
        "activations": m.activations,
        "deadline_misses": m.deadline_misses,
        "wakeup_latency_ns": stats_json(&mut m.latency),
        "response_ns": stats_json(&mut m.response),
    })
}

fn summary<S: Scheduler>(e: &mut Engine<S>, spec: &Spec) -> Value {
    let all_exited = e.live_tasks == 0 && !e.rt.is_empty();
    let makespan = if all_exited { e.last_exit } else { None };
    let marks: Map<String, Value> = spec
        .resources
        .marks
        .iter()
        .zip(e.metrics.marks.iter())
        .filter_map(|(name, t)| t.map(|t| (name.clone(), json!(t))))
        .collect();
    let blocked =
        e.rt.iter()
            .filter(|r| matches!(r.state, crate::engine::TState::Blocked(_)))
            .count();
    let headline = headline(e, spec, makespan);
    let mut all: Vec<u64> = e
        .metrics
        .tasks
        .iter()
        .flat_map(|m| m.latency.iter().copied())
        .collect();
    json!({
        "makespan_ns": makespan,
        "wakeup_latency_ns": stats_json(&mut all),
        "headline": headline,
        "marks": marks,
        "blocked_at_end": blocked,
    })
}

fn headline<S: Scheduler>(e: &mut Engine<S>, spec: &Spec, makespan: Option<u64>) -> Value {
    match &spec.headline {
        Headline::None => Value::Null,
        Headline::ElapsedSinceMark { mark, name } => {
            let value = match (
                e.metrics.marks.get(*mark as usize).copied().flatten(),
                makespan,
            ) {
                (Some(m), Some(end)) => json!((end - m) as f64 / 1e9),
                _ => Value::Null,
            };
            json!({"name": name, "value": value, "unit": "s"})
        }
        Headline::WakeupLatency { task_prefix, name } => {
            latency_headline(e, task_prefix, name, |m| &m.latency)
        }
        Headline::TimerLatency { task_prefix, name } => {
            latency_headline(e, task_prefix, name, |m| &m.timer_latency)
        }
    }
}

/// The pooled latency of every task whose name starts with `prefix`; value = mean in µs.
fn latency_headline<S: Scheduler>(
    e: &mut Engine<S>,
    prefix: &str,
    name: &str,
    pick: fn(&crate::metrics::TaskMetrics) -> &Vec<u64>,
) -> Value {
    let mut pooled: Vec<u64> = Vec::new();
    for (i, rt) in e.rt.iter().enumerate() {
        if rt.name.starts_with(prefix) {
            pooled.extend_from_slice(pick(&e.metrics.tasks[i]));
        }
    }
    let stats = stats_json(&mut pooled);
    let value = stats["mean"].as_f64().map(|m| m / 1e3);
    json!({"name": name, "value": value, "unit": "us", "stats_ns": stats})
}

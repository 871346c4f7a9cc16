//! Schedulability analysis of a spec's periodic tasks, beside the simulator's worst cases
//! (`schedlab analyze`).
//!
//! - `model.rs`: the periodic task model read from a spec (C, T, D, priority, CPUs, critical
//!   sections), and the tasks it cannot describe, with the reason;
//! - `fixed_priority.rs`: exact response-time analysis with blocking, Liu & Layland's and the
//!   hyperbolic utilisation bounds (for `fp`);
//! - `processor_demand.rs`: the EDF test per CPU (for `edf`, partitioned);
//! - this file: [`analyze_text`] runs both analyses, simulates the spec under `fp` and under
//!   `edf` (partitioned), puts each task's simulated worst job response beside its analytic
//!   bound, and flags every task whose simulated worst case exceeds a bound — one of the two
//!   is wrong, or the run charged costs the analysis leaves out (its overhead is reported).
//!   A job's simulated response runs from its timer release to the end of the task's last
//!   activation before its next release: the results' `response_ns.max` when no job blocks
//!   on a mutex, and the whole job when one does (the results end an activation where the
//!   task blocks and open another at its hand-off wake-up).
//!
//! The analysis assumes what its sources assume: no scheduling costs, exact timers, jobs
//! released at their timer's expiry. A simulated run with costs (context switches, the
//! kernel's own work, timer latency) may exceed a bound for that reason alone; the report
//! gives each run's total overhead so that a reader can tell.

pub mod fixed_priority;
pub mod model;
pub mod processor_demand;

use schedlab_sim::{simulate_text, SampleOutput, Samples, SimConfig};
use schedlab_spec::{Spec, SpecError};
use serde_json::{json, Value};

use fixed_priority::FpAnalysis;
use model::TaskModel;
use processor_demand::EdfCpu;

/// The version tag of [`analyze_text`]'s JSON.
pub const SCHEMA: &str = "schedlab.analysis/1";

/// The longest a run of a spec that never ends by itself is simulated for (ns).
pub const MAX_SIMULATED_NS: u64 = 100_000_000_000;

/// How long to simulate `spec`: as it says when it has a duration or ends by itself; else
/// two hyperperiods of its modelled tasks past their latest start (the synchronous release
/// of `timer`-first tasks happens at each hyperperiod), at most [`MAX_SIMULATED_NS`].
pub fn simulated_duration(spec: &Spec, model: &TaskModel) -> Option<u64> {
    if spec.duration_ns.is_some() {
        return None;
    }
    let forever = spec
        .tasks
        .iter()
        .any(|t| t.loop_count < 0 || t.phases.iter().any(|p| p.loop_count < 0));
    if !forever {
        return None;
    }
    let periods: Vec<u64> = model.tasks.iter().map(|t| t.t_ns).collect();
    let hyper = processor_demand::hyperperiod(&periods).unwrap_or(u128::MAX);
    let delay = spec.tasks.iter().map(|t| t.delay_ns).max().unwrap_or(0) as u128;
    let want = hyper.saturating_mul(2).saturating_add(delay);
    Some(want.min(MAX_SIMULATED_NS as u128).max(1_000_000) as u64)
}

/// One simulation of the spec: each task's worst response time, or why it did not run.
struct Simulated {
    scheduler: &'static str,
    params: Vec<(String, String)>,
    outcome: Result<(Value, Samples), String>,
}

/// The samples' activation kind of a timer release (`schedlab_core::metrics::ActKind`).
const TIMER_RELEASE: u8 = schedlab_core::metrics::ActKind::Timer as u8;

/// Task `tid`'s worst job response in `s` (see the module docs), if a job ended.
pub fn worst_job_response(s: &Samples, tid: u32) -> Option<u64> {
    let mut worst = None;
    let mut job: Option<(u64, Option<u64>)> = None; // (release, end so far)
    let mut close = |job: Option<(u64, Option<u64>)>| {
        if let Some((release, Some(end))) = job {
            worst = Some(worst.map_or(end - release, |w: u64| w.max(end - release)));
        }
    };
    for i in (0..s.tid.len()).filter(|&i| s.tid[i] == tid) {
        if s.kind[i] == TIMER_RELEASE {
            close(job.take());
            job = Some((s.release_ns[i], None));
        }
        if let Some((_, end)) = &mut job {
            *end = u64::try_from(s.end_ns[i]).ok();
        }
    }
    close(job);
    worst
}

impl Simulated {
    fn run(text: &str, scheduler: &'static str, mode: Option<&str>, dur: Option<u64>) -> Self {
        let params: Vec<(String, String)> = mode
            .map(|m| vec![("mode".to_string(), m.to_string())])
            .unwrap_or_default();
        let cfg = SimConfig {
            scheduler: Some(scheduler.into()),
            params: params.clone(),
            duration_ns: dur,
            samples: SampleOutput::Memory,
            ..SimConfig::default()
        };
        let outcome = simulate_text(text, &cfg)
            .map(|out| (out.json(), out.samples))
            .map_err(|e| e.to_string());
        Simulated {
            scheduler,
            params,
            outcome,
        }
    }

    /// `name`'s worst simulated job response (ns), if a job of it ended.
    fn worst(&self, name: &str) -> Option<u64> {
        let (r, samples) = self.outcome.as_ref().ok()?;
        let t = r["tasks"].as_array()?.iter().find(|t| t["name"] == name)?;
        worst_job_response(samples, u32::try_from(t["tid"].as_u64()?).ok()?)
    }

    fn json(&self) -> Value {
        match &self.outcome {
            Ok((r, _)) => {
                let overhead: u64 = r["cpus"]
                    .as_array()
                    .map(|cs| cs.iter().filter_map(|c| c["overhead_ns"].as_u64()).sum())
                    .unwrap_or(0);
                json!({
                    "scheduler": self.scheduler,
                    "params": self.params.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                    "ran": true,
                    "error": null,
                    "sim_ns": r["run"]["sim_ns"],
                    "overhead_ns": overhead,
                    "deadline_misses": r["summary"]["totals"]["deadline_misses"],
                })
            }
            Err(e) => json!({
                "scheduler": self.scheduler,
                "params": self.params.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "ran": false,
                "error": e,
            }),
        }
    }
}

fn fp_json(fp: &FpAnalysis, model: &TaskModel, sim: &Simulated, flags: &mut Vec<Value>) -> Value {
    let tasks: Vec<Value> = fp
        .tasks
        .iter()
        .map(|t| {
            let worst = sim.worst(&t.name);
            let d = model
                .tasks
                .iter()
                .find(|x| x.name == t.name)
                .map(|x| x.d_ns);
            let exceeds = matches!((worst, t.response_ns), (Some(w), Some(r)) if w > r);
            if exceeds {
                flags.push(json!({
                    "analysis": "fp-rta",
                    "task": t.name,
                    "bound_ns": t.response_ns,
                    "simulated_ns": worst,
                    "message": format!(
                        "task {}: simulated worst response {} ns under fp exceeds the \
                         response-time bound {} ns",
                        t.name, worst.unwrap_or(0), t.response_ns.unwrap_or(0)
                    ),
                }));
            }
            // A CPU whose utilisation bound passes promises every deadline.
            let promised = t.cpu.and_then(|c| {
                fp.cpus.iter().find(|x| x.cpu == c).filter(|x| {
                    x.liu_layland_passes == Some(true) || x.hyperbolic_passes == Some(true)
                })
            });
            if let (Some(w), Some(d), Some(_)) = (worst, d, promised) {
                if w > d {
                    flags.push(json!({
                        "analysis": "fp-utilisation-bound",
                        "task": t.name,
                        "bound_ns": d,
                        "simulated_ns": w,
                        "message": format!(
                            "task {}: a utilisation bound passes on its CPU, but its \
                             simulated worst response {w} ns under fp exceeds its deadline \
                             {d} ns",
                            t.name
                        ),
                    }));
                }
            }
            json!({
                "name": t.name,
                "cpu": t.cpu,
                "blocking_ns": t.blocking_ns,
                "response_ns": t.response_ns,
                "schedulable": t.schedulable,
                "exact": t.exact,
                "note": t.note,
                "simulated_max_ns": worst,
                "exceeds": exceeds,
            })
        })
        .collect();
    let cpus: Vec<Value> = fp
        .cpus
        .iter()
        .map(|c| {
            json!({
                "cpu": c.cpu,
                "tasks": c.tasks,
                "utilisation": c.utilisation,
                "not_applicable": c.not_applicable,
                "liu_layland": {"bound": c.liu_layland_bound, "passes": c.liu_layland_passes},
                "hyperbolic": {"product": c.hyperbolic_product, "passes": c.hyperbolic_passes},
            })
        })
        .collect();
    json!({"simulation": sim.json(), "tasks": tasks, "cpus": cpus})
}

fn edf_json(edf: &[EdfCpu], model: &TaskModel, sim: &Simulated, flags: &mut Vec<Value>) -> Value {
    let cpus: Vec<Value> = edf
        .iter()
        .map(|c| {
            json!({
                "cpu": c.cpu,
                "tasks": c.tasks,
                "utilisation": c.utilisation,
                "test": c.test,
                "horizon_ns": c.horizon_ns,
                "points": c.points,
                "schedulable": c.schedulable,
                "first_failure_ns": c.first_failure_ns,
                "note": c.note,
            })
        })
        .collect();
    let tasks: Vec<Value> = model
        .tasks
        .iter()
        .map(|t| {
            let cpu = fixed_priority::cpu_of(model, t);
            let verdict = cpu.and_then(|c| edf.iter().find(|x| x.cpu == c));
            let bound = verdict
                .filter(|v| v.schedulable == Some(true))
                .map(|_| t.d_ns);
            let worst = sim.worst(&t.name);
            let exceeds = matches!((worst, bound), (Some(w), Some(b)) if w > b);
            if exceeds {
                flags.push(json!({
                    "analysis": "edf-demand",
                    "task": t.name,
                    "bound_ns": bound,
                    "simulated_ns": worst,
                    "message": format!(
                        "task {}: its CPU passes the EDF test, but its simulated worst \
                         response {} ns under edf exceeds its deadline {} ns",
                        t.name, worst.unwrap_or(0), t.d_ns
                    ),
                }));
            }
            json!({
                "name": t.name,
                "cpu": cpu,
                "bound_ns": bound,
                "simulated_max_ns": worst,
                "exceeds": exceeds,
            })
        })
        .collect();
    json!({"simulation": sim.json(), "tasks": tasks, "cpus": cpus})
}

fn model_json(model: &TaskModel) -> Value {
    let tasks: Vec<Value> = model
        .tasks
        .iter()
        .map(|t| {
            let sections: Vec<Value> = t
                .sections
                .iter()
                .map(|&(m, ns)| json!({"mutex": model.mutex_names[m as usize], "ns": ns}))
                .collect();
            json!({
                "name": t.name,
                "path": t.path,
                "policy": t.policy.as_str(),
                "prio": t.prio,
                "cpus": t.cpus,
                "c_ns": t.c_ns,
                "t_ns": t.t_ns,
                "d_ns": t.d_ns,
                "utilisation": t.utilisation(),
                "critical_sections": sections,
            })
        })
        .collect();
    let unmodelled: Vec<Value> = model
        .unmodelled
        .iter()
        .map(|u| json!({"name": u.name, "path": u.path, "reason": u.reason}))
        .collect();
    json!({"tasks": tasks, "unmodelled": unmodelled})
}

/// Analyse the spec `text` and compare with its simulations (see the module docs). The
/// JSON: `schema`, `cpus`, `model` (`tasks` with C, T, D, …; `unmodelled` with the
/// reason), `fp` and `edf` (per task and per CPU, each with its `simulation`), `flags`
/// (every case of a simulated worst case above an analytic bound) and `simulated_ns_cap`
/// (the duration given to runs of a spec that never ends by itself, if any). A spec that
/// does not parse is the error, with its JSON path.
pub fn analyze_text(text: &str) -> Result<Value, SpecError> {
    let spec = schedlab_spec::parse_spec(text)?;
    let model = TaskModel::of(&spec);
    let cap = simulated_duration(&spec, &model);
    let fp = fixed_priority::analyse(&model);
    let edf = processor_demand::analyse(&model);
    let fp_sim = Simulated::run(text, "fp", None, cap);
    let edf_sim = Simulated::run(text, "edf", Some("partitioned"), cap);
    let mut flags = Vec::new();
    let fp = fp_json(&fp, &model, &fp_sim, &mut flags);
    let edf = edf_json(&edf, &model, &edf_sim, &mut flags);
    Ok(json!({
        "schema": SCHEMA,
        "cpus": model.cpus,
        "simulated_ns_cap": cap,
        "model": model_json(&model),
        "fp": fp,
        "edf": edf,
        "flags": flags,
    }))
}

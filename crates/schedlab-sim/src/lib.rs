//! schedlab-sim: a deterministic discrete-event model of an SMP machine running a
//! pluggable CPU scheduler. No OS calls: the same spec and seed give byte-identical
//! results and traces.
//!
//! Codemap: `types` (ids, masks, attributes), `sched` (the policy trait), `ctx` (engine
//! state visible to policies), `event` (the event queue's keys), `engine` (the run loop,
//! task programs, sync objects), `program` (compiled task programs), `sync` (mutexes,
//! condvars, barriers, channels), `metrics`/`stats`/`result` (what a run reports), `check`
//! (invariants), `trace` (ftrace text writer and parser), `cpu/<policy>.rs` (one policy per
//! file) with the registry in `cpu/mod.rs`.

mod check;
pub mod cpu;
pub mod ctx;
mod engine;
pub(crate) mod event;
pub mod instruments;
pub mod metrics;
mod program;
mod result;
pub mod sched;
pub mod stats;
mod sync;
pub mod timer;
pub mod topology;
pub mod trace;
pub mod types;

use std::path::PathBuf;
use std::time::Instant;

use schedlab_spec::{Spec, SpecError};
use sha2::{Digest, Sha256};

pub use cpu::{schedulers, SchedulerEntry};
pub use ctx::Ctx;
pub use instruments::{
    nicksched_dprio_timeslices, sched_cost, sched_cost_sweep, timeslice_table, CostClass,
    CostConfig, CostPoint, DprioSlices,
};
pub use metrics::Samples;
pub use sched::Scheduler;

/// The default scheduler when neither the spec nor the caller names one.
pub const DEFAULT_SCHEDULER: &str = "linux-cfs";
/// The default seed.
pub const DEFAULT_SEED: u64 = 1;

/// How to run a spec; `None` fields fall back to the spec, then to the defaults.
#[derive(Clone, Debug, Default)]
pub struct SimConfig {
    pub scheduler: Option<String>,
    pub params: Vec<(String, String)>,
    pub seed: Option<u64>,
    pub cpus: Option<u32>,
    pub hz: Option<u32>,
    pub duration_ns: Option<u64>,
    pub trace: Option<PathBuf>,
    /// Check the engine invariants after every event.
    pub check: bool,
    /// Keep per-activation samples (for DataFrames / Parquet).
    pub samples: bool,
    /// sha256 of the spec text (filled by `simulate_text`).
    pub spec_sha256: String,
    /// The machine's topology, for tests until specs describe one; its CPU count must be
    /// the machine's.
    #[doc(hidden)]
    pub topology: Option<topology::Topology>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct SimOutput {
    /// The `schedlab.result/1` object (docs/results.md).
    pub result: serde_json::Value,
    pub samples: Samples,
}

/// A run that could not be done. `bad_input` marks the caller's mistakes (unknown
/// scheduler or parameter, a workload that never ends) as opposed to engine failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub message: String,
    pub bad_input: bool,
}

impl SimError {
    fn input(message: impl Into<String>) -> SimError {
        SimError {
            message: message.into(),
            bad_input: true,
        }
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SimError {}

/// Either kind of failure of [`simulate_text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    Spec(SpecError),
    Sim(SimError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spec(e) => write!(f, "{e}"),
            RunError::Sim(e) => write!(f, "{e}"),
        }
    }
}

/// sha256 of a text, hex.
pub fn sha256_hex(text: &str) -> String {
    let d = Sha256::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parse, validate and simulate a spec given as JSON text.
pub fn simulate_text(text: &str, cfg: &SimConfig) -> Result<SimOutput, RunError> {
    let spec = schedlab_spec::parse_spec(text).map_err(RunError::Spec)?;
    let mut cfg = cfg.clone();
    cfg.spec_sha256 = sha256_hex(text);
    simulate(&spec, &cfg).map_err(RunError::Sim)
}

/// Simulate a validated spec.
pub fn simulate(spec: &Spec, cfg: &SimConfig) -> Result<SimOutput, SimError> {
    let name = cfg
        .scheduler
        .clone()
        .or_else(|| spec.scheduler.name.clone())
        .unwrap_or_else(|| DEFAULT_SCHEDULER.to_string());
    let (cpus, hz) = machine_of(spec, cfg)?;
    let mut params = spec.scheduler.params.clone();
    params.extend(cfg.params.iter().cloned());
    let run = Run {
        spec,
        cfg,
        name: &name,
        cpus,
        hz,
        params: &params,
    };
    cpu::construct(&name, cpus, run).map_err(SimError::input)?
}

/// Simulate a validated spec under a policy given as a value rather than by name: a policy
/// written outside this crate, or one wrapped to observe its hooks. `cfg.scheduler` is
/// ignored; the result names the policy by `policy.info().name`.
pub fn simulate_policy<S: Scheduler>(
    spec: &Spec,
    cfg: &SimConfig,
    policy: S,
) -> Result<SimOutput, SimError> {
    let (cpus, hz) = machine_of(spec, cfg)?;
    let mut params = spec.scheduler.params.clone();
    params.extend(cfg.params.iter().cloned());
    let name = policy.info().name;
    let run = Run {
        spec,
        cfg,
        name,
        cpus,
        hz,
        params: &params,
    };
    cpu::PolicyVisitor::visit(run, policy)
}

/// The machine size and tick rate of a run (the caller's overrides, else the spec's).
fn machine_of(spec: &Spec, cfg: &SimConfig) -> Result<(usize, u32), SimError> {
    let cpus = cfg.cpus.unwrap_or(spec.machine.cpus);
    if cpus == 0 || cpus as usize > types::MAX_CPUS {
        return Err(SimError::input(format!(
            "cpus: expected 1..={}, got {cpus}",
            types::MAX_CPUS
        )));
    }
    let hz = cfg.hz.unwrap_or(spec.machine.hz);
    check_hz(hz)?;
    Ok((cpus as usize, hz))
}

/// The tick rates schedlab models (CONFIG_HZ choices).
pub(crate) fn check_hz(hz: u32) -> Result<(), SimError> {
    if [100, 250, 300, 1000].contains(&hz) {
        Ok(())
    } else {
        Err(SimError::input(format!(
            "hz: expected 100, 250, 300 or 1000, got {hz}"
        )))
    }
}

struct Run<'a> {
    spec: &'a Spec,
    cfg: &'a SimConfig,
    name: &'a str,
    cpus: usize,
    hz: u32,
    params: &'a [(String, String)],
}

impl cpu::PolicyVisitor for Run<'_> {
    type Out = Result<SimOutput, SimError>;

    fn visit<S: Scheduler>(self, mut policy: S) -> Self::Out {
        for (k, v) in self.params {
            policy
                .set_param(k, v)
                .map_err(|e| SimError::input(format!("--param {k}={v}: {e}")))?;
        }
        for t in &self.spec.tasks {
            let phase_attrs = t.phases.iter().filter_map(|p| p.attr.as_ref());
            for a in std::iter::once(&t.attr).chain(phase_attrs) {
                policy
                    .accepts(&engine::attrs_of(a))
                    .map_err(|e| SimError::input(format!("task {}: {e}", t.name)))?;
            }
            if let Some(c) = t
                .cpus
                .as_ref()
                .and_then(|c| c.iter().find(|&&c| c as usize >= self.cpus))
            {
                return Err(SimError::input(format!(
                    "task {}: cpu {c} in its cpus is outside the machine's {} CPUs",
                    t.name, self.cpus
                )));
            }
        }
        let end = self.cfg.duration_ns.or(self.spec.duration_ns);
        if end.is_none() {
            if let Some(t) = self.spec.tasks.iter().find(|t| {
                t.instances > 0 && (t.loop_count < 0 || t.phases.iter().any(|p| p.loop_count < 0))
            }) {
                return Err(SimError::input(format!(
                    "task {} loops forever and the spec has no duration: set global.duration or pass --duration",
                    t.name
                )));
            }
        }
        let tracer = match &self.cfg.trace {
            Some(p) => trace::Tracer::to_file(p)
                .map_err(|e| SimError::input(format!("--trace {}: {e}", p.display())))?,
            None => trace::Tracer::disabled(),
        };
        let seed = self.cfg.seed.or(self.spec.seed).unwrap_or(DEFAULT_SEED);
        let mut ctx = Ctx::new(self.cpus, self.hz, seed, tracer);
        if let Some(t) = self.cfg.topology {
            if t.nr_cpus() != self.cpus {
                return Err(SimError::input(format!(
                    "topology: {} CPUs, but the machine has {}",
                    t.nr_cpus(),
                    self.cpus
                )));
            }
            ctx.set_topology(t);
        }
        let rcfg = engine::RunCfg {
            end,
            context_switch_ns: self.spec.machine.context_switch_ns,
            sched_work_ps: self.spec.machine.sched_work_ps,
            fork_ns: self.spec.machine.fork_ns,
            wakeup_ns: self.spec.machine.wakeup_ns,
            check: self.cfg.check,
        };
        let wall = Instant::now();
        let mut e = engine::Engine::new(self.spec, ctx, policy, rcfg, self.cfg.samples);
        e.start(self.spec);
        e.run();
        if let Some(err) = e.error.take() {
            return Err(SimError {
                message: format!("{} (seed {seed})", err.0),
                bad_input: false,
            });
        }
        e.finish();
        if self.cfg.check {
            check::check(&e).map_err(|m| SimError {
                message: format!("invariant violated at end: {m}"),
                bad_input: false,
            })?;
        }
        e.ctx.tracer.finish().map_err(|err| SimError {
            message: format!("writing the trace: {err}"),
            bad_input: false,
        })?;
        e.metrics.flush_open();
        let meta = result::RunMeta {
            scheduler: self.name,
            params: self.params,
            seed,
            spec_sha256: &self.cfg.spec_sha256,
            wall_s: wall.elapsed().as_secs_f64(),
        };
        let result = result::build(&mut e, self.spec, &meta);
        let samples = e.metrics.samples.take().unwrap_or_default();
        Ok(SimOutput { result, samples })
    }
}

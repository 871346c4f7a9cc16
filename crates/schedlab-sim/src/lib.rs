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

pub mod budget;
mod check;
pub mod cpu;
pub mod ctx;
pub mod device;
mod engine;
pub(crate) mod event;
pub mod instruments;
pub mod io;
mod kernel;
pub mod protocol;
mod result;
pub mod sched;
mod smt;
pub mod timer;
pub mod topology;
pub mod trace;

pub use schedlab_core::{metrics, program, stats, sync, types};

use std::path::PathBuf;
use std::time::Instant;

use schedlab_spec::cost::CostKey;
use schedlab_spec::{Spec, SpecError};

pub use cpu::{schedulers, SchedulerEntry};
pub use ctx::Ctx;
pub use instruments::{
    nicksched_dprio_timeslices, sched_cost, sched_cost_sweep, timeslice_table, CostClass,
    CostConfig, CostPoint, DprioSlices,
};
pub use metrics::Samples;
pub use sched::Scheduler;
pub use schedlab_core::result::RunResult;

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
    /// What to keep of the per-activation samples.
    pub samples: SampleOutput,
    /// Bytes the run may hold; `None` is [`budget::DEFAULT_MEMORY_BUDGET`]. A run that
    /// would hold more stops with a partial result ([`RunResult`]'s `run.stopped`).
    pub memory_budget: Option<u64>,
    /// Asked every few tens of thousands of events whether to stop the run (then
    /// [`simulate`] returns an error: [`SimError::cancelled`]).
    pub cancel: Option<budget::Cancel>,
}

/// What a run keeps of its per-activation samples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SampleOutput {
    /// Only per-task histograms: memory grows with tasks, not activations; percentiles
    /// are resolved to a histogram bucket (count, min, max and mean stay exact).
    #[default]
    Summary,
    /// Every sample, returned in [`SimOutput::samples`]; statistics are exact.
    Memory,
    /// Every sample streamed to this Arrow IPC file as it ends, and histograms kept.
    File(PathBuf),
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct SimOutput {
    /// The `schedlab.result/1` object (docs/results.md).
    pub result: RunResult,
    /// The samples, with [`SampleOutput::Memory`] (empty otherwise).
    pub samples: Samples,
}

impl SimOutput {
    /// The result as a JSON value.
    pub fn json(&self) -> serde_json::Value {
        self.result.to_json()
    }
}

/// A run that could not be done. `bad_input` marks the caller's mistakes (unknown
/// scheduler or parameter, a workload that never ends) as opposed to engine failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub message: String,
    pub bad_input: bool,
}

/// The message of a run its caller stopped ([`SimConfig::cancel`]).
pub const CANCELLED: &str = "the run was stopped by its caller";

impl SimError {
    /// The run was stopped through [`SimConfig::cancel`].
    pub fn cancelled(&self) -> bool {
        !self.bad_input && self.message == CANCELLED
    }

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

/// Parse, validate and simulate a spec given as JSON text. The result's `spec_sha256` is
/// [`schedlab_spec::spec_sha256`] of exactly these bytes, the spec's one identity.
pub fn simulate_text(text: &str, cfg: &SimConfig) -> Result<SimOutput, RunError> {
    let started = Instant::now();
    let spec = schedlab_spec::parse_spec(text).map_err(RunError::Spec)?;
    let sha256 = schedlab_spec::spec_sha256(text);
    simulate_named(&spec, cfg, Some(sha256), started).map_err(RunError::Sim)
}

/// Simulate a validated spec built in code (its result has no `spec_sha256`: there are
/// no bytes to hash; run text through [`simulate_text`] to have one).
pub fn simulate(spec: &Spec, cfg: &SimConfig) -> Result<SimOutput, SimError> {
    simulate_named(spec, cfg, None, Instant::now())
}

/// The scheduler a run uses: the caller's, else the spec's, else [`DEFAULT_SCHEDULER`].
fn scheduler_of(spec: &Spec, cfg: &SimConfig) -> String {
    cfg.scheduler
        .clone()
        .or_else(|| spec.scheduler.name.clone())
        .unwrap_or_else(|| DEFAULT_SCHEDULER.to_string())
}

/// Simulate under the scheduler the caller or the spec names.
fn simulate_named(
    spec: &Spec,
    cfg: &SimConfig,
    spec_sha256: Option<String>,
    started: Instant,
) -> Result<SimOutput, SimError> {
    let name = scheduler_of(spec, cfg);
    let params = Params::of(spec, cfg, &name);
    let run = Run::new(spec, cfg, &name, &params, spec_sha256, started)?;
    construct(spec, cfg, &name, run)?
}

/// Check that a run of `spec` under `cfg` would start: every check [`simulate`] makes
/// before its first event — the scheduler's name and tunables, the machine, what the
/// engine does not simulate, the tasks' attributes and CPUs, a workload that never ends
/// without a duration — and nothing else (no file is created). `schedlab validate` calls
/// it, so that a spec it accepts is one `schedlab run` accepts.
pub fn check(spec: &Spec, cfg: &SimConfig) -> Result<(), SimError> {
    let name = scheduler_of(spec, cfg);
    let params = Params::of(spec, cfg, &name);
    let run = Run::new(spec, cfg, &name, &params, None, Instant::now())?;
    construct(spec, cfg, &name, Checked(run))?
}

/// What `schedlab validate` checks: the spec (parsed and validated), then [`check`] under
/// each scheduler of `schedulers`; when that is empty, under the scheduler the spec names,
/// else under every available policy (a spec that names none is meant for any of them).
/// The first refusal is the error; when several schedulers were checked it says which
/// refused.
pub fn validate_text(text: &str, cfg: &SimConfig, schedulers: &[String]) -> Result<(), RunError> {
    let spec = schedlab_spec::parse_spec(text).map_err(RunError::Spec)?;
    let names: Vec<Option<String>> = if !schedulers.is_empty() {
        schedulers.iter().cloned().map(Some).collect()
    } else if spec.scheduler.name.is_some() {
        vec![None]
    } else {
        cpu::NAMES.iter().map(|n| Some(n.to_string())).collect()
    };
    let mut refused: Vec<(String, SimError)> = Vec::new();
    for name in &names {
        let cfg = SimConfig {
            scheduler: name.clone(),
            ..cfg.clone()
        };
        if let Err(e) = check(&spec, &cfg) {
            refused.push((scheduler_of(&spec, &cfg), e));
        }
    }
    let Some((first, e)) = refused.first() else {
        return Ok(());
    };
    // A refusal every scheduler gives alike (a spec that never ends) is the spec's alone.
    let alike = refused.len() == names.len() && refused.iter().all(|(_, r)| r == e);
    if names.len() == 1 || alike {
        return Err(RunError::Sim(e.clone()));
    }
    let mut message = format!("under {first}: {}", e.message);
    if refused.len() > 1 {
        let others: Vec<&str> = refused[1..].iter().map(|(n, _)| n.as_str()).collect();
        message.push_str(&format!(" (also refused by {})", others.join(", ")));
    }
    Err(RunError::Sim(SimError::input(message)))
}

/// Build the policy called `name` and hand it to `v`; an unknown name is reported where
/// it was given (the spec's `scheduler.name`, or the caller's choice).
fn construct<V: cpu::PolicyVisitor>(
    spec: &Spec,
    cfg: &SimConfig,
    name: &str,
    v: V,
) -> Result<V::Out, SimError> {
    let cpus = machine_of(spec, cfg)?.0;
    cpu::construct(name, cpus, v).map_err(|e| {
        if cfg.scheduler.is_none() && spec.scheduler.name.is_some() {
            SimError::input(format!("$.schedlab.scheduler.name: {e}"))
        } else {
            SimError::input(e)
        }
    })
}

/// Simulate a validated spec under a policy given as a value rather than by name: a policy
/// written outside this crate, or one wrapped to observe its hooks. `cfg.scheduler` is
/// ignored; the result names the policy by `policy.info().name`.
pub fn simulate_policy<S: Scheduler>(
    spec: &Spec,
    cfg: &SimConfig,
    policy: S,
) -> Result<SimOutput, SimError> {
    let name = policy.info().name;
    let params = Params::of(spec, cfg, name);
    let run = Run::new(spec, cfg, name, &params, None, Instant::now())?;
    cpu::PolicyVisitor::visit(run, policy)
}

/// The tunables of a run: the spec's `scheduler.params` when the run uses the scheduler
/// the spec names (they are that scheduler's tunables), then the caller's (later ones
/// win).
struct Params {
    list: Vec<(String, String)>,
    /// The first `from_spec` of `list` come from the spec.
    from_spec: usize,
    /// The scheduler the spec's tunables are for, when this run uses another one.
    skipped_for: Option<String>,
}

impl Params {
    fn of(spec: &Spec, cfg: &SimConfig, run_scheduler: &str) -> Params {
        let own = spec.scheduler.name.as_deref() == Some(run_scheduler);
        let mut list = Vec::new();
        let mut skipped_for = None;
        if own {
            list.extend(spec.scheduler.params.iter().cloned());
        } else if !spec.scheduler.params.is_empty() {
            skipped_for = spec.scheduler.name.clone();
        }
        let from_spec = list.len();
        list.extend(cfg.params.iter().cloned());
        Params {
            list,
            from_spec,
            skipped_for,
        }
    }

    /// Where the `i`-th tunable was given, for its error message.
    fn origin(&self, i: usize, name: &str, value: &str) -> String {
        if i < self.from_spec {
            schedlab_spec::error::path_with_key("$.schedlab.scheduler.params", name)
        } else {
            format!("--param {name}={value}")
        }
    }
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

/// The metrics' sample mode for `out`, and the path of a sample file.
fn sample_mode(out: &SampleOutput) -> Result<(metrics::SampleMode, Option<String>), SimError> {
    Ok(match out {
        SampleOutput::Summary => (metrics::SampleMode::Summary, None),
        SampleOutput::Memory => (metrics::SampleMode::Memory, None),
        SampleOutput::File(p) => {
            let f = std::fs::File::create(p)
                .map_err(|e| SimError::input(format!("--samples {}: {e}", p.display())))?;
            let w = metrics::IpcSampleWriter::new(Box::new(f))
                .map_err(|e| SimError::input(format!("--samples {}: {e}", p.display())))?;
            (
                metrics::SampleMode::Stream(Box::new(w)),
                Some(p.display().to_string()),
            )
        }
    })
}

/// The JSON paths of the cgroups with a CFS quota (`cpu.cfs_quota_us` or `cpu.max` other
/// than unlimited).
fn cfs_limited_groups(spec: &Spec) -> Vec<String> {
    spec.cgroups
        .iter()
        .filter(|g| g.cpu.cfs_quota_us.is_some_and(|q| q >= 0))
        .map(|g| cgroup_path(&g.path))
        .collect()
}

/// The first cgroup setting of RT bandwidth in the spec, as a JSON path
/// (`$.schedlab.cgroups./g.cpu.rt_runtime_us`). A group whose runtime is -1
/// (`RUNTIME_INF`, e.g. the root with the global limit lifted) limits nothing, so every
/// policy honours it.
fn rt_bandwidth_setting(spec: &Spec) -> Option<String> {
    spec.cgroups.iter().find_map(|g| {
        if g.rt_runtime_us() < 0 {
            return None;
        }
        let key = if g.cpu.rt_runtime_us.is_some() {
            "cpu.rt_runtime_us"
        } else if g.cpu.rt_period_us.is_some() {
            "cpu.rt_period_us"
        } else {
            return None;
        };
        Some(schedlab_spec::error::path_with_key(
            &cgroup_path(&g.path),
            key,
        ))
    })
}

/// The JSON path of the cgroup at `path` in `schedlab.cgroups`.
fn cgroup_path(path: &str) -> String {
    schedlab_spec::error::path_with_key("$.schedlab.cgroups", path)
}

/// The machine's topology: the spec's, or a flat one of `cpus` CPUs when the caller
/// resized a flat machine. A topology cannot be resized.
fn topology_of(spec: &Spec, cpus: usize) -> Result<topology::Topology, SimError> {
    let t = spec.machine.topology;
    if t.nr_cpus() as usize == cpus {
        Ok(t)
    } else if t.is_flat() {
        Ok(topology::Topology::flat(cpus as u32))
    } else {
        Err(SimError::input(format!(
            "cpus: the spec's topology has {} CPUs; a machine of {cpus} needs its own topology",
            t.nr_cpus()
        )))
    }
}

/// Does the spec need fair group scheduling? When a cgroup sets `cpu.shares`, or fair
/// tasks can be in more than one group at once: with every fair task in one group, or a
/// single fair task, group scheduling shares the CPU exactly as flat scheduling does.
fn uses_group_scheduling(spec: &Spec) -> bool {
    use schedlab_spec::model::{Event, TaskSpec};
    if spec.cgroups.iter().any(|g| g.cpu.shares.is_some()) {
        return true;
    }
    let is_fair = |t: &TaskSpec| {
        let phases = t.phases.iter().filter_map(|p| p.attr.as_ref());
        std::iter::once(&t.attr)
            .chain(phases)
            .any(|a| a.policy.is_fair())
    };
    let fair_task: Vec<bool> = spec.tasks.iter().map(is_fair).collect();
    let fair: Vec<usize> = (0..spec.tasks.len()).filter(|&i| fair_task[i]).collect();
    let mut groups: Vec<u32> = fair
        .iter()
        .flat_map(|&i| {
            let t = &spec.tasks[i];
            std::iter::once(t.group).chain(t.phases.iter().filter_map(|p| p.group))
        })
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let forks_fair = spec
        .tasks
        .iter()
        .flat_map(|t| t.phases.iter().flat_map(|p| p.events.iter()))
        .any(|e| matches!(e, Event::Fork { task } if fair_task[*task as usize]));
    let started: u64 = fair.iter().map(|&i| spec.tasks[i].instances as u64).sum();
    groups.len() > 1 && (started > 1 || forks_fair)
}

/// Does the spec give a fair-class task a custom slice (`dl-runtime`)?
fn uses_custom_slices(spec: &Spec) -> bool {
    spec.tasks.iter().any(|t| {
        let phases = t.phases.iter().filter_map(|p| p.attr.as_ref());
        std::iter::once(&t.attr)
            .chain(phases)
            .any(|a| a.slice_ns.is_some())
    })
}

/// The features the spec uses that `policy` does not model, each as a note saying it
/// was ignored and why.
fn unmodelled_notes<S: Scheduler>(spec: &Spec, policy: &S) -> Vec<String> {
    use sched::Feature;
    let limited = cfs_limited_groups(spec);
    let used = [
        (Feature::CustomSlice, uses_custom_slices(spec)),
        (Feature::FairGroupSched, uses_group_scheduling(spec)),
        (Feature::CfsBandwidth, !limited.is_empty()),
    ];
    used.into_iter()
        .filter(|&(_, used)| used)
        .filter_map(|(f, _)| policy.models(f).err().map(|why| (f, why)))
        .map(|(f, why)| match f {
            Feature::CfsBandwidth => {
                format!("{} of {} are ignored: {why}", f.what(), limited.join(", "))
            }
            _ => format!("{} are ignored: {why}", f.what()),
        })
        .collect()
}

/// Every policy the per-policy `machine.sched_work_ps` names is a registered one.
fn check_sched_work_names(m: &schedlab_spec::model::Machine) -> Result<(), SimError> {
    match m
        .sched_work_ps_by_policy
        .iter()
        .find(|(name, _, _)| !cpu::NAMES.contains(&name.as_str()))
    {
        Some((name, _, path)) => Err(SimError::input(format!(
            "{path}: no policy is named {name:?} (policies: {})",
            cpu::NAMES.join(", ")
        ))),
        None => Ok(()),
    }
}

/// The note of a run whose policy the per-policy `machine.sched_work_ps` does not name.
fn sched_work_note(m: &schedlab_spec::model::Machine, policy: &str) -> Option<String> {
    let named = m
        .sched_work_ps_by_policy
        .iter()
        .any(|(n, _, _)| n == policy);
    (!m.sched_work_ps_by_policy.is_empty() && !named).then(|| {
        format!(
            "machine.sched_work_ps gives costs per policy and none for {policy}: its \
             scheduler work costs nothing in this run"
        )
    })
}

/// Statements the result carries about how this run was modelled.
fn notes_of(spec: &Spec, cpus: usize, cpus_overridden: bool) -> Vec<String> {
    use schedlab_spec::model::CpusSource;
    let mut notes = Vec::new();
    if spec.machine.cpus_source == CpusSource::Inferred && !cpus_overridden {
        notes.push(format!(
            "the spec names CPUs but does not size the machine: it runs on the smallest \
             machine that has them ({cpus} CPUs)"
        ));
    }
    let clamped = spec.tasks.iter().any(|t| {
        let phases = t.phases.iter().filter_map(|p| p.attr.as_ref());
        std::iter::once(&t.attr)
            .chain(phases)
            .any(|a| a.uclamp.min.is_some() || a.uclamp.max.is_some())
    }) || spec
        .cgroups
        .iter()
        .any(|g| g.cpu.uclamp_min.is_some() || g.cpu.uclamp_max.is_some());
    if clamped {
        notes.push(
            "utilization clamps (util_min/util_max, cpu.uclamp.*) are accepted and change \
             nothing here: Linux uses them to pick CPU frequencies and, on asymmetric CPUs, \
             placement, and this machine has identical CPUs at one fixed frequency"
                .into(),
        );
    }
    notes
}

/// How the result names where the machine's size came from.
fn cpus_source_name(spec: &Spec, cpus_overridden: bool) -> &'static str {
    use schedlab_spec::model::CpusSource;
    if cpus_overridden {
        return "given";
    }
    match spec.machine.cpus_source {
        CpusSource::Default => "default",
        CpusSource::Given => "given",
        CpusSource::Topology => "topology",
        CpusSource::Inferred => "inferred",
    }
}

/// The tick rates schedlab models (CONFIG_HZ choices).
/// A tick rate the machine model knows (`schedlab_spec::model::HZ_CHOICES`, which says why
/// each is there).
pub(crate) fn check_hz(hz: u32) -> Result<(), SimError> {
    use schedlab_spec::model::{HZ_CHOICES, HZ_CHOICES_TEXT};
    if HZ_CHOICES.contains(&hz) {
        Ok(())
    } else {
        Err(SimError::input(format!(
            "hz: expected {HZ_CHOICES_TEXT}, got {hz}"
        )))
    }
}

impl<'a> Run<'a> {
    /// A run of `spec` under the policy called `name`, once the machine is checked and the
    /// spec asks for nothing this engine does not simulate.
    fn new(
        spec: &'a Spec,
        cfg: &'a SimConfig,
        name: &'a str,
        params: &'a Params,
        spec_sha256: Option<String>,
        started: Instant,
    ) -> Result<Self, SimError> {
        let (cpus, hz) = machine_of(spec, cfg)?;
        let topology = topology_of(spec, cpus)?;
        for g in &spec.cgroups {
            let set = g.cpuset_cpus.iter().flatten();
            if let Some(c) = set.into_iter().find(|&&c| c as usize >= cpus) {
                return Err(SimError::input(format!(
                    "{}: cpu {c} is outside the machine's {cpus} CPUs",
                    schedlab_spec::error::path_with_key(&cgroup_path(&g.path), "cpuset.cpus")
                )));
            }
        }
        Ok(Run {
            started,
            spec_sha256,
            spec,
            cfg,
            name,
            cpus,
            hz,
            topology,
            params,
        })
    }
}

struct Run<'a> {
    /// When the caller asked for the run (`run.wall_s` covers everything after it).
    started: Instant,
    /// sha256 of the spec text run, if it came as text.
    spec_sha256: Option<String>,
    spec: &'a Spec,
    cfg: &'a SimConfig,
    name: &'a str,
    cpus: usize,
    hz: u32,
    topology: topology::Topology,
    params: &'a Params,
}

/// The JSON path of task `t`.
fn task_path(t: &schedlab_spec::model::TaskSpec) -> String {
    schedlab_spec::error::path_with_key("$.tasks", &t.name)
}

/// The JSON path of phase `p` of task `t` (the task itself when it has no `phases`: its
/// one phase bears its name).
fn phase_path(t: &schedlab_spec::model::TaskSpec, p: &schedlab_spec::model::Phase) -> String {
    let at = task_path(t);
    if t.phases.len() == 1 && p.name == t.name {
        return at;
    }
    schedlab_spec::error::path_with_key(&format!("{at}.phases"), &p.name)
}

/// Does task `t` (started at least once) loop forever? With the reason, naming the loop.
fn loops_forever(
    t: &schedlab_spec::model::TaskSpec,
) -> Option<(&schedlab_spec::model::TaskSpec, String)> {
    if t.instances == 0 {
        return None;
    }
    if t.loop_count < 0 {
        return Some((t, format!("task {} loops forever (its loop is -1)", t.name)));
    }
    let p = t.phases.iter().find(|p| p.loop_count < 0)?;
    Some((
        t,
        format!(
            "task {} loops forever (phase {} has loop -1)",
            t.name, p.name
        ),
    ))
}

/// The scheduling requests of every task, in spec order: its own attributes and CPUs at
/// its start, then those of each phase that sets attributes or CPUs (a phase keeps what
/// it does not set, as rt-app does), each affinity within the task's cgroup's CPUs.
fn admission_requests(spec: &Spec, cpus: usize) -> Vec<sched::AdmissionRequest> {
    let machine = types::CpuMask::first_n(cpus);
    let mut out = Vec::new();
    for (i, t) in spec.tasks.iter().enumerate() {
        let group = schedlab_spec::model::group_cpus(&spec.cgroups, t.group)
            .map_or(machine, |c| program::mask_of(c).and(&machine));
        let mask = |c: &Option<Vec<u32>>| c.as_ref().map(|c| program::mask_of(c).and(&group));
        let mut attrs = engine::attrs_of(&t.attr);
        let mut affinity = mask(&t.cpus).unwrap_or(group);
        let mut push = |path: String, attrs: types::SchedAttrs, affinity: types::CpuMask| {
            out.push(sched::AdmissionRequest {
                task: i,
                path,
                attrs,
                affinity,
                instances: t.instances,
            })
        };
        push(task_path(t), attrs, affinity);
        for p in &t.phases {
            if p.attr.is_none() && p.cpus.is_none() {
                continue;
            }
            if let Some(a) = &p.attr {
                attrs = engine::attrs_of(a);
            }
            if let Some(m) = mask(&p.cpus) {
                affinity = m;
            }
            push(phase_path(t, p), attrs, affinity);
        }
    }
    out
}

/// A run that is only checked ([`check`]): the policy is built and prepared, never run.
struct Checked<'a>(Run<'a>);

impl cpu::PolicyVisitor for Checked<'_> {
    type Out = Result<(), SimError>;

    fn visit<S: Scheduler>(self, mut policy: S) -> Self::Out {
        self.0.prepare(&mut policy)
    }
}

impl Run<'_> {
    /// Apply the tunables to `policy` and check the spec against it and against this run:
    /// every check of a run that needs the policy, made before anything else happens.
    fn prepare<S: Scheduler>(&self, policy: &mut S) -> Result<(), SimError> {
        for (i, (k, v)) in self.params.list.iter().enumerate() {
            policy
                .set_param(k, v)
                .map_err(|e| SimError::input(format!("{}: {e}", self.params.origin(i, k, v))))?;
        }
        for t in &self.spec.tasks {
            let at = task_path(t);
            policy
                .accepts(&engine::attrs_of(&t.attr))
                .map_err(|e| SimError::input(format!("{at}: {e}")))?;
            for p in &t.phases {
                if let Some(a) = &p.attr {
                    policy
                        .accepts(&engine::attrs_of(a))
                        .map_err(|e| SimError::input(format!("{}: {e}", phase_path(t, p))))?;
                }
            }
            if let Some(c) = t
                .cpus
                .as_ref()
                .and_then(|c| c.iter().find(|&&c| c as usize >= self.cpus))
            {
                return Err(SimError::input(format!(
                    "{at}.cpus: cpu {c} is outside the machine's {} CPUs",
                    self.cpus
                )));
            }
        }
        policy
            .admit(
                self.cpus,
                &self.spec.cgroups,
                &admission_requests(self.spec, self.cpus),
            )
            .map_err(SimError::input)?;
        self.accepts_softirq_threads(policy)?;
        check_sched_work_names(&self.spec.machine)?;
        // RT bandwidth changes what RT tasks get: a policy that would ignore it refuses it.
        if let Some(at) = rt_bandwidth_setting(self.spec) {
            if let Err(why) = policy.models(sched::Feature::RtBandwidth) {
                return Err(SimError::input(format!(
                    "{at}: {why}, so it cannot honour this setting; run the spec under \
                     linux-cfs or linux-eevdf, or remove the RT bandwidth settings"
                )));
            }
        }
        if self.end().is_none() {
            if let Some((t, why)) = self.spec.tasks.iter().find_map(loops_forever) {
                return Err(SimError::input(format!(
                    "{}: {why}, and the spec has no duration: set global.duration or pass --duration",
                    task_path(t)
                )));
            }
        }
        Ok(())
    }

    /// The policy runs the kernel's softirq threads, when ticks raise softirq work.
    fn accepts_softirq_threads<S: Scheduler>(&self, policy: &S) -> Result<(), SimError> {
        let m = &self.spec.machine;
        let model = kernel::KernelModel::new(m.kernel, 1, &m.spreads, 0);
        if !model.softirqs {
            return Ok(());
        }
        let (name, policy_of_thread, priority) = model.softirq_thread();
        let attrs = match policy_of_thread {
            types::Policy::Fifo | types::Policy::Rr => types::rt(policy_of_thread, priority),
            _ => types::fair(policy_of_thread, priority),
        };
        policy.accepts(&attrs).map_err(|e| {
            SimError::input(format!(
                "$.schedlab.machine.kernel.softirq_ns: softirq work runs in per-CPU {name} \
                 threads ({}), which this scheduler does not run: {e}",
                policy_of_thread.as_str()
            ))
        })
    }

    /// When the run stops: the caller's duration, else the spec's.
    fn end(&self) -> Option<u64> {
        self.cfg.duration_ns.or(self.spec.duration_ns)
    }
}

impl cpu::PolicyVisitor for Run<'_> {
    type Out = Result<SimOutput, SimError>;

    fn visit<S: Scheduler>(self, mut policy: S) -> Self::Out {
        self.prepare(&mut policy)?;
        let end = self.end();
        let tracer = match &self.cfg.trace {
            Some(p) => trace::Tracer::to_file(p)
                .map_err(|e| SimError::input(format!("--trace {}: {e}", p.display())))?,
            None => trace::Tracer::disabled(),
        };
        let seed = self.cfg.seed.or(self.spec.seed).unwrap_or(DEFAULT_SEED);
        let mut ctx = Ctx::new(self.cpus, self.hz, seed, tracer);
        ctx.set_groups(&self.spec.cgroups);
        ctx.set_topology(self.topology);
        let m = &self.spec.machine;
        let work = m.sched_work_for(policy.info().name);
        let rcfg = engine::RunCfg {
            end,
            costs: protocol::CoreCosts {
                context_switch_ns: m.context_switch_ns,
                switch_spread: m.spreads.get(CostKey::ContextSwitch),
                seed,
                sched_work_ps: work.unit_ps,
                sched_decision_ns: work.decision_ns,
            },
            fork_ns: m.fork_ns,
            wakeup_ns: m.wakeup_ns,
            sleep_ns: m.sleep_ns,
            exit_ns: m.exit_ns,
            spreads: m.spreads,
            seed,
            kernel: kernel::KernelModel::new(m.kernel, ctx.tick_ns(), &m.spreads, seed),
            check: self.cfg.check,
            memory_budget: self
                .cfg
                .memory_budget
                .unwrap_or(budget::DEFAULT_MEMORY_BUDGET),
            cancel: self.cfg.cancel.clone(),
        };
        let mut blk = io::BlockLayer::new(self.spec).map_err(SimError::input)?;
        let (mode, sample_path) = sample_mode(&self.cfg.samples)?;
        // Kernel threads the engine adds: the flushers, then the softirq threads.
        let with_flushers = io::with_flusher_threads(self.spec);
        if with_flushers.is_some() {
            blk.flusher_tmpl = Some(self.spec.tasks.len() as u32);
        }
        let base = with_flushers.as_ref().unwrap_or(self.spec);
        let with_threads = kernel::with_softirq_threads(base, &rcfg.kernel, self.cpus);
        let spec = with_threads.as_ref().unwrap_or(base);
        let mut e = engine::Engine::new(spec, ctx, policy, rcfg, mode, blk);
        e.start(spec);
        e.run();
        if e.cancelled {
            return Err(SimError {
                message: CANCELLED.to_string(),
                bad_input: false,
            });
        }
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
        let named = |what: &str, path: Option<String>, err: String| SimError {
            message: match path {
                Some(p) => format!("{p}: writing the {what}: {err}"),
                None => format!("writing the {what}: {err}"),
            },
            bad_input: false,
        };
        let trace_path = self.cfg.trace.as_ref().map(|p| p.display().to_string());
        e.core
            .ctx
            .tracer
            .finish()
            .map_err(|err| named("trace", trace_path, err.to_string()))?;
        e.metrics
            .finish()
            .map_err(|err| named("samples", sample_path.clone(), err.to_string()))?;
        let meta = result::RunMeta {
            scheduler: self.name,
            params: &self.params.list,
            seed,
            spec_sha256: self.spec_sha256,
            cpus_source: cpus_source_name(self.spec, self.cfg.cpus.is_some()),
            sample_path,
            notes: notes_of(self.spec, self.cpus, self.cfg.cpus.is_some())
                .into_iter()
                .chain(self.params.skipped_for.as_ref().map(|own| {
                    format!(
                        "the spec's scheduler tunables ($.schedlab.scheduler.params) are {own}'s \
                         and were not applied: this run uses {}",
                        self.name
                    )
                }))
                .chain(unmodelled_notes(self.spec, &e.core.policy))
                .chain(sched_work_note(
                    &self.spec.machine,
                    e.core.policy.info().name,
                ))
                .collect(),
        };
        let mut result = result::build(&mut e, spec, meta);
        let samples = e.metrics.take_samples();
        // Freeing a large run's state takes a while: it belongs to the run's time.
        drop(e);
        result.run.wall_s = self.started.elapsed().as_secs_f64();
        Ok(SimOutput { result, samples })
    }
}

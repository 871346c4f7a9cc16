//! The `tasks` object: task templates, their phases and the events in each phase.
//!
//! rt-app rules (`parse_task_data()` / `parse_task_phase_data()` in
//! `src/rt-app_parse_config.c`):
//! - every member of `tasks` is a task template; its key is the name;
//! - `instance` (default 1; 0 = only created by `fork`), `delay` (µs before the first phase),
//!   `cpus`, `policy`, `priority`, `dl-*` at task level;
//! - with `phases`: each member of `phases` is a phase (file order), with its own `loop`
//!   (default 1), `cpus` and scheduling keys; the task's `loop` (default -1 = forever)
//!   repeats the whole list of phases;
//! - without `phases`: the task object itself is the one phase; if it has `loop`, that is
//!   the phase's loop count and the task runs the phase list once, otherwise the task loops
//!   forever; the task's scheduling keys are not re-applied as phase keys;
//! - a phase must have at least one event ("No events found").
//!
//! rt-app silently ignores unknown keys in tasks and phases; schedlab rejects them. Event
//! keys may repeat inside a task or phase (rt-app's `workgen` renames repeats to `run1`,
//! `run2`, …, which means the same thing); any other repeated key is an error.

use super::event::{self, PEv};
use super::get::{self, Obj};
use super::sched;
use crate::json::Json;
use crate::model::{Policy, SchedAttr};
use crate::SpecError;

/// Most instances of one task template, and of all templates together.
pub(crate) const MAX_INSTANCES: i128 = 1_000_000;

/// A phase with names unresolved.
pub(crate) struct PhaseIr {
    pub name: String,
    pub loop_count: i64,
    pub attr: Option<SchedAttr>,
    pub cpus: Option<Vec<u32>>,
    pub events: Vec<PEv>,
}

/// A task template with names unresolved.
pub(crate) struct TaskIr {
    pub name: String,
    pub instances: u32,
    pub loop_count: i64,
    pub delay_ns: u64,
    pub attr: SchedAttr,
    pub cpus: Option<Vec<u32>>,
    pub process: Option<String>,
    pub phases: Vec<PhaseIr>,
}

const TASK_KEYS: &[&str] = &[
    "instance",
    "loop",
    "delay",
    "phases",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "cpus",
    "schedlab:process",
    "(legacy) period",
    "(legacy) deadline",
    "(legacy, with phases) runtime",
    "or events (run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, \
     barrier, yield, fork, suspend, resume, schedlab:write, schedlab:read, schedlab:mark, \
     schedlab:exit) when there are no phases",
];

const PHASE_KEYS: &[&str] = &[
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "cpus",
    "or events (run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, \
     barrier, yield, fork, suspend, resume, schedlab:write, schedlab:read, schedlab:mark, \
     schedlab:exit)",
];

/// Keys rt-app knows at task and phase level that schedlab does not simulate.
fn not_modelled_key(key: &str, v: &Json, path: &str) -> Result<bool, SpecError> {
    match key {
        "util_min" | "util_max" => {
            // -1 means "no clamp" in rt-app: harmless.
            if matches!(v, Json::Num(crate::json::Number::Int(-1))) {
                return Ok(true);
            }
            Err(get::not_modelled(
                path,
                &format!("{key} (utilisation clamping)"),
            ))
        }
        "taskgroup" => {
            // An empty taskgroup means "none" in rt-app.
            if matches!(v, Json::Str(s) if s.is_empty()) {
                return Ok(true);
            }
            Err(get::not_modelled(
                path,
                "taskgroup (cgroup placement of the task)",
            ))
        }
        "nodes_membind" => Err(get::not_modelled(
            path,
            "nodes_membind (NUMA memory binding)",
        )),
        "resources" | "lock_order" => Err(get::not_modelled(
            path,
            &format!("the pre-2015 rt-app grammar ({key:?} inside a task); use lock/unlock events"),
        )),
        _ => Ok(false),
    }
}

/// Parse the `tasks` object.
pub(crate) fn parse_tasks(
    v: &Json,
    default_policy: Policy,
    ncpus: u32,
) -> Result<Vec<TaskIr>, SpecError> {
    let tasks = Obj::new(v, "$.tasks", "the tasks object")?;
    tasks.no_repeats(|_| false)?;
    if tasks.members.is_empty() {
        return Err(SpecError::new(
            "$.tasks",
            "expected at least one task, found an empty object",
        ));
    }
    if tasks.members.len() as i128 > MAX_INSTANCES {
        return Err(SpecError::new(
            "$.tasks",
            format!(
                "{} task templates is more than schedlab accepts ({MAX_INSTANCES})",
                tasks.members.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(tasks.members.len());
    let mut total: i128 = 0;
    for (name, tv, path) in tasks.iter() {
        if name.is_empty() {
            return Err(SpecError::new(path, "a task needs a non-empty name"));
        }
        let t = parse_task(name, tv, &path, default_policy, ncpus)?;
        total += t.instances as i128;
        if total > MAX_INSTANCES {
            return Err(SpecError::new(
                format!("{path}.instance"),
                format!(
                    "the tasks so far add up to {total} instances, more than schedlab accepts \
                     ({MAX_INSTANCES})"
                ),
            ));
        }
        out.push(t);
    }
    Ok(out)
}

fn parse_task(
    name: &str,
    v: &Json,
    path: &str,
    default_policy: Policy,
    ncpus: u32,
) -> Result<TaskIr, SpecError> {
    let o = Obj::new(v, path, &format!("task {name:?}"))?;
    let phases_v = o.get("phases");
    let implicit = phases_v.is_none();
    o.no_repeats(|k| implicit && event::kind(k).is_some())?;

    // Unknown keys first, so a typo is reported as such rather than as a missing thing.
    for (k, kv, kp) in o.iter() {
        let known = matches!(
            k,
            "instance"
                | "loop"
                | "delay"
                | "phases"
                | "policy"
                | "priority"
                | "dl-runtime"
                | "dl-period"
                | "dl-deadline"
                | "cpus"
                | "schedlab:process"
                | "period"
                | "deadline"
        ) || (k == "runtime" && !implicit)
            || (implicit && event::kind(k).is_some());
        if known || not_modelled_key(k, kv, &kp)? {
            continue;
        }
        if !implicit && event::kind(k).is_some() {
            return Err(SpecError::new(
                kp,
                format!(
                    "event {k:?} at task level, but this task has \"phases\": put its events \
                     inside a phase (rt-app would silently ignore it)"
                ),
            ));
        }
        return Err(get::unknown_key(
            &kp,
            k,
            &format!("task {name:?}"),
            TASK_KEYS,
        ));
    }

    let instances = match o.get("instance") {
        Some(iv) => {
            get::int_in(iv, &o.at("instance"), "an instance count", 0, MAX_INSTANCES)? as u32
        }
        None => 1,
    };
    let delay_ns = match o.get("delay") {
        Some(dv) => get::micros(dv, &o.at("delay"), "a start delay", 0)?,
        None => 0,
    };
    let cpus = match o.get("cpus") {
        Some(cv) => Some(sched::cpus(cv, &o.at("cpus"), ncpus)?),
        None => None,
    };
    let process = match o.get("schedlab:process") {
        Some(pv) => Some(get::name(pv, &o.at("schedlab:process"), "a process name")?.to_string()),
        None => None,
    };
    let keys = sched::read_keys(&o, true, !implicit)?;
    let attr = sched::task_attr(&keys, default_policy)?;

    let (loop_count, phases) = if let Some(pv) = phases_v {
        let po = Obj::new(pv, &o.at("phases"), "the phases object")?;
        po.no_repeats(|_| false)?;
        if po.members.is_empty() {
            return Err(SpecError::new(
                po.path,
                "expected at least one phase, found an empty object",
            ));
        }
        let mut current = attr.clone();
        let mut phases = Vec::with_capacity(po.members.len());
        for (pname, phv, pp) in po.iter() {
            let ph = parse_phase(pname, phv, &pp, &current, ncpus)?;
            if let Some(a) = &ph.attr {
                current = a.clone();
            }
            phases.push(ph);
        }
        let lc = match o.get("loop") {
            Some(lv) => get::loop_count(lv, &o.at("loop"))?,
            None => -1,
        };
        (lc, phases)
    } else {
        // The task object is its one phase; its own keys were checked above.
        let events = phase_events(&o)?;
        if events.is_empty() {
            return Err(no_events(&o.path));
        }
        let (task_loop, phase_loop) = match o.get("loop") {
            Some(lv) => (1, get::loop_count(lv, &o.at("loop"))?),
            None => (-1, 1),
        };
        let phase = PhaseIr {
            name: name.to_string(),
            loop_count: phase_loop,
            attr: None,
            // The task-level cpus already apply; repeating them would only re-set affinity.
            cpus: None,
            events,
        };
        (task_loop, vec![phase])
    };

    Ok(TaskIr {
        name: name.to_string(),
        instances,
        loop_count,
        delay_ns,
        attr,
        cpus,
        process,
        phases,
    })
}

fn no_events(path: &str) -> SpecError {
    SpecError::new(
        path,
        "expected at least one event (run, sleep, timer, …); rt-app refuses an empty phase: \
         \"No events found. Task must have events or it's useless\"",
    )
}

fn phase_events(o: &Obj) -> Result<Vec<PEv>, SpecError> {
    let mut events = Vec::new();
    for (k, v, p) in o.iter() {
        if let Some(kind) = event::kind(k) {
            events.push(PEv {
                ev: event::parse(kind, k, v, &p)?,
                path: p,
            });
        }
    }
    Ok(events)
}

fn parse_phase(
    name: &str,
    v: &Json,
    path: &str,
    current: &SchedAttr,
    ncpus: u32,
) -> Result<PhaseIr, SpecError> {
    let o = Obj::new(v, path, &format!("phase {name:?}"))?;
    o.no_repeats(|k| event::kind(k).is_some())?;
    for (k, kv, kp) in o.iter() {
        let known = matches!(
            k,
            "loop" | "policy" | "priority" | "dl-runtime" | "dl-period" | "dl-deadline" | "cpus"
        ) || event::kind(k).is_some();
        if known || not_modelled_key(k, kv, &kp)? {
            continue;
        }
        let hint = match k {
            "instance" | "delay" | "phases" | "schedlab:process" => {
                " (this key belongs to the task, not to a phase)"
            }
            _ => "",
        };
        return Err(SpecError::new(
            kp.clone(),
            format!(
                "{}{hint}",
                get::unknown_key(&kp, k, &format!("phase {name:?}"), PHASE_KEYS).message
            ),
        ));
    }
    let loop_count = match o.get("loop") {
        Some(lv) => get::loop_count(lv, &o.at("loop"))?,
        None => 1,
    };
    let cpus = match o.get("cpus") {
        Some(cv) => Some(sched::cpus(cv, &o.at("cpus"), ncpus)?),
        None => None,
    };
    let keys = sched::read_keys(&o, false, false)?;
    let attr = sched::phase_attr(&keys, current)?;
    let events = phase_events(&o)?;
    if events.is_empty() {
        return Err(no_events(path));
    }
    Ok(PhaseIr {
        name: name.to_string(),
        loop_count,
        attr,
        cpus,
        events,
    })
}

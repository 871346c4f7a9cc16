//! The `tasks` object: task templates, their phases and the events in each phase.
//!
//! rt-app rules (`parse_task_data()` / `parse_task_phase_data()` in
//! `src/rt-app_parse_config.c`):
//! - every member of `tasks` is a task template; its key is the name;
//! - `instance` (default 1; 0 = only created by `fork`), `delay` (µs before the first phase),
//!   `cpus`, `taskgroup`, `policy`, `priority`, `dl-*`, `util_min`/`util_max` at task level;
//! - with `phases`: each member of `phases` is a phase (file order), with its own `loop`
//!   (default 1), `cpus`, `taskgroup` and scheduling keys; the task's `loop` (default -1 =
//!   forever) repeats the whole list of phases;
//! - without `phases`: the task object itself is the one phase; if it has `loop`, that is
//!   the phase's loop count and the task runs the phase list once, otherwise the task loops
//!   forever; the task's scheduling keys are not re-applied as phase keys;
//! - a phase must have at least one event ("No events found");
//! - `taskgroup` (`parse_taskgroup_data()`): `""` means none; anything else must start with
//!   `/` ("Taskgroup [%s] has to start with [/]"); rt-app accepts at most 32 distinct
//!   taskgroup strings (`max_nbr_tgs` in `src/rt-app_taskgroups.c`). A phase without
//!   `taskgroup` leaves the task where it is. `cgroup.rs` turns the strings into groups.
//!
//! What rt-app's `workgen` does first is done here too (see `workgen.rs`): a bare
//! `"suspend",` suspends on the task's own name, and event and phase keys may repeat (each
//! repetition is its own event or phase; a repeated phase gets the name workgen gives it).
//!
//! rt-app silently ignores unknown keys in tasks and phases; schedlab rejects them. Any
//! other repeated key is an error.

use super::cgroup;
use super::event::{self, Kind, PEv};
use super::get::{self, Obj};
use super::sched::{self, CpuList};
use super::workgen;
use crate::json::Json;
use crate::model::{IoPrio, IoPrioClass, Policy, SchedAttr, IOPRIO_LEVELS};
use crate::SpecError;

/// Most instances of one task template, and of all templates together.
pub(crate) const MAX_INSTANCES: i128 = 1_000_000;

/// Most distinct taskgroup strings rt-app accepts (`max_nbr_tgs`).
pub(crate) const MAX_TASKGROUPS: usize = 32;

/// A `taskgroup` value as written (non-empty, starting with `/`), normalised, and its path.
#[derive(Clone, Debug)]
pub(crate) struct GroupRef {
    pub name: String,
    pub norm: String,
    pub path: String,
}

/// A phase with names unresolved.
pub(crate) struct PhaseIr {
    pub name: String,
    /// JSON path of the phase object (of the task, for a task without `phases`).
    pub path: String,
    pub loop_count: i64,
    pub attr: Option<SchedAttr>,
    pub cpus: Option<CpuList>,
    pub group: Option<GroupRef>,
    pub events: Vec<PEv>,
}

/// A task template with names unresolved.
pub(crate) struct TaskIr {
    pub name: String,
    /// JSON path of the task object.
    pub path: String,
    pub instances: u32,
    pub loop_count: i64,
    pub delay_ns: u64,
    pub attr: SchedAttr,
    pub cpus: Option<CpuList>,
    pub group: Option<GroupRef>,
    pub process: Option<String>,
    pub ioprio: Option<IoPrio>,
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
    "util_min",
    "util_max",
    "cpus",
    "taskgroup",
    "schedlab:process",
    "schedlab:ioprio",
    "(legacy) period",
    "(legacy) deadline",
    "(legacy, with phases) runtime",
    "or events (run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, \
     barrier, yield, fork, suspend, resume, schedlab:write, schedlab:read, schedlab:mark, \
     schedlab:exit, schedlab:io) when there are no phases",
];

const PHASE_KEYS: &[&str] = &[
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "cpus",
    "taskgroup",
    "or events (run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, \
     barrier, yield, fork, suspend, resume, schedlab:write, schedlab:read, schedlab:mark, \
     schedlab:exit, schedlab:io)",
];

/// Keys a phase and a task (without `phases`) share, besides events.
const SCHED_KEYS: &[&str] = &[
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "cpus",
    "taskgroup",
];

/// Keys rt-app knows at task and phase level that schedlab refuses, with the reason.
fn refused_key(key: &str, path: &str) -> Option<SpecError> {
    match key {
        "nodes_membind" => Some(get::not_modelled(
            path,
            "nodes_membind (NUMA memory binding: schedlab has no memory model)",
        )),
        "exec" | "resources" | "lock_order" => Some(SpecError::new(
            path,
            format!(
                "{key:?} belongs to the pre-2015 rt-app grammar (\"exec\", \"period\", \
                 \"lock_order\", \"resources\" inside a task), which rt-app no longer reads: \
                 rt-app finds no event in such a task and refuses it (\"No events found\"); \
                 write run, sleep, lock and unlock events instead"
            ),
        )),
        _ => None,
    }
}

/// Parse the `tasks` object.
pub(crate) fn parse_tasks(v: &Json, default_policy: Policy) -> Result<Vec<TaskIr>, SpecError> {
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
        let t = parse_task(name, tv, &path, default_policy)?;
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
    check_taskgroup_count(&out)?;
    Ok(out)
}

/// rt-app counts taskgroups by their strings as written (`find_taskgroup()` compares
/// strings) and refuses the 33rd.
fn check_taskgroup_count(tasks: &[TaskIr]) -> Result<(), SpecError> {
    let mut seen: Vec<&str> = Vec::new();
    let refs = tasks.iter().flat_map(|t| {
        t.group
            .iter()
            .chain(t.phases.iter().filter_map(|p| p.group.as_ref()))
    });
    for g in refs {
        if !seen.contains(&g.name.as_str()) {
            seen.push(&g.name);
            if seen.len() > MAX_TASKGROUPS {
                return Err(SpecError::new(
                    &g.path,
                    format!(
                        "taskgroup {:?} is distinct taskgroup number {}; rt-app accepts at \
                         most {MAX_TASKGROUPS} (\"# taskgroups exceeds max # taskgroups\")",
                        g.name,
                        seen.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn parse_task(
    name: &str,
    v: &Json,
    path: &str,
    default_policy: Policy,
) -> Result<TaskIr, SpecError> {
    let o = Obj::with_bare_keys(v, path, &format!("task {name:?}"))?;
    let phases_v = o.get("phases");
    let implicit = phases_v.is_none();
    o.no_repeats(|k| implicit && event::kind(k).is_some())?;

    // Unknown keys first, so a typo is reported as such rather than as a missing thing.
    for (k, _, kp) in o.iter() {
        let known = matches!(
            k,
            "instance"
                | "delay"
                | "phases"
                | "schedlab:process"
                | "schedlab:ioprio"
                | "period"
                | "deadline"
        ) || SCHED_KEYS.contains(&k)
            || (k == "runtime" && !implicit)
            || (implicit && event::kind(k).is_some());
        if known {
            continue;
        }
        if let Some(e) = refused_key(k, &kp) {
            return Err(e);
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
    o.no_bare(|k| implicit && event::kind(k) == Some(Kind::Suspend))?;

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
        Some(cv) => Some(sched::cpus(cv, &o.at("cpus"))?),
        None => None,
    };
    let group = taskgroup(&o)?;
    let process = match o.get("schedlab:process") {
        Some(pv) => Some(get::name(pv, &o.at("schedlab:process"), "a process name")?.to_string()),
        None => None,
    };
    let ioprio = match o.get("schedlab:ioprio") {
        Some(iv) => Some(ioprio(iv, &o.at("schedlab:ioprio"))?),
        None => None,
    };
    let keys = sched::read_keys(&o, true, !implicit)?;
    let attr = sched::task_attr(&keys, default_policy)?;

    let (loop_count, phases) = if let Some(pv) = phases_v {
        let po = Obj::new(pv, &o.at("phases"), "the phases object")?;
        if po.members.is_empty() {
            return Err(SpecError::new(
                po.path,
                "expected at least one phase, found an empty object",
            ));
        }
        let names = workgen::unique_keys(po.members.iter().map(|(k, _)| k.as_str()));
        let mut current = attr.clone();
        let mut phases = Vec::with_capacity(po.members.len());
        for ((_, phv, pp), pname) in po.iter().into_iter().zip(names) {
            let ph = parse_phase(pname, phv, &pp, &current)?;
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
            path: path.to_string(),
            loop_count: phase_loop,
            attr: None,
            // The task-level cpus and taskgroup already apply; repeating them would only
            // set them again.
            cpus: None,
            group: None,
            events,
        };
        (task_loop, vec![phase])
    };

    Ok(TaskIr {
        name: name.to_string(),
        path: path.to_string(),
        instances,
        loop_count,
        delay_ns,
        attr,
        cpus,
        group,
        process,
        ioprio,
        phases,
    })
}

/// `schedlab:ioprio`: `{"class": "rt"|"be"|"idle", "level": 0..=7}` (what `ionice -c CLASS
/// -n LEVEL` sets). The level defaults to 4 (ionice's default); the idle class has none.
fn ioprio(v: &Json, path: &str) -> Result<IoPrio, SpecError> {
    const KEYS: &[&str] = &["class", "level"];
    let o = Obj::new(v, path, "an I/O priority ({\"class\": …, \"level\": …})")?;
    o.no_repeats(|_| false)?;
    if let Some((k, _, kp)) = o.iter().into_iter().find(|(k, _, _)| !KEYS.contains(k)) {
        return Err(get::unknown_key(&kp, k, "the I/O priority", KEYS));
    }
    let class_path = o.at("class");
    let Some(cv) = o.get("class") else {
        return Err(SpecError::new(
            class_path,
            "missing: an I/O priority class (\"rt\", \"be\" or \"idle\")",
        ));
    };
    let name = get::name(cv, &class_path, "an I/O priority class")?;
    let class = IoPrioClass::parse(name).ok_or_else(|| {
        SpecError::new(
            &class_path,
            format!("unknown I/O priority class {name:?}: expected \"rt\", \"be\" or \"idle\""),
        )
    })?;
    let level = match (o.get("level"), class) {
        (Some(_), IoPrioClass::Idle) => {
            return Err(SpecError::new(
                o.at("level"),
                "the idle class has no levels (ionice -c 3 takes no -n): remove \"level\"",
            ))
        }
        (Some(lv), _) => get::int_in(
            lv,
            &o.at("level"),
            "an I/O priority level",
            0,
            i128::from(IOPRIO_LEVELS) - 1,
        )? as u8,
        (None, IoPrioClass::Idle) => 0,
        (None, _) => 4,
    };
    Ok(IoPrio { class, level })
}

/// `taskgroup`: `None` for `""` or no key.
fn taskgroup(o: &Obj) -> Result<Option<GroupRef>, SpecError> {
    let Some(v) = o.get("taskgroup") else {
        return Ok(None);
    };
    let path = o.at("taskgroup");
    let name = get::string(v, &path, "a taskgroup (a cgroup path such as \"/tg1\")")?;
    if name.is_empty() {
        return Ok(None);
    }
    if !name.starts_with('/') {
        return Err(SpecError::new(
            path,
            format!(
                "taskgroup {name:?} has to start with \"/\" (rt-app: \"Taskgroup [{name}] has \
                 to start with [/]\")"
            ),
        ));
    }
    Ok(Some(GroupRef {
        name: name.to_string(),
        norm: cgroup::normalize(name, &path)?,
        path,
    }))
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
            let ev = match v {
                // workgen completes a bare suspend with the task's own name.
                Json::Bare => event::Ev::Suspend(String::new()),
                _ => event::parse(kind, k, v, &p)?,
            };
            events.push(PEv { ev, path: p });
        }
    }
    Ok(events)
}

fn parse_phase(
    name: String,
    v: &Json,
    path: &str,
    current: &SchedAttr,
) -> Result<PhaseIr, SpecError> {
    let o = Obj::with_bare_keys(v, path, &format!("phase {name:?}"))?;
    o.no_repeats(|k| event::kind(k).is_some())?;
    for (k, _, kp) in o.iter() {
        if SCHED_KEYS.contains(&k) || event::kind(k).is_some() {
            continue;
        }
        if let Some(e) = refused_key(k, &kp) {
            return Err(e);
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
    o.no_bare(|k| event::kind(k) == Some(Kind::Suspend))?;
    let loop_count = match o.get("loop") {
        Some(lv) => get::loop_count(lv, &o.at("loop"))?,
        None => 1,
    };
    let cpus = match o.get("cpus") {
        Some(cv) => Some(sched::cpus(cv, &o.at("cpus"))?),
        None => None,
    };
    let group = taskgroup(&o)?;
    let keys = sched::read_keys(&o, false, false)?;
    let attr = sched::phase_attr(&keys, current)?;
    let events = phase_events(&o)?;
    if events.is_empty() {
        return Err(no_events(path));
    }
    Ok(PhaseIr {
        name,
        path: path.to_string(),
        loop_count,
        attr,
        cpus,
        group,
        events,
    })
}

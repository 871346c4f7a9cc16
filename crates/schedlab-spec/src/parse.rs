//! rt-app's JSON grammar, read as rt-app reads it, plus schedlab's namespaced extensions.
//!
//! Sources (scheduler-tools/rt-app, master): `doc/tutorial.txt`; `src/rt-app_parse_config.c`
//! (commit 518c338, functions named below); `src/rt-app.c` (commit bb7f052); `src/rt-app_types.h`.
//! No rt-app code is copied; every rule here was read there and rewritten.
//!
//! # Structure
//! - The document is an object with `tasks` (required), `global`, `resources` (legacy) and
//!   `schedlab` (ours). `get_opts_from_json_object()`: `tasks` is mandatory, the others
//!   optional. Unknown top-level keys are errors here (rt-app ignores them).
//! - Units: every time in rt-app JSON is in microseconds (`usec_to_timespec()` everywhere)
//!   except `global.duration`, which is in SECONDS (`sleep(opts.duration)` in `main()`).
//!   The model stores nanoseconds; a value that overflows u64 ns is an error.
//! - Tasks, phases, scheduling keys, CPU lists: see `parse/task.rs` and `parse/sched.rs`.
//! - Events and the prefix rule (`"run0"`, `"run1"` are two run events in file order): see
//!   `parse/event.rs`. The reader keeps object members in file order and keeps repeated
//!   keys (see `json.rs`); a repeated *event* key in a task or phase is accepted as rt-app's
//!   `workgen` accepts it, any other repeated key is an error.
//! - Resources (mutex, condition, barrier, timer, fork, suspend/resume, devices) and the
//!   checks made across tasks: see `parse/resolve.rs`.
//! - `taskgroup` and `schedlab.cgroups`: see `parse/cgroup.rs`.
//! - Instance names at run time are `<task>-<index>` with a global index in file order, and
//!   forked copies `<task>-<index>-<nnnn>` (`thread_data_set_unique_name()` in
//!   `src/rt-app.c`); the model keeps template names and the engine names instances.
//! - rt-app stops a fork bomb at 1024 forks per fork event target (`FORKS_LIMIT`); the parser
//!   cannot see loops' run-time counts, so the engine enforces any limit.
//!
//! # `global` (`parse_global()`)
//! - `duration` (s, default -1): -1 or 0 = until every task has exited (rt-app only arms the
//!   timeout when `duration > 0`); otherwise the run stops after that many seconds.
//! - `default_policy` (default SCHED_OTHER): policy of tasks that give none.
//! - `pi_enabled` (default false): `true` is "not modelled yet" (priority-inheritance
//!   mutexes); `false` is accepted.
//! - Accepted and IGNORED ON PURPOSE, because they only steer rt-app's own measurement
//!   machinery or the host, never the workload: `calibration` (a simulated run executes
//!   exactly), `lock_pages` (no paging in simulation), `logdir`, `log_basename`, `log_size`,
//!   `gnuplot`, `ftrace` (schedlab writes its own trace), `cumulative_slack` (rt-app log
//!   column only), `io_device` and `mem_buffer_size` (only used by iorun/mem, which are
//!   themselves "not modelled yet"), and the obsolete `frag`/`fragment`/`spacing` (AQuoSA
//!   and pre-2015 keys still present in rt-app's own example files). Their types are still
//!   checked.
//!
//! # `resources` (legacy, `parse_resources()`)
//! An object `{name: {"type": …}}` with a type `string_to_resource()` knows, and the
//! pre-2015 `target`. rt-app creates resources on first use anyway ("kept for backward
//! compatibility … doesn't give any benefit"), so the section is checked and otherwise
//! ignored.
//!
//! # Not modelled yet (errors, never silently ignored)
//! `mem` and `iorun` events, `pi_enabled: true` and `nodes_membind`. The pre-2015 task
//! keys `exec`, `lock_order` and `resources` are refused too: rt-app no longer reads them
//! either.
//!
//! # workgen
//! rt-app users run files through rt-app's `workgen` script, which completes a bare
//! `"suspend",` and renames repeated keys; schedlab reads such files directly
//! (`parse/workgen.rs`).
//!
//! # The machine
//! Given, from a topology, or inferred from the CPUs the spec names (`parse/machine.rs`).
//!
//! # schedlab extensions
//! The top-level `schedlab` object (`parse/ext.rs`: machine, channels, cgroups in
//! `parse/cgroup.rs`, block devices, scheduler, seed, headline), the task key
//! `schedlab:process`, and the events `schedlab:write`, `schedlab:read`, `schedlab:mark`,
//! `schedlab:exit`, `schedlab:io`; plus SCHED_BATCH as a policy name. docs/spec.md is the
//! user-facing reference.

mod cgroup;
mod cost;
pub(crate) mod device;
mod event;
pub(crate) mod ext;
mod get;
mod kernel;
mod machine;
mod ownership;
mod profile;
mod resolve;
mod sched;
mod task;
mod workgen;

pub(crate) use ext::DEFAULT_CHANNEL_COSTS;

use crate::json::{self, Json};
use crate::model::{Policy, Spec};
use crate::SpecError;
use get::Obj;

pub(crate) fn parse_text(text: &str) -> Result<Spec, SpecError> {
    let v = json::parse(text)?;
    parse_json(&v)
}

pub(crate) fn parse_value(v: &serde_json::Value) -> Result<Spec, SpecError> {
    let v = Json::from_serde(v)?;
    parse_json(&v)
}

const TOP_KEYS: &[&str] = &["tasks", "global", "resources", "schedlab"];

fn parse_json(v: &Json) -> Result<Spec, SpecError> {
    let root = Obj::new(v, "$", "a workload spec")?;
    root.no_repeats(|_| false)?;
    for (k, _, p) in root.iter() {
        if !TOP_KEYS.contains(&k) {
            return Err(get::unknown_key(&p, k, "the spec's top level", TOP_KEYS));
        }
    }
    // rt-app looks for "tasks" before it reads anything else.
    let tasks_v = root.get("tasks").ok_or_else(|| {
        SpecError::new(
            "$.tasks",
            "missing \"tasks\": a spec needs at least one task",
        )
    })?;
    let (duration_ns, default_policy) = global(root.get("global"))?;
    let declared = match root.get("resources") {
        Some(r) => legacy_resources(r)?,
        None => Declared::new(),
    };
    let ext = ext::parse(root.get("schedlab"))?;
    let tasks = task::parse_tasks(tasks_v, default_policy)?;
    let machine = machine::size(ext.machine, &tasks, &ext.cgroups)?;
    resolve::build(
        duration_ns,
        ext.rest,
        ext.cgroups,
        machine,
        tasks,
        &declared,
    )
}

const GLOBAL_KEYS: &[&str] = &[
    "duration",
    "default_policy",
    "pi_enabled",
    "calibration",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "gnuplot",
    "ftrace",
    "cumulative_slack",
    "io_device",
    "mem_buffer_size",
    "frag",
    "fragment",
    "spacing",
];

fn global(v: Option<&Json>) -> Result<(Option<u64>, Policy), SpecError> {
    let Some(v) = v else {
        return Ok((None, Policy::Other));
    };
    let g = Obj::new(v, "$.global", "the global object")?;
    g.no_repeats(|_| false)?;
    let mut duration = None;
    let mut policy = Policy::Other;
    for (k, kv, p) in g.iter() {
        match k {
            "duration" => {
                let s = get::int(kv, &p, "a duration in seconds (-1 = until all tasks exit)")?;
                if s < -1 {
                    return Err(SpecError::new(
                        p,
                        format!("expected a duration in seconds ≥ 1, or -1 (until all tasks exit), found {s}"),
                    ));
                }
                if s > 0 {
                    let ns = s.checked_mul(1_000_000_000).and_then(|n| u64::try_from(n).ok());
                    duration = Some(ns.ok_or_else(|| {
                        SpecError::new(&p, format!("a duration of {s} s does not fit in 64-bit nanoseconds"))
                    })?);
                }
            }
            "default_policy" => policy = sched::policy(kv, &p)?,
            "pi_enabled" => {
                if get::boolean(kv, &p, "pi_enabled")? {
                    return Err(get::not_modelled(&p, "pi_enabled: true (priority-inheritance mutexes)"));
                }
            }
            "lock_pages" | "gnuplot" | "cumulative_slack" => {
                get::boolean(kv, &p, k)?;
            }
            "logdir" | "log_basename" | "io_device" => {
                get::string(kv, &p, k)?;
            }
            "calibration" => match kv {
                Json::Str(s) if s.starts_with("CPU") && s[3..].parse::<u32>().is_ok() => {}
                Json::Num(json::Number::Int(_)) => {}
                other => {
                    return Err(SpecError::new(
                        p,
                        format!(
                            "expected a calibration (\"CPU<n>\" or ns per loop as an integer), found {}",
                            other.describe()
                        ),
                    ))
                }
            },
            "log_size" => match kv {
                Json::Str(s) if matches!(s.as_str(), "file" | "disable" | "auto" | "Disable" | "Auto") => {}
                Json::Num(json::Number::Int(_)) => {}
                other => {
                    return Err(SpecError::new(
                        p,
                        format!(
                            "expected a log size (MB as an integer, or \"file\", \"disable\", \"auto\"), found {}",
                            other.describe()
                        ),
                    ))
                }
            },
            "ftrace" => {
                if !matches!(kv, Json::Str(_) | Json::Bool(_)) {
                    return Err(SpecError::new(
                        p,
                        format!(
                            "expected ftrace categories (a string such as \"main,task\") or a boolean, found {}",
                            kv.describe()
                        ),
                    ));
                }
            }
            "mem_buffer_size" | "frag" | "fragment" | "spacing" => {
                get::int(kv, &p, k)?;
            }
            _ => return Err(get::unknown_key(&p, k, "the global object", GLOBAL_KEYS)),
        }
    }
    Ok((duration, policy))
}

/// The resource types rt-app's `string_to_resource()` knows (`src/rt-app_utils.c`), and
/// `barrier`.
const RESOURCE_TYPES: &[&str] = &[
    "mutex",
    "wait",
    "signal",
    "broadcast",
    "sync",
    "sleep",
    "run",
    "timer",
    "barrier",
];

/// The legacy `resources` section: each declared name → its type and the path of that type.
pub(crate) type Declared = std::collections::HashMap<String, (String, String)>;

fn legacy_resources(v: &Json) -> Result<Declared, SpecError> {
    let r = Obj::new(
        v,
        "$.resources",
        "the legacy resources object ({name: {\"type\": …}})",
    )?;
    r.no_repeats(|_| false)?;
    let mut declared = Declared::new();
    for (name, rv, p) in r.iter() {
        let o = Obj::new(rv, &p, &format!("resource {name:?}"))?;
        o.no_repeats(|_| false)?;
        for (k, kv, kp) in o.iter() {
            match k {
                "type" => {
                    let t = get::string(kv, &kp, "a resource type")?;
                    if !RESOURCE_TYPES.contains(&t) {
                        return Err(SpecError::new(
                            kp,
                            format!(
                                "expected a resource type ({}), found {t:?}",
                                RESOURCE_TYPES.join(", ")
                            ),
                        ));
                    }
                    declared.insert(name.to_string(), (t.to_string(), kp.clone()));
                }
                // The pre-2015 grammar's signal/broadcast target; rt-app ignores it now.
                "target" => {
                    get::string(kv, &kp, "a resource name")?;
                }
                _ => {
                    return Err(get::unknown_key(
                        &kp,
                        k,
                        &format!("resource {name:?}"),
                        &["type", "target"],
                    ))
                }
            }
        }
    }
    Ok(declared)
}

//! Scheduling attributes (`policy`, `priority`, `dl-*`) and CPU affinity (`cpus`) at task and
//! phase level, resolved the way rt-app applies them at run time so that the model can carry
//! complete [`SchedAttr`]s.
//!
//! rt-app (`parse_sched_data()` in `src/rt-app_parse_config.c`, `set_thread_param()` in
//! `src/rt-app.c`):
//! - task level: `policy` defaults to `global.default_policy`; `priority` defaults to 10 for
//!   SCHED_FIFO/RR (`DEFAULT_THREAD_PRIORITY`, `src/rt-app_types.h`), 0 (nice) for
//!   OTHER/IDLE and 0 for DEADLINE.
//! - phase level: nothing is set unless a key is given. A phase that gives only `priority`
//!   (or only `dl-*`) keeps the policy the thread has when the phase first runs; a phase that
//!   gives `policy` without `priority` gets that policy's default priority.
//! - `dl-period` defaults to `dl-runtime`, `dl-deadline` to `dl-period`. At task level only,
//!   the legacy keys `runtime`/`period`/`deadline` stand for them when the `dl-` key is absent
//!   (`runtime` only when the task has `phases`, otherwise it is the runtime event).
//!
//! - `util_min`/`util_max` (-1 = no clamp, else 0..=1024) at task and phase level; on a
//!   fair-class task `dl-runtime` is the custom slice (`SchedAttr::slice_ns`).
//!
//! schedlab is stricter than rt-app where rt-app would fail later or silently do nothing:
//! priorities are range-checked against the resolved policy (FIFO/RR 1..=99, nice -20..=19,
//! DEADLINE 0), DEADLINE parameters must satisfy the kernel's `__checkparam_dl`
//! (`1024 ns ≤ runtime ≤ deadline ≤ period`, 100 µs ≤ period ≤ 2^22 µs), and `dl-*` on a
//! non-DEADLINE policy is an error.

use super::get::{self, Obj};
use crate::json::Json;
use crate::json::Number;
use crate::model::{DlParams, Policy, SchedAttr, Uclamp, MAX_MACHINE_CPUS};
use crate::SpecError;

/// rt-app's `DEFAULT_THREAD_PRIORITY` for FIFO/RR.
pub(crate) const DEFAULT_RT_PRIORITY: i32 = 10;

/// The scheduling keys of one task or phase object, before resolution.
#[derive(Default)]
pub(crate) struct SchedKeys {
    policy: Option<Policy>,
    priority: Option<(i32, String)>,
    runtime: Option<(u64, String)>,
    period: Option<(u64, String)>,
    deadline: Option<(u64, String)>,
    /// `util_min` / `util_max`: `Some((None, path))` for -1 ("no clamp").
    util_min: Option<(Option<u32>, String)>,
    util_max: Option<(Option<u32>, String)>,
    /// Path of the object the keys came from (for "missing key" messages).
    path: String,
}

impl SchedKeys {
    /// True when the keys change nothing: rt-app's `parse_sched_data()` returns no
    /// scheduling data when no key is given, a clamp of -1 counting as not given.
    pub(crate) fn is_empty(&self) -> bool {
        let clamp = |c: &Option<(Option<u32>, String)>| matches!(c, Some((Some(_), _)));
        self.policy.is_none()
            && self.priority.is_none()
            && self.runtime.is_none()
            && self.period.is_none()
            && self.deadline.is_none()
            && !clamp(&self.util_min)
            && !clamp(&self.util_max)
    }
}

/// Parse an rt-app policy name. SCHED_BATCH is a schedlab addition (rt-app's
/// `string_to_policy()` knows OTHER, IDLE, RR, FIFO and DEADLINE only).
pub(crate) fn policy(v: &Json, path: &str) -> Result<Policy, SpecError> {
    let s = get::string(v, path, "a scheduling policy")?;
    Ok(match s {
        "SCHED_OTHER" => Policy::Other,
        "SCHED_BATCH" => Policy::Batch,
        "SCHED_IDLE" => Policy::Idle,
        "SCHED_FIFO" => Policy::Fifo,
        "SCHED_RR" => Policy::Rr,
        "SCHED_DEADLINE" => Policy::Deadline,
        _ => {
            return Err(SpecError::new(
                path,
                format!(
                    "expected a scheduling policy (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, \
                     SCHED_FIFO, SCHED_RR or SCHED_DEADLINE), found {:?}",
                    s
                ),
            ))
        }
    })
}

/// Read the scheduling keys of `obj`. `legacy_runtime`: the task-level legacy `runtime` key
/// is a DEADLINE runtime here (task with `phases`); `legacy`: accept `period`/`deadline`.
pub(crate) fn read_keys(
    obj: &Obj,
    legacy: bool,
    legacy_runtime: bool,
) -> Result<SchedKeys, SpecError> {
    let mut k = SchedKeys {
        path: obj.path.clone(),
        ..SchedKeys::default()
    };
    if let Some(v) = obj.get("policy") {
        k.policy = Some(policy(v, &obj.at("policy"))?);
    }
    if let Some(v) = obj.get("priority") {
        let p = obj.at("priority");
        let n = get::int_in(
            v,
            &p,
            "a priority (nice -20..=19 or RT priority 1..=99)",
            -20,
            99,
        )?;
        k.priority = Some((n as i32, p));
    }
    let dl = |key: &str, legacy_key: Option<&str>| -> Result<Option<(u64, String)>, SpecError> {
        if let Some(v) = obj.get(key) {
            let p = obj.at(key);
            return Ok(Some((get::micros(v, &p, key, 1)?, p)));
        }
        if let Some(lk) = legacy_key {
            if let Some(v) = obj.get(lk) {
                let p = obj.at(lk);
                return Ok(Some((
                    get::micros(v, &p, &format!("{lk} (legacy {key})"), 1)?,
                    p,
                )));
            }
        }
        Ok(None)
    };
    k.runtime = dl(
        "dl-runtime",
        if legacy_runtime {
            Some("runtime")
        } else {
            None
        },
    )?;
    k.period = dl("dl-period", if legacy { Some("period") } else { None })?;
    k.deadline = dl("dl-deadline", if legacy { Some("deadline") } else { None })?;
    k.util_min = util_clamp(obj, "util_min")?;
    k.util_max = util_clamp(obj, "util_max")?;
    Ok(k)
}

/// `util_min` / `util_max`: -1 (no clamp) or 0..=1024 (rt-app's `parse_sched_data()`
/// refuses values above 1024, the kernel's `SCHED_CAPACITY_SCALE`).
fn util_clamp(obj: &Obj, key: &str) -> Result<Option<(Option<u32>, String)>, SpecError> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
    };
    let p = obj.at(key);
    if matches!(v, Json::Num(Number::Int(-1))) {
        return Ok(Some((None, p)));
    }
    let n = get::int_in(
        v,
        &p,
        &format!("{key} (-1 for no clamp, or a utilization)"),
        0,
        1024,
    )?;
    Ok(Some((Some(n as u32), p)))
}

fn default_priority(p: Policy) -> i32 {
    if p.is_rt() {
        DEFAULT_RT_PRIORITY
    } else {
        0
    }
}

fn check_priority(policy: Policy, prio: i32, path: &str) -> Result<(), SpecError> {
    let (lo, hi, what) = match policy {
        Policy::Fifo | Policy::Rr => (1, 99, "an RT priority"),
        Policy::Other | Policy::Batch | Policy::Idle => (-20, 19, "a nice value"),
        Policy::Deadline => (0, 0, "priority 0 (SCHED_DEADLINE has no priority)"),
    };
    if prio < lo || prio > hi {
        return Err(SpecError::new(
            path,
            format!(
                "expected {what} in {lo}..={hi} for {}, found {prio}",
                policy.as_str()
            ),
        ));
    }
    Ok(())
}

/// Shortest SCHED_DEADLINE period (or deadline, when the period is 0) the kernel accepts:
/// `sysctl_sched_dl_period_min` (100 µs) of `__checkparam_dl` (kernel/sched/deadline.c,
/// Linux 6.1 l. 20-27 and 2970-3015; the same in 6.12).
pub const DL_PERIOD_MIN_NS: u64 = 100_000;
/// Longest: `sysctl_sched_dl_period_max` (2^22 µs, about 4 s).
pub const DL_PERIOD_MAX_NS: u64 = (1 << 22) * 1000;

/// DEADLINE parameters from the keys, or an error naming what is missing or inconsistent
/// (`__checkparam_dl`: runtime ≥ 2^DL_SCALE ns, runtime ≤ deadline ≤ period, the period
/// within the sysctl limits).
fn dl_params(k: &SchedKeys) -> Result<DlParams, SpecError> {
    let (runtime, rpath) = k.runtime.clone().ok_or_else(|| {
        SpecError::new(
            format!("{}.dl-runtime", k.path),
            "SCHED_DEADLINE needs dl-runtime (microseconds, > 0); none was given",
        )
    })?;
    if runtime < 1024 {
        return Err(SpecError::new(
            rpath,
            "expected dl-runtime of at least 2 µs (the kernel refuses runtimes under 1024 ns)",
        ));
    }
    let (period, ppath) = k.period.clone().unwrap_or((runtime, rpath.clone()));
    let (deadline, dpath) = k.deadline.clone().unwrap_or((period, ppath.clone()));
    if deadline < runtime {
        return Err(SpecError::new(
            dpath,
            format!(
                "expected dl-deadline ≥ dl-runtime ({} µs), found {} µs",
                runtime / 1000,
                deadline / 1000
            ),
        ));
    }
    if period < deadline {
        return Err(SpecError::new(
            ppath,
            format!(
                "expected dl-period ≥ dl-deadline ({} µs), found {} µs",
                deadline / 1000,
                period / 1000
            ),
        ));
    }
    if !(DL_PERIOD_MIN_NS..=DL_PERIOD_MAX_NS).contains(&period) {
        return Err(SpecError::new(
            ppath,
            format!(
                "expected dl-period within {} µs ..= {} µs (the kernel's default \
                 sysctl_sched_dl_period_min_us and sched_dl_period_max_us: sched_setattr() \
                 refuses other periods with EINVAL), found {} µs",
                DL_PERIOD_MIN_NS / 1000,
                DL_PERIOD_MAX_NS / 1000,
                period / 1000
            ),
        ));
    }
    Ok(DlParams {
        runtime_ns: runtime,
        deadline_ns: deadline,
        period_ns: period,
    })
}

fn no_dl_keys(k: &SchedKeys, policy: Policy) -> Result<(), SpecError> {
    // On a fair task dl-runtime is the custom slice; dl-period and dl-deadline mean nothing.
    let runtime = if policy.is_fair() { &None } else { &k.runtime };
    if let Some((_, p)) = [runtime, &k.period, &k.deadline]
        .into_iter()
        .flatten()
        .next()
    {
        let only_runtime = if policy.is_fair() {
            " (on a fair-class task only dl-runtime has a meaning: the custom slice)"
        } else {
            ""
        };
        return Err(SpecError::new(
            p.clone(),
            format!(
                "DEADLINE parameters only apply to SCHED_DEADLINE, but the policy here is {}{only_runtime}",
                policy.as_str()
            ),
        ));
    }
    Ok(())
}

/// The custom slice a fair-class task requests with dl-runtime (`sched_attr.sched_runtime`
/// with SCHED_OTHER, rt-app pull request 134 "Add sched_runtime support for SCHED_OTHER",
/// 2025); `None` for other policies.
fn slice_of(k: &SchedKeys, policy: Policy) -> Option<u64> {
    if policy.is_fair() {
        k.runtime.as_ref().map(|(ns, _)| *ns)
    } else {
        None
    }
}

/// The clamps the keys set: -1 or absent is "no clamp" (rt-app passes -1, which the
/// kernel's `uclamp_reset()` reads as "back to the default"). rt-app applies clamps to
/// FIFO, RR, OTHER and IDLE tasks only (`_set_thread_uclamp()` is not called for
/// SCHED_DEADLINE), and the kernel refuses util_min > util_max (`uclamp_validate()`,
/// kernel/sched/syscalls.c).
fn uclamp_of(k: &SchedKeys, policy: Policy) -> Result<Uclamp, SpecError> {
    let min = k.util_min.as_ref().and_then(|(v, p)| v.map(|v| (v, p)));
    let max = k.util_max.as_ref().and_then(|(v, p)| v.map(|v| (v, p)));
    if policy == Policy::Deadline {
        if let Some((_, p)) = min.or(max) {
            return Err(SpecError::new(
                p.clone(),
                "util_min and util_max have no effect on a SCHED_DEADLINE task (rt-app sets \
                 no clamp for it)",
            ));
        }
    }
    if let (Some((lo, _)), Some((hi, p))) = (min, max) {
        if lo > hi {
            return Err(SpecError::new(
                p.clone(),
                format!(
                    "expected util_max ≥ util_min ({lo}), found {hi} (the kernel refuses \
                     util_min > util_max with EINVAL)"
                ),
            ));
        }
    }
    Ok(Uclamp {
        min: min.map(|(v, _)| v),
        max: max.map(|(v, _)| v),
    })
}

/// The attributes a task starts with.
pub(crate) fn task_attr(k: &SchedKeys, default_policy: Policy) -> Result<SchedAttr, SpecError> {
    let policy = k.policy.unwrap_or(default_policy);
    let priority = match &k.priority {
        Some((p, path)) => {
            check_priority(policy, *p, path)?;
            *p
        }
        None => default_priority(policy),
    };
    let dl = if policy == Policy::Deadline {
        Some(dl_params(k)?)
    } else {
        no_dl_keys(k, policy)?;
        None
    };
    Ok(SchedAttr {
        policy,
        priority,
        dl,
        slice_ns: slice_of(k, policy),
        uclamp: uclamp_of(k, policy)?,
    })
}

/// The attributes a phase switches to, given those in force when it first starts; `None`
/// when the phase sets nothing.
///
/// A phase that sets any scheduling key sets both clamps (rt-app's `_set_thread_uclamp()`
/// passes -1 for a clamp the phase does not give, which resets it). A fair-class phase
/// that gives no dl-runtime keeps the custom slice of a fair-class task (rt-app pull
/// request 149 "Allow to set only nice or runtime value for SCHED_OTHER/BATCH", 2026,
/// reads back the current `sched_runtime` instead of writing 0).
pub(crate) fn phase_attr(
    k: &SchedKeys,
    current: &SchedAttr,
) -> Result<Option<SchedAttr>, SpecError> {
    if k.is_empty() {
        return Ok(None);
    }
    let policy = k.policy.unwrap_or(current.policy);
    let priority = match &k.priority {
        Some((p, path)) => {
            check_priority(policy, *p, path)?;
            *p
        }
        None if k.policy.is_some() => default_priority(policy),
        None => current.priority,
    };
    let has_dl = k.runtime.is_some() || k.period.is_some() || k.deadline.is_some();
    let dl = if policy == Policy::Deadline {
        if has_dl || current.policy != Policy::Deadline {
            Some(dl_params(k)?)
        } else {
            current.dl
        }
    } else {
        no_dl_keys(k, policy)?;
        None
    };
    let slice_ns = match slice_of(k, policy) {
        Some(ns) => Some(ns),
        None if policy.is_fair() && current.policy.is_fair() => current.slice_ns,
        None => None,
    };
    Ok(Some(SchedAttr {
        policy,
        priority,
        dl,
        slice_ns,
        uclamp: uclamp_of(k, policy)?,
    }))
}

/// A CPU list as written, sorted and without repeats, with the highest CPU and the path
/// where it was written (checked against the machine once the machine is known).
#[derive(Clone, Debug)]
pub(crate) struct CpuList {
    pub cpus: Vec<u32>,
    pub highest: (u32, String),
}

/// `cpus`: a non-empty array of CPU numbers; returned sorted and without repeats (rt-app
/// builds a cpu_set_t, where a repeat is harmless). Whether the machine has them is checked
/// once the machine is known (`parse.rs`).
pub(crate) fn cpus(v: &Json, path: &str) -> Result<CpuList, SpecError> {
    let Json::Arr(items) = v else {
        return Err(SpecError::new(
            path,
            format!(
                "expected a CPU list (an array of CPU numbers such as [0, 1]), found {}",
                v.describe()
            ),
        ));
    };
    if items.is_empty() {
        return Err(SpecError::new(
            path,
            "expected at least one CPU (an empty affinity mask is refused by sched_setaffinity)",
        ));
    }
    let mut cpus = Vec::with_capacity(items.len());
    let mut highest = (0, String::new());
    for (i, c) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let n = cpu_number(get::int(c, &p, "a CPU number")?, &p)?;
        if cpus.is_empty() || n > highest.0 {
            highest = (n, p);
        }
        cpus.push(n);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(CpuList { cpus, highest })
}

/// A CPU number a machine schedlab simulates can have.
pub(crate) fn cpu_number(n: i128, path: &str) -> Result<u32, SpecError> {
    if n < 0 || n >= MAX_MACHINE_CPUS as i128 {
        return Err(SpecError::new(
            path,
            format!(
                "expected a CPU number in 0..={}, found {n} (schedlab simulates at most {} CPUs)",
                MAX_MACHINE_CPUS - 1,
                MAX_MACHINE_CPUS
            ),
        ));
    }
    Ok(n as u32)
}

/// The error for a CPU the machine does not have.
pub(crate) fn cpu_not_on_machine(cpu: u32, path: &str, ncpus: u32) -> SpecError {
    SpecError::new(
        path,
        format!(
            "CPU {cpu} is out of range: the machine has {ncpus} CPU{} (0..={}); set \
             $.schedlab.machine.cpus for a bigger machine",
            if ncpus == 1 { "" } else { "s" },
            ncpus - 1
        ),
    )
}

//! `machine.kernel`: the preemption model, tick, timers and kernel span shapes
//! (`crate::kernel`). Every key is optional and overrides only what it names, so a spec can
//! start from a machine profile and change one setting.

use super::cost::{cost, varying};
use super::get::{self, Obj};
use crate::cost::{CostKey, Spreads};
use crate::json::Json;
use crate::kernel::{Kernel, Preempt, SpanKind, SpanShape, TickMode, TimerRes};
use crate::SpecError;

const KERNEL_KEYS: &[&str] = &[
    "preempt",
    "timers",
    "timer_slack_ns",
    "tick",
    "tick_ns",
    "timer_irq_ns",
    "softirq_ns",
    "softirq_limit_ns",
    "ktimers",
    "ksoftirqd_nice",
    "spans",
];

const SPAN_KEYS: &[&str] = &["nonpreempt_ns", "raw_ns", "point_ns", "cond_resched_ns"];

/// Apply the object at `path` to `k`; the spreads of the interrupt costs go to `spreads`.
pub(crate) fn parse(
    v: &Json,
    path: &str,
    k: &mut Kernel,
    spreads: &mut Spreads,
) -> Result<(), SpecError> {
    let o = Obj::new(v, path, "the kernel object")?;
    o.no_repeats(|_| false)?;
    for (key, kv, kp) in o.iter() {
        match key {
            "preempt" => {
                let names = Preempt::ALL.map(Preempt::as_str);
                k.preempt = choice(kv, &kp, "a preemption model", Preempt::parse, &names)?;
            }
            "timers" => {
                let names = TimerRes::ALL.map(TimerRes::as_str);
                k.timers = choice(kv, &kp, "a timer resolution", TimerRes::parse, &names)?;
            }
            "tick" => {
                let names = TickMode::ALL.map(TickMode::as_str);
                k.tick = choice(kv, &kp, "a tick mode", TickMode::parse, &names)?;
            }
            "timer_slack_ns" => k.timer_slack_ns = cost(kv, &kp, "a timer slack in ns")?,
            "tick_ns" => {
                let spread;
                (k.tick_ns, spread) = varying(kv, &kp, "a tick interrupt's cost in ns")?;
                spreads.set(CostKey::Tick, spread);
            }
            "timer_irq_ns" => {
                let spread;
                (k.timer_irq_ns, spread) = varying(kv, &kp, "a timer expiry's cost in ns")?;
                spreads.set(CostKey::TimerIrq, spread);
            }
            "softirq_ns" => {
                let spread;
                (k.softirq_ns, spread) = varying(kv, &kp, "a tick's softirq work in ns")?;
                spreads.set(CostKey::Softirq, spread);
            }
            "softirq_limit_ns" => {
                k.softirq_limit_ns = cost(kv, &kp, "a softirq time limit in ns (0: none)")?
            }
            "ktimers" => k.ktimers = get::boolean(kv, &kp, "true or false")?,
            "ksoftirqd_nice" => {
                k.ksoftirqd_nice = get::int_in(kv, &kp, "a nice value", -20, 19)? as i32
            }
            "spans" => spans(kv, &kp, k)?,
            _ => return Err(get::unknown_key(&kp, key, "the kernel object", KERNEL_KEYS)),
        }
    }
    Ok(())
}

fn spans(v: &Json, path: &str, k: &mut Kernel) -> Result<(), SpecError> {
    let o = Obj::new(
        v,
        path,
        "the spans object ({kind: {nonpreempt_ns, raw_ns, point_ns, cond_resched_ns}})",
    )?;
    o.no_repeats(|_| false)?;
    let kinds = SpanKind::ALL.map(SpanKind::as_str);
    for (key, kv, kp) in o.iter() {
        let kind = SpanKind::parse(key)
            .ok_or_else(|| get::unknown_key(&kp, key, "the spans object", &kinds))?;
        span(kv, &kp, &mut k.spans[kind.index()])?;
    }
    Ok(())
}

fn span(v: &Json, path: &str, s: &mut SpanShape) -> Result<(), SpecError> {
    let o = Obj::new(
        v,
        path,
        "a span shape ({nonpreempt_ns, raw_ns, point_ns, cond_resched_ns})",
    )?;
    o.no_repeats(|_| false)?;
    let mut raw_path = None;
    for (key, kv, kp) in o.iter() {
        match key {
            "nonpreempt_ns" => s.nonpreempt_ns = cost(kv, &kp, "a non-preemptible length in ns")?,
            "raw_ns" => {
                s.raw_ns = cost(kv, &kp, "a raw-spinlock length in ns")?;
                raw_path = Some(kp);
            }
            "point_ns" => s.point_ns = cost(kv, &kp, "a preemption-point interval in ns")?,
            "cond_resched_ns" => {
                s.cond_resched_ns = cost(kv, &kp, "a cond_resched interval in ns")?
            }
            _ => return Err(get::unknown_key(&kp, key, "a span shape", SPAN_KEYS)),
        }
    }
    if s.raw_ns > s.nonpreempt_ns {
        let at = raw_path.unwrap_or_else(|| o.at("nonpreempt_ns"));
        return Err(SpecError::new(
            at,
            format!(
                "raw_ns ({}) is part of the non-preemptible section and cannot be longer than \
                 nonpreempt_ns ({})",
                s.raw_ns, s.nonpreempt_ns
            ),
        ));
    }
    Ok(())
}

/// One of a setting's names, or an error listing them.
fn choice<T>(
    v: &Json,
    path: &str,
    what: &str,
    parse: fn(&str) -> Option<T>,
    allowed: &[&str],
) -> Result<T, SpecError> {
    let s = get::string(v, path, what)?;
    parse(s).ok_or_else(|| {
        let names: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        SpecError::new(
            path,
            format!("expected {what}: one of {}, found {s:?}", names.join(", ")),
        )
    })
}

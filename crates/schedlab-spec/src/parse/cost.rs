//! A machine cost that may vary: a number, or a distribution object (`crate::cost`).

use super::get::{self, Obj};
use crate::cost::{Spread, DIST_NAMES};
use crate::json::Json;
use crate::SpecError;

/// Largest per-call, per-byte or machine cost: one second.
pub(crate) const MAX_COST: i128 = 1_000_000_000;

/// A fixed cost: a number of ns (or ps) in 0..=1 s.
pub(crate) fn cost(v: &Json, path: &str, what: &str) -> Result<u64, SpecError> {
    Ok(get::int_in(v, path, what, 0, MAX_COST)? as u64)
}

/// A cost that may vary: a number (every occurrence costs it), or
/// `{"dist": "uniform", "min_ns", "max_ns"}` / `{"dist": "exponential", "min_ns", "mean_ns"}`.
/// Returns the minimum and the spread above it.
pub(crate) fn varying(
    v: &Json,
    path: &str,
    what: &str,
) -> Result<(u64, Option<Spread>), SpecError> {
    if !matches!(v, Json::Obj(_)) {
        return Ok((cost(v, path, what)?, None));
    }
    let form = "a cost distribution ({\"dist\": \"uniform\", \"min_ns\", \"max_ns\"} or \
                {\"dist\": \"exponential\", \"min_ns\", \"mean_ns\"})";
    let o = Obj::new(v, path, form)?;
    o.no_repeats(|_| false)?;
    let dist_v = o
        .get("dist")
        .ok_or_else(|| SpecError::new(path, format!("{what}: {form} needs \"dist\"")))?;
    let dist = get::string(dist_v, &o.at("dist"), "a distribution name")?;
    let upper_key = match dist {
        "uniform" => "max_ns",
        "exponential" => "mean_ns",
        other => {
            let names: Vec<String> = DIST_NAMES.iter().map(|n| format!("{n:?}")).collect();
            return Err(SpecError::new(
                o.at("dist"),
                format!(
                    "expected a distribution name: one of {}, found {other:?}",
                    names.join(", ")
                ),
            ));
        }
    };
    let allowed = ["dist", "min_ns", upper_key];
    let (mut min, mut upper) = (None, None);
    for (k, kv, kp) in o.iter() {
        match k {
            "dist" => {}
            "min_ns" => min = Some(cost(kv, &kp, &format!("the minimum of {what}"))?),
            _ if k == upper_key => upper = Some((cost(kv, &kp, &format!("{k} of {what}"))?, kp)),
            _ => {
                let at = format!("{what} ({dist} distribution)");
                return Err(get::unknown_key(&kp, k, &at, &allowed));
            }
        }
    }
    let need = |k: &str| SpecError::new(path, format!("a {dist} {what} needs \"{k}\""));
    let min = min.ok_or_else(|| need("min_ns"))?;
    let (upper, upper_path) = upper.ok_or_else(|| need(upper_key))?;
    if upper < min {
        return Err(SpecError::new(
            upper_path,
            format!("{upper_key} ({upper}) is below min_ns ({min})"),
        ));
    }
    let spread = match dist {
        "uniform" => Spread::Uniform {
            width_ns: upper - min,
        },
        _ => Spread::Exponential {
            mean_excess_ns: upper - min,
        },
    };
    Ok((min, (upper > min).then_some(spread)))
}

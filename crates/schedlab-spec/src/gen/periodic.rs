//! A set of `n` independent periodic tasks with implicit deadlines, the classic
//! schedulability workload.
//!
//! - Utilisations: the `utils` list, or a total `utilization` U split among the tasks with
//!   UUniFast (E. Bini and G. C. Buttazzo, "Measuring the performance of schedulability
//!   tests", Real-Time Systems 30(1–2), 2005), which draws uniformly from the simplex
//!   Σuᵢ = U. When U > 1 a draw can give some uᵢ > 1; such draws are discarded and redrawn
//!   (UUniFast-Discard, Davis & Burns 2009).
//! - Periods: the `periods` list, or log-uniform in [pmin_us, pmax_us] rounded to 1 µs (the
//!   usual choice since Emberson, Stafford & Davis 2010, so that every order of magnitude is
//!   equally represented).
//! - Each job: wait for the task's absolute timer (period T), then run C = uᵢ·T (rounded to
//!   1 µs, at least 1 µs, since rt-app times are whole microseconds).
//! - `policy=fifo`: rate-monotonic priorities (shorter period = higher priority, ties broken
//!   by index, the highest being 99); `policy=other`: SCHED_OTHER nice 0.
//!
//! Random draws come from `seed` through [`Rng`]: first the utilisations, then the periods.

use super::hackbench::schedlab_object;
use super::opts::{opt, Opts};
use super::GeneratorInfo;
use crate::rng::Rng;
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "periodic",
        description: "n periodic tasks (timer then run), utilisations from a list or UUniFast, periods from a list or log-uniform; rate-monotonic SCHED_FIFO or SCHED_OTHER",
        options: vec![
            opt("n", 10, "number of tasks (task0..task{n-1})"),
            opt("utilization", 0.7, "total utilisation U split by UUniFast (ignored when utils is given)"),
            opt("utils", "", "comma-separated per-task utilisations (overrides utilization)"),
            opt("periods", "", "comma-separated per-task periods in µs (overrides pmin_us/pmax_us)"),
            opt("pmin_us", 10000, "smallest period for log-uniform periods, µs"),
            opt("pmax_us", 100000, "largest period for log-uniform periods, µs"),
            opt("seed", 1, "PRNG seed for UUniFast and the periods"),
            opt("policy", "fifo", "fifo (rate-monotonic priorities) or other"),
            opt("duration_s", 10, "run time in seconds"),
            opt("cpus", 1, "CPUs of the simulated machine"),
        ],
    }
}

/// UUniFast: `n` utilisations, uniformly distributed over the simplex that sums to `u`.
pub fn uunifast(n: usize, u: f64, rng: &mut Rng) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    let mut sum = u;
    for i in 1..n {
        let next = sum * rng.next_f64().powf(1.0 / (n - i) as f64);
        out.push(sum - next);
        sum = next;
    }
    if n > 0 {
        out.push(sum);
    }
    out
}

/// UUniFast-Discard: redraw until every utilisation is ≤ 1; `None` after `tries` draws.
pub fn uunifast_discard(n: usize, u: f64, rng: &mut Rng, tries: usize) -> Option<Vec<f64>> {
    (0..tries)
        .map(|_| uunifast(n, u, rng))
        .find(|us| us.iter().all(|&x| x <= 1.0))
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let fifo = o.choice("policy", &["fifo", "other"])? == "fifo";
    let n = o.int("n", 1, if fifo { 99 } else { 100_000 })? as usize;
    let seed = o.int("seed", 0, u64::MAX)?;
    let duration = o.int("duration_s", 1, 1_000_000)?;
    let cpus = o.int("cpus", 1, 256)?;
    let mut rng = Rng::new(seed);

    let utils: Vec<f64> = o.list("utils", "numbers")?;
    let utils = if utils.is_empty() {
        let u = o.real("utilization", 0.0, n as f64)?;
        uunifast_discard(n, u, &mut rng, 10_000).ok_or_else(|| {
            o.error("utilization", format!("UUniFast-Discard found no draw with every task ≤ 1 for U={u}, n={n}; lower U or raise n"))
        })?
    } else {
        if utils.len() != n {
            return Err(o.error(
                "utils",
                format!(
                    "expected {n} utilisations (one per task), found {}",
                    utils.len()
                ),
            ));
        }
        if let Some(bad) = utils.iter().find(|&&x| !(x > 0.0 && x <= 1.0)) {
            return Err(o.error(
                "utils",
                format!("expected utilisations in (0, 1], found {bad}"),
            ));
        }
        utils
    };

    let periods: Vec<u64> = o.list("periods", "periods in µs")?;
    let periods = if periods.is_empty() {
        let pmin = o.int("pmin_us", 1, 100_000_000)?;
        let pmax = o.int("pmax_us", 1, 100_000_000)?;
        if pmin > pmax {
            return Err(o.error(
                "pmax_us",
                format!("expected pmax_us ≥ pmin_us ({pmin}), found {pmax}"),
            ));
        }
        let (lo, hi) = ((pmin as f64).ln(), (pmax as f64).ln());
        (0..n)
            .map(|_| ((lo + rng.next_f64() * (hi - lo)).exp().round() as u64).clamp(pmin, pmax))
            .collect()
    } else {
        if periods.len() != n {
            return Err(o.error(
                "periods",
                format!(
                    "expected {n} periods (one per task), found {}",
                    periods.len()
                ),
            ));
        }
        if let Some(bad) = periods.iter().find(|&&p| p == 0 || p > 100_000_000) {
            return Err(o.error(
                "periods",
                format!("expected periods in 1..=100000000 µs, found {bad}"),
            ));
        }
        periods
    };

    // Rate-monotonic: rank by (period, index); rank 0 gets priority 99.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (periods[i], i));
    let mut prio = vec![0i64; n];
    for (rank, &i) in order.iter().enumerate() {
        prio[i] = 99 - rank as i64;
    }

    let mut tasks = Map::new();
    for i in 0..n {
        let c = ((utils[i] * periods[i] as f64).round() as u64).max(1);
        let (policy, p) = if fifo {
            ("SCHED_FIFO", prio[i])
        } else {
            ("SCHED_OTHER", 0)
        };
        tasks.insert(
            format!("task{i}"),
            json!({
                "policy": policy,
                "priority": p,
                "timer": {"ref": "unique", "period": periods[i], "mode": "absolute"},
                "run": c,
            }),
        );
    }
    let mut s = schedlab_object(cpus, Map::new(), Map::new(), json!({"type": "none"}));
    s["seed"] = json!(seed);
    Ok(json!({
        "global": {"duration": duration},
        "tasks": Value::Object(tasks),
        "schedlab": s,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uunifast_sums_to_u_and_is_deterministic() {
        for (n, u) in [(1, 0.5), (5, 0.9), (10, 0.7), (50, 3.5)] {
            let a = uunifast(n, u, &mut Rng::new(42));
            let b = uunifast(n, u, &mut Rng::new(42));
            assert_eq!(a, b);
            assert_eq!(a.len(), n);
            assert!((a.iter().sum::<f64>() - u).abs() < 1e-9);
            assert!(a.iter().all(|&x| x >= 0.0));
        }
        assert_ne!(
            uunifast(5, 0.9, &mut Rng::new(1)),
            uunifast(5, 0.9, &mut Rng::new(2))
        );
    }

    #[test]
    fn discard_keeps_every_share_at_most_one() {
        let us = uunifast_discard(4, 3.0, &mut Rng::new(7), 10_000).unwrap();
        assert!(us.iter().all(|&x| x <= 1.0));
        assert!((us.iter().sum::<f64>() - 3.0).abs() < 1e-9);
    }
}

//! EDF schedulability of each CPU's periodic tasks (the `edf` policy in its `partitioned`
//! mode: each CPU an independent uniprocessor EDF scheduler).
//!
//! - Implicit deadlines (D = T), or deadlines at least the period: schedulable if and only
//!   if U ≤ 1 (C. L. Liu and J. W. Layland, "Scheduling Algorithms for Multiprogramming in a
//!   Hard-Real-Time Environment", JACM 20(1), 1973, Theorem 7; with D ≥ T, dbf(t) ≤ U·t).
//! - Otherwise the processor-demand test: S. Baruah, L. Rosier and R. Howell, "Algorithms
//!   and Complexity Concerning the Preemptive Scheduling of Periodic, Real-Time Tasks on One
//!   Processor", Real-Time Systems 2(4), 1990: schedulable if and only if U ≤ 1 and
//!   dbf(t) = Σ_i max(0, ⌊(t − D_i) / T_i⌋ + 1) · C_i ≤ t at every absolute deadline t up to
//!   L, where L = min(H + D_max, max(D_max, Σ_i (T_i − D_i) U_i / (1 − U))) for U < 1 and
//!   H + D_max for U = 1 (H the hyperperiod). The utilisation is compared with 1 exactly (in
//!   integers over the hyperperiod) when the hyperperiod fits in 128 bits.
//! - Tasks sharing a mutex are refused: under plain EDF with the simulator's plain mutexes
//!   (no stack resource policy) the blocking is not bounded here.
//! - A CPU is analysed when every task that may run there is a modelled task pinned there,
//!   or a task whose program uses no timer and shares no mutex with them: such a task has
//!   no deadline under `edf` and runs only when no job is ready.

use crate::fixed_priority::{cpu_of, tasks_on};
use crate::model::{PeriodicTask, TaskModel};

/// The most absolute deadlines the demand test checks before it gives up.
pub const MAX_POINTS: u64 = 1_000_000;

/// The EDF verdict for one CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct EdfCpu {
    pub cpu: u32,
    pub tasks: Vec<String>,
    pub utilisation: f64,
    /// "utilisation" or "processor-demand"; `None` when not analysed.
    pub test: Option<&'static str>,
    /// The test's horizon L (ns), for the demand test.
    pub horizon_ns: Option<u64>,
    /// Absolute deadlines checked.
    pub points: u64,
    pub schedulable: Option<bool>,
    /// The first absolute deadline t with dbf(t) > t, if any.
    pub first_failure_ns: Option<u64>,
    pub note: Option<String>,
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The hyperperiod, when it fits in 128 bits.
pub fn hyperperiod(periods: &[u64]) -> Option<u128> {
    periods.iter().try_fold(1u128, |h, &t| {
        let t = t as u128;
        (h / gcd(h, t)).checked_mul(t)
    })
}

/// Σ C_i / T_i compared with 1: `Less`, `Equal` or `Greater` (exact over the hyperperiod
/// when it fits, else in floating point).
fn compare_utilisation(set: &[(u64, u64, u64)]) -> std::cmp::Ordering {
    let periods: Vec<u64> = set.iter().map(|s| s.2).collect();
    if let Some(h) = hyperperiod(&periods) {
        let demand = set.iter().try_fold(0u128, |acc, &(c, _, t)| {
            (h / t as u128)
                .checked_mul(c as u128)
                .and_then(|x| acc.checked_add(x))
        });
        if let Some(d) = demand {
            return d.cmp(&h);
        }
    }
    let u: f64 = set.iter().map(|&(c, _, t)| c as f64 / t as f64).sum();
    u.partial_cmp(&1.0).unwrap_or(std::cmp::Ordering::Greater)
}

/// dbf(t) for tasks (C, D, T).
pub fn demand(set: &[(u64, u64, u64)], t: u64) -> u128 {
    set.iter()
        .filter(|&&(_, d, _)| t >= d)
        .map(|&(c, d, p)| ((t - d) / p + 1) as u128 * c as u128)
        .sum()
}

/// The verdict of the demand test on tasks (C, D, T): schedulable, with the horizon, the
/// number of deadlines checked and the first failing one; `Err` when the horizon holds too
/// many deadlines to check.
pub fn demand_test(set: &[(u64, u64, u64)]) -> Result<DemandVerdict, String> {
    use std::cmp::Ordering;
    let u_order = compare_utilisation(set);
    let d_max = set.iter().map(|s| s.1).max().unwrap_or(0);
    if u_order == Ordering::Greater {
        return Ok(DemandVerdict {
            test: "utilisation",
            schedulable: false,
            horizon_ns: None,
            points: 0,
            first_failure_ns: None,
        });
    }
    if set.iter().all(|&(_, d, t)| d >= t) {
        return Ok(DemandVerdict {
            test: "utilisation",
            schedulable: true,
            horizon_ns: None,
            points: 0,
            first_failure_ns: None,
        });
    }
    let periods: Vec<u64> = set.iter().map(|s| s.2).collect();
    let by_hyperperiod = hyperperiod(&periods).map(|h| h + d_max as u128);
    let horizon: u128 = if u_order == Ordering::Less {
        let u: f64 = set.iter().map(|&(c, _, t)| c as f64 / t as f64).sum();
        let la: f64 = set
            .iter()
            .map(|&(c, d, t)| (t as f64 - d as f64) * (c as f64 / t as f64))
            .sum::<f64>()
            / (1.0 - u);
        let la = (la.max(d_max as f64).ceil() as u128).max(d_max as u128);
        by_hyperperiod.map_or(la, |h| h.min(la))
    } else {
        by_hyperperiod.ok_or("U = 1 and the hyperperiod does not fit in 128 bits")?
    };
    let horizon = u64::try_from(horizon).map_err(|_| "the horizon L exceeds 2^64 ns")?;
    let count: u64 = set
        .iter()
        .filter(|&&(_, d, _)| d <= horizon)
        .map(|&(_, d, t)| (horizon - d) / t + 1)
        .sum();
    if count > MAX_POINTS {
        return Err(format!(
            "{count} absolute deadlines up to L = {horizon} ns (more than {MAX_POINTS} to check)"
        ));
    }
    let mut points: Vec<u64> = set
        .iter()
        .flat_map(|&(_, d, t)| {
            (0..)
                .map(move |k: u64| d + k * t)
                .take_while(move |&x| x <= horizon)
        })
        .collect();
    points.sort_unstable();
    points.dedup();
    let first_failure_ns = points.iter().copied().find(|&t| demand(set, t) > t as u128);
    Ok(DemandVerdict {
        test: "processor-demand",
        schedulable: first_failure_ns.is_none(),
        horizon_ns: Some(horizon),
        points: points.len() as u64,
        first_failure_ns,
    })
}

/// What [`demand_test`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandVerdict {
    pub test: &'static str,
    pub schedulable: bool,
    pub horizon_ns: Option<u64>,
    pub points: u64,
    pub first_failure_ns: Option<u64>,
}

/// Why CPU `cpu` cannot be analysed as a uniprocessor EDF scheduler, if it cannot.
fn not_analysable(model: &TaskModel, cpu: u32, on: &[&PeriodicTask]) -> Option<String> {
    // A task without a timer has no deadline under edf: it runs only when no job is ready
    // and delays none, unless through a mutex.
    let shares_mutex =
        |mutexes: &[u32]| on.iter().any(|t| t.mutexes().any(|m| mutexes.contains(&m)));
    if let Some(u) = model
        .unmodelled
        .iter()
        .find(|u| u.cpus.contains(&cpu) && (u.timed || shares_mutex(&u.mutexes)))
    {
        return Some(format!(
            "task {} may run here and is not modelled ({})",
            u.name, u.reason
        ));
    }
    if let Some(j) = model
        .tasks
        .iter()
        .find(|j| j.cpus.contains(&cpu) && cpu_of(model, j) != Some(cpu))
    {
        return Some(format!(
            "task {} may run here but is not pinned here (partitioned edf places it at run \
             time)",
            j.name
        ));
    }
    for a in on {
        for b in on {
            if a.name != b.name && a.mutexes().any(|m| b.mutexes().any(|x| x == m)) {
                return Some(format!(
                    "{} and {} share a mutex: plain EDF with plain mutexes has no bounded \
                     blocking here",
                    a.name, b.name
                ));
            }
        }
    }
    None
}

/// The EDF verdict of every CPU that has modelled tasks pinned to it.
pub fn analyse(model: &TaskModel) -> Vec<EdfCpu> {
    (0..model.cpus)
        .filter_map(|cpu| {
            let on = tasks_on(model, cpu);
            if on.is_empty() {
                return None;
            }
            let mut out = EdfCpu {
                cpu,
                tasks: on.iter().map(|t| t.name.clone()).collect(),
                utilisation: on.iter().map(|t| t.utilisation()).sum(),
                test: None,
                horizon_ns: None,
                points: 0,
                schedulable: None,
                first_failure_ns: None,
                note: not_analysable(model, cpu, &on),
            };
            if out.note.is_some() {
                return Some(out);
            }
            let set: Vec<(u64, u64, u64)> = on.iter().map(|t| (t.c_ns, t.d_ns, t.t_ns)).collect();
            match demand_test(&set) {
                Ok(v) => {
                    out.test = Some(v.test);
                    out.horizon_ns = v.horizon_ns;
                    out.points = v.points;
                    out.schedulable = Some(v.schedulable);
                    out.first_failure_ns = v.first_failure_ns;
                }
                Err(why) => out.note = Some(why),
            }
            Some(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Implicit deadlines: exactly U ≤ 1, at U = 1 too.
    #[test]
    fn implicit_deadlines_are_the_utilisation_test() {
        let v = demand_test(&[(2, 5, 5), (4, 7, 7)]).unwrap();
        assert!(v.schedulable && v.test == "utilisation");
        assert!(demand_test(&[(1, 2, 2), (2, 4, 4)]).unwrap().schedulable); // U = 1
        assert!(!demand_test(&[(1, 2, 2), (3, 4, 4)]).unwrap().schedulable); // U = 1.25
    }

    /// Constrained deadlines, checked at the absolute deadlines up to L. The set of Linux's
    /// sched-deadline.rst §3.2, (C, D, T) = (50, 50, 100), (10, 100, 100): density 1.1 but
    /// schedulable (the second job's response is at most 60). Shrinking the second
    /// deadline to 55 makes dbf(55) = 60 > 55.
    #[test]
    fn constrained_deadlines_use_the_demand_bound() {
        let ok = demand_test(&[(50, 50, 100), (10, 100, 100)]).unwrap();
        assert!(ok.schedulable && ok.test == "processor-demand");
        // U = 0.6, L_a = (50·0.5 + 0) / 0.4 = 62.5 → 100 (D_max); H + D_max = 200.
        assert_eq!(ok.horizon_ns, Some(100));
        let bad = demand_test(&[(50, 50, 100), (10, 55, 100)]).unwrap();
        assert!(!bad.schedulable);
        assert_eq!(bad.first_failure_ns, Some(55));
        assert_eq!(demand(&[(50, 50, 100), (10, 55, 100)], 55), 60);
    }
}

//! Fixed-priority analysis of the periodic model, for the `fp` policy (preemptive, one
//! ready queue per CPU, FIFO among equal priorities).
//!
//! - Exact response-time analysis: M. Joseph and P. Pandya, "Finding Response Times in a
//!   Real-Time System", The Computer Journal 29(5), 1986; N. Audsley, A. Burns, M.
//!   Richardson, K. Tindell and A. Wellings, "Applying New Scheduling Theory to Static
//!   Priority Pre-emptive Scheduling", Software Engineering Journal 8(5), 1993:
//!   R = C + B + Σ_{j ∈ hp(i)} ⌈R / T_j⌉ C_j, iterated from R = C + B to a fixed point, per
//!   CPU, for a task pinned to one CPU together with every task that may preempt it. Tasks
//!   of equal priority are counted among the interfering ones (FIFO among equals lets one
//!   released earlier run first): the bound is then safe but not exact, and says so. The
//!   recurrence covers one job per level-i busy period: when R exceeds the period the task
//!   gets no bound (and is unschedulable when its deadline is at most its period).
//! - Blocking B, for the simulator's mutexes, which are plain (no priority inheritance, no
//!   ceiling). Task i waits for a lower-priority task L only on a mutex m that i itself
//!   locks (a higher-priority task waiting for L lets i run). While L holds m, any task of
//!   priority strictly between L and i preempts L and delays i for as long as it runs —
//!   unbounded priority inversion — so the rule is: B_i = the longest critical section on
//!   m, over the lower-priority tasks L on i's CPU and the mutexes m that both lock, when no
//!   task of priority strictly between L and i may run on that CPU. With no intermediate
//!   task, i is blocked at most once per job (L cannot take another mutex while i waits:
//!   nested sections are refused, and i preempts L as soon as m is released). The bound is
//!   refused, with the reason, when an intermediate task exists, when L or i nests critical
//!   sections, when m is also locked by a task that may run on another CPU (remote
//!   blocking), or when a task that may lock m is not in the model.
//! - Utilisation bounds, for rate-monotonic priorities with deadlines equal to periods and
//!   no blocking: C. L. Liu and J. W. Layland, "Scheduling Algorithms for Multiprogramming in
//!   a Hard-Real-Time Environment", JACM 20(1), 1973: U ≤ n(2^{1/n} − 1); E. Bini, G. C.
//!   Buttazzo and G. M. Buttazzo, "Rate Monotonic Analysis: The Hyperbolic Bound", IEEE
//!   Transactions on Computers 52(7), 2003: Π (U_i + 1) ≤ 2. Both are sufficient tests.

use crate::model::{PeriodicTask, TaskModel};
use schedlab_core::types::Policy;

/// The outcome of the response-time recurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rta {
    /// The fixed point: the worst-case response time.
    Converged(u64),
    /// An iterate exceeded the limit (the task's period): no bound from this recurrence.
    Exceeds(u64),
}

/// R = C + B + Σ ⌈R / T_j⌉ C_j over `hp` = [(C_j, T_j)], iterated from C + B until it
/// stops changing or exceeds `limit`.
pub fn response_time(c: u64, b: u64, hp: &[(u64, u64)], limit: u64) -> Rta {
    let base = c as u128 + b as u128;
    let mut r = base;
    loop {
        if r > limit as u128 {
            return Rta::Exceeds(r.min(u64::MAX as u128) as u64);
        }
        let next = base
            + hp.iter()
                .map(|&(cj, tj)| r.div_ceil(tj as u128) * cj as u128)
                .sum::<u128>();
        if next == r {
            return Rta::Converged(r as u64);
        }
        r = next;
    }
}

/// Liu & Layland's bound for `n` tasks: n(2^{1/n} − 1).
pub fn liu_layland_bound(n: usize) -> f64 {
    let n = n as f64;
    n * (2f64.powf(1.0 / n) - 1.0)
}

/// The hyperbolic bound's product Π (U_i + 1) (schedulable if ≤ 2).
pub fn hyperbolic_product(utilisations: &[f64]) -> f64 {
    utilisations.iter().map(|u| u + 1.0).product()
}

/// One task's fixed-priority result.
#[derive(Clone, Debug, PartialEq)]
pub struct FpTask {
    pub name: String,
    pub cpu: Option<u32>,
    /// The blocking term used, when it could be bounded.
    pub blocking_ns: Option<u64>,
    /// The worst-case response time, when the analysis gives one.
    pub response_ns: Option<u64>,
    /// R ≤ D; `None` when not known.
    pub schedulable: Option<bool>,
    /// False when the bound is safe but may be pessimistic (equal priorities, blocking).
    pub exact: bool,
    /// Why there is no bound, or what it assumes.
    pub note: Option<String>,
}

/// The utilisation bounds of one CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct FpCpu {
    pub cpu: u32,
    pub tasks: Vec<String>,
    pub utilisation: f64,
    /// Why the bounds do not apply; `None` when they do.
    pub not_applicable: Option<String>,
    pub liu_layland_bound: f64,
    pub liu_layland_passes: Option<bool>,
    pub hyperbolic_product: f64,
    pub hyperbolic_passes: Option<bool>,
}

/// Fixed-priority analysis of a task model.
#[derive(Clone, Debug, PartialEq)]
pub struct FpAnalysis {
    pub tasks: Vec<FpTask>,
    pub cpus: Vec<FpCpu>,
}

/// The CPU a task is analysed on: its only CPU, or the machine's only one.
pub fn cpu_of(model: &TaskModel, t: &PeriodicTask) -> Option<u32> {
    if model.cpus == 1 {
        Some(0)
    } else {
        t.pinned()
    }
}

/// The modelled tasks analysed on CPU `cpu` ([`cpu_of`]).
pub fn tasks_on(model: &TaskModel, cpu: u32) -> Vec<&PeriodicTask> {
    (model.tasks.iter())
        .filter(|t| cpu_of(model, t) == Some(cpu))
        .collect()
}

/// Why CPU `cpu`'s tasks at priority `prio` or better are not all modelled tasks pinned
/// there, if they are not.
fn foreign_on(model: &TaskModel, cpu: u32, prio: i32, except: &str) -> Option<String> {
    if let Some(u) = model
        .unmodelled
        .iter()
        .find(|u| u.prio <= prio && u.cpus.contains(&cpu))
    {
        return Some(format!(
            "task {} may preempt it on CPU {cpu} and is not modelled ({})",
            u.name, u.reason
        ));
    }
    model
        .tasks
        .iter()
        .find(|j| {
            j.name != except
                && j.prio <= prio
                && j.cpus.contains(&cpu)
                && cpu_of(model, j) != Some(cpu)
        })
        .map(|j| {
            format!(
                "task {} may preempt it on CPU {cpu} but may also run elsewhere (fp places it \
                 at run time)",
                j.name
            )
        })
}

/// The blocking term of `i` on `cpu` by the rule of the module header, or why it cannot be
/// bounded.
fn blocking(model: &TaskModel, i: &PeriodicTask, cpu: u32) -> Result<u64, String> {
    let mut b = 0;
    for m in i.mutexes() {
        let name = &model.mutex_names[m as usize];
        if let Some(u) = model.unmodelled.iter().find(|u| u.mutexes.contains(&m)) {
            return Err(format!(
                "mutex \"{name}\" is also locked by task {}, which is not modelled",
                u.name
            ));
        }
        for l in model.tasks.iter().filter(|l| l.name != i.name) {
            if !l.mutexes().any(|x| x == m) {
                continue;
            }
            if cpu_of(model, l) != Some(cpu) {
                return Err(format!(
                    "mutex \"{name}\" is also locked by task {}, which may run on another \
                     CPU (remote blocking is not analysed)",
                    l.name
                ));
            }
            if l.prio <= i.prio {
                continue;
            }
            if l.nested || i.nested {
                return Err(format!(
                    "mutex \"{name}\" is shared with task {} and one of them nests critical \
                     sections",
                    l.name
                ));
            }
            if let Some(mid) = model
                .tasks
                .iter()
                .find(|x| x.prio > i.prio && x.prio < l.prio && x.cpus.contains(&cpu))
            {
                return Err(format!(
                    "task {} can preempt task {} while it holds mutex \"{name}\", and the \
                     simulator's mutexes have no priority inheritance: the blocking is not \
                     bounded",
                    mid.name, l.name
                ));
            }
            if let Some(mid) = model
                .unmodelled
                .iter()
                .find(|x| x.prio > i.prio && x.prio < l.prio && x.cpus.contains(&cpu))
            {
                return Err(format!(
                    "task {} can preempt task {} while it holds mutex \"{name}\" (no \
                     priority inheritance): the blocking is not bounded",
                    mid.name, l.name
                ));
            }
            b = b.max(l.longest_section(m));
        }
    }
    Ok(b)
}

fn analyse_task(model: &TaskModel, i: &PeriodicTask) -> FpTask {
    let mut out = FpTask {
        name: i.name.clone(),
        cpu: cpu_of(model, i),
        blocking_ns: None,
        response_ns: None,
        schedulable: None,
        exact: false,
        note: None,
    };
    if i.policy == Policy::Deadline {
        out.note = Some("fp does not run SCHED_DEADLINE tasks".into());
        return out;
    }
    let Some(cpu) = out.cpu else {
        out.note = Some(format!(
            "not pinned to one CPU on a machine of {} (fp places it at run time)",
            model.cpus
        ));
        return out;
    };
    if let Some(why) = foreign_on(model, cpu, i.prio, &i.name) {
        out.note = Some(why);
        return out;
    }
    let b = match blocking(model, i, cpu) {
        Ok(b) => b,
        Err(why) => {
            out.note = Some(why);
            return out;
        }
    };
    out.blocking_ns = Some(b);
    let hp: Vec<&PeriodicTask> = model
        .tasks
        .iter()
        .filter(|j| j.name != i.name && j.prio <= i.prio && cpu_of(model, j) == Some(cpu))
        .collect();
    let equal = hp.iter().any(|j| j.prio == i.prio);
    let pairs: Vec<(u64, u64)> = hp.iter().map(|j| (j.c_ns, j.t_ns)).collect();
    match response_time(i.c_ns, b, &pairs, i.t_ns) {
        Rta::Converged(r) => {
            out.response_ns = Some(r);
            out.schedulable = Some(r <= i.d_ns);
            out.exact = !equal && b == 0;
            if equal {
                out.note = Some(
                    "tasks of equal priority are counted as interfering: a safe bound, \
                     not exact"
                        .into(),
                );
            } else if b > 0 {
                out.note = Some("includes blocking: a safe bound, not exact".into());
            }
        }
        Rta::Exceeds(r) => {
            out.schedulable = (i.d_ns <= i.t_ns).then_some(false);
            out.note = Some(format!(
                "the response reaches {r} ns, beyond the period: several jobs share a busy \
                 period, which this recurrence does not cover"
            ));
        }
    }
    out
}

/// Why the utilisation bounds do not apply to these tasks of one CPU, if they do not.
fn bounds_not_applicable(model: &TaskModel, cpu: u32, on: &[&PeriodicTask]) -> Option<String> {
    // An unmodelled task below every task here, sharing no mutex with them, never delays
    // them.
    let lowest = on.iter().map(|t| t.prio).max().unwrap_or(i32::MIN);
    let shares = |ms: &[u32]| on.iter().any(|t| t.mutexes().any(|m| ms.contains(&m)));
    if let Some(u) = model
        .unmodelled
        .iter()
        .find(|u| u.cpus.contains(&cpu) && (u.prio <= lowest || shares(&u.mutexes)))
    {
        return Some(format!("task {} may run here and is not modelled", u.name));
    }
    if let Some(j) = model
        .tasks
        .iter()
        .find(|j| j.cpus.contains(&cpu) && cpu_of(model, j) != Some(cpu))
    {
        return Some(format!(
            "task {} may run here but is not pinned here",
            j.name
        ));
    }
    if let Some(j) = on.iter().find(|j| j.d_ns != j.t_ns) {
        return Some(format!(
            "task {}'s deadline differs from its period",
            j.name
        ));
    }
    if let Some(j) = on.iter().find(|j| j.policy == Policy::Deadline) {
        return Some(format!("task {} is SCHED_DEADLINE", j.name));
    }
    for a in on {
        for b in on {
            if a.name != b.name && a.t_ns < b.t_ns && a.prio >= b.prio {
                return Some(format!(
                    "priorities are not rate-monotonic: {} has the shorter period but not \
                     the strictly higher priority than {}",
                    a.name, b.name
                ));
            }
            if a.name < b.name && a.prio == b.prio {
                return Some(format!(
                    "{} and {} share a priority (fp runs them FIFO, not preemptively)",
                    a.name, b.name
                ));
            }
            if a.name != b.name && a.mutexes().any(|m| b.mutexes().any(|x| x == m)) {
                return Some(format!(
                    "{} and {} share a mutex (the bounds assume independent tasks)",
                    a.name, b.name
                ));
            }
        }
    }
    None
}

/// The fixed-priority analysis of every modelled task and every CPU that has some.
pub fn analyse(model: &TaskModel) -> FpAnalysis {
    let tasks = model.tasks.iter().map(|t| analyse_task(model, t)).collect();
    let cpus = (0..model.cpus)
        .filter_map(|cpu| {
            let on = tasks_on(model, cpu);
            if on.is_empty() {
                return None;
            }
            let us: Vec<f64> = on.iter().map(|t| t.utilisation()).collect();
            let utilisation = us.iter().sum();
            let not_applicable = bounds_not_applicable(model, cpu, &on);
            let ll = liu_layland_bound(on.len());
            let product = hyperbolic_product(&us);
            let applies = not_applicable.is_none();
            Some(FpCpu {
                cpu,
                tasks: on.iter().map(|t| t.name.clone()).collect(),
                utilisation,
                liu_layland_bound: ll,
                liu_layland_passes: applies.then_some(utilisation <= ll),
                hyperbolic_product: product,
                hyperbolic_passes: applies.then_some(product <= 2.0),
                not_applicable,
            })
        })
        .collect();
    FpAnalysis { tasks, cpus }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Liu & Layland's bound for 1, 2, 3 tasks (1, 2(√2 − 1) ≈ 0.8284, 3(∛2 − 1) ≈ 0.7798),
    /// falling to ln 2 for many.
    #[test]
    fn liu_layland_bound_follows_its_formula() {
        assert_eq!(liu_layland_bound(1), 1.0);
        assert!((liu_layland_bound(2) - 2.0 * (2f64.sqrt() - 1.0)).abs() < 1e-12);
        assert!((liu_layland_bound(3) - 3.0 * (2f64.cbrt() - 1.0)).abs() < 1e-12);
        assert!((liu_layland_bound(100_000) - 2f64.ln()).abs() < 1e-5);
    }

    /// The recurrence on the classic set (C, T) = (1, 4), (2, 6), (3, 12): R = 1, 3, 10;
    /// and a task whose iterates pass its period gets no bound.
    #[test]
    fn recurrence_on_a_textbook_set() {
        assert_eq!(response_time(1, 0, &[], 4), Rta::Converged(1));
        assert_eq!(response_time(2, 0, &[(1, 4)], 6), Rta::Converged(3));
        assert_eq!(
            response_time(3, 0, &[(1, 4), (2, 6)], 12),
            Rta::Converged(10)
        );
        assert!(matches!(
            response_time(3, 0, &[(2, 4), (2, 6)], 12),
            Rta::Exceeds(_)
        ));
        // Blocking adds to the first iterate and may pull in more interference.
        assert_eq!(response_time(2, 2, &[(1, 4)], 6), Rta::Converged(6));
    }
}

//! Infrastructure shared by the fair classes (CFS, `linux_cfs.rs`, and EEVDF,
//! `linux_eevdf.rs`): load weights and their fixed-point arithmetic (`weights.rs`) and the
//! tunables both classes have (this file).

pub mod weights;

use super::tunables::{ChoiceCell, IntCell, Tunable, MAX};

/// `sysctl_sched_tunable_scaling` (`enum sched_tunable_scaling`): how the latency
/// defaults grow with the number of CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scaling {
    /// SCHED_TUNABLESCALING_NONE: × 1.
    None,
    /// SCHED_TUNABLESCALING_LOG: × (1 + ilog2(min(ncpus, 8))), the default.
    #[default]
    Log,
    /// SCHED_TUNABLESCALING_LINEAR: × min(ncpus, 8).
    Linear,
}

impl Scaling {
    /// The sysctl's numeric value.
    pub fn value(self) -> u32 {
        self as u32
    }
}

impl ChoiceCell for Scaling {
    fn names(&self) -> Vec<&'static str> {
        vec!["0", "1", "2"]
    }
    fn name(&self) -> &'static str {
        ["0", "1", "2"][*self as usize]
    }
    fn select(&mut self, index: usize) {
        *self = [Scaling::None, Scaling::Log, Scaling::Linear][index];
    }
}

/// A latency sysctl: its normalised value (`normalized_sysctl_*`, scaled by the factor of
/// `get_update_sysctl_factor`) unless a value was written, which is used as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    pub normalized: u64,
    pub explicit: Option<u64>,
}

impl Scaled {
    pub const fn normalized(ns: u64) -> Scaled {
        Scaled {
            normalized: ns,
            explicit: None,
        }
    }

    /// The effective value for a scaling factor (`update_sysctl`).
    pub fn effective(self, factor: u64) -> u64 {
        self.explicit.unwrap_or(factor * self.normalized)
    }
}

impl IntCell for Scaled {
    fn get(&self) -> Option<i64> {
        Some(self.explicit.unwrap_or(self.normalized) as i64)
    }
    fn set(&mut self, v: i64) {
        self.explicit = Some(v as u64);
    }
}

/// The tunables CFS and EEVDF share: scaling, wake-up preemption and the load balancer's.
#[derive(Clone, Debug)]
pub struct FairParams {
    pub scaling: Scaling,
    /// Feature WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// Balance interval of an idle CPU in ms; `None` = the flat domain's `min_interval`
    /// (its span weight, the number of CPUs).
    pub balance_interval_ms: Option<u64>,
    pub busy_factor: u64,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
}

impl Default for FairParams {
    fn default() -> Self {
        FairParams {
            scaling: Scaling::Log,
            wakeup_preemption: true,
            balance_interval_ms: None,
            busy_factor: 32,
            imbalance_pct: 117,
            cache_nice_tries: 1,
            nr_migrate: 32,
        }
    }
}

impl FairParams {
    /// The shared rows of the fair classes' tunables tables.
    pub fn tunables() -> Vec<Tunable<FairParams>> {
        vec![
            Tunable::choice(
                "sched_tunable_scaling",
                "how the latency defaults scale with CPUs: 0 none, 1 log (1+ilog2), 2 linear",
                |p| &mut p.scaling,
            ),
            Tunable::flag(
                "wakeup_preemption",
                "feature WAKEUP_PREEMPTION: SCHED_NORMAL wake-ups may preempt",
                |p| &mut p.wakeup_preemption,
            ),
            Tunable::ms(
                "balance_interval_ms",
                "periodic load-balance interval of an idle CPU in ms (the flat domain's \
                 min_interval = sd_weight); a busy CPU uses it × busy_factor",
                1,
                MAX,
                |p: &mut FairParams| &mut p.balance_interval_ms,
            )
            .derived("ncpus"),
            Tunable::int(
                "busy_factor",
                "balance-interval multiplier for a busy CPU (sd->busy_factor, v5.4)",
                1,
                MAX,
                |p| &mut p.busy_factor,
            ),
            Tunable::int(
                "imbalance_pct",
                "a busy CPU pulls only if busiest load × 100 > its load × imbalance_pct",
                100,
                MAX,
                |p| &mut p.imbalance_pct,
            ),
            Tunable::int(
                "cache_nice_tries",
                "failed balance passes after which cache-hot tasks may be migrated",
                0,
                MAX,
                |p| &mut p.cache_nice_tries,
            ),
            Tunable::int(
                "sched_nr_migrate",
                "most tasks moved by one balance pass (sysctl_sched_nr_migrate)",
                1,
                MAX,
                |p| &mut p.nr_migrate,
            ),
        ]
    }
}

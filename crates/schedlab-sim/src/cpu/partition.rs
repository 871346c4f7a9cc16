//! Partitioned placement, shared by the partitioned kernels (`fp`, and `edf` in its
//! `partitioned` mode): each processor has its own ready queue and a task belongs to one
//! processor, as in TOPPERS/FMP (one ready queue per processor, a task's processor fixed
//! when it is created).
//!
//! The rule: a task is assigned to a CPU when it is created — its only CPU if its affinity
//! names one, else the allowed CPU with the fewest tasks assigned so far (the lowest number
//! on ties) — and never migrates afterwards unless a change of affinity excludes its CPU,
//! when it goes to the lowest-numbered CPU it may use. A model of a static partition: the
//! count balances the number of tasks per CPU, not their load.

use crate::sched::WakeKind;
use crate::types::{CpuId, CpuMask};

/// The tasks assigned to each CPU so far.
pub struct Partition {
    assigned: Vec<u32>,
}

impl Partition {
    pub fn new(nr_cpus: usize) -> Self {
        Partition {
            assigned: vec![0; nr_cpus],
        }
    }

    /// The CPU of a task allowed on `allowed` that ran (or was created) on `prev`: at
    /// creation (`WakeKind::Fork`) the least-loaded allowed CPU, which is then counted;
    /// afterwards `prev` while allowed, else the first allowed CPU.
    pub fn select(&mut self, allowed: CpuMask, prev: CpuId, kind: WakeKind) -> CpuId {
        if kind == WakeKind::Fork {
            let cpu = allowed
                .iter()
                .min_by_key(|c| (self.assigned[c.idx()], c.0))
                .expect("empty affinity");
            self.assigned[cpu.idx()] += 1;
            return cpu;
        }
        if allowed.contains(prev) {
            prev
        } else {
            allowed.first().expect("empty affinity")
        }
    }
}

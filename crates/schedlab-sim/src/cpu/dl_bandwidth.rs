//! SCHED_DEADLINE bandwidth arithmetic: the fixed-point utilisations, admission control
//! and GRUB's reclaiming rate, as Linux computes them.
//!
//! Sources (torvalds/linux, read in the Debian linux-source trees of the same versions):
//! - `kernel/sched/sched.h` (6.1 l. 175, 2370-2374): `DL_SCALE = 10`, `BW_SHIFT = 20`,
//!   `BW_UNIT`, `RATIO_SHIFT = 8`; `__dl_overflow` (6.12 `kernel/sched/deadline.c`
//!   l. 238-243, same in 6.1): `dl_b->bw != -1 && cap_scale(dl_b->bw, cap) <
//!   dl_b->total_bw - old_bw + new_bw`, with `cap` the root domain's capacity
//!   (`SCHED_CAPACITY_SCALE` per CPU on a symmetric machine, so `cap_scale(bw, cap)` is
//!   `bw × CPUs`);
//! - `kernel/sched/core.c` (6.1 l. 4707-4721) `to_ratio(period, runtime) =
//!   (runtime << BW_SHIFT) / period`;
//! - `kernel/sched/deadline.c` 6.1 l. 2819-2830 / 6.12 l. 3431-3442
//!   `init_dl_rq_bw_ratio` (`bw_ratio`, `extra_bw`, and 6.12's `max_bw`), `init_dl_bw`
//!   (`dl_b->bw`: -1 when `sched_rt_runtime_us` is -1, else `to_ratio(rt_period,
//!   rt_runtime)`), `__dl_add` / `__dl_sub` (`total_bw`, and `extra_bw` of every CPU of
//!   the root domain lowered by `tsk_bw / cpus`, an integer division per task);
//! - `grub_reclaim`: 6.1 l. 1283-1307, `dq = -max{u·bw_ratio, 1 - U_inact - U_extra} dt`;
//!   6.12 l. 1426-1444 (commit "sched/deadline: Fix reclaim inaccuracy with SMP", 6.6),
//!   `dq = -(max{u, U_max - U_inact - U_extra} / U_max) dt`;
//! - 6.12 `dl_server_start` (l. 1829-1845): each CPU's fair server reserves 50 ms every
//!   1 s through `dl_server_apply_params(.., init = 1)`, i.e. `__dl_add` of its bandwidth
//!   to the root domain and `__add_rq_bw` to its CPU.

use schedlab_spec::model;
pub use schedlab_spec::model::{to_ratio, BW_SHIFT, BW_UNIT};
/// `RATIO_SHIFT`: `bw_ratio` (1 / U_max) has 8 fractional bits.
pub const RATIO_SHIFT: u32 = 8;
/// `DL_SCALE`: `dl_entity_overflow` drops this many low bits of each time (~1 µs).
pub const DL_SCALE: u32 = 10;

/// The fair server's reservation in Linux 6.8+ (`dl_server_start`): runtime and period.
pub const FAIR_SERVER_RUNTIME_NS: u64 = 50_000_000;
pub const FAIR_SERVER_PERIOD_NS: u64 = 1_000_000_000;

/// The kernel whose deadline class is modelled: the two differ in GRUB's rate and in the
/// fair server's reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DlKernel {
    /// Linux 6.1 (linux-cfs's stack).
    V6_1,
    /// Linux 6.12 (linux-eevdf's stack): the 6.6 GRUB fix and the (deferred) fair server.
    V6_12,
}

impl DlKernel {
    pub fn name(self) -> &'static str {
        match self {
            DlKernel::V6_1 => "Linux 6.1",
            DlKernel::V6_12 => "Linux 6.12",
        }
    }

    /// Bandwidth each CPU's default fair server holds in the root domain (none in 6.1).
    pub fn fair_server_bw(self) -> u64 {
        match self {
            DlKernel::V6_1 => 0,
            DlKernel::V6_12 => to_ratio(FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS),
        }
    }
}

/// The global RT bandwidth the deadline class reads (`sched_rt_runtime_us`,
/// `sched_rt_period_us`) and what it derives from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalBw {
    /// `dl_b->bw` (the per-CPU admission limit), `None` for -1 (`RUNTIME_INF`: no limit).
    pub bw: Option<u64>,
    /// `dl_rq->bw_ratio`: 1 / U_max with [`RATIO_SHIFT`] fractional bits.
    pub bw_ratio: u64,
    /// `dl_rq->max_bw` (6.12), and the initial `extra_bw` of every CPU.
    pub max_bw: u64,
}

impl GlobalBw {
    /// From the root cgroup's `cpu.rt_runtime_us` / `cpu.rt_period_us`, which are the
    /// sysctls (the kernel's defaults where the spec does not set them).
    pub fn of_root(root: &model::CpuCgroup) -> GlobalBw {
        GlobalBw::new(
            root.rt_runtime_us.unwrap_or(model::ROOT_RT_RUNTIME_US),
            root.rt_period_us.unwrap_or(model::DEFAULT_RT_PERIOD_US) as i64,
        )
    }

    /// From the sysctls in µs (`runtime_us` -1 = `RUNTIME_INF`).
    pub fn new(runtime_us: i64, period_us: i64) -> GlobalBw {
        if runtime_us < 0 {
            return GlobalBw {
                bw: None,
                bw_ratio: 1 << RATIO_SHIFT,
                max_bw: BW_UNIT,
            };
        }
        let (runtime, period) = (runtime_us as u64 * 1000, period_us as u64 * 1000);
        let bw = to_ratio(period, runtime);
        GlobalBw {
            bw: Some(bw),
            bw_ratio: to_ratio(runtime, period) >> (BW_SHIFT - RATIO_SHIFT),
            max_bw: bw,
        }
    }

    /// `__dl_overflow`: would a root domain of `cpus` CPUs holding `total` overflow if a
    /// task's bandwidth went from `old` to `new`?
    pub fn overflows(&self, cpus: usize, total: u64, old: u64, new: u64) -> bool {
        self.bw
            .is_some_and(|bw| (bw as u128) * (cpus as u128) < (total - old + new) as u128)
    }

    /// The utilisation `U_max` as a fraction (for messages).
    pub fn limit(&self) -> Option<f64> {
        self.bw.map(|bw| bw as f64 / BW_UNIT as f64)
    }
}

/// What `grub_reclaim` reads of a CPU's deadline run queue.
#[derive(Clone, Copy, Debug)]
pub struct GrubRq {
    /// `this_bw`: bandwidth of the deadline tasks assigned to the CPU.
    pub this_bw: u64,
    /// `running_bw`: bandwidth of its active ones (contending, or blocked before their
    /// 0-lag time).
    pub running_bw: u64,
    /// `extra_bw`: the CPU's share of the root domain's unreserved bandwidth.
    pub extra_bw: u64,
}

/// `grub_reclaim(delta, rq, dl_se)`: the runtime a reclaiming task of bandwidth `dl_bw`
/// is charged for running `delta` ns.
pub fn grub_reclaim(kernel: DlKernel, g: &GlobalBw, rq: &GrubRq, dl_bw: u64, delta: u64) -> u64 {
    let u_inact = rq.this_bw.saturating_sub(rq.running_bw);
    let u_act = match kernel {
        DlKernel::V6_1 => {
            let u_act_min = (dl_bw * g.bw_ratio) >> RATIO_SHIFT;
            if u_inact + rq.extra_bw > BW_UNIT.saturating_sub(u_act_min) {
                u_act_min
            } else {
                BW_UNIT - u_inact - rq.extra_bw
            }
        }
        DlKernel::V6_12 => {
            let u = if u_inact + rq.extra_bw > g.max_bw.saturating_sub(dl_bw) {
                dl_bw
            } else {
                g.max_bw - u_inact - rq.extra_bw
            };
            (u * g.bw_ratio) >> RATIO_SHIFT
        }
    };
    ((delta as u128 * u_act as u128) >> BW_SHIFT) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_ratio_is_runtime_over_period_in_20_bit_fixed_point() {
        assert_eq!(to_ratio(100, 25), BW_UNIT / 4);
        assert_eq!(to_ratio(1_000_000, 950_000), 996_147);
        assert_eq!(to_ratio(0, 5), 0);
    }

    #[test]
    fn default_sysctls_give_the_kernels_ratios() {
        let g = GlobalBw::of_root(&model::CpuCgroup::default());
        assert_eq!(g.bw, Some(996_147));
        // to_ratio(950000 µs, 1 s) >> 12 = 1103764 >> 12.
        assert_eq!(g.bw_ratio, 269);
        assert!(!g.overflows(2, 0, 0, 2 * 996_147));
        assert!(g.overflows(2, 0, 0, 2 * 996_147 + 1));
        assert_eq!(GlobalBw::new(-1, 1_000_000).bw, None);
    }
}

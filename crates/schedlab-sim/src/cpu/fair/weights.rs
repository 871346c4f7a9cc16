//! Load weights and the fixed-point arithmetic of the fair class, shared by CFS and EEVDF.
//!
//! Source: torvalds/linux `kernel/sched/core.c` `sched_prio_to_weight` /
//! `sched_prio_to_wmult` and `set_load_weight` (SCHED_IDLE: `WEIGHT_IDLEPRIO`,
//! `WMULT_IDLEPRIO`); `kernel/sched/fair.c` `__update_inv_weight`, `__calc_delta`,
//! `calc_delta_fair` and `get_update_sysctl_factor` (unchanged from v5.4 to 6.12; read in
//! the v5.7-era stored copy 00061968 and in Linux 6.1.192). The arithmetic is the
//! kernel's 32-bit fixed point, so virtual times round bit for bit as the kernel's do.

use crate::types::{Policy, SchedAttrs};

/// `sched_prio_to_weight[40]` (kernel/sched/core.c), index = nice + 20.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, // -20 .. -16
    29154, 23254, 18705, 14949, 11916, // -15 .. -11
    9548, 7620, 6100, 4904, 3906, // -10 .. -6
    3121, 2501, 1991, 1586, 1277, // -5 .. -1
    1024, 820, 655, 526, 423, // 0 .. 4
    335, 272, 215, 172, 137, // 5 .. 9
    110, 87, 70, 56, 45, // 10 .. 14
    36, 29, 23, 18, 15, // 15 .. 19
];

/// `sched_prio_to_wmult[40]` = 2^32 / weight (kernel/sched/core.c), index = nice + 20.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, // -20 .. -16
    147320, 184698, 229616, 287308, 360437, // -15 .. -11
    449829, 563644, 704093, 875809, 1099582, // -10 .. -6
    1376151, 1717300, 2157191, 2708050, 3363326, // -5 .. -1
    4194304, 5237765, 6557202, 8165337, 10153587, // 0 .. 4
    12820798, 15790321, 19976592, 24970740, 31350126, // 5 .. 9
    39045157, 49367440, 61356676, 76695844, 95443717, // 10 .. 14
    119304647, 148102320, 186737708, 238609294, 286331153, // 15 .. 19
];

/// SCHED_IDLE weight and inverse (`WEIGHT_IDLEPRIO`, `WMULT_IDLEPRIO`).
pub const WEIGHT_IDLEPRIO: u32 = 3;
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// `NICE_0_LOAD` with the fixed-point scaling removed (`scale_load_down`).
pub const NICE_0_LOAD: u64 = 1024;
const WMULT_CONST: u64 = 0xFFFF_FFFF;
const WMULT_SHIFT: u32 = 32;

/// `(weight, inv_weight)` of a fair task (`set_load_weight`).
pub fn weight_of(attrs: &SchedAttrs) -> (u32, u32) {
    if attrs.policy == Policy::Idle {
        return (WEIGHT_IDLEPRIO, WMULT_IDLEPRIO);
    }
    let i = (attrs.nice.clamp(-20, 19) + 20) as usize;
    (SCHED_PRIO_TO_WEIGHT[i], SCHED_PRIO_TO_WMULT[i])
}

/// `__calc_delta(delta, weight, lw)`: `delta * weight / lw.weight` in the kernel's
/// fixed point. `lw_inv = 0` means "not cached": it is computed as `WMULT_CONST / lw`
/// (`__update_inv_weight`), as for a run queue's load; a task's own weight carries the
/// `sched_prio_to_wmult` value instead.
pub fn calc_delta(delta: u64, weight: u64, lw_weight: u64, lw_inv: u32) -> u64 {
    let inv = if lw_inv != 0 {
        lw_inv as u64
    } else if lw_weight >= WMULT_CONST {
        1
    } else {
        // A zero weight gets WMULT_CONST, as in __update_inv_weight.
        WMULT_CONST.checked_div(lw_weight).unwrap_or(WMULT_CONST)
    };
    let mut fact = weight;
    let mut shift = WMULT_SHIFT;
    while fact >> 32 != 0 {
        fact >>= 1;
        shift -= 1;
    }
    // mul_u32_u32
    fact = (fact & 0xFFFF_FFFF) * inv;
    while fact >> 32 != 0 {
        fact >>= 1;
        shift -= 1;
    }
    // mul_u64_u32_shr
    ((delta as u128 * fact as u128) >> shift) as u64
}

/// `calc_delta_fair(delta, se)`: wall time → virtual time for an entity of this weight.
#[inline]
pub fn calc_delta_fair(delta: u64, weight: u32, inv_weight: u32) -> u64 {
    if weight as u64 == NICE_0_LOAD {
        delta
    } else {
        calc_delta(delta, NICE_0_LOAD, weight as u64, inv_weight)
    }
}

/// `get_update_sysctl_factor`: 1 (none), ncpus (linear) or 1 + ilog2(ncpus) (log), with
/// ncpus capped at 8.
pub fn sysctl_factor(nr_cpus: usize, scaling: u32) -> u64 {
    let cpus = nr_cpus.clamp(1, 8) as u64;
    match scaling {
        0 => 1,
        2 => cpus,
        _ => 1 + cpus.ilog2() as u64,
    }
}

//! Instruments of seed 000 ("Linux-family schedulers"): facts about a policy computed by
//! the policy's own code, without running a workload.
//!
//! - [`timeslice_table`]: the timeslice each nice level gets from
//!   [`Scheduler::timeslice_ns`] (O(1) `task_timeslice`, the staircase `slice`, BFS's
//!   `timeslice()`, …), for `schedlab timeslice`.

use crate::cpu::{self, PolicyVisitor};
use crate::sched::Scheduler;
use crate::types::{Policy, SchedAttrs};
use crate::{check_hz, SimError};

/// The nice levels of SCHED_OTHER, best first.
pub const NICE_RANGE: std::ops::RangeInclusive<i32> = -20..=19;

/// The timeslice (ns) `scheduler` gives a lone SCHED_OTHER task of each nice level −20..=19
/// at tick rate `hz`, in nice order. `None` for a nice level means the policy has no
/// per-task slice (CFS/EEVDF: it depends on the load). The policy is built through the
/// registry with its default tunables. Errors: unknown scheduler, unsupported HZ.
pub fn timeslice_table(scheduler: &str, hz: u32) -> Result<Vec<(i32, Option<u64>)>, SimError> {
    check_hz(hz)?;
    cpu::construct(scheduler, 1, Timeslices { hz }).map_err(SimError::input)
}

struct Timeslices {
    hz: u32,
}

impl PolicyVisitor for Timeslices {
    type Out = Vec<(i32, Option<u64>)>;

    fn visit<S: Scheduler>(self, policy: S) -> Self::Out {
        NICE_RANGE
            .map(|nice| {
                let attrs = SchedAttrs {
                    policy: Policy::Other,
                    rt_priority: 0,
                    nice,
                    dl: None,
                };
                (nice, policy.timeslice_ns(&attrs, self.hz))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Option<u64> {
        Some(v * 1_000_000)
    }

    #[test]
    fn o1_matches_task_timeslice() {
        // Pinned in tests/linux_o1.rs and linux_o1.rs `worked_timeslices` (jiffies → ns).
        let t = timeslice_table("linux-o1", 1000).unwrap();
        assert_eq!(t.len(), 40);
        let at = |n: i32| t.iter().find(|x| x.0 == n).unwrap().1;
        for (nice, v) in [
            (-20, 800),
            (-10, 600),
            (-1, 420),
            (0, 100),
            (5, 75),
            (10, 50),
            (15, 25),
            (19, 5),
        ] {
            assert_eq!(at(nice), ms(v), "HZ 1000 nice {nice}");
        }
        // HZ 100: 139 → 1 jiffy, 120 → 10, 100 → 80 (tests/linux_o1.rs).
        let t = timeslice_table("linux-o1", 100).unwrap();
        let at = |n: i32| t.iter().find(|x| x.0 == n).unwrap().1;
        assert_eq!(at(19), ms(10));
        assert_eq!(at(0), ms(100));
        assert_eq!(at(-20), ms(800));
        // HZ 250: nice 10 → 12 jiffies = 48 ms (the load_weight_nice0 test's slice).
        let t = timeslice_table("linux-o1", 250).unwrap();
        assert_eq!(t.iter().find(|x| x.0 == 10).unwrap().1, ms(48));
    }

    #[test]
    fn other_policies() {
        for fair in ["linux-cfs", "linux-eevdf"] {
            assert!(timeslice_table(fair, 1000)
                .unwrap()
                .iter()
                .all(|x| x.1.is_none()));
        }
        // BFS/MuQSS: rr_interval 6 ms as MS_TO_US(6) µs, whatever the nice.
        for vd in ["bfs", "muqss"] {
            let t = timeslice_table(vd, 1000).unwrap();
            assert!(t.iter().all(|x| x.1 == Some((6u64 << 10) * 1000)), "{vd}");
        }
        // Staircase at HZ 1000: RR_INTERVAL = 6 jiffies; nice 0 slice = 20 stairs.
        let t = timeslice_table("staircase", 1000).unwrap();
        assert_eq!(t.iter().find(|x| x.0 == 0).unwrap().1, ms(6 * 20));
        assert_eq!(t.iter().find(|x| x.0 == 19).unwrap().1, ms(6));
    }

    /// SCHED_RR gets `RR_TIMESLICE` (100 ms) from linux-rt under linux-cfs/eevdf and from
    /// `task_timeslice` at nice 0 under O(1); SCHED_FIFO has no slice anywhere.
    #[test]
    fn rt_policies() {
        struct Ask(SchedAttrs, u32);
        impl PolicyVisitor for Ask {
            type Out = Option<u64>;
            fn visit<S: Scheduler>(self, policy: S) -> Option<u64> {
                policy.timeslice_ns(&self.0, self.1)
            }
        }
        let rt = |policy| SchedAttrs {
            policy,
            rt_priority: 10,
            nice: 0,
            dl: None,
        };
        for name in ["linux-cfs", "linux-eevdf", "linux-o1"] {
            for hz in [100, 250, 1000] {
                let rr = cpu::construct(name, 1, Ask(rt(Policy::Rr), hz)).unwrap();
                assert_eq!(rr, ms(100), "{name} HZ {hz}");
                let fifo = cpu::construct(name, 1, Ask(rt(Policy::Fifo), hz)).unwrap();
                assert_eq!(fifo, None, "{name} HZ {hz}");
            }
        }
    }

    #[test]
    fn bad_input() {
        let e = timeslice_table("nope", 1000).unwrap_err();
        assert!(e.bad_input && e.message.contains("unknown scheduler"));
        let e = timeslice_table("linux-o1", 123).unwrap_err();
        assert!(e.bad_input && e.message.contains("hz"));
    }
}

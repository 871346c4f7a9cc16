//! Which family of systems each registered policy comes from, so that front ends can
//! group policies (the seed-000 report runs every Linux-family policy) without keeping
//! their own copy of the list.
//!
//! Families: `"linux"` — schedulers written for the Linux kernel, mainline or patches
//! (O(1), CFS, EEVDF, staircase, nicksched, BFS, MuQSS, plugsched's ingo_ll); `"rtos"` —
//! fixed-priority RTOS kernels (μITRON); `"teaching"` — templates for writing a policy.

/// The family of the policy `name` (available or listed as unavailable), or `None` for a
/// name the registry does not list.
pub fn family_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "linux-cfs" | "linux-eevdf" | "linux-o1" | "staircase" | "nicksched" | "bfs" | "muqss"
        | "ingo_ll" => "linux",
        "fp" => "rtos",
        "example-fifo" => "teaching",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::family_of;

    #[test]
    fn every_listed_policy_has_a_family() {
        for entry in crate::cpu::schedulers() {
            assert!(
                family_of(entry.info.name).is_some(),
                "{} has no family",
                entry.info.name
            );
        }
        assert_eq!(family_of("no-such-policy"), None);
    }
}

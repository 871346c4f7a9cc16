//! WF_SYNC: a pipe write wakes its reader with a sync wake-up, and the 2.6-era schedulers
//! do not preempt the waker for it on the waker's CPU (O(1) and staircase: `if (!sync ||
//! cpu != this_cpu)` in try_to_wake_up; the 2.6.0 base of nicksched: `if (sync)
//! __activate_task`; BFS `ttwu_activate`: `if (!is_sync || suitable_idle_cpus(p))`). A
//! condition-variable signal (futex) is not sync, and the same wakee preempts at once.
//!
//! The workload, on one CPU: `reader` (nice −10: better under every policy, whatever its
//! bonus) sleeps 50 ms, then blocks; `writer` burns 97.3 ms (a CPU hog by then; not a multiple of any timeslice, so no slice expires at the wake-up), wakes the
//! reader, and burns 1 ms more before it exits. With a sync wake-up the reader waits until the
//! writer leaves the CPU: at its exit, or earlier if its slice ends (nicksched's small
//! slices end 0.7 ms later); with a non-sync one it runs at once.
mod common;
use common::*;

fn workload(sync: bool) -> schedlab_spec::model::Spec {
    let (reader_wait, writer_wake) = if sync {
        (
            r#""schedlab:read": {"chan": "p", "bytes": 64}"#,
            r#""schedlab:write": {"chan": "p", "bytes": 64}"#,
        )
    } else {
        (
            r#""lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m""#,
            r#""lock": "m", "signal": "c", "unlock": "m""#,
        )
    };
    let text = format!(
        r#"{{
        "tasks": {{
            "reader": {{"loop": 1, "priority": -10, "sleep": 50000, {reader_wait}, "run": 100}},
            "writer": {{"loop": 1, "priority": 10, "run": 97300, {writer_wake}, "run": 1000}}
        }},
        "schedlab": {{
            "machine": {{"cpus": 1, "hz": 1000}},
            "pipes": {{"p": {{"capacity": 65536, "op_cost_ns": 0, "byte_cost_ps": 0}}}}
        }}
    }}"#
    );
    schedlab_spec::parse_spec(&text).expect("test spec parses")
}

/// The reader's longest wake-up latency (ns).
fn reader_latency(sched: &str, sync: bool) -> u64 {
    let out = run(&workload(sync), sched, true);
    task_json(&out, "reader")["wakeup_latency_ns"]["max"]
        .as_u64()
        .expect("the reader woke")
}

const MS: u64 = 1_000_000;

#[test]
fn sync_wakeup_does_not_preempt_the_waker_in_2_6_era_schedulers() {
    for sched in ["linux-o1", "staircase", "nicksched", "bfs"] {
        let plain = reader_latency(sched, false);
        let sync = reader_latency(sched, true);
        assert!(
            plain < MS / 10,
            "{sched}: a futex wake-up preempts at once ({plain} ns)"
        );
        assert!(
            (MS / 2..=MS).contains(&sync),
            "{sched}: a sync wake-up waits for the waker to leave the CPU ({sync} ns)"
        );
    }
}

/// CFS and EEVDF take no notice of WF_SYNC when deciding to preempt (it only steers
/// wake_affine), so the pipe wake-up preempts as the futex one does.
#[test]
fn cfs_and_eevdf_ignore_sync_for_preemption() {
    for sched in ["linux-cfs", "linux-eevdf"] {
        let plain = reader_latency(sched, false);
        let sync = reader_latency(sched, true);
        assert_eq!(plain, sync, "{sched}");
    }
}

//! rt-app "unique" timers when a task's program uses several: each keeps its own expiry
//! sequence per task instance (run through `simulate_text`, as a user's spec is).

use schedlab_sim::{simulate_text, SimConfig};

/// Three unique timers of 1, 3 and 5 ms used in turn, twice. Each timer is anchored at
/// the task's start and advanced by its own period: the first round sleeps until 1, 3 and
/// 5 ms; in the second the 1 ms timer's expiry (2 ms) is already past (absolute mode: no
/// sleep), the 3 ms one sleeps until 6 ms and the 5 ms one until 10 ms, when the task
/// ends. Had two timers shared an expiry, the task would end elsewhere.
#[test]
fn each_unique_timer_of_a_program_keeps_its_own_expiries() {
    let spec = r#"{
        "global": {"duration": -1},
        "tasks": {
            "t": {
                "loop": 2, "policy": "SCHED_FIFO", "priority": 10,
                "timer0": {"ref": "uniqueA", "period": 1000},
                "timer1": {"ref": "uniqueB", "period": 3000},
                "timer2": {"ref": "uniqueC", "period": 5000}
            },
            "u": {
                "instance": 2, "loop": 2, "policy": "SCHED_FIFO", "priority": 20,
                "timer0": {"ref": "uniqueB", "period": 2000},
                "timer1": {"ref": "uniqueA", "period": 7000}
            }
        },
        "schedlab": {"machine": {"cpus": 2}}
    }"#;
    for sched in ["fp", "linux-cfs"] {
        let cfg = SimConfig {
            scheduler: Some(sched.into()),
            ..SimConfig::default()
        };
        let out = simulate_text(spec, &cfg).unwrap_or_else(|e| panic!("{sched}: {e}"));
        let tasks = &out.result.tasks;
        // t: 2 rounds of 3 timer releases; u (each instance): 2 rounds of 2, the second
        // round's 2 ms timer due at 4 ms, then the 7 ms one at 14 ms.
        let acts: Vec<(&str, u64)> = tasks
            .iter()
            .map(|t| (t.name.as_str(), t.activations))
            .collect();
        assert_eq!(acts, vec![("t", 6), ("u", 4), ("u-1", 4)], "{sched}");
        assert_eq!(out.result.summary.makespan_ns, Some(14_000_000), "{sched}");
    }
}

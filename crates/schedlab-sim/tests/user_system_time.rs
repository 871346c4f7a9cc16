//! A task's CPU time split as `time(1)` splits it, through the engine: system time is the
//! kernel spans it completed (sleep set-up, channel calls, fork, wake-ups, exit),
//! interrupt time what ticks and timer expiries charged to it, user time the rest.
mod common;
use common::*;

fn task<'a>(out: &'a schedlab_sim::SimOutput, name: &str) -> &'a schedlab_core::result::TaskResult {
    out.result.tasks.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn system_time_is_the_kernel_spans_and_user_time_the_runs() {
    for policy in ["fp", "linux-cfs", "freebsd-4bsd"] {
        let spec = schedlab_spec::parse_spec(
            r#"{"tasks": {
                  "w": {"loop": 10, "run": 1000, "sleep": 1000,
                        "schedlab:write": {"chan": "p", "bytes": 100}},
                  "r": {"loop": 10, "schedlab:read": {"chan": "p", "bytes": 100}}},
                "schedlab": {
                  "machine": {"cpus": 1, "hz": 1000, "sleep_ns": 5000, "exit_ns": 7000,
                              "kernel": {"tick_ns": 300}},
                  "pipes": {"p": {"op_cost_ns": 2000, "byte_cost_ps": 0}}}}"#,
        )
        .unwrap();
        let out = run(&spec, policy, true);
        let w = task(&out, "w");
        // 10 sleeps at 5 µs, 10 writes at 2 µs, the exit at 7 µs.
        assert_eq!(w.sys_ns, 10 * 5_000 + 10 * 2_000 + 7_000, "{policy}");
        assert_eq!(
            w.cpu_ns - w.sys_ns - w.irq_ns,
            10 * 1_000_000,
            "{policy}: user time"
        );
        // Ticks hit the writer while it ran: each charged it 300 ns.
        assert!(
            w.irq_ns > 0 && w.irq_ns.is_multiple_of(300),
            "{policy}: {}",
            w.irq_ns
        );
        let r = task(&out, "r");
        assert_eq!(r.sys_ns, 10 * 2_000 + 7_000, "{policy}");
        let totals = &out.result.summary.totals;
        assert_eq!(totals.sys_ns, w.sys_ns + r.sys_ns);
        assert_eq!(totals.cpu_ns, w.cpu_ns + r.cpu_ns);
    }
}

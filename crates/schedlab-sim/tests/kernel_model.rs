//! The kernel's own execution through the engine (specs parsed from JSON, run end to end):
//! where each preemption model lets a reschedule asked for during a kernel span take
//! effect, jiffy timers, timer slack, and interrupt costs charged to the task they
//! interrupt.
//!
//! The span workload, on one CPU at HZ=1000: `writer` (SCHED_OTHER) writes one byte into a
//! pipe and reads it back, again and again, and the pipe's calls cost 1 ms each, so it runs
//! kernel spans [k, k+1) ms back to back; `rt` (SCHED_FIFO) sleeps until 2.5 ms, in the middle of the span [2, 3) ms, then
//! runs 100 µs. Its wake-up latency is where the model let it in.
mod common;
use common::*;

use serde_json::Value;

fn parse(text: &str) -> schedlab_spec::model::Spec {
    schedlab_spec::parse_spec(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The span workload with `kernel` as `machine.kernel`. It lifts the global RT limit
/// (`sched_rt_runtime_us` = -1, the root's `cpu.rt_runtime_us`): the limit's period timer
/// would be one more hrtimer expiry, charged `timer_irq_ns` like the sleep timer under test.
fn span_workload(kernel: &str) -> schedlab_spec::model::Spec {
    parse(&format!(
        r#"{{
        "global": {{"duration": 1}},
        "tasks": {{
            "writer": {{"loop": -1, "schedlab:write": {{"chan": "p", "bytes": 1}},
                        "schedlab:read": {{"chan": "p", "bytes": 1}}}},
            "rt": {{"loop": 1, "policy": "SCHED_FIFO", "priority": 50,
                    "sleep": 2500, "run": 100}}
        }},
        "schedlab": {{
            "machine": {{"cpus": 1, "hz": 1000, "kernel": {kernel}}},
            "pipes": {{"p": {{"capacity": 1048576, "op_cost_ns": 1000000, "byte_cost_ps": 0}}}},
            "cgroups": {{"/": {{"cpu.rt_runtime_us": -1}}}}
        }}
    }}"#
    ))
}

fn latency(out: &schedlab_sim::SimOutput, task: &str) -> Value {
    task_json(out, task)["wakeup_latency_ns"].clone()
}

/// The RT task's wake-up latency (ns) under the span workload.
fn rt_latency(kernel: &str) -> u64 {
    let out = run(&span_workload(kernel), "linux-cfs", true);
    let l = latency(&out, "rt");
    assert_eq!(l["count"], 1, "{kernel}: one wake-up: {l}");
    l["max"].as_u64().expect("rt woke")
}

#[test]
fn under_none_an_rt_task_woken_in_a_span_runs_exactly_when_it_ends() {
    assert_eq!(rt_latency(r#"{"preempt": "none"}"#), 500 * US);
}

#[test]
fn under_full_only_the_non_preemptible_section_defers() {
    assert_eq!(rt_latency(r#"{"preempt": "full"}"#), 0);
    let section = |ns: u64| {
        rt_latency(&format!(
            r#"{{"preempt": "full", "spans": {{"pipe": {{"nonpreempt_ns": {ns}}}}}}}"#
        ))
    };
    // The section is the span's last `ns`: [2.4, 3) ms does not cover 2.5 ms.
    assert_eq!(section(400 * US), 0);
    // [2.4, 3) ms with 600 µs does: the task waits for its end, at most the section.
    assert_eq!(section(600 * US), 500 * US);
}

#[test]
fn under_voluntary_a_span_yields_at_its_next_preemption_point() {
    let k = r#"{"preempt": "voluntary", "spans": {"pipe": {"point_ns": 300000}}}"#;
    // Points at 2.3, 2.6, 2.9 ms.
    assert_eq!(rt_latency(k), 100 * US);
    // Without points, voluntary is none.
    assert_eq!(rt_latency(r#"{"preempt": "voluntary"}"#), 500 * US);
}

#[test]
fn explicit_cond_resched_is_a_point_under_none_but_might_sleep_is_not() {
    let k = r#"{"preempt": "none", "spans": {"pipe": {"point_ns": 300000, "cond_resched_ns": 200000}}}"#;
    // cond_resched at 2.2, 2.4, 2.6 ms; the might_sleep points do not count.
    assert_eq!(rt_latency(k), 100 * US);
}

#[test]
fn under_rt_only_raw_spinlocks_defer() {
    let shape = |raw: u64| {
        format!(
            r#"{{"preempt": "rt", "spans": {{"pipe": {{"nonpreempt_ns": 600000, "raw_ns": {raw}}}}}}}"#
        )
    };
    assert_eq!(rt_latency(&shape(100 * US)), 0);
    assert_eq!(rt_latency(&shape(600 * US)), 500 * US);
}

/// One span shape under the four models: none ≥ voluntary ≥ full ≥ rt, each step strict
/// where the shape gives the later model a way in that the earlier lacks.
#[test]
fn preemption_models_order_latency_as_a_kernel_does() {
    let models = |np: u64| {
        let shape = format!(
            r#""spans": {{"pipe": {{"nonpreempt_ns": {np}, "raw_ns": 50000, "point_ns": 200000}}}}"#
        );
        ["none", "voluntary", "full", "rt"]
            .map(|m| rt_latency(&format!(r#"{{"preempt": "{m}", {shape}}}"#)))
    };
    // Section [2.7, 3) ms: voluntary stops at 2.6 ms, full and rt preempt at once.
    assert_eq!(models(300 * US), [500 * US, 100 * US, 0, 0]);
    // Section [2.4, 3) ms: no preemption point outside it after 2.5 ms, and full must wait
    // for it; only rt's raw part [2.95, 3) ms is left.
    assert_eq!(models(600 * US), [500 * US, 500 * US, 500 * US, 0]);
}

/// A deferred reschedule leaves need_resched set: the engine stays consistent (checked
/// after every event) and CPU time is conserved with every model.
#[test]
fn spans_keep_the_engine_invariants_under_every_model() {
    for model in ["none", "voluntary", "full", "rt"] {
        let k = format!(
            r#"{{"preempt": "{model}", "tick_ns": 7000, "timer_irq_ns": 3000,
                "spans": {{"pipe": {{"nonpreempt_ns": 600000, "raw_ns": 50000,
                "point_ns": 300000, "cond_resched_ns": 450000}}}}}}"#
        );
        for sched in ["linux-cfs", "linux-o1", "staircase", "fp"] {
            let out = run(&span_workload(&k), sched, true);
            assert_eq!(latency(&out, "rt")["count"], 1, "{model} {sched}");
        }
    }
}

// ------------------------------------------------------------------ timers

/// One FIFO task on one CPU at HZ=1000: `loop` times run 100 µs then sleep 3 ms.
fn sleeper(kernel: &str, policy: &str) -> schedlab_sim::SimOutput {
    let spec = parse(&format!(
        r#"{{
        "tasks": {{"s": {{"loop": 4, "policy": "{policy}", "run": 100, "sleep": 3000}}}},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 1000, "kernel": {kernel}}}}}
    }}"#
    ));
    run(&spec, "linux-cfs", true)
}

#[test]
fn jiffy_timers_end_a_sleep_on_the_first_tick_after_it() {
    // Each sleep starts at k ms + 100 µs and asks for 3 ms: it ends at the next tick,
    // 900 µs late, the seed's "usleep sleeps about one jiffy too long".
    let out = sleeper(r#"{"timers": "jiffy"}"#, "SCHED_FIFO");
    let l = latency(&out, "s");
    assert_eq!(l["count"], 4, "{l}");
    assert_eq!(l["min"], 900 * US, "{l}");
    assert_eq!(l["max"], 900 * US, "{l}");
    let exact = latency(&sleeper("{}", "SCHED_FIFO"), "s");
    assert_eq!(exact["max"], 0, "exact timers: {exact}");
}

#[test]
fn jiffy_timers_fire_an_absolute_expiry_on_a_tick_one_tick_later() {
    // rt-app's timer is absolute (TIMER_ABSTIME): expiries at 2, 4, 6 ms lie on ticks, and
    // 2.6.17 runs a timer only at a tick strictly after its expiry.
    let spec = parse(
        r#"{
        "tasks": {"p": {"loop": 3, "policy": "SCHED_FIFO", "priority": 10,
                        "run": 100, "timer": {"ref": "t", "period": 2000}}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000, "kernel": {"timers": "jiffy"}}}
    }"#,
    );
    let out = run(&spec, "linux-cfs", true);
    let l = latency(&out, "p");
    assert_eq!(l["count"], 3, "{l}");
    assert_eq!(l["min"], MS, "{l}");
    assert_eq!(l["max"], MS, "{l}");
}

#[test]
fn timer_slack_delays_fair_sleepers_only() {
    let k = r#"{"timer_slack_ns": 50000}"#;
    assert_eq!(latency(&sleeper(k, "SCHED_OTHER"), "s")["max"], 50 * US);
    assert_eq!(latency(&sleeper(k, "SCHED_FIFO"), "s")["max"], 0);
}

#[test]
fn a_timer_expiry_costs_the_interrupted_task_and_delays_the_sleeper() {
    // The hog runs on the sleeper's CPU: the expiry's handler (20 µs) is its time, and
    // the sleeper wakes when the handler is done.
    let spec = parse(
        r#"{
        "global": {"duration": 1},
        "tasks": {
            "hog": {"loop": -1, "run": 1000000},
            "s": {"loop": 1, "policy": "SCHED_FIFO", "priority": 10, "sleep": 2500, "run": 100}
        },
        "schedlab": {"machine": {"cpus": 1, "hz": 1000, "kernel": {"timer_irq_ns": 20000}}}
    }"#,
    );
    let out = run(&spec, "linux-cfs", true);
    assert_eq!(latency(&out, "s")["max"], 20 * US);
}

/// The expiry's handler interrupts the span the load is in: under `none` the sleeper
/// waits for the handler and then for the rest of that span (interrupted at 2.5 ms, half
/// done), under `full` for the handler alone. The handler (1.2 ms) is longer than a span
/// (1 ms): the span must not run on while the handler does.
#[test]
fn a_timer_expiry_interrupts_the_span_it_lands_in() {
    let irq = r#""timer_irq_ns": 1200000"#;
    assert_eq!(
        rt_latency(&format!(r#"{{"preempt": "none", {irq}}}"#)),
        1700 * US
    );
    assert_eq!(
        rt_latency(&format!(r#"{{"preempt": "full", {irq}}}"#)),
        1200 * US
    );
}

// ------------------------------------------------------------------ the tick

/// One task running 10 ms of work on one CPU at HZ=1000.
fn ten_ms(kernel: &str, sched: &str) -> Value {
    let spec = parse(&format!(
        r#"{{
        "tasks": {{"w": {{"loop": 1, "run": 10000}}}},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 1000, "kernel": {kernel}}}}}
    }}"#
    ));
    task_json(&run(&spec, sched, true), "w")
}

#[test]
fn a_tick_costs_the_task_it_interrupts() {
    // Ticks at 1..=10 ms each add 10 µs to the task's CPU time and to when its work ends.
    let t = ten_ms(r#"{"tick_ns": 10000}"#, "linux-cfs");
    assert_eq!(t["cpu_ns"], 10 * MS + 100 * US, "{t}");
    let free = ten_ms("{}", "linux-cfs");
    assert_eq!(free["cpu_ns"], 10 * MS, "{free}");
}

#[test]
fn nohz_full_stops_the_tick_when_the_scheduler_allows() {
    // fp's tick changes nothing for a lone task: under nohz_full it is not taken.
    let full = ten_ms(r#"{"tick_ns": 10000, "tick": "nohz_full"}"#, "fp");
    assert_eq!(full["cpu_ns"], 10 * MS, "{full}");
    let idle = ten_ms(r#"{"tick_ns": 10000, "tick": "nohz_idle"}"#, "fp");
    assert_eq!(idle["cpu_ns"], 10 * MS + 100 * US, "{idle}");
}

#[test]
fn a_periodic_tick_on_an_idle_cpu_delays_the_task_woken_there() {
    // The task first waits for the tick handler at 0 (10 µs), then sleeps 1.995 ms, to
    // 2.005 ms, while the idle CPU's 2 ms tick handler runs until 2.010 ms: the task
    // starts then. Without an idle tick it starts at once.
    let spec = |tick: &str| {
        parse(&format!(
            r#"{{
            "tasks": {{"s": {{"loop": 1, "policy": "SCHED_FIFO", "priority": 10,
                              "sleep": 1995, "run": 100}}}},
            "schedlab": {{"machine": {{"cpus": 1, "hz": 1000,
                          "kernel": {{"tick": "{tick}", "tick_ns": 10000}}}}}}
        }}"#
        ))
    };
    let periodic = run(&spec("periodic"), "linux-cfs", true);
    assert_eq!(latency(&periodic, "s")["max"], 5 * US);
    let nohz = run(&spec("nohz_idle"), "linux-cfs", true);
    assert_eq!(latency(&nohz, "s")["max"], 0);
}

// ------------------------------------------------------------------ costs of other spans

#[test]
fn sleep_and_exit_spans_cost_their_task() {
    let spec = parse(
        r#"{
        "tasks": {"s": {"loop": 1, "run": 1000, "sleep": 1000}},
        "schedlab": {"machine": {"cpus": 1, "sleep_ns": 30000, "exit_ns": 40000}}
    }"#,
    );
    let t = task_json(&run(&spec, "linux-cfs", true), "s");
    assert_eq!(t["cpu_ns"], MS + 70 * US, "{t}");
}

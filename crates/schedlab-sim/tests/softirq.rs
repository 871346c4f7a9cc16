//! Softirq work through the engine (`machine.kernel.softirq_ns`): each tick raises it; under
//! `none`, `voluntary` and `full` the tick's interrupt exit runs it in the interrupted
//! context with preemption off, up to `softirq_limit_ns`, and ksoftirqd runs the rest;
//! under `rt` the CPU's softirq thread (ksoftirqd, or ktimers) runs all of it, and a
//! real-time task preempts that thread. Every run checks the invariants after each event
//! (CPU time conserved: busy = Σ task time + overhead).
mod common;
use common::*;

use schedlab_sim::sched::{DequeueKind, EnqueueKind, PolicyInfo, Scheduler};
use schedlab_sim::types::{CpuId, Policy, SchedAttrs, TaskId};
use schedlab_sim::Ctx;
use serde_json::Value;

fn parse(text: &str) -> schedlab_spec::model::Spec {
    schedlab_spec::parse_spec(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// One CPU at HZ=1000: `hog` (SCHED_OTHER) computes 20 ms; `rt` (SCHED_FIFO 50) sleeps until
/// 5.001 ms, 1 µs after the tick at 5 ms, then runs 100 µs.
fn rt_woken_after_a_tick(kernel: &str) -> schedlab_spec::model::Spec {
    parse(&format!(
        r#"{{
        "tasks": {{
            "hog": {{"loop": 20, "run": 1000}},
            "rt": {{"loop": 1, "policy": "SCHED_FIFO", "priority": 50, "sleep": 5001, "run": 100}}
        }},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 1000, "kernel": {kernel}}}}}
    }}"#
    ))
}

fn rt_latency(kernel: &str) -> u64 {
    let out = run(&rt_woken_after_a_tick(kernel), "linux-cfs", true);
    let l = task_json(&out, "rt")["wakeup_latency_ns"].clone();
    assert_eq!(l["count"], 1, "{kernel}: {l}");
    l["max"].as_u64().unwrap()
}

fn tasks(out: &schedlab_sim::SimOutput) -> Vec<Value> {
    out.json()["tasks"].as_array().unwrap().clone()
}

#[test]
fn under_full_a_ticks_softirq_work_delays_an_rt_task_woken_during_it_by_that_work() {
    assert_eq!(rt_latency(r#"{"preempt": "full"}"#), 0);
    // The tick at 5 ms runs 100 µs of softirq work on its exit: the task woken 1 µs in
    // waits for the other 99 µs.
    assert_eq!(
        rt_latency(r#"{"preempt": "full", "softirq_ns": 100000}"#),
        99 * US
    );
    // With the tick handler's own 10 µs before it.
    assert_eq!(
        rt_latency(r#"{"preempt": "full", "tick_ns": 10000, "softirq_ns": 100000}"#),
        109 * US
    );
    assert_eq!(
        rt_latency(r#"{"preempt": "none", "softirq_ns": 100000}"#),
        99 * US
    );
}

#[test]
fn under_rt_the_rt_task_preempts_the_softirq_thread() {
    assert_eq!(rt_latency(r#"{"preempt": "rt", "softirq_ns": 100000}"#), 0);
    assert_eq!(
        rt_latency(r#"{"preempt": "rt", "softirq_ns": 100000, "ktimers": true}"#),
        0
    );
}

/// Under `rt` the work is the thread's: ksoftirqd/0 (SCHED_OTHER) or ktimers/0 (SCHED_FIFO
/// 1), listed as a kernel thread, runs all of it (100 µs a tick); the hog pays none of it.
/// Under `full` the hog pays it all.
#[test]
fn under_rt_the_softirq_thread_runs_all_the_work() {
    for (ktimers, name, policy) in [
        (false, "ksoftirqd/0", "SCHED_OTHER"),
        (true, "ktimers/0", "SCHED_FIFO"),
    ] {
        let k = format!(r#"{{"preempt": "rt", "softirq_ns": 100000, "ktimers": {ktimers}}}"#);
        let out = run(&rt_woken_after_a_tick(&k), "linux-cfs", true);
        let thread = task_json(&out, name);
        assert_eq!(thread["kernel_thread"], true);
        assert_eq!(thread["policy"], policy);
        assert_eq!(thread["activations"], 0);
        let work = thread["cpu_ns"].as_u64().unwrap();
        assert!(
            work >= 20 * 100 * US && work.is_multiple_of(100 * US),
            "{thread}"
        );
        assert_eq!(task_json(&out, "hog")["cpu_ns"], 20 * MS);
        // Spec tasks carry no kernel_thread key; an idle thread is not a blocked task.
        assert!(task_json(&out, "hog").get("kernel_thread").is_none());
        assert_eq!(out.json()["summary"]["blocked_at_end"], 0);
        assert!(out.json()["summary"]["makespan_ns"].is_u64());
    }
    let out = run(
        &rt_woken_after_a_tick(r#"{"softirq_ns": 100000}"#),
        "linux-cfs",
        true,
    );
    let hog = task_json(&out, "hog")["cpu_ns"].as_u64().unwrap();
    assert!(
        hog > 20 * MS && (hog - 20 * MS).is_multiple_of(100 * US),
        "{hog}"
    );
    assert_eq!(task_json(&out, "ksoftirqd/0")["cpu_ns"], 0);
}

/// HZ=100, one hog computing 95 ms: each tick (every 10 ms while it runs) raises 3 ms of
/// softirq work. The hog's and ksoftirqd's CPU times, less the hog's own 95 ms.
fn heavy_softirqs(kernel: &str) -> (u64, u64) {
    let spec = parse(&format!(
        r#"{{
        "tasks": {{"hog": {{"loop": 95, "run": 1000}}}},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 100, "kernel": {kernel}}}}}
    }}"#
    ));
    let out = run(&spec, "linux-cfs", true);
    let r = out.json();
    let busy = r["cpus"][0]["busy_ns"].as_u64().unwrap();
    let total: u64 = tasks(&out)
        .iter()
        .map(|t| t["cpu_ns"].as_u64().unwrap())
        .sum();
    assert_eq!(total, busy, "{kernel}: busy = Σ task time");
    let cpu = |name: &str| task_json(&out, name)["cpu_ns"].as_u64().unwrap();
    (cpu("hog") - 95 * MS, cpu("ksoftirqd/0"))
}

#[test]
fn softirq_work_beyond_the_limit_moves_to_ksoftirqd() {
    // MAX_SOFTIRQ_TIME (2 ms) by default: of each tick's 3 ms, the interrupt exit runs 2
    // (the hog's time) and ksoftirqd 1.
    let (hog, thread) = heavy_softirqs(r#"{"softirq_ns": 3000000}"#);
    assert!(thread > 0 && thread.is_multiple_of(MS), "{thread}");
    assert_eq!(hog, 2 * thread);
    // No time limit (2.6.17): the interrupt exit runs it all.
    let (hog, thread) = heavy_softirqs(r#"{"softirq_ns": 3000000, "softirq_limit_ns": 0}"#);
    assert_eq!(thread, 0);
    assert!(hog > 0 && hog.is_multiple_of(3 * MS), "{hog}");
    let (hog, thread) = heavy_softirqs(r#"{"softirq_ns": 3000000, "softirq_limit_ns": 500000}"#);
    assert!(hog > 0 && thread == 5 * hog, "{hog} {thread}");
    // Under rt the thread runs every tick's work.
    let (hog, thread) = heavy_softirqs(r#"{"preempt": "rt", "softirq_ns": 3000000}"#);
    assert_eq!(hog, 0);
    assert!(thread > 0 && thread.is_multiple_of(3 * MS), "{thread}");
}

#[test]
fn ksoftirqd_runs_at_the_nice_the_kernel_gives_it() {
    let spec = parse(
        r#"{
        "tasks": {"hog": {"loop": 5, "run": 1000}},
        "schedlab": {"machine": {"cpus": 1, "kernel": {"softirq_ns": 1000, "ksoftirqd_nice": 19}}}
    }"#,
    );
    let out = run(&spec, "linux-cfs", true);
    assert_eq!(task_json(&out, "ksoftirqd/0")["nice"], 19);
}

/// With every new cost at 0 the run is the run without the settings (no thread is added).
#[test]
fn zero_softirq_costs_change_nothing() {
    let base = run(
        &rt_woken_after_a_tick(r#"{"tick_ns": 5000}"#),
        "linux-cfs",
        true,
    );
    let zero = run(
        &rt_woken_after_a_tick(
            r#"{"tick_ns": 5000, "softirq_ns": 0, "softirq_limit_ns": 0,
                "ktimers": true, "ksoftirqd_nice": 19}"#,
        ),
        "linux-cfs",
        true,
    );
    assert_eq!(result_bytes(&base), result_bytes(&zero));
    assert_eq!(tasks(&zero).len(), 2);
}

#[test]
fn varying_softirq_work_is_deterministic() {
    let k = r#"{"preempt": "full", "softirq_limit_ns": 50000,
                "softirq_ns": {"dist": "exponential", "min_ns": 20000, "mean_ns": 40000}}"#;
    let a = run(&rt_woken_after_a_tick(k), "linux-cfs", true);
    let b = run(&rt_woken_after_a_tick(k), "linux-cfs", true);
    assert_eq!(result_bytes(&a), result_bytes(&b));
    let varied = a.json()["run"]["kernel"]["varying_costs"].clone();
    assert!(
        varied
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "kernel.softirq_ns"),
        "{varied}"
    );
}

/// A FIFO-only policy (as an RTOS scheduler would be): it refuses SCHED_OTHER tasks.
struct FifoOnly(std::collections::VecDeque<TaskId>);

impl Scheduler for FifoOnly {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "fifo-only",
            summary: "one FIFO queue, real-time tasks only",
            source: "none (test)",
            params: Vec::new(),
        }
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        match attrs.policy {
            Policy::Fifo => Ok(()),
            p => Err(format!("{} is not run", p.as_str())),
        }
    }

    fn enqueue(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        self.0.push_back(t);
    }

    fn dequeue(&mut self, _ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        self.0.retain(|&q| q != t);
    }

    fn pick_next(&mut self, _ctx: &mut Ctx, _cpu: CpuId) -> Option<TaskId> {
        self.0.pop_front()
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        self.0.iter().for_each(|&t| f(CpuId(0), t));
    }
}

/// A scheduler that does not run the softirq thread's class refuses the run as bad input,
/// naming the setting; the same scheduler runs the spec without softirq work.
#[test]
fn a_scheduler_without_the_threads_class_refuses_softirq_work() {
    let spec = |kernel: &str| {
        parse(&format!(
            r#"{{
            "tasks": {{"t": {{"loop": 3, "policy": "SCHED_FIFO", "priority": 10, "run": 1000}}}},
            "schedlab": {{"machine": {{"cpus": 1, "kernel": {kernel}}}}}
        }}"#
        ))
    };
    let cfg = schedlab_sim::SimConfig::default();
    let policy = || FifoOnly(Default::default());
    schedlab_sim::simulate_policy(&spec("{}"), &cfg, policy()).expect("runs without softirqs");
    let Err(e) = schedlab_sim::simulate_policy(&spec(r#"{"softirq_ns": 1000}"#), &cfg, policy())
    else {
        panic!("a run with softirq work under a FIFO-only policy is refused");
    };
    assert!(e.bad_input);
    assert_eq!(
        e.message,
        "$.schedlab.machine.kernel.softirq_ns: softirq work runs in per-CPU ksoftirqd threads \
         (SCHED_OTHER), which this scheduler does not run: SCHED_OTHER is not run"
    );
    // Under rt with ktimers the thread is SCHED_FIFO 1, which it runs.
    let rt = spec(r#"{"preempt": "rt", "ktimers": true, "softirq_ns": 1000}"#);
    let out = schedlab_sim::simulate_policy(&rt, &cfg, policy()).expect("ktimers runs");
    assert_eq!(task_json(&out, "ktimers/0")["policy"], "SCHED_FIFO");
}

/// Without `rt` ksoftirqd runs its work with bottom halves, and so preemption, off; under
/// `rt` a real-time task preempts it. HZ=100, one CPU: a SCHED_IDLE hog (which ksoftirqd
/// preempts at once), 3 ms of softirq work at the tick at 10 ms with a 2 ms limit — the
/// interrupt exit runs [10, 12) ms, ksoftirqd [12, 13) ms — and an RT task that sleeps until
/// 12.5 ms.
#[test]
fn ksoftirqd_is_preemptible_only_under_rt() {
    let latency = |preempt: &str| {
        let spec = parse(&format!(
            r#"{{
            "tasks": {{
                "hog": {{"loop": 15, "policy": "SCHED_IDLE", "run": 1000}},
                "rt": {{"loop": 1, "policy": "SCHED_FIFO", "priority": 50,
                        "sleep": 12500, "run": 100}}
            }},
            "schedlab": {{"machine": {{"cpus": 1, "hz": 100, "kernel":
                {{"preempt": "{preempt}", "softirq_ns": 3000000}}}}}}
        }}"#
        ));
        let out = run(&spec, "linux-cfs", true);
        let l = task_json(&out, "rt")["wakeup_latency_ns"].clone();
        assert_eq!(l["count"], 1, "{preempt}: {l}");
        l["max"].as_u64().unwrap()
    };
    assert_eq!(latency("full"), 500 * US);
    assert_eq!(latency("rt"), 0);
}

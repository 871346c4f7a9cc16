//! The cost of the scheduler's own work per policy (`machine.sched_work_ps` as an object
//! of policy names), through the engine: an RT waiter woken by a broadcast on one CPU waits
//! for the broadcaster to block and for the switch, which pays the scheduler work counted
//! since the CPU's last switch at the run's policy's own cost per unit. Two policies whose
//! own work costs differ give the waiter different latencies even where they treat it alike.
mod common;
use common::*;

/// One CPU: `bc` (SCHED_FIFO 90) broadcasts every 10 ms and waits for its next period;
/// `waiter` (SCHED_FIFO 80) waits on the condition; a SCHED_OTHER `hog` computes meanwhile.
/// Switches cost nothing, so the waiter's latency is the scheduler work alone.
fn broadcast(sched_work_ps: &str) -> String {
    format!(
        r#"{{
        "tasks": {{
            "bc": {{"policy": "SCHED_FIFO", "priority": 90, "loop": 20, "delay": 1000,
                    "timer": {{"ref": "unique", "period": 10000, "mode": "absolute"}},
                    "lock": "m", "broad": "c", "unlock": "m"}},
            "waiter": {{"policy": "SCHED_FIFO", "priority": 80, "loop": -1,
                        "lock": "m", "wait": {{"ref": "c", "mutex": "m"}}, "unlock": "m",
                        "run": 50}},
            "hog": {{"loop": -1, "run": 1000}}
        }},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 1000, "sched_work_ps": {sched_work_ps}}}}}
    }}"#
    )
}

/// How long each run lasts: 20 broadcasts from 1 ms on, 10 ms apart.
const RUN_NS: u64 = 250 * MS;

/// The waiter's wake-up latencies (ns): their count, their sum, and the result.
fn waiter_latency(sched_work_ps: &str, scheduler: &str) -> (u64, u64, serde_json::Value) {
    let r = run_text(&broadcast(sched_work_ps), scheduler, &[], Some(RUN_NS))
        .unwrap_or_else(|e| panic!("{scheduler}: {e}"));
    let l = &task_in(&r, "waiter")["wakeup_latency_ns"];
    let n = l["count"].as_u64().unwrap();
    let mean = l["mean"].as_f64().unwrap();
    (n, (mean * n as f64).round() as u64, r)
}

const PER_POLICY: &str = r#"{"linux-o1": 1000000, "staircase": 2000000}"#;

#[test]
fn policies_with_different_costs_per_unit_give_the_rt_waiter_different_latencies() {
    let (n0, free_o1, _) = waiter_latency("0", "linux-o1");
    let (_, free_sc, _) = waiter_latency("0", "staircase");
    assert!(
        n0 >= 19,
        "the waiter should be woken by every broadcast ({n0})"
    );
    // Without a cost for the scheduler's work nothing on the waiter's path costs time, under
    // either policy: the two tie, which is what the per-policy cost is there to undo.
    assert_eq!((free_o1, free_sc), (0, 0));
    let (n1, o1, _) = waiter_latency(PER_POLICY, "linux-o1");
    let (n2, sc, _) = waiter_latency(PER_POLICY, "staircase");
    assert_eq!((n1, n2), (n0, n0));
    assert!(o1 > 0 && sc > 0, "the counted work is paid: {o1} {sc}");
    assert!(
        sc > o1,
        "twice the cost per unit, later waiter: {sc} vs {o1}"
    );
}

#[test]
fn a_policy_pays_its_own_entry_as_the_number_form_would_charge_it() {
    for (policy, ps) in [("linux-o1", "1000000"), ("staircase", "2000000")] {
        let (_, by_policy, _) = waiter_latency(PER_POLICY, policy);
        let (_, number, _) = waiter_latency(ps, policy);
        assert_eq!(by_policy, number, "{policy}");
    }
}

#[test]
fn a_policy_the_object_does_not_name_pays_nothing_and_the_result_says_so() {
    let (_, named, r) = waiter_latency(PER_POLICY, "nicksched");
    let (_, free, _) = waiter_latency("0", "nicksched");
    assert_eq!(named, free);
    let notes = r["run"]["notes"].to_string();
    assert!(notes.contains("none for nicksched"), "{notes}");
}

#[test]
fn an_unknown_policy_name_is_refused_at_its_path() {
    let e = run_text(
        &broadcast(r#"{"linux-o2": 5}"#),
        "linux-o1",
        &[],
        Some(RUN_NS),
    )
    .unwrap_err();
    assert!(
        e.contains("$.schedlab.machine.sched_work_ps.linux-o2") && e.contains("no policy"),
        "{e}"
    );
}

/// One CPU at HZ=1000 under full preemption, linux-o1 charging 1 µs per unit of scheduler
/// work: a SCHED_OTHER hog computes while `rt` (SCHED_FIFO) waits for an absolute 10 ms
/// timer, 5 times, its first expiry `offset_us` after its start at 1 ms.
fn rt_timer_over_a_hog(timers: &str, offset_us: u64) -> u64 {
    let text = format!(
        r#"{{
        "tasks": {{
            "hog": {{"loop": -1, "run": 1000}},
            "rt": {{"policy": "SCHED_FIFO", "priority": 50, "loop": 5, "delay": {delay},
                    "timer": {{"ref": "unique", "period": 10000, "mode": "absolute"}},
                    "run": 100}}
        }},
        "schedlab": {{"machine": {{"cpus": 1, "hz": 1000, "sched_work_ps": 1000000,
                                   "kernel": {{"preempt": "full", "timers": "{timers}"}}}}}}
    }}"#,
        delay = 1000 + offset_us
    );
    let r = run_text(&text, "linux-o1", &[], Some(RUN_NS)).unwrap_or_else(|e| panic!("{e}"));
    let l = &task_in(&r, "rt")["wakeup_latency_ns"];
    assert_eq!(l["count"], 5, "{l}");
    l["max"].as_u64().unwrap()
}

#[test]
fn the_tick_that_fires_a_jiffy_timer_runs_its_hook_before_the_woken_task_switches_in() {
    // Off the tick (exact timers, expiries half a tick after one), the wake-up pays its own
    // scheduler work only.
    let off_tick = rt_timer_over_a_hog("hrtimer", 500);
    assert!(off_tick > 0);
    // Under jiffy timers the expiry fires at the next tick: 2.6.17 runs the tick's hard
    // interrupt (scheduler_tick on the hog) before its softirq wakes the sleeper, so the
    // switch into the sleeper also pays the tick's counted work, on top of the tick's wait.
    let on_tick = rt_timer_over_a_hog("jiffy", 0);
    assert!(on_tick - MS > off_tick, "{on_tick} vs {off_tick}");
}

/// The waiter's wake-up latencies (ns) under `sched_work_ps`: (min, max).
fn waiter_extremes(sched_work_ps: &str, scheduler: &str) -> (u64, u64) {
    let r = run_text(&broadcast(sched_work_ps), scheduler, &[], Some(RUN_NS))
        .unwrap_or_else(|e| panic!("{scheduler}: {e}"));
    let l = &task_in(&r, "waiter")["wakeup_latency_ns"];
    (l["min"].as_u64().unwrap(), l["max"].as_u64().unwrap())
}

#[test]
fn a_cost_per_decision_is_paid_once_per_schedule_on_the_waiters_path() {
    // Between the broadcast and the waiter's switch-in the CPU takes one decision: the
    // broadcaster blocks on its timer and schedule() picks the waiter (waking a lower
    // priority waiter asks for none). With nothing per unit, each latency is that decision.
    let per_decision = r#"{"linux-o1": {"decision_ns": 7000}, "staircase": {"decision_ns": 3000}}"#;
    assert_eq!(waiter_extremes(per_decision, "linux-o1"), (7000, 7000));
    assert_eq!(waiter_extremes(per_decision, "staircase"), (3000, 3000));
}

#[test]
fn the_object_entry_adds_its_decision_cost_to_the_cost_per_unit() {
    let (n, by_unit, _) = waiter_latency(r#"{"linux-o1": 1000000}"#, "linux-o1");
    let (_, unit_only, _) = waiter_latency(r#"{"linux-o1": {"unit_ps": 1000000}}"#, "linux-o1");
    assert_eq!(by_unit, unit_only);
    let both = r#"{"linux-o1": {"unit_ps": 1000000, "decision_ns": 5000}}"#;
    let (_, with_decision, _) = waiter_latency(both, "linux-o1");
    assert_eq!(with_decision, by_unit + n * 5000);
}

#[test]
fn an_unknown_key_of_a_policy_entry_is_refused_at_its_path() {
    let e = run_text(
        &broadcast(r#"{"linux-o1": {"per_decision": 5}}"#),
        "linux-o1",
        &[],
        Some(RUN_NS),
    )
    .unwrap_err();
    assert!(
        e.contains("$.schedlab.machine.sched_work_ps.linux-o1.per_decision")
            && e.contains("decision_ns"),
        "{e}"
    );
}

//! Machine costs given as distributions, through the engine: each occurrence draws its own
//! cost above the minimum, the draws are the seed's (same seed, same run; another seed,
//! other draws), and they are keyed by what they belong to (the k-th switch into a task,
//! the tick of CPU c in jiffy j, a task's n-th varying kernel cost), so two policies that
//! treat a task alike give it the very same costs.
mod common;
use common::*;

use schedlab_spec::cost::{draw, CostKey, Spread};

fn parse(text: &str) -> schedlab_spec::model::Spec {
    schedlab_spec::parse_spec(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run_seeded(
    spec: &schedlab_spec::model::Spec,
    policy: &str,
    seed: u64,
) -> schedlab_sim::SimOutput {
    try_run(spec, policy, seed, true).unwrap_or_else(|e| panic!("{policy}: {e}"))
}

/// Wake-up latencies (ns) of task `name`'s started activations, in order.
fn latencies(out: &schedlab_sim::SimOutput, name: &str) -> Vec<u64> {
    let tid = task_json(out, name)["tid"].as_u64().unwrap() as u32;
    let s = &out.samples;
    (0..s.tid.len())
        .filter(|&i| s.tid[i] == tid && s.start_ns[i] >= 0)
        .map(|i| s.start_ns[i] as u64 - s.release_ns[i])
        .collect()
}

/// One CPU: a SCHED_FIFO task released every millisecond by an exact timer runs 10 µs; a
/// SCHED_OTHER hog fills the rest, so every release switches into the FIFO task and its
/// wake-up latency is the switch's cost.
fn switch_workload(switch: &str) -> schedlab_spec::model::Spec {
    parse(&format!(
        r#"{{
        "global": {{"duration": 2}},
        "tasks": {{
            "rt": {{"policy": "SCHED_FIFO", "priority": 50, "loop": 1000,
                    "timer": {{"ref": "unique", "period": 1000}}, "run": 10}},
            "hog": {{"loop": -1, "run": 100000}}
        }},
        "schedlab": {{"machine": {{"cpus": 1, "context_switch_ns": {switch}}}}}
    }}"#
    ))
}

const EXPONENTIAL_SWITCH: &str = r#"{"dist": "exponential", "min_ns": 2000, "mean_ns": 12000}"#;

#[test]
fn a_varying_switch_cost_is_drawn_per_switch_above_its_minimum() {
    let out = run_seeded(&switch_workload(EXPONENTIAL_SWITCH), "linux-o1", 7);
    assert_eq!(
        out.json()["run"]["kernel"]["varying_costs"],
        serde_json::json!(["context_switch_ns"])
    );
    let lat = latencies(&out, "rt");
    assert_eq!(lat.len(), 1000);
    assert!(lat.iter().all(|&l| l >= 2000), "below the minimum: {lat:?}");
    let distinct: std::collections::BTreeSet<_> = lat.iter().collect();
    assert!(
        distinct.len() > 900,
        "only {} distinct latencies",
        distinct.len()
    );
    // Exponential excess of mean 10 µs: the sample mean of 1000 draws lies within six
    // standard errors (6 × 10 µs / √1000 ≈ 1.9 µs) of 12 µs.
    let mean = lat.iter().sum::<u64>() as f64 / lat.len() as f64;
    assert!((mean - 12_000.0).abs() < 1_900.0, "mean {mean}");
}

#[test]
fn a_fixed_switch_cost_gives_every_wake_up_the_same_latency() {
    let out = run_seeded(&switch_workload("2000"), "linux-o1", 7);
    assert_eq!(
        out.json()["run"]["kernel"]["varying_costs"],
        serde_json::json!([])
    );
    let lat = latencies(&out, "rt");
    assert_eq!(lat.len(), 1000);
    assert!(lat.iter().all(|&l| l == 2000), "{lat:?}");
}

#[test]
fn the_seed_decides_the_draws() {
    let spec = switch_workload(EXPONENTIAL_SWITCH);
    let a = run_seeded(&spec, "linux-o1", 7);
    let b = run_seeded(&spec, "linux-o1", 7);
    let c = run_seeded(&spec, "linux-o1", 8);
    assert_eq!(result_bytes(&a), result_bytes(&b));
    assert_eq!(latencies(&a, "rt"), latencies(&b, "rt"));
    assert_ne!(latencies(&a, "rt"), latencies(&c, "rt"));
}

/// Common random numbers: the FIFO task is treated alike by both policies, so its k-th
/// switch-in draws the same cost under each although they run the hog differently.
#[test]
fn policies_that_treat_a_task_alike_give_it_the_same_draws() {
    let spec = switch_workload(EXPONENTIAL_SWITCH);
    let o1 = run_seeded(&spec, "linux-o1", 7);
    let sc = run_seeded(&spec, "staircase", 7);
    assert_eq!(latencies(&o1, "rt"), latencies(&sc, "rt"));
}

/// The k-th latency is the k-th switch into the task (switch 0 started it, before its
/// first timer): the draw the cost module gives for that key, computed here without the
/// engine.
#[test]
fn each_switch_draws_its_own_keyed_occurrence() {
    let out = run_seeded(&switch_workload(EXPONENTIAL_SWITCH), "linux-o1", 7);
    let spread = Some(Spread::Exponential {
        mean_excess_ns: 10_000,
    });
    let want: Vec<u64> = (1..=1000)
        .map(|k| draw(2000, spread, 7, CostKey::ContextSwitch, 0, k))
        .collect();
    assert_eq!(latencies(&out, "rt"), want);
}

/// One CPU at HZ 1000 with a periodic tick whose cost is uniform in [10, 50] µs: a lone
/// task's 20 ms of work ends 20 ms + the cost of every tick that fell inside it later.
#[test]
fn each_tick_charges_its_cpu_and_jiffy_draw_to_the_task_it_interrupts() {
    let spec = parse(
        r#"{
        "tasks": {"t": {"loop": 1, "run": 20000}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000, "kernel": {"tick": "periodic",
            "tick_ns": {"dist": "uniform", "min_ns": 10000, "max_ns": 50000}}}}
    }"#,
    );
    let out = run_seeded(&spec, "linux-o1", 3);
    let spread = Some(Spread::Uniform { width_ns: 40_000 });
    let tick = |j: u64| draw(10_000, spread, 3, CostKey::Tick, 0, j);
    // Work ends at `end`; every tick at j ms < end after the start (the CPU's tick is
    // armed when the task is switched in at 0, for the next jiffy) pushes the end back by
    // its cost.
    let mut end = 20 * MS;
    let mut j = 1;
    while j * MS < end {
        end += tick(j);
        j += 1;
    }
    let t = task_json(&out, "t");
    assert_eq!(t["cpu_ns"].as_u64(), Some(end), "{t}");
    assert!(j > 20, "ticks charged: {j}");
}

/// Jiffy timers whose expiry cost varies: a timer task wakes one tick after its expiry
/// plus its own draw of the expiry's cost, the same under two policies.
#[test]
fn a_varying_timer_expiry_cost_spreads_jiffy_wake_ups() {
    let spec = parse(
        r#"{
        "global": {"duration": 3},
        "tasks": {"rt": {"policy": "SCHED_FIFO", "priority": 50, "loop": 200,
                         "timer": {"ref": "unique", "period": 10000, "mode": "absolute"},
                         "run": 10}},
        "schedlab": {"machine": {"cpus": 1, "hz": 1000, "kernel": {"timers": "jiffy",
            "timer_irq_ns": {"dist": "exponential", "min_ns": 5000, "mean_ns": 20000}}}}
    }"#,
    );
    let out = run_seeded(&spec, "linux-o1", 11);
    let lat = latencies(&out, "rt");
    assert_eq!(lat.len(), 200);
    assert!(lat.iter().all(|&l| l >= MS + 5000), "{lat:?}");
    let distinct: std::collections::BTreeSet<_> = lat.iter().collect();
    assert!(distinct.len() > 150, "{} distinct", distinct.len());
    assert_eq!(lat, latencies(&run_seeded(&spec, "staircase", 11), "rt"));
}

/// A channel whose call cost varies: each call draws its own, the result names the
/// channel's cost among the varying ones, and the run stays deterministic.
#[test]
fn a_channels_varying_call_cost_is_drawn_per_call_and_named_in_the_result() {
    let spec = parse(
        r#"{
        "tasks": {"w": {"loop": 500, "schedlab:write": {"chan": "p", "bytes": 1},
                        "schedlab:read": {"chan": "p", "bytes": 1}}},
        "schedlab": {"machine": {"cpus": 1},
            "pipes": {"p": {"op_cost_ns": {"dist": "uniform", "min_ns": 1000, "max_ns": 3000},
                            "byte_cost_ps": 0}}}
    }"#,
    );
    let out = run_seeded(&spec, "linux-cfs", 5);
    assert_eq!(
        out.json()["run"]["kernel"]["varying_costs"],
        serde_json::json!(["p.op_cost_ns"])
    );
    let spread = Some(Spread::Uniform { width_ns: 2000 });
    let want: u64 = (0..1000)
        .map(|k| draw(1000, spread, 5, CostKey::ChannelOp, 0, k))
        .sum();
    assert_eq!(task_json(&out, "w")["cpu_ns"].as_u64(), Some(want));
    assert_eq!(
        result_bytes(&out),
        result_bytes(&run_seeded(&spec, "linux-cfs", 5))
    );
}

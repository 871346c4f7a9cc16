//! Machine profiles (`schedlab.machine.profile`): a profile's machine applies first and
//! the spec's own machine keys override it, nested kernel and channel-cost keys one by
//! one; channels without costs take the machine's.

use schedlab_spec::kernel::{Preempt, TickMode, TimerRes};
use schedlab_spec::model::ChannelKind;
use schedlab_spec::{parse_spec, Spec};

fn spec(machine: &str, extra: &str) -> Spec {
    let text = format!(
        r#"{{"tasks": {{"t": {{"run": 1000}}}}, "global": {{"duration": 1}},
           "schedlab": {{{extra} "machine": {machine}}}}}"#
    );
    parse_spec(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const INLINE: &str = r#"{"name": "lab", "about": "a test profile",
    "machine": {"cpus": 2, "hz": 100, "context_switch_ns": 700,
                "channel_costs": {"pipe": {"op_cost_ns": 11, "byte_cost_ps": 3}},
                "kernel": {"preempt": "none", "timers": "jiffy", "tick_ns": 900}},
    "provenance": {"context_switch_ns": {"how": "measured"}}}"#;

#[test]
fn an_inline_profile_sets_the_machine_and_names_it() {
    let s = spec(&format!(r#"{{"profile": {INLINE}}}"#), "");
    let m = &s.machine;
    assert_eq!(m.profile.as_deref(), Some("lab"));
    assert_eq!((m.cpus, m.hz, m.context_switch_ns), (2, 100, 700));
    assert_eq!(m.kernel.preempt, Preempt::None);
    assert_eq!(m.kernel.timers, TimerRes::Jiffy);
    assert_eq!(m.kernel.tick_ns, 900);
    let pipe = m.channel_costs[ChannelKind::Pipe.index()];
    assert_eq!((pipe.op_cost_ns, pipe.byte_cost_ps), (11, 3));
}

#[test]
fn the_spec_overrides_a_profile_key_by_key_wherever_profile_is_written() {
    // `profile` last in the object: still applied first.
    let s = spec(
        &format!(
            r#"{{"hz": 1000, "kernel": {{"tick_ns": 5}},
                "channel_costs": {{"pipe": {{"byte_cost_ps": 0}}}}, "profile": {INLINE}}}"#
        ),
        "",
    );
    let m = &s.machine;
    assert_eq!(m.hz, 1000, "the spec's hz wins");
    assert_eq!(m.cpus, 2, "the profile's cpus stay");
    assert_eq!(m.kernel.tick_ns, 5, "the spec's tick cost wins");
    assert_eq!(
        m.kernel.preempt,
        Preempt::None,
        "the profile's other kernel keys stay"
    );
    let pipe = m.channel_costs[ChannelKind::Pipe.index()];
    assert_eq!((pipe.op_cost_ns, pipe.byte_cost_ps), (11, 0));
}

#[test]
fn channels_without_costs_take_the_machines_and_their_own_win() {
    let pipes = r#""pipes": {"a": {"capacity": 4096}, "b": {"op_cost_ns": 99}},"#;
    // The pipes come before the machine in the text: the machine is read first anyway.
    let s = spec(&format!(r#"{{"profile": {INLINE}}}"#), pipes);
    let by_name = |n: &str| s.resources.channels.iter().find(|c| c.name == n).unwrap();
    assert_eq!(
        (by_name("a").op_cost_ns, by_name("a").byte_cost_ps),
        (11, 3)
    );
    assert_eq!(
        (by_name("b").op_cost_ns, by_name("b").byte_cost_ps),
        (99, 3)
    );
}

#[test]
fn the_seed_board_profile_is_the_seeds_kernel() {
    let s = spec(r#"{"profile": "seed000-tx4937"}"#, "");
    let m = &s.machine;
    assert_eq!(m.profile.as_deref(), Some("seed000-tx4937"));
    assert_eq!((m.cpus, m.hz), (1, 1000));
    assert_eq!(m.kernel.preempt, Preempt::None);
    assert_eq!(m.kernel.timers, TimerRes::Jiffy);
    assert_eq!(m.kernel.tick, TickMode::Periodic);
    // Each policy's own scheduler code costs something per decision on the board, and the
    // seed schedulers' counterparts' costs are their own.
    let per_decision: Vec<u64> = ["linux-o1", "nicksched", "staircase"]
        .iter()
        .map(|p| m.sched_work_for(p).decision_ns)
        .collect();
    assert!(per_decision.iter().all(|&d| d > 0), "{per_decision:?}");
    assert_ne!(per_decision[0], per_decision[2]);
}

#[test]
fn host_given_to_the_core_is_explained() {
    let text = r#"{"tasks": {"t": {"run": 1}}, "schedlab": {"machine": {"profile": "host"}}}"#;
    let e = parse_spec(text).unwrap_err().to_string();
    assert!(e.contains("$.schedlab.machine.profile"), "{e}");
    assert!(
        e.contains("measured on the machine that runs the spec"),
        "{e}"
    );
}

/// A profile whose costs vary (`schedlab_spec::cost`): the machine keeps each cost's
/// minimum and its spread; a spec that gives the cost as a number makes it fixed again,
/// and one that gives another distribution replaces the profile's.
#[test]
fn a_profiles_varying_costs_are_kept_and_overridden_whole() {
    use schedlab_spec::cost::{CostKey, Spread};
    let varying = r#"{"name": "noisy", "machine": {
        "context_switch_ns": {"dist": "exponential", "min_ns": 700, "mean_ns": 1700},
        "kernel": {"tick_ns": {"dist": "uniform", "min_ns": 100, "max_ns": 300}},
        "channel_costs": {"pipe": {"op_cost_ns": {"dist": "uniform", "min_ns": 10, "max_ns": 30}}}}}"#;
    let s = spec(&format!(r#"{{"profile": {varying}}}"#), "");
    let m = &s.machine;
    assert_eq!(m.context_switch_ns, 700);
    let exp = Spread::Exponential {
        mean_excess_ns: 1000,
    };
    assert_eq!(m.spreads.get(CostKey::ContextSwitch), Some(exp));
    assert_eq!(m.kernel.tick_ns, 100);
    let tick = Spread::Uniform { width_ns: 200 };
    assert_eq!(m.spreads.get(CostKey::Tick), Some(tick));
    let pipe = m.channel_costs[ChannelKind::Pipe.index()];
    assert_eq!(
        (pipe.op_cost_ns, pipe.op_spread),
        (10, Some(Spread::Uniform { width_ns: 20 }))
    );

    let s = spec(
        &format!(
            r#"{{"profile": {varying}, "context_switch_ns": 900,
                 "kernel": {{"tick_ns": {{"dist": "exponential", "min_ns": 50, "mean_ns": 80}}}},
                 "channel_costs": {{"pipe": {{"op_cost_ns": 10}}}}}}"#
        ),
        "",
    );
    let m = &s.machine;
    assert_eq!(
        (m.context_switch_ns, m.spreads.get(CostKey::ContextSwitch)),
        (900, None)
    );
    let tick = Spread::Exponential { mean_excess_ns: 30 };
    assert_eq!(
        (m.kernel.tick_ns, m.spreads.get(CostKey::Tick)),
        (50, Some(tick))
    );
    let pipe = m.channel_costs[ChannelKind::Pipe.index()];
    assert_eq!((pipe.op_cost_ns, pipe.op_spread), (10, None));
    // A distribution whose top equals its minimum is a fixed cost.
    let s = spec(
        r#"{"wakeup_ns": {"dist": "uniform", "min_ns": 5, "max_ns": 5}}"#,
        "",
    );
    assert_eq!((s.machine.wakeup_ns, s.machine.spreads.any()), (5, false));
}

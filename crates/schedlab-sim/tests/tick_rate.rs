//! Tick rates through the parser and the engine: every `CONFIG_HZ` choice the machine model
//! knows runs, with its jiffy of 1 s / HZ, and any other rate is refused where it is given.
mod common;
use common::*;

fn parse(text: &str) -> Result<schedlab_spec::model::Spec, schedlab_spec::SpecError> {
    schedlab_spec::parse_spec(text)
}

/// One task running 100 ms of work on one CPU with a periodic tick at `hz` whose handler
/// costs 10 µs; its CPU time.
fn hundred_ms_cpu_ns(hz: u32) -> u64 {
    let spec = parse(&format!(
        r#"{{
        "tasks": {{"w": {{"loop": 1, "run": 100000}}}},
        "schedlab": {{"machine": {{"cpus": 1, "hz": {hz},
                                   "kernel": {{"tick": "periodic", "tick_ns": 10000}}}}}}
    }}"#
    ))
    .unwrap_or_else(|e| panic!("hz {hz}: {e}"));
    task_json(&run(&spec, "linux-cfs", true), "w")["cpu_ns"]
        .as_u64()
        .unwrap()
}

#[test]
fn hz_128_ticks_every_7812500_ns() {
    // Ticks at k × 7.8125 ms, k = 1..=12, fall inside the 100 ms of work (the 13th, at
    // 101.5625 ms, comes after it ends at 100.12 ms): 12 handlers of 10 µs.
    assert_eq!(hundred_ms_cpu_ns(128), 100 * MS + 12 * 10 * US);
    // At HZ 100 ticks at 10, 20, … 100 ms: the one at 100 ms falls inside the work the
    // first nine handlers pushed past it.
    assert_eq!(hundred_ms_cpu_ns(100), 100 * MS + 10 * 10 * US);
}

#[test]
fn a_rate_outside_the_choices_is_refused_where_it_is_given() {
    let text = r#"{"tasks": {"w": {"loop": 1, "run": 1000}},
                   "schedlab": {"machine": {"hz": 129}}}"#;
    let e = parse(text).expect_err("HZ 129 is no CONFIG_HZ choice");
    let msg = e.to_string();
    assert!(msg.contains("$.schedlab.machine.hz"), "{msg}");
    assert!(msg.contains("100, 128, 250, 300 or 1000"), "{msg}");
}

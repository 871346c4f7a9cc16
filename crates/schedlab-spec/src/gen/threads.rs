//! Many threads, each doing little: the load for measuring what a scheduler's decisions
//! cost as the number of threads grows (the seed's question of how 4BSD's one global
//! queue and ULE's per-CPU queues scale).
//!
//! `threads` identical threads `t-<i>` (one template, `threads` instances), each `loops`
//! times running `run_us` of CPU then either sleeping `sleep_us` (`mode=sleep`: every
//! iteration is a block and a wake-up) or calling `sched_yield()` (`mode=yield`: every
//! iteration is a decision with every thread runnable). Each marks `start` first; the
//! headline `threads_time` is the time from the first `start` to the last exit. The
//! threads share one process (`process=one`, pthreads) or are processes of their own
//! (`process=each`).
//!
//! Their CPU time is `threads × loops × run_us` exactly; everything a run takes beyond
//! it is the machine's costs. The scheduler's own cost shows when the machine charges
//! for it (`machine.sched_work_ps`, from a profile): the result's per-CPU `overhead_ns`
//! over its `switches` is the cost per decision, and `work_units` what the policy counted.

use super::opts::{opt, Opts};
use super::GeneratorInfo;
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "threads",
        description: "many threads each alternating a short run with a sleep or a sched_yield(), for the cost of scheduling decisions against the number of threads; CPU time threads × loops × run_us; headline threads_time (first start to last exit)",
        options: vec![
            opt("threads", 100, "threads (instances of one template)"),
            opt("mode", "sleep", "sleep (run then sleep: a block and a wake-up per loop) or yield (run then sched_yield)"),
            opt("run_us", 50, "CPU time per loop, µs"),
            opt("sleep_us", 1000, "sleep per loop with mode=sleep, µs"),
            opt("loops", 100, "loops per thread"),
            opt("process", "one", "one (threads of one process) or each (a process per thread)"),
            opt("cpus", 2, "CPUs of the simulated machine"),
        ],
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let threads = o.int("threads", 1, 1_000_000)?;
    let sleep = o.choice("mode", &["sleep", "yield"])? == "sleep";
    let run_us = o.int("run_us", 0, 10_000_000)?;
    let sleep_us = o.int("sleep_us", 0, 60_000_000)?;
    let loops = o.int("loops", 1, i32::MAX as u64)?;
    let one_process = o.choice("process", &["one", "each"])? == "one";
    let cpus = o.int("cpus", 1, 256)?;
    if run_us == 0 && (!sleep || sleep_us == 0) {
        return Err(o.error(
            "run_us",
            "a loop of no run and no sleep makes no time pass; give run_us or sleep_us above 0",
        ));
    }
    let mut work = Map::new();
    work.insert("loop".into(), json!(loops));
    work.insert("run".into(), json!(run_us));
    if sleep {
        work.insert("sleep".into(), json!(sleep_us));
    } else {
        work.insert("yield".into(), json!(""));
    }
    let mut t = Map::new();
    t.insert("instance".into(), json!(threads));
    t.insert("loop".into(), json!(1));
    if one_process {
        t.insert("schedlab:process".into(), json!("threads"));
    }
    t.insert(
        "phases".into(),
        json!({"begin": {"schedlab:mark": "start"}, "work": Value::Object(work)}),
    );
    Ok(json!({
        "global": {"duration": -1, "default_policy": "SCHED_OTHER"},
        "tasks": {"t": Value::Object(t)},
        "schedlab": {
            "machine": {"cpus": cpus, "hz": 1000},
            "headline": {"type": "elapsed_since_mark", "mark": "start", "name": "threads_time"},
        },
    }))
}

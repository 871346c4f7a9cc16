//! cyclictest (rt-tests 2.4): `threads` measuring threads; thread i wakes every
//! `interval_us + i * distance_us` (cyclictest `-i`, `-d`) from an absolute timer
//! (`clock_nanosleep(TIMER_ABSTIME)`, next += interval) and does a tiny amount of work.
//! The headline is the timer latency (wake-up time − programmed expiry) of the threads
//! named `cyclic…`. Optional load: a looping `hackbench -g load_groups`, either one round
//! whose processes never exit or, with `load_loops`, `hackbench -g load_groups -l
//! load_loops` run again and again, its processes forked anew every round as a shell loop
//! would (the load the broadcast-wakeup generator gives seed 000).
//!
//! cyclictest runs `-l loops` cycles or for `-D duration`; `loops=0` means "until the
//! duration", which then must be given. rt-app's `global.duration` is whole seconds, so the
//! duration is rounded up to a second.

use super::hackbench::{self, schedlab_object};
use super::opts::{opt, Opts};
use super::{duration_s_covering, GeneratorInfo};
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "cyclictest",
        description: "rt-tests cyclictest: periodic absolute-timer threads measuring their wake-up latency, optionally under a looping hackbench load",
        options: vec![
            opt("threads", 1, "measuring threads (cyclictest -t)"),
            opt("interval_us", 1000, "wake-up interval of thread 0 in µs (cyclictest -i)"),
            opt("distance_us", 500, "added to the interval of each further thread, µs (cyclictest -d)"),
            opt("policy", "fifo", "fifo or other (cyclictest --policy)"),
            opt("priority", "auto", "RT priority for fifo (default 95, cyclictest -p) or nice for other (default 0)"),
            opt("loops", 1000, "cycles per thread (cyclictest -l); 0 = until duration_ms"),
            opt("duration_ms", 0, "run time in ms (cyclictest -D), rounded up to whole seconds; 0 = from loops"),
            opt("run_us", 1, "work after each wake-up, µs (clock_gettime and histogram update)"),
            opt("load", "none", "none or hackbench (a looping hackbench as background load)"),
            opt("load_groups", 10, "hackbench groups of the load (hackbench -g)"),
            opt(
                "load_loops",
                0,
                "0: one round of the load whose processes never exit; n: each round runs \
                 hackbench -l n, then its processes exit and a new round is forked",
            ),
            opt("cpus", 2, "CPUs of the simulated machine (the lab host has 2)"),
        ],
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let threads = o.int("threads", 1, 1024)?;
    let interval = o.int("interval_us", 1, 10_000_000)?;
    let distance = o.int("distance_us", 0, 10_000_000)?;
    let fifo = o.choice("policy", &["fifo", "other"])? == "fifo";
    let priority = match (o.is_auto("priority"), fifo) {
        (true, true) => 95,
        (true, false) => 0,
        (false, true) => o.signed("priority", 1, 99)?,
        (false, false) => o.signed("priority", -20, 19)?,
    };
    let loops = o.int("loops", 0, i32::MAX as u64)?;
    let duration_ms = o.int("duration_ms", 0, 1_000_000_000)?;
    let run_us = o.int("run_us", 0, 1_000_000)?;
    let load = o.choice("load", &["none", "hackbench"])? == "hackbench";
    let load_groups = o.int("load_groups", 1, 1000)?;
    let load_loops = o.int("load_loops", 0, i32::MAX as u64)?;
    let cpus = o.int("cpus", 1, 256)?;
    if loops == 0 && duration_ms == 0 {
        return Err(o.error(
            "loops",
            "loops=0 runs until the duration, so duration_ms must be > 0",
        ));
    }

    let max_interval = interval + (threads - 1) * distance;
    let duration_s = if duration_ms > 0 {
        (duration_ms as u128 * 1_000_000).div_ceil(1_000_000_000) as u64
    } else if load {
        // The load loops for ever: stop the run once every measuring thread is done.
        duration_s_covering(loops as u128 * max_interval as u128 * 1000)
    } else {
        0
    };

    let mut tasks = Map::new();
    for i in 0..threads {
        let mut t = Map::new();
        t.insert(
            "policy".into(),
            json!(if fifo { "SCHED_FIFO" } else { "SCHED_OTHER" }),
        );
        t.insert("priority".into(), json!(priority));
        if loops > 0 {
            t.insert("loop".into(), json!(loops));
        }
        t.insert(
            "timer".into(),
            json!({"ref": "unique", "period": interval + i * distance, "mode": "absolute"}),
        );
        t.insert("run".into(), json!(run_us));
        tasks.insert(format!("cyclic{i}"), Value::Object(t));
    }
    let (mut pipes, mut sockets) = (Map::new(), Map::new());
    if load {
        let hb = match load_loops {
            0 => hackbench::load(load_groups),
            loops => hackbench::restarting_load(load_groups, loops),
        };
        hb.emit(&mut tasks, &mut pipes, &mut sockets);
    }
    Ok(json!({
        "global": {"duration": if duration_s > 0 { duration_s as i64 } else { -1 }},
        "tasks": Value::Object(tasks),
        "schedlab": schedlab_object(
            cpus,
            pipes,
            sockets,
            json!({"type": "timer_latency", "task_prefix": "cyclic", "name": "cyclictest_latency"}),
        ),
    }))
}

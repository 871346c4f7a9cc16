//! Seed 000's original benchmark (Toshiba, 2006): an RT thread wakes RT or non-RT threads
//! with `pthread_cond_broadcast()` while `hackbench 10` loads the machine, and the waiters'
//! wake-up delay is measured (avg/min/max/stddev, then again without samples beyond 6σ).
//!
//! Here: one SCHED_FIFO `broadcaster` (priority `prio`) every `period_us` (absolute timer)
//! locks `bc_mutex`, broadcasts `bc_cond` and unlocks, `iterations` times. `waiters` copies
//! of `waiter` loop for ever: lock, wait on `bc_cond`, unlock, `work_us` of work. With
//! `rt=true` the waiters are SCHED_FIFO at `prio - 10` (below the broadcaster, as in the
//! seed's RT case); otherwise SCHED_OTHER nice 0. The load is `hackbench -g load_groups
//! -l load_loops` run again and again (0 groups = none): its processes are forked, kicked
//! off, exit and are forked anew every round (`load_loops=0`: one round that never ends).
//! Everything that loops for ever is stopped by `global.duration`, set to cover the
//! measurement (whole seconds, rounded up, + 1 s).
//! Headline: wake-up latency of the tasks named `waiter…`.

use super::hackbench::{self, schedlab_object};
use super::opts::{opt, Opts};
use super::{duration_s_covering, GeneratorInfo};
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "broadcast-wakeup",
        description: "seed 000's benchmark: a SCHED_FIFO thread periodically broadcasts a condition variable to RT or non-RT waiters under a hackbench load; headline = the waiters' wake-up latency",
        options: vec![
            opt("waiters", 4, "threads waiting on the condition variable"),
            opt("period_us", 10000, "broadcast period in µs"),
            opt("iterations", 1000, "number of broadcasts"),
            opt("rt", "true", "true: waiters are SCHED_FIFO below the broadcaster; false: SCHED_OTHER"),
            opt("prio", 90, "SCHED_FIFO priority of the broadcaster (waiters get prio-10 when rt=true)"),
            opt("work_us", 50, "work each waiter does after waking, µs"),
            opt("load_groups", 10, "groups of the looping hackbench load (0 = no load)"),
            opt(
                "load_loops",
                100,
                "loops of each hackbench run of the load (hackbench -l, default 100): its \
                 processes exit and a new round is forked, as a shell loop of `hackbench \
                 load_groups` would; 0 = one round whose processes never exit",
            ),
            opt(
                "warmup_us",
                200000,
                "start the broadcaster and the waiters this long after the load, so that they \
                 join a loaded machine in steady state (a thread created on an idle CFS queue \
                 starts a whole sched_latency behind a load started later)",
            ),
            opt("cpus", 2, "CPUs of the simulated machine (the lab host has 2; the seed's board had 1)"),
        ],
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let waiters = o.int("waiters", 1, 10_000)?;
    let period = o.int("period_us", 1, 10_000_000)?;
    let iterations = o.int("iterations", 1, i32::MAX as u64)?;
    let rt = o.boolean("rt")?;
    let prio = o.int("prio", 11, 99)?;
    let work = o.int("work_us", 0, 10_000_000)?;
    let load_groups = o.int("load_groups", 0, 1000)?;
    let load_loops = o.int("load_loops", 0, i32::MAX as u64)?;
    let warmup = if load_groups > 0 {
        o.int("warmup_us", 0, 100_000_000)?
    } else {
        0
    };
    let cpus = o.int("cpus", 1, 256)?;

    let mut tasks = Map::new();
    tasks.insert(
        "broadcaster".into(),
        json!({
            "policy": "SCHED_FIFO",
            "priority": prio,
            "loop": iterations,
            "timer": {"ref": "unique", "period": period, "mode": "absolute"},
            "lock": "bc_mutex",
            "broad": "bc_cond",
            "unlock": "bc_mutex",
        }),
    );
    let (policy, wprio) = if rt {
        ("SCHED_FIFO", prio as i64 - 10)
    } else {
        ("SCHED_OTHER", 0)
    };
    tasks.insert(
        "waiter".into(),
        json!({
            "instance": waiters,
            "policy": policy,
            "priority": wprio,
            "lock": "bc_mutex",
            "wait": {"ref": "bc_cond", "mutex": "bc_mutex"},
            "unlock": "bc_mutex",
            "run": work,
        }),
    );
    let (mut pipes, mut sockets) = (Map::new(), Map::new());
    if load_groups > 0 {
        let load = match load_loops {
            0 => hackbench::load(load_groups),
            loops => hackbench::restarting_load(load_groups, loops),
        };
        load.emit(&mut tasks, &mut pipes, &mut sockets);
    }
    if warmup > 0 {
        for name in ["broadcaster", "waiter"] {
            tasks[name]["delay"] = json!(warmup);
        }
    }
    let duration =
        duration_s_covering((warmup as u128 + iterations as u128 * period as u128) * 1000);
    Ok(json!({
        "global": {"duration": duration},
        "tasks": Value::Object(tasks),
        "schedlab": schedlab_object(
            cpus,
            pipes,
            sockets,
            json!({"type": "wakeup_latency", "task_prefix": "waiter", "name": "broadcast_wakeup_latency"}),
        ),
    }))
}

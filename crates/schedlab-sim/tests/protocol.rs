//! The calling protocol documented in `sched.rs` is the one the scheduler core follows:
//! every operation of `SchedCore`, and every hook the engine calls during real runs, is
//! recorded and matched against the table in that module's documentation.

use regex::Regex;
use schedlab_sim::cpu::{bfs::Bfs, fp::Fp, linux_cfs, linux_eevdf, linux_o1::LinuxO1};
use schedlab_sim::protocol::testing::{Observed, Recorder};
use schedlab_sim::protocol::SchedCore;
use schedlab_sim::sched::Scheduler;
use schedlab_sim::trace::writer::PrevState;
use schedlab_sim::types::{fair, rt, CpuId, CpuMask, Policy};
use schedlab_sim::SimConfig;

const SCHED_RS: &str = include_str!("../src/sched.rs");

/// The rows of the calling-protocol table: (operation, pattern).
fn documented() -> Vec<(String, String)> {
    let rows: Vec<(String, String)> = SCHED_RS
        .lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter(|l| l.contains('`') && !l.starts_with("operation"))
        .map(|l| {
            let cols: Vec<&str> = l.split(" | ").collect();
            let op = cols[0].split(" (").next().unwrap().trim().to_string();
            let pattern = cols[1]
                .trim()
                .trim_end_matches('|')
                .trim()
                .trim_matches('`');
            (op, pattern.to_string())
        })
        .collect();
    assert!(
        rows.len() >= 12,
        "the protocol table was not found in sched.rs"
    );
    rows
}

/// A table pattern as a regex over space-separated hook names: `[x]` optional, tokens
/// matched literally.
fn to_regex(pattern: &str) -> String {
    let mut out = String::new();
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if !token.is_empty() {
            out.push_str(&format!("(?:{} )", regex::escape(token)));
            token.clear();
        }
    };
    for ch in pattern.chars() {
        match ch {
            '[' => {
                flush(&mut token, &mut out);
                out.push_str("(?:");
            }
            ']' => {
                flush(&mut token, &mut out);
                out.push_str(")?");
            }
            ' ' => flush(&mut token, &mut out),
            c => token.push(c),
        }
    }
    flush(&mut token, &mut out);
    out
}

fn row(op: &str) -> Regex {
    let (_, pattern) = documented()
        .into_iter()
        .find(|(o, _)| o == op)
        .unwrap_or_else(|| panic!("no row '{op}' in the protocol table"));
    Regex::new(&format!("^{}$", to_regex(&pattern))).unwrap()
}

fn joined<S: Scheduler>(core: &mut SchedCore<Observed<S, Recorder>>) -> String {
    let hooks = std::mem::take(&mut core.policy.observer.hooks);
    hooks.iter().map(|h| format!("{} ", h.name())).collect()
}

/// Check that what the core called since the last check is the documented `op`.
fn expect<S: Scheduler>(core: &mut SchedCore<Observed<S, Recorder>>, op: &str) {
    let got = joined(core);
    assert!(row(op).is_match(&got), "{op}: recorded `{got}`");
}

/// Every operation of the core, one at a time, under the Linux RT + CFS stack on two CPUs.
#[test]
fn each_operation_of_the_core_calls_the_documented_hooks() {
    let policy = Observed::new(linux_cfs::linux_cfs(2), Recorder::default());
    let mut core = SchedCore::bare(policy, 2, 1000);
    let all = CpuMask::first_n(2);
    let (c0, c1) = (CpuId(0), CpuId(1));
    let a = core.spawn(fair(Policy::Other, 0), all, None);
    expect(&mut core, "create");
    let b = core.spawn(fair(Policy::Other, 0), all, None);
    let r = core.spawn(rt(Policy::Fifo, 10), all, None);
    joined(&mut core);

    // Onto an idle CPU, then onto a busy one (update_curr + wakeup_preempt).
    core.wake_up_new_task(a, None).unwrap();
    expect(&mut core, "first wake-up");
    let cpu = core.take_resched().unwrap();
    core.schedule(cpu);
    expect(&mut core, "schedule");
    core.process_resched();
    core.set_now(1_000_000);
    core.wake_up_new_task(b, Some(cpu)).unwrap();
    expect(&mut core, "first wake-up");
    core.process_resched();
    joined(&mut core);

    core.set_now(2_000_000);
    let busy = (0..2)
        .map(|c| CpuId(c as u32))
        .find(|&c| core.ctx.curr(c).is_some());
    let busy = busy.unwrap();
    core.tick(busy);
    expect(&mut core, "tick");
    core.process_resched();
    joined(&mut core);

    core.yield_current(busy);
    expect(&mut core, "yield");
    core.process_resched();
    joined(&mut core);

    // Block, and wake it again while it is still current (ttwu_runnable).
    let t = core.block(busy, PrevState::Sleeping);
    expect(&mut core, "block");
    core.try_to_wake_up(t, Some(busy), false).unwrap();
    expect(&mut core, "wake-up of a task still current");
    core.process_resched();
    joined(&mut core);

    // A real wake-up of a blocked task.
    let t = core.block(busy, PrevState::Sleeping);
    core.process_resched();
    joined(&mut core);
    core.set_now(3_000_000);
    core.try_to_wake_up(t, None, false).unwrap();
    expect(&mut core, "wake-up");
    core.process_resched();
    joined(&mut core);

    // Attribute changes: of a running task, of a blocked one, and one that moves it.
    let running = core.ctx.curr(c0).or(core.ctx.curr(c1)).unwrap();
    core.set_now(4_000_000);
    core.setattr(running, Some(fair(Policy::Other, 5)), None)
        .unwrap();
    expect(&mut core, "attribute change");
    core.process_resched();
    joined(&mut core);
    core.wake_up_new_task(r, None).unwrap();
    core.process_resched();
    joined(&mut core);
    let runner = core.ctx.curr(c0).or(core.ctx.curr(c1)).unwrap();
    let here = core.ctx.task(runner).cpu;
    let elsewhere = if here == c0 { c1 } else { c0 };
    let mut only = CpuMask::empty();
    only.set(elsewhere);
    core.setattr(runner, None, Some(only)).unwrap();
    expect(&mut core, "affinity change that moves a queued task");
    core.process_resched();
    joined(&mut core);

    // A cgroup change of the running task (sched_move_task).
    let mut a = schedlab_spec::model::Cgroup::root();
    a.path = "/a".into();
    a.parent = Some(0);
    core.ctx
        .set_groups(&[schedlab_spec::model::Cgroup::root(), a]);
    core.move_group(runner, 1);
    expect(&mut core, "group change");
    core.process_resched();
    joined(&mut core);

    // Exit: dequeue now, task_exit in the schedule that switches away from it.
    let cpu = core.ctx.task(runner).cpu;
    core.exit(cpu);
    expect(&mut core, "exit");
    core.schedule(cpu);
    let got = joined(&mut core);
    assert!(
        got.contains("task_exit"),
        "task_exit after the switch: `{got}`"
    );
    assert!(row("schedule").is_match(&got), "schedule: `{got}`");
}

/// The whole stream of hooks the engine calls during real runs parses as a sequence of
/// documented operations, under policies of every kind (a class stack with RT push
/// callbacks, EEVDF, O(1), BFS with its slice-expiry timers, the RTOS fixed-priority
/// policy).
#[test]
fn every_hook_the_engine_calls_belongs_to_a_documented_operation() {
    let any_op = documented()
        .iter()
        .map(|(_, p)| format!("(?:{})", to_regex(p)))
        .collect::<Vec<_>>()
        .join("|");
    let stream = Regex::new(&format!("^(?:{any_op})*$")).unwrap();
    let specs = [
        // Forks, exits, condvar wake-ups, sleeps, yields and a phase that changes the
        // policy and the affinity, on 2 CPUs.
        r#"{
            "tasks": {
                "parent": {"loop": 3, "run": 300, "fork": "child", "sleep": 200, "yield": ""},
                "child": {"instance": 0, "loop": 1, "run": 500},
                "waker": {"loop": 20, "run": 100, "lock": "m", "broad": "c", "unlock": "m", "sleep": 400},
                "waiter": {"instance": 3, "loop": 20, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 150},
                "shifter": {"loop": 2, "phases": {
                    "a": {"run": 700},
                    "b": {"policy": "SCHED_FIFO", "priority": 5, "cpus": [1], "run": 700},
                    "c": {"policy": "SCHED_OTHER", "cpus": [0], "run": 700}
                }}
            },
            "global": {"duration": 1},
            "schedlab": {"machine": {"cpus": 2, "hz": 1000}}
        }"#,
        // Periodic RT tasks preempting each other and a hog (RT push and pull).
        r#"{
            "tasks": {
                "rt1": {"policy": "SCHED_FIFO", "priority": 20, "run": 300, "timer": {"ref": "t1", "period": 1000}},
                "rt2": {"policy": "SCHED_FIFO", "priority": 10, "run": 600, "timer": {"ref": "t2", "period": 1500}},
                "hog": {"instance": 2, "run": 5000}
            },
            "global": {"duration": 1},
            "schedlab": {"machine": {"cpus": 2, "hz": 250}}
        }"#,
    ];
    fn check<S: Scheduler>(policy: S, text: &str, stream: &Regex) {
        let name = policy.info().name;
        let spec = schedlab_spec::parse_spec(text).unwrap();
        let observed = Observed::new(policy, Recorder::default());
        let cfg = SimConfig {
            duration_ns: Some(50_000_000),
            check: true,
            ..SimConfig::default()
        };
        // The recorder is moved into the run; record through a shared log instead.
        let log = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
        let sink = Sink(log.clone());
        let policy = Observed::new(observed.inner, sink);
        schedlab_sim::simulate_policy(&spec, &cfg, policy).unwrap();
        let got = log.borrow();
        assert!(got.len() > 1000, "{name}: the run called few hooks");
        assert!(
            stream.is_match(&got),
            "{name}: a hook sequence outside the protocol: {}",
            first_mismatch(stream, &got)
        );
    }
    for text in specs {
        check(linux_cfs::linux_cfs(2), text, &stream);
        check(linux_eevdf::linux_eevdf(2), text, &stream);
        check(LinuxO1::new(2), text, &stream);
        check(Bfs::new(2), text, &stream);
    }
    // fp runs only FIFO/RR tasks.
    let rt_only = r#"{
        "tasks": {
            "a": {"policy": "SCHED_FIFO", "priority": 20, "run": 300, "timer": {"ref": "t1", "period": 1000}},
            "b": {"policy": "SCHED_FIFO", "priority": 10, "loop": 50, "run": 600, "fork": "c", "yield": ""},
            "c": {"instance": 0, "policy": "SCHED_FIFO", "priority": 5, "loop": 1, "run": 100}
        },
        "schedlab": {"machine": {"cpus": 2}}
    }"#;
    check(Fp::new(2), rt_only, &stream);
    // linux-eevdf's fair server picking for a fair task an RT hog starves (a 5 ms per
    // 20 ms server, so that it runs within the run: tests/dl_server.rs).
    let starved = r#"{
        "tasks": {
            "hog": {"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": -1, "cpus": [0]},
            "other": {"instance": 3, "loop": -1, "run": 200, "sleep": 100, "cpus": [0]},
            "rt": {"policy": "SCHED_FIFO", "priority": 20, "loop": -1, "run": 300, "timer": {"ref": "t", "period": 1000}, "cpus": [1]},
            "mover": {"instance": 2, "loop": -1, "run": 400, "sleep": 200}
        },
        "global": {"duration": 1},
        "schedlab": {"machine": {"cpus": 2}, "cgroups": {"/": {"cpu.rt_runtime_us": -1}}}
    }"#;
    let mut served = linux_eevdf::linux_eevdf(2);
    served
        .set_param("fair_server_period_ns", "20000000")
        .unwrap();
    served
        .set_param("fair_server_runtime_ns", "5000000")
        .unwrap();
    check(served, starved, &stream);
}

/// Appends every hook name to a shared log.
struct Sink(std::rc::Rc<std::cell::RefCell<String>>);

impl<S> schedlab_sim::protocol::testing::Observer<S> for Sink {
    fn before(
        &mut self,
        hook: schedlab_sim::protocol::testing::Hook,
        _policy: &S,
        _ctx: &schedlab_sim::Ctx,
    ) {
        let mut log = self.0.borrow_mut();
        log.push_str(&hook.name());
        log.push(' ');
    }
}

/// Where a stream stops matching: the longest prefix (in hooks) that still parses.
fn first_mismatch(stream: &Regex, got: &str) -> String {
    let words: Vec<&str> = got.split_whitespace().collect();
    let prefix = Regex::new(&format!(
        "^{}",
        &stream.as_str()[1..stream.as_str().len() - 1]
    ))
    .unwrap();
    let mut ok = 0;
    for n in (0..=words.len()).rev() {
        let text: String = words[..n].iter().map(|w| format!("{w} ")).collect();
        if prefix.find(&text).is_some_and(|m| m.end() == text.len()) {
            ok = n;
            break;
        }
    }
    let end = (ok + 12).min(words.len());
    format!(
        "after {ok} hooks: … {}",
        words[ok.saturating_sub(6)..end].join(" ")
    )
}

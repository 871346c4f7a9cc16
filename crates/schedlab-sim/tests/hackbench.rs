//! hackbench from the real generator (`schedlab_spec::gen::generate("hackbench", ..)` →
//! `parse_value`) completes under every available policy, with the invariant checker on,
//! and its message accounting is exact.
//!
//! Every receiver reads `fds × loops` messages of `datasize` bytes, each read call costing
//! `op_cost_ns + datasize × byte_cost_ps / 1000` once (a partial read that blocks and
//! resumes is still one call); every sender writes `loops` messages to each of the `fds`
//! receivers of its group. With the machine's context-switch, fork and wake-up costs at
//! their default 0, each task's CPU time is therefore known exactly.
mod common;
use common::*;

use schedlab_spec::model::{Event, Spec};

fn hackbench(opts: &[(&str, &str)]) -> Spec {
    let opts: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = schedlab_spec::gen::generate("hackbench", &opts).expect("generate hackbench");
    schedlab_spec::parse_value(&v).expect("generated hackbench parses")
}

/// CPU time of one read or write call of `bytes` on channel `c` (sync.rs `call_cost`).
fn call_cost(spec: &Spec, chan: u32, bytes: u64) -> u64 {
    let c = &spec.resources.channels[chan as usize];
    c.op_cost_ns + bytes * c.byte_cost_ps / 1000
}

/// Exact CPU time each task template's instances must consume, from its program.
fn expected_cpu(spec: &Spec, tmpl: usize) -> u64 {
    let t = &spec.tasks[tmpl];
    let mut per_iter = 0u64;
    for p in &t.phases {
        let mut ph = 0u64;
        for e in &p.events {
            ph += match *e {
                Event::Read { chan, bytes } | Event::Write { chan, bytes } => {
                    call_cost(spec, chan, bytes)
                }
                Event::Run { ns } => ns,
                _ => 0,
            };
        }
        per_iter += ph * p.loop_count as u64;
    }
    per_iter * t.loop_count as u64
}

struct Case {
    sched: String,
    out: schedlab_sim::SimOutput,
}

fn run_all(spec: &Spec) -> Vec<Case> {
    let mut v = Vec::new();
    for sched in available_schedulers() {
        match try_run(spec, &sched, 7, true) {
            Ok(out) => v.push(Case { sched, out }),
            Err(e) if is_rejected_attrs(&e) => {}
            Err(e) => panic!("{sched}: hackbench failed: {e}"),
        }
    }
    assert!(!v.is_empty(), "no policy ran hackbench");
    v
}

fn check_completes(opts: &[(&str, &str)]) {
    let spec = hackbench(opts);
    assert_eq!(spec.machine.context_switch_ns, 0);
    assert_eq!(spec.machine.wakeup_ns, 0);
    for Case { sched, out } in run_all(&spec) {
        let r = &out.json();
        let ctx = format!("{sched} {opts:?}");
        check_accounting(&out).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let sum = &r["summary"];
        assert!(
            sum["makespan_ns"].as_u64().is_some_and(|m| m > 0),
            "{ctx}: {sum}"
        );
        assert_eq!(sum["blocked_at_end"], 0, "{ctx}: {sum}");
        assert!(
            sum["marks"]["start"].is_u64(),
            "{ctx}: no start mark: {sum}"
        );
        let h = &sum["headline"];
        assert_eq!(h["name"], "hackbench_time", "{ctx}: {h}");
        let secs = h["value"].as_f64().unwrap_or(-1.0);
        assert!(secs > 0.0, "{ctx}: hackbench_time {h}");
        let span = sum["makespan_ns"].as_u64().unwrap() - sum["marks"]["start"].as_u64().unwrap();
        assert!(
            (secs - span as f64 / 1e9).abs() < 1e-12,
            "{ctx}: headline {secs} s != makespan - start mark {span} ns"
        );

        // Every task's CPU time is exactly its calls' cost: all messages were written and
        // read (bytes balance per channel), none twice.
        let tasks = r["tasks"].as_array().unwrap();
        let mut total = 0u64;
        let mut receiver_acts = 0u64;
        for (ti, t) in spec.tasks.iter().enumerate() {
            let want = expected_cpu(&spec, ti);
            let inst: Vec<&serde_json::Value> = tasks
                .iter()
                .filter(|j| {
                    let n = j["name"].as_str().unwrap();
                    n == t.name
                        || n.strip_prefix(&format!("{}-", t.name))
                            .is_some_and(|k| k.parse::<u32>().is_ok())
                })
                .collect();
            assert_eq!(
                inst.len(),
                t.instances as usize,
                "{ctx}: instances of {}",
                t.name
            );
            for j in inst {
                assert_eq!(j["cpu_ns"], want, "{ctx}: cpu_ns of {}", j["name"]);
                total += want;
                if t.name.contains("receiver") {
                    // A receiver need not ever block (on one CPU the senders may fill
                    // its pipe before it runs), so only the sum must be positive.
                    receiver_acts += j["activations"].as_u64().unwrap();
                }
            }
        }
        assert!(receiver_acts > 0, "{ctx}: no receiver ever woke");
        let busy: u64 = r["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["busy_ns"].as_u64().unwrap())
            .sum();
        assert_eq!(busy, total, "{ctx}: busy time != Σ expected CPU time");
        assert_eq!(r["tasks"].as_array().unwrap().len(), tasks.len());
    }
}

#[test]
fn pipe_process_completes_under_every_policy() {
    check_completes(&[
        ("groups", "2"),
        ("loops", "10"),
        ("fds", "4"),
        ("mode", "pipe"),
    ]);
}

#[test]
fn socket_thread_completes_under_every_policy() {
    check_completes(&[
        ("groups", "2"),
        ("loops", "10"),
        ("fds", "4"),
        ("tasks", "thread"),
    ]);
}

#[test]
fn pipe_thread_one_cpu_completes_under_every_policy() {
    check_completes(&[
        ("groups", "2"),
        ("loops", "10"),
        ("fds", "3"),
        ("mode", "pipe"),
        ("tasks", "thread"),
        ("cpus", "1"),
    ]);
}

/// hackbench's default message shape (20 fds per group, sockets, processes), few loops.
#[test]
fn default_fds_socket_process_completes_under_every_policy() {
    check_completes(&[("groups", "2"), ("loops", "3")]);
}

/// Small socket buffers force partial writes (pipe: 65536 B, 100-byte messages never fill
/// it; here 4 KiB messages into a 64 KiB pipe with 20 senders do).
#[test]
fn big_messages_fill_the_pipe_and_still_balance() {
    check_completes(&[
        ("groups", "1"),
        ("loops", "10"),
        ("fds", "20"),
        ("datasize", "4096"),
        ("mode", "pipe"),
    ]);
}

/// Total simulated CPU time grows with loops, linearly: every message costs the same.
#[test]
fn cpu_time_scales_with_loops() {
    let total = |loops: &str, sched: &str| -> u64 {
        let spec = hackbench(&[
            ("groups", "2"),
            ("loops", loops),
            ("fds", "4"),
            ("mode", "pipe"),
        ]);
        let out = try_run(&spec, sched, 7, true).unwrap_or_else(|e| panic!("{sched}: {e}"));
        out.json()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["cpu_ns"].as_u64().unwrap())
            .sum()
    };
    for sched in available_schedulers() {
        let (a, b, c) = (total("5", &sched), total("10", &sched), total("20", &sched));
        assert!(a > 0 && a < b && b < c, "{sched}: {a} {b} {c}");
        assert_eq!(
            b,
            2 * a,
            "{sched}: CPU time for 10 loops is not twice 5 loops'"
        );
        assert_eq!(
            c,
            2 * b,
            "{sched}: CPU time for 20 loops is not twice 10 loops'"
        );
    }
}

/// The cost model (`machine.sched_work_ps`): counted scheduler work becomes CPU overhead
/// of the CPU that did it, paid at its next switch. Tasks' own CPU time is untouched; the
/// overhead charged is at most the work counted × the unit cost (work counted after a
/// CPU's last switch is never paid) and, over a run of thousands of switches, most of it;
/// and the benchmark takes longer.
#[test]
fn sched_work_cost_is_charged_as_overhead() {
    const PS: u64 = 5_000;
    let mut spec = hackbench(&[
        ("groups", "2"),
        ("loops", "20"),
        ("fds", "4"),
        ("mode", "pipe"),
        ("cpus", "1"),
    ]);
    let base = run_all(&spec);
    spec.machine.sched_work_ps = PS;
    let costed = run_all(&spec);
    assert_eq!(base.len(), costed.len());
    let overhead = |r: &serde_json::Value| -> u64 {
        r["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["overhead_ns"].as_u64().unwrap())
            .sum()
    };
    for (b, c) in base.iter().zip(&costed) {
        let (rb, rc) = (&b.out.json(), &c.out.json());
        let ctx = &c.sched;
        check_accounting(&c.out).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(overhead(rb), 0, "{ctx}: no cost model, no overhead");
        for (tb, tc) in rb["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rc["tasks"].as_array().unwrap())
        {
            assert_eq!(tb["cpu_ns"], tc["cpu_ns"], "{ctx}: {}", tc["name"]);
        }
        let owed = rc["run"]["work_units"].as_u64().unwrap() * PS / 1000;
        let paid = overhead(rc);
        assert!(owed > 0, "{ctx}: the policy counted no work");
        assert!(paid <= owed, "{ctx}: paid {paid} ns > owed {owed} ns");
        assert!(
            paid * 10 >= owed * 9,
            "{ctx}: paid {paid} ns of {owed} ns owed"
        );
        let t = |r: &serde_json::Value| r["summary"]["headline"]["value"].as_f64().unwrap();
        assert!(t(rc) > t(rb), "{ctx}: {} s !> {} s", t(rc), t(rb));
    }
}

/// The broadcast test's restarting load (`while true; do hackbench; done`) runs round after
/// round under every policy, with the invariant checker on: each round's processes are
/// forked, finish and exit, and the next round is forked.
#[test]
fn restarting_load_runs_rounds_under_every_policy() {
    let opts: Vec<(String, String)> = [
        ("load_groups", "1"),
        ("load_loops", "20"),
        ("iterations", "20"),
        ("period_us", "5000"),
        ("warmup_us", "0"),
        ("cpus", "2"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let v = schedlab_spec::gen::generate("broadcast-wakeup", &opts).unwrap();
    let mut spec = schedlab_spec::parse_value(&v).unwrap();
    // A round (20 senders × 20 loops × 20 receivers) takes a few tens of ms: 150 ms
    // covers several rounds without thousands of forked tasks.
    spec.duration_ns = Some(150_000_000);
    for Case { sched, out } in run_all(&spec) {
        let json = out.json();
        let tasks = json["tasks"].as_array().unwrap();
        let rounds = tasks
            .iter()
            .filter(|t| {
                t["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("load-g0-receiver0"))
            })
            .count();
        assert!(rounds >= 3, "{sched}: only {rounds} rounds of the load ran");
        let waiter = tasks.iter().find(|t| t["name"] == "waiter").unwrap();
        assert!(
            waiter["activations"].as_u64().unwrap() > 0,
            "{sched}: the waiter never woke"
        );
    }
}

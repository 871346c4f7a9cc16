//! The host runner on this machine's kernel. What a real kernel does depends on the
//! machine's load, so these tests check what holds on any machine: counts, orders and
//! bounds the programs themselves guarantee (a `run` consumes at least its CPU time, a
//! periodic task cannot be released more often than its period), never timings.

use schedlab_host::runner::{run, HostError, RunOptions};
use serde_json::Value;

fn host(spec: &str) -> Value {
    host_for(spec, None)
}

fn host_for(spec: &str, duration_ns: Option<u64>) -> Value {
    let opts = RunOptions {
        duration_ns,
        cancel: None,
        trace: None,
    };
    let out = run(spec, &opts).unwrap_or_else(|e| panic!("{e}"));
    out.result.to_json()
}

fn task<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

#[test]
fn a_periodic_task_is_released_once_per_period_and_runs_its_cpu_time() {
    let r = host_for(
        r#"{"tasks": {"p": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}}}}"#,
        Some(200_000_000),
    );
    assert_eq!(r["run"]["engine"], "host");
    assert!(r["run"]["host"]["release"].is_string());
    let p = task(&r, "p");
    let n = p["activations"].as_u64().unwrap();
    // 200 ms of a 10 ms timer: at most 20 expiries, and a loaded machine still gives some.
    assert!((1..=20).contains(&n), "{n} activations");
    // Each loop ran 1 ms of CPU time before waiting; the timer waits are its activations.
    assert!(p["cpu_ns"].as_u64().unwrap() >= n * 1_000_000);
    assert_eq!(p["wakeup_latency_ns"]["count"].as_u64().unwrap(), n);
    assert!(p["wakeup_latency_ns"]["min"].as_u64().is_some());
    assert_eq!(r["summary"]["makespan_ns"], Value::Null);
}

#[test]
fn tasks_that_end_give_a_makespan_and_every_signal_is_an_activation() {
    let r = host(
        r#"{"tasks": {
            "pinger": {"loop": 20, "sleep": 1000, "lock": "m", "signal": "c", "unlock": "m"},
            "waiter": {"loop": 20, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"}}}"#,
    );
    let pinger = task(&r, "pinger");
    // Every sleep of the pinger ends in an activation.
    assert_eq!(pinger["activations"], 20);
    assert!(r["summary"]["makespan_ns"].as_u64().is_some() || r["summary"]["blocked_at_end"] == 1);
}

#[test]
fn pipes_carry_exactly_the_bytes_and_forked_instances_are_named_as_in_the_simulator() {
    let r = host(
        r#"{"schedlab": {"pipes": {"p": {}}},
            "tasks": {
              "parent": {"loop": 1, "fork": "child", "fork1": "child", "schedlab:read": {"chan": "p", "bytes": 200}},
              "child": {"instance": 0, "loop": 1, "schedlab:write": {"chan": "p", "bytes": 100}}}}"#,
    );
    let names: Vec<&str> = (r["tasks"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"child") && names.contains(&"child-1"),
        "{names:?}"
    );
    assert!(r["summary"]["makespan_ns"].as_u64().is_some());
    assert_eq!(r["summary"]["blocked_at_end"], 0);
}

#[test]
fn what_the_host_runner_does_not_do_is_refused_with_its_path() {
    let io = r#"{"schedlab": {"devices": {"d": {"model": "ssd"}}},
                 "tasks": {"db": {"loop": 1, "schedlab:io": {"dev": "d", "op": "read", "bytes": 4096}}}}"#;
    match run(io, &RunOptions::default()) {
        Err(HostError::BadInput(m)) => {
            assert!(m.contains("$.tasks.db") && m.contains("schedlab:io"), "{m}")
        }
        other => panic!("{:?}", other.map(|o| o.result.to_json())),
    }
    let forever = r#"{"tasks": {"hog": {"loop": -1, "run": 1000}}}"#;
    match run(forever, &RunOptions::default()) {
        Err(HostError::BadInput(m)) => {
            assert!(m.contains("$.tasks.hog") && m.contains("for ever"), "{m}")
        }
        other => panic!("{:?}", other.map(|o| o.result.to_json())),
    }
    let unthrottled = r#"{"schedlab": {"cgroups": {"/": {"cpu.rt_runtime_us": -1}}},
        "tasks": {"rt": {"loop": 1, "policy": "SCHED_FIFO", "priority": 10, "run": 10}}}"#;
    match run(unthrottled, &RunOptions::default()) {
        Err(HostError::Refused(m)) => {
            assert!(m.contains("$.tasks.rt") && m.contains("throttling"), "{m}")
        }
        other => panic!("{:?}", other.map(|o| o.result.to_json())),
    }
    let cpus = r#"{"tasks": {"t": {"loop": 1, "cpus": [4096], "run": 10}}}"#;
    assert!(matches!(
        run(cpus, &RunOptions::default()),
        Err(HostError::BadInput(_))
    ));
}

#[test]
fn a_fifo_task_gets_its_policy_read_back_when_the_kernel_allows_it() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: SCHED_FIFO is not tried");
        return;
    }
    let r = host(
        r#"{"tasks": {"rt": {"loop": 3, "policy": "SCHED_FIFO", "priority": 10, "run": 500, "sleep": 1000}}}"#,
    );
    let t = task(&r, "rt");
    assert_eq!(t["policy"], "SCHED_FIFO");
    assert_eq!(t["priority"], 10);
    assert_eq!(t["activations"], 3);
}

#[test]
fn cgroups_are_made_throttle_their_rt_task_and_are_gone_afterwards() {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let cpu = std::path::Path::new("/sys/fs/cgroup/cpu");
    if !root || !cpu.join("cpu.rt_runtime_us").exists() {
        eprintln!("not root or no v1 cpu hierarchy with RT groups: not tried");
        return;
    }
    let journal =
        std::env::temp_dir().join(format!("schedlab-runner-{}.jsonl", std::process::id()));
    std::env::set_var("SCHEDLAB_JOURNAL", &journal);
    let before = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap();
    let r = host_for(
        r#"{"schedlab": {"cgroups": {"/lim": {"cpu.rt_period_us": 100000, "cpu.rt_runtime_us": 20000,
                                             "cpuset.cpus": "1"}}},
            "tasks": {"hog": {"loop": -1, "policy": "SCHED_FIFO", "priority": 10, "run": -1,
                              "taskgroup": "/lim"}}}"#,
        Some(500_000_000),
    );
    let hog = task(&r, "hog");
    let cpu_ns = hog["cpu_ns"].as_u64().unwrap();
    // RT throttling gives the group at most 20 ms per 100 ms period: 5 periods in 500 ms,
    // a sixth begun at most.
    assert!(
        cpu_ns > 0 && cpu_ns <= 6 * 20_000_000,
        "hog ran {cpu_ns} ns"
    );
    let left: Vec<_> = std::fs::read_dir(cpu)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("schedlab-{}", std::process::id()))
        })
        .collect();
    assert!(left.is_empty(), "groups left behind: {left:?}");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap(),
        before
    );
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), "");
    let _ = std::fs::remove_file(&journal);
}

#[test]
fn a_cancelled_run_returns_no_result() {
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let count = asked.clone();
    let cancel = schedlab_core::cancel::Cancel::new(move || {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 2
    });
    let opts = RunOptions {
        duration_ns: Some(600_000_000_000),
        cancel: Some(cancel),
        trace: None,
    };
    let spec = r#"{"tasks": {"hog": {"loop": -1, "run": -1}}}"#;
    assert!(matches!(run(spec, &opts), Err(HostError::Cancelled)));
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[test]
fn the_first_phases_attributes_are_taken_before_the_task_runs() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: SCHED_FIFO is not tried");
        return;
    }
    let r = host(
        r#"{"tasks": {"t": {"loop": 1, "phases": {
            "p1": {"loop": 2, "policy": "SCHED_FIFO", "priority": 5, "run": 100, "sleep": 100}}}}}"#,
    );
    let t = task(&r, "t");
    assert_eq!(t["policy"], "SCHED_FIFO");
    assert_eq!(t["priority"], 5);
}

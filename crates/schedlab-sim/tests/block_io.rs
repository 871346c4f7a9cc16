//! The block layer through the engine: a task's `schedlab:io` request goes through the
//! device's I/O scheduler to a null_blk device, the task sleeps uninterruptibly until the
//! completion wakes it, tags limit what is in flight, and the trace shows the kernel's
//! block_rq_issue / block_rq_complete lines.

mod common;

use schedlab_sim::SimConfig;

fn run(text: &str, trace: Option<std::path::PathBuf>) -> serde_json::Value {
    common::run_io(text, trace)
}

fn spec(tasks: &str, depth: u32, elevator: &str) -> String {
    format!(
        r#"{{
        "tasks": {{ {tasks} }},
        "schedlab": {{
            "machine": {{"cpus": 4, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 10000,
                                     "queue_depth": {depth}, "scheduler": "{elevator}"}}}}
        }}
    }}"#
    )
}

#[test]
fn each_request_takes_the_device_time_and_wakes_its_task() {
    let r = run(
        &spec(
            r#""reader": {"loop": 100, "run": 5, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096}}"#,
            64,
            "none",
        ),
        None,
    );
    let dev = &r["devices"][0];
    assert_eq!(dev["name"], "nullb0");
    assert_eq!(dev["scheduler"], "none");
    assert_eq!(dev["requests"], 100);
    assert_eq!(dev["bytes_read"], 100 * 4096);
    assert_eq!(dev["bytes_written"], 0);
    assert_eq!(dev["busy_ns"], 100 * 10_000);
    assert_eq!(dev["latency_ns"]["min"], 10_000);
    assert_eq!(dev["latency_ns"]["max"], 10_000);
    let reader = &r["tasks"][0];
    assert_eq!(
        reader["sleep_ns"],
        100 * 10_000,
        "asleep exactly while its I/O ran"
    );
    assert_eq!(reader["switches_voluntary"], 100);
    // Every completion is an activation: the idle CPU runs the reader at once.
    assert_eq!(reader["activations"], 100);
    assert_eq!(reader["wakeup_latency_ns"]["max"], 0);
    assert_eq!(r["summary"]["makespan_ns"], 100 * (5_000 + 10_000));
}

#[test]
fn a_full_queue_makes_requests_wait_in_submission_order() {
    // Four writers on four CPUs submit at the same instant to a device with one tag: the
    // device serves them one after the other (none = FIFO), 10 µs each.
    let r = run(
        &spec(
            r#""w": {"instance": 4, "loop": 1, "schedlab:io": {"dev": "nullb0", "op": "write", "bytes": 512}}"#,
            1,
            "none",
        ),
        None,
    );
    let dev = &r["devices"][0];
    assert_eq!(dev["requests"], 4);
    assert_eq!(dev["busy_ns"], 40_000);
    assert_eq!(dev["latency_ns"]["min"], 10_000);
    assert_eq!(dev["latency_ns"]["max"], 40_000);
    assert_eq!(r["summary"]["makespan_ns"], 40_000);
    let mut sleeps: Vec<u64> = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["sleep_ns"].as_u64().unwrap())
        .collect();
    sleeps.sort_unstable();
    assert_eq!(sleeps, vec![10_000, 20_000, 30_000, 40_000]);
}

#[test]
fn the_trace_shows_issue_and_completion_as_the_kernel_prints_them() {
    let dir = std::env::temp_dir().join(format!("schedlab-blk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.trace");
    run(
        &spec(
            r#""reader": {"loop": 2, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096}}"#,
            64,
            "none",
        ),
        Some(path.clone()),
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let issue =
        regex::Regex::new(r"block_rq_issue: 251,0 R 4096 \(\) (\d+) \+ 8 \[reader\]").unwrap();
    let done = regex::Regex::new(r"block_rq_complete: 251,0 R \(\) (\d+) \+ 8 \[0\]").unwrap();
    let issued: Vec<&str> = issue
        .captures_iter(&text)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    let completed: Vec<&str> = done
        .captures_iter(&text)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert_eq!(issued, vec!["0", "8"], "sequential sectors:\n{text}");
    assert_eq!(completed, issued);
    // The reader sleeps uninterruptibly (D) while its request is in the device.
    assert!(text.contains("prev_comm=reader prev_pid=1 prev_prio=120 prev_state=D"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The one list of I/O scheduler names the spec accepts: every one of them runs.
#[test]
fn every_io_scheduler_the_spec_accepts_runs() {
    for name in schedlab_spec::model::IO_SCHEDULERS {
        let text = spec(
            r#""r": {"loop": 1, "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096}}"#,
            64,
            name,
        );
        let r = schedlab_sim::simulate_text(&text, &SimConfig::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.json()["devices"][0]["requests"], 1, "{name}");
    }
}

/// 100 reads of a reader on CPU 0 beside a 500 ms CPU hog on CPU 0 and one on CPU 1,
/// on a null_blk device whose completion interrupt costs `irq_ns`; per hog, the time
/// from its start to its exit (CPU + waiting).
fn hogs_beside_a_reader(irq_ns: u64) -> (u64, u64) {
    let text = format!(
        r#"{{
        "tasks": {{
            "reader": {{"cpus": [0], "loop": 100,
                        "schedlab:io": {{"dev": "nullb0", "op": "read", "bytes": 4096}}}},
            "hog0": {{"cpus": [0], "loop": 1, "run": 500000}},
            "hog1": {{"cpus": [1], "loop": 1, "run": 500000}}
        }},
        "schedlab": {{
            "machine": {{"cpus": 2, "hz": 1000}},
            "devices": {{"nullb0": {{"model": "null_blk", "completion_ns": 100000,
                                     "scheduler": "none", "irq_ns": {irq_ns}}}}}
        }}
    }}"#
    );
    let r = run(&text, None);
    assert_eq!(r["devices"][0]["requests"], 100);
    let life = |name: &str| {
        let t = r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        t["cpu_ns"].as_u64().unwrap() + t["wait_ns"].as_u64().unwrap()
    };
    (life("hog0"), life("hog1"))
}

#[test]
fn a_completion_interrupt_costs_the_task_on_the_submitting_cpu() {
    // blk-mq completes a request on the CPU that submitted it (QUEUE_FLAG_SAME_COMP):
    // each of the reader's 100 completions interrupts the hog sharing its CPU, which
    // finishes 100 × irq_ns later; the hog on the other CPU loses nothing.
    let (base0, base1) = hogs_beside_a_reader(0);
    for irq_ns in [1_000u64, 7_500] {
        let (hog0, hog1) = hogs_beside_a_reader(irq_ns);
        assert_eq!(hog0 - base0, 100 * irq_ns, "irq_ns {irq_ns}");
        assert_eq!(hog1, base1, "irq_ns {irq_ns}");
    }
}

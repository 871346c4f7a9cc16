//! Block I/O on this machine: specs with `schedlab:io` run by the host runner on loop
//! devices. Counts and what is left behind are checked, never timings: every request of
//! an op is done and timed once, the bytes are exactly the spec's, an I/O priority is
//! taken, a scheduler this kernel lacks is refused with its path, and after every run —
//! finished, refused or stopped at its end — no backing file, no bound loop device and no
//! changed scheduler remains, and the journal is empty. Skipped (with the reason) when not
//! root or without loop devices.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use schedlab_host::journal::Format;
use schedlab_host::loopdev;
use schedlab_host::runner::{run, HostError, RunOptions};
use serde_json::Value;

/// One host run at a time: they share the restore journal.
static SERIAL: Mutex<()> = Mutex::new(());

fn journal() -> PathBuf {
    std::env::temp_dir().join(format!("schedlab-host-io-{}.jsonl", std::process::id()))
}

fn available() -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: loop devices are not tried");
        return false;
    }
    if !Path::new("/dev/loop-control").exists() {
        eprintln!("no /dev/loop-control: loop devices are not tried");
        return false;
    }
    std::env::set_var("SCHEDLAB_JOURNAL", journal());
    true
}

/// Every loop device's scheduler, `nomerges` and backing file.
fn loops() -> BTreeMap<u32, (String, String, Option<PathBuf>)> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir("/sys/block").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("loop").and_then(|n| n.parse().ok()) else {
            continue;
        };
        let sched = fs::read_to_string(e.path().join("queue/scheduler")).unwrap_or_default();
        let nomerges = fs::read_to_string(e.path().join("queue/nomerges")).unwrap_or_default();
        let current = Format::Choice.current(&sched);
        out.insert(n, (current, nomerges, loopdev::backing_file(n)));
    }
    out
}

/// This process's backing files.
fn backing_files() -> Vec<PathBuf> {
    let prefix = format!("schedlab-{}-", std::process::id());
    fs::read_dir("/var/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect()
}

/// Run `spec` and check that the machine is as it was afterwards.
fn run_clean(spec: &str, opts: &RunOptions) -> Result<Value, HostError> {
    let before = loops();
    let out = run(spec, opts);
    let after = loops();
    for (n, was) in &before {
        assert_eq!(after.get(n), Some(was), "loop{n} changed");
    }
    assert!(backing_files().is_empty(), "{:?}", backing_files());
    assert_eq!(fs::read_to_string(journal()).unwrap_or_default(), "");
    out.map(|o| o.result.to_json())
}

fn task<'a>(r: &'a Value, name: &str) -> &'a Value {
    (r["tasks"].as_array().unwrap().iter())
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

#[test]
fn every_request_is_done_and_timed_once_and_nothing_is_left_behind() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available() {
        return;
    }
    let spec = r#"{"schedlab": {
        "devices": {"d": {"model": "ssd", "scheduler": "mq-deadline",
                          "params": {"queue/nomerges": "2", "fifo_batch": "4"}}},
        "files": {"db": {"dev": "d", "bytes": 16777216},
                  "log": {"dev": "d", "offset": 16777216, "bytes": 4194304},
                  "seq": {"dev": "d", "offset": 20971520, "bytes": 1048576}}},
      "tasks": {
        "reader": {"loop": 2, "schedlab:io": {"file": "db", "op": "read", "bytes": 4096,
                   "offset": "random", "count": 300, "depth": 4}},
        "writer": {"loop": 1, "schedlab:ioprio": {"class": "be", "level": 7},
                   "schedlab:io": {"file": "log", "op": "write", "bytes": 65536, "count": 80, "depth": 2},
                   "schedlab:fsync": {"file": "log"}},
        "merger": {"loop": 1, "schedlab:io": {"file": "seq", "op": "write", "bytes": 4096,
                   "count": 64, "depth": 32}},
        "sync": {"loop": 10, "schedlab:io": {"file": "db", "op": "read", "bytes": 8192}},
        "buffered": {"loop": 1, "schedlab:io": {"file": "db", "op": "read", "bytes": 4096,
                     "direct": false, "count": 20}}}}"#;
    let r = run_clean(spec, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["run"]["engine"], "host");
    let reader = &task(&r, "reader")["io"];
    assert_eq!(reader["requests"], 600);
    assert_eq!(reader["bytes_read"], 600 * 4096);
    assert_eq!(reader["latency_ns"]["count"], 600);
    let writer = &task(&r, "writer")["io"];
    assert_eq!(writer["requests"], 80);
    assert_eq!(writer["bytes_written"], 80 * 65536);
    assert_eq!(task(&r, "sync")["io"]["bytes_read"], 10 * 8192);
    assert_eq!(task(&r, "buffered")["io"]["requests"], 20);
    let io = &r["summary"]["io"];
    assert_eq!(io["read"]["ios"], 600 + 10 + 20);
    assert_eq!(io["write"]["ios"], 80 + 64);
    assert_eq!(io["clat_ns"]["count"], 600 + 10 + 20 + 80 + 64);
    assert!(io["read"]["iops"].as_f64().unwrap() > 0.0);
    // The device saw at least the direct requests (merges may join sequential ones).
    let dev = &r["devices"][0];
    assert_eq!(dev["name"], "d");
    assert_eq!(dev["scheduler"], "mq-deadline");
    let direct_read = 600 * 4096 + 10 * 8192;
    assert!(dev["bytes_read"].as_u64().unwrap() >= direct_read, "{dev}");
    assert!(
        dev["bytes_written"].as_u64().unwrap() >= 80 * 65536 + 64 * 4096,
        "{dev}"
    );
    // queue/nomerges = 2 was applied: the merger's 32 adjacent writes per io_submit,
    // which the block layer merges on the plug with nomerges = 0, did not merge.
    assert_eq!(dev["merges"], 0, "{dev}");
    let notes = r["run"]["notes"].to_string();
    assert!(
        notes.contains("/dev/loop") && notes.contains("scheduler mq-deadline"),
        "{notes}"
    );
}

#[test]
fn an_io_priority_is_taken_and_a_scheduler_the_kernel_lacks_is_refused_with_its_path() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available() {
        return;
    }
    let spec = |sched: &str| {
        format!(
            r#"{{"schedlab": {{"devices": {{"d": {{"model": "ssd", "scheduler": "{sched}"}}}},
                "files": {{"f": {{"dev": "d", "bytes": 1048576}}}}}},
              "tasks": {{
                "rt": {{"loop": 1, "schedlab:ioprio": {{"class": "rt", "level": 1}},
                       "schedlab:io": {{"file": "f", "op": "read", "bytes": 4096, "count": 8, "depth": 8}}}},
                "idle": {{"loop": 1, "schedlab:ioprio": {{"class": "idle"}},
                         "schedlab:io": {{"file": "f", "op": "read", "bytes": 4096, "count": 8, "depth": 8}}}}}}}}"#
        )
    };
    // ioprio_set is read back before the task runs: a run is only returned when the
    // kernel kept both priorities.
    let r = run_clean(&spec("none"), &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(task(&r, "idle")["io"]["requests"], 8);
    match run_clean(&spec("deadline-lowprio"), &RunOptions::default()) {
        Err(HostError::Refused(m)) => {
            assert!(
                m.starts_with("$.schedlab.devices.d.scheduler: deadline-lowprio"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_run_that_ends_while_requests_are_in_flight_waits_for_them_and_cleans_up() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available() {
        return;
    }
    let spec = r#"{"schedlab": {"devices": {"d": {"model": "null_blk", "size_bytes": 8388608}}},
      "tasks": {"reader": {"loop": -1, "schedlab:io": {"dev": "d", "op": "read", "bytes": 65536,
                 "offset": "random", "count": 100000, "depth": 16}}}}"#;
    let opts = RunOptions {
        duration_ns: Some(300_000_000),
        ..Default::default()
    };
    let r = run_clean(spec, &opts).unwrap_or_else(|e| panic!("{e}"));
    let io = &task(&r, "reader")["io"];
    let n = io["requests"].as_u64().unwrap();
    // Stopped in the middle of its one op: some requests done, every one timed.
    assert!(n > 0 && n < 100_000, "{n}");
    assert_eq!(io["latency_ns"]["count"], n);
    assert_eq!(io["bytes_read"], n * 65536);
}

#[test]
fn a_given_device_must_be_a_bound_loop_device_of_the_spec() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available() {
        return;
    }
    let spec = r#"{"schedlab": {"devices": {"d": {"model": "ssd"}},
                              "files": {"f": {"dev": "d", "bytes": 1048576}}},
                 "tasks": {"t": {"loop": 1, "schedlab:io": {"file": "f", "op": "read", "bytes": 4096}}}}"#;
    let given = |name: &str, path: &str| RunOptions {
        devices: vec![(name.to_string(), PathBuf::from(path))],
        ..Default::default()
    };
    let refused = |opts: RunOptions| match run_clean(spec, &opts) {
        Err(HostError::Refused(m)) => m,
        other => panic!("{other:?}"),
    };
    let m = refused(given("e", "/dev/loop0"));
    assert!(m.contains("the spec has no device e"), "{m}");
    let m = refused(given("d", "/dev/null"));
    assert!(
        m.contains("device d given as /dev/null: not a loop device"),
        "{m}"
    );
}

#[test]
fn a_tunable_the_scheduler_lacks_is_refused_with_its_path_and_undone() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available() {
        return;
    }
    let spec = r#"{"schedlab": {"devices": {"d": {"model": "ssd", "scheduler": "mq-deadline",
                                             "params": {"queue/nomerges": "1", "bogus": "1"}}},
                              "files": {"f": {"dev": "d", "bytes": 1048576}}},
                 "tasks": {"t": {"loop": 1, "schedlab:io": {"file": "f", "op": "read", "bytes": 4096}}}}"#;
    match run_clean(spec, &RunOptions::default()) {
        Err(HostError::Refused(m)) => {
            assert!(m.starts_with("$.schedlab.devices.d.params.bogus: "), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

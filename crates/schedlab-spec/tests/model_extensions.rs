//! schedlab's extensions for the engine: the machine topology, cgroups (cpu and cpuset
//! controllers, checked as the kernel checks the writes), and block devices with the
//! `schedlab:io` event; each rule with its bad input (JSON path and message).

use schedlab_spec::model::{
    group_cpus, uclamp_util_of_pct, DeviceModel, Event, IoOffset, IoOp, Topology, ROOT_GROUP,
};
use schedlab_spec::{parse_spec, Spec};

fn spec(text: &str) -> Spec {
    parse_spec(text).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_err(text: &str, path: &str, contains: &str) {
    let e = parse_spec(text).expect_err("expected an error");
    assert_eq!(e.path, path, "{}", e.message);
    assert!(
        e.message.contains(contains),
        "{}: {}\nwanted: {contains}",
        e.path,
        e.message
    );
}

/// A spec with one task and this `schedlab` object.
fn with(schedlab: &str) -> String {
    format!(r#"{{"tasks": {{"t": {{"loop": 1, "run": 1}}}}, "schedlab": {schedlab}}}"#)
}

/// A spec whose `schedlab.cgroups` is `cgroups`.
fn cgroups(cgroups: &str) -> String {
    with(&format!(r#"{{"cgroups": {cgroups}}}"#))
}

#[test]
fn topology_numbering() {
    let s = spec(&with(
        r#"{"machine": {"cpus": 16, "topology": {"packages": 2, "cores": 4, "threads": 2, "llc_cores": 2}}}"#,
    ));
    let t = s.machine.topology;
    assert_eq!(
        t,
        Topology {
            packages: 2,
            cores_per_package: 4,
            threads_per_core: 2,
            cores_per_llc: 2
        }
    );
    // cpu = (package · cores + core) · threads + thread
    assert_eq!((t.package_of(7), t.core_of(7), t.llc_of(7)), (0, 3, 1));
    assert_eq!((t.package_of(8), t.core_of(8), t.llc_of(8)), (1, 4, 2));
    assert_eq!(t.core_of(4), t.core_of(5), "SMT siblings are adjacent");
    let flat = Topology::flat(3);
    assert_eq!((flat.nr_cpus(), flat.llc_of(2), flat.core_of(2)), (3, 0, 2));
    assert!(flat.is_flat() && !t.is_flat());
    // Without llc_cores every core of a package shares one LLC.
    let s = spec(&with(r#"{"machine": {"topology": {"cores": 6}}}"#));
    assert_eq!(s.machine.topology.cores_per_llc, 6);
}

#[test]
fn topology_errors() {
    assert_err(
        &with(r#"{"machine": {"cpus": 8, "topology": {"cores": 4, "threads": 1}}}"#),
        "$.schedlab.machine.cpus",
        "the machine has 8 CPUs but its topology",
    );
    assert_err(
        &with(r#"{"machine": {"topology": {"cores": 6, "llc_cores": 4}}}"#),
        "$.schedlab.machine.topology.llc_cores",
        "divide the 6 cores",
    );
    assert_err(
        &with(r#"{"machine": {"topology": {"packages": 4, "cores": 64, "threads": 2}}}"#),
        "$.schedlab.machine.topology",
        "512 CPUs",
    );
    assert_err(
        &with(r#"{"machine": {"topology": {"sockets": 2}}}"#),
        "$.schedlab.machine.topology.sockets",
        "unknown key \"sockets\"",
    );
    assert_err(
        r#"{"tasks": {"t": {"cpus": [4], "run": 1}}, "schedlab": {"machine": {"topology": {"cores": 2, "threads": 2}}}}"#,
        "$.tasks.t.cpus[0]",
        "the machine has 4 CPUs",
    );
}

/// `machine.smt_throughput`: thousandths of one thread's throughput, 1.3 unless given;
/// a profile's value is overridden by the spec's; the spec's topology bounds it.
#[test]
fn smt_throughput() {
    let milli = |machine: &str| {
        spec(&with(&format!(r#"{{"machine": {machine}}}"#)))
            .machine
            .smt_throughput_milli
    };
    assert_eq!(milli(r#"{"topology": {"cores": 2, "threads": 2}}"#), 1300);
    assert_eq!(
        milli(r#"{"topology": {"threads": 2}, "smt_throughput": 1.25}"#),
        1250
    );
    assert_eq!(
        milli(r#"{"topology": {"threads": 4}, "smt_throughput": 4}"#),
        4000
    );
    assert_eq!(
        milli(r#"{"cpus": 2, "smt_throughput": 3}"#),
        3000,
        "no SMT: no bound"
    );
    let profile = r#"{"name": "p", "machine": {"smt_throughput": 1.1}}"#;
    assert_eq!(
        milli(&format!(
            r#"{{"profile": {profile}, "topology": {{"threads": 2}}}}"#
        )),
        1100
    );
    assert_eq!(
        milli(&format!(
            r#"{{"profile": {profile}, "smt_throughput": 1.4, "topology": {{"threads": 2}}}}"#
        )),
        1400
    );
    let at = "$.schedlab.machine.smt_throughput";
    let bad = |x: &str| {
        with(&format!(
            r#"{{"machine": {{"topology": {{"threads": 2}}, "smt_throughput": {x}}}}}"#
        ))
    };
    assert_err(&bad("0.99"), at, "one thread alone is 1");
    assert_err(&bad("-1"), at, "one thread alone is 1");
    assert_err(&bad("1.0005"), at, "at most three decimals");
    assert_err(&bad("true"), at, "a number ≥ 1");
    assert_err(
        &bad("2.001"),
        at,
        "expected at most 2 for a core of 2 threads",
    );
}

#[test]
fn cgroup_v1_settings_and_implicit_parents() {
    let s = spec(&cgroups(
        r#"{"/a/b": {"cpu.shares": 512, "cpu.cfs_quota_us": 25000, "cpu.cfs_period_us": 100000, "cpu.cfs_burst_us": 5000},
            "/a": {"cpu.rt_runtime_us": 100000, "cpu.rt_period_us": 1000000, "cpuset.cpus": "0-1,3", "cpu.uclamp.min": "12.5", "cpu.uclamp.max": "max"},
            "/c": {}}"#,
    ));
    let paths: Vec<&str> = s.cgroups.iter().map(|g| g.path.as_str()).collect();
    assert_eq!(paths, ["/", "/a", "/a/b", "/c"], "parents before children");
    let parents: Vec<_> = s.cgroups.iter().map(|g| g.parent).collect();
    assert_eq!(parents, [None, Some(ROOT_GROUP), Some(1), Some(ROOT_GROUP)]);
    let (a, b) = (&s.cgroups[1], &s.cgroups[2]);
    assert_eq!(b.cpu.shares, Some(512));
    assert_eq!(
        (b.cpu.cfs_quota_us, b.cpu.cfs_period_us, b.cpu.cfs_burst_us),
        (Some(25000), Some(100000), Some(5000))
    );
    assert_eq!(
        (a.cpu.rt_runtime_us, a.cpu.rt_period_us),
        (Some(100000), Some(1000000))
    );
    assert_eq!(a.cpuset_cpus.as_deref(), Some(&[0, 1, 3][..]));
    assert_eq!(b.cpuset_cpus, None, "inherits its parent's");
    assert_eq!(group_cpus(&s.cgroups, 2), Some(&[0, 1, 3][..]));
    assert_eq!(group_cpus(&s.cgroups, 3), None, "every CPU");
    // The kernel's defaults for what a group does not set.
    let (root, c) = (&s.cgroups[0], &s.cgroups[3]);
    assert_eq!(
        (root.rt_runtime_us(), c.rt_runtime_us(), a.rt_runtime_us()),
        (950_000, 0, 100_000)
    );
    assert_eq!(
        (c.shares(), b.shares(), c.rt_period_us(), c.cfs_period_us()),
        (1024, 512, 1_000_000, 100_000)
    );
    assert_eq!(
        (a.cpu.uclamp_min, a.cpu.uclamp_max),
        (Some(1250), Some(10000))
    );
    // capacity_from_percent(): 12.5 % of 1024 rounds to 128.
    assert_eq!(uclamp_util_of_pct(1250), 128);
    assert_eq!(uclamp_util_of_pct(10000), 1024);
    assert_eq!(s.machine.cpus, 4, "the cpuset names CPU 3");
}

#[test]
fn cgroup_v2_names_map_to_v1_values() {
    let s = spec(&cgroups(
        r#"{"/a": {"cpu.weight": 100, "cpu.max": "50000 200000", "cpu.max.burst": 1000},
            "/b": {"cpu.weight": 1, "cpu.max": "max"},
            "/c": {"cpu.weight": 10000, "cpu.max": "20000"}}"#,
    ));
    let g = |i: usize| &s.cgroups[i].cpu;
    // sched_weight_from_cgroup(): round(weight · 1024 / 100).
    assert_eq!(
        (g(1).shares, g(2).shares, g(3).shares),
        (Some(1024), Some(10), Some(102400))
    );
    assert_eq!(
        (g(1).cfs_quota_us, g(1).cfs_period_us, g(1).cfs_burst_us),
        (Some(50000), Some(200000), Some(1000))
    );
    assert_eq!((g(2).cfs_quota_us, g(2).cfs_period_us), (Some(-1), None));
    assert_eq!((g(3).cfs_quota_us, g(3).cfs_period_us), (Some(20000), None));
    // v2 takes the minimum down the tree: a child may ask for more than its parent.
    spec(&cgroups(
        r#"{"/a": {"cpu.max": "10000 100000"}, "/a/b": {"cpu.max": "50000 100000"}}"#,
    ));
}

#[test]
fn cgroup_key_errors() {
    assert_err(
        &cgroups(r#"{"/a": {"cpu.shares": 512}, "/b": {"cpu.weight": 50}}"#),
        r#"$.schedlab.cgroups["/b"]["cpu.weight"]"#,
        "cgroup v2 file, but $.schedlab.cgroups[\"/a\"][\"cpu.shares\"] already uses a cgroup v1 file",
    );
    assert_err(
        &cgroups(r#"{"a": {}}"#),
        "$.schedlab.cgroups.a",
        "starting with \"/\"",
    );
    assert_err(
        &cgroups(r#"{"/a/": {}, "//a": {}}"#),
        r#"$.schedlab.cgroups["//a"]"#,
        "declared twice",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.share": 512}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.share"]"#,
        "unknown key \"cpu.share\"",
    );
    assert_err(
        &cgroups(r#"{"/": {"cpu.shares": 512}}"#),
        r#"$.schedlab.cgroups["/"]["cpu.shares"]"#,
        "cannot be set on the root cgroup",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.shares": 1}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.shares"]"#,
        "in 2..=262144, found 1",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.weight": 10001}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.weight"]"#,
        "in 1..=10000",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.max": "50000 100000 7"}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.max"]"#,
        "expected cpu.max as",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.uclamp.min": "12.345"}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.uclamp.min"]"#,
        "at most two decimals",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.uclamp.max": 101}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.uclamp.max"]"#,
        "percentage 0..=100",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpuset.cpus": "3-1"}}"#),
        r#"$.schedlab.cgroups["/a"]["cpuset.cpus"]"#,
        "expected a CPU list such as",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpuset.cpus": []}}"#),
        r#"$.schedlab.cgroups["/a"]["cpuset.cpus"]"#,
        "at least one CPU",
    );
}

#[test]
fn rt_group_scheduling_rules() {
    // Fits: children 0.3 + 0.2 of a parent's 0.5, under the global 0.95.
    spec(&cgroups(
        r#"{"/a": {"cpu.rt_runtime_us": 500000},
            "/a/x": {"cpu.rt_runtime_us": 300000}, "/a/y": {"cpu.rt_runtime_us": 20000, "cpu.rt_period_us": 100000}}"#,
    ));
    assert_err(
        &cgroups(r#"{"/a": {"cpu.rt_runtime_us": 200000, "cpu.rt_period_us": 100000}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.rt_runtime_us"]"#,
        "more than cpu.rt_period_us 100000",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.rt_runtime_us": 960000}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.rt_runtime_us"]"#,
        "more than the global RT limit 950000/1000000",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.rt_runtime_us": -1}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.rt_runtime_us"]"#,
        "-1 (unlimited)",
    );
    assert_err(
        &cgroups(
            r#"{"/a": {"cpu.rt_runtime_us": 500000},
                "/a/x": {"cpu.rt_runtime_us": 300000}, "/a/y": {"cpu.rt_runtime_us": 300000}}"#,
        ),
        r#"$.schedlab.cgroups["/a/y"]["cpu.rt_runtime_us"]"#,
        "children of cgroup \"/a\" (/a/x 300000/1000000, /a/y 300000/1000000) adds up to more than its own 500000/1000000",
    );
    // The root's share is the global limit; its children may not exceed it together.
    assert_err(
        &cgroups(r#"{"/a": {"cpu.rt_runtime_us": 500000}, "/b": {"cpu.rt_runtime_us": 500000}}"#),
        r#"$.schedlab.cgroups["/b"]["cpu.rt_runtime_us"]"#,
        "children of cgroup \"/\"",
    );
    assert_err(
        &cgroups(r#"{"/": {"cpu.rt_runtime_us": 0}}"#),
        r#"$.schedlab.cgroups["/"]["cpu.rt_runtime_us"]"#,
        "cannot be 0",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.rt_period_us": 0}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.rt_period_us"]"#,
        "in 1..=",
    );
}

#[test]
fn rt_tasks_need_a_group_with_rt_runtime() {
    let rt_task = |group: &str, extra: &str| {
        format!(
            r#"{{"tasks": {{"t": {{"policy": "SCHED_FIFO", "taskgroup": "{group}", "loop": 1, "run": 1}}}},
                "schedlab": {{"cgroups": {{{extra}}}}}}}"#
        )
    };
    spec(&rt_task("/rt", r#""/rt": {"cpu.rt_runtime_us": 100000}"#));
    spec(&rt_task("/", ""));
    assert_err(
        &rt_task("/other", ""),
        "$.tasks.t.taskgroup",
        "a SCHED_FIFO task in cgroup \"/other\", whose cpu.rt_runtime_us is 0",
    );
    // Found in whichever state the task reaches it, here its second phase.
    assert_err(
        r#"{"tasks": {"t": {"taskgroup": "/g", "phases": {"a": {"run": 1}, "b": {"policy": "SCHED_RR", "run": 1}}}}}"#,
        "$.tasks.t.phases.b",
        "a SCHED_RR task in cgroup \"/g\"",
    );
    // ... or when the list of phases starts again: the RR task of phase b goes round to a.
    assert_err(
        r#"{"tasks": {"t": {"phases": {"a": {"taskgroup": "/g", "run": 1}, "b": {"policy": "SCHED_RR", "taskgroup": "/", "run": 1}}}}}"#,
        "$.tasks.t.phases.a.taskgroup",
        "a SCHED_RR task in cgroup \"/g\"",
    );
}

#[test]
fn cfs_bandwidth_rules() {
    assert_err(
        &cgroups(r#"{"/a": {"cpu.cfs_quota_us": 500}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.cfs_quota_us"]"#,
        "1000..=",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.cfs_period_us": 2000000}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.cfs_period_us"]"#,
        "1000..=1000000 µs, found 2000000",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.cfs_quota_us": 10000, "cpu.cfs_burst_us": 20000}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.cfs_burst_us"]"#,
        "at most the quota (10000 µs), found 20000",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpu.max": "0"}}"#),
        r#"$.schedlab.cgroups["/a"]["cpu.max"]"#,
        "found 0",
    );
    // cgroup v1: a child may not get a larger share than its parent ...
    assert_err(
        &cgroups(
            r#"{"/a": {"cpu.cfs_quota_us": 10000}, "/a/b/c": {"cpu.cfs_quota_us": 20000, "cpu.cfs_period_us": 100000}}"#,
        ),
        r#"$.schedlab.cgroups["/a/b/c"]["cpu.cfs_quota_us"]"#,
        "larger share of a CPU than an ancestor's",
    );
    // ... but an equal or smaller one is fine, whatever the periods.
    spec(&cgroups(
        r#"{"/a": {"cpu.cfs_quota_us": 10000}, "/a/b": {"cpu.cfs_quota_us": 5000, "cpu.cfs_period_us": 50000}}"#,
    ));
}

#[test]
fn cpusets() {
    assert_err(
        r#"{"tasks": {"t": {"run": 1}}, "schedlab": {"machine": {"cpus": 2}, "cgroups": {"/a": {"cpuset.cpus": "0-2"}}}}"#,
        r#"$.schedlab.cgroups["/a"]["cpuset.cpus"]"#,
        "CPU 2 is out of range: the machine has 2 CPUs",
    );
    assert_err(
        &cgroups(r#"{"/a": {"cpuset.cpus": [0, 1]}, "/a/b/c": {"cpuset.cpus": "1-2"}}"#),
        r#"$.schedlab.cgroups["/a/b/c"]["cpuset.cpus"]"#,
        "CPU 2 is not in its parent's cpuset.cpus [0, 1]",
    );
    assert_err(
        r#"{"tasks": {"t": {"cpus": [2, 3], "taskgroup": "/a/b", "run": 1}},
            "schedlab": {"cgroups": {"/a": {"cpuset.cpus": "0-1"}}}}"#,
        "$.tasks.t.taskgroup",
        "the task's CPUs [2, 3] and cgroup \"/a/b\"'s cpuset.cpus [0, 1] have no CPU in common",
    );
    spec(
        r#"{"tasks": {"t": {"cpus": [1, 3], "taskgroup": "/a", "run": 1}},
            "schedlab": {"cgroups": {"/a": {"cpuset.cpus": "0-1"}}}}"#,
    );
}

#[test]
fn null_blk_devices_and_io_events() {
    let s = spec(
        r#"{"tasks": {"t": {"loop": 1,
              "schedlab:io": {"dev": "nullb0", "op": "read", "bytes": 4096},
              "schedlab:io1": {"dev": "fast", "op": "write", "bytes": 512, "offset": "random"},
              "schedlab:io2": {"dev": "fast", "op": "write", "bytes": 1024, "offset": 1048576}}},
            "schedlab": {"devices": {
              "nullb0": {"model": "null_blk"},
              "fast": {"model": "null_blk", "completion_ns": 2000, "queue_depth": 8, "size_bytes": 2097152,
                       "scheduler": "mq-deadline", "params": {"read_expire": 100}}}}}"#,
    );
    let d = &s.resources.devices;
    assert_eq!(
        d[0].model,
        DeviceModel::NullBlk {
            completion_ns: 10_000,
            queue_depth: 64,
            size_bytes: 250 << 30,
            rotational: false
        }
    );
    assert_eq!(d[0].scheduler, "none");
    assert_eq!(d[1].scheduler, "mq-deadline");
    assert_eq!(
        d[1].params,
        [("read_expire".to_string(), "100".to_string())]
    );
    assert_eq!(
        s.tasks[0].phases[0].events,
        [
            Event::Io {
                dev: 0,
                op: IoOp::Read,
                bytes: 4096,
                offset: IoOffset::Sequential
            },
            Event::Io {
                dev: 1,
                op: IoOp::Write,
                bytes: 512,
                offset: IoOffset::Random
            },
            Event::Io {
                dev: 1,
                op: IoOp::Write,
                bytes: 1024,
                offset: IoOffset::At(1 << 20)
            },
        ]
    );
}

#[test]
fn io_errors() {
    let io = |ev: &str| {
        format!(
            r#"{{"tasks": {{"t": {{"loop": 1, "schedlab:io": {ev}}}}},
                "schedlab": {{"devices": {{"d": {{"model": "null_blk", "size_bytes": 65536}}}}}}}}"#
        )
    };
    assert_err(
        &io(r#"{"dev": "d", "op": "read", "bytes": 1000}"#),
        "$.tasks.t.schedlab:io.bytes",
        "a multiple of 512 (the sector size), found 1000",
    );
    assert_err(
        &io(r#"{"dev": "d", "op": "read", "bytes": 0}"#),
        "$.tasks.t.schedlab:io.bytes",
        "in 512..=",
    );
    assert_err(
        &io(r#"{"dev": "d", "op": "trim", "bytes": 512}"#),
        "$.tasks.t.schedlab:io.op",
        "found \"trim\"",
    );
    assert_err(
        &io(r#"{"dev": "d", "op": "read", "bytes": 512, "offset": 100}"#),
        "$.tasks.t.schedlab:io.offset",
        "a multiple of 512",
    );
    assert_err(
        &io(r#"{"dev": "d", "op": "read", "bytes": 4096, "offset": 65024}"#),
        "$.tasks.t.schedlab:io",
        "ends past the end of device \"d\" (65536 bytes)",
    );
    assert_err(
        &io(r#"{"dev": "e", "op": "read", "bytes": 512}"#),
        "$.tasks.t.schedlab:io",
        "device \"e\" is not declared",
    );
    assert_err(
        &io(r#"{"dev": "d", "bytes": 512}"#),
        "$.tasks.t.schedlab:io",
        "needs \"op\"",
    );
    assert_err(
        &with(r#"{"devices": {"d": {"model": "nvme"}}}"#),
        "$.schedlab.devices.d.model",
        "found \"nvme\"",
    );
    assert_err(
        &with(r#"{"devices": {"d": {"model": "null_blk", "scheduler": "anticipatory"}}}"#),
        "$.schedlab.devices.d.scheduler",
        "found \"anticipatory\"",
    );
    assert_err(
        &with(r#"{"devices": {"d": {"completion_ns": 5}}}"#),
        "$.schedlab.devices.d",
        "needs \"model\"",
    );
}

/// A task with `schedlab:ioprio` set to `v`.
fn ioprio_task(v: &str) -> String {
    format!(r#"{{"tasks": {{"t": {{"loop": 1, "run": 1, "schedlab:ioprio": {v}}}}}}}"#)
}

#[test]
fn ioprio_as_ionice_sets_it() {
    use schedlab_spec::model::{IoPrio, IoPrioClass};
    let of = |v: &str| spec(&ioprio_task(v)).tasks[0].ioprio;
    let be = |level| IoPrio {
        class: IoPrioClass::Be,
        level,
    };
    assert_eq!(of(r#"{"class": "be", "level": 7}"#), Some(be(7)));
    assert_eq!(
        of(r#"{"class": "be"}"#),
        Some(be(4)),
        "ionice's default level"
    );
    assert_eq!(
        of(r#"{"class": "idle"}"#),
        Some(IoPrio {
            class: IoPrioClass::Idle,
            level: 0
        })
    );
    let none = spec(r#"{"tasks": {"t": {"loop": 1, "run": 1}}}"#);
    assert_eq!(none.tasks[0].ioprio, None, "derived when it submits");

    let at = "$.tasks.t.schedlab:ioprio";
    assert_err(
        &ioprio_task(r#"{"class": "bulk"}"#),
        &format!("{at}.class"),
        "unknown I/O priority class",
    );
    assert_err(
        &ioprio_task(r#"{"level": 2}"#),
        &format!("{at}.class"),
        "missing",
    );
    assert_err(
        &ioprio_task(r#"{"class": "rt", "level": 8}"#),
        &format!("{at}.level"),
        "0..=7",
    );
    assert_err(
        &ioprio_task(r#"{"class": "idle", "level": 1}"#),
        &format!("{at}.level"),
        "no levels",
    );
    assert_err(
        &ioprio_task(r#"{"class": "be", "nice": 1}"#),
        &format!("{at}.nice"),
        "class",
    );
    assert_err(&ioprio_task(r#""idle""#), at, "a JSON object");
}

/// `task_nice_ioclass` / `task_nice_ioprio` (include/linux/ioprio.h): the class from the
/// policy, the level (nice + 20) / 5.
#[test]
fn ioprio_derived_from_policy_and_nice() {
    use schedlab_spec::model::{IoPrio, IoPrioClass, Policy};
    let d = IoPrio::derived;
    for (nice, level) in [
        (-20, 0),
        (-16, 0),
        (-15, 1),
        (0, 4),
        (4, 4),
        (5, 5),
        (19, 7),
    ] {
        assert_eq!(d(Policy::Other, nice).level, level, "nice {nice}");
        assert_eq!(d(Policy::Other, nice).class, IoPrioClass::Be);
    }
    assert_eq!(d(Policy::Batch, 10).class, IoPrioClass::Be);
    assert_eq!(d(Policy::Idle, 0).class, IoPrioClass::Idle);
    for p in [Policy::Fifo, Policy::Rr, Policy::Deadline] {
        assert_eq!(
            d(p, 0),
            IoPrio {
                class: IoPrioClass::Rt,
                level: 4
            }
        );
    }
}

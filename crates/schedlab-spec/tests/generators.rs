//! Every generator's output is an ordinary spec that parses; hackbench's message accounting
//! balances; options are validated with `options.<name>` paths.

use proptest::prelude::*;
use schedlab_spec::gen::{generate, list};
use schedlab_spec::model::{Event, Headline, Policy, Spec};
use schedlab_spec::{parse_spec, parse_value};

fn gen(name: &str, opts: &[(&str, &str)]) -> Spec {
    let o: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = generate(name, &o).unwrap_or_else(|e| panic!("{name} {opts:?}: {e}"));
    // Through text too: what `schedlab gen` writes must read back the same.
    let text = serde_json::to_string_pretty(&v).unwrap();
    let a = parse_spec(&text).unwrap_or_else(|e| panic!("{name} {opts:?}: {e}"));
    assert_eq!(a, parse_value(&v).unwrap());
    a
}

#[test]
fn every_generator_with_defaults_parses_and_is_deterministic() {
    for g in list() {
        let a = generate(g.name, &[]).unwrap();
        let b = generate(g.name, &[]).unwrap();
        assert_eq!(a, b, "{} is not deterministic", g.name);
        gen(g.name, &[]);
        // Every documented default is accepted when given explicitly.
        let all: Vec<(String, String)> = g
            .options
            .iter()
            .map(|o| (o.name.to_string(), o.default.clone()))
            .collect();
        assert_eq!(
            generate(g.name, &all).unwrap(),
            a,
            "{}: explicit defaults differ",
            g.name
        );
    }
}

/// Bytes written and read per channel over the whole run (loops × instances × bytes).
fn traffic(s: &Spec) -> (Vec<u128>, Vec<u128>) {
    let n = s.resources.channels.len();
    let (mut w, mut r) = (vec![0u128; n], vec![0u128; n]);
    for t in &s.tasks {
        assert_eq!(t.loop_count, 1);
        for ph in &t.phases {
            for e in &ph.events {
                let times = t.instances as u128 * ph.loop_count as u128;
                match *e {
                    Event::Write { chan, bytes } => w[chan as usize] += times * bytes as u128,
                    Event::Read { chan, bytes } => r[chan as usize] += times * bytes as u128,
                    _ => {}
                }
            }
        }
    }
    (w, r)
}

#[test]
fn hackbench_message_accounting() {
    let s = gen(
        "hackbench",
        &[
            ("groups", "3"),
            ("loops", "7"),
            ("fds", "5"),
            ("datasize", "64"),
            ("mode", "pipe"),
        ],
    );
    let (w, r) = traffic(&s);
    assert_eq!(w, r, "every byte written is read");
    // Each receiver channel gets fds senders × loops messages × datasize bytes.
    assert!(w.iter().all(|&b| b == 5 * 7 * 64));
    assert_eq!(w.len(), 3 * 5);
    let instances: u32 = s.tasks.iter().map(|t| t.instances).sum();
    assert_eq!(instances, 3 * 5 * 2);
    // One start barrier for every instance, and the headline on the start mark.
    assert_eq!(s.resources.barriers, [("start".to_string(), 30)]);
    assert!(
        matches!(s.headline, Headline::ElapsedSinceMark { ref name, .. } if name == "hackbench_time")
    );
    assert!(s.tasks.iter().all(|t| t.process.is_none()));
    let th = gen("hackbench", &[("groups", "1"), ("tasks", "thread")]);
    assert!(th
        .tasks
        .iter()
        .all(|t| t.process.as_deref() == Some("hackbench")));
    assert!(th.resources.channels.iter().all(|c| c.capacity == 212_992));
}

#[test]
fn hackbench_30_is_the_seed_size() {
    let s = gen("hackbench", &[("groups", "30")]);
    let instances: u32 = s.tasks.iter().map(|t| t.instances).sum();
    assert_eq!(instances, 1200);
    let (w, _) = traffic(&s);
    assert_eq!(
        w.iter().sum::<u128>(),
        1_200_000 * 100,
        "1.2 M messages of 100 bytes"
    );
}

#[test]
fn cyclictest_threads_policies_and_load() {
    let s = gen(
        "cyclictest",
        &[
            ("threads", "3"),
            ("interval_us", "200"),
            ("distance_us", "100"),
        ],
    );
    let periods: Vec<u64> = s
        .tasks
        .iter()
        .map(|t| match t.phases[0].events[0] {
            Event::Timer { period_ns, .. } => period_ns,
            _ => panic!(),
        })
        .collect();
    assert_eq!(periods, [200_000, 300_000, 400_000]);
    assert!(s
        .tasks
        .iter()
        .all(|t| t.attr.policy == Policy::Fifo && t.attr.priority == 95));
    assert_eq!(s.duration_ns, None);
    let o = gen(
        "cyclictest",
        &[
            ("policy", "other"),
            ("load", "hackbench"),
            ("load_groups", "2"),
        ],
    );
    assert_eq!(o.tasks[0].attr.policy, Policy::Other);
    assert!(o.duration_ns.is_some(), "a looping load needs a duration");
    assert!(o.tasks.iter().any(|t| t.name.starts_with("load-")));
    // A restarting load forks its processes every round: a parent that forks, and
    // processes that are not started at the beginning.
    let r = gen(
        "cyclictest",
        &[
            ("load", "hackbench"),
            ("load_groups", "1"),
            ("load_loops", "5"),
        ],
    );
    assert!(r.tasks.iter().any(|t| t.name == "load-parent"));
    assert!(!o.tasks.iter().any(|t| t.name == "load-parent"));
}

#[test]
fn broadcast_wakeup_rt_and_non_rt() {
    let s = gen(
        "broadcast-wakeup",
        &[
            ("waiters", "3"),
            ("iterations", "10"),
            ("period_us", "1000"),
        ],
    );
    let w = s.tasks.iter().find(|t| t.name == "waiter").unwrap();
    assert_eq!(
        (w.instances, w.attr.policy, w.attr.priority),
        (3, Policy::Fifo, 80)
    );
    assert_eq!(s.duration_ns, Some(2_000_000_000));
    let o = gen("broadcast-wakeup", &[("rt", "false"), ("load_groups", "0")]);
    assert_eq!(o.tasks.len(), 2);
    assert_eq!(o.tasks[1].attr.policy, Policy::Other);
}

#[test]
fn periodic_rate_monotonic_and_utilisation() {
    let s = gen(
        "periodic",
        &[
            ("n", "3"),
            ("utils", "0.2,0.3,0.1"),
            ("periods", "1000,500,2000"),
        ],
    );
    let prio: Vec<i32> = s.tasks.iter().map(|t| t.attr.priority).collect();
    assert_eq!(prio, [98, 99, 97], "shorter period, higher priority");
    let runs: Vec<u64> = s
        .tasks
        .iter()
        .map(|t| match t.phases[0].events[1] {
            Event::Run { ns } => ns,
            _ => panic!(),
        })
        .collect();
    assert_eq!(runs, [200_000, 150_000, 200_000]);
    let a = gen("periodic", &[("seed", "5")]);
    let b = gen("periodic", &[("seed", "6")]);
    assert_ne!(a, b);
}

#[test]
fn option_errors_name_the_option() {
    let e = generate("hackbench", &[("groups".into(), "x".into())]).unwrap_err();
    assert_eq!(e.path, "options.groups");
    assert!(e.message.contains("expected an integer"), "{e}");
    assert_eq!(
        generate("hackbench", &[("nope".into(), "1".into())])
            .unwrap_err()
            .path,
        "options.nope"
    );
    assert_eq!(
        generate("cyclictest", &[("policy".into(), "rr".into())])
            .unwrap_err()
            .path,
        "options.policy"
    );
    assert_eq!(
        generate("cyclictest", &[("loops".into(), "0".into())])
            .unwrap_err()
            .path,
        "options.loops"
    );
    assert_eq!(
        generate("periodic", &[("utils".into(), "0.5".into())])
            .unwrap_err()
            .path,
        "options.utils"
    );
    assert_eq!(
        generate("periodic", &[("n".into(), "120".into())])
            .unwrap_err()
            .path,
        "options.n"
    );
    assert!(generate("nosuch", &[]).is_err());
}

fn s(x: impl ToString) -> String {
    x.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn hackbench_options_always_parse(groups in 1u32..4, loops in 1u32..50, fds in 1u32..6, datasize in 1u32..5000,
                                      pipe in any::<bool>(), thread in any::<bool>(), cpus in 1u32..9) {
        let o = vec![("groups".into(), s(groups)), ("loops".into(), s(loops)), ("fds".into(), s(fds)),
            ("datasize".into(), s(datasize)), ("mode".into(), s(if pipe { "pipe" } else { "socket" })),
            ("tasks".into(), s(if thread { "thread" } else { "process" })), ("cpus".into(), s(cpus))];
        let v = generate("hackbench", &o).unwrap();
        let spec = parse_value(&v).unwrap();
        let (w, r) = traffic(&spec);
        prop_assert_eq!(w, r);
    }

    #[test]
    fn cyclictest_options_always_parse(threads in 1u32..6, interval in 1u32..100_000, distance in 0u32..5000,
                                       other in any::<bool>(), loops in 0u32..5000, dur in 0u32..5000,
                                       load in any::<bool>(), groups in 1u32..3) {
        let o = vec![("threads".into(), s(threads)), ("interval_us".into(), s(interval)),
            ("distance_us".into(), s(distance)), ("policy".into(), s(if other { "other" } else { "fifo" })),
            ("loops".into(), s(loops)), ("duration_ms".into(), s(if loops == 0 { dur + 1 } else { dur })),
            ("load".into(), s(if load { "hackbench" } else { "none" })), ("load_groups".into(), s(groups))];
        let v = generate("cyclictest", &o).unwrap();
        prop_assert!(parse_value(&v).is_ok(), "{:?}", parse_value(&v));
    }

    #[test]
    fn broadcast_options_always_parse(waiters in 1u32..20, period in 1u32..100_000, iters in 1u32..10_000,
                                      rt in any::<bool>(), prio in 11u32..100, work in 0u32..1000, groups in 0u32..3) {
        let o = vec![("waiters".into(), s(waiters)), ("period_us".into(), s(period)), ("iterations".into(), s(iters)),
            ("rt".into(), s(rt)), ("prio".into(), s(prio)), ("work_us".into(), s(work)), ("load_groups".into(), s(groups))];
        let v = generate("broadcast-wakeup", &o).unwrap();
        prop_assert!(parse_value(&v).is_ok(), "{:?}", parse_value(&v));
    }

    #[test]
    fn periodic_options_always_parse(n in 1u32..60, u in 0.01f64..0.95, seed in any::<u64>(), pmin in 1u32..50_000,
                                     span in 0u32..1_000_000, other in any::<bool>(), cpus in 1u32..5) {
        let total = u * n.min(cpus) as f64;
        let o = vec![("n".into(), s(n)), ("utilization".into(), s(total)), ("seed".into(), s(seed)),
            ("pmin_us".into(), s(pmin)), ("pmax_us".into(), s(pmin + span)),
            ("policy".into(), s(if other { "other" } else { "fifo" })), ("cpus".into(), s(cpus))];
        let v = generate("periodic", &o).unwrap();
        let spec = parse_value(&v).unwrap();
        prop_assert_eq!(spec.tasks.len(), n as usize);
        prop_assert_eq!(v.clone(), generate("periodic", &o).unwrap());
    }
}

/// The seed's load was `hackbench 10` run again and again: with `load_loops` the load's
/// processes are forked by `load-parent`, kicked off through `load-go`, reaped through
/// `load-done`, and every channel balances within one round.
#[test]
fn broadcast_load_restarts_like_a_shell_loop() {
    let s = gen(
        "broadcast-wakeup",
        &[
            ("load_groups", "2"),
            ("load_loops", "3"),
            ("iterations", "5"),
        ],
    );
    let parent = s.tasks.iter().find(|t| t.name == "load-parent").unwrap();
    assert_eq!(parent.loop_count, -1);
    let forks: Vec<u32> = parent.phases[0]
        .events
        .iter()
        .filter_map(|e| match *e {
            Event::Fork { task } => Some(task),
            _ => None,
        })
        .collect();
    assert_eq!(
        forks.len(),
        2 * 2 * 20,
        "every process of both groups, once per round"
    );
    let load: Vec<_> = s
        .tasks
        .iter()
        .filter(|t| t.name.starts_with("load-g"))
        .collect();
    assert!(load.iter().all(|t| t.instances == 0 && t.loop_count == 1));
    // Per round: bytes written == bytes read on every channel, counting each fork.
    let chan = |name: &str| {
        s.resources
            .channels
            .iter()
            .position(|c| c.name == name)
            .unwrap()
    };
    let n = s.resources.channels.len();
    let (mut w, mut r) = (vec![0u128; n], vec![0u128; n]);
    let mut add = |t: &schedlab_spec::model::TaskSpec, copies: u128| {
        for ph in &t.phases {
            for e in &ph.events {
                let times = copies * ph.loop_count as u128;
                match *e {
                    Event::Write { chan, bytes } => w[chan as usize] += times * bytes as u128,
                    Event::Read { chan, bytes } => r[chan as usize] += times * bytes as u128,
                    _ => {}
                }
            }
        }
    };
    add(parent, 1);
    for (i, t) in s.tasks.iter().enumerate() {
        let copies = forks.iter().filter(|&&f| f as usize == i).count() as u128;
        if copies > 0 {
            add(t, copies);
        }
    }
    assert_eq!(w, r, "bytes written and read per channel in one round");
    assert_eq!(w[chan("load-go")], 80);
    assert_eq!(w[chan("load-done")], 80);
    assert_eq!(w[chan("load-g1-r7")], 20 * 3 * 100);
    // load_loops=0: the old never-ending single round.
    let once = gen(
        "broadcast-wakeup",
        &[
            ("load_groups", "1"),
            ("load_loops", "0"),
            ("iterations", "5"),
        ],
    );
    assert!(once.tasks.iter().all(|t| t.name != "load-parent"));
}

/// `commit` marks in the spec: one per transaction (× the instances of its task).
fn commit_marks(s: &Spec) -> u64 {
    let commit = s
        .resources
        .marks
        .iter()
        .position(|m| m == "commit")
        .unwrap() as u32;
    s.tasks
        .iter()
        .flat_map(|t| t.phases.iter().map(move |ph| (t, ph)))
        .map(|(t, ph)| {
            let n = ph
                .events
                .iter()
                .filter(|e| matches!(e, Event::Mark { label } if *label == commit))
                .count() as u64;
            n * t.instances as u64 * ph.loop_count.max(1) as u64
        })
        .sum()
}

#[test]
fn oltp_writes_the_transactions_its_options_ask_for() {
    // A bounded run: `events` transactions shared by the threads, each run once.
    let s = gen("oltp", &[("threads", "3"), ("events", "10")]);
    assert_eq!(s.tasks.len(), 3);
    assert!(s.tasks.iter().all(|t| t.loop_count == 1));
    assert_eq!(commit_marks(&s), 10);
    // A timed run: each thread loops over its pool for `time` seconds.
    let s = gen("oltp", &[("threads", "4"), ("pool", "5"), ("time", "7")]);
    assert!(s.tasks.iter().all(|t| t.loop_count == -1));
    assert_eq!(commit_marks(&s), 20);
    assert_eq!(s.duration_ns, Some(7_000_000_000));
    assert!(
        matches!(s.headline, Headline::MarkRate { ref name, .. } if name == "tps"),
        "{:?}",
        s.headline
    );
    // Read-only transactions write nothing; read-write ones write one redo record each to
    // the log file through the page cache, then fsync it; pages are read with O_DIRECT
    // from the tables' files.
    let counts = |mode: &str| {
        use schedlab_spec::model::{IoOp, IoTarget};
        let s = gen("oltp", &[("threads", "1"), ("events", "6"), ("mode", mode)]);
        let log = s
            .resources
            .files
            .iter()
            .position(|f| f.name == "ib_logfile0")
            .expect("the redo log file") as u32;
        let events: Vec<&Event> = s.tasks[0].phases.iter().flat_map(|ph| &ph.events).collect();
        let writes = events
            .iter()
            .filter(|e| {
                matches!(e, Event::IoBatch(io) if io.op == IoOp::Write && !io.direct
                    && io.target == IoTarget::File(log))
            })
            .count();
        let fsyncs = events
            .iter()
            .filter(|e| matches!(e, Event::Fsync { file } if *file == log))
            .count();
        let direct_reads = events
            .iter()
            .filter(|e| {
                matches!(e, Event::IoBatch(io) if io.op == IoOp::Read && io.direct
                    && matches!(io.target, IoTarget::File(f) if f != log))
            })
            .count();
        (writes, fsyncs, direct_reads)
    };
    let (w, f, r) = counts("read_only");
    assert_eq!((w, f), (0, 0));
    assert!(r > 0);
    let (w, f, _) = counts("read_write");
    assert_eq!((w, f), (6, 6));
}

#[test]
fn oltp_options_are_checked() {
    let err = |opts: &[(&str, &str)]| {
        let o: Vec<(String, String)> = opts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        generate("oltp", &o).unwrap_err().to_string()
    };
    assert!(err(&[("mode", "write_only")]).contains("options.mode"));
    assert!(err(&[("log_bytes", "1000")]).contains("options.log_bytes"));
    assert!(err(&[("miss_pct", "101")]).contains("options.miss_pct"));
}

fn opts(o: &[(&str, &str)]) -> Vec<(String, String)> {
    o.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A spec's CPU time as written: every `run` and every `sleep`'s set-up cost
/// (`machine.sleep_ns`), over every template once (buildworld forks each job once).
fn written_cpu_ns(s: &Spec) -> (u64, u64) {
    let (mut user, mut sys) = (0u64, 0u64);
    for t in &s.tasks {
        for ph in &t.phases {
            for e in &ph.events {
                match *e {
                    Event::Run { ns } => user += ns,
                    Event::Sleep { .. } => sys += s.machine.sleep_ns,
                    _ => {}
                }
            }
        }
    }
    (user, sys)
}

#[test]
fn buildworld_writes_its_closed_form() {
    let o = [
        ("dirs", "5"),
        ("lib_dirs", "2"),
        ("files", "7"),
        ("io_waits", "3"),
    ];
    let s = gen("buildworld", &o);
    let t = schedlab_spec::gen::buildworld_totals(&opts(&o)).unwrap();
    // 35 compiles, 5 links, 2 installs, and make.
    assert_eq!(t.jobs, 42);
    assert_eq!(s.tasks.len(), 43);
    assert_eq!(
        t.nominal_us,
        35 * (250_000 + 9_000) + 2 * 50_000,
        "C = n_c × (cpu_us + link_us) + n_i × install_us"
    );
    let (user, sys) = written_cpu_ns(&s);
    assert_eq!((user, sys), (t.user_us * 1000, t.sys_us * 1000));
    assert_eq!(t.sys_us, 42 * 3 * t.syscall_us);
    // 25.8 % of C, less the rounding of q to whole µs.
    let want = t.nominal_us as f64 * 0.258;
    assert!(
        t.sys_us as f64 <= want && t.sys_us as f64 > want - 42.0 * 3.0,
        "{t:?}"
    );
    // make forks every job once, and every job is created only by that fork.
    let make = s.tasks.iter().find(|t| t.name == "make").unwrap();
    let forks = make
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| matches!(e, Event::Fork { .. }))
        .count();
    assert_eq!(forks, 42);
    assert!(s.tasks.iter().all(|t| t.name == "make" || t.instances == 0));
}

#[test]
fn the_work_generators_check_their_options() {
    let err = |name: &str, o: &[(&str, &str)]| generate(name, &opts(o)).unwrap_err().to_string();
    for (name, o, path) in [
        ("buildworld", &[("jobs", "0")][..], "options.jobs"),
        (
            "buildworld",
            &[("dirs", "3"), ("lib_dirs", "4")][..],
            "options.lib_dirs",
        ),
        ("buildworld", &[("sys_pct", "100")][..], "options.sys_pct"),
        ("buildworld", &[("io_pct", "95")][..], "options.io_pct"),
        ("buildworld", &[("files", "1000")][..], "options.files"),
        ("buildworld", &[("io_waits", "0")][..], "options.io_waits"),
        (
            "httpd",
            &[("concurrency", "20"), ("requests", "10")][..],
            "options.concurrency",
        ),
        ("httpd", &[("threads", "x")][..], "options.threads"),
        ("threads", &[("mode", "spin")][..], "options.mode"),
        (
            "threads",
            &[("run_us", "0"), ("mode", "yield")][..],
            "options.run_us",
        ),
    ] {
        let e = err(name, o);
        assert!(e.starts_with(path), "{name} {o:?}: {e}");
    }
}

#[test]
fn httpd_and_threads_shapes() {
    let s = gen(
        "httpd",
        &[
            ("children", "2"),
            ("threads", "4"),
            ("concurrency", "3"),
            ("requests", "11"),
        ],
    );
    let copies = |prefix: &str| -> Vec<(u32, i64)> {
        s.tasks
            .iter()
            .filter(|t| t.name.starts_with(prefix))
            .map(|t| (t.instances, t.phases[0].loop_count))
            .collect()
    };
    // 11 requests: ab slots 4 + 4 + 3; children 6 + 5; workers of child 0: 2+2+1+1.
    assert_eq!(copies("ab"), [(2, 4), (1, 3)]);
    assert_eq!(copies("listener-"), [(1, 6), (1, 5)]);
    assert_eq!(copies("worker-0"), [(2, 2), (2, 1)]);
    assert_eq!(copies("worker-1"), [(1, 2), (3, 1)]);
    assert!(matches!(s.headline, Headline::MarkRate { ref name, .. } if name == "requests_per_s"));
    let t = gen("threads", &[("threads", "7"), ("process", "each")]);
    assert_eq!(t.tasks[0].instances, 7);
    assert!(t.tasks[0].process.is_none());
    let one = gen("threads", &[("threads", "7")]);
    assert_eq!(one.tasks[0].process.as_deref(), Some("threads"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn buildworld_always_writes_its_closed_form(dirs in 1u32..8, libs in 0u32..8, files in 1u32..6,
                                                cpu in 1u32..100_000, link in 0u32..5000, install in 0u32..5000,
                                                bp in 0u32..9999, io in 0u32..91, waits in 1u32..5, seed in any::<u64>()) {
        let libs = libs.min(dirs);
        let o = vec![("dirs".into(), s(dirs)), ("lib_dirs".into(), s(libs)), ("files".into(), s(files)),
            ("cpu_us".into(), s(cpu)), ("link_us".into(), s(link)), ("install_us".into(), s(install)),
            ("sys_pct".into(), format!("{}.{:02}", bp / 100, bp % 100)), ("io_pct".into(), s(io)),
            ("io_waits".into(), s(waits)), ("seed".into(), s(seed))];
        let v = generate("buildworld", &o).unwrap();
        let spec = parse_value(&v).unwrap();
        let t = schedlab_spec::gen::buildworld_totals(&o).unwrap();
        let c = (dirs * files) as u64 * (cpu as u64 + link as u64) + libs as u64 * install as u64;
        let jobs = (dirs * files + dirs + libs) as u64;
        let q = c as u128 * bp as u128 / (10_000 * jobs as u128 * waits as u128);
        prop_assert_eq!((t.nominal_us, t.syscall_us as u128, t.jobs), (c, q, jobs));
        prop_assert_eq!(written_cpu_ns(&spec), (t.user_us * 1000, t.sys_us * 1000));
        prop_assert_eq!(t.user_us + t.sys_us, c);
    }
}

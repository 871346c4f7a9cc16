mod common;
use common::*;
use schedlab_spec::model::*;

#[test]
fn periodic_tasks_run_and_account() {
    let s = spec(
        1,
        vec![
            periodic("a", 0, 2 * MS, 10 * MS, 50, 5),
            periodic("b", 1, 3 * MS, 20 * MS, 40, 3),
        ],
        timers(2),
    );
    for sched in ["fp", "example-fifo"] {
        let out = run(&s, sched, true);
        let a = task_json(&out, "a");
        assert_eq!(a["cpu_ns"], 10 * MS, "{sched}");
        assert_eq!(a["activations"], 5, "{sched}");
        let b = task_json(&out, "b");
        assert_eq!(b["cpu_ns"], 9 * MS, "{sched}");
        assert!(out.json()["summary"]["makespan_ns"].as_u64().unwrap() >= 60 * MS);
    }
}

#[test]
fn mutex_cond_barrier_and_pipe_workload_keeps_invariants() {
    let res = Resources {
        mutexes: vec!["m".into()],
        conds: vec!["c".into()],
        barriers: vec![("b".into(), 2)],
        channels: vec![Channel {
            name: "p".into(),
            kind: ChannelKind::Pipe,
            capacity: 100,
            op_cost_ns: 1000,
            op_spread: None,
            byte_cost_ps: 10,
        }],
        ..Resources::default()
    };
    let waiter = task(
        "waiter",
        attr(Policy::Other, 0),
        5,
        vec![
            Event::Lock { mutex: 0 },
            Event::Wait { cond: 0, mutex: 0 },
            Event::Unlock { mutex: 0 },
            Event::Read {
                chan: 0,
                bytes: 300,
            },
            Event::Run { ns: 100 * US },
        ],
    );
    let waker = task(
        "waker",
        attr(Policy::Fifo, 10),
        5,
        vec![
            Event::Sleep { ns: MS },
            Event::Lock { mutex: 0 },
            Event::Broad { cond: 0 },
            Event::Unlock { mutex: 0 },
            Event::Write {
                chan: 0,
                bytes: 300,
            },
            Event::Barrier { barrier: 0 },
        ],
    );
    let other = task(
        "other",
        attr(Policy::Other, 0),
        5,
        vec![
            Event::Run { ns: 700 * US },
            Event::Barrier { barrier: 0 },
            Event::Yield,
        ],
    );
    let s = spec(2, vec![waiter, waker, other], res);
    for sched in ["linux-cfs", "fp", "example-fifo"] {
        let out = run(&s, sched, true);
        // 5 loops of 100 µs of work plus 5 reads of 300 bytes (1 µs + 3 ns each).
        assert_eq!(
            task_json(&out, "waiter")["cpu_ns"].as_u64().unwrap(),
            5 * (100 * US + 1000 + 3),
            "{sched}"
        );
        assert!(
            out.json()["summary"]["makespan_ns"].is_u64(),
            "{sched}: {}",
            out.json()["summary"]
        );
    }
}

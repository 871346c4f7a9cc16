//! The same spec and seed give byte-identical results and traces.
mod common;
use common::*;
use schedlab_spec::model::*;

fn workload() -> Spec {
    let res = Resources {
        mutexes: vec!["m".into()],
        conds: vec!["c".into()],
        timers: vec!["t".into()],
        channels: vec![Channel {
            name: "p".into(),
            kind: ChannelKind::Pipe,
            capacity: 1024,
            op_cost_ns: 500,
            op_spread: None,
            byte_cost_ps: 5,
        }],
        ..Resources::default()
    };
    let mut tasks = vec![task(
        "bcast",
        attr(Policy::Fifo, 80),
        20,
        vec![
            Event::Timer {
                timer: 0,
                period_ns: 2 * MS,
                mode: TimerMode::Absolute,
            },
            Event::Lock { mutex: 0 },
            Event::Broad { cond: 0 },
            Event::Unlock { mutex: 0 },
        ],
    )];
    for i in 0..4 {
        tasks.push(task(
            &format!("w{i}"),
            attr(Policy::Other, i - 2),
            20,
            vec![
                Event::Lock { mutex: 0 },
                Event::Wait { cond: 0, mutex: 0 },
                Event::Unlock { mutex: 0 },
                Event::Run { ns: 150 * US },
                Event::Write {
                    chan: 0,
                    bytes: 100,
                },
                Event::Read {
                    chan: 0,
                    bytes: 100,
                },
            ],
        ));
    }
    let mut s = spec(2, tasks, res);
    s.duration_ns = Some(60 * MS);
    s
}

fn run_with_trace(sched: &str, seed: u64, path: &std::path::Path) -> (String, Vec<u8>) {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(sched.into()),
        seed: Some(seed),
        trace: Some(path.to_path_buf()),
        samples: schedlab_sim::SampleOutput::Memory,
        ..Default::default()
    };
    let out = schedlab_sim::simulate(&workload(), &cfg).unwrap();
    let mut json = out.json();
    json["run"]["wall_s"] = serde_json::json!(0);
    (json.to_string(), std::fs::read(path).unwrap())
}

#[test]
fn same_run_twice_gives_identical_bytes() {
    let dir = std::env::temp_dir().join(format!("schedlab-det-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for sched in schedlab_sim::cpu::NAMES
        .iter()
        .copied()
        .filter(|n| schedlab_sim::schedulers().iter().any(|e| e.info.name == *n))
    {
        let seed = 42;
        let (r1, t1) = run_with_trace(sched, seed, &dir.join("a.trace"));
        let (r2, t2) = run_with_trace(sched, seed, &dir.join("b.trace"));
        assert!(
            r1 == r2,
            "{sched}: results differ between two runs with seed {seed}"
        );
        assert!(
            t1 == t2,
            "{sched}: traces differ between two runs with seed {seed}"
        );
        assert!(t1.len() > 1000, "{sched}: trace suspiciously small");
    }
    if std::env::var_os("KEEP_TRACE").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
}

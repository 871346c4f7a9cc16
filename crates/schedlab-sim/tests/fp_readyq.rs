//! Issue 4 item 5: `fp` and the Linux RT class keep their ready tasks in a `schedlab-rtq`
//! queue whose back end is `--param readyq=...`. The back end must change no scheduling
//! decision — every result field but the counted work is identical — while the counted
//! work follows each structure's cost (a single list walks, a bitmap does not).
mod common;
use common::*;
use schedlab_spec::model::*;

const KINDS: [&str; 4] = ["single-list", "bitmap-lists", "two-level-bitmap", "tree"];

/// A busy mixed workload: periodic FIFO tasks sharing priorities, RR tasks, yielders, a
/// task that changes priority per phase, one that changes affinity per phase (a
/// DEQUEUE_SAVE/ENQUEUE_RESTORE at an unchanged priority), forks, and fair tasks.
fn mixed(cpus: u32) -> Spec {
    let mut res = timers(10);
    res.mutexes = vec!["m".into()];
    let mut tasks = Vec::new();
    for (i, prio) in [10, 10, 20, 20, 20, 30, 40, 40].into_iter().enumerate() {
        let c = (200 + 90 * i as u64) * US;
        let t = (2 + i as u64) * MS;
        tasks.push(periodic(&format!("p{i}"), i as u32, c, t, prio, -1));
    }
    for (i, policy) in [Policy::Fifo, Policy::Fifo, Policy::Rr, Policy::Rr]
        .into_iter()
        .enumerate()
    {
        tasks.push(task(
            &format!("y{i}"),
            attr(policy, 20),
            -1,
            vec![
                Event::Run { ns: 300 * US },
                Event::Yield,
                Event::Lock { mutex: 0 },
                Event::Run { ns: 50 * US },
                Event::Unlock { mutex: 0 },
                Event::Sleep { ns: 700 * US },
            ],
        ));
    }
    let phase = |name: &str, prio: i32, cpus: Option<Vec<u32>>| Phase {
        name: name.into(),
        loop_count: 2,
        events: vec![Event::Run { ns: 250 * US }, Event::Sleep { ns: 400 * US }],
        attr: Some(attr(Policy::Fifo, prio)),
        cpus,
        group: None,
    };
    let mut chg = task("chg", attr(Policy::Fifo, 20), -1, vec![]);
    chg.phases = vec![
        phase("a", 30, None),
        phase("b", 20, None),
        phase("c", 10, None),
    ];
    tasks.push(chg);
    let all: Vec<u32> = (0..cpus).collect();
    let mut aff = task("aff", attr(Policy::Fifo, 20), -1, vec![]);
    aff.phases = vec![
        phase("a", 20, Some(all.clone())),
        phase("b", 20, Some(vec![0])),
    ];
    tasks.push(aff);
    let child = tasks.len() as u32 + 3;
    tasks.push(task(
        "forker",
        attr(Policy::Fifo, 30),
        12,
        vec![
            Event::Timer {
                timer: 8,
                period_ns: 5 * MS,
                mode: TimerMode::Absolute,
            },
            Event::Fork { task: child },
        ],
    ));
    for n in [-5, 0] {
        tasks.push(task(
            &format!("fair{n}"),
            attr(Policy::Other, n),
            -1,
            vec![Event::Run { ns: MS }, Event::Sleep { ns: 300 * US }],
        ));
    }
    let mut kid = task(
        "kid",
        attr(Policy::Fifo, 20),
        3,
        vec![Event::Run { ns: 120 * US }, Event::Sleep { ns: 200 * US }],
    );
    kid.instances = 0;
    tasks.push(kid);
    debug_assert_eq!(tasks.len() as u32 - 1, child);
    let mut s = spec(cpus, tasks, res);
    s.duration_ns = Some(120 * MS);
    s
}

fn simulate(spec: &Spec, sched: &str, params: &[(&str, &str)]) -> serde_json::Value {
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(sched.into()),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        check: true,
        samples: schedlab_sim::SampleOutput::Memory,
        seed: Some(7),
        ..Default::default()
    };
    let out = schedlab_sim::simulate(spec, &cfg).unwrap_or_else(|e| panic!("{sched}: {e:?}"));
    out.json()
}

/// The result without the fields that may differ between back ends: the counted work,
/// the params (which name the back end) and the wall time.
fn decisions(mut r: serde_json::Value) -> (serde_json::Value, u64) {
    let run = r["run"].as_object_mut().unwrap();
    let work = run.remove("work_units").unwrap().as_u64().unwrap();
    run.remove("params");
    run.remove("wall_s");
    (r, work)
}

/// Every back end gives the same result; returns the work counted by each.
fn same_results(spec: &Spec, sched: &str, extra: &[(&str, &str)]) -> Vec<u64> {
    let mut base = None;
    let mut works = Vec::new();
    for kind in KINDS {
        let mut params = extra.to_vec();
        params.push(("readyq", kind));
        let (r, work) = decisions(simulate(spec, sched, &params));
        assert!(
            r["run"]["decisions"].as_u64().unwrap() > 20,
            "{sched}: too little happened"
        );
        match &base {
            None => base = Some(r),
            Some(b) => assert!(
                *b == r,
                "{sched} with readyq={kind} decided differently from readyq={}",
                KINDS[0]
            ),
        }
        works.push(work);
    }
    works
}

#[test]
fn fp_back_ends_give_identical_results() {
    for cpus in [1, 2] {
        same_results(&mixed(cpus), "fp", &[]);
        // The emulated rot_rdq cyclic handler rotates the ready queue every 2 ticks.
        same_results(&mixed(cpus), "fp", &[("timeslice_ticks", "2")]);
    }
}

#[test]
fn linux_rt_class_back_ends_give_identical_results() {
    for cpus in [1, 3] {
        same_results(&mixed(cpus), "linux-cfs", &[]);
        same_results(&mixed(cpus), "linux-cfs", &[("sched_rr_timeslice_ms", "3")]);
    }
}

/// N FIFO tasks at distinct priorities released together on one CPU: each release
/// enqueues all of them, lowest priority last.
fn many(n: u32) -> Spec {
    let tasks = (0..n)
        .map(|i| {
            periodic(
                &format!("t{i}"),
                0,
                20 * US,
                10 * MS,
                1 + (i as i32 * 97 / n as i32),
                20,
            )
        })
        .collect();
    let mut s = spec(1, tasks, timers(n as usize));
    s.duration_ns = Some(250 * MS);
    s
}

/// Seed 002: with many ready tasks the single list's linear insertion search costs far
/// more than the per-priority lists; with two tasks it costs about the same.
#[test]
fn counted_work_follows_the_structure() {
    for sched in ["fp", "linux-cfs"] {
        let w = same_results(&many(64), sched, &[]);
        let (single, bitmap, two, tree) = (w[0], w[1], w[2], w[3]);
        assert!(
            single > 3 * bitmap,
            "{sched}: single-list {single} vs bitmap-lists {bitmap}"
        );
        assert!(
            tree > bitmap,
            "{sched}: tree {tree} vs bitmap-lists {bitmap}"
        );
        assert!(two > 0 && bitmap > 0, "{sched}: no work counted");
        let w = same_results(&many(2), sched, &[]);
        assert!(
            w[0] <= 2 * w[1],
            "{sched}, 2 tasks: single-list {} vs bitmap-lists {}",
            w[0],
            w[1]
        );
    }
}

#[test]
fn readyq_is_validated_and_listed() {
    for sched in ["fp", "linux-cfs", "linux-eevdf"] {
        let cfg = schedlab_sim::SimConfig {
            scheduler: Some(sched.into()),
            params: vec![("readyq".into(), "heap".into())],
            ..Default::default()
        };
        let e = schedlab_sim::simulate(&many(2), &cfg)
            .unwrap_err()
            .to_string();
        for k in KINDS {
            assert!(e.contains(k), "{sched}: '{e}' does not list {k}");
        }
        assert!(
            e.contains("'heap'"),
            "{sched}: '{e}' does not name the bad value"
        );
        let info = schedlab_sim::schedulers()
            .into_iter()
            .find(|s| s.info.name == sched)
            .unwrap()
            .info;
        let p = info
            .params
            .iter()
            .find(|p| p.name == "readyq")
            .expect("readyq listed");
        assert_eq!(p.default, "bitmap-lists");
    }
}

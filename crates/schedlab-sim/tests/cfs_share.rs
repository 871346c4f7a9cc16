//! Issue requirement: CPU-bound tasks of different nice values on one CPU under
//! `linux-cfs` share it in proportion to their weights (sched_prio_to_weight,
//! kernel/sched/core.c) within 1 %.
mod common;
use common::*;
use schedlab_spec::model::*;

const WEIGHTS: [(i32, f64); 6] = [
    (-10, 9548.0),
    (-5, 3121.0),
    (0, 1024.0),
    (3, 526.0),
    (5, 335.0),
    (10, 110.0),
];

fn hog(nice: i32) -> TaskSpec {
    task(
        &format!("nice{nice}"),
        attr(Policy::Other, nice),
        -1,
        vec![Event::Run { ns: 50 * MS }],
    )
}

#[test]
fn nice_levels_share_one_cpu_in_proportion_to_their_weights() {
    for hz in [100, 250, 1000] {
        let mut s = spec(
            1,
            WEIGHTS.iter().map(|&(n, _)| hog(n)).collect(),
            Resources::default(),
        );
        s.duration_ns = Some(60_000 * MS);
        s.machine.hz = hz;
        let out = run(&s, "linux-cfs", false);
        let total: f64 = WEIGHTS.iter().map(|&(_, w)| w).sum();
        let elapsed = out.json()["run"]["sim_ns"].as_u64().unwrap() as f64;
        for &(nice, w) in &WEIGHTS {
            let got = task_json(&out, &format!("nice{nice}"))["cpu_ns"]
                .as_u64()
                .unwrap() as f64
                / elapsed;
            let want = w / total;
            let rel = (got - want).abs() / want;
            assert!(
                rel < 0.01,
                "HZ={hz} nice {nice}: share {got:.5}, weight share {want:.5} ({:.2} % off)",
                rel * 100.0
            );
        }
    }
}

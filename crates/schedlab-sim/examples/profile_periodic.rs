//! A profiling target: the bench's periodic workload under one policy, run long enough for
//! `perf record`. Usage: profile_periodic [policy] [seconds simulated].
fn main() {
    let mut args = std::env::args().skip(1);
    let policy = args.next().unwrap_or_else(|| "fp".into());
    let secs = args.next().unwrap_or_else(|| "5000".into());
    let opts: Vec<(String, String)> = [
        ("n", "10"),
        ("utilization", "2.4"),
        ("seed", "1"),
        ("pmin_us", "5000"),
        ("pmax_us", "50000"),
        ("duration_s", secs.as_str()),
        ("cpus", "4"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let spec =
        schedlab_spec::parse_value(&schedlab_spec::gen::generate("periodic", &opts).unwrap())
            .unwrap();
    let cfg = schedlab_sim::SimConfig {
        scheduler: Some(policy),
        samples: schedlab_sim::SampleOutput::Summary,
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let out = schedlab_sim::simulate(&spec, &cfg).unwrap();
    let acts: u64 = out.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["activations"].as_u64().unwrap())
        .sum();
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{acts} activations, {} events, {dt:.3} s, {:.2} M/s",
        out.json()["run"]["events"],
        acts as f64 / dt / 1e6
    );
}

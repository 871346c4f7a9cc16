//! The three ways a run keeps its samples give the same result where they promise to:
//! in memory (exact statistics), streamed to an Arrow IPC file, or summarised in
//! histograms — count, min, max and mean agree exactly, percentiles within a bucket, and
//! the file holds exactly the samples the memory run returns.

use schedlab_sim::{SampleOutput, SimConfig};
use serde_json::Value;

const SPEC: &str = r#"{
    "tasks": {
        "rt": {"policy": "SCHED_FIFO", "priority": 50, "run": 500, "timer": {"ref": "t", "period": 4000}},
        "periodic": {"instance": 3, "run": 1300, "timer": {"ref": "unique", "period": 7000}},
        "sleeper": {"instance": 2, "run": 200, "sleep": 3000},
        "hog": {"run": 100000}
    },
    "global": {"duration": 2},
    "schedlab": {"machine": {"cpus": 2, "hz": 250}}
}"#;

fn run(samples: SampleOutput) -> schedlab_sim::SimOutput {
    let cfg = SimConfig {
        scheduler: Some("linux-cfs".into()),
        samples,
        check: true,
        ..SimConfig::default()
    };
    schedlab_sim::simulate_text(SPEC, &cfg).expect("the run succeeds")
}

fn stats_of(r: &Value) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            let name = t["name"].as_str().unwrap().to_string();
            [
                (format!("{name}.latency"), t["wakeup_latency_ns"].clone()),
                (format!("{name}.response"), t["response_ns"].clone()),
            ]
        })
        .collect();
    out.push(("pooled".into(), r["summary"]["wakeup_latency_ns"].clone()));
    out
}

#[test]
fn memory_file_and_summary_modes_agree() {
    let mem = run(SampleOutput::Memory);
    let sum = run(SampleOutput::Summary);
    let dir = std::env::temp_dir().join(format!("schedlab-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("samples.arrow");
    let file = run(SampleOutput::File(path.clone()));
    let (m, s, f) = (mem.json(), sum.json(), file.json());
    assert_eq!(m["run"]["samples"]["mode"], "memory");
    assert_eq!(m["run"]["samples"]["percentiles"], "exact");
    assert_eq!(s["run"]["samples"]["percentiles"], "histogram");
    assert_eq!(f["run"]["samples"]["path"], path.display().to_string());
    let n = mem.samples.len() as u64;
    assert!(n > 1000, "the run made {n} samples");
    for r in [&m, &s, &f] {
        assert_eq!(r["run"]["samples"]["count"], n);
    }
    assert!(sum.samples.is_empty() && file.samples.is_empty());
    for ((name, exact), (_, approx)) in stats_of(&m).iter().zip(stats_of(&s)) {
        for key in ["count", "min", "max", "mean"] {
            assert_eq!(exact[key], approx[key], "{name}.{key}");
        }
        if let (Some(e), Some(a)) = (exact["p99"].as_u64(), approx["p99"].as_u64()) {
            assert!(
                a >= e && a as f64 <= e as f64 * (1.0 + 1.0 / 64.0) + 1.0,
                "{name}.p99: {a} vs {e}"
            );
        }
    }
    assert_eq!(stats_of(&s), stats_of(&f), "file mode keeps histograms too");
    // The file holds the very samples the memory run returned, in order.
    let reader =
        arrow_ipc::reader::FileReader::try_new(std::fs::File::open(&path).unwrap(), None).unwrap();
    let mut release = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch
            .column_by_name("release_ns")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::UInt64Array>()
            .unwrap()
            .values()
            .to_vec();
        release.extend(col);
    }
    assert_eq!(release, mem.samples.release_ns);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unwritable_sample_file_is_refused_before_the_run() {
    let cfg = SimConfig {
        samples: SampleOutput::File("/nonexistent-dir/samples.arrow".into()),
        ..SimConfig::default()
    };
    let e = schedlab_sim::simulate_text(SPEC, &cfg).unwrap_err();
    assert!(e.to_string().contains("--samples"), "{e}");
}

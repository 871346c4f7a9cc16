//! The host runner's block I/O generator against fio (fio 3.x, HOWTO "Job file
//! parameters"; JSON output's `iops` and `clat_ns.percentile`): a `schedlab gen fio` spec
//! run by the host runner and fio itself with the same `rw`, `bs`, `iodepth` and
//! `direct=1` (fio's `libaio` engine, the interface the runner's `io.rs` uses), on one
//! loop device bound for the comparison (through the restore journal, with the spec's
//! scheduler), in pairs run back to back (alternating which goes first), caches dropped
//! before each run. Each run gives IOPS and the completion latency's p50 and p99; each
//! pair gives the host's figure over fio's, and the comparison is the median of those
//! ratios: a pair shares the machine's load of the moment, which on a shared VM moves
//! either tool's figures by more than the tools differ.
//!
//! fio runs with `norandommap` (random offsets drawn with replacement, as the spec's
//! `random` is) and `randrepeat=0`; it does `size` bytes, as the spec's job does. Both run
//! at SCHED_FIFO priority [`RT_PRIORITY`] (fio through the policy it inherits, the spec's
//! task through its `policy`), so that whatever else the machine runs under CFS does not
//! decide the figures: on a 2-vCPU VM shared with compilers, fio's own runs spread by
//! 1.9x in IOPS under SCHED_OTHER and by 1.3x under SCHED_FIFO.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::journal::{self, Journal};
use crate::runner::{self, devices, RunOptions};

/// The SCHED_FIFO priority both tools run at.
pub const RT_PRIORITY: i32 = 50;

/// What is compared: fio's options as `schedlab gen fio` takes them.
#[derive(Clone, Debug)]
pub struct FioCase {
    /// `read`, `write`, `randread` or `randwrite`.
    pub rw: String,
    pub bs: u64,
    pub iodepth: u32,
    /// Bytes of the job's file (and of the loop device).
    pub size: u64,
    /// The device's I/O scheduler.
    pub scheduler: String,
}

impl FioCase {
    fn reads(&self) -> bool {
        self.rw.ends_with("read")
    }

    fn gen_options(&self) -> Vec<(String, String)> {
        [
            ("rw", self.rw.clone()),
            ("bs", self.bs.to_string()),
            ("iodepth", self.iodepth.to_string()),
            ("direct", "1".to_string()),
            ("size", self.size.to_string()),
            ("scheduler", self.scheduler.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// One run's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub iops: f64,
    pub clat_p50_ns: f64,
    pub clat_p99_ns: f64,
}

/// Every run of both, in the order they ran.
#[derive(Clone, Debug)]
pub struct FioComparison {
    pub case: FioCase,
    /// The loop device both ran on.
    pub device: String,
    pub host: Vec<Measured>,
    pub fio: Vec<Measured>,
    pub fio_version: String,
}

/// The median of `xs` (the mean of the middle two for an even count).
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn medians(runs: &[Measured]) -> Measured {
    Measured {
        iops: median(runs.iter().map(|m| m.iops).collect()),
        clat_p50_ns: median(runs.iter().map(|m| m.clat_p50_ns).collect()),
        clat_p99_ns: median(runs.iter().map(|m| m.clat_p99_ns).collect()),
    }
}

impl FioComparison {
    pub fn host_median(&self) -> Measured {
        medians(&self.host)
    }

    pub fn fio_median(&self) -> Measured {
        medians(&self.fio)
    }

    /// The median over the pairs of host / fio, per figure.
    pub fn median_ratio(&self) -> Measured {
        let r = |f: fn(&Measured) -> f64| {
            median(
                (self.host.iter().zip(&self.fio))
                    .map(|(h, x)| f(h) / f(x))
                    .collect(),
            )
        };
        Measured {
            iops: r(|m| m.iops),
            clat_p50_ns: r(|m| m.clat_p50_ns),
            clat_p99_ns: r(|m| m.clat_p99_ns),
        }
    }

    pub fn to_json(&self) -> Value {
        let m = |x: &Measured| json!({"iops": x.iops, "clat_p50_ns": x.clat_p50_ns, "clat_p99_ns": x.clat_p99_ns});
        json!({
            "case": {"rw": self.case.rw, "bs": self.case.bs, "iodepth": self.case.iodepth,
                     "direct": 1, "size": self.case.size, "scheduler": self.case.scheduler},
            "device": self.device,
            "fio_version": self.fio_version,
            "host": self.host.iter().map(m).collect::<Vec<_>>(),
            "fio": self.fio.iter().map(m).collect::<Vec<_>>(),
            "host_median": m(&self.host_median()),
            "fio_median": m(&self.fio_median()),
            "median_ratio": m(&self.median_ratio()),
        })
    }
}

/// Why a comparison cannot be made here (the caller skips it with this reason), or
/// failed.
#[derive(Debug)]
pub enum CheckError {
    Skipped(String),
    Failed(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Skipped(m) | CheckError::Failed(m) => f.write_str(m),
        }
    }
}

/// fio's version, if it is installed.
fn fio_version() -> Option<String> {
    let out = Command::new("fio").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Run `case` in `runs` pairs (one run of each tool) on one loop device.
pub fn compare(case: &FioCase, runs: usize) -> Result<FioComparison, CheckError> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CheckError::Skipped(
            "not root: loop devices and drop_caches need root".to_string(),
        ));
    }
    if !std::path::Path::new("/dev/loop-control").exists() {
        return Err(CheckError::Skipped(
            "no /dev/loop-control: this kernel has no loop devices".to_string(),
        ));
    }
    let Some(version) = fio_version() else {
        return Err(CheckError::Skipped(
            "fio is not installed (apt-get install fio)".to_string(),
        ));
    };
    let fail = CheckError::Failed;
    let mut spec = schedlab_spec::gen::generate("fio", &case.gen_options())
        .map_err(|e| fail(e.to_string()))?;
    if let Some(tasks) = spec["tasks"].as_object_mut() {
        for t in tasks.values_mut() {
            t["policy"] = json!("SCHED_FIFO");
            t["priority"] = json!(RT_PRIORITY);
        }
    }
    let spec = spec.to_string();
    let path = journal::default_path();
    let (mut j, _) = Journal::open(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let dir = std::env::var_os("SCHEDLAB_LOOP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(devices::DEFAULT_LOOP_DIR));
    let backing = dir.join(format!("schedlab-{}-fio.img", std::process::id()));
    let mut file = j
        .create_file(&backing)
        .map_err(|e| fail(format!("{}: {e}", backing.display())))?;
    devices::fill(&mut file, case.size).map_err(|e| fail(format!("{}: {e}", backing.display())))?;
    drop(file);
    let (n, held) = j
        .bind_loop(&backing)
        .map_err(|e| fail(format!("binding a loop device: {e}")))?;
    let dev = crate::loopdev::device_path(n);
    let queue = crate::loopdev::sysfs(n).join("queue");
    devices::set_scheduler(&mut j, &queue, &case.scheduler, "scheduler").map_err(fail)?;
    let opts = RunOptions {
        devices: vec![("nullb0".to_string(), dev.clone())],
        ..Default::default()
    };
    let mut cmp = FioComparison {
        case: case.clone(),
        device: dev.display().to_string(),
        host: Vec::new(),
        fio: Vec::new(),
        fio_version: version,
    };
    for i in 0..runs {
        for fio_turn in [i % 2 == 0, i % 2 == 1] {
            devices::drop_caches().map_err(|e| fail(format!("drop_caches: {e}")))?;
            if fio_turn {
                cmp.fio.push(run_fio(case, &dev)?);
            } else {
                let out = runner::run(&spec, &opts).map_err(|e| fail(e.to_string()))?;
                cmp.host.push(host_figures(case, &out.result)?);
            }
        }
    }
    drop(held);
    j.restore().map_err(|e| fail(format!("restoring: {e}")))?;
    Ok(cmp)
}

fn host_figures(
    case: &FioCase,
    r: &schedlab_core::result::RunResult,
) -> Result<Measured, CheckError> {
    let io = r
        .summary
        .io
        .as_ref()
        .ok_or_else(|| CheckError::Failed("the host run did no I/O".to_string()))?;
    let dir = if case.reads() { &io.read } else { &io.write };
    let v = io
        .clat_ns
        .all
        .values
        .as_ref()
        .ok_or_else(|| CheckError::Failed("the host run timed no request".to_string()))?;
    Ok(Measured {
        iops: dir.iops,
        clat_p50_ns: v.p50 as f64,
        clat_p99_ns: v.p99 as f64,
    })
}

fn run_fio(case: &FioCase, dev: &std::path::Path) -> Result<Measured, CheckError> {
    let fail = CheckError::Failed;
    let mut cmd = Command::new("fio");
    // SAFETY: between fork and exec, one async-signal-safe call on the child itself.
    unsafe {
        cmd.pre_exec(|| {
            let p = libc::sched_param {
                sched_priority: RT_PRIORITY,
            };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd
        .args([
            "--name=job0".to_string(),
            format!("--filename={}", dev.display()),
            "--ioengine=libaio".to_string(),
            format!("--rw={}", case.rw),
            format!("--bs={}", case.bs),
            format!("--iodepth={}", case.iodepth),
            "--direct=1".to_string(),
            format!("--size={}", case.size),
            "--norandommap".to_string(),
            "--randrepeat=0".to_string(),
            "--output-format=json".to_string(),
        ])
        .output()
        .map_err(|e| fail(format!("fio: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "fio failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').unwrap_or(0);
    let v: Value = serde_json::from_str(&text[start..])
        .map_err(|e| fail(format!("fio's JSON output: {e}")))?;
    let d = &v["jobs"][0][if case.reads() { "read" } else { "write" }];
    let pct = |p: &str| d["clat_ns"]["percentile"][p].as_f64();
    match (d["iops"].as_f64(), pct("50.000000"), pct("99.000000")) {
        (Some(iops), Some(p50), Some(p99)) => Ok(Measured {
            iops,
            clat_p50_ns: p50,
            clat_p99_ns: p99,
        }),
        _ => Err(fail(
            "fio's JSON output has no iops or clat percentiles".to_string(),
        )),
    }
}

//! The `schedlab.result/1` object (docs/results.md), typed. Every engine fills these
//! structures — the simulator from its model, the host runner from the real machine —
//! and serialises them with serde; the field order is the schema's.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use schedlab_spec::cost::CostKey;

use crate::stats::{Histogram, Summary};

/// The schema name and version every result carries.
pub const SCHEMA: &str = "schedlab.result/1";

/// Which engine produced a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// The deterministic simulator.
    Sim,
    /// The host runner: real threads on the machine's kernel.
    Host,
}

/// A whole result.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub schema: &'static str,
    pub run: RunInfo,
    pub tasks: Vec<TaskResult>,
    pub cpus: Vec<CpuResult>,
    /// Block devices, in declaration order (empty when the spec has none).
    pub devices: Vec<DeviceResult>,
    /// The cgroups with statistics to report, in id order (empty when none has any).
    pub groups: Vec<GroupResult>,
    pub summary: RunSummary,
}

/// How the run was made and what it cost.
#[derive(Clone, Debug, Serialize)]
pub struct RunInfo {
    pub engine: EngineKind,
    pub scheduler: String,
    /// Tunables as given (text), in the order given.
    #[serde(serialize_with = "ordered_map")]
    pub params: Vec<(String, String)>,
    pub seed: u64,
    /// sha256 of the exact bytes of the spec that was run (`None` for a spec built in
    /// code, which has no bytes).
    pub spec_sha256: Option<String>,
    /// Time covered (simulated ns for the simulator, elapsed ns on the host).
    pub sim_ns: u64,
    /// Host seconds the whole run took, set-up and result included (the only
    /// non-deterministic field of a simulated result).
    pub wall_s: f64,
    /// Engine events processed.
    pub events: u64,
    pub cpus: usize,
    pub hz: u32,
    /// `pick_next` calls.
    pub decisions: u64,
    /// Scheduler work counted by the policy (`Ctx::count_work`).
    pub work_units: u64,
    pub version: &'static str,
    /// Where the machine's size came from: `default`, `given`, `topology` or `inferred`
    /// (the smallest machine that has every CPU the spec names).
    pub cpus_source: &'static str,
    /// How the kernel's own execution was modelled (`machine.kernel`).
    pub kernel: KernelInfo,
    /// What the samples of this run are and where they went.
    pub samples: SampleInfo,
    /// Statements about how this run was modelled that a reader must know (a setting
    /// accepted but without effect in this model, a size chosen for the user, …).
    pub notes: Vec<String>,
    /// Why the run stopped before its end, leaving this partial result (its memory
    /// budget); `None` when it ran to its end.
    pub stopped: Option<String>,
    /// Host runs only: the facts of the kernel the run ran on (release, preemption model,
    /// HZ, clocksource, steal time, RT sysctls, timer slack).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<serde_json::Value>,
}

/// The kernel model of a run: the preemption model, the timers, the tick, and the machine
/// profile the spec started from.
#[derive(Clone, Debug, Serialize)]
pub struct KernelInfo {
    /// `none`, `voluntary`, `full` or `rt`.
    pub preempt: &'static str,
    /// `hrtimer` or `jiffy`.
    pub timers: &'static str,
    /// `periodic`, `nohz_idle` or `nohz_full`.
    pub tick: &'static str,
    /// `machine.profile`, if the spec named one.
    pub profile: Option<String>,
    /// The costs given as distributions (`schedlab_spec::cost`), by their spec names.
    pub varying_costs: Vec<String>,
}

impl KernelInfo {
    /// The kernel model of a run of `spec`, with the costs that vary: the machine's and
    /// each channel's.
    pub fn of(spec: &schedlab_spec::Spec) -> KernelInfo {
        let (machine, k) = (&spec.machine, &spec.machine.kernel);
        let machine_costs = (CostKey::ALL.iter())
            .filter(|&&key| machine.spreads.get(key).is_some())
            .map(|key| key.spec_name().to_string());
        let channel_costs = (spec.resources.channels.iter())
            .filter(|c| c.op_spread.is_some())
            .map(|c| format!("{}.op_cost_ns", c.name));
        KernelInfo {
            preempt: k.preempt.as_str(),
            timers: k.timers.as_str(),
            tick: k.tick.as_str(),
            profile: machine.profile.clone(),
            varying_costs: machine_costs.chain(channel_costs).collect(),
        }
    }
}

/// What became of the per-activation samples.
#[derive(Clone, Debug, Serialize)]
pub struct SampleInfo {
    /// `memory` (kept and returned), `file` (streamed to `path`), `summary` (only
    /// histograms kept).
    pub mode: &'static str,
    /// Activations recorded.
    pub count: u64,
    /// The file the samples were streamed to, in `file` mode.
    pub path: Option<String>,
    /// `exact` when the statistics come from the samples themselves; `histogram` when
    /// percentiles and the 6σ subset come from histograms (count, min, max and mean are
    /// exact either way).
    pub percentiles: &'static str,
}

/// Per-task totals.
#[derive(Clone, Debug, Serialize)]
pub struct TaskResult {
    pub name: String,
    pub tid: u32,
    pub policy: &'static str,
    /// RT priority for FIFO/RR, nice for fair policies.
    pub priority: i32,
    pub nice: i32,
    pub cpu_ns: u64,
    /// Of `cpu_ns`, the time in the kernel on the task's behalf (system time: its
    /// completed kernel spans in the simulator, `ru_stime` on the host).
    pub sys_ns: u64,
    /// Of `cpu_ns`, interrupt time charged to the task (0 on the host, where it is not
    /// told apart). User time is `cpu_ns − sys_ns − irq_ns`.
    pub irq_ns: u64,
    pub wait_ns: u64,
    pub sleep_ns: u64,
    pub switches_voluntary: u64,
    pub switches_involuntary: u64,
    pub migrations: u64,
    pub activations: u64,
    pub deadline_misses: u64,
    /// SCHED_DEADLINE tasks only: how often the CBS throttled the task with its runtime
    /// exhausted (until its next period).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dl_throttles: Option<u64>,
    pub wakeup_latency_ns: Summary,
    pub response_ns: Summary,
    /// A kernel thread the simulator added (a CPU's softirq thread, a device's flusher),
    /// not a task of the spec: written only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kernel_thread: bool,
    /// The block I/O the task submitted; written only for a task that submitted any.
    /// Boxed: most tasks submit none, and the inline figures would add some 190 bytes to
    /// every task's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<Box<TaskIoResult>>,
}

/// A task's block I/O: the bios it submitted (each `schedlab:io` request of a direct op,
/// each read-ahead or writeback run of the page cache, each metadata write or flush), as
/// they completed.
#[derive(Clone, Debug, Serialize)]
pub struct TaskIoResult {
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Submission → completion of each (from a histogram).
    pub latency_ns: Summary,
}

/// Per-CPU time.
#[derive(Clone, Debug, Serialize)]
pub struct CpuResult {
    pub cpu: usize,
    pub busy_ns: u64,
    pub idle_ns: u64,
    pub overhead_ns: u64,
}

/// How often and how long one cgroup's RT tasks were throttled on one CPU (its rt_rq
/// there; the root group's is the global limit).
#[derive(Clone, Debug, Serialize)]
pub struct RtThrottleResult {
    pub cpu: usize,
    /// Times it was throttled (its RT time passed its runtime).
    pub throttles: u64,
    /// Time it spent throttled, up to the end of the run.
    pub throttled_ns: u64,
}

/// Per-device I/O totals.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceResult {
    pub name: String,
    /// The I/O scheduler (elevator).
    pub scheduler: String,
    /// Requests completed.
    pub requests: u64,
    /// Bios merged into queued requests plus requests merged into others (as
    /// /proc/diskstats counts merges): requests + merges = bios submitted and completed.
    pub merges: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time with at least one request in the device.
    pub busy_ns: u64,
    /// Submission → completion of each request (from a histogram).
    pub latency_ns: Summary,
}

/// One cgroup's statistics.
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    /// The cgroup's path (`/a/b`).
    pub path: String,
    /// CFS bandwidth control, as the group's `cpu.stat` shows it; `None` when the group
    /// has no quota or the policy does not model CFS bandwidth.
    pub cfs_bandwidth: Option<CfsBandwidthStats>,
    /// RT throttling: the group's rt_rq on each CPU where it was ever throttled, in CPU
    /// order (empty when it never was, or the policy has no RT bandwidth).
    pub rt_throttling: Vec<RtThrottleResult>,
}

/// The CFS bandwidth counters of a group's `cpu.stat` (`struct cfs_bandwidth`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CfsBandwidthStats {
    /// Periods the period timer ran through (`nr_periods`).
    pub nr_periods: u64,
    /// Those of them that ended with a run queue of the group throttled (`nr_throttled`).
    pub nr_throttled: u64,
    /// Time the group's run queues spent throttled, summed over the CPUs
    /// (`throttled_time`, cgroup v2's `throttled_usec` × 1000).
    pub throttled_time_ns: u64,
    /// Periods in which the group used more than its quota, drawing on its burst
    /// (`nr_bursts`).
    pub nr_bursts: u64,
    /// The runtime used beyond the quota in those periods (`burst_time`, cgroup v2's
    /// `burst_usec` × 1000).
    pub burst_time_ns: u64,
}

/// Run-wide figures.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// When the last task exited, or `None` if the workload does not end.
    pub makespan_ns: Option<u64>,
    /// Pooled over every task's activations.
    pub wakeup_latency_ns: Summary,
    pub headline: Option<Headline>,
    /// First time each `schedlab:mark` label was hit (ns), in label order.
    #[serde(serialize_with = "ordered_map")]
    pub marks: Vec<(String, u64)>,
    /// Tasks still blocked when the run stopped.
    pub blocked_at_end: usize,
    /// Per-task counters summed over every task.
    pub totals: Totals,
    /// The workload's block I/O in fio's terms; written only when some task of the spec
    /// (not a kernel thread) submitted I/O.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<IoSummary>,
}

/// The block I/O of a run's tasks as fio reports a group of jobs: per direction the I/Os
/// (`ios`), their bytes, `iops` and `bw_kib_s` (KiB/s, fio's `BW` with KiB = 1024 bytes)
/// over the workload's time (until its last task exited, else the whole run), and the completion latency (`clat`: submission →
/// completion of each bio) of both directions pooled.
#[derive(Clone, Debug, Serialize)]
pub struct IoSummary {
    pub read: IoDirSummary,
    pub write: IoDirSummary,
    pub clat_ns: Summary,
}

/// One task's block I/O as an engine counts it: reads, writes, their bytes, and each
/// request's latency.
#[derive(Clone, Copy, Debug)]
pub struct TaskIoCounts<'a> {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latency: &'a Histogram,
}

impl IoSummary {
    /// The tasks' I/O pooled over `ns` of workload time; `None` when no task did any.
    pub fn pooled<'a>(
        tasks: impl IntoIterator<Item = TaskIoCounts<'a>>,
        ns: u64,
    ) -> Option<IoSummary> {
        let mut clat = Histogram::new();
        let (mut reads, mut writes, mut rbytes, mut wbytes) = (0, 0, 0, 0);
        let mut any = false;
        for t in tasks {
            any = true;
            reads += t.reads;
            writes += t.writes;
            rbytes += t.bytes_read;
            wbytes += t.bytes_written;
            clat.merge(t.latency);
        }
        any.then(|| IoSummary {
            read: IoDirSummary::over(reads, rbytes, ns),
            write: IoDirSummary::over(writes, wbytes, ns),
            clat_ns: Summary::of_histogram(&clat),
        })
    }
}

/// One direction of an [`IoSummary`].
#[derive(Clone, Debug, Serialize)]
pub struct IoDirSummary {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_kib_s: f64,
}

impl IoDirSummary {
    /// `ios` I/Os of `bytes` bytes over `ns` nanoseconds.
    pub fn over(ios: u64, bytes: u64, ns: u64) -> IoDirSummary {
        let s = ns as f64 / 1e9;
        let rate = |x: f64| if ns == 0 { 0.0 } else { x / s };
        IoDirSummary {
            ios,
            bytes,
            iops: rate(ios as f64),
            bw_kib_s: rate(bytes as f64 / 1024.0),
        }
    }
}

/// Per-task counters summed over the tasks of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// CPU time, and of it system and interrupt time, over every task.
    pub cpu_ns: u64,
    pub sys_ns: u64,
    pub irq_ns: u64,
    /// Voluntary + involuntary context switches.
    pub switches: u64,
    pub migrations: u64,
    pub deadline_misses: u64,
    pub activations: u64,
}

impl Totals {
    /// The sums over `tasks`.
    pub fn of(tasks: &[TaskResult]) -> Totals {
        tasks.iter().fold(Totals::default(), |t, r| Totals {
            cpu_ns: t.cpu_ns + r.cpu_ns,
            sys_ns: t.sys_ns + r.sys_ns,
            irq_ns: t.irq_ns + r.irq_ns,
            switches: t.switches + r.switches_voluntary + r.switches_involuntary,
            migrations: t.migrations + r.migrations,
            deadline_misses: t.deadline_misses + r.deadline_misses,
            activations: t.activations + r.activations,
        })
    }
}

/// The workload's own headline metric.
#[derive(Clone, Debug, Serialize)]
pub struct Headline {
    pub name: String,
    pub value: Option<f64>,
    pub unit: &'static str,
    /// For latency headlines: the pooled statistics the value (their mean, in µs) is
    /// taken from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats_ns: Option<Summary>,
}

impl RunResult {
    /// The result as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a result serialises")
    }

    /// The result as JSON text.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("a result serialises")
    }
}

/// Serialise key-value pairs as a JSON object, keeping their order.
fn ordered_map<S: Serializer, V: Serialize>(
    pairs: &[(String, V)],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

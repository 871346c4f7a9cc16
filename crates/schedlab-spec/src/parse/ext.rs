//! schedlab's own top-level object, `"schedlab": {…}`: the machine (and its topology),
//! pipes and sockets, cgroups (`cgroup.rs`), block devices, the scheduler, the seed and the
//! headline metric. rt-app ignores unknown top-level keys, so a
//! spec with this object still runs under rt-app (without the extension events).
//!
//! Channel defaults, and where they come from:
//! - pipe capacity 65536 bytes: Linux's default pipe buffer is 16 pages (`PIPE_DEF_BUFFERS`
//!   in include/linux/pipe_fs_i.h; pipe(7): "the pipe capacity is 16 pages").
//! - socket capacity 212992 bytes: hackbench uses `socketpair(AF_UNIX, SOCK_STREAM)`, whose
//!   sender is limited by `sk_sndbuf` = `net.core.wmem_default` = 212992 on 64-bit kernels
//!   (`SK_WMEM_MAX` in include/net/sock.h). The kernel counts skb overhead against it, so a
//!   real socket holds fewer payload bytes when messages are small; the model counts payload.
//! - per-call and per-byte CPU costs: see [`PIPE_OP_NS`] and [`SOCKET_OP_NS`].

use super::cgroup::{self, CgroupsIr};
use super::cost::{cost, varying};
use super::get::{self, Obj};
use crate::cost::CostKey;
use crate::json::{Json, Number};
use crate::model::IO_SCHEDULERS;
use crate::model::{
    BlockDevice, Channel, ChannelCost, ChannelKind, Machine, SchedWork, SchedulerChoice, Topology,
    Vm, HZ_CHOICES, HZ_CHOICES_TEXT, MAX_MACHINE_CPUS,
};
use crate::work::Names;
use crate::SpecError;

pub(crate) const PIPE_CAPACITY: u64 = 65536;
pub(crate) const SOCKET_CAPACITY: u64 = 212_992;

/// Channel costs are rough calibrations against hackbench on the lab host (host-lab.md,
/// rt-tests 2.4, 2 vCPUs): `-g 10 -l 100` moves 10·20·20·100 = 400,000 messages of 100 bytes
/// in 0.20 s with pipes and 0.65 s with sockets. With both CPUs busy that is at most
/// 2 × 0.20 s / 400 k ≈ 1.0 µs of CPU per message for pipes and ≈ 3.25 µs for sockets, each
/// message being one write and one read. Splitting that into a per-call cost and a per-byte
/// copy cost (≈ 4 GB/s for pipes, 2 GB/s for sockets) gives 2 × 450 + 2 × 100 × 0.25 ≈ 950 ns
/// per pipe message and 2 × 1500 + 2 × 100 × 0.5 ≈ 3.1 µs per socket message. Context
/// switches and wake-ups are charged separately by the machine model (`context_switch_ns`,
/// `wakeup_ns`, default 0), so with those at 0 these costs stand for the whole path.
pub(crate) const PIPE_OP_NS: u64 = 450;
pub(crate) const PIPE_BYTE_PS: u64 = 250;
/// See [`PIPE_OP_NS`].
pub(crate) const SOCKET_OP_NS: u64 = 1500;
pub(crate) const SOCKET_BYTE_PS: u64 = 500;

/// The machine's channel costs unless a profile or the spec sets them, indexed by
/// [`ChannelKind::index`].
pub(crate) const DEFAULT_CHANNEL_COSTS: [ChannelCost; 2] = [
    ChannelCost {
        op_cost_ns: PIPE_OP_NS,
        op_spread: None,
        byte_cost_ps: PIPE_BYTE_PS,
    },
    ChannelCost {
        op_cost_ns: SOCKET_OP_NS,
        op_spread: None,
        byte_cost_ps: SOCKET_BYTE_PS,
    },
];

/// Largest channel buffer: 1 GiB.
const MAX_CAPACITY: i128 = 1 << 30;

/// The headline as written (names unresolved; `resolve.rs` checks them).
pub(crate) enum HeadlineIr {
    None,
    Elapsed {
        mark: String,
        mark_path: String,
        name: String,
    },
    Wakeup {
        prefix: String,
        path: String,
        name: String,
    },
    Timer {
        prefix: String,
        path: String,
        name: String,
    },
    Rate {
        mark: String,
        mark_path: String,
        name: String,
    },
}

/// The machine as written: sizes still to be reconciled with the CPUs the spec names.
pub(crate) struct MachineIr {
    /// Every setting except the size.
    pub machine: Machine,
    pub cpus: Option<(u32, String)>,
    pub topology: Option<(Topology, String)>,
    /// Where `smt_throughput` was given (checked against the threads once sized).
    pub smt_throughput_path: Option<String>,
}

/// Everything under `"schedlab"`.
pub(crate) struct Ext {
    pub machine: MachineIr,
    pub cgroups: CgroupsIr,
    pub rest: ExtRest,
}

/// What `resolve.rs` turns into the model as it is.
pub(crate) struct ExtRest {
    pub scheduler: SchedulerChoice,
    pub seed: Option<u64>,
    pub channels: Vec<Channel>,
    /// The channels' names (pipes and sockets share one namespace) → index in `channels`.
    pub channel_names: Names,
    pub devices: Vec<BlockDevice>,
    /// Files with their devices still named (`resolve.rs` checks them).
    pub files: Vec<FileIr>,
    pub vm: Vm,
    pub headline: HeadlineIr,
}

/// A file of `schedlab.files` as written.
#[derive(Clone, Debug)]
pub(crate) struct FileIr {
    pub name: String,
    pub dev: String,
    pub offset: u64,
    pub bytes: u64,
    /// `$.schedlab.files.<name>`.
    pub path: String,
}

/// The file system's block size: files start and end on 4 KiB boundaries (ext4's default
/// block size, which is also the page size of the page cache).
pub const FILE_BLOCK_BYTES: u64 = 4096;

const TOP_KEYS: &[&str] = &[
    "machine",
    "pipes",
    "sockets",
    "cgroups",
    "devices",
    "files",
    "vm",
    "scheduler",
    "seed",
    "headline",
];

pub(crate) fn parse(v: Option<&Json>) -> Result<Ext, SpecError> {
    let mut ext = Ext {
        machine: MachineIr {
            machine: Machine::default(),
            cpus: None,
            topology: None,
            smt_throughput_path: None,
        },
        cgroups: CgroupsIr::default(),
        rest: ExtRest {
            scheduler: SchedulerChoice::default(),
            seed: None,
            channels: Vec::new(),
            channel_names: Names::default(),
            devices: Vec::new(),
            files: Vec::new(),
            vm: Vm::default(),
            headline: HeadlineIr::None,
        },
    };
    let Some(v) = v else { return Ok(ext) };
    let o = Obj::new(v, "$.schedlab", "the schedlab extension object")?;
    o.no_repeats(|_| false)?;
    // The machine first, wherever it is written: channels take its default costs.
    if let Some(mv) = o.get("machine") {
        ext.machine = machine(mv, &o.at("machine"))?;
    }
    let costs = ext.machine.machine.channel_costs;
    for (k, kv, kp) in o.iter() {
        match k {
            "machine" => {}
            "pipes" => channels(kv, &kp, ChannelKind::Pipe, costs, &mut ext.rest)?,
            "sockets" => channels(kv, &kp, ChannelKind::Socket, costs, &mut ext.rest)?,
            "cgroups" => ext.cgroups = cgroup::parse(kv, &kp)?,
            "devices" => ext.rest.devices = devices(kv, &kp)?,
            "files" => ext.rest.files = files(kv, &kp)?,
            "vm" => ext.rest.vm = vm(kv, &kp)?,
            "scheduler" => ext.rest.scheduler = scheduler(kv, &kp)?,
            "seed" => {
                let seed = get::int_in(kv, &kp, "a PRNG seed", 0, u64::MAX as i128)?;
                ext.rest.seed = Some(seed as u64)
            }
            "headline" => ext.rest.headline = headline(kv, &kp)?,
            _ => return Err(get::unknown_key(&kp, k, "the schedlab object", TOP_KEYS)),
        }
    }
    Ok(ext)
}

const MACHINE_KEYS: &[&str] = &[
    "cpus",
    "topology",
    "smt_throughput",
    "hz",
    "context_switch_ns",
    "sched_work_ps",
    "fork_ns",
    "wakeup_ns",
    "sleep_ns",
    "exit_ns",
    "kernel",
    "channel_costs",
    "profile",
];

/// The machine: its profile's settings (`profile`, whatever its place in the object), then
/// every other key over them.
fn machine(v: &Json, path: &str) -> Result<MachineIr, SpecError> {
    let o = Obj::new(v, path, "the machine")?;
    o.no_repeats(|_| false)?;
    let mut ir = MachineIr {
        machine: Machine::default(),
        cpus: None,
        topology: None,
        smt_throughput_path: None,
    };
    if let Some(pv) = o.get("profile") {
        let name = super::profile::apply(pv, &o.at("profile"), &mut ir)?;
        ir.machine.profile = Some(name);
    }
    machine_keys(&o, &mut ir, true)?;
    Ok(ir)
}

/// A machine cost that may vary (`parse/cost.rs`): its minimum, its spread recorded in `m`.
fn varying_into(
    v: &Json,
    path: &str,
    what: &str,
    m: &mut Machine,
    key: CostKey,
) -> Result<u64, SpecError> {
    let (min, spread) = varying(v, path, what)?;
    m.spreads.set(key, spread);
    Ok(min)
}

/// `machine.sched_work_ps`: one cost per unit of scheduler work (ps) for every policy, or
/// an object giving each named policy its own (a policy it does not name pays nothing):
/// a cost per unit, or a cost per unit and one per decision.
/// Either form replaces whatever a profile set.
fn sched_work(v: &Json, path: &str, m: &mut Machine) -> Result<(), SpecError> {
    let what = "a cost per unit of scheduler work in ps";
    m.sched_work_ps_by_policy.clear();
    if !matches!(v, Json::Obj(_)) {
        m.sched_work_ps = cost(v, path, what)?;
        return Ok(());
    }
    let form = "a cost per unit of scheduler work in ps, or an object of them by policy name";
    let o = Obj::new(v, path, form)?;
    o.no_repeats(|_| false)?;
    if o.get("dist").is_some() {
        return Err(SpecError::new(
            path,
            format!("expected {form}, found an object with \"dist\": this cost does not vary"),
        ));
    }
    m.sched_work_ps = 0;
    for (name, kv, kp) in o.iter() {
        let w = policy_sched_work(kv, &kp, what)?;
        m.sched_work_ps_by_policy.push((name.to_string(), w, kp));
    }
    Ok(())
}

/// The keys of a policy's entry of `machine.sched_work_ps` in its object form.
const SCHED_WORK_KEYS: &[&str] = &["unit_ps", "decision_ns"];

/// One policy's entry of `machine.sched_work_ps`: a cost per unit (ps), or
/// `{"unit_ps": …, "decision_ns": …}` (either key may be left out: 0), the second a fixed
/// cost of each of the policy's scheduling decisions.
fn policy_sched_work(v: &Json, path: &str, what: &str) -> Result<SchedWork, SpecError> {
    if !matches!(v, Json::Obj(_)) {
        let unit_ps = cost(v, path, what)?;
        return Ok(SchedWork {
            unit_ps,
            decision_ns: 0,
        });
    }
    let form = "a cost per unit of scheduler work in ps, or {\"unit_ps\", \"decision_ns\"}";
    let o = Obj::new(v, path, form)?;
    o.no_repeats(|_| false)?;
    let mut w = SchedWork::default();
    for (k, kv, kp) in o.iter() {
        match k {
            "unit_ps" => w.unit_ps = cost(kv, &kp, what)?,
            "decision_ns" => w.decision_ns = cost(kv, &kp, "a cost per scheduling decision in ns")?,
            _ => {
                return Err(get::unknown_key(
                    &kp,
                    k,
                    "a policy's scheduler work",
                    SCHED_WORK_KEYS,
                ))
            }
        }
    }
    Ok(w)
}

/// Apply the keys of the machine object `o` to `ir`; `profile` only where `profile_ok`
/// (a profile's own machine cannot name another profile).
pub(crate) fn machine_keys(o: &Obj, ir: &mut MachineIr, profile_ok: bool) -> Result<(), SpecError> {
    let m = &mut ir.machine;
    for (k, kv, kp) in o.iter() {
        match k {
            "profile" if profile_ok => {}
            "channel_costs" => channel_costs(kv, &kp, &mut m.channel_costs)?,
            "cpus" => {
                let n = get::int_in(kv, &kp, "a CPU count", 1, MAX_MACHINE_CPUS as i128)?;
                ir.cpus = Some((n as u32, kp));
            }
            "topology" => ir.topology = Some((topology(kv, &kp)?, kp)),
            "smt_throughput" => {
                m.smt_throughput_milli = smt_throughput(kv, &kp)?;
                ir.smt_throughput_path = Some(kp);
            }
            "hz" => {
                let hz = get::int(kv, &kp, "a tick rate (Linux CONFIG_HZ)")?;
                if !HZ_CHOICES.iter().any(|&c| i128::from(c) == hz) {
                    return Err(SpecError::new(
                        kp,
                        format!("expected a tick rate of {HZ_CHOICES_TEXT} Hz (Linux CONFIG_HZ choices), found {hz}"),
                    ));
                }
                m.hz = hz as u32;
            }
            "context_switch_ns" => {
                let what = "a context-switch cost in ns";
                m.context_switch_ns = varying_into(kv, &kp, what, m, CostKey::ContextSwitch)?
            }
            "sched_work_ps" => sched_work(kv, &kp, m)?,
            "fork_ns" => m.fork_ns = varying_into(kv, &kp, "a fork cost in ns", m, CostKey::Fork)?,
            "wakeup_ns" => {
                m.wakeup_ns = varying_into(kv, &kp, "a wake-up cost in ns", m, CostKey::Wakeup)?
            }
            "sleep_ns" => {
                let what = "a sleep set-up cost in ns";
                m.sleep_ns = varying_into(kv, &kp, what, m, CostKey::Sleep)?
            }
            "exit_ns" => m.exit_ns = varying_into(kv, &kp, "an exit cost in ns", m, CostKey::Exit)?,
            "kernel" => super::kernel::parse(kv, &kp, &mut m.kernel, &mut m.spreads)?,
            "profile" => {
                return Err(SpecError::new(
                    kp,
                    "a profile's machine cannot name another profile",
                ))
            }
            _ => return Err(get::unknown_key(&kp, k, "the machine", MACHINE_KEYS)),
        }
    }
    Ok(())
}

const CHANNEL_COST_KEYS: &[&str] = &["op_cost_ns", "byte_cost_ps"];

/// `{"pipe": {"op_cost_ns", "byte_cost_ps"}, "socket": {…}}`: the costs of channels that
/// do not give their own.
fn channel_costs(v: &Json, path: &str, out: &mut [ChannelCost; 2]) -> Result<(), SpecError> {
    let o = Obj::new(
        v,
        path,
        "the channel costs ({\"pipe\": {op_cost_ns, byte_cost_ps}, \"socket\": {…}})",
    )?;
    o.no_repeats(|_| false)?;
    let kinds = ChannelKind::ALL.map(ChannelKind::as_str);
    for (key, kv, kp) in o.iter() {
        let kind = ChannelKind::parse(key)
            .ok_or_else(|| get::unknown_key(&kp, key, "the channel costs", &kinds))?;
        let c = &mut out[kind.index()];
        let co = Obj::new(
            kv,
            &kp,
            &format!("the {key} costs ({{op_cost_ns, byte_cost_ps}})"),
        )?;
        co.no_repeats(|_| false)?;
        for (ck, cv, cp) in co.iter() {
            if !channel_cost_key(ck, cv, &cp, c)? {
                let at = format!("the {key} costs");
                return Err(get::unknown_key(&cp, ck, &at, CHANNEL_COST_KEYS));
            }
        }
    }
    Ok(())
}

/// Read `key` into `c` if it is one of a channel's costs (`op_cost_ns`, `byte_cost_ps`);
/// whether it was — one reading for `machine.channel_costs` and each channel's own.
fn channel_cost_key(
    key: &str,
    v: &Json,
    path: &str,
    c: &mut ChannelCost,
) -> Result<bool, SpecError> {
    match key {
        "op_cost_ns" => {
            (c.op_cost_ns, c.op_spread) = varying(v, path, "a per-call CPU cost in ns")?
        }
        "byte_cost_ps" => c.byte_cost_ps = cost(v, path, "a per-byte CPU cost in ps")?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// `machine.smt_throughput`: a number ≥ 1 with at most three decimals, in thousandths.
/// (Its upper bound, the threads of a core, is checked once the machine is sized.)
fn smt_throughput(v: &Json, path: &str) -> Result<u32, SpecError> {
    let what = "the combined throughput of a core whose threads are all busy, relative to \
                one thread alone (a number ≥ 1, e.g. 1.3)";
    let x = match v {
        Json::Num(Number::Int(i)) => *i as f64,
        Json::Num(Number::Float(f)) => *f,
        other => {
            return Err(SpecError::new(
                path,
                format!("expected {what}, found {}", other.describe()),
            ))
        }
    };
    let milli = (x * 1000.0).round();
    if !(1000.0..=1000.0 * MAX_MACHINE_CPUS as f64).contains(&milli) || !x.is_finite() {
        return Err(SpecError::new(
            path,
            format!("expected {what}, found {x}: one thread alone is 1, and a core cannot be slower with more of its threads busy"),
        ));
    }
    if (x * 1000.0 - milli).abs() > 1e-6 {
        return Err(SpecError::new(
            path,
            format!("expected {what} with at most three decimals, found {x}"),
        ));
    }
    Ok(milli as u32)
}

const TOPOLOGY_KEYS: &[&str] = &["packages", "cores", "threads", "llc_cores"];

/// `{"packages": P, "cores": C, "threads": T, "llc_cores": L}`: P packages of C cores of T
/// hardware threads, every L consecutive cores of a package sharing one LLC (default: all
/// of them). P·C·T ≤ 256; L divides C.
fn topology(v: &Json, path: &str) -> Result<Topology, SpecError> {
    let o = Obj::new(
        v,
        path,
        "the topology ({\"packages\", \"cores\", \"threads\", \"llc_cores\"})",
    )?;
    o.no_repeats(|_| false)?;
    let mut counts = [1u32, 1, 1];
    let mut llc: Option<(u32, String)> = None;
    for (k, kv, kp) in o.iter() {
        let max = MAX_MACHINE_CPUS as i128;
        let n = |what: &str| get::int_in(kv, &kp, what, 1, max).map(|n| n as u32);
        match k {
            "packages" => counts[0] = n("a number of packages")?,
            "cores" => counts[1] = n("a number of cores per package")?,
            "threads" => counts[2] = n("a number of hardware threads per core")?,
            "llc_cores" => llc = Some((n("a number of cores per last-level cache")?, kp.clone())),
            _ => return Err(get::unknown_key(&kp, k, "the topology", TOPOLOGY_KEYS)),
        }
    }
    let [packages, cores, threads] = counts;
    let nr = packages as u64 * cores as u64 * threads as u64;
    if nr > MAX_MACHINE_CPUS as u64 {
        return Err(SpecError::new(
            path,
            format!(
                "{packages} packages × {cores} cores × {threads} threads is {nr} CPUs; schedlab \
                 simulates at most {MAX_MACHINE_CPUS}"
            ),
        ));
    }
    let cores_per_llc = match llc {
        None => cores,
        Some((l, lp)) => {
            if cores % l != 0 {
                return Err(SpecError::new(
                    lp,
                    format!(
                        "expected llc_cores to divide the {cores} cores of a package (each LLC \
                         serves the same number of cores), found {l}"
                    ),
                ));
            }
            l
        }
    };
    Ok(Topology {
        packages,
        cores_per_package: cores,
        threads_per_core: threads,
        cores_per_llc,
    })
}

fn channels(
    v: &Json,
    path: &str,
    kind: ChannelKind,
    costs: [ChannelCost; 2],
    out: &mut ExtRest,
) -> Result<(), SpecError> {
    let what = match kind {
        ChannelKind::Pipe => "the pipes object ({name: {capacity, op_cost_ns, byte_cost_ps}})",
        ChannelKind::Socket => "the sockets object ({name: {capacity, op_cost_ns, byte_cost_ps}})",
    };
    let o = Obj::new(v, path, what)?;
    o.no_repeats(|_| false)?;
    for (name, cv, cp) in o.iter() {
        if name.is_empty() {
            return Err(SpecError::new(cp, "a channel needs a non-empty name"));
        }
        if out.channel_names.insert(name).is_err() {
            return Err(SpecError::new(
                cp,
                format!(
                    "channel {name:?} is declared twice (pipes and sockets share one namespace)"
                ),
            ));
        }
        let co = Obj::new(cv, &cp, &format!("channel {name:?}"))?;
        co.no_repeats(|_| false)?;
        let mut capacity = match kind {
            ChannelKind::Pipe => PIPE_CAPACITY,
            ChannelKind::Socket => SOCKET_CAPACITY,
        };
        let mut c = costs[kind.index()];
        for (k, kv, kp) in co.iter() {
            if k == "capacity" {
                capacity =
                    get::int_in(kv, &kp, "a buffer capacity in bytes", 1, MAX_CAPACITY)? as u64;
            } else if !channel_cost_key(k, kv, &kp, &mut c)? {
                return Err(get::unknown_key(
                    &kp,
                    k,
                    &format!("channel {name:?}"),
                    &["capacity", "op_cost_ns", "byte_cost_ps"],
                ));
            }
        }
        let ch = Channel {
            name: name.to_string(),
            kind,
            capacity,
            op_cost_ns: c.op_cost_ns,
            op_spread: c.op_spread,
            byte_cost_ps: c.byte_cost_ps,
        };
        out.channels.push(ch);
    }
    Ok(())
}

/// `"devices": {"nullb0": {"model": "null_blk", "completion_ns": 10000, "queue_depth": 64,
/// "size_bytes": …, "scheduler": "none", "params": {}}}`.
fn devices(v: &Json, path: &str) -> Result<Vec<BlockDevice>, SpecError> {
    let o = Obj::new(
        v,
        path,
        "the devices object ({name: {\"model\": \"null_blk\", …}})",
    )?;
    o.no_repeats(|_| false)?;
    let mut out = Vec::with_capacity(o.members.len());
    for (name, dv, dp) in o.iter() {
        if name.is_empty() {
            return Err(SpecError::new(dp, "a device needs a non-empty name"));
        }
        out.push(device(name, dv, &dp)?);
    }
    Ok(out)
}

fn device(name: &str, v: &Json, path: &str) -> Result<BlockDevice, SpecError> {
    let o = Obj::new(v, path, &format!("device {name:?}"))?;
    o.no_repeats(|_| false)?;
    let model = super::device::model(&o, name)?;
    let mut scheduler = "none".to_string();
    let mut params = Vec::new();
    let mut irq_ns = 0;
    for (k, kv, kp) in o.iter() {
        match k {
            "irq_ns" => {
                irq_ns = get::int_in(
                    kv,
                    &kp,
                    "a completion interrupt's CPU time in ns",
                    0,
                    1 << 30,
                )? as u64
            }
            "scheduler" => {
                let s = get::string(kv, &kp, "an I/O scheduler")?;
                if !IO_SCHEDULERS.contains(&s) {
                    return Err(SpecError::new(
                        kp,
                        format!(
                            "expected an I/O scheduler ({}), found {s:?}",
                            IO_SCHEDULERS.join(", ")
                        ),
                    ));
                }
                scheduler = s.to_string();
            }
            "params" => params = tunables(kv, &kp, "I/O scheduler tunables ({name: value})")?,
            // The model's keys, read by `device::model`.
            _ => {}
        }
    }
    Ok(BlockDevice {
        name: name.to_string(),
        model,
        scheduler,
        params,
        irq_ns,
    })
}

/// `"files": {"f": {"dev": "nullb0", "offset": 0, "bytes": 1073741824}}`: contiguous
/// extents of devices, in whole 4 KiB blocks (`offset` defaults to 0).
fn files(v: &Json, path: &str) -> Result<Vec<FileIr>, SpecError> {
    const KEYS: &[&str] = &["dev", "offset", "bytes"];
    let o = Obj::new(
        v,
        path,
        "the files object ({name: {\"dev\": device, \"offset\": bytes, \"bytes\": size}})",
    )?;
    o.no_repeats(|_| false)?;
    let mut out = Vec::with_capacity(o.members.len());
    for (name, fv, fp) in o.iter() {
        if name.is_empty() {
            return Err(SpecError::new(fp, "a file needs a non-empty name"));
        }
        let f = Obj::new(fv, &fp, &format!("file {name:?}"))?;
        f.no_repeats(|_| false)?;
        for (k, _, kp) in f.iter() {
            if !KEYS.contains(&k) {
                return Err(get::unknown_key(&kp, k, &format!("file {name:?}"), KEYS));
            }
        }
        let need = |k: &str, what: &str| {
            f.get(k)
                .ok_or_else(|| SpecError::new(&fp, format!("file {name:?} needs \"{k}\" ({what})")))
        };
        let dev = get::name(need("dev", "a device name")?, &f.at("dev"), "a device name")?;
        let blocks = |v: &Json, p: &str, what: &str, min: i128| -> Result<u64, SpecError> {
            let n = get::int_in(v, p, what, min, i64::MAX as i128)? as u64;
            if !n.is_multiple_of(FILE_BLOCK_BYTES) {
                return Err(SpecError::new(
                    p,
                    format!("expected {what} that is a multiple of {FILE_BLOCK_BYTES} (the file system's block), found {n}"),
                ));
            }
            Ok(n)
        };
        let offset = match f.get("offset") {
            None => 0,
            Some(v) => blocks(v, &f.at("offset"), "a byte offset on the device", 0)?,
        };
        let bytes = blocks(
            need("bytes", "the file's size in bytes")?,
            &f.at("bytes"),
            "a file size in bytes",
            FILE_BLOCK_BYTES as i128,
        )?;
        out.push(FileIr {
            name: name.to_string(),
            dev: dev.to_string(),
            offset,
            bytes,
            path: fp,
        });
    }
    Ok(out)
}

/// `"vm": {"memory_bytes": …, "dirty_ratio": 20, "dirty_background_ratio": 10,
/// "dirty_expire_centisecs": 3000, "dirty_writeback_centisecs": 500, "copy_byte_ps": …}`.
fn vm(v: &Json, path: &str) -> Result<Vm, SpecError> {
    const KEYS: &[&str] = &[
        "memory_bytes",
        "dirty_ratio",
        "dirty_background_ratio",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
        "copy_byte_ps",
    ];
    let o = Obj::new(
        v,
        path,
        "the vm object (the page cache's memory and writeback settings)",
    )?;
    o.no_repeats(|_| false)?;
    let mut vm = Vm::default();
    for (k, kv, kp) in o.iter() {
        let int = |what: &str, min: i128, max: i128| get::int_in(kv, &kp, what, min, max);
        match k {
            "memory_bytes" => {
                let n = int("a memory size in bytes", FILE_BLOCK_BYTES as i128, 1 << 50)? as u64;
                if !n.is_multiple_of(FILE_BLOCK_BYTES) {
                    return Err(SpecError::new(
                        kp,
                        format!("expected a memory size that is a multiple of {FILE_BLOCK_BYTES} (the page size), found {n}"),
                    ));
                }
                vm.memory_bytes = n;
            }
            "dirty_ratio" => vm.dirty_ratio = int("a percentage", 0, 100)? as u32,
            "dirty_background_ratio" => {
                vm.dirty_background_ratio = int("a percentage", 0, 100)? as u32
            }
            // proc_dointvec_minmax bounds in kernel/sysctl.c: 0..=INT_MAX.
            "dirty_expire_centisecs" => {
                vm.dirty_expire_centisecs = int("centiseconds", 0, i32::MAX as i128)? as u32
            }
            "dirty_writeback_centisecs" => {
                vm.dirty_writeback_centisecs = int("centiseconds", 0, i32::MAX as i128)? as u32
            }
            "copy_byte_ps" => {
                vm.copy_byte_ps = Some(int("picoseconds per byte", 0, 1_000_000)? as u64)
            }
            _ => return Err(get::unknown_key(&kp, k, "the vm object", KEYS)),
        }
    }
    Ok(vm)
}

/// `{name: value}` tunables kept as text (string, number or boolean values).
fn tunables(v: &Json, path: &str, what: &str) -> Result<Vec<(String, String)>, SpecError> {
    let po = Obj::new(v, path, what)?;
    po.no_repeats(|_| false)?;
    let mut out = Vec::with_capacity(po.members.len());
    for (pk, pv, pp) in po.iter() {
        let text = match pv {
            Json::Str(t) => t.clone(),
            Json::Bool(b) => b.to_string(),
            Json::Num(Number::Int(i)) => i.to_string(),
            Json::Num(Number::Float(f)) => f.to_string(),
            other => {
                return Err(SpecError::new(
                    pp,
                    format!(
                        "expected a tunable value (a string, number or boolean), found {}",
                        other.describe()
                    ),
                ))
            }
        };
        out.push((pk.to_string(), text));
    }
    Ok(out)
}

fn scheduler(v: &Json, path: &str) -> Result<SchedulerChoice, SpecError> {
    let o = Obj::new(
        v,
        path,
        "the scheduler choice ({\"name\": …, \"params\": {…}})",
    )?;
    o.no_repeats(|_| false)?;
    let mut s = SchedulerChoice::default();
    for (k, kv, kp) in o.iter() {
        match k {
            "name" => s.name = Some(get::name(kv, &kp, "a scheduler name")?.to_string()),
            "params" => s.params = tunables(kv, &kp, "scheduler tunables ({name: value})")?,
            _ => {
                return Err(get::unknown_key(
                    &kp,
                    k,
                    "the scheduler choice",
                    &["name", "params"],
                ))
            }
        }
    }
    if s.name.is_none() && !s.params.is_empty() {
        return Err(SpecError::new(
            o.at("params"),
            "scheduler tunables belong to one scheduler: give its \"name\" too (they apply \
             when a run uses that scheduler)",
        ));
    }
    Ok(s)
}

fn headline(v: &Json, path: &str) -> Result<HeadlineIr, SpecError> {
    let o = Obj::new(v, path, "the headline ({\"type\": …})")?;
    o.no_repeats(|_| false)?;
    let ty = o
        .get("type")
        .ok_or_else(|| SpecError::new(path, "the headline needs \"type\": none, elapsed_since_mark, wakeup_latency, timer_latency or rate"))?;
    let ty = get::string(ty, &o.at("type"), "a headline type")?;
    let allowed: &[&str] = match ty {
        "none" => &["type"],
        "elapsed_since_mark" | "rate" => &["type", "mark", "name"],
        "wakeup_latency" | "timer_latency" => &["type", "task_prefix", "name"],
        _ => {
            return Err(SpecError::new(
                o.at("type"),
                format!("expected a headline type none, elapsed_since_mark, wakeup_latency, timer_latency or rate, found {ty:?}"),
            ))
        }
    };
    for (k, _, kp) in o.iter() {
        if !allowed.contains(&k) {
            return Err(get::unknown_key(
                &kp,
                k,
                &format!("a {ty} headline"),
                allowed,
            ));
        }
    }
    let field = |k: &str| -> Result<Option<String>, SpecError> {
        match o.get(k) {
            None => Ok(None),
            Some(x) => Ok(Some(
                get::name(x, &o.at(k), &format!("the headline's {k}"))?.to_string(),
            )),
        }
    };
    let required = |k: &str| -> Result<String, SpecError> {
        field(k)?.ok_or_else(|| SpecError::new(path, format!("a {ty} headline needs \"{k}\"")))
    };
    Ok(match ty {
        "none" => HeadlineIr::None,
        "elapsed_since_mark" => {
            let mark = required("mark")?;
            let name = field("name")?.unwrap_or_else(|| format!("elapsed_since_{mark}"));
            HeadlineIr::Elapsed {
                mark,
                mark_path: o.at("mark"),
                name,
            }
        }
        "rate" => {
            let mark = required("mark")?;
            let name = field("name")?.unwrap_or_else(|| format!("{mark}_rate"));
            HeadlineIr::Rate {
                mark,
                mark_path: o.at("mark"),
                name,
            }
        }
        "wakeup_latency" => HeadlineIr::Wakeup {
            prefix: required("task_prefix")?,
            path: o.at("task_prefix"),
            name: field("name")?.unwrap_or_else(|| "wakeup_latency".to_string()),
        },
        _ => HeadlineIr::Timer {
            prefix: required("task_prefix")?,
            path: o.at("task_prefix"),
            name: field("name")?.unwrap_or_else(|| "timer_latency".to_string()),
        },
    })
}

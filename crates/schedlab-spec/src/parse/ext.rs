//! schedlab's own top-level object, `"schedlab": {…}`: the machine, pipes and sockets, the
//! scheduler, the seed and the headline metric. rt-app ignores unknown top-level keys, so a
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

use super::get::{self, Obj};
use crate::json::{Json, Number};
use crate::model::{Channel, ChannelKind, Machine, SchedulerChoice};
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

/// Largest channel buffer: 1 GiB.
const MAX_CAPACITY: i128 = 1 << 30;
/// Largest per-call, per-byte or machine cost: one second.
const MAX_COST: i128 = 1_000_000_000;

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
}

/// Everything under `"schedlab"`.
pub(crate) struct Ext {
    pub machine: Machine,
    pub scheduler: SchedulerChoice,
    pub seed: Option<u64>,
    pub channels: Vec<Channel>,
    pub headline: HeadlineIr,
}

const TOP_KEYS: &[&str] = &[
    "machine",
    "pipes",
    "sockets",
    "scheduler",
    "seed",
    "headline",
];

pub(crate) fn parse(v: Option<&Json>) -> Result<Ext, SpecError> {
    let mut ext = Ext {
        machine: Machine::default(),
        scheduler: SchedulerChoice::default(),
        seed: None,
        channels: Vec::new(),
        headline: HeadlineIr::None,
    };
    let Some(v) = v else { return Ok(ext) };
    let o = Obj::new(v, "$.schedlab", "the schedlab extension object")?;
    o.no_repeats(|_| false)?;
    for (k, kv, kp) in o.iter() {
        match k {
            "machine" => ext.machine = machine(kv, &kp)?,
            "pipes" => channels(kv, &kp, ChannelKind::Pipe, &mut ext.channels)?,
            "sockets" => channels(kv, &kp, ChannelKind::Socket, &mut ext.channels)?,
            "scheduler" => ext.scheduler = scheduler(kv, &kp)?,
            "seed" => {
                ext.seed = Some(get::int_in(kv, &kp, "a PRNG seed", 0, u64::MAX as i128)? as u64)
            }
            "headline" => ext.headline = headline(kv, &kp)?,
            _ => return Err(get::unknown_key(&kp, k, "the schedlab object", TOP_KEYS)),
        }
    }
    Ok(ext)
}

fn machine(v: &Json, path: &str) -> Result<Machine, SpecError> {
    let o = Obj::new(v, path, "the machine")?;
    o.no_repeats(|_| false)?;
    let mut m = Machine::default();
    for (k, kv, kp) in o.iter() {
        match k {
            "cpus" => m.cpus = get::int_in(kv, &kp, "a CPU count", 1, 256)? as u32,
            "hz" => {
                let hz = get::int(kv, &kp, "a tick rate (100, 250, 300 or 1000)")?;
                if ![100, 250, 300, 1000].contains(&hz) {
                    return Err(SpecError::new(
                        kp,
                        format!("expected a tick rate of 100, 250, 300 or 1000 Hz (Linux CONFIG_HZ choices), found {hz}"),
                    ));
                }
                m.hz = hz as u32;
            }
            "context_switch_ns" => {
                m.context_switch_ns = cost(kv, &kp, "a context-switch cost in ns")?
            }
            "sched_work_ps" => {
                m.sched_work_ps = cost(kv, &kp, "a cost per unit of scheduler work in ps")?
            }
            "fork_ns" => m.fork_ns = cost(kv, &kp, "a fork cost in ns")?,
            "wakeup_ns" => m.wakeup_ns = cost(kv, &kp, "a wake-up cost in ns")?,
            _ => {
                return Err(get::unknown_key(
                    &kp,
                    k,
                    "the machine",
                    &[
                        "cpus",
                        "hz",
                        "context_switch_ns",
                        "sched_work_ps",
                        "fork_ns",
                        "wakeup_ns",
                    ],
                ))
            }
        }
    }
    Ok(m)
}

fn cost(v: &Json, path: &str, what: &str) -> Result<u64, SpecError> {
    Ok(get::int_in(v, path, what, 0, MAX_COST)? as u64)
}

fn channels(
    v: &Json,
    path: &str,
    kind: ChannelKind,
    out: &mut Vec<Channel>,
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
        if out.iter().any(|c| c.name == name) {
            return Err(SpecError::new(
                cp,
                format!(
                    "channel {name:?} is declared twice (pipes and sockets share one namespace)"
                ),
            ));
        }
        let co = Obj::new(cv, &cp, &format!("channel {name:?}"))?;
        co.no_repeats(|_| false)?;
        let mut ch = match kind {
            ChannelKind::Pipe => Channel {
                name: name.to_string(),
                kind,
                capacity: PIPE_CAPACITY,
                op_cost_ns: PIPE_OP_NS,
                byte_cost_ps: PIPE_BYTE_PS,
            },
            ChannelKind::Socket => Channel {
                name: name.to_string(),
                kind,
                capacity: SOCKET_CAPACITY,
                op_cost_ns: SOCKET_OP_NS,
                byte_cost_ps: SOCKET_BYTE_PS,
            },
        };
        for (k, kv, kp) in co.iter() {
            match k {
                "capacity" => {
                    ch.capacity =
                        get::int_in(kv, &kp, "a buffer capacity in bytes", 1, MAX_CAPACITY)? as u64
                }
                "op_cost_ns" => ch.op_cost_ns = cost(kv, &kp, "a per-call CPU cost in ns")?,
                "byte_cost_ps" => ch.byte_cost_ps = cost(kv, &kp, "a per-byte CPU cost in ps")?,
                _ => {
                    return Err(get::unknown_key(
                        &kp,
                        k,
                        &format!("channel {name:?}"),
                        &["capacity", "op_cost_ns", "byte_cost_ps"],
                    ))
                }
            }
        }
        out.push(ch);
    }
    Ok(())
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
            "params" => {
                let po = Obj::new(kv, &kp, "scheduler tunables ({name: value})")?;
                po.no_repeats(|_| false)?;
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
                    s.params.push((pk.to_string(), text));
                }
            }
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
    Ok(s)
}

fn headline(v: &Json, path: &str) -> Result<HeadlineIr, SpecError> {
    let o = Obj::new(v, path, "the headline ({\"type\": …})")?;
    o.no_repeats(|_| false)?;
    let ty = o
        .get("type")
        .ok_or_else(|| SpecError::new(path, "the headline needs \"type\": none, elapsed_since_mark, wakeup_latency or timer_latency"))?;
    let ty = get::string(ty, &o.at("type"), "a headline type")?;
    let allowed: &[&str] = match ty {
        "none" => &["type"],
        "elapsed_since_mark" => &["type", "mark", "name"],
        "wakeup_latency" | "timer_latency" => &["type", "task_prefix", "name"],
        _ => {
            return Err(SpecError::new(
                o.at("type"),
                format!("expected a headline type none, elapsed_since_mark, wakeup_latency or timer_latency, found {ty:?}"),
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

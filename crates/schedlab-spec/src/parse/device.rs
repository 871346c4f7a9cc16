//! A block device's model (`schedlab.devices.<name>`): `"model"` names it, an `hdd` or
//! `ssd` may start from a built-in profile (`"profile"`, `crate::device`) whose `params`
//! are read by the same key parser as the device's own keys, which override them; then
//! the parameters are checked together (a seek curve that fits, rates in order).

use super::cost::cost;
use super::get::{self, Obj};
use crate::device::{self as dev, HddGeometry, HddParams, SeekCurve, SsdParams};
use crate::json::{self, Json};
use crate::model::{DeviceModel, SECTOR_BYTES};
use crate::SpecError;

/// null_blk's defaults (Documentation/block/null_blk.rst): `completion_nsec=10000`,
/// `hw_queue_depth=64`, `gb=250`.
pub(crate) const NULL_BLK_COMPLETION_NS: u64 = 10_000;
pub(crate) const NULL_BLK_QUEUE_DEPTH: u32 = 64;
pub(crate) const NULL_BLK_SIZE_BYTES: u64 = 250 << 30;

/// Keys of a device object that are not the model's (read by the caller).
const DEVICE_KEYS: &[&str] = &["model", "scheduler", "params", "irq_ns"];

const MODELS: &str = "\"null_blk\", \"hdd\" or \"ssd\"";

const NULL_BLK_KEYS: &[&str] = &["completion_ns", "queue_depth", "size_bytes", "rotational"];

pub(crate) const HDD_KEYS: &[&str] = &[
    "profile",
    "size_bytes",
    "rpm",
    "heads",
    "seek_track_ns",
    "seek_avg_ns",
    "seek_full_ns",
    "rate_outer_bps",
    "rate_inner_bps",
    "interface_bps",
    "overhead_ns",
    "cache_bytes",
    "cache_segments",
    "read_ahead_bytes",
    "write_cache",
    "queue_depth",
    "ncq_age_percent",
];

pub(crate) const SSD_KEYS: &[&str] = &[
    "profile",
    "size_bytes",
    "channels",
    "dies_per_channel",
    "page_bytes",
    "read_ns",
    "program_ns",
    "channel_bps",
    "interface_bps",
    "overhead_ns",
    "write_buffer_bytes",
    "queue_depth",
];

/// The default profile of each model with profiles: the seed's devices.
const HDD_DEFAULT_PROFILE: &str = "hitachi-hdp725032gla360";
const SSD_DEFAULT_PROFILE: &str = "intel-ssdsc2ct240a4";

/// NCQ's 32 tags are the most a SATA device takes.
const MAX_NCQ_DEPTH: i128 = 32;
/// Rates (bytes/s) a model accepts: 100 kB/s to 1 TB/s (so that moving the largest
/// request, 2^40 bytes, takes under 2^54 ns); times up to 10 s.
const MIN_RATE: i128 = 100_000;
const MAX_RATE: i128 = 1_000_000_000_000;
const MAX_TIME_NS: i128 = 10_000_000_000;

/// The model of the device object `o` named `name`.
pub(crate) fn model(o: &Obj, name: &str) -> Result<DeviceModel, SpecError> {
    let m = o.get("model").ok_or_else(|| {
        SpecError::new(
            &o.path,
            format!("device {name:?} needs \"model\" ({MODELS})"),
        )
    })?;
    match get::string(m, &o.at("model"), "a device model")? {
        "null_blk" => null_blk(o, name),
        "hdd" => hdd(o, name),
        "ssd" => ssd(o, name),
        other => Err(SpecError::new(
            o.at("model"),
            format!("expected a device model ({MODELS}), found {other:?}"),
        )),
    }
}

/// The model's own keys of `o`, with their values and paths; an unknown key is an error.
fn own_keys<'a>(
    o: &Obj<'a>,
    name: &str,
    keys: &[&str],
) -> Result<Vec<(&'a str, &'a Json, String)>, SpecError> {
    let mut out = Vec::new();
    for (k, kv, kp) in o.iter() {
        if DEVICE_KEYS.contains(&k) {
            continue;
        }
        if !keys.contains(&k) {
            let allowed: Vec<&str> = DEVICE_KEYS.iter().chain(keys).copied().collect();
            return Err(get::unknown_key(
                &kp,
                k,
                &format!("device {name:?}"),
                &allowed,
            ));
        }
        out.push((k, kv, kp));
    }
    Ok(out)
}

fn null_blk(o: &Obj, name: &str) -> Result<DeviceModel, SpecError> {
    let mut completion_ns = NULL_BLK_COMPLETION_NS;
    let mut queue_depth = NULL_BLK_QUEUE_DEPTH;
    let mut size_bytes = NULL_BLK_SIZE_BYTES;
    let mut rotational = false;
    for (k, kv, kp) in own_keys(o, name, NULL_BLK_KEYS)? {
        match k {
            "completion_ns" => completion_ns = cost(kv, &kp, "a completion time in ns")?,
            "queue_depth" => {
                queue_depth = get::int_in(kv, &kp, "a hardware queue depth", 1, 1 << 16)? as u32
            }
            "rotational" => rotational = get::boolean(kv, &kp, "the rotational flag")?,
            _ => size_bytes = size(kv, &kp)?,
        }
    }
    Ok(DeviceModel::NullBlk {
        completion_ns,
        queue_depth,
        size_bytes,
        rotational,
    })
}

/// A device size: whole sectors.
fn size(v: &Json, path: &str) -> Result<u64, SpecError> {
    let max = i64::MAX as i128;
    let size = get::int_in(v, path, "a device size in bytes", SECTOR_BYTES as i128, max)? as u64;
    sectors(size, path, "a device size")
}

fn sectors(n: u64, path: &str, what: &str) -> Result<u64, SpecError> {
    if !n.is_multiple_of(SECTOR_BYTES) {
        return Err(SpecError::new(
            path,
            format!("expected {what} that is a multiple of {SECTOR_BYTES}, found {n}"),
        ));
    }
    Ok(n)
}

fn rate(v: &Json, path: &str, what: &str) -> Result<u64, SpecError> {
    Ok(get::int_in(
        v,
        path,
        &format!("{what} in bytes per second"),
        MIN_RATE,
        MAX_RATE,
    )? as u64)
}

fn time(v: &Json, path: &str, what: &str, min: i128) -> Result<u64, SpecError> {
    Ok(get::int_in(v, path, &format!("{what} in ns"), min, MAX_TIME_NS)? as u64)
}

fn bytes(v: &Json, path: &str, what: &str) -> Result<u64, SpecError> {
    Ok(get::int_in(v, path, &format!("{what} in bytes"), 0, 1 << 40)? as u64)
}

fn depth(v: &Json, path: &str) -> Result<u32, SpecError> {
    Ok(get::int_in(v, path, "an NCQ queue depth", 1, MAX_NCQ_DEPTH)? as u32)
}

/// The profile's parameter object (parsed from its built-in text), its path and its name,
/// from the device's `"profile"` or the model's default.
fn profile_params(
    o: &Obj,
    model: &str,
    default: &str,
) -> Result<(Json, String, String), SpecError> {
    let name = match o.get("profile") {
        Some(v) => get::name(v, &o.at("profile"), "a device profile's name")?,
        None => default,
    };
    let Some(b) = dev::builtin(name) else {
        let known: Vec<String> = dev::names().iter().map(|n| format!("{n:?}")).collect();
        return Err(SpecError::new(
            o.at("profile"),
            format!(
                "unknown device profile {name:?}; the built-in device profiles are {}",
                known.join(", ")
            ),
        ));
    };
    let v = json::parse(b.text)?;
    let field = |k: &str| match &v {
        Json::Obj(m) => m.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()),
        _ => None,
    };
    if !matches!(field("model"), Some(Json::Str(m)) if m == model) {
        return Err(SpecError::new(
            o.at("profile"),
            format!("device profile {name:?} is not a profile of the {model:?} model"),
        ));
    }
    let path = format!("{}<{name}>.params", o.at("profile"));
    let params = field("params")
        .ok_or_else(|| SpecError::new(&path, "a device profile needs \"params\""))?;
    Ok((params, path, name.to_string()))
}

/// Every key of the profile's params, then the device's own keys, through `apply`.
fn with_profile(
    o: &Obj,
    name: &str,
    model: &str,
    default: &str,
    keys: &[&str],
    mut apply: impl FnMut(&str, &Json, &str) -> Result<(), SpecError>,
) -> Result<(), SpecError> {
    let (params, ppath, profile) = profile_params(o, model, default)?;
    let po = Obj::new(
        &params,
        &ppath,
        &format!("the params of profile {profile:?}"),
    )?;
    po.no_repeats(|_| false)?;
    for (k, kv, kp) in po.iter() {
        if k == "profile" || !keys.contains(&k) {
            return Err(get::unknown_key(
                &kp,
                k,
                &format!("profile {profile:?}"),
                keys,
            ));
        }
        apply(k, kv, &kp)?;
    }
    for (k, kv, kp) in own_keys(o, name, keys)? {
        if k != "profile" {
            apply(k, kv, &kp)?;
        }
    }
    Ok(())
}

/// The path of key `k` where it was last set (the device's own key, or the profile's).
fn set_at(paths: &mut Vec<(String, String)>, k: &str, p: &str) {
    match paths.iter_mut().find(|(key, _)| key == k) {
        Some(e) => e.1 = p.to_string(),
        None => paths.push((k.to_string(), p.to_string())),
    }
}

fn path_of(paths: &[(String, String)], k: &str, or: &str) -> String {
    paths
        .iter()
        .find(|(key, _)| key == k)
        .map_or_else(|| or.to_string(), |(_, p)| p.clone())
}

fn hdd(o: &Obj, name: &str) -> Result<DeviceModel, SpecError> {
    let mut p = HddParams {
        size_bytes: 0,
        rpm: 0,
        heads: 0,
        seek_track_ns: 0,
        seek_avg_ns: 0,
        seek_full_ns: 0,
        rate_outer_bps: 0,
        rate_inner_bps: 0,
        interface_bps: 0,
        overhead_ns: 0,
        cache_bytes: 0,
        cache_segments: 0,
        read_ahead_bytes: 0,
        write_cache: false,
        queue_depth: 0,
        ncq_age_percent: 0,
    };
    let mut paths = Vec::new();
    with_profile(o, name, "hdd", HDD_DEFAULT_PROFILE, HDD_KEYS, |k, v, kp| {
        match k {
            "size_bytes" => p.size_bytes = size(v, kp)?,
            "rpm" => p.rpm = get::int_in(v, kp, "a spindle speed in rpm", 1000, 30_000)? as u32,
            "heads" => p.heads = get::int_in(v, kp, "a number of heads", 1, 64)? as u32,
            "seek_track_ns" => p.seek_track_ns = time(v, kp, "a single-track seek", 1)?,
            "seek_avg_ns" => p.seek_avg_ns = time(v, kp, "an average seek", 1)?,
            "seek_full_ns" => p.seek_full_ns = time(v, kp, "a full-stroke seek", 1)?,
            "rate_outer_bps" => p.rate_outer_bps = rate(v, kp, "the outer zone's media rate")?,
            "rate_inner_bps" => p.rate_inner_bps = rate(v, kp, "the inner zone's media rate")?,
            "interface_bps" => p.interface_bps = rate(v, kp, "the interface rate")?,
            "overhead_ns" => p.overhead_ns = time(v, kp, "a command overhead", 0)?,
            "cache_bytes" => {
                p.cache_bytes = sectors(bytes(v, kp, "a cache size")?, kp, "a cache size")?
            }
            "cache_segments" => {
                p.cache_segments = get::int_in(v, kp, "a number of cache segments", 1, 256)? as u32
            }
            "read_ahead_bytes" => {
                p.read_ahead_bytes =
                    sectors(bytes(v, kp, "a read-ahead size")?, kp, "a read-ahead size")?
            }
            "write_cache" => p.write_cache = get::boolean(v, kp, "whether writes are cached")?,
            "ncq_age_percent" => {
                p.ncq_age_percent =
                    get::int_in(v, kp, "an ageing weight in percent", 0, 1_000_000)? as u32
            }
            _ => p.queue_depth = depth(v, kp)?,
        }
        set_at(&mut paths, k, kp);
        Ok(())
    })?;
    let at = |k: &str| path_of(&paths, k, &o.path);
    // A fault among several keys is reported where the device itself sets one of them,
    // else where the profile does.
    let blame = |keys: &[&str]| {
        keys.iter()
            .map(|k| at(k))
            .find(|p| !p.contains('<'))
            .unwrap_or_else(|| at(keys[0]))
    };
    if p.rate_inner_bps > p.rate_outer_bps {
        return Err(SpecError::new(
            blame(&["rate_inner_bps", "rate_outer_bps"]),
            format!(
                "expected the inner zone's rate ({}) ≤ the outer zone's ({}): outer tracks are longer",
                p.rate_inner_bps, p.rate_outer_bps
            ),
        ));
    }
    let segment = p.cache_bytes / p.cache_segments as u64;
    if p.read_ahead_bytes > segment {
        return Err(SpecError::new(
            blame(&["read_ahead_bytes", "cache_bytes", "cache_segments"]),
            format!(
                "expected a read-ahead of at most one cache segment ({segment} bytes: \
                 cache_bytes / cache_segments), found {}",
                p.read_ahead_bytes
            ),
        ));
    }
    let g = HddGeometry::new(&p);
    if g.cylinders < 2.0 {
        return Err(SpecError::new(
            blame(&[
                "size_bytes",
                "rpm",
                "rate_outer_bps",
                "rate_inner_bps",
                "heads",
            ]),
            format!(
                "a disk of {} bytes at these rates and {} rpm has fewer than two cylinders",
                p.size_bytes, p.rpm
            ),
        ));
    }
    SeekCurve::fit(p.seek_track_ns, p.seek_avg_ns, p.seek_full_ns, g.cylinders).map_err(|e| {
        SpecError::new(
            blame(&["seek_avg_ns", "seek_track_ns", "seek_full_ns", "heads"]),
            e,
        )
    })?;
    Ok(DeviceModel::Hdd(p))
}

fn ssd(o: &Obj, name: &str) -> Result<DeviceModel, SpecError> {
    let mut p = SsdParams {
        size_bytes: 0,
        channels: 0,
        dies_per_channel: 0,
        page_bytes: 0,
        read_ns: 0,
        program_ns: 0,
        channel_bps: 0,
        interface_bps: 0,
        overhead_ns: 0,
        write_buffer_bytes: 0,
        queue_depth: 0,
    };
    with_profile(o, name, "ssd", SSD_DEFAULT_PROFILE, SSD_KEYS, |k, v, kp| {
        match k {
            "size_bytes" => p.size_bytes = size(v, kp)?,
            "channels" => p.channels = get::int_in(v, kp, "a number of channels", 1, 64)? as u32,
            "dies_per_channel" => {
                p.dies_per_channel =
                    get::int_in(v, kp, "a number of dies per channel", 1, 64)? as u32
            }
            "page_bytes" => {
                let n = get::int_in(v, kp, "a flash page size in bytes", 512, 1 << 20)? as u64;
                p.page_bytes = sectors(n, kp, "a page size")?
            }
            "read_ns" => p.read_ns = time(v, kp, "an array read time (tR)", 0)?,
            "program_ns" => p.program_ns = time(v, kp, "a page program time (tPROG)", 0)?,
            "channel_bps" => p.channel_bps = rate(v, kp, "a channel rate")?,
            "interface_bps" => p.interface_bps = rate(v, kp, "the interface rate")?,
            "overhead_ns" => p.overhead_ns = time(v, kp, "a command overhead", 0)?,
            "write_buffer_bytes" => {
                p.write_buffer_bytes = sectors(
                    bytes(v, kp, "a write buffer size")?,
                    kp,
                    "a write buffer size",
                )?
            }
            _ => p.queue_depth = depth(v, kp)?,
        }
        Ok(())
    })?;
    Ok(DeviceModel::Ssd(p))
}

//! Events: which keys are events, and what each one's value must be.
//!
//! rt-app decides that a key is an event by PREFIX (`obj_is_event()` and
//! `parse_task_event_data()` in `src/rt-app_parse_config.c`): `"run0"`, `"run1"` and
//! `"running"` are all run events, `"runtime…"` is a runtime event, `"sleep2"` a sleep, and
//! so on, executed in the order they appear in the file. schedlab's event keys
//! (`schedlab:write`, `schedlab:read`, `schedlab:mark`, `schedlab:exit`, `schedlab:io`)
//! follow the same rule, so `"schedlab:write3"` is a write.
//!
//! `run: -1` runs for ever ([`crate::model::RUN_FOREVER`]: rt-app passes the `int` -1 to
//! `loadwait(unsigned long)`). rt-app's `mem` and `iorun` events (and so `memrun`, which
//! starts with `mem`) are refused: schedlab has no memory model, and rt-app's `iorun`
//! writes through the page cache to the host file `global.io_device`, which a spec cannot
//! place on a simulated device (buffered writes are `schedlab:io` with `"direct": false`
//! on a `schedlab.files` entry).
//!
//! Events keep resource *names* here; `resolve.rs` turns them into indices once every task
//! has been read (a fork may name a task defined further down the file).

use super::get::{self, Obj};
use crate::json::Json;
use crate::model::{IoOffset, IoOp, TimerMode, RUN_FOREVER, SECTOR_BYTES};
use crate::SpecError;

/// Largest byte count of one write or read: 1 TiB (anything bigger is a typo).
pub(crate) const MAX_BYTES: i128 = 1 << 40;

/// The kind of an event key, decided by prefix in rt-app's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Run,
    Runtime,
    Sleep,
    Mem,
    IoRun,
    Lock,
    Unlock,
    Signal,
    Broad,
    Wait,
    Sync,
    Barrier,
    Timer,
    Resume,
    Suspend,
    Yield,
    Fork,
    Write,
    Read,
    Mark,
    Exit,
    Io,
    Fsync,
    Unlink,
}

/// The event kind of `key`, or `None` when the key is not an event.
pub(crate) fn kind(key: &str) -> Option<Kind> {
    // Order matters only for "runtime" (which also starts with "run").
    const TABLE: &[(&str, Kind)] = &[
        ("runtime", Kind::Runtime),
        ("run", Kind::Run),
        ("sleep", Kind::Sleep),
        ("mem", Kind::Mem),
        ("iorun", Kind::IoRun),
        ("lock", Kind::Lock),
        ("unlock", Kind::Unlock),
        ("signal", Kind::Signal),
        ("broad", Kind::Broad),
        ("wait", Kind::Wait),
        ("sync", Kind::Sync),
        ("barrier", Kind::Barrier),
        ("timer", Kind::Timer),
        ("resume", Kind::Resume),
        ("suspend", Kind::Suspend),
        ("yield", Kind::Yield),
        ("fork", Kind::Fork),
        ("schedlab:write", Kind::Write),
        ("schedlab:read", Kind::Read),
        ("schedlab:mark", Kind::Mark),
        ("schedlab:exit", Kind::Exit),
        ("schedlab:io", Kind::Io),
        ("schedlab:fsync", Kind::Fsync),
        ("schedlab:unlink", Kind::Unlink),
    ];
    // Task keys that an event's name prefixes: attributes, never events.
    const ATTRIBUTES: &[&str] = &["schedlab:ioprio"];
    if ATTRIBUTES.contains(&key) {
        return None;
    }
    TABLE
        .iter()
        .find(|(p, _)| key.starts_with(p))
        .map(|&(_, k)| k)
}

/// An event with names still unresolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer {
        name: String,
        unique: bool,
        period_ns: u64,
        mode: Option<TimerMode>,
    },
    Lock(String),
    Unlock(String),
    Wait {
        cond: String,
        mutex: String,
    },
    Signal(String),
    Broad(String),
    Sync {
        cond: String,
        mutex: String,
    },
    Barrier(String),
    Yield,
    Fork(String),
    /// `suspend`: an empty name means the task's own name (rt-app's workgen fills it in).
    Suspend(String),
    Resume(String),
    Write {
        chan: String,
        bytes: u64,
    },
    Read {
        chan: String,
        bytes: u64,
    },
    Mark(String),
    Exit,
    Io {
        /// A device's name, or a file's.
        target: IoTargetName,
        op: IoOp,
        bytes: u64,
        offset: IoOffset,
        direct: bool,
        count: u32,
        depth: u32,
    },
    Fsync(String),
    Unlink(String),
}

/// What a `schedlab:io` names: a device (`"dev"`) or a file (`"file"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum IoTargetName {
    Dev(String),
    File(String),
}

/// One event with the path of its key.
#[derive(Clone, Debug)]
pub(crate) struct PEv {
    pub path: String,
    pub ev: Ev,
}

fn ref_mutex(v: &Json, path: &str, what: &str) -> Result<(String, String), SpecError> {
    let o = Obj::new(
        v,
        path,
        &format!("a {what} event ({{\"ref\": cond, \"mutex\": mutex}})"),
    )?;
    o.no_repeats(|_| false)?;
    for (k, _, p) in o.iter() {
        if k != "ref" && k != "mutex" {
            return Err(get::unknown_key(
                &p,
                k,
                &format!("a {what} event"),
                &["ref", "mutex"],
            ));
        }
    }
    let cond = o.get("ref").ok_or_else(|| {
        SpecError::new(
            &o.path,
            format!("a {what} event needs \"ref\" (the condition variable's name)"),
        )
    })?;
    let mutex = o.get("mutex").ok_or_else(|| {
        SpecError::new(
            &o.path,
            format!("a {what} event needs \"mutex\" (the mutex held while waiting)"),
        )
    })?;
    Ok((
        get::name(cond, &o.at("ref"), "a condition variable name")?.to_string(),
        get::name(mutex, &o.at("mutex"), "a mutex name")?.to_string(),
    ))
}

fn chan_bytes(v: &Json, path: &str, what: &str) -> Result<(String, u64), SpecError> {
    let o = Obj::new(
        v,
        path,
        &format!("a {what} event ({{\"chan\": name, \"bytes\": n}})"),
    )?;
    o.no_repeats(|_| false)?;
    for (k, _, p) in o.iter() {
        if k != "chan" && k != "bytes" {
            return Err(get::unknown_key(
                &p,
                k,
                &format!("a {what} event"),
                &["chan", "bytes"],
            ));
        }
    }
    let chan = o.get("chan").ok_or_else(|| {
        SpecError::new(
            &o.path,
            format!("a {what} event needs \"chan\" (a pipe or socket name)"),
        )
    })?;
    let bytes = o
        .get("bytes")
        .ok_or_else(|| SpecError::new(&o.path, format!("a {what} event needs \"bytes\" (≥ 1)")))?;
    Ok((
        get::name(chan, &o.at("chan"), "a channel name")?.to_string(),
        get::int_in(bytes, &o.at("bytes"), "a byte count", 1, MAX_BYTES)? as u64,
    ))
}

fn timer(v: &Json, path: &str) -> Result<Ev, SpecError> {
    let o = Obj::new(v, path, "a timer event ({\"ref\": name, \"period\": µs})")?;
    o.no_repeats(|_| false)?;
    for (k, _, p) in o.iter() {
        if !matches!(k, "ref" | "period" | "mode") {
            return Err(get::unknown_key(
                &p,
                k,
                "a timer event",
                &["ref", "period", "mode"],
            ));
        }
    }
    let name = o.get("ref").ok_or_else(|| {
        SpecError::new(
            &o.path,
            "a timer event needs \"ref\" (the timer's name; \"unique…\" for one per instance)",
        )
    })?;
    let name = get::name(name, &o.at("ref"), "a timer name")?.to_string();
    let period = o.get("period").ok_or_else(|| {
        SpecError::new(
            &o.path,
            "a timer event needs \"period\" (microseconds, > 0)",
        )
    })?;
    let pp = o.at("period");
    let pi = get::int(period, &pp, "a timer period in microseconds")?;
    if pi <= 0 {
        return Err(SpecError::new(
            pp,
            format!(
                "expected a timer period in microseconds > 0, found {pi} (rt-app treats 0 as \
                 'do not wait'; remove the timer event instead)"
            ),
        ));
    }
    let period_ns = get::us_to_ns(pi, &pp, "timer period")?;
    let mode = match o.get("mode") {
        None => None,
        Some(m) => {
            let mp = o.at("mode");
            match get::string(m, &mp, "a timer mode")? {
                "absolute" => Some(TimerMode::Absolute),
                "relative" => Some(TimerMode::Relative),
                s => {
                    return Err(SpecError::new(
                        mp,
                        format!("expected a timer mode \"absolute\" or \"relative\", found {s:?}"),
                    ))
                }
            }
        }
    };
    Ok(Ev::Timer {
        unique: name.starts_with("unique"),
        name,
        period_ns,
        mode,
    })
}

/// Parse the value of an event key whose kind is `k`.
pub(crate) fn parse(k: Kind, key: &str, v: &Json, path: &str) -> Result<Ev, SpecError> {
    let named =
        |what: &str| -> Result<String, SpecError> { Ok(get::name(v, path, what)?.to_string()) };
    Ok(match k {
        Kind::Run => Ev::Run(run_time(v, path)?),
        Kind::Runtime => Ev::Runtime(get::micros(v, path, "a runtime", 0)?),
        Kind::Sleep => Ev::Sleep(get::micros(v, path, "a sleep time", 0)?),
        Kind::Mem => {
            return Err(get::not_modelled(
                path,
                &format!(
                    "the {key:?} event (rt-app's mem writes a mem_buffer_size buffer in \
                     memory; schedlab has no memory model, so the time it takes is unknown)"
                ),
            ))
        }
        Kind::IoRun => {
            return Err(get::not_modelled(
                path,
                &format!(
                    "the {key:?} event (rt-app's iorun writes to the file global.io_device \
                     through the page cache; schedlab models no host file a spec names: \
                     write a schedlab.files entry with schedlab:io and \"direct\": false)"
                ),
            ))
        }
        Kind::Lock => Ev::Lock(named("a mutex name")?),
        Kind::Unlock => Ev::Unlock(named("a mutex name")?),
        Kind::Signal => Ev::Signal(named("a condition variable name")?),
        Kind::Broad => Ev::Broad(named("a condition variable name")?),
        Kind::Wait => {
            let (cond, mutex) = ref_mutex(v, path, "wait")?;
            Ev::Wait { cond, mutex }
        }
        Kind::Sync => {
            let (cond, mutex) = ref_mutex(v, path, "sync")?;
            Ev::Sync { cond, mutex }
        }
        Kind::Barrier => Ev::Barrier(named("a barrier name")?),
        Kind::Timer => timer(v, path)?,
        Kind::Resume => Ev::Resume(named("the name to resume (a suspend event's name)")?),
        Kind::Suspend => Ev::Suspend(get::string(v, path, "the name to suspend on")?.to_string()),
        Kind::Yield => {
            // rt-app ignores yield's value ("String can be empty"); we accept any scalar.
            if matches!(v, Json::Arr(_) | Json::Obj(_)) {
                return Err(SpecError::new(
                    path,
                    format!(
                        "expected an empty string, true or null as the value of {key:?}, found {}",
                        v.describe()
                    ),
                ));
            }
            Ev::Yield
        }
        // The value says what the event does, so only `true` is read: `false` (or
        // anything else) would read as "do not exit" and exit all the same.
        Kind::Exit => match v {
            Json::Bool(true) => Ev::Exit,
            other => {
                return Err(SpecError::new(
                    path,
                    format!(
                        "expected true (schedlab:exit ends the task when reached), found {}; \
                         to not exit, leave the event out",
                        other.describe()
                    ),
                ))
            }
        },
        Kind::Fork => Ev::Fork(named("the name of the task to fork")?),
        Kind::Write => {
            let (chan, bytes) = chan_bytes(v, path, "schedlab:write")?;
            Ev::Write { chan, bytes }
        }
        Kind::Read => {
            let (chan, bytes) = chan_bytes(v, path, "schedlab:read")?;
            Ev::Read { chan, bytes }
        }
        Kind::Mark => Ev::Mark(named("a mark label")?),
        Kind::Io => io(v, path)?,
        Kind::Fsync => Ev::Fsync(file_of(v, path, "schedlab:fsync")?),
        Kind::Unlink => Ev::Unlink(file_of(v, path, "schedlab:unlink")?),
    })
}

/// `run`: microseconds ≥ 0, or -1 for ever.
fn run_time(v: &Json, path: &str) -> Result<u64, SpecError> {
    let us = get::int(v, path, "a run time in microseconds (or -1: for ever)")?;
    match us {
        -1 => Ok(RUN_FOREVER),
        us if us < 0 => Err(SpecError::new(
            path,
            format!("expected a run time in microseconds ≥ 0, or -1 to run for ever, found {us}"),
        )),
        us => get::us_to_ns(us, path, "a run time"),
    }
}

/// `schedlab:io`: `{"dev": name | "file": name, "op": "read"|"write", "bytes": n,
/// "offset": "seq"|"random"|n, "direct": bool, "count": n, "depth": k}`.
fn io(v: &Json, path: &str) -> Result<Ev, SpecError> {
    const KEYS: &[&str] = &[
        "dev", "file", "op", "bytes", "offset", "direct", "count", "depth",
    ];
    let o = Obj::new(
        v,
        path,
        "a schedlab:io event ({\"dev\" or \"file\": name, \"op\": \"read\"|\"write\", \"bytes\": n, …})",
    )?;
    o.no_repeats(|_| false)?;
    for (k, _, p) in o.iter() {
        if !KEYS.contains(&k) {
            return Err(get::unknown_key(&p, k, "a schedlab:io event", KEYS));
        }
    }
    let need = |k: &str, what: &str| {
        o.get(k).ok_or_else(|| {
            SpecError::new(
                &o.path,
                format!("a schedlab:io event needs \"{k}\" ({what})"),
            )
        })
    };
    let target = match (o.get("dev"), o.get("file")) {
        (Some(_), Some(_)) => {
            return Err(SpecError::new(
                o.at("file"),
                "a schedlab:io event names a device (\"dev\") or a file (\"file\"), not both",
            ))
        }
        (None, Some(f)) => {
            IoTargetName::File(get::name(f, &o.at("file"), "a file name")?.to_string())
        }
        (d, None) => {
            let d = d.ok_or_else(|| {
                SpecError::new(
                    &o.path,
                    "a schedlab:io event needs \"dev\" (a device name) or \"file\" (a file name)",
                )
            })?;
            IoTargetName::Dev(get::name(d, &o.at("dev"), "a device name")?.to_string())
        }
    };
    let op = match get::string(
        need("op", "\"read\" or \"write\"")?,
        &o.at("op"),
        "an I/O direction",
    )? {
        "read" => IoOp::Read,
        "write" => IoOp::Write,
        s => {
            return Err(SpecError::new(
                o.at("op"),
                format!("expected an I/O direction \"read\" or \"write\", found {s:?}"),
            ))
        }
    };
    let bytes = sectors(
        need("bytes", "a multiple of 512, ≥ 512")?,
        &o.at("bytes"),
        "a request size in bytes",
        SECTOR_BYTES as i128,
    )?;
    let offset = match o.get("offset") {
        None => IoOffset::Sequential,
        Some(Json::Str(s)) if s == "seq" => IoOffset::Sequential,
        Some(Json::Str(s)) if s == "random" => IoOffset::Random,
        Some(Json::Str(s)) => {
            return Err(SpecError::new(
                o.at("offset"),
                format!("expected an offset \"seq\", \"random\" or a byte offset, found {s:?}"),
            ))
        }
        Some(n) => IoOffset::At(sectors(n, &o.at("offset"), "a byte offset", 0)?),
    };
    let direct = match o.get("direct") {
        None => true,
        Some(d) => get::boolean(d, &o.at("direct"), "true (O_DIRECT) or false (buffered)")?,
    };
    let count = match o.get("count") {
        None => 1,
        Some(n) => get::int_in(n, &o.at("count"), "a request count", 1, MAX_IO_COUNT)? as u32,
    };
    let depth = match o.get("depth") {
        None => 1,
        Some(n) => get::int_in(n, &o.at("depth"), "an I/O depth", 1, MAX_IO_DEPTH)? as u32,
    };
    if depth > 1 && !direct {
        return Err(SpecError::new(
            o.at("depth"),
            "buffered I/O (\"direct\": false) is synchronous: its depth is 1 (libaio's \
             io_submit waits on buffered requests too)",
        ));
    }
    Ok(Ev::Io {
        target,
        op,
        bytes,
        offset,
        direct,
        count,
        depth,
    })
}

/// Most requests one `schedlab:io` submits.
pub(crate) const MAX_IO_COUNT: i128 = 1 << 30;
/// Deepest queue of one `schedlab:io` (Linux's `aio-max-nr` default, 65536).
pub(crate) const MAX_IO_DEPTH: i128 = 65536;

/// `schedlab:fsync` / `schedlab:unlink`: `{"file": name}`.
fn file_of(v: &Json, path: &str, event: &str) -> Result<String, SpecError> {
    let o = Obj::new(v, path, &format!("a {event} event ({{\"file\": name}})"))?;
    o.no_repeats(|_| false)?;
    for (k, _, p) in o.iter() {
        if k != "file" {
            return Err(get::unknown_key(
                &p,
                k,
                &format!("a {event} event"),
                &["file"],
            ));
        }
    }
    let f = o.get("file").ok_or_else(|| {
        SpecError::new(
            &o.path,
            format!("a {event} event needs \"file\" (a file name)"),
        )
    })?;
    Ok(get::name(f, &o.at("file"), "a file name")?.to_string())
}

/// A byte count or offset: a multiple of the sector size, at least `min`.
fn sectors(v: &Json, path: &str, what: &str, min: i128) -> Result<u64, SpecError> {
    let n = get::int_in(v, path, what, min, MAX_BYTES)?;
    if n % SECTOR_BYTES as i128 != 0 {
        return Err(SpecError::new(
            path,
            format!(
                "expected {what} that is a multiple of {SECTOR_BYTES} (the sector size), found {n}"
            ),
        ));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_rules_follow_rt_app() {
        assert_eq!(kind("run"), Some(Kind::Run));
        assert_eq!(kind("run3"), Some(Kind::Run));
        assert_eq!(kind("runtime2"), Some(Kind::Runtime));
        assert_eq!(kind("sleep_long"), Some(Kind::Sleep));
        assert_eq!(kind("membind_nodes"), Some(Kind::Mem));
        assert_eq!(kind("unlock1"), Some(Kind::Unlock));
        assert_eq!(kind("schedlab:write7"), Some(Kind::Write));
        assert_eq!(kind("loop"), None);
        assert_eq!(kind("priority"), None);
        assert_eq!(kind("schedlab:process"), None);
        assert_eq!(kind("schedlab:ioprio"), None);
        assert_eq!(kind("schedlab:io2"), Some(Kind::Io));
        assert_eq!(kind("resources"), None);
    }
}

//! Parser for the ftrace text format: one parser for simulated traces (written by
//! [`crate::trace::Tracer`]) and real captures (`cat /sys/kernel/tracing/trace`, see
//! `scripts/capture-ftrace.sh`), plus the lines `trace-cmd report` prints.
//!
//! Accepted line shapes (kernel/trace/trace_output.c `trace_print_context`):
//! ```text
//! <comm>-<pid> [(<tgid>|-------)] [<cpu>] [<flags>] <secs>.<frac>: <event>: <body>
//! ```
//! - `comm` may contain anything the kernel allows (`-`, `/`, `:`, spaces, `<...>`): like
//!   Perfetto's tokenizer, the line is anchored on the leftmost `-<pid> … [<cpu>]` that
//!   parses, and the comm is the trimmed text before it.
//! - the tgid column (option `record-tgid`) and the 4- or 5-character irq-info flags are
//!   optional (trace-cmd report prints neither by default);
//! - `frac` has 1 to 9 digits (the kernel prints 6, schedlab 9): timestamps are integer
//!   nanoseconds, never rounded through a float;
//! - header and comment lines (`#…`), blank lines, trace-cmd's `cpus=N`, atrace's
//!   `TRACE:` and `CPU:N [LOST n EVENTS]` lines are skipped.
//!
//! Event bodies are split into `key=value` pairs; a space-separated token that does not
//! start a new `key=` continues the previous value, so comms with spaces (`comm=Web
//! Content pid=7`) survive, and sched_switch's `==>` is dropped. The sched events are
//! also decoded into typed [`Event`]s (their required fields must be present and numeric,
//! or the line is an error), including trace-cmd's sched plugin forms (`comm:pid [prio] S
//! ==> comm:pid [prio]`, `comm:pid [prio] CPU:001`). `tracing_mark_write` (and `print`)
//! bodies become [`Mark`]s: `C|tgid|name|value`, `B|tgid|name`, `E[|tgid]`. Every other
//! event is kept as [`Event::Other`] with its fields.
//!
//! [`analyze`] folds records into per-pid run time and switch counts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// A parse failure, with the 1-based line number it happened on (0: opening the file).
#[derive(Debug)]
pub struct ParseError {
    pub line: u64,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: u64, msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        msg: msg.into(),
    })
}

/// Which of the three wake-up tracepoints a [`Event::Wakeup`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeKind {
    /// `sched_waking`: in the waker's context, when the wake-up starts.
    Waking,
    /// `sched_wakeup`: the task is runnable (on its target CPU's queue).
    Wakeup,
    /// `sched_wakeup_new`: a new task's first wake-up.
    New,
}

/// A `tracing_mark_write` payload (Android atrace / Perfetto conventions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// `C|<tgid>|<name>|<value>[|<category>]`
    Counter { tgid: u32, name: String, value: i64 },
    /// `B|<tgid>|<name>`
    Begin { tgid: u32, name: String },
    /// `E` or `E|<tgid>[|…]`
    End { tgid: Option<u32> },
    /// Anything else written to trace_marker.
    Text(String),
}

/// The decoded payload of a record. Comm values are in [`Record::fields`]
/// (`prev_comm`, `next_comm`, `comm`, `child_comm`) and read with [`Record::field`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `sched_switch`. `prev_state` is the text the kernel printed (`R`, `R+`, `S`, `D`,
    /// `X`, `Z`, `I`, `S|D`, …).
    Switch {
        prev_pid: u32,
        prev_prio: i32,
        prev_state: String,
        next_pid: u32,
        next_prio: i32,
    },
    /// `sched_waking`, `sched_wakeup`, `sched_wakeup_new`.
    Wakeup {
        kind: WakeKind,
        pid: u32,
        prio: i32,
        target_cpu: u32,
    },
    /// `sched_migrate_task`.
    Migrate {
        pid: u32,
        prio: i32,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    /// `sched_process_fork` (`pid` is the parent).
    Fork { pid: u32, child_pid: u32 },
    /// `sched_process_exit` (`group_dead` exists from Linux 6.15).
    Exit {
        pid: u32,
        prio: i32,
        group_dead: Option<bool>,
    },
    /// `tracing_mark_write` / `print`.
    Mark(Mark),
    /// Any other event; `body` is the text after `<event>: `.
    Other { body: String },
}

/// One trace line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// 1-based line number in the input.
    pub line: u64,
    /// Timestamp in nanoseconds.
    pub ts: u64,
    pub cpu: u32,
    /// The task running on `cpu` when the event fired (`<idle>` for pid 0, `<...>` when
    /// ftrace had forgotten the name).
    pub comm: String,
    pub pid: u32,
    /// Its thread-group id when the trace has the tgid column and knew it.
    pub tgid: Option<u32>,
    /// The irq-info flags (`d..2.`) when present.
    pub flags: Option<String>,
    /// The event name (`sched_switch`, `tracing_mark_write`, …).
    pub event: String,
    /// The body's `key=value` pairs in order (empty for marks and free text).
    pub fields: Vec<(Cow<'static, str>, String)>,
    pub data: Event,
}

impl Record {
    /// The value of field `key`, if present.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Keys that occur in the sched events: stored without allocating.
const KNOWN_KEYS: &[&str] = &[
    "prev_comm",
    "prev_pid",
    "prev_prio",
    "prev_state",
    "next_comm",
    "next_pid",
    "next_prio",
    "comm",
    "pid",
    "prio",
    "target_cpu",
    "success",
    "orig_cpu",
    "dest_cpu",
    "child_comm",
    "child_pid",
    "group_dead",
];

fn key(k: &str) -> Cow<'static, str> {
    match KNOWN_KEYS.iter().find(|s| **s == k) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(k.to_string()),
    }
}

fn is_key(k: &str) -> bool {
    let mut b = k.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Split an event body into `key=value` pairs (see the module doc).
fn split_fields(body: &str) -> Vec<(Cow<'static, str>, String)> {
    let mut out: Vec<(Cow<'static, str>, String)> = Vec::new();
    for tok in body.split(' ') {
        if tok.is_empty() {
            // Runs of spaces inside a value are kept as single spaces; leading or
            // trailing ones dropped.
            continue;
        }
        if tok == "==>" {
            continue;
        }
        if let Some(eq) = tok.find('=') {
            if is_key(&tok[..eq]) {
                out.push((key(&tok[..eq]), tok[eq + 1..].to_string()));
                continue;
            }
        }
        if let Some(last) = out.last_mut() {
            last.1.push(' ');
            last.1.push_str(tok);
        }
    }
    out
}

/// The position after the leftmost `-<pid> [(<tgid>)] [<cpu>]` anchor, with its parts.
struct Head {
    comm_end: usize,
    pid: u32,
    tgid: Option<u32>,
    cpu: u32,
    rest: usize,
}

fn digits(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

fn num<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Try to read the anchor at the `-` at `dash`.
fn head_at(b: &[u8], dash: usize) -> Option<Head> {
    let p0 = dash + 1;
    let p1 = digits(b, p0);
    if p1 == p0 {
        return None;
    }
    let pid = num(&b[p0..p1])?;
    let mut i = spaces(b, p1);
    if i == p1 {
        return None; // at least one space after the pid
    }
    let mut tgid = None;
    if i < b.len() && b[i] == b'(' {
        let j = spaces(b, i + 1);
        let k = digits(b, j);
        if k > j {
            tgid = Some(num(&b[j..k])?);
            i = k;
        } else {
            let mut k = j;
            while k < b.len() && b[k] == b'-' {
                k += 1;
            }
            i = k;
        }
        if i >= b.len() || b[i] != b')' {
            return None;
        }
        i = spaces(b, i + 1);
    }
    if i >= b.len() || b[i] != b'[' {
        return None;
    }
    let c0 = i + 1;
    let c1 = digits(b, c0);
    if c1 == c0 || c1 >= b.len() || b[c1] != b']' {
        return None;
    }
    Some(Head {
        comm_end: dash,
        pid,
        tgid,
        cpu: num(&b[c0..c1])?,
        rest: c1 + 1,
    })
}

/// `<secs>.<frac>` → nanoseconds; `frac` has 1..=9 digits.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !secs.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut ns: u64 = frac.parse().ok()?;
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

fn is_skipped(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t.starts_with('#')
        || t == "TRACE:"
        || (t.starts_with("cpus=") && t[5..].bytes().all(|c| c.is_ascii_digit()))
        || (t.starts_with("CPU:") && t.contains("LOST") && t.ends_with("EVENTS]"))
}

/// Parse one line. `Ok(None)` for skipped (header, comment, blank) lines.
pub fn parse_line(line: &str, lineno: u64) -> Result<Option<Record>, ParseError> {
    if is_skipped(line) {
        return Ok(None);
    }
    let b = line.as_bytes();
    let head = b
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'-')
        .find_map(|(i, _)| head_at(b, i));
    let Some(h) = head else {
        return err(lineno, format!("not an ftrace event line: {line:?}"));
    };
    let comm = line[..h.comm_end].trim().to_string();
    let mut i = spaces(b, h.rest);
    // Optional flags, then the timestamp token `<secs>.<frac>:`.
    let tok_end = |from: usize| {
        let mut j = from;
        while j < b.len() && b[j] != b' ' && b[j] != b'\t' {
            j += 1;
        }
        j
    };
    let mut j = tok_end(i);
    let mut flags = None;
    let ts_tok = |s: &str| s.strip_suffix(':').and_then(parse_ts);
    let ts = match ts_tok(&line[i..j]) {
        Some(ts) => ts,
        None => {
            flags = Some(line[i..j].to_string());
            i = spaces(b, j);
            j = tok_end(i);
            match ts_tok(&line[i..j]) {
                Some(ts) => ts,
                None => return err(lineno, format!("bad timestamp in {line:?}")),
            }
        }
    };
    if flags.as_ref().is_some_and(|f| f.len() > 8) {
        return err(lineno, format!("bad flags field in {line:?}"));
    }
    // `<event>: <body>`
    let rest = line[j..].trim_start();
    let (event, body) = match rest.find(':') {
        Some(k) if !rest[..k].is_empty() && !rest[..k].contains(' ') => {
            (&rest[..k], rest[k + 1..].trim())
        }
        _ => return err(lineno, format!("no event name in {line:?}")),
    };
    let mut rec = Record {
        line: lineno,
        ts,
        cpu: h.cpu,
        comm,
        pid: h.pid,
        tgid: h.tgid,
        flags,
        event: event.to_string(),
        fields: Vec::new(),
        data: Event::Other {
            body: String::new(),
        },
    };
    decode(&mut rec, body)?;
    Ok(Some(rec))
}

fn req<T: std::str::FromStr>(rec: &Record, k: &str) -> Result<T, ParseError> {
    match rec.field(k) {
        Some(v) => match v.trim().parse() {
            Ok(x) => Ok(x),
            Err(_) => err(
                rec.line,
                format!("{}: field {k}={v:?} is not a number", rec.event),
            ),
        },
        None => err(rec.line, format!("{}: missing field {k}", rec.event)),
    }
}

/// trace-cmd's sched plugin: `<comm>:<pid> [<prio>]` → (comm, pid, prio).
fn plugin_task(s: &str) -> Option<(String, String, String)> {
    let s = s.trim();
    let lb = s.rfind(" [")?;
    let prio = s[lb + 2..].strip_suffix(']')?;
    let who = &s[..lb];
    let colon = who.rfind(':')?;
    Some((
        who[..colon].to_string(),
        who[colon + 1..].to_string(),
        prio.to_string(),
    ))
}

fn plugin_switch(body: &str) -> Option<Vec<(Cow<'static, str>, String)>> {
    let (l, r) = body.split_once(" ==> ")?;
    let l = l.trim();
    let sp = l.rfind(' ')?;
    let (pc, pp, pprio) = plugin_task(&l[..sp])?;
    let (nc, np, nprio) = plugin_task(r)?;
    Some(vec![
        (key("prev_comm"), pc),
        (key("prev_pid"), pp),
        (key("prev_prio"), pprio),
        (key("prev_state"), l[sp + 1..].to_string()),
        (key("next_comm"), nc),
        (key("next_pid"), np),
        (key("next_prio"), nprio),
    ])
}

fn plugin_wakeup(body: &str) -> Option<Vec<(Cow<'static, str>, String)>> {
    let k = body.rfind(" CPU:")?;
    let cpu = body[k + 5..].trim();
    let mut task = body[..k].trim();
    if let Some(s) = task.strip_suffix(" success=1") {
        task = s;
    }
    let (c, p, prio) = plugin_task(task)?;
    Some(vec![
        (key("comm"), c),
        (key("pid"), p),
        (key("prio"), prio),
        (key("target_cpu"), cpu.to_string()),
    ])
}

fn parse_mark(text: &str) -> Mark {
    let text = text.trim_end_matches(['\n', '\0', ' ']);
    let text = text.strip_prefix("tracing_mark_write: ").unwrap_or(text);
    let mut parts = text.split('|');
    let phase = parts.next().unwrap_or("");
    let tgid = parts.next().and_then(|s| s.trim().parse::<u32>().ok());
    match (phase, tgid) {
        ("C", Some(tgid)) => {
            let name = parts.next().unwrap_or("");
            match parts.next().and_then(|v| v.trim().parse::<i64>().ok()) {
                Some(value) if !name.is_empty() => Mark::Counter {
                    tgid,
                    name: name.to_string(),
                    value,
                },
                _ => Mark::Text(text.to_string()),
            }
        }
        ("B", Some(tgid)) => Mark::Begin {
            tgid,
            name: text.splitn(3, '|').nth(2).unwrap_or("").to_string(),
        },
        ("E", tgid) => Mark::End { tgid },
        _ => Mark::Text(text.to_string()),
    }
}

fn decode(rec: &mut Record, body: &str) -> Result<(), ParseError> {
    let ev = rec.event.as_str();
    if matches!(ev, "tracing_mark_write" | "print" | "0") {
        rec.data = Event::Mark(parse_mark(body));
        return Ok(());
    }
    rec.fields = split_fields(body);
    let wake = match ev {
        "sched_waking" => Some(WakeKind::Waking),
        "sched_wakeup" => Some(WakeKind::Wakeup),
        "sched_wakeup_new" => Some(WakeKind::New),
        _ => None,
    };
    if ev == "sched_switch" && rec.field("prev_pid").is_none() {
        if let Some(f) = plugin_switch(body) {
            rec.fields = f;
        }
    }
    if wake.is_some() && rec.field("pid").is_none() {
        if let Some(f) = plugin_wakeup(body) {
            rec.fields = f;
        }
    }
    rec.data = match ev {
        "sched_switch" => Event::Switch {
            prev_pid: req(rec, "prev_pid")?,
            prev_prio: req(rec, "prev_prio")?,
            prev_state: match rec.field("prev_state") {
                Some(s) if !s.is_empty() => s.to_string(),
                _ => return err(rec.line, "sched_switch: missing field prev_state"),
            },
            next_pid: req(rec, "next_pid")?,
            next_prio: req(rec, "next_prio")?,
        },
        _ if wake.is_some() => Event::Wakeup {
            kind: wake.unwrap_or(WakeKind::Wakeup),
            pid: req(rec, "pid")?,
            prio: req(rec, "prio")?,
            target_cpu: req(rec, "target_cpu")?,
        },
        "sched_migrate_task" => Event::Migrate {
            pid: req(rec, "pid")?,
            prio: req(rec, "prio")?,
            orig_cpu: req(rec, "orig_cpu")?,
            dest_cpu: req(rec, "dest_cpu")?,
        },
        "sched_process_fork" => Event::Fork {
            pid: req(rec, "pid")?,
            child_pid: req(rec, "child_pid")?,
        },
        "sched_process_exit" => Event::Exit {
            pid: req(rec, "pid")?,
            prio: req(rec, "prio")?,
            group_dead: match rec.field("group_dead") {
                Some("true") | Some("1") => Some(true),
                Some("false") | Some("0") => Some(false),
                _ => None,
            },
        },
        _ => Event::Other {
            body: body.to_string(),
        },
    };
    Ok(())
}

/// A streaming iterator over the records of a trace (see [`parse_reader`]).
pub struct Records<R> {
    r: R,
    buf: Vec<u8>,
    line: u64,
    done: bool,
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<Record, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.r.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    let text = String::from_utf8_lossy(&self.buf);
                    let text = text.trim_end_matches(['\n', '\r']);
                    match parse_line(text, self.line) {
                        Ok(Some(r)) => return Some(Ok(r)),
                        Ok(None) => {}
                        Err(e) => return Some(Err(e)),
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(err(self.line + 1, format!("read error: {e}")));
                }
            }
        }
        None
    }
}

/// Stream the records of a trace; skipped lines produce nothing, bad lines an error
/// (and the iterator goes on after it).
pub fn parse_reader<R: BufRead>(r: R) -> impl Iterator<Item = Result<Record, ParseError>> {
    Records {
        r,
        buf: Vec::with_capacity(256),
        line: 0,
        done: false,
    }
}

/// Parse a whole trace file, stopping at the first bad line.
pub fn parse_file(path: impl AsRef<Path>) -> Result<Vec<Record>, ParseError> {
    let path = path.as_ref();
    let f = File::open(path).map_err(|e| ParseError {
        line: 0,
        msg: format!("{}: {e}", path.display()),
    })?;
    parse_reader(BufReader::with_capacity(1 << 16, f)).collect()
}

/// Parse a trace held in memory.
pub fn parse_str(text: &str) -> Result<Vec<Record>, ParseError> {
    parse_reader(io::Cursor::new(text.as_bytes())).collect()
}

/// What [`analyze`] found for one pid (pid 0, the idle tasks, is in [`CpuSummary`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskSummary {
    /// The last comm seen for the pid.
    pub comm: String,
    /// Time between each switch-in and the following switch-out on the same CPU.
    pub run_ns: u64,
    /// sched_switch records with `next_pid == pid`.
    pub switches_in: u64,
    /// Switch-outs while still runnable (`R`, `R+`): involuntary.
    pub preempted: u64,
    /// Switch-outs in any other state (blocked, exited): voluntary.
    pub blocked: u64,
    /// sched_wakeup and sched_wakeup_new records (sched_waking is not counted).
    pub wakeups: u64,
    /// sched_migrate_task records.
    pub migrations: u64,
}

/// Per-CPU totals from sched_switch records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSummary {
    pub busy_ns: u64,
    pub idle_ns: u64,
    pub switches: u64,
}

/// Counts and times folded from a trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    pub tasks: BTreeMap<u32, TaskSummary>,
    pub cpus: BTreeMap<u32, CpuSummary>,
    /// Timestamps of the first and last records.
    pub first_ts: u64,
    pub last_ts: u64,
    /// sched_switch records whose `prev_pid` was not the task the previous switch on
    /// that CPU put there: a switch is missing (the kernel drops a few events, e.g. on
    /// ring-buffer recursion, even when it reports no lost events; the lab's capture has
    /// 4 in ~1,600), or the writer is broken. 0 for a simulated trace.
    pub inconsistent_switches: u64,
    /// Time in the intervals those switches end, attributed to nobody.
    pub unattributed_ns: u64,
    /// Every counter sample: (ts, tgid, name, value).
    pub counters: Vec<(u64, u32, String, i64)>,
}

/// Fold records into per-pid run time and switch counts. Run time is counted from each
/// switch-in to the next switch-out on that CPU; time before a CPU's first sched_switch
/// is unknown and not counted, and a task still running at the end is counted up to
/// `end_ns` if given (e.g. the simulation's end), else up to the last record.
pub fn analyze<'a>(records: impl IntoIterator<Item = &'a Record>, end_ns: Option<u64>) -> Analysis {
    let mut a = Analysis {
        first_ts: u64::MAX,
        ..Analysis::default()
    };
    // Per CPU: (pid running, since).
    let mut cur: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    for r in records {
        a.first_ts = a.first_ts.min(r.ts);
        a.last_ts = a.last_ts.max(r.ts);
        match &r.data {
            Event::Switch {
                prev_pid,
                prev_state,
                next_pid,
                ..
            } => {
                let cpu = a.cpus.entry(r.cpu).or_default();
                cpu.switches += 1;
                if let Some(&(pid, since)) = cur.get(&r.cpu) {
                    let d = r.ts.saturating_sub(since);
                    if pid != *prev_pid {
                        // A switch is missing in between: who ran when is unknown.
                        a.inconsistent_switches += 1;
                        a.unattributed_ns += d;
                    } else if pid == 0 {
                        cpu.idle_ns += d;
                    } else {
                        cpu.busy_ns += d;
                        a.tasks.entry(pid).or_default().run_ns += d;
                    }
                }
                if *prev_pid != 0 {
                    let t = a.tasks.entry(*prev_pid).or_default();
                    if prev_state.starts_with('R') {
                        t.preempted += 1;
                    } else {
                        t.blocked += 1;
                    }
                    if let Some(c) = r.field("prev_comm") {
                        c.clone_into(&mut t.comm);
                    }
                }
                if *next_pid != 0 {
                    let t = a.tasks.entry(*next_pid).or_default();
                    t.switches_in += 1;
                    if let Some(c) = r.field("next_comm") {
                        c.clone_into(&mut t.comm);
                    }
                }
                cur.insert(r.cpu, (*next_pid, r.ts));
            }
            Event::Wakeup { kind, pid, .. } if *kind != WakeKind::Waking => {
                a.tasks.entry(*pid).or_default().wakeups += 1;
            }
            Event::Migrate { pid, .. } => {
                a.tasks.entry(*pid).or_default().migrations += 1;
            }
            Event::Mark(Mark::Counter { tgid, name, value }) => {
                a.counters.push((r.ts, *tgid, name.clone(), *value));
            }
            _ => {}
        }
    }
    if a.first_ts == u64::MAX {
        a.first_ts = 0;
    }
    let end = end_ns.unwrap_or(a.last_ts);
    for (cpu, (pid, since)) in cur {
        let d = end.saturating_sub(since);
        let c = a.cpus.entry(cpu).or_default();
        if pid == 0 {
            c.idle_ns += d;
        } else {
            c.busy_ns += d;
            a.tasks.entry(pid).or_default().run_ns += d;
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as this lab's 6.18 kernel printed them (tests/data/traces/host-capture.txt).
    const REAL_SWITCH: &str = "       hackbench-5836    (   5836) [001] d..2.   637.963075: sched_switch: prev_comm=hackbench prev_pid=5836 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120";
    const REAL_WAKING: &str = "          <idle>-0       (-------) [001] d.s4.   637.963335: sched_waking: comm=hackbench pid=5836 prio=120 target_cpu=001";
    const REAL_MARK: &str = "            bash-5830    (   5830) [001] ...1.   637.961232: tracing_mark_write: C|5830|demo|5";

    fn one(line: &str) -> Record {
        parse_line(line, 7).unwrap().unwrap()
    }

    #[test]
    fn kernel_switch_line() {
        let r = one(REAL_SWITCH);
        assert_eq!(r.line, 7);
        assert_eq!(r.ts, 637_963_075_000);
        assert_eq!((r.cpu, r.pid, r.tgid), (1, 5836, Some(5836)));
        assert_eq!(r.comm, "hackbench");
        assert_eq!(r.flags.as_deref(), Some("d..2."));
        assert_eq!(r.event, "sched_switch");
        assert_eq!(
            r.data,
            Event::Switch {
                prev_pid: 5836,
                prev_prio: 120,
                prev_state: "D".into(),
                next_pid: 0,
                next_prio: 120
            }
        );
        assert_eq!(r.field("next_comm"), Some("swapper/1"));
        assert_eq!(r.fields.len(), 7);
    }

    #[test]
    fn idle_tgid_dashes_and_waking() {
        let r = one(REAL_WAKING);
        assert_eq!((r.comm.as_str(), r.pid, r.tgid), ("<idle>", 0, None));
        assert_eq!(
            r.data,
            Event::Wakeup {
                kind: WakeKind::Waking,
                pid: 5836,
                prio: 120,
                target_cpu: 1
            }
        );
    }

    #[test]
    fn marks() {
        let r = one(REAL_MARK);
        assert_eq!(
            r.data,
            Event::Mark(Mark::Counter {
                tgid: 5830,
                name: "demo".into(),
                value: 5
            })
        );
        assert_eq!(
            parse_mark("B|12|do work"),
            Mark::Begin {
                tgid: 12,
                name: "do work".into()
            }
        );
        assert_eq!(parse_mark("E|12"), Mark::End { tgid: Some(12) });
        assert_eq!(parse_mark("E"), Mark::End { tgid: None });
        assert_eq!(
            parse_mark("C|3209|Bytes-value|0|Blob"),
            Mark::Counter {
                tgid: 3209,
                name: "Bytes-value".into(),
                value: 0
            }
        );
        assert_eq!(parse_mark("hello world"), Mark::Text("hello world".into()));
    }

    #[test]
    fn timestamps_six_or_nine_decimals_exact() {
        assert_eq!(parse_ts("1.000001"), Some(1_000_001_000));
        assert_eq!(parse_ts("12345.123456789"), Some(12_345_123_456_789));
        assert_eq!(parse_ts("0.5"), Some(500_000_000));
        assert_eq!(parse_ts("1.1234567890"), None);
        assert_eq!(parse_ts("1."), None);
    }

    #[test]
    fn odd_comms_old_flags_no_tgid_no_flags() {
        // Dashes, digits and spaces in the comm; 4-character flags (kernels < 5.14).
        let r = one("  kworker/u16:1-77    [004] d..2   316.196720: sched_switch: prev_comm=kworker/u16:1 prev_pid=77 prev_prio=120 prev_state=I ==> next_comm=Web Content next_pid=3000 next_prio=120");
        assert_eq!(
            (r.comm.as_str(), r.pid, r.cpu, r.tgid),
            ("kworker/u16:1", 77, 4, None)
        );
        assert_eq!(r.field("next_comm"), Some("Web Content"));
        let r = one("  Web Content-1-2-3000  (   2999) [000]   5.000001: sched_wakeup: comm=Web Content pid=3000 prio=120 target_cpu=000");
        assert_eq!(
            (r.comm.as_str(), r.pid, r.tgid, r.flags.clone()),
            ("Web Content-1-2", 3000, Some(2999), None)
        );
        assert_eq!(r.field("comm"), Some("Web Content"));
        // ftrace forgot the name.
        let r = one("           <...>-4242  [001] .....  9.000000: sched_process_exit: comm=x pid=4242 prio=120");
        assert_eq!((r.comm.as_str(), r.pid), ("<...>", 4242));
        assert_eq!(
            r.data,
            Event::Exit {
                pid: 4242,
                prio: 120,
                group_dead: None
            }
        );
    }

    #[test]
    fn trace_cmd_report_forms() {
        let text = "cpus=2\n          <idle>-0     [000]  1000.000100: sched_switch:         swapper/0:0 [120] R ==> bash:5830 [120]\n            bash-5830  [000]  1000.000200: sched_wakeup:         hackbench:5836 [120] CPU:001\n";
        let recs = parse_str(text).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].line, 2);
        assert_eq!(
            recs[0].data,
            Event::Switch {
                prev_pid: 0,
                prev_prio: 120,
                prev_state: "R".into(),
                next_pid: 5830,
                next_prio: 120
            }
        );
        assert_eq!(recs[0].field("next_comm"), Some("bash"));
        assert_eq!(
            recs[1].data,
            Event::Wakeup {
                kind: WakeKind::Wakeup,
                pid: 5836,
                prio: 120,
                target_cpu: 1
            }
        );
    }

    #[test]
    fn unknown_events_kept_generic() {
        let r = one("     kworker/0:1-12    (     12) [000] d..1.   1.000000: workqueue_execute_start: work struct 00000000: function vmstat_update");
        assert_eq!(r.event, "workqueue_execute_start");
        assert!(matches!(&r.data, Event::Other { body } if body.ends_with("vmstat_update")));
        let r =
            one("  sh-1 [000] ..... 1.000000: sched_stat_runtime: comm=sh pid=1 runtime=1234 [ns]");
        assert_eq!(r.field("runtime"), Some("1234 [ns]"));
    }

    #[test]
    fn errors_carry_line_numbers() {
        let text = "# tracer: nop\n\n  sh-1 [000] ..... 1.000000: sched_switch: prev_comm=sh prev_pid=x prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_prio=120\n";
        let e = parse_str(text).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("prev_pid"), "{e}");
        let e = parse_str("# h\ngarbage line\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_str("  sh-1 [000] ..... 1.0x: foo: bar\n").unwrap_err();
        assert!(e.msg.contains("timestamp"));
        // The streaming iterator goes on after an error.
        let v: Vec<_> = parse_reader("bad\n  sh-1 [000] 1.000000: foo: a=b\n".as_bytes()).collect();
        assert!(v[0].is_err() && v[1].is_ok());
    }

    #[test]
    fn analysis_run_time_and_switches() {
        let text = "\
  <idle>-0 (-------) [000] d..2. 1.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=1 next_prio=120
  a-1 (1) [000] d..2. 1.000000300: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=b next_pid=2 next_prio=120
  b-2 (1) [000] d..3. 1.000000350: sched_wakeup: comm=c pid=3 prio=120 target_cpu=001
  b-2 (1) [000] d..2. 1.000000400: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=a next_pid=1 next_prio=120
  a-1 (1) [000] ...1. 1.000000400: tracing_mark_write: C|1|vruntime|77
";
        let recs = parse_str(text).unwrap();
        let a = analyze(&recs, Some(1_000_001_000));
        assert_eq!(a.tasks[&1].run_ns, 300 + 600);
        assert_eq!(a.tasks[&1].switches_in, 2);
        assert_eq!(a.tasks[&1].preempted, 1);
        assert_eq!(a.tasks[&2].run_ns, 100);
        assert_eq!(a.tasks[&2].blocked, 1);
        assert_eq!(a.tasks[&3].wakeups, 1);
        assert_eq!(a.cpus[&0].busy_ns, 1000);
        assert_eq!(a.cpus[&0].switches, 3);
        assert_eq!(a.inconsistent_switches, 0);
        assert_eq!(
            a.counters,
            vec![(1_000_000_400, 1, "vruntime".to_string(), 77)]
        );
    }
}

//! Count mode: exact instruction counts (and simulated cache misses) under callgrind.
//!
//! The probe re-runs itself under `valgrind --tool=callgrind` with collection off except
//! inside the measured entry points (`--toggle-collect=rtqp_m_*`) and a dump before each
//! call of [`crate::backends::rtqp_boundary`], which the inner run calls after every
//! measured operation. Dump k therefore holds exactly the k-th operation's events, in
//! the plan's order. Instruction counts do not depend on timing or load: they repeat
//! exactly on a noisy machine.
//!
//! Each case runs cold: the inner run first walks [`SIM_EVICT_BYTES`], twice the
//! simulated last-level cache, so the queue's data misses in D1 and LL. The instruction
//! count does not depend on the cache state; at the plan's first N each case also runs
//! warm to check exactly that (`warm_cold_instruction_mismatches`). The simulated
//! hierarchy is fixed ([`CACHE_ARGS`]) so that the counts do not depend on the host; the
//! simulated I1 is not flushed (walking data cannot evict it), so only data misses are
//! reported.

use std::collections::BTreeMap;
use std::path::Path;

/// The simulated caches: 32 KiB 8-way I1 and D1 and a 256 KiB 8-way last level, 64-byte
/// lines (a small LL keeps the eviction walk, and so count mode, fast).
pub const CACHE_ARGS: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=262144,8,64"];
/// Bytes walked before a cold case in count mode: twice the simulated LL.
pub const SIM_EVICT_BYTES: usize = 512 << 10;

/// One callgrind dump file, reduced to what the probe needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    /// `part:` number (1-based order of the dumps of one run).
    pub part: u32,
    /// `desc: Trigger:` text, e.g. "Client Request: ..." or "--dump-before=rtqp_boundary".
    pub trigger: String,
    /// Event totals by name (`Ir`, `D1mr`, …).
    pub totals: BTreeMap<String, u64>,
}

impl Dump {
    /// The count of `event` (0 if the dump has no such event or no cost).
    pub fn get(&self, event: &str) -> u64 {
        self.totals.get(event).copied().unwrap_or(0)
    }

    /// Was this dump triggered by the boundary function (not by program termination)?
    pub fn is_boundary(&self) -> bool {
        self.trigger.contains("rtqp_boundary")
    }
}

/// Parses one callgrind output file; the error names what is missing or malformed.
pub fn parse_dump(text: &str) -> Result<Dump, String> {
    let mut part = None;
    let mut trigger = String::new();
    let mut events: Vec<String> = Vec::new();
    let mut summary: Option<Vec<u64>> = None;
    let mut totals: Option<Vec<u64>> = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("part:") {
            part = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("desc: Trigger:") {
            trigger = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("events:") {
            events = v.split_whitespace().map(str::to_string).collect();
        } else if let Some(v) = line.strip_prefix("summary:") {
            summary = Some(numbers(v)?);
        } else if let Some(v) = line.strip_prefix("totals:") {
            totals = Some(numbers(v)?);
        }
    }
    let part = part.ok_or("no `part:` line")?;
    if events.is_empty() {
        return Err("no `events:` line".into());
    }
    let values = totals
        .or(summary)
        .ok_or("no `totals:` or `summary:` line")?;
    // callgrind omits trailing zero columns
    let totals = events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.clone(), values.get(i).copied().unwrap_or(0)))
        .collect();
    Ok(Dump {
        part,
        trigger,
        totals,
    })
}

fn numbers(s: &str) -> Result<Vec<u64>, String> {
    s.split_whitespace()
        .map(|x| x.parse().map_err(|_| format!("bad count {x:?}")))
        .collect()
}

/// Every dump in `dir` whose file name starts with `stem`, sorted by part, boundary dumps only.
pub fn read_dumps(dir: &Path, stem: &str) -> Result<Vec<Dump>, String> {
    let mut dumps = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.starts_with(stem) {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dump = parse_dump(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if dump.is_boundary() {
            dumps.push(dump);
        }
    }
    dumps.sort_by_key(|d| d.part);
    Ok(dumps)
}

/// The valgrind command line (after the valgrind binary) for the inner run.
pub fn valgrind_args(out_file: &Path, exe: &Path, inner: &[String]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--tool=callgrind",
        "--collect-atstart=no",
        "--toggle-collect=rtqp_m_*",
        "--dump-before=rtqp_boundary",
        "--dump-instr=no",
        "--dump-line=no",
        "--compress-strings=no",
        "--compress-pos=no",
        "--cache-sim=yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(CACHE_ARGS.iter().map(|s| s.to_string()));
    a.push(format!("--callgrind-out-file={}", out_file.display()));
    a.push("--quiet".into());
    a.push(exe.display().to_string());
    a.extend(inner.iter().cloned());
    a
}

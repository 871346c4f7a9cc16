//! ftrace capture of a host run, written in the simulator's trace text.
//!
//! The capture uses a tracing instance of its own (`instances/schedlab-<pid>` under
//! tracefs, Documentation/trace/ftrace.rst "Instances"): its ring buffer, clock, options
//! and enabled events belong to it, so the machine's own tracing settings are never
//! touched and removing the instance (an `rmdir`, journalled as the `mkdir` that made it)
//! puts everything back. tracefs itself is mounted at `/sys/kernel/tracing` through the
//! journal when nothing has it mounted.
//!
//! The instance records the scheduler events the simulator writes (`sched_switch`,
//! `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `sched_migrate_task`,
//! `sched_process_fork`, `sched_process_exit`) on every CPU, with `record-tgid` on and
//! the `mono` trace clock — CLOCK_MONOTONIC, the runner's clock — so that a trace time is
//! a run time: the file's timestamps are nanoseconds since the run's start, as in a
//! simulated trace. The kernel prints microseconds; the times are written with nine
//! decimals as the simulator writes them, so they are exact to the microsecond (the
//! run's start is exact to the nanosecond). Events before the
//! run's start (its threads' set-up) are left out, and the events the ring buffer lost
//! (`per_cpu/cpuN/stats`, `overrun`) are counted.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::journal::Journal;

/// Where tracefs is mounted when schedlab mounts it.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The events a capture records: those the simulator's trace writer emits.
pub const EVENTS: &[&str] = &[
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
];

/// Per-CPU ring buffer of the instance, KiB.
const BUFFER_KB: u32 = 32 * 1024;

/// The first line of the file: the simulator's trace header names its tracer first.
const HEADER: &str = "# tracer: nop\n\
#\n\
# schedlab host trace: ftrace text format, nanosecond timestamps from the run's start\n\
#\n";

/// Where tracefs is mounted, from `/proc/self/mountinfo`'s text.
pub fn tracefs_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (right.split_whitespace().next() == Some("tracefs"))
            .then(|| PathBuf::from(left.split_whitespace().nth(4).unwrap_or("")))
    })
}

/// A capture in progress: its instance directory.
pub struct Capture {
    dir: PathBuf,
}

/// What a finished capture wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Event lines written.
    pub events: u64,
    /// Events before the run's start, left out.
    pub before_start: u64,
    /// Events the ring buffer lost (overwritten before they were read).
    pub lost: u64,
}

fn ctx<T>(r: io::Result<T>, what: &Path) -> Result<T, String> {
    r.map_err(|e| format!("tracefs: {}: {e}", what.display()))
}

fn set(dir: &Path, file: &str, value: &str) -> Result<(), String> {
    let path = dir.join(file);
    ctx(fs::write(&path, value), &path)
}

impl Capture {
    /// Make the run's instance (mounting tracefs first if nothing has it), set it up and
    /// leave it off. Every system change goes through `journal`.
    pub fn prepare(journal: &mut Journal) -> Result<Capture, String> {
        let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let root = match tracefs_mount(&info) {
            Some(p) => p,
            None => {
                let p = PathBuf::from(TRACEFS);
                ctx(journal.mount("tracefs", &p), &p)?;
                p
            }
        };
        let dir = root
            .join("instances")
            .join(format!("schedlab-{}", std::process::id()));
        ctx(journal.mkdir(&dir), &dir)?;
        // Inside the instance: these settings go with it when it is removed.
        set(&dir, "tracing_on", "0")?;
        set(&dir, "trace_clock", "mono")?;
        set(&dir, "buffer_size_kb", &BUFFER_KB.to_string())?;
        set(&dir, "options/record-tgid", "1")?;
        for e in EVENTS {
            set(&dir, &format!("events/sched/{e}/enable"), "1")?;
        }
        Ok(Capture { dir })
    }

    /// Start recording.
    pub fn on(&self) -> Result<(), String> {
        set(&self.dir, "tracing_on", "1")
    }

    /// Stop recording and write what was recorded since `t0` (absolute CLOCK_MONOTONIC
    /// ns) to `out`.
    pub fn finish(&self, t0: u64, out: &Path) -> Result<Written, String> {
        set(&self.dir, "tracing_on", "0")?;
        let src = self.dir.join("trace");
        let text = ctx(fs::read_to_string(&src), &src)?;
        let file = ctx(fs::File::create(out), out)?;
        let mut w = BufWriter::new(file);
        let mut written = Written {
            events: 0,
            before_start: 0,
            lost: self.lost(),
        };
        ctx(w.write_all(HEADER.as_bytes()), out)?;
        for line in text.lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            match rebase(line, t0) {
                Some(l) => {
                    ctx(writeln!(w, "{l}"), out)?;
                    written.events += 1;
                }
                None => written.before_start += 1,
            }
        }
        ctx(w.flush(), out)?;
        Ok(written)
    }

    /// Events lost to ring-buffer overruns, over every CPU.
    fn lost(&self) -> u64 {
        let Ok(cpus) = fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        cpus.filter_map(|c| fs::read_to_string(c.ok()?.path().join("stats")).ok())
            .filter_map(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("overrun:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            })
            .sum()
    }
}

/// A kernel trace line with its timestamp (`secs.micros:` after the CPU and flags) made
/// nanoseconds since `t0` with nine decimals; `None` for an event before `t0` or a line
/// without a timestamp.
pub fn rebase(line: &str, t0: u64) -> Option<String> {
    // The timestamp is the last `<digits>.<digits>:` token before the event name; the
    // `[cpu]` column precedes it, so search after the first `] `.
    let after_cpu = line.find("] ")? + 2;
    let rest = &line[after_cpu..];
    let colon = rest.find(": ")?;
    let head = &rest[..colon];
    let start = head.rfind(' ').map_or(0, |i| i + 1);
    let stamp = &head[start..];
    let (secs, frac) = stamp.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    let ns = (secs * 1_000_000_000 + frac_ns).checked_sub(t0)?;
    let at = after_cpu + start;
    let keep = line[..at].trim_end().len();
    Some(format!(
        "{} {:>5}.{:09}{}",
        &line[..keep],
        ns / 1_000_000_000,
        ns % 1_000_000_000,
        &line[at + stamp.len()..]
    ))
}

impl Drop for Capture {
    /// Recording stops whatever ends the run; the journal removes the instance.
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
    }
}

/// Whether a capture can be made here without changing anything but what the journal
/// records: tracefs mounted or mountable. (The caller must be root.)
pub fn available() -> bool {
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    tracefs_mount(&info).is_some()
        || fs::read_to_string("/proc/filesystems")
            .is_ok_and(|f| f.lines().any(|l| l.ends_with("tracefs")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_line_is_rebased_to_the_runs_start_in_nanoseconds() {
        let line = "          cyclic0-4242    (   4240) [001] d..2.   637.963518: sched_switch: \
                    prev_comm=cyclic0 prev_pid=4242 prev_prio=4 prev_state=S ==> \
                    next_comm=swapper/1 next_pid=0 next_prio=120";
        let t0 = 637_000_000_000;
        let got = rebase(line, t0).unwrap();
        assert!(
            got.starts_with("          cyclic0-4242    (   4240) [001] d..2.     0.963518000: "),
            "{got}"
        );
        assert!(got.ends_with("next_prio=120"));
        assert_eq!(rebase(line, 638_000_000_000), None, "before the start");
        assert_eq!(rebase("# tracer: nop", 0), None);
    }

    #[test]
    fn the_tracefs_mount_is_read_from_mountinfo() {
        let info = "22 1 0:21 / /sys rw - sysfs sysfs rw\n\
                    41 22 0:38 / /sys/kernel/tracing rw - tracefs tracefs rw\n";
        assert_eq!(tracefs_mount(info), Some(PathBuf::from(TRACEFS)));
        assert_eq!(
            tracefs_mount("22 1 0:21 / /sys rw - sysfs sysfs rw\n"),
            None
        );
    }

    #[test]
    fn a_mount_point_is_found_by_its_path() {
        assert!(crate::journal::mount_point(Path::new("/proc")).is_some());
        assert!(crate::journal::mount_point(Path::new("/proc/self")).is_none());
    }
}

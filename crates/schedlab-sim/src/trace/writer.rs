//! The streaming ftrace-text writer.
//!
//! # Line format
//! Every line is what the kernel prints in `/sys/kernel/tracing/trace` with the
//! `record-tgid` and `irq-info` options on (kernel/trace/trace_output.c,
//! `trace_print_context` + `trace_print_lat_fmt`, v6.x):
//!
//! ```text
//! <comm:>16>-<pid:<7> (<tgid:>7>) [<cpu:03>] <flags:5> <secs:>5>.<ns:09>: <event>: <fields>
//!        hackbench-5836    (   5836) [001] d..2.   637.963518000: sched_switch: prev_comm=...
//!           <idle>-0       (-------) [000] d..2.   637.964437000: sched_switch: ...
//! ```
//!
//! The only deliberate difference from the kernel is the timestamp: 9 decimals
//! (nanoseconds) instead of the kernel's 6, so that run times read back from a trace
//! are exact. Perfetto and our parser accept both.
//!
//! Event bodies follow the `TP_printk` formats of include/trace/events/sched.h
//! (torvalds/linux 4981f05f, v6.x) and, where they changed since, the `print fmt` of
//! this lab's 6.18 kernel (`events/sched/*/format`):
//! - `sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==>
//!   next_comm=%s next_pid=%d next_prio=%d` — state `R`, `R+` (preempted), `S`, `D`, `X`
//! - `sched_waking` / `sched_wakeup` / `sched_wakeup_new: comm=%s pid=%d prio=%d
//!   target_cpu=%03d`
//! - `sched_migrate_task: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d`
//! - `sched_process_fork: comm=%s pid=%d child_comm=%s child_pid=%d`
//! - `sched_process_exit: comm=%s pid=%d prio=%d group_dead=%s` (`group_dead` is 6.15+)
//! - counters and slices as trace_marker writes: `tracing_mark_write: C|<tgid>|<name>|<value>`,
//!   `B|<tgid>|<name>`, `E|<tgid>`.
//!
//! # What Perfetto needs (google/perfetto, src/trace_processor/importers/systrace/)
//! - `# tracer` within the first bytes, or the file is not recognised as systrace text
//!   (util/trace_type.cc); lines starting with `#` are skipped; each line must end in `\n`.
//! - Each line must match the tokenizer's regex (systrace_line_tokenizer.cc):
//!   `-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):`
//!   — the text before the match is the comm, the optional group is the tgid (which puts
//!   threads into processes), the timestamp is read as a double and truncated to ns.
//! - Fields are split on single spaces and then on `=` (systrace_line_parser.cc), so comm
//!   must not contain spaces or `=`: we replace them by `_` (the kernel would print them).
//! - sched_switch fills the `sched` and `thread_state` tables; `sched_waking` (not
//!   sched_wakeup, which the text importer ignores) marks the wakee Runnable, so we emit
//!   `sched_waking` before every `sched_wakeup` and `sched_wakeup_new` (the kernel does
//!   not fire sched_waking for a new task; we do, so Perfetto shows its first wait).
//! - `C|n|name|value`: `n` is taken as the **tgid**; the counter track is keyed on
//!   (process of n, name) (systrace_parser.cc, `ParseSystracePoint` case 'C'); the value
//!   must be an integer. A per-thread counter of a non-leader thread therefore carries
//!   the thread id in its name (`<name> <tid>`), or all threads would share one track.
//!
//! # Cost
//! No allocation per line: each task's padded `comm-pid (tgid) ` prefix, its comm and
//! its pid digits are formatted once at registration into one byte arena; numbers are
//! written by a small integer formatter into a reusable buffer that is handed to the
//! sink in large blocks.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use crate::types::{CpuId, TaskId, Time};

/// Bytes buffered before they are handed to the sink.
const FLUSH_AT: usize = 256 * 1024;
/// The kernel's TASK_COMM_LEN is 16 including the NUL.
const COMM_MAX: usize = 15;
/// The prio ftrace shows for the idle task (`swapper/N`).
const IDLE_PRIO: i32 = 120;

/// The header the kernel prints with `record-tgid` and `irq-info` on (6.x), less the
/// `entries-in-buffer` line, which a streaming writer cannot know.
const HEADER: &[u8] = b"# tracer: nop\n\
#\n\
# schedlab simulated trace: ftrace text format, nanosecond timestamps\n\
#\n\
#                                          _-----=> irqs-off/BH-disabled\n\
#                                         / _----=> need-resched\n\
#                                        | / _---=> hardirq/softirq\n\
#                                        || / _--=> preempt-depth\n\
#                                        ||| / _-=> migrate-disable\n\
#                                        |||| /     delay\n\
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n\
#              | |           |       |   |||||     |         |\n";

/// The context prefix of lines emitted while a CPU is idle (pid 0 has no tgid).
const IDLE_PREFIX: &[u8] = b"          <idle>-0       (-------) ";

/// Where a task's cached strings live in the arena.
#[derive(Clone, Copy)]
struct Names {
    /// `%16s-%-7d (%7d) `
    prefix: (u32, u32),
    comm: (u32, u32),
    pid: (u32, u32),
    /// The tgid, or `u32::MAX` for group leaders (pid == tgid).
    tgid: u32,
    tgid_digits: (u32, u32),
}

/// The ftrace `prev_state` of a task leaving the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable, left the CPU voluntarily (sched_yield): `R`.
    Runnable,
    /// Still runnable, preempted: `R+` (the kernel's TASK_REPORT_MAX bit; Perfetto shows
    /// "Runnable (Preempted)").
    Preempted,
    /// Blocked interruptibly: `S`.
    Sleeping,
    /// Blocked uninterruptibly (`D`; the kernel shows futex/mutex waits as `S`, rt-mutex
    /// and I/O waits as `D`).
    Uninterruptible,
    /// Exited: `X` (EXIT_DEAD, an auto-reaped thread; a process waited for by its parent
    /// shows `Z` in real captures).
    Dead,
}

impl PrevState {
    /// The text ftrace prints for this state.
    pub fn as_str(self) -> &'static str {
        match self {
            PrevState::Runnable => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Dead => "X",
        }
    }
}

/// The trace writer. A disabled tracer costs one branch per call site.
pub struct Tracer {
    out: Option<Box<dyn Write>>,
    buf: Vec<u8>,
    arena: Vec<u8>,
    names: Vec<Names>,
    /// `swapper/<cpu>` digits for the idle task of each CPU, built on first use.
    idle_comm: Vec<Vec<u8>>,
    /// Live threads per tgid, for sched_process_exit's `group_dead`.
    live: HashMap<u32, u32>,
    /// The last timestamp written, and its text (` %5u.%09u: `), reused while equal.
    last_ts: Time,
    ts_text: [u8; 32],
    ts_len: usize,
    lines: u64,
    error: Option<io::Error>,
}

impl Tracer {
    /// A tracer that writes nothing.
    pub fn disabled() -> Tracer {
        Tracer {
            out: None,
            buf: Vec::new(),
            arena: Vec::new(),
            names: Vec::new(),
            idle_comm: Vec::new(),
            live: HashMap::new(),
            last_ts: u64::MAX,
            ts_text: [0; 32],
            ts_len: 0,
            lines: 0,
            error: None,
        }
    }

    /// A tracer streaming to `path` (created or truncated).
    pub fn to_file(path: &Path) -> io::Result<Tracer> {
        let f = File::create(path)?;
        Self::to_writer(Box::new(f))
    }

    /// A tracer streaming to any writer. Output is buffered here in large blocks, so
    /// `w` need not be buffered.
    pub fn to_writer(mut w: Box<dyn Write>) -> io::Result<Tracer> {
        w.write_all(HEADER)?;
        let mut t = Tracer::disabled();
        t.out = Some(w);
        t.buf = Vec::with_capacity(FLUSH_AT + 4096);
        Ok(t)
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }

    /// Event lines written so far (header excluded).
    pub fn lines_written(&self) -> u64 {
        self.lines
    }

    /// Record a task's name and thread-group id (must be called for every task id in
    /// order, when the task is created). The name is cut to the kernel's 15 bytes
    /// (TASK_COMM_LEN - 1); spaces, `=` and control characters become `_` so that
    /// key=value splitting (Perfetto's and ours) stays unambiguous.
    pub fn register_task(&mut self, t: TaskId, comm: &str, tgid: u32) {
        if !self.enabled() {
            return;
        }
        debug_assert_eq!(t.idx(), self.names.len());
        let mut c: Vec<u8> = Vec::with_capacity(COMM_MAX);
        for ch in comm.chars() {
            let ch = if ch.is_whitespace() || ch.is_control() || ch == '=' || ch == '|' {
                '_'
            } else {
                ch
            };
            if c.len() + ch.len_utf8() > COMM_MAX {
                break;
            }
            let mut b = [0u8; 4];
            c.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
        }
        if c.is_empty() {
            c.push(b'_');
        }
        let pid = t.pid();
        let a = &mut self.arena;

        let start = a.len();
        for _ in c.len()..16 {
            a.push(b' ');
        }
        a.extend_from_slice(&c);
        a.push(b'-');
        let p0 = a.len();
        put_u64(a, pid as u64);
        for _ in (a.len() - p0)..7 {
            a.push(b' ');
        }
        a.extend_from_slice(b" (");
        put_u64_pad(a, tgid as u64, 7, b' ');
        a.extend_from_slice(b") ");
        let prefix = span(start, a.len());

        let cs = a.len();
        a.extend_from_slice(&c);
        let comm = span(cs, a.len());
        let ps = a.len();
        put_u64(a, pid as u64);
        let pid_span = span(ps, a.len());
        let ts0 = a.len();
        put_u64(a, tgid as u64);
        let tgid_digits = span(ts0, a.len());

        self.names.push(Names {
            prefix,
            comm,
            pid: pid_span,
            tgid: if tgid == pid { u32::MAX } else { tgid },
            tgid_digits,
        });
        *self.live.entry(tgid).or_insert(0) += 1;
    }

    /// Begin a line: context prefix, cpu, flags, timestamp, event name.
    #[inline]
    fn begin(&mut self, ts: Time, cpu: CpuId, on: Option<TaskId>, flags: &[u8; 5], event: &[u8]) {
        if ts != self.last_ts {
            self.format_ts(ts);
        }
        let Tracer {
            buf,
            arena,
            names,
            ts_text,
            ts_len,
            ..
        } = self;
        match on {
            Some(t) => {
                let p = names[t.idx()].prefix;
                buf.extend_from_slice(&arena[p.0 as usize..p.1 as usize]);
            }
            None => buf.extend_from_slice(IDLE_PREFIX),
        }
        buf.push(b'[');
        put_u64_pad(buf, cpu.0 as u64, 3, b'0');
        buf.extend_from_slice(b"] ");
        buf.extend_from_slice(flags);
        buf.extend_from_slice(&ts_text[..*ts_len]);
        buf.extend_from_slice(event);
    }

    #[cold]
    fn format_ts(&mut self, ts: Time) {
        let mut v: Vec<u8> = Vec::with_capacity(32);
        v.push(b' ');
        put_u64_pad(&mut v, ts / 1_000_000_000, 5, b' ');
        v.push(b'.');
        put_u64_pad(&mut v, ts % 1_000_000_000, 9, b'0');
        v.extend_from_slice(b": ");
        let n = v.len().min(self.ts_text.len());
        self.ts_text[..n].copy_from_slice(&v[..n]);
        self.ts_len = n;
        self.last_ts = ts;
    }

    /// Write `comm=<c> pid=<p>` style pairs for a task (or the idle task of `cpu`).
    #[inline]
    fn put_comm(&mut self, t: Option<TaskId>, cpu: CpuId) {
        match t {
            Some(t) => {
                let c = self.names[t.idx()].comm;
                let Tracer { buf, arena, .. } = self;
                buf.extend_from_slice(&arena[c.0 as usize..c.1 as usize]);
            }
            None => {
                let i = cpu.idx();
                if self.idle_comm.len() <= i {
                    self.idle_comm.resize(i + 1, Vec::new());
                }
                if self.idle_comm[i].is_empty() {
                    let mut v = b"swapper/".to_vec();
                    put_u64(&mut v, cpu.0 as u64);
                    self.idle_comm[i] = v;
                }
                let Tracer { buf, idle_comm, .. } = self;
                buf.extend_from_slice(&idle_comm[i]);
            }
        }
    }

    #[inline]
    fn put_pid(&mut self, t: Option<TaskId>) {
        match t {
            Some(t) => {
                let p = self.names[t.idx()].pid;
                let Tracer { buf, arena, .. } = self;
                buf.extend_from_slice(&arena[p.0 as usize..p.1 as usize]);
            }
            None => self.buf.push(b'0'),
        }
    }

    /// End a line and hand the buffer to the sink when it is full.
    #[inline]
    fn end(&mut self) {
        self.buf.push(b'\n');
        self.lines += 1;
        if self.buf.len() >= FLUSH_AT {
            self.drain();
        }
    }

    #[cold]
    fn drain(&mut self) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(&self.buf) {
                // Stop tracing on the first error; finish() reports it.
                self.error.get_or_insert(e);
                self.out = None;
            }
        }
        self.buf.clear();
    }

    /// sched_switch from `prev` (None = idle) to `next` on `cpu`.
    #[allow(clippy::too_many_arguments)]
    pub fn switch(
        &mut self,
        ts: Time,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_prio: i32,
        prev_state: PrevState,
        next: Option<TaskId>,
        next_prio: i32,
    ) {
        if !self.enabled() {
            return;
        }
        self.begin(ts, cpu, prev, b"d..2.", b"sched_switch: prev_comm=");
        self.put_comm(prev, cpu);
        self.buf.extend_from_slice(b" prev_pid=");
        self.put_pid(prev);
        self.buf.extend_from_slice(b" prev_prio=");
        put_i64(
            &mut self.buf,
            if prev.is_some() { prev_prio } else { IDLE_PRIO } as i64,
        );
        self.buf.extend_from_slice(b" prev_state=");
        let st = if prev.is_some() {
            prev_state
        } else {
            PrevState::Runnable
        };
        self.buf.extend_from_slice(st.as_str().as_bytes());
        self.buf.extend_from_slice(b" ==> next_comm=");
        self.put_comm(next, cpu);
        self.buf.extend_from_slice(b" next_pid=");
        self.put_pid(next);
        self.buf.extend_from_slice(b" next_prio=");
        put_i64(
            &mut self.buf,
            if next.is_some() { next_prio } else { IDLE_PRIO } as i64,
        );
        self.end();
    }

    fn wake_line(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        ev: &[u8],
        flags: &[u8; 5],
        t: TaskId,
        prio: i32,
        target: CpuId,
    ) {
        self.begin(ts, cpu, on, flags, ev);
        self.put_comm(Some(t), cpu);
        self.buf.extend_from_slice(b" pid=");
        self.put_pid(Some(t));
        self.buf.extend_from_slice(b" prio=");
        put_i64(&mut self.buf, prio as i64);
        self.buf.extend_from_slice(b" target_cpu=");
        put_u64_pad(&mut self.buf, target.0 as u64, 3, b'0');
        self.end();
    }

    /// The wake-up of `t` onto `target`, emitted on the waker's CPU: `sched_waking`
    /// followed by `sched_wakeup` (or `sched_wakeup_new` when `new`).
    #[allow(clippy::too_many_arguments)]
    pub fn wakeup(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        t: TaskId,
        prio: i32,
        target: CpuId,
        new: bool,
    ) {
        if !self.enabled() {
            return;
        }
        self.wake_line(
            ts,
            cpu,
            on,
            b"sched_waking: comm=",
            b"d..3.",
            t,
            prio,
            target,
        );
        if new {
            self.wake_line(
                ts,
                cpu,
                on,
                b"sched_wakeup_new: comm=",
                b"d..2.",
                t,
                prio,
                target,
            );
        } else {
            self.wake_line(
                ts,
                cpu,
                on,
                b"sched_wakeup: comm=",
                b"d..3.",
                t,
                prio,
                target,
            );
        }
    }

    /// sched_migrate_task of `t` from `from` to `to`.
    #[allow(clippy::too_many_arguments)]
    pub fn migrate(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        t: TaskId,
        prio: i32,
        from: CpuId,
        to: CpuId,
    ) {
        if !self.enabled() {
            return;
        }
        self.begin(ts, cpu, on, b"d..2.", b"sched_migrate_task: comm=");
        self.put_comm(Some(t), cpu);
        self.buf.extend_from_slice(b" pid=");
        self.put_pid(Some(t));
        self.buf.extend_from_slice(b" prio=");
        put_i64(&mut self.buf, prio as i64);
        self.buf.extend_from_slice(b" orig_cpu=");
        put_u64(&mut self.buf, from.0 as u64);
        self.buf.extend_from_slice(b" dest_cpu=");
        put_u64(&mut self.buf, to.0 as u64);
        self.end();
    }

    /// sched_process_fork of `child` by `parent` (running on `cpu`).
    pub fn fork(&mut self, ts: Time, cpu: CpuId, parent: TaskId, child: TaskId) {
        if !self.enabled() {
            return;
        }
        self.begin(
            ts,
            cpu,
            Some(parent),
            b".....",
            b"sched_process_fork: comm=",
        );
        self.put_comm(Some(parent), cpu);
        self.buf.extend_from_slice(b" pid=");
        self.put_pid(Some(parent));
        self.buf.extend_from_slice(b" child_comm=");
        self.put_comm(Some(child), cpu);
        self.buf.extend_from_slice(b" child_pid=");
        self.put_pid(Some(child));
        self.end();
    }

    /// sched_process_exit of `t` (running on `cpu`). `group_dead` is true when `t` is
    /// the last live thread of its thread group.
    pub fn exit(&mut self, ts: Time, cpu: CpuId, t: TaskId, prio: i32) {
        if !self.enabled() {
            return;
        }
        let n = self.names[t.idx()];
        let tgid = if n.tgid == u32::MAX { t.pid() } else { n.tgid };
        let group_dead = match self.live.get_mut(&tgid) {
            Some(c) => {
                *c = c.saturating_sub(1);
                *c == 0
            }
            None => true,
        };
        self.begin(ts, cpu, Some(t), b".....", b"sched_process_exit: comm=");
        self.put_comm(Some(t), cpu);
        self.buf.extend_from_slice(b" pid=");
        self.put_pid(Some(t));
        self.buf.extend_from_slice(b" prio=");
        put_i64(&mut self.buf, prio as i64);
        self.buf.extend_from_slice(if group_dead {
            b" group_dead=true"
        } else {
            b" group_dead=false"
        });
        self.end();
    }

    /// Write `C|<tgid>|<name>[ <tid>]|` — the counter head for task `t`.
    fn mark_head(&mut self, kind: &[u8], t: TaskId, name: &str, with_tid: bool) {
        let n = self.names[t.idx()];
        self.buf.extend_from_slice(kind);
        let Tracer { buf, arena, .. } = self;
        buf.extend_from_slice(&arena[n.tgid_digits.0 as usize..n.tgid_digits.1 as usize]);
        buf.push(b'|');
        for &b in name.as_bytes() {
            buf.push(if b == b'|' || b == b'\n' { b'_' } else { b });
        }
        if with_tid && n.tgid != u32::MAX {
            buf.push(b' ');
            buf.extend_from_slice(&arena[n.pid.0 as usize..n.pid.1 as usize]);
        }
    }

    /// A counter of task `t` (Perfetto: a process counter track named `name`, or
    /// `"<name> <tid>"` for a thread that is not its group's leader), emitted on `cpu`
    /// while `on` runs there.
    pub fn counter(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        t: TaskId,
        name: &str,
        value: i64,
    ) {
        if !self.enabled() {
            return;
        }
        self.begin(ts, cpu, on, b"...1.", b"tracing_mark_write: ");
        self.mark_head(b"C|", t, name, true);
        self.buf.push(b'|');
        put_i64(&mut self.buf, value);
        self.end();
    }

    /// Begin a slice named `name` on the thread track of `t`, which runs on `cpu`
    /// (`tracing_mark_write: B|<tgid>|<name>`).
    pub fn slice_begin(&mut self, ts: Time, cpu: CpuId, t: TaskId, name: &str) {
        if !self.enabled() {
            return;
        }
        self.begin(ts, cpu, Some(t), b"...1.", b"tracing_mark_write: ");
        self.mark_head(b"B|", t, name, false);
        self.end();
    }

    /// End the innermost open slice of `t` (`tracing_mark_write: E|<tgid>`).
    pub fn slice_end(&mut self, ts: Time, cpu: CpuId, t: TaskId) {
        if !self.enabled() {
            return;
        }
        self.begin(ts, cpu, Some(t), b"...1.", b"tracing_mark_write: E|");
        let n = self.names[t.idx()].tgid_digits;
        let Tracer { buf, arena, .. } = self;
        buf.extend_from_slice(&arena[n.0 as usize..n.1 as usize]);
        self.end();
    }

    /// Flush and report the first write error, if any. Tracing stops after an error.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.drain();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(())
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        // Best effort: a trace whose owner forgot finish() still ends complete.
        if self.out.is_some() && !self.buf.is_empty() {
            self.drain();
            if let Some(out) = self.out.as_mut() {
                let _ = out.flush();
            }
        }
    }
}

#[inline]
fn span(a: usize, b: usize) -> (u32, u32) {
    (a as u32, b as u32)
}

const DIGITS2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Format `v` into the tail of `tmp`; returns the index of its first digit.
#[inline]
fn fmt_u64(mut v: u64, tmp: &mut [u8; 20]) -> usize {
    let mut i = tmp.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGITS2[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGITS2[d..d + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    i
}

/// Append the decimal digits of `v`.
#[inline]
pub(crate) fn put_u64(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 20];
    let i = fmt_u64(v, &mut tmp);
    buf.extend_from_slice(&tmp[i..]);
}

/// Append `v` right-aligned in `width` columns, padded with `fill`.
#[inline]
pub(crate) fn put_u64_pad(buf: &mut Vec<u8>, v: u64, width: usize, fill: u8) {
    let mut tmp = [0u8; 20];
    let i = fmt_u64(v, &mut tmp);
    let n = tmp.len() - i;
    for _ in n..width {
        buf.push(fill);
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Append a signed decimal.
#[inline]
pub(crate) fn put_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    put_u64(buf, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A sink the test can read after the tracer is done with it.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub Rc<RefCell<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn event_lines(s: &str) -> Vec<&str> {
        s.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn integer_formatting() {
        let mut b = Vec::new();
        for v in [0u64, 7, 10, 99, 100, 12345, u64::MAX] {
            b.clear();
            put_u64(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes());
        }
        for v in [0i64, -1, i64::MIN, i64::MAX, -120] {
            b.clear();
            put_i64(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes());
        }
        b.clear();
        put_u64_pad(&mut b, 7, 3, b'0');
        assert_eq!(b, b"007");
        b.clear();
        put_u64_pad(&mut b, 1234, 3, b'0');
        assert_eq!(b, b"1234");
        b.clear();
        put_u64_pad(&mut b, 12, 9, b'0');
        assert_eq!(b, b"000000012");
    }

    #[test]
    fn lines_match_kernel_layout() {
        let sink = Shared::default();
        let mut tr = Tracer::to_writer(Box::new(sink.clone())).unwrap();
        tr.register_task(TaskId(0), "hackbench", 1);
        tr.register_task(TaskId(1), "a very long thread name", 1);
        tr.switch(
            1_500_000_123,
            CpuId(1),
            None,
            0,
            PrevState::Runnable,
            Some(TaskId(0)),
            120,
        );
        tr.wakeup(
            2_000_000_000,
            CpuId(0),
            Some(TaskId(0)),
            TaskId(1),
            139,
            CpuId(1),
            false,
        );
        tr.switch(
            2_000_000_500,
            CpuId(1),
            Some(TaskId(0)),
            120,
            PrevState::Preempted,
            Some(TaskId(1)),
            139,
        );
        tr.counter(
            2_000_000_500,
            CpuId(1),
            Some(TaskId(1)),
            TaskId(1),
            "vruntime",
            -5,
        );
        tr.exit(3_000_000_000, CpuId(1), TaskId(1), 139);
        tr.finish().unwrap();
        let text = String::from_utf8(sink.0.borrow().clone()).unwrap();
        assert!(text.starts_with("# tracer: nop\n"));
        let l = event_lines(&text);
        assert_eq!(
            l[0],
            "          <idle>-0       (-------) [001] d..2.     1.500000123: sched_switch: \
             prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hackbench \
             next_pid=1 next_prio=120"
        );
        assert_eq!(
            l[1],
            "       hackbench-1       (      1) [000] d..3.     2.000000000: sched_waking: \
             comm=a_very_long_thr pid=2 prio=139 target_cpu=001"
        );
        assert!(l[2].contains(" sched_wakeup: comm=a_very_long_thr pid=2 prio=139 target_cpu=001"));
        assert!(
            l[3].ends_with("prev_state=R+ ==> next_comm=a_very_long_thr next_pid=2 next_prio=139")
        );
        assert!(l[4].starts_with(" a_very_long_thr-2       (      1) [001] ...1. "));
        assert!(
            l[4].ends_with("tracing_mark_write: C|1|vruntime 2|-5"),
            "{}",
            l[4]
        );
        assert!(l[5]
            .ends_with("sched_process_exit: comm=a_very_long_thr pid=2 prio=139 group_dead=false"));
        assert_eq!(tr.lines_written(), 6);
    }
}

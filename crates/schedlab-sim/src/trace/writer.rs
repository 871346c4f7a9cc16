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
//! No allocation and no `fmt` per line: each task's padded `comm-pid (tgid) ` prefix,
//! its comm, pid and tgid digits are formatted once at registration into fixed-size
//! slots; a line is assembled in a preallocated block by fixed-size copies (which
//! compile to a few vector moves, not `memcpy` calls) and an in-place integer
//! formatter, and the block is handed to the sink when 256 KiB are full.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use schedlab_spec::model::SECTOR_BYTES;

use crate::types::{CpuId, TaskId, Time};

/// Bytes assembled before they are handed to the sink.
const FLUSH_AT: usize = 256 * 1024;
/// Room after FLUSH_AT: every line but a counter or slice with a long name fits in it
/// (those check for room first).
const SLACK: usize = 1024;
/// The kernel's TASK_COMM_LEN is 16 including the NUL.
const COMM_MAX: usize = 15;
/// The prio ftrace shows for the idle task (`swapper/N`).
const IDLE_PRIO: i32 = 120;
/// Longest counter or slice name written (longer ones are cut).
const NAME_MAX: usize = 256;

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

/// A short string in a fixed-size slot, copied whole and advanced by `len`.
#[derive(Clone, Copy)]
struct Slot<const N: usize> {
    b: [u8; N],
    len: u8,
}

impl<const N: usize> Slot<N> {
    fn new(s: &[u8]) -> Self {
        let mut b = [b' '; N];
        let n = s.len().min(N);
        b[..n].copy_from_slice(&s[..n]);
        Slot { b, len: n as u8 }
    }
}

/// A task's (or idle CPU's) preformatted text.
#[derive(Clone, Copy)]
struct TaskText {
    /// `%16s-%-7d (%7d) ` — 35 bytes unless the pid or tgid has more than 7 digits.
    prefix: Slot<48>,
    comm: Slot<16>,
    pid: Slot<12>,
    tgid: Slot<12>,
    /// True unless the task leads its thread group (pid == tgid).
    follower: bool,
    tgid_num: u32,
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
    /// The block being assembled: `buf[..pos]` is pending output; the length is fixed
    /// at FLUSH_AT + SLACK so that fixed-size copies never reallocate.
    buf: Box<[u8]>,
    pos: usize,
    tasks: Vec<TaskText>,
    /// The idle task of each CPU (`<idle>-0 (-------) `, `swapper/<cpu>`), built on use.
    idle: Vec<Option<TaskText>>,
    /// Live threads per tgid, for sched_process_exit's `group_dead`.
    live: HashMap<u32, u32>,
    /// The last timestamp written, and its text (` %5u.%09u: `), reused while equal.
    last_ts: Time,
    ts_text: Slot<40>,
    /// The seconds the text holds, and where its fraction starts.
    last_secs: u64,
    frac_at: u8,
    lines: u64,
    error: Option<io::Error>,
}

impl Tracer {
    /// A tracer that writes nothing.
    pub fn disabled() -> Tracer {
        Tracer {
            out: None,
            buf: Box::new([]),
            pos: 0,
            tasks: Vec::new(),
            idle: Vec::new(),
            live: HashMap::new(),
            last_ts: u64::MAX,
            ts_text: Slot::new(b""),
            last_secs: u64::MAX,
            frac_at: 0,
            lines: 0,
            error: None,
        }
    }

    /// A tracer streaming to `path` (created or truncated).
    pub fn to_file(path: &Path) -> io::Result<Tracer> {
        let f = File::create(path)?;
        Self::to_writer(Box::new(f))
    }

    /// A tracer streaming to any writer. Output is assembled here in 256 KiB blocks, so
    /// `w` need not be buffered.
    pub fn to_writer(mut w: Box<dyn Write>) -> io::Result<Tracer> {
        w.write_all(HEADER)?;
        let mut t = Tracer::disabled();
        t.out = Some(w);
        t.buf = vec![0u8; FLUSH_AT + SLACK].into_boxed_slice();
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
    /// (TASK_COMM_LEN - 1); spaces, `=`, `|` and control characters become `_` so that
    /// key=value splitting (Perfetto's and ours) stays unambiguous.
    pub fn register_task(&mut self, t: TaskId, comm: &str, tgid: u32) {
        if !self.enabled() {
            return;
        }
        debug_assert_eq!(t.idx(), self.tasks.len());
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
        let text = task_text(&c, t.pid(), Some(tgid));
        self.tasks.push(text);
        *self.live.entry(tgid).or_insert(0) += 1;
    }

    #[inline(always)]
    fn task(&mut self, t: Option<TaskId>, cpu: CpuId) -> TaskText {
        match t {
            Some(t) => self.tasks[t.idx()],
            None => self.idle_text(cpu),
        }
    }

    #[inline]
    fn idle_text(&mut self, cpu: CpuId) -> TaskText {
        let i = cpu.idx();
        match self.idle.get(i) {
            Some(Some(t)) => *t,
            _ => self.make_idle(i),
        }
    }

    #[cold]
    fn make_idle(&mut self, i: usize) -> TaskText {
        if self.idle.len() <= i {
            self.idle.resize(i + 1, None);
        }
        let mut comm = b"swapper/".to_vec();
        comm.extend_from_slice(i.to_string().as_bytes());
        let mut t = task_text(b"<idle>", 0, None);
        t.comm = Slot::new(&comm);
        self.idle[i] = Some(t);
        t
    }

    /// Copy a fixed-size slot and advance by its length.
    #[inline(always)]
    fn slot<const N: usize>(&mut self, s: &Slot<N>) {
        self.buf[self.pos..self.pos + N].copy_from_slice(&s.b);
        self.pos += s.len as usize;
    }

    /// Copy a constant.
    #[inline(always)]
    fn lit<const N: usize>(&mut self, s: &[u8; N]) {
        self.buf[self.pos..self.pos + N].copy_from_slice(s);
        self.pos += N;
    }

    /// Write an unsigned decimal in place.
    #[inline(always)]
    fn uint(&mut self, v: u64) {
        self.pos += fmt_into(&mut self.buf[self.pos..self.pos + 20], v);
    }

    #[inline(always)]
    fn int(&mut self, v: i64) {
        if v < 0 {
            self.lit(b"-");
        }
        self.uint(v.unsigned_abs());
    }

    /// `%03d`
    #[inline(always)]
    fn cpu3(&mut self, v: u32) {
        if v < 1000 {
            let b = &mut self.buf[self.pos..self.pos + 3];
            b[0] = b'0' + (v / 100) as u8;
            b[1] = b'0' + (v / 10 % 10) as u8;
            b[2] = b'0' + (v % 10) as u8;
            self.pos += 3;
        } else {
            self.uint(v as u64);
        }
    }

    /// Begin a line: context prefix, cpu, flags, timestamp. The event name follows.
    #[inline(always)]
    fn begin(&mut self, ts: Time, cpu: CpuId, on: Option<TaskId>, flags: &[u8; 5]) {
        if ts != self.last_ts {
            self.format_ts(ts);
        }
        let who = self.task(on, cpu);
        self.slot(&who.prefix);
        self.lit(b"[");
        self.cpu3(cpu.0);
        self.lit(b"] ");
        self.lit(flags);
        let ts_text = self.ts_text;
        self.slot(&ts_text);
    }

    /// Rebuild the timestamp text ` %5u.%09u: ` for a new `ts`, in place: the seconds
    /// part only when it changed.
    #[inline]
    fn format_ts(&mut self, ts: Time) {
        let secs = ts / 1_000_000_000;
        let mut frac = ts % 1_000_000_000;
        if secs != self.last_secs {
            self.format_secs(secs);
        }
        let at = self.frac_at as usize;
        let b = &mut self.ts_text.b[at..at + 11];
        for k in (1..9).step_by(2).rev() {
            let d = (frac % 100) as usize * 2;
            frac /= 100;
            b[k..k + 2].copy_from_slice(&DIGITS2[d..d + 2]);
        }
        b[0] = b'0' + frac as u8;
        b[9] = b':';
        b[10] = b' ';
        self.ts_text.len = (at + 11) as u8;
        self.last_ts = ts;
    }

    #[cold]
    fn format_secs(&mut self, secs: u64) {
        let mut v: Vec<u8> = Vec::with_capacity(24);
        v.push(b' ');
        put_u64_pad(&mut v, secs, 5, b' ');
        v.push(b'.');
        self.frac_at = v.len() as u8;
        self.ts_text = Slot::new(&v);
        self.last_secs = secs;
    }

    /// End a line and hand the block to the sink when it is full.
    #[inline(always)]
    fn end(&mut self) {
        self.lit(b"\n");
        self.lines += 1;
        if self.pos >= FLUSH_AT {
            self.drain();
        }
    }

    #[cold]
    fn drain(&mut self) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(&self.buf[..self.pos]) {
                // Stop tracing on the first error; finish() reports it.
                self.error.get_or_insert(e);
                self.out = None;
            }
        }
        self.pos = 0;
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
        let p = self.task(prev, cpu);
        let n = self.task(next, cpu);
        self.begin(ts, cpu, prev, b"d..2.");
        self.lit(b"sched_switch: prev_comm=");
        self.slot(&p.comm);
        self.lit(b" prev_pid=");
        self.slot(&p.pid);
        self.lit(b" prev_prio=");
        self.int(if prev.is_some() { prev_prio } else { IDLE_PRIO } as i64);
        match if prev.is_some() {
            prev_state
        } else {
            PrevState::Runnable
        } {
            PrevState::Runnable => self.lit(b" prev_state=R"),
            PrevState::Preempted => self.lit(b" prev_state=R+"),
            PrevState::Sleeping => self.lit(b" prev_state=S"),
            PrevState::Uninterruptible => self.lit(b" prev_state=D"),
            PrevState::Dead => self.lit(b" prev_state=X"),
        }
        self.lit(b" ==> next_comm=");
        self.slot(&n.comm);
        self.lit(b" next_pid=");
        self.slot(&n.pid);
        self.lit(b" next_prio=");
        self.int(if next.is_some() { next_prio } else { IDLE_PRIO } as i64);
        self.end();
    }

    #[inline(always)]
    fn wake_tail(&mut self, w: &TaskText, prio: i32, target: CpuId) {
        self.slot(&w.comm);
        self.lit(b" pid=");
        self.slot(&w.pid);
        self.lit(b" prio=");
        self.int(prio as i64);
        self.lit(b" target_cpu=");
        self.cpu3(target.0);
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
        let w = self.tasks[t.idx()];
        self.begin(ts, cpu, on, b"d..3.");
        self.lit(b"sched_waking: comm=");
        self.wake_tail(&w, prio, target);
        if new {
            self.begin(ts, cpu, on, b"d..2.");
            self.lit(b"sched_wakeup_new: comm=");
        } else {
            self.begin(ts, cpu, on, b"d..3.");
            self.lit(b"sched_wakeup: comm=");
        }
        self.wake_tail(&w, prio, target);
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
        let w = self.tasks[t.idx()];
        self.begin(ts, cpu, on, b"d..2.");
        self.lit(b"sched_migrate_task: comm=");
        self.slot(&w.comm);
        self.lit(b" pid=");
        self.slot(&w.pid);
        self.lit(b" prio=");
        self.int(prio as i64);
        self.lit(b" orig_cpu=");
        self.uint(from.0 as u64);
        self.lit(b" dest_cpu=");
        self.uint(to.0 as u64);
        self.end();
    }

    /// sched_process_fork of `child` by `parent` (running on `cpu`).
    pub fn fork(&mut self, ts: Time, cpu: CpuId, parent: TaskId, child: TaskId) {
        if !self.enabled() {
            return;
        }
        let p = self.tasks[parent.idx()];
        let c = self.tasks[child.idx()];
        self.begin(ts, cpu, Some(parent), b".....");
        self.lit(b"sched_process_fork: comm=");
        self.slot(&p.comm);
        self.lit(b" pid=");
        self.slot(&p.pid);
        self.lit(b" child_comm=");
        self.slot(&c.comm);
        self.lit(b" child_pid=");
        self.slot(&c.pid);
        self.end();
    }

    /// sched_process_exit of `t` (running on `cpu`). `group_dead` is true when `t` is
    /// the last live thread of its thread group.
    pub fn exit(&mut self, ts: Time, cpu: CpuId, t: TaskId, prio: i32) {
        if !self.enabled() {
            return;
        }
        let w = self.tasks[t.idx()];
        let group_dead = match self.live.get_mut(&w.tgid_num) {
            Some(c) => {
                *c = c.saturating_sub(1);
                *c == 0
            }
            None => true,
        };
        self.begin(ts, cpu, Some(t), b".....");
        self.lit(b"sched_process_exit: comm=");
        self.slot(&w.comm);
        self.lit(b" pid=");
        self.slot(&w.pid);
        self.lit(b" prio=");
        self.int(prio as i64);
        if group_dead {
            self.lit(b" group_dead=true");
        } else {
            self.lit(b" group_dead=false");
        }
        self.end();
    }

    /// Copy a user-supplied name, `|` and newlines replaced, cut to NAME_MAX bytes.
    fn name(&mut self, name: &str) {
        if self.pos + NAME_MAX + 128 > self.buf.len() {
            self.drain();
        }
        let mut n = name.len().min(NAME_MAX);
        while !name.is_char_boundary(n) {
            n -= 1;
        }
        let dst = &mut self.buf[self.pos..self.pos + n];
        dst.copy_from_slice(&name.as_bytes()[..n]);
        for b in dst.iter_mut() {
            if *b == b'|' || *b == b'\n' || *b == b'\r' {
                *b = b'_';
            }
        }
        self.pos += n;
    }

    /// A counter of task `t` (Perfetto: a process counter track named `name`, or
    /// `"<name> <tid>"` for a thread that is not its group's leader), emitted on `cpu`
    /// while `on` runs there: `tracing_mark_write: C|<tgid>|<name>|<value>`.
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
        let w = self.tasks[t.idx()];
        self.begin(ts, cpu, on, b"...1.");
        self.lit(b"tracing_mark_write: C|");
        self.slot(&w.tgid);
        self.lit(b"|");
        self.name(name);
        if w.follower {
            self.lit(b" ");
            self.slot(&w.pid);
        }
        self.lit(b"|");
        self.int(value);
        self.end();
    }

    /// A block request issued to device `dev` (`block_rq_issue`, on the CPU of the task
    /// that submitted it, `on` running there; `block_rq_insert` alike, when it enters the
    /// I/O scheduler) or completed (`block_rq_complete`, from the
    /// device's interrupt on that CPU). Formats of include/trace/events/block.h
    /// (`block_rq`: `"%d,%d %s %u (%s) %llu + %u [%s]"`, bytes 0 for a file-system
    /// request; `block_rq_with_error`: `"%d,%d %s (%s) %llu + %u [%d]"`), device major
    /// 251 (the first dynamic block major null_blk gets), minor = the device's index.
    #[allow(clippy::too_many_arguments)]
    pub fn block_rq(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        dev: u32,
        rwbs: &[u8],
        sector: u64,
        nr_sectors: u64,
        kind: RqTrace,
    ) {
        if !self.enabled() {
            return;
        }
        let issue = kind != RqTrace::Complete;
        self.begin(ts, cpu, on, if issue { b"....." } else { b"..s1." });
        match kind {
            RqTrace::Insert => self.lit(b"block_rq_insert: 251,"),
            RqTrace::Issue => self.lit(b"block_rq_issue: 251,"),
            RqTrace::Complete => self.lit(b"block_rq_complete: 251,"),
        }
        self.uint(dev as u64);
        self.lit(b" ");
        for &c in rwbs {
            self.lit(&[c]);
        }
        if issue {
            // `block_rq` (Linux 6.1 include/trace/events/block.h): insert and issue print
            // the request's bytes (`blk_rq_bytes`) before its command.
            self.lit(b" ");
            self.uint(nr_sectors * SECTOR_BYTES);
            self.lit(b" () ");
        } else {
            self.lit(b" () ");
        }
        self.uint(sector);
        self.lit(b" + ");
        self.uint(nr_sectors);
        if issue {
            let comm = on.map(|t| self.tasks[t.idx()].comm);
            self.lit(b" [");
            match comm {
                Some(c) => self.slot(&c),
                None => self.lit(b"swapper"),
            }
            self.lit(b"]");
        } else {
            self.lit(b" [0]");
        }
        self.end();
    }

    /// Begin a slice named `name` on the thread track of `t`, which runs on `cpu`
    /// (`tracing_mark_write: B|<tgid>|<name>`).
    pub fn slice_begin(&mut self, ts: Time, cpu: CpuId, t: TaskId, name: &str) {
        if !self.enabled() {
            return;
        }
        let w = self.tasks[t.idx()];
        self.begin(ts, cpu, Some(t), b"...1.");
        self.lit(b"tracing_mark_write: B|");
        self.slot(&w.tgid);
        self.lit(b"|");
        self.name(name);
        self.end();
    }

    /// End the innermost open slice of `t` (`tracing_mark_write: E|<tgid>`).
    pub fn slice_end(&mut self, ts: Time, cpu: CpuId, t: TaskId) {
        if !self.enabled() {
            return;
        }
        let w = self.tasks[t.idx()];
        self.begin(ts, cpu, Some(t), b"...1.");
        self.lit(b"tracing_mark_write: E|");
        self.slot(&w.tgid);
        self.end();
    }

    /// Flush and report the first write error, if any. Tracing stops after an error.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.pos > 0 {
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
        if self.out.is_some() && self.pos > 0 {
            self.drain();
            if let Some(out) = self.out.as_mut() {
                let _ = out.flush();
            }
        }
    }
}

/// Preformat a task's text; `tgid` None prints `(-------)` (the idle task).
fn task_text(comm: &[u8], pid: u32, tgid: Option<u32>) -> TaskText {
    let mut v: Vec<u8> = vec![b' '; 16usize.saturating_sub(comm.len())];
    v.extend_from_slice(comm);
    v.push(b'-');
    let p0 = v.len();
    put_u64(&mut v, pid as u64);
    let width = v.len() - p0;
    v.extend(std::iter::repeat_n(b' ', 7usize.saturating_sub(width)));
    match tgid {
        Some(g) => {
            v.extend_from_slice(b" (");
            put_u64_pad(&mut v, g as u64, 7, b' ');
            v.extend_from_slice(b") ");
        }
        None => v.extend_from_slice(b" (-------) "),
    }
    let mut pid_s = Vec::new();
    put_u64(&mut pid_s, pid as u64);
    let mut tgid_s = Vec::new();
    put_u64(&mut tgid_s, tgid.unwrap_or(0) as u64);
    TaskText {
        prefix: Slot::new(&v),
        comm: Slot::new(comm),
        pid: Slot::new(&pid_s),
        tgid: Slot::new(&tgid_s),
        follower: tgid.is_some_and(|g| g != pid),
        tgid_num: tgid.unwrap_or(0),
    }
}

/// Format `v` at the start of `out` (which has room for 20 digits); returns the length.
#[inline(always)]
fn fmt_into(out: &mut [u8], mut v: u64) -> usize {
    let mut n = 1;
    while n < 20 && v >= POW10[n] {
        n += 1;
    }
    let out = &mut out[..n];
    let mut i = n;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGITS2[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        out[i - 2..i].copy_from_slice(&DIGITS2[d..d + 2]);
    } else {
        out[i - 1] = b'0' + v as u8;
    }
    n
}

const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

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
#[cfg(test)]
fn put_i64(buf: &mut Vec<u8>, v: i64) {
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
        let mut out = [0u8; 24];
        for v in [0u64, 9, 10, 99, 100, 101, 999_999, 1_000_000, u64::MAX] {
            let n = fmt_into(&mut out, v);
            assert_eq!(&out[..n], v.to_string().as_bytes());
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

/// Which block request tracepoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RqTrace {
    /// `block_rq_insert`: into the I/O scheduler.
    Insert,
    /// `block_rq_issue`: to the device.
    Issue,
    /// `block_rq_complete`.
    Complete,
}

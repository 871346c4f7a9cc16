//! The streaming ftrace-text writer.
//!
//! Field layouts follow the kernel's tracepoint format strings
//! (include/trace/events/sched.h, v6.6): sched_switch, sched_wakeup / sched_wakeup_new
//! (`comm= pid= prio= target_cpu=`), sched_migrate_task (`comm= pid= prio= orig_cpu=
//! dest_cpu=`), sched_process_fork (`comm= pid= child_comm= child_pid=`),
//! sched_process_exit (`comm= pid= prio=`); counters are `tracing_mark_write:
//! C|<tgid>|<name>|<value>` as Perfetto's systrace parser expects.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::types::{CpuId, TaskId, Time};

struct Names {
    comm: String,
    tgid: u32,
}

/// The trace writer. A disabled tracer costs one branch per call site.
pub struct Tracer {
    out: Option<Box<dyn Write>>,
    names: Vec<Names>,
    error: Option<io::Error>,
}

/// The ftrace `prev_state` letter of a task leaving the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable (preempted or yielded): `R` (ftrace prints `R+` for preempted; `R` here).
    Runnable,
    /// Blocked interruptibly: `S`.
    Sleeping,
    /// Blocked on a lock: `D` is the kernel's for uninterruptible; futex waits show `S`.
    Uninterruptible,
    /// Exited: `X` (EXIT_DEAD) — the kernel shows `Z` for zombies before reaping.
    Dead,
}

impl PrevState {
    fn letter(self) -> &'static str {
        match self {
            PrevState::Runnable => "R",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Dead => "X",
        }
    }
}

const IDLE_PRIO: i32 = 120;

impl Tracer {
    /// A tracer that writes nothing.
    pub fn disabled() -> Tracer {
        Tracer {
            out: None,
            names: Vec::new(),
            error: None,
        }
    }

    /// A tracer streaming to `path` (created or truncated).
    pub fn to_file(path: &Path) -> io::Result<Tracer> {
        let f = File::create(path)?;
        Self::to_writer(Box::new(BufWriter::with_capacity(1 << 20, f)))
    }

    /// A tracer streaming to any writer.
    pub fn to_writer(mut w: Box<dyn Write>) -> io::Result<Tracer> {
        w.write_all(b"# tracer: nop\n#\n")?;
        w.write_all(b"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n")?;
        w.write_all(b"#              | |         |   |||||     |         |\n")?;
        Ok(Tracer {
            out: Some(w),
            names: Vec::new(),
            error: None,
        })
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }

    /// Record a task's name and thread-group id (must be called for every task id in
    /// order, when the task is created).
    pub fn register_task(&mut self, t: TaskId, comm: &str, tgid: u32) {
        if !self.enabled() {
            return;
        }
        debug_assert_eq!(t.idx(), self.names.len());
        // TASK_COMM_LEN is 16 including the NUL: the kernel truncates names to 15 bytes.
        let mut comm: String = comm.chars().filter(|c| !c.is_whitespace()).collect();
        while comm.len() > 15 {
            comm.pop();
        }
        self.names.push(Names { comm, tgid });
    }

    fn comm(&self, t: Option<TaskId>, cpu: CpuId) -> (String, u32) {
        match t {
            Some(t) => (self.names[t.idx()].comm.clone(), t.pid()),
            None => (format!("swapper/{}", cpu.0), 0),
        }
    }

    fn line(&mut self, ts: Time, cpu: CpuId, on: Option<TaskId>, body: std::fmt::Arguments<'_>) {
        let (comm, pid) = match on {
            Some(t) => (self.names[t.idx()].comm.as_str(), t.pid()),
            None => ("<idle>", 0),
        };
        let secs = ts / 1_000_000_000;
        let frac = ts % 1_000_000_000;
        let Some(out) = self.out.as_mut() else { return };
        let r = writeln!(
            out,
            "{:>16}-{:<7} [{:03}] d..2. {:>5}.{:09}: {}",
            comm, pid, cpu.0, secs, frac, body
        );
        if let Err(e) = r {
            if self.error.is_none() {
                self.error = Some(e);
            }
        }
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
        let (pc, pp) = self.comm(prev, cpu);
        let (nc, np) = self.comm(next, cpu);
        let pprio = if prev.is_some() { prev_prio } else { IDLE_PRIO };
        let nprio = if next.is_some() { next_prio } else { IDLE_PRIO };
        let st = if prev.is_some() {
            prev_state.letter()
        } else {
            "R"
        };
        self.line(
            ts,
            cpu,
            prev,
            format_args!(
                "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={st} ==> next_comm={nc} next_pid={np} next_prio={nprio}"
            ),
        );
    }

    /// sched_wakeup (or sched_wakeup_new when `new`) of `t`, emitted on the waker's CPU.
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
        let (c, p) = self.comm(Some(t), cpu);
        let ev = if new {
            "sched_wakeup_new"
        } else {
            "sched_wakeup"
        };
        self.line(
            ts,
            cpu,
            on,
            format_args!(
                "{ev}: comm={c} pid={p} prio={prio} target_cpu={:03}",
                target.0
            ),
        );
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
        let (c, p) = self.comm(Some(t), cpu);
        self.line(
            ts,
            cpu,
            on,
            format_args!(
                "sched_migrate_task: comm={c} pid={p} prio={prio} orig_cpu={} dest_cpu={}",
                from.0, to.0
            ),
        );
    }

    /// sched_process_fork of `child` by `parent`.
    pub fn fork(&mut self, ts: Time, cpu: CpuId, parent: TaskId, child: TaskId) {
        let (pc, pp) = self.comm(Some(parent), cpu);
        let (cc, cp) = self.comm(Some(child), cpu);
        self.line(
            ts,
            cpu,
            Some(parent),
            format_args!("sched_process_fork: comm={pc} pid={pp} child_comm={cc} child_pid={cp}"),
        );
    }

    /// sched_process_exit of `t`.
    pub fn exit(&mut self, ts: Time, cpu: CpuId, t: TaskId, prio: i32) {
        let (c, p) = self.comm(Some(t), cpu);
        self.line(
            ts,
            cpu,
            Some(t),
            format_args!("sched_process_exit: comm={c} pid={p} prio={prio}"),
        );
    }

    /// A counter track for `t` (Perfetto: a process counter named `name`).
    pub fn counter(
        &mut self,
        ts: Time,
        cpu: CpuId,
        on: Option<TaskId>,
        t: TaskId,
        name: &str,
        value: i64,
    ) {
        let tgid = self.names[t.idx()].tgid;
        let _ = tgid;
        self.line(
            ts,
            cpu,
            on,
            format_args!("tracing_mark_write: C|{}|{name}|{value}", t.pid()),
        );
    }

    /// Flush and report the first write error, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(())
    }
}

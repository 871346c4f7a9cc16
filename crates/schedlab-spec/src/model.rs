//! The typed, validated workload model.
//!
//! A [`Spec`] is what the parser (`parse.rs`) produces from rt-app JSON plus schedlab's
//! namespaced extensions, after every check has passed: names are resolved to indices,
//! times are in integer nanoseconds, and every value is in range. The simulator compiles a
//! `Spec` into its own program representation; it never sees JSON.
//!
//! Units: rt-app writes times in microseconds; the model stores nanoseconds (`*_ns`).

/// A scheduling policy as rt-app names it (`"policy": "SCHED_FIFO"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// SCHED_OTHER / SCHED_NORMAL: `priority` is the nice value (-20..=19).
    Other,
    /// SCHED_BATCH: like OTHER, never wake-up-preempts.
    Batch,
    /// SCHED_IDLE: the lowest weight (3), always preempted by OTHER.
    Idle,
    /// SCHED_FIFO: `priority` is the user RT priority (1..=99, higher is more important).
    Fifo,
    /// SCHED_RR: FIFO with a round-robin quantum.
    Rr,
    /// SCHED_DEADLINE: uses [`DlParams`].
    Deadline,
}

impl Policy {
    /// The rt-app / sched(7) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// True for the real-time policies FIFO and RR.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// True for the policies whose `priority` is a nice value.
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }
}

/// SCHED_DEADLINE parameters (rt-app `dl-runtime`, `dl-period`, `dl-deadline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// The scheduling attributes a task (or one of its phases) sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedAttr {
    pub policy: Policy,
    /// Nice for fair policies, user RT priority (1..=99) for FIFO/RR, 0 for DEADLINE.
    pub priority: i32,
    pub dl: Option<DlParams>,
}

/// How a periodic timer catches up when it is late (rt-app `"mode"`).
///
/// rt-app's default is `Relative` (`init_timer_resource()` in `src/rt-app_parse_config.c`
/// sets `relative = 1`; only a `"mode"` starting with `"absolute"` clears it). The mode is a
/// property of the timer resource: if any use of a timer says `"absolute"`, every use of it
/// is absolute, and the parser writes that resolved mode into every [`Event::Timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerMode {
    /// next = previous next + period, even if that is already in the past.
    Absolute,
    /// if late, next = now + period (rt-app's default).
    Relative,
}

/// Index of a named resource in [`Spec::resources`]'s vector of that kind.
pub type ResId = u32;

/// One step of a task's program, in the order the spec gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `run`: consume this much CPU time (rt-app calibrated work).
    Run {
        ns: u64,
    },
    /// `runtime`: run until this much wall time has passed since the event started.
    Runtime {
        ns: u64,
    },
    /// `sleep`: block for this long.
    Sleep {
        ns: u64,
    },
    /// `timer`: block until the next expiry of a periodic timer (its first expiry is one
    /// period after the first use). Each use is a release for metrics.
    /// Note: rt-app itself anchors a timer at the instance's start time (after the start
    /// barrier and `delay`), not at its first use (`run_event()`, `t_first`, in
    /// `src/rt-app.c`); the two agree when the timer is the first blocking event.
    Timer {
        timer: ResId,
        period_ns: u64,
        mode: TimerMode,
    },
    Lock {
        mutex: ResId,
    },
    Unlock {
        mutex: ResId,
    },
    /// `wait`: release `mutex`, wait on `cond`, re-acquire `mutex`.
    Wait {
        cond: ResId,
        mutex: ResId,
    },
    /// `signal`: wake one waiter of `cond`.
    Signal {
        cond: ResId,
    },
    /// `broad`: wake every waiter of `cond`.
    Broad {
        cond: ResId,
    },
    /// `sync`: signal `cond` and wait on it, atomically with respect to `mutex`.
    Sync {
        cond: ResId,
        mutex: ResId,
    },
    /// `barrier`: block until every task that uses this barrier has reached it.
    Barrier {
        barrier: ResId,
    },
    /// `yield`: sched_yield().
    Yield,
    /// `fork`: create a new instance of the task template with this index in `Spec::tasks`.
    Fork {
        task: u32,
    },
    /// `suspend`: block until another task resumes this one by name.
    /// The parser never emits this: rt-app's `suspend X` is lock(X), wait(cond X, mutex X),
    /// unlock(X), and the parser emits exactly that sequence (so lost wake-ups behave as in
    /// rt-app, and X need not be a task name). Kept for programs built in code.
    Suspend,
    /// `resume`: wake the suspended task(s) with this task-template index.
    /// The parser never emits this either: rt-app's `resume X` becomes lock(X), broad(X),
    /// unlock(X).
    Resume {
        task: u32,
    },
    /// schedlab extension `schedlab:write`: write `bytes` into a pipe or socket end.
    Write {
        chan: ResId,
        bytes: u64,
    },
    /// schedlab extension `schedlab:read`: read exactly `bytes` from a pipe or socket end,
    /// blocking until all of them have arrived (the loop hackbench runs).
    Read {
        chan: ResId,
        bytes: u64,
    },
    /// schedlab extension `schedlab:mark`: a measurement point named by the generator
    /// (e.g. hackbench's kick-off); recorded in the result, no scheduling effect.
    Mark {
        label: ResId,
    },
    /// schedlab extension `schedlab:exit`: exit now (the rest of the program is skipped).
    Exit,
}

/// One phase: a list of events repeated `loop_count` times (-1 = forever).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub name: String,
    pub loop_count: i64,
    pub events: Vec<Event>,
    /// Attributes the phase switches to when it starts (rt-app allows policy/priority/cpus per phase).
    pub attr: Option<SchedAttr>,
    pub cpus: Option<Vec<u32>>,
}

/// A task template (rt-app "thread"); `instances` copies start at time `delay_ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    pub name: String,
    /// Copies created at start-up; 0 means the task only exists when forked.
    pub instances: u32,
    /// How many times the list of phases repeats (-1 = forever).
    pub loop_count: i64,
    pub delay_ns: u64,
    pub attr: SchedAttr,
    /// Allowed CPUs; `None` = all.
    pub cpus: Option<Vec<u32>>,
    pub phases: Vec<Phase>,
    /// schedlab extension: the process this thread belongs to (tasks with the same
    /// `process` share a tgid in traces). `None` = its own process.
    pub process: Option<String>,
}

/// A unidirectional byte channel: one direction of a pipe or of a socket pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    /// Buffer capacity in bytes (a full buffer blocks writers).
    pub capacity: u64,
    /// CPU time charged to the caller per read or write call.
    pub op_cost_ns: u64,
    /// CPU time charged per byte copied, in picoseconds.
    pub byte_cost_ps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    Pipe,
    Socket,
}

/// Every named resource, each kind indexed by [`ResId`] in first-use order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub mutexes: Vec<String>,
    pub conds: Vec<String>,
    /// Barrier name and the number of task instances that must reach it.
    pub barriers: Vec<(String, u32)>,
    pub timers: Vec<String>,
    /// Parallel to `timers`: `true` for an rt-app "unique" timer (its `ref` starts with
    /// `unique`), of which every task instance, forked copies included, has its own copy;
    /// `false` for an ordinary timer, which is ONE timer shared by every task instance that
    /// names it (rt-app keeps it in the global resource table, so two instances using it
    /// advance the same expiry). Unique timers of different task templates are distinct
    /// resources, named `"<task>/<ref>"`.
    pub timer_unique: Vec<bool>,
    /// Channels in declaration order (`schedlab.pipes`, then `schedlab.sockets`, each in
    /// file order); every channel has at least one writer and one reader.
    pub channels: Vec<Channel>,
    pub marks: Vec<String>,
}

/// The simulated machine (schedlab extension `"schedlab": {"machine": ...}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub cpus: u32,
    pub hz: u32,
    pub context_switch_ns: u64,
    /// Cost model: CPU time (ps) charged per unit of scheduler work the policy counts
    /// (`Ctx::count_work`), paid by the CPU that did the work at its next context switch.
    pub sched_work_ps: u64,
    /// CPU time a fork costs the parent.
    pub fork_ns: u64,
    /// CPU time a wake-up costs the waker (try_to_wake_up).
    pub wakeup_ns: u64,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            cpus: 1,
            hz: 250,
            context_switch_ns: 0,
            sched_work_ps: 0,
            fork_ns: 0,
            wakeup_ns: 0,
        }
    }
}

/// The scheduler the spec asks for (overridable on the command line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerChoice {
    pub name: Option<String>,
    /// Tunables as given (`name` → textual value); the policy parses them.
    pub params: Vec<(String, String)>,
}

/// What the workload reports as its own headline metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Headline {
    /// None: the summary has only makespan.
    None,
    /// hackbench: time from the mark `start` (all tasks ready) to the last exit.
    ElapsedSinceMark { mark: ResId, name: String },
    /// The wake-up latency of the tasks whose names start with this prefix.
    WakeupLatency { task_prefix: String, name: String },
    /// cyclictest-like: latency of timer releases of these tasks.
    TimerLatency { task_prefix: String, name: String },
}

/// A whole validated workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// rt-app `global.duration` (None or -1 = until every task has exited).
    pub duration_ns: Option<u64>,
    pub tasks: Vec<TaskSpec>,
    pub resources: Resources,
    pub machine: Machine,
    pub scheduler: SchedulerChoice,
    pub headline: Headline,
    /// PRNG seed given in the spec (`"schedlab": {"seed": N}`), if any.
    pub seed: Option<u64>,
}

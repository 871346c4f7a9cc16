//! The kernel's own execution, as a machine setting (`"schedlab": {"machine": {"kernel": …}}`):
//! the preemption model, the tick and its cost, the softirq work it raises, the resolution of
//! sleep timers, and the shape of the kernel spans a task's system calls run as.
//!
//! These are descriptions only; the simulator gives them their meaning
//! (`schedlab-sim/src/kernel.rs`). Every default reproduces a kernel whose own work costs
//! nothing and never delays a reschedule: full preemption, no tick cost, exact timers.

/// Linux's preemption models (`CONFIG_PREEMPT_NONE`, `CONFIG_PREEMPT_VOLUNTARY`,
/// `CONFIG_PREEMPT`, `CONFIG_PREEMPT_RT`): where a reschedule asked for while a task runs
/// in the kernel takes effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Preempt {
    /// Only when the kernel span returns to user mode (or the task sleeps in it).
    None,
    /// Also at the span's explicit preemption points (`might_sleep` → `cond_resched`).
    Voluntary,
    /// Anywhere except inside the span's non-preemptible section (spinlocks held,
    /// interrupts off): at its `preempt_enable`.
    #[default]
    Full,
    /// As `Full`, but spinlocks sleep: only the raw-spinlock part of a section is
    /// non-preemptible.
    Rt,
}

impl Preempt {
    pub const ALL: [Preempt; 4] = [
        Preempt::None,
        Preempt::Voluntary,
        Preempt::Full,
        Preempt::Rt,
    ];

    /// The spelling in specs and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Preempt::None => "none",
            Preempt::Voluntary => "voluntary",
            Preempt::Full => "full",
            Preempt::Rt => "rt",
        }
    }

    /// The kernel configuration option it stands for.
    pub fn config_name(self) -> &'static str {
        match self {
            Preempt::None => "CONFIG_PREEMPT_NONE",
            Preempt::Voluntary => "CONFIG_PREEMPT_VOLUNTARY",
            Preempt::Full => "CONFIG_PREEMPT",
            Preempt::Rt => "CONFIG_PREEMPT_RT",
        }
    }

    pub fn parse(s: &str) -> Option<Preempt> {
        Preempt::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// How sleep timers (rt-app's `sleep` and `timer`) expire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimerRes {
    /// High-resolution timers: at the requested time, plus the task's timer slack.
    #[default]
    Hrtimer,
    /// Timers run from the tick (a kernel without high-resolution mode, such as 2.6.17):
    /// a sleep ends on a tick boundary, rounded as that kernel rounds.
    Jiffy,
}

impl TimerRes {
    pub const ALL: [TimerRes; 2] = [TimerRes::Hrtimer, TimerRes::Jiffy];

    pub fn as_str(self) -> &'static str {
        match self {
            TimerRes::Hrtimer => "hrtimer",
            TimerRes::Jiffy => "jiffy",
        }
    }

    pub fn parse(s: &str) -> Option<TimerRes> {
        TimerRes::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Which CPUs take the periodic tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TickMode {
    /// Every CPU, busy or idle, every jiffy (kernels before `CONFIG_NO_HZ`).
    Periodic,
    /// Busy CPUs only (`CONFIG_NO_HZ_IDLE`).
    #[default]
    NohzIdle,
    /// Busy CPUs only, and not those whose scheduler says the tick would change nothing
    /// (`CONFIG_NO_HZ_FULL`, `sched_can_stop_tick`).
    NohzFull,
}

impl TickMode {
    pub const ALL: [TickMode; 3] = [TickMode::Periodic, TickMode::NohzIdle, TickMode::NohzFull];

    pub fn as_str(self) -> &'static str {
        match self {
            TickMode::Periodic => "periodic",
            TickMode::NohzIdle => "nohz_idle",
            TickMode::NohzFull => "nohz_full",
        }
    }

    pub fn parse(s: &str) -> Option<TickMode> {
        TickMode::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The kinds of kernel span a workload's operations run as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// A read or write on a pipe (`pipe_read` / `pipe_write`).
    Pipe,
    /// A read or write on an AF_UNIX stream socket (`unix_stream_recvmsg` / `…sendmsg`).
    Socket,
    /// `fork` (`copy_process` and `wake_up_new_task`), charged to the parent.
    Fork,
    /// A futex wake on behalf of `signal`, `broad` or `resume` (`futex_wake`,
    /// `futex_requeue`), charged to the waker.
    Wake,
    /// Setting up a sleep (`nanosleep` / `clock_nanosleep`: rt-app's `sleep` and `timer`).
    Sleep,
    /// `exit` (`do_exit`), at the end of a task's program or at an `exit` event.
    Exit,
}

impl SpanKind {
    pub const ALL: [SpanKind; 6] = [
        SpanKind::Pipe,
        SpanKind::Socket,
        SpanKind::Fork,
        SpanKind::Wake,
        SpanKind::Sleep,
        SpanKind::Exit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SpanKind::Pipe => "pipe",
            SpanKind::Socket => "socket",
            SpanKind::Fork => "fork",
            SpanKind::Wake => "wake",
            SpanKind::Sleep => "sleep",
            SpanKind::Exit => "exit",
        }
    }

    pub fn parse(s: &str) -> Option<SpanKind> {
        SpanKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Where in a kernel span a reschedule can take effect. The span's cost itself is the
/// operation's (`machine.fork_ns`, `wakeup_ns`, `sleep_ns`, `exit_ns`, a channel's
/// `op_cost_ns` + `byte_cost_ps`).
///
/// The non-preemptible section is at the end of the span: the wake-ups, list updates and
/// unlocks a system call ends with are where it holds spinlocks with interrupts off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SpanShape {
    /// Length of the non-preemptible section (spinlocks held or interrupts off) under
    /// `full`; capped by the span's length.
    pub nonpreempt_ns: u64,
    /// The part of that section that stays non-preemptible under `rt` (raw spinlocks);
    /// at most `nonpreempt_ns`.
    pub raw_ns: u64,
    /// Under `voluntary`, a preemption point (`might_sleep`) every this much of the
    /// span's work (0: none); e.g. one per page a pipe copies (each user copy is one).
    pub point_ns: u64,
    /// Under `none` and `voluntary`, an explicit `cond_resched()` every this much of the
    /// span's work (0: none); e.g. `fork` copying page tables.
    pub cond_resched_ns: u64,
}

/// Linux's `MAX_SOFTIRQ_TIME` (kernel/softirq.c, since 3.8): how long one `__do_softirq`
/// on interrupt exit may run before it leaves the rest to ksoftirqd.
pub const MAX_SOFTIRQ_TIME_NS: u64 = 2_000_000;

/// The kernel's own execution (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    pub preempt: Preempt,
    pub timers: TimerRes,
    /// Timer slack of SCHED_OTHER/BATCH/IDLE tasks' sleeps under `hrtimer` (a task's
    /// `timer_slack_ns`; real-time tasks get none).
    pub timer_slack_ns: u64,
    pub tick: TickMode,
    /// CPU time of one tick interrupt (with its softirq), charged to the task it interrupts.
    pub tick_ns: u64,
    /// CPU time of one timer expiry (the hrtimer interrupt, or the timer softirq after a
    /// tick): a sleep timer's, charged to the task running on the sleeper's CPU (the sleeper
    /// wakes when it is done), and a policy timer's, charged to the task running on the CPU
    /// that armed it.
    pub timer_irq_ns: u64,
    /// CPU time of the softirq work one tick raises (the timer wheel's `TIMER_SOFTIRQ`,
    /// `RCU_SOFTIRQ`, the load balancer's `SCHED_SOFTIRQ`): run on interrupt exit, in the
    /// interrupted context, or by the CPU's softirq thread under `rt` and beyond the limit.
    pub softirq_ns: u64,
    /// How much softirq work one interrupt exit runs before it wakes ksoftirqd for the rest
    /// (`MAX_SOFTIRQ_TIME`); 0: no time limit (kernels before 3.8 had only a restart limit,
    /// which one tick's work never reaches).
    pub softirq_limit_ns: u64,
    /// Under `rt`, the tick's softirq work runs in the per-CPU `ktimers` thread
    /// (SCHED_FIFO 1, PREEMPT_RT since Linux 6.13) instead of ksoftirqd (SCHED_OTHER).
    pub ktimers: bool,
    /// Nice of the ksoftirqd threads (SCHED_OTHER): 0 in current kernels, 19 in 2.6.17.
    pub ksoftirqd_nice: i32,
    /// Shape of each kind of span, indexed by [`SpanKind::index`].
    pub spans: [SpanShape; 6],
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel {
            preempt: Preempt::default(),
            timers: TimerRes::default(),
            timer_slack_ns: 0,
            tick: TickMode::default(),
            tick_ns: 0,
            timer_irq_ns: 0,
            softirq_ns: 0,
            softirq_limit_ns: MAX_SOFTIRQ_TIME_NS,
            ktimers: false,
            ksoftirqd_nice: 0,
            spans: [SpanShape::default(); 6],
        }
    }
}

impl Kernel {
    #[inline]
    pub fn span(&self, kind: SpanKind) -> &SpanShape {
        &self.spans[kind.index()]
    }
}

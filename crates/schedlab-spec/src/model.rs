//! The typed, validated workload model.
//!
//! A [`Spec`] is what the parser (`parse.rs`) produces from rt-app JSON plus schedlab's
//! namespaced extensions, after every check has passed: names are resolved to indices,
//! times are in integer nanoseconds, and every value is in range. The simulator compiles a
//! `Spec` into its own program representation; it never sees JSON.
//!
//! Units: rt-app writes times in microseconds; the model stores nanoseconds (`*_ns`),
//! except cgroup settings, which keep the kernel files' units (`*_us`, percentages in
//! hundredths).
//!
//! Besides rt-app's tasks, phases and events, the model carries what an engine needs to
//! simulate more of a Linux machine: the topology ([`Machine::topology`]), cgroups
//! ([`Spec::cgroups`], with [`TaskSpec::group`] and [`Phase::group`]), utilization clamps
//! and custom slices ([`SchedAttr`]), and block devices ([`Resources::devices`] with
//! [`Event::Io`]).

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

/// Shortest custom slice the kernel keeps: a requested slice is clamped to
/// `CUSTOM_SLICE_MIN_NS..=CUSTOM_SLICE_MAX_NS` (`__setscheduler_params()` in
/// kernel/sched/syscalls.c, Linux 6.12, commit 857b158dc5e8 "sched/eevdf: Use
/// sched_attr::sched_runtime to set request/slice suggestion"; the bounds are 1/10 of a
/// HZ=1000 tick and 10 HZ=100 ticks).
pub const CUSTOM_SLICE_MIN_NS: u64 = 100_000;
/// Longest custom slice the kernel keeps; see [`CUSTOM_SLICE_MIN_NS`].
pub const CUSTOM_SLICE_MAX_NS: u64 = 100_000_000;

/// The slice the kernel uses for a requested custom slice (the clamp of
/// `__setscheduler_params()`; see [`CUSTOM_SLICE_MIN_NS`]).
pub fn custom_slice_ns(requested_ns: u64) -> u64 {
    requested_ns.clamp(CUSTOM_SLICE_MIN_NS, CUSTOM_SLICE_MAX_NS)
}

/// Utilization clamps of a task (rt-app `util_min` / `util_max`, sched_setattr's
/// `sched_util_min` / `sched_util_max`), on the kernel's capacity scale 0..=1024
/// (`SCHED_CAPACITY_SCALE`). `None` is the kernel's default: no minimum (0; 1024 for RT
/// tasks, `sysctl_sched_uclamp_util_min_rt_default`) and no maximum (1024).
///
/// On the machine schedlab simulates (identical CPUs at one fixed frequency) a clamp changes
/// no scheduling decision: Linux uses it to pick CPU frequencies (schedutil) and, on
/// asymmetric systems, CPUs that fit the task. It is kept so that a model of those can
/// read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uclamp {
    pub min: Option<u32>,
    pub max: Option<u32>,
}

/// The scheduling attributes a task (or one of its phases) sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedAttr {
    pub policy: Policy,
    /// Nice for fair policies, user RT priority (1..=99) for FIFO/RR, 0 for DEADLINE.
    pub priority: i32,
    pub dl: Option<DlParams>,
    /// Fair policies only: the custom slice requested through `sched_attr.sched_runtime`
    /// (rt-app's `dl-runtime` on a SCHED_OTHER/BATCH/IDLE task), as requested. Linux 6.12+
    /// (EEVDF) uses [`custom_slice_ns`] of it as the task's slice instead of the base slice
    /// (`sysctl_sched_base_slice`); older kernels ignore it. `None` = the base slice.
    pub slice_ns: Option<u64>,
    pub uclamp: Uclamp,
}

impl SchedAttr {
    /// Attributes with no custom slice and no clamps.
    pub fn new(policy: Policy, priority: i32, dl: Option<DlParams>) -> SchedAttr {
        SchedAttr {
            policy,
            priority,
            dl,
            slice_ns: None,
            uclamp: Uclamp::default(),
        }
    }
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

/// `run: -1`: run for ever. rt-app keeps a run's duration in an `int` and hands it to
/// `loadwait(unsigned long)` (src/rt-app.c), so -1 becomes the largest unsigned value: a
/// burst that never ends in practice. Engines must treat it as unbounded (saturating
/// arithmetic).
pub const RUN_FOREVER: u64 = u64::MAX;

/// Direction of a block I/O request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
}

/// Where a block I/O request starts on its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOffset {
    /// Right after the end of the previous request of the same task on the same device
    /// (0 for the first one).
    Sequential,
    /// A uniformly random sector-aligned offset that keeps the request on the device,
    /// drawn from the run's seeded PRNG.
    Random,
    /// This byte offset (a multiple of [`SECTOR_BYTES`]).
    At(u64),
}

/// An I/O priority class (`IOPRIO_CLASS_*`, include/uapi/linux/ioprio.h): what `ionice -c`
/// sets and what CFQ, BFQ and mq-deadline order requests by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoPrioClass {
    /// `IOPRIO_CLASS_RT`: served before every best-effort request.
    Rt,
    /// `IOPRIO_CLASS_BE`: the default.
    Be,
    /// `IOPRIO_CLASS_IDLE`: served only when nothing else wants the disk.
    Idle,
}

impl IoPrioClass {
    pub const ALL: [IoPrioClass; 3] = [IoPrioClass::Rt, IoPrioClass::Be, IoPrioClass::Idle];

    /// The name in a spec (`"rt"`, `"be"`, `"idle"`: `ionice`'s class names, shortened as
    /// the kernel's `IOPRIO_CLASS_*` suffixes are).
    pub fn as_str(self) -> &'static str {
        match self {
            IoPrioClass::Rt => "rt",
            IoPrioClass::Be => "be",
            IoPrioClass::Idle => "idle",
        }
    }

    pub fn parse(s: &str) -> Option<IoPrioClass> {
        IoPrioClass::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Levels within the RT and BE classes: 0 (highest) ..= 7 (`IOPRIO_NR_LEVELS` = 8).
pub const IOPRIO_LEVELS: u8 = 8;

/// A task's I/O priority: class and level (`IOPRIO_PRIO_VALUE(class, data)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IoPrio {
    pub class: IoPrioClass,
    /// 0..[`IOPRIO_LEVELS`]; meaningless (kept 0) in the idle class.
    pub level: u8,
}

impl IoPrio {
    /// The priority of a task that never called `ioprio_set`, as the kernel derives it
    /// from its CPU attributes (include/linux/ioprio.h, Linux 6.1: `task_nice_ioclass` —
    /// idle for SCHED_IDLE, RT for FIFO, RR and DEADLINE (`task_is_realtime`; 3.12, which
    /// predates SCHED_DEADLINE, tested FIFO and RR), else best effort; `task_nice_ioprio` —
    /// (nice + 20) / 5), from its policy and nice when it submits.
    pub fn derived(policy: Policy, nice: i32) -> IoPrio {
        match policy {
            Policy::Idle => IoPrio {
                class: IoPrioClass::Idle,
                level: 0,
            },
            Policy::Fifo | Policy::Rr | Policy::Deadline => IoPrio {
                class: IoPrioClass::Rt,
                level: nice_ioprio(nice),
            },
            Policy::Other | Policy::Batch => IoPrio {
                class: IoPrioClass::Be,
                level: nice_ioprio(nice),
            },
        }
    }
}

/// `task_nice_ioprio`: (nice + 20) / 5, so nice -20..19 maps to levels 0..7.
fn nice_ioprio(nice: i32) -> u8 {
    ((nice.clamp(-20, 19) + 20) / 5) as u8
}

/// The I/O schedulers (elevators) a device may name, as Linux names them: blk-mq's
/// (`none`, `mq-deadline`, `kyber`, `bfq`), the legacy block layer's (`noop`, `deadline`,
/// `cfq`, Linux 3.x) and seed 004's `deadline-lowprio`, built on 3.12's `deadline`. The
/// simulator builds each (`schedlab_sim::io::construct`); a test proves every name runs.
pub const IO_SCHEDULERS: &[&str] = &[
    "none",
    "noop",
    "deadline",
    "deadline-lowprio",
    "mq-deadline",
    "cfq",
    "kyber",
    "bfq",
];

/// The sector size of block I/O requests: offsets and sizes are multiples of it (null_blk's
/// default `bs=512`).
pub const SECTOR_BYTES: u64 = 512;

/// One step of a task's program, in the order the spec gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `run`: consume this much CPU time (rt-app calibrated work); [`RUN_FOREVER`] for
    /// `run: -1`.
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
    /// schedlab extension `schedlab:io`: submit one block I/O request of `bytes` bytes to
    /// device `dev` (an index into [`Resources::devices`]) and block until it completes.
    /// The parser emits this form for every `schedlab:io` that is one direct request to
    /// a device, and [`Event::IoBatch`] for the others.
    Io {
        dev: ResId,
        op: IoOp,
        bytes: u64,
        offset: IoOffset,
    },
    /// schedlab extension `schedlab:io` on a file, buffered, or with several requests.
    IoBatch(Box<IoSpec>),
    /// schedlab extension `schedlab:fsync`: write a file's dirty pages back and wait for
    /// them, then flush the device's cache (`fsync(2)`).
    Fsync {
        file: ResId,
    },
    /// schedlab extension `schedlab:unlink`: delete a file (its metadata updates go to the
    /// device; its cached pages are dropped).
    Unlink {
        file: ResId,
    },
    /// A writeback pass of device `dev`'s page cache. The parser never emits this: it is
    /// the program of the flusher thread an engine adds per device.
    Writeback {
        dev: ResId,
    },
}

/// Where a `schedlab:io` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoTarget {
    /// A device, by index into [`Resources::devices`].
    Dev(ResId),
    /// A file, by index into [`Resources::files`]; offsets are relative to its start.
    File(ResId),
}

/// A `schedlab:io` in full: `count` requests of `bytes` bytes, at most `depth` in flight
/// (libaio-like), each at `offset`; `direct` ones go to the device, the others through
/// the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoSpec {
    pub target: IoTarget,
    pub op: IoOp,
    pub bytes: u64,
    pub offset: IoOffset,
    pub direct: bool,
    pub count: u32,
    pub depth: u32,
}

impl IoSpec {
    /// The event for this I/O: the one-request form when it is one direct request to a
    /// device.
    pub fn into_event(self) -> Event {
        match self {
            IoSpec {
                target: IoTarget::Dev(dev),
                direct: true,
                count: 1,
                depth: 1,
                op,
                bytes,
                offset,
            } => Event::Io {
                dev,
                op,
                bytes,
                offset,
            },
            _ => Event::IoBatch(Box::new(self)),
        }
    }

    /// The one-request form of [`Event::Io`].
    pub fn single(dev: ResId, op: IoOp, bytes: u64, offset: IoOffset) -> IoSpec {
        IoSpec {
            target: IoTarget::Dev(dev),
            op,
            bytes,
            offset,
            direct: true,
            count: 1,
            depth: 1,
        }
    }
}

/// A file (`schedlab.files`): `bytes` bytes of device `dev` from byte `offset`, contiguous
/// (one extent), disjoint from every other file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpec {
    pub name: String,
    pub dev: ResId,
    pub offset: u64,
    pub bytes: u64,
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
    /// The cgroup the task moves to when the phase starts (rt-app `taskgroup` in a phase);
    /// `None` = stay where it is.
    pub group: Option<GroupId>,
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
    /// The cgroup the task starts in (rt-app `taskgroup`); [`ROOT_GROUP`] by default.
    pub group: GroupId,
    /// schedlab extension `schedlab:ioprio`: the task's I/O priority as `ioprio_set` (or
    /// `ionice`) gives it; `None` = derived from its CPU attributes ([`IoPrio::derived`]).
    pub ioprio: Option<IoPrio>,
}

/// A unidirectional byte channel: one direction of a pipe or of a socket pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    /// Buffer capacity in bytes (a full buffer blocks writers).
    pub capacity: u64,
    /// CPU time charged to the caller per read or write call (the minimum, when it varies).
    pub op_cost_ns: u64,
    /// How a call's cost spreads above `op_cost_ns` (`None`: it does not vary).
    pub op_spread: Option<crate::cost::Spread>,
    /// CPU time charged per byte copied, in picoseconds.
    pub byte_cost_ps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    Pipe,
    Socket,
}

impl ChannelKind {
    pub const ALL: [ChannelKind; 2] = [ChannelKind::Pipe, ChannelKind::Socket];

    /// The name of the kind in `machine.channel_costs` (`"pipe"`, `"socket"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Pipe => "pipe",
            ChannelKind::Socket => "socket",
        }
    }

    pub fn parse(s: &str) -> Option<ChannelKind> {
        ChannelKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Index into [`Machine::channel_costs`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What a read or write call on a channel costs its caller unless the channel says
/// otherwise: the machine's default for its kind (`machine.channel_costs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelCost {
    /// CPU time charged per call, ns (the minimum, when the cost varies).
    pub op_cost_ns: u64,
    /// How a call's cost spreads above `op_cost_ns` (`None`: it does not vary).
    pub op_spread: Option<crate::cost::Spread>,
    /// CPU time charged per byte copied, ps.
    pub byte_cost_ps: u64,
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
    /// Block devices (`schedlab.devices`), in declaration order; [`Event::Io`] names them
    /// by index.
    pub devices: Vec<BlockDevice>,
    /// Files (`schedlab.files`), in declaration order.
    pub files: Vec<FileSpec>,
    /// The page cache's memory and writeback settings (`schedlab.vm`).
    pub vm: Vm,
}

/// The memory the page cache may use and Linux's writeback sysctls (`vm.*`), Linux 6.1
/// defaults (mm/page-writeback.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vm {
    /// Memory for cached pages (all of it dirtyable).
    pub memory_bytes: u64,
    /// `vm.dirty_ratio`: % of memory dirty and under writeback that throttles writers.
    pub dirty_ratio: u32,
    /// `vm.dirty_background_ratio`: % of memory dirty that starts background writeback.
    pub dirty_background_ratio: u32,
    /// `vm.dirty_expire_centisecs`: age at which dirty data is written.
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: the flusher's period while dirty data remains.
    pub dirty_writeback_centisecs: u32,
    /// CPU time per byte a buffered read or write copies, ps (`None`: the machine's pipe
    /// copy cost, `machine.channel_costs.pipe.byte_cost_ps`).
    pub copy_byte_ps: Option<u64>,
}

/// [`Vm::memory_bytes`] by default: 4 GiB.
pub const DEFAULT_VM_MEMORY_BYTES: u64 = 4 << 30;

impl Default for Vm {
    fn default() -> Self {
        Vm {
            memory_bytes: DEFAULT_VM_MEMORY_BYTES,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            copy_byte_ps: None,
        }
    }
}

/// The most CPUs a simulated machine has.
pub const MAX_MACHINE_CPUS: u32 = 256;

/// Where [`Machine::cpus`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpusSource {
    /// Nothing sized the machine and no CPU is named: one CPU.
    Default,
    /// `schedlab.machine.cpus`, without a topology.
    Given,
    /// `schedlab.machine.topology` (and `cpus`, if given, agrees with it).
    Topology,
    /// Not sized, but the spec names CPUs (task or phase `cpus`, a cgroup's `cpuset.cpus`):
    /// the smallest machine that has them, i.e. the highest CPU named + 1.
    Inferred,
}

/// The machine's CPU topology: `packages` × `cores_per_package` × `threads_per_core`
/// CPUs, with each run of `cores_per_llc` consecutive cores of a package sharing one
/// last-level cache.
///
/// CPU numbering (schedlab's convention): cpu = (package · cores_per_package + core) ·
/// threads_per_core + thread, so the SMT siblings of a core are adjacent CPUs and a
/// package's CPUs are contiguous. (Linux numbers CPUs as the firmware lists them; on many
/// x86 machines siblings are `nr_cores` apart instead.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    pub packages: u32,
    pub cores_per_package: u32,
    pub threads_per_core: u32,
    /// Cores per LLC domain; divides `cores_per_package`.
    pub cores_per_llc: u32,
}

impl Topology {
    /// One package of `cpus` single-threaded cores sharing one LLC.
    pub fn flat(cpus: u32) -> Topology {
        Topology {
            packages: 1,
            cores_per_package: cpus,
            threads_per_core: 1,
            cores_per_llc: cpus,
        }
    }

    /// One package, one thread per core, one LLC: every CPU alike, whatever their number.
    pub fn is_flat(&self) -> bool {
        self.packages == 1
            && self.threads_per_core == 1
            && self.cores_per_llc == self.cores_per_package
    }

    /// Number of CPUs (hardware threads).
    pub fn nr_cpus(&self) -> u32 {
        self.packages * self.cores_per_package * self.threads_per_core
    }

    /// The package of `cpu`.
    pub fn package_of(&self, cpu: u32) -> u32 {
        cpu / (self.cores_per_package * self.threads_per_core)
    }

    /// The core of `cpu`, numbered across the machine (0..packages·cores_per_package).
    pub fn core_of(&self, cpu: u32) -> u32 {
        cpu / self.threads_per_core
    }

    /// The LLC domain of `cpu`, numbered across the machine.
    pub fn llc_of(&self, cpu: u32) -> u32 {
        self.core_of(cpu) / self.cores_per_llc
    }
}

/// `machine.smt_throughput` unless given, in thousandths: 1.3, Intel's figure for the two
/// threads of a Hyper-Threading core — up to 30 % more throughput on common server
/// benchmarks (D. T. Marr, F. Binns, D. L. Hill, G. Hinton, D. A. Koufaty, J. A. Miller,
/// M. Upton, "Hyper-Threading Technology Architecture and Microarchitecture", Intel
/// Technology Journal 6(1), 2002).
pub const DEFAULT_SMT_THROUGHPUT_MILLI: u32 = 1300;

/// The tick rates (`CONFIG_HZ`) a machine may have: x86's choices (100, 250, 300, 1000;
/// kernel/Kconfig.hz) and 128, the ARM OMAP kernels' rate with the 32 kHz timer
/// (arch/arm/plat-omap/Kconfig: `OMAP_32K_TIMER_HZ` defaults to 128, "a divisor of
/// 32768"; arch/arm/Kconfig makes it `HZ` under `OMAP_32K_TIMER`). Every rate divides a
/// second into a whole number of ns (1/128 s = 7 812 500 ns).
pub const HZ_CHOICES: [u32; 5] = [100, 128, 250, 300, 1000];

/// `HZ_CHOICES` as prose: "100, 128, 250, 300 or 1000".
pub const HZ_CHOICES_TEXT: &str = "100, 128, 250, 300 or 1000";

/// What one policy's scheduler work costs (`machine.sched_work_ps`, an entry of its
/// per-policy form): each unit its code counts (`Ctx::count_work`), and each scheduling
/// decision (`schedule()`) whatever it counts — the fixed part of a decision's code. Both
/// are paid by the deciding CPU at its next context switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedWork {
    pub unit_ps: u64,
    pub decision_ns: u64,
}

/// The simulated machine (schedlab extension `"schedlab": {"machine": ...}`).
///
/// `topology.nr_cpus() == cpus` for every machine the parser builds; code that builds one
/// by hand should start from [`Machine::flat`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub cpus: u32,
    pub hz: u32,
    pub context_switch_ns: u64,
    /// Cost model: CPU time (ps) charged per unit of scheduler work the policy counts
    /// (`Ctx::count_work`), paid by the CPU that did the work at its next context switch.
    /// With [`Self::sched_work_ps_by_policy`] set, the cost of a policy not listed there.
    pub sched_work_ps: u64,
    /// `sched_work_ps` per policy (`{"<policy>": ps, …}`: each policy's own code does a
    /// unit of work at its own cost, and may also cost a fixed amount per scheduling
    /// decision): (policy name, its cost, JSON path), in the spec's order. The names are
    /// the simulator's to check; [`Self::sched_work_for`] reads it.
    pub sched_work_ps_by_policy: Vec<(String, SchedWork, String)>,
    /// CPU time a fork costs the parent.
    pub fork_ns: u64,
    /// CPU time a wake-up costs the waker (try_to_wake_up).
    pub wakeup_ns: u64,
    /// CPU time setting up a sleep costs the sleeper (`nanosleep`, `clock_nanosleep`).
    pub sleep_ns: u64,
    /// CPU time `exit` costs the exiting task (`do_exit`).
    pub exit_ns: u64,
    /// The kernel's own execution: preemption model, tick, timers, span shapes.
    pub kernel: crate::kernel::Kernel,
    /// The costs above (`context_switch_ns` … `exit_ns`, `kernel.tick_ns`,
    /// `kernel.timer_irq_ns`) that vary: those fields then hold their minimum.
    pub spreads: crate::cost::Spreads,
    /// Per-call and per-byte costs of the pipes and sockets that do not give their own,
    /// indexed by [`ChannelKind::index`].
    pub channel_costs: [ChannelCost; 2],
    /// The named machine profile the spec started from (`machine.profile`), if any.
    pub profile: Option<String>,
    pub cpus_source: CpusSource,
    /// Always set: [`Topology::flat`] unless the spec gives one.
    pub topology: Topology,
    /// `machine.smt_throughput` in thousandths: the combined throughput of a core whose
    /// hardware threads are all busy, relative to one thread alone (1300 = 1.3; 1000 ×
    /// `topology.threads_per_core`: the threads do not share). Between 1000 and that on a
    /// machine with SMT; without SMT it changes nothing.
    pub smt_throughput_milli: u32,
}

impl Machine {
    /// The cost of the scheduler's work for a run under `policy`: its entry in the
    /// per-policy form, else `sched_work_ps` per unit and nothing per decision.
    pub fn sched_work_for(&self, policy: &str) -> SchedWork {
        self.sched_work_ps_by_policy
            .iter()
            .find(|(name, _, _)| name == policy)
            .map_or(
                SchedWork {
                    unit_ps: self.sched_work_ps,
                    decision_ns: 0,
                },
                |&(_, w, _)| w,
            )
    }

    /// The default machine with `cpus` flat CPUs.
    pub fn flat(cpus: u32) -> Machine {
        Machine {
            cpus,
            topology: Topology::flat(cpus),
            ..Machine::default()
        }
    }
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            cpus: 1,
            hz: 250,
            context_switch_ns: 0,
            sched_work_ps: 0,
            sched_work_ps_by_policy: Vec::new(),
            fork_ns: 0,
            wakeup_ns: 0,
            sleep_ns: 0,
            exit_ns: 0,
            kernel: crate::kernel::Kernel::default(),
            spreads: crate::cost::Spreads::default(),
            channel_costs: crate::parse::DEFAULT_CHANNEL_COSTS,
            profile: None,
            cpus_source: CpusSource::Default,
            topology: Topology::flat(1),
            smt_throughput_milli: DEFAULT_SMT_THROUGHPUT_MILLI,
        }
    }
}

/// Index of a cgroup in [`Spec::cgroups`].
pub type GroupId = u32;

/// The root cgroup `/`, always `Spec::cgroups[0]`.
pub const ROOT_GROUP: GroupId = 0;

/// `cpu.shares` of a group that does not set it (the kernel's `ROOT_TASK_GROUP_LOAD`,
/// NICE_0_LOAD scaled down: 1024).
pub const DEFAULT_SHARES: u64 = 1024;
/// `cpu.rt_period_us` of a group that does not set it (`sysctl_sched_rt_period`).
pub const DEFAULT_RT_PERIOD_US: u64 = 1_000_000;
/// `cpu.rt_runtime_us` of the root group when not set (`sysctl_sched_rt_runtime`); a child
/// group starts with 0 (`alloc_rt_sched_group()` in kernel/sched/rt.c).
pub const ROOT_RT_RUNTIME_US: i64 = 950_000;
/// `BW_SHIFT` (kernel/sched/sched.h): bandwidths (`to_ratio`) are fixed point with 20
/// fractional bits.
pub const BW_SHIFT: u32 = 20;
/// `BW_UNIT`: a bandwidth of 1.
pub const BW_UNIT: u64 = 1 << BW_SHIFT;

/// `to_ratio(period, runtime)` (kernel/sched/core.c): runtime / period with [`BW_SHIFT`]
/// fractional bits; 0 for a zero period. The RT and CFS limits of cgroups and the
/// deadline class's bandwidths are all compared in this unit.
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    (((runtime as u128) << BW_SHIFT) / period as u128).min(u64::MAX as u128) as u64
}

/// `cpu.cfs_period_us` of a group that does not set it (`default_bw_period_us()`,
/// kernel/sched/sched.h).
pub const DEFAULT_CFS_PERIOD_US: u64 = 100_000;

/// The cpu controller's settings of one cgroup, as cgroup v1 names them (cgroup v2's
/// `cpu.weight` and `cpu.max` are converted on input). `None` = not written: the kernel's
/// default ([`DEFAULT_SHARES`], [`DEFAULT_RT_PERIOD_US`], rt_runtime 0 for a child and
/// [`ROOT_RT_RUNTIME_US`] for the root, [`DEFAULT_CFS_PERIOD_US`], no quota, no burst, no
/// clamps).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuCgroup {
    pub shares: Option<u64>,
    pub rt_period_us: Option<u64>,
    /// -1 = unlimited (`RUNTIME_INF`).
    pub rt_runtime_us: Option<i64>,
    pub cfs_period_us: Option<u64>,
    /// -1 = unlimited (`RUNTIME_INF`).
    pub cfs_quota_us: Option<i64>,
    pub cfs_burst_us: Option<u64>,
    /// `cpu.uclamp.min` in hundredths of a percent (0..=10000), as the kernel keeps it
    /// (`uclamp_pct`); [`uclamp_util_of_pct`] converts it to the capacity scale.
    pub uclamp_min: Option<u32>,
    /// `cpu.uclamp.max` in hundredths of a percent (0..=10000; "max" = 10000).
    pub uclamp_max: Option<u32>,
}

/// A cgroup percentage in hundredths (0..=10000) on the capacity scale 0..=1024, rounded
/// to nearest as `capacity_from_percent()` in kernel/sched/core.c does.
pub fn uclamp_util_of_pct(hundredths: u32) -> u32 {
    ((hundredths as u64 * 1024 + 5000) / 10000) as u32
}

/// One cgroup of the cpu (and cpuset) controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    /// Normalised path: `/`, or `/a/b` (no repeated or trailing `/`).
    pub path: String,
    /// `None` only for the root.
    pub parent: Option<GroupId>,
    pub cpu: CpuCgroup,
    /// `cpuset.cpus`, sorted; `None` = the parent's CPUs.
    pub cpuset_cpus: Option<Vec<u32>>,
}

impl Cgroup {
    /// The root group `/` with the kernel's defaults.
    pub fn root() -> Cgroup {
        Cgroup {
            path: "/".to_string(),
            parent: None,
            cpu: CpuCgroup::default(),
            cpuset_cpus: None,
        }
    }

    /// `cpu.shares` in force.
    pub fn shares(&self) -> u64 {
        self.cpu.shares.unwrap_or(DEFAULT_SHARES)
    }

    /// `cpu.rt_runtime_us` in force (-1 = unlimited): [`ROOT_RT_RUNTIME_US`] for the root,
    /// 0 for a child group that does not set it.
    pub fn rt_runtime_us(&self) -> i64 {
        let default = if self.parent.is_none() {
            ROOT_RT_RUNTIME_US
        } else {
            0
        };
        self.cpu.rt_runtime_us.unwrap_or(default)
    }

    /// `cpu.rt_period_us` in force.
    pub fn rt_period_us(&self) -> u64 {
        self.cpu.rt_period_us.unwrap_or(DEFAULT_RT_PERIOD_US)
    }

    /// `cpu.cfs_period_us` in force.
    pub fn cfs_period_us(&self) -> u64 {
        self.cpu.cfs_period_us.unwrap_or(DEFAULT_CFS_PERIOD_US)
    }
}

/// The CPUs group `g` of `groups` (a [`Spec::cgroups`]) may use: the nearest
/// `cpuset.cpus` on the way to the root, or `None` for every CPU of the machine.
pub fn group_cpus(groups: &[Cgroup], g: GroupId) -> Option<&[u32]> {
    let mut at = Some(g);
    while let Some(i) = at {
        let group = &groups[i as usize];
        if let Some(c) = &group.cpuset_cpus {
            return Some(c);
        }
        at = group.parent;
    }
    None
}

/// What a block device's requests cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceModel {
    /// Linux's null_blk with `irqmode=2` (timer): every request completes `completion_ns`
    /// after it is issued, at most `queue_depth` requests are in flight, and the device
    /// holds `size_bytes` (Documentation/block/null_blk.rst: `completion_nsec` default
    /// 10,000 ns, `hw_queue_depth` default 64, `gb` default 250).
    NullBlk {
        completion_ns: u64,
        queue_depth: u32,
        size_bytes: u64,
        /// The queue's `rotational` flag (null_blk's `rotational` parameter of later
        /// kernels; default false, as null_blk is non-rotational).
        rotational: bool,
    },
    /// A hard disk (`crate::device::HddParams`).
    Hdd(crate::device::HddParams),
    /// A flash SSD (`crate::device::SsdParams`).
    Ssd(crate::device::SsdParams),
}

impl DeviceModel {
    /// The queue's `rotational` flag (`blk_queue_nonrot` is its negation): a hard disk
    /// is rotational, an SSD is not, null_blk as configured.
    pub fn rotational(&self) -> bool {
        match self {
            DeviceModel::NullBlk { rotational, .. } => *rotational,
            DeviceModel::Hdd(_) => true,
            DeviceModel::Ssd(_) => false,
        }
    }

    /// Capacity in bytes.
    pub fn size_bytes(&self) -> u64 {
        match self {
            DeviceModel::NullBlk { size_bytes, .. } => *size_bytes,
            DeviceModel::Hdd(p) => p.size_bytes,
            DeviceModel::Ssd(p) => p.size_bytes,
        }
    }
}

/// A block device (`schedlab.devices`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    pub name: String,
    pub model: DeviceModel,
    /// The I/O scheduler (elevator): "none", "noop", "deadline", "deadline-lowprio",
    /// "mq-deadline", "kyber" or "bfq".
    pub scheduler: String,
    /// The elevator's tunables as given (`name` → textual value); the I/O layer parses them.
    pub params: Vec<(String, String)>,
    /// CPU time of one completion interrupt (the driver's handler and the block layer's
    /// completion), charged to the task running on the CPU that submitted the request.
    pub irq_ns: u64,
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
    /// Hits of a mark per second of the run (e.g. transactions per second, one `commit`
    /// mark per transaction), with the statistics of the time from the same task's
    /// previous mark to each hit (a transaction's latency when it starts with a mark).
    MarkRate { mark: ResId, name: String },
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
    /// Every cgroup: the root `/` first ([`ROOT_GROUP`]), parents before children.
    pub cgroups: Vec<Cgroup>,
}

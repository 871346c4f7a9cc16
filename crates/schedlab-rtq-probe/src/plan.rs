//! The scenarios: which queue state each measured operation starts from.
//!
//! Seed 002 measured `act_tsk`, `chg_pri` and `rot_rdq` "against the number of tasks and
//! the priority involved" on TOPPERS/JSP (16 priority levels, `TNUM_TPRI`). We rebuild that as follows (docs/readyq.md states the same):
//!
//! * Levels: [`LEVELS`] = 16, priority 0 highest.
//! * Population for N ready tasks: task `i` (0..N) is made ready, in index order, at
//!   priority `i % 16` ([`background_prio`]): the tasks are spread evenly over the levels,
//!   so a level holds ⌈N/16⌉ or ⌊N/16⌋ tasks.
//! * `act_tsk` at priority p: task N (not queued) is pushed at the tail of p.
//! * `chg_pri` to priority p: the ready task at the head, the middle or the tail of the
//!   dispatch order ([`Target`]) moves to the tail of p.
//! * `rot_rdq` at priority p: the head of p moves to p's tail.
//!
//! Every measured operation is the ready-queue function TOPPERS/JSP's service call runs
//! (`make_runnable`, `change_priority`, `rotate_ready_queue`) over the back end's queue,
//! with JSP's cached `schedtsk` kept by [`Kernel`]: the next task is searched for only
//! where JSP searches (chg_pri of `schedtsk` to an equal or lower priority), otherwise it
//! is decided by a comparison or taken from the rotated queue. Per N, "average" is the
//! mean over the cases (every p, and for chg_pri every target), "worst" the maximum.

use schedlab_rtq::{Prio, ReadyQueue, TaskIdx};

use crate::kernel::Kernel;

/// Priority levels (TOPPERS/JSP's default `TNUM_TPRI`).
pub const LEVELS: usize = 16;
/// Task slots of every measured queue: N ready tasks plus the one activated.
pub const CAPACITY: usize = 256;
/// The largest N a plan may use: the lean single list holds 255 tasks (its header takes
/// the 256th slot), N ready ones and the one activated.
pub const MAX_N: usize = schedlab_rtq::LEAN_CAPACITY - 1;

/// A measured operation (the μITRON service call it stands for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `act_tsk`: a dormant task becomes ready (push at the tail of its priority).
    ActTsk,
    /// `chg_pri`: a ready task moves to the tail of a new priority.
    ChgPri,
    /// `rot_rdq`: a priority's head moves to its tail.
    RotRdq,
}

impl Op {
    /// Every operation, in report order.
    pub const ALL: [Op; 3] = [Op::ActTsk, Op::ChgPri, Op::RotRdq];

    /// The service call's name, as used in the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Op::ActTsk => "act_tsk",
            Op::ChgPri => "chg_pri",
            Op::RotRdq => "rot_rdq",
        }
    }
}

/// Which ready task `chg_pri` moves, by its place in the dispatch order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The first (the running task, in TOPPERS terms `schedtsk`).
    Head,
    /// The one at index N / 2.
    Middle,
    /// The last.
    Tail,
}

impl Target {
    /// Every target, in report order.
    pub const ALL: [Target; 3] = [Target::Head, Target::Middle, Target::Tail];

    /// Name used in the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Target::Head => "head",
            Target::Middle => "middle",
            Target::Tail => "tail",
        }
    }

    /// Index into the dispatch order of `n` ready tasks (n ≥ 1).
    pub fn index(self, n: usize) -> usize {
        match self {
            Target::Head => 0,
            Target::Middle => n / 2,
            Target::Tail => n - 1,
        }
    }
}

/// One measured situation for a given N: the priority involved and, for chg_pri, the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The priority activated at, changed to, or rotated.
    pub prio: Prio,
    /// The task chg_pri moves (None for the other operations).
    pub target: Option<Target>,
}

/// The numbers of ready tasks measured and the repetitions of each case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Numbers of ready tasks, ascending, each in 1..=MAX_N.
    pub ns: Vec<usize>,
    /// Timed repetitions per case, warm (their trimmed mean is kept).
    pub reps_warm: usize,
    /// Timed repetitions per case, cold.
    pub reps_cold: usize,
}

impl Plan {
    /// The full study: 1..64 densely, then up to 254.
    pub fn full() -> Plan {
        Plan {
            ns: vec![
                1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48, 64, 96, 128, 192, 254,
            ],
            reps_warm: 201,
            reps_cold: 21,
        }
    }

    /// The quick study (`schedlab readyq --quick`, `reproduce --quick`).
    pub fn quick() -> Plan {
        Plan {
            ns: vec![1, 2, 3, 5, 8, 10, 16, 32, 64, 128],
            reps_warm: 61,
            reps_cold: 9,
        }
    }

    /// The cases measured for `op` at every N, in output order: priority-major, then target.
    pub fn cases(op: Op) -> Vec<Case> {
        let prios = (0..LEVELS).map(|p| p as Prio);
        match op {
            Op::ChgPri => prios
                .flat_map(|prio| {
                    Target::ALL.into_iter().map(move |t| Case {
                        prio,
                        target: Some(t),
                    })
                })
                .collect(),
            _ => prios.map(|prio| Case { prio, target: None }).collect(),
        }
    }
}

/// Priority of background task `i`.
pub fn background_prio(i: usize) -> Prio {
    (i % LEVELS) as Prio
}

/// Make tasks 0..n ready in index order at their background priorities (no task ready
/// before), through the kernel's `make_runnable`, so that `schedtsk` is what JSP's would be.
pub fn populate<Q: ReadyQueue>(k: &mut Kernel<Q>, n: usize) {
    for i in 0..n {
        k.make_runnable(i as TaskIdx, background_prio(i));
    }
}

/// A kernel over `make()`'s empty queue with tasks 0..n ready ([`populate`]).
pub fn populated<Q: ReadyQueue>(make: fn() -> Q, n: usize) -> Kernel<Q> {
    let mut k = Kernel::new(make());
    populate(&mut k, n);
    k
}

/// The dispatch order the population must have: by priority, then by index (FIFO, as
/// tasks were pushed in index order). Computed without a queue, for checks.
pub fn expected_order(n: usize) -> Vec<TaskIdx> {
    let mut order: Vec<TaskIdx> = (0..n as TaskIdx).collect();
    order.sort_by_key(|&i| (background_prio(i as usize), i));
    order
}

/// The task and priority arguments of the measured call for `case` at `n` ready tasks:
/// act_tsk activates task `n`; chg_pri moves the targeted task; rot_rdq ignores the task.
pub fn arguments(op: Op, case: Case, n: usize) -> (TaskIdx, Prio) {
    match (op, case.target) {
        (Op::ChgPri, Some(t)) => (expected_order(n)[t.index(n)], case.prio),
        (Op::ActTsk, _) => (n as TaskIdx, case.prio),
        _ => (0, case.prio),
    }
}

//! Small value types shared by the engine and every policy.

/// Simulated time in integer nanoseconds since the start of the run.
pub type Time = u64;

/// A task (thread). Ids are dense, start at 0, and are never reused within a run, so a
/// policy can keep its per-task state in a `Vec` indexed by `TaskId::idx()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u32);

impl TaskId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
    /// The pid this task shows in traces (pid 0 is the idle task, as in Linux).
    #[inline]
    pub fn pid(self) -> u32 {
        self.0 + 1
    }
}

/// A CPU of the simulated machine, 0-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuId(pub u32);

impl CpuId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// The largest machine the engine models.
pub const MAX_CPUS: usize = 256;

/// A fixed-size CPU bitmask (cpumask_t); copying it never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuMask([u64; MAX_CPUS / 64]);

impl CpuMask {
    pub const fn empty() -> Self {
        CpuMask([0; MAX_CPUS / 64])
    }
    /// CPUs `0..n`.
    pub fn first_n(n: usize) -> Self {
        let mut m = Self::empty();
        for c in 0..n.min(MAX_CPUS) {
            m.set(CpuId(c as u32));
        }
        m
    }
    #[inline]
    pub fn set(&mut self, c: CpuId) {
        self.0[c.idx() / 64] |= 1 << (c.idx() % 64);
    }
    #[inline]
    pub fn clear(&mut self, c: CpuId) {
        self.0[c.idx() / 64] &= !(1 << (c.idx() % 64));
    }
    #[inline]
    pub fn contains(&self, c: CpuId) -> bool {
        c.idx() < MAX_CPUS && self.0[c.idx() / 64] & (1 << (c.idx() % 64)) != 0
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.0.iter_mut().zip(other.0.iter()) {
            *a &= *b;
        }
        m
    }
    /// The lowest CPU in the mask (find-first-set over the words; hot in the engine).
    #[inline]
    pub fn first(&self) -> Option<CpuId> {
        for (wi, &w) in self.0.iter().enumerate() {
            if w != 0 {
                return Some(CpuId(wi as u32 * 64 + w.trailing_zeros()));
            }
        }
        None
    }
    /// The set CPUs in increasing order (allocation-free).
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(CpuId(wi as u32 * 64 + b))
            })
        })
    }
}

impl std::fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|c| c.0)).finish()
    }
}

pub use schedlab_spec::model::DlParams;
/// A task's scheduling policy (the engine's copy of the spec's policy).
pub use schedlab_spec::model::Policy;
/// A cgroup: an index into the spec's cgroups (0 = the root `/`).
pub use schedlab_spec::model::{GroupId, ROOT_GROUP};

/// Kernel priority numbering (include/linux/sched/prio.h): 0..99 real-time
/// (0 most important), 100..139 fair (120 + nice).
pub const MAX_RT_PRIO: i32 = 100;
pub const DEFAULT_PRIO: i32 = 120;

/// What the engine knows about a task's scheduling attributes. Policies read it through
/// [`crate::sched::Ctx::task`]; they keep their own dynamic state in their own tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedAttrs {
    pub policy: Policy,
    /// User RT priority 1..=99 for FIFO/RR, 0 otherwise.
    pub rt_priority: i32,
    /// Nice -20..=19 for fair policies, 0 otherwise.
    pub nice: i32,
    pub dl: Option<DlParams>,
    /// Fair policies only: the custom slice asked for through `sched_attr.sched_runtime`
    /// (ns, as requested; `None` = the base slice). Linux 6.12+ (EEVDF) uses it, clamped
    /// by [`schedlab_spec::model::custom_slice_ns`]; older kernels ignore it.
    pub slice_ns: Option<u64>,
}

impl SchedAttrs {
    /// The kernel's `static_prio`/`normal_prio`: `99 - rt_priority` for RT, `120 + nice`
    /// for fair tasks, -1 for DEADLINE (kernel/sched/core.c `__normal_prio`).
    pub fn prio(&self) -> i32 {
        match self.policy {
            Policy::Fifo | Policy::Rr => MAX_RT_PRIO - 1 - self.rt_priority,
            Policy::Deadline => -1,
            _ => DEFAULT_PRIO + self.nice,
        }
    }
}

/// Attributes of a fair-class task (SCHED_OTHER, SCHED_BATCH or SCHED_IDLE) with this nice
/// value (for tests and programs built in code).
pub fn fair(policy: Policy, nice: i32) -> SchedAttrs {
    SchedAttrs {
        policy,
        rt_priority: 0,
        nice,
        dl: None,
        slice_ns: None,
    }
}

/// Attributes of a real-time task (SCHED_FIFO or SCHED_RR) with this user priority.
pub fn rt(policy: Policy, prio: i32) -> SchedAttrs {
    SchedAttrs {
        policy,
        rt_priority: prio,
        nice: 0,
        dl: None,
        slice_ns: None,
    }
}

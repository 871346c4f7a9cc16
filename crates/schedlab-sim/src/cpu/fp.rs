//! `fp`: a fixed-priority preemptive RTOS kernel with μITRON 4.0 semantics.
//!
//! Source: the μITRON 4.0 specification as implemented by TOPPERS/ASP 1.x
//! (`kernel/task.c`: `make_runnable` l.275, `make_non_runnable` l.302, `change_priority`
//! l.380, `rotate_ready_queue` l.435; `kernel/sys_manage.c` `rot_rdq` l.195; summarised in
//! shared/reference/scheduler-specs.md §7.1). Rules modelled:
//! - the highest-priority ready task runs; FIFO order within a priority;
//! - a task made ready goes to the tail of its priority's queue; a task of equal priority
//!   never preempts; a strictly higher priority preempts at once;
//! - the running task stays at the head of its queue ("precedence"), so a preempted task
//!   resumes before its peers;
//! - `yield` is `rot_rdq(TPRI_SELF)`: the running task moves to the tail of its priority;
//! - a priority change (phase attributes) puts the task at the tail of its new priority
//!   (`chg_pri`'s rule, l.380);
//! - no time slicing (μITRON has none; round robin is done by calling rot_rdq from a cyclic
//!   handler): the `timeslice_ticks` parameter emulates that handler when non-zero.
//!
//! Multiprocessor: partitioned, as TOPPERS/FMP with one ready queue per processor. A task
//! is assigned to a CPU when created — its only CPU if its affinity names one, else the
//! allowed CPU with the fewest tasks assigned so far (lowest number on ties) — and never
//! migrates afterwards unless a change of affinity excludes its CPU.
//!
//! Priorities: schedlab maps every task onto one scale, the kernel's `prio`: SCHED_FIFO/RR
//! priority p → 99 − p (0 highest), fair tasks → 120 + nice, so an RT-style task set maps
//! to μITRON's "smaller number = higher priority". SCHED_DEADLINE is rejected.
//!
//! Simplifications: no dispatch-disabled state (`dis_dsp`), no interrupt context; the
//! ready queue is a per-priority intrusive list with a priority bitmap (JSP's structure);
//! issue 4 replaces it with the `schedlab-rtq` crate.

use crate::ctx::Ctx;
use crate::sched::{DequeueKind, EnqueueKind, ParamInfo, PolicyInfo, Scheduler, WakeKind};
use crate::types::{CpuId, Policy, SchedAttrs, TaskId};

/// Priority levels: kernel prio 0..=139 (index = prio).
const LEVELS: usize = 140;
const WORDS: usize = LEVELS.div_ceil(64);
const NIL: u32 = u32::MAX;

/// One CPU's ready queue: a FIFO list per priority plus a bitmap of non-empty levels.
struct ReadyQueue {
    head: [u32; LEVELS],
    tail: [u32; LEVELS],
    bitmap: [u64; WORDS],
}

impl ReadyQueue {
    fn new() -> Self {
        ReadyQueue {
            head: [NIL; LEVELS],
            tail: [NIL; LEVELS],
            bitmap: [0; WORDS],
        }
    }

    /// The highest (numerically lowest) non-empty level: find-first-set over the bitmap.
    fn top(&self) -> Option<usize> {
        self.bitmap
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }
}

/// Per-task links of the intrusive lists.
#[derive(Clone, Copy)]
struct Link {
    next: u32,
    prev: u32,
    level: u16,
    queued: bool,
    cpu: u32,
}

pub struct Fp {
    rq: Vec<ReadyQueue>,
    links: Vec<Link>,
    /// Tasks assigned to each CPU (for partitioning new tasks).
    assigned: Vec<u32>,
    /// rot_rdq period in ticks (0 = never, μITRON's default).
    timeslice_ticks: u32,
    ticks_left: Vec<u32>,
}

impl Fp {
    pub fn new(nr_cpus: usize) -> Self {
        Fp {
            rq: (0..nr_cpus).map(|_| ReadyQueue::new()).collect(),
            links: Vec::new(),
            assigned: vec![0; nr_cpus],
            timeslice_ticks: 0,
            ticks_left: vec![0; nr_cpus],
        }
    }

    fn level(attrs: &SchedAttrs) -> usize {
        attrs.prio().clamp(0, LEVELS as i32 - 1) as usize
    }

    fn push_tail(&mut self, cpu: CpuId, t: TaskId, level: usize) {
        let rq = &mut self.rq[cpu.idx()];
        let id = t.0;
        let old_tail = rq.tail[level];
        self.links[t.idx()] = Link {
            next: NIL,
            prev: old_tail,
            level: level as u16,
            queued: true,
            cpu: cpu.0,
        };
        if old_tail == NIL {
            rq.head[level] = id;
        } else {
            self.links[old_tail as usize].next = id;
        }
        rq.tail[level] = id;
        rq.bitmap[level / 64] |= 1 << (level % 64);
    }

    fn unlink(&mut self, t: TaskId) {
        let l = self.links[t.idx()];
        if !l.queued {
            return;
        }
        let rq = &mut self.rq[l.cpu as usize];
        let level = l.level as usize;
        if l.prev == NIL {
            rq.head[level] = l.next;
        } else {
            self.links[l.prev as usize].next = l.next;
        }
        if l.next == NIL {
            rq.tail[level] = l.prev;
        } else {
            self.links[l.next as usize].prev = l.prev;
        }
        if rq.head[level] == NIL {
            rq.bitmap[level / 64] &= !(1 << (level % 64));
        }
        self.links[t.idx()].queued = false;
    }

    /// rot_rdq for the level of `t`: move it to the tail if it has peers.
    fn rotate(&mut self, cpu: CpuId, t: TaskId) {
        let level = self.links[t.idx()].level as usize;
        if self.links[t.idx()].queued && self.links[t.idx()].next != NIL {
            self.unlink(t);
            self.push_tail(cpu, t, level);
        }
    }
}

impl Scheduler for Fp {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "fp",
            summary: "fixed-priority preemptive RTOS kernel (uITRON 4.0 semantics), partitioned",
            source:
                "TOPPERS/ASP 1.x kernel/task.c l.275-460, kernel/sys_manage.c l.195 (uITRON 4.0)",
            params: vec![ParamInfo {
                name: "timeslice_ticks",
                default: "0".into(),
                description: "rotate the running task's priority queue every N ticks, as a cyclic \
                              handler calling rot_rdq would (0 = never, uITRON default)",
            }],
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "timeslice_ticks" => {
                self.timeslice_ticks = value.parse().map_err(|_| {
                    format!("expected a number of ticks (0 or more), got '{value}'")
                })?;
                Ok(())
            }
            _ => Err(format!(
                "unknown parameter '{name}' (fp has: timeslice_ticks)"
            )),
        }
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if attrs.policy == Policy::Deadline {
            return Err(
                "fp is a fixed-priority kernel; SCHED_DEADLINE tasks need a deadline scheduler"
                    .into(),
            );
        }
        Ok(())
    }

    fn task_new(&mut self, _ctx: &mut Ctx, t: TaskId, _parent: Option<TaskId>) {
        debug_assert_eq!(t.idx(), self.links.len());
        self.links.push(Link {
            next: NIL,
            prev: NIL,
            level: 0,
            queued: false,
            cpu: 0,
        });
    }

    /// Partitioned placement: the CPU chosen at creation is kept (no migration).
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let allowed = ctx.task(t).affinity;
        if kind == WakeKind::Fork {
            let cpu = allowed
                .iter()
                .min_by_key(|c| (self.assigned[c.idx()], c.0))
                .expect("empty affinity");
            self.assigned[cpu.idx()] += 1;
            return cpu;
        }
        if allowed.contains(prev) {
            prev
        } else {
            allowed.first().expect("empty affinity")
        }
    }

    /// make_runnable: tail of its priority.
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, _kind: EnqueueKind) {
        let level = Self::level(&ctx.task(t).attrs);
        ctx.count_work(1);
        self.push_tail(cpu, t, level);
    }

    /// make_non_runnable.
    fn dequeue(&mut self, ctx: &mut Ctx, _cpu: CpuId, t: TaskId, _kind: DequeueKind) {
        ctx.count_work(1);
        self.unlink(t);
    }

    /// Preempt only for a strictly higher priority (equal priority never preempts).
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if let Some(curr) = ctx.curr(cpu) {
            if ctx.task(t).attrs.prio() < ctx.task(curr).attrs.prio() {
                ctx.resched(cpu);
            }
        }
    }

    /// search_schedtsk: head of the highest non-empty priority. The running task stays
    /// linked (at the head), so a preempted task keeps its precedence.
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let rq = &self.rq[cpu.idx()];
        ctx.count_work(WORDS as u64);
        let level = rq.top()?;
        let t = TaskId(rq.head[level]);
        if ctx.curr(cpu) != Some(t) {
            self.ticks_left[cpu.idx()] = self.timeslice_ticks;
        }
        Some(t)
    }

    /// Without the emulated cyclic handler the tick does nothing (μITRON has no time
    /// slicing): the CPU runs tickless.
    fn can_stop_tick(&self, _ctx: &Ctx, _cpu: CpuId) -> bool {
        self.timeslice_ticks == 0
    }

    /// The emulated cyclic handler: rot_rdq every `timeslice_ticks`.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        if self.timeslice_ticks == 0 {
            return;
        }
        let left = &mut self.ticks_left[cpu.idx()];
        *left = left.saturating_sub(1);
        if *left == 0 {
            *left = self.timeslice_ticks;
            if self.links[t.idx()].queued && self.links[t.idx()].next != NIL {
                self.rotate(cpu, t);
                ctx.resched(cpu);
            }
        }
    }

    /// rot_rdq(TPRI_SELF).
    fn yield_task(&mut self, _ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.rotate(cpu, t);
    }

    /// chg_pri: the task goes to the tail of its new priority (the engine re-enqueues it).
    fn prio_changed(&mut self, _ctx: &mut Ctx, _t: TaskId, _old: SchedAttrs) {}

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (c, rq) in self.rq.iter().enumerate() {
            for level in 0..LEVELS {
                let mut x = rq.head[level];
                while x != NIL {
                    f(CpuId(c as u32), TaskId(x));
                    x = self.links[x as usize].next;
                }
            }
        }
    }
}

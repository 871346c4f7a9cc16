//! Linux's real-time class: SCHED_FIFO and SCHED_RR (`rt_sched_class`).
//!
//! Primary source: torvalds/linux `kernel/sched/rt.c`, stored revision 00d6a8a7 (a v5.10-era
//! copy, read through the reference index): `__enqueue_rt_entity` (head/tail insertion into
//! `rt_prio_array`), `requeue_task_rt`/`yield_task_rt`, `select_task_rq_rt`,
//! `check_preempt_curr_rt`/`check_preempt_equal_prio`, `pick_next_rt_entity`
//! (`sched_find_first_bit` + list head), `put_prev_task_rt`, `find_lowest_rq`,
//! `push_rt_task`/`push_rt_tasks`, `pull_rt_task`, `task_woken_rt`, `prio_changed_rt`,
//! `switched_from_rt`, `task_tick_rt` (RR slice), `get_rr_interval_rt`; plus
//! `kernel/sched/core.c` `__sched_setscheduler` (ENQUEUE_HEAD when the priority is
//! lowered, DEQUEUE_MOVE dropped when it is unchanged), `include/linux/sched/rt.h`
//! (`RR_TIMESLICE = 100 * HZ / 1000`), `kernel/sched/cpupri.c` (`cpupri_find`) and
//! sched(7). RT group scheduling and throttling, from the same copy: `enqueue_rt_entity`,
//! `dequeue_rt_entity`, `dequeue_rt_stack`, `__enqueue_rt_entity` (a throttled or empty
//! group stays off its parent's list), `move_entity`, `rt_se_prio`,
//! `sched_rt_rq_enqueue` / `sched_rt_rq_dequeue`, `_pick_next_task_rt`,
//! `requeue_task_rt`, `task_tick_rt`'s walk over `for_each_sched_rt_entity`,
//! `update_curr_rt`; Linux 2.6.35's `kernel/sched_rt.c` (the copy in
//! LeeDroid-/Flyer-2.6.35-HC-MR, ff8b2e40) has the same structure. The same functions in
//! Linux 6.1's `kernel/sched/rt.c` (the Debian `linux-source-6.1` tree), by line: `rt_se_prio`
//! l.990-1000, `move_entity` l.1310-1316, `__enqueue_rt_entity` l.1434-1466,
//! `dequeue_rt_stack` l.1486-1504, `enqueue_rt_entity`/`dequeue_rt_entity` l.1506-1533,
//! `requeue_task_rt`/`yield_task_rt` l.1583-1597, `select_task_rq_rt` l.1602-1672,
//! `check_preempt_equal_prio` l.1674-1699, `check_preempt_curr_rt` l.1722-1745,
//! `pick_next_rt_entity`/`_pick_next_task_rt` l.1773-1804, `put_prev_task_rt`
//! l.1828-1846, `find_lowest_rq` l.1884-1973, `push_rt_task`/`push_rt_tasks`
//! l.2059-2184, `pull_rt_task` l.2362-2471, `task_woken_rt` l.2477-2488,
//! `switched_from_rt` l.2516-2529, `prio_changed_rt` l.2577-2612, `task_tick_rt`
//! l.2650-2682, `get_rr_interval_rt` l.2684-2693 (6.1 has paths the model leaves out,
//! such as migrate-disabled tasks in `push_rt_task`; the bandwidth functions' lines are in
//! `rt_bandwidth.rs`). Written from the
//! specification; no kernel code is copied.
//!
//! Model:
//! - Per CPU an `rt_prio_array`: 100 FIFO lists (kernel prio 0..99, 0 best) and a bitmap;
//!   pick = first set bit, head of that list, O(1). The running task stays linked in its
//!   list, so a FIFO task preempted by a higher priority stays at the head of its list.
//!   Wake-ups and migrations insert at the tail, `sched_yield` moves to the tail.
//! - SCHED_RR: `time_slice` counted in ticks (`sched_rr_timeslice_ms`, default 100 ms →
//!   `100 * HZ / 1000` jiffies, an explicit value is rounded up to jiffies like
//!   `msecs_to_jiffies`); at zero it is refilled and, if other tasks share the list, the
//!   task moves to the tail and the CPU is rescheduled. The slice is not refilled on
//!   wake-up (only at fork and expiry), as in the kernel.
//! - Preemption: a woken task preempts iff its prio is strictly better.
//! - Priority change of a queued task (`prio_changed` between DEQUEUE_SAVE and
//!   ENQUEUE_RESTORE): raised → tail of the new list, lowered → head, unchanged → the
//!   position it had.
//! - SMP: `cpupri` is derived on demand from the queues (IDLE < NORMAL < RT99 … RT0);
//!   `find_lowest_rq` takes the lowest-priority level below the task's that meets its
//!   affinity, preferring the task's CPU, then the lowest-numbered CPU (the kernel walks
//!   sched-domain spans; with one flat domain that is `cpumask_first`). Wake placement
//!   follows `select_task_rq_rt`; push runs after a pick (`set_next_task_rt` →
//!   `rt_queue_push_tasks`) and after a wake-up that does not preempt (`task_woken_rt`);
//!   pull runs before a pick when the CPU's RT priority dropped (`balance_rt` after an RT
//!   task blocked, `prio_changed_rt`, `switched_from_rt`) and on newidle balance.
//!
//! RT throttling and RT group scheduling (CONFIG_RT_GROUP_SCHED; the bandwidth bookkeeping
//! is `rt_bandwidth.rs`, which cites its sources): with cgroups, each group has an rt_rq
//! per CPU with its own `rt_prio_array`, and a group's entity is queued in its parent's
//! rt_rq at the priority of the group's best queued entity (`rt_se_prio`); the root
//! group's rt_rq is the CPU's. As in `enqueue_rt_entity` / `dequeue_rt_entity`
//! (`dequeue_rt_stack`, then `__enqueue_rt_entity` level by level), every enqueue and
//! dequeue of a task takes its group's entity and its ancestors' off their lists and puts
//! back, at the tail (the head for ENQUEUE_HEAD), those that still have queued entities
//! and are not throttled; a same-priority attribute change (DEQUEUE_SAVE without
//! DEQUEUE_MOVE) leaves them in place. A pick descends from the CPU's rt_rq
//! (`_pick_next_task_rt`); nothing is picked while the root rt_rq is throttled
//! (`sched_rt_runnable`). RR's tick and `sched_yield` requeue every level
//! (`requeue_task_rt`). `update_curr` charges the running task's group and each ancestor
//! (`update_curr_rt`); a throttled group's entity leaves its parent
//! (`sched_rt_rq_dequeue`) and the period timer puts it back (`sched_rt_rq_enqueue`,
//! rescheduling the CPU when the group's best task beats what runs). Push, pull and cpupri
//! see every queued RT task of a CPU (the kernel's `pushable_tasks` and `rt_nr_total`)
//! and the priority of the CPU's top rt_rq, which leaves out throttled groups.
//! Until an RT task is queued in a group other than the root there is one rt_rq per CPU
//! (the root group's) and only the global throttle.
//!
//! Simplifications: no priority inheritance (so no `rt_nr_boosted`); no RT_PUSH_IPI
//! (pull scans overloaded CPUs directly, the non-IPI path); push/pull consider CPUs' RT
//! queues, whether they are idle and whether a SCHED_DEADLINE task runs there
//! (`CPUPRI_HIGHER`), but not deadline tasks queued behind the running one (the kernel
//! marks a CPU while any is queued); `find_lowest_rq` ignores cache topology. When the best pushable task of a
//! CPU beats its running task but sits in a throttled group, `push_rt_task` does not
//! reschedule (the kernel would, to pick the same task again).
//!
//! Ready queue: each CPU's `rt_prio_array` is a `schedlab-rtq` queue, by default
//! `bitmap-lists` — the kernel's structure; `--param readyq=` selects another back end
//! (`single-list`, `two-level-bitmap`, `tree`). Decisions do not depend on it; the work
//! counted per queue operation (`ctx.count_work`: list nodes walked, bitmap words scanned,
//! tree nodes visited) does.
//!
//! Complexity: enqueue/dequeue/pick O(1) with `bitmap-lists` (two-word bitmap), times the
//! depth of the task's group in the cgroup tree with RT group scheduling; push/pull
//! O(CPUs + queued RT tasks on the source CPU); a period timer O(CPUs).

use crate::ctx::Ctx;
use crate::sched::{
    BalanceKind, ClassSet, DequeueKind, EnqueueKind, Feature, FiredTimer, PolicyInfo, Scheduler,
    Throttling, WakeKind,
};
use crate::types::{CpuId, CpuMask, GroupId, Policy, SchedAttrs, TaskId, MAX_RT_PRIO};

use schedlab_rtq::{Kind, Prio};

use super::cpu_queues::CpuQueues;
use super::fp::readyq_row;
use super::rt_bandwidth::{RtBandwidth, Unthrottled};
use super::stack::SchedClass;
use super::tunables::{self, Tunable};

const NIL: u32 = u32::MAX;
const NR_PRIO: usize = MAX_RT_PRIO as usize;
/// The root cgroup: its rt_rq on a CPU is the CPU's top rt_rq.
const ROOT: GroupId = 0;

/// Where an enqueue puts the task in its priority's list.
#[derive(Clone, Copy)]
enum Pos {
    /// `list_add_tail` (the default).
    Tail,
    /// `list_add` (ENQUEUE_HEAD).
    Head,
    /// Right after this task (restoring a DEQUEUE_SAVE'd place).
    After(u32),
}

/// Per-task RT state (`struct sched_rt_entity`).
#[derive(Clone, Copy, Debug)]
struct RtSe {
    /// Kernel prio (0..99) of the list the task is on.
    prio: u8,
    /// Queued (on_rq), and on which CPU.
    queued: bool,
    cpu: CpuId,
    /// Allowed on more than one CPU (`nr_cpus_allowed > 1`), as of its enqueue: the core
    /// changes an affinity only while the task is dequeued.
    migratory: bool,
    /// Remaining RR slice in ticks.
    time_slice: u32,
    /// Position saved by a DEQUEUE_SAVE: (prio, predecessor on its list).
    saved: Option<(u8, u32)>,
    /// The group whose rt_rq the task is queued on (`task_group(p)` at its enqueue).
    group: GroupId,
    /// Its predecessor in that rt_rq's list saved by a DEQUEUE_SAVE (an item of
    /// [`GroupQueues`], `NIL` for none).
    saved_item: u32,
}

impl Default for RtSe {
    fn default() -> Self {
        RtSe {
            prio: 0,
            queued: false,
            cpu: CpuId(0),
            migratory: false,
            time_slice: 0,
            saved: None,
            group: ROOT,
            saved_item: NIL,
        }
    }
}

/// Per-CPU RT run queue (`struct rt_rq`); its `rt_prio_array` (FIFO lists per prio
/// 0..99, best first) is the CPU's queue in `LinuxRt::active`.
struct RtRq {
    /// `highest_prio.curr`: the best queued prio, MAX_RT_PRIO if none — cached like the
    /// kernel's (`inc_rt_prio`/`dec_rt_prio`), so cpupri queries cost no queue search.
    highest: i32,
    /// The RT task currently running here (set by pick_next, cleared by put_prev).
    curr: Option<TaskId>,
    nr_running: u32,
    /// Queued tasks allowed on more than one CPU (`rt_nr_migratory`).
    nr_migratory: u32,
    /// A pull is due before the next pick: the CPU's RT priority dropped below this prio
    /// (`balance_rt` / `rt_queue_pull_task`).
    pull_below: Option<i32>,
}

impl RtRq {
    /// In the overload mask (`update_rt_migration`): two queued RT tasks, one of them
    /// allowed to migrate.
    #[inline]
    fn overloaded(&self) -> bool {
        self.nr_running >= 2 && self.nr_migratory > 0
    }

    fn new() -> Self {
        RtRq {
            highest: MAX_RT_PRIO,
            curr: None,
            nr_running: 0,
            nr_migratory: 0,
            pull_below: None,
        }
    }
}

/// RT group scheduling's run queues (CONFIG_RT_GROUP_SCHED): for each group and CPU an
/// rt_rq with its own `rt_prio_array`, holding the group's queued tasks and the entities
/// of its child groups; a group's entity sits in its parent's rt_rq at the priority of the
/// group's best queued entity (`rt_se_prio`). The root group's rt_rq on a CPU is the
/// CPU's top rt_rq.
struct GroupQueues {
    ncpus: usize,
    /// Every group's parent (`None` for the root).
    parent: Vec<Option<GroupId>>,
    /// Queue `g * ncpus + c` is group `g`'s `rt_prio_array` on CPU `c`. Its items are
    /// tasks (`2 t`) and group entities (`2 (g * ncpus + c) + 1` for group `g`'s entity
    /// on CPU `c`).
    q: CpuQueues,
    /// Per rt_rq (`g * ncpus + c`): its group's entity is on its parent's list
    /// (`rt_se->on_list`).
    on_list: Vec<bool>,
}

impl GroupQueues {
    fn new(kind: Kind, ctx: &Ctx) -> Self {
        let ncpus = ctx.nr_cpus();
        let n = ctx.nr_groups() * ncpus;
        let mut q = CpuQueues::new(kind, NR_PRIO, n);
        q.ensure_task(TaskId(2 * n as u32 + 1));
        GroupQueues {
            ncpus,
            parent: (0..ctx.nr_groups() as GroupId)
                .map(|g| ctx.group(g).parent)
                .collect(),
            q,
            on_list: vec![false; n],
        }
    }

    /// Room for tasks up to `t`.
    fn ensure_task(&mut self, t: TaskId) {
        self.q.ensure_task(TaskId(2 * t.0 + 1));
    }

    /// The index of group `g`'s rt_rq on `c`.
    #[inline]
    fn rq(&self, g: GroupId, c: CpuId) -> usize {
        g as usize * self.ncpus + c.idx()
    }

    /// The queue of rt_rq `rq` (a `CpuQueues` queue index).
    #[inline]
    fn queue(rq: usize) -> CpuId {
        CpuId(rq as u32)
    }

    #[inline]
    fn task_item(t: TaskId) -> u32 {
        2 * t.0
    }

    #[inline]
    fn entity_item(rq: usize) -> u32 {
        2 * rq as u32 + 1
    }

    /// `highest_prio.curr` of group `g`'s rt_rq on `c`.
    #[inline]
    fn top(&self, g: GroupId, c: CpuId) -> Option<Prio> {
        self.q.top_prio(Self::queue(self.rq(g, c)))
    }

    /// `rt_nr_running` of group `g`'s rt_rq on `c` is not 0.
    #[inline]
    fn has_queued(&self, g: GroupId, c: CpuId) -> bool {
        !self.q.is_empty(Self::queue(self.rq(g, c)))
    }

    /// The first half of `dequeue_rt_stack`: take the entities of `g` and of its
    /// ancestors off their parents' lists.
    fn unstack(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) {
        let mut at = g;
        while let Some(p) = self.parent[at as usize] {
            let rq = self.rq(at, c);
            if self.on_list[rq] {
                let pq = Self::queue(self.rq(p, c));
                self.q.remove(pq, Self::entity_item(rq));
                ctx.count_work(self.q.last_steps(pq) as u64);
                self.on_list[rq] = false;
            }
            at = p;
        }
    }

    /// `__enqueue_rt_entity` from `g`'s entity up: each group with queued entities and not
    /// throttled goes on its parent's list at its best priority (at the head for
    /// ENQUEUE_HEAD) and starts the parent's period timer (`inc_rt_group`); the others
    /// leave it. Entities still on their lists (a DEQUEUE_SAVE without DEQUEUE_MOVE) stay
    /// where they are.
    fn restack(&mut self, ctx: &mut Ctx, bw: &mut RtBandwidth, g: GroupId, c: CpuId, head: bool) {
        let mut at = g;
        while let Some(p) = self.parent[at as usize] {
            let rq = self.rq(at, c);
            let pq = Self::queue(self.rq(p, c));
            let top = if bw.throttled(at, c) {
                None
            } else {
                self.top(at, c)
            };
            match top {
                Some(prio) if !self.on_list[rq] => {
                    if head {
                        self.q.push_head(pq, Self::entity_item(rq), prio);
                    } else {
                        self.q.push_tail(pq, Self::entity_item(rq), prio);
                    }
                    ctx.count_work(self.q.last_steps(pq) as u64);
                    self.on_list[rq] = true;
                    bw.start(ctx, p);
                }
                None if self.on_list[rq] => {
                    self.q.remove(pq, Self::entity_item(rq));
                    ctx.count_work(self.q.last_steps(pq) as u64);
                    self.on_list[rq] = false;
                }
                _ => {}
            }
            at = p;
        }
    }

    /// `_pick_next_task_rt`: from `c`'s top rt_rq, take the first entity of the best list
    /// and descend into it while it is a group.
    fn pick(&self, ctx: &mut Ctx, c: CpuId) -> Option<TaskId> {
        let mut rq = self.rq(ROOT, c);
        loop {
            let (item, steps) = self.q.peek_counted(Self::queue(rq));
            ctx.count_work(steps as u64);
            let item = item?;
            if item % 2 == 0 {
                return Some(TaskId(item / 2));
            }
            rq = (item / 2) as usize;
        }
    }

    /// The items of `t`'s chain on `c`, from the task up: (queue, item) for the task and
    /// for each group entity on its list.
    fn levels(&self, t: TaskId, g: GroupId, c: CpuId, mut f: impl FnMut(&Self, CpuId, u32)) {
        f(self, Self::queue(self.rq(g, c)), Self::task_item(t));
        let mut at = g;
        while let Some(p) = self.parent[at as usize] {
            let rq = self.rq(at, c);
            if self.on_list[rq] {
                f(self, Self::queue(self.rq(p, c)), Self::entity_item(rq));
            }
            at = p;
        }
    }

    /// Does any level of `t`'s chain share its list with another entity
    /// (`run_list.prev != run_list.next`, as `task_tick_rt` asks of each level)?
    fn has_peers(&self, ctx: &mut Ctx, t: TaskId, g: GroupId, c: CpuId) -> bool {
        let mut peers = false;
        let mut work = 0;
        self.levels(t, g, c, |h, q, item| {
            if !peers {
                peers = h.q.prev_in_prio(q, item).is_some() || {
                    work += h.q.last_steps(q);
                    h.q.next_in_prio(q, item).is_some()
                };
                work += h.q.last_steps(q);
            }
        });
        ctx.count_work(work as u64);
        peers
    }

    /// `requeue_task_rt(rq, p, head)`: move `t` and each of its groups' entities on their
    /// lists to the tail (or head) of its list.
    fn requeue(&mut self, ctx: &mut Ctx, t: TaskId, g: GroupId, c: CpuId, head: bool) {
        let own = Self::queue(self.rq(g, c));
        let mut work = self.requeue_item(own, Self::task_item(t), head);
        let mut at = g;
        while let Some(p) = self.parent[at as usize] {
            let rq = self.rq(at, c);
            if self.on_list[rq] {
                let pq = Self::queue(self.rq(p, c));
                work += self.requeue_item(pq, Self::entity_item(rq), head);
            }
            at = p;
        }
        ctx.count_work(work);
    }

    /// Move `item` of queue `q` to the tail (or head) of its list; the steps it took.
    fn requeue_item(&mut self, q: CpuId, item: u32, head: bool) -> u64 {
        let prio = self
            .q
            .prio_of(q, item)
            .expect("requeue of an unqueued entity");
        if head {
            self.q.remove(q, item);
            let steps = self.q.last_steps(q) as u64;
            self.q.push_head(q, item, prio);
            steps + self.q.last_steps(q) as u64
        } else {
            self.q.change_priority(q, item, prio);
            self.q.last_steps(q) as u64
        }
    }
}

/// The RT class (SCHED_FIFO / SCHED_RR).
pub struct LinuxRt {
    rqs: Vec<RtRq>,
    /// The overloaded CPUs (`rd->rto_mask`): two or more queued RT tasks, one of them
    /// migratory (`rt_set_overload` / `rt_clear_overload`). A pull looks only at these.
    rto_mask: CpuMask,
    /// Every CPU's `rt_prio_array`.
    active: CpuQueues,
    /// The CPUs the class has queues for (`0..rqs.len()`).
    queued_cpus: CpuMask,
    /// Tunables (the queues' back end among them).
    params: RtParams,
    se: Vec<RtSe>,
    /// RT bandwidth: runtime, rt_time and throttling of every group on every CPU.
    bw: RtBandwidth,
    /// RT group scheduling's rt_rqs, from the first RT task queued in a cgroup other
    /// than the root.
    groups: Option<GroupQueues>,
    /// A task's group chain left as it was by a DEQUEUE_SAVE, until its ENQUEUE_RESTORE
    /// shows whether it moved (group and CPU of the chain).
    stale: Option<(GroupId, CpuId)>,
    /// The period timer's rt_rqs to queue again (kept to reuse its allocation).
    unthrottled: Vec<Unthrottled>,
}

/// The RT class's tunables.
#[derive(Clone, Debug)]
pub struct RtParams {
    /// `sysctl_sched_rr_timeslice` (ms); <= 0 means `RR_TIMESLICE` (100 ms), as
    /// `sched_rr_handler` treats it.
    pub rr_timeslice_ms: i64,
    /// Back end of the per-CPU queues.
    pub readyq: Kind,
    /// RT_RUNTIME_SHARE: a throttling CPU borrows runtime from the others.
    pub rt_runtime_share: bool,
}

impl Default for RtParams {
    fn default() -> Self {
        RtParams {
            rr_timeslice_ms: 100,
            readyq: Kind::BitmapLists,
            rt_runtime_share: false,
        }
    }
}

fn tunables() -> Vec<Tunable<RtParams>> {
    vec![
        Tunable::ms(
            "sched_rr_timeslice_ms",
            "SCHED_RR quantum in ms (/proc/sys/kernel/sched_rr_timeslice_ms; rounded up to \
             whole ticks; <= 0 restores the 100 ms default)",
            i32::MIN as i64,
            i32::MAX as i64,
            |p| &mut p.rr_timeslice_ms,
        ),
        readyq_row().lift(|p: &mut RtParams| &mut p.readyq),
        Tunable::flag(
            "rt_runtime_share",
            "1 = a CPU whose RT group ran out of runtime borrows from the group's runtime on \
             the other CPUs (1/n of each one's spare, up to the period): the RT_RUNTIME_SHARE \
             sched feature, off by default since Linux 5.10; 2.6.35 had no switch and always \
             borrowed on SMP",
            |p| &mut p.rt_runtime_share,
        ),
    ]
}

/// `nr_cpus_allowed > 1`: the mask holds a second CPU (no full population count).
#[inline]
fn spans_cpus(aff: &CpuMask) -> bool {
    aff.first().is_some_and(|c| {
        let mut rest = *aff;
        rest.clear(c);
        !rest.is_empty()
    })
}

/// cpupri levels: lower = less important work on the CPU.
const CPUPRI_IDLE: i32 = 0;
const CPUPRI_NORMAL: i32 = 1;
const CPUPRI_HIGHER: i32 = 2 + MAX_RT_PRIO;

impl LinuxRt {
    /// An RT class for a machine with `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Self {
        let params = RtParams::default();
        LinuxRt {
            rqs: (0..nr_cpus.max(1)).map(|_| RtRq::new()).collect(),
            rto_mask: CpuMask::empty(),
            active: CpuQueues::new(params.readyq, NR_PRIO, nr_cpus.max(1)),
            queued_cpus: CpuMask::first_n(nr_cpus.max(1)),
            params,
            se: Vec::new(),
            bw: RtBandwidth::default(),
            groups: None,
            stale: None,
            unthrottled: Vec::new(),
        }
    }

    /// Per-task state for `t`, queues for every CPU. Allocates only when a task index or
    /// a CPU is seen for the first time.
    #[inline]
    fn ensure(&mut self, ctx: &mut Ctx, t: TaskId) {
        if t.idx() >= self.se.len()
            || self.rqs.len() < ctx.nr_cpus()
            || self.bw.nr_groups() != ctx.nr_groups()
        {
            self.grow(ctx, t);
        }
    }

    #[cold]
    fn grow(&mut self, ctx: &mut Ctx, t: TaskId) {
        if self.se.len() <= t.idx() {
            let n = (t.idx() + 1).max(ctx.nr_tasks());
            self.se.resize(n, RtSe::default());
            self.active.ensure_task(TaskId(n as u32 - 1));
        }
        if self.rqs.len() < ctx.nr_cpus() {
            self.rqs.resize_with(ctx.nr_cpus(), RtRq::new);
            self.active.ensure_cpus(ctx.nr_cpus());
            self.queued_cpus = CpuMask::first_n(self.rqs.len());
        }
        if self.bw.nr_groups() != ctx.nr_groups() {
            self.read_groups(ctx);
        }
        if let Some(h) = self.groups.as_mut() {
            h.ensure_task(TaskId(self.se.len() as u32 - 1));
        }
    }

    /// Read the cgroups' RT bandwidth. A run reads them before its first task; a test
    /// that changes them later gets fresh bandwidth state, and its queued tasks are
    /// requeued in their groups.
    #[cold]
    fn read_groups(&mut self, ctx: &mut Ctx) {
        self.bw.configure(ctx);
        self.bw.share = self.params.rt_runtime_share;
        self.stale = None;
        self.groups = None;
        let grouped = self
            .se
            .iter()
            .any(|se| se.queued && se.group != ROOT && (se.group as usize) < ctx.nr_groups());
        if grouped {
            self.build_group_queues(ctx);
        }
    }

    /// RT group scheduling's rt_rqs, built when the first RT task is queued in a group
    /// other than the root (until then every RT task is in the root group, whose rt_rq
    /// on a CPU is the CPU's queue): every queued task is requeued in its group, in its
    /// CPU's queue order.
    #[cold]
    fn build_group_queues(&mut self, ctx: &mut Ctx) {
        let mut h = GroupQueues::new(self.params.readyq, ctx);
        h.ensure_task(TaskId(self.se.len().max(1) as u32 - 1));
        self.groups = Some(h);
        let mut queued = Vec::new();
        for c in 0..self.rqs.len() {
            let cpu = CpuId(c as u32);
            self.active.for_each(cpu, |t, _| {
                queued.push((cpu, TaskId(t)));
                true
            });
        }
        for (cpu, t) in queued {
            self.group_enqueue(ctx, cpu, t, Pos::Tail, false, NIL);
        }
    }

    /// `sched_rr_timeslice` in jiffies for this HZ (`RR_TIMESLICE` or
    /// `msecs_to_jiffies(sysctl_sched_rr_timeslice)`).
    pub fn rr_timeslice_ticks(&self, hz: u32) -> u32 {
        let hz = hz as u64;
        let ms = self.params.rr_timeslice_ms;
        let t = if ms <= 0 {
            100 * hz / 1000
        } else {
            (ms as u64 * hz).div_ceil(1000)
        };
        t.max(1) as u32
    }

    /// The kernel prio (0..99) of an RT task.
    #[inline]
    fn prio_of(attrs: &SchedAttrs) -> usize {
        attrs.prio().clamp(0, MAX_RT_PRIO - 1) as usize
    }

    /// `rt_rq->highest_prio.curr`, cached (see `RtRq::highest`): no queue search.
    #[inline]
    fn first_prio(&self, cpu: CpuId) -> Option<usize> {
        if let Some(h) = &self.groups {
            return h.top(ROOT, cpu).map(|p| p as usize);
        }
        let rq = &self.rqs[cpu.idx()];
        debug_assert_eq!(
            rq.highest,
            self.active.top_prio(cpu).map_or(MAX_RT_PRIO, |p| p as i32),
            "stale highest_prio on {cpu:?}"
        );
        (rq.highest < MAX_RT_PRIO).then_some(rq.highest as usize)
    }

    /// `rt_rq->highest_prio.curr`: best queued RT prio on `cpu`, MAX_RT_PRIO if none.
    #[inline]
    fn highest_prio(&self, cpu: CpuId) -> i32 {
        self.first_prio(cpu).map_or(MAX_RT_PRIO, |p| p as i32)
    }

    /// The prio of whatever runs on `cpu` (`rq->curr->prio`; an idle CPU counts as the
    /// idle task, prio 140).
    #[inline]
    fn curr_prio(ctx: &Ctx, cpu: CpuId) -> i32 {
        ctx.curr(cpu).map_or(140, |c| ctx.task(c).attrs.prio())
    }

    /// The cpupri level of `cpu` (`cpupri_set`: IDLE, NORMAL, then RT99..RT0 upwards, and
    /// CPUPRI_HIGHER above them all for a CPU running a deadline task, which
    /// `inc_dl_deadline` sets in Linux 6.x so that no RT task is pushed there).
    fn cpupri(&self, ctx: &Ctx, cpu: CpuId) -> i32 {
        if ctx
            .curr(cpu)
            .is_some_and(|c| ctx.task(c).attrs.policy == Policy::Deadline)
        {
            return CPUPRI_HIGHER;
        }
        match self.first_prio(cpu) {
            Some(p) => 2 + (MAX_RT_PRIO - 1 - p as i32),
            None if ctx.curr(cpu).is_some() => CPUPRI_NORMAL,
            None => CPUPRI_IDLE,
        }
    }

    /// `find_lowest_rq`: the allowed CPU running the least important work below `t`'s
    /// priority; prefer `t`'s CPU, then the lowest-numbered. `None` if there is none or
    /// `t` is pinned.
    fn find_lowest_rq(&self, ctx: &mut Ctx, t: TaskId) -> Option<CpuId> {
        if !self.migratory(ctx, t) {
            return None;
        }
        let view = ctx.task(t);
        let task_level = 2 + (MAX_RT_PRIO - 1 - Self::prio_of(&view.attrs) as i32);
        let own = view.cpu;
        // The allowed CPUs in increasing order (those the class has queues for), each one
        // a step of the search.
        let allowed = view.affinity.and(&self.queued_cpus);
        let mut best: Option<(i32, CpuId)> = None;
        for c in allowed.iter() {
            let lvl = self.cpupri(ctx, c);
            if lvl >= task_level {
                continue;
            }
            // The lowest level wins; within it the task's own CPU, else the lowest number
            // (the first one met, as CPUs are visited in increasing order).
            match best {
                None => best = Some((lvl, c)),
                Some((bl, _)) if lvl < bl || (lvl == bl && c == own) => best = Some((lvl, c)),
                _ => {}
            }
            // Nothing is below an idle CPU: the search is decided once one is found, unless
            // the task's own CPU is still ahead.
            if best.is_some_and(|(bl, bc)| bl == CPUPRI_IDLE && (bc == own || own < c)) {
                break;
            }
        }
        ctx.count_work(allowed.count() as u64);
        best.map(|(_, c)| c)
    }

    fn do_enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, pos: Pos) {
        let view = ctx.task(t);
        let p = Self::prio_of(&view.attrs);
        let migratory = spans_cpus(&view.affinity);
        match pos {
            Pos::Tail => self.active.push_tail(cpu, t.0, p as Prio),
            Pos::Head => self.active.push_head(cpu, t.0, p as Prio),
            Pos::After(pred) => self.active.insert_after(cpu, t.0, pred),
        }
        ctx.count_work(self.active.last_steps(cpu) as u64);
        let rq = &mut self.rqs[cpu.idx()];
        rq.highest = rq.highest.min(p as i32); // inc_rt_prio
        rq.nr_running += 1;
        rq.nr_migratory += u32::from(migratory);
        // update_rt_migration: one more task can only make the CPU overloaded.
        if rq.overloaded() {
            self.rto_mask.set(cpu);
        }
        self.se[t.idx()] = RtSe {
            prio: p as u8,
            queued: true,
            cpu,
            migratory,
            ..self.se[t.idx()]
        };
    }

    fn do_dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let se = &mut self.se[t.idx()];
        debug_assert!(
            se.queued && se.cpu == cpu,
            "rt dequeue of {t:?} not queued on {cpu:?}"
        );
        debug_assert_eq!(se.migratory, spans_cpus(&ctx.task(t).affinity));
        se.queued = false;
        let (prio, migratory) = (se.prio as i32, se.migratory);
        self.active.remove(cpu, t.0);
        let mut work = self.active.last_steps(cpu);
        let rq = &mut self.rqs[cpu.idx()];
        if prio == rq.highest {
            // dec_rt_prio: the best prio may have gone; find-first-set again.
            let (top, steps) = self.active.top_prio_counted(cpu);
            rq.highest = top.map_or(MAX_RT_PRIO, |p| p as i32);
            work += steps;
        }
        ctx.count_work(work as u64);
        rq.nr_running -= 1;
        if migratory {
            rq.nr_migratory = rq.nr_migratory.saturating_sub(1);
        }
        // update_rt_migration: one task fewer can only end the overload.
        if !rq.overloaded() {
            self.rto_mask.clear(cpu);
        }
    }

    /// Where `enqueue_task_rt` puts `t` in its list, and whether it is an ENQUEUE_RESTORE
    /// at an unchanged priority on the same CPU (DEQUEUE_SAVE without DEQUEUE_MOVE: the
    /// old place, after the saved predecessor if it is still there, else the head).
    /// Otherwise the tail, or the head for a lowered priority (ENQUEUE_HEAD iff oldprio <
    /// newprio).
    fn enqueue_position(
        &self,
        ctx: &Ctx,
        cpu: CpuId,
        t: TaskId,
        kind: EnqueueKind,
        saved: Option<(u8, u32)>,
    ) -> (Pos, bool) {
        let Some((old, pred)) = saved.filter(|_| kind == EnqueueKind::Restore) else {
            return (Pos::Tail, false);
        };
        let new = Self::prio_of(&ctx.task(t).attrs);
        if new as u8 == old && self.se[t.idx()].cpu == cpu {
            let pred_there = pred != NIL && {
                let ps = self.se[pred as usize];
                ps.queued && ps.cpu == cpu && ps.prio as usize == new
            };
            let pos = if pred_there {
                Pos::After(pred)
            } else {
                Pos::Head
            };
            return (pos, true);
        }
        if (old as usize) < new {
            (Pos::Head, false)
        } else {
            (Pos::Tail, false)
        }
    }

    /// Queue `t` on its group's rt_rq on `cpu` (`enqueue_rt_entity`): the chain of its
    /// groups' entities is taken off and put back from the task up. `same_place`: an
    /// ENQUEUE_RESTORE at an unchanged priority, which leaves the task after `pred` (or at
    /// the head) and the chain where it was, if the task stayed in its group and on its
    /// CPU. Starts the period timers of the rt_rqs it joins.
    fn group_enqueue(
        &mut self,
        ctx: &mut Ctx,
        cpu: CpuId,
        t: TaskId,
        pos: Pos,
        same_place: bool,
        pred: u32,
    ) {
        let g = ctx.task(t).group;
        self.se[t.idx()].group = g;
        let prio = self.se[t.idx()].prio as Prio;
        if self.groups.is_none() {
            if g == ROOT {
                self.bw.start(ctx, ROOT);
            } else {
                // The first RT task in a group: `t` is in its CPU's queue already and is
                // requeued with the others.
                self.build_group_queues(ctx);
            }
            return;
        }
        let stayed = self.stale == Some((g, cpu));
        if !(same_place && stayed) {
            self.settle(ctx);
        }
        let (h, bw) = (self.groups.as_mut().expect("group queues"), &mut self.bw);
        let q = GroupQueues::queue(h.rq(g, cpu));
        let item = GroupQueues::task_item(t);
        if same_place && stayed {
            self.stale = None;
            if pred != NIL && h.q.prio_of(q, pred) == Some(prio) {
                h.q.insert_after(q, item, pred);
            } else {
                h.q.push_head(q, item, prio);
            }
            ctx.count_work(h.q.last_steps(q) as u64);
            bw.start(ctx, g);
            h.restack(ctx, bw, g, cpu, false);
            return;
        }
        h.unstack(ctx, g, cpu);
        let head = matches!(pos, Pos::Head);
        if head {
            h.q.push_head(q, item, prio);
        } else {
            h.q.push_tail(q, item, prio);
        }
        ctx.count_work(h.q.last_steps(q) as u64);
        bw.start(ctx, g);
        h.restack(ctx, bw, g, cpu, head);
    }

    /// Take `t` off its group's rt_rq on `cpu` (`dequeue_rt_entity`): the chain is taken
    /// off and the groups that still have queued entities go back to the tail. A
    /// DEQUEUE_SAVE remembers the task's place and leaves the chain for the
    /// ENQUEUE_RESTORE (or a class change) to settle.
    fn group_dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, save: bool) {
        if self.groups.is_none() {
            return;
        }
        self.settle(ctx);
        let g = self.se[t.idx()].group;
        let (h, bw) = (self.groups.as_mut().expect("group queues"), &mut self.bw);
        let q = GroupQueues::queue(h.rq(g, cpu));
        let item = GroupQueues::task_item(t);
        if save {
            let pred = h.q.prev_in_prio(q, item).unwrap_or(NIL);
            ctx.count_work(h.q.last_steps(q) as u64);
            self.se[t.idx()].saved_item = pred;
            h.q.remove(q, item);
            ctx.count_work(h.q.last_steps(q) as u64);
            self.stale = Some((g, cpu));
            return;
        }
        h.unstack(ctx, g, cpu);
        h.q.remove(q, item);
        ctx.count_work(h.q.last_steps(q) as u64);
        h.restack(ctx, bw, g, cpu, false);
    }

    /// A chain left by a DEQUEUE_SAVE whose task moved (or left the class): take it off
    /// and put back what still has queued entities, as the moving dequeue would have.
    fn settle(&mut self, ctx: &mut Ctx) {
        if let (Some((g, c)), Some(h)) = (self.stale.take(), self.groups.as_mut()) {
            h.unstack(ctx, g, c);
            h.restack(ctx, &mut self.bw, g, c, false);
        }
    }

    /// Group `g`'s rt_rq on `c` has queued entities (`rt_nr_running`).
    fn rt_nr_running(&self, g: GroupId, c: CpuId) -> bool {
        match &self.groups {
            Some(h) => h.has_queued(g, c),
            None => g == ROOT && self.rqs[c.idx()].nr_running > 0,
        }
    }

    /// `sched_rt_rq_dequeue`: group `g` was throttled on `c`; its entity leaves its
    /// parent (the root's is simply no longer picked from).
    fn rt_rq_dequeue(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) {
        if g == ROOT {
            return;
        }
        if let Some(h) = self.groups.as_mut() {
            if h.on_list[h.rq(g, c)] {
                h.unstack(ctx, g, c);
                h.restack(ctx, &mut self.bw, g, c, false);
            }
        }
    }

    /// `sched_rt_rq_enqueue`: group `g`, unthrottled on `c`, is queued again and `c`
    /// reschedules if the group's best task beats what it runs.
    fn rt_rq_enqueue(&mut self, ctx: &mut Ctx, g: GroupId, c: CpuId) {
        if !self.rt_nr_running(g, c) {
            return;
        }
        let best = match self.groups.as_mut() {
            Some(h) => {
                if g != ROOT && !h.on_list[h.rq(g, c)] {
                    h.unstack(ctx, g, c);
                    h.restack(ctx, &mut self.bw, g, c, false);
                }
                h.top(g, c).map_or(MAX_RT_PRIO, |p| p as i32)
            }
            None => self.highest_prio(c),
        };
        if best < Self::curr_prio(ctx, c) {
            ctx.resched(c);
        }
    }

    /// Is queued `t` where a pick can reach it: no rt_rq on its way up throttled?
    fn visible(&self, t: TaskId) -> bool {
        let se = self.se[t.idx()];
        let mut g = Some(se.group);
        while let Some(at) = g {
            if self.bw.throttled(at, se.cpu) {
                return false;
            }
            g = self.bw.parent(at);
        }
        true
    }

    /// RT group scheduling's structure is consistent: every queued task sits in its
    /// group's rt_rq on its CPU, and a group's entity is on its parent's list, at its best
    /// priority, exactly when the group has queued entities and is not throttled.
    ///
    /// A runnable task may wait on an idle CPU only while a throttled rt_rq hides it.
    #[cfg(test)]
    fn check_groups(&self, ctx: &Ctx) {
        for (i, se) in self.se.iter().enumerate() {
            let t = TaskId(i as u32);
            if se.queued && !ctx.task(t).running && ctx.curr(se.cpu).is_none() {
                assert!(
                    !self.visible(t),
                    "{t:?} waits on idle {:?} unthrottled",
                    se.cpu
                );
            }
        }
        let Some(h) = &self.groups else {
            return;
        };
        for (i, se) in self.se.iter().enumerate() {
            let q = GroupQueues::queue(h.rq(se.group, se.cpu));
            let item = GroupQueues::task_item(TaskId(i as u32));
            assert_eq!(
                h.q.prio_of(q, item).is_some(),
                se.queued,
                "task {i} in group {} on {:?}",
                se.group,
                se.cpu
            );
        }
        for g in 1..ctx.nr_groups() as GroupId {
            let p = h.parent[g as usize].expect("a child group");
            for c in (0..h.ncpus as u32).map(CpuId) {
                let rq = h.rq(g, c);
                let want = (!self.bw.throttled(g, c)).then(|| h.top(g, c)).flatten();
                let pq = GroupQueues::queue(h.rq(p, c));
                let got = h.q.prio_of(pq, GroupQueues::entity_item(rq));
                assert_eq!(got, want, "entity of group {g} on {c:?}");
                assert_eq!(h.on_list[rq], got.is_some());
            }
        }
    }

    /// May `t` run on more than one CPU? Read from its entity while it is queued here (its
    /// affinity cannot change then), from its affinity otherwise.
    #[inline]
    fn migratory(&self, ctx: &Ctx, t: TaskId) -> bool {
        match self.se.get(t.idx()) {
            Some(se) if se.queued => {
                debug_assert_eq!(se.migratory, spans_cpus(&ctx.task(t).affinity));
                se.migratory
            }
            _ => spans_cpus(&ctx.task(t).affinity),
        }
    }

    /// `requeue_task_rt(rq, p, 0)` for a queued `t`: to the tail of its list unless it is
    /// alone there (`run_list.prev == run_list.next`, as `task_tick_rt` tests). With RR's
    /// tick the kernel skips a lone task; `sched_yield` requeues it to the same place.
    /// Returns whether it had peers.
    fn requeue_tail(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) -> bool {
        if let Some(h) = self.groups.as_mut() {
            // requeue_task_rt at every level, if any level has peers.
            let g = self.se[t.idx()].group;
            if !h.has_peers(ctx, t, g, cpu) {
                return false;
            }
            h.requeue(ctx, t, g, cpu, false);
            let p = self.active.prio_of(cpu, t.0).expect("queued");
            self.active.change_priority(cpu, t.0, p);
            ctx.count_work(self.active.last_steps(cpu) as u64);
            return true;
        }
        let arr = &mut self.active;
        let mut alone = arr.prev_in_prio(cpu, t.0).is_none();
        let mut work = arr.last_steps(cpu);
        if alone {
            alone = arr.next_in_prio(cpu, t.0).is_none();
            work += arr.last_steps(cpu);
        }
        if !alone {
            let p = arr.prio_of(cpu, t.0).expect("queued");
            arr.change_priority(cpu, t.0, p);
            work += arr.last_steps(cpu);
        }
        ctx.count_work(work as u64);
        !alone
    }

    /// Is `t` pushable from its CPU (queued, not the RT current there, may run
    /// elsewhere)? `enqueue_pushable_task` / `dequeue_pushable_task`.
    #[inline]
    fn pushable(&self, ctx: &Ctx, cpu: CpuId, t: TaskId) -> bool {
        // A task the engine still shows running (the previous task of a CPU that is being
        // rescheduled) cannot be migrated until the switch is done.
        self.rqs[cpu.idx()].curr != Some(t) && !ctx.task(t).running && self.migratory(ctx, t)
    }

    /// `pick_next_pushable_task`: the best queued, not running, migratable task on `cpu`
    /// that may run on `dst` (any CPU if `None`).
    #[inline]
    fn best_pushable(&self, ctx: &mut Ctx, cpu: CpuId, dst: Option<CpuId>) -> Option<TaskId> {
        if !self.rqs[cpu.idx()].overloaded() {
            return None;
        }
        self.scan_pushable(ctx, cpu, dst)
    }

    /// [`Self::best_pushable`] on an overloaded CPU: its queue in order.
    #[inline(never)]
    fn scan_pushable(&self, ctx: &mut Ctx, cpu: CpuId, dst: Option<CpuId>) -> Option<TaskId> {
        let mut found = None;
        let mut steps = 0u64;
        self.active.for_each(cpu, |t, _| {
            let t = TaskId(t);
            steps += 1;
            let allowed = match dst {
                Some(d) => ctx.task(t).affinity.contains(d),
                None => true,
            };
            if allowed && self.pushable(ctx, cpu, t) {
                found = Some(t);
                return false;
            }
            true
        });
        ctx.count_work(steps);
        found
    }

    /// Move queued, not running `t` from `src` to the tail of `dst`'s list
    /// (`deactivate_task` + `set_task_cpu` + `activate_task`).
    fn migrate(&mut self, ctx: &mut Ctx, t: TaskId, src: CpuId, dst: CpuId) {
        self.group_dequeue(ctx, src, t, false);
        self.do_dequeue(ctx, src, t);
        ctx.set_task_cpu(t, dst);
        self.do_enqueue(ctx, dst, t, Pos::Tail);
        self.group_enqueue(ctx, dst, t, Pos::Tail, false, NIL);
    }

    /// `push_rt_tasks`: while `cpu` has a pushable task that a lower-priority CPU could
    /// run, move it there and reschedule that CPU.
    fn push_rt_tasks(&mut self, ctx: &mut Ctx, cpu: CpuId) {
        let Some(curr) = self.rqs[cpu.idx()].curr else {
            return;
        };
        let cprio = self.se[curr.idx()].prio as i32;
        // Each successful push removes a task from `cpu`, so this terminates.
        while let Some(next) = self.best_pushable(ctx, cpu, None) {
            let nprio = self.se[next.idx()].prio as i32;
            if nprio < cprio {
                // It slipped in ahead of the running task: just reschedule (unless a
                // throttled group hides it from the pick, which would pick the same).
                if self.visible(next) {
                    ctx.resched(cpu);
                }
                return;
            }
            let Some(dst) = self.find_lowest_rq(ctx, next) else {
                return;
            };
            if dst == cpu || self.highest_prio(dst) <= nprio {
                return;
            }
            self.migrate(ctx, next, cpu, dst);
            ctx.resched(dst);
        }
    }

    /// `pull_rt_task`: pull the best queued-but-waiting RT task from overloaded CPUs if it
    /// beats what `this` will run.
    #[inline]
    fn pull_rt_task(&mut self, ctx: &mut Ctx, this: CpuId) {
        // The CPUs overloaded now, in increasing order. A pull only takes tasks from the
        // CPU it visits, so no CPU after it joins the mask meanwhile; one that leaves is
        // seen to be no longer overloaded when it is reached.
        debug_assert!(
            (0..self.rqs.len())
                .all(|c| self.rto_mask.contains(CpuId(c as u32)) == self.rqs[c].overloaded()),
            "stale rto_mask"
        );
        let mut overloaded = self.rto_mask;
        overloaded.clear(this);
        if overloaded.is_empty() {
            return; // rt_overloaded(): nothing to pull
        }
        self.pull_from(ctx, this, &overloaded);
    }

    /// The loop of [`Self::pull_rt_task`] over the `overloaded` CPUs.
    #[inline(never)]
    fn pull_from(&mut self, ctx: &mut Ctx, this: CpuId, overloaded: &CpuMask) {
        let mut resched = false;
        for src in overloaded.iter() {
            let srq = &self.rqs[src.idx()];
            if srq.nr_running < 2 || srq.nr_migratory == 0 {
                continue;
            }
            let Some(p) = self.best_pushable(ctx, src, Some(this)) else {
                continue;
            };
            let pprio = self.se[p.idx()].prio as i32;
            if pprio >= self.highest_prio(this) {
                continue;
            }
            // About to preempt what runs on its own CPU: leave it there.
            if pprio < Self::curr_prio(ctx, src) {
                continue;
            }
            self.migrate(ctx, p, src, this);
            resched = true;
        }
        if resched {
            ctx.resched(this);
        }
    }
}

impl Scheduler for LinuxRt {
    fn info(&self) -> PolicyInfo {
        PolicyInfo {
            name: "linux-rt",
            summary: "Linux SCHED_FIFO/SCHED_RR class: 100 FIFO lists + bitmap per CPU, push/pull",
            source: "torvalds/linux kernel/sched/rt.c (v5.10-era stored copy 00d6a8a7): \
                     __enqueue_rt_entity, pick_next_rt_entity, task_tick_rt, select_task_rq_rt, \
                     find_lowest_rq, push_rt_task, pull_rt_task, prio_changed_rt",
            params: tunables::listing(&tunables()),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        tunables::set(&tunables(), &mut self.params, "linux-rt", name, value)?;
        self.active.set_kind(self.params.readyq);
        self.bw.share = self.params.rt_runtime_share;
        Ok(())
    }

    fn accepts(&self, attrs: &SchedAttrs) -> Result<(), String> {
        if !(1..=99).contains(&attrs.rt_priority) {
            return Err(format!(
                "{} needs a priority in 1..=99, got {}",
                attrs.policy.as_str(),
                attrs.rt_priority
            ));
        }
        Ok(())
    }

    /// `__sched_fork`: `p->rt.time_slice = sched_rr_timeslice`.
    fn task_new(&mut self, ctx: &mut Ctx, t: TaskId, parent: Option<TaskId>) {
        let _ = parent;
        self.ensure(ctx, t);
        self.se[t.idx()].time_slice = self.rr_timeslice_ticks(ctx.hz());
    }

    /// `select_task_rq_rt`: stay on `prev` unless it runs an RT task that the wakee
    /// cannot preempt (or that is pinned); then move to `find_lowest_rq` if that CPU runs
    /// lower-priority work.
    fn select_cpu(&mut self, ctx: &mut Ctx, t: TaskId, prev: CpuId, kind: WakeKind) -> CpuId {
        let _ = kind;
        self.ensure(ctx, t);
        let p = Self::prio_of(&ctx.task(t).attrs) as i32;
        let aff = ctx.task(t).affinity;
        if !aff.contains(prev) {
            return self
                .find_lowest_rq(ctx, t)
                .or_else(|| aff.first())
                .expect("empty affinity");
        }
        let test = ctx.curr(prev).is_some_and(|c| {
            let cv = ctx.task(c);
            cv.attrs.prio() < MAX_RT_PRIO && (!self.migratory(ctx, c) || cv.attrs.prio() <= p)
        });
        if test {
            if let Some(target) = self.find_lowest_rq(ctx, t) {
                if p < self.highest_prio(target) {
                    return target;
                }
            }
        }
        prev
    }

    /// `enqueue_task_rt`: tail of its priority list (head for a lowered priority on
    /// ENQUEUE_RESTORE, the saved position for an unchanged one).
    fn enqueue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.ensure(ctx, t);
        let saved = self.se[t.idx()].saved.take();
        let saved_item = std::mem::replace(&mut self.se[t.idx()].saved_item, NIL);
        let (pos, same_place) = self.enqueue_position(ctx, cpu, t, kind, saved);
        self.do_enqueue(ctx, cpu, t, pos);
        self.group_enqueue(ctx, cpu, t, pos, same_place, saved_item);
    }

    /// `dequeue_task_rt`. A DEQUEUE_SAVE remembers the list position.
    fn dequeue(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, kind: DequeueKind) {
        self.ensure(ctx, t);
        if !self.se[t.idx()].queued {
            return;
        }
        if kind == DequeueKind::Save {
            let se = self.se[t.idx()];
            let pred = self.active.prev_in_prio(cpu, t.0).unwrap_or(NIL);
            ctx.count_work(self.active.last_steps(cpu) as u64);
            self.se[t.idx()].saved = Some((se.prio, pred));
        }
        self.group_dequeue(ctx, cpu, t, kind == DequeueKind::Save);
        self.do_dequeue(ctx, cpu, t);
    }

    /// `check_preempt_curr_rt` (+ `check_preempt_equal_prio`), then `task_woken_rt`: a
    /// woken task that does not run here soon is pushed to a lower-priority CPU.
    fn wakeup_preempt(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        let p = ctx.task(t).attrs.prio();
        let cp = Self::curr_prio(ctx, cpu);
        if p < cp {
            ctx.resched(cpu);
            return;
        }
        if let Some(curr) = ctx.curr(cpu) {
            if p == cp
                && !self.migratory(ctx, t)
                && self.migratory(ctx, curr)
                && self.find_lowest_rq(ctx, curr).is_some()
            {
                // check_preempt_equal_prio: the pinned wakee goes to the head and the
                // migratable current is rescheduled so that it can be pushed away.
                let pr = self.se[t.idx()].prio as Prio;
                let arr = &mut self.active;
                arr.remove(cpu, t.0);
                let mut work = arr.last_steps(cpu);
                arr.push_head(cpu, t.0, pr);
                work += arr.last_steps(cpu);
                ctx.count_work(work as u64);
                if let Some(h) = self.groups.as_mut() {
                    // requeue_task_rt(rq, p, 1): every level to the head.
                    h.requeue(ctx, t, self.se[t.idx()].group, cpu, true);
                }
                ctx.resched(cpu);
                return;
            }
        }
        // task_woken_rt: the RT current keeps the CPU; try to push the wakee away.
        if self.rqs[cpu.idx()].curr.is_some() && self.migratory(ctx, t) {
            self.push_rt_tasks(ctx, cpu);
        }
    }

    /// `put_prev_task_rt`. If the previous task left the queue (blocked, exited) and the
    /// CPU's best RT priority is now worse, a pull is due before the next pick
    /// (`balance_rt` → `need_pull_rt_task`).
    fn put_prev(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        let rq = &mut self.rqs[cpu.idx()];
        if rq.curr == Some(t) {
            rq.curr = None;
        }
        let se = self.se[t.idx()];
        if !se.queued {
            let prio = ctx.task(t).attrs.prio().clamp(0, MAX_RT_PRIO - 1);
            self.rqs[cpu.idx()].pull_below = Some(prio);
        }
    }

    /// `pick_next_task_rt` + `set_next_task_rt`: pull first if due (`balance_rt`), take
    /// the head of the best list, then push any other queued task a lower-priority CPU
    /// could run (`rt_queue_push_tasks`).
    fn pick_next(&mut self, ctx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if cpu.idx() >= self.rqs.len() {
            return None;
        }
        if let Some(below) = self.rqs[cpu.idx()].pull_below.take() {
            if self.highest_prio(cpu) > below {
                self.pull_rt_task(ctx, cpu);
            }
        }
        if self.bw.throttled(ROOT, cpu) {
            // The CPU's rt_rq is throttled: nothing is runnable (`sched_rt_runnable`).
            return None;
        }
        let t = match &self.groups {
            Some(h) => h.pick(ctx, cpu)?,
            None => {
                let (head, steps) = self.active.peek_counted(cpu);
                ctx.count_work(steps as u64);
                TaskId(head?)
            }
        };
        let rq = &mut self.rqs[cpu.idx()];
        rq.curr = Some(t);
        // set_next_task_rt → rt_queue_push_tasks: once the switch is done (the previous
        // task is then off the CPU and may itself be pushed), push what a lower-priority
        // CPU could run.
        if rq.nr_running > 1 && rq.nr_migratory > 0 {
            ctx.queue_balance_callback(cpu);
        }
        Some(t)
    }

    /// `update_curr_rt`'s bandwidth part: the time `t` ran is charged to its group's
    /// rt_rq on `cpu` and to each ancestor's; one that runs past its runtime is throttled
    /// (taken off its parent) and the CPU reschedules, as it does while any of them stays
    /// throttled.
    fn update_curr(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId, delta_ns: u64) {
        if delta_ns == 0 || self.bw.nr_groups() == 0 {
            return;
        }
        // The group it is queued in (`rt_rq_of_se`), which a group change updates only
        // once the task is queued again.
        let mut level = Some(
            self.se
                .get(t.idx())
                .map_or(ctx.task(t).group, |se| se.group),
        );
        let mut resched = false;
        while let Some(g) = level {
            if let Some(newly) = self.bw.account(ctx, g, cpu, delta_ns) {
                if newly {
                    self.rt_rq_dequeue(ctx, g, cpu);
                }
                resched = true;
            }
            level = self.bw.parent(g);
        }
        if resched {
            ctx.resched(cpu);
        }
    }

    /// A group's period timer (`sched_rt_period_timer`): replenish its rt_rqs and queue
    /// again those no longer throttled.
    fn timer(&mut self, ctx: &mut Ctx, timer: FiredTimer) {
        let g = timer.token as GroupId;
        let mut out = std::mem::take(&mut self.unthrottled);
        out.clear();
        let (groups, rqs) = (&self.groups, &self.rqs);
        let nr_running = |c: CpuId| match groups {
            Some(h) => h.has_queued(g, c),
            None => g == ROOT && rqs[c.idx()].nr_running > 0,
        };
        self.bw.period_timer(ctx, timer.token, nr_running, &mut out);
        for &(g, c) in &out {
            self.rt_rq_enqueue(ctx, g, c);
        }
        self.unthrottled = out;
    }

    fn rt_throttling(&self, now: crate::types::Time) -> Vec<Throttling> {
        self.bw.stats(now)
    }

    /// RT throttling and RT group scheduling are modelled; fair-class features are not
    /// the RT class's to answer.
    fn models(&self, feature: Feature) -> Result<(), String> {
        match feature {
            Feature::RtBandwidth => Ok(()),
            _ => Err(feature.not_modelled_by(self.info().name)),
        }
    }

    /// `task_tick_rt`: SCHED_RR slice accounting; FIFO has no slice.
    fn tick(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        if ctx.task(t).attrs.policy != Policy::Rr {
            return;
        }
        let refill = self.rr_timeslice_ticks(ctx.hz());
        let se = &mut self.se[t.idx()];
        se.time_slice = se.time_slice.saturating_sub(1);
        if se.time_slice > 0 {
            return;
        }
        se.time_slice = refill;
        let se = self.se[t.idx()];
        if se.queued && self.requeue_tail(ctx, cpu, t) {
            ctx.resched(cpu);
        }
    }

    /// `yield_task_rt` → `requeue_task_rt(rq, curr, 0)`: tail of its list.
    fn yield_task(&mut self, ctx: &mut Ctx, cpu: CpuId, t: TaskId) {
        self.ensure(ctx, t);
        let se = self.se[t.idx()];
        if se.queued && se.cpu == cpu {
            self.requeue_tail(ctx, cpu, t);
        }
    }

    /// `prio_changed_rt`: a running task whose priority dropped pulls; a queued waiting
    /// task that now beats the running one preempts it.
    fn prio_changed(&mut self, ctx: &mut Ctx, t: TaskId, old: SchedAttrs) {
        self.ensure(ctx, t);
        let cpu = ctx.task(t).cpu;
        let newp = ctx.task(t).attrs.prio();
        if ctx.task(t).running {
            if old.prio() < newp {
                self.rqs[cpu.idx()].pull_below = Some(old.prio().clamp(0, MAX_RT_PRIO - 1));
                ctx.resched(cpu);
            }
            if newp > self.highest_prio(cpu) {
                ctx.resched(cpu);
            }
        } else if self.se[t.idx()].queued && newp < Self::curr_prio(ctx, cpu) {
            ctx.resched(cpu);
        }
    }

    /// Newidle balance: `balance_rt` → `pull_rt_task` when the CPU has no RT work.
    fn balance(&mut self, ctx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if kind == BalanceKind::NewIdle
            && cpu.idx() < self.rqs.len()
            && self.rqs[cpu.idx()].nr_running == 0
        {
            self.pull_rt_task(ctx, cpu);
        }
    }

    /// The push queued by `set_next_task_rt` (`push_rt_tasks` as a balance callback).
    fn balance_callback(&mut self, ctx: &mut Ctx, cpu: CpuId, _classes: ClassSet) {
        if cpu.idx() < self.rqs.len() {
            self.push_rt_tasks(ctx, cpu);
        }
    }

    /// SCHED_RR: `sched_rr_timeslice` (`RR_TIMESLICE`, 100 ms) in ns; SCHED_FIFO has none.
    fn timeslice_ns(&self, attrs: &SchedAttrs, hz: u32) -> Option<u64> {
        (attrs.policy == Policy::Rr)
            .then(|| self.rr_timeslice_ticks(hz) as u64 * (1_000_000_000 / hz as u64))
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(CpuId, TaskId)) {
        for (i, rq) in self.rqs.iter().enumerate() {
            let cpu = CpuId(i as u32);
            self.active.for_each(cpu, |t, _| {
                if rq.curr != Some(TaskId(t)) {
                    f(cpu, TaskId(t));
                }
                true
            });
        }
    }
}

impl SchedClass for LinuxRt {
    fn owns(&self, attrs: &SchedAttrs) -> bool {
        matches!(attrs.policy, Policy::Fifo | Policy::Rr)
    }

    /// `sched_rt_runnable`: the CPU's rt_rq has queued entities and is not throttled.
    fn has_queued(&self, cpu: CpuId) -> bool {
        cpu.idx() < self.rqs.len() && !self.bw.throttled(ROOT, cpu) && self.rt_nr_running(ROOT, cpu)
    }

    /// `update_curr_dl`'s charge of deadline time to the root rt_rq (`rt_time`).
    fn charge_rt_time(&mut self, _ctx: &mut Ctx, cpu: CpuId, delta_ns: u64) {
        if self.bw.nr_groups() > 0 {
            self.bw.charge_dl_time(cpu, delta_ns);
        }
    }

    /// `switched_from_rt`: if the CPU is left without RT work, pull.
    fn switched_from(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        self.settle(ctx);
        let cpu = ctx.task(t).cpu;
        if self.rqs[cpu.idx()].curr == Some(t) {
            self.rqs[cpu.idx()].curr = None;
        }
        self.se[t.idx()].saved = None;
        self.se[t.idx()].saved_item = NIL;
        if ctx.task(t).running && self.rqs[cpu.idx()].nr_running == 0 {
            self.rqs[cpu.idx()].pull_below = Some(MAX_RT_PRIO - 1);
        }
    }

    /// `switched_to_rt`: a fresh RR slice if it never had one.
    fn switched_to(&mut self, ctx: &mut Ctx, t: TaskId) {
        self.ensure(ctx, t);
        if self.se[t.idx()].time_slice == 0 {
            self.se[t.idx()].time_slice = self.rr_timeslice_ticks(ctx.hz());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testing::strategies::{attrs_among, ops, tasks};
    use crate::protocol::testing::Driver;
    use crate::protocol::SchedCore;
    use crate::trace::writer::PrevState;
    use crate::types::rt;
    use crate::types::CpuMask;
    use proptest::prelude::*;

    const C0: CpuId = CpuId(0);
    const C1: CpuId = CpuId(1);
    const C2: CpuId = CpuId(2);

    /// The tasks of `cpu`'s RT queue in pick order (the running one included).
    fn order(s: &LinuxRt, cpu: CpuId) -> Vec<TaskId> {
        let mut v = Vec::new();
        s.active.for_each(cpu, |t, _| {
            v.push(TaskId(t));
            true
        });
        v
    }

    /// The RT class alone on `cpus` CPUs at HZ 1000, driven by the scheduler core.
    fn machine(cpus: usize) -> SchedCore<LinuxRt> {
        SchedCore::bare(LinuxRt::new(cpus), cpus, 1000)
    }

    /// Create a task and wake it (`wake_up_new_task`); the CPUs reschedule only when the
    /// test says so.
    fn start(core: &mut SchedCore<LinuxRt>, attrs: SchedAttrs, affinity: CpuMask) -> TaskId {
        let t = core.spawn(attrs, affinity, None);
        core.wake_up_new_task(t, None).unwrap();
        t
    }

    #[test]
    fn fifo_preempted_stays_at_head_wakeup_goes_to_tail() {
        let mut core = machine(1);
        let one = CpuMask::first_n(1);
        let a = start(&mut core, rt(Policy::Fifo, 10), one);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        let b = start(&mut core, rt(Policy::Fifo, 10), one);
        assert!(!core.ctx.need_resched(C0), "equal prio must not preempt");
        assert_eq!(order(&core.policy, C0), vec![a, b]);
        let hi = start(&mut core, rt(Policy::Fifo, 50), one);
        assert!(core.ctx.need_resched(C0), "higher prio preempts");
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(hi));
        // hi blocks: a (preempted) is still at the head of prio list 89, before b.
        core.block(C0, PrevState::Sleeping);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(a));
        assert_eq!(order(&core.policy, C0), vec![a, b]);
    }

    #[test]
    fn priority_change_raised_to_tail_lowered_to_head_unchanged_in_place() {
        // Every ready-queue back end (the unchanged case uses `insert_after`).
        for kind in Kind::ALL {
            priority_change_rules(kind.name());
        }
    }

    fn priority_change_rules(readyq: &str) {
        let one = CpuMask::first_n(1);
        // Four user-prio-10 tasks [a b c d] queued behind a running prio-90 task.
        let setup = || {
            let mut core = machine(1);
            core.policy.set_param("readyq", readyq).unwrap();
            start(&mut core, rt(Policy::Fifo, 90), one);
            core.process_resched();
            let ts: Vec<TaskId> = (0..4)
                .map(|_| start(&mut core, rt(Policy::Fifo, 10), one))
                .collect();
            core.process_resched();
            (core, ts)
        };
        // sched_setattr (`__sched_setscheduler`): DEQUEUE_SAVE, new attributes,
        // ENQUEUE_RESTORE, prio_changed.
        let change = |core: &mut SchedCore<LinuxRt>, t: TaskId, attrs: SchedAttrs| {
            core.setattr(t, Some(attrs), None).unwrap();
            core.process_resched();
        };
        // The prio-90 task blocks, then each task in turn runs and blocks.
        let drain = |core: &mut SchedCore<LinuxRt>| {
            let mut v = Vec::new();
            core.block(C0, PrevState::Sleeping);
            core.process_resched();
            while let Some(t) = core.ctx.curr(C0) {
                v.push(t);
                core.block(C0, PrevState::Sleeping);
                core.process_resched();
            }
            v
        };
        // Unchanged: b switches from SCHED_FIFO to SCHED_RR at the same priority and
        // keeps its place (oldprio == newprio: DEQUEUE_SAVE without DEQUEUE_MOVE).
        let (mut core, ts) = setup();
        change(&mut core, ts[1], rt(Policy::Rr, 10));
        assert_eq!(drain(&mut core), ts, "{readyq}");
        // Lowered (user 10 → 5) into a list that already holds d: head (ENQUEUE_HEAD).
        let (mut core, ts) = setup();
        change(&mut core, ts[3], rt(Policy::Fifo, 5));
        change(&mut core, ts[1], rt(Policy::Fifo, 5));
        assert_eq!(
            drain(&mut core),
            vec![ts[0], ts[2], ts[1], ts[3]],
            "{readyq}"
        );
        // Raised (10 → 20) into a list that already holds c: tail.
        let (mut core, ts) = setup();
        change(&mut core, ts[2], rt(Policy::Fifo, 20));
        change(&mut core, ts[0], rt(Policy::Fifo, 20));
        assert_eq!(
            drain(&mut core),
            vec![ts[2], ts[0], ts[1], ts[3]],
            "{readyq}"
        );
    }

    /// `busy` (FIFO 50) runs on CPU 0, `other` (FIFO 30) on CPU 1, CPU 2 is idle.
    fn three_cpus() -> (SchedCore<LinuxRt>, TaskId, TaskId) {
        let mut core = machine(3);
        let all = CpuMask::first_n(3);
        let busy = start(&mut core, rt(Policy::Fifo, 50), all);
        core.process_resched();
        let other = start(&mut core, rt(Policy::Fifo, 30), all);
        core.process_resched();
        assert_eq!(core.ctx.curr(C0), Some(busy));
        assert_eq!(core.ctx.curr(C1), Some(other));
        (core, busy, other)
    }

    #[test]
    fn wakeup_goes_to_a_cpu_running_lower_priority_work() {
        let all = CpuMask::first_n(3);
        // Forked by `busy`, w (FIFO 40) starts from CPU 0, which runs a higher RT prio: it
        // goes to the lowest CPU, idle CPU 2 (below CPU 1's lower RT prio).
        let (mut core, busy, _) = three_cpus();
        let w = core.spawn(rt(Policy::Fifo, 40), all, Some(busy));
        assert_eq!(core.ctx.task(w).cpu, C0);
        assert_eq!(core.wake_up_new_task(w, Some(C0)), Ok(C2));
        // Forked by `other`, w starts from CPU 1, which runs a lower RT prio: it stays and
        // preempts (strictly higher).
        let (mut core, _, other) = three_cpus();
        let w = core.spawn(rt(Policy::Fifo, 40), all, Some(other));
        assert_eq!(core.wake_up_new_task(w, Some(C1)), Ok(C1));
        assert!(core.ctx.need_resched(C1));
        core.process_resched();
        assert_eq!(core.ctx.curr(C1), Some(w));
        // `other` (preempted, migratable) is pushed to the idle CPU 2 after the switch
        // (the push queued by set_next_task_rt, run as a balance callback).
        assert_eq!(core.ctx.task(other).cpu, C2);
        assert_eq!(core.ctx.curr(C2), Some(other));
    }

    const POLICIES: &[Policy] = &[Policy::Fifo, Policy::Rr];

    /// The cgroups of the group property test: /a (3 of every 10 ms) with /a/b (1 of 10)
    /// inside, and /c (4 of 10 ms); group ids 1..=3.
    fn rt_tree() -> Vec<schedlab_spec::model::Cgroup> {
        use schedlab_spec::model::{Cgroup, CpuCgroup};
        let group = |path: &str, parent, runtime| Cgroup {
            path: path.into(),
            parent: Some(parent),
            cpu: CpuCgroup {
                rt_period_us: Some(10_000),
                rt_runtime_us: Some(runtime),
                ..CpuCgroup::default()
            },
            cpuset_cpus: None,
        };
        vec![
            Cgroup::root(),
            group("/a", 0, 3_000),
            group("/a/b", 1, 1_000),
            group("/c", 0, 4_000),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random operations through the scheduler core keep the invariants every policy
        /// must keep (`Driver::check`), on every ready-queue back end.
        #[test]
        fn random_operations_keep_the_invariants(
            cpus in 1usize..4,
            readyq in 0usize..Kind::ALL.len(),
            specs in tasks(attrs_among(POLICIES)),
            ops in proptest::collection::vec(ops(20_000_000, attrs_among(POLICIES)), 1..200),
        ) {
            let mut policy = LinuxRt::new(cpus);
            policy.set_param("readyq", Kind::ALL[readyq].name()).unwrap();
            let mut d = Driver::new(policy, cpus, 1000, &specs);
            d.apply_checked(ops);
        }

        /// The same with the tasks spread over nested RT groups with bandwidth (and
        /// sharing on or off): after every operation and every period timer due, the
        /// group run queues are consistent with the queued tasks and the throttling.
        #[test]
        fn random_operations_in_rt_groups_keep_the_group_queues_consistent(
            cpus in 1usize..4,
            share in any::<bool>(),
            specs in tasks(attrs_among(POLICIES)),
            groups in proptest::collection::vec(0u32..4, 12),
            ops in proptest::collection::vec(ops(5_000_000, attrs_among(POLICIES)), 1..200),
        ) {
            let mut policy = LinuxRt::new(cpus);
            policy.set_param("rt_runtime_share", if share { "1" } else { "0" }).unwrap();
            let mut d = Driver::new(policy, cpus, 1000, &specs);
            d.core.ctx.set_groups(&rt_tree());
            for i in 0..specs.len() {
                d.core.move_group(TaskId(i as u32), groups[i % groups.len()]);
            }
            for op in ops {
                d.apply(op);
                let now = d.core.ctx.now();
                d.core.run_until(now);
                // Every policy's invariants hold while nothing is throttled (a throttled
                // group's tasks may wait on an idle CPU: check_groups checks that case).
                if !d.core.policy.bw.any_throttled() {
                    d.check();
                }
                d.core.policy.check_groups(&d.core.ctx);
            }
        }
    }
}

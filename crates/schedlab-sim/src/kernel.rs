//! The kernel's own execution: where a reschedule asked for during a kernel span takes
//! effect under each preemption model, when a sleep timer expires, and which CPUs take the
//! tick. The settings are `schedlab_spec::kernel::Kernel` (`machine.kernel`); the engine
//! applies these rules (`engine.rs`: spans, deferred reschedules, interrupt charges).
//!
//! Kernel spans: an operation with a CPU cost other than `run` (a channel call, fork, a
//! futex wake, a sleep's set-up, exit) runs in the kernel for that cost. Its last
//! `nonpreempt_ns` hold spinlocks or run with interrupts off (the wake-ups and unlocks a
//! system call ends with); under `voluntary` it has a preemption point every `point_ns`.
//! User time (`run`, `runtime`) is always preemptible: a reschedule reaches user mode
//! through the interrupt or IPI that asked for it, whatever the model.
//!
//! Where each model lets a reschedule take effect (Linux 2.6.17, the seed kernel, and
//! unchanged in principle since; `kernel/sched.c`, `include/linux/kernel.h`,
//! `arch/*/kernel/entry*.S`):
//! - `none`: only when the span returns to user mode (`resume_userspace` →
//!   `work_resched` → `schedule` in arch/mips/kernel/entry.S), when the task sleeps in it,
//!   or at an explicit `cond_resched()` (which reschedules under every model).
//! - `voluntary`: also at `might_sleep()` points, which `CONFIG_PREEMPT_VOLUNTARY` turns
//!   into `cond_resched()` (`might_resched` in include/linux/kernel.h); on MIPS every
//!   user copy starts with one (include/asm-mips/uaccess.h).
//! - `full`: at once unless the preempt count is raised (a spinlock held, interrupts off);
//!   then at the `preempt_enable()` that ends the section.
//! - `rt`: as `full`, but `spinlock_t` sleeps (an rt_mutex), so only the raw-spinlock part
//!   of a section defers.
//!
//! Every hrtimer expiry is an interrupt (`hrtimer_interrupt` → `__hrtimer_run_queues` →
//! `__run_hrtimer` → the timer's callback, kernel/time/hrtimer.c, Linux 2.6.21 and later):
//! a sleep timer's (`hrtimer_wakeup`) and the scheduler's own (the policy timers of
//! `Ctx::arm_timer`: a slice expiry, `sched_rt_period_timer`, the deadline class's
//! replenishment timer). Each costs `timer_irq_ns` on the CPU where it fires, charged to the
//! task running there; the scheduler work a policy timer's callback counts is paid in the
//! same interrupt, and the reschedule it asks of its CPU takes effect at `irq_exit`, when the
//! interrupt is over.
//!
//! Interrupt costs may vary (`schedlab_spec::cost`): the tick on CPU c in jiffy j draws
//! occurrence j of stream c, so the tick handler an idle CPU runs and the one a busy CPU
//! is charged are the same draw, whoever asks.
//!
//! Softirqs (`softirq_ns`: the work a tick raises — `run_timer_softirq`, `rcu_core`,
//! `sched_balance_softirq`). Linux 6.x kernel/softirq.c: `__irq_exit_rcu` calls
//! `invoke_softirq` when softirqs are pending; without PREEMPT_RT that runs
//! `__do_softirq` → `handle_softirqs` in the interrupted context, bottom halves (and so
//! preemption) off, restarting while more are raised for at most `MAX_SOFTIRQ_TIME`
//! (`msecs_to_jiffies(2)`; since Linux 3.8, "softirq: reduce latencies") and
//! `MAX_SOFTIRQ_RESTART` (10) rounds, and then `wakeup_softirqd` wakes the CPU's
//! ksoftirqd (`run_ksoftirqd` runs the rest, bottom halves off again). With PREEMPT_RT,
//! `invoke_softirq` only wakes the thread (`should_wake_ksoftirqd`), and the timer
//! softirqs go to the `ktimers/<cpu>` thread (`raise_timer_softirq` → `wake_timersd`;
//! SCHED_FIFO 1 by `timersd_setup` → `sched_set_fifo_low`; mainline since 6.13): threads the
//! scheduler runs like any task, which a real-time task preempts. Linux 2.6.17's
//! `__do_softirq` has only the restart limit (10), and its `ksoftirqd()` runs at nice 19
//! (`set_user_nice(current, 19)`). Here: each tick on a busy CPU adds its work to the CPU's
//! pending softirq work; without `rt` the interrupt exit runs up to `softirq_limit_ns` of
//! it as interrupt time of the interrupted task, during which no reschedule of the CPU
//! takes effect, and wakes the CPU's ksoftirqd for the rest; under `rt` it wakes the CPU's
//! thread for all of it. A thread takes all the pending work when it runs.
//!
//! Under PREEMPT_RT, hrtimers not marked `HRTIMER_MODE_HARD` expire in softirq context
//! (kernel/time/hrtimer.c `__hrtimer_init`: `softtimer = true` when `CONFIG_PREEMPT_RT` and
//! the mode lacks `HRTIMER_MODE_HARD`), except sleepers of real-time and deadline tasks
//! (`__hrtimer_init_sleeper`, Linux 6.11 hrtimer.c line 1976, later renamed
//! `__hrtimer_setup_sleeper`: `rt_or_dl_task_policy(current)` adds HARD); the
//! scheduler's own timers (`sched_rt_period_timer`, the deadline timer, the CFS bandwidth
//! timers) are armed HARD. Here every timer expires in hard interrupt context (see the
//! simplifications).
//!
//! Simplifications, said once: the non-preemptible section is one piece at the end of a
//! span; hard interrupt handlers (the tick's, a timer expiry's) run in the interrupted
//! context and delay no reschedule by themselves; under `rt` a SCHED_OTHER task's sleep
//! timer, which PREEMPT_RT expires in softirq context, still wakes it from the interrupt;
//! softirq work is raised by ticks only, is divisible (cut at exactly the limit, where the
//! kernel finishes its round), and does not stop early for `need_resched`; an interrupt
//! exit runs pending work even while ksoftirqd has some (`ksoftirqd_running`, Linux 4.9 to
//! 6.5, is not modelled); a device completion costs its device's `irq_ns` in the
//! interrupted context of the submitting CPU (the engine's `charge_io_irqs`) and raises no
//! softirq, so there is no completion work to thread; several timers expiring at one tick
//! are not serialised.

use schedlab_spec::cost::{draw, CostKey, Spread, Spreads};
use schedlab_spec::kernel::{Kernel, Preempt, SpanShape, TickMode, TimerRes};
use schedlab_spec::model::{Event, Phase, SchedAttr, Spec, TaskSpec, Uclamp, ROOT_GROUP};

use crate::types::{CpuId, Policy, TaskId, Time};

/// The draw streams of policy timers' expiry costs, one per CPU, above every task's
/// (task ids fit in 24 bits).
const POLICY_TIMER_STREAMS: u64 = 1 << 32;

/// Where, in a kernel span, a reschedule asked for now can take effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resched {
    /// Now.
    Now,
    /// At this much more of the span's work (a preemption point, or the end of a
    /// non-preemptible section that ends before the span).
    After(u64),
    /// Only when the span ends (returns to user mode).
    AtEnd,
}

/// The kernel model of one run.
#[derive(Clone, Debug)]
pub(crate) struct KernelModel {
    pub k: Kernel,
    /// One tick (ns).
    pub tick_ns_period: u64,
    /// Some span can defer a reschedule: without that the engine skips every check.
    pub defers: bool,
    /// The periodic tick may stop on a busy CPU whose scheduler says it would change nothing.
    pub tick_may_stop: bool,
    /// Idle CPUs take a tick that costs something (`periodic` with `tick_ns` > 0).
    pub idle_ticks: bool,
    /// A sleep ends exactly at its expiry: high-resolution timers, no slack, no expiry cost.
    pub exact_timers: bool,
    /// Ticks raise softirq work (`softirq_ns`): the engine keeps its per-CPU softirq
    /// threads and pending work.
    pub softirqs: bool,
    /// How the tick's and a timer expiry's costs spread above `k.tick_ns`, `k.timer_irq_ns`.
    tick_spread: Option<Spread>,
    irq_spread: Option<Spread>,
    softirq_spread: Option<Spread>,
    /// The run's seed, which the varying costs draw from.
    seed: u64,
}

impl KernelModel {
    /// The model of `k` on a machine whose tick is `tick_ns` long, its interrupt costs
    /// spreading as `spreads` says, drawn under `seed`.
    pub fn new(k: Kernel, tick_ns: u64, spreads: &Spreads, seed: u64) -> KernelModel {
        let tick_spread = spreads.get(CostKey::Tick);
        let irq_spread = spreads.get(CostKey::TimerIrq);
        let softirq_spread = spreads.get(CostKey::Softirq);
        let softirqs = k.softirq_ns > 0 || softirq_spread.is_some();
        let tick_costs = k.tick_ns > 0 || tick_spread.is_some() || softirqs;
        let defers = match k.preempt {
            Preempt::None | Preempt::Voluntary => true,
            Preempt::Full => k.spans.iter().any(|s| s.nonpreempt_ns > 0),
            Preempt::Rt => k.spans.iter().any(|s| s.raw_ns > 0),
        };
        // A stopped tick is unobservable when it costs nothing: keep the cheaper run then.
        let tick_may_stop = k.tick == TickMode::NohzFull || !tick_costs;
        KernelModel {
            tick_ns_period: tick_ns,
            defers,
            tick_may_stop,
            idle_ticks: k.tick == TickMode::Periodic && tick_costs,
            exact_timers: k.timers == TimerRes::Hrtimer
                && k.timer_slack_ns == 0
                && k.timer_irq_ns == 0
                && irq_spread.is_none(),
            k,
            softirqs,
            tick_spread,
            irq_spread,
            softirq_spread,
            seed,
        }
    }

    /// CPU time of the tick `cpu` takes in the jiffy that contains `at`.
    #[inline]
    pub fn tick_cost(&self, cpu: CpuId, at: Time) -> u64 {
        let jiffy = at / self.tick_ns_period;
        let (min, s) = (self.k.tick_ns, self.tick_spread);
        draw(min, s, self.seed, CostKey::Tick, cpu.idx() as u64, jiffy)
    }

    /// CPU time of the softirq work the tick `cpu` takes in the jiffy that contains `at`
    /// raises (drawn as the tick's own cost is).
    #[inline]
    pub fn softirq_cost(&self, cpu: CpuId, at: Time) -> u64 {
        let jiffy = at / self.tick_ns_period;
        let (min, s) = (self.k.softirq_ns, self.softirq_spread);
        draw(min, s, self.seed, CostKey::Softirq, cpu.idx() as u64, jiffy)
    }

    /// Softirqs run in per-CPU threads, never on interrupt exit (`PREEMPT_RT`).
    #[inline]
    pub fn threaded_softirqs(&self) -> bool {
        self.k.preempt == Preempt::Rt
    }

    /// How much of `pending` softirq work an interrupt exit runs in the interrupted
    /// context (the rest is left to ksoftirqd): none under `rt`, else up to the limit.
    pub fn softirq_on_exit(&self, pending: u64) -> u64 {
        match (self.threaded_softirqs(), self.k.softirq_limit_ns) {
            (true, _) => 0,
            (false, 0) => pending,
            (false, limit) => pending.min(limit),
        }
    }

    /// The per-CPU thread that runs deferred softirq work: its name prefix, policy and
    /// priority (nice for SCHED_OTHER). ksoftirqd is SCHED_OTHER at `ksoftirqd_nice` (0 in
    /// current kernels, whose smpboot threads start at nice 0; 19 in 2.6.17, whose
    /// `ksoftirqd()` calls `set_user_nice(current, 19)`); `ktimers` (PREEMPT_RT, Linux 6.13
    /// `kernel/softirq.c`) is SCHED_FIFO 1 (`timersd_setup` → `sched_set_fifo_low`).
    pub fn softirq_thread(&self) -> (&'static str, Policy, i32) {
        if self.threaded_softirqs() && self.k.ktimers {
            ("ktimers", Policy::Fifo, 1)
        } else {
            ("ksoftirqd", Policy::Other, self.k.ksoftirqd_nice)
        }
    }

    /// A timer expiry's cost varies (each sleep draws its own).
    #[inline]
    pub fn irq_varies(&self) -> bool {
        self.irq_spread.is_some()
    }

    /// CPU time of expiring the `index`-th draw of `task`'s sleep timers.
    #[inline]
    pub fn timer_irq_cost(&self, task: TaskId, index: u64) -> u64 {
        let (min, s) = (self.k.timer_irq_ns, self.irq_spread);
        draw(
            min,
            s,
            self.seed,
            CostKey::TimerIrq,
            task.idx() as u64,
            index,
        )
    }

    /// CPU time of the `index`-th expiry of a policy timer (the scheduler's own hrtimer)
    /// on `cpu`: the same setting as a sleep timer's, drawn from a stream of the CPU's
    /// that no task's stream can be.
    #[inline]
    pub fn policy_timer_irq_cost(&self, cpu: CpuId, index: u64) -> u64 {
        let (min, s) = (self.k.timer_irq_ns, self.irq_spread);
        let stream = POLICY_TIMER_STREAMS | cpu.idx() as u64;
        draw(min, s, self.seed, CostKey::TimerIrq, stream, index)
    }

    /// Where a reschedule asked for at `done` ns into a span of `len` ns of shape `shape`
    /// takes effect.
    pub fn resched_in_span(&self, shape: &SpanShape, len: u64, done: u64) -> Resched {
        // No reschedule point lies inside the non-preemptible section (a `might_sleep`
        // or `cond_resched` under a spinlock is a kernel bug).
        let open = len.saturating_sub(shape.nonpreempt_ns);
        match self.k.preempt {
            Preempt::None => next_point(&[shape.cond_resched_ns], open, done),
            Preempt::Voluntary => next_point(&[shape.cond_resched_ns, shape.point_ns], open, done),
            Preempt::Full => preemptible_before(open, done),
            Preempt::Rt => preemptible_before(len.saturating_sub(shape.raw_ns), done),
        }
    }

    /// When a sleep asked to end at `expiry` wakes its task, before the expiry's own cost.
    /// Real-time and deadline tasks get no timer slack (Linux ≥ 2.6.28, where slack exists).
    pub fn timer_fires(&self, expiry: Time, rt: bool) -> Time {
        match self.k.timers {
            TimerRes::Hrtimer => {
                let slack = if rt { 0 } else { self.k.timer_slack_ns };
                expiry.saturating_add(slack)
            }
            TimerRes::Jiffy => self.jiffy_expiry(expiry),
        }
    }

    /// The tick whose softirq runs a sleep timer under a kernel without high-resolution
    /// timers: the first tick strictly after the expiry, for relative and absolute sleeps
    /// alike. Linux 2.6.17, `kernel/hrtimer.c`: `hrtimer_run_queues` is called from the
    /// timer softirq every jiffy and runs a timer only once the tick's time
    /// (`hrtimer_get_softirq_time`: xtime, advanced by the tick) is greater than its
    /// expiry ("hrtimer optimize softirq runqueues", T. Gleixner, March 2006);
    /// `hrtimer_start` of a relative sleep sets its expiry to the call's time plus the
    /// duration — MIPS reads the clock to the microsecond, and only the `CONFIG_TIME_LOW_RES`
    /// architectures (not MIPS) add a jiffy. So `usleep(x)` called just after a tick sleeps
    /// x plus almost a tick, the seed's "X + 1/HZ".
    fn jiffy_expiry(&self, expiry: Time) -> Time {
        let tick = self.tick_ns_period;
        (expiry / tick).saturating_add(1).saturating_mul(tick)
    }

    /// Under `periodic` ticks, how much longer the tick handler of idle `cpu` runs at
    /// `now` (a task switched in waits for it).
    pub fn idle_tick_left(&self, cpu: CpuId, now: Time) -> u64 {
        if !self.idle_ticks {
            return 0;
        }
        let into = now % self.tick_ns_period;
        // Under `rt` the tick's softirq work goes to a thread a woken task can preempt.
        let softirq = match self.softirqs && !self.threaded_softirqs() {
            true => self.softirq_on_exit(self.softirq_cost(cpu, now)),
            false => 0,
        };
        (self.tick_cost(cpu, now) + softirq).saturating_sub(into)
    }
}

/// `spec` with one softirq thread per CPU appended to its tasks (`None` when ticks raise
/// no softirq work): `ksoftirqd/<cpu>` or `ktimers/<cpu>`, pinned to its CPU, with no
/// start-up instance. Its program — run the CPU's pending softirq work (`run`, whose length
/// the engine sets when it starts), then sleep until woken (`suspend`), for ever — is the
/// thread function of `smpboot_thread_fn` (kernel/smpboot.c) around `run_ksoftirqd`; the
/// engine wakes it when work is left for it and keeps it out of the workload's counts.
pub(crate) fn with_softirq_threads(spec: &Spec, model: &KernelModel, cpus: usize) -> Option<Spec> {
    if !model.softirqs {
        return None;
    }
    let (name, policy, priority) = model.softirq_thread();
    let mut with = spec.clone();
    for c in 0..cpus as u32 {
        let attr = SchedAttr {
            policy,
            priority,
            dl: None,
            slice_ns: None,
            uclamp: Uclamp::default(),
        };
        with.tasks.push(TaskSpec {
            name: format!("{name}/{c}"),
            instances: 0,
            loop_count: -1,
            delay_ns: 0,
            attr,
            cpus: Some(vec![c]),
            phases: vec![Phase {
                name: "softirq".into(),
                loop_count: 1,
                events: vec![Event::Run { ns: 0 }, Event::Suspend],
                attr: None,
                cpus: None,
                group: None,
            }],
            process: None,
            group: ROOT_GROUP,
            ioprio: None,
        });
    }
    Some(with)
}

/// Preemptible anywhere before `open` ns into the span, then only at its end.
fn preemptible_before(open: u64, done: u64) -> Resched {
    if done < open {
        Resched::Now
    } else {
        Resched::AtEnd
    }
}

/// The next reschedule point before `open` ns into a span, with one every `every[i]` ns
/// of its work (0: none of that kind), at `done` into it.
fn next_point(every: &[u64], open: u64, done: u64) -> Resched {
    // The points are at p, 2·p, …: entering the kernel is not one.
    let next = every
        .iter()
        .filter(|&&p| p > 0)
        .map(|&p| done.div_ceil(p).max(1).saturating_mul(p))
        .min();
    match next {
        Some(n) if n < open && n == done => Resched::Now,
        Some(n) if n < open => Resched::After(n - done),
        _ => Resched::AtEnd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(preempt: Preempt, shape: SpanShape) -> (KernelModel, SpanShape) {
        let k = Kernel {
            preempt,
            ..Kernel::default()
        };
        (
            KernelModel::new(k, 1_000_000, &Spreads::default(), 0),
            shape,
        )
    }

    #[test]
    fn each_model_places_a_reschedule_in_a_span() {
        let shape = SpanShape {
            nonpreempt_ns: 300,
            raw_ns: 100,
            point_ns: 250,
            cond_resched_ns: 400,
        };
        let at = |p, done| {
            let (m, s) = model(p, shape);
            m.resched_in_span(&s, 1000, done)
        };
        // The section is [700, 1000): no point inside it.
        assert_eq!(at(Preempt::None, 0), Resched::After(400));
        assert_eq!(at(Preempt::None, 400), Resched::Now);
        assert_eq!(at(Preempt::None, 401), Resched::AtEnd);
        assert_eq!(at(Preempt::Voluntary, 0), Resched::After(250));
        assert_eq!(at(Preempt::Voluntary, 10), Resched::After(240));
        assert_eq!(at(Preempt::Voluntary, 260), Resched::After(140));
        assert_eq!(at(Preempt::Voluntary, 500), Resched::Now);
        assert_eq!(at(Preempt::Voluntary, 600), Resched::AtEnd);
        assert_eq!(at(Preempt::Full, 699), Resched::Now);
        assert_eq!(at(Preempt::Full, 700), Resched::AtEnd);
        assert_eq!(at(Preempt::Rt, 850), Resched::Now);
        assert_eq!(at(Preempt::Rt, 900), Resched::AtEnd);
    }
}

#[cfg(test)]
mod timer_tests {
    use super::*;

    /// 2.6.17's rule at HZ=1000: the first tick strictly after the expiry.
    #[test]
    fn jiffy_timers_fire_on_the_first_tick_after_their_expiry() {
        let k = Kernel {
            timers: TimerRes::Jiffy,
            ..Kernel::default()
        };
        let m = KernelModel::new(k, 1_000_000, &Spreads::default(), 0);
        assert_eq!(m.timer_fires(3_000_000, false), 4_000_000);
        assert_eq!(m.timer_fires(3_000_001, true), 4_000_000);
        assert_eq!(m.timer_fires(3_999_999, false), 4_000_000);
        assert_eq!(m.timer_fires(0, false), 1_000_000);
    }

    #[test]
    fn timer_slack_delays_only_fair_tasks() {
        let k = Kernel {
            timer_slack_ns: 50_000,
            ..Kernel::default()
        };
        let m = KernelModel::new(k, 4_000_000, &Spreads::default(), 0);
        assert_eq!(m.timer_fires(1_000, false), 51_000);
        assert_eq!(m.timer_fires(1_000, true), 1_000);
    }
}

//! Engine invariants, checked after every event under `--check` (and in debug builds,
//! sampled when there are many tasks): the checks the anchors (scx_simulator, LinSched)
//! run, plus exact CPU-time conservation.

use crate::engine::{Engine, TState};
use crate::sched::Scheduler;
use crate::types::{CpuId, TaskId};

/// Return the first violated invariant.
pub(crate) fn check<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    check_cpus(e)?;
    check_queues(e)?;
    check_time(e)?;
    check_channels(e)?;
    check_deferred(e)
}

/// A reschedule is deferred only on a CPU whose task is inside a kernel span (the
/// preemption model holds it there until a reschedule point, the span's end, or a block).
fn check_deferred<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    for c in 0..e.core.ctx.nr_cpus() {
        let cpu = CpuId(c as u32);
        if !e.core.ctx.deferred_resched.contains(cpu) {
            continue;
        }
        let in_span = e.core.ctx.cpus[c].curr.is_some_and(|t| e.in_kernel_span(t));
        if !in_span {
            return Err(format!(
                "cpu {c} holds a deferred reschedule but its task is not in a kernel span"
            ));
        }
    }
    Ok(())
}

/// Every CPU's current task is running there, allowed there, and in state Running.
fn check_cpus<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    for (c, cs) in e.core.ctx.cpus.iter().enumerate() {
        let cpu = CpuId(c as u32);
        let Some(t) = cs.curr else { continue };
        let v = &e.core.ctx.tasks[t.idx()];
        if !v.running || v.cpu != cpu {
            return Err(format!(
                "task {} is curr of cpu {c} but the engine has it elsewhere",
                name(e, t)
            ));
        }
        if !v.affinity.contains(cpu) {
            return Err(format!(
                "task {} runs on cpu {c} outside its affinity {:?}",
                name(e, t),
                v.affinity
            ));
        }
        for (c2, cs2) in e.core.ctx.cpus.iter().enumerate() {
            if c2 != c && cs2.curr == Some(t) {
                return Err(format!("task {} runs on cpus {c} and {c2}", name(e, t)));
            }
        }
    }
    Ok(())
}

/// The policy's queues hold each runnable, not running task exactly once, on the CPU the
/// engine assigned it to, within its affinity; and nothing else (a running task may be
/// listed on its own CPU, if the policy keeps `curr` in its queue).
fn check_queues<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    let mut seen = vec![false; e.rt.len()];
    let mut err: Option<String> = None;
    e.core.policy.for_each_queued(&mut |cpu, t| {
        if err.is_some() {
            return;
        }
        if t.idx() >= seen.len() || cpu.idx() >= e.core.ctx.cpus.len() {
            err = Some(format!(
                "queue of cpu {} holds unknown task id {}",
                cpu.0, t.0
            ));
            return;
        }
        if std::mem::replace(&mut seen[t.idx()], true) {
            err = Some(format!("task {} is queued twice", name(e, t)));
            return;
        }
        let v = &e.core.ctx.tasks[t.idx()];
        let running_here = v.running && e.core.ctx.cpus[cpu.idx()].curr == Some(t);
        if !(e.rt[t.idx()].state == TState::Runnable && !v.running || running_here && v.on_rq) {
            err = Some(format!(
                "task {} is in the queue of cpu {} but is {:?}",
                name(e, t),
                cpu.0,
                e.rt[t.idx()].state
            ));
        } else if v.cpu != cpu {
            err = Some(format!(
                "task {} is queued on cpu {} but assigned to cpu {}",
                name(e, t),
                cpu.0,
                v.cpu.0
            ));
        } else if !v.affinity.contains(cpu) {
            err = Some(format!(
                "task {} is queued on cpu {} outside its affinity",
                name(e, t),
                cpu.0
            ));
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    for (i, rt) in e.rt.iter().enumerate() {
        if rt.state == TState::Runnable && !seen[i] {
            return Err(format!("runnable task {} is in no queue (lost)", rt.name));
        }
    }
    Ok(())
}

/// busy + idle = elapsed on every CPU, and the tasks' CPU time plus switch overhead
/// equals the CPUs' busy time, to the nanosecond.
fn check_time<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    let now = e.core.ctx.now;
    let mut busy_total = 0u64;
    let mut overhead_total = 0u64;
    let mut pending = 0u64;
    for (c, cs) in e.core.ctx.cpus.iter().enumerate() {
        let open = if cs.curr.is_some() {
            now - cs.seg_start
        } else {
            now - cs.idle_since
        };
        if cs.busy_ns + cs.idle_ns + open != now {
            return Err(format!(
                "cpu {c}: busy {} + idle {} + open segment {open} != elapsed {now}",
                cs.busy_ns, cs.idle_ns
            ));
        }
        busy_total += cs.busy_ns;
        overhead_total += cs.overhead_ns;
        if cs.curr.is_some() {
            pending += open;
        }
    }
    let _ = pending;
    let task_total: u64 = e.core.ctx.tasks.iter().map(|t| t.sum_exec_ns).sum();
    if task_total + overhead_total != busy_total {
        return Err(format!(
            "task CPU time {task_total} + overhead {overhead_total} != busy time {busy_total}"
        ));
    }
    Ok(())
}

/// Bytes written = bytes read + bytes buffered, and no buffer over capacity.
fn check_channels<S: Scheduler>(e: &Engine<S>) -> Result<(), String> {
    for (i, ch) in e.channels.iter().enumerate() {
        if ch.written != ch.read + ch.buffered || ch.buffered > ch.capacity {
            return Err(format!(
                "channel {i}: written {} != read {} + buffered {} (capacity {})",
                ch.written, ch.read, ch.buffered, ch.capacity
            ));
        }
    }
    Ok(())
}

fn name<'e, S: Scheduler>(e: &'e Engine<'_, S>, t: TaskId) -> &'e str {
    &e.rt[t.idx()].name
}

//! The periodic task model read from a spec: each task whose jobs are one fixed amount of
//! work released by its own timer becomes a [`PeriodicTask`] (C, T, D, priority, CPUs,
//! critical sections); every other task is listed as [`Unmodelled`] with the reason, and
//! with what the analysis still needs to know of it (its CPUs and its most important
//! priority), so that the tasks it may delay are not analysed as if it did not exist.
//!
//! What a job is: one pass of the task's repeated body, from one use of its timer to the
//! next (rt-app releases a job at each timer expiry; the body may start with the timer or
//! with the work, as rt-app's own examples do). The body is the events of the task's one
//! phase, or of all its phases when each runs once per loop. Modelled events: `run` and
//! `runtime` (their durations summed into C: for `runtime`, which ends at a wall-clock time,
//! that is an upper bound of the CPU time it needs), `lock`/`unlock` (critical sections,
//! part of C) and `schedlab:mark`; exactly one `timer` per body.

use schedlab_core::metrics::relative_deadline;
use schedlab_core::types::{fair, rt, Policy};
use schedlab_spec::model::{Event, Phase, SchedAttr, Spec, TaskSpec, RUN_FOREVER};

/// A task of the periodic model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeriodicTask {
    /// The task's name, as results name it.
    pub name: String,
    /// Where the spec defines it (`$.tasks.<name>`).
    pub path: String,
    /// Work per job (ns).
    pub c_ns: u64,
    /// The timer's period (ns).
    pub t_ns: u64,
    /// Relative deadline (ns): `dl-deadline`, else the period (the results' rule).
    pub d_ns: u64,
    /// Kernel priority, smaller = more important (the scale `fp` schedules by).
    pub prio: i32,
    pub policy: Policy,
    /// The CPUs it may run on.
    pub cpus: Vec<u32>,
    /// Critical sections per job: (mutex index, CPU time inside it, ns), in program order.
    pub sections: Vec<(u32, u64)>,
    /// True when the task takes a mutex while holding another.
    pub nested: bool,
}

impl PeriodicTask {
    /// C / T.
    pub fn utilisation(&self) -> f64 {
        self.c_ns as f64 / self.t_ns as f64
    }

    /// The CPU it is pinned to, if its affinity names exactly one.
    pub fn pinned(&self) -> Option<u32> {
        match self.cpus[..] {
            [c] => Some(c),
            _ => None,
        }
    }

    /// The mutexes it locks.
    pub fn mutexes(&self) -> impl Iterator<Item = u32> + '_ {
        self.sections.iter().map(|s| s.0)
    }

    /// Its longest critical section on `mutex` (0 if it never locks it).
    pub fn longest_section(&self, mutex: u32) -> u64 {
        self.sections
            .iter()
            .filter(|s| s.0 == mutex)
            .map(|s| s.1)
            .max()
            .unwrap_or(0)
    }
}

/// A task the periodic model cannot describe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmodelled {
    pub name: String,
    pub path: String,
    pub reason: String,
    /// Every CPU it may run on (in any phase).
    pub cpus: Vec<u32>,
    /// Its most important priority in any phase (kernel scale).
    pub prio: i32,
    /// Every mutex its program locks.
    pub mutexes: Vec<u32>,
    /// Whether its program uses a timer (under `edf`, a task without one has no deadline
    /// and runs only in the background).
    pub timed: bool,
}

/// A spec read as a periodic task set.
#[derive(Clone, Debug)]
pub struct TaskModel {
    pub cpus: u32,
    pub tasks: Vec<PeriodicTask>,
    pub unmodelled: Vec<Unmodelled>,
    /// Mutex names, by index.
    pub mutex_names: Vec<String>,
}

impl TaskModel {
    /// Read `spec`'s tasks.
    pub fn of(spec: &Spec) -> TaskModel {
        let all: Vec<u32> = (0..spec.machine.cpus).collect();
        let mut model = TaskModel {
            cpus: spec.machine.cpus,
            tasks: Vec::new(),
            unmodelled: Vec::new(),
            mutex_names: spec.resources.mutexes.clone(),
        };
        for task in &spec.tasks {
            let path = format!("$.tasks.{}", task.name);
            match periodic(spec, task, &all) {
                Ok(t) => model.tasks.push(PeriodicTask { path, ..t }),
                Err(reason) => model.unmodelled.push(Unmodelled {
                    name: task.name.clone(),
                    path,
                    reason,
                    cpus: every_cpu(task, &all),
                    prio: best_prio(task),
                    mutexes: locked_mutexes(task),
                    timed: task
                        .phases
                        .iter()
                        .flat_map(|p| &p.events)
                        .any(|e| matches!(e, Event::Timer { .. })),
                }),
            }
        }
        model
    }
}

/// The kernel priority `fp` runs a task with these attributes at (`SchedAttrs::prio`).
pub fn prio_of(attr: &SchedAttr) -> i32 {
    let attrs = if attr.policy.is_fair() {
        fair(attr.policy, attr.priority)
    } else {
        rt(attr.policy, attr.priority)
    };
    attrs.prio()
}

fn cpus_of(cpus: &Option<Vec<u32>>, all: &[u32]) -> Vec<u32> {
    let mut v = cpus.clone().unwrap_or_else(|| all.to_vec());
    v.sort_unstable();
    v.dedup();
    v
}

fn every_cpu(task: &TaskSpec, all: &[u32]) -> Vec<u32> {
    let mut v = cpus_of(&task.cpus, all);
    for p in &task.phases {
        if p.cpus.is_some() {
            v.extend(cpus_of(&p.cpus, all));
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn best_prio(task: &TaskSpec) -> i32 {
    let phases = task.phases.iter().filter_map(|p| p.attr.as_ref());
    std::iter::once(&task.attr)
        .chain(phases)
        .map(prio_of)
        .min()
        .unwrap_or(i32::MAX)
}

fn locked_mutexes(task: &TaskSpec) -> Vec<u32> {
    let mut v: Vec<u32> = task
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match e {
            Event::Lock { mutex } | Event::Wait { mutex, .. } | Event::Sync { mutex, .. } => {
                Some(*mutex)
            }
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The rt-app name of an event, for reasons.
fn event_name(e: &Event) -> &'static str {
    match e {
        Event::Run { .. } => "run",
        Event::Runtime { .. } => "runtime",
        Event::Sleep { .. } => "sleep",
        Event::Timer { .. } => "timer",
        Event::Lock { .. } => "lock",
        Event::Unlock { .. } => "unlock",
        Event::Wait { .. } => "wait",
        Event::Signal { .. } => "signal",
        Event::Broad { .. } => "broad",
        Event::Sync { .. } => "sync",
        Event::Barrier { .. } => "barrier",
        Event::Yield => "yield",
        Event::Fork { .. } => "fork",
        Event::Suspend => "suspend",
        Event::Resume { .. } => "resume",
        Event::Write { .. } => "schedlab:write",
        Event::Read { .. } => "schedlab:read",
        Event::Mark { .. } => "schedlab:mark",
        Event::Exit => "schedlab:exit",
        Event::Io { .. } | Event::IoBatch(_) => "schedlab:io",
        Event::Fsync { .. } => "schedlab:fsync",
        Event::Unlink { .. } => "schedlab:unlink",
        Event::Writeback { .. } => "writeback",
    }
}

/// The body of one job: the events a task repeats.
fn body(task: &TaskSpec) -> Result<Vec<&Event>, String> {
    let phases: Vec<&Phase> = task
        .phases
        .iter()
        .filter(|p| !p.events.is_empty())
        .collect();
    if phases.len() > 1 && phases.iter().any(|p| p.loop_count != 1) {
        return Err("it has several phases that repeat: its jobs are not all alike".into());
    }
    for p in &phases {
        if p.attr.as_ref().is_some_and(|a| *a != task.attr) {
            return Err(format!(
                "phase {} changes its scheduling attributes",
                p.name
            ));
        }
        if p.cpus.is_some() && p.cpus != task.cpus {
            return Err(format!("phase {} changes its CPUs", p.name));
        }
    }
    Ok(phases.iter().flat_map(|p| &p.events).collect())
}

fn periodic(spec: &Spec, task: &TaskSpec, all: &[u32]) -> Result<PeriodicTask, String> {
    match task.instances {
        0 => return Err("it is created only by fork".into()),
        1 => {}
        n => {
            return Err(format!(
                "it has {n} instances (the model takes one task per spec task)"
            ))
        }
    }
    let events = body(task)?;
    let mut period = None;
    let mut c_ns: u64 = 0;
    let mut sections = Vec::new();
    let mut held: Vec<(u32, u64)> = Vec::new();
    let mut nested = false;
    for e in &events {
        match e {
            Event::Run { ns } if *ns == RUN_FOREVER => return Err("a run of -1 never ends".into()),
            Event::Run { ns } | Event::Runtime { ns } => {
                c_ns = c_ns.saturating_add(*ns);
                for h in &mut held {
                    h.1 = h.1.saturating_add(*ns);
                }
            }
            Event::Timer {
                timer, period_ns, ..
            } => {
                if period.is_some() {
                    return Err("its jobs use more than one timer".into());
                }
                if !held.is_empty() {
                    return Err("it holds a mutex across its timer".into());
                }
                check_timer_owned(spec, *timer)?;
                period = Some(*period_ns);
            }
            Event::Lock { mutex } => {
                nested |= !held.is_empty();
                held.push((*mutex, 0));
            }
            Event::Unlock { mutex } => {
                if let Some(i) = held.iter().position(|h| h.0 == *mutex) {
                    sections.push(held.remove(i));
                }
            }
            Event::Mark { .. } => {}
            other => {
                return Err(format!(
                    "its jobs do a `{}` (modelled: run, runtime, lock/unlock and one timer)",
                    event_name(other)
                ))
            }
        }
    }
    if !held.is_empty() {
        return Err("it holds a mutex across its timer".into());
    }
    let Some(t_ns) = period else {
        return Err("it uses no timer: it is not periodic".into());
    };
    Ok(PeriodicTask {
        name: task.name.clone(),
        path: String::new(),
        c_ns,
        t_ns,
        d_ns: relative_deadline(task.attr.dl, t_ns),
        prio: prio_of(&task.attr),
        policy: task.attr.policy,
        cpus: cpus_of(&task.cpus, all),
        sections,
        nested,
    })
}

/// A shared (not `unique…`) timer used by another task too releases each of them at
/// expiries the others advance: not one periodic release per task.
fn check_timer_owned(spec: &Spec, timer: u32) -> Result<(), String> {
    let unique = spec
        .resources
        .timer_unique
        .get(timer as usize)
        .copied()
        .unwrap_or(true);
    if unique {
        return Ok(());
    }
    let users = spec
        .tasks
        .iter()
        .filter(|t| {
            t.phases
                .iter()
                .flat_map(|p| &p.events)
                .any(|e| matches!(e, Event::Timer { timer: x, .. } if *x == timer))
        })
        .count();
    if users > 1 {
        let name = &spec.resources.timers[timer as usize];
        return Err(format!(
            "its timer \"{name}\" is shared with other tasks (a timer whose name does not \
             start with `unique`): each use advances the others' releases"
        ));
    }
    Ok(())
}

//! Task programs: the spec's phases and events as a run walks them (borrowed from the
//! spec, empty phases left out), and a cursor that walks them with rt-app's loop semantics (events in order, a phase repeats `loop`
//! times, the whole list of phases repeats the task's `loop` times; -1 = forever).

use schedlab_spec::model::{Event, Phase, Spec, TaskSpec};

use crate::types::CpuMask;

/// The task programs of a spec, as a run walks them: each task template's phases that
/// have events (rt-app skips an empty phase), borrowed from the spec. Nothing is copied:
/// a template costs an index and a reference per phase, whatever its programs hold.
#[derive(Clone, Debug)]
pub struct Programs<'a> {
    tasks: &'a [TaskSpec],
    /// Template `i`'s phases are `phases[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    phases: Vec<&'a Phase>,
}

/// Does starting phase `p` change anything about the task (attributes, affinity or
/// group)?
pub fn phase_changes_task(p: &Phase) -> bool {
    p.attr.is_some() || p.cpus.is_some() || p.group.is_some()
}

/// Where a task is in its program.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    pub phase: u32,
    pub op: u32,
    pub phase_iter: i64,
    pub task_iter: i64,
}

/// A task's place in its program with what the common steps need kept at hand, so that
/// walking a program touches the spec only to fetch the op and to enter another phase:
/// the events and loop count of the cursor's phase, the template's number of phases and
/// loop count. (A task of a single phase — a periodic task — loops without reading the
/// spec's phase or task again, which at 100 000 tasks is a cache miss saved per read.)
#[derive(Clone, Copy, Debug)]
pub struct Walk<'a> {
    pub cursor: Cursor,
    /// The events of the cursor's phase (none once the program is over).
    pub ops: &'a [Event],
    /// The loop count of the cursor's phase.
    phase_loop: i64,
    /// Does entering the cursor's phase change the task ([`phase_changes_task`])?
    pub phase_changes: bool,
    /// The template's number of phases (with events) and its loop count.
    phases: u32,
    task_loop: i64,
}

impl<'a> Walk<'a> {
    /// The op under the cursor, or `None` if the program is empty/over.
    #[inline]
    pub fn op(&self) -> Option<&'a Event> {
        self.ops.get(self.cursor.op as usize)
    }
}

/// What advancing the cursor did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// Moved to the next op of the same phase (or looped the phase).
    Same,
    /// Entered a new phase (its attributes may apply).
    NewPhase,
    /// The program is over: the cursor now points past the end, so the next op the
    /// task begins is its exit (a final `sleep` still sleeps first).
    Done,
}

/// The name of a template's instance that `existing` instances precede: the template's
/// name for the first, then `name-1`, `name-2`, …
pub fn instance_name(template: &str, existing: usize) -> String {
    if existing == 0 {
        template.to_string()
    } else {
        format!("{template}-{existing}")
    }
}

/// rt-app's timer (`run_event`, src/rt-app.c): the expiry a use of a periodic timer waits
/// for. The timer is anchored at `started_at` (the task's start; for a shared timer, the
/// start of its first user) until it has expired once (`prev`); every use waits for the
/// previous expiry + `period`, or, when that is already past and the timer is relative,
/// restarts from `now`.
pub fn next_timer_expiry(
    prev: Option<u64>,
    started_at: u64,
    period: u64,
    now: u64,
    mode: schedlab_spec::model::TimerMode,
) -> u64 {
    let next = prev.unwrap_or(started_at) + period;
    if next <= now && mode == schedlab_spec::model::TimerMode::Relative {
        now
    } else {
        next
    }
}

pub fn mask_of(cpus: &[u32]) -> CpuMask {
    let mut m = CpuMask::empty();
    for &c in cpus {
        m.set(crate::types::CpuId(c));
    }
    m
}

/// The period of the first timer a program uses, its phases in order (`None` if it uses
/// none). rt-app anchors that timer at the task's start, so the job a task runs from its
/// start is due by the timer's first expiry.
pub fn first_timer_period(phases: &[&Phase]) -> Option<u64> {
    phases
        .iter()
        .flat_map(|p| p.events.iter())
        .find_map(|e| match e {
            Event::Timer { period_ns, .. } => Some(*period_ns),
            _ => None,
        })
}

impl<'a> Programs<'a> {
    /// The programs of `spec`'s tasks (template `i` is `spec.tasks[i]`).
    pub fn compile(spec: &'a Spec) -> Self {
        Self::of(&spec.tasks)
    }

    /// The programs of `tasks` (template `i` is `tasks[i]`).
    pub fn of(tasks: &'a [TaskSpec]) -> Self {
        let mut start = Vec::with_capacity(tasks.len() + 1);
        let mut phases = Vec::new();
        for t in tasks {
            start.push(phases.len() as u32);
            phases.extend(t.phases.iter().filter(|p| !p.events.is_empty()));
        }
        start.push(phases.len() as u32);
        Programs {
            tasks,
            start,
            phases,
        }
    }

    /// Number of templates.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The spec's task of template `tmpl` (its name, attributes, CPUs, process, group).
    #[inline]
    pub fn task(&self, tmpl: u32) -> &'a TaskSpec {
        &self.tasks[tmpl as usize]
    }

    /// The phases of template `tmpl` that have events.
    #[inline]
    pub fn phases(&self, tmpl: u32) -> &[&'a Phase] {
        let t = tmpl as usize;
        &self.phases[self.start[t] as usize..self.start[t + 1] as usize]
    }

    /// A task of template `tmpl` at the start of its program.
    pub fn start(&self, tmpl: u32) -> Walk<'a> {
        let mut w = Walk {
            cursor: Cursor::default(),
            ops: &[],
            phase_loop: 0,
            phase_changes: false,
            phases: self.phases(tmpl).len() as u32,
            task_loop: self.tasks[tmpl as usize].loop_count,
        };
        self.enter(tmpl, &mut w);
        w
    }

    /// Load the phase under `w`'s cursor (nothing past the last one).
    fn enter(&self, tmpl: u32, w: &mut Walk<'a>) {
        match self.phases(tmpl).get(w.cursor.phase as usize) {
            Some(p) => {
                w.ops = &p.events;
                w.phase_loop = p.loop_count;
                w.phase_changes = phase_changes_task(p);
            }
            None => w.ops = &[],
        }
    }

    /// Step `w`'s cursor past the current op (`w` walks template `tmpl`).
    #[inline(always)]
    pub fn advance(&self, tmpl: u32, w: &mut Walk<'a>) -> Advance {
        let c = &mut w.cursor;
        if c.phase >= w.phases {
            return Advance::Done;
        }
        c.op += 1;
        if (c.op as usize) < w.ops.len() {
            return Advance::Same;
        }
        c.op = 0;
        c.phase_iter += 1;
        if w.phase_loop < 0 || c.phase_iter < w.phase_loop {
            return Advance::Same;
        }
        c.phase_iter = 0;
        c.phase += 1;
        if c.phase < w.phases {
            self.enter(tmpl, w);
            return Advance::NewPhase;
        }
        c.phase = 0;
        c.task_iter += 1;
        if w.task_loop < 0 || c.task_iter < w.task_loop {
            // Back to the first phase: already loaded if it is the only one.
            if w.phases > 1 {
                self.enter(tmpl, w);
            }
            return Advance::NewPhase;
        }
        c.phase = u32::MAX;
        w.ops = &[];
        Advance::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_spec::model::{Policy, SchedAttr, Uclamp, ROOT_GROUP};

    fn task(phase_loops: &[(usize, i64)], task_loop: i64) -> TaskSpec {
        TaskSpec {
            name: "t".into(),
            instances: 1,
            loop_count: task_loop,
            delay_ns: 0,
            attr: SchedAttr {
                policy: Policy::Other,
                priority: 0,
                dl: None,
                slice_ns: None,
                uclamp: Uclamp::default(),
            },
            cpus: None,
            phases: phase_loops
                .iter()
                .map(|&(n, l)| Phase {
                    name: "p".into(),
                    loop_count: l,
                    events: vec![Event::Yield; n],
                    attr: None,
                    cpus: None,
                    group: None,
                })
                .collect(),
            process: None,
            group: ROOT_GROUP,
            ioprio: None,
        }
    }

    fn count_ops(t: TaskSpec) -> usize {
        let tasks = [t];
        let p = Programs::of(&tasks);
        let mut w = p.start(0);
        let mut n = 1;
        while p.advance(0, &mut w) != Advance::Done {
            assert!(
                w.op().is_some(),
                "a cursor that is not done points at an op"
            );
            n += 1;
        }
        assert!(w.op().is_none());
        n
    }

    #[test]
    fn loops_multiply_as_rt_app_does() {
        assert_eq!(count_ops(task(&[(3, 1)], 1)), 3);
        assert_eq!(count_ops(task(&[(3, 2)], 1)), 6);
        assert_eq!(count_ops(task(&[(3, 2), (1, 4)], 3)), 3 * (6 + 4));
        // An empty phase is skipped.
        assert_eq!(count_ops(task(&[(3, 2), (0, 5), (1, 4)], 3)), 3 * (6 + 4));
    }
}

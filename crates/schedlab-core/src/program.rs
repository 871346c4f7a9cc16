//! Task programs: the spec's phases and events compiled into flat op lists, and a cursor
//! that walks them with rt-app's loop semantics (events in order, a phase repeats `loop`
//! times, the whole list of phases repeats the task's `loop` times; -1 = forever).

use schedlab_spec::model::{Event, GroupId, Phase, SchedAttr, Spec, TaskSpec};

use crate::types::CpuMask;

/// One compiled phase.
#[derive(Clone, Debug)]
pub struct CPhase {
    pub ops: Vec<Event>,
    pub loop_count: i64,
    /// Attributes to switch to when the phase starts, if it sets any.
    pub attr: Option<SchedAttr>,
    pub cpus: Option<CpuMask>,
    /// The cgroup to move to when the phase starts (rt-app's phase `taskgroup`).
    pub group: Option<GroupId>,
}

impl CPhase {
    /// Does starting this phase change anything about the task (attributes, affinity or
    /// group)?
    pub fn changes_task(&self) -> bool {
        self.attr.is_some() || self.cpus.is_some() || self.group.is_some()
    }
}

/// One compiled task template.
#[derive(Clone, Debug)]
pub struct Template {
    pub name: String,
    pub phases: Vec<CPhase>,
    pub loop_count: i64,
    /// Process name (threads of one process share a tgid in traces).
    pub process: Option<String>,
    /// The template's own attributes and CPUs (used for start-up and forked instances).
    pub attr: SchedAttr,
    pub cpus: Option<Vec<u32>>,
    /// The cgroup its instances start in (rt-app's task `taskgroup`).
    pub group: GroupId,
}

/// Where a task is in its program.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    pub phase: u32,
    pub op: u32,
    pub phase_iter: i64,
    pub task_iter: i64,
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

pub fn mask_of(cpus: &[u32]) -> CpuMask {
    let mut m = CpuMask::empty();
    for &c in cpus {
        m.set(crate::types::CpuId(c));
    }
    m
}

fn compile_phase(p: &Phase) -> CPhase {
    CPhase {
        ops: p.events.clone(),
        loop_count: p.loop_count,
        attr: p.attr.clone(),
        cpus: p.cpus.as_deref().map(mask_of),
        group: p.group,
    }
}

pub fn compile_task(t: &TaskSpec) -> Template {
    Template {
        name: t.name.clone(),
        phases: t
            .phases
            .iter()
            .filter(|p| !p.events.is_empty())
            .map(compile_phase)
            .collect(),
        loop_count: t.loop_count,
        process: t.process.clone(),
        attr: t.attr.clone(),
        cpus: t.cpus.clone(),
        group: t.group,
    }
}

pub fn compile(spec: &Spec) -> Vec<Template> {
    spec.tasks.iter().map(compile_task).collect()
}

impl Template {
    /// The op under the cursor, or `None` if the program is empty/over.
    #[inline]
    pub fn op(&self, c: &Cursor) -> Option<&Event> {
        self.phases
            .get(c.phase as usize)
            .and_then(|p| p.ops.get(c.op as usize))
    }

    /// Step the cursor past the current op.
    pub fn advance(&self, c: &mut Cursor) -> Advance {
        if c.phase as usize >= self.phases.len() {
            return Advance::Done;
        }
        let phase = &self.phases[c.phase as usize];
        c.op += 1;
        if (c.op as usize) < phase.ops.len() {
            return Advance::Same;
        }
        c.op = 0;
        c.phase_iter += 1;
        if phase.loop_count < 0 || c.phase_iter < phase.loop_count {
            return Advance::Same;
        }
        c.phase_iter = 0;
        c.phase += 1;
        if (c.phase as usize) < self.phases.len() {
            return Advance::NewPhase;
        }
        c.phase = 0;
        c.task_iter += 1;
        if self.loop_count < 0 || c.task_iter < self.loop_count {
            return Advance::NewPhase;
        }
        c.phase = u32::MAX;
        Advance::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpl(phase_loops: &[(usize, i64)], task_loop: i64) -> Template {
        Template {
            name: "t".into(),
            phases: phase_loops
                .iter()
                .map(|&(n, l)| CPhase {
                    ops: vec![Event::Yield; n],
                    loop_count: l,
                    attr: None,
                    cpus: None,
                    group: None,
                })
                .collect(),
            loop_count: task_loop,
            process: None,
            attr: SchedAttr {
                policy: schedlab_spec::model::Policy::Other,
                priority: 0,
                dl: None,
                slice_ns: None,
                uclamp: schedlab_spec::model::Uclamp::default(),
            },
            cpus: None,
            group: 0,
        }
    }

    fn count_ops(t: &Template) -> usize {
        let mut c = Cursor::default();
        let mut n = 1;
        while t.advance(&mut c) != Advance::Done {
            n += 1;
        }
        n
    }

    #[test]
    fn loops_multiply_as_rt_app_does() {
        assert_eq!(count_ops(&tmpl(&[(3, 1)], 1)), 3);
        assert_eq!(count_ops(&tmpl(&[(3, 2)], 1)), 6);
        assert_eq!(count_ops(&tmpl(&[(3, 2), (1, 4)], 3)), 3 * (6 + 4));
    }
}

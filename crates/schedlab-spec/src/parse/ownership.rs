//! Mutex ownership, checked before a run: schedlab's mutexes are error-checking mutexes
//! (POSIX `PTHREAD_MUTEX_ERRORCHECK`), so a task may unlock only a mutex it holds (else
//! `EPERM`), may not lock one it already holds (else `EDEADLK`), and waits on a condition
//! (`wait`, `sync`) only while holding the mutex it names (`pthread_cond_wait` requires
//! it). rt-app uses default mutexes, for which each of these is undefined behaviour or a
//! deadlock, so such a spec has no meaning to simulate.
//!
//! Which mutexes a task holds depends on its own events alone (only its `lock`, `unlock`
//! and `wait` change them, and a wait returns with the mutex held again), so the check is
//! exact: it walks the task's program in the order it runs. A phase body that runs twice
//! or more is walked twice and the phase list of a looping task twice: a body that passes
//! its second walk leaves the held set as it found it, so every later round repeats the
//! second. The walk stops at `schedlab:exit`, after which nothing runs. The engine makes
//! the same checks as the run goes, for specs built in code.

use super::event::{Ev, PEv};
use super::task::TaskIr;
use crate::SpecError;
use std::collections::HashMap;

/// One event as the walk sees it: the primitive and the path of the key it came from.
type Step<'a> = (Ev, &'a str);

/// Check the ownership rules for every task; `expand` turns an event into the primitives
/// rt-app runs (suspend and resume lock and unlock).
pub(crate) fn check(
    tasks: &[TaskIr],
    expand: impl Fn(&PEv, &str) -> Vec<Ev>,
) -> Result<(), SpecError> {
    for t in tasks {
        let phases: Vec<(i64, Vec<Step>)> = t
            .phases
            .iter()
            .map(|p| {
                let steps = p
                    .events
                    .iter()
                    .flat_map(|pe| {
                        expand(pe, &t.name)
                            .into_iter()
                            .map(|e| (e, pe.path.as_str()))
                    })
                    .collect();
                (p.loop_count, steps)
            })
            .collect();
        Walk {
            task: &t.name,
            held: HashMap::new(),
        }
        .program(&phases, t.loop_count)?;
    }
    Ok(())
}

struct Walk<'a> {
    task: &'a str,
    /// Mutex → the path of the lock that took it.
    held: HashMap<String, &'a str>,
}

impl<'a> Walk<'a> {
    fn program(mut self, phases: &'a [(i64, Vec<Step<'a>>)], loops: i64) -> Result<(), SpecError> {
        let rounds = if loops == 1 { 1 } else { 2 };
        for _ in 0..rounds {
            for (phase_loops, steps) in phases {
                let times = if *phase_loops == 1 { 1 } else { 2 };
                for _ in 0..times {
                    if self.body(steps)? {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Walk one run of a phase body; `true` when it reached `schedlab:exit`.
    fn body(&mut self, steps: &'a [Step<'a>]) -> Result<bool, SpecError> {
        for (ev, path) in steps {
            crate::work::step(1);
            let checked = match ev {
                Ev::Lock(m) => self.lock(m, path),
                Ev::Unlock(m) => self.unlock(m),
                Ev::Wait { cond, mutex } | Ev::Sync { cond, mutex } => self.wait(cond, mutex),
                Ev::Exit => return Ok(true),
                _ => Ok(()),
            };
            checked.map_err(|message| SpecError::new(*path, message))?;
        }
        Ok(false)
    }

    fn lock(&mut self, m: &str, path: &'a str) -> Result<(), String> {
        if let Some(first) = self.held.get(m) {
            return Err(format!(
                "task {:?} locks mutex {m:?}, which it already holds (locked at {first}): an \
                 error-checking mutex refuses this (EDEADLK), a default one deadlocks",
                self.task
            ));
        }
        self.held.insert(m.to_string(), path);
        Ok(())
    }

    fn unlock(&mut self, m: &str) -> Result<(), String> {
        match self.held.remove(m) {
            Some(_) => Ok(()),
            None => Err(format!(
                "task {:?} unlocks mutex {m:?}, which it does not hold at this point (an \
                 error-checking mutex refuses this: EPERM); lock it first in the same task",
                self.task
            )),
        }
    }

    fn wait(&self, cond: &str, mutex: &str) -> Result<(), String> {
        if self.held.contains_key(mutex) {
            return Ok(());
        }
        Err(format!(
            "task {:?} waits on condition {cond:?} with mutex {mutex:?}, which it does not hold \
             at this point (pthread_cond_wait needs the caller to hold it; an error-checking \
             mutex refuses this: EPERM); lock it first in the same task",
            self.task
        ))
    }
}

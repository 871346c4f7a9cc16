//! Second pass: turn resource names into indices and check the cross-references that rt-app
//! only discovers at run time (or never).
//!
//! Resource rules, from rt-app (`get_resource_index()`, `parse_task_event_data()` in
//! `src/rt-app_parse_config.c`; `run_event()`, `create_thread()` in `src/rt-app.c`):
//! - mutexes, condition variables and barriers are global, created on first reference;
//! - a timer is global (shared by every instance that names it) unless its `ref` starts with
//!   `unique`, in which case each task template has its own, copied per instance and per fork
//!   (`thread_data_create_unique_resources()`);
//! - a barrier's participant count is the sum, over every barrier event naming it, of the
//!   `instance` count of the task holding the event (`rdata->res.barrier.waiting +=
//!   tdata->num_instances`). So a task naming the same barrier twice counts twice and the
//!   barrier can never open; schedlab rejects that, and barriers in tasks created by `fork`
//!   (the tutorial: "barrier can't be used with fork event");
//! - `suspend X` is lock(X); wait(cond X, mutex X); unlock(X) and `resume X` is lock(X);
//!   broadcast(cond X); unlock(X) on a mutex and a condition variable both named X. The
//!   parser emits exactly that sequence, so a resume that comes before the suspend is lost,
//!   as in rt-app. An empty suspend name means the task's own name (workgen fills it in);
//! - `fork` names a task template; rt-app looks it up at run time and exits if it is
//!   unknown (`find_thread_data()`); schedlab checks it here.
//!
//! - `schedlab:io` names a device of `schedlab.devices`; a request given at a fixed offset
//!   must end on the device, and any request must fit on it;
//! - taskgroups become cgroups (`cgroup.rs`), and every state a task goes through is
//!   checked against its group.
//!
//! Checks schedlab adds (each is a deadlock or a typo in rt-app): an `unlock`, `wait` or
//! `sync` needs a mutex that some `lock` event locks; a `signal`, `broad` or `resume` needs
//! a condition that some `wait`, `sync` or `suspend` waits on; a channel needs a declaration,
//! at least one writer and at least one reader; the headline's mark and task prefix must
//! exist.

use super::cgroup::{self, CgroupsIr};
use super::event::{Ev, IoTargetName, PEv};
use super::ext::{ExtRest, FileIr, HeadlineIr};
use super::ownership;
use super::task::TaskIr;
use super::Declared;
use crate::model::{
    BlockDevice, Event, FileSpec, GroupId, Headline, IoOffset, IoSpec, IoTarget, Machine, Phase,
    ResId, Resources, Spec, TaskSpec, TimerMode, ROOT_GROUP,
};
use crate::work::Names;
use crate::SpecError;
use std::collections::{HashMap, HashSet};

/// Name → index table for one resource kind, in first-use order.
#[derive(Default)]
struct Table {
    ids: Names,
    names: Vec<String>,
}

impl Table {
    fn id(&mut self, name: &str) -> ResId {
        self.id_as(name, name)
    }

    /// Intern under `key`, showing `display` (keeps unique timers, keyed by task and ref,
    /// apart from a shared timer whose name happens to read "task/ref").
    fn id_as(&mut self, key: &str, display: &str) -> ResId {
        let i = self.ids.intern(key) as ResId;
        if i as usize == self.names.len() {
            self.names.push(display.to_string());
        }
        i
    }
}

/// Expand suspend/resume into the primitive sequence rt-app runs, keeping each key's path.
fn expand(ev: &PEv, task_name: &str) -> Vec<Ev> {
    match &ev.ev {
        Ev::Suspend(n) => {
            let n = if n.is_empty() {
                task_name.to_string()
            } else {
                n.clone()
            };
            vec![
                Ev::Lock(n.clone()),
                Ev::Wait {
                    cond: n.clone(),
                    mutex: n.clone(),
                },
                Ev::Unlock(n),
            ]
        }
        Ev::Resume(n) => vec![
            Ev::Lock(n.clone()),
            Ev::Broad(n.clone()),
            Ev::Unlock(n.clone()),
        ],
        other => vec![other.clone()],
    }
}

/// The groups of each task: where it starts, and where each phase moves it.
type TaskGroups = Vec<(GroupId, Vec<Option<GroupId>>)>;

fn groups(tree: &mut cgroup::Tree, tasks: &[TaskIr]) -> TaskGroups {
    tasks
        .iter()
        .map(|t| {
            let start = t.group.as_ref().map_or(ROOT_GROUP, |g| tree.group_of(g));
            let phases = t
                .phases
                .iter()
                .map(|p| p.group.as_ref().map(|g| tree.group_of(g)))
                .collect();
            (start, phases)
        })
        .collect()
}

pub(crate) fn build(
    duration_ns: Option<u64>,
    ext: ExtRest,
    cgroups: CgroupsIr,
    machine: Machine,
    tasks: Vec<TaskIr>,
    declared: &Declared,
) -> Result<Spec, SpecError> {
    let mut tree = cgroup::tree(cgroups);
    let task_groups = groups(&mut tree, &tasks);
    cgroup::check(&tree, machine.cpus)?;
    cgroup::check_tasks(&tree, &tasks, &task_groups)?;

    // Facts gathered over the whole spec before any check.
    let task_index: HashMap<&str, u32> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i as u32))
        .collect();
    let mut locked: HashSet<String> = HashSet::new();
    let mut waited: HashSet<String> = HashSet::new();
    let mut forked: HashSet<&str> = HashSet::new();
    let mut writers: HashSet<&str> = HashSet::new();
    let mut readers: HashSet<&str> = HashSet::new();
    for t in &tasks {
        for ph in &t.phases {
            for pe in &ph.events {
                for ev in expand(pe, &t.name) {
                    match ev {
                        Ev::Lock(m) => {
                            locked.insert(m);
                        }
                        Ev::Wait { cond, .. } | Ev::Sync { cond, .. } => {
                            waited.insert(cond);
                        }
                        _ => {}
                    }
                }
                match &pe.ev {
                    Ev::Fork(n) => {
                        forked.insert(n.as_str());
                    }
                    Ev::Write { chan, .. } => {
                        writers.insert(chan.as_str());
                    }
                    Ev::Read { chan, .. } => {
                        readers.insert(chan.as_str());
                    }
                    _ => {}
                }
            }
        }
    }

    let mut mutexes = Table::default();
    let mut conds = Table::default();
    let mut barriers = Table::default();
    let mut barrier_count: Vec<u32> = Vec::new();
    let mut timers = Table::default();
    let mut timer_unique: Vec<bool> = Vec::new();
    let mut timer_mode: Vec<TimerMode> = Vec::new();
    let mut marks = Table::default();
    let chan_ids = &ext.channel_names;
    let mut device_ids = Names::default();
    for d in &ext.devices {
        device_ids.intern(&d.name);
    }
    let files = files(&ext.devices, &device_ids, &ext.files)?;
    let mut file_ids = Names::default();
    for f in &files {
        file_ids.intern(&f.name);
    }

    let mut out_tasks = Vec::with_capacity(tasks.len());
    for (t, (group, phase_groups)) in tasks.iter().zip(&task_groups) {
        // Barrier name → path of its first use in this task.
        let mut barriers_here: HashMap<String, String> = HashMap::new();
        let mut phases = Vec::with_capacity(t.phases.len());
        for (ph, phase_group) in t.phases.iter().zip(phase_groups) {
            let mut events = Vec::with_capacity(ph.events.len());
            for pe in &ph.events {
                let path = pe.path.as_str();
                check_declared_types(declared, &pe.ev, path)?;
                // Resume checks its target before it is expanded.
                if let Ev::Resume(n) = &pe.ev {
                    if !waited.contains(n) {
                        return Err(SpecError::new(
                            path,
                            format!("resume of {n:?}, but no task ever suspends on {n:?} (no suspend or wait event uses that name)"),
                        ));
                    }
                }
                for ev in expand(pe, &t.name) {
                    let e = match ev {
                        Ev::Run(ns) => Event::Run { ns },
                        Ev::Runtime(ns) => Event::Runtime { ns },
                        Ev::Sleep(ns) => Event::Sleep { ns },
                        Ev::Timer {
                            name,
                            unique,
                            period_ns,
                            mode,
                        } => {
                            let id = if unique {
                                let shown = format!("{}/{}", t.name, name);
                                timers.id_as(&format!("\0{}\0{}", t.name, name), &shown)
                            } else {
                                timers.id(&name)
                            };
                            if id as usize == timer_unique.len() {
                                timer_unique.push(unique);
                                timer_mode.push(TimerMode::Relative);
                            }
                            // rt-app: any use saying "absolute" makes the timer absolute.
                            if mode == Some(TimerMode::Absolute) {
                                timer_mode[id as usize] = TimerMode::Absolute;
                            }
                            Event::Timer {
                                timer: id,
                                period_ns,
                                mode: TimerMode::Relative, // fixed up below
                            }
                        }
                        Ev::Lock(m) => Event::Lock {
                            mutex: mutexes.id(&m),
                        },
                        Ev::Unlock(m) => {
                            need_locked(&locked, &m, path, "unlock of")?;
                            Event::Unlock {
                                mutex: mutexes.id(&m),
                            }
                        }
                        Ev::Wait { cond, mutex } => {
                            need_locked(&locked, &mutex, path, "wait with")?;
                            Event::Wait {
                                cond: conds.id(&cond),
                                mutex: mutexes.id(&mutex),
                            }
                        }
                        Ev::Sync { cond, mutex } => {
                            need_locked(&locked, &mutex, path, "sync with")?;
                            Event::Sync {
                                cond: conds.id(&cond),
                                mutex: mutexes.id(&mutex),
                            }
                        }
                        Ev::Signal(c) => {
                            need_waited(&waited, &c, path, "signal")?;
                            Event::Signal { cond: conds.id(&c) }
                        }
                        Ev::Broad(c) => {
                            need_waited(&waited, &c, path, "broad")?;
                            Event::Broad { cond: conds.id(&c) }
                        }
                        Ev::Barrier(b) => {
                            if t.instances == 0 || forked.contains(t.name.as_str()) {
                                return Err(SpecError::new(
                                    path,
                                    format!(
                                        "barrier {b:?} in task {:?}, which is created by fork: rt-app counts a barrier's \
                                         participants when it reads the file, so forked tasks cannot use barriers",
                                        t.name
                                    ),
                                ));
                            }
                            if let Some(first) = barriers_here.get(b.as_str()) {
                                return Err(SpecError::new(
                                    path,
                                    format!(
                                        "barrier {b:?} is used a second time in task {:?} (first at {first}); rt-app counts \
                                         every use as one more participant, so this barrier would never open; use one \
                                         barrier name per synchronisation point",
                                        t.name
                                    ),
                                ));
                            }
                            barriers_here.insert(b.clone(), path.to_string());
                            let id = barriers.id(&b);
                            if id as usize == barrier_count.len() {
                                barrier_count.push(0);
                            }
                            barrier_count[id as usize] += t.instances;
                            Event::Barrier { barrier: id }
                        }
                        Ev::Yield => Event::Yield,
                        Ev::Fork(n) => match task_index.get(n.as_str()) {
                            Some(&i) => Event::Fork { task: i },
                            None => {
                                return Err(SpecError::new(
                                    path,
                                    format!("fork of {n:?}, which is not a task in $.tasks"),
                                ))
                            }
                        },
                        Ev::Write { chan, bytes } => Event::Write {
                            chan: channel(chan_ids, &readers, &chan, path, true)?,
                            bytes,
                        },
                        Ev::Read { chan, bytes } => Event::Read {
                            chan: channel(chan_ids, &writers, &chan, path, false)?,
                            bytes,
                        },
                        Ev::Mark(l) => Event::Mark {
                            label: marks.id(&l),
                        },
                        Ev::Exit => Event::Exit,
                        Ev::Io {
                            target,
                            op,
                            bytes,
                            offset,
                            direct,
                            count,
                            depth,
                        } => IoSpec {
                            target: match target {
                                IoTargetName::Dev(dev) => IoTarget::Dev(device(
                                    &ext.devices,
                                    &device_ids,
                                    &dev,
                                    bytes,
                                    offset,
                                    path,
                                )?),
                                IoTargetName::File(f) => IoTarget::File(file(
                                    &files, &file_ids, &f, bytes, offset, path,
                                )?),
                            },
                            op,
                            bytes,
                            offset,
                            direct,
                            count,
                            depth,
                        }
                        .into_event(),
                        Ev::Fsync(f) => Event::Fsync {
                            file: file(&files, &file_ids, &f, 0, IoOffset::At(0), path)?,
                        },
                        Ev::Unlink(f) => Event::Unlink {
                            file: file(&files, &file_ids, &f, 0, IoOffset::At(0), path)?,
                        },
                        Ev::Suspend(_) | Ev::Resume(_) => unreachable!("expanded above"),
                    };
                    events.push(e);
                }
            }
            phases.push(Phase {
                name: ph.name.clone(),
                loop_count: ph.loop_count,
                events,
                attr: ph.attr.clone(),
                cpus: ph.cpus.as_ref().map(|c| c.cpus.clone()),
                group: *phase_group,
            });
        }
        out_tasks.push(TaskSpec {
            name: t.name.clone(),
            instances: t.instances,
            loop_count: t.loop_count,
            delay_ns: t.delay_ns,
            attr: t.attr.clone(),
            cpus: t.cpus.as_ref().map(|c| c.cpus.clone()),
            phases,
            process: t.process.clone(),
            group: *group,
            ioprio: t.ioprio,
        });
    }

    ownership::check(&tasks, expand)?;

    // Every timer event carries its resource's resolved mode.
    for t in &mut out_tasks {
        for ph in &mut t.phases {
            for e in &mut ph.events {
                if let Event::Timer { timer, mode, .. } = e {
                    *mode = timer_mode[*timer as usize];
                }
            }
        }
    }

    let headline = match ext.headline {
        HeadlineIr::None => Headline::None,
        HeadlineIr::Elapsed {
            mark,
            mark_path,
            name,
        } => match marks.ids.get(&mark) {
            Some(m) => Headline::ElapsedSinceMark { mark: m, name },
            None => {
                return Err(SpecError::new(
                    mark_path,
                    format!(
                    "the headline names mark {mark:?}, but no schedlab:mark event uses that label"
                ),
                ))
            }
        },
        HeadlineIr::Rate {
            mark,
            mark_path,
            name,
        } => match marks.ids.get(&mark) {
            Some(m) => Headline::MarkRate { mark: m, name },
            None => {
                return Err(SpecError::new(
                    mark_path,
                    format!(
                    "the headline names mark {mark:?}, but no schedlab:mark event uses that label"
                ),
                ))
            }
        },
        HeadlineIr::Wakeup { prefix, path, name } => {
            need_prefix(&out_tasks, &prefix, &path)?;
            Headline::WakeupLatency {
                task_prefix: prefix,
                name,
            }
        }
        HeadlineIr::Timer { prefix, path, name } => {
            need_prefix(&out_tasks, &prefix, &path)?;
            Headline::TimerLatency {
                task_prefix: prefix,
                name,
            }
        }
    };

    Ok(Spec {
        duration_ns,
        tasks: out_tasks,
        resources: Resources {
            mutexes: mutexes.names,
            conds: conds.names,
            barriers: barriers.names.into_iter().zip(barrier_count).collect(),
            timers: timers.names,
            timer_unique,
            channels: ext.channels,
            marks: marks.names,
            devices: ext.devices,
            files,
            vm: ext.vm,
        },
        machine,
        scheduler: ext.scheduler,
        headline,
        seed: ext.seed,
        cgroups: tree.groups,
    })
}

/// What a name is used as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Mutex,
    Cond,
    Barrier,
    Timer,
    /// suspend and resume use the name as a mutex and as a condition variable.
    MutexAndCond,
}

impl Use {
    fn what(self) -> &'static str {
        match self {
            Use::Mutex => "a mutex",
            Use::Cond => "a condition variable",
            Use::Barrier => "a barrier",
            Use::Timer => "a timer",
            Use::MutexAndCond => "a mutex and condition variable (suspend/resume)",
        }
    }

    /// Does a declaration of rt-app type `ty` (`string_to_resource()`) allow this use?
    fn allowed_by(self, ty: &str) -> bool {
        let cond = matches!(ty, "wait" | "signal" | "broadcast" | "sync");
        match self {
            Use::Mutex => ty == "mutex",
            Use::Cond => cond,
            Use::Barrier => ty == "barrier",
            Use::Timer => ty == "timer",
            Use::MutexAndCond => ty == "mutex" || cond,
        }
    }
}

/// The names an event uses and what it uses each as.
fn uses(ev: &Ev) -> Vec<(&str, Use)> {
    match ev {
        Ev::Lock(m) | Ev::Unlock(m) => vec![(m, Use::Mutex)],
        Ev::Wait { cond, mutex } | Ev::Sync { cond, mutex } => {
            vec![(cond, Use::Cond), (mutex, Use::Mutex)]
        }
        Ev::Signal(c) | Ev::Broad(c) => vec![(c, Use::Cond)],
        Ev::Barrier(b) => vec![(b, Use::Barrier)],
        Ev::Timer { name, .. } => vec![(name, Use::Timer)],
        Ev::Suspend(n) | Ev::Resume(n) if !n.is_empty() => vec![(n, Use::MutexAndCond)],
        _ => Vec::new(),
    }
}

/// A name declared in the legacy `resources` section is used only as the type declared.
/// (rt-app keys resources by name and type, so a use of another type would silently be a
/// second resource of that name, and the declaration would say something false.)
fn check_declared_types(declared: &Declared, ev: &Ev, path: &str) -> Result<(), SpecError> {
    if declared.is_empty() {
        return Ok(());
    }
    for (name, used) in uses(ev) {
        let Some((ty, at)) = declared.get(name) else {
            continue;
        };
        if !used.allowed_by(ty) {
            return Err(SpecError::new(
                path,
                format!(
                    "resource {name:?} is declared as type {ty:?} at {at}, but used here as {}: \
                     a resource has one type",
                    used.what()
                ),
            ));
        }
    }
    Ok(())
}

/// The index of device `name`, checking that the request fits on it.
fn device(
    devices: &[BlockDevice],
    ids: &Names,
    name: &str,
    bytes: u64,
    offset: IoOffset,
    path: &str,
) -> Result<ResId, SpecError> {
    let size = |i: usize| devices[i].model.size_bytes();
    extent_index("device", "devices", size, ids, name, bytes, offset, path)
}

/// The index of file `name`, checking that the request fits in it.
fn file(
    files: &[FileSpec],
    ids: &Names,
    name: &str,
    bytes: u64,
    offset: IoOffset,
    path: &str,
) -> Result<ResId, SpecError> {
    let size = |i: usize| files[i].bytes;
    extent_index("file", "files", size, ids, name, bytes, offset, path)
}

/// The index of the `kind` (a device or a file, declared in `$.schedlab.<table>`) called
/// `name`, checking that a request of `bytes` at `offset` ends within its `size`.
#[allow(clippy::too_many_arguments)]
fn extent_index(
    kind: &str,
    table: &str,
    size: impl Fn(usize) -> u64,
    ids: &Names,
    name: &str,
    bytes: u64,
    offset: IoOffset,
    path: &str,
) -> Result<ResId, SpecError> {
    let Some(i) = ids.get(name).map(|i| i as usize) else {
        return Err(SpecError::new(
            path,
            format!("{kind} {name:?} is not declared (expected a name from $.schedlab.{table})"),
        ));
    };
    let size = size(i);
    let start = match offset {
        IoOffset::At(o) => o,
        IoOffset::Sequential | IoOffset::Random => 0,
    };
    if start.saturating_add(bytes) > size {
        return Err(SpecError::new(
            path,
            format!(
                "a request of {bytes} bytes at offset {start} ends past the end of {kind} \
                 {name:?} ({size} bytes)"
            ),
        ));
    }
    Ok(i as ResId)
}

/// `schedlab.files` with their devices resolved: each on a declared device, inside it,
/// and overlapping no other file.
fn files(
    devices: &[BlockDevice],
    device_ids: &Names,
    irs: &[FileIr],
) -> Result<Vec<FileSpec>, SpecError> {
    let mut out = Vec::with_capacity(irs.len());
    for f in irs {
        let Some(dev) = device_ids.get(&f.dev) else {
            return Err(SpecError::new(
                format!("{}.dev", f.path),
                format!(
                    "device {:?} is not declared (expected a name from $.schedlab.devices)",
                    f.dev
                ),
            ));
        };
        let size = devices[dev as usize].model.size_bytes();
        if f.offset.saturating_add(f.bytes) > size {
            return Err(SpecError::new(
                &f.path,
                format!(
                    "file {:?} ({} bytes at offset {}) ends past the end of device {:?} ({size} bytes)",
                    f.name, f.bytes, f.offset, f.dev
                ),
            ));
        }
        out.push(FileSpec {
            name: f.name.clone(),
            dev: dev as ResId,
            offset: f.offset,
            bytes: f.bytes,
        });
    }
    // Overlaps: neighbours in (device, offset) order.
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by_key(|&i| (out[i].dev, out[i].offset, i));
    for w in order.windows(2) {
        let (a, b) = (&out[w[0]], &out[w[1]]);
        if a.dev == b.dev && a.offset + a.bytes > b.offset {
            let later = w[0].max(w[1]);
            let other = if later == w[0] { b } else { a };
            return Err(SpecError::new(
                &irs[later].path,
                format!(
                    "file {:?} overlaps file {:?} on device {:?} (files are disjoint extents)",
                    out[later].name, other.name, irs[later].dev
                ),
            ));
        }
    }
    Ok(out)
}

fn need_locked(locked: &HashSet<String>, m: &str, path: &str, what: &str) -> Result<(), SpecError> {
    if locked.contains(m) {
        return Ok(());
    }
    Err(SpecError::new(
        path,
        format!("{what} mutex {m:?}, which no lock event ever locks (expected a mutex named by some \"lock\")"),
    ))
}

fn need_waited(waited: &HashSet<String>, c: &str, path: &str, what: &str) -> Result<(), SpecError> {
    if waited.contains(c) {
        return Ok(());
    }
    Err(SpecError::new(
        path,
        format!("{what} of condition {c:?}, which no wait, sync or suspend event ever waits on"),
    ))
}

fn channel(
    ids: &Names,
    other_end: &HashSet<&str>,
    name: &str,
    path: &str,
    writing: bool,
) -> Result<ResId, SpecError> {
    let Some(id) = ids.get(name) else {
        return Err(SpecError::new(
            path,
            format!("channel {name:?} is not declared (expected a name from $.schedlab.pipes or $.schedlab.sockets)"),
        ));
    };
    if !other_end.contains(name) {
        let msg = if writing {
            format!("channel {name:?} is written but never read (no schedlab:read uses it), so its writers would block for ever once it is full")
        } else {
            format!("channel {name:?} is read but never written (no schedlab:write uses it), so its readers would block for ever")
        };
        return Err(SpecError::new(path, msg));
    }
    Ok(id)
}

fn need_prefix(tasks: &[TaskSpec], prefix: &str, path: &str) -> Result<(), SpecError> {
    if tasks.iter().any(|t| t.name.starts_with(prefix)) {
        return Ok(());
    }
    Err(SpecError::new(
        path,
        format!("no task name starts with {prefix:?}, so the headline would have no samples"),
    ))
}

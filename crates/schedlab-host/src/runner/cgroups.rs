//! The spec's cgroup tree as real cgroup v1 groups in the cpu, cpuset and cpuacct
//! hierarchies, made through the restore journal and read back.
//!
//! Each top-level group `/a` of the spec becomes `schedlab-<pid>-a` directly under each
//! hierarchy's root (so that it shares the root's RT bandwidth as the spec's group does;
//! an intermediate group would add a level of throttling), `/a/b` becomes
//! `schedlab-<pid>-a/b`. Settings are written parents first, each group's `rt_period_us`
//! before its `rt_runtime_us` and `cfs_period_us` before `cfs_quota_us`, and the spec's
//! root settings go to the global sysctls (`kernel.sched_rt_period_us`,
//! `kernel.sched_rt_runtime_us`). A thread joins its groups before it takes an RT policy
//! (the kernel refuses SCHED_FIFO in a group without RT runtime). Every group and setting
//! is undone by the journal, children first.

use std::fs;
use std::path::{Path, PathBuf};

use schedlab_core::result::{CfsBandwidthStats, GroupResult};
use schedlab_spec::model::{Cgroup, Spec};

use crate::doctor::cgroup_mounts;
use crate::journal::{Format, Journal};

/// The hierarchies a run's groups live in.
#[derive(Clone, Debug)]
struct Hierarchies {
    cpu: PathBuf,
    cpuset: PathBuf,
    cpuacct: PathBuf,
}

/// The run's groups: per spec group (by id), its directory in each hierarchy (`None` for
/// the root, whose tasks stay where they are).
pub struct Groups {
    dirs: Vec<Option<[PathBuf; 3]>>,
}

impl Groups {
    /// No groups: every task stays in the root.
    pub fn none(spec: &Spec) -> Self {
        Groups {
            dirs: vec![None; spec.cgroups.len()],
        }
    }

    /// Whether the spec has groups other than the root.
    pub fn needed(spec: &Spec) -> bool {
        spec.cgroups.len() > 1 || root_settings(&spec.cgroups[0]).next().is_some()
    }

    /// Make the spec's groups, journalled. An error names the group and file.
    pub fn make(spec: &Spec, journal: &mut Journal) -> Result<Self, String> {
        let h = hierarchies()?;
        for (file, value) in root_settings(&spec.cgroups[0]) {
            write(
                journal,
                Path::new("/proc/sys/kernel").join(file),
                &value,
                "/",
            )?;
        }
        let prefix = format!("schedlab-{}", std::process::id());
        let mut dirs = vec![None; spec.cgroups.len()];
        for (id, g) in spec.cgroups.iter().enumerate().skip(1) {
            let rel = format!("{prefix}-{}", g.path.trim_start_matches('/'));
            let made = [h.cpu.join(&rel), h.cpuset.join(&rel), h.cpuacct.join(&rel)];
            for (i, d) in made.iter().enumerate() {
                // cpu and cpuacct may be one hierarchy (`cpu,cpuacct`).
                if made[..i].contains(d) {
                    continue;
                }
                journal
                    .mkdir(d)
                    .map_err(|e| format!("cgroup {}: mkdir {}: {e}", g.path, d.display()))?;
            }
            configure(journal, g, &made, spec, &dirs)?;
            dirs[id] = Some(made);
        }
        Ok(Groups { dirs })
    }

    /// Each made group's CFS bandwidth counters (`cpu.stat`), read before the groups are
    /// removed.
    pub fn results(&self, spec: &Spec) -> Vec<GroupResult> {
        (spec.cgroups.iter().zip(&self.dirs))
            .filter_map(|(g, dirs)| {
                let cpu = &dirs.as_ref()?[0];
                let quota = g.cpu.cfs_quota_us.is_some_and(|q| q >= 0);
                Some(GroupResult {
                    path: g.path.clone(),
                    cfs_bandwidth: quota.then(|| cfs_stats(cpu)).flatten(),
                    rt_throttling: Vec::new(),
                })
            })
            .collect()
    }

    /// Move the calling thread into group `id` in every hierarchy (the root: nothing).
    pub fn join(&self, id: usize) -> Result<(), String> {
        let Some(dirs) = &self.dirs[id] else {
            return Ok(());
        };
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() };
        for d in dirs {
            fs::write(d.join("tasks"), tid.to_string())
                .map_err(|e| format!("joining {}: {e}", d.display()))?;
        }
        Ok(())
    }
}

/// `cpu.stat` of cgroup v1: nr_periods, nr_throttled, throttled_time (ns); the burst
/// counters where the kernel has them.
fn cfs_stats(cpu: &Path) -> Option<CfsBandwidthStats> {
    let text = fs::read_to_string(cpu.join("cpu.stat")).ok()?;
    let get = |k: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(k)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0)
    };
    Some(CfsBandwidthStats {
        nr_periods: get("nr_periods"),
        nr_throttled: get("nr_throttled"),
        throttled_time_ns: get("throttled_time"),
        nr_bursts: get("nr_bursts"),
        burst_time_ns: get("burst_time"),
    })
}

/// The spec root's settings, as the global sysctls they are.
fn root_settings(root: &Cgroup) -> impl Iterator<Item = (&'static str, String)> + '_ {
    let period = root
        .cpu
        .rt_period_us
        .map(|v| ("sched_rt_period_us", v.to_string()));
    let runtime = root
        .cpu
        .rt_runtime_us
        .map(|v| ("sched_rt_runtime_us", v.to_string()));
    period.into_iter().chain(runtime)
}

fn hierarchies() -> Result<Hierarchies, String> {
    let info = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let mounts = cgroup_mounts(&info);
    let find = |c: &str| {
        (mounts.iter())
            .find(|m| !m.v2 && m.controllers.iter().any(|x| x == c))
            .map(|m| m.path.clone())
            .ok_or_else(|| {
                format!(
                    "$.schedlab.cgroups: no cgroup v1 {c} hierarchy is mounted here (cgroup v2 \
                     has no RT bandwidth; `schedlab host doctor` shows what is)"
                )
            })
    };
    Ok(Hierarchies {
        cpu: find("cpu")?,
        cpuset: find("cpuset")?,
        cpuacct: find("cpuacct")?,
    })
}

/// Write one setting through the journal and check the kernel kept it (a CPU list as
/// the same set of CPUs: the kernel writes `0,1` back as `0-1`).
fn write(journal: &mut Journal, path: PathBuf, value: &str, group: &str) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let applied = journal
        .write(&path, value, Format::Plain)
        .map_err(|e| format!("cgroup {group}: {name} = {value}: {e}"))?;
    let kept = match name.as_str() {
        "cpuset.cpus" | "cpuset.mems" => cpu_set(&applied.actual) == cpu_set(value),
        _ => applied.as_requested(),
    };
    if !kept {
        return Err(format!(
            "cgroup {group}: {name} = {value}: the kernel applied {}",
            applied.actual
        ));
    }
    Ok(())
}

/// A group's settings, in the order the kernel accepts them.
fn configure(
    journal: &mut Journal,
    g: &Cgroup,
    [cpu, cpuset, _]: &[PathBuf; 3],
    spec: &Spec,
    made: &[Option<[PathBuf; 3]>],
) -> Result<(), String> {
    let path = g.path.as_str();
    let cpus = g
        .cpuset_cpus
        .clone()
        .or_else(|| inherited_cpus(spec, g))
        .map(|c| list(&c));
    let parent_set = match g.parent.and_then(|p| made[p as usize].as_ref()) {
        Some(p) => p[1].clone(),
        None => cpuset.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let cpus = match cpus {
        Some(c) => c,
        None => read(&parent_set.join("cpuset.cpus"))?,
    };
    write(journal, cpuset.join("cpuset.cpus"), &cpus, path)?;
    let mems = read(&parent_set.join("cpuset.mems"))?;
    write(journal, cpuset.join("cpuset.mems"), &mems, path)?;
    let c = &g.cpu;
    let settings: [(&str, Option<String>); 6] = [
        ("cpu.shares", c.shares.map(|v| v.to_string())),
        ("cpu.rt_period_us", c.rt_period_us.map(|v| v.to_string())),
        ("cpu.rt_runtime_us", c.rt_runtime_us.map(|v| v.to_string())),
        ("cpu.cfs_period_us", c.cfs_period_us.map(|v| v.to_string())),
        ("cpu.cfs_quota_us", c.cfs_quota_us.map(|v| v.to_string())),
        ("cpu.cfs_burst_us", c.cfs_burst_us.map(|v| v.to_string())),
    ];
    for (file, value) in settings {
        if let Some(v) = value {
            write(journal, cpu.join(file), &v, path)?;
        }
    }
    if c.uclamp_min.is_some() || c.uclamp_max.is_some() {
        return Err(format!(
            "$.schedlab.cgroups.{path}: cpu.uclamp is not set on the host yet"
        ));
    }
    Ok(())
}

/// The CPUs a group without `cpuset.cpus` has: its nearest ancestor's that sets them.
fn inherited_cpus(spec: &Spec, g: &Cgroup) -> Option<Vec<u32>> {
    let mut p = g.parent;
    while let Some(id) = p {
        let a = &spec.cgroups[id as usize];
        if a.cpuset_cpus.is_some() {
            return a.cpuset_cpus.clone();
        }
        p = a.parent;
    }
    None
}

/// The numbers of a kernel CPU list (`0-2,5`).
fn cpu_set(list: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn list(cpus: &[u32]) -> String {
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| format!("{}: {e}", path.display()))
}

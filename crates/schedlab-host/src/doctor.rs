//! `schedlab host doctor`: what this kernel and these privileges allow the host runner to
//! do, found by looking (procfs, sysfs, the mount table) and, for scheduling policies, by
//! trying on a throw-away thread. Nothing is changed.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::facts::KernelFacts;
use crate::journal::Format;
use crate::policy;

/// One finding: `ok` says whether the runner can use it; `detail` says what was found or
/// why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub area: &'static str,
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

impl Check {
    fn new(
        area: &'static str,
        name: impl Into<String>,
        ok: bool,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            area,
            name: name.into(),
            ok,
            detail: detail.into(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({"area": self.area, "name": self.name, "ok": self.ok, "detail": self.detail})
    }
}

/// The doctor's report: the kernel facts and every check.
#[derive(Clone, Debug)]
pub struct Report {
    pub kernel: KernelFacts,
    pub checks: Vec<Check>,
}

impl Report {
    pub fn to_json(&self) -> Value {
        json!({
            "kernel": self.kernel.to_json(),
            "checks": self.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Examine this machine.
pub fn examine() -> Report {
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut checks = vec![privileges()];
    checks.extend(policies());
    checks.extend(cgroups(&mounts));
    checks.extend(block_queues(Path::new("/sys/block")));
    checks.push(tracefs(&mounts));
    checks.extend(tools());
    Report {
        kernel: KernelFacts::read(),
        checks,
    }
}

fn privileges() -> Check {
    // SAFETY: geteuid has no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let detail = if root {
        "running as root: policies, cgroups, sysctls and block queues can be changed"
    } else {
        "not root: real-time policies, cgroups and system settings will be skipped"
    };
    Check::new("privileges", "root", root, detail)
}

fn policies() -> Vec<Check> {
    policy::POLICIES
        .iter()
        .map(|&(name, p)| match policy::try_policy(p) {
            Ok(()) => Check::new("policy", name, true, "sched_setattr applied it"),
            Err(e) => Check::new("policy", name, false, format!("refused: {e}")),
        })
        .collect()
}

/// A mounted cgroup hierarchy: v1 with its controllers, or the v2 tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupMount {
    pub path: PathBuf,
    pub v2: bool,
    /// v1: the controllers bound to the hierarchy (its super options).
    pub controllers: Vec<String>,
}

/// The cgroup hierarchies of a `/proc/self/mountinfo` text.
pub fn cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut r = right.split_whitespace();
        let (Some(fstype), Some(_source), Some(opts)) = (r.next(), r.next(), r.next()) else {
            continue;
        };
        let Some(path) = left.split_whitespace().nth(4) else {
            continue;
        };
        let known = [
            "cpu", "cpuacct", "cpuset", "blkio", "memory", "pids", "freezer", "devices",
        ];
        match fstype {
            "cgroup" => out.push(CgroupMount {
                path: PathBuf::from(path),
                v2: false,
                controllers: opts
                    .split(',')
                    .filter(|o| known.contains(o))
                    .map(str::to_string)
                    .collect(),
            }),
            "cgroup2" => out.push(CgroupMount {
                path: PathBuf::from(path),
                v2: true,
                controllers: Vec::new(),
            }),
            _ => {}
        }
    }
    out
}

fn cgroups(mountinfo: &str) -> Vec<Check> {
    let mounts = cgroup_mounts(mountinfo);
    let mut checks = Vec::new();
    let v1 = |c: &str| {
        mounts
            .iter()
            .find(|m| !m.v2 && m.controllers.iter().any(|x| x == c))
    };
    for controller in ["cpu", "cpuset", "cpuacct", "blkio"] {
        checks.push(match v1(controller) {
            Some(m) => Check::new("cgroup v1", controller, true, m.path.display().to_string()),
            None => Check::new(
                "cgroup v1",
                controller,
                false,
                "not mounted as a v1 hierarchy",
            ),
        });
    }
    let cpu = v1("cpu");
    let file_check = |name: &str, file: &str, why: &str| match cpu {
        Some(m) if m.path.join(file).exists() => Check::new(
            "cgroup v1",
            name,
            true,
            m.path.join(file).display().to_string(),
        ),
        Some(_) => Check::new("cgroup v1", name, false, format!("no {file}: {why}")),
        None => Check::new("cgroup v1", name, false, "no v1 cpu hierarchy"),
    };
    checks.push(file_check(
        "RT group scheduling",
        "cpu.rt_runtime_us",
        "the kernel was built without CONFIG_RT_GROUP_SCHED",
    ));
    checks.push(file_check(
        "CFS bandwidth",
        "cpu.cfs_quota_us",
        "the kernel was built without CONFIG_CFS_BANDWIDTH",
    ));
    checks.push(match mounts.iter().find(|m| m.v2) {
        Some(m) => {
            let ctrl = fs::read_to_string(m.path.join("cgroup.controllers")).unwrap_or_default();
            let has_cpu = ctrl.split_whitespace().any(|c| c == "cpu");
            let detail = format!(
                "{} (controllers: {}); cpu.max {}",
                m.path.display(),
                if ctrl.trim().is_empty() {
                    "none"
                } else {
                    ctrl.trim()
                },
                if has_cpu {
                    "available"
                } else {
                    "unavailable: cpu is not a v2 controller here"
                }
            );
            Check::new("cgroup v2", "cpu.max", has_cpu, detail)
        }
        None => Check::new("cgroup v2", "cpu.max", false, "no cgroup2 tree is mounted"),
    });
    checks
}

/// Each block device's I/O schedulers: the choices and the one in force.
fn block_queues(sys_block: &Path) -> Vec<Check> {
    let Ok(entries) = fs::read_dir(sys_block) else {
        return vec![Check::new("block", "devices", false, "no /sys/block")];
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("ram") && !unused_loop(&sys_block.join(n)))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let text = fs::read_to_string(sys_block.join(&n).join("queue/scheduler")).ok()?;
            let choices: Vec<&str> = text
                .split_whitespace()
                .map(|w| w.trim_start_matches('[').trim_end_matches(']'))
                .collect();
            let detail = format!(
                "in force: {}; choices: {}",
                Format::Choice.current(&text),
                choices.join(", ")
            );
            Some(Check::new("block", n, true, detail))
        })
        .collect()
}

/// A loop device with no file behind it (nothing to run I/O on).
fn unused_loop(dev: &Path) -> bool {
    dev.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("loop"))
        && !dev.join("loop/backing_file").exists()
}

fn tracefs(mounts: &str) -> Check {
    match crate::trace::tracefs_mount(mounts) {
        Some(p) => Check::new(
            "trace",
            "tracefs",
            true,
            format!("mounted at {}", p.display()),
        ),
        None => {
            let known = fs::read_to_string("/proc/filesystems")
                .is_ok_and(|f| f.lines().any(|l| l.ends_with("tracefs")));
            if known {
                Check::new(
                    "trace",
                    "tracefs",
                    true,
                    "not mounted; the kernel has it (mountable at /sys/kernel/tracing)",
                )
            } else {
                Check::new("trace", "tracefs", false, "the kernel has no tracefs")
            }
        }
    }
}

/// The field's tools the cross-checks run beside schedlab.
fn tools() -> Vec<Check> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["cyclictest", "hackbench", "fio", "rt-app"]
        .iter()
        .map(|tool| {
            let found = std::env::split_paths(&path)
                .map(|d| d.join(tool))
                .find(|p| p.is_file());
            match found {
                Some(p) => Check::new("tools", *tool, true, p.display().to_string()),
                None => Check::new(
                    "tools",
                    *tool,
                    false,
                    "not on PATH; its cross-check is skipped",
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_hierarchies_are_told_apart() {
        let info = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                    33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n\
                    40 31 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n\
                    41 31 0:38 / /sys/kernel/tracing rw - tracefs tracefs rw\n";
        let m = cgroup_mounts(info);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].controllers, vec!["cpu"]);
        assert_eq!(m[1].controllers, vec!["cpu", "cpuacct"]);
        assert!(m[2].v2);
        assert!(tracefs(info).ok);
    }
}

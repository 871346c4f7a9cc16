//! Cgroups: `schedlab.cgroups` (the cpu and cpuset controllers' settings) and the groups
//! rt-app's `taskgroup` keys name, built into one tree and checked as the kernel checks
//! the writes that would create it.
//!
//! Grammar: `"cgroups": {"/a": {"cpu.shares": 512, …}, "/a/b": {…}}`. Paths start with
//! `/`; repeated and trailing slashes are dropped (rt-app's `cgroup_mkdir()` skips them);
//! `.` and `..` are refused. Intermediate groups exist implicitly, as `mkdir -p` (and
//! rt-app) create them; a group named only by a `taskgroup` exists with the defaults.
//! Group ids: the root `/` is 0, then declared groups in file order, then groups named only
//! by taskgroups in the order tasks use them, each parent before its children.
//!
//! Keys are the files of cgroup v1 (`cpu.shares`, `cpu.rt_runtime_us`, `cpu.rt_period_us`,
//! `cpu.cfs_quota_us`, `cpu.cfs_period_us`, `cpu.cfs_burst_us`) or of cgroup v2
//! (`cpu.weight`, `cpu.max`, `cpu.max.burst`), plus `cpu.uclamp.min`, `cpu.uclamp.max` and
//! `cpuset.cpus` (both). The cpu controller lives in one hierarchy, so a spec uses v1 or
//! v2 names, not both. v2 values are stored as their v1 equivalents.
//!
//! Kernel rules (Linux 6.x; functions named so they can be found in any recent tree):
//! - `cpu.shares`: `sched_group_set_shares()` (kernel/sched/fair.c) clamps to
//!   `MIN_SHARES..=MAX_SHARES` = 2..=262144; schedlab refuses values outside rather than
//!   change them silently. The root group has no writable shares (EINVAL).
//! - `cpu.weight`: 1..=10000 (`CGROUP_WEIGHT_MIN/MAX`, else ERANGE), shares =
//!   round(weight · 1024 / 100) (`cpu_weight_write_u64()` in kernel/sched/core.c,
//!   `sched_weight_from_cgroup()` in kernel/sched/sched.h).
//! - RT group scheduling (kernel/sched/rt.c, `tg_set_rt_bandwidth()`,
//!   `sched_group_set_rt_runtime()`, `tg_rt_schedulable()`): period > 0; runtime -1
//!   (`RUNTIME_INF`) or at most `max_rt_runtime` = 2^44 − 1 ns; runtime ≤ period; the root
//!   may not have runtime 0; every group's ratio `to_ratio(period, runtime)` = runtime·2^20
//!   / period is at most the global one (sysctl_sched_rt_runtime / sysctl_sched_rt_period,
//!   950000 / 1000000 µs by default: the root group's settings here, which may be -1 for no
//!   limit), and the ratios of a group's children add up to at most its own.
//!   A child group starts with runtime 0, and the kernel refuses an RT task in a group with
//!   runtime 0 (`sched_rt_can_attach()`, and EPERM from `__sched_setscheduler()`).
//! - CFS bandwidth (`tg_set_bandwidth()` in kernel/sched/core.c, Linux 6.17): not on the
//!   root; period 1000..=1000000 µs; quota -1 or 1000..=2^44 − 1 µs; burst ≤ quota and
//!   burst + quota ≤ 2^44 − 1 µs. With v1 names a child's quota ratio may not exceed its
//!   nearest limited ancestor's (`tg_cfs_schedulable_down()`: EINVAL on cgroup v1, the
//!   minimum is taken on v2).
//! - `cpu.uclamp.min/max`: a percentage with at most two decimals, or "max"
//!   (`capacity_from_percent()`: ERANGE above 100, EINVAL otherwise); not on the root.
//! - `cpuset.cpus`: a list such as "0-1,3" (`cpulist_parse()`) or an array; the CPUs must
//!   exist and lie within the nearest ancestor's `cpuset.cpus` (cgroup v1's
//!   `validate_change()`; v2 would silently use the intersection); not on the root (the top
//!   cpuset is read-only); not empty (a task could not run there).
//!
//! rt-app itself refuses a taskgroup for a task whose policy is not SCHED_OTHER or
//! SCHED_IDLE ("No taskgroup support for policy"); schedlab accepts what the kernel
//! accepts, so such a spec does not run under rt-app.

use super::get::{self, Obj};
use super::sched::{self, CpuList};
use super::task::{GroupRef, TaskIr};
use crate::json::{Json, Number};
use crate::model::{
    self, group_cpus, Cgroup, CpuCgroup, GroupId, Policy, BW_SHIFT, BW_UNIT, ROOT_GROUP,
};
use crate::work::{self, Names};
use crate::SpecError;

/// `MIN_SHARES` and `MAX_SHARES` (kernel/sched/sched.h).
const MIN_SHARES: i128 = 2;
const MAX_SHARES: i128 = 1 << 18;
/// `MAX_BW` = 2^(64 − BW_SHIFT) − 1: the largest RT runtime in ns and CFS quota in µs.
const MAX_BW: u64 = (1 << (64 - BW_SHIFT)) - 1;
/// `min_bw_quota_period_us` and `max_bw_quota_period_us`.
const MIN_BW_US: u64 = 1_000;
const MAX_BW_PERIOD_US: u64 = 1_000_000;

/// Longest name of one group (`NAME_MAX`) and of a whole path (`PATH_MAX` − 1), in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 255;
pub(crate) const MAX_PATH_BYTES: usize = 4095;

const KEYS: &[&str] = &[
    "cpu.shares",
    "cpu.weight",
    "cpu.rt_runtime_us",
    "cpu.rt_period_us",
    "cpu.cfs_quota_us",
    "cpu.cfs_period_us",
    "cpu.cfs_burst_us",
    "cpu.max",
    "cpu.max.burst",
    "cpu.uclamp.min",
    "cpu.uclamp.max",
    "cpuset.cpus",
];

/// The knobs whose JSON path later checks report.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Knob {
    RtRuntime,
    RtPeriod,
    CfsQuota,
    CfsPeriod,
    CfsBurst,
    Cpuset,
}

/// One group as declared in `schedlab.cgroups`.
pub(crate) struct CgroupDecl {
    path: String,
    json_path: String,
    cpu: CpuCgroup,
    cpuset: Option<CpuList>,
    knobs: Vec<(Knob, String)>,
}

/// Which cgroup version's file names the spec uses, and where the first one was.
#[derive(Default)]
struct Version {
    v1: Option<String>,
    v2: Option<String>,
}

impl Version {
    fn note(&mut self, key: &str, path: &str) -> Result<(), SpecError> {
        let v2 = matches!(key, "cpu.weight" | "cpu.max" | "cpu.max.burst");
        let v1 = key.starts_with("cpu.") && !v2 && !key.starts_with("cpu.uclamp");
        let (mine, other, mine_name, other_name) = if v2 {
            (&mut self.v2, &self.v1, "v2", "v1")
        } else if v1 {
            (&mut self.v1, &self.v2, "v1", "v2")
        } else {
            return Ok(());
        };
        if let Some(first) = other {
            return Err(SpecError::new(
                path,
                format!(
                    "{key:?} is a cgroup {mine_name} file, but {first} already uses a cgroup \
                     {other_name} file: the cpu controller lives in one hierarchy, so use the \
                     names of one version"
                ),
            ));
        }
        mine.get_or_insert_with(|| path.to_string());
        Ok(())
    }

    fn is_v2(&self) -> bool {
        self.v2.is_some()
    }
}

/// Everything under `schedlab.cgroups`.
#[derive(Default)]
pub(crate) struct CgroupsIr {
    decls: Vec<CgroupDecl>,
    /// The declared paths (normalised) → index in `decls`.
    declared: Names,
    version: Version,
}

impl CgroupsIr {
    /// The highest CPU of each declared `cpuset.cpus`, with its path.
    pub(crate) fn highest_cpus(&self) -> impl Iterator<Item = &(u32, String)> {
        self.decls
            .iter()
            .filter_map(|d| d.cpuset.as_ref().map(|c| &c.highest))
    }
}

/// Parse `schedlab.cgroups`.
pub(crate) fn parse(v: &Json, path: &str) -> Result<CgroupsIr, SpecError> {
    let o = Obj::new(
        v,
        path,
        "the cgroups object ({\"/path\": {\"cpu.shares\": …}})",
    )?;
    let mut out = CgroupsIr::default();
    for (name, gv, gp) in o.iter() {
        let norm = normalize(name, &gp)?;
        if let Err(prev) = out.declared.insert(&norm) {
            return Err(SpecError::new(
                gp,
                format!(
                    "cgroup {norm:?} is declared twice (first at {}); paths are compared after \
                     dropping repeated and trailing slashes",
                    out.decls[prev as usize].json_path
                ),
            ));
        }
        let decl = group(&norm, gv, &gp, &mut out.version)?;
        out.decls.push(decl);
    }
    Ok(out)
}

/// A cgroup path with repeated and trailing slashes dropped: `/` or `/a/b`.
pub(crate) fn normalize(name: &str, path: &str) -> Result<String, SpecError> {
    if !name.starts_with('/') {
        return Err(SpecError::new(
            path,
            format!("expected a cgroup path starting with \"/\", found {name:?}"),
        ));
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(bad) = parts.iter().find(|p| matches!(**p, "." | "..")) {
        return Err(SpecError::new(
            path,
            format!("cgroup path {name:?} contains {bad:?}; write the path it leads to"),
        ));
    }
    if let Some(long) = parts.iter().find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(SpecError::new(
            path,
            format!(
                "a cgroup name of {} bytes (starting {:?}) is longer than the kernel's \
                 {MAX_NAME_BYTES} (NAME_MAX; mkdir fails with ENAMETOOLONG)",
                long.len(),
                long.chars().take(20).collect::<String>()
            ),
        ));
    }
    let norm = format!("/{}", parts.join("/"));
    if norm.len() > MAX_PATH_BYTES {
        return Err(SpecError::new(
            path,
            format!(
                "a cgroup path of {} bytes is longer than {MAX_PATH_BYTES} (the kernel's \
                 PATH_MAX less its final NUL: no path to such a group can be written)",
                norm.len()
            ),
        ));
    }
    Ok(norm)
}

fn group(norm: &str, v: &Json, path: &str, version: &mut Version) -> Result<CgroupDecl, SpecError> {
    let o = Obj::new(v, path, &format!("cgroup {norm:?}"))?;
    o.no_repeats(|_| false)?;
    let mut d = CgroupDecl {
        path: norm.to_string(),
        json_path: path.to_string(),
        cpu: CpuCgroup::default(),
        cpuset: None,
        knobs: Vec::new(),
    };
    for (k, kv, kp) in o.iter() {
        if !KEYS.contains(&k) {
            return Err(get::unknown_key(&kp, k, &format!("cgroup {norm:?}"), KEYS));
        }
        version.note(k, &kp)?;
        if norm == "/" && !matches!(k, "cpu.rt_runtime_us" | "cpu.rt_period_us") {
            return Err(SpecError::new(
                kp,
                format!(
                    "{k:?} cannot be set on the root cgroup (the kernel has no such writable \
                     file there); only cpu.rt_runtime_us and cpu.rt_period_us can"
                ),
            ));
        }
        knob(&mut d, k, kv, &kp)?;
    }
    Ok(d)
}

/// Read one key into the declaration.
fn knob(d: &mut CgroupDecl, key: &str, v: &Json, path: &str) -> Result<(), SpecError> {
    let c = &mut d.cpu;
    let mut mark = |k: Knob| d.knobs.push((k, path.to_string()));
    match key {
        "cpu.shares" => {
            let what = "cpu.shares (the kernel clamps it to 2..=262144)";
            c.shares = Some(get::int_in(v, path, what, MIN_SHARES, MAX_SHARES)? as u64);
        }
        "cpu.weight" => {
            let w = get::int_in(v, path, "cpu.weight", 1, 10_000)? as u64;
            c.shares = Some((w * 1024 + 50) / 100);
        }
        "cpu.rt_runtime_us" => {
            c.rt_runtime_us = Some(runtime_us(v, path, "cpu.rt_runtime_us")?);
            mark(Knob::RtRuntime);
        }
        "cpu.rt_period_us" => {
            let max = (u64::MAX / 1000) as i128;
            c.rt_period_us = Some(get::int_in(v, path, "cpu.rt_period_us", 1, max)? as u64);
            mark(Knob::RtPeriod);
        }
        "cpu.cfs_quota_us" => {
            c.cfs_quota_us = Some(runtime_us(v, path, "cpu.cfs_quota_us")?);
            mark(Knob::CfsQuota);
        }
        "cpu.cfs_period_us" => {
            c.cfs_period_us =
                Some(get::int_in(v, path, "cpu.cfs_period_us", 0, i64::MAX as i128)? as u64);
            mark(Knob::CfsPeriod);
        }
        "cpu.cfs_burst_us" | "cpu.max.burst" => {
            c.cfs_burst_us = Some(get::int_in(v, path, key, 0, i64::MAX as i128)? as u64);
            mark(Knob::CfsBurst);
        }
        "cpu.max" => {
            let (quota, period) = cpu_max(v, path)?;
            c.cfs_quota_us = Some(quota);
            mark(Knob::CfsQuota);
            if let Some(p) = period {
                c.cfs_period_us = Some(p);
                mark(Knob::CfsPeriod);
            }
        }
        "cpu.uclamp.min" => c.uclamp_min = Some(percent(v, path, key)?),
        "cpu.uclamp.max" => c.uclamp_max = Some(percent(v, path, key)?),
        _ => {
            d.cpuset = Some(cpu_list(v, path)?);
            d.knobs.push((Knob::Cpuset, path.to_string()));
        }
    }
    Ok(())
}

/// A runtime or quota in µs: -1 (unlimited) or ≥ 0.
fn runtime_us(v: &Json, path: &str, what: &str) -> Result<i64, SpecError> {
    Ok(get::int_in(
        v,
        path,
        &format!("{what} (-1 = unlimited)"),
        -1,
        i64::MAX as i128,
    )? as i64)
}

/// `cpu.max`: "$MAX $PERIOD" with $MAX "max" or µs, $PERIOD optional
/// (`cpu_period_quota_parse()`).
fn cpu_max(v: &Json, path: &str) -> Result<(i64, Option<u64>), SpecError> {
    let s = get::string(
        v,
        path,
        "cpu.max (\"max\" or a quota in µs, then optionally a period)",
    )?;
    let bad = || {
        SpecError::new(
            path,
            format!("expected cpu.max as \"max\" or \"<quota µs>\", optionally followed by \" <period µs>\", found {s:?}"),
        )
    };
    let mut words = s.split_whitespace();
    let quota = match words.next().ok_or_else(bad)? {
        "max" => -1,
        q => q.parse::<i64>().ok().filter(|q| *q >= 0).ok_or_else(bad)?,
    };
    let period = match words.next() {
        None => None,
        Some(p) => Some(p.parse::<u64>().map_err(|_| bad())?),
    };
    if words.next().is_some() {
        return Err(bad());
    }
    Ok((quota, period))
}

/// `cpu.uclamp.*`: a percentage (integer, or a string with at most two decimals) or "max",
/// in hundredths of a percent.
fn percent(v: &Json, path: &str, key: &str) -> Result<u32, SpecError> {
    let bad = |found: String| {
        SpecError::new(
            path,
            format!(
                "expected {key} as a percentage 0..=100 (at most two decimals, e.g. \"12.5\") or \
                 \"max\", found {found}"
            ),
        )
    };
    let hundredths: i128 = match v {
        Json::Num(Number::Int(i)) => i.saturating_mul(100),
        Json::Str(s) if s == "max" => 10_000,
        Json::Str(s) => {
            let (int, frac) = s.split_once('.').unwrap_or((s, ""));
            let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
            if !digits(int) || frac.len() > 2 || (!frac.is_empty() && !digits(frac)) {
                return Err(bad(v.describe()));
            }
            let int: i128 = int.parse().map_err(|_| bad(v.describe()))?;
            let frac: i128 = format!("{frac:0<2}").parse().unwrap_or(0);
            int.saturating_mul(100) + frac
        }
        other => return Err(bad(other.describe())),
    };
    if !(0..=10_000).contains(&hundredths) {
        return Err(bad(v.describe()));
    }
    Ok(hundredths as u32)
}

/// `cpuset.cpus`: "0-1,3" or [0, 1, 3].
fn cpu_list(v: &Json, path: &str) -> Result<CpuList, SpecError> {
    let Json::Str(s) = v else {
        return sched::cpus(v, path);
    };
    let bad = || {
        SpecError::new(
            path,
            format!("expected a CPU list such as \"0-1,3\" (or an array), found {s:?}"),
        )
    };
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: i128 = lo.trim().parse().map_err(|_| bad())?;
        let hi: i128 = hi.trim().parse().map_err(|_| bad())?;
        if lo > hi {
            return Err(bad());
        }
        let (lo, hi) = (sched::cpu_number(lo, path)?, sched::cpu_number(hi, path)?);
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    let highest = (*cpus.last().ok_or_else(bad)?, path.to_string());
    Ok(CpuList { cpus, highest })
}

/// The built tree and where each group was declared or first named.
pub(crate) struct Tree {
    pub groups: Vec<Cgroup>,
    /// Each group but the root, keyed by [`child_key`] → its id − 1.
    ids: Names,
    /// Each group's children, in id order.
    children: Vec<Vec<GroupId>>,
    json_paths: Vec<String>,
    knobs: Vec<Vec<(Knob, String)>>,
    cpusets: Vec<Option<CpuList>>,
    v2: bool,
}

impl Tree {
    /// The id of group `path` (normalised), creating it and the groups on the way to it
    /// (as `mkdir -p` does) if they are new. The path is walked from the root one name at
    /// a time, each looked up among its parent's children, so a path costs its length.
    fn intern(&mut self, path: &str, json_path: &str) -> GroupId {
        let mut g = ROOT_GROUP;
        let mut end = 0;
        for name in path.split('/').filter(|n| !n.is_empty()) {
            end += 1 + name.len();
            let key = child_key(g, name);
            g = match self.ids.get(&key) {
                Some(c) => c as GroupId + 1,
                None => self.push_group(&path[..end], g, &key, json_path),
            };
        }
        g
    }

    fn push_group(&mut self, path: &str, parent: GroupId, key: &str, json_path: &str) -> GroupId {
        let id = self.ids.intern(key) as GroupId + 1;
        debug_assert_eq!(id as usize, self.groups.len());
        self.children[parent as usize].push(id);
        self.children.push(Vec::new());
        self.groups.push(Cgroup {
            path: path.to_string(),
            parent: Some(parent),
            cpu: CpuCgroup::default(),
            cpuset_cpus: None,
        });
        self.json_paths.push(json_path.to_string());
        self.knobs.push(Vec::new());
        self.cpusets.push(None);
        (self.groups.len() - 1) as GroupId
    }

    /// The group a `taskgroup` names (created with defaults if new).
    pub(crate) fn group_of(&mut self, r: &GroupRef) -> GroupId {
        self.intern(&r.norm, &r.path)
    }

    fn knob_path(&self, g: GroupId, k: Knob) -> &str {
        self.knobs[g as usize]
            .iter()
            .find(|(kk, _)| *kk == k)
            .map_or(self.json_paths[g as usize].as_str(), |(_, p)| p.as_str())
    }

    /// The CPUs group `g` may use: its nearest `cpuset.cpus`, or `None` for all.
    pub(crate) fn effective_cpus(&self, g: GroupId) -> Option<&[u32]> {
        group_cpus(&self.groups, g)
    }

    fn rt_runtime_us(&self, g: GroupId) -> i64 {
        self.groups[g as usize].rt_runtime_us()
    }

    fn rt_period_us(&self, g: GroupId) -> u64 {
        self.groups[g as usize].rt_period_us()
    }

    fn children(&self, g: GroupId) -> impl Iterator<Item = GroupId> + '_ {
        let kids = &self.children[g as usize];
        work::step(kids.len() as u64);
        kids.iter().copied()
    }
}

/// The key of the child `name` of group `parent` in [`Tree::ids`].
fn child_key(parent: GroupId, name: &str) -> String {
    format!("{parent}/{name}")
}

/// The tree of declared groups (no taskgroups yet).
pub(crate) fn tree(ir: CgroupsIr) -> Tree {
    let mut t = Tree {
        groups: vec![Cgroup::root()],
        ids: Names::default(),
        children: vec![Vec::new()],
        json_paths: vec!["$.schedlab.cgroups".to_string()],
        knobs: vec![Vec::new()],
        cpusets: vec![None],
        v2: ir.version.is_v2(),
    };
    for d in ir.decls {
        let g = t.intern(&d.path, &d.json_path) as usize;
        t.json_paths[g] = d.json_path;
        t.groups[g].cpu = d.cpu;
        t.groups[g].cpuset_cpus = d.cpuset.as_ref().map(|c| c.cpus.clone());
        t.cpusets[g] = d.cpuset;
        t.knobs[g] = d.knobs;
    }
    t
}

/// Check every group's settings once the machine has `ncpus` CPUs.
pub(crate) fn check(t: &Tree, ncpus: u32) -> Result<(), SpecError> {
    work::step(t.groups.len() as u64);
    for g in 0..t.groups.len() as GroupId {
        check_rt(t, g)?;
        check_cfs(t, g)?;
        check_cpuset(t, g, ncpus)?;
    }
    for g in 0..t.groups.len() as GroupId {
        check_rt_children(t, g)?;
    }
    check_cfs_hierarchy(t)
}

/// `to_ratio()` of a runtime that may be `RUNTIME_INF` (`None`), whose ratio is 1.
fn to_ratio(period: u64, runtime: Option<u64>) -> u128 {
    runtime.map_or(BW_UNIT, |r| model::to_ratio(period, r)) as u128
}

fn rt_ratio(t: &Tree, g: GroupId) -> u128 {
    let runtime = t.rt_runtime_us(g);
    let runtime_ns = (runtime >= 0).then(|| runtime as u64 * 1000);
    to_ratio(t.rt_period_us(g) * 1000, runtime_ns)
}

fn check_rt(t: &Tree, g: GroupId) -> Result<(), SpecError> {
    let (runtime, period) = (t.rt_runtime_us(g), t.rt_period_us(g));
    let at = t.knob_path(g, Knob::RtRuntime);
    let name = &t.groups[g as usize].path;
    let err = |why: String| Err(SpecError::new(at, format!("cgroup {name:?}: {why}")));
    if g == ROOT_GROUP && runtime == 0 {
        return err("the root group's cpu.rt_runtime_us cannot be 0 (EINVAL: the kernel's own RT threads could never run)".into());
    }
    if runtime >= 0 {
        if (runtime as u64).saturating_mul(1000) > MAX_BW {
            return err(format!(
                "cpu.rt_runtime_us {runtime} is above the kernel's limit of {} µs (EINVAL)",
                MAX_BW / 1000
            ));
        }
        if runtime as u64 > period {
            return err(format!(
                "cpu.rt_runtime_us {runtime} is more than cpu.rt_period_us {period} (EINVAL: \
                 a group cannot have more runtime than its period)"
            ));
        }
    }
    if g == ROOT_GROUP {
        // The root's settings are the global ones (sched_rt_runtime_us /
        // sched_rt_period_us), which may be -1: no limit.
        return Ok(());
    }
    let global = rt_ratio(t, ROOT_GROUP);
    let own = rt_ratio(t, g);
    if own > global {
        return err(format!(
            "cpu.rt_runtime_us/cpu.rt_period_us = {}/{period} is more than the global RT limit \
             {}/{} (sched_rt_runtime_us / sched_rt_period_us, the root group's settings; \
             EINVAL)",
            if runtime < 0 {
                "-1 (unlimited)".to_string()
            } else {
                runtime.to_string()
            },
            t.rt_runtime_us(ROOT_GROUP),
            t.rt_period_us(ROOT_GROUP)
        ));
    }
    Ok(())
}

/// The ratios of a group's children add up to at most its own. Reported at the last child
/// that gives itself RT runtime, the one that tips the sum over.
fn check_rt_children(t: &Tree, g: GroupId) -> Result<(), SpecError> {
    let own = rt_ratio(t, g);
    let sum: u128 = t.children(g).map(|c| rt_ratio(t, c)).sum();
    if sum <= own {
        return Ok(());
    }
    let given: Vec<GroupId> = t.children(g).filter(|&c| t.rt_runtime_us(c) != 0).collect();
    let at = given.last().map_or(t.knob_path(g, Knob::RtRuntime), |&c| {
        t.knob_path(c, Knob::RtRuntime)
    });
    let kids: Vec<String> = given
        .iter()
        .map(|&c| {
            let (r, p) = (t.rt_runtime_us(c), t.rt_period_us(c));
            format!("{} {r}/{p}", t.groups[c as usize].path)
        })
        .collect();
    Err(SpecError::new(
        at,
        format!(
            "the RT bandwidth (cpu.rt_runtime_us/cpu.rt_period_us) of the children of cgroup \
             {:?} ({}) adds up to more than its own {}/{} (EINVAL: the children's \
             runtime/period may not exceed the parent's)",
            t.groups[g as usize].path,
            kids.join(", "),
            t.rt_runtime_us(g),
            t.rt_period_us(g)
        ),
    ))
}

/// The CFS bandwidth of `g` as the kernel would hold it: (period µs, quota µs or None for
/// unlimited, burst µs), or `None` when no CFS knob is set.
fn cfs_of(t: &Tree, g: GroupId) -> Option<(u64, Option<u64>, u64)> {
    let c = &t.groups[g as usize].cpu;
    if c.cfs_period_us.is_none() && c.cfs_quota_us.is_none() && c.cfs_burst_us.is_none() {
        return None;
    }
    let quota = c.cfs_quota_us.filter(|q| *q >= 0).map(|q| q as u64);
    Some((
        t.groups[g as usize].cfs_period_us(),
        quota,
        c.cfs_burst_us.unwrap_or(0),
    ))
}

fn check_cfs(t: &Tree, g: GroupId) -> Result<(), SpecError> {
    let Some((period, quota, burst)) = cfs_of(t, g) else {
        return Ok(());
    };
    let name = &t.groups[g as usize].path;
    let err = |k: Knob, why: String| {
        Err(SpecError::new(
            t.knob_path(g, k),
            format!("cgroup {name:?}: {why} (EINVAL from tg_set_bandwidth())"),
        ))
    };
    if !(MIN_BW_US..=MAX_BW_PERIOD_US).contains(&period) {
        return err(
            Knob::CfsPeriod,
            format!("expected a CFS period of {MIN_BW_US}..={MAX_BW_PERIOD_US} µs, found {period}"),
        );
    }
    if let Some(q) = quota {
        if !(MIN_BW_US..=MAX_BW).contains(&q) {
            return err(
                Knob::CfsQuota,
                format!("expected a CFS quota of -1 (unlimited) or {MIN_BW_US}..={MAX_BW} µs, found {q}"),
            );
        }
        if burst > q || burst + q > MAX_BW {
            return err(
                Knob::CfsBurst,
                format!("expected a CFS burst of at most the quota ({q} µs), found {burst}"),
            );
        }
    }
    Ok(())
}

/// cgroup v1: a group's quota ratio may not exceed its nearest limited ancestor's.
fn check_cfs_hierarchy(t: &Tree) -> Result<(), SpecError> {
    if t.v2 {
        return Ok(());
    }
    // Parents come before children, so one pass sees every parent's value first.
    let mut hq: Vec<Option<u128>> = vec![None; t.groups.len()];
    for g in 1..t.groups.len() {
        let parent = hq[t.groups[g].parent.unwrap_or(ROOT_GROUP) as usize];
        let own = cfs_of(t, g as GroupId).and_then(|(p, q, _)| q.map(|q| to_ratio(p, Some(q))));
        hq[g] = match (own, parent) {
            (None, p) => p,
            (Some(o), Some(p)) if o > p => {
                return Err(SpecError::new(
                    t.knob_path(g as GroupId, Knob::CfsQuota),
                    format!(
                        "cgroup {:?}: its CFS quota/period is a larger share of a CPU than an \
                         ancestor's (EINVAL on cgroup v1: a child's quota may not exceed its \
                         parent's)",
                        t.groups[g].path
                    ),
                ))
            }
            (Some(o), _) => Some(o),
        };
    }
    Ok(())
}

fn check_cpuset(t: &Tree, g: GroupId, ncpus: u32) -> Result<(), SpecError> {
    let Some(list) = &t.cpusets[g as usize] else {
        return Ok(());
    };
    if list.highest.0 >= ncpus {
        return Err(sched::cpu_not_on_machine(
            list.highest.0,
            &list.highest.1,
            ncpus,
        ));
    }
    let parent = t.groups[g as usize].parent.unwrap_or(ROOT_GROUP);
    if let Some(allowed) = t.effective_cpus(parent) {
        if let Some(c) = list.cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(SpecError::new(
                t.knob_path(g, Knob::Cpuset),
                format!(
                    "cgroup {:?}: CPU {c} is not in its parent's cpuset.cpus {allowed:?} (a \
                     cpuset's CPUs must lie within its parent's)",
                    t.groups[g as usize].path
                ),
            ));
        }
    }
    Ok(())
}

/// What a task is while it runs: its policy, group and affinity, and where the last of
/// them was set.
struct State<'a> {
    policy: Policy,
    group: GroupId,
    cpus: Option<&'a [u32]>,
    path: &'a str,
}

/// Check every state a task goes through (its start, then each phase, twice round the
/// phase list, which reaches every state a looping task can be in): an RT task needs a
/// group with RT runtime, and the task's CPUs must meet its group's cpuset.
pub(crate) fn check_tasks(
    t: &Tree,
    tasks: &[TaskIr],
    groups: &[(GroupId, Vec<Option<GroupId>>)],
) -> Result<(), SpecError> {
    for (task, (group, phase_groups)) in tasks.iter().zip(groups) {
        let mut s = State {
            policy: task.attr.policy,
            group: *group,
            cpus: task.cpus.as_ref().map(|c| c.cpus.as_slice()),
            path: task
                .group
                .as_ref()
                .map_or(task.path.as_str(), |g| g.path.as_str()),
        };
        check_state(t, &s)?;
        for _ in 0..2 {
            for (ph, g) in task.phases.iter().zip(phase_groups) {
                if let Some(a) = &ph.attr {
                    s.policy = a.policy;
                    s.path = &ph.path;
                }
                if let Some(c) = &ph.cpus {
                    s.cpus = Some(&c.cpus);
                    s.path = &ph.path;
                }
                if let Some(g) = g {
                    s.group = *g;
                    s.path = ph
                        .group
                        .as_ref()
                        .map_or(ph.path.as_str(), |r| r.path.as_str());
                }
                check_state(t, &s)?;
            }
        }
    }
    Ok(())
}

fn check_state(t: &Tree, s: &State) -> Result<(), SpecError> {
    let name = &t.groups[s.group as usize].path;
    if s.policy.is_rt() && s.group != ROOT_GROUP && t.rt_runtime_us(s.group) == 0 {
        return Err(SpecError::new(
            s.path,
            format!(
                "a {} task in cgroup {name:?}, whose cpu.rt_runtime_us is 0: the kernel refuses \
                 RT tasks in a group without RT runtime (EPERM/EINVAL); give the group \
                 cpu.rt_runtime_us in $.schedlab.cgroups",
                s.policy.as_str()
            ),
        ));
    }
    if let (Some(mine), Some(allowed)) = (s.cpus, t.effective_cpus(s.group)) {
        if !mine.iter().any(|c| allowed.contains(c)) {
            return Err(SpecError::new(
                s.path,
                format!(
                    "the task's CPUs {mine:?} and cgroup {name:?}'s cpuset.cpus {allowed:?} \
                     have no CPU in common: it could run nowhere (EINVAL from sched_setaffinity)"
                ),
            ));
        }
    }
    Ok(())
}

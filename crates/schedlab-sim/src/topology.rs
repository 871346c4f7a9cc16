//! The machine's topology (packages, cores, SMT threads, last-level caches) and the Linux
//! scheduling-domain hierarchy built from it.
//!
//! Source: Linux 6.1.192 `kernel/sched/topology.c` (the Debian `linux-source-6.1` tree):
//! `sd_degenerate` / `sd_parent_degenerate` (l.169-205, with `SD_DEGENERATE_GROUPS_MASK`
//! from the `SDF_NEEDS_GROUPS` flags of `include/linux/sched/sd_flags.h`),
//! `cpu_attach_domain` (l.707-760: degenerate parents removed bottom-up, SD_PREFER_SIBLING
//! handed down, then a degenerate base domain), `build_sched_groups` (l.1222-1266: a
//! domain's groups are its child domains' spans, the CPU's own group first), `sd_init`
//! (l.1539-1655), `default_topology` (l.1660-1673) and x86's `x86_topology`
//! (arch/x86/kernel/smpboot.c l.602-614: SMT, MC, DIE), `build_sched_domain`
//! (l.2183-2212) and `build_sched_domains` (l.2253-2380: the levels are built bottom-up and
//! the walk stops at the first level spanning the whole machine; `imb_numa_nr`), and the
//! topology flags of `include/linux/sched/topology.h` (`cpu_smt_flags` =
//! SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES, `cpu_core_flags` =
//! SD_SHARE_PKG_RESOURCES, `cpu_numa_flags` = SD_NUMA). The v5.4 constants (busy_factor
//! 32, imbalance_pct 125 outside SMT and LLC levels) are those of torvalds/linux
//! `kernel/sched/topology.c` `sd_init` in the stored copy 664b0bae (v4.16 era; unchanged
//! until v5.10 lowered them to 16 and 117).
//!
//! The levels, bottom-up, as x86 builds them for a machine whose packages are NUMA nodes:
//! SMT (the hardware threads of a core), MC (the cores sharing a last-level cache), DIE
//! (the package: `cpu_cpu_mask`, the node) and, with several packages, NUMA (the whole
//! machine, one group per package, the node distance below `node_reclaim_distance`, so
//! wake-affine and fork balancing stay on). A level with the same span as its child is
//! removed as the kernel removes it.
//!
//! Simplifications: every CPU has capacity SCHED_CAPACITY_SCALE (no asymmetric or
//! reduced capacity, no SD_ASYM_PACKING); no cluster (CLS) level; one NUMA level (two
//! node distances: local and remote); no isolated CPUs, cpusets or relax_domain_level.

use crate::types::{CpuId, CpuMask};

/// The shape of the machine (the spec's `schedlab.machine.topology`; CPU numbering:
/// `cpu = (package · cores_per_package + core) · threads_per_core + thread`, so the SMT
/// siblings of a core are consecutive).
pub use schedlab_spec::model::Topology;

/// The CPU masks of a [`Topology`] the kernel's topology functions give, and its
/// scheduling domains.
pub trait TopologyMasks {
    /// `cpu_smt_mask`: the hardware threads of `cpu`'s core.
    fn smt_mask(&self, cpu: CpuId) -> CpuMask;
    /// `cpu_coregroup_mask`: the CPUs sharing `cpu`'s last-level cache.
    fn llc_mask(&self, cpu: CpuId) -> CpuMask;
    /// `cpu_cpu_mask`: the CPUs of `cpu`'s package (its NUMA node).
    fn package_mask(&self, cpu: CpuId) -> CpuMask;
    /// Every CPU.
    fn machine_mask(&self) -> CpuMask;
    /// The scheduling domains of every CPU with the given `sd_init` constants.
    fn build_domains(&self, era: SdEra) -> SchedDomains;
}

impl TopologyMasks for Topology {
    fn smt_mask(&self, cpu: CpuId) -> CpuMask {
        let core = self.core_of(cpu.0);
        mask_where(self, |c| self.core_of(c.0) == core)
    }

    fn llc_mask(&self, cpu: CpuId) -> CpuMask {
        let llc = self.llc_of(cpu.0);
        mask_where(self, |c| self.llc_of(c.0) == llc)
    }

    fn package_mask(&self, cpu: CpuId) -> CpuMask {
        let p = self.package_of(cpu.0);
        mask_where(self, |c| self.package_of(c.0) == p)
    }

    fn machine_mask(&self) -> CpuMask {
        CpuMask::first_n(self.nr_cpus() as usize)
    }

    fn build_domains(&self, era: SdEra) -> SchedDomains {
        SchedDomains::build(self, era)
    }
}

/// The CPUs of `t` for which `f` holds.
fn mask_where(t: &Topology, f: impl Fn(CpuId) -> bool) -> CpuMask {
    let mut m = CpuMask::empty();
    for c in (0..t.nr_cpus()).map(CpuId) {
        if f(c) {
            m.set(c);
        }
    }
    m
}

/// Scheduling-domain flags (`include/linux/sched/sd_flags.h`, the ones modelled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SdFlags(pub u32);

impl SdFlags {
    pub const BALANCE_NEWIDLE: SdFlags = SdFlags(1 << 0);
    pub const BALANCE_EXEC: SdFlags = SdFlags(1 << 1);
    pub const BALANCE_FORK: SdFlags = SdFlags(1 << 2);
    pub const BALANCE_WAKE: SdFlags = SdFlags(1 << 3);
    pub const WAKE_AFFINE: SdFlags = SdFlags(1 << 4);
    pub const SHARE_CPUCAPACITY: SdFlags = SdFlags(1 << 5);
    /// SD_SHARE_PKG_RESOURCES (renamed SD_SHARE_LLC in 6.10): the span shares a cache.
    pub const SHARE_PKG_RESOURCES: SdFlags = SdFlags(1 << 6);
    pub const SERIALIZE: SdFlags = SdFlags(1 << 7);
    pub const PREFER_SIBLING: SdFlags = SdFlags(1 << 8);
    pub const NUMA: SdFlags = SdFlags(1 << 9);

    /// `SD_DEGENERATE_GROUPS_MASK`: the flags with SDF_NEEDS_GROUPS (meaningless with
    /// a single group). SD_WAKE_AFFINE is the one modelled flag without it.
    pub const NEEDS_GROUPS: SdFlags = SdFlags(
        Self::BALANCE_NEWIDLE.0
            | Self::BALANCE_EXEC.0
            | Self::BALANCE_FORK.0
            | Self::BALANCE_WAKE.0
            | Self::SHARE_CPUCAPACITY.0
            | Self::SHARE_PKG_RESOURCES.0
            | Self::SERIALIZE.0
            | Self::PREFER_SIBLING.0
            | Self::NUMA.0,
    );

    #[inline]
    pub fn has(self, f: SdFlags) -> bool {
        self.0 & f.0 != 0
    }

    #[inline]
    pub fn with(self, f: SdFlags) -> SdFlags {
        SdFlags(self.0 | f.0)
    }

    #[inline]
    pub fn without(self, f: SdFlags) -> SdFlags {
        SdFlags(self.0 & !f.0)
    }
}

/// A topology level (`struct sched_domain_topology_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Smt,
    Mc,
    Die,
    Numa,
}

impl Level {
    /// The kernel's name for the level (`SD_INIT_NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Smt => "SMT",
            Level::Mc => "MC",
            Level::Die => "DIE",
            Level::Numa => "NUMA",
        }
    }

    /// The level's `tl->sd_flags()` (topology flags).
    fn topology_flags(self) -> SdFlags {
        match self {
            Level::Smt => SdFlags::SHARE_CPUCAPACITY.with(SdFlags::SHARE_PKG_RESOURCES),
            Level::Mc => SdFlags::SHARE_PKG_RESOURCES,
            Level::Die => SdFlags::default(),
            Level::Numa => SdFlags::NUMA,
        }
    }
}

/// Which kernel's `sd_init` constants a policy models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdEra {
    /// v5.4-v5.9: busy_factor 32, imbalance_pct 125 (SMT 110, LLC 117).
    V5_4,
    /// v5.10 onwards (Linux 6.1 read): busy_factor 16, imbalance_pct 117 (SMT 110).
    V6_1,
}

/// The behaviour `sd_init` derives from a level's flags and span weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdInit {
    /// Balance interval bounds (ms): `min_interval = sd_weight`, `max_interval = 2 ·
    /// sd_weight`; `balance_interval` starts at `min_interval`.
    pub min_interval: u64,
    pub max_interval: u64,
    pub busy_factor: u64,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    pub flags: SdFlags,
}

/// `sd_init` for a level of `weight` CPUs with topology flags `tl_flags`.
pub fn sd_init(era: SdEra, tl_flags: SdFlags, weight: u32) -> SdInit {
    let (busy_factor, imbalance_pct) = match era {
        SdEra::V5_4 => (32, 125),
        SdEra::V6_1 => (16, 117),
    };
    let flags = SdFlags::BALANCE_NEWIDLE
        .with(SdFlags::BALANCE_EXEC)
        .with(SdFlags::BALANCE_FORK)
        .with(SdFlags::WAKE_AFFINE)
        .with(SdFlags::PREFER_SIBLING)
        .with(tl_flags);
    let mut sd = SdInit {
        min_interval: weight as u64,
        max_interval: 2 * weight as u64,
        busy_factor,
        imbalance_pct,
        cache_nice_tries: 0,
        flags,
    };
    if flags.has(SdFlags::SHARE_CPUCAPACITY) {
        sd.imbalance_pct = 110;
    } else if flags.has(SdFlags::SHARE_PKG_RESOURCES) {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
    } else if flags.has(SdFlags::NUMA) {
        sd.cache_nice_tries = 2;
        sd.flags = sd
            .flags
            .without(SdFlags::PREFER_SIBLING)
            .with(SdFlags::SERIALIZE);
    } else {
        sd.cache_nice_tries = 1;
    }
    sd
}

/// One scheduling domain of one CPU (`struct sched_domain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomain {
    pub level: Level,
    pub span: CpuMask,
    /// The sched groups, the CPU's own (local) group first, then in CPU order wrapping
    /// around (`sd->groups` and its circular list).
    pub groups: Vec<CpuMask>,
    /// `sd_init`'s constants and flags (SD_PREFER_SIBLING possibly handed down from a
    /// removed parent).
    pub init: SdInit,
    /// `sd->imb_numa_nr`: running tasks a NUMA level tolerates as an imbalance.
    pub imb_numa_nr: u32,
}

impl SchedDomain {
    /// `sd->span_weight`.
    pub fn weight(&self) -> u32 {
        self.span.count()
    }

    pub fn flags(&self) -> SdFlags {
        self.init.flags
    }

    /// `sd_init`'s constants for another era (the flags handed down by a removed parent
    /// are kept).
    pub fn init_for(&self, era: SdEra) -> SdInit {
        let mut c = sd_init(era, self.level.topology_flags(), self.weight());
        c.flags = self.init.flags;
        c
    }

    /// The local group (the one holding the domain's CPU).
    pub fn local_group(&self) -> &CpuMask {
        &self.groups[0]
    }
}

/// The scheduling domains of every CPU, bottom-up, and the per-CPU shortcuts the kernel
/// keeps (`sd_llc`, `sd_llc_size`, `sd_llc_id`).
#[derive(Clone, Debug)]
pub struct SchedDomains {
    per_cpu: Vec<Vec<SchedDomain>>,
    /// Index in `per_cpu[cpu]` of the highest domain sharing a cache (`sd_llc`).
    llc: Vec<Option<usize>>,
    /// SMT siblings of each CPU (itself included).
    smt: Vec<CpuMask>,
    /// The LLC span of each CPU (the CPU alone when no domain shares a cache).
    llc_span: Vec<CpuMask>,
}

impl SchedDomains {
    /// `build_sched_domains` for the whole machine, then `cpu_attach_domain` per CPU.
    pub fn build(t: &Topology, era: SdEra) -> SchedDomains {
        let n = t.nr_cpus() as usize;
        let machine = t.machine_mask();
        let levels = [Level::Smt, Level::Mc, Level::Die, Level::Numa];
        let span_of = |level: Level, c: CpuId| match level {
            Level::Smt => t.smt_mask(c),
            Level::Mc => t.llc_mask(c),
            Level::Die => t.package_mask(c),
            Level::Numa => machine,
        };
        // Spans per CPU, bottom-up, up to the first level spanning the machine.
        let chain = |c: CpuId| -> Vec<(Level, CpuMask)> {
            let mut v = Vec::new();
            for &l in &levels {
                let span = span_of(l, c);
                v.push((l, span));
                if span == machine {
                    break;
                }
            }
            v
        };
        let chains: Vec<Vec<(Level, CpuMask)>> = (0..n).map(|c| chain(CpuId(c as u32))).collect();
        let mut per_cpu = Vec::with_capacity(n);
        for c in 0..n {
            let cpu = CpuId(c as u32);
            let mut doms: Vec<SchedDomain> = chains[c]
                .iter()
                .enumerate()
                .map(|(i, &(level, span))| {
                    let groups = if i == 0 {
                        span.iter().map(single).collect()
                    } else {
                        // build_sched_groups: each group is the child-level span of a CPU.
                        child_spans(&chains, i - 1, span)
                    };
                    SchedDomain {
                        level,
                        span,
                        groups: local_first(groups, cpu),
                        init: sd_init(era, level.topology_flags(), span.count()),
                        imb_numa_nr: 0,
                    }
                })
                .collect();
            set_imb_numa_nr(&mut doms);
            per_cpu.push(attach(doms));
        }
        let llc: Vec<Option<usize>> = per_cpu
            .iter()
            .map(|d: &Vec<SchedDomain>| {
                d.iter()
                    .rposition(|sd| sd.flags().has(SdFlags::SHARE_PKG_RESOURCES))
            })
            .collect();
        let llc_span = (0..n)
            .map(|c| match llc[c] {
                Some(i) => per_cpu[c][i].span,
                None => single(CpuId(c as u32)),
            })
            .collect();
        let smt = (0..n).map(|c| t.smt_mask(CpuId(c as u32))).collect();
        SchedDomains {
            per_cpu,
            llc,
            smt,
            llc_span,
        }
    }

    /// The domains of `cpu`, bottom-up (`for_each_domain`); empty on a one-CPU machine.
    pub fn of(&self, cpu: CpuId) -> &[SchedDomain] {
        &self.per_cpu[cpu.idx()]
    }

    /// The index of `cpu`'s LLC domain in [`Self::of`] (`sd_llc`), if any.
    pub fn llc_index(&self, cpu: CpuId) -> Option<usize> {
        self.llc[cpu.idx()]
    }

    /// The CPUs sharing `cpu`'s last-level cache (`sd_llc`'s span; `cpu` alone without
    /// one).
    pub fn llc_span(&self, cpu: CpuId) -> &CpuMask {
        &self.llc_span[cpu.idx()]
    }

    /// `cpus_share_cache(a, b)`.
    pub fn share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.llc_span[a.idx()].contains(b)
    }

    /// `cpu_smt_mask(cpu)`: the hardware threads of its core, itself included.
    pub fn smt_siblings(&self, cpu: CpuId) -> &CpuMask {
        &self.smt[cpu.idx()]
    }

    /// True when some core has more than one thread (`sched_smt_active`).
    pub fn smt_active(&self) -> bool {
        self.smt.iter().any(|m| m.count() > 1)
    }
}

fn single(c: CpuId) -> CpuMask {
    let mut m = CpuMask::empty();
    m.set(c);
    m
}

/// The distinct child-level spans of the CPUs of `span`, in CPU order.
fn child_spans(chains: &[Vec<(Level, CpuMask)>], child: usize, span: CpuMask) -> Vec<CpuMask> {
    let mut covered = CpuMask::empty();
    let mut groups = Vec::new();
    for c in span.iter() {
        if covered.contains(c) {
            continue;
        }
        let g = chains[c.idx()][child].1;
        for x in g.iter() {
            covered.set(x);
        }
        groups.push(g);
    }
    groups
}

/// Rotate the group list so that the group holding `cpu` comes first (`sd->groups` points
/// at the CPU's own group; the circular list keeps CPU order).
fn local_first(mut groups: Vec<CpuMask>, cpu: CpuId) -> Vec<CpuMask> {
    let i = groups
        .iter()
        .position(|g| g.contains(cpu))
        .expect("a domain's groups cover its CPU");
    groups.rotate_left(i);
    groups
}

/// The NUMA imbalance allowance of `build_sched_domains` (6.1): at the first level above
/// the LLC, one LLC per node allows `weight / 8` (at least 1), several allow one per LLC;
/// the levels above scale it by their span over the first NUMA span.
fn set_imb_numa_nr(doms: &mut [SchedDomain]) {
    let mut imb = 0u32;
    let mut imb_span = 1u32;
    for i in 0..doms.len() {
        let share = |d: &SchedDomain| d.flags().has(SdFlags::SHARE_PKG_RESOURCES);
        if i > 0 && !share(&doms[i]) && share(&doms[i - 1]) {
            let nr_llcs = doms[i].weight() / doms[i - 1].weight();
            imb = if nr_llcs == 1 {
                doms[i].weight() >> 3
            } else {
                nr_llcs
            }
            .max(1);
            doms[i].imb_numa_nr = imb;
            imb_span = doms[i + 1..]
                .iter()
                .find(|d| d.flags().has(SdFlags::NUMA))
                .map_or(doms[i].weight(), |d| d.weight());
        } else {
            let factor = (doms[i].weight() / imb_span).max(1);
            doms[i].imb_numa_nr = imb * factor;
        }
    }
}

/// `sd_degenerate`: one CPU, or one group and no flag that works without groups.
fn degenerate(sd: &SchedDomain) -> bool {
    if sd.weight() == 1 {
        return true;
    }
    if sd.flags().has(SdFlags::NEEDS_GROUPS) && sd.groups.len() > 1 {
        return false;
    }
    !sd.flags().has(SdFlags::WAKE_AFFINE)
}

/// `sd_parent_degenerate`: the parent adds nothing to its child.
fn parent_degenerate(sd: &SchedDomain, parent: &SchedDomain) -> bool {
    if degenerate(parent) {
        return true;
    }
    if sd.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags();
    if parent.groups.len() == 1 {
        pflags = pflags.without(SdFlags::NEEDS_GROUPS);
    }
    pflags.0 & !sd.flags().0 == 0
}

/// `cpu_attach_domain`'s clean-up: remove degenerate parents bottom-up (their
/// SD_PREFER_SIBLING goes to the child), then a degenerate base domain.
fn attach(mut doms: Vec<SchedDomain>) -> Vec<SchedDomain> {
    let mut i = 0;
    while i + 1 < doms.len() {
        if parent_degenerate(&doms[i], &doms[i + 1]) {
            let parent = doms.remove(i + 1);
            if parent.flags().has(SdFlags::PREFER_SIBLING) {
                doms[i].init.flags = doms[i].flags().with(SdFlags::PREFER_SIBLING);
            }
        } else {
            i += 1;
        }
    }
    if doms.first().is_some_and(degenerate) {
        doms.remove(0);
    }
    doms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(packages: u32, cores: u32, threads: u32, llc: u32) -> Topology {
        Topology {
            packages,
            cores_per_package: cores,
            threads_per_core: threads,
            cores_per_llc: llc,
        }
    }

    fn mask(cpus: &[u32]) -> CpuMask {
        let mut m = CpuMask::empty();
        for &c in cpus {
            m.set(CpuId(c));
        }
        m
    }

    fn range(a: u32, b: u32) -> CpuMask {
        mask(&(a..b).collect::<Vec<_>>())
    }

    /// (level, span, groups) of `cpu`'s domains.
    fn shape(d: &SchedDomains, cpu: u32) -> Vec<(&'static str, CpuMask, Vec<CpuMask>)> {
        d.of(CpuId(cpu))
            .iter()
            .map(|sd| (sd.level.name(), sd.span, sd.groups.clone()))
            .collect()
    }

    #[test]
    fn flat_machine_has_one_mc_domain_of_single_cpu_groups() {
        let d = Topology::flat(4).build_domains(SdEra::V6_1);
        for c in 0..4 {
            let s = shape(&d, c);
            assert_eq!(s.len(), 1, "cpu {c}: {s:?}");
            assert_eq!(s[0].0, "MC");
            assert_eq!(s[0].1, range(0, 4));
            let first: Vec<u32> = s[0].2.iter().map(|g| g.first().unwrap().0).collect();
            let want: Vec<u32> = (0..4).map(|i| (c + i) % 4).collect();
            assert_eq!(first, want, "local group first, CPU order wrapping");
        }
        let sd = &d.of(CpuId(0))[0];
        // sd_init for an LLC level: 117, cache_nice_tries 1, intervals from the weight.
        assert_eq!(
            (
                sd.init.imbalance_pct,
                sd.init.cache_nice_tries,
                sd.init.busy_factor
            ),
            (117, 1, 16)
        );
        assert_eq!((sd.init.min_interval, sd.init.max_interval), (4, 8));
        assert_eq!(d.llc_index(CpuId(2)), Some(0));
        assert!(!d.smt_active());
        // One CPU: every level is degenerate, no domain at all (as on a UP kernel).
        assert!(Topology::flat(1)
            .build_domains(SdEra::V6_1)
            .of(CpuId(0))
            .is_empty());
    }

    #[test]
    fn smt_machine_has_smt_and_mc_levels() {
        // 1 package × 4 cores × 2 threads: CPUs 2k and 2k+1 are siblings.
        let t = topo(1, 4, 2, 4);
        let d = t.build_domains(SdEra::V6_1);
        let s = shape(&d, 3);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].0, s[0].1), ("SMT", mask(&[2, 3])));
        assert_eq!(s[0].2, vec![mask(&[3]), mask(&[2])]);
        assert_eq!((s[1].0, s[1].1), ("MC", range(0, 8)));
        assert_eq!(
            s[1].2,
            vec![mask(&[2, 3]), mask(&[4, 5]), mask(&[6, 7]), mask(&[0, 1])]
        );
        let smt = &d.of(CpuId(3))[0];
        assert_eq!(smt.init.imbalance_pct, 110);
        assert!(smt.flags().has(SdFlags::SHARE_CPUCAPACITY));
        assert!(smt.flags().has(SdFlags::SHARE_PKG_RESOURCES));
        assert_eq!((smt.init.min_interval, smt.init.max_interval), (2, 4));
        assert_eq!(*d.smt_siblings(CpuId(6)), mask(&[6, 7]));
        assert_eq!(
            d.llc_index(CpuId(3)),
            Some(1),
            "sd_llc is the highest cache level"
        );
        assert!(d.smt_active());
    }

    #[test]
    fn two_llcs_in_a_package_give_mc_and_die() {
        // 1 × 8 × 1, 4 cores per LLC.
        let t = topo(1, 8, 1, 4);
        let d = t.build_domains(SdEra::V6_1);
        let s = shape(&d, 5);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].0, s[0].1), ("MC", range(4, 8)));
        assert_eq!((s[1].0, s[1].1), ("DIE", range(0, 8)));
        assert_eq!(s[1].2, vec![range(4, 8), range(0, 4)]);
        let die = &d.of(CpuId(5))[1];
        assert_eq!(
            (die.init.imbalance_pct, die.init.cache_nice_tries),
            (117, 1)
        );
        assert!(!die.flags().has(SdFlags::SHARE_PKG_RESOURCES));
        assert!(die.flags().has(SdFlags::PREFER_SIBLING));
        assert_eq!(*d.llc_span(CpuId(5)), range(4, 8));
        assert!(!d.share_cache(CpuId(3), CpuId(4)));
        // v5.4 constants: busy_factor 32 everywhere, 125 above the LLC.
        let d54 = t.build_domains(SdEra::V5_4);
        let doms = d54.of(CpuId(0));
        assert_eq!(
            (doms[0].init.imbalance_pct, doms[0].init.busy_factor),
            (117, 32)
        );
        assert_eq!(
            (doms[1].init.imbalance_pct, doms[1].init.busy_factor),
            (125, 32)
        );
    }

    #[test]
    fn two_packages_give_mc_and_numa_with_die_removed() {
        // 2 × 4 × 1 with one LLC per package: DIE has the span of MC and one group, so
        // cpu_attach_domain removes it; the machine level is NUMA, one group per package.
        let t = topo(2, 4, 1, 4);
        let d = t.build_domains(SdEra::V6_1);
        let s = shape(&d, 6);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!((s[0].0, s[0].1), ("MC", range(4, 8)));
        assert_eq!((s[1].0, s[1].1), ("NUMA", range(0, 8)));
        assert_eq!(s[1].2, vec![range(4, 8), range(0, 4)]);
        let numa = &d.of(CpuId(6))[1];
        assert_eq!(numa.init.cache_nice_tries, 2);
        assert!(numa.flags().has(SdFlags::SERIALIZE));
        assert!(numa.flags().has(SdFlags::WAKE_AFFINE));
        assert!(!numa.flags().has(SdFlags::PREFER_SIBLING));
        assert_eq!((numa.init.min_interval, numa.init.max_interval), (8, 16));
        // One LLC per node: imb_numa_nr = max(1, 4 >> 3) at DIE, × 8/8 at NUMA.
        assert_eq!(numa.imb_numa_nr, 1);
        // With SMT and two LLCs per package every level survives.
        let t = topo(2, 4, 2, 2);
        let d = t.build_domains(SdEra::V6_1);
        let names: Vec<&str> = d.of(CpuId(9)).iter().map(|sd| sd.level.name()).collect();
        assert_eq!(names, ["SMT", "MC", "DIE", "NUMA"]);
        let die = &d.of(CpuId(9))[2];
        assert_eq!(die.span, range(8, 16));
        assert_eq!(die.groups, vec![range(8, 12), range(12, 16)]);
        // Two LLCs per node: imb_numa_nr = nr_llcs = 2 at DIE, 2 × 16/16 at NUMA.
        assert_eq!((die.imb_numa_nr, d.of(CpuId(9))[3].imb_numa_nr), (2, 2));
    }
}

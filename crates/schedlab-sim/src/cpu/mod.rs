//! CPU scheduling policies, one file each, and the registry that names them.
//!
//! The registry is one table, `registry!` below: every policy's name, family, module
//! and constructor, and the seed schedulers that cannot be modelled (with the reason).
//! From it come [`NAMES`], [`MODULES`], the `match` that constructs a policy by name (one
//! monomorphised engine per policy) and the listing of [`schedulers`]. To add a policy:
//! write `cpu/<name>.rs` implementing [`crate::sched::Scheduler`] (see `example_fifo.rs`)
//! and add one line to the table.

use crate::sched::{PolicyInfo, Scheduler};

/// A policy listed for users, possibly unavailable.
#[derive(Clone, Debug)]
pub struct SchedulerEntry {
    pub info: PolicyInfo,
    /// The family of systems it comes from, so front ends group policies without keeping
    /// their own list: "linux" (schedulers written for the Linux kernel, mainline or patches:
    /// O(1), CFS, EEVDF, staircase, nicksched, BFS, MuQSS, plugsched's ingo_ll — the set
    /// seed 000's report compares), "bsd" (BSD kernels' schedulers: FreeBSD's 4BSD and ULE),
    /// "rtos" (fixed-priority RTOS kernels, μITRON), "teaching"
    /// (templates for writing a policy).
    pub family: &'static str,
    pub available: bool,
    /// Why an unavailable policy cannot be run.
    pub reason: Option<String>,
}

/// Something to do with a concrete policy type (the engine is generic over the policy,
/// so each policy gets its own monomorphised, inlined hot loop).
pub(crate) trait PolicyVisitor {
    type Out;
    fn visit<S: Scheduler>(self, policy: S) -> Self::Out;
}

/// The registry table. `available` rows: name, family, the module that holds the policy
/// and a constructor taking the number of CPUs. `unavailable` rows: name, family, summary
/// and why no model exists. `infrastructure`: modules shared by policies (classes, shared
/// code). Every module under `cpu/` is declared here, as a policy's or as infrastructure.
macro_rules! registry {
    (
        available { $($name:literal, $family:literal, $module:ident, $ctor:expr;)* }
        unavailable { $($uname:literal, $ufamily:literal, $usummary:literal, $ureason:literal;)* }
        infrastructure { $($infra:ident),* }
    ) => {
        $(pub mod $module;)*
        $(pub mod $infra;)*

        /// The modules under `cpu/` that are not a registered policy of their own.
        pub const INFRASTRUCTURE: &[&str] = &[$(stringify!($infra)),*];

        /// Every runnable policy's name, in display order.
        pub const NAMES: &[&str] = &[$($name),*];

        /// The module (file under `cpu/`) of each name in [`NAMES`].
        pub const MODULES: &[&str] = &[$(stringify!($module)),*];

        fn build<V: PolicyVisitor>(name: &str, nr_cpus: usize, v: V) -> Option<V::Out> {
            Some(match name {
                $($name => v.visit(($ctor)(nr_cpus)),)*
                _ => return None,
            })
        }

        fn family_of(name: &str) -> &'static str {
            match name {
                $($name => $family,)*
                _ => "",
            }
        }

        /// Schedulers the seeds name that schedlab cannot model, with the reason (listed,
        /// never invented).
        fn unavailable() -> impl Iterator<Item = SchedulerEntry> {
            [$(($uname, $ufamily, $usummary, $ureason)),*]
                .into_iter()
                .map(|(name, family, summary, reason)| SchedulerEntry {
                    info: PolicyInfo {
                        name,
                        summary,
                        source: "none found",
                        params: Vec::new(),
                    },
                    family,
                    available: false,
                    reason: Some(reason.to_string()),
                })
        }
    };
}

registry! {
    available {
        "linux-cfs", "linux", linux_cfs, linux_cfs::linux_cfs;
        "fp", "rtos", fp, fp::Fp::new;
        "edf", "rtos", edf, edf::Edf::new;
        "example-fifo", "teaching", example_fifo, |_| example_fifo::ExampleFifo::new();
        "bfs", "linux", bfs, bfs::Bfs::new;
        "linux-o1", "linux", linux_o1, linux_o1::LinuxO1::new;
        "staircase", "linux", staircase, staircase::Staircase::new;
        "linux-eevdf", "linux", linux_eevdf, linux_eevdf::linux_eevdf;
        "muqss", "linux", muqss, muqss::muqss;
        "nicksched", "linux", nicksched, nicksched::Nicksched::new;
        "freebsd-4bsd", "bsd", freebsd_4bsd, freebsd_4bsd::Freebsd4Bsd::new;
        "freebsd-ule", "bsd", freebsd_ule, freebsd_ule::FreebsdUle::new;
        "freebsd-ule5", "bsd", freebsd_ule5, freebsd_ule5::FreebsdUle5::new;
    }
    unavailable {
        "ingo_ll", "linux",
        "plugsched's lower-latency variant of the O(1) scheduler (seed 000)",
        "no primary source survives: neither the plugsched 6.3 tarballs nor LKML keep its \
         code, so it is not modelled rather than invented";
    }
    infrastructure {
        cpu_queues, deadline_queue, dl_bandwidth, dl_server, fair, freebsd_runq, linux_dl, linux_rt, partition,
        rt_bandwidth, stack,
        tunables
    }
}

/// Construct the policy called `name` for `nr_cpus` CPUs and hand it to `v`.
pub(crate) fn construct<V: PolicyVisitor>(
    name: &str,
    nr_cpus: usize,
    v: V,
) -> Result<V::Out, String> {
    build(name, nr_cpus, v).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> String {
    format!(
        "unknown scheduler '{name}' (available: {})",
        NAMES.join(", ")
    )
}

struct Describe;
impl PolicyVisitor for Describe {
    type Out = PolicyInfo;
    fn visit<S: Scheduler>(self, policy: S) -> PolicyInfo {
        policy.info()
    }
}

/// Every policy with its description and tunables (for `schedlab schedulers`), the
/// runnable ones first in [`NAMES`] order, then the unavailable ones.
pub fn schedulers() -> Vec<SchedulerEntry> {
    let available = NAMES.iter().map(|&name| SchedulerEntry {
        info: build(name, 1, Describe).expect("every listed name constructs"),
        family: family_of(name),
        available: true,
        reason: None,
    });
    available.chain(unavailable()).collect()
}

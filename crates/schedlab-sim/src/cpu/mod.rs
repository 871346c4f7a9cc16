//! CPU scheduling policies, one file each, and the registry that names them.
//!
//! To add a policy: write `cpu/<name>.rs` implementing [`crate::sched::Scheduler`] (see
//! `example_fifo.rs`), declare the module here, and add one arm to [`construct`] and one
//! entry to [`NAMES`].

pub mod bfs;
mod cpu_queues;
pub mod example_fifo;
pub mod family;
pub mod fp;
pub mod linux_cfs;
pub mod linux_eevdf;
pub mod linux_o1;
pub mod linux_rt;
pub mod muqss;
pub mod nicksched;
pub mod stack;
pub mod staircase;

use crate::sched::{PolicyInfo, Scheduler};

/// Every policy name the registry knows, in display order.
pub const NAMES: &[&str] = &[
    "linux-cfs",
    "fp",
    "example-fifo",
    "bfs",
    "linux-o1",
    "staircase",
    "linux-eevdf",
    "muqss",
    "nicksched",
];

/// A policy listed for users, possibly unavailable.
#[derive(Clone, Debug)]
pub struct SchedulerEntry {
    pub info: PolicyInfo,
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

/// Construct the policy called `name` for `nr_cpus` CPUs and hand it to `v`.
pub(crate) fn construct<V: PolicyVisitor>(
    name: &str,
    nr_cpus: usize,
    v: V,
) -> Result<V::Out, String> {
    build(name, nr_cpus, v).ok_or_else(|| unknown(name))
}

fn build<V: PolicyVisitor>(name: &str, nr_cpus: usize, v: V) -> Option<V::Out> {
    Some(match name {
        "linux-cfs" => v.visit(linux_cfs::linux_cfs(nr_cpus)),
        "linux-eevdf" => v.visit(linux_eevdf::linux_eevdf(nr_cpus)),
        "fp" => v.visit(fp::Fp::new(nr_cpus)),
        "example-fifo" => v.visit(example_fifo::ExampleFifo::new()),
        "bfs" => v.visit(bfs::Bfs::new(nr_cpus)),
        "muqss" => v.visit(muqss::muqss(nr_cpus)),
        "linux-o1" => v.visit(linux_o1::LinuxO1::new(nr_cpus)),
        "staircase" => v.visit(staircase::Staircase::new(nr_cpus)),
        "nicksched" => v.visit(nicksched::Nicksched::new(nr_cpus)),
        _ => return None,
    })
}

fn unknown(name: &str) -> String {
    format!(
        "unknown scheduler '{name}' (available: {})",
        available_names().join(", ")
    )
}

fn available_names() -> Vec<&'static str> {
    schedulers()
        .into_iter()
        .filter(|e| e.available)
        .map(|e| e.info.name)
        .collect()
}

struct Describe;
impl PolicyVisitor for Describe {
    type Out = PolicyInfo;
    fn visit<S: Scheduler>(self, policy: S) -> PolicyInfo {
        policy.info()
    }
}

/// Every policy with its description and tunables (for `schedlab schedulers`).
pub fn schedulers() -> Vec<SchedulerEntry> {
    let available = NAMES
        .iter()
        .filter_map(|n| build(n, 1, Describe))
        .map(|info| SchedulerEntry {
            info,
            available: true,
            reason: None,
        });
    available.chain(unavailable()).collect()
}

/// Schedulers the seeds name that schedlab cannot model, with the reason (listed, never
/// invented).
fn unavailable() -> impl Iterator<Item = SchedulerEntry> {
    [(
        "ingo_ll",
        "plugsched's lower-latency variant of the O(1) scheduler (seed 000)",
        "no primary source survives: neither the plugsched 6.3 tarballs nor LKML keep its \
         code, so it is not modelled rather than invented",
    )]
    .into_iter()
    .map(|(name, summary, reason)| SchedulerEntry {
        info: PolicyInfo {
            name,
            summary,
            source: "none found",
            params: Vec::new(),
        },
        available: false,
        reason: Some(reason.to_string()),
    })
}

//! The machine's size: given (`schedlab.machine.cpus`), from a topology
//! (`schedlab.machine.topology`), or inferred from the CPUs the spec names.
//!
//! rt-app runs on the machine it is started on and refuses a CPU that machine lacks
//! (`parse_cpuset_data()`: "Invalid cpu %u in cpuset"). A spec that names CPUs but does not
//! size the machine therefore says "a machine with at least these CPUs", and schedlab runs
//! it on the smallest such machine (highest CPU named + 1, flat topology), recording
//! [`CpusSource::Inferred`]. A spec that names no CPU and does not size the machine runs
//! on one CPU ([`CpusSource::Default`]).

use super::cgroup::CgroupsIr;
use super::ext::MachineIr;
use super::sched;
use super::task::TaskIr;
use crate::model::{CpusSource, Machine, Topology};
use crate::SpecError;

/// The highest CPU each task, phase and cgroup names, with its path, in file order
/// (tasks, then cgroups).
fn named_cpus<'a>(
    tasks: &'a [TaskIr],
    cgroups: &'a CgroupsIr,
) -> impl Iterator<Item = &'a (u32, String)> {
    let in_tasks = tasks.iter().flat_map(|t| {
        t.cpus
            .iter()
            .chain(t.phases.iter().filter_map(|p| p.cpus.as_ref()))
            .map(|c| &c.highest)
    });
    in_tasks.chain(cgroups.highest_cpus())
}

/// Size the machine.
pub(crate) fn size(
    ir: MachineIr,
    tasks: &[TaskIr],
    cgroups: &CgroupsIr,
) -> Result<Machine, SpecError> {
    let mut m = ir.machine;
    let smt_path = ir.smt_throughput_path;
    match (ir.cpus, ir.topology) {
        (Some((n, path)), Some((topo, _))) if n != topo.nr_cpus() => {
            return Err(SpecError::new(
                path,
                format!(
                    "the machine has {n} CPUs but its topology ({} packages × {} cores × {} \
                     threads) has {}; give one of them, or make them agree",
                    topo.packages,
                    topo.cores_per_package,
                    topo.threads_per_core,
                    topo.nr_cpus()
                ),
            ))
        }
        (_, Some((topo, _))) => {
            m.cpus = topo.nr_cpus();
            m.topology = topo;
            m.cpus_source = CpusSource::Topology;
        }
        (Some((n, _)), None) => {
            m.cpus = n;
            m.topology = Topology::flat(n);
            m.cpus_source = CpusSource::Given;
        }
        (None, None) => {
            let highest = named_cpus(tasks, cgroups).map(|(c, _)| *c).max();
            if let Some(h) = highest {
                m.cpus = h + 1;
                m.topology = Topology::flat(h + 1);
                m.cpus_source = CpusSource::Inferred;
            }
            return Ok(m);
        }
    }
    if let Some(path) = smt_path {
        check_smt_throughput(&m, path)?;
    }
    if let Some((c, path)) = named_cpus(tasks, cgroups).find(|(c, _)| *c >= m.cpus) {
        return Err(sched::cpu_not_on_machine(*c, path, m.cpus));
    }
    Ok(m)
}

/// A core of T threads does at most T threads' work: `smt_throughput` ≤ T on a machine
/// with SMT. Without SMT (one thread per core) the setting changes nothing and any value
/// is accepted, so that a profile may state its processor's figure whatever the spec's
/// topology.
fn check_smt_throughput(m: &Machine, path: String) -> Result<(), SpecError> {
    let threads = m.topology.threads_per_core;
    match m.smt_throughput_milli {
        milli if threads > 1 && milli > 1000 * threads => Err(SpecError::new(
            path,
            format!(
                "expected at most {threads} for a core of {threads} threads (each thread at \
                 full speed), found {}",
                milli as f64 / 1000.0
            ),
        )),
        _ => Ok(()),
    }
}

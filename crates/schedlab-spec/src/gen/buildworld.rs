//! A parallel software build in the manner of FreeBSD's `make -jN buildworld`: one `make`
//! process starts short-lived jobs (compiles, links, library installs) through a job-token
//! pipe, at most `jobs` at once, directory after directory.
//!
//! What is modelled, and where it comes from:
//! - **Job slots.** FreeBSD's make (`usr.bin/make/job.c`, `Job_Init` and `Job_Full`) runs
//!   `-jN` through a FIFO of tokens: the leader writes one character per allowed job into it
//!   and reads one before it starts a job; a finished job's token goes back. Here the pipe
//!   `slots` holds the tokens: `make` writes `jobs` bytes at the start, reads one byte before
//!   each `fork`, and a job writes its byte back as its last act before it exits (the grammar
//!   has no `waitpid`: the job hands its token back itself, at the instant make would have
//!   reaped it). To wait for every job it started, make reads all `jobs` tokens back and
//!   writes them again.
//! - **Order.** Directories are built one after another: FreeBSD's `bsd.subdir.mk` visits
//!   `SUBDIR` in order (its `_SUBDIR` shell loop; without `SUBDIR_PARALLEL`, each
//!   directory's target depends on every one before it), so `-j` parallelism is within a
//!   directory. In a directory the compiles run in parallel; the link (`${PROG}` or the
//!   library depends on every object) starts when all of them are done. The first
//!   `lib_dirs` directories are libraries, built before the programs (buildworld's
//!   `_libraries` stage comes before `everything`), each followed by its install into the
//!   build tree once its link is done.
//! - **A job.** A process of its own, created by make's `fork`: `io_waits` times an I/O wait
//!   (a `sleep`) then a share of its user time (`run`), then it hands back its token and
//!   exits.
//!
//! CPU time and its closed form (µs; every job's CPU time is exactly its user time plus
//! its system time, so `schedlab run`'s total task CPU time is the total below when the
//! machine charges nothing else — no switch, fork, exit, tick or scheduler-work costs):
//! - `n_c = dirs × files` compiles, `n_l = dirs` links, `n_i = lib_dirs` installs,
//!   `J = n_c + n_l + n_i` jobs, `W = io_waits`;
//! - nominal CPU `C = n_c × (cpu_us + link_us) + n_i × install_us` (a link costs `link_us`
//!   per object it links);
//! - system time: the grammar has no event for kernel time of a given length, so each I/O
//!   wait's system call carries it: `machine.sleep_ns` (the CPU time a `sleep` costs its
//!   task in the kernel before it blocks) is `q × 1000` with
//!   `q = floor(C × bp / (10000 × J × W))` µs, `bp` = `sys_pct` in hundredths of a percent
//!   (rounded); every job has the same system time `W × q`, and `SYS = J × W × q`;
//! - user time: `USER = C − SYS`, shared among the jobs in proportion to their nominal cost
//!   (a compile's `cpu_us` times a seeded weight, a link's `link_us × objects`, an
//!   install's `install_us`) by largest remainders, each job's share split evenly over its
//!   `W` bursts;
//! - so the total CPU time is `C` exactly, and `SYS / C` is `sys_pct` up to the rounding of
//!   `q`.
//!
//! I/O waits are sleeps, not block I/O: a job alone on a CPU spends `io_pct` % of its time
//! waiting (`floor(cpu × io_pct / (100 − io_pct))` µs in all, split evenly over its
//! waits). A wait of 0 µs (`io_pct = 0`) still blocks and is woken at once.
//!
//! Seeded draws (`seed`): how many compiles each directory has (`n_c` in all, at least
//! one each; weights skewed as the square of a uniform draw, so most directories are
//! small and a few large, as a source tree's are) and each compile's weight (uniform in
//! [0.5, 1.5)).
//!
//! Not modelled: make's own CPU time (reading Makefiles, `.depend` checks; its pipe calls
//! and forks cost nothing here: the `slots` pipe is free and `fork_ns` is the machine's),
//! the shell make runs each command through and the compiler's own sub-processes (cc1,
//! as, ld as one job), `-pipe`, the static, PIC and profiled objects a library builds from
//! each source, and the page cache and disk behind the I/O waits. The default sizes and
//! costs are assumptions, chosen so that the default build's total CPU time, 3,113 s with
//! a 25.8 % system share, is the 2,310 s user + 803 s system of `make -j4 buildworld` on
//! FreeBSD 5.4 on a dual-core Athlon64 X2 (seed: a 2005 blog post); calibrating the rest is
//! the seed's business.

use super::opts::{opt, Opts};
use super::{apportion, Events, GeneratorInfo};
use crate::rng::Rng;
use crate::SpecError;
use serde_json::{json, Map, Value};

/// Largest number of compiles written into one spec.
const MAX_COMPILES: u64 = 200_000;

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "buildworld",
        description: "a make -jN build in the manner of FreeBSD's buildworld: make starts short-lived compile, link and install jobs through a job-token pipe (at most `jobs` at once), directory after directory, libraries first; each job alternates I/O waits (sleeps) and CPU; total CPU time = the nominal cost C exactly, system share sys_pct; headline buildworld_time (make's start to the last exit)",
        options: vec![
            opt("jobs", 4, "job slots (make -j)"),
            opt("dirs", 500, "directories built one after another (the build's scale; assumed)"),
            opt("lib_dirs", 100, "of them, libraries: built first, each followed by its install (assumed)"),
            opt("files", 24, "compiles per directory on average: dirs × files compiles in all (assumed)"),
            opt("cpu_us", 250000, "nominal CPU time of a compile, µs (assumed)"),
            opt("link_us", 9000, "nominal CPU time of a link per object it links, µs (assumed)"),
            opt("install_us", 50000, "nominal CPU time of a library install, µs (assumed)"),
            opt("sys_pct", 25.8, "system share of the CPU time, % (0.01 % steps; 803 s of 3,113 s in the seed)"),
            opt("io_pct", 2, "share of a job's own run time spent in I/O waits, % (0..=90; assumed)"),
            opt("io_waits", 2, "I/O waits per job; each one's system call carries a share of the job's system time"),
            opt("seed", 1, "PRNG seed of the directory sizes and compile weights"),
            opt("cpus", 2, "CPUs of the simulated machine (the seed's Athlon64 X2 has 2 cores)"),
        ],
    }
}

/// What kind of step a job is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Compile,
    Link,
    Install,
}

/// One job: its template name, its kind and its nominal cost (the weight of its share of
/// the user time).
struct Job {
    name: String,
    step: Step,
    nominal_us: u64,
}

/// The build's shape and its totals, all fixed by the options.
struct Build {
    jobs: u64,
    waits: u64,
    io_pct: u64,
    /// Every directory's jobs, in build order: its compiles, its link, its install.
    dirs: Vec<Vec<Job>>,
    /// The CPU time's closed form.
    totals: BuildTotals,
}

/// The closed form of the build's CPU time (µs), as the module header gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildTotals {
    pub jobs: u64,
    pub nominal_us: u64,
    pub syscall_us: u64,
    pub sys_us: u64,
    pub user_us: u64,
}

/// `C`, `q`, `SYS` and `USER` for `jobs` jobs of `waits` waits each, nominal CPU
/// `nominal_us` and a system share of `sys_bp` hundredths of a percent.
fn totals(jobs: u64, waits: u64, nominal_us: u64, sys_bp: u64) -> BuildTotals {
    let syscall_us =
        (nominal_us as u128 * sys_bp as u128 / (10_000 * jobs as u128 * waits as u128)) as u64;
    let sys_us = jobs * waits * syscall_us;
    BuildTotals {
        jobs,
        nominal_us,
        syscall_us,
        sys_us,
        user_us: nominal_us - sys_us,
    }
}

fn build(o: &Opts) -> Result<(Build, u64), SpecError> {
    let jobs = o.int("jobs", 1, 1024)?;
    let ndirs = o.int("dirs", 1, 100_000)?;
    let lib_dirs = o.int("lib_dirs", 0, 100_000)?;
    if lib_dirs > ndirs {
        return Err(o.error(
            "lib_dirs",
            format!("expected at most dirs ({ndirs}) library directories, found {lib_dirs}"),
        ));
    }
    let files = o.int("files", 1, 10_000)?;
    let compiles = ndirs * files;
    if compiles > MAX_COMPILES {
        return Err(o.error(
            "files",
            format!("{ndirs} directories × {files} files make {compiles} compiles, more than {MAX_COMPILES}"),
        ));
    }
    let cpu_us = o.int("cpu_us", 1, 1_000_000_000)?;
    let link_us = o.int("link_us", 0, 1_000_000_000)?;
    let install_us = o.int("install_us", 0, 1_000_000_000)?;
    let sys_pct = o.real_below("sys_pct", 0.0, 100.0)?;
    let sys_bp = (sys_pct * 100.0).round() as u64;
    let io_pct = o.int("io_pct", 0, 90)?;
    let waits = o.int("io_waits", 1, 100)?;
    let mut rng = Rng::new(o.int("seed", 0, u64::MAX)?);

    // Compiles per directory: at least one each, the rest by skewed weights.
    let dir_weights: Vec<u64> = (0..ndirs)
        .map(|_| {
            let r = rng.next_u64() % 2000;
            1 + r * r / 1000
        })
        .collect();
    let sizes: Vec<u64> = apportion(compiles - ndirs, &dir_weights)
        .into_iter()
        .map(|n| n + 1)
        .collect();
    let mut dirs = Vec::with_capacity(ndirs as usize);
    for (d, &n) in sizes.iter().enumerate() {
        let mut dir: Vec<Job> = (0..n)
            .map(|i| Job {
                name: format!("cc-{d}-{i}"),
                step: Step::Compile,
                nominal_us: cpu_us * (500 + rng.next_u64() % 1000) / 1000,
            })
            .collect();
        dir.push(Job {
            name: format!("ld-{d}"),
            step: Step::Link,
            nominal_us: link_us * n,
        });
        if (d as u64) < lib_dirs {
            dir.push(Job {
                name: format!("install-{d}"),
                step: Step::Install,
                nominal_us: install_us,
            });
        }
        dirs.push(dir);
    }
    let njobs = compiles + ndirs + lib_dirs;
    let nominal = compiles * (cpu_us + link_us) + lib_dirs * install_us;
    let t = totals(njobs, waits, nominal, sys_bp);
    if t.syscall_us > 1_000_000 {
        return Err(o.error(
            "sys_pct",
            format!(
                "each I/O wait's system call would cost {} µs, more than the 1 s a machine cost may be; raise io_waits",
                t.syscall_us
            ),
        ));
    }
    Ok((
        Build {
            jobs,
            waits,
            io_pct,
            dirs,
            totals: t,
        },
        o.int("cpus", 1, 256)?,
    ))
}

/// The closed-form CPU totals of `schedlab gen buildworld` with `options` (what the
/// generated spec's jobs cost; the seed's calibration reads them here).
pub fn buildworld_totals(options: &[(String, String)]) -> Result<BuildTotals, SpecError> {
    let o = Opts::new(&info(), options)?;
    Ok(build(&o)?.0.totals)
}

impl Build {
    /// A job's template: `W` times an I/O wait then a user burst, then its token back.
    fn job(&self, user_us: u64) -> Value {
        let sys_us = self.waits * self.totals.syscall_us;
        let cpu = user_us + sys_us;
        let wait_us = cpu * self.io_pct / (100 - self.io_pct);
        let bursts = apportion(user_us, &vec![1; self.waits as usize]);
        let waits = apportion(wait_us, &vec![1; self.waits as usize]);
        let mut ev = Events::default();
        for (w, r) in waits.into_iter().zip(bursts) {
            ev.push("sleep", json!(w));
            ev.push("run", json!(r));
        }
        ev.push("schedlab:write", json!({"chan": "slots", "bytes": 1}));
        let mut t = Map::new();
        t.insert("instance".into(), json!(0));
        t.insert("loop".into(), json!(1));
        t.extend(ev.0);
        Value::Object(t)
    }

    /// make's program: the tokens, then per directory its compiles, its link and its
    /// install, each group started as slots free up and waited for before the next.
    fn make(&self) -> Value {
        let n = self.jobs;
        let mut phases = Map::new();
        phases.insert(
            "start".into(),
            json!({"schedlab:mark": "start", "schedlab:write": {"chan": "slots", "bytes": n}}),
        );
        for (d, dir) in self.dirs.iter().enumerate() {
            for (step, label) in [
                (Step::Compile, "cc"),
                (Step::Link, "ld"),
                (Step::Install, "install"),
            ] {
                let mut ev = Events::default();
                for job in dir.iter().filter(|j| j.step == step) {
                    ev.push("schedlab:read", json!({"chan": "slots", "bytes": 1}));
                    ev.push("fork", json!(job.name));
                }
                if ev.0.is_empty() {
                    continue;
                }
                // Every token back: every job of the group has finished.
                ev.push("schedlab:read", json!({"chan": "slots", "bytes": n}));
                ev.push("schedlab:write", json!({"chan": "slots", "bytes": n}));
                phases.insert(format!("d{d}-{label}"), Value::Object(ev.0));
            }
        }
        json!({"loop": 1, "phases": phases})
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let (b, cpus) = build(&o)?;
    let all: Vec<&Job> = b.dirs.iter().flatten().collect();
    let weights: Vec<u64> = all.iter().map(|j| j.nominal_us).collect();
    let users = apportion(b.totals.user_us, &weights);
    let mut tasks = Map::new();
    tasks.insert("make".into(), b.make());
    for (job, user_us) in all.iter().zip(users) {
        tasks.insert(job.name.clone(), b.job(user_us));
    }
    Ok(json!({
        "global": {"duration": -1, "default_policy": "SCHED_OTHER"},
        "tasks": Value::Object(tasks),
        "schedlab": {
            "machine": {"cpus": cpus, "hz": 1000, "sleep_ns": b.totals.syscall_us * 1000},
            "pipes": {"slots": {"capacity": 65536, "op_cost_ns": 0, "byte_cost_ps": 0}},
            "headline": {"type": "elapsed_since_mark", "mark": "start", "name": "buildworld_time"},
        },
    }))
}

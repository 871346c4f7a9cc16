//! Interbench, Con Kolivas' interactivity benchmark (seed 000 ran it on Linux 2.6.17), as a
//! workload: one simulated interactive task (Audio, Video, X or Gaming) against one
//! background load (None, Video, X, Burn, Write, Read, Compile, Memload, Hack).
//!
//! Source: `interbench.c` v0.31 (ckolivas/interbench, commit 2b42050; the functions used
//! here are identical in the v0.30 copy that circulates). Line numbers are of that file.
//!
//! Benchmarked tasks (each a thread woken by its own *timekeeping thread*, l.873-923, which
//! runs SCHED_FIFO 96 and sleeps until the next frame, then posts the thread's semaphore;
//! its comment says a load's timekeeper stays SCHED_NORMAL, but the test at l.890 runs
//! before `initialise_thread` sets `th->dt`, so every timekeeper, a load's too, is FIFO 96):
//! - Audio (l.484-502): every 50 ms (`AUDIO_INTERVAL`) burn 2.5 ms (`AUDIO_RUN` = 1/20).
//! - Video (l.504-522): every 1000000/60 = 16666 µs burn 16666·40/100 = 6666 µs.
//! - X (l.524-548): step i = 0..=100 burns i ms with an interval of (100-i) ms, and the
//!   deadline then moves on by i ms more (l.543). Worked through `periodic_schedule`, step i
//!   (1 ≤ i ≤ 100) is woken 99 ms after step i-1, except that step 1 comes 200 ms after step
//!   100 ends (step 0 burns nothing): one sweep takes 10101 ms and burns 5050 ms.
//! - Gaming (l.552-587): burns 100 ms (`GAME_RUN`) after 100 ms, never sleeping; a frame's
//!   latency is how much longer than 100 ms it took.
//!
//! `periodic_schedule` (l.372-452) is the frame loop of Audio, Video and X: at wake-up the
//! latency is measured; if a whole interval has already gone the burn is skipped; else the
//! thread burns `run` and the frame's deadline is met if the burn ended by frame start +
//! interval; a late frame skips the intervals it overran and the thread sleeps until the next
//! frame *on the original grid* (a dropped frame, not a catch-up).
//!
//! Loads (each in its own process at nice `load_nice`, interbench `-N`):
//! - None (l.478-482): nothing. Video, X: the same emulations as above (with their own
//!   timekeeping threads).
//! - Burn (l.589-624): `burn_tasks` (`ud.cpu_load`, `-L`, default 4) threads that never
//!   sleep.
//! - Write (l.626-671), Read (l.673-705): one thread streaming a RAM-sized file to / from
//!   disk. **Not modelled as I/O** (schedlab has no block layer): the thread alternates
//!   `run` and `sleep` (`write_run_us`/`write_sleep_us`, `read_run_us`/`read_sleep_us`), the
//!   CPU-burst / I/O-wait pattern the scheduler sees. The defaults are assumptions of this
//!   generator, not numbers from interbench (which does not pace its I/O at all).
//! - Compile (l.761-788): Burn + Write + Read together ("make -j4").
//! - Memload (l.798-835): one thread allocating, touching and copying 110 % of RAM (so it
//!   swaps). **Not modelled as memory traffic**: a `run`/`sleep` loop
//!   (`memload_run_us`/`memload_sleep_us`, assumed) stands for its CPU work and page-fault
//!   waits.
//! - Hack (l.837-852, `hackbench.c`): repeated `hackbench 50` (the readme; groups of 20
//!   senders and 20 receivers, 100-byte messages over socketpairs). Here a hackbench that
//!   loops for ever (no fork/exit churn between rounds), `hack_groups` groups. Interbench
//!   0.31 lists Hack with `.load = 0` (disabled, l.120), as it does Ring (l.117; not offered here).
//!
//! The run: interbench starts the load, waits 1 s (`bench()`, `sleep(1)`), then runs the
//! benchmark for `-t` seconds (default 30; `main()` rounds it up to a multiple of 10 s so
//! that X sweeps whole ramps — not done here, so that quick runs can be short).
//! `warmup_s` delays the benchmarked task and its timekeeper the same way.
//! With `rt=true` (`-r`) the benchmarked thread is SCHED_FIFO 95 (`run_benchchild`);
//! interbench only does this for Audio and Video (`.rtbench`, l.108-122).
//!
//! Modelling (what the simulator does differently):
//! - Each emulation is a worker that `suspend`s and then `run`s its frame, and a timekeeper
//!   (SCHED_FIFO 96, as interbench's) with an absolute timer on the frame grid that
//!   `resume`s it. A resume that finds the worker still busy is lost, exactly as a frame
//!   interbench drops: the worker runs at the next grid point. The timekeeper here is a
//!   free-running periodic timer rather than one that sleeps on request; that is the same
//!   grid, except for X after a late step 100, which in interbench shifts the next sweep.
//! - When the worker is woken more than a whole interval late, interbench skips that frame's
//!   burn; the simulated worker cannot test the clock, so it burns anyway (the metrics, in
//!   `python/schedlab/interbench.py`, still count the frame as interbench does).
//! - X's step 0 (burn 0 ms, always on time) is not simulated; the metrics add it per sweep.
//! - Gaming's frames are delimited by an absolute 100 ms timer that is always already due,
//!   so the task never blocks: each frame is an activation that starts where the previous
//!   one ended.
//!
//! Task names: the benchmarked worker is `bench_<task>`, its timekeeper `tk_bench_<task>`;
//! loads are `load_<load>` (`tk_load_<load>`, `load_hack-…`).

use super::hackbench::{schedlab_object, Hackbench, MAX_TASKS};
use super::opts::{opt, Opts};
use super::GeneratorInfo;
use crate::SpecError;
use serde_json::{json, Map, Value};

/// Audio period, µs (`AUDIO_INTERVAL`, l.484).
pub const AUDIO_INTERVAL_US: u64 = 50_000;
/// Audio burn per frame, µs (`AUDIO_RUN` = interval / 20, l.485).
pub const AUDIO_RUN_US: u64 = AUDIO_INTERVAL_US / 20;
/// Video period, µs (`VIDEO_INTERVAL` = 1000000 / 60 in integer arithmetic, l.505).
pub const VIDEO_INTERVAL_US: u64 = 1_000_000 / 60;
/// Video burn per frame, µs (`VIDEO_RUN` = interval · 40 / 100, l.506).
pub const VIDEO_RUN_US: u64 = VIDEO_INTERVAL_US * 40 / 100;
/// Gaming frame, µs (`GAME_INTERVAL` = `GAME_RUN` = 100000, l.556-557).
pub const GAME_RUN_US: u64 = 100_000;
/// X's ramp unit: step i burns i of these (l.541, `i * 1000`).
pub const X_MS_US: u64 = 1000;
/// Time from X's step i to step i+1 (1 ≤ i < 100), µs: the step's deadline as well.
pub const X_STEP_GAP_US: u64 = 99 * X_MS_US;
/// Time from X's step 100 to the next sweep's step 1, µs (100 ms burn + 200 ms sleep).
pub const X_WRAP_GAP_US: u64 = 300 * X_MS_US;
/// SCHED_FIFO priority of every timekeeping thread (`set_fifo(96)`, l.891).
pub const TK_PRIO: i64 = 96;
/// SCHED_FIFO priority of the benchmarked thread with `-r` (`run_benchchild`).
pub const RT_BENCH_PRIO: i64 = 95;

const TASKS: &[&str] = &["audio", "video", "x", "gaming"];
const LOADS: &[&str] = &[
    "none", "video", "x", "burn", "write", "read", "compile", "memload", "hack",
];

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "interbench",
        description: "interbench 0.31: a simulated Audio/Video/X/Gaming task (bench_<task>, woken by a SCHED_FIFO timekeeper) against one load (none, video, x, burn, write, read, compile, memload, hack); Write/Read/Memload are modelled as run/sleep loops (no block layer or memory model), Hack as a looping hackbench",
        options: vec![
            opt("task", "audio", "benchmarked task: audio, video, x or gaming"),
            opt("load", "none", "background load: none, video, x, burn, write, read, compile, memload or hack"),
            opt("duration_s", 30, "seconds the benchmarked task runs (interbench -t, default 30)"),
            opt("warmup_s", 1, "seconds the load runs alone first (interbench: 1)"),
            opt("cpus", 1, "CPUs of the simulated machine (seed 000's board had 1)"),
            opt("nice", 0, "nice of the benchmarked task (interbench -B)"),
            opt("load_nice", 0, "nice of the load's tasks (interbench -N)"),
            opt("rt", "false", "true: benchmarked task SCHED_FIFO 95 (interbench -r; audio and video only)"),
            opt("burn_tasks", 4, "CPU hogs of the burn and compile loads (interbench -L, default 4)"),
            opt("hack_groups", 50, "hackbench groups of the hack load (interbench's readme: hackbench 50)"),
            opt("write_run_us", 1000, "write load: CPU burst per block batch, µs (assumed)"),
            opt("write_sleep_us", 1000, "write load: wait for writeback per batch, µs (assumed)"),
            opt("read_run_us", 200, "read load: CPU burst per read, µs (assumed)"),
            opt("read_sleep_us", 800, "read load: wait for the disk per read, µs (assumed)"),
            opt("memload_run_us", 1000, "memload: CPU burst touching memory, µs (assumed)"),
            opt("memload_sleep_us", 1000, "memload: wait for swap per burst, µs (assumed)"),
        ],
    }
}

/// `(policy, priority)` of a task in the spec.
type Attrs = (&'static str, i64);

fn task_object(attrs: Attrs, delay_us: u64) -> Map<String, Value> {
    let mut t = Map::new();
    t.insert("policy".into(), json!(attrs.0));
    t.insert("priority".into(), json!(attrs.1));
    if delay_us > 0 {
        t.insert("delay".into(), json!(delay_us));
    }
    t
}

fn timer(period_us: u64) -> Value {
    json!({"ref": "unique", "period": period_us, "mode": "absolute"})
}

/// A `periodic_schedule` emulation: worker `name` (suspend, then burn `run_us`) and its
/// timekeeper resuming it every `interval_us` on an absolute grid.
fn periodic(
    tasks: &mut Map<String, Value>,
    name: &str,
    attrs: Attrs,
    delay_us: u64,
    interval_us: u64,
    run_us: u64,
) {
    let wake = format!("wake_{name}");
    let mut w = task_object(attrs, delay_us);
    w.insert("suspend".into(), json!(wake));
    w.insert("run".into(), json!(run_us));
    tasks.insert(name.into(), Value::Object(w));
    let mut tk = task_object(("SCHED_FIFO", TK_PRIO), delay_us);
    tk.insert("timer".into(), timer(interval_us));
    tk.insert("resume".into(), json!(wake));
    tasks.insert(format!("tk_{name}"), Value::Object(tk));
}

/// The worker's X steps in program order: 2, 3, …, 100, then 1 (so that the timekeeper's
/// first wake-up, 99 ms after the start, is step 2's).
pub fn x_step_order() -> impl Iterator<Item = u64> {
    (2..=100).chain(std::iter::once(1))
}

/// `emulate_x`: worker phases (suspend, burn i ms) and a timekeeper whose absolute timer
/// fires 99 ms apart 99 times (steps 2..=100) and then 300 ms later (step 1).
fn x_emulation(tasks: &mut Map<String, Value>, name: &str, attrs: Attrs, delay_us: u64) {
    let wake = format!("wake_{name}");
    let mut phases = Map::new();
    for i in x_step_order() {
        phases.insert(
            format!("step{i}"),
            json!({"suspend": wake, "run": i * X_MS_US}),
        );
    }
    let mut w = task_object(attrs, delay_us);
    w.insert("phases".into(), Value::Object(phases));
    tasks.insert(name.into(), Value::Object(w));
    let mut tk = task_object(("SCHED_FIFO", TK_PRIO), delay_us);
    tk.insert(
        "phases".into(),
        json!({
            "ramp": {"loop": 99, "timer": timer(X_STEP_GAP_US), "resume": wake},
            "wrap": {"timer": timer(X_WRAP_GAP_US), "resume": wake},
        }),
    );
    tasks.insert(format!("tk_{name}"), Value::Object(tk));
}

/// `emulate_game`: burn 100 ms, then an absolute 100 ms timer that is always due (no sleep).
fn gaming(tasks: &mut Map<String, Value>, name: &str, attrs: Attrs, delay_us: u64) {
    let mut t = task_object(attrs, delay_us);
    t.insert("run".into(), json!(GAME_RUN_US));
    t.insert("timer".into(), timer(GAME_RUN_US));
    tasks.insert(name.into(), Value::Object(t));
}

/// A thread alternating a CPU burst and a wait (I/O or swap, not modelled as such).
fn run_sleep(tasks: &mut Map<String, Value>, name: &str, attrs: Attrs, run: u64, sleep: u64) {
    let mut t = task_object(attrs, 0);
    t.insert("run".into(), json!(run));
    t.insert("sleep".into(), json!(sleep));
    tasks.insert(name.into(), Value::Object(t));
}

/// `emulate_burn`: `n` threads that never sleep (the burst length does not matter).
fn burn(tasks: &mut Map<String, Value>, attrs: Attrs, n: u64) {
    let mut t = task_object(attrs, 0);
    t.insert("instance".into(), json!(n));
    t.insert("run".into(), json!(100_000));
    tasks.insert("load_burn".into(), Value::Object(t));
}

/// The load's options, read and checked.
struct LoadOpts {
    attrs: Attrs,
    burn_tasks: u64,
    hack_groups: u64,
    write: (u64, u64),
    read: (u64, u64),
    memload: (u64, u64),
}

impl LoadOpts {
    fn new(o: &Opts) -> Result<LoadOpts, SpecError> {
        let us = |n: &str| o.int(n, 1, 10_000_000);
        Ok(LoadOpts {
            attrs: ("SCHED_OTHER", o.signed("load_nice", -20, 19)?),
            burn_tasks: o.int("burn_tasks", 1, 10_000)?,
            hack_groups: o.int("hack_groups", 1, MAX_TASKS / 40)?,
            write: (us("write_run_us")?, us("write_sleep_us")?),
            read: (us("read_run_us")?, us("read_sleep_us")?),
            memload: (us("memload_run_us")?, us("memload_sleep_us")?),
        })
    }
}

/// Add the tasks (and channels) of `load`.
fn emit_load(
    load: &str,
    l: &LoadOpts,
    tasks: &mut Map<String, Value>,
    sockets: &mut Map<String, Value>,
) {
    match load {
        "video" => periodic(
            tasks,
            "load_video",
            l.attrs,
            0,
            VIDEO_INTERVAL_US,
            VIDEO_RUN_US,
        ),
        "x" => x_emulation(tasks, "load_x", l.attrs, 0),
        "burn" => burn(tasks, l.attrs, l.burn_tasks),
        "write" => run_sleep(tasks, "load_write", l.attrs, l.write.0, l.write.1),
        "read" => run_sleep(tasks, "load_read", l.attrs, l.read.0, l.read.1),
        "compile" => {
            burn(tasks, l.attrs, l.burn_tasks);
            run_sleep(tasks, "load_write", l.attrs, l.write.0, l.write.1);
            run_sleep(tasks, "load_read", l.attrs, l.read.0, l.read.1);
        }
        "memload" => run_sleep(tasks, "load_memload", l.attrs, l.memload.0, l.memload.1),
        "hack" => hack(tasks, sockets, l),
        _ => {} // "none"
    }
}

/// hackbench's defaults (`hackbench.c`: 20 fds, 100-byte messages, socketpairs, fork),
/// looping for ever, every task at the load's nice.
fn hack(tasks: &mut Map<String, Value>, sockets: &mut Map<String, Value>, l: &LoadOpts) {
    let hb = Hackbench {
        prefix: "load_hack-",
        groups: l.hack_groups,
        loops: None,
        datasize: 100,
        fds: 20,
        socket: true,
        threads: false,
        restart: false,
    };
    let mut mine = Map::new();
    hb.emit(&mut mine, &mut Map::new(), sockets);
    for (name, mut t) in mine {
        if let Value::Object(o) = &mut t {
            o.insert("policy".into(), json!(l.attrs.0));
            o.insert("priority".into(), json!(l.attrs.1));
        }
        tasks.insert(name, t);
    }
}

/// Add the benchmarked task `bench_<task>` (and its timekeeper), started after `delay_us`.
fn emit_bench(tasks: &mut Map<String, Value>, task: &str, attrs: Attrs, delay_us: u64) {
    let name = format!("bench_{task}");
    match task {
        "audio" => periodic(
            tasks,
            &name,
            attrs,
            delay_us,
            AUDIO_INTERVAL_US,
            AUDIO_RUN_US,
        ),
        "video" => periodic(
            tasks,
            &name,
            attrs,
            delay_us,
            VIDEO_INTERVAL_US,
            VIDEO_RUN_US,
        ),
        "x" => x_emulation(tasks, &name, attrs, delay_us),
        _ => gaming(tasks, &name, attrs, delay_us),
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let task = o.choice("task", TASKS)?;
    let load = o.choice("load", LOADS)?;
    if task == load {
        return Err(o.error(
            "load",
            format!("interbench never runs a task against itself as the load (main() skips j == i); choose a load other than {load:?}"),
        ));
    }
    let duration = o.int("duration_s", 1, 1_000_000)?;
    let warmup = o.int("warmup_s", 0, 1000)?;
    let cpus = o.int("cpus", 1, 256)?;
    let nice = o.signed("nice", -20, 19)?;
    let rt = o.boolean("rt")?;
    if rt && !matches!(task, "audio" | "video") {
        return Err(o.error(
            "rt",
            format!("interbench's real-time mode (-r) benchmarks only audio and video (.rtbench), not {task}"),
        ));
    }
    let l = LoadOpts::new(&o)?;

    let attrs = if rt {
        ("SCHED_FIFO", RT_BENCH_PRIO)
    } else {
        ("SCHED_OTHER", nice)
    };
    let mut tasks = Map::new();
    emit_bench(&mut tasks, task, attrs, warmup * 1_000_000);
    let mut sockets = Map::new();
    emit_load(load, &l, &mut tasks, &mut sockets);

    let headline = if task == "gaming" {
        json!({"type": "none"})
    } else {
        json!({"type": "wakeup_latency", "task_prefix": "bench_", "name": "interbench_latency"})
    };
    Ok(json!({
        "global": {"duration": warmup + duration, "default_policy": "SCHED_OTHER"},
        "tasks": Value::Object(tasks),
        "schedlab": schedlab_object(cpus, Map::new(), sockets, headline),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Event, Policy, Spec, TaskSpec};
    use crate::parse_value;

    fn spec(opts: &[(&str, &str)]) -> Spec {
        let o: Vec<(String, String)> = opts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let v = generate(&o).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
        parse_value(&v).unwrap_or_else(|e| panic!("{opts:?}: {e}"))
    }

    fn task<'a>(s: &'a Spec, name: &str) -> &'a TaskSpec {
        s.tasks
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no task {name}"))
    }

    fn events(t: &TaskSpec) -> impl Iterator<Item = &Event> {
        t.phases.iter().flat_map(|p| p.events.iter())
    }

    /// CPU (ns) one pass of the task's phases burns, counting phase loops.
    fn run_ns(t: &TaskSpec) -> u64 {
        t.phases
            .iter()
            .map(|p| {
                let per: u64 = p
                    .events
                    .iter()
                    .map(|e| if let Event::Run { ns } = e { *ns } else { 0 })
                    .sum();
                per * p.loop_count as u64
            })
            .sum()
    }

    /// Timer time (ns) one pass of the task's phases spans.
    fn timer_ns(t: &TaskSpec) -> u64 {
        t.phases
            .iter()
            .map(|p| {
                let per: u64 = p
                    .events
                    .iter()
                    .map(|e| match e {
                        Event::Timer { period_ns, .. } => *period_ns,
                        _ => 0,
                    })
                    .sum();
                per * p.loop_count as u64
            })
            .sum()
    }

    #[test]
    fn every_pair_but_self_parses() {
        for t in TASKS {
            for l in LOADS {
                let opts = [("task", *t), ("load", *l), ("hack_groups", "1")];
                if t == l {
                    let o: Vec<(String, String)> = opts
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect();
                    assert_eq!(generate(&o).unwrap_err().path, "options.load");
                } else {
                    let s = spec(&opts);
                    assert!(s.tasks.iter().any(|x| x.name == format!("bench_{t}")));
                }
            }
        }
    }

    #[test]
    fn audio_and_video_shares_are_interbenchs() {
        // Audio: 2.5 ms every 50 ms = 5 % (l.484-486); video: 6666 µs every 16666 µs ≈ 40 %.
        for (name, run_us, period_us) in [("audio", 2500, 50_000), ("video", 6666, 16_666)] {
            let s = spec(&[("task", name)]);
            let w = task(&s, &format!("bench_{name}"));
            let tk = task(&s, &format!("tk_bench_{name}"));
            assert_eq!(run_ns(w), run_us * 1000);
            assert_eq!(timer_ns(tk), period_us * 1000);
            assert_eq!(w.attr.policy, Policy::Other);
            assert_eq!(tk.attr.policy, Policy::Fifo);
            assert_eq!(tk.attr.priority, 96);
            assert_eq!(w.delay_ns, 1_000_000_000);
            // The worker waits (suspend = lock, wait, unlock) before each burn.
            let ev: Vec<&Event> = events(w).collect();
            assert!(matches!(ev[1], Event::Wait { .. }));
            assert!(matches!(ev[3], Event::Run { .. }));
        }
        assert_eq!(AUDIO_RUN_US * 20, AUDIO_INTERVAL_US);
        assert_eq!((VIDEO_INTERVAL_US, VIDEO_RUN_US), (16_666, 6_666));
    }

    #[test]
    fn x_sweeps_the_ramp_in_10101_ms_burning_5050_ms() {
        let s = spec(&[("task", "x")]);
        let w = task(&s, "bench_x");
        let tk = task(&s, "tk_bench_x");
        let runs: Vec<u64> = events(w)
            .filter_map(|e| match e {
                Event::Run { ns } => Some(ns / 1_000_000),
                _ => None,
            })
            .collect();
        assert_eq!(runs.len(), 100);
        assert_eq!(runs[0], 2);
        assert_eq!(runs[98], 100);
        assert_eq!(runs[99], 1);
        assert_eq!(run_ns(w), 5050 * 1_000_000);
        // 99 steps 99 ms apart, then 300 ms from step 100 to step 1: one sweep = 10101 ms,
        // as periodic_schedule + `deadline += i * 1000` give on an idle machine.
        assert_eq!(timer_ns(tk), 10_101 * 1_000_000);
        let wakes: usize = tk
            .phases
            .iter()
            .map(|p| {
                p.loop_count as usize
                    * p.events
                        .iter()
                        .filter(|e| matches!(e, Event::Timer { .. }))
                        .count()
            })
            .sum();
        assert_eq!(wakes, runs.len());
    }

    #[test]
    fn gaming_never_sleeps_and_frames_are_100_ms() {
        let s = spec(&[("task", "gaming")]);
        let g = task(&s, "bench_gaming");
        assert_eq!(run_ns(g), 100_000_000);
        assert_eq!(timer_ns(g), 100_000_000);
        assert!(!events(g).any(|e| matches!(e, Event::Sleep { .. } | Event::Wait { .. })));
        // Run before the timer: the timer is due when reached, so the task never blocks.
        assert!(matches!(events(g).next(), Some(Event::Run { .. })));
    }

    #[test]
    fn loads_have_the_structure_interbench_describes() {
        let names = |s: &Spec| s.tasks.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let none = spec(&[("load", "none")]);
        assert_eq!(names(&none), ["bench_audio", "tk_bench_audio"]);

        let b = spec(&[("load", "burn"), ("burn_tasks", "3"), ("load_nice", "5")]);
        let burn = task(&b, "load_burn");
        assert_eq!(burn.instances, 3);
        assert_eq!(burn.attr.priority, 5);
        assert!(events(burn).all(|e| matches!(e, Event::Run { .. })));

        let c = spec(&[("load", "compile")]);
        assert_eq!(
            names(&c)[2..],
            ["load_burn", "load_write", "load_read"].map(String::from)
        );
        assert_eq!(task(&c, "load_burn").instances, 4);
        let w = task(&c, "load_write");
        assert_eq!(run_ns(w), 1_000_000);
        assert!(events(w).any(|e| matches!(e, Event::Sleep { ns: 1_000_000 })));

        let v = spec(&[("task", "x"), ("load", "video")]);
        assert_eq!(run_ns(task(&v, "load_video")), VIDEO_RUN_US * 1000);
        assert_eq!(task(&v, "tk_load_video").attr.priority, TK_PRIO as i32);
        assert_eq!(task(&v, "load_video").delay_ns, 0);

        let x = spec(&[("load", "x")]);
        assert_eq!(run_ns(task(&x, "load_x")), 5050 * 1_000_000);

        let m = spec(&[("load", "memload"), ("memload_sleep_us", "7")]);
        assert!(events(task(&m, "load_memload")).any(|e| matches!(e, Event::Sleep { ns: 7000 })));

        let h = spec(&[("load", "hack"), ("hack_groups", "2"), ("load_nice", "3")]);
        let hack: Vec<&TaskSpec> = h
            .tasks
            .iter()
            .filter(|t| t.name.starts_with("load_hack-"))
            .collect();
        assert_eq!(hack.iter().map(|t| t.instances).sum::<u32>(), 2 * 40);
        assert!(hack
            .iter()
            .all(|t| t.attr.priority == 3 && t.attr.policy == Policy::Other));
        assert_eq!(h.resources.channels.len(), 2 * 20);
    }

    #[test]
    fn rt_mode_and_nice() {
        let s = spec(&[("task", "video"), ("rt", "true")]);
        let w = task(&s, "bench_video");
        assert_eq!((w.attr.policy, w.attr.priority), (Policy::Fifo, 95));
        let s = spec(&[
            ("task", "gaming"),
            ("nice", "-5"),
            ("duration_s", "3"),
            ("warmup_s", "0"),
        ]);
        let g = task(&s, "bench_gaming");
        assert_eq!(
            (g.attr.policy, g.attr.priority, g.delay_ns),
            (Policy::Other, -5, 0)
        );
        assert_eq!(s.duration_ns, Some(3_000_000_000));
    }

    #[test]
    fn bad_options_name_the_option() {
        for (k, v) in [
            ("task", "doom"),
            ("load", "ring"),
            ("duration_s", "0"),
            ("nice", "20"),
            ("load_nice", "-21"),
            ("burn_tasks", "0"),
            ("read_sleep_us", "0"),
            ("rt", "maybe"),
        ] {
            let e = generate(&[(k.to_string(), v.to_string())]).unwrap_err();
            assert_eq!(e.path, format!("options.{k}"), "{k}={v}: {e}");
        }
        let e = generate(&[("task".into(), "x".into()), ("rt".into(), "true".into())]).unwrap_err();
        assert_eq!(e.path, "options.rt");
        assert!(e.message.contains("audio and video"));
    }
}

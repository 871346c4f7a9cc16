//! hackbench as in rt-tests 2.4 (`src/hackbench/hackbench.c`): `groups` groups, each of
//! `fds` senders and `fds` receivers. Every receiver owns one channel (a pipe, or one
//! direction of an AF_UNIX stream socketpair); every sender of the group writes `loops`
//! messages of `datasize` bytes to every receiver of its group (`for loops: for receivers:
//! write`), and each receiver reads `fds * loops` messages.
//!
//! hackbench's "Time" excludes start-up (fork, socket setup): all tasks wait on a "ready"
//! pipe and the clock starts when the parent kicks them off, and stops when all are reaped.
//! Here every task first meets at a barrier, then hits the mark `start`; the headline
//! `hackbench_time` is [`Headline::ElapsedSinceMark`](crate::model::Headline) from the first
//! time `start` is hit to the last task exit.
//!
//! `tasks=process` gives each task its own process (hackbench's default, `fork()`);
//! `tasks=thread` puts them all in one process (`-T`, `pthread_create()`).
//!
//! Channels are written with their capacity only: what a call costs is the machine's
//! (`machine.channel_costs`, from a machine profile or the calibrated defaults in
//! `parse/ext.rs`), so one generated spec runs under any profile.

use super::opts::{opt, Opts};
use super::GeneratorInfo;
use crate::parse::ext::{PIPE_CAPACITY, SOCKET_CAPACITY};
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "hackbench",
        description: "rt-tests 2.4 hackbench: groups of senders writing messages to every receiver of their group over pipes or sockets; headline = time from kick-off to the last exit",
        options: vec![
            opt("groups", 10, "number of groups (hackbench -g)"),
            opt("loops", 100, "messages each sender writes to each receiver (hackbench -l)"),
            opt("datasize", 100, "bytes per message (hackbench -s)"),
            opt("fds", 20, "senders and receivers per group (hackbench -f)"),
            opt("mode", "socket", "socket (AF_UNIX socketpair, the default) or pipe (hackbench -p)"),
            opt("tasks", "process", "process (fork, the default) or thread (hackbench -T)"),
            opt("cpus", 2, "CPUs of the simulated machine (the lab host has 2)"),
        ],
    }
}

/// Shape of one hackbench instance, shared with the generators that use it as a load.
pub(super) struct Hackbench {
    /// Prepended to every task, channel and barrier name (e.g. `"load-"`).
    pub prefix: &'static str,
    pub groups: u64,
    /// `None`: loop for ever (a background load, ended by `global.duration`).
    pub loops: Option<u64>,
    /// Run as `while true; do hackbench -g groups -l loops; done`: a parent process forks
    /// every task, kicks them off, reaps them when they have sent `loops` messages to each
    /// receiver, and starts again (`loops` must be `Some`).
    pub restart: bool,
    pub datasize: u64,
    pub fds: u64,
    pub socket: bool,
    pub threads: bool,
}

/// Largest number of hackbench tasks a generator will write (the parser accepts 1,000,000).
pub(super) const MAX_TASKS: u64 = 200_000;

impl Hackbench {
    /// Add the tasks to `tasks` and the channels to `pipes` or `sockets`.
    pub(super) fn emit(
        &self,
        tasks: &mut Map<String, Value>,
        pipes: &mut Map<String, Value>,
        sockets: &mut Map<String, Value>,
    ) {
        if self.restart {
            return self.emit_restarting(tasks, pipes, sockets);
        }
        let p = self.prefix;
        let chan = |g: u64, r: u64| format!("{p}g{g}-r{r}");
        let start_barrier = format!("{p}start");
        for g in 0..self.groups {
            for r in 0..self.fds {
                let spec = if self.socket {
                    json!({"capacity": SOCKET_CAPACITY})
                } else {
                    json!({"capacity": PIPE_CAPACITY})
                };
                if self.socket {
                    sockets.insert(chan(g, r), spec);
                } else {
                    pipes.insert(chan(g, r), spec);
                }
            }
            // Receivers first, as hackbench creates them first.
            for r in 0..self.fds {
                let read = json!({"chan": chan(g, r), "bytes": self.datasize});
                let mut t = Map::new();
                self.process(&mut t);
                match self.loops {
                    Some(loops) => {
                        t.insert("loop".into(), json!(1));
                        t.insert(
                            "phases".into(),
                            json!({
                                "ready": {"barrier": start_barrier, "schedlab:mark": "start"},
                                "receive": {"loop": self.fds * loops, "schedlab:read": read},
                            }),
                        );
                    }
                    None => {
                        t.insert("schedlab:read".into(), read);
                    }
                }
                tasks.insert(format!("{p}g{g}-receiver{r}"), Value::Object(t));
            }
            // All senders of a group do the same thing: one template, `fds` instances.
            let mut writes = Map::new();
            for r in 0..self.fds {
                writes.insert(
                    format!("schedlab:write{r}"),
                    json!({"chan": chan(g, r), "bytes": self.datasize}),
                );
            }
            let mut t = Map::new();
            t.insert("instance".into(), json!(self.fds));
            self.process(&mut t);
            match self.loops {
                Some(loops) => {
                    let mut send = Map::new();
                    send.insert("loop".into(), json!(loops));
                    send.extend(writes);
                    t.insert("loop".into(), json!(1));
                    t.insert(
                        "phases".into(),
                        json!({
                            "ready": {"barrier": start_barrier, "schedlab:mark": "start"},
                            "send": Value::Object(send),
                        }),
                    );
                }
                None => t.extend(writes),
            }
            tasks.insert(format!("{p}g{g}-sender"), Value::Object(t));
        }
    }

    /// The restarting form: every task is created by `{prefix}parent` with `fork`, waits
    /// for one byte of the `{prefix}go` pipe (hackbench's kick-off through its "wakefd"
    /// pipe), does its `loops`, and writes one byte to `{prefix}done` before it exits;
    /// the parent reads one byte per task (its waitpid loop), then forks the next round.
    fn emit_restarting(
        &self,
        tasks: &mut Map<String, Value>,
        pipes: &mut Map<String, Value>,
        sockets: &mut Map<String, Value>,
    ) {
        let p = self.prefix;
        let loops = self.loops.expect("a restarting hackbench has a loop count");
        let (go, done) = (format!("{p}go"), format!("{p}done"));
        for c in [&go, &done] {
            pipes.insert(c.clone(), json!({"capacity": PIPE_CAPACITY}));
        }
        let once = Hackbench {
            prefix: self.prefix,
            groups: self.groups,
            loops: None,
            datasize: self.datasize,
            fds: self.fds,
            socket: self.socket,
            threads: self.threads,
            restart: false,
        };
        let mut forever = Map::new();
        once.emit(&mut forever, pipes, sockets);
        let mut spawn = Map::new();
        for (name, mut t) in forever {
            let copies = t.get("instance").and_then(Value::as_u64).unwrap_or(1);
            let Value::Object(ref mut body) = t else {
                unreachable!("emit writes objects")
            };
            body.remove("instance");
            let calls = if name.ends_with("sender") {
                loops
            } else {
                loops * self.fds
            };
            let mut work = Map::new();
            work.insert("loop".into(), json!(calls));
            for (k, v) in std::mem::take(body) {
                if k.starts_with("schedlab:") && k != "schedlab:process" {
                    work.insert(k, v);
                } else {
                    body.insert(k, v);
                }
            }
            body.insert("instance".into(), json!(0));
            body.insert("loop".into(), json!(1));
            body.insert(
                "phases".into(),
                json!({
                    "ready": {"schedlab:read": {"chan": go, "bytes": 1}},
                    "work": Value::Object(work),
                    "done": {"schedlab:write": {"chan": done, "bytes": 1}},
                }),
            );
            for _ in 0..copies {
                spawn.insert(format!("fork{}", spawn.len()), json!(name));
            }
            tasks.insert(name, t);
        }
        let n = spawn.len();
        let mut parent = Map::new();
        self.process(&mut parent);
        parent.insert("loop".into(), json!(-1));
        parent.insert(
            "phases".into(),
            json!({
                "spawn": Value::Object(spawn),
                "kick": {"schedlab:write": {"chan": go, "bytes": n}},
                "reap": {"schedlab:read": {"chan": done, "bytes": n}},
            }),
        );
        tasks.insert(format!("{p}parent"), Value::Object(parent));
    }

    fn process(&self, t: &mut Map<String, Value>) {
        if self.threads {
            t.insert(
                "schedlab:process".into(),
                json!(format!("{}hackbench", self.prefix)),
            );
        }
    }

    /// Tasks this instance creates.
    pub(super) fn ntasks(&self) -> u64 {
        self.groups * self.fds * 2
    }
}

/// A looping `hackbench -g groups` (default message shape, sockets, processes) as a load.
pub(super) fn load(groups: u64) -> Hackbench {
    Hackbench {
        prefix: "load-",
        groups,
        loops: None,
        datasize: 100,
        fds: 20,
        socket: true,
        threads: false,
        restart: false,
    }
}

/// `while true; do hackbench -g groups -l loops; done` as a load: the processes exit and
/// are forked again every round, as the seed's `hackbench 10` load was.
pub(super) fn restarting_load(groups: u64, loops: u64) -> Hackbench {
    Hackbench {
        loops: Some(loops),
        restart: true,
        ..load(groups)
    }
}

/// The `schedlab` object with the channels and machine filled in.
pub(super) fn schedlab_object(
    cpus: u64,
    pipes: Map<String, Value>,
    sockets: Map<String, Value>,
    headline: Value,
) -> Value {
    let mut s = Map::new();
    s.insert("machine".into(), json!({"cpus": cpus, "hz": 250}));
    if !pipes.is_empty() {
        s.insert("pipes".into(), Value::Object(pipes));
    }
    if !sockets.is_empty() {
        s.insert("sockets".into(), Value::Object(sockets));
    }
    s.insert("headline".into(), headline);
    Value::Object(s)
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let hb = Hackbench {
        prefix: "",
        groups: o.int("groups", 1, 10_000)?,
        loops: Some(o.int("loops", 1, i32::MAX as u64)?),
        datasize: o.int("datasize", 1, 1 << 20)?,
        fds: o.int("fds", 1, 1000)?,
        socket: o.choice("mode", &["socket", "pipe"])? == "socket",
        threads: o.choice("tasks", &["process", "thread"])? == "thread",
        restart: false,
    };
    let cpus = o.int("cpus", 1, 256)?;
    if hb.ntasks() > MAX_TASKS {
        return Err(o.error(
            "groups",
            format!(
                "{} groups of {} fds make {} tasks, more than {MAX_TASKS}",
                hb.groups,
                hb.fds,
                hb.ntasks()
            ),
        ));
    }
    // The receive phase loops fds*loops times; keep it within rt-app's int loop counter.
    if hb.fds * hb.loops.unwrap_or(1) > i32::MAX as u64 {
        return Err(o.error("loops", "fds × loops exceeds 2^31-1 messages per receiver"));
    }
    let (mut tasks, mut pipes, mut sockets) = (Map::new(), Map::new(), Map::new());
    hb.emit(&mut tasks, &mut pipes, &mut sockets);
    Ok(json!({
        "global": {"duration": -1, "default_policy": "SCHED_OTHER"},
        "tasks": Value::Object(tasks),
        "schedlab": schedlab_object(
            cpus,
            pipes,
            sockets,
            json!({"type": "elapsed_since_mark", "mark": "start", "name": "hackbench_time"}),
        ),
    }))
}

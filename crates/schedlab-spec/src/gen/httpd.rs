//! A web server under a closed-loop benchmark: Apache httpd's worker MPM served to
//! ApacheBench (`ab -n requests -c concurrency`).
//!
//! What is modelled (Apache 2.0's worker MPM, `server/mpm/worker/worker.c` and
//! `fdqueue.c`; ab, `support/ab.c`):
//! - `children` server processes `httpd-<k>`, each with one listener thread and
//!   `threads` worker threads (`ThreadsPerChild`). The listener accepts a connection
//!   (a read of one byte from the shared socket `accept`: every child's listener waits on
//!   the one listening socket) and pushes it on its child's connection queue (the pipe
//!   `queue-<k>`, which holds at most `threads` connections, as the worker MPM's fdqueue is
//!   sized by ThreadsPerChild); an idle worker pops it, reads the request (socket `req`),
//!   does the request's user work (`user_us`) and writes the response (socket `resp`).
//! - ab as `concurrency` threads of one process `ab`, each a connection slot that sends a
//!   request, waits for a response, and sends the next (`think_us` apart; ab has no think
//!   time), `requests` in all. Each request is a new connection (ab's default, no
//!   keep-alive): a connect (a write to `accept`) then the request.
//! - CPU per request: the worker's `user_us` of user time and `kernel_us` of kernel time,
//!   half in reading the request and half in writing the response (the `req` and `resp`
//!   sockets' per-call cost); ab spends `client_us` of user time per request, and its
//!   own send and receive calls cost what the worker's do (a channel's call cost is the
//!   same at both ends). Accepting and the queue hand-off cost nothing of their own.
//! - The headline is the `rate` of the mark `done` (requests per second, ab's "Requests
//!   per second"), with the latency of each request (ab's "Time per request" and its
//!   percentiles): every client thread marks `send` before it connects and `done` when it
//!   has the response, and `rate` measures each `done` from the thread's previous mark.
//!
//! Simplifications: requests and responses are counted, not addressed. The grammar's
//! channels are fixed, so all connections share the sockets `accept`, `req` and `resp`;
//! a response goes to the client thread that has waited longest for one (waiters are
//! served in order), so each request is matched to the responses in the order the clients
//! asked, not to its own: throughput and the mean latency are exact, the spread of the
//! latencies is that of requests answered in order. ab's single thread multiplexing its
//! connections with `poll` is one thread per connection.
//!
//! Every thread ends: the grammar's loops have fixed counts, so each child's listener
//! accepts its share of the `requests` connections (`requests / children`, the first
//! `requests % children` one more) and each worker serves its share of its child's.
//! Waiters on a channel are served in order, so the listeners take connections in turn
//! and the workers requests in turn, and every share runs out together at the end; the
//! run ends when ab's last response is read, and `rate` counts to that instant. A worker
//! whose share is zero (fewer requests than threads) is not created.
use super::opts::{opt, Opts};
use super::{Events, GeneratorInfo};
use crate::parse::ext::SOCKET_CAPACITY;
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "httpd",
        description: "Apache httpd's worker MPM under ApacheBench: `children` processes of one listener and `threads` workers (ThreadsPerChild) serve `requests` requests from `concurrency` closed-loop ab connections over sockets; per-request user and kernel CPU; headline requests_per_s (rate of the `done` mark) with each request's latency",
        options: vec![
            opt("children", 2, "server processes (Apache 2.0's worker default StartServers 2)"),
            opt("threads", 25, "worker threads per process (ThreadsPerChild, default 25)"),
            opt("concurrency", 10, "requests in flight (ab -c; assumed)"),
            opt("requests", 1000, "requests in all (ab -n)"),
            opt("user_us", 200, "user CPU time of a request in the worker, µs (assumed)"),
            opt("kernel_us", 50, "kernel CPU time of a request in the worker, µs: half reading it, half writing the response (assumed)"),
            opt("client_us", 20, "ab's user CPU time per request, µs (assumed)"),
            opt("think_us", 0, "pause of a client between a response and its next request, µs (ab has none)"),
            opt("cpus", 2, "CPUs of the simulated machine (the seed's Athlon64 X2 has 2 cores)"),
        ],
    }
}

/// Largest number of requests a spec is written for (the loop counts are rt-app ints).
const MAX_REQUESTS: u64 = i32::MAX as u64;

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let children = o.int("children", 1, 64)?;
    let threads = o.int("threads", 1, 1000)?;
    let concurrency = o.int("concurrency", 1, 10_000)?;
    let requests = o.int("requests", 1, MAX_REQUESTS)?;
    if concurrency > requests {
        return Err(o.error(
            "concurrency",
            format!("expected at most `requests` ({requests}) requests in flight (ab refuses -c above -n), found {concurrency}"),
        ));
    }
    let user_us = o.int("user_us", 0, 10_000_000)?;
    let kernel_us = o.int("kernel_us", 0, 2_000_000)?;
    let client_us = o.int("client_us", 0, 10_000_000)?;
    let think_us = o.int("think_us", 0, 60_000_000)?;
    let cpus = o.int("cpus", 1, 256)?;

    let mut tasks = Map::new();
    // ab: `concurrency` connection slots, the first `requests % concurrency` one request more.
    for (name, copies, loops) in shares("ab", requests, concurrency) {
        tasks.insert(name, client(copies, loops, client_us, think_us));
    }
    let mut pipes = Map::new();
    // Each child accepts its share of the connections, each worker serves its share of
    // its child's: every server thread exits when ab is done (see the header).
    for k in 0..children {
        let accepts = requests / children + u64::from(k < requests % children);
        if accepts == 0 {
            continue;
        }
        let queue = format!("queue-{k}");
        pipes.insert(
            queue.clone(),
            json!({"capacity": threads, "op_cost_ns": 0, "byte_cost_ps": 0}),
        );
        let process = format!("httpd-{k}");
        tasks.insert(
            format!("listener-{k}"),
            json!({
                "loop": accepts,
                "schedlab:process": process,
                "schedlab:read": {"chan": "accept", "bytes": 1},
                "schedlab:write": {"chan": queue, "bytes": 1},
            }),
        );
        for (name, copies, loops) in shares(&format!("worker-{k}"), accepts, threads) {
            tasks.insert(
                name,
                json!({
                    "instance": copies,
                    "loop": loops,
                    "schedlab:process": process,
                    "schedlab:read": {"chan": queue, "bytes": 1},
                    "schedlab:read1": {"chan": "req", "bytes": 1},
                    "run": user_us,
                    "schedlab:write": {"chan": "resp", "bytes": 1},
                }),
            );
        }
    }
    // Half the kernel time on each of the two calls.
    let kernel_ns = kernel_us * 1000;
    let socket =
        |ns: u64| json!({"capacity": SOCKET_CAPACITY, "op_cost_ns": ns, "byte_cost_ps": 0});
    let sockets = json!({
        "accept": {"capacity": SOCKET_CAPACITY, "op_cost_ns": 0, "byte_cost_ps": 0},
        "req": socket(kernel_ns / 2),
        "resp": socket(kernel_ns - kernel_ns / 2),
    });
    Ok(json!({
        "global": {"duration": -1, "default_policy": "SCHED_OTHER"},
        "tasks": Value::Object(tasks),
        "schedlab": {
            "machine": {"cpus": cpus, "hz": 1000},
            "pipes": Value::Object(pipes),
            "sockets": sockets,
            "headline": {"type": "rate", "mark": "done", "name": "requests_per_s"},
        },
    }))
}

/// `total` requests shared by `parts` tasks as evenly as can be: templates `(name,
/// copies, loops)`, the first `total % parts` with one loop more (`<name>-extra`); parts
/// with nothing to do are left out.
fn shares(name: &str, total: u64, parts: u64) -> Vec<(String, u64, u64)> {
    let (each, extra) = (total / parts, total % parts);
    [
        (format!("{name}-extra"), extra, each + 1),
        (name.to_string(), parts - extra, each),
    ]
    .into_iter()
    .filter(|&(_, copies, loops)| copies > 0 && loops > 0)
    .collect()
}

/// `copies` ab connection slots of `loops` requests each.
fn client(copies: u64, loops: u64, client_us: u64, think_us: u64) -> Value {
    let mut ev = Events::default();
    ev.0.insert("instance".into(), json!(copies));
    ev.0.insert("loop".into(), json!(loops));
    ev.0.insert("schedlab:process".into(), json!("ab"));
    ev.push("schedlab:mark", json!("send"));
    if client_us > 0 {
        ev.push("run", json!(client_us));
    }
    ev.push("schedlab:write", json!({"chan": "accept", "bytes": 1}));
    ev.push("schedlab:write", json!({"chan": "req", "bytes": 1}));
    ev.push("schedlab:read", json!({"chan": "resp", "bytes": 1}));
    ev.push("schedlab:mark", json!("done"));
    if think_us > 0 {
        ev.push("sleep", json!(think_us));
    }
    Value::Object(ev.0)
}

//! A fio-like block I/O job (fio 3.x's job options, HOWTO "Job file parameters"):
//! `numjobs` tasks `job<i>`, each doing I/O of `bs` bytes on a file of its own (fio's
//! default `<jobname>.<jobnum>.0` files, here `fio.<i>.0`, one after the other on one
//! null_blk device) with the engine's libaio-like `count`/`depth` (fio's `libaio` engine
//! keeping `iodepth` in flight), O_DIRECT or buffered (`direct`, default 0 as in fio), at an
//! I/O priority (`prioclass`: 1 RT, 2 BE, 3 idle, with `prio` 0..7; fio's `prioclass` and
//! `prio`, which set `ioprio_set`).
//!
//! - `rw`: `read`, `write` (sequential), `randread`, `randwrite`, `rw`/`readwrite`
//!   (sequential mixed) and `randrw` (random mixed) with `rwmixread` % of reads. fio picks
//!   each I/O's direction at random with that probability; here a job alternates blocks of
//!   `rwmixread / g` reads and `(100 − rwmixread) / g` writes (g their greatest common
//!   divisor), which gives the same mix without its randomness.
//! - Without `runtime` a job does `size` bytes and exits (fio's default); with `runtime`
//!   (seconds) it repeats until the run ends (fio's `time_based`).
//! - Buffered jobs keep one request at a time whatever `iodepth` says (with libaio fio's
//!   buffered I/O completes at submission).

use super::opts::{opt, Opts};
use super::GeneratorInfo;
use crate::SpecError;
use serde_json::{json, Map, Value};

pub(super) fn info() -> GeneratorInfo {
    GeneratorInfo {
        name: "fio",
        description: "fio-like jobs: numjobs tasks doing read/write/randread/randwrite/rw/randrw of bs bytes at iodepth on files of their own on a null_blk device, direct or buffered, at an I/O priority",
        options: vec![
            opt("rw", "read", "read, write, randread, randwrite, rw (readwrite), randrw"),
            opt("rwmixread", 50, "% of reads in rw and randrw"),
            opt("bs", 4096, "block size in bytes (a multiple of 512)"),
            opt("iodepth", 1, "requests kept in flight (direct I/O)"),
            opt("direct", 0, "1: O_DIRECT; 0: through the page cache"),
            opt("prioclass", 0, "I/O priority class: 0 none (derived), 1 RT, 2 BE, 3 idle"),
            opt("prio", 4, "I/O priority level 0..7 within prioclass 1 or 2"),
            opt("numjobs", 1, "jobs (tasks job0..), each with its own file"),
            opt("size", 67108864, "bytes of each job's file (a multiple of 4096)"),
            opt("runtime", 0, "seconds to run for, repeating the job (0: do size bytes once)"),
            opt("completion_ns", 10000, "null_blk completion time of a request, ns"),
            opt("queue_depth", 64, "null_blk hardware queue depth"),
            opt("scheduler", "none", "the device's I/O scheduler"),
            opt("cpus", 4, "CPUs of the simulated machine"),
        ],
    }
}

pub(super) fn generate(options: &[(String, String)]) -> Result<Value, SpecError> {
    let o = Opts::new(&info(), options)?;
    let rw = o.choice(
        "rw",
        &[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "readwrite",
            "randrw",
        ],
    )?;
    let mix = o.int("rwmixread", 0, 100)?;
    let bs = o.int("bs", 512, 1 << 30)?;
    if bs % 512 != 0 {
        return Err(o.error("bs", format!("expected a multiple of 512, found {bs}")));
    }
    let depth = o.int("iodepth", 1, 65536)?;
    let direct = o.int("direct", 0, 1)? == 1;
    let class = o.int("prioclass", 0, 3)?;
    let prio = o.int("prio", 0, 7)?;
    let jobs = o.int("numjobs", 1, 10_000)?;
    let size = o.int("size", 4096, 1 << 40)?;
    if size % 4096 != 0 {
        return Err(o.error("size", format!("expected a multiple of 4096, found {size}")));
    }
    if size < bs {
        return Err(o.error("size", format!("expected at least bs ({bs}), found {size}")));
    }
    let runtime = o.int("runtime", 0, 1_000_000)?;
    let completion_ns = o.int("completion_ns", 0, 1_000_000_000)?;
    let queue_depth = o.int("queue_depth", 1, 65536)?;
    let scheduler = o.choice("scheduler", &["none", "mq-deadline", "kyber", "bfq"])?;
    let cpus = o.int("cpus", 1, 256)?;

    let random = rw.starts_with("rand");
    let offset = if random {
        json!("random")
    } else {
        json!("seq")
    };
    let depth = if direct { depth } else { 1 };
    let total = size / bs;
    let (reads, writes) = match rw {
        "read" | "randread" => (1, 0),
        "write" | "randwrite" => (0, 1),
        _ => {
            let g = gcd(mix, 100 - mix).max(1);
            (mix / g, (100 - mix) / g)
        }
    };
    let block = reads + writes;
    // Whole blocks of the mix; a job of one direction does its `total` in one op.
    let (per_op, loops) = if block == 1 {
        (total, 1)
    } else {
        (1, (total / block).max(1))
    };

    let mut tasks = Map::new();
    let mut files = Map::new();
    for j in 0..jobs {
        let file = format!("fio.{j}.0");
        files.insert(
            file.clone(),
            json!({"dev": "nullb0", "offset": j * size, "bytes": size}),
        );
        let io = |op: &str, count: u64| {
            json!({"file": file, "op": op, "bytes": bs, "offset": offset,
                   "direct": direct, "count": count, "depth": depth.min(count)})
        };
        let mut t = Map::new();
        t.insert(
            "loop".into(),
            json!(if runtime > 0 { -1 } else { loops as i64 }),
        );
        if class > 0 {
            let name = ["", "rt", "be", "idle"][class as usize];
            let prio = if class == 3 {
                json!({"class": name})
            } else {
                json!({"class": name, "level": prio})
            };
            t.insert("schedlab:ioprio".into(), prio);
        }
        if reads > 0 {
            t.insert("schedlab:io".into(), io("read", reads * per_op));
        }
        if writes > 0 {
            t.insert("schedlab:io2".into(), io("write", writes * per_op));
        }
        tasks.insert(format!("job{j}"), Value::Object(t));
    }
    let mut global = Map::new();
    if runtime > 0 {
        global.insert("duration".into(), json!(runtime));
    }
    Ok(json!({
        "global": global,
        "tasks": tasks,
        "schedlab": {
            "machine": {"cpus": cpus, "hz": 250},
            "devices": {"nullb0": {"model": "null_blk", "completion_ns": completion_ns,
                                   "queue_depth": queue_depth, "scheduler": scheduler,
                                   "size_bytes": (jobs * size).max(1 << 30)}},
            "files": files,
        }
    }))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

//! `make bench`: the wall time of validating specs of 10 000, 40 000 and 160 000 task
//! templates, channels, cgroups or phases, and its growth per 4× more. Linear validation
//! grows by about 4× per step (more where the heap outgrows the caches); a quadratic step
//! shows as 16×. `tests/validation_steps.rs` checks the same shapes by counting steps.
//!
//! Usage: `cargo run --release -p schedlab-spec --example validate_scale [SIZES…]`.

use std::time::Instant;

/// A spec of `n` entities of `shape`.
fn spec(shape: &str, n: usize) -> String {
    let mut tasks = Vec::with_capacity(n);
    let mut ext = String::new();
    match shape {
        "tasks" => {
            for i in 0..n {
                tasks.push(format!(
                    "\"t{i}\": {{\"loop\": 1, \"lock\": \"m{i}\", \"run\": 10, \"unlock\": \"m{i}\", \
                     \"timer\": {{\"ref\": \"unique\", \"period\": 1000}}}}"
                ));
            }
        }
        "channels" => {
            let mut decl = Vec::with_capacity(n / 2);
            for i in (0..n).step_by(2) {
                tasks.push(format!(
                    "\"w{i}\": {{\"schedlab:write\": {{\"chan\": \"c{i}\", \"bytes\": 8}}}}"
                ));
                tasks.push(format!(
                    "\"r{i}\": {{\"schedlab:read\": {{\"chan\": \"c{i}\", \"bytes\": 8}}}}"
                ));
                decl.push(format!("\"c{i}\": {{}}"));
            }
            ext = format!("\"sockets\": {{{}}}", decl.join(","));
        }
        "cgroups" => {
            tasks.push("\"t\": {\"taskgroup\": \"/g1\", \"run\": 10}".into());
            let decl: Vec<String> = (0..n)
                .map(|i| format!("\"/g{}/h{i}\": {{\"cpu.shares\": 100}}", i % 7))
                .collect();
            ext = format!("\"cgroups\": {{{}}}", decl.join(","));
        }
        "phases" => {
            let phases: Vec<String> = (0..n).map(|_| "\"p\": {\"run\": 1}".into()).collect();
            tasks.push(format!("\"t\": {{\"phases\": {{{}}}}}", phases.join(",")));
        }
        other => panic!("unknown shape {other}"),
    }
    format!(
        "{{\"global\": {{\"duration\": 1}}, \"tasks\": {{{}}}, \"schedlab\": {{{ext}}}}}",
        tasks.join(",")
    )
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a size"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 40_000, 160_000]
    } else {
        sizes
    };
    println!("\n## Validation (parse_spec of n entities, one core)\n");
    println!("| shape | n | wall s | × previous |");
    println!("|---|---:|---:|---:|");
    for shape in ["tasks", "channels", "cgroups", "phases"] {
        let mut prev: Option<f64> = None;
        for &n in &sizes {
            let text = spec(shape, n);
            let started = Instant::now();
            if let Err(e) = schedlab_spec::parse_spec(&text) {
                panic!("{shape} {n}: {e}");
            }
            let wall = started.elapsed().as_secs_f64();
            let growth = prev.map_or(String::new(), |p| format!("{:.1}", wall / p));
            println!("| {shape} | {n} | {wall:.3} | {growth} |");
            prev = Some(wall);
        }
    }
}

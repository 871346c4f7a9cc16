//! `rtq-probe`: see the library documentation (`schedlab_rtq_probe`) and docs/readyq.md.
//!
//! Usage: `rtq-probe time|count|count-inner|plan [--quick] [--ns N,N,…] [--valgrind PATH]`.
//! `--ns` replaces the plan's numbers of ready tasks (ascending, each 1..=254).
//! Output: one JSON document on stdout. Bad arguments: one line on stderr, exit 2.

use std::path::PathBuf;
use std::process::ExitCode;

use schedlab_rtq_probe::{
    backend_idents, backends, cases_json, plan::Plan, run_count, run_count_inner, run_time,
};
use serde_json::json;

const USAGE: &str =
    "usage: rtq-probe time|count|count-inner|plan [--quick] [--ns N,N,...] [--valgrind PATH]";

struct Args {
    mode: String,
    quick: bool,
    ns: Option<Vec<usize>>,
    valgrind: PathBuf,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    let mode = it.next().ok_or("missing mode")?.clone();
    if !["time", "count", "count-inner", "plan"].contains(&mode.as_str()) {
        return Err(format!("unknown mode {mode:?}"));
    }
    let mut a = Args {
        mode,
        quick: false,
        ns: None,
        valgrind: PathBuf::from("valgrind"),
    };
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--valgrind" => a.valgrind = it.next().ok_or("--valgrind needs a path")?.into(),
            "--ns" => a.ns = Some(parse_ns(it.next().ok_or("--ns needs a list")?)?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
}

/// `1,5,10` → [1, 5, 10]; ascending, each in 1..=MAX_N.
fn parse_ns(text: &str) -> Result<Vec<usize>, String> {
    let ns: Vec<usize> = text
        .split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("--ns: {x:?} is not a number"))
        })
        .collect::<Result<_, _>>()?;
    let max = schedlab_rtq_probe::plan::MAX_N;
    if ns.iter().any(|&n| n == 0 || n > max) {
        return Err(format!(
            "--ns: each number of ready tasks must be in 1..={max}"
        ));
    }
    if ns.windows(2).any(|w| w[0] >= w[1]) {
        return Err("--ns: the numbers must be strictly ascending".into());
    }
    Ok(ns)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: rtq-probe: {e} ({USAGE})");
            return ExitCode::from(2);
        }
    };
    let mut plan = if args.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    if let Some(ns) = args.ns.clone() {
        plan.ns = ns;
    }
    let doc = match args.mode.as_str() {
        "time" => run_time(&plan),
        "count-inner" => json!({"boundaries": run_count_inner(&plan)}),
        "plan" => plan_doc(&plan),
        _ => {
            let exe = match std::env::current_exe() {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: rtq-probe: cannot locate itself: {e}");
                    return ExitCode::from(1);
                }
            };
            match run_count(&plan, &args.valgrind, &exe, args.quick, args.ns.as_deref()) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: rtq-probe count: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    println!("{doc}");
    ExitCode::SUCCESS
}

fn plan_doc(plan: &Plan) -> serde_json::Value {
    let symbols: serde_json::Map<String, serde_json::Value> = backend_idents()
        .into_iter()
        .map(|(name, ident)| (name.to_string(), json!(backends::symbols(ident))))
        .collect();
    json!({
        "schema": schedlab_rtq_probe::SCHEMA,
        "mode": "plan",
        "levels": schedlab_rtq_probe::plan::LEVELS,
        "n": plan.ns,
        "reps_warm": plan.reps_warm,
        "reps_cold": plan.reps_cold,
        "cases": cases_json(),
        "symbols": symbols,
    })
}

//! `rtq-probe`: measures the `schedlab-rtq` ready-queue back ends the way seed 002
//! ("Performance comparison of ready-queue structures in an ITRON kernel", Musashi Institute
//! of Technology; see docs/seeds.md) measured TOPPERS/JSP's
//! per-priority queues against a single ready queue: `act_tsk`, `chg_pri` and `rot_rdq`,
//! average and worst case, against the number of ready tasks and the priority involved,
//! warm and cold.
//!
//! Modes (docs/readyq.md has the details and the JSON schema):
//! * `time`: nanoseconds per operation ([`timing`]);
//! * `count`: exact instruction counts and simulated data-cache misses under callgrind
//!   ([`callgrind`]), the figures that repeat exactly on a noisy machine;
//! * `plan`: the scenarios, without measuring.
//!
//! Where it simplifies: a μITRON service call also checks its arguments, locks the CPU and
//! may dispatch; only the ready-queue work is measured here: the queue operation plus
//! TOPPERS/JSP's update of the next task to run ([`kernel::Kernel`]: a comparison, the
//! rotated queue's new head, or a search only where JSP's kernel searches).

pub mod backends;
pub mod callgrind;
pub mod kernel;
pub mod plan;
pub mod timing;

use std::path::Path;

use schedlab_rtq::ReadyQueue;
use serde_json::{json, Map, Value};

use backends::{for_each_backend, Backend, Visitor};
use plan::{arguments, populated, Case, Op, Plan};

/// Schema name of the probe's JSON output.
pub const SCHEMA: &str = "schedlab.rtq-probe/1";

/// Per-case figures of one metric: `values[n_index][case_index]`.
pub type CaseTable = Vec<Vec<f64>>;

/// Average, worst and per-priority means of one metric against N, as JSON.
pub fn summarise(values: &CaseTable, cases: &[Case]) -> Value {
    let avg: Vec<f64> = values.iter().map(|v| mean(v)).collect();
    let worst: Vec<f64> = values
        .iter()
        .map(|v| v.iter().copied().fold(f64::MIN, f64::max))
        .collect();
    let levels = cases.iter().map(|c| c.prio as usize + 1).max().unwrap_or(0);
    let by_prio: Vec<Vec<f64>> = values
        .iter()
        .map(|v| {
            (0..levels)
                .map(|p| {
                    let at_p: Vec<f64> = cases
                        .iter()
                        .zip(v)
                        .filter(|(c, _)| c.prio as usize == p)
                        .map(|(_, x)| *x)
                        .collect();
                    mean(&at_p)
                })
                .collect()
        })
        .collect();
    json!({"avg": avg, "worst": worst, "by_prio": by_prio, "cases": values})
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// The cases of every operation as JSON (`{"act_tsk": [{"prio": 0, "target": null}, …]}`).
pub fn cases_json() -> Value {
    let mut m = Map::new();
    for op in Op::ALL {
        let list: Vec<Value> = Plan::cases(op)
            .iter()
            .map(|c| json!({"prio": c.prio, "target": c.target.map(|t| t.name())}))
            .collect();
        m.insert(op.name().into(), Value::Array(list));
    }
    Value::Object(m)
}

/// Names of the back ends in report order.
pub fn backend_names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl Visitor for Names {
        fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
            self.0.push(b.name);
        }
    }
    let mut v = Names(Vec::new());
    for_each_backend(&mut v);
    v.0
}

/// Symbol identifiers of the back ends (`single_list`, …), in report order.
pub fn backend_idents() -> Vec<(&'static str, &'static str)> {
    struct Idents(Vec<(&'static str, &'static str)>);
    impl Visitor for Idents {
        fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
            std::hint::black_box((b.size_only)());
            self.0.push((b.name, b.ident));
        }
    }
    let mut v = Idents(Vec::new());
    for_each_backend(&mut v);
    v.0
}

fn header(mode: &str, plan: &Plan) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("schema".into(), json!(SCHEMA));
    m.insert("mode".into(), json!(mode));
    m.insert("levels".into(), json!(plan::LEVELS));
    m.insert("capacity".into(), json!(plan::CAPACITY));
    m.insert("n".into(), json!(plan.ns));
    m.insert("backends".into(), json!(backend_names()));
    m.insert("cases".into(), cases_json());
    m
}

/// Time mode: the whole plan, every back end; JSON document.
pub fn run_time(plan: &Plan) -> Value {
    struct Timer<'a> {
        plan: &'a Plan,
        clock: timing::Clock,
        ev: timing::Evictor,
        ops: Map<String, Value>,
    }
    impl Visitor for Timer<'_> {
        fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
            for op in Op::ALL {
                let cases = Plan::cases(op);
                let (mut warm, mut cold) = (Vec::new(), Vec::new());
                for &n in &self.plan.ns {
                    let (w, c) =
                        timing::time_cases(b, op, n, &cases, self.plan, &self.clock, &mut self.ev);
                    warm.push(w);
                    cold.push(c);
                }
                let entry = self
                    .ops
                    .entry(op.name())
                    .or_insert_with(|| Value::Object(Map::new()));
                entry[b.name] = json!({
                    "ns_warm": summarise(&warm, &cases),
                    "ns_cold": summarise(&cold, &cases),
                });
            }
        }
    }
    let clock = timing::Clock::calibrate();
    let mut t = Timer {
        plan,
        clock,
        ev: timing::Evictor::default(),
        ops: Map::new(),
    };
    for_each_backend(&mut t);
    let mut doc = header("time", plan);
    doc.insert(
        "clock".into(),
        json!({"source": clock.source, "ticks_per_ns": clock.ticks_per_ns,
               "overhead_ns": clock.overhead_ticks / clock.ticks_per_ns}),
    );
    doc.insert("reps_warm".into(), json!(plan.reps_warm));
    doc.insert("reps_cold".into(), json!(plan.reps_cold));
    doc.insert("evict_bytes".into(), json!(timing::EVICT_BYTES));
    doc.insert("ops".into(), Value::Object(t.ops));
    Value::Object(doc)
}

/// The inner run of count mode (under callgrind): every case once after the eviction walk
/// (cold), each followed by a boundary call; at the plan's first N each case also runs
/// warm first, to check that the instruction count does not depend on the cache state
/// (a warm run at every N would double the dumps, and so count mode's time, for no new
/// number). Returns the number of boundaries passed.
pub fn run_count_inner(plan: &Plan) -> usize {
    struct Inner<'a> {
        plan: &'a Plan,
        evict: Vec<u8>,
        boundaries: usize,
    }
    impl Inner<'_> {
        fn once<Q: ReadyQueue>(&mut self, b: &Backend<Q>, op: Op, n: usize, c: Case, cold: bool) {
            let (t, p) = arguments(op, c, n);
            let mut q = populated(b.make, n);
            if cold {
                for i in (0..self.evict.len()).step_by(64) {
                    self.evict[i] = self.evict[i].wrapping_add(1);
                }
                std::hint::black_box(&self.evict);
            }
            let r = (b.ops[op as usize])(std::hint::black_box(&mut q), t, p);
            std::hint::black_box(r);
            backends::rtqp_boundary(self.boundaries);
            self.boundaries += 1;
        }
    }
    impl Visitor for Inner<'_> {
        fn visit<Q: ReadyQueue>(&mut self, b: &Backend<Q>) {
            for op in Op::ALL {
                for &n in &self.plan.ns {
                    for c in Plan::cases(op) {
                        if n == self.plan.ns[0] {
                            self.once(b, op, n, c, false);
                        }
                        self.once(b, op, n, c, true);
                    }
                }
            }
        }
    }
    let mut inner = Inner {
        plan,
        evict: vec![1; callgrind::SIM_EVICT_BYTES],
        boundaries: 0,
    };
    for_each_backend(&mut inner);
    inner.boundaries
}

/// Number of dumps the inner run produces for `plan`.
pub fn expected_dumps(plan: &Plan) -> usize {
    let per_n: usize = Op::ALL.iter().map(|&op| Plan::cases(op).len()).sum();
    backend_names().len() * (plan.ns.len() + 1) * per_n
}

/// Count mode, second half: turn the inner run's dumps (in plan order) into the JSON
/// document. Errors if the number of dumps does not match the plan.
pub fn count_document(plan: &Plan, dumps: &[callgrind::Dump]) -> Result<Value, String> {
    let want = expected_dumps(plan);
    if dumps.len() != want {
        return Err(format!(
            "callgrind wrote {} dumps, the plan needs {want}",
            dumps.len()
        ));
    }
    let mut it = dumps.iter();
    let mut ops = Map::new();
    let mut mismatches = 0usize;
    for name in backend_names() {
        for op in Op::ALL {
            let cases = Plan::cases(op);
            let (mut ir, mut d1, mut ll) = (Vec::new(), Vec::new(), Vec::new());
            let (mut dr, mut dw) = (Vec::new(), Vec::new());
            for &n in &plan.ns {
                let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
                let (mut r, mut w) = (Vec::new(), Vec::new());
                for _ in &cases {
                    let warm = if n == plan.ns[0] { it.next() } else { None };
                    let cold = it.next().ok_or("ran out of dumps")?;
                    if let Some(w) = warm {
                        mismatches += usize::from(w.get("Ir") != cold.get("Ir"));
                    }
                    a.push(cold.get("Ir") as f64);
                    b.push((cold.get("D1mr") + cold.get("D1mw")) as f64);
                    c.push((cold.get("DLmr") + cold.get("DLmw")) as f64);
                    r.push(cold.get("Dr") as f64);
                    w.push(cold.get("Dw") as f64);
                }
                ir.push(a);
                d1.push(b);
                ll.push(c);
                dr.push(r);
                dw.push(w);
            }
            let entry = ops
                .entry(op.name())
                .or_insert_with(|| Value::Object(Map::new()));
            entry[name] = json!({
                "instructions": summarise(&ir, &cases),
                "d1_misses_cold": summarise(&d1, &cases),
                "ll_misses_cold": summarise(&ll, &cases),
                "data_reads": summarise(&dr, &cases),
                "data_writes": summarise(&dw, &cases),
            });
        }
    }
    let mut doc = header("count", plan);
    doc.insert("cache_sim".into(), json!(callgrind::CACHE_ARGS));
    doc.insert("sim_evict_bytes".into(), json!(callgrind::SIM_EVICT_BYTES));
    doc.insert("warm_cold_instruction_mismatches".into(), json!(mismatches));
    doc.insert("ops".into(), Value::Object(ops));
    Ok(Value::Object(doc))
}

/// Count mode: run this executable under `valgrind` (path given) in a temporary
/// directory, read the dumps, build the document.
pub fn run_count(
    plan: &Plan,
    valgrind: &Path,
    exe: &Path,
    quick: bool,
    ns: Option<&[usize]>,
) -> Result<Value, String> {
    let dir = std::env::temp_dir().join(format!("rtq-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = (|| {
        let stem = "cg.out";
        let mut inner = vec!["count-inner".to_string()];
        if quick {
            inner.push("--quick".into());
        }
        if let Some(ns) = ns {
            let list: Vec<String> = ns.iter().map(|n| n.to_string()).collect();
            inner.extend(["--ns".to_string(), list.join(",")]);
        }
        let args = callgrind::valgrind_args(&dir.join(stem), exe, &inner);
        let out = std::process::Command::new(valgrind)
            .args(&args)
            .output()
            .map_err(|e| format!("{}: {e}", valgrind.display()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("").to_string();
            return Err(format!("valgrind failed ({}): {last}", out.status));
        }
        let dumps = callgrind::read_dumps(&dir, stem)?;
        count_document(plan, &dumps)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

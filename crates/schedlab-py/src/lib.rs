//! `schedlab._core`: the PyO3 bindings of schedlab. Conversion only — every decision is made
//! in the Rust crates (`schedlab-spec`, `schedlab-sim`), every convenience in the Python
//! package (`python/schedlab`). The typed stubs live in `python/schedlab/_core.pyi`; keep
//! them in step with this file (a test compares the two).
//!
//! Errors: a spec or generator-option error raises `SpecError` (a `ValueError` with `.path`
//! and `.message`, `str()` = "path: message"); a simulation failure raises `SimError` (a
//! `RuntimeError` with `.message` and `.bad_input`, true when the user's input is at fault);
//! an unparsable trace raises `TraceError` (a `ValueError` with `.line` and `.message`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use serde_json::{json, Value};

create_exception!(
    _core,
    SpecError,
    PyValueError,
    "A spec or generator-option error: `.path` (JSON path) and `.message`."
);
create_exception!(
    _core,
    TraceError,
    PyValueError,
    "A trace that cannot be parsed: `.line` (1-based; 0 = opening the file) and `.message`."
);
create_exception!(
    _core,
    SimError,
    PyRuntimeError,
    "A simulation failure: `.message`; `.bad_input` is true when the input is at fault."
);

fn spec_error(py: Python<'_>, e: schedlab_spec::SpecError) -> PyErr {
    let err = SpecError::new_err(e.to_string());
    let v = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it did,
    // the exception still carries "path: message" as its text.
    let _ = v.setattr("path", e.path);
    let _ = v.setattr("message", e.message);
    err
}

fn sim_error(py: Python<'_>, e: schedlab_sim::SimError) -> PyErr {
    let err = SimError::new_err(e.message.clone());
    let v = err.value(py);
    let _ = v.setattr("message", e.message);
    let _ = v.setattr("bad_input", e.bad_input);
    err
}

/// A host run's refusal, as the simulator's errors are raised (`bad_input` for what the
/// spec asks that the runner does not do; else what the kernel refused).
fn host_error(py: Python<'_>, message: String, bad_input: bool) -> PyErr {
    let err = SimError::new_err(message.clone());
    let v = err.value(py);
    let _ = v.setattr("message", message);
    let _ = v.setattr("bad_input", bad_input);
    err
}

fn json_text(v: &Value, pretty: bool) -> PyResult<String> {
    let r = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    };
    r.map_err(|e| PyRuntimeError::new_err(format!("cannot serialise JSON: {e}")))
}

/// A JSON value as the Python object `json.loads` would make of it (objects as dicts in
/// member order), built directly.
fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, None, f) => f.unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(json_to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (k, x) in members {
                dict.set_item(k, json_to_py(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

/// Parse, validate and simulate `spec_json` (`schedlab_sim::simulate_text`, which also
/// takes the spec's sha256 over exactly these bytes for `run.spec_sha256`). Returns the
/// result JSON text (docs/results.md) and the per-activation samples as a dict of
/// equal-length lists (`tid`, `release_ns`, `wake_ns`, `start_ns`, `end_ns`, `kind`; empty
/// when `samples` is false). The GIL is released while the spec is parsed and simulated,
/// and taken back briefly every 65,536 events to run Python's signal handlers: an
/// exception one raises (`KeyboardInterrupt` on Ctrl-C) stops the run and is raised here.
#[pyfunction]
#[pyo3(signature = (
    spec_json,
    scheduler = None,
    params = Vec::new(),
    seed = None,
    cpus = None,
    hz = None,
    duration_ns = None,
    trace_path = None,
    check = false,
    samples = true,
    samples_path = None,
    memory_budget = None,
))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    spec_json: &str,
    scheduler: Option<String>,
    params: Vec<(String, String)>,
    seed: Option<u64>,
    cpus: Option<u32>,
    hz: Option<u32>,
    duration_ns: Option<u64>,
    trace_path: Option<PathBuf>,
    check: bool,
    samples: bool,
    samples_path: Option<PathBuf>,
    memory_budget: Option<u64>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let cfg = schedlab_sim::SimConfig {
        scheduler,
        params,
        seed,
        cpus,
        hz,
        duration_ns,
        trace: trace_path,
        check,
        samples: match (samples_path, samples) {
            (Some(path), _) => schedlab_sim::SampleOutput::File(path),
            (None, true) => schedlab_sim::SampleOutput::Memory,
            (None, false) => schedlab_sim::SampleOutput::Summary,
        },
        memory_budget,
        cancel: None,
    };
    let (cancel, raised) = signal_handlers();
    let cfg = schedlab_sim::SimConfig {
        cancel: Some(cancel),
        ..cfg
    };
    let out = py
        .allow_threads(|| schedlab_sim::simulate_text(spec_json, &cfg))
        .map_err(|e| match e {
            schedlab_sim::RunError::Spec(e) => spec_error(py, e),
            schedlab_sim::RunError::Sim(e) => {
                let handler_raised = raised.lock().unwrap_or_else(PoisonError::into_inner).take();
                match handler_raised {
                    Some(err) if e.cancelled() => err,
                    _ => sim_error(py, e),
                }
            }
        })?;
    let text = json_text(&out.json(), false)?;
    Ok((text, sample_columns(py, &out.samples)?))
}

/// The samples' columns, each as one `bytes` of native-endian values: 4 or 8 bytes a
/// sample, where a list of Python ints would take some 36.
fn sample_columns<'py>(
    py: Python<'py>,
    s: &schedlab_core::metrics::Samples,
) -> PyResult<Bound<'py, PyDict>> {
    let cols = PyDict::new(py);
    cols.set_item("tid", column_bytes(py, &s.tid, u32::to_ne_bytes))?;
    cols.set_item(
        "release_ns",
        column_bytes(py, &s.release_ns, u64::to_ne_bytes),
    )?;
    cols.set_item("wake_ns", column_bytes(py, &s.wake_ns, u64::to_ne_bytes))?;
    cols.set_item("start_ns", column_bytes(py, &s.start_ns, i64::to_ne_bytes))?;
    cols.set_item("end_ns", column_bytes(py, &s.end_ns, i64::to_ne_bytes))?;
    cols.set_item("kind", PyBytes::new(py, &s.kind))?;
    Ok(cols)
}

/// How many times `stop_running` was called: a run started before the latest call stops.
static STOPS: AtomicU64 = AtomicU64::new(0);

/// Stop every run in progress in this process (its caller then gets `KeyboardInterrupt`),
/// at its next check (within 65,536 simulated events, or 20 ms on the host). Runs started
/// after the call are not affected. This is how the main thread, which alone runs Python's
/// signal handlers, stops the runs its worker threads are doing when it is interrupted.
#[pyfunction]
fn stop_running() {
    STOPS.fetch_add(1, Ordering::SeqCst);
}

/// A run's check for Python's signals: it takes the GIL and runs the pending signal
/// handlers (`PyErr_CheckSignals`; only the main thread runs them, elsewhere it does
/// nothing), and it stops a run that `stop_running` was called for. When one raises, the
/// run stops and the exception is kept in the slot returned beside, for the caller to
/// raise in its place.
fn signal_handlers() -> (schedlab_core::cancel::Cancel, Arc<Mutex<Option<PyErr>>>) {
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let slot = Arc::clone(&raised);
    let started = STOPS.load(Ordering::SeqCst);
    let cancel = schedlab_core::cancel::Cancel::new(move || {
        if STOPS.load(Ordering::SeqCst) != started {
            let stopped = pyo3::exceptions::PyKeyboardInterrupt::new_err(
                "stopped: the process stopped every run in progress",
            );
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(stopped);
            return true;
        }
        Python::with_gil(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                true
            }
        })
    });
    (cancel, raised)
}

/// A column of numbers as one `bytes` object, written in place.
fn column_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_bytes: fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let filled = PyBytes::new_with(py, values.len() * N, |buf| {
        for (chunk, &v) in buf.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to_bytes(v));
        }
        Ok(())
    });
    filled.expect("filling a buffer of the right size cannot fail")
}

/// The statistics of the result schema (`schedlab_sim::stats::stats_json`: count, mean,
/// min, max, population stddev, nearest-rank p50/p90/p99/p999 and `filtered6sigma`) over
/// `samples`, as a dict.
#[pyfunction]
fn stats(py: Python<'_>, mut samples: Vec<u64>) -> PyResult<Bound<'_, PyAny>> {
    let v = schedlab_sim::stats::stats_json(&mut samples);
    json_to_py(py, &v)
}

/// Check `spec_json` as `schedlab validate` does (`schedlab_sim::validate_text`): parse and
/// validate it (`SpecError` naming the JSON path), then check that a run would start under
/// each of `schedulers` — by default the spec's own, else every available policy —
/// with `duration_ns` (`SimError` with `bad_input`).
#[pyfunction]
#[pyo3(signature = (spec_json, schedulers = Vec::new(), duration_ns = None))]
fn validate(
    py: Python<'_>,
    spec_json: &str,
    schedulers: Vec<String>,
    duration_ns: Option<u64>,
) -> PyResult<()> {
    let cfg = schedlab_sim::SimConfig {
        duration_ns,
        ..Default::default()
    };
    py.allow_threads(|| schedlab_sim::validate_text(spec_json, &cfg, &schedulers))
        .map_err(|e| match e {
            schedlab_sim::RunError::Spec(e) => spec_error(py, e),
            schedlab_sim::RunError::Sim(e) => sim_error(py, e),
        })
}

/// The sha256 of exactly `spec_json`'s UTF-8 bytes (`schedlab_spec::spec_sha256`): the
/// spec's identity, the `run.spec_sha256` of every run of this text.
#[pyfunction]
fn spec_sha256(spec_json: &str) -> String {
    schedlab_spec::spec_sha256(spec_json)
}

/// Analyse `spec_json`'s periodic tasks and compare with its simulations under `fp` and
/// `edf` (`schedlab_analysis::analyze_text`): the `schedlab.analysis/1` object as a dict.
/// Raises `SpecError` (with the JSON path) for a spec that does not parse. The GIL is
/// released while it runs.
#[pyfunction]
fn analyze<'py>(py: Python<'py>, spec_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let v = py
        .allow_threads(|| schedlab_analysis::analyze_text(spec_json))
        .map_err(|e| spec_error(py, e))?;
    json_to_py(py, &v)
}

/// `spec_json` read by the spec reader as a plain value (`schedlab_spec::spec_view`):
/// dicts in member order; raises `SpecError` (with the JSON path) for text that is not
/// JSON, is nested too deep, or holds what a dict cannot (repeated or bare keys).
#[pyfunction]
fn spec_view<'py>(py: Python<'py>, spec_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let v = schedlab_spec::spec_view(spec_json).map_err(|e| spec_error(py, e))?;
    json_to_py(py, &v)
}

/// Run the generator `name` with textual `options` (`[(name, value), …]`); returns the spec
/// as pretty-printed JSON text.
#[pyfunction]
#[pyo3(signature = (name, options = Vec::new()))]
fn generate(py: Python<'_>, name: &str, options: Vec<(String, String)>) -> PyResult<String> {
    let v = schedlab_spec::gen::generate(name, &options).map_err(|e| spec_error(py, e))?;
    json_text(&v, true)
}

/// The closed-form CPU time (µs) of `schedlab gen buildworld` with textual `options`
/// (`schedlab_spec::gen::buildworld_totals`): `{"jobs", "nominal_us", "syscall_us",
/// "sys_us", "user_us"}`. Raises `SpecError` for a bad option, as `generate` does.
#[pyfunction]
#[pyo3(signature = (options = Vec::new()))]
fn buildworld_totals<'py>(
    py: Python<'py>,
    options: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyDict>> {
    let t = schedlab_spec::gen::buildworld_totals(&options).map_err(|e| spec_error(py, e))?;
    let d = PyDict::new(py);
    d.set_item("jobs", t.jobs)?;
    d.set_item("nominal_us", t.nominal_us)?;
    d.set_item("syscall_us", t.syscall_us)?;
    d.set_item("sys_us", t.sys_us)?;
    d.set_item("user_us", t.user_us)?;
    Ok(d)
}

/// The built-in generators as JSON text: `[{"name", "description", "options": [{"name",
/// "default", "help"}]}]`.
#[pyfunction]
fn generators() -> PyResult<String> {
    let list: Vec<Value> = schedlab_spec::gen::list()
        .into_iter()
        .map(|g| {
            let options: Vec<Value> = g
                .options
                .into_iter()
                .map(|o| json!({"name": o.name, "default": o.default, "help": o.help}))
                .collect();
            json!({"name": g.name, "description": g.description, "options": options})
        })
        .collect();
    json_text(&Value::Array(list), false)
}

/// The built-in machine profiles as JSON text: `[{"name", "about", "machine",
/// "provenance"}]`, each the profile's own file.
#[pyfunction]
fn profiles() -> PyResult<String> {
    let list: Result<Vec<Value>, _> = schedlab_spec::profile::BUILTIN
        .iter()
        .map(|b| serde_json::from_str::<Value>(b.text))
        .collect();
    let list = list.map_err(|e| PyValueError::new_err(format!("a built-in profile: {e}")))?;
    json_text(&Value::Array(list), false)
}

/// The CPU scheduling policies as JSON text: `[{"name", "family", "summary", "source",
/// "available", "reason", "params": [{"name", "default", "description"}]}]`.
#[pyfunction]
fn schedulers() -> PyResult<String> {
    let list: Vec<Value> = schedlab_sim::schedulers()
        .into_iter()
        .map(|s| {
            let params: Vec<Value> = s
                .info
                .params
                .into_iter()
                .map(
                    |p| json!({"name": p.name, "default": p.default, "description": p.description}),
                )
                .collect();
            json!({
                "name": s.info.name,
                "family": s.family,
                "summary": s.info.summary,
                "source": s.info.source,
                "available": s.available,
                "reason": s.reason,
                "params": params,
            })
        })
        .collect();
    json_text(&Value::Array(list), false)
}

/// Parse an ftrace text file (a simulated trace or a real capture) into columns of equal
/// length: `line, ts_ns, cpu, comm, pid, tgid, flags, event` for every record, and the
/// decoded sched fields, `None` where an event has no such field: `prev_pid, prev_prio,
/// prev_state, next_pid, next_prio` (sched_switch); `wake_kind` ("waking", "wakeup",
/// "new"), `task_pid, prio, target_cpu` (wake-ups; `task_pid`/`prio` also for
/// sched_migrate_task and sched_process_exit); `orig_cpu, dest_cpu` (migrate);
/// `child_pid` (fork, `task_pid` = parent); `mark_kind` ("C", "B", "E", "text"),
/// `mark_tgid, mark_name, mark_value` (tracing_mark_write); `body` (other events and
/// free-text marks). Raises `TraceError` (`.line`, `.message`) at the first bad line.
#[pyfunction]
fn parse_trace<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    use schedlab_sim::trace::parse::{Event, Mark, WakeKind};
    let records = py
        .allow_threads(|| schedlab_sim::trace::parse::parse_file(&path))
        .map_err(|e| {
            let err = TraceError::new_err(e.to_string());
            let v = err.value(py);
            let _ = v.setattr("line", e.line);
            let _ = v.setattr("message", e.msg);
            err
        })?;
    let n = records.len();
    let mut line = Vec::with_capacity(n);
    let mut ts = Vec::with_capacity(n);
    let mut cpu = Vec::with_capacity(n);
    let mut comm = Vec::with_capacity(n);
    let mut pid = Vec::with_capacity(n);
    let mut tgid = Vec::with_capacity(n);
    let mut flags = Vec::with_capacity(n);
    let mut event = Vec::with_capacity(n);
    let mut prev_pid: Vec<Option<u32>> = vec![None; n];
    let mut prev_prio: Vec<Option<i32>> = vec![None; n];
    let mut prev_state: Vec<Option<String>> = vec![None; n];
    let mut next_pid: Vec<Option<u32>> = vec![None; n];
    let mut next_prio: Vec<Option<i32>> = vec![None; n];
    let mut wake_kind: Vec<Option<&str>> = vec![None; n];
    let mut task_pid: Vec<Option<u32>> = vec![None; n];
    let mut prio: Vec<Option<i32>> = vec![None; n];
    let mut target_cpu: Vec<Option<u32>> = vec![None; n];
    let mut orig_cpu: Vec<Option<u32>> = vec![None; n];
    let mut dest_cpu: Vec<Option<u32>> = vec![None; n];
    let mut child_pid: Vec<Option<u32>> = vec![None; n];
    let mut mark_kind: Vec<Option<&str>> = vec![None; n];
    let mut mark_tgid: Vec<Option<u32>> = vec![None; n];
    let mut mark_name: Vec<Option<String>> = vec![None; n];
    let mut mark_value: Vec<Option<i64>> = vec![None; n];
    let mut body: Vec<Option<String>> = vec![None; n];
    for (i, r) in records.into_iter().enumerate() {
        line.push(r.line);
        ts.push(r.ts);
        cpu.push(r.cpu);
        comm.push(r.comm);
        pid.push(r.pid);
        tgid.push(r.tgid);
        flags.push(r.flags);
        event.push(r.event);
        match r.data {
            Event::Switch {
                prev_pid: pp,
                prev_prio: ppr,
                prev_state: ps,
                next_pid: np,
                next_prio: npr,
            } => {
                prev_pid[i] = Some(pp);
                prev_prio[i] = Some(ppr);
                prev_state[i] = Some(ps);
                next_pid[i] = Some(np);
                next_prio[i] = Some(npr);
            }
            Event::Wakeup {
                kind,
                pid: p,
                prio: pr,
                target_cpu: c,
            } => {
                wake_kind[i] = Some(match kind {
                    WakeKind::Waking => "waking",
                    WakeKind::Wakeup => "wakeup",
                    WakeKind::New => "new",
                });
                task_pid[i] = Some(p);
                prio[i] = Some(pr);
                target_cpu[i] = Some(c);
            }
            Event::Migrate {
                pid: p,
                prio: pr,
                orig_cpu: o,
                dest_cpu: d,
            } => {
                task_pid[i] = Some(p);
                prio[i] = Some(pr);
                orig_cpu[i] = Some(o);
                dest_cpu[i] = Some(d);
            }
            Event::Fork {
                pid: p,
                child_pid: c,
            } => {
                task_pid[i] = Some(p);
                child_pid[i] = Some(c);
            }
            Event::Exit {
                pid: p, prio: pr, ..
            } => {
                task_pid[i] = Some(p);
                prio[i] = Some(pr);
            }
            Event::Mark(m) => match m {
                Mark::Counter {
                    tgid: t,
                    name,
                    value,
                } => {
                    mark_kind[i] = Some("C");
                    mark_tgid[i] = Some(t);
                    mark_name[i] = Some(name);
                    mark_value[i] = Some(value);
                }
                Mark::Begin { tgid: t, name } => {
                    mark_kind[i] = Some("B");
                    mark_tgid[i] = Some(t);
                    mark_name[i] = Some(name);
                }
                Mark::End { tgid: t } => {
                    mark_kind[i] = Some("E");
                    mark_tgid[i] = t;
                }
                Mark::Text(text) => {
                    mark_kind[i] = Some("text");
                    body[i] = Some(text);
                }
            },
            Event::Other { body: b } => body[i] = Some(b),
        }
    }
    let d = PyDict::new(py);
    d.set_item("line", line)?;
    d.set_item("ts_ns", ts)?;
    d.set_item("cpu", cpu)?;
    d.set_item("comm", comm)?;
    d.set_item("pid", pid)?;
    d.set_item("tgid", tgid)?;
    d.set_item("flags", flags)?;
    d.set_item("event", event)?;
    d.set_item("prev_pid", prev_pid)?;
    d.set_item("prev_prio", prev_prio)?;
    d.set_item("prev_state", prev_state)?;
    d.set_item("next_pid", next_pid)?;
    d.set_item("next_prio", next_prio)?;
    d.set_item("wake_kind", wake_kind)?;
    d.set_item("task_pid", task_pid)?;
    d.set_item("prio", prio)?;
    d.set_item("target_cpu", target_cpu)?;
    d.set_item("orig_cpu", orig_cpu)?;
    d.set_item("dest_cpu", dest_cpu)?;
    d.set_item("child_pid", child_pid)?;
    d.set_item("mark_kind", mark_kind)?;
    d.set_item("mark_tgid", mark_tgid)?;
    d.set_item("mark_name", mark_name)?;
    d.set_item("mark_value", mark_value)?;
    d.set_item("body", body)?;
    Ok(d)
}

/// The timeslice (ns) `scheduler` gives a lone SCHED_OTHER task of each nice level
/// −20..=19 at tick rate `hz`, as `(nice, ns)` pairs in nice order; `None` where the policy
/// has no per-task slice (CFS, EEVDF). Raises SimError (bad_input) for an unknown scheduler
/// or an unsupported HZ.
#[pyfunction]
fn timeslice(py: Python<'_>, scheduler: &str, hz: u32) -> PyResult<Vec<(i32, Option<u64>)>> {
    schedlab_sim::timeslice_table(scheduler, hz).map_err(|e| sim_error(py, e))
}

/// The scheduler-cost study (`schedlab_sim::sched_cost`): for each number of runnable
/// tasks in `sizes`, the policy's counted work units and hook wall ns per scheduling
/// decision, as dicts `{"scheduler", "params", "class", "cpus", "nr_runnable", "decisions",
/// "work_units", "work_per_decision", "ns_per_decision", "harness_ns_per_decision"}`
/// (`params` as `[name, value]` pairs). The GIL is released while it measures. Raises
/// SimError (bad_input) for an unknown scheduler, parameter or class, or bad sizes.
#[pyfunction]
#[pyo3(signature = (
    scheduler,
    sizes,
    params = Vec::new(),
    decisions = 20_000,
    cpus = 1,
    hz = 1000,
    task_class = "other",
    subtract_harness = true,
))]
#[allow(clippy::too_many_arguments)]
fn sched_cost<'py>(
    py: Python<'py>,
    scheduler: &str,
    sizes: Vec<usize>,
    params: Vec<(String, String)>,
    decisions: u64,
    cpus: usize,
    hz: u32,
    task_class: &str,
    subtract_harness: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let class = schedlab_sim::CostClass::parse(task_class).map_err(|e| sim_error(py, e))?;
    let cfg = schedlab_sim::CostConfig {
        params,
        decisions,
        cpus,
        hz,
        class,
        subtract_harness,
    };
    let points = py
        .allow_threads(|| schedlab_sim::sched_cost_sweep(scheduler, &cfg, &sizes))
        .map_err(|e| sim_error(py, e))?;
    points
        .into_iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("scheduler", c.scheduler)?;
            d.set_item("params", c.params)?;
            d.set_item("class", c.class.name())?;
            d.set_item("cpus", c.cpus)?;
            d.set_item("nr_runnable", c.nr_runnable)?;
            d.set_item("decisions", c.decisions)?;
            d.set_item("work_units", c.work_units)?;
            d.set_item("work_per_decision", c.work_per_decision)?;
            d.set_item("ns_per_decision", c.ns_per_decision)?;
            d.set_item("harness_ns_per_decision", c.harness_ns_per_decision)?;
            Ok(d)
        })
        .collect()
}

/// nicksched's timeslice (ns) against dynamic priority: `[(best, [(dprio, ns), …]), …]`
/// for the best queued priorities 100, 110, 120, 130 (seed 000's dprio/minprio formula,
/// computed by the policy's code). Raises SimError (bad_input) for an unsupported HZ.
#[pyfunction]
fn nicksched_timeslice(py: Python<'_>, hz: u32) -> PyResult<Vec<schedlab_sim::DprioSlices>> {
    schedlab_sim::nicksched_dprio_timeslices(hz).map_err(|e| sim_error(py, e))
}

/// Measure this host's channel costs (schedlab_host::probe) over `kind` ("pipe" or
/// "socket": an AF_UNIX stream socketpair): `{"kind", "call_ns", "hop_ns",
/// "round_trip_ns", "cpu", "bytes", "messages", "reps"}`. Raises ValueError for bad
/// arguments, OSError when the kernel refuses (pipe, socketpair, fork, affinity).
#[pyfunction]
#[pyo3(signature = (kind="pipe", messages=20000, bytes=100, reps=5))]
fn host_channel_costs<'py>(
    py: Python<'py>,
    kind: &str,
    messages: u32,
    bytes: usize,
    reps: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let k = match kind {
        "pipe" => schedlab_host::ChannelKind::Pipe,
        "socket" => schedlab_host::ChannelKind::UnixStream,
        other => {
            return Err(PyValueError::new_err(format!(
                "channel_costs: kind must be \"pipe\" or \"socket\", not {other:?}"
            )))
        }
    };
    let c = py
        .allow_threads(|| schedlab_host::channel_costs(k, messages, bytes, reps))
        .map_err(probe_error)?;
    let d = PyDict::new(py);
    d.set_item("kind", kind)?;
    d.set_item("call_ns", c.call_ns)?;
    d.set_item("hop_ns", c.hop_ns)?;
    d.set_item("round_trip_ns", c.round_trip_ns)?;
    d.set_item("cpu", c.cpu)?;
    d.set_item("bytes", c.bytes)?;
    d.set_item("messages", c.messages)?;
    d.set_item("reps", c.reps)?;
    Ok(d)
}

/// Run `spec_json` on this machine's kernel (schedlab_host::runner): the result JSON text
/// and the samples' columns, as `simulate` returns them. Raises SpecError for an invalid
/// spec, SimError (bad_input) for what the host runner does not do, SimError for what the
/// kernel refuses.
#[pyfunction]
#[pyo3(signature = (spec_json, duration_ns=None, trace_path=None))]
fn host_run<'py>(
    py: Python<'py>,
    spec_json: &str,
    duration_ns: Option<u64>,
    trace_path: Option<PathBuf>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    if let Err(e) = schedlab_spec::parse_spec(spec_json) {
        return Err(spec_error(py, e));
    }
    let (cancel, raised) = signal_handlers();
    let opts = schedlab_host::runner::RunOptions {
        duration_ns,
        cancel: Some(cancel),
        trace: trace_path,
        ..Default::default()
    };
    let out = py
        .allow_threads(|| schedlab_host::runner::run(spec_json, &opts))
        .map_err(|e| match e {
            schedlab_host::runner::HostError::BadInput(m) => host_error(py, m, true),
            schedlab_host::runner::HostError::Refused(m) => host_error(py, m, false),
            schedlab_host::runner::HostError::Cancelled => {
                let handler_raised = raised.lock().unwrap_or_else(PoisonError::into_inner).take();
                handler_raised.unwrap_or_else(|| {
                    host_error(py, "the run was stopped by its caller".into(), false)
                })
            }
        })?;
    let text = json_text(&out.result.to_json(), false)?;
    Ok((text, sample_columns(py, &out.samples)?))
}

/// The host runner's block I/O against fio on one loop device
/// (schedlab_host::fio_check): `runs` pairs of a `schedlab gen fio` job and fio with the
/// same rw, bs, iodepth and direct=1. `{"skipped": reason}` when this machine cannot
/// (not root, no loop devices, no fio), else every run's IOPS and clat p50/p99, the
/// medians and the median host/fio ratio. Raises SimError when a run fails.
#[pyfunction]
#[pyo3(signature = (rw, bs, iodepth, size, scheduler, runs=3))]
fn host_fio_check<'py>(
    py: Python<'py>,
    rw: String,
    bs: u64,
    iodepth: u32,
    size: u64,
    scheduler: String,
    runs: usize,
) -> PyResult<Bound<'py, PyAny>> {
    use schedlab_host::fio_check::{compare, CheckError, FioCase};
    let case = FioCase {
        rw,
        bs,
        iodepth,
        size,
        scheduler,
    };
    match py.allow_threads(|| compare(&case, runs)) {
        Ok(c) => json_to_py(py, &c.to_json()),
        Err(CheckError::Skipped(why)) => json_to_py(py, &serde_json::json!({"skipped": why})),
        Err(CheckError::Failed(m)) => Err(host_error(py, m, false)),
    }
}

/// What this kernel and these privileges allow (schedlab_host::doctor), changing
/// nothing: `{"kernel": {...facts}, "checks": [{"area", "name", "ok", "detail"}]}`.
#[pyfunction]
fn host_doctor(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let report = py.allow_threads(schedlab_host::doctor::examine);
    json_to_py(py, &report.to_json())
}

/// Undo what the restore journal at `path` (default: `SCHEDLAB_JOURNAL` or
/// /run/schedlab/journal.jsonl) records, newest first:
/// `{"journal", "undone": [entry...], "failed": [{"entry", "error"}]}`. Raises ValueError
/// when the file is not a schedlab journal, OSError when it cannot be read or another
/// run holds it.
#[pyfunction]
#[pyo3(signature = (path=None))]
fn host_restore(py: Python<'_>, path: Option<std::path::PathBuf>) -> PyResult<Bound<'_, PyAny>> {
    let path = path.unwrap_or_else(schedlab_host::journal::default_path);
    let restored = py
        .allow_threads(|| schedlab_host::journal::restore_at(&path))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => PyValueError::new_err(e.to_string()),
            _ => PyErr::from(e),
        })?;
    json_to_py(py, &restored.to_json(&path))
}

/// An `io::Error` of a host probe as Python sees it: ValueError for bad arguments,
/// OSError when the kernel refuses.
fn probe_error(e: std::io::Error) -> PyErr {
    match e.kind() {
        std::io::ErrorKind::InvalidInput => PyValueError::new_err(e.to_string()),
        _ => PyErr::from(e),
    }
}

/// Measure this host's kernel paths (schedlab_host::kernel_costs::syscall_costs):
/// `{"sleep_setup_ns", "sleep_blocks_per_call", "futex_wake_ns", "fork_exit_wait_ns", "cpu", "calls", "forks",
/// "reps"}`. Raises ValueError for bad arguments, OSError when the kernel refuses.
#[pyfunction]
#[pyo3(signature = (calls=20000, forks=200, reps=5))]
fn host_syscall_costs(
    py: Python<'_>,
    calls: u32,
    forks: u32,
    reps: u32,
) -> PyResult<Bound<'_, PyDict>> {
    let c = py
        .allow_threads(|| schedlab_host::syscall_costs(calls, forks, reps))
        .map_err(probe_error)?;
    let d = PyDict::new(py);
    d.set_item("sleep_setup_ns", c.sleep_setup_ns)?;
    d.set_item("sleep_blocks_per_call", c.sleep_blocks_per_call)?;
    d.set_item("futex_wake_ns", c.futex_wake_ns)?;
    d.set_item("fork_exit_wait_ns", c.fork_exit_wait_ns)?;
    d.set_item("cpu", c.cpu)?;
    d.set_item("calls", c.calls)?;
    d.set_item("forks", c.forks)?;
    d.set_item("reps", c.reps)?;
    Ok(d)
}

/// Measure this host's timer wake-up latency (schedlab_host::kernel_costs::timer_latency):
/// `{"min_ns", "p50_ns", "p99_ns", "max_ns", "samples", "interval_ns", "policy" ("fifo" or
/// "other"), "priority" (0 for other), "fifo_refused"}`. Raises ValueError for bad
/// arguments, OSError when the kernel refuses.
#[pyfunction]
#[pyo3(signature = (interval_ns=1_000_000, samples=500, priority=80))]
fn host_timer_latency(
    py: Python<'_>,
    interval_ns: u64,
    samples: u32,
    priority: u8,
) -> PyResult<Bound<'_, PyDict>> {
    let t = py
        .allow_threads(|| schedlab_host::timer_latency(interval_ns, samples, priority))
        .map_err(probe_error)?;
    let (policy, prio) = match t.policy {
        schedlab_host::TimerPolicy::Fifo(p) => ("fifo", p),
        schedlab_host::TimerPolicy::Other => ("other", 0),
    };
    let d = PyDict::new(py);
    d.set_item("min_ns", t.min_ns)?;
    d.set_item("p50_ns", t.p50_ns)?;
    d.set_item("p99_ns", t.p99_ns)?;
    d.set_item("max_ns", t.max_ns)?;
    d.set_item("samples", t.samples)?;
    d.set_item("interval_ns", t.interval_ns)?;
    d.set_item("policy", policy)?;
    d.set_item("priority", prio)?;
    d.set_item("fifo_refused", t.fifo_refused)?;
    Ok(d)
}

/// The version of the Rust crates (the workspace version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("SimError", py.get_type::<SimError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(stop_running, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(spec_sha256, m)?)?;
    m.add_function(wrap_pyfunction!(spec_view, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add("MAX_CPUS", schedlab_sim::types::MAX_CPUS)?;
    m.add(
        "DEFAULT_MEMORY_BUDGET",
        schedlab_sim::budget::DEFAULT_MEMORY_BUDGET,
    )?;
    m.add("BUDGET_TASK_BYTES", schedlab_sim::budget::TASK_BYTES)?;
    m.add("HZ_CHOICES", schedlab_spec::model::HZ_CHOICES.to_vec())?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(buildworld_totals, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(parse_trace, m)?)?;
    m.add_function(wrap_pyfunction!(timeslice, m)?)?;
    m.add_function(wrap_pyfunction!(sched_cost, m)?)?;
    m.add_function(wrap_pyfunction!(host_channel_costs, m)?)?;
    m.add_function(wrap_pyfunction!(host_syscall_costs, m)?)?;
    m.add_function(wrap_pyfunction!(host_timer_latency, m)?)?;
    m.add_function(wrap_pyfunction!(host_doctor, m)?)?;
    m.add_function(wrap_pyfunction!(host_run, m)?)?;
    m.add_function(wrap_pyfunction!(host_restore, m)?)?;
    m.add_function(wrap_pyfunction!(host_fio_check, m)?)?;
    m.add_function(wrap_pyfunction!(nicksched_timeslice, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}

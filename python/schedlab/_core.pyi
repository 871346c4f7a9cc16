"""Typed stubs of the Rust extension module ``schedlab._core`` (crates/schedlab-py).

Keep in step with crates/schedlab-py/src/lib.rs; tests/test_stubs.py compares the two.
"""

import os
from typing import Any

MAX_CPUS: int
#: Bytes a run may hold when no memory budget is given.
DEFAULT_MEMORY_BUDGET: int
#: Bytes each task instance counts toward a run's memory budget (its result included).
BUDGET_TASK_BYTES: int
#: The tick rates (CONFIG_HZ) the simulator models, ascending.
HZ_CHOICES: list[int]
"""The largest machine the simulator models (CPUs)."""

class SpecError(ValueError):
    """A spec or generator-option error. ``str(e)`` is ``"path: message"``."""

    path: str
    """JSON path of the offending value, e.g. ``$.tasks.thread0.phases.p1.run``."""
    message: str
    """What was expected there and what was found."""

class SimError(RuntimeError):
    """A simulation failure."""

    message: str
    bad_input: bool
    """True when the user's input is at fault (unknown scheduler, bad tunable, …)."""

class TraceError(ValueError):
    """An ftrace text file that cannot be parsed."""

    line: int
    """1-based line number of the bad line (0: the file could not be opened)."""
    message: str

def stop_running() -> None:
    """Stop every run in progress in this process at its next check (its caller gets
    KeyboardInterrupt); runs started later are not affected."""

def simulate(
    spec_json: str,
    scheduler: str | None = None,
    params: list[tuple[str, str]] = [],  # noqa: B006
    seed: int | None = None,
    cpus: int | None = None,
    hz: int | None = None,
    duration_ns: int | None = None,
    trace_path: str | None = None,
    check: bool = False,
    samples: bool = True,
    samples_path: str | None = None,
    memory_budget: int | None = None,
) -> tuple[str, dict[str, bytes]]:
    """Validate and simulate a spec; the GIL is released while it runs. ``run.spec_sha256``
    of the result is the sha256 of exactly ``spec_json``'s UTF-8 bytes. A run that would
    hold more than ``memory_budget`` bytes (default 4 GiB) stops early: its partial result
    says why in ``run.stopped``. Every 65,536 events the run takes the GIL back briefly to
    run Python's signal handlers (on the main thread): an exception one raises
    (``KeyboardInterrupt`` on Ctrl-C) stops the run and is raised here.

    Returns the result JSON text (docs/results.md) and the per-activation samples as
    columns ``tid, release_ns, wake_ns, start_ns, end_ns, kind``, each one ``bytes`` of
    native-endian u32, u64, u64, i64, i64 and u8 values: kept in memory when
    ``samples`` is true; with ``samples_path`` they are streamed to that Arrow IPC file
    instead (the columns come back empty); with neither only histograms are kept. Raises
    SpecError for an invalid spec, SimError if the run fails.
    """

def stats(samples: list[int]) -> dict[str, Any]:
    """The result schema's statistics over ``samples`` (non-negative integers):
    ``count, mean, min, max, stddev`` (population), nearest-rank ``p50, p90, p99, p999``
    and ``filtered6sigma`` (the same over the samples within 6σ of the mean); every value
    but ``count`` is None when there are no samples."""

def validate(spec_json: str, schedulers: list[str] = [],  # noqa: B006
             duration_ns: int | None = None) -> None:
    """Check a spec as ``schedlab validate`` does: raises SpecError naming the JSON path of
    the first error, then SimError (``bad_input``) if a run would be refused under any of
    ``schedulers`` (default: the spec's own scheduler, else every available policy) with
    ``duration_ns``."""

def spec_sha256(spec_json: str) -> str:
    """The sha256 (hex) of exactly ``spec_json``'s UTF-8 bytes: the spec's identity, the
    ``run.spec_sha256`` of every run of this text."""

def analyze(spec_json: str) -> dict[str, Any]:
    """Analyse the spec's periodic tasks (fixed-priority response-time analysis with
    blocking, Liu & Layland and hyperbolic bounds, the EDF processor-demand test) and compare
    with its simulations under ``fp`` and ``edf``: the ``schedlab.analysis/1`` object
    (``model``, ``fp``, ``edf``, ``flags``). Raises SpecError naming the JSON path of a spec
    that does not parse."""

def spec_view(spec_json: str) -> Any:
    """``spec_json`` as the spec reader reads it (comments and trailing commas allowed,
    nesting limited), as plain Python values with dicts in member order. Raises SpecError
    (with the JSON path) for text that is not JSON, is nested too deep, or holds what a
    dict cannot: repeated keys (rt-app's ``run``, ``run``), bare keys, integers outside the
    64-bit range, numbers that are not finite."""

def generate(name: str, options: list[tuple[str, str]] = []) -> str:  # noqa: B006
    """Run a built-in generator; returns the spec as pretty-printed JSON text."""

def buildworld_totals(options: list[tuple[str, str]] = []) -> dict[str, int]:  # noqa: B006
    """The closed-form CPU time (µs) of ``generate("buildworld", options)``: ``{"jobs",
    "nominal_us", "syscall_us", "sys_us", "user_us"}`` (user + sys = nominal). Raises
    SpecError for a bad option, as ``generate`` does."""

def generators() -> str:
    """JSON text: ``[{"name", "description", "options": [{"name", "default", "help"}]}]``."""

def profiles() -> str:
    """JSON text: the built-in machine profiles, ``[{"name", "about", "machine",
    "provenance"}]``."""

def schedulers() -> str:
    """JSON text: ``[{"name", "family", "summary", "source", "available", "reason",
    "params": [{"name", "default", "description"}]}]``; ``family`` is "linux", "bsd", "rtos"
    or "teaching"."""

def parse_trace(path: str | os.PathLike[str]) -> dict[str, list[Any]]:
    """Parse an ftrace text file (simulated or captured) into equal-length columns:
    ``line, ts_ns, cpu, comm, pid, tgid, flags, event``, and the decoded sched fields
    (None where an event has none): ``prev_pid, prev_prio, prev_state, next_pid,
    next_prio`` (sched_switch); ``wake_kind`` ("waking"/"wakeup"/"new"), ``task_pid, prio,
    target_cpu`` (wake-ups; ``task_pid``/``prio`` also for migrate and exit);
    ``orig_cpu, dest_cpu`` (migrate); ``child_pid`` (fork; ``task_pid`` = parent);
    ``mark_kind`` ("C"/"B"/"E"/"text"), ``mark_tgid, mark_name, mark_value``
    (tracing_mark_write); ``body`` (other events, free-text marks). The GIL is released
    while the file is read. Raises TraceError at the first bad line."""

def timeslice(scheduler: str, hz: int) -> list[tuple[int, int | None]]:
    """The timeslice in ns the policy gives a lone SCHED_OTHER task of each nice level
    -20..19 at tick rate ``hz`` (computed by the policy's own code), as ``(nice, ns)``
    pairs in nice order; None where the policy has no per-task slice (CFS, EEVDF: it
    depends on the load). Raises SimError (bad_input) for an unknown scheduler or HZ."""

def sched_cost(
    scheduler: str,
    sizes: list[int],
    params: list[tuple[str, str]] = ...,
    decisions: int = 20000,
    cpus: int = 1,
    hz: int = 1000,
    task_class: str = "other",
    subtract_harness: bool = True,
) -> list[dict[str, Any]]:
    """The scheduler-cost study: for each number of runnable tasks in ``sizes``, drive the
    policy (built with ``params``) through ``decisions`` scheduling decisions (tick,
    block-and-wake or preemption, put_prev, pick_next; see ``instruments::sched_cost``) on
    ``cpus`` CPUs with tasks of ``task_class`` ("other" or "fifo"). One dict per size:
    ``scheduler, params ([name, value] pairs), class, cpus, nr_runnable, decisions,
    work_units, work_per_decision`` (counted, exact), ``ns_per_decision`` (wall ns in the
    policy's hooks, harness subtracted), ``harness_ns_per_decision``. The GIL is released
    while it measures. Raises SimError (bad_input) for an unknown scheduler, parameter or
    class, or a size outside 1..=1 000 000."""

def nicksched_timeslice(hz: int) -> list[tuple[int, list[tuple[int, int]]]]:
    """nicksched's timeslice in ns against dynamic priority, as ``(best, [(dprio, ns),
    …])`` for the best queued priorities 100, 110, 120 and 130 (computed by the policy's
    own code). Raises SimError (bad_input) for an unsupported HZ."""

def host_channel_costs(
    kind: str = "pipe", messages: int = 20000, bytes: int = 100, reps: int = 5
) -> dict[str, Any]:
    """Measure this host: two processes pinned to one CPU bounce ``messages`` messages of
    ``bytes`` bytes over two channels of ``kind`` ("pipe", or "socket": AF_UNIX stream
    socketpairs), ``reps`` times. Returns medians in ns: ``call_ns`` (one uncontended
    call), ``hop_ns`` (block + wake-up + switch per message), ``round_trip_ns``; and
    ``kind, cpu, bytes, messages, reps``. The caller's CPU affinity is restored. Raises
    ValueError for bad arguments, OSError if the kernel refuses."""

def host_syscall_costs(calls: int = 20000, forks: int = 200, reps: int = 5) -> dict[str, Any]:
    """Measure this host's kernel paths, pinned to the caller's CPU (its affinity is
    restored), ``reps`` times. Returns medians in ns per operation: ``sleep_setup_ns`` (one
    ``clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`` to an expiry already past),
    ``sleep_blocks_per_call`` (voluntary switches per such call: ≈ 1 if the caller blocked
    until the expired timer's interrupt woke it),
    ``futex_wake_ns`` (one ``FUTEX_WAKE_PRIVATE`` with no waiter), ``fork_exit_wait_ns``
    (fork, the child's ``_exit``, the parent's ``waitpid``); and ``cpu, calls, forks,
    reps``. Raises ValueError for bad arguments, OSError if the kernel refuses."""

def host_timer_latency(
    interval_ns: int = 1_000_000, samples: int = 500, priority: int = 80
) -> dict[str, Any]:
    """Measure this host's timer wake-up latency as cyclictest does: a thread of its own
    sleeps to an absolute CLOCK_MONOTONIC expiry every ``interval_ns`` (10 µs..1 s),
    ``samples`` times, at SCHED_FIFO ``priority`` (1..99) if allowed, else SCHED_OTHER.
    Returns wake-up time − expiry in ns: ``min_ns, p50_ns, p99_ns, max_ns`` (nearest
    rank); and ``samples, interval_ns, policy`` ("fifo" or "other"), ``priority`` (0 for
    other), ``fifo_refused`` (why not fifo, else ""). Raises ValueError for bad arguments,
    OSError if the kernel refuses."""

def host_run(spec_json: str, duration_ns: int | None = None,
             trace_path: str | None = None) -> tuple[str, dict[str, bytes]]:
    """Run a spec on this machine's kernel (one thread per task instance): the result JSON
    text (``run.engine == "host"``, the kernel facts in ``run.host``) and the samples'
    columns, as :func:`simulate` returns them. Raises SpecError for an invalid spec,
    SimError with ``bad_input`` for what the host runner does not do (``schedlab:unlink``,
    a workload without end and no duration), SimError for what the kernel refuses. The
    spec's cgroups and block devices (loop devices over files, with the spec's I/O
    scheduler) are made through the restore journal and put back before it returns.
    ``trace_path``: capture the run's scheduler events through tracefs (a tracing instance
    of its own, journalled) into that file, in the simulator's ftrace text."""

def host_doctor() -> dict[str, Any]:
    """What this kernel and these privileges allow the host runner, changing nothing:
    ``{"kernel": {release, version, machine, preempt, preempt_dynamic, hz, clocksource,
    cpus, steal_ticks, sched_rt_period_us, sched_rt_runtime_us, sched_rr_timeslice_ms,
    timer_slack_ns}, "checks": [{"area", "name", "ok", "detail"}]}``. A fact that cannot
    be read is None."""

def host_fio_check(rw: str, bs: int, iodepth: int, size: int, scheduler: str,
                   runs: int = 3) -> dict[str, Any]:
    """The host runner's block I/O against fio on one loop device: ``runs`` pairs of a
    ``schedlab gen fio`` job (``rw`` read/write/randread/randwrite, ``bs``, ``iodepth``,
    direct=1, ``size`` bytes, the device's ``scheduler``) and fio with the same options,
    back to back, caches dropped before each. ``{"skipped": reason}`` when this machine
    cannot (not root, no loop devices, no fio); else ``{"case", "device", "fio_version",
    "host": [run], "fio": [run], "host_median", "fio_median", "median_ratio"}``, each run
    ``{"iops", "clat_p50_ns", "clat_p99_ns"}``. Raises SimError when a run fails."""

def host_restore(path: str | None = None) -> dict[str, Any]:
    """Undo what the restore journal at ``path`` (default: ``SCHEDLAB_JOURNAL`` or
    /run/schedlab/journal.jsonl) records, newest first: ``{"journal", "undone": [entry],
    "failed": [{"entry", "error"}]}``; failed entries stay in the journal. Raises
    ValueError when the file is not a schedlab journal, OSError when it cannot be read or
    another run holds it."""

def version() -> str:
    """Version of the Rust crates."""

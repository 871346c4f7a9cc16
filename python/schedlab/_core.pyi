"""Typed stubs of the Rust extension module ``schedlab._core`` (crates/schedlab-py).

Keep in step with crates/schedlab-py/src/lib.rs; tests/test_stubs.py compares the two.
"""

import os
from typing import Any

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
    spec_sha256: str = "",
) -> tuple[str, dict[str, list[int]]]:
    """Validate and simulate a spec; the GIL is released while it runs.

    Returns the result JSON text (docs/results.md) and the per-activation samples as
    columns ``tid, release_ns, wake_ns, start_ns, end_ns, kind`` (empty if ``samples`` is
    false). Raises SpecError for an invalid spec, SimError if the run fails.
    """

def validate(spec_json: str) -> None:
    """Validate a spec; raises SpecError naming the JSON path of the first error."""

def generate(name: str, options: list[tuple[str, str]] = []) -> str:  # noqa: B006
    """Run a built-in generator; returns the spec as pretty-printed JSON text."""

def generators() -> str:
    """JSON text: ``[{"name", "description", "options": [{"name", "default", "help"}]}]``."""

def schedulers() -> str:
    """JSON text: ``[{"name", "summary", "source", "available", "reason",
    "params": [{"name", "default", "description"}]}]``."""

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

def version() -> str:
    """Version of the Rust crates."""

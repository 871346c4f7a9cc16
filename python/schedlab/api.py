"""The Python API: thin wrappers over the Rust core (``schedlab._core``).

Every statistic is computed in Rust; this module only turns Python values into the core's
arguments (spec text, textual tunables, nanoseconds) and wraps what comes back in a
:class:`~schedlab.result.Result`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import _core
from schedlab._core import SpecError
from schedlab.result import Result
from schedlab.runner import Job, Outcome, execute, results, run_jobs

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class SpecSource:
    """A spec's JSON text and where it came from. The text is handed to the core exactly as
    it is (the core hashes these very bytes into ``run.spec_sha256``): in rt-app the order
    of a phase's events is the order of its JSON members, so a spec is never re-serialised
    once it is text."""

    text: str
    origin: str
    """The file name, ``"<stdin>"``, ``"<text>"`` or ``"<dict>"``."""

    @property
    def sha256(self) -> str:
        """The spec's identity, taken by the core: the sha256 of exactly these bytes, the
        ``run.spec_sha256`` of every run of this text."""
        return _core.spec_sha256(self.text)


SpecLike = str | os.PathLike[str] | Mapping[str, Any] | SpecSource
"""A spec: a path to a JSON file, the JSON text itself, the parsed object, or a
:class:`SpecSource` from :func:`load_spec`."""

ParamsLike = Mapping[str, Any] | Iterable[tuple[str, Any]] | None
"""Scheduler tunables: ``{"name": value}`` or ``[("name", value)]``; values sent as text."""

DurationLike = str | int | float | None
"""A duration: text with a unit (``"10s"``, ``"500ms"``, ``"20us"``, ``"1000ns"``) or a
plain number of seconds (as rt-app's ``global.duration``)."""

__all__ = [
    "DurationLike",
    "ParamsLike",
    "SpecLike",
    "SpecSource",
    "compare",
    "edit_spec",
    "generate",
    "generate_text",
    "generators",
    "profiles",
    "job",
    "load_spec",
    "option_text",
    "parse_duration",
    "parse_trace",
    "schedulers",
    "simulate",
    "spec_error",
    "spec_view",
    "sweep",
    "validate",
]


def spec_error(path: str, message: str) -> SpecError:
    """A :class:`SpecError` raised from Python, shaped like the core's."""
    err = SpecError(f"{path}: {message}")
    err.path = path
    err.message = message
    return err


def load_spec(spec: SpecLike) -> SpecSource:
    """Read a spec given as a path, JSON text or a mapping.

    A ``str`` whose first non-blank character is ``{`` is JSON text; any other ``str`` or
    path-like is a file name (``"-"`` reads standard input). A spec whose machine profile
    is ``"host"`` gets this host's measured profile inline in its place
    (:func:`schedlab.hostprofile.resolve`), so the text run carries the numbers. Raises
    :class:`OSError` for an unreadable file and :class:`SpecError` for a file that is not
    UTF-8.
    """
    if isinstance(spec, SpecSource):
        return spec
    if isinstance(spec, Mapping):
        text = spec_text(spec)
        origin = "<dict>"
    elif isinstance(spec, str) and spec.lstrip().startswith("{"):
        text, origin = _encodable(spec, "the spec text"), "<text>"
    elif isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        if path == "-":
            text, origin = _utf8(_read_stdin(), "standard input"), "<stdin>"
        else:
            text, origin = _utf8(Path(path).read_bytes(), path), path
    else:
        raise TypeError(f"spec must be a path, JSON text or a mapping, not {type(spec).__name__}")
    from schedlab import hostprofile

    return SpecSource(text=hostprofile.resolve(text), origin=origin)


def _read_stdin() -> bytes:
    """Standard input's bytes, undecoded: a file and a pipe go through the same UTF-8
    check (``sys.stdin`` would decode with the locale and its error handler)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text-only stream (tests, embedding)
        return sys.stdin.read().encode("utf-8", "surrogateescape")
    data: bytes = stream.read()
    return data


def _encodable(text: str, name: str) -> str:
    """``text`` if it can be UTF-8 (no lone surrogates), else a :class:`SpecError`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        msg = f"{name} is not valid Unicode ({e.reason} at character {e.start})"
        raise spec_error("$", msg) from None
    return text


def _utf8(data: bytes, name: str) -> str:
    """``data`` decoded as UTF-8, or a :class:`SpecError` naming ``name`` and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        msg = f"{name} is not UTF-8 text ({e.reason} at byte {e.start})"
        raise spec_error("$", msg) from None


def spec_text(spec: Mapping[str, Any]) -> str:
    """A spec built as a Python mapping, as JSON text: members in insertion order (a
    phase's events run in that order), two-space indentation, a final newline. Raises
    :class:`SpecError` for a mapping nested too deep to write (the core would refuse it
    anyway: a spec nests a few levels)."""
    try:
        text = json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    except RecursionError:
        raise spec_error("$", "nesting too deep to write as JSON; a workload spec needs "
                              "about 6 levels") from None
    return _encodable(text, "the spec")


def spec_view(text: str) -> dict[str, Any]:
    """The spec ``text`` as plain Python values, read by the core's spec reader (comments
    and trailing commas as rt-app accepts them, nesting limited), dicts in member order.
    Raises :class:`SpecError` naming the JSON path for text that is not a JSON object, or
    that holds what a dict cannot: a repeated key (rt-app's ``run``, ``run`` in one phase)
    or a bare key."""
    obj = _core.spec_view(_encodable(text, "the spec text"))
    if not isinstance(obj, dict):
        raise spec_error("$", f"expected a JSON object, found {type(obj).__name__}")
    return obj


def edit_spec(text: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """A new spec text: ``text`` read by :func:`spec_view`, changed in place by ``edit``,
    written back with :func:`spec_text`. Member order is kept; a spec a dict cannot hold
    (a repeated key such as rt-app's ``run``, ``run``) is refused with a
    :class:`SpecError`."""
    obj = spec_view(text)
    edit(obj)
    return spec_text(obj)


_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zµμ]*)\s*$")


def parse_duration(value: DurationLike) -> int | None:
    """A duration in integer nanoseconds: ``"10s"``, ``"500ms"``, ``"20us"``, ``"1000ns"``,
    ``"1.5min"``; a plain number (or a number as text) is seconds. ``None`` stays ``None``.
    Raises ValueError for anything else, or for zero."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"invalid duration {value!r}")
    if isinstance(value, (int, float)):
        if value != value or value <= 0 or value == float("inf"):
            raise ValueError(f"duration must be positive, got {value!r}")
        ns = round(value * 1_000_000_000)
    else:
        m = _DURATION.match(value)
        if not m or m.group(2) not in ("", *_UNITS_NS):
            raise ValueError(
                f"invalid duration {value!r} (expected a number with a unit: ns, us, ms, s, "
                "min, h; a plain number is seconds)"
            )
        num, unit = m.group(1), m.group(2) or "s"
        scale = _UNITS_NS[unit]
        if "." in num:
            from decimal import Decimal

            ns = int(Decimal(num) * scale)
        else:
            ns = int(num) * scale
    if ns <= 0:
        raise ValueError(f"duration must be positive, got {value!r}")
    if ns >= 2**64:
        raise ValueError(f"duration {value!r} is too long")
    return ns


def option_text(v: Any) -> str:
    """A tunable or generator option as the core reads it: ``True``/``False`` as
    ``true``/``false``, anything else as ``str``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _params(params: ParamsLike) -> list[tuple[str, str]]:
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), option_text(v)) for k, v in items]


U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1


def check_int(name: str, value: int | None, low: int, high: int) -> int | None:
    """``value`` if it is None or an integer in ``low..=high`` (the range of the core's
    argument), else a ValueError naming ``name``: the core is never handed a number it
    cannot hold."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name}: {value} is out of range ({low}..{high})")
    return value


def job(
    spec: SpecLike,
    scheduler: str | None = None,
    params: ParamsLike = None,
    seed: int | None = None,
    cpus: int | None = None,
    hz: int | None = None,
    duration: DurationLike = None,
    trace: str | os.PathLike[str] | None = None,
    check: bool = False,
    samples: bool = True,
    label: str = "",
    memory_budget: int | None = None,
) -> Job:
    """One run described for :func:`schedlab.runner.run_jobs` (arguments as
    :func:`simulate`'s)."""
    return Job(
        spec=load_spec(spec), scheduler=scheduler, params=tuple(_params(params)),
        seed=check_int("seed", seed, 0, U64_MAX), cpus=check_int("cpus", cpus, 1, U32_MAX),
        hz=check_int("hz", hz, 1, U32_MAX), duration_ns=parse_duration(duration),
        trace=None if trace is None else Path(trace), check=check, samples=samples,
        label=label, memory_budget=check_int("memory_budget", memory_budget, 1, U64_MAX),
    )


def simulate(
    spec: SpecLike,
    scheduler: str | None = None,
    params: ParamsLike = None,
    seed: int | None = None,
    cpus: int | None = None,
    hz: int | None = None,
    duration: DurationLike = None,
    trace: str | os.PathLike[str] | None = None,
    check: bool = False,
    samples: bool = True,
    memory_budget: int | None = None,
) -> Result:
    """Simulate ``spec`` under ``scheduler`` (default: the spec's own choice).

    ``params`` are the policy's tunables (``schedlab schedulers`` lists them); ``seed``,
    ``cpus``, ``hz`` and ``duration`` override the spec; ``trace`` writes an ftrace-format
    trace to that file; ``check`` verifies the engine's invariants after every hook. A run
    that would hold more than ``memory_budget`` bytes (default 4 GiB) stops early with a
    partial result whose ``run["stopped"]`` says why.
    Raises :class:`SpecError` for an invalid spec, :class:`SimError` if the run fails
    (``.bad_input`` for an unknown scheduler or tunable).
    """
    return execute(job(spec, scheduler, params, seed, cpus, hz, duration, trace, check,
                       samples, memory_budget=memory_budget))


def _scheduler_params(params: ParamsLike, name: str) -> ParamsLike:
    """``params`` for scheduler ``name``: per-scheduler when every value is a mapping."""
    if (isinstance(params, Mapping) and params
            and all(isinstance(v, Mapping) for v in params.values())):
        return params.get(name)
    return params


def compare(
    spec: SpecLike,
    schedulers: Sequence[str],
    params: ParamsLike = None,
    seed: int | None = None,
    cpus: int | None = None,
    hz: int | None = None,
    duration: DurationLike = None,
    check: bool = False,
    samples: bool = True,
    jobs: int | None = None,
    on_done: Callable[[Outcome], None] | None = None,
) -> list[Result]:
    """Simulate ``spec`` under each of ``schedulers`` (same seed and overrides); results in
    the order given. Runs use up to ``jobs`` threads (default: one per CPU) — the core
    releases the GIL, and each run is deterministic whatever the parallelism.

    ``params`` go to every scheduler; give per-scheduler tunables as
    ``{"sched": {"name": value}}`` keyed by scheduler name instead. ``on_done(outcome)``
    is called as each run finishes (for progress displays). If a run fails, the first
    failure in the order given is raised once every run has finished.
    """
    if isinstance(schedulers, str):
        schedulers = [schedulers]
    if not schedulers:
        raise ValueError("compare needs at least one scheduler")
    src = load_spec(spec)
    todo = [job(src, name, _scheduler_params(params, name), seed, cpus, hz, duration,
                None, check, samples) for name in schedulers]
    return results(run_jobs(todo, workers=jobs, on_done=on_done))


def sweep(description: Any, out: str | os.PathLike[str], *, scheduler: Any = None,
          workers: int | None = None, threads: bool = False,
          memory_limit: int | str | None = None, retry_failed: bool = False,
          progress: bool = True) -> Any:
    """Run a sweep (docs/sweeps.md) into the Parquet dataset ``out`` and return its
    :class:`~schedlab.sweep.SweepRun` (``.rows()`` are its rows). ``description`` is a
    YAML or JSON file, a mapping in the file's shape or a :class:`~schedlab.sweep.Sweep`.
    Runs the dataset already holds are not run again. Runs go to a local Dask cluster
    sized to this machine, to ``scheduler`` (an address, a ``distributed.Client`` or a
    cluster object such as a dask-jobqueue one), or to ``workers`` threads with
    ``threads``. Raises :class:`~schedlab.sweep.SweepError` naming the place in the
    description that is wrong. A script that uses a local cluster must call this under
    ``if __name__ == "__main__":`` (its workers are new processes that import it)."""
    from schedlab.sweep import execute

    return execute.run(description, out, scheduler=scheduler, workers=workers,
                       threads=threads, memory_limit=memory_limit, retry_failed=retry_failed,
                       progress=progress)


def validate(spec: SpecLike, schedulers: Sequence[str] = (),
             duration: int | None = None) -> None:
    """Raise :class:`SpecError` (naming the JSON path) if ``spec`` is not a valid spec, and
    :class:`SimError` if a run of it would be refused under any of ``schedulers`` (default:
    the spec's own scheduler, else every available policy) with ``duration`` (ns)."""
    _core.validate(load_spec(spec).text, list(schedulers), duration)


def generate(name: str, **options: Any) -> dict[str, Any]:
    """Run the built-in generator ``name`` (``schedlab gen --list``); options are sent as
    text, ``True``/``False`` as ``true``/``false``; an option spelled with ``-`` may be
    given with ``_``."""
    return spec_view(generate_text(name, [(k, option_text(v)) for k, v in options.items()]))


def generate_text(name: str, options: Iterable[tuple[str, str]]) -> str:
    """Run the generator ``name`` with textual options; returns pretty JSON text. Option
    names match the generator's spelling with ``-`` and ``_`` interchangeable."""
    known = {o["name"] for g in generators() if g["name"] == name for o in g["options"]}

    def spelled(k: str) -> str:
        for alt in (k, k.replace("_", "-"), k.replace("-", "_")):
            if alt in known:
                return alt
        return k

    return _core.generate(name, [(spelled(k), v) for k, v in options])


def profiles() -> list[dict[str, Any]]:
    """The built-in machine profiles: ``[{"name", "about", "machine", "provenance"}]``."""
    return json.loads(_core.profiles())  # type: ignore[no-any-return]


def generators() -> list[dict[str, Any]]:
    """The built-in generators: ``[{"name", "description", "options": [{"name", "default",
    "help"}]}]``."""
    return json.loads(_core.generators())


def schedulers() -> list[dict[str, Any]]:
    """The CPU scheduling policies: ``[{"name", "family", "summary", "source", "available",
    "reason", "params": [{"name", "default", "description"}]}]``; unavailable ones (listed
    by a seed, with no surviving source) have ``"available": false`` and a ``reason``."""
    return json.loads(_core.schedulers())


_TRACE_DTYPES: dict[str, Any] = {
    "line": "UInt64", "ts_ns": "UInt64", "cpu": "UInt32", "comm": "String", "pid": "UInt32",
    "tgid": "UInt32", "flags": "String", "event": "String", "prev_pid": "UInt32",
    "prev_prio": "Int32", "prev_state": "String", "next_pid": "UInt32", "next_prio": "Int32",
    "wake_kind": "String", "task_pid": "UInt32", "prio": "Int32", "target_cpu": "UInt32",
    "orig_cpu": "UInt32", "dest_cpu": "UInt32", "child_pid": "UInt32", "mark_kind": "String",
    "mark_tgid": "UInt32", "mark_name": "String", "mark_value": "Int64", "body": "String",
}


def parse_trace(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read an ftrace text trace — a simulated one (``simulate(..., trace=...)``) or a real
    capture — into a DataFrame with one row per event (columns: see
    ``schedlab._core.parse_trace``). Raises :class:`FileNotFoundError` for a missing file
    and ``schedlab.TraceError`` (``.line``, ``.message``) for a malformed one."""
    import polars as pl

    p = Path(path)
    p.stat()  # a missing file is an OSError with its name, like every other input
    cols = _core.parse_trace(os.fspath(p))
    return pl.DataFrame(
        [pl.Series(k, cols[k], dtype=getattr(pl, t)) for k, t in _TRACE_DTYPES.items()]
    )

"""The Python API: thin wrappers over the Rust core (``schedlab._core``).

Every statistic is computed in Rust; this module only turns Python values into the core's
arguments (spec text, textual tunables, nanoseconds) and wraps what comes back in a
:class:`~schedlab.result.Result`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import _core
from schedlab._core import SpecError
from schedlab.result import Result

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class SpecSource:
    """A spec's JSON text, where it came from and its hash."""

    text: str
    origin: str
    """The file name, ``"<stdin>"``, ``"<text>"`` or ``"<dict>"``."""
    sha256: str
    """sha256 of the canonical JSON text: keys sorted, no whitespace, UTF-8 (see
    :func:`canonical_sha256`)."""


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
    "generate",
    "generate_text",
    "generators",
    "load_spec",
    "parse_duration",
    "parse_trace",
    "schedulers",
    "simulate",
    "spec_error",
    "validate",
]


def spec_error(path: str, message: str) -> SpecError:
    """A :class:`SpecError` raised from Python, shaped like the core's."""
    err = SpecError(f"{path}: {message}")
    err.path = path
    err.message = message
    return err


def canonical_sha256(text: str) -> str:
    """sha256 of a spec's canonical JSON text (``json.dumps(sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)``, UTF-8). Text that is not JSON is hashed as
    it is (the parser rejects it anyway)."""
    try:
        obj = json.loads(text)
    except ValueError:
        canon = text
    else:
        canon = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8", "surrogatepass")).hexdigest()


def load_spec(spec: SpecLike) -> SpecSource:
    """Read a spec given as a path, JSON text or a mapping.

    A ``str`` whose first non-blank character is ``{`` is JSON text; any other ``str`` or
    path-like is a file name (``"-"`` reads standard input). Raises :class:`OSError` for an
    unreadable file and :class:`SpecError` for a file that is not UTF-8.
    """
    if isinstance(spec, SpecSource):
        return spec
    if isinstance(spec, Mapping):
        text = json.dumps(spec, ensure_ascii=False)
        origin = "<dict>"
    elif isinstance(spec, str) and spec.lstrip().startswith("{"):
        text, origin = spec, "<text>"
    elif isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        if path == "-":
            text, origin = sys.stdin.read(), "<stdin>"
        else:
            data = Path(path).read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                msg = f"{path} is not UTF-8 text ({e.reason} at byte {e.start})"
                raise spec_error("$", msg) from None
            origin = path
    else:
        raise TypeError(f"spec must be a path, JSON text or a mapping, not {type(spec).__name__}")
    return SpecSource(text=text, origin=origin, sha256=canonical_sha256(text))


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


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _params(params: ParamsLike) -> list[tuple[str, str]]:
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), _text(v)) for k, v in items]


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
) -> Result:
    """Simulate ``spec`` under ``scheduler`` (default: the spec's own choice).

    ``params`` are the policy's tunables (``schedlab schedulers`` lists them); ``seed``,
    ``cpus``, ``hz`` and ``duration`` override the spec; ``trace`` writes an ftrace-format
    trace to that file; ``check`` verifies the engine's invariants after every hook.
    Raises :class:`SpecError` for an invalid spec, :class:`SimError` if the run fails
    (``.bad_input`` for an unknown scheduler or tunable).
    """
    src = load_spec(spec)
    return _simulate(src, scheduler, _params(params), seed, cpus, hz, parse_duration(duration),
                     trace, check, samples)


def _simulate(
    src: SpecSource,
    scheduler: str | None,
    params: list[tuple[str, str]],
    seed: int | None,
    cpus: int | None,
    hz: int | None,
    duration_ns: int | None,
    trace: str | os.PathLike[str] | None,
    check: bool,
    samples: bool,
) -> Result:
    text, cols = _core.simulate(
        src.text,
        scheduler=scheduler,
        params=params,
        seed=seed,
        cpus=cpus,
        hz=hz,
        duration_ns=duration_ns,
        trace_path=None if trace is None else os.fspath(trace),
        check=check,
        samples=samples,
        spec_sha256=src.sha256,
    )
    return Result(json.loads(text), cols if samples else None)


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
    on_done: Callable[[str, Result], None] | None = None,
) -> list[Result]:
    """Simulate ``spec`` under each of ``schedulers`` (same seed and overrides); results in
    the order given. Runs use up to ``jobs`` threads (default: one per CPU) — the core
    releases the GIL, and each run is deterministic whatever the parallelism.

    ``params`` go to every scheduler; give per-scheduler tunables as
    ``{"sched": {"name": value}}`` keyed by scheduler name instead. ``on_done(name,
    result)`` is called as each run finishes (for progress displays).
    """
    if isinstance(schedulers, str):
        schedulers = [schedulers]
    return _compare(load_spec(spec), list(schedulers), params, seed, cpus, hz,
                    parse_duration(duration), check, samples, jobs, on_done)


def _compare(
    src: SpecSource,
    schedulers: list[str],
    params: ParamsLike,
    seed: int | None,
    cpus: int | None,
    hz: int | None,
    duration_ns: int | None,
    check: bool,
    samples: bool,
    jobs: int | None,
    on_done: Callable[[str, Result], None] | None,
) -> list[Result]:
    if not schedulers:
        raise ValueError("compare needs at least one scheduler")
    per_sched = (
        isinstance(params, Mapping)
        and bool(params)
        and all(isinstance(v, Mapping) for v in params.values())
    )

    def one(name: str) -> Result:
        p = _params(params.get(name) if per_sched else params)  # type: ignore[union-attr]
        return _simulate(src, name, p, seed, cpus, hz, duration_ns, None, check, samples)

    def done(name: str, r: Result) -> Result:
        if on_done is not None:
            on_done(name, r)
        return r

    workers = max(1, min(len(schedulers), jobs or os.cpu_count() or 1))
    if workers == 1:
        return [done(s, one(s)) for s in schedulers]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(one, s): s for s in schedulers}
        for f in as_completed(futures):
            done(futures[f], f.result())
        return [f.result() for f in futures]


def validate(spec: SpecLike) -> None:
    """Raise :class:`SpecError` (naming the JSON path) if ``spec`` is not a valid spec."""
    _core.validate(load_spec(spec).text)


def generate(name: str, **options: Any) -> dict[str, Any]:
    """Run the built-in generator ``name`` (``schedlab gen --list``); options are sent as
    text, ``True``/``False`` as ``true``/``false``; an option spelled with ``-`` may be
    given with ``_``."""
    return json.loads(generate_text(name, [(k, _text(v)) for k, v in options.items()]))


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


def generators() -> list[dict[str, Any]]:
    """The built-in generators: ``[{"name", "description", "options": [{"name", "default",
    "help"}]}]``."""
    return json.loads(_core.generators())


def schedulers() -> list[dict[str, Any]]:
    """The CPU scheduling policies: ``[{"name", "summary", "source", "available", "reason",
    "params": [{"name", "default", "description"}]}]``."""
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

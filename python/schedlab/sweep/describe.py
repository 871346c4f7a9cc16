"""A sweep's description: a base spec (a file, named files, or a generator with options),
axes whose product (or the union of several products) gives the runs, filters, the metrics
each run keeps, and what else a run keeps (samples, trace).

Read from YAML or JSON (:func:`load`) or built in Python (:class:`Sweep`, or a mapping in
the file's shape given to :func:`from_mapping`). Every error names its place in the
description (``axes.scheduler[2]: unknown scheduler 'foo'``) as a :class:`SweepError`.

Axes (docs/sweeps.md has the full grammar):

- ``scheduler``: policy names; ``seed``: integers (or ``{from: A, count: N}``);
- ``cpus``, ``hz``, ``duration``: the run's overrides (as ``schedlab run``'s options);
- ``params.NAME``: a tunable of the policy;
- ``options.NAME``: an option of the base generator;
- ``machine.PATH``: a machine setting of the spec (``schedlab.machine.PATH``:
  ``machine.kernel.preempt``, ``machine.profile``, …);
- ``devices.NAME.PATH``: a block device's setting (``schedlab.devices.NAME.PATH``), and
  ``io_scheduler``: the I/O scheduler of every device of the spec;
- ``spec.PATH``: any member of the spec (dot-separated), e.g. ``spec.global.duration``;
- ``spec``: a name of ``base.specs``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_METRICS", "Filter", "Sweep", "SweepError", "check", "from_mapping", "load",
]

#: What a run keeps when the description names no metrics: the result's headline and
#: summary (every scalar under ``summary``, STATS flattened), and the run's size.
DEFAULT_METRICS: tuple[str, ...] = ("summary", "run.events", "run.sim_ns", "run.decisions",
                                    "run.work_units", "run.stopped")

_METRIC_ROOTS = ("summary", "run", "tasks", "cpus")

TOP_KEYS = ("name", "base", "axes", "filters", "metrics", "samples", "trace", "memory_budget")
BASE_KEYS = ("spec", "specs", "generator", "options", "scheduler", "params", "seed", "cpus",
             "hz", "duration")
RUN_AXES = ("scheduler", "seed", "cpus", "hz", "duration", "io_scheduler", "spec")
PREFIX_AXES = ("params.", "options.", "machine.", "devices.", "spec.")

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1


class SweepError(ValueError):
    """A bad sweep description: ``path`` is the place in the description, ``message`` what
    is wrong there."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Filter:
    """``exclude``: drop every run whose axes match all of ``match``; ``only``: keep only
    those. ``match`` maps an axis to the values that match (``None`` matches a run that
    does not set the axis)."""

    kind: str
    match: tuple[tuple[str, tuple[Any, ...]], ...]

    def matches(self, point: Mapping[str, Any]) -> bool:
        return all(point.get(axis) in values for axis, values in self.match)

    def keeps(self, point: Mapping[str, Any]) -> bool:
        return self.matches(point) != (self.kind == "exclude")


@dataclass
class Sweep:
    """A sweep. ``grids`` is a list of axis mappings (axis name → values); the runs are the
    union of each grid's product, less what ``filters`` drop. ``base`` is as in the file:
    ``spec`` (a path, JSON text or a mapping), ``specs`` (name → spec, chosen by the
    ``spec`` axis) or ``generator`` with ``options``; and defaults for ``scheduler``,
    ``params``, ``seed``, ``cpus``, ``hz``, ``duration``. ``where`` is the directory
    relative spec paths are read from."""

    name: str
    base: dict[str, Any]
    grids: list[dict[str, list[Any]]]
    filters: list[Filter] = field(default_factory=list)
    metrics: tuple[str, ...] = DEFAULT_METRICS
    samples: bool = False
    trace: bool = False
    memory_budget: int | None = None
    where: Path = field(default_factory=Path)

    def axes(self) -> list[str]:
        """Every axis, in the order first given."""
        seen: dict[str, None] = {}
        for g in self.grids:
            seen.update(dict.fromkeys(g))
        return list(seen)

    def to_mapping(self) -> dict[str, Any]:
        """The description in the file's shape (what the dataset keeps as ``sweep.json``)."""
        base = {k: (v if not isinstance(v, Path) else os.fspath(v)) for k, v in self.base.items()}
        out: dict[str, Any] = {
            "name": self.name, "base": base,
            "axes": self.grids[0] if len(self.grids) == 1 else self.grids,
            "filters": [{f.kind: {a: list(v) for a, v in f.match}} for f in self.filters],
            "metrics": list(self.metrics), "samples": self.samples, "trace": self.trace,
        }
        if self.memory_budget is not None:
            out["memory_budget"] = self.memory_budget
        return out


def check(sweep: Sweep) -> Sweep:
    """``sweep`` (built in Python) put through the checks a file's description gets."""
    if not sweep.grids:
        raise SweepError("axes", "missing: a sweep needs at least one axis")
    doc = sweep.to_mapping()
    doc["base"] = sweep.base  # spec texts and mappings as given
    checked = from_mapping(doc, where=sweep.where, default_name=sweep.name)
    checked.filters = list(sweep.filters)
    return checked


# --- reading ---------------------------------------------------------------------------


def load(path: str | os.PathLike[str]) -> Sweep:
    """Read a sweep description from a YAML (``.yaml``/``.yml``) or JSON file. Raises
    :class:`SweepError` (its path ``FILE`` for a file that cannot be read or parsed) and
    :class:`OSError` for a missing file."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix.lower() == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise SweepError(str(p), f"line {e.lineno}: {e.msg}") from None
    else:
        import yaml

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = getattr(e, "problem", None) or str(e)
            raise SweepError(str(p), f"{where}{problem}") from None
    if not isinstance(doc, Mapping):
        raise SweepError(str(p), "a sweep description is a mapping (name, base, axes, …)")
    return from_mapping(doc, where=p.parent, default_name=p.stem)


def from_mapping(doc: Mapping[str, Any], *, where: str | os.PathLike[str] = ".",
                 default_name: str = "sweep") -> Sweep:
    """A :class:`Sweep` from a mapping in the file's shape (its structure checked here; the
    names of schedulers, tunables and options when it is expanded)."""
    for k in doc:
        if k not in TOP_KEYS:
            raise SweepError(str(k), f"unknown key (expected one of {', '.join(TOP_KEYS)})")
    name = doc.get("name", default_name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise SweepError("name", f"{name!r} is not a name (letters, digits, '.', '_', '-')")
    base = _base(doc.get("base", {}))
    if "axes" not in doc:
        raise SweepError("axes", "missing: a sweep needs at least one axis")
    raw = doc["axes"]
    if isinstance(raw, Mapping):
        grids = [_grid(raw, "axes")]
    elif isinstance(raw, list) and raw:
        grids = [_grid(g, f"axes[{i}]") for i, g in enumerate(raw)]
    else:
        raise SweepError("axes", "expected a mapping of axis → values, or a non-empty list "
                                 "of them (their union)")
    axes = {a for g in grids for a in g}
    filters = _filters(doc.get("filters", []), axes)
    metrics = _metrics(doc.get("metrics", list(DEFAULT_METRICS)))
    for k in ("samples", "trace"):
        if not isinstance(doc.get(k, False), bool):
            raise SweepError(k, f"expected true or false, got {doc[k]!r}")
    budget = doc.get("memory_budget")
    if budget is not None:
        budget = _size(budget, "memory_budget")
    if "spec" in axes and "specs" not in base:
        raise SweepError("axes.spec", "the spec axis chooses among base.specs, which is not "
                                      "given")
    if any(a.startswith("options.") for a in axes) and "generator" not in base:
        raise SweepError("axes", "options.* axes need base.generator")
    return Sweep(name=name, base=base, grids=grids, filters=filters, metrics=metrics,
                 samples=bool(doc.get("samples", False)), trace=bool(doc.get("trace", False)),
                 memory_budget=budget, where=Path(where))


def _base(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise SweepError("base", "expected a mapping (spec, specs or generator, …)")
    for k in raw:
        if k not in BASE_KEYS:
            raise SweepError(f"base.{k}", f"unknown key (expected one of {', '.join(BASE_KEYS)})")
    given = [k for k in ("spec", "specs", "generator") if k in raw]
    if len(given) != 1:
        raise SweepError("base", "give exactly one of spec, specs, generator"
                         + (f" (got {', '.join(given)})" if given else ""))
    base = dict(raw)
    if "generator" in base and not isinstance(base["generator"], str):
        raise SweepError("base.generator", "expected a generator's name")
    if "options" in base:
        if "generator" not in base:
            raise SweepError("base.options", "options are a generator's: give base.generator")
        if not isinstance(base["options"], Mapping):
            raise SweepError("base.options", "expected a mapping of option → value")
    if "specs" in base and (not isinstance(base["specs"], Mapping) or not base["specs"]):
        raise SweepError("base.specs", "expected a non-empty mapping of name → spec")
    if "params" in base and not isinstance(base["params"], Mapping):
        raise SweepError("base.params", "expected a mapping of tunable → value")
    for k in ("seed", "cpus", "hz", "duration", "scheduler"):
        if k in base:
            _check_value(k, base[k], f"base.{k}")
    return base


def _grid(raw: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(raw, Mapping) or not raw:
        raise SweepError(where, "expected a non-empty mapping of axis → list of values")
    grid: dict[str, list[Any]] = {}
    for axis, values in raw.items():
        path = f"{where}.{axis}"
        if not isinstance(axis, str) or not (
                axis in RUN_AXES or any(axis.startswith(p) and len(axis) > len(p)
                                        for p in PREFIX_AXES)):
            raise SweepError(path, "unknown axis (expected scheduler, seed, cpus, hz, "
                                   "duration, io_scheduler, spec, or params.NAME, options.NAME, "
                                   "machine.PATH, devices.NAME.PATH, spec.PATH)")
        if axis == "seed" and isinstance(values, Mapping):
            values = _seed_range(values, path)
        if not isinstance(values, list) or not values:
            raise SweepError(path, "expected a non-empty list of values")
        for i, v in enumerate(values):
            _check_value(axis, v, f"{path}[{i}]")
        dupes = [v for i, v in enumerate(values) if v in values[:i]]
        if dupes:
            raise SweepError(path, f"{dupes[0]!r} is given twice")
        grid[axis] = list(values)
    return grid


def _seed_range(raw: Mapping[str, Any], path: str) -> list[int]:
    if set(raw) != {"from", "count"}:
        raise SweepError(path, "a seed range is {from: FIRST, count: N}")
    first, count = raw["from"], raw["count"]
    for k, v in (("from", first), ("count", count)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise SweepError(f"{path}.{k}", f"expected a non-negative integer, got {v!r}")
    if count == 0 or first + count - 1 > U64_MAX:
        raise SweepError(path, "the range is empty or passes 2^64-1")
    return list(range(first, first + count))


def _check_value(axis: str, v: Any, path: str) -> None:
    """The checks that need nothing but the value (names are checked on expansion)."""
    if axis in ("seed", "cpus", "hz"):
        low, high = (0, U64_MAX) if axis == "seed" else (1, U32_MAX)
        if v is None and axis == "seed":
            return
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            raise SweepError(path, f"expected an integer in {low}..{high}, got {v!r}")
    elif axis == "duration":
        from schedlab.api import parse_duration

        try:
            parse_duration(v)
        except (ValueError, TypeError) as e:
            raise SweepError(path, str(e)) from None
    elif axis in ("scheduler", "io_scheduler", "spec"):
        if not isinstance(v, str) or not v:
            raise SweepError(path, f"expected a name, got {v!r}")
    elif axis.startswith(("params.", "options.")):
        if not isinstance(v, (str, int, float, bool)):
            raise SweepError(path, f"expected a number, text or true/false, got {v!r}")
    elif not isinstance(v, (str, int, float, bool, Mapping, list)) and v is not None:
        raise SweepError(path, f"expected a JSON value, got {v!r}")


def _filters(raw: Any, axes: set[str]) -> list[Filter]:
    if not isinstance(raw, list):
        raise SweepError("filters", "expected a list of {exclude: …} or {only: …}")
    out = []
    for i, f in enumerate(raw):
        path = f"filters[{i}]"
        if not isinstance(f, Mapping) or len(f) != 1 or next(iter(f)) not in ("exclude", "only"):
            raise SweepError(path, "expected {exclude: {axis: values}} or {only: {axis: values}}")
        kind, match = next(iter(f.items()))
        if not isinstance(match, Mapping) or not match:
            raise SweepError(f"{path}.{kind}", "expected a non-empty mapping of axis → values")
        items = []
        for axis, values in match.items():
            if axis not in axes:
                raise SweepError(f"{path}.{kind}.{axis}", "not an axis of this sweep")
            vals = tuple(values) if isinstance(values, list) else (values,)
            items.append((axis, vals))
        out.append(Filter(kind, tuple(items)))
    return out


def _metrics(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise SweepError("metrics", "expected a non-empty list of result paths")
    for i, m in enumerate(raw):
        if not isinstance(m, str) or m.split(".")[0] not in _METRIC_ROOTS:
            raise SweepError(f"metrics[{i}]", f"{m!r} is not a result path (it starts with "
                                              f"{', '.join(_METRIC_ROOTS)})")
        if m.startswith(("tasks", "cpus")) and m.count(".") != 1:
            raise SweepError(f"metrics[{i}]", f"{m!r}: a per-task or per-CPU metric is "
                                              "tasks.FIELD or cpus.FIELD")
    return tuple(raw)


def _size(v: Any, path: str) -> int:
    if isinstance(v, bool):
        raise SweepError(path, f"expected a size, got {v!r}")
    if isinstance(v, int) and v > 0:
        return v
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", str(v))
    if not m:
        raise SweepError(path, f"expected a size in bytes (e.g. 4G), got {v!r}")
    n = int(m.group(1)) << (10 * " KMGT".index(m.group(2) or " "))
    if n <= 0:
        raise SweepError(path, "must be positive")
    return n


def as_list(v: Any) -> Sequence[Any]:
    return v if isinstance(v, list) else [v]

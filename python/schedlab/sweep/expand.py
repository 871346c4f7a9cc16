"""A sweep's runs: its grids expanded, filtered, each point's spec made (generated, read,
edited) and checked, and each run's resume key.

The key of a run is the sha256 of its identity — the spec's sha256 (taken by the core, of
the exact bytes run), the scheduler, the tunables sorted by name, the seed and the
overrides (cpus, hz, duration, memory budget, and whether samples are kept: with them
the percentiles are exact, without them histogram-resolved) — so a run is the same run
whichever sweep, grid or order produced it, and a dataset never holds it twice.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import _core, api, runner
from schedlab._core import SimError, SpecError
from schedlab.sweep.describe import Sweep, SweepError

__all__ = ["Point", "expand", "run_key"]

EDIT_PREFIXES = {"machine.": "schedlab.machine.", "devices.": "schedlab.devices.",
                 "spec.": ""}


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its axis values (``None`` where its grid does not set an axis),
    the job, and its resume key."""

    axes: dict[str, Any]
    job: runner.Job
    key: str

    @property
    def spec_sha256(self) -> str:
        return self.job.spec.sha256


def run_key(spec_sha256: str, scheduler: str | None, params: Sequence[tuple[str, str]],
            seed: int | None, overrides: Mapping[str, int]) -> str:
    """The resume key: sha256 of the run's identity as canonical JSON."""
    ident = {"spec_sha256": spec_sha256, "scheduler": scheduler,
             "params": sorted([k, v] for k, v in params), "seed": seed,
             "overrides": dict(sorted(overrides.items()))}
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _points(sweep: Sweep) -> list[dict[str, Any]]:
    axes = sweep.axes()
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for grid in sweep.grids:
        names = list(grid)
        for combo in itertools.product(*(grid[a] for a in names)):
            point = dict.fromkeys(axes)
            point.update(zip(names, combo, strict=True))
            ident = json.dumps(point, sort_keys=True, default=str)
            if ident in seen:
                continue
            seen.add(ident)
            if all(f.keeps(point) for f in sweep.filters):
                out.append(point)
    return out


def _where(sweep: Sweep, point: Mapping[str, Any], axis: str) -> str:
    """The description's place of ``axis``'s value in ``point``: ``axes.A[i]`` (the first
    grid that has the value) or ``base.A``."""
    value = point.get(axis)
    for gi, grid in enumerate(sweep.grids):
        if axis in grid and value in grid[axis]:
            prefix = "axes" if len(sweep.grids) == 1 else f"axes[{gi}]"
            return f"{prefix}.{axis}[{grid[axis].index(value)}]"
    return f"base.{axis}"


class _Specs:
    """The spec texts of a sweep, each made once."""

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.base = sweep.base
        self._made: dict[str, api.SpecSource] = {}
        self._checked: set[tuple[str, str | None, int | None]] = set()
        self._gens = {g["name"]: g for g in api.generators()} if "generator" in self.base \
            else {}

    def _load(self, spec: Any, path: str) -> api.SpecSource:
        if isinstance(spec, str) and not spec.lstrip().startswith("{"):
            spec = self.sweep.where / spec
        try:
            return api.load_spec(spec)
        except OSError as e:
            raise SweepError(path, f"cannot read {e.filename or spec}: "
                                   f"{e.strerror or e}") from None
        except SpecError as e:
            raise SweepError(path, f"{e.path}: {e.message}") from None

    def _generated(self, point: Mapping[str, Any]) -> api.SpecSource:
        name = self.base["generator"]
        gen = self._gens.get(name)
        if gen is None:
            raise SweepError("base.generator", f"unknown generator {name!r} (known: "
                                               f"{', '.join(sorted(self._gens))})")
        known = {o["name"] for o in gen["options"]}
        opts = {str(k): v for k, v in (self.base.get("options") or {}).items()}
        for axis, v in point.items():
            if axis.startswith("options.") and v is not None:
                opts[axis.removeprefix("options.")] = v
        spelled: list[tuple[str, str]] = []
        for k, v in opts.items():
            alt = next((a for a in (k, k.replace("_", "-"), k.replace("-", "_")) if a in known),
                       None)
            if alt is None:
                where = f"axes.options.{k}" if f"options.{k}" in point else f"base.options.{k}"
                raise SweepError(where, f"generator {name!r} has no option {k!r} (it has "
                                        f"{', '.join(sorted(known))})")
            spelled.append((alt, api.option_text(v)))
        try:
            text = _core.generate(name, spelled)
        except SpecError as e:
            opt = e.path.removeprefix("options.")
            where = (_where(self.sweep, point, f"options.{opt}")
                     if f"options.{opt}" in point else f"base.options.{opt}")
            raise SweepError(where, e.message) from None
        return api.SpecSource(text, f"<{name}>")

    def source(self, point: Mapping[str, Any]) -> api.SpecSource:
        """The spec of ``point``: the base (a file, a named spec, a generator's output)
        with the point's edits applied."""
        made_key = json.dumps({a: v for a, v in point.items()
                               if a == "spec" or a.startswith(("options.", "io_scheduler"))
                               or any(a.startswith(p) for p in EDIT_PREFIXES)},
                              sort_keys=True, default=str)
        if made_key in self._made:
            return self._made[made_key]
        if "generator" in self.base:
            src = self._generated(point)
        elif "specs" in self.base:
            name = point.get("spec")
            specs = self.base["specs"]
            if name is None:
                raise SweepError("axes", "base.specs needs a spec axis choosing among them")
            if name not in specs:
                raise SweepError(_where(self.sweep, point, "spec"),
                                 f"no spec named {name!r} in base.specs")
            src = self._load(specs[name], f"base.specs.{name}")
            src = api.SpecSource(src.text, str(name))
        else:
            src = self._load(self.base["spec"], "base.spec")
        edits = [(a, v) for a, v in point.items() if v is not None and (
            a == "io_scheduler" or any(a.startswith(p) for p in EDIT_PREFIXES))]
        if edits:
            src = api.SpecSource(self._edit(src.text, point, edits), src.origin)
        self._made[made_key] = src
        return src

    def _edit(self, text: str, point: Mapping[str, Any], edits: list[tuple[str, Any]]) -> str:
        def apply(obj: dict[str, Any]) -> None:
            for axis, value in edits:
                if axis == "io_scheduler":
                    devices = obj.get("schedlab", {}).get("devices")
                    if not isinstance(devices, dict) or not devices:
                        raise SweepError(_where(self.sweep, point, axis),
                                         "the spec has no block devices (schedlab.devices)")
                    for dev in devices.values():
                        dev["scheduler"] = value
                    continue
                prefix = next(p for p in EDIT_PREFIXES if axis.startswith(p))
                path = (EDIT_PREFIXES[prefix] + axis.removeprefix(prefix)).split(".")
                at = obj
                for part in path[:-1]:
                    nxt = at.setdefault(part, {})
                    if not isinstance(nxt, dict):
                        raise SweepError(_where(self.sweep, point, axis),
                                         f"the spec's {part!r} is not an object")
                    at = nxt
                at[path[-1]] = value

        try:
            return api.edit_spec(text, apply)
        except SpecError as e:
            raise SweepError("base", f"the spec cannot be edited ({e.path}: {e.message})"
                             ) from None

    def check(self, src: api.SpecSource, scheduler: str | None, duration_ns: int | None,
              point: Mapping[str, Any]) -> None:
        """The core's own check of the spec under the scheduler, once per pair."""
        key = (src.sha256, scheduler, duration_ns)
        if scheduler is None or key in self._checked:
            # without a scheduler the core would check the spec under every policy: its
            # runs are checked when they run, and a refused one is a failed row
            return
        self._checked.add(key)
        try:
            _core.validate(src.text, [scheduler] if scheduler else [], duration_ns)
        except SpecError as e:
            raise SweepError(self._blame(point, e.path), f"{e.path}: {e.message}") from None
        except SimError as e:
            if e.bad_input:
                raise SweepError(self._blame(point, ""), e.message) from None
            # a run the core would refuse for another reason is run and recorded failed

    def _blame(self, point: Mapping[str, Any], json_path: str) -> str:
        """The place in the description most likely to have made the spec wrong."""
        plain = json_path.removeprefix("$.").replace("[", ".").replace("]", "")
        for axis, v in point.items():
            if v is None:
                continue
            for prefix, spec_prefix in EDIT_PREFIXES.items():
                if axis.startswith(prefix):
                    path = spec_prefix + axis.removeprefix(prefix)
                    if plain.startswith(path):
                        return _where(self.sweep, point, axis)
        for axis in ("io_scheduler", "scheduler", "spec"):
            if point.get(axis) is not None:
                return _where(self.sweep, point, axis)
        for axis, v in point.items():
            if axis.startswith("options.") and v is not None:
                return _where(self.sweep, point, axis)
        return "base"


def _registry() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in api.schedulers()}


def expand(sweep: Sweep, registry: Mapping[str, Mapping[str, Any]] | None = None
           ) -> list[Point]:
    """The runs of ``sweep`` in grid order. Raises :class:`SweepError` naming the place in
    the description of an unknown scheduler, tunable, generator or option, or a spec the
    core refuses."""
    reg = dict(registry) if registry is not None else _registry()
    specs = _Specs(sweep)
    base = sweep.base
    base_params = {str(k): api.option_text(v) for k, v in (base.get("params") or {}).items()}
    points: list[Point] = []
    for point in _points(sweep):
        sched = point.get("scheduler") or base.get("scheduler")
        if sched is not None:
            entry = reg.get(sched)
            if entry is None or not entry.get("available", True):
                why = "unknown scheduler" if entry is None else "unavailable scheduler"
                raise SweepError(_where(sweep, point, "scheduler"), f"{why} {sched!r}")
        params = dict(base_params)
        for axis, v in point.items():
            if axis.startswith("params.") and v is not None:
                params[axis.removeprefix("params.")] = api.option_text(v)
        if sched is not None:
            known = {p["name"] for p in reg[sched].get("params", [])}
            for name in params:
                if name not in known:
                    where = (f"axes.params.{name}" if f"params.{name}" in point
                             and point[f"params.{name}"] is not None else f"base.params.{name}")
                    raise SweepError(where, f"{name!r} is not a tunable of {sched!r} (filter "
                                            "the pair out, or give it its own grid)")
        src = specs.source(point)

        def pick(axis: str, p: Mapping[str, Any] = point) -> Any:
            v = p.get(axis)
            return v if v is not None else base.get(axis)

        try:
            job = api.job(src, sched, sorted(params.items()), seed=pick("seed"),
                          cpus=pick("cpus"), hz=pick("hz"), duration=pick("duration"),
                          samples=sweep.samples, memory_budget=sweep.memory_budget)
        except ValueError as e:  # checked with the description; kept for the Python form
            raise SweepError("axes", str(e)) from None
        job = runner.Job(**{**job.__dict__, "label": _label(point)})
        specs.check(src, sched, job.duration_ns, point)
        overrides = job.overrides()
        if sweep.memory_budget is not None:
            overrides["memory_budget"] = sweep.memory_budget
        if job.samples:
            # samples kept make the percentiles exact (else histogram-resolved): another run
            overrides["samples"] = 1
        key = run_key(src.sha256, sched, job.params, job.seed, overrides)
        points.append(Point(point, job, key))
    return points


def _label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{a}={v}" for a, v in point.items() if v is not None)


def spec_file(sha256: str) -> Path:
    """Where a dataset keeps a spec's exact bytes, relative to the dataset."""
    return Path("specs") / f"{sha256}.json"

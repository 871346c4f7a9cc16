"""What a report section may use: :class:`Context` (settings, the policy registry, the run
loop, spec and figure output, the manifest) and what it returns, :class:`SectionOutput`.

A section is a function ``section(ctx: Context) -> SectionOutput``; the sections of the
report are listed in :data:`schedlab.seeds.SECTIONS`. Sections run simulations only
through :meth:`Context.run`, which saves each spec's text exactly as it is handed to the
core and records every run in the manifest.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab import hostcosts, runner
from schedlab.api import SpecSource
from schedlab.hostcosts import HostCosts, HostCostsFn
from schedlab.report.render import Markup
from schedlab.report.table import Cell, Column, Table
from schedlab.result import Result
from schedlab.sweep.describe import Sweep

__all__ = [
    "Context",
    "Figure",
    "GenerateFn",
    "Part",
    "ReportWriteError",
    "RunOutcome",
    "RunRequest",
    "SectionFn",
    "SectionOutput",
    "runs_table",
]

MANIFEST_SCHEMA = "schedlab.reproduce-manifest/2"

#: Where a report keeps the host costs its specs were made from (under ``sweeps/``).
HOST_COSTS_FILE = "host-costs.json"

#: ``generate(name, **options) -> spec text``
GenerateFn = Callable[..., str]


@dataclass(frozen=True)
class RunRequest:
    """One simulation of a saved spec: ``specs/<spec_name>.json`` holds ``spec_text``."""

    spec_name: str
    spec_text: str
    scheduler: str
    params: tuple[tuple[str, str], ...] = ()
    seed: int = 1
    cpus: int | None = None
    hz: int | None = None
    duration_ns: int | None = None
    #: Where to write the run's ftrace text (an output: it does not change the numbers).
    trace: Path | None = None
    #: Whether the section needs per-activation samples (False saves memory on big runs).
    samples: bool = True
    #: A label for progress and errors (defaults to "<spec_name> / <scheduler>").
    label: str = ""


@dataclass
class RunOutcome:
    """A request and what its run gave."""

    request: RunRequest
    outcome: runner.Outcome

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    @property
    def result(self) -> Result | None:
        return self.outcome.result

    @property
    def error(self) -> str | None:
        return self.outcome.error

    @property
    def wall_s(self) -> float:
        return self.outcome.wall_s


@dataclass(frozen=True)
class Figure:
    """A saved figure: PNG and SVG paths relative to the report, and its caption."""

    png: str
    svg: str
    caption: str


@dataclass
class SectionOutput:
    """What a section returns: its anchor id, title, HTML body and the files it wrote."""

    id: str
    title: str
    html: Markup
    files: list[Path] = field(default_factory=list)


@dataclass
class Part:
    """A piece of a section: its HTML, the files it wrote and the runs behind it."""

    html: Markup
    files: list[Path] = field(default_factory=list)
    runs: list[RunOutcome] = field(default_factory=list)


SectionFn = Callable[["Context"], SectionOutput]


class ReportWriteError(OSError):
    """A file of the report could not be written (a full disk, a quota, a permission):
    the report is incomplete, so it must not be published. ``filename`` is the file's
    place in the published report."""


def _manifest_entry(run: RunOutcome, spec_rel: str, trace_rel: str | None) -> dict[str, Any]:
    """Everything needed to rerun one run and check its numbers."""
    req, res = run.request, run.result
    overrides = {k: v for k, v in (("cpus", req.cpus), ("hz", req.hz),
                                   ("duration_ns", req.duration_ns)) if v is not None}
    entry: dict[str, Any] = {
        "spec": spec_rel,
        "scheduler": req.scheduler,
        "params": dict(req.params),
        "seed": req.seed,
        "overrides": overrides,
        "samples": req.samples,
        "trace": trace_rel,
        "label": req.label or f"{req.spec_name} / {req.scheduler}",
        "status": "ok" if run.ok else "error",
        "error": run.error,
    }
    if res is not None:
        entry.update({
            "spec_sha256": res.run.get("spec_sha256"),
            "events": res.run.get("events"),
            "sim_ns": res.run.get("sim_ns"),
            "decisions": res.run.get("decisions"),
            "work_units": res.run.get("work_units"),
            "makespan_ns": res.makespan_ns,
            "headline": res.headline,
            "wakeup_latency_ns": res.summary.get("wakeup_latency_ns"),
            "totals": res.totals,
        })
    return entry


class Context:
    """Settings, the engine and the output locations of one report."""

    def __init__(
        self,
        quick: bool,
        out: Path,
        *,
        shown_as: Path | None = None,
        simulate: runner.SimulateFn | None = None,
        generate: GenerateFn | None = None,
        registry: Sequence[Mapping[str, Any]] | None = None,
        on_run: Callable[[str, int], Callable[[runner.Outcome], None]] | None = None,
        jobs: int | None = None,
        host_costs: HostCostsFn | None = None,
        backend: runner.Backend | None = None,
        from_results: Path | None = None,
    ) -> None:
        from schedlab import api

        self.quick = quick
        self.out = Path(out)
        #: Where the report is published (``out`` may be the directory it is built in).
        self.shown_as = Path(shown_as) if shown_as is not None else self.out
        #: The first write that failed: sections may swallow errors, the report may not.
        self.write_error: ReportWriteError | None = None
        self.specs_dir = self.out / "specs"
        self.plots_dir = self.out / "plots"
        self.traces_dir = self.out / "traces"
        #: The datasets of the sections declared as sweeps (:meth:`sweep`).
        self.sweeps_dir = self.out / "sweeps"
        #: Where their sweeps run (default: threads of this process).
        self.backend = backend
        #: A report whose stored sweep results this one is rebuilt from.
        self.from_results = Path(from_results) if from_results is not None else None
        self._simulate = simulate or runner.execute
        self._generate = generate or (lambda name, **o: api.generate_text(
            name, [(k, api.option_text(v)) for k, v in o.items()]))
        #: Every policy the registry lists, available or not (``schedlab schedulers``).
        self.registry: list[dict[str, Any]] = [
            dict(s) for s in (api.schedulers() if registry is None else registry)]
        self._on_run = on_run
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.manifest: list[dict[str, Any]] = []
        self._saved: dict[str, str] = {}
        self._lock = threading.Lock()
        self._measure_costs = host_costs or hostcosts.measure
        self._host_costs: HostCosts | None = None

    # -- facts --------------------------------------------------------------------------
    @property
    def available(self) -> list[str]:
        """Names of the policies this build can run, in registry order."""
        return [s["name"] for s in self.registry if s.get("available", True)]

    def policy(self, name: str) -> dict[str, Any] | None:
        """The registry's entry for ``name`` (None if it lists no such policy)."""
        return next((s for s in self.registry if s["name"] == name), None)

    def rel(self, path: Path) -> str:
        """``path`` relative to the report directory, with forward slashes."""
        return path.relative_to(self.out).as_posix()

    def shown(self, path: Path | str) -> str:
        """``path`` as it will be once the report is published."""
        p = Path(path)
        if p.is_relative_to(self.out):
            return str(self.shown_as / p.relative_to(self.out))
        return str(p)

    def _failed_write(self, e: OSError, path: Path | str) -> ReportWriteError:
        """``e`` as a :class:`ReportWriteError` naming ``path``; the first one is kept."""
        err = ReportWriteError(e.errno, e.strerror or str(e), self.shown(path))
        with self._lock:
            if self.write_error is None:
                self.write_error = err
        return err

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Write a file of the report (its directory is created)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as e:
            raise self._failed_write(e, path) from None

    def check_writes(self) -> None:
        """Raise the first write that failed, if one did."""
        if self.write_error is not None:
            raise self.write_error

    def host_costs(self) -> HostCosts:
        """This host's measured pipe, socket and switch costs (measured once per report),
        kept as ``sweeps/host-costs.json``: a report rebuilt :attr:`from_results` reads
        them from there, so the specs made from them (and their runs' keys) are the same."""
        if self._host_costs is None:
            kept = self.sweeps_dir / HOST_COSTS_FILE
            stored = (self.from_results / "sweeps" / HOST_COSTS_FILE
                      if self.from_results is not None else None)
            if stored is not None and stored.is_file():
                try:
                    self._host_costs = hostcosts.from_dict(
                        json.loads(stored.read_text("utf-8")))
                except (ValueError, TypeError, KeyError, AttributeError) as e:
                    raise ValueError(f"{stored}: not the host costs a report keeps "
                                     f"({type(e).__name__}: {e})") from None
            else:
                self._host_costs = self._measure_costs(self.quick)
            text = json.dumps(self._host_costs.as_dict(), indent=2) + "\n"
            self.write_bytes(kept, text.encode("utf-8"))
        return self._host_costs

    # -- specs and runs -----------------------------------------------------------------
    def generate(self, name: str, **options: Any) -> str:
        """The spec text the generator ``name`` writes, as it wrote it."""
        return self._generate(name, **options)

    def save_spec(self, name: str, text: str) -> str:
        """Write ``specs/<name>.json`` with exactly ``text``'s bytes; its relative path.
        Saving another text under a name already used is a bug in the section."""
        with self._lock:
            if name in self._saved:
                if self._saved[name] != text:
                    raise ValueError(f"two different specs named {name!r}")
                return f"specs/{name}.json"
            self._saved[name] = text
        self.write_bytes(self.specs_dir / f"{name}.json", text.encode("utf-8"))
        return f"specs/{name}.json"

    def trace_path(self, stem: str) -> Path:
        """Where a run's trace goes: ``traces/<stem>.txt``."""
        try:
            self.traces_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._failed_write(e, self.traces_dir) from None
        return self.traces_dir / f"{stem}.txt"

    def _job(self, req: RunRequest) -> runner.Job:
        origin = self.save_spec(req.spec_name, req.spec_text)
        return runner.Job(
            spec=SpecSource(text=req.spec_text, origin=origin), scheduler=req.scheduler,
            params=req.params, seed=req.seed, cpus=req.cpus, hz=req.hz,
            duration_ns=req.duration_ns, trace=req.trace, samples=req.samples,
            label=req.label or f"{req.spec_name} / {req.scheduler}")

    def run(self, requests: Sequence[RunRequest], description: str) -> list[RunOutcome]:
        """Save every spec, run every request (parallel, with progress, each failure kept
        with its run) and record each in the manifest; outcomes in request order."""
        jobs = [self._job(r) for r in requests]
        on_done = self._on_run(description, len(jobs)) if self._on_run else None
        outcomes = runner.run_jobs(jobs, workers=self.jobs, on_done=on_done,
                                   simulate=self._simulate)
        runs = [RunOutcome(r, o) for r, o in zip(requests, outcomes, strict=True)]
        for job, o in zip(jobs, outcomes, strict=True):
            self._check_trace_written(job, o)
        with self._lock:
            for run, job in zip(runs, jobs, strict=True):
                trace = self.rel(job.trace) if job.trace is not None else None
                self.manifest.append(_manifest_entry(run, job.spec.origin, trace))
        return runs

    def sweep(self, sweep: Sweep, description: str) -> list[RunOutcome]:
        """Run ``sweep`` into the report's ``sweeps/<name>/`` dataset — copied first from
        :attr:`from_results`, so that only the runs it lacks are run — and return one
        outcome per run, in the sweep's order, read back from the dataset's rows (the
        result objects its metrics keep). Each spec is also saved as
        ``specs/<spec>.json`` (its ``spec`` axis, else the sweep's name) and each run is
        recorded in the manifest."""
        import shutil

        from schedlab.sweep import execute as sweeps
        from schedlab.sweep.store import read as read_dataset

        for name, text in (sweep.base.get("specs") or {}).items():
            if isinstance(text, str):  # kept even if the sweep refuses it
                self.save_spec(name, text)
        dataset = self.sweeps_dir / sweep.name
        if self.from_results is not None and not dataset.exists():
            stored = self.from_results / "sweeps" / sweep.name
            if stored.is_dir():
                try:
                    shutil.copytree(stored, dataset, ignore=shutil.ignore_patterns(".lock"))
                except OSError as e:
                    raise self._failed_write(e, dataset) from None
        points = sweeps.plan(sweep)
        on_done = self._on_run(description, len(points)) if self._on_run else None
        if on_done is not None and dataset.is_dir():
            held = set(read_dataset(dataset, columns=["key"])["key"].to_list())
            for _ in (p for p in points if p.key in held):
                on_done(None)  # type: ignore[arg-type]  # a bar counts, whatever the run
        try:
            done = sweeps.run(sweep, dataset, backend=self.backend or runner.Threads(self.jobs),
                              progress=False, simulate=self._simulate,
                              on_row=(lambda _row: on_done(None))  # type: ignore[arg-type]
                              if on_done else None)
        except OSError as e:
            raise self._failed_write(e, e.filename or dataset) from None
        rows = {r["key"]: r for r in done.rows().iter_rows(named=True)}
        runs: list[RunOutcome] = []
        for p in points:
            row = rows[p.key]
            job = p.job
            name = str(p.axes.get("spec") or sweep.name)
            origin = self.save_spec(name, job.spec.text)
            trace = dataset / row["trace_file"] if row.get("trace_file") else None
            req = RunRequest(name, job.spec.text, job.scheduler or "", params=job.params,
                             seed=job.seed if job.seed is not None else 1, cpus=job.cpus,
                             hz=job.hz, duration_ns=job.duration_ns, trace=trace,
                             samples=sweep.samples, label=job.label)
            result = sweeps.row_result(row)
            if result is not None and row.get("samples_file"):
                result.json["run"]["samples"] = {"mode": "file"}
                result.read_samples_from(dataset / row["samples_file"])
            failure = None if result is not None else runner.RecordedFailure(
                row.get("error") or "no result")
            outcome = runner.Outcome(
                runner.Job(spec=SpecSource(job.spec.text, origin), scheduler=job.scheduler,
                           params=job.params, seed=job.seed, cpus=job.cpus, hz=job.hz,
                           duration_ns=job.duration_ns, trace=trace, samples=sweep.samples,
                           label=job.label),
                result, failure, float(row.get("wall_s") or 0.0))
            runs.append(RunOutcome(req, outcome))
        with self._lock:
            for run in runs:
                trace_rel = self.rel(run.request.trace) if run.request.trace else None
                self.manifest.append(_manifest_entry(run, f"specs/{run.request.spec_name}.json",
                                                     trace_rel))
        return runs

    def _check_trace_written(self, job: runner.Job, o: runner.Outcome) -> None:
        """A run that failed writing its trace is a failed write of the report (the core
        names the trace file in that error), not a run to show as failed."""
        from schedlab._core import SimError

        e = o.exception
        if (job.trace is not None and isinstance(e, SimError) and not e.bad_input
                and str(job.trace) in e.message):
            self._failed_write(OSError(None, e.message.replace(f"{job.trace}: ", "")),
                               job.trace)

    # -- output -------------------------------------------------------------------------
    def save_figure(self, fig: Any, stem: str, caption: str) -> Figure:
        """Save a matplotlib figure as PNG + SVG under ``plots/``."""
        from schedlab import plots

        try:
            png, svg = plots.save(fig, self.plots_dir, stem)
        except OSError as e:
            raise self._failed_write(e, e.filename or self.plots_dir / stem) from None
        return Figure(self.rel(png), self.rel(svg), caption)

    def figure_files(self, *figures: Figure) -> list[Path]:
        return [self.out / p for f in figures for p in (f.png, f.svg)]

    def write_manifest(self) -> Path:
        path = self.specs_dir / "manifest.json"
        doc = {"schema": MANIFEST_SCHEMA, "quick": self.quick, "runs": self.manifest}
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        self.write_bytes(path, text.encode("utf-8"))
        return path


def runs_table(runs: Sequence[RunOutcome]) -> Table:
    """The runs behind a section: spec, scheduler, seed, simulated time, engine events and
    host seconds, or the error."""
    rows: list[list[Any]] = []
    for r in runs:
        req = r.request
        spec = Cell(f"{req.spec_name}.json", href=f"specs/{req.spec_name}.json")
        run = r.result.run if r.result is not None else {}
        sim_ns = run.get("sim_ns")
        status = "ok" if r.ok else Cell(r.error or "no result", cls="error")
        rows.append([spec, req.scheduler, req.seed,
                     sim_ns / 1e9 if sim_ns is not None else None, run.get("events"),
                     r.wall_s, status])
    return Table(
        columns=[Column("spec"), Column("scheduler"), Column("seed", "int"),
                 Column("simulated s", "s"), Column("events", "int"),
                 Column("host s", "s"), Column("status")],
        rows=rows,
    )

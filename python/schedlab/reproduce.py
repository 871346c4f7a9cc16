"""`schedlab reproduce`: regenerate every seed experiment into one HTML report.

``main(quick, out)`` runs each report section in turn and writes ``out/index.html``, the
plots (PNG + SVG) under ``out/plots/``, and every spec that produced a number under
``out/specs/`` with ``out/specs/manifest.json`` listing each run (spec file, scheduler,
tunables, seed, machine overrides), so that any cell of any table can be regenerated.

Sections are plug-ins. A section is a function ``section(ctx: Context) -> SectionOutput``;
:func:`sections` lists them in page order. To add seed 001, write
``schedlab/seeds/seed001.py`` with such a function and append it in :func:`sections`.
A section uses the :class:`Context` for everything that touches the outside world: it
generates specs (``ctx.generate``), runs them (``ctx.run`` — parallel, with a progress bar,
errors captured per run instead of aborting the report), saves figures
(``ctx.save_figure``) and learns which schedulers exist (``ctx.schedulers``). Tests
substitute the simulator and the generators through :func:`main`'s keyword arguments.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab import hostcosts, report
from schedlab.hostcosts import HostCosts, HostCostsFn

#: ``simulate(spec, scheduler=..., params=..., seed=..., **overrides) -> Result``
SimulateFn = Callable[..., Any]
#: ``generate(name, **options) -> spec dict``
GenerateFn = Callable[..., dict]


@dataclass(frozen=True)
class RunRequest:
    """One simulation: a saved spec under a scheduler with a seed."""

    #: Name of the spec file (without ``.json``) under ``out/specs``.
    spec_name: str
    spec: dict
    scheduler: str
    params: dict[str, str] = field(default_factory=dict)
    seed: int = 1
    #: Keyword overrides passed to ``simulate`` (cpus, hz, duration).
    overrides: dict[str, Any] = field(default_factory=dict)
    #: A label for progress and errors (defaults to "<spec_name> / <scheduler>").
    label: str = ""
    #: Whether the section needs per-activation samples (False saves memory on big runs).
    samples: bool = True


@dataclass
class RunOutcome:
    request: RunRequest
    result: Any | None
    error: str | None
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.error is None and self.result is not None


@dataclass
class SectionOutput:
    """What a section returns: its anchor id, title, HTML body and the files it wrote."""

    id: str
    title: str
    html: str
    files: list[Path] = field(default_factory=list)


def result_json(result: Any) -> dict:
    """The schema dict of a Result (or of a dict that already is one)."""
    if isinstance(result, dict):
        return result
    j = result.json
    return j() if callable(j) else j


def runs_details(outcomes: Sequence[RunOutcome]) -> str:
    """A collapsed table of the runs behind a section: spec, scheduler, seed, simulated
    time, engine events and host seconds (or the error)."""
    rows: list[list[Any]] = []
    for o in outcomes:
        r = o.request
        spec_link = report.Cell(f"{r.spec_name}.json", href=f"specs/{r.spec_name}.json")
        if o.ok:
            run = result_json(o.result).get("run", {})
            sim_ns = run.get("sim_ns")
            rows.append([spec_link, r.scheduler, r.seed,
                         sim_ns / 1e9 if sim_ns is not None else None, run.get("events"),
                         o.wall_s, "ok"])
        else:
            rows.append([spec_link, r.scheduler, r.seed, None, None, o.wall_s,
                         report.Cell(o.error or "no result", cls="error")])
    table = report.Table(
        columns=[report.Column("spec"), report.Column("scheduler"), report.Column("seed", "int"),
                 report.Column("simulated s", "s"), report.Column("events", "int"),
                 report.Column("host s", "s"), report.Column("status")],
        rows=rows,
    )
    return (f"<details><summary>The {len(outcomes)} runs behind these tables</summary>"
            f"{report.render_table(table)}</details>")


def _default_simulate(spec: dict, **kwargs: Any) -> Any:
    import schedlab

    return schedlab.simulate(spec, **kwargs)


def _default_generate(name: str, **options: Any) -> dict:
    import schedlab

    return schedlab.generate(name, **options)


def available_schedulers() -> list[dict[str, Any]]:
    """The policies the engine offers, each as a dict with at least ``name``.

    Reads ``schedlab._core.schedulers()`` (JSON text of ``[{"name", "available", …}]``;
    other shapes — names, a mapping name → info — are accepted too). Empty if the
    extension is not built.
    """
    try:
        from schedlab import _core

        raw: Any = _core.schedulers()
    except Exception:
        return []
    return normalise_schedulers(raw)


def normalise_schedulers(raw: Any) -> list[dict[str, Any]]:
    """Scheduler listings of any shape as dicts with ``name``; entries marked
    ``"available": false`` (listed but not usable in this build) are dropped."""
    return [s for s in _normalise(raw) if s.get("available", True) is not False]


def _normalise(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        raw = json.loads(raw)
    if isinstance(raw, dict):
        if "schedulers" in raw:
            return _normalise(raw["schedulers"])
        return [{"name": k, **(v if isinstance(v, dict) else {})} for k, v in raw.items()]
    out: list[dict[str, Any]] = []
    for item in raw or []:
        if isinstance(item, str):
            out.append({"name": item})
        elif isinstance(item, dict) and "name" in item:
            out.append(dict(item))
        elif hasattr(item, "name"):
            out.append({"name": item.name})
    return out


def schedlab_version() -> str:
    try:
        from importlib.metadata import version

        return version("schedlab")
    except Exception:
        import schedlab

        return str(getattr(schedlab, "__version__", "unknown"))


class Context:
    """What a section may use: settings, the engine, output locations, progress."""

    def __init__(
        self,
        quick: bool,
        out: Path,
        *,
        simulate: SimulateFn | None = None,
        generate: GenerateFn | None = None,
        schedulers: Sequence[Any] | None = None,
        progress: Any | None = None,
        jobs: int | None = None,
        host_costs: HostCostsFn | None = None,
    ) -> None:
        self.quick = quick
        self.out = out
        self.specs_dir = out / "specs"
        self.plots_dir = out / "plots"
        self._simulate = simulate or _default_simulate
        self._generate = generate or _default_generate
        self.schedulers: list[dict[str, Any]] = (
            normalise_schedulers(list(schedulers)) if schedulers is not None
            else available_schedulers()
        )
        self._progress = progress
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.manifest: list[dict[str, Any]] = []
        self._saved_specs: dict[str, str] = {}
        self._lock = threading.Lock()
        self._measure_costs = host_costs or hostcosts.measure
        self._host_costs: HostCosts | None = None

    # -- facts --------------------------------------------------------------------------
    @property
    def scheduler_names(self) -> list[str]:
        return [s["name"] for s in self.schedulers]

    def has_scheduler(self, name: str) -> bool:
        return name in self.scheduler_names

    def rel(self, path: Path) -> str:
        """``path`` relative to the report directory, with forward slashes."""
        return path.relative_to(self.out).as_posix()

    def host_costs(self) -> HostCosts:
        """This host's measured pipe and switch costs (measured once per report)."""
        if self._host_costs is None:
            self._host_costs = self._measure_costs(self.quick)
        return self._host_costs

    # -- engine -------------------------------------------------------------------------
    def generate(self, name: str, **options: Any) -> dict:
        return self._generate(name, **options)

    def save_spec(self, name: str, spec: dict) -> str:
        """Write ``specs/<name>.json`` (stable key order); return its relative path."""
        with self._lock:
            if name in self._saved_specs:
                return self._saved_specs[name]
            self.specs_dir.mkdir(parents=True, exist_ok=True)
            path = self.specs_dir / f"{name}.json"
            path.write_text(json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
            self._saved_specs[name] = self.rel(path)
            return self._saved_specs[name]

    def _run_one(self, req: RunRequest) -> RunOutcome:
        kwargs: dict[str, Any] = {"scheduler": req.scheduler, "seed": req.seed}
        if req.params:
            kwargs["params"] = dict(req.params)
        kwargs.update(req.overrides)
        if not req.samples:
            kwargs["samples"] = False
        t0 = time.perf_counter()
        try:
            result = self._simulate(req.spec, **kwargs)
            err = None
        except Exception as exc:  # one failed run must not sink the report
            result = None
            err = f"{type(exc).__name__}: {exc}"
            if os.environ.get("SCHEDLAB_DEBUG"):
                traceback.print_exc()
        return RunOutcome(req, result, err, time.perf_counter() - t0)

    def run(self, requests: Sequence[RunRequest], description: str) -> list[RunOutcome]:
        """Run every request (in parallel threads), with a progress bar; keep input order."""
        for req in requests:
            spec_rel = self.save_spec(req.spec_name, req.spec)
            self.manifest.append(
                {
                    "spec": spec_rel,
                    "scheduler": req.scheduler,
                    "params": dict(req.params),
                    "seed": req.seed,
                    "overrides": dict(req.overrides),
                    "label": req.label or f"{req.spec_name} / {req.scheduler}",
                }
            )
        task = None
        if self._progress is not None:
            task = self._progress.add_task(description, total=len(requests))
        outcomes: list[RunOutcome | None] = [None] * len(requests)
        with ThreadPoolExecutor(max_workers=min(self.jobs, max(1, len(requests)))) as pool:
            futures = {pool.submit(self._run_one, r): i for i, r in enumerate(requests)}
            for fut in as_completed(futures):
                outcomes[futures[fut]] = fut.result()
                if task is not None:
                    self._progress.advance(task)
        return [o for o in outcomes if o is not None]

    # -- output -------------------------------------------------------------------------
    def save_figure(self, fig: Any, stem: str) -> tuple[str, str]:
        """Save a matplotlib figure as PNG + SVG under ``plots/``; relative paths."""
        from schedlab import plots

        png, svg = plots.save(fig, self.plots_dir, stem)
        return self.rel(png), self.rel(svg)

    def write_manifest(self) -> Path:
        self.specs_dir.mkdir(parents=True, exist_ok=True)
        path = self.specs_dir / "manifest.json"
        doc = {
            "schema": "schedlab.reproduce-manifest/1",
            "quick": self.quick,
            "runs": self.manifest,
        }
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return path


SectionFn = Callable[[Context], SectionOutput]


def sections() -> list[SectionFn]:
    """The report's sections, in page order (one per seed; add new seeds here)."""
    from schedlab.seeds import seed000, seed002

    return [seed000.section, seed002.section]


def machine_facts() -> dict[str, str]:
    u = platform.uname()
    return {
        "host CPUs": str(os.cpu_count() or "?"),
        "host kernel": f"{u.system} {u.release} ({u.machine})",
        "host": u.node,
        "python": sys.version.split()[0],
    }


def _progress_bar() -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )


def _error_section(fn: SectionFn, exc: BaseException) -> SectionOutput:
    name = getattr(fn, "__module__", "section").rsplit(".", 1)[-1]
    return SectionOutput(
        id=name,
        title=f"{name}: failed",
        html=report.note(
            f"This section raised <code>{report.esc(type(exc).__name__)}: "
            f"{report.esc(exc)}</code>; the other sections are unaffected.",
            warn=True,
        ),
    )


def main(
    quick: bool,
    out: Path,
    *,
    simulate: SimulateFn | None = None,
    generate: GenerateFn | None = None,
    schedulers: Sequence[Any] | None = None,
    section_fns: Sequence[SectionFn] | None = None,
    progress: bool = True,
    jobs: int | None = None,
    host_costs: HostCostsFn | None = None,
) -> Path:
    """Run every seed experiment and write ``out/index.html``; return its path.

    ``quick`` shrinks every experiment (each section says how) so the whole report takes
    well under a minute. The keyword arguments exist for tests and scripts: substitute
    the simulator, the generators, the list of schedulers or the sections.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    bar = _progress_bar() if progress else None
    ctx = Context(
        quick, out, simulate=simulate, generate=generate, schedulers=schedulers,
        progress=bar, jobs=jobs, host_costs=host_costs,
    )
    outputs: list[SectionOutput] = []
    fns = list(section_fns) if section_fns is not None else sections()
    if bar is not None:
        bar.start()
    try:
        for fn in fns:
            try:
                outputs.append(fn(ctx))
            except Exception as exc:
                if os.environ.get("SCHEDLAB_DEBUG"):
                    raise
                outputs.append(_error_section(fn, exc))
    finally:
        if bar is not None:
            bar.stop()
    ctx.write_manifest()

    meta = {
        "schedlab version": schedlab_version(),
        "generated": started.strftime("%Y-%m-%d %H:%M:%S UTC"),
        "mode": "quick (reduced sizes, see each section)" if quick else "full",
        "report wall time": f"{time.perf_counter() - t0:.1f} s",
        "schedulers available": ", ".join(ctx.scheduler_names) or "none (engine not built?)",
        "engine": "simulator (deterministic; same spec + seed ⇒ same numbers)",
        **machine_facts(),
    }
    intro = (
        "<p>Each section regenerates one seed document's experiments with schedlab and "
        "shows the figures the seed published beside them. Simulated times are on a "
        "modelled machine: compare rankings and ratios, not absolute values. "
        'The specs behind every table are in <a href="specs/">specs/</a> '
        '(<a href="specs/manifest.json">manifest.json</a> lists each run).</p>'
    )
    if quick:
        intro += (
            '<p class="quick"><strong>Quick mode.</strong> Experiments were shrunk so the '
            "report builds in seconds; each section states its reduced sizes. Run "
            "<code>schedlab reproduce</code> without <code>--quick</code> for the seed's "
            "full sizes.</p>"
        )
    page = report.render_page(
        "schedlab — the seed experiments reproduced",
        meta,
        [report.PageSection(o.id, o.title, o.html) for o in outputs],
        intro_html=intro,
    )
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index

"""`schedlab reproduce`: regenerate every seed experiment into one HTML report.

:func:`main` runs each section of :data:`schedlab.seeds.SECTIONS` in turn and writes
``out/index.html``, the plots (PNG + SVG) under ``out/plots/``, and every spec that
produced a number under ``out/specs/`` — the very bytes the core ran — with
``out/specs/manifest.json`` listing each run: its spec file and that file's sha256 (taken
by the core), scheduler, tunables, seed, overrides, engine event count and headline
values. Rerunning a manifest entry gives the same numbers.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import runner
from schedlab.hostcosts import HostCostsFn
from schedlab.report import render
from schedlab.report.context import Context, GenerateFn, SectionFn, SectionOutput

__all__ = ["main"]


def schedlab_version() -> str:
    from schedlab import _core

    return _core.version()


def machine_facts() -> dict[str, str]:
    u = platform.uname()
    return {
        "host CPUs": str(os.cpu_count() or "?"),
        "host kernel": f"{u.system} {u.release} ({u.machine})",
        "host": u.node,
        "python": sys.version.split()[0],
    }


def _failed_section(fn: SectionFn, exc: BaseException) -> SectionOutput:
    name = getattr(fn, "__module__", "section").rsplit(".", 1)[-1]
    html = render("failed_section.html.j2", error=f"{type(exc).__name__}: {exc}")
    return SectionOutput(id=name, title=f"{name}: failed", html=html)


def _run_sections(ctx: Context, fns: Sequence[SectionFn]) -> list[SectionOutput]:
    outputs = []
    for fn in fns:
        try:
            outputs.append(fn(ctx))
        except Exception as exc:  # one broken section must not sink the report
            if os.environ.get("SCHEDLAB_DEBUG"):
                raise
            outputs.append(_failed_section(fn, exc))
    return outputs


@contextlib.contextmanager
def _progress(show: bool) -> Iterator[Callable[[str, int], Callable[[runner.Outcome], None]]
                                      | None]:
    """A bar per batch of runs, kept on screen (or nothing)."""
    if not show:
        yield None
        return
    with runner.Progress(transient=False) as progress:
        yield progress.batch


def _meta(ctx: Context, started: _dt.datetime, wall_s: float) -> Mapping[str, str]:
    return {
        "schedlab version": schedlab_version(),
        "generated": started.strftime("%Y-%m-%d %H:%M:%S UTC"),
        "mode": "quick (reduced sizes, see each section)" if ctx.quick else "full",
        "report wall time": f"{wall_s:.1f} s",
        "schedulers available": ", ".join(ctx.available) or "none",
        "engine": "simulator (deterministic; same spec + seed ⇒ same numbers)",
        **machine_facts(),
    }


def main(
    quick: bool,
    out: Path,
    *,
    simulate: runner.SimulateFn | None = None,
    generate: GenerateFn | None = None,
    registry: Sequence[Mapping[str, Any]] | None = None,
    section_fns: Sequence[SectionFn] | None = None,
    progress: bool = True,
    jobs: int | None = None,
    host_costs: HostCostsFn | None = None,
) -> Path:
    """Run every seed experiment and write ``out/index.html``; return its path.

    ``quick`` shrinks every experiment (each section says how) so the whole report takes
    well under a minute. The keyword arguments exist for tests and scripts: substitute
    the simulator, the generators, the policy registry or the sections.
    """
    from schedlab.seeds import SECTIONS

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    with _progress(progress) as on_run:
        ctx = Context(quick, out, simulate=simulate, generate=generate, registry=registry,
                      on_run=on_run, jobs=jobs, host_costs=host_costs)
        outputs = _run_sections(ctx, SECTIONS if section_fns is None else section_fns)
    ctx.write_manifest()
    page = render("page.html.j2", title="schedlab — the seed experiments reproduced",
                  quick=quick, meta=_meta(ctx, started, time.perf_counter() - t0),
                  sections=outputs)
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index

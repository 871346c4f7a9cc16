"""`schedlab reproduce`: regenerate every seed experiment into one HTML report.

:func:`main` runs each section of :data:`schedlab.seeds.SECTIONS` in turn and writes
``out/index.html``, the plots (PNG + SVG) under ``out/plots/``, and every spec that
produced a number under ``out/specs/`` — the very bytes the core ran — with
``out/specs/manifest.json`` listing each run: its spec file and that file's sha256 (taken
by the core), scheduler, tunables, seed, overrides, engine event count and headline
values. Rerunning a manifest entry gives the same numbers.

The report is built in a fresh hidden directory beside ``out`` (``.<out>.partial-*``) and
moved into place only once every file is written: an interrupted or failed run (Ctrl-C,
SIGTERM, a full disk) leaves ``out`` as it was — an earlier report stays whole and
consistent — and removes what it built. A file that cannot be written fails the command;
a section that fails for another reason is shown as failed on the page.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import runner
from schedlab.hostcosts import HostCostsFn
from schedlab.report import render
from schedlab.report.context import (
    Context,
    GenerateFn,
    ReportWriteError,
    SectionFn,
    SectionOutput,
)

__all__ = ["REPORT_ENTRIES", "DestinationError", "ReportWriteError", "main"]

#: What a report directory holds: an existing directory with anything else in it is not
#: replaced (it is not a report, or not only one).
REPORT_ENTRIES = frozenset({"index.html", "plots", "specs", "traces"})


class DestinationError(ValueError):
    """``out`` cannot receive a report (a file, or a directory holding other things)."""


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
        except ReportWriteError:
            raise
        except Exception as exc:  # one broken section must not sink the report
            if os.environ.get("SCHEDLAB_DEBUG"):
                raise
            outputs.append(_failed_section(fn, exc))
        # a section that swallowed a failed write does not make the report complete
        ctx.check_writes()
    return outputs


def check_destination(out: Path) -> None:
    """Raise :class:`DestinationError` unless ``out`` is absent, an empty directory or a
    report (only :data:`REPORT_ENTRIES`): replacing anything else would delete files
    the report did not write."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise DestinationError(f"{out}: exists and is not a directory")
    other = sorted(p.name for p in out.iterdir() if p.name not in REPORT_ENTRIES)
    if other:
        shown = ", ".join(other[:3]) + (", …" if len(other) > 3 else "")
        raise DestinationError(f"{out}: holds files a report does not write ({shown}); "
                               "choose an empty or new directory")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _staging_dir(out: Path) -> Path:
    """A fresh directory beside ``out`` to build the report in, named as partial."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    os.chmod(staging, 0o777 & ~_umask())  # as a plain mkdir would have made it
    return staging


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (in the main thread) while a few renames run, so that
    an interrupt cannot land between them."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _publish(staging: Path, out: Path) -> None:
    """Move the finished report in ``staging`` to ``out``, replacing an earlier report
    whole: ``out`` is either the old report or the new one, never a mixture."""
    with _signals_held():
        if not out.exists():
            os.rename(staging, out)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old, out)
            raise
    shutil.rmtree(old, ignore_errors=True)


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
    host: bool = False,
) -> Path:
    """Run every seed experiment and write ``out/index.html``; return its path.

    ``quick`` shrinks every experiment (each section says how) so the whole report takes
    well under a minute. ``host`` adds :data:`schedlab.seeds.HOST_SECTIONS`, which run on
    this machine's kernel (each says "host" and the kernel's facts, or why it was skipped).
    The keyword arguments exist for tests and scripts: substitute
    the simulator, the generators, the policy registry or the sections.

    The report is built beside ``out`` and replaces it only when complete. Raises
    :class:`DestinationError` if ``out`` is neither absent, empty nor a report, and
    :class:`ReportWriteError` (an OSError naming the file) if a file cannot be written;
    either way, and on an interrupt, ``out`` is left as it was.
    """
    from schedlab.seeds import HOST_SECTIONS, SECTIONS

    out = Path(out)
    if section_fns is None:
        section_fns = (*SECTIONS, *HOST_SECTIONS) if host else SECTIONS
    check_destination(out)
    staging = _staging_dir(out)
    try:
        _build(quick, staging, out, simulate=simulate, generate=generate, registry=registry,
               section_fns=section_fns,
               progress=progress, jobs=jobs, host_costs=host_costs)
        check_destination(out)  # nothing else moved in while the report was built
        _publish(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


def _build(
    quick: bool,
    staging: Path,
    out: Path,
    *,
    simulate: runner.SimulateFn | None,
    generate: GenerateFn | None,
    registry: Sequence[Mapping[str, Any]] | None,
    section_fns: Sequence[SectionFn],
    progress: bool,
    jobs: int | None,
    host_costs: HostCostsFn | None,
) -> None:
    """Write the whole report into ``staging`` (to be published as ``out``)."""
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    with _progress(progress) as on_run:
        ctx = Context(quick, staging, shown_as=out, simulate=simulate, generate=generate,
                      registry=registry, on_run=on_run, jobs=jobs, host_costs=host_costs)
        outputs = _run_sections(ctx, section_fns)
    ctx.write_manifest()
    page = render("page.html.j2", title="schedlab — the seed experiments reproduced",
                  quick=quick, meta=_meta(ctx, started, time.perf_counter() - t0),
                  sections=outputs)
    ctx.write_bytes(staging / "index.html", page.encode("utf-8"))

"""The one run loop: simulations in parallel threads, each failure kept with its run.

``schedlab.simulate``, ``schedlab.compare``, ``schedlab compare`` and ``schedlab
reproduce`` all go through :func:`run_jobs` (and :func:`execute` for one run). The core
releases the GIL while it simulates, so threads run simulations in parallel; every run is
deterministic whatever the parallelism.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import _core
from schedlab.result import Result

if TYPE_CHECKING:
    from schedlab.api import SpecSource

__all__ = [
    "Job", "Outcome", "Progress", "SimulateFn", "execute", "progress_bar", "results", "run_jobs",
]


@dataclass(frozen=True)
class Job:
    """One simulation: a spec's text under a scheduler, with the run's overrides."""

    spec: SpecSource
    scheduler: str | None = None
    params: tuple[tuple[str, str], ...] = ()
    seed: int | None = None
    cpus: int | None = None
    hz: int | None = None
    duration_ns: int | None = None
    trace: Path | None = None
    check: bool = False
    samples: bool = True
    #: Stream the samples to this Arrow IPC file instead of keeping them in memory.
    samples_path: Path | None = None
    #: Bytes the run may hold (the core's default when None).
    memory_budget: int | None = None
    #: What progress displays and error messages call this run.
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or f"{self.spec.origin} / {self.scheduler or 'spec default'}"

    def overrides(self) -> dict[str, int]:
        """The machine and duration overrides that were given (for a manifest)."""
        given = {"cpus": self.cpus, "hz": self.hz, "duration_ns": self.duration_ns}
        return {k: v for k, v in given.items() if v is not None}


@dataclass
class Outcome:
    """What one job gave: its result, or the exception that stopped it."""

    job: Job
    result: Result | None
    exception: BaseException | None = None
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.exception is None and self.result is not None

    @property
    def error(self) -> str | None:
        """The failure as one line, ``"<ExceptionType>: <message>"``; None if it ran."""
        if self.exception is None:
            return None if self.result is not None else "no result"
        return f"{type(self.exception).__name__}: {self.exception}"


SimulateFn = Callable[[Job], Result]
"""Runs one job (:func:`execute`, or a substitute in tests)."""


def execute(job: Job) -> Result:
    """Run one job on the Rust core. ``run.wall_s`` covers the whole call: the core's run
    and the result's conversion here."""
    t0 = time.perf_counter()
    text, cols = _core.simulate(
        job.spec.text,
        scheduler=job.scheduler,
        params=list(job.params),
        seed=job.seed,
        cpus=job.cpus,
        hz=job.hz,
        duration_ns=job.duration_ns,
        trace_path=None if job.trace is None else os.fspath(job.trace),
        check=job.check,
        samples=job.samples,
        samples_path=None if job.samples_path is None else os.fspath(job.samples_path),
        memory_budget=job.memory_budget,
    )
    result = Result(json.loads(text), cols if job.samples and job.samples_path is None else None)
    result.run["wall_s"] = time.perf_counter() - t0
    return result


def execute_on_host(spec: SpecSource, duration_ns: int | None = None,
                    trace: str | os.PathLike[str] | None = None) -> Result:
    """Run ``spec`` on this machine's kernel (the host runner): the same result schema,
    with ``run.engine == "host"`` and the kernel facts in ``run.host``; ``trace``: capture
    its scheduler events into that file (the simulator's ftrace text)."""
    t0 = time.perf_counter()
    text, cols = _core.host_run(spec.text, duration_ns=duration_ns,
                                trace_path=None if trace is None else os.fspath(trace))
    result = Result(json.loads(text), cols)
    result.run["wall_s"] = time.perf_counter() - t0
    return result


def _attempt(job: Job, simulate: SimulateFn) -> Outcome:
    t0 = time.perf_counter()
    try:
        result = simulate(job)
    except Exception as exc:  # kept with its run: one failure must not sink the others
        if os.environ.get("SCHEDLAB_DEBUG"):
            traceback.print_exc()
        return Outcome(job, None, exc, time.perf_counter() - t0)
    return Outcome(job, result, None, time.perf_counter() - t0)


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    on_done: Callable[[Outcome], None] | None = None,
    simulate: SimulateFn | None = None,
) -> list[Outcome]:
    """Run every job on up to ``workers`` threads (default: one per CPU); outcomes in the
    order of ``jobs``. ``on_done`` is called as each run finishes (progress displays)."""
    sim = simulate or execute
    n = max(1, min(len(jobs), workers or os.cpu_count() or 1))
    outcomes: list[Outcome | None] = [None] * len(jobs)
    pool = ThreadPoolExecutor(max_workers=n)
    try:
        futures = {pool.submit(_attempt, job, sim): i for i, job in enumerate(jobs)}
        for fut in as_completed(futures):
            outcome = fut.result()
            outcomes[futures[fut]] = outcome
            if on_done is not None:
                on_done(outcome)
    except BaseException:
        # interrupted: runs not started are dropped, the ones running finish (the core
        # cannot be stopped mid-run)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [o for o in outcomes if o is not None]


def results(outcomes: Sequence[Outcome]) -> list[Result]:
    """The results of runs that must all have succeeded: the first failure, in the order
    of ``outcomes``, is raised as it was raised."""
    for o in outcomes:
        if o.exception is not None:
            raise o.exception
    return [o.result for o in outcomes if o.result is not None]


class Progress:
    """Progress bars on stderr (drawn only on a terminal), one per batch of runs."""

    def __init__(self, transient: bool = True) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        console = Console(stderr=True)
        self._bar = RichProgress(
            TextColumn("[progress.description]{task.description}"), BarColumn(),
            MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=transient,
            disable=not console.is_terminal)

    def __enter__(self) -> Progress:
        self._bar.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bar.stop()

    def batch(self, description: str, total: int) -> Callable[[Outcome], None]:
        """A new bar of ``total`` runs; returns the ``on_done`` callback that advances it."""
        task = self._bar.add_task(description, total=total)
        return lambda _outcome: self._bar.advance(task)


@contextlib.contextmanager
def progress_bar(description: str, total: int) -> Iterator[Callable[[Outcome], None]]:
    """One transient progress bar for ``total`` runs; yields its ``on_done`` callback."""
    with Progress() as progress:
        yield progress.batch(description, total)

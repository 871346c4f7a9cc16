"""The one run loop: simulations in parallel, each failure kept with its run.

``schedlab.simulate``, ``schedlab.compare``, ``schedlab compare``, ``schedlab reproduce``
and sweeps all go through :func:`iter_jobs` (:func:`run_jobs` collects its outcomes;
:func:`execute` is one run). Where the runs go is a :class:`Backend`: :class:`Threads` in
this process by default (the core releases the GIL while it simulates, so threads run
simulations in parallel), or a Dask cluster (:mod:`schedlab.sweep.execute`). Every run is
deterministic whatever the backend and its parallelism.
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
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from schedlab import _core
from schedlab.result import Result

if TYPE_CHECKING:
    from schedlab.api import SpecSource

__all__ = [
    "Backend", "CountingProgress", "Job", "Lost", "Outcome", "Progress", "RecordedFailure",
    "SimulateFn", "Threads",
    "attempt", "execute", "iter_jobs", "progress_bar", "results", "run_jobs",
]

T = TypeVar("T")
R = TypeVar("R")


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
        if isinstance(self.exception, RecordedFailure):
            return str(self.exception)
        return f"{type(self.exception).__name__}: {self.exception}"


class RecordedFailure(Exception):
    """A run's failure read back from where it was recorded (a sweep's dataset): its text
    is the failure's one line as it was first reported."""


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


def attempt(job: Job, simulate: SimulateFn = execute) -> Outcome:
    """Run one job; an exception is kept in the outcome, never raised (one failure must not
    sink the other runs). Only interrupts (``BaseException``) pass through."""
    t0 = time.perf_counter()
    try:
        result = simulate(job)
    except Exception as exc:  # kept with its run: one failure must not sink the others
        if os.environ.get("SCHEDLAB_DEBUG"):
            traceback.print_exc()
        return Outcome(job, None, exc, time.perf_counter() - t0)
    return Outcome(job, result, None, time.perf_counter() - t0)


@dataclass(frozen=True)
class Lost:
    """What a backend yields for a run it lost (its worker died, the cluster went away):
    the run never returned, so :func:`iter_jobs` records it as failed with ``exception``."""

    exception: BaseException


class Backend(Protocol):
    """Where runs execute. ``map_unordered(fn, items)`` calls ``fn(item)`` for every item
    (in this process or elsewhere: ``fn`` and the items are picklable) and yields
    ``(index, value)`` as each call finishes, or ``(index, Lost(exc))`` for a call that
    never returned. Closing the iterator early cancels the calls not yet started."""

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]
                      ) -> Iterator[tuple[int, R | Lost]]: ...


class Threads:
    """Runs in threads of this process, up to ``workers`` at once (default: one per CPU).
    The core releases the GIL while it simulates, so the threads run in parallel."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]
                      ) -> Iterator[tuple[int, R | Lost]]:
        if not items:
            return
        n = max(1, min(len(items), self.workers or os.cpu_count() or 1))
        pool = ThreadPoolExecutor(max_workers=n)
        try:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        except BaseException as exc:
            if not isinstance(exc, GeneratorExit):
                # interrupted (Ctrl-C, SIGTERM): only this thread runs Python's signal
                # handlers, so the runs in the other threads are told to stop at their
                # next check instead of running to their end
                _core.stop_running()
            raise
        finally:
            # runs not started are dropped; closed early, the ones running finish
            pool.shutdown(wait=True, cancel_futures=True)


def _attempt_then(job: Job, simulate: SimulateFn, finish: Callable[[Outcome], R]) -> R:
    return finish(attempt(job, simulate))


def _outcome(o: Outcome) -> Outcome:
    return o


def iter_jobs(
    jobs: Sequence[Job],
    *,
    backend: Backend | None = None,
    simulate: SimulateFn | None = None,
    finish: Callable[[Outcome], Any] = _outcome,
) -> Iterator[tuple[int, Any]]:
    """Run every job on ``backend`` (default :class:`Threads`) and yield ``(index,
    finish(outcome))`` as each run finishes. ``finish`` runs where the run ran (on a
    cluster: on the worker, so that only what it returns travels back); a run the backend
    lost is finished here as a failed outcome naming the loss."""
    task = partial(_attempt_then, simulate=simulate or execute, finish=finish)
    for i, value in (backend or Threads()).map_unordered(task, jobs):
        if isinstance(value, Lost):
            value = finish(Outcome(jobs[i], None, value.exception))
        yield i, value


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    on_done: Callable[[Outcome], None] | None = None,
    simulate: SimulateFn | None = None,
    backend: Backend | None = None,
) -> list[Outcome]:
    """Run every job on ``backend`` (default: up to ``workers`` threads, one per CPU);
    outcomes in the order of ``jobs``. ``on_done`` is called as each run finishes
    (progress displays)."""
    outcomes: list[Outcome | None] = [None] * len(jobs)
    for i, outcome in iter_jobs(jobs, backend=backend or Threads(workers), simulate=simulate):
        outcomes[i] = outcome
        if on_done is not None:
            on_done(outcome)
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


class CountingProgress:
    """One bar for a long batch of runs (a sweep) on stderr, drawn only on a terminal:
    runs done, failed and remaining, and the time left estimated from the runs done in
    this session (runs found done before it started are counted but not timed)."""

    def __init__(self, description: str, total: int, already: int = 0,
                 already_failed: int = 0) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        console = Console(stderr=True)
        self._bar = RichProgress(
            TextColumn("[progress.description]{task.description}"), BarColumn(),
            TextColumn("{task.fields[done]} done, {task.fields[failed]} failed, "
                       "{task.fields[left]} remaining"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, transient=False, disable=not console.is_terminal)
        self.total = total
        self.done = already
        self.failed = already_failed
        # the bar times only this session's runs: its total is what is left to run
        self._task = self._bar.add_task(description, total=max(total - already, 0),
                                        done=self.done, failed=self.failed,
                                        left=total - already)

    def __enter__(self) -> CountingProgress:
        self._bar.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bar.stop()

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        self._bar.update(self._task, advance=1, done=self.done, failed=self.failed,
                         left=self.total - self.done)

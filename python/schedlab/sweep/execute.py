"""Running a sweep: its runs not yet in the dataset go to a backend of the one run loop
(:func:`schedlab.runner.iter_jobs`), and each finished run becomes a row of the dataset.

Backends: :class:`schedlab.runner.Threads` (this process), or Dask (:class:`Dask`): a
``distributed.LocalCluster`` sized to this machine by default, or an existing cluster
given by its scheduler's address (``schedlab sweep --scheduler tcp://host:8786``), a
``distributed.Client`` or any cluster object (a ``dask_jobqueue`` cluster on a batch
system) — the description does not change.

The local cluster has one single-threaded worker process per CPU. The core releases the
GIL while it simulates, so threads would run simulations in parallel too; processes are
chosen because a worker's memory limit (Dask's nanny restarts a worker past it) can only
bound a process, because a run that brings its process down takes only its worker with
it, and because turning a large result into a row (JSON parsing, the metrics) holds the
GIL. Each worker may use the machine's memory divided by the workers, unless
``memory_limit`` says otherwise.

A run is reduced to its row where it ran (:func:`record`): only the metrics, the error,
and the samples (Arrow IPC bytes) or trace text asked for travel back, and the client
writes every file, so workers need no shared file system.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import io
import json
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from schedlab import runner
from schedlab.result import Result
from schedlab.sweep import describe
from schedlab.sweep.describe import Sweep, SweepError
from schedlab.sweep.expand import Point, expand
from schedlab.sweep.store import Store, read

if TYPE_CHECKING:
    import polars as pl

__all__ = ["ClusterUnreachable", "Dask", "SweepError", "SweepRun", "Traced", "coerce",
           "dask_backend", "kept_of", "metrics_of", "plan", "record", "row_result", "run"]

T = TypeVar("T")
R = TypeVar("R")

#: Flush finished rows to a new part after this many rows or seconds, whichever first.
FLUSH_ROWS = 64
FLUSH_S = 5.0


# --- on the worker ---------------------------------------------------------------------


def _worker_trace(name: Path) -> Path:
    return Path(tempfile.gettempdir()) / f"schedlab-sweep-{os.getpid()}-{name.name}"


@dataclass(frozen=True)
class Traced:
    """``simulate`` (:func:`schedlab.runner.execute` by default), with a job's trace (a
    bare file name) written to this machine's temporary directory, for :func:`record` to
    take."""

    simulate: runner.SimulateFn = runner.execute

    def __call__(self, job: runner.Job) -> Result:
        if job.trace is not None:
            job = dataclasses.replace(job, trace=_worker_trace(job.trace))
        return self.simulate(job)


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flat(f"{prefix}.{k}", v, out)
    elif isinstance(value, list):
        out[prefix] = json.dumps(value, sort_keys=True)
    else:
        out[prefix] = value


def metrics_of(result: Result, paths: Sequence[str]) -> dict[str, Any]:
    """The metrics ``paths`` of one result, as the core computed them: a path to an
    object gives every scalar under it (``summary.wakeup_latency_ns.p99``, …), a list is
    kept as JSON text; ``tasks.FIELD`` is a JSON object of task name → value and
    ``cpus.FIELD`` a JSON list by CPU. A path the result does not have is left out (null
    in the dataset)."""
    data = result.json
    out: dict[str, Any] = {}
    for path in paths:
        root, _, rest = path.partition(".")
        if root == "tasks":
            out[path] = json.dumps({str(t.get("name")): t.get(rest) for t in data.get("tasks", [])})
            continue
        if root == "cpus":
            out[path] = json.dumps([c.get(rest) for c in data.get("cpus", [])])
            continue
        value = _at(data, path)
        if value is not None:
            _flat(path, value, out)
    out.pop("run.wall_s", None)  # host time: not a metric of the run
    return out


def _at(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def kept_of(result: Result, paths: Sequence[str]) -> dict[str, Any]:
    """The part of the result object the metrics ``paths`` name, nested as in the result
    (null and absent kept apart, which the flat columns cannot): the ``result`` column,
    which :func:`row_result` reads back."""
    data = result.json
    kept: dict[str, Any] = {}
    for path in paths:
        root, _, rest = path.partition(".")
        if root in ("tasks", "cpus"):
            items = data.get(root, [])
            have = kept.setdefault(root, [{} for _ in items])
            for entry, item in zip(have, items, strict=True):
                if root == "tasks":
                    entry["name"] = item.get("name")
                entry[rest] = item.get(rest)
            continue
        parts = path.split(".")
        src: Any = data
        dst = kept
        for i, part in enumerate(parts):
            if not isinstance(src, Mapping) or part not in src:
                break
            src = src[part]
            if i == len(parts) - 1:
                dst[part] = src
            else:
                dst = dst.setdefault(part, {})
    if isinstance(kept.get("run"), dict):
        kept["run"].pop("wall_s", None)
    return kept


def _samples_bytes(result: Result) -> bytes:
    buf = io.BytesIO()
    result.samples.write_ipc(buf, compression="zstd")
    return buf.getvalue()


def record(outcome: runner.Outcome, metrics: Sequence[str], samples: bool) -> dict[str, Any]:
    """What travels back from a run: status (``ok``; ``failed``, with its error and no
    metrics; ``stopped`` by its memory budget, with the partial result's metrics and the
    reason as its error), error, metrics, timing, kept files."""
    rec: dict[str, Any] = {
        "status": "ok" if outcome.ok else "failed", "error": outcome.error, "metrics": {},
        "wall_s": outcome.wall_s, "worker": f"{socket.gethostname()}:{os.getpid()}",
        "samples": None, "trace": None, "result": None,
    }
    stopped = outcome.result.run.get("stopped") if outcome.result is not None else None
    if stopped:
        # a partial result (its memory budget): kept, but apart from finished runs
        rec["status"], rec["error"] = "stopped", str(stopped)
    trace = outcome.job.trace
    try:
        if outcome.result is not None:
            rec["metrics"] = metrics_of(outcome.result, metrics)
            rec["result"] = json.dumps(kept_of(outcome.result, metrics), sort_keys=True)
            if samples:
                rec["samples"] = _samples_bytes(outcome.result)
            if trace is not None:
                rec["trace"] = _worker_trace(trace).read_bytes()
    finally:
        if trace is not None:
            _worker_trace(trace).unlink(missing_ok=True)
    return rec


# --- Dask --------------------------------------------------------------------------------


class ClusterUnreachable(ConnectionError):
    """The Dask scheduler given cannot be reached."""


def _run_chunk(fn: Callable[[T], R], items: Sequence[T]) -> tuple[float, list[R]]:
    t0 = time.perf_counter()
    out = [fn(item) for item in items]
    return time.perf_counter() - t0, out


class Dask:
    """A :class:`schedlab.runner.Backend` on a ``distributed.Client``. Calls go to the
    cluster in chunks, a few per worker in flight at a time (the scheduler never holds a
    whole large sweep): a chunk is one call at first, then as many as take about
    :attr:`TARGET_S` of a worker's time, judged from the chunks done (tiny runs would
    otherwise cost more in Dask's per-task overhead than in simulation). When a worker
    dies, the calls it held are tried again one by one (:attr:`LOST_RETRIES` times); a call
    that is lost every time is yielded as :class:`Lost`."""

    #: Seconds of work a chunk aims at.
    TARGET_S = 0.25
    MAX_CHUNK = 64
    IN_FLIGHT_PER_WORKER = 4
    LOST_RETRIES = 1

    def __init__(self, client: Any) -> None:
        self.client = client

    def _workers(self) -> int:
        try:
            return max(1, len(self.client.scheduler_info().get("workers", {})))
        except Exception:  # noqa: BLE001 — a cluster that does not say: assume one
            return 1

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]
                      ) -> Iterator[tuple[int, R | runner.Lost]]:
        from distributed import as_completed

        if not items:
            return
        workers = self._workers()
        call = partial(_run_chunk, fn)
        pending: dict[str, tuple[Any, list[int]]] = {}
        lost: dict[int, int] = {}
        next_item = 0
        done_calls, busy_s = 0, 0.0

        def submit() -> Any:
            nonlocal next_item
            per_call = busy_s / done_calls if done_calls >= 2 * workers else None
            size = 1 if not per_call else max(1, min(self.MAX_CHUNK,
                                                     int(self.TARGET_S / max(per_call, 1e-6))))
            # keep every worker busy to the end: no chunk larger than a fair share of what
            # is left
            size = max(1, min(size, (len(items) - next_item) // (2 * workers) or 1))
            idx = list(range(next_item, min(len(items), next_item + size)))
            next_item = idx[-1] + 1
            fut = self.client.submit(call, [items[i] for i in idx], pure=False)
            pending[fut.key] = (fut, idx)
            return fut

        def room() -> bool:
            return next_item < len(items) and len(pending) < workers * self.IN_FLIGHT_PER_WORKER

        def resubmit_alone(i: int) -> Any:
            fut = self.client.submit(call, [items[i]], pure=False)
            pending[fut.key] = (fut, [i])
            return fut

        first = []
        while room():
            first.append(submit())
        ac = as_completed(first)
        try:
            for fut in ac:
                _, idx = pending.pop(fut.key)
                try:
                    seconds, values = fut.result()
                except Exception as e:  # noqa: BLE001 — the cluster lost these runs
                    # a worker died: the run that brought it down, or a run (or a result
                    # not yet fetched) that was on it. Each is tried again alone, up to
                    # LOST_RETRIES times; a run that brings its worker down every time is
                    # lost
                    for i in idx:
                        lost[i] = lost.get(i, 0) + 1
                        if lost[i] <= self.LOST_RETRIES:
                            ac.add(resubmit_alone(i))
                        else:
                            yield i, runner.Lost(e)
                else:
                    done_calls += len(idx)
                    busy_s += seconds
                    for i, v in zip(idx, values, strict=True):
                        yield i, v
                fut.release()
                while room():
                    ac.add(submit())
        finally:
            if pending:
                self.client.cancel([f for f, _ in pending.values()])


def local_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


@contextlib.contextmanager
def dask_backend(scheduler: Any = None, *, workers: int | None = None,
                 memory_limit: int | str | None = None) -> Iterator[Dask]:
    """A Dask backend: on ``scheduler`` (an address, a ``distributed.Client`` or a
    cluster object) or, without one, on a new local cluster of ``workers`` processes
    (default: one per CPU this process may use), each limited to ``memory_limit`` bytes
    (default: the machine's memory divided among them)."""
    import logging

    from distributed import Client, LocalCluster

    if scheduler is not None and hasattr(scheduler, "submit"):
        yield Dask(scheduler)
        return
    if scheduler is not None:
        try:
            client = Client(scheduler)
        except OSError as e:
            raise ClusterUnreachable(f"cannot reach the Dask scheduler at {scheduler} "
                                     f"({e})") from None
        with client:
            yield Dask(client)
        return
    import dask

    with contextlib.ExitStack() as stack:
        # a run is deterministic: one that brought its worker down would bring the next
        # down too, so it is recorded as lost rather than tried on other workers; and a
        # worker holds only the run it is running (none queued behind it), so that its
        # death loses no other run
        stack.enter_context(dask.config.set({"distributed.scheduler.allowed-failures": 0,
                                             "distributed.scheduler.worker-saturation": 1.0}))
        with _sigint_ignored():
            # Ctrl-C reaches every process of the terminal's group: workers started while
            # SIGINT is ignored inherit that and leave the interrupt to the sweep, which
            # stops them, instead of each printing its own traceback
            cluster = stack.enter_context(LocalCluster(
                n_workers=workers or local_workers(), threads_per_worker=1, processes=True,
                memory_limit=memory_limit or "auto", host="127.0.0.1",
                dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR))
        client = stack.enter_context(Client(cluster))
        yield Dask(client)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process for the block (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# --- the sweep ---------------------------------------------------------------------------


@dataclass
class SweepRun:
    """What a sweep did: its runs (``total``), those found in the dataset (``skipped``),
    those run now (``ran``; ``failed`` of them did not finish: failed, or stopped by
    their memory budget), and the dataset."""

    name: str
    out: Path
    total: int
    skipped: int
    ran: int
    failed: int
    keys: list[str]

    def rows(self) -> pl.DataFrame:
        """This sweep's rows of the dataset (a dataset may hold other sweeps' too)."""
        import polars as pl

        df = read(self.out)
        if df.is_empty():
            return df
        order = pl.DataFrame({"key": self.keys, "_order": range(len(self.keys))})
        return df.join(order, on="key").sort("_order").drop("_order")


def coerce(description: Sweep | Mapping[str, Any] | str | os.PathLike[str]) -> Sweep:
    """A :class:`Sweep` from itself, a mapping in the file's shape, or a file."""
    if isinstance(description, Sweep):
        return describe.check(description)
    if isinstance(description, Mapping):
        return describe.from_mapping(description)
    return describe.load(description)


def _axis_value(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, (Mapping, list)) else v


def _axis_types(sweep: Sweep, points: Sequence[Point]) -> dict[str, Callable[[Any], Any]]:
    """Per axis, how its values are stored: as they are when they share one JSON type
    (integers and numbers together as numbers), else as text."""
    out: dict[str, Callable[[Any], Any]] = {}
    for axis in sweep.axes():
        kinds = {type(p.axes[axis]) for p in points if p.axes.get(axis) is not None}
        if kinds <= {int} or kinds <= {bool} or kinds <= {str}:
            out[axis] = _axis_value
        elif kinds <= {int, float}:
            out[axis] = lambda v: None if v is None else float(v)
        else:
            out[axis] = lambda v: None if v is None else (
                v if isinstance(v, str) else json.dumps(v, sort_keys=True))
    return out


def _row(sweep: Sweep, point: Point, rec: Mapping[str, Any], store: Store,
         types: Mapping[str, Callable[[Any], Any]], spec_rel: str) -> dict[str, Any]:
    job = point.job
    row: dict[str, Any] = {"key": point.key, "sweep": sweep.name}
    for axis, conv in types.items():
        if axis in ("scheduler", "seed", "cpus", "hz"):
            continue  # the run's own columns below
        value = point.axes.get(axis)
        if value is None and axis in describe.RUN_AXES:
            value = sweep.base.get(axis)
        row[axis] = conv(value)
    row.update({
        "scheduler": job.scheduler, "seed": job.seed, "cpus": job.cpus, "hz": job.hz,
        "duration_ns": job.duration_ns, "params": json.dumps(dict(job.params), sort_keys=True),
        "spec_sha256": point.spec_sha256, "spec_file": spec_rel,
        "spec_origin": job.spec.origin,
        "status": rec["status"], "error": rec["error"],
    })
    row.update(rec["metrics"])
    row["result"] = rec["result"]
    row["samples_file"] = (store.save_file("samples", f"{point.key}.arrow", rec["samples"])
                           if rec.get("samples") is not None else None)
    row["trace_file"] = (store.save_file("traces", f"{point.key}.txt", rec["trace"])
                         if rec.get("trace") is not None else None)
    row["wall_s"] = rec["wall_s"]
    row["worker"] = rec["worker"]
    row["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return row


def plan(sweep: Sweep) -> list[Point]:
    """The sweep's runs, one per key (two points that are the same run are run once)."""
    seen: set[str] = set()
    out = []
    for p in expand(sweep):
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


def run(
    description: Sweep | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    scheduler: Any = None,
    workers: int | None = None,
    threads: bool = False,
    memory_limit: int | str | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    backend: runner.Backend | None = None,
    flush_rows: int = FLUSH_ROWS,
    flush_s: float = FLUSH_S,
    simulate: runner.SimulateFn | None = None,
    on_row: Callable[[Mapping[str, Any]], None] | None = None,
) -> SweepRun:
    """Run the sweep into the dataset ``out``: every run whose key the dataset does not
    hold yet (with ``retry_failed``, also those recorded as failed), rows appended as runs
    finish. Interrupted (Ctrl-C) or killed, it keeps every row already written; run it
    again to resume.

    Where runs go: ``backend`` if given; else threads of this process with ``threads``
    (``workers`` of them); else Dask — on ``scheduler`` (an address, a Client or a
    cluster) or a local cluster of ``workers`` processes limited to ``memory_limit``
    bytes each. ``simulate`` replaces the core (tests); ``on_row(row)`` is called as each
    row is added."""
    sweep = coerce(description)
    points = plan(sweep)
    types = _axis_types(sweep, points)
    with Store(out) as store:
        store.write_description(sweep.to_mapping())
        done = store.done(failed_too=not retry_failed)
        todo = [p for p in points if p.key not in done]
        spec_rel = {p.key: store.save_spec(p.spec_sha256, p.job.spec.text) for p in todo}
        jobs = [dataclasses.replace(p.job, trace=Path(f"{p.key}.txt")) if sweep.trace
                else p.job for p in todo]
        finish = partial(record, metrics=sweep.metrics, samples=sweep.samples)
        failed = 0
        with contextlib.ExitStack() as stack:
            if not todo:
                backend = runner.Threads(1)  # nothing to run: no cluster to start
            if backend is None:
                backend = (runner.Threads(workers) if threads else stack.enter_context(
                    dask_backend(scheduler, workers=workers, memory_limit=memory_limit)))
            bar = stack.enter_context(runner.CountingProgress(
                f"sweep {sweep.name}", len(points), already=len(points) - len(todo))
                if progress else contextlib.nullcontext())
            results = runner.iter_jobs(jobs, backend=backend,
                                       simulate=Traced(simulate or runner.execute),
                                       finish=finish)
            last = time.monotonic()
            try:
                for i, rec in results:
                    p = todo[i]
                    row = _row(sweep, p, rec, store, types, spec_rel[p.key])
                    store.add(row)
                    if on_row is not None:
                        on_row(row)
                    failed += rec["status"] != "ok"
                    if bar is not None:
                        bar.advance(rec["status"] == "ok")
                    if store.pending >= flush_rows or time.monotonic() - last >= flush_s:
                        store.flush()
                        last = time.monotonic()
            finally:
                results.close()  # runs not started are dropped
                store.flush()  # what finished is kept, interrupted or not
        return SweepRun(sweep.name, Path(out), len(points), len(points) - len(todo), len(todo),
                        failed, [p.key for p in points])


def row_result(row: Mapping[str, Any]) -> Result | None:
    """What a row kept of its run's result (its ``result`` column: the objects its
    metrics name, as the core wrote them) as a :class:`~schedlab.result.Result`, with the
    row's identity in ``run``; None for a failed run."""
    if row.get("status") != "ok" or row.get("result") is None:
        return None
    data = json.loads(row["result"])
    run_ = data.setdefault("run", {})
    run_.setdefault("spec_sha256", row.get("spec_sha256"))
    run_.setdefault("scheduler", row.get("scheduler"))
    run_.setdefault("seed", row.get("seed"))
    run_["wall_s"] = row.get("wall_s")
    data.setdefault("summary", {})
    data.setdefault("tasks", [])
    return Result(data)

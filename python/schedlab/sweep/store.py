"""A sweep's dataset on disk: one row per run in Parquet part files, with the files rows
point to.

Layout of a dataset directory::

    sweep.json                 the description last run into it
    specs/<sha256>.json        each spec's exact bytes (its name is the core's sha256 of them)
    parts/part-N-PID.parquet   rows, appended as runs finish (a part holds one or more rows;
                               N counts the parts in the order they were written)
    samples/<key>.arrow        a run's per-activation samples (Arrow IPC), when kept
    traces/<key>.txt           a run's ftrace text, when kept

Every file is written under a temporary name (``.NAME.tmp``), flushed to disk and renamed
into place, then its directory is flushed: a crash leaves either the whole file or none,
and the temporary leftovers of a crashed sweep are removed when the next one opens the
dataset. A row's spec, samples and trace are in place before its part is. One sweep at a
time writes to a dataset (an advisory lock on ``.lock``). Read with :func:`read` (parts
in the order written; a key written twice — a failed run retried — keeps its last row).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = ["TIMING_COLUMNS", "DatasetBusy", "Store", "read"]

#: Columns that differ from one execution of the same run to another (host time, which
#: worker, when): left out when two datasets are compared.
TIMING_COLUMNS: tuple[str, ...] = ("wall_s", "worker", "finished_at")

#: Test hook: ``part:K`` kills the process (SIGKILL) right after its K-th part is in place,
#: ``write:K`` in the middle of writing its K-th part (written, not yet renamed).
_KILL_ENV = "SCHEDLAB_SWEEP_TEST_KILL"


class DatasetBusy(OSError):
    """Another sweep holds the dataset's lock."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(final: Path, write: Any) -> None:
    """``write(tmp)`` then flush, rename onto ``final`` and flush the directory."""
    tmp = final.with_name(f".{final.name}.tmp")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(final.parent)


class Store:
    """An open dataset directory (a context manager holding its lock)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.parts = self.root / "parts"
        self._lock_fd: int | None = None
        self._pending: list[dict[str, Any]] = []
        self._seq = 0
        self._written = 0
        self._kill = os.environ.get(_KILL_ENV, "")

    # -- lock ---------------------------------------------------------------------------
    def __enter__(self) -> Store:
        for d in (self.root, self.parts, self.root / "specs"):
            d.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise DatasetBusy(errno.EBUSY, "another sweep is writing this dataset"
                                  + (f" (process {holder})" if holder else ""),
                                  str(self.root)) from None
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd
        self._remove_leftovers()
        # parts are numbered in the order written, across sweeps (not by the clock)
        numbers = [int(p.name.split("-")[1]) for p in _parts(self.root)]
        self._seq = max(numbers, default=0)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def _remove_leftovers(self) -> None:
        """Temporary files of a sweep that crashed while writing them."""
        for d in ("parts", "specs", "samples", "traces"):
            for tmp in (self.root / d).glob(".*.tmp"):
                tmp.unlink(missing_ok=True)

    # -- what is there ------------------------------------------------------------------
    def done(self, *, failed_too: bool = True) -> set[str]:
        """Keys of the runs the dataset holds (with ``failed_too=False``, of those that
        succeeded)."""
        df = read(self.root, columns=["key", "status"])
        if df.is_empty():
            return set()
        if not failed_too:
            df = df.filter(df["status"] == "ok")
        return set(df["key"].to_list())

    # -- writing ------------------------------------------------------------------------
    def write_description(self, doc: Mapping[str, Any]) -> None:
        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
        atomic_write(self.root / "sweep.json", lambda p: p.write_text(text, encoding="utf-8"))

    def save_spec(self, sha256: str, text: str) -> str:
        """``specs/<sha256>.json`` with exactly ``text``'s bytes; its relative path."""
        rel = f"specs/{sha256}.json"
        final = self.root / rel
        if not final.exists():
            atomic_write(final, lambda p: p.write_bytes(text.encode("utf-8")))
        return rel

    def save_file(self, kind: str, name: str, data: bytes) -> str:
        """``<kind>/<name>`` (samples, traces) with ``data``; its relative path."""
        d = self.root / kind
        d.mkdir(exist_ok=True)
        atomic_write(d / name, lambda p: p.write_bytes(data))
        return f"{kind}/{name}"

    def add(self, row: dict[str, Any]) -> None:
        self._pending.append(row)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        """Write the rows added since the last flush as one part."""
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        df = frame(rows)
        self._seq += 1
        name = f"part-{self._seq:09d}-{os.getpid()}.parquet"
        final = self.parts / name
        count = self._written + 1

        def write(tmp: Path) -> None:
            df.write_parquet(tmp)
            if self._kill == f"write:{count}":
                os.kill(os.getpid(), signal.SIGKILL)

        atomic_write(final, write)
        self._written = count
        if self._kill == f"part:{count}":
            os.kill(os.getpid(), signal.SIGKILL)


def frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows as a DataFrame, each column's type inferred over every row (an integer metric
    that is a float in another row becomes Float64)."""
    import polars as pl

    return pl.DataFrame(list(rows), infer_schema_length=None, strict=False)


def _parts(root: Path) -> list[Path]:
    d = root / "parts"
    return sorted(p for p in d.glob("part-*.parquet")) if d.is_dir() else []


def read(root: str | os.PathLike[str], columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Every row of the dataset at ``root`` (empty if it holds none), in the order written;
    a key written twice keeps its last row."""
    import polars as pl

    frames = []
    for p in _parts(Path(root)):
        if columns is None:
            frames.append(pl.read_parquet(p))
        else:
            have = pl.read_parquet_schema(p)
            frames.append(pl.read_parquet(p, columns=[c for c in columns if c in have]))
    if not frames:
        return pl.DataFrame({c: [] for c in (columns or ["key"])}, schema={
            c: pl.String for c in (columns or ["key"])})
    df = pl.concat(frames, how="diagonal_relaxed")
    return df.unique(subset="key", keep="last", maintain_order=True)


@contextlib.contextmanager
def opened(root: str | os.PathLike[str]) -> Iterator[Store]:
    with Store(root) as store:
        yield store

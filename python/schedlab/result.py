"""A run's result (docs/results.md) as Python objects and polars DataFrames.

The Rust core computes every statistic; :class:`Result` only reshapes its JSON object and
the per-activation sample columns into tables.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # polars is imported on first use: the CLI starts faster without it
    import polars as pl

__all__ = ["SAMPLE_KINDS", "STAT_KEYS", "Result", "fmt_ns", "replace_named", "write_named"]

SAMPLE_KINDS: dict[int, str] = {0: "timer", 1: "sleep", 2: "wakeup"}
"""The ``kind`` column of the samples: what released the activation."""

STAT_KEYS: tuple[str, ...] = (
    "count", "mean", "min", "max", "stddev", "p50", "p90", "p99", "p999",
)
"""The keys of a STATS object, in order."""

_SAMPLE_DTYPES: dict[str, str] = {
    "tid": "UInt32",
    "release_ns": "UInt64",
    "wake_ns": "UInt64",
    "start_ns": "Int64",
    "end_ns": "Int64",
    "kind": "UInt8",
}
"""The sample columns and their polars types (docs/results.md)."""


def _sample_frame(cols: Mapping[str, bytes | Sequence[int]]) -> pl.DataFrame:
    """Sample columns as a DataFrame: the core's (native-endian arrays in ``bytes``) or
    plain sequences of integers."""
    import numpy as np
    import polars as pl

    def column(k: str, t: str) -> pl.Series:
        v = cols.get(k, b"")
        values = np.frombuffer(v, dtype=t.lower()) if isinstance(v, bytes) else v
        return pl.Series(k, values, dtype=getattr(pl, t))

    return pl.DataFrame([column(k, t) for k, t in _SAMPLE_DTYPES.items()])


def _sample_count(cols: Mapping[str, bytes | Sequence[int]]) -> int:
    """Samples in sample columns (the core's ``tid`` is 4 bytes a sample)."""
    tid = cols.get("tid", b"")
    return len(tid) // 4 if isinstance(tid, bytes) else len(tid)


def fmt_ns(ns: float | int | None, digits: int = 3) -> str:
    """A duration in nanoseconds as short text with a unit: ``"12.3 µs"``, ``"1.50 s"``."""
    if ns is None:
        return "–"
    a = abs(ns)
    if a < 1e3:
        return f"{ns:.0f} ns" if isinstance(ns, float) else f"{ns} ns"
    scale, unit = (1e9, "s") if a >= 1e9 else (1e6, "ms") if a >= 1e6 else (1e3, "µs")
    v = ns / scale
    decimals = max(0, digits - len(str(int(abs(v)))))
    return f"{v:.{decimals}f} {unit}"


def _flatten(prefix: str, obj: Mapping[str, Any], out: dict[str, Any]) -> None:
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            _flatten(f"{key}_", v, out)
        else:
            out[key] = v


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    import polars as pl

    flat = []
    for r in rows:
        d: dict[str, Any] = {}
        _flatten("", r, d)
        flat.append(d)
    df = pl.DataFrame(flat, infer_schema_length=None)
    # Columns that are null in every row (e.g. stats with count 0) get a numeric type.
    nulls = [c for c, t in df.schema.items() if t == pl.Null]
    return df.with_columns(pl.col(nulls).cast(pl.Float64)) if nulls else df


class Result:
    """One run: ``.json`` (the whole docs/results.md object), ``.run``, ``.summary``, and the
    DataFrames ``.tasks`` (one row per task, STATS flattened as ``wakeup_latency_ns_p99``
    etc.), ``.samples`` (one row per activation) and ``.cpus``."""

    def __init__(self, data: Mapping[str, Any],
                 samples: Mapping[str, bytes | Sequence[int]] | None = None):
        self._json = dict(data)
        self._sample_cols = samples
        self._sample_file: Path | None = None
        self._tasks: pl.DataFrame | None = None
        self._samples: pl.DataFrame | None = None
        self._cpus: pl.DataFrame | None = None

    # --- the JSON object -------------------------------------------------------------
    @property
    def json(self) -> dict[str, Any]:
        """The result object exactly as the engine produced it."""
        return self._json

    @property
    def run(self) -> dict[str, Any]:
        """Run metadata: engine, scheduler, params, seed, spec_sha256, sim_ns, wall_s, …"""
        return self._json.get("run", {})

    @property
    def summary(self) -> dict[str, Any]:
        """``makespan_ns``, ``headline`` (``{"name", "value", "unit"}`` or None), ``marks``."""
        return self._json.get("summary", {})

    @property
    def scheduler(self) -> str:
        return str(self.run.get("scheduler", "?"))

    @property
    def headline(self) -> dict[str, Any] | None:
        return self.summary.get("headline")

    @property
    def makespan_ns(self) -> int | None:
        return self.summary.get("makespan_ns")

    @property
    def totals(self) -> dict[str, int]:
        """Counters summed over the tasks (the core's ``summary.totals``): ``switches``
        (voluntary + involuntary), ``migrations``, ``deadline_misses`` and ``activations``."""
        return dict(self.summary.get("totals", {}))

    def read_samples_from(self, path: str | os.PathLike[str]) -> None:
        """Read the streamed samples from ``path`` rather than the file the result names
        (a file that was moved since the run)."""
        self._sample_file = Path(path)
        self._samples = None

    def to_json(self, indent: int | None = 2) -> str:
        """The result object as JSON text."""
        return json.dumps(self._json, indent=indent, ensure_ascii=False)

    # --- tables ----------------------------------------------------------------------
    @property
    def tasks(self) -> pl.DataFrame:
        """One row per task; nested STATS flattened to ``<metric>_<stat>`` and
        ``<metric>_filtered6sigma_<stat>`` columns."""
        if self._tasks is None:
            self._tasks = _frame(self._json.get("tasks", []))
        return self._tasks

    @property
    def cpus(self) -> pl.DataFrame:
        """One row per CPU: ``cpu``, ``busy_ns``, ``idle_ns``, ``overhead_ns``."""
        if self._cpus is None:
            self._cpus = _frame(self._json.get("cpus", []))
        return self._cpus

    @property
    def samples(self) -> pl.DataFrame:
        """One row per activation: ``tid``, ``task`` (name), ``release_ns``, ``wake_ns``,
        ``start_ns`` (-1 if the task never ran), ``end_ns`` (-1 if it had not ended),
        ``kind`` (see :data:`SAMPLE_KINDS`), and the derived ``wakeup_latency_ns``
        (start − release, null if it never ran) and ``response_ns`` (end − release, null if
        not ended). Read from the run's Arrow IPC file when the samples were streamed to
        one; empty when only histograms were kept."""
        if self._samples is None:
            import polars as pl

            info = self.run.get("samples") or {}
            path = self._sample_file or info.get("path")
            if info.get("mode") == "file" and path:
                base = pl.read_ipc(path)
            else:
                base = _sample_frame(self._sample_cols or {})
            self._samples = self._derive(base)
        return self._samples

    def _derive(self, base: pl.DataFrame) -> pl.DataFrame:
        import polars as pl

        names: dict[int, str] = {}
        for t in self._json.get("tasks", []):
            names.setdefault(int(t["tid"]), str(t["name"]))
        rel = pl.col("release_ns").cast(pl.Int64)
        df = base.with_columns(
            pl.col("tid")
            .replace_strict(list(names), list(names.values()), default=None,
                            return_dtype=pl.String)
            .alias("task"),
            pl.when(pl.col("start_ns") >= 0)
            .then(pl.col("start_ns") - rel)
            .otherwise(None)
            .alias("wakeup_latency_ns"),
            pl.when(pl.col("end_ns") >= 0)
            .then(pl.col("end_ns") - rel)
            .otherwise(None)
            .alias("response_ns"),
        )
        order = ["tid", "task", *[c for c in _SAMPLE_DTYPES if c != "tid"]]
        return df.select(*order, "wakeup_latency_ns", "response_ns")

    # --- files -----------------------------------------------------------------------
    PARQUET_FILES: tuple[str, ...] = (
        "tasks.parquet", "samples.parquet", "cpus.parquet", "result.json")
    """The files :meth:`to_parquet` writes into its directory."""

    def to_parquet(self, directory: str | os.PathLike[str], *,
                   stage: Callable[[Path], Path] | None = None) -> Path:
        """Write :attr:`PARQUET_FILES` (``tasks``, ``samples``, ``cpus`` tables and
        ``result.json``) into ``directory`` (created if needed). Each file is written to a
        temporary name and renamed into place only once all are written, so a failure
        leaves what was there before; a failure is an :class:`OSError` naming the file.
        With ``stage`` (final path → temporary path), the caller chooses the temporary
        names and renames them itself, with its other outputs. Returns the directory."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        own: list[tuple[Path, Path]] = []

        def staged(final: Path) -> Path:
            if stage is not None:
                return stage(final)
            tmp = Path(_tmp_path(out, final.name))
            own.append((tmp, final))
            return tmp

        frames = {"tasks": self.tasks, "samples": self.samples, "cpus": self.cpus}
        try:
            for name, df in frames.items():
                final = out / f"{name}.parquet"
                write_named(final, staged(final), df.write_parquet)
            final = out / "result.json"
            write_named(final, staged(final),
                        lambda p: p.write_text(self.to_json() + "\n", encoding="utf-8"))
        except BaseException:
            for tmp, _ in own:
                tmp.unlink(missing_ok=True)
            raise
        for tmp, final in own:
            replace_named(tmp, final)
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Read a directory written by :meth:`to_parquet`."""
        import polars as pl

        d = Path(directory)
        data = json.loads((d / "result.json").read_text(encoding="utf-8"))
        samples = pl.read_parquet(d / "samples.parquet")
        # In the core's form: each column as native-endian bytes.
        cols = {k: samples.get_column(k).cast(getattr(pl, t)).to_numpy().tobytes()
                for k, t in _SAMPLE_DTYPES.items()}
        return cls(data, cols)

    # --- display ---------------------------------------------------------------------
    def __repr__(self) -> str:
        run = self.run
        parts = [
            f"scheduler={self.scheduler!r}",
            f"engine={run.get('engine', '?')}",
            f"seed={run.get('seed')}",
            f"cpus={run.get('cpus')}",
            f"tasks={len(self._json.get('tasks', []))}",
        ]
        if self._sample_cols is not None:
            parts.append(f"samples={_sample_count(self._sample_cols)}")
        h = self.headline
        if h:
            parts.append(f"{h.get('name')}={h.get('value')}{h.get('unit') or ''}")
        if self.makespan_ns is not None:
            parts.append(f"makespan={fmt_ns(self.makespan_ns)}")
        if run.get("sim_ns") is not None:
            parts.append(f"sim={fmt_ns(run['sim_ns'])}")
        return f"Result({', '.join(parts)})"


_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def write_named(final: Path, tmp: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)``, the staged copy of ``final``; any failure is raised as an
    :class:`OSError` naming ``final`` (the file the user asked for, not the temporary one),
    with the system's reason when there is one (polars reports it as ``(os error N)``)."""
    try:
        write(tmp)
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), str(final)) from None
    except Exception as e:  # noqa: BLE001 — a writer library's own error type
        text = " ".join(str(e).split())
        m = _OS_ERROR.search(text)
        if m:
            code = int(m.group(1))
            raise OSError(code, os.strerror(code), str(final)) from None
        raise OSError(errno.EIO, f"cannot write it ({text})", str(final)) from None


def replace_named(tmp: Path | str, final: Path | str) -> None:
    """Rename the staged ``tmp`` onto ``final``; a failure names ``final``."""
    try:
        os.replace(tmp, final)
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), str(final)) from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()


def _tmp_path(directory: str | os.PathLike[str], name: str) -> str:
    """A new empty file beside ``directory/name`` to be renamed onto it, with the mode a
    plain ``open()`` would have given it (mkstemp's is 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
    finally:
        os.close(fd)
    return tmp

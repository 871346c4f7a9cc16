"""Sweeps: a grid of runs described in a few lines (:mod:`.describe`), expanded into runs
with resume keys (:mod:`.expand`), run on threads or a Dask cluster
(:mod:`.execute`), stored as a Parquet dataset that a crashed sweep resumes
(:mod:`.store`), and analysed with polars (:mod:`.analysis`) and plots (:mod:`.plots`).
docs/sweeps.md describes the description's grammar and the dataset's columns.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from schedlab.sweep.describe import DEFAULT_METRICS, Filter, Sweep, SweepError, from_mapping, load
from schedlab.sweep.execute import SweepRun, coerce, plan, run
from schedlab.sweep.expand import Point, expand, run_key
from schedlab.sweep.store import TIMING_COLUMNS, DatasetBusy, read

__all__ = [
    "DEFAULT_METRICS", "TIMING_COLUMNS", "DatasetBusy", "Filter", "Point", "Sweep",
    "SweepError", "SweepRun", "coerce", "expand", "from_mapping", "load", "plan", "read",
    "run", "run_key",
]


class _SweepModule(types.ModuleType):
    """``schedlab.sweep`` is this package and, called, :func:`schedlab.api.sweep`."""

    def __call__(self, description: Any, out: Any, **options: Any) -> SweepRun:
        from schedlab.api import sweep

        return sweep(description, out, **options)


sys.modules[__name__].__class__ = _SweepModule

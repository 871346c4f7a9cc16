"""The usual questions of a sweep's dataset, as polars expressions and small functions
over its rows (:func:`schedlab.sweep.read`).

Every value aggregated here is a per-run figure the core computed (a headline, a summary
statistic); what this module adds is how runs are pooled over seeds: a mean with a
Student-t confidence interval, the best configuration per workload (ties reported as
ties), and the significance of a difference between two settings of an axis over paired
runs (paired t-test and Wilcoxon signed-rank test, with strict wins and ties counted).
Failed runs never enter a statistic; they are counted beside it (``failed``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = [
    "Comparison", "axis_columns", "best", "ci_half_width", "compare", "metric_by", "ok_runs",
]

#: Columns of a row that are neither axes nor metrics.
FIXED_COLUMNS = frozenset({
    "key", "sweep", "params", "spec_sha256", "spec_file", "spec_origin", "status", "error",
    "samples_file", "trace_file", "result", "wall_s", "worker", "finished_at"})
METRIC_ROOTS = ("summary.", "run.", "tasks.", "cpus.")


def axis_columns(df: pl.DataFrame) -> list[str]:
    """The columns that say which run a row is: the sweep's axes and the run's settings
    (scheduler, seed, cpus, hz, duration_ns)."""
    return [c for c in df.columns if c not in FIXED_COLUMNS and not c.startswith(METRIC_ROOTS)]


def ok_runs() -> pl.Expr:
    """The rows of runs that succeeded."""
    return pl.col("status") == "ok"


def ci_half_width(std: str = "std", n: str = "n", level: float = 0.95) -> pl.Expr:
    """Half the width of the Student-t confidence interval of a mean: t(level, n − 1) ·
    std / √n (null for fewer than two runs)."""
    from scipy import stats

    q = (1.0 + level) / 2.0

    def t_quantile(s: pl.Series) -> pl.Series:
        dof = s.cast(pl.Float64).to_numpy() - 1.0
        out = [float(stats.t.ppf(q, d)) if d >= 1 else None for d in dof]
        return pl.Series(out, dtype=pl.Float64)

    t = pl.col(n).map_batches(t_quantile, return_dtype=pl.Float64)
    return t * pl.col(std) / pl.col(n).cast(pl.Float64).sqrt()


def metric_by(df: pl.DataFrame, metric: str, by: Sequence[str], level: float = 0.95
              ) -> pl.DataFrame:
    """``metric`` by the axes ``by``, pooled over every other axis (the seeds): per group
    ``n`` runs that succeeded, ``failed`` runs, ``mean``, ``std`` (sample), ``ci_low`` and
    ``ci_high`` (the ``level`` confidence interval of the mean), sorted by ``by``."""
    ok = ok_runs()
    value = pl.col(metric).cast(pl.Float64)
    out = (df.group_by(list(by), maintain_order=True)
           .agg(value.filter(ok & value.is_not_null()).count().alias("n"),
                (~ok).sum().alias("failed"),
                value.filter(ok).mean().alias("mean"),
                value.filter(ok).std(ddof=1).alias("std"))
           .with_columns(ci_half_width(level=level).alias("_half"))
           .with_columns((pl.col("mean") - pl.col("_half")).alias("ci_low"),
                         (pl.col("mean") + pl.col("_half")).alias("ci_high"))
           .drop("_half"))
    return out.sort(list(by))


def best(df: pl.DataFrame, metric: str, per: Sequence[str], among: Sequence[str],
         minimize: bool = True, level: float = 0.95) -> pl.DataFrame:
    """Per workload (the axes ``per``), the configuration (the axes ``among``) with the best
    mean ``metric`` over the remaining axes (seeds): its row of :func:`metric_by`, and
    ``tied``, how many configurations share that mean (1: a strict best)."""
    stats = metric_by(df, metric, [*per, *among], level).filter(pl.col("n") > 0)
    pick = pl.col("mean").min() if minimize else pl.col("mean").max()
    with_best = stats.with_columns(pick.over(list(per)).alias("_best") if per
                                   else pick.alias("_best"))
    winners = with_best.filter(pl.col("mean") == pl.col("_best"))
    tied = winners.group_by(list(per) or pl.lit(0), maintain_order=True).agg(
        pl.len().alias("tied"))
    if per:
        winners = winners.join(tied, on=list(per))
    else:
        winners = winners.with_columns(pl.lit(len(winners), dtype=pl.UInt32).alias("tied"))
    return (winners.unique(subset=list(per) or None, keep="first", maintain_order=True)
            .drop("_best").sort(list(per) or list(among)))


@dataclass(frozen=True)
class Comparison:
    """``b`` against ``a`` on runs paired by every other axis: ``diff`` = mean of
    (b − a), its confidence interval, the paired t-test's and the Wilcoxon signed-rank
    test's two-sided p-values, and strict wins (lower is better when ``minimize``) and
    ties; ``unpaired``: runs of either side with no partner (left out)."""

    metric: str
    axis: str
    a: Any
    b: Any
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_ttest: float | None
    p_wilcoxon: float | None
    wins_a: int
    wins_b: int
    ties: int
    unpaired: int

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether both tests reject "no difference" at ``alpha``."""
        return (self.p_ttest is not None and self.p_wilcoxon is not None
                and self.p_ttest < alpha and self.p_wilcoxon < alpha)


def compare(df: pl.DataFrame, metric: str, axis: str, a: Any, b: Any,
            pair_by: Sequence[str] | None = None, minimize: bool = True,
            level: float = 0.95) -> Comparison:
    """Whether ``axis`` = ``b`` differs from ``axis`` = ``a`` in ``metric``: runs that
    succeeded are paired on ``pair_by`` (default: every other axis, seeds included)."""
    from scipy import stats

    keys = list(pair_by) if pair_by is not None else [
        c for c in axis_columns(df) if c not in (axis, metric)]
    ok = df.filter(ok_runs() & pl.col(metric).is_not_null())
    side_a = ok.filter(pl.col(axis) == a).select(*keys, pl.col(metric).cast(pl.Float64)
                                                 .alias("_a"))
    side_b = ok.filter(pl.col(axis) == b).select(*keys, pl.col(metric).cast(pl.Float64)
                                                 .alias("_b"))
    pairs = side_a.join(side_b, on=keys, how="inner", nulls_equal=True)
    n = len(pairs)
    unpaired = len(side_a) + len(side_b) - 2 * n
    xa, xb = pairs["_a"].to_list(), pairs["_b"].to_list()
    d = [y - x for x, y in zip(xa, xb, strict=True)]
    better_b = sum((y < x) if minimize else (y > x) for x, y in zip(xa, xb, strict=True))
    worse_b = sum((y > x) if minimize else (y < x) for x, y in zip(xa, xb, strict=True))
    ties = n - better_b - worse_b
    diff = _mean(d)
    ci_low = ci_high = p_t = p_w = None
    if n >= 2 and diff is not None:
        sd = math.sqrt(sum((x - diff) ** 2 for x in d) / (n - 1))
        half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
        ci_low, ci_high = diff - half, diff + half
        if sd > 0:
            p_t = float(stats.ttest_rel(xb, xa).pvalue)
        elif diff == 0:
            p_t = 1.0
        else:
            p_t = 0.0
        if any(x != 0 for x in d):
            p_w = float(stats.wilcoxon(xb, xa).pvalue)
        else:
            p_w = 1.0
    return Comparison(metric, axis, a, b, n, _mean(xa), _mean(xb), diff, ci_low, ci_high, p_t,
                      p_w, wins_a=worse_b, wins_b=better_b, ties=ties, unpaired=unpaired)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None

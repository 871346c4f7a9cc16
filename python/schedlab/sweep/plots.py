"""Plots of a sweep's dataset: a heat map of a metric over two axes, and lines over one
axis with confidence bands over the seeds (:func:`schedlab.sweep.analysis.metric_by`).
Both return a matplotlib Figure; :func:`schedlab.plots.save` writes PNG and SVG."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from schedlab import plots
from schedlab.sweep.analysis import metric_by

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["heatmap", "lines"]


def heatmap(df: pl.DataFrame, metric: str, x: str, y: str, *, title: str | None = None,
            fmt: str = "{:.3g}") -> Figure:
    """The mean ``metric`` (over every other axis, the seeds) in each cell of ``x`` × ``y``,
    written in the cell; a cell without a successful run is blank."""
    stats = metric_by(df, metric, [y, x])
    xs = sorted(stats[x].unique().to_list(), key=_order)
    ys = sorted(stats[y].unique().to_list(), key=_order)
    grid = [[float("nan")] * len(xs) for _ in ys]
    for row in stats.iter_rows(named=True):
        if row["mean"] is not None:
            grid[ys.index(row[y])][xs.index(row[x])] = row["mean"]
    plots.setup()
    fig, ax = plots.plt.subplots(figsize=plots.FIGSIZE)
    im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
    ax.grid(False)
    lo, hi = im.get_clim()
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    for i, row_values in enumerate(grid):
        for j, v in enumerate(row_values):
            if v == v:  # not NaN
                bright = hi > lo and (v - lo) / (hi - lo) > 0.6  # viridis is light there
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=8,
                        color="black" if bright else "white")
    fig.colorbar(im, ax=ax, label=metric)
    ax.set_title(title or f"mean {metric}", fontsize=10)
    fig.tight_layout()
    return fig


def lines(df: pl.DataFrame, metric: str, x: str, hue: str | None = None, *,
          level: float = 0.95, title: str | None = None) -> Figure:
    """The mean ``metric`` against ``x``, one line per value of ``hue``, with a band for the
    ``level`` confidence interval over the remaining axes (the seeds)."""
    by: Sequence[str] = [hue, x] if hue else [x]
    stats = metric_by(df, metric, by, level).filter(pl.col("n") > 0)
    plots.setup()
    fig, ax = plots.plt.subplots(figsize=plots.FIGSIZE)
    groups = sorted(stats[hue].unique().to_list(), key=_order) if hue else [None]
    for i, g in enumerate(groups):
        part = stats.filter(pl.col(hue) == g) if hue else stats
        part = part.sort(x)
        xs = part[x].to_list()
        colour = plots.colour(i)
        ax.plot(xs, part["mean"].to_list(), marker="o", color=colour,
                label=str(g) if hue else None)
        lo = [v if v is not None else m for v, m in zip(part["ci_low"].to_list(),
                                                         part["mean"].to_list(), strict=True)]
        hi = [v if v is not None else m for v, m in zip(part["ci_high"].to_list(),
                                                         part["mean"].to_list(), strict=True)]
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.2, linewidth=0)
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if hue:
        ax.legend(title=hue, fontsize=8)
    ax.set_title(title or f"{metric}: mean, {level:.0%} confidence band", fontsize=10)
    fig.tight_layout()
    return fig


def _order(v: object) -> tuple[int, object]:
    return (0, v) if isinstance(v, (int, float)) else (1, str(v))

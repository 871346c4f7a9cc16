"""Plots for reports and notebooks (matplotlib, Agg backend, deterministic output).

Every figure is written as PNG and SVG side by side with :func:`save`. Output is made
reproducible: the Agg backend, fixed figure sizes and DPI, a fixed ``svg.hashsalt`` (SVG
element ids), no creation dates or software versions in the file metadata, and a fixed
font family. Rerunning the same plot on the same matplotlib gives byte-identical SVG.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

#: Width and height of every report figure, inches.
FIGSIZE: tuple[float, float] = (8.0, 4.5)
DPI = 110

_RC: dict[str, Any] = {
    "svg.hashsalt": "schedlab",
    "svg.fonttype": "path",  # glyphs as paths: no dependence on the viewer's fonts
    "font.family": "DejaVu Sans",
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": True,
}

# Metadata that would otherwise embed dates or library versions.
_SVG_META: dict[str, Any] = {"Date": None, "Creator": None}
_PNG_META: dict[str, Any] = {"Software": None}

#: A fixed palette so that a policy keeps its colour across plots of one report.
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)


def setup() -> None:
    """Apply the deterministic style (called by every plotting function)."""
    matplotlib.rcParams.update(_RC)


def colour(index: int) -> str:
    """The palette colour for the ``index``-th series."""
    return PALETTE[index % len(PALETTE)]


def save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Write ``fig`` as ``<stem>.png`` and ``<stem>.svg`` into ``out_dir``; close it.

    Returns the two paths (PNG first).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{stem}.png"
    svg = out_dir / f"{stem}.svg"
    try:
        with matplotlib.rc_context(_RC):
            for path, fmt, meta in ((png, "png", _PNG_META), (svg, "svg", _SVG_META)):
                try:
                    fig.savefig(path, format=fmt, metadata=meta)
                except OSError as e:  # a failed write names its file
                    raise OSError(e.errno, e.strerror or str(e), str(path)) from None
    finally:
        plt.close(fig)
    return [png, svg]


def _ecdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    xs = sorted(float(v) for v in values)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def latency_cdf(
    panels: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str = "wake-up latency (µs)",
    logx: bool = True,
    tail: bool = True,
) -> Figure:
    """Empirical CDFs, one column per key of ``panels`` (e.g. "RT waiters", "non-RT").

    ``panels[panel][series]`` is a list of samples (the unit of ``xlabel``); with ``logx``
    the x axis is logarithmic above 1 and linear below (so zeros show). With ``tail``
    a second row shows the complementary CDF on log-log axes, where the rare outliers
    that dominate means and maxima are visible. Series keep their colour across panels
    (by first appearance); empty series are skipped and an empty panel says so.
    """
    setup()
    names: list[str] = []
    for series in panels.values():
        for name in series:
            if name not in names:
                names.append(name)
    nrows = 2 if tail else 1
    size = (FIGSIZE[0], FIGSIZE[1] * (1.55 if tail else 1.0))
    fig, axes = plt.subplots(nrows, max(len(panels), 1), figsize=size, sharey="row",
                             sharex="col", squeeze=False)
    for col, (panel, series) in enumerate(panels.items()):
        ax = axes[0][col]
        drawn = 0
        for name, values in series.items():
            if len(values) == 0:
                continue
            xs, ys = _ecdf(values)
            c = colour(names.index(name))
            ax.step(xs, ys, where="post", label=name, color=c, lw=1.4)
            if tail:
                n = len(xs)
                # fraction of samples ≥ x (never 0, so the last sample shows on a log axis)
                axes[1][col].step(xs, [(n - i) / n for i in range(n)], where="pre", color=c,
                                  lw=1.4)
            drawn += 1
        for r in range(nrows):
            a = axes[r][col]
            if logx and drawn:
                low = min(min(v) for v in series.values() if len(v))
                high = max(max(v) for v in series.values() if len(v))
                if low >= 1.0 and high < 10 * low:
                    # less than a decade: a linear axis reads better
                    a.xaxis.set_major_locator(ticker.MaxNLocator(nbins=4))
                    a.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
                else:
                    # log beyond 1 unit, linear below: zero latencies stay on the plot
                    a.set_xscale("symlog", linthresh=1.0, linscale=0.5)
                    if low < 1.0:
                        a.set_xlim(left=-0.5)
            if not drawn:
                a.text(0.5, 0.5, "no samples", ha="center", va="center", transform=a.transAxes)
            if r == nrows - 1:
                a.set_xlabel(xlabel)
        ax.set_title(panel, fontsize=10)
        ax.set_ylim(0.0, 1.02)
        if tail and drawn:
            axes[1][col].set_yscale("log")
    axes[0][0].set_ylabel("fraction of wake-ups ≤ x")
    if tail:
        axes[1][0].set_ylabel("fraction ≥ x (tail, log)")
    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.suptitle(title, fontsize=11)
    if handles:
        ncol = min(len(handles), 4)
        rows = math.ceil(len(handles) / ncol)
        fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
        fig.tight_layout(rect=(0.0, (0.04 + 0.045 * rows) / (1.55 if tail else 1.0), 1.0, 1.0))
    else:
        fig.tight_layout()
    return fig


def bar_compare(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    ylabel: str,
) -> Figure:
    """Grouped bars: one group per label, one bar per series (``None`` = no bar).

    Used for "published vs simulated, normalised" comparisons.
    """
    setup()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(labels))]
        pts = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if pts:
            ax.bar([p[0] for p in pts], [p[1] for p in pts], width=width, label=name,
                   color=colour(i))
    ax.set_xticks(list(range(len(labels))))
    ax.set_xticklabels(list(labels), fontsize=9)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def timeslice_vs_nice(
    policy: str,
    table: Sequence[tuple[int, int | None]],
    *,
    hz: int,
    index: int = 0,
) -> Figure:
    """Seed 000's timeslice-vs-nice plot for one policy: ``table`` is ``(nice, ns)`` pairs
    (``_core.timeslice``); nice levels with no slice (``None``) are left out, and a policy
    with none at all says so (CFS/EEVDF: the slice depends on the load)."""
    setup()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    pts = [(n, v / 1e6) for n, v in table if v is not None]
    if pts:
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="mid", color=colour(index),
                lw=1.6)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", ms=3, color=colour(index))
        ax.set_ylim(bottom=0.0)
    else:
        ax.text(0.5, 0.5, "no per-task timeslice", ha="center",
                va="center", transform=ax.transAxes)
    ax.set_xlim(-20.5, 19.5)
    ax.xaxis.set_major_locator(ticker.MultipleLocator(5))
    ax.set_xlabel("nice")
    ax.set_ylabel("timeslice (ms)")
    ax.set_title(f"{policy}: timeslice of a lone SCHED_OTHER task, HZ {hz}", fontsize=11)
    fig.tight_layout()
    return fig


def timeslice_vs_dprio(
    policy: str,
    table: Sequence[tuple[int, Sequence[tuple[int, int]]]],
    *,
    hz: int,
) -> Figure:
    """A policy's timeslice against dynamic priority, one line per best queued priority
    (``_core.nicksched_timeslice``: seed 000's nicksched plot)."""
    setup()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, (best, row) in enumerate(table):
        ax.step([p for p, _ in row], [ns / 1e6 for _, ns in row], where="mid",
                color=colour(i), lw=1.4, label=f"best queued prio {best}")
    ax.set_xlabel("dynamic priority (prio)")
    ax.set_ylabel("timeslice (ms)")
    ax.set_ylim(bottom=0.0)
    ax.set_title(f"{policy}: timeslice against dynamic priority, HZ {hz}", fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def timeslice_compare(
    tables: Mapping[str, Sequence[tuple[int, int | None]]],
    *,
    hz: int,
) -> Figure:
    """Timeslice against nice for several policies on one set of axes (``tables`` as for
    :func:`timeslice_vs_nice`); policies with no per-task slice are named in the legend
    title instead of drawn."""
    setup()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    none: list[str] = []
    for i, (policy, table) in enumerate(tables.items()):
        pts = [(n, v / 1e6) for n, v in table if v is not None]
        if not pts:
            none.append(policy)
            continue
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="mid", color=colour(i),
                lw=1.4, label=policy)
    ax.set_xlim(-20.5, 19.5)
    ax.set_ylim(bottom=0.0)
    ax.xaxis.set_major_locator(ticker.MultipleLocator(5))
    ax.set_xlabel("nice")
    ax.set_ylabel("timeslice (ms)")
    ax.set_title(f"Timeslice of a lone SCHED_OTHER task against nice, HZ {hz}", fontsize=11)
    title = f"no per-task slice: {', '.join(none)}" if none else None
    ax.legend(fontsize=8, frameon=False, title=title, title_fontsize=8)
    fig.tight_layout()
    return fig


def counter_timeline(
    series: Mapping[str, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    *,
    title: str,
    xlabel: str = "time (s)",
) -> Figure:
    """Counters against time, one panel per counter name and one step line per key:
    ``series[counter][label] = (times, values)`` — seed 000's "DPRIO against time per
    PID" when the counters are the policy's dynamic priority. Lines keep their colour
    across panels (by first appearance)."""
    setup()
    labels: list[str] = []
    for per in series.values():
        for lab in per:
            if lab not in labels:
                labels.append(lab)
    n = max(len(series), 1)
    fig, axes = plt.subplots(n, 1, figsize=(FIGSIZE[0], FIGSIZE[1] * (1 + 0.6 * (n - 1))),
                             sharex=True, squeeze=False)
    for row, (name, per) in enumerate(series.items()):
        ax = axes[row][0]
        for lab, (xs, ys) in per.items():
            ax.step(list(xs), list(ys), where="post", lw=1.2, label=lab, marker=".", ms=4,
                    color=colour(labels.index(lab)))
        ax.set_ylabel(name)
        if name == "prio":
            ax.invert_yaxis()  # lower prio value = more important, drawn on top
    axes[-1][0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=11)
    handles, labs = axes[0][0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax[0].get_legend_handles_labels(), strict=True):
            if lab not in labs:
                handles.append(h)
                labs.append(lab)
    if handles:
        ncol = min(len(handles), 5)
        fig.legend(handles, labs, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
        rows = math.ceil(len(handles) / ncol)
        fig.tight_layout(rect=(0.0, min(0.5, 0.05 + 0.05 * rows), 1.0, 1.0))
    else:
        fig.tight_layout()
    return fig

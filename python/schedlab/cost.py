"""The scheduler-cost study (seed 000's "time spent inside scheduler functions"): how the
work a policy does per scheduling decision grows with the number of runnable tasks.

The measurement is Rust's (``instruments::sched_cost``, bound as ``_core.sched_cost``): N
runnable tasks, then a steady mix of decisions — a tick, every other round the current task
blocks while a sleeper wakes (else it is preempted), put_prev, pick_next — with the work
units the policy counts (exact, deterministic) and the wall ns its hooks take (the fastest
of ten chunks, minus the same loop driving an O(1) ring policy; machine-dependent). This
module is glue: sizes, the JSON document, the growth class, the plot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import _core

SCHEMA = "schedlab.cost/1"
#: The largest N by default, and in quick mode.
MAX_TASKS = 100_000
QUICK_MAX_TASKS = 10_000
#: Measured decisions per point (plus a quarter as many of warm-up).
DECISIONS = 50_000
QUICK_DECISIONS = 5_000
#: The ``_core`` limit on N.
LIMIT_TASKS = 1_000_000
CLASSES = ("other", "fifo")

Point = dict[str, Any]


def sizes_up_to(max_tasks: int) -> list[int]:
    """1, 10, 100, … up to ``max_tasks`` (which ends the list if not a power of ten)."""
    if not 1 <= max_tasks <= LIMIT_TASKS:
        raise ValueError(f"max tasks: expected 1..{LIMIT_TASKS}, got {max_tasks}")
    sizes = []
    n = 1
    while n <= max_tasks:
        sizes.append(n)
        n *= 10
    if sizes[-1] != max_tasks:
        sizes.append(max_tasks)
    return sizes


def measure(
    schedulers: Sequence[str],
    *,
    params: Sequence[tuple[str, str]] = (),
    quick: bool = False,
    max_tasks: int | None = None,
    decisions: int | None = None,
    cpus: int = 1,
    task_class: str = "other",
    on_point: Callable[[str], None] | None = None,
) -> list[Point]:
    """Measure every scheduler at N = 1, 10, … up to ``max_tasks`` (default 100 000, quick
    10 000), one scheduler after the other (never in parallel: the ns would interfere).
    Raises ``_core.SimError`` (bad_input) for an unknown scheduler or parameter."""
    top = max_tasks if max_tasks is not None else (QUICK_MAX_TASKS if quick else MAX_TASKS)
    sizes = sizes_up_to(top)
    n_dec = decisions if decisions is not None else (QUICK_DECISIONS if quick else DECISIONS)
    points: list[Point] = []
    for name in schedulers:
        points += _core.sched_cost(
            name, sizes, list(params), decisions=n_dec, cpus=cpus, task_class=task_class
        )
        if on_point is not None:
            on_point(name)
    return points


def document(points: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``schedlab.cost/1`` JSON document (``params`` as a name → value object)."""
    keys = ("scheduler", "params", "class", "cpus", "nr_runnable", "decisions",
            "work_units", "work_per_decision", "ns_per_decision", "harness_ns_per_decision")
    out = []
    for p in points:
        d = {k: p[k] for k in keys}
        d["params"] = dict(p["params"])
        out.append(d)
    return {"schema": SCHEMA, "points": out}


def by_scheduler(points: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Points grouped by scheduler (first-seen order), each sorted by N."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for p in points:
        groups.setdefault(p["scheduler"], []).append(p)
    return {k: sorted(v, key=lambda p: p["nr_runnable"]) for k, v in groups.items()}


def growth_class(series: Sequence[tuple[int, float]]) -> str | None:
    """The complexity class of a cost series ``[(N, cost)]``: ``"O(1)"``, ``"O(log N)"``,
    ``"O(N)"`` or ``"O(N^e)"``, from the points with N ≥ 10 (N = 1 is a special case for
    most policies: nothing else to look at). ``None`` with less than two decades.

    Rule: from the smallest to the largest N, a cost within 25 % (+0.5 unit) is O(1); else
    the fitted exponent ``e = log(cost ratio) / log(N ratio)`` is ≥ 0.75 for O(N), < 0.35
    for O(log N) (a tree's depth grows ~×1.4–4 over two to four decades: e ≤ 0.3), and
    anything in between is reported as O(N^e). A constant part hides linear growth from
    that ratio (a + bN with a ≫ bN at small N), so the last three points are also read
    by their increments: when the last increment is at least half what a linear cost's
    would be, ``(c₃ − c₂) / (c₂ − c₁) ≥ ½ (N₃ − N₂) / (N₂ − N₁)`` (×5 per decade; a
    logarithm's increments stay equal, √N's grow ×3.2), the cost is O(N)."""
    pts = sorted((n, c) for n, c in series if n >= 10)
    if len(pts) < 2 or pts[-1][0] < 100 * pts[0][0]:
        return None
    (n0, c0), (n1, c1) = pts[0], pts[-1]
    if c1 <= 1.25 * c0 + 0.5:
        return "O(1)"
    if c0 <= 0:
        return "O(N)"
    e = math.log(c1 / c0) / math.log(n1 / n0)
    if e >= 0.75 or _linear_increments(pts):
        return "O(N)"
    if e < 0.35:
        return "O(log N)"
    return f"O(N^{e:.2f})"


def _linear_increments(pts: Sequence[tuple[int, float]]) -> bool:
    """Whether the last three points' increments grow at least half as fast as a linear
    cost's (see :func:`growth_class`)."""
    if len(pts) < 3:
        return False
    (na, ca), (nb, cb), (nc, cc) = pts[-3:]
    d1, d2 = cb - ca, cc - cb
    return d1 > 0 and d2 > 0 and d2 / d1 >= 0.5 * (nc - nb) / (nb - na)


def work_classes(points: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
    """Each scheduler's growth class by counted work per decision."""
    return {
        name: growth_class([(p["nr_runnable"], p["work_per_decision"]) for p in ps])
        for name, ps in by_scheduler(points).items()
    }


def uncounted_growth(points: Iterable[Mapping[str, Any]], factor: float = 10.0) -> list[str]:
    """Schedulers whose ns per decision grew more than ``factor``× from the smallest to the
    largest N (≥ 10) while their counted work stayed O(1): work the counters miss."""
    out = []
    classes = work_classes(points)
    for name, ps in by_scheduler(points).items():
        big = [p for p in ps if p["nr_runnable"] >= 10]
        if classes.get(name) != "O(1)" or len(big) < 2:
            continue
        lo, hi = big[0]["ns_per_decision"], big[-1]["ns_per_decision"]
        if hi > factor * max(lo, 1.0):
            out.append(name)
    return out


def classes_sentence(points: Sequence[Mapping[str, Any]]) -> str:
    """"Counted work per decision is O(1) for a, b; O(log N) for c; …" from the data."""
    groups: dict[str, list[str]] = {}
    for name, cls in work_classes(points).items():
        groups.setdefault(cls or "not classified (less than two decades of N)", []).append(name)
    order = sorted(groups, key=_class_rank)
    parts = [f"{cls} for {', '.join(groups[cls])}" for cls in order]
    text = "Counted work per decision, from N = 10 to the largest N measured, grows " + (
        "; ".join(parts) + "." if parts else "— (no points).")
    missed = uncounted_growth(points)
    if missed:
        text += (" Wall time grows more than tenfold over that range for "
                 f"{', '.join(missed)} although the counted work does not: work the "
                 "policy does without counting it.")
    return text


def _class_rank(cls: str) -> tuple[int, str]:
    order = {"O(1)": 0, "O(log N)": 1, "O(N)": 3}
    if cls in order:
        return order[cls], cls
    return (2, cls) if cls.startswith("O(N^") else (4, cls)


def _fmt(x: float, digits: int) -> str:
    return f"{x:,.{digits}f}"


def print_tables(console: Any, points: Sequence[Mapping[str, Any]]) -> None:
    """Two rich tables (rows: policies; columns: N): counted work units per decision with
    each policy's growth class, and ns per decision; then the classes sentence."""
    from rich.markup import escape
    from rich.table import Table

    groups = by_scheduler(points)
    sizes = sorted({p["nr_runnable"] for p in points})
    if not points:
        return
    first = points[0]
    what = (f"SCHED_{'FIFO' if first['class'] == 'fifo' else 'OTHER'} tasks, "
            f"{first['cpus']} CPU{'s' if first['cpus'] > 1 else ''}, "
            f"{first['decisions']:,} decisions per point")
    params = ", ".join(f"{k}={v}" for k, v in first["params"])
    if params:
        what += f", {params}"
    classes = work_classes(points)
    for key, title, digits in (
        ("work_per_decision", "work units per decision (counted, exact)", 1),
        ("ns_per_decision", "ns per decision in the policy's hooks (this machine)", 0),
    ):
        t = Table(title=escape(title), title_justify="left", caption=escape(what),
                  caption_justify="left")
        t.add_column("policy")
        for n in sizes:
            t.add_column(f"N={n:,}", justify="right")
        if key == "work_per_decision":
            t.add_column("growth")
        for name, ps in groups.items():
            at = {p["nr_runnable"]: p[key] for p in ps}
            cells = [_fmt(at[n], digits) if n in at else "–" for n in sizes]
            if key == "work_per_decision":
                cells.append(classes.get(name) or "–")
            t.add_row(escape(name), *cells)
        if key == "ns_per_decision":
            harness = [p["harness_ns_per_decision"] for p in points]
            t.caption = escape(
                f"{what}; the harness loop's own {min(harness):.0f}–{max(harness):.0f} "
                "ns/decision (the same loop driving an O(1) ring policy) subtracted")
        console.print(t)
    console.print(escape(classes_sentence(points)))


def save_plot(points: Sequence[Mapping[str, Any]], out_dir: Path,
              registry: Sequence[str] = ()) -> list[Path]:
    """Write the log-log plot as ``cost-<class>[-<param>-<value>…].png/.svg`` into
    ``out_dir``; returns the two paths."""
    from schedlab import plots

    first = points[0] if points else {"class": "other", "params": []}
    stem = "cost-" + first["class"] + "".join(
        f"-{_safe(k)}-{_safe(v)}" for k, v in first["params"])
    fig = plot(points, title=f"scheduler cost per decision ({first['class']} tasks)",
               registry=registry)
    return plots.save(fig, out_dir, stem)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in str(text))


def plot(points: Sequence[Mapping[str, Any]], *, title: str = "", registry: Sequence[str] = ()
         ) -> Any:
    """Log-log figure: work units per decision (left) and ns per decision (right) against
    the number of runnable tasks, one line per policy (coloured by its ``registry``
    position, so a policy keeps its colour across figures). Non-positive ns (harness noise
    after the subtraction) are left out."""
    import matplotlib.pyplot as plt

    from schedlab import plots

    plots.setup()
    fig, (aw, at) = plt.subplots(1, 2, figsize=(plots.FIGSIZE[0] * 1.4, plots.FIGSIZE[1]))
    groups = by_scheduler(points)
    for i, (name, ps) in enumerate(groups.items()):
        colour = plots.colour(list(registry).index(name) if name in registry else i)
        for ax, key in ((aw, "work_per_decision"), (at, "ns_per_decision")):
            xy = [(p["nr_runnable"], p[key]) for p in ps if p[key] > 0]
            if xy:
                ax.plot([x for x, _ in xy], [y for _, y in xy], "o-", ms=3, lw=1.4,
                        color=colour, label=name)
    for ax, ylabel in ((aw, "work units per decision (counted)"),
                       (at, "ns per decision (this machine)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("runnable tasks N")
        ax.set_ylabel(ylabel)
    aw.legend(fontsize=8, ncol=2)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig

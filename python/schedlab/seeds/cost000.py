"""Seed 000's wish for "measuring time spent inside scheduler functions" (issue 3), as a
piece of the seed-000 report section: the scheduler-cost study (:mod:`schedlab.cost`) for
the given policies — a table (rows: the number of runnable tasks N; per policy: counted
work units and ns per decision), the log-log plot, and a sentence, computed from the
counted work, saying which policies are O(1), O(log N) or O(N).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedlab import cost, report
from schedlab.report import Cell, Column, Table
from schedlab.reproduce import Context

FIGURE_STEM = "seed000-sched-cost"


def cost_html(ctx: Context, policies: Sequence[str]) -> tuple[str, list[Path]]:
    """The cost study's HTML and the files it wrote (plot PNG + SVG). Quick mode measures
    N up to 10 000 with fewer decisions. A failed measurement becomes a warning note."""
    parts = ["<h3>Scheduler cost against the number of runnable tasks</h3>"]
    if not policies:
        parts.append(report.note("No policy to measure.", warn=True))
        return "\n".join(parts), []
    try:
        points = cost.measure(list(policies), quick=ctx.quick)
    except Exception as exc:  # one failed measurement must not sink the report
        if os.environ.get("SCHEDLAB_DEBUG"):
            traceback.print_exc()
        parts.append(report.note(f"The cost study failed: <code>{report.esc(exc)}</code>",
                                 warn=True))
        return "\n".join(parts), []
    parts.append(_intro(points))
    parts.append(report.render_table(cost_table(points)))
    parts.append(report.paragraph(cost.classes_sentence(points)))
    registry = ctx.scheduler_names
    fig = cost.plot(points, title="Scheduler cost per decision, SCHED_OTHER tasks, one CPU",
                    registry=registry)
    png, svg = ctx.save_figure(fig, FIGURE_STEM)
    parts.append(report.figure(
        png, "Counted work units (left) and ns (right) per scheduling decision against the "
             "number of runnable tasks, log-log, one line per policy.", svg_rel=svg))
    return "\n".join(parts), [ctx.out / png, ctx.out / svg]


def _intro(points: Sequence[dict[str, Any]]) -> str:
    decisions = points[0]["decisions"]
    harness = [p["harness_ns_per_decision"] for p in points]
    return (
        "<p>The seed asks how the time spent inside the scheduler grows with the number of "
        "tasks. Each policy is driven outside the engine with N runnable SCHED_OTHER tasks "
        "on one CPU through a steady mix of decisions; one <em>decision</em> is a tick "
        "(<code>update_curr</code>, <code>tick</code>), then on every other round the "
        "current task blocks while a sleeping task wakes (<code>select_cpu</code>, "
        "<code>enqueue</code>, <code>wakeup_preempt</code>, <code>dequeue</code>) and "
        "otherwise is preempted, then <code>put_prev</code> and <code>pick_next</code>, so "
        "that every pick sees N runnable tasks. <strong>Work units</strong> are what the "
        "policy counts (list nodes walked, bitmap words scanned, tree levels): exact and "
        f"deterministic. <strong>ns</strong> are wall time on this machine over "
        f"{decisions:,} decisions (the fastest of ten chunks), minus the harness loop's "
        f"own {min(harness):.0f}–{max(harness):.0f} ns measured with an O(1) ring policy: "
        "machine-dependent, compare them only within one table. "
        "<code>schedlab cost</code> regenerates the table.</p>"
    )


def cost_table(points: Sequence[dict[str, Any]]) -> Table:
    """Rows: N; per policy two columns, counted work units and ns per decision."""
    groups = cost.by_scheduler(points)
    sizes = sorted({p["nr_runnable"] for p in points})
    columns = [Column("N", "int")]
    header: list[tuple[str, int, str]] = [("", 1, "")]
    for name in groups:
        columns += [Column("work", "num", title=f"{name}: work units per decision"),
                    Column("ns", "int", title=f"{name}: ns per decision")]
        header.append((name, 2, ""))
    rows: list[list[Any]] = []
    for n in sizes:
        row: list[Any] = [n]
        for ps in groups.values():
            at = {p["nr_runnable"]: p for p in ps}
            p = at.get(n)
            row += [Cell(p["work_per_decision"], decimals=1) if p else None,
                    p["ns_per_decision"] if p else None]
        rows.append(row)
    return Table(columns=columns, rows=rows, groups=header, id="seed000-sched-cost",
                 caption="Scheduler cost per decision: counted work units (exact) and ns "
                         "(this machine) against the number of runnable tasks N")

"""Seed 000's wish for "measuring time spent inside scheduler functions", as a piece of
the seed-000 report section: the scheduler-cost study (:mod:`schedlab.cost`) for
the given policies — a table (rows: the number of runnable tasks N; per policy: counted
work units and ns per decision), the log-log plot, and a sentence, computed from the
counted work, saying which policies are O(1), O(log N) or O(N).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schedlab import cost
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import Part

if TYPE_CHECKING:
    from schedlab.report.context import Context

FIGURE_STEM = "seed000-sched-cost"


def part(ctx: Context, policies: Sequence[str]) -> Part:
    """The cost study's table, sentence and plot. Quick mode measures N up to 10 000 with
    fewer decisions. A failed measurement becomes a warning note."""
    if not policies:
        return Part(render("seed000_cost.html.j2", problem="No policy to measure."))
    try:
        points = cost.measure(list(policies), quick=ctx.quick)
    except Exception as exc:  # one failed measurement must not sink the report
        if os.environ.get("SCHEDLAB_DEBUG"):
            traceback.print_exc()
        return Part(render("seed000_cost.html.j2", problem=f"The cost study failed: {exc}"))
    fig = cost.plot(points, title="Scheduler cost per decision, SCHED_OTHER tasks, one CPU",
                    registry=ctx.available)
    saved = ctx.save_figure(fig, FIGURE_STEM,
                            "Counted work units (left) and ns (right) per scheduling decision "
                            "against the number of runnable tasks, log-log, one line per "
                            "policy.")
    harness = [p["harness_ns_per_decision"] for p in points]
    html = render("seed000_cost.html.j2", problem="", decisions=points[0]["decisions"],
                  harness_min=min(harness), harness_max=max(harness), table=cost_table(points),
                  classes=cost.classes_sentence(points), fig=saved)
    return Part(html, files=ctx.figure_files(saved))


def cost_table(points: Sequence[dict[str, Any]], table_id: str = "seed000-sched-cost") -> Table:
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
    return Table(columns=columns, rows=rows, groups=header, id=table_id,
                 caption="Scheduler cost per decision: counted work units (exact) and ns "
                         "(this machine) against the number of runnable tasks N")

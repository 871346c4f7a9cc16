"""Seed 000's behaviour slides, regenerated: timeslice against nice, fork(), yield() and
dynamic priority over time, for every Linux-family policy.

Everything here is measured from the policies themselves: timeslices from each policy's
own ``timeslice_ns`` (``_core.timeslice``), fork and yield behaviour from the context
switches of small simulated probes (their ftrace traces are kept under ``traces/`` and
open in Perfetto), dynamic priority from the counters each policy writes into the trace.
Medians are the core's (nearest-rank p50 of :func:`schedlab._core.stats`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import _core, api, dprio, plots
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import Part, RunOutcome
from schedlab.result import Result
from schedlab.seeds.seed000 import policy_sweep

if TYPE_CHECKING:
    from schedlab.report.context import Context, Figure

#: The nice levels the timeslice table shows (the plot has all 40).
NICE_ROWS = (-20, -15, -10, -5, 0, 5, 10, 15, 19)

#: fork probe: a CPU hog forks a CPU hog 20 ms into its timeslice, on one CPU.
FORK_AT_MS = 20
FORK_SPEC: dict[str, Any] = {
    "tasks": {
        "parent": {"loop": 1, "phases": {
            "warm": {"run": FORK_AT_MS * 1000},
            "fork": {"fork": "child"},
            "burn": {"run": 400_000},
        }},
        "child": {"instance": 0, "loop": 1, "run": 400_000},
    },
    "schedlab": {"machine": {"cpus": 1, "hz": 1000}},
}

#: yield probe: a task that yields after every millisecond of work against a CPU hog.
YIELD_SPEC: dict[str, Any] = {
    "global": {"duration": 1},
    "tasks": {
        "yielder": {"loop": -1, "phases": {"work": {"run": 1000}, "give": {"yield": ""}}},
        "hog": {"loop": -1, "run": 10_000},
    },
    "schedlab": {"machine": {"cpus": 1, "hz": 1000}},
}

#: dynamic-priority probe: a CPU hog beside an interactive task (1 ms of work every 10 ms).
DPRIO_SPEC: dict[str, Any] = {
    "global": {"duration": 2},
    "tasks": {
        "hog": {"loop": -1, "run": 10_000},
        "interactive": {"loop": -1, "phases": {"work": {"run": 1000}, "wait": {"sleep": 9000}}},
    },
    "schedlab": {"machine": {"cpus": 1, "hz": 1000}},
}


def median_ns(values: Sequence[int]) -> int | None:
    """The nearest-rank median (the core's p50); None for no values."""
    p50: int | None = _core.stats([int(v) for v in values])["p50"]
    return p50


# --------------------------------------------------------------------------------------
# Reading switches from a trace
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One stretch of a task on the CPU: [start, end) in ns."""

    pid: int
    start: int
    end: int

    @property
    def ns(self) -> int:
        return self.end - self.start


def segments(cols: Mapping[str, Sequence[Any]]) -> list[Segment]:
    """Run segments of every non-idle task on a one-CPU trace, in time order."""
    out: list[Segment] = []
    cur: tuple[int, int] | None = None
    for ev, ts, nxt in zip(cols["event"], cols["ts_ns"], cols["next_pid"], strict=True):
        if ev != "sched_switch":
            continue
        if cur is not None and cur[0] != 0:
            out.append(Segment(cur[0], cur[1], ts))
        cur = (nxt, ts)
    return out


def fork_time(cols: Mapping[str, Sequence[Any]]) -> tuple[int, int, int] | None:
    """(time, parent pid, child pid) of the first fork in the trace."""
    for ev, ts, pid, child in zip(cols["event"], cols["ts_ns"], cols["pid"],
                                  cols["child_pid"], strict=True):
        if ev == "sched_process_fork" and child is not None:
            return ts, pid, child
    return None


def fork_behaviour(cols: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """Who runs first after the fork, the first run of each after it, and the steady
    turn length (median of the later segments) — all from the context switches."""
    f = fork_time(cols)
    if f is None:
        raise ValueError("no fork in the trace")
    t, parent, child = f
    after = [s for s in segments(cols) if s.end > t and s.pid in (parent, child)]
    if not after:
        raise ValueError("nothing ran after the fork")
    first = "child" if after[0].pid == child else "parent"

    def first_run(pid: int) -> float | None:
        seg = next((s for s in after if s.pid == pid), None)
        return None if seg is None else (seg.end - max(seg.start, t)) / 1e6

    turn = median_ns([s.ns for s in after[2:-2]])
    return {
        "first": first,
        "child_first_ms": first_run(child),
        "parent_first_ms": first_run(parent),
        "turn_ms": turn / 1e6 if turn is not None else None,
    }


def yield_behaviour(cols: Mapping[str, Sequence[Any]], result: Result) -> dict[str, Any]:
    """CPU shares of the yielder and the hog, and how long the yielder waits after each
    yield before it runs again (median, from the switches)."""
    j = result.json
    tid = {t["name"]: t["tid"] for t in j.get("tasks") or []}
    span = (j.get("run") or {}).get("sim_ns") or 0
    share = {name: 100.0 * t["cpu_ns"] / span for name in ("yielder", "hog")
             for t in j["tasks"] if t["name"] == name} if span else {}
    y = tid.get("yielder")
    waits: list[int] = []
    left: int | None = None
    for ev, ts, prev, state, nxt in zip(cols["event"], cols["ts_ns"], cols["prev_pid"],
                                        cols["prev_state"], cols["next_pid"], strict=True):
        if ev != "sched_switch":
            continue
        if prev == y and state and state.startswith("R"):
            left = ts
        if nxt == y and left is not None:
            waits.append(ts - left)
            left = None
    wait = median_ns(waits)
    return {
        "yielder_pct": share.get("yielder"),
        "hog_pct": share.get("hog"),
        "yields_switched": len(waits),
        "wait_ms": wait / 1e6 if wait is not None else None,
    }


# --------------------------------------------------------------------------------------
# Parts of the section
# --------------------------------------------------------------------------------------


def _timeslices(policies: Sequence[str], hz: int
                ) -> tuple[dict[str, list[tuple[int, int | None]]], dict[str, str]]:
    """Each policy's timeslice table, and why a policy has none."""
    tables: dict[str, list[tuple[int, int | None]]] = {}
    problems: dict[str, str] = {}
    for p in policies:
        try:
            tables[p] = _core.timeslice(p, hz)
        except Exception as exc:  # a policy without the hook stays out, with the reason
            problems[p] = str(exc)
    return tables, problems


def timeslice_table(policies: Sequence[str], hz: int, table_id: str
                    ) -> tuple[Table | None, dict[str, str]]:
    """The timeslice table of ``policies`` (None if none has one) and why a policy has
    none, for another section's page."""
    tables, problems = _timeslices(policies, hz)
    return (_timeslice_table(tables, hz, table_id) if tables else None), problems


def _timeslice_table(tables: Mapping[str, list[tuple[int, int | None]]], hz: int,
                     table_id: str = "seed000-timeslice") -> Table:
    rows = []
    for nice in NICE_ROWS:
        row: list[Any] = [nice]
        for table in tables.values():
            ns = dict(table).get(nice)
            row.append(Cell(ns / 1e6, decimals=1) if ns is not None
                       else Cell("load-dependent", kind="text"))
        rows.append(row)
    return Table(id=table_id,
                 caption=f"Timeslice of a lone SCHED_OTHER task (ms), HZ {hz}",
                 columns=[Column("nice", "int")] + [Column(p, "num") for p in tables],
                 rows=rows)


def _timeslice_figures(ctx: Context, tables: Mapping[str, list[tuple[int, int | None]]],
                       hz: int) -> list[Figure]:
    figs = [ctx.save_figure(plots.timeslice_compare(dict(tables), hz=hz), "seed000-timeslice",
                            "Timeslice against nice per policy (the seed's timeslice plots, "
                            "all policies on one set of axes).")]
    if "nicksched" in tables:
        fig = plots.timeslice_vs_dprio("nicksched", _core.nicksched_timeslice(hz), hz=hz)
        figs.append(ctx.save_figure(
            fig, "seed000-timeslice-nicksched-dprio",
            "nicksched: the seed gives its timeslice as a function of the task's dynamic "
            "priority and the best priority queued on the CPU (minprio); the v8 formula, "
            "computed by the policy's code, for four values of the best queued priority. A "
            "lone task is its own best, which is why its slice grows with nice above."))
    return figs


def timeslice_part(ctx: Context, policies: Sequence[str], hz: int) -> Part:
    """Timeslice against nice from each policy's own code: a table and plots."""
    tables, problems = _timeslices(policies, hz)
    figs = _timeslice_figures(ctx, tables, hz) if tables else []
    html = render("seed000_timeslice.html.j2", problems=problems,
                  table=_timeslice_table(tables, hz) if tables else None, figs=figs)
    return Part(html, files=ctx.figure_files(*figs))


def _probe_runs(ctx: Context, name: str, spec: dict[str, Any], policies: Sequence[str],
                what: str) -> dict[str, tuple[RunOutcome, Path]]:
    """Every policy's run of the probe ``spec``, traced (the sweep ``name``)."""
    sweep = policy_sweep(name, {name: api.spec_text(spec)}, policies, 1, samples=False,
                         trace=True)
    return {o.request.scheduler: (o, o.request.trace)  # type: ignore[misc]
            for o in ctx.sweep(sweep, f"seed 000: {what}")}


def _probe_cells(ctx: Context, o: RunOutcome, trace: Path,
                 read: Callable[[Mapping[str, Sequence[Any]], Result], Sequence[Any]]
                 ) -> list[Any]:
    """A probe's cells: ``read(trace columns, result)``'s values and a link to the trace,
    or the reason there are none."""
    if not o.ok or o.result is None:
        return [Cell(f"failed: {o.error}", kind="text"), None, None, None, None]
    try:
        values = read(_core.parse_trace(str(trace)), o.result)
    except Exception as exc:  # the reason shows in the cell
        return [Cell(f"no reading: {exc}", kind="text"), None, None, None, None]
    return [*values, Cell("trace", href=ctx.rel(trace), title="ftrace text; opens in Perfetto")]


def _fork_values(cols: Mapping[str, Sequence[Any]], _result: Result) -> list[Any]:
    f = fork_behaviour(cols)
    return [f["first"], f["child_first_ms"], f["parent_first_ms"], f["turn_ms"]]


def _yield_values(cols: Mapping[str, Sequence[Any]], result: Result) -> list[Any]:
    y = yield_behaviour(cols, result)
    return [y["yielder_pct"], y["hog_pct"], y["yields_switched"], y["wait_ms"]]


def _fork_table(rows: list[list[Any]]) -> Table:
    return Table(
        id="seed000-fork",
        caption=f"fork(): a CPU hog forks a CPU hog {FORK_AT_MS} ms into its run (1 CPU)",
        columns=[Column("policy"), Column("runs first"), Column("child's first run (ms)", "num"),
                 Column("parent's first run after fork (ms)", "num"),
                 Column("then each runs, median (ms)", "num"), Column("")],
        rows=rows)


def _yield_table(rows: list[list[Any]]) -> Table:
    return Table(
        id="seed000-yield",
        caption="yield(): a task that yields after every 1 ms of work beside a CPU hog "
                "(1 CPU, 1 s)",
        columns=[Column("policy"), Column("yielder CPU %", "num"), Column("hog CPU %", "num"),
                 Column("yields that switched", "int"),
                 Column("wait after a yield, median (ms)", "num"), Column("")],
        rows=rows)


def fork_yield_part(ctx: Context, policies: Sequence[str]) -> Part:
    """fork() and yield() behaviour per policy, measured from probe traces."""
    if not policies:
        return Part(render("seed000_forkyield.html.j2", fork=None, yld=None))
    forks = _probe_runs(ctx, "seed000-fork", FORK_SPEC, policies, "fork probe")
    yields = _probe_runs(ctx, "seed000-yield", YIELD_SPEC, policies, "yield probe")
    fork_rows = [[p, *_probe_cells(ctx, *forks[p], _fork_values)] for p in policies]
    yield_rows = [[p, *_probe_cells(ctx, *yields[p], _yield_values)] for p in policies]
    html = render("seed000_forkyield.html.j2", fork=_fork_table(fork_rows),
                  yld=_yield_table(yield_rows))
    runs = [o for o, _ in forks.values()] + [o for o, _ in yields.values()]
    return Part(html, runs=runs)


def _dprio_figure(ctx: Context, policy: str, o: RunOutcome, trace: Path
                  ) -> tuple[Figure | None, str]:
    """A policy's dynamic-priority plot, or why there is none."""
    if not o.ok:
        return None, f"{policy}: {o.error}"
    try:
        series = dprio.series(_core.parse_trace(str(trace)))
    except Exception as exc:  # the reason shows on the page
        return None, f"{policy}: trace unreadable: {exc}"
    if not series:
        return None, f"{policy} writes no dynamic-priority counter."
    fig = plots.counter_timeline(series, title=f"{policy}: dynamic priority against time")
    return ctx.save_figure(fig, f"seed000-dprio-{policy}",
                           f"{policy}: dynamic priority of the hog and the interactive task "
                           f"(trace: {ctx.rel(trace)})."), ""


def dprio_part(ctx: Context, policies: Sequence[str]) -> Part:
    """The seed's last wish: every task's dynamic priority against time, per policy."""
    runs = _probe_runs(ctx, "seed000-dprio", DPRIO_SPEC, policies, "dynamic priority") \
        if policies else {}
    drawn = [_dprio_figure(ctx, p, *runs[p]) for p in policies]
    figs = [f for f, _ in drawn if f is not None]
    html = render("seed000_dprio.html.j2", items=drawn)
    return Part(html, files=ctx.figure_files(*figs), runs=[o for o, _ in runs.values()])

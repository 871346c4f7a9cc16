"""Seed 000's behaviour slides, regenerated: timeslice against nice, fork(), yield() and
dynamic priority over time, for every Linux-family policy.

Everything here is measured from the policies themselves: timeslices from each policy's
own ``timeslice_ns`` (``_core.timeslice``), fork and yield behaviour from the context
switches of small simulated probes (their ftrace traces are kept under ``traces/`` and
open in Perfetto), dynamic priority from the counters each policy writes into the trace.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import dprio, plots, report
from schedlab.report import Cell, Column, Table
from schedlab.reproduce import RunOutcome, RunRequest, result_json

if TYPE_CHECKING:
    from schedlab.reproduce import Context

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


@dataclass
class Part:
    html: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    outcomes: list[RunOutcome] = field(default_factory=list)


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
    def ms(self) -> float:
        return (self.end - self.start) / 1e6


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

    steady = [s.ms for s in after[2:-2]]
    return {
        "first": first,
        "child_first_ms": first_run(child),
        "parent_first_ms": first_run(parent),
        "turn_ms": statistics.median(steady) if steady else None,
    }


def yield_behaviour(cols: Mapping[str, Sequence[Any]], result: Any) -> dict[str, Any]:
    """CPU shares of the yielder and the hog, and how long the yielder waits after each
    yield before it runs again (median, from the switches)."""
    j = result_json(result)
    tid = {t["name"]: t["tid"] for t in j.get("tasks") or []}
    span = (j.get("run") or {}).get("sim_ns") or 0
    share = {name: 100.0 * t["cpu_ns"] / span for name in ("yielder", "hog")
             for t in j["tasks"] if t["name"] == name} if span else {}
    y = tid.get("yielder")
    waits: list[float] = []
    left: int | None = None
    for ev, ts, prev, state, nxt in zip(cols["event"], cols["ts_ns"], cols["prev_pid"],
                                        cols["prev_state"], cols["next_pid"], strict=True):
        if ev != "sched_switch":
            continue
        if prev == y and state and state.startswith("R"):
            left = ts
        if nxt == y and left is not None:
            waits.append((ts - left) / 1e6)
            left = None
    return {
        "yielder_pct": share.get("yielder"),
        "hog_pct": share.get("hog"),
        "yields_switched": len(waits),
        "wait_ms": statistics.median(waits) if waits else None,
    }


# --------------------------------------------------------------------------------------
# Parts of the section
# --------------------------------------------------------------------------------------


def timeslice_part(ctx: Context, policies: Sequence[str], hz: int) -> Part:
    """Timeslice against nice from each policy's own code: a table and one plot."""
    from schedlab import _core

    part = Part(html=["<h3>Timeslice against nice</h3>"])
    tables: dict[str, list[tuple[int, int | None]]] = {}
    for p in policies:
        try:
            tables[p] = _core.timeslice(p, hz)
        except Exception as exc:  # a policy without the hook stays out, with the reason
            part.html.append(report.note(f"{report.esc(p)}: {report.esc(exc)}", warn=True))
    if not tables:
        return part
    rows = []
    for nice in NICE_ROWS:
        row: list[Any] = [nice]
        for p in tables:
            ns = dict(tables[p]).get(nice)
            row.append(Cell(ns / 1e6, decimals=1) if ns is not None
                       else Cell("load-dependent", kind="text"))
        rows.append(row)
    part.html.append(report.render_table(Table(
        id="seed000-timeslice",
        caption=f"Timeslice of a lone SCHED_OTHER task (ms), HZ {hz}",
        columns=[Column("nice", "int")] + [Column(p, "num") for p in tables],
        rows=rows,
        note_html="Computed by each policy's own code (<code>Scheduler::timeslice_ns</code>, "
                  "the same function the simulation uses; <code>schedlab timeslice</code> prints "
                  "all 40 levels). CFS and EEVDF have no per-task slice: theirs depends on "
                  "the load.",
    )))
    fig = plots.timeslice_compare(tables, hz=hz)
    png, svg = ctx.save_figure(fig, "seed000-timeslice")
    part.files += [ctx.out / png, ctx.out / svg]
    part.html.append(report.figure(
        png, "Timeslice against nice per policy (the seed's timeslice plots, all policies "
        "on one set of axes).", svg_rel=svg))
    if "nicksched" in tables:
        fig = plots.timeslice_vs_dprio("nicksched", _core.nicksched_timeslice(hz), hz=hz)
        png, svg = ctx.save_figure(fig, "seed000-timeslice-nicksched-dprio")
        part.files += [ctx.out / png, ctx.out / svg]
        part.html.append(report.figure(
            png, "nicksched: the seed gives its timeslice as a function of the task's dynamic "
            "priority and the best priority queued on the CPU (minprio); the v8 formula, "
            "computed by the policy's code, for four values of the best queued priority. "
            "A lone task is its own best, which is why its slice grows with nice above.",
            svg_rel=svg))
    return part


def _trace_path(ctx: Context, stem: str) -> Path:
    d = ctx.out / "traces"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{stem}.txt"


def _probe_runs(ctx: Context, name: str, spec: dict, policies: Sequence[str],
                what: str) -> dict[str, tuple[RunOutcome, Path]]:
    traces = {p: _trace_path(ctx, f"{name}-{p}") for p in policies}
    reqs = [RunRequest(name, spec, p, overrides={"trace": str(traces[p])},
                       label=f"{what} / {p}") for p in policies]
    return {o.request.scheduler: (o, traces[o.request.scheduler])
            for o in ctx.run(reqs, f"seed 000: {what}")}


def _read_trace(path: Path) -> Mapping[str, Sequence[Any]]:
    from schedlab import _core

    return _core.parse_trace(str(path))


def _trace_cell(ctx: Context, path: Path) -> Cell:
    return Cell("trace", href=ctx.rel(path), title="ftrace text; opens in Perfetto")


def fork_yield_part(ctx: Context, policies: Sequence[str]) -> Part:
    """fork() and yield() behaviour per policy, measured from probe traces."""
    part = Part(html=["<h3>fork() and yield()</h3>"])
    if not policies:
        return part
    forks = _probe_runs(ctx, "seed000-fork", FORK_SPEC, policies, "fork probe")
    yields = _probe_runs(ctx, "seed000-yield", YIELD_SPEC, policies, "yield probe")
    part.outcomes += [o for o, _ in forks.values()] + [o for o, _ in yields.values()]
    frows, yrows = [], []
    for p in policies:
        frows.append([p, *_probe_cells(ctx, *forks[p], _fork_values)])
        yrows.append([p, *_probe_cells(ctx, *yields[p], _yield_values)])
    part.html.append(report.render_table(Table(
        id="seed000-fork",
        caption=f"fork(): a CPU hog forks a CPU hog {FORK_AT_MS} ms into its run (1 CPU)",
        columns=[Column("policy"), Column("runs first"), Column("child's first run (ms)", "num"),
                 Column("parent's first run after fork (ms)", "num"),
                 Column("then each runs, median (ms)", "num"), Column("")],
        rows=frows,
        note_html="Measured from the context switches of the probe's trace. The seed's slides "
                  "describe the O(1) rule (the child gets half the parent's remaining "
                  "slice and runs first) and staircase's child penalty; the table shows what "
                  "each policy's model does. Spec: "
                  '<a href="specs/seed000-fork.json"><code>specs/seed000-fork.json</code></a>.',
    )))
    part.html.append(report.render_table(Table(
        id="seed000-yield",
        caption="yield(): a task that yields after every 1 ms of work beside a CPU hog "
                "(1 CPU, 1 s)",
        columns=[Column("policy"), Column("yielder CPU %", "num"), Column("hog CPU %", "num"),
                 Column("yields that switched", "int"),
                 Column("wait after a yield, median (ms)", "num"), Column("")],
        rows=yrows,
        note_html="A yield that finds nobody to switch to is not counted. O(1) sends a "
                  "yielding task to the expired array, staircase to the lowest priority, "
                  "CFS/EEVDF only skip it once: the wait after a yield shows the difference. "
                  'Spec: <a href="specs/seed000-yield.json"><code>specs/seed000-yield.json'
                  "</code></a>.",
    )))
    return part


def _probe_cells(ctx: Context, o: RunOutcome, trace: Path,
                 read: Callable[[Mapping[str, Sequence[Any]], Any], Sequence[Any]]
                 ) -> list[Any]:
    """A probe's cells: ``read(trace columns, result)``'s values and a link to the trace,
    or the reason there are none."""
    if not o.ok:
        return [Cell(f"failed: {o.error}", kind="text"), None, None, None, None]
    try:
        values = read(_read_trace(trace), o.result)
    except Exception as exc:
        return [Cell(f"no reading: {exc}", kind="text"), None, None, None, None]
    return [*values, _trace_cell(ctx, trace)]


def _fork_values(cols: Mapping[str, Sequence[Any]], _result: Any) -> list[Any]:
    f = fork_behaviour(cols)
    return [f["first"], f["child_first_ms"], f["parent_first_ms"], f["turn_ms"]]


def _yield_values(cols: Mapping[str, Sequence[Any]], result: Any) -> list[Any]:
    y = yield_behaviour(cols, result)
    return [y["yielder_pct"], y["hog_pct"], y["yields_switched"], y["wait_ms"]]


def dprio_part(ctx: Context, policies: Sequence[str]) -> Part:
    """The seed's last wish: every task's dynamic priority against time, per policy."""
    part = Part(html=[
        "<h3>Dynamic priority against time</h3>",
        "<p>The seed wishes for a plot of DPRIO against time per PID. Each policy writes its "
        "own notion of dynamic priority into the trace as a counter (prio for the O(1) "
        "family, vruntime for CFS, the virtual deadline for EEVDF/BFS), and <code>schedlab "
        "plot dprio TRACE</code> draws it. Below: a CPU hog beside an interactive task "
        "(1 ms of work every 10 ms), 2 s on one CPU.</p>",
    ])
    if not policies:
        return part
    runs = _probe_runs(ctx, "seed000-dprio", DPRIO_SPEC, policies, "dynamic priority")
    part.outcomes += [o for o, _ in runs.values()]
    for p in policies:
        o, trace = runs[p]
        if not o.ok:
            part.html.append(report.note(f"{report.esc(p)}: {report.esc(o.error)}", warn=True))
            continue
        try:
            series = dprio.series(_read_trace(trace))
        except Exception as exc:
            part.html.append(report.note(f"{report.esc(p)}: trace unreadable: "
                                         f"{report.esc(exc)}", warn=True))
            continue
        if not series:
            part.html.append(report.note(f"{report.esc(p)} writes no dynamic-priority "
                                         "counter.", warn=False))
            continue
        fig = plots.counter_timeline(series, title=f"{p}: dynamic priority against time")
        png, svg = ctx.save_figure(fig, f"seed000-dprio-{p}")
        part.files += [ctx.out / png, ctx.out / svg]
        part.html.append(report.figure(
            png, f"{p}: dynamic priority of the hog and the interactive task "
            f"(trace: {ctx.rel(trace)}).", svg_rel=svg))
    return part

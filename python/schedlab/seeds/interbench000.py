"""Seed 000's Interbench part: interbench-style tables per benchmarked task.

The seed (Toshiba, 2006) ran Interbench (Con Kolivas; v0.30 was current for Linux 2.6.17)
under ingosched, ingo_ll, nicksched and staircase, in normal and real-time (``-r``) mode.
Its slides "Interbench 結果 (non-RT)" and "(RT)" are images: the text layer of the seed
gives **no Interbench numbers**, only these remarks: the excerpt shown is task Video under
load X; "Staircase's performance stands out as remarkably good"; latency is "the time from
requesting the desired CPU until getting it"; "in RT mode they hardly differ"; and "even
with I/O loads Deadlines Met is high, which may be odd". This module therefore shows the
simulated tables and checks the remarks qualitatively; it does not compare numbers.

``part(ctx, policies)`` runs ``schedlab gen interbench`` for every (task, load) pair
interbench runs (never a task against itself) under every policy, plus Video under X in
real-time mode. Metrics: :mod:`schedlab.interbench`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schedlab.interbench import LABELS, LOADS, TASKS, interbench_metrics, sizes
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import Part, RunOutcome
from schedlab.seeds.seed000 import policy_sweep
from schedlab.sweep import Sweep

if TYPE_CHECKING:
    from schedlab.report.context import Context

__all__ = ["pairs", "part"]

#: The machine: seed 000's board had one core; HZ=1000 as in the rest of seed 000's section.
CPUS = 1
HZ = 1000
SEED = 1
#: The sweep's (and its dataset's) name.
SWEEP = "seed000-interbench"

#: The four figures per policy (Gaming has no deadlines: interbench omits the column).
FIGURES: tuple[tuple[str, str], ...] = (
    ("latency", "latency mean ± SD (ms)"),
    ("latency_max_ms", "max (ms)"),
    ("desired_cpu_pct", "% desired CPU"),
    ("deadlines_met_pct", "% deadlines met"),
)


def pairs() -> list[tuple[str, str]]:
    """Every (task, load) interbench runs: a task is never its own load."""
    return [(t, ld) for t in TASKS for ld in LOADS if ld != t]


def _spec_name(task: str, load: str, rt: bool = False) -> str:
    return f"seed000-interbench-{task}-{load}{'-rt' if rt else ''}"


def _jobs() -> list[tuple[str, str, bool]]:
    """(task, load, real time?) of every spec: the matrix, then Video under X with -r."""
    return [(t, ld, False) for t, ld in pairs()] + [("video", "x", True)]


def sweep(ctx: Context, policies: Sequence[str]) -> Sweep:
    """Every spec of :func:`_jobs` under every policy, as the sweep ``seed000-interbench``
    (samples kept: the figures are read from the benchmarked task's activations)."""
    specs = {}
    for task, load, rt in _jobs():
        opts = sizes(load, ctx.quick)
        if rt:
            opts["rt"] = True
        specs[_spec_name(task, load, rt)] = ctx.generate("interbench", task=task, load=load,
                                                         cpus=CPUS, **opts)
    return policy_sweep(SWEEP, specs, policies, SEED, samples=True,
                        overrides={"cpus": CPUS, "hz": HZ})


def _figures(o: RunOutcome, task: str) -> dict[str, Any] | str:
    """The metrics of one run, or the error text."""
    if not o.ok or o.result is None:
        return o.error or "no result"
    try:
        return interbench_metrics(o.result, task=task)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _cells(m: dict[str, Any] | str | None, deadlines: bool, us: bool = False) -> list[Any]:
    n = 4 if deadlines else 3
    if m is None:
        return [None] * n
    if isinstance(m, str):
        return [Cell("error", cls="error", title=m)] + [None] * (n - 1)
    if m["frames"] == 0:
        why = "no frame completed within the run (the task was starved)"
        return [Cell("no frame", cls="error", title=why)] + [None] * (n - 1)
    k = 1000.0 if us else 1.0  # interbench prints µs in real-time mode
    cells: list[Any] = [
        f"{m['latency_mean_ms'] * k:.1f} ± {m['latency_sd_ms'] * k:.1f}",
        Cell(m["latency_max_ms"] * k, kind="num", decimals=1),
        Cell(m["desired_cpu_pct"], kind="num", decimals=1),
    ]
    if deadlines:
        cells.append(Cell(m["deadlines_met_pct"], kind="num", decimals=1))
    return cells


def _table(task: str, policies: Sequence[str], loads: Sequence[str],
           got: dict[tuple[str, str, str], dict[str, Any] | str], rt: bool = False) -> Table:
    deadlines = task != "gaming"
    figs = FIGURES if deadlines else FIGURES[:3]
    columns = [Column("load")]
    for _p in policies:
        columns += [Column(h.replace("(ms)", "(µs)") if rt else h,
                           "text" if k == "latency" else "num") for k, h in figs]
    rows = [[LABELS[ld], *[c for p in policies
                           for c in _cells(got.get((task, ld, p)), deadlines, rt)]]
            for ld in loads]
    mode = "real time (SCHED_FIFO 95)" if rt else "SCHED_OTHER nice 0"
    return Table(
        id=f"seed000-interbench-{task}{'-rt' if rt else ''}",
        caption=f"Interbench: simulated {LABELS[task]} ({mode}) against each load",
        columns=columns,
        groups=[("", 1, ""), *[(p, len(figs), "") for p in policies]],
        rows=rows,
    )


def _remarks(policies: Sequence[str],
             got: dict[tuple[str, str, str], dict[str, Any] | str]) -> str:
    """Check the seed's qualitative remarks against the simulation."""
    def mean(task: str, load: str, p: str, key: str) -> float | None:
        m = got.get((task, load, p))
        return m[key] if isinstance(m, dict) and m["frames"] else None

    parts = []
    vx = {p: mean("video", "x", p, "latency_mean_ms") for p in policies}
    known = {p: v for p, v in vx.items() if v is not None}
    if known:
        best = min(known.values())
        winners = [p for p, v in known.items() if v == best]
        parts.append(f"Video under X (the seed's excerpt): lowest mean latency {best:.2f} ms "
                     f"under {', '.join(winners)}.")
    if "staircase" in policies and len(policies) > 1:
        best = total = 0
        for task, load in pairs():
            vals = {p: mean(task, load, p, "latency_mean_ms") for p in policies}
            if vals["staircase"] is None:
                continue
            total += 1
            best += all(v is None or vals["staircase"] <= v for v in vals.values())
        parts.append(f"staircase (the seed: “stands out as remarkably good”) has the lowest "
                     f"or equal-lowest mean latency in {best} of {total} task/load pairs.")
    io = [(t, ld, p) for t in ("audio", "video", "x") for ld in ("write", "read")
          for p in policies]
    dl = [mean(*k, "deadlines_met_pct") for k in io]
    dl = [d for d in dl if d is not None]
    if dl:
        parts.append(f"Under the Write and Read loads, deadlines met range "
                     f"{min(dl):.1f}–{max(dl):.1f} % (the seed found them suspiciously high "
                     f"with I/O; here I/O is a run/sleep model, see below).")
    rt = {p: mean("video", "x", p + "#rt", "latency_mean_ms") for p in policies}
    rtk = [v for v in rt.values() if v is not None]
    if rtk:
        parts.append(f"In real-time mode Video under X has mean latency "
                     f"{min(rtk):.2f}–{max(rtk):.2f} ms across policies (the seed: “RT hardly "
                     f"differs between schedulers”).")
    return " ".join(parts)


def part(ctx: Context, policies: Sequence[str]) -> Part:
    """Run the Interbench matrix under ``policies`` and render one table per task."""
    if not policies:
        return Part(render("seed000_interbench.html.j2", problem="No policy to run "
                           "Interbench under.", warn=False))
    try:
        runs = ctx.sweep(sweep(ctx, policies), "seed 000: interbench")
    except Exception as exc:  # a spec not made or refused: shown on the page
        return Part(render("seed000_interbench.html.j2",
                           problem=f"Interbench could not be generated: {exc}", warn=True))
    got: dict[tuple[str, str, str], dict[str, Any] | str] = {}
    which = {_spec_name(t, ld, rt): (t, ld, rt) for t, ld, rt in _jobs()}
    for o in runs:
        task, load, rt = which[o.request.spec_name]
        got[(task, load, o.request.scheduler + ("#rt" if rt else ""))] = _figures(o, task)
    tables = [_table(task, policies, [ld for ld in LOADS if ld != task], got) for task in TASKS]
    rt_got = {("video", "x", p): v for p in policies
              if (v := got.get(("video", "x", p + "#rt"))) is not None}
    tables.append(_table("video", policies, ["x"], rt_got, rt=True))
    sizes_text = ("quick: 2 s of benchmark after 1 s of load alone; Hack 1 s with one "
                  "hackbench group" if ctx.quick else "interbench's: 30 s after 1 s of load "
                  "alone; Hack = hackbench 50")
    html = render("seed000_interbench.html.j2", problem="", warn=False, tables=tables,
                  remarks=_remarks(policies, got), sizes=sizes_text, cpus=CPUS, hz=HZ,
                  seed=SEED)
    return Part(html, runs=runs)

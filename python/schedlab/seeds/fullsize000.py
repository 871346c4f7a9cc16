"""Quick mode against the full size: whether each ordering the seed-000 section reports at
its quick sizes is the ordering the full-size run gives.

``schedlab reproduce --quick`` runs seed 000's hackbench with a tenth of the loops and the
wake-up tests with a fifth of the broadcasts (:data:`schedlab.seeds.seed000.QUICK`), so
its orderings may differ from the full run's. The experiments the section compares
orderings on all run on the seed's board profile, one CPU, and are cheap at the full size
too: in quick mode this part runs the full-size board hackbench, both full-size wake-up
tests and the full-size preemption-model runs alongside, from the very specs the full run
makes, and compares every ordering pair by pair (:func:`schedlab.seeds.seed000.pair_changes`).
What costs too much at the full size for quick mode — Interbench's 30 s benchmarks — is
said to be unchecked, not guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import _core, api
from schedlab.preemption import PREEMPT_MODELS
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import Part, RunOutcome
from schedlab.seeds import hackbench000, kernel000, wakeup000
from schedlab.seeds.seed000 import (
    FILTER_LABEL,
    FILTERS,
    WAITER_LABEL,
    WAITERS,
    agreement_items,
    pair_changes,
    policy_sweep,
    settings,
)
from schedlab.sweep import Sweep

if TYPE_CHECKING:
    from schedlab.report.context import Context

Stats = dict[str, Any]
Values = Mapping[str, float | None]

#: What quick mode leaves unchecked against the full size, and why.
UNCHECKED: tuple[tuple[str, str], ...] = (
    ("Interbench remarks (lowest mean latency per task and load)",
     "unchecked: its full size is interbench's own 30 s of benchmark after 1 s of load per "
     "run, too long for quick mode; the quick ordering may differ from the full run's"),
    ("scheduler cost per decision",
     "unchecked: ns per decision are timings of this machine at the moment they ran, and "
     "quick mode measures fewer task counts; the counted work units do not depend on the "
     "mode"),
)
#: What runs alike in both modes (no quick size): nothing to check.
SAME_IN_BOTH = ("timeslice against nice", "fork() and sched_yield() behaviour",
                "dynamic priority")


@dataclass
class Check:
    """One ordering the section reports: how many pairs the quick run and the full-size
    run both order, and those they order differently (or why it was not checked)."""

    ordering: str
    pairs: int = 0
    changed: list[str] = field(default_factory=list)
    unchecked: str = ""

    @property
    def same(self) -> bool:
        return not self.unchecked and not self.changed


def check(ordering: str, quick: Values, full: Values) -> Check:
    pairs, changed = pair_changes(quick, full)
    return Check(ordering, pairs, changed)


def check_each(ordering: str, quick: Mapping[str, Values], full: Mapping[str, Values]
               ) -> Check:
    """One ordering per key (e.g. per policy), counted together; a changed pair names
    its key."""
    pairs, changed = 0, []
    for key, q in quick.items():
        n, c = pair_changes(q, full.get(key, {}))
        pairs += n
        changed += [f"{key}: {x}" for x in c]
    return Check(ordering, pairs, changed)


@dataclass
class FullSize:
    """The full-size runs' values, shaped as the section's parts keep theirs."""

    #: hackbench seconds per policy on the board.
    hackbench: dict[str, float | None] = field(default_factory=dict)
    #: [waiters][policy] -> raw wake-up statistics (µs), the 6σ-filtered ones inside.
    wakeup: dict[str, dict[str, Stats | None]] = field(default_factory=dict)
    #: [measure][policy][model] -> wake-up statistics (µs).
    preempt: dict[str, dict[str, dict[str, Stats | None]]] = field(default_factory=dict)


#: The full-size runs' sweeps: hackbench (no samples), and the wake-up tests (samples).
HACKBENCH_SWEEP = "seed000-full-hackbench"
WAKEUP_SWEEP = "seed000-full-wakeup"


def sweeps(ctx: Context, policies: Sequence[str]) -> tuple[list[Sweep], dict[str, str]]:
    """The full-size board runs as sweeps, and the waiter prefix of each wake-up spec."""
    full = settings(False)
    hackbench = policy_sweep(
        HACKBENCH_SWEEP, {"seed000-full-hackbench-board": hackbench000.board_spec(ctx, full)},
        policies, full.seed, samples=False)
    specs: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for w in WAITERS:
        specs[f"seed000-full-wakeup-{w}"] = text = wakeup000.board_spec(ctx, full, w)
        prefixes[f"wakeup-{w}"] = wakeup000.waiter_prefix(api.spec_view(text))
    chosen = kernel000.preempt_policies(policies)
    for m in PREEMPT_MODELS:
        specs[f"seed000-full-preempt-{m}"] = text = kernel000.preempt_spec(ctx, full, m)
        prefixes[f"preempt-{m}"] = wakeup000.waiter_prefix(api.spec_view(text))
    wakeup = policy_sweep(WAKEUP_SWEEP, specs, policies, full.seed, samples=True,
                          policies_of={f"seed000-full-preempt-{m}": chosen
                                       for m in PREEMPT_MODELS})
    return [hackbench, wakeup], prefixes


def _collect(runs: Sequence[RunOutcome], prefixes: Mapping[str, str]) -> FullSize:
    out = FullSize(wakeup={w: {} for w in WAITERS},
                   preempt={k: {} for k in kernel000.MEASURES})
    for o in runs:
        kind = o.request.spec_name.removeprefix("seed000-full-")
        p = o.request.scheduler
        res = o.result if o.ok else None
        if kind == "hackbench-board":
            out.hackbench[p] = hackbench000.hackbench_seconds(res) if res else None
        elif kind.startswith("wakeup-"):
            w = kind.removeprefix("wakeup-")
            out.wakeup[w][p] = (wakeup000.wakeup_from_result(res, prefixes[kind]).stats
                                if res else None)
        else:
            m = kind.removeprefix("preempt-")
            for k in kernel000.MEASURES:
                out.preempt[k].setdefault(p, {})[m] = (wakeup000.stats_us(_core.stats(
                    kernel000.latencies_ns(res, k, prefixes[kind]))) if res else None)
    return out


def _pick(stats: Stats | None, flt: str, key: str) -> float | None:
    return (wakeup000.select(stats, flt) or {}).get(key)


def checks(quick_hb: Values, quick_wk: Mapping[str, Mapping[str, Stats | None]],
           quick_pre: Mapping[str, Mapping[str, Mapping[str, Stats | None]]],
           full: FullSize) -> list[Check]:
    """Every ordering the section reports, quick against full."""
    out = [check("hackbench time per policy, board profile", quick_hb, full.hackbench)]
    for w in WAITERS:
        for flt in FILTERS:
            for key, word in (("mean", "mean"), ("max", "worst single")):
                out.append(check(
                    f"{WAITER_LABEL[w]}, {FILTER_LABEL[flt]}: {word} wake-up latency per "
                    "policy",
                    {p: _pick(s, flt, key) for p, s in quick_wk.get(w, {}).items()},
                    {p: _pick(s, flt, key) for p, s in full.wakeup.get(w, {}).items()}))
    rt, nrt = WAITERS
    both = {p: {"RT": _pick(s, "raw", "mean"),
                "non-RT": _pick(quick_wk.get(nrt, {}).get(p), "raw", "mean")}
            for p, s in quick_wk.get(rt, {}).items()}
    both_full = {p: {"RT": _pick(s, "raw", "mean"),
                     "non-RT": _pick(full.wakeup.get(nrt, {}).get(p), "raw", "mean")}
                 for p, s in full.wakeup.get(rt, {}).items()}
    out.append(check_each("RT against non-RT waiters, raw mean, per policy", both, both_full))
    for k, label in kernel000.MEASURES.items():
        q = {p: {m: (s or {}).get("max") for m, s in by.items()}
             for p, by in quick_pre.get(k, {}).items()}
        f = {p: {m: (s or {}).get("max") for m, s in by.items()}
             for p, by in full.preempt.get(k, {}).items()}
        out.append(check_each(f"maximum by preemption model, {label}, per policy", q, f))
    return out


def table(rows: Sequence[Check]) -> Table:
    body: list[list[Any]] = []
    for c in rows:
        if c.unchecked:
            body.append([c.ordering, None, Cell(c.unchecked, cls="missing")])
        elif not c.pairs:
            body.append([c.ordering, Cell(0, kind="int"),
                         Cell("no pair has values in both runs", cls="missing")])
        elif c.changed:
            body.append([c.ordering, Cell(c.pairs, kind="int"),
                         Cell(f"differs on {len(c.changed)}: " + "; ".join(c.changed),
                              cls="error")])
        else:
            body.append([c.ordering, Cell(c.pairs, kind="int"), "same on every pair"])
    return Table(columns=[Column("ordering the section reports"), Column("pairs", "int"),
                          Column("full size")],
                 rows=body, id="seed000-quick-vs-full",
                 caption="Quick mode's orderings against the full-size runs")


def summary(rows: Sequence[Check]) -> str:
    """The sentence over the table, from its rows."""
    checked = [c for c in rows if not c.unchecked and c.pairs]
    same = [c for c in checked if c.same]
    text = (f"Of the {len(checked)} orderings checked, {len(same)} order every pair as the "
            "full-size run does")
    differ = [c for c in checked if c.changed]
    if differ:
        text += "; " + "; ".join(f"{c.ordering}: {len(c.changed)} of {c.pairs} pairs differ"
                                 for c in differ)
    empty = [c.ordering for c in rows if not c.unchecked and not c.pairs]
    if empty:
        text += ("; no pair has values in both runs for " + ", ".join(empty)
                 + " (a run without samples orders nothing)")
    unchecked = [c.ordering for c in rows if c.unchecked]
    if unchecked:
        text += (". Unchecked against the full size: " + ", ".join(unchecked)
                 + " (the table says why)")
    return text + "."


def part(ctx: Context, policies: Sequence[str], quick_hb: Values,
         quick_wk: Mapping[str, Mapping[str, Stats | None]],
         quick_pre: Mapping[str, Mapping[str, Mapping[str, Stats | None]]]) -> Part:
    """In quick mode, the full-size board runs and each ordering checked against them;
    in a full run, nothing (its orderings are the full size's)."""
    if not ctx.quick or not policies:
        return Part(render("seed000_fullsize.html.j2", table=None))
    runs: list[RunOutcome] = []
    #: The agreement lines with the seed: (quick, full size).
    agree: tuple[list[str], list[str]] = ([], [])
    try:
        planned, prefixes = sweeps(ctx, policies)
        for sweep in planned:
            runs += ctx.sweep(sweep, "seed 000: full-size orderings")
    except Exception as exc:  # shown on the page
        runs = []
        rows = [Check("seed 000's orderings",
                      unchecked=f"unchecked: the full-size specs could not be made: {exc}")]
    else:
        full = _collect(runs, prefixes)
        rows = checks(quick_hb, quick_wk, quick_pre, full)
        agree = (agreement_items(quick_hb, _means(quick_wk)),
                 agreement_items(full.hackbench, _means(full.wakeup)))
    rows += [Check(o, unchecked=why) for o, why in UNCHECKED]
    html = render("seed000_fullsize.html.j2", table=table(rows), summary=summary(rows),
                  full_agreement=agree[1], agreement_same=bool(runs) and agree[0] == agree[1],
                  same_in_both=SAME_IN_BOTH, sizes=settings(False).description,
                  specs=sorted({r.request.spec_name for r in runs}))
    return Part(html=html, runs=runs)


def _means(wk: Mapping[str, Mapping[str, Stats | None]]) -> dict[str, dict[str, float | None]]:
    return {w: {p: _pick(s, "raw", "mean") for p, s in by.items()} for w, by in wk.items()}

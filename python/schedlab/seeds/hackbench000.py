"""Seed 000's hackbench part: ``hackbench 30`` per policy on three machine models, beside
the seed's times (slide "Hackbench 結果").

The zero-cost machine charges nothing for a context switch; the host-cost machine charges
this host's measured pipe hop per switch and its measured call cost per pipe or socket
call (:mod:`schedlab.hostcosts`), written into the saved spec so that rerunning it gives
the same numbers on any machine; the board machine is the seed's board profile
(:mod:`schedlab.seeds.board000`: the host's costs × one slowdown fitted to the wake-up
test's minimum, so its hackbench times are predictions). The comparison with the seed's
ordering is made on the board.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import api, hostcosts, plots
from schedlab.report import Cell, Column, Table, fmt, render
from schedlab.report.context import Part, RunOutcome
from schedlab.result import Result
from schedlab.seeds.seed000 import (
    PLATFORM,
    PUBLISHED_HACKBENCH_S,
    SEED_COUNTERPART,
    SEED_SCHEDULERS,
    Settings,
    on_board,
    on_machine,
    pair_agreement,
    policy_sweep,
    ranking,
    row_order,
    seed_name_of,
)

if TYPE_CHECKING:
    from schedlab.report.context import Context, Figure

#: The machine models: nothing charged, this host's measured costs, the seed's board.
MODELS = ("zero-cost", "host-cost", "board")
#: The model the seed's ordering is compared on.
COMPARED = "board"
#: The sweep (a spec per machine model × every policy) and its dataset's name.
SWEEP = "seed000-hackbench"


@dataclass
class HackbenchPart(Part):
    #: The zero-cost spec as run (for the machine note).
    spec: dict[str, Any] | None = None
    #: hackbench seconds per policy on the board machine.
    board_seconds: dict[str, float | None] = field(default_factory=dict)


def hackbench_seconds(result: Result) -> float | None:
    """hackbench's time: the run's headline (kick-off mark → last exit), in seconds."""
    head = result.headline or {}
    if head.get("value") is None:
        return None
    scale = {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[head.get("unit", "s")]
    return float(head["value"]) / scale


def zero_cost_spec(ctx: Context, st: Settings) -> str:
    """hackbench at the sizes ``st`` gives on the seed's machine, nothing charged."""
    return api.edit_spec(ctx.generate("hackbench", **st.hackbench),
                         lambda spec: on_machine(spec, st))


def board_spec(ctx: Context, st: Settings) -> str:
    """hackbench at the sizes ``st`` gives on the seed's board profile."""
    return api.edit_spec(zero_cost_spec(ctx, st), on_board)


def _specs(ctx: Context, st: Settings) -> dict[str, str]:
    zero = zero_cost_spec(ctx, st)
    return {"zero-cost": zero, "host-cost": hostcosts.apply(zero, ctx.host_costs()),
            "board": api.edit_spec(zero, on_board)}


def _run(ctx: Context, st: Settings, policies: Sequence[str],
         specs: Mapping[str, str]) -> dict[str, dict[str, RunOutcome]]:
    sweep = policy_sweep(SWEEP, {f"seed000-hackbench-{m}": specs[m] for m in MODELS},
                         policies, st.seed, samples=False)
    runs: dict[str, dict[str, RunOutcome]] = {m: {} for m in MODELS}
    for o in ctx.sweep(sweep, "seed 000: hackbench"):
        runs[o.request.spec_name.removeprefix("seed000-hackbench-")][o.request.scheduler] = o
    return runs


def _err_cell(error: str) -> Cell:
    short = error if len(error) < 60 else error[:57] + "…"
    return Cell(f"failed: {short}", kind="text", cls="error", title=error)


def policy_cell(seed: str | None, policy: str | None, ctx: Context) -> Cell:
    """The "schedlab policy" cell of a seed scheduler's row."""
    if policy is not None:
        return Cell(policy)
    entry = ctx.policy(SEED_COUNTERPART[seed]) if seed else None
    if entry is not None and not entry.get("available", True):
        return Cell("not modelled", cls="missing", title=str(entry.get("reason") or ""))
    return Cell(f"{SEED_COUNTERPART.get(seed or '', '?')} — not in this build", cls="missing")


def _table(ctx: Context, policies: Sequence[str], runs: Mapping[str, Mapping[str, RunOutcome]],
           secs: Mapping[str, Mapping[str, float | None]]) -> Table:
    fastest_pub = min(PUBLISHED_HACKBENCH_S.values())
    board = [v for v in secs[COMPARED].values() if v]
    fastest = min(board) if board else None
    rows = []
    for seed_name, policy in row_order(policies):
        pub = PUBLISHED_HACKBENCH_S.get(seed_name) if seed_name else None
        outcome = {m: runs[m].get(policy) if policy else None for m in MODELS}
        cells = [_err_cell(o.error or "no result") if o is not None and not o.ok
                 else secs[m].get(policy) if policy else None for m, o in outcome.items()]
        v = secs[COMPARED].get(policy) if policy else None
        ok = outcome[COMPARED] is not None and outcome[COMPARED].ok
        rows.append([
            seed_name or "—", policy_cell(seed_name, policy, ctx),
            Cell(pub, decimals=3) if pub is not None else None,
            pub / fastest_pub if pub is not None else None, *cells,
            v / fastest if v and fastest else None,
            outcome[COMPARED].result.totals["switches"] if ok else None,  # type: ignore[union-attr]
        ])
    return Table(
        id="seed000-hackbench", caption="hackbench: time to completion (seconds)",
        columns=[Column("seed scheduler"), Column("schedlab policy"),
                 Column("published s", "s", cls="pub"), Column("÷ fastest", "ratio", cls="pub"),
                 Column("zero-cost s", "s"), Column("host-cost s", "s"), Column("board s", "s"),
                 Column("board ÷ fastest", "ratio"), Column("board switches", "int")],
        groups=[("", 2, ""), ("seed (published)", 2, "pub"), ("schedlab (simulated)", 5, "")],
        rows=rows)


def models_text(secs: Mapping[str, Mapping[str, float | None]]) -> str:
    """Why the zero-cost times tie (or not), and what the host costs change."""
    zero = [v for v in secs["zero-cost"].values() if v is not None]
    host = [v for v in secs["host-cost"].values() if v is not None]
    if not zero:
        return ""
    if max(zero) - min(zero) <= 1e-9 * max(zero):
        parts = [f"On the zero-cost machine every policy takes {fmt(zero[0], 's')} s: with "
                 "nothing charged for a switch or for the scheduler's own work, a "
                 "work-conserving scheduler finishes the same work in the same time."]
    else:
        parts = [f"On the zero-cost machine the times span {fmt(min(zero), 's')}–"
                 f"{fmt(max(zero), 's')} s."]
    if host:
        parts.append(f"With this host's measured costs they span {fmt(min(host), 's')}–"
                     f"{fmt(max(host), 's')} s: a policy now pays for every context switch it "
                     "makes, so the number of switches orders them — the mechanism the "
                     "seed's differences come from.")
    board = [v for v in secs.get("board", {}).values() if v is not None]
    if board:
        pub = PUBLISHED_HACKBENCH_S.values()
        parts.append(f"On the seed's board profile (costs fitted to the wake-up test's minimum, "
                     f"not to hackbench) they span {fmt(min(board), 's')}–{fmt(max(board), 's')} "
                     f"s, a prediction to set against the seed's {fmt(min(pub), 's')}–"
                     f"{fmt(max(pub), 's')} s.")
    return " ".join(parts)


def _rank_text(rank: list[tuple[str, float]]) -> str:
    return ", ".join(f"{n} ({fmt(v, 's')} s)" for n, v in rank)


def _spread(rank: list[tuple[str, float]]) -> str:
    return f"slowest ÷ fastest = {fmt(rank[-1][1] / rank[0][1], 'ratio')}"


def _ordering_text(published: Mapping[str, float], simulated: Mapping[str, float | None],
                   pub_rank: list[tuple[str, float]], sim_rank: list[tuple[str, float]]) -> str:
    agree, total = pair_agreement(published, simulated)
    if total:
        first_pub = next(n for n, _ in pub_rank if simulated.get(n) is not None)
        verdict = "they agree" if first_pub == sim_rank[0][0] else "they differ"
        return (f"The simulation orders {agree} of {total} comparable pairs of seed schedulers "
                f"the same way as the seed. Among the modelled ones the seed's fastest is "
                f"{first_pub}; the simulation's is {sim_rank[0][0]} — {verdict}.")
    if sum(1 for n in published if simulated.get(n) is not None) < 2:
        return "Only one seed scheduler is modelled so far, so no ordering can be compared yet."
    return ("The modelled seed schedulers tie, so no ordering can be compared: the model "
            "charges nothing for a context switch or for the scheduler's own work, and a "
            "work-conserving scheduler then finishes the same work in the same time. The "
            "seed's differences come from exactly those costs.")


def hackbench_text(published: Mapping[str, float], simulated: Mapping[str, float | None],
                   extra: Mapping[str, float | None]) -> str:
    """The paragraph under the hackbench table, from the numbers."""
    pub_rank = ranking(published)
    parts = [f"Seed, fastest first: {_rank_text(pub_rank)}; {_spread(pub_rank)}."]
    sim_rank = ranking(simulated)
    if not sim_rank:
        parts.append("No seed scheduler has a simulated counterpart yet, so the ranking "
                     "cannot be compared.")
    else:
        spread = f"; {_spread(sim_rank)}." if len(sim_rank) > 1 else "."
        parts.append(f"Simulated counterparts, fastest first: {_rank_text(sim_rank)}{spread}")
        parts.append(_ordering_text(published, simulated, pub_rank, sim_rank))
    ex = ranking(extra)
    if ex:
        parts.append(f"Also simulated (no seed counterpart): {_rank_text(ex)}.")
    return " ".join(parts)


def _figure(ctx: Context, policies: Sequence[str],
            board: Mapping[str, float | None]) -> Figure:
    labels = list(SEED_SCHEDULERS) + [p for p in policies if seed_name_of(p) is None]
    fastest_pub = min(PUBLISHED_HACKBENCH_S.values())
    known = [v for v in board.values() if v]
    fastest = min(known) if known else None
    pub = [PUBLISHED_HACKBENCH_S[x] / fastest_pub if x in PUBLISHED_HACKBENCH_S else None
           for x in labels]
    sim = [board.get(SEED_COUNTERPART.get(x, x)) for x in labels]
    sim_rel = [v / fastest if v and fastest else None for v in sim]
    fig = plots.bar_compare(labels, {"seed (published)": pub,
                                     "schedlab (board profile)": sim_rel},
                            title="hackbench time relative to the fastest",
                            ylabel="time ÷ fastest")
    return ctx.save_figure(fig, "seed000-hackbench",
                           "hackbench time ÷ the fastest scheduler of each column (seed "
                           "counterparts by seed name; simulated on the seed's board profile).")


def part(ctx: Context, st: Settings, policies: Sequence[str]) -> HackbenchPart:
    """hackbench 30 per policy on both machine models, beside the seed's times."""
    runs: dict[str, dict[str, RunOutcome]] = {m: {} for m in MODELS}
    error = None
    specs: dict[str, str] = {}
    if policies:
        try:
            specs = _specs(ctx, st)
            runs = _run(ctx, st, policies, specs)
        except Exception as exc:  # shown on the page; the published figures still are
            error = f"{type(exc).__name__}: {exc}"
    secs = {m: {p: hackbench_seconds(o.result) if o.ok and o.result else None
                for p, o in runs[m].items()} for m in MODELS}
    board = secs[COMPARED]
    fig = _figure(ctx, policies, board)
    html = render(
        "seed000_hackbench.html.j2", table=_table(ctx, policies, runs, secs), platform=PLATFORM,
        costs=ctx.host_costs().describe() if specs else "",
        spec_names=[f"seed000-hackbench-{m}" for m in MODELS] if specs else [],
        error=error, models_text=models_text(secs),
        ranking_text=hackbench_text(
            PUBLISHED_HACKBENCH_S, {s: board.get(p) for s, p in SEED_COUNTERPART.items()},
            {p: v for p, v in board.items() if seed_name_of(p) is None}),
        fig=fig)
    return HackbenchPart(
        html=html, files=ctx.figure_files(fig),
        runs=[o for m in MODELS for o in runs[m].values()],
        spec=api.spec_view(specs["zero-cost"]) if specs else None, board_seconds=board)

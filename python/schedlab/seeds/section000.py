"""The seed-000 section of the report: seed 000's experiments (:mod:`.seed000`) under
every available Linux-family policy, laid out beside the published figures."""

from __future__ import annotations

from schedlab.report import render
from schedlab.report.context import Context, RunOutcome, SectionOutput, runs_table
from schedlab.seeds import (
    behaviour000,
    board000,
    cost000,
    fullsize000,
    hackbench000,
    interbench000,
    kernel000,
    wakeup000,
)
from schedlab.seeds.seed000 import (
    CITATION,
    PLATFORM,
    SEED_SCHEDULERS,
    agreement_items,
    linux_policies,
    machine_text,
    not_modelled,
    settings,
)

SECTION_ID = "seed000"
TITLE = "Seed 000 — scheduler comparison and real-time thread survey (Toshiba, 2006)"


def section(ctx: Context) -> SectionOutput:
    """Run seed 000's experiments under every available Linux-family policy and render."""
    st = settings(ctx.quick)
    policies = linux_policies(ctx.registry)
    hb = hackbench000.part(ctx, st, policies)
    wk = wakeup000.part(ctx, st, policies)
    usleep, preempt = kernel000.usleep_part(ctx, st, policies), kernel000.preempt_part(
        ctx, st, policies)
    parts = [interbench000.part(ctx, policies),
             behaviour000.timeslice_part(ctx, policies, st.hz),
             behaviour000.fork_yield_part(ctx, policies),
             behaviour000.dprio_part(ctx, policies),
             cost000.part(ctx, policies), usleep, preempt]
    full = fullsize000.part(ctx, policies, hb.board_seconds, wk.stats, preempt.stats)
    runs: list[RunOutcome] = [*hb.runs, *wk.runs, *(r for p in [*parts, full] for r in p.runs)]
    html = render(
        "seed000.html.j2",
        citation=CITATION, platform=PLATFORM, seed_schedulers=SEED_SCHEDULERS,
        policies=policies, missing=not_modelled(ctx.registry),
        machine=machine_text(hb.spec, st),
        host_costs=ctx.host_costs().describe() if policies else "",
        board=board000.describe(),
        sizes=st.description, hackbench=hb.html, wakeup=wk.html,
        parts=[p.html for p in parts],
        agreement=agreement_items(hb.board_seconds, wk.raw_means), starved=wk.starved,
        fullsize=full.html,
        runs=runs_table(runs) if runs else None,
    )
    files = hb.files + wk.files + [f for p in [*parts, full] for f in p.files]
    return SectionOutput(id=SECTION_ID, title=TITLE, html=html, files=files)

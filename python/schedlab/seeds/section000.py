"""The seed-000 section of the report: seed 000's experiments (:mod:`.seed000`) under
every available Linux-family policy, laid out beside the published figures."""

from __future__ import annotations

from collections.abc import Mapping

from schedlab.report import render
from schedlab.report.context import Context, RunOutcome, SectionOutput, runs_table
from schedlab.seeds import (
    behaviour000,
    board000,
    cost000,
    hackbench000,
    interbench000,
    kernel000,
    wakeup000,
)
from schedlab.seeds.seed000 import (
    CITATION,
    PLATFORM,
    PUBLISHED_HACKBENCH_S,
    PUBLISHED_WAKEUP,
    SEED_COUNTERPART,
    SEED_SCHEDULERS,
    WAITER_LABEL,
    WAITERS,
    agreement_phrase,
    linux_policies,
    machine_text,
    not_modelled,
    settings,
)

SECTION_ID = "seed000"
TITLE = "Seed 000 — scheduler comparison and real-time thread survey (Toshiba, 2006)"


def agreement_items(hackbench: Mapping[str, float | None],
                    wake_means: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    """What agrees with the seed, computed from the tables (the reasons it cannot agree
    elsewhere are in the template)."""
    items: list[str] = []
    seed_hb = {s: hackbench.get(p) for s, p in SEED_COUNTERPART.items()}
    phrase = agreement_phrase(PUBLISHED_HACKBENCH_S, seed_hb)
    if phrase:
        items.append(f"hackbench (board profile): {phrase}.")
    for w in WAITERS:
        pub = {s: f.avg for s, f in PUBLISHED_WAKEUP[w]["raw"].items()}
        sim = {s: wake_means.get(w, {}).get(p) for s, p in SEED_COUNTERPART.items()}
        phrase = agreement_phrase(pub, sim)
        if phrase:
            items.append(f"{WAITER_LABEL[w]}, raw mean wake-up latency: {phrase}.")
    return items


def section(ctx: Context) -> SectionOutput:
    """Run seed 000's experiments under every available Linux-family policy and render."""
    st = settings(ctx.quick)
    policies = linux_policies(ctx.registry)
    hb = hackbench000.part(ctx, st, policies)
    wk = wakeup000.part(ctx, st, policies)
    parts = [interbench000.part(ctx, policies),
             behaviour000.timeslice_part(ctx, policies, st.hz),
             behaviour000.fork_yield_part(ctx, policies),
             behaviour000.dprio_part(ctx, policies),
             cost000.part(ctx, policies),
             *kernel000.parts(ctx, st, policies)]
    runs: list[RunOutcome] = [*hb.runs, *wk.runs, *(r for p in parts for r in p.runs)]
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
        runs=runs_table(runs) if runs else None,
    )
    files = hb.files + wk.files + [f for p in parts for f in p.files]
    return SectionOutput(id=SECTION_ID, title=TITLE, html=html, files=files)

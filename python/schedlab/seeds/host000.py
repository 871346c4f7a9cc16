"""Seed 000's broadcast wake-up benchmark on this machine (``schedlab reproduce --host``).

The same generated spec as the simulated section's (``broadcast-wakeup``: an RT thread
broadcasting a condition to RT or non-RT waiters while ``hackbench 10`` is run again and
again), at the same sizes, on this machine's CPUs, run twice: by the host runner on
today's Linux scheduler (real threads, real pthread conditions, the load's tasks as
threads), and by the simulator under this kernel's model (:meth:`KernelFacts
model_scheduler`: EEVDF from 6.6) with the host profile — this machine's measured costs,
its preemption model and HZ as its kernel says them, the timer interrupt fitted. The
tables are the simulated section's: mean, min, max, stddev, p99, count and lost
broadcasts, raw and after the 6σ filter, in µs, through the same functions
(:mod:`schedlab.seeds.wakeup000`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from schedlab import api, hostcheck, hostprofile, runner
from schedlab.report import Column, Table, render
from schedlab.report.context import RunRequest, SectionOutput
from schedlab.seeds.seed000 import FILTER_LABEL, WAITER_LABEL, WAITERS, settings
from schedlab.seeds.wakeup000 import (
    WakeupRun,
    cells,
    waiter_prefix,
    wakeup_from_result,
)

if TYPE_CHECKING:
    from schedlab.report.context import Context

SECTION_ID = "host-seed000"
TITLE = "Host — seed 000's broadcast wake-up on this machine, beside its simulation"

#: The two sides of each table.
SIDES = ("host", "simulated")


def spec(ctx: Context, waiters: str, cpus: int) -> str:
    """The broadcast test at the simulated section's sizes, on ``cpus`` CPUs."""
    st = settings(ctx.quick)
    return ctx.generate("broadcast-wakeup", rt=(waiters == "rt"), cpus=cpus, **st.wakeup)


def why_not() -> str:
    """Why the section cannot run here ("" if it can)."""
    import os

    if os.geteuid() != 0:
        return "not root: the broadcaster is a SCHED_FIFO thread"
    return ""


def table(w: str, flt: str, runs: Mapping[str, WakeupRun], labels: Mapping[str, str]) -> Table:
    return Table(
        id=f"host-seed000-{w}-{flt}",
        caption=f"Wake-up latency, {WAITER_LABEL[w]}, {FILTER_LABEL[flt]} (µs)",
        columns=[Column("run"), Column("avg", "us"), Column("min", "us"), Column("max", "us"),
                 Column("stddev", "us"), Column("p99", "us"), Column("n", "int"),
                 Column("lost", "int")],
        rows=[[labels[side], *cells(runs.get(side), flt)] for side in SIDES])


def section(ctx: Context) -> SectionOutput:
    """Both kinds of waiters on the host and simulated; the kernel facts beside them."""
    facts = hostcheck.kernel_facts()
    values: dict[str, Any] = {"facts": hostcheck.facts_table(facts, "host-seed000-facts"),
                              "problem": why_not(), "quick": ctx.quick}
    if values["problem"]:
        return SectionOutput(SECTION_ID, TITLE, render("host000.html.j2", **values))
    cpus = hostprofile.host_cpus()
    model = str(facts.get("model_scheduler") or hostprofile.FIT_SCHEDULER)
    profile = hostprofile.profile(ctx.host_costs())
    texts = {w: spec(ctx, w, cpus) for w in WAITERS}
    found: dict[str, dict[str, WakeupRun]] = {w: {} for w in WAITERS}
    reqs = [RunRequest(f"host-seed000-sim-{w}", hostprofile.with_profile(texts[w], profile),
                       model, seed=settings(ctx.quick).seed, label=f"host seed 000 / {w}")
            for w in WAITERS]
    for w, o in zip(WAITERS, ctx.run(reqs, "host: seed 000 simulated"), strict=True):
        prefix = waiter_prefix(api.spec_view(texts[w]))
        found[w]["simulated"] = (wakeup_from_result(o.result, prefix)
                                 if o.ok and o.result is not None
                                 else WakeupRun(error=o.error or "no result"))
    for w in WAITERS:
        ctx.save_spec(f"host-seed000-{w}", texts[w])
        prefix = waiter_prefix(api.spec_view(texts[w]))
        try:
            result = runner.execute_on_host(api.load_spec(texts[w]))
            found[w]["host"] = wakeup_from_result(result, prefix)
        except Exception as e:  # shown in its table; the simulated side still is
            found[w]["host"] = WakeupRun(error=f"{type(e).__name__}: {e}")
    preempt = (profile.get("machine", {}).get("kernel") or {}).get("preempt", "the default")
    labels = {"host": f"host: Linux {facts.get('release')} ({cpus} CPUs)",
              "simulated": f"simulated: {model}, host profile, preempt {preempt}"}
    values.update(
        tables=[table(w, flt, found[w], labels) for w in WAITERS for flt in ("raw", "6sigma")],
        sizes=settings(ctx.quick).description, model=model, preempt=preempt,
        specs=[f"host-seed000-{w}" for w in WAITERS],
        sim_specs=[r.spec_name for r in reqs])
    return SectionOutput(SECTION_ID, TITLE, render("host000.html.j2", **values))

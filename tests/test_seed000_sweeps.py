"""Seed 000's parts declared as sweeps (hackbench, the broadcast wake-up test, the usleep
and periodic loops, the preemption-model table, the full-size runs, the traced probes):
their datasets are kept in the report, a report rebuilt from them runs nothing and is
byte-identical, and a Dask cluster gives the same tables as threads. Quick sizes, the real
simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedlab import reproduce
from schedlab import sweep as sw
from schedlab.hostcosts import ChannelCost, HostCosts
from schedlab.report import Markup, parse_tables
from schedlab.report.context import Context, SectionOutput
from schedlab.seeds import (
    behaviour000,
    fullsize000,
    hackbench000,
    interbench000,
    kernel000,
    seed000,
    wakeup000,
)

SECTION_ID = "seed000-sweeps"
SWEEPS = (hackbench000.SWEEP, wakeup000.SWEEP, kernel000.USLEEP_SWEEP, kernel000.PREEMPT_SWEEP,
          fullsize000.HACKBENCH_SWEEP, fullsize000.WAKEUP_SWEEP, "seed000-fork", "seed000-yield",
          "seed000-dprio", interbench000.SWEEP)


def fixed_costs(quick: bool) -> HostCosts:
    def one(kind: str, call: float) -> ChannelCost:
        return ChannelCost(kind=kind, call_ns=call, hop_ns=1800.0, round_trip_ns=4600.0,
                           cpu=0, bytes=100, messages=10, reps=1)

    return HostCosts(pipe=one("pipe", 250.0), socket=one("socket", 600.0))


def not_measured(quick: bool) -> HostCosts:
    raise AssertionError("rebuilt from stored results, yet the host was measured again")


def converted(ctx: Context) -> SectionOutput:
    """The parts of seed 000's section that run simulations (all declared as sweeps), as a
    section: the others are the cost instrument, which times this host, and the timeslice
    tables, which are computed without a run."""
    st = seed000.settings(ctx.quick)
    policies = seed000.linux_policies(ctx.registry)
    hb, wk = hackbench000.part(ctx, st, policies), wakeup000.part(ctx, st, policies)
    usleep, preempt = kernel000.parts(ctx, st, policies)
    full = fullsize000.part(ctx, policies, hb.board_seconds, wk.stats, preempt.stats)
    probes = [behaviour000.fork_yield_part(ctx, policies), behaviour000.dprio_part(ctx, policies)]
    parts = [hb, wk, usleep, preempt, full, *probes, interbench000.part(ctx, policies)]
    html = Markup("".join(str(p.html) for p in parts))
    return SectionOutput(SECTION_ID, "seed 000's sweeps", html,
                         [f for p in parts for f in p.files])


def _section_html(index: Path) -> str:
    page = index.read_text(encoding="utf-8")
    start = page.index(f'<section id="{SECTION_ID}">')
    return page[start:page.index("</section>", start)]


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seed000") / "first"
    return reproduce.main(True, out, section_fns=[converted], progress=False, jobs=2,
                          host_costs=fixed_costs)


def test_the_parts_are_sweeps_whose_datasets_the_report_keeps(first: Path) -> None:
    out = first.parent
    manifest = json.loads((out / "specs" / "manifest.json").read_text())
    held = 0
    for name in SWEEPS:
        rows = sw.read(out / "sweeps" / name)
        assert len(rows) > 0 and set(rows["status"]) == {"ok"}, name
        held += len(rows)
    assert len(manifest["runs"]) == held
    # the wake-up tests' latencies are read from the samples the datasets keep
    wake = sw.read(out / "sweeps" / wakeup000.SWEEP)
    assert wake["samples_file"].null_count() == 0
    assert json.loads((out / "sweeps" / "host-costs.json").read_text()) == \
        fixed_costs(True).as_dict()
    tables = parse_tables(_section_html(first))
    assert {"seed000-hackbench", "seed000-usleep", "seed000-preempt-waiters",
            "seed000-quick-vs-full", "seed000-fork", "seed000-yield"} <= tables.keys()


def test_the_parts_rebuilt_from_stored_results_are_byte_identical(first: Path,
                                                                  tmp_path: Path) -> None:
    def no_run(job: Any) -> Any:
        raise AssertionError(f"rebuilt from stored results, yet {job.label} ran")

    again = reproduce.main(True, tmp_path / "again", section_fns=[converted], progress=False,
                           simulate=no_run, host_costs=not_measured,
                           from_results=first.parent)
    assert _section_html(again) == _section_html(first)
    assert "failed" not in _section_html(again)
    out, prev = again.parent, first.parent
    for rel in ("specs/manifest.json", "sweeps/host-costs.json",
                "specs/seed000-hackbench-host-cost.json", "plots/seed000-hackbench.svg",
                "plots/seed000-wakeup-cdf.svg", "plots/seed000-dprio-linux-o1.svg"):
        assert (out / rel).read_bytes() == (prev / rel).read_bytes(), rel


def test_the_parts_on_a_dask_cluster_give_the_same_tables(first: Path, tmp_path: Path) -> None:
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster:
        index = reproduce.main(True, tmp_path / "r", section_fns=[converted], progress=False,
                               scheduler=cluster.scheduler_address, host_costs=fixed_costs)
    on_cluster = parse_tables(_section_html(index))
    local = parse_tables(_section_html(first))
    named = [k for k in local if k.startswith("seed000-")]
    assert len(named) >= 6 and on_cluster.keys() == local.keys()
    for name in named:
        assert on_cluster[name] == local[name], name


def test_stored_host_costs_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    stored = tmp_path / "earlier" / "sweeps" / "host-costs.json"
    stored.parent.mkdir(parents=True)
    stored.write_text('{"pipe": 3}', encoding="utf-8")
    ctx = Context(True, tmp_path / "r", from_results=tmp_path / "earlier",
                  host_costs=not_measured)
    with pytest.raises(ValueError, match=r"host-costs\.json: not the host costs a report keeps"):
        ctx.host_costs()

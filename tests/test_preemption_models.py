"""The host cross-check's simulated cyclictest ± hackbench under each preemption model
(schedlab.crosscheck.preemption_models): real runs of the saved specs on a host profile
built from fixed costs, the structural facts of the models in the table, the computed text
under it, and the shared wording of an order (schedlab.preemption.order_text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from host_fixtures import FACTS, FULL, TIMER
from schedlab import api, crosscheck, hostprofile
from schedlab.preemption import PREEMPT_MODELS, order_text
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.result import Result
from schedlab.runner import Job

COSTS = FULL
NAMES = [s.name for s in crosscheck.SHAPE_SETS]


@pytest.fixture(scope="module")
def profile() -> dict[str, Any]:
    return hostprofile.profile(COSTS, facts=FACTS, cpus=2)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory,
           profile: dict[str, Any]) -> tuple[crosscheck.PreemptionModels, Context]:
    ctx = Context(quick=True, out=tmp_path_factory.mktemp("models"), jobs=2)
    return crosscheck.preemption_models(ctx, profile, TIMER), ctx


# --- the shared wording of an order -------------------------------------------------------


def test_order_text_names_its_rows() -> None:
    strict = {"none": 4.0, "voluntary": 3.0, "full": 2.0, "rt": 1.0}
    tied = {"none": 4.0, "voluntary": 4.0, "full": 1.0, "rt": 1.0}
    text = order_text({"A": strict, "B": tied}, noun=("shape set", "shape sets"))
    assert "A: none 4.00 > voluntary 3.00 > full 2.00 > rt 1.00 µs — strictly in order." in text
    assert ("B: none 4.00 = voluntary 4.00 > full 1.00 = rt 1.00 µs — not strictly in order: "
            "none and voluntary equal, full and rt equal.") in text
    assert "holds for 1 of 2 shape sets." in text
    assert "Every shape set has the same maximum under none (4.00 µs), rt (1.00 µs): there " \
           "the shape sets cannot be told apart." in text
    assert "polic" not in text


# --- the runs --------------------------------------------------------------------------


def _maxima(m: crosscheck.PreemptionModels, load: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, by_load in m.stats.items():
        out[name] = {}
        for model in PREEMPT_MODELS:
            st = by_load[load][model]
            assert not isinstance(st, str), st
            out[name][model] = st["max"]
    return out


def test_every_run_is_in_the_table(models: tuple[crosscheck.PreemptionModels, Context]
                                   ) -> None:
    m, ctx = models
    rows = parse_tables(_tables_html(m))["host-preempt-table"]
    assert [(r[0], r[1].split()[0]) for r in rows] == [
        (n, model) for n in NAMES for model in PREEMPT_MODELS]
    for row in rows:
        st = m.stats[row[0]]
        model = row[1].split()[0]
        cells = [parse_number(c) for c in row[2:]]
        want = [st[load][model][s] / 1000  # type: ignore[index]
                for load in crosscheck.LOADS for s in crosscheck.STATS]
        assert cells == pytest.approx(want, abs=0.005)
    assert len(ctx.manifest) == len(NAMES) * len(crosscheck.LOADS) * len(PREEMPT_MODELS)
    assert all(e["status"] == "ok" for e in ctx.manifest)


def _tables_html(m: crosscheck.PreemptionModels) -> str:
    from schedlab.report import render_table

    return str(render_table(m.shapes)) + str(render_table(m.latency))


def test_the_models_rules_show_in_the_numbers(
        models: tuple[crosscheck.PreemptionModels, Context]) -> None:
    m, _ = models
    loaded, idle = _maxima(m, "hackbench"), _maxima(m, "idle")
    # At idle no other task's span stands between the timer and its thread.
    assert len({v for by in idle.values() for v in by.values()}) == 1
    # The profile's shapes are 0: voluntary has no points (as none), full and rt have no
    # section (a span is left at once), and the load's spans then delay only none.
    p = loaded["profile"]
    assert p["none"] == p["voluntary"] > p["full"] == p["rt"]
    # An assumed shape adds points and sections: voluntary leaves a span sooner than none.
    assert loaded["A"]["voluntary"] < loaded["A"]["none"]
    # Each model defers no less than the next one under every shape set.
    for by in loaded.values():
        assert [by[x] for x in PREEMPT_MODELS] == sorted(by.values(), reverse=True)


def test_text_is_computed_from_the_maxima(
        models: tuple[crosscheck.PreemptionModels, Context]) -> None:
    m, _ = models
    loaded = _maxima(m, "hackbench")
    pairs = list(zip(PREEMPT_MODELS, PREEMPT_MODELS[1:], strict=False))
    strict = [n for n, by in loaded.items() if all(by[a] > by[b] for a, b in pairs)]
    for n, by in loaded.items():
        verdict = "strictly in order." if n in strict else "not strictly in order"
        assert f"{n}: none {by['none'] / 1000:,.2f} " in m.text
        assert m.text.split(f"{n}: ", 1)[1].split(" — ", 1)[1].startswith(verdict)
    assert f"holds for {len(strict)} of {len(NAMES)} shape sets." in m.text
    assert m.text.startswith(f"Under hackbench {crosscheck.LOAD_GROUPS}: ")
    assert "At idle every model and shape set gives the same maximum" in m.text


def test_saved_specs_carry_the_shapes_and_a_forking_load(
        models: tuple[crosscheck.PreemptionModels, Context], profile: dict[str, Any]) -> None:
    m, ctx = models
    costs = crosscheck.span_costs(profile["machine"])
    assert costs == {"pipe": 300, "socket": 700, "fork": 100_000, "sleep": 1_234}
    shapes = {s.name: s for s in crosscheck.SHAPE_SETS}
    for name in m.specs:
        _, _, s, load, model = name.split("-")
        spec = json.loads((ctx.out / "specs" / f"{name}.json").read_text())
        machine = spec["schedlab"]["machine"]
        assert machine["profile"]["name"] == "host"
        want: dict[str, Any] = {"preempt": model}
        shape = next(x for x in shapes.values() if x.name.lower() == s)
        if shape.assumed:
            want["spans"] = {k: shape.shape(c) for k, c in costs.items()}
        assert machine["kernel"] == want
        # the load restarts: its processes are forked by a parent every round
        assert ("load-parent" in spec["tasks"]) == (load == "hackbench")
    a = shapes["A"].shape(100_000)
    assert a == {"nonpreempt_ns": 50_000, "raw_ns": 12_500, "point_ns": 25_000,
                 "cond_resched_ns": 0}


def test_shapes_table_says_what_is_assumed(
        models: tuple[crosscheck.PreemptionModels, Context]) -> None:
    m, _ = models
    rows = parse_tables(_tables_html(m))["host-preempt-shapes"]
    assert [r[0] for r in rows] == NAMES
    assert [r[1] == "assumed" for r in rows] == [s.assumed for s in crosscheck.SHAPE_SETS]
    assert not crosscheck.SHAPE_SETS[0].assumed
    # fork is the longest span the profile charges: its column comes first
    assert rows[1][6] == "50,000 / 12,500 / 25,000 / 0"


def test_failed_runs_are_shown_not_dropped(tmp_path: Path, profile: dict[str, Any]) -> None:
    def broken(job: Job) -> Result:
        raise RuntimeError("boom")

    ctx = Context(quick=True, out=tmp_path, simulate=broken)
    m = crosscheck.preemption_models(ctx, profile, TIMER)
    rows = parse_tables(_tables_html(m))["host-preempt-table"]
    assert all(r[2].startswith("failed: RuntimeError: boom") for r in rows)
    assert "profile: no maximum under none, voluntary, full, rt." in m.text


def test_saved_spec_reruns_to_its_numbers(
        models: tuple[crosscheck.PreemptionModels, Context]) -> None:
    m, ctx = models
    name = crosscheck.models_spec_name(crosscheck.SHAPE_SETS[1], "hackbench", "full")
    text = (ctx.out / "specs" / f"{name}.json").read_text()
    [entry] = [e for e in ctx.manifest if e["spec"] == f"specs/{name}.json"]
    again = api.simulate(text, scheduler=entry["scheduler"], seed=entry["seed"],
                         samples=entry["samples"])
    assert hostprofile.headline_stats(again.json) == m.stats["A"]["hackbench"]["full"]

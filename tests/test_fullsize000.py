"""Quick mode against the full size (schedlab.seeds.fullsize000): the pair-by-pair
comparison of orderings, the full-size specs being the full run's own, and the verdicts
recomputed here from reruns of the saved specs."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from schedlab import api
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.result import Result
from schedlab.runner import Job
from schedlab.seeds import fullsize000, hackbench000, kernel000, seed000, wakeup000

#: The seed schedulers' counterparts: few, so the test stays short.
POLICIES = ["linux-o1", "nicksched", "staircase"]


def test_pair_changes_counts_ties_and_reversals() -> None:
    quick = {"a": 1.0, "b": 2.0, "c": 2.0, "d": None}
    full = {"a": 1.0, "b": 3.0, "c": 2.5, "d": 9.0}
    pairs, changed = seed000.pair_changes(quick, full)
    assert pairs == 3  # d has no quick value
    assert changed == ["b = c (quick), b > c (full)"]
    assert seed000.pair_changes({"a": 2.0, "b": 1.0}, {"a": 1.0, "b": 2.0}) == (
        1, ["a > b (quick), a < b (full)"])
    assert seed000.pair_changes({"a": 1.0}, {"a": 1.0}) == (0, [])


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    ctx = Context(True, tmp_path_factory.mktemp("fullsize"), jobs=2)
    st = seed000.settings(True)
    hb = hackbench000.part(ctx, st, POLICIES)
    wk = wakeup000.part(ctx, st, POLICIES)
    pre = kernel000.preempt_part(ctx, st, POLICIES)
    part = fullsize000.part(ctx, POLICIES, hb.board_seconds, wk.stats, pre.stats)
    return {"ctx": ctx, "hb": hb, "wk": wk, "pre": pre, "part": part}


def _rerun(ctx: Context, spec_name: str, policy: str) -> Result:
    [entry] = [e for e in ctx.manifest
               if e["spec"] == f"specs/{spec_name}.json" and e["scheduler"] == policy]
    text = (ctx.out / entry["spec"]).read_text()
    return api.simulate(text, scheduler=policy, seed=entry["seed"], samples=entry["samples"])


def _relations(values: dict[str, float]) -> dict[tuple[str, str], str]:
    return {(a, b): "<" if values[a] < values[b] else ">" if values[a] > values[b] else "="
            for a, b in combinations(values, 2)}


def test_full_size_specs_are_the_full_runs(quick_run: dict[str, Any]) -> None:
    ctx: Context = quick_run["ctx"]
    full = seed000.settings(False)
    saved = ctx.out / "specs"
    assert (saved / "seed000-full-hackbench-board.json").read_text() == \
        hackbench000.board_spec(ctx, full)
    for w in seed000.WAITERS:
        assert (saved / f"seed000-full-wakeup-{w}.json").read_text() == \
            wakeup000.board_spec(ctx, full, w)
    for m in kernel000.PREEMPT_MODELS:
        assert (saved / f"seed000-full-preempt-{m}.json").read_text() == \
            kernel000.preempt_spec(ctx, full, m)
    # on the board, at the full size
    board = api.spec_view((saved / "seed000-full-hackbench-board.json").read_text())
    assert board["schedlab"]["machine"] == {"profile": seed000.BOARD_PROFILE}
    assert board["tasks"] == api.spec_view(api.generate_text("hackbench", [
        (k, api.option_text(v)) for k, v in full.hackbench.items()]))["tasks"]
    assert all(o.ok for o in quick_run["part"].runs)


def test_hackbench_verdict_is_recomputed_from_reruns(quick_run: dict[str, Any]) -> None:
    ctx: Context = quick_run["ctx"]
    quick = {p: v for p, v in quick_run["hb"].board_seconds.items() if v is not None}
    full = {p: hackbench000.hackbench_seconds(_rerun(ctx, "seed000-full-hackbench-board", p))
            for p in POLICIES}
    assert set(quick) == set(POLICIES) and all(v is not None for v in full.values())
    rq, rf = _relations(quick), _relations(full)  # type: ignore[arg-type]
    differ = [k for k in rq if rq[k] != rf[k]]
    rows = {r[0]: r for r in parse_tables(str(quick_run["part"].html))["seed000-quick-vs-full"]}
    row = rows["hackbench time per policy, board profile"]
    assert parse_number(row[1]) == len(rq)
    if differ:
        assert row[2].startswith(f"differs on {len(differ)}: ")
        for a, b in differ:
            assert f"{a} {rq[(a, b)]} {b} (quick), {a} {rf[(a, b)]} {b} (full)" in row[2]
    else:
        assert row[2] == "same on every pair"


def test_wakeup_mean_verdict_is_recomputed_from_reruns(quick_run: dict[str, Any]) -> None:
    ctx: Context = quick_run["ctx"]
    rows = {r[0]: r for r in parse_tables(str(quick_run["part"].html))["seed000-quick-vs-full"]}
    for w in seed000.WAITERS:
        quick = {p: (s or {}).get("mean") for p, s in quick_run["wk"].stats[w].items()}
        full = {}
        for p in POLICIES:
            res = _rerun(ctx, f"seed000-full-wakeup-{w}", p)
            full[p] = wakeup000.wakeup_from_result(res, "waiter").stats["mean"]  # type: ignore[index]
        both = {p: v for p, v in quick.items() if v is not None and full.get(p) is not None}
        rq = _relations(both)  # type: ignore[arg-type]
        rf = _relations({p: full[p] for p in both})
        differ = sum(rq[k] != rf[k] for k in rq)
        row = rows[f"{seed000.WAITER_LABEL[w]}, raw: mean wake-up latency per policy"]
        assert parse_number(row[1]) == len(rq)
        if not rq:
            assert row[2] == "no pair has values in both runs"
            continue
        assert (row[2] == "same on every pair") == (differ == 0)
        if differ:
            assert row[2].startswith(f"differs on {differ}: ")


def test_every_ordering_is_listed_and_the_unchecked_say_why(quick_run: dict[str, Any]) -> None:
    html = str(quick_run["part"].html)
    rows = parse_tables(html)["seed000-quick-vs-full"]
    names = [r[0] for r in rows]
    assert names[0] == "hackbench time per policy, board profile"
    assert sum("wake-up latency per policy" in n for n in names) == 8
    assert "RT against non-RT waiters, raw mean, per policy" in names
    assert sum(n.startswith("maximum by preemption model") for n in names) == 2
    for ordering, why in fullsize000.UNCHECKED:
        [row] = [r for r in rows if r[0] == ordering]
        assert row[2] == why and why.startswith("unchecked: ")
    checked = [r for r in rows if (parse_number(r[1]) or 0) > 0]
    same = sum(r[2] == "same on every pair" for r in checked)
    assert f"Of the {len(checked)} orderings checked, {same} order every pair" in html
    empty = [r[0] for r in rows if parse_number(r[1]) == 0]
    assert all(r[2] == "no pair has values in both runs" for r in rows if r[0] in empty)
    if empty:
        assert "no pair has values in both runs for " + ", ".join(empty) in html
    # the preemption models of one policy: 4 models, 6 pairs, per policy run
    pre = [r for r in rows if r[0].startswith("maximum by preemption model")]
    assert all(parse_number(r[1]) == 6 * len(POLICIES) for r in pre)


def test_full_mode_adds_nothing(tmp_path: Path) -> None:
    ctx = Context(False, tmp_path)
    part = fullsize000.part(ctx, POLICIES, {}, {}, {})
    assert part.runs == [] and "seed000-quick-vs-full" not in str(part.html)


def test_failed_full_size_runs_are_said(tmp_path: Path) -> None:
    def broken(job: Job) -> Result:
        raise RuntimeError("boom")

    ctx = Context(True, tmp_path, simulate=broken)
    part = fullsize000.part(ctx, POLICIES, {p: 1.0 for p in POLICIES}, {}, {})
    rows = {r[0]: r for r in parse_tables(str(part.html))["seed000-quick-vs-full"]}
    assert rows["hackbench time per policy, board profile"][2] == \
        "no pair has values in both runs"
    assert len(part.runs) > 0 and not any(o.ok for o in part.runs)

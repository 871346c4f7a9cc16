"""Seed 000: the published figures, their reconstruction, the statistics, and the real run."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from schedlab import _core
from schedlab.result import Result
from schedlab.seeds import hackbench000, seed000, wakeup000
from schedlab.seeds.seed000 import (
    FILTERS,
    PUBLISHED_HACKBENCH_S,
    PUBLISHED_SAMPLES,
    PUBLISHED_WAKEUP,
    SEED_SCHEDULERS,
    TRANSCRIPT,
    WAITERS,
    WakeupFigures,
)

ALL_ROWS = [(w, f, s) for w in WAITERS for f in FILTERS for s in SEED_SCHEDULERS]


@pytest.mark.parametrize(("waiters", "flt", "sched"), ALL_ROWS)
def test_reconstruction_matches_transcript(waiters: str, flt: str, sched: str) -> None:
    line = TRANSCRIPT[waiters][flt][sched]
    assert seed000.reconstruct(line) == PUBLISHED_WAKEUP[waiters][flt][sched]


def test_published_data_keeps_its_provenance() -> None:
    data = seed000.DATA
    assert data["document"]["organisation"].startswith("Toshiba Information Systems")
    assert data["hackbench"]["provenance"]["slide"] == "Hackbench 結果"
    for w in WAITERS:
        for f in FILTERS:
            slide, which = seed000.slide_of(w, f)
            assert slide.startswith("実験結果") and which


def test_published_hackbench() -> None:
    assert PUBLISHED_HACKBENCH_S == {"ingosched": 38.620, "ingo_ll": 78.689,
                                     "nicksched": 45.717, "staircase": 43.845}
    order = sorted(PUBLISHED_HACKBENCH_S, key=PUBLISHED_HACKBENCH_S.__getitem__)
    assert order == ["ingosched", "staircase", "nicksched", "ingo_ll"]


def test_published_figures_are_self_consistent() -> None:
    assert seed000.consistency_problems() == []


def test_ingosched_rt_one_outlier_arithmetic() -> None:
    """One 448 ms outlier among 1000 explains the mean drop and the raw stddev."""
    raw = PUBLISHED_WAKEUP["rt"]["raw"]["ingosched"]
    kept = PUBLISHED_WAKEUP["rt"]["6sigma"]["ingosched"]
    n = PUBLISHED_SAMPLES
    # raw mean × n = kept mean × (n − 1) + the outlier
    outlier = raw.avg * n - kept.avg * (n - 1)
    assert math.isclose(outlier, raw.max, rel_tol=0.005)
    assert math.isclose((raw.avg - kept.avg) * n, raw.max, rel_tol=0.005)
    # a single outlier x dominates the population stddev: σ ≈ x / √n
    assert math.isclose(raw.max / math.sqrt(n), raw.stddev, rel_tol=0.005)


def test_decimal_reading_of_stddev_is_refuted() -> None:
    """Reading the split last digit as a decimal (σ/10) breaks the bounds in most rows."""
    violations = 0
    for w, f, s in ALL_ROWS:
        fig = PUBLISHED_WAKEUP[w][f][s]
        if fig.stddev / 10 < seed000.sigma_lower_bound(fig):
            violations += 1
    assert violations == 13
    kept_beyond = 0
    for w in WAITERS:
        for s in SEED_SCHEDULERS:
            raw = PUBLISHED_WAKEUP[w]["raw"][s]
            kept = PUBLISHED_WAKEUP[w]["6sigma"][s]
            kept_beyond += kept.max > raw.avg + 6 * raw.stddev / 10
    assert kept_beyond == 5


def test_consistency_check_catches_a_bad_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {w: {f: dict(rows) for f, rows in d.items()} for w, d in PUBLISHED_WAKEUP.items()}
    bad["rt"]["6sigma"]["nicksched"] = replace(bad["rt"]["6sigma"]["nicksched"], stddev=11.0)
    bad["nonrt"]["raw"]["staircase"] = replace(bad["nonrt"]["raw"]["staircase"], stddev=17.7)
    monkeypatch.setattr(seed000, "PUBLISHED_WAKEUP", bad)
    problems = seed000.consistency_problems()
    assert any("rt/6sigma/nicksched" in p for p in problems)
    assert any("nonrt/staircase: filtered max beyond" in p for p in problems)


def test_reconstruct_rejects_malformed() -> None:
    with pytest.raises(ValueError):
        seed000.reconstruct("575.03 3 7 44826")
    assert seed000.reconstruct("1.50 1 2 3 4 5 6") == WakeupFigures(1.5, 12, 34, 56)


REGISTRY = [
    {"name": "linux-cfs", "family": "linux", "available": True},
    {"name": "fp", "family": "rtos", "available": True},
    {"name": "staircase", "family": "linux", "available": True},
    {"name": "linux-o1", "family": "linux", "available": True},
    {"name": "ingo_ll", "family": "linux", "available": False, "reason": "no source survives"},
]


def test_policy_selection_comes_from_the_registry() -> None:
    # seed counterparts first, in the seed's order, then the rest in registry order
    assert seed000.linux_policies(REGISTRY) == ["linux-o1", "staircase", "linux-cfs"]
    assert seed000.linux_policies([{"name": "x", "family": "linux"}]) == ["x"]
    missing = dict(seed000.not_modelled(REGISTRY))
    assert missing == {"ingo_ll": "no source survives",
                       "nicksched": "policy nicksched is not in this build"}


def test_the_real_registry_lists_ingo_ll_as_unavailable() -> None:
    import schedlab

    registry = schedlab.schedulers()
    ingo = next(s for s in registry if s["name"] == "ingo_ll")
    assert ingo["available"] is False and ingo["reason"] and ingo["family"] == "linux"
    assert dict(seed000.not_modelled(registry)) == {"ingo_ll": ingo["reason"]}
    assert {s["family"] for s in registry} <= {"linux", "bsd", "rtos", "teaching"}


def test_pair_agreement_and_ranking() -> None:
    pub = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    assert seed000.pair_agreement(pub, {"a": 10.0, "b": 20.0, "c": 5.0}) == (1, 3)
    assert seed000.pair_agreement(pub, {"a": 10.0}) == (0, 0)
    assert seed000.ranking({"x": 2.0, "y": None, "z": 1.0}) == [("z", 1.0), ("x", 2.0)]


def _result(headline: dict | None, tasks: list[dict] | None = None,
            cols: dict | None = None) -> Result:
    return Result({"run": {"sim_ns": 3_000_000_000}, "tasks": tasks or [],
                   "summary": {"headline": headline, "makespan_ns": None, "marks": {},
                               "totals": {"switches": 0, "migrations": 0,
                                          "deadline_misses": 0, "activations": 0}}}, cols)


def test_hackbench_seconds_from_the_headline() -> None:
    head = {"name": "hackbench_time", "value": 1500, "unit": "ms"}
    assert hackbench000.hackbench_seconds(_result(head)) == 1.5
    assert hackbench000.hackbench_seconds(_result(None)) is None


def test_wakeup_statistics_come_from_the_core() -> None:
    tasks = [{"name": "waiter0", "tid": 1, "wait_ns": 5, "cpu_ns": 7},
             {"name": "load", "tid": 2}]
    cols = {"tid": [1, 1, 2], "release_ns": [0, 10_000, 0], "wake_ns": [0, 10_000, 0],
            "start_ns": [1_000, 13_000, 99_000], "end_ns": [2_000, 14_000, 100_000],
            "kind": [2, 2, 1]}
    r = wakeup000.wakeup_from_result(_result(None, tasks, cols), "waiter")
    assert r.samples == [1.0, 3.0]
    assert r.stats == wakeup000.stats_us(_core.stats([1_000, 3_000]))
    head = {"name": "x", "value": 2.0, "unit": "us", "stats_ns": _core.stats([2_000])}
    r = wakeup000.wakeup_from_result(_result(head, tasks, cols), "waiter")
    assert r.stats is not None and r.stats["mean"] == 2.0 and r.samples == [1.0, 3.0]
    assert wakeup000.wakeup_from_result(_result(None, tasks, cols), "nobody").error


def test_machine_and_starvation_texts() -> None:
    spec = {"schedlab": {"machine": {"cpus": 1, "hz": 1000}}}
    text = seed000.machine_text(spec, seed000.QUICK)
    assert text.startswith("1 CPU, HZ=1000; context switch 0 ns") and "charges nothing" in text
    spec["schedlab"]["machine"]["context_switch_ns"] = 5000
    assert "charges nothing" not in seed000.machine_text(spec, seed000.QUICK)
    assert seed000.machine_text(None, seed000.FULL) == "1 CPU, HZ=1000"
    starved = wakeup000.WakeupRun(stats=wakeup000.stats_us(_core.stats([])), waiting_s=2.5,
                                  cpu_s=0.0, sim_s=3.0)
    fine = wakeup000.WakeupRun(stats=wakeup000.stats_us(_core.stats([1_000])))
    text = wakeup000.starvation_text({"rt": {"a": fine}, "nonrt": {"b": starved}})
    assert text.startswith("non-RT waiters (SCHED_OTHER) under b: no wake-up completed")
    assert "2.500 s" in text and " a:" not in text


def test_hackbench_text_explains_ties_and_single_policy() -> None:
    published = {"ingosched": 38.62, "nicksched": 45.717, "staircase": 43.845}
    tied = hackbench000.hackbench_text(
        published, {"ingosched": 0.1, "nicksched": 0.1, "staircase": 0.1}, {})
    assert "tie" in tied and "Only one" not in tied
    single = hackbench000.hackbench_text(
        published, {"ingosched": 0.1, "nicksched": None, "staircase": None}, {})
    assert "Only one seed scheduler" in single


def test_agreement_counts_strict_wins_and_names_ties() -> None:
    pub = {"a": 1.0, "b": 2.0, "c": 3.0}
    # a < b agrees, a = c ties, b vs c: c < b disagrees.
    phrase = seed000.agreement_phrase(pub, {"a": 5.0, "b": 6.0, "c": 5.0})
    assert phrase is not None
    assert phrase.startswith("1 of 2 pairs")
    assert "1 pair the seed separates tie" in phrase
    # A constant agrees with nothing.
    const = seed000.agreement_phrase(pub, {"a": 7.0, "b": 7.0, "c": 7.0})
    assert const is not None and const.startswith("0 of 0 pairs") and "3 pairs" in const


def test_broadcasts_that_woke_nobody_are_counted() -> None:
    from schedlab import api

    text = api.generate_text("broadcast-wakeup", [("waiters", "1"), ("iterations", "50"),
                                                  ("load_groups", "10"), ("rt", "false")])
    text = api.edit_spec(text, seed000.on_board)
    run = wakeup000.wakeup_from_result(api.simulate(text, "staircase"), "waiter")
    assert run.broadcasts == 50
    assert run.lost == 50 - len(run.samples)
    assert run.lost > 0, "under this load some broadcasts find the non-RT waiter busy"


def test_wakeup_text_names_a_tie_of_every_policy_as_one_value() -> None:
    published = seed000.PUBLISHED_WAKEUP["rt"]["raw"]
    same = {"mean": 128.5, "max": 700.0, "count": 1000}
    sim = {p: dict(same) for p in ("linux-o1", "nicksched", "staircase")}
    text = wakeup000.wakeup_text("raw", published, sim, {"bfs": dict(same)})
    assert "Simulation: mean 128.50 µs under every policy" in text
    assert "worst single wake-up every policy (700.00 µs)" in text
    assert "lowest mean bfs" not in text
    sim["staircase"] = {"mean": 120.0, "max": 650.0, "count": 1000}
    text = wakeup000.wakeup_text("raw", published, sim, {})
    assert "lowest mean staircase (120.00 µs), highest linux-o1 and nicksched (tied)" in text


def test_wakeup_text_sets_the_size_of_the_differences_beside_the_seeds() -> None:
    published = seed000.PUBLISHED_WAKEUP["rt"]["6sigma"]
    sim = {"ingosched": {"mean": 128.32, "max": 600.0, "count": 999},
           "nicksched": {"mean": 128.08, "max": 600.0, "count": 999},
           "staircase": {"mean": 127.83, "max": 600.0, "count": 999},
           "ingo_ll": None}
    text = wakeup000.wakeup_text("6sigma", published, sim, {})
    seed_span = published["ingosched"].avg - published["staircase"].avg
    assert (f"Between the highest and the lowest mean of ingosched, nicksched, staircase: "
            f"{seed_span:.2f} µs in the seed, 0.49 µs in the simulation.") in text
    assert wakeup000.span_text({"a": 1.0}, {"a": 2.0}) == ""

"""Seed 000: the published figures, their reconstruction, the statistics, and the real run."""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from schedlab.report import parse_number, parse_tables
from schedlab.seeds import seed000
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


def test_transcript_lines_are_verbatim() -> None:
    seed_text = Path("/work/shared/seeds/000_289ddd406b3286c4.txt")
    if not seed_text.exists():
        pytest.skip("seed document not present on this machine")
    text = seed_text.read_text(encoding="utf-8")
    for w, f, s in ALL_ROWS:
        assert TRANSCRIPT[w][f][s] in text, (w, f, s)


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


def test_describe_matches_schema_definitions() -> None:
    xs = [100.0 + (i % 10) for i in range(999)] + [100_000.0]
    d = seed000.describe(xs)
    assert d["count"] == 1000 and d["max"] == 100_000.0
    mean = sum(xs) / len(xs)
    assert math.isclose(d["mean"], mean)
    assert math.isclose(d["stddev"], math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs)))
    assert d["p50"] == sorted(xs)[499]  # nearest rank: ceil(0.5 × 1000) = 500th
    assert d["p999"] == sorted(xs)[998]
    f = d["filtered6sigma"]
    assert f["count"] == 999 and f["max"] == 109.0 and "filtered6sigma" not in f
    assert seed000.describe([])["mean"] is None


def test_policy_selection() -> None:
    scheds = [{"name": n} for n in ("linux-cfs", "fp", "example-fifo")]
    assert seed000.linux_policies(scheds) == ["linux-cfs"]
    later = [{"name": n} for n in ("fp", "linux-eevdf", "staircase", "linux-o1", "linux-cfs")]
    assert seed000.linux_policies(later) == ["linux-o1", "staircase", "linux-cfs", "linux-eevdf"]
    assert seed000.linux_policies([{"name": "x", "family": "linux"}]) == ["x"]
    missing = dict(seed000.not_modelled(["linux-cfs"]))
    assert set(missing) == set(SEED_SCHEDULERS)
    assert missing["ingosched"] == "schedlab policy linux-o1: not modelled yet"
    assert [s for s, _ in seed000.not_modelled(["linux-o1", "nicksched", "staircase"])] == [
        "ingo_ll"]


def test_pair_agreement_and_ranking() -> None:
    pub = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    assert seed000.pair_agreement(pub, {"a": 10.0, "b": 20.0, "c": 5.0}) == (1, 3)
    assert seed000.pair_agreement(pub, {"a": 10.0}) == (0, 0)
    assert seed000.ranking({"x": 2.0, "y": None, "z": 1.0}) == [("z", 1.0), ("x", 2.0)]


def test_hackbench_seconds_fallbacks() -> None:
    j = {"summary": {"headline": {"name": "hackbench_time", "value": 1500, "unit": "ms"},
                     "makespan_ns": 9, "marks": {}}}
    assert seed000.hackbench_seconds(j) == 1.5
    j = {"summary": {"headline": None, "makespan_ns": 3_000_000_000, "marks": {"start": 10**9}}}
    assert seed000.hackbench_seconds(j) == 2.0


def test_wakeup_single_waiter_without_samples() -> None:
    st = {"count": 2, "mean": 2000.0, "min": 1000, "max": 3000, "stddev": 1000.0, "p50": 1000,
          "p90": 3000, "p99": 3000, "p999": 3000,
          "filtered6sigma": {"count": 2, "mean": 2000.0, "min": 1000, "max": 3000,
                             "stddev": 1000.0, "p50": 1000, "p90": 3000, "p99": 3000,
                             "p999": 3000}}
    j = {"tasks": [{"name": "waiter0", "tid": 1, "wakeup_latency_ns": st}]}
    r = seed000.wakeup_from_result(j, "waiter")
    assert r.stats is not None and r.stats["mean"] == 2.0
    assert r.stats["filtered6sigma"]["max"] == 3.0
    assert seed000.wakeup_from_result(j, "nobody").error


def test_machine_and_starvation_texts() -> None:
    spec = {"schedlab": {"machine": {"cpus": 1, "hz": 1000}}}
    text = seed000.machine_text(spec, seed000.QUICK)
    assert text.startswith("1 CPU, HZ=1000; context switch 0 ns") and "charges nothing" in text
    spec["schedlab"]["machine"]["context_switch_ns"] = 5000
    assert "charges nothing" not in seed000.machine_text(spec, seed000.QUICK)
    assert seed000.machine_text(None, seed000.FULL) == "1 CPU, HZ=1000"
    starved = seed000.WakeupRun(stats=seed000.describe([]), waiting_s=2.5, cpu_s=0.0, sim_s=3.0)
    fine = seed000.WakeupRun(stats=seed000.describe([1.0]))
    text = seed000.starvation_text({"rt": {"a": fine}, "nonrt": {"b": starved}})
    assert text.startswith("non-RT waiters (SCHED_OTHER) under b: no wake-up completed")
    assert "2.500 s" in text and " a:" not in text


# --- the real engine -------------------------------------------------------------------


def _engine_missing() -> str | None:
    try:
        import schedlab

        gens = {g["name"] for g in schedlab.generators()}
        names = {s["name"] for s in schedlab.schedulers() if s.get("available", True)}
    except Exception as exc:  # extension not built
        return f"schedlab extension unavailable: {exc}"
    lacking = {"hackbench", "broadcast-wakeup"} - gens
    if lacking:
        return f"generators not landed yet: {sorted(lacking)}"
    if not names & set(seed000.LINUX_FAMILY):
        return "no Linux-family policy available yet"
    return None


def test_reproduce_quick_real_engine(tmp_path: Path) -> None:
    """SLOW BUT REQUIRED: `reproduce --quick` end to end on the real simulator.

    Skips only until the hackbench and broadcast-wakeup generators and a Linux-family
    policy exist; from then on it runs in `make test`.
    """
    why = _engine_missing()
    if why:
        pytest.skip(why)
    import schedlab
    from schedlab import reproduce

    t0 = time.perf_counter()
    index = reproduce.main(quick=True, out=tmp_path, progress=False)
    elapsed = time.perf_counter() - t0
    page = index.read_text(encoding="utf-8")
    tables = parse_tables(page)
    policies = seed000.linux_policies(
        [s for s in schedlab.schedulers() if s.get("available", True)])
    assert policies
    empty = []
    for p in policies:
        hb = [r for r in tables["seed000-hackbench"] if r[1] == p]
        assert len(hb) == 1, (p, tables["seed000-hackbench"])
        secs = parse_number(hb[0][4]) if not hb[0][4].startswith("failed") else None
        if not secs or secs <= 0:
            empty.append(f"hackbench/{p}: {hb[0][4]}")
        for w in WAITERS:
            for f in FILTERS:
                rows = [r for r in tables[f"seed000-wakeup-{w}-{f}"] if r[1] == p]
                assert len(rows) == 1, (p, w, f)
                cell = rows[0][6]
                avg = None if cell.startswith("failed") else parse_number(cell)
                n = parse_number(rows[0][11])
                if avg is None or avg < 0 or not n:
                    empty.append(f"wake-up {w}/{f}/{p}: avg={cell} n={rows[0][11]}")
    notes = re.findall(r'<div class="note warn">(.*?)</div>', page)
    # A policy may legitimately produce no wake-up sample (its waiter starves behind the
    # load within the quick run); the page must then say so in a warning naming it. The
    # reference policy of this issue, linux-cfs, must populate every cell.
    unexplained = [
        e for e in empty
        if e.split("/")[-1].split(":")[0] == "linux-cfs"
        or not any(e.split("/")[-1].split(":")[0] in n for n in notes)
    ]
    assert not unexplained, f"unpopulated cells: {unexplained}; page warnings: {notes}"
    for stem in ("seed000-hackbench", "seed000-wakeup-cdf"):
        assert (tmp_path / "plots" / f"{stem}.svg").exists()
    print(f"reproduce --quick took {elapsed:.1f} s")


def test_hackbench_text_explains_ties_and_single_policy() -> None:
    published = {"ingosched": 38.62, "nicksched": 45.717, "staircase": 43.845}
    tied = seed000.hackbench_text(
        published, {"ingosched": 0.1, "nicksched": 0.1, "staircase": 0.1}, {})
    assert "tie" in tied and "Only one" not in tied
    single = seed000.hackbench_text(
        published, {"ingosched": 0.1, "nicksched": None, "staircase": None}, {})
    assert "Only one seed scheduler" in single

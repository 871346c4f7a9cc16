"""Seed 001 (FreeBSD 5.4's 4BSD against ULE): the seed's figures as stored, the build's
calibration through the simulator, the significance tests on known inputs, and the report
section run in quick mode on the real simulator."""

from __future__ import annotations

import json
import math
import statistics
from html import unescape
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab import _core
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.seeds import SECTIONS, seed001

# -------------------------------------------------------------------- the seed's figures


def test_the_data_file_holds_the_seeds_figures_with_provenance() -> None:
    d = seed001.DATA
    assert d["document"]["year"] == 2005 and d["document"]["author"] == "Xune"
    runs = d["buildworld"]["runs"]
    for j, (user, sys_, wall) in {"4": (2310.688, 802.393, "27:11.34"),
                                  "8": (2316.708, 805.766, "27:15.78")}.items():
        r = runs[j]
        assert (r["user_s"], r["sys_s"], r["wall"]) == (user, sys_, wall)
        m, s = wall.split(":")
        assert r["wall_s"] == pytest.approx(60 * int(m) + float(s))
        assert r["raw"].startswith(f"{user}u {sys_}s {wall} {r['cpu_pct']}%")
        # time(1)'s CPU % is (user + system) / elapsed, printed to one decimal (truncated)
        assert math.floor(1000 * (user + sys_) / r["wall_s"]) / 10 == r["cpu_pct"]
    assert "no 4BSD figure is stored" in d["buildworld"]["provenance"]
    assert d["claims"]["spread"]["original"].startswith("微妙ではあるが")


# ------------------------------------------------------------------------- calibration


def test_the_default_build_is_the_seeds_cpu_time() -> None:
    t = _core.buildworld_totals([("jobs", "4")])
    assert t["user_us"] + t["sys_us"] == t["nominal_us"] == 3_113_000_000
    seed = seed001.DATA["buildworld"]["runs"]["4"]
    assert t["user_us"] / 1e6 == pytest.approx(seed["user_s"], rel=1e-3)
    assert t["sys_us"] / 1e6 == pytest.approx(seed["sys_s"], rel=1e-3)
    assert t["jobs"] * 2 * t["syscall_us"] == t["sys_us"]


SMALL = seed001.Sizes(build=(("dirs", 4), ("lib_dirs", 1), ("files", 5)), seeds=2, up_seeds=2,
                      httpd=(("requests", 50),), httpd_seeds=1)


@pytest.mark.parametrize("policy", seed001.FREEBSD)
def test_a_build_spec_runs_to_its_closed_form(policy: str) -> None:
    """The calibration's claim, through the engine: user and system seconds of every task
    are the generator's closed form to the nanosecond; with the varying machine the user
    time stays exact and the system time is the draws'."""
    text = _core.generate("buildworld", seed001.build_options(SMALL, 4))
    want = seed001.totals(SMALL)
    r = schedlab.simulate(text, scheduler=policy, samples=False)
    t = r.totals
    assert t["cpu_ns"] - t["sys_ns"] - t["irq_ns"] == want["user_us"] * 1000
    assert t["sys_ns"] == want["sys_us"] * 1000
    v = schedlab.simulate(seed001.varied(text), scheduler=policy, samples=False, seed=3).totals
    assert v["cpu_ns"] - v["sys_ns"] - v["irq_ns"] == want["user_us"] * 1000
    assert v["sys_ns"] != want["sys_us"] * 1000
    # each call's cost is uniform over [0, 2q]: within the bounds, a mean of q
    calls = want["jobs"] * 2
    assert 0 < v["sys_ns"] < 2 * want["sys_us"] * 1000
    assert v["sys_ns"] / calls == pytest.approx(want["syscall_us"] * 1000, rel=0.5)


# ------------------------------------------------------------------- the statistics


def test_less_spread_on_known_inputs() -> None:
    spread, flat = [0.0, 10.0] * 3, [5.0] * 6
    # deviations from the medians: all 5 against all 0; only the observed division of
    # the 12 pooled deviations puts every 5 in the first group: p = 1 / C(12, 6)
    assert seed001.less_spread_p(spread, flat) == pytest.approx(1 / math.comb(12, 6))
    assert seed001.less_spread_p(flat, spread) == 1.0
    assert seed001.less_spread_p(flat, flat) == 1.0
    # too many divisions to enumerate: seeded random ones, p = (1 + hits) / (1 + rounds)
    # 40 deviations of 10 against 40 of 0: one division in C(80, 40) puts every 10 first,
    # which no random division finds
    wide = [-10.0, 10.0] * 20
    assert math.comb(80, 40) > seed001.EXACT_LIMIT
    assert seed001.less_spread_p(wide, [5.0] * 40) == pytest.approx(1 / (1 + seed001.ROUNDS))


def test_sign_flip_and_strict_counts_on_known_inputs() -> None:
    # |Σ| = 4 only with every sign the same: 2 of 16 assignments
    assert seed001.sign_flip_p([1.0, 1.0, 1.0, 1.0]) == pytest.approx(2 / 16)
    assert seed001.sign_flip_p([0.0, 0.0, 0.0]) == 1.0
    assert seed001.sign_flip_p([1.0, -1.0]) == 1.0
    pr = seed001.paired([10.0, 10.0, 10.0, 10.0], [9.0, 11.0, 10.0, 8.0])
    assert (pr.faster, pr.slower, pr.ties) == (2, 1, 1)
    assert pr.mean_diff == pytest.approx(-0.5)
    assert seed001.summarise([1.0, 2.0, 3.0]) == seed001.Summary(3, 2.0, 1.0, 1.0, 3.0)
    assert (seed001.fmt_p(0.5), seed001.fmt_p(1 / 20001)) == ("0.500", "5.0e-05")


# ----------------------------------------------------------------- the section, quick


@pytest.fixture(scope="module")
def quick_section(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[Any]]:
    out = tmp_path_factory.mktemp("seed001")
    ctx = Context(True, out, jobs=2)
    sec = seed001.section(ctx)
    ctx.write_manifest()
    runs = json.loads((out / "specs" / "manifest.json").read_text())["runs"]
    return out, str(sec.html), runs


def test_the_section_is_in_the_report() -> None:
    assert seed001.section in SECTIONS


def test_the_section_runs_without_errors(quick_section: tuple[Path, str, list[Any]]) -> None:
    out, html, runs = quick_section
    assert runs and all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    assert "Quick mode" in html
    for r in runs:
        assert (out / r["spec"]).is_file(), r["spec"]
    size = seed001.sizes(True)
    want = 1 + 2 * 3 * size.seeds + 3 * size.up_seeds + 5 * size.httpd_seeds + 3
    assert len(runs) == want
    assert seed001.DATA["buildworld"]["provenance"] in unescape(html)


def _walls(runs: list[Any], prefix: str) -> list[float]:
    return [r["headline"]["value"] for r in runs if r["label"].startswith(prefix)]


def test_the_build_table_is_computed_from_the_runs(
        quick_section: tuple[Path, str, list[Any]]) -> None:
    _, html, runs = quick_section
    rows = parse_tables(html)["seed001-build"]
    size = seed001.sizes(True)
    assert [(r[0], r[1]) for r in rows] == [(f"-j{j}", p) for j in seed001.JOBS
                                           for p in seed001.FREEBSD]
    for r in rows:
        walls = _walls(runs, f"seed001 buildworld {r[0]} {r[1]} seed ")
        walls = [w for w, lab in zip(walls, [x["label"] for x in runs
                                             if x["label"].startswith(
                                                 f"seed001 buildworld {r[0]} {r[1]} seed ")],
                                     strict=True) if lab.endswith("on 2 CPUs")]
        assert len(walls) == size.seeds == parse_number(r[2])
        assert parse_number(r[3]) == pytest.approx(statistics.fmean(walls), abs=1e-3)
        assert parse_number(r[4]) == pytest.approx(statistics.stdev(walls), abs=1e-3)
        assert parse_number(r[5]) == pytest.approx(min(walls), abs=1e-3)
        assert parse_number(r[6]) == pytest.approx(max(walls), abs=1e-3)
    # the varying machine makes runs differ: not one constant per policy
    assert any(parse_number(r[4]) for r in rows)


def test_the_calibration_row_is_the_closed_form(
        quick_section: tuple[Path, str, list[Any]]) -> None:
    _, html, runs = quick_section
    rows = parse_tables(html)["seed001-calibration"]
    t = seed001.totals(seed001.sizes(True))
    sim = rows[-1]
    assert parse_number(sim[1]) == pytest.approx(t["user_us"] / 1e6, abs=1e-3)
    assert parse_number(sim[2]) == pytest.approx(t["sys_us"] / 1e6, abs=1e-3)
    assert "gives the closed form exactly" in html
    cal = next(r for r in runs if r["label"].startswith("seed001 calibration"))
    tot = cal["totals"]
    assert tot["cpu_ns"] - tot["sys_ns"] - tot["irq_ns"] == t["user_us"] * 1000


def test_the_verdicts_are_the_tests(quick_section: tuple[Path, str, list[Any]]) -> None:
    _, html, runs = quick_section
    rows = parse_tables(html)["seed001-tests"]
    assert [(r[0], r[1]) for r in rows] == (
        [(f"-j{j}, two CPUs", p) for j in seed001.JOBS for p in seed001.FREEBSD[1:]]
        + [("-j4, one CPU", p) for p in seed001.FREEBSD[1:]])
    size = seed001.sizes(True)
    for r in rows:
        prefix = "seed001 buildworld -j4" if "one CPU" in r[0] else \
            f"seed001 buildworld {r[0].split(',')[0]}"
        cpus = "on 1 CPU" if "one CPU" in r[0] else "on 2 CPUs"

        def walls(p: str, prefix: str = prefix, cpus: str = cpus) -> list[float]:
            return [x["headline"]["value"] for x in runs
                    if x["label"].startswith(f"{prefix} {p} seed ") and x["label"].endswith(cpus)]
        base, other = walls("freebsd-4bsd"), walls(r[1])
        n = size.up_seeds if "one CPU" in r[0] else size.seeds
        assert len(base) == len(other) == n
        assert parse_number(r[4]) == pytest.approx(seed001.less_spread_p(base, other), abs=1e-3)
        pr = seed001.paired(base, other)
        assert [parse_number(x) for x in r[6:9]] == [pr.faster, pr.slower, pr.ties]
        assert parse_number(r[9]) == pytest.approx(pr.p, abs=1e-3)
    text = unescape(html)
    smp = [r for r in rows if "two CPUs" in r[0]]
    less = sum(1 for r in smp if parse_number(r[4]) < seed001.ALPHA)
    assert f"“ULE varies less”: in {less} of {len(smp)} comparisons" in text
    for line in seed001.verdicts([seed001.compare([1.0, 2.0], [1.0, 2.0], "x", "y")]):
        assert "cannot be told" in line
    assert text.count("cannot be told") + text.count("varies less than 4BSD (p") >= len(rows)


def test_the_server_and_cost_tables(quick_section: tuple[Path, str, list[Any]]) -> None:
    _, html, runs = quick_section
    tables = parse_tables(html)
    rows = tables["seed001-httpd"]
    assert [r[0] for r in rows] == [*seed001.FREEBSD, *seed001.LINUX]
    for r in rows:
        rates = [x["headline"]["value"] for x in runs
                 if x["label"].startswith(f"seed001 httpd {r[0]} seed ")]
        assert parse_number(r[2]) == pytest.approx(statistics.fmean(rates), abs=0.01)
    for cpus in (1, 2):
        cost = tables[f"seed001-sched-cost-{cpus}cpu"]
        assert cost and parse_number(cost[-1][0]) == 10_000
    assert "O(N) for freebsd-4bsd" in unescape(html)


def test_the_instruments_cover_the_freebsd_policies(
        quick_section: tuple[Path, str, list[Any]]) -> None:
    out, html, runs = quick_section
    rows = parse_tables(html)["seed001-timeslice"]
    zero = next(r for r in rows if r[0] == "0")
    # nice 0 at HZ 1000: 4BSD 100 ms, 5.x ULE 142 ticks, ULE 12 ticks of 127 Hz
    assert [parse_number(x) for x in zero[1:4]] == [100.0, 142.0, 94.5]
    for p in seed001.FREEBSD:
        assert (out / "plots" / f"seed001-dprio-{p}.png").is_file()
        trace = next(r["trace"] for r in runs if r["label"] == f"seed001 dynamic priority {p}")
        assert "|td_priority|" in (out / trace).read_text()

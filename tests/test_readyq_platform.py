"""The platform cost models of `schedlab readyq` (seed 002's CPU): their arithmetic on
synthetic counts, the fit of the memory wait, and the CLI and report paths on real counts.
No timings: the model reads exact counts only."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

from conftest import CliRunner
from schedlab import readyq, readyq_platform
from schedlab.readyq_platform import ACCESSES, CACHE_OFF, CACHE_ON, SH3

SINGLE, BITMAP = readyq_platform.PAIRS[SH3]
LEVELS = 2


def _counts(per_n: list[list[tuple[int, int, int]]]) -> dict[str, Any]:
    """Instructions, data reads and writes per N and case, as the probe's summaries."""
    out: dict[str, Any] = {}
    for k, metric in enumerate(("instructions", "data_reads", "data_writes")):
        cases = [[float(c[k]) for c in row] for row in per_n]
        out[metric] = {"cases": cases, "avg": [sum(r) / len(r) for r in cases],
                       "worst": [max(r) for r in cases]}
    return out


def synthetic_doc() -> dict[str, Any]:
    """Two cases per N (priorities 0 and 1) at N = 1, 10, 20. The single list's work grows
    with N, the bitmap lists' does not; the bitmap lists make more memory accesses per
    instruction, so a longer memory wait favours the single list."""
    single = [[(20, 2, 2), (30, 4, 2)], [(60, 6, 2), (100, 12, 2)],
              [(110, 12, 2), (190, 24, 2)]]
    bitmap = [[(80, 30, 10), (80, 30, 10)]] * 3
    doc: dict[str, Any] = {
        "n": [1, 10, 20], "levels": LEVELS, "backends": [SINGLE, BITMAP],
        "cases": {op: [{"prio": 0, "target": None}, {"prio": 1, "target": None}]
                  for op in readyq.OPS},
        "instructions": {"available": True}, "code_size": {"available": False},
    }
    for op in readyq.OPS:
        doc[op] = {SINGLE: _counts(single), BITMAP: _counts(copy.deepcopy(bitmap))}
    return doc


def test_cycles_charge_a_wait_per_fetch_and_per_data_access() -> None:
    # one fetch per instruction: 10 instructions, 2 reads, 3 writes, wait 4
    assert readyq_platform.cycles(10, 2, 3, 4.0) == 10 + 4 * (10 + 2 + 3)
    assert readyq_platform.cycles(10, 2, 3, 0.0) == 10


def test_the_fitted_wait_reproduces_the_figure_it_was_fitted_to() -> None:
    doc = synthetic_doc()
    section = readyq_platform.apply(doc, SH3)
    fit = section["parameters"]["memory_wait_cycles"]
    assert fit["kind"] == "fitted" and fit["reason"] is None
    # chg_pri's worst at N = 10: single 100 + W·(100 + 14), bitmap 80 + W·(80 + 40): W = 10/3
    assert fit["value"] == pytest.approx(20 / 6, rel=1e-12)
    i = doc["n"].index(10)
    single = doc["chg_pri"][SINGLE][CACHE_OFF]["worst"][i]
    bitmap = doc["chg_pri"][BITMAP][CACHE_OFF]["worst"][i]
    assert single == pytest.approx(bitmap, rel=1e-12)
    # a tie, called a tie, where the single list stops being as fast
    c = section["comparison"][CACHE_OFF]["chg_pri"]["worst"]
    assert c == {"bitmap_from": 10, "single_until": 10, "single_wins": 1, "ties": 1,
                 "bitmap_wins": 1}
    # the figures are µs at the seed's 133 MHz
    hz = readyq_platform.clock_hz()
    assert hz == 133e6
    w = fit["value"]
    assert doc["chg_pri"][SINGLE][CACHE_OFF]["cases"][i][1] == pytest.approx(
        (100 + w * (100 + 12 + 2)) / hz * 1e6)
    assert doc["chg_pri"][SINGLE][CACHE_ON]["cases"][i][1] == pytest.approx(100 / hz * 1e6)
    assert doc["chg_pri"][SINGLE][ACCESSES]["worst"][i] == 114
    assert section["fitted"] and "figure 4" in section["fitted"][0]
    kinds = {k: p["kind"] for k, p in section["parameters"].items()}
    assert kinds == {"clock_mhz": "published", "fetches_per_instruction": "assumed",
                     "cycles_per_instruction": "assumed", "memory_wait_cycles": "fitted"}


def test_a_predicted_figure_follows_its_counts_and_not_the_fit() -> None:
    doc = synthetic_doc()
    readyq_platform.apply(doc, SH3)
    before = doc["act_tsk"][SINGLE][CACHE_OFF]["avg"][0]
    wait = readyq_platform.fit_wait(doc, SINGLE, BITMAP)["value"]
    changed = synthetic_doc()
    changed["act_tsk"][SINGLE]["instructions"]["cases"][0][0] += 7
    section = readyq_platform.apply(changed, SH3)
    # act_tsk is predicted: seven more instructions cost (1 + W) · 7 cycles more, halved by
    # the average over two cases; the wait, fitted on chg_pri, did not move
    assert section["parameters"]["memory_wait_cycles"]["value"] == wait
    after = changed["act_tsk"][SINGLE][CACHE_OFF]["avg"][0]
    assert after - before == pytest.approx((1 + wait) * 7 / 2 / 133)


def test_a_figure_no_wait_reproduces_is_reported_not_forced() -> None:
    doc = synthetic_doc()
    # the single list now makes fewer instructions AND fewer accesses at N = 10: no wait
    # makes the two equal there
    for row in doc["chg_pri"][SINGLE]["instructions"]["cases"]:
        row[:] = [5.0 for _ in row]
    fit = readyq_platform.fit_wait(doc, SINGLE, BITMAP)
    assert fit["solution"] is None and fit["value"] == 0.0
    assert "faster there for every wait" in fit["reason"]


def test_unknown_platform_and_missing_counts_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown platform"):
        readyq_platform.apply(synthetic_doc(), "z80")
    doc = synthetic_doc()
    doc["instructions"] = {"available": False}
    with pytest.raises(ValueError, match="needs instruction and data-access counts"):
        readyq_platform.apply(doc, SH3)


def test_ties_are_ties_and_strict_wins_are_counted() -> None:
    ns = [1, 2, 3, 4]
    single = [1.0, 2.0 + 1e-13, 5.0, 9.0]
    bitmap = [2.0, 2.0, 4.0, 4.0]
    c = readyq.compare_lists(ns, single, bitmap)
    # a tie counts as "as fast" for both sides
    assert c == {"bitmap_from": 2, "single_until": 2, "single_wins": 1, "ties": 1,
                 "bitmap_wins": 2}


def test_size_direction() -> None:
    cs = {"available": True, "backends": {"a": {"total": 700}, "b": {"total": 2000}}}
    c = readyq.size_comparison(cs, "a", "b")
    assert c is not None and c["direction"] == "smaller" and c["as_seed"]
    assert math.isclose(c["ratio"], 0.35)
    assert readyq.size_comparison(cs, "b", "a")["direction"] == "larger"  # type: ignore[index]
    assert "as in the seed" in readyq.size_direction(cs, "a", "b")
    assert readyq.size_comparison({"available": False}, "a", "b") is None


# --- the real path -------------------------------------------------------------------------

#: Both sides of the seed's crossover and the fit's N = 10.
TEST_NS = [1, 2, 5, 10, 32]


def _need_probe() -> None:
    try:
        readyq.find_probe()
    except readyq.ProbeError:
        pytest.skip("rtq-probe not built (make develop)")


@pytest.fixture(scope="module")
def counted_doc() -> dict[str, Any]:
    """The quick study with counts (valgrind), this machine as the platform."""
    _need_probe()
    if readyq.find_valgrind() is None:
        pytest.skip("valgrind not installed")
    return readyq.measure(quick=True, ns=TEST_NS)


@pytest.fixture(scope="module")
def timed_doc() -> dict[str, Any]:
    _need_probe()
    return readyq.measure(quick=True, count=False, ns=TEST_NS)


@pytest.fixture(scope="module")
def sh3_doc(counted_doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(counted_doc)
    doc["platform"] = readyq_platform.apply(doc, SH3)
    return doc


def test_no_count_with_the_sh3_model_is_one_clear_error(cli: CliRunner) -> None:
    r = cli("readyq", "--quick", "--no-count", "--platform", "sh3-nocache", "--tasks", "1,2")
    if "rtq-probe not found" in r.stderr:
        pytest.skip("rtq-probe not built (make develop)")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "drop --no-count" in lines[0], r.stderr


def test_cli_json_names_the_platform_and_what_was_fitted(cli: CliRunner,
                                                          counted_doc: dict[str, Any]) -> None:
    # counted_doc: skipped with the reason when the probe or valgrind is missing
    r = cli("readyq", "--quick", "--json", "--platform", "sh3-nocache", "--tasks", "1,5,10,32")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    p = doc["platform"]
    assert p["name"] == "sh3-nocache"
    assert p["pair"] == {"single": "single-list-lean", "bitmap": "bitmap-lists-jsp"}
    assert p["parameters"]["memory_wait_cycles"]["kind"] == "fitted"
    assert p["fitted"] and p["predicted"]
    for op in readyq.OPS:
        for b in (SINGLE, BITMAP):
            assert {CACHE_OFF, CACHE_ON, ACCESSES} <= doc[op][b].keys()
        for metric in readyq_platform.MODEL_METRICS:
            for stat in ("avg", "worst"):
                c = p["comparison"][metric][op][stat]
                assert c["single_wins"] + c["ties"] + c["bitmap_wins"] == len(doc["n"])
    assert p["size"]["single"] == SINGLE


def _schedtsk_moves(doc: dict[str, Any], op: str) -> list[list[bool]]:
    """Per N and case: is the task chg_pri moves the highest-priority ready task
    (``schedtsk``)? The population's first task in dispatch order is; with one ready task,
    the head, the middle and the tail are that same task."""
    return [[op == "chg_pri" and (c["target"] == "head" or n == 1) for c in doc["cases"][op]]
            for n in doc["n"]]


def test_the_jsp_search_runs_only_where_jsps_kernel_searches(
        sh3_doc: dict[str, Any]) -> None:
    # The same lists searched by the CPU's instruction and by JSP's software bitmap_search
    # differ only where a search runs. TOPPERS/JSP 1.4 task.c: make_runnable (act_tsk) and
    # rotate_ready_queue (rot_rdq) never search; change_priority (chg_pri) searches only
    # when the task was schedtsk and its priority did not rise (every chg_pri of the head
    # here: it has the highest priority, 0).
    for op in readyq.OPS:
        hw = sh3_doc[op]["bitmap-lists"]["instructions"]["cases"]
        sw = sh3_doc[op]["bitmap-lists-jsp"]["instructions"]["cases"]
        searched = _schedtsk_moves(sh3_doc, op)
        for i, n in enumerate(sh3_doc["n"]):
            for j, case in enumerate(sh3_doc["cases"][op]):
                if searched[i][j]:
                    assert sw[i][j] > hw[i][j], (op, n, case)
                else:
                    assert sw[i][j] == hw[i][j], (op, n, case)
    assert any(any(row) for row in _schedtsk_moves(sh3_doc, "chg_pri"))
    # the lean single list does less than the simulator's at every N
    for op in readyq.OPS:
        lean = sh3_doc[op][SINGLE]["instructions"]["worst"]
        full = sh3_doc[op]["single-list"]["instructions"]["worst"]
        assert all(x < y for x, y in zip(lean, full, strict=True)), op
    tables = sh3_doc["code_size"]["backends"]["bitmap-lists-jsp"]["tables"]
    assert tables == {"NIBBLE_LOWEST_BIT": 16}


def test_report_shows_both_platforms(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                     counted_doc: dict[str, Any]) -> None:
    from schedlab import report, reproduce
    from schedlab.seeds import seed002

    doc = copy.deepcopy(counted_doc)
    monkeypatch.setattr(readyq, "measure", lambda quick, count=True, probe=None, ns=None,
                        platform="x86-host": doc)
    page = reproduce.main(True, tmp_path, section_fns=[seed002.section],
                          progress=False).read_text(encoding="utf-8")
    tables = report.parse_tables(page)
    rows = tables["seed002-platform"]
    labels = {r[0] for r in rows}
    assert any(x.startswith("x86-host") for x in labels)
    assert any(x.startswith("sh3 model") for x in labels)
    # every row counts every N once
    for r in rows:
        assert sum(int(x) for x in r[6:9]) == len(doc["n"]), r
    params = {r[0]: r[2] for r in tables["seed002-model-params"]}
    assert params["memory_wait_cycles"] == "fitted" and params["clock_mhz"] == "published"
    sizes = tables["seed002-sizes"]
    assert [r[5] for r in sizes if r[0].startswith("seed")] == ["smaller"]
    assert (tmp_path / "plots" / "seed002-sh3-model.png").exists()


def test_report_without_counts_says_why_the_model_is_missing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, timed_doc: dict[str, Any]) -> None:
    from schedlab import reproduce
    from schedlab.seeds import seed002

    doc = dict(timed_doc)
    doc["instructions"] = {"available": False, "reason": "valgrind not found on PATH"}
    monkeypatch.setattr(readyq, "measure", lambda quick, count=True, probe=None, ns=None,
                        platform="x86-host": doc)
    page = reproduce.main(True, tmp_path, section_fns=[seed002.section],
                          progress=False).read_text(encoding="utf-8")
    assert "The sh3-nocache model is not shown" in page

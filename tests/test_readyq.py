"""`schedlab readyq` and the seed 002 report section.

The measurements need the ``rtq-probe`` binary (built and installed by ``make develop``);
tests that run it are skipped with that reason when it is missing. No test looks at a
timing: only at shapes, at exact instruction counts (deterministic under callgrind) and
at the computation of the crossover.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import CliRunner
from schedlab import readyq, report, reproduce
from schedlab.seeds import seed002


def _probe() -> Path | None:
    try:
        return readyq.find_probe()
    except readyq.ProbeError:
        return None


#: Fewer task counts than --quick, to keep each test short: still both sides of the seed's
#: crossover (5 and 10 tasks) and two counts where every level holds several tasks.
TEST_NS = [1, 2, 5, 10, 32, 64]

needs_probe = pytest.mark.skipif(_probe() is None, reason="rtq-probe not built (make develop)")


@pytest.fixture(scope="module")
def timed_doc() -> dict[str, Any]:
    """The quick study without instruction counts (the probe's time mode only)."""
    if _probe() is None:
        pytest.skip("rtq-probe not built (make develop)")
    return readyq.measure(quick=True, count=False, ns=TEST_NS)


@pytest.fixture(scope="module")
def counted_doc() -> dict[str, Any]:
    """The quick study with instruction counts (needs valgrind)."""
    if _probe() is None:
        pytest.skip("rtq-probe not built (make develop)")
    if readyq.find_valgrind() is None:
        pytest.skip("valgrind not installed")
    return readyq.measure(quick=True, ns=TEST_NS)


# --- crossover ------------------------------------------------------------------------


def test_crossover_smallest_n_from_which_bitmap_stays_ahead() -> None:
    ns = [1, 2, 3, 5, 10]
    # bitmap ahead at 2, behind at 3, ahead (or tied) from 5 on
    single = [1.0, 5.0, 2.0, 6.0, 9.0]
    bitmap = [2.0, 4.0, 3.0, 6.0, 3.0]
    c = readyq.crossover_of(ns, single, bitmap)
    assert c == {"bitmap_from": 5, "single_until": 5}  # a tie counts for both


def test_crossover_when_one_side_never_wins() -> None:
    ns = [1, 2, 4]
    assert readyq.crossover_of(ns, [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) == {
        "bitmap_from": None, "single_until": 4}
    assert readyq.crossover_of(ns, [3.0, 3.0, 3.0], [2.0, 2.0, 2.0]) == {
        "bitmap_from": 1, "single_until": None}


def _fake_doc(metrics: dict[str, list[float]]) -> dict[str, Any]:
    doc: dict[str, Any] = {"n": [1, 2, 3]}
    for op in readyq.OPS:
        doc[op] = {readyq.SINGLE: {}, readyq.BITMAP: {}}
        for m, single in metrics.items():
            doc[op][readyq.SINGLE][m] = {"avg": single, "worst": single}
            doc[op][readyq.BITMAP][m] = {"avg": [2.0, 2.0, 2.0], "worst": [2.0, 2.0, 2.0]}
    return doc


def test_crossover_headline_prefers_instruction_counts() -> None:
    doc = _fake_doc({"instructions": [1.0, 3.0, 4.0], "ns_warm": [1.0, 1.0, 4.0]})
    cx = readyq.crossover(doc)
    assert cx["metric"] == "instructions"
    assert cx["act_tsk"]["avg"] == {"bitmap_from": 2, "single_until": 1, "single_wins": 1,
                                    "ties": 0, "bitmap_wins": 2}
    assert cx["by_metric"]["ns_warm"]["rot_rdq"]["worst"] == {
        "bitmap_from": 3, "single_until": 2, "single_wins": 2, "ties": 0, "bitmap_wins": 1}
    no_ir = _fake_doc({"ns_warm": [1.0, 1.0, 4.0]})
    assert readyq.crossover(no_ir)["metric"] == "ns_warm"
    assert readyq.crossover(no_ir)["chg_pri"]["avg"]["single_until"] == 2


# --- code size parsing ------------------------------------------------------------------

NM = """\
0000000000001000 0000000000000020 T rtqp_m_single_list_act_tsk
0000000000001020 0000000000000100 t _ZN12schedlab_rtq11single_list4walk17hE
0000000000001120 0000000000000400 T _ZN4core9panicking5panic17hE
0000000000001520 0000000000000010 T rtqp_s_single_list_peek
0000000000002000 0000000000000008 D some_data
0000000000003000 0000000000000010 R _ZN12schedlab_rtq10jsp_search17NIBBLE_LOWEST_BIT17hE
"""
OBJDUMP = """\
0000000000001000 <rtqp_m_single_list_act_tsk>:
    1000:\tcall   1020 <_ZN12schedlab_rtq11single_list4walk17hE>
    1005:\tjmp    1120 <_ZN4core9panicking5panic17hE>

0000000000001020 <_ZN12schedlab_rtq11single_list4walk17hE>:
    1020:\tjne    1030 <_ZN12schedlab_rtq11single_list4walk17hE+0x10>
    1024:\tret

0000000000001520 <rtqp_s_single_list_peek>:
    1520:\tret
"""


def test_code_size_counts_reachable_ready_queue_code_once() -> None:
    sizes, calls = readyq.parse_nm(NM), readyq.parse_objdump(OBJDUMP)
    assert "some_data" not in sizes
    assert calls["rtqp_m_single_list_act_tsk"] == {
        "_ZN12schedlab_rtq11single_list4walk17hE", "_ZN4core9panicking5panic17hE"}
    # the entry (0x20) + the crate's walk (0x100); std's panic is shared, not counted
    assert readyq.reachable_size(["rtqp_m_single_list_act_tsk"], calls, sizes) == 0x120
    both = ["rtqp_m_single_list_act_tsk", "rtqp_s_single_list_peek"]
    assert readyq.reachable_size(both, calls, sizes) == 0x130
    assert readyq.reachable_size(["missing"], calls, sizes) == 0
    # JSP's search table is read-only data, counted with the back end that reads it
    data = readyq.parse_nm(NM, "Rr")
    assert readyq.table_sizes("bitmap-lists-jsp", data) == {"NIBBLE_LOWEST_BIT": 16}
    assert readyq.table_sizes("bitmap-lists", data) == {}


# --- the probe missing, valgrind missing ------------------------------------------------


def test_missing_probe_is_one_clear_error(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setattr(readyq.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(readyq.ProbeError) as e:
        readyq.find_probe()
    assert e.value.code == 2
    assert "make develop" in str(e.value)


def test_cli_without_probe_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    from schedlab import cli

    monkeypatch.setattr(readyq.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.run_cli(["readyq", "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: readyq: rtq-probe not found")


def test_parse_tasks() -> None:
    assert readyq.parse_tasks("1,5,10") == [1, 5, 10]
    for bad, why in (("1,x", "integers"), ("0,3", "1..254"), ("5,255", "1..254"),
                     ("5,5", "ascending"), ("10,5", "ascending")):
        with pytest.raises(ValueError, match=why):
            readyq.parse_tasks(bad)


def test_bad_arguments_exit_2(cli: CliRunner) -> None:
    for args in (["readyq", "--bogus"], ["readyq", "extra"], ["readyq", "--tasks", "3,1"],
                 ["readyq", "--platform", "sh2"]):
        r = cli(*args)
        assert r.returncode == 2, args
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr


@needs_probe
def test_without_valgrind_counts_are_unavailable(monkeypatch: pytest.MonkeyPatch,
                                                 timed_doc: dict[str, Any]) -> None:
    monkeypatch.setattr(readyq, "find_valgrind", lambda: None)
    calls: list[str] = []
    real = readyq.run_probe

    def spy(probe: Path, mode: str, quick: bool, valgrind: str | None = None,
            ns: Any = None) -> Any:
        calls.append(mode)
        if mode == "time":  # reuse the module's measurement: the shape is what matters
            return {k: timed_doc[k] for k in ("levels", "n", "backends", "cases")} | {
                "ops": {op: timed_doc[op] for op in readyq.OPS}}
        return real(probe, mode, quick, valgrind, ns)

    monkeypatch.setattr(readyq, "run_probe", spy)
    doc = readyq.measure(quick=True)
    assert "count" not in calls
    assert doc["instructions"]["available"] is False
    assert "valgrind not found" in doc["instructions"]["reason"]
    assert doc["crossover"]["metric"] == "ns_warm"
    assert all("instructions" not in doc[op][b] for op in readyq.OPS for b in doc["backends"])


@needs_probe
def test_a_failing_count_run_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch,
                                                    timed_doc: dict[str, Any]) -> None:
    monkeypatch.setattr(readyq, "find_valgrind", lambda: "/nonexistent/valgrind")
    real = readyq.run_probe

    def fake(probe: Path, mode: str, quick: bool, valgrind: str | None = None,
             ns: Any = None) -> Any:
        if mode == "time":
            return {k: timed_doc[k] for k in ("levels", "n", "backends", "cases")} | {
                "ops": {op: timed_doc[op] for op in readyq.OPS}}
        return real(probe, mode, quick, valgrind, ns)

    monkeypatch.setattr(readyq, "run_probe", fake)
    doc = readyq.measure(quick=True)
    assert doc["instructions"]["available"] is False
    assert "count" in doc["instructions"]["reason"]


# --- the real measurement ---------------------------------------------------------------


@needs_probe
def test_json_shape(cli: CliRunner) -> None:
    r = cli("readyq", "--quick", "--json", "--no-count", "--tasks", "1,3,40")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "schedlab.readyq/1"
    assert doc["n"] == [1, 3, 40]
    assert {"machine", "backends", "code_size", "crossover"} <= doc.keys()
    assert doc["backends"] == ["single-list", "single-list-lean", "bitmap-lists",
                               "bitmap-lists-jsp", "two-level-bitmap", "tree"]
    assert doc["platform"]["name"] == "x86-host" and doc["platform"]["fitted"] == []
    n = len(doc["n"])
    for op in readyq.OPS:
        for b in doc["backends"]:
            for metric in ("ns_warm", "ns_cold"):
                fig = doc[op][b][metric]
                assert len(fig["avg"]) == len(fig["worst"]) == n
                # the mean of equal values may exceed them by a rounding error
                assert all(w >= a * (1 - 1e-9)
                           for a, w in zip(fig["avg"], fig["worst"], strict=True))
                assert len(fig["by_prio"][0]) == doc["levels"]
        assert set(doc["crossover"][op]) == {"avg", "worst"}
    assert doc["crossover"]["metric"] == "ns_warm"
    assert doc["instructions"]["available"] is False


def test_instruction_counts_follow_the_structures(counted_doc: dict[str, Any]) -> None:
    doc = counted_doc
    assert doc["instructions"]["available"] is True
    assert doc["instructions"]["warm_cold_instruction_mismatches"] == 0
    ns = doc["n"]
    for op in readyq.OPS:
        single = doc[op][readyq.SINGLE]["instructions"]["worst"]
        bitmap = doc[op][readyq.BITMAP]["instructions"]["worst"]
        # the single list walks every ready task in its worst case: strictly more work per
        # added task; the per-priority lists do not depend on N once every level is used
        assert all(b > a for a, b in zip(single, single[1:], strict=False)), op
        from_16 = [x for n, x in zip(ns, bitmap, strict=True) if n >= 32]
        assert len(set(from_16)) == 1, (op, from_16)
        # at the largest N the bitmap is ahead, so a crossover exists
        assert doc["crossover"][op]["worst"]["bitmap_from"] is not None
        # act_tsk at the single list's worst priority (the lowest) walks past everyone
        by_prio = doc[op][readyq.SINGLE]["instructions"]["by_prio"][-1]
        assert by_prio[-1] > by_prio[0]
    sizes = doc["code_size"]
    assert sizes["available"] is True
    for b in doc["backends"]:
        assert all(v > 0 for v in sizes["backends"][b]["ops"].values()), b


# --- the report section -----------------------------------------------------------------


def _render(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, doc: dict[str, Any]) -> str:
    monkeypatch.setattr(readyq, "measure", lambda quick, count=True, probe=None, ns=None: doc)
    index = reproduce.main(True, tmp_path, section_fns=[seed002.section], progress=False)
    return index.read_text(encoding="utf-8")


def test_section_renders_tables_and_figures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            counted_doc: dict[str, Any]) -> None:
    page = _render(monkeypatch, tmp_path, counted_doc)
    tables = report.parse_tables(page)
    for tid in ("seed002-crossover", "seed002-selected", "seed002-codesize",
                "seed002-findings"):
        assert tables.get(tid), tid
    plots = {p.name for p in (tmp_path / "plots").iterdir()}
    for k in range(1, 7):
        assert any(p.startswith(f"seed002-fig{k}-") and p.endswith(".png") for p in plots), k
    assert "seed002-instructions.png" in plots
    # the seed's published object sizes sit beside ours
    sizes = tables["seed002-codesize"]
    assert [r[3] for r in sizes if r[0].startswith("seed:")] == ["24.80", "23.00"]
    # one findings row per seed figure, plus object size and conclusion
    assert len(tables["seed002-findings"]) == len(seed002.PUBLISHED_FINDINGS) + 2
    # the crossover table's figures are the document's
    row = next(r for r in tables["seed002-crossover"]
               if r[:3] == ["act_tsk", "instructions", "worst"])
    want = counted_doc["crossover"]["act_tsk"]["worst"]["bitmap_from"]
    assert report.parse_number(row[4]) == want


def test_section_without_counts_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        timed_doc: dict[str, Any]) -> None:
    doc = dict(timed_doc)
    doc["instructions"] = {"available": False, "reason": "valgrind not found on PATH"}
    page = _render(monkeypatch, tmp_path, doc)
    assert "Instruction counts unavailable" in page
    assert not (tmp_path / "plots" / "seed002-instructions.png").exists()
    assert report.parse_tables(page).get("seed002-crossover")


def test_section_without_probe_is_a_note(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    def missing(quick: bool, count: bool = True, probe: Path | None = None,
                ns: Any = None) -> Any:
        raise readyq.ProbeError("rtq-probe not found", 2)

    monkeypatch.setattr(readyq, "measure", missing)
    page = reproduce.main(True, tmp_path, section_fns=[seed002.section],
                          progress=False).read_text(encoding="utf-8")
    assert "Not measured: rtq-probe not found" in page


@needs_probe
def test_code_size_of_a_stripped_binary_is_unavailable(tmp_path: Path) -> None:
    probe = readyq.find_probe()
    stripped = tmp_path / "rtq-probe"
    stripped.write_bytes(probe.read_bytes())
    strip = shutil.which("strip")
    if strip is None:
        pytest.skip("strip (binutils) not installed")
    subprocess.run([strip, str(stripped)], check=True)
    cs = readyq.code_size(stripped, {"single-list": ["rtqp_m_single_list_act_tsk"]})
    assert cs["available"] is False and "stripped" in cs["reason"]

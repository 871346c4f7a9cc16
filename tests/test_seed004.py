"""Seed 004 (a Deadline I/O scheduler with a low-priority class): the seed's claims as
stored, the agreement lines computed from them, and the report section run in quick mode
on the real simulator."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.seeds import SECTIONS, seed004


def test_the_data_file_holds_the_seeds_claims_with_provenance() -> None:
    d = seed004.DATA
    assert d["document"]["year"] == 2014 and d["document"]["authors"][0] == "Narimichi Takamura"
    iso = d["isolation"]
    assert (iso["alpha_ms"], iso["beta_ms"]) == (200, 500)
    assert iso["claims"]["deadline-lowprio"] == {
        "op": ">", "percent": 99, "text": iso["claims"]["deadline-lowprio"]["text"]}
    assert iso["claims"]["deadline"]["op"] == "<" and iso["claims"]["deadline"]["percent"] == 30
    assert "slide 24" in iso["provenance"] and "slide 23" in iso["provenance"]
    assert d["timeline"]["beta_ms"] == 5000 and d["timeline"]["file_bytes"] == 5_000_000_000
    assert d["overhead"]["patterns"] == ["SeqRead", "RndRead", "SeqWrite", "RndWrite"]
    assert "measured by hand on the lab host, 2026" in d["host_reference"]["provenance"]


def _results(ratios: dict[tuple[str, str], float | None]) -> dict[tuple[str, str], Any]:
    return {k: {"alone": 100.0, "beside": v, "ratio": v, "job": 1.0} for k, v in ratios.items()}


def test_a_starved_job_is_not_counted_as_agreement() -> None:
    res = _results({("hdd", "deadline-lowprio"): 100.0, ("ssd", "deadline-lowprio"): 99.5})
    res[("hdd", "deadline-lowprio")]["job"] = 0.0
    line = next(li for li in seed004.agreement_lines(res) if li.startswith("deadline-lowprio:"))
    assert "agrees on 1 of 2 devices (ssd)" in line and "not comparable on hdd" in line


def test_agreement_is_strict_and_counted_per_device() -> None:
    res = _results({("hdd", "deadline"): 29.9, ("ssd", "deadline"): 30.0,
                    ("hdd", "deadline-lowprio"): 99.0, ("ssd", "deadline-lowprio"): None})
    lines = seed004.agreement_lines(res)
    assert any(line.startswith("deadline:") and "agrees on 1 of 2 devices (hdd)" in line
               for line in lines), lines
    assert any(line.startswith("deadline-lowprio:") and "agrees on 0 of 2" in line
               for line in lines), lines


def test_agreement_lines_follow_the_data_not_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    res = _results({("hdd", "deadline"): 50.0, ("ssd", "deadline"): 50.0,
                    ("hdd", "deadline-lowprio"): 99.5, ("ssd", "deadline-lowprio"): 99.5})
    before = seed004.agreement_lines(res)
    assert any("deadline: the seed says < 30 %" in line and "0 of 2" in line for line in before)
    claims = json.loads(json.dumps(seed004.DATA["isolation"]["claims"]))
    claims["deadline"]["percent"] = 60
    claims["deadline-lowprio"]["percent"] = 99.9
    monkeypatch.setitem(seed004.DATA["isolation"], "claims", claims)
    after = seed004.agreement_lines(res)
    assert any("deadline: the seed says < 60 %" in line and "2 of 2" in line for line in after)
    assert any("deadline-lowprio: the seed says > 99.9 %" in line and "0 of 2" in line
               for line in after)


@pytest.fixture(scope="module")
def quick_section(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("seed004")
    ctx = Context(True, out, jobs=2)
    sec = seed004.section(ctx)
    ctx.write_manifest()
    return out, str(sec.html)


def test_the_section_is_in_the_report() -> None:
    assert seed004.section in SECTIONS


def test_the_section_runs_without_errors(quick_section: tuple[Path, str]) -> None:
    out, html = quick_section
    runs = json.loads((out / "specs" / "manifest.json").read_text())["runs"]
    assert runs and all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    assert "Quick mode" in html
    for heading in ("Slides 21–24", "Slides 25–27", "Slide 28", "Slide 32"):
        assert html.count(heading) == 1, heading
    assert seed004.DATA["isolation"]["provenance"] in unescape(html)


def test_the_isolation_table_has_every_device_and_scheduler(quick_section: tuple[Path, str]
                                                            ) -> None:
    _, html = quick_section
    rows = parse_tables(html)["seed004-isolation"]
    keys = [(r[0], r[1]) for r in rows]
    want = [(seed004.DEVICES[d], s) for d in seed004.DEVICES
            for s in (*seed004.SCHEDULERS, *seed004.MODERN)]
    assert keys == want
    for r in rows:
        alone, beside, pct = (parse_number(x) for x in r[2:5])
        assert alone is not None and beside is not None and pct is not None, r
        assert pct == pytest.approx(100.0 * beside / alone, rel=1e-2), r
    # The verdicts are the agreement lines' counts.
    for sched, claim in seed004.DATA["isolation"]["claims"].items():
        agreed = sum(1 for r in rows if r[1] == sched and r[6] == "agrees")
        line = next(li for li in seed004.agreement_lines(_from_rows(rows))
                    if li.startswith(f"{sched}:"))
        assert f"agrees on {agreed} of 2" in line
        assert f"{claim['op']} {claim['percent']} %" in line
        assert line.split(";")[0] in unescape(html)


def _from_rows(rows: list[list[str]]) -> dict[tuple[str, str], Any]:
    names = {v: k for k, v in seed004.DEVICES.items()}
    return {(names[r[0]], r[1]): {"ratio": parse_number(r[4]), "job": parse_number(r[7])}
            for r in rows}


def test_the_timeline_has_one_point_per_second(quick_section: tuple[Path, str]) -> None:
    out, html = quick_section
    runs = json.loads((out / "specs" / "manifest.json").read_text())["runs"]
    rows = parse_tables(html)["seed004-timeline"]
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    longest = max(r["sim_ns"] for r in runs if "timeline" in r["spec"])
    assert len(rows) == -(-longest // 1_000_000_000)
    # Every byte both readers read is in the series.
    size = seed004.sizes(True)
    cols = list(zip(*rows, strict=True))[1:]
    for col in cols:
        total = sum(parse_number(x) or 0.0 for x in col) * 1e6
        assert total == pytest.approx(size.timeline_bytes, rel=0.01)


def test_saved_specs_rerun_to_the_same_numbers(quick_section: tuple[Path, str]) -> None:
    out, _ = quick_section
    manifest = json.loads((out / "specs" / "manifest.json").read_text())
    for run in manifest["runs"][:4]:
        r = schedlab.simulate(out / run["spec"], scheduler=run["scheduler"],
                              params=run["params"], seed=run["seed"], samples=run["samples"])
        assert r.run["events"] == run["events"] and r.totals == run["totals"], run["label"]

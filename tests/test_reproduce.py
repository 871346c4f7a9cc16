"""`schedlab reproduce --quick` end to end on the real simulator, run once for the module:
the page's cells are filled, and every saved spec reruns to the same numbers."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import schedlab
from conftest import CliRunner
from schedlab.report import parse_number, parse_tables
from schedlab.seeds import seed000
from schedlab.seeds.seed000 import FILTERS, WAITERS


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory, cli: CliRunner) -> Path:
    """The report directory of one `schedlab reproduce --quick` run through the CLI."""
    out = tmp_path_factory.mktemp("reproduce")
    p = cli("reproduce", "--quick", "--out", out)
    assert p.returncode == 0, p.stderr
    return out


@pytest.fixture(scope="module")
def manifest(quick_report: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((quick_report / "specs" / "manifest.json").read_text())
    return doc


def _rerun(report: Path, run: dict[str, Any], spec_text: str | None = None) -> schedlab.Result:
    """One manifest entry run again through the public API, from the saved file (or from
    ``spec_text`` instead), keeping its samples as the original run did (statistics are
    exact over kept samples and histogram-resolved otherwise)."""
    o = run["overrides"]
    spec = spec_text if spec_text is not None else report / run["spec"]
    return schedlab.simulate(spec, scheduler=run["scheduler"], params=run["params"],
                             seed=run["seed"], cpus=o.get("cpus"), hz=o.get("hz"),
                             duration=f"{o['duration_ns']}ns" if "duration_ns" in o else None,
                             samples=run["samples"])


def _numbers(r: schedlab.Result) -> dict[str, Any]:
    return {"spec_sha256": r.run["spec_sha256"], "events": r.run["events"],
            "sim_ns": r.run["sim_ns"], "decisions": r.run["decisions"],
            "work_units": r.run["work_units"], "makespan_ns": r.makespan_ns,
            "headline": r.headline, "wakeup_latency_ns": r.summary["wakeup_latency_ns"],
            "totals": r.totals}


def test_every_saved_spec_reruns_to_the_same_numbers(quick_report: Path,
                                                     manifest: dict[str, Any]) -> None:
    runs = manifest["runs"]
    assert runs and all(r["status"] == "ok" for r in runs), [r for r in runs if r["error"]]
    for run in runs:
        saved = (quick_report / run["spec"]).read_bytes()
        # the file holds the very bytes the core hashed when it ran them
        assert hashlib.sha256(saved).hexdigest() == run["spec_sha256"], run["spec"]
        recorded = {k: run[k] for k in _numbers(_rerun(quick_report, run))}
        assert _numbers(_rerun(quick_report, run)) == recorded, run["label"]


def test_a_re_serialised_spec_is_caught(quick_report: Path, manifest: dict[str, Any]) -> None:
    """Sorting the keys of the broadcast wake-up spec reorders its events: a waiter's lock,
    wait, unlock become lock, unlock, wait — a wait without its mutex, which validation
    refuses (mutexes are error-checking) rather than run something else."""
    run = next(r for r in manifest["runs"] if r["spec"].endswith("seed000-wakeup-rt.json"))
    spec = json.loads((quick_report / run["spec"]).read_text(encoding="utf-8"))
    sorted_text = json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    with pytest.raises(schedlab.SpecError, match="which it does not hold") as info:
        _rerun(quick_report, run, sorted_text)
    assert info.value.path.endswith(".wait")


def test_manifest_lists_what_a_rerun_needs(manifest: dict[str, Any]) -> None:
    assert manifest["schema"] == "schedlab.reproduce-manifest/2" and manifest["quick"]
    specs = {r["spec"] for r in manifest["runs"]}
    assert {"specs/seed000-hackbench-zero-cost.json", "specs/seed000-hackbench-host-cost.json",
            "specs/seed000-wakeup-rt.json", "specs/seed000-wakeup-nonrt.json",
            "specs/seed000-fork.json", "specs/seed000-yield.json"} <= specs
    for run in manifest["runs"]:
        assert {"scheduler", "params", "seed", "overrides", "events", "headline",
                "spec_sha256"} <= set(run)
    wake = next(r for r in manifest["runs"] if r["spec"].endswith("wakeup-rt.json"))
    assert wake["headline"]["stats_ns"]["count"] > 0


def test_host_costs_live_in_the_saved_spec(quick_report: Path) -> None:
    spec = json.loads((quick_report / "specs/seed000-hackbench-host-cost.json").read_text())
    assert spec["schedlab"]["machine"]["profile"]["machine"]["context_switch_ns"] > 0
    zero = json.loads((quick_report / "specs/seed000-hackbench-zero-cost.json").read_text())
    assert zero["schedlab"]["machine"].get("context_switch_ns", 0) == 0
    assert "profile" not in zero["schedlab"]["machine"]


def test_host_crosscheck_saved_spec_carries_the_host_profile(quick_report: Path) -> None:
    spec = json.loads((quick_report / "specs/host-cyclictest.json").read_text())
    profile = spec["schedlab"]["machine"]["profile"]
    assert profile["name"] == "host"
    assert profile["provenance"]["kernel"]["timer_irq_ns"]["how"] == "fitted"
    page = (quick_report / "index.html").read_text(encoding="utf-8")
    rows = {r[0]: r for r in parse_tables(page)["host-crosscheck-table"]}
    assert list(rows) == ["min", "p50", "p99", "max"]


def test_report_cells_are_filled(quick_report: Path) -> None:
    page = (quick_report / "index.html").read_text(encoding="utf-8")
    tables = parse_tables(page)
    policies = seed000.linux_policies(schedlab.schedulers())
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
                if avg is None or avg < 0 or not parse_number(rows[0][11]):
                    empty.append(f"wake-up {w}/{f}/{p}: avg={cell} n={rows[0][11]}")
    notes = re.findall(r'<div class="note warn">(.*?)</div>', page, re.S)
    # A policy may produce no wake-up sample (its waiter starves behind the load within
    # the quick run); the page must then say so in a warning naming it. linux-cfs must
    # fill every cell.
    unexplained = [e for e in empty if e.split("/")[-1].split(":")[0] == "linux-cfs"
                   or not any(e.split("/")[-1].split(":")[0] in n for n in notes)]
    assert not unexplained, f"unpopulated cells: {unexplained}; page warnings: {notes}"
    for stem in ("seed000-hackbench", "seed000-wakeup-cdf"):
        assert (quick_report / "plots" / f"{stem}.svg").exists()
    ingo = next(r for r in tables["seed000-hackbench"] if r[0] == "ingo_ll")
    assert ingo[1] == "not modelled"

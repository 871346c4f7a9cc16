"""``schedlab analyze`` end to end: the analysis beside the simulated worst cases, JSON
output, and bad input (one line naming what is wrong and where, exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CliRunner
from test_cli import one_error_line


def _periodic(c_us: int, t_us: int, prio: int, jobs: int, name: str) -> dict[str, object]:
    return {"policy": "SCHED_FIFO", "priority": prio, "loop": jobs,
            "timer": {"ref": f"unique_{name}", "period": t_us, "mode": "absolute"},
            "run": c_us}


def _write(tmp_path: Path, spec: dict[str, object]) -> Path:
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(spec))
    return f


# (C, T) = (1, 4), (2, 6), (3, 12) ms, rate-monotonic: R = 1, 3, 10 ms; one task that
# sleeps, which the periodic model cannot describe.
TEXTBOOK = {
    "tasks": {
        "a": _periodic(1000, 4000, 30, 6, "a"),
        "b": _periodic(2000, 6000, 20, 4, "b"),
        "c": _periodic(3000, 12000, 10, 2, "c"),
        "idle": {"policy": "SCHED_OTHER", "loop": 2, "run": 100, "sleep": 1000},
    },
}


def test_analyze_json(cli: CliRunner, tmp_path: Path) -> None:
    p = cli("analyze", _write(tmp_path, TEXTBOOK), "--json")
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["schema"] == "schedlab.analysis/1"
    fp = {t["name"]: t for t in a["fp"]["tasks"]}
    assert [fp[n]["response_ns"] for n in "abc"] == [1_000_000, 3_000_000, 10_000_000]
    assert [fp[n]["simulated_max_ns"] for n in "abc"] == [1_000_000, 3_000_000, 10_000_000]
    assert a["model"]["unmodelled"][0]["path"] == "$.tasks.idle"
    assert "sleep" in a["model"]["unmodelled"][0]["reason"]
    assert a["edf"]["cpus"][0]["schedulable"] is True
    assert a["flags"] == []


def test_analyze_table(cli: CliRunner, tmp_path: Path) -> None:
    p = cli("analyze", _write(tmp_path, TEXTBOOK))
    assert p.returncode == 0, p.stderr
    for words in ("response-time analysis", "Liu & Layland", "hyperbolic",
                  "processor demand", "not modelled: $.tasks.idle",
                  "no simulated worst case exceeds an analytic bound"):
        assert words in p.stdout, words


def test_analyze_flags_a_simulated_case_above_a_bound(cli: CliRunner, tmp_path: Path) -> None:
    spec = dict(TEXTBOOK, schedlab={"machine": {"context_switch_ns": 50_000}})
    p = cli("analyze", _write(tmp_path, spec))
    assert p.returncode == 0, p.stderr
    assert "FLAG" in p.stdout and "exceeds" in p.stdout


def test_analyze_bad_spec_names_the_path(cli: CliRunner, tmp_path: Path) -> None:
    f = _write(tmp_path, {"tasks": {"t": {"run": "x"}}})
    p = cli("analyze", f)
    assert p.returncode == 2
    assert "$.tasks.t" in one_error_line(p.stderr)


def test_analyze_missing_file(cli: CliRunner, tmp_path: Path) -> None:
    p = cli("analyze", tmp_path / "nope.json")
    assert p.returncode == 2
    assert "nope.json" in one_error_line(p.stderr)

"""`schedlab validate` accepts what `schedlab run` accepts: the spec, and a run of it under
the scheduler it names (or each --scheduler given; every available one when the spec names
none), with the --duration the run would get."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, CliRunner

EXAMPLES = sorted((ROOT / "examples" / "specs").glob("*.json"))


def _write(tmp_path: Path, name: str, spec: dict) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(spec), encoding="utf-8")
    return p


def _one_error(p) -> str:
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_every_example_validates(cli: CliRunner) -> None:
    assert len(EXAMPLES) >= 4
    p = cli("validate", *EXAMPLES)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ok: ") == len(EXAMPLES)


def test_every_example_runs_under_every_scheduler(cli: CliRunner) -> None:
    names = [s["name"] for s in json.loads(cli("schedulers", "--json").stdout)
             if s.get("available", True)]
    for spec in EXAMPLES:
        v = cli("validate", "-s", ",".join(names), spec)
        assert v.returncode == 0, v.stderr
        for name in names:
            r = cli("run", "-s", name, "--duration", "100ms", "--json", spec)
            assert r.returncode == 0, f"{spec.name} under {name}: {r.stderr}"


def test_a_spec_naming_no_scheduler_is_checked_against_every_one(
        cli: CliRunner, tmp_path: Path) -> None:
    spec = _write(tmp_path, "dl.json", {"tasks": {"t": {
        "loop": 1, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000,
        "run": 100}}})
    line = _one_error(cli("validate", spec))
    assert "under fp: $.tasks.t: " in line
    assert "also refused by edf," in line
    assert "linux-cfs" not in line and "linux-eevdf" not in line
    one = _one_error(cli("validate", "-s", "muqss", spec))
    assert one.endswith("$.tasks.t: SCHED_DEADLINE is not modelled by muqss")
    assert one == _one_error(cli("run", "-s", "muqss", spec)).replace(
        "error: ", f"error: {spec}: ", 1)


def test_validate_takes_the_duration_run_would_get(cli: CliRunner, tmp_path: Path) -> None:
    spec = _write(tmp_path, "forever.json", {"tasks": {"t": {"run": 100, "sleep": 100}}})
    line = _one_error(cli("validate", spec))
    assert "$.tasks.t: task t loops forever" in line
    assert "under " not in line  # every scheduler refuses it alike: said once
    assert cli("validate", "--duration", "10ms", spec).returncode == 0
    assert cli("run", "--duration", "10ms", spec).returncode == 0


def test_an_unknown_scheduler_given_to_validate(cli: CliRunner, periodic_spec: Path) -> None:
    line = _one_error(cli("validate", "-s", "nosuch", periodic_spec))
    assert "unknown scheduler 'nosuch'" in line


def test_validate_help_says_what_is_checked(cli: CliRunner) -> None:
    p = cli("validate", "--help")
    assert p.returncode == 0
    text = " ".join(p.stdout.split())
    assert "--scheduler" in text and "--duration" in text
    assert "else every available one" in text


def test_a_long_finite_loop_without_time_runs(cli: CliRunner, tmp_path: Path) -> None:
    # A million rounds of lock/unlock take no simulated time and end: not "no progress".
    spec = _write(tmp_path, "finite.json",
                  {"tasks": {"t": {"loop": 1000000, "lock": "m", "unlock": "m"}}})
    assert cli("validate", spec).returncode == 0
    p = cli("run", "-s", "fp", "--json", spec)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["summary"]["blocked_at_end"] == 0


def test_an_endless_loop_without_time_is_reported(cli: CliRunner, tmp_path: Path) -> None:
    spec = _write(tmp_path, "spin.json", {"global": {"duration": 1},
                                         "tasks": {"t": {"lock": "m", "unlock": "m"}}})
    p = cli("run", "-s", "fp", spec)
    assert p.returncode != 0
    assert "task t makes no progress: its program loops for ever without consuming time" \
        in p.stderr

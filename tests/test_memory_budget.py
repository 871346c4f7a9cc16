"""A run's memory budget at the command line and in the API: a fork bomb stops with its
partial result written, one line saying why and exit status 1; sizes are read as a person
writes them; the per-task figure the budget counts covers what the front end holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CliRunner, cli_command, write_json
from schedlab import _core, api, runner

FORK_BOMB = {"global": {"duration": 1},
             "tasks": {"b": {"loop": -1, "run": 10, "fork": "b"}},
             "schedlab": {"machine": {"cpus": 2}}}


def test_a_fork_bomb_stops_at_its_budget_with_its_partial_result(
        cli: CliRunner, tmp_path: Path) -> None:
    spec = write_json(tmp_path / "bomb.json", FORK_BOMB)
    out = tmp_path / "r.json"
    p = cli("run", spec, "--memory-budget", "8M", "-o", out)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "memory budget of 8.0 MiB" in lines[0] and "--memory-budget" in lines[0]
    r = json.loads(out.read_text())
    assert r["run"]["stopped"] in lines[0]
    assert len(r["tasks"]) == (8 << 20) // _core.BUDGET_TASK_BYTES
    assert r["run"]["sim_ns"] < 10**9


def test_compare_fails_when_one_run_stopped(cli: CliRunner, tmp_path: Path) -> None:
    spec = write_json(tmp_path / "bomb.json", FORK_BOMB)
    p = cli("compare", spec, "-s", "fp,linux-cfs", "--memory-budget", "2M")
    assert p.returncode == 1, p.stderr
    assert "memory budget" in p.stderr


@pytest.mark.parametrize("text", ["lots", "12Q", "-5M", "0", "99999999T", ""])
def test_a_budget_that_is_not_a_size_is_refused(
        cli: CliRunner, tmp_path: Path, text: str) -> None:
    spec = write_json(tmp_path / "s.json", {"tasks": {"t": {"run": 100}}})
    p = cli("run", spec, "--memory-budget", text)
    assert p.returncode == 2, p.stderr
    assert "--memory-budget" in p.stderr


@pytest.mark.parametrize(("text", "size"), [
    ("512M", 512 << 20), ("8G", 8 << 30), ("8GiB", 8 << 30), ("1.5k", 1536), ("4096", 4096),
])
def test_sizes_read_as_a_person_writes_them(text: str, size: int) -> None:
    from schedlab.cli import BYTE_SIZE
    assert BYTE_SIZE.convert(text, None, None) == size


def peak_rss_of_run(cli_base: list[str], spec: Path, out: Path) -> int:
    """Peak resident bytes of one `schedlab run SPEC -o OUT` (a fresh parent measures it)."""
    probe = ("import resource, subprocess, sys; "
             "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run([sys.executable, "-c", probe, *cli_base, "run", str(spec), "-s", "fp",
                        "--duration", "50ms", "-o", str(out)],
                       capture_output=True, text=True, check=True)
    return int(p.stdout) * 1024


def test_a_task_costs_the_command_line_less_than_the_budget_counts(tmp_path: Path) -> None:
    """The figure each task counts toward the budget covers what `run -o` really holds per
    task at its peak: the core's state, the result in Rust, as JSON text, as Python objects
    and as the file's text."""
    def spec(n: int) -> Path:
        return write_json(tmp_path / f"i{n}.json", {
            "global": {"duration": 1},
            "tasks": {"t": {"instance": n, "run": 1000, "sleep": 9000}}})
    base = cli_command()
    small = peak_rss_of_run(base, spec(2), tmp_path / "small.json")
    n = 5000
    big = peak_rss_of_run(base, spec(n), tmp_path / "big.json")
    per_task = (big - small) / n
    assert per_task < _core.BUDGET_TASK_BYTES, per_task


def test_wall_s_covers_the_conversion_of_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    slow_loads = json.loads

    def loads(text: str) -> object:
        time.sleep(0.2)
        return slow_loads(text)

    monkeypatch.setattr(runner.json, "loads", loads)
    r = api.simulate({"tasks": {"t": {"run": 100}}, "global": {"duration": 1}}, duration="10ms")
    assert r.run["wall_s"] >= 0.2

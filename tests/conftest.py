"""Shared fixtures: the CLI as a subprocess, small specs, an available scheduler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BAD_SPECS = DATA / "bad_specs"

# A small periodic rt-app workload: 3 timer-driven tasks and a CPU hog, 1 s.
PERIODIC_SPEC: dict[str, Any] = {
    "global": {"duration": 1, "default_policy": "SCHED_OTHER"},
    "tasks": {
        "rt": {
            "policy": "SCHED_FIFO",
            "priority": 50,
            "run": 500,
            "timer": {"ref": "t_rt", "period": 5000},
        },
        "periodic": {
            "instance": 2,
            "run": 2000,
            "timer": {"ref": "unique", "period": 10000},
        },
        "hog": {"run": 100000},
    },
}

# The same kind of workload that ends by itself (no duration): each task loops 20 times.
FINITE_SPEC: dict[str, Any] = {
    "global": {"default_policy": "SCHED_OTHER"},
    "tasks": {
        "worker": {"instance": 3, "loop": 20, "run": 1000, "sleep": 2000},
        "rt": {
            "policy": "SCHED_FIFO",
            "priority": 10,
            "loop": 20,
            "run": 300,
            "timer": {"ref": "t", "period": 4000},
        },
    },
}


def cli_command() -> list[str]:
    """The ``schedlab`` console script of this interpreter's environment, else
    ``python -m schedlab``."""
    script = Path(sys.executable).parent / "schedlab"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "schedlab"]


CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def cli() -> CliRunner:
    """Run the CLI: ``cli("run", spec, "--json", input=None)`` → CompletedProcess (text)."""
    base = cli_command()

    def run(*args: str | os.PathLike[str], input: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
        env["COLUMNS"] = "200"
        return subprocess.run(
            [*base, *map(str, args)], input=input, capture_output=True, text=True,
            env=env, cwd=cwd, timeout=600,
        )

    return run


def start_host_run(tmp_path: Path, spec_obj: Any) -> tuple[subprocess.Popen[str], Path]:
    """`schedlab host run` of ``spec_obj`` (written to tmp_path/long.json) in the background,
    with its restore journal in tmp_path; the process and the journal's path."""
    spec = tmp_path / "long.json"
    spec.write_text(json.dumps(spec_obj))
    journal = tmp_path / "journal.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    env["SCHEDLAB_JOURNAL"] = str(journal)
    p = subprocess.Popen([*cli_command(), "host", "run", str(spec)], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, journal


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


@pytest.fixture()
def periodic_spec(tmp_path: Path) -> Path:
    return write_json(tmp_path / "periodic.json", PERIODIC_SPEC)


@pytest.fixture()
def finite_spec(tmp_path: Path) -> Path:
    return write_json(tmp_path / "finite.json", FINITE_SPEC)


def _available() -> list[str]:
    import schedlab

    return [s["name"] for s in schedlab.schedulers() if s.get("available", True)]


@pytest.fixture(scope="session")
def schedulers_available() -> list[str]:
    names = _available()
    if not names:
        pytest.skip("no scheduler is available in this build")
    return names


@pytest.fixture(scope="session")
def scheduler(schedulers_available: Sequence[str]) -> str:
    """One available scheduler: a Linux fair one when present, else the first."""
    for preferred in ("linux-cfs", "linux-eevdf", "linux", "cfs", "eevdf"):
        if preferred in schedulers_available:
            return preferred
    return schedulers_available[0]


@pytest.fixture(scope="session")
def two_schedulers(schedulers_available: Sequence[str]) -> list[str]:
    if len(schedulers_available) < 2:
        return [schedulers_available[0], schedulers_available[0]]
    return list(schedulers_available[:2])

"""A long `schedlab run` stops on SIGINT or SIGTERM while the core simulates (it polls
Python's signal handlers every 65,536 events): one line naming the run, exit status
128 + the signal, no traceback, and none of its output files left, whole or in part."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import cli_command

# One task woken every millisecond for a million simulated seconds: some 2·10⁹ events,
# far more than any machine simulates before the test's time-out.
ENDLESS = {
    "global": {"duration": 1_000_000},
    "tasks": {"ticker": {"loop": -1, "run": 100, "timer": {"ref": "tick", "period": 1000}}},
}


def start_run(tmp_path: Path) -> subprocess.Popen[str]:
    spec = tmp_path / "endless.json"
    spec.write_text(json.dumps(ENDLESS))
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    return subprocess.Popen(
        [*cli_command(), "run", str(spec), "-s", "fp", "--trace", str(tmp_path / "out.trace"),
         "--output", str(tmp_path / "out.json")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_until_simulating(p: subprocess.Popen[str], tmp_path: Path) -> None:
    """Until the core has written trace blocks (256 KiB each) to the staged trace file:
    the run is in its event loop."""
    deadline = time.monotonic() + 120
    while True:
        staged = [f for f in tmp_path.iterdir() if f.name.startswith(".out.trace.")]
        if staged and staged[0].stat().st_size > 256 << 10:
            return
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the run never started writing its trace"
        time.sleep(0.05)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_a_long_run(tmp_path: Path, sig: int, code: int, word: str) -> None:
    p = start_run(tmp_path)
    stderr = signal_when(p, sig, lambda: wait_until_simulating(p, tmp_path))
    assert_stopped(p, stderr, code, f"error: {word}: the run of {tmp_path / 'endless.json'} "
                                    "under fp", tmp_path)


def signal_when(p: subprocess.Popen[str], sig: int, ready: Callable[[], None]) -> str:
    """Send ``sig`` to ``p`` once ``ready()`` returns; its standard error once it exits."""
    try:
        ready()
        p.send_signal(sig)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
        p.wait()
    return stderr


def assert_stopped(p: subprocess.Popen[str], stderr: str, code: int, line: str,
                   tmp_path: Path) -> None:
    """Exit status ``code``, ``line`` alone on standard error, and no output file left."""
    assert p.returncode == code, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines == [line], stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["endless.json"]


# A hog that never blocks, ticked for some thirty years simulated: no activation ever ends,
# so the run's memory stays flat (its budget never stops it), and it never ends either.
HOG = {"global": {"duration": 1_000_000_000},
       "tasks": {"hog": {"loop": -1, "run": 1_000_000}}}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_a_compare_whose_runs_are_in_worker_threads(
        tmp_path: Path, sig: int, code: int, word: str) -> None:
    """`schedlab compare` simulates in worker threads, which never run Python's signal
    handlers: the main thread, interrupted, stops them, and the process exits at once
    instead of waiting for runs that would never end."""
    spec = tmp_path / "endless.json"
    spec.write_text(json.dumps(HOG))
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    p = subprocess.Popen(
        [*cli_command(), "compare", str(spec), "-s", "linux-cfs,linux-eevdf", "-j", "2",
         "--output", str(tmp_path / "out.json")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def simulating() -> None:
        # starting the command takes well under a second of CPU time; past three, its two
        # simulations are running
        deadline = time.monotonic() + 120
        while cpu_seconds(p.pid) < 3.0:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the compare never got to simulate"
            time.sleep(0.05)

    stderr = signal_when(p, sig, simulating)
    assert_stopped(p, stderr, code,
                   f"error: {word}: the run of {spec} under linux-cfs, linux-eevdf", tmp_path)

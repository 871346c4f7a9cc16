"""A long `schedlab run` stops on SIGINT or SIGTERM while the core simulates (it polls
Python's signal handlers every 65,536 events): one line naming the run, exit status
128 + the signal, no traceback, and none of its output files left, whole or in part."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
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
    try:
        wait_until_simulating(p, tmp_path)
        p.send_signal(sig)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == code, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines == [f"error: {word}: the run of {tmp_path / 'endless.json'} under fp"], stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["endless.json"]

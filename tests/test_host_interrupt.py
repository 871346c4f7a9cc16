"""A host run that changed the machine puts it back however it ends: Ctrl-C and SIGTERM
stop it at once (exit 130 / 143, one line) with its cgroups removed and its journal empty;
after a SIGKILL, `schedlab host restore` removes what it left. Needs root and a cgroup v1
cpu hierarchy with RT group scheduling (skipped with the reason otherwise)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import cli_command, start_host_run

CPU = Path("/sys/fs/cgroup/cpu")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (CPU / "cpu.rt_runtime_us").exists(),
    reason="needs root and a cgroup v1 cpu hierarchy with RT group scheduling")

LONG = {
    "global": {"duration": 600},
    "schedlab": {"cgroups": {"/g": {"cpu.cfs_quota_us": 20000, "cpu.cfs_period_us": 100000}}},
    "tasks": {"hog": {"loop": -1, "run": -1, "taskgroup": "/g"},
              "sleeper": {"loop": -1, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                          "unlock": "m"}},
}


def start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    p, journal = start_host_run(tmp_path, LONG)
    group = CPU / f"schedlab-{p.pid}-g"
    deadline = time.monotonic() + 120
    # The run has begun once its group holds the hog's thread.
    while not (group.exists() and (group / "tasks").read_text().strip()):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the run never made its group"
        time.sleep(0.02)
    return p, group, journal


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_a_host_run_and_puts_the_machine_back(
        tmp_path: Path, sig: int, code: int, word: str) -> None:
    p, group, journal = start(tmp_path)
    try:
        p.send_signal(sig)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == code, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines == [f"error: {word}: the run of {tmp_path / 'long.json'} on this machine"]
    assert not group.exists()
    assert journal.read_text() == ""


def test_after_a_sigkill_restore_removes_what_the_run_left(tmp_path: Path) -> None:
    p, group, journal = start(tmp_path)
    p.kill()
    p.wait()
    assert group.exists(), "a SIGKILLed run cannot clean up: the test expects its group"
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    r = subprocess.run([*cli_command(), "host", "restore", "--journal", str(journal)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"removed {group}" in r.stdout
    assert not group.exists()
    assert journal.read_text() == ""

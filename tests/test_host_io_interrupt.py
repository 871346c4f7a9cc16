"""A host run doing block I/O puts the machine back however it ends: Ctrl-C stops it
(exit 130) with its loop device released, its backing file removed and the device's
scheduler as it was; a SIGKILL at any point of its life (writing the backing file, binding
the device, running) leaves what `schedlab host restore` then removes. Needs root and
loop devices (skipped with the reason otherwise)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import cli_command, start_host_run

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/dev/loop-control").exists(),
    reason="needs root and loop devices")

LONG = {
    "global": {"duration": 600},
    "schedlab": {"devices": {"d": {"model": "ssd", "scheduler": "mq-deadline"}},
                 "files": {"f": {"dev": "d", "bytes": 64 << 20}}},
    "tasks": {"reader": {"loop": -1, "schedlab:io": {
        "file": "f", "op": "read", "bytes": 65536, "offset": "random", "count": 1000,
        "depth": 8}}},
}


def loop_state() -> tuple[str, list[str]]:
    """Every bound loop device and every loop queue's scheduler."""
    bound = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    scheds = sorted(p.read_text() for p in Path("/sys/block").glob("loop*/queue/scheduler"))
    return bound, scheds


def start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    p, journal = start_host_run(tmp_path, LONG)
    return p, Path(f"/var/tmp/schedlab-{p.pid}-dev0.img"), journal


def bound(backing: Path) -> bool:
    out = subprocess.run(["losetup", "-j", str(backing)], capture_output=True, text=True)
    return bool(out.stdout.strip())


def wait_running(p: subprocess.Popen[str], backing: Path) -> None:
    deadline = time.monotonic() + 120
    while not bound(backing):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the run never bound its loop device"
        time.sleep(0.02)
    time.sleep(0.3)  # requests in flight


def test_ctrl_c_stops_an_io_run_and_puts_the_machine_back(tmp_path: Path) -> None:
    before = loop_state()
    p, backing, journal = start(tmp_path)
    try:
        wait_running(p, backing)
        p.send_signal(signal.SIGINT)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 130, stderr
    assert not backing.exists()
    assert loop_state() == before
    assert journal.read_text() == ""


# SIGKILL points: while the backing file is being written (just after the start), around
# the binding, and with requests in flight.
@pytest.mark.parametrize("delay_s", [0.0, 0.15, 0.4, None])
def test_after_a_sigkill_at_any_point_restore_leaves_nothing(
        tmp_path: Path, delay_s: float | None) -> None:
    before = loop_state()
    p, backing, journal = start(tmp_path)
    if delay_s is None:
        wait_running(p, backing)
    else:
        deadline = time.monotonic() + 120
        while not journal.exists() or not journal.read_text():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the run never journalled a change"
            time.sleep(0.005)
        time.sleep(delay_s)
    p.kill()
    p.wait()
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    r = subprocess.run([*cli_command(), "host", "restore", "--journal", str(journal)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"removed {backing}" in r.stdout
    assert not backing.exists()
    assert loop_state() == before
    assert journal.read_text() == ""

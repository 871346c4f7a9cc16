"""`schedlab host run --trace`: a capture through tracefs, in the simulator's trace text,
read back by the same parser, and nothing left changed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest

import schedlab
from conftest import CliRunner, cli_command

TRACEFS_KNOWN = Path("/proc/filesystems").read_text().find("tracefs") >= 0

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not TRACEFS_KNOWN,
    reason="a host trace needs root and a kernel with tracefs")


def _tracing_state() -> dict[str, object]:
    """What a capture must leave as it found it: where tracefs is mounted, its instances,
    and the top-level buffer's settings."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if " - tracefs " in line]
    state: dict[str, object] = {"mounts": mounts}
    for m in mounts:
        root = Path(m)
        state[f"{m}/instances"] = sorted(p.name for p in (root / "instances").iterdir())
        for f in ("tracing_on", "trace_clock", "current_tracer", "set_event",
                  "buffer_size_kb", "options/record-tgid"):
            state[f"{m}/{f}"] = (root / f).read_text()
    return state


def test_a_host_trace_is_the_simulators_text_and_leaves_tracing_as_it_was(
        cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "pair.json"
    spec.write_text(json.dumps({"tasks": {
        "sleepy": {"loop": 20, "run": 200, "sleep": 1000, "cpus": [0]},
        "other": {"loop": 10, "run": 300, "sleep": 2000, "cpus": [0]},
    }}))
    trace = tmp_path / "host.trace"
    before = _tracing_state()
    p = cli("host", "run", str(spec), "--json", "--trace", str(trace))
    assert p.returncode == 0, p.stderr
    assert _tracing_state() == before
    r = json.loads(p.stdout)
    note = next(n for n in r["run"]["notes"] if n.startswith("host trace:"))
    assert str(trace) in note
    text = trace.read_text()
    assert text.startswith("# tracer: nop\n")
    df = schedlab.parse_trace(trace)
    # nanosecond timestamps from the run's start, within the run
    assert df["ts_ns"].min() >= 0
    assert df["ts_ns"].max() <= r["run"]["sim_ns"] + 1_000_000_000
    switches = df.filter(pl.col("event") == "sched_switch")
    # each sleep is the thread named after its task leaving the CPU asleep: as many
    # voluntary switches as the task's sleeps, or more (a wait for a page, a lock)
    by_name = {t["name"]: t for t in r["tasks"]}
    for name, sleeps in (("sleepy", 20), ("other", 10)):
        out = switches.filter((pl.col("comm") == name) & pl.col("prev_state").str.starts_with("S")
                              & (pl.col("prev_pid") == pl.col("pid")))
        assert out.height >= sleeps, name
        assert out.height <= by_name[name]["switches_voluntary"] + 2, name
        assert set(out["cpu"].to_list()) == {0}, "the task was pinned to CPU 0"
    wakeups = df.filter(pl.col("event") == "sched_wakeup")
    assert wakeups.height > 0


def test_a_host_trace_to_a_missing_directory_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "one.json"
    spec.write_text(json.dumps({"tasks": {"a": {"loop": 1, "run": 100}}}))
    before = _tracing_state()
    p = cli("host", "run", str(spec), "--trace", str(tmp_path / "nowhere" / "t.trace"))
    assert p.returncode == 2 and "does not exist" in p.stderr
    assert _tracing_state() == before


def test_after_a_sigkill_restore_removes_the_capture_and_any_mount(tmp_path: Path) -> None:
    spec = tmp_path / "long.json"
    spec.write_text(json.dumps({"global": {"duration": 600},
                                "tasks": {"a": {"loop": -1, "run": 100, "sleep": 1000}}}))
    journal = tmp_path / "journal.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    env["SCHEDLAB_JOURNAL"] = str(journal)
    before = _tracing_state()
    p = subprocess.Popen([*cli_command(), "host", "run", str(spec), "--trace",
                          str(tmp_path / "t.trace")], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        # the capture is on once the journal records the instance
        while "instances/schedlab-" not in (journal.read_text() if journal.exists() else ""):
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the run never made its tracing instance"
            time.sleep(0.02)
        time.sleep(0.2)
    finally:
        p.kill()
        p.wait()
    r = subprocess.run([*cli_command(), "host", "restore", "--journal", str(journal)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"instances/schedlab-{p.pid}" in r.stdout
    assert _tracing_state() == before
    assert journal.read_text() == ""

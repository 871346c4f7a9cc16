"""Traces: written by a simulation, read back by the one ftrace parser."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import schedlab
from conftest import DATA, FINITE_SPEC


def test_simulated_trace_parses(scheduler: str, tmp_path: Path) -> None:
    trace = tmp_path / "run.trace"
    r = schedlab.simulate(FINITE_SPEC, scheduler=scheduler, cpus=2, seed=3, trace=trace)
    df = schedlab.parse_trace(trace)
    assert df.height > 0
    assert df["ts_ns"].is_sorted()
    switches = df.filter(pl.col("event") == "sched_switch")
    assert switches.height > 0
    pids = {t["tid"] for t in r.json["tasks"]} | {0}
    assert set(switches["next_pid"].to_list()) <= pids
    assert set(switches["prev_pid"].to_list()) <= pids
    # a task switched out while blocked (not runnable, not exiting) switched voluntarily
    blocked = switches.filter(
        ~pl.col("prev_state").str.contains("^[RXZ]") & (pl.col("prev_pid") > 0)
    )
    assert blocked.height == sum(t["switches_voluntary"] for t in r.json["tasks"])
    assert set(df["cpu"].unique().to_list()) <= {0, 1}


def test_host_capture_parses() -> None:
    capture = DATA / "traces" / "host-capture.txt"
    if not capture.exists():
        pytest.skip("no host capture in tests/data/traces")
    df = schedlab.parse_trace(capture)
    assert df.height > 0
    assert "sched_switch" in df["event"].to_list()


def test_trace_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        schedlab.parse_trace(tmp_path / "missing.trace")
    bad = tmp_path / "bad.trace"
    bad.write_text("# tracer: nop\n"
                   "  task-12 [000] 1.000000: sched_switch: prev_comm=a prev_pid=x\n")
    with pytest.raises(schedlab.TraceError) as info:
        schedlab.parse_trace(bad)
    assert info.value.line == 2
    assert isinstance(info.value, ValueError)

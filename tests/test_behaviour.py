"""Seed 000's behaviour parts (schedlab.seeds.behaviour000) and the dprio counters
(schedlab.dprio): readings from hand-made traces whose answers are known, and the probes
under real policies, pinned to what each source prescribes."""

from __future__ import annotations

from typing import Any

import pytest

from schedlab import _core, api, dprio
from schedlab.result import Result
from schedlab.seeds import behaviour000 as b

MS = 1_000_000


def cols(events: list[dict[str, Any]]) -> dict[str, list[Any]]:
    keys = ("event", "ts_ns", "pid", "comm", "prev_pid", "prev_state", "next_pid",
            "child_pid", "mark_kind", "mark_tgid", "mark_name", "mark_value")
    return {k: [e.get(k) for e in events] for k in keys}


def switch(ts: int, prev: int, nxt: int, state: str = "R+") -> dict[str, Any]:
    return {"event": "sched_switch", "ts_ns": ts, "prev_pid": prev, "next_pid": nxt,
            "prev_state": state, "pid": prev}


def test_fork_reading_child_first() -> None:
    # parent 1 runs, forks 2 at 20 ms; the child runs 40 ms, then 40 ms of parent,
    # then 100 ms turns.
    c = cols([
        switch(0, 0, 1, "R"),
        {"event": "sched_process_fork", "ts_ns": 20 * MS, "pid": 1, "child_pid": 2},
        switch(20 * MS, 1, 2), switch(60 * MS, 2, 1), switch(100 * MS, 1, 2),
        switch(200 * MS, 2, 1), switch(300 * MS, 1, 2), switch(400 * MS, 2, 1),
        switch(500 * MS, 1, 0, "X"),
    ])
    f = b.fork_behaviour(c)
    assert f == {"first": "child", "child_first_ms": 40.0, "parent_first_ms": 40.0,
                 "turn_ms": 100.0}


def test_fork_reading_parent_keeps_running() -> None:
    c = cols([
        switch(0, 0, 1, "R"),
        {"event": "sched_process_fork", "ts_ns": 20 * MS, "pid": 1, "child_pid": 2},
        switch(57 * MS, 1, 2), switch(95 * MS, 2, 1), switch(190 * MS, 1, 2),
        switch(285 * MS, 2, 0, "X"),
    ])
    f = b.fork_behaviour(c)
    assert f["first"] == "parent"
    assert f["parent_first_ms"] == 37.0  # from the fork, not from its start
    assert f["child_first_ms"] == 38.0


def test_fork_reading_without_fork_is_an_error() -> None:
    with pytest.raises(ValueError, match="no fork"):
        b.fork_behaviour(cols([switch(0, 0, 1, "R")]))


def test_yield_reading() -> None:
    result = {"run": {"sim_ns": 100 * MS},
              "tasks": [{"name": "yielder", "tid": 1, "cpu_ns": 10 * MS},
                        {"name": "hog", "tid": 2, "cpu_ns": 90 * MS}]}
    c = cols([
        switch(0, 0, 1, "R"),
        switch(1 * MS, 1, 2), switch(31 * MS, 2, 1),   # waited 30 ms after yielding
        switch(32 * MS, 1, 2), switch(42 * MS, 2, 1),  # waited 10 ms
        switch(43 * MS, 1, 2, "S"),                    # blocked: not a yield
        switch(60 * MS, 2, 1),
    ])
    y = b.yield_behaviour(c, Result(result))
    # the median is the core's nearest-rank p50: the lower of two waits
    assert y == {"yielder_pct": 10.0, "hog_pct": 90.0, "yields_switched": 2, "wait_ms": 10.0}


def test_dprio_series_holds_the_last_value_to_the_end() -> None:
    c = cols([
        {"event": "tracing_mark_write", "ts_ns": 0, "pid": 1, "comm": "hog",
         "mark_kind": "C", "mark_tgid": 1, "mark_name": "prio", "mark_value": 120},
        {"event": "tracing_mark_write", "ts_ns": 5 * MS, "pid": 1, "comm": "hog",
         "mark_kind": "C", "mark_tgid": 1, "mark_name": "prio", "mark_value": 125},
        switch(9 * MS, 1, 0, "S"),
    ])
    s = dprio.series(c)
    assert s == {"prio": {"1 (hog)": ([0.0, 0.005, 0.009], [120.0, 125.0, 125.0])}}
    assert dprio.series(c, pids=[7]) == {}


@pytest.fixture(scope="module")
def fork_probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = {}
    for p in ("linux-o1", "staircase", "linux-cfs", "bfs"):
        trace = tmp_path_factory.mktemp("fork") / f"{p}.txt"
        api.simulate(b.FORK_SPEC, scheduler=p, trace=trace)
        out[p] = b.fork_behaviour(_core.parse_trace(str(trace)))
    return out


def test_o1_fork_splits_the_parents_slice(fork_probe: dict[str, dict[str, Any]]) -> None:
    # 2.6.18 sched_fork: the child gets half the parent's remaining slice (100 ms nice 0
    # slice at HZ 1000, 20 ms used → 40 ms each) and wake_up_new_task runs the child first.
    o1 = fork_probe["linux-o1"]
    assert o1["first"] == "child"
    assert o1["child_first_ms"] == 40.0 and o1["parent_first_ms"] == 40.0
    assert o1["turn_ms"] == 100.0


def test_fork_order_differs_by_policy(fork_probe: dict[str, dict[str, Any]]) -> None:
    # CFS (sched_child_runs_first = 0): the parent keeps the CPU; BFS: the child runs first.
    assert fork_probe["linux-cfs"]["first"] == "parent"
    assert fork_probe["bfs"]["first"] == "child"


def test_yield_sends_o1_tasks_behind_the_hog(tmp_path: Any) -> None:
    # O(1) yield: to the expired array, so the yielder waits out the hog's 100 ms slice;
    # CFS only lets the other task run once: the yielder gets about half the CPU.
    got = {}
    for p in ("linux-o1", "linux-cfs"):
        trace = tmp_path / f"{p}.txt"
        r = api.simulate(b.YIELD_SPEC, scheduler=p, trace=trace)
        got[p] = b.yield_behaviour(_core.parse_trace(str(trace)), r)
    assert got["linux-o1"]["wait_ms"] == pytest.approx(100.0, abs=1.0)
    assert got["linux-o1"]["yielder_pct"] < 5
    assert 40 < got["linux-cfs"]["yielder_pct"] < 60


def test_nicksched_dprio_cli(tmp_path: Any) -> None:
    import json

    from click.testing import CliRunner

    from schedlab.cli import cli

    r = CliRunner().invoke(cli, ["timeslice", "--dprio", "--json", "--hz", "1000",
                                 "--plot", str(tmp_path)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)["nicksched"]
    assert d["100"]["100"] == 20_000_000 and d["100"]["139"] == 1_000_000
    assert d["120"]["120"] == 70_000_000
    assert (tmp_path / "timeslice-nicksched-dprio-hz1000.png").stat().st_size > 1000
    bad = CliRunner().invoke(cli, ["timeslice", "--dprio", "-s", "linux-o1"])
    assert bad.exit_code == 2 and "nicksched only" in bad.output

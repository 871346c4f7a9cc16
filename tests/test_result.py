"""The Python API: Result objects, DataFrames and the Parquet round trip."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import schedlab
from conftest import FINITE_SPEC, PERIODIC_SPEC
from schedlab.result import Result


@pytest.fixture(scope="module")
def result(scheduler: str) -> Result:
    return schedlab.simulate(PERIODIC_SPEC, scheduler=scheduler, seed=2, cpus=2,
                             duration="200ms")


def test_spec_forms_agree(scheduler: str, periodic_spec: Path) -> None:
    kw = dict(scheduler=scheduler, seed=4, cpus=2, duration="50ms")
    runs = [
        schedlab.simulate(PERIODIC_SPEC, **kw),
        schedlab.simulate(json.dumps(PERIODIC_SPEC), **kw),
        schedlab.simulate(periodic_spec, **kw),
        schedlab.simulate(str(periodic_spec), **kw),
    ]
    shas = [r.json["run"].pop("spec_sha256") for r in runs]
    for r in runs:
        r.json["run"].pop("wall_s")
    assert all(r.json == runs[0].json for r in runs)
    # the same file read two ways is the same text; other layouts are other texts
    assert shas[2] == shas[3] and len(set(shas)) == 3


def test_json_shape(result: Result, scheduler: str) -> None:
    assert result.json["schema"] == "schedlab.result/1"
    assert result.run["scheduler"] == scheduler == result.scheduler
    assert result.run["seed"] == 2
    assert result.run["cpus"] == 2
    assert "makespan_ns" in result.summary
    assert result.headline is None or {"name", "value", "unit"} <= set(result.headline)


def test_tasks_frame(result: Result) -> None:
    df = result.tasks
    assert isinstance(df, pl.DataFrame)
    assert df.height == len(result.json["tasks"])
    for col in ("name", "tid", "policy", "cpu_ns", "wait_ns", "activations",
                "wakeup_latency_ns_mean", "wakeup_latency_ns_p99", "response_ns_p99",
                "wakeup_latency_ns_filtered6sigma_mean"):
        assert col in df.columns, col
    assert df.get_column("name").to_list() == [t["name"] for t in result.json["tasks"]]


def test_cpus_frame(result: Result) -> None:
    df = result.cpus
    assert df.get_column("cpu").to_list() == [0, 1]
    assert {"busy_ns", "idle_ns"} <= set(df.columns)


def test_samples_frame(result: Result) -> None:
    s = result.samples
    assert s.columns[:2] == ["tid", "task"]
    assert {"release_ns", "wake_ns", "start_ns", "end_ns", "kind", "wakeup_latency_ns",
            "response_ns"} <= set(s.columns)
    assert s.height > 0
    assert s.schema["tid"] == pl.UInt32 and s.schema["end_ns"] == pl.Int64
    assert s.schema["start_ns"] == pl.Int64
    assert s.get_column("task").null_count() == 0
    # derived columns follow the definitions in docs/results.md
    started = s.filter(pl.col("start_ns") >= 0)
    assert (started["wakeup_latency_ns"]
            == started["start_ns"] - started["release_ns"].cast(pl.Int64)).all()
    assert s.filter(pl.col("start_ns") < 0)["wakeup_latency_ns"].null_count() == s.filter(
        pl.col("start_ns") < 0).height
    ended = s.filter(pl.col("end_ns") >= 0)
    assert (ended["response_ns"] == ended["end_ns"] - ended["release_ns"].cast(pl.Int64)).all()
    assert s.filter(pl.col("end_ns") < 0)["response_ns"].null_count() == s.filter(
        pl.col("end_ns") < 0).height
    # the per-task activation counts come from the same samples
    total = sum(t["activations"] for t in result.json["tasks"])
    assert s.height == total


def test_samples_agree_with_task_stats(result: Result) -> None:
    s = result.samples
    for t in result.json["tasks"]:
        stats = t["wakeup_latency_ns"]
        mine = s.filter(pl.col("tid") == t["tid"])["wakeup_latency_ns"].drop_nulls()
        assert stats["count"] == mine.len()
        if stats["count"]:
            assert stats["max"] == mine.max()
            assert stats["min"] == mine.min()


def test_parquet_round_trip(result: Result, tmp_path: Path) -> None:
    out = result.to_parquet(tmp_path / "pq")
    assert {p.name for p in out.iterdir()} == {"tasks.parquet", "samples.parquet",
                                               "cpus.parquet", "result.json"}
    assert pl.read_parquet(out / "tasks.parquet").equals(result.tasks)
    assert pl.read_parquet(out / "samples.parquet").equals(result.samples)
    back = Result.load(out)
    assert back.json == result.json
    assert back.samples.equals(result.samples)


def test_no_samples(scheduler: str) -> None:
    r = schedlab.simulate(FINITE_SPEC, scheduler=scheduler, samples=False)
    assert r.samples.height == 0
    assert "samples=" not in repr(r)
    assert r.tasks.height == len(r.json["tasks"])


def test_repr(result: Result, scheduler: str) -> None:
    text = repr(result)
    assert text.startswith("Result(") and scheduler in text and "seed=2" in text


def test_finite_workload_has_makespan(scheduler: str) -> None:
    r = schedlab.simulate(FINITE_SPEC, scheduler=scheduler, cpus=2)
    assert r.makespan_ns is not None and r.makespan_ns > 0


def test_compare_order(schedulers_available: list[str]) -> None:
    names = list(reversed(schedulers_available[:3]))
    rs = schedlab.compare(FINITE_SPEC, names, seed=1, cpus=2)
    assert [r.scheduler for r in rs] == names


def test_api_errors(scheduler: str) -> None:
    with pytest.raises(schedlab.SimError) as info:
        schedlab.simulate(FINITE_SPEC, scheduler="no-such-scheduler")
    assert info.value.bad_input
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(schedlab.SpecError) as e2:
        schedlab.simulate('{"tasks": 3}', scheduler=scheduler)
    assert e2.value.path.startswith("$")
    with pytest.raises(ValueError):
        schedlab.simulate(FINITE_SPEC, scheduler=scheduler, duration="ten seconds")
    with pytest.raises(FileNotFoundError):
        schedlab.simulate("no/such/spec.json", scheduler=scheduler)


def test_generate_round_trip() -> None:
    gens = schedlab.generators()
    if not gens:
        pytest.skip("no generators in this build")
    g = gens[0]
    spec = schedlab.generate(g["name"])
    assert isinstance(spec, dict)
    schedlab.validate(spec)
    with pytest.raises(schedlab.SpecError):
        schedlab.generate(g["name"], no_such_option=1)


def test_kernel_threads_are_marked_in_the_tasks_frame(tmp_path: Path) -> None:
    """A run whose ticks raise softirq work lists one softirq thread per CPU after the
    spec's tasks, marked ``kernel_thread``; the spec's tasks have no such key (null in the
    frame), and the Parquet round trip keeps the column."""
    spec = {"tasks": {"hog": {"loop": 20, "run": 1000}},
            "schedlab": {"machine": {"cpus": 2, "hz": 1000,
                                     "kernel": {"preempt": "rt", "softirq_ns": 5000}}}}
    r = schedlab.simulate(spec, scheduler="linux-cfs")
    tasks = r.tasks
    assert tasks["name"].to_list() == ["hog", "ksoftirqd/0", "ksoftirqd/1"]
    assert tasks["kernel_thread"].to_list() == [None, True, True]
    assert "kernel_thread" not in r.json["tasks"][0]
    r.to_parquet(tmp_path)
    again = pl.read_parquet(tmp_path / "tasks.parquet")
    assert again["kernel_thread"].to_list() == [None, True, True]

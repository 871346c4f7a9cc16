"""Sweeps on Dask: a local cluster with one worker and with two give the rows threads give
(only the timing columns differ), and a sweep on an existing cluster given by address
needs no change to its description."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from schedlab import sweep as sw

GRID: dict[str, Any] = {
    "name": "dask",
    "base": {"generator": "hackbench", "options": {"groups": 1, "fds": 2}},
    "axes": [
        {"scheduler": ["linux-cfs"], "params.sched_latency_ns": [3000000, 6000000, "x"],
         "options.loops": [1, 2], "seed": [1, 2]},
        {"scheduler": ["fp", "example-fifo"], "options.loops": [1, 2], "seed": [1, 2]},
    ],
}


def comparable(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop(list(sw.TIMING_COLUMNS)).sort("key")


@pytest.fixture(scope="module")
def by_threads(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("threads")
    return comparable(sw.run(GRID, out, threads=True, workers=2, progress=False).rows())


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One two-worker local cluster for the tests that connect to an existing one."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as c:
        yield c


@pytest.mark.parametrize("workers", [1, 2])
def test_a_local_cluster_gives_the_rows_threads_give(workers: int, tmp_path: Path,
                                                     by_threads: pl.DataFrame) -> None:
    r = sw.run(GRID, tmp_path / "d", workers=workers, progress=False)
    assert (r.ran, r.failed) == (20, 4)
    df = r.rows()
    assert df["worker"].n_unique() == workers
    assert comparable(df).equals(by_threads)


def test_an_existing_cluster_by_address(cluster: Any, tmp_path: Path, cli: Any,
                                        by_threads: pl.DataFrame) -> None:
    import yaml

    f = tmp_path / "grid.yaml"
    f.write_text(yaml.safe_dump(GRID, sort_keys=False), encoding="utf-8")
    r = cli("sweep", f, "--out", tmp_path / "d", "--scheduler", cluster.scheduler_address)
    assert r.returncode == 0, r.stderr
    assert "20 run now, 4 failed" in r.stdout
    assert comparable(sw.read(tmp_path / "d")).equals(by_threads)


def test_a_cluster_object_is_a_scheduler_too(cluster: Any, tmp_path: Path,
                                             by_threads: pl.DataFrame) -> None:
    from distributed import Client

    with Client(cluster) as client:
        r = sw.run(GRID, tmp_path / "d", scheduler=client, progress=False)
    assert comparable(r.rows()).equals(by_threads)
    # a cluster object, as a dask-jobqueue cluster is one
    r = sw.run(GRID, tmp_path / "e", scheduler=cluster, progress=False)
    assert comparable(r.rows()).equals(by_threads)


def test_the_local_cluster_is_sized_and_bounded() -> None:
    from schedlab.sweep.execute import dask_backend, local_workers

    # one single-threaded worker per CPU by default, each with the memory limit asked
    with dask_backend(memory_limit=3 * 2**30) as backend:
        workers = list(backend.client.scheduler_info()["workers"].values())
        assert len(workers) == local_workers()
        assert [w["memory_limit"] for w in workers] == [3 * 2**30] * len(workers)
        assert all(w["nthreads"] == 1 for w in workers)


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess

    import yaml

    from conftest import cli_command

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f = tmp_path / "grid.yaml"
    f.write_text(yaml.safe_dump(GRID, sort_keys=False), encoding="utf-8")
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    r = subprocess.run([*cli_command(), "sweep", str(f), "--out", str(tmp_path / "d"),
                        "--scheduler", f"tcp://127.0.0.1:{port}"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith(
        f"error: --scheduler: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"), \
        r.stderr
    assert r.stderr.count("\n") == 1


def _exit_on_seed_two(job: Any) -> Any:
    """A run that brings its worker process down (as a crash of the core would)."""
    import os

    from schedlab import runner

    if job.seed == 2:
        os._exit(3)
    return runner.execute(job)


def test_a_run_that_kills_its_worker_is_a_failed_row(tmp_path: Path) -> None:
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    doc = {**GRID, "axes": {"scheduler": ["fp"], "seed": [1, 2, 3, 4, 5]}}
    r = sw.run(doc, tmp_path / "d", workers=2, progress=False, simulate=_exit_on_seed_two)
    df = r.rows()
    # the run is tried alone twice (and the runs the dead workers held once more each)
    assert (r.ran, r.failed) == (5, 1)
    lost = df.filter(pl.col("seed") == 2)
    assert set(lost["status"]) == {"failed"} and all("KilledWorker" in e for e in lost["error"])
    assert set(df.filter(pl.col("seed") != 2)["status"]) == {"ok"}

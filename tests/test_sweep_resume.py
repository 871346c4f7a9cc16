"""A sweep killed (SIGKILL) at seeded points — right after its k-th part file is in place,
or in the middle of writing one — and resumed gives the same dataset as a sweep that was
never interrupted: no run twice, none lost, no half-written file. The kills land where
the dataset's test hook (``SCHEDLAB_SWEEP_TEST_KILL``) puts them, so every run of this
test kills at the same points."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from conftest import cli_command
from schedlab import sweep as sw

AXES: dict[str, Any] = {"options.loops": [1, 2, 3], "seed": {"from": 1, "count": 2}}
GRID: dict[str, Any] = {
    "name": "resume",
    "base": {"generator": "hackbench", "options": {"groups": 1, "fds": 2}},
    "axes": [
        # "x" is no number: those runs fail, and a failed row must resume like the others
        {"scheduler": ["linux-cfs"], "params.sched_latency_ns": [6000000, "x"], **AXES},
        {"scheduler": ["fp", "example-fifo"], **AXES},
    ],
}


def sweep(desc: Path, out: Path, *extra: str, kill: str | None = None
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SCHEDLAB_DEBUG", "SCHEDLAB_SWEEP_TEST_KILL")}
    if kill:
        env["SCHEDLAB_SWEEP_TEST_KILL"] = kill
    proc = subprocess.Popen([*cli_command(), "sweep", str(desc), "--out", str(out),
                             "--flush-every", "3", "--flush-seconds", "600", *extra],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        # the sweep's own process group: a killed sweep's Dask workers go with it
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def rows(out: Path) -> pl.DataFrame:
    return sw.read(out).drop(list(sw.TIMING_COLUMNS)).sort("key")


def test_killed_at_seeded_points_and_resumed_is_the_uninterrupted_dataset(tmp_path: Path
                                                                          ) -> None:
    desc = tmp_path / "resume.yaml"
    desc.write_text(yaml.safe_dump(GRID, sort_keys=False), encoding="utf-8")
    total = len(sw.plan(sw.load(desc)))
    assert total == 3 * 2 * 2 + 2 * 3 * 2

    ref = tmp_path / "ref"
    done = sweep(desc, ref, "--threads", "-j", "2")
    assert done.returncode == 0, done.stderr
    expected = rows(ref)
    assert len(expected) == total
    assert (expected["status"] == "failed").sum() == 6

    rng = random.Random(3)
    out = tmp_path / "killed"
    held = 0
    for _ in range(4):
        parts_left = -(-(total - held) // 3)
        k = rng.randint(1, max(1, parts_left - 1))
        mode = rng.choice(["part", "write"])
        r = sweep(desc, out, "--threads", "-j", "2", kill=f"{mode}:{k}")
        assert r.returncode == -signal.SIGKILL, (mode, k, r.stderr)
        now = sw.read(out)
        written = k if mode == "part" else k - 1
        # every row written is whole; nothing was written twice
        assert len(now) == held + 3 * written, (mode, k)
        assert now["key"].n_unique() == len(now)
        if mode == "write":
            assert list((out / "parts").glob(".*.tmp")), "the kill landed inside a write"
        held = len(now)
    r = sweep(desc, out, "--threads", "-j", "2")
    assert r.returncode == 0, r.stderr
    assert f"{held} already in" in r.stdout and f"{total - held} run now" in r.stdout
    assert not list(out.rglob(".*.tmp"))
    assert rows(out).equals(expected)


def test_a_killed_dask_sweep_resumes_to_the_same_dataset(tmp_path: Path) -> None:
    desc = tmp_path / "resume.yaml"
    desc.write_text(yaml.safe_dump(GRID, sort_keys=False), encoding="utf-8")
    ref = tmp_path / "ref"
    assert sweep(desc, ref, "--threads").returncode == 0
    out = tmp_path / "dask"
    r = sweep(desc, out, "-j", "2", kill="part:2")
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert len(sw.read(out)) == 6
    r = sweep(desc, out, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert rows(out).equals(rows(ref))


def test_an_interrupted_sweep_keeps_what_finished(tmp_path: Path) -> None:
    import pytest

    seen: list[str] = []

    def interrupt_after_five(row: Any) -> None:
        seen.append(row["key"])
        if len(seen) == 5:
            raise KeyboardInterrupt

    out = tmp_path / "d"
    with pytest.raises(KeyboardInterrupt):
        sw.run(GRID, out, threads=True, workers=1, progress=False, flush_rows=1000,
               flush_s=1e9, on_row=interrupt_after_five)
    kept = sw.read(out)
    assert kept["key"].to_list() == seen and not list(out.rglob(".*.tmp"))
    r = sw.run(GRID, out, threads=True, progress=False)
    assert (r.skipped, r.ran) == (5, r.total - 5)

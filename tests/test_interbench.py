"""`schedlab gen interbench` and interbench's metrics (schedlab.interbench).

The metric tests feed hand-made frames whose figures are worked out here by hand from
interbench.c v0.31 (periodic_schedule l.372-452, emulate_game l.558-587, show_latencies
l.1028-1083); the simulation tests check the unloaded and loaded cases.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import schedlab
from conftest import CliRunner
from schedlab import interbench as ib
from schedlab.report import parse_tables

MS = 1_000_000  # ns


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert lines[0].startswith("error: ") and "Traceback" not in stderr
    return lines[0]


def frames(rows: list[tuple[int, int, int]], kind: int = 2) -> pl.DataFrame:
    """Sample rows (release, start, end) in ns."""
    return pl.DataFrame(
        {"release_ns": [r[0] for r in rows], "start_ns": [r[1] for r in rows],
         "end_ns": [r[2] for r in rows], "kind": [kind] * len(rows)},
        schema={"release_ns": pl.UInt64, "start_ns": pl.Int64, "end_ns": pl.Int64,
                "kind": pl.UInt8},
    )


def grid(times_ns: list[int]) -> pl.DataFrame:
    return frames([(t, t, t) for t in times_ns], kind=0)


# --- the generator through the CLI ---------------------------------------------------


def test_gen_audio_burn_matches_interbench(cli: CliRunner) -> None:
    p = cli("gen", "interbench", "--task", "audio", "--load", "burn")
    assert p.returncode == 0, p.stderr
    spec = json.loads(p.stdout)
    tasks = spec["tasks"]
    assert set(tasks) == {"bench_audio", "tk_bench_audio", "load_burn"}
    # AUDIO_INTERVAL 50 ms, AUDIO_RUN = interval / 20; the timekeeper is SCHED_FIFO 96.
    assert tasks["tk_bench_audio"]["timer"]["period"] == ib.AUDIO_INTERVAL_US == 50_000
    assert tasks["tk_bench_audio"]["priority"] == 96
    assert tasks["bench_audio"]["run"] == 2_500
    # Burn: ud.cpu_load = 4 threads that never sleep.
    assert tasks["load_burn"]["instance"] == 4
    assert set(tasks["load_burn"]) == {"policy", "priority", "instance", "run"}
    assert spec["global"]["duration"] == 31  # 1 s of load alone + 30 s (interbench -t)
    again = cli("gen", "interbench", "--task=audio", "--load=burn")
    assert again.stdout == p.stdout


def test_python_constants_match_the_generated_specs() -> None:
    video = schedlab.generate("interbench", task="video")["tasks"]
    assert video["tk_bench_video"]["timer"]["period"] == ib.VIDEO_INTERVAL_US == 16_666
    assert video["bench_video"]["run"] == 6_666
    x = schedlab.generate("interbench", task="x")["tasks"]
    steps = [ph["run"] // 1000 for ph in x["bench_x"]["phases"].values()]
    assert tuple(steps) == ib.X_STEPS
    tk = x["tk_bench_x"]["phases"]
    assert tk["ramp"]["timer"]["period"] * 1000 == ib.X_STEP_GAP_US * 1000 == 99 * MS
    assert tk["ramp"]["loop"] + 1 == len(steps)
    game = schedlab.generate("interbench", task="gaming")["tasks"]["bench_gaming"]
    assert game["run"] == game["timer"]["period"] == ib.GAME_RUN_US


@pytest.mark.parametrize(("args", "option"), [
    (["--task", "doom"], "options.task"),
    (["--load", "ring"], "options.load"),
    (["--task", "video", "--load", "video"], "options.load"),
    (["--task", "x", "--rt"], "options.rt"),
    (["--burn_tasks", "0"], "options.burn_tasks"),
])
def test_gen_bad_options_exit_2_with_one_line(cli: CliRunner, args: list[str],
                                              option: str) -> None:
    p = cli("gen", "interbench", *args)
    assert p.returncode == 2
    assert option in one_error_line(p.stderr)


# --- the metric definitions on hand-made frames --------------------------------------


def test_periodic_frames_as_periodic_schedule_counts_them() -> None:
    tk = grid([0, 50 * MS, 100 * MS, 200 * MS])
    worker = frames([
        (0, 0, 2_500_000),                       # on time: latency 0, met
        (50 * MS, 52 * MS, 54_500_000),          # ran 2 ms late: latency 2 ms, met
        (100 * MS, 100 * MS, 160 * MS),          # burn ended 10 ms past 150 ms: one
                                                 # interval missed, latency += 50 ms
        (200 * MS, 260 * MS, 262_500_000),       # started past 250 ms: burn skipped,
                                                 # latency 60 + 50 ms, one missed burn
        (300 * MS, 300 * MS, -1),                # unfinished at the end: ignored
    ])
    m = ib.metrics_from_frames("audio", worker, tk)
    lat = [0, 2_000, 50_000, 110_000]  # µs
    assert m["frames"] == 4
    assert m["n_deadlines_met"] == 2 and m["n_missed_deadlines"] == 2
    assert m["n_achieved_burns"] == 3 and m["n_missed_burns"] == 1
    assert m["latency_mean_ms"] == pytest.approx(sum(lat) / 4 / 1000)
    assert m["latency_max_ms"] == 110.0
    assert m["desired_cpu_pct"] == pytest.approx(75.0)
    assert m["deadlines_met_pct"] == pytest.approx(50.0)
    # interbench's "SD": (Σx² − mean²/n) / (n − 1), mean²/n where the variance has n·mean².
    mean = 162_000 / 4
    sumsq = 2_000**2 + 50_000**2 + 110_000**2
    assert m["latency_sd_ms"] == pytest.approx(math.sqrt((sumsq - mean**2 / 4) / 3) / 1000)
    assert m["sd_true_ms"] == pytest.approx(math.sqrt((sumsq - 4 * mean**2) / 3) / 1000)


def test_two_intervals_late_counts_missed_burns() -> None:
    # Burn ends 60 ms past the deadline: ⌊60/50⌋ + 1 = 2 intervals; with more than one,
    # periodic_schedule also counts them as missed burns.
    m = ib.metrics_from_frames("audio", frames([(0, 0, 110 * MS)]), grid([0]))
    assert (m["n_missed_deadlines"], m["n_missed_burns"], m["n_achieved_burns"]) == (2, 2, 1)
    assert m["latency_max_ms"] == 100.0
    assert m["desired_cpu_pct"] == pytest.approx(100 / 3)
    assert m["deadlines_met_pct"] == 0.0  # none met: interbench prints 0
    assert m["latency_sd_ms"] == 0.0  # one sample: no SD


def test_latency_is_measured_from_the_timekeepers_wake_up() -> None:
    # The timekeeper was due at 0 but woke the worker at 3 ms (its own lateness is
    # subtracted, slept_interval); the worker ran at 5 ms: latency 2 ms.
    m = ib.metrics_from_frames("video", frames([(3 * MS, 5 * MS, 12 * MS)]), grid([0]))
    assert m["latency_mean_ms"] == 2.0
    assert m["deadlines_met_pct"] == 100.0  # done by 0 + 16.666 ms


def test_x_grace_step_order_and_step_zero() -> None:
    # Step i's nominal frame time is (i-1) ms after its wake-up (emulate_x's
    # `deadline += i * 1000`): the first frame is step 2, 1.5 ms late → 0.5 ms latency.
    m = ib.metrics_from_frames("x", frames([(0, 1_500_000, 3_500_000)]), grid([0]))
    assert m["latency_mean_ms"] == 0.5
    # A whole on-time sweep: 100 frames 99 ms apart plus X's step 0 (burn 0, met) =
    # 101 samples; step 100 (interval 0) is never judged, so 100 deadlines, all met.
    rows, grid_ns, t = [], [], 0
    for step in ib.X_STEPS:
        rows.append((t, t, t + step * MS))
        grid_ns.append(t)
        t += (300 if step == 100 else 99) * MS
    m = ib.metrics_from_frames("x", frames(rows), grid(grid_ns))
    assert m["frames"] == 101
    assert (m["n_deadlines_met"], m["n_missed_deadlines"]) == (100, 0)
    assert m["deadlines_met_pct"] == 100.0 and m["desired_cpu_pct"] == 100.0
    assert m["latency_max_ms"] == 0.0


def test_gaming_frames() -> None:
    # 100 ms of CPU took 100 ms, then 150 ms: latencies 0 and 50 ms; desired CPU =
    # 200000 / (200000 + 50000) µs.
    worker = frames([(0, 0, 100 * MS), (100 * MS, 100 * MS, 250 * MS)], kind=0)
    m = ib.metrics_from_frames("gaming", worker, None)
    assert m["latency_mean_ms"] == 25.0 and m["latency_max_ms"] == 50.0
    assert m["desired_cpu_pct"] == pytest.approx(80.0)
    assert m["deadlines_met_pct"] is None


# --- simulated runs ---------------------------------------------------------------------


def _run(task: str, load: str, scheduler: str, **opts: Any) -> dict[str, Any]:
    spec = schedlab.generate("interbench", task=task, load=load, duration_s=3, warmup_s=1,
                             **opts)
    res = schedlab.simulate(spec, scheduler=scheduler, seed=1)
    return ib.interbench_metrics(res, spec)


@pytest.mark.parametrize("task", ib.TASKS)
def test_unloaded_fixed_priority_meets_everything(task: str) -> None:
    m = _run(task, "none", "fp")
    assert m["task"] == task
    assert m["frames"] > 10
    assert m["latency_mean_ms"] < 0.01 and m["latency_max_ms"] < 0.01
    assert m["desired_cpu_pct"] == 100.0
    if task != "gaming":
        assert m["deadlines_met_pct"] == 100.0


@pytest.mark.parametrize("task", ["gaming", "video"])
def test_burn_lowers_desired_cpu_under_a_fair_policy(task: str) -> None:
    if "linux-cfs" not in [s["name"] for s in schedlab.schedulers()]:
        pytest.skip("linux-cfs is not available")
    idle = _run(task, "none", "linux-cfs")
    burn = _run(task, "burn", "linux-cfs")
    assert idle["desired_cpu_pct"] == 100.0
    assert burn["desired_cpu_pct"] < 90.0
    if task == "gaming":
        # Five equal CFS weights: the game gets about a fifth of the CPU.
        assert burn["desired_cpu_pct"] == pytest.approx(20.0, abs=2.0)


def test_run_matrix_rows() -> None:
    rows = ib.run_matrix(["fp"], tasks=("audio", "x"), loads=("none", "x", "read"),
                         quick=True)
    assert [(r["task"], r["load"]) for r in rows] == [
        ("audio", "none"), ("audio", "x"), ("audio", "read"), ("x", "none"), ("x", "read")]
    assert all("error" not in r and r["scheduler"] == "fp" for r in rows)
    assert rows[0]["deadlines_met_pct"] == 100.0


def test_interbench_html_tables(tmp_path: Path) -> None:
    from schedlab.report.context import Context
    from schedlab.seeds.interbench000 import part

    ctx = Context(True, tmp_path, jobs=1)
    piece = part(ctx, ["fp"])
    tables = parse_tables(f"<html><body>{piece.html}</body></html>")
    for task in ib.TASKS:
        rows = tables[f"seed000-interbench-{task}"]
        loads = [r[0] for r in rows if r and r[0] in ib.LABELS.values()]
        assert loads == [ib.LABELS[ld] for ld in ib.LOADS if ld != task]
    none_row = next(r for r in tables["seed000-interbench-audio"] if r and r[0] == "None")
    assert none_row[1:] == ["0.0 ± 0.0", "0.0", "100.0", "100.0"]
    specs = sorted(ctx.specs_dir.glob("seed000-interbench-*.json"))
    assert len(specs) == 35 and len(piece.runs) == 35 and all(r.ok for r in piece.runs)

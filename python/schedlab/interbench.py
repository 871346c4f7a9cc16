"""Interbench's metrics from a schedlab run of ``schedlab gen interbench``.

Source: ``interbench.c`` v0.31 (Con Kolivas; ckolivas/interbench commit 2b42050, the same
functions as the v0.30 copy): ``periodic_schedule`` (l.372-452) accounts every frame of
Audio, Video and X, ``emulate_game`` (l.558-587) every Gaming frame, and ``show_latencies``
(l.1028-1083) turns the counters into the five printed figures. This module replays that
accounting on the per-activation samples of the simulated run (``samples=True``); its
counters are the C ``struct data_table``'s, in whole microseconds (``get_usecs``).

Per Audio/Video/X frame (the benchmarked worker ``bench_<task>`` is woken by its
timekeeper ``tk_bench_<task>``, whose timer release is the frame's grid point ``D``):

- latency = max(0, start − wake − grace): interbench measures from the frame's nominal
  time plus what the timekeeper overslept (``slept_interval``), i.e. from the moment the
  timekeeper woke the thread (the worker's release) to the moment it ran. ``grace`` is 0
  except for X, whose nominal frame time lies (i−1) ms after step i's wake-up (l.543).
- deadline = D + the frame's deadline offset (Audio 50 ms, Video 16666 µs, X 99 ms).
- If the worker started after the deadline, interbench skips the burn: ``intervals`` =
  ⌊(start − deadline)/interval⌋ + 1 missed deadlines *and* missed burns, and the latency
  grows by ``intervals × interval``. (The simulated worker burns anyway; see the generator.)
- Else the burn counts as achieved; the deadline is met if the burn ended by it; if not,
  ``intervals`` = ⌊(end − deadline)/interval⌋ + 1 missed deadlines, latency +=
  ``intervals × interval``, and missed burns += ``intervals`` only when intervals > 1.
- X's step 100 has interval 0: never a deadline, never skipped. X's step 0 (burn 0, always
  on time, not simulated) adds one frame per sweep: latency 0, deadline met, burn achieved.

Per Gaming frame (100 ms of CPU between two timer boundaries): latency = max(0, wall time −
100 ms); achieved burns += 100000 (µs), missed burns += latency; no deadlines.

Summary (``show_latencies``): mean = Σlatency / n; **SD as interbench prints it** =
√((Σlatency² − mean²/n)/(n − 1)) — the C divides mean² by n where the sample variance
multiplies it, so this "SD" is close to the root mean square, not the standard deviation
(``sd_true_ms`` gives the real one); max; % desired CPU = achieved / (achieved + missed
burns) · 100; % deadlines met = met / (met + missed) · 100 (0 when none met; Gaming has
none). Latencies are in ms, as interbench prints them in normal mode (with ``-r`` it
prints µs: multiply by 1000).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from schedlab.result import Result

__all__ = [
    "LOADS",
    "TASKS",
    "Counters",
    "FrameRule",
    "frame_rules",
    "game_frame",
    "interbench_metrics",
    "metrics_from_frames",
    "periodic_frame",
    "run_matrix",
    "sizes",
    "summarize",
]

#: The benchmarked tasks, as ``schedlab gen interbench --task`` spells them.
TASKS: tuple[str, ...] = ("audio", "video", "x", "gaming")
#: The loads, in interbench's order (``threadlist``, l.108-122).
LOADS: tuple[str, ...] = (
    "none", "video", "x", "burn", "write", "read", "compile", "memload", "hack",
)
#: interbench's labels for the tasks and loads.
LABELS: dict[str, str] = {
    "audio": "Audio", "video": "Video", "x": "X", "gaming": "Gaming", "none": "None",
    "burn": "Burn", "write": "Write", "read": "Read", "compile": "Compile",
    "memload": "Memload", "hack": "Hack",
}

# The constants of interbench.c (and of crates/schedlab-spec/src/gen/interbench.rs, which
# tests/test_interbench.py checks against the generated spec).
AUDIO_INTERVAL_US = 50_000  # AUDIO_INTERVAL, l.484
VIDEO_INTERVAL_US = 1_000_000 // 60  # VIDEO_INTERVAL, l.505
GAME_RUN_US = 100_000  # GAME_RUN, l.557
X_STEP_GAP_US = 99_000  # X step i's deadline: its wake-up + 99 ms
X_STEPS: tuple[int, ...] = (*range(2, 101), 1)  # the worker's step order (generator)


@dataclass(frozen=True)
class FrameRule:
    """How ``periodic_schedule`` judges one frame, µs: the deadline's offset from the
    timekeeper's grid point, the interval that missed frames are counted in (0: no
    deadline), and the grace before latency counts."""

    deadline_offset: int
    interval: int
    grace: int = 0


def frame_rules(task: str) -> Callable[[int], FrameRule]:
    """The rule of the ``j``-th frame (0-based, in the worker's order) of ``task``."""
    if task == "audio":
        rule = FrameRule(AUDIO_INTERVAL_US, AUDIO_INTERVAL_US)
        return lambda _j: rule
    if task == "video":
        rule = FrameRule(VIDEO_INTERVAL_US, VIDEO_INTERVAL_US)
        return lambda _j: rule
    if task == "x":
        def x_rule(j: int) -> FrameRule:
            i = X_STEPS[j % len(X_STEPS)]
            # emulate_x: periodic_schedule(i ms, (100-i) ms), then deadline += i ms.
            return FrameRule(X_STEP_GAP_US, (100 - i) * 1000, (i - 1) * 1000)

        return x_rule
    raise ValueError(f"no periodic frames for task {task!r}; expected audio, video or x")


@dataclass
class Counters:
    """interbench's ``struct data_table`` (µs)."""

    total_latency: int = 0
    sum_latency_squared: int = 0
    max_latency: int = 0
    nr_samples: int = 0
    deadlines_met: int = 0
    missed_deadlines: int = 0
    missed_burns: int = 0
    achieved_burns: int = 0

    def sample(self, latency: int) -> None:
        self.max_latency = max(self.max_latency, latency)
        self.total_latency += latency
        self.sum_latency_squared += latency * latency
        self.nr_samples += 1


def periodic_frame(c: Counters, wake: int, start: int, end: int, grid: int,
                   rule: FrameRule) -> None:
    """Account one frame as ``periodic_schedule`` does (times in µs): woken at ``wake``
    by the timekeeper whose grid point was ``grid``, ran from ``start``, burn done at
    ``end``."""
    latency = max(0, start - wake - rule.grace)
    deadline = grid + rule.deadline_offset
    missed_latency = 0
    if rule.interval and start > deadline:
        intervals = (start - deadline) // rule.interval + 1
        c.missed_deadlines += intervals
        c.missed_burns += intervals
        missed_latency = intervals * rule.interval
    else:
        c.achieved_burns += 1
        if end <= deadline:
            c.deadlines_met += 1
        elif rule.interval:
            intervals = (end - deadline) // rule.interval + 1
            c.missed_deadlines += intervals
            missed_latency = intervals * rule.interval
            if intervals > 1:
                c.missed_burns += intervals
    c.sample(latency + missed_latency)


def game_frame(c: Counters, start: int, end: int) -> None:
    """Account one Gaming frame (``emulate_game``): 100 ms of CPU from ``start`` to
    ``end`` (µs)."""
    latency = max(0, end - start - GAME_RUN_US)
    c.achieved_burns += GAME_RUN_US
    c.missed_burns += latency
    c.sample(latency)


def summarize(c: Counters, nodeadlines: bool = False) -> dict[str, Any]:
    """``show_latencies``: the printed figures (latencies in ms) and the raw counters."""
    n = c.nr_samples
    if n > 1:
        mean = c.total_latency / n
        variance = (c.sum_latency_squared - mean * mean / n) / (n - 1)
        sd = math.sqrt(max(variance, 0.0))
        true_var = (c.sum_latency_squared - n * mean * mean) / (n - 1)
        sd_true = math.sqrt(max(true_var, 0.0))
    else:
        mean, sd, sd_true = float(c.total_latency), 0.0, 0.0
    burns = c.achieved_burns + c.missed_burns
    desired = c.achieved_burns / burns * 100 if c.achieved_burns > 0 else 0.0
    judged = c.deadlines_met + c.missed_deadlines
    met = c.deadlines_met / judged * 100 if c.deadlines_met > 0 else 0.0
    return {
        "latency_mean_ms": mean / 1000,
        "latency_sd_ms": sd / 1000,
        "latency_max_ms": c.max_latency / 1000,
        "desired_cpu_pct": desired,
        "deadlines_met_pct": None if nodeadlines else met,
        "sd_true_ms": sd_true / 1000,
        "frames": n,
        **{f"n_{k}": v for k, v in asdict(c).items()},
    }


def _us(ns: int) -> int:
    return int(ns) // 1000


def metrics_from_frames(task: str, worker: pl.DataFrame,
                        timekeeper: pl.DataFrame | None) -> dict[str, Any]:
    """The figures from the worker's and timekeeper's sample rows (columns ``release_ns``,
    ``start_ns``, ``end_ns``, ``kind``; unfinished activations are skipped)."""
    c = Counters()
    done = worker.filter((worker["start_ns"] >= 0) & (worker["end_ns"] >= 0))
    if task == "gaming":
        for s, e in done.select("start_ns", "end_ns").iter_rows():
            game_frame(c, _us(s), _us(e))
        return summarize(c, nodeadlines=True)
    if timekeeper is None:
        raise ValueError(f"{task}: the timekeeper's samples are needed")
    rule_of = frame_rules(task)
    grids = sorted(int(r) for r in timekeeper["release_ns"].to_list())
    woken = done.filter(done["kind"] == 2).sort("release_ns")
    step1 = 0
    for j, (r, s, e) in enumerate(woken.select("release_ns", "start_ns", "end_ns").iter_rows()):
        k = bisect.bisect_right(grids, int(r)) - 1
        if k < 0:
            continue  # woken before the first timer: not a frame
        rule = rule_of(j)
        periodic_frame(c, _us(r), _us(s), _us(e), _us(grids[k]), rule)
        if task == "x" and X_STEPS[j % len(X_STEPS)] == 1:
            step1 += 1
    for _ in range(step1):  # X's step 0 before each step 1: on time, burns nothing
        c.achieved_burns += 1
        c.deadlines_met += 1
        c.sample(0)
    return summarize(c)


def interbench_metrics(result: Result, spec: Mapping[str, Any] | None = None,
                       task: str | None = None) -> dict[str, Any]:
    """Interbench's five figures for the benchmarked task of a ``gen interbench`` run
    (simulated with ``samples=True``): ``latency_mean_ms``, ``latency_sd_ms`` (as
    interbench computes it), ``latency_max_ms``, ``desired_cpu_pct``,
    ``deadlines_met_pct`` (None for Gaming), plus ``frames`` and the raw counters.

    ``task`` is found from the task named ``bench_<task>`` in ``spec`` (or the result)."""
    names = {int(t["tid"]): str(t["name"]) for t in result.json.get("tasks", [])}
    if task is None:
        pool = list((spec or {}).get("tasks", {})) or list(names.values())
        found = [n[len("bench_"):] for n in pool if n.startswith("bench_")]
        if len(found) != 1 or found[0] not in TASKS:
            raise ValueError("not an interbench run: expected one task named bench_<task> "
                             f"with task in {', '.join(TASKS)}, found {found}")
        task = found[0]
    tid_of = {v: k for k, v in names.items()}
    if f"bench_{task}" not in tid_of:
        raise ValueError(f"the result has no task bench_{task}")
    df = result.samples
    worker = df.filter(df["tid"] == tid_of[f"bench_{task}"])
    tk_name = f"tk_bench_{task}"
    tk = df.filter(df["tid"] == tid_of[tk_name]) if tk_name in tid_of else None
    out = metrics_from_frames(task, worker, tk)
    out["task"] = task
    return out


def run_matrix(schedulers: Sequence[str], tasks: Sequence[str] = TASKS,
               loads: Sequence[str] = LOADS, quick: bool = False, seed: int = 1,
               jobs: int | None = None, **gen_options: Any) -> list[dict[str, Any]]:
    """Run every (task, load, scheduler) of interbench's matrix (a task never against
    itself) in parallel (:func:`schedlab.runner.run_jobs`) and return one row per run:
    ``task``, ``load``, ``scheduler`` and the figures of :func:`interbench_metrics` (or
    ``error``). ``quick`` uses :func:`sizes`' quick sizes; ``gen_options`` go to every
    ``generate("interbench", …)`` call."""
    from schedlab import api, runner

    todo = []
    for task in tasks:
        for load in (ld for ld in loads if ld != task):
            opts = {**sizes(load, quick), **gen_options, "task": task, "load": load}
            text = api.generate_text("interbench", [(k, api.option_text(v))
                                                    for k, v in opts.items()])
            todo += [(task, load, api.job(text, s, seed=seed)) for s in schedulers]
    outcomes = runner.run_jobs([j for _, _, j in todo], workers=jobs)
    return [_matrix_row(task, load, o) for (task, load, _), o in zip(todo, outcomes, strict=True)]


def _matrix_row(task: str, load: str, o: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"task": task, "load": load, "scheduler": o.job.scheduler}
    if o.result is None:
        row["error"] = o.error
        return row
    try:
        row.update(interbench_metrics(o.result, task=task))
    except Exception as exc:  # one unreadable run is one row, not the matrix
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


#: Quick-mode sizes: 2 s of benchmark after 1 s of load alone (X then sweeps only steps
#: 2..~21 of its ramp; Audio gives ~39 frames, Video ~119, Gaming ~19).
QUICK: dict[str, Any] = {"duration_s": 2, "warmup_s": 1}
#: Quick-mode sizes of the Hack load, whose socket traffic dominates the simulator's time:
#: 1 s, no warm-up, one hackbench group (40 tasks instead of 2000).
QUICK_HACK: dict[str, Any] = {"duration_s": 1, "warmup_s": 0, "hack_groups": 1}


def sizes(load: str, quick: bool) -> dict[str, Any]:
    """Generator options for ``load``: interbench's defaults (30 s after 1 s of load,
    hackbench 50), or the quick sizes."""
    if not quick:
        return {}
    return dict(QUICK_HACK if load == "hack" else QUICK)

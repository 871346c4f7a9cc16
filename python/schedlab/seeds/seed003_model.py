"""Seed 003: "A Study of resource management for Embedded SMP Linux" (Y. Teshigawara,
H. Motai, H. Yamamoto, S. Ochiai, T. Matsumoto, Mitsubishi Electric, 2012; docs/seeds.md).
cgroup RT bandwidth on a PandaBoard (OMAP4430, two Cortex-A9 cores), Ubuntu 10.10.

This module holds what the section and the profile fit share: the published tables (read
from ``data/seed003.json``), the experiments as specs, and the measuring rules that turn
a run into the seed's two numbers:

- **T** (experiment イ, "top"): a SCHED_FIFO busy loop in each of cg0, cg1, cgA; each
  loop's %CPU as top (procps 3.2) computes it: the growth of utime + stime, in clock
  ticks of 1/100 s, between two refreshes, × 100 / (100 × the seconds between them), in
  Irix mode (100 % = one core, top's default). In Linux 2.6.35 utime + stime in
  ``/proc/<pid>/stat`` is the task's precise run time ``sum_exec_runtime`` (``task_times``
  in kernel/sched.c scales the tick-sampled split to it) in jiffies (HZ 128), converted
  to clock ticks (``jiffies_to_clock_t``, rounding down). Interrupts that land on a
  task count as its time (2.6.35 has no IRQ time accounting). :func:`top_percent` applies
  exactly this to the simulated CPU time at the two refreshes, which are two runs of the
  same spec cut at the two times (the longer run's history is the shorter one's).
- **C** (experiment ア, "CoreMark"): loops in cg0 and cg1, CoreMark in cgA. CoreMark
  runs a fixed number of iterations and divides them by the seconds they took; the model
  is a SCHED_FIFO task doing that many fixed bursts of work, with a mark where it starts
  timing and one where it stops: the iterations per second are the work done, not the
  CPU time, so interrupt costs charged to it lower them. C = its iterations per second
  relative to the same CoreMark alone and unthrottled (:func:`reference_spec`) — the seed
  does not say what it is relative to, but its No. 4 and 5 read 100.0.

The RT priorities were not published: :data:`PRIORITIES` lists the arrangements the
section tries. The parent group cg's settings were not published either: its ratio must
be 0.95 (the data file's ``facts.parent_group`` says why), taken as 950000 µs per 1 s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedlab import api
from schedlab.seeds import published

DATA: dict[str, Any] = published.load("seed003")
CITATION: str = DATA["document"]["citation"]
PLATFORM: str = DATA["platform"]

#: The built-in machine profile of the seed's board.
PROFILE = "seed003-omap4430"
#: The policy whose RT class models the seed's kernel's (RT group scheduling, throttling,
#: runtime borrowing as ``rt_runtime_share``).
POLICY = "linux-cfs"
#: The tunable that switches runtime borrowing: on in 2.6.35 (no switch), off in 5.10+.
SHARE_PARAM = "rt_runtime_share"
BORROWING: dict[str, str] = {"on": "1", "off": "0"}
BORROWING_TEXT = {"on": "borrowing on (2.6.35, the seed's kernel)",
                  "off": "borrowing off (Linux 5.10 and later)"}

GROUPS: tuple[str, ...] = ("cg0", "cg1", "cgA")
#: Each group's path and the CPU its cpuset holds (figure 1).
GROUP_CPU: dict[str, int] = {g: v["core"] for g, v in DATA["setup"]["groups"].items()}
PARENT = "/cg"
#: The parent group's runtime per period (µs): the ratio 0.95 its children need.
PARENT_RUNTIME_US, PARENT_PERIOD_US = 950_000, 1_000_000

#: rt-app's priority of every loop unless an arrangement says otherwise.
BASE_PRIORITY = 50
#: The RT priority arrangements tried (the seed does not give its): the priority of the
#: task in each group. cg0 is alone on its core, so its priority changes nothing.
PRIORITIES: dict[str, dict[str, int]] = {
    "equal": {"cg0": 50, "cg1": 50, "cgA": 50},
    "cgA above cg1": {"cg0": 50, "cg1": 50, "cgA": 60},
    "cg1 above cgA": {"cg0": 50, "cg1": 60, "cgA": 50},
}

#: A busy loop's burst (µs): long, so that throttling and preemption, not the program,
#: split its run time.
LOOP_BURST_US = 1_000_000
#: One CoreMark iteration's work (µs), an assumed size: C depends on it only through the
#: last, partly done iteration (1 ms of a run of seconds).
ITERATION_US = 1_000
#: procps top's default refresh interval (s): ``Rc.delay_time = 3.0`` in top.c.
TOP_DELAY_S = 3.0
#: Linux's USER_HZ (the clock ticks of /proc/<pid>/stat) and the board's HZ.
USER_HZ, BOARD_HZ = 100, 128
NS_PER_S = 1_000_000_000
START_MARK, DONE_MARK = "coremark_start", "coremark_done"
#: Experiment ア's loops never end, so its run is cut after the warm-up and this many times
#: the time CoreMark's iterations take unthrottled: a C below 100 / this (8.3 %) reads as
#: "did not finish".
C_RUN_FACTOR = 12


@dataclass(frozen=True)
class Setting:
    """One row of Table 1: the period and each group's runtime (µs)."""

    no: int
    period_us: int
    runtime_us: Mapping[str, int]

    def share(self, group: str) -> float:
        """runtime / period of ``group``."""
        return self.runtime_us[group] / self.period_us


@dataclass(frozen=True)
class Published:
    """One row of Table 2: C of cgA (%) and T of each group (%)."""

    no: int
    c: float
    t: Mapping[str, int]


def _settings() -> dict[int, Setting]:
    cols = DATA["settings"]["columns"]
    out: dict[int, Setting] = {}
    for row in DATA["settings"]["rows"]:
        r = dict(zip(cols, row, strict=True))
        out[r["no"]] = Setting(r["no"], r["period_us"], {g: r[g] for g in GROUPS})
    return out


def _published() -> dict[int, Published]:
    cols = DATA["results"]["columns"]
    out: dict[int, Published] = {}
    for row in DATA["results"]["rows"]:
        r = dict(zip(cols, row, strict=True))
        out[r["no"]] = Published(r["no"], float(r["C_cgA"]),
                                 {g: int(r[f"T_{g}"]) for g in GROUPS})
    return out


SETTINGS: dict[int, Setting] = _settings()
PUBLISHED: dict[int, Published] = _published()


@dataclass(frozen=True)
class Sizes:
    """How much of the experiment one report runs."""

    settings: tuple[int, ...]
    priorities: tuple[str, ...]
    #: Seconds the loops run before top's first refresh and before CoreMark starts timing.
    warmup_s: float
    #: CoreMark's iterations (the unthrottled run takes ITERATION_US each).
    iterations: int
    #: top refreshes averaged: T is the mean of this many consecutive windows.
    windows: int
    description: str = ""
    reduced: tuple[str, ...] = field(default_factory=tuple)


FULL = Sizes(settings=tuple(SETTINGS), priorities=tuple(PRIORITIES), warmup_s=5.0,
             iterations=10_000, windows=3,
             description="all eight settings, every priority arrangement, CoreMark for 10 s "
                         "(its minimum run), three 3-second top refreshes after 5 s")
QUICK = Sizes(settings=tuple(SETTINGS), priorities=tuple(PRIORITIES), warmup_s=3.0,
              iterations=3_000, windows=1,
              description="all eight settings and every priority arrangement, CoreMark for "
                          "3 s, one 3-second top refresh after 3 s of warm-up",
              reduced=("CoreMark runs 3 s (three 1-second periods in No. 1–4) instead of "
                       "10 s", "top is read once instead of three times",
                       "the warm-up is 3 s instead of 5 s"))


def sizes(quick: bool) -> Sizes:
    return QUICK if quick else FULL


# --------------------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------------------


def group_path(group: str) -> str:
    return f"{PARENT}/{group}"


def cgroups(setting: Setting) -> dict[str, dict[str, Any]]:
    """The cgroup files of a setting: cg at 0.95, each child's period, runtime and CPU."""
    out: dict[str, dict[str, Any]] = {
        PARENT: {"cpu.rt_period_us": PARENT_PERIOD_US, "cpu.rt_runtime_us": PARENT_RUNTIME_US}}
    for g in GROUPS:
        out[group_path(g)] = {"cpu.rt_period_us": setting.period_us,
                              "cpu.rt_runtime_us": setting.runtime_us[g],
                              "cpuset.cpus": str(GROUP_CPU[g])}
    return out


def _loop(group: str, priority: int) -> dict[str, Any]:
    return {"policy": "SCHED_FIFO", "priority": priority, "taskgroup": group_path(group),
            "loop": -1, "run": LOOP_BURST_US}


def _coremark(group: str | None, priority: int, iterations: int, delay_us: int
              ) -> dict[str, Any]:
    """CoreMark: a mark where it starts timing, ``iterations`` bursts of work, a mark
    where it stops, then it exits."""
    task: dict[str, Any] = {"policy": "SCHED_FIFO", "priority": priority}
    if group is not None:
        task["taskgroup"] = group_path(group)
    task["delay"] = delay_us
    task["loop"] = 1
    task["phases"] = {
        "start": {"loop": 1, "schedlab:mark": START_MARK},
        "iterate": {"loop": iterations, "run": ITERATION_US},
        "done": {"loop": 1, "schedlab:mark": DONE_MARK},
    }
    return task


def _machine(profile: str | Mapping[str, Any]) -> dict[str, Any]:
    return {"profile": profile if isinstance(profile, str) else dict(profile)}


def spec(setting: Setting, experiment: str, priorities: Mapping[str, int], size: Sizes,
         profile: str | Mapping[str, Any] = PROFILE) -> str:
    """Experiment ``"T"`` (loops in all three groups, run until cut) or ``"C"`` (loops in
    cg0 and cg1, CoreMark in cgA starting after the warm-up) of ``setting``."""
    tasks: dict[str, Any] = {f"loop_{g}": _loop(g, priorities[g]) for g in ("cg0", "cg1")}
    if experiment == "T":
        tasks["loop_cgA"] = _loop("cgA", priorities["cgA"])
        duration_s = size.warmup_s + size.windows * TOP_DELAY_S
    elif experiment == "C":
        tasks["coremark"] = _coremark("cgA", priorities["cgA"], size.iterations,
                                      round(size.warmup_s * 1e6))
        duration_s = size.warmup_s + C_RUN_FACTOR * size.iterations * ITERATION_US / 1e6
    else:
        raise ValueError(f"experiment {experiment!r}: expected 'T' or 'C'")
    doc: dict[str, Any] = {"tasks": tasks, "global": {"duration": _whole(duration_s)}}
    doc["schedlab"] = {"machine": _machine(profile), "cgroups": cgroups(setting)}
    return api.spec_text(doc)


#: The reference run borrows: alone in the root group, CoreMark's run queue on core 1 then
#: takes the idle core 0's spare RT runtime up to the whole period and is never throttled
#: (the global limit, 950000 µs per 1 s, cannot be lifted in a spec).
REFERENCE_PARAMS: tuple[tuple[str, str], ...] = ((SHARE_PARAM, BORROWING["on"]),)


def reference_spec(size: Sizes, profile: str | Mapping[str, Any] = PROFILE) -> str:
    """CoreMark alone on core 1, in the root group, no loops: what C is relative to (run
    with :data:`REFERENCE_PARAMS`)."""
    task = _coremark(None, BASE_PRIORITY, size.iterations, round(size.warmup_s * 1e6))
    task = {**task, "cpus": [GROUP_CPU["cgA"]]}
    doc = {"tasks": {"coremark": task}, "schedlab": {"machine": _machine(profile)}}
    return api.spec_text(doc)


def _whole(seconds: float) -> int | float:
    return int(seconds) if float(seconds).is_integer() else seconds


def top_cuts_ns(size: Sizes) -> list[int]:
    """The times top refreshes at: after the warm-up, then every TOP_DELAY_S."""
    return [round((size.warmup_s + k * TOP_DELAY_S) * NS_PER_S) for k in range(size.windows + 1)]


# --------------------------------------------------------------------------------------
# Measuring rules
# --------------------------------------------------------------------------------------


def clock_ticks(cpu_ns: int, hz: int = BOARD_HZ) -> int:
    """utime + stime in /proc/<pid>/stat (USER_HZ ticks) for a task that has run
    ``cpu_ns``: nsecs_to_jiffies, then jiffies_to_clock_t, each rounding down."""
    jiffy_ns = NS_PER_S // hz
    jiffies = cpu_ns // jiffy_ns
    return jiffies * jiffy_ns // (NS_PER_S // USER_HZ)


def top_percent(before_ns: int, after_ns: int, window_ns: int) -> float:
    """top's %CPU of a task whose CPU time grew from ``before_ns`` to ``after_ns`` between
    two refreshes ``window_ns`` apart (Irix mode)."""
    ticks = clock_ticks(after_ns) - clock_ticks(before_ns)
    return ticks * 100.0 / (USER_HZ * window_ns / NS_PER_S)


def top_mean(cpu_at_cuts: Sequence[int], cuts_ns: Sequence[int]) -> float:
    """The mean of top's %CPU over consecutive refreshes."""
    values = [top_percent(a, b, t1 - t0) for a, b, t0, t1 in
              zip(cpu_at_cuts, cpu_at_cuts[1:], cuts_ns, cuts_ns[1:], strict=False)]
    return sum(values) / len(values)


def coremark_seconds(marks: Mapping[str, int]) -> float | None:
    """The seconds CoreMark timed (None if it did not finish)."""
    if START_MARK not in marks or DONE_MARK not in marks:
        return None
    return (marks[DONE_MARK] - marks[START_MARK]) / NS_PER_S


def c_percent(seconds: float | None, reference_seconds: float | None) -> float | None:
    """C: iterations per second relative to the unthrottled run's, in %."""
    if not seconds or not reference_seconds:
        return None
    return 100.0 * reference_seconds / seconds


def borrowing_cap(setting: Setting, group: str, cpus: int = 2) -> float:
    """The seed's 式①: a group alone on its core borrows the other cores' runtime of the
    group up to a whole period, so its share reaches min(runtime/period × n, 1), in %."""
    return 100.0 * min(setting.share(group) * cpus, 1.0)


# --------------------------------------------------------------------------------------
# Comparison with the published figures
# --------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Exact matches, within one point, and misses (ties are ties: equal is exact)."""

    exact: int = 0
    within_one: int = 0
    misses: int = 0

    def add(self, simulated: float | None, published_value: float, decimals: int) -> str:
        """Count one comparison; its verdict as text."""
        if simulated is None:
            self.misses += 1
            return "no result"
        shown = round(simulated, decimals)
        if shown == round(published_value, decimals):
            self.exact += 1
            return "exact"
        if abs(shown - published_value) <= 1.0 + 1e-9:
            self.within_one += 1
            return "within 1"
        self.misses += 1
        return "miss"

    @property
    def total(self) -> int:
        return self.exact + self.within_one + self.misses

    def text(self) -> str:
        return (f"{self.exact} exact, {self.within_one} within 1 point, {self.misses} "
                f"missed, of {self.total}")

"""The host runner against the field's tools, on this machine, in the same run.

Three cross-checks, each run alternately by the tool and by the runner (``schedlab host
run``) so that both see the same machine at nearly the same time:

- **Timer wake-up latency** — rt-tests' ``cyclictest`` (one thread, ``-i`` interval,
  ``-p`` SCHED_FIFO priority, ``-a`` CPU, ``-l`` cycles, ``--laptop`` so that neither holds
  ``/dev/cpu_dma_latency``, no ``-m`` since the runner does not lock its memory) against
  the ``cyclictest`` generator's spec with the same interval, priority and cycles, its
  thread pinned to the same CPU. Both measure ``now − expiry`` after an absolute
  ``clock_nanosleep``. At idle and under a load of rt-tests' ``hackbench -g 10 -l 1000``
  run again and again, the same real load for both. p50 and p99 are compared, never the
  maximum: this kind of virtual machine stalls a few ms now and then even when idle.
- **hackbench** — rt-tests' ``hackbench`` against ``schedlab gen hackbench`` with the
  same groups, loops, pipes or sockets, processes or threads: the time hackbench prints
  (kick-off to all reaped) against the spec's headline (the ``start`` mark after the
  start barrier to the last exit). The runner runs every task as a thread of its own
  process, so ``tasks=process`` differs from hackbench's ``fork()`` in that; the row says
  so.
- **rt-app** — one rt-app file (two SCHED_FIFO tasks on one CPU, one in two phases) run
  by Debian's ``rt-app`` 1.0 and by the runner: per
  task and phase, the median run time, period and wake-up latency, from rt-app's log
  (columns ``run``, ``period``, ``wu_lat``, µs) and from the runner's activations (start
  to end, start to next start, release to start). The file uses ``runtime`` (wall clock)
  events, so neither side depends on rt-app's calibration.

**Agreement.** Each statistic is measured ``reps`` times by each side; the medians are
compared. They agree when they differ by no more than the tolerance: the larger of the
reference tool's own spread over its repeats (max − min: the tool disagrees with itself by
that much on this machine at this time, so a smaller difference cannot be told from noise)
and a floor per kind of statistic (:data:`FLOORS`), set from what this kind of 2-vCPU
virtual machine gives between repeats of the same tool. Rows where the two sides do not
run the same thing (hackbench's processes against the runner's threads) are shown and not
counted.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab import api, runner
from schedlab.crosscheck import histogram_percentile
from schedlab.report import Column, Table, fmt

#: Tolerance floors (absolute, in the statistic's unit, and relative to the reference's
#: median; the larger applies) per kind of statistic. Timer latencies: ±3 µs absolute
#: (cyclictest's 1 µs bins and the runner's floor to whole µs, twice) or 25 % for p50, 40 %
#: for p99 (repeats of cyclictest alone here give p50 17–29 µs and p99 35–114 µs at idle);
#: hackbench times: 25 % (repeats of hackbench alone vary by 20–30 %); rt-app run times and
#: periods: 20 µs or 1 % (they follow from the file: what is left is each tool's own
#: overhead, a few µs here);
#: rt-app wake-up latencies: as a timer p50.
FLOORS: dict[str, tuple[float, float]] = {
    "timer-p50": (3.0, 0.25),
    "timer-p99": (3.0, 0.40),
    "hackbench": (0.0, 0.25),
    "rtapp-run": (20.0, 0.01),
    "rtapp-period": (20.0, 0.01),
    "rtapp-wu_lat": (3.0, 0.25),
}


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


@dataclass(frozen=True)
class Check:
    """One statistic measured by the tool and by the runner, ``reps`` times each."""

    check: str
    case: str
    statistic: str
    unit: str
    kind: str
    tool: tuple[float, ...]
    ours: tuple[float, ...]
    #: Why the row is not counted as agreement or disagreement ("" if it is).
    uncounted: str = ""

    @property
    def tool_median(self) -> float:
        return median(self.tool)

    @property
    def ours_median(self) -> float:
        return median(self.ours)

    @property
    def tolerance(self) -> float:
        absolute, relative = FLOORS[self.kind]
        spread = max(self.tool) - min(self.tool)
        return max(spread, absolute, relative * abs(self.tool_median))

    @property
    def difference(self) -> float:
        return self.ours_median - self.tool_median

    @property
    def agrees(self) -> bool:
        return abs(self.difference) <= self.tolerance


def checks_table(checks: Sequence[Check], table_id: str, caption: str) -> Table:
    rows = []
    for c in checks:
        verdict = ("shown, not counted: " + c.uncounted if c.uncounted
                   else "agrees" if c.agrees else "differs")
        rows.append([c.case, f"{c.statistic} ({c.unit})",
                     ", ".join(fmt(v, "num", 1 if c.unit != "s" else 3) for v in c.tool),
                     ", ".join(fmt(v, "num", 1 if c.unit != "s" else 3) for v in c.ours),
                     c.tool_median, c.ours_median, c.difference, c.tolerance, verdict])
    return Table(
        columns=[Column("case"), Column("statistic"), Column("tool, each repeat"),
                 Column("runner, each repeat"), Column("tool median", "num"),
                 Column("runner median", "num"), Column("runner − tool", "num"),
                 Column("tolerance", "num"), Column("")],
        rows=rows, id=table_id, caption=caption)


def tally(checks: Sequence[Check]) -> tuple[int, int]:
    """(agreeing, counted) over the rows that count."""
    counted = [c for c in checks if not c.uncounted]
    return sum(c.agrees for c in counted), len(counted)


# --------------------------------------------------------------------------------------
# What may run here
# --------------------------------------------------------------------------------------


def missing(*tools: str) -> str:
    """Why the cross-check cannot run here ("" if it can): root for SCHED_FIFO and the
    tools on PATH."""
    if os.geteuid() != 0:
        return "not root: the cross-checks run SCHED_FIFO threads"
    absent = [t for t in tools if shutil.which(t) is None]
    if absent:
        return (f"{', '.join(absent)} not installed (Debian packages rt-tests, rt-app; "
                "`make develop` installs them where apt-get may)")
    return ""


def _run(argv: Sequence[str], timeout_s: float, cwd: str | None = None) -> str:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                       check=False, cwd=cwd)
    if p.returncode != 0:
        last = (p.stderr or p.stdout).strip().splitlines()
        raise RuntimeError(f"{argv[0]} exited with status {p.returncode}: "
                           f"{last[-1] if last else 'no message'}")
    return p.stdout


def host_run(text: str) -> Any:
    """The runner on ``text`` (a spec), as ``schedlab host run`` runs it."""
    return runner.execute_on_host(api.load_spec(text))


@contextlib.contextmanager
def hackbench_load(groups: int = 10, loops: int = 1000) -> Iterator[None]:
    """rt-tests' ``hackbench -g groups -l loops`` run again and again while the block
    runs (a shell loop in a session of its own, ended by its id afterwards)."""
    exe = shutil.which("hackbench")
    if exe is None:
        raise RuntimeError("hackbench is not installed")
    p = subprocess.Popen(["sh", "-c", f"while :; do {exe} -g {groups} -l {loops} "
                          ">/dev/null 2>&1; done"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)  # the first round is forked and kicked off
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


# --------------------------------------------------------------------------------------
# Timer wake-up latency: cyclictest
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimerSetup:
    """What both sides run: one SCHED_FIFO thread, its interval, priority, CPU, cycles."""

    interval_us: int = 1000
    priority: int = 95
    cpu: int = 1
    cycles: int = 1500
    reps: int = 3

    def cyclictest_argv(self, exe: str, out: Path) -> list[str]:
        return [exe, "-t", "1", "-p", str(self.priority), "-i", str(self.interval_us),
                "-a", str(self.cpu), "-l", str(self.cycles), "--laptop", "-q", "-h", "10000",
                f"--json={out}"]

    def spec(self) -> str:
        text = api.generate_text("cyclictest", [
            ("threads", "1"), ("interval_us", str(self.interval_us)),
            ("priority", str(self.priority)), ("loops", str(self.cycles)),
            ("policy", "fifo")])

        def pin(spec: dict[str, Any]) -> None:
            spec["tasks"]["cyclic0"]["cpus"] = [self.cpu]

        return api.edit_spec(text, pin)


def cyclictest_percentiles(doc: Mapping[str, Any]) -> tuple[float, float]:
    """p50 and p99 (µs) of thread 0 of cyclictest's ``--json`` summary."""
    t = doc["thread"]["0"]
    hist = {int(k): int(v) for k, v in t["histogram"].items()}
    cycles = int(t["cycles"])
    return (float(histogram_percentile(hist, 50, cycles)),
            float(histogram_percentile(hist, 99, cycles)))


def run_cyclictest(setup: TimerSetup) -> tuple[float, float]:
    exe = shutil.which("cyclictest")
    if exe is None:
        raise RuntimeError("cyclictest is not installed")
    with tempfile.TemporaryDirectory(prefix="schedlab-hostcheck-") as d:
        out = Path(d) / "cyclictest.json"
        _run(setup.cyclictest_argv(exe, out), 30 + 3 * setup.cycles * setup.interval_us / 1e6)
        return cyclictest_percentiles(json.loads(out.read_text(encoding="utf-8")))


def runner_percentiles(result: Any) -> tuple[float, float]:
    """p50 and p99 (µs) of the runner's timer-latency headline, each floored to a whole
    µs as cyclictest's histogram bins are."""
    st = result.json["summary"]["headline"]["stats_ns"]
    return float(st["p50"] // 1000), float(st["p99"] // 1000)


def timer_checks(setup: TimerSetup, loads: Sequence[str] = ("idle", "hackbench"),
                 tool: Callable[[TimerSetup], tuple[float, float]] = run_cyclictest,
                 ours: Callable[[TimerSetup], tuple[float, float]] | None = None
                 ) -> list[Check]:
    """p50 and p99 by cyclictest and by the runner, at idle and under the hackbench load,
    repeats alternating which runs first."""
    spec = setup.spec()

    def by_runner(_: TimerSetup) -> tuple[float, float]:
        return runner_percentiles(host_run(spec))

    ours = ours or by_runner
    out = []
    for load in loads:
        t: list[tuple[float, float]] = []
        o: list[tuple[float, float]] = []
        with hackbench_load() if load == "hackbench" else contextlib.nullcontext():
            for r in range(setup.reps):
                if r % 2:
                    o.append(ours(setup))
                    t.append(tool(setup))
                else:
                    t.append(tool(setup))
                    o.append(ours(setup))
        case = f"SCHED_FIFO {setup.priority}, CPU {setup.cpu}, {load}"
        for i, stat in enumerate(("p50", "p99")):
            out.append(Check("timer", case, stat, "µs", f"timer-{stat}",
                             tuple(x[i] for x in t), tuple(x[i] for x in o)))
    return out


# --------------------------------------------------------------------------------------
# hackbench
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HackbenchCase:
    groups: int = 10
    loops: int = 100
    mode: str = "pipe"
    tasks: str = "thread"

    @property
    def name(self) -> str:
        return f"-g {self.groups} -l {self.loops}, {self.mode}s, {self.tasks}es" \
            if self.tasks == "process" else \
            f"-g {self.groups} -l {self.loops}, {self.mode}s, threads"

    def argv(self, exe: str) -> list[str]:
        return [exe, "-g", str(self.groups), "-l", str(self.loops),
                *(["-p"] if self.mode == "pipe" else []),
                *(["-T"] if self.tasks == "thread" else [])]

    def spec(self) -> str:
        return api.generate_text("hackbench", [
            ("groups", str(self.groups)), ("loops", str(self.loops)), ("mode", self.mode),
            ("tasks", self.tasks)])


HACKBENCH_TIME = re.compile(r"^Time:\s*([0-9.]+)\s*$", re.MULTILINE)


def parse_hackbench(stdout: str) -> float:
    """The seconds of hackbench's ``Time:`` line."""
    m = HACKBENCH_TIME.search(stdout)
    if m is None:
        raise RuntimeError("hackbench printed no Time: line")
    return float(m.group(1))


def run_hackbench(case: HackbenchCase) -> float:
    exe = shutil.which("hackbench")
    if exe is None:
        raise RuntimeError("hackbench is not installed")
    return parse_hackbench(_run(case.argv(exe), 120))


def runner_hackbench(case: HackbenchCase, spec: str | None = None) -> float:
    from schedlab.seeds.hackbench000 import hackbench_seconds

    s = hackbench_seconds(host_run(spec or case.spec()))
    if s is None:
        raise RuntimeError("the runner's hackbench has no time (a task did not exit)")
    return s


HACKBENCH_CASES = (HackbenchCase(mode="pipe", tasks="thread"),
                   HackbenchCase(mode="socket", tasks="thread"),
                   HackbenchCase(mode="pipe", tasks="process"),
                   HackbenchCase(mode="socket", tasks="process"))


def hackbench_checks(cases: Sequence[HackbenchCase] = HACKBENCH_CASES, reps: int = 3
                     ) -> list[Check]:
    out = []
    for case in cases:
        spec = case.spec()
        t: list[float] = []
        o: list[float] = []
        for r in range(reps):
            if r % 2:
                o.append(runner_hackbench(case, spec))
                t.append(run_hackbench(case))
            else:
                t.append(run_hackbench(case))
                o.append(runner_hackbench(case, spec))
        note = ("" if case.tasks == "thread" else
                "hackbench forks processes; the runner runs threads of one process")
        out.append(Check("hackbench", case.name, "time", "s", "hackbench", tuple(t),
                         tuple(o), uncounted=note))
    return out


# --------------------------------------------------------------------------------------
# rt-app
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RtappPhase:
    name: str
    loops: int
    runtime_us: int
    period_us: int


@dataclass(frozen=True)
class RtappTask:
    name: str
    policy: str
    priority: int
    phases: tuple[RtappPhase, ...]


#: Two SCHED_FIFO tasks on one CPU: one in two phases, and a lower-priority one beside it
#: whose wake-ups wait whenever the first runs (both above every SCHED_OTHER task of the
#: machine, so what they show is the two tools and the kernel, not the machine's other
#: load).
RTAPP_TASKS = (
    RtappTask("hi", "SCHED_FIFO", 50, (RtappPhase("light", 60, 1000, 5000),
                                       RtappPhase("heavy", 40, 3000, 10000))),
    RtappTask("lo", "SCHED_FIFO", 40, (RtappPhase("steady", 60, 1000, 8000),)),
)


def rtapp_file(tasks: Sequence[RtappTask] = RTAPP_TASKS, cpu: int = 1,
               logdir: str = ".") -> str:
    """The rt-app file both sides run (rt-app 1.0's grammar: ``calibration`` in ns skips
    its calibration, ``log_size`` in MB, phases each with its own loop count, task loop 1;
    each task's timer is named after it: rt-app 1.0 has no per-thread ``unique`` timer)."""
    doc: dict[str, Any] = {
        "global": {"duration": -1, "calibration": 100, "default_policy": "SCHED_OTHER",
                   "logdir": logdir, "log_basename": "rtapp", "log_size": 4,
                   "lock_pages": False, "ftrace": False},
        "tasks": {},
    }
    for t in tasks:
        doc["tasks"][t.name] = {
            "policy": t.policy, "priority": t.priority, "cpus": [cpu], "loop": 1,
            "phases": {p.name: {"loop": p.loops, "runtime": p.runtime_us,
                                "timer": {"ref": f"tick_{t.name}", "period": p.period_us}}
                       for p in t.phases}}
    return json.dumps(doc, indent=2)


#: rt-app 1.0's log columns.
RTAPP_COLUMNS = ("idx", "perf", "run", "period", "start", "end", "rel_st", "slack",
                 "c_duration", "c_period", "wu_lat")


def parse_rtapp_log(text: str) -> list[dict[str, int]]:
    """The rows of an rt-app log file (µs)."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        values = line.split()
        if len(values) != len(RTAPP_COLUMNS):
            raise ValueError(f"rt-app log line with {len(values)} columns: {line!r}")
        rows.append(dict(zip(RTAPP_COLUMNS, (int(v) for v in values), strict=True)))
    return rows


#: Per task and phase: the medians of run, period and wake-up latency (µs).
PhaseStats = dict[tuple[str, str], dict[str, float]]


def _phase_medians(tasks: Sequence[RtappTask],
                   rows: Mapping[str, Sequence[Mapping[str, float]]]) -> PhaseStats:
    """Split each task's loop rows in phase order and take the medians. The first row of
    each phase is left out: it begins with the phase change, not with a timer wake-up of
    the phase's own period."""
    out: PhaseStats = {}
    for t in tasks:
        r = list(rows[t.name])
        at = 0
        for p in t.phases:
            mine = r[at:at + p.loops][1:]
            at += p.loops
            if not mine:
                raise RuntimeError(f"{t.name}: fewer loops logged than phase {p.name} has")
            out[(t.name, p.name)] = {k: median([x[k] for x in mine])
                                     for k in ("run", "period", "wu_lat")}
    return out


def run_rtapp(tasks: Sequence[RtappTask] = RTAPP_TASKS, cpu: int = 1) -> PhaseStats:
    """Debian's rt-app on :func:`rtapp_file`; medians from its logs."""
    exe = shutil.which("rt-app")
    if exe is None:
        raise RuntimeError("rt-app is not installed")
    with tempfile.TemporaryDirectory(prefix="schedlab-rtapp-") as d:
        f = Path(d) / "check.json"
        f.write_text(rtapp_file(tasks, cpu, d), encoding="utf-8")
        _run([exe, str(f)], 60, cwd=d)
        rows = {t.name: parse_rtapp_log((Path(d) / f"rtapp-{t.name}-{i}.log").read_text())
                for i, t in enumerate(tasks)}
    return _phase_medians(tasks, rows)


def runner_rows(result: Any, tasks: Sequence[RtappTask]) -> dict[str, list[dict[str, float]]]:
    """The runner's activations as rt-app's loop rows (µs): ``run`` = start → end (the
    runtime event and what follows until the timer wait), ``period`` = start → the next
    activation's start, ``wu_lat`` = release (the expiry) → start. An activation is one
    loop: the first loop's is the task's start, the others' a timer wake-up."""
    import polars as pl

    out: dict[str, list[dict[str, float]]] = {}
    by_name = {t["name"]: t["tid"] for t in result.json["tasks"]}
    df = result.samples
    for t in tasks:
        acts = (df.filter(pl.col("tid") == by_name[t.name]).sort("start_ns")
                .select("release_ns", "start_ns", "end_ns").rows())
        rows = []
        for i, (release, start, end) in enumerate(acts):
            nxt = acts[i + 1][1] if i + 1 < len(acts) else None
            rows.append({"run": (end - start) / 1000,
                         "period": (nxt - start) / 1000 if nxt is not None else math.nan,
                         "wu_lat": (start - release) / 1000})
        out[t.name] = rows
    return out


def run_runner_rtapp(tasks: Sequence[RtappTask] = RTAPP_TASKS, cpu: int = 1) -> PhaseStats:
    result = host_run(rtapp_file(tasks, cpu))
    return _phase_medians(tasks, runner_rows(result, tasks))


def rtapp_checks(tasks: Sequence[RtappTask] = RTAPP_TASKS, reps: int = 3, cpu: int = 1
                 ) -> list[Check]:
    t: list[PhaseStats] = []
    o: list[PhaseStats] = []
    for r in range(reps):
        if r % 2:
            o.append(run_runner_rtapp(tasks, cpu))
            t.append(run_rtapp(tasks, cpu))
        else:
            t.append(run_rtapp(tasks, cpu))
            o.append(run_runner_rtapp(tasks, cpu))
    out = []
    for task in tasks:
        for p in task.phases:
            key = (task.name, p.name)
            case = (f"{task.name} ({task.policy}), phase {p.name}: runtime {p.runtime_us} µs "
                    f"every {p.period_us} µs")
            for stat in ("run", "period", "wu_lat"):
                out.append(Check("rt-app", case, stat, "µs", f"rtapp-{stat}",
                                 tuple(x[key][stat] for x in t),
                                 tuple(x[key][stat] for x in o)))
    return out


@dataclass
class Crosschecks:
    """Every cross-check's rows, or why it did not run."""

    timer: list[Check] = field(default_factory=list)
    hackbench: list[Check] = field(default_factory=list)
    rtapp: list[Check] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)


def run_all(quick: bool) -> Crosschecks:
    """Every cross-check this machine allows (quick: fewer cycles and loops)."""
    out = Crosschecks()
    reps = 3
    steps: list[tuple[str, tuple[str, ...], Callable[[], list[Check]]]] = [
        ("timer", ("cyclictest", "hackbench"),
         lambda: timer_checks(TimerSetup(cycles=1000 if quick else 3000, reps=reps))),
        ("hackbench", ("hackbench",),
         lambda: hackbench_checks(HACKBENCH_CASES, reps=reps)),
        ("rtapp", ("rt-app",), lambda: rtapp_checks(reps=reps)),
    ]
    for name, tools, fn in steps:
        why = missing(*tools)
        if why:
            out.problems[name] = why
            continue
        try:
            setattr(out, name, fn())
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
            out.problems[name] = f"{type(e).__name__}: {e}"
    return out


# --------------------------------------------------------------------------------------
# The report: every host section shows that it ran here, on which kernel
# --------------------------------------------------------------------------------------

#: The kernel facts a host section shows (keys of ``run.host``), in this order.
FACT_KEYS = ("release", "preempt", "preempt_dynamic", "hz", "clocksource", "cpus",
             "sched_rt_period_us", "sched_rt_runtime_us", "timer_slack_ns", "steal_ticks",
             "model_scheduler")


def kernel_facts() -> dict[str, Any]:
    """This kernel's facts, as every host run records them."""
    from schedlab import _core

    return dict(_core.host_doctor()["kernel"])


def facts_table(facts: Mapping[str, Any], table_id: str) -> Table:
    """The kernel facts of a host section (``host``: it ran on this machine)."""
    rows = [[k, "unknown" if facts.get(k) is None else str(facts[k])] for k in FACT_KEYS]
    return Table(columns=[Column("kernel fact"), Column("value")], rows=rows, id=table_id,
                 caption="host: the kernel this section ran on")


SECTION_ID = "host-tools"
TITLE = "Host — the runner against cyclictest, hackbench and rt-app on this machine"


def section(ctx: Any) -> Any:
    """Run every cross-check here and render the tables with their tallies."""
    from schedlab.report import render
    from schedlab.report.context import SectionOutput

    facts = kernel_facts()
    checks = run_all(ctx.quick)
    setup = TimerSetup(cycles=1000 if ctx.quick else 3000)
    specs = {"host-tools-cyclictest": setup.spec(),
             "host-tools-rtapp": rtapp_file()}
    for case in HACKBENCH_CASES:
        specs[f"host-tools-hackbench-{case.mode}-{case.tasks}"] = case.spec()
    saved = [ctx.save_spec(name, text) for name, text in specs.items()]
    blocks = []
    for name, rows, what in (("timer", checks.timer, "timer wake-up latency"),
                             ("hackbench", checks.hackbench, "hackbench time"),
                             ("rtapp", checks.rtapp, "rt-app per phase")):
        agree, counted = tally(rows)
        blocks.append({
            "name": name, "problem": checks.problems.get(name, ""),
            "table": checks_table(rows, f"host-tools-{name}", f"The runner against the "
                                  f"tool: {what}") if rows else None,
            "tally": f"{agree} of {counted} counted statistics agree" if counted else ""})
    agree, counted = tally([*checks.timer, *checks.hackbench, *checks.rtapp])
    html = render("hostcheck.html.j2", facts=facts_table(facts, "host-tools-facts"),
                  blocks=blocks, total=f"{agree} of {counted}", counted=counted,
                  saved=saved, floors=FLOORS, quick=ctx.quick)
    return SectionOutput(SECTION_ID, TITLE, html)

"""The host cross-check: the real cyclictest against the simulated one under the host
profile, in one report run.

The real one is rt-tests' ``cyclictest`` (Debian package rt-tests 2.4) run at idle on this
machine: one thread, an absolute 1 ms timer, ``-l`` cycles, SCHED_FIFO at the priority the
timer probe ran at (``-p 0``, SCHED_OTHER, if the probe was refused SCHED_FIFO),
memory locked (``-m``), a histogram of 1 µs bins (``-h``) read from its ``--json``
summary. ``--laptop`` leaves ``/dev/cpu_dma_latency`` alone, as the timer probe does, so
both see the same idle states. The simulated one is the ``cyclictest`` generator with the
same interval, policy and cycles, under this host's inline profile
(:mod:`schedlab.hostprofile`).

Of the profile's numbers, ``kernel.timer_irq_ns`` is fitted: the simulated minimum equals
the timer probe's measured minimum. The simulated p50, p99 and max are predictions, and
so is everything compared with cyclictest, which the fit never saw.

The same simulated cyclictest then runs at idle and under a restarting ``hackbench 10``
under each preemption model (:func:`preemption_models`). How long a kernel span's
non-preemptible section and its raw part are, and how far apart its preemption points lie,
no probe here measures: the runs use the profile's own shapes (0) and the assumed sets of
:data:`SHAPE_SETS`, and the page says which numbers are measured, read, fitted, assumed and
predicted.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import hostprofile
from schedlab.hostcosts import TimerLatency
from schedlab.preemption import PREEMPT_LABEL, PREEMPT_MODELS, order_text
from schedlab.report import Cell, Column, Table, fmt, render

if TYPE_CHECKING:
    from schedlab.report.context import Context, SectionOutput

SECTION_ID = "host-crosscheck"
TITLE = "Host cross-check — cyclictest on this machine against the host profile"

STATS = ("min", "p50", "p99", "max")


def loops(quick: bool) -> int:
    """Cycles of both cyclictests (one per 1 ms interval: 3 s, quick 0.5 s)."""
    return 500 if quick else 3_000


@dataclass(frozen=True)
class Cyclictest:
    """What the real cyclictest measured (ns; whole µs, its histogram's resolution). Its
    ``--json`` histogram may hold a cycle or so fewer than ``cycles`` (read while the
    thread ends); those count as beyond the histogram's range, which only moves a
    percentile if it would fall there (then the summary is refused)."""

    min_ns: int
    p50_ns: int
    p99_ns: int
    max_ns: int
    cycles: int
    command: str
    version: str

    def stat(self, name: str) -> int:
        value: int = getattr(self, f"{name}_ns")
        return value


def histogram_percentile(histogram: Mapping[int, int], p: float, total: int = 0) -> int:
    """Nearest-rank percentile (the bin) of a histogram ``{bin: count}`` of ``total``
    samples (default: those in the histogram; samples it lacks count as beyond its range)."""
    total = max(total, sum(histogram.values()))
    if total <= 0:
        raise ValueError("empty histogram")
    rank = max(1, math.ceil(p * total / 100))
    seen = 0
    for b in sorted(histogram):
        seen += histogram[b]
        if seen >= rank:
            return b
    raise ValueError(f"its p{p:g} lies beyond the histogram's range")


def parse_cyclictest_json(doc: Mapping[str, Any]) -> Cyclictest:
    """Thread 0 of cyclictest's ``--json`` summary (run without ``-N``: µs)."""
    try:
        t = doc["thread"]["0"]
        hist = {int(k): int(v) for k, v in t["histogram"].items()}
        cycles = int(t["cycles"])
        us = 1_000
        return Cyclictest(
            min_ns=int(t["min"]) * us, p50_ns=histogram_percentile(hist, 50, cycles) * us,
            p99_ns=histogram_percentile(hist, 99, cycles) * us, max_ns=int(t["max"]) * us,
            cycles=int(t["cycles"]), command=str(doc.get("cmdline:", doc.get("cmdline", ""))),
            version=str(doc.get("rt_test_version:", doc.get("rt_test_version", ""))))
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"cyclictest's JSON summary lacks {e}") from None


#: ``run(argv, timeout_s) -> (returncode, output)``
RunFn = Callable[[Sequence[str], float], tuple[int, str]]


def _run(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                       check=False)
    return p.returncode, (p.stderr or p.stdout).strip()


def run_cyclictest(timer: TimerLatency, cycles: int, run: RunFn = _run,
                   which: Callable[[str], str | None] = shutil.which) -> Cyclictest | str:
    """Run the real cyclictest as the module's docstring says; what it measured, or why it
    could not run."""
    exe = which("cyclictest")
    if exe is None:
        return ("cyclictest is not installed (Debian package rt-tests; `make develop` "
                "installs it where apt-get may)")
    interval_us = max(1, timer.interval_ns // 1_000)
    prio = timer.priority if timer.policy == "fifo" else 0
    with tempfile.TemporaryDirectory(prefix="schedlab-cyclictest-") as d:
        out = Path(d) / "cyclictest.json"
        argv = [exe, "-m", "-p", str(prio), "-i", str(interval_us), "-l", str(cycles), "-q",
                "--laptop", "-h", "10000", f"--json={out}"]
        timeout_s = 10 + 3 * cycles * interval_us / 1e6
        try:
            rc, text = run(argv, timeout_s)
        except subprocess.TimeoutExpired:
            return f"cyclictest did not finish within {timeout_s:.0f} s"
        except OSError as e:
            return f"cyclictest could not be started: {e.strerror or e}"
        if rc != 0:
            last = text.splitlines()[-1] if text else "no message"
            return f"cyclictest exited with status {rc}: {last}"
        try:
            return parse_cyclictest_json(json.loads(out.read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            return f"cyclictest's JSON summary could not be read: {e}"


# --------------------------------------------------------------------------------------
# The section
# --------------------------------------------------------------------------------------


def comparison_table(real: Cyclictest | None, timer: TimerLatency,
                     simulated: Mapping[str, Any]) -> Table:
    """min/p50/p99/max: cyclictest, the timer probe, the simulation, and what each
    simulated figure is (fitted or predicted)."""
    rows = []
    for s in STATS:
        role = ("fitted: timer_irq_ns makes it the probe's min" if s == "min" else
                "predicted")
        rows.append([
            s,
            None if real is None else real.stat(s) / 1_000,
            getattr(timer, f"{s}_ns") / 1_000,
            simulated[s] / 1_000,
            Cell(role, cls="fitted" if s == "min" else ""),
        ])
    return Table(
        columns=[Column("statistic"), Column("cyclictest (µs)", "us", cls="pub"),
                 Column("timer probe (µs)", "us"), Column("simulated (µs)", "us"),
                 Column("simulated figure is")],
        rows=rows, id="host-crosscheck-table",
        caption="Timer latency at idle (wake-up − expiry)")


def _flatten(prov: Mapping[str, Any], machine: Mapping[str, Any],
             prefix: str = "") -> list[tuple[str, Any, Mapping[str, Any]]]:
    """(key, value, its provenance) for every machine key the provenance covers."""
    out: list[tuple[str, Any, Mapping[str, Any]]] = []
    for key, p in prov.items():
        value = machine.get(key) if isinstance(machine, Mapping) else None
        if isinstance(p, Mapping) and "how" not in p:
            out += _flatten(p, value if isinstance(value, Mapping) else {}, f"{prefix}{key}.")
        elif isinstance(p, Mapping):
            out.append((f"{prefix}{key}", value, p))
    return out


def _figure(p: Mapping[str, Any]) -> str:
    for k in ("median_ns", "measured_min_ns", "futex_wake_no_waiter_ns"):
        if k in p:
            return f"{k} = {p[k]:,.0f}" if isinstance(p[k], (int, float)) else ""
    return ""


def profile_table(profile: Mapping[str, Any]) -> Table:
    """Every key of the profile with its value and how it was obtained."""
    rows = []
    for key, value, p in _flatten(profile.get("provenance", {}), profile.get("machine", {})):
        shown = "(default kept)" if value is None else (
            json.dumps(value) if isinstance(value, Mapping) else value)
        source = p.get("probe") or p.get("from") or p.get("to") or ""
        detail = "; ".join(x for x in (_figure(p), str(p.get("note", ""))) if x)
        rows.append([key, shown, Cell(p.get("how", ""), cls="fitted" if p.get("how") ==
                                      "fitted" else ""), source, detail])
    return Table(columns=[Column("machine key"), Column("value"), Column("how"),
                          Column("from"), Column("detail")],
                 rows=rows, id="host-profile-table",
                 caption=f"The {profile.get('name')} profile this report ran")


# --------------------------------------------------------------------------------------
# The simulated cyclictest ± hackbench under each preemption model
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeSet:
    """One shape of every kernel span, as fractions of the span's cost
    (``machine.kernel.spans.<kind>``: the non-preemptible section at its end, the
    raw-spinlock part of that section, a ``might_sleep`` point every so much of its work,
    an explicit ``cond_resched`` every so much; 0: none)."""

    name: str
    nonpreempt: float
    raw: float
    point: float
    cond_resched: float

    @property
    def assumed(self) -> bool:
        """Whether the set is an assumption (the profile's own, all 0, is not)."""
        return any((self.nonpreempt, self.raw, self.point, self.cond_resched))

    def shape(self, cost_ns: int) -> dict[str, int]:
        """The span shape (ns) of a span costing ``cost_ns``."""
        return {"nonpreempt_ns": round(self.nonpreempt * cost_ns),
                "raw_ns": round(self.raw * cost_ns),
                "point_ns": round(self.point * cost_ns),
                "cond_resched_ns": round(self.cond_resched * cost_ns)}


#: The shape sets the models run under: the profile's own (nothing measured: every span
#: may be left only where its model always allows) and three assumptions, from long
#: non-preemptible sections and no ``cond_resched`` to short sections with both kinds of
#: points. None of them is calibrated: the table shows how the order depends on them.
SHAPE_SETS: tuple[ShapeSet, ...] = (
    ShapeSet("profile", 0, 0, 0, 0),
    ShapeSet("A", 1 / 2, 1 / 8, 1 / 4, 0),
    ShapeSet("B", 1 / 4, 1 / 16, 1 / 8, 1 / 2),
    ShapeSet("C", 1 / 16, 1 / 64, 1 / 32, 1 / 8),
)

#: The load: seed 000's ``hackbench 10``, restarted as ``while true; do hackbench 10;
#: done`` would (hackbench's default 100 loops a round), so that it forks.
LOAD_GROUPS = 10
LOAD_LOOPS = 100
LOADS = ("idle", "hackbench")
#: What the order text calls a row.
SHAPE_NOUN: tuple[str, str] = ("shape set", "shape sets")


def span_costs(machine: Mapping[str, Any]) -> dict[str, int]:
    """The CPU cost (ns) of each kind of kernel span under ``machine`` (a profile's
    machine), where it is not 0: a channel call's per-call cost, fork, wake-up, sleep
    set-up, exit."""
    channels = machine.get("channel_costs") or {}
    costs = {kind: int((channels.get(kind) or {}).get("op_cost_ns") or 0)
             for kind in ("pipe", "socket")}
    for kind, key in (("fork", "fork_ns"), ("wake", "wakeup_ns"), ("sleep", "sleep_ns"),
                      ("exit", "exit_ns")):
        costs[kind] = int(machine.get(key) or 0)
    return {k: v for k, v in costs.items() if v > 0}


def models_spec(base: str, preempt: str, shapes: ShapeSet,
                costs: Mapping[str, int]) -> str:
    """``base`` (a spec on the host profile) with ``preempt`` and the spans of ``shapes``
    over the profile's kernel (a spec's machine keys override its profile's)."""
    from schedlab import api

    kernel: dict[str, Any] = {"preempt": preempt}
    if shapes.assumed:
        kernel["spans"] = {kind: shapes.shape(cost) for kind, cost in costs.items()}

    def edit(spec: dict[str, Any]) -> None:
        spec["schedlab"]["machine"]["kernel"] = kernel

    return api.edit_spec(base, edit)


def models_spec_name(shapes: ShapeSet, load: str, preempt: str) -> str:
    return f"host-preempt-{shapes.name.lower()}-{load}-{preempt}"


#: [shape set][load][model] -> the headline's statistics (ns), or why there are none.
ModelStats = dict[str, dict[str, dict[str, Mapping[str, Any] | str]]]


@dataclass
class PreemptionModels:
    """The runs of every shape set, load and model, as tables and computed text."""

    stats: ModelStats
    latency: Table
    shapes: Table
    text: str
    specs: list[str]
    cycles: int


def _stat_cells(st: Mapping[str, Any] | str | None) -> list[Any]:
    if isinstance(st, str):
        short = st if len(st) < 60 else st[:57] + "…"
        return [Cell(f"failed: {short}", kind="text", cls="error", title=st), None, None, None]
    if st is None:
        return [None] * len(STATS)
    return [st[s] / 1_000 for s in STATS]


def latency_table(stats: ModelStats) -> Table:
    """min/p50/p99/max (µs) per shape set and model, at idle and under the load."""
    rows = []
    for name, by_load in stats.items():
        for m in PREEMPT_MODELS:
            rows.append([name, f"{m} ({PREEMPT_LABEL[m]})",
                         *[c for load in LOADS for c in _stat_cells(by_load[load].get(m))]])
    return Table(
        columns=[Column("span shapes"), Column("preemption model"),
                 *[Column(s, "us") for _ in LOADS for s in STATS]],
        groups=[("", 2, ""), *[(f"{load} (µs)", len(STATS), "") for load in LOADS]],
        rows=rows, id="host-preempt-table",
        caption="Simulated cyclictest timer latency by preemption model and span shapes, "
                f"at idle and under hackbench {LOAD_GROUPS} (predicted)")


def shapes_table(costs: Mapping[str, int]) -> Table:
    """Each shape set: its fractions, whether it is assumed, and what it gives each kind
    of span the profile charges (longest first)."""
    kinds = sorted(costs, key=lambda k: -costs[k])
    rows = []
    for s in SHAPE_SETS:
        how = "assumed" if s.assumed else "the profile's (no shape is measured)"
        ns = [f"{sh['nonpreempt_ns']:,} / {sh['raw_ns']:,} / {sh['point_ns']:,} / "
              f"{sh['cond_resched_ns']:,}" for sh in (s.shape(costs[k]) for k in kinds)]
        rows.append([s.name, Cell(how, cls="assumed" if s.assumed else ""),
                     *[Cell(f, kind="num", decimals=4) for f in (
                         s.nonpreempt, s.raw, s.point, s.cond_resched)], *ns])
    return Table(
        columns=[Column("span shapes"), Column("how"), Column("non-preemptible", "num"),
                 Column("raw (rt)", "num"), Column("point every", "num"),
                 Column("cond_resched every", "num"),
                 *[Column(f"{k} ({costs[k]:,} ns): ns") for k in kinds]],
        groups=[("", 2, ""), ("fraction of each span's cost", 4, ""),
                ("giving (non-preemptible / raw / point / cond_resched)", len(kinds), "")],
        rows=rows, id="host-preempt-shapes",
        caption="Kernel span shapes the models ran under")


def _max_us(st: Mapping[str, Any] | str | None) -> float | None:
    return st["max"] / 1_000 if isinstance(st, Mapping) else None


def maxima(stats: ModelStats, load: str) -> dict[str, dict[str, float | None]]:
    """[shape set][model] -> the maximum (µs) under ``load``, None where a run failed."""
    return {name: {m: _max_us(by_load[load].get(m)) for m in PREEMPT_MODELS}
            for name, by_load in stats.items()}


def models_text(stats: ModelStats) -> str:
    """Where the maxima under the load fall strictly in the order none > voluntary > full
    > rt, per shape set, and what the idle runs show."""
    loaded = order_text(maxima(stats, "hackbench"), noun=SHAPE_NOUN)
    idle = maxima(stats, "idle")
    values = {v for by in idle.values() for v in by.values()}
    if len(values) == 1 and None not in values:
        [v] = values
        at_idle = (f"At idle every model and shape set gives the same maximum ({fmt(v, 'us')} "
                   "µs): with no other task, no kernel span of another task stands between "
                   "the timer and its thread.")
    else:
        at_idle = "At idle: " + order_text(idle, noun=SHAPE_NOUN)
    return f"Under hackbench {LOAD_GROUPS}: {loaded} {at_idle}"


def preemption_models(ctx: Context, profile: Mapping[str, Any],
                      timer: TimerLatency) -> PreemptionModels:
    """The simulated cyclictest, at idle and under a hackbench load, under each preemption
    model and each shape set, with the host profile's other numbers."""
    from schedlab.report.context import RunRequest

    cycles = loops(ctx.quick)
    cpus = hostprofile.host_cpus()
    costs = span_costs(profile.get("machine") or {})
    bases = {load: hostprofile.with_profile(hostprofile.cyclictest_spec(
        timer, cycles, cpus, *((LOAD_GROUPS, LOAD_LOOPS) if load != "idle" else ())),
        profile) for load in LOADS}
    keys = [(s, load, m) for s in SHAPE_SETS for load in LOADS for m in PREEMPT_MODELS]
    reqs = [RunRequest(models_spec_name(s, load, m), models_spec(bases[load], m, s, costs),
                       hostprofile.FIT_SCHEDULER, samples=False,
                       label=f"cyclictest {load} / {m} / shapes {s.name}")
            for s, load, m in keys]
    stats: ModelStats = {s.name: {load: {} for load in LOADS} for s in SHAPE_SETS}
    for (s, load, m), o in zip(keys, ctx.run(reqs, "host cross-check: preemption models"),
                               strict=True):
        stats[s.name][load][m] = (hostprofile.headline_stats(o.result.json)
                                  if o.ok and o.result is not None
                                  else o.error or "no result")
    return PreemptionModels(stats=stats, latency=latency_table(stats),
                            shapes=shapes_table(costs), text=models_text(stats),
                            specs=[r.spec_name for r in reqs], cycles=cycles)


def section(ctx: Context) -> SectionOutput:
    """Measure this host, build its profile, run cyclictest here and in the simulator."""
    from schedlab.report.context import RunRequest, SectionOutput

    costs = ctx.host_costs()
    values: dict[str, Any] = {"quick": ctx.quick, "problem": ""}
    timer = costs.timer
    if timer is None:
        values["problem"] = "this report's host measurement has no timer probe"
        return SectionOutput(SECTION_ID, TITLE, render("crosscheck.html.j2", **values))
    profile = hostprofile.profile(costs)
    cycles = loops(ctx.quick)
    cpus = hostprofile.host_cpus()
    text = hostprofile.with_profile(hostprofile.cyclictest_spec(timer, cycles, cpus), profile)
    [outcome] = ctx.run([RunRequest("host-cyclictest", text, hostprofile.FIT_SCHEDULER)],
                        "host cross-check: simulated cyclictest")
    if outcome.result is None:
        values["problem"] = f"the simulated cyclictest failed: {outcome.error}"
        return SectionOutput(SECTION_ID, TITLE, render("crosscheck.html.j2", **values))
    simulated = hostprofile.headline_stats(outcome.result.json)
    real = run_cyclictest(timer, cycles)  # a module global: tests replace it
    values.update(
        timer=timer, cycles=cycles, cpus=cpus, scheduler=hostprofile.FIT_SCHEDULER,
        real=real if isinstance(real, Cyclictest) else None,
        real_problem=real if isinstance(real, str) else "",
        comparison=comparison_table(real if isinstance(real, Cyclictest) else None, timer,
                                    simulated),
        profile=profile_table(profile), fitted_irq=profile["machine"]["kernel"].get(
            "timer_irq_ns"), models=preemption_models(ctx, profile, timer),
        load_groups=LOAD_GROUPS, load_loops=LOAD_LOOPS)
    return SectionOutput(SECTION_ID, TITLE, render("crosscheck.html.j2", **values))

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
from schedlab.report import Cell, Column, Table, render

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


def preemption_models(ctx: Context, profile: Mapping[str, Any]) -> Table | None:
    """The table of the simulated cyclictest, idle and under a hackbench load, under each
    preemption model with the host profile's other numbers; this section shows none, and
    the template's ``preemption_models`` block renders the table when one is given."""
    return None


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
            "timer_irq_ns"), preemption_models=preemption_models(ctx, profile))
    return SectionOutput(SECTION_ID, TITLE, render("crosscheck.html.j2", **values))

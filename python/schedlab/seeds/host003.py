"""Seed 003's Table 1 on this machine's kernel (``schedlab reproduce --host``).

The eight settings of Table 1 with real cgroups: the parent ``/cg`` at 950000 µs per
1 s and ``cg0`` (cpuset 0), ``cg1`` and ``cgA`` (cpuset 1) with each setting's
``cpu.rt_period_us`` and ``cpu.rt_runtime_us``, made by the host runner in the v1 cpu,
cpuset and cpuacct hierarchies through its restore journal and removed after each run.
The specs are the simulated section's (:mod:`schedlab.seeds.seed003_model`: its
``spec`` and ``reference_spec``), all loops at one priority.

- **T**: a SCHED_FIFO busy loop in each group; each loop's CPU time over the whole run
  (a whole number of periods) × 100 / the run's length — what top shows in Irix mode
  over those periods, without top's tick rounding.
- **C**: loops in cg0 and cg1, a CoreMark-like task in cgA (a mark, a fixed number of
  1 ms bursts of work, a mark); C = the reference's time for the same work (alone on
  CPU 1 in the root group) × 100 / its time here.
- **Timeline**: who runs on CPU 1 in 50 ms bins over the second period of No. 1's T run,
  from a trace the runner captures through tracefs (``schedlab host run --trace``).

Today's kernels do not lend RT runtime between CPUs (``RT_RUNTIME_SHARE`` is off by
default since Linux 5.10), so a group's share is bounded by its runtime / period; the
table shows that bound beside the measured shares and the seed's published figures
(measured on 2.6.35, which lent).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import api, hostcheck, runner
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import SectionOutput
from schedlab.seeds import seed003_model as m
from schedlab.seeds.seed003 import BIN_MS, TIMELINE_SETTING, timeline_bins

if TYPE_CHECKING:
    from schedlab.report.context import Context

SECTION_ID = "host-seed003"
TITLE = "Host — seed 003's cgroup RT bandwidth settings on this machine's kernel"

ARRANGEMENT = "equal"


@dataclass(frozen=True)
class HostSizes:
    """How long the host runs last."""

    #: Seconds of each T run (a whole number of every setting's period).
    t_seconds: int
    #: CoreMark's work, in 1 ms bursts (several periods of work at every setting, so that
    #: throttling shows), and its delay after the loops start (s).
    iterations: int
    delay_s: float


def host_sizes(quick: bool) -> HostSizes:
    return HostSizes(t_seconds=2, iterations=500, delay_s=1.0) if quick else \
        HostSizes(t_seconds=5, iterations=2000, delay_s=1.0)


def c_seconds(setting: m.Setting, h: HostSizes) -> int:
    """How long a C run lasts (whole seconds, rt-app's unit): the delay, the work at cgA's
    share, and two periods more."""
    work_s = h.iterations * m.ITERATION_US / 1e6 / setting.share("cgA")
    return math.ceil(h.delay_s + work_s + 2 * setting.period_us / 1e6)


def with_duration(text: str, seconds: int) -> str:
    """``text`` with ``global.duration`` = ``seconds`` (the saved spec is the one run)."""

    def edit(spec: dict[str, Any]) -> None:
        spec.setdefault("global", {})["duration"] = seconds

    return api.edit_spec(text, edit)


def _model_sizes(h: HostSizes) -> m.Sizes:
    """The model's sizes for the spec builders: CoreMark's iterations and its delay; the
    T runs are cut by the runner's duration instead."""
    return m.Sizes(settings=tuple(m.SETTINGS), priorities=(ARRANGEMENT,), warmup_s=h.delay_s,
                   iterations=h.iterations, windows=1)


def why_not(checks: list[Mapping[str, Any]] | None = None) -> str:
    """Why the section cannot run here ("" if it can)."""
    if os.geteuid() != 0:
        return "not root: making cgroups and running SCHED_FIFO loops need root"
    if checks is None:
        from schedlab import _core

        checks = list(_core.host_doctor()["checks"])
    rt = [c for c in checks if c["area"] == "cgroup v1" and c["name"] == "RT group scheduling"]
    if not rt or not rt[0]["ok"]:
        return ("this kernel has no RT group scheduling in a cgroup v1 cpu hierarchy "
                "(cpu.rt_runtime_us); cgroup v2 has no RT bandwidth")
    return ""


@dataclass
class HostMeasured:
    t: dict[str, float] = field(default_factory=dict)
    c: float | None = None
    errors: list[str] = field(default_factory=list)


def t_shares(result: Any) -> dict[str, float]:
    """Each group's loop's CPU time × 100 / the run's length."""
    span = result.json["run"]["sim_ns"]
    return {t["name"].removeprefix("loop_"): 100.0 * t["cpu_ns"] / span
            for t in result.json["tasks"] if t["name"].startswith("loop_")}


def marks_of(result: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in (result.json["summary"].get("marks") or {}).items()}


def host_timeline(trace: Any, start_ns: int, length_ns: int) -> list[dict[str, int]]:
    """CPU 1 in bins from a host trace: the loops by group, ``idle``, and everything else
    on the machine as ``other``."""
    sw = trace.filter(trace["event"] == "sched_switch")
    names: dict[int, str] = {0: "idle"}
    for pid, comm in zip(sw["pid"].to_list(), sw["comm"].to_list(), strict=True):
        names.setdefault(int(pid), comm.removeprefix("loop_") if comm.startswith("loop_")
                         else "other")
    for pid in sw["next_pid"].to_list():
        names.setdefault(int(pid), "other")
    return timeline_bins(trace, m.GROUP_CPU["cgA"], start_ns, length_ns, BIN_MS * 1_000_000,
                         names)


def run_all(ctx: Context, h: HostSizes) -> tuple[dict[int, HostMeasured],
                                                  list[dict[str, int]] | None, str]:
    """Every setting's T and C runs, the reference, and No. 1's timeline."""
    sizes = _model_sizes(h)
    prio = m.PRIORITIES[ARRANGEMENT]
    ref_text = m.reference_spec(sizes)
    ctx.save_spec("host-seed003-coremark-alone", ref_text)
    ref_note = ""
    try:
        ref_s = m.coremark_seconds(marks_of(runner.execute_on_host(api.load_spec(ref_text))))
    except Exception as e:  # the C column says so
        ref_s, ref_note = None, f"{type(e).__name__}: {e}"
    out: dict[int, HostMeasured] = {}
    bins = None
    for no, setting in m.SETTINGS.items():
        got = out.setdefault(no, HostMeasured())
        t_text = with_duration(m.spec(setting, "T", prio, sizes), h.t_seconds)
        c_text = with_duration(m.spec(setting, "C", prio, sizes), c_seconds(setting, h))
        ctx.save_spec(f"host-seed003-no{no}-T", t_text)
        ctx.save_spec(f"host-seed003-no{no}-C", c_text)
        trace = ctx.trace_path(f"host-seed003-no{no}-T") if no == TIMELINE_SETTING else None
        try:
            r = runner.execute_on_host(api.load_spec(t_text), trace=trace)
            got.t = t_shares(r)
            if trace is not None:
                period_ns = setting.period_us * 1_000
                bins = host_timeline(api.parse_trace(trace), period_ns, period_ns)
        except Exception as e:
            got.errors.append(f"T: {type(e).__name__}: {e}")
        try:
            r = runner.execute_on_host(api.load_spec(c_text))
            got.c = m.c_percent(m.coremark_seconds(marks_of(r)), ref_s)
        except Exception as e:
            got.errors.append(f"C: {type(e).__name__}: {e}")
    return out, bins, ref_note


def table2(results: Mapping[int, HostMeasured]) -> tuple[Table, m.Tally]:
    """Table 2 measured here beside the bound (runtime / period) and the seed's figures;
    the tally counts T within one point of the bound."""
    tally = m.Tally()
    rows = []
    for no, s in m.SETTINGS.items():
        got = results.get(no, HostMeasured())
        pub = m.PUBLISHED[no]
        cells: list[Any] = [no]
        for g in m.GROUPS:
            bound = 100.0 * s.share(g)
            v = got.t.get(g)
            cells += [v, bound, Cell(tally.add(v, bound, 1), kind="text"), pub.t[g]]
        cells += [got.c, pub.c,
                  Cell("; ".join(got.errors), kind="text", cls="error" if got.errors else "")]
        rows.append(cells)
    cols = [Column("No.", "int")]
    for g in m.GROUPS:
        cols += [Column(f"T {g} %", "num"), Column(f"{g} runtime/period %", "num"),
                 Column("T vs bound"), Column(f"T {g} % (seed)", "num", cls="pub")]
    cols += [Column("C cgA %", "num"), Column("C cgA % (seed)", "num", cls="pub"),
             Column("problems")]
    return Table(id="host-seed003-table2", columns=cols, rows=rows,
                 caption="Table 2 on this machine: T per group and C of cgA (%)"), tally


def timeline_table(bins: list[dict[str, int]]) -> Table:
    who = ("cg1", "cgA", "other", "idle")
    rows = [[k * BIN_MS, *[b.get(w, 0) / 1e6 for w in who]] for k, b in enumerate(bins)]
    return Table(id="host-seed003-timeline",
                 columns=[Column("from ms", "int"), *[Column(f"{w} ms", "num") for w in who]],
                 rows=rows, caption=f"CPU 1 in {BIN_MS} ms bins over the second period of "
                                    f"No. {TIMELINE_SETTING} (host)")


def section(ctx: Context) -> SectionOutput:
    facts = hostcheck.kernel_facts()
    values: dict[str, Any] = {"facts": hostcheck.facts_table(facts, "host-seed003-facts"),
                              "problem": why_not()}
    if values["problem"]:
        return SectionOutput(SECTION_ID, TITLE, render("host003.html.j2", **values))
    h = host_sizes(ctx.quick)
    results, bins, ref_note = run_all(ctx, h)
    t2, tally = table2(results)
    values.update(table=t2, tally=tally.text(), sizes=h, ref_note=ref_note,
                  timeline=timeline_table(bins) if bins else None,
                  trace=f"traces/host-seed003-no{TIMELINE_SETTING}-T.txt")
    return SectionOutput(SECTION_ID, TITLE, render("host003.html.j2", **values))

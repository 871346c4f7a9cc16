"""The seed-003 section of the report: cgroup RT bandwidth on the seed's two-core board
(:mod:`.seed003_model` has the experiments and the measuring rules, :mod:`.seed003_board`
the board's profile and its one fitted value).

Every setting of Table 1 runs under each tried RT priority arrangement with runtime
borrowing on (Linux 2.6.35, the seed's kernel) and off (Linux 5.10 and later): T as top
would read it, C as CoreMark would count it, beside Table 2, with the differences
counted. A timeline shows who runs on core 1 within one period. Every number in the text
is computed from the runs; the seed's figures come from the data file.

The runs are declared as two sweeps (:func:`sweeps`): every setting's C and T runs, and
the T runs whose trace the timeline reads. The report keeps their datasets under
``sweeps/``, so the section can be rebuilt from them without running again
(``schedlab reproduce --from-results``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import api, plots
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import RunOutcome, runs_table
from schedlab.seeds import seed003_board as board
from schedlab.seeds import seed003_model as m
from schedlab.sweep import Sweep

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from schedlab.report.context import Context, Figure, SectionOutput

SECTION_ID = "seed003"
TITLE = "Seed 003 — cgroup RT bandwidth on a two-core embedded board (Mitsubishi Electric, 2012)"

#: The setting whose core-1 timeline is drawn, and the width of its bins (ms).
TIMELINE_SETTING = 1
BIN_MS = 50
REFERENCE_SPEC = "seed003-coremark-alone"


def _slug(arrangement: str) -> str:
    return arrangement.replace(" ", "-")


def spec_name(no: int, arrangement: str, experiment: str) -> str:
    return f"seed003-no{no}-{_slug(arrangement)}-{experiment}"


@dataclass(frozen=True)
class Key:
    """One simulated cell of the study: a setting, an arrangement, a borrowing mode."""

    no: int
    arrangement: str
    borrowing: str


@dataclass
class Measured:
    """What the runs of one :class:`Key` gave."""

    t: dict[str, float | None] = field(default_factory=dict)
    c: float | None = None
    errors: list[str] = field(default_factory=list)


#: Settings whose period is this long get their last T run traced: their per-period shares
#: and the timeline are read from those traces (a few KB each).
TRACED_PERIOD_US = 1_000_000

#: What each run keeps: the result objects the section and the report's manifest read.
METRICS = ("summary.marks", "summary.makespan_ns", "summary.headline", "summary.totals",
           "summary.wakeup_latency_ns", "run.events", "run.sim_ns", "run.decisions",
           "run.work_units", "run.stopped", "tasks.tid", "tasks.cpu_ns")
SHARE_AXIS = f"params.{m.SHARE_PARAM}"


def traced(no: int) -> bool:
    return m.SETTINGS[no].period_us == TRACED_PERIOD_US


def _ns(ns: int) -> str:
    return f"{ns}ns"


def sweeps(size: m.Sizes) -> list[Sweep]:
    """The section's runs as two sweeps over the same specs (``base.specs``): the reference
    run, and per setting and priority arrangement its C run and its T runs (one per top
    refresh, cut at :func:`seed003_model.top_cuts_ns`) under both borrowing modes; and
    the T runs to the last refresh of the 1-second settings, traced."""
    specs = {REFERENCE_SPEC: m.reference_spec(size)}
    c_names, t_names, traced_t = [], [], []
    for no in size.settings:
        setting = m.SETTINGS[no]
        for arr in size.priorities:
            prio = m.PRIORITIES[arr]
            specs[spec_name(no, arr, "C")] = m.spec(setting, "C", prio, size)
            specs[spec_name(no, arr, "T")] = m.spec(setting, "T", prio, size)
            c_names.append(spec_name(no, arr, "C"))
            t_names.append(spec_name(no, arr, "T"))
            if traced(no):
                traced_t.append(spec_name(no, arr, "T"))
    cuts = [_ns(c) for c in m.top_cuts_ns(size)]
    modes = list(m.BORROWING.values())
    base = {"specs": specs, "scheduler": m.POLICY, "seed": 1}
    ref = {"spec": [REFERENCE_SPEC], **{f"params.{k}": [v] for k, v in m.REFERENCE_PARAMS}}
    runs = Sweep(name="seed003", base=base, metrics=METRICS, grids=[
        ref,
        {"spec": c_names, SHARE_AXIS: modes},
        {"spec": t_names, SHARE_AXIS: modes, "duration": cuts},
    ])
    if not traced_t:
        return [runs]
    runs.filters = [_exclude({"spec": tuple(traced_t), "duration": (cuts[-1],)})]
    traces = Sweep(name="seed003-traced", base=base, metrics=METRICS, trace=True, grids=[
        {"spec": traced_t, SHARE_AXIS: modes, "duration": [cuts[-1]]}])
    return [runs, traces]


def _exclude(match: Mapping[str, tuple[Any, ...]]) -> Any:
    from schedlab.sweep import Filter

    return Filter("exclude", tuple(match.items()))


def by_cell(runs: Sequence[RunOutcome]) -> dict[tuple[str, str, int | None], RunOutcome]:
    """Each run by (spec, borrowing tunable, duration)."""
    return {(r.request.spec_name, dict(r.request.params).get(m.SHARE_PARAM, ""),
             r.request.duration_ns): r for r in runs}


def plan_of(size: m.Sizes) -> dict[Key, dict[str, Any]]:
    """Per key, where its runs are in :func:`by_cell`: its C run, and its T runs in the
    order of the top refreshes."""
    cuts = m.top_cuts_ns(size)
    out: dict[Key, dict[str, Any]] = {}
    for no in size.settings:
        for arr in size.priorities:
            for b, share in m.BORROWING.items():
                out[Key(no, arr, b)] = {
                    "C": (spec_name(no, arr, "C"), share, None),
                    "T": [(spec_name(no, arr, "T"), share, cut) for cut in cuts]}
    return out


def _cpu_ns(run: RunOutcome) -> dict[str, int]:
    res = run.result
    if res is None:
        return {}
    return {t["name"]: int(t["cpu_ns"]) for t in res.json["tasks"]}


def _marks(run: RunOutcome) -> dict[str, int]:
    res = run.result
    return dict(res.summary.get("marks") or {}) if res is not None else {}


def measure(size: m.Sizes, ref: RunOutcome, plan: Mapping[Key, Mapping[str, Any]],
            outcomes: Mapping[Any, RunOutcome]) -> dict[Key, Measured]:
    """T and C of every key from its runs (``outcomes`` by :func:`by_cell`)."""
    ref_s = m.coremark_seconds(_marks(ref))
    cuts = m.top_cuts_ns(size)
    out: dict[Key, Measured] = {}
    for key, reqs in plan.items():
        meas = Measured()
        c_run = outcomes[reqs["C"]]
        if not c_run.ok:
            meas.errors.append(f"C: {c_run.error}")
        meas.c = m.c_percent(m.coremark_seconds(_marks(c_run)), ref_s)
        t_runs = [outcomes[r] for r in reqs["T"]]
        failed = [r for r in t_runs if not r.ok]
        if failed:
            meas.errors.append(f"T: {failed[0].error}")
            meas.t = dict.fromkeys(m.GROUPS)
        else:
            cpu = [_cpu_ns(r) for r in t_runs]
            meas.t = {g: m.top_mean([c[f"loop_{g}"] for c in cpu], cuts) for g in m.GROUPS}
        out[key] = meas
    return out


# --------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------


def distance(results: Mapping[Key, Measured], arrangement: str, borrowing: str,
             settings: Sequence[int]) -> float | None:
    """Σ |simulated − published| over every T and C of one arrangement and mode."""
    total = 0.0
    for no in settings:
        meas = results[Key(no, arrangement, borrowing)]
        pub = m.PUBLISHED[no]
        pairs = [(meas.c, pub.c)] + [(meas.t.get(g), pub.t[g]) for g in m.GROUPS]
        for sim, p in pairs:
            if sim is None:
                return None
            total += abs(sim - p)
    return total


def best_arrangement(results: Mapping[Key, Measured], size: m.Sizes) -> str:
    """The arrangement closest to the seed with borrowing on (the seed's kernel); ties go
    to the first in :data:`seed003_model.PRIORITIES`."""
    scored = [(distance(results, a, "on", size.settings), i, a)
              for i, a in enumerate(size.priorities)]
    known = [s for s in scored if s[0] is not None]
    return min(known)[2] if known else size.priorities[0]


def tallies(results: Mapping[Key, Measured], arrangement: str, borrowing: str,
            settings: Sequence[int]) -> tuple[m.Tally, m.Tally]:
    """T (integers, as the seed prints them) and C (one decimal) tallies."""
    t_tally, c_tally = m.Tally(), m.Tally()
    for no in settings:
        meas, pub = results[Key(no, arrangement, borrowing)], m.PUBLISHED[no]
        for g in m.GROUPS:
            t_tally.add(meas.t.get(g), pub.t[g], 0)
        c_tally.add(meas.c, pub.c, 1)
    return t_tally, c_tally


def fitted_or_predicted(no: int) -> str:
    return "fitted" if no == board.FIT_SETTING else "predicted"


def arrangements_table(results: Mapping[Key, Measured], size: m.Sizes, best: str) -> Table:
    rows: list[list[Any]] = []
    for arr in size.priorities:
        for b in m.BORROWING:
            t_t, c_t = tallies(results, arr, b, size.settings)
            d = distance(results, arr, b, size.settings)
            name = f"{arr} (chosen)" if (arr == best and b == "on") else arr
            rows.append([name, m.BORROWING_TEXT[b], t_t.exact, t_t.within_one, t_t.misses,
                         c_t.exact, c_t.within_one, c_t.misses, d])
    return Table(
        id="seed003-arrangements",
        caption="Which RT priorities reproduce the seed: every T (integers) and C (one decimal) "
                "against Table 2",
        columns=[Column("priorities (seed: not stated)"), Column("kernel"),
                 Column("T exact", "int"), Column("T within 1", "int"), Column("T missed", "int"),
                 Column("C exact", "int"), Column("C within 1", "int"), Column("C missed", "int"),
                 Column("Σ |sim − seed| (points)", "num")],
        rows=rows)


def _verdict_cell(sim: float | None, pub: float, decimals: int) -> Cell:
    verdict = m.Tally().add(sim, pub, decimals)
    return Cell(sim, kind="num", decimals=decimals if decimals else 1,
                cls={"exact": "good", "within 1": "", "miss": "bad"}.get(verdict, "bad"),
                title=verdict)


def t_table(results: Mapping[Key, Measured], size: m.Sizes, arrangement: str) -> Table:
    rows: list[list[Any]] = []
    for no in size.settings:
        pub = m.PUBLISHED[no]
        row: list[Any] = [no]
        row += [Cell(pub.t[g], kind="int", cls="pub") for g in m.GROUPS]
        for b in m.BORROWING:
            meas = results[Key(no, arrangement, b)]
            row += [_verdict_cell(meas.t.get(g), pub.t[g], 0) for g in m.GROUPS]
        rows.append(row)
    cols = [Column("No.", "int")] + [Column(f"seed {g}", "int", cls="pub") for g in m.GROUPS]
    for b in m.BORROWING:
        cols += [Column(f"{g} ({'2.6.35' if b == 'on' else '5.10+'})", "num") for g in m.GROUPS]
    return Table(
        id="seed003-t", columns=cols, rows=rows,
        caption=f"Table 2, T: %CPU of each group's loop as top reads it (priorities: "
                f"{arrangement})",
        groups=[("", 1, ""), ("seed (top)", 3, "pub"),
                ("simulated, borrowing on (2.6.35)", 3, ""),
                ("simulated, borrowing off (5.10+)", 3, "")])


def c_table(results: Mapping[Key, Measured], size: m.Sizes, arrangement: str) -> Table:
    rows: list[list[Any]] = []
    for no in size.settings:
        pub = m.PUBLISHED[no]
        on, off = (results[Key(no, arrangement, b)] for b in m.BORROWING)
        setting = m.SETTINGS[no]
        rows.append([no, setting.period_us, Cell(pub.c, kind="num", decimals=1, cls="pub"),
                     _verdict_cell(on.c, pub.c, 1), _verdict_cell(off.c, pub.c, 1),
                     fitted_or_predicted(no)])
    return Table(
        id="seed003-c",
        caption=f"Table 2, C: CoreMark's iterations per second in cgA, % of CoreMark alone "
                f"(priorities: {arrangement})",
        columns=[Column("No.", "int"), Column("period µs", "int"),
                 Column("seed C %", "num", cls="pub"), Column("C %, borrowing on (2.6.35)", "num"),
                 Column("C %, borrowing off (5.10+)", "num"), Column("this number is")],
        rows=rows)


def borrowing_rule_table(results: Mapping[Key, Measured], size: m.Sizes, arrangement: str
                         ) -> Table:
    """cg0 alone on core 0 with borrowing on: the seed's 式①, min(runtime/period × 2, 1)."""
    rows: list[list[Any]] = []
    for no in size.settings:
        s = m.SETTINGS[no]
        on = results[Key(no, arrangement, "on")].t.get("cg0")
        off = results[Key(no, arrangement, "off")].t.get("cg0")
        rows.append([no, 100.0 * s.share("cg0"), m.borrowing_cap(s, "cg0"), on, off,
                     Cell(m.PUBLISHED[no].t["cg0"], kind="int", cls="pub")])
    return Table(
        id="seed003-borrowing-rule",
        caption="cg0, alone on core 0: the borrowing rule (式①) against the simulation",
        columns=[Column("No.", "int"), Column("runtime/period %", "num"),
                 Column("式①: min(2 × runtime/period, 1) %", "num"),
                 Column("simulated T, borrowing on", "num"),
                 Column("simulated T, borrowing off", "num"),
                 Column("seed T", "int", cls="pub")],
        rows=rows)


# --------------------------------------------------------------------------------------
# Timeline of core 1
# --------------------------------------------------------------------------------------


def timeline_bins(trace: Any, cpu: int, start_ns: int, length_ns: int, bin_ns: int,
                  names: Mapping[int, str]) -> list[dict[str, int]]:
    """Per bin of ``bin_ns`` in [start, start + length): the ns each task (by name, and
    ``idle``) ran on ``cpu``, from the trace's sched_switch events. Each bin's values add
    up to ``bin_ns``."""
    sw = trace.filter((trace["event"] == "sched_switch") & (trace["cpu"] == cpu))
    end_ns = start_ns + length_ns
    # who runs at each switch: the intervals [ts_i, ts_{i+1}) belong to next_pid of event i
    times = sw["ts_ns"].to_list()
    nexts = sw["next_pid"].to_list()
    prevs = sw["prev_pid"].to_list()
    current = prevs[0] if prevs else 0
    intervals: list[tuple[int, int, str]] = []
    at = 0
    for ts, nxt in zip(times, nexts, strict=True):
        if ts > at:
            intervals.append((at, ts, names.get(current, "idle")))
        at, current = ts, nxt
    intervals.append((at, max(end_ns, at), names.get(current, "idle")))
    bins: list[dict[str, int]] = []
    for k in range(length_ns // bin_ns):
        lo, hi = start_ns + k * bin_ns, start_ns + (k + 1) * bin_ns
        acc: dict[str, int] = {}
        for a, b, who in intervals:
            overlap = min(b, hi) - max(a, lo)
            if overlap > 0:
                acc[who] = acc.get(who, 0) + overlap
        bins.append(acc)
    return bins


def core1_bins(run: RunOutcome, start_ns: int, length_ns: int, bin_ns: int
               ) -> list[dict[str, int]] | None:
    """Who ran on core 1 (by group) in bins over [start, start + length) of a traced run."""
    if not run.ok or run.request.trace is None or run.result is None:
        return None
    names = {int(t["tid"]): t["name"].removeprefix("loop_") for t in run.result.json["tasks"]}
    trace = api.parse_trace(run.request.trace)
    return timeline_bins(trace, m.GROUP_CPU["cgA"], start_ns, length_ns, bin_ns, names)


def traced_run(plan: Mapping[Key, Mapping[str, Any]], outcomes: Mapping[Any, RunOutcome],
               key: Key) -> RunOutcome | None:
    reqs = plan.get(key)
    return outcomes.get(reqs["T"][-1]) if reqs is not None else None


def timeline(run: RunOutcome | None, size: m.Sizes) -> list[dict[str, int]] | None:
    """Core 1 over the first period of the timeline setting after the warm-up."""
    if run is None:
        return None
    setting = m.SETTINGS[TIMELINE_SETTING]
    return core1_bins(run, round(size.warmup_s * 1e9), setting.period_us * 1_000,
                      BIN_MS * 1_000_000)


def period_shares(run: RunOutcome | None, size: m.Sizes, no: int) -> list[float] | None:
    """cgA's share of core 1 (%) in each whole period of the measured window."""
    if run is None:
        return None
    period_ns = m.SETTINGS[no].period_us * 1_000
    start = round(size.warmup_s * 1e9)
    length = size.windows * round(m.TOP_DELAY_S * 1e9) // period_ns * period_ns
    bins = core1_bins(run, start, length, period_ns)
    return None if bins is None else [100.0 * b.get("cgA", 0) / period_ns for b in bins]


def period_table(shares: Mapping[int, list[float] | None], results: Mapping[Key, Measured],
                 arrangement: str) -> Table:
    rows: list[list[Any]] = []
    for no, sh in shares.items():
        pub = m.PUBLISHED[no]
        lo, hi = (min(sh), max(sh)) if sh else (None, None)
        inside = (lo is not None and hi is not None
                  and all(lo - 0.05 <= v <= hi + 0.05 for v in (pub.c, pub.t["cgA"])))
        meas = results[Key(no, arrangement, "on")]
        rows.append([no, lo, hi, meas.t.get("cgA"), meas.c,
                     Cell(pub.t["cgA"], kind="int", cls="pub"),
                     Cell(pub.c, kind="num", decimals=1, cls="pub"),
                     "yes" if inside else "no"])
    return Table(
        id="seed003-periods",
        caption=f"cgA's share of core 1 period by period, borrowing on (priorities: "
                f"{arrangement}), "
                "against the seed's T and C",
        columns=[Column("No.", "int"), Column("lowest period %", "num"),
                 Column("highest period %", "num"), Column("simulated T", "num"),
                 Column("simulated C", "num"), Column("seed T", "int", cls="pub"),
                 Column("seed C", "num", cls="pub"),
                 Column("seed's T and C within the periods' range")],
        rows=rows)


def timeline_table(bins: Mapping[str, list[dict[str, int]] | None]) -> Table:
    rows: list[list[Any]] = []
    on, off = bins.get("on") or [], bins.get("off") or []
    for k in range(max(len(on), len(off))):
        row: list[Any] = [k * BIN_MS]
        for side in (on, off):
            b = side[k] if k < len(side) else {}
            row += [b.get("cg1", 0) / 1e6, b.get("cgA", 0) / 1e6, b.get("idle", 0) / 1e6]
        rows.append(row)
    cols = [Column("from ms", "int")]
    for b in m.BORROWING:
        cols += [Column(f"{w} ms ({b})", "num") for w in ("cg1", "cgA", "idle")]
    return Table(id="seed003-timeline", columns=cols, rows=rows,
                 caption=f"Core 1 in {BIN_MS} ms bins over one period of No. "
                         f"{TIMELINE_SETTING}, from the end of the warm-up",
                 groups=[("", 1, ""), ("borrowing on (2.6.35)", 3, ""),
                         ("borrowing off (5.10+)", 3, "")])


def timeline_figure(bins: Mapping[str, list[dict[str, int]] | None]) -> MplFigure:
    plots.setup()
    fig, axes = plots.plt.subplots(1, 2, figsize=plots.FIGSIZE, sharey=True)
    for ax, b in zip(axes, m.BORROWING, strict=True):
        side = bins.get(b) or []
        xs = [k * BIN_MS for k in range(len(side))]
        bottom = [0.0] * len(side)
        for i, who in enumerate(("cg1", "cgA", "idle")):
            ys = [x.get(who, 0) / 1e6 for x in side]
            ax.bar(xs, ys, width=BIN_MS, bottom=bottom, align="edge", label=who,
                   color=plots.colour(i) if who != "idle" else "#dddddd")
            bottom = [a + y for a, y in zip(bottom, ys, strict=True)]
        ax.set_title(m.BORROWING_TEXT[b], fontsize=9)
        ax.set_xlabel("ms into the period")
    axes[0].set_ylabel(f"ms of each {BIN_MS} ms bin")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Who runs on core 1, No. {TIMELINE_SETTING}", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------
# The section
# --------------------------------------------------------------------------------------


def settings_table() -> Table:
    rows = []
    for s in m.SETTINGS.values():
        rows.append([s.no, s.period_us] + [s.runtime_us[g] for g in m.GROUPS]
                    + [m.borrowing_cap(s, g) for g in m.GROUPS])
    return Table(id="seed003-settings", caption="Table 1: the settings (µs), and 式① per group",
                 columns=[Column("No.", "int"), Column("cpu.rt_period_us", "int")]
                 + [Column(f"{g} runtime", "int") for g in m.GROUPS]
                 + [Column(f"式① {g} %", "num") for g in m.GROUPS],
                 rows=rows)


def section(ctx: Context) -> SectionOutput:
    """Run seed 003's settings on the board model and render them beside Table 2."""
    from schedlab.report.context import SectionOutput

    size = m.sizes(ctx.quick)
    runs: list[RunOutcome] = []
    for sweep in sweeps(size):  # the traced runs are filtered out of the first
        runs += ctx.sweep(sweep, f"seed 003: {sweep.name}")
    by_label = by_cell(runs)
    plan = plan_of(size)
    results = measure(size, runs[0], plan, by_label)
    best = best_arrangement(results, size)
    bins = {b: timeline(traced_run(plan, by_label, Key(TIMELINE_SETTING, best, b)), size)
            for b in m.BORROWING}
    shares = {no: period_shares(traced_run(plan, by_label, Key(no, best, "on")), size, no)
              for no in size.settings if traced(no)}
    figs: list[Figure] = []
    if all(bins.values()):
        figs.append(ctx.save_figure(timeline_figure(bins), "seed003-timeline",
                                    f"Core 1 over one period of No. {TIMELINE_SETTING} "
                                    f"({best}), {BIN_MS} ms bins"))
    errors = sorted({e for meas in results.values() for e in meas.errors})
    ref_s = m.coremark_seconds(_marks(runs[0]))
    html = render(
        "seed003.html.j2",
        citation=m.CITATION, platform=m.PLATFORM, quick=ctx.quick, size=size,
        board=board.describe(), settings=settings_table(),
        arrangements=arrangements_table(results, size, best), best=best,
        t=t_table(results, size, best), c=c_table(results, size, best),
        rule=borrowing_rule_table(results, size, best),
        timeline=timeline_table(bins) if all(bins.values()) else None, figs=figs,
        errors=errors, facts=m.DATA["facts"], findings=m.DATA["findings"],
        periods=period_table(shares, results, best) if shares else None,
        fit_size=f"CoreMark for {board.FIT_SIZES.iterations * m.ITERATION_US / 1e6:g} s after "
                 f"{board.FIT_SIZES.warmup_s:g} s",
        seed_ct_gap=max(abs(p.c - p.t["cgA"]) for p in m.PUBLISHED.values()),
        above_bound=above_bound(results),
        other=_other_arrangement_no3(results, size, best),
        explain=explanations(results, size, best),
        reference=_reference_text(ref_s, size),
        runs=runs_table(runs))
    return SectionOutput(SECTION_ID, TITLE, html, ctx.figure_files(*figs))


def _reference_text(ref_s: float | None, size: m.Sizes) -> str:
    ideal = size.iterations * m.ITERATION_US / 1e6
    if ref_s is None:
        return "CoreMark alone did not finish: C cannot be computed."
    return (f"CoreMark alone ({size.iterations:,} iterations of {m.ITERATION_US} µs) took "
            f"{ref_s:.6f} s ({ideal:g} s of work)")


def above_bound(results: Mapping[Key, Measured]) -> list[str]:
    """Every simulated T more than half a point above its group's 式① bound."""
    out = []
    for key, meas in results.items():
        for g in m.GROUPS:
            t = meas.t.get(g)
            if t is not None and t > m.borrowing_cap(m.SETTINGS[key.no], g) + 0.5:
                out.append(f"No. {key.no} {g} ({key.arrangement}, borrowing {key.borrowing}): "
                           f"{t:.1f}")
    return out


def _other_arrangement_no3(results: Mapping[Key, Measured], size: m.Sizes, best: str
                           ) -> str:
    """What the first other arrangement gives cg1 in No. 3 with borrowing on."""
    for arr in size.priorities:
        key = Key(3, arr, "on")
        if arr != best and key in results and results[key].t.get("cg1") is not None:
            return (f"With “{arr}” instead, No. 3 gives cg1 {results[key].t['cg1']:.1f} % "
                    f"against the seed's {m.PUBLISHED[3].t['cg1']} %.")
    return ""


def explanations(results: Mapping[Key, Measured], size: m.Sizes, best: str) -> list[str]:
    """Sentences, each computed from the runs, on where the simulation differs from the
    seed and why."""
    out: list[str] = []
    for no in size.settings:
        on, pub = results[Key(no, best, "on")], m.PUBLISHED[no]
        diffs = []
        for g in m.GROUPS:
            sim = on.t.get(g)
            if sim is not None and round(sim) != pub.t[g]:
                diffs.append(f"T {g} {sim:.1f} against {pub.t[g]}")
        if on.c is not None and round(on.c, 1) != pub.c:
            diffs.append(f"C {on.c:.1f} against {pub.c}")
        if diffs:
            out.append(f"No. {no}: " + ", ".join(diffs) + ".")
    return out

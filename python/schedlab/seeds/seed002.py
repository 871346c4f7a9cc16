"""Seed 002: "Performance comparison of ready queue of ITRON method kernel" (Musashi
Institute of Technology; Y. Watanabe, K. Ito, A. Miyauchi, S. Arai; paper B-38).

Source: /work/shared/seeds/002_f2296cf8d3657dd5.txt (a transcript of the Japanese paper;
the figures' curves were lost, their captions and the text's findings remain).
Platform of the published figures: Hitachi ULSI Systems Solution Engine, SH3 at 133 MHz
(SH7709A), GNU cross toolchain; μITRON 4.0 kernel TOPPERS/JSP; 1000 trials per system
call and ready-queue state; average and worst time; cache on and off.

The seed compares TOPPERS/JSP's ready queue (one doubly linked list per priority and a
bitmap of non-empty priorities) with its own "single ready queue" (every ready task on
one list in priority order, linear insertion search, no bitmap) on three system calls:
task activation (``act_tsk``), priority change (``chg_pri``) and ready-queue rotation
(``rot_rdq``). schedlab measures the same three operations on its four ready-queue back
ends (crates/schedlab-rtq) with ``rtq-probe`` (:mod:`schedlab.readyq`), and lays the
result out as the seed's figures 1–6, its object-size comparison and its findings.

Every number in this section's text is computed from the measurement, except the seed's
published figures, which are stored once below and labelled as the seed's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from schedlab import plots, readyq, report
from schedlab.report import Cell, Column, Table
from schedlab.reproduce import SectionOutput

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedlab.reproduce import Context

SECTION_ID = "seed002"
TITLE = "Seed 002 — ready-queue structures in a μITRON kernel (Musashi Inst. of Technology)"

PLATFORM = ("Hitachi ULSI Systems Solution Engine, SH3 (SH7709A) at 133 MHz, GNU cross "
            "toolchain, TOPPERS/JSP μITRON 4.0 kernel")

# --------------------------------------------------------------------------------------
# Published figures (section 4 of the paper)
# --------------------------------------------------------------------------------------

#: §4.1: object size of the task-management modules, KB.
PUBLISHED_OBJECT_KB: dict[str, float] = {"per-priority queues (TOPPERS/JSP)": 24.8,
                                         "single ready queue": 23.0}
#: §4.2: trials per system call and ready-queue state.
PUBLISHED_TRIALS = 1000
#: §5: "up to 5 tasks the single ready queue performs better" (the guideline) and §4.2.1:
#: "beyond 10 tasks the per-priority queues win in average and worst time".
PUBLISHED_SINGLE_UNTIL = 5
PUBLISHED_BITMAP_FROM = 10
#: §4.2.1: the per-priority structure "may also take 9 µs" in the worst case (figure 1).
PUBLISHED_WORST_US = 9.0

#: The seed's figures: (figure, operation, cache, the seed's finding, translated).
PUBLISHED_FINDINGS: tuple[tuple[int, str, str, str], ...] = (
    (1, "act_tsk", "on",
     "Activating the highest-priority task (a dispatch follows): the single queue beats the "
     "per-priority queues in average and worst time. Overall its average is equal to or "
     "behind the per-priority queues' (下回っている), but the "
     f"per-priority queues may also take {PUBLISHED_WORST_US:g} µs, so in the worst case "
     "both are equivalent up "
     "to 10 tasks; beyond 10 tasks the per-priority queues win in average and worst."),
    (2, "act_tsk", "off",
     "No difference when activating the highest-priority task; the lower the activated "
     "priority, the more the per-priority queues win."),
    (3, "chg_pri", "on",
     "New priority very close to the highest: the single queue wins in average and worst. "
     "Otherwise the per-priority queues win on average, while in the worst case the single "
     "queue wins up to priority ≈ 25."),
    (4, "chg_pri", "off",
     "The single queue's advantage ends at about 10 tasks in the worst case, and on "
     "average too at about 10 tasks, conversely more than with the cache on."),
    (5, "rot_rdq", "on",
     "Rotating the highest priority: comparable up to about 5 rotated tasks; beyond, the "
     "per-priority queues win in average and worst; independent of the tasks at lower "
     "priorities."),
    (6, "rot_rdq", "off",
     "The per-priority queues win even with few tasks."),
)

OP_TITLE = {"act_tsk": "task activation (act_tsk)", "chg_pri": "priority change (chg_pri)",
            "rot_rdq": "ready-queue rotation (rot_rdq)"}
VARIANT = {"on": ("ns_warm", "warm caches"), "off": ("ns_cold", "cold caches")}
#: N at which the per-priority figure is drawn (the seed's figures span a few dozen tasks).
BY_PRIO_N = 32

# --------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------


def _series_axes(ax: Any, ns: Sequence[int], fig_data: Mapping[str, Any], metric: str,
                 stat: str, backends: Sequence[str]) -> None:
    for i, b in enumerate(backends):
        values = fig_data.get(b, {}).get(metric, {}).get(stat)
        if not values:
            continue
        ax.plot(ns, values, marker="o", ms=3, lw=1.4, color=plots.colour(i), label=b)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plots.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    ax.axvspan(PUBLISHED_SINGLE_UNTIL, PUBLISHED_BITMAP_FROM, color="#f0c36d", alpha=0.25,
               lw=0, label=f"seed: crossover between {PUBLISHED_SINGLE_UNTIL} and "
                           f"{PUBLISHED_BITMAP_FROM} tasks")
    ax.set_xlabel("ready tasks N")


def _legend_below(fig: Figure, axes: Sequence[Any]) -> None:
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(handles), 3), fontsize=8,
                   frameon=False)
    fig.tight_layout(rect=(0.0, 0.13, 1.0, 1.0))


def avg_worst_figure(doc: Mapping[str, Any], op: str, metric: str, title: str,
                     ylabel: str) -> Figure:
    """Two panels, average and worst over the cases, against N; one line per back end."""
    plots.setup()
    fig, axes = plots.plt.subplots(1, 2, figsize=plots.FIGSIZE, sharey=True)
    for ax, stat, name in zip(axes, ("avg", "worst"), ("average", "worst case"), strict=True):
        _series_axes(ax, doc["n"], doc[op], metric, stat, doc["backends"])
        ax.set_title(name, fontsize=10)
    # after every line is drawn: the panels share y, a limit set earlier would freeze it
    axes[0].set_ylim(bottom=0)
    axes[0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=11)
    _legend_below(fig, axes)
    return fig


def instructions_figure(doc: Mapping[str, Any]) -> Figure:
    """Instruction counts: one panel per operation, average solid and worst dashed."""
    plots.setup()
    fig, axes = plots.plt.subplots(1, 3, figsize=plots.FIGSIZE, sharey=True)
    for ax, op in zip(axes, readyq.OPS, strict=True):
        for i, b in enumerate(doc["backends"]):
            m = doc[op].get(b, {}).get("instructions")
            if not m:
                continue
            ax.plot(doc["n"], m["avg"], marker="o", ms=3, lw=1.4, color=plots.colour(i),
                    label=b)
            ax.plot(doc["n"], m["worst"], ls="--", lw=1.0, color=plots.colour(i))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(plots.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("ready tasks N")
    axes[0].set_ylabel("instructions (solid avg, dashed worst)")
    fig.suptitle("Exact instruction counts per operation (callgrind)", fontsize=11)
    _legend_below(fig, axes)
    return fig


def by_prio_figure(doc: Mapping[str, Any], metric: str, n_index: int) -> Figure:
    """The cost against the priority involved at one N, one panel per operation."""
    plots.setup()
    fig, axes = plots.plt.subplots(1, 3, figsize=plots.FIGSIZE, sharey=True)
    n = doc["n"][n_index]
    for ax, op in zip(axes, readyq.OPS, strict=True):
        for i, b in enumerate(doc["backends"]):
            m = doc[op].get(b, {}).get(metric)
            if not m:
                continue
            ys = m["by_prio"][n_index]
            ax.plot(range(len(ys)), ys, marker="o", ms=3, lw=1.4, color=plots.colour(i),
                    label=b)
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("priority involved (0 = highest)")
    axes[0].set_ylim(bottom=0)
    axes[0].set_ylabel(_metric_label(metric))
    fig.suptitle(f"Cost against the priority involved, N = {n} ready tasks", fontsize=11)
    _legend_below(fig, axes)
    return fig


def _metric_label(metric: str) -> str:
    return {"instructions": "instructions", "ns_warm": "ns (warm caches)",
            "ns_cold": "ns (cold caches)"}.get(metric, metric)


# --------------------------------------------------------------------------------------
# Tables and text
# --------------------------------------------------------------------------------------


def crossover_table(doc: Mapping[str, Any]) -> Table:
    rows: list[list[Any]] = []
    for metric, per_op in doc["crossover"]["by_metric"].items():
        for op, stats in per_op.items():
            for stat in ("avg", "worst"):
                c = stats[stat]
                rows.append([op, _metric_label(metric), stat, c["single_until"],
                             c["bitmap_from"], PUBLISHED_SINGLE_UNTIL, PUBLISHED_BITMAP_FROM])
    return Table(
        id="seed002-crossover",
        caption="Crossover: single-list vs bitmap-lists (TOPPERS/JSP's structure)",
        columns=[Column("operation"), Column("metric"), Column("statistic"),
                 Column("single-list as fast or faster up to N", "int"),
                 Column("bitmap-lists as fast or faster from N", "int"),
                 Column("seed: single queue better up to", "int", cls="pub"),
                 Column("seed: per-priority better from", "int", cls="pub")],
        rows=rows,
        note_html=("— : never (single-list never as fast / bitmap-lists not ahead at every "
                   "larger N). Shaded columns are the seed's published figures (§4.2.1, §5)."),
    )


def code_size_table(doc: Mapping[str, Any]) -> Table | None:
    cs = doc.get("code_size", {})
    if not cs.get("available"):
        return None
    per = cs["backends"]
    base = per.get(readyq.BITMAP, {}).get("total")
    rows: list[list[Any]] = []
    for b, v in per.items():
        rows.append([b, v["total"], Cell(v["total"] / base if base else None, kind="ratio"),
                     None, None])
    for name, kb in PUBLISHED_OBJECT_KB.items():
        ref = PUBLISHED_OBJECT_KB["per-priority queues (TOPPERS/JSP)"]
        rows.append([Cell(f"seed: {name}", cls="pub"), None, None, Cell(kb, cls="pub"),
                     Cell(kb / ref, kind="ratio", cls="pub")])
    return Table(
        id="seed002-codesize",
        caption="Code size of each back end's ready-queue operations vs the seed's object size",
        columns=[Column("back end"), Column("bytes (ours)", "int"),
                 Column("÷ bitmap-lists", "ratio"),
                 Column("seed: task-management objects, KB", "num", cls="pub"),
                 Column("seed: ÷ per-priority", "ratio", cls="pub")],
        rows=rows,
        note_html=report.esc(cs.get("method", "")) + ". The seed's figure is the whole "
        "task-management object module (service calls included), ours only the ready-queue "
        "operations: compare the direction and the ratio, not the bytes.",
    )


def selected_table(doc: Mapping[str, Any]) -> Table:
    """Average instructions (if counted) and warm ns at a few N, single vs bitmap lists."""
    pick = [i for i, n in enumerate(doc["n"]) if n in (1, 2, 3, 5, 10, 16, 32, 64, 128)]
    has_ir = bool(doc["instructions"].get("available"))
    cols = [Column("operation"), Column("N", "int")]
    for b in (readyq.SINGLE, readyq.BITMAP):
        if has_ir:
            cols.append(Column(f"{b} instr avg / worst"))
        cols.append(Column(f"{b} ns warm avg", "num", title="nanoseconds, warm caches"))
        cols.append(Column(f"{b} ns cold avg", "num", title="nanoseconds, cold caches"))
    rows: list[list[Any]] = []
    for op in readyq.OPS:
        for i in pick:
            row: list[Any] = [op, doc["n"][i]]
            for b in (readyq.SINGLE, readyq.BITMAP):
                f = doc[op][b]
                if has_ir:
                    row.append(f"{f['instructions']['avg'][i]:,.1f} / "
                               f"{f['instructions']['worst'][i]:,.0f}")
                row.append(Cell(f["ns_warm"]["avg"][i], decimals=1))
                row.append(Cell(f["ns_cold"]["avg"][i], decimals=0))
            rows.append(row)
    return Table(id="seed002-selected", caption="Single list vs per-priority lists at selected N",
                 columns=cols, rows=rows)


def _cx_text(doc: Mapping[str, Any], metric: str, op: str) -> str:
    per = doc["crossover"]["by_metric"].get(metric, {}).get(op)
    if not per:
        return f"{_metric_label(metric)}: not measured"
    parts = []
    for stat, name in (("avg", "average"), ("worst", "worst")):
        c = per[stat]
        until = "never" if c["single_until"] is None else f"up to N = {c['single_until']}"
        frm = "not at every larger N" if c["bitmap_from"] is None else \
            f"from N = {c['bitmap_from']}"
        parts.append(f"{name}: single-list as fast or faster {until}, bitmap-lists ahead {frm}")
    return f"{_metric_label(metric)} — " + "; ".join(parts)


def _top_prio_text(doc: Mapping[str, Any], op: str, metric: str, n_index: int) -> str:
    s = doc[op][readyq.SINGLE].get(metric)
    b = doc[op][readyq.BITMAP].get(metric)
    if not s or not b:
        return ""
    n = doc["n"][n_index]
    s0, b0 = s["by_prio"][n_index][0], b["by_prio"][n_index][0]
    s1, b1 = s["by_prio"][n_index][-1], b["by_prio"][n_index][-1]
    unit = "instructions" if metric == "instructions" else "ns"
    return (f" At N = {n}, priority 0 (highest): single-list {s0:,.1f} vs bitmap-lists "
            f"{b0:,.1f} {unit}; lowest priority: {s1:,.1f} vs {b1:,.1f}.")


def findings_table(doc: Mapping[str, Any], n_index: int) -> Table:
    has_ir = bool(doc["instructions"].get("available"))
    rows: list[list[Any]] = []
    for fig_no, op, cache, text in PUBLISHED_FINDINGS:
        metric = VARIANT[cache][0]
        ours = _cx_text(doc, metric, op)
        if cache == "on" and has_ir:
            ours += ". " + _cx_text(doc, "instructions", op)
        ours += "." + _top_prio_text(doc, op, "instructions" if has_ir else metric, n_index)
        rows.append([Cell(f"fig. {fig_no}: {op}, cache {cache}", cls="pub"),
                     Cell(text, cls="pub"), ours])
    rows.append([Cell("§4.1 object size", cls="pub"),
                 Cell("Task-management objects shrank from 24.8 KB to 23.0 KB with the single "
                      "ready queue.", cls="pub"),
                 _size_text(doc)])
    rows.append([Cell("§5 conclusion", cls="pub"),
                 Cell("Up to 5 tasks the single ready queue is faster (the guideline); its "
                      "advantage shows mainly with the cache on.", cls="pub"),
                 _conclusion_text(doc)])
    return Table(id="seed002-findings", caption="The seed's findings beside ours",
                 columns=[Column("seed figure", cls="pub"), Column("seed's finding", cls="pub"),
                          Column("schedlab (this machine)")],
                 rows=rows)


def _size_text(doc: Mapping[str, Any]) -> str:
    cs = doc.get("code_size", {})
    if not cs.get("available"):
        return f"not measured: {cs.get('reason')}"
    s = cs["backends"][readyq.SINGLE]["total"]
    b = cs["backends"][readyq.BITMAP]["total"]
    direction = "smaller" if s < b else "larger" if s > b else "the same size"
    return (f"single-list's ready-queue code is {s:,} bytes, bitmap-lists' {b:,} bytes: "
            f"single-list is {direction} ({s / b:.2f}×).")


def _conclusion_text(doc: Mapping[str, Any]) -> str:
    cx = doc["crossover"]
    metric = cx.get("metric")
    if not metric:
        return "no crossover computed"
    untils = [cx[op][stat]["single_until"] for op in readyq.OPS for stat in ("avg", "worst")
              if op in cx]
    froms = [cx[op][stat]["bitmap_from"] for op in readyq.OPS for stat in ("avg", "worst")
             if op in cx]
    known_u = [u for u in untils if u is not None]
    known_f = [f for f in froms if f is not None]
    u_txt = f"at most N = {max(known_u)}" if known_u else "at no N"
    f_txt = f"from N = {max(known_f)} at the latest" if known_f else "nowhere for good"
    warm = doc["crossover"]["by_metric"].get("ns_warm", {})
    cold = doc["crossover"]["by_metric"].get("ns_cold", {})

    def _max_until(per: Mapping[str, Any]) -> str:
        vals = [per[op][st]["single_until"] for op in per for st in ("avg", "worst")
                if per[op][st]["single_until"] is not None]
        return f"N = {max(vals)}" if vals else "no N"

    return (f"By {_metric_label(metric)}, over the three operations, single-list is as fast "
            f"or faster {u_txt}, and bitmap-lists is ahead {f_txt}. Largest N where "
            f"single-list keeps up: warm ns {_max_until(warm)}, cold ns {_max_until(cold)}.")


def honest_paragraph(doc: Mapping[str, Any]) -> str:
    m = doc["machine"]
    clock = m.get("clock") or {}
    ghz = clock.get("ticks_per_ns")
    tsc = f" (time-stamp counter at {ghz:.2f} GHz)" if ghz else ""
    return (
        "<p><strong>What carries over, and what does not.</strong> The seed ran on a "
        f"{report.esc(PLATFORM)}: an in-order core at 133 MHz with a small on-chip cache, where "
        "an uncached memory access costs many cycles, and where TOPPERS/JSP's portable code "
        "finds the highest priority with a software bitmap search (shifts and a table, "
        "scheduler-specs §7.1). This report ran on "
        f"{report.esc(m.get('cpu'))}, {m.get('cpus')} vCPUs{report.esc(tsc)}: an out-of-order "
        "VM core with megabytes of cache, branch prediction and a find-first-set that takes "
        "one or two instructions. What carries over is the algorithmic shape: the single "
        "list's cost grows linearly with the tasks it walks (those at and above the "
        "priority involved), the per-priority lists' stays flat, so beyond a few tasks the "
        f"per-priority lists win ({_beyond_text(doc)}; the seed: beyond about "
        f"{PUBLISHED_BITMAP_FROM}). The "
        "instruction counts show that shape exactly, whatever the machine's noise. What does "
        "not carry over: the absolute times (nanoseconds here against microseconds there); "
        "where exactly the crossover falls, because it depends on each structure's constant "
        "costs (on this core the bitmap search is nearly free; "
        f"{_where_text(doc)}); the seed's dispatch cost, included in its system-call times "
        "but not in our queue operations; and \"cache off\": user code on x86 cannot disable "
        "the caches, so our cold variant only evicts them before each operation (the first "
        "touch of each line then comes from memory, later touches hit), whereas the SH3 with "
        "caching off paid the memory latency on every access. Our cold figures are better read "
        "as warm curves plus a penalty per line first touched than as \"cache off\", and a "
        "VM's noise makes differences of a few nanoseconds meaningless: read the crossover "
        "from the instruction counts, and use the nanoseconds to check that they agree.</p>"
    )


def _beyond_text(doc: Mapping[str, Any]) -> str:
    cx = doc["crossover"]
    metric = cx.get("metric")
    froms = [cx[op][st]["bitmap_from"] for op in readyq.OPS if op in cx
             for st in ("avg", "worst")]
    if not metric or any(f is None for f in froms) or not froms:
        return "here not for every operation within the measured N"
    return f"here from N = {max(froms)} at the latest, by {_metric_label(metric)}"


def _where_text(doc: Mapping[str, Any]) -> str:
    cx = doc["crossover"]
    metric = cx.get("metric")
    untils = [cx[op][st]["single_until"] for op in readyq.OPS if op in cx
              for st in ("avg", "worst")]
    known = [u for u in untils if u is not None]
    ours = max(known) if known else 0
    if not metric:
        return "no crossover was computed"
    cmp = ("fewer" if ours < PUBLISHED_SINGLE_UNTIL else
           "more" if ours > PUBLISHED_SINGLE_UNTIL else "as many")
    return (f"by {_metric_label(metric)} the single list keeps up to N = {ours} at most, "
            f"{cmp} tasks than the seed's {PUBLISHED_SINGLE_UNTIL}")


def _scenario_html(doc: Mapping[str, Any]) -> str:
    t = doc.get("timing", {})
    instr = doc["instructions"]
    cold_count = ""
    if instr.get("available"):
        cold_count = (
            f" In count mode, \"cold\" means the simulated caches "
            f"(<code>{report.esc(' '.join(instr.get('cache_sim') or []))}</code>) were emptied "
            f"of the queue's data by walking {instr.get('sim_evict_bytes', 0) // 1024:,} KiB "
            "first; the cold data-cache misses are in the JSON (<code>d1_misses_cold</code>, "
            "<code>ll_misses_cold</code>).")
    return (
        f"<p><strong>Scenarios.</strong> {doc['levels']} priority levels (TOPPERS/JSP's "
        "default). For N ready tasks, task i is made ready at priority i mod "
        f"{doc['levels']} (spread evenly). <code>act_tsk</code> activates one more task at "
        "priority p; <code>chg_pri</code> moves the first, middle or last task of the dispatch "
        "order to priority p; <code>rot_rdq</code> rotates priority p. Each operation ends by "
        "picking the next task to run (<code>peek</code>), as the kernel recomputes its "
        "scheduled task. Average = mean over every p (and target), worst = maximum. "
        f"Warm: trimmed mean of {t.get('reps_warm')} timed repetitions per case; cold: median "
        f"of {t.get('reps_cold')}, each after walking a {(t.get('evict_bytes') or 0) >> 20} MiB "
        "buffer and flushing the queue and the operation's code from every cache level "
        f"(<code>clflush</code>).{cold_count} Details: <code>docs/readyq.md</code>; rerun with "
        "<code>schedlab readyq --json</code>.</p>"
    )


def section(ctx: Context) -> SectionOutput:
    """Measure the ready queues and render seed 002's figures, tables and findings."""
    html: list[str] = [
        "<p>The seed compares TOPPERS/JSP's ready queue (a list per priority plus a bitmap) "
        "with a single ready queue in priority order on a μITRON 4.0 kernel "
        f"({report.esc(PLATFORM)}; {PUBLISHED_TRIALS} trials per call and state). schedlab "
        "measures the same three operations on its four ready-queue back ends "
        "(<code>crates/schedlab-rtq</code>) with <code>rtq-probe</code>: nanoseconds, warm and "
        "cold, and exact instruction counts under callgrind.</p>"
    ]
    try:
        doc = readyq.measure(ctx.quick)
    except readyq.ProbeError as e:
        html.append(report.note(f"Not measured: {report.esc(e)}", warn=True))
        return SectionOutput(SECTION_ID, TITLE, "\n".join(html))
    files = []
    if ctx.quick:
        html.append(report.note(
            f"<strong>Quick mode:</strong> N ∈ {report.esc(', '.join(map(str, doc['n'])))}, "
            "fewer timed repetitions (<code>schedlab readyq --quick</code>)."))
    if not doc["instructions"].get("available"):
        html.append(report.note(
            "Instruction counts unavailable: "
            f"{report.esc(doc['instructions'].get('reason'))}. The crossover below is "
            "computed from warm nanoseconds.", warn=True))
    html.append(_scenario_html(doc))

    html.append("<h3>Figures 1–6: the seed's figures, redrawn on this machine</h3>")
    fig_no = 0
    for op in readyq.OPS:
        for cache in ("on", "off"):
            fig_no += 1
            metric, label = VARIANT[cache]
            fig = avg_worst_figure(doc, op, metric,
                                   f"Fig. {fig_no}: {OP_TITLE[op]}, {label} "
                                   f"(seed: cache {cache})", _metric_label(metric))
            png, svg = ctx.save_figure(fig, f"seed002-fig{fig_no}-{op}-{metric}")
            files += [ctx.out / png, ctx.out / svg]
            html.append(report.figure(png, f"Figure {fig_no} (seed: {op}, cache {cache}): "
                                           f"average and worst {_metric_label(metric)} against "
                                           "the number of ready tasks", svg_rel=svg))
    n_index = max((i for i, n in enumerate(doc["n"]) if n <= BY_PRIO_N), default=0)
    if doc["instructions"].get("available"):
        png, svg = ctx.save_figure(instructions_figure(doc), "seed002-instructions")
        files += [ctx.out / png, ctx.out / svg]
        html.append(report.figure(png, "Instruction counts (exact, repeatable): average and "
                                       "worst against N", svg_rel=svg))
    prio_metric = "instructions" if doc["instructions"].get("available") else "ns_warm"
    png, svg = ctx.save_figure(by_prio_figure(doc, prio_metric, n_index), "seed002-by-prio")
    files += [ctx.out / png, ctx.out / svg]
    html.append(report.figure(png, "The cost against the priority involved (the seed's "
                                   "second axis)", svg_rel=svg))

    html.append("<h3>Crossover</h3>")
    html.append(report.render_table(crossover_table(doc)))
    html.append(report.render_table(selected_table(doc)))
    html.append("<h3>Object size</h3>")
    cst = code_size_table(doc)
    html.append(report.render_table(cst) if cst else report.note(
        f"Code size unavailable: {report.esc(doc['code_size'].get('reason'))}", warn=True))
    html.append("<h3>Findings</h3>")
    html.append(report.render_table(findings_table(doc, n_index)))
    html.append(honest_paragraph(doc))
    return SectionOutput(SECTION_ID, TITLE, "\n".join(html), files)

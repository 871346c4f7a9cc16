"""Seed 002: "Performance comparison of ready queue of ITRON method kernel" (Y. Watanabe,
K. Ito, A. Miyauchi, S. Arai, Musashi Institute of Technology, paper B-38; docs/seeds.md).
The paper's figures lost their curves in the text; their captions and the text's findings
remain, stored with their sections in ``data/seed002.json``. Platform: a Hitachi Solution
Engine (SH3 at 133 MHz), TOPPERS/JSP μITRON 4.0 kernel; 1000 trials per system call and
ready-queue state; average and worst time; cache on and off.

The seed compares TOPPERS/JSP's ready queue (one doubly linked list per priority and a
bitmap of non-empty priorities) with its own "single ready queue" (every ready task on
one list in priority order, linear insertion search, no bitmap) on three system calls:
task activation (``act_tsk``), priority change (``chg_pri``) and ready-queue rotation
(``rot_rdq``). schedlab measures the same three operations on its four ready-queue back
ends (crates/schedlab-rtq) with ``rtq-probe`` (:mod:`schedlab.readyq`), and lays the
result out as the seed's figures 1–6, its object-size comparison and its findings.

Every number in this section's text is computed from the measurement, except the seed's
published figures, which come from the data file and are labelled as the seed's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from schedlab import plots, readyq, readyq_platform
from schedlab.report import Cell, Column, Table, render
from schedlab.seeds import published

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from schedlab.report.context import Context, Figure, SectionOutput

SECTION_ID = "seed002"
TITLE = "Seed 002 — ready-queue structures in a μITRON kernel (Musashi Inst. of Technology)"

DATA: dict[str, Any] = published.load("seed002")
CITATION: str = DATA["document"]["citation"]
PLATFORM: str = DATA["platform"]

#: §4.1: object size of the task-management modules, KB.
PUBLISHED_OBJECT_KB: dict[str, float] = {k: v for k, v in DATA["object_kb"].items()
                                         if k != "provenance"}
#: §4.2: trials per system call and ready-queue state.
PUBLISHED_TRIALS: int = DATA["trials"]["value"]
#: §5: up to this many tasks the single ready queue performs better (the guideline).
PUBLISHED_SINGLE_UNTIL: int = DATA["single_until"]["value"]
#: §4.2.1: beyond this many tasks the per-priority queues win in average and worst time.
PUBLISHED_BITMAP_FROM: int = DATA["bitmap_from"]["value"]
#: §4.2.1: the per-priority structure "may also take 9 µs" in the worst case (figure 1).
PUBLISHED_WORST_US: float = DATA["worst_us"]["value"]

#: The seed's figures: (figure, operation, cache, the seed's finding, translated).
PUBLISHED_FINDINGS: tuple[tuple[int, str, str, str], ...] = tuple(
    (f["figure"], f["op"], f["cache"], f["text"]) for f in DATA["findings"])

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


def _legend_below(fig: MplFigure, axes: Sequence[Any]) -> None:
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
                     ylabel: str) -> MplFigure:
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


def instructions_figure(doc: Mapping[str, Any]) -> MplFigure:
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


def by_prio_figure(doc: Mapping[str, Any], metric: str, n_index: int) -> MplFigure:
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
    size, conclusion = DATA["object_size_finding"], DATA["conclusion"]
    rows.append([Cell(f"{size['section']} object size", cls="pub"), Cell(size["text"], cls="pub"),
                 _size_text(doc)])
    rows.append([Cell(f"{conclusion['section']} conclusion", cls="pub"),
                 Cell(conclusion["text"], cls="pub"), _conclusion_text(doc)])
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


# --------------------------------------------------------------------------------------
# The seed's platform: the sh3-nocache cost model beside this machine
# --------------------------------------------------------------------------------------

#: What each comparison row reads: (platform, metric, the figure's label).
_PLATFORM_ROWS: tuple[tuple[str, str, str], ...] = (
    (readyq_platform.HOST, "instructions", "x86-host: instructions"),
    (readyq_platform.HOST, "ns_warm", "x86-host: ns, warm caches"),
    (readyq_platform.SH3, readyq_platform.CACHE_ON, "sh3 model: µs, cache on"),
    (readyq_platform.SH3, readyq_platform.CACHE_OFF, "sh3 model: µs, cache off (fitted W)"),
    (readyq_platform.SH3, readyq_platform.ACCESSES,
     "sh3 model: cache off, W without bound (memory accesses)"),
)


def crossover_verdict(ns: Sequence[int], c: Mapping[str, Any]) -> str:
    """The seed's crossover against ours: the seed's single queue keeps up to 5 tasks
    (§5) and the per-priority queues win beyond 10 (§4.2.1)."""
    until, frm = c["single_until"], c["bitmap_from"]
    beyond = next((n for n in ns if n > PUBLISHED_BITMAP_FROM), None)
    if until is None or until < PUBLISHED_SINGLE_UNTIL:
        return f"single list behind earlier than the seed's {PUBLISHED_SINGLE_UNTIL} tasks"
    if until > PUBLISHED_BITMAP_FROM or frm is None or (beyond is not None and frm > beyond):
        return f"single list keeps up beyond the seed's {PUBLISHED_BITMAP_FROM} tasks"
    return "as the seed"


def platform_table(doc: Mapping[str, Any], model: Mapping[str, Any] | None) -> Table:
    """Crossover, strict wins and ties of each platform's pair, against the seed's."""
    rows: list[list[Any]] = []
    for platform, metric, label in _PLATFORM_ROWS:
        if platform == readyq_platform.SH3 and model is None:
            continue
        single, bitmap = readyq_platform.PAIRS[platform]
        cmp = readyq.compare_pair(doc, single, bitmap, metric)
        for op, stats in cmp.items():
            for stat in ("avg", "worst"):
                c = stats[stat]
                rows.append([label, f"{single} vs {bitmap}", op, stat,
                             c["single_until"], c["bitmap_from"], c["single_wins"], c["ties"],
                             c["bitmap_wins"], crossover_verdict(doc["n"], c)])
    return Table(
        id="seed002-platform",
        caption="Where the single list stops being as fast, on this machine and on the "
                "seed's CPU (model), against the seed",
        columns=[Column("platform and metric"), Column("pair"), Column("operation"),
                 Column("statistic"),
                 Column("single as fast or faster up to N", "int"),
                 Column("bitmap as fast or faster from N", "int"),
                 Column("single strictly faster (N)", "int"), Column("ties (N)", "int"),
                 Column("bitmap strictly faster (N)", "int"),
                 Column("against the seed (≤ 5 single, > 10 bitmap)")],
        rows=rows,
    )


def model_parameters_table(model: Mapping[str, Any]) -> Table:
    rows: list[list[Any]] = []
    for name, p in model["parameters"].items():
        if p["kind"] == "fitted":
            t = p["fitted_to"]
            source = (f"fitted to the seed's figure {t['figure']} ({t['op']}, cache "
                      f"{t['cache']}, {t['statistic']}: the two equal at N = {t['n']}). "
                      f"{t['provenance']}")
            if p.get("reason"):
                source += f" — {p['reason']}"
        else:
            source = p["source"]
        rows.append([name, Cell(p["value"], kind="num", decimals=3), p["kind"], source])
    return Table(id="seed002-model-params",
                 caption="The sh3-nocache model's parameters: published, assumed, fitted",
                 columns=[Column("parameter"), Column("value", "num"), Column("kind"),
                          Column("source")], rows=rows)


def size_table(doc: Mapping[str, Any], model: Mapping[str, Any] | None) -> Table | None:
    cs = doc.get("code_size", {})
    if not cs.get("available"):
        return None
    seed_s = PUBLISHED_OBJECT_KB["single ready queue"]
    seed_b = PUBLISHED_OBJECT_KB["per-priority queues (TOPPERS/JSP)"]
    rows: list[list[Any]] = []
    pairs = [("x86-host", readyq_platform.PAIRS[readyq_platform.HOST])]
    if model is not None:
        pairs.append(("sh3 model's pair (x86-64 code)", readyq_platform.PAIRS[readyq_platform.SH3]))
    for label, (single, bitmap) in pairs:
        c = readyq.size_comparison(cs, single, bitmap)
        if c is None:
            continue
        rows.append([label, f"{single} vs {bitmap}", c["single_bytes"], c["bitmap_bytes"],
                     Cell(c["ratio"], kind="ratio"), c["direction"],
                     "as the seed" if c["as_seed"] else "unlike the seed"])
    rows.append([Cell("seed (SH3, task-management objects)", cls="pub"),
                 Cell("single ready queue vs TOPPERS/JSP", cls="pub"), None, None,
                 Cell(seed_s / seed_b, kind="ratio", cls="pub"), Cell("smaller", cls="pub"),
                 None])
    return Table(id="seed002-sizes", caption="Size direction: is the single list's code smaller?",
                 columns=[Column("platform"), Column("pair"),
                          Column("single list bytes", "int"), Column("bitmap lists bytes", "int"),
                          Column("single ÷ bitmap", "ratio"), Column("single list is"),
                          Column("against the seed")], rows=rows)


def model_figure(doc: Mapping[str, Any], model: Mapping[str, Any]) -> MplFigure:
    """Modelled µs of the pair, cache off (solid) and on (dashed), per operation."""
    plots.setup()
    fig, axes = plots.plt.subplots(1, 3, figsize=plots.FIGSIZE, sharey=True)
    pair = (model["pair"]["single"], model["pair"]["bitmap"])
    for ax, op in zip(axes, readyq.OPS, strict=True):
        for i, b in enumerate(pair):
            for metric, ls, tag in ((readyq_platform.CACHE_OFF, "-", "cache off"),
                                    (readyq_platform.CACHE_ON, "--", "cache on")):
                ax.plot(doc["n"], doc[op][b][metric]["avg"], ls=ls, marker="o", ms=3, lw=1.3,
                        color=plots.colour(i), label=f"{b}, {tag}")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(plots.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.axvspan(PUBLISHED_SINGLE_UNTIL, PUBLISHED_BITMAP_FROM, color="#f0c36d", alpha=0.25,
                   lw=0)
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("ready tasks N")
    axes[0].set_ylim(bottom=0)
    axes[0].set_ylabel("µs per operation (average), modelled")
    fig.suptitle("The seed's CPU (sh3-nocache model): lean single list vs JSP-searched "
                 "bitmap lists", fontsize=11)
    _legend_below(fig, axes)
    return fig


def _model_facts(doc: Mapping[str, Any], model: Mapping[str, Any]) -> dict[str, Any]:
    """Numbers the section's text quotes, all from the model and the measurement."""
    w = model["parameters"]["memory_wait_cycles"]
    pair = model["pair"]
    worst_act = doc["act_tsk"][pair["bitmap"]][readyq_platform.CACHE_ON]["worst"]
    n10 = doc["n"].index(PUBLISHED_BITMAP_FROM) if PUBLISHED_BITMAP_FROM in doc["n"] else None
    cmp = model["comparison"]
    moves = []
    for op in readyq.OPS:
        on = cmp[readyq_platform.CACHE_ON][op]["avg"]["single_until"]
        inf = cmp[readyq_platform.ACCESSES][op]["avg"]["single_until"]
        moves.append(f"{op} {on if on is not None else 'never'} → "
                     f"{inf if inf is not None else 'never'}")
    verdicts: dict[str, int] = {}
    for metric in (readyq_platform.CACHE_ON, readyq_platform.CACHE_OFF):
        for op in readyq.OPS:
            for stat in ("avg", "worst"):
                v = crossover_verdict(doc["n"], cmp[metric][op][stat])
                verdicts[v] = verdicts.get(v, 0) + 1
    return {"wait": w["value"], "wait_reason": w.get("reason"),
            "verdicts": "; ".join(f"{k}: {v}" for k, v in sorted(verdicts.items())),
            "bitmap_worst_act_us": max(worst_act) if n10 is None else worst_act[n10],
            "bitmap_worst_share": (max(worst_act) if n10 is None else worst_act[n10])
            / PUBLISHED_WORST_US,
            "moves": "; ".join(moves), "single": pair["single"], "bitmap": pair["bitmap"]}


def _figures(ctx: Context, doc: Mapping[str, Any], n_index: int) -> list[Figure]:
    """Figures 1–6 as the seed drew them, the instruction counts, and the cost against the
    priority involved."""
    figs = []
    for fig_no, (op, cache) in enumerate(((op, c) for op in readyq.OPS for c in ("on", "off")),
                                         start=1):
        metric, label = VARIANT[cache]
        fig = avg_worst_figure(doc, op, metric, f"Fig. {fig_no}: {OP_TITLE[op]}, {label} "
                               f"(seed: cache {cache})", _metric_label(metric))
        figs.append(ctx.save_figure(fig, f"seed002-fig{fig_no}-{op}-{metric}",
                                    f"Figure {fig_no} (seed: {op}, cache {cache}): average and "
                                    f"worst {_metric_label(metric)} against the number of "
                                    "ready tasks"))
    counted = bool(doc["instructions"].get("available"))
    if counted:
        figs.append(ctx.save_figure(instructions_figure(doc), "seed002-instructions",
                                    "Instruction counts (exact, repeatable): average and worst "
                                    "against N"))
    metric = "instructions" if counted else "ns_warm"
    figs.append(ctx.save_figure(by_prio_figure(doc, metric, n_index), "seed002-by-prio",
                                "The cost against the priority involved (the seed's second "
                                "axis)"))
    return figs


def _machine_facts(doc: Mapping[str, Any]) -> dict[str, Any]:
    m = doc["machine"]
    ghz = (m.get("clock") or {}).get("ticks_per_ns")
    return {"cpu": m.get("cpu"), "cpus": m.get("cpus"),
            "tsc": f" (time-stamp counter at {ghz:.2f} GHz)" if ghz else ""}


def section(ctx: Context) -> SectionOutput:
    """Measure the ready queues and render seed 002's figures, tables and findings."""
    from schedlab.report.context import SectionOutput

    values: dict[str, Any] = {"citation": CITATION, "platform": PLATFORM,
                              "trials": PUBLISHED_TRIALS, "problem": ""}
    try:
        doc = readyq.measure(ctx.quick)
    except readyq.ProbeError as e:
        values["problem"] = str(e)
        return SectionOutput(SECTION_ID, TITLE, render("seed002.html.j2", **values))
    n_index = max((i for i, n in enumerate(doc["n"]) if n <= BY_PRIO_N), default=0)
    model: dict[str, Any] | None = None
    model_reason = ""
    if readyq_platform.counted(doc):
        model = readyq_platform.apply(doc, readyq_platform.SH3)
    else:
        model_reason = "the model is reckoned from instruction and data-access counts, which " \
                       "are unavailable here"
    figs = _figures(ctx, doc, n_index)
    model_figs = []
    if model is not None:
        model_figs.append(ctx.save_figure(model_figure(doc, model), "seed002-sh3-model",
                                          "The seed's CPU, modelled: average µs against N, "
                                          "cache off and on"))
    cs = doc.get("code_size", {})
    values.update(
        quick=ctx.quick, doc=doc, instructions=doc["instructions"], timing=doc.get("timing", {}),
        figs=figs, crossover=crossover_table(doc), selected=selected_table(doc),
        code_size=code_size_table(doc), code_size_method=cs.get("method", ""),
        code_size_reason=cs.get("reason"), findings=findings_table(doc, n_index),
        machine=_machine_facts(doc), beyond=_beyond_text(doc), where=_where_text(doc),
        bitmap_from=PUBLISHED_BITMAP_FROM, single_until=PUBLISHED_SINGLE_UNTIL,
        worst_us=PUBLISHED_WORST_US, model=model, model_reason=model_reason,
        model_figs=model_figs, platform_cmp=platform_table(doc, model),
        model_params=model_parameters_table(model) if model else None,
        sizes=size_table(doc, model),
        facts=_model_facts(doc, model) if model else {})
    return SectionOutput(SECTION_ID, TITLE, render("seed002.html.j2", **values),
                         ctx.figure_files(*figs, *model_figs))

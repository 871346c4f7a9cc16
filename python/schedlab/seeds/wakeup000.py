"""Seed 000's original benchmark: an RT thread wakes RT or non-RT waiters with
``pthread_cond_broadcast()`` while ``hackbench 10`` loads the machine; the wake-up
latency per policy beside the seed's tables (slides "実験結果 (RT)" and "(non-RT)", raw
and after "実験結果 修正", 6σ-filtered).

Every statistic is the core's: the run's headline (``stats_ns``, pooled over the waiter
tasks), or :func:`schedlab._core.stats` over the waiters' samples when a run has no
headline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import _core, api, plots
from schedlab.report import Cell, Column, Table, fmt, render
from schedlab.report.context import Part, RunOutcome
from schedlab.result import Result
from schedlab.seeds.hackbench000 import policy_cell
from schedlab.seeds.seed000 import (
    FILTER_LABEL,
    PUBLISHED_WAKEUP,
    SEED_SCHEDULERS,
    WAITER_LABEL,
    WAITERS,
    Settings,
    WakeupFigures,
    agreement_phrase,
    on_board,
    policy_sweep,
    ranking,
    reconstruction_evidence,
    row_order,
    seed_name_of,
    slide_of,
)

if TYPE_CHECKING:
    from schedlab.report.context import Context, Figure

Stats = dict[str, Any]

#: The sweep (a spec per waiter class × every policy) and its dataset's name.
SWEEP = "seed000-wakeup"


@dataclass
class WakeupRun:
    """Wake-up latencies of one policy's run (µs)."""

    stats: Stats | None = None
    samples: list[float] = field(default_factory=list)
    error: str | None = None
    #: Totals over the waiter tasks (seconds): runnable but not running, and run time.
    waiting_s: float | None = None
    cpu_s: float | None = None
    #: Simulated time the run covered (seconds).
    sim_s: float | None = None
    #: Broadcasts made, and those that woke no waiter (it was not waiting yet).
    broadcasts: int | None = None
    lost: int | None = None


@dataclass
class WakeupPart(Part):
    #: Raw mean wake-up latency (µs) per waiter kind and policy.
    raw_means: dict[str, dict[str, float | None]] = field(default_factory=dict)
    #: The raw statistics (µs, the 6σ-filtered ones inside) per waiter kind and policy.
    stats: dict[str, dict[str, Stats | None]] = field(default_factory=dict)
    #: Whether a waiter completed no wake-up under some policy.
    starved: bool = False


def waiter_prefix(spec: Mapping[str, Any]) -> str:
    """The name prefix of the waiter tasks: the spec's wake-up headline's ``task_prefix``,
    else ``"waiter"``."""
    head = (spec.get("schedlab") or {}).get("headline") or {}
    return str(head.get("task_prefix") or "waiter")


def stats_us(st: Mapping[str, Any]) -> Stats:
    """A STATS object in ns as µs (``count`` stays a count)."""
    out: Stats = {}
    for k, v in st.items():
        if isinstance(v, Mapping):
            out[k] = stats_us(v)
        else:
            out[k] = v if k == "count" or v is None else float(v) / 1000.0
    return out


def _latencies_ns(result: Result, tids: Sequence[int]) -> list[int]:
    """Every started activation of the waiters: release → first instruction, ns."""
    import polars as pl

    df = result.samples
    sel = df.filter(pl.col("tid").is_in(list(tids)) & pl.col("wakeup_latency_ns").is_not_null())
    return [int(x) for x in sel["wakeup_latency_ns"].to_list()]


def broadcasts_of(result: Result, broadcaster: str = "broadcaster") -> int | None:
    """How many broadcasts the run made: the broadcaster's completed activations."""
    import polars as pl

    tids = [t["tid"] for t in result.json.get("tasks", []) if t.get("name") == broadcaster]
    if not tids:
        return None
    df = result.samples
    return int(df.filter(pl.col("tid").is_in(tids) & (pl.col("end_ns") >= 0)).height)


def wakeup_from_result(result: Result, prefix: str) -> WakeupRun:
    """The waiters' pooled wake-up latencies (µs), how long they waited for and used the
    CPU, and how many broadcasts woke nobody."""
    waiters = [t for t in result.json.get("tasks", [])
               if str(t.get("name", "")).startswith(prefix)]
    if not waiters:
        return WakeupRun(error=f"no task named {prefix}* in the result")
    lat = _latencies_ns(result, [t["tid"] for t in waiters])
    head = result.headline or {}
    stats_ns = head.get("stats_ns") or _core.stats(lat)
    sim_ns = result.run.get("sim_ns")
    made = broadcasts_of(result)
    return WakeupRun(
        stats=stats_us(stats_ns), samples=[x / 1000.0 for x in lat],
        waiting_s=sum(t.get("wait_ns", 0) for t in waiters) / 1e9,
        cpu_s=sum(t.get("cpu_ns", 0) for t in waiters) / 1e9,
        sim_s=sim_ns / 1e9 if sim_ns is not None else None,
        broadcasts=made, lost=max(made - len(lat), 0) if made is not None else None)


def select(stats: Stats | None, flt: str) -> Stats | None:
    """The raw (``flt == "raw"``) or the 6σ-filtered part of a STATS object."""
    if stats is None:
        return None
    return stats if flt == "raw" else stats.get("filtered6sigma")


def pick(r: WakeupRun | None, flt: str) -> Stats | None:
    """The raw or the 6σ-filtered statistics of a run (the latter with ``raw_count``)."""
    stats = r.stats if r is not None else None
    st = select(stats, flt)
    if flt == "raw" or stats is None:
        return st
    return {**st, "raw_count": stats.get("count")} if st else None


# --------------------------------------------------------------------------------------
# Text under the tables, computed from the numbers
# --------------------------------------------------------------------------------------


def _holders(ranked: Sequence[tuple[str, float]], value: float) -> str:
    """Who holds ``value`` in a ranking: one name, a tie of a few, or a count."""
    names = [n for n, v in ranked if v == value]
    if len(names) <= 3:
        return " and ".join(names) + (" (tied)" if len(names) > 1 else "")
    return f"{len(names)} policies (tied)"


def _summary(who: str, means: Mapping[str, float | None], maxima: Mapping[str, float | None],
             digits_max: int | None = None) -> str:
    """Lowest and highest mean and the worst single wake-up, naming ties as ties: when
    every policy has the same mean, that is said, not a lowest and a highest."""
    sr, sm = ranking(means), ranking(maxima)
    lo, hi, worst = sr[0][1], sr[-1][1], sm[-1][1]
    if lo == hi:
        means_text = (f"mean {fmt(lo, 'us')} µs under every policy" if len(sr) > 1
                      else f"mean {sr[0][0]} ({fmt(lo, 'us')} µs)")
    else:
        means_text = (f"lowest mean {_holders(sr, lo)} ({fmt(lo, 'us')} µs), highest "
                      f"{_holders(sr, hi)} ({fmt(hi, 'us')} µs)")
    worst_by = ("every policy" if len(sm) > 1 and sm[0][1] == worst
                else _holders(sm, worst))
    return (f"{who}: {means_text}; worst single wake-up {worst_by} "
            f"({fmt(worst, 'us', digits_max)} µs).")


def _seed_summary(published: Mapping[str, WakeupFigures]) -> str:
    return _summary("Seed", {s: f.avg for s, f in published.items()},
                    {s: f.max for s, f in published.items()}, 0)


def _sim_summary(sim: Mapping[str, Stats | None]) -> str:
    return _summary("Simulation", {s: (st or {}).get("mean") for s, st in sim.items()},
                    {s: (st or {}).get("max") for s, st in sim.items()})


def wakeup_text(flt: str, published: Mapping[str, WakeupFigures],
                simulated: Mapping[str, Stats | None], extra: Mapping[str, Stats | None]) -> str:
    """The paragraph under a wake-up table, from the numbers (means and maxima)."""
    parts = [_seed_summary(published)]
    sim_all = {**simulated, **extra}
    silent = [s for s, st in sim_all.items() if st is not None and not st.get("count")]
    if silent:
        parts.append("No wake-up of the waiters completed under " + ", ".join(silent)
                     + " (n = 0; see the note below the tables).")
    if not ranking({s: (st or {}).get("mean") for s, st in sim_all.items()}):
        if not silent:
            parts.append("No simulated run produced wake-up samples yet.")
        return " ".join(parts)
    parts.append(_sim_summary(sim_all))
    phrase = agreement_phrase({s: f.avg for s, f in published.items()},
                              {s: (st or {}).get("mean") for s, st in simulated.items()})
    if phrase:
        parts.append(f"Ordering of the means: {phrase}.")
    span = span_text({s: f.avg for s, f in published.items()},
                     {s: (st or {}).get("mean") for s, st in simulated.items()})
    if span:
        parts.append(span)
    dropped = [f"{s} {st['raw_count'] - st['count']} of {st['raw_count']}"
               for s, st in sim_all.items() if flt == "6sigma" and st and st.get("raw_count")]
    if dropped:
        parts.append("Samples the 6σ filter rejected in the simulation: " + ", ".join(dropped)
                     + " (the seed: 1–4 of 1,000).")
    return " ".join(parts)


def span_text(published: Mapping[str, float | None],
              simulated: Mapping[str, float | None]) -> str:
    """How far apart the seed schedulers' means lie, in the seed and in the simulation,
    over the schedulers both give a mean for: an ordering can agree while its size does
    not."""
    common = [(s, float(p), float(q)) for s, p in published.items()
              if p is not None and (q := simulated.get(s)) is not None]
    if len(common) < 2:
        return ""
    pub, sim = [c[1] for c in common], [c[2] for c in common]
    return (f"Between the highest and the lowest mean of {', '.join(c[0] for c in common)}: "
            f"{fmt(max(pub) - min(pub), 'us')} µs in the seed, "
            f"{fmt(max(sim) - min(sim), 'us')} µs in the simulation.")


def rt_vs_nonrt_text(sim: Mapping[str, Mapping[str, Stats | None]]) -> str:
    """Does making the waiters RT help? Seed vs simulation, raw means; and the seed's
    conclusion that RT waiters get a response under 1 ms (after the 6σ filter)."""
    pub = PUBLISHED_WAKEUP
    n = len(SEED_SCHEDULERS)
    better = [s for s in SEED_SCHEDULERS if pub["rt"]["raw"][s].avg < pub["nonrt"]["raw"][s].avg]
    parts = [f"In the seed, RT waiters woke faster on average (raw) than non-RT waiters under "
             f"{len(better)} of {n} schedulers ({', '.join(better)})."]
    pairs = {p: ((sim["rt"].get(p) or {}).get("mean"),
                 (sim.get("nonrt", {}).get(p) or {}).get("mean")) for p in sim.get("rt", {})}
    both = {p: rt < nrt for p, (rt, nrt) in pairs.items() if rt is not None and nrt is not None}
    if both:
        faster = [p for p, b in both.items() if b]
        parts.append(f"In the simulation, under {len(faster)} of {len(both)} policies"
                     + (f" ({', '.join(faster)})" if faster else "") + ".")
    pub_ok = [s for s in SEED_SCHEDULERS if pub["rt"]["6sigma"][s].max <= 1000]
    parts.append(f"The seed concluded that RT waiters can get a response under 1 ms: after "
                 f"the 6σ filter, the worst RT wake-up was under 1 ms for {len(pub_ok)} of "
                 f"{n} schedulers.")
    maxima = {p: ((st or {}).get("filtered6sigma") or {}).get("max")
              for p, st in sim.get("rt", {}).items()}
    known = {p: m for p, m in maxima.items() if m is not None}
    if known:
        ok = [p for p, m in known.items() if m <= 1000]
        parts.append(f"Simulated: under {len(ok)} of {len(known)} policies"
                     + (f" ({', '.join(ok)})" if ok else "") + ".")
        if len(known) > 1 and len(set(known.values())) == 1:
            parts.append("Every policy gives the same worst RT wake-up: the RT class decides it "
                         "alike under all of them, so this is one fact repeated, not agreement "
                         "between schedulers.")
    return " ".join(parts)


def starvation_text(runs: Mapping[str, Mapping[str, WakeupRun]]) -> str:
    """Say where a waiter completed no wake-up, and how long it sat runnable meanwhile."""
    parts = []
    for w in WAITERS:
        for policy, r in runs.get(w, {}).items():
            if r.stats is None or r.stats.get("count"):
                continue
            what = f"{WAITER_LABEL[w]} under {policy}: no wake-up completed"
            if r.waiting_s is not None and r.sim_s:
                what += (f"; the waiters were runnable but not running for "
                         f"{r.waiting_s:,.3f} s and ran for {r.cpu_s or 0:,.3f} s of the "
                         f"{r.sim_s:,.3f} s simulated")
            parts.append(what + ".")
    return " ".join(parts)


# --------------------------------------------------------------------------------------
# Runs, tables and the figure
# --------------------------------------------------------------------------------------


def board_spec(ctx: Context, st: Settings, waiters: str) -> str:
    """The broadcast test on the seed's board profile."""
    text = ctx.generate("broadcast-wakeup", rt=(waiters == "rt"), **st.wakeup)
    return api.edit_spec(text, on_board)


def _run(ctx: Context, st: Settings, policies: Sequence[str]
         ) -> tuple[dict[str, dict[str, WakeupRun]], dict[str, str], list[RunOutcome]]:
    """Every policy under RT and non-RT waiters: the latencies, generation errors, runs."""
    specs: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    errors: dict[str, str] = {}
    for w in WAITERS:
        try:
            text = board_spec(ctx, st, w)
        except Exception as exc:  # shown on the page
            errors[w] = f"{type(exc).__name__}: {exc}"
            continue
        prefixes[w] = waiter_prefix(api.spec_view(text))
        specs[f"seed000-wakeup-{w}"] = text
    found: dict[str, dict[str, WakeupRun]] = {w: {} for w in WAITERS}
    runs: list[RunOutcome] = []
    try:
        if specs:
            runs = ctx.sweep(policy_sweep(SWEEP, specs, policies, st.seed, samples=True),
                             "seed 000: broadcast wake-up")
    except ValueError as exc:  # a spec or policy the sweep refuses: shown on the page
        errors.update({w: f"{type(exc).__name__}: {exc}" for w in prefixes})
    for o in runs:
        w = o.request.spec_name.removeprefix("seed000-wakeup-")
        found[w][o.request.scheduler] = (
            wakeup_from_result(o.result, prefixes[w]) if o.ok and o.result is not None
            else WakeupRun(error=o.error or "no result"))
    return found, errors, runs


def cells(r: WakeupRun | None, flt: str) -> list[Any]:
    """A run's seven cells (avg, min, max, stddev, p99 in µs, count, lost) under filter
    ``flt``; a failed run is one cell naming its error."""
    if r is not None and r.error:
        short = r.error if len(r.error) < 60 else r.error[:57] + "…"
        return [Cell(f"failed: {short}", kind="text", cls="error", title=r.error),
                *[None] * 6]
    st = pick(r, flt)
    if st is None:
        return [None] * 7
    lost = r.lost if r is not None else None
    return [st["mean"], st["min"], st["max"], st["stddev"], st["p99"],
            Cell(st["count"], kind="int"),
            Cell(lost, kind="int") if lost is not None else None]


def _table(ctx: Context, w: str, flt: str, policies: Sequence[str],
           runs: Mapping[str, WakeupRun]) -> Table:
    rows = []
    for seed_name, policy in row_order(policies):
        pub = PUBLISHED_WAKEUP[w][flt].get(seed_name) if seed_name else None
        pub_cells = ([Cell(pub.avg, decimals=2), Cell(pub.min, decimals=0),
                      Cell(pub.max, decimals=0), Cell(pub.stddev, decimals=0)]
                     if pub else [None] * 4)
        sim = cells(runs.get(policy) if policy else None, flt)
        rows.append([seed_name or "—", policy_cell(seed_name, policy, ctx), *pub_cells, *sim])
    return Table(
        id=f"seed000-wakeup-{w}-{flt}",
        caption=f"Wake-up latency, {WAITER_LABEL[w]}, {FILTER_LABEL[flt]} (µs)",
        columns=[Column("seed scheduler"), Column("schedlab policy"),
                 Column("avg", "us", cls="pub"), Column("min", "us", cls="pub"),
                 Column("max", "us", cls="pub"), Column("stddev", "us", cls="pub"),
                 Column("avg", "us"), Column("min", "us"), Column("max", "us"),
                 Column("stddev", "us"), Column("p99", "us"), Column("n", "int"),
                 Column("lost", "int")],
        groups=[("", 2, ""), ("seed (published, reconstructed)", 4, "pub"),
                ("schedlab (simulated, board profile)", 7, "")],
        rows=rows)


def _block(ctx: Context, w: str, flt: str, policies: Sequence[str],
           runs: Mapping[str, WakeupRun], generated: bool) -> dict[str, Any]:
    """One table with its provenance and the paragraph under it."""
    simulated = {seed_name_of(p): pick(r, flt) for p, r in runs.items() if seed_name_of(p)}
    extra = {p: pick(r, flt) for p, r in runs.items() if seed_name_of(p) is None}
    slide, which = slide_of(w, flt)
    return {"table": _table(ctx, w, flt, policies, runs), "slide": slide, "which": which,
            "specs": [f"seed000-wakeup-{w}"] if policies and generated else [],
            "text": wakeup_text(flt, PUBLISHED_WAKEUP[w][flt], simulated, extra)}


def _figure(ctx: Context, policies: Sequence[str],
            found: Mapping[str, Mapping[str, WakeupRun]]) -> Figure:
    panels = {WAITER_LABEL[w]: {p: found[w][p].samples for p in policies if p in found[w]}
              for w in WAITERS}
    fig = plots.latency_cdf(panels, title="Broadcast wake-up latency, CDF per policy")
    return ctx.save_figure(fig, "seed000-wakeup-cdf",
                           "Wake-up latency distribution per policy (all samples): CDF above, "
                           "tail (fraction ≥ x, log-log) below; RT vs non-RT waiters.")


def part(ctx: Context, st: Settings, policies: Sequence[str]) -> WakeupPart:
    """The broadcast wake-up test under every policy, beside the seed's four tables."""
    found: dict[str, dict[str, WakeupRun]] = {w: {} for w in WAITERS}
    errors: dict[str, str] = {}
    runs: list[RunOutcome] = []
    if policies:
        found, errors, runs = _run(ctx, st, policies)
    blocks = [_block(ctx, w, flt, policies, found[w], w not in errors)
              for w in WAITERS for flt in ("raw", "6sigma")]
    means = {w: {p: pick(r, "raw") for p, r in found[w].items()} for w in WAITERS}
    starved = starvation_text(found)
    fig = _figure(ctx, policies, found)
    html = render(
        "seed000_wakeup.html.j2", evidence=reconstruction_evidence(),
        options=", ".join(f"{k}={v}" for k, v in st.wakeup.items()),
        errors={WAITER_LABEL[w]: e for w, e in errors.items()}, blocks=blocks,
        rt_vs_nonrt=rt_vs_nonrt_text(means), starved=starved, fig=fig)
    return WakeupPart(
        html=html, files=ctx.figure_files(fig), runs=runs,
        raw_means={w: {p: (s or {}).get("mean") for p, s in m.items()} for w, m in means.items()},
        stats=means,
        starved=bool(starved))

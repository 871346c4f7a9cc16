"""The seed-004 section of the report: a Deadline I/O scheduler with a low-priority class
(``deadline-lowprio``) beside Linux 3.12's Deadline, on the seed's HDD and SSD.

Four experiments, as the seed's slides run them:

- isolation: the database (the ``oltp`` generator, a sysbench-like load on InnoDB pages)
  alone and beside a maintenance job reading sequentially in the idle I/O class; its TPS
  beside the job as a percentage of its TPS alone, against the seed's > 99 % (proposed) and
  < 30 % (Deadline), per device; plus the same question under the other elevators that
  know I/O priorities;
- throughput over time: a normal and an idle-class sequential reader of one file each,
  MB/s per second, under both schedulers;
- overhead: ``deadline-lowprio`` / ``deadline`` throughput for sequential and random reads
  and writes with no low-priority load;
- throughput against α.

Every number is computed from the runs; the seed's figures and their provenance come from
``data/seed004.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import api, plots
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import RunOutcome, RunRequest, runs_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from schedlab.report.context import Context, Figure, SectionOutput

SECTION_ID = "seed004"
TITLE = ("Seed 004 — a Deadline I/O scheduler with a low-priority class "
         "(Takamura, Ugawa, Iwasaki, IPSJ SIGOS 2014)")

DATA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "seed004.json").read_text(encoding="utf-8"))

#: The CPU scheduler every run uses (the seed's kernel is 3.12: CFS).
CPU_POLICY = "linux-cfs"
#: The seed's two devices, by the generator's model name.
DEVICES = {"hdd": "HDD (Hitachi HDP72503)", "ssd": "SSD (Intel SSDSC2CT240A4)"}
#: The two schedulers the seed compares.
SCHEDULERS = ("deadline", "deadline-lowprio")
#: Elevators beside them that know I/O priority classes and are simulated.
MODERN = ("mq-deadline", "cfq", "bfq")
#: The maintenance job's and the timeline readers' request size: Linux's default
#: read-ahead window (128 KiB), one request at a time.
READ_BYTES = 128 * 1024
#: Where the maintenance job's and the timeline readers' files start on the device (far
#: from the database's tables, which start at byte 0).
FILE_OFFSETS = (100 << 30, 150 << 30)
#: The maintenance job's file: as large as the timeline's (the seed reads a 5 GB file
#: there), more than any run here reads.
MAINTENANCE_FILE = "maintenance.log"


@dataclass(frozen=True)
class Sizes:
    """How long each experiment runs."""

    oltp_s: int
    timeline_bytes: int
    overhead_s: int
    alphas: tuple[int, ...]
    alpha_s: int


def sizes(quick: bool) -> Sizes:
    if quick:
        return Sizes(oltp_s=2, timeline_bytes=256 << 20, overhead_s=1, alphas=(10, 200, 300),
                     alpha_s=2)
    return Sizes(oltp_s=20, timeline_bytes=int(DATA["timeline"]["file_bytes"]),
                 overhead_s=int(DATA["overhead"]["seconds"]),
                 alphas=tuple(DATA["alpha"]["alpha_ms"]), alpha_s=20)


def lowprio_params(alpha_ms: int, beta_ms: int) -> dict[str, str]:
    return {"alpha_ms": str(alpha_ms), "beta_ms": str(beta_ms)}


def _elevator(spec: dict[str, Any], dev: str, scheduler: str,
              params: Mapping[str, str]) -> None:
    d = spec["schedlab"]["devices"][dev]
    d["scheduler"] = scheduler
    if params:
        d["params"] = dict(params)


def reader_task(offset: int, count: int | None, idle: bool) -> dict[str, Any]:
    """A sequential reader of ``count`` requests (``None``: for ever) from ``offset``,
    in the idle I/O class when ``idle``."""
    first = {"schedlab:io": {"dev": "db", "op": "read", "bytes": READ_BYTES, "offset": offset}}
    rest: dict[str, Any] = {"loop": -1 if count is None else max(count - 1, 1),
                            "schedlab:io": {"dev": "db", "op": "read", "bytes": READ_BYTES,
                                            "offset": "seq"}}
    t: dict[str, Any] = {"loop": 1, "phases": {"open": first, "stream": rest}}
    if idle:
        t["schedlab:ioprio"] = {"class": "idle"}
    return t


# --------------------------------------------------------------------------------------
# Isolation: the database beside an idle-class maintenance job
# --------------------------------------------------------------------------------------


def oltp_text(ctx: Context, device: str, seconds: int) -> str:
    return ctx.generate("oltp", device=device, time=seconds, mode="read_write")


def maintenance_task() -> dict[str, Any]:
    """The maintenance job as ``ionice -c 3 cat FILE > /dev/null`` runs it: ``read(2)``
    calls of ``READ_BYTES`` through the page cache, whose read-ahead (Linux's on-demand
    window, up to ``queue/read_ahead_kb`` = 128 KiB) keeps the next window in flight while
    the job copies the last one, in the idle I/O class, for ever."""
    return {"loop": -1, "schedlab:ioprio": {"class": "idle"},
            "schedlab:io": {"file": MAINTENANCE_FILE, "op": "read", "bytes": READ_BYTES,
                            "offset": "seq", "direct": False}}


def isolation_spec(base: str, scheduler: str, params: Mapping[str, str], job: bool) -> str:
    def edit(s: dict[str, Any]) -> None:
        _elevator(s, "db", scheduler, params)
        if job:
            s["schedlab"].setdefault("files", {})[MAINTENANCE_FILE] = {
                "dev": "db", "offset": FILE_OFFSETS[0],
                "bytes": int(DATA["timeline"]["file_bytes"]) // 4096 * 4096}
            s["tasks"]["maintenance"] = maintenance_task()
    return api.edit_spec(base, edit)


def isolation_requests(ctx: Context, size: Sizes) -> dict[tuple[str, str, bool], RunRequest]:
    iso = DATA["isolation"]
    out: dict[tuple[str, str, bool], RunRequest] = {}
    for dev in DEVICES:
        base = oltp_text(ctx, dev, size.oltp_s)
        for sched in (*SCHEDULERS, *MODERN):
            params = (lowprio_params(iso["alpha_ms"], iso["beta_ms"])
                      if sched == "deadline-lowprio" else {})
            for job in (False, True):
                name = f"seed004-oltp-{dev}-{sched}-{'job' if job else 'alone'}"
                out[(dev, sched, job)] = RunRequest(
                    name, isolation_spec(base, sched, params, job), CPU_POLICY, samples=False,
                    label=f"seed004 {dev} {sched} {'beside the job' if job else 'alone'}")
    return out


def tps(run: RunOutcome | None) -> float | None:
    if run is None or not run.ok or run.result is None:
        return None
    h = run.result.headline
    return None if h is None or h.get("value") is None else float(h["value"])


def ratio(alone: float | None, beside: float | None) -> float | None:
    if alone is None or beside is None or alone <= 0:
        return None
    return 100.0 * beside / alone


def agrees(value: float | None, claim: Mapping[str, Any]) -> bool:
    """Strictly on the claim's side of its bound (a missing value never agrees)."""
    if value is None:
        return False
    bound = float(claim["percent"])
    return value > bound if claim["op"] == ">" else value < bound


def isolation_results(reqs: Mapping[tuple[str, str, bool], RunRequest],
                      by_label: Mapping[str, RunOutcome]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for (dev, sched, job), req in reqs.items():
        if job:
            continue
        alone = tps(by_label[req.label])
        beside = tps(by_label[reqs[(dev, sched, True)].label])
        job_run = by_label[reqs[(dev, sched, True)].label]
        out[(dev, sched)] = {"alone": alone, "beside": beside, "ratio": ratio(alone, beside),
                             "job": job_mbps(job_run)}
    return out


def isolation_table(res: Mapping[tuple[str, str], Mapping[str, Any]]) -> Table:
    claims = DATA["isolation"]["claims"]
    rows: list[list[Any]] = []
    for (dev, sched), r in res.items():
        claim = claims.get(sched)
        seed = f"{claim['op']} {claim['percent']} %" if claim else "—"
        verdict = _verdict(r, claim) if claim else "—"
        rows.append([DEVICES[dev], sched, r["alone"], r["beside"],
                     Cell(r["ratio"], kind="num", decimals=1,
                          cls={"agrees": "good", "disagrees": "bad"}.get(verdict, "")),
                     Cell(seed, cls="pub"), verdict, r["job"]])
    return Table(
        id="seed004-isolation",
        caption="The database's TPS alone and beside an idle-class sequential reader "
                "(α = {alpha_ms} ms, β = {beta_ms} ms for deadline-lowprio)".format(
                    **DATA["isolation"]),
        columns=[Column("device"), Column("I/O scheduler"), Column("TPS alone", "num"),
                 Column("TPS beside the job", "num"), Column("beside / alone %", "num"),
                 Column("seed", cls="pub"), Column("verdict"), Column("job MB/s", "num")],
        rows=rows)


STARVED = "not comparable: the job read nothing"


def _verdict(r: Mapping[str, Any], claim: Mapping[str, Any]) -> str:
    """A run where the job read nothing cannot show throttling: it is not counted."""
    if r.get("job") == 0.0:
        return STARVED
    return "agrees" if agrees(r["ratio"], claim) else "disagrees"


def agreement_lines(res: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[str]:
    """One line per claim of the seed: on how many devices the simulation agrees."""
    lines = []
    for sched, claim in DATA["isolation"]["claims"].items():
        devs = [d for d in DATA["isolation"]["devices"] if (d, sched) in res]
        verdicts = {d: _verdict(res[(d, sched)], claim) for d in devs}
        ok = [d for d in devs if verdicts[d] == "agrees"]
        out = [d for d in devs if verdicts[d] == STARVED]
        lines.append(f"{sched}: the seed says {claim['op']} {claim['percent']} % "
                     f"({claim['text']}); the simulation agrees on {len(ok)} of {len(devs)} "
                     f"devices" + (f" ({', '.join(ok)})" if ok else "")
                     + (f"; not comparable on {', '.join(out)} (the job read nothing)"
                        if out else ""))
    return lines


def starved_jobs(res: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[str]:
    """The runs where the maintenance job read nothing beside the database: there the
    ratio says nothing about how the elevator throttles it."""
    return [f"{DEVICES[dev]}, {sched}" for (dev, sched), r in res.items() if r["job"] == 0.0]


# --------------------------------------------------------------------------------------
# Throughput over time: a normal and an idle-class reader of one file each
# --------------------------------------------------------------------------------------

TIMELINE_DEVICE = "ssd"


def timeline_requests(ctx: Context, size: Sizes) -> dict[str, RunRequest]:
    tl = DATA["timeline"]
    count = size.timeline_bytes // READ_BYTES
    base = ctx.generate("oltp", device=TIMELINE_DEVICE, threads=1, events=1)
    out = {}
    for sched in SCHEDULERS:
        params = lowprio_params(tl["alpha_ms"], tl["beta_ms"]) if sched != "deadline" else {}

        def edit(s: dict[str, Any], sched: str = sched,
                 params: Mapping[str, str] = params) -> None:
            _elevator(s, "db", sched, params)
            s["global"]["duration"] = -1
            s["schedlab"].pop("headline", None)
            s["tasks"] = {"normal": reader_task(FILE_OFFSETS[0], count, idle=False),
                          "lowprio": reader_task(FILE_OFFSETS[1], count, idle=True)}
        out[sched] = RunRequest(f"seed004-timeline-{sched}", api.edit_spec(base, edit),
                                CPU_POLICY, label=f"seed004 timeline {sched}")
    return out


def per_second_mbps(run: RunOutcome, task: str) -> list[float] | None:
    """MB/s of ``task`` in each whole second of the run: its requests completed in the
    second (each completion wakes it: one activation) × the request size. One point per
    second from 0 to the end of the run."""
    if not run.ok or run.result is None:
        return None
    res = run.result
    seconds = max(1, -(-int(res.run["sim_ns"]) // 1_000_000_000))
    s = res.samples
    wakes = s.filter((s["task"] == task) & (s["kind"] == 2))["release_ns"].to_list()
    counts = [0] * seconds
    for ns in wakes:
        counts[min(int(ns) // 1_000_000_000, seconds - 1)] += 1
    return [c * READ_BYTES / 1e6 for c in counts]


def timeline_series(runs: Mapping[str, RunOutcome]) -> dict[str, dict[str, list[float] | None]]:
    return {sched: {t: per_second_mbps(run, t) for t in ("normal", "lowprio")}
            for sched, run in runs.items()}


def finish_second(series: Sequence[float] | None) -> int | None:
    """The last second in which the reader read anything."""
    if not series:
        return None
    nz = [i for i, v in enumerate(series) if v > 0]
    return nz[-1] + 1 if nz else None


def timeline_table(series: Mapping[str, Mapping[str, list[float] | None]]) -> Table:
    """One row per second: each reader's MB/s under each scheduler (0 after it finished)."""
    cols = [series[s][t] or [] for s in SCHEDULERS for t in ("normal", "lowprio")]
    n = max((len(c) for c in cols), default=0)
    rows = [[k + 1, *[c[k] if k < len(c) else 0.0 for c in cols]] for k in range(n)]
    return Table(id="seed004-timeline",
                 caption="MB/s in each second (the row's second ends at its number)",
                 columns=[Column("second", "int")]
                 + [Column(f"{t} ({s}) MB/s", "num") for s in SCHEDULERS
                    for t in ("normal", "lowprio")],
                 rows=rows)


def timeline_figure(series: Mapping[str, Mapping[str, list[float] | None]]) -> MplFigure:
    plots.setup()
    fig, axes = plots.plt.subplots(1, 2, figsize=plots.FIGSIZE, sharey=True)
    for ax, sched in zip(axes, SCHEDULERS, strict=True):
        for i, task in enumerate(("normal", "lowprio")):
            ys = series[sched][task] or []
            ax.plot(range(1, len(ys) + 1), ys, marker=".", color=plots.colour(i),
                    label=f"{task} reader")
        ax.set_title(sched, fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("throughput (MB/s)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Two sequential readers, normal and idle class (SSD)", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------
# Overhead: deadline-lowprio / deadline with no low-priority load
# --------------------------------------------------------------------------------------

PATTERNS = {"SeqRead": ("read", "seq", READ_BYTES), "RndRead": ("read", "random", 4096),
            "SeqWrite": ("write", "seq", READ_BYTES), "RndWrite": ("write", "random", 4096)}


def overhead_requests(ctx: Context, size: Sizes) -> dict[tuple[str, str, str], RunRequest]:
    out = {}
    for dev in DEVICES:
        base = ctx.generate("oltp", device=dev, threads=1, events=1)
        for pat, (op, offset, nbytes) in PATTERNS.items():
            for sched in SCHEDULERS:
                def edit(s: dict[str, Any], sched: str = sched, op: str = op,
                         offset: str = offset, nbytes: int = nbytes) -> None:
                    _elevator(s, "db", sched, {})
                    s["global"]["duration"] = size.overhead_s
                    s["schedlab"].pop("headline", None)
                    s["tasks"] = {"fio": {"loop": -1, "schedlab:io": {
                        "dev": "db", "op": op, "bytes": nbytes, "offset": offset}}}
                out[(dev, pat, sched)] = RunRequest(
                    f"seed004-overhead-{dev}-{pat}-{sched}", api.edit_spec(base, edit),
                    CPU_POLICY, samples=False, label=f"seed004 overhead {dev} {pat} {sched}")
    return out


def mbps(run: RunOutcome) -> float | None:
    if not run.ok or run.result is None:
        return None
    dev = run.result.json["devices"][0]
    return (dev["bytes_read"] + dev["bytes_written"]) / (run.result.run["sim_ns"] / 1e9) / 1e6


def overhead_table(reqs: Mapping[tuple[str, str, str], RunRequest],
                   by_label: Mapping[str, RunOutcome]) -> Table:
    rows: list[list[Any]] = []
    for dev in DEVICES:
        for pat in PATTERNS:
            dl = mbps(by_label[reqs[(dev, pat, "deadline")].label])
            lp = mbps(by_label[reqs[(dev, pat, "deadline-lowprio")].label])
            rows.append([DEVICES[dev], pat, dl, lp, ratio(dl, lp),
                         Cell(f"≈ {DATA['overhead']['claim_percent']} %", cls="pub")])
    return Table(id="seed004-overhead",
                 caption="Throughput with no low-priority load: deadline-lowprio against deadline",
                 columns=[Column("device"), Column("pattern"), Column("deadline MB/s", "num"),
                          Column("deadline-lowprio MB/s", "num"),
                          Column("lowprio / deadline %", "num"), Column("seed", cls="pub")],
                 rows=rows)


# --------------------------------------------------------------------------------------
# Throughput against α
# --------------------------------------------------------------------------------------

#: The SSD: on the HDD model the job's far requests wait behind the database's nearer ones
#: in the disk's own queue (the isolation table's job column shows it), whatever α is.
ALPHA_DEVICE = "ssd"


def alpha_requests(ctx: Context, size: Sizes) -> dict[int, RunRequest]:
    base = oltp_text(ctx, ALPHA_DEVICE, size.alpha_s)
    beta = int(DATA["isolation"]["beta_ms"])
    return {a: RunRequest(f"seed004-alpha-{a}",
                          isolation_spec(base, "deadline-lowprio", lowprio_params(a, beta), True),
                          CPU_POLICY, samples=False, label=f"seed004 α = {a} ms")
            for a in size.alphas}


def job_mbps(run: RunOutcome) -> float | None:
    """The maintenance job's MB/s: the bytes its bios (its read-ahead) read from the
    device over the run."""
    if not run.ok or run.result is None:
        return None
    for t in run.result.json["tasks"]:
        if t["name"] == "maintenance":
            io = t.get("io") or {}
            return int(io.get("bytes_read", 0)) / (run.result.run["sim_ns"] / 1e9) / 1e6
    return None


def alpha_table(reqs: Mapping[int, RunRequest], by_label: Mapping[str, RunOutcome]) -> Table:
    rows = []
    for a, req in reqs.items():
        run = by_label[req.label]
        rows.append([a, tps(run), job_mbps(run)])
    return Table(id="seed004-alpha",
                 caption=f"α against the database's TPS and the maintenance job's throughput "
                         f"({DEVICES[ALPHA_DEVICE]}, β = {DATA['isolation']['beta_ms']} ms)",
                 columns=[Column("α ms", "int"), Column("database TPS", "num"),
                          Column("maintenance MB/s", "num")],
                 rows=rows)


# --------------------------------------------------------------------------------------
# The section
# --------------------------------------------------------------------------------------


def section(ctx: Context) -> SectionOutput:
    """Run seed 004's experiments and render them beside the seed's claims."""
    from schedlab.report.context import SectionOutput

    size = sizes(ctx.quick)
    iso = isolation_requests(ctx, size)
    tl = timeline_requests(ctx, size)
    ov = overhead_requests(ctx, size)
    al = alpha_requests(ctx, size)
    flat = [*iso.values(), *tl.values(), *ov.values(), *al.values()]
    runs = ctx.run(flat, "seed 004: low-priority I/O")
    by_label = {r.request.label: r for r in runs}
    res = isolation_results(iso, by_label)
    series = timeline_series({s: by_label[r.label] for s, r in tl.items()})
    figs: list[Figure] = []
    if all(v for per in series.values() for v in per.values()):
        figs.append(ctx.save_figure(timeline_figure(series), "seed004-timeline",
                                    "MB/s per second of a normal and an idle-class sequential "
                                    "reader"))
    finish = {s: {t: finish_second(v) for t, v in per.items()} for s, per in series.items()}
    html = render(
        "seed004.html.j2", doc=DATA["document"], platform=DATA["platform"], data=DATA,
        quick=ctx.quick, size=size, read_kib=READ_BYTES // 1024,
        isolation=isolation_table(res), agreement=agreement_lines(res),
        overhead=overhead_table(ov, by_label), alpha=alpha_table(al, by_label),
        figs=figs, finish=finish, timeline=timeline_table(series),
        timeline_device=DEVICES[TIMELINE_DEVICE], modern=MODERN, starved=starved_jobs(res),
        runs=runs_table(runs))
    return SectionOutput(SECTION_ID, TITLE, html, ctx.figure_files(*figs))

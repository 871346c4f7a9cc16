"""Seed 004's question on this machine (``schedlab reproduce --host``): does a database's
random-read throughput survive an idle-class sequential reader under each of Linux's
I/O schedulers?

Every run is the host runner (``schedlab host run``) on a loop device over a file on this
machine's disk, with direct I/O, the device's scheduler chosen per run and the caches
dropped before it (the runner does both, through its restore journal). The database is
4 KiB random reads kept 4 deep; the maintenance job 1 MiB sequential reads kept 16 deep,
in the idle I/O class (``ioprio_set``, as ``ionice -c3``), or in the default class as a
control. Each case runs at least three times, interleaved with the others; the figure is
the database's throughput beside the job over its throughput alone, each the median of
its runs. The virtual disk of a VM is cached by its host, so absolute figures are not the
disk's: the ratios are the result.

Before that, the runner's I/O generator is checked against fio on one loop device
(``schedlab_host::fio_check``): the same job shape, three pairs of runs, the median of
the pairs' host/fio ratios.

A plain ``schedlab reproduce`` never runs this section: it changes the machine (a loop
device, a backing file, a block queue's scheduler, dropped caches), which only
``--host`` allows. It is skipped, with the reason, when not root or without loop devices;
a scheduler this kernel lacks is shown with the kernel's refusal.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import _core
from schedlab.report import Cell, Column, Table, render

if TYPE_CHECKING:
    from schedlab.report.context import Context, SectionOutput

SECTION_ID = "host004"
TITLE = "Seed 004 on this host (host) — an idle-class reader beside a database, per scheduler"

#: The schedulers the question is asked under.
SCHEDULERS = ("none", "mq-deadline", "bfq")
#: The cases: (key, label, the maintenance job's I/O priority or None for none).
CASES: tuple[tuple[str, str, Mapping[str, Any] | None], ...] = (
    ("alone", "database alone", None),
    ("idle", "beside the idle-class reader", {"class": "idle"}),
    ("normal", "beside the reader at normal priority", {"class": "be", "level": 4}),
)
DB_BYTES, DB_DEPTH = 4096, 4
MAINT_BYTES, MAINT_DEPTH = 1 << 20, 16
#: Requests per op: an op lasts the whole run (the run's duration ends it).
OP_COUNT = 1 << 30


@dataclass(frozen=True)
class Sizes:
    """Runs per case, each run's length, each file's size, the fio check's size."""

    runs: int
    seconds: float
    file_bytes: int
    fio_size: int


def sizes(quick: bool) -> Sizes:
    if quick:
        return Sizes(runs=3, seconds=1.0, file_bytes=64 << 20, fio_size=16 << 20)
    return Sizes(runs=5, seconds=3.0, file_bytes=256 << 20, fio_size=64 << 20)


def spec_text(scheduler: str, maint: Mapping[str, Any] | None, file_bytes: int) -> str:
    """The run's spec: the database, and the maintenance job unless ``maint`` is None."""
    tasks: dict[str, Any] = {
        "db": {"loop": -1, "schedlab:io": {
            "file": "db", "op": "read", "bytes": DB_BYTES, "offset": "random",
            "count": OP_COUNT, "depth": DB_DEPTH}},
    }
    if maint is not None:
        tasks["maint"] = {"loop": -1, "schedlab:ioprio": dict(maint), "schedlab:io": {
            "file": "maint", "op": "read", "bytes": MAINT_BYTES, "offset": "seq",
            "count": OP_COUNT, "depth": MAINT_DEPTH}}
    spec = {
        "schedlab": {
            "devices": {"disk": {"model": "ssd", "scheduler": scheduler}},
            "files": {"db": {"dev": "disk", "bytes": file_bytes},
                      "maint": {"dev": "disk", "offset": file_bytes, "bytes": file_bytes}},
        },
        "tasks": tasks,
    }
    return json.dumps(spec, indent=1) + "\n"


def why_not_here() -> str:
    """Why this machine cannot run the section ('' if it can)."""
    if os.geteuid() != 0:
        return "not root: loop devices, a block queue's scheduler and drop_caches need root"
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control: this kernel has no loop devices"
    return ""


@dataclass
class Cell004:
    """One (scheduler, case): each run's database and maintenance throughput (req/s)."""

    db: list[float] = field(default_factory=list)
    maint: list[float] = field(default_factory=list)
    refused: str = ""


def throughput(result: Mapping[str, Any], task: str) -> float:
    """Requests per second of ``task`` over the run."""
    secs = result["run"]["sim_ns"] / 1e9
    for t in result["tasks"]:
        if t["name"] == task and t.get("io"):
            return float(t["io"]["requests"]) / secs if secs > 0 else 0.0
    return 0.0


def median(xs: Sequence[float]) -> float | None:
    """The median, None for no runs."""
    return statistics.median(xs) if xs else None


def run_all(ctx: Context, s: Sizes) -> tuple[dict[tuple[str, str], Cell004], dict[str, Any]]:
    """Every case, ``s.runs`` rounds, interleaved; the kernel facts of the first run."""
    from schedlab import runner
    from schedlab.api import SpecSource

    cells = {(sched, key): Cell004() for sched in SCHEDULERS for key, _, _ in CASES}
    facts: dict[str, Any] = {}
    for i in range(s.runs):
        for sched in SCHEDULERS:
            for key, _, maint in CASES:
                cell = cells[(sched, key)]
                if cell.refused:
                    continue
                name = f"host004-{sched}-{key}"
                text = spec_text(sched, maint, s.file_bytes)
                origin = ctx.save_spec(name, text)
                try:
                    r = runner.execute_on_host(SpecSource(text=text, origin=origin),
                                               duration_ns=int(s.seconds * 1e9))
                except _core.SimError as e:
                    cell.refused = str(e)
                    continue
                ctx.write_bytes(ctx.out / "host" / f"{name}-{i}.json",
                                (json.dumps(r.json, indent=1) + "\n").encode("utf-8"))
                facts = facts or dict(r.run.get("host") or {})
                cell.db.append(throughput(r.json, "db"))
                if maint is not None:
                    cell.maint.append(throughput(r.json, "maint"))
    return cells, facts


def results_table(cells: Mapping[tuple[str, str], Cell004], runs: int) -> Table:
    cols = [Column("scheduler"), Column("database alone, req/s", "int"),
            Column("beside idle-class reader, req/s", "int"), Column("ratio", "ratio"),
            Column("idle-class reader, MiB/s", "num"),
            Column("beside normal reader, req/s", "int"), Column("ratio", "ratio"),
            Column("normal reader, MiB/s", "num")]
    rows: list[list[Any]] = []
    for sched in SCHEDULERS:
        refused = next((cells[(sched, k)].refused for k, _, _ in CASES
                        if cells[(sched, k)].refused), "")
        if refused:
            rows.append([sched, Cell(f"not run: {refused}", kind="text")] + [None] * 6)
            continue
        alone = median(cells[(sched, "alone")].db)
        row: list[Any] = [sched, alone]
        for key in ("idle", "normal"):
            c = cells[(sched, key)]
            db = median(c.db)
            maint = median(c.maint)
            ratio = db / alone if db is not None and alone else None
            row += [db, ratio, maint * MAINT_BYTES / (1 << 20) if maint is not None else None]
        rows.append(row)
    return Table(cols, rows, caption=f"Database 4 KiB random reads (depth {DB_DEPTH}), medians "
                 f"of {runs} runs; ratio = beside / alone")


def fio_table(check: Mapping[str, Any]) -> Table:
    cols = [Column("figure"), Column("host runner (median)", "num"),
            Column("fio (median)", "num"), Column("host / fio (median of pairs)", "ratio")]
    h, f, r = check["host_median"], check["fio_median"], check["median_ratio"]
    rows = [["IOPS", h["iops"], f["iops"], r["iops"]],
            ["clat p50, µs", h["clat_p50_ns"] / 1e3, f["clat_p50_ns"] / 1e3, r["clat_p50_ns"]],
            ["clat p99, µs", h["clat_p99_ns"] / 1e3, f["clat_p99_ns"] / 1e3, r["clat_p99_ns"]]]
    return Table(cols, rows, caption=f"{check['fio_version']} against the host runner on "
                 f"{check['device']}")


def facts_table(facts: Mapping[str, Any]) -> Table:
    rows = [[k, "unknown" if v is None else str(v)] for k, v in facts.items()]
    return Table([Column("kernel fact"), Column("value")], rows)


def section(ctx: Context) -> SectionOutput:
    """Run seed 004's question on this machine, after checking the I/O generator."""
    from schedlab.report.context import SectionOutput

    s = sizes(ctx.quick)
    values: dict[str, Any] = {"quick": ctx.quick, "sizes": s, "skipped": why_not_here(),
                              "db_depth": DB_DEPTH, "maint_depth": MAINT_DEPTH}
    if values["skipped"]:
        return SectionOutput(SECTION_ID, TITLE, render("host004.html.j2", **values))
    try:
        check = _core.host_fio_check("randread", DB_BYTES, DB_DEPTH, s.fio_size, "none", 3)
    except _core.SimError as e:
        check = {"skipped": f"it failed: {e}"}
    ctx.write_bytes(ctx.out / "host" / "host004-fio-check.json",
                    (json.dumps(check, indent=1) + "\n").encode("utf-8"))
    values["fio_skipped"] = check.get("skipped", "")
    values["fio"] = None if "skipped" in check else fio_table(check)
    values["fio_size"] = s.fio_size
    cells, facts = run_all(ctx, s)
    values["results"] = results_table(cells, s.runs)
    values["facts"] = facts_table(facts) if facts else None
    values["specs"] = [f"host004-{sched}-{key}" for sched in SCHEDULERS for key, _, _ in CASES
                       if not cells[(sched, key)].refused]
    return SectionOutput(SECTION_ID, TITLE, render("host004.html.j2", **values))

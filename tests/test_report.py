"""The HTML report and `schedlab reproduce` with a fake engine and registry."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from schedlab import plots, report, reproduce
from schedlab.hostcosts import ChannelCost, HostCosts
from schedlab.report import Cell, Column, Table, parse_number, parse_tables
from schedlab.report.context import Context, SectionOutput
from schedlab.result import Result
from schedlab.runner import Job
from schedlab.seeds import section000, seed000

# --- a fake engine ---------------------------------------------------------------------

FAKE_SCHEDULERS = ["linux-cfs", "fp", "example-fifo", "staircase"]
FAKE_REGISTRY = [
    {"name": "linux-cfs", "family": "linux", "available": True},
    {"name": "fp", "family": "rtos", "available": True},
    {"name": "example-fifo", "family": "teaching", "available": True},
    {"name": "staircase", "family": "linux", "available": True},
    {"name": "ingo_ll", "family": "linux", "available": False, "reason": "no source survives"},
]
FAKE_HACKBENCH_S = {"linux-cfs": 2.5, "staircase": 3.25}
FAKE_BASE_US = {("rt", "linux-cfs"): 40, ("rt", "staircase"): 60,
                ("nonrt", "linux-cfs"): 90, ("nonrt", "staircase"): 70}
N = 100  # samples per run


def fake_latencies_us(waiters: str, scheduler: str) -> list[float]:
    """99 ordinary wake-ups and one outlier 100× the base (which 6σ rejects)."""
    base = FAKE_BASE_US[(waiters, scheduler)]
    return [base + (i % 7) * 1.5 for i in range(N - 1)] + [base * 100.0]


FAKE_TASK = "fake-"


def fake_generate(name: str, **options: Any) -> str:
    """A spec the core accepts (the report's sweeps check each spec), whose one task's
    name carries the generator and its options for :func:`fake_simulate`."""
    tag = json.dumps({"generator": name, "options": options}, sort_keys=True)
    task = {"loop": 1, "phases": {"p": {"run": 1000}}}
    spec: dict[str, Any] = {"global": {"duration": -1},
                            "tasks": {FAKE_TASK + tag.encode().hex(): task}}
    if name == "broadcast-wakeup":
        spec["tasks"]["waiter0"] = task
        spec["schedlab"] = {"headline": {"type": "wakeup_latency", "task_prefix": "waiter"}}
    return json.dumps(spec, indent=2)


def fake_of(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The generator and options :func:`fake_generate` wrote into ``spec`` (or None)."""
    for name in spec.get("tasks", {}):
        if name.startswith(FAKE_TASK):
            return json.loads(bytes.fromhex(name.removeprefix(FAKE_TASK)))
    return None


def _json(scheduler: str, tasks: list[dict], headline: dict | None) -> dict:
    return {
        "schema": "schedlab.result/1",
        "run": {"engine": "sim", "scheduler": scheduler, "params": {}, "seed": 1,
                "spec_sha256": "", "sim_ns": 1, "wall_s": 0.0, "events": 1, "cpus": 1,
                "hz": 1000, "decisions": 1, "work_units": 1, "version": "0.1.0"},
        "tasks": tasks,
        "cpus": [{"cpu": 0, "busy_ns": 0, "idle_ns": 0, "overhead_ns": 0}],
        "summary": {"makespan_ns": None, "headline": headline, "marks": {},
                    "totals": {"switches": 0, "migrations": 0, "deadline_misses": 0,
                               "activations": 0}},
    }


def fake_costs(quick: bool) -> HostCosts:
    def one(kind: str, call: float) -> ChannelCost:
        return ChannelCost(kind=kind, call_ns=call, hop_ns=1800.0, round_trip_ns=4600.0,
                           cpu=0, bytes=100, messages=10, reps=1)

    return HostCosts(pipe=one("pipe", 250.0), socket=one("socket", 600.0))


def fake_simulate(job: Job) -> Result:
    scheduler = job.scheduler or ""
    assert scheduler in FAKE_SCHEDULERS
    fake = fake_of(json.loads(job.spec.text))
    if fake is None:  # the behaviour probes: no numbers from the fake engine
        raise RuntimeError("the fake engine runs generated specs only")
    gen = fake["generator"]
    if gen == "hackbench":
        return Result(_json(scheduler, [], {"name": "hackbench_time",
                                            "value": FAKE_HACKBENCH_S[scheduler], "unit": "s"}))
    waiters = "rt" if fake["options"]["rt"] else "nonrt"
    lat = fake_latencies_us(waiters, scheduler)
    tasks = [{"name": n, "tid": tid, "wait_ns": 0, "cpu_ns": 0}
             for n, tid in (("waiter0", 2), ("waiter1", 3), ("load", 4))]
    cols: dict[str, list[int]] = {k: [] for k in
                                  ("tid", "release_ns", "wake_ns", "start_ns", "end_ns", "kind")}
    for i, us in enumerate(lat):
        rel = 1_000_000 * (i + 1)
        start = rel + round(us * 1000)
        for k, v in (("tid", 2 + i % 2), ("release_ns", rel), ("wake_ns", rel),
                     ("start_ns", start), ("end_ns", start + 10), ("kind", 2)):
            cols[k].append(v)
    # a load task's activation that must not be counted
    for k, v in (("tid", 4), ("release_ns", 5), ("wake_ns", 5), ("start_ns", 10**9),
                 ("end_ns", 10**9 + 1), ("kind", 1)):
        cols[k].append(v)
    return Result(_json(scheduler, tasks, None), cols)


@pytest.fixture(scope="module")
def fake_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    return reproduce.main(True, out, simulate=fake_simulate, generate=fake_generate,
                          registry=FAKE_REGISTRY, progress=False, jobs=2,
                          section_fns=[section000.section], host_costs=fake_costs)


def _row(table: list[list[str]], policy: str) -> list[str]:
    rows = [r for r in table if r[1] == policy]
    assert len(rows) == 1, (policy, table)
    return rows[0]


def _expected(values: list[float]) -> tuple[dict[str, float], dict[str, float]]:
    def st(xs: list[float]) -> dict[str, float]:
        return {"avg": statistics.fmean(xs), "min": min(xs), "max": max(xs),
                "stddev": statistics.pstdev(xs), "n": len(xs)}

    raw = st(values)
    kept = [x for x in values if abs(x - raw["avg"]) <= 6 * raw["stddev"]]
    return raw, st(kept)


# --- formatting and tables -------------------------------------------------------------


def test_fmt_kinds() -> None:
    assert report.fmt(214211.99, "us") == "214,211.99"
    assert report.fmt(38.62, "s") == "38.620"
    assert report.fmt(2.0405, "ratio") == "2.04×"
    assert report.fmt(1000, "int") == "1,000"
    assert report.fmt(None, "us") == "—"
    assert report.fmt(float("nan"), "s") == "—"
    assert report.fmt(37, "us", 0) == "37"
    assert parse_number("448,262") == 448262
    assert parse_number("—") is None


def test_table_cells_equal_input() -> None:
    t = Table(id="t", columns=[Column("name"), Column("avg", "us"), Column("n", "int")],
              rows=[["a<b", 1.234, 7], ["c", Cell(5, decimals=0, cls="pub"), None]])
    html = report.render_table(t, note="x < y")
    assert "a&lt;b" in html and "x &lt; y" in html  # autoescaped
    rows = parse_tables(html)["t"]
    assert rows == [["a<b", "1.23", "7"], ["c", "5", "—"]]
    with pytest.raises(ValueError):
        Table(columns=[Column("x")], rows=[[1, 2]])


def test_svg_is_deterministic(tmp_path: Path) -> None:
    panels = {"RT": {"a": [1.0, 2.0, 5.0], "b": [3.0, 4.0]}, "non-RT": {"a": [2.0], "b": []}}
    a = plots.save(plots.latency_cdf(panels, title="t"), tmp_path / "1", "x")
    b = plots.save(plots.latency_cdf(panels, title="t"), tmp_path / "2", "x")
    assert a[1].read_bytes() == b[1].read_bytes()
    assert a[0].read_bytes() == b[0].read_bytes()
    assert b"<dc:date>" not in a[1].read_bytes()


# --- the whole page from fake results --------------------------------------------------


def test_page_is_self_contained(fake_report: Path) -> None:
    page = fake_report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<style>" in page and "<script" not in page and "<link" not in page
    refs = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert refs
    for ref in refs:
        assert not re.match(r"^[a-z]+:", ref), ref  # no http:, file: … only relative paths
        if not ref.startswith("#"):
            assert (fake_report.parent / ref).exists(), ref
    # metadata
    for key in ("schedlab version", "host CPUs", "host kernel", "Quick mode"):
        assert key in page


def test_hackbench_table(fake_report: Path) -> None:
    t = parse_tables(fake_report.read_text(encoding="utf-8"))["seed000-hackbench"]
    assert [r[0] for r in t[:4]] == list(seed000.SEED_SCHEDULERS)
    # published numbers beside the simulated ones
    for r in t[:4]:
        assert parse_number(r[2]) == seed000.PUBLISHED_HACKBENCH_S[r[0]]
    st = _row(t, "staircase")
    # zero-cost, host-cost and board columns (the fake simulator ignores the machine)
    assert parse_number(st[4]) == FAKE_HACKBENCH_S["staircase"]
    assert parse_number(st[5]) == FAKE_HACKBENCH_S["staircase"]
    assert parse_number(st[6]) == FAKE_HACKBENCH_S["staircase"]
    assert parse_number(st[7]) == round(3.25 / 2.5, 2)
    cfs = _row(t, "linux-cfs")
    assert cfs[0] == "—" and parse_number(cfs[4]) == 2.5 and cfs[2] == "—"
    # missing policies are listed with the registry's word, non-Linux ones are absent
    assert t[0][1] == "linux-o1 — not in this build"
    assert t[2][1] == "nicksched — not in this build"
    assert t[1][1] == "not modelled"
    assert "no source survives" in fake_report.read_text(encoding="utf-8")
    flat = json.dumps(t)
    assert "example-fifo" not in flat and '"fp"' not in flat


@pytest.mark.parametrize("waiters", seed000.WAITERS)
@pytest.mark.parametrize("flt", seed000.FILTERS)
def test_wakeup_tables(fake_report: Path, waiters: str, flt: str) -> None:
    page = fake_report.read_text(encoding="utf-8")
    t = parse_tables(page)[f"seed000-wakeup-{waiters}-{flt}"]
    for r in t[:4]:
        pub = seed000.PUBLISHED_WAKEUP[waiters][flt][r[0]]
        assert [parse_number(c) for c in r[2:6]] == [pub.avg, pub.min, pub.max, pub.stddev]
    for policy in ("linux-cfs", "staircase"):
        raw, kept = _expected(fake_latencies_us(waiters, policy))
        want = raw if flt == "raw" else kept
        r = _row(t, policy)
        for cell, key in zip(r[6:10], ("avg", "min", "max", "stddev"), strict=True):
            assert math.isclose(parse_number(cell) or -1, round(want[key], 2), abs_tol=0.006), (
                policy, key, cell, want[key])
        assert parse_number(r[11]) == want["n"]
    assert kept["n"] == N - 1  # the outlier was rejected
    assert "reconstructed from the transcript" in page


def test_specs_and_plots_written(fake_report: Path) -> None:
    out = fake_report.parent
    man = json.loads((out / "specs" / "manifest.json").read_text())
    specs = {r["spec"] for r in man["runs"]}
    assert {"specs/seed000-hackbench-zero-cost.json", "specs/seed000-hackbench-host-cost.json",
            "specs/seed000-wakeup-rt.json", "specs/seed000-wakeup-nonrt.json",
            "specs/seed000-fork.json", "specs/seed000-yield.json"} <= specs
    assert {r["scheduler"] for r in man["runs"]} == {"linux-cfs", "staircase"}
    for s in specs:
        assert (out / s).is_file()
    probes = [r for r in man["runs"] if r["spec"] == "specs/seed000-fork.json"]
    assert probes and all(r["status"] == "error" and "fake engine" in r["error"]
                          for r in probes)
    hb = json.loads((out / "specs/seed000-hackbench-zero-cost.json").read_text())
    assert fake_of(hb) == {"generator": "hackbench", "options": seed000.QUICK.hackbench}
    assert hb["schedlab"]["machine"] == {"cpus": 1, "hz": 1000}
    costed = json.loads((out / "specs/seed000-hackbench-host-cost.json").read_text())
    host = costed["schedlab"]["machine"]["profile"]
    assert host["machine"]["context_switch_ns"] == 1800 and host["name"] == "host-costs"
    for stem in ("seed000-hackbench", "seed000-wakeup-cdf"):
        for ext in ("png", "svg"):
            assert (out / "plots" / f"{stem}.{ext}").stat().st_size > 1000


def test_generated_text_follows_numbers(fake_report: Path) -> None:
    page = fake_report.read_text(encoding="utf-8")
    # linux-cfs is faster in the fake hackbench; the text must say so, not a fixed claim
    assert "Simulated counterparts, fastest first: staircase (3.250 s)" in page
    assert "Also simulated (no seed counterpart): linux-cfs (2.500 s)" in page
    assert "Seed, fastest first: ingosched (38.620 s)" in page


def test_failed_runs_and_sections_are_isolated(tmp_path: Path) -> None:
    def broken_simulate(job: Job) -> Result:
        if job.scheduler == "staircase":
            raise RuntimeError("boom in staircase")
        return fake_simulate(job)

    def broken_section(ctx: Context) -> SectionOutput:
        raise KeyError("nope")

    def extra_section(ctx: Context) -> SectionOutput:
        return SectionOutput("extra", "An extra section", report.Markup("<p>plug-in works</p>"))

    index = reproduce.main(False, tmp_path, simulate=broken_simulate, generate=fake_generate,
                           registry=FAKE_REGISTRY, progress=False, host_costs=fake_costs,
                           section_fns=[section000.section, broken_section, extra_section])
    page = index.read_text(encoding="utf-8")
    assert "plug-in works" in page and 'id="extra"' in page
    assert "KeyError" in page
    t = parse_tables(page)["seed000-hackbench"]
    assert _row(t, "staircase")[4].startswith("failed: RuntimeError: boom")
    assert parse_number(_row(t, "linux-cfs")[4]) == 2.5
    assert "Quick mode" not in page
    hb = json.loads((tmp_path / "specs/seed000-hackbench-zero-cost.json").read_text())
    options = (fake_of(hb) or {})["options"]
    assert options["groups"] == 30 and options["loops"] == 100


def test_no_linux_policy_still_shows_published(tmp_path: Path) -> None:
    registry = [s for s in FAKE_REGISTRY if s["family"] != "linux"]
    index = reproduce.main(True, tmp_path, simulate=fake_simulate, generate=fake_generate,
                           registry=registry, progress=False,
                           section_fns=[section000.section], host_costs=fake_costs)
    page = index.read_text(encoding="utf-8")
    t = parse_tables(page)
    assert parse_number(t["seed000-wakeup-nonrt-raw"][1][2]) == 214211.99
    assert "No Linux-family policy is available" in page

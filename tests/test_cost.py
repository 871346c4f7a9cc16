"""The scheduler-cost study: `schedlab cost`, `schedlab.cost`, and the seed-000 report piece.

Only counted work is checked (exact and deterministic); ns are machine-dependent and
only their presence and type are.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import CliRunner
from schedlab import _core, cost
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.seeds import cost000

POINT_KEYS = {"scheduler", "params", "nr_runnable", "decisions", "work_per_decision",
              "ns_per_decision"}


def _cost_json(cli: CliRunner, *args: str) -> dict:
    p = cli("cost", *args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_json_shape(cli: CliRunner) -> None:
    d = _cost_json(cli, "-s", "fp,linux-cfs", "--max-tasks", "100", "--decisions", "300")
    assert d["schema"] == "schedlab.cost/1"
    pts = d["points"]
    assert [(p["scheduler"], p["nr_runnable"]) for p in pts] == [
        ("fp", 1), ("fp", 10), ("fp", 100), ("linux-cfs", 1), ("linux-cfs", 10),
        ("linux-cfs", 100)]
    for p in pts:
        assert POINT_KEYS <= set(p)
        assert p["params"] == {}
        assert p["decisions"] == 300
        assert p["class"] == "other" and p["cpus"] == 1
        assert p["work_units"] > 0
        assert p["work_per_decision"] == p["work_units"] / 300
        assert isinstance(p["ns_per_decision"], float) and p["ns_per_decision"] >= 0
        assert math.isfinite(p["harness_ns_per_decision"])


def test_params_reach_the_policy(cli: CliRunner) -> None:
    d = _cost_json(cli, "-s", "bfs", "--max-tasks", "10", "--decisions", "200",
                   "--param", "rr_interval_ms=3")
    assert {json.dumps(p["params"]) for p in d["points"]} == {'{"rr_interval_ms": "3"}'}


def test_counted_work_is_deterministic(cli: CliRunner) -> None:
    args = ("-s", "linux-eevdf", "-s", "bfs", "--max-tasks", "1000", "--decisions", "500",
            "--cpus", "2")
    runs = [_cost_json(cli, *args) for _ in range(2)]
    work = [[(p["scheduler"], p["nr_runnable"], p["work_units"]) for p in r["points"]]
            for r in runs]
    assert work[0] == work[1]


def test_fifo_class(cli: CliRunner) -> None:
    d = _cost_json(cli, "-s", "fp", "--class", "fifo", "--max-tasks", "1000",
                   "--decisions", "500")
    assert {p["class"] for p in d["points"]} == {"fifo"}
    # fp's bitmap-and-lists ready queue: the same work whatever N ≥ 10 (fp.rs header)
    assert len({p["work_units"] for p in d["points"] if p["nr_runnable"] >= 10}) == 1


def test_table_and_plot(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "plots"
    p = cli("cost", "-s", "linux-cfs,linux-o1", "--quick", "--max-tasks", "1000",
            "--plot", out)
    assert p.returncode == 0, p.stderr
    for word in ("work units per decision", "ns per decision", "linux-cfs", "linux-o1",
                 "N=1,000", "O(1) for linux-o1", "O(log N) for linux-cfs"):
        assert word in p.stdout, word
    assert sorted(f.name for f in out.iterdir()) == ["cost-other.png", "cost-other.svg"]


@pytest.mark.parametrize(
    "args",
    [("-s", "no-such-policy"), ("--max-tasks", "0"), ("--max-tasks", "2000000"),
     ("--class", "rr"), ("--param", "novalue"), ("-s", "linux-o1", "--param", "knob=1"),
     ("--decisions", "0"), ("--cpus", "0")],
)
def test_bad_arguments(cli: CliRunner, args: tuple[str, ...]) -> None:
    p = cli("cost", "--quick", *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr


def test_unknown_param_names_the_policy(cli: CliRunner) -> None:
    p = cli("cost", "-s", "linux-o1", "--param", "knob=1", "--quick")
    assert "linux-o1" in p.stderr and "knob" in p.stderr


def test_plot_onto_a_file(cli: CliRunner, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    p = cli("cost", "-s", "fp", "--max-tasks", "10", "--plot", f)
    assert p.returncode == 2 and "is a file" in p.stderr and p.stderr.count("\n") == 1


def test_sizes_up_to() -> None:
    assert cost.sizes_up_to(1) == [1]
    assert cost.sizes_up_to(100_000) == [1, 10, 100, 1_000, 10_000, 100_000]
    assert cost.sizes_up_to(500) == [1, 10, 100, 500]
    with pytest.raises(ValueError, match="max tasks"):
        cost.sizes_up_to(0)


@pytest.mark.parametrize(
    ("series", "expected"),
    [
        ([(10, 5.0), (100, 5.0), (10_000, 5.2)], "O(1)"),
        ([(n, 3.0 + 1.4 * math.log2(n)) for n in (10, 100, 1_000, 10_000)], "O(log N)"),
        ([(n, 2.0 + n / 2) for n in (10, 100, 1_000, 10_000)], "O(N)"),
        ([(n, math.sqrt(n)) for n in (10, 100, 1_000, 10_000)], "O(N^0.50)"),
        # a constant part hides the linear term from the end-to-end ratio (e = 0.3), not
        # from the increments (×10 per decade): freebsd-4bsd's schedcpu walk
        ([(n, 1.5 + n / 1000) for n in (10, 100, 1_000, 10_000)], "O(N)"),
        ([(1, 1.0), (10, 2.0), (100, 2.0), (1_000, 2.0)], "O(1)"),  # N = 1 is left out
        ([(10, 1.0), (100, 50.0)], None),  # less than two decades
    ],
)
def test_growth_class(series: list[tuple[int, float]], expected: str | None) -> None:
    assert cost.growth_class(series) == expected


def _pt(name: str, n: int, work: float, ns: float) -> dict:
    return {"scheduler": name, "params": [], "class": "other", "cpus": 1, "nr_runnable": n,
            "decisions": 100, "work_units": round(work * 100), "work_per_decision": work,
            "ns_per_decision": ns, "harness_ns_per_decision": 10.0}


def test_classes_sentence_follows_the_data() -> None:
    pts = [_pt("flat", n, 2.0, 20.0 * n) for n in (10, 100, 1000)]
    pts += [_pt("tree", n, 2 + math.log2(n), 50.0) for n in (10, 100, 1000)]
    pts += [_pt("scan", n, float(n), 5.0 * n) for n in (10, 100, 1000)]
    s = cost.classes_sentence(pts)
    assert "O(1) for flat; O(log N) for tree; O(N) for scan." in s
    assert "tenfold over that range for flat" in s  # ns grew 100× with flat counted work
    assert cost.document(pts)["points"][0]["params"] == {}


def test_core_rejects_bad_input() -> None:
    with pytest.raises(_core.SimError) as e:
        _core.sched_cost("fp", [10], task_class="deadline")
    assert e.value.bad_input and "class" in e.value.message
    with pytest.raises(_core.SimError) as e:
        _core.sched_cost("fp", [0])
    assert e.value.bad_input


# --- the seed-000 report piece ------------------------------------------------------


def test_report_piece(tmp_path: Path) -> None:
    ctx = Context(quick=True, out=tmp_path)
    piece = cost000.part(ctx, ["linux-o1", "linux-cfs"])
    html, files = piece.html, piece.files
    table = parse_tables(html)["seed000-sched-cost"]
    assert [parse_number(r[0]) for r in table] == [1, 10, 100, 1_000, 10_000]
    # columns: N, then (work, ns) per policy in the order given
    o1_work = [parse_number(r[1]) for r in table]
    cfs_work = [parse_number(r[3]) for r in table]
    assert len(set(o1_work)) == 1  # O(1) arrays: the same work whatever N
    assert cfs_work == sorted(cfs_work) and cfs_work[-1] > cfs_work[1]
    assert "O(1) for linux-o1; O(log N) for linux-cfs" in html
    assert sorted(f.name for f in files) == ["seed000-sched-cost.png", "seed000-sched-cost.svg"]
    assert all(f.is_file() for f in files)
    assert 'src="plots/seed000-sched-cost.png"' in html


def test_report_piece_isolates_failures(tmp_path: Path) -> None:
    ctx = Context(quick=True, out=tmp_path)
    piece = cost000.part(ctx, ["no-such-policy"])
    assert "cost study failed" in piece.html and "no-such-policy" in piece.html
    assert piece.files == []
    piece = cost000.part(ctx, [])
    assert "No policy" in piece.html and piece.files == []

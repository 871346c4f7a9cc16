"""Seed 000 instruments: `schedlab timeslice` and `schedlab plot dprio`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CliRunner, write_json
from schedlab import _core

MS = 1_000_000

# O(1) task_timeslice (2.6.18 kernel/sched.c l.164-186), pinned in
# crates/schedlab-sim/tests/linux_o1.rs and linux_o1.rs `worked_timeslices`.
O1_HZ1000 = {-20: 800, -10: 600, -1: 420, 0: 100, 5: 75, 10: 50, 15: 25, 19: 5}


def test_core_timeslice() -> None:
    t = _core.timeslice("linux-o1", 1000)
    assert [n for n, _ in t] == list(range(-20, 20))
    for nice, ms in O1_HZ1000.items():
        assert dict(t)[nice] == ms * MS
    assert dict(_core.timeslice("linux-o1", 100))[19] == 10 * MS  # MIN_TIMESLICE = 1 jiffy
    assert all(v is None for _, v in _core.timeslice("linux-cfs", 1000))
    with pytest.raises(_core.SimError) as e:
        _core.timeslice("linux-o1", 123)
    assert e.value.bad_input


def test_timeslice_json(cli: CliRunner) -> None:
    p = cli("timeslice", "-s", "linux-o1,linux-cfs", "-s", "bfs", "--hz", "1000", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert list(d) == ["linux-o1", "linux-cfs", "bfs"]
    for per in d.values():
        assert list(per) == [str(n) for n in range(-20, 20)]
    for nice, ms in O1_HZ1000.items():
        assert d["linux-o1"][str(nice)] == ms * MS
    assert set(d["linux-cfs"].values()) == {None}
    assert set(d["bfs"].values()) == {(6 << 10) * 1000}  # MS_TO_US(rr_interval) µs


def test_timeslice_default_lists_every_policy(cli: CliRunner) -> None:
    p = cli("timeslice", "--json", "--hz", "250")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert {"linux-o1", "staircase", "bfs", "muqss", "linux-cfs", "linux-eevdf"} <= set(d)
    assert d["linux-o1"]["0"] == 100 * MS  # DEF_TIMESLICE = 25 jiffies at HZ 250


def test_timeslice_table_and_plots(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "plots"
    p = cli("timeslice", "-s", "linux-o1,linux-cfs", "--plot", out)
    assert p.returncode == 0, p.stderr
    assert "linux-o1" in p.stdout and "800" in p.stdout
    files = sorted(f.name for f in out.iterdir())
    assert files == [
        "timeslice-linux-cfs-hz1000.png", "timeslice-linux-cfs-hz1000.svg",
        "timeslice-linux-o1-hz1000.png", "timeslice-linux-o1-hz1000.svg",
    ]
    first = (out / "timeslice-linux-o1-hz1000.svg").read_bytes()
    assert cli("timeslice", "-s", "linux-o1", "--plot", out).returncode == 0
    assert (out / "timeslice-linux-o1-hz1000.svg").read_bytes() == first


def test_timeslice_of_the_freebsd_policies(cli: CliRunner) -> None:
    """A lone thread's slice, whatever its nice: 4BSD's `sched_slice` = hz / 10 ticks
    (100 ms); 5.x ULE's SCHED_SLICE_MAX = stathz / 7 ticks with stathz = hz (142 ticks
    of 1 ms at HZ 1000, 14 of 10 ms at HZ 100); today's ULE `sched_slice` = realstathz /
    10 = 12 ticks of its 127 Hz statclock, whatever hz is."""
    for hz, ule5_ms in ((1000, 142), (100, 140)):
        p = cli("timeslice", "-s", "freebsd-4bsd,freebsd-ule5,freebsd-ule", "--hz", str(hz),
                "--json")
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)
        assert set(d["freebsd-4bsd"].values()) == {100 * MS}
        assert set(d["freebsd-ule5"].values()) == {ule5_ms * MS}
        assert set(d["freebsd-ule"].values()) == {12 * 1_000_000_000 // 127}


@pytest.mark.parametrize(
    "args",
    [("--hz", "123"), ("-s", "no-such-policy"), ("--hz", "x")],
)
def test_timeslice_bad_arguments(cli: CliRunner, args: tuple[str, ...]) -> None:
    p = cli("timeslice", *args)
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1


HOGS = {
    "global": {"duration": 1, "default_policy": "SCHED_OTHER"},
    "tasks": {
        "hog": {"run": 100000},
        "nice5": {"run": 100000, "priority": 5},
        "sleeper": {"run": 1000, "sleep": 9000},
    },
}


@pytest.mark.parametrize("policy", ["linux-o1", "linux-cfs", "freebsd-4bsd", "freebsd-ule5",
                                    "freebsd-ule"])
def test_plot_dprio(cli: CliRunner, tmp_path: Path, policy: str) -> None:
    spec = write_json(tmp_path / "hogs.json", HOGS)
    trace = tmp_path / "run.trace"
    p = cli("run", spec, "-s", policy, "--trace", trace, "--json")
    assert p.returncode == 0, p.stderr
    p = cli("plot", "dprio", trace)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "run-dprio.png").stat().st_size > 0
    assert (tmp_path / "run-dprio.svg").stat().st_size > 0
    out = tmp_path / "sub" / "two.svg"
    out.parent.mkdir()
    p = cli("plot", "dprio", trace, "--out", out, "--pids", "1,2")
    assert p.returncode == 0, p.stderr
    assert out.exists() and out.with_suffix(".png").exists()


def test_plot_dprio_errors(cli: CliRunner, tmp_path: Path) -> None:
    spec = write_json(tmp_path / "hogs.json", HOGS)
    trace = tmp_path / "run.trace"
    assert cli("run", spec, "-s", "linux-o1", "--trace", trace, "--json").returncode == 0
    no_counters = tmp_path / "plain.trace"
    no_counters.write_text(
        "".join(ln for ln in trace.read_text().splitlines(keepends=True)
                if "tracing_mark_write" not in ln)
    )
    for args in [
        (no_counters,),
        (trace, "--pids", "999"),
        (trace, "--pids", "x"),
        (tmp_path / "missing.trace",),
        (trace, "--out", tmp_path / "nodir" / "x.png"),
    ]:
        p = cli("plot", "dprio", *args)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert not list(tmp_path.glob("*.png"))

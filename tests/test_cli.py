"""The ``schedlab`` command end to end, as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CliRunner


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


# --- run -------------------------------------------------------------------------------


def test_run_table(cli: CliRunner, periodic_spec: Path, scheduler: str) -> None:
    p = cli("run", periodic_spec, "--scheduler", scheduler, "--cpus", "2", "--seed", "3")
    assert p.returncode == 0, p.stderr
    for word in ("task", "policy", "wake p99", "headline:", "makespan:", "rt", "hog"):
        assert word in p.stdout
    assert "FIFO 50" in p.stdout


def test_run_json(cli: CliRunner, periodic_spec: Path, scheduler: str) -> None:
    p = cli("run", periodic_spec, "-s", scheduler, "--cpus", "2", "--hz", "1000",
            "--seed", "7", "--duration", "300ms", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["schema"] == "schedlab.result/1"
    assert r["run"]["scheduler"] == scheduler
    assert r["run"]["seed"] == 7
    assert r["run"]["cpus"] == 2
    assert r["run"]["hz"] == 1000
    assert r["run"]["sim_ns"] <= 300_000_000
    assert len(r["run"]["spec_sha256"]) == 64
    assert {t["name"].split("-")[0] for t in r["tasks"]} >= {"rt", "hog"} or len(r["tasks"]) >= 4
    assert len(r["cpus"]) == 2


def test_run_outputs(cli: CliRunner, periodic_spec: Path, scheduler: str,
                     tmp_path: Path) -> None:
    trace, out, pq = tmp_path / "run.trace", tmp_path / "r.json", tmp_path / "pq"
    p = cli("run", periodic_spec, "-s", scheduler, "--cpus", "2", "--duration", "100ms",
            "--trace", trace, "-o", out, "--parquet", pq, "--check")
    assert p.returncode == 0, p.stderr
    assert "sched_switch" in trace.read_text()
    assert json.loads(out.read_text())["schema"] == "schedlab.result/1"
    assert {f.name for f in pq.iterdir()} >= {"tasks.parquet", "samples.parquet"}
    # no temporary files left behind
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_failed_run_keeps_earlier_outputs(cli: CliRunner, periodic_spec: Path,
                                          tmp_path: Path) -> None:
    trace, out = tmp_path / "run.trace", tmp_path / "r.json"
    trace.write_text("earlier trace")
    out.write_text("earlier result")
    p = cli("run", periodic_spec, "-s", "no-such-scheduler", "--trace", trace, "-o", out)
    assert p.returncode == 2
    one_error_line(p.stderr)
    assert trace.read_text() == "earlier trace"
    assert out.read_text() == "earlier result"
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_run_from_stdin(cli: CliRunner, periodic_spec: Path, scheduler: str) -> None:
    p = cli("run", "-", "-s", scheduler, "--duration", "50ms", "--json",
            input=periodic_spec.read_text())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["run"]["scheduler"] == scheduler


def test_module_entry_point(periodic_spec: Path) -> None:
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "schedlab", "validate", str(periodic_spec)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok:")


# --- compare ---------------------------------------------------------------------------


def test_compare_table(cli: CliRunner, periodic_spec: Path, two_schedulers: list[str]) -> None:
    a, b = two_schedulers
    p = cli("compare", periodic_spec, "-s", f"{a},{b}", "--cpus", "2", "--duration", "200ms")
    assert p.returncode == 0, p.stderr
    for word in ("scheduler", "headline", "makespan", "switches", "migrations", a, b):
        assert word in p.stdout


def test_compare_json(cli: CliRunner, periodic_spec: Path, two_schedulers: list[str],
                      tmp_path: Path) -> None:
    a, b = two_schedulers
    p = cli("compare", periodic_spec, "--scheduler", a, "--scheduler", b, "--cpus", "2",
            "--duration", "100ms", "--seed", "5", "--json", "--parquet", tmp_path / "pq")
    assert p.returncode == 0, p.stderr
    results = json.loads(p.stdout)
    assert isinstance(results, list)
    assert [r["run"]["scheduler"] for r in results] == ([a, b] if a != b else [a])
    assert all(r["run"]["seed"] == 5 for r in results)
    assert (tmp_path / "pq" / a / "tasks.parquet").exists()


def test_compare_unknown_scheduler(cli: CliRunner, periodic_spec: Path, scheduler: str) -> None:
    p = cli("compare", periodic_spec, "-s", f"{scheduler},bogus-sched")
    assert p.returncode == 2
    assert "bogus-sched" in one_error_line(p.stderr)


# --- gen, schedulers, validate -----------------------------------------------------------


def test_gen_list(cli: CliRunner) -> None:
    import schedlab

    p = cli("gen", "--list")
    assert p.returncode == 0, p.stderr
    for g in schedlab.generators():
        assert g["name"] in p.stdout


def test_gen_each_generator_validates(cli: CliRunner, tmp_path: Path) -> None:
    import schedlab

    gens = schedlab.generators()
    if not gens:
        pytest.skip("no generators in this build")
    for g in gens:
        p = cli("gen", g["name"])
        assert p.returncode == 0, f"{g['name']}: {p.stderr}"
        spec = tmp_path / f"{g['name']}.json"
        spec.write_text(p.stdout)
        v = cli("validate", spec)
        assert v.returncode == 0, f"{g['name']}: {v.stderr}"


def test_gen_options_are_passed(cli: CliRunner) -> None:
    import schedlab

    gens = {g["name"]: g for g in schedlab.generators()}
    if "hackbench" not in gens:
        pytest.skip("no hackbench generator in this build")
    small = cli("gen", "hackbench", "--groups", "1", "--loops", "2")
    big = cli("gen", "hackbench", "--groups=3", "--loops", "2")
    assert small.returncode == 0 and big.returncode == 0, small.stderr + big.stderr
    assert len(small.stdout) < len(big.stdout)
    assert json.loads(small.stdout) == schedlab.generate("hackbench", groups=1, loops=2)


def test_gen_bad_option(cli: CliRunner) -> None:
    import schedlab

    gens = schedlab.generators()
    if not gens:
        pytest.skip("no generators in this build")
    p = cli("gen", gens[0]["name"], "--no-such-option", "3")
    assert p.returncode == 2
    assert "no-such-option" in one_error_line(p.stderr)


def test_gen_unknown_generator(cli: CliRunner) -> None:
    p = cli("gen", "no-such-generator")
    assert p.returncode == 2
    assert "no-such-generator" in one_error_line(p.stderr)


def test_schedulers(cli: CliRunner, scheduler: str) -> None:
    p = cli("schedulers")
    assert p.returncode == 0, p.stderr
    assert scheduler in p.stdout
    j = cli("schedulers", "--json")
    assert j.returncode == 0, j.stderr
    listed = json.loads(j.stdout)
    assert scheduler in [s["name"] for s in listed]
    for s in listed:
        assert {"name", "summary", "source", "available", "params"} <= set(s)
        if not s["available"]:
            assert s["reason"]


def test_validate_ok(cli: CliRunner, periodic_spec: Path, finite_spec: Path) -> None:
    p = cli("validate", periodic_spec, finite_spec)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ok:") == 2


def test_help_and_version(cli: CliRunner) -> None:
    for args in ((), ("--help",), ("run", "--help"), ("gen", "--help")):
        p = cli(*args)
        assert p.returncode == 0, (args, p.stderr)
        assert "Usage" in p.stdout
    v = cli("--version")
    assert v.returncode == 0 and "schedlab" in v.stdout


# --- bad arguments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, needle",
    [
        (["-s", "no-such-scheduler"], "no-such-scheduler"),
        (["--param", "junk"], "junk"),
        (["--param", "=3"], "NAME=VALUE"),
        (["--param", "no_such_tunable=1"], "no_such_tunable"),
        (["--cpus", "0"], "--cpus"),
        (["--cpus", "two"], "--cpus"),
        (["--hz", "7"], "7"),
        (["--duration", "10 parsecs"], "--duration"),
        (["--duration", "0ms"], "--duration"),
        (["--seed", "-1"], "--seed"),
        (["--no-such-flag"], "no-such-flag"),
    ],
)
def test_bad_arguments(cli: CliRunner, periodic_spec: Path, scheduler: str,
                       args: list[str], needle: str) -> None:
    full = ["run", str(periodic_spec), *args]
    if "-s" not in args:
        full += ["-s", scheduler]
    p = cli(*full)
    assert p.returncode == 2, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    line = one_error_line(p.stderr)
    assert needle in line
    assert p.stdout == ""


def test_missing_file(cli: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    for cmd in (["run", missing], ["validate", missing], ["compare", missing, "-s", "x"]):
        p = cli(*cmd)
        assert p.returncode == 2, cmd
        assert "nope.json" in one_error_line(p.stderr)


def test_invalid_json(cli: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"t": {"run": 100,}}')
    for cmd in ("run", "validate"):
        p = cli(cmd, bad)
        assert p.returncode == 2
        assert "$" in one_error_line(p.stderr)


def test_not_utf8(cli: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"tasks": {"caf\xe9": {"run": 100}}}')
    p = cli("validate", bad)
    assert p.returncode == 2
    assert "UTF-8" in one_error_line(p.stderr)


def test_trace_into_missing_directory(cli: CliRunner, periodic_spec: Path,
                                      scheduler: str, tmp_path: Path) -> None:
    p = cli("run", periodic_spec, "-s", scheduler, "--trace", tmp_path / "no" / "t.trace")
    assert p.returncode == 2
    assert "does not exist" in one_error_line(p.stderr)


def test_unknown_command(cli: CliRunner) -> None:
    p = cli("frobnicate")
    assert p.returncode == 2
    assert "frobnicate" in one_error_line(p.stderr)


def test_run_streams_samples_to_an_ipc_file(cli: CliRunner, periodic_spec: Path,
                                            scheduler: str, tmp_path: Path) -> None:
    """``--samples FILE`` streams every activation to an Arrow IPC file the result names;
    the same rows the in-memory run returns, and the statistics agree where they promise."""
    import polars as pl

    import schedlab

    samples = tmp_path / "samples.arrow"
    p = cli("run", periodic_spec, "-s", scheduler, "--json", "--samples", samples)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["run"]["samples"]["mode"] == "file"
    assert r["run"]["samples"]["path"] == str(samples)
    streamed = pl.read_ipc(samples)
    assert len(streamed) == r["run"]["samples"]["count"] > 0
    mem = schedlab.simulate(periodic_spec, scheduler=scheduler)
    assert mem.run["samples"]["mode"] == "memory"
    assert streamed["release_ns"].to_list() == mem.samples["release_ns"].to_list()
    for t_file, t_mem in zip(r["tasks"], mem.json["tasks"], strict=True):
        for key in ("count", "min", "max", "mean"):
            assert t_file["wakeup_latency_ns"][key] == t_mem["wakeup_latency_ns"][key]


def test_run_prints_the_notes_of_a_run(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "clamped.json"
    spec.write_text(json.dumps({"tasks": {"t": {"loop": 1, "run": 100, "util_max": 512,
                                                  "cpus": [1]}}}))
    p = cli("run", spec)
    assert p.returncode == 0, p.stderr
    assert "note: the spec names CPUs but does not size the machine" in p.stdout
    assert "note: utilization clamps" in p.stdout

"""`schedlab gen buildworld | httpd | threads` end to end: the CLI writes a spec that runs
under linux-cfs and freebsd-4bsd and does what its options say; a bad option is one error
line and exit status 2."""

from __future__ import annotations

import json

import pytest

from conftest import CliRunner

POLICIES = ("linux-cfs", "freebsd-4bsd")


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


def gen(cli: CliRunner, *args: str) -> str:
    p = cli("gen", *args)
    assert p.returncode == 0, p.stderr
    return p.stdout


def run(cli: CliRunner, spec: str, policy: str) -> dict:
    p = cli("run", "-", "-s", policy, "--json", input=spec)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def total_cpu_ns(result: dict) -> int:
    return sum(t["cpu_ns"] for t in result["tasks"])


@pytest.mark.parametrize("policy", POLICIES)
def test_buildworld_cpu_time_is_the_closed_form(cli: CliRunner, policy: str) -> None:
    # C = 6 × (10000 + 500) + 1 × 2000 = 65000 µs, whatever the split and the seed.
    spec = gen(cli, "buildworld", "--dirs", "2", "--lib-dirs", "1", "--files", "3",
               "--cpu-us", "10000", "--link-us", "500", "--install-us", "2000",
               "--jobs", "2", "--seed", "3")
    r = run(cli, spec, policy)
    assert total_cpu_ns(r) == 65_000 * 1000
    assert r["summary"]["headline"]["name"] == "buildworld_time"
    assert r["summary"]["blocked_at_end"] == 0


@pytest.mark.parametrize("policy", POLICIES)
def test_httpd_answers_every_request(cli: CliRunner, policy: str) -> None:
    spec = gen(cli, "httpd", "--requests", "40", "--concurrency", "5", "--threads", "4")
    r = run(cli, spec, policy)
    h = r["summary"]["headline"]
    assert h["name"] == "requests_per_s" and h["unit"] == "1/s"
    assert h["stats_ns"]["count"] == 40
    assert h["value"] * r["summary"]["makespan_ns"] / 1e9 == pytest.approx(40)


@pytest.mark.parametrize("policy", POLICIES)
def test_threads_cpu_time(cli: CliRunner, policy: str) -> None:
    spec = gen(cli, "threads", "--threads", "30", "--loops", "5", "--run-us", "20",
               "--mode", "yield")
    r = run(cli, spec, policy)
    assert total_cpu_ns(r) == 30 * 5 * 20_000


@pytest.mark.parametrize(("name", "option", "value"), [
    ("buildworld", "sys-pct", "100"),
    ("buildworld", "jobs", "0"),
    ("httpd", "concurrency", "0"),
    ("threads", "mode", "spin"),
])
def test_bad_option_is_one_error_line(cli: CliRunner, name: str, option: str,
                                      value: str) -> None:
    p = cli("gen", name, f"--{option}", value)
    assert p.returncode == 2
    assert f"options.{option.replace('-', '_')}" in one_error_line(p.stderr)

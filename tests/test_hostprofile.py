"""The host profile (schedlab.hostprofile): the kernel probes, what is read from the
kernel, the fitted timer interrupt, and "profile": "host" resolved before the core runs."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from host_fixtures import FACTS, FULL, PIPE, SOCKET, SYSCALLS, TIMER
from schedlab import _core, api, crosscheck, hostcosts, hostprofile
from schedlab.hostcosts import HostCosts, TimerLatency
from schedlab.hostprofile import Fact
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context

HOWS = {"measured", "read", "source", "fitted", "unknown"}


def host_profile(costs: HostCosts = FULL) -> dict[str, Any]:
    return hostprofile.profile(costs, facts=FACTS, cpus=2)


# --- the probes (sanity only: values are timings of a shared machine) -------------------


def test_syscall_probe_measures_and_keeps_affinity() -> None:
    before = os.sched_getaffinity(0)
    c = _core.host_syscall_costs(calls=100, forks=3, reps=3)
    assert c["sleep_setup_ns"] > 0 and c["futex_wake_ns"] > 0 and c["fork_exit_wait_ns"] > 0
    assert c["sleep_blocks_per_call"] >= 0
    assert (c["calls"], c["forks"], c["reps"]) == (100, 3, 3)
    assert os.sched_getaffinity(0) == before


def test_timer_probe_orders_its_statistics() -> None:
    t = TimerLatency(**_core.host_timer_latency(interval_ns=100_000, samples=20, priority=80))
    assert 0 <= t.min_ns <= t.p50_ns <= t.p99_ns <= t.max_ns
    assert t.policy in ("fifo", "other")
    assert (t.policy == "fifo") == (t.fifo_refused == "")


@pytest.mark.parametrize("fn,kwargs", [
    (_core.host_syscall_costs, {"calls": 0}), (_core.host_syscall_costs, {"forks": 0}),
    (_core.host_syscall_costs, {"reps": 0}), (_core.host_timer_latency, {"interval_ns": 1}),
    (_core.host_timer_latency, {"samples": 0}), (_core.host_timer_latency, {"priority": 0}),
    (_core.host_timer_latency, {"priority": 100})])
def test_probes_reject_bad_arguments(fn: Any, kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        fn(**kwargs)


# --- what the kernel says about itself --------------------------------------------------


def fake_root(tmp_path: Path, *, config: str = "", cmdline: str = "", debugfs: str = "",
              nohz_full: str = "", online: str = "0-1") -> Path:
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text("6.18.0\n")
    (tmp_path / "proc/cmdline").write_text(cmdline + "\n")
    if config:
        with gzip.open(tmp_path / "proc/config.gz", "wt") as f:
            f.write(config)
    if debugfs:
        (tmp_path / "sys/kernel/debug/sched").mkdir(parents=True)
        (tmp_path / "sys/kernel/debug/sched/preempt").write_text(debugfs)
    cpu = tmp_path / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text(online + "\n")
    if nohz_full:
        (cpu / "nohz_full").write_text(nohz_full + "\n")
    return tmp_path


DYNAMIC_NONE = """CONFIG_PREEMPT_NONE=y
# CONFIG_PREEMPT_VOLUNTARY is not set
# CONFIG_PREEMPT is not set
CONFIG_PREEMPT_DYNAMIC=y
CONFIG_NO_HZ_IDLE=y
CONFIG_HZ=250
CONFIG_HIGH_RES_TIMERS=y
"""


def test_preempt_from_debugfs_then_cmdline_then_config(tmp_path: Path) -> None:
    root = fake_root(tmp_path / "a", config=DYNAMIC_NONE, cmdline="preempt=voluntary",
                     debugfs="none voluntary (full) lazy\n")
    assert hostprofile.read_kernel(root).preempt == Fact(
        "full", "/sys/kernel/debug/sched/preempt")
    root = fake_root(tmp_path / "b", config=DYNAMIC_NONE, cmdline="quiet preempt=voluntary")
    assert hostprofile.read_kernel(root).preempt == Fact(
        "voluntary", "/proc/cmdline: preempt=voluntary")
    facts = hostprofile.read_kernel(fake_root(tmp_path / "c", config=DYNAMIC_NONE))
    assert facts.preempt is not None and facts.preempt.value == "none"
    assert "CONFIG_PREEMPT_NONE=y" in facts.preempt.source
    assert "preempt_dynamic_init" in facts.preempt.source
    assert facts.hz == Fact(250, "/proc/config.gz: CONFIG_HZ=250")
    assert facts.tick is not None and facts.tick.value == "nohz_idle"
    assert facts.timers == Fact("hrtimer", "/proc/config.gz: CONFIG_HIGH_RES_TIMERS=y")


def test_what_no_file_says_is_unknown(tmp_path: Path) -> None:
    facts = hostprofile.read_kernel(fake_root(tmp_path))
    assert (facts.preempt, facts.tick, facts.hz) == (None, None, None)
    p = hostprofile.profile(HostCosts(PIPE, SOCKET, SYSCALLS, TIMER), facts=facts, cpus=2)
    assert "preempt" not in p["machine"]["kernel"] and "hz" not in p["machine"]
    assert p["provenance"]["kernel"]["preempt"]["how"] == "unknown"


def test_a_model_the_simulator_lacks_keeps_the_default(tmp_path: Path) -> None:
    root = fake_root(tmp_path, cmdline="preempt=lazy")
    facts = hostprofile.read_kernel(root)
    assert facts.preempt is not None and facts.preempt.value is None
    assert "lazy" in facts.preempt.note


@pytest.mark.parametrize("config,nohz_full,want", [
    ("CONFIG_HZ_PERIODIC=y\n", "", "periodic"),
    ("CONFIG_NO_HZ_FULL=y\n", "", "nohz_idle"),
    ("CONFIG_NO_HZ_FULL=y\n", "0-1", "nohz_full"),
    ("CONFIG_NO_HZ_FULL=y\n", "1", "nohz_idle")])
def test_tick(tmp_path: Path, config: str, nohz_full: str, want: str) -> None:
    tick = hostprofile.read_kernel(fake_root(tmp_path, config=config,
                                             nohz_full=nohz_full)).tick
    assert tick is not None and tick.value == want


# --- the profile ---------------------------------------------------------------------


def _provenance_leaves(prov: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for k, v in prov.items():
        if "how" in v:
            out[k] = v
        else:
            out.update({f"{k}.{kk}": vv for kk, vv in _provenance_leaves(v).items()})
    return out


def test_profile_keys_and_their_provenance() -> None:
    p = host_profile()
    m = p["machine"]
    assert p["name"] == "host"
    assert m["context_switch_ns"] == 2000
    assert m["channel_costs"] == {"pipe": {"op_cost_ns": 300, "byte_cost_ps": 0},
                                  "socket": {"op_cost_ns": 700, "byte_cost_ps": 0}}
    assert m["sleep_ns"] == 1234 and m["wakeup_ns"] == 0 and m["exit_ns"] == 0
    # fork + exit + wait less the two switches of that path
    assert m["fork_ns"] == 104_000 - 2 * 2000
    assert m["hz"] == 250
    k = m["kernel"]
    assert (k["preempt"], k["tick"], k["timers"], k["timer_slack_ns"]) == (
        "none", "nohz_idle", "hrtimer", 50_000)
    leaves = _provenance_leaves(p["provenance"])
    assert {x["how"] for x in leaves.values()} <= HOWS
    assert leaves["kernel.timer_irq_ns"]["how"] == "fitted"
    assert leaves["kernel.preempt"] == {"how": "read", "from": FACTS.preempt.source}
    assert leaves["kernel.timer_slack_ns"]["how"] == "source"
    assert leaves["context_switch_ns"]["median_ns"] == PIPE.hop_ns
    # every machine key has its provenance
    for key in m:
        assert key in p["provenance"], key
    api.validate(hostprofile.with_profile(api.generate_text("cyclictest", []), p))


def test_fitted_timer_irq_gives_the_measured_minimum() -> None:
    """Run through the simulator: the cyclictest of the fit, under the profile with the
    fitted timer_irq_ns, has exactly the measured minimum."""
    p = host_profile()
    fitted = p["machine"]["kernel"]["timer_irq_ns"]
    prov = p["provenance"]["kernel"]["timer_irq_ns"]
    assert fitted == TIMER.min_ns - prov["simulated_min_ns_without"] > 0
    text = hostprofile.with_profile(hostprofile.cyclictest_spec(TIMER, 20, 2), p)
    stats = hostprofile.headline_stats(api.simulate(text, scheduler="linux-eevdf").json)
    assert stats["min"] == TIMER.min_ns


def test_fit_is_never_negative() -> None:
    fast = TimerLatency(min_ns=1, p50_ns=1, p99_ns=1, max_ns=1, samples=1,
                        interval_ns=1_000_000, policy="fifo", priority=80)
    p = hostprofile.profile(HostCosts(PIPE, SOCKET, SYSCALLS, fast), facts=FACTS, cpus=2)
    assert p["machine"]["kernel"]["timer_irq_ns"] == 0


def test_without_kernel_probes_only_costs_and_settings() -> None:
    p = hostprofile.profile(HostCosts(PIPE, SOCKET), facts=FACTS, cpus=2)
    assert "sleep_ns" not in p["machine"] and "timer_irq_ns" not in p["machine"]["kernel"]


# --- specs carrying it -----------------------------------------------------------------


def test_cost_profile_replaces_the_spec_costs() -> None:
    text = api.generate_text("hackbench", [("groups", "1"), ("loops", "2"), ("fds", "2"),
                                           ("mode", "pipe")])
    spec = json.loads(text)
    spec["schedlab"]["machine"]["context_switch_ns"] = 5
    for c in spec["schedlab"]["pipes"].values():
        c["op_cost_ns"] = 9
    out = json.loads(hostcosts.apply(json.dumps(spec), FULL))
    m = out["schedlab"]["machine"]
    assert "context_switch_ns" not in m
    assert m["profile"]["name"] == "host-costs"
    assert set(m["profile"]["machine"]) == set(hostprofile.COST_KEYS)
    assert all("op_cost_ns" not in c for c in out["schedlab"]["pipes"].values())
    assert list(out["tasks"]) == list(spec["tasks"])


def test_resolve_replaces_host_and_leaves_other_specs_byte_for_byte() -> None:
    calls = []

    def measure() -> dict[str, Any]:
        calls.append(1)
        return host_profile()

    text = '{"tasks": {"host": {"run": 1000}}, "global": {"duration": 1},\n' \
           ' "schedlab": {"machine": {"profile": "host", "cpus": 1}}}'
    out = hostprofile.resolve(text, measure)
    m = json.loads(out)["schedlab"]["machine"]
    assert m["profile"]["name"] == "host" and m["cpus"] == 1
    assert m["profile"]["machine"]["kernel"]["timer_irq_ns"] >= 0
    api.validate(out)
    r1 = api.simulate(out, scheduler="linux-cfs")
    r2 = api.simulate(out, scheduler="linux-cfs")
    assert r1.json["tasks"] == r2.json["tasks"]
    for other in ('{"tasks": {"host": {"run": 1000}}, "global": {"duration": 1}}',
                  '{"tasks": {"t": {"run": 1}}, "schedlab": {"machine": {"profile": '
                  '"seed000-tx4937"}}, "host": 1}'):
        assert hostprofile.resolve(other, measure) == other
    assert len(calls) == 1


def test_load_spec_resolves_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostprofile, "measured_profile", host_profile)
    src = api.load_spec('{"tasks": {"t": {"run": 1000}}, "global": {"duration": 1}, '
                        '"schedlab": {"machine": {"profile": "host"}}}')
    assert json.loads(src.text)["schedlab"]["machine"]["profile"]["name"] == "host"


# --- the cross-check section -------------------------------------------------------------


def test_histogram_percentile_is_nearest_rank() -> None:
    hist = {10: 50, 11: 49, 30: 1}
    assert crosscheck.histogram_percentile(hist, 50) == 10
    assert crosscheck.histogram_percentile(hist, 99) == 11
    assert crosscheck.histogram_percentile(hist, 100) == 30


CYCLICTEST_JSON = {"cmdline:": "cyclictest -m -p 80", "rt_test_version:": "2.40",
                   "thread": {"0": {"histogram": {"13": 60, "14": 39, "40": 1}, "cycles": 100,
                                    "min": 13, "max": 40, "avg": 13.7}}}


def test_parse_cyclictest_json() -> None:
    c = crosscheck.parse_cyclictest_json(CYCLICTEST_JSON)
    assert (c.min_ns, c.p50_ns, c.p99_ns, c.max_ns, c.cycles) == (13_000, 13_000, 14_000,
                                                                  40_000, 100)
    # a cycle the histogram lacks counts as beyond its range: p99 moves, p50 does not
    over = json.loads(json.dumps(CYCLICTEST_JSON))
    over["thread"]["0"]["cycles"] = 101
    c = crosscheck.parse_cyclictest_json(over)
    assert (c.p50_ns, c.p99_ns) == (13_000, 40_000)
    over["thread"]["0"]["cycles"] = 103
    with pytest.raises(ValueError, match="beyond the histogram"):
        crosscheck.parse_cyclictest_json(over)


def test_run_cyclictest_says_why_it_could_not_run() -> None:
    assert "not installed" in str(crosscheck.run_cyclictest(TIMER, 10, which=lambda _: None))
    failed = crosscheck.run_cyclictest(TIMER, 10, run=lambda argv, t: (1, "x\nno permission"),
                                       which=lambda _: "/usr/bin/cyclictest")
    assert failed == "cyclictest exited with status 1: no permission"


def test_run_cyclictest_reads_its_json() -> None:
    seen: list[list[str]] = []

    def run(argv: Any, timeout_s: float) -> tuple[int, str]:
        seen.append(list(argv))
        out = next(a for a in argv if a.startswith("--json=")).removeprefix("--json=")
        Path(out).write_text(json.dumps(CYCLICTEST_JSON))
        return 0, ""

    c = crosscheck.run_cyclictest(TIMER, 100, run=run, which=lambda _: "/usr/bin/cyclictest")
    assert isinstance(c, crosscheck.Cyclictest) and c.p99_ns == 14_000
    argv = seen[0]
    assert argv[argv.index("-p") + 1] == "80" and argv[argv.index("-l") + 1] == "100"
    assert argv[argv.index("-i") + 1] == "1000" and "--laptop" in argv


def _section_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  real: crosscheck.Cyclictest | str) -> tuple[str, Context]:
    monkeypatch.setattr(crosscheck, "run_cyclictest", lambda timer, cycles: real)
    monkeypatch.setattr(hostprofile, "read_kernel", lambda root=None: FACTS)
    ctx = Context(quick=True, out=tmp_path, host_costs=lambda quick: FULL)
    out = crosscheck.section(ctx)
    return str(out.html), ctx


def test_section_table_says_what_is_fitted_and_predicted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = crosscheck.parse_cyclictest_json(CYCLICTEST_JSON)
    html, ctx = _section_html(tmp_path, monkeypatch, real)
    rows = {r[0]: r for r in parse_tables(html)["host-crosscheck-table"]}
    assert list(rows) == ["min", "p50", "p99", "max"]
    assert rows["min"][4].startswith("fitted")
    assert all(rows[s][4] == "predicted" for s in ("p50", "p99", "max"))
    # the simulated min is the probe's min: the fit, through the saved spec's run
    assert parse_number(rows["min"][3]) == TIMER.min_ns / 1000
    assert parse_number(rows["min"][1]) == 13.0
    assert "predictions" in html or "Predicted" in html
    # the saved spec carries the inline profile and reruns to the same numbers
    saved = (tmp_path / "specs/host-cyclictest.json").read_text()
    assert json.loads(saved)["schedlab"]["machine"]["profile"]["name"] == "host"
    again = hostprofile.headline_stats(api.simulate(saved, scheduler="linux-eevdf").json)
    assert again["min"] == TIMER.min_ns
    [entry] = [e for e in ctx.manifest if e["spec"] == "specs/host-cyclictest.json"]
    assert entry["scheduler"] == "linux-eevdf"


def test_section_without_cyclictest_says_why(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    html, _ = _section_html(tmp_path, monkeypatch, "cyclictest is not installed (test)")
    assert "did not run: cyclictest is not installed (test)" in html
    assert "host-crosscheck-table" in html


def test_section_without_a_timer_probe_says_so(tmp_path: Path) -> None:
    ctx = Context(quick=True, out=tmp_path, host_costs=lambda quick: HostCosts(PIPE, SOCKET))
    assert "no timer probe" in str(crosscheck.section(ctx).html)

"""The host sections of `schedlab reproduce --host` (seeds 000 and 003 on this machine's
kernel): opt-in, skipped with a reason where the kernel or the user forbids them, and — as
root — their measurements on the real kernel, with nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedlab import api, runner
from schedlab.seeds import HOST_SECTIONS, SECTIONS, host000, host003
from schedlab.seeds import seed003_model as m
from schedlab.seeds.wakeup000 import waiter_prefix, wakeup_from_result

ROOT = os.geteuid() == 0


def test_host_sections_are_opt_in() -> None:
    assert not set(HOST_SECTIONS) & set(SECTIONS)
    assert host000.section in HOST_SECTIONS and host003.section in HOST_SECTIONS


def test_seed003_on_the_host_says_why_it_is_skipped() -> None:
    v2_only = [{"area": "cgroup v2", "name": "cpu.max", "ok": True, "detail": ""}]
    if ROOT:
        assert "cgroup v2 has no RT bandwidth" in host003.why_not(v2_only)
        rt = [{"area": "cgroup v1", "name": "RT group scheduling", "ok": True, "detail": ""}]
        assert host003.why_not(rt) == ""
    else:
        assert "not root" in host003.why_not(v2_only)
        assert "not root" in host000.why_not()


def test_a_c_run_lasts_for_the_work_at_cgas_share() -> None:
    h = host003.host_sizes(quick=True)
    # No. 1: cgA has 100 ms per 1 s, so 0.5 s of work takes 5 periods
    assert host003.c_seconds(m.SETTINGS[1], h) == 1 + 5 + 2
    assert host003.c_seconds(m.SETTINGS[8], h) == 2  # 0.9 of every 1 ms period


def _rt_groups() -> str:
    return "" if not ROOT else host003.why_not()


@pytest.mark.skipif(not ROOT or bool(_rt_groups()),
                    reason="needs root and cgroup v1 RT group scheduling")
def test_seed003_setting_3_is_throttled_to_its_runtimes_and_its_groups_are_removed() -> None:
    setting = m.SETTINGS[3]  # cg0, cg1 225 ms and cgA 500 ms per 1 s
    sizes = host003._model_sizes(host003.host_sizes(quick=True))
    text = host003.with_duration(m.spec(setting, "T", m.PRIORITIES["equal"], sizes), 2)
    shares = host003.t_shares(runner.execute_on_host(api.load_spec(text)))
    for g in m.GROUPS:
        assert shares[g] == pytest.approx(100 * setting.share(g), abs=1.0), (g, shares)
    for hierarchy in ("cpu", "cpuset", "cpuacct"):
        assert not Path(f"/sys/fs/cgroup/{hierarchy}{m.PARENT}").exists()


@pytest.mark.skipif(not ROOT, reason="the broadcaster is SCHED_FIFO: needs root")
def test_seed000s_broadcast_test_runs_on_the_host_with_the_sections_measure() -> None:
    text = api.generate_text("broadcast-wakeup", [
        ("rt", "true"), ("waiters", "1"), ("iterations", "50"), ("load_groups", "2"),
        ("cpus", "2")])
    result = runner.execute_on_host(api.load_spec(text))
    assert result.run["engine"] == "host"
    run = wakeup_from_result(result, waiter_prefix(api.spec_view(text)))
    assert run.error is None and run.stats is not None
    assert run.broadcasts == 50
    # every broadcast that found the waiter waiting woke it once
    assert run.stats["count"] + (run.lost or 0) == 50
    assert run.stats["count"] >= 40
    assert 0 < run.stats["min"] <= run.stats["p99"] <= run.stats["max"]

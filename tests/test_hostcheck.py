"""The host runner against cyclictest, hackbench and rt-app on this machine
(:mod:`schedlab.hostcheck`): the agreement rule, the tools' outputs read, and — as root,
with the tools installed — the runner agreeing with each tool in medians of repeats."""

from __future__ import annotations

import pytest

from schedlab import hostcheck
from schedlab.hostcheck import Check, HackbenchCase, TimerSetup


def _check(tool: tuple[float, ...], ours: tuple[float, ...], kind: str = "timer-p50") -> Check:
    return Check("timer", "case", "p50", "µs", kind, tool, ours)


def test_agreement_is_within_the_tools_own_spread_or_the_floor() -> None:
    # cyclictest 20, 24, 22 µs: spread 4 µs; floor max(3 µs, 25 % of 22) = 5.5 µs
    c = _check((20, 24, 22), (25, 26, 27))
    assert c.tolerance == pytest.approx(5.5)
    assert c.difference == 4 and c.agrees
    # a runner that adds 50 µs to every wake-up is caught
    assert not _check((20, 24, 22), (70, 74, 72)).agrees
    # a noisy tool widens the tolerance to its own spread
    wide = _check((20, 60, 22), (50, 52, 51))
    assert wide.tolerance == 40 and wide.agrees
    assert hostcheck.tally([c, wide, _check((20, 24, 22), (70, 74, 72))]) == (2, 3)
    uncounted = Check("hackbench", "c", "time", "s", "hackbench", (1.0,), (9.0,), uncounted="x")
    assert hostcheck.tally([uncounted]) == (0, 0)


def test_the_tools_outputs_are_read() -> None:
    assert hostcheck.parse_hackbench("Running in threaded mode with 10 groups\n"
                                     "Each sender will pass 100 messages\nTime: 0.652\n") == 0.652
    with pytest.raises(RuntimeError):
        hostcheck.parse_hackbench("nothing")
    log = ("# Policy : SCHED_FIFO priority : 50\n"
           "#idx perf run period start end rel_st slack c_duration c_period wu_lat\n"
           "   0    0 1001  5000 100 5100  50 3900 1000 5000 26\n")
    assert hostcheck.parse_rtapp_log(log) == [{
        "idx": 0, "perf": 0, "run": 1001, "period": 5000, "start": 100, "end": 5100,
        "rel_st": 50, "slack": 3900, "c_duration": 1000, "c_period": 5000, "wu_lat": 26}]
    doc = {"thread": {"0": {"cycles": 4, "histogram": {"10": 1, "12": 2, "40": 1}}}}
    assert hostcheck.cyclictest_percentiles(doc) == (12.0, 40.0)


def test_both_sides_run_the_same_options() -> None:
    setup = TimerSetup(interval_us=500, priority=80, cpu=1, cycles=100)
    argv = setup.cyclictest_argv("cyclictest", hostcheck.Path("o.json"))
    assert argv[argv.index("-p") + 1] == "80" and argv[argv.index("-i") + 1] == "500"
    assert argv[argv.index("-a") + 1] == "1" and argv[argv.index("-l") + 1] == "100"
    spec = hostcheck.api.spec_view(setup.spec())
    task = spec["tasks"]["cyclic0"]
    assert task["cpus"] == [1] and task["priority"] == 80 and task["loop"] == 100
    assert task["timer"]["period"] == 500
    case = HackbenchCase(groups=3, loops=7, mode="pipe", tasks="thread")
    assert case.argv("hackbench") == ["hackbench", "-g", "3", "-l", "7", "-p", "-T"]
    hb = hostcheck.api.spec_view(case.spec())
    assert sum(1 for n in hb["tasks"] if "sender" in n or "receiver" in n) > 0


def _skip_unless(*tools: str) -> None:
    why = hostcheck.missing(*tools)
    if why:
        pytest.skip(why)


def _assert_agree(checks: list[Check]) -> None:
    counted = [c for c in checks if not c.uncounted]
    assert counted
    bad = [f"{c.case} {c.statistic}: tool {c.tool} runner {c.ours} (tolerance "
           f"{c.tolerance:.1f})" for c in counted if not c.agrees]
    assert not bad, bad


def test_the_runners_timer_latency_agrees_with_cyclictest() -> None:
    _skip_unless("cyclictest", "hackbench")
    _assert_agree(hostcheck.timer_checks(TimerSetup(cycles=1000, reps=3)))


def test_the_runners_hackbench_takes_hackbenchs_time_within_its_bookkeeping() -> None:
    """The runner does more per message than hackbench (a clock read per call, an attempt
    without blocking before a blocking wait, its measurement records): on this kind of
    machine, shared with other work, its median time has been 1.0–2.7× hackbench's, so
    the report's strict tolerance is not always met (the report counts it as it falls).
    Pinned here: never faster than hackbench beyond its own spread (a lost message would
    make it so), and under three times its time."""
    _skip_unless("hackbench")
    checks = hostcheck.hackbench_checks(
        [HackbenchCase(mode="pipe", tasks="thread"), HackbenchCase(mode="socket",
                                                                   tasks="thread")], reps=3)
    for c in checks:
        assert c.ours_median >= c.tool_median - c.tolerance, c
        assert c.ours_median <= 3 * c.tool_median, c


def test_the_runner_runs_an_rt_app_file_as_rt_app_does() -> None:
    _skip_unless("rt-app")
    _assert_agree(hostcheck.rtapp_checks(reps=3))

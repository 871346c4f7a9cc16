"""Seed 000's kernel parts (schedlab.seeds.kernel000): usleep's wake-ups on the board's
profile checked against Linux 2.6.17's tick rule computed in Python, the computed text
under the preemption tables, and both parts rendered from real quick runs and from runs
that all fail."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from schedlab import api
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.result import Result
from schedlab.runner import Job
from schedlab.seeds import kernel000 as k
from schedlab.seeds import seed000

MS = 1_000_000

# --- the rule ----------------------------------------------------------------------------


def test_first_tick_strictly_after_the_expiry() -> None:
    # 2.6.17's hrtimer_run_queues runs a timer once the tick's time is past its expiry:
    # an expiry on a tick waits for the next one.
    assert k.first_tick_after(2 * MS, MS) == 3 * MS
    assert k.first_tick_after(2 * MS - 1, MS) == 2 * MS
    assert k.first_tick_after(2 * MS + 1, MS) == 3 * MS
    assert k.first_tick_after(0, 4 * MS) == 4 * MS
    assert k.predicted_wake_ns(1_430_000, "jiffy", MS, timer_irq_ns=3000) == 2_003_000
    assert k.predicted_wake_ns(1_430_000, "hrtimer", MS) == 1_430_000
    assert k.predicted_wake_ns(1_430_000, "hrtimer", MS, timer_irq_ns=10, slack_ns=50) \
        == 1_430_060


def seed_hz() -> int:
    """The profile's HZ."""
    return int(k.profile()["machine"]["hz"])


def _run(text: str) -> Result:
    return api.simulate(text, scheduler="linux-o1", seed=1)


@pytest.mark.parametrize("requested_us", [330, 1000, 1500, 33_000])
@pytest.mark.parametrize("timers", [None, k.HRTIMER])
def test_simulated_sleeps_wake_as_the_rule_predicts(requested_us: int,
                                                    timers: str | None) -> None:
    result = _run(k.sleep_spec(requested_us, 2, timers))
    assert result.run["kernel"]["profile"] == k.PROFILE
    kernel = k.kernel_settings(override={"timers": timers} if timers else None)
    row = k.sleep_row(result, k.SLEEPER, requested_us, kernel)
    assert row.timers == result.run["kernel"]["timers"]
    assert len(row.sleeps) == 2 * len(k.WORK_BEFORE_SLEEP_US) - 1
    assert row.as_predicted == len(row.sleeps)
    for s in row.sleeps:
        assert s.actual >= requested_us * 1000
    if row.timers == "jiffy":
        # every call lands inside a tick: each sleep is longer than asked, by at most a tick
        tick = 1_000_000_000 // result.run["hz"]
        assert all(0 < s.actual - requested_us * 1000 <= tick + s.start - s.wake
                   for s in row.sleeps)


def test_the_check_follows_the_profiles_expiry_cost() -> None:
    """A timer-expiry cost given over the profile moves every wake-up by that much; the
    prediction reads it from the settings, and without it the check fails."""
    def with_irq(spec: dict[str, Any]) -> None:
        spec["schedlab"]["machine"]["kernel"] = {"timer_irq_ns": 7000}

    text = api.edit_spec(k.sleep_spec(1500, 2, None), with_irq)
    result = _run(text)
    right = k.sleep_row(result, k.SLEEPER, 1500, k.kernel_settings(override={
        "timer_irq_ns": 7000}))
    assert right.sleeps and right.as_predicted == len(right.sleeps)
    wrong = k.sleep_row(result, k.SLEEPER, 1500, k.kernel_settings())
    assert wrong.as_predicted == 0
    # a rule that is not the kernel's (waking at the expiry itself) fails too
    if result.run["kernel"]["timers"] == "jiffy":
        tick = 1_000_000_000 // result.run["hz"]
        assert not any(s.wake == k.predicted_wake_ns(s.expiry, "hrtimer", tick, 7000)
                       for s in right.sleeps)


def test_usleep_loop_drifts_and_absolute_timer_does_not() -> None:
    periods = 20
    rows = {kind: k.drift_row(_run(k.periodic_spec(kind, periods, None)), kind)
            for kind in k.LOOP_KINDS}
    usleep, timer = rows["usleep"], rows["timer"]
    assert len(usleep.late_ns) == len(timer.late_ns) == periods
    if usleep.timers == "jiffy":
        # every usleep adds its oversleep; the absolute timer stays within its tick
        tick = 1_000_000_000 // seed_hz()
        late = usleep.late_ns
        assert late[0] > 0 and all(b > a for a, b in zip(late, late[1:], strict=False))
        assert max(timer.late_ns) < 2 * tick < late[-1]
    for r in (usleep, timer):
        hr = k.drift_row(_run(k.periodic_spec(r.kind, periods, k.HRTIMER)), r.kind)
        assert hr.late_ns[-1] <= max(r.late_ns)
    text = k.drift_text([usleep, timer], periods)
    assert "usleep loop" in text and "timer loop" in text


# --- the slide, quoted from the data file ---------------------------------------------------


def test_slide_quote_is_read_from_its_verbatim_text() -> None:
    q = seed000.USLEEP_SLIDE
    assert q.slide == "最初は…" and seed000.DATA["usleep_slide"]["provenance"]["slide"] == q.slide
    # the numbers are the ones the original words give, discrepancy included
    assert re.search(r"usleep\((\d+)\)", q.original).group(1) == str(q.call_us)  # type: ignore[union-attr]
    assert re.search(r"(\d+)\s*msec", q.original).group(1) == str(q.slide_sleep_ms)  # type: ignore[union-attr]
    assert q.call_ms == 330 and q.slide_sleep_ms == 33
    assert f"usleep({q.call_us})" in q.text and "1/HZ" in q.text
    # both lengths the slide names are slept in the report
    assert {q.call_us, q.slide_sleep_ms * 1000} <= set(k.SLEEP_REQUESTS_US)


# --- the text under the preemption tables --------------------------------------------------


def test_order_text_strict_ties_reversed_and_missing() -> None:
    text = k.order_text({
        "a": {"none": 40.0, "voluntary": 30.0, "full": 20.0, "rt": 10.0},
        "b": {"none": 40.0, "voluntary": 40.0, "full": 20.0, "rt": 10.0},
        "c": {"none": 40.0, "voluntary": 20.0, "full": 30.0, "rt": 10.0},
        "d": {"none": 40.0, "voluntary": 20.0, "full": 30.0, "rt": None},
    })
    assert ("a: none 40.00 > voluntary 30.00 > full 20.00 > rt 10.00 µs — strictly in "
            "order.") in text
    assert "b: none 40.00 = voluntary 40.00 > full 20.00 > rt 10.00 µs — not strictly in " \
           "order: none and voluntary equal." in text
    assert "c: none 40.00 > voluntary 20.00 < full 30.00 > rt 10.00 µs — not strictly in " \
           "order: full above voluntary." in text
    assert "d: no maximum under rt." in text
    assert "The strict order none > voluntary > full > rt holds for 1 of 3 policies." in text
    # under none every policy has 40: said, and only there
    assert "Every policy has the same maximum under none (40.00 µs): there the policies " \
           "cannot be told apart." in text


def test_order_text_constant_is_not_agreement() -> None:
    same = {m: 5.0 for m in k.PREEMPT_MODELS}
    text = k.order_text({"a": dict(same), "b": dict(same)})
    assert "holds for 0 of 2 policies" in text
    assert "a: none 5.00 = voluntary 5.00 = full 5.00 = rt 5.00 µs" in text
    assert "none and voluntary equal, voluntary and full equal, full and rt equal" in text
    assert "Every policy has the same maximum under every model" in text
    strict = {"none": 4.0, "voluntary": 3.0, "full": 2.0, "rt": 1.0}
    text = k.order_text({"a": dict(strict), "b": dict(strict)})
    assert "holds for 2 of 2 policies" in text
    assert "one fact repeated, not agreement" in text
    # one policy alone: nothing to compare across policies
    assert "same maximum" not in k.order_text({"a": dict(same)})


def test_policy_means_text_names_strict_differences_and_ties() -> None:
    def st(mean: float) -> dict[str, float]:
        return {"mean": mean}

    stats = {"linux-o1": {"none": st(130.2), "rt": st(128.0)},
             "staircase": {"none": st(130.0), "rt": st(128.0)},
             "nicksched": {"none": st(130.2), "rt": st(128.0)}}
    text = k.policy_means_text(stats)
    assert "none: staircase 130.000 < linux-o1 130.200 ≤ nicksched 130.200 µs " \
           "(tied: linux-o1 and nicksched)" in text
    assert "rt: every policy 128.000 µs (a tie)" in text
    assert k.policy_means_text({"linux-o1": {"none": st(1.0)}}) == ""


def test_models_text_calls_a_policy_constant_across_models_a_tie() -> None:
    def st(mean: float) -> dict[str, float]:
        return {"mean": mean}

    stats = {"linux-o1": {m: st(130.0) for m in k.PREEMPT_MODELS},
             "staircase": {"none": st(131.0), "full": st(130.0)},
             "nicksched": {"none": st(1.0)}}
    assert k.models_text(stats) == (
        "The mean RT waiter latency is the same under every preemption model for linux-o1 "
        "(a tie, not an ordering); it differs between preemption models for staircase.")
    assert k.models_text({"nicksched": {"none": st(1.0)}}) == ""


def test_ticks_text_counts_windows_and_says_why_the_model_cannot_act() -> None:
    assert k.ticks_text({}) == ""
    none = k.ticks_text({("linux-o1", "none"): (0, 200), ("linux-o1", "rt"): (0, 200)})
    assert none.startswith("A tick falls strictly inside 0 of the 400 RT waiters' windows")
    assert "TASK_PREEMPTS_CURR" in none and "window closes before the next one" in none
    some = k.ticks_text({("linux-o1", "none"): (3, 200)})
    assert some.startswith("A tick falls strictly inside 3 of the 200 RT waiters' windows "
                           "(broadcast → running) in 1 run. Beyond the tick,")


# --- the parts, rendered ----------------------------------------------------------------------


def test_parts_render_from_real_quick_runs(tmp_path: Path) -> None:
    ctx = Context(True, tmp_path, jobs=2)
    st = seed000.settings(True)
    policies = seed000.linux_policies(ctx.registry)
    usleep, preempt = k.parts(ctx, st, policies)
    assert all(r.ok for r in usleep.runs + preempt.runs)
    tables = parse_tables(str(usleep.html) + str(preempt.html))
    rows = tables["seed000-usleep"]
    assert len(rows) == 2 * len(k.SLEEP_REQUESTS_US)
    for row in rows:
        n = int(parse_number(row[2]) or 0)
        assert n > 0 and row[10] == f"{n} of {n}"
    assert len(tables["seed000-periodic-drift"]) == 2 * len(k.LOOP_KINDS)
    chosen = k.preempt_policies(policies)
    assert chosen and [r[1] for r in tables["seed000-preempt-waiters"]] == chosen
    for measure in k.MEASURES:
        for row in tables[f"seed000-preempt-{measure}"]:
            assert all(parse_number(row[5 + 4 * i]) == st.wakeup["iterations"]
                       for i in range(len(k.PREEMPT_MODELS))), row
    for m in k.PREEMPT_MODELS:
        spec = json.loads((tmp_path / "specs" / f"seed000-preempt-{m}.json").read_text())
        machine = spec["schedlab"]["machine"]
        assert machine == {"profile": k.PROFILE, "kernel": {"preempt": m}}
    assert (tmp_path / "specs" / "seed000-usleep-330000us-hrtimer.json").exists()
    # the slide's words, in the original and translated, with the discrepancy kept
    q = seed000.USLEEP_SLIDE
    page = str(usleep.html)
    assert q.original in page and q.text in page
    assert f"writes {q.slide_sleep_ms} msec beside <code>usleep({q.call_us})</code>, which " \
           f"asks for {q.call_ms:g} ms" in page
    assert len(ctx.manifest) == len(usleep.runs) + len(preempt.runs)
    assert "holds for" in str(preempt.html)
    assert "A tick falls strictly inside" in str(preempt.html)
    # On the board each policy's own scheduler code lies on the RT waiter's path: the
    # policies' means differ strictly, and each policy's mean is the same under every
    # preemption model (nothing on that path asks for a reschedule a model could place).
    means = [parse_number(r[2]) for r in tables["seed000-preempt-waiters"]]
    assert None not in means and len(set(means)) == len(means) > 1, means
    for row in tables["seed000-preempt-waiters"]:
        assert len({row[2 + 4 * i] for i in range(len(k.PREEMPT_MODELS))}) == 1, row
    assert "Mean RT waiter latency by policy" in str(preempt.html)


def test_parts_render_when_every_run_fails(tmp_path: Path) -> None:
    def broken(job: Job) -> Result:
        raise RuntimeError("boom")

    def generate(name: str, **options: Any) -> str:
        return json.dumps({"tasks": {}, "fake": {"generator": name, "options": options}})

    registry = [{"name": "staircase", "family": "linux", "available": True},
                {"name": "linux-cfs", "family": "linux", "available": True}]
    ctx = Context(True, tmp_path, simulate=broken, generate=generate, registry=registry)
    usleep, preempt = k.parts(ctx, seed000.settings(True), ["staircase", "linux-cfs"])
    tables = parse_tables(str(usleep.html) + str(preempt.html))
    assert all(r[2].startswith("failed: RuntimeError: boom") for r in tables["seed000-usleep"])
    assert [r[1] for r in tables["seed000-preempt-waiters"]] == ["staircase"]
    assert "staircase: no maximum under none, voluntary, full, rt." in str(preempt.html)
    saved = json.loads((tmp_path / "specs" / "seed000-preempt-rt.json").read_text())
    assert saved["schedlab"]["machine"] == {"profile": k.PROFILE, "kernel": {"preempt": "rt"}}

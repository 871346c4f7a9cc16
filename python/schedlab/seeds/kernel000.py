"""Seed 000's kernel, regenerated on the board's machine profile: why ``usleep`` oversleeps
under Linux 2.6.17's tick-driven timers, and how the preemption model bounds an RT task's
wake-up latency.

Both parts run on the built-in machine profile ``seed000-tx4937`` (``schedlab profiles``):
the board's CPU, HZ, preemption model, timers and costs are whatever that profile holds,
read from it, never copied here.

- :func:`usleep_part`: the slide "最初は…" (quoted with its provenance in
  data/seed000.json) — ``usleep(330000)`` wakes the task next after
  the time asked "+ 1/HZ sec + until it gets to run". A SCHED_FIFO task runs a little and
  sleeps (rt-app ``sleep``: a relative ``nanosleep``, i.e. ``usleep``) for several
  lengths, under the profile's timers and, for contrast, high-resolution ones. Each
  sleep's wake-up is checked against 2.6.17's rule computed here from its formula
  (:func:`predicted_wake_ns`: the first tick strictly after the expiry), independently of
  the simulator's implementation of it. A periodic loop built on ``usleep`` is then set
  against one on absolute timers (rt-app ``timer``): the first drifts by the oversleep
  every period, the second does not, which is why the seed's broadcaster could not use the
  sleep calls.
- :func:`preempt_part`: seed 000's broadcast wake-up test (RT waiters, ``hackbench 10``
  load) under each preemption model (``none``, ``voluntary``, ``full``, ``rt``) and each
  seed scheduler's counterpart; the text under each table says, from the numbers, where
  the maxima fall strictly in the order none > voluntary > full > rt and where they tie,
  how the policies' mean RT waiter latencies compare (they differ by each policy's own
  scheduler code on the waiter's path, as the board profile costs it), and in how many
  waiters' windows a tick falls (only there could a tick's or a softirq's work, whose place
  the preemption model decides, delay them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedlab import _core, api
from schedlab.preemption import PREEMPT_LABEL, PREEMPT_MODELS, order_text
from schedlab.report import Cell, Column, Table, fmt, render
from schedlab.report.context import Part, RunOutcome
from schedlab.result import Result
from schedlab.seeds.seed000 import (
    BOARD_PROFILE,
    USLEEP_SLIDE,
    Settings,
    on_board,
    policy_sweep,
    seed_name_of,
)
from schedlab.seeds.wakeup000 import stats_us, waiter_prefix

if TYPE_CHECKING:
    from schedlab.report.context import Context

Stats = dict[str, Any]

#: The board's machine profile (crates/schedlab-spec/profiles/).
PROFILE = BOARD_PROFILE

#: The slide this part regenerates (seeds/data/seed000.json).
SLIDE = USLEEP_SLIDE
#: The slide's two lengths, µs: the one it writes (33 msec) and the one its call asks for.
SLIDE_LENGTHS_US: tuple[int, ...] = (SLIDE.slide_sleep_ms * 1000, SLIDE.call_us)

#: Sleep lengths asked for (µs): below one jiffy, one jiffy, non-multiples of it, and the
#: slide's two.
SLEEP_REQUESTS_US: tuple[int, ...] = (330, 1000, 1500, 3300, 10_000, *SLIDE_LENGTHS_US)
#: The work before each sleep (µs): four calls spread over a 1 ms jiffy, so each length is
#: asked for early, twice in the middle and late in a tick.
WORK_BEFORE_SLEEP_US: tuple[int, ...] = (50, 300, 550, 800)
#: Passes over those four sleeps per requested length.
SLEEP_LOOPS = {True: 3, False: 10}
#: High-resolution timers: the contrast to the profile's timers.
HRTIMER = "hrtimer"

#: The periodic loop: work ``PERIODIC_WORK_US`` then wait for the next period of
#: ``PERIOD_US`` (the wake-up test's broadcast period), for this many periods.
PERIOD_US = 10_000
PERIODIC_WORK_US = 1000
PERIODS = {True: 100, False: 1000}
#: The preemption-model table's sweep (a spec per model × the seed's counterparts).
PREEMPT_SWEEP = "seed000-preempt"
#: The usleep and periodic loops' sweep (a spec per sleep or loop × one policy).
USLEEP_SWEEP = "seed000-usleep"
#: After how many periods the drift table looks.
DRIFT_AT = (1, 10, 100, 1000)



# --------------------------------------------------------------------------------------
# The profile and 2.6.17's timer rule
# --------------------------------------------------------------------------------------


def profile(name: str = PROFILE) -> dict[str, Any]:
    """The built-in machine profile ``name`` as the core holds it."""
    found = [p for p in api.profiles() if p.get("name") == name]
    if not found:
        raise ValueError(f"no built-in machine profile {name!r}")
    return found[0]


def kernel_settings(name: str = PROFILE, override: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """The profile's ``machine.kernel`` with a spec's ``kernel`` keys over it."""
    k = dict((profile(name).get("machine") or {}).get("kernel") or {})
    k.update(override or {})
    return k


def first_tick_after(t_ns: int, tick_ns: int) -> int:
    """The first tick strictly after ``t_ns`` (ticks at every multiple of ``tick_ns``)."""
    return (t_ns // tick_ns + 1) * tick_ns


def predicted_wake_ns(expiry_ns: int, timers: str, tick_ns: int, timer_irq_ns: int = 0,
                      slack_ns: int = 0) -> int:
    """When a sleep that expires at ``expiry_ns`` makes its task runnable.

    ``jiffy`` (Linux 2.6.17 without high-resolution timers): ``hrtimer_run_queues`` runs
    from the timer softirq every jiffy, and ``run_hrtimer_queue`` (kernel/hrtimer.c)
    stops at the first timer whose expiry is not before the tick's time
    (``softirq_time <= expires``), so a timer fires at the first tick strictly after its
    expiry. ``hrtimer``: at the expiry plus the timer slack
    (none for real-time tasks). Either way the expiry's handler (``timer_irq_ns``) runs
    before the task is woken.
    """
    fires = first_tick_after(expiry_ns, tick_ns) if timers == "jiffy" else expiry_ns + slack_ns
    return fires + timer_irq_ns


# --------------------------------------------------------------------------------------
# Part 1: usleep oversleeps
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sleep:
    """One sleep of the task, ns: when it blocked, the expiry the kernel set, when the
    timer made it runnable and when it ran again."""

    call: int
    expiry: int
    wake: int
    start: int

    @property
    def actual(self) -> int:
        """From the call to running again: what the sleeping program sees."""
        return self.start - self.call


def sleeps_of(result: Result, task: str) -> list[Sleep]:
    """Every sleep of ``task`` whose call time is known: the end of its previous
    activation (its first sleep follows no activation and is left out)."""
    import polars as pl

    df = result.samples.filter(pl.col("task") == task).sort("release_ns")
    rows = df.select("release_ns", "wake_ns", "start_ns", "end_ns").rows()
    return [Sleep(call=int(prev[3]), expiry=int(cur[0]), wake=int(cur[1]), start=int(cur[2]))
            for prev, cur in zip(rows, rows[1:], strict=False)
            if prev[3] >= 0 and cur[2] >= 0]


@dataclass
class SleepRow:
    """The sleeps of one requested length under one kind of timers."""

    requested_us: int
    timers: str
    sleeps: list[Sleep] = field(default_factory=list)
    #: The rule's wake-up for each sleep (ns), in the order of ``sleeps``.
    predicted: list[int] = field(default_factory=list)
    error: str | None = None

    @property
    def as_predicted(self) -> int:
        """Sleeps whose expiry is the call + the length asked and whose wake-up is the
        rule's."""
        want = self.requested_us * 1000
        return sum(s.expiry - s.call == want and s.wake == p
                   for s, p in zip(self.sleeps, self.predicted, strict=True))


def sleep_row(result: Result, task: str, requested_us: int, kernel: Mapping[str, Any]
              ) -> SleepRow:
    """The sleeps of ``task`` and the rule's prediction of each, for a run whose
    effective kernel settings are ``kernel`` (its timers are the run's own)."""
    timers = str((result.run.get("kernel") or {}).get("timers") or kernel.get("timers"))
    tick_ns = 1_000_000_000 // int(result.run["hz"])
    irq = int(kernel.get("timer_irq_ns") or 0)
    sleeps = sleeps_of(result, task)
    pred = [predicted_wake_ns(s.expiry, timers, tick_ns, irq) for s in sleeps]
    return SleepRow(requested_us, timers, sleeps, pred)


SLEEPER = "sleeper"


def sleep_spec(requested_us: int, loops: int, timers: str | None) -> str:
    """A SCHED_FIFO task that, ``loops`` times, does each of the works of
    :data:`WORK_BEFORE_SLEEP_US` and sleeps ``requested_us`` after each; on the profile,
    with its timers or ``timers``."""
    phases = {f"w{w}": {"run": w, "sleep": requested_us} for w in WORK_BEFORE_SLEEP_US}
    return api.spec_text({
        "tasks": {SLEEPER: {"policy": "SCHED_FIFO", "priority": 50, "loop": loops,
                            "phases": phases}},
        "schedlab": {"machine": _machine(timers)},
    })


def _machine(timers: str | None, **kernel: str) -> dict[str, Any]:
    """The profile, with these ``machine.kernel`` keys over it."""
    k = {**({"timers": timers} if timers else {}), **kernel}
    return {"profile": PROFILE, **({"kernel": k} if k else {})}


PERIODIC = "periodic"
LOOP_KINDS = {"usleep": "usleep(period − work) after the work",
              "timer": "absolute timer (rt-app timer, clock_nanosleep TIMER_ABSTIME)"}


def periodic_spec(kind: str, periods: int, timers: str | None) -> str:
    """A SCHED_FIFO task that marks ``begin``, then ``periods`` times works and waits for
    its next period: with ``usleep`` of the rest of the period, or an absolute timer."""
    if kind == "usleep":
        wait: dict[str, Any] = {"sleep": PERIOD_US - PERIODIC_WORK_US}
    else:
        wait = {"timer": {"ref": "unique", "period": PERIOD_US, "mode": "absolute"}}
    return api.spec_text({
        "tasks": {PERIODIC: {"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "phases": {
            "begin": {"loop": 1, "schedlab:mark": "begin"},
            "periods": {"loop": periods, "run": PERIODIC_WORK_US, **wait},
        }}},
        "schedlab": {"machine": _machine(timers)},
    })


@dataclass
class DriftRow:
    """Where a periodic loop's iterations started against where its periods do."""

    kind: str
    timers: str
    #: Lateness of the start of iteration k (k = 1, 2, …) behind begin + k·period, ns.
    late_ns: list[int] = field(default_factory=list)
    error: str | None = None

    def at(self, k: int) -> int | None:
        return self.late_ns[k - 1] if 0 < k <= len(self.late_ns) else None


def drift_row(result: Result, kind: str) -> DriftRow:
    """The lateness of every iteration of the periodic task after its ``begin`` mark."""
    import polars as pl

    timers = str((result.run.get("kernel") or {}).get("timers"))
    begin = (result.summary.get("marks") or {}).get("begin")
    if begin is None:
        return DriftRow(kind, timers, error="the run has no begin mark")
    df = result.samples.filter(pl.col("task") == PERIODIC).sort("release_ns")
    starts = [int(s) for s in df["start_ns"].to_list() if s >= 0]
    period = PERIOD_US * 1000
    return DriftRow(kind, timers, [s - (int(begin) + (k + 1) * period)
                                   for k, s in enumerate(starts)])


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0


SLEEP_COLUMNS = [
    Column("requested", "int"), Column("timers"), Column("n", "int"),
    Column("mean", "us"), Column("min", "us"), Column("max", "us"),
    Column("oversleep min", "us"), Column("oversleep max", "us"),
    Column("rule: wake after, min", "us", cls="pub"),
    Column("rule: wake after, max", "us", cls="pub"),
    Column("woken as the rule says"),
    Column("then waited to run, max", "us"),
]


def _sleep_row_cells(r: SleepRow) -> list[Any]:
    """One row of the usleep table."""
    head: list[Any] = [Cell(r.requested_us, kind="int"), r.timers]
    rest = len(SLEEP_COLUMNS) - len(head)
    if r.error:
        short = r.error if len(r.error) < 60 else r.error[:57] + "…"
        return [*head, Cell(f"failed: {short}", kind="text", cls="error", title=r.error),
                *[None] * (rest - 1)]
    if not r.sleeps:
        return [*head, Cell(0, kind="int"), *[None] * (rest - 1)]
    actual = _core.stats([s.actual for s in r.sleeps])
    over = [s.actual - r.requested_us * 1000 for s in r.sleeps]
    after = [p - s.call for s, p in zip(r.sleeps, r.predicted, strict=True)]
    to_run = [s.start - s.wake for s in r.sleeps]
    return [*head, Cell(len(r.sleeps), kind="int"),
            _us(actual["mean"]), _us(actual["min"]), _us(actual["max"]),
            _us(min(over)), _us(max(over)), _us(min(after)), _us(max(after)),
            f"{r.as_predicted} of {len(r.sleeps)}", _us(max(to_run))]


def sleep_table(rows: Sequence[SleepRow]) -> Table:
    return Table(
        id="seed000-usleep",
        caption="usleep(requested µs) on the board's profile: how long the task slept (µs)",
        columns=SLEEP_COLUMNS,
        groups=[("", 3, ""), ("slept: call → running again", 5, ""),
                ("2.6.17 rule (computed here)", 3, "pub"), ("", 1, "")],
        rows=[_sleep_row_cells(r) for r in rows])


def _range_text(lo: int, hi: int) -> str:
    """``lo``–``hi`` ns as µs text (one value when equal)."""
    a, b = fmt(lo / 1000, "us"), fmt(hi / 1000, "us")
    return f"{a} µs" if a == b else f"{a}–{b} µs"


def usleep_text(rows: Sequence[SleepRow], tick_ns: int | None) -> str:
    """The paragraph under the usleep table, from its numbers."""
    parts: list[str] = []
    by_timers: dict[str, list[SleepRow]] = {}
    for r in rows:
        if r.sleeps and not r.error:
            by_timers.setdefault(r.timers, []).append(r)
    if not by_timers:
        return "No sleep run produced samples."
    for timers, rs in by_timers.items():
        n = sum(len(r.sleeps) for r in rs)
        k = sum(r.as_predicted for r in rs)
        over = [s.actual - r.requested_us * 1000 for r in rs for s in r.sleeps]
        rule = ("the first tick strictly after its expiry" if timers == "jiffy"
                else "its expiry (no slack for a real-time task)")
        verdict = "every one" if k == n else f"{k} of {n}"
        longer = sum(o > 0 for o in over)
        if longer == 0:
            how = "none lasted longer than asked"
        else:
            how = (f"{'all' if longer == n else f'{longer} of {n}'} lasted longer than "
                   f"asked, by {_range_text(min(over), max(over))}")
        parts.append(f"Under {timers} timers, {verdict} of the {n} sleeps woke at {rule}, "
                     f"as computed here from the rule; {how}.")
    jiffy = by_timers.get("jiffy", [])
    if tick_ns and jiffy:
        late = [r for r in jiffy for s in r.sleeps
                if not 0 < s.actual - r.requested_us * 1000 <= tick_ns + (s.start - s.wake)]
        parts.append(
            f"With a tick of {_range_text(tick_ns, tick_ns)} (HZ = "
            f"{1_000_000_000 // tick_ns:,}), the slide's bound — the time asked + 1/HZ + "
            "until the task gets to run — "
            + ("holds for every sleep" if not late else f"fails for {len(late)} sleeps") + ".")
        for x in SLIDE_LENGTHS_US:
            r = next((r for r in jiffy if r.requested_us == x), None)
            if r is not None:
                slept = [s.actual for s in r.sleeps]
                parts.append(f"usleep({x}) slept {_range_text(min(slept), max(slept))}.")
    return " ".join(parts)


def drift_table(rows: Sequence[DriftRow], periods: int) -> Table:
    at = [k for k in DRIFT_AT if k <= periods]
    body: list[list[Any]] = []
    for r in rows:
        head: list[Any] = [LOOP_KINDS[r.kind], r.timers]
        if r.error:
            body.append([*head, Cell(f"failed: {r.error[:60]}", kind="text", cls="error",
                                     title=r.error), *[None] * len(at)])
            continue
        last = r.at(periods)
        mean_period = None if last is None else PERIOD_US + last / 1000 / periods
        body.append([*head, mean_period, *[_us(r.at(k)) for k in at]])
    return Table(
        id="seed000-periodic-drift",
        caption=(f"A periodic loop ({PERIODIC_WORK_US:,} µs of work every {PERIOD_US:,} µs) "
                 "on the board's profile: how late iteration k starts (µs)"),
        columns=[Column("loop"), Column("timers"), Column("mean period", "us"),
                 *[Column(f"k = {k:,}", "us") for k in at]],
        groups=[("", 3, ""), ("late behind begin + k · period", len(at), "")],
        rows=body)


def drift_text(rows: Sequence[DriftRow], periods: int) -> str:
    """The paragraph under the drift table, from its numbers."""
    parts = []
    for r in rows:
        if r.error or not r.late_ns:
            continue
        last = r.at(periods)
        if last is None:
            parts.append(f"The {r.kind} loop under {r.timers} timers ran only "
                         f"{len(r.late_ns):,} of {periods:,} periods.")
            continue
        grows = last > r.late_ns[0]
        share = last / (periods * PERIOD_US * 1000) * 100
        parts.append(
            f"{r.kind} loop, {r.timers} timers: iteration {periods:,} started "
            f"{fmt(last / 1000, 'us')} µs late ({share:.1f} % of the {periods:,} periods), "
            f"the latest of all {fmt(max(r.late_ns) / 1000, 'us')} µs — "
            + ("the lateness accumulates." if grows else "it does not accumulate."))
    return " ".join(parts) if parts else "No periodic run produced samples."


@dataclass
class UsleepPart(Part):
    sleep_rows: list[SleepRow] = field(default_factory=list)
    drift_rows: list[DriftRow] = field(default_factory=list)


def usleep_policy(policies: Sequence[str]) -> str | None:
    """The policy the one-task runs use (it alone on the CPU, the policy cannot matter):
    the mainline scheduler's counterpart if available, else the first policy."""
    mainline = next((p for p in policies if seed_name_of(p) == "ingosched"), None)
    return mainline or (policies[0] if policies else None)


def _sleep_specs(ctx: Context) -> dict[tuple[int, str | None], tuple[str, str]]:
    """Per (requested µs, timers): the usleep loop's spec name and text."""
    loops = SLEEP_LOOPS[ctx.quick]
    return {(x, timers): (f"seed000-usleep-{x}us" + (f"-{timers}" if timers else ""),
                          sleep_spec(x, loops, timers))
            for x in SLEEP_REQUESTS_US for timers in (None, HRTIMER)}


def _periodic_specs(ctx: Context) -> dict[tuple[str, str | None], tuple[str, str]]:
    """Per (loop kind, timers): the periodic loop's spec name and text."""
    periods = PERIODS[ctx.quick]
    return {(kind, timers): (f"seed000-periodic-{kind}" + (f"-{timers}" if timers else ""),
                             periodic_spec(kind, periods, timers))
            for kind in LOOP_KINDS for timers in (None, HRTIMER)}


def usleep_part(ctx: Context, st: Settings, policies: Sequence[str]) -> UsleepPart:
    """usleep's oversleep on the board's profile, checked against 2.6.17's rule, and the
    drift of a periodic loop built on it."""
    policy = usleep_policy(policies)
    prof = profile()
    sleep_rows: list[SleepRow] = []
    drift_rows: list[DriftRow] = []
    runs: list[RunOutcome] = []
    tick_ns: int | None = None
    if policy is not None:
        sleeps, loops = _sleep_specs(ctx), _periodic_specs(ctx)
        specs = dict([*sleeps.values(), *loops.values()])
        runs = ctx.sweep(policy_sweep(USLEEP_SWEEP, specs, [policy], st.seed, samples=True),
                         "seed 000: usleep and periodic loops")
        by_spec = {r.request.spec_name: r for r in runs}
        for (x, timers), (name, _) in sleeps.items():
            o = by_spec[name]
            kernel = kernel_settings(override={"timers": timers} if timers else None)
            if o.ok and o.result is not None:
                sleep_rows.append(sleep_row(o.result, SLEEPER, x, kernel))
                tick_ns = tick_ns or 1_000_000_000 // int(o.result.run["hz"])
            else:
                sleep_rows.append(SleepRow(x, timers or str(kernel.get("timers")),
                                           error=o.error or "no result"))
        for (kind, timers), (name, _) in loops.items():
            o = by_spec[name]
            if o.ok and o.result is not None:
                drift_rows.append(drift_row(o.result, kind))
            else:
                label = timers or str(kernel_settings().get("timers"))
                drift_rows.append(DriftRow(kind, label, error=o.error or "no result"))
    periods = PERIODS[ctx.quick]
    html = render(
        "seed000_usleep.html.j2", slide=SLIDE, profile=prof,
        policy=policy, works=", ".join(f"{w:,}" for w in WORK_BEFORE_SLEEP_US),
        loops=SLEEP_LOOPS[ctx.quick],
        sleep_table=sleep_table(sleep_rows) if sleep_rows else None,
        sleep_text=usleep_text(sleep_rows, tick_ns),
        drift_table=drift_table(drift_rows, periods) if drift_rows else None,
        drift_text=drift_text(drift_rows, periods),
        specs=sorted({r.request.spec_name for r in runs}))
    return UsleepPart(html=html, runs=runs, sleep_rows=sleep_rows, drift_rows=drift_rows)


# --------------------------------------------------------------------------------------
# Part 2: RT wake-up latency by preemption model
# --------------------------------------------------------------------------------------

#: What each latency table measures: the seed's (the waiters, from the broadcast) and the
#: broadcaster's own timer wake-up (from its timer's expiry).
MEASURES = {
    "waiters": "RT waiters, from the broadcast to running (the seed's measure)",
    "timer": "timer-released activations (the broadcaster), from the expiry to running",
}


def preempt_spec(ctx: Context, st: Settings, preempt: str) -> str:
    """Seed 000's wake-up test with RT waiters at the seed's sizes, on the board's profile
    under preemption model ``preempt``: the generator's machine size and HZ are dropped so
    the profile's hold."""
    text = ctx.generate("broadcast-wakeup", rt=True, **st.wakeup)

    def on_profile(spec: dict[str, Any]) -> None:
        on_board(spec)
        spec["schedlab"]["machine"]["kernel"] = {"preempt": preempt}

    return api.edit_spec(text, on_profile)


def latencies_ns(result: Result, measure: str, prefix: str) -> list[int]:
    """Wake-up latencies (ns) of every started activation ``measure`` takes: the tasks
    named ``prefix``…, or the timer-released activations."""
    import polars as pl

    df = result.samples.filter(pl.col("wakeup_latency_ns").is_not_null())
    if measure == "waiters":
        sel = df.filter(pl.col("task").str.starts_with(prefix))
    else:
        sel = df.filter(pl.col("kind") == 0)
    return [int(x) for x in sel["wakeup_latency_ns"].to_list()]


def _stats(values: Sequence[int]) -> Stats:
    return stats_us(_core.stats(list(values)))


def windows_with_a_tick(result: Result, prefix: str) -> tuple[int, int]:
    """Of the RT waiters' started wake-ups, how many have a tick strictly inside their
    window (from the broadcast to running): only there can a tick's interrupt or softirq
    work delay them. (windows with a tick, windows)."""
    import polars as pl

    tick = 1_000_000_000 // int(result.run["hz"])
    df = result.samples.filter(pl.col("task").str.starts_with(prefix)
                               & pl.col("wakeup_latency_ns").is_not_null())
    pairs = list(zip(df["wake_ns"].to_list(), df["start_ns"].to_list(), strict=True))
    inside = sum(1 for w, s in pairs if (s - 1) // tick > w // tick)
    return inside, len(pairs)


def ticks_text(ticks: Mapping[tuple[str, str], tuple[int, int]]) -> str:
    """Where a tick falls inside an RT waiter's window, from the runs' samples, and why
    the preemption model has nothing else to act on there."""
    if not ticks:
        return ""
    inside = sum(k for k, _ in ticks.values())
    total = sum(n for _, n in ticks.values())
    text = (f"A tick falls strictly inside {inside:,} of the {total:,} RT waiters' windows "
            f"(broadcast → running) in {len(ticks)} run{'s' if len(ticks) != 1 else ''}")
    why = ("the window is the broadcaster's own path: it outranks the waiter and the load, "
           "so waking the waiter asks for no reschedule (2.6.17's try_to_wake_up reschedules "
           "only when TASK_PREEMPTS_CURR), nothing lower runs until it blocks on its timer, "
           "and its schedule() picks the waiter; a preemption model decides only where a "
           "reschedule asked of lower-priority kernel work, or softirq work, takes effect, "
           "and neither lies on this path")
    if inside == 0:
        return (text + ": the broadcaster's timer expires at a tick (jiffy timers) and the "
                "window closes before the next one. Beyond the tick, " + why + ".")
    return text + f". Beyond the tick, {why}."


def policy_means_text(stats: Mapping[str, Mapping[str, Stats | None]]) -> str:
    """How the policies' mean RT waiter latencies compare under each preemption model:
    strict differences named, ties called ties."""
    parts = []
    for m in PREEMPT_MODELS:
        means = {p: (by.get(m) or {}).get("mean") for p, by in stats.items()}
        known = sorted(((v, p) for p, v in means.items() if v is not None))
        if len(known) < 2:
            continue
        if known[0][0] == known[-1][0]:
            parts.append(f"{m}: every policy {fmt(known[0][0], 'us', 3)} µs (a tie)")
            continue
        chain = ""
        ties = []
        for i, (v, p) in enumerate(known):
            if i:
                tied = v == known[i - 1][0]
                chain += " ≤ " if tied else " < "
                if tied:
                    ties.append(f"{known[i - 1][1]} and {p}")
            chain += f"{p} {fmt(v, 'us', 3)}"
        parts.append(f"{m}: {chain} µs" + (f" (tied: {', '.join(ties)})" if ties else ""))
    if not parts:
        return ""
    return ("Mean RT waiter latency by policy — " + "; ".join(parts) + ". The k-th switch "
            "into a task costs the same under every policy, so what separates the policies "
            "here is their own scheduler code on the waiter's path — the waiter's wake-up, "
            "the broadcaster's dequeue and schedule()'s pick — at each policy's cost per "
            "decision and per counted unit (the board profile's sched_work_ps, predicted from "
            "this host's timing of each policy's code).")


def models_text(stats: Mapping[str, Mapping[str, Stats | None]]) -> str:
    """Per policy, whether its mean RT waiter latency is the same under every preemption
    model (the ties named as ties)."""
    same, differ = [], []
    for p, by in stats.items():
        means = {m: (by.get(m) or {}).get("mean") for m in PREEMPT_MODELS}
        known = [v for v in means.values() if v is not None]
        if len(known) < 2:
            continue
        (same if len(set(known)) == 1 else differ).append(p)
    if not same and not differ:
        return ""
    parts = []
    if same:
        parts.append(f"The mean RT waiter latency is the same under every preemption model "
                     f"for {', '.join(same)} (a tie, not an ordering)")
    if differ:
        parts.append(f"it differs between preemption models for {', '.join(differ)}")
    return "; ".join(parts) + "."


@dataclass
class PreemptPart(Part):
    #: [measure][policy][model] -> statistics (µs), None where the run failed.
    stats: dict[str, dict[str, dict[str, Stats | None]]] = field(default_factory=dict)


def preempt_table(measure: str, stats: Mapping[str, Mapping[str, Stats | None]],
                  errors: Mapping[tuple[str, str], str]) -> Table:
    rows: list[list[Any]] = []
    for policy, by_model in stats.items():
        row: list[Any] = [seed_name_of(policy) or "—", policy]
        for m in PREEMPT_MODELS:
            err = errors.get((policy, m))
            st = by_model.get(m)
            if err:
                row += [Cell("failed", kind="text", cls="error", title=err), None, None, None]
            elif st is None or not st.get("count"):
                row += [None, None, None, Cell(0, kind="int")]
            else:
                row += [st["mean"], st["p99"], st["max"], Cell(st["count"], kind="int")]
        rows.append(row)
    return Table(
        id=f"seed000-preempt-{measure}",
        caption=f"Wake-up latency by preemption model, {MEASURES[measure]} (µs)",
        columns=[Column("seed scheduler"), Column("schedlab policy"),
                 *[c for _ in PREEMPT_MODELS for c in (
                     Column("mean", "us"), Column("p99", "us"), Column("max", "us"),
                     Column("n", "int"))]],
        groups=[("", 2, ""), *[(f"{m} ({PREEMPT_LABEL[m]})", 4, "") for m in PREEMPT_MODELS]],
        rows=rows)


def preempt_policies(policies: Sequence[str]) -> list[str]:
    """The seed schedulers' counterparts among ``policies``."""
    return [p for p in policies if seed_name_of(p) is not None]


def preempt_part(ctx: Context, st: Settings, policies: Sequence[str]) -> PreemptPart:
    """The broadcast wake-up test (RT waiters) under every preemption model and every
    seed scheduler's counterpart, on the board's profile."""
    chosen = preempt_policies(policies)
    specs: dict[str, str] = {}
    gen_errors: dict[str, str] = {}
    prefix = "waiter"
    for m in PREEMPT_MODELS if chosen else ():
        try:
            text = preempt_spec(ctx, st, m)
        except Exception as exc:  # shown on the page
            gen_errors[m] = f"{type(exc).__name__}: {exc}"
            continue
        prefix = waiter_prefix(api.spec_view(text))
        specs[f"seed000-preempt-{m}"] = text
    runs: list[RunOutcome] = []
    try:
        if specs:
            runs = ctx.sweep(policy_sweep(PREEMPT_SWEEP, specs, chosen, st.seed, samples=True),
                             "seed 000: wake-up by preemption model")
    except ValueError as exc:  # a spec or policy the sweep refuses: shown on the page
        gen_errors.update({n.removeprefix("seed000-preempt-"): f"{type(exc).__name__}: {exc}"
                           for n in specs})
    stats: dict[str, dict[str, dict[str, Stats | None]]] = {
        k: {p: {m: None for m in PREEMPT_MODELS} for p in chosen} for k in MEASURES}
    errors: dict[tuple[str, str], str] = {
        (p, m): e for m, e in gen_errors.items() for p in chosen}
    ticks: dict[tuple[str, str], tuple[int, int]] = {}
    for o in runs:
        m = o.request.spec_name.removeprefix("seed000-preempt-")
        p = o.request.scheduler
        if not o.ok or o.result is None:
            errors[(p, m)] = o.error or "no result"
            continue
        for k in MEASURES:
            stats[k][p][m] = _stats(latencies_ns(o.result, k, prefix))
        ticks[(p, m)] = windows_with_a_tick(o.result, prefix)
    blocks = []
    for k in MEASURES:
        maxima = {p: {m: (s or {}).get("max") for m, s in by.items()}
                  for p, by in stats[k].items()}
        text = order_text(maxima) if chosen else ""
        if k == "waiters" and chosen:
            text = " ".join(t for t in (text, models_text(stats[k]),
                                        policy_means_text(stats[k]), ticks_text(ticks)) if t)
        blocks.append({"table": preempt_table(k, stats[k], errors), "text": text})
    html = render(
        "seed000_preempt.html.j2", profile=profile(), blocks=blocks, policies=chosen,
        options=", ".join(f"{k}={v}" for k, v in st.wakeup.items()),
        specs=[f"seed000-preempt-{m}" for m in PREEMPT_MODELS if m not in gen_errors]
        if chosen else [],
        gen_errors=gen_errors)
    return PreemptPart(html=html, runs=runs, stats=stats)


def parts(ctx: Context, st: Settings, policies: Sequence[str]) -> list[Part]:
    """This module's parts of the seed-000 section, in page order."""
    return [usleep_part(ctx, st, policies), preempt_part(ctx, st, policies)]

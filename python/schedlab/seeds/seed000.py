"""Seed 000: "Scheduler comparison and real-time thread survey" (K. Nakajima, Toshiba
Information Systems, 2006; docs/seeds.md). Linux 2.6.17-rc1 with plugsched's ingosched,
ingo_ll, nicksched and staircase on a single-core MIPS TX4937 board.

This module holds
- the published figures, read from ``data/seed000.json`` (hackbench times; the broadcast
  wake-up tables for RT and non-RT waiters, raw and 6σ-filtered, each row with the
  transcript text it was read from), and the checks that the reading is right;
- the experiment definitions (generator calls) in full and quick sizes;
- which policies model the seed's schedulers (from the registry), and the comparison of
  orderings the report's text is computed from.

The report section that runs the experiments is ``section000``, with its parts in
``hackbench000``, ``wakeup000``, ``interbench000``, ``behaviour000`` and ``cost000``.

Reconstructing the wake-up tables
---------------------------------
The transcript lost the table layout: the average keeps its decimal point, but each of
the other three cells (min, max, stddev) was split by a space before its last digit, e.g.
the row ``Ingosched 575.03 3 7 44826 2 1417 1`` reads as avg 575.03, min 37, max 448262,
stddev 14171 µs. :func:`reconstruct` applies exactly that rule to the verbatim rows, and
the tests check it gives the stored figures.

Checks that the reading is right (:func:`consistency_problems`, run by the tests):
- *one outlier explains the filtered mean and the raw stddev*: the slides say 1–4 samples
  of 1000 are two orders of magnitude off; for ingosched RT, (575.03 − 126.38) × 1000 ≈
  448,650 ≈ the raw max 448,262, and 448,262 / √1000 ≈ 14,175 ≈ the raw stddev 14,171.
- *a stddev can't be smaller than its extremes allow*: with N = 1000 samples,
  σ ≥ √(((max − avg)² + (min − avg)²) / N). Every cell satisfies it; reading the last
  split digit as a decimal instead (σ/10) violates it for 13 of the 16 rows.
- *the 6σ filter*: each filtered max must lie within raw avg + 6 σ_raw, and each raw max
  that was dropped must lie beyond it. Both hold for all 8 pairs — tightly for staircase
  non-RT (threshold 162.75 + 6 × 177 = 1224.75, kept max 1221, dropped max 1849).

The three ambiguous stddev cells and why they are read as integers are described in the
data file's provenance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from schedlab.seeds import published
from schedlab.sweep import Sweep

DATA: dict[str, Any] = published.load("seed000")
CITATION: str = DATA["document"]["citation"]
PLATFORM: str = DATA["platform"]

#: The seed's schedulers in the order of its tables.
SEED_SCHEDULERS: tuple[str, ...] = tuple(DATA["schedulers"])
#: The registry name of the policy that models each seed scheduler.
SEED_COUNTERPART: dict[str, str] = dict(DATA["counterparts"])

#: Slide "Hackbench 結果": ``./hackbench 30``, time taken (s).
PUBLISHED_HACKBENCH_S: dict[str, float] = dict(DATA["hackbench"]["seconds"])
#: The slides' sample count per run.
PUBLISHED_SAMPLES: int = DATA["wakeup"]["samples_per_run"]


@dataclass(frozen=True)
class SlideQuote:
    """A slide's words quoted as the transcript has them, with our translation and what
    in them does not add up."""

    slide: str
    original: str
    text: str
    #: The sleep call the slide gives as its example (µs, usleep's unit) and the length
    #: the slide writes beside it (ms).
    call_us: int
    slide_sleep_ms: int
    discrepancy: str

    @property
    def call_ms(self) -> float:
        """What the call asks for, in ms."""
        return self.call_us / 1000


def _slide_quote(entry: Mapping[str, Any]) -> SlideQuote:
    return SlideQuote(slide=entry["provenance"]["slide"], original=entry["text_original"],
                      text=entry["text"], call_us=int(entry["call_us"]),
                      slide_sleep_ms=int(entry["slide_sleep_ms"]),
                      discrepancy=entry["discrepancy"])


#: Slide "最初は…": why a sleep call cannot drive a periodic task.
USLEEP_SLIDE: SlideQuote = _slide_quote(DATA["usleep_slide"])


@dataclass(frozen=True)
class WakeupFigures:
    """One row of a published wake-up table, µs."""

    avg: float
    min: float
    max: float
    stddev: float


#: Waiter kinds and filters, in the order the slides show them.
WAITERS: tuple[str, ...] = ("rt", "nonrt")
FILTERS: tuple[str, ...] = ("raw", "6sigma")
WAITER_LABEL = {"rt": "RT waiters (SCHED_FIFO)", "nonrt": "non-RT waiters (SCHED_OTHER)"}
FILTER_LABEL = {"raw": "raw", "6sigma": "samples beyond 6σ rejected"}


def _tables() -> dict[str, dict[str, dict[str, Any]]]:
    return DATA["wakeup"]["tables"]  # type: ignore[no-any-return]


#: The wake-up tables (µs): [waiters][filter][scheduler].
PUBLISHED_WAKEUP: dict[str, dict[str, dict[str, WakeupFigures]]] = {
    w: {f: {s: WakeupFigures(r["avg"], r["min"], r["max"], r["stddev"])
            for s, r in t["rows"].items()} for f, t in by_filter.items()}
    for w, by_filter in _tables().items()
}
#: The same rows verbatim from the transcript.
TRANSCRIPT: dict[str, dict[str, dict[str, str]]] = {
    w: {f: {s: r["text"] for s, r in t["rows"].items()} for f, t in by_filter.items()}
    for w, by_filter in _tables().items()
}


def slide_of(waiters: str, flt: str) -> tuple[str, str]:
    """(slide title, which of the slides of that title) of a published wake-up table."""
    t = _tables()[waiters][flt]
    return t["slide"], t["which"]


def reconstruct(line: str) -> WakeupFigures:
    """Read one transcript row: the average, then min/max/stddev, each split before its
    last digit."""
    tokens = line.split()
    if len(tokens) != 7 or "." not in tokens[0]:
        raise ValueError(f"not a 7-token wake-up row: {line!r}")
    a, b, c = (int(tokens[i] + tokens[i + 1]) for i in (1, 3, 5))
    return WakeupFigures(float(tokens[0]), a, b, c)


def sigma_lower_bound(f: WakeupFigures, n: int = PUBLISHED_SAMPLES) -> float:
    """The smallest population stddev n samples with this avg, min and max can have."""
    return math.sqrt(((f.max - f.avg) ** 2 + (f.min - f.avg) ** 2) / n)


def _cell_problems(w: str, flt: str, n: int) -> list[str]:
    problems = []
    for s, f in PUBLISHED_WAKEUP[w][flt].items():
        if not f.min <= f.avg <= f.max:
            problems.append(f"{w}/{flt}/{s}: avg outside [min, max]")
        if f.stddev < sigma_lower_bound(f, n):
            problems.append(f"{w}/{flt}/{s}: stddev below its lower bound")
    return problems


def _filter_problems(w: str, s: str) -> list[str]:
    raw = PUBLISHED_WAKEUP[w]["raw"][s]
    kept = PUBLISHED_WAKEUP[w]["6sigma"][s]
    threshold = raw.avg + 6 * raw.stddev
    problems = []
    if kept.max > threshold:
        problems.append(f"{w}/{s}: filtered max beyond raw avg + 6σ")
    if raw.max != kept.max and raw.max <= threshold:
        problems.append(f"{w}/{s}: raw max dropped although within 6σ")
    if kept.min < raw.min or kept.max > raw.max or kept.avg > raw.avg:
        problems.append(f"{w}/{s}: filtering widened the data")
    return problems


def consistency_problems(n: int = PUBLISHED_SAMPLES) -> list[str]:
    """Every way the published wake-up figures contradict themselves (empty: none)."""
    problems: list[str] = []
    for w in WAITERS:
        for flt in FILTERS:
            problems += _cell_problems(w, flt, n)
        for s in SEED_SCHEDULERS:
            problems += _filter_problems(w, s)
    return problems


def reconstruction_evidence() -> str:
    """The arithmetic that supports the reading of the transcript, as a sentence."""
    raw = PUBLISHED_WAKEUP["rt"]["raw"]["ingosched"]
    kept = PUBLISHED_WAKEUP["rt"]["6sigma"]["ingosched"]
    n = PUBLISHED_SAMPLES
    st_raw = PUBLISHED_WAKEUP["nonrt"]["raw"]["staircase"]
    st_kept = PUBLISHED_WAKEUP["nonrt"]["6sigma"]["staircase"]
    thr = st_raw.avg + 6 * st_raw.stddev
    return (
        f"for ingosched (RT) one outlier among {n:,} samples explains both the drop of the mean "
        f"when filtering, ({raw.avg:.2f} − {kept.avg:.2f}) × {n:,} = "
        f"{(raw.avg - kept.avg) * n:,.0f} ≈ max {raw.max:,.0f} µs, and the raw stddev, "
        f"{raw.max:,.0f} / √{n:,} = {raw.max / math.sqrt(n):,.0f} ≈ {raw.stddev:,.0f} µs; and "
        f"every filtered table keeps exactly the maxima within avg + 6σ of its raw table "
        f"(e.g. staircase non-RT: threshold {thr:,.2f} µs, kept max {st_kept.max:,.0f}, "
        f"rejected max {st_raw.max:,.0f}). The stddev cells “12 5”, “14 2” and “11 0” of the "
        f"filtered tables are read as 125, 142 and 110 µs like every decidable cell of those "
        f"columns (see the provenance in seeds/data/seed000.json)."
    )


# --------------------------------------------------------------------------------------
# Experiment definitions
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Sizes of the seed-000 experiments."""

    #: ``generate("hackbench", **hackbench)``
    hackbench: dict[str, Any]
    #: ``generate("broadcast-wakeup", rt=..., **wakeup)``
    wakeup: dict[str, Any]
    #: The modelled machine: the seed's board had one core; HZ is our assumption
    #: (2.6.17 MIPS kernels defaulted to HZ=1000).
    cpus: int = 1
    hz: int = 1000
    seed: int = 1
    #: What the page says about these sizes.
    description: str = ""


#: The seed's sizes: ``hackbench 30`` (30 groups × 20 senders × 20 receivers, 100 loops
#: of 100-byte messages over pipes — the slides say the processes talk over pipes); the
#: wake-up test with ``hackbench 10`` as load and one waiter woken 1,000 times: the slides
#: count 1,000 samples per run, i.e. one sample per broadcast, which one waiter gives
#: (several waiters would also add mutex hand-off wake-ups).
FULL = Settings(
    hackbench={"groups": 30, "loops": 100, "datasize": 100, "fds": 20, "mode": "pipe",
               "tasks": "process"},
    wakeup={"waiters": 1, "iterations": PUBLISHED_SAMPLES, "load_groups": 10},
    description="hackbench 30 (1,200 processes over pipes, 100 loops); wake-up test: "
    "one waiter, 1,000 broadcasts under a hackbench 10 load",
)

#: Quick sizes: same shapes, fewer loops and wake-ups (stated in the page).
QUICK = Settings(
    hackbench={"groups": 30, "loops": 10, "datasize": 100, "fds": 20, "mode": "pipe",
               "tasks": "process"},
    wakeup={"waiters": 1, "iterations": 200, "load_groups": 10},
    description="quick mode: hackbench 30 with 10 loops instead of 100 (same 1,200 "
    "processes, a tenth of the messages); wake-up test: 200 broadcasts instead of 1,000, "
    "under the same hackbench 10 load",
)


def settings(quick: bool) -> Settings:
    return QUICK if quick else FULL


def machine_text(spec: Mapping[str, Any] | None, s: Settings) -> str:
    """The modelled machine as the spec gives it (costs default to 0 when absent)."""
    if spec is None:
        return f"{s.cpus} CPU{'s' if s.cpus != 1 else ''}, HZ={s.hz}"
    m = (spec.get("schedlab") or {}).get("machine") or {}
    cpus, hz = m.get("cpus", s.cpus), m.get("hz", s.hz)
    costs = [(k, int(m.get(k, 0) or 0)) for k in ("context_switch_ns", "wakeup_ns", "fork_ns")]
    text = f"{cpus} CPU{'s' if cpus != 1 else ''}, HZ={hz}; " + ", ".join(
        f"{k.removesuffix('_ns').replace('_', ' ')} {v:,} ns" for k, v in costs)
    if all(v == 0 for _, v in costs):
        text += (" — the model charges nothing for a context switch or a wake-up, so "
                 "simulated wake-up latencies measure only the time spent waiting for the "
                 "CPU (the seed's ~35 µs floor is the real board's cost)")
    return text


#: The built-in machine profile of the seed's board (:mod:`schedlab.seeds.board000`).
BOARD_PROFILE = "seed000-tx4937"


def on_board(spec: dict[str, Any]) -> None:
    """Put the spec on the seed's board profile, with nothing of the generator's machine
    left over it (an edit for ``api.edit_spec``)."""
    spec.setdefault("schedlab", {})["machine"] = {"profile": BOARD_PROFILE}


def on_machine(spec: dict[str, Any], s: Settings) -> None:
    """Set the spec's modelled machine to the seed's (an edit for ``api.edit_spec``)."""
    machine = spec.setdefault("schedlab", {}).setdefault("machine", {})
    machine["cpus"] = s.cpus
    machine["hz"] = s.hz


# --------------------------------------------------------------------------------------
# The parts' runs, declared as sweeps
# --------------------------------------------------------------------------------------

#: What each run of the section's sweeps keeps: the result objects the parts and the
#: report's manifest read (with ``samples``, the per-activation samples too).
SWEEP_METRICS: tuple[str, ...] = (
    "summary.headline", "summary.makespan_ns", "summary.totals", "summary.wakeup_latency_ns",
    "summary.marks", "run.events", "run.sim_ns", "run.decisions", "run.work_units",
    "run.stopped", "run.hz", "run.kernel", "tasks.tid", "tasks.wait_ns", "tasks.cpu_ns")


def policy_sweep(name: str, specs: Mapping[str, str], policies: Sequence[str], seed: int, *,
                 samples: bool, policies_of: Mapping[str, Sequence[str]] | None = None,
                 trace: bool = False, overrides: Mapping[str, int] | None = None) -> Sweep:
    """Every spec of ``specs`` (saved name → text) under every policy — or under
    ``policies_of[spec]`` where that names the spec's own —, spec by spec; ``trace``
    keeps each run's ftrace text; ``overrides`` are every run's (``cpus``, ``hz``)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for spec in specs:
        groups.setdefault(tuple((policies_of or {}).get(spec, policies)), []).append(spec)
    grids: list[dict[str, list[Any]]] = [{"spec": names, "scheduler": list(ps)}
                                          for ps, names in groups.items() if ps]
    return Sweep(name=name, base={"specs": dict(specs), "seed": seed, **(overrides or {})},
                 grids=grids, metrics=SWEEP_METRICS, samples=samples, trace=trace)


# --------------------------------------------------------------------------------------
# Policies (facts from the registry)
# --------------------------------------------------------------------------------------


def linux_policies(registry: Sequence[Mapping[str, Any]]) -> list[str]:
    """The available policies of the Linux family: the seed schedulers' counterparts in
    the seed's order, then the others in registry order."""
    linux = [s["name"] for s in registry
             if s.get("family") == "linux" and s.get("available", True)]
    first = [SEED_COUNTERPART[s] for s in SEED_SCHEDULERS if SEED_COUNTERPART[s] in linux]
    return first + [p for p in linux if p not in first]


def not_modelled(registry: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Seed schedulers without an available counterpart: (seed name, why), the reason as
    the registry gives it."""
    entries = {s["name"]: s for s in registry}
    out = []
    for seed_name in SEED_SCHEDULERS:
        entry = entries.get(SEED_COUNTERPART[seed_name])
        if entry is None:
            out.append((seed_name, f"policy {SEED_COUNTERPART[seed_name]} is not in this build"))
        elif not entry.get("available", True):
            out.append((seed_name, str(entry.get("reason") or "unavailable")))
    return out


def seed_name_of(policy: str) -> str | None:
    return next((s for s, p in SEED_COUNTERPART.items() if p == policy), None)


def row_order(policies: Sequence[str]) -> list[tuple[str | None, str | None]]:
    """(seed scheduler, policy) rows: the seed's four, then other available policies."""
    rows: list[tuple[str | None, str | None]] = [
        (s, SEED_COUNTERPART[s] if SEED_COUNTERPART[s] in policies else None)
        for s in SEED_SCHEDULERS]
    return rows + [(None, p) for p in policies if seed_name_of(p) is None]


# --------------------------------------------------------------------------------------
# Comparing orderings (the text under each table is generated from these)
# --------------------------------------------------------------------------------------


def ranking(values: Mapping[str, float | None]) -> list[tuple[str, float]]:
    """(name, value) pairs with a value, smallest first (ties by name)."""
    return sorted(((k, float(v)) for k, v in values.items() if v is not None),
                  key=lambda kv: (kv[1], kv[0]))


def pair_ties(
    published: Mapping[str, float | None], simulated: Mapping[str, float | None]
) -> int:
    """Of the pairs of seed schedulers the seed separates, how many the simulation ties."""
    common = [s for s in published if published[s] is not None and simulated.get(s) is not None]
    return sum(1 for a, b in combinations(common, 2)
               if published[a] != published[b] and simulated[a] == simulated[b])


def pair_agreement(
    published: Mapping[str, float | None], simulated: Mapping[str, float | None]
) -> tuple[int, int]:
    """Of the pairs of seed schedulers present in both that both separate, how many the two
    order the same way (strict wins only: a pair either ties is not counted)."""
    common = [s for s in published if published[s] is not None and simulated.get(s) is not None]
    agree = total = 0
    for a, b in combinations(common, 2):
        pa = published[a] - published[b]  # type: ignore[operator]
        sa = simulated[a] - simulated[b]  # type: ignore[operator]
        if pa == 0 or sa == 0:
            continue
        total += 1
        agree += (pa > 0) == (sa > 0)
    return agree, total


def agreement_phrase(published: Mapping[str, float | None],
                     simulated: Mapping[str, float | None]) -> str | None:
    """"a of n pairs … ordered as in the seed; t tie": strict wins counted, ties named, or
    None when no pair can be compared."""
    agree, total = pair_agreement(published, simulated)
    ties = pair_ties(published, simulated)
    if not total and not ties:
        return None
    text = (f"{agree} of {total} pairs of seed schedulers the simulation separates are "
            "ordered as in the seed")
    if ties:
        text += (f"; {ties} pair{'s' if ties != 1 else ''} the seed separates tie in the "
                 "simulation (a tie is not agreement)")
    return text


def _relation(x: float, y: float) -> str:
    return "<" if x < y else ">" if x > y else "="


def pair_changes(quick: Mapping[str, float | None], full: Mapping[str, float | None]
                 ) -> tuple[int, list[str]]:
    """How two runs of one experiment order the same names: the number of pairs both give
    values for, and each pair whose relation (<, = or >) differs, as "a < b (quick), a > b
    (full)". A tie in one and not in the other is a difference."""
    common = [k for k in quick if quick[k] is not None and full.get(k) is not None]
    changed = []
    pairs = 0
    for a, b in combinations(common, 2):
        pairs += 1
        rq = _relation(quick[a], quick[b])  # type: ignore[arg-type]
        rf = _relation(full[a], full[b])  # type: ignore[arg-type]
        if rq != rf:
            changed.append(f"{a} {rq} {b} (quick), {a} {rf} {b} (full)")
    return pairs, changed


def agreement_items(hackbench: Mapping[str, float | None],
                    wake_means: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    """What agrees with the seed, computed from the tables (the reasons it cannot agree
    elsewhere are in the template)."""
    items: list[str] = []
    seed_hb = {s: hackbench.get(p) for s, p in SEED_COUNTERPART.items()}
    phrase = agreement_phrase(PUBLISHED_HACKBENCH_S, seed_hb)
    if phrase:
        items.append(f"hackbench (board profile): {phrase}.")
    for w in WAITERS:
        pub = {s: f.avg for s, f in PUBLISHED_WAKEUP[w]["raw"].items()}
        sim = {s: wake_means.get(w, {}).get(p) for s, p in SEED_COUNTERPART.items()}
        phrase = agreement_phrase(pub, sim)
        if phrase:
            items.append(f"{WAITER_LABEL[w]}, raw mean wake-up latency: {phrase}.")
    return items

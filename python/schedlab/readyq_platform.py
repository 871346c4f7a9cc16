"""Platform cost models for the ready-queue study: seed 002's CPU, reckoned from exact counts.

The seed measured on an SH3 (SH7709A) at 133 MHz: an in-order core without a find-first-set
instruction (TOPPERS/JSP's SH3 port searches the ready bitmap in software), run with its cache
on and off. ``rtq-probe``'s count mode gives, per measured operation, the exact number of
instructions and of data reads and writes (callgrind). The ``sh3-nocache`` model turns them
into the seed's CPU's time:

    cycles = I + W × (F × I + Dr + Dw),     time = cycles / 133 MHz

- ``I`` instructions at one cycle each (an in-order, single-issue core; assumed);
- with the cache off every memory access waits ``W`` cycles: ``F`` instruction fetches per
  instruction (1, assumed: every instruction is fetched from memory) and every data read and
  write (``Dr``, ``Dw``, counted);
- with the cache on (the seed's other variant) every access hits after the first of the 1000
  repeated trials: ``W = 0``, cycles = I. No parameter.

One parameter, ``W``, is fitted, to one published figure: figure 4 (chg_pri, cache off), where
the seed's single queue stops being faster at about 10 tasks in the worst case: ``W`` makes the
lean single list and the JSP-searched bitmap lists take equal time for chg_pri's worst case at
N = 10 (the equation is linear in ``W``). Everything else is predicted: the other operations'
crossovers, the averages, the cache-on variant, every absolute time. When no ``W`` in
0..MAX_WAIT makes the two equal, the model says so and uses the end of that range that comes
closest; the memory-access counts (``memory_accesses``) give the cache-off order for a wait
without bound, so every possible ``W`` lies between them and the cache-on figures.

The instructions are x86-64 instructions of our Rust code standing in for the SH3's: the
model inherits the x86 instruction mix (see docs/readyq.md, "Platform models").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from schedlab.readyq import OPS, compare_pair, size_comparison

#: Platforms `schedlab readyq --platform` accepts; the first is the default.
PLATFORMS: tuple[str, ...] = ("x86-host", "sh3-nocache")
HOST = "x86-host"
SH3 = "sh3-nocache"

#: The pair each platform compares: (the seed's single queue, TOPPERS/JSP's lists).
PAIRS: dict[str, tuple[str, str]] = {
    HOST: ("single-list", "bitmap-lists"),
    SH3: ("single-list-lean", "bitmap-lists-jsp"),
}
#: Modelled metrics (µs per operation) of the sh3-nocache platform.
CACHE_OFF = "sh3_nocache_us"
CACHE_ON = "sh3_cache_us"
#: The cache-off limit of a wait without bound: the memory accesses alone (a count).
ACCESSES = "memory_accesses"
MODEL_METRICS: tuple[str, ...] = (CACHE_ON, CACHE_OFF, ACCESSES)
#: Instruction fetches per instruction with the cache off (assumed, see the module doc).
FETCHES_PER_INSTRUCTION = 1.0



def _seed() -> dict[str, Any]:
    """Seed 002's published figures (loaded on use: the seeds package imports this one)."""
    from schedlab.seeds import published

    return published.load("seed002")


def clock_hz() -> float:
    """The seed's CPU clock (§3: SH3 at 133 MHz), from the data file."""
    return float(_seed()["clock_mhz"]["value"]) * 1e6


def fit_target() -> dict[str, Any]:
    """The published figure ``W`` is fitted to: figure 4's chg_pri crossover, cache off."""
    t = _seed()["cache_off_crossover"]
    return {"figure": 4, "op": t["op"], "statistic": t["statistics"][0], "n": t["value"],
            "cache": t["cache"], "provenance": t["provenance"]}


def cycles(instructions: float, reads: float, writes: float, wait: float) -> float:
    """Cycles of one operation: one per instruction, plus ``wait`` per memory access (one
    fetch per instruction, every data read and write)."""
    return instructions + wait * (FETCHES_PER_INSTRUCTION * instructions + reads + writes)


def _case_counts(doc: Mapping[str, Any], op: str, backend: str) -> tuple[list[list[float]], ...]:
    fig = doc[op][backend]
    return tuple(fig[m]["cases"] for m in ("instructions", "data_reads", "data_writes"))


def _summary(values: Sequence[Sequence[float]], prios: Sequence[int],
             levels: int) -> dict[str, Any]:
    """avg / worst / by_prio / cases of per-case values, as the probe summarises them."""
    def mean(v: Sequence[float]) -> float:
        return sum(v) / len(v) if v else math.nan

    by_prio = [[mean([x for x, p in zip(row, prios, strict=True) if p == q])
                for q in range(levels)] for row in values]
    return {"avg": [mean(row) for row in values], "worst": [max(row) for row in values],
            "by_prio": by_prio, "cases": [list(row) for row in values]}


def model_us(doc: Mapping[str, Any], op: str, backend: str, wait: float) -> dict[str, Any]:
    """The modelled µs of every case of ``op`` on ``backend``, summarised."""
    ir, dr, dw = _case_counts(doc, op, backend)
    hz = clock_hz()
    values = [[cycles(i, r, w, wait) / hz * 1e6 for i, r, w in zip(ri, rr, rw, strict=True)]
              for ri, rr, rw in zip(ir, dr, dw, strict=True)]
    prios = [c["prio"] for c in doc["cases"][op]]
    return _summary(values, prios, doc["levels"])


#: The largest memory wait the fit searches (cycles per access; far beyond any real board).
MAX_WAIT = 1e4


def _figure_cycles(doc: Mapping[str, Any], op: str, backend: str, stat: str, n_index: int,
                   wait: float) -> float:
    """Modelled cycles of the figure ``stat`` (mean or maximum over the cases) at one N."""
    ir, dr, dw = (rows[n_index] for rows in _case_counts(doc, op, backend))
    c = [cycles(i, r, w, wait) for i, r, w in zip(ir, dr, dw, strict=True)]
    return sum(c) / len(c) if stat == "avg" else max(c)


def fit_wait(doc: Mapping[str, Any], single: str, bitmap: str) -> dict[str, Any]:
    """The wait ``W`` at which the fit target's figure (operation, statistic, N) is equal
    for ``single`` and ``bitmap``. The difference is continuous and piecewise linear in W
    (linear for an average): bisection on [0, MAX_WAIT] finds the root to float precision.
    ``value`` is the wait to use: the root, or the end of the range with the smaller gap
    when no W in range gives equality."""
    t = fit_target()
    out: dict[str, Any] = {"kind": "fitted", "fitted_to": t}
    if t["n"] not in doc["n"]:
        return out | {"value": 0.0, "solution": None,
                      "reason": f"N = {t['n']} was not measured; W = 0 used"}
    i = doc["n"].index(t["n"])

    def gap(w: float) -> float:
        return (_figure_cycles(doc, t["op"], single, t["statistic"], i, w)
                - _figure_cycles(doc, t["op"], bitmap, t["statistic"], i, w))

    lo, hi = 0.0, MAX_WAIT
    g_lo, g_hi = gap(lo), gap(hi)
    out["gap_cycles"] = {"wait_0": g_lo, f"wait_{MAX_WAIT:g}": g_hi}
    if g_lo == 0:
        return out | {"value": 0.0, "solution": 0.0, "reason": None}
    if (g_lo > 0) == (g_hi > 0):
        side = "slower" if g_lo > 0 else "faster"
        nearest = 0.0 if abs(g_lo) <= abs(g_hi) else MAX_WAIT
        return out | {"value": nearest, "solution": None,
                      "reason": f"no wait makes the two equal at N = {t['n']}: the single list "
                                f"is {side} there for every wait in 0..{MAX_WAIT:g} cycles "
                                f"(by {abs(g_lo):.3g} cycles at W = 0, {abs(g_hi):.3g} at "
                                f"W = {MAX_WAIT:g}); the closer end, W = {nearest:g}, is used"}
    for _ in range(200):
        mid = (lo + hi) / 2
        if (gap(mid) > 0) == (g_lo > 0):
            lo = mid
        else:
            hi = mid
    return out | {"value": hi, "solution": hi, "reason": None}


def model_accesses(doc: Mapping[str, Any], op: str, backend: str) -> dict[str, Any]:
    """Memory accesses (F × I + Dr + Dw) of every case, summarised: the order of the
    cache-off times as the wait grows without bound."""
    ir, dr, dw = _case_counts(doc, op, backend)
    values = [[FETCHES_PER_INSTRUCTION * i + r + w for i, r, w in zip(ri, rr, rw, strict=True)]
              for ri, rr, rw in zip(ir, dr, dw, strict=True)]
    return _summary(values, [c["prio"] for c in doc["cases"][op]], doc["levels"])


def counted(doc: Mapping[str, Any]) -> bool:
    """Does the document hold the counts the SH3 model needs (instructions, data accesses)
    for both back ends of its pair?"""
    if not doc.get("instructions", {}).get("available"):
        return False
    return all(m in doc[op].get(b, {}) for op in OPS for b in PAIRS[SH3]
               for m in ("instructions", "data_reads", "data_writes"))


def apply(doc: dict[str, Any], platform: str) -> dict[str, Any]:
    """The platform section of a ``schedlab.readyq/1`` document; for ``sh3-nocache`` the
    modelled µs of every back end are added to ``doc[op][backend]`` (``sh3_nocache_us``,
    ``sh3_cache_us``). Raises ValueError for an unknown platform or missing counts."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r} (one of {', '.join(PLATFORMS)})")
    single, bitmap = PAIRS[platform]
    if platform == HOST:
        metric = doc.get("crossover", {}).get("metric")
        return {"name": HOST, "description": "this machine, measured: exact instruction "
                "counts (callgrind) and nanoseconds", "pair": {"single": single,
                                                              "bitmap": bitmap},
                "metric": metric, "fitted": [], "parameters": {},
                "size": size_comparison(doc.get("code_size", {}), single, bitmap),
                "comparison": {metric: compare_pair(doc, single, bitmap, metric)}
                if metric else {}}
    if not counted(doc):
        raise ValueError(f"the {SH3} model needs instruction and data-access counts "
                         "(valgrind); they are unavailable")
    fit = fit_wait(doc, single, bitmap)
    wait = fit["value"]
    for op in OPS:
        for b in doc["backends"]:
            if "instructions" in doc[op].get(b, {}):
                doc[op][b][CACHE_OFF] = model_us(doc, op, b, wait)
                doc[op][b][CACHE_ON] = model_us(doc, op, b, 0.0)
                doc[op][b][ACCESSES] = model_accesses(doc, op, b)
    t = fit["fitted_to"]
    return {
        "name": SH3,
        "description": "seed 002's CPU (SH3 at 133 MHz, in order, no find-first-set) "
                       "reckoned from exact counts: cycles = I + W × (I + Dr + Dw) with the "
                       "cache off, cycles = I with the cache on",
        "pair": {"single": single, "bitmap": bitmap},
        "metric": CACHE_OFF,
        "metrics": {CACHE_OFF: "µs per operation, cache off: (I + W·(I + Dr + Dw)) / 133 MHz",
                    CACHE_ON: "µs per operation, cache on: I / 133 MHz",
                    ACCESSES: "memory accesses I + Dr + Dw: the cache-off order as W grows "
                              "without bound (every W ≥ 0 lies between this and cache on)"},
        "parameters": {
            "clock_mhz": {"value": clock_hz() / 1e6, "kind": "published",
                          "source": _seed()["clock_mhz"]["provenance"]},
            "fetches_per_instruction": {"value": FETCHES_PER_INSTRUCTION, "kind": "assumed",
                                        "source": "every instruction is fetched from memory "
                                                  "with the cache off"},
            "cycles_per_instruction": {"value": 1.0, "kind": "assumed",
                                       "source": "in-order, single-issue core"},
            "memory_wait_cycles": fit,
        },
        "fitted": [f"W: {t['op']} {t['statistic']} at N = {t['n']}, cache off, single list "
                   f"and bitmap lists equal (seed figure {t['figure']})"],
        "predicted": ["every other number: the other operations and statistics, every N, "
                      "the cache-on variant, the absolute times; the memory-access limit "
                      "needs no parameter"],
        "comparison": {m: compare_pair(doc, single, bitmap, m) for m in MODEL_METRICS},
        "size": size_comparison(doc.get("code_size", {}), single, bitmap),
    }

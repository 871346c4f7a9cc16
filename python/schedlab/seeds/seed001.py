"""The seed-001 section of the report: FreeBSD 5.4's 4BSD scheduler against ULE.

The seed (a 2005 blog post) timed ``make -j4 buildworld`` and ``-j8`` under ULE on a
dual-core Athlon64 X2 and found no real difference from 4BSD, though ULE "seemed to vary
less"; it repeats three claims it had heard (ULE's cost does not grow with the number of
threads; it is SMP- and SMT-aware; it is slower than 4BSD on a uniprocessor) and plans a
threaded-server benchmark. Five experiments answer it:

- the calibration: the ``buildworld`` generator's closed-form CPU time against the seed's
  user and system seconds, and a run whose simulated totals are that closed form;
- the build, -j4 and -j8, under ``freebsd-4bsd``, ``freebsd-ule5`` and ``freebsd-ule`` on
  two CPUs, repeated over run seeds with a varying machine (each I/O call's system time
  drawn from the run's seed, the same draws under every policy): mean, standard deviation,
  range; the spread compared by a permutation test of Brown–Forsythe deviations, the means
  by a paired sign-flip test, strict wins counted;
- the same build on one CPU (the "slower on a uniprocessor" claim);
- the threaded server the author planned (the ``httpd`` generator, Apache's worker MPM
  under ab), with Linux's policies beside;
- the scheduler-cost study (:mod:`schedlab.cost`) for the FreeBSD and Linux policies.

Every number is computed from the runs; the seed's figures and their provenance come from
``data/seed001.json``.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, product
from typing import TYPE_CHECKING, Any

from schedlab import _core, api, cost, dprio, plots
from schedlab.report import Cell, Column, Table, render
from schedlab.report.context import RunOutcome, RunRequest, runs_table
from schedlab.result import Result
from schedlab.seeds import behaviour000, cost000, published

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from schedlab.report.context import Context, Figure, SectionOutput

SECTION_ID = "seed001"
TITLE = "Seed 001 — FreeBSD 5.4's 4BSD against ULE (Xune, Gamer Book blog, 2005)"

DATA: dict[str, Any] = published.load("seed001")

#: The FreeBSD policies, the traditional scheduler first.
FREEBSD = ("freebsd-4bsd", "freebsd-ule5", "freebsd-ule")
BASELINE = "freebsd-4bsd"
#: Linux beside them: the 2.6 O(1) scheduler of the seed's year, and CFS.
LINUX = ("linux-o1", "linux-cfs")
#: make -j of the seed.
JOBS = (4, 8)
#: The tick rate of the timeslice table (the generators' machines run at HZ 1000).
HZ = 1000
#: The significance level of every test on the page (each test on its own).
ALPHA = 0.05
#: Exact enumeration up to this many relabellings, else this many random ones.
EXACT_LIMIT = 200_000
ROUNDS = 20_000


@dataclass(frozen=True)
class Sizes:
    """How big each experiment is."""

    #: buildworld options besides jobs and seed (empty: the seed-calibrated defaults).
    build: tuple[tuple[str, int], ...]
    #: Run seeds per policy and -j (two CPUs) and per policy on one CPU.
    seeds: int
    up_seeds: int
    #: httpd options and run seeds.
    httpd: tuple[tuple[str, int], ...]
    httpd_seeds: int


def sizes(quick: bool) -> Sizes:
    if quick:
        return Sizes(build=(("dirs", 50), ("lib_dirs", 10)), seeds=8, up_seeds=6,
                     httpd=(("requests", 2000),), httpd_seeds=6)
    return Sizes(build=(), seeds=20, up_seeds=10, httpd=(("requests", 20000),), httpd_seeds=10)


# --------------------------------------------------------------------------------------
# Statistics: stated formulas, exact where the enumeration is small
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    sd: float
    lo: float
    hi: float


def summarise(xs: Sequence[float]) -> Summary | None:
    """Mean, sample standard deviation (n − 1), min and max; None for no values."""
    if not xs:
        return None
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return Summary(len(xs), statistics.fmean(xs), sd, min(xs), max(xs))


def bf_deviations(xs: Sequence[float]) -> list[float]:
    """Brown–Forsythe's deviations: |x − the median of its own group|."""
    m = statistics.median(xs)
    return [abs(x - m) for x in xs]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def permutation_p(a: Sequence[float], b: Sequence[float],
                  stat: Callable[[Sequence[float], Sequence[float]], float], *,
                  seed: int = 1) -> float:
    """One-sided permutation p-value of ``stat(a, b)``: the share of the ways of splitting
    the pooled values into groups of len(a) and len(b) whose statistic is at least the
    observed one (the observed split included). Every split when there are at most
    :data:`EXACT_LIMIT`, else :data:`ROUNDS` random splits from a seeded generator, with
    p = (1 + hits) / (1 + rounds)."""
    pooled = [*a, *b]
    n, total = len(a), math.comb(len(a) + len(b), len(a))
    obs = stat(a, b)

    def hit(idx: Sequence[int]) -> bool:
        chosen = set(idx)
        s = stat([pooled[i] for i in idx], [x for i, x in enumerate(pooled) if i not in chosen])
        return s > obs or _close(s, obs)

    if total <= EXACT_LIMIT:
        return sum(hit(idx) for idx in combinations(range(len(pooled)), n)) / total
    rng = random.Random(seed)
    hits = sum(hit(rng.sample(range(len(pooled)), n)) for _ in range(ROUNDS))
    return (1 + hits) / (1 + ROUNDS)


def mean_difference(a: Sequence[float], b: Sequence[float]) -> float:
    return statistics.fmean(a) - statistics.fmean(b)


def less_spread_p(base: Sequence[float], other: Sequence[float]) -> float:
    """H1: ``other`` varies less than ``base``. The statistic is the difference of the
    groups' mean Brown–Forsythe deviations, T = mean|x − med(base)| over base − mean|y −
    med(other)| over other; the deviations are permuted between the groups (a permutation
    Brown–Forsythe test, one-sided)."""
    return permutation_p(bf_deviations(base), bf_deviations(other), mean_difference)


def sign_flip_p(diffs: Sequence[float], *, seed: int = 1) -> float:
    """Two-sided paired test of a zero mean difference: the share of the 2^n sign
    assignments of the differences whose |Σ| is at least the observed |Σ| (exact up to
    :data:`EXACT_LIMIT` assignments, else :data:`ROUNDS` random ones, p = (1 + hits) /
    (1 + rounds)). All differences zero: p = 1."""
    d = list(diffs)
    obs = abs(sum(d))
    if not d:
        return 1.0

    def hit(signs: Sequence[int]) -> bool:
        s = abs(sum(x if k else -x for x, k in zip(d, signs, strict=True)))
        return s > obs or _close(s, obs)

    if 2 ** len(d) <= EXACT_LIMIT:
        return sum(hit(signs) for signs in product((0, 1), repeat=len(d))) / 2 ** len(d)
    rng = random.Random(seed)
    hits = sum(hit([rng.getrandbits(1) for _ in d]) for _ in range(ROUNDS))
    return (1 + hits) / (1 + ROUNDS)


@dataclass(frozen=True)
class Paired:
    """A policy against the baseline over the same run seeds."""

    faster: int
    slower: int
    ties: int
    mean_diff: float
    p: float


def paired(base: Sequence[float], other: Sequence[float]) -> Paired:
    """Strict wins of ``other`` (smaller is better), ties, mean of other − base and the
    sign-flip p-value; the values are paired by run seed."""
    diffs = [o - b for b, o in zip(base, other, strict=True)]
    return Paired(sum(1 for x in diffs if x < 0), sum(1 for x in diffs if x > 0),
                  sum(1 for x in diffs if x == 0), statistics.fmean(diffs) if diffs else 0.0,
                  sign_flip_p(diffs))


def significant(p: float) -> bool:
    return p < ALPHA


def fmt_p(p: float) -> str:
    """A p-value: three decimals, or two significant digits below 0.001 (a Monte Carlo p
    is at least 1 / (1 + rounds))."""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


# --------------------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------------------


def build_options(size: Sizes, jobs: int) -> list[tuple[str, str]]:
    return [("jobs", str(jobs)), *((k, str(v)) for k, v in size.build)]


def build_text(ctx: Context, size: Sizes, jobs: int) -> str:
    return ctx.generate("buildworld", **dict(build_options(size, jobs)))


def totals(size: Sizes) -> dict[str, int]:
    """The build's closed-form CPU time (µs), the generator's own (``-j`` does not
    change it)."""
    return _core.buildworld_totals(build_options(size, JOBS[0]))


def varied(text: str) -> str:
    """The build with each I/O call's system time varying: ``machine.sleep_ns`` uniform
    over [0, 2q] instead of q (the same mean, so the expected totals are the closed
    form's). The draws come from the run's seed, keyed by task and call, so every policy
    gives a job the same draws."""
    def edit(s: dict[str, Any]) -> None:
        m = s["schedlab"]["machine"]
        m["sleep_ns"] = {"dist": "uniform", "min_ns": 0, "max_ns": 2 * int(m["sleep_ns"])}
    return api.edit_spec(text, edit)


def httpd_text(ctx: Context, size: Sizes) -> str:
    """The server with its sockets' per-call kernel time varying as the build's system
    calls do: uniform over [0, 2c] for the generator's c (same mean), drawn from the
    run's seed."""
    def edit(s: dict[str, Any]) -> None:
        for name in ("req", "resp"):
            sock = s["schedlab"]["sockets"][name]
            sock["op_cost_ns"] = {"dist": "uniform", "min_ns": 0,
                                  "max_ns": 2 * int(sock["op_cost_ns"])}
    return api.edit_spec(ctx.generate("httpd", **dict(size.httpd)), edit)


def build_label(policy: str, jobs: int, seed: int, cpus: int) -> str:
    return f"seed001 buildworld -j{jobs} {policy} seed {seed} on {cpus} CPU{'s' * (cpus > 1)}"


@dataclass(frozen=True)
class Plan:
    calibration: RunRequest
    smp: dict[tuple[str, int, int], RunRequest]
    up: dict[tuple[str, int], RunRequest]
    httpd: dict[tuple[str, int], RunRequest]
    #: seed 000's dynamic-priority probe under each FreeBSD policy, traced
    dprio: dict[str, RunRequest]

    def all(self) -> list[RunRequest]:
        return [self.calibration, *self.smp.values(), *self.up.values(), *self.httpd.values(),
                *self.dprio.values()]


def plan(ctx: Context, size: Sizes) -> Plan:
    texts = {j: build_text(ctx, size, j) for j in JOBS}
    noisy = {j: varied(t) for j, t in texts.items()}
    cal = RunRequest("seed001-buildworld-j4", texts[4], "freebsd-ule5", samples=False,
                     label="seed001 calibration: buildworld -j4, fixed costs, freebsd-ule5")
    smp = {(p, j, s): RunRequest(f"seed001-buildworld-j{j}-varied", noisy[j], p, seed=s,
                                 samples=False, label=build_label(p, j, s, 2))
           for p in FREEBSD for j in JOBS for s in range(1, size.seeds + 1)}
    up = {(p, s): RunRequest("seed001-buildworld-j4-varied", noisy[4], p, seed=s, cpus=1,
                             samples=False, label=build_label(p, 4, s, 1))
          for p in FREEBSD for s in range(1, size.up_seeds + 1)}
    web = httpd_text(ctx, size)
    httpd = {(p, s): RunRequest("seed001-httpd", web, p, seed=s,
                                label=f"seed001 httpd {p} seed {s}")
             for p in (*FREEBSD, *LINUX) for s in range(1, size.httpd_seeds + 1)}
    probe = api.spec_text(behaviour000.DPRIO_SPEC)
    dprio_runs = {p: RunRequest("seed001-dprio", probe, p,
                                trace=ctx.trace_path(f"seed001-dprio-{p}"),
                                label=f"seed001 dynamic priority {p}") for p in FREEBSD}
    return Plan(cal, smp, up, httpd, dprio_runs)


# --------------------------------------------------------------------------------------
# Reading the runs
# --------------------------------------------------------------------------------------

#: Runs per call of the run loop: a full-size build's result holds its 12,700 tasks, so
#: the section keeps only what it reads of each (see :func:`slim`) as chunks finish.
CHUNK = 24


def slim(run: RunOutcome) -> RunOutcome:
    """``run`` with its result reduced to what the section reads (run, summary, CPUs):
    the per-task list is dropped once the manifest has recorded the run."""
    res = run.result
    if res is not None:
        run.outcome.result = Result({k: v for k, v in res.json.items() if k != "tasks"})
    return run


def run_all(ctx: Context, requests: Sequence[RunRequest]) -> list[RunOutcome]:
    """Every request through the report's run loop, :data:`CHUNK` at a time, slimmed."""
    out: list[RunOutcome] = []
    for i in range(0, len(requests), CHUNK):
        out += [slim(r) for r in ctx.run(requests[i:i + CHUNK], "seed 001: 4BSD against ULE")]
    return out


def wall_s(run: RunOutcome) -> float | None:
    """The build's wall time: the headline ``buildworld_time`` (seconds), make's start to
    the last job's exit."""
    res = run.result
    if not run.ok or res is None or res.headline is None or res.headline.get("value") is None:
        return None
    return float(res.headline["value"])


def user_sys_s(run: RunOutcome) -> tuple[float, float] | None:
    """User and system seconds of every task (user = CPU − system − interrupt)."""
    res = run.result
    if not run.ok or res is None:
        return None
    t = res.totals
    return (t["cpu_ns"] - t["sys_ns"] - t["irq_ns"]) / 1e9, t["sys_ns"] / 1e9


def series(runs: Mapping[Any, RunOutcome], key: Callable[[RunOutcome], float | None]
           ) -> list[float]:
    return [v for v in (key(r) for r in runs.values()) if v is not None]


def calibration_table(size: Sizes, run: RunOutcome) -> Table:
    """The seed's user and system seconds, the full-size closed form, and this size's
    closed form beside its simulated totals."""
    seed = DATA["buildworld"]["runs"]["4"]
    full = _core.buildworld_totals([("jobs", "4")])
    this = totals(size)
    sim = user_sys_s(run)
    rows: list[list[Any]] = [
        ["seed, -j4 under ULE (time(1))", Cell(seed["user_s"], cls="pub", decimals=3),
         Cell(seed["sys_s"], cls="pub", decimals=3),
         Cell(seed["user_s"] + seed["sys_s"], cls="pub", decimals=3)],
        ["closed form, seed's build (generator defaults)", full["user_us"] / 1e6,
         full["sys_us"] / 1e6, full["nominal_us"] / 1e6],
    ]
    if size.build:
        rows.append(["closed form, this report's build", this["user_us"] / 1e6,
                     this["sys_us"] / 1e6, this["nominal_us"] / 1e6])
    rows.append(["simulated, this report's build (freebsd-ule5, -j4, fixed costs)",
                 sim[0] if sim else None, sim[1] if sim else None,
                 sum(sim) if sim else None])
    return Table(id="seed001-calibration",
                 caption="CPU time of the build: the seed, the generator's closed form, a run",
                 columns=[Column(""), Column("user s", "s"), Column("system s", "s"),
                          Column("user + system s", "s")],
                 rows=rows)


def calibration_exact(size: Sizes, run: RunOutcome) -> bool:
    t, sim = totals(size), run.result
    if sim is None:
        return False
    tot = sim.totals
    return (tot["cpu_ns"] - tot["sys_ns"] - tot["irq_ns"] == t["user_us"] * 1000
            and tot["sys_ns"] == t["sys_us"] * 1000)


def _cell_summary(s: Summary | None) -> list[Any]:
    if s is None:
        return [None] * 4
    return [s.mean, s.sd, s.lo, s.hi]


def build_table(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes) -> Table:
    rows: list[list[Any]] = []
    for j in JOBS:
        seed = DATA["buildworld"]["runs"][str(j)]
        for p in FREEBSD:
            runs = {s: by_label[plan_.smp[(p, j, s)].label] for s in range(1, size.seeds + 1)}
            walls = series(runs, wall_s)
            us = [v for v in (user_sys_s(r) for r in runs.values()) if v is not None]
            cpu = [100.0 * (u + s_) / w for (u, s_), w in zip(us, walls, strict=False)]
            row: list[Any] = [f"-j{j}", p, len(walls), *_cell_summary(summarise(walls))]
            row += [statistics.fmean([u for u, _ in us]) if us else None,
                    statistics.fmean([s_ for _, s_ in us]) if us else None,
                    statistics.fmean(cpu) if cpu else None]
            if p == DATA["buildworld"]["scheduler"]:
                row += [Cell(seed["wall_s"], kind="s", cls="pub"),
                        Cell(seed["cpu_pct"], kind="num", decimals=1, cls="pub")]
            else:
                row += [Cell(None, cls="pub"), Cell(None, cls="pub")]
            rows.append(row)
    return Table(
        id="seed001-build",
        caption=f"make -jN buildworld on two CPUs, {size.seeds} run seeds per policy and -j: "
                "wall time (make's start to the last job's exit)",
        columns=[Column("-j"), Column("policy"), Column("runs", "int"),
                 Column("mean wall s", "s"), Column("stddev s", "s"), Column("min s", "s"),
                 Column("max s", "s"), Column("mean user s", "s"), Column("mean system s", "s"),
                 Column("mean CPU %", "num"), Column("seed wall s", "s", cls="pub"),
                 Column("seed CPU %", "num", cls="pub")],
        rows=rows)


@dataclass(frozen=True)
class Comparison:
    """One policy against 4BSD over the same seeds."""

    label: str
    policy: str
    spread_p: float
    base_sd: float
    sd: float
    pair: Paired
    base_mean: float


def compare(base: Sequence[float], other: Sequence[float], label: str, policy: str
            ) -> Comparison:
    return Comparison(label, policy, less_spread_p(base, other),
                      statistics.stdev(base) if len(base) > 1 else 0.0,
                      statistics.stdev(other) if len(other) > 1 else 0.0, paired(base, other),
                      statistics.fmean(base))


def walls_by_seed(reqs: Mapping[Any, RunRequest], by_label: Mapping[str, RunOutcome],
                  keys: Sequence[Any]) -> list[float] | None:
    out = []
    for k in keys:
        w = wall_s(by_label[reqs[k].label])
        if w is None:
            return None
        out.append(w)
    return out


def build_comparisons(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes
                      ) -> list[Comparison]:
    out = []
    seeds = range(1, size.seeds + 1)
    for j in JOBS:
        base = walls_by_seed(plan_.smp, by_label, [(BASELINE, j, s) for s in seeds])
        for p in FREEBSD[1:]:
            other = walls_by_seed(plan_.smp, by_label, [(p, j, s) for s in seeds])
            if base is not None and other is not None:
                out.append(compare(base, other, f"-j{j}, two CPUs", p))
    base = walls_by_seed(plan_.up, by_label, [(BASELINE, s)
                                              for s in range(1, size.up_seeds + 1)])
    for p in FREEBSD[1:]:
        other = walls_by_seed(plan_.up, by_label, [(p, s) for s in range(1, size.up_seeds + 1)])
        if base is not None and other is not None:
            out.append(compare(base, other, "-j4, one CPU", p))
    return out


def _p_cell(p: float) -> Cell:
    return Cell(fmt_p(p), kind="text", cls="good" if significant(p) else "")


def comparison_table(comps: Sequence[Comparison]) -> Table:
    rows = []
    for c in comps:
        rows.append([c.label, c.policy, c.base_sd, c.sd,
                     _p_cell(c.spread_p), c.pair.mean_diff, c.pair.faster, c.pair.slower,
                     c.pair.ties, _p_cell(c.pair.p)])
    return Table(
        id="seed001-tests",
        caption=f"Each ULE against 4BSD over the same run seeds (level {ALPHA})",
        columns=[Column("build"), Column("policy"), Column("4BSD stddev s", "s"),
                 Column("stddev s", "s"), Column("p: varies less than 4BSD", "num"),
                 Column("mean − 4BSD s", "s"), Column("faster", "int"),
                 Column("slower", "int"), Column("ties", "int"),
                 Column("p: mean differs", "num")],
        rows=rows)


def verdicts(comps: Sequence[Comparison]) -> list[str]:
    """One sentence per comparison, from its tests."""
    out = []
    for c in comps:
        spread = (f"varies less than 4BSD (p = {fmt_p(c.spread_p)})" if significant(c.spread_p)
                  else f"cannot be told to vary less than 4BSD (p = {fmt_p(c.spread_p)}; "
                       f"stddev {c.sd:.2f} s against {c.base_sd:.2f} s)")
        n = c.pair.faster + c.pair.slower + c.pair.ties
        if significant(c.pair.p):
            way = "faster" if c.pair.mean_diff < 0 else "slower"
            rel = 100.0 * abs(c.pair.mean_diff) / c.base_mean if c.base_mean else 0.0
            mean = (f"is {way} than 4BSD by {abs(c.pair.mean_diff):.2f} s on average, "
                    f"{rel:.3f} % (p = {fmt_p(c.pair.p)})")
        else:
            mean = (f"cannot be told from 4BSD in mean wall time ({c.pair.mean_diff:+.2f} s, "
                    f"p = {fmt_p(c.pair.p)})")
        out.append(f"{c.label}, {c.policy}: {spread}; it {mean}; faster in {c.pair.faster} "
                   f"of {n} seeds, slower in {c.pair.slower}, tied in {c.pair.ties}.")
    return out


def answers(comps: Sequence[Comparison], plan_: Plan, by_label: Mapping[str, RunOutcome],
            size: Sizes) -> list[str]:
    """The seed's two build questions answered from the tests, and the seed's own -j4/-j8
    gap beside the simulated one."""
    smp = [c for c in comps if "two CPUs" in c.label]
    less = [c for c in smp if significant(c.spread_p)]
    differ = [c for c in smp if significant(c.pair.p)]
    out = [f"“ULE varies less”: in {len(less)} of {len(smp)} comparisons on two CPUs "
           f"(-j4 and -j8, each ULE against 4BSD) the simulation finds ULE's wall times "
           f"varying less than 4BSD's at the {ALPHA} level"
           + (f" ({', '.join(f'{c.label}, {c.policy}' for c in less)})." if less else
              ": it cannot tell them apart in spread, and the seed, with one run per "
              "setting, could not either."),
           f"“No great difference”: the mean wall time differs from 4BSD's in {len(differ)} of "
           f"{len(smp)} comparisons"
           + (f" ({'; '.join(f'{c.label}, {c.policy}: {c.pair.mean_diff:+.2f} s' for c in differ)})"
              if differ else "")
           + ("; the others cannot be told from 4BSD." if len(differ) < len(smp) else ".")]
    runs = DATA["buildworld"]["runs"]
    gap = runs["8"]["wall_s"] - runs["4"]["wall_s"]
    pol = DATA["buildworld"]["scheduler"]
    means = {}
    for j in JOBS:
        w = walls_by_seed(plan_.smp, by_label, [(pol, j, s) for s in range(1, size.seeds + 1)])
        if w:
            means[j] = statistics.fmean(w)
    if len(means) == 2:
        out.append(f"The seed's -j8 run took {gap:+.2f} s against its -j4 run under ULE; "
                   f"under {pol} the simulated means differ by {means[8] - means[4]:+.2f} s "
                   f"(-j8 − -j4).")
    hidden = [c for c in differ if abs(c.pair.mean_diff) < abs(gap)]
    if hidden:
        out.append("Smaller than that gap between the seed's own two runs, so beyond what one "
                   "run per setting could show: "
                   + "; ".join(f"{c.label}, {c.policy} ({c.pair.mean_diff:+.2f} s)"
                               for c in hidden)
                   + ". The simulation tells these apart only because it repeats every run on "
                     "the same machines.")
    return out


def up_table(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes,
             cost_points: Sequence[Mapping[str, Any]]) -> Table:
    """One CPU: wall time, decisions, counted work, and what the decisions would cost at
    this machine's measured ns per decision (the cost study's smallest N ≥ 10)."""
    ns = _ns_per_decision(cost_points, 1)
    rows: list[list[Any]] = []
    for p in FREEBSD:
        runs = {s: by_label[plan_.up[(p, s)].label] for s in range(1, size.up_seeds + 1)}
        walls = series(runs, wall_s)
        res = [r.result for r in runs.values() if r.ok and r.result is not None]
        dec = statistics.fmean([r.run["decisions"] for r in res]) if res else None
        work = statistics.fmean([r.run["work_units"] for r in res]) if res else None
        est = dec * ns[p] / 1e6 if dec is not None and p in ns else None
        rows.append([p, len(walls), *_cell_summary(summarise(walls)), dec,
                     work / dec if work is not None and dec else None,
                     ns.get(p), est])
    return Table(
        id="seed001-up",
        caption=f"make -j4 buildworld on one CPU, {size.up_seeds} run seeds per policy",
        columns=[Column("policy"), Column("runs", "int"), Column("mean wall s", "s"),
                 Column("stddev s", "s"), Column("min s", "s"), Column("max s", "s"),
                 Column("decisions", "int"), Column("work units per decision", "num"),
                 Column("ns per decision (cost study, this machine)", "num"),
                 Column("decisions × ns, ms", "num", title="the decisions' cost at this "
                        "machine's ns per decision")],
        rows=rows)


def _ns_per_decision(points: Sequence[Mapping[str, Any]], cpus: int) -> dict[str, float]:
    """Each policy's ns per decision at the cost study's smallest N ≥ 10 on ``cpus``."""
    out: dict[str, float] = {}
    for name, ps in cost.by_scheduler([p for p in points if p["cpus"] == cpus]).items():
        big = [p for p in ps if p["nr_runnable"] >= 10]
        if big:
            out[name] = float(big[0]["ns_per_decision"])
    return out


# --------------------------------------------------------------------------------------
# The threaded server
# --------------------------------------------------------------------------------------

PERCENTILES = ("p50", "p90", "p99")


def httpd_table(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes) -> Table:
    rows: list[list[Any]] = []
    for p in (*FREEBSD, *LINUX):
        res = [r.result for r in (by_label[plan_.httpd[(p, s)].label]
                                  for s in range(1, size.httpd_seeds + 1))
               if r.ok and r.result is not None and r.result.headline is not None]
        rps = [float(r.headline["value"]) for r in res]
        lat = {k: [r.headline["stats_ns"][k] / 1e3 for r in res] for k in ("mean", *PERCENTILES)}
        s = summarise(rps)
        busy = [[100.0 * c["busy_ns"] / r.run["sim_ns"] for c in r.json["cpus"]] for r in res]
        rows.append([p, len(rps), s.mean if s else None, s.sd if s else None,
                     *(statistics.fmean(v) if v else None for v in lat.values()),
                     max(lat["p99"]) if lat["p99"] else None,
                     *(statistics.fmean(b[c] for b in busy) if busy else None
                       for c in range(2))])
    return Table(
        id="seed001-httpd",
        caption=f"Apache's worker MPM under ab on two CPUs, {size.httpd_seeds} run seeds per "
                "policy: requests per second and each request's latency",
        columns=[Column("policy"), Column("runs", "int"), Column("mean requests/s", "num"),
                 Column("stddev requests/s", "num"), Column("mean latency µs", "num"),
                 *(Column(f"mean {k} µs", "num") for k in PERCENTILES),
                 Column("worst p99 µs", "num"), Column("CPU 0 busy %", "num"),
                 Column("CPU 1 busy %", "num")],
        rows=rows)


def httpd_comparisons(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes
                      ) -> list[str]:
    """Each ULE against 4BSD in requests per second over the same seeds."""
    def rps(p: str) -> list[float] | None:
        out = []
        for s in range(1, size.httpd_seeds + 1):
            r = by_label[plan_.httpd[(p, s)].label].result
            if r is None or r.headline is None:
                return None
            out.append(float(r.headline["value"]))
        return out

    base = rps(BASELINE)
    lines = []
    for p in FREEBSD[1:]:
        other = rps(p)
        if base is None or other is None:
            continue
        # more requests per second is better: compare the negated rates
        pr = paired([-x for x in base], [-x for x in other])
        n = pr.faster + pr.slower + pr.ties
        rel = 100.0 * statistics.fmean(other) / statistics.fmean(base) - 100.0
        tell = ("differs from 4BSD" if significant(pr.p) else "cannot be told from 4BSD")
        lines.append(f"{p}: {rel:+.2f} % requests per second against 4BSD, {tell} "
                     f"(sign-flip p = {fmt_p(pr.p)}); more in {pr.faster} of {n} seeds, fewer in "
                     f"{pr.slower}, tied in {pr.ties}.")
    return lines


# --------------------------------------------------------------------------------------
# The instruments: timeslice and dynamic priority
# --------------------------------------------------------------------------------------


def dprio_figures(ctx: Context, plan_: Plan, by_label: Mapping[str, RunOutcome]
                  ) -> tuple[list[Figure], list[str]]:
    """Each FreeBSD policy's ``td_priority`` counters in seed 000's probe (a CPU hog beside
    an interactive task on one CPU), and why a policy has no figure."""
    figs, problems = [], []
    for p, req in plan_.dprio.items():
        run = by_label[req.label]
        if not run.ok or req.trace is None:
            problems.append(f"{p}: {run.error}")
            continue
        series = dprio.series(_core.parse_trace(str(req.trace)))
        if not series:
            problems.append(f"{p} writes no dynamic-priority counter.")
            continue
        fig = plots.counter_timeline(series, title=f"{p}: dynamic priority against time")
        figs.append(ctx.save_figure(fig, f"seed001-dprio-{p}",
                                    f"{p}: td_priority of the hog and the interactive task "
                                    f"(trace: {ctx.rel(req.trace)})"))
    return figs, problems


# --------------------------------------------------------------------------------------
# The figure
# --------------------------------------------------------------------------------------


def build_figure(plan_: Plan, by_label: Mapping[str, RunOutcome], size: Sizes) -> MplFigure:
    """Every run's wall time per policy and -j (and on one CPU), one dot per run seed."""
    plots.setup()
    groups = [(f"-j{j}", {p: [plan_.smp[(p, j, s)] for s in range(1, size.seeds + 1)]
                          for p in FREEBSD}) for j in JOBS]
    groups.append(("-j4, one CPU", {p: [plan_.up[(p, s)] for s in range(1, size.up_seeds + 1)]
                                    for p in FREEBSD}))
    fig, axes = plots.plt.subplots(1, len(groups), figsize=plots.FIGSIZE)
    for ax, (title, per) in zip(axes, groups, strict=True):
        for i, reqs in enumerate(per.values()):
            ys = [w for w in (wall_s(by_label[r.label]) for r in reqs) if w is not None]
            ax.plot([i] * len(ys), ys, "o", ms=3, alpha=0.6, color=plots.colour(i))
            if ys:
                ax.hlines(statistics.fmean(ys), i - 0.3, i + 0.3, color=plots.colour(i))
        ax.set_xticks(range(len(per)))
        ax.set_xticklabels([p.removeprefix("freebsd-") for p in per], fontsize=8)
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("wall time (s)")
    fig.suptitle("make buildworld: one dot per run seed, bar at the mean", fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------
# The section
# --------------------------------------------------------------------------------------


def section(ctx: Context) -> SectionOutput:
    """Run seed 001's experiments and render them beside the seed's figures."""
    from schedlab.report.context import SectionOutput

    size = sizes(ctx.quick)
    p = plan(ctx, size)
    runs = run_all(ctx, p.all())
    by_label = {r.request.label: r for r in runs}
    cal_run = by_label[p.calibration.label]
    points = cost.measure([*FREEBSD, *LINUX], quick=ctx.quick, cpus=1)
    points += cost.measure([*FREEBSD, *LINUX], quick=ctx.quick, cpus=2)
    figs: list[Figure] = [ctx.save_figure(
        build_figure(p, by_label, size), "seed001-buildworld",
        "Wall time of every simulated buildworld, per policy and -j, one dot per run seed")]
    cost_figs = []
    for cpus in (1, 2):
        pts = [x for x in points if x["cpus"] == cpus]
        cost_figs.append(ctx.save_figure(
            cost.plot(pts, title=f"Scheduler cost per decision, {cpus} CPU{'s' * (cpus > 1)}",
                      registry=ctx.available),
            f"seed001-sched-cost-{cpus}cpu",
            f"Counted work units (left) and ns (right) per decision against the number of "
            f"runnable tasks, {cpus} CPU{'s' * (cpus > 1)}, log-log"))
    dprio_figs, dprio_problems = dprio_figures(ctx, p, by_label)
    timeslices, timeslice_problems = behaviour000.timeslice_table(
        [*FREEBSD, *LINUX], HZ, "seed001-timeslice")
    comps = build_comparisons(p, by_label, size)
    harness = [x["harness_ns_per_decision"] for x in points]
    html = render(
        "seed001.html.j2", doc=DATA["document"], data=DATA, quick=ctx.quick, size=size,
        full=sizes(False), freebsd=FREEBSD, linux=LINUX, alpha=ALPHA,
        build_fraction=totals(size)["nominal_us"] / totals(sizes(False))["nominal_us"],
        exact_limit=EXACT_LIMIT, rounds=ROUNDS,
        calibration=calibration_table(size, cal_run),
        calibration_exact=calibration_exact(size, cal_run),
        build=build_table(p, by_label, size), tests=comparison_table(comps),
        verdicts=verdicts(comps), answers=answers(comps, p, by_label, size),
        up=up_table(p, by_label, size, points),
        httpd=httpd_table(p, by_label, size), httpd_lines=httpd_comparisons(p, by_label, size),
        cost_tables=[cost000.cost_table([x for x in points if x["cpus"] == c],
                                        table_id=f"seed001-sched-cost-{c}cpu")
                     for c in (1, 2)],
        cost_classes=[cost.classes_sentence([x for x in points if x["cpus"] == c])
                      for c in (1, 2)],
        decisions=points[0]["decisions"] if points else 0,
        harness_min=min(harness, default=0.0), harness_max=max(harness, default=0.0),
        figs=figs, cost_figs=cost_figs, dprio_figs=dprio_figs, dprio_problems=dprio_problems,
        timeslices=timeslices, timeslice_problems=timeslice_problems, hz=HZ,
        runs=runs_table(runs))
    return SectionOutput(SECTION_ID, TITLE, html,
                         ctx.figure_files(*figs, *cost_figs, *dprio_figs))

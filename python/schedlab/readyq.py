"""`schedlab readyq`: the RTOS ready-queue study (seed 002).

The measuring is done by the Rust probe ``rtq-probe`` (crates/schedlab-rtq-probe): its
``time`` mode gives nanoseconds per operation, its ``count`` mode (under valgrind's
callgrind) exact instruction counts and simulated cold-cache data misses. This module is
glue: it finds the probe and valgrind, runs them, measures each back end's code size from
the probe binary (``objdump``/``nm``), merges everything into one document
(schema ``schedlab.readyq/1``, docs/readyq.md) and finds the crossover between the single
list and the per-priority lists.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SCHEMA = "schedlab.readyq/1"
OPS: tuple[str, ...] = ("act_tsk", "chg_pri", "rot_rdq")
#: The two back ends the seed compares: its "single ready queue" and TOPPERS/JSP's lists.
SINGLE = "single-list"
BITMAP = "bitmap-lists"
#: Metrics the crossover is computed on, first available wins for the headline.
CROSSOVER_METRICS: tuple[str, ...] = ("instructions", "ns_warm", "ns_cold")
PROBE = "rtq-probe"
#: What each metric means; copied into every document so the output says it itself.
METRICS: dict[str, str] = {
    "ns_warm": "nanoseconds per operation, caches warm: the queue was just built and the "
               "code ran on the previous repetition; trimmed mean (samples above the 95th "
               "percentile dropped) of the repetitions of each case, the clock's own cost "
               "subtracted",
    "ns_cold": "nanoseconds per operation, caches cold: before each sample a buffer larger "
               "than the core's L2 is walked and the queue object and the first bytes of the "
               "operation's code are flushed from every cache level (clflush); median of the "
               "repetitions. Not the seed's 'cache off': later touches of a line hit, and "
               "TLBs and branch predictors stay warm",
    "instructions": "exact instructions executed by the operation (callgrind); identical "
                    "warm or cold, repeatable on any load",
    "d1_misses_cold": "simulated L1 data-cache misses (reads + writes) of the operation after "
                      "the simulated caches were emptied of the queue's data (callgrind "
                      "--cache-sim; the instruction cache is not flushed)",
    "ll_misses_cold": "simulated last-level misses (reads + writes), same run as "
                      "d1_misses_cold",
    "data_reads": "exact data reads of the operation (callgrind Dr)",
    "data_writes": "exact data writes of the operation (callgrind Dw)",
    "avg": "mean over the cases of one N (every priority p, and for chg_pri every target)",
    "worst": "maximum over the cases of one N",
    "by_prio": "per N, the mean over the cases at each priority p (0 = highest)",
    "cases": "per N, the figure of every case in the order of the top-level 'cases'",
}
BUILD_HINT = (
    "build it with `make develop` (or `cargo build --release -p schedlab-rtq-probe` and "
    "copy target/release/rtq-probe next to the python executable or onto PATH)"
)


class ProbeError(Exception):
    """The probe is missing or failed; ``code`` is the exit status the CLI should use."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def find_probe() -> Path:
    """The ``rtq-probe`` binary: next to ``sys.executable`` (the venv's bin/), then PATH."""
    here = Path(sys.executable).parent / PROBE
    if here.is_file() and os.access(here, os.X_OK):
        return here
    found = shutil.which(PROBE)
    if found:
        return Path(found)
    raise ProbeError(f"{PROBE} not found next to {sys.executable} or on PATH; {BUILD_HINT}", 2)


def find_valgrind() -> str | None:
    """Path of valgrind, or None."""
    return shutil.which("valgrind")


def _run_json(argv: Sequence[str], what: str) -> dict[str, Any]:
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    except OSError as e:
        raise ProbeError(f"{what}: {e}") from e
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise ProbeError(f"{what} failed (exit {proc.returncode}): {last}")
    try:
        doc: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise ProbeError(f"{what}: output is not JSON ({e})") from e
    return doc


def run_probe(probe: Path, mode: str, quick: bool, valgrind: str | None = None,
              ns: Sequence[int] | None = None) -> dict[str, Any]:
    """Run ``rtq-probe MODE [--quick] [--ns N,…] [--valgrind PATH]``; return its JSON."""
    argv = [str(probe), mode]
    if quick:
        argv.append("--quick")
    if ns:
        argv += ["--ns", ",".join(str(n) for n in ns)]
    if valgrind:
        argv += ["--valgrind", valgrind]
    return _run_json(argv, f"{PROBE} {mode}")


def valgrind_version(valgrind: str) -> str:
    try:
        out = subprocess.run([valgrind, "--version"], capture_output=True, text=True,
                             check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


# --- code size --------------------------------------------------------------------------

_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_CALL = re.compile(r"\b(?:call|jmp|j[a-z]+|bl|b)\s+[0-9a-f]+ <([^>+]+)(?:\+0x[0-9a-f]+)?>")


def parse_objdump(text: str) -> dict[str, set[str]]:
    """Direct call/jump targets of each function in ``objdump -d`` output."""
    calls: dict[str, set[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            current = m.group(2)
            calls[current] = set()
            continue
        if current is not None:
            for target in _CALL.findall(line):
                if target != current:
                    calls[current].add(target)
    return calls


def parse_nm(text: str, kinds: str = "TtWw") -> dict[str, int]:
    """Symbol sizes from ``nm --print-size --defined-only`` output (text symbols; read-only
    data with ``kinds="Rr"``)."""
    sizes: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in kinds:
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


#: Read-only tables a back end's code reads — (a part of the symbol's mangled name, the
#: table's name) —, counted with its code as the seed's object size counted JSP's
#: ``search_table``.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "bitmap-lists-jsp": (("jsp_search17NIBBLE_LOWEST_BIT", "NIBBLE_LOWEST_BIT"),)}


def table_sizes(backend: str, data: Mapping[str, int]) -> dict[str, int]:
    """Bytes of each read-only table of ``backend`` found among the data symbols."""
    out: dict[str, int] = {}
    for part, label in TABLES.get(backend, ()):
        for name, size in data.items():
            if part in name:
                out[label] = size
    return out


def _own_code(name: str) -> bool:
    # the probe's entry points and the ready-queue crate; std/core (panics, formatting)
    # are shared by every back end and not part of any of them
    return name.startswith("rtqp_") or "schedlab_rtq" in name


def reachable_size(roots: Sequence[str], calls: Mapping[str, set[str]],
                   sizes: Mapping[str, int]) -> int:
    """Bytes of the ready-queue functions reachable from ``roots`` by direct calls/jumps."""
    seen: set[str] = set()
    stack = [r for r in roots if r in sizes]
    while stack:
        f = stack.pop()
        if f in seen:
            continue
        seen.add(f)
        stack.extend(t for t in calls.get(f, ()) if _own_code(t) and t in sizes and t not in seen)
    return sum(sizes[f] for f in seen)


def code_size(probe: Path, symbols: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Per back end: the bytes of each operation's entry point and everything of the
    ready-queue crate it reaches, and the total over the back end's whole interface."""
    nm, objdump = shutil.which("nm"), shutil.which("objdump")
    if not nm or not objdump:
        return {"available": False, "reason": "nm/objdump (binutils) not found on PATH"}
    try:
        nm_out = subprocess.run([nm, "--print-size", "--defined-only", str(probe)],
                                capture_output=True, text=True, check=True).stdout
        od_out = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(probe)],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return {"available": False, "reason": f"binutils failed: {e}"}
    sizes, calls = parse_nm(nm_out), parse_objdump(od_out)
    data = parse_nm(nm_out, "Rr")
    if not any(name.startswith("rtqp_") for name in sizes):
        return {"available": False, "reason": f"{probe} has no rtqp_* symbols (stripped?)"}
    out: dict[str, Any] = {}
    for backend, syms in symbols.items():
        ident = backend.replace("-", "_") + "_"
        ops = {s.split(ident, 1)[-1]: reachable_size([s], calls, sizes) for s in syms}
        tables = table_sizes(backend, data)
        out[backend] = {"ops": ops, "tables": tables,
                        "total": reachable_size(list(syms), calls, sizes) + sum(tables.values())}
    return {
        "available": True,
        "method": "bytes of the probe's per-back-end entry points (act_tsk, chg_pri, "
                  "rot_rdq, remove, push_head, peek) plus every schedlab_rtq function they "
                  "reach by direct calls, and the read-only tables they read (JSP's bitmap "
                  "search table), from nm --print-size and objdump -d of the release probe "
                  "binary (x86-64, opt-level 3, thin LTO)",
        "backends": out,
    }


def size_comparison(cs: Mapping[str, Any], single: str, bitmap: str) -> dict[str, Any] | None:
    """The code size of ``single`` against ``bitmap`` (totals: code and tables), and the
    direction: is the single list's code smaller (as in seed 002: 24.8 KB → 23.0 KB)?"""
    per = cs.get("backends", {}) if cs.get("available") else {}
    if single not in per or bitmap not in per:
        return None
    s, b = per[single]["total"], per[bitmap]["total"]
    direction = "smaller" if s < b else "larger" if s > b else "the same size"
    return {"single": single, "bitmap": bitmap, "single_bytes": s, "bitmap_bytes": b,
            "ratio": s / b if b else None, "direction": direction,
            "as_seed": direction == "smaller"}


def size_direction(cs: Mapping[str, Any], single: str, bitmap: str) -> str:
    """One line: the size direction of the pair against the seed's."""
    c = size_comparison(cs, single, bitmap)
    if c is None:
        return f"size: {single} or {bitmap} not measured"
    seed = "as in the seed" if c["as_seed"] else "unlike the seed (single queue smaller)"
    return (f"size: {single} {c['single_bytes']:,} bytes vs {bitmap} {c['bitmap_bytes']:,} "
            f"bytes: the single list is {c['direction']} ({c['ratio']:.2f}×), {seed}")


# --- crossover ---------------------------------------------------------------------------


def crossover_of(ns: Sequence[int], single: Sequence[float],
                 bitmap: Sequence[float]) -> dict[str, int | None]:
    """``bitmap_from``: the smallest measured N from which bitmap-lists is at least as fast
    as single-list at every larger measured N; ``single_until``: the largest N at which
    single-list is still as fast or faster (None when there is none)."""
    bitmap_from: int | None = None
    for i in range(len(ns) - 1, -1, -1):
        if bitmap[i] <= single[i]:
            bitmap_from = ns[i]
        else:
            break
    single_until = max((n for n, s, b in zip(ns, single, bitmap, strict=True) if s <= b),
                       default=None)
    return {"bitmap_from": bitmap_from, "single_until": single_until}


#: Relative difference below which two figures are a tie (modelled figures are sums of
#: products; counted ones are exact and tie only when equal).
TIE_TOLERANCE = 1e-9


def _tie(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TIE_TOLERANCE, abs_tol=TIE_TOLERANCE)


def tally(single: Sequence[float], bitmap: Sequence[float]) -> dict[str, int]:
    """Over the measured N: how often the single list is strictly faster, how often the
    two tie, how often the bitmap lists are strictly faster."""
    out = {"single_wins": 0, "ties": 0, "bitmap_wins": 0}
    for s, b in zip(single, bitmap, strict=True):
        key = "ties" if _tie(s, b) else "single_wins" if s < b else "bitmap_wins"
        out[key] += 1
    return out


def compare_lists(ns: Sequence[int], single: Sequence[float],
                  bitmap: Sequence[float]) -> dict[str, int | None]:
    """The crossover (:func:`crossover_of`, a tie counting as a tie, not as a loss by a
    rounding error) and the strict wins and ties of two series against N."""
    tied = [b if _tie(s, b) else s for s, b in zip(single, bitmap, strict=True)]
    return {**crossover_of(ns, tied, bitmap), **tally(single, bitmap)}


def compare_pair(doc: Mapping[str, Any], single: str, bitmap: str,
                 metric: str) -> dict[str, Any]:
    """Per operation and statistic, ``single`` against ``bitmap`` by ``metric``
    (:func:`compare_lists`)."""
    out: dict[str, Any] = {}
    for op in OPS:
        fig = doc.get(op, {})
        s, b = fig.get(single, {}).get(metric), fig.get(bitmap, {}).get(metric)
        if s and b:
            out[op] = {st: compare_lists(doc["n"], s[st], b[st]) for st in ("avg", "worst")}
    return out


def crossover(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Crossover of single-list against bitmap-lists per metric, operation and statistic,
    with the strict wins and ties; ``metric`` names the headline one (instruction counts
    when available, else warm nanoseconds)."""
    by_metric: dict[str, Any] = {}
    for metric in CROSSOVER_METRICS:
        per_op = compare_pair(doc, SINGLE, BITMAP, metric)
        if per_op:
            by_metric[metric] = per_op
    headline = next((m for m in CROSSOVER_METRICS if m in by_metric), None)
    out: dict[str, Any] = {"metric": headline, "by_metric": by_metric}
    if headline:
        out.update(by_metric[headline])
    return out


# --- the study ----------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    u = platform.uname()
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": f"{u.system} {u.release}",
            "arch": u.machine}


#: The largest number of ready tasks the probe measures (the lean single list holds 255
#: tasks: N ready ones and the one activated).
MAX_TASKS = 254


def parse_tasks(text: str) -> list[int]:
    """``"1,5,10"`` → [1, 5, 10]: strictly ascending, each in 1..MAX_TASKS; ValueError
    naming what is wrong otherwise."""
    try:
        ns = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"{text!r} is not a comma-separated list of integers") from None
    if any(not 1 <= n <= MAX_TASKS for n in ns):
        raise ValueError(f"each number of ready tasks must be in 1..{MAX_TASKS}")
    if any(a >= b for a, b in zip(ns, ns[1:], strict=False)):
        raise ValueError("the numbers of ready tasks must be strictly ascending")
    return ns


def measure(quick: bool, count: bool = True, probe: Path | None = None,
            ns: Sequence[int] | None = None, platform: str = "x86-host") -> dict[str, Any]:
    """Run the whole study and return the ``schedlab.readyq/1`` document (``ns``
    replaces the plan's numbers of ready tasks; ``platform`` selects the platform the
    document's ``platform`` section describes: this machine, or a cost model of the seed's
    CPU reckoned from the counts, which then must be available)."""
    from schedlab import readyq_platform

    if platform not in readyq_platform.PLATFORMS:
        raise ProbeError(f"unknown platform {platform!r} "
                         f"(one of {', '.join(readyq_platform.PLATFORMS)})", 2)
    if platform != readyq_platform.HOST and not count:
        raise ProbeError(f"--platform {platform} is reckoned from instruction counts: "
                         "drop --no-count", 2)
    probe = probe or find_probe()
    timed = run_probe(probe, "time", quick, ns=ns)
    plan = run_probe(probe, "plan", quick, ns=ns)
    counted: dict[str, Any] | None = None
    instr: dict[str, Any]
    valgrind = find_valgrind() if count else None
    if not count:
        instr = {"available": False, "reason": "not requested (--no-count)"}
    elif valgrind is None:
        instr = {"available": False,
                 "reason": "valgrind not found on PATH (make develop installs it on Debian)"}
    else:
        try:
            counted = run_probe(probe, "count", quick, valgrind, ns=ns)
            instr = {"available": True, "valgrind": valgrind_version(valgrind),
                     "cache_sim": counted.get("cache_sim"),
                     "sim_evict_bytes": counted.get("sim_evict_bytes"),
                     "warm_cold_instruction_mismatches":
                         counted.get("warm_cold_instruction_mismatches")}
        except ProbeError as e:
            instr = {"available": False, "reason": str(e)}
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "quick": quick,
        "machine": {**machine(), "clock": timed.get("clock"), "probe": str(probe)},
        "levels": timed["levels"],
        "n": timed["n"],
        "backends": timed["backends"],
        "cases": timed["cases"],
        "timing": {"reps_warm": timed.get("reps_warm"), "reps_cold": timed.get("reps_cold"),
                   "evict_bytes": timed.get("evict_bytes")},
        "instructions": instr,
        "metrics": METRICS,
    }
    for op in OPS:
        doc[op] = {b: dict(timed["ops"][op][b]) for b in timed["backends"]}
        if counted is not None:
            for b in counted["backends"]:
                doc[op].setdefault(b, {}).update(counted["ops"][op][b])
    doc["code_size"] = code_size(probe, plan.get("symbols", {}))
    doc["crossover"] = crossover(doc)
    try:
        doc["platform"] = readyq_platform.apply(doc, platform)
    except ValueError as e:
        raise ProbeError(f"{e} ({instr.get('reason', '')})".replace(" ()", ""), 2) from None
    return doc


# --- terminal output ----------------------------------------------------------------------


def _num(x: float | None, unit: str = "") -> str:
    if x is None:
        return "–"
    return f"{x:,.0f}{unit}" if x >= 100 else f"{x:.1f}{unit}"


def describe_crossover(doc: Mapping[str, Any], op: str) -> str:
    """One line: where bitmap-lists overtakes single-list for ``op`` (headline metric)."""
    cx = doc.get("crossover", {})
    metric = cx.get("metric")
    if not metric or op not in cx:
        return f"{op}: no crossover (no metric measured for both back ends)"
    parts = []
    for stat in ("avg", "worst"):
        c = cx[op][stat]
        frm = c["bitmap_from"]
        until = c["single_until"]
        frm_t = f"bitmap-lists as fast or faster from N = {frm}" if frm is not None else \
            "bitmap-lists never stays ahead"
        until_t = f"single-list as fast or faster up to N = {until}" if until is not None else \
            "single-list never as fast"
        parts.append(f"{stat}: {frm_t}; {until_t}")
    return f"{op} ({metric}): " + " | ".join(parts)


#: The back ends of the host tables: the simulator's four (the seed's lean variants are in
#: the sh3-nocache tables).
HOST_BACKENDS: tuple[str, ...] = ("single-list", "bitmap-lists", "two-level-bitmap", "tree")


def print_tables(out: Any, doc: Mapping[str, Any]) -> None:
    """Rich tables: per operation, average / worst per back end against N (this machine's
    measurement, or the platform model's figures), the crossover, the code sizes."""

    platform = doc.get("platform", {})
    if platform.get("name") == "sh3-nocache":
        _print_model(out, doc, platform)
    else:
        _print_host(out, doc)
    _print_sizes(out, doc, platform)


def _print_host(out: Any, doc: Mapping[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    has_ir = bool(doc.get("instructions", {}).get("available"))
    backends = [b for b in doc["backends"] if b in HOST_BACKENDS]
    for op in OPS:
        t = Table(title=f"{op}: average / worst against N ready tasks "
                        f"({doc['levels']} priority levels), x86-host", title_justify="left")
        t.add_column("N", justify="right")
        for b in backends:
            if has_ir:
                t.add_column(f"{escape(b)}\ninstr", justify="right")
            t.add_column(f"{escape(b)}\nns warm", justify="right")
            t.add_column(f"{escape(b)}\nns cold", justify="right")
        for i, n in enumerate(doc["n"]):
            row = [str(n)]
            for b in backends:
                fig = doc[op][b]
                metrics = (["instructions"] if has_ir else []) + ["ns_warm", "ns_cold"]
                for m in metrics:
                    row.append(f"{_num(fig[m]['avg'][i])} / {_num(fig[m]['worst'][i])}")
            t.add_row(*row)
        out.print(t)
        out.print(escape(describe_crossover(doc, op)))
    if not has_ir:
        out.print(f"[yellow]instruction counts unavailable: "
                  f"{escape(str(doc['instructions'].get('reason')))}[/yellow]")


def _print_model(out: Any, doc: Mapping[str, Any], platform: Mapping[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    single, bitmap = platform["pair"]["single"], platform["pair"]["bitmap"]
    cols = (("instructions", "instr"), ("memory_accesses", "accesses"),
            ("sh3_cache_us", "µs cache on"), ("sh3_nocache_us", "µs cache off"))
    for op in OPS:
        t = Table(title=f"{op}: average / worst against N ready tasks, sh3-nocache model "
                        "(SH3 at 133 MHz)", title_justify="left")
        t.add_column("N", justify="right")
        for b in (single, bitmap):
            for _, label in cols:
                t.add_column(f"{escape(b)}\n{label}", justify="right")
        for i, n in enumerate(doc["n"]):
            row = [str(n)]
            for b in (single, bitmap):
                for m, _ in cols:
                    f = doc[op][b][m]
                    row.append(f"{_fig(f['avg'][i])} / {_fig(f['worst'][i])}")
            t.add_row(*row)
        out.print(t)
        for metric, label in cols[1:]:
            c = platform["comparison"][metric][op]
            out.print(escape(f"  {label}: " + " | ".join(
                f"{st}: {_until_text(c[st])}" for st in ("avg", "worst"))))
    w = platform["parameters"]["memory_wait_cycles"]
    out.print(escape(f"fitted: {platform['fitted'][0]} → W = {w['value']:.3g} cycles per "
                     "memory access" + (f" ({w['reason']})" if w.get("reason") else "")))
    out.print(escape("predicted: " + "; ".join(platform["predicted"])))
    for name, p in platform["parameters"].items():
        if p["kind"] != "fitted":
            out.print(escape(f"{p['kind']}: {name} = {p['value']:g} ({p['source']})"))


def _fig(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def _until_text(c: Mapping[str, Any]) -> str:
    until = "never" if c["single_until"] is None else f"N ≤ {c['single_until']}"
    return (f"single as fast {until}; wins {c['single_wins']}, ties {c['ties']}, "
            f"bitmap wins {c['bitmap_wins']}")


def _print_sizes(out: Any, doc: Mapping[str, Any], platform: Mapping[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    cs = doc.get("code_size", {})
    if cs.get("available"):
        t = Table(title="code size (bytes)", title_justify="left")
        t.add_column("back end")
        ops = list(next(iter(cs["backends"].values()))["ops"])
        for o in ops:
            t.add_column(o, justify="right")
        t.add_column("tables", justify="right")
        t.add_column("total", justify="right")
        for b, v in cs["backends"].items():
            t.add_row(escape(b), *(str(v["ops"][o]) for o in ops),
                      str(sum(v.get("tables", {}).values())), str(v["total"]))
        out.print(t)
        pair = platform.get("pair")
        if pair:
            out.print(escape(size_direction(cs, pair["single"], pair["bitmap"])))
    else:
        out.print(f"[yellow]code size unavailable: {escape(str(cs.get('reason')))}[/yellow]")
    m = doc["machine"]
    out.print(f"[dim]{escape(str(m.get('cpu')))} · {m.get('cpus')} cpus · "
              f"seed 002 measured an SH3 at 133 MHz: compare shapes and crossovers, not "
              f"absolute times[/dim]")

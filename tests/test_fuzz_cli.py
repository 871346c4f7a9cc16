"""Fuzzing the bad-input contract: valid specs (the shipped examples, rt-app's own example
files, small generator outputs), mutated — unknown and deleted keys, wrong types, numeric
edges, deep nesting, repeated keys, truncation, invalid UTF-8 — and run through
``schedlab validate`` and ``schedlab run`` (10 ms simulated) in subprocesses with a memory
limit and a timeout.

The contract: exit 0, 1 or 2 only — never 70 (internal error), a signal (a Rust abort is
134), a traceback or a hang; a failure is exactly one ``error:`` line on stderr, and for
exit 2 that line names a JSON path (``$…``) or the file. Hypothesis is derandomised with
a fixed number of examples, so the test is deterministic and bounded in time.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, ROOT, cli_command

#: Mutated specs, each through `validate` and `run` (side by side): about 0.3 s each on
#: the 2-core build machine, so the test takes well under a minute.
EXAMPLES = 100
#: Address space a CLI process may use (RLIMIT_AS): a few GB, against a runaway allocation.
MEMORY_LIMIT = 4 << 30
#: Seconds a CLI process may take: a simulated 10 ms run takes well under one.
TIMEOUT_S = 30
#: Simulated time of each ``run`` (a cap: the mutated spec's own duration is overridden).
DURATION = "10ms"

# Refusals of a command-line value rather than of the spec: they name the flag (`--param`,
# `--cpus`, `--hz`), not a JSON path. Every refusal of the spec itself names its path.
RUN_SETUP_REFUSALS = [
    re.compile(p) for p in (
        r"^error: --param \S+: ",
        r"^error: cpus: expected ",
        r"^error: hz: expected ",
    )
]


# --- the valid specs mutated -----------------------------------------------------------

SMALL_GENERATED = [
    ("hackbench", {"groups": 1, "loops": 2, "fds": 2}),
    ("hackbench", {"groups": 1, "loops": 2, "fds": 2, "mode": "pipe", "tasks": "thread"}),
    ("cyclictest", {"threads": 2, "loops": 10, "load": "hackbench", "load_groups": 1}),
    ("broadcast-wakeup", {"waiters": 2, "iterations": 5, "load_groups": 1, "load_loops": 2}),
    ("periodic", {"n": 3, "duration_s": 1}),
    ("interbench", {"duration_s": 1, "warmup_s": 1, "load": "burn"}),
]


@cache
def seed_texts() -> tuple[tuple[str, str], ...]:
    """``(name, text)`` of every spec the fuzzer starts from."""
    from schedlab import api

    texts = [(p.name, p.read_text(encoding="utf-8"))
             for p in sorted((ROOT / "examples" / "specs").glob("*.json"))]
    texts += [(p.name, p.read_text(encoding="utf-8"))
              for p in sorted((DATA / "rt-app-examples").glob("*.json"))]
    for name, opts in SMALL_GENERATED:
        texts.append((f"gen-{name}", api.generate_text(
            name, [(k, api.option_text(v)) for k, v in opts.items()])))
    return tuple(texts)


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is (numbers JSON cannot hold, deep nesting)."""

    text: str


@dataclass
class Pairs:
    """An object that may hold a key twice (a dict cannot)."""

    members: list[tuple[str, Any]]


def to_text(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_text(x)}" for k, x in v.members) + "}"
    if isinstance(v, dict):
        return to_text(Pairs(list(v.items())))
    if isinstance(v, list):
        return "[" + ", ".join(to_text(x) for x in v) + "]"
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    return json.dumps(v, ensure_ascii=False)


def slots(v: Any) -> list[tuple[Any, Any]]:
    """Every ``(container, key)`` of the tree: a value that can be replaced or removed."""
    out: list[tuple[Any, Any]] = []
    stack = [v]
    while stack:
        node = stack.pop()
        if isinstance(node, Pairs):
            items = list(enumerate(node.members))
            out += [(node, i) for i, _ in items]
            stack += [x for _, (_, x) in items]
        elif isinstance(node, list):
            out += [(node, i) for i in range(len(node))]
            stack += node
    return out


def objects(v: Any) -> list[Pairs]:
    found: list[Pairs] = []
    stack = [v]
    while stack:
        node = stack.pop()
        if isinstance(node, Pairs):
            found.append(node)
            stack += [x for _, x in node.members]
        elif isinstance(node, list):
            stack += node
    return found


def as_pairs(v: Any) -> Any:
    if isinstance(v, dict):
        return Pairs([(k, as_pairs(x)) for k, x in v.items()])
    if isinstance(v, list):
        return [as_pairs(x) for x in v]
    return v


def get(slot: tuple[Any, Any]) -> Any:
    c, k = slot
    return c.members[k][1] if isinstance(c, Pairs) else c[k]


def put(slot: tuple[Any, Any], value: Any) -> None:
    c, k = slot
    if isinstance(c, Pairs):
        c.members[k] = (c.members[k][0], value)
    else:
        c[k] = value


def remove(slot: tuple[Any, Any]) -> None:
    c, k = slot
    del (c.members if isinstance(c, Pairs) else c)[k]


EDGES: list[Any] = [
    0, -1, 1, 2**31 - 1, 2**31, -(2**31), 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
    -(2**63) - 1, 10**30, 1e308, -1e308, 0.5, 1e-300, -0.0, float("nan"), float("inf"),
    "NaN", "Infinity", "-1", "1e999", "0x10", "", Raw("1e400"), Raw("-1e400"),
    Raw("123456789012345678901234567890"),
]
WRONG_TYPES: list[Any] = ["x", [], {}, True, False, None, [1, 2], {"a": 1}, "SCHED_FIFO",
                          [[]], "-"]


def nested(depth: int) -> Raw:
    return Raw("[" * depth + "]" * depth) if depth % 2 else Raw('{"a":' * depth + "1" +
                                                                   "}" * depth)


# A mutation: (kind, a choice number that picks where, a choice that picks what)
Mutation = tuple[str, int, int]
KINDS = ["unknown_key", "delete_key", "wrong_type", "numeric_edge", "deep_nesting",
         "repeat_key", "rename_key"]


def spread(n: int) -> int:
    """``n`` scrambled (Knuth's multiplicative hash): Hypothesis favours small numbers,
    which would pick the first members of the spec again and again."""
    return (n * 2654435761) % 2**32


def mutate_tree(tree: Any, m: Mutation) -> None:
    kind, where, what = m[0], spread(m[1]), spread(m[2])
    places = slots(tree)
    objs = objects(tree)
    if kind == "unknown_key" and objs:
        objs[where % len(objs)].members.append(("zz_unknown" if what % 2 else "run ", what))
    elif kind == "delete_key" and places:
        remove(places[where % len(places)])
    elif kind == "wrong_type" and places:
        put(places[where % len(places)], WRONG_TYPES[what % len(WRONG_TYPES)])
    elif kind == "numeric_edge" and places:
        numeric = [s for s in places if isinstance(get(s), (int, float))
                   and not isinstance(get(s), bool)] or places
        put(numeric[where % len(numeric)], EDGES[what % len(EDGES)])
    elif kind == "deep_nesting" and places:
        put(places[where % len(places)], nested([63, 64, 65, 200, 1001, 20001][what % 6]))
    elif kind == "repeat_key" and objs:
        o = [x for x in objs if x.members] or objs
        obj = o[where % len(o)]
        if obj.members:
            k, v = obj.members[what % len(obj.members)]
            obj.members.append((k, v if what % 3 else EDGES[what % len(EDGES)]))
    elif kind == "rename_key" and objs:
        o = [x for x in objs if x.members] or objs
        obj = o[where % len(o)]
        if obj.members:
            i = what % len(obj.members)
            k, v = obj.members[i]
            obj.members[i] = (k.upper() if what % 2 else k + "0", v)


def mutate_bytes(data: bytes, kind: str, where: int) -> bytes:
    at = where % (len(data) + 1)
    if kind == "truncate":
        return data[:at]
    if kind == "invalid_utf8":
        bad = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"][where % 5]
        # inside a string when the position falls in one, anywhere otherwise
        return data[:at] + bad + data[at:]
    if kind == "nul":
        return data[:at] + b"\x00" + data[at:]
    return data


@st.composite
def mutated_specs(draw: Callable[..., Any]) -> tuple[str, bytes]:
    texts = seed_texts()
    name, text = texts[draw(st.integers(0, len(texts) - 1))]
    choice = st.integers(0, 2**20)
    tree_mutations = draw(st.lists(st.tuples(st.sampled_from(KINDS), choice, choice),
                                   min_size=1, max_size=3))
    # mostly well-formed JSON, so that most cases reach the validator and the engine
    byte_mutation = draw(st.sampled_from(["none"] * 7 + ["truncate", "invalid_utf8", "nul"]))
    where = draw(choice)
    if tree_mutations:
        from schedlab import api

        try:
            tree = as_pairs(api.spec_view(text))
        except ValueError:  # a file with repeated keys: mutated as bytes only
            tree = None
        if tree is not None:
            for m in tree_mutations:
                mutate_tree(tree, m)
            text = to_text(tree)
    label = f"{name} {tree_mutations} {byte_mutation}@{where}"
    return label, mutate_bytes(text.encode("utf-8"), byte_mutation, where)


# --- the contract ----------------------------------------------------------------------


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def start_cli(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    env["COLUMNS"] = "200"
    return subprocess.Popen([*cli_command(), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", env=env,
                            preexec_fn=_limits)


def finish_cli(p: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"{' '.join(map(str, p.args))}: no answer within {TIMEOUT_S} s (a hang)")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def check_contract(p: subprocess.CompletedProcess[str], command: str, spec: Path,
                   label: str) -> None:
    what = f"schedlab {command} on {label}: exit {p.returncode}\n{p.stderr[-2000:]}"
    assert p.returncode in (0, 1, 2), what
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr, what
    assert "internal error" not in p.stderr, what
    if p.returncode == 0:
        return
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, what
    line = lines[0]
    assert line.startswith("error: "), what
    if p.returncode == 2:
        names_where = "$" in line or str(spec) in line
        run_setup = command == "run" and any(r.search(line) for r in RUN_SETUP_REFUSALS)
        assert names_where or run_setup, f"no JSON path or file named: {what}"


@pytest.fixture(scope="module")
def workdir() -> Any:
    with tempfile.TemporaryDirectory(prefix="schedlab-fuzz-") as d:
        yield Path(d)


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=mutated_specs())
def test_mutated_specs_keep_the_bad_input_contract(workdir: Path,
                                                   case: tuple[str, bytes]) -> None:
    label, data = case
    spec = workdir / "spec.json"
    spec.write_bytes(data)
    # the two commands side by side: one core each
    validate = start_cli("validate", str(spec))
    run = start_cli("run", str(spec), "--duration", DURATION)
    check_contract(finish_cli(validate), "validate", spec, label)
    check_contract(finish_cli(run), "run", spec, label)


def test_the_seeds_are_valid_specs() -> None:
    """The fuzzer starts from specs that parse (a mutation is then the only fault); a few are
    refused at the run stage (SCHED_DEADLINE by the schedulers without a deadline class),
    which is what they test."""
    from schedlab import SimError, api

    for _name, text in seed_texts():
        try:
            api.validate(text)
        except SimError as e:
            assert e.bad_input, e

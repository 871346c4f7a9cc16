"""Same spec + same seed ⇒ the same result JSON (but for run.wall_s) and the same trace bytes.
Every assertion message carries the seed so that a failure can be replayed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import schedlab
from conftest import FINITE_SPEC, PERIODIC_SPEC, CliRunner

SEEDS = [1, 12345]


def _strip(result: dict[str, Any]) -> dict[str, Any]:
    r = json.loads(json.dumps(result))
    r["run"].pop("wall_s", None)
    return r


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("seed", SEEDS)
def test_cli_run_twice(cli: CliRunner, periodic_spec: Path, scheduler: str, seed: int,
                       tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        trace = tmp_path / f"t{i}.trace"
        p = cli("run", periodic_spec, "-s", scheduler, "--cpus", "2", "--seed", str(seed),
                "--duration", "200ms", "--json", "--trace", trace)
        assert p.returncode == 0, f"seed={seed}: {p.stderr}"
        outs.append((_strip(json.loads(p.stdout)), _digest(trace)))
    (r0, t0), (r1, t1) = outs
    assert r0 == r1, f"results differ for seed={seed} scheduler={scheduler}"
    assert t0 == t1, f"traces differ for seed={seed} scheduler={scheduler}"


@pytest.mark.parametrize("spec", [PERIODIC_SPEC, FINITE_SPEC], ids=["periodic", "finite"])
def test_api_every_scheduler_twice(spec: dict[str, Any], schedulers_available: list[str]) -> None:
    for name in schedulers_available:
        for seed in SEEDS:
            a = schedlab.simulate(spec, scheduler=name, seed=seed, cpus=2, duration="100ms")
            b = schedlab.simulate(spec, scheduler=name, seed=seed, cpus=2, duration="100ms")
            where = f"seed={seed} scheduler={name}"
            assert _strip(a.json) == _strip(b.json), where
            assert a.samples.equals(b.samples), where


def test_parallel_compare_matches_sequential(schedulers_available: list[str]) -> None:
    names = schedulers_available[:4]
    par = schedlab.compare(PERIODIC_SPEC, names, seed=9, cpus=2, duration="100ms", jobs=4)
    seq = schedlab.compare(PERIODIC_SPEC, names, seed=9, cpus=2, duration="100ms", jobs=1)
    for p, s in zip(par, seq, strict=True):
        assert _strip(p.json) == _strip(s.json), f"seed=9 scheduler={p.scheduler}"


def test_spec_hash_is_taken_over_the_exact_text(scheduler: str) -> None:
    """The core hashes the bytes it ran: the same spec laid out differently is a
    different spec text (in rt-app, member order is event order), and the hash is the
    plain sha256 of the UTF-8 text."""
    text_a = json.dumps(PERIODIC_SPEC)
    text_b = json.dumps(PERIODIC_SPEC, indent=4, sort_keys=True)
    a = schedlab.simulate(text_a, scheduler=scheduler, duration="10ms", samples=False)
    again = schedlab.simulate(text_a, scheduler=scheduler, duration="10ms", samples=False)
    b = schedlab.simulate(text_b, scheduler=scheduler, duration="10ms", samples=False)
    assert a.run["spec_sha256"] == again.run["spec_sha256"]
    assert a.run["spec_sha256"] != b.run["spec_sha256"]
    assert a.run["spec_sha256"] == hashlib.sha256(text_a.encode("utf-8")).hexdigest()

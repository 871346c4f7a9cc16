"""python/schedlab/_core.pyi matches the compiled module."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import schedlab
from schedlab import _core

STUB = Path(schedlab.__file__).with_name("_core.pyi")


def _stub_names() -> tuple[dict[str, list[str]], set[str]]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    funcs = {
        n.name: [a.arg for a in n.args.args]
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
    }
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return funcs, classes


def _stub_constants() -> dict[str, str]:
    """Each constant's annotated type, without its parameters (``list[int]`` → ``list``)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {n.target.id: ast.unparse(n.annotation).split("[")[0] for n in tree.body
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}


def test_stub_constants_match_module() -> None:
    constants = {name: type(v).__name__ for name, v in vars(_core).items()
                 if not name.startswith("_") and not callable(v)
                 and not inspect.ismodule(v)
                 and isinstance(v, (int, str, float, tuple, list))}
    assert _stub_constants() == constants


def _module_names() -> tuple[dict[str, list[str]], set[str]]:
    funcs: dict[str, list[str]] = {}
    classes: set[str] = set()
    for name, obj in vars(_core).items():
        if name.startswith("_"):
            continue
        if inspect.isclass(obj):
            classes.add(name)
        elif callable(obj):
            funcs[name] = list(inspect.signature(obj).parameters)
    return funcs, classes


def test_stub_matches_module() -> None:
    stub_funcs, stub_classes = _stub_names()
    mod_funcs, mod_classes = _module_names()
    assert stub_classes == mod_classes
    assert set(stub_funcs) == set(mod_funcs)
    for name, params in mod_funcs.items():
        assert stub_funcs[name] == params, name


def test_exception_hierarchy() -> None:
    assert issubclass(_core.SpecError, ValueError)
    assert issubclass(_core.SimError, RuntimeError)
    assert schedlab.SpecError is _core.SpecError
    assert schedlab.SimError is _core.SimError


def test_version() -> None:
    assert schedlab.__version__ == _core.version()
    assert schedlab.__version__.count(".") == 2


def test_simulate_columns_are_native_arrays() -> None:
    from conftest import FINITE_SPEC

    src = schedlab.load_spec(FINITE_SPEC)
    sched = next(s["name"] for s in schedlab.schedulers() if s["available"])
    text, cols = _core.simulate(src.text, scheduler=sched)
    import numpy as np

    widths = {"tid": "u4", "release_ns": "u8", "wake_ns": "u8", "start_ns": "i8",
              "end_ns": "i8", "kind": "u1"}
    assert list(cols) == list(widths)
    arrays = {k: np.frombuffer(v, dtype=widths[k]) for k, v in cols.items()}
    lengths = {len(a) for a in arrays.values()}
    assert len(lengths) == 1 and lengths.pop() > 0
    assert set(arrays["kind"].tolist()) <= {0, 1, 2}
    assert (arrays["wake_ns"] >= arrays["release_ns"]).all()
    assert len(json.loads(text)["run"]["spec_sha256"]) == 64


def test_stats_are_the_schema_stats() -> None:
    st = _core.stats([100] * 999 + [1_000_000])
    assert st["count"] == 1000 and st["max"] == 1_000_000 and st["p50"] == 100
    assert st["filtered6sigma"]["count"] == 999 and st["filtered6sigma"]["max"] == 100
    assert _core.stats([])["mean"] is None

"""Pure-Python helpers: durations, generic generator options, spec loading and hashing."""

from __future__ import annotations

import json

import pytest

from schedlab._core import SpecError
from schedlab.api import edit_spec, load_spec, parse_duration
from schedlab.cli import _generic_options, _split_schedulers
from schedlab.result import fmt_ns


@pytest.mark.parametrize(
    "text, ns",
    [
        ("10s", 10_000_000_000), ("500ms", 500_000_000), ("20us", 20_000),
        ("20µs", 20_000), ("1000ns", 1000), ("1.5s", 1_500_000_000), ("2min", 120_000_000_000),
        ("3", 3_000_000_000), (" 7 ms ", 7_000_000), (".5s", 500_000_000),
        (2, 2_000_000_000), (0.25, 250_000_000),
    ],
)
def test_parse_duration(text: str | float, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize("bad", ["", "ms", "10 parsecs", "-1s", "0", "0ns", "1e3s", True, 0])
def test_parse_duration_rejects(bad: str | int) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_generic_options() -> None:
    assert _generic_options(["--groups", "10", "--mode=pipe", "--threads", "--loops", "-5"]) == [
        ("groups", "10"), ("mode", "pipe"), ("threads", "true"), ("loops", "-5"),
    ]
    import click

    with pytest.raises(click.UsageError):
        _generic_options(["stray"])


def test_split_schedulers() -> None:
    assert _split_schedulers(["a,b", "c", "a", " d , "]) == ["a", "b", "c", "d"]


def test_edit_spec_keeps_member_order_and_refuses_repeated_keys() -> None:
    text = '{"tasks": {"t": {"phases": {"p": {"kick": 1, "reap": 2, "spawn": 3}}}}}'

    def add_machine(spec: dict) -> None:
        spec["schedlab"] = {"machine": {"cpus": 1}}

    edited = edit_spec(text, add_machine)
    assert edited.index('"kick"') < edited.index('"reap"') < edited.index('"spawn"')
    assert json.loads(edited)["schedlab"] == {"machine": {"cpus": 1}}
    with pytest.raises(SpecError, match="repeated keys"):
        edit_spec('{"tasks": {"t": {"run": 1, "run": 2}}}', add_machine)


def test_load_spec_forms(tmp_path) -> None:
    p = tmp_path / "s.json"
    p.write_text('{"tasks": {}}')
    assert load_spec(p).origin == str(p)
    assert load_spec('  {"tasks": {}}').origin == "<text>"
    assert load_spec({"tasks": {}}).origin == "<dict>"
    assert load_spec({"b": 1, "a": 2}).text.index('"b"') < load_spec({"b": 1, "a": 2}).text.index(
        '"a"')
    with pytest.raises(TypeError):
        load_spec(3)  # type: ignore[arg-type]


def test_fmt_ns() -> None:
    assert fmt_ns(None) == "–"
    assert fmt_ns(950) == "950 ns"
    assert fmt_ns(12_345) == "12.3 µs"
    assert fmt_ns(1_500_000_000) == "1.50 s"
    assert fmt_ns(2_000_000.0) == "2.00 ms"


class PanicException(BaseException):
    """Stands in for pyo3's PanicException (matched by name, as pyo3 does not export it)."""


@pytest.mark.parametrize(
    "exc, code, needle",
    [
        (PanicException("index out of bounds"), 70, "internal error (panic in the Rust core)"),
        (ZeroDivisionError("oops"), 70, "internal error (ZeroDivisionError)"),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_unexpected_errors_are_one_line(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], tmp_path,
                                        exc: BaseException, code: int, needle: str) -> None:
    from schedlab import cli, runner

    def boom(*_a: object, **_k: object) -> None:
        raise exc

    monkeypatch.delenv("SCHEDLAB_DEBUG", raising=False)
    monkeypatch.setattr(runner, "execute", boom)
    spec = tmp_path / "s.json"
    spec.write_text('{"tasks": {"t": {"run": 100}}}')
    out = tmp_path / "out.json"
    out.write_text("earlier")
    assert cli.run_cli(["run", str(spec), "-o", str(out)]) == code
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert out.read_text() == "earlier"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["out.json", "s.json"]

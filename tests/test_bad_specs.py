"""The bad-input corpus: every file in tests/data/bad_specs/ is rejected with exit 2 and one
line naming the JSON path of the problem (tests/data/bad_specs/expected.json), by `validate`
and by `run` alike. Entries with `"stage": "run"` are valid specs that a run refuses before
it starts (a scheduler or tunable the spec names, a workload that never ends)."""

from __future__ import annotations

import json

import pytest

from conftest import BAD_SPECS, CliRunner


def _corpus() -> list[tuple[str, dict[str, str]]]:
    expected = BAD_SPECS / "expected.json"
    if not expected.exists():
        return []
    return sorted(json.loads(expected.read_text(encoding="utf-8")).items())


CORPUS = _corpus()


@pytest.mark.skipif(not CORPUS, reason="tests/data/bad_specs/expected.json not present")
def test_every_file_has_an_expectation() -> None:
    files = {p.name for p in BAD_SPECS.iterdir() if p.name != "expected.json" and p.is_file()}
    assert files <= {name for name, _ in CORPUS}, files - {name for name, _ in CORPUS}


@pytest.mark.parametrize("name, expect", CORPUS, ids=[n for n, _ in CORPUS])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_spec(cli: CliRunner, name: str, expect: dict[str, str], command: str) -> None:
    p = cli(command, BAD_SPECS / name)
    assert p.returncode == 2, f"{name}: exit {p.returncode}\n{p.stdout}{p.stderr}"
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"{name}: expected one line on stderr:\n{p.stderr}"
    line = lines[0]
    assert line.startswith("error: ")
    assert expect["path"] in line, f"{name}: {line!r} does not name {expect['path']!r}"
    if expect.get("contains"):
        assert expect["contains"].lower() in line.lower(), f"{name}: {line!r}"
    assert p.stdout.strip() == "" or command == "validate"


@pytest.mark.parametrize("name, expect", CORPUS, ids=[n for n, _ in CORPUS])
def test_bad_spec_api(name: str, expect: dict[str, str]) -> None:
    import schedlab

    if expect.get("stage") == "run":
        # A valid spec that a run refuses before it starts: validate refuses it the same way.
        with pytest.raises(schedlab.SimError) as run_info:
            schedlab.validate(BAD_SPECS / name)
        assert run_info.value.bad_input
        assert run_info.value.message.startswith(expect["path"] + ": ")
        return
    with pytest.raises(schedlab.SpecError) as info:
        schedlab.validate(BAD_SPECS / name)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.path.startswith(expect["path"]) or expect["path"] in str(e)
    assert str(e) == f"{e.path}: {e.message}"

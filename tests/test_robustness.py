"""Hostile input and failing outputs at the command line: every failure is one line on
stderr, with exit status 2 for bad input and 1 for a failed write — never an internal
error (70) or a traceback — and no file written before is lost."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from conftest import CliRunner, cli_command

# A run that writes a few hundred KB of trace, samples and Parquet: enough to pass a small
# file-size limit.
BUSY_SPEC = {"global": {"duration": 1},
             "tasks": {"a": {"instance": 4, "run": 100, "sleep": 100}}}

def error_line(stderr: str) -> str:
    """The one ``error: …`` line a failure prints (and nothing else)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return lines[0]


def run_limited(args: Sequence[str | os.PathLike[str]], *, fsize: int | None = None,
                cwd: Path | None = None, stdin: bytes | None = None
                ) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a subprocess, files it writes limited to ``fsize`` bytes (RLIMIT_FSIZE:
    a write past it fails with EFBIG, as on a full quota)."""

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    return subprocess.run([*cli_command(), *map(str, args)], input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=300,
                          preexec_fn=limit)


def no_temporary_files(directory: Path) -> None:
    left = [p for p in directory.rglob("*") if p.name.endswith(".tmp")]
    assert not left, left


@pytest.fixture()
def busy_spec(tmp_path: Path) -> Path:
    p = tmp_path / "busy.json"
    p.write_text(json.dumps(BUSY_SPEC))
    return p


# --- hostile specs -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["array", "object"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_deep_nesting_is_bad_input(cli: CliRunner, tmp_path: Path, shape: str,
                                   command: str) -> None:
    deep = ("[" * 1000 + "]" * 1000) if shape == "array" else ('{"a":' * 1000 + "1" + "}" * 1000)
    spec = tmp_path / "deep.json"
    spec.write_text('{"tasks": {"t": {"run": 100, "yield": ' + deep + "}}}")
    p = cli(command, spec)
    assert p.returncode == 2, p.stderr
    line = error_line(p.stderr)
    assert "$" in line and "nesting deeper than 64" in line


def test_deep_nesting_through_the_api(tmp_path: Path) -> None:
    import schedlab

    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    with pytest.raises(schedlab.SpecError, match="nesting"):
        schedlab.simulate({"tasks": {"t": {"run": 1, "x": deep}}})
    text = '{"tasks": {"t": {"run": 1, "x": ' + "[" * 1000 + "]" * 1000 + "}}}"
    with pytest.raises(schedlab.SpecError, match="nesting"):
        schedlab.api.edit_spec(text, lambda spec: None)


def test_stdin_that_is_not_utf8_is_bad_input(tmp_path: Path) -> None:
    data = b'{"tasks":{"t\xff":{"run":1}}}'
    piped = run_limited(["run", "-"], stdin=data)
    assert piped.returncode == 2, piped.stderr
    line = error_line(piped.stderr.decode())
    assert "standard input is not UTF-8" in line and "byte 12" in line
    f = tmp_path / "bad.json"
    f.write_bytes(data)
    from_file = run_limited(["run", f])
    assert from_file.returncode == 2
    assert "is not UTF-8" in error_line(from_file.stderr.decode())


def test_spec_text_with_lone_surrogates_is_a_spec_error() -> None:
    import schedlab

    with pytest.raises(schedlab.SpecError, match="not valid Unicode"):
        schedlab.validate('{"tasks": {"t\udcff": {"run": 1}}}')


# --- numeric options ---------------------------------------------------------------------

U32_OVER = [str(2**32), str(2**64), str(10**30)]  # past what the core's u32 holds
U64_OVER = [str(2**64), str(10**30)]


@pytest.mark.parametrize("args, flag, values", [
    (["run", "{spec}", "--cpus"], "--cpus", U32_OVER),
    (["run", "{spec}", "--hz"], "--hz", U32_OVER),
    (["run", "{spec}", "--seed"], "--seed", U64_OVER),
    (["compare", "{spec}", "-s", "fp", "--cpus"], "--cpus", U32_OVER),
    (["compare", "{spec}", "-s", "fp", "--hz"], "--hz", U32_OVER),
    (["compare", "{spec}", "-s", "fp", "--seed"], "--seed", U64_OVER),
    (["timeslice", "--hz"], "--hz", U32_OVER),
    (["timeslice", "--dprio", "-s", "nicksched", "--hz"], "--hz", U32_OVER),
    (["cost", "-s", "fp", "--decisions"], "--decisions", U64_OVER),
    (["cost", "-s", "fp", "--cpus"], "--cpus", U32_OVER),
    (["cost", "-s", "fp", "--max-tasks"], "--max-tasks", U64_OVER),
], ids=lambda v: " ".join(v) if isinstance(v, list) and "{spec}" in v else None)
def test_numbers_out_of_range_are_bad_input(cli: CliRunner, periodic_spec: Path,
                                            args: list[str], flag: str,
                                            values: list[str]) -> None:
    for value in values:
        p = cli(*[a.format(spec=periodic_spec) for a in args], value)
        assert p.returncode == 2, (value, p.stderr)
        assert flag in error_line(p.stderr)


@pytest.mark.parametrize("args", [
    ["run", "{spec}", "--duration", f"{2**64}ns"],
    ["run", "{spec}", "--duration", "1e400"],
    ["run", "{spec}", "--cpus", "-1"],
    ["run", "{spec}", "--hz", "0"],
    ["run", "{spec}", "--hz", "4294967295"],
    ["run", "{spec}", "--seed", "-1"],
])
def test_numbers_the_core_refuses_are_bad_input(cli: CliRunner, periodic_spec: Path,
                                                args: list[str]) -> None:
    p = cli(*[a.format(spec=periodic_spec) for a in args])
    assert p.returncode == 2, p.stderr
    error_line(p.stderr)


def test_huge_counts_that_only_python_uses_are_fine(cli: CliRunner, periodic_spec: Path) -> None:
    p = cli("run", periodic_spec, "--duration", "10ms", "--rows", str(2**70))
    assert p.returncode == 0, p.stderr
    p = cli("compare", periodic_spec, "-s", "fp", "--duration", "10ms", "-j", str(2**70))
    assert p.returncode == 0, p.stderr


def test_the_api_range_checks_before_the_core() -> None:
    import schedlab

    spec = {"global": {"duration": 1}, "tasks": {"t": {"run": 100}}}
    for kw in ({"cpus": 2**32}, {"hz": 2**40}, {"seed": 2**64}, {"cpus": 0}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            schedlab.simulate(spec, **kw)


# --- outputs -----------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--trace", "-o", "--samples", "--parquet"])
def test_an_empty_output_name_is_refused(cli: CliRunner, periodic_spec: Path,
                                         flag: str) -> None:
    p = cli("run", periodic_spec, "--duration", "10ms", flag, "")
    assert p.returncode == 2, p.stderr
    assert "empty file name" in error_line(p.stderr)


@pytest.mark.parametrize("args", [
    ["-o", "{d}/x", "--trace", "{d}/x"],
    ["--samples", "{d}/x", "--trace", "{d}/x"],
    ["-o", "{d}/pq/result.json", "--parquet", "{d}/pq"],
    ["-o", "{spec}"],
    ["--trace", "{d}/./x", "-o", "{d}/sub/../x"],
])
def test_two_outputs_on_one_file_are_refused(cli: CliRunner, periodic_spec: Path,
                                             tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "x").write_text("earlier")
    before = periodic_spec.read_bytes()
    p = cli("run", periodic_spec, "--duration", "10ms",
            *[a.format(d=tmp_path, spec=periodic_spec) for a in args])
    assert p.returncode == 2, p.stderr
    assert "the same file as" in error_line(p.stderr)
    assert (tmp_path / "x").read_text() == "earlier"
    assert periodic_spec.read_bytes() == before


def test_compare_refuses_parquet_over_its_output(cli: CliRunner, periodic_spec: Path,
                                                 tmp_path: Path) -> None:
    p = cli("compare", periodic_spec, "-s", "fp", "--duration", "10ms",
            "--parquet", tmp_path / "pq", "-o", tmp_path / "pq" / "fp" / "result.json")
    assert p.returncode == 2
    assert "the same file as" in error_line(p.stderr)


@pytest.mark.parametrize("flag, name", [
    ("--trace", "run.trace"), ("--samples", "run.arrow"), ("--parquet", "pq"), ("-o", "run.json"),
])
def test_a_failed_write_names_the_file_and_keeps_earlier_files(
        busy_spec: Path, tmp_path: Path, flag: str, name: str) -> None:
    """A write that fails (EFBIG under a file-size limit) is reported naming the file the
    user gave; no output of the run lands, and earlier files stay as they were."""
    target = tmp_path / name
    result = tmp_path / "result.json"
    earlier = {result: b"earlier result"}
    if flag == "--parquet":
        target.mkdir()
        earlier[target / "samples.parquet"] = b"earlier samples"
    else:
        earlier[target] = b"earlier " + name.encode()
    for f, data in earlier.items():
        f.write_bytes(data)
    if flag == "-o":  # the result JSON is a few KB: only a tiny limit stops it
        args, limit = [flag, target], 1_000
    else:  # the trace, samples and Parquet samples pass 64 KB, the result JSON does not
        args, limit = [flag, target, "-o", result], 64_000
    p = run_limited(["run", busy_spec, *args], fsize=limit, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    line = error_line(p.stderr.decode())
    assert "File too large" in line and ".tmp" not in line
    named = Path(line.removeprefix("error: ").split(":")[0])
    assert named == target or named.parent == target, line
    for f, data in earlier.items():
        assert f.read_bytes() == data, f
    no_temporary_files(tmp_path)


def test_a_failed_compare_write_leaves_no_new_directories(busy_spec: Path,
                                                          tmp_path: Path) -> None:
    pq = tmp_path / "new" / "pq"
    p = run_limited(["compare", busy_spec, "-s", "fp,linux-cfs", "--parquet", pq],
                    fsize=64_000)
    assert p.returncode == 1, p.stderr
    assert str(pq) in error_line(p.stderr.decode())
    assert not (tmp_path / "new").exists()


# --- what the summary says -----------------------------------------------------------------


def test_the_summary_reports_tasks_blocked_at_the_end(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "deadlock.json"
    # repeated keys: json.dumps cannot write them, so the text is written by hand
    spec.write_text(
        '{"tasks": {'
        '"a": {"loop": 1, "lock": "m1", "run": 100, "sleep": 100, "lock": "m2",'
        ' "unlock": "m2", "unlock": "m1"},'
        '"b": {"loop": 1, "lock": "m2", "run": 100, "sleep": 100, "lock": "m1",'
        ' "unlock": "m1", "unlock": "m2"}}}')
    j = cli("run", spec, "--json")
    assert j.returncode == 0, j.stderr
    assert json.loads(j.stdout)["summary"]["blocked_at_end"] == 2
    p = cli("run", spec, "--cpus", "2")
    assert p.returncode == 0, p.stderr
    assert "blocked at end: 2 tasks still blocked" in p.stdout
    assert "deadlock" in p.stdout
    assert "the workload does not end" not in p.stdout
    c = cli("compare", spec, "-s", "fp,linux-cfs")
    assert c.returncode == 0, c.stderr
    assert "blocked at end" in c.stdout


def test_a_run_with_nothing_blocked_says_nothing_of_it(cli: CliRunner,
                                                       finite_spec: Path) -> None:
    p = cli("run", finite_spec)
    assert p.returncode == 0, p.stderr
    assert "blocked" not in p.stdout
    c = cli("compare", finite_spec, "-s", "fp")
    assert "blocked" not in c.stdout


# --- a spec's identity -----------------------------------------------------------------------


def test_repeated_keys_are_distinct_events_and_distinct_specs(tmp_path: Path) -> None:
    """Specs that differ only in the first of two repeated ``run`` keys run differently,
    and so are two specs: the hash the core takes of the exact text tells them apart, and
    it is the one Python reports (never a hash of a re-parsed dict)."""
    import schedlab
    from schedlab import _core

    texts = ['{"global": {"duration": 1}, "tasks": {"t": {"loop": 1, "run": '
             f'{first}, "run": 500}}}}}}' for first in (1000, 9000)]
    results = [schedlab.simulate(t) for t in texts]
    cpu = [r.json["tasks"][0]["cpu_ns"] for r in results]
    assert cpu == [1_500_000, 9_500_000]
    hashes = [r.run["spec_sha256"] for r in results]
    assert hashes[0] != hashes[1]
    for text, h in zip(texts, hashes, strict=True):
        assert schedlab.load_spec(text).sha256 == h == _core.spec_sha256(text)
    # the editable view refuses what a dict would collapse, naming the repeated key
    with pytest.raises(schedlab.SpecError) as info:
        schedlab.api.spec_view(texts[0])
    assert info.value.path == "$.tasks.t.run"


def test_the_spec_view_is_the_spec_readers() -> None:
    """``spec_view`` reads what the core reads (comments, trailing commas), in member
    order; Python never decodes a spec with its own JSON reader."""
    import schedlab

    text = ('{/* rt-app style */ "tasks": {"b": {"run": 1,}, "a": {"sleep": 2}},'
            ' "global": {"duration": 1},}')
    view = schedlab.api.spec_view(text)
    assert list(view["tasks"]) == ["b", "a"]
    schedlab.validate(text)
    edited = schedlab.api.edit_spec(text, lambda s: s["tasks"]["a"].update(run=5))
    assert json.loads(edited)["tasks"]["a"] == {"sleep": 2, "run": 5}
    with pytest.raises(schedlab.SpecError):
        schedlab.api.spec_view("[1, 2]")


def test_core_errors_name_the_users_file_not_the_staged_one(tmp_path: Path) -> None:
    """The core writes outputs under temporary names; an error it reports about one (it
    can only name what it was given) reaches the user with the file they asked for."""
    from schedlab.cli import Outputs

    outs = Outputs()
    final = tmp_path / "run.trace"
    tmp = outs.stage(final)
    assert tmp != final and tmp.parent == final.parent
    assert outs.name_files(f"--trace {tmp}: Permission denied") == \
        f"--trace {final}: Permission denied"
    outs.discard()
    assert not tmp.exists()

"""`schedlab reproduce` publishes a report whole or not at all: interrupted (SIGINT,
SIGTERM) or failing to write a file, it leaves the destination as it was — absent, or an
earlier report byte for byte — removes what it built, and says so with a non-zero exit."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import cli_command

# A report of one small section, run through the CLI with the real engine. MODE "wait"
# writes READY once its spec, run and figure are written, then waits to be interrupted;
# "swallow" catches a failed figure write the way a careless section might.
SCRIPT = textwrap.dedent("""
    import pathlib, sys, time
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import schedlab.seeds
    from schedlab.report import Markup
    from schedlab.report.context import RunRequest, SectionOutput

    out, mode, ready, loops = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

    def section(ctx):
        text = ctx.generate("hackbench", groups=1, loops=loops)
        runs = ctx.run([RunRequest(f"hackbench-{loops}", text, "fp")], "hackbench")
        fig = plt.figure()
        fig.gca().plot(range(500), [i * loops % 17 for i in range(500)])
        try:
            ctx.save_figure(fig, "figure", "a figure")
        except Exception:
            if mode != "swallow":
                raise
        if mode == "wait":
            pathlib.Path(ready).write_text("ready")
            time.sleep(120)
        return SectionOutput("one", "One section",
                             Markup(f"<p>{runs[0].result.run['events']} events</p>"))

    schedlab.seeds.SECTIONS = [section]
    from schedlab.cli import run_cli
    sys.exit(run_cli(["reproduce", "--out", out]))
""")


def start(out: Path, mode: str, loops: int, *, fsize: int | None = None,
          ready: Path | None = None) -> subprocess.Popen[str]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(out), mode, str(ready or out.parent / "ready"),
         str(loops)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=limit)


def finish(p: subprocess.Popen[str]) -> tuple[int, str, str]:
    stdout, stderr = p.communicate(timeout=120)
    return p.returncode, stdout, stderr


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file()}


def leftovers(parent: Path, out: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(f".{out.name}.")]


def error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture()
def earlier_report(tmp_path: Path) -> Path:
    out = tmp_path / "report"
    code, stdout, stderr = finish(start(out, "done", 2))
    assert code == 0, stderr
    assert (out / "index.html").exists() and (out / "specs" / "hackbench-2.json").exists()
    assert (out / "plots" / "figure.png").exists()
    return out


def interrupt_when_ready(p: subprocess.Popen[str], ready: Path, sig: int) -> None:
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    p.send_signal(sig)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_report_leaves_nothing(tmp_path: Path, sig: int, code: int,
                                             word: str) -> None:
    out, ready = tmp_path / "report", tmp_path / "ready"
    p = start(out, "wait", 2, ready=ready)
    interrupt_when_ready(p, ready, sig)
    rc, _, stderr = finish(p)
    assert rc == code
    assert word in error_line(stderr)
    assert not out.exists()
    assert leftovers(tmp_path, out) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_keeps_the_earlier_report(earlier_report: Path, sig: int) -> None:
    before = snapshot(earlier_report)
    ready = earlier_report.parent / "ready"
    p = start(earlier_report, "wait", 3, ready=ready)  # other specs, other numbers
    interrupt_when_ready(p, ready, sig)
    rc, _, _ = finish(p)
    assert rc in (130, 143)
    assert snapshot(earlier_report) == before
    assert leftovers(earlier_report.parent, earlier_report) == []


@pytest.mark.parametrize("mode, fsize, failing", [
    ("done", 4_000, "specs/hackbench-3.json"),  # the spec (~11 KB) is cut mid-JSON
    ("done", 40_000, "plots/figure.png"),  # the spec passes, the PNG (~80 KB) does not
    ("swallow", 40_000, "plots/figure.png"),  # even when the section catches the error
])
def test_a_failed_write_fails_and_keeps_the_earlier_report(
        earlier_report: Path, mode: str, fsize: int, failing: str) -> None:
    """A file of the report cannot be written (EFBIG under a file-size limit, as on a
    full disk): the command fails naming the file, and the earlier report stays."""
    before = snapshot(earlier_report)
    rc, stdout, stderr = finish(start(earlier_report, mode, 3, fsize=fsize))
    assert rc == 1, stderr
    line = error_line(stderr)
    assert f"{earlier_report / failing}: File too large" in line
    assert "partial" not in line
    assert "report written" not in stdout
    assert snapshot(earlier_report) == before
    assert leftovers(earlier_report.parent, earlier_report) == []


def test_a_complete_report_replaces_the_earlier_one(earlier_report: Path) -> None:
    rc, stdout, stderr = finish(start(earlier_report, "done", 3))
    assert rc == 0, stderr
    assert sorted(p.name for p in (earlier_report / "specs").iterdir()) == [
        "hackbench-3.json", "manifest.json"]  # nothing of the earlier report lingers
    assert leftovers(earlier_report.parent, earlier_report) == []


def test_a_directory_that_is_not_a_report_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    rc, _, stderr = finish(start(tmp_path, "done", 2))
    assert rc == 2
    assert "notes.txt" in error_line(stderr)
    assert mine.read_text() == "mine"
    assert not (tmp_path / "index.html").exists()


def test_reproduce_quick_terminated_midway_leaves_nothing(tmp_path: Path) -> None:
    """The real report, stopped once it has started writing."""
    out = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_DEBUG"}
    p = subprocess.Popen([*cli_command(), "reproduce", "--quick", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not any((d / "specs").exists() for d in tmp_path.glob(".report.partial-*")):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, stderr = p.communicate(timeout=120)
    assert p.returncode == 143, stderr
    assert not out.exists()
    assert leftovers(tmp_path, out) == []

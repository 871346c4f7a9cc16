"""Seed 004 on this host (``schedlab reproduce --host``): only ``--host`` runs it; it is
skipped with the reason when not root; as root with loop devices it runs every case on
loop devices and leaves nothing behind. And the I/O line ``schedlab run`` and ``schedlab
host run`` print."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import CliRunner
from schedlab import seeds
from schedlab.report.context import Context
from schedlab.seeds import host004


def test_a_plain_reproduce_never_runs_the_host_section() -> None:
    assert host004.section not in seeds.SECTIONS
    assert host004.section in seeds.HOST_SECTIONS


def test_the_section_is_skipped_with_the_reason_when_not_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    out = host004.section(Context(True, tmp_path))
    assert "Not run on this machine: not root" in out.html
    assert not (tmp_path / "host").exists()


def test_the_spec_asks_what_the_seed_asks() -> None:
    spec = json.loads(host004.spec_text("mq-deadline", {"class": "idle"}, 1 << 20))
    assert spec["schedlab"]["devices"]["disk"]["scheduler"] == "mq-deadline"
    db = spec["tasks"]["db"]["schedlab:io"]
    assert (db["bytes"], db["offset"], db["depth"]) == (4096, "random", 4)
    maint = spec["tasks"]["maint"]
    assert maint["schedlab:ioprio"] == {"class": "idle"}
    assert (maint["schedlab:io"]["bytes"], maint["schedlab:io"]["offset"],
            maint["schedlab:io"]["depth"]) == (1 << 20, "seq", 16)
    assert "maint" not in json.loads(host004.spec_text("none", None, 1 << 20))["tasks"]


def _loop_state() -> tuple[str, list[str]]:
    bound = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    scheds = sorted(p.read_text() for p in Path("/sys/block").glob("loop*/queue/scheduler"))
    return bound, scheds


@pytest.mark.skipif(host004.why_not_here() != "", reason=host004.why_not_here() or "runs")
def test_every_case_runs_on_loop_devices_and_nothing_is_left_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDLAB_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setattr(host004, "sizes", lambda quick: host004.Sizes(
        runs=3, seconds=0.3, file_bytes=8 << 20, fio_size=4 << 20))
    before = _loop_state()
    out = host004.section(Context(True, tmp_path / "report"))
    assert _loop_state() == before
    assert not list(Path("/var/tmp").glob(f"schedlab-{os.getpid()}-*"))
    assert (tmp_path / "journal.jsonl").read_text() == ""
    offered = Path("/sys/block/loop0/queue/scheduler").read_text()
    runs = sorted((tmp_path / "report" / "host").glob("host004-*-*-*.json"))
    for sched in host004.SCHEDULERS:
        ran = [r for r in runs if r.name.startswith(f"host004-{sched}-")]
        if sched in offered:
            # Three cases, three runs each, every one host-labelled with its kernel facts.
            assert len(ran) == 9, sched
            r = json.loads(ran[0].read_text())
            assert r["run"]["engine"] == "host" and r["run"]["host"]["release"]
        else:
            assert not ran
            assert f"{sched} is not an I/O scheduler of this kernel" in out.html
    assert "Kernel facts of these runs" in out.html
    check = json.loads((tmp_path / "report" / "host" / "host004-fio-check.json").read_text())
    assert "skipped" in check or len(check["host"]) == len(check["fio"]) == 3


def test_run_prints_the_io_summary_in_fios_words(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "fio.json"
    p = cli("gen", "fio", "--rw", "randread", "--iodepth", "4", "--direct", "1",
            "--size", "4194304")
    spec.write_text(p.stdout)
    p = cli("run", str(spec), "-s", "linux-cfs")
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("io: "))
    # 4 MiB in 4 KiB reads: 1,024 I/Os, no writes.
    assert line.startswith("io: read 1,024 ios, ") and "write" not in line
    assert "clat p50" in line

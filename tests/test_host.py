"""`schedlab host doctor` and `schedlab host restore` through the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import CliRunner


def test_doctor_reports_kernel_facts_and_checks(cli: CliRunner) -> None:
    p = cli("host", "doctor", "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    kernel = report["kernel"]
    assert kernel["release"] == os.uname().release
    assert kernel["cpus"] >= 1
    assert kernel["preempt"] in (None, "none", "voluntary", "full", "lazy", "rt")
    checks = {(c["area"], c["name"]): c for c in report["checks"]}
    # SCHED_OTHER is allowed to everyone; a refusal would be a broken probe.
    assert checks[("policy", "SCHED_OTHER")]["ok"]
    assert checks[("privileges", "root")]["ok"] == (os.geteuid() == 0)
    for c in report["checks"]:
        assert c["detail"], c


def test_doctor_prints_its_tables(cli: CliRunner) -> None:
    p = cli("host", "doctor")
    assert p.returncode == 0, p.stderr
    assert "Kernel facts" in p.stdout and "SCHED_FIFO" in p.stdout


def _entry(path: Path, old: str) -> str:
    return json.dumps({"op": "write", "path": str(path), "old": old, "format": "plain"})


def test_restore_puts_back_what_the_journal_records(cli: CliRunner, tmp_path: Path) -> None:
    setting = tmp_path / "sched_rt_runtime_us"
    setting.write_text("-1")
    group = tmp_path / "cg"
    group.mkdir()
    journal = tmp_path / "journal.jsonl"
    journal.write_text(_entry(setting, "950000") + "\n"
                       + json.dumps({"op": "mkdir", "path": str(group)}) + "\n")
    p = cli("host", "restore", "--journal", str(journal))
    assert p.returncode == 0, p.stderr
    assert setting.read_text() == "950000"
    assert not group.exists()
    assert journal.read_text() == ""
    assert f"removed {group}" in p.stdout and "950000" in p.stdout
    again = cli("host", "restore", "--journal", str(journal))
    assert again.returncode == 0 and "nothing to restore" in again.stdout


def test_restore_keeps_what_it_cannot_undo(cli: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "cpu.rt_runtime_us"
    journal = tmp_path / "journal.jsonl"
    journal.write_text(_entry(missing, "0") + "\n")
    p = cli("host", "restore", "--journal", str(journal))
    assert p.returncode == 1
    assert "could not restore" in p.stderr and "1 change(s) left" in p.stderr
    assert json.loads(journal.read_text())["path"] == str(missing)


def test_restore_refuses_a_file_that_is_not_a_journal(cli: CliRunner, tmp_path: Path) -> None:
    journal = tmp_path / "notes.txt"
    journal.write_text("hello\nworld\n")
    p = cli("host", "restore", "--journal", str(journal))
    assert p.returncode == 2
    assert "line 1 is not a schedlab journal entry" in p.stderr
    assert journal.read_text() == "hello\nworld\n"


def test_host_run_reports_the_simulators_schema(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "two.json"
    spec.write_text(json.dumps({"tasks": {
        "a": {"loop": 5, "run": 200, "sleep": 1000},
        "b": {"loop": 5, "run": 200, "sleep": 1000},
    }}))
    p = cli("host", "run", str(spec), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["schema"] == "schedlab.result/1"
    assert r["run"]["engine"] == "host"
    assert r["run"]["host"]["release"] == os.uname().release
    assert [t["name"] for t in r["tasks"]] == ["a", "b"]
    for t in r["tasks"]:
        assert t["activations"] == 5  # one per sleep
        assert t["cpu_ns"] >= 5 * 200_000  # each run consumed its CPU time
    assert r["summary"]["makespan_ns"] is not None
    table = cli("host", "run", str(spec))
    assert table.returncode == 0 and " ran " in table.stdout


def test_host_run_refuses_what_it_does_not_do(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "io.json"
    spec.write_text(json.dumps({
        "schedlab": {"devices": {"d": {"model": "ssd"}},
                     "files": {"f": {"dev": "d", "bytes": 4096}}},
        "tasks": {"db": {"loop": 1, "schedlab:unlink": {"file": "f"}}},
    }))
    p = cli("host", "run", str(spec))
    assert p.returncode == 2
    assert "$.tasks.db" in p.stderr and "schedlab:unlink" in p.stderr
    forever = tmp_path / "forever.json"
    forever.write_text(json.dumps({"tasks": {"hog": {"loop": -1, "run": 1000}}}))
    p = cli("host", "run", str(forever))
    assert p.returncode == 2 and "for ever" in p.stderr


def test_compare_host_sets_the_simulation_beside_the_host(cli: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"tasks": {"a": {"loop": 4, "run": 500, "sleep": 2000}}}))
    p = cli("compare", str(spec), "--host", "--json")
    assert p.returncode == 0, p.stderr
    both = json.loads(p.stdout)
    assert both["sim"]["run"]["engine"] == "sim" and both["host"]["run"]["engine"] == "host"
    model = both["host"]["run"]["host"]["model_scheduler"]
    assert both["sim"]["run"]["scheduler"] == model
    assert both["sim"]["run"]["cpus"] == both["host"]["run"]["cpus"]
    for r in (both["sim"], both["host"]):
        assert r["tasks"][0]["activations"] == 4
    table = cli("compare", str(spec), "--host")
    assert table.returncode == 0 and "host / simulated" in table.stdout
    two = cli("compare", str(spec), "--host", "-s", "linux-cfs,fp")
    assert two.returncode == 2 and "one simulated scheduler" in two.stderr

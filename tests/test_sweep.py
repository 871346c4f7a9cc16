"""Sweeps (docs/sweeps.md): descriptions and their errors (through the CLI: one line naming
the place in the file, exit 2), expansion and resume keys, runs on threads into a
dataset, failed runs recorded, the analysis helpers and plots. The Dask backend is in
test_sweep_dask.py, crash and resume in test_sweep_resume.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

import schedlab
from schedlab import sweep as sw
from schedlab.sweep import analysis
from schedlab.sweep import plots as sweep_plots

# A tiny hackbench (one group, a few loops: a few thousand events a run).
GRID: dict[str, Any] = {
    "name": "tiny",
    "base": {"generator": "hackbench", "options": {"groups": 1, "fds": 2}},
    "axes": {
        "scheduler": ["linux-cfs", "fp", "example-fifo"],
        "options.loops": [2, 4],
        "seed": {"from": 1, "count": 2},
    },
    "filters": [{"exclude": {"scheduler": "fp", "options.loops": 4}}],
}


def write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def comparable(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop([c for c in sw.TIMING_COLUMNS if c in df.columns]).sort("key")


# --- descriptions and expansion ----------------------------------------------------------


def test_a_grid_expands_to_its_product_less_the_filtered() -> None:
    points = sw.plan(sw.from_mapping(GRID))
    assert len(points) == 3 * 2 * 2 - 2
    assert not any(p.axes["scheduler"] == "fp" and p.axes["options.loops"] == 4
                   for p in points)
    assert len({p.key for p in points}) == len(points)
    # the key is the run's identity: the same run from another description has the same key
    again = sw.plan(sw.from_mapping({**GRID, "name": "other",
                                     "axes": {**GRID["axes"], "seed": [2, 1]}}))
    assert {p.key for p in again} == {p.key for p in points}


def test_the_key_is_spec_hash_scheduler_sorted_params_seed_overrides() -> None:
    p = sw.plan(sw.from_mapping({
        "base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2},
                 "params": {"sched_min_granularity_ns": 750000}},
        "axes": {"scheduler": ["linux-cfs"], "params.sched_latency_ns": [6000000],
                 "cpus": [2], "seed": [7]}}))[0]
    assert p.key == sw.run_key(
        p.spec_sha256, "linux-cfs",
        [("sched_min_granularity_ns", "750000"), ("sched_latency_ns", "6000000")],
        7, {"cpus": 2})
    assert p.spec_sha256 == schedlab._core.spec_sha256(p.job.spec.text)


def test_union_of_grids_gives_tunables_to_their_scheduler_only() -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": [{"scheduler": ["linux-cfs"], "params.sched_latency_ns": [3000000, 6000000]},
                    {"scheduler": ["fp"]}]}
    points = sw.plan(sw.from_mapping(doc))
    assert [(p.axes["scheduler"], p.axes["params.sched_latency_ns"]) for p in points] == [
        ("linux-cfs", 3000000), ("linux-cfs", 6000000), ("fp", None)]


def test_machine_axes_edit_the_spec() -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["linux-cfs"], "machine.kernel.preempt": ["none", "full"]}}
    points = sw.plan(sw.from_mapping(doc))
    views = [schedlab.api.spec_view(p.job.spec.text) for p in points]
    assert [v["schedlab"]["machine"]["kernel"]["preempt"] for v in views] == ["none", "full"]
    assert points[0].spec_sha256 != points[1].spec_sha256


BAD: list[tuple[dict[str, Any], str]] = [
    ({"axes": {"scheduler": ["linux-cfs", "fp", "foo"]}},
     "axes.scheduler[2]: unknown scheduler 'foo'"),
    ({"axes": {"scheduler": ["fp"], "params.sched_latency_ns": [1]}},
     "axes.params.sched_latency_ns: 'sched_latency_ns' is not a tunable of 'fp'"),
    ({"axes": {"options.nope": [1]}}, "axes.options.nope: generator 'hackbench' has no "
                                      "option 'nope'"),
    ({"axes": {"options.groups": [1, 0]}}, "axes.options.groups[1]: "),
    ({"axes": {"seed": [1, -1]}}, "axes.seed[1]: expected an integer in 0.."),
    ({"axes": {"duration": ["1s", "fast"]}}, "axes.duration[1]: invalid duration 'fast'"),
    ({"axes": {"colour": ["red"]}}, "axes.colour: unknown axis"),
    ({"axes": {"scheduler": []}}, "axes.scheduler: expected a non-empty list"),
    ({"axes": {"scheduler": ["fp"]}, "filters": [{"exclude": {"cpus": 2}}]},
     "filters[0].exclude.cpus: not an axis of this sweep"),
    ({"axes": {"scheduler": ["fp"]}, "metrics": ["makespan"]},
     "metrics[0]: 'makespan' is not a result path"),
    ({"axes": {"machine.cpus": [2, 0]}, "base": {"generator": "hackbench",
                                                 "scheduler": "fp"}},
     "axes.machine.cpus[1]: $.schedlab.machine.cpus"),
    ({"axes": {"scheduler": ["fp"]}, "colour": 1}, "colour: unknown key"),
    ({"axes": {"scheduler": ["fp"]}, "base": {"spec": "missing.json"}},
     "base.spec: cannot read "),
    ({"axes": {"scheduler": ["fp"]}, "base": {"generator": "nope"}},
     "base.generator: unknown generator 'nope'"),
    ({"axes": {"spec": ["a"]}}, "axes.spec: the spec axis chooses among base.specs"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_description_is_one_line_naming_its_place(cli: Any, tmp_path: Path,
                                                        change: dict[str, Any],
                                                        message: str) -> None:
    doc = {"name": "bad", "base": {"generator": "hackbench",
                                   "options": {"groups": 1, "loops": 2}}, **change}
    f = write(tmp_path / "bad.yaml", doc)
    r = cli("sweep", f, "--out", tmp_path / "out", "--threads")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {f}: "), r.stderr
    assert message in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_missing_description_is_one_line(cli: Any, tmp_path: Path) -> None:
    r = cli("sweep", tmp_path / "none.yaml", "--threads")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "none.yaml" in r.stderr


def test_a_file_that_is_not_yaml_names_its_line(cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "broken.yaml"
    f.write_text("name: x\naxes: {scheduler: [fp\n", encoding="utf-8")
    r = cli("sweep", f, "--threads")
    assert r.returncode == 2 and r.stderr.startswith(f"error: {f}: {f}: line "), r.stderr


# --- running -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> sw.SweepRun:
    out = tmp_path_factory.mktemp("tiny") / "data"
    return sw.run(GRID, out, threads=True, workers=2, progress=False)


def test_each_run_is_a_row_with_its_axes_identity_and_metrics(tiny: sw.SweepRun) -> None:
    df = tiny.rows()
    assert tiny.ran == tiny.total == len(df) == 10 and tiny.failed == 0
    assert df["key"].to_list() == tiny.keys
    assert set(df["status"]) == {"ok"}
    for row in df.iter_rows(named=True):
        spec = (tiny.out / row["spec_file"]).read_text(encoding="utf-8")
        assert schedlab._core.spec_sha256(spec) == row["spec_sha256"]
        # the row's metrics are the core's numbers for that run
        r = schedlab.simulate(spec, row["scheduler"], seed=row["seed"], samples=False)
        assert row["summary.headline.value"] == r.headline["value"]
        assert row["run.events"] == r.run["events"]
        assert row["summary.totals.switches"] == r.totals["switches"]
        assert row["summary.wakeup_latency_ns.p99"] == r.summary["wakeup_latency_ns"]["p99"]
        assert json.loads(row["params"]) == {}
    assert not list(tiny.out.rglob("*.tmp"))


def test_a_sweep_run_again_runs_nothing(tiny: sw.SweepRun) -> None:
    before = comparable(sw.read(tiny.out))
    again = sw.run(GRID, tiny.out, threads=True, progress=False)
    assert (again.ran, again.skipped) == (0, again.total)
    assert comparable(sw.read(tiny.out)).equals(before)


def test_threads_give_the_same_rows_whatever_their_number(tiny: sw.SweepRun,
                                                          tmp_path: Path) -> None:
    one = sw.run(GRID, tmp_path / "one", threads=True, workers=1, progress=False)
    assert comparable(one.rows()).equals(comparable(tiny.rows()))


def test_a_failed_run_is_a_row_with_its_error_and_the_sweep_goes_on(tmp_path: Path) -> None:
    doc = {"name": "failing",
           "base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["linux-cfs"], "params.sched_latency_ns": [6000000, "x"],
                    "seed": [1, 2]}}
    r = sw.run(doc, tmp_path / "d", threads=True, progress=False)
    df = r.rows()
    assert (r.ran, r.failed) == (4, 2)
    bad = df.filter(pl.col("params.sched_latency_ns") == "x")
    good = df.filter(pl.col("params.sched_latency_ns") == "6000000")
    assert set(bad["status"]) == {"failed"} and set(good["status"]) == {"ok"}
    assert all("sched_latency_ns" in e for e in bad["error"])
    assert bad["summary.headline.value"].null_count() == 2
    assert good["summary.headline.value"].null_count() == 0
    # a failed run is finished: not rerun, unless asked
    assert sw.run(doc, tmp_path / "d", threads=True, progress=False).ran == 0
    retried = sw.run(doc, tmp_path / "d", threads=True, progress=False, retry_failed=True)
    assert (retried.ran, retried.failed) == (2, 2)
    assert len(sw.read(tmp_path / "d")) == 4


def test_samples_and_traces_are_files_the_row_points_to(tmp_path: Path) -> None:
    doc = {"name": "kept", "samples": True, "trace": True,
           "base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["fp"]}}
    r = sw.run(doc, tmp_path / "d", threads=True, progress=False)
    row = r.rows().row(0, named=True)
    samples = pl.read_ipc(tmp_path / "d" / row["samples_file"])
    direct = schedlab.simulate((tmp_path / "d" / row["spec_file"]), "fp")
    assert samples.equals(direct.samples)
    trace = (tmp_path / "d" / row["trace_file"]).read_text(encoding="utf-8")
    assert "sched_switch" in trace


def test_per_task_metrics_are_json_by_task(tmp_path: Path) -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["fp"]}, "metrics": ["tasks.cpu_ns", "summary.makespan_ns"]}
    row = sw.run(doc, tmp_path / "d", threads=True, progress=False).rows().row(0, named=True)
    r = schedlab.simulate(tmp_path / "d" / row["spec_file"], "fp", samples=False)
    assert json.loads(row["tasks.cpu_ns"]) == {t["name"]: t["cpu_ns"] for t in r.json["tasks"]}
    assert row["summary.makespan_ns"] == r.makespan_ns


def test_the_python_api_is_schedlab_sweep(tmp_path: Path) -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["fp", "example-fifo"]}}
    r = schedlab.sweep(doc, tmp_path / "d", threads=True, progress=False)
    assert r.ran == 2 and len(r.rows()) == 2


def test_a_dataset_is_written_by_one_sweep_at_a_time(tmp_path: Path) -> None:
    from schedlab.sweep.store import Store

    with Store(tmp_path / "d"), pytest.raises(sw.DatasetBusy, match="another sweep"):
        sw.run(GRID, tmp_path / "d", threads=True, progress=False)


def test_the_cli_runs_a_sweep_and_reports_it(cli: Any, tmp_path: Path) -> None:
    f = write(tmp_path / "grid.yaml", GRID)
    r = cli("sweep", f, "--dry-run", cwd=tmp_path)
    assert r.returncode == 0 and "10 runs, 0 in sweeps/tiny, 10 to run" in r.stdout, r.stderr
    r = cli("sweep", f, "--threads", "-j", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sweep tiny: 10 runs, 0 already in sweeps/tiny, 10 run now" in r.stdout
    assert len(sw.read(tmp_path / "sweeps" / "tiny")) == 10


# --- analysis ----------------------------------------------------------------------------


def test_metric_by_pools_the_seeds_with_a_t_interval() -> None:
    df = pl.DataFrame({
        "status": ["ok"] * 5 + ["failed"], "scheduler": ["a", "a", "a", "b", "b", "b"],
        "seed": [1, 2, 3, 1, 2, 3], "m": [1.0, 2.0, 3.0, 5.0, 5.0, None]})
    out = analysis.metric_by(df, "m", ["scheduler"]).rows(named=True)
    a, b = out
    assert (a["n"], a["failed"], a["mean"], a["std"]) == (3, 0, 2.0, 1.0)
    # t(0.975, 2) = 4.302652729749464
    assert a["ci_high"] - a["mean"] == pytest.approx(4.302652729749464 / 3 ** 0.5)
    assert (b["n"], b["failed"], b["mean"]) == (2, 1, 5.0)
    assert b["ci_low"] == b["ci_high"] == 5.0


def test_best_per_workload_reports_ties() -> None:
    df = pl.DataFrame({
        "status": ["ok"] * 8, "w": ["x"] * 4 + ["y"] * 4,
        "scheduler": ["a", "a", "b", "b"] * 2, "seed": [1, 2] * 4,
        "m": [1.0, 3.0, 2.0, 2.0, 5.0, 5.0, 4.0, 4.0]})
    out = analysis.best(df, "m", ["w"], ["scheduler"]).rows(named=True)
    assert [(r["w"], r["tied"]) for r in out] == [("x", 2), ("y", 1)]
    assert out[1]["scheduler"] == "b"


def test_compare_pairs_runs_and_counts_strict_wins() -> None:
    seeds = list(range(1, 9))
    a = [10.0 + s for s in seeds]
    b = [x - 1.0 - 0.1 * s for x, s in zip(a, seeds, strict=True)]
    b[0] = a[0]  # a tie
    df = pl.DataFrame({"status": ["ok"] * 16, "scheduler": ["a"] * 8 + ["b"] * 8,
                       "seed": seeds * 2, "m": a + b})
    c = analysis.compare(df, "m", "scheduler", "a", "b")
    assert (c.n, c.wins_b, c.wins_a, c.ties, c.unpaired) == (8, 7, 0, 1, 0)
    assert c.diff is not None and c.diff < 0 and c.ci_high is not None and c.ci_high < 0
    assert c.significant()
    same = analysis.compare(df.with_columns(pl.lit(1.0).alias("m")), "m", "scheduler", "a", "b")
    assert (same.ties, same.p_ttest, same.p_wilcoxon, same.significant()) == (8, 1.0, 1.0,
                                                                               False)


def test_plots_draw_the_sweep(tiny: sw.SweepRun, tmp_path: Path) -> None:
    from schedlab import plots

    df = tiny.rows()
    heat = sweep_plots.heatmap(df, "summary.headline.value", "options.loops", "scheduler")
    line = sweep_plots.lines(df, "summary.headline.value", "options.loops", hue="scheduler")
    assert len(line.axes[0].lines) == 3
    assert len(heat.axes[0].texts) == 5  # fp has no 4-loop cell
    for fig, stem in ((heat, "heat"), (line, "lines")):
        paths = plots.save(fig, tmp_path, stem)
        assert all(p.stat().st_size > 0 for p in paths)


def test_a_sweep_built_in_python_gets_the_files_checks(tmp_path: Path) -> None:
    bad = sw.Sweep(name="py", base={"generator": "hackbench"}, grids=[{"colour": ["red"]}])
    with pytest.raises(sw.SweepError, match=r"^axes\.colour: unknown axis"):
        sw.run(bad, tmp_path / "d", threads=True, progress=False)
    good = sw.Sweep(name="py", base={"generator": "hackbench",
                                     "options": {"groups": 1, "loops": 2}},
                    grids=[{"scheduler": ["fp"]}], metrics=("summary.makespan_ns",))
    row = sw.run(good, tmp_path / "d", threads=True, progress=False).rows().row(0, named=True)
    assert row["status"] == "ok" and row["summary.makespan_ns"] > 0


def test_reproduce_from_results_needs_a_directory(cli: Any, tmp_path: Path) -> None:
    r = cli("reproduce", "--quick", "--from-results", tmp_path / "none", "--out", tmp_path / "o")
    assert r.returncode == 2 and "--from-results" in r.stderr
    assert not (tmp_path / "o").exists()


def test_the_cli_prints_a_metric_by_axes_and_plots_it(cli: Any, tmp_path: Path) -> None:
    f = write(tmp_path / "grid.yaml", GRID)
    out = tmp_path / "d"
    r = cli("sweep", f, "--out", out, "--threads", "--table", "summary.headline.value",
            "--by", "scheduler,options.loops", "--plot", tmp_path / "plots")
    assert r.returncode == 0, r.stderr
    stats = analysis.metric_by(sw.read(out), "summary.headline.value",
                               ["scheduler", "options.loops"])
    for row in stats.iter_rows(named=True):
        assert f"{row['mean']:.6g}" in r.stdout
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "summary_headline_value-by-options.loops.png",
        "summary_headline_value-by-options.loops.svg",
        "summary_headline_value-scheduler-options.loops.png",
        "summary_headline_value-scheduler-options.loops.svg"]
    bad = cli("sweep", f, "--out", out, "--threads", "--table", "makespan")
    assert bad.returncode == 2 and "--table: the sweep's rows have no column 'makespan'" \
        in bad.stderr


def test_the_example_sweep_is_a_valid_description() -> None:
    from conftest import ROOT

    desc = sw.load(ROOT / "examples" / "sweeps" / "hackbench.yaml")
    points = sw.plan(desc)
    # 3 policies (bfs without 4 CPUs) and linux-cfs with 2 latencies, 3 group counts, 10 seeds
    assert len(points) == (3 * 3 - 1) * 3 * 10 + 2 * 3 * 3 * 10


def test_keeping_samples_is_another_run() -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["fp"]}}
    plain = sw.plan(sw.from_mapping(doc))[0]
    kept = sw.plan(sw.from_mapping({**doc, "samples": True}))[0]
    assert kept.key != plain.key
    assert kept.key == sw.run_key(kept.spec_sha256, "fp", [], None, {"samples": 1})


def test_a_run_stopped_by_its_memory_budget_is_kept_apart(tmp_path: Path) -> None:
    doc = {"base": {"generator": "hackbench", "options": {"groups": 1, "loops": 2}},
           "axes": {"scheduler": ["fp"]}, "memory_budget": 20000}
    r = sw.run(doc, tmp_path / "d", threads=True, progress=False)
    row = r.rows().row(0, named=True)
    assert row["status"] == "stopped" and "memory budget" in row["error"]
    assert row["run.stopped"] == row["error"]
    assert analysis.metric_by(r.rows(), "run.events", ["scheduler"]).row(0, named=True)[
        "failed"] == 1


def test_io_scheduler_sets_every_device_and_needs_one(tmp_path: Path) -> None:
    doc = {"base": {"generator": "fio"},
           "axes": {"scheduler": ["fp"], "io_scheduler": ["none", "mq-deadline"]}}
    points = sw.plan(sw.from_mapping(doc))
    views = [schedlab.api.spec_view(p.job.spec.text)["schedlab"]["devices"] for p in points]
    assert [{d["scheduler"] for d in v.values()} for v in views] == [{"none"}, {"mq-deadline"}]
    with pytest.raises(sw.SweepError, match=r"^axes\.io_scheduler\[0\]: the spec has no block"):
        sw.plan(sw.from_mapping({**doc, "base": {"generator": "hackbench"}}))


def test_the_cli_compares_two_values_of_an_axis(cli: Any, tmp_path: Path) -> None:
    f = write(tmp_path / "grid.yaml", GRID)
    out = tmp_path / "d"
    r = cli("sweep", f, "--out", out, "--threads", "--table", "summary.headline.value",
            "--compare", "options.loops=2,4")
    assert r.returncode == 0, r.stderr
    c = analysis.compare(sw.read(out), "summary.headline.value", "options.loops", 2, 4)
    assert c.n == 4 and c.unpaired == 2  # fp has no 4-loop runs
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("summary.headline.value, options.loops = 4 against 2: 4 paired "
                           "runs (2 unpaired)")
    assert f"mean {c.mean_b:.6g} against {c.mean_a:.6g}" in line
    assert f"lower in {c.wins_b} for 4, {c.wins_a} for 2, {c.ties} ties" in line
    bad = cli("sweep", f, "--out", out, "--threads", "--table", "summary.headline.value",
              "--compare", "scheduler=foo,fp")
    assert bad.returncode == 2 and "--compare: no run has scheduler = 'foo'" in bad.stderr
    assert cli("sweep", f, "--compare", "scheduler=a,b").returncode == 2


def test_a_spec_path_axis_edits_an_inline_spec(tmp_path: Path) -> None:
    from conftest import FINITE_SPEC

    doc = {"base": {"spec": FINITE_SPEC, "scheduler": "linux-cfs"},
           "axes": {"spec.tasks.worker.loop": [5, 10]}}
    r = sw.run(doc, tmp_path / "d", threads=True, progress=False)
    rows = r.rows().sort("spec.tasks.worker.loop")
    texts = [(tmp_path / "d" / f).read_text(encoding="utf-8") for f in rows["spec_file"]]
    assert [schedlab.api.spec_view(t)["tasks"]["worker"]["loop"] for t in texts] == [5, 10]
    events = rows["run.events"].to_list()
    assert events[0] < events[1]
    assert events == [schedlab.simulate(t, "linux-cfs", samples=False).run["events"]
                      for t in texts]


def test_a_json_description_is_read_as_json(cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "grid.json"
    f.write_text(json.dumps(GRID), encoding="utf-8")
    assert len(sw.plan(sw.load(f))) == 10
    f.write_text('{"name": "x",\n "axes": }', encoding="utf-8")
    r = cli("sweep", f, "--threads")
    assert r.returncode == 2 and r.stderr.startswith(f"error: {f}: {f}: line 2: "), r.stderr

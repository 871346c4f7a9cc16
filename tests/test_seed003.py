"""Seed 003 (cgroup RT bandwidth on a PandaBoard): the published tables as stored, the
measuring rules pinned to the kernel's and top's arithmetic, the board profile's one
fitted value, and the report section run in quick mode on the real simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab.report import parse_number, parse_tables
from schedlab.report.context import Context
from schedlab.seeds import SECTIONS, builtin_profile, seed003
from schedlab.seeds import seed003_board as board
from schedlab.seeds import seed003_model as m

# --- the published tables ----------------------------------------------------------------


def test_the_data_file_holds_the_seeds_tables() -> None:
    doc = m.DATA["document"]
    assert doc["year"] == 2012 and doc["authors"][0] == "Yumi Teshigawara"
    assert m.DATA["settings"]["table"] == 1 and m.DATA["results"]["table"] == 2
    assert m.SETTINGS[1].period_us == 1_000_000
    assert dict(m.SETTINGS[1].runtime_us) == {"cg0": 425_000, "cg1": 425_000, "cgA": 100_000}
    assert m.SETTINGS[6].period_us == 10_000 and m.SETTINGS[6].runtime_us["cgA"] == 9_000
    assert m.SETTINGS[8].runtime_us["cg0"] == 25
    assert m.PUBLISHED[1].c == 15.2 and dict(m.PUBLISHED[1].t) == {"cg0": 84, "cg1": 82,
                                                                   "cgA": 19}
    assert m.PUBLISHED[3].t["cg1"] == 19 and m.PUBLISHED[8].c == 98.8
    assert [p.c for p in m.PUBLISHED.values()] == [15.2, 58.3, 81.7, 100.0, 100.0, 99.8,
                                                   99.4, 98.8]
    assert m.GROUP_CPU == {"cg0": 0, "cg1": 1, "cgA": 1}


def test_every_setting_gives_the_children_the_parents_ratio() -> None:
    # why cg is taken as 950000 µs per 1 s: the children add up to 0.95 everywhere
    for s in m.SETTINGS.values():
        assert sum(s.runtime_us.values()) * m.PARENT_PERIOD_US == \
            m.PARENT_RUNTIME_US * s.period_us, s.no


def test_facts_are_marked_as_facts_not_published_figures() -> None:
    facts = m.DATA["facts"]
    assert facts["modern_kernel_measured"]["how"] == "measured"
    assert facts["modern_kernel_measured"]["rows"]["1"] == [42.47, 42.49, 10.01]
    assert facts["borrowing_2_6_35"]["how"] == "source"


# --- the measuring rules -----------------------------------------------------------------


def test_clock_ticks_follow_jiffies_then_user_hz_rounding_down() -> None:
    # one jiffy at HZ 128 is 7 812 500 ns; 1 s of CPU time is 128 jiffies = 100 ticks
    assert m.clock_ticks(7_812_499) == 0
    assert m.clock_ticks(7_812_500) == 0  # 0.78 of a clock tick
    assert m.clock_ticks(2 * 7_812_500) == 1
    assert m.clock_ticks(1_000_000_000) == 100
    assert m.clock_ticks(425_000_000) == 42  # 54 jiffies = 42.19 ticks


def test_top_percent_is_tick_growth_over_the_window() -> None:
    three_s = 3_000_000_000
    assert m.top_percent(0, three_s, three_s) == 100.0
    assert m.top_percent(1_000_000_000, 1_000_000_000, three_s) == 0.0
    # 42.5 % of 3 s = 1.275 s: 163 jiffies, 127 clock ticks → 42.33 %
    assert m.top_percent(0, 1_275_000_000, three_s) == pytest.approx(127 / 3)


def test_c_is_the_reference_time_over_the_runs_time() -> None:
    marks = {m.START_MARK: 5_000_000_000, m.DONE_MARK: 15_000_000_000}
    assert m.coremark_seconds(marks) == 10.0
    assert m.coremark_seconds({m.START_MARK: 1}) is None
    assert m.c_percent(12.5, 10.0) == 80.0
    assert m.c_percent(None, 10.0) is None


def test_the_borrowing_cap_is_the_seeds_formula() -> None:
    assert m.borrowing_cap(m.SETTINGS[1], "cg0") == 85.0
    assert m.borrowing_cap(m.SETTINGS[4], "cg0") == 5.0
    assert m.borrowing_cap(m.SETTINGS[3], "cgA") == 100.0  # one core at most


def test_tally_counts_exact_within_one_and_misses() -> None:
    t = m.Tally()
    assert t.add(84.4, 84, 0) == "exact"
    assert t.add(82.6, 82, 0) == "within 1"
    assert t.add(98.8, 98.8, 1) == "exact"
    assert t.add(99.84, 99.8, 1) == "exact"
    assert t.add(12.0, 19, 0) == "miss"
    assert t.add(None, 5, 0) == "no result"
    assert (t.exact, t.within_one, t.misses) == (3, 1, 2)


def test_timeline_bins_split_switches_across_bins() -> None:
    import polars as pl

    trace = pl.DataFrame({
        "event": ["sched_switch"] * 3, "cpu": [1, 1, 1],
        "ts_ns": [0, 30_000_000, 70_000_000],
        "prev_pid": [0, 2, 3], "next_pid": [2, 3, 0]})
    bins = seed003.timeline_bins(trace, 1, 0, 100_000_000, 50_000_000, {2: "cg1", 3: "cgA"})
    assert bins == [{"cg1": 30_000_000, "cgA": 20_000_000},
                    {"cgA": 20_000_000, "idle": 30_000_000}]
    assert all(sum(b.values()) == 50_000_000 for b in bins)


# --- the board profile -------------------------------------------------------------------


def _fitted_paths(prov: dict[str, Any], at: str = "") -> list[str]:
    out: list[str] = []
    for k, v in prov.items():
        if isinstance(v, dict):
            out += [at + k] if v.get("how") == "fitted" else _fitted_paths(v, f"{at}{k}.")
    return out


def test_the_profile_has_one_fitted_value_and_sourced_settings() -> None:
    prof = board.builtin()
    assert prof["machine"]["cpus"] == 2 and prof["machine"]["hz"] == 128
    assert prof["machine"]["kernel"]["preempt"] == "full"
    assert _fitted_paths(prof["provenance"]) == ["kernel.timer_irq_ns"]
    fit = board.fitted_value()
    assert fit["value"] == prof["machine"]["kernel"]["timer_irq_ns"] > 0
    assert fit["target_percent"] == m.PUBLISHED[board.FIT_SETTING].c


def test_the_fitted_cost_reproduces_the_figure_it_was_fitted_to() -> None:
    cost = board.builtin()["machine"]["kernel"]["timer_irq_ns"]
    c = board.simulated_c(cost)
    assert abs(c - board.target()) < 0.05
    assert c == pytest.approx(board.fitted_value()["simulated_percent"], abs=1e-3)


def test_refitting_gives_the_built_in_profile_exactly() -> None:
    fitted = board.fitted_profile()
    assert fitted == board.builtin()
    if board.BUILTIN_FILE.exists():
        text = board.BUILTIN_FILE.read_text(encoding="utf-8")
        assert text == builtin_profile.profile_text(fitted)


def test_the_fit_follows_the_simulation_not_a_constant() -> None:
    # A machine whose expiries take twice as long as the profile says needs half the cost.
    def doubled(text: str, policy: str, params: Any) -> dict[str, int]:
        def twice(spec: dict[str, Any]) -> None:
            k = spec["schedlab"]["machine"]["profile"]["machine"]["kernel"]
            k["timer_irq_ns"] *= 2

        return board._simulate(schedlab.api.edit_spec(text, twice), policy, params)

    real, half = board.fit(), board.fit(doubled)
    assert real.at_zero == half.at_zero
    assert abs(half.cost - real.cost / 2) <= 0.01 * real.cost
    assert abs(half.simulated - board.target()) < 0.05


# --- the section, quick, on the real simulator -------------------------------------------


@pytest.fixture(scope="module")
def quick_section(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("seed003")
    ctx = Context(True, out, jobs=2)
    sec = seed003.section(ctx)
    ctx.write_manifest()
    return out, str(sec.html)


def test_the_section_is_in_the_report() -> None:
    assert seed003.section in SECTIONS


def test_the_section_runs_every_quick_setting_without_errors(quick_section: tuple[Path, str]
                                                             ) -> None:
    out, html = quick_section
    manifest = json.loads((out / "specs" / "manifest.json").read_text())
    runs = manifest["runs"]
    assert runs and all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    tables = parse_tables(html)
    assert [int(r[0]) for r in tables["seed003-t"]] == list(m.QUICK.settings)
    c_rows = {int(r[0]): r for r in tables["seed003-c"]}
    assert c_rows[board.FIT_SETTING][5] == "fitted"
    assert {r[5] for n, r in c_rows.items() if n != board.FIT_SETTING} == {"predicted"}
    assert "Quick mode" in html and "CoreMark runs 3 s" in html


def test_saved_specs_rerun_to_the_same_numbers(quick_section: tuple[Path, str]) -> None:
    out, _ = quick_section
    manifest = json.loads((out / "specs" / "manifest.json").read_text())
    for run in manifest["runs"][:6]:
        o = run["overrides"]
        r = schedlab.simulate(out / run["spec"], scheduler=run["scheduler"],
                              params=run["params"], seed=run["seed"],
                              duration=f"{o['duration_ns']}ns" if "duration_ns" in o else None,
                              samples=run["samples"])
        assert r.run["events"] == run["events"] and r.totals == run["totals"], run["label"]


def test_predicted_c_is_computed_from_the_runs(quick_section: tuple[Path, str]) -> None:
    _, html = quick_section
    rows = {int(r[0]): r for r in parse_tables(html)["seed003-c"]}
    # No. 4's period is 1 s: its timers fire 1000 times less often than No. 8's, so the
    # predicted loss is far smaller than the fitted one, and not a copy of the seed's.
    c4, c8 = parse_number(rows[4][3]), parse_number(rows[8][3])
    assert c4 is not None and c8 is not None
    assert 100.0 - c4 < (100.0 - c8) / 10


def test_borrowing_on_gives_cg0_the_borrowing_rule(quick_section: tuple[Path, str]) -> None:
    _, html = quick_section
    for row in parse_tables(html)["seed003-borrowing-rule"]:
        share, cap = parse_number(row[1]), parse_number(row[2])
        on, off = parse_number(row[3]), parse_number(row[4])
        assert on is not None and off is not None and cap is not None and share is not None
        assert abs(on - cap) <= 1.0, row
        assert abs(off - share) <= 1.0, row


def test_timeline_bins_add_up_to_the_bin(quick_section: tuple[Path, str]) -> None:
    _, html = quick_section
    rows = parse_tables(html)["seed003-timeline"]
    assert len(rows) == m.SETTINGS[seed003.TIMELINE_SETTING].period_us // 1000 // seed003.BIN_MS
    for row in rows:
        for side in (row[1:4], row[4:7]):
            total = sum(parse_number(x) or 0.0 for x in side)
            assert total == pytest.approx(seed003.BIN_MS, abs=0.02), row


def test_a_failed_run_is_shown_not_raised(tmp_path: Path) -> None:
    def broken(job: Any) -> Any:
        raise RuntimeError("boom")

    ctx = Context(True, tmp_path, simulate=broken)
    html = str(seed003.section(ctx).html)
    assert "Runs failed" in html and "boom" in html
    assert ctx.manifest and all(r["status"] == "error" for r in ctx.manifest)


def test_t_lies_within_the_per_period_shares(quick_section: tuple[Path, str]) -> None:
    _, html = quick_section
    rows = parse_tables(html)["seed003-periods"]
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4]
    for row in rows:
        lo, hi, t = (parse_number(x) for x in row[1:4])
        assert lo is not None and hi is not None and t is not None
        assert lo - 0.5 <= t <= hi + 0.5, row


# --- the section from its stored sweeps ----------------------------------------------------


def _section_html(index: Path) -> str:
    page = index.read_text(encoding="utf-8")
    start = page.index(f'<section id="{seed003.SECTION_ID}">')
    return page[start:page.index("</section>", start)]


def test_the_section_is_declared_as_sweeps_whose_datasets_the_report_keeps(
        quick_section: tuple[Path, str]) -> None:
    from schedlab import sweep as sw

    out, _ = quick_section
    main, traced = seed003.sweeps(m.QUICK)
    rows = sw.read(out / "sweeps" / main.name)
    assert len(rows) == len(sw.plan(main)) and set(rows["status"]) == {"ok"}
    traced_rows = sw.read(out / "sweeps" / traced.name)
    assert traced_rows["trace_file"].null_count() == 0
    # the traced runs are not run twice: the main sweep leaves them out
    assert not set(rows["key"]) & set(traced_rows["key"])
    manifest = json.loads((out / "specs" / "manifest.json").read_text())
    assert len(manifest["runs"]) == len(rows) + len(traced_rows)


def test_the_section_rebuilt_from_stored_results_is_byte_identical(tmp_path: Path) -> None:
    from schedlab import reproduce

    first = reproduce.main(True, tmp_path / "first", section_fns=[seed003.section],
                           progress=False, jobs=2)

    def no_run(job: Any) -> Any:
        raise AssertionError(f"rebuilt from stored results, yet {job.label} ran")

    again = reproduce.main(True, tmp_path / "again", section_fns=[seed003.section],
                           progress=False, simulate=no_run, from_results=tmp_path / "first")
    assert _section_html(again) == _section_html(first)
    assert "Runs failed" not in _section_html(again)
    for rel in ("specs/manifest.json", "plots/seed003-timeline.png",
                "plots/seed003-timeline.svg"):
        assert (tmp_path / "again" / rel).read_bytes() == (tmp_path / "first" / rel).read_bytes()


def test_the_section_on_a_dask_cluster_gives_the_same_tables(
        quick_section: tuple[Path, str], tmp_path: Path) -> None:
    import logging

    from distributed import LocalCluster

    from schedlab import reproduce

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster:
        index = reproduce.main(True, tmp_path / "r", section_fns=[seed003.section],
                               progress=False, scheduler=cluster.scheduler_address)
    on_cluster = parse_tables(_section_html(index))
    local = parse_tables(quick_section[1])
    # every table of the section (the list of runs, which has no id, shows host seconds)
    named = [k for k in local if k.startswith("seed003-")]
    assert len(named) >= 6 and on_cluster.keys() == local.keys()
    for name in named:
        assert on_cluster[name] == local[name], name

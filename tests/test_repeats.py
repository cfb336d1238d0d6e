"""Repeated steps: interleaving, the median repeat, 95 % intervals and significant leads.

The statistics are checked against independent computations (the t quantiles by integrating
Student's density with numpy; intervals and leads by hand), and a real run with repeats is
loaded to check its headline figures are one repeat's own numbers.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import vl_convert as vlc
from hypothesis import given
from hypothesis import strategies as st

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.analysis.repeats import (
    interval,
    lead,
    median_repeats,
    percentile_intervals,
    planned_repeats,
    power_figures,
    repeat_figures,
    repeats_found,
    t975,
    with_repeats,
)
from ssdlab.analysis.steps import per_step
from ssdlab.manifest import StepRecord
from ssdlab.repeat import repeat_name, repeat_suite, split_repeat
from ssdlab.runner import run_suite
from ssdlab.suite import load_suite

SUITE = """
name = "rep"
[defaults]
ioengine = "psync"
direct = false
size = "4m"
runtime_s = 0.3
[[steps]]
name = "fill"
rw = "write"
bs = "64k"
loops = 1
[[steps]]
name = "randread-4k"
rw = "randread"
bs = "4k"
[[steps]]
name = "randwrite-4k"
rw = "randwrite"
bs = "4k"
"""


#: the repeated run adds a second queue depth and a 70/30 mix: a QD sweep and a mix sweep
REPEATED = (
    SUITE
    + """
[[steps]]
name = "randread-4k-qd2"
rw = "randread"
bs = "4k"
iodepth = 2
[[steps]]
name = "randrw-4k"
rw = "randrw"
rwmixread = 70
bs = "4k"
"""
)


def _of(stem: str) -> pl.Expr:
    """The rows of every repeat of step ``stem``."""
    return pl.col("step").str.replace(r"\.rep\d+$", "") == stem


def _t_cdf(x: float, df: int) -> float:
    """Student's t CDF by integrating its density (trapezoid on a fine grid)."""
    grid = np.linspace(-400.0, x, 2_000_001)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_norm - (df + 1) / 2 * np.log1p(grid**2 / df))
    return float(np.trapezoid(density, grid))


@pytest.mark.parametrize("df", [2, 3, 4, 9, 29, 30])
def test_t_quantiles_are_students(df: int) -> None:
    assert _t_cdf(t975(df), df) == pytest.approx(0.975, abs=2e-4)


def test_t_quantiles_beyond_the_table_lie_between_the_table_and_the_normal() -> None:
    assert 1.96 < t975(60) < t975(31) < t975(30) and t975(10**6) == pytest.approx(1.96, abs=1e-3)


def test_interval_by_hand() -> None:
    found = interval([100.0, 110.0, 90.0])
    # mean 100, sd 10, half width t(0.975, 2) x 10 / sqrt(3)
    half = 4.303 * 10 / math.sqrt(3)
    assert (found.n, found.median, found.mean) == (3, 100.0, 100.0)
    assert (found.lo, found.hi) == pytest.approx((100 - half, 100 + half))
    assert found.spread_pct == pytest.approx(10.0)
    assert interval([5.0]).lo is None and interval([1.0, 3.0]).median == 2.0


def test_a_lead_within_the_noise_is_not_significant() -> None:
    noisy = lead([103.0, 95.0, 111.0], [100.0, 92.0, 108.0])
    assert noisy.pct == pytest.approx(
        100 * (math.exp(np.mean(np.log([103, 95, 111])) - np.mean(np.log([100, 92, 108]))) - 1)
    )
    assert noisy.significant is False
    steady = lead([103.0, 103.2, 102.9], [100.0, 100.1, 99.9])
    assert steady.significant is True and steady.pct == pytest.approx(3.03, abs=0.05)
    assert lead([103.0], [100.0]).significant is None


@given(st.lists(st.floats(1, 1e6), min_size=2, max_size=6))
def test_a_drive_never_leads_itself(values: list[float]) -> None:
    found = lead(values, values)
    assert found.pct == pytest.approx(0, abs=1e-9) and not found.significant


@given(
    st.lists(st.floats(1, 1e6), min_size=2, max_size=6),
    st.lists(st.floats(1, 1e6), min_size=2, max_size=6),
)
def test_a_lead_is_as_significant_seen_from_either_side(a: list[float], b: list[float]) -> None:
    ab, ba = lead(a, b), lead(b, a)
    assert ab.significant == ba.significant and ab.size_pct == pytest.approx(ba.size_pct)


def test_repeat_names_round_trip() -> None:
    assert split_repeat(repeat_name("qd-randread-4k-qd1", 3)) == ("qd-randread-4k-qd1", 3)
    assert split_repeat("qd1") == ("qd1", 1) and repeat_name("qd1", 1) == "qd1"


def test_repeats_are_interleaved_and_fills_run_once(tmp_path: Path) -> None:
    path = tmp_path / "rep.toml"
    path.write_text(SUITE)
    suite = repeat_suite(load_suite(path), 3)
    names = [s.name for s in suite.steps]
    assert names == [
        "fill",
        "randread-4k", "randwrite-4k",
        "randread-4k.rep2", "randwrite-4k.rep2",
        "randread-4k.rep3", "randwrite-4k.rep3",
    ]  # fmt: skip
    assert repeat_suite(load_suite(path), 1) == load_suite(path)
    with pytest.raises(ValueError, match="1 to 100"):
        repeat_suite(load_suite(path), 0)


def test_a_step_named_like_a_repeat_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "clash.toml"
    path.write_text(SUITE.replace('name = "randwrite-4k"', 'name = "randread-4k.rep2"'))
    with pytest.raises(ValueError, match="used twice"):
        repeat_suite(load_suite(path), 2)


def _run_repeated(root: Path, label: str) -> Path:
    path = root / "rep.toml"
    path.write_text(REPEATED)
    out = root / "run"
    run_suite(repeat_suite(load_suite(path), 3), out, label=label)
    return out


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run_repeated(tmp_path_factory.mktemp("repeats"), "repeats")


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second drive's run of the same suite, for comparisons."""
    return _run_repeated(tmp_path_factory.mktemp("second"), "second")


def test_headline_figures_are_the_median_repeats_own(repeated: Path) -> None:
    results = ssdlab.load(repeated)
    steps = per_step(results.summary)
    reads = steps.filter(_of("randread-4k"))
    assert reads.height == 3
    iops = sorted(reads["iops"].to_list())
    chosen = median_repeats(steps).filter(pl.col("step") == "randread-4k")
    assert chosen.height == 1 and chosen["iops"].item() == iops[1]
    # the chosen row is a real step: its fio.json has that IOPS
    index = chosen["step_index"].item()
    record = next(s for s in results.manifest.steps if s.index == index)
    fio = ssdlab.read_fio_json(repeated / "steps" / record.dir / "fio.json")
    assert fio.jobs["iops"].sum() == pytest.approx(iops[1])
    drive = DriveAnalysis(results)
    assert sorted(drive.steps["step"].unique().to_list()) == [
        "fill", "randread-4k", "randread-4k-qd2", "randrw-4k", "randwrite-4k",
    ]  # fmt: skip


def test_repeat_figures_match_interval(repeated: Path) -> None:
    steps = per_step(ssdlab.load(repeated).summary)
    figures = repeat_figures(steps)
    row = figures.filter(pl.col("repeat_of") == "randwrite-4k").row(0, named=True)
    values = steps.filter(_of("randwrite-4k"))["iops"].to_list()
    expected = interval(values)
    assert row["repeats"] == 3 and row["iops_median"] == expected.median
    assert (row["iops_lo95"], row["iops_hi95"]) == pytest.approx((expected.lo, expected.hi))
    assert "fill" not in figures["repeat_of"].to_list()


def _scores(a: list[float], b: list[float], higher: bool = True) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "test": ["4K random read QD1"] * 2,
            "drive": ["A", "B"],
            "value": [sorted(a)[1], sorted(b)[1]],
            "metric": ["IOPS" if higher else "ns"] * 2,
            "higher_is_better": [higher] * 2,
            "repeats": [a, b],
        }
    )


def test_findings_say_when_a_lead_is_within_the_noise() -> None:
    from ssdlab.findings import leads

    (noisy,) = leads(_scores([103.0, 95.0, 111.0], [100.0, 92.0, 108.0]))
    assert noisy.startswith("A and B differ by 3 % ± ") and noisy.endswith("within the noise.")
    (clear,) = leads(_scores([103.0, 103.2, 102.9], [100.0, 100.1, 99.9]))
    assert clear.startswith("A leads B by 3 % ± 0 % in 4K random read QD1")
    # lower is better: B's lower latency leads
    (latency,) = leads(_scores([2000.0, 2010.0, 1990.0], [1000.0, 1001.0, 999.0], higher=False))
    assert latency.startswith("B leads A by 100 % ± ")
    # a lower median tail latency within the noise ranks nobody
    (tail,) = leads(_scores([2.4e6, 4.6e6, 9.1e6], [2.5e6, 3.8e6, 4.0e6], higher=False))
    assert tail.startswith("B and A differ by ") and tail.endswith("within the noise.")


def test_a_comparison_of_repeated_runs_carries_each_scores_repeats(
    repeated: Path, second: Path
) -> None:
    from ssdlab.review.compare import load_comparison

    cmp = load_comparison([repeated, second])
    scores = cmp.analysis.scores.filter(
        (pl.col("metric") == "IOPS") & pl.col("step_index").is_not_null()
    )
    assert scores.height >= 2
    for row in scores.iter_rows(named=True):
        results = cmp.runs[cmp.names.index(row["drive"])]
        steps = per_step(results.summary)
        chosen = steps.filter(pl.col("step_index") == row["step_index"])["step"].unique().item()
        stem = split_repeat(chosen)[0]
        expected = steps.filter(_of(stem)).group_by("step_index").agg(pl.col("iops").sum())
        assert sorted(row["repeats"]) == pytest.approx(sorted(expected["iops"].to_list()))
    tests = scores["test"].unique().to_list()
    sentences = [s for s in cmp.group("mix")[1] if any(t in s for t in tests)]
    assert sentences and all("±" in s for s in sentences)


def test_the_repeatability_section_shows_each_repeated_step(repeated: Path, tiny_run: Path) -> None:
    from ssdlab.review.repeats import repeat_rows, repeatability_section

    drive = DriveAnalysis(ssdlab.load(repeated))
    section = repeatability_section(drive)
    assert section.missing is None and "ran 3 times each" in section.findings[0]
    assert section.findings[-1].startswith("The widest latency interval is the p")
    rows = repeat_rows(drive)
    assert rows["workload"].to_list() == [
        "4K random read QD1", "4K random write QD1", "4K random read QD2", "4K random 70/30 QD1",
    ]  # fmt: skip
    steps = drive.every_repeat
    reads = steps.filter(_of("randread-4k"))["iops"].to_list()
    expected = interval(reads)
    read = rows.row(0, named=True)
    assert (read["median"], read["lo95"], read["hi95"]) == pytest.approx(
        (expected.median, expected.lo, expected.hi)
    )
    assert "--repeat" in repeatability_section(DriveAnalysis(ssdlab.load(tiny_run))).missing


def _spread(out: Path, stem: str) -> tuple[int, float | None]:
    steps = per_step(ssdlab.load(out).summary)
    totals = (
        steps.filter(pl.col("step").str.starts_with(stem))
        .group_by("step_index")
        .agg(pl.col("iops").sum())
    )
    return totals.height, interval(totals["iops"].to_list()).spread_pct


def test_planned_repeats_come_from_the_suite_when_a_run_stopped_early(repeated: Path) -> None:
    """The run stopped before the mix step's third repeat: its suite still plans three, and
    two are found; a definition this version cannot read plans no more than was recorded."""
    results = ssdlab.load(repeated)
    assert planned_repeats(results.manifest) == {
        "fill": 1, "randread-4k": 3, "randwrite-4k": 3, "randread-4k-qd2": 3, "randrw-4k": 3,
    }  # fmt: skip
    stopped = results.manifest.model_copy(update={"steps": results.manifest.steps[:-1]})
    assert results.manifest.steps[-1].name == "randrw-4k.rep3"
    planned = planned_repeats(stopped)
    assert planned["randrw-4k"] == 3
    steps = per_step(results.summary).filter(pl.col("step") != "randrw-4k.rep3")
    found = {row["step"]: row for row in repeats_found(steps, planned).iter_rows(named=True)}
    assert list(found) == ["fill", "randread-4k", "randwrite-4k", "randread-4k-qd2", "randrw-4k"]
    assert found["fill"]["names"] == ["fill"] and found["fill"]["planned"] == 1
    mix = found["randrw-4k"]
    assert (mix["names"], mix["found"], mix["planned"]) == (["randrw-4k", "randrw-4k.rep2"], 2, 3)
    unreadable = stopped.model_copy(update={"suite_definition": {"steps": "not a list"}})
    assert planned_repeats(unreadable)["randrw-4k"] == 2


def test_max_spread_runs_more_repeats_until_the_spread_is_under_it(tmp_path: Path) -> None:
    path = tmp_path / "rep.toml"
    path.write_text(SUITE)
    suite = repeat_suite(load_suite(path), 2)
    # a limit no pair of runs can meet: every step runs up to the cap, interleaved
    out = tmp_path / "capped"
    run_suite(suite, out, max_spread_pct=1e-9, max_repeats=4)
    names = [s.name for s in ssdlab.load(out).manifest.steps]
    assert names == [
        "fill",
        "randread-4k", "randwrite-4k", "randread-4k.rep2", "randwrite-4k.rep2",
        "randread-4k.rep3", "randwrite-4k.rep3", "randread-4k.rep4", "randwrite-4k.rep4",
    ]  # fmt: skip
    assert _spread(out, "randread-4k")[0] == 4
    # a limit every pair meets: nothing more runs; the decision is the measured spread's
    out = tmp_path / "met"
    run_suite(suite, out, max_spread_pct=1e9, max_repeats=4)
    assert len(ssdlab.load(out).manifest.steps) == 5
    # the limit set just under the measured spread of the first two repeats: a third runs
    n, spread = _spread(out, "randread-4k")
    assert n == 2 and spread is not None
    again = tmp_path / "again"
    run_suite(suite, again, max_spread_pct=1e9, max_repeats=4)
    n, spread = _spread(again, "randread-4k")
    resumed = run_suite(suite, again, max_spread_pct=spread * 0.999, max_repeats=3)
    assert resumed.record("randread-4k.rep3") is not None
    assert resumed.record("randread-4k.rep4") is None  # the cap


def test_a_step_merely_named_like_a_repeat_is_its_own_step() -> None:
    steps = pl.DataFrame(
        {
            "step_index": [1, 2, 3, 4],
            "step": ["rr", "rr.rep2", "rr.rep3", "rr.rep4"],
            "direction": ["read", "write", "read", "read"],
            "rw": ["randread", "randwrite", "read", "randread"],
            "bs_bytes": [4096, 4096, 131072, 4096],
            "iodepth": [1] * 4,
            "numjobs": [1] * 4,
            "rwmixread": [None] * 4,
            "iops": [100.0, 50.0, 10.0, 110.0],
        },
        schema_overrides={"rwmixread": pl.Int64},
    )
    marked = with_repeats(steps)
    assert marked["repeat_of"].to_list() == ["rr", "rr.rep2", "rr.rep3", "rr"]
    assert marked["repeat"].to_list() == [1, 1, 1, 4]
    assert median_repeats(steps)["step"].to_list() == ["rr", "rr.rep2", "rr.rep3"]


def test_the_run_command_repeats_and_settles_steps(tmp_path: Path) -> None:
    from conftest import ssdlab_cli

    path = tmp_path / "rep.toml"
    path.write_text(SUITE)
    out = tmp_path / "out"
    proc = ssdlab_cli(
        "run", path, "--out", out, "--repeat", "2", "--max-spread", "0.0000001%",
        "--max-repeats", "3", "--fill-first", "50%",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    names = [s.name for s in ssdlab.load(out).manifest.steps]
    assert names[:2] == ["fill-first-seq-write-128k", "fill"]
    assert names[2:] == [
        "randread-4k", "randwrite-4k", "randread-4k.rep2", "randwrite-4k.rep2",
        "randread-4k.rep3", "randwrite-4k.rep3",
    ]  # fmt: skip
    assert "randread-4k: repeats spread" in proc.stderr and "repeat 3 of up to 3" in proc.stderr
    for args, message in (
        (("--max-spread", "5%"), "--max-spread needs --repeat 2 or more"),
        (("--repeat", "2", "--max-spread", "lots"), "--max-spread takes a percentage"),
    ):
        bad = ssdlab_cli("run", path, "--out", tmp_path / "bad", *args)
        assert bad.returncode != 0 and message in bad.stderr and "Traceback" not in bad.stderr


def test_qd_charts_of_repeated_steps_carry_their_intervals(repeated: Path) -> None:
    from ssdlab.analysis.repeats import with_intervals
    from ssdlab.review import drive as review

    analysis = DriveAnalysis(ssdlab.load(repeated))
    points = with_intervals(analysis.qd, analysis.every_repeat)
    assert points.height == 2
    for row in points.iter_rows(named=True):
        repeats = analysis.every_repeat.filter(_of(row["step"]))["iops"].to_list()
        expected = interval(repeats)
        assert len(repeats) == 3
        assert (row["value_lo95"], row["value_hi95"]) == pytest.approx((expected.lo, expected.hi))
    (chart, *_) = review.qd_scaling_section(analysis).charts
    spec = chart.to_json(indent=None)
    assert '"y2": {"field": "value_hi95"' in spec  # the error bars
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def _fio_percentile(run: Path, record: StepRecord, direction: str, p: str) -> float:
    """fio's own completion-latency percentile ``p`` (``99.990000``) of one step's job."""
    (job,) = json.loads((run / "steps" / record.dir / "fio.json").read_text())["jobs"]
    return float(job[direction]["clat_ns"]["percentile"][p])


def _by_hand(values: list[float], logs: bool) -> tuple[float, float, float]:
    """(median, lo, hi): t interval at 95 % of three repeats (t(0.975, 2) = 4.303), on logs."""
    x = np.log(values) if logs else np.array(values)
    half = 4.303 * x.std(ddof=1) / math.sqrt(len(x))
    back = np.exp if logs else (lambda v: v)
    return float(np.median(values)), float(back(x.mean() - half)), float(back(x.mean() + half))


def test_percentile_intervals_are_fios_percentiles_over_the_repeats(repeated: Path) -> None:
    results = ssdlab.load(repeated)
    drive = DriveAnalysis(results)
    found = percentile_intervals(drive.qos, drive.every_repeat)
    mix = "4K random 70/30 QD1 · write"
    assert set(found["series"]) == {*drive.qos["series"]} and mix in found["series"].to_list()
    for series, step, direction in (
        ("4K random read QD1", "randread-4k", "read"),
        (mix, "randrw-4k", "write"),
    ):
        records = [r for r in results.manifest.steps if split_repeat(r.name)[0] == step]
        assert len(records) == 3
        for name, key in (("p50", "50.000000"), ("p99.99", "99.990000")):
            values = [_fio_percentile(repeated, r, direction, key) for r in records]
            row = found.filter((pl.col("series") == series) & (pl.col("name") == name)).row(
                0, named=True
            )
            median, lo, hi = _by_hand(values, logs=True)
            assert row["repeats"] == 3 and row["median_ns"] == median
            assert (row["lo95_ns"], row["hi95_ns"]) == pytest.approx((lo, hi))
            assert 0 < row["lo95_ns"] <= row["hi95_ns"]


def test_the_latency_and_mix_charts_and_tables_of_repeats(repeated: Path, tiny_run: Path) -> None:
    from ssdlab.review import drive as review

    drive = DriveAnalysis(ssdlab.load(repeated))
    (mix_chart, _) = review.random_mix_section(drive).parts
    spec = mix_chart.to_json(indent=None)
    assert '"y2": {"field": "value_hi95"' in spec and vlc.vegalite_to_svg(spec).startswith("<svg")
    latency = review.latency_section(drive)
    curves, _, over_repeats = latency.parts
    spec = curves.to_json(indent=None)
    assert '"y2": {"field": "hi_us"' in spec and vlc.vegalite_to_svg(spec).startswith("<svg")
    assert "median and 95 % interval" in over_repeats.data and " – " in over_repeats.data
    # the same sweep's steps seen without their repeats: no error bars
    from ssdlab import charts
    from ssdlab.analysis.repeats import with_intervals

    firsts = drive.every_repeat.filter(~pl.col("step").str.contains(r"\.rep\d+$"))
    mixes = with_intervals(drive.mixes.steps, firsts).with_columns(series=pl.col("sweep"))
    sweeps = drive.mixes.sweeps.with_columns(series=pl.col("sweep"))
    assert "hi95" not in charts.mix_sweep(mixes, sweeps, "once").to_json(indent=None)
    # a run without repeats: no error bars, no table of repeats
    once = review.latency_section(DriveAnalysis(ssdlab.load(tiny_run)))
    assert once.missing is None and len(once.parts) == 2
    for part in once.parts:
        shown = part.to_json(indent=None) if hasattr(part, "to_json") else part.data
        assert "hi_us" not in shown and "over the repeats" not in shown


def test_power_of_repeated_steps_has_its_interval(repeated: Path, tmp_path: Path) -> None:
    from ssdlab.review import drive as review
    from ssdlab.telemetry.attach import attach_power

    run = tmp_path / "run"
    shutil.copytree(repeated, run)
    steps = ssdlab.load(run).manifest.steps
    start = min(s.started for s in steps).timestamp() - 1
    end = max(s.ended for s in steps).timestamp() + 1
    # a yokotool trace every 10 ms: a different power in each step
    lines = []
    for k in range(int((end - start) / 0.01)):
        t = start + 0.0005 + 0.01 * k
        watts = next(
            (
                4.0 + 0.37 * s.index
                for s in steps
                if s.started.timestamp() <= t <= s.ended.timestamp()
            ),
            2.0,
        )
        lines.append(f"{t:.4f},{watts:.3f},12.0,{watts / 12:.4f}")
    trace = tmp_path / "yoko.csv"
    trace.write_text("T,P,V,I\n" + "\n".join(lines) + "\n")
    attach_power(run, trace)
    results = ssdlab.load(run)
    drive = DriveAnalysis(results)
    figures = power_figures(results.power, drive.every_repeat)
    for stem in ("randread-4k", "randrw-4k"):
        power = results.power.filter(_of(stem)).sort("step_index")
        assert power.height == 3 and power["covered"].all()
        watts = power["avg_w"].to_list()
        records = [r for r in results.manifest.steps if split_repeat(r.name)[0] == stem]
        iops = [
            sum(
                d["iops"]
                for j in json.loads((run / "steps" / r.dir / "fio.json").read_text())["jobs"]
                for d in (j["read"], j["write"], j["trim"])
            )
            for r in records
        ]
        row = figures.filter(pl.col("repeat_of") == stem).row(0, named=True)
        median, lo, hi = _by_hand(watts, logs=False)
        assert (row["avg_w_median"], row["avg_w_lo95"], row["avg_w_hi95"]) == pytest.approx(
            (median, max(lo, 0), hi)
        )
        median, lo, hi = _by_hand([i / w for i, w in zip(iops, watts, strict=True)], logs=False)
        assert (row["iops_per_w_median"], row["iops_per_w_lo95"]) == pytest.approx(
            (median, max(lo, 0))
        )
    tables = [p.data for p in review.power_section(drive).parts if hasattr(p, "data")]
    assert any("Power over the repeats" in t and " W (" in t for t in tables)


def test_a_percentile_lead_is_judged_against_the_noise(repeated: Path, second: Path) -> None:
    from ssdlab import findings
    from ssdlab.review.compare import compare_latency_section, load_comparison

    cmp = load_comparison([repeated, second])
    section = compare_latency_section(cmp)
    (sentence,) = section.findings
    # both drives' percentile curves carry the error bars of their repeats
    assert '"y2": {"field": "hi_us"' in section.parts[0].to_json(indent=None)
    repeats = []
    for run in (repeated, second):
        records = [
            r for r in ssdlab.load(run).manifest.steps if split_repeat(r.name)[0] == "randread-4k"
        ]
        repeats.append(np.log([_fio_percentile(run, r, "read", "99.990000") for r in records]))
    # Welch on the logarithms, by hand: the lead of the slower drive's latency
    (a, b), names = repeats, cmp.names
    va, vb = a.var(ddof=1) / 3, b.var(ddof=1) / 3
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 2)
    pct = 100 * math.expm1(abs(a.mean() - b.mean()))
    plus_minus = 100 * math.expm1(t975(df) * math.sqrt(va + vb))
    assert "lower is better" in sentence
    # the subject's wins and deficits leave out the differences within the noise, as leads
    rivals = cmp.analysis.rivals()
    row = rivals.filter(
        (pl.col("measure") == "p99.99 latency") & (pl.col("item") == "4K random read at QD1")
    ).row(0, named=True)
    assert sorted(np.log(row["repeats"])) == pytest.approx(sorted(a))
    assert sorted(np.log(row["rival_repeats"])) == pytest.approx(sorted(b))
    quiet = f"p99.99 latency in 4K random read at QD1 ({pct:.0f} % ± {plus_minus:.0f} %)"
    said = [s for s in findings.rivals(rivals, cmp.subject, limit=99) if quiet in s]
    assert len(said) == (pct <= plus_minus) and all("not significant" in s for s in said)
    medians = [np.median(x) for x in repeats]
    if pct > plus_minus and (medians[0] < medians[1]) != (a.mean() < b.mean()):
        # the median repeats and the repeats' means disagree: no claim on the noise
        assert "±" not in sentence
        return
    assert f"{pct:.0f} % ± {plus_minus:.0f} %" in sentence
    if pct <= plus_minus:
        assert sentence.endswith("within the noise.") and " differ by " in sentence
    else:  # lower latency leads
        faster, slower = (names[0], names[1]) if a.mean() < b.mean() else (names[1], names[0])
        assert sentence.startswith(f"{faster} leads {slower} by ")


def test_repeats_whose_first_is_left_out_still_count_as_its_repeats(
    repeated: Path, tmp_path: Path
) -> None:
    """Repeat 1 of the mix step loses its fio.json: its two other repeats stay its repeats
    (its median, its interval), and the repeatability section says how many it has."""
    from ssdlab.review.repeats import repeat_rows, repeatability_section

    copy = tmp_path / "run"
    shutil.copytree(repeated, copy)
    record = ssdlab.load(copy).manifest.record("randrw-4k")
    assert record is not None and record.dir is not None
    (copy / "steps" / record.dir / "fio.json").unlink()
    results = ssdlab.load(copy)
    assert [(d.step, d.left_out) for d in results.damaged] == [("randrw-4k", "step")]
    steps = per_step(results.summary)
    survivors = steps.filter(_of("randrw-4k")).group_by("step_index").agg(pl.col("iops").sum())
    assert survivors.height == 2
    lower = survivors.sort("iops", "step_index")["step_index"][0]  # the lower middle of two
    chosen = median_repeats(steps).filter(pl.col("step") == "randrw-4k")
    assert chosen["step_index"].unique().to_list() == [lower]
    drive = DriveAnalysis(results)
    assert "randrw-4k.rep2" not in drive.steps["step"].to_list()
    rows = repeat_rows(drive)
    assert rows["step"].to_list() == ["randread-4k", "randwrite-4k", "randread-4k-qd2", "randrw-4k"]
    mix = rows.row(3, named=True)
    expected = interval(survivors["iops"].to_list())
    assert mix["repeats"] == 2 and mix["median"] == pytest.approx(expected.median)
    findings = repeatability_section(drive).findings
    assert findings[0].startswith("4 steps ran 3 times each (interleaved).")
    assert "its median repeat by IOPS" in findings[0]
    assert findings[1].endswith(": 4K random 70/30 at QD1 (randrw-4k): 2 of 3 repeats.")

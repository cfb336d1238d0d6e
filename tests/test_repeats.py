"""Repeated steps: interleaving, the median repeat, 95 % intervals and significant leads.

The statistics are checked against independent computations (the t quantiles by integrating
Student's density with numpy; intervals and leads by hand), and a real run with repeats is
loaded to check its headline figures are one repeat's own numbers.
"""

from __future__ import annotations

import math
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
    repeat_figures,
    t975,
    with_repeats,
)
from ssdlab.analysis.steps import per_step
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


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repeats")
    path = root / "rep.toml"
    path.write_text(SUITE)
    out = root / "run"
    run_suite(repeat_suite(load_suite(path), 3), out, label="repeats")
    return out


def test_headline_figures_are_the_median_repeats_own(repeated: Path) -> None:
    results = ssdlab.load(repeated)
    steps = per_step(results.summary)
    reads = steps.filter(pl.col("step").str.starts_with("randread"))
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
    assert sorted(drive.steps["step"].unique().to_list()) == ["fill", "randread-4k", "randwrite-4k"]


def test_repeat_figures_match_interval(repeated: Path) -> None:
    steps = per_step(ssdlab.load(repeated).summary)
    figures = repeat_figures(steps)
    row = figures.filter(pl.col("repeat_of") == "randwrite-4k").row(0, named=True)
    values = steps.filter(pl.col("step").str.starts_with("randwrite"))["iops"].to_list()
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


def test_a_comparison_of_repeated_runs_carries_each_scores_repeats(
    repeated: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from ssdlab.review.compare import load_comparison

    root = tmp_path_factory.mktemp("second")
    path = root / "rep.toml"
    path.write_text(SUITE)
    other = root / "run"
    run_suite(repeat_suite(load_suite(path), 3), other, label="second")
    cmp = load_comparison([repeated, other])
    scores = cmp.analysis.scores.filter(pl.col("metric") == "IOPS")
    assert scores.height >= 2
    for row in scores.iter_rows(named=True):
        results = cmp.runs[cmp.names.index(row["drive"])]
        steps = per_step(results.summary)
        chosen = steps.filter(pl.col("step_index") == row["step_index"])["step"].item()
        stem = split_repeat(chosen)[0]
        expected = (
            steps.filter(pl.col("step").str.starts_with(stem))
            .group_by("step_index")
            .agg(pl.col("iops").sum())
        )
        assert sorted(row["repeats"]) == pytest.approx(sorted(expected["iops"].to_list()))
    sentences = [s for s in cmp.group("point")[1]]
    assert sentences and all("±" in s for s in sentences)


def test_the_repeatability_section_shows_each_repeated_step(repeated: Path, tiny_run: Path) -> None:
    from ssdlab.review.repeats import repeat_rows, repeatability_section

    drive = DriveAnalysis(ssdlab.load(repeated))
    section = repeatability_section(drive)
    assert section.missing is None and "ran 3 times each" in section.findings[0]
    rows = repeat_rows(drive)
    assert rows["workload"].to_list() == ["4K random read QD1", "4K random write QD1"]
    steps = drive.every_repeat
    reads = steps.filter(pl.col("step").str.starts_with("randread"))["iops"].to_list()
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


def test_qd_charts_of_repeated_steps_carry_their_intervals(tmp_path: Path) -> None:
    from ssdlab.analysis.repeats import with_intervals
    from ssdlab.review import drive as review

    path = tmp_path / "qd.toml"
    path.write_text(
        'name = "qd"\n[defaults]\nioengine = "psync"\ndirect = false\nsize = "4m"\n'
        'runtime_s = 0.3\n[[steps]]\nname = "rr-qd{iodepth}"\nrw = "randread"\n'
        "iodepth = [1, 2]\n"
    )
    out = tmp_path / "run"
    run_suite(repeat_suite(load_suite(path), 3), out, label="qd repeats")
    analysis = DriveAnalysis(ssdlab.load(out))
    points = with_intervals(analysis.qd, analysis.every_repeat)
    for row in points.iter_rows(named=True):
        repeats = analysis.every_repeat.filter(
            pl.col("step").str.starts_with(row["step"]) & (pl.col("iodepth") == row["iodepth"])
        )["iops"].to_list()
        expected = interval(repeats)
        assert len(repeats) == 3
        assert (row["value_lo95"], row["value_hi95"]) == pytest.approx((expected.lo, expected.hi))
    (chart, *_) = review.qd_scaling_section(analysis).charts
    spec = chart.to_json(indent=None)
    assert '"y2": {"field": "value_hi95"' in spec  # the error bars
    assert vlc.vegalite_to_svg(spec).startswith("<svg")

"""Percentiles over time and latency exceedance: the analysis checked against fio's own json+
bins and percentiles, the downsampling against numpy on the same intervals, and the review
sections on real fio runs (a native run, and an import of a fio run logging every 10 ms)."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import run_suite_text

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.analysis.exceedance import SHARE_STEP, TAIL_IOS, exceedance
from ssdlab.analysis.latency import (
    INTERVAL_KEYS,
    MAX_TIME_POINTS,
    downsample_intervals,
    latency_shifts,
    time_choice,
)
from ssdlab.importer import import_results
from ssdlab.review.compare import load_comparison
from ssdlab.review.latency import (
    NO_HIST,
    NO_LOGS,
    compare_exceedance_section,
    compare_latency_over_time_section,
    exceedance_section,
    latency_over_time_section,
)

SUITE = """
name = "lat"
description = "Short 4K steps with histogram logs for the latency review tests."

[defaults]
runtime_s = 3
size = "16m"
ioengine = "psync"

[[steps]]
name = "randread-4k-qd1"
rw = "randread"
bs = "4k"

[[steps]]
name = "randwrite-4k-qd1"
rw = "randwrite"
bs = "4k"

[[steps]]
name = "randrw70-4k"
rw = "randrw"
rwmixread = 70
bs = "4k"
"""
#: a plain fio job logging its latency histogram every 10 ms: ~400 intervals in 4 s
JOB = """
[global]
filename={data}
size=16m
ioengine=psync
time_based=1
runtime=4s
write_hist_log=fio
log_hist_msec=10

[randread-4k-qd1]
rw=randread
bs=4k
"""
TAILS = ["lat_p99_ns", "lat_p99_9_ns", "lat_p99_99_ns", "lat_p99_999_ns", "lat_max_ns"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A native run: 4K random read, write and 70/30 at QD1, one histogram log per step."""
    return run_suite_text(tmp_path_factory.mktemp("lat"), SUITE, "native")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An import of a fio run (json+ and a histogram log of 10 ms intervals)."""
    base = tmp_path_factory.mktemp("fio10ms")
    tree = base / "tree"
    tree.mkdir()
    (tree / "job.fio").write_text(JOB.format(data=base / "data"))
    subprocess.run(
        ["fio", "--output-format=json+", "--output=fio.json", "job.fio"],
        cwd=tree, check=True, capture_output=True,
    )  # fmt: skip
    (base / "data").unlink()
    import_results([tree], base / "imported")
    return base / "imported"


def _fio_bins(run: Path) -> dict[tuple[int, str], dict[int, int]]:
    """fio's own json+ clat bins per step index and direction, from each step's fio.json."""
    found = {}
    for record in ssdlab.load(run).manifest.steps:
        (folder,) = (run / "steps").glob(f"{record.index:03d}-*")
        (job,) = json.loads((folder / "fio.json").read_text())["jobs"]
        for direction in ("read", "write"):
            bins = job[direction]["clat_ns"].get("bins")
            if bins:
                found[(record.index, direction)] = {int(k): v for k, v in bins.items()}
    return found


def test_exceedance_is_the_share_of_ios_in_the_bin_or_slower(run: Path) -> None:
    """Per fio's json+ bins by hand: at each bin value x, the I/Os counted at x or above
    (>=) over all I/Os; the slowest bin keeps its own I/Os (never 0)."""
    curve = exceedance(ssdlab.load(run).latency_hist, step=None)
    bins = _fio_bins(run)
    assert len(bins) == 4  # read, write and both directions of the mix
    for (step, direction), counts in bins.items():
        total = sum(counts.values())
        hand = {x: sum(c for y, c in counts.items() if y >= x) for x in counts if counts[x]}
        ours = curve.filter((pl.col("step_index") == step) & (pl.col("direction") == direction))
        assert ours["lat_ns"].to_list() == sorted(hand)
        assert ours["slower_ios"].to_list() == [hand[x] for x in sorted(hand)]
        assert (ours["ios"] == total).all()
        assert ours["share"].to_list() == [hand[x] / total for x in sorted(hand)]
        assert ours["share"][0] == 1.0 and ours["slower_ios"][-1] == counts[max(counts)] > 0


def test_a_curve_says_how_much_of_fios_count_its_bins_hold(run: Path, tmp_path: Path) -> None:
    """``ios_total`` is fio's total_ios, ``coverage_pct`` the bins' share of it; step 1's
    fastest json+ read bins holding 2 % of its I/Os or more dropped: its curve is named
    partial (a finding, and a note under the chart)."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (path,) = (copy / "steps").glob("001-*/fio.json")
    doc = json.loads(path.read_text())
    read = doc["jobs"][0]["read"]
    bins = sorted(read["clat_ns"]["bins"].items(), key=lambda item: int(item[0]))
    dropped = 0
    while dropped < 0.02 * read["total_ios"]:
        dropped += bins.pop(0)[1]
    read["clat_ns"]["bins"] = dict(bins)
    path.write_text(json.dumps(doc))
    drive = DriveAnalysis(ssdlab.load(copy))
    curve = exceedance(drive.results.latency_hist, step=None, summary=drive.results.summary)
    totals = _fio_totals(copy)
    for (step, direction), rows in curve.group_by("step_index", "direction"):
        ios, total = rows["ios"][0], totals[(step, direction)]
        assert (rows["ios_total"] == total).all()
        assert rows["coverage_pct"][0] == pytest.approx(100 * ios / total)
    kept = sum(n for _, n in bins)
    cut = curve.filter((pl.col("step_index") == 1) & (pl.col("direction") == "read"))
    assert cut["ios"][0] == kept < read["total_ios"]
    pct = 100 * kept / read["total_ios"]
    section = exceedance_section(drive)
    said = (
        f"4K random read at QD1: fio's histogram holds {pct:.1f} % of its I/Os ({kept:,} of the "
        f"{read['total_ios']:,} I/Os fio counted), so its curve is not the whole step's."
    )
    assert said in section.findings, section.findings
    (chart,) = section.charts
    assert f"4K random read QD1 holds {pct:.1f} % of its I/Os" in chart.title.subtitle


def _fio_totals(run: Path) -> dict[tuple[int, str], int]:
    """fio's own total_ios per step index and direction that did I/O."""
    found = {}
    for index, folder in enumerate(sorted((run / "steps").iterdir()), 1):
        (job,) = json.loads((folder / "fio.json").read_text())["jobs"]
        for direction in ("read", "write"):
            if job[direction]["total_ios"]:
                found[(index, direction)] = job[direction]["total_ios"]
    return found


def test_fios_percentiles_are_where_the_share_falls_to_them(run: Path) -> None:
    """fio's reported percentile p is the largest bin value whose share (>=) is above
    1 - p/100: the curve and fio's percentiles say the same."""
    curve = exceedance(ssdlab.load(run).latency_hist, step=None)
    checked = 0
    for record in ssdlab.load(run).manifest.steps:
        (folder,) = (run / "steps").glob(f"{record.index:03d}-*")
        (job,) = json.loads((folder / "fio.json").read_text())["jobs"]
        for direction in ("read", "write"):
            reported = job[direction]["clat_ns"].get("percentile") or {}
            ours = curve.filter(
                (pl.col("step_index") == record.index) & (pl.col("direction") == direction)
            )
            for p, value in reported.items():
                if not ours.height:
                    continue
                above = 1 - Fraction(float(p)) / 100
                x = [
                    lat
                    for lat, slower, ios in ours.select("lat_ns", "slower_ios", "ios").iter_rows()
                    if Fraction(slower, ios) > above
                ]
                assert max(x) == value, (record.index, direction, p)
                checked += 1
    assert checked >= 4 * 17


def test_a_thinned_curve_keeps_the_tail_and_stays_within_a_step(imported: Path) -> None:
    hist = ssdlab.load(imported).latency_hist
    full = exceedance(hist, step=None)
    thin = exceedance(hist)
    assert full.height > thin.height > 10
    kept = set(thin["lat_ns"].to_list())
    assert kept <= set(full["lat_ns"].to_list())
    assert thin.join(full, on=["step_index", "direction", "lat_ns"]).height == thin.height
    # the fastest and slowest bins and every bin of the slowest TAIL_IOS I/Os
    tail = full.filter(pl.col("slower_ios") <= TAIL_IOS)["lat_ns"].to_list()
    assert {full["lat_ns"][0], full["lat_ns"][-1], *tail} <= kept
    # between two kept points, every dropped share lies within a factor SHARE_STEP of both
    shares = full["share"].to_numpy()
    at = np.flatnonzero(np.isin(full["lat_ns"].to_numpy(), list(kept)))
    for a, b in itertools.pairwise(at):
        dropped = shares[a + 1 : b]
        assert (shares[a] / dropped < SHARE_STEP * (1 + 1e-9)).all()
        assert (dropped / shares[b] < SHARE_STEP * (1 + 1e-9)).all()
    ios = full["ios"][0]
    assert thin.height <= 2 * math.ceil(math.log(ios) / math.log(SHARE_STEP)) + 2 + TAIL_IOS
    with pytest.raises(ValueError, match="above 1"):
        exceedance(hist, step=1.0)


def test_downsampling_bounds_points_and_keeps_each_buckets_highest(imported: Path) -> None:
    intervals = ssdlab.load(imported).latency_intervals.sort(*INTERVAL_KEYS, "t_s")
    n = intervals.height
    assert n > MAX_TIME_POINTS  # ~400 intervals of 10 ms
    for points in (MAX_TIME_POINTS, 50, 7):
        small = downsample_intervals(intervals, points)
        size = -(-n // points)
        assert small.height == -(-n // size) <= points
        for b, row in enumerate(small.iter_rows(named=True)):
            part = intervals.slice(b * size, size)
            assert row["intervals"] == part.height and row["t_s"] == part["t_s"].max()
            assert row["samples"] == part["samples"].sum()
            for column in TAILS:
                assert row[column] == part[column].max(), column
            assert row["lat_p50_ns"] == pytest.approx(float(np.median(part["lat_p50_ns"])))
            weighted = (part["lat_mean_ns"] * part["samples"]).sum() / part["samples"].sum()
            assert row["lat_mean_ns"] == pytest.approx(weighted)
        # the tail survives: the slowest interval of the run is in the small series
        for column in TAILS:
            assert small[column].max() == intervals[column].max()
    same = downsample_intervals(intervals, n)
    assert (same["intervals"] == 1).all()
    assert same.select("t_s", *TAILS).equals(intervals.select("t_s", *TAILS))


def test_a_level_shift_is_found_where_the_tail_rose(imported: Path) -> None:
    intervals = ssdlab.load(imported).latency_intervals.sort("t_s")
    half = intervals.height // 2
    rows = [pl.col(c) for c in intervals.columns if c.startswith("lat_")]
    # the first half, then the same intervals again 100x slower: a loaded machine can make
    # the real run's own halves differ, so only the shift this test adds is in the series
    first = intervals.head(half)
    risen = pl.concat(
        [
            first,
            first.with_columns(*(r * 100 for r in rows), t_s=pl.col("t_s") + first["t_s"].max()),
        ]
    )
    (found,) = latency_shifts(risen).iter_rows(named=True)
    assert found["shifted"] and found["after_ns"] > 30 * found["before_ns"]
    step_s = intervals["interval_ms"][0] / 1000
    assert abs(found["shift_t_s"] - first["t_s"].max()) <= 3 * step_s
    # the same interval again and again: no shift, one band
    flat = pl.concat([intervals.slice(half, 1)] * 40).with_columns(
        t_s=(pl.int_range(40) + 1) * step_s
    )
    (steady,) = latency_shifts(flat).iter_rows(named=True)
    assert not steady["shifted"] and steady["low_ns"] == steady["high_ns"] == steady["worst_ns"]


def test_drive_sections_show_the_chosen_steps(run: Path, imported: Path) -> None:
    drive = DriveAnalysis(ssdlab.load(run))
    over_time = latency_over_time_section(drive)
    assert over_time.missing is None and len(over_time.findings) == 4
    assert over_time.findings[0].startswith("4K random read at QD1: p99")
    (chart,) = over_time.charts
    assert chart.data.height == ssdlab.load(run).latency_intervals.height  # short: all kept
    exceed = exceedance_section(drive)
    assert exceed.missing is None and len(exceed.findings) == 4
    assert any(s.startswith("4K random 70/30 at QD1, writes: of its") for s in exceed.findings)
    (chart,) = exceed.charts
    data = chart.data
    assert set(data["series"]) == set(drive.qos["series"]) and set(data["direction"]) == {
        "read",
        "write",
    }
    assert data.height < exceedance(drive.results.latency_hist, step=None).height

    long = latency_over_time_section(DriveAnalysis(ssdlab.load(imported)))
    (chart,) = long.charts
    assert chart.data.height <= MAX_TIME_POINTS
    assert any(said in long.findings[0] for said in ("rose", "fell", "stayed between"))


def test_sections_say_why_without_histograms(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    for log in copy.glob("steps/*/*_clat_hist.*.log"):
        log.unlink()
    for path in copy.glob("steps/*/fio.json"):
        doc = json.loads(path.read_text())
        for job in doc["jobs"]:
            for direction in ("read", "write", "trim"):
                job[direction]["clat_ns"].pop("bins", None)
        path.write_text(json.dumps(doc))
    drive = DriveAnalysis(ssdlab.load(copy))
    assert latency_over_time_section(drive).missing == NO_LOGS
    assert "log_hist_msec" in NO_LOGS
    assert exceedance_section(drive).missing == NO_HIST


def test_the_comparison_overlays_one_curve_per_drive(run: Path, imported: Path) -> None:
    cmp = load_comparison([run, imported])
    section = compare_exceedance_section(cmp)
    (chart,) = section.charts  # the one cell both ran: 4K random read at QD1
    assert set(chart.data["series"]) == set(cmp.names) and len(cmp.names) == 2
    (sentence,) = section.findings
    assert sentence.startswith("4K random read at QD1, I/Os taking")
    assert all(name in sentence for name in cmp.names)
    alone = compare_exceedance_section(load_comparison([run]))
    assert alone.missing is not None and alone.missing.startswith("No exceedance curves")


def test_the_steps_shown_over_time(run: Path) -> None:
    """The QoS choice, then the consistency runs; else every logged step in review order."""
    drive = DriveAnalysis(ssdlab.load(run))
    intervals = drive.results.latency_intervals
    chosen = time_choice(drive.classified, drive.qos.head(1), [2], intervals)
    assert chosen.rows() == [(1, "read", "4K random read QD1"), (2, "write", "4K random write QD1")]
    assert time_choice(drive.classified, drive.qos, [2], intervals, limit=1).height == 1
    fallback = time_choice(drive.classified, drive.qos.clear(), [], intervals)
    assert fallback["series"].to_list() == [
        "4K random read QD1", "4K random 70/30 QD1 · read", "4K random 70/30 QD1 · write",
        "4K random write QD1",
    ]  # fmt: skip
    unlogged = intervals.filter(pl.col("step_index") != 1)
    assert 1 not in time_choice(drive.classified, drive.qos, [], unlogged)["step_index"]


def test_the_comparison_over_time_has_one_line_per_drive(run: Path, imported: Path) -> None:
    cmp = load_comparison([run, imported])
    section = compare_latency_over_time_section(cmp)
    (chart,) = section.charts
    assert set(chart.data["label"]) == set(cmp.names)
    assert chart.data.height <= len(cmp.names) * MAX_TIME_POINTS
    (sentence,) = section.findings
    assert sentence.startswith("4K random read at QD1, p")
    assert "different intervals" in sentence and "10 ms" in sentence

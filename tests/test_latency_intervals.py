"""``latency_intervals``: completion-latency percentiles per histogram-log interval, for a
native run and for an import of the same files, checked against fio's own
``fiologparser_hist.py`` (Debian's fio package ships it) on the same logs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import ssdlab_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import ssdlab
from ssdlab.importer import import_results
from ssdlab.io.fio_hist import interval_stats, parser_bin_values
from ssdlab.pipeline import INTERVAL_PERCENTILES, hist_log_bins_frame

TOOL = Path("/usr/share/doc/fio/fiologparser_hist.py.gz")
SUITE = """
name = "hist"
description = "A step of two threads (ssdlab has fio write histogram logs)."

[defaults]
runtime_s = 5
size = "16m"
ioengine = "psync"

[[steps]]
name = "randrw-2jobs"
rw = "randrw"
rwmixread = 70
bs = "4k"
numjobs = 2
"""
STATS = ["samples", "lat_min_ns", "lat_mean_ns", "lat_p50_ns", "lat_p90_ns", "lat_p95_ns",
         "lat_p99_ns", "lat_p99_9_ns", "lat_p99_99_ns", "lat_p99_999_ns", "lat_max_ns"]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A native run whose one step wrote a histogram log per thread."""
    base = tmp_path_factory.mktemp("hist")
    (base / "hist.toml").write_text(SUITE)
    proc = ssdlab_cli("run", base / "hist.toml", "--out", base / "run", "--label", "hist")
    assert proc.returncode == 0, proc.stderr
    return base / "run"


def _step_dir(run: Path) -> Path:
    return next((run / "steps").iterdir())


def _tool(logs: list[Path], interval_ms: int, workdir: Path) -> pl.DataFrame:
    """fiologparser_hist.py --noweight over ``logs`` (it sums files), as a frame. The tool
    counts intervals from 0, so the logs' epoch times are moved back by whole intervals
    first (every row stays in its interval)."""
    times = [int(line.split(",", 1)[0]) for log in logs for line in log.read_text().splitlines()]
    shift = (min(times) // interval_ms - 1) * interval_ms
    moved = []
    for log in logs:
        rows = [line.split(",", 1) for line in log.read_text().splitlines()]
        moved.append(workdir / log.name)
        moved[-1].write_text("".join(f"{int(t) - shift},{rest}\n" for t, rest in rows))
    logs = moved
    script = workdir / "fiologparser_hist.py"
    script.write_text(subprocess.run(["zcat", str(TOOL)], capture_output=True, text=True).stdout)
    pcts = ":".join(f"{p:g}" for p in INTERVAL_PERCENTILES)
    args = ["--noweight", "--directions=rw", "-i", str(interval_ms), "--percentiles", pcts]
    out = subprocess.run(
        [sys.executable, str(script), *args, *map(str, logs)],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    # end-time, dir, samples, min, avg, median, the percentiles, max
    rows = [[x.strip() for x in line.split(",")] for line in out[1:]]
    return pl.DataFrame(
        {
            "end_ms": [int(r[0]) for r in rows],
            "direction": [{"r": "read", "w": "write"}[r[1]] for r in rows],
            "samples": [int(r[2]) for r in rows],
            **{name: [float(r[6 + n]) for r in rows] for n, name in enumerate(STATS[3:-1])},
            "lat_max_ns": [float(r[-1]) for r in rows],
        }
    )


@pytest.mark.skipif(not TOOL.exists(), reason="fio's fiologparser_hist.py is not installed")
def test_native_run_matches_fiologparser_hist(run: Path, tmp_path: Path) -> None:
    logs = sorted(_step_dir(run).glob("*_clat_hist.*.log"))
    assert len(logs) == 2  # one per thread
    frame = ssdlab.load(run).latency_intervals
    assert frame["host"].null_count() == 0 and frame["step"].unique().to_list() == ["randrw-2jobs"]
    (interval,) = frame["interval_ms"].unique().to_list()
    theirs = _tool(logs, interval, tmp_path).sort("direction", "end_ms")
    ours = frame.sort("direction", "t_s")
    assert ours["direction"].to_list() == theirs["direction"].to_list() and ours.height > 4
    assert (ours["samples"] == theirs["samples"]).all()
    for name in STATS[3:]:  # the tool prints 3 decimals
        assert np.allclose(ours[name], theirs[name], rtol=0, atol=1e-3), name
    # its intervals, in seconds since the job began (the logs hold epoch milliseconds)
    same = (ours["direction"] == ours["direction"].shift(1)).fill_null(False)
    steps = ours["t_s"].diff().filter(same)
    assert np.allclose(steps, interval / 1000) and 0 < ours["t_s"].min() <= interval / 1000
    total = frame.group_by("direction").agg(pl.col("samples").sum())
    fio = ssdlab.load(run).summary.group_by("direction").agg(pl.col("total_ios").sum())
    # fio does not log a last partial interval: at most the I/Os it completed
    counts = total.join(fio, on="direction")
    assert counts.height == 2 and (counts["samples"] <= counts["total_ios"]).all()


def test_import_of_the_same_files_gives_the_same_frame(run: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(_step_dir(run), tree)
    (hist,) = tree.glob("*_clat_hist.2.log")
    report = import_results([tree], tmp_path / "imported")
    assert {s.path.name for s in report.skipped} == {"fio.stderr", "job.fio"}
    ours = ssdlab.load(run).latency_intervals.select("direction", "t_s", *STATS)
    imported = ssdlab.load(tmp_path / "imported").latency_intervals
    assert_frame_equal(imported.select("direction", "t_s", *STATS), ours)

    hist.write_text("12, 0, 4096, 1, 2\n")  # no fio bin layout
    report = import_results([tree], tmp_path / "bad")
    bad = [(s.path, "no fio bin layout" in s.reason) for s in report.skipped if s.path == hist]
    assert bad == [(hist, True)]
    # the job is left out whole: its other thread alone would understate it
    assert ssdlab.load(tmp_path / "bad").latency_intervals.is_empty()


def test_relative_time_logs_give_the_same_intervals(run: Path, tmp_path: Path) -> None:
    """fio's default logs count from the job's start, ssdlab's from the epoch: moved back
    by whole intervals, the logs give the same frame."""
    tree = tmp_path / "tree"
    shutil.copytree(_step_dir(run), tree)
    epoch = ssdlab.load(run).latency_intervals
    (interval,) = epoch["interval_ms"].unique().to_list()
    logs = {log: [line.split(",", 1) for line in log.read_text().splitlines()]
            for log in tree.glob("*_clat_hist.*.log")}  # fmt: skip
    shift = (min(int(rows[0][0]) for rows in logs.values()) // interval - 1) * interval
    for log, rows in logs.items():
        log.write_text("".join(f"{int(t) - shift},{rest}\n" for t, rest in rows))
    import_results([tree], tmp_path / "relative")
    relative = ssdlab.load(tmp_path / "relative").latency_intervals
    assert relative["t_s"].min() == interval / 1000
    assert_frame_equal(relative.select("direction", "t_s", *STATS), epoch.select(
        "direction", "t_s", *STATS))  # fmt: skip


def test_a_bad_log_of_a_completed_step_is_named_and_only_its_intervals_left_out(
    run: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (log,) = _step_dir(copy).glob("*_clat_hist.1.log")
    time_ms, _, rest = log.read_text().split(", ", 2)
    log.write_text(f"{time_ms}, 7, {rest}")  # line 1's direction
    whole, damaged = ssdlab.load(run), ssdlab.load(copy)
    (damage,) = damaged.damaged
    assert (damage.path, damage.left_out) == (str(log), "latency intervals")
    assert re.match(
        rf"^{re.escape(str(log))}: line 1: a direction other.*intervals left out$", str(damage)
    )
    assert damaged.latency_intervals.is_empty() and not whole.latency_intervals.is_empty()
    assert_frame_equal(damaged.summary, whole.summary)  # fio's own figures are all kept


def test_a_missing_thread_log_leaves_out_what_it_would_understate(
    run: Path, tmp_path: Path
) -> None:
    """fio writes a log per thread and kind: with thread 2's iops and histogram logs gone,
    a native run names both and leaves out the step's time series and latency intervals
    (never one thread's sums), QoS slices get no bins, fio's own figures are all kept; an
    import of the same files skips both as missing and sums nothing either."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    step = _step_dir(copy)
    gone = [step / "fio_iops.2.log", step / "fio_clat_hist.2.log"]
    for log in gone:
        log.unlink()
    whole, damaged = ssdlab.load(run), ssdlab.load(copy)
    assert not whole.damaged and not whole.timeseries.is_empty()
    missing = "missing (fio writes this log for every thread of the job)"
    assert [str(damage) for damage in damaged.damaged] == [
        f"{gone[0]}: {missing}; step randrw-2jobs's time series left out",
        f"{gone[1]}: {missing}; step randrw-2jobs's latency intervals left out",
    ]
    assert [damage.left_out for damage in damaged.damaged] == ["time series", "latency intervals"]
    assert damaged.timeseries.is_empty() and damaged.latency_intervals.is_empty()
    assert_frame_equal(damaged.summary, whole.summary)  # fio's own figures are all kept
    steps = [record.index for record in whole.manifest.steps]
    assert not hist_log_bins_frame(whole.steps, steps).is_empty()
    assert hist_log_bins_frame(damaged.steps, steps).is_empty()

    report = import_results([step], tmp_path / "imported")
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped[gone[0]] == f"{missing}; step fio's time series left out"
    assert skipped[gone[1]] == missing
    imported = ssdlab.load(tmp_path / "imported")
    assert imported.timeseries.is_empty() and imported.latency_intervals.is_empty()
    assert imported.summary.height == whole.summary.height
    # a tree of fio's JSON alone kept no log of any kind: nothing is missing, nothing summed
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(step / "fio.json", bare)
    assert not import_results([bare], tmp_path / "bare-import").skipped


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 5), min_size=4, max_size=4).map(lambda r: r + [0] * 228),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(0, 231), min_size=1, max_size=6),
)
def test_interval_stats_is_numpys_interp_on_every_bin(rows: list[list[int]], at: list[int]) -> None:
    """Groups of counts scattered over a 232-bin layout (fio 3.x at coarseness 3): the
    vectorised statistics equal numpy's ``interp`` on the full CDF, empty bins included."""
    dense = np.zeros((len(rows), 232))
    for g, row in enumerate(rows):
        for n, count in enumerate(row[:4]):
            dense[g, at[n % len(at)]] += count
    dense = dense[dense.sum(axis=1) > 0]
    if not len(dense):
        return
    g, b = np.nonzero(dense)
    hist = pl.DataFrame({"g": g, "bin": b, "count": dense[g, b].astype(np.int64)})
    got = interval_stats(hist, 232, ["g"], INTERVAL_PERCENTILES)
    values = parser_bin_values(232)
    for n, counts in enumerate(dense):
        cdf = 100.0 * (np.cumsum(counts) - counts / 2.0) / counts.sum()
        row = got.row(n, named=True)
        assert row["samples"] == counts.sum()
        for p, name in zip(INTERVAL_PERCENTILES, STATS[3:-1], strict=True):
            assert row[name] == pytest.approx(np.interp(p, cdf, values), rel=1e-12)

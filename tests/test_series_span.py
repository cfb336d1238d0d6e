"""A step's jobs that end at different times make one time series over the whole step: each
thread counted until its own end, so the series holds fio's I/O and ends with the last job.

A real fio run, durations set by construction: 4 threads (``numjobs``, ``group_reporting``)
each from ``offset_increment`` x its number to the end of a 16.5 MiB file (16.5, 12.5, 8.5
and 4.5 MiB), a 50/50 random mix capped at ``rate`` = 1 MiB/s per direction (2 MiB/s per
thread): they end at 8.25, 6.25, 4.25 and 2.25 s, a quarter of a log interval after one.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.fio import LOG_WINDOW_MS

RATE = 2**20  # bytes/s per direction and thread
BS = 4096
THREADS = 4
W = LOG_WINDOW_MS / 1000
SUITE = f"""
name = "span"
description = "Four jobs that end at different times."

[[steps]]
name = "staggered-mix"
rw = "randrw"
rwmixread = 50
bs = "{BS}"
numjobs = {THREADS}
loops = 1
runtime_s = 60
ioengine = "psync"
options = {{ offset_increment = "4m", rate = "{RATE}" }}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("span")
    (d / "suite.toml").write_text(SUITE)
    target = ("--target", d / "target.dat", "--target-size", str(33 * 2**19))  # 16.5 MiB
    proc = ssdlab_cli("run", d / "suite.toml", "--out", d / "run", *target, "--label", "span")
    assert proc.returncode == 0, proc.stderr
    return d / "run"


def _fio(run: Path) -> dict:
    (step,) = (run / "steps").iterdir()
    (job,) = json.loads((step / "fio.json").read_text())["jobs"]
    return job


def test_series_holds_every_job_until_its_own_end(run: Path) -> None:
    """Per direction, the series' bytes (bandwidth x window) are fio's ``io_bytes`` less
    what fio never logs: each thread's last partial interval, at most one interval at the
    thread's rate cap (``RATE`` x ``W`` per thread; by construction about a quarter of it,
    the rest a margin for fio's sampling running late). Each logged interval is a rate over
    at least ``W`` less 1 ms (fio's slack), so the series is at most that much over."""
    job = _fio(run)
    series = ssdlab.load(run).timeseries
    assert set(series["direction"]) == {"read", "write"}
    assert job["read"]["io_bytes"] + job["write"]["io_bytes"] == 42 * 2**20  # 16.5 + ... 4.5
    for direction in ("read", "write"):
        rows = series.filter(pl.col("direction") == direction)
        io_bytes = job[direction]["io_bytes"]
        written = rows["bw_bytes_s"].sum() * W
        assert io_bytes - THREADS * RATE * W <= written <= io_bytes * W / (W - 0.001)
        ios = rows["iops"].sum() * W
        total_ios = job[direction]["total_ios"]
        assert total_ios - THREADS * RATE * W / BS <= ios <= total_ios * W / (W - 0.001)
        assert rows["clat_mean_ns"].null_count() == 0  # latency of the threads still running


def test_series_ends_with_the_last_job(run: Path) -> None:
    """The series runs to the longest thread's last logged interval (within its partial
    last interval, plus a margin for late sampling), not the shortest's (2.25 s), and its
    last windows hold only the threads still running."""
    job = _fio(run)
    series = ssdlab.load(run).timeseries
    runtime_s = job["write"]["runtime"] / 1000  # the longest thread's
    assert runtime_s > 8.2  # 8.25 s less the last I/O's time
    end = series["t_s"].max()
    assert runtime_s - 2 * W < end <= runtime_s
    last = series.filter(pl.col("t_s") == end)
    assert (last["bw_bytes_s"] <= RATE * 1.01).all()  # one thread of four

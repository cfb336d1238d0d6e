"""A report parses each of a run's files once: ``ssdlab.load`` reads fio's JSON and every
log, and what a review asks for afterwards (the QoS slices' histogram bins, the power
frame's measured windows) reuses what it parsed, and leaves the loaded run as it was. The
readers are wrapped to count their calls; they still do the reading."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from golden import SOURCES
from polars.testing import assert_frame_equal

import ssdlab
import ssdlab.io.fio_hist
import ssdlab.io.fio_log
import ssdlab.logs
import ssdlab.pipeline
from ssdlab.analysis.drive import DriveAnalysis
from ssdlab.analysis.steps import SUMMARY_SCHEMA
from ssdlab.pipeline import hist_log_bins_frame
from ssdlab.results import load_frames

#: reader -> (module, function, position of the path among its arguments)
READERS = {
    "fio.json": (ssdlab.pipeline, "parse_fio_json", 1),
    "histogram log": (ssdlab.io.fio_hist, "read_fio_hist_log", 0),
    "log, bulk": (ssdlab.logs, "read_bytes", 0),  # iops/bw/clat logs parsed together
    "log, streamed": (ssdlab.logs, "per_io_sums", 0),  # per-I/O logs
    "log, alone": (ssdlab.io.fio_log, "read_bytes", 0),  # read_fio_log and its kin
}


def _counting(
    real: Callable[..., Any], reader: str, at: int, counts: Counter[tuple[str, str]]
) -> Callable[..., Any]:
    """``real``, counting its calls per path (its argument ``at``) under ``reader``."""

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[(reader, str(args[at]))] += 1
        return real(*args, **kwargs)

    return counted


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, str]]:
    """Calls of each reader of fio's output, per (reader, path)."""
    counts: Counter[tuple[str, str]] = Counter()
    for reader, (module, name, at) in READERS.items():
        monkeypatch.setattr(module, name, _counting(getattr(module, name), reader, at, counts))
    return counts


def _files(run: Path, pattern: str) -> set[str]:
    return {str(p) for p in (run / "steps").glob(f"*/{pattern}")}


@pytest.mark.parametrize("name", ["quick-demo", "telemetry"])
def test_a_review_parses_each_file_once(name: str, reads: Counter[tuple[str, str]]) -> None:
    """The checked-in demo run and the golden run with a power trace: loaded, analysed,
    their QoS bins and power figures taken; every fio.json, histogram log and iops/bw/clat
    log was parsed exactly once."""
    run, _ = SOURCES[name]
    results = ssdlab.load(run)
    drive = DriveAnalysis(results)
    assert drive.hist_log_bins.height and drive.classified.height
    power = results.power
    if name == "telemetry":
        assert power["covered"].all() and power.height == 2

    assert set(reads.values()) == {1}, [key for key, n in reads.items() if n > 1]
    read = {reader: {path for r, path in reads if r == reader} for reader in READERS}
    assert read["fio.json"] == _files(run, "fio.json")
    assert read["histogram log"] == _files(run, "*_clat_hist.*.log")
    logs = {f for kind in ("iops", "bw", "clat") for f in _files(run, f"*_{kind}.*.log")}
    assert read["log, bulk"] | read["log, streamed"] == logs
    assert not read["log, alone"] - read["histogram log"]  # no log read again on its own


def test_what_is_kept_is_what_a_fresh_read_gives() -> None:
    """The histogram bins kept at load equal the logs read again (a run past the bins kept
    is read on demand); the power frame of a load equals the one built alone, whose iops
    logs are read for it (``ssdlab power show``)."""
    run, _ = SOURCES["telemetry"]
    results = ssdlab.load(run)
    indexes = [step.record.index for step in results.steps]
    kept = hist_log_bins_frame(results.steps, indexes)
    for step in results.steps:
        step.hist_bins = None
    assert_frame_equal(hist_log_bins_frame(results.steps, indexes), kept)
    assert kept.height and set(kept["step_index"]) <= set(indexes)
    assert not kept.filter(pl.col("direction") == "trim").height
    assert_frame_equal(load_frames(run, ["power"])["power"], results.power)


def test_an_analysis_leaves_the_loaded_run_as_it_was() -> None:
    """A run without fio steps (ACT trials only: an empty summary without columns) is
    analysed on a copy whose summary has every column; the Results given is not changed."""
    run, _ = SOURCES["quick-demo"]
    bare = dataclasses.replace(ssdlab.load(run), summary=pl.DataFrame())
    drive = DriveAnalysis(bare)
    assert bare.summary.columns == [] and drive.results.steps is bare.steps
    assert set(SUMMARY_SCHEMA) <= set(drive.results.summary.columns)
    assert drive.qd.is_empty() and drive.classified.is_empty()

"""The SNIA PTS 2.0 recovery suites (snia-hir, snia-xsr) at tiny scale, their analysis and
review sections, checked against fio's own log files."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.analysis.drive import DriveAnalysis
from ssdlab.analysis.recovery import (
    STEADY_SHARE,
    cross_stimulus_recovery,
    fio_seconds,
    first_run,
    host_idle_recovery,
    recovery_time,
)
from ssdlab.charts import MAX_POINTS
from ssdlab.review.recovery import fill_section, hir_section, xsr_section
from ssdlab.suite import load_suite
from ssdlab.tables import format_bw, format_iops

FAST = ["--set", "ioengine=psync", "--target-size", "16m"]
#: one thread at QD1, so each step has one fio log per kind; waits of 1-2 s
HIR_SETS = {
    "threads": "1", "qd": "1", "max_s": "1", "baseline_s": "2", "segment_s": "3",
    "return_s": "1.5", "burst_s": "1", "wait1": "1s", "wait2": "1s", "wait3": "2s",
    "wait4": "1s", "wait5": "1s",
}  # fmt: skip
XSR_SETS = {"seq_s": "2.5", "rand_s": "2.5", "rand_threads": "1", "qd": "1"}


def _sets(values: dict[str, str]) -> list[str]:
    return [arg for k, v in values.items() for arg in ("--set", f"{k}={v}")]


def _run(tmp: Path, suite: str, sets: dict[str, str]) -> DriveAnalysis:
    out = tmp / suite
    proc = ssdlab_cli("run", suite, "--out", out, *FAST, *_sets(sets))
    assert proc.returncode == 0, proc.stderr
    return DriveAnalysis(ssdlab.load(out))


@pytest.fixture(scope="module")
def hir(tmp_path_factory: pytest.TempPathFactory) -> DriveAnalysis:
    return _run(tmp_path_factory.mktemp("hir"), "snia-hir", HIR_SETS)


@pytest.fixture(scope="module")
def xsr(tmp_path_factory: pytest.TempPathFactory) -> DriveAnalysis:
    return _run(tmp_path_factory.mktemp("xsr"), "snia-xsr", XSR_SETS)


def _raw_log(run: Path, step: str, kind: str) -> pl.DataFrame:
    """A one-thread step's fio log as fio wrote it: ``time_ms`` (epoch ms), ``value``."""
    (folder,) = (run / "steps").glob(f"*-{step}")
    text = (folder / f"fio_{kind}.1.log").read_text().splitlines()
    rows = [tuple(int(x) for x in line.split(",")[:2]) for line in text if line.strip()]
    return pl.DataFrame(rows, schema={"time_ms": pl.Int64, "value": pl.Int64}, orient="row")


def _check_rendered(parts: list) -> None:
    for part in parts:
        if isinstance(part, alt.TopLevelMixin):
            spec = part.to_dict()
            rows = [len(v) for v in spec.get("datasets", {}).values()]
            assert rows and max(rows) <= MAX_POINTS
        else:
            assert part.rows > 0 and "<table" in part.data


@pytest.mark.parametrize("suite", ["snia-hir", "snia-xsr"])
def test_suites_parse_and_pass_fio_parse_only(tmp_path: Path, suite: str) -> None:
    proc = ssdlab_cli("run", suite, "--out", tmp_path / "dry", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "fio --parse-only:" in proc.stdout + proc.stderr and "ok" in proc.stdout + proc.stderr


def test_hir_suite_steps_and_wait_states() -> None:
    suite = load_suite("snia-hir", {"wait3": "20s", "burst_s": 2})
    steps = {s.name: s for s in suite.all_steps()}
    assert list(steps)[:3] == ["hir-wsat-randwrite-4k", "hir-baseline", "hir-wait1"]
    assert steps["hir-wsat-randwrite-4k"].loops == 1  # WSAT: size-based, 4 threads x span
    waits = [s for s in suite.all_steps() if "thinktime" in s.options]
    assert [fio_seconds(s.options["thinktime"], 1e-6) for s in waits] == [5, 10, 20, 25, 50]
    assert {s.options["thinktime_iotime"] for s in waits} == {2}
    assert {(s.rw, s.bs, s.numjobs, s.iodepth) for s in steps.values()} == {
        ("randwrite", "4k", 4, 32)
    }
    assert list(steps)[-1] == "hir-return5" and "thinktime" not in steps["hir-return5"].options


def test_fio_seconds_reads_fio_time_values() -> None:
    assert fio_seconds("5s", 1e-6) == 5 and fio_seconds("500ms", 1.0) == 0.5
    assert fio_seconds("2m", 1.0) == 120 and fio_seconds(250000, 1e-6) == 0.25
    assert fio_seconds("3", 1.0) == 3 and fio_seconds("soon", 1.0) is None


def test_hir_figures_match_fio_logs(hir: DriveAnalysis) -> None:
    found = host_idle_recovery(hir.steps, hir.results.timeseries, hir.results.manifest)
    assert found is not None
    kinds = [s.kind for s in found.segments]
    assert kinds[0] == "baseline" and kinds.count("wait") == 5 and "return" in kinds
    states = found.wait_states()
    assert states["wait_s"].to_list() == [1, 1, 2, 1, 1]
    run = hir.results.path
    for row in states.iter_rows(named=True):
        # fio's own log: window lengths from its timestamps, the module's busy rule
        raw = _raw_log(run, row["step"], "iops")
        lengths = raw["time_ms"].diff().fill_null(1000) / 1000
        busy = (lengths <= 1.5 * lengths.median()) & (raw["value"] >= 0.5 * raw["value"].max())
        expected = raw["value"].filter(busy).mean()
        assert row["burst_iops"] == pytest.approx(expected, rel=1e-12)
    base = _raw_log(run, "hir-baseline", "iops")["value"].mean()
    assert found.baseline_iops == pytest.approx(base, rel=1e-12)
    ratio = states["burst_vs_baseline"][0]
    assert ratio == pytest.approx(states["burst_iops"][0] / base)


def test_hir_section_renders_the_run(hir: DriveAnalysis) -> None:
    section = hir_section(hir)
    assert section.missing is None and len(section.parts) == 3
    _check_rendered(section.parts)
    panels = section.parts[1].data  # one panel per wait state
    assert panels["step"].unique().sort().to_list() == [f"hir-wait{i}" for i in range(1, 6)]
    assert section.parts[2].rows == 5
    base = _raw_log(hir.results.path, "hir-baseline", "iops")["value"].mean()
    assert f"baseline averaged {format_iops(base)}" in section.findings[0]
    assert "4K random write at QD1" in section.findings[0]
    assert sum(s.startswith("Bursts after 1 s waits") for s in section.findings) >= 3
    assert "No Cross-Stimulus" in str(xsr_section(hir).missing)
    assert "No drive fill" in str(fill_section(hir).missing)


def test_xsr_figures_match_fio_logs(xsr: DriveAnalysis) -> None:
    found = cross_stimulus_recovery(xsr.steps, xsr.results.timeseries, xsr.results.manifest)
    assert found is not None
    table = found.transitions()
    assert table["step"].to_list() == [
        "xsr-seq-write-128k",
        "xsr-randwrite-8k",
        "xsr-seq-write-128k-return",
    ]
    # the return to sequential recovers to the first sequential segment's level
    assert table["reference_step"].to_list() == [
        "xsr-seq-write-128k",
        "xsr-randwrite-8k",
        "xsr-seq-write-128k",
    ]
    for row, segment in zip(table.iter_rows(named=True), found.segments, strict=True):
        # the frame keeps fio's whole windows: the log's rows but a last partial one
        raw = _raw_log(xsr.results.path, row["step"], "bw")
        kept = segment.series.height
        assert raw.height - 1 <= kept <= raw.height and kept >= 2
        tail = raw.head(kept).tail(max(1, round(kept * STEADY_SHARE)))
        assert row["steady_bw_bytes_s"] == pytest.approx(tail["value"].mean() * 1024, rel=1e-12)
    elapsed = found.series()["elapsed_s"]
    assert elapsed.is_sorted() and elapsed.n_unique() == elapsed.len()


def test_xsr_section_renders_the_run(xsr: DriveAnalysis) -> None:
    section = xsr_section(xsr)
    assert section.missing is None and len(section.findings) == 2
    _check_rendered(section.parts)
    table = cross_stimulus_recovery(
        xsr.steps, xsr.results.timeseries, xsr.results.manifest
    ).transitions()  # type: ignore[union-attr]
    first = table["steady_bw_bytes_s"][0]
    assert f"of its earlier steady {format_bw(first)}" in section.findings[1]
    assert section.findings[1].startswith("After 8K random write at QD1, 128K sequential write")
    assert "No Host Idle Recovery" in str(hir_section(xsr).missing)


def test_recovery_time_needs_a_sustained_return() -> None:
    # windows of 1 s: far, one window near, far, then 6 near in a row from t = 4 s
    values = [50.0, 98.0, 40.0, 60.0, 95.0, 101.0, 99.0, 104.0, 97.0, 100.0]
    series = pl.DataFrame(
        {"t_s": [float(i + 1) for i in range(10)], "window_s": [1.0] * 10, "bw_bytes_s": values}
    )
    assert recovery_time(series, 100.0) == 4.0
    assert recovery_time(series, 100.0, sustain=7) is None
    assert recovery_time(series, 100.0, tolerance=0.01) is None
    assert first_run(pl.Series([True, False, True, True]), 2) == 2
    assert first_run(pl.Series([True, None, True]), 2) is None
    assert recovery_time(series, 50.0, tolerance=1.0) == 0.0  # from the first window

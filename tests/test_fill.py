"""Whole-drive fills (the fill suite): the SLC-cache change point, the run at tiny scale and
its review section against fio's own logs, and ``fill_first`` (``--fill-first 80%``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import altair as alt
import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.analysis.drive import DriveAnalysis
from ssdlab.analysis.fill import HEAD_WINDOWS, cache_end, fills
from ssdlab.analysis.pts import step_series
from ssdlab.errors import SuiteError
from ssdlab.fill import FILL_FIRST_STEP, fill_first
from ssdlab.fio import job_file
from ssdlab.io.fio_log import read_fio_log
from ssdlab.review.recovery import fill_section, hir_section
from ssdlab.suite import load_suite, parse_suite
from ssdlab.tables import format_bw

#: 48 MiB at 8 MiB/s: six 1-second windows per fill
FILL_ARGS = [
    "--target-size", "48m", "--set", "ioengine=psync", "--set", "qd=1", "--set", "rate=8m",
    "--set", "idle_s=1", "--set", "recovery_s=2",
]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> DriveAnalysis:
    out = tmp_path_factory.mktemp("fill") / "fill"
    proc = ssdlab_cli("run", "fill", "--out", out, *FILL_ARGS)
    assert proc.returncode == 0, proc.stderr
    return DriveAnalysis(ssdlab.load(out))


def _knee_log(path: Path) -> Path:
    """A fio bw log (KiB/s, 1 s windows): 2,000,000 KiB/s for 20 windows, with a 3-window
    dip at windows 8-10 too short to count, then 500,000 KiB/s for 30 windows."""
    values = [2_000_000] * 20 + [500_000] * 30
    values[7:10] = [600_000] * 3
    start = 1_795_000_000_000
    path.write_text(
        "".join(f"{start + 1000 * (i + 1)}, {v}, 1, 0, 0\n" for i, v in enumerate(values))
    )
    return path


def test_cache_end_finds_a_known_knee(tmp_path: Path) -> None:
    log, _ = read_fio_log(_knee_log(tmp_path / "fio_bw.1.log"))
    series = step_series(
        log.select(
            step_index=pl.lit(1),
            t_s=(pl.col("time_ms") - pl.col("time_ms").min() + 1000) / 1000,
            iops=pl.lit(0.0),
            bw_bytes_s=pl.col("bw_bytes_s").cast(pl.Float64),
        ),
        1,
    )
    found = cache_end(series)
    assert found is not None
    assert found.initial_bw_bytes_s == 2_000_000 * 1024
    assert found.end_s == 20.0  # the dip (3 windows) is shorter than the sustain rule
    assert found.end_bytes == (17 * 2_000_000 + 3 * 600_000) * 1024
    assert found.after_bw_bytes_s == 500_000 * 1024
    flat = cache_end(series.head(20))
    assert flat is not None and flat.end_bytes is None and flat.after_bw_bytes_s is None
    assert cache_end(series.head(HEAD_WINDOWS - 1)) is None
    assert cache_end(series, sustain=3).end_s == 7.0  # type: ignore[union-attr]


def test_fill_suite_parses_and_passes_fio_parse_only(tmp_path: Path) -> None:
    proc = ssdlab_cli("run", "fill", "--out", tmp_path / "dry", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    names = [s.name for s in load_suite("fill").all_steps()]
    assert names == [
        "fill-seq-write-128k", "recovery-seq-write-128k", "fill-rand-write-4k",
        "recovery-rand-write-4k",
    ]  # fmt: skip


def test_fill_run_figures_match_fio_logs(run: DriveAnalysis) -> None:
    found = fills(run.steps, run.results.timeseries, run.results.manifest)
    assert [f.step for f in found] == ["fill-seq-write-128k", "fill-rand-write-4k"]
    size = run.results.manifest.target.size_bytes  # type: ignore[union-attr]
    for fill in found:
        assert fill.io_bytes == size  # the whole target, once
        (folder,) = (run.results.path / "steps").glob(f"*-{fill.step}")
        raw = [
            int(line.split(",")[1])
            for line in (folder / "fio_bw.1.log").read_text().split("\n")
            if line
        ]
        assert len(raw) >= HEAD_WINDOWS
        initial = sorted(raw[:HEAD_WINDOWS])[HEAD_WINDOWS // 2] * 1024
        assert fill.cache is not None and fill.cache.initial_bw_bytes_s == initial
        assert fill.recovery is not None and fill.recovery.idle_s == 1.0
        assert fill.recovery.step == fill.step.replace("fill-", "recovery-")


def test_fill_section_renders_the_run(run: DriveAnalysis) -> None:
    section = fill_section(run)
    assert section.missing is None
    for part in section.parts:
        if isinstance(part, alt.TopLevelMixin):
            assert part.to_dict()["datasets"]
        else:
            assert part.rows == 2
    found = fills(run.steps, run.results.timeseries, run.results.manifest)
    first = found[0].cache
    assert first is not None
    assert section.findings[0].startswith("The fill by 128K sequential write at QD1 (")
    assert format_bw(first.initial_bw_bytes_s) in section.findings[0]
    assert any(
        s.startswith("After the fill by 4K random write at QD1 and 1 s idle")
        for s in section.findings
    )
    assert "No Host Idle Recovery" in str(hir_section(run).missing)


def test_fill_first_prepends_a_sequential_fill(tmp_path: Path) -> None:
    suite = parse_suite(
        {
            "name": "s",
            "steps": [{"name": "a", "rw": "randread", "runtime_s": 1, "ioengine": "psync"}],
        },
        tmp_path / "s.toml",
    )
    filled = fill_first(suite, "80%")
    fill, rest = filled.steps[0], filled.steps[1:]
    assert rest == suite.steps and filled.name == suite.name
    assert (fill.name, fill.rw, fill.bs, fill.size, fill.loops) == (
        FILL_FIRST_STEP, "write", "128k", "80%", 1
    )  # fmt: skip
    assert fill.ioengine == "psync" and fill.writes and filled.writes
    assert fill_first(suite, " 62.5% ").steps[0].size == "62.5%"  # type: ignore[union-attr]
    job = tmp_path / "fill.fio"
    job.write_text(job_file(fill, str(tmp_path / "t"), direct=True, header="fill-first"))  # type: ignore[arg-type]
    proc = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "size=80%" in job.read_text()
    with pytest.raises(SuiteError, match="used twice"):
        fill_first(filled, "50%")


@pytest.mark.parametrize("share", ["0%", "120%", "80", "-5%", "eighty%", "80 percent", ""])
def test_fill_first_refuses_bad_shares(share: str) -> None:
    with pytest.raises(SuiteError, match="--fill-first"):
        fill_first(load_suite("quick"), share)

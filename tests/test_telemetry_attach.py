"""``ssdlab power attach``: a trace recorded separately, aligned with the steps of a real run.

The traces are written here from the documented formats with wall-clock times spanning the
tiny run: 6 W inside step 1's measured window, 9 W inside step 2's, 1 W before, between and
during the ramps, and the trace stops halfway through step 2. The windows are derived here
from fio's raw files as fio documents them: with ``log_unix_epoch=1`` and ``log_avg_msec=1000``
the first line of an iops log is the end of the first 1 s window after the ramp, and the job
then runs for the ``runtime`` of its JSON result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ssdlab_cli

import ssdlab

PERIOD_S = 0.05
OFFSET_S = 0.0005  # keeps every sample off the millisecond grid of fio's timestamps


def measured_windows(run: Path) -> list[tuple[float, float, float]]:
    """(start, end, bytes/s) of every step, from fio's raw log and JSON files."""
    windows = []
    for step in sorted((run / "steps").iterdir()):
        first_ms = min(int(p.read_text().split(",", 1)[0]) for p in step.glob("fio_iops.*.log"))
        job = json.loads((step / "fio.json").read_text())["jobs"][0]
        directions = [job[d] for d in ("read", "write", "trim")]
        start = (first_ms - 1000) / 1000
        end = start + max(d["runtime"] for d in directions) / 1000
        windows.append((start, end, float(sum(d["bw_bytes"] for d in directions))))
    return windows


def watts_at(t: float, windows: list[tuple[float, float, float]]) -> float:
    (s1, e1, _), (s2, e2, _) = windows
    return 6.0 if s1 <= t <= e1 else 9.0 if s2 <= t <= e2 else 1.0


def sample_times(windows: list[tuple[float, float, float]]) -> list[float]:
    """Every 50 ms from 1.5 s before step 1 to halfway through step 2."""
    first, stop = windows[0][0] - 1.5, (windows[1][0] + windows[1][1]) / 2
    return [first + OFFSET_S + k * PERIOD_S for k in range(int((stop - first) / PERIOD_S))]


@pytest.fixture
def run(tiny_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(tiny_run, copy)
    return copy


def check_aligned(run: Path, times: list[float]) -> None:
    windows = measured_windows(run)
    power = ssdlab.load(run).power
    first, second = power.rows(named=True)
    start, end, bw = windows[0]
    assert (first["start_s"], first["end_s"]) == pytest.approx((start, end), abs=1e-6)
    assert first["covered"] and first["reason"] is None
    assert first["samples"] == sum(start <= t <= end for t in times)
    # only step 1's 6 W: no sample from the ramp or the idle time around it
    assert (first["avg_w"], first["min_w"], first["max_w"]) == (6.0, 6.0, 6.0)
    assert first["bw_bytes_s"] == bw
    assert first["mb_s_per_w"] == pytest.approx(bw / 1e6 / 6.0)
    assert first["iops_per_w"] == pytest.approx(first["iops"] / 6.0)
    # step 2 is only half covered: reported, never averaged
    start, end, _ = windows[1]
    assert not second["covered"]
    assert (
        second["reason"].startswith("trace ends ") and "before the window end" in second["reason"]
    )
    assert second["samples"] == sum(start <= t <= end for t in times) > 0
    for column in ("avg_w", "min_w", "max_w", "mb_s_per_w", "iops_per_w"):
        assert second[column] is None
    assert second["iops"] > 0

    trace = ssdlab.load(run).power_trace
    step1 = trace.filter(trace["step_index"] == 1)
    assert step1["power_w"].to_list() == [6.0] * step1.height
    # at most one row per second of the 2 s step, times since its measured start
    assert step1["t_s"].floor().to_list() == [0.0, 1.0, 2.0][: step1.height]
    assert step1.height >= 2 and step1["t_s"].min() >= 0
    assert set(trace.filter(trace["step_index"] == 2)["power_w"]) == {9.0}


def test_yokotool_trace_aligns_with_the_steps(run: Path, tmp_path: Path) -> None:
    windows = measured_windows(run)
    times = sample_times(windows)
    trace = tmp_path / "yoko.csv"
    lines = [f"{t:.4f},{watts_at(t, windows)},12.0,{watts_at(t, windows) / 12}" for t in times]
    trace.write_text("T,P,V,I\n" + "\n".join(lines) + "\n")
    proc = ssdlab_cli("power", "attach", run, trace)
    assert proc.returncode == 0, proc.stderr
    assert "not covered: trace ends" in proc.stdout and "covered" in proc.stdout
    assert f"{len(times)} samples" in proc.stderr
    check_aligned(run, times)
    assert (run / "power" / "raw" / "yoko.csv").read_bytes() == trace.read_bytes()
    source = json.loads((run / "power" / "source.json").read_text())
    assert source["source"] == "yokotool" and source["samples"] == len(times)

    again = ssdlab_cli("power", "attach", run, trace)
    assert again.returncode == 1
    assert again.stderr.startswith("error: ") and "--replace" in again.stderr
    shown = ssdlab_cli("power", "show", run, "--format", "json")
    assert json.loads(shown.stdout)[0]["avg_w"] == 6.0


def test_generic_csv_in_milliseconds_and_milliwatts(run: Path, tmp_path: Path) -> None:
    windows = measured_windows(run)
    times = sample_times(windows)
    zero = times[0] - 10
    trace = tmp_path / "meter.csv"
    rows = [f"{(t - zero) * 1000:.1f},{watts_at(t, windows) * 1000:.0f}" for t in times]
    trace.write_text("elapsed_ms,drive_mw\n" + "\n".join(rows) + "\n")
    options = ["--column", "time=elapsed_ms", "--column", "power=drive_mw"]
    options += ["--unit", "time=ms", "--unit", "power=mW", "--start-epoch", repr(zero)]
    proc = ssdlab_cli("power", "attach", run, trace, "--format", "csv", *options)
    assert proc.returncode == 0, proc.stderr
    check_aligned(run, [zero + round((t - zero) * 1000, 1) / 1000 for t in times])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "csv"], "power format 'csv' needs --column"),
        (["--tz", "UTC"], "power format 'yokotool' takes no --tz"),
        (["--format", "quarch2"], "unknown power format 'quarch2'"),
        (["--column", "time"], "--column takes KEY=VALUE"),
    ],
)
def test_attach_option_errors(run: Path, tmp_path: Path, args: list[str], message: str) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("T,P\n1795238675.0,5\n")
    proc = ssdlab_cli("power", "attach", run, trace, *args)
    assert proc.returncode == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (run / "power").exists()


def test_attach_refuses_bad_traces_and_imports(run: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("T,P\n1795238675.0,five\n")
    proc = ssdlab_cli("power", "attach", run, bad)
    assert proc.returncode == 1 and f"error: {bad}: non-numeric value" in proc.stderr
    unknown = tmp_path / "notes.txt"
    unknown.write_text("drive in slot 3\n")
    proc = ssdlab_cli("power", "attach", run, unknown)
    assert proc.returncode == 1 and "not a recognised power file" in proc.stderr
    assert not (run / "power").exists()
    fixtures = Path(__file__).parent / "fixtures"
    imported = tmp_path / "imported"
    assert (
        ssdlab_cli("import", fixtures / "fio" / "fio-2.2.10.json", "--out", imported).returncode
        == 0
    )
    proc = ssdlab_cli(
        "power", "attach", imported, fixtures / "telemetry" / "power" / "yokotool.csv"
    )
    assert proc.returncode == 1 and "not an import" in proc.stderr
    proc = ssdlab_cli("power", "show", run)
    assert proc.returncode == 1 and "no power trace" in proc.stderr

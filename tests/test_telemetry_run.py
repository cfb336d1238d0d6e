"""Telemetry during real runs: SMART snapshots from a COMMAND before and after each step and
power sampled from a command source, on a file target and on a loop device the test attaches.

The SMART command is a script printing ``tests/fixtures/telemetry/run/capture-N.json``
(``smartctl -j -a`` output of an Intel DC SATA drive) one after the other, so every counter
and the WAF of each step are known:

============  ====================  ====================
capture       Host_Writes_32MiB     NAND_Writes_32MiB
============  ====================  ====================
1 before w1   40000                 50000
2 after w1    40100 (+100)          50300 (+300)  WAF 3
3 before w2   40100                 50400 (+100 between steps)
4 after w2    40500 (+400)          50800 (+400)  WAF 1
============  ====================  ====================
"""

from __future__ import annotations

import json
import shutil
import statistics
from itertools import pairwise
from pathlib import Path

import polars as pl
import pytest
from conftest import Loops, needs_loop, smart_tool, ssdlab_cli

import ssdlab
from ssdlab.errors import InputError, SsdlabError
from ssdlab.manifest import Manifest, StepRecord, TargetInfo
from ssdlab.telemetry import frames, store
from ssdlab.telemetry.hooks import PowerHook, SmartHook, telemetry_hooks
from ssdlab.telemetry.power import CommandSampler, PowerTrace

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry" / "run"
UNIT = 32 * 2**20  # bytes per Host_Writes_32MiB / NAND_Writes_32MiB unit
WATTS = 7.25

SUITE = """
name = "two-steps"
description = "Two short steps on the null engine: telemetry wiring, not drive speed."

[defaults]
runtime_s = 1
ramp_s = 0.3
size = "16m"
ioengine = "null"

[[steps]]
name = "randwrite-4k"
rw = "randwrite"
bs = "4k"

[[steps]]
name = "write-128k"
rw = "write"
bs = "128k"
"""


def suite_file(directory: Path, steps: int = 2) -> Path:
    path = directory / "suite.toml"
    text = SUITE if steps == 2 else SUITE[: SUITE.index('[[steps]]\nname = "write-128k"')]
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def telemetry_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run on a file target with --smart COMMAND and --power command:..."""
    work = tmp_path_factory.mktemp("telemetry")
    out = work / "run"
    proc = ssdlab_cli(
        "run",
        suite_file(work),
        "--out",
        out,
        "--smart",
        f"{smart_tool(work)} {{device}}",
        "--power",
        f"command:sh -c 'echo {WATTS}'",
        "--power-interval",
        "0.2",
    )
    assert proc.returncode == 0, proc.stderr
    return out


def load(out: Path, builder: str) -> pl.DataFrame:
    """The frame ``builder`` (e.g. ``smart_frame``) makes of the run ``out``, as loaded."""
    return getattr(ssdlab.load(out), builder.removesuffix("_frame"))


def test_smart_snapshots_around_each_step(telemetry_run: Path) -> None:
    smart = load(telemetry_run, "smart_frame")
    assert list(smart.columns) == list(frames.SMART_SCHEMA)
    assert smart.select("step_index", "step", "phase").rows() == [
        (1, "randwrite-4k", "before"),
        (1, "randwrite-4k", "after"),
        (2, "write-128k", "before"),
        (2, "write-128k", "after"),
    ]
    assert smart["host_bytes_written"].to_list() == [n * UNIT for n in (40000, 40100, 40100, 40500)]
    assert smart["nand_bytes_written"].to_list() == [n * UNIT for n in (50000, 50300, 50400, 50800)]
    assert smart["percent_used"].to_list() == [2, 2, 2, 3]  # 100 - Media_Wearout_Indicator
    assert smart["temperature_c"].to_list() == [30.0, 35.0, 34.0, 38.0]
    assert smart["power_on_hours"].to_list() == [20000, 20000, 20000, 20001]
    assert smart["media_errors"].to_list() == [0] * 4
    assert set(smart.select("model", "serial", "firmware").rows()) == {
        ("INTEL SSDSC2KB038T8", "PHYF000000003P8EGN", "XCV10110")
    }
    # captured in order, each step's "before" ahead of its "after"
    assert smart["time"].is_sorted() and smart["time"].null_count() == 0
    # the tool's raw output is kept as printed, and the command got the target's path
    for n, (step, phase) in enumerate(smart.select("step_index", "phase").rows(), start=1):
        step_dir = next((telemetry_run / "steps").glob(f"{step:03d}-*"))
        kept = step_dir / "smart" / phase / "command.json"
        assert kept.read_bytes() == (FIXTURES / f"capture-{n}.json").read_bytes()
    target = Manifest.load(telemetry_run).target
    assert target is not None and target.kind == "file"
    devices = (telemetry_run.parent / "devices").read_text().split()
    assert devices == [target.path] * 4


def test_waf_per_step_and_cumulative(telemetry_run: Path) -> None:
    waf = load(telemetry_run, "waf_frame")
    assert list(waf.columns) == list(frames.WAF_SCHEMA)
    assert waf.rows(named=True) == [
        {
            "step_index": 1,
            "step": "randwrite-4k",
            "host_bytes": 100 * UNIT,
            "nand_bytes": 300 * UNIT,
            "waf": 3.0,
            "cumulative_host_bytes": 100 * UNIT,
            "cumulative_nand_bytes": 300 * UNIT,
            "cumulative_waf": 3.0,
        },
        {
            "step_index": 2,
            "step": "write-128k",
            "host_bytes": 400 * UNIT,
            "nand_bytes": 400 * UNIT,
            "waf": 1.0,
            # from the first snapshot: the 100 units NAND wrote between the steps count
            "cumulative_host_bytes": 500 * UNIT,
            "cumulative_nand_bytes": 800 * UNIT,
            "cumulative_waf": 1.6,
        },
    ]


def test_endurance_from_drive_spec_and_snapshots(telemetry_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(telemetry_run, run)
    measured_only = dict(load(run, "endurance_frame").select("item", "value").rows())
    assert measured_only == {
        "host written (run)": 500 * UNIT,
        "NAND written (run)": 800 * UNIT,
        "WAF (run)": 1.6,
        "host written (lifetime)": 40500 * UNIT,
        "NAND written (lifetime)": 50800 * UNIT,
        "WAF (lifetime)": pytest.approx(50800 / 40500),
        "percent used": 3.0,
    }
    shutil.copy(FIXTURES / "drive.toml", run / "drive.toml")
    endurance = load(run, "endurance_frame")
    assert list(endurance.columns) == ["item", "value", "unit"]
    units = dict(endurance.select("item", "unit").rows())
    values = dict(endurance.select("item", "value").rows())
    assert list(values) == [i for i in frames.ENDURANCE_ITEMS if i in values]
    assert units["rated endurance"] == "TBW" and units["projected life"] == "years"
    raw_tb = 3.84 * 1.25  # 25 % over-provisioning
    assert values == {
        **measured_only,
        "capacity": 3.84,
        "warranty": 5.0,
        "rated endurance": pytest.approx(7008.0),  # 1 DWPD x 3.84 TB x 365 x 5
        "rated DWPD": 1.0,
        "raw NAND capacity": pytest.approx(4.8),
        "rated P/E cycles": 3000.0,
        # 1,358,954,496,000 B of 7008 TB
        "rated TBW used": pytest.approx(40500 * UNIT / 7008e12 * 100),
        # 1,704,565,145,600 B of NAND over 4.8 TB raw
        "P/E cycles used": pytest.approx(50800 * UNIT / 4.8e12),
        "rated P/E cycles used": pytest.approx(50800 * UNIT / 4.8e12 / 3000 * 100),
        "projection WAF": 1.6,
        "implied P/E cycles": pytest.approx(7008 * 1.6 / raw_tb),  # 2336
        "implied endurance": pytest.approx(3000 * raw_tb / 1.6),  # 9000 TB of host writes
        "daily host writes": 2.0,
        "projected life": pytest.approx(9000 / (2 * 365)),  # 12.33 years
        "projected remaining life": pytest.approx(9000 / (2 * 365) * 0.97),  # 3 % used
    }


def covers(times: list[float], start: float, end: float) -> bool:
    """Whether a trace sampled at ``times`` (sorted) covers the window [start, end]: samples
    in it, and no stretch of it, its ends included, without one for longer than twice the
    trace's median sample interval."""
    allowed = 2 * statistics.median(b - a for a, b in pairwise(times) if b > a)
    points = [start, *(t for t in times if start <= t <= end), end]
    return len(points) > 2 and max(b - a for a, b in pairwise(points)) <= allowed


def test_power_sampled_during_the_run(telemetry_run: Path) -> None:
    power = load(telemetry_run, "power_frame")
    assert list(power.columns) == list(frames.POWER_SCHEMA)
    assert power["step"].to_list() == ["randwrite-4k", "write-128k"]
    # the run waits for the meter's first sample before its first step, and the sampler runs
    # on through the steps (over 2 s; each reading took under its 1 s timeout: no errors,
    # below). Whether each step is covered depends on when the sampler ran (a loaded machine
    # delays it), so it is judged here from the samples recorded, by the rule of
    # ssdlab.telemetry.power.steps (tests/test_telemetry_power.py has traces with known gaps)
    trace = store.read_trace(telemetry_run)
    assert trace is not None
    times = trace["time_s"].sort().to_list()
    first, last = power["start_s"].min(), power["end_s"].max()
    assert times[0] < first and any(first <= t <= last for t in times)
    for row in power.iter_rows(named=True):
        start, end = row["start_s"], row["end_s"]
        assert row["samples"] == sum(start <= t <= end for t in times)
        assert row["covered"] == covers(times, start, end), row["reason"]
        assert (row["reason"] is None) == row["covered"]
        watts = (WATTS,) * 3 if row["covered"] else (None,) * 3
        assert (row["avg_w"], row["min_w"], row["max_w"]) == watts
        step_dir = next((telemetry_run / "steps").glob(f"{row['step_index']:03d}-*"))
        job = json.loads((step_dir / "fio.json").read_text())["jobs"][0]
        bw = sum(job[d]["bw_bytes"] for d in ("read", "write", "trim"))
        assert row["bw_bytes_s"] == bw and 0.9 < end - start < 1.1
        per_watt = (bw / 1e6 / WATTS, row["iops"] / WATTS) if row["covered"] else (None, None)
        assert (row["mb_s_per_w"], row["iops_per_w"]) == pytest.approx(per_watt)
    # every sample went to samples.csv as it came, and the trace holds the same samples
    samples = pl.read_csv(telemetry_run / "power" / "samples.csv")
    assert trace.height == samples.height >= power["samples"].sum()
    assert trace["time_s"].to_list() == samples["time_s"].to_list()
    source = json.loads((telemetry_run / "power" / "source.json").read_text())
    assert source["source"] == "command" and source["interval_s"] == 0.2
    assert source["errors"] == 0 and source["samples"] == trace.height
    per_second = load(telemetry_run, "power_trace_frame")
    assert list(per_second.columns) == list(frames.POWER_TRACE_SCHEMA)
    for (_,), part in per_second.group_by("step_index"):
        assert part["power_w"].to_list() == [WATTS] * part.height
        assert part["t_s"].is_sorted() and part["t_s"].floor().n_unique() == part.height
        assert part["t_s"].min() >= 0 and part["t_s"].max() <= 1.1


def test_file_target_with_auto_records_no_smart(tiny_run: Path) -> None:
    assert not list(tiny_run.glob("steps/*/smart"))
    assert not (tiny_run / "power").exists()
    manifest = Manifest.load(tiny_run)
    assert not any("SMART" in note for note in manifest.notes)
    for builder, schema in (
        ("smart_frame", frames.SMART_SCHEMA),
        ("waf_frame", frames.WAF_SCHEMA),
        ("power_frame", frames.POWER_SCHEMA),
        ("power_trace_frame", frames.POWER_TRACE_SCHEMA),
        ("endurance_frame", frames.ENDURANCE_SCHEMA),
    ):
        frame = load(tiny_run, builder)
        assert frame.is_empty() and dict(frame.schema) == schema, builder


@needs_loop
def test_loop_device_command_gets_the_device_and_auto_notes_why_nothing(
    loops: Loops, tmp_path: Path
) -> None:
    device = loops.blank()
    name = Path(device).name
    suite = suite_file(tmp_path, steps=1)
    with_command = ssdlab_cli(
        "run", suite, "--out", tmp_path / "cmd", "--target", device, "--destroy-data", name,
        "--smart", f"{smart_tool(tmp_path)} {{device}}",
    )  # fmt: skip
    assert with_command.returncode == 0, with_command.stderr
    assert (tmp_path / "devices").read_text().split() == [device, device]
    smart = load(tmp_path / "cmd", "smart_frame")
    assert smart["phase"].to_list() == ["before", "after"]
    assert load(tmp_path / "cmd", "waf_frame")["waf"].to_list() == [3.0]

    auto = ssdlab_cli(
        "run", suite, "--out", tmp_path / "auto", "--target", device, "--destroy-data", name
    )
    assert auto.returncode == 0, auto.stderr
    # no nvme-cli/smartctl here, or smartctl without SMART data for a loop device: a note
    notes = Manifest.load(tmp_path / "auto").notes
    assert any(note.startswith("SmartHook.start:") and device in note for note in notes), notes
    assert "warning: " in auto.stderr
    assert load(tmp_path / "auto", "smart_frame").is_empty()


def _manifest(target: Path) -> Manifest:
    return Manifest(
        run_id="r",
        label="l",
        suite="s",
        target=TargetInfo(path=str(target), kind="file"),
    )


def test_a_capture_that_is_not_smart_data_is_kept_hidden_and_noted(tmp_path: Path) -> None:
    hook = SmartHook("sh -c 'echo {device} is not SMART data; exit 3'")
    hook.start(tmp_path, _manifest(tmp_path / "target"))
    step_dir = tmp_path / "001-x.partial"
    with pytest.raises(SsdlabError, match=r"SMART before: sh -c .* \(exit status 3\)"):
        hook.before_step(step_dir, StepRecord(index=1, name="x", dir="001-x"))
    before = step_dir / "smart" / "before"
    assert [p.name for p in before.iterdir()] == [".command.rejected"]
    assert (
        before / ".command.rejected"
    ).read_text() == f"{tmp_path / 'target'} is not SMART data\n"
    assert store.read_captures(step_dir)["before"]["errors"][0].startswith("sh -c")
    assert store.step_snapshot(step_dir, "before") is None


def test_bad_options_fail_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unknown power source 'watts'.*known: command"):
        telemetry_hooks(power="watts:5")
    with pytest.raises(InputError, match="needs the command"):
        telemetry_hooks(power="command:")
    with pytest.raises(InputError, match="No closing quotation"):
        telemetry_hooks(smart="smartctl -a '/dev/sda")
    assert telemetry_hooks(smart="none") == []
    proc = ssdlab_cli("run", "quick", "--out", tmp_path / "x", "--power", "meter")
    assert proc.returncode == 1 and proc.stderr.startswith("error: unknown power source 'meter'")
    assert not (tmp_path / "x").exists()


def test_power_hook_resumes_after_a_torn_sample_and_keeps_attached_traces(
    tmp_path: Path,
) -> None:
    power = tmp_path / "power"
    power.mkdir()
    (power / "samples.csv").write_text("time_s,power_w\n100.5,4.0\n101.5,6.0\n102.5,")
    hook = PowerHook(CommandSampler(["sh", "-c", "echo 3.5"], interval_s=0.05))
    hook.start(tmp_path, _manifest(tmp_path / "target"))
    hook.finish(tmp_path, _manifest(tmp_path / "target"))
    trace = store.read_trace(tmp_path)
    assert trace is not None
    # the earlier samples, then this session's (the torn line is gone)
    assert trace.head(2).rows() == [(100.5, 4.0), (101.5, 6.0)]
    assert set(trace["power_w"].to_list()[2:]) <= {3.5}
    csv = pl.read_csv(power / "samples.csv")
    assert csv.rows() == trace.rows()

    attached = tmp_path / "attached"
    store.write_trace(attached, PowerTrace(trace, {"source": "yokotool"}))
    refused = PowerHook(CommandSampler(["sh", "-c", "echo 1"], interval_s=0.05))
    with pytest.raises(SsdlabError, match="attached with 'ssdlab power attach'"):
        refused.start(attached, _manifest(tmp_path / "target"))
    refused.finish(attached, _manifest(tmp_path / "target"))  # nothing to stop, nothing written
    assert not (attached / "power" / "samples.csv").exists()


def test_endurance_compare_sets_drives_side_by_side(
    telemetry_run: Path, tiny_run: Path, tmp_path: Path
) -> None:
    rated = tmp_path / "rated"
    shutil.copytree(telemetry_run, rated)
    shutil.copy(FIXTURES / "drive.toml", rated / "drive.toml")
    proc = ssdlab_cli("endurance", "compare", rated, telemetry_run, tiny_run)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout
    # the two runs of one label are told apart by directory; the tiny run has nothing to show
    assert "temporary file (rated)" in table and "temporary file (run)" in table
    assert f"{tiny_run}: no drive spec (drive.toml) and no SMART snapshots" in proc.stderr
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines()]
    rows = {row[0]: row[1:] for row in cells if row}
    assert rows["implied endurance (TBW)"] == ["9,000", "–", "–"]
    assert rows["WAF (run) (ratio)"] == ["1.6", "1.6", "–"]
    assert rows["rated endurance (TBW)"] == ["7,008", "–", "–"]
    assert rows["randwrite-4k"] == ["3", "3", "–"] and rows["write-128k"] == ["1", "1", "–"]
    doc = json.loads(ssdlab_cli("endurance", "compare", rated, tiny_run, "-f", "json").stdout)
    assert [d["label"] for d in doc] == ["temporary file", "test file"]
    items = {row["item"]: row["value"] for row in doc[0]["endurance"]}
    assert items["implied endurance"] == pytest.approx(9000)
    assert [row["waf"] for row in doc[0]["waf"]] == [3.0, 1.0]
    assert doc[1]["endurance"] == [] and doc[1]["waf"] == []

"""``ssdlab act``: native ACT logs (act_latency.py's tables, verdicts, import) and fio trials
(one load, the score search, interruption, block devices), run as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.act import ACT_LIMITS
from ssdlab.analysis import DriveAnalysis
from ssdlab.qos import judge, passed

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = FIXTURES / "act_storage_1x_30s.log"  # real act_storage 6.6 output, 1x, 30 s
ERROR_LOG = FIXTURES / "act_storage_3x_2d_error.log"  # stops at 12 s: can't keep up
US_LOG = FIXTURES / "act_storage_us_2x_20s.log"
SHORT = ["--duration", "2", "--slice", "1", "--hist-msec", "250"]
# 200 reads/s as 1x over 8 small-read jobs (25/s each), no device time (null ioengine); each
# job sleeps at least 30 ms after every read, so it has done at most 1 + t / 30 ms reads by
# t, whatever the machine. 2x (50/s a job) and above can't keep up on any machine: at the
# histogram window at t >= 0.5 s a job is behind by >= 0.5 - (17 + 1) / 50 = 0.14 s, past
# --max-lag 0.12. 1x keeps up unless a job wakes 10 ms late after every read (40 ms a read
# asked, 30 ms slept) or stalls for ~0.16 s at once (the max lag and a read of slack): a 1x
# that passed on ANY machine needs a max lag no slice can exceed (KEEPS_UP), which 2x could
# not exceed either, and a search judges every load with one --max-lag.
CAPPED = [
    *SHORT,
    *("--set", "read-reqs-per-sec=200", "--set", "write-reqs-per-sec=100"),
    *("--small-read-jobs", "8", "--ioengine", "null", "--fio-option", "thinktime=30000"),
    *("--max-lag", "0.12"),
]
# 1x that passes by construction: a lag within a 1 s slice is never above 1 s
KEEPS_UP = [
    *SHORT,
    *("--set", "read-reqs-per-sec=100", "--set", "write-reqs-per-sec=50"),
    *("--small-read-jobs", "1", "--ioengine", "null", "--max-lag", "1"),
]
# what ``act score`` adds after a score from trials of 2 s
SMOKE = (
    "A trial of 2 s is a smoke test of the workload, not an ACT rating: ACT rates a drive by "
    "a run of 24 h judged in slices of 1 h."
)


def record(out: Path) -> dict:
    return json.loads((out / "act.json").read_text())


def test_latency_table_is_act_latency_pys() -> None:
    names = ["reads", "large-block-writes", "/dev/loop0-reads"]
    proc = ssdlab_cli(
        "act", "latency", SAMPLE, "--slice", "10", *(f"--histogram={h}" for h in names)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (FIXTURES / "act_latency_1x_30s_s10.txt").read_text()
    assert proc.stderr == f"{SAMPLE}: passed: 3 slices of 10 s within the limits\n"
    us = ssdlab_cli(
        "act", "latency", US_LOG, "--slice", "4", "--rate", "--histogram", "reads",
        "--histogram", "large-block-reads",
    )  # fmt: skip
    assert us.stdout == (FIXTURES / "act_latency_us_2x_20s_s4_x.txt").read_text()
    # 0.13 % of reads over 65536 us (the "64 ms" bucket) in slice 2: the log fails
    assert us.returncode == 1
    assert us.stderr == f"{US_LOG}: failed: slice 2: 0.13 % of reads >= 64 ms (limit 0.1 %)\n"


def test_latency_csv_and_json() -> None:
    csv = ssdlab_cli("act", "latency", SAMPLE, "--slice", "10", "--format", "csv")
    assert csv.returncode == 0, csv.stderr
    lines = csv.stdout.splitlines()
    assert lines[0] == "histogram,slice,pct_over_1ms,pct_over_8ms,pct_over_64ms,rate"
    assert lines[1:6] == [
        "reads,1,1.05,0.26,0.0,2000.0",
        "reads,2,1.35,0.27,0.0,2000.0",
        "reads,3,0.81,0.05,0.0,2000.0",
        "reads,avg,1.07,0.19,0.0,2000.0",
        "reads,max,1.35,0.27,0.0,2000.0",
    ]
    assert lines[-1] == "large-block-writes,max,5.53,2.13,0.0,23.6"
    assert len(lines) == 1 + 4 * 5  # every histogram of the log
    rows = json.loads(
        ssdlab_cli(
            "act", "latency", SAMPLE, "--slice", "30", "--thresholds", "2,32", "-f", "json",
            "--histogram", "reads",
        ).stdout
    )  # fmt: skip
    assert rows[0] == {
        "histogram": "reads",
        "slice": "1",
        "pct_over_2ms": 0.57,
        "pct_over_32ms": 0.02,
        "rate": 2000.0,
    }


def test_log_that_stopped_with_an_error_fails() -> None:
    proc = ssdlab_cli("act", "latency", ERROR_LOG, "--slice", "4", "--histogram", "reads")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[4] == "    1     9.81   0.68   0.00"
    assert proc.stderr == (
        f"{ERROR_LOG}: failed (can't keep up): ACT stopped after 12 s: ERROR: large block "
        "writes can't keep up\n"
    )
    early = ssdlab_cli("act", "latency", ERROR_LOG)  # stopped long before a 1-hour slice
    assert (early.returncode, early.stdout) == (1, "")
    assert early.stderr.startswith(f"{ERROR_LOG}: failed (can't keep up): ACT stopped after 12")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([SAMPLE], f"error: {SAMPLE}: could not find 3600 seconds of data (reports end at 30 s)"),
        ([SAMPLE, "--slice", "10", "--thresholds", "10"], "threshold 10 ms is not an ACT bucket"),
        ([SAMPLE, "--thresholds", "1,x"], "--thresholds takes numbers like 1,8,64, not '1,x'"),
        ([SAMPLE, "--slice", "10", "--histogram", "writes"], "no histogram 'writes'; it has "),
        ([FIXTURES / "missing.log"], "missing.log: cannot read"),
    ],
)
def test_latency_errors_are_one_line(args: list, message: str) -> None:
    proc = ssdlab_cli("act", "latency", *args)
    assert proc.returncode == 1 and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_import_native_logs(tmp_path: Path) -> None:
    out = tmp_path / "native"
    first = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", "10")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "trial 1 (1x, native): passed: 3 slices of 10 s within the limits\n"
    # a log of another device than loop0's joins only as such, left out of the score
    second = ssdlab_cli(
        "act", "import", ERROR_LOG, "--out", out, "--slice", "4", "--other-device"
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    results = ssdlab.load(out)
    assert results.manifest.source == "import" and results.manifest.label == "/dev/loop0"
    shown = results.act_trials.select("trial", "load", "status", "source", "duration_s")
    assert shown.rows() == [
        (1, 1.0, "passed", "native", 30),
        (2, 3.0, "cant_keep_up", "native", 600),
    ]
    assert results.act_trials["other_device"].to_list() == [False, True]
    assert results.act_trials["max_pct_over_1ms"].to_list() == [1.35, 40.11]
    slices = results.act_slices.filter(pl.col("trial") == 1)
    assert slices.select("slice", "start_s", "end_s", "pct_over_1ms", "read_rate").rows() == [
        (1, 0, 10, 1.05, 2000.0),
        (2, 10, 20, 1.35, 2000.0),
        (3, 20, 30, 0.81, 2000.0),
    ]
    kept = record(out)["trials"][1]["log"]
    assert (out / kept).read_bytes() == ERROR_LOG.read_bytes()
    bad = ssdlab_cli("act", "import", SAMPLE, "--out", tmp_path / "x")  # 1-hour slices
    assert bad.returncode == 1 and "could not find 3600 seconds" in bad.stderr
    assert not (tmp_path / "x" / "manifest.json").exists()


def test_a_qos_check_leaves_another_devices_trial_out(tmp_path: Path) -> None:
    out = tmp_path / "native"
    for log, slice_s, *other in ((SAMPLE, 10), (ERROR_LOG, 4, "--other-device")):
        proc = ssdlab_cli("act", "import", log, "--out", out, "--slice", slice_s, *other)
        assert proc.returncode == 0, proc.stderr
    verdicts = judge(DriveAnalysis(ssdlab.load(out)), "act")
    judged = verdicts.filter(pl.col("target") == "ACT trials")
    # trial 2 could not keep up on its own device: judged, it would fail the profile
    assert judged["step"].unique().to_list() == ["ACT trial 1 at 1x"]
    assert set(judged["verdict"]) == {"pass"} and passed(verdicts)
    assert all(
        n.startswith("another device's trial 2 left out; worst of 3 ") for n in judged["note"]
    )


def test_config_prints_acts_derived_block() -> None:
    proc = ssdlab_cli("act", "config", "--load", "3", "--set", "record-bytes=1500")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "DERIVED CONFIGURATION\n"
        "record-stored-bytes: 1504 ... 1504\n"
        "internal-read-reqs-per-sec: 6000\n"
        "internal-write-reqs-per-sec: 0\n"
        "large-block-reads-per-sec: 68.97\n"  # 3000 / floor(131072 / 1504) x 2
        "large-block-writes-per-sec: 68.97\n"
    )
    job = ssdlab_cli("act", "config", "--fio", "/dev/nvme9n9").stdout
    assert "\n[act-small-reads]\nrw=randread\nbs=1536\n" in job
    assert "filename=/dev/nvme9n9" in job
    for args, message in [
        (["--set", "record-bytes=big"], "error: --set record-bytes: Input should be a valid"),
        (["--set", "record-bytes"], "error: --set takes name=value, not 'record-bytes'"),
        (["--set", "read-reqs=1"], "error: --set read-reqs: Extra inputs are not permitted"),
        (["--load", "0"], "error: --load must be positive and finite, not 0\n"),
        (["--load", "-1"], "error: --load must be positive and finite, not -1\n"),
        (["--load", "0.0001"], "error: 0.0001x load: read-reqs-per-sec and write-reqs-per-sec"),
    ]:
        proc = ssdlab_cli("act", "config", *args)
        assert proc.returncode == 1 and proc.stderr.startswith(message), proc.stderr


@pytest.mark.slow
def test_run_emulates_act_on_a_file_and_sits_beside_native_logs(tmp_path: Path) -> None:
    out, target = tmp_path / "act", tmp_path / "target.dat"
    for load in (1, 2):
        proc = ssdlab_cli(
            "act", "run", "--load", load, "--out", out, "--target", target,
            "--target-size", "64m", "--label", "test file", *SHORT,
        )  # fmt: skip
        trial = record(out)["trials"][-1]
        assert proc.returncode == (0 if trial["status"] == "passed" else 1), proc.stderr
        assert f"trial {load}: {load}x load on {target}\nDERIVED CONFIGURATION\n" in proc.stderr
        assert f"internal-read-reqs-per-sec: {2000 * load}\n" in proc.stderr
    # loop0's log beside trials on target.dat: another device's
    native = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", "10", "--other-device")
    assert native.returncode == 0, native.stderr

    results = ssdlab.load(out)
    trials, slices = results.act_trials, results.act_slices
    assert trials.select("trial", "load", "source", "other_device").rows() == [
        (1, 1.0, "fio", False),
        (2, 2.0, "fio", False),
        (3, 1.0, "native", True),
    ]
    fio = slices.filter(pl.col("trial") <= 2)
    assert fio["requested_read_rate"].unique().sort().to_list() == [2000, 4000]
    for s in fio.iter_rows(named=True):
        # never above the request; a loaded machine may fall short, never to half
        assert 0.5 <= s["read_rate"] / s["requested_read_rate"] <= 1.05
        within = all(s[f"pct_over_{t:g}ms"] < limit for t, limit in ACT_LIMITS.items())
        assert s["passed"] == within
    for t in trials.filter(pl.col("source") == "fio").iter_rows(named=True):
        assert t["passed"] == (t["status"] == "passed")
        of_trial = fio.filter(pl.col("trial") == t["trial"])
        assert t["max_pct_over_1ms"] == of_trial["pct_over_1ms"].max()
    # the raw fio results load like any run's: 10 small-read clones (5 x 2 CPUs) + 2 jobs
    assert results.manifest.label == "test file"
    small = results.summary.filter(pl.col("jobname") == "act-small-reads")
    assert small.group_by("step").len()["len"].to_list() == [10] * fio.height
    step = out / "steps" / results.manifest.steps[0].dir
    assert len(list(step.glob("act-small-reads_clat_hist.*.log"))) == 10
    assert not list(step.glob("*_lat.*.log"))  # no per-I/O latency logs


@pytest.mark.slow
def test_score_finds_the_controlled_boundary_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "score"
    args = ["act", "score", "--out", out, "--target", tmp_path / "t.dat", *CAPPED]
    proc = ssdlab_cli(*args, "--start", "4")  # an upper bound, then bisection
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "ACT score: 1x, the highest load that passed; 2x failed (trials of 2 s judged in "
        f"slices of 1 s; tried 4x, 2x, 1x; resolution 1)\n{SMOKE}\n"
    )
    trials = ssdlab.load(out).act_trials
    assert trials.select("load", "status").rows() == [
        (4.0, "cant_keep_up"),
        (2.0, "cant_keep_up"),
        (1.0, "passed"),
    ]
    steps = len(json.loads((out / "manifest.json").read_text())["steps"])
    assert steps == 1 + 1 + 2  # a failing trial stops at its first failing slice
    doubling = ssdlab_cli(*args)  # 1x, 2x: both judged already, nothing runs again
    assert doubling.stdout == (
        "ACT score: 1x, the highest load that passed; 2x failed (trials of 2 s judged in "
        f"slices of 1 s; tried 1x, 2x; resolution 1)\n{SMOKE}\n"
    )
    assert doubling.stderr.count("(judged earlier)") == 2
    assert len(json.loads((out / "manifest.json").read_text())["steps"]) == steps
    none = ssdlab_cli(*args, "--start", "2", "--resolution", "2")
    assert (none.returncode, none.stdout) == (
        1,
        "no load passed in trials of 2 s judged in slices of 1 s (tried 2x)\n",
    )


@pytest.mark.slow
def test_interrupted_trial_keeps_what_it_measured(tmp_path: Path) -> None:
    out = tmp_path / "act"
    cmd = [sys.executable, "-m", "ssdlab", "act", "run", "--load", "1", "--out", str(out)]
    cmd += ["--duration", "60", "--slice", "1", "--hist-msec", "250", "--ioengine", "null"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    started = out / "steps" / "002-trial-01-slice-002.partial" / "fio.json"
    while not started.exists() and proc.poll() is None:  # fio runs the second slice
        os.sched_yield()
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted during trial 1, slice 2; results so far are in" in stderr
    trial = record(out)["trials"][0]
    assert (trial["status"], trial["reason"]) == ("abandoned", "interrupted during slice 2")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert [s["status"] for s in manifest["steps"]] == ["ok", "interrupted"]
    assert (out / "steps" / "002-trial-01-slice-002" / "job.fio").exists()
    results = ssdlab.load(out)
    assert results.act_trials["status"].to_list() == ["abandoned"]
    assert results.act_slices["slice"].to_list() == [1]
    assert "trial-01-slice-001" in results.summary["step"].to_list()


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("loop devices need root and losetup")
    image = tmp_path / "loop.img"
    with image.open("wb") as fh:
        fh.truncate(64 << 20)
    attach = subprocess.run(
        ["losetup", "--find", "--show", image], capture_output=True, text=True, check=False
    )
    if attach.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device: {attach.stderr.strip()}")
    device = attach.stdout.strip()
    yield device
    subprocess.run(["losetup", "--detach", device], check=False)


@pytest.mark.slow
def test_block_device_needs_confirmation(loop_device: str, tmp_path: Path) -> None:
    out = tmp_path / "act"
    args = ["act", "run", "--load", "1", "--out", out, "--target", loop_device, *SHORT]
    refused = ssdlab_cli(*args)
    assert refused.returncode == 1 and "--destroy-data" in refused.stderr
    assert not (out / "act.json").exists()
    proc = ssdlab_cli(*args, "--destroy-data", Path(loop_device).name)
    trial = record(out)["trials"][0]
    assert proc.returncode == (0 if trial["status"] == "passed" else 1), proc.stderr
    assert len(trial["slices"]) >= 1 and trial["slices"][0]["requested_read_rate"] == 2000
    results = ssdlab.load(out)
    assert results.manifest.target.kind == "block"
    job = out / "steps" / results.manifest.steps[0].dir / "job.fio"
    assert f"filename={loop_device}" in job.read_text()


def test_act_guarded_fio_options_need_an_opt_in(tmp_path: Path) -> None:
    args = ["act", "run", "--load", "1", "--out", tmp_path / "o", "--target", tmp_path / "t"]
    args += [*KEEPS_UP, "--fio-option", f"exec_prerun={tmp_path / 'prerun.sh'}"]
    script = tmp_path / "prerun.sh"
    script.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    script.chmod(0o755)
    refused = ssdlab_cli(*args)
    assert refused.returncode == 1 and "--allow-fio-option exec_prerun" in refused.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "o" / "act.json").exists()
    allowed = ssdlab_cli(*args, "--allow-fio-option", "exec_prerun")
    assert allowed.returncode == 0, allowed.stderr
    assert (tmp_path / "ran").exists()
    assert record(tmp_path / "o")["trials"][0]["settings"]["allowed_fio_options"] == ["exec_prerun"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--load", "-1"], "--load must be positive and finite, not -1"),
        (["score", "--max-load", "nan"], "--max-load must be positive and finite, not nan"),
        (
            ["score", "--start", "4", "--max-load", "2"],
            "--max-load (2) must be at least --start (4)",
        ),
    ],
)
def test_bad_loads_are_refused_before_anything_is_created(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = ssdlab_cli("act", *args, "--out", tmp_path / "o", "--target", tmp_path / "t")
    assert (proc.returncode, proc.stderr) == (1, f"error: {message}\n")
    assert not (tmp_path / "o").exists() and not (tmp_path / "t").exists()


def test_run_refuses_a_bad_target_size_in_one_line(tmp_path: Path) -> None:
    proc = ssdlab_cli("act", "run", "--load", "1", "--out", tmp_path / "o", "--target-size", "x")
    assert (proc.returncode, proc.stderr) == (
        1,
        "error: --target-size: not a size: 'x' (10GB is 10 x 10^9 bytes, 10GiB and 10g are "
        "10 x 2^30, a plain number is bytes)\n",
    )
    assert not (tmp_path / "o").exists()

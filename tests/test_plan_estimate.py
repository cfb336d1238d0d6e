"""Size-based steps are estimated from their bytes and a rate, never from their time cap
alone: a rate an earlier step measured (fio's own bytes over its runtime), else the target
class's default; the cap still bounds it; the plan and the run's display use the estimate."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, sh

from ssdlab.estimate import (
    DEFAULTS,
    RUN_START_S,
    STEP_START_S,
    Rates,
    in_flight,
    mean_io_bytes,
    target_class,
)
from ssdlab.io.fio_json import read_fio_json
from ssdlab.manifest import TargetInfo
from ssdlab.plan import plan
from ssdlab.runner import RunOptions
from ssdlab.suite import Step

MIB = 2**20

SIZED = """
name = "sized"

[[steps]]
name = "fill-seq-write-128k"
rw = "write"
bs = "128k"
size = "100%"
loops = 3
runtime_s = 86400
ioengine = "null"

[[steps]]
name = "read-4k"
rw = "randread"
bs = "4k"
size = "8m"
runtime_s = 2
ramp_s = 0.5
ioengine = "null"
"""


def _fio_jobs(tmp_path: Path, rw: str, bs: str, *options: str) -> object:
    """fio's rows of a real, tiny null-engine run of ``rw`` at ``bs``."""
    out = tmp_path / f"{rw}-{bs}.json"
    subprocess.run(
        ["fio", "--name=m", "--ioengine=null", f"--rw={rw}", f"--bs={bs}", "--size=64m",
         "--output-format=json+", f"--output={out}", *options],
        check=True, capture_output=True,
    )  # fmt: skip
    return read_fio_json(out).jobs


def _step(**update: object) -> Step:
    given = {"name": "fill", "rw": "write", "bs": "128k", "size": "32m", "loops": 2}
    return Step.model_validate(given | {"runtime_s": 86400, "ioengine": "null"} | update)


def test_a_measured_rate_gives_bytes_over_rate_and_the_cap_bounds_it(tmp_path: Path) -> None:
    jobs = _fio_jobs(tmp_path, "write", "128k")
    moved, runtime = int(jobs["io_bytes"].sum()), float(jobs["runtime_s"].max())
    measured = Step.model_validate(
        {"name": "m", "rw": "write", "bs": "128k", "runtime_s": 1, "ioengine": "null"}
    )
    rates = Rates.of(None, 2**30).learned(measured, jobs)
    fill = rates.step_time(_step())
    assert fill.planned_bytes == 2 * 32 * MIB
    assert fill.rate is not None and fill.rate.bytes_s == pytest.approx(moved / runtime)
    assert fill.seconds == pytest.approx(STEP_START_S + 2 * 32 * MIB * runtime / moved)
    assert "measured in step m" in fill.describe() and not fill.capped
    capped = rates.step_time(_step(runtime_s=1e-6, size="1g"))  # the cap ends it first
    assert capped.capped and capped.seconds == pytest.approx(STEP_START_S + 1e-6)
    # a smaller block: no more IOPS than measured; another direction: the class default
    small = rates.rate(_step(bs="4k"))
    iops = float(jobs["total_ios"].sum()) / runtime
    assert small.bytes_s == pytest.approx(min(moved / runtime, iops * 4096))
    # a step with more I/Os in flight: faster by Little's law, up to the larger of the
    # measured and the class's top MB/s; fewer: slower in proportion
    deeper = rates.rate(_step(iodepth=8, ioengine="libaio"))
    top = max(moved / runtime, DEFAULTS["device"].bw_bytes_s)
    faster = min(iops * 8, max(iops, DEFAULTS["device"].seq_iops))
    assert deeper.bytes_s == pytest.approx(min(faster * 128 * 1024, top))
    deep = measured.model_copy(update={"name": "deep", "iodepth": 8, "ioengine": "libaio"})
    both = rates.learned(deep, jobs)
    shallow = both.rate(_step(iodepth=4, ioengine="libaio"))  # nearest in flight: deep's
    assert shallow.source == "measured in step deep"
    assert shallow.bytes_s == pytest.approx(iops * 4 / 8 * 128 * 1024)
    assert both.rate(_step()).source == "measured in step m"  # one in flight, as m
    read = rates.rate(_step(rw="read"))
    assert read.bytes_s == DEFAULTS["device"].bw_bytes_s and "default" in read.source
    # a rate-limited step measures its limit, not the target: not learned
    held = measured.model_copy(update={"options": {"rate": "1m"}})
    assert Rates.of(None, 2**30).learned(held, jobs).measured == {}


def test_target_classes_and_their_defaults(tmp_path: Path) -> None:
    file = TargetInfo(path=str(tmp_path / "not-yet.bin"), kind="file")
    assert target_class(file) == "file"  # tmp_path is on a disk's file system here
    assert target_class(file.model_copy(update={"direct_supported": False})) == "memory"
    assert target_class(TargetInfo(path="/dev/loop9", kind="block")) == "device"
    shm = Path("/dev/shm")
    if shm.is_dir():
        assert target_class(TargetInfo(path=str(shm / "x.bin"), kind="file")) == "memory"
    rates, default = Rates.of(file, 64 * MIB), DEFAULTS["file"]
    fill = _step(rw="randwrite", bs="4k", size="100%", loops=1, ioengine="libaio")
    # Little's law: one I/O in flight does 1 / latency IOPS; deep queues the class's top
    qd1 = 1 / default.latency_s
    assert qd1 < default.rand_iops
    assert rates.rate(fill).bytes_s == pytest.approx(qd1 * 4096)
    assert rates.seconds(fill) == pytest.approx(STEP_START_S + 64 * MIB / (qd1 * 4096))
    deep = fill.model_copy(update={"iodepth": 32, "numjobs": 4})
    assert in_flight(deep) == 128
    assert rates.rate(deep).bytes_s == pytest.approx(default.rand_iops * 4096)
    jobs = fill.model_copy(update={"numjobs": 2})
    assert rates.rate(jobs).bytes_s == pytest.approx(2 * qd1 * 4096)
    # a synchronous engine has one I/O in flight per job whatever its iodepth
    sync = deep.model_copy(update={"ioengine": "psync", "numjobs": 1})
    assert in_flight(sync) == 1 and rates.rate(sync) == rates.rate(fill)
    delayed = _step(loops=None, runtime_s=2, options={"startdelay": "1m"})
    assert rates.seconds(delayed) == pytest.approx(STEP_START_S + 60 + 2)


def test_the_plan_estimates_size_based_steps_from_their_bytes(tmp_path: Path) -> None:
    suite = tmp_path / "sized.toml"
    suite.write_text(SIZED)
    planned = plan(RunOptions(suite, tmp_path / "out", target_size=32 * MIB))
    estimate = planned.estimate
    assert planned.problems == [] and estimate.target_class == "file"
    assert estimate.from_bytes == ["fill-seq-write-128k"]
    fill = estimate.steps["fill-seq-write-128k"]
    rate = DEFAULTS["file"].bw_bytes_s
    assert fill.planned_bytes == 3 * 32 * MIB and not fill.capped
    assert fill.seconds == pytest.approx(STEP_START_S + 3 * 32 * MIB / rate)
    read = estimate.steps["read-4k"]
    assert read.planned_bytes is None and read.seconds == pytest.approx(STEP_START_S + 2.5)
    total = RUN_START_S + fill.seconds + read.seconds  # and the run's own start, once
    assert estimate.seconds == pytest.approx(total) == estimate.steady_s
    assert estimate.seconds < 60  # not the fill's 24-hour cap


JESD219_SPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"


def test_mixed_block_sizes_are_rated_by_their_mean_io(tmp_path: Path) -> None:
    """A bssplit step's I/Os average its split's weighted mean (JESD219's: 7.635 KiB, not
    its nominal 4k): a like step is estimated at the bytes/s fio measured, not at its IOPS x
    the nominal block; a step fio counted no I/Os of teaches nothing."""
    split = {"bssplit": JESD219_SPLIT}
    step = _step(rw="randwrite", bs="4k", options=split)
    assert mean_io_bytes(step) == pytest.approx(7.635 * 1024)
    assert mean_io_bytes(_step(options={"bssplit": "4k/50:64k,8k"})) == 8192  # write list
    assert mean_io_bytes(_step(rw="read", options={"bssplit": "4k/50:60k,8k"})) == 32 * 1024
    assert mean_io_bytes(_step(options={"bsrange": "4k-12k"})) == 8192
    jobs = _fio_jobs(tmp_path, "randwrite", "4k", f"--bssplit={JESD219_SPLIT}")
    moved, runtime = int(jobs["io_bytes"].sum()), float(jobs["runtime_s"].max())
    measured = step.model_copy(update={"name": "m", "loops": None, "runtime_s": 1})
    rates = Rates.of(None, 2**30).learned(measured, jobs)
    assert rates.rate(step).bytes_s == pytest.approx(moved / runtime, rel=0.05)
    none = jobs.with_columns(total_ios=0)
    assert Rates.of(None, 2**30).learned(measured, none).measured == {}


def test_steps_run_in_lockstep_are_planned_at_the_slowest_member(tmp_path: Path) -> None:
    """A lockstep run's rates: the slowest class among its members (another machine's file:
    a file on disk, its path not looked at here) and the largest size, unknown when one is."""
    here = TargetInfo(path=str(tmp_path / "a.bin"), kind="file", size_bytes=2**30)
    there = TargetInfo(path="/dev/shm/x.bin", kind="file", size_bytes=2**31)
    assert Rates.slowest([(there, False)]).target_class == "file"
    both = Rates.slowest([(here, True), (there, False)])
    assert (both.target_class, both.target_bytes) == ("file", 2**31)
    device = TargetInfo(path="/dev/nvme7n1", kind="block")  # a remote device: size unknown
    mixed = Rates.slowest([(here, True), (device, False)])
    assert (mixed.target_class, mixed.target_bytes) == ("device", None)
    assert Rates.slowest([]).target_class == "device"


@needs_loop  # root, to mount a tmpfs
def test_a_plan_of_several_targets_plans_as_their_lockstep_run(
    tmp_path: Path, loops: Loops
) -> None:
    """Targets run in lockstep are planned with the slowest member's class, as the run's bar
    plans them: a file in memory (on a tmpfs this test mounts) beside a file on disk plans
    as a file on disk."""
    suite = tmp_path / "sized.toml"
    suite.write_text(SIZED)
    (tmp_path / "mnt-tmpfs").mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", tmp_path / "mnt-tmpfs")
    loops.mounted.append(tmp_path / "mnt-tmpfs")  # unmounted by the fixture
    memory, disk = tmp_path / "mnt-tmpfs" / "memory.bin", tmp_path / "disk.bin"
    options = RunOptions(suite, tmp_path / "out", targets=[memory, disk], target_size=32 * MIB)
    planned = plan(options)
    assert planned.kind == "targets" and not memory.exists() and not disk.exists()
    classes = {target_class(t.target) for t in planned.targets if t.target is not None}
    assert classes == {"memory", "file"} and planned.estimate.target_class == "file"
    alone = plan(RunOptions(suite, tmp_path / "one", targets=[memory], target_size=32 * MIB))
    assert alone.estimate.target_class == "memory"
    assert alone.estimate.seconds < planned.estimate.seconds

"""ACT trials as a library: fio slices judged from real runs, native logs judged by ACT's
rule, the act.json record and the act_trials / act_slices frames.

The fio trials use the ``null`` ioengine (no device time) with ``thinktime=2000``: each
small-read job sleeps at least 2 ms after every read, so one job completes at most 500
reads/s, whatever the machine. Verdicts hold by construction, never by a time margin: 4x
(800 reads/s) is always behind by more than its max lag; 1x runs with a max lag as long as
its slices, which no slice can exceed, however late a loaded machine wakes fio (and null
reads take microseconds, far from 1 ms); the limits themselves are judged on real slices
whose histogram logs are rewritten with exact counts.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console
from test_act_histogram import row, write_log

import ssdlab
from ssdlab.act import ActRecord, FioSettings, native_trial, read_act_log
from ssdlab.act.frames import SLICES_SCHEMA, TRIALS_SCHEMA, slices_frame, trials_frame
from ssdlab.act.run import ActRunner
from ssdlab.act.trials import judge_fio_slice
from ssdlab.errors import InputError, SsdlabError
from ssdlab.io import read_fio_json
from ssdlab.manifest import Manifest
from ssdlab.pipeline import RunContext

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = FIXTURES / "act_storage_1x_30s.log"
ERROR_LOG = FIXTURES / "act_storage_3x_2d_error.log"

CAPPED = FioSettings(
    config={"read-reqs-per-sec": 200, "write-reqs-per-sec": 100, "service-threads": 2},
    hist_msec=250,
    small_read_jobs=1,
    ioengine="null",
    fio_options={"thinktime": "2000"},
    # 4x asks 800 reads/s of at most 1 + t / 2 ms reads by t: at its first histogram window
    # (t >= 0.25 s) it is behind by >= 0.25 - 127 / 800 = 0.091 s, past this at any speed
    max_lag_s=0.05,
)
# a lag is t - (done + 1) / rate at a time t within the slice: never above a 1 s slice
KEEPS_UP = CAPPED.model_copy(update={"max_lag_s": 1.0})


def runner(out: Path, target: Path) -> ActRunner:
    return ActRunner(out, target=target, target_size=16 << 20, console=Console(quiet=True))


@pytest.fixture(scope="module")
def capped_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Trial 1 at 1x (passes, 2 slices of 1 s), trial 2 at 4x (can't keep up in slice 1)."""
    base = tmp_path_factory.mktemp("act")
    with runner(base / "out", base / "target.dat") as act:
        act.trial(1, KEEPS_UP, duration_s=2, slice_s=1)
        act.trial(4, CAPPED, duration_s=2, slice_s=1)
    return base / "out"


def test_trials_are_judged_and_kept_as_results_steps(capped_run: Path) -> None:
    record = ActRecord.load(capped_run)
    first, second = record.trials
    assert (first.status, len(first.slices)) == ("passed", 2)
    assert first.reason == "2 slices of 1 s within the limits"
    assert all(s.passed and s.requested_read_rate == 200 for s in first.slices)
    # 800 reads/s asked of at most 500 (see CAPPED)
    assert (second.status, len(second.slices)) == ("cant_keep_up", 1)
    lagging = second.slices[0]
    assert not lagging.passed and lagging.lagging_job == "act-small-reads"
    assert lagging.lag_s > 0.09 and lagging.read_rate <= 505
    assert second.reason.startswith("slice 1: act-small-reads fell ")
    reads = re.search(r"; reads (\d+)/s of 800/s requested$", second.reason)
    assert reads is not None and int(reads[1]) == round(lagging.read_rate) <= 505

    manifest = Manifest.load(capped_run)
    assert manifest.suite == "act" and manifest.status == "complete"
    assert [(s.name, s.block, s.round, s.status) for s in manifest.steps] == [
        ("trial-01-slice-001", "trial-1", 1, "ok"),
        ("trial-01-slice-002", "trial-1", 2, "ok"),
        ("trial-02-slice-001", "trial-2", 1, "ok"),
    ]
    job = (capped_run / "steps" / "001-trial-01-slice-001" / "job.fio").read_text()
    assert "internal-read-reqs-per-sec: 200" in job and "thinktime=2000" in job
    assert "\nrate_iops=200\n" in job  # the one small-read job asks the whole rate
    summary = ssdlab.load(capped_run).summary
    assert set(summary["block"]) == {"trial-1", "trial-2"}
    assert set(summary["jobname"]) == {
        "act-small-reads",
        "act-large-block-reads",
        "act-large-block-writes",
    }
    # read rates are fio's own of the small reads, never above the request (a loaded
    # machine may fall short: by how much is for the lag to judge)
    small = summary.filter(pl.col("jobname") == "act-small-reads")
    for s in (*first.slices, lagging):
        assert s.read_rate == round(small.filter(pl.col("step") == s.step)["iops"].sum(), 1)
    assert all(0 < s.read_rate <= 200 * 1.05 for s in first.slices)


def test_frames(capped_run: Path) -> None:
    results = ssdlab.load(capped_run)
    trials, slices = results.act_trials, results.act_slices
    assert trials.schema == TRIALS_SCHEMA and slices.schema == SLICES_SCHEMA
    assert trials.select("trial", "load", "status", "passed", "source").rows() == [
        (1, 1.0, "passed", True, "fio"),
        (2, 4.0, "cant_keep_up", False, "fio"),
    ]
    assert trials.select("duration_s", "slice_s").unique().rows() == [(2, 1)]
    assert slices.select("trial", "slice", "start_s", "end_s", "passed").rows() == [
        (1, 1, 0, 1, True),
        (1, 2, 1, 2, True),
        (2, 1, 0, 1, False),
    ]
    assert slices["requested_read_rate"].to_list() == [200, 200, 800]


def test_judged_trials_are_reused(capped_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(capped_run, out)
    target = Path(Manifest.load(out).target.path)
    with runner(out, target) as act:
        assert act.trial(4, CAPPED, duration_s=2, slice_s=1).trial == 2
    assert len(Manifest.load(out).steps) == 3 and len(ActRecord.load(out).trials) == 2


def test_slice_over_a_latency_limit_fails(capped_run: Path, tmp_path: Path) -> None:
    step = tmp_path / "step"
    shutil.copytree(capped_run / "steps" / "001-trial-01-slice-001", step)
    # the same job's log, rewritten: 1000 reads, 60 of them at 1.2 ms and 5 at 9 ms
    write_log(
        next(step.glob("act-small-reads_clat_hist.*.log")),
        [row(250, {100_000: 935, 1_200_000: 60, 9_000_000: 5})],
    )
    fio = read_fio_json(step / "fio.json")
    result, reason, status = judge_fio_slice(step, fio, slice_no=3, slice_s=1, max_lag_s=10)
    assert (status, result.passed, result.reads) == ("failed", False, 1000)
    assert (result.pct_over_1ms, result.pct_over_8ms, result.pct_edge_1ms) == (6.5, 0.5, 0.0)
    assert reason == "slice 3: 6.50 % of reads >= 1 ms (limit 5 %)"


def test_slice_within_the_limits_passes_and_a_lag_over_max_lag_cannot_keep_up(
    capped_run: Path, tmp_path: Path
) -> None:
    step = tmp_path / "step"
    shutil.copytree(capped_run / "steps" / "001-trial-01-slice-001", step)
    # 1000 reads, 4.9 % >= 1 ms and 0.9 % >= 8 ms (just within), logged at 0.25 and 0.75 s
    write_log(
        next(step.glob("act-small-reads_clat_hist.*.log")),
        [row(250, {100_000: 500}), row(750, {100_000: 451, 1_200_000: 40, 9_000_000: 9})],
    )
    fio = read_fio_json(step / "fio.json")
    result, reason, status = judge_fio_slice(step, fio, slice_no=2, slice_s=1, max_lag_s=1)
    assert (status, reason, result.passed, result.reads) == ("passed", None, True, 1000)
    assert (result.pct_over_1ms, result.pct_over_8ms) == (4.9, 0.9)
    assert (result.start_s, result.end_s, result.requested_read_rate) == (1, 2, 200)
    # the same slice had fio done 2 reads: behind by 0.75 - 3 / 200 = 0.735 s at 0.75 s; the
    # large-block jobs, >= 1 of 2.35 blocks/s asked done in 1 s, are behind by <= 0.15 s
    write_log(
        next(step.glob("act-small-reads_clat_hist.*.log")),
        [row(250, {100_000: 1}), row(750, {100_000: 1})],
    )
    kept, _, status = judge_fio_slice(step, fio, slice_no=2, slice_s=1, max_lag_s=0.74)
    assert (status, kept.passed, kept.lag_s) == ("passed", True, 0.735)
    lagged, reason, status = judge_fio_slice(step, fio, slice_no=2, slice_s=1, max_lag_s=0.73)
    assert (status, lagged.passed, lagged.lagging_job) == ("cant_keep_up", False, "act-small-reads")
    assert reason is not None and reason.startswith(
        "slice 2: act-small-reads fell 0.73 s behind its requested rate (max 0.73 s); reads "
    )


def test_a_slice_missing_a_clones_log_is_not_judged(capped_run: Path, tmp_path: Path) -> None:
    step = tmp_path / "step"
    shutil.copytree(capped_run / "steps" / "001-trial-01-slice-001", step)
    # the small-read job as 2 grouped clones: fio writes a log for each, only clone 1's is here
    result = json.loads((step / "fio.json").read_text())
    result["jobs"][0]["job options"] |= {"numjobs": "2", "group_reporting": "1"}
    (step / "fio.json").write_text(json.dumps(result))
    fio = read_fio_json(step / "fio.json")
    missing = re.escape(str(step / "act-small-reads_clat_hist.2.log"))
    with pytest.raises(InputError, match=rf"^{missing}: missing \(fio writes this log for every"):
        judge_fio_slice(step, fio, slice_no=1, slice_s=1, max_lag_s=10)


def test_bad_trial_shapes_and_directories(capped_run: Path, tmp_path: Path) -> None:
    with (
        runner(tmp_path / "a", tmp_path / "t.dat") as act,
        pytest.raises(SsdlabError, match=r"duration \(3 s\) must be whole slices of 2 s"),
    ):
        act.trial(1, CAPPED, duration_s=3, slice_s=2)
    with (
        runner(tmp_path / "b", tmp_path / "t.dat") as act,
        pytest.raises(SsdlabError, match="load too small for 2 service threads"),
    ):
        act.trial(0.005, CAPPED, duration_s=1, slice_s=1)
    assert ActRecord.load(tmp_path / "b").trials == []  # nothing recorded for a refused load
    with pytest.raises(SsdlabError, match=r"holds ACT trials on .*target\.dat, not "):
        runner(capped_run, tmp_path / "other.dat")
    other = tmp_path / "suite"
    other.mkdir()
    Manifest(run_id="r", label="l", suite="quick").save(other)
    with pytest.raises(SsdlabError, match="holds a run of suite 'quick'; use another --out"):
        runner(other, tmp_path / "t.dat")


def test_native_trials() -> None:
    sample = read_act_log(SAMPLE)
    passed = native_trial(sample, slice_s=10)
    assert (passed.status, passed.load, passed.duration_s) == ("passed", 1.0, 30)
    assert [s.pct_over_1ms for s in passed.slices] == [1.05, 1.35, 0.81]
    assert {(s.read_rate, s.requested_read_rate) for s in passed.slices} == {(2000.0, 2000.0)}
    # 1 s slices: slice 2 shows exactly 1.00 % at >= 8 ms, not below the 1 % limit
    failed = native_trial(sample, slice_s=1, load=1.5)
    assert (failed.status, failed.load) == ("failed", 1.5)
    assert failed.reason == "slice 2: 1.00 % of reads >= 8 ms (limit 1 %)"

    error = read_act_log(ERROR_LOG)
    stopped = native_trial(error, slice_s=4)  # 3x on two devices; its slices fail too
    assert (stopped.status, stopped.load, len(stopped.slices)) == ("cant_keep_up", 3.0, 3)
    assert stopped.reason == "ACT stopped after 12 s: ERROR: large block writes can't keep up"
    early = native_trial(error, slice_s=3600)  # stopped before its first slice ended
    assert (early.status, early.slices) == ("cant_keep_up", [])
    with pytest.raises(InputError, match="could not find 3600 seconds"):
        native_trial(sample, slice_s=3600)


def test_native_log_status(tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    cut = tmp_path / "cut.log"
    cut.write_text(text[: text.index("after 21 sec:")])
    abandoned = native_trial(read_act_log(cut), slice_s=10)
    assert abandoned.status == "abandoned" and len(abandoned.slices) == 2
    assert abandoned.reason == "log ends at 20 s of test-duration-sec 30"
    other_error = tmp_path / "error.log"
    other_error.write_text(
        text.replace("after 25 sec:", "ERROR: device read failed\nafter 25 sec:")
    )
    trial = native_trial(read_act_log(other_error), slice_s=10)
    assert trial.status == "failed"
    assert trial.reason == "ACT stopped after 30 s: ERROR: device read failed"


def test_no_act_trials_gives_empty_frames(tmp_path: Path) -> None:
    context = RunContext(tmp_path, Manifest(run_id="r", label="l", suite="quick"), [])
    assert trials_frame(context).schema == TRIALS_SCHEMA
    assert slices_frame(context).height == 0


def test_damaged_record(tmp_path: Path) -> None:
    (tmp_path / "act.json").write_text(json.dumps({"trials": [{"trial": "x"}]}))
    with pytest.raises(InputError, match=r"act.json: invalid ACT record at trials.0.trial"):
        ActRecord.load(tmp_path)

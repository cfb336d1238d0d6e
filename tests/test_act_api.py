"""The library behind the ACT commands: trials with ACT's defaults (``act_trials``) and an
ACT log's table with ACT's verdict (``latency_report``), as Python users call them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.act.latency import latency_report
from ssdlab.act.run import act_trials
from ssdlab.act.trials import ActRecord, _requested_ops
from ssdlab.act.workload import ActConfig, TrialTiming, act_config, config_text, derive, fio_jobs
from ssdlab.errors import InputError, SsdlabError

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = FIXTURES / "act_storage_1x_30s.log"  # real act_storage 6.6 output, 1x, 30 s
ERROR_LOG = FIXTURES / "act_storage_3x_2d_error.log"  # stops at 12 s: can't keep up


def test_trials_get_acts_defaults(tmp_path: Path) -> None:
    settings = {"test-duration-sec": "2", "max-lag-sec": "7"}
    target, size = tmp_path / "target", 16 * 2**20
    with act_trials(tmp_path / "act", settings=settings, target=target, target_size=size) as trials:
        assert trials.timing == TrialTiming(2, 2, 500)  # the whole trial, quarter windows
        assert (trials.settings.max_lag_s, trials.settings.ioengine) == (7, "psync")
        assert trials.runner.manifest.target is not None
        assert trials.runner.manifest.target.size_bytes == size
        assert any("cannot fail as can't keep up" in n for n in trials.runner.manifest.notes)
        with pytest.raises(SsdlabError, match="must be positive"):
            trials.score(resolution=0)  # refused before any trial runs
    assert trials.runner.manifest.steps == []
    settings["max-lag-sec"] = "1"  # slices longer than the lag allowed: judged, nothing said
    with act_trials(tmp_path / "act2", settings=settings, target=target) as trials:
        assert not any("keep up" in n for n in trials.runner.manifest.notes)


def test_bad_settings_are_refused_before_anything_is_created(tmp_path: Path) -> None:
    with pytest.raises(SsdlabError, match=r"^--set record-bytes: .*integer"):
        act_trials(tmp_path / "act", settings={"record-bytes": "many"})
    with pytest.raises(SsdlabError, match="--fio-option"):
        act_trials(tmp_path / "act", fio_options={"exec_prerun": "x"})
    with pytest.raises(
        SsdlabError, match=r"--target-size 1,048,576 bytes \(1 MiB\): a file target is at"
    ):
        act_trials(tmp_path / "act", target_size=2**20)  # not a larger file than asked for
    assert not (tmp_path / "act").exists()
    assert act_config({"record-bytes": "1500"}).record_bytes == 1500


@pytest.mark.parametrize("load", [0, -1, float("nan"), float("inf")])
def test_loads_must_be_finite_and_positive(tmp_path: Path, load: float) -> None:
    problem = f"must be positive and finite, not {load:g}"
    with pytest.raises(SsdlabError, match=f"^load {problem}"):
        derive(ActConfig(), load)
    with pytest.raises(SsdlabError, match=f"^load {problem}"):
        fio_jobs(ActConfig(), load, "/dev/nvme0n1")  # never a rate_iops of -2000
    with pytest.raises(SsdlabError, match=f"^--load {problem}"):
        config_text({}, load)
    with pytest.raises(SsdlabError, match=f"^--load {problem}"):
        act_trials(tmp_path / "act", load=load)
    with pytest.raises(SsdlabError, match=f"^--max-load {problem}"):
        act_trials(tmp_path / "act", search=(None, 1, load))
    with pytest.raises(SsdlabError, match=r"^--max-load \(2\) must be at least --start \(4\)"):
        act_trials(tmp_path / "act", search=(4, 1, 2))
    assert not (tmp_path / "act").exists()


def test_tiny_rates_never_reach_fio_as_zero(tmp_path: Path) -> None:
    for load in (0.0001, 0.0003, 0.001, 0.01, 0.4):
        for reads in ("0", "1", "2000"):
            settings = act_config({"read-reqs-per-sec": reads, "service-threads": "1"})
            try:
                job = fio_jobs(settings, load, "/dev/nvme0n1")
            except ValueError:
                continue  # ACT's refusals: no requests, or fewer than the service threads
            rates = [line.split("=")[1] for line in job.splitlines() if line.startswith("rate")]
            assert rates and all(float(r.strip(",")) > 0 for r in rates), job
    settings = {"read-reqs-per-sec": "1", "test-duration-sec": "2"}  # 0.4 reads/s: no reads
    target, size = tmp_path / "t", 16 * 2**20
    with act_trials(tmp_path / "act", settings=settings, target=target, target_size=size) as trials:
        with pytest.raises(SsdlabError, match=r"^0.4x load: the small reads round to 0/s"):
            trials.trial(0.4)
        with pytest.raises(SsdlabError, match=r"^load must be positive and finite, not nan"):
            trials.trial(float("nan"))
        with pytest.raises(SsdlabError, match=r"^load must be a number, not '2'"):
            trials.trial("2")  # type: ignore[arg-type]
    assert ActRecord.load(tmp_path / "act").trials == []


def test_a_rate_that_is_not_a_size_is_an_input_error() -> None:
    assert _requested_ops({"rate": ",4k"}, "write", 1024, "w") == 4
    with pytest.raises(InputError, match=r"^job r: rate_iops=-2000: not a size: '-2000'"):
        _requested_ops({"rate_iops": "-2000"}, "read", 0, "r")


def test_latency_report_judges_the_reads_histogram() -> None:
    passed = latency_report(SAMPLE, slice_s=10)
    assert (passed.status, passed.failed) == ("passed", False)
    assert passed.reason == "3 slices of 10 s within the limits"
    assert passed.table is not None  # every histogram of the log, in its order
    assert passed.table["histogram"].unique(maintain_order=True).to_list() == [
        "reads",
        "/dev/loop0-reads",
        "large-block-reads",
        "large-block-writes",
    ]
    stopped = latency_report(ERROR_LOG, slice_s=4, histograms=["reads"])
    assert (stopped.status, stopped.failed) == ("cant_keep_up", True)
    assert stopped.table is not None and stopped.table["slice"].to_list() == [
        "1",
        "2",
        "3",
        "avg",
        "max",
    ]
    early = latency_report(ERROR_LOG)  # ACT stopped long before the first 1-hour slice
    assert early.table is None and early.failed
    assert early.reason.startswith("ACT stopped after 12 s: ERROR:")


def test_latency_report_errors_name_the_log() -> None:
    with pytest.raises(SsdlabError, match=f"^{SAMPLE}: threshold 10 ms is not an ACT bucket"):
        latency_report(SAMPLE, slice_s=10, thresholds_ms=[10])
    with pytest.raises(InputError, match="could not find 3600 seconds"):
        latency_report(SAMPLE)  # no slice ends and ACT did not stop: bad input, no verdict

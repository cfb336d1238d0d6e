"""ACT configuration, ACT's derived rates, and the fio job file emulating the workload."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
from pydantic import ValidationError

from ssdlab.act import (
    ActConfig,
    derive,
    fio_jobs,
    format_derived,
    hist_log_table,
    read_act_log,
)
from ssdlab.io import read_fio_json

SAMPLE = Path(__file__).parent / "fixtures" / "act" / "act_storage_1x_30s.log"


def sections(job_file: str) -> dict[str, dict[str, str]]:
    """Job file sections as {name: {option: value}}."""
    out: dict[str, dict[str, str]] = {}
    for line in job_file.splitlines():
        if line.startswith("["):
            current = out.setdefault(line.strip("[]"), {})
        elif "=" in line:
            key, value = line.split("=", 1)
            current[key] = value
    return out


def test_defaults_reproduce_the_sample_derived_block() -> None:
    text = SAMPLE.read_text()
    start = text.index("DERIVED CONFIGURATION")
    block = text[start : text.index("\n\n", start) + 1]
    derived = derive(ActConfig(), 1, cpus=2)
    assert format_derived(derived) == block
    assert derived.large_block_writes_per_sec == pytest.approx(1000 / 85 * 2)
    assert (derived.service_threads, derived.read_bytes) == (10, 1536)


def test_config_names_are_acts_own() -> None:
    log = read_act_log(SAMPLE)
    config = ActConfig.model_validate(log.config)  # every CONFIGURATION item, by ACT's name
    assert config.service_threads == 10 and config.device_names == ["/dev/loop0"]
    assert format_derived(derive(config, 1)) == format_derived(derive(ActConfig(), 1, cpus=2))
    assert ActConfig(**{"device-names": ["/dev/a", "/dev/b"]}).num_devices == 2


@pytest.mark.parametrize(
    ("load", "options", "expected"),
    [
        # 3x: 3000 writes / floor(131072 / 1536) = 85 records a block, x 2 for defrag
        (3, {}, ("1536 ... 1536", 6000, 0, "70.59", "70.59")),
        # 1500-byte records are stored as 1504 (16-byte units): 87 a block, 1000 / 87 x 2
        (1, {"record-bytes": 1500}, ("1504 ... 1504", 2000, 0, "22.99", "22.99")),
        # update-pct 50: half the writes read the record first (2000 + 1000 x 50 / 100)
        (1, {"update-pct": 50}, ("1536 ... 1536", 2500, 0, "23.53", "23.53")),
        (1, {"replication-factor": 2}, ("1536 ... 1536", 2000, 0, "47.06", "47.06")),
        # defrag-lwm-pct 60: amplification 100 / 40 = 2.5 -> 1000 / 85 x 2.5
        (1, {"defrag-lwm-pct": 60}, ("1536 ... 1536", 2000, 0, "29.41", "29.41")),
        (1, {"no-defrag-reads": True}, ("1536 ... 1536", 2000, 0, "0.00", "23.53")),
        # commit-to-device: writes go to the device one by one; large blocks keep the defrag half
        (1, {"commit-to-device": True}, ("1536 ... 1536", 2000, 1000, "23.53", "11.76")),
        # sizes 1536 ... 3008 average 2272: 57 a block -> 1000 / 57 x 2
        (1, {"record-bytes-range-max": 3000}, ("1536 ... 3008", 2000, 0, "35.09", "35.09")),
        # 1x on two devices is 4000 reads and 2000 writes in ACT's config file
        (1, {"device-names": ["/dev/a", "/dev/b"]}, ("1536 ... 1536", 4000, 0, "47.06", "47.06")),
        (0.5, {}, ("1536 ... 1536", 1000, 0, "11.76", "11.76")),
    ],
)  # fmt: skip
def test_derived_rates(load: float, options: dict, expected: tuple) -> None:
    stored, reads, writes, lb_reads, lb_writes = expected
    assert format_derived(derive(ActConfig(**options), load, cpus=4)) == (
        "DERIVED CONFIGURATION\n"
        f"record-stored-bytes: {stored}\n"
        f"internal-read-reqs-per-sec: {reads}\n"
        f"internal-write-reqs-per-sec: {writes}\n"
        f"large-block-reads-per-sec: {lb_reads}\n"
        f"large-block-writes-per-sec: {lb_writes}\n"
    )


def test_small_reads_round_up_to_the_minimum_io_size() -> None:
    assert derive(ActConfig(**{"min-io-bytes": 4096}), 1).read_bytes == 4096
    assert derive(ActConfig(**{"record-bytes": 1500}), 1).read_bytes == 1536
    assert derive(ActConfig(**{"record-bytes": 1540}), 1).read_bytes == 2048


def test_acts_refusals() -> None:
    with pytest.raises(ValueError, match="can't both be zero"):
        derive(ActConfig(**{"read-reqs-per-sec": 0, "write-reqs-per-sec": 0}), 1)
    with pytest.raises(ValueError, match="load too small for 10 service threads"):
        derive(ActConfig(), 0.002, cpus=2)  # 4 reads/s over 10 threads
    for bad in (
        {"defrag-lwm-pct": 100},
        {"large-block-op-kbytes": 100},
        {"update-pct": 101},
        {"record-bytes-range-max": 1000},
        {"disable-odsync": True, "commit-to-device": True},
        {"device-names": ["/dev/a"], "num-devices": 2},
        {"read-reqs": 2000},
    ):
        with pytest.raises(ValidationError):
            ActConfig(**bad)


def test_job_file_layout() -> None:
    jobs = sections(
        fio_jobs(ActConfig(), 3, "/dev/nvme0n1", duration_s=60, cpus=2, small_read_jobs=7)
    )
    assert list(jobs) == [
        "global",
        "act-small-reads",
        "act-small-reads-1",
        "act-large-block-reads",
        "act-large-block-writes",
    ]
    assert jobs["global"] == {
        "filename": "/dev/nvme0n1",
        "ioengine": "psync",
        "direct": "1",
        "thread": "1",
        "norandommap": "1",
        "randrepeat": "0",
        "time_based": "1",
        "runtime": "60",
    }
    small = [jobs["act-small-reads"], jobs["act-small-reads-1"]]
    # 6000 reads/s over 7 clones = 7 x 857 + 1: six clones at 857, one at 858
    assert [(j["numjobs"], j["rate_iops"]) for j in small] == [("6", "857"), ("1", "858")]
    assert sum(int(j["numjobs"]) * int(j["rate_iops"]) for j in small) == 6000
    for job in small:
        assert (job["rw"], job["bs"], job["blockalign"]) == ("randread", "1536", "512")
        assert job["log_hist_msec"] == "1000"
    assert [j["write_hist_log"] for j in small] == ["act-small-reads", "act-small-reads-1"]
    reads, writes = jobs["act-large-block-reads"], jobs["act-large-block-writes"]
    # 70.588 blocks/s x 131072 bytes
    assert reads == {"rw": "randread", "bs": "131072", "rate": "9252141"}
    assert writes == {
        "rw": "randwrite",
        "bs": "131072",
        "rate": ",9252141",
        "sync": "dsync",
        "refill_buffers": "1",
    }
    assert not any("hist" in k for k in (*reads, *writes))


def test_job_file_options() -> None:
    def jobs(**options: object) -> dict[str, dict[str, str]]:
        return sections(fio_jobs(ActConfig(**options), 1, "/dev/x", cpus=2))

    assert "act-small-reads-1" not in jobs()  # 2000 = 10 x 200
    assert jobs()["global"]["runtime"] == "86400"
    assert jobs(**{"report-interval-sec": 10})["act-small-reads"]["log_hist_msec"] == "10000"
    assert "act-large-block-reads" not in jobs(**{"no-defrag-reads": True})
    assert jobs(**{"disable-odsync": True})["act-large-block-writes"]["sync"] == "none"
    compress = jobs(**{"compress-pct": 70})["act-large-block-writes"]
    assert compress["buffer_compress_percentage"] == "30"
    commit = jobs(**{"commit-to-device": True})["act-small-writes"]
    assert (commit["rw"], commit["rate_iops"], commit["sync"]) == ("randwrite", ",100", "dsync")
    two = sections(
        fio_jobs(
            ActConfig(**{"device-names": ["/dev/a", "/dev/b"]}), 1, ["/dev/a", "/dev/b"], cpus=2
        )
    )
    assert two["global"]["filename"] == "/dev/a:/dev/b"
    assert two["global"]["file_service_type"] == "random"
    for bad, message in (
        ({"record-bytes-range-max": 3000}, "record-bytes-range-max"),
        ({"tomb-raider": True}, "tomb-raider"),
    ):
        with pytest.raises(ValueError, match=message):
            fio_jobs(ActConfig(**bad), 1, "/dev/x")
    with pytest.raises(ValueError, match="2 target"):
        fio_jobs(ActConfig(), 1, ["/dev/a", "/dev/b"])


@pytest.mark.parametrize("options", [{}, {"commit-to-device": True, "compress-pct": 50}])
def test_fio_parses_the_job_file(tmp_path: Path, options: dict) -> None:
    job = tmp_path / "act.fio"
    job.write_text(fio_jobs(ActConfig(**options), 4, str(tmp_path / "act.dat"), size="64m"))
    proc = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_short_run_keeps_to_the_small_read_rate(tmp_path: Path) -> None:
    job = tmp_path / "act.fio"
    job.write_text(
        fio_jobs(
            ActConfig(),
            1,
            str(tmp_path / "act.dat"),
            duration_s=3,
            hist_msec=500,
            size=64 << 20,
            cpus=2,
            small_read_jobs=7,
        )
    )
    out = tmp_path / "out.json"
    subprocess.run(
        ["fio", str(job), "--output-format=json", f"--output={out}"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    result = read_fio_json(out).jobs
    small = result.filter(pl.col("jobname").str.starts_with("act-small-reads"))
    assert small.height == 7 and set(small["direction"]) == {"read"}
    # a loaded machine may fall behind a rate but never exceeds it: the requested rates bound
    # from above, and half of them from below catches a rate split wrongly across the jobs
    assert 1000 <= small["iops"].sum() <= 2000 * 1.03
    large = result.filter(pl.col("jobname").str.starts_with("act-large-block"))
    assert all(11.7 <= iops <= 23.53 * 1.1 for iops in large["iops"])
    logs = sorted(tmp_path.glob("act-small-reads*_clat_hist.*.log"))
    assert len(logs) == 7  # only the small-read jobs log histograms
    table = hist_log_table(logs, hist_msec=500, slice_s=1)
    assert table["slice"].to_list()[:2] == ["1", "2"]
    assert 1000 <= table.filter(pl.col("slice") == "2")["rate"].item() <= 2000 * 1.05

"""The fio JSON reader on real fio output, and percentiles recomputed from json+ bins."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest

from ssdlab import read_fio_json
from ssdlab.analysis import fio_percentiles
from ssdlab.errors import InputError

NULL_JOB = ["--ioengine=null", "--size=256m", "--time_based=1", "--runtime=300ms"]


def fio_json(tmp_path: Path, name: str, *args: str, stdout: bool = False) -> Path:
    """Run fio with json+ output into a file (or capture stdout, notes and all)."""
    out = tmp_path / f"{name}.json"
    cmd = ["fio", f"--name={name}", "--output-format=json+", *NULL_JOB, *args]
    if stdout:
        out.write_text(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    else:
        subprocess.run([*cmd, f"--output={out}"], capture_output=True, check=True)
    return out


CONFIGS = {
    "randread": ["--rw=randread", "--bs=4k"],
    "mix": ["--rw=randrw", "--rwmixread=70", "--bs=8k", "--iodepth=4"],
    "clones": ["--rw=randwrite", "--bs=64k", "--numjobs=3"],
    "grouped": ["--rw=read", "--bs=128k", "--numjobs=3", "--group_reporting=1"],
    "latpct": ["--rw=randread", "--lat_percentiles=1"],
    "custom_pct": ["--rw=randread", "--percentile_list=25:75:99.999"],
}


@pytest.mark.parametrize("config", CONFIGS)
def test_percentiles_from_bins_equal_fios(tmp_path: Path, config: str) -> None:
    result = read_fio_json(fio_json(tmp_path, config, *CONFIGS[config]))
    checked = 0
    for (job, direction, stat), reported in result.percentiles.group_by(
        "job_index", "direction", "stat"
    ):
        bins = result.bins.filter((pl.col("job_index") == job) & (pl.col("direction") == direction))
        if bins.is_empty() or stat not in bins["stat"].unique().to_list():
            continue
        bins = bins.filter(pl.col("stat") == stat)
        ours = fio_percentiles(bins["lat_ns"], bins["count"], reported["percentile"])
        assert ours == reported["value_ns"].to_list()
        checked += 1
    assert checked >= 1


def test_rows_per_job_and_direction_with_workload_from_options(tmp_path: Path) -> None:
    clones = read_fio_json(fio_json(tmp_path, "c", *CONFIGS["clones"])).jobs
    assert clones.height == 3 and set(clones["direction"]) == {"write"}
    assert set(clones["numjobs"]) == {3} and set(clones["bs_bytes"]) == {65536}
    grouped = read_fio_json(fio_json(tmp_path, "g", *CONFIGS["grouped"])).jobs
    assert grouped.height == 1 and grouped["rw"][0] == "read"
    mix = read_fio_json(fio_json(tmp_path, "m", *CONFIGS["mix"])).jobs
    assert mix["direction"].to_list() == ["read", "write"]
    assert set(mix["rwmixread"]) == {70} and set(mix["iodepth"]) == {4}


def test_units_are_canonical(tmp_path: Path) -> None:
    path = fio_json(tmp_path, "u", "--rw=randread", "--bs=4k")
    raw = json.loads(path.read_text())["jobs"][0]["read"]
    row = read_fio_json(path).jobs.row(0, named=True)
    assert row["bw_bytes_s"] == raw["bw_bytes"] == pytest.approx(raw["bw"] * 1024, rel=1e-3)
    assert row["io_bytes"] == raw["io_bytes"] == raw["io_kbytes"] * 1024
    assert row["runtime_s"] == raw["runtime"] / 1000
    assert row["clat_p99_ns"] == raw["clat_ns"]["percentile"]["99.000000"]
    assert row["clat_samples"] == raw["clat_ns"]["N"] == read_fio_json(path).bins["count"].sum()


def test_text_before_json_and_status_interval_streams(tmp_path: Path) -> None:
    sync_note = ["--ioengine=psync", "--iodepth=8", f"--filename={tmp_path / 'f'}"]
    noisy = fio_json(tmp_path, "n", "--rw=read", *sync_note, stdout=True)
    assert not noisy.read_text().startswith("{")  # fio's iodepth/sync-engine note
    assert read_fio_json(noisy).jobs.height == 1
    stream = fio_json(tmp_path, "s", "--rw=read", "--runtime=1200ms", "--status-interval=250ms")
    result = read_fio_json(stream)
    assert result.meta["snapshots"] >= 3
    last = json.loads(stream.read_text()[stream.read_text().rindex("\n{") :])
    assert result.jobs["io_bytes"][0] == last["jobs"][0]["read"]["io_bytes"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"\x00\x01\x02binary", "binary file"),
        (b'{"hello": "world"}\n', "no fio JSON result"),
        (b'{\n  "fio version" : "fio-3.33",\n  "jobs" : [ {', "truncated or malformed"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as exc:
        read_fio_json(path)
    assert str(path) in str(exc.value)

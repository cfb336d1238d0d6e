"""The fio JSON reader on real fio output, and percentiles recomputed from json+ bins."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from ssdlab import read_fio_json
from ssdlab.analysis import fio_percentiles
from ssdlab.analysis.workloads import workload_label
from ssdlab.errors import InputError
from ssdlab.tables import summary_view
from ssdlab.units import format_size

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
    by_write = read_fio_json(fio_json(tmp_path, "w", "--rw=randrw", "--rwmixwrite=30")).jobs
    assert set(by_write["rwmixread"]) == {70}  # fio runs rwmixwrite=30 as 70/30
    ios = dict(zip(by_write["direction"], by_write["total_ios"], strict=True))
    assert ios["read"] > ios["write"] > 0


@pytest.mark.parametrize(
    ("args", "bs_bytes", "workload"),
    [
        (["--bssplit=4k/10:1m/90"], None, "mixed-size random read"),  # not "4K": bs is unset
        (["--bsrange=4k-64k"], None, "mixed-size random read"),
        (["--bs=0x2000"], 8192, "8K random read"),  # fio takes hex sizes
        ([], 4096, "4K random read"),  # fio's default block
    ],
)
def test_the_block_size_is_the_one_fio_used(
    tmp_path: Path, args: list[str], bs_bytes: int | None, workload: str
) -> None:
    jobs = read_fio_json(fio_json(tmp_path, "b", "--rw=randread", *args)).jobs
    assert jobs["bs_bytes"].to_list() == [bs_bytes]
    assert workload_label("random", jobs["bs_bytes"][0], 100) == workload
    shown = summary_view(jobs)["Block"].to_list()  # the tables say so too, never blank
    assert shown == ["mixed-size" if bs_bytes is None else format_size(bs_bytes)]


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


@pytest.fixture(scope="module")
def jsonplus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real json+ result (clat and lat percentiles and bins) to damage."""
    path = fio_json(tmp_path_factory.mktemp("plus"), "plus", "--rw=randread", "--lat_percentiles=1")
    return json.loads(path.read_text())


def damaged(tmp_path: Path, doc: dict, where: tuple, value: object) -> Path:
    """``doc`` with the value at ``where`` replaced, saved as JSON (NaN and Infinity as
    Python writes them)."""
    doc = copy.deepcopy(doc)
    parent = doc
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    return path


READ = ("jobs", 0, "read")


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (
            (*READ, "iops"),
            -1,
            r"jobs\[0\]\.read\.iops: expected a number from 0 to 2\^63, found -1",
        ),
        (
            (*READ, "bw_bytes"),
            math.inf,
            r"read\.bw_bytes: expected a number from 0 to 2\^63, found inf",
        ),
        ((*READ, "clat_ns", "mean"), math.nan, r"clat_ns\.mean: expected a number from 0"),
        ((*READ, "iops"), 1e30, r"read\.iops: expected a number from 0 to 2\^63, found 1e\+30"),
        ((*READ, "lat_ns", "max"), -5, r"lat_ns\.max: expected a number from 0 to 2\^63, found -5"),
        ((*READ, "clat_ns", "N"), {}, r"clat_ns\.N: expected an integer from 0 to 2\^63 - 1"),
        ((*READ, "io_bytes"), "", r"read\.io_bytes: expected an integer .*found ''"),
        ((*READ, "io_bytes"), 2**64, r"read\.io_bytes: expected an integer"),
        ((*READ, "total_ios"), 1.5, r"read\.total_ios: expected an integer"),
        ((*READ, "clat_ns", "percentile", "99.000000"), -1, r"clat_ns\.percentile\['99\.0+'\]"),
        ((*READ, "clat_ns", "percentile"), [], r"clat_ns\.percentile: expected an object"),
        ((*READ, "clat_ns"), [1], r"read\.clat_ns: expected an object"),
        (READ, [], r"jobs\[0\]\.read: expected an object, found \[\]"),
        (("jobs", 0, "job options"), "x", r"job options: expected an object"),
        (("jobs", 0, "job options", "bs"), ["4k"], r"job options\.bs: expected a string"),
        (("jobs", 0, "job options", "iodepth"), "-4", r"job options\.iodepth: expected an integer"),
        (("jobs", 0, "usr_cpu"), -1.0, r"jobs\[0\]\.usr_cpu: expected a number from 0"),
        (("jobs", 0, "hostname"), 5, r"jobs\[0\]\.hostname: expected a string"),
        (("jobs", 0), "job", r"jobs\[0\]: expected an object"),
        (("jobs",), {"a": 1}, r"jobs: expected a list"),
        (("timestamp_ms",), "x", r"json: timestamp_ms: expected an integer"),
        (("disk_util",), [math.inf], r"disk_util\[0\]: expected an object"),
    ],
)
def test_wrong_types_and_impossible_values_name_file_and_field(
    tmp_path: Path, jsonplus: dict, where: tuple, value: object, message: str
) -> None:
    path = damaged(tmp_path, jsonplus, where, value)
    with pytest.raises(InputError, match=message) as exc:
        read_fio_json(path)
    assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("key", "count", "message"),
    [
        ("Infinity", 1, r"bin keys that are latencies >= 0 .*found 'Infinity'"),
        ("-10", 1, r"bin keys that are latencies >= 0 .*found '-10'"),
        ("x", 1, r"found 'x'"),
        ("1e999", 1, r"found '1e999'"),
        ("20", -3, r"clat_ns\.bins\['20'\]: expected an integer .*found -3"),
        ("20", 2**64, r"clat_ns\.bins\['20'\]: expected an integer"),
        ("20", math.inf, r"clat_ns\.bins\['20'\]: expected an integer .*found inf"),
        ("20", "7", r"clat_ns\.bins\['20'\]: expected an integer .*found '7'"),
    ],
)
def test_json_plus_bins_must_be_latencies_and_counts(
    tmp_path: Path, jsonplus: dict, key: str, count: object, message: str
) -> None:
    path = damaged(tmp_path, jsonplus, (*READ, "clat_ns", "bins", key), count)
    with pytest.raises(InputError, match=message):
        read_fio_json(path)


def test_bins_adding_up_beyond_64_bits_are_refused(tmp_path: Path, jsonplus: dict) -> None:
    bins = {"10": 2**62, "20": 2**62, "30": 2**62}
    with pytest.raises(InputError, match=r"clat_ns\.bins: bin counts add up to more than"):
        read_fio_json(damaged(tmp_path, jsonplus, (*READ, "clat_ns", "bins"), bins))


def test_numeric_options_are_read_as_their_text(tmp_path: Path, jsonplus: dict) -> None:
    """``"bs": 4096`` (a number where fio writes strings) is 4096 bytes, not a crash."""
    doc = copy.deepcopy(jsonplus)
    doc["jobs"][0]["job options"] |= {"bs": 4096, "iodepth": 8}
    row = read_fio_json(damaged(tmp_path, doc, ("time",), "now")).jobs.row(0, named=True)
    assert (row["bs_bytes"], row["iodepth"]) == (4096, 8)


def test_deep_nesting_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"jobs": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with pytest.raises(InputError, match="nested too deeply"):
        read_fio_json(path)


def test_an_integer_of_5000_digits_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "digits.json"
    path.write_text('{"jobs": [], "timestamp": ' + "9" * 5000 + "}")
    with pytest.raises(InputError, match="malformed fio JSON"):
        read_fio_json(path)


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.6, 0.9, 0.999])
def test_truncated_anywhere_is_a_clear_error(
    tmp_path: Path, jsonplus: dict, fraction: float
) -> None:
    text = json.dumps(jsonplus, indent=2)
    path = tmp_path / "cut.json"
    path.write_text(text[: int(len(text) * fraction)])
    with pytest.raises(InputError, match="truncated or malformed fio JSON"):
        read_fio_json(path)


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path, jsonplus: dict) -> None:
    """fio copies job and file names verbatim: bytes that are not UTF-8 do not stop it."""
    path = damaged(tmp_path, jsonplus, ("jobs", 0, "jobname"), "JOB")
    path.write_bytes(path.read_bytes().replace(b"JOB", b"job\xff\xfe"))
    assert read_fio_json(path).jobs["jobname"][0] == "job\ufffd\ufffd"


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        read_fio_json(fifo)


def test_a_long_version_string_is_read_in_linear_time(tmp_path: Path, jsonplus: dict) -> None:
    """The version pattern used to backtrack over a run of digits in quadratic time."""
    path = damaged(tmp_path, jsonplus, ("fio version",), "fio-" + "3" * 200_000)
    assert read_fio_json(path).meta["fio_version"].startswith("fio-333")


def test_a_latency_without_samples_is_null_not_zero(tmp_path: Path) -> None:
    """fio writes 0 for the min/mean/max of a latency it has no samples of (the submission
    latency of a sync engine, a step interrupted in its ramp): no figure, not 0 ns."""
    sync = ["--rw=read", "--ioengine=psync", "--size=1m", f"--filename={tmp_path / 'f'}"]
    path = fio_json(tmp_path, "s", *sync)
    raw = json.loads(path.read_text())["jobs"][0]["read"]
    assert raw["slat_ns"]["N"] == 0 and raw["slat_ns"]["mean"] == 0  # what fio says
    (row,) = read_fio_json(path).jobs.iter_rows(named=True)
    assert row["slat_samples"] == 0
    assert [row[f"slat_{key}_ns"] for key in ("min", "mean", "max", "stddev")] == [None] * 4
    assert row["clat_samples"] == raw["clat_ns"]["N"] > 0
    assert row["clat_mean_ns"] == raw["clat_ns"]["mean"] > 0
    assert read_fio_json(path).jobs.schema["slat_mean_ns"] == pl.Float64

"""Mutated real inputs: every reader either reads them or raises one InputError line naming
the file; any other exception fails the test.

Seeds are real: fio json+ (clat and lat percentiles and bins) written by fio in a session
fixture, and the recorded ACT, SMART and power fixtures. Mutations are byte-level (flip,
insert, delete, truncate, duplicate, a run of 50,000 spaces or digits), number-level for
text formats (a number replaced by a negative, huge, non-finite or empty one) and
structure-aware for JSON (a value replaced by -1, 2**64, "x", null, {}, [], Infinity, NaN,
5,000-deep nesting or a 100 kB string). Inputs stay under a few hundred kB, so a reader in
linear time answers at once (one that hangs fails the run), and examples are derandomized:
every run tries the same ones.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab import read_fio_json
from ssdlab.act import read_act_log
from ssdlab.act.histogram import read_hist_reads
from ssdlab.act.latency import latency_table
from ssdlab.errors import InputError
from ssdlab.io.fio_hist import read_fio_hist_log
from ssdlab.telemetry import read_smart
from ssdlab.telemetry.endurance import load_drive_spec
from ssdlab.telemetry.power import read_power, read_power_csv

FIXTURES = Path(__file__).parent / "fixtures"
ACT_LOGS = sorted((FIXTURES / "act").glob("act_storage_*.log"))
SMART_JSON = [
    p
    for p in sorted((FIXTURES / "telemetry" / "smart").glob("*.json"))
    if p.stem not in ("empty", "list", "truncated", "wrong", "smartctl_error")
    and "bad" not in p.stem
]
POWER = FIXTURES / "telemetry" / "power"
POWER_FILES = [
    POWER / name
    for name in (
        "quarch_stream.csv",
        "quarch_single_channel.csv",
        "quarch_iso_start.csv",
        "yokotool.csv",
        "generic.csv",
        "ipmitool_old.txt",
        "ipmitool_new.txt",
    )
]
SPECS = sorted((FIXTURES / "telemetry" / "endurance").glob("drive_spec.*"))

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DEEP = "[" * 5000 + "]" * 5000
BAD_VALUES: list[Any] = [
    -1,
    2**64,
    "x",
    None,
    {},
    [],
    float("inf"),
    float("nan"),
    DEEP,
    "y" * 100_000,
]
BAD_NUMBERS = ["-1", "-373", "18446744073709551616", "9" * 5000, "1e400", "nan", "inf", ""]


@pytest.fixture(scope="session")
def fio_jsonplus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A json+ result of a short randrw job with clat and lat percentiles and bins."""
    out = tmp_path_factory.mktemp("fuzz-seed") / "fio.json"
    subprocess.run(
        [
            "fio",
            "--name=fuzz",
            "--ioengine=null",
            "--size=16m",
            "--rw=randrw",
            "--bs=4k",
            "--time_based=1",
            "--runtime=100ms",
            "--lat_percentiles=1",
            "--clat_percentiles=1",
            "--output-format=json+",
            f"--output={out}",
        ],
        capture_output=True,
        check=True,
    )
    read = json.loads(out.read_text())["jobs"][0]["read"]
    assert read["clat_ns"]["bins"] and read["lat_ns"]["percentile"]
    return out


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# -- mutations ----------------------------------------------------------------------------


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with bytes flipped, inserted, deleted, duplicated, or cut off, or with a run
    of 50,000 spaces or digits inserted (a regular expression that backtracks over such a
    run takes quadratic time: a hang)."""
    kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "duplicate", "run"]))
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at]
    if kind == "run":
        return data[:at] + draw(st.sampled_from([b" ", b"\t", b"7"])) * 50_000 + data[at:]
    if kind == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    end = min(len(data), at + draw(st.integers(1, 64)))
    if kind == "delete":
        return data[:at] + data[end:]
    if kind == "duplicate":
        return data[:end] + data[at:end] * draw(st.integers(1, 50)) + data[end:]
    flipped = bytearray(data)
    for i in range(at, end):
        flipped[i] ^= draw(st.integers(1, 255))
    return bytes(flipped)


@st.composite
def number_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """One number of a text file replaced by a negative, huge, non-finite or empty one."""
    numbers = list(re.finditer(rb"\d+(?:\.\d+)?", data))
    m = numbers[draw(st.integers(0, len(numbers) - 1))]
    bad = draw(st.sampled_from(BAD_NUMBERS)).encode()
    return data[: m.start()] + bad + data[m.end() :]


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value in a JSON document (the root excluded)."""
    if not isinstance(node, (dict, list)):
        return []
    found = []
    for key, child in node.items() if isinstance(node, dict) else enumerate(node):
        found += [(*path, key), *_paths(child, (*path, key))]
    return found


@st.composite
def json_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """The JSON document in ``data`` (after any text before it) with one value replaced."""
    start = data.index(b"{")
    doc = json.loads(data[start:])
    paths = _paths(doc)
    path = paths[draw(st.integers(0, len(paths) - 1))]
    value = draw(st.sampled_from(BAD_VALUES))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = "@DEEP@" if value is DEEP else value
    text = json.dumps(doc, indent=1).replace('"@DEEP@"', DEEP)
    return data[:start] + text.encode()


def check(reader: Callable[[Path], Any], path: Path, data: bytes) -> None:
    """Read ``data`` saved at ``path``: it is read, or one InputError line names the file."""
    path.write_bytes(data)
    try:
        reader(path)
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message and str(path) in message, message


# -- readers ------------------------------------------------------------------------------


def read_act(path: Path) -> None:
    log = read_act_log(path)
    if "reads" in log.histogram_names and log.reports:
        latency_table(log, "reads", log.report_interval_s)


def read_power_file(path: Path) -> None:
    if path.name.startswith("generic"):
        columns = {"time": "timestamp_ms", "power": "milliwatts", "voltage": "volts"}
        read_power_csv(path, columns, units={"time": "ms", "power": "mW"})
    else:
        read_power(path)


def _seeds(paths: list[Path]) -> st.SearchStrategy[tuple[Path, bytes]]:
    return st.sampled_from([(p, p.read_bytes()) for p in paths])


@FUZZ
@given(data=st.data())
def test_fio_json_bytes(fio_jsonplus: Path, scratch: Path, data: st.DataObject) -> None:
    check(read_fio_json, scratch / "fio.json", data.draw(byte_mutation(fio_jsonplus.read_bytes())))


@FUZZ
@given(data=st.data())
def test_fio_json_values(fio_jsonplus: Path, scratch: Path, data: st.DataObject) -> None:
    check(read_fio_json, scratch / "fio.json", data.draw(json_mutation(fio_jsonplus.read_bytes())))


@FUZZ
@given(seed=_seeds(ACT_LOGS), data=st.data())
def test_act_log(scratch: Path, seed: tuple[Path, bytes], data: st.DataObject) -> None:
    mutate = data.draw(st.sampled_from([byte_mutation, number_mutation]))
    check(read_act, scratch / "act.log", data.draw(mutate(seed[1])))


@FUZZ
@given(seed=_seeds(SMART_JSON), data=st.data())
def test_smart_json(scratch: Path, seed: tuple[Path, bytes], data: st.DataObject) -> None:
    mutate = data.draw(st.sampled_from([byte_mutation, json_mutation]))
    check(read_smart, scratch / "smart.json", data.draw(mutate(seed[1])))


@FUZZ
@given(seed=_seeds(POWER_FILES), data=st.data())
def test_power(scratch: Path, seed: tuple[Path, bytes], data: st.DataObject) -> None:
    mutate = data.draw(st.sampled_from([byte_mutation, number_mutation]))
    check(read_power_file, scratch / seed[0].name, data.draw(mutate(seed[1])))


@FUZZ
@given(seed=_seeds(SPECS), data=st.data())
def test_drive_spec(scratch: Path, seed: tuple[Path, bytes], data: st.DataObject) -> None:
    mutate = data.draw(st.sampled_from([byte_mutation, number_mutation]))
    check(load_drive_spec, scratch / f"drive{seed[0].suffix}", data.draw(mutate(seed[1])))


# -- targeted regressions -------------------------------------------------------------------


@pytest.fixture(scope="session")
def hist_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real fio histogram log (fio 3.x, 1856 bins, 100 ms rows)."""
    out = tmp_path_factory.mktemp("hist")
    subprocess.run(
        [
            "fio",
            "--name=hist",
            "--ioengine=null",
            "--size=16m",
            "--rw=randread",
            "--time_based=1",
            "--runtime=300ms",
            f"--write_hist_log={out / 'h'}",
            "--log_hist_msec=100",
            "--output=/dev/null",
        ],
        capture_output=True,
        check=True,
    )
    return out / "h_clat_hist.1.log"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        (10, "-1", "a negative bin count"),
        (10, str(2**53), r"a bin count of 2\*\*53 or more"),
        (1, "7", "a direction other than 0-2"),
        (0, "-5", "a negative time or block size"),
        (-1, None, "a missing field"),
    ],
)
def test_impossible_histogram_rows_are_refused(
    hist_log: Path, scratch: Path, field: int, value: str | None, reason: str
) -> None:
    lines = hist_log.read_text().splitlines()
    assert len(lines) >= 2
    fields = lines[1].split(", ")
    if value is None:
        del fields[field]
    else:
        fields[field] = value
    path = scratch / "bad_hist.log"
    path.write_text("\n".join([lines[0], ", ".join(fields), *lines[2:]]) + "\n")
    assert read_fio_hist_log(hist_log)[0]["count"].min() > 0
    with pytest.raises(InputError, match=rf"bad_hist\.log: line 2: {reason}"):
        read_fio_hist_log(path)
    if value == "-1":
        with pytest.raises(InputError, match=r"bad_hist\.log: line 2: a negative bin count"):
            read_hist_reads(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("d.toml", b"capacity_tb = 9" + b"9" * 5000 + b"\n", r"d\.toml: not (valid|a drive)"),
        ("d.yaml", b"capacity_tb: 9" + b"9" * 5000 + b"\n", r"d\.yaml: not (valid|a drive)"),
        ("d.toml", b"capacity_tb = inf\nwarranty_years = 5\ndwpd = 1\n", r"capacity_tb: Input"),
        ("d.toml", b"capacity_tb = nan\nwarranty_years = 5\ndwpd = 1\n", r"capacity_tb: Input"),
        ("d.yaml", b"capacity_tb: &c 4\nwarranty_years: *c\ndwpd: 1\n", r"YAML aliases"),
        ("d.yaml", b"model: \xff\ncapacity_tb: 4\n", r"not UTF-8 text"),
        ("d.yaml", b"a: " + b"[" * 1000 + b"]" * 1000 + b"\n", r"nested (too|deeper)"),
    ],
)
def test_drive_spec_files(scratch: Path, name: str, content: bytes, message: str) -> None:
    path = scratch / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        load_drive_spec(path)
    assert "\n" not in str(info.value)

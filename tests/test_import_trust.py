"""Imports that must not be fooled, on real fio output: a per-I/O log read a chunk at a time
gives the numbers of its rows, bad trees (devices, FIFOs, unreadable directories, names that
are not UTF-8, impossible log values) are skipped with a reason naming the file, a second
writer into the same results directory is refused, and mutated fio logs give an InputError or
a skip, never a traceback."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssdlab
import ssdlab.importer
import ssdlab.io.fio_log
from ssdlab.errors import InputError
from ssdlab.importer import import_results
from ssdlab.io.fio_hist import read_fio_hist_log
from ssdlab.io.fio_log import read_fio_log
from ssdlab.lock import results_lock

NULL = ["--ioengine=null", "--size=64m", "--rw=randrw", "--rwmixread=60", "--time_based=1"]
DIRECTIONS = ("read", "write", "trim")


def fio(cwd: Path, *args: str) -> None:
    subprocess.run(["fio", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def perio(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real result with per-I/O clat and iops logs (``log_avg_msec=0``)."""
    d = tmp_path_factory.mktemp("perio")
    fio(
        d, "--name=perio", *NULL, "--runtime=2500ms", "--rate_iops=3000",
        "--write_lat_log=pio", "--write_iops_log=pio", "--log_avg_msec=0",
        "--output-format=json", "--output=perio.json",
    )  # fmt: skip
    return d


@pytest.fixture(scope="module")
def windowed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real result with 500 ms bw/iops/lat logs and a histogram log."""
    d = tmp_path_factory.mktemp("windowed")
    fio(
        d, "--name=win", *NULL, "--runtime=2600ms", "--write_bw_log=w", "--write_iops_log=w",
        "--write_lat_log=w", "--log_avg_msec=500", "--write_hist_log=h", "--log_hist_msec=500",
        "--log_hist_coarseness=4", "--output-format=json", "--output=win.json",
    )  # fmt: skip
    return d


def per_second(log: Path, runtime_s: float) -> dict[tuple[str, float], tuple[float, ...]]:
    """The documented rule, from the log's text: per direction and whole second since the
    job began, the I/Os, their bytes and mean latency; the cut-short last second dropped."""
    rows = defaultdict(list)
    for line in log.read_text().splitlines():
        t_ms, value, ddir, bs = (int(x) for x in line.split(",")[:4])
        rows[(DIRECTIONS[ddir], float(t_ms // 1000 + 1))].append((value, bs))
    return {
        key: (len(r), sum(bs for _, bs in r), sum(v for v, _ in r) / len(r))
        for key, r in rows.items()
        if key[1] <= runtime_s + 0.05
    }


def numbers(out: Path) -> dict[tuple[str, float], tuple[float, ...]]:
    ts = ssdlab.load(out).timeseries
    return {
        (r["direction"], r["t_s"]): (r["iops"], r["bw_bytes_s"], r["clat_mean_ns"])
        for r in ts.iter_rows(named=True)
    }


def test_a_per_io_log_read_a_chunk_at_a_time_gives_the_numbers_of_its_rows(
    perio: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_results([perio], tmp_path / "whole")
    runtime_s = ssdlab.load(tmp_path / "whole").summary["runtime_s"].max()
    expected = per_second(perio / "pio_clat.1.log", runtime_s)
    assert len(expected) >= 4 and numbers(tmp_path / "whole") == expected
    # too large to keep: read by the worker 4 KiB at a time, lines cut at chunk ends
    monkeypatch.setattr(ssdlab.importer, "KEEP_BYTES", 4096)
    monkeypatch.setattr(ssdlab.io.fio_log, "CHUNK_BYTES", 4096)
    status: list[str] = []
    import_results([perio], tmp_path / "chunks", on_status=status.append)
    assert numbers(tmp_path / "chunks") == expected
    assert f"reading per-I/O log {perio / 'pio_clat.1.log'} (0.0 GB)" in status
    whole, chunks = (ssdlab.load(tmp_path / d).timeseries for d in ("whole", "chunks"))
    assert whole.drop("run_id").equals(chunks.drop("run_id"))


def copy_result(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for f in src.iterdir():
        shutil.copy(f, dst / f.name)
    return dst


#: a log's second line replaced -> the reason it is skipped
IMPOSSIBLE = {
    "negative": ("500, -5, 0, 0, 0", "line 2: negative value -5"),
    "inf": ("500, inf, 0, 0, 0", "malformed fio log: "),
    "text": ("500, fast, 0, 0, 0", "malformed fio log: "),
    "huge": (f"500, {2**64}, 0, 0, 0", "malformed fio log: "),
    "large": (f"500, {2**60}, 0, 0, 0", f"line 2: value {2**60} is too large for a fio log"),
    "ddir": ("500, 5, 7, 0, 0", "line 2: ddir 7 is not 0, 1 or 2 (read, write, trim)"),
    "short": ("500, 5", "line 2: missing fields"),
}


def bad_tree(windowed: Path, root: Path) -> dict[str, str]:
    """A tree of good and bad files: path as printed -> the reason it must be skipped for."""
    copy_result(windowed, root / "good")
    expected = {}
    for name, (row, reason) in IMPOSSIBLE.items():
        d = copy_result(windowed, root / name)
        lines = (d / "w_bw.1.log").read_text().splitlines()
        (d / "w_bw.1.log").write_text("\n".join([lines[0], row, *lines[2:]]) + "\n")
        expected[str(d / "w_bw.1.log")] = reason
    (root / "zero.json").symlink_to("/dev/zero")
    expected[str(root / "zero.json")] = "is a character device, not a regular file"
    os.mkfifo(root / "x.json")
    expected[str(root / "x.json")] = "is a FIFO, not a regular file"
    weird = root / os.fsdecode(b"caf\xe9.json")
    shutil.copy(windowed / "win.json", weird)
    expected[str(root / "caf\\xe9.json")] = "file name is not UTF-8; rename it to import it"
    (root / "good" / "w_clat.1.log").unlink()
    (root / "good" / "w_clat.1.log").symlink_to("/dev/zero")  # a log a result names
    expected[str(root / "good" / "w_clat.1.log")] = "is a character device, not a regular file"
    return expected


def skipped_lines(stderr: str) -> dict[str, str]:
    return dict(
        line.removeprefix("skipped ").split(": ", 1)
        for line in stderr.splitlines()
        if line.startswith("skipped ")
    )


def test_bad_trees_are_skipped_with_a_reason_never_a_hang(windowed: Path, tmp_path: Path) -> None:
    expected = bad_tree(windowed, tmp_path / "tree")
    proc = ssdlab_cli("import", tmp_path / "tree", "--out", tmp_path / "o", timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    skipped = skipped_lines(proc.stderr)
    assert set(skipped) == set(expected)
    for path, reason in expected.items():
        assert skipped[path].startswith(reason), (path, skipped[path])
    r = ssdlab.load(tmp_path / "o")
    assert r.summary["step"].n_unique() == 1 + len(IMPOSSIBLE)
    ts = r.timeseries
    assert ts.height and (ts.drop_nulls("iops")["iops"] >= 0).all()
    assert ts.filter(pl.col("step") == "good/win")["clat_mean_ns"].is_null().all()  # no clat log
    strict = ssdlab_cli("import", tmp_path / "tree", "--out", tmp_path / "s", "--strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert len(strict.stderr.strip().splitlines()) == 1 and strict.stderr.startswith("error: ")
    assert any(path in strict.stderr for path in expected)
    assert not (tmp_path / "s").exists()


def test_an_unreadable_directory_is_skipped_with_the_reason(windowed: Path) -> None:
    """Root reads every directory: the import runs as nobody (setpriv) when the test is root."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: every directory is readable")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    base = Path(tempfile.mkdtemp(prefix="ssdlab-unreadable-"))
    try:
        base.chmod(0o777)
        copy_result(windowed, base / "tree" / "ok")
        locked = copy_result(windowed, base / "tree" / "locked")
        locked.chmod(0)
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "ssdlab", "import", base / "tree", "--out", base / "o"],
            capture_output=True, text=True, timeout=120, cwd=base, check=False,
        )  # fmt: skip
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert skipped_lines(proc.stderr) == {
            str(locked): "cannot read directory: Permission denied"
        }
        assert ssdlab.load(base / "o").summary["step"].unique().to_list() == ["ok/win"]
    finally:
        locked.chmod(0o755)
        shutil.rmtree(base)


def test_a_second_import_into_the_same_out_is_refused_and_changes_nothing(
    windowed: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    with results_lock(out, "import"):  # an import still writing out
        (out / "frames").mkdir()
        (out / "frames" / "summary.parquet").write_bytes(b"first import's frame")
        proc = ssdlab_cli("import", windowed, "--out", out)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "is in use by another ssdlab process" in proc.stderr
    assert sorted(p.name for p in out.rglob("*")) == [".ssdlab.lock", "frames", "summary.parquet"]
    assert (out / "frames" / "summary.parquet").read_bytes() == b"first import's frame"
    # once the first one is done, its results stay as they are
    shutil.rmtree(out)
    assert ssdlab_cli("import", windowed, "--out", out).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".ssdlab.lock"}
    again = ssdlab_cli("import", windowed, "--out", out)
    assert again.returncode == 1 and "already holds results" in again.stderr
    assert {
        p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".ssdlab.lock"
    } == before


GARBAGE = [
    b"",
    b"garbage",
    b"500, -5, 0, 0, 0",
    b"500, inf, 0, 0, 0",
    b"nan, 1, 1, 0",
    b"18446744073709551616, 1, 0, 0, 0",
    b"500, 1152921504606846976, 0, 0, 0",
    b"500, 1, 9, 0, 0",
    b"500, 1",
    b"\x00\xff\xfe",
    b"1, 2, 0, 4096, 0, 0x0zz",
    b",,,,",
]
mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("line"), st.integers(0, 10**6), st.sampled_from(range(len(GARBAGE)))),
)


def mutate(data: bytes, changes: list[tuple[str, int, int]]) -> bytes:
    """Byte flips, truncation, garbage lines and impossible numbers at drawn positions."""
    for op, at, arg in changes:
        at %= len(data) + 1
        if op == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ arg]) + data[at + 1 :]
        elif op == "cut":
            data = data[:at]
        elif op == "line":
            start = data.rfind(b"\n", 0, at) + 1
            data = data[:start] + GARBAGE[arg] + b"\n" + data[start:]
    return data


LOGS = ["w_bw.1.log", "w_iops.1.log", "w_clat.1.log", "w_lat.1.log"]
_runs = itertools.count()


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=st.sampled_from(LOGS), changes=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_logs_are_an_input_error_or_a_skip(
    windowed: Path, tmp_path: Path, name: str, changes: list[tuple[str, int, int]]
) -> None:
    tree = tmp_path / f"t{next(_runs)}"
    copy_result(windowed, tree)
    log = tree / name
    log.write_bytes(mutate((windowed / name).read_bytes(), changes))
    try:
        frame, _ = read_fio_log(log)
    except InputError as exc:
        assert str(exc).startswith(f"{log}: ") and "\n" not in str(exc)
    else:
        assert frame["direction"].null_count() == 0
        assert frame.select((pl.col("time_ms", "value") >= 0).all()).row(0) == (True, True)
    report = import_results([tree], tree / "out")
    reasons = {s.path.name: s.reason for s in report.skipped}
    assert set(reasons) <= {name} and all("\n" not in r for r in reasons.values())
    ts = ssdlab.load(tree / "out").timeseries
    for column in ("iops", "bw_bytes_s", "clat_mean_ns"):
        values = ts[column].drop_nulls()
        assert values.is_finite().all() and (values >= 0).all()
    shutil.rmtree(tree)


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(changes=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_histogram_logs_are_an_input_error(
    windowed: Path, tmp_path: Path, changes: list[tuple[str, int, int]]
) -> None:
    log = tmp_path / "m_clat_hist.1.log"
    log.write_bytes(mutate((windowed / "h_clat_hist.1.log").read_bytes(), changes))
    try:
        frame, _ = read_fio_hist_log(log)
    except InputError as exc:
        assert str(exc).startswith(f"{log}: ") and "\n" not in str(exc)
    else:
        assert (frame["count"] > 0).all() and frame["direction"].null_count() == 0


def test_impossible_numbers_name_the_file_and_line(windowed: Path, tmp_path: Path) -> None:
    log = tmp_path / "x_bw.1.log"
    lines = (windowed / "w_bw.1.log").read_text().splitlines()
    for row, reason in IMPOSSIBLE.values():
        log.write_text("\n".join([lines[0], row, *lines[2:]]) + "\n")
        with pytest.raises(InputError, match=f"^{re.escape(f'{log}: {reason}')}"):
            read_fio_log(log)

"""Imports that must not be fooled, on real fio output: a per-I/O log read a chunk at a time
gives the numbers of its rows, bad trees (devices, FIFOs, unreadable directories, names that
are not UTF-8, impossible log values) are skipped with a reason naming the file, a second
writer into the same results directory is refused, mutated fio logs give an InputError or
a skip, never a traceback, and logs cut mid-line (a run killed, a full disk) keep their whole
rows."""

from __future__ import annotations

import itertools
import json
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
from ssdlab.errors import InputError, SsdlabError
from ssdlab.importer import import_results
from ssdlab.io.fio_hist import read_fio_hist_log
from ssdlab.io.fio_log import VALUE_COLUMNS, LogBatch, per_io_sums, read_fio_log
from ssdlab.lock import results_lock
from ssdlab.logs import JobLog, JobLogs

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


def test_the_walk_lists_files_as_os_walk_and_knows_which_are_regular(tmp_path: Path) -> None:
    """Top-down, names sorted, links to directories not followed, the output left out; only
    a file whose directory entry says regular is read without a stat."""
    root = tmp_path / "tree"
    for rel in ["b/z.log", "b/a/y.json", "a.json", "c/x.log", "out/frames/s.parquet"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / "b" / "link").symlink_to(root / "c")  # a directory: not followed
    (root / "b" / "to-a.json").symlink_to(root / "a.json")
    os.mkfifo(root / "c" / "fifo.json")
    out = root / "out"
    expected = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) != str(out))
        expected += [f"{dirpath}{os.sep}{f}" for f in sorted(filenames)]
    files, skipped = ssdlab.importer._walk([root, root / "c"], out)
    assert list(files) == expected and not skipped
    assert [Path(f).name for f, regular in files.items() if not regular] == [
        "to-a.json",
        "fifo.json",
    ]
    assert ssdlab.importer.walk_files([root], out) == (expected, {})


def test_frames_are_written_whole_or_one_error_naming_the_file(tmp_path: Path) -> None:
    """Frames synced together: each file whole; one that cannot be written is an error naming
    it, and no temporary file is left."""
    frames = {"a": pl.DataFrame({"x": [1, 2]}), "b": pl.DataFrame({"y": ["z"]})}
    ssdlab.importer.write_frames(tmp_path / "ok", frames)
    for name, frame in frames.items():
        assert pl.read_parquet(tmp_path / "ok" / "frames" / f"{name}.parquet").equals(frame)
    blocked = tmp_path / "bad" / "frames" / "b.parquet"
    (blocked / "in-the-way").mkdir(parents=True)
    with pytest.raises(SsdlabError, match=f"^{re.escape(str(blocked))}: cannot write: "):
        ssdlab.importer.write_frames(tmp_path / "bad", frames)
    assert not list(blocked.parent.glob(".*.tmp"))


def test_an_unreadable_directory_is_skipped_with_the_reason(windowed: Path) -> None:
    """Root reads every directory: as root, the import runs without the capabilities that
    override file permissions (setpriv), still as the owner of the checkout wherever it lies
    (a private 0700 directory too, which another user could not enter)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: every directory is readable")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
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
        frame, meta = read_fio_log(log)
    except InputError as exc:
        assert str(exc).startswith(f"{log}: ") and "\n" not in str(exc)
    else:
        value = VALUE_COLUMNS[meta["kind"]][0]
        assert frame["direction"].null_count() == 0
        assert frame.select((pl.col("time_ms", value) >= 0).all()).row(0) == (True, True)
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


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real result with per-I/O iops and clat logs and a 100 ms histogram log, whole: the
    tests cut them as a run killed mid-row (SIGKILL, a full disk) leaves them."""
    d = tmp_path_factory.mktemp("killed")
    fio(
        d, "--name=k", *NULL, "--runtime=1500ms", "--rate_iops=2000", "--write_iops_log=k",
        "--write_lat_log=k", "--log_avg_msec=0", "--write_hist_log=k", "--log_hist_msec=100",
        "--output-format=json", "--output=k.json",
    )  # fmt: skip
    return d


CUT_LOGS = ["k_iops.1.log", "k_clat.1.log", "k_clat_hist.1.log"]


def cut_positions(data: bytes) -> dict[str, int]:
    """Where to cut a log (``data[:at]``): never right after a line end."""
    first = data.index(b"\n")
    second = data.index(b"\n", first + 1)
    return {
        "after the first byte": 1,
        "inside the first line": first // 2,
        "before the first line end": first,
        "after a comma of the second line": data.index(b",", first) + 1,
        "inside the second line": (first + second) // 2,
        "inside a middle line": data.index(b"\n", len(data) // 2) - 3,
        "before the last line end": len(data) - 1,
    }


def raw(rows: pl.DataFrame, kind: str) -> pl.DataFrame:
    """:func:`read_fio_log` rows with fio's own ``value`` (as bulk parsing keeps it)."""
    name, factor = VALUE_COLUMNS[kind]
    return rows.with_columns(value=pl.col(name) // factor).drop(name)


def sums_of(rows: pl.DataFrame) -> pl.DataFrame:
    """Per-I/O log rows (fio's ``value``) summed per millisecond and direction, the plain way."""
    return (
        rows.group_by("time_ms", "direction")
        .agg(
            n=pl.len().cast(pl.Int64),
            value=pl.col("value").cast(pl.Float64).sum(),
            bs_bytes=pl.col("bs_bytes").sum(),
        )
        .sort("time_ms", "direction")
    )


@pytest.mark.parametrize("name", CUT_LOGS)
def test_a_log_cut_mid_line_keeps_the_rows_before_the_cut(
    killed: Path, tmp_path: Path, name: str
) -> None:
    """The last line, cut short, is dropped and counted (``partial_lines``); the rows left are
    the whole log's first rows exactly. Cut inside its first line a log holds no row: an
    empty frame (a histogram log's of fio 3.x's bins, those of an empty log)."""
    data = (killed / name).read_bytes()
    read = read_fio_hist_log if "hist" in name else read_fio_log
    full, meta = read(killed / name)
    assert meta["partial_lines"] == 0 and full.height
    log = tmp_path / name
    for where, at in cut_positions(data).items():
        log.write_bytes(data[:at])
        frame, meta = read(log)
        rows = data[:at].count(b"\n")  # whole lines left
        assert meta["partial_lines"] == 1, where
        assert frame.equals(full.head(frame.height)), where
        if "hist" in name:
            lines = data.splitlines()[:rows]
            counts = sum(int(c) for line in lines for c in line.split(b",")[3:])
            assert (meta["intervals"], frame["count"].sum()) == (rows, counts), where
        else:
            assert frame.height == rows, where


@pytest.mark.parametrize("name", CUT_LOGS[:2])
def test_a_per_io_log_cut_mid_line_read_a_chunk_at_a_time(
    killed: Path, tmp_path: Path, name: str
) -> None:
    """Only the file's last line can be cut short: a chunk's end (cut back to a line end)
    never counts as one, whatever the chunk size, the last chunk holding only the cut line
    included."""
    data = (killed / name).read_bytes()
    frame, meta = read_fio_log(killed / name)
    full = raw(frame, meta["kind"])
    log = tmp_path / name
    boundary = data.index(b"\n", 3000) + 1  # a first chunk of this size ends with a line
    cuts = {**cut_positions(data), "4 bytes into the second chunk": boundary + 4}
    for size in (256, 1000, 4096, boundary):
        sums, cut = per_io_sums(str(killed / name), chunk_bytes=size)
        assert cut == 0 and sums.equals(sums_of(full)), size
        log.write_bytes(data[:boundary])
        assert per_io_sums(str(log), chunk_bytes=size)[1] == 0  # ends where a chunk does
        for where, at in cuts.items():
            log.write_bytes(data[:at])
            sums, cut = per_io_sums(str(log), chunk_bytes=size)
            expected = sums_of(full.head(data[:at].count(b"\n")))
            assert cut == 1 and sums.equals(expected), (size, where)


def test_cut_logs_parsed_in_one_batch_lose_only_their_cut_line(
    killed: Path, windowed: Path, tmp_path: Path
) -> None:
    """Many small logs parsed together (:class:`~ssdlab.logs.JobLogs`): each cut log loses
    its own last line (named in ``partial``), the others none."""
    sources = {"iops": killed / "k_iops.1.log", "bw": windowed / "w_bw.1.log"}
    logs, expected = JobLogs(), []
    for kind, src in sources.items():
        data = src.read_bytes()
        full = raw(read_fio_log(src)[0], kind)
        window = 0 if kind == "iops" else 500
        cuts = {
            "whole": len(data),
            "first": 5,
            "middle": cut_positions(data)["inside a middle line"],
        }
        for where, at in cuts.items():
            path = str(tmp_path / f"{where}_{kind}.1.log")
            logs.add(JobLog(path, kind, len(expected), 1, window_ms=window), {}, data[:at])
            rows = full.head(data[:at].count(b"\n"))
            expected.append(
                sums_of(rows) if window == 0 else rows.select("time_ms", "value", "direction")
            )
    parsed, bad = logs.parse()
    assert bad == {}
    assert logs.partial == {
        str(tmp_path / f"{where}_{kind}.1.log"): 1
        for kind in sources
        for where in ("first", "middle")
    }
    for n, want in enumerate(expected):
        assert parsed.rows.filter(pl.col("file") == n).select(want.columns).equals(want), n


def test_an_interrupted_step_whose_logs_were_cut_is_imported(
    killed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step killed mid-row: its clat log cut in a middle line, its iops log inside its first
    line, its histogram log inside its second: imported from the rows before the cut, nothing
    skipped, read whole or a chunk at a time."""
    tree = copy_result(killed, tmp_path / "tree" / "killed")
    cuts = {
        "k_clat.1.log": "inside a middle line",
        "k_iops.1.log": "inside the first line",
        "k_clat_hist.1.log": "inside the second line",
    }
    for name, where in cuts.items():
        data = (killed / name).read_bytes()
        (tree / name).write_bytes(data[: cut_positions(data)[where]])
    proc = ssdlab_cli("import", tmp_path / "tree", "--out", tmp_path / "o", "--strict")
    assert proc.returncode == 0 and not skipped_lines(proc.stderr), proc.stderr
    runtime_s = ssdlab.load(tmp_path / "o").summary["runtime_s"].max()
    data = (tree / "k_clat.1.log").read_bytes()
    (tmp_path / "whole_rows.log").write_bytes(data[: data.rfind(b"\n") + 1])
    expected = per_second(tmp_path / "whole_rows.log", runtime_s)
    assert len(expected) >= 2 and numbers(tmp_path / "o") == expected
    noted = json.loads((tmp_path / "o" / "manifest.json").read_text())["notes"]
    assert [n.split(": ", 1)[0] for n in noted] == [
        str(tree / "k_clat.1.log"),
        str(tree / "k_iops.1.log"),
    ]  # the log a time series reads; histogram logs are only checked
    monkeypatch.setattr(ssdlab.importer, "KEEP_BYTES", 4096)
    monkeypatch.setattr(ssdlab.io.fio_log, "CHUNK_BYTES", 4096)
    report = import_results([tmp_path / "tree"], tmp_path / "chunks", strict=True)
    assert not report.skipped and numbers(tmp_path / "chunks") == expected


def test_a_cut_line_no_row_starts_like_or_a_bad_row_before_it_is_refused(
    windowed: Path, tmp_path: Path
) -> None:
    log = tmp_path / "x_bw.1.log"
    data = (windowed / "w_bw.1.log").read_bytes()
    n = data.count(b"\n") + 1
    for tail in (b"garbage", b"12, \x00", b"1,,", b"-5, 1"):
        log.write_bytes(data + tail)
        reason = f"line {n}: cut short, and not the start of a fio log row"
        for read in (read_fio_log, lambda p: per_io_sums(str(p), chunk_bytes=256)):
            with pytest.raises(InputError, match=f"^{re.escape(f'{log}: {reason}')}$"):
                read(log)
        batch = LogBatch()
        batch.add(0, data + tail)
        assert batch.bad == {0: reason}
    hist = tmp_path / "x_clat_hist.1.log"
    hist.write_bytes((windowed / "h_clat_hist.1.log").read_bytes() + b"5, x")
    with pytest.raises(InputError, match="cut short, and not the start of a fio log row"):
        read_fio_hist_log(hist)
    lines = data.splitlines()
    log.write_bytes(b"\n".join([lines[0], b"500, 5", *lines[2:]]))  # cut short, and a bad row
    with pytest.raises(InputError, match="line 2: missing fields"):
        read_fio_log(log)

"""Every read bounded (issue 24): a file larger than its reader's size limit (sparse files
here: huge, yet on no disk) is one line naming it, its size and the limit, before any of it
is read; JSON nested too deeply or holding numbers too large is one line too.

The command-line tests run ssdlab with its address space capped (:data:`MEMORY_CAP`): a
reader that read the file whole would fail with a MemoryError there, never fill memory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

from ssdlab.act.histogram import read_hist_reads
from ssdlab.act.log import read_act_log
from ssdlab.errors import InputError
from ssdlab.formats import detect
from ssdlab.io.fio_hist import read_fio_hist_log
from ssdlab.io.fio_json import read_fio_json
from ssdlab.io.fio_log import per_io_sums, read_fio_log
from ssdlab.io.text import SIZE_LIMITS, read_bytes, read_text, size_limit
from ssdlab.telemetry.power import POWER_FORMATS
from ssdlab.telemetry.power.trace import read_csv
from ssdlab.telemetry.smart import read_smart
from ssdlab.telemetry.snapshot import read_snapshot
from ssdlab.telemetry.store import read_captures
from ssdlab.units import format_capacity

GiB = 2**30
PER_IO = "fio per-I/O logs"
MEMORY_CAP = 6 * GiB
FIXTURES = ROOT / "tests" / "fixtures"
HIST_ROW = "1000, 0, 4096, " + ", ".join(["0"] * 1855) + ", 3\n"
SUITE = """name = "tiny"
description = "Short null-engine steps."

[defaults]
runtime_s = 1
ramp_s = 0
size = "16m"
ioengine = "null"

[[steps]]
name = "randread-4k"
rw = "randread"
bs = "4k"

[[steps]]
name = "randwrite-4k"
rw = "randwrite"
bs = "4k"
"""
JOB = """[global]
ioengine=null
size=16m
bs=4k
rw=randread
time_based=1
runtime=1
write_bw_log=fio
write_iops_log=fio
log_avg_msec=100
[job]
"""


def sparse(path: Path, size: int, head: bytes | str = b"") -> Path:
    """``path`` holding ``head`` then zeros up to ``size`` bytes (on no disk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head.encode() if isinstance(head, str) else head)
    os.truncate(path, size)
    return path


def capped(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """ssdlab's command line with its address space capped at :data:`MEMORY_CAP`."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    return subprocess.run(
        [sys.executable, "-m", "ssdlab", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=cap,
        cwd=cwd,
    )


def one_line(proc: subprocess.CompletedProcess[str], path: Path, size: int) -> str:
    """The one line of ``proc``'s stderr naming ``path``; it says its size and a limit."""
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if str(path) in line]
    assert format_capacity(size) in line and "limit" in line and "docs/limits.md" in line, line
    return line


def refused(path: Path, size: int, kind: str) -> str:
    """The message of a file of ``size`` bytes over the limit of ``kind``."""
    return (
        f"{path}: {format_capacity(size)}, over ssdlab's {format_capacity(size_limit(kind))} limit "
        f"for {kind} (docs/limits.md)"
    )


def test_import_skips_an_oversized_log_and_imports_the_rest(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "job.fio").write_text(JOB)
    done = subprocess.run(
        ["fio", "--output-format=json", "--output=result.json", "job.fio"],
        cwd=tree,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (tree / "job.fio").unlink()
    size = 100 * GiB
    os.truncate(tree / "fio_bw.1.log", size)
    proc = capped("import", tree, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert one_line(proc, tree / "fio_bw.1.log", size).startswith("skipped ")
    assert "imported 1 fio result" in proc.stderr
    summary = capped("summary", tmp_path / "out", "-f", "json")
    assert summary.returncode == 0, summary.stderr
    assert "randread" in summary.stdout or "read" in summary.stdout


@pytest.fixture(scope="module")
def native_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("bounded-run")
    (directory / "tiny.toml").write_text(SUITE)
    proc = capped("run", directory / "tiny.toml", "--out", directory / "run")
    assert proc.returncode == 0, proc.stderr
    return directory / "run"


def _copy(run: Path, to: Path) -> Path:
    subprocess.run(["cp", "-a", run, to], check=True)
    return to


def test_summary_of_a_run_whose_only_result_is_huge_is_one_line(
    native_run: Path, tmp_path: Path
) -> None:
    run = _copy(native_run, tmp_path / "run")
    (run / "steps" / "002-randwrite-4k" / "fio.json").unlink()  # a run of one readable step
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["steps"] = manifest["steps"][:1]
    (run / "manifest.json").write_text(json.dumps(manifest))
    os.truncate(run / "steps" / "001-randread-4k" / "fio.json", 50 * GiB)
    proc = capped("summary", run)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_summary_names_the_huge_result_and_shows_the_other_step(
    native_run: Path, tmp_path: Path
) -> None:
    run = _copy(native_run, tmp_path / "run")
    huge = run / "steps" / "001-randread-4k" / "fio.json"
    os.truncate(huge, 50 * GiB)
    proc = capped("summary", run)
    assert proc.returncode == 0, proc.stderr
    assert "step randread-4k left out" in one_line(proc, huge, 50 * GiB)
    assert "randwrite-4k" in proc.stdout and "randread-4k" not in proc.stdout


def _captures(path: Path) -> object:
    """The SMART capture record of the step whose ``smart/captures.json`` is ``path``."""
    return read_captures(path.parent.parent)


@pytest.mark.parametrize(
    ("read", "name", "head", "size", "kind"),
    [
        (read_fio_json, "fio.json", '{"fio version": "3.36"}\n', 50 * GiB, "fio JSON output"),
        (read_fio_log, "fio_bw.1.log", "100, 5, 0, 4096\n", 100 * GiB, "fio logs"),
        (lambda p: per_io_sums(str(p)), "fio_lat.1.log", "1, 5, 0, 4096\n", 100 * GiB, PER_IO),
        (read_fio_hist_log, "fio_clat_hist.1.log", HIST_ROW, 20 * GiB, "fio histogram logs"),
        (read_hist_reads, "fio_clat_hist.1.log", HIST_ROW, 20 * GiB, "fio histogram logs"),
        (read_act_log, "act.log", "ACT version 6.4\n", GiB, "ACT logs"),
        (read_smart, "exporter.txt", 'smartctl_device{device="a"} 1\n' * 2, GiB, "SMART captures"),
        (_captures, "smart/captures.json", "{}", GiB, "SMART captures"),
        (read_text, "notes.txt", "text\n", 2 * GiB, "files read whole"),
    ],
)
def test_each_reader_refuses_a_file_over_its_limit_unread(
    tmp_path: Path, read: Callable[[Path], object], name: str, head: str, size: int, kind: str
) -> None:
    path = sparse(tmp_path / name, size, head)
    with pytest.raises(InputError) as info:
        read(path)
    assert str(info.value) == refused(path, size, kind)


@pytest.mark.parametrize(
    ("fmt", "head", "options"),
    [
        ("csv", "time,power\n0,5\n", {"columns": {"time": "time", "power": "power"}}),
        ("yokotool", "T,P,V,I\n1700000000.0,9.0,12.0,0.75\n", {}),
        ("quarch", "Time us,5V mV,5V uA\n0,5000,1000\n", {"start_epoch_s": 1.7e9}),
        ("ipmitool_dcmi", "    Instantaneous power reading:    109 Watts\n", {}),
    ],
)
def test_power_readers_refuse_a_trace_over_their_limit(
    tmp_path: Path, fmt: str, head: str, options: dict
) -> None:
    path = sparse(tmp_path / "trace.csv", 8 * GiB, head)
    kind = "ipmitool logs" if fmt == "ipmitool_dcmi" else "power traces"
    with pytest.raises(InputError, match=f"8 GiB, over ssdlab's .* limit for {kind}"):
        POWER_FORMATS.read(path, fmt, **options)


#: what a file read whole may be: at this size its reader stays well under 4 GB of address
#: space (docs/limits.md); a 1.9 GB fio log, under the former 2 GiB limit, aborted polars
WHOLE_LIMIT = "256 MiB"


@pytest.mark.parametrize(
    ("read", "name", "head", "kind"),
    [
        (read_fio_log, "fio_bw.1.log", "100, 5, 0, 4096\n", "fio logs"),
        (read_fio_json, "fio.json", '{"fio version": "3.36"}\n', "fio JSON output"),
        (read_csv, "trace.csv", "time,power\n0,5\n", "power traces"),
        (read_text, "notes.txt", "text\n", "files read whole"),
    ],
)
def test_a_file_read_whole_one_byte_over_its_limit_is_refused(
    tmp_path: Path, read: Callable[[Path], object], name: str, head: str, kind: str
) -> None:
    assert format_capacity(size_limit(kind)) == WHOLE_LIMIT
    path = sparse(tmp_path / name, size_limit(kind) + 1, head)
    with pytest.raises(InputError) as info:
        read(path)
    assert str(info.value) == refused(path, size_limit(kind) + 1, kind)
    assert f"over ssdlab's {WHOLE_LIMIT} limit" in str(info.value)


def test_recognising_a_huge_json_file_says_why_it_is_no_capture(tmp_path: Path) -> None:
    path = sparse(tmp_path / "drive.json", 50 * GiB, '{"smartctl": {}}')
    with pytest.raises(InputError) as info:
        detect(path, "SMART")
    assert str(info.value) == refused(path, 50 * GiB, "JSON recognised by content")
    snapshot = sparse(tmp_path / "before" / "drive.json", 50 * GiB, "{")
    with pytest.raises(InputError, match="50 GiB, over ssdlab's 16 MiB limit"):
        read_snapshot(snapshot.parent)


def test_smart_import_skips_a_huge_capture(tmp_path: Path) -> None:
    captures = tmp_path / "captures"
    captures.mkdir()
    (captures / "ok.json").write_bytes(
        (FIXTURES / "telemetry/smart/smartctl_sata_micron.json").read_bytes()
    )
    huge = sparse(captures / "huge.json", 50 * GiB, "{")
    proc = capped("smart", "import", captures, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert one_line(proc, huge, 50 * GiB).startswith("skipped ")


def test_a_file_growing_past_its_limit_is_refused_at_the_limit(tmp_path: Path) -> None:
    """/proc files say size 0 and a file may grow once opened: no more than the limit + 1
    bytes are read either way."""
    with pytest.raises(InputError, match="over ssdlab's 1 MiB limit for TOML/YAML files"):
        read_bytes(Path("/proc/self/pagemap"), kind="TOML/YAML files")  # sized 0, endless


def test_the_limits_are_documented() -> None:
    text = (ROOT / "docs" / "limits.md").read_text()
    for kind, (limit, _) in SIZE_LIMITS.items():
        assert f"| {kind} | {format_capacity(limit)} |" in text, kind


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("fio.json", '{"fio version": "x", "jobs": ' + "[" * 100_000, "nested too deeply"),
        ("fio.json", None, r"jobs\[0\]\.read\.bw: expected a number from 0 to 2\^63"),
        ("smart.json", '{"smartctl": ' + "[" * 100_000, "nested too deeply"),
        ("smart.json", '{"smartctl": {}, "x": 1' + "0" * 5000 + "}", "malformed JSON"),
    ],
)
def test_hostile_json_is_one_line(
    tmp_path: Path, name: str, text: str | None, message: str
) -> None:
    path = tmp_path / name
    if text is None:  # an integer Python holds but no float can
        doc = json.loads((FIXTURES / "fio" / "fio-2.2.10.json").read_text())
        doc["jobs"][0]["read"]["bw"] = 10**400
        text = json.dumps(doc)
    path.write_text(text)
    read = read_fio_json if name == "fio.json" else read_smart
    with pytest.raises(InputError, match=message):
        read(path)


def test_a_huge_smart_capture_of_a_step_is_left_out_with_its_reason(
    tiny_run: Path, tmp_path: Path
) -> None:
    """The run's other frames load; the capture is one counted damage line."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    step_dir = sorted((run / "steps").iterdir())[0]
    (step_dir / "smart" / "before").mkdir(parents=True)
    capture = sparse(step_dir / "smart" / "before" / "nvme.json", 5 * GiB, "{")
    proc = capped("summary", run, "-f", "csv")
    assert proc.returncode == 0, proc.stderr
    assert f"warning: {capture}: 5 GiB, over ssdlab's 16 MiB limit" in proc.stderr
    assert "SMART snapshot left out" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.count("\n") > 1  # the steps are all there

"""Arguments that are no UTF-8 text and outputs on a read-only file system give one line.

The read-only file system is a real one: a tmpfs this test mounts, remounts read-only and
unmounts.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ssdlab_cli

BAD = b"x\xff\xfe"  # no UTF-8: Python keeps these bytes as lone surrogates


def _one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _ssdlab_bytes(*args: str | bytes | Path) -> subprocess.CompletedProcess:
    argv = [os.fsencode(a) if isinstance(a, str | Path) else a for a in args]
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"ssdlab", *argv],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["run", "{suite}", "--out", b"/tmp/out-" + BAD], "argument 4 (after --out)"),
        (["run", "{suite}", "--out=/tmp/out-" + os.fsdecode(BAD)], "--out:"),
        (["run", "{suite}", "--target", b"/tmp/t-" + BAD, "--out", "{out}"], "(after --target)"),
        (["report", "{run}", "-o", b"/tmp/r-" + BAD + b".html"], "(after -o)"),
        (["batch", "{run}", "-o", b"/tmp/b-" + BAD], "(after -o)"),
        (["import", "{run}", "-o", b"/tmp/i-" + BAD], "(after -o)"),
        (["summary", b"/tmp/" + BAD], "argument 2:"),
        (["act", "run", "--load", "1", "--out", b"/tmp/a-" + BAD], "(after --out)"),
    ],
)
def test_arguments_that_are_not_utf8_are_refused_naming_them(
    tiny_suite: Path, tiny_run: Path, tmp_path: Path, args: list[str | bytes], named: str
) -> None:
    names = {"suite": tiny_suite, "run": tiny_run, "out": tmp_path / "out"}
    proc = _ssdlab_bytes(*[a.format(**names) if isinstance(a, str) else a for a in args])
    line = _one_line(proc)
    assert named in line and "x\\xff\\xfe" in line and "is not valid UTF-8" in line
    assert not (tmp_path / "out").exists()


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs holding an empty directory ``d``, mounted for this test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount], check=True)
    try:
        (mount / "d").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", mount], check=True)
        yield mount
    finally:
        subprocess.run(["umount", mount], check=True)


@pytest.fixture
def smart_history(tmp_path: Path) -> Path:
    """A SMART history imported from the fleet captures test_smart_history.py writes."""
    from test_smart_history import build

    build(tmp_path / "captures").write(random.Random(3))
    assert (
        ssdlab_cli("smart", "import", tmp_path / "captures", "-o", tmp_path / "h").returncode == 0
    )
    return tmp_path / "h"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["report", "{run}", "-o", "{ro}/x.html"], "{ro}/x.html"),
        (["report", "{run}", "-o", "{ro}/new/x.html"], "{ro}/new/x.html"),
        (["report", "{run}", "{run}", "-o", "{ro}/d/x.html"], "{ro}/d/x.html"),
        (["batch", "{root}", "-o", "{ro}/out"], "{ro}/out"),
        (["batch", "{root}", "-o", "{tmp}/out", "--figures", "{ro}/figures"], "{ro}/figures"),
        (["smart", "report", "{history}", "-o", "{ro}/fleet.html"], "{ro}/fleet.html"),
        (["summary", "{run}", "-o", "{ro}/s.txt"], "{ro}/s.txt"),
        (["summary", "{run}", "-f", "csv", "-o", "{ro}/s.csv"], "{ro}/s.csv"),
        (["summary", "{run}", "-f", "parquet", "-o", "{ro}/s.parquet"], "{ro}/s.parquet"),
    ],
)
def test_report_outputs_on_a_read_only_file_system_give_one_line(
    readonly: Path,
    tiny_run: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    args: list[str],
    named: str,
) -> None:
    names = {"run": tiny_run, "root": tiny_run.parent, "tmp": tmp_path, "ro": readonly}
    if "{history}" in args:
        names["history"] = request.getfixturevalue("smart_history")
    line = _one_line(ssdlab_cli(*[a.format(**names) for a in args]))
    assert line == f"error: {named.format(**names)}: cannot write: Read-only file system"
    assert not (tmp_path / "out" / "index.html").exists()  # refused before any report


def test_report_files_on_a_read_only_file_system_give_one_line(readonly: Path) -> None:
    """Removing a missing leftover is nothing to do; replacing a file is one line naming it."""
    from ssdlab.errors import SsdlabError
    from ssdlab.report._files import remove, replacing

    remove(readonly / "d" / "missing.partial.ipynb")  # nothing there: nothing to do
    error = r"x\.html: cannot write: Read-only file system"
    with pytest.raises(SsdlabError, match=error), replacing(readonly / "d" / "x.html") as tmp:
        tmp.write_text("never")


@pytest.mark.parametrize("thresholds", ["1e999,2", "inf", "1,,8"])
def test_act_thresholds_that_are_no_finite_numbers_give_one_line(thresholds: str) -> None:
    log = Path(__file__).parent / "fixtures" / "act" / "act_storage_1x_30s.log"
    proc = ssdlab_cli("act", "latency", log, "--slice", "10", "--thresholds", thresholds)
    assert _one_line(proc) == f"error: --thresholds takes numbers like 1,8,64, not {thresholds!r}"


@pytest.mark.parametrize("command", ["config", "run"])
def test_an_act_load_beyond_any_drive_gives_one_line(command: str, tmp_path: Path) -> None:
    out = ["--out", str(tmp_path / "act")] if command == "run" else []
    proc = ssdlab_cli("act", command, "--load", "1e300", *out)
    line = _one_line(proc)
    assert "at most 10,000x" in line and "1e+300" in line, line
    assert not (tmp_path / "act").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{suite}", "--out", "{link}"],
        ["act", "run", "--load", "1", "--duration", "1", "--out", "{link}"],
        ["import", "{run}", "--out", "{link}"],
        ["import", "{run}", "--out", "{link}/sub"],
    ],
)
def test_an_out_reached_through_a_link_must_resolve_to_utf8(
    tiny_suite: Path, tiny_run: Path, tmp_path: Path, args: list[str]
) -> None:
    """A UTF-8 ``--out`` that is a link to a name that is not UTF-8 gave a
    UnicodeEncodeError traceback."""
    real = os.fsencode(tmp_path) + b"/d" + BAD
    os.mkdir(real)
    link = tmp_path / "O"
    os.symlink(real, link)
    names = {"suite": tiny_suite, "run": tiny_run, "link": link}
    line = _one_line(ssdlab_cli(*[a.format(**names) for a in args]))
    assert line.startswith(f"error: --out {link}") and "x\\xff\\xfe" in line
    assert "which is not valid UTF-8" in line
    assert os.listdir(real) == []


def test_a_report_output_reached_through_a_link_to_no_utf8_is_refused(
    tiny_run: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(os.fsdecode(bytes(tmp_path) + b"/d" + BAD))
    for args in (("report", tiny_run, "-o", link / "x.html"), ("batch", tiny_run, "-o", link)):
        line = _one_line(ssdlab_cli(*args))
        assert line.startswith(f"error: -o {link}") and "which is not valid UTF-8" in line
        assert "x\\xff\\xfe" in line

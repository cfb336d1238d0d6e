"""The review's set-up section states the drive's state (target, span, purge, preconditioning)
and the caveats where the figures cannot describe a drive, from what the run recorded, and
says "not recorded" for what an older run or an import did not record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import IMAGE_BYTES, Loops, needs_loop, sh, ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.review.setup import setup_section
from ssdlab.sysinfo import BARE_METAL, file_system, virtualization
from ssdlab.tables import format_bytes
from ssdlab.units import format_capacity

MiB = 2**20

FILE_SUITE = """
name = "state"
[defaults]
runtime_s = 1
size = "4m"
ioengine = "psync"

[[steps]]
name = "rr"
rw = "randread"
bs = "4k"
iodepth = 4

[[steps]]
name = "fill"
rw = "write"
bs = "128k"
loops = 1
direct = false
"""

DEVICE_SUITE = """
name = "filled"
[defaults]
ioengine = "libaio"
iodepth = 4

[[steps]]
name = "fill"
rw = "write"
bs = "128k"
size = "32m"
loops = 1

[[steps]]
name = "rr-filled"
rw = "randread"
bs = "4k"
size = "32m"
runtime_s = 0.5

[[steps]]
name = "rr-wide"
rw = "randread"
bs = "4k"
runtime_s = 0.5
"""


def said(out: Path) -> list[str]:
    return setup_section(DriveAnalysis(ssdlab.load(out))).findings


def one(sentences: list[str], start: str) -> str:
    (found,) = [s for s in sentences if s.startswith(start)]
    return found


@pytest.fixture(scope="module")
def file_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A purged 16 MiB file: a psync read at iodepth 4, then a buffered 4 MiB fill."""
    root = tmp_path_factory.mktemp("state")
    (root / "suite.toml").write_text(FILE_SUITE)
    out = root / "run"
    done = ssdlab_cli(
        "run", root / "suite.toml", "--out", out, "--target", root / "t.bin",
        "--target-size", "16m", "--purge",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_file_target_state_and_caveats(file_run: Path) -> None:
    manifest = ssdlab.load(file_run).manifest
    target = manifest.target
    assert target is not None and target.size_bytes == 16 * MiB
    # the file system recorded at run time is the mount of the file's device number
    recorded = target.file_system
    st = os.stat(target.path)
    assert (
        recorded is not None and recorded.device == f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    )
    found = sh("findmnt", "-n", "-o", "FSTYPE", "--target", target.path)
    assert recorded.type == found
    sentences = said(file_run)
    assert one(sentences, "The target is a file of 16 MiB, ").startswith(
        f"The target is a file of 16 MiB, {target.path}, in the {recorded.type} file system"
    )
    # the span: the measured step's 4 MiB of the 16 MiB file (the fill is preconditioning)
    assert "The measurements addressed 4 MiB of the 16 MiB file (25 %)." in sentences
    assert manifest.purge and manifest.purge.startswith("recreated ")
    assert f"The target was purged before the first step: {manifest.purge}." in sentences
    written = ssdlab.load(file_run).summary.filter(step="fill")["io_bytes"].sum()
    assert written == 4 * MiB  # one pass over its 4 MiB
    assert (
        "The target was preconditioned by 1 size-based write step: fill (128K sequential write "
        f"at QD1, 1 pass, {format_bytes(written)} written); {format_bytes(written)} written in all."
    ) in sentences
    assert one(sentences, "1 measured step ran before the preconditioning").endswith(": rr.")
    assert one(sentences, "1 step ran with buffered I/O (direct=0)").startswith(
        "1 step ran with buffered I/O (direct=0) through the page cache: fill."
    )
    depth = one(sentences, "fio ran below the configured queue depth in 1 step ")
    assert depth.startswith(
        "fio ran below the configured queue depth in 1 step (QD4 per job run at QD1 in 1 step: rr)"
    )


def test_virtual_machine_is_recorded_and_said(file_run: Path) -> None:
    host = ssdlab.load(file_run).manifest.host
    assert host is not None and host.virtualization == virtualization()
    detect = shutil.which("systemd-detect-virt")
    if detect:  # the recorded answer is systemd's where it is installed
        answer = subprocess.run([detect, "--vm"], capture_output=True, text=True, check=False)
        assert host.virtualization == answer.stdout.strip()
    vm = [s for s in said(file_run) if s.startswith("The target is a file on a virtual machine")]
    if host.virtualization in (None, BARE_METAL):
        assert vm == []
    else:
        assert vm == [
            f"The target is a file on a virtual machine ({host.virtualization}): the figures "
            "are those of a virtual disk, the host's caches and its other guests, not of a drive."
        ]


def test_older_manifest_says_not_recorded(file_run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(file_run, old)
    data = json.loads((old / "manifest.json").read_text())
    del data["target"]["file_system"], data["host"]["virtualization"]
    (old / "manifest.json").write_text(json.dumps(data))
    sentences = said(old)
    assert any(s.endswith(", its file system not recorded.") for s in sentences)
    assert "Whether the host is a virtual machine is not recorded." in sentences
    assert not any("virtual machine (" in s for s in sentences)


def test_import_says_what_is_not_recorded(file_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    done = ssdlab_cli("import", file_run / "steps" / "001-rr" / "fio.json", "--out", out)
    assert done.returncode == 0, done.stderr
    sentences = said(out)
    for line in (
        "The target is not recorded (imported results).",
        "Whether the target was purged is not recorded (imported results).",
        "The preconditioning is not recorded (imported results).",
    ):
        assert line in sentences
    assert any(
        s.startswith("The span tested against the capacity is not recorded") for s in sentences
    )
    assert not any(s.startswith("The target was not preconditioned") for s in sentences)


@needs_loop
def test_file_system_by_device_number(loops: Loops, tmp_path: Path) -> None:
    """A file in an ext4 file system the test made on a loop device: the recorded source is
    that device, found by the file's device number."""
    device = loops.blank()
    sh("mkfs.ext4", "-q", device)
    mounted = loops.mount(device)
    (mounted / "suite.toml").write_text(FILE_SUITE)
    out = tmp_path / "run"
    done = ssdlab_cli(
        "run", mounted / "suite.toml", "--out", out, "--target", mounted / "t.bin",
        "--target-size", "16m",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    recorded = ssdlab.load(out).manifest.target.file_system
    rdev = os.stat(device).st_rdev
    assert recorded is not None and recorded.type == "ext4" and recorded.source == device
    assert recorded.device == f"{os.major(rdev)}:{os.minor(rdev)}"
    assert file_system(mounted / "t.bin") == recorded
    assert any(f"in the ext4 file system of {device}" in s for s in said(out))
    assert "The target was not purged before the run" in " ".join(said(out))


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_memory_file_system_is_no_drive(tmp_path: Path) -> None:
    """A file on a tmpfs the test mounts under tmp_path: the section says no figure
    describes a drive."""
    mounted = tmp_path / "tmpfs"
    mounted.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mounted)
    try:
        (tmp_path / "suite.toml").write_text(FILE_SUITE)
        out = tmp_path / "run"
        done = ssdlab_cli(
            "run", tmp_path / "suite.toml", "--out", out, "--target", mounted / "t.bin",
            "--target-size", "16m",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        sentences = said(out)
    finally:
        subprocess.run(["umount", mounted], check=False)
    assert one(sentences, "The target is a file of 16 MiB").endswith(
        "in the tmpfs file system: its bytes are in memory, so no figure of this run "
        "describes a drive."
    )


@needs_loop
def test_device_reads_of_unwritten_blocks(loops: Loops, tmp_path: Path) -> None:
    """quick on a purged device reads never-written blocks before any write; a run that
    writes half the device whole first reads unwritten blocks only past that half."""
    device = loops.blank()
    name = Path(device).name
    quick = tmp_path / "quick"
    done = ssdlab_cli(
        "run", "quick", "--scale", "0.05", "--target", device, "--destroy-data", name,
        "--purge", "--out", quick,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = ssdlab.load(quick)
    size = loaded.manifest.steps[0].workload.size
    span = int(256 * MiB * 0.05)
    assert size == str(span)  # quick's 256m, scaled
    sentences = said(quick)
    assert (
        f"The measurements addressed {format_capacity(span)} of the "
        f"{format_capacity(IMAGE_BYTES)} device (20 %)."
    ) in sentences
    assert one(sentences, f"The target is a block device of 64 MiB, {device} (").endswith(
        "a loop device, whose bytes are in a file, so its figures are those of that file's "
        "file system and storage."
    )
    assert f"The target was purged before the first step: blkdiscard {device} (every block" in (
        " ".join(sentences)
    )
    assert one(sentences, "The target was not preconditioned: no size-based write step ran")
    unwritten = one(sentences, "4 steps read blocks this run had not written (")
    assert "(randread-4k-qd1 and randread-4k-qd32 before any write; " in unwritten
    assert "or discarded by the purge" in unwritten
    assert "The run is scaled by --scale: 0.05x the suite's durations" in " ".join(sentences)

    (tmp_path / "filled.toml").write_text(DEVICE_SUITE)
    filled = tmp_path / "filled"
    done = ssdlab_cli(
        "run", tmp_path / "filled.toml", "--target", device, "--destroy-data", name,
        "--out", filled,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sentences = said(filled)
    assert ssdlab.load(filled).summary.filter(step="fill")["io_bytes"].sum() == 32 * MiB
    assert one(sentences, "The target was preconditioned by 1 size-based write step: fill (")
    assert "The measurements addressed 64 MiB of the 64 MiB device (100 %)." in sentences
    assert one(sentences, "The target was not purged before the run")
    assert one(sentences, "1 step read blocks this run had not written (") == (
        "1 step read blocks this run had not written (rr-wide after writes that need not have "
        "covered their span): their figures may come from blocks never written, which a drive "
        "can answer without reading its flash, and are not comparable with reads of written "
        "data."
    )

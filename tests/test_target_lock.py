"""One run per target at a time, whatever ``--out``, on every path: a second run of the same
file or device (another name for it, reading it, several targets, a ``--hosts`` entry of
this machine) is refused with one line naming the first run's pid and command."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, ssdlab_cli
from test_fleet import Server, fio_servers

from ssdlab.lock import lock_directory

#: a step that keeps fio on the target until the test stops it
LONG = """
name = "long"
[[steps]]
name = "a"
rw = "{rw}"
bs = "4k"
size = "16m"
runtime_s = 600
ioengine = "psync"
"""


def suite(directory: Path, rw: str) -> Path:
    path = directory / f"{rw}.toml"
    path.write_text(LONG.format(rw=rw))
    return path


def _fio_has_open(target: Path) -> bool:
    """Whether a fio process has ``target`` open."""
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            fds = (proc / "fd").iterdir()
            if (proc / "comm").read_text().strip() == "fio" and any(
                os.readlink(fd) == str(target) for fd in fds
            ):
                return True
    return False


@contextlib.contextmanager
def first_run(target: Path, *args: str | Path) -> Iterator[subprocess.Popen[str]]:
    """``ssdlab run ARGS``, yielded once its fio has ``target`` open: the run locks its target
    before it prepares it, so the lock is held by then. Stopped (Ctrl-C) at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdlab", "run", *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _fio_has_open(target):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"fio never opened {target}: {proc.communicate()}")
            time.sleep(0.02)
        yield proc
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 130


def refused(*args: str | Path) -> str:
    """The one error line of an ``ssdlab run`` that must be refused."""
    proc = ssdlab_cli("run", *args)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    return line


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    with fio_servers(tmp_path_factory.mktemp("fio-server")) as start:
        yield start


def test_a_target_file_has_one_run_at_a_time(
    tmp_path: Path, start_server: Callable[..., Server]
) -> None:
    target, link = tmp_path / "data.bin", tmp_path / "link"
    link.symlink_to(target)
    writes, reads = suite(tmp_path, "randwrite"), suite(tmp_path, "randread")
    command = f"ssdlab run {writes} --target {target} --out {tmp_path / 'o1'}"
    server = start_server("127.0.0.1")
    with first_run(target, writes, "--target", target, "--out", tmp_path / "o1") as first:
        expected = (
            f"error: {target} is being written by another ssdlab process (pid {first.pid}: "
            f"{command}); wait for it to end"
        )
        out = tmp_path / "o2"
        assert refused(writes, "--target", target, "--out", out) == expected
        assert refused(reads, "--target", link, "--out", out) == expected  # reading, by a link
        other = tmp_path / "other.bin"
        for mode in ("lockstep", "sequence"):
            args = ("--target", other, "--target", target, "--targets-mode", mode)
            assert refused(writes, *args, "--out", out) == expected
        assert refused(writes, "--hosts", server.spec(target), "--out", out) == expected
        assert not out.exists() and not other.exists()


@needs_loop
def test_a_loop_device_and_its_backing_file_have_one_run_at_a_time(
    tmp_path: Path, loops: Loops
) -> None:
    image = loops.image("drive")
    device = loops.attach(image)
    again = loops.attach(image)  # a second loop device over the same file (none may write)
    above = loops.attach(Path(device), "--offset", "1048576")  # one stacked on the first
    writes, reads = suite(tmp_path, "randwrite"), suite(tmp_path, "randread")
    with first_run(Path(device), reads, "--target", device, "--out", tmp_path / "o1") as first:
        taken = f"is being read by another ssdlab process (pid {first.pid}: ssdlab run "
        out = tmp_path / "o2"
        assert refused(reads, "--target", device, "--out", out).startswith(
            f"error: {device} {taken}"
        )
        for other in (again, above):
            assert refused(reads, "--target", other, "--out", out).startswith(
                f"error: {other} {taken}"
            )
        line = refused(writes, "--target", image, "--out", out)  # its file is refused anyway
        assert line == f"error: {image}: it backs the loop device {device}, " + (
            f"which writing it would corrupt (detach it first: losetup -d {device})"
        )
        assert not out.exists()


def test_a_lock_file_that_is_no_regular_file_gets_one_line(tmp_path: Path) -> None:
    writes = tmp_path / "short.toml"  # a run that got past its locks would end soon
    writes.write_text(LONG.format(rw="randwrite").replace("runtime_s = 600", "runtime_s = 1"))
    out = tmp_path / "o1"
    out.mkdir()
    os.mkfifo(out / ".ssdlab.lock")  # planted: reading or seeking it would fail or block
    expected = (
        f"error: {out / '.ssdlab.lock'}: a lock file must be a regular file, and this is not "
        "(a FIFO, device, socket or directory put there); remove it and run again"
    )
    assert refused(writes, "--out", out) == expected
    target = tmp_path / "data.bin"
    target.write_bytes(b"")
    st = target.stat()
    planted = lock_directory() / f"file-{st.st_dev}-{st.st_ino}.lock"
    os.mkfifo(planted)
    try:
        line = refused(writes, "--target", target, "--out", tmp_path / "o2")
        assert line == expected.replace(str(out / ".ssdlab.lock"), str(planted))
    finally:
        planted.unlink()
    assert target.stat().st_size == 0

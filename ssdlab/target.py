"""Targets fio runs against: a regular file ssdlab creates and sizes, or a block device that
passed the safety checks of :mod:`ssdlab.devices`."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
from pathlib import Path

from . import fio_options
from .atomic import write_error
from .devices import SYS_CLASS_BLOCK, check_readable, check_same, check_writable
from .errors import RunInterrupted, SsdlabError
from .layout import FLEET_FILE, MANIFEST, TEMP_TARGET
from .manifest import TargetInfo
from .units import format_size

MIN_FILE_BYTES = 16 * 2**20


def _supports_direct(path: Path) -> bool:
    """Whether the file system under ``path`` accepts O_DIRECT (tmpfs does not)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    os.close(fd)
    return True


def _allocate(path: Path, size_bytes: int) -> None:
    """Create or grow ``path`` to ``size_bytes`` by writing data, so that reads hit the
    medium (a sparse or merely allocated file reads back zeros without any I/O). When that
    fails or is interrupted, a file this call created is removed again and one that existed
    is cut back to its old size: one SsdlabError (RunInterrupted on Ctrl-C) says so."""
    existed = path.exists()
    chunk = os.urandom(2**20)
    try:
        fh = path.open("ab", buffering=0)  # unbuffered: closing has nothing left to write
    except OSError as exc:
        raise write_error(path, exc) from None
    with fh:
        before = fh.tell()
        try:
            left = size_bytes - before
            while left > 0:
                left -= fh.write(chunk[: min(left, len(chunk))])
            os.fsync(fh.fileno())
        except (OSError, KeyboardInterrupt) as exc:
            if existed:
                fh.truncate(before)
                undone = f"cut it back to its {before:,} bytes"
            else:
                path.unlink(missing_ok=True)
                undone = "removed the partial file"
            if isinstance(exc, KeyboardInterrupt):
                raise RunInterrupted(
                    f"interrupted while writing the target file {path}; {undone}"
                ) from None
            raise SsdlabError(f"{write_error(path, exc)}; {undone}") from None


def check_file_size(size_bytes: int) -> None:
    """SsdlabError for a ``--target-size`` below :data:`MIN_FILE_BYTES`, the smallest file
    target ssdlab makes (a plan must not show a size the run would not use)."""
    if size_bytes < MIN_FILE_BYTES:
        raise SsdlabError(
            f"--target-size {size_bytes:,} bytes: a file target is at least "
            f"{MIN_FILE_BYTES:,} bytes ({format_size(MIN_FILE_BYTES)})"
        )


def plan_target(
    target: Path | None,
    results_dir: Path,
    *,
    size_bytes: int,
    writes: bool,
    destroy_data: str | None = None,
) -> TargetInfo:
    """Check the target and describe it as :func:`prepare_target` would leave it, changing
    nothing (a file's size is what it will have once grown to ``size_bytes``). Symlinks are
    resolved once, here: fio's job files name the path this returns."""
    path = Path(os.path.realpath(results_dir / TEMP_TARGET if target is None else target))
    fio_options.check_target(str(path))  # before anything is written, not at the first step
    if path.exists() and stat.S_ISBLK(path.stat().st_mode):
        device = check_writable(path, destroy_data) if writes else check_readable(path)
        return TargetInfo(
            path=str(path),
            kind="block",
            size_bytes=device.size_bytes,
            device=device.model_dump(exclude={"children"}),
        )
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise SsdlabError(f"{path}: target must be a regular file or a block device")
    check_file_target(path, results_dir)
    if not path.parent.is_dir():
        raise SsdlabError(f"{path}: target's directory {path.parent} does not exist")
    refuse_new_file_in_dev(path)
    if not writes and target is not None and not path.exists():
        raise SsdlabError(f"{path}: a read-only suite needs an existing target")
    current = path.stat().st_size if path.exists() else 0
    keep = not writes and target is not None  # a read-only run never writes the user's file
    return TargetInfo(
        path=str(path),
        kind="file",
        size_bytes=current if keep else max(size_bytes, MIN_FILE_BYTES, current),
        temporary=target is None,
    )


def _loop_backed(path: str | Path) -> str | None:
    """The loop device (``/dev/loop2``) the existing file ``path`` backs, mounted or not."""
    for backing in SYS_CLASS_BLOCK.glob("loop*/loop/backing_file"):
        with contextlib.suppress(OSError):
            name = backing.read_text().strip().removesuffix(" (deleted)")
            if os.path.realpath(name) == str(path) or os.path.samefile(name, path):
                return f"/dev/{backing.parent.parent.name}"
    return None


def check_file_target(path: Path, results_dir: Path) -> None:
    """SsdlabError for a resolved ``path`` no file target may be: under /sys or /proc, the
    backing file of a loop device (writing it corrupts the device), a manifest or fleet
    record, or a file inside another results directory (``results_dir``'s own files, its
    temporary target, are this run's)."""
    if path.is_relative_to("/sys") or path.is_relative_to("/proc"):
        raise SsdlabError(f"{path}: a target cannot be under /sys or /proc")
    if not path.is_file():
        return
    if loop := _loop_backed(path):
        raise SsdlabError(
            f"{path}: it backs the loop device {loop}, which writing it would corrupt "
            f"(detach it first: losetup -d {loop})"
        )
    own = Path(os.path.realpath(results_dir))
    if path.name in (MANIFEST, FLEET_FILE):
        raise SsdlabError(f"{path}: a results directory's record cannot be a target")
    for folder in path.parents:  # up to this run's own results directory
        if folder == own:
            return
        if any((folder / name).exists() for name in (MANIFEST, FLEET_FILE)):
            raise SsdlabError(
                f"{path}: a file of the results directory {folder} cannot be a target"
            )


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a directory" if stat.S_ISDIR(mode) else "neither a file nor a block device"


def check_unchanged(info: TargetInfo, *, writes: bool) -> None:
    """SsdlabError unless the target is still what the run planned (before each step): its
    path still resolves to itself (no symlink swapped in), it is of the same kind, a file
    backs no loop device and a block device is the one recorded, still safe to write when
    ``writes`` (:func:`ssdlab.devices.check_same`)."""
    real = os.path.realpath(info.path)
    planned = "a block device" if info.kind == "block" else "a regular file"
    try:
        now = _kind(os.stat(real).st_mode)
    except OSError as exc:
        raise SsdlabError(f"target {info.path}: cannot inspect it: {exc.strerror}") from None
    if real != info.path:
        raise SsdlabError(f"target {info.path} now resolves to {real} ({now})")
    if now != planned:
        raise SsdlabError(f"target {info.path} is now {now}, not {planned}")
    if info.kind == "block":
        check_same(info.path, info.device or {}, writes=writes)
    elif loop := _loop_backed(info.path):
        raise SsdlabError(f"target {info.path} now backs the loop device {loop}")


def refuse_new_file_in_dev(path: str | Path) -> None:
    """SsdlabError for a path that does not exist and resolves (symlinks followed, a
    dangling one too) into ``/dev``: a mistyped device must not become a file in devtmpfs."""
    if not os.path.exists(path) and Path(os.path.realpath(path)).is_relative_to("/dev"):
        raise SsdlabError(
            f"{path}: no such device (ssdlab never creates a file target in /dev; "
            "lsblk lists the block devices)"
        )


def prepare_target(
    target: Path | None,
    results_dir: Path,
    *,
    size_bytes: int,
    writes: bool,
    destroy_data: str | None = None,
    planned: TargetInfo | None = None,
) -> TargetInfo:
    """Check the target and get it ready.

    ``None`` means a temporary file inside the results directory, removed after the run. A
    file is created (or grown) to ``size_bytes`` with written data. A block device must pass
    :func:`ssdlab.devices.check_writable` with ``destroy_data`` naming it when the suite
    writes, or :func:`~ssdlab.devices.check_readable` when it only reads. ``planned`` is
    what :func:`plan_target` returned for these arguments, when already called.
    """
    info = planned or plan_target(
        target, results_dir, size_bytes=size_bytes, writes=writes, destroy_data=destroy_data
    )
    if info.kind == "block":
        return info
    path = Path(info.path)
    if writes or info.temporary:
        _allocate(path, max(size_bytes, MIN_FILE_BYTES))
    return info.model_copy(
        update={"size_bytes": path.stat().st_size, "direct_supported": _supports_direct(path)}
    )


def purge(info: TargetInfo) -> str:
    """Return the target to a fresh state: discard every block of a device (blkdiscard), or
    recreate a file. Returns what was done, for the manifest."""
    if info.kind == "block":
        done = subprocess.run(["blkdiscard", "-f", info.path], capture_output=True, text=True)
        if done.returncode != 0:
            raise SsdlabError(f"purge of {info.path} failed: {done.stderr.strip()}")
        return f"blkdiscard {info.path}"
    size = info.size_bytes or MIN_FILE_BYTES
    os.unlink(info.path)
    _allocate(Path(info.path), size)
    return f"recreated {info.path} ({size} bytes)"


def release_target(info: TargetInfo) -> None:
    """Remove a temporary target file."""
    if info.temporary:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(info.path)

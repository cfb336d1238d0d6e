"""Targets fio runs against: a regular file ssdlab creates and sizes, or a block device that
passed the safety checks of :mod:`ssdlab.devices`.

Every path that reaches fio on this machine (``--target``, several of them, a ``--hosts``
entry that is this machine, ACT, a plan) judges its target with :func:`judge_target`, by what
it is rather than what it is called: a file by its device and inode (a hard link or bind
mount could name another run's record), a block device down to the files under its loop
stack."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from . import fio_options, stack
from .atomic import write_error
from .devices import DeviceInfo, check_readable, check_same, check_writable
from .errors import RunInterrupted, SsdlabError
from .layout import (
    ACT_RECORD,
    CATALOG_DATABASE,
    FLEET_FILE,
    LOCK_FILE,
    MANIFEST,
    RESERVE,
    SERVERS_RECORD,
    SMART_HISTORY,
    TEMP_TARGET,
)
from .manifest import TargetInfo
from .units import format_capacity

MIN_FILE_BYTES = 16 * 2**20
#: what makes a directory ssdlab's (a run's, an import's, a fleet's, a SMART history's, a
#: catalog's): no file in it or below it is a target
RESULTS_MARKS = (MANIFEST, FLEET_FILE, ACT_RECORD, SMART_HISTORY, CATALOG_DATABASE)
#: a results directory's own files, never a target in the run's own directory either
OWN_RECORDS = (*RESULTS_MARKS, LOCK_FILE, RESERVE, SERVERS_RECORD)


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
            f"--target-size {size_bytes:,} bytes ({format_capacity(size_bytes)}): a file target "
            f"is at least {MIN_FILE_BYTES:,} bytes ({format_capacity(MIN_FILE_BYTES)})"
        )


Confirm = str | Callable[[DeviceInfo], str | None] | None
"""What confirms writing a block device: ``--destroy-data``'s text, or a function of the
device giving the name that confirms it (None when none does)."""


def judge_target(
    path: str | Path,
    *,
    writes: bool,
    confirm: Confirm,
    own_dir: Path | None,
    temporary: bool = False,
) -> TargetInfo:
    """The one judgement of a target of this machine, whichever path reaches fio (``--target``,
    several, a ``--hosts`` entry that is this machine, ACT): SsdlabError (one line) unless
    ``path``, symlinks resolved once here, may be run on. fio's job files must be able to
    name it; a block device must pass :func:`~ssdlab.devices.check_writable` (confirmed by
    ``confirm``) when the run ``writes``, else :func:`~ssdlab.devices.check_readable`, and
    none of the files at the bottom of its loop stack may be one a file target may not be;
    a file must pass :func:`check_file_target` (``own_dir``: the run's results directory;
    ``temporary``: ``path`` is the run's temporary file in it), be in a directory that
    exists, not be a new file in /dev, and exist when a run that does not write gets it from
    the user. Describes the target as it is now (a file's size, None when it is new)."""
    real = Path(os.path.realpath(path))
    try:
        str(real).encode()
    except UnicodeEncodeError:
        shown = os.fsencode(real).decode(errors="backslashreplace")
        raise SsdlabError(f"{shown}: a target's path must be valid UTF-8") from None
    fio_options.check_target(str(real))  # before anything is written, not at the first step
    try:
        st: os.stat_result | None = real.stat()
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as exc:
        raise SsdlabError(f"{real}: cannot inspect it: {exc.strerror}") from None
    if st is not None and stat.S_ISBLK(st.st_mode):
        device = check_readable(real)
        if writes:
            name = confirm(device) if callable(confirm) else confirm
            device = check_writable(real, name, device)
        _check_bottom(real, device.name)
        return TargetInfo(
            path=str(real),
            kind="block",
            size_bytes=device.size_bytes,
            device=device.model_dump(exclude={"children"}),
        )
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise SsdlabError(f"{real}: target must be a regular file or a block device")
    check_file_target(real, own_dir, temporary=temporary)
    if not real.parent.is_dir():
        raise SsdlabError(f"{real}: target's directory {real.parent} does not exist")
    refuse_new_file_in_dev(real)
    if st is None and not writes and not temporary:
        raise SsdlabError(f"{real}: a read-only suite needs an existing target")
    return TargetInfo(
        path=str(real),
        kind="file",
        size_bytes=None if st is None else st.st_size,
        temporary=temporary,
    )


def plan_target(
    target: Path | None,
    results_dir: Path,
    *,
    size_bytes: int,
    writes: bool,
    destroy_data: str | None = None,
) -> TargetInfo:
    """Judge the target (:func:`judge_target`; ``None``: the temporary file in
    ``results_dir``) and describe it as :func:`prepare_target` would leave it, changing
    nothing (a file's size is what it will have once grown to ``size_bytes``)."""
    temporary = target is None
    info = judge_target(
        results_dir / TEMP_TARGET if target is None else target,
        writes=writes,
        confirm=destroy_data,
        own_dir=results_dir,
        temporary=temporary,
    )
    if info.kind == "block":
        return info
    current = info.size_bytes or 0
    keep = not writes and not temporary  # a read-only run never writes the user's file
    size = current if keep else max(size_bytes, MIN_FILE_BYTES, current)
    return info.model_copy(update={"size_bytes": size})


def _check_bottom(path: str | Path, name: str) -> None:
    """SsdlabError when a file at the bottom of the stack of the block device ``path``
    (kernel name ``name``) is one a file target may not be (:func:`check_file_target`)."""
    for backing in stack.backing_files(path):
        try:
            check_file_target(Path(os.path.realpath(backing)), None, backing=True)
        except SsdlabError as exc:
            raise SsdlabError(f"Refusing to use {path} ({name}): its bytes are in {exc}") from None


def _loop_backed(path: str | Path) -> str | None:
    """The loop device (``/dev/loop2``) the existing file ``path`` backs, mounted or not,
    known by the file's device and inode (whatever name it has now, or had)."""
    st = os.stat(path)
    try:
        attached = stack.attached_loops()
    except SsdlabError as exc:
        raise SsdlabError(f"{path}: cannot tell whether it backs a loop device: {exc}") from None
    if loops := attached.get(("file", st.st_dev, st.st_ino)):
        return f"/dev/{loops[0]}"
    if unknown := attached.get(("file", st.st_dev, 0)):  # seen without root: a deleted file
        raise SsdlabError(
            f"{path}: /dev/{unknown[0]} is backed by a deleted file of the same file system; "
            "without root ssdlab cannot tell whether it is this one (run as root, or detach it)"
        )
    return None


def _linked(path: Path, mounts: list[tuple[str, str, str]]) -> str | None:
    """Why the existing file ``path`` may be reached by other names ssdlab cannot see: its
    hard links (any of them may be in a results directory), or a bind mount of it (one of
    ``mounts``, :func:`_mounts`)."""
    links = path.stat().st_nlink
    if links > 1:
        return (
            f"it has {links} hard links; ssdlab cannot tell what else they name (a results "
            "directory's file, another run's target): give a file with one name"
        )
    if any(point == str(path) for _, _, point in mounts):
        return "it is a mount point (a bind mount of another file); ssdlab cannot tell what it is"
    return None


def _mounts() -> list[tuple[str, str, str]]:
    """(``major:minor``, root, mount point) of every mount on this machine, in mountinfo's
    order (a later one on the same point covers an earlier one)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(errors="replace").splitlines()
    except OSError:
        return []
    octal = re.compile(r"\\([0-7]{3})")  # mountinfo writes a blank as \040

    def unescape(text: str) -> str:
        return octal.sub(lambda m: chr(int(m[1], 8)), text)

    fields = (line.split(" ") for line in lines)
    return [(f[2], unescape(f[3]), unescape(f[4])) for f in fields if len(f) > 4]


def _views(path: Path, mounts: list[tuple[str, str, str]]) -> list[Path]:
    """``path`` and, when the mount holding it (of ``mounts``, :func:`_mounts`) shows a
    directory of its file system (a bind mount: its root is not ``/``), the same path in
    every other mount of that file system that shows it (none in a container that sees
    only the bind mount)."""
    holding = None
    for mount in mounts:
        if path.is_relative_to(mount[2]) and (holding is None or len(mount[2]) >= len(holding[2])):
            holding = mount
    if holding is None or holding[1] == "/":
        return [path]
    device, root, point = holding
    inner = Path(root) / path.relative_to(point)
    views = [
        Path(other) / inner.relative_to(shown)
        for dev, shown, other in mounts
        if dev == device and other != point and inner.is_relative_to(shown)
    ]
    return list(dict.fromkeys([path, *views]))


def _inode(path: Path) -> tuple[int, int] | None:
    """The device and inode of ``path``, or None when it cannot be inspected."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def check_file_target(
    path: Path, own_dir: Path | None, *, temporary: bool = False, backing: bool = False
) -> None:
    """SsdlabError for a resolved ``path`` no file target may be, judged by what it is, not
    by its name: under /sys or /proc; an existing file that backs a loop device (writing it
    corrupts the device; ``backing``: it is known to, the caller judges the device), has
    other names (hard links, a bind mount: :func:`_linked`), or any file, existing or to be
    created, in a results directory (one holding a record of :data:`RESULTS_MARKS`, at any
    depth), on its path or where a bind mount of a directory shows it (:func:`_views`). The
    run's own results directory ``own_dir`` may hold its temporary target (``temporary``) and
    the user's files directly in it (known by identity in any view), never its records or
    files below."""
    if path.is_relative_to("/sys") or path.is_relative_to("/proc"):
        raise SsdlabError(f"{path}: a target cannot be under /sys or /proc")
    mounts = _mounts()
    if path.is_file():
        if not backing and (loop := _loop_backed(path)):
            raise SsdlabError(
                f"{path}: it backs the loop device {loop}, which writing it would corrupt "
                f"(detach it first: losetup -d {loop})"
            )
        if problem := _linked(path, mounts):
            raise SsdlabError(f"{path}: {problem}")
    own = Path(os.path.realpath(own_dir)) if own_dir is not None else None
    if own is not None and path.parent == own and path.name in OWN_RECORDS:
        raise SsdlabError(f"{path}: a results directory's record cannot be a target")
    own_inode = _inode(own) if own is not None else None
    for view in _views(path, mounts):  # a bind mount may show a results directory's file elsewhere
        shown = "" if view == path else f" (also {view})"
        for folder in view.parents:
            if view.parent == folder and (
                folder == own or (own_inode is not None and _inode(folder) == own_inode)
            ):
                if temporary:  # ssdlab's own file in its own directory
                    break
                continue  # the user's file in the run's directory (not its records: above)
            if any(os.path.lexists(folder / name) for name in RESULTS_MARKS):
                if view.parent == folder and view.name in RESULTS_MARKS:
                    raise SsdlabError(
                        f"{path}{shown}: a results directory's record cannot be a target"
                    )
                raise SsdlabError(
                    f"{path}{shown}: a file of the results directory {folder} cannot be a target"
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
    backs no loop device and has no other name, and a block device is the one recorded, still
    safe to write when ``writes`` (:func:`ssdlab.devices.check_same`), with no file at the
    bottom of its stack that a file target may not be (as :func:`judge_target` judges it)."""
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
        _check_bottom(info.path, (info.device or {}).get("name", info.path))
    elif loop := _loop_backed(info.path):
        raise SsdlabError(f"target {info.path} now backs the loop device {loop}")
    elif problem := _linked(Path(info.path), _mounts()):
        raise SsdlabError(f"target {info.path}: {problem}")


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

"""Targets fio runs against: a regular file ssdlab creates and sizes, or (later) a device."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from .errors import SsdlabError
from .manifest import TargetInfo

TEMP_TARGET = "target.tmp"


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


def prepare_target(target: Path | None, results_dir: Path) -> TargetInfo:
    """Check the target and create it if it is a missing file; ``None`` means a temporary file
    inside the results directory, removed after the run."""
    temporary = target is None
    path = (results_dir / TEMP_TARGET if target is None else target).absolute()
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISBLK(mode):
            raise SsdlabError(
                f"{path} is a block device: device targets need the safety checks and "
                "--destroy-data confirmation of the suites release; use a file for now"
            )
        if not stat.S_ISREG(mode):
            raise SsdlabError(f"{path}: target must be a regular file (or a block device)")
    elif not path.parent.is_dir():
        raise SsdlabError(f"{path}: target's directory {path.parent} does not exist")
    else:
        path.touch()
    return TargetInfo(
        path=str(path),
        kind="file",
        size_bytes=path.stat().st_size or None,
        temporary=temporary,
        direct_supported=_supports_direct(path),
    )


def release_target(info: TargetInfo) -> None:
    """Remove a temporary target file."""
    if info.temporary:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(info.path)

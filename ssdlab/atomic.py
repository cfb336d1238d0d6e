"""Atomic file writes: a reader sees the old file or the whole new one, never a part; a
write that fails is one line (:func:`write_error`), a full file system named by its mount."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from .errors import SsdlabError


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename over ``path``;
    SsdlabError (one line) when it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def fsync_dir(directory: Path) -> None:
    """Make a rename or creation inside ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def mount_point(path: str | Path) -> Path:
    """The mount point of the file system holding ``path`` (or its nearest existing parent)."""
    here = Path(os.path.realpath(path))
    while not here.exists() or not os.path.ismount(here):
        here = here.parent
    return here


def write_error(path: str | Path, exc: OSError) -> SsdlabError:
    """One line for a failed write: a full file system is named by its mount point."""
    if exc.errno == errno.ENOSPC:
        return SsdlabError(f"no space left on {mount_point(path)} while writing {path}")
    return SsdlabError(f"{path}: cannot write: {exc.strerror or exc}")

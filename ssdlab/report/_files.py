"""Report output files: atomic replacement, and one line (never a traceback) for a write that
fails, such as one on a read-only or full file system."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..atomic import write_error
from ..errors import SsdlabError


def _not_a_directory(path: Path) -> None:
    if path.is_dir():
        raise SsdlabError(
            f"{path} is a directory: give the output file's name (e.g. {path}/report.html)"
        )


def check_writable(path: Path, *, directory: bool = False) -> None:
    """Fail now, before any work, when the file ``path`` (or with ``directory``, the directory
    ``path`` for files) cannot be written: a file that is a directory, or no file can be
    created in that directory (made if missing)."""
    if not directory:
        _not_a_directory(path)
    folder = path if directory else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise write_error(path, exc) from None


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yield a new empty temporary file beside ``path``; when the block succeeds, rename it
    over ``path``.

    Readers see the old file or the complete new one; a failed block leaves no temporary file.
    A ``path`` that is a directory, or one that cannot be created or replaced, is an error
    naming it.
    """
    _not_a_directory(path)
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.touch(exist_ok=False)
        except OSError as exc:
            raise write_error(path, exc) from None
        yield tmp
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise write_error(path, exc) from None
    finally:
        if os.path.lexists(tmp):
            with contextlib.suppress(OSError):  # the error that got here matters, not this
                tmp.unlink()


def write_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (:func:`replacing`); one line when it cannot."""
    try:
        with replacing(path) as tmp:
            tmp.write_bytes(data)
    except OSError as exc:  # the write itself: a full file system
        raise write_error(path, exc) from None


def remove(path: Path) -> None:
    """Remove the file ``path`` if there is one; one line when it cannot."""
    if not os.path.lexists(path):  # even a missing file's unlink fails on a read-only mount
        return
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise write_error(path, exc) from None

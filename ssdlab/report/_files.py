"""Atomic replacement of output files."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from ..errors import SsdlabError


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds, rename it over ``path``.

    Readers see the old file or the complete new one; a failed block leaves no temporary file.
    A ``path`` that is a directory is an error naming it.
    """
    if path.is_dir():
        raise SsdlabError(
            f"{path} is a directory: give the output file's name (e.g. {path}/report.html)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()

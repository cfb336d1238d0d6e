"""Reading a text file ssdlab was given, with the errors a user can act on."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError


def read_text(path: Path, what: str = "a text file") -> str:
    """The file's text (undecodable bytes replaced); InputError naming the file when it
    cannot be read or is binary (a NUL byte in its first 4 KiB)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if b"\0" in raw[:4096]:
        raise InputError(f"{path}: binary file, not {what}")
    return raw.decode("utf-8", errors="replace")

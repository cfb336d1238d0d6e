"""Reading a file ssdlab was given, with the errors a user can act on.

Only regular files are read: a FIFO would block forever and a symlink to ``/dev/zero`` would
fill memory, so both are refused before any byte is read. Every file is read within the size
limit of its kind (:data:`SIZE_LIMITS`, docs/limits.md), judged on the opened file before a
byte is read: a larger file is one InputError naming it, its size and the limit.
:func:`read_mapping` reads the small TOML/YAML files users write (suites, drive specs)
without YAML aliases, whose expansion can turn a few lines into gigabytes.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InputError
from ..units import format_capacity

MiB = 2**20
GiB = 2**30
#: kind of file, as messages name it -> (the largest ssdlab reads, why). A reader that reads
#: a file whole holds it (and what it parses into) in memory: at its limit it stays well under
#: 4 GB of address space (``prlimit --as``; measured, docs/limits.md). One that streams
#: (per-I/O and histogram logs) holds a chunk and its sums, so its limit bounds the time.
SIZE_LIMITS: dict[str, tuple[int, str]] = {
    "files read whole": (256 * MiB, "any file read whole whose reader names no kind of its own"),
    "fio JSON output": (
        256 * MiB,
        "a result or a --status-interval stream, parsed whole (~6x in memory)",
    ),
    "fio logs": (256 * MiB, "a bw/iops/lat log read whole (~4x in memory): ~9 million rows"),
    "fio per-I/O logs": (64 * GiB, "streamed 16 MiB at a time, summed per millisecond"),
    "fio histogram logs": (16 * GiB, "streamed; a day of 1 s rows of 8 jobs is ~3 GiB"),
    "ACT logs": (256 * MiB, "read whole: a day of 1 s reports is ~60 MiB"),
    "JSON recognised by content": (16 * MiB, "read whole to judge its format: as SMART captures"),
    "SMART captures": (16 * MiB, "smartctl/nvme-cli JSON is ~100 KiB, an exporter dump MBs"),
    "power traces": (256 * MiB, "a CSV parsed whole (~3x in memory): 2.5 hours at 1 kHz"),
    "ipmitool logs": (256 * MiB, "text read whole: a reading is ~300 bytes"),
    "TOML/YAML files": (1 * MiB, "suites, drive specs and QoS profiles are a few KiB"),
}
#: The deepest nesting of lists and tables :func:`read_mapping` takes (suites use 3 or 4).
MAX_DEPTH = 32
_KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a FIFO",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def size_limit(kind: str) -> int:
    """The largest file of ``kind`` (a key of :data:`SIZE_LIMITS`) ssdlab reads, in bytes."""
    return SIZE_LIMITS[kind][0]


def too_large(path: Path | str, size: int, kind: str) -> InputError:
    """The one line for a file of ``kind`` larger than its limit."""
    return InputError(
        f"{path}: {format_capacity(size)}, over ssdlab's {format_capacity(size_limit(kind))} limit "
        f"for {kind} (docs/limits.md)"
    )


def check_utf8_path(path: Path, option: str) -> None:
    """InputError unless ``path`` resolves (links followed) to valid UTF-8, which manifests,
    JSON records and messages can hold; ``option`` names the argument (``--out``)."""
    real = os.path.realpath(path)
    try:
        real.encode()
    except UnicodeEncodeError:
        shown = os.fsencode(real).decode(errors="backslashreplace")
        raise InputError(
            f"{option} {path}: resolves to {shown}, which is not valid UTF-8"
        ) from None


@contextmanager
def open_regular(path: Path | str, kind: str | None = None) -> Iterator[BinaryIO]:
    """The regular file ``path``, open for reading; InputError naming it when it cannot be
    opened, is no regular file or (``kind`` given) is larger than that kind's limit, all
    judged on the open file before any byte is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = next((k for test, k in _KINDS.items() if test(info.st_mode)), None)
            raise InputError(f"{path}: is {what or 'not a regular file'}, not a regular file")
        if kind is not None and info.st_size > size_limit(kind):
            raise too_large(path, info.st_size, kind)
        yield fh


def read_file(path: Path | str, kind: str = "files read whole") -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``path`` and its stat, read within the size limit of
    ``kind`` (:data:`SIZE_LIMITS`); InputError naming the file when it cannot be read, is no
    regular file or is too large (judged before reading, and again for one that grew)."""
    cap = size_limit(kind)
    with open_regular(path, kind) as fh:
        info = os.fstat(fh.fileno())
        try:
            data = fh.read(info.st_size + 1)
            if len(data) > info.st_size:  # grown since it was opened, or sized 0 (/proc)
                data += fh.read(cap + 1 - len(data))
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > cap:
        raise too_large(path, len(data), kind)
    return data, info


def read_bytes(path: Path, limit: int | None = None, kind: str = "files read whole") -> bytes:
    """The bytes of the regular file ``path``, or its first ``limit`` bytes when given; read
    whole only within the size limit of ``kind`` (:func:`read_file`). InputError naming
    the file when it cannot be read, is no regular file or is too large."""
    if limit is None:
        return read_file(path, kind)[0]
    with open_regular(path) as fh:
        try:
            return fh.read(limit)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def read_text(path: Path, what: str = "a text file", kind: str = "files read whole") -> str:
    """The file's text (undecodable bytes replaced); InputError naming the file when it
    cannot be read, is larger than the limit of ``kind`` or is binary (a NUL byte in its
    first 4 KiB)."""
    raw = read_bytes(path, kind=kind)
    if b"\0" in raw[:4096]:
        raise InputError(f"{path}: binary file, not {what}")
    return raw.decode("utf-8", errors="replace")


def _check_yaml_events(text: str, path: Path) -> None:
    """Refuse YAML aliases and nesting deeper than :data:`MAX_DEPTH`, stopping at the first
    (PyYAML takes seconds per thousand levels, so depth is judged before it builds anything)."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise InputError(
                f"{path}:{event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not "
                "supported; write the value out"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(f"{path}: nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def read_mapping(path: Path, what: str) -> dict[str, Any]:
    """A ``.toml``, ``.yaml`` or ``.yml`` file as a mapping; InputError naming the file for
    anything else: unreadable, larger than its size limit (:data:`SIZE_LIMITS`), not UTF-8,
    not valid, YAML aliases, nesting too deep, or not a mapping. ``what`` names the file's
    kind in messages (``"suite file"``)."""
    import yaml  # here: most commands read no mapping, and PyYAML takes ~40 ms to import

    kind = path.suffix.lstrip(".").upper().replace("YML", "YAML")
    if kind not in ("TOML", "YAML"):
        raise InputError(f"{path}: {what}s are .toml, .yaml or .yml")
    raw = read_bytes(path, kind="TOML/YAML files")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}), not a {what}") from None
    try:
        if kind == "TOML":
            data: Any = tomllib.loads(text)
        else:
            _check_yaml_events(text, path)
            data = yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError, ValueError) as exc:  # ValueError: an
        detail = " ".join(str(exc).split())  # integer of more digits than Python converts
        raise InputError(f"{path}: not valid {kind}: {detail}") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply, not a {what}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a {what} must be a mapping of names to values")
    return data


def json_error(
    exc: ValueError | RecursionError, path: Path, what: str = "JSON", nested: str = ""
) -> InputError:
    """The InputError for JSON that ``json`` could not decode (``what``: the kind of JSON
    expected, ``nested``: said after "JSON nested too deeply")."""
    if isinstance(exc, json.JSONDecodeError):
        where = f"line {exc.lineno}, column {exc.colno}"
        return InputError(f"{path}: truncated or malformed {what} at {where}: {exc.msg}")
    if isinstance(exc, RecursionError):
        return InputError(f"{path}: JSON nested too deeply{nested}")
    return InputError(f"{path}: malformed {what}: {exc}")  # an integer of over 4300 digits


def parse_json(text: str, path: Path) -> Any:
    """Decode ``text`` (the contents of ``path``), raising InputError naming the file."""
    if not text.strip():
        raise InputError(f"{path}: empty file")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise json_error(exc, path) from None

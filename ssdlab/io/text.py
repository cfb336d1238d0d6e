"""Reading a file ssdlab was given, with the errors a user can act on.

Only regular files are read: a FIFO would block forever and a symlink to ``/dev/zero`` would
fill memory, so both are refused before any byte is read. :func:`read_mapping` reads the
small TOML/YAML files users write (suites, drive specs) with a size cap and without YAML
aliases, whose expansion can turn a few lines into gigabytes.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from ..errors import InputError

#: The largest TOML/YAML file :func:`read_mapping` takes (suites and drive specs are a few KB).
MAX_MAPPING_BYTES = 1 << 20
#: The deepest nesting of lists and tables :func:`read_mapping` takes (suites use 3 or 4).
MAX_DEPTH = 32
_KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a FIFO",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (its first ``limit`` bytes when given);
    InputError naming the file when it cannot be read or is no regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((k for test, k in _KINDS.items() if test(mode)), "not a regular file")
            raise InputError(f"{path}: is {kind}, not a regular file")
        try:
            return fh.read() if limit is None else fh.read(limit)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def read_text(path: Path, what: str = "a text file") -> str:
    """The file's text (undecodable bytes replaced); InputError naming the file when it
    cannot be read or is binary (a NUL byte in its first 4 KiB)."""
    raw = read_bytes(path)
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
    anything else: unreadable, larger than :data:`MAX_MAPPING_BYTES`, not UTF-8, not valid,
    YAML aliases, nesting too deep, or not a mapping. ``what`` names the file's kind in
    messages (``"suite file"``)."""
    import yaml  # here: most commands read no mapping, and PyYAML takes ~40 ms to import

    kind = path.suffix.lstrip(".").upper().replace("YML", "YAML")
    if kind not in ("TOML", "YAML"):
        raise InputError(f"{path}: {what}s are .toml, .yaml or .yml")
    raw = read_bytes(path, MAX_MAPPING_BYTES + 1)
    if len(raw) > MAX_MAPPING_BYTES:
        raise InputError(f"{path}: larger than {MAX_MAPPING_BYTES >> 20} MiB, not a {what}")
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

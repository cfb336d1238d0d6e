"""Reading the numbers and JSON documents that nvme-cli and smartctl print.

nvme-cli prints its 128-bit counters as a bare number, a ``"%Lf"`` string
(``"136157684.000000"``), a plain string or a string with locale thousands separators,
depending on the version; smartctl adds a ``KEY_s`` string next to values of 2^53 or more.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.text import parse_json, read_text

_DIGITS = re.compile(r"\d+", re.ASCII)
_LONG_DOUBLE = re.compile(r"\d+\.\d{6}", re.ASCII)  # printf("%Lf")
_MAX_DIGITS = 64  # 2^128 has 39 digits; with separators or "%Lf" decimals still under 64
_GROUPED = re.compile(r"\d{1,3}([,.' \u00a0\u202f])\d{3}(?:\1\d{3})*", re.ASCII)


def as_int(value: Any, where: str) -> int:
    """An integer from any of nvme-cli's or smartctl's spellings; ``where`` names it in errors.

    Values beyond 128 bits (the widest NVMe field) are refused; the range each field may take
    is checked by :class:`~ssdlab.telemetry.record.SmartRecord`."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**128:
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**128:
        return int(value)
    if isinstance(value, str) and len(value) <= _MAX_DIGITS:
        text = value.strip()
        if _DIGITS.fullmatch(text):
            return int(text)
        if _LONG_DOUBLE.fullmatch(text):
            return int(Decimal(text))
        if _GROUPED.fullmatch(text):
            return int(re.sub(r"\D", "", text))
    raise InputError(f"{where}: not an integer: {value!r}")


def get_int(doc: dict[str, Any], key: str, where: str) -> int | None:
    """``doc[key]`` as an integer (its exact ``KEY_s`` twin when present), None when absent."""
    value = doc.get(f"{key}_s", doc.get(key))
    return None if value is None else as_int(value, f"{where}: {key}")


def hi_lo(value: Any, where: str) -> int:
    """A 128-bit counter printed as ``{"hi": ..., "lo": ...}``: ``hi << 64 | lo``."""
    if isinstance(value, dict) and "hi" in value and "lo" in value:
        return as_int(value["hi"], f"{where}.hi") << 64 | as_int(value["lo"], f"{where}.lo")
    raise InputError(f"{where}: expected an object with 'hi' and 'lo', found {value!r}")


def times(value: int | None, factor: int) -> int | None:
    """``value * factor``, None passing through."""
    return None if value is None else value * factor


def text_or_none(value: Any, where: str) -> str | None:
    """A stripped string (a number as its text), None for a missing or blank one."""
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise InputError(f"{where}: expected a string, found {type(value).__name__}")
    return str(value).strip() or None


def load_json_object(path: str | Path, what: str, required: tuple[str, ...]) -> dict[str, Any]:
    """The JSON object in ``path``, checked to hold every key in ``required``.

    ``what`` names the expected format in the error, e.g. ``"nvme smart-log JSON"``.
    """
    path = Path(path)
    doc = parse_json(read_text(path, kind="SMART captures"), path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: not {what}: expected a JSON object, found {type(doc).__name__}")
    missing = [key for key in required if key not in doc]
    if missing:
        raise InputError(f"{path}: not {what}: no {', '.join(map(repr, missing))}")
    return doc

"""Parse the size and duration strings fio accepts into plain numbers."""

from __future__ import annotations

import re

#: bytes in a megabyte (10^6), the unit reviews quote bandwidth in
MB = 1e6

_SIZE_RE = re.compile(r"^\s*(0x[\da-f]+|\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(value: int | str) -> int:
    """Bytes in a fio size, read as fio reads it with its default ``kb_base=1024``.

    ``4k``, ``4K`` and ``4kB`` are 4096 bytes; fio's inverted convention makes ``4KiB``
    4000 bytes (see fio's ``kb_base``). A bare number (decimal, or hex as ``0x1000``) is
    bytes.
    """
    if isinstance(value, int):
        return value
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError(f"not a size: {value!r} (use e.g. 4k, 128k, 16g or a byte count)")
    number, prefix, suffix = m.groups()
    base = 1000 if suffix.lower().startswith("i") else 1024
    value = int(number, 16) if number[:2].lower() == "0x" else float(number)  # fio takes hex
    return int(value * base ** _POW[prefix.lower()])


def format_size(n_bytes: int) -> str:
    """Shortest exact binary-prefixed form: 4096 -> ``4k``, 131072 -> ``128k``."""
    for suffix, power in (("p", 5), ("t", 4), ("g", 3), ("m", 2), ("k", 1)):
        unit = 1024**power
        if n_bytes >= unit and n_bytes % unit == 0:
            return f"{n_bytes // unit}{suffix}"
    return str(n_bytes)


def percentile_name(p: float) -> str:
    """Column suffix for a percentile: 99.9 -> ``p99_9``, 50 -> ``p50``."""
    return "p" + f"{p:g}".replace(".", "_")


#: the block-size label of a job that mixes sizes (fio's ``bssplit``, ``bsrange``)
MIXED_BS_LABEL = "mixed-size"


def bs_label(bs_bytes: int | None) -> str:
    """A block size as reviews write it: 4096 -> ``4K``, 131072 -> ``128K``, 512 -> ``512B``;
    None (a job mixing sizes) -> :data:`MIXED_BS_LABEL`."""
    if bs_bytes is None:
        return MIXED_BS_LABEL
    text = format_size(int(bs_bytes)).upper()
    return f"{text}B" if text.isdigit() else text


def qd_label(iodepth: int, numjobs: int = 1) -> str:
    """``QD32``, or ``QD128 (4 × 32)`` for 4 jobs at iodepth 32."""
    if numjobs == 1:
        return f"QD{iodepth}"
    return f"QD{iodepth * numjobs} ({numjobs} × {iodepth})"


def format_duration(seconds: float) -> str:
    """``0.6 s``, ``18 s``, ``30 min``, ``2 h 05 min``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"

"""Parse the size and duration strings fio accepts into plain numbers."""

from __future__ import annotations

import re

#: bytes in a megabyte (10^6), the unit reviews quote bandwidth in
MB = 1e6

#: the largest size fio reads (it parses sizes as signed 64-bit numbers)
MAX_BYTES = 2**63 - 1

_SIZE_RE = re.compile(r"^\s*(0x[\da-f]+|\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(value: int | str) -> int:
    """Bytes in a fio size, read as fio reads it with its default ``kb_base=1024``.

    ``4k``, ``4K`` and ``4kB`` are 4096 bytes; fio's inverted convention makes ``4KiB``
    4000 bytes (see fio's ``kb_base``). A bare number (decimal, or hex as ``0x1000``) is
    bytes. ValueError for anything else and for more than :data:`MAX_BYTES`.
    """
    if isinstance(value, int):
        n_bytes: int | float = value
    elif m := _SIZE_RE.match(value):
        number, prefix, suffix = m.groups()
        base = 1000 if suffix.lower().startswith("i") else 1024
        amount = int(number, 16) if number[:2].lower() == "0x" else float(number)  # as fio
        n_bytes = amount * base ** _POW[prefix.lower()]
    else:
        raise ValueError(f"not a size: {value!r} (use e.g. 4k, 128k, 16g or a byte count)")
    if n_bytes > MAX_BYTES:  # an infinite float too
        raise ValueError(f"size {value!r} is more than fio's largest, {MAX_BYTES:,} bytes")
    return int(n_bytes)


#: what a capacity is written with: ``10GB`` (SI, 10^9), ``10GiB`` (IEC, 2^30), ``10g``/``10G``
#: (fio's bare letters: 2^30), or bytes (decimal, or hex as ``0x1000``)
_CAPACITY_RE = re.compile(r"^\s*(0x[\da-f]+|\d+(?:\.\d+)?)\s*(?:([kmgtp])(i?B)?)?\s*$", re.I)
#: binary prefixes, as the kernel and lsblk count capacities
_IEC = (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def parse_capacity(text: str) -> int:
    """Bytes of a capacity ssdlab is given (``--target-size``), read as written: ``10GB`` is
    10 x 10^9 bytes, ``10GiB`` 10 x 2^30, and a bare letter (``10g``, ``10G``) is fio's
    (``kb_base=1024``: 10 x 2^30); a plain number is bytes. ValueError for anything else
    (``10Gb``: bits?) and for more than :data:`MAX_BYTES`."""
    m = _CAPACITY_RE.match(text)
    if m is None or (m[3] and m[3][-1] != "B"):
        raise ValueError(
            f"not a size: {text!r} (10GB is 10 x 10^9 bytes, 10GiB and 10g are 10 x 2^30, "
            "a plain number is bytes)"
        )
    number, prefix, suffix = m.groups()
    power = _POW[(prefix or "").lower()]
    base = 1000 if suffix and suffix.lower() == "b" else 1024
    amount = int(number, 16) if number[:2].lower() == "0x" else float(number)
    if amount * base**power > MAX_BYTES:
        raise ValueError(f"size {text!r} is more than fio's largest, {MAX_BYTES:,} bytes")
    return int(amount * base**power)


def format_capacity(n_bytes: float) -> str:
    """A capacity (of a drive, a file, a limit) in binary units, as the kernel and lsblk
    give them: ``256 GiB``, ``9.3 GiB``, ``1.5 MiB``, ``512 bytes``."""
    for unit, scale in _IEC:
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n_bytes:.0f} bytes"


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


def fio_seconds(value: object, default_unit: float) -> float | None:
    """A fio time value in seconds: ``5s``, ``500ms``, ``2m``, or a number in
    ``default_unit`` seconds (``thinktime``: 1e-6; ``thinktime_iotime``, ``startdelay``: 1)."""
    text = str(value).strip().lower()
    units = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    scale = default_unit
    for suffix, factor in units.items():
        if text.endswith(suffix) and text[: -len(suffix)].replace(".", "", 1).isdigit():
            text, scale = text[: -len(suffix)], factor
            break
    try:
        return float(text) * scale
    except ValueError:
        return None


def format_hms(seconds: float) -> str:
    """``0:00:06``, ``2:55:40``: a plan's or an ETA's time, whole seconds (never negative)."""
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def format_duration(seconds: float) -> str:
    """``0.6 s``, ``18 s``, ``30 min``, ``2 h 05 min``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"

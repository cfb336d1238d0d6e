"""Quarch power module stream CSV.

Header: ``Time us`` (µs since stream start; ``s``/``ms``/``ns`` also accepted), then
``"<channel> <unit>"`` columns with integers in mV, uA or uW (e.g. ``12V mV``, ``12V uA``,
``12V uW``) and the total ``Tot uW``. Channel names are read from the header, not assumed;
a quantity word before the unit (``12V Voltage mV``, ``Tot Power uW``) is not part of it.
Times become epoch seconds from ``start_epoch_s``, or from a line before the header such as
``Start time: 1700000000.5`` or ``Start time: 2023-11-14T22:13:20+00:00`` (epoch seconds or
ISO 8601 with a UTC offset); the header must be within the first 64 KiB.

Output: ``time_s``, ``power_w`` (``Tot`` when present, else the sum over channels of their
power, or of voltage x current); for one channel also ``voltage_v``/``current_a``; for several,
``<channel>_voltage_v``, ``<channel>_current_a``, ``<channel>_power_w`` (channel lower-cased,
non-alphanumerics as ``_``).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path

import polars as pl

from ...errors import InputError
from ...formats import Format, Probe
from ...io.text import read_bytes
from .trace import PowerTrace, make_trace, read_csv, scaled, unit_scale

NAME = "quarch"
_HEADER = re.compile(r"^Time (s|ms|us|ns)\s*,", re.MULTILINE)
# possessive \s*+ and a lookbehind keep these linear on long runs of spaces
_START = re.compile(r"^\s*start(?:[ _]time)?\s*[:,=]\s*+(.*\S)\s*$", re.IGNORECASE)
_BASE = {"V": "voltage_v", "A": "current_a", "W": "power_w"}
_QUANTITY_WORD = re.compile(r"(?<!\s)\s+(?:voltage|current|power)$", re.IGNORECASE)
TOTAL_CHANNEL = "Tot"
_PREAMBLE_BYTES = 64 * 1024


def sniff(probe: Probe) -> bool:
    return _HEADER.search(probe.head) is not None


def _epoch(text: str, where: str) -> float:
    try:
        epoch = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(epoch):
            raise InputError(f"{where}: start time {text!r} is not a time")
        return epoch
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"{where}: start time {text!r} is neither epoch seconds nor ISO 8601"
        ) from None
    if when.tzinfo is None:
        raise InputError(f"{where}: start time {text!r} has no UTC offset")
    return when.timestamp()


def _preamble(path: Path) -> tuple[int, float | None]:
    """The header's line index and the start time found above it, if any."""
    start = None
    head = read_bytes(path, _PREAMBLE_BYTES).decode("utf-8", errors="replace")
    for index, line in enumerate(head.split("\n")):  # lines as polars counts them
        if _HEADER.match(line):
            return index, start
        m = _START.match(line)
        if m:
            start = _epoch(m.group(1), f"{path}: line {index + 1}")
    raise InputError(
        f"{path}: no Quarch header line starting with 'Time us,' in its first "
        f"{_PREAMBLE_BYTES >> 10} KiB"
    )


def _slug(channel: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", channel.lower()).strip("_")


def read_quarch_csv(path: str | Path, start_epoch_s: float | None = None) -> PowerTrace:
    """Read a Quarch stream CSV; ``start_epoch_s`` (epoch s of time 0) overrides the file's."""
    path = Path(path)
    header_index, file_start = _preamble(path)
    start = start_epoch_s if start_epoch_s is not None else file_start
    if start is None:
        raise InputError(
            f"{path}: Quarch times are relative to the stream start and the file has no "
            "'Start time:' line: pass start_epoch_s"
        )
    frame = read_csv(path, skip_rows=header_index)
    time_col, *value_cols = frame.columns
    if not _HEADER.match(f"{time_col},"):
        raise InputError(f"{path}: line {header_index + 1}: cannot read the Quarch header")
    channels: dict[str, dict[str, pl.Expr]] = {}
    for col in value_cols:
        channel, _, unit = col.strip().rpartition(" ")
        channel = _QUANTITY_WORD.sub("", channel)
        base = unit[-1:]
        if not channel or base not in _BASE:
            raise InputError(f"{path}: column {col!r} is not '<channel> <unit>' in V, A or W")
        quantity = _BASE[base]
        channels.setdefault(channel, {})[quantity] = scaled(col, unit_scale(unit, base, str(path)))
    total = channels.pop(TOTAL_CHANNEL, {}).get("power_w")
    if not channels and total is None:
        raise InputError(f"{path}: no power channels after {time_col!r}")
    time_unit = time_col.split()[-1]
    columns = {"time_s": scaled(time_col, unit_scale(time_unit, "s", str(path))) + start}
    for channel, values in channels.items():
        if "power_w" not in values and {"voltage_v", "current_a"} <= values.keys():
            values["power_w"] = values["voltage_v"] * values["current_a"]
        prefix = "" if len(channels) == 1 else f"{_slug(channel)}_"
        columns |= {f"{prefix}{quantity}": expr for quantity, expr in values.items()}
    if total is None:
        missing = [c for c, values in channels.items() if "power_w" not in values]
        if missing:
            raise InputError(
                f"{path}: no 'Tot uW' column and channel(s) {', '.join(missing)} have neither "
                "power nor voltage and current"
            )
        total = pl.sum_horizontal(values["power_w"] for values in channels.values())
    columns["power_w"] = total
    meta = {"source": NAME, "start_epoch_s": start, "channels": list(channels)}
    return make_trace(frame, path, columns, meta)


FORMAT = Format(NAME, "power", read_quarch_csv, sniff, options=("start_epoch_s",))

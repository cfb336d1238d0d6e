"""Any CSV power log, given which column holds what and in which unit.

``columns`` maps ``time`` (required), ``power``, ``voltage``, ``current`` to the file's column
names; without ``power``, power = voltage x current. ``units`` defaults to s, W, V, A; times
relative to the start of the log are made epoch seconds with ``start_epoch_s``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from pathlib import Path

from ...errors import InputError
from ...formats import Format
from ...io.text import read_bytes
from .trace import PowerTrace, make_trace, read_csv, require_columns, scaled, unit_scale

NAME = "csv"
_BASE = {"time": "s", "power": "W", "voltage": "V", "current": "A"}
_CANONICAL = {"time": "time_s", "power": "power_w", "voltage": "voltage_v", "current": "current_a"}


def read_power_csv(
    path: str | Path,
    columns: Mapping[str, str],
    *,
    units: Mapping[str, str] | None = None,
    start_epoch_s: float = 0.0,
) -> PowerTrace:
    """Read a CSV power log, e.g. ``columns={"time": "ts", "power": "mw"}, units={"power":
    "mW", "time": "ms"}``."""
    path = Path(path)
    unknown = set(columns) - set(_BASE) | set(units or {}) - set(_BASE)
    if unknown or "time" not in columns:
        raise InputError(
            f"{path}: columns needs 'time' and keys among {', '.join(_BASE)}; "
            f"unknown: {', '.join(sorted(unknown)) or 'none'}"
        )
    if "power" not in columns and not {"voltage", "current"} <= set(columns):
        raise InputError(f"{path}: columns needs 'power', or 'voltage' and 'current'")
    frame = read_csv(path)
    require_columns(frame, list(columns.values()), path)
    exprs = {
        _CANONICAL[key]: scaled(
            col, unit_scale((units or {}).get(key, _BASE[key]), _BASE[key], str(path))
        )
        for key, col in columns.items()
    }
    exprs["time_s"] = exprs["time_s"] + start_epoch_s
    if "power_w" not in exprs:
        exprs["power_w"] = exprs["voltage_v"] * exprs["current_a"]
    return make_trace(frame, path, exprs, {"source": NAME, "columns": dict(columns)})


FORMAT = Format(
    NAME,
    "power",
    read_power_csv,
    options=("columns", "units", "start_epoch_s"),
    needs=("columns",),
)


_TIME = re.compile(r"^(time|timestamp|ts|t|epoch|seconds|secs?|elapsed)([ _(\[].*)?$", re.I)
_POWER = re.compile(r"^(power|watts?|w|mw|p|pwr)([ _(\[].*)?$", re.I)
_VOLTAGE = re.compile(r"^(voltage|volts?|v|vin|vout)([ _(\[].*)?$", re.I)
_CURRENT = re.compile(r"^(current|amps?|a|i|iin|iout|ma)([ _(\[].*)?$", re.I)


def csv_columns(path: str | Path) -> list[str] | None:
    """The header of ``path`` when it reads as a CSV file with one (None otherwise)."""
    try:  # a FIFO or a device is refused unread
        head = read_bytes(Path(path), 64 * 1024).decode("utf-8", errors="replace")
    except InputError:
        return None
    lines = [line for line in head.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines[:20]), delimiters=",;\t")
    except csv.Error:
        return None
    header = next(csv.reader([lines[0]], dialect))
    names = [name.strip() for name in header]
    return names if len(names) >= 2 and all(names) else None


def mapping_hint(path: str | Path) -> str | None:
    """How to read ``path`` with the generic CSV reader (``ssdlab power attach``'s options),
    naming its columns and, where their names say so, which is which; None when it is not a
    CSV file with a header."""
    names = csv_columns(path)
    if names is None:
        return None
    shown = ", ".join(names)

    def find(pattern: re.Pattern[str]) -> str | None:
        return next((n for n in names if pattern.match(n)), None)

    time = find(_TIME) or "TIME_COLUMN"
    power, volts, amps = find(_POWER), find(_VOLTAGE), find(_CURRENT)
    if power or not (volts and amps):
        columns = f"--column power={power or 'WATTS_COLUMN'}"
    else:
        columns = f"--column voltage={volts} --column current={amps}"
    return (
        f"a CSV of another meter is read by naming its columns: --format csv "
        f"--column time={time} {columns} (or --column voltage=COL --column current=COL), "
        "with --unit time=ms or power=mW when they are not s and W, and --start-epoch SECONDS "
        f"when its times start at 0; its columns: {shown}"
    )

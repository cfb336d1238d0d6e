"""Any CSV power log, given which column holds what and in which unit.

``columns`` maps ``time`` (required), ``power``, ``voltage``, ``current`` to the file's column
names; without ``power``, power = voltage x current. ``units`` defaults to s, W, V, A; times
relative to the start of the log are made epoch seconds with ``start_epoch_s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...errors import InputError
from ...formats import Format
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


FORMAT = Format(NAME, "power", read_power_csv)

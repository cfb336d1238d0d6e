"""Yokogawa power analyser logs written by yokotool: CSV with header ``T,P,V,I``.

Units: T epoch seconds, P watts, V volts, I amperes (V and I optional).
"""

from __future__ import annotations

from pathlib import Path

from ...formats import Format, Probe
from .trace import PowerTrace, make_trace, read_csv, require_columns, scaled

NAME = "yokotool"


def sniff(probe: Probe) -> bool:
    first = probe.head.lstrip().split("\n", 1)[0]
    return [name.strip() for name in first.split(",")][:2] == ["T", "P"]


def read_yokotool_csv(path: str | Path) -> PowerTrace:
    """Read a yokotool CSV (``T,P,V,I``) into a power trace."""
    path = Path(path)
    frame = read_csv(path)
    require_columns(frame, ["T", "P"], path)
    columns = {"time_s": scaled("T", 1.0), "power_w": scaled("P", 1.0)}
    for name, canonical in (("V", "voltage_v"), ("I", "current_a")):
        if name in frame.columns:
            columns[canonical] = scaled(name, 1.0)
    return make_trace(frame, path, columns, {"source": NAME})


FORMAT = Format(NAME, "power", read_yokotool_csv, sniff)

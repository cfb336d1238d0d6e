"""``ipmitool dcmi power reading`` output, one or many readings in a text file.

Each reading has ``Instantaneous power reading: N Watts`` (used as ``power_w``),
``IPMI timestamp: ...`` and ``Sampling period: N Seconds.``; since ipmitool 1.8.19 two fields
can share a line, so fields are found by regex, not by line. A reading's time is a line of
bare epoch seconds just before it (as ``date +%s.%N`` prints in a capture loop), else its IPMI
timestamp (the BMC's clock: ``Thu Jan  1 00:00:00 1970`` before 1.8.19, ``10/12/23 13:29:17
CEST`` after) when it is after 2000. Some BMCs report 0 W or 65535 W: such readings (and
numbers too long to be a time or a reading) are dropped and counted in
``meta["dropped_invalid"]``; readings without a time in ``dropped_no_time``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from ...errors import InputError
from ...formats import Format, Probe
from ...io.text import read_text
from .trace import PowerTrace, drop_invalid

NAME = "ipmitool_dcmi"
INVALID_W = frozenset({0, 65535})
_LABELS = r"Instantaneous|Minimum|Maximum|Average|IPMI timestamp|Sampling period|Power reading"
_INSTANTANEOUS = r"Instantaneous power reading:\s*(?P<watts>\d+)\s*Watts"
_TOKEN = re.compile(
    # the words up to the next label or the end of the line; possessive [ \t]++ keeps a long
    # run of spaces linear
    _INSTANTANEOUS + rf"|IPMI timestamp:[ \t]*+(?P<stamp>\S+(?:[ \t]++(?!{_LABELS})\S+)*)"
    r"|Sampling period:\s*(?P<period>\d+)\s*Seconds"
    r"|^[ \t]*(?P<epoch>\d{9,}(?:\.\d+)?)[ \t]*$",
    re.MULTILINE,
)
_STAMP_FORMATS = ("%a %b %d %H:%M:%S %Y", "%m/%d/%y %H:%M:%S")
_UTC_NAMES = {"UTC", "GMT", "Z"}
_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC).timestamp()


def sniff(probe: Probe) -> bool:
    return "Instantaneous power reading:" in probe.head


def parse_instantaneous(text: str) -> float | None:
    """Watts of the first reading in ``text``; None for the invalid 0 W and 65535 W."""
    m = re.search(_INSTANTANEOUS, text)
    if m is None:
        raise ValueError("no 'Instantaneous power reading' in ipmitool output")
    watts = int(m["watts"])
    return None if watts in INVALID_W else float(watts)


def _stamp_epoch(text: str, tz: ZoneInfo | None) -> float | None:
    """Epoch seconds of an IPMI timestamp; None when unparsable or before 2000 (clock unset)."""
    words = text.split()
    zone = words.pop() if len(words) > 1 and words[-1].isalpha() else None
    for fmt in _STAMP_FORMATS:
        try:
            when = datetime.strptime(" ".join(words), fmt)
        except ValueError:
            continue
        if zone in _UTC_NAMES:
            when = when.replace(tzinfo=UTC)
        elif tz is not None:
            when = when.replace(tzinfo=tz)
        epoch = when.timestamp()  # naive: this machine's local time, as ipmitool printed it
        return epoch if epoch >= _EARLIEST else None
    return None


def read_ipmitool_dcmi(path: str | Path, *, tz: str | None = None) -> PowerTrace:
    """Read saved ``ipmitool dcmi power reading`` output into a power trace.

    IPMI timestamps naming UTC/GMT are UTC; others are read in ``tz`` (an IANA name such as
    ``"Europe/Berlin"``), or this machine's local time zone when ``tz`` is None.
    """
    path = Path(path)
    try:
        zone = ZoneInfo(tz) if tz else None
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(f"{path}: unknown time zone {tz!r}") from None
    readings: list[dict[str, float | None]] = []
    epoch: float | None = None
    for m in _TOKEN.finditer(read_text(path, kind="ipmitool logs")):
        if m["epoch"]:
            epoch = float(m["epoch"])
        elif m["watts"]:
            readings.append({"watts": float(m["watts"]), "time": epoch, "period": None})
            epoch = None
        elif readings and m["stamp"] and readings[-1]["time"] is None:
            readings[-1]["time"] = _stamp_epoch(m["stamp"], zone)
        elif readings and m["period"]:
            readings[-1]["period"] = float(m["period"])
    if not readings:
        raise InputError(f"{path}: no 'Instantaneous power reading' in file")
    valid = [r for r in readings if r["watts"] not in INVALID_W]
    timed = [r for r in valid if r["time"] is not None]
    frame, overflowed = drop_invalid(
        pl.DataFrame(
            {"time_s": [r["time"] for r in timed], "power_w": [r["watts"] for r in timed]},
            schema={"time_s": pl.Float64, "power_w": pl.Float64},
        )
    )
    meta = {
        "path": str(path),
        "source": NAME,
        "readings": len(readings),
        "samples": frame.height,
        "dropped_invalid": len(readings) - len(valid) + overflowed,
        "dropped_no_time": len(valid) - len(timed),
        "sampling_period_s": sorted({r["period"] for r in readings if r["period"] is not None}),
    }
    return PowerTrace(frame, meta)


FORMAT = Format(NAME, "power", read_ipmitool_dcmi, sniff, options=("tz",))

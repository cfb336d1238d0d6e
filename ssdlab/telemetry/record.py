"""The canonical SMART record every reader returns.

Units: bytes for sizes and byte counters, °C for temperature, hours, percent (``percent_used``
is the NVMe "Percentage Used": 0 new, 100 at rated endurance, may exceed 100), watts.

Values no drive can report are refused when a record is made, whichever reader made it: an
:class:`~ssdlab.errors.InputError` names the file and the field. A capture holding one is
damaged (or its sensor broken), and one wrong counter would spoil every WAF and wear figure
computed from it, so the whole file is rejected rather than the value dropped. The windows:
counters, sizes and ``average_erase_count`` 0 .. 2^128 - 1 (NVMe's widest fields);
``percent_used`` and ``available_spare`` 0 .. 255 (NVMe saturates them at 255);
``critical_warning`` 0 .. 255 (one
byte of flags); ``temperature_c`` :data:`TEMPERATURE_RANGE_C`, -60 .. 200 °C, wider than any
drive's operating or storage range (-273 °C is a sensor reporting 0 K); ``power_states_w``
finite and >= 0.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InputError

#: bytes per NVMe data unit (one thousand 512-byte units)
NVME_DATA_UNIT_BYTES = 512_000
MIB = 2**20
GIB = 2**30

COUNTERS = (
    "host_bytes_written",
    "host_bytes_read",
    "nand_bytes_written",
    "nand_pages_written",
    "host_pages_written",
    "power_on_hours",
    "media_errors",
    "unsafe_shutdowns",
)
UINT128_MAX = 2**128 - 1  # NVMe's widest counters
#: the temperatures (°C) a drive can report; anything outside is a broken sensor or file
TEMPERATURE_RANGE_C = (-60.0, 200.0)
_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        (*COUNTERS, "capacity_bytes", "unallocated_bytes", "average_erase_count"), (0, UINT128_MAX)
    ),
    "percent_used": (0, 255),
    "available_spare": (0, 255),
    "critical_warning": (0, 255),
    "temperature_c": TEMPERATURE_RANGE_C,
}


def _check_ranges(data: dict[str, Any]) -> None:
    """InputError naming the file and field of the first value outside its window."""
    where = data.get("path") or "SMART record"
    for name, (low, high) in _RANGES.items():
        value = data.get(name)
        if isinstance(value, (int, float)) and not low <= value <= high:
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:37]}..."
            raise InputError(f"{where}: {name} = {shown} is impossible (not {low} .. {high})")
    for watts in data.get("power_states_w") or []:
        if isinstance(watts, float) and not (math.isfinite(watts) and watts >= 0):
            raise InputError(f"{where}: power_states_w: {watts!r} W is impossible")


class SmartRecord(BaseModel):
    """One drive's SMART data, whatever tool printed it.

    Fields a format does not expose are None. ``nand_pages_written`` / ``host_pages_written``
    are page-program counts for drives that count NAND writes in pages of unstated size
    (Micron/Crucial attributes 247/248): their ratio is the write amplification even though
    ``nand_bytes_written`` is unknown. ``raw`` is the parsed document as the tool printed it.
    For a snapshot merged from several files, ``origin`` names the file each field came from
    and ``conflicts`` lists, per field, the differing values other files gave.

    ``available_spare`` is the NVMe Available Spare (percent of the spare capacity left).
    ``captured_s`` is when the capture says it was taken (epoch seconds: smartctl's
    ``local_time.time_t``, a Prometheus sample's timestamp), ``host`` the machine it names,
    ``namespace`` the NVMe namespace of the device it was read from (``/dev/nvme0n1``: 1);
    each None when the capture does not say.
    """

    model_config = ConfigDict(extra="forbid")

    source: str
    path: str | None = None
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    capacity_bytes: int | None = None
    unallocated_bytes: int | None = None
    host_bytes_written: int | None = None
    host_bytes_read: int | None = None
    nand_bytes_written: int | None = None
    nand_pages_written: int | None = None
    host_pages_written: int | None = None
    percent_used: int | None = None
    available_spare: int | None = None
    average_erase_count: int | None = None
    temperature_c: float | None = None
    power_on_hours: int | None = None
    media_errors: int | None = None
    unsafe_shutdowns: int | None = None
    critical_warning: int | None = None
    captured_s: float | None = Field(default=None, ge=0, lt=253402300800)  # before year 10000
    host: str | None = None
    namespace: int | None = None
    power_states_w: list[float] = Field(default_factory=list)
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)
    origin: dict[str, str] = Field(default_factory=dict)
    conflicts: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _physical(cls, data: Any) -> Any:
        if isinstance(data, dict):
            _check_ranges(data)
        return data

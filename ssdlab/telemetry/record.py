"""The canonical SMART record every reader returns.

Units: bytes for sizes and byte counters, °C for temperature, hours, percent (``percent_used``
is the NVMe "Percentage Used": 0 new, 100 at rated endurance, may exceed 100), watts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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


class SmartRecord(BaseModel):
    """One drive's SMART data, whatever tool printed it.

    Fields a format does not expose are None. ``nand_pages_written`` / ``host_pages_written``
    are page-program counts for drives that count NAND writes in pages of unstated size
    (Micron/Crucial attributes 247/248): their ratio is the write amplification even though
    ``nand_bytes_written`` is unknown. ``raw`` is the parsed document as the tool printed it.
    For a snapshot merged from several files, ``origin`` names the file each field came from
    and ``conflicts`` lists, per field, the differing values other files gave.
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
    average_erase_count: int | None = None
    temperature_c: float | None = None
    power_on_hours: int | None = None
    media_errors: int | None = None
    unsafe_shutdowns: int | None = None
    critical_warning: int | None = None
    power_states_w: list[float] = Field(default_factory=list)
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)
    origin: dict[str, str] = Field(default_factory=dict)
    conflicts: dict[str, dict[str, Any]] = Field(default_factory=dict)

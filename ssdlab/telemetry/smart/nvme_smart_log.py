"""``nvme smart-log <dev> -o json`` (NVMe SMART / Health Information log, 02h).

Units: ``temperature`` is Kelvin (converted to °C as K - 273, as nvme-cli and smartctl do);
``data_units_*`` are thousands of 512-byte units (bytes = value x 512000). Counters may be
numbers, ``"%Lf"`` strings, plain strings or strings with thousands separators.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...formats import Format, Probe
from .._values import as_int, get_int, load_json_object, times
from ..record import NVME_DATA_UNIT_BYTES, SmartRecord

NAME = "nvme_smart_log"
_REQUIRED = ("critical_warning", "temperature", "data_units_written")


def sniff(probe: Probe) -> bool:
    doc = probe.json
    return isinstance(doc, dict) and all(key in doc for key in _REQUIRED)


def _critical_warning(value: Any, where: str) -> int:
    """An int, or an object with ``value`` in verbose output and nvme-cli 2.11."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    return as_int(value, f"{where}: critical_warning")


def read_nvme_smart_log(path: str | Path) -> SmartRecord:
    """Read ``nvme smart-log -o json`` output into a :class:`SmartRecord`."""
    doc = load_json_object(path, "nvme smart-log JSON", _REQUIRED)
    where = str(path)
    kelvin = get_int(doc, "temperature", where)
    return SmartRecord(
        source=NAME,
        path=where,
        host_bytes_written=times(get_int(doc, "data_units_written", where), NVME_DATA_UNIT_BYTES),
        host_bytes_read=times(get_int(doc, "data_units_read", where), NVME_DATA_UNIT_BYTES),
        percent_used=get_int(doc, "percent_used", where),
        temperature_c=None if kelvin is None else kelvin - 273,
        power_on_hours=get_int(doc, "power_on_hours", where),
        media_errors=get_int(doc, "media_errors", where),
        unsafe_shutdowns=get_int(doc, "unsafe_shutdowns", where),
        critical_warning=_critical_warning(doc["critical_warning"], where),
        raw=doc,
    )


FORMAT = Format(NAME, "SMART", read_nvme_smart_log, sniff)

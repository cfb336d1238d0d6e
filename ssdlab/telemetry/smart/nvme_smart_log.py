"""``nvme smart-log <dev> -o json`` (NVMe SMART / Health Information log, 02h).

Units: ``temperature`` is Kelvin (converted to °C as K - 273, as nvme-cli and smartctl do);
``data_units_*`` are thousands of 512-byte units (bytes = value x 512000). Counters may be
numbers (integers or floats), ``"%Lf"`` strings, plain strings or strings with thousands
separators. A file is recognised by its keys as a whole (the counters and at least
:data:`MIN_KEYS` of the log's keys), so a mock that spells ``critical_warrning`` (as an OCP
test suite's does) is still read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from .._values import as_int, get_int, load_json_object, times
from ..record import NVME_DATA_UNIT_BYTES, SmartRecord

NAME = "nvme_smart_log"
WHAT = "nvme smart-log JSON"
#: the spellings of the critical warning key, nvme-cli's first
CRITICAL_WARNING = ("critical_warning", "critical_warrning")
_REQUIRED = ("temperature", "data_units_written")
#: the log's keys; a file holding :data:`MIN_KEYS` of them (and the required ones) is one
KEYS = frozenset(
    (
        *CRITICAL_WARNING,
        *_REQUIRED,
        "avail_spare",
        "spare_thresh",
        "percent_used",
        "data_units_read",
        "host_read_commands",
        "host_write_commands",
        "controller_busy_time",
        "power_cycles",
        "power_on_hours",
        "unsafe_shutdowns",
        "media_errors",
        "num_err_log_entries",
    )
)
MIN_KEYS = 6


def sniff(probe: Probe) -> bool:
    doc = probe.json
    return (
        isinstance(doc, dict)
        and all(key in doc for key in _REQUIRED)
        and len(KEYS.intersection(doc)) >= MIN_KEYS
    )


def _critical_warning(value: Any, where: str) -> int:
    """An int, or an object with ``value`` in verbose output and nvme-cli 2.11."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    return as_int(value, f"{where}: critical_warning")


def parse_nvme_smart_log(doc: dict[str, Any], where: str) -> SmartRecord:
    """The record of a parsed smart-log document (``where`` names it in errors)."""
    warning = next((key for key in CRITICAL_WARNING if key in doc), None)
    missing = ([] if warning else [CRITICAL_WARNING[0]]) + [k for k in _REQUIRED if k not in doc]
    if missing:
        raise InputError(f"{where}: not {WHAT}: no {', '.join(map(repr, missing))}")
    kelvin = get_int(doc, "temperature", where)
    return SmartRecord(
        source=NAME,
        path=where,
        host_bytes_written=times(get_int(doc, "data_units_written", where), NVME_DATA_UNIT_BYTES),
        host_bytes_read=times(get_int(doc, "data_units_read", where), NVME_DATA_UNIT_BYTES),
        percent_used=get_int(doc, "percent_used", where),
        available_spare=get_int(doc, "avail_spare", where),
        temperature_c=None if kelvin is None else kelvin - 273,
        power_on_hours=get_int(doc, "power_on_hours", where),
        media_errors=get_int(doc, "media_errors", where),
        unsafe_shutdowns=get_int(doc, "unsafe_shutdowns", where),
        critical_warning=_critical_warning(doc[warning], where),
        raw=doc,
    )


def read_nvme_smart_log(path: str | Path) -> SmartRecord:
    """Read ``nvme smart-log -o json`` output into a :class:`SmartRecord`."""
    return parse_nvme_smart_log(load_json_object(path, WHAT, ()), str(path))


FORMAT = Format(NAME, "SMART", read_nvme_smart_log, sniff)

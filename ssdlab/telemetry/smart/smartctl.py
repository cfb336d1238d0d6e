"""``smartctl -j -a <dev>`` for SATA and NVMe drives.

SATA attributes are keyed by ``name`` (their meaning depends on the drive family, not the id):

- host writes: ``Total_LBAs_Written`` (x 512 B; Micron/Crucial 246, Samsung 241),
  ``Host_Writes_32MiB`` (Intel 241); reads: ``Total_LBAs_Read``, ``Host_Reads_32MiB``.
- NAND writes: ``NAND_Writes_32MiB`` (Intel DC 243), ``NAND_Writes_1GiB`` (Intel client 249),
  ``NAND_Writes`` (Samsung 251, read as 512-byte units: its ratio to 241 is about 1.0 on a
  lightly used drive). Micron/Crucial count pages instead: ``Host_Program_Page_Count`` (247)
  and ``FTL_Program_Page_Count``/``Bckgnd_Program_Page_Cnt`` (248), WAF = (247 + 248) / 247.
- wear: ``Percent_Lifetime_Remain`` (Micron 202), ``Media_Wearout_Indicator`` (Intel 233),
  ``Wear_Leveling_Count`` (Samsung 177): percent used = 100 - normalized value; Samsung 177's
  raw value is the average P/E cycle count.
- temperature: the first number of ``raw.string`` of the temperature attribute (°C).
- without those attributes, the ATA Device Statistics of ``smartctl -x`` (any drive):
  ``Logical Sectors Written``/``Read`` (x ``logical_block_size``, 512 when not given) and
  ``Percentage Used Endurance Indicator``.

NVMe: ``nvme_smart_health_information_log`` with temperature in °C and ``data_units_*`` in
thousands of 512-byte units. Values of 2^53 or more are read from smartctl's exact ``KEY_s``.

Other drives (SCSI/SAS): the fields smartctl prints for every drive, ``user_capacity.bytes``,
``temperature.current`` (°C), ``power_on_time.hours`` and, for a SCSI SSD,
``scsi_percentage_used_endurance_indicator``. Its byte counts (``gigabytes_processed``) are
rounded to MB: not read.

A capture is recognised by its fields, with or without smartctl's header (``smartctl``,
``json_format_version``), which monitoring tools often drop: a model name and a serial
number, and a health section or two of capacity, power-on time and temperature.

Every 7.x version is read alike (7.0-7.4 differ in keys this reader does not use, and
``user_capacity`` is missing for a multi-namespace NVMe drive). The capture time is
``local_time.time_t``; the namespace is the one of ``device.name`` (``/dev/nvme0n1``: 1).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from .._values import as_int, get_int, load_json_object, text_or_none, times
from ..record import GIB, MIB, NVME_DATA_UNIT_BYTES, SmartRecord

NAME = "smartctl"

#: attribute name -> bytes per raw unit
HOST_WRITTEN = {"Total_LBAs_Written": 512, "Host_Writes_32MiB": 32 * MIB}
HOST_READ = {"Total_LBAs_Read": 512, "Host_Reads_32MiB": 32 * MIB}
NAND_WRITTEN = {"NAND_Writes_32MiB": 32 * MIB, "NAND_Writes_1GiB": GIB, "NAND_Writes": 512}
HOST_PAGES = ("Host_Program_Page_Count",)
FTL_PAGES = ("FTL_Program_Page_Count", "Bckgnd_Program_Page_Cnt", "Bckgnd_Program_Page_Count")
#: attributes whose normalized value is the percentage of rated life remaining
LIFE_REMAINING = ("Percent_Lifetime_Remain", "Media_Wearout_Indicator", "Wear_Leveling_Count")
AVERAGE_ERASE = ("Wear_Leveling_Count",)
TEMPERATURE = ("Temperature_Celsius", "Airflow_Temperature_Cel", "Temperature_Internal")
UNSAFE_SHUTDOWNS = ("Unexpect_Power_Loss_Ct", "Unsafe_Shutdown_Count", "POR_Recovery_Count")
MEDIA_ERRORS = ("Reported_Uncorrect",)
#: attributes whose normalized value is the percentage of spare blocks left
SPARE_LEFT = ("Available_Reservd_Space", "Available_Reserved_Space")
#: ATA Device Statistics (``smartctl -x``): sectors of ``logical_block_size`` bytes, percent
PERCENT_USED_STATISTIC = "Percentage Used Endurance Indicator"
STATISTICS = ("Logical Sectors Written", "Logical Sectors Read", PERCENT_USED_STATISTIC)
NAMESPACE_DEVICE = re.compile(r"nvme\d+n(\d+)$")

_LEADING_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)")


#: what a capture holds without its header: the drive's identity, and a health section or
#: at least :data:`MIN_COMMON` of the fields smartctl prints for any drive (key, its number)
IDENTITY = ("model_name", "serial_number")
SECTIONS = ("nvme_smart_health_information_log", "ata_smart_attributes", "scsi_error_counter_log")
COMMON = {"user_capacity": "bytes", "power_on_time": "hours", "temperature": "current"}
MIN_COMMON = 2


def _common(doc: dict[str, Any]) -> int:
    """How many of :data:`COMMON` ``doc`` holds as smartctl spells them."""
    return sum(
        isinstance(doc.get(key), dict) and field in doc[key] for key, field in COMMON.items()
    )


def is_capture(doc: Any) -> bool:
    """Whether ``doc`` is smartctl's JSON: its header, or (without it) a drive's model name
    and serial number with a health section or :data:`MIN_COMMON` of :data:`COMMON`."""
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("smartctl"), dict):
        return True
    if not all(isinstance(doc.get(key), str) and doc[key].strip() for key in IDENTITY):
        return False
    return any(isinstance(doc.get(key), dict) for key in SECTIONS) or _common(doc) >= MIN_COMMON


def sniff(probe: Probe) -> bool:
    return is_capture(probe.json)


def _obj(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"{where}: {key}: expected an object, found {value!r}")
    return value


class _Attributes:
    """The ATA attribute table of one file, by name."""

    def __init__(self, doc: dict[str, Any], where: str) -> None:
        table = _obj(doc, "ata_smart_attributes", where).get("table")
        if not isinstance(table, list):
            raise InputError(f"{where}: ata_smart_attributes.table: expected a list")
        self.where = where
        self.by_name: dict[str, dict[str, Any]] = {}
        for i, attr in enumerate(table):
            if not isinstance(attr, dict) or not isinstance(attr.get("raw"), dict):
                raise InputError(
                    f"{where}: ata_smart_attributes.table[{i}]: expected an object with "
                    f"'name' and 'raw', found {attr!r}"
                )
            self.by_name[str(attr.get("name"))] = attr

    def _where(self, name: str) -> str:
        return f"{self.where}: attribute {self.by_name[name].get('id')} {name}"

    def first(self, names: tuple[str, ...] | dict[str, int]) -> str | None:
        return next((n for n in names if n in self.by_name), None)

    def raw(self, name: str | None) -> int | None:
        if name is None:
            return None
        return get_int(self.by_name[name]["raw"], "value", self._where(name))

    def scaled(self, units: dict[str, int]) -> int | None:
        name = self.first(units)
        return None if name is None else times(self.raw(name), units[name])

    def normalized(self, names: tuple[str, ...]) -> int | None:
        """The normalized value of the first of ``names`` the drive has."""
        name = self.first(names)
        if name is None:
            return None
        return as_int(self.by_name[name].get("value"), f"{self._where(name)}: value")

    def percent_used(self) -> int | None:
        left = self.normalized(LIFE_REMAINING)
        return None if left is None else 100 - left

    def temperature_c(self) -> float | None:
        name = self.first(TEMPERATURE)
        if name is None:
            return None
        text = str(self.by_name[name]["raw"].get("string", ""))
        m = _LEADING_NUMBER.match(text)
        if not m:
            raise InputError(f"{self._where(name)}: raw.string has no temperature: {text!r}")
        return float(m.group(1))

    def pages(self) -> tuple[int | None, int | None]:
        """(NAND pages = host + FTL, host pages) when the drive counts both."""
        host, ftl = self.raw(self.first(HOST_PAGES)), self.raw(self.first(FTL_PAGES))
        if host is None or ftl is None:
            return None, None
        return host + ftl, host


def _statistics(doc: dict[str, Any], where: str) -> dict[str, int]:
    """The ATA Device Statistics ``smartctl -x`` prints (drive-independent), by name."""
    found: dict[str, int] = {}
    pages = _obj(doc, "ata_device_statistics", where).get("pages")
    for page in pages if isinstance(pages, list) else []:
        table = page.get("table") if isinstance(page, dict) else None
        for item in table if isinstance(table, list) else []:
            if isinstance(item, dict) and item.get("name") in STATISTICS and "value" in item:
                name = item["name"]
                found[name] = as_int(item["value"], f"{where}: ata_device_statistics: {name}")
    return found


def _or(value: int | None, fallback: int | None) -> int | None:
    return fallback if value is None else value


def ata_fields(doc: dict[str, Any], where: str) -> dict[str, Any]:
    attrs = _Attributes(doc, where)
    stats = _statistics(doc, where)
    block = get_int(doc, "logical_block_size", where) or 512
    nand_pages, host_pages = attrs.pages()
    temperature = attrs.temperature_c()
    if temperature is None:
        temperature = get_int(_obj(doc, "temperature", where), "current", f"{where}: temperature")
    return {
        "capacity_bytes": get_int(_obj(doc, "user_capacity", where), "bytes", where),
        "host_bytes_written": _or(
            attrs.scaled(HOST_WRITTEN), times(stats.get("Logical Sectors Written"), block)
        ),
        "host_bytes_read": _or(
            attrs.scaled(HOST_READ), times(stats.get("Logical Sectors Read"), block)
        ),
        "nand_bytes_written": attrs.scaled(NAND_WRITTEN),
        "nand_pages_written": nand_pages,
        "host_pages_written": host_pages,
        "percent_used": _or(attrs.percent_used(), stats.get(PERCENT_USED_STATISTIC)),
        "available_spare": attrs.normalized(SPARE_LEFT),
        "average_erase_count": attrs.raw(attrs.first(AVERAGE_ERASE)),
        "temperature_c": temperature,
        "media_errors": attrs.raw(attrs.first(MEDIA_ERRORS)),
        "unsafe_shutdowns": attrs.raw(attrs.first(UNSAFE_SHUTDOWNS)),
    }


def _nvme_fields(doc: dict[str, Any], where: str) -> dict[str, Any]:
    log = _obj(doc, "nvme_smart_health_information_log", where)
    lw = f"{where}: nvme_smart_health_information_log"
    written, read = get_int(log, "data_units_written", lw), get_int(log, "data_units_read", lw)
    capacity = get_int(doc, "nvme_total_capacity", where)
    return {
        "capacity_bytes": capacity or get_int(_obj(doc, "user_capacity", where), "bytes", where),
        "unallocated_bytes": get_int(doc, "nvme_unallocated_capacity", where),
        "host_bytes_written": times(written, NVME_DATA_UNIT_BYTES),
        "host_bytes_read": times(read, NVME_DATA_UNIT_BYTES),
        "percent_used": get_int(log, "percentage_used", lw),
        "available_spare": get_int(log, "available_spare", lw),
        "temperature_c": get_int(log, "temperature", lw),
        "power_on_hours": get_int(log, "power_on_hours", lw),
        "media_errors": get_int(log, "media_errors", lw),
        "unsafe_shutdowns": get_int(log, "unsafe_shutdowns", lw),
        "critical_warning": get_int(log, "critical_warning", lw),
    }


def _common_fields(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """The fields smartctl prints for any drive (SCSI/SAS: no ATA or NVMe health section)."""
    return {
        "capacity_bytes": get_int(_obj(doc, "user_capacity", where), "bytes", where),
        "temperature_c": get_int(
            _obj(doc, "temperature", where), "current", f"{where}: temperature"
        ),
        "percent_used": get_int(doc, "scsi_percentage_used_endurance_indicator", where),
    }


def read_smartctl(path: str | Path) -> SmartRecord:
    """Read ``smartctl -j -a`` output (SATA, NVMe or SCSI; with or without its header) into
    a :class:`SmartRecord`."""
    doc = load_json_object(path, "smartctl JSON", ())
    if not is_capture(doc):
        raise InputError(
            f"{path}: not smartctl JSON: no 'smartctl' header, nor a model_name and "
            "serial_number with SMART data"
        )
    return parse_smartctl(doc, str(path))


def parse_smartctl(doc: dict[str, Any], where: str) -> SmartRecord:
    """The record of a parsed ``smartctl -j`` document (``where`` names it in errors)."""
    if "nvme_smart_health_information_log" in doc:
        fields = _nvme_fields(doc, where)
    elif "ata_smart_attributes" in doc:
        fields = ata_fields(doc, where)
    elif _common(doc) or "scsi_percentage_used_endurance_indicator" in doc:
        fields = _common_fields(doc, where)
    else:
        messages = _obj(doc, "smartctl", where).get("messages")
        said = "; ".join(
            str(m.get("string"))
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict) and isinstance(m.get("string"), str)
        )
        raise InputError(
            f"{where}: smartctl JSON without ata_smart_attributes, "
            "nvme_smart_health_information_log, or user_capacity, power_on_time, temperature"
            + (f" (smartctl said: {said})" if said else "")
        )
    if fields.get("power_on_hours") is None:
        fields["power_on_hours"] = get_int(_obj(doc, "power_on_time", where), "hours", where)
    device = text_or_none(_obj(doc, "device", where).get("name"), f"{where}: device.name")
    namespace = NAMESPACE_DEVICE.search(device or "")
    fields["namespace"] = int(namespace.group(1)) if namespace else None
    fields["captured_s"] = get_int(_obj(doc, "local_time", where), "time_t", f"{where}: local_time")
    return SmartRecord(
        source=NAME,
        path=where,
        model=text_or_none(doc.get("model_name"), f"{where}: model_name"),
        serial=text_or_none(doc.get("serial_number"), f"{where}: serial_number"),
        firmware=text_or_none(doc.get("firmware_version"), f"{where}: firmware_version"),
        raw=doc,
        **fields,
    )


FORMAT = Format(NAME, "SMART", read_smartctl, sniff)

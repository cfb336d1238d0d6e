"""smartctl_exporter metrics saved as Prometheus text (``curl host:9633/metrics > dump.prom``).

One dump holds the drives of one host, each named by its ``device`` label::

    smartctl_device{device="nvme0",model_name="...",serial_number="...",firmware_version="..."} 1
    smartctl_device_bytes_written{device="nvme0"} 6.9712734208e+13
    smartctl_device_attribute{attribute_name="Total_LBAs_Written",...,device="sda"} 1.2e+10

Units: ``smartctl_device_bytes_written``/``_read`` and ``_capacity_bytes`` bytes,
``smartctl_device_temperature{temperature_type="current"}`` °C, ``_power_on_seconds`` seconds
(read as whole hours), ``_percentage_used`` and ``_available_spare`` percent. ATA attributes
(``smartctl_device_attribute``, raw and normalized values) are read as :mod:`.smartctl` reads
its attribute table. A sample's optional timestamp (ms) is the capture time; an ``instance``,
``hostname`` or ``host`` label names the host. A value written as an integer is read exactly
at any size; one written as a float (smartctl_exporter's own output, Go's shortest form of
its float64) is that float64: exact below 2^53, beyond it the exporter already rounded it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from ...io.text import read_text
from .._values import text_or_none
from ..record import SmartRecord
from . import smartctl

NAME = "smartctl_exporter"
PREFIX = "smartctl_device"
#: metric -> record field, for the metrics whose value is the field as is
FIELDS = {
    "smartctl_device_capacity_bytes": "capacity_bytes",
    "smartctl_device_bytes_written": "host_bytes_written",
    "smartctl_device_bytes_read": "host_bytes_read",
    "smartctl_device_percentage_used": "percent_used",
    "smartctl_device_available_spare": "available_spare",
    "smartctl_device_media_errors": "media_errors",
    "smartctl_device_critical_warning": "critical_warning",
}
INFO = {"model_name": "model", "serial_number": "serial", "firmware_version": "firmware"}
HOST_LABELS = ("instance", "hostname", "host")
_SAMPLE = re.compile(
    rb"^(smartctl_device\w*)\{([^}]*)\}[ \t]+(\S+)(?:[ \t]+(-?\d+))?[ \t]*\r?$", re.MULTILINE
)
_INTEGER = re.compile(r"[+-]?\d+")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_SNIFF = re.compile(rb"^smartctl_device\w*\{[^}\n]*device=\"", re.MULTILINE)


def sniff(probe: Probe) -> bool:
    """Two or more smartctl_exporter samples naming a device, and no JSON."""
    return probe.json is None and len(_SNIFF.findall(probe.raw, 0, 2**16)) >= 2


def _number(text: str, where: str) -> float:
    shown = repr(text) if len(text) <= 40 else f"{text[:37]!r}..."
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: not a number: {shown}") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: not a finite number: {shown}")
    return value


def _stamp_s(stamp: str, where: str) -> float:
    """A sample's timestamp (epoch milliseconds) in seconds; before the year 10000."""
    if len(stamp) > 16 or not 0 <= int(stamp) < 253402300800000:
        raise InputError(f"{where}: timestamp {stamp[:20]} is not a time (epoch milliseconds)")
    return int(stamp) / 1000


def _whole(text: str, where: str) -> int:
    """An integer value: exact when written as one (a float would round it above 2^53)."""
    if _INTEGER.fullmatch(text) and len(text) <= 40:  # 2^128 has 39 digits
        return int(text)
    value = _number(text, where)
    if not value.is_integer():
        raise InputError(f"{where}: not an integer: {value!r}")
    return int(value)


def samples(text: str) -> Iterator[tuple[str, dict[str, str], str, str | None]]:
    """(metric, labels, value, timestamp ms or None) of each labelled sample."""
    for m in _SAMPLE.finditer(text.encode()):
        metric, labels, value, stamp = (g.decode() if g else None for g in m.groups())
        yield metric, dict(_LABEL.findall(labels)), value, stamp


class _Device:
    """What a dump says of one device: record fields and a smartctl-like attribute table."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.attributes: dict[str, dict[str, Any]] = {}
        self.stamps: list[float] = []


def parse_smartctl_exporter(text: str, where: str) -> list[SmartRecord]:
    """One record per device of a dump, in the order the devices first appear."""
    devices: dict[tuple[str | None, str], _Device] = {}
    for metric, labels, value, stamp in samples(text):
        if "device" not in labels:
            continue
        host = next((labels[k] for k in HOST_LABELS if labels.get(k)), None)
        device = devices.setdefault((host, labels["device"]), _Device())
        at = f"{where}: {metric}{{device={labels['device']!r}}}"
        if stamp is not None:
            device.stamps.append(_stamp_s(stamp, at))
        if metric == PREFIX:
            for label, field in INFO.items():
                device.fields[field] = text_or_none(labels.get(label), at)
        elif metric in FIELDS:
            device.fields[FIELDS[metric]] = _whole(value, at)
        elif metric == "smartctl_device_temperature":
            if labels.get("temperature_type", "current") == "current":
                device.fields["temperature_c"] = _number(value, at)
        elif metric == "smartctl_device_power_on_seconds":
            device.fields["power_on_hours"] = int(_number(value, at) // 3600)
        elif metric == "smartctl_device_attribute" and "attribute_name" in labels:
            attr = device.attributes.setdefault(
                labels["attribute_name"],
                {"id": labels.get("attribute_id"), "name": labels["attribute_name"], "raw": {}},
            )
            number = _whole(value, at)
            if labels.get("attribute_value_type") == "raw":
                attr["raw"] = {"value": number, "string": str(number)}
            elif labels.get("attribute_value_type") == "value":
                attr["value"] = number
    return [_record(host, name, device, where) for (host, name), device in devices.items()]


def _record(host: str | None, name: str, device: _Device, where: str) -> SmartRecord:
    fields = dict(device.fields)
    if device.attributes:
        table = [  # temperature comes from its own metric (a raw value packs min/max in)
            a
            for a in device.attributes.values()
            if "value" in a["raw"] and a["name"] not in smartctl.TEMPERATURE
        ]
        ata = smartctl.ata_fields({"ata_smart_attributes": {"table": table}}, where)
        fields.update({k: v for k, v in ata.items() if v is not None and k not in fields})
    namespace = smartctl.NAMESPACE_DEVICE.search(name)
    return SmartRecord(
        source=NAME,
        path=where,
        host=host,
        namespace=int(namespace.group(1)) if namespace else None,
        captured_s=max(device.stamps) if device.stamps else None,
        raw={"device": name, "host": host},
        **fields,
    )


def read_smartctl_exporter(path: str | Path, device: str | None = None) -> SmartRecord:
    """The record of the dump's only device, or of the one named ``device``."""
    path = Path(path)
    records = parse_smartctl_exporter(
        read_text(path, "a smartctl_exporter dump", "SMART captures"), str(path)
    )
    names = [r.raw["device"] for r in records]
    if not records:
        raise InputError(f"{path}: no smartctl_exporter sample names a device")
    if device is None and len(records) > 1:
        raise InputError(f"{path}: holds several devices ({', '.join(names)}); name one")
    if device is not None and device not in names:
        raise InputError(f"{path}: no device {device!r} (found: {', '.join(names)})")
    return records[0] if device is None else records[names.index(device)]


FORMAT = Format(NAME, "SMART", read_smartctl_exporter, sniff)

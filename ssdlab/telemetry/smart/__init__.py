"""SMART readers, one module per tool output, and the registry that picks one by content.

``read_smart(path)`` detects the format and returns a :class:`~ssdlab.telemetry.record.SmartRecord`.
``SMART_FORMATS`` is the SMART kind of the one format registry (:mod:`ssdlab.formats`); add a
format with ``SMART_FORMATS.register(name, reader, sniff)`` (or an entry point): ``reader(path)``
returns a SmartRecord, ``sniff(probe)`` recognises the file from ``probe.json`` or ``probe.head``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...formats import FORMATS, Format, KindView, Probe
from ..record import SmartRecord
from . import nvme_id_ctrl, nvme_intel, nvme_ocp, nvme_smart_log, smartctl, smartctl_exporter
from .nvme_id_ctrl import read_nvme_id_ctrl
from .nvme_intel import read_nvme_intel_smart_log_add
from .nvme_ocp import read_nvme_ocp_smart_add_log
from .nvme_smart_log import read_nvme_smart_log
from .smartctl import read_smartctl
from .smartctl_exporter import read_smartctl_exporter

SMART_FORMATS: KindView[SmartRecord] = FORMATS.kind("SMART")

#: each built-in JSON reader -> its parser of an already parsed document
_JSON_PARSERS: dict[Callable[..., SmartRecord], Callable[[dict, str], SmartRecord]] = {
    nvme_id_ctrl.read_nvme_id_ctrl: nvme_id_ctrl.parse_nvme_id_ctrl,
    nvme_intel.read_nvme_intel_smart_log_add: nvme_intel.parse_nvme_intel_smart_log_add,
    nvme_ocp.read_nvme_ocp_smart_add_log: nvme_ocp.parse_nvme_ocp_smart_add_log,
    nvme_smart_log.read_nvme_smart_log: nvme_smart_log.parse_nvme_smart_log,
    smartctl.read_smartctl: smartctl.parse_smartctl,
}


def records_of(probe: Probe, fmt: Format[SmartRecord]) -> list[SmartRecord]:
    """The records of a file its ``fmt.sniff`` recognised.

    A built-in format is parsed from the probe (a file read once is not read again); a dump
    of several drives (smartctl_exporter) gives one record per drive; any other format is
    read by its reader."""
    where = str(probe.path)
    if fmt.read in _JSON_PARSERS:
        return [_JSON_PARSERS[fmt.read](probe.json, where)]
    if fmt.read is read_smartctl_exporter:
        return smartctl_exporter.parse_smartctl_exporter(probe.text, where)
    return [fmt.read(probe.path)]


def detect_smart(path: str | Path) -> str:
    """The registered SMART format of ``path``, recognised by its content."""
    return SMART_FORMATS.detect(path)


def read_smart(path: str | Path, format: str | None = None) -> SmartRecord:
    """Read one SMART capture with the named format, or the one its content shows."""
    return SMART_FORMATS.read(path, format)


__all__ = [
    "SMART_FORMATS",
    "detect_smart",
    "read_nvme_id_ctrl",
    "read_nvme_intel_smart_log_add",
    "read_nvme_ocp_smart_add_log",
    "read_nvme_smart_log",
    "read_smart",
    "read_smartctl",
    "read_smartctl_exporter",
    "records_of",
]

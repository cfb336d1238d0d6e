"""SMART readers, one module per tool output, and the registry that picks one by content.

``read_smart(path)`` detects the format and returns a :class:`~ssdlab.telemetry.record.SmartRecord`.
``SMART_FORMATS`` is the SMART kind of the one format registry (:mod:`ssdlab.formats`); add a
format with ``SMART_FORMATS.register(name, reader, sniff)`` (or an entry point): ``reader(path)``
returns a SmartRecord, ``sniff(probe)`` recognises the file from ``probe.json`` or ``probe.head``.
"""

from __future__ import annotations

from pathlib import Path

from ...formats import FORMATS, KindView
from ..record import SmartRecord
from .nvme_id_ctrl import read_nvme_id_ctrl
from .nvme_intel import read_nvme_intel_smart_log_add
from .nvme_ocp import read_nvme_ocp_smart_add_log
from .nvme_smart_log import read_nvme_smart_log
from .smartctl import read_smartctl

SMART_FORMATS: KindView[SmartRecord] = FORMATS.kind("SMART")


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
]

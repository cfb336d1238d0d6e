"""``nvme ocp smart-add-log <dev> -o json`` (OCP Datacenter NVMe SSD SMART extended log, C0h).

Units: bytes. The 128-bit physical media counters are printed as ``{"hi": ..., "lo": ...}``
(value = hi << 64 | lo) under ``"Physical media units written"`` (v1 output) or
``physical_media_units_written`` (``--output-format-version=2``, nvme-cli 2.13+).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from .._values import hi_lo, load_json_object
from ..record import SmartRecord

NAME = "nvme_ocp_smart_add_log"
_WRITTEN_KEYS = ("Physical media units written", "physical_media_units_written")


def sniff(probe: Probe) -> bool:
    doc = probe.json
    return isinstance(doc, dict) and any(key in doc for key in _WRITTEN_KEYS)


def parse_nvme_ocp_smart_add_log(doc: dict[str, Any], where: str) -> SmartRecord:
    """The record of a parsed OCP SMART extended log (``where`` names it in errors)."""
    key = next((k for k in _WRITTEN_KEYS if k in doc), None)
    if key is None:
        raise InputError(f"{where}: not nvme ocp smart-add-log JSON: no {_WRITTEN_KEYS[0]!r}")
    return SmartRecord(
        source=NAME,
        path=where,
        nand_bytes_written=hi_lo(doc[key], f"{where}: {key}"),
        raw=doc,
    )


def read_nvme_ocp_smart_add_log(path: str | Path) -> SmartRecord:
    """Read OCP SMART extended log JSON (v1 or v2 keys) into a :class:`SmartRecord`."""
    doc = load_json_object(path, "nvme ocp smart-add-log JSON", ())
    return parse_nvme_ocp_smart_add_log(doc, str(path))


FORMAT = Format(NAME, "SMART", read_nvme_ocp_smart_add_log, sniff)

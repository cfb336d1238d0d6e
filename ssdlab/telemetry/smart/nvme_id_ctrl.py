"""``nvme id-ctrl <dev> -o json`` (Identify Controller): identity, capacity, power states.

Units: ``tnvmcap``/``unvmcap`` bytes; each ``psds[]`` entry's ``max_power`` is in 0.01 W, or
0.0001 W when the Max Power Scale bit is set (``flags`` bit 0 in older nvme-cli, a separate
``max_power_scale`` field in newer). Power states are limits, not measurements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from .._values import as_int, get_int, load_json_object, text_or_none
from ..record import SmartRecord

NAME = "nvme_id_ctrl"
_REQUIRED = ("mn", "sn", "fr")


def sniff(probe: Probe) -> bool:
    doc = probe.json
    return isinstance(doc, dict) and all(key in doc for key in _REQUIRED)


def _watts(psd: Any, where: str) -> float:
    if not isinstance(psd, dict) or "max_power" not in psd:
        raise InputError(f"{where}: expected an object with 'max_power', found {psd!r}")
    if "max_power_scale" in psd:
        fine = as_int(psd["max_power_scale"], f"{where}.max_power_scale") & 1
    else:
        fine = as_int(psd.get("flags", 0), f"{where}.flags") & 1
    return as_int(psd["max_power"], f"{where}.max_power") * (0.0001 if fine else 0.01)


def read_nvme_id_ctrl(path: str | Path) -> SmartRecord:
    """Read ``nvme id-ctrl -o json`` output: model, serial, firmware, capacity, power states.

    ``capacity_bytes`` is ``tnvmcap`` (None when the drive reports 0, as drives without
    namespace management may); ``unallocated_bytes`` is ``unvmcap``.
    """
    return parse_nvme_id_ctrl(load_json_object(path, "nvme id-ctrl JSON", _REQUIRED), str(path))


def parse_nvme_id_ctrl(doc: dict[str, Any], where: str) -> SmartRecord:
    """The record of a parsed id-ctrl document holding ``mn``, ``sn`` and ``fr``."""
    psds = doc.get("psds") or []
    if not isinstance(psds, list):
        raise InputError(f"{where}: psds: expected a list, found {psds!r}")
    return SmartRecord(
        source=NAME,
        path=where,
        model=text_or_none(doc["mn"], f"{where}: mn"),
        serial=text_or_none(doc["sn"], f"{where}: sn"),
        firmware=text_or_none(doc["fr"], f"{where}: fr"),
        capacity_bytes=get_int(doc, "tnvmcap", where) or None,
        unallocated_bytes=get_int(doc, "unvmcap", where),
        power_states_w=[_watts(p, f"{where}: psds[{i}]") for i, p in enumerate(psds)],
        raw=doc,
    )


FORMAT = Format(NAME, "SMART", read_nvme_id_ctrl, sniff)

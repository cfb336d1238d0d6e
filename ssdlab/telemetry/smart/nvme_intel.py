"""``nvme intel smart-log-add <dev> -j`` (Intel/Solidigm additional SMART log, CAh).

Layout (nvme-cli ``plugins/intel/intel-nvme.c``): ``{"Intel Smart log": "<dev>",
"Device stats": {"<item>": {"normalized": N, "raw": N}, ...}}``; ``wear_leveling`` has
``raw: {min, max, avg}``. Units: ``nand_bytes_written`` and ``host_bytes_written`` raw values
count 32 MiB (33554432-byte) units; erase counts are cycles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...formats import Format, Probe
from .._values import get_int, load_json_object, times
from ..record import MIB, SmartRecord

NAME = "nvme_intel_smart_log_add"
UNIT_BYTES = 32 * MIB


def sniff(probe: Probe) -> bool:
    doc = probe.json
    stats = doc.get("Device stats") if isinstance(doc, dict) else None
    return isinstance(stats, dict) and "nand_bytes_written" in stats


def _raw(stats: dict[str, Any], key: str, where: str) -> int | None:
    item = stats.get(key)
    if item is None:
        return None
    if not isinstance(item, dict):
        raise InputError(f"{where}: {key}: expected {{normalized, raw}}, found {item!r}")
    return get_int(item, "raw", f"{where}: {key}")


def read_nvme_intel_smart_log_add(path: str | Path) -> SmartRecord:
    """Read Intel/Solidigm ``smart-log-add`` JSON: NAND and host bytes written, erase count."""
    doc = load_json_object(path, "nvme intel smart-log-add JSON", ("Device stats",))
    return parse_nvme_intel_smart_log_add(doc, str(path))


def parse_nvme_intel_smart_log_add(doc: dict[str, Any], where: str) -> SmartRecord:
    """The record of a parsed ``smart-log-add`` document holding ``Device stats``."""
    stats = doc["Device stats"]
    if not isinstance(stats, dict) or "nand_bytes_written" not in stats:
        raise InputError(f"{where}: not nvme intel smart-log-add JSON: no 'nand_bytes_written'")
    nand, host = _raw(stats, "nand_bytes_written", where), _raw(stats, "host_bytes_written", where)
    wear = stats.get("wear_leveling")
    wear_raw = wear.get("raw") if isinstance(wear, dict) else None
    return SmartRecord(
        source=NAME,
        path=where,
        nand_bytes_written=times(nand, UNIT_BYTES),
        host_bytes_written=times(host, UNIT_BYTES),
        average_erase_count=get_int(wear_raw, "avg", f"{where}: wear_leveling.raw")
        if isinstance(wear_raw, dict)
        else None,
        raw=doc,
    )


FORMAT = Format(NAME, "SMART", read_nvme_intel_smart_log_add, sniff)

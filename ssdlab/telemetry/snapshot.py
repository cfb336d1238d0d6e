"""Snapshots of a drive's SMART data, lifetime write amplification and before/after deltas.

A snapshot is one capture file or a directory of files captured together (``nvme id-ctrl``,
``smart-log``, ``ocp smart-add-log``, ...), merged into one :class:`SmartRecord`. When several
files give a field, the first of these sources wins: ``nvme_id_ctrl``, ``nvme_smart_log``,
``nvme_ocp_smart_add_log``, ``nvme_intel_smart_log_add``, ``smartctl``, then user-registered
formats; ties go to the file whose name sorts first. So identity comes from id-ctrl, host
counters from smart-log, NAND bytes from OCP before Intel's 32 MiB-granular counter.
``origin`` records the winning file per field, ``conflicts`` the differing losers.

Write amplification (WAF) = NAND bytes written / host bytes written (or NAND pages / host
pages on drives that count pages). Counters are coarse (NVMe data units are 512000 bytes,
Intel's 32 MiB), so a delta WAF needs enough writes between the snapshots to be meaningful.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from .record import COUNTERS, SmartRecord
from .smart import SMART_FORMATS, nvme_id_ctrl, nvme_intel, nvme_ocp, nvme_smart_log, smartctl

SOURCE_PRECEDENCE = (
    nvme_id_ctrl.NAME,
    nvme_smart_log.NAME,
    nvme_ocp.NAME,
    nvme_intel.NAME,
    smartctl.NAME,
)
_MERGED = tuple(
    name
    for name in SmartRecord.model_fields
    if name not in {"source", "path", "raw", "origin", "conflicts"}
)


def _rank(source: str) -> int:
    return (
        SOURCE_PRECEDENCE.index(source) if source in SOURCE_PRECEDENCE else len(SOURCE_PRECEDENCE)
    )


def _is_set(value: Any) -> bool:
    return value is not None and value != []


def merge_records(records: dict[str, SmartRecord], path: str) -> SmartRecord:
    """Merge records keyed by file name into one (see the module docstring for who wins)."""
    ordered = sorted(records.items(), key=lambda item: (_rank(item[1].source), item[0]))
    fields: dict[str, Any] = {}
    origin: dict[str, str] = {}
    conflicts: dict[str, dict[str, Any]] = {}
    for name in _MERGED:
        given = [(file, getattr(rec, name)) for file, rec in ordered if _is_set(getattr(rec, name))]
        if not given:
            continue
        (winner, value), others = given[0], given[1:]
        fields[name], origin[name] = value, winner
        differing = {file: v for file, v in others if v != value}
        if differing:
            conflicts[name] = {winner: value, **differing}
    return SmartRecord(
        source="snapshot",
        path=path,
        raw={file: {"source": rec.source, "raw": rec.raw} for file, rec in ordered},
        origin=origin,
        conflicts=conflicts,
        **fields,
    )


def read_snapshot(path: str | Path) -> SmartRecord:
    """One SMART capture file, or every file of a directory merged into one record.

    In a directory every regular file not starting with ``.`` must be a recognised SMART
    capture: an unrecognised one raises :class:`InputError` naming it.
    """
    path = Path(path)
    if not path.is_dir():
        return SMART_FORMATS.read(path)
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(f"{path}: no SMART capture files in directory")
    return merge_records({p.name: SMART_FORMATS.read(p) for p in files}, str(path))


def _ratio(nand: int | None, host: int | None) -> float | None:
    return nand / host if nand is not None and host else None


class SmartDelta(BaseModel):
    """Counter changes between two snapshots of one drive (bytes, pages, hours, counts).

    A field is None when either snapshot lacks it.
    """

    model_config = ConfigDict(extra="forbid")

    host_bytes_written: int | None = None
    host_bytes_read: int | None = None
    nand_bytes_written: int | None = None
    nand_pages_written: int | None = None
    host_pages_written: int | None = None
    power_on_hours: int | None = None
    media_errors: int | None = None
    unsafe_shutdowns: int | None = None
    percent_used: int | None = None
    waf: float | None = None


def waf(record: SmartRecord | SmartDelta) -> float | None:
    """NAND / host bytes written (else NAND / host pages); None when not both known or host is 0.

    For a record this is the lifetime WAF; for a :class:`SmartDelta` the WAF between snapshots.
    """
    by_bytes = _ratio(record.nand_bytes_written, record.host_bytes_written)
    return (
        by_bytes
        if by_bytes is not None
        else _ratio(record.nand_pages_written, record.host_pages_written)
    )


def smart_delta(before: SmartRecord, after: SmartRecord) -> SmartDelta:
    """``after - before`` for every counter both have, and the WAF of the writes in between.

    Raises :class:`InputError` when the serial numbers differ or a counter went down (the
    snapshots are swapped, or the drive was replaced or reset).
    """
    if before.serial and after.serial and before.serial != after.serial:
        raise InputError(
            f"{after.path}: serial {after.serial} is not the drive of {before.path} "
            f"(serial {before.serial})"
        )
    deltas: dict[str, int] = {}
    for name in (*COUNTERS, "percent_used"):
        old, new = getattr(before, name), getattr(after, name)
        if old is None or new is None:
            continue
        if new < old:
            raise InputError(
                f"{after.path}: {name} went down from {old} ({before.path}) to {new}: "
                "snapshots swapped, or the drive was reset or replaced"
            )
        deltas[name] = new - old
    delta = SmartDelta(**deltas)
    delta.waf = waf(delta)
    return delta

"""Endurance arithmetic: TBW and DWPD, implied P/E cycles, projected life, wear cross-checks.

Units: TB = 10^12 bytes; TBW = terabytes the host may write over the warranty; DWPD = drive
writes per day, full user capacity per day over the warranty; a year is 365 days. A drive
spec file (TOML or YAML) sits next to results, e.g.::

    model = "Example 3.84TB"
    capacity_tb = 3.84
    warranty_years = 5
    dwpd = 1                      # or rated_tbw = 7008
    over_provisioning_percent = 28  # or raw_capacity_tb = 4.9152
    pe_cycles = 3000              # optional: rated NAND program/erase cycles
    daily_write_tb = 2            # optional: host TB/day for projections (default: rated DWPD)
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..io.text import read_mapping
from .record import SmartRecord

TB = 10**12
DAYS_PER_YEAR = 365


def tbw_from_dwpd(dwpd: float, capacity_tb: float, warranty_years: float) -> float:
    """TBW (TB) = DWPD x capacity (TB) x 365 x warranty years."""
    return dwpd * capacity_tb * DAYS_PER_YEAR * warranty_years


def dwpd_from_tbw(tbw: float, capacity_tb: float, warranty_years: float) -> float:
    """DWPD = TBW (TB) / (capacity (TB) x 365 x warranty years)."""
    return tbw / (capacity_tb * DAYS_PER_YEAR * warranty_years)


def implied_pe_cycles(tbw: float, waf: float, raw_capacity_tb: float) -> float:
    """P/E cycles the rating implies: TBW (TB) x WAF / raw NAND capacity (TB)."""
    return tbw * waf / raw_capacity_tb


class DriveSpec(BaseModel):
    """A drive's endurance rating. Capacities in TB (10^12 bytes), TBW in TB, years; every
    number finite and positive (over-provisioning may be 0).

    Give ``rated_tbw`` or ``dwpd`` (both when the vendor states both), and optionally the raw
    NAND capacity as ``raw_capacity_tb`` or ``over_provisioning_percent`` (raw = capacity x
    (1 + OP/100)), the rated ``pe_cycles``, and ``daily_write_tb``, the host TB per day
    endurance is projected at (default: the rated DWPD x capacity).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model: str | None = None
    capacity_tb: float = Field(gt=0)
    warranty_years: float = Field(gt=0)
    rated_tbw: float | None = Field(None, gt=0)
    dwpd: float | None = Field(None, gt=0)
    raw_capacity_tb: float | None = Field(None, gt=0)
    over_provisioning_percent: float | None = Field(None, ge=0)
    pe_cycles: int | None = Field(None, gt=0)
    daily_write_tb: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> DriveSpec:
        if self.rated_tbw is None and self.dwpd is None:
            raise ValueError("give rated_tbw or dwpd")
        if self.raw_capacity_tb is not None and self.over_provisioning_percent is not None:
            raise ValueError("give raw_capacity_tb or over_provisioning_percent, not both")
        if self.raw_capacity_tb is not None and self.raw_capacity_tb < self.capacity_tb:
            raise ValueError("raw_capacity_tb is smaller than capacity_tb")
        return self

    @property
    def tbw(self) -> float:
        """Rated TBW (TB), from ``dwpd`` when not stated."""
        if self.rated_tbw is not None:
            return self.rated_tbw
        return tbw_from_dwpd(self.dwpd, self.capacity_tb, self.warranty_years)

    @property
    def drive_writes_per_day(self) -> float:
        """Rated DWPD, from ``rated_tbw`` when not stated."""
        if self.dwpd is not None:
            return self.dwpd
        return dwpd_from_tbw(self.rated_tbw, self.capacity_tb, self.warranty_years)

    @property
    def raw_tb(self) -> float | None:
        """Raw NAND capacity (TB), None when neither it nor the over-provisioning is given."""
        if self.raw_capacity_tb is not None:
            return self.raw_capacity_tb
        if self.over_provisioning_percent is not None:
            return self.capacity_tb * (1 + self.over_provisioning_percent / 100)
        return None

    @property
    def daily_tb(self) -> float:
        """Host TB per day for projections: ``daily_write_tb``, else rated DWPD x capacity."""
        if self.daily_write_tb is not None:
            return self.daily_write_tb
        return self.drive_writes_per_day * self.capacity_tb


def load_drive_spec(path: str | Path) -> DriveSpec:
    """Read a :class:`DriveSpec` from a ``.toml``, ``.yaml`` or ``.yml`` file; InputError
    naming the file when it is unreadable, not valid, or not a valid spec."""
    path = Path(path)
    data = read_mapping(path, "drive spec file")
    try:
        return DriveSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise InputError(f"{path}: invalid drive spec: {problems}") from None


def nand_budget_tb(spec: DriveSpec, rated_waf: float = 1.0) -> float:
    """NAND TB the drive may program over its life: ``pe_cycles`` x raw capacity when the spec
    has both, else rated TBW x ``rated_waf``, the WAF of the vendor's rating workload on this
    drive (1.0 when unknown, which is conservative: the rating then shrinks by the measured WAF).
    """
    raw = spec.raw_tb
    return spec.pe_cycles * raw if spec.pe_cycles and raw else spec.tbw * rated_waf


def implied_endurance_tb(spec: DriveSpec, waf: float, *, rated_waf: float = 1.0) -> float:
    """Host TB the drive takes at a measured ``waf`` before its NAND budget is spent."""
    if waf <= 0:
        raise ValueError("waf must be positive")
    return nand_budget_tb(spec, rated_waf) / waf


def projected_life_years(
    spec: DriveSpec,
    waf: float,
    host_tb_per_day: float,
    *,
    rated_waf: float = 1.0,
    percent_used: float | None = None,
) -> float:
    """Years until rated endurance at ``host_tb_per_day`` (TB/day) and a measured ``waf``.

    The NAND write budget is :func:`nand_budget_tb`. With ``percent_used`` (NVMe Percentage
    Used), the years left from that point on.
    """
    if waf <= 0 or host_tb_per_day <= 0:
        raise ValueError("waf and host_tb_per_day must be positive")
    years = implied_endurance_tb(spec, waf, rated_waf=rated_waf) / (host_tb_per_day * DAYS_PER_YEAR)
    if percent_used is not None:
        years *= max(0.0, 1 - percent_used / 100)
    return years


class WearCheck(BaseModel):
    """The drive's reported wear beside what its counters and rating imply (percent, cycles).

    ``tbw_percent_used`` = host bytes written / rated TBW; ``pe_cycles_used`` = the average
    erase count when reported, else NAND bytes written / raw capacity; ``pe_percent_used`` =
    that over the rated ``pe_cycles``.
    """

    reported_percent_used: int | None
    tbw_percent_used: float | None
    pe_cycles_used: float | None
    pe_percent_used: float | None


def wear_check(spec: DriveSpec, record: SmartRecord) -> WearCheck:
    """Cross-check a record's ``percent_used`` against its write counters and the rating."""
    host = record.host_bytes_written
    raw = spec.raw_tb
    if record.average_erase_count is not None:
        cycles: float | None = float(record.average_erase_count)
    elif record.nand_bytes_written is not None and raw:
        cycles = record.nand_bytes_written / (raw * TB)
    else:
        cycles = None
    return WearCheck(
        reported_percent_used=record.percent_used,
        tbw_percent_used=None if host is None else host / (spec.tbw * TB) * 100,
        pe_cycles_used=cycles,
        pe_percent_used=None
        if cycles is None or not spec.pe_cycles
        else cycles / spec.pe_cycles * 100,
    )

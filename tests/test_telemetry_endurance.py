"""Endurance arithmetic on hand-worked examples (TB = 10^12 bytes, 365-day years)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.errors import InputError
from ssdlab.telemetry import SmartRecord
from ssdlab.telemetry.endurance import (
    DriveSpec,
    dwpd_from_tbw,
    implied_endurance_tb,
    implied_pe_cycles,
    load_drive_spec,
    nand_budget_tb,
    projected_life_years,
    tbw_from_dwpd,
    wear_check,
)

SPECS = Path(__file__).parent / "fixtures" / "telemetry" / "endurance"


def test_dwpd_tbw_round_trip() -> None:
    # 1 DWPD x 3.84 TB x 365 days x 5 years = 7008 TB
    assert tbw_from_dwpd(1, 3.84, 5) == pytest.approx(7008)
    # 3 DWPD x 1.92 TB x 365 x 5 = 10512 TB
    assert tbw_from_dwpd(3, 1.92, 5) == pytest.approx(10512)
    # 7008 TB / (3.84 TB x 365 x 5) = 1
    assert dwpd_from_tbw(7008, 3.84, 5) == pytest.approx(1.0)
    # 600 TB / (1 TB x 365 x 5) = 0.3288 DWPD
    assert dwpd_from_tbw(600, 1.0, 5) == pytest.approx(600 / 1825)


def test_implied_pe_cycles() -> None:
    # 7300 TB x WAF 2 / 5 TB raw = 2920 cycles
    assert implied_pe_cycles(7300, 2.0, 5.0) == pytest.approx(2920)


def test_spec_from_toml_derives_tbw_and_raw_capacity() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.toml")
    assert spec.model == "Example 4TB"
    assert spec.tbw == pytest.approx(7300)  # 1 DWPD x 4 TB x 365 x 5
    assert spec.drive_writes_per_day == 1
    assert spec.raw_tb == pytest.approx(5.0)  # 4 TB x (1 + 25/100)


def test_spec_from_yaml_derives_dwpd() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.yaml")
    assert spec.tbw == 7300
    assert spec.drive_writes_per_day == pytest.approx(1.0)  # 7300 / (4 x 365 x 5)
    assert spec.raw_tb == 5.0


def test_projected_life_from_tbw_budget() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.yaml")  # no pe_cycles: budget = TBW x rated_waf
    # 2 TB/day host at WAF 2.5 = 5 TB/day NAND; 7300 TB / 5 TB/day = 1460 days = 4 years
    assert projected_life_years(spec, 2.5, 2.0) == pytest.approx(4.0)
    # if the rating's own workload ran at WAF 2.5 too, the rating holds: 7300 / 2 / 365 = 10 y
    assert projected_life_years(spec, 2.5, 2.0, rated_waf=2.5) == pytest.approx(10.0)
    # a quarter used already: 4 x 0.75 = 3 years left
    assert projected_life_years(spec, 2.5, 2.0, percent_used=25) == pytest.approx(3.0)
    assert projected_life_years(spec, 2.5, 2.0, percent_used=120) == 0.0


def test_projected_life_from_pe_cycles() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.toml")  # 3000 cycles x 5 TB raw = 15000 TB
    # 15000 TB / (2 TB/day x 2.5) = 3000 days = 3000 / 365 years
    assert projected_life_years(spec, 2.5, 2.0) == pytest.approx(3000 / 365)
    with pytest.raises(ValueError, match="positive"):
        projected_life_years(spec, 0, 2.0)


def test_implied_endurance_and_daily_writes() -> None:
    cycles = load_drive_spec(SPECS / "drive_spec.toml")  # 3000 cycles x 5 TB raw, 1 DWPD x 4 TB
    assert nand_budget_tb(cycles) == pytest.approx(15000)
    # at WAF 2.5 the 15000 TB of NAND take 6000 TB of host writes
    assert implied_endurance_tb(cycles, 2.5) == pytest.approx(6000)
    assert cycles.daily_tb == pytest.approx(4.0)  # rated DWPD x capacity
    rating = load_drive_spec(SPECS / "drive_spec.yaml")  # 7300 TBW, no cycles
    assert nand_budget_tb(rating) == 7300 and nand_budget_tb(rating, 2.0) == 14600
    assert implied_endurance_tb(rating, 2.0, rated_waf=2.0) == pytest.approx(7300)
    stated = DriveSpec(capacity_tb=4, warranty_years=5, dwpd=1, daily_write_tb=0.5)
    assert stated.daily_tb == 0.5
    with pytest.raises(ValueError, match="positive"):
        implied_endurance_tb(rating, 0)


def test_wear_check_against_percent_used() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.toml")  # 7300 TBW, 5 TB raw, 3000 cycles
    record = SmartRecord(
        source="x",
        percent_used=20,
        host_bytes_written=1460 * 10**12,
        nand_bytes_written=3650 * 10**12,
    )
    check = wear_check(spec, record)
    assert check.reported_percent_used == 20
    assert check.tbw_percent_used == pytest.approx(20.0)  # 1460 / 7300
    assert check.pe_cycles_used == pytest.approx(730)  # 3650 TB / 5 TB
    assert check.pe_percent_used == pytest.approx(730 / 3000 * 100)
    with_erases = record.model_copy(update={"average_erase_count": 600})
    assert wear_check(spec, with_erases).pe_percent_used == pytest.approx(20.0)  # 600 / 3000


def test_wear_check_without_counters_or_cycles() -> None:
    spec = load_drive_spec(SPECS / "drive_spec.yaml")
    check = wear_check(spec, SmartRecord(source="x", nand_bytes_written=10**12))
    assert check.tbw_percent_used is None
    assert check.pe_cycles_used == pytest.approx(0.2)  # 1 TB / 5 TB
    assert check.pe_percent_used is None  # no rated pe_cycles


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("drive_spec_bad.toml", r"invalid drive spec: .*dwdp: Extra inputs are not permitted"),
        ("drive_spec_broken.yaml", r"not valid YAML"),
        ("missing.toml", r"cannot read"),
    ],
)
def test_bad_spec_files(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_drive_spec(SPECS / name)


def test_spec_rules(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_text("capacity_tb = 4\nwarranty_years = 5\n")
    with pytest.raises(InputError, match="give rated_tbw or dwpd"):
        load_drive_spec(path)
    path.write_text("capacity_tb = 4\nwarranty_years = 5\ndwpd = 1\nraw_capacity_tb = 3\n")
    with pytest.raises(InputError, match="raw_capacity_tb is smaller"):
        load_drive_spec(path)
    path.write_text('capacity_tb = "4"\nwarranty_years = 5\ndwpd = 1\n')
    assert load_drive_spec(path).capacity_tb == 4.0
    txt = tmp_path / "spec.txt"
    txt.write_text("capacity_tb = 4")
    with pytest.raises(InputError, match=r"\.toml, \.yaml or \.yml"):
        load_drive_spec(txt)
    with pytest.raises(ValueError, match="not both"):
        DriveSpec(
            capacity_tb=4,
            warranty_years=5,
            dwpd=1,
            raw_capacity_tb=5,
            over_provisioning_percent=25,
        )

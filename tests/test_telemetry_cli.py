"""``ssdlab smart show`` on recorded nvme-cli and smartctl output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ssdlab_cli

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"
BEFORE = FIXTURES / "snapshot" / "before"
AFTER = FIXTURES / "snapshot" / "after"
CANONICAL = {
    "source", "path", "model", "serial", "firmware", "capacity_bytes", "unallocated_bytes",
    "host_bytes_written", "host_bytes_read", "nand_bytes_written", "nand_pages_written",
    "host_pages_written", "percent_used", "average_erase_count", "temperature_c",
    "power_on_hours", "media_errors", "unsafe_shutdowns", "critical_warning", "power_states_w",
    "available_spare", "captured_s", "host", "namespace",
}  # fmt: skip


def rows(table: str) -> dict[str, list[str]]:
    """A rich table's body rows: first cell -> the other cells."""
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines()]
    return {row[0]: row[1:] for row in cells if row}


def test_one_snapshot_directory_as_json_has_canonical_fields_and_lifetime_waf() -> None:
    proc = ssdlab_cli("smart", "show", BEFORE, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == CANONICAL | {"waf"}
    assert doc["source"] == "snapshot" and doc["serial"] == "S64HNE0R123456"
    # 1,000,000 data units x 512,000 B host; OCP physical media units written 1.024 TB
    assert (doc["host_bytes_written"], doc["nand_bytes_written"]) == (512 * 10**9, 1024 * 10**9)
    assert doc["waf"] == 2.0


def test_one_file_as_a_table_shows_what_it_has() -> None:
    proc = ssdlab_cli("smart", "show", FIXTURES / "smart" / "smartctl_sata_intel_dc.json")
    assert proc.returncode == 0, proc.stderr
    shown = rows(proc.stdout)
    assert shown["model"] == ["INTEL SSDSC2KB038T8"]
    # Host_Writes_32MiB 40000 and NAND_Writes_32MiB 50000: WAF 1.25
    assert shown["host_bytes_written"] == ["1,342,177,280,000 (1.34 TB)"]
    assert shown["waf"] == ["1.25"] and shown["percent_used"] == ["2 %"]
    assert "unallocated_bytes" not in shown  # fields the format lacks are left out


def test_one_file_without_nand_counter_has_no_waf() -> None:
    proc = ssdlab_cli("smart", "show", AFTER / "smart-log.json", "-f", "json")
    doc = json.loads(proc.stdout)
    assert doc["source"] == "nvme_smart_log" and doc["host_bytes_written"] == 614_400_000_000
    assert doc["nand_bytes_written"] is None and doc["waf"] is None


def test_two_snapshots_show_deltas_and_the_waf_between_them() -> None:
    doc = json.loads(ssdlab_cli("smart", "show", BEFORE, AFTER, "-f", "json").stdout)
    assert set(doc) == {"before", "after", "delta"}
    assert doc["before"]["waf"] == 2.0 and doc["after"]["waf"] == pytest.approx(1331.2 / 614.4)
    # 102.4 GB host and 307.2 GB NAND written between the snapshots
    assert doc["delta"]["host_bytes_written"] == 102_400_000_000
    assert doc["delta"]["nand_bytes_written"] == 307_200_000_000
    assert doc["delta"]["waf"] == pytest.approx(3.0)
    assert doc["delta"]["power_on_hours"] == 2
    table = ssdlab_cli("smart", "show", BEFORE, AFTER).stdout
    shown = rows(table)
    assert shown["waf"] == ["2", "2.167", "3"]
    assert shown["nand_bytes_written"][2] == "307,200,000,000 (307.20 GB)"
    assert shown["serial"] == ["S64HNE0R123456", "S64HNE0R123456", "–"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([AFTER, BEFORE], "host_bytes_written went down"),
        ([BEFORE, FIXTURES / "smart" / "smartctl_sata_micron.json"], "is not the drive of"),
        ([FIXTURES / "smart" / "truncated.json"], "truncated.json: truncated or malformed JSON"),
        ([FIXTURES / "smart" / "wrong.json"], "wrong.json: not a recognised SMART file"),
        ([FIXTURES / "smart" / "missing.json"], "missing.json: no such file"),
    ],
)
def test_bad_snapshots_are_one_line_errors(args: list[Path], message: str) -> None:
    proc = ssdlab_cli("smart", "show", *args)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr

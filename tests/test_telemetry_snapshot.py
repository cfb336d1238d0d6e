"""Snapshots merged from several captures, lifetime WAF and before/after deltas."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ssdlab.errors import InputError
from ssdlab.telemetry import SmartRecord, read_smart, read_snapshot, smart_delta, waf

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"
BEFORE = FIXTURES / "snapshot" / "before"
AFTER = FIXTURES / "snapshot" / "after"


def test_directory_merges_identity_counters_and_nand_bytes() -> None:
    snap = read_snapshot(BEFORE)
    assert snap.source == "snapshot"
    assert (snap.model, snap.serial, snap.capacity_bytes) == (
        "SAMSUNG MZQL23T8HCLS-00A07",
        "S64HNE0R123456",
        3_840_755_982_336,
    )
    assert snap.host_bytes_written == 1_000_000 * 512_000 == 512_000_000_000
    assert snap.nand_bytes_written == 1_024_000_000_000
    assert snap.power_states_w == pytest.approx([25.0, 12.0, 0.05])
    assert snap.origin["model"] == "id-ctrl.json"
    assert snap.origin["host_bytes_written"] == "smart-log.json"
    assert snap.origin["nand_bytes_written"] == "ocp-smart-add-log.json"
    assert set(snap.raw) == {
        "id-ctrl.json",
        "ocp-smart-add-log.json",
        "smart-log.json",
        "smartctl.json",
    }
    # lifetime WAF = 1,024,000,000,000 / 512,000,000,000
    assert waf(snap) == pytest.approx(2.0)


def test_conflicts_are_recorded_and_smart_log_wins_over_smartctl() -> None:
    snap = read_snapshot(BEFORE)
    # smart-log says 309 K = 36 °C, smartctl 37 °C
    assert snap.temperature_c == 36.0
    assert snap.conflicts["temperature_c"] == {"smart-log.json": 36.0, "smartctl.json": 37.0}
    # fields where both agree are not conflicts
    assert "serial" not in snap.conflicts
    assert "percent_used" not in snap.conflicts


def test_smart_delta_and_waf_between_snapshots() -> None:
    delta = smart_delta(read_snapshot(BEFORE), read_snapshot(AFTER))
    # host: (1,200,000 - 1,000,000) data units x 512000 = 102,400,000,000 B
    assert delta.host_bytes_written == 102_400_000_000
    # NAND: 1,331,200,000,000 - 1,024,000,000,000 = 307,200,000,000 B
    assert delta.nand_bytes_written == 307_200_000_000
    # WAF of the test = 307.2 GB / 102.4 GB
    assert delta.waf == pytest.approx(3.0)
    assert waf(delta) == delta.waf
    assert delta.power_on_hours == 2
    assert delta.unsafe_shutdowns == 0
    # the lifetime WAF after is (1,331.2 / 614.4) GB, unlike the delta WAF
    assert waf(read_snapshot(AFTER)) == pytest.approx(1331.2 / 614.4)


def test_delta_waf_is_none_without_host_writes_or_nand_counter() -> None:
    same = read_snapshot(BEFORE)
    assert smart_delta(same, same).waf is None  # host delta 0
    smart_log = read_smart(BEFORE / "smart-log.json")
    later = smart_log.model_copy(update={"host_bytes_written": smart_log.host_bytes_written + 10})
    delta = smart_delta(smart_log, later)
    assert delta.host_bytes_written == 10
    assert delta.nand_bytes_written is None
    assert delta.waf is None


def test_delta_by_pages_for_micron() -> None:
    before = SmartRecord(source="x", nand_pages_written=1_250_000, host_pages_written=1_000_000)
    after = SmartRecord(source="x", nand_pages_written=1_550_000, host_pages_written=1_100_000)
    # (1,550,000 - 1,250,000) / (1,100,000 - 1,000,000) = 300,000 / 100,000
    assert smart_delta(before, after).waf == pytest.approx(3.0)


def test_delta_refuses_swapped_snapshots_and_other_drives() -> None:
    before, after = read_snapshot(BEFORE), read_snapshot(AFTER)
    with pytest.raises(InputError, match=r"host_bytes_written went down"):
        smart_delta(after, before)
    other = read_smart(FIXTURES / "smart" / "smartctl_sata_micron.json")
    with pytest.raises(InputError, match=r"serial 2117E59AAAAA is not the drive"):
        smart_delta(before, other)


def test_single_file_snapshot_is_that_files_record() -> None:
    snap = read_snapshot(BEFORE / "ocp-smart-add-log.json")
    assert snap.source == "nvme_ocp_smart_add_log"
    assert snap.nand_bytes_written == 1_024_000_000_000


def test_directory_with_an_unrecognised_file_names_it(tmp_path: Path) -> None:
    shutil.copytree(BEFORE, tmp_path / "snap")
    (tmp_path / "snap" / "notes.txt").write_text("drive in slot 3\n")
    with pytest.raises(InputError, match=r"notes.txt: not a recognised SMART file"):
        read_snapshot(tmp_path / "snap")
    (tmp_path / "snap" / "notes.txt").rename(tmp_path / "snap" / ".notes.txt")
    assert read_snapshot(tmp_path / "snap").serial == "S64HNE0R123456"


def test_empty_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no SMART capture files"):
        read_snapshot(tmp_path)


def test_ocp_wins_nand_bytes_over_intel(tmp_path: Path) -> None:
    snap_dir = tmp_path / "snap"
    snap_dir.mkdir()
    # "a-" sorts the Intel file first: precedence, not file order, must pick OCP
    shutil.copy(FIXTURES / "smart" / "nvme_intel_smart_log_add.json", snap_dir / "a-intel.json")
    shutil.copy(FIXTURES / "smart" / "nvme_ocp_v1.json", snap_dir / "b-ocp.json")
    snap = read_snapshot(snap_dir)
    assert snap.nand_bytes_written == 1_024_000_000_000
    assert snap.origin["nand_bytes_written"] == "b-ocp.json"
    assert snap.conflicts["nand_bytes_written"]["a-intel.json"] == 3_355_443_200_000

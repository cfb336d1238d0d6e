"""smartctl captures recognised by their fields, not by smartctl's header: a SCSI drive's
capture as monitoring tools store it (no ``smartctl``/``json_format_version``) is read, and
JSON that merely shares a key or two with smartctl's is not taken for one (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT, ssdlab_cli

from ssdlab.errors import InputError
from ssdlab.telemetry.smart import detect_smart, read_smart

FIXTURES = ROOT / "tests" / "fixtures"
#: smartctl 7.3 ``-j -a`` of a SAS SSD, and a capture holding only the fields a monitoring
#: tool kept (model_name, serial_number, user_capacity, power_on_time, temperature)
SCSI = FIXTURES / "bounded24" / "smartctl_scsi_ssd.json"
MONITOR = FIXTURES / "bounded24" / "smartctl_scsi_monitor.json"
HEADER = ("smartctl", "json_format_version")


def headerless(tmp_path: Path, source: Path = SCSI, name: str = "capture.json") -> Path:
    """``source`` with smartctl's header keys removed, as ``tmp_path/name``."""
    doc = {k: v for k, v in json.loads(source.read_text()).items() if k not in HEADER}
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_a_scsi_capture_with_its_header_is_read() -> None:
    record = read_smart(SCSI)
    assert (record.source, record.model, record.serial) == (
        "smartctl",
        "SEAGATE XS3840SE70084",
        "HLJ0A1B20000C123ABCD",
    )
    assert record.capacity_bytes == 3840755982336
    assert (record.temperature_c, record.power_on_hours, record.percent_used) == (33, 21840, 4)
    assert record.captured_s == 1700003600
    assert record.host_bytes_written is None  # gigabytes_processed is rounded: not read


@pytest.mark.parametrize("source", [SCSI, MONITOR, FIXTURES / "telemetry/smart/smartctl_nvme.json"])
def test_a_capture_without_its_header_is_recognised_by_its_fields(
    tmp_path: Path, source: Path
) -> None:
    path = headerless(tmp_path, source)
    assert detect_smart(path) == "smartctl"
    assert read_smart(path).model_dump(exclude={"path", "raw"}) == read_smart(source).model_dump(
        exclude={"path", "raw"}
    )


def test_the_monitoring_tools_capture_gives_its_fields() -> None:
    record = read_smart(MONITOR)
    assert (record.model, record.serial) == ("SEAGATE ST4000NM0043", "Z1Z5Q8RK0000K6XY12AB")
    assert (record.capacity_bytes, record.power_on_hours, record.temperature_c) == (
        4000787030016,
        43549,
        34,
    )


@pytest.mark.parametrize(
    "doc",
    [
        {"model_name": "X", "serial_number": "Y"},  # identity alone
        {"model_name": "X", "temperature": {"current": 30}, "power_on_time": {"hours": 1}},
        {"serial_number": "Y", "user_capacity": {"bytes": 1}, "temperature": {"current": 30}},
        {"model_name": "X", "serial_number": "Y", "temperature": {"current": 30}},  # one field
        {"model_name": "X", "serial_number": "Y", "temperature": 30, "power_on_time": 5},
        {"model_name": "", "serial_number": "Y", "ata_smart_attributes": {"table": []}},
        {"temperature": {"current": 30}, "power_on_time": {"hours": 1}},
        {"fio version": "fio-3.36", "jobs": [], "model_name": "X", "serial_number": "Y"},
    ],
)
def test_json_sharing_a_few_keys_is_no_capture(tmp_path: Path, doc: dict) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="not a recognised SMART file"):
        detect_smart(path)
    with pytest.raises(InputError, match=r"other.json: not smartctl JSON|other.json: .*without"):
        read_smart(path, "smartctl")


def test_a_fio_result_is_no_capture() -> None:
    with pytest.raises(InputError, match="not a recognised SMART file"):
        detect_smart(FIXTURES / "fio" / "fio-2.2.10.json")


def test_smart_import_and_show_take_a_headerless_capture(tmp_path: Path) -> None:
    captures = tmp_path / "captures"
    captures.mkdir()
    headerless(captures, SCSI, "sdc.json")
    (captures / "monitor.json").write_text(MONITOR.read_text())
    proc = ssdlab_cli("smart", "import", captures, "--out", tmp_path / "out")
    assert proc.returncode == 0 and "skipped 0 files" in proc.stderr, proc.stderr
    frame = pl.read_parquet(tmp_path / "out" / "frames" / "smart_history.parquet")
    assert sorted(frame["serial"]) == ["HLJ0A1B20000C123ABCD", "Z1Z5Q8RK0000K6XY12AB"]
    shown = ssdlab_cli("smart", "show", captures / "sdc.json", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    assert "XS3840SE70084" in shown.stdout


def test_fio_import_says_a_headerless_capture_is_a_smart_capture(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    headerless(tree, SCSI, "sdc.json")
    proc = ssdlab_cli("import", tree, "--out", tmp_path / "out")
    assert "Traceback" not in proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "sdc.json" in line]
    assert "SMART capture (smartctl)" in line and "ssdlab smart import" in line

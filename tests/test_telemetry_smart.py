"""SMART readers on hand-written captures of every documented variant, and the registry."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ssdlab.errors import InputError
from ssdlab.telemetry import SMART_FORMATS, SmartRecord, detect_smart, read_smart, waf
from ssdlab.telemetry._values import as_int, get_int
from ssdlab.telemetry.smart import (
    read_nvme_id_ctrl,
    read_nvme_intel_smart_log_add,
    read_nvme_ocp_smart_add_log,
    read_nvme_smart_log,
    read_smartctl,
)

SMART = Path(__file__).parent / "fixtures" / "telemetry" / "smart"

# 136157684 data units x 512000 B = 69,712,734,208,000 B; 272315368 x 512000 = 139,425,468,416,000
SMART_LOG_VARIANTS = [
    "nvme_smart_log_1x_numbers.json",
    "nvme_smart_log_2.1_long_double.json",
    "nvme_smart_log_2.2_string.json",
    "nvme_smart_log_2.3_thousands.json",
    "nvme_smart_log_2.11_verbose.json",
]


@pytest.mark.parametrize("name", SMART_LOG_VARIANTS)
def test_smart_log_counters_read_alike_in_every_nvme_cli_spelling(name: str) -> None:
    record = read_nvme_smart_log(SMART / name)
    assert record.source == "nvme_smart_log"
    assert record.host_bytes_written == 69_712_734_208_000
    assert record.host_bytes_read == 139_425_468_416_000
    assert record.temperature_c == 36.0  # 309 K - 273
    assert record.percent_used == 3
    assert record.power_on_hours == 15023
    assert record.unsafe_shutdowns == 12
    assert record.media_errors == 0
    assert record.nand_bytes_written is None  # smart-log does not expose NAND writes
    assert waf(record) is None
    assert record.raw["num_err_log_entries"] in (41, "41", "41.000000")


def test_critical_warning_int_or_verbose_object() -> None:
    assert read_nvme_smart_log(SMART / "nvme_smart_log_1x_numbers.json").critical_warning == 0
    assert read_nvme_smart_log(SMART / "nvme_smart_log_2.11_verbose.json").critical_warning == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("136157684", 136157684),
        ("136157684.000000", 136157684),
        ("136,157,684", 136157684),
        ("136.157.684", 136157684),  # de_DE grouping
        ("136\u202f157\u202f684", 136157684),  # fr_FR narrow no-break space
        (" 12 ", 12),
        (340282366920938463463374607431768211455, 2**128 - 1),
        ("340282366920938463463374607431768211455.000000", 2**128 - 1),
        (7.0, 7),
    ],
)
def test_as_int_accepts_nvme_cli_number_spellings(text: object, expected: int) -> None:
    assert as_int(text, "x") == expected


@pytest.mark.parametrize("text", ["lots", "12,34", "1.5", "1,234.567", "", True, [1], None, 1.5])
def test_as_int_rejects_other_values_with_input_error(text: object) -> None:
    with pytest.raises(InputError, match="x: not an integer"):
        as_int(text, "x")


def test_get_int_prefers_smartctls_exact_string_twin() -> None:
    doc = {"v": 9007199254740992, "v_s": "9007199254740993", "w": 5}
    assert get_int(doc, "v", "f") == 9007199254740993
    assert get_int(doc, "w", "f") == 5
    assert get_int(doc, "missing", "f") is None


def test_ocp_v1_and_v2_keys_and_128_bit_counter() -> None:
    v1 = read_nvme_ocp_smart_add_log(SMART / "nvme_ocp_v1.json")
    assert v1.nand_bytes_written == 1_024_000_000_000
    v2 = read_nvme_ocp_smart_add_log(SMART / "nvme_ocp_v2.json")
    assert v2.nand_bytes_written == 2**64 + 5  # {"hi": 1, "lo": 5}
    assert v2.source == v1.source == "nvme_ocp_smart_add_log"


def test_id_ctrl_identity_and_power_states_in_watts() -> None:
    old = read_nvme_id_ctrl(SMART / "nvme_id_ctrl_1x_flags.json")
    assert (old.model, old.serial, old.firmware) == (
        "SAMSUNG MZQL23T8HCLS-00A07",
        "S64HNE0R123456",
        "GDC5602Q",
    )
    assert old.capacity_bytes == 3_840_755_982_336
    # 2500 x 0.01 W, 1200 x 0.01 W, and 500 x 0.0001 W (flags = 3: bit 0 set)
    assert old.power_states_w == pytest.approx([25.0, 12.0, 0.05])
    new = read_nvme_id_ctrl(SMART / "nvme_id_ctrl_2x_scale.json")
    assert new.power_states_w == pytest.approx([25.0, 8.0])  # 80000 x 0.0001 W
    assert new.capacity_bytes == 3_840_755_982_336  # tnvmcap printed as a string
    assert new.unallocated_bytes == 1_000_000_000


def test_intel_smart_log_add_counts_32_mib_units() -> None:
    record = read_nvme_intel_smart_log_add(SMART / "nvme_intel_smart_log_add.json")
    assert record.nand_bytes_written == 100_000 * 33_554_432 == 3_355_443_200_000
    assert record.host_bytes_written == 80_000 * 33_554_432 == 2_684_354_560_000
    assert record.average_erase_count == 31
    assert waf(record) == pytest.approx(1.25)  # 100000 / 80000


def test_smartctl_sata_micron_counts_pages() -> None:
    r = read_smartctl(SMART / "smartctl_sata_micron.json")
    assert r.host_bytes_written == 2_000_000_000 * 512 == 1_024_000_000_000  # 246
    assert r.nand_bytes_written is None
    assert (r.nand_pages_written, r.host_pages_written) == (1_250_000, 1_000_000)
    assert waf(r) == pytest.approx(1.25)  # (247 + 248) / 247 = (1e6 + 2.5e5) / 1e6
    assert r.percent_used == 4  # 100 - normalized 96 of Percent_Lifetime_Remain
    assert r.temperature_c == 35.0  # from raw.string "35 (Min/Max 0/45)", not raw.value
    assert (r.unsafe_shutdowns, r.media_errors, r.power_on_hours) == (77, 0, 12000)
    assert r.capacity_bytes == 1_000_204_886_016


def test_smartctl_sata_intel_dc() -> None:
    r = read_smartctl(SMART / "smartctl_sata_intel_dc.json")
    assert r.host_bytes_written == 40_000 * 33_554_432 == 1_342_177_280_000  # 241
    assert r.host_bytes_read == 60_000 * 33_554_432  # 242
    assert r.nand_bytes_written == 50_000 * 33_554_432 == 1_677_721_600_000  # 243
    assert waf(r) == pytest.approx(1.25)  # 243 / 241
    assert r.percent_used == 2  # 100 - Media_Wearout_Indicator 98
    assert r.temperature_c == 32.0  # Temperature_Internal
    assert (r.unsafe_shutdowns, r.media_errors) == (15, 2)


def test_smartctl_sata_intel_client_uses_1_gib_nand_units() -> None:
    r = read_smartctl(SMART / "smartctl_sata_intel_client.json")
    assert r.nand_bytes_written == 1000 * 2**30 == 1_073_741_824_000  # 249
    assert r.host_bytes_written == 30_000 * 2**25 == 1_006_632_960_000  # 241
    assert waf(r) == pytest.approx(32 / 30)  # 1000 GiB / (30000 x 32 MiB = 937.5 GiB)
    assert r.temperature_c == 33.0  # no temperature attribute: top-level temperature.current


def test_smartctl_sata_samsung() -> None:
    r = read_smartctl(SMART / "smartctl_sata_samsung.json")
    assert r.host_bytes_written == 10_000_000_000 * 512 == 5_120_000_000_000  # 241
    assert r.nand_bytes_written == 10_500_000_000 * 512 == 5_376_000_000_000  # 251
    assert waf(r) == pytest.approx(1.05)
    assert r.host_bytes_read == 20_000_000_000 * 512
    assert r.average_erase_count == 12  # 177 raw
    assert r.percent_used == 1  # 100 - 177 normalized 99
    assert (r.temperature_c, r.unsafe_shutdowns) == (36.0, 30)


def test_smartctl_nvme_celsius_data_units_and_exact_big_values() -> None:
    r = read_smartctl(SMART / "smartctl_nvme.json")
    assert r.temperature_c == 37.0  # smartctl already prints Celsius
    assert r.host_bytes_written == 136_157_684 * 512_000
    # data_units_read_s "9007199254740993" wins over the rounded number 2^53:
    # (2^53 + 1) x 512000 = (2^62 + 512) x 1000
    assert r.host_bytes_read == 4_611_686_018_427_388_416_000
    assert (r.model, r.serial, r.capacity_bytes) == (
        "SAMSUNG MZQL23T8HCLS-00A07",
        "S64HNE0R123456",
        3_840_755_982_336,
    )
    assert (r.percent_used, r.power_on_hours, r.unsafe_shutdowns) == (3, 15023, 12)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("nvme_smart_log_2.3_thousands.json", "nvme_smart_log"),
        ("nvme_ocp_v2.json", "nvme_ocp_smart_add_log"),
        ("nvme_id_ctrl_1x_flags.json", "nvme_id_ctrl"),
        ("nvme_intel_smart_log_add.json", "nvme_intel_smart_log_add"),
        ("smartctl_sata_micron.json", "smartctl"),
        ("smartctl_nvme.json", "smartctl"),
    ],
)
def test_detect_by_content_not_name(tmp_path: Path, name: str, fmt: str) -> None:
    renamed = tmp_path / "capture.txt"
    renamed.write_bytes((SMART / name).read_bytes())
    assert detect_smart(renamed) == fmt
    assert read_smart(renamed).source == fmt


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.json", r"truncated or malformed JSON at line 12"),
        ("empty.json", r"empty file"),
        ("wrong.json", r"not a recognised SMART file"),
        ("list.json", r"not a recognised SMART file"),
        ("nvme_smart_log_bad_number.json", r"data_units_written: not an integer: 'lots'"),
        ("smartctl_error.json", r"smartctl said: Smartctl open device: /dev/sdz failed"),
        ("does_not_exist.json", r"no such file"),
    ],
)
def test_bad_input_raises_input_error_naming_the_file(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_smart(SMART / name)
    assert str(SMART / name) in str(info.value)


def test_reader_given_the_wrong_format_says_what_is_missing() -> None:
    with pytest.raises(InputError, match=r"not nvme smart-log JSON: no 'critical_warning'"):
        read_nvme_smart_log(SMART / "nvme_ocp_v1.json")
    with pytest.raises(InputError, match=r"not nvme id-ctrl JSON: expected a JSON object"):
        read_nvme_id_ctrl(SMART / "list.json")
    with pytest.raises(InputError, match=r"truncated or malformed JSON"):
        read_smartctl(SMART / "truncated.json")


def test_malformed_fields_inside_valid_json(tmp_path: Path) -> None:
    bad_ocp = tmp_path / "ocp.json"
    bad_ocp.write_text('{"Physical media units written": 12}')
    with pytest.raises(InputError, match=r"expected an object with 'hi' and 'lo'"):
        read_smart(bad_ocp)
    bad_psd = tmp_path / "id.json"
    bad_psd.write_text('{"mn": "m", "sn": "s", "fr": "f", "psds": [{"flags": 0}]}')
    with pytest.raises(InputError, match=r"psds\[0\]: expected an object with 'max_power'"):
        read_smart(bad_psd)
    bad_table = tmp_path / "sat.json"
    bad_table.write_text('{"smartctl": {}, "ata_smart_attributes": {"table": [{"id": 9}]}}')
    with pytest.raises(InputError, match=r"table\[0\]: expected an object with 'name' and 'raw'"):
        read_smart(bad_table)


@pytest.fixture
def mytool_format():
    """A user format: ``MYTOOL nand=<bytes> host=<bytes>`` lines."""

    def sniff(probe) -> bool:
        return probe.head.startswith("MYTOOL ")

    def read(path) -> SmartRecord:
        fields = dict(part.split("=") for part in Path(path).read_text().split()[1:])
        return SmartRecord(
            source="mytool",
            nand_bytes_written=int(fields["nand"]),
            host_bytes_written=int(fields["host"]),
        )

    SMART_FORMATS.register("mytool", read, sniff)
    yield
    SMART_FORMATS.unregister("mytool")


@pytest.mark.usefixtures("mytool_format")
def test_user_registered_format_is_detected_and_read(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("MYTOOL nand=300 host=200\n")
    assert "mytool" in SMART_FORMATS
    assert detect_smart(path) == "mytool"
    assert waf(read_smart(path)) == pytest.approx(1.5)
    assert read_smart(SMART / "nvme_ocp_v1.json").source == "nvme_ocp_smart_add_log"
    with pytest.raises(ValueError, match="already registered"):
        SMART_FORMATS.register("mytool", read_smart)


def test_newest_registration_wins_detection() -> None:
    def sniff(probe) -> bool:
        return isinstance(probe.json, dict) and "data_units_written" in probe.json

    SMART_FORMATS.register("override", lambda path: SmartRecord(source="override"), sniff)
    try:
        assert detect_smart(SMART / "nvme_smart_log_1x_numbers.json") == "override"
    finally:
        SMART_FORMATS.unregister("override")
    assert detect_smart(SMART / "nvme_smart_log_1x_numbers.json") == "nvme_smart_log"


def test_directory_is_not_a_capture_file() -> None:
    with pytest.raises(InputError, match=r"smart: not a file"):
        read_smart(SMART)


def test_read_smart_by_explicit_format_name() -> None:
    assert read_smart(SMART / "smartctl_nvme.json", "smartctl").source == "smartctl"
    with pytest.raises(InputError, match=r"unknown SMART format 'nope'"):
        read_smart(SMART / "smartctl_nvme.json", "nope")


NVME_LOG = "nvme_smart_health_information_log"


def edited(tmp_path: Path, name: str, changes: dict, under: str | None = None) -> Path:
    """A copy of fixture ``name`` with ``changes`` applied (inside ``doc[under]`` if given)."""
    doc = json.loads((SMART / name).read_text())
    (doc[under] if under else doc).update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("name", "changes", "under", "message"),
    [
        ("nvme_smart_log_1x_numbers.json", {"temperature": -100}, None, r"temperature_c = -373 "),
        ("nvme_smart_log_1x_numbers.json", {"temperature": 0}, None, r"temperature_c = -273 "),
        ("nvme_smart_log_1x_numbers.json", {"temperature": 700}, None, r"temperature_c = 427 "),
        ("nvme_smart_log_1x_numbers.json", {"percent_used": -1}, None, r"percent_used = -1 "),
        ("nvme_smart_log_1x_numbers.json", {"percent_used": 256}, None, r"percent_used = 256 "),
        ("nvme_smart_log_1x_numbers.json", {"data_units_written": -5}, None, r"host_bytes_writ"),
        ("nvme_smart_log_1x_numbers.json", {"media_errors": -1}, None, r"media_errors = -1 "),
        ("nvme_smart_log_1x_numbers.json", {"critical_warning": 300}, None, r"critical_warning"),
        ("nvme_smart_log_1x_numbers.json", {"power_on_hours": "9" * 5000}, None, "not an integ"),
        ("nvme_smart_log_1x_numbers.json", {"media_errors": 2**200}, None, "not an integer"),
        ("nvme_smart_log_1x_numbers.json", {"media_errors": math.inf}, None, "not an integer"),
        ("nvme_smart_log_1x_numbers.json", {"media_errors_s": []}, None, "media_errors: not an"),
        ("smartctl_nvme.json", {"temperature": -373}, NVME_LOG, r"temperature_c = -373 "),
        ("smartctl_nvme.json", {"temperature": 201}, NVME_LOG, r"temperature_c = 201 "),
        ("smartctl_nvme.json", {"percentage_used": -2}, NVME_LOG, r"percent_used = -2 "),
        ("smartctl_nvme.json", {"model_name": {"a": 1}}, None, r"model_name: expected a str"),
        ("smartctl_error.json", {"messages": 5}, "smartctl", r"smartctl said|without ata_"),
        ("nvme_ocp_v1.json", {"Physical media units written": {"hi": "x", "lo": 0}}, None, "hi"),
        (
            "nvme_ocp_v2.json",
            {"physical_media_units_written": {"hi": 2**64, "lo": 0}},
            None,
            "nand_b",
        ),
        (
            "nvme_id_ctrl_1x_flags.json",
            {"psds": [{"max_power": -100, "flags": 0}]},
            None,
            "-1.0 W is",
        ),
        ("nvme_id_ctrl_1x_flags.json", {"sn": ["S1"]}, None, r"sn: expected a string"),
    ],
)
def test_impossible_values_and_wrong_types_reject_the_file(
    tmp_path: Path, name: str, changes: dict, under: str | None, message: str
) -> None:
    """Values no drive reports (below absolute zero, negative counters, a percentage used
    below 0) and wrong types: one InputError line naming the file and the field."""
    path = edited(tmp_path, name, changes, under)
    with pytest.raises(InputError, match=message) as info:
        read_smart(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_smartctl_reads_a_cold_drive(tmp_path: Path) -> None:
    """-5 °C is cold but real: inside the -60 .. 200 °C window."""
    path = edited(tmp_path, "smartctl_nvme.json", {"temperature": -5}, NVME_LOG)
    assert read_smart(path).temperature_c == -5.0


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_is_a_clear_error(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"critical_warning": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(InputError, match="nested too deeply") as info:
        read_nvme_smart_log(path)
    assert str(path) in str(info.value)


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    path = edited(tmp_path, "smartctl_nvme.json", {"model_name": "MODEL"})
    path.write_bytes(path.read_bytes().replace(b"MODEL", b"Drive \xff"))
    assert read_smart(path).model == "Drive \ufffd"


def test_smart_log_mock_spelling_critical_warrning_with_float_counters(tmp_path: Path) -> None:
    """An OCP test suite's smart-log mock spells ``critical_warrning``; some tools print the
    counters as floats: recognised by the log's keys as a whole, read alike."""
    doc = json.loads((SMART / "nvme_smart_log_1x_numbers.json").read_text())
    doc["critical_warrning"] = doc.pop("critical_warning")
    doc = {k: float(v) if isinstance(v, int) else v for k, v in doc.items()}
    path = tmp_path / "mock.json"
    path.write_text(json.dumps(doc))
    assert detect_smart(path) == "nvme_smart_log"
    record = read_smart(path)
    assert record.host_bytes_written == doc["data_units_written"] * 512_000
    assert record.critical_warning == doc["critical_warrning"]
    assert record.available_spare == doc["avail_spare"]


def test_a_few_smart_log_keys_are_not_a_smart_log(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"temperature": 300, "data_units_written": 5, "name": "x"}))
    with pytest.raises(InputError, match="not a recognised SMART file"):
        detect_smart(path)


def test_smartctl_capture_time_spare_and_namespace(tmp_path: Path) -> None:
    doc = json.loads((SMART / "smartctl_nvme.json").read_text())
    record = read_smart(SMART / "smartctl_nvme.json")
    assert record.captured_s == doc["local_time"]["time_t"]
    assert record.available_spare == doc[NVME_LOG]["available_spare"]
    assert record.namespace is None  # /dev/nvme0: the controller
    doc["device"]["name"] = "/dev/nvme0n2"
    path = tmp_path / "ns.json"
    path.write_text(json.dumps(doc))
    assert read_smart(path).namespace == 2


DUMP = """# HELP smartctl_device Device info
smartctl_device{device="nvme0",model_name="M1",serial_number="S1",firmware_version="F"} 1
smartctl_device_bytes_written{device="nvme0"} 6.9712734208e+13
smartctl_device_percentage_used{device="nvme0"} 3
smartctl_device_power_on_seconds{device="nvme0"} 5.4083e+07
smartctl_device_temperature{device="nvme0",temperature_type="current"} 37
smartctl_device_temperature{device="nvme0",temperature_type="drive_trip"} 85
"""


def test_smartctl_exporter_dump_of_one_device(tmp_path: Path) -> None:
    path = tmp_path / "metrics.txt"
    path.write_text(DUMP)
    assert detect_smart(path) == "smartctl_exporter"
    record = read_smart(path)
    assert (record.model, record.serial, record.firmware) == ("M1", "S1", "F")
    assert record.host_bytes_written == 69_712_734_208_000
    assert record.percent_used == 3 and record.temperature_c == 37.0
    assert record.power_on_hours == 54_083_000 // 3600
    path.write_text(DUMP + 'smartctl_device{device="sda",serial_number="S2"} 1\n')
    with pytest.raises(InputError, match=r"several devices \(nvme0, sda\); name one"):
        read_smart(path)
    assert SMART_FORMATS["smartctl_exporter"](path, device="sda").serial == "S2"
    path.write_text(DUMP.replace("6.9712734208e+13", "1.5"))
    with pytest.raises(InputError, match=r"smartctl_device_bytes_written.*not an integer: 1.5"):
        read_smart(path)


def test_smartctl_sata_without_write_attributes_reads_device_statistics(tmp_path: Path) -> None:
    """``smartctl -x``: the ATA Device Statistics count sectors of ``logical_block_size``."""
    doc = json.loads((SMART / "smartctl_sata_samsung.json").read_text())
    table = doc["ata_smart_attributes"]["table"]
    doc["ata_smart_attributes"]["table"] = [
        a
        for a in table
        if a["name"] not in ("Total_LBAs_Written", "Total_LBAs_Read", "Wear_Leveling_Count")
    ]
    stats = [
        {"offset": 24, "name": "Logical Sectors Written", "size": 6, "value": 123_456_789},
        {"offset": 40, "name": "Logical Sectors Read", "size": 6, "value": 987_654},
    ]
    wear = [{"offset": 8, "name": "Percentage Used Endurance Indicator", "size": 1, "value": 7}]
    doc["logical_block_size"] = 4096
    doc["ata_device_statistics"] = {
        "pages": [{"number": 1, "table": stats}, {"number": 7, "table": wear}]
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    record = read_smart(path)
    assert record.host_bytes_written == stats[0]["value"] * doc["logical_block_size"]
    assert record.host_bytes_read == stats[1]["value"] * doc["logical_block_size"]
    assert record.percent_used == wear[0]["value"]
    assert read_smart(SMART / "smartctl_sata_samsung.json").host_bytes_written != (
        record.host_bytes_written
    )  # the attribute, when there, is read first

"""Fleet SMART history: a tree of captures of several drives, written here from the documented
formats (smartctl 7.1 ATA and 7.4 NVMe JSON, nvme-cli smart-log with strings and with floats,
an OCP C0 log beside a smart-log mock spelling ``critical_warrning``, id-ctrl, smartctl_exporter
dumps), in shuffled order under random names; expected values come from the fixture values and
the documented units."""

from __future__ import annotations

import itertools
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

from ssdlab.errors import InputError
from ssdlab.formats import Probe
from ssdlab.layout import SMART_HISTORY
from ssdlab.telemetry import SmartRecord
from ssdlab.telemetry.history import (
    FRAME,
    SCHEMA,
    SNAPSHOT_SCHEMA,
    history_frame,
    import_smart_history,
)
from ssdlab.telemetry.smart import SMART_FORMATS, detect_smart, read_smart, smartctl_exporter

MIB = 2**20
DATA_UNIT = 512_000  # bytes per NVMe data unit
T0 = 1_700_000_000  # epoch seconds of the first capture
DAY = 86_400


@dataclass
class Drive:
    """What the fixtures of one drive say: its id and, per snapshot, time and byte counters."""

    model: str
    serial: str
    namespace: int | None = None
    times: list[float] = field(default_factory=list)
    host: list[int] = field(default_factory=list)  # bytes
    nand: list[int | None] = field(default_factory=list)  # bytes

    def key(self) -> tuple[str, str, int | None]:
        return self.model, self.serial, self.namespace


def counters(rng: random.Random, n: int) -> list[int]:
    """``n`` increasing counter values."""
    values, value = [], rng.randrange(10**4, 10**6)
    for _ in range(n):
        values.append(value)
        value += rng.randrange(10**3, 10**5)
    return values


def nand_of(rng: random.Random, host: list[int]) -> list[int]:
    """NAND counters that grow by 1.0 .. 3.0 times the host counters' growth."""
    nand = [host[0] * 3 // 2]
    for before, after in itertools.pairwise(host):
        nand.append(nand[-1] + (after - before) * rng.randrange(100, 300) // 100)
    return nand


def smartctl_doc(version: list[int], device: str, drive: Drive, time_t: int) -> dict:
    return {
        "json_format_version": [1, 0],
        "smartctl": {"version": version, "argv": ["smartctl", "-j", "-a", device]},
        "local_time": {"time_t": time_t, "asctime": "(not read)"},
        "device": {"name": device, "info_name": device, "type": "sat", "protocol": "ATA"},
        "model_name": drive.model,
        "serial_number": drive.serial,
        "firmware_version": "FW1",
    }


def ata_attr(id_: int, name: str, raw: int, value: int = 100) -> dict:
    return {"id": id_, "name": name, "value": value, "worst": value, "thresh": 0,
            "flags": {"value": 50}, "raw": {"value": raw, "string": str(raw)}}  # fmt: skip


@dataclass
class Tree:
    root: Path
    drives: dict[tuple, Drive]
    bad: dict[str, str]  # path -> what its reason must say
    files: list[tuple[Path, bytes, float | None]] = field(default_factory=list)

    def add(self, path: Path, content: str | bytes, mtime: float | None = None) -> None:
        data = content.encode() if isinstance(content, str) else content
        self.files.append((path, data, mtime))

    def write(self, rng: random.Random) -> None:
        rng.shuffle(self.files)  # written, and so dated on disk, in no particular order
        for path, data, mtime in self.files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if mtime is not None:
                os.utime(path, (mtime, mtime))


def name(rng: random.Random, suffix: str = ".json") -> str:
    return f"{rng.getrandbits(40):010x}{suffix}"


def build(root: Path, seed: int = 7, snapshots: int = 4) -> Tree:
    rng = random.Random(seed)
    tree = Tree(root, {}, {})
    days = list(range(snapshots))

    # smartctl 7.1 SATA Intel DC: 241 Host_Writes_32MiB, 243 NAND_Writes_32MiB (one folder)
    intel = Drive("INTEL SSDSC2KB038T8", "PHYF0001")
    raws = counters(rng, snapshots)
    for day, h, nand in zip(days, raws, nand_of(rng, raws), strict=True):
        doc = smartctl_doc([7, 1], "/dev/sda", intel, T0 + day * DAY)
        doc["ata_smart_attributes"] = {"revision": 1, "table": [
            ata_attr(241, "Host_Writes_32MiB", h), ata_attr(243, "NAND_Writes_32MiB", nand),
            ata_attr(194, "Temperature_Case", 30), ata_attr(190, "Temperature_Celsius", 31),
            ata_attr(233, "Media_Wearout_Indicator", 0, 97)]}  # fmt: skip
        doc["power_on_time"] = {"hours": 1000 + 24 * day}
        intel.times.append(T0 + day * DAY)
        intel.host.append(h * 32 * MIB)
        intel.nand.append(nand * 32 * MIB)
        tree.add(root / "lab1" / "sda" / name(rng), json.dumps(doc))

    # smartctl 7.4 NVMe (namespace device) + OCP C0 v2 in one folder per snapshot: merged
    nvme = Drive("SAMSUNG MZQL23T8HCLS", "S64H0002", namespace=1)
    units = counters(rng, snapshots)
    ocp = nand_of(rng, [u * DATA_UNIT for u in units])
    for day, u, nand in zip(days, units, ocp, strict=True):
        doc = smartctl_doc([7, 4], "/dev/nvme0n1", nvme, T0 + day * DAY + 60)
        doc["device"]["protocol"] = "NVMe"
        doc["nvme_namespaces"] = [{"id": 1}]
        doc["nvme_smart_health_information_log"] = {
            "critical_warning": 0, "temperature": 40, "available_spare": 100,
            "percentage_used": day, "data_units_written": u, "data_units_read": 2 * u,
            "power_on_hours": 500 + day, "media_errors": 0, "unsafe_shutdowns": 1}  # fmt: skip
        folder = root / "lab1" / "nvme" / name(rng, "")
        tree.add(folder / name(rng), json.dumps(doc, indent=1))
        c0 = {"physical_media_units_written": {"hi": 0, "lo": nand}}
        tree.add(folder / name(rng), json.dumps(c0), mtime=T0)
        nvme.times.append(T0 + day * DAY + 60)
        nvme.host.append(u * DATA_UNIT)
        nvme.nand.append(nand)

    # nvme-cli: id-ctrl once per drive; per snapshot a folder with a smart-log mock spelling
    # critical_warrning, counters as strings, and the OCP C0 v1 log: dated by mtime
    mock = Drive("MOCK OCP SSD", "OCP0003")
    drive_dir = root / "lab2" / name(rng, "")
    tree.add(drive_dir / name(rng), json.dumps({"mn": mock.model, "sn": mock.serial, "fr": "1"}))
    units = counters(rng, snapshots)
    ocp = nand_of(rng, [u * DATA_UNIT for u in units])
    for day, u, nand in zip(days, units, ocp, strict=True):
        when = T0 + day * DAY + 120
        log = {"critical_warrning": 0, "temperature": "310", "avail_spare": "100",
               "spare_thresh": "10", "percent_used": "1", "data_units_read": str(3 * u),
               "data_units_written": str(u), "host_read_commands": "10",
               "host_write_commands": "20", "power_on_hours": str(100 + day),
               "unsafe_shutdowns": "0", "media_errors": "0"}  # fmt: skip
        folder = drive_dir / name(rng, "")
        tree.add(folder / name(rng), json.dumps(log), mtime=when)
        c0 = {"Physical media units written": {"hi": 0, "lo": nand}, "Capacitor health": 100}
        tree.add(folder / name(rng), json.dumps(c0), mtime=when)
        mock.times.append(when)
        mock.host.append(u * DATA_UNIT)
        mock.nand.append(nand)

    # nvme-cli 1.x numbers as floats: id-ctrl and every smart-log in one folder, no NAND count
    floats = Drive("FLOAT SSD", "FLT0004")
    folder = root / "lab2" / name(rng, "")
    tree.add(folder / name(rng), json.dumps({"mn": floats.model, "sn": floats.serial, "fr": "2"}))
    for day, u in zip(days, counters(rng, snapshots), strict=True):
        when = T0 + day * DAY + 180
        log = {"critical_warning": 0.0, "temperature": 305.0, "avail_spare": 99.0,
               "percent_used": 2.0, "data_units_read": float(u), "data_units_written": float(u),
               "power_on_hours": float(200 + day), "media_errors": 1.0,
               "unsafe_shutdowns": 0.0, "num_err_log_entries": 0.0}  # fmt: skip
        tree.add(folder / name(rng), json.dumps(log), mtime=when)
        floats.times.append(when)
        floats.host.append(u * DATA_UNIT)
        floats.nand.append(None)

    # smartctl_exporter dumps of one host: an NVMe drive and a Samsung SATA drive (241
    # Total_LBAs_Written and 251 NAND_Writes, both 512-byte units), sample timestamps in ms
    exp_nvme = Drive("EXPORTER NVME", "EXP0005", namespace=1)
    exp_sata = Drive("SAMSUNG MZ7LH3T8", "EXP0006")
    written = counters(rng, snapshots)
    lbas = counters(rng, snapshots)
    nand_lbas = nand_of(rng, lbas)
    for day, w, lba, nlba in zip(days, written, lbas, nand_lbas, strict=True):
        ms = (T0 + day * DAY + 240) * 1000
        lines = [
            "# HELP smartctl_device Device info",
            "# TYPE smartctl_device gauge",
            f'smartctl_device{{device="nvme0n1",firmware_version="3",instance="node1:9633",'
            f'model_name="{exp_nvme.model}",serial_number="{exp_nvme.serial}"}} 1 {ms}',
            f'smartctl_device{{device="sda",firmware_version="4",instance="node1:9633",'
            f'model_name="{exp_sata.model}",serial_number="{exp_sata.serial}"}} 1 {ms}',
            f'smartctl_device_bytes_written{{device="nvme0n1",instance="node1:9633"}} '
            f"{w * DATA_UNIT:.15e} {ms}",
            f'smartctl_device_percentage_used{{device="nvme0n1",instance="node1:9633"}} 4 {ms}',
            f'smartctl_device_temperature{{device="nvme0n1",instance="node1:9633",'
            f'temperature_type="current"}} 41 {ms}',
            f'smartctl_device_power_on_seconds{{device="nvme0n1",instance="node1:9633"}} '
            f"{(300 + day) * 3600:.6e} {ms}",
        ]
        for id_, attr, raw in ((241, "Total_LBAs_Written", lba), (251, "NAND_Writes", nlba)):
            for kind, value in (("raw", raw), ("value", 99)):
                lines.append(
                    f'smartctl_device_attribute{{attribute_id="{id_}",attribute_name="{attr}",'
                    f'attribute_value_type="{kind}",device="sda",instance="node1:9633"}} '
                    f"{value:.15e} {ms}"
                )
        rng.shuffle(lines)
        tree.add(root / "lab3" / name(rng, ".prom"), "\n".join(lines) + "\n")
        for drive, host, nand in (
            (exp_nvme, w * DATA_UNIT, None),
            (exp_sata, lba * 512, nlba * 512),
        ):
            drive.times.append(T0 + day * DAY + 240)
            drive.host.append(host)
            drive.nand.append(nand)

    for drive in (intel, nvme, mock, floats, exp_nvme, exp_sata):
        tree.drives[drive.key()] = drive

    bad = root / "lab9"
    for label, content, reason in (
        ("empty", "", "empty file"),
        ("text", "hello, not SMART\n", "not a recognised SMART file"),
        ("truncated", '{"smartctl": {"version": [7, 3]', "truncated or malformed JSON"),
        ("other", '{"fio version": "fio-3.36"}', "not a recognised SMART file"),
        ("binary", b'{"smartctl": \x00}', "binary file"),
        (
            "bad_number",
            json.dumps(
                {
                    "critical_warning": 0,
                    "temperature": 300,
                    "data_units_written": "lots",
                    "data_units_read": 1,
                    "percent_used": 0,
                    "avail_spare": 100,
                }
            ),
            "data_units_written: not an integer",
        ),
    ):
        path = bad / f"{label}-{name(rng)}"
        tree.add(path, content)
        tree.bad[str(path)] = reason
    hot = smartctl_doc([7, 3], "/dev/nvme1", Drive("HOT", "HOT1"), T0)
    hot["nvme_smart_health_information_log"] = {"temperature": 500, "data_units_written": 1}
    path = bad / name(rng)
    tree.add(path, json.dumps(hot))
    tree.bad[str(path)] = "temperature_c = 500 is impossible"
    lonely = root / "lab9" / "lonely" / name(rng)  # a smart-log no capture names a drive for
    tree.add(lonely, json.dumps({"critical_warning": 0, "temperature": 300, "avail_spare": 1,
                                 "percent_used": 0, "data_units_written": 1,
                                 "data_units_read": 1}))  # fmt: skip
    tree.bad[str(lonely)] = "no model or serial"
    return tree


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tree, object, pl.DataFrame]:
    root = tmp_path_factory.mktemp("fleet")
    tree = build(root / "captures")
    tree.write(random.Random(3))
    fifo = root / "captures" / "lab9" / "pipe.json"
    os.mkfifo(fifo)
    tree.bad[str(fifo)] = "FIFO"
    zero = root / "captures" / "lab9" / "zero.json"
    zero.symlink_to("/dev/zero")
    tree.bad[str(zero)] = "character device"
    out = root / "out"
    progress: list[tuple[int, int]] = []
    report = import_smart_history([root / "captures"], out, on_file=lambda *a: progress.append(a))
    files = len(tree.files) + 2
    assert progress[-1] == (files, files) and report.files == files
    frame = pl.read_parquet(out / "frames" / f"{FRAME}.parquet")
    return tree, report, frame


def test_every_drive_is_found_once_with_its_snapshots_in_time_order(imported) -> None:
    tree, report, frame = imported
    assert dict(frame.schema) == SCHEMA
    found = {key: part for key, part in frame.group_by(["model", "serial", "namespace"])}
    assert set(found) == set(tree.drives)
    assert report.drives == len(tree.drives) and report.snapshots == frame.height
    for key, drive in tree.drives.items():
        rows = found[key]
        assert rows["time"].dt.epoch("s").to_list() == sorted(int(t) for t in drive.times)
        assert rows["host_written_bytes"].to_list() == drive.host
        assert rows["nand_written_bytes"].to_list() == drive.nand


def test_waf_between_snapshots_is_the_ratio_of_the_byte_deltas(imported) -> None:
    tree, _, frame = imported
    checked = 0
    for key, drive in tree.drives.items():
        rows = frame.filter((pl.col("model") == key[0]) & (pl.col("serial") == key[1])).sort("time")
        expected: list[float | None] = [None]
        for i in range(1, len(drive.host)):
            nand, before = drive.nand[i], drive.nand[i - 1]
            host = drive.host[i] - drive.host[i - 1]
            expected.append(None if nand is None or before is None else (nand - before) / host)
        assert rows["waf"].to_list() == pytest.approx(expected)
        lifetime = [
            None if n is None else n / h for n, h in zip(drive.nand, drive.host, strict=True)
        ]
        assert rows["lifetime_waf"].to_list() == pytest.approx(lifetime)
        checked += sum(w is not None for w in expected)
    assert checked >= 3 * 4  # four drives report NAND writes, each with 3 deltas


def test_identity_and_time_come_from_the_captures(imported) -> None:
    _, report, frame = imported
    by_serial = {row["serial"]: row for row in frame.iter_rows(named=True)}
    assert by_serial["OCP0003"]["time_source"] == "mtime"
    assert by_serial["OCP0003"]["source"] == "nvme_ocp_smart_add_log+nvme_smart_log"
    assert by_serial["FLT0004"]["firmware"] == "2" and by_serial["FLT0004"]["media_errors"] == 1
    assert by_serial["PHYF0001"]["time_source"] == "capture"
    assert by_serial["PHYF0001"]["percent_used"] == 100 - 97  # Media_Wearout_Indicator
    assert by_serial["EXP0005"]["host"] == "node1:9633"
    assert by_serial["EXP0005"]["temperature_c"] == 41.0
    assert by_serial["S64H0002"]["namespace"] == 1
    assert report.time_sources == {
        "capture": frame.filter(pl.col("time_source") == "capture").height,
        "mtime": frame.filter(pl.col("time_source") == "mtime").height,
    }


def test_bad_files_are_listed_one_line_each_and_the_fifo_is_skipped(imported) -> None:
    tree, report, _ = imported
    lines = {str(s.path): str(s) for s in report.skipped}
    assert set(lines) == set(tree.bad)
    for path, reason in tree.bad.items():
        assert reason in lines[path] and "\n" not in lines[path]
    record = json.loads((report.out / SMART_HISTORY).read_text())
    assert record["skipped"] == [str(s) for s in report.skipped]
    assert record["snapshots"] == report.snapshots


def test_the_variants_are_recognised_by_content(tmp_path: Path) -> None:
    tree = build(tmp_path, snapshots=1)
    tree.write(random.Random(1))
    kinds = {}
    for path, _, _ in tree.files:
        if str(path) not in tree.bad:
            kinds.setdefault(detect_smart(path), path)
    assert set(kinds) == {"smartctl", "nvme_ocp_smart_add_log", "nvme_smart_log", "nvme_id_ctrl",
                          "smartctl_exporter"}  # fmt: skip
    dump = kinds["smartctl_exporter"]
    with pytest.raises(InputError, match="several devices"):
        read_smart(dump)


def test_nothing_to_import_and_an_existing_history_are_errors(tmp_path: Path, imported) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no SMART capture found"):
        import_smart_history([tmp_path / "empty"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    _, report, _ = imported
    with pytest.raises(InputError, match="already holds a SMART history"):
        import_smart_history([tmp_path / "empty"], report.out)


def test_waf_is_null_across_a_counter_that_went_down() -> None:
    """A drive reset or replaced under the same name: no WAF from the step down."""
    counters = [(1, 100, 200), (2, 50, 300), (3, 150, 500)]  # time, host bytes, NAND bytes
    rows = [
        dict.fromkeys(SNAPSHOT_SCHEMA)
        | {"model": "M", "serial": "S", "time_s": t, "time_source": "mtime"}
        | {"host_written_bytes": host, "nand_written_bytes": nand}
        for t, host, nand in reversed(counters)
    ]
    frame = history_frame(pl.DataFrame(rows, schema=SNAPSHOT_SCHEMA))
    (_, h1, n1), (_, h2, n2) = counters[1:]
    assert frame["waf"].to_list() == [None, None, (n2 - n1) / (h2 - h1)]
    assert frame["lifetime_waf"].to_list() == [nand / host for _, host, nand in counters]


def test_worker_processes_find_what_one_process_finds(tmp_path: Path, imported) -> None:
    tree, report, frame = imported
    parallel = import_smart_history([tree.root], tmp_path / "out", workers=2)
    assert pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet").equals(frame)
    assert [str(s) for s in parallel.skipped] == [str(s) for s in report.skipped]
    assert (parallel.files, parallel.drives) == (report.files, report.drives)


def test_a_format_registered_at_run_time_is_read_even_when_workers_are_asked(
    tmp_path: Path,
) -> None:
    """A format registered in this process (a local function) cannot go to worker
    processes: the import then reads everything here."""

    def sniff(probe: Probe) -> bool:
        return probe.head.startswith("MYTOOL ")

    def read(path: Path) -> SmartRecord:
        written = int(Path(path).read_text().split()[1])
        return SmartRecord(source="mytool", model="M", serial="S9", host_bytes_written=written)

    written = [1000, 3000]
    for day, value in enumerate(written):
        path = tmp_path / "in" / f"{day}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"MYTOOL {value}\n")
        os.utime(path, (T0 + day * DAY, T0 + day * DAY))
    SMART_FORMATS.register("mytool", read, sniff)
    try:
        report = import_smart_history([tmp_path / "in"], tmp_path / "out", workers=2)
    finally:
        SMART_FORMATS.unregister("mytool")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    assert report.snapshots == 2 and frame["host_written_bytes"].to_list() == written
    assert frame["time"].dt.epoch("s").to_list() == [T0, T0 + DAY]


def test_the_command_line_imports_a_fleet_and_says_what_it_skipped(tmp_path: Path) -> None:
    tree = build(tmp_path / "captures", snapshots=2)
    tree.write(random.Random(5))
    proc = ssdlab_cli("smart", "import", tmp_path / "captures", "--out", tmp_path / "out")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "out")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    lines = proc.stderr.splitlines()
    assert sum(line.startswith("skipped ") for line in lines) == len(tree.bad)
    drives = frame.select("model", "serial", "namespace").n_unique()
    assert lines[-1].startswith(f"{drives} drives, {frame.height} snapshots from ")
    again = ssdlab_cli("smart", "import", tmp_path / "captures", "--out", tmp_path / "out")
    assert (
        again.returncode == 1 and again.stderr.startswith("error: ") and "already" in again.stderr
    )


def smart_log(units: int) -> dict:
    """An ``nvme smart-log -o json`` document with ``units`` data units written."""
    return {"critical_warning": 0, "temperature": 310, "avail_spare": 100, "percent_used": 1,
            "data_units_read": units, "data_units_written": units, "power_on_hours": 10,
            "media_errors": 0, "unsafe_shutdowns": 0}  # fmt: skip


def test_several_captures_of_each_format_in_one_folder_pair_up_by_time(tmp_path: Path) -> None:
    """id-ctrl, then smart-log and OCP logs of three days side by side (random names): the
    k-th of each format by time make the k-th snapshot, so every interval has a WAF."""
    rng = random.Random(11)
    folder = tmp_path / "in" / "drive"
    folder.mkdir(parents=True)
    (folder / name(rng)).write_text(json.dumps({"mn": "PAIR SSD", "sn": "PAIR1", "fr": "1"}))
    units, nand = [1000, 3000, 7000], [900_000_000, 2_000_000_000, 6_500_000_000]
    for day, (u, n) in enumerate(zip(units, nand, strict=True)):
        for doc, offset in (
            (smart_log(u), 0),
            ({"physical_media_units_written": {"hi": 0, "lo": n}}, 5),
        ):
            path = folder / name(rng)
            path.write_text(json.dumps(doc))
            os.utime(path, (T0 + day * DAY + offset,) * 2)
    import_smart_history([tmp_path / "in"], tmp_path / "out")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    assert frame["serial"].to_list() == ["PAIR1"] * 3
    assert frame["host_written_bytes"].to_list() == [u * DATA_UNIT for u in units]
    assert frame["nand_written_bytes"].to_list() == nand
    assert frame["waf"].to_list()[1:] == pytest.approx(
        [(nand[i] - nand[i - 1]) / ((units[i] - units[i - 1]) * DATA_UNIT) for i in (1, 2)]
    )
    assert set(frame["source"]) == {"nvme_id_ctrl+nvme_ocp_smart_add_log+nvme_smart_log"}


def test_unequal_counts_of_formats_in_one_folder_stay_separate_snapshots(tmp_path: Path) -> None:
    folder = tmp_path / "in" / "drive"
    folder.mkdir(parents=True)
    (folder / "id.json").write_text(json.dumps({"mn": "PAIR SSD", "sn": "PAIR2", "fr": "1"}))
    for day in range(2):
        (folder / f"log{day}.json").write_text(json.dumps(smart_log(1000 * (day + 1))))
    (folder / "ocp.json").write_text(
        json.dumps({"physical_media_units_written": {"hi": 0, "lo": 5}})
    )
    import_smart_history([tmp_path / "in"], tmp_path / "out")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    assert sorted(frame["source"]) == ["nvme_ocp_smart_add_log", "nvme_smart_log", "nvme_smart_log"]


def test_a_drive_read_through_its_controller_or_a_namespace_is_one_drive(tmp_path: Path) -> None:
    """smartctl through /dev/nvme0, /dev/nvme0n1 and, at the same moment, /dev/nvme0n2 (the
    same controller log twice: one snapshot), and smartctl_exporter dumps naming the device
    ``nvme0`` then ``nvme0n1``."""
    nvme = Drive("NS SSD", "NS1")
    for i, (device, day, units) in enumerate(
        [
            ("/dev/nvme0", 0, 100),
            ("/dev/nvme0n1", 1, 300),
            ("/dev/nvme0n2", 1, 300),
            ("/dev/nvme0", 2, 600),
        ]
    ):
        doc = smartctl_doc([7, 4], device, nvme, T0 + day * DAY)
        doc["device"]["protocol"] = "NVMe"
        doc["nvme_smart_health_information_log"] = {"data_units_written": units}
        (tmp_path / "in" / "smartctl").mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / "smartctl" / f"{i}.json").write_text(json.dumps(doc))
    for day, device in enumerate(["nvme0", "nvme0n1"]):
        dump = (
            f'smartctl_device{{device="{device}",model_name="EXP NS",serial_number="EXPNS"}} 1 '
            f"{(T0 + day * DAY) * 1000}\n"
            f'smartctl_device_bytes_written{{device="{device}"}} {(day + 1) * 10**9}\n'
        )
        (tmp_path / "in" / "exporter").mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / "exporter" / f"{day}.prom").write_text(dump)
    report = import_smart_history([tmp_path / "in"], tmp_path / "out")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    assert report.drives == 2
    ns = frame.filter(serial="NS1")
    assert ns["namespace"].to_list() == [None, 1, None]
    assert ns["host_written_delta_bytes"].to_list() == [None, 200 * DATA_UNIT, 300 * DATA_UNIT]
    exp = frame.filter(serial="EXPNS")
    assert exp["namespace"].to_list() == [None, 1]
    assert exp["host_written_delta_bytes"].to_list() == [None, 10**9]
    assert report.skipped == []  # the same log read twice at once is one snapshot, no loss


def test_a_capture_dropped_for_another_at_the_same_time_is_a_skipped_file(tmp_path: Path) -> None:
    """Two captures of one drive at one capture time with other counters: one was dropped
    while the import said it skipped 0 files."""
    drive = Drive("SAME TIME", "ST1")
    for name, units in (("a.json", 100), ("b.json", 250)):
        doc = smartctl_doc([7, 4], "/dev/nvme0", drive, T0)
        doc["device"]["protocol"] = "NVMe"
        doc["nvme_smart_health_information_log"] = {"data_units_written": units}
        (tmp_path / "in").mkdir(exist_ok=True)
        (tmp_path / "in" / name).write_text(json.dumps(doc))
    report = import_smart_history([tmp_path / "in"], tmp_path / "out")
    frame = pl.read_parquet(tmp_path / "out" / "frames" / f"{FRAME}.parquet")
    assert frame["host_written_bytes"].to_list() == [100 * DATA_UNIT]
    [skipped] = report.skipped
    assert skipped.path == tmp_path / "in" / "b.json"
    assert skipped.reason == (
        f"same drive and capture time as {tmp_path / 'in' / 'a.json'} but other "
        "host_written_bytes: only the first is kept"
    )
    record = json.loads((tmp_path / "out" / SMART_HISTORY).read_text())
    assert record["skipped"] == [str(skipped)]


def test_exporter_integers_beyond_2_53_are_read_exactly() -> None:
    """An integer is read as written; a float as the float64 it denotes (what the exporter
    held: Go prints the shortest text that reads back as it)."""
    big = 2**53 + 1
    dump = (
        'smartctl_device{device="nvme0",model_name="M",serial_number="S"} 1\n'
        f'smartctl_device_bytes_written{{device="nvme0"}} {big}\n'
        f'smartctl_device_bytes_read{{device="nvme0"}} {float(2**60 + 2**8):.16e}\n'
    )
    (record,) = smartctl_exporter.parse_smartctl_exporter(dump, "dump.prom")
    assert record.host_bytes_written == big
    assert record.host_bytes_read == 2**60 + 2**8  # exactly representable, so exact
    with pytest.raises(InputError, match="not an integer"):
        smartctl_exporter.parse_smartctl_exporter(dump.replace(f"}} {big}", "} 12.5"), "d")

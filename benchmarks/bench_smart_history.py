"""Fleet SMART history import against reading the captures' bytes, in one run.

Run: ``.venv/bin/python benchmarks/bench_smart_history.py [--drives 200] [--days 30]
[--repeats 3] [--workers 0]``

Writes a synthetic fleet (in a temporary directory) from the documented formats: a third of
the drives captured by ``smartctl -j`` 7.4 for NVMe (one file per day), a third by smartctl
7.1 for SATA (Intel DC attributes), a third by nvme-cli (an ``id-ctrl`` per drive, and per
day a folder with ``smart-log`` and the OCP C0 log). Then, alternately ``--repeats`` times,
it times reading every file's bytes (walk, open, read: the floor any import pays) and
:func:`~ssdlab.telemetry.history.import_smart_history` into a new directory, in one process
and in ``--workers`` processes (0: one per CPU), and prints the medians, their ratio to the
read, the cost per file and what that makes of 3.65 M files (10,000 drives x 365 days).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ssdlab.telemetry.history import import_smart_history

T0 = 1_700_000_000
DAY = 86_400


def smartctl_nvme(serial: str, day: int, written: int) -> dict:
    return {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 4], "argv": ["smartctl", "-j", "-a", "/dev/nvme0"]},
        "local_time": {"time_t": T0 + day * DAY},
        "device": {"name": "/dev/nvme0", "type": "nvme", "protocol": "NVMe"},
        "model_name": "BENCH NVME 3.84TB",
        "serial_number": serial,
        "firmware_version": "FW1",
        "nvme_total_capacity": 3_840_755_982_336,
        "nvme_smart_health_information_log": {
            "critical_warning": 0,
            "temperature": 38,
            "available_spare": 100,
            "available_spare_threshold": 10,
            "percentage_used": day // 30,
            "data_units_read": 2 * written,
            "data_units_written": written,
            "host_reads": 10 * written,
            "host_writes": 5 * written,
            "power_on_hours": 1000 + 24 * day,
            "unsafe_shutdowns": 3,
            "media_errors": 0,
            "num_err_log_entries": 0,
        },
        "temperature": {"current": 38},
        "power_on_time": {"hours": 1000 + 24 * day},
    }


def smartctl_sata(serial: str, day: int, written: int) -> dict:
    def attr(id_: int, name: str, raw: int, value: int = 100) -> dict:
        flags = {"value": 50, "string": "-O--CK "}
        raw_ = {"value": raw, "string": str(raw)}
        return {
            "id": id_,
            "name": name,
            "value": value,
            "worst": value,
            "flags": flags,
            "raw": raw_,
        }

    return {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 1], "argv": ["smartctl", "-j", "-a", "/dev/sda"]},
        "local_time": {"time_t": T0 + day * DAY},
        "device": {"name": "/dev/sda", "type": "sat", "protocol": "ATA"},
        "model_name": "BENCH SATA 960GB",
        "serial_number": serial,
        "firmware_version": "FW2",
        "user_capacity": {"blocks": 1_875_385_008, "bytes": 960_197_124_096},
        "ata_smart_attributes": {
            "revision": 1,
            "table": [
                attr(9, "Power_On_Hours", 1000 + 24 * day),
                attr(190, "Temperature_Celsius", 33),
                attr(233, "Media_Wearout_Indicator", 0, 100 - day // 30),
                attr(241, "Host_Writes_32MiB", written),
                attr(243, "NAND_Writes_32MiB", written * 3 // 2),
            ],
        },
        "power_on_time": {"hours": 1000 + 24 * day},
    }


def write_fleet(root: Path, drives: int, days: int) -> int:
    """The synthetic fleet under ``root``; the number of files."""
    rng = random.Random(1)
    files = 0
    for n in range(drives):
        host = root / f"host{n // 20:03d}"
        serial = f"SN{n:08d}"
        written = rng.randrange(10**6, 10**8)
        kind = n % 3
        if kind == 2:
            ident = {"mn": "BENCH OCP 7.68TB", "sn": serial, "fr": "FW3", "tnvmcap": 7.68e12}
            (host / serial).mkdir(parents=True)
            (host / serial / "id-ctrl.json").write_text(json.dumps(ident))
            files += 1
        for day in range(days):
            written += rng.randrange(10**4, 10**6)
            if kind == 0:
                doc = smartctl_nvme(serial, day, written)
                path = host / serial / f"{day:04d}.json"
            elif kind == 1:
                doc = smartctl_sata(serial, day, written)
                path = host / serial / f"{day:04d}.json"
            else:
                folder = host / serial / f"{day:04d}"
                folder.mkdir(parents=True)
                c0 = {"Physical media units written": {"hi": 0, "lo": written * 768_000}}
                (folder / "ocp.json").write_text(json.dumps(c0, indent=2))
                doc = {
                    "critical_warning": 0,
                    "temperature": 311,
                    "avail_spare": 100,
                    "spare_thresh": 10,
                    "percent_used": day // 30,
                    "data_units_read": str(2 * written),
                    "data_units_written": str(written),
                    "power_on_hours": 1000 + 24 * day,
                    "unsafe_shutdowns": 0,
                    "media_errors": 0,
                }
                path = folder / "smart-log.json"
                files += 1
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, indent=2))
            os.utime(path, (T0 + day * DAY, T0 + day * DAY))
            files += 1
    return files


def read_all(root: Path) -> int:
    """Every file's bytes under ``root`` (the floor of any import); bytes read."""
    total = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as fh:
                total += len(fh.read())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drives", type=int, default=200)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per CPU)")
    args = parser.parse_args()
    workers = args.workers or os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="ssdlab-bench-history-"))
    try:
        fleet = work / "fleet"
        files = write_fleet(fleet, args.drives, args.days)
        times: dict[str, list[float]] = {"read": [], "import": [], f"import x{workers}": []}
        for n in range(args.repeats):
            start = time.perf_counter()
            size = read_all(fleet)
            times["read"].append(time.perf_counter() - start)
            for label, count in (("import", 1), (f"import x{workers}", workers)):
                start = time.perf_counter()
                report = import_smart_history([fleet], work / f"out{n}-{count}", workers=count)
                times[label].append(time.perf_counter() - start)
        medians = {label: statistics.median(values) for label, values in times.items()}
        print(f"fleet: {args.drives} drives x {args.days} days, {files} files, {size / 1e6:.1f} MB")
        print(
            f"imported: {report.snapshots} snapshots of {report.drives} drives, "
            f"{len(report.skipped)} skipped"
        )
        for label, seconds in medians.items():
            per_file_us = seconds / files * 1e6
            print(
                f"{label:>10}: {seconds:6.3f} s  {seconds / medians['read']:5.1f} x read  "
                f"{per_file_us:4.0f} us/file  (3.65 M files: {per_file_us * 3.65:4.0f} s)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

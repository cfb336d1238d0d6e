"""The jesd219-enterprise suite: it parses, fio takes its job files, it runs at tiny scale on a
file with JESD219's block sizes, and with ``--smart`` each segment gets its WAF, labelled as
the JESD219 workload, its convergence judged and endurance projected from it.

The SMART "tool" prints ``smartctl -j -a`` output of an Intel DC SATA drive (the recorded
``tests/fixtures/telemetry/run/capture-1.json``) with these counters, one capture per call
(units: 32 MiB; percent used = 100 - Media_Wearout_Indicator):

=====  ==================  =====  =====  =======  ========================
n      phase               host   NAND   % used   step WAF
=====  ==================  =====  =====  =======  ========================
1, 2   precondition        1000   1500   3        200 / 200 = 1.0
       (after)             1200   1700   3
3, 4   segment 1           1200   1720   3        100 / 260 -> 2.6
       (after)             1300   1980   3
5, 6   segment 2           1300   1990   3        100 / 300 -> 3.0
       (after)             1400   2290   4
7, 8   segment 3           1400   2290   4        100 / 310 -> 3.1
       (after)             1500   2600   5
=====  ==================  =====  =====  =======  ========================
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.analysis.endurance import (
    JESD219,
    JESD219_BSSPLIT,
    JESD219_DISTRIBUTION,
    drive_endurance,
    jesd219_steps,
)
from ssdlab.runner import check_job_files, suite_jobs
from ssdlab.suite import Rounds, load_suite

ROOT = Path(__file__).parent
CAPTURE = ROOT / "fixtures" / "telemetry" / "run" / "capture-1.json"
DRIVE = ROOT / "fixtures" / "endurance" / "drive.toml"
UNIT = 32 * 2**20
TB = 10**12
#: (Host_Writes_32MiB, NAND_Writes_32MiB, percent used) of captures 1..8
COUNTERS = [
    (1000, 1500, 3),
    (1200, 1700, 3),
    (1200, 1720, 3),
    (1300, 1980, 3),
    (1300, 1990, 3),
    (1400, 2290, 4),
    (1400, 2290, 4),
    (1500, 2600, 5),
]
SEGMENT = "jesd219-r{:02d}-randwrite-jesd219"
#: the JESD219 transfer sizes (bytes) and their shares (methodology: "Endurance workloads")
SIZES = {512: 4, 1024: 1, 1536: 1, 2048: 1, 2560: 1, 3072: 1, 3584: 1, 4096: 67}
SIZES |= {8192: 10, 16384: 7, 32768: 3, 65536: 3}


def fake_smartctl(directory: Path) -> Path:
    """Write captures 1..8 (:data:`COUNTERS`) and a tool printing them in turn."""
    doc = json.loads(CAPTURE.read_text())
    for n, (host, nand, used) in enumerate(COUNTERS, start=1):
        for attribute in doc["ata_smart_attributes"]["table"]:
            if attribute["name"] == "Host_Writes_32MiB":
                attribute["raw"] = {"value": host, "string": str(host)}
            elif attribute["name"] == "NAND_Writes_32MiB":
                attribute["raw"] = {"value": nand, "string": str(nand)}
            elif attribute["name"] == "Media_Wearout_Indicator":
                attribute["value"] = attribute["worst"] = 100 - used
        (directory / f"capture-{n}.json").write_text(json.dumps(doc))
    script = directory / "fake-smartctl.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{directory}/count" 2>/dev/null || echo 0); n=$((n + 1))\n'
        f'echo "$n" > "{directory}/count"\n'
        f'cat "{directory}/capture-$n.json"\n'
    )
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def jesd219_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three 16 MiB segments after a 2 x 16 MiB preconditioning, on a file, with --smart."""
    work = tmp_path_factory.mktemp("jesd219")
    out = work / "run"
    proc = ssdlab_cli(
        "run",
        "jesd219-enterprise",
        "--out",
        out,
        "--target",
        work / "target.bin",
        "--target-size",
        "16m",
        "--set",
        "segments=3",
        "--set",
        "qd=1",
        "--set",
        "ioengine=psync",
        "--scale",
        "0.001",
        "--smart",
        f"{fake_smartctl(work)} {{device}}",
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_suite_is_jesd219_in_segments() -> None:
    suite = load_suite("jesd219-enterprise", {"segments": 6, "segment_loops": 2})
    precondition, block = suite.steps
    assert precondition.rw == "write" and precondition.loops == 2
    assert isinstance(block, Rounds) and block.max == block.window == 6  # every segment runs
    (segment,) = block.steps
    assert segment.rw == "randwrite" and segment.loops == 2 and segment.size == "100%"
    assert segment.options["bssplit"] == JESD219_BSSPLIT
    assert segment.options["random_distribution"] == JESD219_DISTRIBUTION
    # bssplit as methodology.md writes the workload: its shares add up to 100 %
    pairs = [part.split("/") for part in JESD219_BSSPLIT.split(":")]
    sizes = {ssdlab.units.parse_size(size): int(share) for size, share in pairs}
    assert sizes == SIZES and sum(sizes.values()) == 100
    assert suite.max_steps == 7


def test_fio_parses_every_job_file(tmp_path: Path) -> None:
    suite = load_suite("jesd219-enterprise", {"ioengine": "psync"})
    assert check_job_files(suite_jobs(suite, str(tmp_path / "target.bin"))) == []


def test_segments_write_jesd219_sizes(jesd219_run: Path) -> None:
    summary = ssdlab.load(jesd219_run).summary
    segments = summary.filter(pl.col("block") == "jesd219").sort("step_index")
    assert segments["step"].to_list() == [SEGMENT.format(n) for n in (1, 2, 3)]
    assert set(segments["direction"]) == {"write"}
    # each segment writes the 16 MiB span once (segment_loops = 1), give or take the last IO
    assert all(15 * 2**20 <= b <= 17 * 2**20 for b in segments["io_bytes"])
    # the mean transfer size is JESD219's 7818.24 bytes, not the step's 4K: bssplit is in
    # effect (about 6,400 IOs: 8 standard errors of the mean within 12 %)
    expected = sum(size * share for size, share in SIZES.items()) / 100
    assert expected == pytest.approx(7818.24)
    mean = segments["io_bytes"].sum() / segments["total_ios"].sum()
    assert mean == pytest.approx(expected, rel=0.12)


def test_waf_per_segment_labelled_jesd219(jesd219_run: Path) -> None:
    results = ssdlab.load(jesd219_run)
    assert jesd219_steps(results.manifest) == {2, 3, 4}  # size-based, yet not fills
    figures = drive_endurance(DriveAnalysis(results))
    assert figures.by_step.select("step", "workload", "host_bytes", "nand_bytes").rows() == [
        ("precondition-seq-write-128k", "128K sequential write", 200 * UNIT, 200 * UNIT),
        (SEGMENT.format(1), JESD219, 100 * UNIT, 260 * UNIT),
        (SEGMENT.format(2), JESD219, 100 * UNIT, 300 * UNIT),
        (SEGMENT.format(3), JESD219, 100 * UNIT, 310 * UNIT),
    ]
    assert figures.by_step["waf"].to_list() == pytest.approx([1.0, 2.6, 3.0, 3.1])
    workloads = figures.workloads.rows(named=True)
    assert [(w["workload"], w["steps"]) for w in workloads] == [
        ("128K sequential write", 1),
        (JESD219, 3),
    ]
    assert workloads[1]["host_bytes"] == 300 * UNIT and workloads[1]["nand_bytes"] == 870 * UNIT
    assert workloads[1]["waf"] == pytest.approx(2.9)  # 870 / 300
    assert workloads[1]["last_waf"] == pytest.approx(3.1)
    # WAF 2.6, 3.0, 3.1: mean 2.9, range 0.5 within 20 % (0.58), but the fit rises 0.25 per
    # segment: slope excursion 0.25 x 2 = 0.5 over 10 % of the mean (0.29): not converged
    state = figures.convergence
    assert state is not None and not state.steady
    assert state.mean == pytest.approx(2.9)
    assert state.data_excursion == pytest.approx(0.5)
    assert state.slope == pytest.approx(0.25)


def test_rating_scaled_by_measured_jesd219_waf(jesd219_run: Path) -> None:
    figures = drive_endurance(DriveAnalysis(ssdlab.load(jesd219_run)), DRIVE)
    rows = {(r["source"], r["workload"]): r for r in figures.projections.rows.iter_rows(named=True)}
    days = 365 * 5
    # rated: 1 DWPD x 3.84 TB x 365 x 5 = 7008 TB
    rated = rows[("rating", f"{JESD219} (the rating's)")]
    assert rated["tbw_bytes"] == pytest.approx(7008 * TB) and rated["dwpd"] == pytest.approx(1)
    # the rating at JESD219's measured WAF 3.1 is 7008 x 3.1 TB of NAND; at WAF 1.0 the
    # 128K sequential writes take 21724.8 TB: 3.1 DWPD
    assert rows[("rating", JESD219)]["tbw_bytes"] == pytest.approx(7008 * TB)
    sequential = rows[("rating", "128K sequential write")]
    assert sequential["tbw_bytes"] == pytest.approx(21724.8 * TB)
    assert sequential["dwpd"] == pytest.approx(3.1)
    # 3000 P/E x 4.8 TB raw = 14400 TB of NAND; / 3.1 = 4645.16 TB = 0.6628 DWPD
    pe = rows[("P/E cycles", JESD219)]
    assert pe["tbw_bytes"] == pytest.approx(14400 / 3.1 * TB)
    assert pe["dwpd"] == pytest.approx(14400 / 3.1 / (3.84 * days))
    # percent used 3 -> 5 while the host wrote 500 units and the NAND 1100 (run WAF 2.2):
    # 500 units x 100 / 2 = 25000 units at WAF 2.2; 25000 x 2.2 / 3.1 units for JESD219
    run = rows[("wear (run)", "the run's writes")]
    assert run["waf"] == pytest.approx(2.2)
    assert run["tbw_bytes"] == pytest.approx(25000 * UNIT)
    assert rows[("wear (run)", JESD219)]["tbw_bytes"] == pytest.approx(25000 * 2.2 / 3.1 * UNIT)
    # lifetime: 1500 units host, 2600 NAND at 5 %: 30000 units host; 52000 NAND units / 3.1
    life = rows[("wear (lifetime)", "the drive's lifetime writes")]
    assert life["tbw_bytes"] == pytest.approx(30000 * UNIT)
    assert life["waf"] == pytest.approx(2600 / 1500)
    assert rows[("wear (lifetime)", JESD219)]["tbw_bytes"] == pytest.approx(52000 / 3.1 * UNIT)
    assert figures.projections.missing == {
        "erase count": "the drive reports no average erase count"
    }
    assert all("5-year warranty (drive.toml)" in r["assumptions"] for r in rows.values())

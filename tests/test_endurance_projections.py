"""Endurance projections on hand-worked examples (TB = 10^12 bytes, 365-day years), and on a
real two-step run whose ``--smart`` COMMAND prints the recorded Intel DC SATA captures
``tests/fixtures/telemetry/run/capture-1..4.json`` (see ``tests/test_telemetry_run.py``):

=====  ========  ==================  ==================  ========
step   phase     Host_Writes_32MiB   NAND_Writes_32MiB   % used
=====  ========  ==================  ==================  ========
1      before    40000               50000               2
1      after     40100               50300               2
2      before    40100               50400               2
2      after     40500               50800               3
=====  ========  ==================  ==================  ========
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import smart_tool, ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.analysis.endurance import (
    JESD219,
    compare_endurance,
    drive_endurance,
    parse_tb,
    project,
    rating,
    waf_by_workload,
)
from ssdlab.errors import InputError
from ssdlab.manifest import Manifest
from ssdlab.review.compare import Comparison
from ssdlab.review.endurance import compare_endurance_section, endurance_section
from ssdlab.telemetry.frames import SMART_SCHEMA

TB = 10**12
UNIT = 32 * 2**20
DAYS = 365 * 5
SMART_CAPACITY = 3840755982336  # user_capacity of the recorded captures
SUITE = """
name = "two-steps"
[defaults]
runtime_s = 1
size = "16m"
ioengine = "null"

[[steps]]
name = "randwrite-4k"
rw = "randwrite"
bs = "4k"

[[steps]]
name = "write-128k"
rw = "write"
bs = "128k"
"""


def run_suite(work: Path, smart: str) -> Path:
    (work / "suite.toml").write_text(SUITE)
    out = work / "run"
    proc = ssdlab_cli("run", work / "suite.toml", "--out", out, "--smart", smart)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def smart_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("projections")
    return run_suite(work, f"{smart_tool(work)} {{device}}")


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_suite(tmp_path_factory.mktemp("plain"), "none")


def smart_frame(*rows: tuple[int, str, int, int, int, int | None]) -> pl.DataFrame:
    """A ``smart`` frame of (step, phase, host TB, NAND TB, % used, average erase count)."""
    return pl.DataFrame(
        [
            {
                "step_index": step,
                "step": f"s{step}",
                "phase": phase,
                "host_bytes_written": host * TB,
                "nand_bytes_written": nand * TB,
                "percent_used": used,
                "average_erase_count": erases,
            }
            for step, phase, host, nand, used, erases in rows
        ],
        schema=SMART_SCHEMA,
    )


def workloads(*pairs: tuple[str, float]) -> pl.DataFrame:
    """A WAF-per-workload frame from (workload, WAF) of one step of 1 TB each."""
    by_step = pl.DataFrame(
        {
            "step_index": list(range(1, len(pairs) + 1)),
            "step": [w for w, _ in pairs],
            "workload": [w for w, _ in pairs],
            "host_bytes": [TB] * len(pairs),
            "nand_bytes": [int(waf * TB) for _, waf in pairs],
            "waf": [waf for _, waf in pairs],
        }
    )
    return waf_by_workload(by_step)


def by_key(rows: pl.DataFrame) -> dict[tuple[str, str], dict]:
    return {(r["source"], r["workload"]): r for r in rows.iter_rows(named=True)}


def test_parse_tb() -> None:
    assert parse_tb("7000TB", "--rated-tbw") == 7000
    assert parse_tb("7PB", "--rated-tbw") == 7000
    assert parse_tb("960GB", "--capacity") == pytest.approx(0.96)
    assert parse_tb("3.84", "--capacity") == 3.84
    for bad in ("abc", "0", "-1TB", "7 EB"):
        with pytest.raises(InputError, match="--capacity"):
            parse_tb(bad, "--capacity")


def test_rating_derives_tbw_and_dwpd() -> None:
    # 1 DWPD x 3.84 TB x 365 x 5 years = 7008 TB
    rated = rating(capacity_tb=3.84, dwpd=1)
    assert rated.tbw_bytes == pytest.approx(7008 * TB)
    assert rated.sources == {
        "capacity_bytes": "--capacity",
        "dwpd": "--dwpd",
        "tbw_bytes": "from DWPD",
        "warranty_years": "assumed",
    }
    # 600 TB over 3 years on the SMART capacity (3.84 TB): 600 / (3.84 x 365 x 3) DWPD
    rated = rating(smart_capacity_bytes=SMART_CAPACITY, rated_tbw=600, warranty_years=3)
    assert rated.dwpd == pytest.approx(600e12 / (SMART_CAPACITY * 365 * 3))
    assert rated.sources["capacity_bytes"] == "SMART"
    # options win over the drive file, the drive file over SMART
    spec = ssdlab.telemetry.load_drive_spec(
        Path(__file__).parent / "fixtures" / "endurance" / "drive.toml"
    )
    rated = rating(spec, "drive.toml", SMART_CAPACITY, dwpd=3)
    assert rated.capacity_bytes == pytest.approx(3.84 * TB)
    assert rated.raw_capacity_bytes == pytest.approx(4.8 * TB)  # 3.84 x 1.25
    assert rated.tbw_bytes == pytest.approx(3 * 3.84 * DAYS * TB)
    assert rated.sources["dwpd"] == "--dwpd" and rated.sources["pe_cycles"] == "drive.toml"


def test_every_source_projects_per_workload() -> None:
    # 1.92 TB, 1 DWPD over 5 years (3504 TB), 3000 P/E cycles on 2.4 TB raw NAND
    rated = rating(capacity_tb=1.92, dwpd=1, pe_cycles=3000, raw_capacity_tb=2.4)
    # during the run the host wrote 10 TB, the NAND 16 TB (WAF 1.6), % used 10 -> 11,
    # average erase count 300 -> 330
    smart = smart_frame((1, "before", 100, 150, 10, 300), (1, "after", 110, 166, 11, 330))
    projected = project(rated, workloads(("4K random write", 4.0)), smart)
    rows = by_key(projected.rows)
    tbw = {key: row["tbw_bytes"] / TB for key, row in rows.items()}
    assert tbw == pytest.approx(
        {
            ("rating", f"{JESD219} (the rating's)"): 3504,  # 1 x 1.92 x 365 x 5
            ("P/E cycles", "4K random write"): 3000 * 2.4 / 4,  # 1800
            ("wear (run)", "the run's writes"): 10 * 100 / 1,  # 1000
            ("wear (run)", "4K random write"): 16 * 100 / 1 / 4,  # 400
            ("wear (lifetime)", "the drive's lifetime writes"): 110 * 100 / 11,  # 1000
            ("wear (lifetime)", "4K random write"): 166 * 100 / 11 / 4,  # 377.27
            ("erase count", "the drive's lifetime writes"): 110 * 3000 / 330,  # 1000
            ("erase count", "4K random write"): 166 * 3000 / 330 / 4,  # 377.27
        }
    )
    # DWPD = TBW / (capacity x 365 x years)
    for row in rows.values():
        assert row["dwpd"] == pytest.approx(row["tbw_bytes"] / (1.92 * TB * DAYS))
    assert rows[("wear (run)", "the run's writes")]["waf"] == pytest.approx(1.6)
    assert rows[("wear (lifetime)", "the drive's lifetime writes")]["waf"] == pytest.approx(
        166 / 110
    )
    assert "10 % to 11 %" in rows[("wear (run)", "4K random write")]["assumptions"]
    assert "5-year warranty (assumed)" in rows[("P/E cycles", "4K random write")]["assumptions"]
    # without JESD219 measured, the rating is not scaled to other workloads
    assert list(projected.missing) == ["rating per workload"]
    inputs = dict(projected.inputs.select("item", "value").rows())
    assert inputs["rated endurance"] == pytest.approx(3504 * TB)
    assert inputs["raw NAND capacity"] == pytest.approx(2.4 * TB)


def test_why_sources_do_not_project() -> None:
    # nothing rated; percent used unchanged; no erase count; no capacity: no DWPD
    smart = smart_frame((1, "before", 100, 150, 0, None), (1, "after", 110, 166, 0, None))
    projected = project(rating(), workloads(("4K random write", 2.0)), smart)
    assert projected.rows.is_empty()
    assert projected.missing["rating"].startswith("no rated TBW or DWPD")
    assert projected.missing["P/E cycles"].startswith("needs rated P/E cycles")
    assert "stayed at 0 %" in projected.missing["wear (run)"]
    assert "no wear yet" in projected.missing["wear (lifetime)"]
    assert projected.missing["erase count"] == "the drive reports no average erase count"
    smart = smart_frame((1, "before", 100, 150, 10, None), (1, "after", 110, 166, 11, None))
    (row, _) = (
        project(rating(), workloads(("4K random write", 2.0)), smart).rows.head(2).rows(named=True)
    )
    assert row["dwpd"] is None and "DWPD needs the capacity" in row["assumptions"]


def test_run_projects_from_smart_alone(smart_run: Path) -> None:
    figures = drive_endurance(DriveAnalysis(ssdlab.load(smart_run)))
    assert figures.workloads.select("workload", "waf", "last_waf").rows() == [
        ("4K random write", 3.0, 3.0),
        ("128K sequential write", 1.0, 1.0),
    ]
    inputs = {
        r["item"]: (r["value"], r["from"]) for r in figures.projections.inputs.iter_rows(named=True)
    }
    assert inputs == {"capacity": (SMART_CAPACITY, "SMART"), "warranty": (5.0, "assumed")}
    rows = by_key(figures.projections.rows)
    # % used 2 -> 3 while the host wrote 500 units and the NAND 800 (WAF 1.6)
    run = rows[("wear (run)", "the run's writes")]
    assert run["tbw_bytes"] == pytest.approx(500 * 100 * UNIT)
    assert run["dwpd"] == pytest.approx(500 * 100 * UNIT / (SMART_CAPACITY * DAYS))
    assert rows[("wear (run)", "4K random write")]["tbw_bytes"] == pytest.approx(
        800 * 100 * UNIT / 3
    )
    # lifetime: 40500 units host, 50800 NAND, at 3 %
    life = rows[("wear (lifetime)", "128K sequential write")]
    assert life["tbw_bytes"] == pytest.approx(50800 * 100 / 3 * UNIT)


def test_section_shows_workloads_and_projections(smart_run: Path) -> None:
    section = endurance_section(DriveAnalysis(ssdlab.load(smart_run)))
    assert section.missing is None
    assert (
        "Write amplification ranges from 1.00x (128K sequential write) to 3.00x (4K random write)."
        in section.findings
    )
    html = "".join(p.data for p in section.parts if isinstance(getattr(p, "data", None), str))
    assert "Write amplification per workload" in html
    assert "Projected endurance over the warranty" in html
    assert "Sources without a projection" in html and "no rated TBW or DWPD" in html
    assert len(section.charts) == 2  # WAF per step, WAF per workload


def test_section_says_why_without_smart(plain_run: Path) -> None:
    section = endurance_section(DriveAnalysis(ssdlab.load(plain_run)))
    assert section.parts == [] and "no SMART snapshots were taken" in (section.missing or "")


def test_section_without_nand_counters(tmp_path: Path) -> None:
    # nvme smart-log: percent used 3 %, 136157684 data units written; no NAND bytes, no capacity
    smart = Path(__file__).parent / "fixtures" / "telemetry" / "smart"
    capture = smart / "nvme_smart_log_1x_numbers.json"
    drive = DriveAnalysis(ssdlab.load(run_suite(tmp_path, f"cat {capture}")))
    section = endurance_section(drive)
    html = "".join(p.data for p in section.parts if isinstance(getattr(p, "data", None), str))
    assert "Write amplification unknown: the SMART snapshots hold no NAND bytes written" in html
    assert section.charts == []
    projected = drive_endurance(drive).projections
    # lifetime: 136157684 x 512000 bytes at 3 % used; no WAF, so no workload is projected
    ((source, workload, waf, tbw, dwpd),) = projected.rows.select(
        "source", "workload", "waf", "tbw_bytes", "dwpd"
    ).rows()
    assert (source, workload, waf, dwpd) == (
        "wear (lifetime)",
        "the drive's lifetime writes",
        None,
        None,
    )
    assert tbw == pytest.approx(136157684 * 512000 * 100 / 3)
    assert "stayed at 3 %" in projected.missing["wear (run)"]


def test_cli_project(smart_run: Path) -> None:
    proc = ssdlab_cli(
        "endurance", "project", smart_run, "--dwpd", "1", "--capacity", "3.84TB", "-f", "json"
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    rated = next(r for r in doc["projections"] if r["source"] == "rating")
    assert rated["tbw_bytes"] == pytest.approx(7008 * TB) and rated["dwpd"] == pytest.approx(1)
    assert [w["workload"] for w in doc["waf_by_workload"]] == [
        "4K random write",
        "128K sequential write",
    ]
    proc = ssdlab_cli("endurance", "project", smart_run, "--rated-tbw", "lots")
    assert proc.returncode != 0 and "--rated-tbw: 'lots' is not a positive size" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = ssdlab_cli("endurance", "project", smart_run)
    assert proc.returncode == 0, proc.stderr
    assert "wear (run)" in proc.stdout and "rating: not projected" in proc.stderr


def test_compare_section(smart_run: Path, plain_run: Path) -> None:
    runs = [ssdlab.load(smart_run), ssdlab.load(plain_run)]
    cmp = Comparison(runs, ["measured", "unmeasured"], "measured")
    section = compare_endurance_section(cmp)
    assert len(section.charts) == 1
    html = "".join(p.data for p in section.parts if isinstance(getattr(p, "data", None), str))
    assert "Write amplification per workload" in html and "the run&#x27;s writes" in html
    empty = Comparison(runs[1:], ["unmeasured"], "unmeasured")
    assert "No endurance data" in (compare_endurance_section(empty).missing or "")


def test_a_rating_whose_tbw_and_dwpd_disagree_is_refused() -> None:
    from ssdlab.analysis.endurance import rating
    from ssdlab.errors import InputError

    # 1 DWPD x 3.84 TB x 365 x 5 years = 7,008 TB: within 5 % passes, 100 TB does not
    assert rating(rated_tbw=7100.0, dwpd=1.0, capacity_tb=3.84).dwpd == 1
    with pytest.raises(InputError, match=r"disagree: 1 DWPD x 3.84 TB x 365 x 5 years is 7,008 TB"):
        rating(rated_tbw=100.0, dwpd=1.0, capacity_tb=3.84)


def test_compare_endurance_sets_runs_side_by_side(tmp_path: Path, plain_run: Path) -> None:
    """The golden telemetry run (SMART snapshots, power) with and without its drive file,
    and a run without SMART: one column per run, labels told apart by directory."""
    corpus = Path(__file__).parent / "fixtures" / "golden" / "corpora" / "telemetry"
    rated, unrated = tmp_path / "rated", tmp_path / "unrated"
    shutil.copytree(corpus, rated)
    shutil.copytree(corpus, unrated)
    (unrated / "drive.toml").unlink()
    compared = compare_endurance([rated, unrated, plain_run])
    label = Manifest.load(plain_run).label
    assert compared.labels == ["telemetry (rated)", "telemetry (unrated)", label]
    assert compared.empty == [plain_run]
    items = {row[0]: row[1:] for row in compared.items.iter_rows()}
    assert items["rated endurance (TBW)"] == (pytest.approx(7008), None, None)
    assert items["WAF (run) (ratio)"] == (pytest.approx(1.6), pytest.approx(1.6), None)
    assert list(items)[:2] == ["capacity (TB)", "warranty (years)"]  # the frame's item order
    assert compared.workloads.rows() == [
        ("randwrite-4k", 3.0, 3.0, None),
        ("write-128k", 1.0, 1.0, None),
    ]

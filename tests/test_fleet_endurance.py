"""Fleet endurance: a small SMART history written here (five drives, four snapshots ten days
apart, Intel-DC-like counters in 32 MiB units), its figures against hand computations, the
outlier rule at its threshold, the sections' reasons when data is missing, and one real
offline render of the report."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

from ssdlab.analysis.fleet_endurance import (
    OUTLIER_RATIO,
    FleetEndurance,
    drive_endurance,
    fleet_figures,
    model_endurance,
    outliers,
    unique_drives,
)
from ssdlab.errors import InputError
from ssdlab.importer import write_frames
from ssdlab.layout import SMART_HISTORY
from ssdlab.review import fleet_endurance as sections
from ssdlab.review.section import is_empty
from ssdlab.telemetry.history import FRAME, SNAPSHOT_SCHEMA, history_frame

UNIT = 32 * 2**20  # bytes per Intel host/NAND write unit
T0 = 1_700_000_000
DAY = 86_400
DAYS = (0, 10, 20, 30)
HOST0, HOST_PER_DAY = 10_000, 1_000  # units


def drive(serial: str, model: str, firmware: str, wafs: list[float], percent, media=None):
    """Snapshot rows of one drive: host units 10,000 + 1,000 a day; NAND starting at
    wafs[0] x 10,000 and growing by wafs[i] x the host's growth in interval i."""
    rows, nand = [], None if wafs is None else wafs[0] * HOST0
    for i, day in enumerate(DAYS):
        host = HOST0 + HOST_PER_DAY * day
        if i and nand is not None:
            nand += wafs[i] * HOST_PER_DAY * (day - DAYS[i - 1])
        rows.append(
            dict.fromkeys(SNAPSHOT_SCHEMA)
            | {
                "model": model,
                "serial": serial,
                "firmware": firmware,
                "time_s": float(T0 + day * DAY),
                "time_source": "capture",
                "host_written_bytes": host * UNIT,
                "nand_written_bytes": None if nand is None else round(nand) * UNIT,
                "percent_used": None if percent is None else percent[i],
                "media_errors": None if media is None else media[i],
                "available_spare_percent": None if media is None else 100 - media[i],
            }
        )
    return rows


def fleet_rows(x: float = 2.0) -> list[dict]:
    """Model M: S1 (WAF 1.5), S2 (1.6 then 1.2, 1.2, 2.0: lifetime 1.5, last ten days 2.0),
    S3 (1.4), S4 (WAF ``x``); model N: S5 with no NAND counter, wear or error count."""
    return [
        *drive("S1", "M", "F1", [1.5] * 4, [3, 4, 5, 6], [0, 0, 0, 0]),
        *drive("S2", "M", "F1", [1.6, 1.2, 1.2, 2.0], [3, 4, 5, 6], [0, 0, 0, 0]),
        *drive("S3", "M", "F2", [1.4] * 4, [3, 5, 6, 8], [0, 0, 1, 2]),
        *drive("S4", "M", "F2", [x] * 4, [3, 4, 5, 6], [0, 0, 0, 0]),
        *drive("S5", "N", "G1", None, None),
    ]


def write_history(directory: Path, rows: list[dict]) -> Path:
    """``rows`` as the directory ``ssdlab smart import`` writes."""
    frame = history_frame(pl.DataFrame(rows, schema=SNAPSHOT_SCHEMA))
    write_frames(directory, {FRAME: frame})
    (directory / SMART_HISTORY).write_text(json.dumps({"kind": FRAME}))
    return directory


@pytest.fixture
def fleet(tmp_path: Path) -> FleetEndurance:
    return FleetEndurance.load(write_history(tmp_path / "history", fleet_rows()))


def test_drive_figures_match_hand_computations(fleet: FleetEndurance) -> None:
    rows = {r["serial"]: r for r in fleet.drives.iter_rows(named=True)}
    assert set(rows) == {"S1", "S2", "S3", "S4", "S5"}
    s1, s2, s3, s5 = rows["S1"], rows["S2"], rows["S3"], rows["S5"]
    assert s1["snapshots"] == 4 and s1["span_days"] == 30
    assert s1["lifetime_waf"] == pytest.approx(1.5) and s1["recent_waf"] == pytest.approx(1.5)
    # S2's NAND: 16,000 + 12,000 + 12,000 + 20,000 units over 40,000 host units
    assert s2["lifetime_waf"] == pytest.approx(60_000 / 40_000)
    # recent (30 days): the three intervals, 44,000 NAND units over 30,000 host units
    assert s2["recent_waf"] == pytest.approx(44_000 / 30_000)
    recent10 = drive_endurance(fleet.history, recent_days=10)
    assert recent10.filter(serial="S2")["recent_waf"].item() == pytest.approx(2.0)
    # wear: 3 % -> 6 % over 30 days, while the host wrote 30,000 units
    assert s1["wear_pct_per_day"] == pytest.approx(3 / 30)
    assert s1["wear_pct_per_tb"] == pytest.approx(3 / (30_000 * UNIT / 1e12))
    assert s3["wear_pct_per_day"] == pytest.approx(5 / 30)
    # wear-out: (100 - 6) / 0.1 = 940 days after the last snapshot
    assert s1["days_to_wearout"] == pytest.approx(940)
    last = datetime.fromtimestamp(T0 + 30 * DAY, UTC)
    assert s1["wearout_date"] == last + timedelta(days=940)
    assert s3["days_to_wearout"] == pytest.approx(92 / (5 / 30))
    assert (s3["media_errors"], s3["new_media_errors"], s3["available_spare_percent"]) == (2, 2, 98)
    assert s5["lifetime_waf"] is None and s5["wear_pct_per_day"] is None
    assert s5["wearout_date"] is None and s5["host_written_bytes"] == 40_000 * UNIT


def test_model_and_firmware_medians(fleet: FleetEndurance) -> None:
    m = fleet.by_model.filter(model="M").row(0, named=True)
    assert (m["drives"], m["drives_with_waf"], m["drives_with_media_errors"]) == (4, 4, 1)
    assert m["lifetime_waf_median"] == pytest.approx(1.5)  # of 1.5, 1.5, 1.4, 2.0
    assert m["wear_pct_per_day_median"] == pytest.approx(0.1)  # of 0.1, 0.1, 1/6, 0.1
    assert m["min_available_spare_percent"] == 98
    n = fleet.by_model.filter(model="N").row(0, named=True)
    assert (n["drives"], n["drives_with_waf"], n["lifetime_waf_median"]) == (1, 0, None)
    by_fw = {r["firmware"]: r for r in fleet.by_firmware.filter(model="M").iter_rows(named=True)}
    assert by_fw["F1"]["lifetime_waf_median"] == pytest.approx(1.5)
    assert by_fw["F2"]["lifetime_waf_median"] == pytest.approx((1.4 + 2.0) / 2)


def test_a_drive_in_two_histories_counts_once(tmp_path: Path) -> None:
    """S4 (WAF 3.1) moved to a second host whose history holds its snapshots ten days on:
    over both histories' drives (the catalog's ``fleet_drives``) it is one drive, its row
    the history that saw it last, and it stays the one outlier among four drives of M."""
    first = FleetEndurance.load(write_history(tmp_path / "a", fleet_rows(3.1))).drives
    moved = [r | {"time_s": r["time_s"] + 10 * DAY} for r in fleet_rows(3.1) if r["serial"] == "S4"]
    second = FleetEndurance.load(write_history(tmp_path / "b", moved)).drives
    both = pl.concat([first, second])
    assert both.height == 6
    once = unique_drives(both).collect()
    assert once["serial"].to_list() == ["S1", "S2", "S3", "S5", "S4"]
    assert once.filter(serial="S4")["last_time"].item() == second["last_time"].item()
    assert model_endurance(both).filter(model="M")["drives"].item() == 4
    assert fleet_figures(both)["drives"] == 5
    found = outliers(both).filter(metric="lifetime_waf")
    assert found["serial"].to_list() == ["S4"] and found["peers"].item() == 4


@pytest.mark.parametrize(("x", "outlier"), [(2.9, False), (3.1, True)])
def test_an_outlier_is_more_than_twice_its_models_median(
    tmp_path: Path, x: float, outlier: bool
) -> None:
    """Lifetime WAFs 1.5, 1.5, 1.4 and x: the median is 1.5, so the limit is 3.0; recent
    WAFs 1.5, 44/30, 1.4 and x: the limit is 1.5 + 44/30 = 2.97 (twice their median)."""
    fleet = FleetEndurance.load(write_history(tmp_path, fleet_rows(x)))
    found = fleet.outliers
    assert set(found["serial"]) == ({"S4"} if outlier else set())
    if outlier:
        waf = found.filter(metric="lifetime_waf").row(0, named=True)
        assert waf["model_median"] == pytest.approx(1.5) and waf["peers"] == 4
        assert waf["ratio"] == pytest.approx(x / 1.5) and waf["ratio"] > OUTLIER_RATIO
        recent = found.filter(metric="recent_waf")["model_median"].item()
        assert recent == pytest.approx((1.5 + 44 / 30) / 2)
    section = sections.outliers_section(fleet)
    assert section.missing is None
    assert ("No drive is an outlier." in section.findings) is not outlier


def test_sections_say_why_when_data_is_missing(tmp_path: Path) -> None:
    """A history of a drive reporting host writes only: no WAF, wear, outliers or errors."""
    fleet = FleetEndurance.load(write_history(tmp_path, drive("S5", "N", "G1", None, None)))
    missing = {build.__name__: build(fleet).missing for build in sections.SECTIONS}
    assert missing["overview_section"] is None
    assert "NAND writes" in missing["waf_section"]
    assert "percentage used" in missing["wear_section"]
    assert "no drive reports a percentage used" in missing["wearout_section"]
    assert "no drive has a WAF or a wear rate" in missing["outliers_section"]
    assert "no capture reports media errors" in missing["media_errors_section"]
    overview = sections.overview_section(fleet).findings
    assert "1 drive reports no NAND write counter, so no WAF." in overview


def test_charts_draw_aggregates_and_tables_the_top_drives(tmp_path: Path) -> None:
    fleet = FleetEndurance.load(write_history(tmp_path, fleet_rows(3.1)))
    for build in sections.SECTIONS:
        section = build(fleet)
        assert section.missing is None and not all(is_empty(p) for p in section.parts), build
    assert sections.media_errors_section(fleet).findings == [
        "Of the 4 drives counting media errors, 1 reports some (2 in all); 1 had new ones "
        "during the history.",
        "Lowest available spare: 98 %.",
    ]
    bars = sections.binned(fleet.drives, "lifetime_waf")
    assert bars["drives"].sum() == 4 and bars.height <= sections.BINS
    assert bars["start"].min() == pytest.approx(1.4)
    years = sections.wearout_years(fleet.drives)
    assert years["drives"].sum() == 4  # S5 has no projection
    assert set(years["year"]) == {
        str((datetime.fromtimestamp(T0, UTC) + timedelta(days=30 + d)).year) for d in (940, 552)
    }


def test_a_directory_without_a_history_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=re.escape(f"{tmp_path}: not a SMART history")):
        FleetEndurance.load(tmp_path)
    write_history(tmp_path, fleet_rows())
    (tmp_path / "frames" / f"{FRAME}.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        FleetEndurance.load(tmp_path)


def test_the_report_renders_one_offline_html_file(tmp_path: Path) -> None:
    history = write_history(tmp_path / "history", fleet_rows(3.1))
    proc = ssdlab_cli("smart", "report", history, "-o", tmp_path / "fleet.html")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "fleet.html")
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["fleet.html"]  # no notebook
    html = (tmp_path / "fleet.html").read_text()
    for heading in ("Write amplification", "Projected wear-out", "Outliers", "Media errors"):
        assert f">{heading}" in html
    assert "S4" in html and "Fleet endurance: history" in html
    assert not re.search(r"<script[^>]+src=\"https?:", html)  # offline: nothing to fetch
    assert html.count('class="ssdlab-spec"') == 3  # WAF, wear and wear-out charts
    assert html.count("window.vegaEmbed=") == 1 and len(html) < 3_000_000  # bundle inlined


def test_worn_out_and_unworn_drives_have_no_projection_to_make() -> None:
    rows = [
        *drive("W1", "M", "F1", [1.5] * 4, [99, 100, 101, 102]),
        *drive("W2", "M", "F1", [1.5] * 4, [7, 7, 7, 7]),
        *drive("W3", "M", "F1", [1.5] * 4, [9, 8, 8, 8]),  # went down: reset, no rate
    ]
    drives = drive_endurance(history_frame(pl.DataFrame(rows, schema=SNAPSHOT_SCHEMA)))
    w1, w2, w3 = drives.sort("serial").iter_rows(named=True)
    assert w1["days_to_wearout"] == 0 and w1["wearout_date"] == w1["last_time"]
    assert w2["wear_pct_per_day"] == 0 and w2["days_to_wearout"] is None
    assert w2["wearout_date"] is None
    assert w3["wear_pct_per_day"] is None and w3["wear_pct_per_tb"] is None

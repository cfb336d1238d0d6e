"""Presentation polish of the review: chart points name their step and fio JSON, legends
name only what the data holds, no chart layer is drawn from no rows, one latency unit per
table, whole I/O counts, and the fleet report's histogram and tables at 390 and 1280 px."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import screens
from bs4 import BeautifulSoup
from conftest import ssdlab_cli
from test_fleet_endurance import drive, fleet_rows, write_history

from ssdlab import charts
from ssdlab.review.fleet_endurance import binned
from ssdlab.tables import format_beyond, format_percentile, html_table, latency_cells


def _points(**extra: list) -> pl.DataFrame:
    rows = {
        "series": ["4K random read"] * 3,
        "workload": ["4K random read"] * 3,
        "qd": [1, 4, 32],
        "qd_label": ["QD1", "QD4", "QD32"],
        "value": [10_000.0, 38_000.0, 40_000.0],
        "metric": ["IOPS"] * 3,
        "clat_mean_ns": [90_000.0, 100_000.0, 800_000.0],
        "clat_p99_ns": [200_000.0, 300_000.0, 3_000_000.0],
        "at_95": [False, True, False],
        "step": ["qd-randread-4k-qd1", "qd-randread-4k-qd4", "qd-randread-4k-qd32"],
        "fio_json": [f"steps/00{i}-qd/fio.json" for i in (1, 2, 3)],
    }
    return pl.DataFrame(rows | extra)


def _layers(spec: dict) -> list[dict]:
    return [n for n in screens._walk(spec) if "mark" in n]


def test_qd_chart_points_name_their_step_and_fio_json() -> None:
    spec = charts.qd_scaling(_points(), "QD").to_dict()
    assert {"step", "fio_json"} <= screens.tooltip_fields(spec)
    rows = [r for data in spec["datasets"].values() for r in data]
    assert {r["fio_json"] for r in rows} == {f"steps/00{i}-qd/fio.json" for i in (1, 2, 3)}


def test_step_charts_carry_provenance_when_the_frame_has_it() -> None:
    summary = pl.DataFrame(
        {
            "step_index": [1, 2],
            "step": ["a", "b"],
            "fio_json": ["steps/001-a/fio.json", "steps/002-b/fio.json"],
            "direction": ["read", "read"],
            "iops": [1.0, 2.0],
            "bw_bytes_s": [4096.0, 8192.0],
            "clat_p99_ns": [1e5, 2e5],
            "clat_mean_ns": [5e4, 6e4],
        }
    )
    for chart in (charts.iops_by_step(summary), charts.latency_by_step(summary)):
        assert {"step", "fio_json"} <= screens.tooltip_fields(chart.to_dict())
    cells = pl.DataFrame(
        {"block": ["4K"], "bs_bytes": [4096], "series": ["100/0"], "read_pct": [100],
         "value": [5.0], "step": ["b4k"], "fio_json": ["steps/001-b4k/fio.json"]}
    )  # fmt: skip
    for chart in (
        charts.by_block_size(cells, "t", "IOPS"),
        charts.grouped_bars(cells, "t", "IOPS"),
        charts.matrix_heatmap(cells, "t", "IOPS"),
    ):
        assert {"step", "fio_json"} <= screens.tooltip_fields(chart.to_dict())


def test_no_layer_is_drawn_from_no_rows() -> None:
    """The 95 % label on one side only, no ring without a quoted mix: every layer has rows
    (vega warns ``Infinite extent`` for a layer it filters down to nothing)."""
    spec = charts.qd_scaling(_points(), "QD").to_dict()
    datasets = spec["datasets"]
    for layer in _layers(spec):  # marks drawn from rows filtered in Python, never in vega
        assert "at_95" not in str(layer.get("transform")) and "qd" not in str(
            layer.get("transform")
        )
        if "data" in layer:
            assert datasets[layer["data"]["name"]], layer
    labels = [layer for layer in _layers(spec) if layer["mark"].get("type") == "text"]
    assert len(labels) == 1  # the 95 % label on the side its diamond is on, only
    zero = _points(clat_mean_ns=[0.0] * 3, clat_p99_ns=[0.0] * 3)
    assert len(charts.qd_scaling(zero, "QD").to_dict()["hconcat"]) == 1  # no latency panel


def test_legends_name_only_directions_and_results_that_occur() -> None:
    summary = pl.DataFrame(
        {"step_index": [1], "step": ["a"], "direction": ["read"], "iops": [1.0],
         "bw_bytes_s": [1.0], "clat_p99_ns": [1.0]}
    )  # fmt: skip
    (found,) = screens.legend_domains(charts.iops_by_step(summary).to_dict())
    assert found[1] == ["read"]
    trials = pl.DataFrame(
        {"load": [1.0], "trial": [1], "passed": [True], "status": ["ok"],
         **{f"max_pct_over_{t}ms": [0.1] for t in (1, 8, 64)}}
    )  # fmt: skip
    spec = charts.act_trials(trials, {1.0: 5.0, 8.0: 1.0, 64.0: 0.1}).to_dict()
    assert {tuple(d) for _, d, _ in screens.legend_domains(spec)} == {("passed",)}


def test_a_table_writes_every_latency_in_one_unit_picked_from_its_data() -> None:
    frame = pl.DataFrame(
        {"Workload": ["a", "b"], "Mean µs": [40.0, 900.0], "p99 ns": [3.2e6, 1.5e5],
         "ios": [28_000.0, 9.0e5], "Max ms": [4.0, 12.0]}
    ).select(
        "Workload",
        "Mean µs",
        latency_cells("p99 ns", percentile=99.99, ios=pl.col("ios")).alias("p99.99"),
        "Max ms",
    )  # fmt: skip
    soup = BeautifulSoup(html_table(frame), "html.parser")
    heads = [th.get_text() for th in soup.select("th")]
    assert heads == ["Workload", "Mean µs", "p99.99 µs", "Max µs"]
    rows = [[td.get_text() for td in tr.select("td")] for tr in soup.select("tbody tr")]
    assert rows[0] == ["a", "40.0", "3,200.0 (2)", "4,000.0"]  # 2.8 I/Os beyond: 2 whole
    slow = frame.filter(pl.col("Workload") == "a").with_columns(pl.col("Mean µs") * 100)
    heads = [th.get_text() for th in BeautifulSoup(html_table(slow), "html.parser").select("th")]
    assert heads == ["Workload", "Mean ms", "p99.99 ms", "Max ms"]  # all 1 ms or more


def test_io_counts_are_whole() -> None:
    assert [format_beyond(x) for x in (2149.0, 2.8, 0.9999999999, 0.05)] == ["2,149", "2", "1", "0"]
    assert format_percentile(8_277_602, 99.9999, 50_000).endswith("† (0)")


def test_one_drive_histogram_bar_is_narrow_and_holds_the_value() -> None:
    frame = pl.DataFrame({"model": ["M"], "waf": [1.25]})
    (row,) = binned(frame, "waf").iter_rows(named=True)
    assert row["start"] <= 1.25 <= row["end"] and row["end"] - row["start"] <= 0.1 + 1e-9
    few = binned(pl.DataFrame({"model": ["M", "M"], "waf": [1.25, 1.5]}), "waf")
    assert few.height == 2 and (few["end"] - few["start"]).max() >= 0.1  # not 40 slivers


@pytest.fixture(scope="module")
def fleet_pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """``ssdlab smart report`` of a fleet and of one drive."""
    root = tmp_path_factory.mktemp("fleet")
    pages = []
    for name, rows in (
        ("fleet", fleet_rows(3.1)),
        ("one", drive("S1", "M", "F1", [1.25] * 4, [1, 2, 3, 4])),
    ):
        history = write_history(root / name, rows)
        out = root / f"{name}.html"
        proc = ssdlab_cli("smart", "report", history, "-o", out)
        assert proc.returncode == 0, proc.stderr
        pages.append(out)
    return pages


@pytest.mark.parametrize("width", [390, 1280])
def test_smart_report_clips_nothing_without_a_scroll_bar(fleet_pages, width: int) -> None:
    for found in screens.clipped(fleet_pages, width):
        screens.assert_nothing_clipped(found)
    if width == 1280:  # the model/firmware tables fit: none of their 8 columns hidden
        assert screens.clipped(fleet_pages, width) == [[], []]


def test_smart_report_legends_and_console(fleet_pages) -> None:
    for page in fleet_pages:
        assert screens.console_messages(page) == []
        for spec in screens.chart_specs(page):
            for field, domain, values in screens.legend_domains(spec):
                assert set(domain) <= values, (page.name, field, domain, values)

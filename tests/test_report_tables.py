"""Report tables: one number format per unit, percentiles capped at the maximum, the setup
tables disclose the test settings and never come out empty, and what a run without fio steps
shows."""

from __future__ import annotations

import html
from pathlib import Path

import polars as pl
import pytest
from bs4 import BeautifulSoup
from rich.console import Console

from ssdlab.analysis.percentiles import CLAMPED, clamp_to_max, samples_beyond
from ssdlab.analysis.steps import SUMMARY_SCHEMA, with_summary_columns
from ssdlab.analysis.workloads import classify
from ssdlab.facts import drive_facts, run_facts
from ssdlab.manifest import Manifest, StepRecord, TargetInfo
from ssdlab.report.notebooks import discard_notebooks, executed_notebook, review_title
from ssdlab.results import pandas_frame
from ssdlab.review.section import NO_ROWS, Section, table
from ssdlab.suite import Step
from ssdlab.tables import (
    BEYOND_MARK,
    BEYOND_NOTE,
    CLAMP_NOTE,
    UNKNOWN,
    format_bw,
    format_latency,
    format_percentile,
    html_table,
    percentile_cells,
    summary_table,
    summary_view,
)


def _cells(markup: str) -> list[list[str]]:
    soup = BeautifulSoup(markup, "html.parser")
    return [[td.get_text() for td in tr.select("td")] for tr in soup.select("tbody tr")]


def _summary(**columns: list) -> pl.DataFrame:
    rows = len(next(iter(columns.values())))
    base = {
        "run_id": ["r"] * rows,
        "label": ["drive"] * rows,
        "step_index": list(range(1, rows + 1)),
        "step": [f"s{i}" for i in range(rows)],
        "direction": ["read"] * rows,
        "rw": ["randread"] * rows,
        "bs_bytes": [4096] * rows,
        "iodepth": [1] * rows,
        "numjobs": [1] * rows,
        "rwmixread": [0] * rows,
        "iops": [1000.0] * rows,
        "bw_bytes_s": [4096e3] * rows,
    }
    return pl.DataFrame(base | columns)


def test_one_format_per_unit_whatever_the_column_holds() -> None:
    frame = pl.DataFrame(
        {
            "Mean µs": [934.8, 0.5],
            "MB/s": [3633.563, 0.26],
            "IOPS": [12345.6, 7.4],
            "Max ms": [1.5, 12.345],
            "> 1 ms (%)": [0.5, 0.123],
        }
    )
    assert _cells(html_table(frame)) == [  # one latency unit per table: µs here
        ["934.8", "3,633.6", "12,346", "1,500.0", "0.50"],
        ["0.5", "0.3", "7", "12,345.0", "0.12"],
    ]
    # sentences round as the tables do
    assert format_latency(934_800) == "934.8 µs" and format_latency(12_345_000) == "12.35 ms"
    assert format_bw(3_633_563_000) == "3,633.6 MB/s" and format_bw(2e9) == "2,000 MB/s"
    assert format_latency(100_000) == "100 µs" and format_latency(1_500_000) == "1.5 ms"
    assert format_latency(None) == format_bw(float("nan")) == "–"  # an old fio's missing figure


def test_a_unit_column_sets_the_format_of_its_row() -> None:
    frame = pl.DataFrame(
        {"Sweep": ["4K", "128K"], "Unit": ["IOPS", "MB/s"], "70 % reads": [1234.56, 98.76]}
    )
    assert _cells(html_table(frame)) == [["4K", "IOPS", "1,235"], ["128K", "MB/s", "98.8"]]


def test_percentiles_above_the_maximum_are_capped_and_footnoted() -> None:
    summary = _summary(
        clat_p99_ns=[500e3, 800e3],
        clat_p99_99_ns=[9_109_504.0, 900e3],
        clat_max_ns=[9_100_206.0, 950e3],
    )
    capped = clamp_to_max(summary)
    assert capped["clat_p99_99_ns"].to_list() == [9_100_206.0, 900e3]
    assert capped[CLAMPED].to_list() == [True, False]
    assert classify(summary)["clat_p99_99_ns"].to_list() == [9_100_206.0, 900e3]
    markup = html_table(summary_view(summary))
    assert html.escape(CLAMP_NOTE) in markup
    cells = _cells(markup)
    assert cells[0][-2:] == ["9,100.2", "9,100.2"]  # p99.99 µs, Max µs
    below = summary.with_columns(pl.col("clat_max_ns") * 2)
    assert html.escape(CLAMP_NOTE) not in html_table(summary_view(below))


def test_a_percentile_deeper_than_its_samples_is_marked_as_the_maximum() -> None:
    # p99.9999 of 50,000 I/Os: 0.05 I/Os beyond it, so it is the slowest I/O
    assert samples_beyond(99.9999, 50_000) == pytest.approx(0.05)
    assert samples_beyond(99, 21_491) == pytest.approx(214.91)
    assert format_percentile(8_277_602, 99.9999, 50_000) == f"8.28 ms{BEYOND_MARK} (0)"
    assert format_percentile(733_184, 99, 21_491) == "733.2 µs (214)"  # whole I/Os
    assert format_percentile(733_184, 99, None) == "733.2 µs"  # no I/O count: the value
    frame = pl.DataFrame(
        {"clat_p99_99_ns": [2.1e6, 3.1e6], "ios": [50_000, 5_000], "bs_bytes": [4096, 4096]}
    )
    shown = frame.select(percentile_cells("clat_p99_99_ns", 99.99, pl.col("ios")).alias("p99.99"))
    assert _cells(html_table(shown)) == [["2.10 (5)"], [f"3.10{BEYOND_MARK} (0)"]]
    assert "<th" in html_table(shown) and ">p99.99 ms<" in html_table(shown)
    assert BEYOND_NOTE in html_table(shown, numeric=("p99.99",))
    assert BEYOND_NOTE not in html_table(shown.head(1), numeric=("p99.99",))


def test_summary_shows_the_job_column_only_for_clones() -> None:
    one = _summary(iops=[1.0, 2.0])
    assert "Job" not in summary_view(one.with_columns(job_index=pl.lit(0))).columns
    clones = pl.concat([one.head(1), one.head(1)]).with_columns(job_index=pl.Series([0, 1]))
    view = summary_view(clones)
    assert view["Job"].to_list() == [0, 1]


def test_pandas_keeps_integer_columns_integer() -> None:
    frame = pl.DataFrame({"round": [1, None], "iops": [1.5, 2.0], "step": ["a", "b"]})
    pandas = pandas_frame(frame)
    assert str(pandas["round"].dtype) == "Int64" and pandas["round"].isna().tolist() == [
        False,
        True,
    ]
    assert str(pandas["iops"].dtype) == "float64"


def _facts(frame: pl.DataFrame) -> dict[str, str]:
    assert frame["Value"].null_count() == 0 and all(frame["Value"].str.len_chars() > 0)
    return dict(frame.iter_rows())


def test_setup_tables_disclose_the_settings_and_the_scale() -> None:
    step = Step(
        name="mix", rw="randrw", rwmixread=70, size="75%", offset="10%", ioengine="io_uring",
        numjobs=4, iodepth=32, runtime_s=1,
    )  # fmt: skip
    manifest = Manifest(
        run_id="r",
        label="Drive A",
        suite="enterprise-review",
        scale=0.01,
        params={"span": "75%", "qd_list": "[1,4]"},
        target=TargetInfo(path="/tmp/t", kind="file", size_bytes=10**9),
        steps=[StepRecord(index=1, name="mix", status="ok", workload=step)],
    )
    facts = _facts(run_facts(manifest, _summary(iops=[1.0])))
    assert next(iter(facts)) == "Scale" and "0.01 × the suite's durations" in facts["Scale"]
    assert facts["Settings (--set)"] == "span=75%, qd_list=[1,4]"
    assert facts["LBA span"] == "75% of the target from offset 10%"
    assert facts["I/O engine"] == "io_uring" and facts["Jobs × iodepth"] == "4 × 32"
    assert review_title(manifest) == (
        "Drive A: enterprise-review suite (scaled run: 0.01 × durations and sizes)"
    )


def test_imported_results_say_what_fio_knows_and_unknown_otherwise() -> None:
    manifest = Manifest(
        run_id="r",
        label="fio",
        suite="import",
        source="import",
        fio_version="fio-3.36",
        steps=[StepRecord(index=1, name="a", status="ok", sources=["a.json"])],
    )
    summary = _summary(iops=[1.0, 2.0]).with_columns(
        hostname=pl.Series(["lab1", "lab2"]), jobname=pl.Series(["a", "b"])
    )
    drive = _facts(drive_facts(manifest, summary))
    assert drive["Host"] == "lab1, lab2" and drive["fio"] == "fio-3.36"
    assert drive["Model"] == UNKNOWN and drive["Job options"].startswith("rw=randread bs=4k")
    run = _facts(run_facts(manifest, summary))
    assert "Wall time" not in run and run["Started"] == UNKNOWN


def test_a_run_without_fio_steps_gets_empty_frames_and_no_data_sentences() -> None:
    empty = with_summary_columns(pl.DataFrame())
    assert empty.height == 0 and dict(empty.schema) == SUMMARY_SCHEMA
    assert classify(pl.DataFrame()).height == 0
    section = Section(parts=[table(empty.select("step"), "All steps")])
    assert section.missing == NO_ROWS and not section.parts
    console = Console(width=200, record=True)
    console.print(summary_table(pl.DataFrame()))
    assert console.export_text().startswith("No fio step results (ssdlab report shows them).")


def test_executed_notebooks_are_discarded_on_request(tmp_path: Path) -> None:
    html = tmp_path / "review.html"
    executed_notebook(html).write_text("{}")
    discard_notebooks(html, tmp_path / "missing.html")
    assert not executed_notebook(html).exists()

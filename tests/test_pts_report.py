"""SNIA PTS report pages: the figures against fio's raw numbers, and the drive-review sections
of each built-in PTS suite (IOPS, Latency, Throughput, WSAT) and of ``enterprise-review`` run
small with fio on a file.

Each suite runs once per module at scale 0.005 (cells of 0.5 s, five rounds) with a reduced
matrix; the figures of :mod:`ssdlab.analysis.pts` are recomputed here from the summary,
percentile and histogram frames, the sections are checked for what each PTS report page
carries, and every suite's review is rendered and checked in Chromium at 1280 px as every
other report is (:mod:`screens`).
"""

from __future__ import annotations

import inspect
import json
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import altair as alt
import numpy as np
import polars as pl
import pytest
import screens
import vl_convert as vlc
from bs4 import BeautifulSoup
from conftest import ssdlab_cli

import ssdlab
from ssdlab import charts
from ssdlab.analysis import DriveAnalysis, qd_scaling
from ssdlab.analysis.pts import (
    FIVE_NINES,
    round_blocks,
    saturation_spans,
    window_results,
    write_saturation,
)
from ssdlab.report import chromium
from ssdlab.review import drive
from ssdlab.suite import resolve_suite_path
from ssdlab.units import parse_size

_ENTERPRISE = tomllib.loads(resolve_suite_path("enterprise-review").read_text())
#: enterprise-review's block-size sweep, where the suite has one, at two sizes
_BS_SWEEP = ("--set", 'bs_list=["4k","128k"]') if "bs_list" in _ENTERPRISE["params"] else ()
FAST = ("--scale", "0.005", "--set", "ioengine=psync", "--set", "max_rounds=5")
RUNS = {
    "snia-iops": (
        *FAST, "--set", "mixes=[100,65,0]", "--set", 'block_sizes=["64k","4k"]',
        "--set", "threads=1", "--set", "qd=1",
    ),
    "snia-latency": (*FAST, "--set", "mixes=[100,0]", "--set", 'block_sizes=["4k","512"]'),
    "snia-throughput": (*FAST, "--set", "threads=1", "--set", "qd=1"),
    "snia-wsat": (
        "--scale", "0.005", "--set", "ioengine=psync", "--set", "threads=2", "--set", "qd=1",
        "--target-size", "128m",
    ),
    "enterprise-review": (
        "--scale", "0.005", "--set", "ioengine=psync", "--set", "qd_list=[1,32]",
        "--set", "mix_reads=[100,50,0]", "--set", "consistency_s=1200", *_BS_SWEEP,
    ),
}  # fmt: skip
#: the built-in snia-wsat at 2 x 6,000 IOPS: its 2 x 128 MiB take 5.5 s however fast the disk
PACED_WSAT = """
name = "snia-wsat"
include = ["snia-wsat"]

[defaults]
options = { rate_iops = 6000 }
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each built-in PTS suite and enterprise-review run small against a temporary file
    (write saturation paced, so that it lasts several log windows on any machine)."""
    root = tmp_path_factory.mktemp("pts")
    (root / "snia-wsat.toml").write_text(PACED_WSAT)
    found = {}
    for suite, args in RUNS.items():
        out = root / suite
        name = root / "snia-wsat.toml" if suite == "snia-wsat" else suite
        proc = ssdlab_cli("run", name, "--out", out, "--label", "PTS file", *args, timeout=600)
        assert proc.returncode == 0, f"{suite}: {proc.stderr}"
        found[suite] = out
    return found


@pytest.fixture(scope="module")
def analyses(runs: dict[str, Path]) -> dict[str, DriveAnalysis]:
    return {suite: DriveAnalysis(ssdlab.load(out)) for suite, out in runs.items()}


def _steps_of(summary: pl.DataFrame, block: str, cell: str, rounds: tuple[int, ...]) -> list:
    """The step indexes of ``cell`` in the window ``rounds``, found by step name."""
    names = [f"{block}-r{r:02d}-{cell}" for r in rounds]
    found = summary.filter(pl.col("step").is_in(names))["step_index"].unique().sort()
    assert found.len() == len(rounds), (cell, names)
    return found.to_list()


def test_round_values_are_the_ones_the_runner_judged(analyses) -> None:
    for suite in ("snia-iops", "snia-latency", "snia-throughput"):
        results = analyses[suite].results
        blocks = round_blocks(results)
        assert len(blocks) == results.steady_state.height > 0
        for block in blocks:
            tracked = block.cells.filter(pl.col("cell") == block.track).sort("round")
            recorded = results.rounds.filter(pl.col("block") == block.name).sort("round")
            assert tracked["value"].to_list() == pytest.approx(recorded["value"].to_list())
            assert block.rounds_run == recorded.height == 5
            assert block.state.rounds == (1, 2, 3, 4, 5)
            slope, intercept = np.polyfit(block.state.rounds, block.state.values, 1)
            assert block.state.slope == pytest.approx(slope)
            assert block.state.intercept == pytest.approx(intercept)
            assert block.state.mean == pytest.approx(np.mean(recorded["value"].to_numpy()))


def test_iops_matrix_cells_are_fios_iops_of_their_steps(analyses) -> None:
    results = analyses["snia-iops"].results
    (block,) = round_blocks(results)
    assert block.test == "IOPS"
    matrix = block.results
    assert matrix.height == 2 * 3
    assert set(zip(matrix["bs_bytes"], matrix["read_pct"], strict=True)) == {
        (bs, pct) for bs in (65536, 4096) for pct in (100, 65, 0)
    }
    summary = results.summary
    for row in matrix.iter_rows(named=True):
        steps = _steps_of(summary, block.name, row["cell"], block.state.rounds)
        per_step = (
            summary.filter(pl.col("step_index").is_in(steps))
            .group_by("step_index")
            .agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum())
        )
        assert row["iops"] == pytest.approx(per_step["iops"].mean())
        assert row["bw_bytes_s"] == pytest.approx(per_step["bw_bytes_s"].mean())
        assert row["rounds"] == 5


def test_latency_figures_are_fios_of_the_window(analyses) -> None:
    results = analyses["snia-latency"].results
    (block,) = round_blocks(results)
    assert block.test == "Latency" and block.metric == "lat_mean_ns"
    summary, hist = results.summary, results.latency_hist
    assert block.results.height == 2 * 2
    for row in block.results.iter_rows(named=True):
        steps = _steps_of(summary, block.name, row["cell"], block.state.rounds)
        rows = summary.filter(pl.col("step_index").is_in(steps))
        # average response time: each round's IOPS-weighted mean over directions, averaged
        per_round = rows.group_by("step_index").agg(
            ((pl.col("lat_mean_ns") * pl.col("iops")).sum() / pl.col("iops").sum()).alias("art")
        )
        assert row["lat_mean_ns"] == pytest.approx(per_round["art"].mean())
        assert row["lat_max_ns"] == rows["lat_max_ns"].max()
        # 99.999 %: fio's rule over every I/O of the window's json+ bins, capped at the max
        bins = (
            hist.filter(pl.col("step_index").is_in(steps))
            .group_by("lat_ns")
            .agg(pl.col("count").sum())
        )
        bins = bins.sort("lat_ns")
        cumulative = np.cumsum(bins["count"].to_numpy())
        first = int(np.searchsorted(cumulative, FIVE_NINES / 100 * cumulative[-1]))
        expected = min(bins["lat_ns"][first], rows["clat_max_ns"].max())
        assert row["clat_p99_999_ns"] == pytest.approx(expected)
        assert row["p99_999_from"] == "bins"
        assert row["clat_p99_999_ns"] <= row["clat_max_ns"]
        assert row["total_ios"] == rows["total_ios"].sum()


def test_five_nines_without_bins_come_from_fios_percentiles(analyses) -> None:
    results = analyses["snia-latency"].results
    (block,) = round_blocks(results)
    reported = window_results(block.cells, block.state.rounds, None, results.percentiles)
    assert set(reported["p99_999_from"]) == {"fio"}
    for row in reported.iter_rows(named=True):
        steps = _steps_of(results.summary, block.name, row["cell"], block.state.rounds)
        fio = results.percentiles.filter(
            pl.col("step_index").is_in(steps)
            & (pl.col("stat") == "clat")
            & (pl.col("percentile") == FIVE_NINES)
        )
        assert row["clat_p99_999_ns"] == min(fio["value_ns"].max(), row["clat_max_ns"])
    none = window_results(block.cells, block.state.rounds)
    assert none["clat_p99_999_ns"].is_null().all()


def test_throughput_per_block_size_read_and_write(analyses) -> None:
    results = analyses["snia-throughput"].results
    blocks = round_blocks(results)
    assert [b.name for b in blocks] == ["tp-1024k", "tp-128k"]
    for block in blocks:
        assert block.test == "Throughput"
        assert sorted(block.results["read_pct"]) == [0, 100]
        for row in block.results.iter_rows(named=True):
            steps = _steps_of(results.summary, block.name, row["cell"], block.state.rounds)
            bw = results.summary.filter(pl.col("step_index").is_in(steps))["bw_bytes_s"]
            assert row["bw_bytes_s"] == pytest.approx(bw.mean())


def test_write_saturation_against_time_and_data_written(analyses) -> None:
    analysis = analyses["snia-wsat"]
    results = analysis.results
    (ws,) = write_saturation(analysis.steps, results.timeseries, results.manifest)
    step = results.summary.filter(pl.col("step_index") == ws.step_index)
    assert ws.io_bytes == step["io_bytes"].sum() == 2 * results.manifest.target.size_bytes
    series = ws.series
    assert series.height >= 3 and series["t_s"].is_sorted()
    windows = results.timeseries.filter(pl.col("step_index") == ws.step_index)
    assert series["iops"].sum() == pytest.approx(windows["iops"].sum())
    lengths = np.diff(np.concatenate([[0.0], series["t_s"].to_numpy()]))
    expected = np.cumsum(series["bw_bytes_s"].to_numpy() * lengths)
    assert series["written_bytes"].to_numpy() == pytest.approx(expected)
    # fio logs whole windows: at most the last partial window (about a second) is missing
    short = ws.io_bytes - series["written_bytes"][-1]
    assert 0 <= short <= 1.5 * series["bw_bytes_s"].max()
    assert series["fills"][-1] == pytest.approx(series["written_bytes"][-1] / ws.capacity_bytes)
    spans = saturation_spans(ws)
    assert spans["unit"].to_list() == ["fill", "fill"]
    assert spans["windows"].sum() == series.height
    first = series.filter(pl.col("written_bytes") <= ws.capacity_bytes)
    assert spans["iops"][0] == pytest.approx(first["iops"].mean())


def _html(section) -> list:
    """The HTML parts (tables, notes) of a section."""
    return [p for p in section.parts if isinstance(getattr(p, "data", None), str)]


def _specs(section) -> list[dict]:
    return [chart.to_dict() for chart in section.charts]


def _axes(spec: object) -> list[dict]:
    """Every axis definition of x/y field encodings in a Vega-Lite spec."""
    found = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key in ("x", "y") and isinstance(value, dict) and "field" in value:
                found.append(value.get("axis", {}))
            else:
                found += _axes(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _axes(value)
    return found


def test_iops_review_pages(analyses) -> None:
    run = analyses["snia-iops"]
    steady = drive.steady_state_section(run)
    assert steady.missing is None
    finding = steady.findings[0]  # the sentence is findings.steady_state's
    assert "4K random write" in finding and "QD1" in finding and "5 rounds" in finding
    assert "excursion" in finding
    titles = [c.to_dict()["title"]["text"] for c in steady.charts]
    assert titles == [
        "IOPS test, block iops: IOPS per round, every block size",
        "Measurement window, block iops: 4K random write QD1 IOPS",
    ]
    convergence, window = _specs(steady)
    assert convergence["params"][0]["bind"]["options"] == ["100/0", "65/35", "0/100"]
    assert convergence["params"][0]["value"] == "0/100"  # the tracked cell's mix first
    guides = {row.get("guide") for rows in window["datasets"].values() for row in rows}
    assert guides == set(charts.WINDOW_GUIDES)
    determination = steady.parts[-1].data
    for item in ("Average value", "Allowed maximum data excursion", "Least squares linear fit"):
        assert item in determination
    assert "rounds 1-5 of 5" in determination and " IOPS (20 % of the average)" in determination

    result = drive.pts_results_section(run)
    assert result.missing is None and result.findings[0].startswith("IOPS test at QD1 (rounds 1-5")
    table = result.parts[0].data
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", table)
    assert heads == ["Block size", "0/100 IOPS", "65/35 IOPS", "100/0 IOPS"]
    assert [re.sub(r"<[^>]+>", "", r) for r in re.findall(r"<tr><td[^>]*>[^<]*", table)] == [
        "4K",
        "64K",
    ]
    assert "2 block sizes x 3 R/W mixes; the PTS matrix is 8 x 7" in table
    lines, heatmap = _specs(result)
    assert lines["encoding"]["x"]["title"] == "Block size"
    mark = heatmap["layer"][0]["mark"]
    assert (mark["type"] if isinstance(mark, dict) else mark) == "rect"
    assert heatmap["layer"][0]["encoding"]["color"]["legend"] is None  # each cell says it
    assert heatmap["layer"][1]["encoding"]["text"]["format"] == ",.0f"  # as the table
    cells = run.results
    (block,) = round_blocks(cells)
    shown = {row["value"] for rows in heatmap["datasets"].values() for row in rows}
    assert shown == set(block.results["iops"].to_list())
    for chart in steady.charts + result.charts:
        assert vlc.vegalite_to_svg(chart.to_dict()).startswith("<svg")


def test_latency_review_pages_show_average_max_and_five_nines(analyses) -> None:
    run = analyses["snia-latency"]
    result = drive.pts_results_section(run)
    assert result.missing is None
    tables = [p.data for p in _html(result) if "<table" in p.data]
    captions = [re.search(r'ssdlab-caption">([^<]*)<', t).group(1) for t in tables]
    assert [c.split(": ")[1].split(" by ")[0] for c in captions] == [
        "average response time",
        "99.999 % response time",
        "maximum response time",
    ]
    for t in tables:
        heads = re.findall(r"<th[^>]*>([^<]*)</th>", t)
        assert heads[0] == "Block size" and len(heads) == 3
        assert all(h.endswith((" µs", " ms")) for h in heads[1:])
    (bars,) = result.charts
    panels = bars.to_dict()["hconcat"]
    assert len(panels) == 3
    labelled = [p for p in panels if "layer" in p]  # bars (a log panel has dots)
    assert labelled
    for panel in labelled:  # figures on the bars as the tables write them: µs .1, ms .2
        unit = panel["layer"][0]["encoding"]["y"]["title"]
        assert panel["layer"][1]["encoding"]["text"]["format"] == charts.value_format(unit)
    assert {charts.value_format(u) for u in ("µs", "ms")} == {",.1f", ",.2f"}
    sentence = result.findings[0]
    assert sentence.startswith("Latency test at QD1 (rounds 1-5")
    assert "99.999 % of I/Os within" in sentence and "slowest I/O of the matrix" in sentence


def test_throughput_and_wsat_review_pages(analyses) -> None:
    result = drive.pts_results_section(analyses["snia-throughput"])
    table = result.parts[0].data
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", table)
    assert heads == [
        "Block size", "QD", "Read (100/0) MB/s", "Write (0/100) MB/s", "Measurement window",
    ]  # fmt: skip
    assert [f.split(": ")[1].split(" sequential")[0] for f in result.findings] == ["128K", "1M"]
    assert len(result.charts) == 1

    run = analyses["snia-wsat"]
    steady = drive.steady_state_section(run)
    assert steady.missing.startswith("No steady-state rounds: write saturation")
    result = drive.pts_results_section(run)
    (chart,) = result.charts
    titles = [panel["title"] for panel in chart.to_dict()["hconcat"]]
    assert titles[0] == "IOPS against time"
    assert "capacity" in result.parts[1].data and "Avg IOPS" in result.parts[1].data
    assert result.findings[0].startswith(
        "Write saturation, 4K random write at QD2 (2 jobs x QD1): "
    )
    # the saturation step is a test, not preconditioning
    said = drive.setup_section(run).findings
    assert any(s.startswith("The target was not preconditioned") for s in said), said


def test_runs_without_pts_tests_say_so_in_one_sentence(tiny_run: Path) -> None:
    run = DriveAnalysis(ssdlab.load(tiny_run))
    for build in (drive.steady_state_section, drive.pts_results_section):
        section = build(run)
        assert section.parts == [] and section.findings == []
        assert section.missing.endswith(".") and ". " not in section.missing
    assert drive.pts_results_section(run).missing.startswith("No SNIA PTS test: ")


def _drive_sections() -> list:
    """The drive review's sections built from a :class:`DriveAnalysis` alone (a section of
    another subject, such as the QoS targets' review, is left to its own tests)."""
    first = [next(iter(inspect.signature(b).parameters.values())) for b in drive.SECTIONS]
    return [
        b for b, p in zip(drive.SECTIONS, first, strict=True) if p.annotation == "DriveAnalysis"
    ]


def test_every_chart_keeps_its_labels_apart(analyses) -> None:
    """Every axis a chart defines drops colliding labels (a layer without an axis of its
    own shares its neighbour's)."""
    sections = _drive_sections()
    assert drive.steady_state_section in sections
    for run in analyses.values():
        for build in sections:
            for spec in _specs(build(run)):
                defined = [a for a in _axes(spec) if a]
                assert defined, spec.get("title")
                for found in defined:
                    assert found.get("labelOverlap") == "greedy", spec.get("title")
                    assert found.get("labelSeparation") == charts.LABEL_GAP


#: approximate advance of sans-serif glyphs, in em: digits, separators, the rest
_GLYPH_EM = {**dict.fromkeys("0123456789", 0.556), ",": 0.278, ".": 0.278}


def _label_gaps(chart: alt.TopLevelMixin) -> list[float]:
    """The gaps (px) between neighbouring visible labels of every horizontal axis of a chart
    drawn by vl-convert (Vega hides a dropped label with opacity 0)."""
    dom = BeautifulSoup(vlc.vegalite_to_svg(chart.to_dict()), "html.parser")
    gaps = []
    for group in dom.select("g.mark-text.role-axis-label"):
        rows: dict[float, list[tuple[float, float]]] = {}
        for text in group.select("text"):
            move = re.search(r"translate\(([-\d.]+),([-\d.]+)\)", text.get("transform", ""))
            if not move or text.get("opacity") == "0" or not text.get_text():
                continue
            size = float(text.get("font-size", "10px").removesuffix("px"))
            width = size * sum(_GLYPH_EM.get(ch, 0.6) for ch in text.get_text())
            x, anchor = float(move.group(1)), text.get("text-anchor", "start")
            left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
            rows.setdefault(float(move.group(2)), []).append((left, left + width))
        for row in rows.values():
            gaps += [b[0] - a[1] for a, b in pairwise(sorted(row))]
    return gaps


def test_big_figures_on_a_narrow_axis_do_not_collide() -> None:
    """The issue's "10,00020,000": sweep averages around 20,000 IOPS on the 150 px bar axis."""
    steps = pl.DataFrame(
        {
            "series": ["4K random QD1"] * 3,
            "read_pct": [100, 70, 0],
            "value": [24_000.0, 18_000.0, 12_000.0],
            "metric": ["IOPS"] * 3,
        }
    )
    sweeps = pl.DataFrame({"series": ["4K random QD1"], "avg": [18_000.0]})
    plain = alt.Chart(sweeps.with_columns(avg=pl.lit(24_000.0))).mark_bar()
    before = plain.encode(x="avg:Q", y="series:N").properties(width=charts.HALF - 140)
    assert min(_label_gaps(before)) < 2  # Vega's defaults: labels 1 px apart
    for chart in (
        charts.mix_sweep(steps, sweeps.with_columns(avg=pl.lit(24_000.0)), "Mixes"),
        charts.iops_by_step(
            pl.DataFrame(
                {
                    "step": ["a", "b"],
                    "step_index": [1, 2],
                    "direction": ["write"] * 2,
                    "iops": [240_000.0, 2_400_000.0],
                    "bw_bytes_s": [1e9] * 2,
                    "clat_p99_ns": [1e5] * 2,
                }
            )
        ).properties(width=200),
    ):
        gaps = _label_gaps(chart)
        assert gaps and min(gaps) >= charts.LABEL_GAP / 2, gaps
    assert charts.axis(300).to_dict()["tickCount"] == 300 // charts.TICK_PX
    assert "tickCount" not in charts.axis(300, values=[1, 2]).to_dict()


@pytest.fixture(scope="module")
def rendered(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every suite's review, two rendered at a time."""
    out = tmp_path_factory.mktemp("pts-report")

    def render(suite: str) -> tuple[str, Path]:
        html = out / f"{suite}.html"
        proc = ssdlab_cli("report", runs[suite], "-o", html, timeout=600)
        assert proc.returncode == 0, f"{suite}: {proc.stderr}"
        return suite, html

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(render, runs))


@pytest.fixture(scope="module")
def layout(rendered: dict[str, Path]) -> dict[str, screens.Page]:
    return dict(zip(rendered, chromium.layout_problems(list(rendered.values())), strict=True))


@pytest.mark.parametrize("suite", list(RUNS))
def test_review_fits_at_1280px_and_says_why_a_section_is_empty(suite: str, layout) -> None:
    page = layout[suite]
    screens.assert_fits(page)
    screens.assert_sections_explained(page)
    if suite == "enterprise-review":  # the small run still measures every kind of test
        shows = ["Performance consistency", "Queue-depth scaling", "Random mixed workloads"]
        screens.assert_shows(page, [*shows, "Sequential mixed workloads", "Latency QoS"])
    else:
        screens.assert_shows(page, ["SNIA PTS results"])
    if suite in ("snia-iops", "snia-latency", "snia-throughput"):
        screens.assert_shows(page, ["Steady state"])


def test_iops_report_draws_the_pts_pages(rendered: dict[str, Path], artifacts: Path) -> None:
    dom = BeautifulSoup(chromium.dump_dom(rendered["snia-iops"]), "html.parser")
    shown: dict[str, list[str]] = {}
    current = ""
    for element in dom.select(".ssdlab-main :is(h2, .ssdlab-missing, .ssdlab-chart, table)"):
        if element.name == "h2":
            current = element.get_text(strip=True).rstrip("¶")
            shown[current] = []
        else:
            drawn = element.select(".vega-embed > svg.marks")
            kind = "table" if element.name == "table" else "chart" if drawn else element.name
            shown[current].append("missing" if "ssdlab-missing" in element["class"] else kind)
    names = list(shown)
    assert names.index("SNIA PTS results") == names.index("Steady state") + 1
    assert shown["Steady state"] == ["chart", "chart", "table"]
    assert shown["SNIA PTS results"] == ["table", "chart", "chart"]
    assert dom.select(".ssdlab-chart select")  # the convergence plot's R/W mix menu
    chromium.screenshot(rendered["snia-iops"], artifacts / "pts-iops.png")


def _chart_rows(chart: alt.TopLevelMixin) -> list[dict]:
    """Every data row a chart draws that names its step."""
    spec = chart.to_dict()
    return [row for rows in spec.get("datasets", {}).values() for row in rows if "step" in row]


def _fio_figure(run: Path, row: dict, bs: str | None = None) -> float:
    """IOPS (or MB/s from 64K blocks on: ``row``'s ``metric``, else ``bs``) of the step's own
    fio.json, read here."""
    jobs = json.loads((run / row["fio_json"]).read_text())["jobs"]
    directions = (
        [row["direction"]] if row.get("direction") in ("read", "write") else ["read", "write"]
    )
    iops = sum(job[d]["iops"] for job in jobs for d in directions)
    bw = sum(job[d]["bw_bytes"] for job in jobs for d in directions)
    large = row["metric"] == "MB/s" if "metric" in row else parse_size(bs or "") >= 65536
    return bw / 1e6 if large else iops


_RW = {("random", "read"): "randread", ("random", "write"): "randwrite",
       ("sequential", "read"): "read", ("sequential", "write"): "write"}  # fmt: skip


def test_enterprise_review_points_come_from_their_own_test(runs, analyses) -> None:
    """Every point of the QD, mix and block-size charts is a step of that test (QD32 of the QD
    sweep, not the block-size sweep's step at the same depth), with fio's own figure."""
    run, analysis = runs["enterprise-review"], analyses["enterprise-review"]
    charted = 0
    for chart in drive.qd_scaling_section(analysis).charts:
        for row in _chart_rows(chart):
            bs, pattern, direction = row["series"].split(" ")[:3]
            expected = f"qd-{_RW[pattern, direction]}-{bs.lower()}-qd{row['qd']}"
            assert row["step"] == expected, row
            assert row["value"] == pytest.approx(
                _fio_figure(run, row | {"direction": direction}, bs)
            )
            charted += 1
    assert charted >= 8  # four sweeps at QD1 and QD32: QD32 also measured by bs-*-4k/128k
    for section in (drive.random_mix_section(analysis), drive.sequential_mix_section(analysis)):
        for chart in section.charts:
            for row in _chart_rows(chart):
                if "read_pct" not in row:
                    continue
                bs, pattern, qd = re.match(
                    r"(\w+) (random|sequential) QD(\d+)", row["series"]
                ).groups()
                kind = "rand" if pattern == "random" else "seq"
                assert row["step"] == f"mix-{kind}-{bs.lower()}-qd{qd}-r{row['read_pct']}", row
                assert row["value"] == pytest.approx(_fio_figure(run, row, bs))
                charted += 1
    assert charted >= 8 + 3 * 3 + 3  # + QD32, QD128 and QD4 random mixes, the 128K sequential
    points = analysis.blocksizes
    assert points.height == 4 * 2  # random/sequential x read/write at 4K and 128K
    for row in points.iter_rows(named=True):
        size = "4k" if row["bs_bytes"] == 4096 else "128k"
        assert row["step"] == f"bs-{_RW[row['pattern'], row['direction']]}-{size}", row
        assert row["value"] == pytest.approx(_fio_figure(run, row))
    twice = analysis.measured_twice.filter(pl.col("workload") == "4K random read")
    assert twice.filter(pl.col("qd_label") == "QD32")["used_step"].to_list() == [
        "qd-randread-4k-qd32"
    ]


@pytest.mark.parametrize("width", [390, 1280])
def test_screenshots_of_the_enterprise_review(
    width: int, rendered: dict[str, Path], artifacts: Path
) -> None:
    """The enterprise review at a phone's and a laptop's width, in tests/artifacts to be looked
    at; nothing on it is clipped without a visible scroll bar, and Vega says nothing."""
    page = rendered["enterprise-review"]
    png = artifacts / f"enterprise-review-{width}px.png"
    assert chromium.screenshot(page, png, width).read_bytes().startswith(b"\x89PNG")
    (found,) = screens.clipped([page], width)
    screens.assert_nothing_clipped(found)
    if width == 1280:
        assert screens.console_messages(page) == []


def test_enterprise_review_end_to_end_small(runs: dict[str, Path]) -> None:
    """Every step of the scaled enterprise review ran, with its sizes and lengths."""
    out = runs["enterprise-review"]
    r = ssdlab.load(out)
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and m["scale"] == 0.005
    assert len(m["steps"]) == 1 + 1 + 2 + 1 + 2 + 2 + 2 + 3 * 4 + 4 * 2
    pre = r.summary.filter(pl.col("step") == "precondition-seq-write-128k")
    assert pre["io_bytes"][0] == 2 * m["target"]["size_bytes"]  # two full passes
    scaling = qd_scaling(r.summary.filter(pl.col("step").str.starts_with("qd-")))
    assert set(scaling["rw"]) == {"randread", "randwrite", "read", "write"}
    assert set(scaling["qd"]) <= {1, 32}
    consistency = r.timeseries.filter(pl.col("step") == "consistency-randwrite-4k-qd32")
    assert consistency.height >= 5  # 6 s at this scale, one window per second
    mix = r.summary.filter(pl.col("step") == "mix-rand-4k-qd32-r50")
    assert sorted(mix["direction"]) == ["read", "write"]

"""Drive review: workload classification, sections, findings, and the rendered report.

The run is real fio (the null engine, so it is fast) through ``ssdlab run``: a size-based
fill, a consistency run, a QD sweep, a mix sweep and a steady-state round block. Frames that
other parts of ssdlab build (power, ACT, SMART) are written by hand to their contracts.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import nbformat
import polars as pl
import pytest
import vl_convert as vlc
from bs4 import BeautifulSoup
from conftest import ROOT, ssdlab_cli

import ssdlab
from ssdlab import findings, review
from ssdlab.report import chromium
from ssdlab.report.renderer import VEGALITE_MIME
from ssdlab.results import Results

REVIEW_SUITE = """
name = "review-sections"
description = "A fast run (fio's null engine) feeding every review section a native run can."

[defaults]
ioengine = "null"
size = "16m"
runtime_s = 0.2

[[steps]]
name = "fill-seq-write-128k"
rw = "write"
bs = "128k"
iodepth = 4
loops = 1
size = "4m"

[[steps]]
name = "consistency-randwrite-4k"
rw = "randwrite"
bs = "4k"
iodepth = 8
runtime_s = 5.5

[[steps]]
name = "randread-4k-qd{iodepth}"
rw = "randread"
bs = "4k"
iodepth = [1, 4, 16]

[[steps]]
name = "mix-4k-qd8-r{rwmixread}"
rw = "randrw"
bs = "4k"
iodepth = 8
rwmixread = [100, 70, 0]

[[steps]]
name = "iops"
rounds = { max = 2, window = 2, track = "r0-4k", metric = "iops" }

[[steps.steps]]
name = "r{rwmixread}-4k"
rw = "randrw"
bs = "4k"
iodepth = 4
rwmixread = [0]
"""
SECTIONS = [
    "Test setup",
    "Key findings",
    "Steady state",
    "Performance consistency",
    "Queue-depth scaling",
    "Random mixed workloads",
    "Sequential mixed workloads",
    "Latency QoS",
    "Power and efficiency",
    "ACT: Aerospike Certification Tool",
    "Endurance and write amplification",
    "All results",
]
DEMO = ROOT / "data" / "quick-demo"
WITHOUT_DATA = {
    "Sequential mixed workloads",
    "Power and efficiency",
    "ACT: Aerospike Certification Tool",
    "Endurance and write amplification",
}


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("review")
    (work / "review.toml").write_text(REVIEW_SUITE)
    out = work / "run"
    proc = ssdlab_cli("run", work / "review.toml", "--out", out, "--label", "null engine")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def results(review_run: Path) -> Results:
    return ssdlab.load(review_run)


def _svg(chart: object) -> str:
    return vlc.vegalite_to_svg(chart.to_dict())  # type: ignore[attr-defined]


def test_sweeps_are_found_from_the_columns(results: Results) -> None:
    classified = review.classify(results.summary, results.manifest)
    assert "fill-seq-write-128k" not in classified["step"].to_list()  # a fill, not a test
    points = review.qd_points(classified)
    assert points["workload"].unique().to_list() == ["4K random read"]
    assert points["qd"].to_list() == [1, 4, 16]
    best = points["iops"].max()
    first_95 = min(q for q, v in zip(points["qd"], points["iops"], strict=True) if v >= 0.95 * best)
    assert points.filter(pl.col("at_95"))["qd"].to_list() == [first_95]

    mixes = review.mix_points(classified)
    assert mixes.sweeps["sweep"].to_list() == ["4K random QD8"]
    steps = mixes.steps.sort("read_pct", descending=True)
    # 0 % reads: the later mix step counts, not the consistency run at the same QD
    assert steps["step"].to_list() == ["mix-4k-qd8-r100", "mix-4k-qd8-r70", "mix-4k-qd8-r0"]
    assert steps["read_pct"].to_list() == [100, 70, 0]
    row = mixes.sweeps.row(0, named=True)
    assert row["avg"] == pytest.approx(steps["iops"].mean())
    assert row["at_70_30"] == pytest.approx(steps["iops"][1])


def test_consistency_is_scored_on_the_tail(results: Results) -> None:
    (run,) = review.consistency_runs(results)
    assert run.step == "consistency-randwrite-4k" and run.workload == "4K random write QD8"
    per_second = (
        results.timeseries.filter(pl.col("step") == run.step)
        .group_by("t_s")
        .agg(pl.col("iops").sum())
    )
    assert per_second.height >= review.MIN_CONSISTENCY_WINDOWS
    tail = per_second.filter(pl.col("t_s") > per_second["t_s"].max() - run.tail_s)
    assert run.figures.windows == tail.height
    assert run.figures.iops_mean == pytest.approx(tail["iops"].mean())
    section = review.consistency_section(results)
    assert section.missing is None and len(section.charts) == 1
    assert f"{run.figures.iops_mean:,.0f} IOPS" in section.findings[0]


def test_jobs_reported_separately_are_combined(tmp_path: Path) -> None:
    fio = subprocess.run(
        [
            "fio",
            "--name=two-jobs",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=4",
            "--numjobs=2",
            "--size=16m",
            "--time_based",
            "--runtime=0.2",
            "--output-format=json+",
            f"--output={tmp_path / 'two-jobs.json'}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fio.returncode == 0, fio.stderr
    proc = ssdlab_cli("import", tmp_path / "two-jobs.json", "--out", tmp_path / "imported")
    assert proc.returncode == 0, proc.stderr
    imported = ssdlab.load(tmp_path / "imported")
    assert imported.summary.height == 2  # no group_reporting: one row per job
    (combined,) = review.classify(imported.summary).iter_rows(named=True)
    assert combined["iops"] == pytest.approx(imported.summary["iops"].sum())
    assert combined["clat_p99_ns"] == imported.summary["clat_p99_ns"].max()
    assert combined["qd"] == 8 and combined["qd_label"] == "QD8 (2 × 4)"


def test_a_run_without_sweeps_says_what_is_missing(tiny_run: Path) -> None:
    tiny = ssdlab.load(tiny_run)  # one random read and one 70/30 mix: no sweep at all
    sections = {build.__name__: build(tiny) for build in review.REVIEW_SECTIONS}
    assert sections["qd_scaling_section"].missing.startswith("No queue-depth sweep")
    assert sections["random_mix_section"].missing.startswith("No random mix sweep")
    latency = sections["latency_section"]
    assert latency.missing is None and len(latency.charts) == 1
    assert [p.data.count("<tr>") for p in latency.parts[1:]] == [1 + 3]  # header, 3 series
    assert review.key_findings(tiny).findings == latency.findings[:2]


def test_steady_state_plot_and_determination(results: Results) -> None:
    section = review.steady_state_section(results)
    determination = results.steady_state.row(0, named=True)
    assert section.missing is None and len(section.charts) == 1
    verdict = "reached steady state" if determination["steady"] else "was not steady"
    assert verdict in section.findings[0]
    assert f"after {determination['rounds_run']} rounds" in section.findings[0]
    spec = section.charts[0].to_dict()
    names = {row.get("line") for rows in spec["datasets"].values() for row in rows}
    assert {"Window average", "±10 % of average", "±20 % of average", "Least-squares fit"} <= names
    assert _svg(section.charts[0]).startswith("<svg")


def test_findings_state_the_numbers() -> None:
    points = pl.DataFrame(
        {
            "workload": ["4K random read"] * 4,
            "qd": [1, 4, 8, 16],
            "qd_label": ["QD1", "QD4", "QD8", "QD16"],
            "value": [100_000.0, 300_000.0, 380_000.0, 400_000.0],
            "metric": ["IOPS"] * 4,
            "clat_p99_ns": [50_000.0, 80_000.0, 120_000.0, 200_000.0],
            "at_95": [False, False, True, False],
        }
    )
    assert findings.qd_scaling(points) == [
        "4K random read reaches 95 % of its peak throughput at QD8 (380,000 IOPS, p99 latency "
        "120 µs); the peak is 400,000 IOPS at QD16."
    ]
    sweeps = pl.DataFrame(
        {
            "sweep": ["4K random QD32"],
            "metric": ["IOPS"],
            "avg": [50_000.0],
            "at_70_30": [40_000.0],
            "low": [30_000.0],
            "low_read_pct": [30],
            "steps": [4],
        }
    )
    assert findings.mix_sweeps(sweeps) == [
        "4K random QD32 mix reaches 40,000 IOPS at 70/30 and averages 50,000 IOPS over 4 read "
        "shares; its lowest point is 30,000 IOPS at 30 % reads."
    ]


def _contract_frames(results: Results) -> dict[str, pl.DataFrame]:
    """Power, ACT and SMART frames as their modules will build them (hand-written values)."""
    steps = results.summary.select("step_index", "step").unique().sort("step_index")
    index, names = steps["step_index"].to_list(), steps["step"].to_list()
    n = len(index)
    watts = [4.2 + 5.6 * i / (n - 1) for i in range(n)]
    power = (
        pl.DataFrame(
            {
                "step_index": index,
                "step": names,
                "start_s": [0.0] * n,
                "end_s": [1.0] * n,
                "samples": [10] * n,
                "avg_w": watts,
                "min_w": [w - 0.5 for w in watts],
                "max_w": [w + 0.5 for w in watts],
                "covered": [True] * (n - 1) + [False],
                "reason": [None] * (n - 1) + ["meter stopped"],
                "iops": [1000.0 * (i + 1) for i in range(n)],
                "bw_bytes_s": [4.096e6 * (i + 1) for i in range(n)],
            }
        )
        .with_columns(
            # the meter stopped before the last step: no figures for it
            *(
                pl.when(pl.col("covered")).then(pl.col(c)).alias(c)
                for c in ("avg_w", "min_w", "max_w")
            ),
        )
        .with_columns(
            mb_s_per_w=pl.col("bw_bytes_s") / 1e6 / pl.col("avg_w"),
            iops_per_w=pl.col("iops") / pl.col("avg_w"),
        )
    )
    trace = pl.DataFrame(
        {
            "step_index": [i for i in index for _ in range(5)],
            "step": [s for s in names for _ in range(5)],
            "t_s": [float(t) for _ in index for t in range(5)],
            "power_w": [w + 0.1 * t for w in watts for t in range(5)],
        }
    )
    trials = pl.DataFrame(
        {
            "trial": [1, 2, 3],
            "load": [6.0, 12.0, 24.0],
            "duration_s": [3600.0] * 3,
            "slice_s": [3600.0] * 3,
            "status": ["passed", "passed", "failed"],
            "passed": [True, True, False],
            "reason": ["", "", "6.20 % of reads over 1 ms in slice 1"],
            "max_pct_over_1ms": [1.2, 3.1, 6.2],
            "max_pct_over_8ms": [0.1, 0.4, 1.5],
            "max_pct_over_64ms": [0.0, 0.01, 0.2],
            "source": ["fio"] * 3,
        }
    )
    slices = pl.DataFrame(
        {
            "trial": [1, 2, 3],
            "load": [6.0, 12.0, 24.0],
            "slice": [1, 1, 1],
            "start_s": [0.0] * 3,
            "end_s": [3600.0] * 3,
            "pct_over_1ms": [1.2, 3.1, 6.2],
            "pct_over_8ms": [0.1, 0.4, 1.5],
            "pct_over_64ms": [0.0, 0.01, 0.2],
            "passed": [True, True, False],
            "read_rate": [12_000.0, 24_000.0, 47_000.0],
            "requested_read_rate": [12_000.0, 24_000.0, 48_000.0],
        }
    )
    waf = pl.DataFrame(
        {
            "step_index": index[:2],
            "step": names[:2],
            "host_bytes": [1e9, 1e9],
            "nand_bytes": [2e9, 3e9],
            "waf": [2.0, 3.0],
            "cumulative_host_bytes": [1e9, 2e9],
            "cumulative_nand_bytes": [2e9, 5e9],
            "cumulative_waf": [2.0, 2.5],
        }
    )
    smart = pl.DataFrame(
        {
            "step_index": [index[0], index[0]],
            "step": [names[0]] * 2,
            "phase": ["before", "after"],
            "host_bytes_written": [10e12, 10.001e12],
            "nand_bytes_written": [20e12, 20.002e12],
            "percent_used": [3, 3],
            "temperature_c": [41, 44],
            "media_errors": [0, 0],
        }
    )
    endurance = pl.DataFrame(
        {
            "item": ["rated endurance", "host written (run)", "projected life"],
            "value": [7008.0, 2e9, 12.34],
            "unit": ["TBW", "bytes", "years"],
        }
    )
    return {
        "power": power,
        "power_trace": trace,
        "act_trials": trials,
        "act_slices": slices,
        "waf": waf,
        "smart": smart,
        "endurance": endurance,
    }


def test_power_act_endurance_sections_follow_their_contracts(results: Results) -> None:
    empty = [
        review.power_section(results),
        review.act_section(results),
        review.endurance_section(results),
    ]
    assert [s.missing.split(":")[0] for s in empty] == [
        "No power data",
        "No ACT results",
        "No endurance data",
    ]
    full = dataclasses.replace(results, extra=results.extra | _contract_frames(results))

    power = review.power_section(full)
    assert power.missing is None and len(power.charts) == 4
    highest = full.power["avg_w"].drop_nulls().max()
    assert power.findings[0].startswith("Average power ranges from 4.20 W (fill-seq-write-128k)")
    assert f"to {highest:.2f} W (" in power.findings[0]
    assert power.findings[-1].startswith("1 step(s) have no power figure")
    assert "meter stopped" in power.findings[-1]
    # QD scaling reports the power and efficiency of each queue depth
    assert '<th class="num">IOPS/W</th>' in review.qd_scaling_section(full).parts[-1].data

    act = review.act_section(full)
    assert act.findings == [
        "ACT score: 12x, the highest load that passed (24,000 reads/s and 12,000 writes/s; "
        "worst slice 3.10 % of reads over 1 ms).",
        "At 24x the drive failed: 6.20 % of reads over 1 ms in slice 1.",
    ]
    assert len(act.charts) == 2

    endurance = review.endurance_section(full)
    assert endurance.findings == [
        "Over the run the host wrote 2.0 GB and the NAND 5.0 GB: a write amplification factor "
        "of 2.50.",
        "Endurance: it is rated for 7,008 TBW; the projected life is 12.3 years.",
    ]
    assert '<td class="num">2 GB</td>' in endurance.parts[-1].data
    assert len(endurance.charts) == 1 and len(endurance.parts) == 4
    for chart in power.charts + act.charts + endurance.charts:
        assert _svg(chart).startswith("<svg")


@pytest.fixture(scope="module")
def rendered(review_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rendered") / "review.html"
    proc = ssdlab_cli("report", review_run, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out.resolve())
    return out


KINDS = ("ssdlab-missing", "ssdlab-findings", "ssdlab-chart")


def _section_contents(dom: BeautifulSoup) -> dict[str, list[str]]:
    """Per h2 section of the page: what it shows, in order (missing, findings, chart, table)."""
    found: dict[str, list[str]] = {}
    current = ""
    selector = ".ssdlab-main :is(h2, .ssdlab-missing, .ssdlab-findings, .ssdlab-chart, table)"
    for element in dom.select(selector):
        if element.name == "h2":
            current = element.get_text(strip=True).rstrip("¶")
            found[current] = []
        elif element.name == "table":
            found[current].append("table")
        else:
            kind = next(c for c in element["class"] if c in KINDS)
            found[current].append(kind.removeprefix("ssdlab-"))
    return found


def test_review_shows_every_section_with_data(rendered: Path, artifacts: Path) -> None:
    dom = BeautifulSoup(chromium.dump_dom(rendered), "html.parser")
    sections = _section_contents(dom)
    assert list(sections) == SECTIONS
    for name, shown in sections.items():
        if name in WITHOUT_DATA:
            assert shown == ["missing"], name
        else:
            assert "missing" not in shown and shown, name
    for name in (
        "Steady state",
        "Performance consistency",
        "Queue-depth scaling",
        "Random mixed workloads",
        "Latency QoS",
    ):
        assert sections[name][0] == "findings" and "chart" in sections[name], name

    executed = nbformat.read(rendered.with_suffix(".executed.ipynb"), as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    charts = [o for o in outputs if VEGALITE_MIME in o.get("data", {})]
    drawn = dom.select(".ssdlab-chart .vega-embed > svg.marks")
    # steady state, consistency, QD scaling, random mix, latency, and two in all results
    assert len(charts) == 7 and len(drawn) == len(charts)
    assert all(svg.select("path, text") for svg in drawn)

    png = chromium.screenshot(rendered, artifacts / "review.png")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_failing_cell_names_its_section_and_keeps_the_partial_report(tmp_path: Path) -> None:
    shutil.copytree(DEMO, tmp_path / "run")
    fio_json = next((tmp_path / "run" / "steps").glob("003-*")) / "fio.json"
    fio_json.write_text(fio_json.read_text()[:500])  # cut short: loading the run fails
    out = tmp_path / "review.html"
    proc = ssdlab_cli("report", tmp_path / "run", "-o", out)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    partial = tmp_path / "review.partial.html"
    assert line.startswith(f'error: report failed in section "Test setup": InputError: {fio_json}')
    assert line.endswith(f"partial report: {partial}")
    assert not out.exists() and "truncated or malformed fio JSON" in partial.read_text()


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    proc = ssdlab_cli("report", tmp_path, "-o", tmp_path / "x.html")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path}: not an ssdlab results directory (no manifest.json)"
    ]

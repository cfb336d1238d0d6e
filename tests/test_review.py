"""Drive review: workload classification, sections, findings, and the rendered report.

The run is real fio (the null engine, so it is fast) through ``ssdlab run``: a size-based
fill, a consistency run, a QD sweep, a mix sweep and a steady-state round block, with SMART
snapshots from a 'tool' printing recorded ``smartctl -j`` captures in turn
(``tests/fixtures/telemetry/run``), a power meter's trace attached (``ssdlab power attach``),
the drive's rating beside the results, and two recorded native ACT logs
(``tests/fixtures/act``, of loop0 and nvme0n1: other devices than the run's file) added by
``ssdlab act import --other-device``, shown and left out of the ACT score. The sections see
the telemetry frames ``ssdlab.load`` builds from those files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import polars as pl
import pytest
import vl_convert as vlc
from bs4 import BeautifulSoup
from conftest import ROOT, smart_tool, ssdlab_cli

import ssdlab
from ssdlab import charts, findings
from ssdlab.analysis import DriveAnalysis, classify, consistency_runs, qd_scaling
from ssdlab.analysis.tails import MIN_CONSISTENCY_WINDOWS
from ssdlab.manifest import Manifest
from ssdlab.report import chromium
from ssdlab.report.renderer import VEGALITE_MIME
from ssdlab.review import drive
from ssdlab.tables import format_number

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
    "Headline figures",
    "Key findings",
    "Steady state",
    "SNIA PTS results",
    "Host idle recovery",
    "Cross-stimulus recovery",
    "Performance consistency",
    "Whole-drive fill",
    "Queue-depth scaling",
    "Random mixed workloads",
    "Sequential mixed workloads",
    "Block-size sweeps",
    "Latency QoS",
    "Latency over time",
    "Latency exceedance",
    "Latency against offered load",
    "Demand intensity and response time",
    "QoS targets",
    "Repeatability",
    "Power and efficiency",
    "ACT: Aerospike Certification Tool",
    "Endurance and write amplification",
    "All results",
]
DEMO = ROOT / "data" / "quick-demo"
WITHOUT_DATA = {
    "Sequential mixed workloads",
    "Host idle recovery",
    "Cross-stimulus recovery",
    "Latency against offered load",
    "Demand intensity and response time",
    "QoS targets",
    "Repeatability",
    "Block-size sweeps",
}
FIXTURES = Path(__file__).parent / "fixtures"
CAPTURES = FIXTURES / "telemetry" / "run"
WATTS = 7.25
#: the step the meter's trace leaves out (see meter_trace): it lasts a millisecond or so
UNCOVERED = "fill-seq-write-128k"
ACT_LOGS = (("act_storage_1x_30s.log", 10), ("act_storage_us_2x_20s.log", 4))


def meter_trace(manifest: Manifest) -> str:
    """A meter's CSV (epoch seconds, watts) for ``ssdlab power attach``: WATTS every 0.05 s
    from a second before the run to a second after, but none while its step UNCOVERED ran.
    So every other step (0.2 s or more) is covered and that one is not, whatever the
    machine's load (a meter sampling live covers what the load lets it: that is
    test_telemetry_run.py's)."""
    assert manifest.started and manifest.ended
    hole = manifest.record(UNCOVERED)
    assert hole and hole.started and hole.ended
    start, end = manifest.started.timestamp() - 1, manifest.ended.timestamp() + 1
    times = (start + 0.05 * n for n in range(int((end - start) / 0.05) + 1))
    kept = (t for t in times if not hole.started.timestamp() <= t <= hole.ended.timestamp())
    return "time_s,power_w\n" + "".join(f"{t!r},{WATTS}\n" for t in kept)


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("review")
    (work / "review.toml").write_text(REVIEW_SUITE)
    out = work / "run"
    proc = ssdlab_cli(
        "run", work / "review.toml", "--out", out, "--label", "null engine",
        "--smart", f"{smart_tool(work)} {{device}}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    meter = work / "meter.csv"
    meter.write_text(meter_trace(Manifest.load(out)))
    attach = ssdlab_cli(
        "power", "attach", out, meter, "--format", "csv",
        "--column", "time=time_s", "--column", "power=power_w",
    )  # fmt: skip
    assert attach.returncode == 0, attach.stderr
    shutil.copy(CAPTURES / "drive.toml", out / "drive.toml")
    for log, slice_s in ACT_LOGS:
        act = ssdlab_cli(
            "act", "import", FIXTURES / "act" / log, "--out", out, "--slice", slice_s,
            "--other-device",
        )  # fmt: skip
        assert act.returncode == 0, act.stderr
    return out


@pytest.fixture(scope="module")
def run(review_run: Path) -> DriveAnalysis:
    return DriveAnalysis(ssdlab.load(review_run))


def _svg(chart: object) -> str:
    return vlc.vegalite_to_svg(chart.to_dict())  # type: ignore[attr-defined]


def test_sweeps_are_found_from_the_columns(run: DriveAnalysis) -> None:
    results = run.results
    assert run.classified.equals(classify(results.summary, results.manifest))
    assert "fill-seq-write-128k" not in run.classified["step"].to_list()  # a fill, not a test
    points = run.qd
    assert points["workload"].unique().to_list() == ["4K random read"]
    assert points["qd"].to_list() == [1, 4, 16]
    best = points["iops"].max()
    first_95 = min(q for q, v in zip(points["qd"], points["iops"], strict=True) if v >= 0.95 * best)
    assert points.filter(pl.col("at_95"))["qd"].to_list() == [first_95]

    mixes = run.mixes
    assert mixes.sweeps["sweep"].to_list() == ["4K random QD8"]
    steps = mixes.steps.sort("read_pct", descending=True)
    # 0 % reads: the later mix step counts, not the consistency run at the same QD
    assert steps["step"].to_list() == ["mix-4k-qd8-r100", "mix-4k-qd8-r70", "mix-4k-qd8-r0"]
    assert steps["read_pct"].to_list() == [100, 70, 0]
    row = mixes.sweeps.row(0, named=True)
    assert row["avg"] == pytest.approx(steps["iops"].mean())
    assert row["at_70_30"] == pytest.approx(steps["iops"][1])


def test_consistency_is_scored_on_the_tail(run: DriveAnalysis) -> None:
    (found,) = consistency_runs(run.classified, run.results.timeseries)
    assert found.step == "consistency-randwrite-4k" and found.workload == "4K random write QD8"
    per_second = (
        run.results.timeseries.filter(pl.col("step") == found.step)
        .group_by("t_s")
        .agg(pl.col("iops").sum())
    )
    assert per_second.height >= MIN_CONSISTENCY_WINDOWS
    tail = per_second.filter(pl.col("t_s") > per_second["t_s"].max() - found.tail_s)
    assert found.figures.windows == tail.height
    assert found.figures.iops_mean == pytest.approx(tail["iops"].mean())
    section = drive.consistency_section(run)
    assert section.missing is None and len(section.charts) == 1
    assert f"{found.figures.iops_mean:,.0f} IOPS" in section.findings[0]


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
    (combined,) = classify(imported.summary).iter_rows(named=True)
    assert combined["iops"] == pytest.approx(imported.summary["iops"].sum())
    assert combined["clat_p99_ns"] == imported.summary["clat_p99_ns"].max()
    assert combined["qd"] == 8 and combined["qd_label"] == "QD8 (2 × 4)"
    # the public QD-scaling figure combines the job rows the same way
    (best,) = qd_scaling(imported.summary).iter_rows(named=True)
    assert (best["qd"], best["iodepth"], best["numjobs"]) == (8, 4, 2)
    assert best["iops"] == pytest.approx(combined["iops"])
    assert best["bw_bytes_s"] == pytest.approx(combined["bw_bytes_s"])
    assert best["clat_p99_ns"] == combined["clat_p99_ns"]


def test_a_run_without_sweeps_says_what_is_missing(tiny_run: Path) -> None:
    tiny = DriveAnalysis(ssdlab.load(tiny_run))  # a random read and a 70/30 mix: no sweep
    sections = {build.__name__: build(tiny) for build in drive.SECTIONS}
    assert sections["qd_scaling_section"].missing.startswith("No queue-depth sweep")
    assert sections["random_mix_section"].missing.startswith("No random mix sweep")
    latency = sections["latency_section"]
    assert latency.missing is None and len(latency.charts) == 1
    assert [p.data.count("<tr>") for p in latency.parts[1:]] == [1 + 3]  # header, 3 series
    assert sections["key_findings"].findings == [
        s for build in drive.KEY_FINDINGS for s in drive._key(sections[build.__name__])
    ]
    assert sections["key_findings"].findings[:2] == latency.findings[:2]
    missing = [
        sections[f"{n}_section"].missing.split(":")[0] for n in ("power", "act", "endurance")
    ]
    assert missing == ["No power data", "No ACT results", "No endurance data"]


def test_steady_state_plot_and_determination(run: DriveAnalysis) -> None:
    section = drive.steady_state_section(run)
    determination = run.results.steady_state.row(0, named=True)
    assert section.missing is None and len(section.charts) == 2  # convergence, window
    verdict = "reached steady state" if determination["steady"] else "was not steady"
    assert verdict in section.findings[0]
    assert f"after {determination['rounds_run']} rounds" in section.findings[0]
    spec = section.charts[1].to_json()
    assert all(name in spec for name in charts.WINDOW_GUIDES)  # the lines, bands and fit
    assert all(_svg(chart).startswith("<svg") for chart in section.charts)


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
        "4K random mixes at QD32 average 50,000 IOPS over 4 read/write mixes; 70/30 reaches "
        "40,000 IOPS; the lowest is 30,000 IOPS at 30/70."
    ]


def test_power_act_endurance_sections_show_the_loaded_frames(run: DriveAnalysis) -> None:
    results = run.results
    power = drive.power_section(run)
    assert power.missing is None and len(power.charts) == 4  # per step, 2 efficiencies, trace
    covered = results.power.filter(pl.col("covered"))
    assert results.power.filter(~pl.col("covered"))["step"].to_list() == [UNCOVERED]
    assert covered.height == 9 and covered["avg_w"].to_list() == [WATTS] * covered.height
    assert power.findings[0].startswith(f"Average power ranges from {WATTS:.2f} W (")
    best = covered.sort("iops_per_w", descending=True).row(0, named=True)
    figure, label = format_number(best["iops_per_w"]), run.step_labels[best["step_index"]]
    assert power.findings[1] == f"Best efficiency: {figure} IOPS per watt in {label}."
    # QD scaling reports the power and efficiency of each queue depth
    assert '<th class="num">IOPS/W</th>' in drive.qd_scaling_section(run).parts[-1].data

    act = drive.act_section(run)
    assert results.act_trials["load"].to_list() == [1.0, 2.0]
    # both logs ran on other devices than the run's file: listed, never scored or drawn
    assert act.findings == [
        "Left out of the score, as another device's: trial 1 at 1x on loop0 (2 GiB), passed; "
        "trial 2 at 2x on nvme0n1 (3.6 TiB), failed."
    ]
    assert not act.charts
    assert act.parts[-1].data.count("another device, not in the score: ") == 2

    endurance = drive.endurance_section(run)
    waf = results.waf.sort("step_index")
    assert waf.height == results.summary["step_index"].n_unique()
    assert set(waf["waf"].to_list()) == {1.0, 3.0}  # capture 1 -> 2: WAF 3; 3 -> 4: WAF 1
    last = waf.row(-1, named=True)
    assert endurance.findings[0].endswith(
        f"a write amplification factor of {last['cumulative_waf']:.2f}."
    )
    assert endurance.findings[1].startswith("Endurance: it is rated for 7,008 TBW")
    # WAF per step and per workload (chart, table each), SMART, rating, projections
    assert len(endurance.charts) == 2 and len(endurance.parts) == 9
    smart = endurance.parts[4].data
    assert smart.count("<tr>") == 1 + results.smart.height
    assert '<td class="num">1.34 TB</td>' in smart  # Host_Writes_32MiB 40000 of capture 1
    for chart in power.charts + act.charts + endurance.charts:
        assert _svg(chart).startswith("<svg")


def test_each_section_and_finding_is_built_once(
    review_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssdlab.analysis.drive as analysis_drive

    calls = []
    original = analysis_drive.classify

    def counted(*args: object, **kwargs: object) -> pl.DataFrame:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(analysis_drive, "classify", counted)
    fresh = DriveAnalysis(ssdlab.load(review_run))
    summary = drive.key_findings(fresh)
    shown = {build.__name__: build(fresh) for build in drive.SECTIONS}
    assert len(calls) == 1
    assert shown["key_findings"] is summary
    assert summary.findings == [
        s for build in drive.KEY_FINDINGS for s in drive._key(shown[build.__name__])
    ]
    assert drive.qd_scaling_section(fresh) is shown["qd_scaling_section"]


@pytest.fixture(scope="module")
def rendered(review_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rendered") / "review.html"
    proc = ssdlab_cli("report", review_run, "-o", out, "--keep-notebook")
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
    # sections without data are not shown: one closing line names them
    assert list(sections) == [s for s in SECTIONS if s not in WITHOUT_DATA]
    for name, shown in sections.items():
        assert "missing" not in shown and shown, name
    assert not dom.select(".ssdlab-missing")
    *_, closing, unasked = [p.get_text(" ", strip=True) for p in dom.select(".ssdlab-main p")]
    assert closing.startswith("Not measured in this run: ")
    named = closing.removeprefix("Not measured in this run: ").rstrip(".").split(", ")
    assert sorted(named) == sorted(
        n.lower() if not n.startswith("ACT") else n for n in WITHOUT_DATA - {"QoS targets"}
    )
    # no QoS profile was given: not a measurement the run lacks, and the page says how to ask
    assert unasked.startswith("Not asked for: QoS targets. No QoS profile given: ")
    assert "ssdlab report --qos" in unasked
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
    # steady state (convergence, window), consistency, QD scaling, random mix, latency,
    # the preconditioning fill, latency over time, latency exceedance, power (4), endurance
    # (per step, per workload), and two in all results; ACT's trials are another device's
    assert len(charts) == 17 and len(drawn) == len(charts)
    assert all(svg.select("path, text") for svg in drawn)

    png = chromium.screenshot(rendered, artifacts / "review.png")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_failing_cell_names_its_section_and_keeps_the_partial_report(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    for fio_json in (run / "steps").glob("*/fio.json"):  # cut short: no step can be loaded
        fio_json.write_text(fio_json.read_text()[:500])
    out = tmp_path / "review.html"
    proc = ssdlab_cli("report", run, "-o", out)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    partial = tmp_path / "review.partial.html"
    said = f'error: report failed in section "Test setup": InputError: {run}: no completed step'
    assert line.startswith(said) and line.endswith(f"partial report: {partial}")
    assert not out.exists() and "no completed step to load" in partial.read_text()


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    proc = ssdlab_cli("report", tmp_path, "-o", tmp_path / "x.html")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path}: not an ssdlab results directory (no manifest.json)"
    ]


def test_idle_power_is_the_trace_outside_the_run(review_run: Path, tmp_path: Path) -> None:
    """Samples of the meter's trace before the run was created and after its last step ended
    are its idle power, by phase; the power section and the headline say it."""
    run = tmp_path / "run"
    shutil.copytree(review_run, run)
    manifest = Manifest.load(run)
    created = manifest.created.timestamp()
    ended = max(s.ended for s in manifest.steps if s.ended).timestamp()
    before = [created - 5 + 0.05 * n for n in range(99)]  # strictly before the run
    during = [created + 0.05 * n for n in range(int((ended - created) / 0.05))]
    after = [ended + 0.05 * (n + 1) for n in range(40)]
    rows = [(t, 2.5) for t in before] + [(t, WATTS) for t in during] + [(t, 3.0) for t in after]
    meter = tmp_path / "meter.csv"
    meter.write_text("time_s,power_w\n" + "".join(f"{t!r},{w}\n" for t, w in rows))
    attach = ssdlab_cli(
        "power", "attach", run, meter, "--format", "csv", "--replace",
        "--column", "time=time_s", "--column", "power=power_w",
    )  # fmt: skip
    assert attach.returncode == 0, attach.stderr
    results = ssdlab.load(run)
    idle = {r["phase"]: r for r in results.power_idle.iter_rows(named=True)}
    assert set(idle) == {"before the run", "after the run"}
    assert idle["before the run"]["samples"] == len(before)
    assert idle["before the run"]["avg_w"] == pytest.approx(2.5)
    assert idle["after the run"]["samples"] == len(after)
    assert idle["after the run"]["avg_w"] == pytest.approx(3.0)
    analysis = DriveAnalysis(results)
    said = drive.power_section(analysis).findings
    assert f"Idle before the run ({len(before)} samples over 4.9 s): 2.50 W on average" in " ".join(
        said
    )
    headline = drive.headline_section(analysis).parts[0].data
    assert "before the run" in headline and "after the run" in headline

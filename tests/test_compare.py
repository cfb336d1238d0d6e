"""Comparison reports: a native run against imported results, ranked and overlaid.

The imported drive is a bench-fio style sweep run here with fio's null engine (one json+ file
per job) and imported with ``ssdlab import``; the native run is ``data/quick-demo``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import nbformat
import polars as pl
import pytest
from bs4 import BeautifulSoup
from conftest import ROOT, ssdlab_cli

import ssdlab
from ssdlab import charts, findings
from ssdlab.analysis import DriveAnalysis
from ssdlab.manifest import Manifest, TargetInfo
from ssdlab.report import chromium
from ssdlab.report.renderer import VEGALITE_MIME
from ssdlab.review import compare, drive
from ssdlab.sysinfo import HostInfo

DEMO = ROOT / "data" / "quick-demo"
IMPORTED = "Imported null engine"
#: rw, block size, iodepth, read share: the quick suite's shapes plus a QD and a mix point
SWEEP = [
    ("randread", "4k", 1, None),
    ("randread", "4k", 8, None),
    ("randread", "4k", 32, None),
    ("randwrite", "4k", 1, None),
    ("randwrite", "4k", 32, None),
    ("read", "128k", 32, None),
    ("write", "128k", 32, None),
    ("randrw", "4k", 32, 70),
    ("randrw", "4k", 32, 30),
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("sweep")
    for rw, bs, qd, mix in SWEEP:
        name = f"{rw}-{bs}-qd{qd}" + (f"-r{mix}" if mix is not None else "")
        (work / name).mkdir()
        args = [
            "fio",
            f"--name={name}",
            "--ioengine=null",
            f"--rw={rw}",
            f"--bs={bs}",
            f"--iodepth={qd}",
            "--size=64m",
            "--time_based",
            "--runtime=0.2",
            "--output-format=json+",
            f"--output={work / name / 'result.json'}",
        ]
        if mix is not None:
            args.append(f"--rwmixread={mix}")
        fio = subprocess.run(args, capture_output=True, text=True, check=False)
        assert fio.returncode == 0, fio.stderr
    out = work / "imported"
    proc = ssdlab_cli("import", work, "--out", out, "--label", IMPORTED)
    assert proc.returncode == 0, proc.stderr
    return out


def test_imported_sweeps_get_review_sections(imported: Path) -> None:
    run = DriveAnalysis(ssdlab.load(imported))
    qd = drive.qd_scaling_section(run)
    points = run.qd
    assert points["workload"].unique(maintain_order=True).to_list() == [
        "4K random read",
        "4K random write",
    ]
    assert qd.missing is None and len(qd.charts) == 2 and len(qd.findings) == 2
    mix = drive.random_mix_section(run)
    steps = run.mixes.steps
    assert steps["sweep"].unique().to_list() == ["4K random QD32"]
    assert steps["read_pct"].to_list() == [100, 70, 30, 0]
    assert mix.missing is None and mix.findings[0].startswith("4K random mixes")
    # the depth fio kept most of the time (its iodepth_level) is said where it was not QD32
    ran = set(steps.join(run.classified, on="step_index")["qd_run"].to_list())
    said = "(configured QD32, fio ran at QD1)" if ran == {1} else "at QD32 average"
    assert said in mix.findings[0], (ran, mix.findings[0])


def _manifest(label: str, firmware: str | None, host: str, run_id: str) -> Manifest:
    return Manifest(
        run_id=run_id,
        label=label,
        suite="quick",
        target=TargetInfo(path="/dev/nvme0n1", kind="block", device={"firmware": firmware}),
        host=HostInfo(
            hostname=host, kernel="6.1", os="Debian", cpu_model="x", cpu_count=2, python="3.11"
        ),
    )


def test_display_names_tell_runs_apart() -> None:
    by_firmware = [_manifest("SSD", "1.0", "h", "r1"), _manifest("SSD", "2.0", "h", "r2")]
    assert compare.display_names(by_firmware) == ["SSD (1.0)", "SSD (2.0)"]
    by_host = [
        _manifest("SSD", "1.0", "a", "r1"),
        _manifest("SSD", "1.0", "b", "r2"),
        _manifest("Other", None, "a", "r3"),
    ]
    assert compare.display_names(by_host) == ["SSD (a)", "SSD (b)", "Other"]
    same = [_manifest("SSD", "1.0", "a", "r1")] * 2
    assert compare.display_names(same) == ["SSD (#1)", "SSD (#2)"]


def test_leads_are_written_from_the_values() -> None:
    rows = [
        ("4K random 70/30 QD32", "B", 10_000.0, "IOPS", True),
        ("4K random 70/30 QD32", "A", 11_800.0, "IOPS", True),
        ("4K random read QD1 p99.99 latency", "A", 100_000.0, "ns", False),
        ("4K random read QD1 p99.99 latency", "B", 150_000.0, "ns", False),
        ("4K random write QD1 p99.99 latency", "A", 100_000.0, "ns", False),
        ("4K random write QD1 p99.99 latency", "B", 461_000.0, "ns", False),
        ("128K sequential read QD32", "A", 2000.0, "MB/s", True),
        ("128K sequential read QD32", "B", 2010.0, "MB/s", True),
    ]
    scores = pl.DataFrame(
        rows, schema=["test", "drive", "value", "metric", "higher_is_better"], orient="row"
    )
    assert findings.leads(scores) == [
        "A leads B by 4.6x in 4K random write QD1 p99.99 latency (100 µs vs 461 µs; lower is "
        "better).",
        "A leads B by 50 % in 4K random read QD1 p99.99 latency (100 µs vs 150 µs; lower is "
        "better).",
        "A leads B by 18 % in 4K random 70/30 QD32 (11,800 IOPS vs 10,000 IOPS).",
        "B and A are within 1 % in 128K sequential read QD32 (2,010 MB/s vs 2,000 MB/s).",
    ]


def test_scores_compare_the_same_tests(imported: Path) -> None:
    cmp = compare.load_comparison([DEMO, imported])
    demo_name = ssdlab.load(DEMO).manifest.label
    assert cmp.names == [demo_name, IMPORTED] and cmp.subject == demo_name
    scores = cmp.analysis.scores
    assert scores.group_by("test").len()["len"].to_list() == [2] * scores["test"].n_unique()
    tests = set(scores["test"].to_list())
    assert {
        "4K random read peak over QD1 to QD32",
        "4K random write peak over QD1 to QD32",
        "p99.99 latency of 4K random read at QD1",
        "4K random 70/30 at QD32",
        "4K random mixes at QD32 (average of 3 mixes)",
        "128K sequential read at QD32",
        "128K sequential write at QD32",
    } <= tests
    peak_test = "4K random read peak over QD1 to QD32"
    for results, name in zip(cmp.runs, cmp.names, strict=True):
        reads = results.summary.filter(pl.col("rw") == "randread")
        peak = scores.filter((pl.col("test") == peak_test) & (pl.col("drive") == name))
        # the peak over the queue depths both drives ran (the imported drive also ran QD8)
        shared = reads.filter(pl.col("iodepth").is_in([1, 32]))
        assert peak["value"][0] == pytest.approx(shared["iops"].max())
    # the imported run recorded no workload parameters: matched on the workload alone, said
    assert cmp.analysis.unknown[IMPORTED] and not cmp.analysis.unknown[demo_name]
    assert not cmp.analysis.excluded.height
    chart = cmp.ranked(peak_test).to_dict()
    bars = chart["layer"][0]["encoding"]
    assert bars["color"]["condition"]["test"] == f"(datum.drive === '{demo_name}')"
    ranked = scores.filter(pl.col("test") == peak_test).sort("value", descending=True)
    assert bars["y"]["sort"] == ranked["drive"].to_list()
    assert chart["layer"][0]["mark"]["type"] == "bar"
    assert charts.ACCENT in str(bars["color"])


def test_subject_must_be_a_compared_drive(imported: Path, tmp_path: Path) -> None:
    proc = ssdlab_cli("report", DEMO, imported, "-o", tmp_path / "c.html", "--subject", "nope")
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: subject 'nope' is none of the compared drives:")
    assert IMPORTED in line


SECTIONS_WITH_DATA = [
    "Compared drives",
    "Like for like",
    "Summary",
    "Queue-depth scaling",
    "Random mixed workloads",
    "Latency QoS",
    "Latency exceedance",
    "Other tests",
]
SECTIONS_WITHOUT = [
    "Sequential mixed workloads",
    "Latency against offered load",
    "Latency over time",  # the imported tree kept no histogram logs
    "Performance consistency",
    "ACT and endurance",
    "Endurance",
]


def test_comparison_report_pdf_and_figures(imported: Path, tmp_path: Path, artifacts: Path) -> None:
    html, figures = tmp_path / "compare.html", tmp_path / "figures"
    proc = ssdlab_cli(
        "report", DEMO, imported, "-o", html, "--pdf", "--figures", figures, "--subject", IMPORTED,
        "--keep-notebook",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(html.resolve()), str(html.with_suffix(".pdf").resolve())]

    dom = BeautifulSoup(chromium.dump_dom(html), "html.parser")
    headings = [h.get_text(strip=True).rstrip("¶") for h in dom.select(".ssdlab-main h2")]
    assert sorted(headings) == sorted(SECTIONS_WITH_DATA)  # sections without data: not shown
    assert not dom.select(".ssdlab-missing")
    closing = dom.select(".ssdlab-main p")[-1].get_text(" ", strip=True)
    topics = closing.partition(": ")[2].rstrip(".").split(", ")
    assert sorted(t.lower() for t in topics) == sorted(s.lower() for s in SECTIONS_WITHOUT)
    summary = " ".join(f.get_text() for f in dom.select(".ssdlab-findings"))
    demo = ssdlab.load(DEMO).manifest.label
    assert f"Against {demo}, {IMPORTED}'s" in summary or f"{IMPORTED} and {demo}" in summary

    executed = nbformat.read(html.with_suffix(".executed.ipynb"), as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    specs = [o.data[VEGALITE_MIME] for o in outputs if VEGALITE_MIME in o.get("data", {})]
    drawn = dom.select(".ssdlab-chart .vega-embed > svg.marks")
    assert len(specs) >= 10 and len(drawn) == len(specs)
    # the subject's bars are drawn in the accent colour, the others grey
    bars = {p.get("fill") for svg in drawn for p in svg.select(".mark-rect path")}
    assert {charts.ACCENT, charts.MUTED} <= bars
    chromium.screenshot(html, artifacts / "compare.png")

    pdf = html.with_suffix(".pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) >= 2
    files = sorted(figures.iterdir())
    assert len(files) == 2 * len(specs)
    assert [f.suffix for f in files] == [".png", ".svg"] * len(specs)
    assert all(f.read_bytes().startswith(b"\x89PNG") for f in files if f.suffix == ".png")
    assert all(f.read_text().startswith("<svg") for f in files if f.suffix == ".svg")
    assert files[0].name == "01-every-test-as-a-share-of-the-best-drive.png"

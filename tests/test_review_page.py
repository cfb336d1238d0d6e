"""The drive review as a page a reviewer publishes: sections without data left out and named
in one closing line, a headline table whose every figure names its step, key findings that
carry every mix sweep, power at every mix point, queue depths as fio ran them, the
block-size sweep's section and which step a point measured twice comes from.

The runs are real fio: ``enterprise-review`` shrunk (fio's null engine, 1 % of its times, QD1
and QD32, three read shares, two block sizes) with a meter's trace attached, and a small
suite on the ``psync`` engine, which submits one I/O at a time whatever its iodepth.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from bs4 import BeautifulSoup
from conftest import run_suite_text, ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.manifest import Manifest
from ssdlab.review import drive

ENTERPRISE = [
    *("--set", "ioengine=null", "--set", "span=6g", "--target-size", "64m", "--scale", "0.01"),
    *("--set", "qd_list=[1,32]", "--set", "mix_reads=[100,70,0]", "--set", "consistency_s=600"),
    *("--set", 'bs_list=["4k","128k"]'),
]
PSYNC_SUITE = """
name = "psync-depths"
description = "A QD sweep and a mix sweep on an engine that runs at depth 1."

[defaults]
ioengine = "psync"
size = "16m"
runtime_s = 0.3

[[steps]]
name = "qd-randread-4k-qd{iodepth}"
rw = "randread"
bs = "4k"
iodepth = [1, 8]

[[steps]]
name = "mix-4k-qd8-r{rwmixread}"
rw = "randrw"
bs = "4k"
iodepth = 8
rwmixread = [100, 70, 0]
"""


def meter_csv(manifest: Manifest) -> str:
    """A meter's trace (epoch seconds, watts) from a second before the run to a second after,
    every 0.05 s, the watts changing every 0.1 s (so steps draw different averages)."""
    assert manifest.started and manifest.ended
    start = manifest.started.timestamp() - 1
    samples = int((manifest.ended.timestamp() + 1 - start) / 0.05) + 1
    rows = (f"{start + 0.05 * n!r},{5 + (n // 2) % 7 * 0.5}\n" for n in range(samples))
    return "time_s,power_w\n" + "".join(rows)


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("enterprise") / "run"
    proc = ssdlab_cli(
        "run", "enterprise-review", "--out", out, "--label", "null engine", *ENTERPRISE
    )
    assert proc.returncode == 0, proc.stderr
    meter = out.parent / "meter.csv"
    meter.write_text(meter_csv(Manifest.load(out)))
    attach = ssdlab_cli(
        "power", "attach", out, meter, "--format", "csv",
        "--column", "time=time_s", "--column", "power=power_w",
    )  # fmt: skip
    assert attach.returncode == 0, attach.stderr
    return out


@pytest.fixture(scope="module")
def review(enterprise: Path) -> DriveAnalysis:
    return DriveAnalysis(ssdlab.load(enterprise))


@pytest.fixture(scope="module")
def psync(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_suite_text(tmp_path_factory.mktemp("psync"), PSYNC_SUITE, "psync drive")


def _rows(section: object, index: int = -1) -> list[dict[str, str]]:
    """The rows of a section's table (its last part by default), by column heading."""
    dom = BeautifulSoup(section.parts[index].data, "html.parser")  # type: ignore[attr-defined]
    heads = [th.get_text() for th in dom.select("thead th")]
    return [
        dict(zip(heads, (td.get_text() for td in tr.select("td")), strict=True))
        for tr in dom.select("tbody tr")
    ]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _render(args: list[str | Path], out: Path) -> BeautifulSoup:
    proc = ssdlab_cli(*args, "-o", out, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return BeautifulSoup(out.read_text(), "html.parser")


def _headings(page: BeautifulSoup) -> list[str]:
    return [h.get_text(strip=True).rstrip("¶") for h in page.select(".ssdlab-main h2")]


def _closing(page: BeautifulSoup, opening: str) -> list[str]:
    (line,) = [
        p.get_text() for p in page.select(".ssdlab-main p") if p.get_text().startswith(opening)
    ]
    assert line.endswith(".")
    return line.removeprefix(f"{opening}: ").removesuffix(".").split(", ")


def test_sections_without_data_are_left_out_and_named_at_the_end(
    tiny_run: Path, tmp_path: Path
) -> None:
    analysis = DriveAnalysis(ssdlab.load(tiny_run))
    missing = [build.__name__ for build in drive.SECTIONS if build(analysis).missing]
    assert {"qd_scaling_section", "steady_state_section", "power_section"} <= set(missing)
    page = _render(["report", tiny_run], tmp_path / "review.html")
    shown = _headings(page)
    assert not page.select(".ssdlab-missing")  # no "No ... data" box
    assert "Queue-depth scaling" not in shown and "Steady state" not in shown
    assert {"Test setup", "Headline figures", "Latency QoS", "All results"} <= set(shown)
    listed = _closing(page, "Not measured in this run")
    texts = [p.get_text() for p in page.select(".ssdlab-main p")]
    unasked = [t for t in texts if t.startswith("Not asked for")]  # no QoS profile given
    assert len(unasked) == 1
    assert unasked[0].startswith("Not asked for: QoS targets. No QoS profile given")
    assert len(listed) + 1 == len(missing)
    assert len(shown) + len(listed) + 1 == len(drive.SECTIONS.names)
    assert {"queue-depth scaling", "steady state", "power and efficiency", "ACT"} <= set(listed)
    assert "QoS targets" not in listed  # not asked for: not something the run did not measure
    # the contents list only the sections shown
    assert [a.get_text() for a in page.select(".ssdlab-toc a")] == shown
    # the closing lines are the page's last text
    assert texts[-2].startswith("Not measured in this run") and texts[-1] == unasked[0]


def test_a_comparison_leaves_out_its_sections_without_data_too(psync: Path, tmp_path: Path) -> None:
    shutil.copytree(psync, tmp_path / "again")  # a second drive that ran the same tests
    page = _render(["report", psync, tmp_path / "again"], tmp_path / "comparison.html")
    assert not page.select(".ssdlab-missing")
    listed = _closing(page, "Not shown, as there is no data for them")
    assert "performance consistency" in listed
    assert "Performance consistency" not in _headings(page)


def test_headline_figures_name_the_step_of_their_own_test(
    review: DriveAnalysis, enterprise: Path
) -> None:
    rows = _rows(drive.headline_section(review), 0)
    by_point = {(r["Workload"], r["Point"].split(",")[0].split(" (")[0]): r for r in rows}
    steps = {
        ("4K random read", "QD1"): "qd-randread-4k-qd1",
        ("4K random read", "QD32"): "qd-randread-4k-qd32",  # not bs-randread-4k, also QD32
        ("4K random write", "QD32"): "qd-randwrite-4k-qd32",
        ("4K random 70/30", "QD32"): "mix-rand-4k-qd32-r70",
        ("4K random 70/30", "QD128"): "mix-rand-4k-qd128-r70",
        ("4K random read", "p99.99 at QD32"): "qd-randread-4k-qd32",
    }
    for key, step in steps.items():
        assert by_point[key]["Step"] == step, key
    summary = review.results.summary
    for row in rows:
        if row["Step"].startswith(("trial", "the whole run", "the power trace")):
            continue
        mine = summary.filter(pl.col("step") == row["Step"])
        assert mine.height, row
        assert row["fio JSON"] == mine["fio_json"][0]
        assert (enterprise / row["fio JSON"]).is_file()
        value = _number(row["Value"])
        if row["Unit"] == "IOPS":
            assert value == pytest.approx(mine["iops"].sum(), abs=0.5)
        elif row["Unit"] == "MB/s":
            assert value == pytest.approx(mine["bw_bytes_s"].sum() / 1e6, abs=0.05)
        elif row["Unit"] == "W":
            power = review.results.power.filter(pl.col("step") == row["Step"])
            assert value == pytest.approx(power["avg_w"][0], abs=0.005)
    peaks = [r for r in rows if "(peak)" in r["Point"] and r["Unit"] in ("IOPS", "MB/s")]
    assert {r["Workload"] for r in peaks} == {
        "4K random read", "4K random write", "128K sequential read", "128K sequential write",
    }  # fmt: skip
    assert {r["Unit"] for r in rows} >= {"IOPS", "MB/s", "µs", "W", "IOPS/W", "MB/s/W"}
    for text in (r[c] for r in rows for c in r):
        assert "`" not in text and "step(s)" not in text


def test_key_findings_carry_every_mix_sweep(review: DriveAnalysis) -> None:
    mixes = drive.random_mix_section(review)
    assert len(mixes.key) == review.mixes.sweeps.filter(pl.col("pattern") == "random").height == 3
    key = drive.key_findings(review).findings
    assert all(sentence in key for sentence in mixes.key)
    (qd128,) = [s for s in key if s.startswith("4K random mixes") and "QD128 (4 jobs x QD32)" in s]
    assert "70/30 reaches" in qd128


def test_mix_table_gives_power_at_every_read_share(review: DriveAnalysis) -> None:
    rows = _rows(drive.random_mix_section(review))
    power = review.results.power
    for sweep in review.mixes.steps.filter(pl.col("pattern") == "random").partition_by("sweep"):
        name = sweep["sweep"][0]
        units = [r["Unit"] for r in rows if r["Sweep"] == name]
        assert units == ["IOPS", "W", "IOPS/W"], name
        watts = next(r for r in rows if r["Sweep"] == name and r["Unit"] == "W")
        per_w = next(r for r in rows if r["Sweep"] == name and r["Unit"] == "IOPS/W")
        for point in sweep.iter_rows(named=True):
            step = power.filter(pl.col("step_index") == point["step_index"]).row(0, named=True)
            share = f"{point['read_pct']} % reads"
            assert _number(watts[share]) == pytest.approx(step["avg_w"], abs=0.005)
            assert _number(per_w[share]) == pytest.approx(step["iops_per_w"], abs=0.5)


def test_depths_fio_did_not_reach_are_said_and_not_claimed(psync: Path) -> None:
    analysis = DriveAnalysis(ssdlab.load(psync))
    assert set(analysis.classified.filter(pl.col("qd") == 8)["qd_run"]) == {1}
    qd = drive.qd_scaling_section(analysis)
    sentence = qd.findings[0]  # then which step of QD8 reads it shows (the mix's 100/0 too)
    assert "configured QD8, fio ran at QD1: the psync engine submits one I/O at a time" in sentence
    assert "peaks at" not in sentence and "95 %" not in sentence
    assert [r["QD"] for r in _rows(qd)] == ["QD1", "QD8, fio ran at QD1"]
    (mix,) = drive.random_mix_section(analysis).findings
    assert mix.startswith(
        "4K random mixes (configured QD8, fio ran at QD1: the psync engine submits one I/O at "
        "a time) average "
    )
    points = [r["Point"] for r in _rows(drive.headline_section(analysis), 0)]
    assert "p99 at QD1" in points
    assert all("fio ran at QD1" in p for p in points if "QD8" in p)


def test_block_size_sweeps_have_their_section(review: DriveAnalysis) -> None:
    section = drive.blocksize_section(review)
    points = review.blocksizes
    assert points.height == 8  # random and sequential, read and write, 4K and 128K
    assert len(section.charts) == 3 and len(section.findings) == 4
    for chart in section.charts:
        spec = chart.to_dict()
        assert spec["encoding"]["x"]["scale"]["type"] == "log"
        steps = {row["step"] for row in spec["datasets"][next(iter(spec["datasets"]))]}
        assert steps and all(step.startswith("bs-") for step in steps)  # its own test
    rows = _rows(section)
    assert [r["Step"] for r in rows] == points["step"].to_list()
    assert all(r["Step"].startswith("bs-") for r in rows)
    assert section.findings[0].startswith("Random reads ")
    assert "IOPS peak at " in section.findings[0]


def test_a_point_measured_twice_says_which_step_is_shown(review: DriveAnalysis) -> None:
    findings = drive.qd_scaling_section(review).findings
    (twice,) = [s for s in findings if s.startswith("4K random read at QD32 was measured by")]
    assert "qd-randread-4k-qd32" in twice and "bs-randread-4k" in twice
    assert twice.endswith("the figures shown are qd-randread-4k-qd32's (its QD sweep's own step).")

"""Batch rendering: reviews in parallel, a comparison, an index; failures do not stop it.

The results root holds the sample run, an import of its fio files, and a directory whose
manifest is broken (its review fails). The first notebook kernel started is made to die (a
``sitecustomize`` on PYTHONPATH, active only in kernels), so one report renders only because
the kernel start is retried. (A report failing inside its notebook is tested in
test_review.py.)
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from bs4 import BeautifulSoup
from conftest import ROOT, ssdlab_cli

from ssdlab.discover import find_results
from ssdlab.report import chromium
from ssdlab.report.batch import (
    ReportJob,
    ReportOutcome,
    _comparison_job,
    _review_title,
    _slug,
)
from ssdlab.report.renderer import VEGALITE_MIME
from ssdlab.review.index import reports_section

DEMO = ROOT / "data" / "quick-demo"
KILL_FIRST_KERNEL = """
import os, sys
marker = os.environ.get("SSDLAB_TEST_KERNEL_MARKER")
if marker and any("ipykernel_launcher" in a for a in sys.orig_argv):
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        pass
    else:
        os._exit(1)
"""


@pytest.fixture(scope="module")
def results_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root")
    shutil.copytree(DEMO, root / "good")
    proc = ssdlab_cli(
        "import", DEMO / "steps", "--out", root / "vendor" / "imported", "--label", "imported demo"
    )
    assert proc.returncode == 0, proc.stderr
    (root / "broken").mkdir()
    (root / "broken" / "manifest.json").write_text("{}")
    return root


@pytest.fixture(scope="module")
def batch(results_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Output directory and stderr of ``ssdlab batch`` (exit status checked here)."""
    work = tmp_path_factory.mktemp("batch")
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(KILL_FIRST_KERNEL)
    env = {"PYTHONPATH": str(work / "site"), "SSDLAB_TEST_KERNEL_MARKER": str(work / "killed")}
    out = work / "out"
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        proc = ssdlab_cli(
            "batch",
            results_root,
            "-o",
            out,
            "-j",
            "2",
            "--figures",
            work / "figures",
            "--keep-notebook",  # the tests read what each notebook computed
        )
    finally:
        for key, value in saved.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value
    assert (work / "killed").exists()  # a kernel did die
    assert proc.returncode == 1, proc.stderr
    return out, proc.stderr


def test_find_results_skips_hidden_directories(results_root: Path) -> None:
    (results_root / ".ssdlab-catalog" / "x").mkdir(parents=True)
    shutil.copy(DEMO / "manifest.json", results_root / ".ssdlab-catalog" / "x")
    assert find_results(results_root) == [
        results_root / "broken",
        results_root / "good",
        results_root / "vendor" / "imported",
    ]


def test_failure_is_listed_and_the_rest_renders(
    batch: tuple[Path, str], results_root: Path
) -> None:
    out, stderr = batch
    lines = stderr.strip().splitlines()
    assert sorted(line.split(" (")[0] for line in lines if line.startswith("rendered")) == [
        "rendered comparison.html",
        "rendered good.html",
        "rendered index.html",
        "rendered vendor-imported.html",
    ]
    (failed,) = [line for line in lines if line.startswith("failed")]
    manifest = results_root / "broken" / "manifest.json"
    assert failed.startswith(f"failed broken.html: {manifest}: invalid manifest at run_id")
    assert lines[-1] == f"error: 1 of 5 reports failed; see {out / 'index.html'}"
    assert not (out / "broken.html").exists()

    index = nbformat.read(out / "index.executed.ipynb", as_version=4)
    injected = next(c for c in index.cells if "injected-parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(injected.source, namespace)
    reports = {r["name"]: r for r in namespace["reports"]}
    assert sorted(reports) == ["broken", "comparison", "good", "vendor-imported"]
    comparison = nbformat.read(out / "comparison.executed.ipynb", as_version=4)
    assert "broken" not in comparison.cells[1].source and "good" in comparison.cells[1].source


def test_index_links_every_report_and_draws_its_charts(
    batch: tuple[Path, str], artifacts: Path
) -> None:
    out, _ = batch
    dom = BeautifulSoup(chromium.dump_dom(out / "index.html"), "html.parser")
    rows = dom.select(".ssdlab-main table tbody tr")
    assert rows[0].select_one("td a") is None  # the failed review has no page
    assert rows[0].select_one("td").get_text() == "broken"
    links = [row.select_one("td a")["href"] for row in rows[1:4]]
    assert links == ["good.html", "vendor-imported.html", "comparison.html"]
    assert all((out / link).is_file() for link in links)
    assert [row.select("td")[1].get_text() for row in rows[:4]] == [
        "broken",
        "good",
        "vendor/imported",
        "2 runs",
    ]
    assert rows[0].select_one(".ssdlab-failed").get_text() == "failed"
    (failures,) = dom.select(".ssdlab-findings")[:1]
    assert "broken failed: " in failures.get_text()
    assert "invalid manifest at run_id" in failures.get_text()
    assert [a["href"] for a in rows[1].select("a")][1:] == ["../figures/good"]

    executed = nbformat.read(out / "index.executed.ipynb", as_version=4)
    charts = [
        o
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if VEGALITE_MIME in o.get("data", {})
    ]
    drawn = dom.select(".ssdlab-chart .vega-embed > svg.marks")
    assert len(charts) == 1 and len(drawn) == 1  # every test as a share of the best run
    assert len(drawn[0].select(".mark-rect path")) >= 8
    chromium.screenshot(out / "index.html", artifacts / "batch-index.png")


def test_figures_of_every_rendered_report(batch: tuple[Path, str]) -> None:
    out, _ = batch
    figures = out.parent / "figures"
    assert sorted(p.name for p in figures.iterdir()) == ["comparison", "good", "vendor-imported"]
    for report in figures.iterdir():
        executed = nbformat.read(out / f"{report.name}.executed.ipynb", as_version=4)
        charts = sum(
            VEGALITE_MIME in o.get("data", {})
            for c in executed.cells
            if c.cell_type == "code"
            for o in c.outputs
        )
        assert len(list(report.glob("*.png"))) == len(list(report.glob("*.svg"))) == charts > 0


def test_empty_root_is_an_error(tmp_path: Path) -> None:
    proc = ssdlab_cli("batch", tmp_path, "-o", tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path}: no ssdlab results directory found (no manifest.json below it)"
    ]


def test_index_links_are_relative_files_never_script(tmp_path: Path) -> None:
    """A results directory named ``javascript:alert(1)`` and a label holding ``<script>``:
    the index links to their report files, quoted, and shows the label as text."""
    root, out = tmp_path / "root", tmp_path / "out"
    manifest = json.loads((DEMO / "manifest.json").read_text())
    for name, label in (("javascript:alert(1)", "plain"), ("lab", "<script>alert(2)</script>")):
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(json.dumps(manifest | {"label": label}))
    out.mkdir()
    outcomes = []
    for results_dir in find_results(root):
        job = ReportJob(
            "review",
            (results_dir,),
            out / f"{_slug(results_dir, root)}.html",
            title=_review_title(results_dir),
        )
        job.output.write_text("<html></html>")
        outcomes.append(ReportOutcome(job, figures=[tmp_path / "figures" / job.name / "c.png"]))
    section = reports_section([o.entry(out, root) for o in outcomes])
    dom = BeautifulSoup(section.parts[0].data, "html.parser")
    hrefs = [a["href"] for a in dom.select("a")]
    assert hrefs == [
        "javascript%3Aalert%281%29.html",
        "../figures/javascript%3Aalert%281%29",
        "lab.html",
        "../figures/lab",
    ]
    assert all(urlsplit(h).scheme == "" for h in hrefs)
    assert (out / unquote(hrefs[0])).is_file()
    assert dom.select("script") == []
    assert "<script>alert(2)</script>: " in dom.select("a")[2].get_text()


@pytest.mark.slow
def test_report_of_a_fleet_root_renders_every_host(tmp_path: Path) -> None:
    """``ssdlab report ROOT`` of a ``--hosts`` run's root (fleet.json and a results directory
    per host) renders each host's review and an index, in the directory -o names."""
    root = tmp_path / "rack3"
    shutil.copytree(DEMO, root / "lab1-8765")
    members = [  # lab2 failed before it wrote anything: the index lists it all the same
        {"host": "lab1", "port": 8765, "target": "/t", "dir": "lab1-8765", "status": "complete"},
        {"host": "lab2", "port": 8765, "target": "/t", "dir": "lab2-8765", "status": "failed"}
        | {"error": "fio on lab2:8765 exited with status 1: No space left on device"},
    ]
    (root / "fleet.json").write_text(
        json.dumps({"suite": "quick", "members": members, "aggregate": []})
    )
    proc = ssdlab_cli("report", root, "-o", tmp_path / "site.html")
    assert proc.returncode == 0, proc.stderr
    index = tmp_path / "site" / "index.html"
    assert proc.stdout.strip() == str(index.resolve())
    assert "root of a fleet run (1 host): rendering its review and an index" in proc.stderr
    assert (index.parent / "lab1-8765.html").is_file()
    assert not list(index.parent.glob("*.executed.ipynb"))  # kept only on request
    failed = "lab2:8765 /t failed: fio on lab2:8765 exited with status 1: No space left on device"
    text = " ".join(BeautifulSoup(index.read_text(), "html.parser").get_text(" ").split())
    assert f"Fleet run rack3: suite quick on 2 hosts (1 did not complete: {failed})" in text
    assert f"lab2:8765 /t (lab2-8765) failed: no results to review ({failed[13:]})" in text


def test_titles_name_the_fleet_members_that_did_not_complete(tmp_path: Path) -> None:
    """A member that failed says so in its review's title and in the comparison's: its
    missing steps are no difference between drives."""
    assert _review_title(DEMO, "failed: lost the connection") == (
        f"{_review_title(DEMO)} (failed: lost the connection)"
    )
    job = _comparison_job([DEMO, DEMO], tmp_path, [("lab2:8765 /t", "failed: lost it")])
    assert job.title and job.title.endswith(
        " (lab2:8765 /t failed: lost it: steps missing there are no difference between drives)"
    )

"""Every kind of report at 1280 px in real headless Chromium: no text overflows its box, no
table is wider than the page outside a scroll container, and every section shows something
or says in one sentence why it cannot.

The results directories are each kind ssdlab makes: a native run of a built-in suite at small
scale (``quick``), a fleet member (``quick`` on a local fio server), an imported fio tree (the
``quick`` run's fio output) and an ACT-only directory. One ``ssdlab batch`` renders each
review once, the comparison of all of them and the index; one Chromium session then loads
every page. The reviews of the PTS suites and of ``enterprise-review`` pass the same checks
(:mod:`screens`) in ``test_pts_report.py``, on the runs that file makes.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import screens
from conftest import ROOT, ssdlab_cli

from ssdlab.report import chromium

FIXTURES = ROOT / "tests" / "fixtures"
#: results directory under the batch root -> how it is made
RUNS: dict[str, tuple[str, ...]] = {
    "quick": ("run", "quick", "--scale", "0.05", "--label", "Quick drive"),
    "act-only": (
        "act", "import", FIXTURES / "act" / "act_storage_1x_30s.log", "--slice", "10",
        "--label", "ACT drive",
    ),
}  # fmt: skip
#: the review of each, plus the fleet member's
REVIEWS = (*RUNS, "imported", "fleet")


#: seconds a starting ``fio --server`` may take to listen (bounds a hang only)
SERVER_START_S = 120


def _answers(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def fio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local ``fio --server`` for a one-host fleet run."""
    port = _free_port()
    proc = subprocess.Popen(
        ["fio", f"--server=ip:127.0.0.1,{port}"],
        cwd=tmp_path_factory.mktemp("fio-server"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + SERVER_START_S
        while not _answers(port):
            if proc.poll() is not None:
                pytest.fail(
                    f"fio --server on 127.0.0.1:{port} exited with status {proc.returncode}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"fio --server on 127.0.0.1:{port}: no answer in {SERVER_START_S} s")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def results_root(tmp_path_factory: pytest.TempPathFactory, fio_server: str) -> Path:
    """One results directory of each kind under one root."""
    root = tmp_path_factory.mktemp("screens") / "results"
    for name, args in RUNS.items():
        out = root / name
        proc = ssdlab_cli(*args, "--out", out, timeout=600)
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
    steps = root / "quick" / "steps"
    proc = ssdlab_cli("import", steps, "--out", root / "imported", "--label", "Imported drive")
    assert proc.returncode == 0, proc.stderr
    fleet = root / "fleet"
    proc = ssdlab_cli(
        "run", "quick", "--hosts", fio_server, "--scale", "0.05", "--out", fleet,
        "--label", "Fleet drive", timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    members = [p.parent for p in fleet.rglob("manifest.json") if p.parent != fleet]
    assert members, f"no fleet member under {fleet}"
    return root


@pytest.fixture(scope="session")
def batch(results_root: Path) -> tuple[Path, float]:
    """Every review, the comparison of all and the index, rendered once by ``ssdlab batch``
    (without --keep-notebook); the seconds it took."""
    out = results_root.parent / "reports"
    start = time.monotonic()
    proc = ssdlab_cli("batch", results_root, "-o", out, "-j", "2", timeout=1200)
    assert proc.returncode == 0, proc.stderr
    return out, time.monotonic() - start


@pytest.fixture(scope="session")
def pages(batch: tuple[Path, float]) -> dict[str, Path]:
    out, _ = batch
    found = {p.stem: p for p in sorted(out.glob("*.html"))}
    reviews = [name for name in found if name not in ("index", "comparison")]
    assert {"index", "comparison"} <= set(found) and len(reviews) == len(REVIEWS), found
    return found


@pytest.fixture(scope="session")
def layout(pages: dict[str, Path], batch: tuple[Path, float]) -> dict[str, dict[str, Any]]:
    start = time.monotonic()
    found = chromium.layout_problems(list(pages.values()))
    seconds = time.monotonic() - start
    print(f"\nbatch of {len(pages)} reports: {batch[1]:.0f} s; layout check: {seconds:.0f} s")
    return dict(zip(pages, found, strict=True))


def test_every_kind_renders_and_keeps_no_notebook(batch: tuple[Path, float], pages) -> None:
    out, _ = batch
    assert not list(out.glob("*.ipynb")), "executed notebooks are kept only on request"
    assert "scaled run: 0.05" in pages["quick"].read_text(encoding="utf-8")


def _kinds() -> list[str]:
    return ["index", "comparison", *REVIEWS]


def _page(kind: str, layout: dict[str, dict[str, Any]]) -> dict[str, Any]:
    (page,) = [v for k, v in layout.items() if k == kind or k.startswith(f"{kind}-")]
    return page


@pytest.mark.parametrize("kind", _kinds())
def test_no_text_overflows_at_1280px(kind: str, layout: dict[str, dict[str, Any]]) -> None:
    screens.assert_fits(_page(kind, layout))


@pytest.mark.parametrize("kind", _kinds())
def test_every_section_shows_something_or_says_why_not(
    kind: str, layout: dict[str, dict[str, Any]]
) -> None:
    screens.assert_sections_explained(_page(kind, layout))


def test_act_only_review_shows_its_trials_and_says_what_is_missing(layout) -> None:
    sections = screens.shown(_page("act-only", layout))
    act = sections["ACT: Aerospike Certification Tool"]
    assert "svg" in act["content"] and "tr" in act["content"] and not act["missing"]
    assert "All results" not in sections  # a section without data is not shown
    assert "tr" in sections["Test setup"]["content"]  # the facts tables are never empty


def test_wide_tables_fit_or_scroll_in_their_box(layout: dict[str, dict[str, Any]]) -> None:
    """Tables wider than the column scroll inside their own box (reported, not failed)."""
    scrolled = {k: v["scrolled"] for k, v in layout.items() if v["scrolled"]}
    print(f"tables scrolling sideways at 1280 px: {scrolled or 'none'}")
    for page in layout.values():
        assert all(t["width"] > t["box"] for t in page["scrolled"])


def test_the_layout_check_sees_overflow(tmp_path: Path) -> None:
    """A control page: text wider than its box, a table wider than the page outside any
    scroll container, a chart without a data mark and a section with nothing in it are all
    reported."""
    chart = (
        "<div class='ssdlab-chart'><svg class='marks'><g class='mark-text role-title'>"
        "<text>{title}</text></g><g class='mark-line role-mark'>{marks}</g></svg></div>"
    )
    page = tmp_path / "control.html"
    page.write_text(
        "<!DOCTYPE html><body><div class='ssdlab-page'><main class='ssdlab-main'>"
        "<h2>Full</h2><div style='width:100px;white-space:nowrap'>" + "overflowing " * 20
        + "</div>" + chart.format(title="Drawn", marks="<path d='M0,0L9,9'></path>")
        + chart.format(title="No data", marks="")
        + "<h2>Empty</h2><table style='width:3000px'><tbody></tbody></table>"
        "</main></div></body>"
    )  # fmt: skip
    (found,) = chromium.layout_problems([page])
    assert [o["client"] for o in found["overflows"] if o["element"] == "div"] == [100]
    assert [t["width"] for t in found["wide"]] == [3000]
    assert found["empty"] == [{"text": "No data"}]
    assert found["sections"] == [
        {"heading": "Full", "content": ["svg", "svg"], "missing": []},
        {"heading": "Empty", "content": [], "missing": []},
    ]


def _path(kind: str, pages: dict[str, Path]) -> Path:
    (path,) = [v for k, v in pages.items() if k == kind or k.startswith(f"{kind}-")]
    return path


@pytest.mark.parametrize("kind", _kinds())
def test_no_console_warning_or_error_while_charts_draw(kind: str, pages) -> None:
    """Vega says nothing: no chart or layer is drawn from no rows (``Infinite extent``)."""
    assert screens.console_messages(_path(kind, pages)) == []


@pytest.mark.parametrize("width", [390, 1280])
def test_nothing_is_clipped_without_a_visible_scroll_bar(width: int, pages) -> None:
    for kind, found in zip(pages, screens.clipped(list(pages.values()), width), strict=True):
        print(kind, width, len(found), "scrolling")
        screens.assert_nothing_clipped(found)


def test_legends_name_only_what_the_data_holds(pages) -> None:
    for kind, path in pages.items():
        for spec in screens.chart_specs(path):
            for field, domain, values in screens.legend_domains(spec):
                assert set(domain) <= values, (kind, field, domain, values)


def test_each_table_writes_latencies_in_one_unit(pages) -> None:
    for kind, path in pages.items():
        for caption, units in screens.table_units(path):
            assert len(units) <= 1, (kind, caption, units)


@pytest.mark.parametrize("width", [390, 1280])
def test_screenshots_of_the_demo_review_and_the_comparison(
    width: int, pages, artifacts: Path
) -> None:
    """The quick review and the comparison at a phone's and a laptop's width, kept in
    tests/artifacts to be looked at."""
    for kind in ("quick", "comparison"):
        png = chromium.screenshot(_path(kind, pages), artifacts / f"{kind}-{width}px.png", width)
        assert png.read_bytes().startswith(b"\x89PNG")

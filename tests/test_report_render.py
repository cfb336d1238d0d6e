"""Reports end to end: papermill runs a notebook, nbconvert writes the HTML, Chromium loads it.

Nothing is mocked. One report is rendered per module and shared; Chromium runs with its
network cut off, so every chart must be drawn from what the HTML file carries.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

import ssdlab.report
from ssdlab.errors import ReportError
from ssdlab.report import chromium
from ssdlab.report.execute import KernelStartError
from ssdlab.report.renderer import VEGALITE_MIME

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
TITLE = "Test drive: tiny suite"
CODE_MARKER = "code_marker_4c1d9e"  # appears in a code cell's source only, never in an output
USER_LINK = "https://example.com/fio-docs"
HEADINGS = {"Throughput": 2, "Latency": 2, "Tail latency": 3, "Summary table": 2}
N_CHARTS = 3


def _notebook(*, failing: bool = False) -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    parameters = code("rows = 4")
    parameters.metadata["tags"] = ["parameters"]
    cells = [
        md(f"An introduction with a [link to the fio docs]({USER_LINK})."),
        parameters,
        code(
            "import altair as alt\n"
            "import polars as pl\n"
            "import ssdlab.report\n\n"
            "ssdlab.report.enable_renderer()\n"
            f"{CODE_MARKER} = pl.DataFrame({{'step': [f's{{i}}' for i in range(rows)],\n"
            "    'iops': [1000.0 * (i + 1) for i in range(rows)],\n"
            "    'p99_us': [80.0 + 15 * i for i in range(rows)]})\n"
            f"frame = {CODE_MARKER}.to_pandas()"
        ),
        md("## Throughput\nIOPS per step."),
        code(
            "alt.Chart(frame).mark_bar().encode(\n"
            "    x='iops:Q', y='step:N',\n"
            "    tooltip=[alt.Tooltip('step:N', title='Step'),\n"
            "             alt.Tooltip('iops:Q', title='IOPS')])"
        ),
        md("## Latency"),
        code(
            "base = alt.Chart(frame).encode(x='step:N', y='p99_us:Q')\n"
            "base.mark_line() + base.mark_point(filled=True)"
        ),
        md("### Tail latency"),
        code(
            "from IPython.display import Markdown, display\n\n"
            "display(Markdown('**p99** stays *below* 200 µs.'))\n"
            "display(alt.Chart(frame).mark_area().encode(x='step:N', y='p99_us:Q'))"
        ),
        md("## Summary table"),
        code(f"{CODE_MARKER}.head(3)"),
    ]
    if failing:
        cells.insert(8, code("raise RuntimeError('disk vanished')"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory holding the rendered report ``review.html`` and its executed notebook."""
    work = tmp_path_factory.mktemp("report")
    nbformat.write(_notebook(), work / "review.ipynb")
    out = work / "out"
    path = ssdlab.report.render_report(
        work / "review.ipynb", {"rows": 6}, out / "review.html", title=TITLE, cwd=work
    )
    assert path == out / "review.html"
    return out


@pytest.fixture(scope="module")
def html(rendered: Path) -> str:
    return (rendered / "review.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dom(rendered: Path) -> BeautifulSoup:
    return BeautifulSoup(chromium.dump_dom(rendered / "review.html"), "html.parser")


def test_one_html_file_draws_every_chart(rendered: Path, dom: BeautifulSoup) -> None:
    assert sorted(p.name for p in rendered.iterdir()) == ["review.executed.ipynb", "review.html"]
    executed = nbformat.read(rendered / "review.executed.ipynb", as_version=4)
    nbformat.validate(executed)
    charts = [
        out
        for cell in executed.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if VEGALITE_MIME in out.get("data", {})
    ]
    assert len(charts) == N_CHARTS
    assert all({"image/svg+xml", "text/plain"} <= set(out.data) for out in charts)
    drawn = dom.select(".ssdlab-chart .vega-embed > svg.marks")
    assert len(drawn) == len(charts)
    assert all(svg.select("path") for svg in drawn)


def test_report_makes_no_network_request(rendered: Path, tmp_path: Path) -> None:
    assert chromium.network_requests(rendered / "review.html") == []
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png" alt="">')
    assert chromium.network_requests(control) == ["http://example.invalid/x.png"]


def test_no_external_urls_in_markup(html: str) -> None:
    linked = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(https?://[^"'\s>]+)""", html, re.I)
    assert linked == [USER_LINK]
    assert not re.search(r"""(?:@import|url\()\s*["']?\s*https?:""", html, re.I)
    assert html.count("window.vegaEmbed=") == 1  # the vega bundle, inlined once


def test_inputs_hidden_title_and_contents(html: str, dom: BeautifulSoup) -> None:
    assert CODE_MARKER not in html
    assert "In&nbsp;[" not in html
    assert not dom.select(".jp-InputPrompt, .jp-OutputPrompt, .jp-CodeMirrorEditor")
    assert dom.title is not None and dom.title.string == TITLE
    assert dom.select_one("h1.ssdlab-title").get_text(strip=True) == TITLE
    headings = {
        h.get_text(strip=True).rstrip("¶"): (int(h.name[1]), h["id"])
        for h in dom.select(".ssdlab-main :is(h2, h3)")
    }
    assert {text: level for text, (level, _) in headings.items()} == HEADINGS
    toc = [(a.get_text(strip=True), a["href"]) for a in dom.select("nav.ssdlab-toc a")]
    assert toc == [(text, f"#{anchor}") for text, (_, anchor) in headings.items()]
    tables = dom.select(".ssdlab-main table")
    assert len(tables) == 1 and "s2" in tables[0].get_text()


def test_chart_tooltips_work_offline(rendered: Path, html: str, tmp_path: Path) -> None:
    """Move the pointer over a bar: vega's default tooltip handler (in the bundle) shows it."""
    probe = """<script>
    addEventListener("load", () => setTimeout(() => {
      const bars = document.querySelectorAll(".vega-embed svg.marks .mark-rect path");
      const bar = bars[bars.length - 1], box = bar.getBoundingClientRect();
      bar.dispatchEvent(new PointerEvent("pointermove", {bubbles: true,
        clientX: box.x + box.width / 2, clientY: box.y + box.height / 2}));
    }, 500));
    </script>"""
    end = html.rindex("</body>")
    page = tmp_path / "tooltip.html"
    page.write_text(html[:end] + probe + html[end:], encoding="utf-8")
    tip = BeautifulSoup(chromium.dump_dom(page), "html.parser").select_one("#vg-tooltip-element")
    assert tip is not None and "visible" in tip["class"]
    cells = [td.get_text() for td in tip.select("td")]
    assert cells == ["Step", "s5", "IOPS", "6000"]


def test_failing_cell_names_section_and_keeps_partial_report(tmp_path: Path) -> None:
    nbformat.write(_notebook(failing=True), tmp_path / "broken.ipynb")
    output = tmp_path / "broken.html"
    with pytest.raises(ReportError) as caught:
        ssdlab.report.render_report(tmp_path / "broken.ipynb", {}, output, title=TITLE)
    message = str(caught.value)
    partial_html, partial_ipynb = (
        tmp_path / "broken.partial.html",
        tmp_path / "broken.partial.ipynb",
    )
    assert 'failed in section "Tail latency"' in message
    assert "RuntimeError: disk vanished" in message
    assert str(partial_html) in message and str(partial_ipynb) in message
    assert partial_html.is_file() and partial_ipynb.is_file() and not output.exists()
    partial = partial_html.read_text(encoding="utf-8")
    assert "disk vanished" in partial and "svg+xml" in partial


def test_screenshot_and_pdf(rendered: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = chromium.screenshot(rendered / "review.html", ARTIFACTS / "report.png")
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height > 1000
    pdf = chromium.print_pdf(rendered / "review.html", ARTIFACTS / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) >= 1


def _self_killing_notebook(marker: Path, *, every_time: bool) -> nbformat.NotebookNode:
    """A kernel that SIGKILLs itself, as the out-of-memory killer would: on the first run
    only (the marker file records that it happened), or on every run."""
    kill = "os.kill(os.getpid(), signal.SIGKILL)"
    code = f"import os, signal, pathlib\nmarker = pathlib.Path({str(marker)!r})\n" + (
        kill if every_time else f"if not marker.exists():\n    marker.touch()\n    {kill}"
    )
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# Killed"), nbformat.v4.new_code_cell(code)]
    )


def test_kernel_killed_once_is_retried(tmp_path: Path) -> None:
    """A loaded machine's OOM killer ends a kernel: the report runs again and succeeds."""
    marker = tmp_path / "killed-once"
    nbformat.write(_self_killing_notebook(marker, every_time=False), tmp_path / "nb.ipynb")
    html = ssdlab.report.render_report(tmp_path / "nb.ipynb", {}, tmp_path / "nb.html")
    assert marker.exists() and html.is_file()
    assert not (tmp_path / "nb.partial.html").exists()


def test_kernel_killed_every_time_says_how(tmp_path: Path) -> None:
    nbformat.write(_self_killing_notebook(tmp_path / "m", every_time=True), tmp_path / "nb.ipynb")
    with pytest.raises(KernelStartError) as caught:
        ssdlab.report.render_report(tmp_path / "nb.ipynb", {}, tmp_path / "nb.html")
    assert "kernel was killed by SIGKILL" in str(caught.value)
    assert "out-of-memory killer" in str(caught.value)
    assert not list(tmp_path.glob("nb.*.ipynb")) and not (tmp_path / "nb.html").exists()

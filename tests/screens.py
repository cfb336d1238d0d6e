"""The checks every report page must pass in Chromium at 1280 px, on what
:func:`ssdlab.report.chromium.layout_problems` found in it: no text overflows its box, no
table is wider than the page outside a scroll container, no chart is drawn without data, and
every section shows something or says in one sentence why it cannot."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup

from ssdlab.report import chromium

Page = dict[str, Any]
#: where one sentence ends and another begins: a full stop (not an ellipsis), a capital
_NEXT_SENTENCE = re.compile(r"(?<!\.)\.\s+[A-Z]")


def assert_fits(page: Page) -> None:
    """No text overflows its box and no table sticks out of the page."""
    assert page["overflows"] == [], page["overflows"]
    assert page["wide"] == [], page["wide"]


def assert_sections_explained(page: Page) -> None:
    """Every section has content or one sentence (ending with a full stop) saying why not,
    and every chart draws data."""
    assert page["empty"] == [], page["empty"]
    sections = page["sections"]
    assert sections, "no section"
    for section in sections:
        name, content, missing = section["heading"], section["content"], section["missing"]
        assert content or missing, f"{name}: empty"
        for sentence in missing:
            assert sentence.endswith(".") and not _NEXT_SENTENCE.search(sentence), (name, sentence)


def shown(page: Page) -> dict[str, Page]:
    """The page's sections by heading."""
    return {s["heading"]: s for s in page["sections"]}


def assert_shows(page: Page, headings: list[str]) -> None:
    """These sections show content (a chart or a table row) and no missing-data note."""
    sections = shown(page)
    for heading in headings:
        section = sections[heading]
        drawn = {"svg", "tr"} & set(section["content"])
        assert drawn and not section["missing"], (heading, section)


#: run in each page at a width: every element (outside charts) whose content is wider than
#: its box, with whether it scrolls and the scroll bar colour it shows
_CLIPPED = r"""
function ssdlabClipped(doc) {
  const win = doc.defaultView, out = [];
  for (const el of doc.querySelectorAll(".ssdlab-page *")) {
    if (el.closest("svg, script, style, .ssdlab-vega")) continue;
    const style = win.getComputedStyle(el);
    if (["inline", "none", "contents"].includes(style.display)) continue;
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
      out.push({element: el.tagName.toLowerCase() + "." + String(el.className).split(" ")[0],
                text: (el.textContent || "").trim().slice(0, 60), overflow: style.overflowX,
                bar: style.scrollbarColor});
  }
  return out;
}
"""


def clipped(html_paths: list[Path], width: int) -> list[list[dict[str, Any]]]:
    """Per page at ``width`` px: the elements whose content is wider than their box."""
    with chromium._profile() as profile:
        probe = profile / "clipped.html"
        frames = "".join(
            f"<iframe src='{chromium._url(p)}' style='border:0;width:{width}px;height:900px'>"
            "</iframe>"
            for p in html_paths
        )
        probe.write_text(
            f"<!DOCTYPE html><meta charset='utf-8'><body style='margin:0'>{frames}"
            f"<pre id='out'></pre><script>{_CLIPPED}\nonload = () => setTimeout(() => {{"
            " const found = [...document.querySelectorAll('iframe')].map("
            "f => ssdlabClipped(f.contentDocument));"
            " document.getElementById('out').textContent = JSON.stringify(found); }, 3000);"
            "</script></body>",
            encoding="utf-8",
        )
        args = [
            f"--virtual-time-budget={chromium.RENDER_BUDGET_MS * 3}",
            "--allow-file-access-from-files",
            f"--window-size={width + 40},1000",
            "--dump-dom",
            probe.as_uri(),
        ]
        dom = chromium._run(args, profile, timeout_s=240, what="finding clipped elements")
    start = dom.index('<pre id="out">') + len('<pre id="out">')
    return json.loads(html.unescape(dom[start : dom.index("</pre>", start)]))


def assert_nothing_clipped(found: list[dict[str, Any]]) -> None:
    """Whatever is wider than its box scrolls, with a scroll bar drawn at all times (a
    colour of its own, not the overlay that shows only while scrolling)."""
    hidden = [f for f in found if f["overflow"] not in ("auto", "scroll")]
    assert hidden == [], hidden
    overlay = [f for f in found if f["bar"] in ("", "auto")]
    assert overlay == [], overlay


#: a browser console line Chromium logs with --enable-logging=stderr
_CONSOLE = re.compile(r':CONSOLE(?:\(\d+\)|:\d+)\] "(.*)", source: ')


def console_messages(html_path: Path) -> list[str]:
    """What the page wrote to the browser console while loading and drawing its charts
    (vega's warnings such as ``Infinite extent for field``, errors)."""
    url = chromium._url(html_path)
    with chromium._profile() as profile:
        cmd = [
            chromium.find_chromium(),
            *chromium.BASE_FLAGS,
            f"--user-data-dir={profile / 'profile'}",
            "--enable-logging=stderr",
            f"--virtual-time-budget={chromium.RENDER_BUDGET_MS}",
            "--dump-dom",
            url,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [m.group(1) for m in _CONSOLE.finditer(proc.stderr)]


def chart_specs(html_path: Path) -> list[dict[str, Any]]:
    """The Vega-Lite spec of every chart embedded in a report."""
    soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
    return [json.loads(s.string) for s in soup.select("script.ssdlab-spec")]


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def legend_domains(spec: dict[str, Any]) -> list[tuple[str, list[str], set[Any]]]:
    """(field, explicit domain, the field's values in the chart's data) of every nominal
    encoding with a domain given as a list of names."""
    rows = [r for data in spec.get("datasets", {}).values() for r in data]
    found = []
    for node in _walk(spec):
        scale, field = node.get("scale"), node.get("field")
        if node.get("type") != "nominal" or not isinstance(scale, dict) or not field:
            continue
        domain = scale.get("domain")
        if isinstance(domain, list) and all(isinstance(d, str) for d in domain):
            found.append((field, domain, {r.get(field) for r in rows}))
    return found


def tooltip_fields(spec: dict[str, Any]) -> set[str]:
    """The fields every tooltip of a chart names."""
    fields: set[str] = set()
    for node in _walk(spec):
        tips = node.get("tooltip") if isinstance(node, dict) else None
        for tip in tips if isinstance(tips, list) else [tips] if isinstance(tips, dict) else []:
            if isinstance(tip, dict) and "field" in tip:
                fields.add(tip["field"])
    return fields


#: a latency unit written in a table heading or after a figure in a cell (seconds are left
#: out: a table gives durations in them)
_LATENCY_UNIT = re.compile(r"(?<![\w/])(ns|µs|ms)(?![\w/])")


def table_units(html_path: Path) -> list[tuple[str, set[str]]]:
    """(caption, latency units its headings and figures name) of every report table."""
    soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
    found = []
    for table in soup.select(".ssdlab-main table"):
        caption = table.find_previous("p", class_="ssdlab-caption")
        units = {m.group(1) for cell in table.select("th, td")
                 for m in _LATENCY_UNIT.finditer(cell.get_text())}  # fmt: skip
        found.append((caption.get_text() if caption else "", units))
    return found

"""Convert an executed report notebook into one self-contained, offline HTML file."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import vl_convert as vlc
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbconvert.preprocessors import Preprocessor
from traitlets.config import Config

from ..atomic import write_error
from ..errors import ReportError, SsdlabError
from ..resources import templates_dir
from ..review.section import MISSING_KEY, UNASKED_KEY
from ._files import remove, write_file
from .renderer import VEGALITE_MIME, chart_title, vegalite_version

TEMPLATE = "ssdlab"
TOC_LEVELS = 3
BUNDLE_MARKER = "window.vegaEmbed="


@dataclass(frozen=True)
class Heading:
    """A markdown heading as nbconvert renders it: level, anchor id and text."""

    level: int
    anchor: str
    text: str


class _HeadingParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[Heading] = []
        self._open: tuple[int, str] | None = None
        self._text: list[str] = []
        self._in_anchor_link = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._open, self._text = (int(tag[1]), attributes.get("id") or ""), []
        elif tag == "a" and attributes.get("class") == "anchor-link":
            self._in_anchor_link = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._in_anchor_link = False
        elif self._open and tag == f"h{self._open[0]}":
            level, anchor = self._open
            self.headings.append(Heading(level, anchor, " ".join("".join(self._text).split())))
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open and not self._in_anchor_link:
            self._text.append(data)


def markdown_headings(source: str) -> list[Heading]:
    """Headings of a markdown cell, with the anchor ids nbconvert gives them."""
    parser = _HeadingParser()
    parser.feed(markdown2html_mistune(source))
    return parser.headings


def notebook_headings(nb: nbformat.NotebookNode) -> list[Heading]:
    """Headings of all markdown cells, in order."""
    return [
        heading
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for heading in markdown_headings(cell.source)
    ]


#: the closing line's opening, unless the notebook's metadata ``ssdlab.not_shown`` gives one
NOT_SHOWN = "Not shown, as there is no data for them"


def _is_missing(cell: nbformat.NotebookNode) -> bool:
    """A code cell whose displays are all sections shown as missing (none else, no error)."""
    outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
    return bool(outputs) and all(
        o.output_type == "display_data" and MISSING_KEY in o.get("metadata", {}) for o in outputs
    )


def _topic(heading: str) -> str:
    """A section heading as a list item: ``Steady state`` -> ``steady state``, ``ACT: ...``
    -> ``ACT``, ``QoS targets`` kept."""
    name = heading.split(":")[0].strip()
    first = name.split(" ")[0]
    return name[:1].lower() + name[1:] if first[1:] == first[1:].lower() else name


def _unasked(cell: nbformat.NotebookNode) -> list[str]:
    """What a missing section's cell says of sections nobody asked for (how to ask)."""
    return [o.metadata[MISSING_KEY] for o in cell.outputs if o.metadata.get(UNASKED_KEY)]


def hide_missing(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` without the sections that have no data (a cell showing only missing-data notes,
    and the markdown cells before it: heading and introduction), and a closing markdown
    cell: one line naming them (``Not measured in this run: steady state, power.``); a
    section nobody asked for (a QoS section without a profile) is named apart, with how to
    ask for it (``Not asked for: QoS targets. No QoS profile given: ...``)."""
    kept: list[nbformat.NotebookNode] = []
    hidden: list[str] = []
    unasked: list[str] = []
    for cell in nb.cells:
        if not _is_missing(cell):
            kept.append(cell)
            continue
        intro: list[nbformat.NotebookNode] = []
        while kept and kept[-1].cell_type == "markdown":
            intro.insert(0, kept.pop())
        headings = [h.text for c in intro for h in markdown_headings(c.source)]
        if not headings:
            continue
        if how := _unasked(cell):
            unasked.append(f"Not asked for: {_topic(headings[0])}. {' '.join(how)}")
        else:
            hidden.append(_topic(headings[0]))
    if not hidden and not unasked:
        return nb
    opening = nb.metadata.get("ssdlab", {}).get("not_shown", NOT_SHOWN)
    lines = [f"{opening}: {', '.join(hidden)}."] if hidden else []
    closing = nbformat.v4.new_markdown_cell("\n\n".join([*lines, *unasked]))
    return nbformat.from_dict({**nb, "cells": [*kept, closing]})


def _has_vegalite(nb: nbformat.NotebookNode) -> bool:
    return any(
        VEGALITE_MIME in output.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ssdlab"


def vega_bundle() -> str:
    """The Vega/Vega-Lite/vega-embed bundle (defines ``vegaEmbed``), kept in the user's cache
    directory: vl-convert takes seconds to build it in every new process."""
    version = vegalite_version() or "latest"
    path = _cache_dir() / f"vega-bundle-{vlc.__version__}-vl{version}.js"
    with contextlib.suppress(OSError):
        cached = path.read_text(encoding="utf-8")
        if BUNDLE_MARKER in cached:
            return cached
    bundle = vlc.javascript_bundle(vl_version=vegalite_version())
    with contextlib.suppress(SsdlabError):  # only a cache
        write_file(path, bundle.encode("utf-8"))
    return bundle


class VegaBundlePreprocessor(Preprocessor):
    """Put the Vega/Vega-Lite/vega-embed bundle into the resources if a chart needs it."""

    def preprocess(
        self, nb: nbformat.NotebookNode, resources: dict[str, Any]
    ) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
        if _has_vegalite(nb):
            resources["ssdlab_vega_bundle"] = vega_bundle().replace("</script", "<\\/script")
        return nb, resources


class TocPreprocessor(Preprocessor):
    """Put the table of contents (h1 to h3 of markdown cells) into the resources."""

    def preprocess(
        self, nb: nbformat.NotebookNode, resources: dict[str, Any]
    ) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
        headings = notebook_headings(nb)
        resources["ssdlab_toc"] = [h for h in headings if h.level <= TOC_LEVELS]
        resources["ssdlab_has_h1"] = any(h.level == 1 for h in headings)
        return nb, resources


def _exporter() -> HTMLExporter:
    config = Config()
    config.HTMLExporter.update(
        template_name=TEMPLATE,
        extra_template_basedirs=[str(templates_dir())],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    return HTMLExporter(config=config)


def export_html(nb: nbformat.NotebookNode, output_path: Path | str, *, title: str) -> Path:
    """Write ``nb`` as one self-contained HTML file (inputs hidden); return its path.

    The file is written to a temporary file beside ``output_path`` and renamed over it; a
    write that fails is one line naming it.
    """
    output_path = Path(output_path)
    if not (templates_dir() / TEMPLATE / "conf.json").is_file():
        raise ReportError(f"report template not found under {templates_dir()}")
    try:
        shown = hide_missing(nb)
        html, _ = _exporter().from_notebook_node(shown, resources={"ssdlab_title": title})
    except Exception as exc:
        raise ReportError(f"converting the report to HTML failed: {exc}") from exc
    write_file(output_path, html.encode("utf-8"))
    return output_path


def _slug(text: str, limit: int = 60) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in slug.split("-") if part)[:limit].rstrip("-") or "chart"


def export_figures(
    nb: nbformat.NotebookNode, out_dir: Path | str, *, scale: float = 2
) -> list[Path]:
    """Write every chart of an executed report as SVG and PNG (``scale`` x pixels) into
    ``out_dir``, named ``NN-<title>``; figures an earlier export left there are removed."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(out_dir, exc) from None
    for old in [*out_dir.glob("[0-9][0-9]-*.svg"), *out_dir.glob("[0-9][0-9]-*.png")]:
        remove(old)
    outputs = [
        output.data
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if VEGALITE_MIME in output.get("data", {})
    ]
    written = []
    for number, data in enumerate(outputs, start=1):
        spec = data[VEGALITE_MIME]
        stem = f"{number:02d}-{_slug(chart_title(spec) or 'chart')}"
        svg = data.get("image/svg+xml") or vlc.vegalite_to_svg(spec, vl_version=vegalite_version())
        png = vlc.vegalite_to_png(spec, scale=scale, vl_version=vegalite_version())
        for path, content in (
            (out_dir / f"{stem}.svg", svg.encode()),
            (out_dir / f"{stem}.png", png),
        ):
            write_file(path, content)
            written.append(path)
    return written

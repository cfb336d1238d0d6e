"""The batch index's sections: the table of rendered reports and an overview of the runs."""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

import polars as pl

from .compare import compare_summary_section, load_comparison
from .section import Registry, Section, table

NOTEBOOK = "batch_index"
SECTIONS = Registry(NOTEBOOK)


def _link(path: str | None, text: str) -> str:
    """A link to the relative ``path``, or the escaped text when there is nothing (or nothing
    relative) to link to. The target is URL-quoted, ``:`` included, so a directory named
    ``javascript:alert(1)`` stays a file name and never reads as a URL scheme."""
    if not path or PurePath(path).is_absolute() or PurePath(path).drive:
        return html.escape(text)
    href = urllib.parse.quote(PurePath(path).as_posix(), safe="/")
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


@SECTIONS
def reports_section(reports: list[dict[str, Any]]) -> Section:
    """The index's table of reports (entries as :meth:`ssdlab.report.batch.ReportOutcome.entry`
    gives them): links, PDFs, figures, and the errors of failed ones."""
    if not reports:
        return Section(missing="No report was rendered.")
    failed = [r for r in reports if r["error"]]
    rows = [
        {
            "Report": _link(r["html"] or r["partial"], r["title"])
            + ("" if r["html"] else " (partial)" if r["partial"] else ""),
            "Results": html.escape(
                r["inputs"][0] if len(r["inputs"]) == 1 else f"{len(r['inputs'])} runs"
            ),
            "PDF": _link(r["pdf"], "PDF") if r["pdf"] else "",
            "Figures": _link(r["figures"], f"{r['charts']} charts") if r["figures"] else "",
            "Status": '<span class="ssdlab-ok">rendered</span>'
            if not r["error"]
            else '<span class="ssdlab-failed">failed</span>',
            "Time": f"{r['seconds']:.1f} s",
        }
        for r in reports
    ]
    frame = pl.DataFrame(rows)
    sentences = [f"{len(reports) - len(failed)} of {len(reports)} reports rendered."]
    for r in failed:
        where = ", ".join(r["inputs"])
        name = r["title"] if r["title"] == where else f"{r['title']} ({where})"
        sentences.append(f"{name} failed: {r['error']}")
    return Section(
        sentences,
        [
            table(
                frame,
                None,
                markup=("Report", "Results", "PDF", "Figures", "Status"),
                numeric=("Time",),
            )
        ],
    )


@SECTIONS
def overview_section(results_dirs: Sequence[str | Path]) -> Section:
    """The comparison summary of several runs (the batch index's overview)."""
    if len(results_dirs) < 2:
        return Section(missing="Nothing to compare: fewer than two reviews rendered.")
    return compare_summary_section(load_comparison(results_dirs))

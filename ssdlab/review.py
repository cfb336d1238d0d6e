"""The drive review report: what its notebook displays, and rendering it to HTML."""

from __future__ import annotations

from pathlib import Path

from IPython.display import HTML

from .manifest import Manifest
from .resources import notebook_path
from .results import Results
from .tables import html_table, run_facts, summary_view

REVIEW_NOTEBOOK = "drive_review"


def setup(results: Results) -> HTML:
    """Test setup table: drive/target, host, fio and ssdlab versions, timing."""
    return HTML(html_table(run_facts(results.manifest)))


def summary(results: Results) -> HTML:
    """The summary table in display units."""
    return HTML(html_table(summary_view(results.summary)))


def render_review(results_dir: Path, output: Path, *, title: str | None = None) -> Path:
    """Execute the review notebook on ``results_dir`` and write one offline HTML file."""
    from .report import render_report

    manifest = Manifest.load(results_dir)  # fail fast, before a kernel starts
    title = title or f"{manifest.label}: {manifest.suite} suite"
    params = {"results_dir": str(results_dir.resolve()), "title": title}
    return render_report(notebook_path(REVIEW_NOTEBOOK), params, output, title=title)

"""The fleet endurance report: a SMART history rendered to one offline HTML file."""

from __future__ import annotations

from pathlib import Path

from ..resources import notebook_path
from ..review.fleet_endurance import NOTEBOOK
from ..telemetry.history import scan_smart_history
from . import render_report


def render_fleet_endurance(history_dir: Path, output: Path, *, title: str | None = None) -> Path:
    """Execute the fleet endurance notebook on a directory ``ssdlab smart import`` wrote and
    write one offline HTML file (the executed notebook is kept beside it, as for a review)."""
    scan_smart_history(history_dir)  # fail fast, before a kernel starts
    title = title or f"Fleet endurance: {history_dir.resolve().name}"
    params = {"history_dir": str(history_dir.resolve()), "title": title}
    return render_report(notebook_path(NOTEBOOK), params, output, title=title)

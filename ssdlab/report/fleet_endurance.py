"""The fleet endurance report: a SMART history rendered to one offline HTML file."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ..analysis.fleet_endurance import DAY_S, FleetEndurance
from ..resources import notebook_path
from ..review.fleet_endurance import NOTEBOOK
from ..telemetry.history import SNAPSHOT_SCHEMA, history_frame, scan_smart_history
from . import render_report

#: the demo fleet's drives: model, firmware, host TB written a day, WAF, percentage used at
#: its first snapshot and its rise a week, media errors at its last snapshot
DEMO_DRIVES = (
    ("DEMO A (generated)", "A1", 0.40, 1.4, 12, 0.6, 0),
    ("DEMO A (generated)", "A1", 0.55, 1.5, 18, 0.8, 0),
    ("DEMO A (generated)", "A2", 0.30, 1.6, 9, 0.5, 0),
    ("DEMO A (generated)", "A2", 0.50, 4.2, 25, 2.4, 3),
    ("DEMO B (generated)", "B7", 1.20, 2.1, 30, 1.1, 0),
    ("DEMO B (generated)", "B7", 0.90, 2.3, 41, 0.9, 0),
    ("DEMO B (generated)", "B8", 1.10, 2.0, 22, 1.0, 1),
)
#: weekly snapshots of each demo drive, the first at :data:`DEMO_START_S`
DEMO_WEEKS = 13
DEMO_START_S = 1_767_225_600.0  # 2026-01-01 UTC
DEMO_WRITTEN_BEFORE_DAYS = 400  # days of writes before the first snapshot


def demo_fleet() -> FleetEndurance:
    """A made-up fleet (:data:`DEMO_DRIVES`, serials ``DEMO-1``...): what the notebook shows
    when opened without a history. Nothing in it was measured."""
    rows = []
    for number, (model, firmware, tb_day, waf, used, rise, errors) in enumerate(DEMO_DRIVES, 1):
        for week in range(DEMO_WEEKS):
            days = DEMO_WRITTEN_BEFORE_DAYS + 7 * week
            host = round(tb_day * 1e12 * days)
            rows.append(
                dict.fromkeys(SNAPSHOT_SCHEMA)
                | {
                    "model": model,
                    "serial": f"DEMO-{number}",
                    "firmware": firmware,
                    "capacity_bytes": 3_840_000_000_000,
                    "host": "demo",
                    "time_s": DEMO_START_S + 7 * week * DAY_S,
                    "time_source": "capture",
                    "source": "demo",
                    "host_written_bytes": host,
                    "nand_written_bytes": round(host * waf),
                    "percent_used": int(used + rise * week),
                    "available_spare_percent": 100 - errors,
                    "media_errors": errors * week // (DEMO_WEEKS - 1),
                }
            )
    return FleetEndurance(history_frame(pl.DataFrame(rows, schema=SNAPSHOT_SCHEMA)))


def load_fleet(history_dir: Path | str | None) -> FleetEndurance:
    """The figures of a directory ``ssdlab smart import`` wrote; None: :func:`demo_fleet`."""
    return demo_fleet() if history_dir is None else FleetEndurance.load(history_dir)


def render_fleet_endurance(history_dir: Path, output: Path, *, title: str | None = None) -> Path:
    """Execute the fleet endurance notebook on a directory ``ssdlab smart import`` wrote and
    write one offline HTML file (the executed notebook is kept beside it, as for a review)."""
    scan_smart_history(history_dir)  # fail fast, before a kernel starts
    title = title or f"Fleet endurance: {history_dir.resolve().name}"
    params = {"history_dir": str(history_dir.resolve()), "title": title}
    return render_report(notebook_path(NOTEBOOK), params, output, title=title)

"""ACT frames of a results directory (registered in :data:`ssdlab.results.FRAME_BUILDERS`).

``act_trials``: one row per trial: ``trial``, ``load`` (x the 1x load), ``duration_s`` and
``slice_s`` (as asked), ``status`` (passed/failed/cant_keep_up/abandoned; a trial cut off
without a verdict is abandoned), ``passed``, ``reason``, ``max_pct_over_{1,8,64}ms`` (over
its slices; null without slices), ``source`` (``fio`` emulation or ``native`` ACT log).

``act_slices``: one row per trial and slice: ``trial``, ``load``, ``slice`` (1, 2, ...),
``start_s``/``end_s`` (in the trial), ``pct_over_{1,8,64}ms`` (percent of reads at or over),
``passed``, ``read_rate`` (achieved reads/s), ``requested_read_rate`` (reads/s asked).
"""

from __future__ import annotations

import polars as pl

from ..pipeline import RunContext
from .trials import ActRecord

PCT = ["pct_over_1ms", "pct_over_8ms", "pct_over_64ms"]
TRIALS_SCHEMA = {
    "trial": pl.Int64,
    "load": pl.Float64,
    "duration_s": pl.Int64,
    "slice_s": pl.Int64,
    "status": pl.String,
    "passed": pl.Boolean,
    "reason": pl.String,
    **{f"max_{c}": pl.Float64 for c in PCT},
    "source": pl.String,
}
SLICES_SCHEMA = {
    "trial": pl.Int64,
    "load": pl.Float64,
    "slice": pl.Int64,
    "start_s": pl.Int64,
    "end_s": pl.Int64,
    **dict.fromkeys(PCT, pl.Float64),
    "passed": pl.Boolean,
    "read_rate": pl.Float64,
    "requested_read_rate": pl.Float64,
}


def _record(context: RunContext) -> ActRecord:
    return ActRecord.load(context.path)


def slices_frame(context: RunContext) -> pl.DataFrame:
    """Every slice of every ACT trial in ``results_dir`` (empty without ACT trials)."""
    rows = [
        {"trial": t.trial, "load": t.load, **s.model_dump(include=set(SLICES_SCHEMA))}
        for t in context.once(_record).trials
        for s in t.slices
    ]
    return pl.DataFrame(rows, schema=SLICES_SCHEMA)


def trials_frame(context: RunContext) -> pl.DataFrame:
    """Every ACT trial in ``results_dir`` with its verdict (empty without ACT trials)."""
    rows = []
    for t in context.once(_record).trials:
        row = t.model_dump(include=set(TRIALS_SCHEMA))
        row["status"] = "abandoned" if t.status == "running" else t.status
        row["passed"] = t.status == "passed"
        for c in PCT:
            row[f"max_{c}"] = max((getattr(s, c) for s in t.slices), default=None)
        rows.append(row)
    return pl.DataFrame(rows, schema=TRIALS_SCHEMA)

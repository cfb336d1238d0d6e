"""ACT frames of a results directory (registered in :data:`ssdlab.results.FRAME_BUILDERS`).

``act_trials``: one row per trial: ``trial``, ``load`` (x the 1x load), ``duration_s`` and
``slice_s`` (as asked), ``status`` (passed/failed/cant_keep_up/abandoned; a trial cut off
without a verdict is abandoned), ``passed``, ``reason``, ``max_pct_over_{1,8,64}ms`` (over
its slices; null without slices), ``source`` (``fio`` emulation or ``native`` ACT log),
``device`` (what it ran on, in words), ``other_device`` (imported from another device than
the run's: left out of the score), ``search_cap`` (an ``act score`` search stopped at its
``--max-load``, passed, at this trial's load and length).

``act_slices``: one row per trial and slice: ``trial``, ``load``, ``slice`` (1, 2, ...),
``start_s``/``end_s`` (in the trial), ``pct_over_{1,8,64}ms`` (percent of reads at or over),
``passed``, ``read_rate`` (achieved reads/s), ``requested_read_rate`` (reads/s asked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import polars as pl

from ..pipeline import RunContext
from .trials import ActRecord, SearchRecord, Trial, describe_devices, trial_devices

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
    "device": pl.String,
    "other_device": pl.Boolean,
    "search_cap": pl.Boolean,
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


def _at_cap(trial: Trial, searches: list[SearchRecord]) -> bool:
    """A search of the trial's length stopped at its cap, passed, at the trial's load."""
    return trial.source == "fio" and any(
        s.capped
        and s.score is not None
        and math.isclose(s.score, trial.load)
        and (s.duration_s, s.slice_s) == (trial.duration_s, trial.slice_s)
        for s in searches
    )


def trials_frame(context: RunContext) -> pl.DataFrame:
    """Every ACT trial in ``results_dir`` with its verdict (empty without ACT trials)."""
    record = context.once(_record)
    rows = []
    for t in record.trials:
        row = t.model_dump(include=set(TRIALS_SCHEMA))
        row["status"] = "abandoned" if t.status == "running" else t.status
        row["passed"] = t.status == "passed"
        for c in PCT:
            row[f"max_{c}"] = max((getattr(s, c) for s in t.slices), default=None)
        row["device"] = describe_devices(trial_devices(t, context.manifest.target))
        row["search_cap"] = t.status == "passed" and _at_cap(t, record.searches)
        rows.append(row)
    return pl.DataFrame(rows, schema=TRIALS_SCHEMA)


@dataclass(frozen=True)
class ActScore:
    """A run's ACT score, judged from its ``act_trials`` frame by :func:`act_score`; rows are
    the frame's, as dicts.

    ``best``: the highest passing trial counted (None when none passed); ``failed``: the
    lowest load above it that failed or could not keep up (None: the score is a lower bound);
    ``unjudged``: trials above it without a verdict; ``below``: trials below it that failed;
    ``lowest``: the lowest trial counted when none passed; ``left_out``: trials from another
    device, never counted.
    """

    best: dict[str, Any] | None
    failed: dict[str, Any] | None
    unjudged: list[dict[str, Any]]
    below: list[dict[str, Any]]
    lowest: dict[str, Any] | None
    left_out: list[dict[str, Any]]

    @property
    def lower_bound(self) -> bool:
        """No load above the score failed: the drive may pass more."""
        return self.best is not None and self.failed is None


def act_score(trials: pl.DataFrame) -> ActScore:
    """The score of the trials on the run's device (``other_device`` false): the highest
    passing load (of equal loads, the longest trial), and what bounds it."""
    other = pl.col("other_device").fill_null(False)
    counted = trials.filter(~other).sort("load", "duration_s", "trial")
    left_out = trials.filter(other).sort("trial").to_dicts()
    failing = pl.col("status").is_in(["failed", "cant_keep_up"])
    passed = counted.filter(pl.col("passed"))
    if not passed.height:
        lowest = counted.row(0, named=True) if counted.height else None
        return ActScore(None, None, [], [], lowest, left_out)
    best = passed.row(-1, named=True)
    above = counted.filter(pl.col("load") > best["load"])
    failed = above.filter(failing)
    return ActScore(
        best=best,
        failed=failed.row(0, named=True) if failed.height else None,
        unjudged=above.filter(~failing).to_dicts(),
        below=counted.filter(failing & (pl.col("load") < best["load"])).to_dicts(),
        lowest=None,
        left_out=left_out,
    )

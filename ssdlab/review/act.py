"""The drive review's ACT section: trials against ACT's 1/8/64 ms limits, slices over time,
and the score (:mod:`.act_findings` writes its sentences)."""

from __future__ import annotations

from typing import Any

import polars as pl

from .. import charts
from ..act.latency import ACT_LIMITS
from ..analysis.drive import DriveAnalysis
from ..units import format_duration
from . import act_findings
from .section import Section, table


def act_section(drive: DriveAnalysis) -> Section:
    """ACT trials against the 1/8/64 ms limits, slices over time, and the score; the charts
    draw the trials on the run's device, the table every trial with its length and device
    (another device's marked: the score leaves it out)."""
    trials = drive.results.act_trials
    if not trials.height:
        return Section(
            missing="No ACT results: this run has no Aerospike Certification Tool trials."
        )
    trials = trials.sort("load", "trial")
    counted = trials.filter(~pl.col("other_device"))
    slices = drive.results.act_slices.filter(pl.col("trial").is_in(counted["trial"].implode()))
    parts: list[Any] = [charts.act_trials(counted, ACT_LIMITS)] if counted.height else []
    if slices.height:
        parts.append(charts.act_slices(slices, ACT_LIMITS))
    length = pl.col("duration_s").map_elements(format_duration, return_dtype=pl.String)
    view = trials.select(
        pl.col("trial").alias("Trial"),
        pl.col("load").map_elements(lambda x: f"{x:g}x", return_dtype=pl.String).alias("Load"),
        length.alias("Length"),
        pl.col("slice_s").map_elements(format_duration, return_dtype=pl.String).alias("Slice"),
        pl.col("status").alias("Status"),
        *(pl.col(f"max_pct_over_{t:g}ms").alias(f"> {t:g} ms (%)") for t in ACT_LIMITS),
        pl.col("source").alias("Source"),
        pl.when(pl.col("other_device"))
        .then(pl.format("another device, not in the score: {}", pl.col("device")))
        .otherwise(pl.col("device"))
        .alias("Device"),
        pl.col("reason").alias("Reason"),
    )
    limits = ", ".join(f"{limit:g} % over {t:g} ms" for t, limit in ACT_LIMITS.items())
    caption = f"ACT trials: the worst slice of each (limits: {limits})"
    parts.append(table(view, caption, numeric=("Load", "Length", "Slice")))
    return Section(act_findings.act(trials, drive.results.act_slices), parts)

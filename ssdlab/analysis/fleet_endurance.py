"""Fleet endurance: per drive WAF, wear rate and projected wear-out from a ``smart_history``
frame (:mod:`ssdlab.telemetry.history`), their medians and spread by model and firmware, and
the drives far above their model.

Everything is computed by polars on the (lazy) frame, sorted by drive and time as the import
writes it; nothing loops over rows in Python. Definitions (units in the column names):

- ``lifetime_waf``: the drive's last lifetime WAF (NAND / host written over its life).
- ``recent_waf``: NAND over host bytes written in the intervals between snapshots that end in
  the last ``recent_days`` before the drive's last snapshot: the mean of the per-snapshot WAF
  weighted by the host bytes each interval wrote.
- ``wear_pct_per_day``: the rise of percentage used from the first to the last snapshot
  reporting it, over the days between them; ``wear_pct_per_tb``: the same rise over the host
  terabytes (10^12 bytes) written meanwhile. Percentage used is a whole number, so a drive
  that wore less than 1 % over its history shows 0.
- ``wearout_date``: when percentage used reaches 100 if the drive keeps wearing at its
  ``wear_pct_per_day`` (a linear projection: the assumption is that the workload, and so the
  wear rate, stays as observed); ``days_to_wearout`` 0 for a drive already at 100 %; none
  for a drive that did not wear, or would take more than :data:`MAX_PROJECTION_DAYS`.
- Outliers: a drive whose figure is more than :data:`OUTLIER_RATIO` times its model's median
  of that figure, among at least :data:`MIN_PEERS` drives of the model reporting it (and a
  median above 0).

A drive is its model and serial (:data:`~ssdlab.telemetry.history.DRIVE_KEYS`): figures over
the drives of several histories (the catalog's ``fleet_drives``, where a drive that moved
between hosts appears in each history that saw it) count each drive once
(:func:`unique_drives`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from ..telemetry.history import DRIVE_KEYS, scan_smart_history

TB = 1e12
DAY_S = 86_400
#: days of history before each drive's last snapshot its recent WAF covers
RECENT_DAYS = 30.0
#: a drive is an outlier when its figure is more than this times its model's median
OUTLIER_RATIO = 2.0
#: drives of a model (the outlier included) that must report a figure to judge outliers
MIN_PEERS = 3
#: the figures outliers are judged on
OUTLIER_METRICS = ("lifetime_waf", "recent_waf", "wear_pct_per_day")
#: projected wear-out further away than this (100 years) is not given as a date
MAX_PROJECTION_DAYS = 36_500
#: the figures :func:`model_endurance` gives the median and quartiles of
SPREAD_METRICS = ("lifetime_waf", "recent_waf", "wear_pct_per_day", "wear_pct_per_tb")

Frame = pl.LazyFrame | pl.DataFrame


def _last(column: str) -> pl.Expr:
    return pl.col(column).drop_nulls().last()


def _first(column: str) -> pl.Expr:
    return pl.col(column).drop_nulls().first()


def drive_endurance(history: Frame, *, recent_days: float = RECENT_DAYS) -> pl.DataFrame:
    """One row per drive of ``history`` (see the module docstring for the figures)."""
    keys = list(DRIVE_KEYS)
    has_pu = pl.col("percent_used").is_not_null()
    weight = pl.col("host_written_delta_bytes")
    recent = (
        pl.col("waf").is_not_null()
        & (weight > 0)
        & (pl.col("time") > pl.col("time").max() - pl.duration(seconds=recent_days * DAY_S))
    )
    per_drive = (
        history.lazy()
        .group_by(keys, maintain_order=True)
        .agg(
            _last("firmware"),
            _last("capacity_bytes"),
            _last("host"),
            pl.len().alias("snapshots"),
            pl.col("time").min().alias("first_time"),
            pl.col("time").max().alias("last_time"),
            _last("host_written_bytes"),
            _last("nand_written_bytes"),
            _last("lifetime_waf"),
            (pl.col("waf") * weight).filter(recent).sum().alias("_nand"),
            weight.filter(recent).sum().alias("_host"),
            _first("percent_used").alias("first_percent_used"),
            _last("percent_used"),
            pl.col("time").filter(has_pu).first().alias("pu_first_time"),
            pl.col("time").filter(has_pu).last().alias("pu_last_time"),
            pl.col("host_written_bytes").filter(has_pu).drop_nulls().first().alias("_h0"),
            pl.col("host_written_bytes").filter(has_pu).drop_nulls().last().alias("_h1"),
            _first("media_errors").alias("first_media_errors"),
            _last("media_errors"),
            _last("available_spare_percent"),
            pl.col("temperature_c").max().alias("temperature_max_c"),
            _last("power_on_hours"),
        )
    )
    wear_pct = pl.col("percent_used") - pl.col("first_percent_used")
    pu_days = (pl.col("pu_last_time") - pl.col("pu_first_time")).dt.total_seconds() / DAY_S
    written_tb = (pl.col("_h1") - pl.col("_h0")) / TB
    rate = pl.when((pu_days > 0) & (wear_pct >= 0)).then(wear_pct / pu_days)
    days_left = (
        pl.when(pl.col("percent_used") >= 100)
        .then(0.0)
        .when(pl.col("wear_pct_per_day") > 0)
        .then((100 - pl.col("percent_used")) / pl.col("wear_pct_per_day"))
    )
    frame = (
        per_drive.with_columns(
            recent_waf=pl.when(pl.col("_host") > 0).then(pl.col("_nand") / pl.col("_host")),
            span_days=(pl.col("last_time") - pl.col("first_time")).dt.total_seconds() / DAY_S,
            wear_pct=wear_pct,
            wear_pct_per_day=rate,
            wear_pct_per_tb=pl.when((written_tb > 0) & (wear_pct >= 0)).then(wear_pct / written_tb),
            new_media_errors=pl.col("media_errors") - pl.col("first_media_errors"),
        )
        .with_columns(days_to_wearout=days_left)
        .with_columns(
            wearout_date=pl.when(pl.col("days_to_wearout") <= MAX_PROJECTION_DAYS).then(
                pl.col("pu_last_time")
                + pl.duration(microseconds=(pl.col("days_to_wearout") * DAY_S * 1e6).round())
            )
        )
        .drop("_nand", "_host", "_h0", "_h1", "first_media_errors", "pu_first_time", "pu_last_time")
    )
    return frame.collect()


def unique_drives(drives: Frame) -> pl.LazyFrame:
    """:func:`drive_endurance`'s rows, each drive (model and serial) once, in their order:
    of a drive in several histories, the row whose history reaches furthest (the latest
    ``last_time``, then the most ``snapshots``, then the last given)."""
    return (
        drives.lazy()
        .with_row_index("_row")
        .sort("last_time", "snapshots", "_row", nulls_last=False)
        .unique(list(DRIVE_KEYS), keep="last")
        .sort("_row")
        .drop("_row")
    )


def fleet_figures(drives: Frame) -> dict[str, Any]:
    """The whole fleet's figures over :func:`drive_endurance`'s rows (each drive once,
    :func:`unique_drives`): ``drives``; ``drives_with_waf`` and their
    ``lifetime_waf_median``; ``drives_with_wear`` (a wear rate), their
    ``wear_pct_per_day_median`` and ``wear_pct_per_tb_median`` (None when none has one)."""
    worn = pl.col("wear_pct_per_day").is_not_null()
    return (
        unique_drives(drives)
        .select(
            pl.len().alias("drives"),
            pl.col("lifetime_waf").count().alias("drives_with_waf"),
            pl.col("lifetime_waf").median().alias("lifetime_waf_median"),
            worn.sum().alias("drives_with_wear"),
            pl.col("wear_pct_per_day").median().alias("wear_pct_per_day_median"),
            pl.col("wear_pct_per_tb").filter(worn).median().alias("wear_pct_per_tb_median"),
        )
        .collect()
        .row(0, named=True)
    )


def model_endurance(drives: Frame, keys: Sequence[str] = ("model",)) -> pl.DataFrame:
    """Per ``keys`` (``model``, or ``model`` and ``firmware``) of :func:`drive_endurance`'s
    rows (each drive once, :func:`unique_drives`): drive counts, the median and quartiles
    (``_p25``/``_p75``, the spread) of :data:`SPREAD_METRICS`, media errors, the lowest
    spare and the earliest wear-out."""
    spread = [
        expr
        for metric in SPREAD_METRICS
        for expr in (
            pl.col(metric).median().alias(f"{metric}_median"),
            pl.col(metric).quantile(0.25, "linear").alias(f"{metric}_p25"),
            pl.col(metric).quantile(0.75, "linear").alias(f"{metric}_p75"),
        )
    ]
    return (
        unique_drives(drives)
        .group_by(list(keys))
        .agg(
            pl.len().alias("drives"),
            pl.col("lifetime_waf").count().alias("drives_with_waf"),
            pl.col("wear_pct_per_day").count().alias("drives_with_wear"),
            *spread,
            (pl.col("media_errors") > 0).sum().alias("drives_with_media_errors"),
            pl.col("media_errors").sum().alias("media_errors"),
            pl.col("available_spare_percent").min().alias("min_available_spare_percent"),
            pl.col("wearout_date").min().alias("earliest_wearout_date"),
        )
        .sort(["drives", *keys], descending=[True, *[False] * len(keys)])
        .collect()
    )


def outliers(drives: Frame) -> pl.DataFrame:
    """Drives whose :data:`OUTLIER_METRICS` figure is more than :data:`OUTLIER_RATIO` times
    their model's median (one row per drive and figure, highest ratio first; each drive once,
    :func:`unique_drives`): ``metric``, ``value``, ``model_median``, ``ratio`` and ``peers``
    (drives of the model with it)."""
    long = (
        unique_drives(drives)
        .select(*DRIVE_KEYS, "firmware", *OUTLIER_METRICS)
        .unpivot(OUTLIER_METRICS, index=[*DRIVE_KEYS, "firmware"], variable_name="metric")
        .drop_nulls("value")
    )
    medians = long.group_by("model", "metric").agg(
        pl.col("value").median().alias("model_median"), pl.len().alias("peers")
    )
    return (
        long.join(medians, on=["model", "metric"])
        .filter(
            (pl.col("peers") >= MIN_PEERS)
            & (pl.col("model_median") > 0)
            & (pl.col("value") > OUTLIER_RATIO * pl.col("model_median"))
        )
        .with_columns(ratio=pl.col("value") / pl.col("model_median"))
        .sort(["ratio", *DRIVE_KEYS], descending=[True, False, False])
        .collect()
    )


class FleetEndurance:
    """A SMART history's endurance figures, each computed once on first use."""

    def __init__(
        self, history: Frame, *, source: Path | None = None, recent_days: float = RECENT_DAYS
    ) -> None:
        self.history = history.lazy()
        self.source = source
        self.recent_days = recent_days

    @classmethod
    def load(cls, directory: Path | str, *, recent_days: float = RECENT_DAYS) -> FleetEndurance:
        """The figures of a directory ``ssdlab smart import`` wrote."""
        return cls(scan_smart_history(directory), source=Path(directory), recent_days=recent_days)

    @cached_property
    def drives(self) -> pl.DataFrame:
        return drive_endurance(self.history, recent_days=self.recent_days)

    @cached_property
    def by_model(self) -> pl.DataFrame:
        return model_endurance(self.drives)

    @cached_property
    def by_firmware(self) -> pl.DataFrame:
        return model_endurance(self.drives, ("model", "firmware"))

    @cached_property
    def outliers(self) -> pl.DataFrame:
        return outliers(self.drives)

    @cached_property
    def overall(self) -> dict[str, Any]:
        """The whole fleet's figures (:func:`fleet_figures`)."""
        return fleet_figures(self.drives)

    @cached_property
    def snapshots(self) -> int:
        return self.drives["snapshots"].sum()

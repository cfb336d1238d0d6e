"""Latency exceedance: the share of I/Os at least as slow as each latency, from fio's json+
bins (the complementary CDF a log-log chart shows, tails first-class).

fio's json+ output counts each I/O in one of its log-linear latency bins and reports a bin
by one value ``x`` (``lat_ns`` of ``latency_hist``: the midpoint of the bin's range,
truncated; the bin's edges are not in the output). An I/O counted at ``x`` took between
about ``x - w/2`` and ``x + w/2``, ``w`` the bin width (1 ns below 128 ns, else 0.8-1.6 %
of ``x``). The share "slower than x" is therefore counted with **>=** on bins: the I/Os in
``x``'s bin and every slower bin, divided by all I/Os of the step and direction (the I/Os
at least as slow as the lower edge of ``x``'s bin). The slowest bin thus has the share of
the I/Os in it, never 0, and fio's own percentile p is the largest ``x`` whose share is
above ``1 - p/100`` (:mod:`.percentiles`). Drawn as a step that falls just after each
``x`` ("step-before" in Vega), the curve is exact to the bin.

Coverage: a curve (or a QoS profile's slices, from the histogram logs) is the step's only
when it counts the I/Os fio counted (:func:`coverage`): json+ bins normally hold every I/O;
histogram logs miss a late start, a job without a log, a truncated file and their last
partial interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

#: a thinned curve keeps a point where the share has fallen by this factor (20 per decade)
SHARE_STEP = 10**0.05
#: the bins of the slowest this many I/Os are always kept
TAIL_IOS = 10
EXCEEDANCE_KEYS = ("step_index", "direction")


def exceedance(
    latency_hist: pl.DataFrame,
    keys: Sequence[str] = EXCEEDANCE_KEYS,
    *,
    step: float | None = SHARE_STEP,
    summary: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per ``keys`` (step and direction; fio's job entries of a step are summed), one row
    per json+ bin in ascending latency: ``lat_ns`` (fio's bin value), ``ios`` (I/Os of the
    step and direction), ``slower_ios`` (I/Os in this bin or slower ones) and ``share`` =
    ``slower_ios / ios`` (see the module for the >= rule).

    With ``step`` (default :data:`SHARE_STEP`) the curve is thinned for charts: of each run
    of bins whose shares lie within a factor ``step`` of each other (a band of the log share
    axis), only the first and the last are kept, and every bin of the slowest
    :data:`TAIL_IOS` I/Os. A line through the kept points stays within a factor ``step`` of
    the full curve, and a step and direction keep at most ``2 x log(ios) / log(step) + 2 +
    TAIL_IOS`` points (about 250 for 10^6 I/Os), however many bins fio filled. ``step=None``
    keeps every bin.

    With ``summary`` (fio's job rows), every row also has ``ios_total`` and ``coverage_pct``
    (:func:`coverage`: how much of fio's I/O count of the step and direction the bins hold)."""
    keys = list(keys)
    bins = (
        latency_hist.filter(pl.col("count") > 0)
        .group_by(*keys, "lat_ns")
        .agg(pl.col("count").sum())
        .sort(*keys, "lat_ns", descending=[*([False] * len(keys)), True])
    )
    curve = bins.select(
        *keys,
        "lat_ns",
        ios=pl.col("count").sum().over(keys),
        slower_ios=pl.col("count").cum_sum().over(keys),
    ).with_columns(share=pl.col("slower_ios") / pl.col("ios"))
    curve = curve.sort(*keys, "lat_ns")
    if summary is not None:
        found = coverage(curve, summary, keys).drop("ios")
        curve = curve.join(found, on=keys, how="left", maintain_order="left")
    if step is None:
        return curve
    if step <= 1:
        raise ValueError(f"step must be above 1, not {step}")
    band = (-pl.col("share").log10() / math.log10(step)).floor()
    within = [*keys, "band"]
    return (
        curve.with_columns(band=band)
        .filter(
            (pl.int_range(pl.len()).over(within) == 0)
            | (pl.int_range(pl.len()).over(within) == pl.len().over(within) - 1)
            | (pl.col("slower_ios") <= TAIL_IOS)
        )
        .drop("band")
    )


#: a curve or a step's slices holding fewer than this percent of fio's own I/O count of the
#: step and direction show only part of it (:func:`coverage`)
MIN_COVERAGE_PCT = 99.0


def coverage(
    counted: pl.DataFrame, summary: pl.DataFrame, keys: Sequence[str] = EXCEEDANCE_KEYS
) -> pl.DataFrame:
    """How much of each step and direction an exceedance counts: per ``keys`` of ``counted``
    (its ``ios``: the I/Os in json+ bins or histogram-log rows), ``ios_total``, fio's own
    count (``total_ios`` of the step's job entries in ``summary``, summed) and
    ``coverage_pct`` = 100 x ``ios`` / ``ios_total`` (null when fio counted none).

    Nothing is forgiven: I/Os a histogram log never held count as missing, the last partial
    interval too (fio writes a log row only when an interval has passed, never at the end,
    so a step of n log intervals covers about (n - 1) / n of its I/Os at best)."""
    keys = list(keys)
    if "total_ios" in summary.columns:
        totals = summary.group_by(keys).agg(ios_total=pl.col("total_ios").sum())
    else:
        totals = summary.select(keys).unique().with_columns(ios_total=pl.lit(None, pl.Int64))
    return (
        counted.select(*keys, "ios")
        .unique(keys, maintain_order=True)
        .join(totals, on=keys, how="left", maintain_order="left")
        .with_columns(
            coverage_pct=pl.when(pl.col("ios_total") > 0).then(
                100 * pl.col("ios") / pl.col("ios_total")
            )
        )
    )

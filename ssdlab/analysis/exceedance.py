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
    keeps every bin."""
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

"""Percentiles from fio latency histograms, by fio's own rule.

fio (stat.c ``calc_clat_percentiles``) walks the bins in ascending order and reports, for
percentile p, the value of the first bin whose cumulative count reaches ``p/100 x N``. The
value is the bin's representative latency as fio writes it in json+ (the midpoint of the
bin's range, truncated to an integer), so a percentile is exact to the bin width (~1/64 of
its value; bins below 128 ns are 1 ns wide). Bin edges: a sample is counted in the bin
whose range [lower, upper) contains it; values on an edge go to the upper bin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl


def fio_percentiles(
    lat_ns: Sequence[float], counts: Sequence[int], percentiles: Sequence[float]
) -> list[float]:
    """Latency (same unit as ``lat_ns``) at each percentile, exactly as fio computes it."""
    values = np.asarray(lat_ns, dtype=float)
    weights = np.asarray(counts, dtype=np.int64)
    if values.size == 0 or weights.sum() == 0:
        return [float("nan")] * len(percentiles)
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    total = cum[-1]
    # fio compares in long double: sum >= p / 100.0 * nr
    targets = np.array([p / 100.0 * total for p in percentiles], dtype=np.longdouble)
    idx = np.searchsorted(cum.astype(np.longdouble), targets, side="left")
    return [float(values[min(i, values.size - 1)]) for i in idx]


#: columns of fio's completion-latency percentiles in a summary (``clat_p99_99_ns``...)
PERCENTILE_PREFIX, PERCENTILE_SUFFIX = "clat_p", "_ns"
MAX_COLUMN = "clat_max_ns"
#: set by :func:`clamp_to_max`: some percentile of the row was above its maximum
CLAMPED = "clat_p_clamped"


def percentile_columns(columns: Sequence[str]) -> list[str]:
    """The completion-latency percentile columns among ``columns``."""
    return [c for c in columns if c.startswith(PERCENTILE_PREFIX) and c.endswith(PERCENTILE_SUFFIX)]


def clamp_to_max(frame: pl.DataFrame) -> pl.DataFrame:
    """Percentiles no higher than the slowest I/O measured.

    fio reports a percentile as its histogram bin's value, which lies up to ~1.6 % above the
    samples in the bin: a p99.99 can exceed ``clat_max_ns``. Every percentile column is
    capped at the row's maximum, and :data:`CLAMPED` says where that changed a value (tables
    footnote it). A frame without ``clat_max_ns`` comes back as it is.
    """
    columns = percentile_columns(frame.columns)
    if MAX_COLUMN not in frame.columns or not columns:
        return frame
    top = pl.col(MAX_COLUMN)
    above = pl.any_horizontal(*(pl.col(c) > top for c in columns)).fill_null(False)
    return frame.with_columns(
        *(pl.when(pl.col(c) > top).then(top).otherwise(pl.col(c)).alias(c) for c in columns),
        above.alias(CLAMPED),
    )


def ios_needed(percentile: float) -> int:
    """The fewest I/Os with one lying beyond ``percentile`` (:func:`samples_beyond` = 1):
    10,000 for p99.99."""
    return round(1 / (1 - percentile / 100))


def samples_beyond(percentile: float, ios: float) -> float:
    """How many of ``ios`` I/Os lie beyond percentile ``percentile`` by its definition:
    ``ios x (1 - p/100)`` (not a count from fio's histogram bins, whose edges put I/Os equal
    to the value on either side).

    A percentile means something only when at least one I/O lies beyond it; below 1 it is
    fio's histogram value of the slowest I/Os (p99.9999 of 50,000 I/Os: 0.05 beyond). Deep
    percentiles need samples: p99.99 needs 10,000 I/Os, p99.9999 1,000,000."""
    return ios * (1 - percentile / 100)

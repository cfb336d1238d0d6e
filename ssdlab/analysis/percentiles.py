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

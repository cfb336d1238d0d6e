"""The fleet-level row of a step: fio's ``All clients`` entry, computed from the hosts' results.

fio's client sums its clients' stats (stat.c ``sum_thread_stats``): I/Os and bytes add up,
the runtime is the longest client's, latency means are merged weighted by their sample
counts, minima and maxima are the extremes. IOPS and bandwidth then come from the summed
counts over that runtime, exactly as fio prints them. fio 3.x prints no percentiles for
``All clients``; the fleet row adds completion-latency percentiles from the summed json+
histograms, by fio's own rule (:func:`ssdlab.analysis.fio_percentiles`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ..analysis import fio_percentiles
from ..io.fio_json import DEFAULT_PERCENTILES
from ..units import percentile_name

LATENCIES = ("lat", "clat")


def _merged(stat: str) -> list[pl.Expr]:
    samples = pl.col(f"{stat}_samples")
    return [
        ((pl.col(f"{stat}_mean_ns") * samples).sum() / samples.sum()).alias(f"{stat}_mean_ns"),
        pl.col(f"{stat}_min_ns").min(),
        pl.col(f"{stat}_max_ns").max(),
        samples.sum(),
    ]


def all_clients(summary: pl.DataFrame, hist: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """One row per ``keys`` x direction over every client row of ``summary`` (``clients``
    counts them); ``hist`` holds the clients' json+ completion-latency bins (``lat_ns``,
    ``count``) with the same keys."""
    by = [*keys, "direction"]
    runtime_ms = (pl.col("runtime_s") * 1000).round().max()
    rows = summary.group_by(by, maintain_order=True).agg(
        pl.len().alias("clients"),
        pl.col("total_ios").sum(),
        pl.col("io_bytes").sum(),
        runtime_ms.alias("runtime_ms"),
        *(expr for stat in LATENCIES for expr in _merged(stat)),
    )
    rows = rows.with_columns(
        iops=pl.when(pl.col("runtime_ms") > 0).then(
            1000.0 * pl.col("total_ios") / pl.col("runtime_ms")
        ),
        bw_bytes_s=pl.when(pl.col("runtime_ms") > 0).then(
            (1000 * pl.col("io_bytes")) // pl.col("runtime_ms")
        ),
        runtime_s=pl.col("runtime_ms") / 1000,
    ).drop("runtime_ms")
    names = [f"clat_{percentile_name(p)}_ns" for p in DEFAULT_PERCENTILES]
    pct_schema = {**dict(rows.select(by).schema), **dict.fromkeys(names, pl.Float64)}
    merged = hist.group_by([*by, "lat_ns"]).agg(pl.col("count").sum())
    pcts = [
        dict(zip(by, key, strict=True))
        | dict(
            zip(names, fio_percentiles(b["lat_ns"], b["count"], DEFAULT_PERCENTILES), strict=True)
        )
        for key, b in merged.group_by(by)
    ]
    rows = rows.join(pl.DataFrame(pcts, schema=pct_schema), on=by, how="left", nulls_equal=True)
    first = [*by, "clients", "iops", "bw_bytes_s", "io_bytes", "total_ios", "runtime_s"]
    return rows.select(first + [c for c in rows.columns if c not in first])

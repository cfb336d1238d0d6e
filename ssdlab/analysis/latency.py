"""Latency QoS: which steps the latency figures show, and percentile curves from histograms."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .percentiles import fio_percentiles
from .steps import RUN_KEYS
from .workloads import BANDWIDTH_BS, in_review_order, latest, mix_points, qd_points

#: percentile curves run from 1 % (below it lie the odd fastest I/Os) to this many nines
#: (99.9999 %), in steps of NINES_STEP on the nines scale
MAX_NINES, NINES_STEP = 6.0, 0.05
FIRST_NINES = -math.log10(0.99)
#: without QD or mix sweeps, this many of the first workloads measured are shown
QOS_FALLBACK_SERIES = 8
CURVE_SCHEMA = {
    "series": pl.String,
    "nines": pl.Float64,
    "percentile": pl.Float64,
    "lat_ns": pl.Float64,
}


def qos_choice(classified: pl.DataFrame) -> pl.DataFrame:
    """Steps and directions the QoS figures show, with a ``series`` label, in order: the
    lowest and highest QD of each QD sweep and the mix nearest 70/30 of the deepest mix sweep
    (with its 100 % and 0 % reads when there is no QD sweep), small blocks only when there
    are any; else the first workloads measured."""
    small = classified.filter(pl.col("bs_bytes") < BANDWIDTH_BS)
    pool = latest(
        small if small.height else classified,
        [*RUN_KEYS, "workload", "qd", "direction", "mixed"],
    )
    chosen = []
    points = qd_points(pool)
    if points.height:
        ends = points.filter(
            (pl.col("qd") == pl.col("qd").min().over("workload"))
            | (pl.col("qd") == pl.col("qd").max().over("workload"))
        )
        chosen.append(ends.select("step_index"))
    steps = mix_points(pool).steps
    if steps.height:
        deepest = steps.filter(pl.col("qd") == pl.col("qd").max())
        mixed = deepest.filter((pl.col("read_pct") > 0) & (pl.col("read_pct") < 100))
        nearest = (pl.col("read_pct") - 70).abs()
        chosen.append(mixed.filter(nearest == nearest.min()).select("step_index"))
        if not points.height:
            ends = deepest.filter(pl.col("read_pct").is_in([0, 100]))
            chosen.append(ends.select("step_index"))
    if chosen:
        pool = pool.join(pl.concat(chosen).unique(), on="step_index")
    picked = in_review_order(pool.sort("step_index", "direction").head(QOS_FALLBACK_SERIES))
    in_mix = (pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)
    return picked.with_columns(
        series=pl.concat_str(
            "workload",
            pl.lit(" "),
            "qd_label",
            pl.when(in_mix).then(pl.lit(" · ") + pl.col("direction")).otherwise(pl.lit("")),
        )
    )


def percentile_curves(latency_hist: pl.DataFrame, chosen: pl.DataFrame) -> pl.DataFrame:
    """Latency at percentiles 1 to 99.9999 % (a grid on the 'nines' scale) per chosen series
    (``step_index``, ``direction``, ``series``), computed from fio's json+ bins by fio's rule;
    ``nines`` = -log10(1 - p/100). With ``clat_max_ns`` in ``chosen``, a series' curve is
    capped at its slowest I/O, as the tables cap fio's percentiles (a bin's value can lie
    ~1.6 % above the samples in it)."""
    bins = (
        latency_hist.join(
            chosen.select("step_index", "direction", "series"), on=["step_index", "direction"]
        )
        .group_by("series", "lat_ns", maintain_order=True)
        .agg(pl.col("count").sum())
    )
    frames = []
    for (series,), rows in bins.group_by("series", maintain_order=True):
        total = int(rows["count"].sum())
        if total == 0:
            continue
        top = min(MAX_NINES, math.log10(total))
        grid = np.arange(NINES_STEP, top + NINES_STEP / 2, NINES_STEP)
        nines = np.round(np.concatenate([[FIRST_NINES], grid]), 4)
        percentiles = 100 * (1 - 10.0 ** (-nines))
        lat = fio_percentiles(rows["lat_ns"].to_list(), rows["count"].to_list(), percentiles)
        frames.append(
            pl.DataFrame(
                {"series": series, "nines": nines, "percentile": percentiles, "lat_ns": lat}
            )
        )
    if not frames:
        return pl.DataFrame(schema=CURVE_SCHEMA)
    curves = pl.concat(frames)
    if "clat_max_ns" not in chosen.columns:
        return curves
    top = chosen.group_by("series").agg(pl.col("clat_max_ns").max().alias("top"))
    return (
        curves.join(top, on="series", how="left")
        .with_columns(pl.min_horizontal("lat_ns", pl.col("top").fill_null(float("inf"))))
        .drop("top")
    )

"""Latency QoS: which steps the latency figures show, percentile curves from histograms, and
percentiles over time from the histogram logs (``latency_intervals``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from ..pipeline import INTERVAL_PERCENTILES
from ..units import percentile_name
from .percentiles import fio_percentiles, samples_beyond
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
        [*RUN_KEYS, "test_group", "workload", "qd", "direction", "mixed"],
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
    return picked.with_columns(series=series_label())


def series_label() -> pl.Expr:
    """A classified row's label: ``4K random read QD1``, ``4K random 70/30 QD32 · write``
    (the direction only in a mix)."""
    in_mix = (pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)
    return pl.concat_str(
        "workload",
        pl.lit(" "),
        "qd_label",
        pl.when(in_mix).then(pl.lit(" · ") + pl.col("direction")).otherwise(pl.lit("")),
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


#: a percentiles-over-time chart draws at most this many points per series
MAX_TIME_POINTS = 300
#: at most this many steps and directions are shown over time
MAX_TIME_SERIES = 6
#: what identifies one series of ``latency_intervals``
INTERVAL_KEYS = ("step_index", "job_index", "direction")
#: from this percentile on, a downsampled bucket keeps its highest interval
TAIL_FROM = 99.0
#: a finding's percentile: the deepest of these an interval holds at least one I/O beyond
SHIFT_PERCENTILES = (99.99, 99.9, 99.0, 50.0)
#: a level shift is reported when the medians before and after differ by this factor
SHIFT_FACTOR = 2.0
#: each side of a level shift spans at least this many intervals
MIN_SEGMENT = 5


def interval_column(percentile: float) -> str:
    """The ``latency_intervals`` column of a percentile: 99.9 -> ``lat_p99_9_ns``."""
    return f"lat_{percentile_name(percentile)}_ns"


def time_choice(
    classified: pl.DataFrame,
    qos: pl.DataFrame,
    consistency_steps: list[int],
    intervals: pl.DataFrame,
    limit: int = MAX_TIME_SERIES,
) -> pl.DataFrame:
    """The steps and directions a review shows over time (``step_index``, ``direction``,
    ``series``), those with histogram-log intervals only: the QoS choice (:func:`qos_choice`:
    the ends of QD sweeps, the 70/30 mix), then the consistency runs (long random writes);
    when none of these has intervals, the first measured steps that have, in review order.
    At most ``limit``."""
    logged = intervals.select("step_index", "direction").unique()
    picked = [qos.select("step_index", "direction", "series")]
    runs = classified.filter(pl.col("step_index").is_in(consistency_steps))
    picked.append(runs.select("step_index", "direction", series=series_label()))
    chosen = pl.concat(picked).join(logged, on=["step_index", "direction"], maintain_order="left")
    if not chosen.height:
        rest = in_review_order(
            classified.join(logged, on=["step_index", "direction"], maintain_order="left")
        )
        chosen = rest.select("step_index", "direction", series=series_label())
    return chosen.unique(["step_index", "direction"], maintain_order=True).head(limit)


def downsample_intervals(
    intervals: pl.DataFrame,
    max_points: int = MAX_TIME_POINTS,
    keys: tuple[str, ...] = INTERVAL_KEYS,
) -> pl.DataFrame:
    """``latency_intervals`` with at most ``max_points`` rows per ``keys``: a series of n
    intervals is cut into runs of ceil(n / max_points) consecutive intervals, each one row:
    ``t_s`` the end of its last interval, ``intervals`` how many it merges, ``samples``
    their sum, ``lat_min_ns``/``lat_max_ns`` the lowest/highest (exact), ``lat_mean_ns``
    weighted by samples (exact), percentiles from p99 on (:data:`TAIL_FROM`) the highest of
    the run's intervals (a one-interval spike stays visible: an upper bound, never an
    average that hides it) and lower percentiles (p50, p90, p95) the run's median interval.
    Shorter series come back unchanged (``intervals`` = 1)."""
    keys = list(keys)
    if max_points < 1:
        raise ValueError(f"max_points must be at least 1, not {max_points}")
    ordered = intervals.sort(*keys, "t_s")
    size = (pl.len().over(keys) + max_points - 1) // max_points
    bucket = pl.int_range(pl.len()).over(keys) // size
    tails = [interval_column(p) for p in INTERVAL_PERCENTILES if p >= TAIL_FROM]
    body = [interval_column(p) for p in INTERVAL_PERCENTILES if p < TAIL_FROM]
    weighted = (pl.col("lat_mean_ns") * pl.col("samples")).sum() / pl.col("samples").sum()
    return (
        ordered.with_columns(bucket=bucket)
        .group_by(*keys, "bucket", maintain_order=True)
        .agg(
            pl.col("t_s").max(),
            pl.col("interval_ms").first(),
            pl.len().alias("intervals"),
            pl.col("samples").sum(),
            pl.col("lat_min_ns").min(),
            weighted.alias("lat_mean_ns"),
            *(pl.col(c).median() for c in body),
            *(pl.col(c).max() for c in tails),
            pl.col("lat_max_ns").max(),
        )
        .drop("bucket")
    )


def shift_percentile(samples: np.ndarray) -> float:
    """The deepest of :data:`SHIFT_PERCENTILES` beyond which a typical interval (the median
    of ``samples`` per interval) holds at least one I/O."""
    typical = float(np.median(samples)) if samples.size else 0.0
    for p in SHIFT_PERCENTILES:
        if samples_beyond(p, typical) >= 1:
            return p
    return SHIFT_PERCENTILES[-1]


#: :func:`drive_intervals`'s per-drive columns
DRIVE_INTERVALS_SCHEMA = {
    "label": pl.String, "median_ns": pl.Float64, "worst_ns": pl.Float64, "interval_ms": pl.Int64,
}  # fmt: skip


def drive_intervals(intervals: pl.DataFrame, drives: Sequence[str]) -> tuple[float, pl.DataFrame]:
    """One cell's ``latency_intervals`` rows of several drives (``label``) side by side: the
    deepest percentile every drive's intervals resolve (the lowest :func:`shift_percentile`
    of the drives), and per drive, in the order of ``drives``, that percentile's median and
    worst over its intervals (``median_ns``, ``worst_ns``) and its ``interval_ms``."""
    per = {d: intervals.filter(pl.col("label") == d) for d in drives}
    p = min(shift_percentile(per[d]["samples"].to_numpy()) for d in drives)
    column = interval_column(p)
    rows = [
        (d, per[d][column].median(), per[d][column].max(), int(per[d]["interval_ms"][0]))
        for d in drives
    ]
    return p, pl.DataFrame(rows, schema=DRIVE_INTERVALS_SCHEMA, orient="row")


def _split(y: np.ndarray) -> int:
    """Where a series of logs of latencies most likely changed level: the index k (each
    side at least :data:`MIN_SEGMENT` long) maximising the two means' difference weighted
    by sqrt(k (n - k) / n), the test statistic of binary segmentation."""
    n = y.size
    k = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    cum = np.cumsum(y)
    before = cum[k - 1] / k
    after = (cum[-1] - cum[k - 1]) / (n - k)
    return int(k[np.argmax(np.abs(before - after) * np.sqrt(k * (n - k) / n))])


SHIFT_SCHEMA = {
    "step_index": pl.Int64,
    "job_index": pl.Int64,
    "direction": pl.String,
    "percentile": pl.Float64,
    "intervals": pl.Int64,
    "interval_ms": pl.Int64,
    "low_ns": pl.Float64,
    "high_ns": pl.Float64,
    "best_ns": pl.Float64,
    "worst_ns": pl.Float64,
    "worst_t_s": pl.Float64,
    "before_ns": pl.Float64,
    "after_ns": pl.Float64,
    "shift_t_s": pl.Float64,
    "shifted": pl.Boolean,
}


def latency_shifts(intervals: pl.DataFrame) -> pl.DataFrame:
    """Per step, job entry and direction of ``latency_intervals`` (full resolution): how one
    tail percentile behaved over time (:data:`SHIFT_SCHEMA`). ``percentile`` is the deepest
    of p99.99, p99.9, p99 that a typical interval resolves (:func:`shift_percentile`), else
    p50; ``low_ns``/``high_ns`` its 10th/90th percentile over the intervals, ``best_ns`` the
    lowest interval, ``worst_ns`` the highest (ending at ``worst_t_s``). With at least
    2 x :data:`MIN_SEGMENT` intervals, the likeliest level shift (:func:`_split`) is
    ``shift_t_s`` (the end of the last interval before it) with the median before and after;
    ``shifted`` when they differ by :data:`SHIFT_FACTOR` or more."""
    rows = []
    ordered = intervals.sort(*INTERVAL_KEYS, "t_s")
    for key, group in ordered.group_by(list(INTERVAL_KEYS), maintain_order=True):
        p = shift_percentile(group["samples"].to_numpy())
        values = group[interval_column(p)].to_numpy()
        t_s = group["t_s"].to_numpy()
        known = values > 0
        values, t_s = values[known], t_s[known]
        if not values.size:
            continue
        worst = int(np.argmax(values))
        row = dict(zip(INTERVAL_KEYS, key, strict=True)) | {
            "percentile": p,
            "intervals": int(values.size),
            "interval_ms": int(group["interval_ms"][0]),
            "low_ns": float(np.percentile(values, 10)),
            "high_ns": float(np.percentile(values, 90)),
            "best_ns": float(values.min()),
            "worst_ns": float(values[worst]),
            "worst_t_s": float(t_s[worst]),
            "before_ns": None,
            "after_ns": None,
            "shift_t_s": None,
            "shifted": False,
        }
        if values.size >= 2 * MIN_SEGMENT:
            k = _split(np.log(values))
            before, after = float(np.median(values[:k])), float(np.median(values[k:]))
            ratio = max(before, after) / min(before, after)
            row |= {
                "before_ns": before,
                "after_ns": after,
                "shift_t_s": float(t_s[k - 1]),
                "shifted": ratio >= SHIFT_FACTOR,
            }
        rows.append(row)
    return pl.DataFrame(rows, schema=SHIFT_SCHEMA)

"""Altair charts of the tidy frames, in the styles SSD reviews use.

Each function takes a frame from :func:`ssdlab.load` and returns an altair chart with
tooltips; inputs are aggregated to at most ``MAX_POINTS`` rows so reports stay small.
"""

from __future__ import annotations

import altair as alt
import polars as pl

MAX_POINTS = 5000
WIDTH = 640
DIRECTION_COLORS = alt.Scale(
    domain=["read", "write", "trim"], range=["#1f77b4", "#d62728", "#7f7f7f"]
)


def _step_order(frame: pl.DataFrame) -> list[str]:
    return frame.sort("step_index")["step"].unique(maintain_order=True).to_list()


def _rows(summary: pl.DataFrame) -> int:
    return max(1, summary.select("step").n_unique())


def _per_step_bars(summary: pl.DataFrame, value: pl.Expr, title: str, fmt: str) -> alt.Chart:
    data = summary.with_columns(
        value=value,
        mib_s=(pl.col("bw_bytes_s") / 2**20).round(1),
        p99_us=(pl.col("clat_p99_ns") / 1e3).round(1),
        iops_r=pl.col("iops").round(0),
    ).select("step", "step_index", "direction", "value", "mib_s", "p99_us", "iops_r")
    return (
        alt.Chart(data.to_pandas())
        .mark_bar()
        .encode(
            y=alt.Y("step:N", sort=_step_order(summary), title=None),
            x=alt.X("value:Q", title=title, stack="zero"),
            color=alt.Color("direction:N", scale=DIRECTION_COLORS, title="Direction"),
            tooltip=[
                alt.Tooltip("step:N", title="Step"),
                alt.Tooltip("direction:N", title="Direction"),
                alt.Tooltip("iops_r:Q", title="IOPS", format=",.0f"),
                alt.Tooltip("mib_s:Q", title="MiB/s", format=",.1f"),
                alt.Tooltip("p99_us:Q", title="clat p99 (µs)", format=",.1f"),
            ],
        )
        .properties(width=WIDTH, height=22 * _rows(summary), title=f"{title} per step ({fmt})")
    )


def iops_by_step(summary: pl.DataFrame) -> alt.Chart:
    """IOPS per step, read and write stacked."""
    return _per_step_bars(summary, pl.col("iops"), "IOPS", "higher is better")


def bandwidth_by_step(summary: pl.DataFrame) -> alt.Chart:
    """Bandwidth (MiB/s) per step, read and write stacked."""
    return _per_step_bars(summary, pl.col("bw_bytes_s") / 2**20, "MiB/s", "higher is better")


LATENCY_STATS = {
    "clat_mean_ns": "mean",
    "clat_p50_ns": "p50",
    "clat_p99_ns": "p99",
    "clat_p99_9_ns": "p99.9",
    "clat_p99_99_ns": "p99.99",
    "clat_max_ns": "max",
}


def latency_by_step(summary: pl.DataFrame) -> alt.Chart:
    """Completion latency mean, percentiles and max per step and direction (log scale)."""
    present = [c for c in LATENCY_STATS if c in summary.columns]
    data = (
        summary.with_columns(row=pl.concat_str("step", pl.lit(" · "), "direction"))
        .unpivot(index=["row", "step", "direction", "step_index"], on=present)
        .drop_nulls("value")
        .with_columns(
            stat=pl.col("variable").replace_strict(LATENCY_STATS),
            us=pl.col("value") / 1e3,
        )
    )
    order = data.sort("step_index", "direction")["row"].unique(maintain_order=True).to_list()
    return (
        alt.Chart(data.select("row", "stat", "us").to_pandas())
        .mark_point(filled=True, size=70)
        .encode(
            y=alt.Y("row:N", sort=order, title=None),
            x=alt.X("us:Q", scale=alt.Scale(type="log"), title="Completion latency (µs, log)"),
            color=alt.Color("stat:N", sort=list(LATENCY_STATS.values()), title="Statistic"),
            shape=alt.Shape("stat:N", sort=list(LATENCY_STATS.values()), legend=None),
            tooltip=[
                alt.Tooltip("row:N", title="Step"),
                alt.Tooltip("stat:N", title="Statistic"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
            ],
        )
        .properties(width=WIDTH, height=22 * len(order), title="Completion latency per step")
    )


def _downsample(ts: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Average consecutive windows so the frame has at most MAX_POINTS rows."""
    factor = -(-ts.height // MAX_POINTS)
    if factor <= 1:
        return ts
    return (
        ts.with_columns(bucket=pl.int_range(pl.len()).over(keys) // factor)
        .group_by(*keys, "bucket")
        .agg(pl.col("t_s").max(), pl.col("iops").mean(), pl.col("bw_bytes_s").mean())
        .drop("bucket")
    )


def iops_over_time(timeseries: pl.DataFrame) -> alt.Chart:
    """Per-second IOPS of every step (all directions summed), one panel per step."""
    total = (
        timeseries.group_by("step_index", "step", "t_s")
        .agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum())
        .sort("step_index", "t_s")
    )
    total = _downsample(total, ["step_index", "step"]).with_columns(
        mib_s=(pl.col("bw_bytes_s") / 2**20).round(1)
    )
    base = alt.Chart(total.select("step", "t_s", "iops", "mib_s").to_pandas()).encode(
        x=alt.X("t_s:Q", title="Time (s)"),
        y=alt.Y("iops:Q", title="IOPS"),
        tooltip=[
            alt.Tooltip("step:N", title="Step"),
            alt.Tooltip("t_s:Q", title="t (s)"),
            alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
            alt.Tooltip("mib_s:Q", title="MiB/s", format=",.1f"),
        ],
    )
    chart = base.mark_line(point=True).properties(width=WIDTH // 2 - 30, height=140)
    return (
        chart.facet(facet=alt.Facet("step:N", sort=_step_order(timeseries), title=None), columns=2)
        .resolve_scale(y="independent")
        .properties(title="IOPS over time (per-second log windows)")
    )


def latency_exceedance(latency_hist: pl.DataFrame) -> alt.Chart:
    """Share of I/Os slower than each latency, per step and direction (log-log QoS curve)."""
    data = (
        latency_hist.sort("step_index", "direction", "lat_ns")
        .with_columns(series=pl.concat_str("step", pl.lit(" · "), "direction"))
        .with_columns(
            above=1.0
            - pl.col("count").cum_sum().over("series") / pl.col("count").sum().over("series"),
            us=pl.col("lat_ns") / 1e3,
        )
        .filter(pl.col("above") > 0)
    )
    return (
        alt.Chart(data.select("series", "us", "above").to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("us:Q", scale=alt.Scale(type="log"), title="Completion latency (µs, log)"),
            y=alt.Y("above:Q", scale=alt.Scale(type="log"), title="Share of I/Os slower (log)"),
            color=alt.Color("series:N", title="Step"),
            tooltip=[
                alt.Tooltip("series:N", title="Step"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
                alt.Tooltip("above:Q", title="share slower", format=".3%"),
            ],
        )
        .properties(width=WIDTH, height=320, title="Latency QoS: share of I/Os above a latency")
        .interactive()
    )

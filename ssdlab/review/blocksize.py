"""The drive review's block-size section: IOPS, MB/s and latency against block size, random
and sequential, reads and writes (:attr:`~ssdlab.analysis.DriveAnalysis.blocksizes`)."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from .. import charts
from ..analysis.drive import DriveAnalysis
from ..phrases import qd_phrase
from ..tables import format_bw, format_iops
from ..units import MB, bs_label
from .headline import depth_caveat, ran_at_column, with_engines
from .section import Section, table

#: a block size in bytes as an axis label: 512B, 4K, 1M
BS_LABEL_EXPR = (
    "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + 'M' : "
    "datum.value >= 1024 ? format(datum.value / 1024, '~g') + 'K' : datum.value + 'B'"
)


def _chart(points: pl.DataFrame, value: str, unit: str, title: str) -> alt.Chart:
    """``value`` (in ``unit``) against block size on log axes, one line per ``series``."""
    data = charts.traced(points, "series", "bs_bytes", "block", value)
    blocks = sorted(set(data["bs_bytes"].to_list()))
    return (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(size=50, filled=True))
        .encode(
            x=alt.X(
                "bs_bytes:Q",
                scale=alt.Scale(type="log", base=2),
                title="Block size (log)",
                axis=charts.axis(values=blocks, labelExpr=BS_LABEL_EXPR, labelAngle=0),
            ),
            y=alt.Y(
                f"{value}:Q", scale=alt.Scale(type="log"), title=f"{unit} (log)", axis=charts.axis()
            ),
            color=alt.Color(
                "series:N",
                sort=data["series"].unique(maintain_order=True).to_list(),
                title="Sweep",
                legend=alt.Legend(orient="bottom", columns=2),
            ),
            tooltip=[
                alt.Tooltip("series:N", title="Sweep"),
                alt.Tooltip("block:N", title="Block size"),
                alt.Tooltip(f"{value}:Q", title=unit, format=charts.value_format(unit)),
                *charts.provenance(data),
            ],
        )
        .properties(width=charts.WIDTH - 140, height=280, title=title)
    )


def blocksize_section(drive: DriveAnalysis) -> Section:
    """IOPS and MB/s against block size per sweep, mean and p99 latency, the table, and where
    throughput saturates."""
    points = drive.blocksizes
    if not points.height:
        return Section(
            missing="No block-size sweep: no workload was measured at two or more block sizes "
            "at one queue depth."
        )
    points = with_engines(drive, points).with_columns(
        series=pl.col("sweep"),
        block=pl.col("bs_bytes").map_elements(bs_label, return_dtype=pl.String),
        mb_s=pl.col("bw_bytes_s") / MB,
        mean_us=pl.col("clat_mean_ns") / 1e3,
        p99_us=pl.col("clat_p99_ns") / 1e3,
    )
    latency = pl.concat(
        [
            points.with_columns(series=pl.format("{} {}", "sweep", pl.lit(name)), us=pl.col(column))
            for column, name in (("mean_us", "mean"), ("p99_us", "p99"))
        ]
    ).filter(pl.col("us") > 0)
    parts: list[Any] = [
        _chart(points.filter(pl.col("iops") > 0), "iops", "IOPS", "IOPS by block size"),
        _chart(points.filter(pl.col("mb_s") > 0), "mb_s", "MB/s", "Throughput by block size"),
        _chart(latency, "us", "µs", "Completion latency by block size: mean and p99"),
    ]
    view = points.select(
        pl.col("sweep").alias("Sweep"),
        ran_at_column().alias("QD"),
        pl.col("block").alias("Block size"),
        pl.col("iops").alias("IOPS"),
        pl.col("mb_s").alias("MB/s"),
        pl.col("mean_us").alias("Mean µs"),
        pl.col("p99_us").alias("p99 µs"),
        (pl.col("clat_p99_99_ns") / 1e3).alias("p99.99 µs"),
        pl.col("step").alias("Step"),
    )
    parts.append(table(view, "Block-size sweeps", numeric=("Block size",)))
    return Section(saturation(points), parts)


def saturation(points: pl.DataFrame) -> list[str]:
    """Per block-size sweep: the smallest block reaching 95 % of the peak MB/s, and the
    block of the peak IOPS (``points``: rows of :attr:`DriveAnalysis.blocksizes`, with
    ``ioengine`` when known)."""
    sentences = []
    for (_,), rows in points.group_by("sweep", maintain_order=True):
        rows = rows.drop_nulls("bw_bytes_s").sort("bs_bytes")
        if rows.height < 2:
            continue
        first = rows.row(0, named=True)
        peak = rows.sort("bw_bytes_s", descending=True).row(0, named=True)
        near = rows.filter(pl.col("bw_bytes_s") >= 0.95 * peak["bw_bytes_s"]).row(0, named=True)
        busiest = rows.sort("iops", descending=True).row(0, named=True)
        caveat = depth_caveat(rows.to_dicts())
        depth = f" ({caveat})" if caveat else f" at {qd_phrase(first['iodepth'], first['numjobs'])}"
        subject = f"{first['pattern'].capitalize()} {first['direction']}s{depth}"
        most = f"{format_bw(peak['bw_bytes_s'])} at {bs_label(peak['bs_bytes'])}"
        if near["bs_bytes"] < peak["bs_bytes"]:
            throughput = (
                f"reach 95 % of their peak throughput from {bs_label(near['bs_bytes'])} blocks "
                f"({format_bw(near['bw_bytes_s'])}; the peak is {most})"
            )
        else:
            throughput = f"reach their peak throughput, {most} blocks"
        sentences.append(
            f"{subject} {throughput}; IOPS peak at {bs_label(busiest['bs_bytes'])} "
            f"({format_iops(busiest['iops'])})."
        )
    return sentences

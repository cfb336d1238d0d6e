"""Latency under load: load sweeps (the hockey stick), the SNIA DIRTH grid, and the drives'
load sweeps side by side (figures: :mod:`ssdlab.analysis.load`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from ..analysis.drive import DriveAnalysis
from ..analysis.load import dirth as dirth_figures
from ..analysis.load import load_sweeps
from ..analysis.percentiles import ios_needed
from ..charts import ACCENT, WIDTH, axis, latency_y
from ..findings import count
from ..phrases import rephrase
from ..tables import format_iops, format_latency
from .section import Section, table

if TYPE_CHECKING:
    from .compare import Comparison

#: the latency series of the hockey stick, by column
STATS = {"lat_p50_ns": "p50", "lat_p99_ns": "p99", "lat_p99_99_ns": "p99.99"}
NO_SWEEPS = (
    "No load sweeps: the run has no rate-limited steps (a suite step with a sweep item, as in the "
    "latency-load suite)."
)


def _us(column: str) -> pl.Expr:
    return (pl.col(column) / 1e3).alias(column.removesuffix("_ns") + "_us")


def hockey_stick(points: pl.DataFrame, color: str = "stat") -> alt.FacetChart:
    """p50/p99/p99.99 (µs, log) against achieved IOPS, one panel per sweep; ``color``:
    ``stat`` (one drive) or ``series`` (drives, p99.99 only)."""
    long = points.unpivot(
        index=[c for c in ("series", "workload", "step", "role", "achieved_iops") if c in points],
        on=list(STATS),
        variable_name="stat",
        value_name="lat_ns",
    ).filter(pl.col("lat_ns") > 0)
    long = long.with_columns(
        pl.col("stat").replace_strict(STATS), (pl.col("lat_ns") / 1e3).alias("us")
    ).drop("lat_ns")
    if color == "series":
        long = long.filter(pl.col("stat") == "p99.99")
    order = list(STATS.values()) if color == "stat" else None
    base = alt.Chart(long).encode(
        x=alt.X("achieved_iops:Q", title="Achieved IOPS", axis=axis(WIDTH // 2)),
        y=latency_y(),
        color=alt.Color(
            f"{color}:N",
            sort=order,
            title=None,
            legend=alt.Legend(orient="bottom"),
            scale=alt.Scale(scheme="tableau10"),
        ),
        tooltip=[
            alt.Tooltip("step:N", title="Step"),
            alt.Tooltip(f"{color}:N", title="Series"),
            alt.Tooltip("achieved_iops:Q", title="IOPS", format=",.0f"),
            alt.Tooltip("us:Q", title="µs", format=",.1f"),
        ],
    )
    lines = base.mark_line().encode(order="achieved_iops:Q")
    dots = base.mark_point(filled=True, size=40).encode(
        shape=alt.Shape("role:N", title=None, legend=alt.Legend(orient="bottom"))
    )
    return (
        alt.layer(lines, dots, data=long)
        .properties(width=WIDTH // 2, height=220)
        .facet(facet=alt.Facet("workload:N", title=None), columns=2)
        .resolve_scale(x="independent")
        .properties(title="Latency against offered load")
    )


def _point_table(points: pl.DataFrame) -> Any:
    view = points.select(
        pl.col("workload").alias("Workload"),
        pl.col("step").alias("Step"),
        pl.col("requested_iops").round(0).alias("Requested IOPS"),
        pl.col("achieved_iops").round(0).alias("Achieved IOPS"),
        pl.concat_str(
            pl.when(pl.col("reached").is_null())
            .then(pl.lit("unlimited"))
            .when(pl.col("reached"))
            .then(pl.lit("yes"))
            .otherwise(pl.lit("MISSED")),
            pl.when(pl.col("rounding").is_not_null())
            .then(_change_pct().map_elements(lambda c: f" (ROUNDED {c:+.1f} %)", pl.String))
            .otherwise(pl.lit("")),
        ).alias("Rate reached"),
        *(
            (pl.col(c) / 1e3).round(1).alias(f"{name} (µs)")
            for c, name in [("lat_mean_ns", "Mean"), *STATS.items()]
        ),
    )
    return table(view, "Load sweep steps (completion latency, all jobs and directions)")


def _missed(points: pl.DataFrame) -> list[str]:
    missed = points.filter(pl.col("reached").not_())
    sentences = []
    for row in missed.head(4).iter_rows(named=True):
        share = row["achieved_iops"] / row["requested_iops"] * 100
        sentences.append(
            f"{row['step']} missed its rate: {format_iops(row['achieved_iops'])} of "
            f"{format_iops(row['requested_iops'])} requested ({share:.1f} %, needs "
            f"{row['reach'] * 100:g} %); its latency is that of a saturated drive, not of "
            "the load asked for."
        )
    if missed.height > 4:
        sentences.append(f"{count(missed.height - 4, 'more step')} missed their rate too.")
    return sentences


def _change_pct() -> pl.Expr:
    """How far a rate step's offered load is from the load asked for, in percent."""
    return (pl.col("requested_iops") / pl.col("target_iops") - 1) * 100


def _rounded(points: pl.DataFrame) -> list[str]:
    """The steps whose whole per-job rates offer a load other than the one asked for."""
    rounded = points.filter(pl.col("rounding").is_not_null()).with_columns(change=_change_pct())
    return [
        f"{row['step']} offers {format_iops(row['requested_iops'])}, {row['change']:+.1f} % off "
        f"the {format_iops(row['target_iops'])} asked: fio's rate_iops is whole IOPS per job "
        "and direction, never zero; its latency is that of the load offered."
        for row in rounded.iter_rows(named=True)
    ]


def load_section(drive: DriveAnalysis) -> Section:
    """The hockey stick of every load sweep, its steps, the highest load that keeps p99.99
    under the limit, the knee, the steps that missed their rate and those whose rate
    rounding moved (ROUNDED in the table)."""
    sweeps = load_sweeps(drive.results)
    points = sweeps.points
    if not points.height:
        return Section(missing=NO_SWEEPS)
    limit = format_latency(sweeps.limit_ns)
    sentences = []
    for row in sweeps.sweeps.iter_rows(named=True):
        top = f" of its {format_iops(row['max_iops'])} maximum" if row["max_iops"] else ""
        if row["qos_iops"] is not None:
            share = f" ({row['qos_iops'] / row['max_iops'] * 100:.0f} %{top})" if top else ""
            said = (
                f"{rephrase(row['workload'])} keeps p99.99 under {limit} up to "
                f"{format_iops(row['qos_iops'])}{share}"
            )
        else:
            said = f"{rephrase(row['workload'])} never keeps p99.99 under {limit}"
        if row["knee_iops"] is not None:
            said += (
                f"; its p99 bends (the knee) after {format_iops(row['knee_iops'])} at "
                f"{format_latency(row['knee_p99_ns'])}"
            )
        else:
            said += "; its p99 does not bend (no knee) up to the highest load measured"
        sentences.append(said + ".")
    sentences += _missed(points) + _rounded(points)
    few = points.filter(pl.col("ios") < ios_needed(99.99))
    if few.height:
        sentences.append(
            f"{count(few.height, 'step')} measured fewer than {ios_needed(99.99):,} I/Os: "
            "their p99.99 is close to their slowest I/O, not a settled percentile."
        )
    return Section(sentences, [hockey_stick(points), _point_table(points)])


# -- DIRTH -----------------------------------------------------------------------------------


def _dirth_chart(cells: pl.DataFrame, point: dict | None) -> alt.FacetChart:
    long = (
        cells.select("threads", "qd", "step", "iops", "art_ns", "p99_999_ns", "max_ns")
        .unpivot(index=["threads", "qd", "step", "iops"], variable_name="stat", value_name="ns")
        .filter(pl.col("ns") > 0)
        .with_columns(
            pl.col("stat").replace_strict(
                {"art_ns": "ART", "p99_999_ns": "99.999 %", "max_ns": "Maximum"}
            ),
            (pl.col("ns") / 1e3).alias("us"),
            pl.format("T{}", pl.col("threads")).alias("series"),
        )
        .drop("ns")
    )
    order = [f"T{t}" for t in sorted(cells["threads"].unique().to_list())]
    base = alt.Chart(long).encode(
        x=alt.X("iops:Q", title="IOPS", axis=axis(WIDTH // 3)),
        y=alt.Y("us:Q", scale=alt.Scale(type="log"), title="Response time (µs, log)"),
        color=alt.Color("series:N", sort=order, title="Threads", scale=alt.Scale(scheme="viridis")),
        tooltip=[
            alt.Tooltip("step:N", title="Step"),
            alt.Tooltip("qd:Q", title="QD per thread"),
            alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
            alt.Tooltip("us:Q", title="µs", format=",.1f"),
        ],
    )
    lines = base.mark_line(point=True).encode(order="qd:Q")
    layers = [lines]
    if point is not None:  # the operating point, marked in every panel
        layers.append(
            base.transform_filter(alt.datum.step == point["step"]).mark_point(
                shape="diamond", size=160, color=ACCENT, filled=False, strokeWidth=2
            )
        )
    return (
        alt.layer(*layers, data=long)
        .properties(width=WIDTH // 3, height=220)
        .facet(column=alt.Column("stat:N", title=None, sort=["ART", "99.999 %", "Maximum"]))
        .resolve_scale(y="independent")
        .properties(title="Demand intensity: response time against IOPS per thread count")
    )


def _histogram_chart(histogram: pl.DataFrame, label: str) -> alt.Chart:
    data = histogram.with_columns(
        (pl.col("lat_ns") / 1e3).alias("from_us"),
        (pl.col("upper_ns") / 1e3).alias("to_us"),
        (pl.col("share") * 100).alias("pct"),
    ).select("from_us", "to_us", "pct", "count")
    return (
        alt.Chart(data)
        .mark_rect(color=ACCENT)
        .encode(
            x=alt.X("from_us:Q", scale=alt.Scale(type="log"), title="Response time (µs, log)"),
            x2="to_us:Q",
            y=alt.Y("pct:Q", title="I/Os (%)", axis=axis()),
            tooltip=[
                alt.Tooltip("from_us:Q", title="From µs", format=",.1f"),
                alt.Tooltip("to_us:Q", title="To µs", format=",.1f"),
                alt.Tooltip("count:Q", title="I/Os", format=","),
            ],
        )
        .properties(width=WIDTH, height=180, title=f"Response-time histogram at {label}")
    )


def dirth_section(drive: DriveAnalysis) -> Section:
    """SNIA DIRTH: ART, 99.999 % and maximum response time against IOPS per thread count,
    the operating point (the most IOPS with ART under the ceiling) and its histogram."""
    found = dirth_figures(drive.results)
    cells = found.cells
    if not cells.height:
        return Section(
            missing="No demand-intensity grid: the run has no workload measured at several "
            "thread counts with several queue depths each (the snia-dirth suite)."
        )
    ceiling = format_latency(found.ceiling_ns)
    point = found.point
    peak = cells.sort("iops").row(-1, named=True)
    sentences = [
        f"{count(cells.height, 'cell')} of {cells['workload'][0]}: "
        f"{count(cells['threads'].n_unique(), 'thread count')} x up to "
        f"{count(cells['qd'].n_unique(), 'queue depth')}; the most IOPS, "
        f"{format_iops(peak['iops'])}, at ART {format_latency(peak['art_ns'])}."
    ]
    parts: list[Any] = [_dirth_chart(cells, point)]
    if point is not None:
        label = f"T{point['threads']} QD{point['qd']}"
        sentences.append(
            f"Operating point {label}: {format_iops(point['iops'])} with ART "
            f"{format_latency(point['art_ns'])} (ceiling {ceiling}), 99.999 % "
            f"{format_latency(point['p99_999_ns'])}, maximum {format_latency(point['max_ns'])}."
        )
        if found.histogram.height:
            parts.append(_histogram_chart(found.histogram, label))
    else:
        sentences.append(f"No cell kept its ART under {ceiling}: there is no operating point.")
    few = cells.filter(pl.col("ios") < ios_needed(99.999))
    if few.height:
        sentences.append(
            f"{count(few.height, 'cell')} measured fewer than {ios_needed(99.999):,} I/Os: "
            "their 99.999 % is close to their slowest I/O, not a settled percentile."
        )
    view = cells.select(
        pl.col("threads").alias("Threads"),
        pl.col("qd").alias("QD per thread"),
        pl.col("iops").round(0).alias("IOPS"),
        (pl.col("art_ns") / 1e3).round(1).alias("ART (µs)"),
        (pl.col("p99_999_ns") / 1e3).round(1).alias("99.999 % (µs)"),
        (pl.col("max_ns") / 1e3).round(1).alias("Maximum (µs)"),
    )
    parts.append(table(view, "Demand intensity grid (completion latency)"))
    return Section(sentences, parts)


# -- comparison ------------------------------------------------------------------------------


def compare_load_section(cmp: Comparison) -> Section:
    """Each drive's load sweeps side by side: p99.99 against achieved IOPS, one line per
    drive and panel per workload, and per drive the highest load under the p99.99 limit."""
    frames, summaries = [], []
    limit_ns = None
    for run, name in zip(cmp.runs, cmp.names, strict=True):
        sweeps = load_sweeps(run)
        limit_ns = sweeps.limit_ns
        if sweeps.points.height:
            frames.append(sweeps.points.with_columns(series=pl.lit(name)))
            summaries.append(sweeps.sweeps.with_columns(drive=pl.lit(name)))
    if not frames:
        return Section(missing="No drive has load sweeps (rate-limited steps) to compare.")
    points = pl.concat(frames, how="vertical_relaxed")
    rows = pl.concat(summaries, how="vertical_relaxed")
    limit = format_latency(limit_ns)
    sentences = []
    for (workload,), part in rows.group_by("workload", maintain_order=True):
        ranked = part.filter(pl.col("qos_iops").is_not_null()).sort("qos_iops", descending=True)
        if ranked.height:
            best = ranked.row(0, named=True)
            sentences.append(
                f"{rephrase(workload)}: {best['drive']} keeps p99.99 under {limit} to the "
                "highest load, "
                f"{format_iops(best['qos_iops'])}"
                + (f", of {count(part.height, 'drive')} measured." if part.height > 1 else ".")
            )
        else:
            sentences.append(f"{rephrase(workload)}: no drive keeps p99.99 under {limit}.")
    view = rows.select(
        pl.col("drive").alias("Drive"),
        pl.col("workload").alias("Workload"),
        pl.col("max_iops").round(0).alias("Maximum IOPS"),
        pl.col("qos_iops").round(0).alias(f"IOPS with p99.99 < {limit}"),
        pl.col("knee_iops").round(0).alias("Knee IOPS"),
        pl.col("missed").list.len().alias("Rates missed"),
    )
    return Section(
        sentences,
        [hockey_stick(points, color="series"), table(view, "Load sweeps per drive")],
    )

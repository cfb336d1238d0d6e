"""The repeatability section: each repeated step's median and 95 % interval (``--repeat``)."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from ..analysis.drive import DriveAnalysis
from ..analysis.repeats import (
    LATENCY_PERCENTILES,
    POWER_FIGURES,
    planned_repeats,
    repeat_figures,
    repeats_found,
    step_totals,
    with_repeats,
)
from ..charts import ACCENT, WIDTH, axis
from ..findings import count
from ..phrases import rephrase
from ..tables import format_interval, format_latency, format_number, format_unit, latency_cells
from ..units import MB
from .section import Section, table

#: a spread of repeats (standard deviation over mean) above this is pointed out, as
#: pbench-fio's default ``--max-stddev``
SPREAD_LIMIT_PCT = 5.0


def _labels(drive: DriveAnalysis) -> pl.DataFrame:
    """Per measured step (its name without a repeat suffix): ``workload`` (workload and QD)
    and ``metric``."""
    return drive.classified.group_by("step", maintain_order=True).agg(
        pl.concat_str("workload", pl.lit(" "), "qd_label").first().alias("workload"),
        pl.first("metric"),
    )


def _in_suite_order(figures: pl.DataFrame, drive: DriveAnalysis) -> pl.DataFrame:
    """Per-step ``figures`` (``repeat_of``) labelled (:func:`_labels`, measured steps only),
    in suite order: by each step's first repeat."""
    first = with_repeats(drive.every_repeat).group_by("repeat_of").agg(pl.col("step_index").min())
    return (
        figures.join(_labels(drive), left_on="repeat_of", right_on="step")
        .join(first, on="repeat_of")
        .sort("step_index")
    )


def repeat_rows(drive: DriveAnalysis) -> pl.DataFrame:
    """Per repeated measured step: ``step`` (its name without a repeat suffix), its workload,
    ``metric`` (IOPS or MB/s), ``repeats``,
    ``median``, ``lo95``, ``hi95`` (in that metric) and ``spread_pct``; the steps a step's
    directions add up to one figure, as the review's headline figures do."""
    if not drive.steps.height:
        return pl.DataFrame()
    figures = repeat_figures(step_totals(drive.every_repeat))
    if not figures.height:
        return figures
    rows = _in_suite_order(figures, drive)
    mbs = pl.col("metric") == "MB/s"

    def pick(stat: str) -> pl.Expr:
        return pl.when(mbs).then(pl.col(f"bw_bytes_s_{stat}") / MB).otherwise(f"iops_{stat}")

    return rows.select(
        pl.col("repeat_of").alias("step"),
        "workload",
        "metric",
        "repeats",
        median=pick("median"),
        lo95=pick("lo95"),
        hi95=pick("hi95"),
        spread_pct=pl.when(mbs).then("bw_bytes_s_spread_pct").otherwise("iops_spread_pct"),
    )


def latency_repeats_table(found: pl.DataFrame) -> Any | None:
    """The latency percentiles of the review's repeated latency steps: the median of fio's
    percentile over the repeats and its 95 % interval, ``found`` by
    :func:`~ssdlab.analysis.repeats.percentile_intervals`; None without repeats."""
    if not found.height:
        return None
    cells = found.with_columns(cell=latency_cells("median_ns", low="lo95_ns", high="hi95_ns"))
    names = list(LATENCY_PERCENTILES)
    view = (
        cells.pivot(on="name", index=["series", "repeats"], values="cell", sort_columns=False)
        .rename({"series": "Workload", "repeats": "Repeats"})
        .select("Workload", "Repeats", *(n for n in names if n in cells["name"].unique()))
    )
    caption = "Completion latency over the repeats: median and 95 % interval (on logarithms)"
    return table(view, caption, numeric=tuple(names))


def power_repeats_table(drive: DriveAnalysis) -> Any | None:
    """Average power and efficiency of the repeated measured steps: the median over the
    repeats and its 95 % interval (:func:`~ssdlab.analysis.repeats.power_figures`); None
    without repeats or power."""
    figures = drive.repeat_power
    if not figures.height:
        return None
    rows = _in_suite_order(figures, drive)
    units = {"avg_w": "W", "iops_per_w": "IOPS/W", "mb_s_per_w": "MB/s/W"}
    shown = [f for f in POWER_FIGURES if rows[f"{f}_median"].drop_nulls().len()]
    if not rows.height or not shown:
        return None
    view = rows.select(
        pl.col("workload").alias("Workload"),
        pl.col("repeats").alias("Repeats"),
        *(
            pl.struct(f"{f}_median", f"{f}_lo95", f"{f}_hi95")
            .map_elements(
                lambda r, f=f: format_interval(
                    r[f"{f}_median"],
                    r[f"{f}_lo95"],
                    r[f"{f}_hi95"],
                    lambda v, f=f: format_unit(v, units[f]),
                ),
                return_dtype=pl.String,
            )
            .alias(units[f])
            for f in shown
        ),
    )
    caption = "Power over the repeats: median and 95 % interval"
    return table(view, caption, numeric=tuple(units[f] for f in shown))


def _chart(rows: pl.DataFrame) -> Any:
    """Medians with their 95 % intervals, one panel per metric."""
    base = alt.Chart(rows).encode(
        y=alt.Y("workload:N", sort=None, title=None, axis=axis(labelLimit=260)),
        tooltip=[
            alt.Tooltip("workload:N", title="Workload"),
            alt.Tooltip("median:Q", title="Median", format=",.1f"),
            alt.Tooltip("lo95:Q", title="95 % from", format=",.1f"),
            alt.Tooltip("hi95:Q", title="95 % to", format=",.1f"),
            alt.Tooltip("repeats:Q", title="Repeats"),
        ],
    )
    x = alt.X("median:Q", title=None, axis=axis(WIDTH // 2), scale=alt.Scale(zero=False))
    bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("lo95:Q", title=None), x2="hi95:Q")
    points = base.mark_point(filled=True, color=ACCENT, size=50).encode(x=x)
    return (
        alt.layer(bars, points)
        .properties(width=WIDTH // 2, height=alt.Step(22))
        .facet(row=alt.Row("metric:N", title=None), spacing=16)
        .resolve_scale(x="independent", y="independent")
        .properties(title="Median and 95 % interval of each repeated step")
    )


def _short(drive: DriveAnalysis, planned: dict[str, int]) -> list[str]:
    """``<workload> (<step>): k of n repeats`` of each repeated measured step some of whose
    repeats are not among its results (:func:`~ssdlab.analysis.repeats.repeats_found`), in
    suite order."""
    labels = dict(_labels(drive).select("step", "workload").iter_rows())
    found = repeats_found(drive.every_repeat, planned)
    short = []
    for row in found.filter(pl.col("found") < pl.col("planned")).iter_rows(named=True):
        step = row["step"]
        label = next((labels[n] for n in [step, *row["names"]] if n in labels), None)
        if label is not None:
            short.append(f"{rephrase(label)} ({step}): {row['found']} of {row['planned']} repeats")
    return short


def repeatability_section(drive: DriveAnalysis) -> Section:
    """Each repeated step's median, 95 % interval and spread; steps whose repeats spread
    more than :data:`SPREAD_LIMIT_PCT` are named."""
    rows = repeat_rows(drive)
    if not rows.height:
        return Section(
            missing="No repeated steps: run with --repeat N to measure the run-to-run noise "
            "of every figure."
        )
    planned = planned_repeats(drive.results.manifest)
    ran = [max(planned.get(step, n), n) for step, n in rows.select("step", "repeats").iter_rows()]
    low, high = min(ran), max(ran)
    times = f"{high} times each" if low == high else f"{low} to {high} times"
    wide = rows.filter(pl.col("spread_pct") > SPREAD_LIMIT_PCT)
    sentences = [
        f"{count(rows.height, 'step')} ran {times} (interleaved). Elsewhere in this review a "
        "repeated step is shown by its median repeat by IOPS: one real fio run, whose other "
        "figures (latency percentiles too) are that run's own, not their medians; the tables "
        "here give each figure's own median over the repeats."
    ]
    if short := _short(drive, planned):
        sentences.append(
            "Not every repeat is among the results (a repeat that failed or could not be "
            f"read is left out): {'; '.join(short)}."
        )
    for row in wide.sort("spread_pct", descending=True).head(3).iter_rows(named=True):
        sentences.append(
            f"{rephrase(row['workload'])} spread {row['spread_pct']:.1f} % over "
            f"{row['repeats']} repeats (above {SPREAD_LIMIT_PCT:g} %): its figures are less "
            "certain than the others."
        )
    if not wide.height:
        sentences.append(
            f"Every repeated step spread at most {rows['spread_pct'].max():.1f} % "
            f"(standard deviation over mean)."
        )
    view = rows.select(
        pl.col("workload").alias("Workload"),
        pl.col("repeats").alias("Repeats"),
        pl.struct("median", "metric")
        .map_elements(lambda r: f"{format_number(r['median'])} {r['metric']}", pl.String)
        .alias("Median"),
        pl.struct("lo95", "hi95")
        .map_elements(
            lambda r: f"{format_number(r['lo95'])} – {format_number(r['hi95'])}", pl.String
        )
        .alias("95 % interval"),
        pl.col("spread_pct").round(1).alias("Spread (%)"),
    )
    percentiles = drive.repeat_percentiles
    widest = percentiles.filter(pl.col("lo95_ns") > 0).sort(
        pl.col("hi95_ns") / pl.col("lo95_ns"), descending=True
    )
    if widest.height:
        row = widest.row(0, named=True)
        sentences.append(
            f"The widest latency interval is the {row['name']} of {rephrase(row['series'])}: "
            f"{format_latency(row['lo95_ns'])} to {format_latency(row['hi95_ns'])} (95 %, "
            f"{count(row['repeats'], 'repeat')}); tail percentiles need more repeats than "
            "throughput to be pinned down."
        )
    parts = [_chart(rows), table(view, "Repeats", numeric=("Median", "95 % interval"))]
    latency = latency_repeats_table(percentiles)
    parts += [t for t in (latency, power_repeats_table(drive)) if t is not None]
    return Section(sentences, parts)

"""The repeatability section: each repeated step's median and 95 % interval (``--repeat``)."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from ..analysis.drive import DriveAnalysis
from ..analysis.repeats import repeat_figures, with_repeats
from ..charts import ACCENT, WIDTH, axis
from ..findings import count
from ..tables import format_number
from ..units import MB
from .section import Section, table

#: a spread of repeats (standard deviation over mean) above this is pointed out, as
#: pbench-fio's default ``--max-stddev``
SPREAD_LIMIT_PCT = 5.0


def repeat_rows(drive: DriveAnalysis) -> pl.DataFrame:
    """Per repeated measured step: its workload, ``metric`` (IOPS or MB/s), ``repeats``,
    ``median``, ``lo95``, ``hi95`` (in that metric) and ``spread_pct``; the steps a step's
    directions add up to one figure, as the review's headline figures do."""
    every = drive.every_repeat
    if not drive.steps.height:
        return pl.DataFrame()
    totals = every.group_by("step_index", "step", maintain_order=True).agg(
        pl.col("iops").fill_null(0).sum(), pl.col("bw_bytes_s").fill_null(0).sum()
    )
    figures = repeat_figures(totals.with_columns(direction=pl.lit("all")))
    if not figures.height:
        return figures
    labels = drive.classified.group_by("step", maintain_order=True).agg(
        pl.concat_str("workload", pl.lit(" "), "qd_label").first().alias("workload"),
        pl.first("metric"),
    )
    # in suite order: by each step's first repeat
    first = with_repeats(totals).group_by("repeat_of").agg(pl.col("step_index").min())
    rows = (
        figures.join(labels, left_on="repeat_of", right_on="step")
        .join(first, on="repeat_of")
        .sort("step_index")
    )
    mbs = pl.col("metric") == "MB/s"

    def pick(stat: str) -> pl.Expr:
        return pl.when(mbs).then(pl.col(f"bw_bytes_s_{stat}") / MB).otherwise(f"iops_{stat}")

    return rows.select(
        "workload",
        "metric",
        "repeats",
        median=pick("median"),
        lo95=pick("lo95"),
        hi95=pick("hi95"),
        spread_pct=pl.when(mbs).then("bw_bytes_s_spread_pct").otherwise("iops_spread_pct"),
    )


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


def repeatability_section(drive: DriveAnalysis) -> Section:
    """Each repeated step's median, 95 % interval and spread; steps whose repeats spread
    more than :data:`SPREAD_LIMIT_PCT` are named."""
    rows = repeat_rows(drive)
    if not rows.height:
        return Section(
            missing="No repeated steps: run with --repeat N to measure the run-to-run noise "
            "of every figure."
        )
    sentences = []
    low, high = rows["repeats"].min(), rows["repeats"].max()
    times = f"{high} times each" if low == high else f"{low} to {high} times"
    wide = rows.filter(pl.col("spread_pct") > SPREAD_LIMIT_PCT)
    sentences.append(
        f"{count(rows.height, 'step')} ran {times} (interleaved); each figure of this "
        "review is its median repeat, one real fio run."
    )
    for row in wide.sort("spread_pct", descending=True).head(3).iter_rows(named=True):
        sentences.append(
            f"{row['workload']} spread {row['spread_pct']:.1f} % over {row['repeats']} repeats "
            f"(above {SPREAD_LIMIT_PCT:g} %): its figures are less certain than the others."
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
    return Section(
        sentences,
        [_chart(rows), table(view, "Repeats", numeric=("Median", "95 % interval"))],
    )

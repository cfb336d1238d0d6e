"""Latency sections from fio's histograms: percentiles over time (from the histogram logs,
``latency_intervals``) and the exceedance curve (the share of I/Os at least as slow as each
latency, from the json+ bins, ``latency_hist``), for one drive and overlaid for several.

Which steps are shown: for one drive, the QoS choice of the latency section
(:func:`~ssdlab.analysis.latency.qos_choice`: the lowest and highest QD of each QD sweep, the
mix nearest 70/30) and, over time, the consistency runs (long random writes); for a
comparison, the QoS choice among the cells the drives ran like for like
(:attr:`~ssdlab.analysis.ComparisonAnalysis.classified`), the subject's first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import altair as alt
import numpy as np
import polars as pl

from ..analysis.compare import CELL_KEYS
from ..analysis.drive import DriveAnalysis
from ..analysis.exceedance import MIN_COVERAGE_PCT, SHARE_STEP, exceedance
from ..analysis.latency import (
    INTERVAL_KEYS,
    MAX_TIME_SERIES,
    MIN_SEGMENT,
    downsample_intervals,
    drive_intervals,
    interval_column,
    latency_shifts,
    qos_choice,
    time_choice,
)
from ..charts import WIDTH, axis
from ..phrases import rephrase
from ..tables import format_latency
from ..units import format_duration
from ..vocab import DIRECTIONS
from .section import Section, table

if TYPE_CHECKING:
    from .compare import Comparison

NO_LOGS = (
    "No latency histogram logs: the run has no interval of fio's completion-latency "
    "histogram logs (ssdlab runs log one every second, so a step must run a second or more; "
    "an import needs fio's *_clat_hist.*.log files, from jobs with write_hist_log and "
    "log_hist_msec)."
)
NO_HIST = (
    "No exceedance curve: fio's output has no completion-latency histogram (run fio with "
    "--output-format=json+)."
)
#: the statistics drawn over time: latency_intervals column -> legend name
TIME_STATS = {
    interval_column(50): "p50",
    interval_column(99): "p99",
    interval_column(99.9): "p99.9",
    interval_column(99.99): "p99.99",
    "lat_max_ns": "max",
}
#: p50 blue, p99 orange, p99.9 red, p99.99 purple, max dark grey
STAT_COLORS = ["#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#4d4d4d"]
#: a latency axis in µs, labelled in µs, ms or s
LATENCY_LABELS = (
    "datum.value >= 1e6 ? format(datum.value / 1e6, '~g') + ' s' : datum.value >= 1e3 ? "
    "format(datum.value / 1e3, '~g') + ' ms' : format(datum.value, '~g') + ' µs'"
)
#: the line of each direction: reads solid, writes dashed
DASHES = {"read": [1, 0], "write": [6, 3], "trim": [2, 2]}
SHARE_LABELS = "format(datum.value * 100, '~g') + ' %'"
#: latencies whose exceedance a finding quotes: the two highest decades a curve reaches
DECADES_NS = tuple(10.0**k for k in range(3, 11))


# -- charts ----------------------------------------------------------------------------------


def _us_axis(title: str, length: int | None = None, values: list[float] | None = None) -> alt.Axis:
    """A log latency axis in µs labelled in µs, ms or s; ticks at ``values`` when given."""
    ticks = {} if values is None else {"values": values}
    return axis(length, title=title, labelExpr=LATENCY_LABELS, **ticks)


def _decades_us(frame: pl.DataFrame) -> list[float]:
    """The powers of ten (in µs) spanning every positive value of ``frame``."""
    values = np.concatenate([frame[c].drop_nulls().to_numpy() for c in frame.columns])
    values = values[values > 0]
    if not values.size:
        return [1.0]
    low, high = np.floor(np.log10(values.min())), np.ceil(np.log10(values.max()))
    return [10.0**k for k in range(int(low), int(high) + 1)]


def over_time_chart(
    data: pl.DataFrame, order: Sequence[str], title: str, subtitle: str | None = None
) -> alt.FacetChart:
    """Latency percentiles over time, one panel per ``series`` (log latency, µs/ms labels).

    ``data``: ``series``, ``t_s``, ``intervals`` and the :data:`TIME_STATS` columns (ns)."""
    names = list(TIME_STATS.values())
    wide = data.select(
        "series",
        "t_s",
        "intervals",
        *(
            pl.when(pl.col(c) > 0).then(pl.col(c) / 1e3).alias(name.replace(".", "_"))
            for c, name in TIME_STATS.items()
        ),
    )
    folded = [n.replace(".", "_") for n in names]
    lines = (
        alt.Chart(wide)
        .transform_fold(folded, as_=["key", "us"])
        .transform_calculate(stat="replace(datum.key, '_', '.')")
        .mark_line(strokeWidth=1.4)
        .encode(
            x=alt.X("t_s:Q", title="Time (s)", axis=axis(WIDTH - 220)),
            y=alt.Y(
                "us:Q",
                scale=alt.Scale(type="log"),
                axis=_us_axis("Latency (log)", values=_decades_us(wide.select(folded))),
            ),
            color=alt.Color(
                "stat:N", sort=names, title="Statistic", scale=alt.Scale(range=STAT_COLORS)
            ),
            tooltip=[
                alt.Tooltip("series:N", title="Workload"),
                alt.Tooltip("t_s:Q", title="t (s)", format=",.2f"),
                alt.Tooltip("stat:N", title="Statistic"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
                alt.Tooltip("intervals:Q", title="Intervals merged"),
            ],
        )
        .properties(width=WIDTH - 220, height=160)
    )
    return (
        lines.facet(row=alt.Row("series:N", sort=list(order), title=None))
        .resolve_scale(x="independent")
        .properties(title=alt.Title(title, subtitle=subtitle) if subtitle else title)
    )


def exceedance_chart(
    curve: pl.DataFrame,
    order: Sequence[str],
    title: str,
    *,
    legend: str | None = None,
    subject: str | None = None,
    subtitle: str | None = None,
) -> alt.Chart:
    """Share of I/Os at least as slow as each latency, log-log, drawn as fio's bins fall
    (step-before); one line per ``series``, dashed for writes; ``subtitle`` a note under
    the title.

    ``curve``: ``series``, ``direction``, ``lat_ns``, ``slower_ios``, ``share``."""
    data = curve.filter(pl.col("lat_ns") > 0).select(
        "series",
        "direction",
        "slower_ios",
        "share",
        us=pl.col("lat_ns") / 1e3,
        latency=pl.col("lat_ns").map_elements(format_latency, return_dtype=pl.String),
    )
    directions = [d for d in DIRECTIONS if d in set(data["direction"].to_list())]
    lowest = data["share"].min() if data.height else 1.0
    decades = [10.0**-k for k in range(int(np.ceil(-np.log10(lowest))) + 1)]
    width = (
        alt.value(2.0)
        if subject is None
        else alt.condition(alt.datum.series == subject, alt.value(3.2), alt.value(1.4))
    )
    return (
        alt.Chart(data)
        .mark_line(interpolate="step-before")
        .encode(
            x=alt.X("us:Q", scale=alt.Scale(type="log"), axis=_us_axis("Latency", WIDTH - 240)),
            y=alt.Y(
                "share:Q",
                scale=alt.Scale(type="log", domain=[decades[-1], 1.0]),
                axis=axis(
                    title="I/Os at least this slow (log)", values=decades, labelExpr=SHARE_LABELS
                ),
            ),
            color=alt.Color(
                "series:N",
                sort=list(order),
                title=legend,
                legend=alt.Legend(orient="right", labelLimit=260),
            ),
            strokeDash=alt.StrokeDash(
                "direction:N",
                scale=alt.Scale(domain=directions, range=[DASHES[d] for d in directions]),
                title="Direction",
            ),
            strokeWidth=width,
            tooltip=[
                alt.Tooltip("series:N", title=legend or "Workload"),
                alt.Tooltip("direction:N", title="Direction"),
                alt.Tooltip("latency:N", title="Latency (fio's bin)"),
                alt.Tooltip("share:Q", title="Share at least as slow", format=".4~%"),
                alt.Tooltip("slower_ios:Q", title="I/Os", format=",d"),
            ],
        )
        .properties(
            width=WIDTH - 240,
            height=300,
            title=alt.Title(title, subtitle=subtitle) if subtitle else title,
        )
    )


# -- sentences -------------------------------------------------------------------------------


def _share_text(share: float) -> str:
    """``0.87 %``, ``0.0035 %``: a share as a percentage with two significant digits."""
    return np.format_float_positional(100 * share, precision=2, fractional=False, trim="-") + " %"


def _interval_text(interval_ms: int) -> str:
    return "one-second" if interval_ms == 1000 else _length(interval_ms)


def _length(interval_ms: int) -> str:
    """``10 ms``, ``1 s``, ``5 min``: a histogram-log interval."""
    return f"{interval_ms:,} ms" if interval_ms < 1000 else format_duration(interval_ms / 1000)


def shift_sentence(phrase: str, row: dict[str, Any]) -> str:
    """What one tail percentile did over time (a row of
    :func:`~ssdlab.analysis.latency.latency_shifts`)."""
    stat = f"p{row['percentile']:g}"
    n, each = row["intervals"], _interval_text(row["interval_ms"])
    if row["shifted"]:
        verb = "rose" if row["after_ns"] > row["before_ns"] else "fell"
        return (
            f"{phrase}: {stat} {verb} from {format_latency(row['before_ns'])} to "
            f"{format_latency(row['after_ns'])} after {format_duration(row['shift_t_s'])} "
            f"(medians of its {n:,} {each} intervals before and after)."
        )
    if n == 1:
        return (
            f"{phrase}: {stat} was {format_latency(row['worst_ns'])} in its only {each} interval."
        )
    if n < 2 * MIN_SEGMENT:
        return (
            f"{phrase}: {stat} per {each} interval ranged from {format_latency(row['best_ns'])} "
            f"to {format_latency(row['worst_ns'])} over its {n:,} intervals."
        )
    return (
        f"{phrase}: {stat} stayed between {format_latency(row['low_ns'])} and "
        f"{format_latency(row['high_ns'])} in 80 % of its {n:,} {each} intervals; the worst "
        f"interval reached {format_latency(row['worst_ns'])} at "
        f"{format_duration(row['worst_t_s'])}."
    )


def share_at(curve: pl.DataFrame, lat_ns: float) -> tuple[float, float, int]:
    """(fio's first bin value at or above ``lat_ns``, its share, its I/Os) of one series'
    full exceedance curve; share 0 above the slowest bin."""
    above = curve.filter(pl.col("lat_ns") >= lat_ns)
    if not above.height:
        return lat_ns, 0.0, 0
    first = above.row(0, named=True)
    return first["lat_ns"], first["share"], first["slower_ios"]


def _reached(curve: pl.DataFrame) -> list[float]:
    """The decades (1 µs, 10 µs ...) a curve's slowest bin reaches beyond its fastest."""
    low, high = curve["lat_ns"].min(), curve["lat_ns"].max()
    return [d for d in DECADES_NS if low < d <= high]


def exceedance_sentence(phrase: str, curve: pl.DataFrame) -> str | None:
    """How many I/Os of one series took the two highest decades of latency it reached."""
    decades = _reached(curve)[-2:]
    if not decades:
        return None
    parts, seen = [], set()
    for decade in decades:
        at, share, ios = share_at(curve, decade)
        if at in seen:  # no bin between the two decades: one point, said once
            continue
        seen.add(at)
        count = f" ({ios:,} I/O{'s' if ios != 1 else ''})" if ios < 100 else ""
        parts.append(f"{_share_text(share)}{count} took {format_latency(at)} or longer")
    total = curve["ios"][0]
    return f"{phrase}: of its {total:,} I/Os, " + " and ".join(parts) + "."


# -- one drive -------------------------------------------------------------------------------


def _job_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """``series`` with `` · job N`` where a step has several job entries (imports)."""
    several = pl.col("job_index").n_unique().over("step_index", "direction") > 1
    suffix = pl.lit(" · job ") + pl.col("job_index").cast(pl.String)
    return frame.with_columns(
        series=pl.when(several).then(pl.col("series") + suffix).otherwise(pl.col("series"))
    )


def latency_over_time_section(drive: DriveAnalysis) -> Section:
    """pbench-style completion-latency percentiles over time (p50, p99, p99.9, p99.99, max;
    log axis) per chosen step (see the module), from the histogram logs, long runs
    downsampled (:func:`~ssdlab.analysis.latency.downsample_intervals`); findings on each
    step's tail percentile: a level shift, or the band it stayed in."""
    intervals = drive.results.latency_intervals
    if not intervals.height:
        return Section(missing=NO_LOGS)
    if not drive.classified.height:
        return Section(missing="No latency figures: the run has no measured read or write step.")
    runs = [r.step_index for r in drive.consistency]
    chosen = time_choice(drive.classified, drive.qos, runs, intervals)
    if not chosen.height:
        return Section(
            missing="No latency over time: no measured read or write step has histogram-log "
            "intervals."
        )
    mine = _job_labels(intervals.join(chosen, on=["step_index", "direction"]))
    labels = mine.select(*INTERVAL_KEYS, "series").unique(maintain_order=True)
    order = labels["series"].to_list()
    shifts = latency_shifts(mine).join(labels, on=list(INTERVAL_KEYS))
    shifts = shifts.sort(pl.col("shifted").not_(), maintain_order=True)
    sentences = [
        shift_sentence(rephrase(row["series"]), row) for row in shifts.iter_rows(named=True)
    ]
    data = downsample_intervals(mine).join(labels, on=list(INTERVAL_KEYS))
    merged = data["intervals"].max()
    note = (
        f"A point merges up to {merged} intervals: p99 and above their highest, p50 their median"
        if merged > 1
        else None
    )
    title = "Completion latency over time (from the histogram logs)"
    parts: list[Any] = [over_time_chart(data, order, title, note)]
    view = shifts.select(
        pl.col("series").alias("Workload"),
        pl.col("intervals").alias("Intervals"),
        pl.col("percentile")
        .map_elements(lambda p: f"p{p:g}", return_dtype=pl.String)
        .alias("Percentile"),
        (pl.col("low_ns") / 1e3).alias("p10 of intervals µs"),
        (pl.col("high_ns") / 1e3).alias("p90 of intervals µs"),
        (pl.col("worst_ns") / 1e3).alias("Worst µs"),
        pl.col("worst_t_s").alias("Worst at s"),
    )
    parts.append(table(view, "Tail percentile per interval (the deepest each interval resolves)"))
    return Section(sentences, parts)


def _curves(
    hist: pl.DataFrame,
    chosen: pl.DataFrame,
    step: float | None,
    summary: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Exceedance curves of the ``chosen`` steps and directions of ``hist``, with the
    ``chosen`` columns; thinned by ``step`` (None: full); with ``summary``, their
    coverage of fio's I/O count."""
    keys = ["step_index", "direction"]
    mine = hist.join(chosen, on=keys, how="semi")
    return exceedance(mine, step=step, summary=summary).join(chosen, on=keys)


def coverage_sentence(phrase: str, row: dict[str, Any]) -> str:
    """That one series' curve counts only part of its I/Os (a row of a curve with
    ``ios``, ``ios_total`` and ``coverage_pct``)."""
    return (
        f"{phrase}: fio's histogram holds {row['coverage_pct']:.1f} % of its I/Os "
        f"({row['ios']:,} of the {row['ios_total']:,} I/Os fio counted), so its curve is not the "
        "whole step's."
    )


def exceedance_section(drive: DriveAnalysis) -> Section:
    """The share of I/Os at least as slow as each latency (log-log, from fio's json+ bins)
    per chosen step and direction, reads solid and writes dashed; findings on the I/Os at
    the highest decades of latency reached, and on each series whose bins hold under
    :data:`~ssdlab.analysis.exceedance.MIN_COVERAGE_PCT` of fio's I/O count (also noted
    under the chart: its curve is not the whole step's)."""
    if not drive.classified.height:
        return Section(missing="No latency figures: the run has no measured read or write step.")
    hist = drive.results.latency_hist
    if not hist.height:
        return Section(missing=NO_HIST)
    chosen = drive.qos.select("step_index", "direction", "series")
    full = _curves(hist, chosen, None, drive.results.summary)
    order = [s for s in chosen["series"].to_list() if s in set(full["series"].to_list())]
    if not order:
        return Section(missing=NO_HIST)
    partial = full.unique("series", maintain_order=True).filter(
        pl.col("coverage_pct") < MIN_COVERAGE_PCT
    )
    sentences = [
        sentence
        for series in order
        if (
            sentence := exceedance_sentence(
                rephrase(series), full.filter(pl.col("series") == series)
            )
        )
    ]
    sentences += [
        coverage_sentence(rephrase(r["series"]), r) for r in partial.iter_rows(named=True)
    ]
    note = "; ".join(
        f"{r['series']} holds {r['coverage_pct']:.1f} % of its I/Os"
        for r in partial.iter_rows(named=True)
    )
    chart = exceedance_chart(
        _curves(hist, chosen, SHARE_STEP),
        order,
        "Latency exceedance: share of I/Os at least as slow (from fio's histograms)",
        subtitle=f"Partial: {note} (under {MIN_COVERAGE_PCT:g} % of fio's count)" if note else None,
    )
    return Section(sentences, [chart])


# -- several drives --------------------------------------------------------------------------


_CELL_SCHEMA = {
    "series": pl.String,
    "label": pl.String,
    "step_index": pl.Int64,
    "direction": pl.String,
}


def common_cells(cmp: Comparison, limit: int = MAX_TIME_SERIES) -> pl.DataFrame:
    """Per cell the drives ran like for like and the QoS choice picks (among the subject's
    cells first, see the module), each drive's step: ``series`` (the cell), ``label`` (the
    drive), ``step_index``, ``direction``. At most ``limit`` cells."""
    cells = cmp.analysis.classified
    if not cells.height:
        return pl.DataFrame(schema=_CELL_SCHEMA)
    names = [n for n in (cmp.subject, *cmp.names) if n in set(cells["label"].to_list())]
    on = [*CELL_KEYS, "direction"]
    chosen = qos_choice(cells.filter(pl.col("label") == names[0])).select(*on, "series")
    return cells.join(chosen.head(limit), on=on).select(*_CELL_SCHEMA)


def _per_drive(
    cmp: Comparison,
    cells: pl.DataFrame,
    frame: str,
    build: Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame],
) -> pl.DataFrame:
    """``build(frame of one drive, its cells)`` for every drive with cells, with ``label``."""
    out = []
    for results, name in zip(cmp.runs, cmp.names, strict=True):
        mine = cells.filter(pl.col("label") == name).drop("label")
        data = getattr(results, frame)
        if mine.height and data.height:
            out.append(build(data, mine).with_columns(label=pl.lit(name)))
    return pl.concat(out, how="diagonal_relaxed") if out else pl.DataFrame()


def compare_exceedance_section(cmp: Comparison) -> Section:
    """Per cell the drives ran like for like (see :func:`common_cells`), each drive's
    exceedance curve overlaid, the subject drawn heavier; findings on the share of I/Os at
    the highest decade of latency every drive reached."""
    cells = common_cells(cmp)
    if not cells.height:
        return Section(
            missing="No exceedance curves to compare: two or more drives need the same "
            "workload measured like for like."
        )
    full = _per_drive(cmp, cells, "latency_hist", lambda h, c: _curves(h, c, None))
    if not full.height:
        return Section(missing=NO_HIST)
    thin = _per_drive(cmp, cells, "latency_hist", lambda h, c: _curves(h, c, SHARE_STEP))
    sentences, parts = [], []
    for (cell,), rows in full.group_by("series", maintain_order=True):
        drives = [n for n in cmp.names if n in set(rows["label"].to_list())]
        if len(drives) < 2:
            continue
        if sentence := _compare_sentence(rephrase(cell), rows, drives):
            sentences.append(sentence)
        curve = thin.filter(pl.col("series") == cell).with_columns(series=pl.col("label"))
        parts.append(
            exceedance_chart(
                curve,
                drives,
                f"{cell}: share of I/Os at least as slow",
                legend="Drive",
                subject=cmp.subject,
            )
        )
    if not parts:
        return Section(missing=NO_HIST)
    return Section(sentences, parts)


def _compare_sentence(phrase: str, rows: pl.DataFrame, drives: list[str]) -> str | None:
    """The share of each drive's I/Os at the highest decade every drive's curve reaches
    (fio's first bin at or above it; named per drive where the drives' bins differ)."""
    reached = [set(_reached(rows.filter(pl.col("label") == d))) for d in drives]
    common = sorted(set.intersection(*reached))
    if not common:
        return None
    found = [share_at(rows.filter(pl.col("label") == d), common[-1]) for d in drives]
    first = found[0][0]
    shares = [
        f"{name} {_share_text(share)}" + (f" (at {format_latency(at)})" if at != first else "")
        for name, (at, share, _) in zip(drives, found, strict=True)
    ]
    return f"{phrase}, I/Os taking {format_latency(first)} or longer: " + ", ".join(shares) + "."


def compare_over_time_chart(
    data: pl.DataFrame, column: str, stat: str, drives: Sequence[str], subject: str, title: str
) -> alt.Chart:
    """One latency percentile over time, a line per drive (``label``), the subject heavier.

    ``data``: ``label``, ``job_index``, ``t_s``, ``intervals`` and ``column`` (ns)."""
    shown = data.filter(pl.col(column) > 0).select(
        "label", "job_index", "t_s", "intervals", us=pl.col(column) / 1e3
    )
    return (
        alt.Chart(shown)
        .mark_line()
        .encode(
            x=alt.X("t_s:Q", title="Time (s)", axis=axis(WIDTH - 200)),
            y=alt.Y(
                "us:Q",
                scale=alt.Scale(type="log"),
                axis=_us_axis(f"{stat} (log)", values=_decades_us(shown.select("us"))),
            ),
            color=alt.Color("label:N", sort=list(drives), title="Drive"),
            detail="job_index:N",
            strokeWidth=alt.condition(alt.datum.label == subject, alt.value(2.6), alt.value(1.2)),
            tooltip=[
                alt.Tooltip("label:N", title="Drive"),
                alt.Tooltip("t_s:Q", title="t (s)", format=",.2f"),
                alt.Tooltip("us:Q", title=f"{stat} µs", format=",.1f"),
                alt.Tooltip("intervals:Q", title="Intervals merged"),
            ],
        )
        .properties(width=WIDTH - 200, height=220, title=title)
    )


def compare_latency_over_time_section(cmp: Comparison) -> Section:
    """Per cell the drives ran like for like (see :func:`common_cells`), one tail
    percentile per histogram-log interval over time, a line per drive: the deepest of
    p99.99, p99.9, p99 (else p50) that every drive's intervals resolve
    (:func:`~ssdlab.analysis.latency.shift_percentile`); findings: each drive's median and
    worst interval."""
    cells = common_cells(cmp)
    if not cells.height:
        return Section(
            missing="No latency over time to compare: two or more drives need the same "
            "workload measured like for like."
        )
    keys = ["step_index", "direction"]
    logged = _per_drive(cmp, cells, "latency_intervals", lambda i, c: i.join(c, on=keys))
    if not logged.height:
        return Section(missing=NO_LOGS)
    sentences, parts = [], []
    for (cell,), rows in logged.group_by("series", maintain_order=True):
        drives = [n for n in cmp.names if n in set(rows["label"].to_list())]
        if len(drives) < 2:
            continue
        p, per_drive = drive_intervals(rows, drives)
        column, stat = interval_column(p), f"p{p:g}"
        figures = [
            f"{d} {format_latency(median)} (worst {format_latency(worst)})"
            for d, median, worst in per_drive.select("label", "median_ns", "worst_ns").iter_rows()
        ]
        sentence = f"{rephrase(cell)}, {stat} per interval, median: " + ", ".join(figures) + "."
        if per_drive["interval_ms"].n_unique() > 1:
            shown = ", ".join(
                f"{d} {_length(ms)}"
                for d, ms in per_drive.select("label", "interval_ms").iter_rows()
            )
            sentence += (
                f" The drives logged different intervals ({shown}): shorter intervals swing more."
            )
        sentences.append(sentence)
        data = downsample_intervals(rows, keys=("label", *INTERVAL_KEYS))
        title = f"{cell}: {stat} per histogram-log interval"
        parts.append(compare_over_time_chart(data, column, stat, drives, cmp.subject, title))
    if not parts:
        return Section(
            missing="No latency over time to compare: no workload two or more drives ran "
            "like for like has histogram-log intervals for two of them."
        )
    return Section(sentences, parts)

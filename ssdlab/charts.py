"""Altair charts of the tidy frames, in the styles SSD reviews use.

Each function takes frames (as :func:`ssdlab.load` or :mod:`ssdlab.analysis` build them) and
returns an altair chart with titles, units and tooltips. Inputs are aggregated to at most
``MAX_POINTS`` rows per chart so reports stay small. Where several drives are compared, the
``subject`` drive is drawn in the accent colour (bars) or with a heavier line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import polars as pl

from .analysis import SteadyState, quoted_mix
from .tables import UNIT_DECIMALS
from .vocab import DIRECTIONS

MAX_POINTS = 5000
WIDTH = 640
HALF = 290
MB = 1e6
ACCENT = "#0a58a8"
MUTED = "#a9b3bf"
PASS, FAIL = "#2e8540", "#c0392b"
#: each fio direction's colour; a chart's legend names only the directions its data has
DIRECTION_COLORS = dict(zip(DIRECTIONS, ("#1f77b4", "#d62728", "#7f7f7f"), strict=True))
#: each ACT trial result's colour
ACT_RESULT_COLORS = {"passed": PASS, "failed": FAIL, "cant_keep_up": "#e08e0b", "abandoned": MUTED}
#: the columns tracing a point to its step and fio's output, with their tooltip titles
PROVENANCE = {"step": "Step", "fio_json": "fio JSON"}
QD_AXIS_TITLE = "Queue depth (iodepth × jobs)"
QD_SUBTITLE = "Diamond: the lowest queue depth reaching 95 % of the peak throughput"
#: tick labels closer than this (px) to the previous one kept are dropped
LABEL_GAP = 8
#: at most one tick (and label) per this many px of a quantitative axis
TICK_PX = 64


def axis(length: int | None = None, **options: Any) -> alt.Axis:
    """The axis every chart here uses, so tick labels never collide ("10,00020,000").

    Labels that would come closer than :data:`LABEL_GAP` px to a label already drawn are
    dropped (greedily: the first, last and every other label survive first), and an axis
    ``length`` px long asks for at most one tick per :data:`TICK_PX` px, so thousands-separated
    figures fit; ``options`` (title, values, format, labelAngle...) add to these or override
    them. Vega applies the overlap rule with the fonts it draws, in the browser and in the
    static SVG alike.
    """
    settings: dict[str, Any] = {"labelOverlap": "greedy", "labelSeparation": LABEL_GAP}
    if length is not None and "values" not in options:
        settings["tickCount"] = max(2, int(length) // TICK_PX)
    return alt.Axis(**(settings | options))


def value_format(unit: str) -> str:
    """The d3 format of a figure in ``unit`` written on a chart: the decimals a table gives
    that unit (:data:`ssdlab.tables.UNIT_DECIMALS`), else four significant digits."""
    decimals = UNIT_DECIMALS.get(unit)
    return ",.4~r" if decimals is None else f",.{decimals}f"


def latency_y(field: str = "us:Q") -> alt.Y:
    """The y axis of every latency chart: completion latency in µs on a log scale."""
    return alt.Y(
        field, scale=alt.Scale(type="log"), title="Completion latency (µs, log)", axis=axis()
    )


def present_scale(colors: Mapping[str, Any], values: pl.Series) -> alt.Scale:
    """A colour (or dash) scale of ``colors`` restricted to the ``values`` that occur, in
    ``colors``' order: a legend never names what the data does not hold (``trim`` in a run
    without trims)."""
    found = set(values.drop_nulls().to_list())
    domain = [name for name in colors if name in found]
    return alt.Scale(domain=domain, range=[colors[name] for name in domain])


def traced(frame: pl.DataFrame, *columns: str, **exprs: pl.Expr) -> pl.DataFrame:
    """``frame.select(*columns, **exprs)`` keeping the :data:`PROVENANCE` columns ``frame``
    has, so each point can name its step (:func:`provenance`)."""
    keep = [c for c in PROVENANCE if c in frame.columns and c not in columns and c not in exprs]
    return frame.select(*columns, *keep, **exprs)


def provenance(data: pl.DataFrame) -> list[alt.Tooltip]:
    """Tooltips naming the step a point was measured in and its fio JSON, for the
    :data:`PROVENANCE` columns ``data`` has (none for rows that are not steps)."""
    return [alt.Tooltip(f"{c}:N", title=t) for c, t in PROVENANCE.items() if c in data.columns]


def _step_order(frame: pl.DataFrame) -> list[str]:
    return frame.sort("step_index")["step"].unique(maintain_order=True).to_list()


def thin(frame: pl.DataFrame, keys: list[str], x: str, values: list[str]) -> pl.DataFrame:
    """Average runs of consecutive rows (per ``keys``) so at most MAX_POINTS rows remain."""
    factor = -(-frame.height // MAX_POINTS)
    if factor <= 1:
        return frame
    return (
        frame.with_columns(bucket=pl.int_range(pl.len()).over(keys) // factor)
        .group_by(*keys, "bucket", maintain_order=True)
        .agg(pl.col(x).max(), *(pl.col(v).mean() for v in values))
        .drop("bucket")
    )


def _series_color(series: Sequence[str]) -> alt.Color:
    """One colour per series; a legend only when there are several."""
    legend = (
        None
        if len(series) < 2
        else alt.Legend(title=None, orient="bottom", columns=3, labelLimit=320)
    )
    return alt.Color(
        "series:N", sort=list(series), legend=legend, scale=alt.Scale(scheme="tableau10")
    )


def _stroke(subject: str | None) -> alt.StrokeWidthValue | alt.StrokeWidth:
    if subject is None:
        return alt.value(2.2)
    return alt.condition(alt.datum.series == subject, alt.value(3.5), alt.value(1.6))


def _order(frame: pl.DataFrame) -> list[str]:
    return frame["series"].unique(maintain_order=True).to_list()


def _present(frame: pl.DataFrame, order: Sequence[str] | None) -> list[str]:
    """The series of ``frame``, in ``order`` when given."""
    found = _order(frame)
    return found if order is None else [s for s in order if s in found]


def _error_bars(base: alt.Chart, data: pl.DataFrame, lo: str, hi: str) -> alt.Chart | None:
    """Vertical rules from ``lo`` to ``hi`` (a repeated step's 95 % interval) on ``base``
    (its x, colour and tooltips), for the rows of ``data`` that have one; None when none has
    (a run without repeats draws nothing more)."""
    if lo not in data.columns or not data[lo].is_not_null().any():
        return None
    return (
        base.transform_filter(f"isValid(datum.{lo})")
        .mark_rule(strokeWidth=1.5)
        .encode(y=f"{lo}:Q", y2=f"{hi}:Q")
    )


# -- per-step overview -----------------------------------------------------------------------


def iops_by_step(summary: pl.DataFrame) -> alt.Chart:
    """IOPS per step, read and write stacked."""
    data = traced(
        summary,
        "step",
        "step_index",
        "direction",
        "iops",
        mb_s=(pl.col("bw_bytes_s") / MB).round(1),
        p99_us=(pl.col("clat_p99_ns") / 1e3).round(1),
    )
    rows = max(1, summary.select("step").n_unique())
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("step:N", sort=_step_order(summary), title=None, axis=axis()),
            x=alt.X("iops:Q", title="IOPS", stack="zero", axis=axis(WIDTH - 120)),
            color=alt.Color(
                "direction:N",
                scale=present_scale(DIRECTION_COLORS, data["direction"]),
                title="Direction",
            ),
            tooltip=[
                *provenance(data),
                alt.Tooltip("direction:N", title="Direction"),
                alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
                alt.Tooltip("mb_s:Q", title="MB/s", format=",.1f"),
                alt.Tooltip("p99_us:Q", title="clat p99 (µs)", format=",.1f"),
            ],
        )
        .properties(width=WIDTH - 120, height=18 * rows, title="IOPS per step")
    )


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
    ids = ["row", "step", "direction", "step_index", *(c for c in PROVENANCE if c != "step")]
    data = (
        summary.with_columns(row=pl.concat_str("step", pl.lit(" · "), "direction"))
        .unpivot(index=[c for c in ids if c in summary.columns or c == "row"], on=present)
        .filter(pl.col("value") > 0)
        .with_columns(
            stat=pl.col("variable").replace_strict(LATENCY_STATS),
            us=pl.col("value") / 1e3,
        )
    )
    order = data.sort("step_index", "direction")["row"].unique(maintain_order=True).to_list()
    data = traced(data, "row", "direction", "stat", "us")
    return (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            y=alt.Y("row:N", sort=order, title=None, axis=axis()),
            x=alt.X(
                "us:Q",
                scale=alt.Scale(type="log"),
                title="Completion latency (µs, log)",
                axis=axis(WIDTH - 120),
            ),
            color=alt.Color("stat:N", sort=list(LATENCY_STATS.values()), title="Statistic"),
            shape=alt.Shape("stat:N", sort=list(LATENCY_STATS.values()), legend=None),
            tooltip=[
                *provenance(data),
                alt.Tooltip("direction:N", title="Direction"),
                alt.Tooltip("stat:N", title="Statistic"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
            ],
        )
        .properties(width=WIDTH - 120, height=18 * len(order), title="Completion latency per step")
    )


# -- review charts ---------------------------------------------------------------------------


def qd_scaling(
    points: pl.DataFrame,
    title: str,
    subject: str | None = None,
    order: Sequence[str] | None = None,
) -> alt.HConcatChart:
    """Throughput and latency against queue depth, one line per ``series`` (in ``order``);
    the lowest QD reaching 95 % of the peak (``at_95``) is marked.

    ``points``: ``series``, ``qd``, ``qd_label``, ``value``, ``metric``, ``clat_mean_ns``,
    ``clat_p99_ns``, ``at_95``; with ``value_lo95`` and ``value_hi95`` (repeated steps), error
    bars show the 95 % interval.
    """
    metric = points["metric"][0]
    order = _present(points, order)
    data = traced(
        points,
        "series",
        "qd",
        "qd_label",
        "value",
        "at_95",
        *(c for c in ("value_lo95", "value_hi95") if c in points.columns),
        mean_us=pl.col("clat_mean_ns") / 1e3,
        p99_us=pl.col("clat_p99_ns") / 1e3,
    )
    qds = sorted(data["qd"].unique().to_list())
    x = alt.X(
        "qd:Q",
        scale=alt.Scale(type="log", base=2),
        title=QD_AXIS_TITLE,
        axis=axis(values=qds, format="d"),
    )
    color = _series_color(order)
    tooltip = [
        alt.Tooltip("series:N", title="Workload"),
        alt.Tooltip("qd_label:N", title="QD"),
        alt.Tooltip("value:Q", title=metric, format=",.0f"),
        alt.Tooltip("mean_us:Q", title="Mean latency (µs)", format=",.1f"),
        alt.Tooltip("p99_us:Q", title="p99 latency (µs)", format=",.1f"),
        *provenance(data),
    ]
    labelled = len(order) == 1
    top = float(data["value"].max() or 0) * 1.15  # headroom for the label above the mark
    y = alt.Y(
        "value:Q",
        title=metric,
        axis=axis(),
        scale=alt.Scale(domain=[0, top], nice=True) if labelled and top > 0 else alt.Undefined,
    )

    def rows(frame: pl.DataFrame) -> alt.Chart:
        return alt.Chart(frame).encode(x=x, color=color, tooltip=tooltip)

    base = rows(data)
    line = base.mark_line(point=True).encode(y=y, strokeWidth=_stroke(subject))
    # every layer gets the rows it draws, never an empty set (vega: "Infinite extent")
    marked = data.filter(pl.col("at_95"))
    layers = [line]
    if marked.height:
        layers.append(
            rows(marked)
            .mark_point(shape="diamond", size=180, filled=True, opacity=1)
            .encode(y="value:Q")
        )
    errors = _error_bars(base, data, "value_lo95", "value_hi95")
    if errors is not None:
        layers.append(errors)
    if labelled:  # beside the diamond, away from the y axis and the plot's right edge
        sides = ((pl.col("qd") < qds[-1], "left", 9), (pl.col("qd") >= qds[-1], "right", -9))
        for keep, align, dx in sides:
            if (label := marked.filter(keep)).height:
                layers.append(
                    rows(label)
                    .mark_text(align=align, dx=dx, dy=-9, fontSize=11, fontWeight="bold")
                    .encode(y="value:Q", text=alt.value("95 %"))
                )
    throughput = alt.layer(*layers).properties(
        width=HALF, height=240, title=f"{metric} by queue depth"
    )
    # a log axis: the null engine reports 0 ns, and a panel without a latency is not drawn
    latencies = data.filter((pl.col("mean_us") > 0) | (pl.col("p99_us") > 0))
    if not latencies.height:
        return alt.hconcat(throughput).properties(
            title=alt.Title(title, subtitle=QD_SUBTITLE + "; no latency was measured")
        )
    latency = (
        alt.Chart(latencies)
        .transform_fold(["mean_us", "p99_us"], as_=["stat", "us"])
        .transform_filter(alt.datum.us > 0)
        .transform_calculate(stat="datum.stat == 'mean_us' ? 'mean' : 'p99'")
        .mark_line(point=True)
        .encode(
            x=x,
            y=latency_y(),
            color=color,
            strokeDash=alt.StrokeDash("stat:N", legend=None, sort=["mean", "p99"]),
            strokeWidth=_stroke(subject),
            tooltip=tooltip,
        )
        .properties(
            width=HALF, height=240, title="Latency by queue depth (solid: mean, dashed: p99)"
        )
    )
    return alt.hconcat(throughput, latency).properties(title=alt.Title(title, subtitle=QD_SUBTITLE))


def mix_sweep(
    steps: pl.DataFrame,
    sweeps: pl.DataFrame,
    title: str,
    subject: str | None = None,
    order: Sequence[str] | None = None,
) -> alt.HConcatChart:
    """Throughput over the read share (100 % to 0 %) per ``series`` (in ``order``), the mix
    a review quotes ringed (:func:`~ssdlab.analysis.quoted_mix`), beside the sweep averages.

    ``steps``: ``series``, ``read_pct``, ``value``, ``metric``; with ``value_lo95`` and
    ``value_hi95`` (repeated steps), error bars show the 95 % interval; ``sweeps``:
    ``series``, ``avg``.
    """
    metric = steps["metric"][0]
    order = _present(sweeps, order)
    color = _series_color(order)
    bars = "value_lo95" in steps.columns and steps["value_lo95"].is_not_null().any()
    data = traced(
        steps, "series", "read_pct", "value", *(("value_lo95", "value_hi95") if bars else ())
    )
    x = alt.X(
        "read_pct:Q",
        scale=alt.Scale(domain=[100, 0]),
        title="Read share (%)",
        axis=axis(values=sorted(data["read_pct"].unique().to_list())),
    )
    tooltip = [
        alt.Tooltip("series:N", title="Sweep"),
        alt.Tooltip("read_pct:Q", title="Reads (%)"),
        alt.Tooltip("value:Q", title=metric, format=",.0f"),
        *provenance(data),
    ]
    base = alt.Chart(data).encode(x=x, color=color, tooltip=tooltip)
    layers = [
        base.mark_line(point=True).encode(
            y=alt.Y("value:Q", title=metric, axis=axis()), strokeWidth=_stroke(subject)
        )
    ]
    quoted = quoted_mix(data["read_pct"].to_list())
    ringed_rows = data.filter(pl.col("read_pct") == quoted) if quoted is not None else data.head(0)
    if ringed_rows.height:  # a layer is never drawn from no rows (vega: "Infinite extent")
        layers.append(
            alt.Chart(ringed_rows)
            .encode(x=x, color=color, tooltip=tooltip)
            .mark_point(size=260, strokeWidth=2.5, filled=False)
            .encode(y="value:Q")
        )
    errors = _error_bars(base, data, "value_lo95", "value_hi95")
    sweep_chart = alt.layer(*layers, *([errors] if errors is not None else [])).properties(
        width=HALF + 70, height=240, title=f"{metric} by read share"
    )
    averages = (
        alt.Chart(sweeps.select("series", "avg"))
        .mark_bar()
        .encode(
            y=alt.Y("series:N", sort=order, title=None, axis=axis(labelLimit=180)),
            x=alt.X("avg:Q", title=f"Average {metric}", axis=axis(HALF - 140)),
            color=alt.condition(alt.datum.series == subject, alt.value(ACCENT), color)
            if subject
            else color,
            tooltip=[
                alt.Tooltip("series:N", title="Sweep"),
                alt.Tooltip("avg:Q", title=f"Average {metric}", format=",.0f"),
            ],
        )
        .properties(width=HALF - 140, height=alt.Step(26), title="Sweep average")
    )
    text = averages.mark_text(align="left", dx=3, fontSize=10).encode(
        text=alt.Text("avg:Q", format=",.0f"), color=alt.value("#1b2129")
    )
    ringed = f"Ring: the {quoted}/{100 - quoted} read/write point" if ringed_rows.height else ""
    return alt.hconcat(averages + text, sweep_chart).properties(
        title=alt.Title(title, subtitle=ringed)
    )


#: the measurement-window plot's lines and bands, in legend order, with their colours
WINDOW_GUIDES = {
    "Round value": "#5d6875",
    "Window average": "#1b2129",
    "Least-squares fit": "#c0392b",
    "Allowed data excursion (20 % of the average)": "#e08e0b",
    "Allowed slope excursion (10 % of the average)": "#2e8540",
}


def steady_state(state: SteadyState, title: str, unit: str) -> alt.LayerChart:
    """The SNIA PTS measurement-window plot of a determination ``state`` (in display units):
    the window's rounds, their average and least-squares line, and the two limits as bands.

    The data-excursion band is as wide as the allowed excursion (20 % of the average) and
    centred between the window's extremes: every round lies inside it exactly when the data
    excursion is within the limit. The slope-excursion band (dashed) is as wide as the
    allowed slope excursion (10 % of the average), centred on the average: the fit line
    stays inside it exactly when the slope excursion is within the limit (see
    :attr:`SteadyState.data_band` and :attr:`SteadyState.slope_band`).
    """
    rounds = list(state.rounds)
    first, last = rounds[0], rounds[-1]
    names = list(WINDOW_GUIDES)
    data_band, slope_band = state.data_band, state.slope_band
    fit_first, fit_last = state.fit(first), state.fit(last)
    drawn = (True, state.mean is not None, fit_first is not None and fit_last is not None)
    drawn += (data_band is not None, slope_band is not None)
    shown = pl.Series([name for name, on in zip(names, drawn, strict=True) if on])
    color_scale = present_scale(WINDOW_GUIDES, shown)
    # one legend for every layer: lines at full strength (not the band's faint fill)
    legend = alt.Legend(
        orient="bottom",
        columns=2,
        labelLimit=360,
        symbolType="stroke",
        symbolOpacity=1,
        symbolStrokeWidth=4,
    )
    x = alt.X(
        "round:Q",
        title="Round",
        scale=alt.Scale(domain=[first - 0.25, last + 0.25], nice=False),
        axis=axis(values=rounds, format="d"),
    )
    y_title = f"{unit}"
    layers: list[alt.Chart] = []
    if data_band is not None:
        band = pl.DataFrame(
            {
                "guide": [names[3]],
                "round": [float(first)],
                "round2": [float(last)],
                "low": [data_band[0]],
                "high": [data_band[1]],
            }
        )
        layers.append(
            alt.Chart(band)
            .mark_rect(opacity=0.16)
            .encode(
                x=x,
                x2="round2:Q",
                y=alt.Y("low:Q", title=y_title, scale=alt.Scale(zero=False), axis=axis()),
                y2="high:Q",
                color=alt.Color("guide:N", scale=color_scale, title=None, legend=legend),
                tooltip=[
                    alt.Tooltip("guide:N", title="Band"),
                    alt.Tooltip("low:Q", title=f"From ({unit})", format=",.4~r"),
                    alt.Tooltip("high:Q", title=f"To ({unit})", format=",.4~r"),
                ],
            )
        )
    lines: list[tuple[str, str, float, float]] = []
    if state.mean is not None:
        lines.append((names[1], "", state.mean, state.mean))
    if fit_first is not None and fit_last is not None:
        lines.append((names[2], "", fit_first, fit_last))
    if slope_band is not None:
        lines += [
            (names[4], "lower", slope_band[0], slope_band[0]),
            (names[4], "upper", slope_band[1], slope_band[1]),
        ]
    if lines:
        guide = pl.DataFrame(
            [
                (name, part, float(r), y)
                for name, part, y0, y1 in lines
                for r, y in ((first, y0), (last, y1))
            ],
            schema=["guide", "part", "round", "value"],
            orient="row",
        )
        layers.append(
            alt.Chart(guide)
            .mark_line(strokeWidth=2)
            .encode(
                x=x,
                y=alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False), axis=axis()),
                detail="part:N",
                color=alt.Color(
                    "guide:N",
                    scale=color_scale,
                    title=None,
                    legend=legend,
                ),
                strokeDash=alt.condition(
                    alt.datum.guide == names[4], alt.value([6, 4]), alt.value([1, 0])
                ),
                tooltip=[
                    alt.Tooltip("guide:N", title="Line"),
                    alt.Tooltip("round:Q", title="Round", format="d"),
                    alt.Tooltip("value:Q", title=unit, format=",.4~r"),
                ],
            )
        )
    points = pl.DataFrame(
        {"guide": names[0], "round": [float(r) for r in rounds], "value": list(state.values)}
    )
    layers.append(
        alt.Chart(points)
        .mark_line(point=alt.OverlayMarkDef(size=80, filled=True))
        .encode(
            x=x,
            y=alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False), axis=axis()),
            color=alt.Color("guide:N", scale=color_scale, title=None, legend=legend),
            tooltip=[
                alt.Tooltip("round:Q", title="Round", format="d"),
                alt.Tooltip("value:Q", title=unit, format=",.4~r"),
            ],
        )
    )
    subtitle = (
        "Steady when every round lies in the shaded data band and the fit line stays "
        "between the dashed slope lines."
        if data_band is not None
        else "Too few rounds for the steady-state figures."
    )
    return alt.layer(*layers).properties(
        width=WIDTH - 60, height=280, title=alt.Title(title, subtitle=subtitle)
    )


def convergence(
    cells: pl.DataFrame,
    title: str,
    unit: str,
    *,
    window: tuple[int, int] | None = None,
    default_group: str | None = None,
    group_title: str = "R/W mix",
) -> alt.LayerChart:
    """The SNIA PTS convergence plot: each cell's value per round, one line per ``series``
    (in the frame's order); the tracked cell's line (``tracked``) drawn heavier, the
    measurement window (first and last round) shaded. With several ``group`` values (R/W
    mixes), a menu under the chart picks the group shown, ``default_group`` first.

    ``cells``: ``round``, ``value``, ``series``, ``group``, ``tracked``.
    """
    data = cells.select("round", "value", "series", "group", "tracked").filter(
        pl.col("value").is_not_null()
    )
    order = data["series"].unique(maintain_order=True).to_list()
    groups = data["group"].unique(maintain_order=True).to_list()
    positive = data.filter(pl.col("value") > 0)["value"]
    spread = (positive.max() / positive.min()) if positive.len() else 1.0
    log = spread is not None and spread > 20
    rounds = sorted(data["round"].unique().to_list())
    x_scale = alt.Scale(domain=[0.5, max(rounds) + 0.5], nice=False)
    x = alt.X(
        "round:Q",
        title="Round",
        scale=x_scale,
        axis=axis(WIDTH - 60, values=rounds if len(rounds) <= 30 else None, format="d"),
    )
    y = alt.Y(
        "value:Q",
        title=f"{unit} (log)" if log else unit,
        scale=alt.Scale(type="log") if log else alt.Scale(zero=False),
        axis=axis(),
    )
    lines = (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(size=40, filled=True))
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "series:N",
                sort=order,
                title=None,
                scale=alt.Scale(scheme="tableau10"),
                legend=alt.Legend(orient="right", labelLimit=200) if len(order) > 1 else None,
            ),
            strokeWidth=alt.condition(alt.datum.tracked, alt.value(3.5), alt.value(1.6)),
            tooltip=[
                alt.Tooltip("series:N", title="Cell"),
                alt.Tooltip("group:N", title=group_title),
                alt.Tooltip("round:Q", title="Round", format="d"),
                alt.Tooltip("value:Q", title=unit, format=",.4~r"),
            ],
        )
    )
    subtitle = ["Heavy line: the tracked cell; shaded: the measurement window."]
    if len(groups) > 1:
        pick = alt.param(
            name="group",
            value=default_group if default_group in groups else groups[0],
            bind=alt.binding_select(options=groups, name=f"{group_title}: "),
        )
        lines = lines.add_params(pick).transform_filter(alt.datum.group == pick)
        subtitle.append(f"Pick the {group_title} in the menu under the chart.")
    layers: list[alt.Chart] = []
    if window is not None:
        shade = pl.DataFrame({"start": [window[0] - 0.5], "end": [window[1] + 0.5]})
        layers.append(
            alt.Chart(shade)
            .mark_rect(color="#e8eef5")
            .encode(x=alt.X("start:Q", scale=x_scale), x2="end:Q")
        )
    return alt.layer(*layers, lines).properties(
        width=WIDTH - 60, height=280, title=alt.Title(title, subtitle=subtitle)
    )


def _log_scale(values: pl.Series) -> alt.Scale:
    """A log scale around ``values`` (positive), not widened to whole decades: figures
    within one decade would otherwise fill a tenth of the plot."""
    low, high = values.min(), values.max()
    if low is None or high is None:
        return alt.Scale(type="log")
    return alt.Scale(type="log", domain=[float(low) / 1.25, float(high) * 1.25], nice=False)


def by_block_size(cells: pl.DataFrame, title: str, unit: str, *, log: bool = True) -> alt.Chart:
    """The SNIA PTS 2D plot: a value against block size, one line per ``series`` (R/W mix);
    click a legend entry to pick a line out.

    ``cells``: ``block`` (label), ``bs_bytes``, ``series``, ``value``.
    """
    data = traced(cells, "block", "bs_bytes", "series", "value").filter(pl.col("value") > 0)
    blocks = data.sort("bs_bytes")["block"].unique(maintain_order=True).to_list()
    order = cells["series"].unique(maintain_order=True).to_list()
    pick = alt.selection_point(fields=["series"], bind="legend")
    return (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(size=50, filled=True))
        .encode(
            x=alt.X("block:O", sort=blocks, title="Block size", axis=axis(labelAngle=0)),
            y=alt.Y(
                "value:Q",
                title=f"{unit} (log)" if log else unit,
                scale=_log_scale(data["value"]) if log else alt.Scale(zero=True),
                axis=axis(),
            ),
            color=alt.Color(
                "series:N",
                sort=order,
                title="R/W mix",
                scale=alt.Scale(scheme="tableau10"),
                legend=alt.Legend(orient="right"),
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
            tooltip=[
                alt.Tooltip("series:N", title="R/W mix"),
                alt.Tooltip("block:O", title="Block size"),
                alt.Tooltip("value:Q", title=unit, format=",.4~r"),
                *provenance(data),
            ],
        )
        .add_params(pick)
        .properties(width=WIDTH - 140, height=300, title=title)
    )


def matrix_heatmap(cells: pl.DataFrame, title: str, unit: str) -> alt.LayerChart:
    """The SNIA PTS 3D plot as a heatmap: block size (rows, small on top) x R/W mix
    (columns, writes left), shaded by the value on a log scale and written in each cell.

    ``cells``: ``block`` (label), ``bs_bytes``, ``series`` (R/W mix), ``read_pct``,
    ``value``.
    """
    data = traced(cells, "block", "bs_bytes", "series", "read_pct", "value").filter(
        pl.col("value") > 0
    )
    blocks = data.sort("bs_bytes")["block"].unique(maintain_order=True).to_list()
    mixes = data.sort("read_pct")["series"].unique(maintain_order=True).to_list()
    high = data["value"].max() or 1.0
    low = data["value"].min() or 1.0
    middle = (high * low) ** 0.5
    base = alt.Chart(data).encode(
        x=alt.X(
            "series:O",
            sort=mixes,
            title="R/W mix (read/write %)",
            axis=axis(orient="top", labelAngle=0),
        ),
        y=alt.Y("block:O", sort=blocks, title="Block size", axis=axis()),
        tooltip=[
            alt.Tooltip("block:O", title="Block size"),
            alt.Tooltip("series:O", title="R/W mix"),
            alt.Tooltip("value:Q", title=unit, format=",.4~r"),
            *provenance(data),
        ],
    )
    cells_mark = base.mark_rect().encode(  # every cell carries its figure: no legend
        color=alt.Color("value:Q", scale=alt.Scale(type="log", scheme="blues"), legend=None)
    )
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("value:Q", format=value_format(unit)),
        color=alt.condition(alt.datum.value > middle, alt.value("white"), alt.value("#1b2129")),
    )
    return (cells_mark + text).properties(width=alt.Step(72), height=alt.Step(28), title=title)


#: bars narrower than this (px) carry no value label: it would not fit
LABELLED_BAR_PX = 44


def grouped_bars(
    cells: pl.DataFrame,
    title: str,
    unit: str,
    *,
    series_title: str = "R/W mix",
    panel_width: int = WIDTH - 160,
    log: bool = False,
) -> alt.LayerChart | alt.Chart:
    """Bars per block size, one per ``series`` side by side (the SNIA PTS throughput and
    response-time plots); the value is written above each bar when bars are at least
    :data:`LABELLED_BAR_PX` wide, so the figures never run into each other. On a ``log``
    axis the values are dots (a bar has no zero to stand on there).

    ``cells``: ``block`` (label), ``bs_bytes``, ``series``, ``value``.
    """
    data = traced(cells, "block", "bs_bytes", "series", "value").filter(
        pl.col("value").is_not_null()
    )
    blocks = data.sort("bs_bytes")["block"].unique(maintain_order=True).to_list()
    order = cells["series"].unique(maintain_order=True).to_list()
    base = alt.Chart(data).encode(
        x=alt.X("block:N", sort=blocks, title="Block size", axis=axis(labelAngle=0)),
        xOffset=alt.XOffset("series:N", sort=order),
        y=alt.Y(
            "value:Q",
            title=f"{unit} (log)" if log else unit,
            scale=alt.Scale(type="log") if log else alt.Scale(zero=True),
            axis=axis(),
        ),
        tooltip=[
            alt.Tooltip("block:N", title="Block size"),
            alt.Tooltip("series:N", title=series_title),
            alt.Tooltip("value:Q", title=unit, format=",.4~r"),
            *provenance(data),
        ],
    )
    # bars need a zero to stand on, which a log axis lacks: there each value is a dot
    marks = base.mark_point(filled=True, size=90, opacity=1) if log else base.mark_bar()
    bars = marks.encode(
        color=alt.Color(
            "series:N",
            sort=order,
            title=series_title,
            scale=alt.Scale(scheme="tableau10"),
            legend=alt.Legend(orient="bottom"),
        )
    )
    bar_px = panel_width / max(1, len(blocks) * len(order))
    if log or bar_px < LABELLED_BAR_PX:
        return bars.properties(width=panel_width, height=240, title=title)
    text = base.mark_text(dy=-6, fontSize=10, color="#1b2129").encode(
        text=alt.Text("value:Q", format=value_format(unit))
    )
    return (bars + text).properties(width=panel_width, height=240, title=title)


def write_saturation(
    series: pl.DataFrame, title: str, capacity_bytes: int | None = None
) -> alt.HConcatChart:
    """The SNIA PTS write-saturation plots: IOPS per log window against time and against
    the total data written, with each capacity written marked (1x, 2x, ...).

    ``series``: ``t_s``, ``iops``, ``written_bytes``.
    """
    longest = series["t_s"].max() or 0
    unit, seconds = ("h", 3600) if longest >= 7200 else ("min", 60) if longest >= 600 else ("s", 1)
    total = series["written_bytes"].max() or 0
    scale_bytes, size_unit = (1e12, "TB") if total >= 2e12 else (1e9, "GB")
    data = thin(series.with_columns(k=pl.lit(0)), ["k"], "t_s", ["iops", "written_bytes"]).select(
        "iops",
        time=pl.col("t_s") / seconds,
        written=pl.col("written_bytes") / scale_bytes,
    )
    tooltip = [
        alt.Tooltip("time:Q", title=f"Time ({unit})", format=",.4~r"),
        alt.Tooltip("written:Q", title=f"Written ({size_unit})", format=",.4~r"),
        alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
    ]

    def panel(field: str, axis_title: str) -> alt.Chart:
        return (
            alt.Chart(data)
            .mark_line(point=alt.OverlayMarkDef(size=12, filled=True), color=ACCENT)
            .encode(
                x=alt.X(f"{field}:Q", title=axis_title, axis=axis(HALF)),
                y=alt.Y("iops:Q", title="IOPS", axis=axis()),
                tooltip=tooltip,
            )
        )

    by_time = panel("time", f"Time ({unit})")
    by_data: alt.Chart | alt.LayerChart = panel("written", f"Total data written ({size_unit})")
    if capacity_bytes and total:
        marks = pl.DataFrame(
            {
                "written": [
                    n * capacity_bytes / scale_bytes
                    for n in range(1, int(total // capacity_bytes) + 1)
                ]
            }
        ).with_columns(label=pl.format("{}x", pl.int_range(1, pl.len() + 1)))
        if marks.height:
            rule = alt.Chart(marks).mark_rule(strokeDash=[4, 3], color="#5d6875")
            labels = alt.Chart(marks).mark_text(
                align="left", baseline="top", dx=3, y=2, fontSize=10, color="#5d6875"
            )
            by_data = alt.layer(
                by_data,
                rule.encode(x="written:Q"),
                labels.encode(x="written:Q", text="label:N"),
            )
    subtitle = "Dashed: each capacity written (1x, 2x, ...)" if capacity_bytes else ""
    size = {"width": HALF, "height": 240}
    return alt.hconcat(
        by_time.properties(**size, title="IOPS against time"),
        by_data.properties(**size, title="IOPS against data written"),
    ).properties(title=alt.Title(title, subtitle=subtitle) if subtitle else title)


def consistency(series: pl.DataFrame, tail_start_s: float, title: str) -> alt.HConcatChart:
    """Per-second IOPS over time on a log and a linear axis; the scored tail is shaded."""
    data = thin(series.with_columns(k=pl.lit(0)), ["k"], "t_s", ["iops"]).drop("k")
    tail = pl.DataFrame({"start": [tail_start_s], "end": [data["t_s"].max()]})
    tooltip = [
        alt.Tooltip("t_s:Q", title="t (s)", format=",.0f"),
        alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
    ]
    shade = alt.Chart(tail).mark_rect(color="#e8eef5").encode(x="start:Q", x2="end:Q")

    def panel(scale: str) -> alt.LayerChart:
        dots = (
            alt.Chart(data)
            .mark_circle(size=14, color=ACCENT, opacity=0.8)
            .encode(
                x=alt.X("t_s:Q", title="Time (s)", axis=axis(HALF)),
                y=alt.Y(
                    "iops:Q", title=f"IOPS ({scale})", scale=alt.Scale(type=scale), axis=axis()
                ),
                tooltip=tooltip,
            )
        )
        return (shade + dots).properties(width=HALF, height=220, title=f"{scale.capitalize()} axis")

    return alt.hconcat(panel("log"), panel("linear")).properties(
        title=f"{title}: IOPS per second (shaded: scored tail)"
    )


def consistency_overlay(series: pl.DataFrame, subject: str | None) -> alt.Chart:
    """Per-second IOPS of several drives' consistency runs (``series``, ``t_s``, ``iops``)."""
    data = thin(series, ["series"], "t_s", ["iops"])
    order = _order(data)
    return (
        alt.Chart(data)
        .mark_line(opacity=0.9)
        .encode(
            x=alt.X("t_s:Q", title="Time (s)", axis=axis(WIDTH - 40)),
            y=alt.Y("iops:Q", title="IOPS", axis=axis()),
            color=_series_color(order),
            strokeWidth=alt.condition(alt.datum.series == subject, alt.value(2.4), alt.value(1.2)),
            tooltip=[
                alt.Tooltip("series:N", title="Drive"),
                alt.Tooltip("t_s:Q", title="t (s)", format=",.0f"),
                alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
            ],
        )
        .properties(width=WIDTH - 40, height=240, title="Performance consistency: IOPS per second")
    )


def latency_percentiles(
    curves: pl.DataFrame, order: Sequence[str], intervals: pl.DataFrame | None = None
) -> alt.Chart | alt.LayerChart:
    """Latency against percentile on the 'nines' scale (90, 99, 99.9 ...), log latency.

    ``curves``: ``series``, ``nines``, ``percentile``, ``lat_ns``. ``intervals`` (repeated
    steps, :func:`~ssdlab.analysis.repeats.percentile_intervals`): ``series``,
    ``percentile``, ``lo95_ns``, ``hi95_ns``, drawn as error bars at those percentiles.
    """
    data = curves.filter(pl.col("lat_ns") > 0).with_columns(us=pl.col("lat_ns") / 1e3)
    data = data.select("series", "nines", "percentile", "us")
    top = max(data["nines"].max() or 0, 1)
    x = alt.X(
        "nines:Q",
        title="Percentile",
        scale=alt.Scale(domain=[0, top], nice=False),
        axis=axis(
            values=list(range(int(top) + 1)),
            labelExpr="datum.value == 0 ? '0' : format(100 - 100 * pow(10, -datum.value), '.6~f')",
        ),
    )
    color = alt.Color(
        "series:N", sort=list(order), title=None, legend=alt.Legend(orient="right", labelLimit=260)
    )
    curve = (
        alt.Chart(data)
        .mark_line(interpolate="step-after")
        .encode(
            x=x,
            y=latency_y(),
            color=color,
            tooltip=[
                alt.Tooltip("series:N", title="Workload"),
                alt.Tooltip("percentile:Q", title="Percentile", format=".4~f"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
            ],
        )
        .properties(width=WIDTH - 240, height=300, title="Latency percentiles (from histograms)")
    )
    if intervals is None:
        return curve
    bars = intervals.filter(
        pl.col("series").is_in(data["series"].unique().implode()) & (pl.col("lo95_ns") > 0)
    ).select(
        "series",
        "percentile",
        nines=-(1 - pl.col("percentile") / 100).log10(),
        lo_us=pl.col("lo95_ns") / 1e3,
        hi_us=pl.col("hi95_ns") / 1e3,
    )
    base = alt.Chart(bars).encode(
        x=x,
        color=color,
        tooltip=[
            alt.Tooltip("series:N", title="Workload"),
            alt.Tooltip("percentile:Q", title="Percentile", format=".4~f"),
            alt.Tooltip("lo_us:Q", title="95 % from (µs)", format=",.1f"),
            alt.Tooltip("hi_us:Q", title="95 % to (µs)", format=",.1f"),
        ],
    )
    errors = _error_bars(base, bars, "lo_us", "hi_us")
    if errors is None:
        return curve
    return alt.layer(curve, errors).properties(
        title=alt.Title(
            "Latency percentiles (from histograms)",
            subtitle="Bars: 95 % interval of fio's percentile over the repeats",
        )
    )


def power_per_step(power: pl.DataFrame) -> alt.LayerChart:
    """Average power per step with the min-max range (``label``, ``avg_w``, ``min_w``,
    ``max_w``)."""
    data = traced(
        power.filter(pl.col("avg_w").is_not_null()),
        "step_index",
        "step",
        "label",
        "avg_w",
        "min_w",
        "max_w",
    )
    order = data.sort("step_index")["step"].to_list()
    base = alt.Chart(data).encode(
        y=alt.Y("step:N", sort=order, title=None, axis=axis()),
        tooltip=[
            *provenance(data),
            alt.Tooltip("label:N", title="Workload"),
            alt.Tooltip("avg_w:Q", title="Average W", format=".2f"),
            alt.Tooltip("min_w:Q", title="Min W", format=".2f"),
            alt.Tooltip("max_w:Q", title="Max W", format=".2f"),
        ],
    )
    bars = base.mark_bar(color=ACCENT).encode(
        x=alt.X("avg_w:Q", title="Power (W)", axis=axis(WIDTH - 160))
    )
    span = base.mark_rule(color="#1b2129").encode(x="min_w:Q", x2="max_w:Q")
    return (bars + span).properties(
        width=WIDTH - 160, height=18 * len(order), title="Average power per step (line: min-max)"
    )


def efficiency(power: pl.DataFrame, column: str, unit: str) -> alt.Chart:
    """Power efficiency per step (``iops_per_w`` or ``mb_s_per_w``), best first."""
    data = traced(power.filter(pl.col(column).is_not_null()), "step", "label", column)
    return (
        alt.Chart(data)
        .mark_bar(color="#2e8540")
        .encode(
            y=alt.Y("step:N", sort="-x", title=None, axis=axis()),
            x=alt.X(f"{column}:Q", title=unit, axis=axis(WIDTH - 160)),
            tooltip=[
                *provenance(data),
                alt.Tooltip("label:N", title="Workload"),
                alt.Tooltip(f"{column}:Q", title=unit, format=",.1f"),
            ],
        )
        .properties(width=WIDTH - 160, height=18 * data.height, title=f"Efficiency: {unit}")
    )


def power_trace(trace: pl.DataFrame) -> alt.Chart:
    """Power samples of all steps laid end to end in step order (``step_index``, ``step``,
    ``t_s``, ``power_w``)."""
    spans = (
        trace.group_by("step_index")
        .agg(pl.col("t_s").max().alias("length"))
        .sort("step_index")
        .with_columns(offset=pl.col("length").cum_sum() - pl.col("length"))
    )
    data = (
        trace.join(spans, on="step_index")
        .sort("step_index", "t_s")
        .with_columns(elapsed=pl.col("t_s") + pl.col("offset"))
    )
    data = thin(data.select("step", "elapsed", "power_w"), ["step"], "elapsed", ["power_w"])
    return (
        alt.Chart(data)
        .mark_line(color="#c0392b", strokeWidth=1.2)
        .encode(
            x=alt.X(
                "elapsed:Q", title="Measured time, steps end to end (s)", axis=axis(WIDTH - 40)
            ),
            y=alt.Y("power_w:Q", title="Power (W)", scale=alt.Scale(zero=False), axis=axis()),
            detail="step:N",
            tooltip=[
                alt.Tooltip("step:N", title="Step"),
                alt.Tooltip("power_w:Q", title="W", format=".2f"),
            ],
        )
        .properties(width=WIDTH - 40, height=200, title="Power over the run")
    )


def _act_long(frame: pl.DataFrame, prefix: str, limits: Mapping[float, float]) -> pl.DataFrame:
    return frame.unpivot(
        index=[c for c in frame.columns if not c.startswith(prefix)],
        on=[f"{prefix}{t:g}ms" for t in limits],
        variable_name="threshold",
        value_name="pct",
    ).with_columns(
        threshold=pl.col("threshold").str.strip_prefix(prefix).str.replace("ms", " ms"),
    )


def act_trials(trials: pl.DataFrame, limits: Mapping[float, float]) -> alt.HConcatChart:
    """Worst-slice share of reads over 1, 8 and 64 ms per load, against ACT's limits."""
    data = _act_long(trials, "max_pct_over_", limits).with_columns(
        load_x=pl.format("{}x", pl.col("load").round(2)),
        result=pl.when("passed").then(pl.lit("passed")).otherwise(pl.col("status")),
    )
    order = data.sort("load")["load_x"].unique(maintain_order=True).to_list()
    panels = []
    for t, limit in limits.items():
        name = f"{t:g} ms"
        rows = data.filter(pl.col("threshold") == name)
        bars = (
            alt.Chart(rows)
            .mark_bar()
            .encode(
                x=alt.X("load_x:N", sort=order, title="Load", axis=axis()),
                y=alt.Y("pct:Q", title=f"Reads over {name} (%)", axis=axis()),
                color=alt.Color(
                    "result:N",
                    title="Trial",
                    scale=present_scale(ACT_RESULT_COLORS, data["result"]),
                ),
                tooltip=[
                    alt.Tooltip("load_x:N", title="Load"),
                    alt.Tooltip("trial:Q", title="Trial"),
                    alt.Tooltip("pct:Q", title=f"% over {name}", format=".3f"),
                    alt.Tooltip("status:N", title="Status"),
                ],
            )
        )
        rule = (
            alt.Chart(pl.DataFrame({"limit": [limit]}))
            .mark_rule(strokeDash=[5, 3], color="#1b2129")
            .encode(y="limit:Q")
        )
        panels.append(
            (bars + rule).properties(width=170, height=200, title=f"> {name} (limit {limit:g} %)")
        )
    return alt.hconcat(*panels).properties(title="ACT: worst slice per trial against the limits")


def act_slices(slices: pl.DataFrame, limits: Mapping[float, float]) -> alt.HConcatChart:
    """Share of reads over each threshold per slice, one line per load."""
    longest = slices["end_s"].max() or 0
    unit, seconds = ("h", 3600) if longest >= 7200 else ("min", 60) if longest >= 600 else ("s", 1)
    data = _act_long(slices, "pct_over_", limits).with_columns(
        load_x=pl.format("{}x", pl.col("load").round(2)), end=pl.col("end_s") / seconds
    )
    loads = data.sort("load")["load_x"].unique(maintain_order=True).to_list()
    panels = []
    for t, limit in limits.items():
        name = f"{t:g} ms"
        rows = data.filter(pl.col("threshold") == name).select(
            "load_x", "trial", "slice", "end", "pct"
        )
        lines = (
            alt.Chart(rows)
            .mark_line(point=True)
            .encode(
                x=alt.X("end:Q", title=f"Slice end ({unit})", axis=axis(170)),
                y=alt.Y("pct:Q", title=f"Reads over {name} (%)", axis=axis()),
                color=alt.Color("load_x:N", sort=loads, title="Load"),
                detail="trial:N",
                tooltip=[
                    alt.Tooltip("load_x:N", title="Load"),
                    alt.Tooltip("slice:Q", title="Slice"),
                    alt.Tooltip("pct:Q", title="%", format=".3f"),
                ],
            )
        )
        rule = (
            alt.Chart(pl.DataFrame({"limit": [limit]}))
            .mark_rule(strokeDash=[5, 3], color="#1b2129")
            .encode(y="limit:Q")
        )
        panels.append((lines + rule).properties(width=170, height=200, title=f"> {name}"))
    return alt.hconcat(*panels).properties(title="ACT: reads over the thresholds per slice")


def waf(frame: pl.DataFrame) -> alt.LayerChart:
    """Write amplification per step (bars) and cumulative over the run (line)."""
    data = traced(frame, "step_index", "step", "waf", "cumulative_waf")
    order = data.sort("step_index")["step"].to_list()
    x = alt.X("step:N", sort=order, title=None, axis=axis(labelAngle=-40, labelLimit=200))
    tooltip = [
        *provenance(data),
        alt.Tooltip("waf:Q", title="WAF", format=".2f"),
        alt.Tooltip("cumulative_waf:Q", title="Cumulative WAF", format=".2f"),
    ]
    bars = (
        alt.Chart(data)
        .mark_bar(color=MUTED)
        .encode(x=x, y=alt.Y("waf:Q", title="Write amplification", axis=axis()), tooltip=tooltip)
    )
    line = (
        alt.Chart(data)
        .mark_line(point=True, color=ACCENT)
        .encode(x=x, y="cumulative_waf:Q", tooltip=tooltip)
    )
    return (bars + line).properties(
        width=WIDTH - 60, height=220, title="Write amplification per step (bars) and cumulative"
    )


# -- comparison charts -----------------------------------------------------------------------


def ranked_bars(
    scores: pl.DataFrame, title: str, metric: str, higher_is_better: bool, subject: str | None
) -> alt.LayerChart:
    """One test's value per drive, best first; the subject drive in the accent colour.

    ``scores``: ``drive``, ``value`` (latency metrics ``ns`` are shown in µs).
    """
    scale, unit = (1e-3, "µs") if metric == "ns" else (1.0, metric)
    data = scores.select("drive", shown=pl.col("value") * scale).sort(
        "shown", descending=higher_is_better
    )
    fmt = ",.0f" if data["shown"].abs().min() >= 100 else ",.3~r"
    better = "higher is better" if higher_is_better else "lower is better"
    base = alt.Chart(data).encode(
        y=alt.Y("drive:N", sort=data["drive"].to_list(), title=None, axis=axis(labelLimit=220)),
        x=alt.X("shown:Q", title=f"{unit} ({better})".strip(), axis=axis(WIDTH - 260)),
        tooltip=[
            alt.Tooltip("drive:N", title="Drive"),
            alt.Tooltip("shown:Q", title=unit, format=fmt),
        ],
    )
    bars = base.mark_bar().encode(
        color=alt.condition(alt.datum.drive == subject, alt.value(ACCENT), alt.value(MUTED))
    )
    text = base.mark_text(align="left", dx=4, fontSize=11).encode(
        text=alt.Text("shown:Q", format=fmt)
    )
    return (bars + text).properties(width=WIDTH - 260, height=alt.Step(24), title=title)


def score_matrix(scores: pl.DataFrame, drives: Sequence[str]) -> alt.LayerChart:
    """Every test x drive as a share of the best drive (100 % = best), values written in.

    ``scores``: ``test``, ``drive``, ``value``, ``shown`` (the value as text),
    ``higher_is_better``.
    """
    best = (
        pl.when(pl.col("higher_is_better"))
        .then(pl.col("value").max().over("test"))
        .otherwise(pl.col("value").min().over("test"))
    )
    share = (
        pl.when(pl.col("higher_is_better"))
        .then(pl.col("value") / best)
        .otherwise(best / pl.col("value"))
    )
    data = scores.with_columns(share=100 * share).select("test", "drive", "share", "shown")
    tests = scores["test"].unique(maintain_order=True).to_list()
    base = alt.Chart(data).encode(
        x=alt.X(
            "drive:N",
            sort=list(drives),
            title=None,
            axis=axis(orient="top", labelAngle=0, labelLimit=160),
        ),
        y=alt.Y("test:N", sort=tests, title=None, axis=axis(labelLimit=320)),
        tooltip=[
            alt.Tooltip("test:N", title="Test"),
            alt.Tooltip("drive:N", title="Drive"),
            alt.Tooltip("shown:N", title="Value"),
            alt.Tooltip("share:Q", title="% of best", format=".0f"),
        ],
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "share:Q",
            title="% of best",
            scale=alt.Scale(domain=[50, 100], scheme="blues", clamp=True),
        )
    )
    text = base.mark_text(fontSize=10).encode(
        text="shown:N",
        color=alt.condition(alt.datum.share > 85, alt.value("white"), alt.value("#1b2129")),
    )
    return (cells + text).properties(
        width=alt.Step(130), height=alt.Step(22), title="Every test as a share of the best drive"
    )


# -- exploration (JupyterLab) ----------------------------------------------------------------


def explore_scatter(summary: pl.DataFrame) -> alt.Chart:
    """Every step of every run: IOPS against p99 latency. Click a run in the legend to
    highlight it; drag to pan, scroll to zoom; hover for the step."""
    data = summary.select(
        "label",
        "step",
        "direction",
        "bs_bytes",
        "iodepth",
        "numjobs",
        "iops",
        mb_s=pl.col("bw_bytes_s") / MB,
        p99_us=pl.col("clat_p99_ns") / 1e3,
    ).head(MAX_POINTS)
    runs = alt.selection_point(fields=["label"], bind="legend")
    return (
        alt.Chart(data)
        .mark_circle(size=70)
        .encode(
            x=alt.X(
                "p99_us:Q",
                scale=alt.Scale(type="log"),
                title="p99 completion latency (µs)",
                axis=axis(WIDTH),
            ),
            y=alt.Y("iops:Q", scale=alt.Scale(type="log"), title="IOPS", axis=axis()),
            color=alt.Color("label:N", title="Run"),
            shape=alt.Shape("direction:N", title="Direction"),
            opacity=alt.condition(runs, alt.value(0.9), alt.value(0.12)),
            tooltip=[
                "label:N",
                "step:N",
                "direction:N",
                "bs_bytes:Q",
                "iodepth:Q",
                "numjobs:Q",
                alt.Tooltip("iops:Q", format=",.0f"),
                alt.Tooltip("mb_s:Q", title="MB/s", format=",.1f"),
                alt.Tooltip("p99_us:Q", title="p99 µs", format=",.1f"),
            ],
        )
        .add_params(runs)
        .properties(width=WIDTH, height=360, title="IOPS against p99 latency, all runs")
        .interactive()
    )


def explore_timeseries(timeseries: pl.DataFrame) -> alt.VConcatChart:
    """Per-second IOPS of every step of every run: brush the overview to zoom the detail;
    click a run in the legend to highlight it."""
    total = (
        timeseries.group_by("label", "step_index", "step", "t_s")
        .agg(pl.col("iops").sum())
        .sort("label", "step_index", "t_s")
        .with_columns(series=pl.concat_str("label", pl.lit(" · "), "step"))
    )
    data = thin(total, ["series"], "t_s", ["iops"]).select("label", "step", "series", "t_s", "iops")
    brush = alt.selection_interval(encodings=["x"])
    runs = alt.selection_point(fields=["label"], bind="legend")
    base = alt.Chart(data).encode(
        color=alt.Color("label:N", title="Run"),
        detail="series:N",
        opacity=alt.condition(runs, alt.value(0.9), alt.value(0.1)),
        tooltip=[
            "label:N",
            "step:N",
            alt.Tooltip("t_s:Q", title="t (s)"),
            alt.Tooltip("iops:Q", format=",.0f"),
        ],
    )
    detail = (
        base.mark_line()
        .encode(
            x=alt.X(
                "t_s:Q",
                scale=alt.Scale(domain=brush),
                title="Time in step (s)",
                axis=axis(WIDTH),
            ),
            y=alt.Y("iops:Q", title="IOPS", axis=axis()),
        )
        .add_params(runs)
        .properties(width=WIDTH, height=260, title="Per-second IOPS")
    )
    overview = (
        base.mark_line()
        .encode(
            x=alt.X("t_s:Q", title="Drag to select a time range", axis=axis(WIDTH)),
            y=alt.Y("iops:Q", title=None, axis=axis(tickCount=2)),
        )
        .add_params(brush)
        .properties(width=WIDTH, height=60)
    )
    return alt.vconcat(detail, overview)

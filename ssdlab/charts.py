"""Altair charts of the tidy frames, in the styles SSD reviews use.

Each function takes frames (as :func:`ssdlab.load` or :mod:`ssdlab.analysis` build them) and
returns an altair chart with titles, units and tooltips. Inputs are aggregated to at most
``MAX_POINTS`` rows per chart so reports stay small. Where several drives are compared, the
``subject`` drive is drawn in the accent colour (bars) or with a heavier line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import polars as pl

from .analysis import SteadyState

MAX_POINTS = 5000
WIDTH = 640
HALF = 290
MB = 1e6
ACCENT = "#0a58a8"
MUTED = "#a9b3bf"
PASS, FAIL = "#2e8540", "#c0392b"
DIRECTION_COLORS = alt.Scale(
    domain=["read", "write", "trim"], range=["#1f77b4", "#d62728", "#7f7f7f"]
)
QD_AXIS_TITLE = "Queue depth (iodepth × jobs)"


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


# -- per-step overview -----------------------------------------------------------------------


def iops_by_step(summary: pl.DataFrame) -> alt.Chart:
    """IOPS per step, read and write stacked."""
    data = summary.select(
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
            y=alt.Y("step:N", sort=_step_order(summary), title=None),
            x=alt.X("iops:Q", title="IOPS", stack="zero"),
            color=alt.Color("direction:N", scale=DIRECTION_COLORS, title="Direction"),
            tooltip=[
                alt.Tooltip("step:N", title="Step"),
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
    data = (
        summary.with_columns(row=pl.concat_str("step", pl.lit(" · "), "direction"))
        .unpivot(index=["row", "step", "direction", "step_index"], on=present)
        .filter(pl.col("value") > 0)
        .with_columns(
            stat=pl.col("variable").replace_strict(LATENCY_STATS),
            us=pl.col("value") / 1e3,
        )
    )
    order = data.sort("step_index", "direction")["row"].unique(maintain_order=True).to_list()
    return (
        alt.Chart(data.select("row", "stat", "us"))
        .mark_point(filled=True, size=60)
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
    ``clat_p99_ns``, ``at_95``.
    """
    metric = points["metric"][0]
    order = _present(points, order)
    data = points.select(
        "series",
        "qd",
        "qd_label",
        "value",
        "at_95",
        mean_us=pl.col("clat_mean_ns") / 1e3,
        p99_us=pl.col("clat_p99_ns") / 1e3,
    )
    qds = sorted(data["qd"].unique().to_list())
    x = alt.X(
        "qd:Q",
        scale=alt.Scale(type="log", base=2),
        title=QD_AXIS_TITLE,
        axis=alt.Axis(values=qds, format="d"),
    )
    color = _series_color(order)
    tooltip = [
        alt.Tooltip("series:N", title="Workload"),
        alt.Tooltip("qd_label:N", title="QD"),
        alt.Tooltip("value:Q", title=metric, format=",.0f"),
        alt.Tooltip("mean_us:Q", title="Mean latency (µs)", format=",.1f"),
        alt.Tooltip("p99_us:Q", title="p99 latency (µs)", format=",.1f"),
    ]
    base = alt.Chart(data).encode(x=x, color=color, tooltip=tooltip)
    line = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", title=metric), strokeWidth=_stroke(subject)
    )
    marked = base.transform_filter(alt.datum.at_95).encode(y="value:Q")
    layers = [line, marked.mark_point(shape="diamond", size=180, filled=True, opacity=1)]
    if len(order) == 1:
        layers.append(
            marked.mark_text(dy=-14, fontSize=11, fontWeight="bold").encode(text=alt.value("95 %"))
        )
    throughput = alt.layer(*layers).properties(
        width=HALF, height=240, title=f"{metric} by queue depth"
    )
    latency = (
        alt.Chart(data)
        .transform_fold(["mean_us", "p99_us"], as_=["stat", "us"])
        .transform_filter(alt.datum.us > 0)  # a log axis: the null engine reports 0 ns
        .transform_calculate(stat="datum.stat == 'mean_us' ? 'mean' : 'p99'")
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("us:Q", scale=alt.Scale(type="log"), title="Completion latency (µs, log)"),
            color=color,
            strokeDash=alt.StrokeDash("stat:N", legend=None, sort=["mean", "p99"]),
            strokeWidth=_stroke(subject),
            tooltip=tooltip,
        )
        .properties(
            width=HALF, height=240, title="Latency by queue depth (solid: mean, dashed: p99)"
        )
    )
    return alt.hconcat(throughput, latency).properties(
        title=alt.Title(
            title, subtitle="Diamond: the lowest queue depth reaching 95 % of the peak throughput"
        )
    )


def mix_sweep(
    steps: pl.DataFrame,
    sweeps: pl.DataFrame,
    title: str,
    subject: str | None = None,
    order: Sequence[str] | None = None,
) -> alt.HConcatChart:
    """Throughput over the read share (100 % to 0 %) per ``series`` (in ``order``), the 70/30
    point ringed, beside the sweep averages.

    ``steps``: ``series``, ``read_pct``, ``value``, ``metric``; ``sweeps``: ``series``, ``avg``.
    """
    metric = steps["metric"][0]
    order = _present(sweeps, order)
    color = _series_color(order)
    data = steps.select("series", "read_pct", "value")
    x = alt.X(
        "read_pct:Q",
        scale=alt.Scale(domain=[100, 0]),
        title="Read share (%)",
        axis=alt.Axis(values=sorted(data["read_pct"].unique().to_list())),
    )
    tooltip = [
        alt.Tooltip("series:N", title="Sweep"),
        alt.Tooltip("read_pct:Q", title="Reads (%)"),
        alt.Tooltip("value:Q", title=metric, format=",.0f"),
    ]
    base = alt.Chart(data).encode(x=x, color=color, tooltip=tooltip)
    lines = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", title=metric), strokeWidth=_stroke(subject)
    )
    ring = (
        base.transform_filter(alt.datum.read_pct == 70)
        .mark_point(size=260, strokeWidth=2.5, filled=False)
        .encode(y="value:Q")
    )
    sweep_chart = (lines + ring).properties(
        width=HALF + 70, height=240, title=f"{metric} by read share"
    )
    averages = (
        alt.Chart(sweeps.select("series", "avg"))
        .mark_bar()
        .encode(
            y=alt.Y("series:N", sort=order, title=None, axis=alt.Axis(labelLimit=180)),
            x=alt.X("avg:Q", title=f"Average {metric}"),
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
    return alt.hconcat(averages + text, sweep_chart).properties(
        title=alt.Title(title, subtitle="Ring: the 70/30 read/write point")
    )


def steady_state(rounds: pl.DataFrame, state: SteadyState, title: str, unit: str) -> alt.LayerChart:
    """Tracked variable per round; over the measurement window its average, the ±10 % and
    ±20 % bands and the least-squares line (the SNIA PTS steady-state plot)."""
    points = rounds.select("round", "value", "in_window").with_columns(
        series=pl.when("in_window")
        .then(pl.lit("Measurement window"))
        .otherwise(pl.lit("Round before the window"))
    )
    layers = []
    if state.mean is not None and state.rounds:
        first, last = state.rounds[0], state.rounds[-1]
        lines = [
            ("Window average", "", state.mean, state.mean),
            ("±10 % of average", "upper", 1.1 * state.mean, 1.1 * state.mean),
            ("±10 % of average", "lower", 0.9 * state.mean, 0.9 * state.mean),
            ("±20 % of average", "upper", 1.2 * state.mean, 1.2 * state.mean),
            ("±20 % of average", "lower", 0.8 * state.mean, 0.8 * state.mean),
        ]
        if state.slope is not None and state.intercept is not None:
            fit = (state.slope * first + state.intercept, state.slope * last + state.intercept)
            lines.append(("Least-squares fit", "", *fit))
        guide = pl.DataFrame(
            [
                (name, part, r, y)
                for name, part, y0, y1 in lines
                for r, y in ((first, y0), (last, y1))
            ],
            schema=["line", "part", "round", "value"],
            orient="row",
        )
        names = ["Window average", "±10 % of average", "±20 % of average", "Least-squares fit"]
        layers.append(
            alt.Chart(guide)
            .mark_line()
            .encode(
                x="round:Q",
                y="value:Q",
                detail="part:N",
                color=alt.Color(
                    "line:N",
                    title=None,
                    sort=names,
                    legend=alt.Legend(orient="bottom"),
                    scale=alt.Scale(
                        domain=names, range=["#1b2129", "#e08e0b", "#c0392b", "#2e8540"]
                    ),
                ),
                strokeDash=alt.StrokeDash(
                    "line:N",
                    sort=names,
                    legend=None,
                    scale=alt.Scale(domain=names, range=[[1, 0], [6, 3], [2, 2], [1, 0]]),
                ),
                tooltip=[
                    alt.Tooltip("line:N", title="Line"),
                    alt.Tooltip("value:Q", title=unit, format=",.1f"),
                ],
            )
        )
    tracked = (
        alt.Chart(points)
        .mark_line(point=alt.OverlayMarkDef(size=70, filled=True), color="#5d6875")
        .encode(
            x=alt.X(
                "round:Q",
                title="Round",
                axis=alt.Axis(values=rounds["round"].to_list(), format="d"),
            ),
            y=alt.Y("value:Q", title=unit, scale=alt.Scale(zero=False)),
            tooltip=[
                alt.Tooltip("round:Q", title="Round"),
                alt.Tooltip("value:Q", title=unit, format=",.1f"),
                alt.Tooltip("series:N", title=" "),
            ],
        )
    )
    window = tracked.transform_filter(alt.datum.in_window).mark_point(
        size=90, filled=True, color=ACCENT, opacity=1
    )
    return (
        alt.layer(*layers, tracked, window)
        .resolve_scale(color="independent")
        .properties(width=WIDTH - 60, height=280, title=title)
    )


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
                x=alt.X("t_s:Q", title="Time (s)"),
                y=alt.Y("iops:Q", title=f"IOPS ({scale})", scale=alt.Scale(type=scale)),
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
            x=alt.X("t_s:Q", title="Time (s)"),
            y=alt.Y("iops:Q", title="IOPS"),
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


def latency_percentiles(curves: pl.DataFrame, order: Sequence[str]) -> alt.Chart:
    """Latency against percentile on the 'nines' scale (90, 99, 99.9 ...), log latency.

    ``curves``: ``series``, ``nines``, ``percentile``, ``lat_ns``.
    """
    data = curves.filter(pl.col("lat_ns") > 0).with_columns(us=pl.col("lat_ns") / 1e3)
    data = data.select("series", "nines", "percentile", "us")
    top = max(data["nines"].max() or 0, 1)
    return (
        alt.Chart(data)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X(
                "nines:Q",
                title="Percentile",
                scale=alt.Scale(domain=[0, top], nice=False),
                axis=alt.Axis(
                    values=list(range(int(top) + 1)),
                    labelExpr="datum.value == 0 ? '0' : format(100 - 100 * pow(10, "
                    "-datum.value), '.6~f')",
                ),
            ),
            y=alt.Y("us:Q", scale=alt.Scale(type="log"), title="Completion latency (µs, log)"),
            color=alt.Color(
                "series:N",
                sort=list(order),
                title=None,
                legend=alt.Legend(orient="right", labelLimit=260),
            ),
            tooltip=[
                alt.Tooltip("series:N", title="Workload"),
                alt.Tooltip("percentile:Q", title="Percentile", format=".4~f"),
                alt.Tooltip("us:Q", title="µs", format=",.1f"),
            ],
        )
        .properties(width=WIDTH - 240, height=300, title="Latency percentiles (from histograms)")
    )


def power_per_step(power: pl.DataFrame) -> alt.LayerChart:
    """Average power per step with the min-max range (``label``, ``avg_w``, ``min_w``,
    ``max_w``)."""
    data = power.filter(pl.col("avg_w").is_not_null()).select(
        "step_index", "step", "label", "avg_w", "min_w", "max_w"
    )
    order = data.sort("step_index")["step"].to_list()
    base = alt.Chart(data).encode(
        y=alt.Y("step:N", sort=order, title=None),
        tooltip=[
            alt.Tooltip("step:N", title="Step"),
            alt.Tooltip("label:N", title="Workload"),
            alt.Tooltip("avg_w:Q", title="Average W", format=".2f"),
            alt.Tooltip("min_w:Q", title="Min W", format=".2f"),
            alt.Tooltip("max_w:Q", title="Max W", format=".2f"),
        ],
    )
    bars = base.mark_bar(color=ACCENT).encode(x=alt.X("avg_w:Q", title="Power (W)"))
    span = base.mark_rule(color="#1b2129").encode(x="min_w:Q", x2="max_w:Q")
    return (bars + span).properties(
        width=WIDTH - 160, height=18 * len(order), title="Average power per step (line: min-max)"
    )


def efficiency(power: pl.DataFrame, column: str, unit: str) -> alt.Chart:
    """Power efficiency per step (``iops_per_w`` or ``mb_s_per_w``), best first."""
    data = power.filter(pl.col(column).is_not_null()).select("step", "label", column)
    return (
        alt.Chart(data)
        .mark_bar(color="#2e8540")
        .encode(
            y=alt.Y("step:N", sort="-x", title=None),
            x=alt.X(f"{column}:Q", title=unit),
            tooltip=[
                alt.Tooltip("step:N", title="Step"),
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
            x=alt.X("elapsed:Q", title="Measured time, steps end to end (s)"),
            y=alt.Y("power_w:Q", title="Power (W)", scale=alt.Scale(zero=False)),
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
                x=alt.X("load_x:N", sort=order, title="Load"),
                y=alt.Y("pct:Q", title=f"Reads over {name} (%)"),
                color=alt.Color(
                    "result:N",
                    title="Trial",
                    scale=alt.Scale(
                        domain=["passed", "failed", "cant_keep_up", "abandoned"],
                        range=[PASS, FAIL, "#e08e0b", MUTED],
                    ),
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
                x=alt.X("end:Q", title=f"Slice end ({unit})"),
                y=alt.Y("pct:Q", title=f"Reads over {name} (%)"),
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
    data = frame.select("step_index", "step", "waf", "cumulative_waf")
    order = data.sort("step_index")["step"].to_list()
    x = alt.X("step:N", sort=order, title=None, axis=alt.Axis(labelAngle=-40, labelLimit=200))
    tooltip = [
        alt.Tooltip("step:N", title="Step"),
        alt.Tooltip("waf:Q", title="WAF", format=".2f"),
        alt.Tooltip("cumulative_waf:Q", title="Cumulative WAF", format=".2f"),
    ]
    bars = (
        alt.Chart(data)
        .mark_bar(color=MUTED)
        .encode(x=x, y=alt.Y("waf:Q", title="Write amplification"), tooltip=tooltip)
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
        y=alt.Y("drive:N", sort=data["drive"].to_list(), title=None, axis=alt.Axis(labelLimit=220)),
        x=alt.X("shown:Q", title=f"{unit} ({better})".strip()),
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
            axis=alt.Axis(orient="top", labelAngle=0, labelLimit=160),
        ),
        y=alt.Y("test:N", sort=tests, title=None, axis=alt.Axis(labelLimit=320)),
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
            x=alt.X("p99_us:Q", scale=alt.Scale(type="log"), title="p99 completion latency (µs)"),
            y=alt.Y("iops:Q", scale=alt.Scale(type="log"), title="IOPS"),
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
            x=alt.X("t_s:Q", scale=alt.Scale(domain=brush), title="Time in step (s)"),
            y=alt.Y("iops:Q", title="IOPS"),
        )
        .add_params(runs)
        .properties(width=WIDTH, height=260, title="Per-second IOPS")
    )
    overview = (
        base.mark_line()
        .encode(
            x=alt.X("t_s:Q", title="Drag to select a time range"), y=alt.Y("iops:Q", title=None)
        )
        .add_params(brush)
        .properties(width=WIDTH, height=60)
    )
    return alt.vconcat(detail, overview)

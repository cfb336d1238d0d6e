"""Drive-review sections of the recovery tests and fills: SNIA PTS 2.0 Host Idle Recovery
(:func:`hir_section`), Cross-Stimulus Recovery (:func:`xsr_section`) and whole-drive fills
with their SLC-cache end (:func:`fill_section`), as PTS-report-like charts and tables."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import altair as alt
import polars as pl

from .. import charts
from ..analysis.drive import DriveAnalysis
from ..analysis.fill import DROP_SHARE, HEAD_WINDOWS, SUSTAIN_WINDOWS, Fill, fills
from ..analysis.recovery import (
    BUSY_SHARE,
    RECOVERY_WINDOWS,
    TOLERANCE,
    CrossStimulusRecovery,
    HostIdleRecovery,
    cross_stimulus_recovery,
    host_idle_recovery,
)
from ..phrases import rephrase
from ..tables import format_bw, format_bytes, format_iops
from ..units import MB, format_duration
from .section import Section, table

HEIGHT = 260


def _pct(share: float) -> str:
    return f"{share * 100:.0f} %"


def _thinned(series: pl.DataFrame, column: str) -> tuple[pl.DataFrame, str, float]:
    """``series`` thinned to ``column`` against ``elapsed_s`` per step, and the time unit
    its span suits with that unit's seconds."""
    span = series["elapsed_s"].max() or 0
    unit, seconds = ("h", 3600.0) if span >= 7200 else ("min", 60.0) if span >= 600 else ("s", 1.0)
    return charts.thin(series, ["step"], "elapsed_s", [column]), unit, seconds


def _line(
    data: pl.DataFrame, x: str, x_title: str, y: str, y_title: str, color: str, order: list[str]
) -> alt.Chart:
    """A per-window line chart, one colour per ``color`` value in ``order``."""
    return (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(size=10, filled=True), strokeWidth=1.5)
        .encode(
            x=alt.X(f"{x}:Q", title=x_title, axis=charts.axis(charts.WIDTH)),
            y=alt.Y(f"{y}:Q", title=y_title, axis=charts.axis()),
            color=alt.Color(
                f"{color}:N",
                sort=order,
                title=None,
                legend=alt.Legend(orient="bottom", columns=3, labelLimit=320),
                scale=alt.Scale(scheme="tableau10"),
            ),
            detail="step:N",
            tooltip=[
                alt.Tooltip("step:N", title="Step"),
                alt.Tooltip(f"{x}:Q", title=x_title, format=",.4~r"),
                alt.Tooltip(f"{y}:Q", title=y_title, format=",.1f"),
            ],
        )
        .properties(width=charts.WIDTH, height=HEIGHT)
    )


def _with_rules(
    line: alt.Chart, marks: pl.DataFrame, x: str, title: str, subtitle: str
) -> alt.LayerChart:
    """``line`` with a dashed vertical rule at each ``x`` of ``marks``, titled."""
    rule = alt.Chart(marks).mark_rule(strokeDash=[4, 3], color="#5d6875").encode(x=f"{x}:Q")
    return alt.layer(line, rule).properties(title=alt.Title(title, subtitle=subtitle))


# -- host idle recovery ----------------------------------------------------------------------


def _segment_label(kind: str, wait_s: float | None) -> str:
    return f"bursts, {format_duration(wait_s)} waits" if kind == "wait" else kind


def _hir_chart(hir: HostIdleRecovery, workload: str) -> alt.Chart:
    labels = {s.step: _segment_label(s.kind, s.wait_s) for s in hir.segments}
    data, unit, seconds = _thinned(hir.series(), "iops")
    data = data.with_columns(
        segment=pl.col("step").replace_strict(labels), time=pl.col("elapsed_s") / seconds
    )
    order = list(dict.fromkeys(labels.values()))
    return _line(data, "time", f"Time ({unit})", "iops", "IOPS", "segment", order).properties(
        title=alt.Title(
            f"Host idle recovery: {workload}",
            subtitle="IOPS per log window against time, per wait state",
        )
    )


def _wait_state_panels(hir: HostIdleRecovery) -> alt.FacetChart:
    """IOPS against time since the segment's start, one panel per wait state; filled
    points are the busy windows the burst IOPS averages."""
    waits = [s for s in hir.segments if s.kind == "wait"]
    titles = {s.step: f"{s.step}: {format_duration(s.wait_s or 0)} waits" for s in waits}
    series = pl.concat([s.series.with_columns(step=pl.lit(s.step)) for s in waits])
    data = charts.thin(series, ["step"], "t_s", ["iops"]).join(
        series.select("step", "t_s", "busy"), on=["step", "t_s"], how="left"
    )
    data = data.with_columns(panel=pl.col("step").replace_strict(titles))
    base = alt.Chart(data).encode(
        x=alt.X("t_s:Q", title="Time in the segment (s)", axis=charts.axis(charts.HALF)),
        y=alt.Y("iops:Q", title="IOPS", axis=charts.axis()),
    )
    points = base.mark_point(size=16, color=charts.ACCENT).encode(
        fill=alt.condition(alt.datum.busy, alt.value(charts.ACCENT), alt.value("white")),
        tooltip=[
            alt.Tooltip("t_s:Q", title="t (s)", format=",.0f"),
            alt.Tooltip("iops:Q", title="IOPS", format=",.0f"),
            alt.Tooltip("busy:N", title="Busy window"),
        ],
    )
    layered = alt.layer(base.mark_line(color=charts.MUTED, strokeWidth=1), points)
    return (
        layered.properties(width=charts.HALF, height=160)
        .facet(facet=alt.Facet("panel:N", sort=list(titles.values()), title=None), columns=2)
        .properties(title="IOPS per wait state (filled: busy windows)")
    )


def hir_section(drive: DriveAnalysis) -> Section:
    """SNIA PTS 2.0 Host Idle Recovery: IOPS against time across the baseline, the
    wait-state segments and the returns to continuous writes, and per wait state the mean
    IOPS of its bursts against the continuous baseline."""
    results = drive.results
    hir = host_idle_recovery(drive.steps, results.timeseries, results.manifest)
    if hir is None:
        return Section(
            missing="No Host Idle Recovery test: the run has no wait-state write steps "
            "(hir-... steps with fio thinktime, as the snia-hir suite runs)."
        )
    workload = rephrase(hir.segments[0].workload)
    states = hir.wait_states()
    base = hir.baseline_iops
    view = states.select(
        pl.col("step").alias("Step"),
        pl.col("wait_s").alias("Wait (s)"),
        pl.col("burst_s").alias("Burst (s)"),
        pl.col("bursts").alias("Bursts"),
        pl.col("burst_iops").alias("Burst IOPS"),
        (pl.col("burst_vs_baseline") * 100).alias("Of baseline (%)"),
        pl.col("return_iops").alias("Return IOPS"),
    )
    caption = f"Wait states: mean IOPS of busy windows (continuous baseline {format_iops(base)})"
    parts: list[Any] = [_hir_chart(hir, workload), _wait_state_panels(hir), table(view, caption)]
    sentences = [f"Host idle recovery ({workload}): the continuous baseline averaged "]
    sentences[0] += f"{format_iops(base)}." if base is not None else "– (no baseline step)."
    for row in states.iter_rows(named=True):
        if row["burst_iops"] is None:
            sentences.append(f"{row['step']}: no burst long enough for a whole log window.")
            continue
        ratio = row["burst_vs_baseline"]
        vs = f" ({_pct(ratio)} of the baseline)" if ratio is not None else ""
        sentences.append(
            f"Bursts after {format_duration(row['wait_s'])} waits averaged "
            f"{format_iops(row['burst_iops'])}{vs}."
        )
    sentences.append(
        f"A burst's IOPS is the mean of its busy log windows (at least {_pct(BUSY_SHARE)} of "
        "the segment's fastest window), leaving out windows cut by an idle wait."
    )
    return Section(sentences, parts)


# -- cross-stimulus recovery -----------------------------------------------------------------


def _xsr_chart(xsr: CrossStimulusRecovery) -> alt.LayerChart:
    series = xsr.series()
    data, unit, seconds = _thinned(series, "bw_bytes_s")
    data = data.select(
        "step",
        workload=pl.col("step").replace_strict({s.step: s.workload for s in xsr.segments}),
        time=pl.col("elapsed_s") / seconds,
        mb_s=pl.col("bw_bytes_s") / MB,
    )
    order = list(dict.fromkeys(s.workload for s in xsr.segments))
    line = _line(data, "time", f"Time ({unit})", "mb_s", "MB/s", "workload", order)
    starts = series.group_by("step", maintain_order=True).agg(
        (pl.col("elapsed_s") - pl.col("window_s")).min().alias("start")
    )
    marks = starts.slice(1).with_columns(time=pl.col("start") / seconds)
    return _with_rules(
        line,
        marks,
        "time",
        "Cross-stimulus recovery",
        "Throughput per log window against time; dashed: a change of stimulus",
    )


def xsr_section(drive: DriveAnalysis) -> Section:
    """SNIA PTS 2.0 Cross-Stimulus Recovery: throughput against time across the changes of
    stimulus (sequential, random, sequential again), each segment's steady level and the
    time it took to recover to it."""
    results = drive.results
    xsr = cross_stimulus_recovery(drive.steps, results.timeseries, results.manifest)
    if xsr is None:
        return Section(
            missing="No Cross-Stimulus Recovery test: the run has fewer than two time-based "
            "write steps named xsr-... (the snia-xsr suite)."
        )
    steps = xsr.transitions()
    view = steps.select(
        pl.col("step").alias("Step"),
        pl.col("workload").alias("Workload"),
        pl.col("duration_s").map_elements(format_duration, return_dtype=pl.String).alias("Time"),
        (pl.col("steady_bw_bytes_s") / MB).alias("Steady MB/s"),
        pl.col("steady_iops").alias("Steady IOPS"),
        pl.col("reference_step").alias("Recovers to"),
        pl.col("recovery_s").alias("Recovery (s)"),
    )
    caption = (
        f"Segments: steady level over the last windows; recovery: time to stay within "
        f"{_pct(TOLERANCE)} of the steady level it recovers to"
    )
    parts: list[Any] = [_xsr_chart(xsr), table(view, caption, numeric=("Time",))]
    sentences = []
    rows = steps.to_dicts()
    for before, row in pairwise(rows):
        what = rephrase(row["workload"])
        again = row["reference_step"] != row["step"]
        goal = "its earlier steady" if again else "its steady"
        level = steps.filter(pl.col("step") == row["reference_step"])["steady_bw_bytes_s"][0]
        if row["recovery_s"] is None:
            outcome = (
                f"never stayed within {_pct(TOLERANCE)} of {goal} {format_bw(level)} for "
                f"{RECOVERY_WINDOWS} windows in a row"
            )
        else:
            outcome = (
                f"took {format_duration(row['recovery_s'])} to come within {_pct(TOLERANCE)} "
                f"of {goal} {format_bw(level)}"
            )
        end = f" ({format_bw(row['steady_bw_bytes_s'])} at the end)" if again else ""
        sentences.append(f"After {rephrase(before['workload'])}, {what} {outcome}{end}.")
    return Section(sentences, parts)


# -- fills -----------------------------------------------------------------------------------


def _fill_name(fill: Fill) -> str:
    return f"fill by {rephrase(fill.workload)}"


def _fill_chart(found: list[Fill]) -> alt.LayerChart:
    total = max(f.series["written_bytes"].max() or 0 for f in found)
    scale, unit = (1e12, "TB") if total >= 2e12 else (1e9, "GB")
    series = pl.concat(
        [
            f.series.select("t_s", "bw_bytes_s", "written_bytes").with_columns(
                step=pl.lit(f.step), fill=pl.lit(_fill_name(f))
            )
            for f in found
        ]
    )
    data = charts.thin(series, ["step"], "t_s", ["bw_bytes_s", "written_bytes"]).select(
        "step",
        fill=pl.col("step").replace_strict({f.step: _fill_name(f) for f in found}),
        written=pl.col("written_bytes") / scale,
        mb_s=pl.col("bw_bytes_s") / MB,
    )
    order = [_fill_name(f) for f in found]
    line = _line(data, "written", f"Data written ({unit})", "mb_s", "MB/s", "fill", order)
    ends = [
        (_fill_name(f), f.cache.end_bytes / scale)
        for f in found
        if f.cache and f.cache.end_bytes is not None
    ]
    marks = pl.DataFrame(ends, schema={"fill": pl.String, "written": pl.Float64}, orient="row")
    return _with_rules(
        line,
        marks,
        "written",
        "Write speed against data written",
        "MB/s per log window; dashed: where the SLC cache ends",
    )


def _cache_sentence(fill: Fill) -> str:
    name = f"The {_fill_name(fill)} ({format_bytes(fill.io_bytes)} at {format_bw(fill.bw_bytes_s)})"
    cache = fill.cache
    if cache is None:
        return f"{name}: too short for the cache rule ({HEAD_WINDOWS} log windows at least)."
    if cache.end_bytes is None:
        return (
            f"{name}: it started at {format_bw(cache.initial_bw_bytes_s)} and never fell below "
            f"{_pct(DROP_SHARE)} of that for {SUSTAIN_WINDOWS} windows in a row: no cache end seen."
        )
    return (
        f"{name}: {format_bw(cache.initial_bw_bytes_s)} for the first "
        f"{format_bytes(cache.end_bytes)} (the SLC cache), then "
        f"{format_bw(cache.after_bw_bytes_s)}."
    )


def _recovery_sentence(fill: Fill) -> str | None:
    rec = fill.recovery
    if rec is None:
        return None
    idle = f"{format_duration(rec.idle_s)} idle" if rec.idle_s else "no idle wait"
    if rec.cache is not None and rec.cache.end_bytes is not None:
        speed = (
            f"wrote {format_bytes(rec.cache.end_bytes)} at "
            f"{format_bw(rec.cache.initial_bw_bytes_s)} before slowing to "
            f"{format_bw(rec.cache.after_bw_bytes_s)}"
        )
    else:
        speed = f"averaged {format_bw(rec.bw_bytes_s)} without a sustained drop"
    return f"After the {_fill_name(fill)} and {idle}, a short write {speed}."


def fill_section(drive: DriveAnalysis) -> Section:
    """Whole-drive fills: MB/s against the data written, where the SLC cache ends (the rule
    of :mod:`ssdlab.analysis.fill`), the speed after it, and the speed of a short write
    after an idle wait."""
    results = drive.results
    found = fills(drive.steps, results.timeseries, results.manifest)
    if not found:
        return Section(
            missing="No drive fill: the run has no size-based write step named fill-... with "
            "a time series (the fill suite, or a run with --fill-first)."
        )
    rows = []
    for f in found:
        cache, rec = f.cache, f.recovery
        rows.append(
            {
                "Fill": f.step,
                "Written": format_bytes(f.io_bytes),
                "Avg MB/s": f.bw_bytes_s / MB,
                "Initial MB/s": cache.initial_bw_bytes_s / MB if cache else None,
                "Cache (GB)": cache.end_bytes / 1e9
                if cache and cache.end_bytes is not None
                else None,
                "After cache MB/s": cache.after_bw_bytes_s / MB
                if cache and cache.after_bw_bytes_s is not None
                else None,
                "Idle": format_duration(rec.idle_s) if rec and rec.idle_s else "–",
                "Recovery MB/s": rec.bw_bytes_s / MB if rec else None,
            }
        )
    figures = ("Initial MB/s", "Cache (GB)", "After cache MB/s", "Recovery MB/s")
    view = pl.DataFrame(rows, schema_overrides=dict.fromkeys(figures, pl.Float64))
    rule = (
        f"Cache end: the first of {SUSTAIN_WINDOWS} windows in a row below {_pct(DROP_SHARE)} of "
        f"the median of the first {HEAD_WINDOWS}"
    )
    parts: list[Any] = [
        _fill_chart(found),
        table(view, f"Fills and recovery ({rule})", numeric=("Written", "Idle")),
    ]
    sentences = [_cache_sentence(f) for f in found]
    sentences += [s for f in found if (s := _recovery_sentence(f))]
    return Section(sentences, parts)

"""Drive-review sections: findings, charts and tables of one run's analysis.

Each section takes a :class:`~ssdlab.analysis.DriveAnalysis` and returns a
:class:`~.section.Section`, or one line saying what data is missing. The notebook
``drive_review`` shows them in the order of :data:`SECTIONS`; each is built once per analysis.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from .. import charts, findings
from ..analysis.drive import DriveAnalysis
from ..analysis.fill import fill_totals, preconditioning_steps
from ..analysis.pts import wsat_steps
from ..analysis.repeats import LATENCY_PERCENTILES, with_intervals
from ..analysis.tails import MIN_CONSISTENCY_WINDOWS
from ..tables import (
    drive_facts,
    format_bytes,
    format_duration,
    percentile_cells,
    run_facts,
    summary_view,
)
from ..units import MB, bs_label
from . import act as act_views
from . import endurance as endurance_views
from . import latency as latency_views
from . import load as load_views
from . import pts, qos, recovery, repeats
from .section import Registry, Section, table

NOTEBOOK = "drive_review"
SECTIONS = Registry(NOTEBOOK, once=True)
#: findings of each section the key findings repeat
PER_SECTION = 2


@SECTIONS
def setup_section(drive: DriveAnalysis) -> Section:
    """Drive identity, host, versions and durations, the preconditioning, and the steps
    left out (failed, or a file missing or unreadable)."""
    manifest, summary = drive.results.manifest, drive.results.summary
    parts = [
        table(drive_facts(manifest, summary), "Drive and host"),
        table(run_facts(manifest, summary), "Test"),
    ]
    sentences = []
    fills = preconditioning_steps(drive.steps, drive.fills, manifest)
    if fills:
        filled = fill_totals(drive.steps, fills, manifest)
        view = filled.select(
            pl.col("step").alias("Step"),
            pl.col("workload").alias("Workload"),
            pl.col("passes").alias("Passes"),
            pl.col("io_bytes").map_elements(format_bytes, return_dtype=pl.String).alias("Written"),
            (pl.col("bw_bytes_s") / MB).alias("MB/s"),
            pl.col("runtime_s").map_elements(format_duration, return_dtype=pl.String).alias("Time"),
        )
        parts.append(table(view, "Preconditioning", numeric=("Written", "Time")))
        written = format_bytes(filled["io_bytes"].sum())
        sentences.append(
            f"The target was preconditioned by {len(fills)} size-based write step(s) "
            f"({written} written) before the measurements."
        )
        sentences += _short_fills(filled, summary)
    failed = [f"{line[0].upper()}{line[1:]}." for line in manifest.failures()]
    damaged = [
        f"Left out, as a file is missing or could not be read: {damage}."
        for damage in drive.results.damaged
    ]
    return Section(sentences + failed + _interrupted(summary) + damaged, parts)


def _short_fills(filled: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """A sentence per preconditioning step that ended at its time cap with less written than
    its passes plan (:func:`~ssdlab.analysis.fill.cut_at_cap`; an interrupted step has its
    own sentence)."""
    stopped = set(summary.filter(pl.col("status") == "interrupted")["step_index"].to_list())
    short = filled.filter(pl.col("cut_at_cap") & ~pl.col("step_index").is_in(stopped))
    return [
        f"{step} ended at its time cap ({format_duration(runtime_s)}) having written "
        f"{format_bytes(io_bytes)} of its planned {format_bytes(planned)} "
        f"({io_bytes / planned:.0%}): the drive is not preconditioned as the suite means, so "
        "the figures after it may not be those of a preconditioned drive."
        for step, planned, io_bytes, runtime_s in short.select(
            "step", "planned_bytes", "io_bytes", "runtime_s"
        ).iter_rows()
    ]


def _interrupted(summary: pl.DataFrame) -> list[str]:
    """A sentence naming the steps stopped before their end (their figures cover only the
    time they ran; the tables mark them)."""
    stopped = (
        summary.filter(pl.col("status") == "interrupted")
        .group_by("step_index", "step")
        .agg(pl.col("runtime_s").max())
        .sort("step_index")
    )
    if not stopped.height:
        return []
    ran = ", ".join(
        f"{step} after {format_duration(runtime_s)}"
        for step, runtime_s in stopped.select("step", "runtime_s").iter_rows()
    )
    return [
        f"{findings.count(stopped.height, 'step')} stopped before the end ({ran}): their "
        "figures cover only the time they ran and are marked (interrupted) in the tables."
    ]


@SECTIONS
def key_findings(drive: DriveAnalysis) -> Section:
    """The first findings of every section in :data:`KEY_FINDINGS`, as the review's summary
    (the sections are built once: their cells show the same findings)."""
    sentences = [s for build in KEY_FINDINGS for s in build(drive).findings[:PER_SECTION]]
    if not sentences:
        return Section(missing="No findings: the run has no classified workload.")
    return Section(sentences)


@SECTIONS
def steady_state_section(drive: DriveAnalysis) -> Section:
    """Per round block, the SNIA PTS steady-state pages: the convergence plot, the
    measurement window with its bands and fit, and the determination (see :mod:`.pts`)."""
    return pts.steady_state(drive)


@SECTIONS
def pts_results_section(drive: DriveAnalysis) -> Section:
    """The SNIA PTS result pages: IOPS matrix, throughput, response times, write
    saturation, as tables and interactive 2D/3D plots (see :mod:`.pts`)."""
    return pts.results(drive)


hir_section = SECTIONS(recovery.hir_section)
xsr_section = SECTIONS(recovery.xsr_section)


@SECTIONS
def consistency_section(drive: DriveAnalysis) -> Section:
    """Per-second IOPS of long random-write runs on log and linear axes, and the tail score."""
    runs = drive.consistency
    if not runs:
        return Section(
            missing="No performance consistency run: it needs a random-write step with at "
            f"least {MIN_CONSISTENCY_WINDOWS} per-second IOPS windows"
            + (
                " (a step's time series was left out, as a log is missing or unreadable: see "
                "the set-up section)."
                if any(d.left_out == "time series" for d in drive.results.damaged)
                else "."
            )
        )
    sentences, parts = [], []
    rows = []
    for run in runs:
        f = run.figures
        sentences.append(findings.consistency(run.workload, f))
        parts.append(charts.consistency(run.series, f.start_s, run.workload))
        rows.append(
            (
                run.workload,
                format_duration(f.end_s - f.start_s + 1),
                f.iops_mean,
                f.iops_stddev,
                f.mean_over_stddev,
                f.iops_p1,
                f.iops_p99,
                f.iops_min,
                f.iops_max,
            )
        )
    score = pl.DataFrame(
        rows,
        schema=[
            "Workload",
            "Tail",
            "Avg IOPS",
            "Std dev",
            "Avg / std dev",
            "p1 IOPS",
            "p99 IOPS",
            "Min IOPS",
            "Max IOPS",
        ],
        orient="row",
    )
    parts.append(table(score, "Tail score (last quarter of each run, at most 400 s)"))
    return Section(sentences, parts)


fill_section = SECTIONS(recovery.fill_section)


@SECTIONS
def qd_scaling_section(drive: DriveAnalysis) -> Section:
    """Throughput and latency over QD per sweep, the 95 % point marked; the numbers."""
    points = drive.qd
    if not points.height:
        return Section(
            missing="No queue-depth sweep: no read or write workload was measured at two or "
            "more queue depths."
        )
    points = with_intervals(points, drive.every_repeat)  # error bars of repeated steps
    power = drive.results.power.height > 0
    if power:
        points = points.join(
            drive.results.power.select("step_index", "avg_w", "iops_per_w", "mb_s_per_w"),
            on="step_index",
            how="left",
        ).with_columns(
            efficiency=pl.when(pl.col("metric") == "MB/s")
            .then(pl.col("mb_s_per_w"))
            .otherwise(pl.col("iops_per_w")),
            efficiency_metric=pl.when(pl.col("metric") == "MB/s")
            .then(pl.lit("MB/s per W"))
            .otherwise(pl.lit("IOPS per W")),
        )
    parts: list[Any] = [
        charts.qd_scaling(
            rows.with_columns(series=pl.col("workload")),
            f"{workload}: throughput and latency by queue depth",
        )
        for (workload,), rows in points.group_by("workload", maintain_order=True)
    ]
    view = points.select(
        pl.col("workload").alias("Workload"),
        pl.col("qd_label").alias("QD"),
        pl.col("iops").alias("IOPS"),
        (pl.col("bw_bytes_s") / MB).alias("MB/s"),
        (pl.col("clat_mean_ns") / 1e3).alias("Mean µs"),
        (pl.col("clat_p99_ns") / 1e3).alias("p99 µs"),
        (pl.col("clat_p99_99_ns") / 1e3).alias("p99.99 µs"),
        *(
            [
                pl.col("avg_w").alias("W"),
                pl.col("iops_per_w").alias("IOPS/W"),
                pl.col("mb_s_per_w").alias("MB/s/W"),
            ]
            if power
            else []
        ),
        pl.when(pl.col("at_95")).then(pl.lit("◆ 95 %")).otherwise(pl.lit("")).alias("Point"),
    )
    parts.append(table(view, "Queue-depth scaling; ◆ marks the lowest QD with 95 % of the peak"))
    return Section(findings.qd_scaling(points), parts)


def _mix_section(drive: DriveAnalysis, pattern: str) -> Section:
    """Throughput over the read share for each QD, the sweep average and the 70/30 point."""
    steps = drive.mixes.steps.filter(pl.col("pattern") == pattern)
    if not steps.height:
        return Section(
            missing=f"No {pattern} mix sweep: no {pattern} workload was measured at three or "
            "more read shares including a mixed one."
        )
    sweeps = drive.mixes.sweeps.filter(pl.col("pattern") == pattern)
    steps = with_intervals(steps, drive.every_repeat)  # error bars of repeated steps
    parts: list[Any] = []
    for (bs,), rows in steps.group_by("bs_bytes", maintain_order=True):
        parts.append(
            charts.mix_sweep(
                rows.with_columns(series=pl.col("sweep")),
                sweeps.filter(pl.col("bs_bytes").eq_missing(bs)).with_columns(
                    series=pl.col("sweep")
                ),
                f"{bs_label(bs)} {pattern} mixes",
            )
        )
    wide = steps.pivot(on="read_pct", index=["sweep", "metric"], values="value", sort_columns=False)
    view = wide.join(sweeps.select("sweep", "avg"), on="sweep").select(
        pl.col("sweep").alias("Sweep"),
        pl.col("metric").alias("Unit"),
        *(pl.col(c).alias(f"{c} % reads") for c in wide.columns[2:]),
        pl.col("avg").alias("Average"),
    )
    parts.append(table(view, f"{pattern.capitalize()} mixes by read share"))
    return Section(findings.mix_sweeps(sweeps, steps), parts)


@SECTIONS
def random_mix_section(drive: DriveAnalysis) -> Section:
    """Random mix sweeps (see :func:`_mix_section`)."""
    return _mix_section(drive, "random")


@SECTIONS
def sequential_mix_section(drive: DriveAnalysis) -> Section:
    """Sequential mix sweeps (see :func:`_mix_section`)."""
    return _mix_section(drive, "sequential")


@SECTIONS
def latency_section(drive: DriveAnalysis) -> Section:
    """Latency percentile curves from the histograms and the mean/p99/p99.99/max table."""
    if not drive.classified.height:
        if wsat_steps(drive.steps, drive.results.manifest).height:
            return Section(
                missing="No latency figures: write saturation, the run's only measured step, "
                "is shown in SNIA PTS results."
            )
        return Section(missing="No latency figures: the run has no measured read or write step.")
    chosen, curves = drive.qos, drive.percentiles
    parts: list[Any] = []
    intervals = drive.repeat_percentiles
    if curves is not None and curves.height:
        parts.append(charts.latency_percentiles(curves, chosen["series"].to_list(), intervals))
    ios = pl.col("io_bytes") / pl.col("bs_bytes")
    view = chosen.select(
        pl.col("series").alias("Workload"),
        pl.col("iops").alias("IOPS"),
        (pl.col("clat_mean_ns") / 1e3).alias("Mean µs"),
        *(
            percentile_cells(column, p, ios).alias(name)
            for name, (column, p) in LATENCY_PERCENTILES.items()
        ),
        (pl.col("clat_max_ns") / 1e3).alias("Max µs"),
    )
    caption = "Completion latency (fio's percentiles)"
    parts.append(table(view, caption, numeric=tuple(LATENCY_PERCENTILES)))
    over_repeats = repeats.latency_repeats_table(intervals)
    if over_repeats is not None:
        parts.append(over_repeats)
    sentences = findings.latency_qos(chosen)
    if curves is None or not curves.height:
        sentences.append(
            "No percentile curve: fio's output has no completion-latency histogram "
            "(run fio with --output-format=json+)."
        )
    return Section(sentences, parts)


latency_over_time_section = SECTIONS(latency_views.latency_over_time_section)
exceedance_section = SECTIONS(latency_views.exceedance_section)
load_section = SECTIONS(load_views.load_section)
dirth_section = SECTIONS(load_views.dirth_section)


@SECTIONS
def qos_targets_section(review: qos.QosReview | DriveAnalysis) -> Section:
    """The steps judged against the review's QoS profile (:func:`.qos.qos_section`; the
    subject pairs the run with its profile); one line for a run given none."""
    if isinstance(review, DriveAnalysis):
        review = qos.QosReview(review)
    return qos.qos_section(review.drive, review.profile)


repeatability_section = SECTIONS(repeats.repeatability_section)


@SECTIONS
def power_section(drive: DriveAnalysis) -> Section:
    """Average power per step, efficiency and the power trace."""
    power = drive.results.power
    if not power.height:
        return Section(
            missing="No power data: no power meter was recorded during this run, so power "
            "and efficiency (IOPS and MB/s per watt) are unknown."
        )
    power = power.sort("step_index").with_columns(
        label=pl.col("step_index").replace_strict(
            drive.step_labels, default=pl.col("step"), return_dtype=pl.String
        )
    )
    parts: list[Any] = [charts.power_per_step(power)]
    for column, unit in (("iops_per_w", "IOPS per watt"), ("mb_s_per_w", "MB/s per watt")):
        if power[column].drop_nulls().len():
            parts.append(charts.efficiency(power, column, unit))
    if drive.results.power_trace.height:
        parts.append(charts.power_trace(drive.results.power_trace))
    view = power.select(
        pl.col("step").alias("Step"),
        pl.col("label").alias("Workload"),
        pl.col("avg_w").alias("Avg W"),
        pl.col("min_w").alias("Min W"),
        pl.col("max_w").alias("Max W"),
        pl.col("iops").alias("IOPS"),
        (pl.col("bw_bytes_s") / MB).alias("MB/s"),
        pl.col("iops_per_w").alias("IOPS/W"),
        pl.col("mb_s_per_w").alias("MB/s/W"),
        pl.when(pl.col("covered")).then(pl.lit("yes")).otherwise(pl.col("reason")).alias("Covered"),
    )
    parts.append(table(view, "Power per step"))
    over_repeats = repeats.power_repeats_table(drive)
    if over_repeats is not None:
        parts.append(over_repeats)
    return Section(findings.power(power), parts)


act_section = SECTIONS(act_views.act_section)
endurance_section = SECTIONS(endurance_views.endurance_section)


@SECTIONS
def all_results_section(drive: DriveAnalysis) -> Section:
    """Every step's throughput and latency, chart and table."""
    summary = drive.results.summary
    return Section(
        parts=[
            charts.iops_by_step(summary),
            charts.latency_by_step(summary),
            table(summary_view(summary.sort("step_index", "direction")), "All steps"),
        ]
    )


#: the sections whose first findings make the key findings, in order
KEY_FINDINGS = (
    steady_state_section,
    pts_results_section,
    consistency_section,
    qd_scaling_section,
    random_mix_section,
    sequential_mix_section,
    latency_section,
    latency_over_time_section,
    load_section,
    dirth_section,
    hir_section,
    xsr_section,
    fill_section,
    repeatability_section,
    power_section,
    act_section,
    endurance_section,
)

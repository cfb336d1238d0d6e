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
from ..analysis.pts import wsat_steps
from ..analysis.repeats import LATENCY_PERCENTILES, with_intervals
from ..analysis.tails import MIN_CONSISTENCY_WINDOWS
from ..analysis.workloads import label_columns
from ..phrases import rephrase
from ..tables import percentile_cells, summary_view
from ..units import MB, bs_label, format_duration
from . import act as act_views
from . import blocksize as blocksize_views
from . import endurance as endurance_views
from . import headline as headline_views
from . import latency as latency_views
from . import load as load_views
from . import pts, qos, recovery, repeats, setup
from .section import Registry, Section, table

NOTEBOOK = "drive_review"
SECTIONS = Registry(NOTEBOOK, once=True)
#: findings of each section the key findings repeat, unless it names them (``Section.key``)
PER_SECTION = 2


setup_section = SECTIONS(setup.setup_section)
headline_section = SECTIONS(headline_views.headline_section)


def _key(section: Section) -> list[str]:
    """The findings of ``section`` the key findings repeat: its ``key``, else its first
    :data:`PER_SECTION`."""
    return section.findings[:PER_SECTION] if section.key is None else section.key


@SECTIONS
def key_findings(drive: DriveAnalysis) -> Section:
    """The key findings of every section in :data:`KEY_FINDINGS` (:func:`_key`), as the
    review's summary (the sections are built once: their cells show the same findings)."""
    sentences = [s for build in KEY_FINDINGS for s in _key(build(drive))]
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
    points = headline_views.with_engines(drive, points)
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
        headline_views.ran_at_column().alias("QD"),
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
        pl.col("step").alias("Step"),
    )
    parts.append(table(view, "Queue-depth scaling; ◆ marks the lowest QD with 95 % of the peak"))
    sweeps = []
    for (workload,), rows in points.group_by("workload", maintain_order=True):
        said = headline_views.depth_sentence(workload, rows.drop_nulls("value"))
        sweeps += [said] if said else findings.qd_scaling(rows)
    return Section(sweeps + _measured_twice(drive, points), parts, key=sweeps)


def _measured_twice(drive: DriveAnalysis, points: pl.DataFrame) -> list[str]:
    """For the section's points that two or more steps measured (``DriveAnalysis.
    measured_twice``), the step it shows and why."""
    twice = drive.measured_twice
    if not twice.height or not points.height:
        return []
    shown = points.select("workload", "qd_label", used_step="step").unique()
    keys = ["workload", "qd_label", "used_step"]
    return [
        f"{rephrase(row['workload'] + ' ' + row['qd_label'])} was measured by "
        f"{findings.and_list([row['used_step'], *row['other_steps'].split(', ')])}; the "
        f"figures shown are {row['used_step']}'s ({row['why']})."
        for row in twice.join(shown, on=keys, how="semi").iter_rows(named=True)
    ]


def _mix_table(drive: DriveAnalysis, steps: pl.DataFrame, pattern: str) -> Any:
    """The mix sweeps by read share: throughput and, with a power meter, average W and work
    per watt (IOPS/W below 64K blocks, else MB/s/W) of every point; each row's average."""
    rows = [steps.select("sweep", "read_pct", pl.col("metric").alias("Unit"), "value")]
    power = drive.results.power.filter(pl.col("covered"))
    if power.height:
        watts = steps.join(
            power.select("step_index", "avg_w", "iops_per_w", "mb_s_per_w"), on="step_index"
        )
        per_w = pl.col("metric") == "MB/s"
        rows += [
            watts.select(
                "sweep", "read_pct", pl.lit("W").alias("Unit"), pl.col("avg_w").alias("value")
            ),
            watts.select(
                "sweep",
                "read_pct",
                pl.when(per_w).then(pl.lit("MB/s/W")).otherwise(pl.lit("IOPS/W")).alias("Unit"),
                pl.when(per_w).then("mb_s_per_w").otherwise("iops_per_w").alias("value"),
            ),
        ]
    long = pl.concat(rows, how="vertical_relaxed")
    order = {name: i for i, name in enumerate(steps["sweep"].unique(maintain_order=True))}
    averages = long.group_by("sweep", "Unit", maintain_order=True).agg(
        Average=pl.col("value").mean()
    )
    wide = long.pivot(on="read_pct", index=["sweep", "Unit"], values="value", sort_columns=False)
    sources = steps.group_by("sweep").agg(  # a sweep's steps: its suite test, else its steps
        pl.col("test").fill_null(pl.col("step")).unique(maintain_order=True).str.join(", ")
    )
    view = (
        wide.join(averages, on=["sweep", "Unit"], maintain_order="left")
        .join(sources, on="sweep", how="left", maintain_order="left")
        .sort(pl.col("sweep").replace_strict(order), maintain_order=True)
        .select(
            pl.col("sweep").alias("Sweep"),
            "Unit",
            *(pl.col(c).alias(f"{c} % reads") for c in wide.columns[2:]),
            "Average",
            pl.col("test").alias("Steps"),
        )
    )
    return table(view, f"{pattern.capitalize()} mixes by read share (Steps: the suite's test)")


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
    parts.append(_mix_table(drive, steps, pattern))
    steps = headline_views.with_engines(drive, steps)
    caveats = [
        (sweep, headline_views.depth_caveat(rows.to_dicts()))
        for (sweep,), rows in steps.group_by("sweep", maintain_order=True)
    ]
    said = pl.DataFrame(caveats, schema={"sweep": pl.String, "caveat": pl.String}, orient="row")
    headlines = findings.mix_sweeps(sweeps.join(said, on="sweep", how="left"), steps)
    named = steps.with_columns(**label_columns())
    return Section(headlines + _measured_twice(drive, named), parts, key=headlines)


@SECTIONS
def random_mix_section(drive: DriveAnalysis) -> Section:
    """Random mix sweeps (see :func:`_mix_section`)."""
    return _mix_section(drive, "random")


@SECTIONS
def sequential_mix_section(drive: DriveAnalysis) -> Section:
    """Sequential mix sweeps (see :func:`_mix_section`)."""
    return _mix_section(drive, "sequential")


blocksize_section = SECTIONS(blocksize_views.blocksize_section)


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
    return Section(findings.power(power) + _idle(drive.results.power_idle), parts)


def _idle(idle: pl.DataFrame) -> list[str]:
    """A sentence per phase of the power trace outside the run (the drive idle)."""
    return [
        f"Idle {phase} ({findings.count(samples, 'sample')} over {format_duration(seconds)}): "
        f"{avg_w:.2f} W on average ({min_w:.2f} W to {max_w:.2f} W)."
        for phase, seconds, samples, avg_w, min_w, max_w in idle.iter_rows()
    ]


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
    blocksize_section,
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

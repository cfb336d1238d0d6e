"""The review reports: what the drive review and comparison notebooks display, and rendering.

Workloads are classified from the summary columns (rw, bs_bytes, iodepth x numjobs,
rwmixread), never from step names, so imported sweeps get the same sections as native runs:

- a **QD sweep** is one pure read or write workload (access pattern, block size, direction)
  measured at two or more queue depths (QD = iodepth x numjobs);
- a **mix sweep** is one access pattern, block size, iodepth and numjobs measured at three or
  more read shares, at least one of them mixed;
- when a run measured the same point twice, the later step counts; size-based write steps
  of native runs (``loops``: fills such as preconditioning) are not measurements.

Each ``*_section`` function returns a :class:`Section`: findings, charts and tables, or one
line saying what data is missing. Notebook cells only call these functions.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import polars as pl

from . import charts, findings
from .act.latency import ACT_LIMITS
from .analysis import Consistency, SteadyState, consistency, fio_percentiles, mix_sweep, qd_scaling
from .analysis.figures import RUN_KEYS
from .errors import InputError
from .manifest import Manifest
from .resources import notebook_path
from .results import Results, load
from .suite import MIXED_RW
from .tables import (
    MB,
    bs_label,
    drive_facts,
    format_bytes,
    format_duration,
    format_number,
    html_table,
    qd_label,
    run_facts,
    summary_view,
)

REVIEW_NOTEBOOK = "drive_review"
COMPARISON_NOTEBOOK = "drive_comparison"
PURE_RW = ("read", "randread", "write", "randwrite")
#: from this block size on, throughput is reported as MB/s instead of IOPS
BANDWIDTH_BS = 65536
#: a consistency run needs this many one-second IOPS windows
MIN_CONSISTENCY_WINDOWS = 5
#: consistency is scored on the last quarter of the run, at most this long (reviews: 400 s)
TAIL_S = 400.0
#: percentile curves run from 1 % (below it lie the odd fastest I/Os) to this many nines
#: (99.9999 %), in steps of NINES_STEP on the nines scale
MAX_NINES, NINES_STEP = 6.0, 0.05
FIRST_NINES = -math.log10(0.99)
QOS_FALLBACK_SERIES = 8


# -- display -------------------------------------------------------------------------------


def findings_html(sentences: Sequence[str]) -> str:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in sentences)
    return f'<div class="ssdlab-findings"><ul>{items}</ul></div>'


def table(frame: pl.DataFrame, caption: str | None = None, **options: Any) -> Any:
    """An HTML table for a notebook output."""
    from IPython.display import HTML

    return HTML(html_table(frame, caption=caption, **options))


@dataclass
class Section:
    """What one report section shows: findings, then charts and tables, or what is missing."""

    findings: list[str] = field(default_factory=list)
    parts: list[Any] = field(default_factory=list)
    missing: str | None = None

    @property
    def charts(self) -> list[alt.TopLevelMixin]:
        return [p for p in self.parts if isinstance(p, alt.TopLevelMixin)]

    def _ipython_display_(self) -> None:
        from IPython.display import HTML, display

        if self.missing is not None:
            display(HTML(f'<p class="ssdlab-missing">{html.escape(self.missing)}</p>'))
            return
        if self.findings:
            display(HTML(findings_html(self.findings)))
        for part in self.parts:
            display(part)


# -- classifying workloads -------------------------------------------------------------------


def _base_rw() -> pl.Expr:
    return pl.col("rw").str.split(":").list.first()


def fill_steps(manifest: Manifest) -> set[int]:
    """Indexes of size-based write steps (preconditioning fills) of a native run."""
    return {
        s.index
        for s in manifest.steps
        if s.workload is not None and s.workload.loops is not None and s.workload.writes
    }


def per_step(summary: pl.DataFrame) -> pl.DataFrame:
    """One row per step and direction: jobs fio reported separately are combined.

    Rates and byte counts add up; mean latencies are weighted by IOPS; percentiles and
    maxima take the worst job.
    """
    keys = [
        c
        for c in (*RUN_KEYS, "step_index", "step", "block", "round", "direction", "rw")
        if c in summary.columns
    ]
    first = ["bs_bytes", "iodepth", "numjobs", "rwmixread"]
    weighted = ["lat_mean_ns", "clat_mean_ns"]
    worst = [c for c in summary.columns if c.startswith("clat_p") or c == "clat_max_ns"]
    weight = pl.col("iops").fill_null(0)
    return summary.group_by(keys, maintain_order=True).agg(
        *(pl.col(c).first() for c in first),
        *(pl.col(c).sum() for c in ("iops", "bw_bytes_s", "io_bytes") if c in summary.columns),
        pl.col("runtime_s").max(),
        *(
            ((pl.col(c) * weight).sum() / weight.sum()).alias(c)
            if c in summary.columns
            else pl.lit(None, pl.Float64).alias(c)
            for c in weighted
        ),
        *(pl.col(c).max() for c in worst),
    )


def workload_label(pattern: str, bs_bytes: int, read_pct: int) -> str:
    """``4K random read``, ``128K sequential write``, ``4K random 70/30``."""
    what = {100: "read", 0: "write"}.get(read_pct, f"{read_pct}/{100 - read_pct}")
    return f"{bs_label(bs_bytes)} {pattern} {what}"


def _labels(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        workload=pl.struct("pattern", "bs_bytes", "read_pct").map_elements(
            lambda r: workload_label(r["pattern"], r["bs_bytes"], r["read_pct"]),
            return_dtype=pl.String,
        ),
        qd_label=pl.struct("iodepth", "numjobs").map_elements(
            lambda r: qd_label(r["iodepth"], r["numjobs"]), return_dtype=pl.String
        ),
        metric=pl.when(pl.col("bs_bytes") >= BANDWIDTH_BS)
        .then(pl.lit("MB/s"))
        .otherwise(pl.lit("IOPS")),
    )


def classify(summary: pl.DataFrame, manifest: Manifest | None = None) -> pl.DataFrame:
    """Measured steps, one row per step and direction, with ``pattern`` (random or
    sequential), ``read_pct``, ``qd``, ``mixed``, ``workload``, ``qd_label`` and ``metric``
    (IOPS, or MB/s from 64K blocks on). Trims and preconditioning fills are left out."""
    frame = per_step(summary)
    if manifest is not None:
        frame = frame.filter(~pl.col("step_index").is_in(list(fill_steps(manifest))))
    base = _base_rw()
    frame = frame.filter(base.is_in([*PURE_RW, *MIXED_RW])).with_columns(
        pattern=pl.when(base.str.starts_with("rand"))
        .then(pl.lit("random"))
        .otherwise(pl.lit("sequential")),
        read_pct=pl.when(base.is_in(["read", "randread"]))
        .then(100)
        .when(base.is_in(["write", "randwrite"]))
        .then(0)
        .otherwise(pl.col("rwmixread"))
        .cast(pl.Int64),
        qd=pl.col("iodepth") * pl.col("numjobs"),
        mixed=base.is_in(list(MIXED_RW)),
    )
    return _labels(frame)


def _throughput() -> pl.Expr:
    """The workload's headline figure: IOPS, or MB/s for large blocks."""
    return (
        pl.when(pl.col("metric") == "MB/s")
        .then(pl.col("bw_bytes_s") / MB)
        .otherwise(pl.col("iops"))
        .alias("value")
    )


def _latest(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The last step measured at each key (a point measured twice counts once)."""
    return frame.filter(pl.col("step_index") == pl.col("step_index").max().over(keys))


def _order(frame: pl.DataFrame) -> pl.DataFrame:
    """Random before sequential, small blocks first, reads before writes."""
    return frame.sort(
        pl.col("pattern") != "random",
        "bs_bytes",
        pl.col("read_pct"),
        "qd",
        descending=[False, False, True, False],
    )


def qd_points(classified: pl.DataFrame) -> pl.DataFrame:
    """One row per run, QD sweep and QD: ``workload``, ``qd``, ``qd_label``, ``value`` (in
    ``metric``), rates, latencies and ``at_95`` (the lowest QD reaching 95 % of the peak)."""
    workload = [*RUN_KEYS, "pattern", "bs_bytes", "direction"]
    pure = _latest(classified.filter(~pl.col("mixed")), [*workload, "qd"])
    sweeps = pure.filter(pl.col("qd").n_unique().over(workload) >= 2)
    if not sweeps.height:
        return sweeps.with_columns(value=pl.lit(None, pl.Float64), at_95=pl.lit(False))
    best = qd_scaling(sweeps).select(*RUN_KEYS, "rw", "bs_bytes", "direction", "qd")
    return _order(
        sweeps.join(
            best.with_columns(at_95=pl.lit(True)),
            on=[*RUN_KEYS, "rw", "bs_bytes", "direction", "qd"],
            how="left",
            nulls_equal=True,
        ).with_columns(_throughput(), pl.col("at_95").fill_null(False))
    )


@dataclass(frozen=True)
class Mixes:
    """Mix sweeps: ``steps`` (one row per run, sweep and read share: ``sweep``, ``read_pct``,
    ``value`` in ``metric``) and ``sweeps`` (per run and sweep: ``avg``, ``at_70_30``,
    ``low``, ``low_read_pct``, ``steps``)."""

    steps: pl.DataFrame
    sweeps: pl.DataFrame


def mix_points(classified: pl.DataFrame) -> Mixes:
    """The mix sweeps among classified steps (see the module docstring)."""
    keys = [*RUN_KEYS, "pattern", "bs_bytes", "iodepth", "numjobs"]
    latest = _latest(classified, [*keys, "read_pct"])
    shares = latest.group_by(keys).agg(
        pl.col("read_pct").n_unique().alias("shares"),
        ((pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)).any().alias("has_mix"),
    )
    chosen = latest.join(
        shares.filter((pl.col("shares") >= 3) & pl.col("has_mix")), on=keys, nulls_equal=True
    )
    if not chosen.height:
        empty = pl.DataFrame(schema={"sweep": pl.String, "pattern": pl.String})
        return Mixes(empty, empty)
    swept = mix_sweep(chosen)
    labels = (
        chosen.select(*keys, "metric")
        .unique()
        .with_columns(
            sweep=pl.struct("pattern", "bs_bytes", "iodepth", "numjobs").map_elements(
                lambda r: (
                    f"{bs_label(r['bs_bytes'])} {r['pattern']} "
                    + qd_label(r["iodepth"], r["numjobs"])
                ),
                return_dtype=pl.String,
            ),
            qd=pl.col("iodepth") * pl.col("numjobs"),
        )
    )
    steps = (
        swept.steps.join(labels, on=keys, nulls_equal=True)
        .with_columns(_throughput())
        .sort("bs_bytes", "qd", pl.col("read_pct"), descending=[False, False, True])
    )
    sweeps = (
        steps.group_by(*RUN_KEYS, "sweep", "pattern", "bs_bytes", "qd", "metric")
        .agg(
            avg=pl.col("value").mean(),
            at_70_30=pl.col("value").filter(pl.col("read_pct") == 70).first(),
            low=pl.col("value").min(),
            low_read_pct=pl.col("read_pct").sort_by("value").first(),
            steps=pl.len(),
        )
        .sort("bs_bytes", "qd")
    )
    return Mixes(steps, sweeps)


@dataclass(frozen=True)
class ConsistencyRun:
    """A long random-write step: its per-second IOPS and the tail score."""

    step_index: int
    step: str
    workload: str
    series: pl.DataFrame  # t_s, iops
    tail_s: float
    figures: Consistency


def consistency_runs(results: Results) -> list[ConsistencyRun]:
    """Random-write steps with per-second IOPS long enough to judge consistency: at least
    MIN_CONSISTENCY_WINDOWS windows and half as many as the longest such step."""
    classified = classify(results.summary, results.manifest)
    writes = classified.filter((pl.col("pattern") == "random") & (pl.col("read_pct") == 0))
    if not writes.height or not results.timeseries.height:
        return []
    series = (
        results.timeseries.filter(pl.col("step_index").is_in(writes["step_index"].to_list()))
        .group_by("step_index", "t_s")
        .agg(pl.col("iops").sum())
        .sort("step_index", "t_s")
    )
    windows = series.group_by("step_index").len()
    longest = windows["len"].max() if windows.height else 0
    chosen = windows.filter(
        (pl.col("len") >= MIN_CONSISTENCY_WINDOWS) & (pl.col("len") * 2 >= longest)
    )["step_index"].sort()
    runs = []
    for index in chosen.to_list():
        row = writes.filter(pl.col("step_index") == index).row(0, named=True)
        steps = series.filter(pl.col("step_index") == index).select("t_s", "iops")
        duration = steps["t_s"].max() - steps["t_s"].min() + 1
        tail = max(min(TAIL_S, duration / 4), 2.0)
        runs.append(
            ConsistencyRun(
                step_index=index,
                step=row["step"],
                workload=f"{row['workload']} {row['qd_label']}",
                series=steps,
                tail_s=tail,
                figures=consistency(steps, tail),
            )
        )
    return runs


# -- drive review sections -------------------------------------------------------------------


def setup_section(results: Results) -> Section:
    """Drive identity, host, versions and durations, and the preconditioning."""
    manifest, summary = results.manifest, results.summary
    parts = [
        table(drive_facts(manifest, summary), "Drive and host"),
        table(run_facts(manifest, summary), "Test"),
    ]
    sentences = []
    fills = fill_steps(manifest)
    if fills:
        filled = (
            classify(summary)
            .filter(pl.col("step_index").is_in(list(fills)))
            .group_by("step_index", "step", "workload", "qd_label")
            .agg(pl.col("io_bytes").sum(), pl.col("runtime_s").max(), pl.col("bw_bytes_s").sum())
            .sort("step_index")
        )
        loops = {s.index: s.workload.loops for s in manifest.steps if s.index in fills}
        view = filled.select(
            pl.col("step").alias("Step"),
            pl.concat_str("workload", pl.lit(" "), "qd_label").alias("Workload"),
            pl.col("step_index").replace_strict(loops, return_dtype=pl.Int64).alias("Passes"),
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
    return Section(sentences, parts)


def _metric_scale(metric: str) -> tuple[float, str]:
    """Display factor and unit of a steady-state metric."""
    if metric == "bw_bytes_s":
        return 1 / MB, "MB/s"
    if metric.endswith("_ns"):
        return 1e-3, "µs"
    return 1.0, "IOPS"


def _steady_what(results: Results, rounds: pl.DataFrame, metric: str) -> str:
    """What a round block tracks: the tracked step's workload and the metric's unit."""
    classified = classify(results.summary, results.manifest)
    step = rounds["step"][0]
    row = classified.filter(pl.col("step") == step)
    _, unit = _metric_scale(metric)
    if not row.height:
        return f"{step} {unit}"
    first = row.row(0, named=True)
    return f"{first['workload']} {first['qd_label']} {unit}"


def _window_table(results: Results, block: str, rounds: list[int], metric: str) -> pl.DataFrame:
    """Average of every cell of a round block over the measurement window (PTS result table)."""
    cells = classify(results.summary, results.manifest).filter(
        (pl.col("block") == block) & pl.col("round").is_in(rounds)
    )
    factor, unit = _metric_scale(metric)
    per_cell = cells.group_by("step_index", "bs_bytes", "read_pct").agg(
        pl.col("iops").sum(), pl.col("bw_bytes_s").sum(), pl.col("clat_mean_ns").mean()
    )
    column = {"IOPS": "iops", "MB/s": "bw_bytes_s", "µs": "clat_mean_ns"}[unit]
    averaged = (
        per_cell.group_by("bs_bytes", "read_pct")
        .agg((pl.col(column).mean() * factor).alias("value"))
        .sort("read_pct", descending=True)
    )
    wide = averaged.pivot(on="read_pct", index="bs_bytes", values="value").sort(
        "bs_bytes", descending=True
    )
    return wide.select(
        pl.col("bs_bytes").map_elements(bs_label, return_dtype=pl.String).alias("Block"),
        *(pl.col(c).alias(f"{c}/{100 - int(c)} {unit}") for c in wide.columns[1:]),
    )


def steady_state_section(results: Results) -> Section:
    """Per round block: tracked variable per round with bands and fit, the determination."""
    if not results.steady_state.height:
        return Section(
            missing="No steady-state rounds: this run has no round blocks (the SNIA PTS "
            "suites repeat their test matrix until the tracked variable is steady)."
        )
    sentences, parts = [], []
    for determination in results.steady_state.iter_rows(named=True):
        block = determination["block"]
        rounds = results.rounds.filter(pl.col("block") == block).sort("round")
        if not rounds.height:
            sentences.append(f"Block {block}: {determination['reason']}.")
            continue
        factor, unit = _metric_scale(determination["metric"])
        what = _steady_what(results, rounds, determination["metric"])
        window = rounds.filter(pl.col("in_window"))
        scaled = {
            k: (determination[k] * factor if determination[k] is not None else None)
            for k in (
                "mean",
                "data_excursion",
                "allowed_data_excursion",
                "slope",
                "intercept",
                "slope_excursion",
                "allowed_slope_excursion",
            )
        }
        state = SteadyState(
            steady=bool(determination["steady"]),
            reason=determination["reason"] or "",
            window=determination["window"],
            rounds=tuple(window["round"].to_list()),
            values=tuple(v * factor for v in window["value"].to_list()),
            **scaled,
        )
        sentences.append(
            findings.steady_state(determination | scaled, window["round"].to_list(), what)
        )
        parts.append(
            charts.steady_state(
                rounds.with_columns(pl.col("value") * factor),
                state,
                f"Block {block}: {what} per round",
                unit,
            )
        )
        parts.append(
            table(
                state.to_table().rename({"item": "Determination", "value": "Value"}),
                f"Steady-state determination, block {block}",
            )
        )
        if state.rounds:
            parts.append(
                table(
                    _window_table(results, block, list(state.rounds), determination["metric"]),
                    f"Block {block}: average over the measurement window "
                    f"(rounds {state.rounds[0]}-{state.rounds[-1]}), by block size and R/W mix",
                )
            )
    return Section(sentences, parts)


def consistency_section(results: Results) -> Section:
    """Per-second IOPS of long random-write runs on log and linear axes, and the tail score."""
    runs = consistency_runs(results)
    if not runs:
        return Section(
            missing="No performance consistency run: it needs a random-write step with at "
            f"least {MIN_CONSISTENCY_WINDOWS} per-second IOPS windows."
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


def qd_scaling_section(results: Results) -> Section:
    """Throughput and latency over QD per sweep, the 95 % point marked; the numbers."""
    points = qd_points(classify(results.summary, results.manifest))
    if not points.height:
        return Section(
            missing="No queue-depth sweep: no read or write workload was measured at two or "
            "more queue depths."
        )
    power = results.power.height > 0
    if power:
        points = points.join(
            results.power.select("step_index", "avg_w", "iops_per_w", "mb_s_per_w"),
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


def mix_section(results: Results, pattern: str) -> Section:
    """Throughput over the read share for each QD, the sweep average and the 70/30 point."""
    mixes = mix_points(classify(results.summary, results.manifest))
    steps = mixes.steps.filter(pl.col("pattern") == pattern)
    if not steps.height:
        return Section(
            missing=f"No {pattern} mix sweep: no {pattern} workload was measured at three or "
            "more read shares including a mixed one."
        )
    sweeps = mixes.sweeps.filter(pl.col("pattern") == pattern)
    parts: list[Any] = []
    for (bs,), rows in steps.group_by("bs_bytes", maintain_order=True):
        parts.append(
            charts.mix_sweep(
                rows.with_columns(series=pl.col("sweep")),
                sweeps.filter(pl.col("bs_bytes") == bs).with_columns(series=pl.col("sweep")),
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
    return Section(findings.mix_sweeps(sweeps), parts)


def random_mix_section(results: Results) -> Section:
    return mix_section(results, "random")


def sequential_mix_section(results: Results) -> Section:
    return mix_section(results, "sequential")


def _qos_choice(classified: pl.DataFrame) -> pl.DataFrame:
    """Steps and directions the QoS section shows, with a ``series`` label, in order: the
    lowest and highest QD of each QD sweep and the mix nearest 70/30 of the deepest mix sweep
    (with its 100 % and 0 % reads when there is no QD sweep), small blocks only when there
    are any; else the first workloads measured."""
    small = classified.filter(pl.col("bs_bytes") < BANDWIDTH_BS)
    pool = _latest(
        small if small.height else classified,
        [*RUN_KEYS, "workload", "qd", "direction", "mixed"],
    )
    chosen = []
    points = qd_points(pool)
    if points.height:
        ends = points.filter(
            (pl.col("qd") == pl.col("qd").min().over("workload"))
            | (pl.col("qd") == pl.col("qd").max().over("workload"))
        )
        chosen.append(ends.select("step_index"))
    steps = mix_points(pool).steps
    if steps.height:
        deepest = steps.filter(pl.col("qd") == pl.col("qd").max())
        mixed = deepest.filter((pl.col("read_pct") > 0) & (pl.col("read_pct") < 100))
        nearest = (pl.col("read_pct") - 70).abs()
        chosen.append(mixed.filter(nearest == nearest.min()).select("step_index"))
        if not points.height:
            ends = deepest.filter(pl.col("read_pct").is_in([0, 100]))
            chosen.append(ends.select("step_index"))
    if chosen:
        pool = pool.join(pl.concat(chosen).unique(), on="step_index")
    picked = _order(pool.sort("step_index", "direction").head(QOS_FALLBACK_SERIES))
    in_mix = (pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)
    return picked.with_columns(
        series=pl.concat_str(
            "workload",
            pl.lit(" "),
            "qd_label",
            pl.when(in_mix).then(pl.lit(" · ") + pl.col("direction")).otherwise(pl.lit("")),
        )
    )


def percentile_curves(latency_hist: pl.DataFrame, chosen: pl.DataFrame) -> pl.DataFrame:
    """Latency at percentiles 1 to 99.9999 % (a grid on the 'nines' scale) per chosen series,
    computed from fio's json+ bins by fio's rule; ``nines`` = -log10(1 - p/100)."""
    bins = (
        latency_hist.join(
            chosen.select("step_index", "direction", "series"), on=["step_index", "direction"]
        )
        .group_by("series", "lat_ns")
        .agg(pl.col("count").sum())
    )
    frames = []
    for (series,), rows in bins.group_by("series", maintain_order=True):
        total = int(rows["count"].sum())
        if total == 0:
            continue
        top = min(MAX_NINES, math.log10(total))
        grid = np.arange(NINES_STEP, top + NINES_STEP / 2, NINES_STEP)
        nines = np.round(np.concatenate([[FIRST_NINES], grid]), 4)
        percentiles = 100 * (1 - 10.0 ** (-nines))
        lat = fio_percentiles(rows["lat_ns"].to_list(), rows["count"].to_list(), percentiles)
        frames.append(
            pl.DataFrame(
                {"series": series, "nines": nines, "percentile": percentiles, "lat_ns": lat}
            )
        )
    schema = {
        "series": pl.String,
        "nines": pl.Float64,
        "percentile": pl.Float64,
        "lat_ns": pl.Float64,
    }
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def latency_section(results: Results) -> Section:
    """Latency percentile curves from the histograms and the mean/p99/p99.99/max table."""
    classified = classify(results.summary, results.manifest)
    if not classified.height:
        return Section(missing="No latency figures: the run has no measured read or write step.")
    chosen = _qos_choice(classified)
    order = chosen["series"].to_list()
    parts: list[Any] = []
    curves = (
        percentile_curves(results.latency_hist, chosen) if results.latency_hist.height else None
    )
    if curves is not None and curves.height:
        parts.append(charts.latency_percentiles(curves, order))
    view = chosen.select(
        pl.col("series").alias("Workload"),
        pl.col("iops").alias("IOPS"),
        (pl.col("clat_mean_ns") / 1e3).alias("Mean µs"),
        (pl.col("clat_p50_ns") / 1e3).alias("p50 µs"),
        (pl.col("clat_p99_ns") / 1e3).alias("p99 µs"),
        (pl.col("clat_p99_9_ns") / 1e3).alias("p99.9 µs"),
        (pl.col("clat_p99_99_ns") / 1e3).alias("p99.99 µs"),
        (pl.col("clat_max_ns") / 1e3).alias("Max µs"),
    )
    parts.append(table(view, "Completion latency (fio's percentiles)"))
    sentences = findings.latency_qos(chosen)
    if curves is None or not curves.height:
        sentences.append(
            "No percentile curve: fio's output has no completion-latency histogram "
            "(run fio with --output-format=json+)."
        )
    return Section(sentences, parts)


def _step_labels(results: Results) -> dict[int, str]:
    classified = classify(results.summary, results.manifest)
    labels = classified.group_by("step_index", maintain_order=True).agg(
        pl.concat_str("workload", pl.lit(" "), "qd_label").first().alias("workload")
    )
    named = dict(zip(labels["step_index"], labels["workload"], strict=True))
    steps = results.summary.select("step_index", "step").unique("step_index")
    return {i: named.get(i, s) for i, s in steps.iter_rows()}


def power_section(results: Results) -> Section:
    """Average power per step, efficiency and the power trace."""
    power = results.power
    if not power.height:
        return Section(
            missing="No power data: no power meter was recorded during this run, so power "
            "and efficiency (IOPS and MB/s per watt) are unknown."
        )
    labels = _step_labels(results)
    power = power.sort("step_index").with_columns(
        label=pl.col("step_index").replace_strict(
            labels, default=pl.col("step"), return_dtype=pl.String
        )
    )
    parts: list[Any] = [charts.power_per_step(power)]
    for column, unit in (("iops_per_w", "IOPS per watt"), ("mb_s_per_w", "MB/s per watt")):
        if power[column].drop_nulls().len():
            parts.append(charts.efficiency(power, column, unit))
    if results.power_trace.height:
        parts.append(charts.power_trace(results.power_trace))
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
    return Section(findings.power(power), parts)


def act_section(results: Results) -> Section:
    """ACT trials against the 1/8/64 ms limits, slices over time, and the score."""
    trials = results.act_trials
    if not trials.height:
        return Section(
            missing="No ACT results: this run has no Aerospike Certification Tool trials."
        )
    trials = trials.sort("load", "trial")
    parts: list[Any] = [charts.act_trials(trials, ACT_LIMITS)]
    if results.act_slices.height:
        parts.append(charts.act_slices(results.act_slices, ACT_LIMITS))
    view = trials.select(
        pl.col("trial").alias("Trial"),
        pl.col("load").map_elements(lambda x: f"{x:g}x", return_dtype=pl.String).alias("Load"),
        pl.col("duration_s").map_elements(format_duration, return_dtype=pl.String).alias("Length"),
        pl.col("status").alias("Status"),
        *(pl.col(f"max_pct_over_{t:g}ms").alias(f"> {t:g} ms (%)") for t in ACT_LIMITS),
        pl.col("source").alias("Source"),
        pl.col("reason").alias("Reason"),
    )
    limits = ", ".join(f"{limit:g} % over {t:g} ms" for t, limit in ACT_LIMITS.items())
    caption = f"ACT trials: the worst slice of each (limits: {limits})"
    parts.append(table(view, caption, numeric=("Load", "Length")))
    return Section(findings.act(trials), parts)


def endurance_section(results: Results) -> Section:
    """Write amplification per step and over the run, SMART wear, endurance projections."""
    waf, smart, endurance = results.waf, results.smart, results.endurance
    if not (waf.height or smart.height or endurance.height):
        return Section(
            missing="No endurance data: no SMART snapshots were taken around the steps, so "
            "write amplification and wear are unknown."
        )
    parts: list[Any] = []
    if waf.height:
        parts.append(charts.waf(waf.sort("step_index")))
        parts.append(
            table(
                waf.sort("step_index").select(
                    pl.col("step").alias("Step"),
                    (pl.col("host_bytes") / 1e9).alias("Host GB"),
                    (pl.col("nand_bytes") / 1e9).alias("NAND GB"),
                    pl.col("waf").alias("WAF"),
                    pl.col("cumulative_waf").alias("Cumulative WAF"),
                ),
                "Write amplification per step",
            )
        )
    if smart.height:
        columns = {
            "step": "Step",
            "phase": "Phase",
            "host_bytes_written": "Host written",
            "nand_bytes_written": "NAND written",
            "percent_used": "% used",
            "temperature_c": "°C",
            "power_on_hours": "Power-on h",
            "media_errors": "Media errors",
        }
        present = [c for c in columns if c in smart.columns]
        view = smart.sort("step_index").select(
            pl.col(c).map_elements(format_bytes, return_dtype=pl.String).alias(columns[c])
            if c.endswith("_bytes_written")
            else pl.col(c).alias(columns[c])
            for c in present
        )
        parts.append(
            table(
                view, "SMART before and after each step", numeric=("Host written", "NAND written")
            )
        )
    if endurance.height:
        in_bytes = pl.col("unit") == "bytes"
        view = endurance.select(
            pl.col("item").alias("Item"),
            pl.when(in_bytes)
            .then(pl.col("value").map_elements(format_bytes, return_dtype=pl.String))
            .otherwise(pl.col("value").map_elements(format_number, return_dtype=pl.String))
            .alias("Value"),
            pl.when(in_bytes).then(pl.lit("")).otherwise(pl.col("unit")).alias("Unit"),
        )
        parts.append(
            table(view, "Endurance: rating and what the SMART counters imply", numeric=("Value",))
        )
    return Section(findings.endurance(waf, endurance), parts)


def all_results_section(results: Results) -> Section:
    """Every step's throughput and latency, chart and table."""
    summary = results.summary
    return Section(
        parts=[
            charts.iops_by_step(summary),
            charts.latency_by_step(summary),
            table(summary_view(summary.sort("step_index", "direction")), "All steps"),
        ]
    )


REVIEW_SECTIONS = (
    steady_state_section,
    consistency_section,
    qd_scaling_section,
    random_mix_section,
    sequential_mix_section,
    latency_section,
    power_section,
    act_section,
    endurance_section,
)


def key_findings(results: Results, per_section: int = 2) -> Section:
    """The first findings of every section, as the review's summary."""
    sentences = [s for build in REVIEW_SECTIONS for s in build(results).findings[:per_section]]
    if not sentences:
        return Section(missing="No findings: the run has no classified workload.")
    return Section(sentences)


# -- comparison ------------------------------------------------------------------------------


def _device(manifest: Manifest) -> dict[str, Any]:
    return (manifest.target.device or {}) if manifest.target else {}


def mix_tests(sweep: str) -> tuple[str, str]:
    """Comparison test names of a mix sweep: its 70/30 point and its average."""
    return sweep.replace(" QD", " 70/30 QD", 1), f"{sweep} mix (average)"


def display_names(manifests: Sequence[Manifest]) -> list[str]:
    """A unique name per run: its label, with the firmware, host or run id added (the first
    of these that tells the runs apart) where labels repeat."""
    names = [m.label for m in manifests]
    describe = (
        lambda m: _device(m).get("firmware"),
        lambda m: m.host.hostname if m.host else None,
        lambda m: m.run_id,
    )
    for label in sorted({n for n in names if names.count(n) > 1}):
        group = [i for i, n in enumerate(names) if n == label]
        for attribute in describe:
            values = [attribute(manifests[i]) for i in group]
            if None not in values and len(set(values)) == len(values):
                break
        else:
            values = [f"#{n}" for n in range(1, len(group) + 1)]
        for i, value in zip(group, values, strict=True):
            names[i] = f"{label} ({value})"
    return names


@dataclass
class Comparison:
    """Several loaded results directories, named for display, with the subject drive."""

    runs: list[Results]
    names: list[str]
    subject: str

    @cached_property
    def classified(self) -> pl.DataFrame:
        """Classified steps of every run; ``label`` is the run's display name."""
        frames = [
            classify(r.summary, r.manifest).with_columns(
                label=pl.lit(name), run_id=pl.lit(r.manifest.run_id)
            )
            for r, name in zip(self.runs, self.names, strict=True)
        ]
        return pl.concat(frames, how="diagonal_relaxed")

    @cached_property
    def qd(self) -> pl.DataFrame:
        return qd_points(self.classified).with_columns(series=pl.col("label"))

    @cached_property
    def mixes(self) -> Mixes:
        return mix_points(self.classified)

    @cached_property
    def consistency(self) -> dict[str, ConsistencyRun]:
        """The longest consistency run of each drive that has one."""
        found = {}
        for results, name in zip(self.runs, self.names, strict=True):
            runs = consistency_runs(results)
            if runs:
                found[name] = max(runs, key=lambda r: r.figures.windows)
        return found

    @cached_property
    def scores(self) -> pl.DataFrame:
        """One row per test and drive: ``group``, ``test``, ``metric``, ``higher_is_better``,
        ``drive``, ``value``; only tests that two or more drives ran."""
        parts = [self._qd_scores(), self._mix_scores(), self._point_scores(), self._other_scores()]
        frame = pl.concat([p for p in parts if p.height], how="diagonal_relaxed")
        return frame.filter(pl.len().over("test") >= 2)

    def _qd_scores(self) -> pl.DataFrame:
        qd = self.qd
        if not qd.height:
            return pl.DataFrame()
        peaks = qd.group_by("label", "workload", "metric", maintain_order=True).agg(
            pl.col("value").max()
        )
        frames = [
            peaks.select(
                group=pl.lit("qd"),
                test=pl.col("workload") + " (peak)",
                metric="metric",
                higher_is_better=pl.lit(True),
                drive="label",
                value="value",
                step_index=pl.lit(None, pl.Int64),
            )
        ]
        small = qd.filter(pl.col("bs_bytes") < BANDWIDTH_BS)
        if small.height:
            common = small.group_by("workload", "qd").agg(pl.col("label").n_unique().alias("n"))
            lowest = common.filter(pl.col("n") >= 2).group_by("workload").agg(pl.col("qd").min())
            at = small.join(lowest, on=["workload", "qd"])
            frames.append(
                at.select(
                    group=pl.lit("latency"),
                    test=pl.col("workload") + " " + pl.col("qd_label") + " p99.99 latency",
                    metric=pl.lit("ns"),
                    higher_is_better=pl.lit(False),
                    drive="label",
                    value="clat_p99_99_ns",
                    step_index="step_index",
                )
            )
        return pl.concat(frames)

    def _mix_scores(self) -> pl.DataFrame:
        sweeps = self.mixes.sweeps
        if not sweeps.height:
            return pl.DataFrame()
        common = dict(
            group=pl.lit("mix"),
            metric="metric",
            higher_is_better=pl.lit(True),
            drive="label",
            step_index=pl.lit(None, pl.Int64),
        )
        frames = [
            sweeps.drop_nulls(column).select(
                test=pl.col("sweep").map_elements(
                    lambda s, i=i: mix_tests(s)[i], return_dtype=pl.String
                ),
                value=column,
                **common,
            )
            for i, column in enumerate(("at_70_30", "avg"))
        ]
        return pl.concat(frames)

    def _point_scores(self) -> pl.DataFrame:
        """Steps in no QD or mix sweep: throughput of each workload and QD."""
        swept = pl.concat(
            [
                self.qd.select("label", "step_index"),
                self.mixes.steps.select("label", "step_index")
                if self.mixes.steps.height
                else pl.DataFrame(schema={"label": pl.String, "step_index": pl.Int64}),
            ]
        )
        points = self.classified.join(swept, on=["label", "step_index"], how="anti")
        if not points.height:
            return pl.DataFrame()
        per_step = _latest(
            points.group_by("label", "step_index", "workload", "qd_label", "metric").agg(
                pl.col("iops").sum(), pl.col("bw_bytes_s").sum()
            ),
            ["label", "workload", "qd_label"],
        )
        return per_step.select(
            group=pl.lit("point"),
            test=pl.col("workload") + " " + pl.col("qd_label"),
            metric="metric",
            higher_is_better=pl.lit(True),
            drive="label",
            value=_throughput(),
            step_index="step_index",
        )

    def _other_scores(self) -> pl.DataFrame:
        rows = [
            (
                "consistency",
                f"{run.workload} consistency (tail average)",
                "IOPS",
                True,
                name,
                run.figures.iops_mean,
            )
            for name, run in self.consistency.items()
        ]
        for results, name in zip(self.runs, self.names, strict=True):
            trials = results.act_trials
            if trials.height and trials.filter(pl.col("passed")).height:
                score = trials.filter(pl.col("passed"))["load"].max()
                rows.append(("act", "ACT score", "x", True, name, float(score)))
            waf = results.waf
            if waf.height:
                last = waf.sort("step_index").row(-1, named=True)
                if last["cumulative_waf"] is not None:
                    rows.append(
                        (
                            "endurance",
                            "Write amplification (whole run)",
                            "",
                            False,
                            name,
                            float(last["cumulative_waf"]),
                        )
                    )
        return pl.DataFrame(
            rows,
            schema=["group", "test", "metric", "higher_is_better", "drive", "value"],
            orient="row",
        )

    def ranked(self, test: str) -> alt.LayerChart:
        """The ranked bar chart of one test."""
        rows = self.scores.filter(pl.col("test") == test)
        first = rows.row(0, named=True)
        unit = "µs" if first["metric"] == "ns" else first["metric"]
        title = f"{test} ({unit})" if unit else test
        return charts.ranked_bars(
            rows, title, first["metric"], first["higher_is_better"], self.subject
        )

    def group(self, group: str) -> tuple[list[str], list[str]]:
        """Tests of a score group and the findings comparing the drives in them."""
        rows = self.scores.filter(pl.col("group") == group)
        return rows["test"].unique(maintain_order=True).to_list(), findings.leads(rows)


def load_comparison(results_dirs: Sequence[str | Path], subject: str | None = None) -> Comparison:
    """Load results directories for a comparison; ``subject`` (a display name, default the
    first run) is highlighted."""
    runs = [load(Path(d)) for d in results_dirs]
    names = display_names([r.manifest for r in runs])
    return Comparison(runs, names, _subject(names, subject))


def _subject(names: list[str], subject: str | None) -> str:
    if subject is None:
        return names[0]
    if subject not in names:
        raise InputError(f"subject {subject!r} is none of the compared drives: {', '.join(names)}")
    return subject


# -- comparison sections ---------------------------------------------------------------------


def compare_drives_section(cmp: Comparison) -> Section:
    """Who is compared: identity, host, suite and source of every run."""
    rows = []
    for results, name in zip(cmp.runs, cmp.names, strict=True):
        m, device = results.manifest, _device(results.manifest)
        hosts = (
            m.host.hostname
            if m.host
            else ", ".join(results.summary["hostname"].drop_nulls().unique().sort().to_list())
            if "hostname" in results.summary.columns
            else None
        )
        rows.append(
            (
                name + (" (subject)" if name == cmp.subject else ""),
                device.get("model"),
                device.get("firmware"),
                format_bytes(device["size_bytes"]) if device.get("size_bytes") else None,
                hosts,
                m.suite,
                "import" if m.source == "import" else "ssdlab run",
                f"{m.started:%Y-%m-%d}" if m.started else None,
                m.fio_version or None,
            )
        )
    frame = pl.DataFrame(
        rows,
        schema=["Drive", "Model", "Firmware", "Capacity", "Host", "Suite", "Source", "Date", "fio"],
        orient="row",
    )
    return Section(parts=[table(frame, "Compared runs")])


def compare_summary_section(cmp: Comparison, limit: int = 8) -> Section:
    """The largest leads, every test as a share of the best, and the numbers."""
    if not cmp.scores.height:
        return Section(missing="Nothing to compare: no test was run by two or more drives.")
    scores = cmp.scores.with_columns(
        shown=pl.struct("value", "metric").map_elements(
            lambda r: findings.format_value(r["value"], r["metric"]), return_dtype=pl.String
        )
    )
    wide = scores.pivot(on="drive", index="test", values="shown", sort_columns=False).rename(
        {"test": "Test"}
    )
    present = [n for n in cmp.names if n in wide.columns]
    parts = [
        charts.score_matrix(scores, present),
        table(wide.select("Test", *present), "Every test, every drive", numeric=present),
    ]
    return Section(findings.leads(cmp.scores)[:limit], parts)


def compare_qd_section(cmp: Comparison) -> Section:
    """Overlaid QD sweeps with the peak ranked, per workload."""
    qd = cmp.qd
    tests, sentences = cmp.group("qd")
    if not tests:
        return Section(
            missing="No queue-depth sweep to compare: two or more drives need the same "
            "workload measured at several queue depths."
        )
    parts: list[Any] = []
    for (workload,), rows in qd.group_by("workload", maintain_order=True):
        test = f"{workload} (peak)"
        if test not in tests:
            continue
        parts.append(
            charts.qd_scaling(
                rows, f"{workload}: throughput and latency by queue depth", cmp.subject, cmp.names
            )
        )
        parts.append(cmp.ranked(test))
    return Section(sentences, parts)


def compare_mix_section(cmp: Comparison, pattern: str) -> Section:
    """Overlaid mix sweeps with the 70/30 point and the average ranked, per sweep."""
    steps = cmp.mixes.steps.filter(pl.col("pattern") == pattern) if cmp.mixes.steps.height else None
    tests, _ = cmp.group("mix")
    if steps is None or not steps.height or not tests:
        return Section(
            missing=f"No {pattern} mix sweep to compare: two or more drives need the same "
            f"{pattern} mix sweep."
        )
    sweeps = cmp.mixes.sweeps
    parts: list[Any] = []
    shown = []
    for (sweep,), rows in steps.group_by("sweep", maintain_order=True):
        mine = [t for t in mix_tests(sweep) if t in tests]
        if not mine:
            continue
        shown += mine
        parts.append(
            charts.mix_sweep(
                rows.with_columns(series=pl.col("label")),
                sweeps.filter(pl.col("sweep") == sweep).with_columns(series=pl.col("label")),
                f"{sweep} mixes",
                cmp.subject,
                cmp.names,
            )
        )
        parts += [cmp.ranked(t) for t in mine]
    if not parts:
        return Section(missing=f"No {pattern} mix sweep to compare.")
    return Section(findings.leads(cmp.scores.filter(pl.col("test").is_in(shown))), parts)


def compare_latency_section(cmp: Comparison) -> Section:
    """Percentile curves overlaid and the p99.99 ranked, at the lowest common QD."""
    tests, sentences = cmp.group("latency")
    if not tests:
        return Section(
            missing="No latency test to compare: two or more drives need the same small-block "
            "workload at the same queue depth."
        )
    parts: list[Any] = []
    for test in tests:
        rows = cmp.scores.filter(pl.col("test") == test)
        curves = []
        for results, name in zip(cmp.runs, cmp.names, strict=True):
            step = rows.filter(pl.col("drive") == name)["step_index"]
            if not step.len() or not results.latency_hist.height:
                continue
            direction = cmp.qd.filter(
                (pl.col("label") == name) & (pl.col("step_index") == step[0])
            )["direction"][0]
            chosen = pl.DataFrame(
                {"step_index": [step[0]], "direction": [direction], "series": [name]}
            )
            curves.append(percentile_curves(results.latency_hist, chosen))
        if sum(c.height for c in curves):
            chart = charts.latency_percentiles(pl.concat(curves), cmp.names)
            parts.append(
                chart.properties(
                    title=f"{test.removesuffix(' p99.99 latency')}: latency percentiles"
                )
            )
        parts.append(cmp.ranked(test))
    return Section(sentences, parts)


def compare_other_section(cmp: Comparison) -> Section:
    """Single-point tests (no sweep) ranked."""
    tests, sentences = cmp.group("point")
    if not tests:
        return Section(missing="No other common test: every shared workload is part of a sweep.")
    return Section(sentences, [cmp.ranked(t) for t in tests])


def compare_consistency_section(cmp: Comparison) -> Section:
    """Per-second IOPS of each drive's consistency run overlaid; tail averages ranked."""
    tests, sentences = cmp.group("consistency")
    if not tests:
        return Section(
            missing="No consistency run to compare: two or more drives need a long random-"
            "write run with per-second IOPS."
        )
    series = pl.concat(
        [run.series.with_columns(series=pl.lit(name)) for name, run in cmp.consistency.items()]
    )
    return Section(
        sentences,
        [charts.consistency_overlay(series, cmp.subject), *(cmp.ranked(t) for t in tests)],
    )


def compare_act_endurance_section(cmp: Comparison) -> Section:
    """ACT scores and write amplification ranked."""
    act_tests, act_sentences = cmp.group("act")
    waf_tests, waf_sentences = cmp.group("endurance")
    if not act_tests and not waf_tests:
        return Section(
            missing="No ACT score or write amplification to compare: two or more drives need "
            "ACT trials or SMART snapshots."
        )
    return Section(act_sentences + waf_sentences, [cmp.ranked(t) for t in (*act_tests, *waf_tests)])


# -- rendering -------------------------------------------------------------------------------


def review_title(manifest: Manifest) -> str:
    return f"{manifest.label}: {manifest.suite} suite"


def render_review(results_dir: Path, output: Path, *, title: str | None = None) -> Path:
    """Execute the review notebook on ``results_dir`` and write one offline HTML file."""
    from .report import render_report

    manifest = Manifest.load(results_dir)  # fail fast, before a kernel starts
    title = title or review_title(manifest)
    params = {"results_dir": str(results_dir.resolve()), "title": title}
    return render_report(notebook_path(REVIEW_NOTEBOOK), params, output, title=title)


def comparison_title(names: Sequence[str]) -> str:
    return " vs ".join(names) if len(names) <= 3 else f"{len(names)} drives compared"


def render_comparison(
    results_dirs: Sequence[Path],
    output: Path,
    *,
    title: str | None = None,
    subject: str | None = None,
) -> Path:
    """Execute the comparison notebook on several results directories; one offline HTML."""
    from .report import render_report

    if len(results_dirs) < 2:
        raise InputError("a comparison needs two or more results directories")
    names = display_names([Manifest.load(d) for d in results_dirs])  # fail fast
    _subject(names, subject)
    title = title or f"Comparison: {comparison_title(names)}"
    params = {
        "results_dirs": [str(d.resolve()) for d in results_dirs],
        "title": title,
        "subject": subject,
    }
    return render_report(notebook_path(COMPARISON_NOTEBOOK), params, output, title=title)


def overview_section(results_dirs: Sequence[str | Path]) -> Section:
    """The comparison summary of several runs (the batch index's overview)."""
    if len(results_dirs) < 2:
        return Section(missing="Nothing to compare: fewer than two reviews rendered.")
    return compare_summary_section(load_comparison(results_dirs))

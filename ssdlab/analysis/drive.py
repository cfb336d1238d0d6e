"""Everything a drive review shows about one run, computed once and shared by its sections."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import polars as pl

from ..pipeline import hist_log_bins_frame
from ..results import Results
from .latency import percentile_curves, qos_choice
from .load import sweep_steps
from .repeats import median_repeats, percentile_intervals, power_figures
from .steps import per_step, with_summary_columns
from .tails import ConsistencyRun, consistency_runs
from .workloads import (
    Mixes,
    bs_points,
    classify,
    fill_steps,
    measured_twice,
    mix_points,
    qd_points,
)


@dataclass(eq=False)
class DriveAnalysis:
    """One run's analysis: each figure is computed on first use, then kept.

    A run without fio steps (ACT trials only) has an empty summary without columns:
    ``results`` is then a copy of the run given whose summary has the columns every figure
    and section reads (:func:`~.steps.with_summary_columns`), so each says "no data"
    instead of failing; the caller's :class:`~ssdlab.results.Results` is left as it is."""

    results: Results

    def __post_init__(self) -> None:
        if not self.results.summary.height:
            summary = with_summary_columns(self.results.summary)
            self.results = replace(self.results, summary=summary)

    @cached_property
    def fills(self) -> set[int]:
        """Step indexes of preconditioning fills (size-based write steps)."""
        return fill_steps(self.results.manifest)

    @cached_property
    def every_repeat(self) -> pl.DataFrame:
        """One row per step and direction (:func:`per_step`), each repeat of a repeated step
        its own row."""
        return per_step(self.results.summary)

    @cached_property
    def steps(self) -> pl.DataFrame:
        """Every read/write step classified, fills included (see :func:`classify`); a
        repeated step is its median repeat (:func:`~.repeats.median_repeats`)."""
        return classify(median_repeats(self.every_repeat), combined=True)

    @cached_property
    def measured(self) -> pl.DataFrame:
        """Every measured step: :attr:`steps` without the fills (load-sweep steps kept: what
        a QoS profile judges)."""
        return self.steps.filter(~pl.col("step_index").is_in(list(self.fills)))

    @cached_property
    def hist_log_bins(self) -> pl.DataFrame:
        """The histogram logs of the :attr:`measured` steps, summed per step, direction, row
        time and bin (:func:`~ssdlab.pipeline.hist_log_bins_frame`): the bins kept when the
        run was loaded, for every QoS target and slice length judged (``latency_intervals``
        keeps percentiles, not bins)."""
        measured = self.measured["step_index"].unique().to_list()
        return hist_log_bins_frame(self.results.steps, measured)

    @cached_property
    def classified(self) -> pl.DataFrame:
        """The measured steps: :attr:`steps` without the fills and the rate-limited steps of
        load sweeps (:func:`~.load.sweep_steps`)."""
        skip = self.fills | sweep_steps(self.results.manifest)
        return self.steps.filter(~pl.col("step_index").is_in(list(skip)))

    @cached_property
    def qd(self) -> pl.DataFrame:
        """QD sweep points (:func:`qd_points`)."""
        return qd_points(self.classified)

    @cached_property
    def mixes(self) -> Mixes:
        """Mix sweeps (:func:`mix_points`)."""
        return mix_points(self.classified)

    @cached_property
    def blocksizes(self) -> pl.DataFrame:
        """Block-size sweep points (:func:`bs_points`)."""
        return bs_points(self.classified)

    @cached_property
    def charted(self) -> pl.Expr:
        """``charted``: 3 for a point of a QD sweep, 2 of a mix sweep, 1 of a block-size
        sweep, else 0: what :func:`~.workloads.latest` prefers where a point was measured
        twice (a QD sweep's own step is the point's measurement, not another sweep's)."""
        rank = pl.lit(0)
        for points, value in ((self.blocksizes, 1), (self.mixes.steps, 2), (self.qd, 3)):
            indexes = sorted(set(points["step_index"].to_list())) if points.height else []
            rank = pl.when(pl.col("step_index").is_in(indexes)).then(value).otherwise(rank)
        return rank.alias("charted")

    @cached_property
    def measured_twice(self) -> pl.DataFrame:
        """Points more than one step measured, and the one the charts use
        (:func:`measured_twice`)."""
        return measured_twice(self.classified.with_columns(self.charted))

    @cached_property
    def consistency(self) -> list[ConsistencyRun]:
        """Consistency runs (:func:`consistency_runs`)."""
        return consistency_runs(self.classified, self.results.timeseries)

    @cached_property
    def qos(self) -> pl.DataFrame:
        """The steps the latency figures show (:func:`qos_choice`)."""
        return qos_choice(self.classified)

    @cached_property
    def repeat_percentiles(self) -> pl.DataFrame:
        """Median and 95 % interval of each latency percentile of the :attr:`qos` steps over
        their repeats (:func:`~.repeats.percentile_intervals`); empty without repeats."""
        return percentile_intervals(self.qos, self.every_repeat)

    @cached_property
    def repeat_power(self) -> pl.DataFrame:
        """Median and 95 % interval of the repeated steps' power and efficiency
        (:func:`~.repeats.power_figures`); empty without repeats or power."""
        return power_figures(self.results.power, self.every_repeat)

    @cached_property
    def percentiles(self) -> pl.DataFrame | None:
        """Percentile curves of :attr:`qos`; None without latency histograms."""
        hist = self.results.latency_hist
        return percentile_curves(hist, self.qos) if hist.height else None

    @cached_property
    def step_labels(self) -> dict[int, str]:
        """Per step index: its workload and QD (``4K random read QD32``), else its name."""
        labels = self.classified.group_by("step_index", maintain_order=True).agg(
            pl.concat_str("workload", pl.lit(" "), "qd_label").first().alias("workload")
        )
        named = dict(zip(labels["step_index"], labels["workload"], strict=True))
        steps = self.results.summary.select("step_index", "step").unique("step_index")
        return {i: named.get(i, s) for i, s in steps.iter_rows()}

"""Comparison scoring: the tests two or more drives ran, one value per test and drive."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import polars as pl

from .drive import DriveAnalysis
from .tails import ConsistencyRun
from .workloads import BANDWIDTH_BS, Mixes, latest, mix_points, qd_points, throughput

SCORE_COLUMNS = ["group", "test", "metric", "higher_is_better", "drive", "value"]


def mix_tests(sweep: str) -> tuple[str, str]:
    """Comparison test names of a mix sweep: its 70/30 point and its average."""
    return sweep.replace(" QD", " 70/30 QD", 1), f"{sweep} mix (average)"


def qd_scores(qd: pl.DataFrame) -> pl.DataFrame:
    """Each QD sweep's peak, and small-block p99.99 latency at the lowest QD two drives share."""
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


def mix_scores(sweeps: pl.DataFrame) -> pl.DataFrame:
    """Each mix sweep's 70/30 point and average."""
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


def point_scores(classified: pl.DataFrame, qd: pl.DataFrame, mixes: Mixes) -> pl.DataFrame:
    """Steps in no QD or mix sweep: throughput of each workload and QD."""
    swept = pl.concat(
        [
            qd.select("label", "step_index"),
            mixes.steps.select("label", "step_index")
            if mixes.steps.height
            else pl.DataFrame(schema={"label": pl.String, "step_index": pl.Int64}),
        ]
    )
    points = classified.join(swept, on=["label", "step_index"], how="anti")
    if not points.height:
        return pl.DataFrame()
    per_step = latest(
        points.group_by(
            "label", "step_index", "workload", "qd_label", "metric", maintain_order=True
        ).agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum()),
        ["label", "workload", "qd_label"],
    )
    return per_step.select(
        group=pl.lit("point"),
        test=pl.col("workload") + " " + pl.col("qd_label"),
        metric="metric",
        higher_is_better=pl.lit(True),
        drive="label",
        value=throughput(),
        step_index="step_index",
    )


def other_scores(
    consistency: dict[str, ConsistencyRun], drives: Sequence[DriveAnalysis], names: Sequence[str]
) -> pl.DataFrame:
    """Consistency tail averages, ACT scores and whole-run write amplification."""
    rows = [
        (
            "consistency",
            f"{run.workload} consistency (tail average)",
            "IOPS",
            True,
            name,
            run.figures.iops_mean,
        )
        for name, run in consistency.items()
    ]
    for drive, name in zip(drives, names, strict=True):
        trials = drive.results.act_trials
        if trials.height and trials.filter(pl.col("passed")).height:
            score = trials.filter(pl.col("passed"))["load"].max()
            rows.append(("act", "ACT score", "x", True, name, float(score)))
        waf = drive.results.waf
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
    return pl.DataFrame(rows, schema=SCORE_COLUMNS, orient="row")


@dataclass(eq=False)
class ComparisonAnalysis:
    """The analyses of several runs side by side, each run under its display name."""

    drives: list[DriveAnalysis]
    names: list[str]

    @cached_property
    def classified(self) -> pl.DataFrame:
        """Classified steps of every run; ``label`` is the run's display name."""
        frames = [
            drive.classified.with_columns(
                label=pl.lit(name), run_id=pl.lit(drive.results.manifest.run_id)
            )
            for drive, name in zip(self.drives, self.names, strict=True)
        ]
        return pl.concat(frames, how="diagonal_relaxed")

    @cached_property
    def qd(self) -> pl.DataFrame:
        """QD sweep points of every run; ``series`` is the run's display name."""
        return qd_points(self.classified).with_columns(series=pl.col("label"))

    @cached_property
    def mixes(self) -> Mixes:
        return mix_points(self.classified)

    @cached_property
    def consistency(self) -> dict[str, ConsistencyRun]:
        """The longest consistency run of each drive that has one."""
        return {
            name: max(drive.consistency, key=lambda r: r.figures.windows)
            for drive, name in zip(self.drives, self.names, strict=True)
            if drive.consistency
        }

    @cached_property
    def scores(self) -> pl.DataFrame:
        """One row per test and drive: ``group``, ``test``, ``metric``, ``higher_is_better``,
        ``drive``, ``value``; only tests that two or more drives ran."""
        parts = [
            qd_scores(self.qd),
            mix_scores(self.mixes.sweeps),
            point_scores(self.classified, self.qd, self.mixes),
            other_scores(self.consistency, self.drives, self.names),
        ]
        frame = pl.concat([p for p in parts if p.height], how="diagonal_relaxed")
        return frame.filter(pl.len().over("test") >= 2)

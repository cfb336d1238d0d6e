"""Performance consistency runs: long random-write steps with per-second IOPS, tail-scored."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .figures import Consistency, consistency

#: a consistency run needs this many one-second IOPS windows
MIN_CONSISTENCY_WINDOWS = 5
#: consistency is scored on the last quarter of the run, at most this long (reviews: 400 s)
TAIL_S = 400.0


@dataclass(frozen=True)
class ConsistencyRun:
    """A long random-write step: its per-second IOPS and the tail score."""

    step_index: int
    step: str
    workload: str
    series: pl.DataFrame  # t_s, iops
    tail_s: float
    figures: Consistency


def consistency_runs(classified: pl.DataFrame, timeseries: pl.DataFrame) -> list[ConsistencyRun]:
    """Random-write steps of one run (``classified`` by :func:`~.workloads.classify`) with
    per-second IOPS long enough to judge consistency: at least MIN_CONSISTENCY_WINDOWS
    windows and half as many as the longest such step."""
    writes = classified.filter((pl.col("pattern") == "random") & (pl.col("read_pct") == 0))
    if not writes.height or not timeseries.height:
        return []
    series = (
        timeseries.filter(pl.col("step_index").is_in(writes["step_index"].to_list()))
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

"""Review figures from the tidy frames: QD scaling, performance consistency, mix sweeps.

Each function takes a ``summary`` or ``timeseries`` frame as :func:`ssdlab.results.load`
builds it and returns polars frames or dataclasses whose names carry their units. Jobs fio
reported separately (no ``group_reporting``) are combined per step and direction first
(:func:`~ssdlab.analysis.steps.per_step`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from ..errors import InputError
from ..vocab import MIXED_RW, PURE_RW
from .steps import access_pattern, per_step, read_share, run_keys, rw_mode, sweep_keys

#: Percentiles :func:`consistency` reports for the per-window IOPS.
CONSISTENCY_PERCENTILES = (1, 5, 10, 50, 90, 95, 99)


def _require(frame: pl.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{what}: the frame lacks column(s) {', '.join(missing)}")


def _steps(summary: pl.DataFrame, columns: list[str], what: str) -> pl.DataFrame:
    """The summary with ``columns``, one row per step and direction (jobs combined)."""
    _require(summary, ["step_index", "step", "direction", *columns], what)
    return per_step(summary)


def qd_scaling(summary: pl.DataFrame, threshold: float = 0.95) -> pl.DataFrame:
    """Per workload, the lowest queue depth reaching ``threshold`` of the best throughput.

    A workload is (rw, bs_bytes, rwmixread, direction), per run (and suite test, given
    ``test_group``); the queue depth ``qd`` is
    iodepth x numjobs (both kept); a step's job rows count as one. Throughput is
    ``bw_bytes_s``; equal ``qd`` keeps the faster step. Columns: the workload, ``qd``,
    ``iodepth``, ``numjobs``, ``step``, ``iops``, ``bw_bytes_s``, ``best_bw_bytes_s``,
    ``share_of_best``, ``lat_mean_ns``, ``clat_p99_ns``.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    workload = [*sweep_keys(summary), "rw", "bs_bytes", "rwmixread", "direction"]
    columns = ["rw", "bs_bytes", "rwmixread", "iodepth", "numjobs", "iops", "bw_bytes_s"]
    steps = _steps(summary, [*columns, "lat_mean_ns", "clat_p99_ns"], "qd_scaling")
    return (
        steps.with_columns(
            qd=pl.col("iodepth") * pl.col("numjobs"),
            best_bw_bytes_s=pl.col("bw_bytes_s").max().over(workload),
        )
        .with_columns(share_of_best=pl.col("bw_bytes_s") / pl.col("best_bw_bytes_s"))
        .filter(pl.col("share_of_best") >= threshold)
        .sort("qd", pl.col("bw_bytes_s"), descending=[False, True])
        .group_by(workload, maintain_order=True)
        .first()
        .select(
            *workload,
            "qd",
            "iodepth",
            "numjobs",
            "step",
            "iops",
            "bw_bytes_s",
            "best_bw_bytes_s",
            "share_of_best",
            "lat_mean_ns",
            "clat_p99_ns",
        )
        .sort(workload, nulls_last=True)
    )


@dataclass(frozen=True)
class Consistency:
    """Performance consistency of one step over its tail (per-window IOPS, e.g. per second).

    ``iops_stddev`` is the sample standard deviation; percentiles interpolate linearly.
    """

    start_s: float
    end_s: float
    windows: int
    iops_mean: float
    iops_stddev: float
    mean_over_stddev: float
    iops_min: float
    iops_max: float
    iops_p1: float
    iops_p5: float
    iops_p10: float
    iops_p50: float
    iops_p90: float
    iops_p95: float
    iops_p99: float


def consistency(timeseries_for_step: pl.DataFrame, tail_s: float | None = None) -> Consistency:
    """Consistency figures of one step and direction, over the last ``tail_s`` seconds.

    The tail holds the windows whose end ``t_s`` lies in (last ``t_s`` - ``tail_s``, last
    ``t_s``]; ``None`` takes every window. ``mean_over_stddev`` is infinite for a flat line.
    """
    what = "consistency"
    _require(timeseries_for_step, ["t_s", "iops"], what)
    for column in ("step_index", "direction", *run_keys(timeseries_for_step)):
        if column in timeseries_for_step.columns:
            found = timeseries_for_step[column].unique().sort().to_list()
            if len(found) > 1:
                raise InputError(
                    f"{what}: the time series holds several {column} values {found}; "
                    f"filter it to one (e.g. pl.col('{column}') == {found[0]!r})"
                )
    if tail_s is not None and tail_s <= 0:
        raise ValueError(f"tail_s must be positive, got {tail_s}")
    series = timeseries_for_step.sort("t_s")
    if tail_s is not None and series.height:
        series = series.filter(pl.col("t_s") > series["t_s"].max() - tail_s)
    if series.height < 2:
        raise InputError(f"{what}: needs at least 2 IOPS windows, got {series.height}")
    iops = series["iops"]
    mean, stddev = float(iops.mean()), float(iops.std())
    return Consistency(
        start_s=float(series["t_s"][0]),
        end_s=float(series["t_s"][-1]),
        windows=series.height,
        iops_mean=mean,
        iops_stddev=stddev,
        mean_over_stddev=mean / stddev if stddev else float("inf"),
        iops_min=float(iops.min()),
        iops_max=float(iops.max()),
        **{
            f"iops_p{p}": float(iops.quantile(p / 100, interpolation="linear"))
            for p in CONSISTENCY_PERCENTILES
        },
    )


@dataclass(frozen=True)
class MixSweep:
    """A read/write mix sweep.

    ``steps``: one row per step: the sweep keys, ``step_index``, ``step``, ``read_pct`` (the
    configured read share: rwmixread, 100 for reads, 0 for writes), ``measured_read_pct``,
    ``read_iops``, ``write_iops``, ``iops`` and ``bw_bytes_s`` (read + write), sorted by
    descending read share; a step's job rows count as one. ``sweeps``: one row per sweep:
    its keys, ``steps``, ``avg_iops``, ``avg_bw_bytes_s`` (mean over its steps) and
    ``iops_70_30``, ``bw_bytes_s_70_30`` (the 70 % read step; null when the sweep has none).
    A sweep is one run's steps with the same access pattern (``random`` or ``sequential``),
    block size, iodepth and numjobs.
    """

    steps: pl.DataFrame
    sweeps: pl.DataFrame


def mix_sweep(summary: pl.DataFrame) -> MixSweep:
    """Per step the read share and total IOPS/bandwidth; per sweep the average and 70/30."""
    what = "mix_sweep"
    columns = ["rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "iops", "bw_bytes_s"]
    steps = _steps(summary, columns, what)
    unknown = steps.filter(~rw_mode().is_in([*PURE_RW, *MIXED_RW]))
    if unknown.height:
        raise InputError(
            f"{what}: step {unknown['step'][0]!r} (rw={unknown['rw'][0]}) is not part of a "
            "read/write mix; filter the summary to the sweep's steps"
        )
    sweep = [*sweep_keys(steps), "pattern", "bs_bytes", "iodepth", "numjobs"]
    source = [c for c in ("test", "fio_json") if c in steps.columns]  # where a point is from
    rows = (
        steps.filter(pl.col("direction").is_in(["read", "write"]))
        .with_columns(pattern=access_pattern(), read_pct=read_share())
        .group_by(*sweep, "step_index", "step", *source, "read_pct")
        .agg(
            read_iops=pl.col("iops").filter(pl.col("direction") == "read").sum(),
            write_iops=pl.col("iops").filter(pl.col("direction") == "write").sum(),
            iops=pl.col("iops").sum(),
            bw_bytes_s=pl.col("bw_bytes_s").sum(),
        )
        .with_columns(measured_read_pct=100 * pl.col("read_iops") / pl.col("iops"))
        .select(
            *sweep,
            "step_index",
            "step",
            *source,
            "read_pct",
            "measured_read_pct",
            "read_iops",
            "write_iops",
            "iops",
            "bw_bytes_s",
        )
        .sort([*sweep, "read_pct"], descending=[*[False] * len(sweep), True])
    )
    repeated = rows.group_by(*sweep, "read_pct").len().filter(pl.col("len") > 1)
    if repeated.height:
        raise InputError(
            f"{what}: {repeated['len'][0]} steps of one sweep have read share "
            f"{repeated['read_pct'][0]} %; filter the summary to one step per read share"
        )
    at_70 = pl.col("read_pct") == 70
    sweeps = rows.group_by(sweep, maintain_order=True).agg(
        steps=pl.len(),
        avg_iops=pl.col("iops").mean(),
        avg_bw_bytes_s=pl.col("bw_bytes_s").mean(),
        iops_70_30=pl.col("iops").filter(at_70).first(),
        bw_bytes_s_70_30=pl.col("bw_bytes_s").filter(at_70).first(),
    )
    return MixSweep(steps=rows, sweeps=sweeps)


def quoted_mix(read_pcts: Iterable[int]) -> int | None:
    """The read share a review quotes for a mix sweep: the mixed one (neither 0 nor 100 %)
    nearest 70/30, the higher on a tie (65/35 in a SNIA sweep); None without a mixed share."""
    mixed = {int(r) for r in read_pcts if r is not None and 0 < r < 100}
    return min(mixed, key=lambda r: (abs(r - 70), -r)) if mixed else None

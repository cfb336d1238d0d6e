"""Whole-drive fills: write speed against data written, where the SLC cache ends, and the
speed after an idle wait (the ``fill`` suite; any write step named ``fill-...``).

The cache end is a change point found by one documented rule (:func:`cache_end`): the first
window that starts :data:`SUSTAIN_WINDOWS` windows in a row all below :data:`DROP_SHARE` of
the initial speed (the median of the first :data:`HEAD_WINDOWS` windows). The data written
before that window is the cache size; the post-cache speed is the median of the windows from
there on. A recovery step (``recovery-...``) after a fill writes again after an idle wait: the
same rule on its windows says how much cache the idle time gave back.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..fio_options import planned_io_bytes
from ..manifest import Manifest
from ..units import fio_seconds
from .endurance import jesd219_steps
from .pts import step_series, wsat_steps
from .recovery import first_run

#: the windows whose median is the initial (cached) speed
HEAD_WINDOWS = 5
#: a window slower than this share of the initial speed is past the cache...
DROP_SHARE = 0.7
#: ...when this many windows in a row are
SUSTAIN_WINDOWS = 5
FILL_PREFIX = "fill-"
#: the share of its time cap a size-based step must have run to have ended at the cap
CAP_REACHED = 0.95
RECOVERY_PREFIX = "recovery-"


@dataclass(frozen=True)
class CacheEnd:
    """A write series' cache figures (bytes/s and bytes); ``end_bytes``/``end_s`` are None
    when the speed never dropped for good (no cache seen, or one larger than the data)."""

    initial_bw_bytes_s: float
    end_bytes: float | None
    end_s: float | None
    after_bw_bytes_s: float | None


def cache_end(
    series: pl.DataFrame,
    *,
    head: int = HEAD_WINDOWS,
    share: float = DROP_SHARE,
    sustain: int = SUSTAIN_WINDOWS,
) -> CacheEnd | None:
    """The cache end of a :func:`~.pts.step_series` (``t_s``, ``bw_bytes_s``,
    ``written_bytes``) by the rule of this module; None with fewer than ``head`` windows."""
    if series.height < head:
        return None
    bw = series["bw_bytes_s"].fill_null(0.0)
    initial = float(bw.head(head).median() or 0.0)
    first = first_run(bw < share * initial, sustain)
    if not initial or first is None:
        return CacheEnd(initial, None, None, None)
    before = float(series["written_bytes"][first - 1]) if first else 0.0
    start_s = float(series["t_s"][first - 1]) if first else 0.0
    return CacheEnd(initial, before, start_s, float(bw.slice(first).median() or 0.0))


@dataclass(frozen=True, eq=False)
class Fill:
    """A fill step (``workload``: its label, ``128K sequential write QD32``): its windows
    (:func:`~.pts.step_series`), its cache figures, and the recovery step after it (None
    without one)."""

    step_index: int
    step: str
    workload: str
    io_bytes: int
    bw_bytes_s: float
    series: pl.DataFrame
    cache: CacheEnd | None
    recovery: Recovery | None


@dataclass(frozen=True, eq=False)
class Recovery:
    """A short write after an idle wait (``idle_s``: the step's fio ``startdelay``)."""

    step_index: int
    step: str
    idle_s: float | None
    bw_bytes_s: float
    series: pl.DataFrame
    cache: CacheEnd | None


def fills(steps: pl.DataFrame, timeseries: pl.DataFrame, manifest: Manifest) -> list[Fill]:
    """The fills of a run (write steps named ``fill-...``) with a time series, each with the
    ``recovery-...`` step that follows it before the next fill. ``steps`` are classified
    steps (:func:`~.workloads.classify`, fills included)."""
    records = sorted(manifest.steps, key=lambda r: r.index)
    rows = {r["step_index"]: r for r in steps.iter_rows(named=True) if r["read_pct"] == 0}
    found: list[Fill] = []
    pending: dict | None = None
    for record in records:
        row = rows.get(record.index)
        if row is None:
            continue
        series = step_series(timeseries, record.index)
        if record.name.startswith(FILL_PREFIX):
            if pending:
                found.append(_fill(pending, None))
            pending = {"row": row, "series": series}
        elif record.name.startswith(RECOVERY_PREFIX) and pending:
            options = record.workload.options if record.workload else {}
            delay = options.get("startdelay")
            recovery = Recovery(
                step_index=record.index,
                step=record.name,
                idle_s=fio_seconds(delay, 1.0) if delay is not None else None,
                bw_bytes_s=float(row["bw_bytes_s"]),
                series=series,
                cache=cache_end(series),
            )
            found.append(_fill(pending, recovery))
            pending = None
    if pending:
        found.append(_fill(pending, None))
    return [f for f in found if f.series.height]


def _fill(pending: dict, recovery: Recovery | None) -> Fill:
    row, series = pending["row"], pending["series"]
    return Fill(
        step_index=row["step_index"],
        step=row["step"],
        workload=f"{row['workload']} {row['qd_label']}",
        io_bytes=int(row["io_bytes"]),
        bw_bytes_s=float(row["bw_bytes_s"]),
        series=series,
        cache=cache_end(series),
        recovery=recovery,
    )


def preconditioning_steps(steps: pl.DataFrame, fills: set[int], manifest: Manifest) -> set[int]:
    """The steps of ``fills`` (size-based writes: :func:`~.workloads.fill_steps`) that
    precondition the drive: a write-saturation step (:func:`~.pts.wsat_steps`) writes whole
    capacities like a fill, and so do the segments of the JESD219 endurance workload
    (:func:`~.endurance.jesd219_steps`), but they are tests. ``steps``: classified steps,
    fills included."""
    saturation = set(wsat_steps(steps, manifest)["step_index"].to_list())
    return fills - saturation - jesd219_steps(manifest)


def cut_at_cap(
    planned_bytes: int | None, cap_s: float | None, io_bytes: int, runtime_s: float
) -> bool:
    """Whether a size-based step planning ``planned_bytes``
    (:func:`~ssdlab.fio_options.planned_io_bytes`; None: not known) ended at its time cap
    ``cap_s``: it moved fewer (``io_bytes``, its directions summed) in a fio runtime of at
    least :data:`CAP_REACHED` of the cap (not: it ran to its end or was stopped early)."""
    if planned_bytes is None or cap_s is None or io_bytes >= planned_bytes:
        return False
    return runtime_s >= CAP_REACHED * cap_s


def fill_totals(steps: pl.DataFrame, fills: set[int], manifest: Manifest) -> pl.DataFrame:
    """One row per step of ``fills`` among the classified ``steps``, in run order:
    ``step_index``, ``step``, ``workload`` (its label and QD: ``128K sequential write
    QD32``), ``passes`` (fio's ``loops`` over the target), ``planned_bytes`` (what those
    passes write: :func:`~ssdlab.fio_options.planned_io_bytes`, null when not known),
    ``io_bytes`` written, ``runtime_s`` (its longest direction), ``bw_bytes_s`` (its
    directions summed) and ``cut_at_cap`` (it ended at its time cap with less written than
    planned: :func:`cut_at_cap`)."""
    workloads = {s.index: s.workload for s in manifest.steps if s.index in fills and s.workload}
    loops = {index: step.loops for index, step in workloads.items()}
    target_bytes = manifest.target.size_bytes if manifest.target else None
    planned = {index: planned_io_bytes(step, target_bytes) for index, step in workloads.items()}
    totals = (
        steps.filter(pl.col("step_index").is_in(list(fills)))
        .group_by("step_index", "step", "workload", "qd_label")
        .agg(pl.col("io_bytes").sum(), pl.col("runtime_s").max(), pl.col("bw_bytes_s").sum())
        .sort("step_index")
        .select(
            "step_index",
            "step",
            pl.concat_str("workload", pl.lit(" "), "qd_label").alias("workload"),
            pl.col("step_index").replace_strict(loops, return_dtype=pl.Int64).alias("passes"),
            pl.col("step_index")
            .replace_strict(planned, return_dtype=pl.Int64)
            .alias("planned_bytes"),
            "io_bytes",
            "runtime_s",
            "bw_bytes_s",
        )
    )
    cut = [
        cut_at_cap(planned[index], workloads[index].runtime_s, io_bytes, runtime_s)
        for index, io_bytes, runtime_s in totals.select(
            "step_index", "io_bytes", "runtime_s"
        ).iter_rows()
    ]
    return totals.with_columns(pl.Series("cut_at_cap", cut, dtype=pl.Boolean))

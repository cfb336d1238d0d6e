"""Power per workload step, and efficiency (MB/s per W, IOPS per W).

Windows are epoch seconds with the ramp already excluded (e.g. from fio's ``job_start`` and
``log_unix_epoch`` logs). A step's average is the plain mean of the samples inside its window
(``start_s <= time_s <= end_s``); it is only computed when the trace covers the whole window,
i.e. no stretch of the window, its start and end included, goes longer than ``max_gap_s``
without a sample. Otherwise ``covered`` is False, ``reason`` says why and the statistics are
null: a partial window is never averaged. MB = 10^6 bytes.
"""

from __future__ import annotations

from itertools import pairwise

import polars as pl

from ...errors import InputError
from .trace import PowerTrace, require_columns

#: columns of :func:`step_power` after ``step``
STEP_POWER_COLUMNS = {
    "start_s": pl.Float64,
    "end_s": pl.Float64,
    "samples": pl.Int64,
    "avg_w": pl.Float64,
    "min_w": pl.Float64,
    "max_w": pl.Float64,
    "covered": pl.Boolean,
    "reason": pl.String,
}


def _require(frame: pl.DataFrame, names: list[str], what: str, numeric: list[str]) -> None:
    require_columns(frame, names, f"{what} frame")
    wrong = [name for name in numeric if not frame.schema[name].is_numeric()]
    if wrong:
        raise InputError(f"{what} frame: column(s) {', '.join(wrong)} must be numeric")


def _median_interval(times: pl.Series) -> float | None:
    diffs = times.diff()
    steps = diffs.filter(diffs > 0)
    return None if steps.is_empty() else float(steps.median())


def _uncovered(
    inside: list[float], start: float, end: float, all_times: pl.Series, max_gap: float | None
) -> str | None:
    """Why the trace (``all_times``) does not cover [start, end], or None when it does."""
    if max_gap is None:
        return "trace has fewer than 2 distinct sample times: pass max_gap_s"
    if all_times[0] > start + max_gap:
        return f"trace starts {all_times[0] - start:.3f} s after the window start"
    if all_times[-1] < end - max_gap:
        return f"trace ends {end - all_times[-1]:.3f} s before the window end"
    points = [start, *inside, end]
    gap, at = max((b - a, a) for a, b in pairwise(points))
    if gap > max_gap:
        return f"no samples for {gap:.3f} s from {at:.3f} (allowed gap {max_gap:.3f} s)"
    return None


def step_power(
    trace: PowerTrace | pl.DataFrame, windows: pl.DataFrame, *, max_gap_s: float | None = None
) -> pl.DataFrame:
    """Average, minimum and maximum watts of each window of ``windows`` (step, start_s, end_s).

    Returns ``step``, ``start_s``, ``end_s``, ``samples``, ``avg_w``, ``min_w``, ``max_w``,
    ``covered``, ``reason``. ``max_gap_s`` defaults to twice the trace's median sample interval.
    """
    frame = trace.frame if isinstance(trace, PowerTrace) else trace
    _require(frame, ["time_s", "power_w"], "power trace", ["time_s", "power_w"])
    _require(windows, ["step", "start_s", "end_s"], "windows", ["start_s", "end_s"])
    frame = frame.select("time_s", "power_w").drop_nulls().sort("time_s")
    times = frame["time_s"]
    if max_gap_s is None:
        interval = _median_interval(times)
        max_gap_s = None if interval is None else 2 * interval
    rows = []
    for step, start, end in windows.select("step", "start_s", "end_s").iter_rows():
        if start is None or end is None or end <= start:
            raise InputError(f"windows: step {step}: end_s {end} is not after start_s {start}")
        lo = times.search_sorted(start, side="left")
        hi = times.search_sorted(end, side="right")
        inside = frame.slice(lo, hi - lo)
        reason = (
            "no samples in window"
            if inside.is_empty()
            else _uncovered(inside["time_s"].to_list(), start, end, times, max_gap_s)
        )
        power = inside["power_w"]
        covered = reason is None
        rows.append(
            {
                "step": step,
                "start_s": float(start),
                "end_s": float(end),
                "samples": inside.height,
                "avg_w": power.mean() if covered else None,
                "min_w": power.min() if covered else None,
                "max_w": power.max() if covered else None,
                "covered": covered,
                "reason": reason,
            }
        )
    return pl.DataFrame(rows, schema={"step": windows.schema["step"]} | STEP_POWER_COLUMNS)


def efficiency(step_power: pl.DataFrame, summary: pl.DataFrame) -> pl.DataFrame:
    """Join per-step power with throughput: ``mb_s_per_w`` and ``iops_per_w`` per step.

    ``summary`` has ``step``, ``iops`` and ``bw_bytes_s``, possibly one row per direction:
    a step's directions are summed. Steps whose power is not covered get null efficiencies.
    """
    _require(step_power, ["step", "avg_w", "covered"], "step power", ["avg_w"])
    _require(summary, ["step", "iops", "bw_bytes_s"], "summary", ["iops", "bw_bytes_s"])
    if step_power.schema["step"] != summary.schema["step"]:
        raise InputError(
            f"step columns differ in type: {step_power.schema['step']} in step power, "
            f"{summary.schema['step']} in summary"
        )
    totals = summary.group_by("step", maintain_order=True).agg(
        pl.col("iops").sum(), pl.col("bw_bytes_s").sum()
    )
    usable = pl.col("covered") & (pl.col("avg_w") > 0)
    return (
        step_power.select("step", "avg_w", "covered")
        .join(totals, on="step", how="left", maintain_order="left")
        .with_columns(
            mb_s_per_w=pl.when(usable).then(pl.col("bw_bytes_s") / 1e6 / pl.col("avg_w")),
            iops_per_w=pl.when(usable).then(pl.col("iops") / pl.col("avg_w")),
        )
    )

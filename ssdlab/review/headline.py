"""The drive review's headline table: the figures a review leads with, each with its step.

4K random read and write IOPS at QD1, QD32 and their peak, 128K sequential read and write
MB/s, 4K random 70/30 at QD32 and QD128, p99 and p99.99 latency of 4K random reads and
writes at QD1 and QD32, power and work per watt, the ACT score and the write amplification:
only the figures the run measured, each with the step (and fio JSON) it came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .. import findings
from ..act.frames import act_score
from ..analysis.drive import DriveAnalysis
from ..analysis.workloads import latest
from ..phrases import qd_phrase
from ..units import MB
from ..vocab import SYNC_ENGINES
from .act_findings import act_length
from .section import Section, table

#: the queue depths a review quotes 4K random figures at, and those of its 70/30 mixes
QUOTED_QD = (1, 32)
MIX_QD = (32, 128)
COLUMNS = {
    "Workload": pl.String,
    "Point": pl.String,
    "Value": pl.Float64,
    "Unit": pl.String,
    "Step": pl.String,
    "fio JSON": pl.String,
}


# -- queue depth as fio ran it ---------------------------------------------------------------


def with_engines(drive: DriveAnalysis, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (with ``step_index``) with the ``ioengine`` each step ran (null for steps
    the manifest does not describe, such as imported ones) and, where it lacks them, the
    depth fio ran each step at (``qd_run``, ``qd_reached`` of :attr:`DriveAnalysis.classified`:
    the shallowest direction)."""
    engines = pl.DataFrame(
        [(s.index, s.workload.ioengine) for s in drive.results.manifest.steps if s.workload],
        schema={"step_index": frame.schema["step_index"], "ioengine": pl.String},
        orient="row",
    )
    frame = frame.drop("ioengine", strict=False).join(
        engines, on="step_index", how="left", maintain_order="left"
    )
    depth = ["qd_run", "qd_reached"]
    if set(depth) <= set(frame.columns):
        return frame
    ran = drive.classified.group_by("step_index").agg(pl.col(depth).min())
    return frame.drop(depth, strict=False).join(
        ran, on="step_index", how="left", maintain_order="left"
    )


def short_of_depth(row: Mapping[str, Any]) -> bool:
    """Whether fio ran the row's step below its configured queue depth (``qd_reached``
    false, with the depth it ran, ``qd_run``, known)."""
    return row.get("qd_reached") is False and row.get("qd_run") is not None


def ran_at(row: Mapping[str, Any]) -> str:
    """A row's queue depth for a table: ``QD32``, or ``QD32, fio ran at QD1`` when fio ran
    below the configured depth (:func:`short_of_depth`)."""
    label = str(row.get("qd_label") or f"QD{row['qd']}")
    return f"{label}, fio ran at QD{row['qd_run']}" if short_of_depth(row) else label


def ran_at_column() -> pl.Expr:
    """:func:`ran_at` of every row of a frame with ``qd_label``, ``qd``, ``qd_run`` and
    ``qd_reached``."""
    read = pl.struct("qd_label", "qd", "qd_run", "qd_reached")
    return read.map_elements(ran_at, return_dtype=pl.String)


def _engine_reason(rows: Sequence[Mapping[str, Any]]) -> str:
    """``: the psync engine submits one I/O at a time`` when every row ran a sync engine."""
    engines = {row.get("ioengine") for row in rows}
    if len(engines) == 1 and (engine := engines.pop()) in SYNC_ENGINES:
        return f": the {engine} engine submits one I/O at a time"
    return ""


def depth_caveat(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """``configured QD4 and QD32, fio ran at QD1: the psync engine submits one I/O at a
    time`` for the rows fio ran below their configured depth (None when it reached every
    one); ``rows``: ``qd``, ``iodepth``, ``numjobs``, ``qd_run``, ``qd_reached``,
    optionally ``ioengine``."""
    short = [r for r in rows if short_of_depth(r)]
    if not short:
        return None
    by_run: dict[int, list[str]] = {}
    for row in sorted(short, key=lambda r: r["qd"]):
        labels = by_run.setdefault(int(row["qd_run"]), [])
        if (qd := qd_phrase(row["iodepth"], row["numjobs"])) not in labels:
            labels.append(qd)
    ran = "; ".join(
        f"configured {findings.and_list(labels)}, fio ran at QD{run}"
        for run, labels in by_run.items()
    )
    return ran + _engine_reason(short)


def depth_sentence(workload: str, rows: pl.DataFrame) -> str | None:
    """For a QD sweep fio ran below some configured depths: that, and its highest figure,
    instead of a scaling claim (None when fio reached every depth)."""
    caveat = depth_caveat(rows.to_dicts())
    if caveat is None:
        return None
    top = rows.sort("value", descending=True).row(0, named=True)
    qd = qd_phrase(top["iodepth"], top["numjobs"])
    return (
        f"{workload} does not show queue-depth scaling as fio ran it ({caveat}); its highest "
        f"is {findings.format_value(top['value'], top['metric'])} at "
        f"{'configured ' if short_of_depth(top) else ''}{qd}."
    )


# -- the headline table ------------------------------------------------------------------------


def pure_points(drive: DriveAnalysis, pattern: str, bs: int, direction: str) -> pl.DataFrame:
    """One row per QD of a pure workload: its QD sweep's points (:attr:`DriveAnalysis.qd`),
    else the measured steps of that workload (the latest at each QD)."""
    match = (
        (pl.col("pattern") == pattern)
        & (pl.col("bs_bytes") == bs)
        & (pl.col("direction") == direction)
    )
    rows = drive.qd.filter(match)
    if not rows.height:
        rows = drive.classified.filter(match & ~pl.col("mixed"))
    return latest(rows, ["qd"]).sort("qd")


def mix_points(drive: DriveAnalysis, bs: int, read_pct: int) -> pl.DataFrame:
    """One row per QD of a random mix (both directions summed): its mix sweep's points
    (:attr:`DriveAnalysis.mixes`), else the measured steps of that mix."""
    match = (
        (pl.col("pattern") == "random")
        & (pl.col("bs_bytes") == bs)
        & (pl.col("read_pct") == read_pct)
    )
    steps = drive.mixes.steps
    rows = steps.filter(match) if "bs_bytes" in steps.columns else steps.clear()
    if not rows.height:
        mixed = drive.classified.filter(match & pl.col("mixed"))
        rows = mixed.group_by("step_index", maintain_order=True).agg(
            pl.exclude("iops", "bw_bytes_s").first(), pl.col("iops", "bw_bytes_s").sum()
        )
    return latest(rows, ["qd"]).sort("qd")


def _row(
    workload: str, point: str, value: float, unit: str, source: dict[str, Any]
) -> dict[str, Any]:
    return {
        "Workload": workload,
        "Point": point,
        "Value": value,
        "Unit": unit,
        "step_index": source.get("step_index"),
        "Step": source.get("step"),
    }


def _throughput_rows(drive: DriveAnalysis) -> list[dict[str, Any]]:
    rows = []
    for direction in ("read", "write"):
        points = pure_points(drive, "random", 4096, direction)
        workload = f"4K random {direction}"
        for qd in QUOTED_QD:
            for row in points.filter(pl.col("qd") == qd).iter_rows(named=True):
                rows.append(_row(workload, ran_at(row), row["iops"], "IOPS", row))
        if points.height:
            peak = points.sort("iops", descending=True).row(0, named=True)
            if peak["qd"] in QUOTED_QD:  # already a row: marked as the peak
                shown = next(r for r in rows if r["step_index"] == peak["step_index"])
                shown["Point"] += " (peak)"
            else:
                point = f"{ran_at(peak)} (peak)"
                rows.append(_row(workload, point, peak["iops"], "IOPS", peak))
    for direction in ("read", "write"):
        points = pure_points(drive, "sequential", 131072, direction)
        if points.height:
            peak = points.sort("bw_bytes_s", descending=True).row(0, named=True)
            rows.append(
                _row(
                    f"128K sequential {direction}",
                    f"{ran_at(peak)} (peak)",
                    peak["bw_bytes_s"] / MB,
                    "MB/s",
                    peak,
                )
            )
    points = mix_points(drive, 4096, 70)
    for qd in MIX_QD:
        for row in points.filter(pl.col("qd") == qd).iter_rows(named=True):
            rows.append(_row("4K random 70/30", ran_at(row), row["iops"], "IOPS", row))
    return rows


def _latency_rows(drive: DriveAnalysis) -> list[dict[str, Any]]:
    rows = []
    for direction in ("read", "write"):
        points = pure_points(drive, "random", 4096, direction)
        for row in points.filter(pl.col("qd").is_in(QUOTED_QD)).iter_rows(named=True):
            for column, name in (("clat_p99_ns", "p99"), ("clat_p99_99_ns", "p99.99")):
                if findings.is_known(row[column]):
                    point = f"{name} at {ran_at(row)}"
                    rows.append(_row(f"4K random {direction}", point, row[column] / 1e3, "µs", row))
    return rows


#: what the idle-power rows come from (no step: the power trace outside the run)
IDLE_SOURCE = "the power trace outside the run"


def _power_rows(drive: DriveAnalysis, shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Average power and work per watt of the peaks shown (IOPS/W below 64K, else MB/s/W)."""
    power = drive.results.power.filter(pl.col("covered") & pl.col("avg_w").is_not_null())
    by_step = {r["step_index"]: r for r in power.iter_rows(named=True)}
    rows = []
    for row in shown:
        watts = by_step.get(row["step_index"])
        if watts is None or "peak" not in row["Point"]:
            continue
        source = {"step_index": row["step_index"], "step": row["Step"]}
        per_w = ("mb_s_per_w", "MB/s/W") if row["Unit"] == "MB/s" else ("iops_per_w", "IOPS/W")
        rows.append(_row(row["Workload"], f"power at {row['Point']}", watts["avg_w"], "W", source))
        if findings.is_known(watts[per_w[0]]):
            point = f"work per watt at {row['Point']}"
            rows.append(_row(row["Workload"], point, watts[per_w[0]], per_w[1], source))
    for idle in drive.results.power_idle.iter_rows(named=True):  # the trace outside the run
        rows.append(_row("Idle", idle["phase"], idle["avg_w"], "W", {"step": IDLE_SOURCE}))
    return rows


def _other_rows(drive: DriveAnalysis) -> list[dict[str, Any]]:
    """The ACT score (a lower bound says so) and the whole run's write amplification."""
    rows = []
    trials = drive.results.act_trials
    score = act_score(trials) if trials.height else None
    if score is not None and score.best is not None:
        best = score.best
        point = ("at least, " if score.lower_bound else "") + (
            f"trial of {act_length(best['duration_s'], best['slice_s'])}"
        )
        rows.append(
            _row("ACT score", point, best["load"], "x load", {"step": f"trial {best['trial']}"})
        )
    waf = drive.results.waf.drop_nulls("cumulative_waf").sort("step_index")
    if waf.height:
        last = waf.row(-1, named=True)
        source = {"step": f"the whole run (SMART, to {last['step']})"}
        rows.append(
            _row(
                "Write amplification",
                "NAND / host writes",
                last["cumulative_waf"],
                "factor",
                source,
            )
        )
    return rows


def headline_section(drive: DriveAnalysis) -> Section:
    """The headline figures of the run, each with its step and fio JSON."""
    shown = _throughput_rows(drive)
    rows = shown + _latency_rows(drive) + _power_rows(drive, shown) + _other_rows(drive)
    if not rows:
        return Section(
            missing="No headline figures: the run measured none of 4K random read or write, "
            "128K sequential read or write, 4K random 70/30, power, ACT or write amplification."
        )
    frame = pl.DataFrame(rows, schema={**COLUMNS, "step_index": pl.Int64}, strict=False)
    summary = drive.results.summary
    columns = list(COLUMNS)
    if "fio_json" in summary.columns:
        sources = summary.select("step_index", pl.col("fio_json").alias("fio JSON"))
        frame = frame.drop("fio JSON").join(
            sources.unique("step_index"), on="step_index", how="left", maintain_order="left"
        )
    else:
        columns.remove("fio JSON")
    view = frame.select(columns)
    caption = "Headline figures: each from the step named (latencies are completion latencies)"
    return Section(parts=[table(view, caption)])

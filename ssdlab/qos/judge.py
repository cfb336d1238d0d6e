"""Judge a run's steps against a QoS profile: one verdict per step, direction and limit.

Steps are the measured steps of :attr:`ssdlab.analysis.DriveAnalysis.measured` (fills and
trims left out, a repeated step its median repeat). Latency percentiles are computed from
fio's json+ bins by fio's own rule (:func:`~ssdlab.analysis.percentiles.fio_percentiles`,
any depth), capped at the slowest I/O as the tables cap them; without bins, the percentile
fio reported is used when it reported that one. Each carries the I/Os behind it and how many
lie beyond it (:func:`~ssdlab.analysis.percentiles.samples_beyond`). Exceedance is computed
per slice from the steps' histogram logs (:func:`slice_exceedance`, read once per
:class:`~ssdlab.analysis.DriveAnalysis`), or read from the ACT trials' slices
(``act_slices``).

Verdicts (:data:`VERDICT_SCHEMA`): per target, step (its workload phrase) and direction, a
row per limit with ``measured`` and ``limit`` in ``unit`` (``ns``, ``IOPS``, ``MB/s``, ``...
per TB``, ``%``), the ``comparison`` that passes (``≤``, ``<``, ``≥``), for percentiles the
``ios`` behind them and the ``samples_beyond``, for exceedance the ``coverage_pct`` of the
step's I/Os its histogram logs hold, and ``verdict``: ``pass``, ``fail``, ``unknown`` (the
run lacks what the limit needs, said in ``note``: not a pass; also an exceedance whose logs
cover under the rule's ``min_coverage_pct`` and no slice of which fails) or ``no matching
step`` (a target no step matched: shown, not judged).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis.drive import DriveAnalysis
from ..analysis.exceedance import coverage
from ..analysis.percentiles import fio_percentiles, samples_beyond
from ..errors import InputError
from ..findings import and_list
from ..fio import LOG_WINDOW_MS
from ..io.fio_hist import interval_end_ms, interval_stats
from ..manifest import Manifest
from ..phrases import workload_phrase
from ..results import Results, load
from ..units import MB
from .profile import Exceedance, Profile, Selector, Target, latency_percentile, load_profile

PASS, FAIL, UNKNOWN, NO_STEP = "pass", "fail", "unknown", "no matching step"
VERDICT_SCHEMA = {
    "target": pl.String,
    "step_index": pl.Int64,
    "step": pl.String,
    "direction": pl.String,
    "limit_name": pl.String,
    "measured": pl.Float64,
    "limit": pl.Float64,
    "unit": pl.String,
    "comparison": pl.String,
    "percentile": pl.Float64,
    "ios": pl.Float64,
    "samples_beyond": pl.Float64,
    "coverage_pct": pl.Float64,
    "verdict": pl.String,
    "note": pl.String,
}
#: bytes in the TB that ``_per_tb`` limits are per
TB = 1e12
_THROUGHPUT = {
    "min_iops": ("IOPS", False),
    "min_mb_s": ("MB/s", False),
    "min_iops_per_tb": ("IOPS", True),
    "min_mb_s_per_tb": ("MB/s", True),
}


def matches(selector: Selector) -> pl.Expr:
    """Whether a classified step (``pattern``, ``bs_bytes``, ``read_pct``, ``qd``,
    ``numjobs``, ``iodepth``) meets every key ``selector`` gives."""
    tests = [pl.lit(True)]
    if selector.pattern is not None:
        tests.append(pl.col("pattern") == selector.pattern)
    if selector.bs is not None:
        tests.append(pl.col("bs_bytes").is_in(selector.bs))
    for key, column in (
        ("read_pct", "read_pct"),
        ("qd", "qd"),
        ("jobs", "numjobs"),
        ("iodepth", "iodepth"),
    ):
        bounds = getattr(selector, key)
        if bounds is not None:
            tests.append(pl.col(column).is_between(*bounds))
    return pl.all_horizontal(tests)


def step_phrase(row: dict[str, Any]) -> str:
    """``4K random read at QD1``; a mixed step's direction rows ``..., reads``."""
    phrase = workload_phrase(
        row["pattern"], row["bs_bytes"], row["read_pct"], row["iodepth"], row["numjobs"]
    )
    return f"{phrase}, {row['direction']}s" if 0 < row["read_pct"] < 100 else phrase


def capacity_bytes(manifest: Manifest) -> int | None:
    """The target's capacity: the block device's size, else the target's size."""
    target = manifest.target
    if target is None:
        return None
    return (target.device or {}).get("size_bytes") or target.size_bytes


#: how a measured value must compare with its limit to pass
COMPARISONS = {"≤": float.__le__, "<": float.__lt__, "≥": float.__ge__}


def _verdict(measured: float | None, limit: float, comparison: str) -> str:
    if measured is None or measured != measured:
        return UNKNOWN
    return PASS if COMPARISONS[comparison](float(measured), float(limit)) else FAIL


def _row(target: str, step: dict[str, Any], **figures: Any) -> dict[str, Any]:
    return {
        "target": target,
        "step_index": step.get("step_index"),
        "step": step["label"],
        "direction": step.get("direction"),
        **figures,
    }


class _Latency:
    """The latency figures of a run's steps: json+ bins per step and direction, and the
    percentiles fio reported."""

    def __init__(self, results: Results) -> None:
        hist = results.latency_hist
        self.bins: dict[tuple[int, str], pl.DataFrame] = {}
        if hist.height:
            summed = hist.group_by("step_index", "direction", "lat_ns").agg(pl.col("count").sum())
            self.bins = {
                (i, d): rows.sort("lat_ns")
                for (i, d), rows in summed.group_by("step_index", "direction")
            }
        self.reported = results.percentiles

    def ios(self, step: dict[str, Any]) -> float | None:
        """The I/Os of a step and direction: json+ bins, else bytes / block size."""
        bins = self.bins.get((step["step_index"], step["direction"]))
        if bins is not None:
            return float(bins["count"].sum())
        if step.get("io_bytes") and step.get("bs_bytes"):
            return step["io_bytes"] / step["bs_bytes"]
        return None

    def percentile(self, step: dict[str, Any], p: float) -> tuple[float | None, str | None]:
        """Latency (ns) at ``p`` capped at the step's maximum; None and why when the run
        has neither json+ bins nor fio's figure at ``p`` for the step."""
        top = step.get("clat_max_ns")
        bins = self.bins.get((step["step_index"], step["direction"]))
        if bins is not None:
            (value,) = fio_percentiles(bins["lat_ns"].to_list(), bins["count"].to_list(), [p])
        else:
            rows = (
                self.reported.filter(
                    (pl.col("step_index") == step["step_index"])
                    & (pl.col("direction") == step["direction"])
                    & (pl.col("stat") == "clat")
                    & ((pl.col("percentile") - p).abs() < 1e-9)
                )
                if self.reported.height
                else self.reported
            )
            if not rows.height:
                return None, "no json+ histogram and fio reported no such percentile"
            value = rows["value_ns"].max()
        return (min(value, top) if top is not None else value), None


def _latency_rows(name: str, target: Target, steps: list[dict], latency: _Latency) -> list[dict]:
    rows = []
    for step in steps:
        ios = latency.ios(step)
        for key, limit_ms in target.latency_ms.items():
            p = latency_percentile(key)
            if p is None:
                measured, note = step.get("clat_max_ns"), None
            else:
                measured, note = latency.percentile(step, p)
            beyond = samples_beyond(p, ios) if p is not None and ios is not None else None
            rows.append(
                _row(
                    name,
                    step,
                    limit_name=key,
                    measured=measured,
                    limit=limit_ms * 1e6,
                    unit="ns",
                    comparison="≤",
                    percentile=p,
                    ios=ios,
                    samples_beyond=beyond,
                    verdict=_verdict(measured, limit_ms * 1e6, "≤"),
                    note=note,
                )
            )
    return rows


def _throughput_rows(
    name: str, target: Target, steps: pl.DataFrame, capacity: int | None
) -> list[dict]:
    """Minimum IOPS or MB/s of each step: the judged direction's, else the step's total."""
    if target.direction is None:
        steps = steps.group_by("step_index", maintain_order=True).agg(
            pl.col("label").first().str.replace(r", (reads|writes)$", ""),
            pl.col("iops").sum(),
            pl.col("bw_bytes_s").sum(),
            pl.lit(None, pl.String).alias("direction"),
        )
    rows = []
    for step in steps.iter_rows(named=True):
        for key, limit in target.throughput_limits.items():
            unit, per_tb = _THROUGHPUT[key]
            value = step["iops"] if unit == "IOPS" else step["bw_bytes_s"] / MB
            note = None
            if per_tb:
                unit += " per TB"
                value = value / (capacity / TB) if capacity else None
                note = None if capacity else "the target's capacity is not recorded"
            rows.append(
                _row(
                    name,
                    step,
                    limit_name=key,
                    measured=value,
                    limit=limit,
                    unit=unit,
                    comparison="≥",
                    verdict=_verdict(value, limit, "≥"),
                    note=note,
                )
            )
    return rows


def slice_exceedance(
    drive: DriveAnalysis, step_indexes: Sequence[int], rule: Exceedance
) -> pl.DataFrame:
    """Per step, direction and slice of ``rule.slice_s`` seconds from the step's first logged
    row (``end_ms``; a slice holds the histogram-log rows whose time + 10 ms falls in it, as
    ``fiologparser_hist.py`` puts rows in intervals, the threads of every job summed):
    ``samples`` and ``frac_over_<T>ns``, the share of I/Os in bins reaching each threshold T
    or above (an upper bound by at most the bin holding T:
    :func:`~ssdlab.io.fio_hist.interval_stats`); and per step and direction how much of it
    the logs hold (:func:`~ssdlab.analysis.exceedance.coverage`): ``ios_in_logs``,
    ``ios_total`` (fio's count) and ``log_coverage_pct``, the last partial interval fio
    never logs counted as missing. From the steps' histogram logs as
    :attr:`~ssdlab.analysis.DriveAnalysis.hist_log_bins` read them once; empty for an
    import."""
    thresholds = [t * 1e6 for t in rule.over_ms]
    slice_ms = max(1, round(rule.slice_s * 1000))
    bins = drive.hist_log_bins.filter(pl.col("step_index").is_in(list(step_indexes)))
    keys = ("step_index", "direction", "end_ms")
    sliced = bins.with_columns(end_ms=interval_end_ms(slice_ms))
    frames = [
        interval_stats(rows, n_bins, keys, (), thresholds)
        for (n_bins,), rows in sliced.group_by("n_bins", maintain_order=True)
    ]
    if not frames:
        columns = {"step_index": pl.Int64, "direction": pl.String, "end_ms": pl.Int64}
        columns |= {"samples": pl.Int64} | {f"frac_over_{t:g}ns": pl.Float64 for t in thresholds}
        columns |= {"ios_in_logs": pl.Int64, "ios_total": pl.Int64, "log_coverage_pct": pl.Float64}
        return pl.DataFrame(schema=columns)
    on = ["step_index", "direction"]
    counted = bins.group_by(on).agg(ios=pl.col("count").sum())
    covered = coverage(counted, drive.results.summary, on).rename(
        {"ios": "ios_in_logs", "coverage_pct": "log_coverage_pct"}
    )
    return pl.concat(frames).join(covered, on=on, how="left").sort(keys)


def _coverage_note(row: dict[str, Any], min_pct: float) -> str | None:
    """Why a step's slices are not the whole step: its histogram logs hold under
    ``min_pct`` of fio's I/O count (``row``: a slice of :func:`slice_exceedance`)."""
    pct = row["log_coverage_pct"]
    if pct is None or pct >= min_pct:
        return None
    return (
        f"the histogram logs hold {pct:.1f} % of the step's I/Os ({row['ios_in_logs']:,} of "
        f"fio's {row['ios_total']:,}), under the {min_pct:g} % a slice verdict needs"
    )


def _no_slices(step: dict, kind: str) -> str:
    """Why a step has no slice to judge: no log, or a run shorter than one log interval."""
    if kind != "fio":
        return "no slices recorded"
    runtime_s = step.get("runtime_s")
    window_s = LOG_WINDOW_MS / 1000
    if runtime_s is not None and runtime_s < window_s:
        return (
            f"no histogram-log interval: the step ran {runtime_s:g} s, under one log "
            f"interval ({window_s:g} s)"
        )
    return "no histogram log"


def _exceedance_rows(
    name: str, rule: Exceedance, steps: list[dict], slices: pl.DataFrame, kind: str
) -> list[dict]:
    """A verdict per step, direction and threshold: the worst slice against the limit.
    ``slices`` has ``step_index`` (or ``trial``), ``direction``, ``slice`` and the percent
    over each threshold in ``pct_over_<T>ms`` (fio's, also ``log_coverage_pct``). A fio
    step whose logs cover less than ``rule.min_coverage_pct`` of its I/Os is not judged
    (``unknown``: the unlogged I/Os may hold a worse slice) unless a logged slice already
    fails."""
    rows = []
    key = "trial" if kind == "act" else "step_index"
    for step in steps:
        mine = slices.filter(
            (pl.col(key) == step[key]) & (pl.col("direction") == step["direction"])
        )
        for threshold, limit in rule.over_ms.items():
            column = f"pct_over_{threshold:g}ms"
            measured, note, covered, partial = None, None, None, None
            if not mine.height:
                note = _no_slices(step, kind)
            elif column not in mine.columns:
                note = f"ACT records no share over {threshold:g} ms"
            else:
                worst = mine.sort(column, descending=True).row(0, named=True)
                measured = worst[column]
                length = f"{rule.slice_s:g} s" if kind == "fio" else "the trial's"
                note = f"worst of {mine.height} slices ({length}): slice {worst['slice']}"
                if kind == "fio":
                    note += "; the bin holding the threshold counts as over (an upper bound)"
                    covered = worst["log_coverage_pct"]
                    partial = _coverage_note(worst, rule.min_coverage_pct)
            comparison = "<" if rule.strict else "≤"
            verdict = _verdict(measured, limit, comparison)
            if partial is not None:
                note = f"{partial}; {note}"
                verdict = UNKNOWN if verdict == PASS else verdict
            rows.append(
                _row(
                    name,
                    step,
                    limit_name=f"over {threshold:g} ms",
                    measured=measured,
                    limit=limit,
                    unit="%",
                    comparison=comparison,
                    ios=step.get("ios"),
                    coverage_pct=covered,
                    verdict=verdict,
                    note=note,
                )
            )
    return rows


def _fio_slices(drive: DriveAnalysis, steps: pl.DataFrame, rule: Exceedance) -> pl.DataFrame:
    """:func:`slice_exceedance` of ``steps`` in percent, slices numbered from 1."""
    found = slice_exceedance(drive, steps["step_index"].unique().to_list(), rule)
    return found.select(
        "step_index",
        "direction",
        pl.int_range(1, pl.len() + 1).over("step_index", "direction").alias("slice"),
        *(
            (pl.col(f"frac_over_{t * 1e6:g}ns") * 100).alias(f"pct_over_{t:g}ms")
            for t in rule.over_ms
        ),
        "ios_in_logs",
        "ios_total",
        "log_coverage_pct",
    )


def _act_steps(results: Results) -> tuple[list[dict], pl.DataFrame, str | None]:
    """The ACT trials on the run's device as read steps, their slices, and a note naming
    the trials of another device left out (None when there are none)."""
    trials = results.act_trials.sort("load", "trial")
    other = trials.filter(pl.col("other_device"))["trial"].sort().to_list()
    steps = [
        {
            "trial": t["trial"],
            "label": f"ACT trial {t['trial']} at {t['load']:g}x",
            "direction": "read",
        }
        for t in trials.filter(~pl.col("other_device")).iter_rows(named=True)
    ]
    left = None
    if other:
        shown = and_list([str(t) for t in other])
        left = f"another device's {'trial' if len(other) == 1 else 'trials'} {shown} left out"
    return steps, results.act_slices.with_columns(direction=pl.lit("read")), left


def judge(drive: DriveAnalysis, profile: str | Path | Profile) -> pl.DataFrame:
    """Every matching step judged against every target of ``profile`` (a built-in name, a
    file or a :class:`Profile`): :data:`VERDICT_SCHEMA`, one row per target, step,
    direction and limit, in the profile's order; a target no step matched has one row
    ``no matching step``."""
    profile = load_profile(profile)
    results = drive.results
    # the step's name too: rounds and load-sweep points share their workload phrase
    classified = drive.measured.with_columns(
        label=pl.struct("pattern", "bs_bytes", "read_pct", "iodepth", "numjobs", "direction")
        .map_elements(step_phrase, return_dtype=pl.String)
        .add(pl.lit(" (") + pl.col("step") + pl.lit(")"))
    )
    latency = _Latency(results)
    capacity = capacity_bytes(results.manifest)
    rows: list[dict] = []
    for name, target in zip(profile.target_names(), profile.targets, strict=True):
        found: list[dict] = []
        left = None
        if target.select.act:
            steps, slices, left = _act_steps(results)
            if target.direction not in (None, "read"):
                steps, left = [], None
            found += _exceedance_rows(name, target.exceedance, steps, slices, "act")
            for row in found:
                row["note"] = "; ".join(filter(None, [left, row["note"]]))
        else:
            chosen = classified.filter(matches(target.select)).sort("step_index", "direction")
            if target.direction is not None:
                chosen = chosen.filter(pl.col("direction") == target.direction)
            steps = chosen.to_dicts()
            found += _latency_rows(name, target, steps, latency)
            found += _throughput_rows(name, target, chosen, capacity)
            if target.exceedance is not None and steps:
                for step in steps:
                    step["ios"] = latency.ios(step)
                slices = _fio_slices(drive, chosen, target.exceedance)
                found += _exceedance_rows(name, target.exceedance, steps, slices, "fio")
        rows += found or [{"target": name, "step": NO_STEP, "verdict": NO_STEP, "note": left}]
    return pl.DataFrame(rows, schema=VERDICT_SCHEMA)


def matched(verdicts: pl.DataFrame) -> bool:
    """Whether any target of the profile matched a step."""
    return bool((verdicts["verdict"] != NO_STEP).any())


def passed(verdicts: pl.DataFrame) -> bool:
    """Whether every limit judged passed (targets without a matching step aside)."""
    judged = verdicts.filter(pl.col("verdict") != NO_STEP)
    return bool(judged.height) and bool((judged["verdict"] == PASS).all())


def check(results_dir: str | Path, profile: str | Path | Profile) -> tuple[Profile, pl.DataFrame]:
    """Load ``results_dir`` and :func:`judge` it; InputError when no step matches any
    target of the profile."""
    profile = load_profile(profile)
    verdicts = judge(DriveAnalysis(load(results_dir)), profile)
    if not matched(verdicts):
        raise InputError(
            f"{results_dir}: no step matches any target of QoS profile {profile.name!r} "
            f"({', '.join(profile.target_names())})"
        )
    return profile, verdicts

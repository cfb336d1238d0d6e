"""The SNIA PTS 2.0 recovery tests, from the tidy frames.

Host Idle Recovery (HIR, the ``snia-hir`` suite; steps named ``hir-...``): after write
saturation, continuous 4K random writes (the baseline), then wait-state segments of write
bursts separated by idle waits (fio ``thinktime`` after ``thinktime_iotime`` of I/O), each
followed by a return to continuous writes. A wait state's burst IOPS is the mean of its
*busy* windows: log windows of the usual length (at most :data:`LONG_WINDOW` x the median)
with at least :data:`BUSY_SHARE` of the segment's fastest window's IOPS, so the windows
spanning or cut by an idle wait are left out. fio's first burst of a segment lasts burst +
wait (its think clock starts with the job).

Cross-Stimulus Recovery (XSR, ``snia-xsr``; steps named ``xsr-...``): 128K sequential
writes, then 8K random writes, then sequential again. Each segment's steady level is the
mean of its last :data:`STEADY_SHARE` of windows; its recovery time is the time until
:data:`RECOVERY_WINDOWS` windows in a row are within :data:`TOLERANCE` of the steady level of
the last earlier segment of the same workload (the first sequential one for the return to
sequential), else of its own steady level (the time it took to settle).

Time axes run across a test's steps: ``elapsed_s`` adds each earlier segment's last window.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..manifest import Manifest, StepRecord
from ..units import fio_seconds
from .pts import step_series

HIR_PREFIX = "hir-"
XSR_PREFIX = "xsr-"
#: a busy window has at least this share of the segment's fastest window's IOPS...
BUSY_SHARE = 0.5
#: ...and lasts at most this many times the segment's median window
LONG_WINDOW = 1.5
#: the share of a segment's last windows whose mean is its steady level
STEADY_SHARE = 0.2
#: a segment has recovered once this many windows in a row are within the tolerance
RECOVERY_WINDOWS = 5
TOLERANCE = 0.1
#: the columns of :meth:`HostIdleRecovery.wait_states`
WAIT_STATES_SCHEMA: dict[str, type[pl.DataType]] = (
    {"step": pl.String}
    | dict.fromkeys(("wait_s", "burst_s"), pl.Float64)
    | {"bursts": pl.Int64}
    | dict.fromkeys(("burst_iops", "burst_vs_baseline", "return_iops"), pl.Float64)
)
#: the columns of :meth:`CrossStimulusRecovery.transitions`
TRANSITIONS_SCHEMA: dict[str, type[pl.DataType]] = (
    dict.fromkeys(("step", "workload"), pl.String)
    | dict.fromkeys(("duration_s", "steady_bw_bytes_s", "steady_iops"), pl.Float64)
    | {"reference_step": pl.String, "recovery_s": pl.Float64}
)


@dataclass(frozen=True, eq=False)
class Segment:
    """One step of a recovery test: ``series`` holds ``t_s``, ``elapsed_s`` (across the
    test), ``window_s``, ``iops``, ``bw_bytes_s`` and ``busy`` per log window."""

    step_index: int
    step: str
    kind: str
    workload: str
    series: pl.DataFrame
    wait_s: float | None = None
    burst_s: float | None = None

    @property
    def busy(self) -> pl.DataFrame:
        return self.series.filter(pl.col("busy"))

    @property
    def bursts(self) -> int:
        """Runs of consecutive busy windows."""
        busy = self.series["busy"]
        return int((busy & ~busy.shift(1, fill_value=False)).sum())


@dataclass(frozen=True, eq=False)
class _Test:
    """A recovery test: its segments in order."""

    segments: list[Segment]

    def _series(self, label: str) -> pl.DataFrame:
        """Every window of every segment with ``step`` and the segment's ``label``
        attribute, on one time axis."""
        return pl.concat(
            [
                s.series.with_columns(step=pl.lit(s.step), **{label: pl.lit(getattr(s, label))})
                for s in self.segments
            ]
        )


def first_run(mask: pl.Series, length: int) -> int | None:
    """The index of the first of ``length`` true values in a row in ``mask``, or None."""
    runs = mask.fill_null(False).cast(pl.Int32).rolling_sum(length).shift(-(length - 1))
    starts = (runs == length).arg_true()
    return int(starts[0]) if len(starts) else None


def _series(timeseries: pl.DataFrame, step_index: int, offset_s: float) -> pl.DataFrame:
    series = step_series(timeseries, step_index)
    if not series.height:
        return series.with_columns(elapsed_s=pl.col("t_s"), busy=pl.lit(False))
    typical = float(series["window_s"].median() or 0.0)
    fastest = float(series["iops"].max() or 0.0)
    busy = (pl.col("window_s") <= LONG_WINDOW * typical) & (pl.col("iops") >= BUSY_SHARE * fastest)
    return series.with_columns(elapsed_s=pl.col("t_s") + offset_s, busy=busy & (fastest > 0))


def _timed_writes(manifest: Manifest, prefix: str) -> list[StepRecord]:
    """The run's time-based write steps named ``prefix...``, in order."""
    return [
        r
        for r in sorted(manifest.steps, key=lambda r: r.index)
        if r.name.startswith(prefix)
        and r.workload is not None
        and r.workload.writes
        and r.workload.loops is None
    ]


def _segments(
    manifest: Manifest, prefix: str, steps: pl.DataFrame, timeseries: pl.DataFrame
) -> list[tuple[StepRecord, str, pl.DataFrame]]:
    """Each time-based write step named ``prefix...`` with its workload label and windows,
    on one time axis."""
    labels = dict(
        steps.group_by("step_index")
        .agg(pl.concat_str("workload", pl.lit(" "), "qd_label").first())
        .iter_rows()
    )
    out, offset = [], 0.0
    for record in _timed_writes(manifest, prefix):
        series = _series(timeseries, record.index, offset)
        if not series.height:
            continue
        out.append((record, labels.get(record.index, record.name), series))
        offset += float(series["t_s"].max() or 0.0)
    return out


@dataclass(frozen=True, eq=False)
class HostIdleRecovery(_Test):
    """A HIR test: its segments in order (``kind``: baseline, wait or return)."""

    @property
    def baseline_iops(self) -> float | None:
        """Mean IOPS of the continuous baseline's windows."""
        base = [s for s in self.segments if s.kind == "baseline"]
        return float(base[0].series["iops"].mean() or 0.0) if base else None

    def wait_states(self) -> pl.DataFrame:
        """Per wait-state segment: ``step``, ``wait_s``, ``burst_s``, ``bursts``,
        ``burst_iops`` (mean of busy windows), ``burst_vs_baseline`` (ratio), and
        ``return_iops`` (mean of the return to continuous writes after it; null without)."""
        rows = []
        base = self.baseline_iops
        for i, seg in enumerate(self.segments):
            if seg.kind != "wait":
                continue
            burst = seg.busy["iops"].mean() if seg.busy.height else None
            after = self.segments[i + 1] if i + 1 < len(self.segments) else None
            back = after.series["iops"].mean() if after and after.kind == "return" else None
            ratio = burst / base if burst is not None and base else None
            rows.append((seg.step, seg.wait_s, seg.burst_s, seg.bursts, burst, ratio, back))
        return pl.DataFrame(rows, schema=WAIT_STATES_SCHEMA, orient="row")

    def series(self) -> pl.DataFrame:
        """Every window of every segment with ``step`` and ``kind``, on one time axis."""
        return self._series("kind")


def host_idle_recovery(
    steps: pl.DataFrame, timeseries: pl.DataFrame, manifest: Manifest
) -> HostIdleRecovery | None:
    """The run's HIR test (time-based write steps named ``hir-...``), or None when it has
    no wait-state step with a time series. ``steps``: classified steps (fills included)."""
    segments: list[Segment] = []
    for record, label, series in _segments(manifest, HIR_PREFIX, steps, timeseries):
        options = record.workload.options if record.workload else {}
        waits = "thinktime" in options
        kind = (
            "wait" if waits else "return" if any(s.kind == "wait" for s in segments) else "baseline"
        )
        segments.append(
            Segment(
                step_index=record.index,
                step=record.name,
                kind=kind,
                workload=label,
                series=series,
                wait_s=fio_seconds(options["thinktime"], 1e-6) if waits else None,
                burst_s=fio_seconds(options.get("thinktime_iotime", 0), 1.0) if waits else None,
            )
        )
    if not any(s.kind == "wait" for s in segments):
        return None
    return HostIdleRecovery(segments)


def recovery_time(
    series: pl.DataFrame,
    reference: float,
    *,
    column: str = "bw_bytes_s",
    tolerance: float = TOLERANCE,
    sustain: int = RECOVERY_WINDOWS,
) -> float | None:
    """Seconds from a segment's start to the start of the first ``sustain`` windows in a
    row whose ``column`` is within ``tolerance`` of ``reference``; None if none are."""
    near = (series[column] - reference).abs() <= tolerance * abs(reference)
    first = first_run(near, sustain)
    if first is None:
        return None
    return float(series["t_s"][first] - series["window_s"][first])


@dataclass(frozen=True, eq=False)
class CrossStimulusRecovery(_Test):
    """An XSR test: its segments in order (``kind``: the workload's pattern)."""

    def transitions(self) -> pl.DataFrame:
        """Per segment: ``step``, ``workload``, ``duration_s``, ``steady_bw_bytes_s`` and
        ``steady_iops`` (means of the last :data:`STEADY_SHARE` of windows),
        ``reference_step`` (whose steady level it recovers to), ``recovery_s``."""
        rows = []
        steady: dict[str, tuple[str, float]] = {}  # workload -> (step, steady bw)
        for seg in self.segments:
            tail = seg.series.tail(max(1, round(seg.series.height * STEADY_SHARE)))
            bw, iops = float(tail["bw_bytes_s"].mean() or 0.0), float(tail["iops"].mean() or 0.0)
            ref_step, ref = steady.get(seg.workload, (seg.step, bw))
            back = recovery_time(seg.series, ref) if len(rows) else None
            duration = float(seg.series["t_s"].max() or 0.0)
            rows.append((seg.step, seg.workload, duration, bw, iops, ref_step, back))
            steady[seg.workload] = (seg.step, bw)
        return pl.DataFrame(rows, schema=TRANSITIONS_SCHEMA, orient="row")

    def series(self) -> pl.DataFrame:
        """Every window of every segment with ``step`` and ``workload``, on one time axis."""
        return self._series("workload")


def cross_stimulus_recovery(
    steps: pl.DataFrame, timeseries: pl.DataFrame, manifest: Manifest
) -> CrossStimulusRecovery | None:
    """The run's XSR test (time-based write steps named ``xsr-...``), or None with fewer
    than two such steps with a time series."""
    segments = [
        Segment(
            step_index=record.index,
            step=record.name,
            kind=record.workload.rw if record.workload else "",
            workload=label,
            series=series,
        )
        for record, label, series in _segments(manifest, XSR_PREFIX, steps, timeseries)
    ]
    return CrossStimulusRecovery(segments) if len(segments) >= 2 else None

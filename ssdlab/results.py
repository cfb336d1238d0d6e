"""Load a results directory into tidy frames.

``summary``: one row per step x job x direction, fio's totals and percentiles (ns, bytes/s).
``timeseries``: per step, job, direction and log window: ``t_s``, ``iops``, ``bw_bytes_s``,
``clat_mean_ns`` (see :func:`ssdlab.logs.timeseries` for how threads and windows combine).
``latency_hist``: fio's json+ completion latency bins. ``percentiles``: every percentile fio
reported, long. ``latency_intervals``: completion-latency percentiles per histogram-log
interval (``write_hist_log``; see :func:`ssdlab.pipeline.latency_intervals_frame`).
``rounds``/``steady_state``: the steady-state rounds and determinations.
The frames of :data:`FRAME_BUILDERS` (telemetry, power, ACT, plug-ins) are attributes too.
How they are built: :mod:`ssdlab.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import polars as pl

from . import layout
from .errors import InputError, SsdlabError
from .logs import EXPECTED, MISSING_LOG, TIMESERIES_KINDS
from .manifest import Manifest
from .pipeline import (
    FIO_FRAMES,
    ID_COLUMNS,
    LATENCY_INTERVALS_SCHEMA,
    SUMMARY_FIRST,
    Damage,
    RunContext,
    StepData,
    core_frames,
    front,
    latency_intervals_frame,
    lost_rows,
    native_steps,
    series_of,
    step_logs,
    timeseries_frame,
)
from .plugins import Plugins, is_callable, type_name


@dataclass
class Frames:
    """The tidy frames of a results directory (polars or pandas): the core ones as fields,
    those of :data:`FRAME_BUILDERS` (telemetry, power, ACT) as attributes from ``extra``."""

    summary: Any
    timeseries: Any
    latency_hist: Any
    percentiles: Any
    snapshots: Any
    latency_intervals: Any
    rounds: Any
    steady_state: Any
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True)

    def __getattr__(self, name: str) -> Any:
        extra = self.__dict__.get("extra", {})
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        """Attributes with the frames of ``extra`` (tab completion in Jupyter)."""
        return [*super().__dir__(), *self.__dict__.get("extra", {})]


ROUNDS_SCHEMA = {
    "block": pl.String,
    "round": pl.Int64,
    "step": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "in_window": pl.Boolean,
}
STEADY_COLUMNS = {
    "block": pl.String, "metric": pl.String, "direction": pl.String, "track": pl.String,
    "steady": pl.Boolean, "reason": pl.String, "rounds_run": pl.Int64, "window": pl.Int64,
    "mean": pl.Float64, "data_excursion": pl.Float64, "allowed_data_excursion": pl.Float64,
    "slope": pl.Float64, "intercept": pl.Float64, "slope_excursion": pl.Float64,
    "allowed_slope_excursion": pl.Float64,
}  # fmt: skip


def steady_frames(manifest: Manifest) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Round-by-round tracked values and the steady-state determination of every block."""
    rounds, determinations = [], []
    for d in manifest.steady_state:
        judged = set(d.rounds)
        for n, value in enumerate(d.round_values, start=1):
            step = f"{d.block}-r{n:02d}-{d.track}"
            rounds.append((d.block, n, step, d.metric, value, n in judged))
        fields = d.model_dump(include=set(STEADY_COLUMNS))
        determinations.append(fields | {"rounds_run": len(d.round_values)})
    return (
        pl.DataFrame(rounds, schema=ROUNDS_SCHEMA, orient="row"),
        pl.DataFrame(determinations, schema=STEADY_COLUMNS),
    )


@dataclass
class Results(Frames):
    """A loaded results directory: polars frames plus the manifest they came from.

    Frames of :data:`FRAME_BUILDERS` (telemetry, power, ACT) are attributes too:
    ``results.power``; they are empty frames when the run has no such data.
    """

    path: Path
    manifest: Manifest
    #: files of a native run that could not be read, each with what was left out because of
    #: it (a step whose ``fio.json`` is unreadable; a step's time series or latency intervals
    #: when one of its logs is, or one of the logs fio writes per thread is missing; rows of a
    #: log left out of its time series for a reason the end of fio's logs does not explain,
    #: counted); ``str()`` of each is one line, ``PATH: reason; what``
    damaged: list[Damage] = field(default_factory=list)
    #: a native run's steps as loaded, parsed once (fio's JSON rows, their logs, the bins of
    #: their histogram logs: :class:`~ssdlab.pipeline.StepData`); empty for an import
    steps: list[StepData] = field(default_factory=list)

    def to_pandas(self) -> Frames:
        """Every frame as a pandas DataFrame (:func:`pandas_frame`), those of
        :data:`FRAME_BUILDERS` too."""
        names = [f.name for f in fields(Frames) if f.name != "extra"]
        core = {name: pandas_frame(getattr(self, name)) for name in names}
        extra = {name: pandas_frame(frame) for name, frame in self.extra.items()}
        return Frames(**core, extra=extra)


#: A frame builder: ``builder(context) -> pl.DataFrame`` (empty when the run has no such
#: data); ``context`` is the loaded run (:class:`~ssdlab.pipeline.RunContext`).
FrameBuilder = Callable[[RunContext], pl.DataFrame]
#: The frames built besides the core ones, by name. A package adds one under the entry-point
#: group ``ssdlab.frames`` (see :mod:`ssdlab.plugins`); ``FRAME_BUILDERS.register(name,
#: builder)`` adds one for this process.
FRAME_BUILDERS: Plugins[FrameBuilder] = Plugins(
    "ssdlab.frames",
    "frame builder",
    {
        "smart": "ssdlab.telemetry.frames:smart_frame",
        "waf": "ssdlab.telemetry.frames:waf_frame",
        "power": "ssdlab.telemetry.frames:power_frame",
        "power_trace": "ssdlab.telemetry.frames:power_trace_frame",
        "power_idle": "ssdlab.telemetry.frames:power_idle_frame",
        "endurance": "ssdlab.telemetry.frames:endurance_frame",
        "act_trials": "ssdlab.act.frames:trials_frame",
        "act_slices": "ssdlab.act.frames:slices_frame",
    },
    check=is_callable,
    # a Results attribute: a plug-in frame of its name would never be seen
    reserved=(*(f.name for f in fields(Results)), *(n for n in vars(Results) if n[0] != "_")),
)


def pandas_frame(frame: pl.DataFrame) -> Any:
    """``frame`` as a pandas DataFrame whose integer columns stay integers: nullable pandas
    dtypes (``Int64``...) where polars has integers, even with nulls, and exact (plain
    ``to_pandas`` turns an integer column with a null into float64)."""
    import pandas as pd
    import pyarrow as pa

    integers = {
        pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(),
    }  # fmt: skip
    return frame.to_arrow().to_pandas(types_mapper=integers.get)


def load(results_dir: str | Path) -> Results:
    """Load an ssdlab results directory (a native run or an import) as tidy frames.

    Steps whose manifest status is not ``ok`` or ``interrupted`` are left out; the
    ``status`` column tells interrupted steps apart. A file that cannot be read, or a
    thread's log that is missing, leaves out only what depends on it and is listed in
    ``damaged``.
    """
    path = Path(results_dir)
    manifest = Manifest.load(path)
    if manifest.source == "import":
        return _results(RunContext(path, manifest), _imported(path))
    damaged: list[Damage] = []
    steps = native_steps(path, manifest, damaged)
    series, bad, lost = series_of(*step_logs(steps), steps=steps)
    # a thread's log that is missing counts as one that cannot be read: never partial sums
    bad |= {
        log.path: MISSING_LOG
        for step in steps
        for log in step.missing
        if log.kind in TIMESERIES_KINDS
    }
    owner = {log.path: step.record for step in steps for log in step.logs + step.missing}
    broken = {owner[log].index for log in bad}  # their series are left out whole
    for log, reasons in lost.items():  # rows fio's way of ending a log does not explain
        record = owner[log]
        damaged += [
            Damage(log, lost_rows(reason, n), record.index, record.name, "rows")
            for reason, n in reasons.items()
            if reason not in EXPECTED and record.index not in broken
        ]
    if bad:  # an interrupted step with a bad log is left out; an ok one keeps fio's figures
        for log, reason in sorted(bad.items(), key=lambda item: owner[item[0]].index):
            record = owner[log]
            if record.status == "ok":
                damaged.append(Damage(log, reason, record.index, record.name, "time series"))
        steps = [s for s in steps if s.record.index not in broken or s.record.status == "ok"]
        series = series.filter(~pl.col("step_index").is_in(list(broken)))  # never partial sums
    context = RunContext(path, manifest, steps)
    if not steps:
        why = "".join(f"; {d}" for d in damaged if d.left_out == "step")
        raise InputError(f"{path}: no completed step to load (run status: {manifest.status}){why}")
    frames = core_frames(manifest, context.steps)
    frames["timeseries"] = timeseries_frame(manifest, context.steps, series, frames["summary"])

    unread: set[int] = set()

    def bad_hist_log(step: StepData, log: str, reason: str) -> None:
        unread.add(step.record.index)  # an interrupted step's intervals are left out quietly
        record = step.record
        if record.status == "ok":
            damaged.append(Damage(log, reason, record.index, record.name, "latency intervals"))

    intervals = latency_intervals_frame(
        manifest, context.steps, frames["summary"], bad_hist_log, keep_bins=True
    )
    frames["latency_intervals"] = intervals.filter(~pl.col("step_index").is_in(list(unread)))
    return _results(context, frames, damaged)


def load_frames(results_dir: str | Path, names: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Only the registered frames ``names`` of a results directory (``power``, ``waf``...):
    its steps' results are parsed only if a builder needs them, the time series not built."""
    path = Path(results_dir)
    context = RunContext(path, Manifest.load(path))
    return {name: build_frame(name, context) for name in names}


def build_frame(name: str, context: RunContext) -> pl.DataFrame:
    """The frame ``name`` of a run; a builder's failure other than bad input (a bug, or a
    plug-in written for another version), or a result that is not a polars DataFrame, is
    one error naming the builder."""
    try:
        frame = FRAME_BUILDERS[name](context)
    except SsdlabError:
        raise
    except Exception as exc:
        raise SsdlabError(f"{context.path}: {FRAME_BUILDERS.label(name)} failed: {exc!r}") from exc
    if not isinstance(frame, pl.DataFrame):
        raise SsdlabError(
            f"{context.path}: {FRAME_BUILDERS.label(name)} returned {type_name(frame)}, "
            "not a polars DataFrame"
        )
    return frame


def _imported(path: Path) -> dict[str, pl.DataFrame]:
    frames = {}
    for name in FIO_FRAMES:
        file = layout.frame_file(path, name)
        if name == "latency_intervals" and not file.exists():  # imported before it existed
            frames[name] = front(pl.DataFrame(schema=LATENCY_INTERVALS_SCHEMA))
            continue
        try:
            frames[name] = pl.read_parquet(file, glob=False)
        except (OSError, pl.exceptions.PolarsError) as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # polars: lines
            raise InputError(f"{file}: unreadable imported frame: {reason}") from None
    # imports made before issue 15 named fio's CPU figures without their unit
    old = {"usr_cpu": "usr_cpu_pct", "sys_cpu": "sys_cpu_pct"}
    frames["summary"] = frames["summary"].rename(
        {k: v for k, v in old.items() if k in frames["summary"].columns}
    )
    return frames


def _results(
    context: RunContext, frames: dict[str, pl.DataFrame], damaged: Sequence[Damage] = ()
) -> Results:
    rounds, steady = steady_frames(context.manifest)
    extra = {name: build_frame(name, context) for name in FRAME_BUILDERS}
    return Results(
        damaged=[*damaged, *context.damaged],
        steps=context.steps,
        **{
            n: front(frames[n], SUMMARY_FIRST if n == "summary" else ID_COLUMNS) for n in FIO_FRAMES
        },
        rounds=rounds,
        steady_state=steady,
        path=context.path,
        manifest=context.manifest,
        extra=extra,
    )

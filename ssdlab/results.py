"""Load a results directory into tidy frames.

``summary``: one row per step x job x direction, fio's totals and percentiles (ns, bytes/s).
``timeseries``: per step, job, direction and log window: ``t_s``, ``iops``, ``bw_bytes_s``,
``clat_mean_ns`` (see :func:`ssdlab.logs.timeseries` for how threads and windows combine).
``latency_hist``: fio's json+ completion latency bins. ``percentiles``: every percentile fio
reported, long.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import polars as pl

from . import layout
from .errors import InputError
from .io import read_fio_json
from .layout import FIO_JSON
from .logs import find_job_logs, load_job_logs, log_params, timeseries
from .manifest import LOADABLE, Manifest, StepRecord

ID_COLUMNS = ["run_id", "label", "host", "step_index", "step", "block", "round", "status"]
SUMMARY_FIRST = [
    *ID_COLUMNS, "direction", "rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "iops",
    "bw_bytes_s", "io_bytes", "runtime_s", "lat_mean_ns", "clat_mean_ns", "clat_p50_ns",
    "clat_p99_ns", "clat_p99_9_ns", "clat_p99_99_ns", "clat_max_ns", "usr_cpu", "sys_cpu",
]  # fmt: skip


@dataclass
class Frames:
    """The tidy frames of a results directory (polars or pandas)."""

    summary: Any
    timeseries: Any
    latency_hist: Any
    percentiles: Any
    snapshots: Any
    rounds: Any
    steady_state: Any


#: the frames built from fio's files (the rest come from the manifest)
RAW_FRAMES = ("summary", "timeseries", "latency_hist", "percentiles", "snapshots")
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
        values = d.get("round_values", [])
        judged = set(d.get("rounds") or ())
        for n, value in enumerate(values, start=1):
            step = f"{d['block']}-r{n:02d}-{d['track']}"
            rounds.append((d["block"], n, step, d["metric"], value, n in judged))
        determinations.append({k: d.get(k) for k in STEADY_COLUMNS} | {"rounds_run": len(values)})
    return (
        pl.DataFrame(rounds, schema=ROUNDS_SCHEMA, orient="row"),
        pl.DataFrame(determinations, schema=STEADY_COLUMNS),
    )


#: Frames other parts of ssdlab build from a results directory: name -> "module:function",
#: each called as ``function(results_dir, manifest) -> pl.DataFrame`` (empty when the run
#: has no such data). Users may register their own.
FRAME_BUILDERS: dict[str, str] = {
    "smart": "ssdlab.telemetry.frames:smart_frame",
    "waf": "ssdlab.telemetry.frames:waf_frame",
    "power": "ssdlab.telemetry.frames:power_frame",
    "power_trace": "ssdlab.telemetry.frames:power_trace_frame",
    "endurance": "ssdlab.telemetry.frames:endurance_frame",
    "act_trials": "ssdlab.act.frames:trials_frame",
    "act_slices": "ssdlab.act.frames:slices_frame",
}


def _build_extra(path: Path, manifest: Manifest) -> dict[str, pl.DataFrame]:
    extra = {}
    for name, target in FRAME_BUILDERS.items():
        module_name, func = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            extra[name] = pl.DataFrame()
            continue
        extra[name] = getattr(module, func)(path, manifest)
    return extra


@dataclass
class Results(Frames):
    """A loaded results directory: polars frames plus the manifest they came from.

    Frames registered in :data:`FRAME_BUILDERS` (telemetry, power, ACT) are attributes too:
    ``results.power``; they are empty frames when the run has no such data.
    """

    path: Path
    manifest: Manifest
    extra: dict[str, pl.DataFrame] = field(default_factory=dict)

    def __getattr__(self, name: str) -> pl.DataFrame:
        extra = self.__dict__.get("extra", {})
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    def to_pandas(self) -> Frames:
        """The core frames as pandas DataFrames."""
        return Frames(**{f.name: getattr(self, f.name).to_pandas() for f in fields(Frames)})


def _step_frames(
    results_dir: Path, manifest: Manifest, record: StepRecord
) -> tuple[pl.DataFrame, ...]:
    step_dir = layout.step_dir(results_dir, record)
    fio = read_fio_json(step_dir / FIO_JSON)
    ids = {
        "run_id": manifest.run_id,
        "label": manifest.label,
        "host": manifest.host.hostname if manifest.host else None,
        "step_index": record.index,
        "step": record.name,
        "block": record.block,
        "round": record.round,
        "status": record.status,
    }
    id_cols = [
        pl.lit(v, dtype=pl.Int64 if k in ("step_index", "round") else pl.String).alias(k)
        for k, v in ids.items()
    ]
    summary = fio.jobs.with_columns(id_cols)
    logs, bad = load_job_logs(find_job_logs(fio.meta, step_dir))
    if bad:
        path, reason = next(iter(bad.items()))
        raise InputError(f"{path}: {reason}")
    params = pl.DataFrame(log_params(fio.meta, fio.jobs.to_dicts()))
    ts = timeseries(logs, params).with_columns(id_cols)
    hist = fio.bins.filter(pl.col("stat") == "clat").drop("stat").with_columns(id_cols)
    pcts = fio.percentiles.with_columns(id_cols)
    return summary, ts, hist, pcts, fio.snapshots.with_columns(id_cols)


def _front(frame: pl.DataFrame, first: list[str]) -> pl.DataFrame:
    present = [c for c in first if c in frame.columns]
    return frame.select(present + [c for c in frame.columns if c not in present])


def load(results_dir: str | Path) -> Results:
    """Load an ssdlab results directory (a native run or an import) as tidy frames.

    Steps whose manifest status is not ``ok`` or ``interrupted`` are left out; the
    ``status`` column tells interrupted steps apart.
    """
    path = Path(results_dir)
    manifest = Manifest.load(path)
    if manifest.source == "import":
        return _load_import(path, manifest)
    parts: list[tuple[pl.DataFrame, ...]] = []
    for record in manifest.steps:
        if record.status not in LOADABLE:
            continue
        try:
            parts.append(_step_frames(path, manifest, record))
        except InputError:
            if record.status == "ok":
                raise
    if not parts:
        raise InputError(f"{path}: no completed step to load (run status: {manifest.status})")
    frames = [pl.concat(list(col), how="diagonal_relaxed") for col in zip(*parts, strict=True)]
    return _results(path, manifest, frames)


def _results(path: Path, manifest: Manifest, frames: list[pl.DataFrame]) -> Results:
    ordered = {
        name: _front(frame, SUMMARY_FIRST if name == "summary" else ID_COLUMNS)
        for name, frame in zip(RAW_FRAMES, frames, strict=True)
    }
    rounds, steady = steady_frames(manifest)
    return Results(
        **ordered,
        rounds=rounds,
        steady_state=steady,
        path=path,
        manifest=manifest,
        extra=_build_extra(path, manifest),
    )


def _load_import(path: Path, manifest: Manifest) -> Results:
    frames = []
    for name in RAW_FRAMES:
        file = layout.frame_file(path, name)
        try:
            frames.append(pl.read_parquet(file))
        except (OSError, pl.exceptions.PolarsError) as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # polars: lines
            raise InputError(f"{file}: unreadable imported frame: {reason}") from None
    return _results(path, manifest, frames)

"""Load a results directory into tidy frames.

``summary``: one row per step x job x direction, fio's totals and percentiles (ns, bytes/s).
``timeseries``: per step, direction and log window: ``t_s`` (end of the window, seconds
since the job started measuring), ``iops``, ``bw_bytes_s``, ``clat_mean_ns``, summed (rates)
or IOPS-weighted (latency) over numjobs clones; a window not logged by every clone (fio does
not write a job's last partial window) is left out rather than undercounted, and a repeated
timestamp (fio's final flush of a partial window) keeps the full window's value. ``latency_hist``: fio's json+ completion
latency bins. ``percentiles``: every percentile fio reported, long.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import polars as pl

from .errors import InputError
from .io import FioJson, read_fio_json, read_fio_log
from .manifest import LOADABLE, Manifest, StepRecord
from .runner import FIO_JSON

ID_COLUMNS = ["run_id", "label", "host", "step_index", "step", "status"]
SUMMARY_FIRST = [
    *ID_COLUMNS, "direction", "rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "iops",
    "bw_bytes_s", "io_bytes", "runtime_s", "lat_mean_ns", "clat_mean_ns", "clat_p50_ns",
    "clat_p99_ns", "clat_p99_9_ns", "clat_p99_99_ns", "clat_max_ns", "usr_cpu", "sys_cpu",
]  # fmt: skip
TIMESERIES_SCHEMA = {
    "direction": pl.String,
    "t_s": pl.Float64,
    "iops": pl.Float64,
    "bw_bytes_s": pl.Float64,
    "clat_mean_ns": pl.Float64,
}
_CLONE_RE = re.compile(r"\.(\d+)\.log$")
_TS_KINDS = {"iops": "write_iops_log", "bw": "write_bw_log", "clat": "write_lat_log"}


@dataclass
class Frames:
    """The tidy frames of a results directory (polars or pandas)."""

    summary: Any
    timeseries: Any
    latency_hist: Any
    percentiles: Any


@dataclass
class Results(Frames):
    """A loaded results directory: polars frames plus the manifest they came from."""

    path: Path
    manifest: Manifest

    def to_pandas(self) -> Frames:
        """The same frames as pandas DataFrames."""
        return Frames(**{f.name: getattr(self, f.name).to_pandas() for f in fields(Frames)})


def _options(fio: FioJson) -> dict[str, str]:
    merged: dict[str, str] = dict(fio.meta["global_options"])
    for job_opts in fio.meta["job_options"]:
        merged.update(job_opts)
    return merged


def _log_frames(step_dir: Path, options: dict[str, str]) -> list[pl.DataFrame]:
    frames = []
    for kind, option in _TS_KINDS.items():
        prefix = options.get(option)
        if not prefix:
            continue
        name_re = re.compile(rf"{re.escape(prefix)}_{kind}(\.\d+)?\.log")
        for path in sorted(p for p in step_dir.iterdir() if name_re.fullmatch(p.name)):
            frame, _ = read_fio_log(path, kind=kind)
            clone = _CLONE_RE.search(path.name)
            frames.append(
                frame.select("time_ms", "value", "direction").with_columns(
                    kind=pl.lit(kind), clone=pl.lit(int(clone.group(1)) if clone else 1)
                )
            )
    return frames


def _timeseries(step_dir: Path, fio: FioJson) -> pl.DataFrame:
    """Per-window rates of one step from its windowed logs (``log_avg_msec``)."""
    options = _options(fio)
    frames = _log_frames(step_dir, options)
    window = int(options.get("log_avg_msec") or 0)
    if not frames or window <= 0:
        return pl.DataFrame(schema=TIMESERIES_SCHEMA)
    logs = pl.concat(frames)
    starts = [s for s in fio.meta["job_start_ms"] if s]
    if starts:
        t0 = min(starts)
    elif logs["time_ms"].min() >= 10**12:  # epoch stamps without job_start (fio < 3.36)
        t0 = logs["time_ms"].min() - window
    else:
        t0 = 0
    per_clone = (
        logs.with_columns(t_s=((pl.col("time_ms") - t0) / window).round(0) * window / 1000)
        .group_by("clone", "direction", "t_s", "kind")
        .agg(pl.col("value").first())
        .pivot("kind", index=["clone", "direction", "t_s"], values="value")
    )
    for kind in _TS_KINDS:
        if kind not in per_clone.columns:
            per_clone = per_clone.with_columns(pl.lit(None, dtype=pl.Float64).alias(kind))
    return (
        per_clone.group_by("direction", "t_s")
        .agg(
            iops=pl.col("iops").sum(),
            bw_bytes_s=pl.col("bw").sum() * 1024,
            clat_mean_ns=(pl.col("clat") * pl.col("iops")).sum() / pl.col("iops").sum(),
            clones=pl.col("iops").count(),
        )
        .filter(pl.col("clones") == per_clone["clone"].n_unique())
        .drop("clones")
        .sort("direction", "t_s")
        .cast(TIMESERIES_SCHEMA)  # type: ignore[arg-type]
    )


def _step_frames(
    results_dir: Path, manifest: Manifest, record: StepRecord
) -> tuple[pl.DataFrame, ...]:
    step_dir = results_dir / "steps" / record.dir
    fio = read_fio_json(step_dir / FIO_JSON)
    ids = {
        "run_id": manifest.run_id,
        "label": manifest.label,
        "host": manifest.host.hostname if manifest.host else None,
        "step_index": record.index,
        "step": record.name,
        "status": record.status,
    }
    id_cols = [pl.lit(v, dtype=pl.Int64 if k == "step_index" else pl.String).alias(k) for k, v in ids.items()]
    summary = fio.jobs.with_columns(id_cols)
    ts = _timeseries(step_dir, fio).with_columns(id_cols)
    hist = fio.bins.filter(pl.col("stat") == "clat").drop("stat").with_columns(id_cols)
    pcts = fio.percentiles.with_columns(id_cols)
    return summary, ts, hist, pcts


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
    summary, ts, hist, pcts = (pl.concat(list(col), how="diagonal_relaxed") for col in zip(*parts))
    return Results(
        summary=_front(summary, SUMMARY_FIRST),
        timeseries=_front(ts, ID_COLUMNS),
        latency_hist=_front(hist, ID_COLUMNS),
        percentiles=_front(pcts, ID_COLUMNS),
        path=path,
        manifest=manifest,
    )


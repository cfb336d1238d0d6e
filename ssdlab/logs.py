"""Pair fio's log files with the job that wrote them, and turn them into time series.

Pairing is by content: a job's ``write_bw_log``/``write_iops_log``/``write_lat_log``/
``write_hist_log`` options give the file prefix, and fio numbers the files by thread
(``<prefix>_<type>.<thread>.log``, with ``.<host>`` appended in client/server runs). A job
entry covers ``numjobs`` threads with ``group_reporting`` and one thread per clone without.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .io.fio_json import FioJson

#: log type -> the fio option naming its prefix
LOG_OPTIONS = {
    "iops": "write_iops_log",
    "bw": "write_bw_log",
    "clat": "write_lat_log",
    "lat": "write_lat_log",
    "slat": "write_lat_log",
    "clat_hist": "write_hist_log",
}
TIMESERIES_KINDS = ("iops", "bw", "clat")
TIMESERIES_SCHEMA = {
    "job_index": pl.Int64,
    "direction": pl.String,
    "t_s": pl.Float64,
    "iops": pl.Float64,
    "bw_bytes_s": pl.Float64,
    "clat_mean_ns": pl.Float64,
}
EPOCH_MS_MIN = 10**12
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class JobLog:
    """One log file and the job entry (``job_index`` in the JSON) and thread it belongs to."""

    path: Path
    kind: str
    job_index: int
    thread: int


def job_options(fio: FioJson, job_index: int) -> dict[str, str]:
    """Global options overlaid with one job's options."""
    glob = fio.meta["global_options"]
    if isinstance(glob, list):
        glob = {k: v for part in glob for k, v in part.items()}
    return {**glob, **fio.meta["job_options"][job_index]}


def _threads(fio: FioJson) -> list[tuple[int, range, str | None]]:
    """(job_index, fio thread numbers, host) of every job entry, numbered per host."""
    hostnames = fio.meta.get("job_hosts") or [None] * len(fio.meta["job_options"])
    next_thread: dict[str | None, int] = {}
    out = []
    for index, host in enumerate(hostnames):
        opts = job_options(fio, index)
        grouped = opts.get("group_reporting", "0").lower() in _TRUE
        count = int(opts.get("numjobs", "1") or 1) if grouped else 1
        start = next_thread.get(host, 1)
        next_thread[host] = start + count
        out.append((index, range(start, start + count), host))
    return out


def find_job_logs(
    fio: FioJson, json_dir: Path, listing: Iterable[Path] | None = None
) -> list[JobLog]:
    """The log files of every job in ``fio``, looked up beside its JSON (or at the prefix's
    own path). ``listing`` lets a caller that already walked the tree skip directory reads."""
    by_dir: dict[Path, set[str]] = {}
    if listing is not None:
        for p in listing:
            by_dir.setdefault(p.parent, set()).add(p.name)

    def names_in(directory: Path) -> set[str]:
        if directory not in by_dir:
            by_dir[directory] = (
                {p.name for p in directory.iterdir()} if directory.is_dir() else set()
            )
        return by_dir[directory]

    found = []
    for index, threads, host in _threads(fio):
        opts = job_options(fio, index)
        for kind, option in LOG_OPTIONS.items():
            prefix = opts.get(option)
            if prefix is None:
                continue
            if prefix in ("", "1"):  # option given without a name: fio uses the job name
                prefix = fio.meta["job_names"][index] or ""
            prefix_path = Path(prefix)
            directory = json_dir / prefix_path.parent
            if not names_in(directory) and prefix_path.is_absolute():
                directory = json_dir  # written on another machine: look beside the JSON
            suffix = rf"\.{re.escape(host)}" if host else ""
            pattern = re.compile(rf"{re.escape(prefix_path.name)}_{kind}(?:\.(\d+))?\.log{suffix}")
            for name in names_in(directory):
                m = pattern.fullmatch(name)
                thread = int(m.group(1)) if m and m.group(1) else 1
                if m and thread in threads:
                    found.append(JobLog(directory / name, kind, index, thread))
    return sorted(found, key=lambda log: (log.job_index, log.kind, log.thread))


def timeseries(logs: pl.DataFrame, fio: FioJson) -> pl.DataFrame:
    """Per job entry, direction and log window: IOPS and bandwidth summed over the entry's
    threads, completion latency IOPS-weighted.

    ``logs`` holds rows of the iops/bw/clat logs with ``job_index``, ``thread``, ``kind``,
    ``time_ms``, ``value``, ``direction``, ``bs_bytes``. Windowed logs (``log_avg_msec``) keep
    their windows; a window that not every thread logged (fio skips a job's last partial
    window) is dropped rather than undercounted, and a repeated timestamp (fio's final flush)
    keeps the full window. Per-I/O logs are counted into whole 1-second windows. ``t_s`` is the end
    of the window in seconds since the job began measuring (``job_start`` when fio gives it,
    else the first window's start).
    """
    if logs.is_empty():
        return pl.DataFrame(schema=TIMESERIES_SCHEMA)
    parts = []
    for (job_index,), job_logs in logs.group_by("job_index", maintain_order=True):
        opts = job_options(fio, job_index)
        window = int(opts.get("log_avg_msec") or 0)
        start = fio.meta["job_start_ms"][job_index]
        first = job_logs["time_ms"].min()
        if start:
            t0 = start
        elif first >= EPOCH_MS_MIN:
            t0 = first - (window or 1000)
        else:
            t0 = 0
        if window > 0:
            per_thread = _windowed(job_logs, t0, window)
        else:
            runtime = fio.jobs.filter(pl.col("job_index") == job_index)["runtime_s"].max()
            per_thread = _per_io(job_logs, t0, runtime or 0.0)
        parts.append(_sum_threads(per_thread).with_columns(job_index=pl.lit(job_index)))
    return pl.concat(parts).select(list(TIMESERIES_SCHEMA)).cast(TIMESERIES_SCHEMA)  # type: ignore[arg-type]


def _windowed(logs: pl.DataFrame, t0: int, window: int) -> pl.DataFrame:
    return (
        logs.with_columns(t_s=((pl.col("time_ms") - t0) / window).round(0) * window / 1000)
        .group_by("thread", "direction", "t_s", "kind", maintain_order=True)
        .agg(pl.col("value").first().cast(pl.Float64))
        .pivot("kind", index=["thread", "direction", "t_s"], values="value")
        .with_columns(pl.col("^bw$") * 1024)  # KiB/s -> bytes/s
    )


def _per_io(logs: pl.DataFrame, t0: int, runtime_s: float) -> pl.DataFrame:
    """Per-I/O rows counted into 1 s windows from the clat log (or the iops log); a last
    window cut short by the end of the job (``runtime_s``) is dropped."""
    source = "clat" if (logs["kind"] == "clat").any() else "iops"
    rows = logs.filter(pl.col("kind") == source)
    return (
        rows.with_columns(t_s=((pl.col("time_ms") - t0) // 1000 + 1).cast(pl.Float64))
        .group_by("thread", "direction", "t_s")
        .agg(
            iops=pl.len().cast(pl.Float64),
            bw=pl.col("bs_bytes").sum().cast(pl.Float64),
            clat=pl.col("value").mean() if source == "clat" else pl.lit(None, pl.Float64),
        )
        .filter(pl.col("t_s") <= runtime_s + 0.05)
    )


def _sum_threads(per_thread: pl.DataFrame) -> pl.DataFrame:
    for kind in TIMESERIES_KINDS:
        if kind not in per_thread.columns:
            per_thread = per_thread.with_columns(pl.lit(None, dtype=pl.Float64).alias(kind))
    threads = per_thread["thread"].n_unique()
    return (
        per_thread.group_by("direction", "t_s")
        .agg(
            iops=pl.col("iops").sum(),
            bw_bytes_s=pl.col("bw").sum(),
            clat_mean_ns=(pl.col("clat") * pl.col("iops")).sum() / pl.col("iops").sum(),
            threads=pl.col("iops").count(),
        )
        .filter(pl.col("threads") == threads)
        .drop("threads")
        .sort("direction", "t_s")
    )

"""Pair fio's log files with the job that wrote them, and turn them into time series.

Pairing is by content: a job's ``write_bw_log``/``write_iops_log``/``write_lat_log``/
``write_hist_log`` options give the file prefix, and fio numbers the files by thread
(``<prefix>_<type>.<thread>.log``, with ``.<host>`` appended in client/server runs). A job
entry covers ``numjobs`` threads with ``group_reporting`` and one thread per clone without.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .io.fio_log import LogLayout, read_fio_logs

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
    layout: LogLayout = (None, False)


def _global(meta: dict[str, Any]) -> dict[str, str]:
    glob = meta["global_options"]
    if isinstance(glob, list):  # fio >= 3.39 client mode: one object per host
        glob = {k: v for part in glob for k, v in part.items()}
    return glob


def job_options(meta: dict[str, Any], job_index: int) -> dict[str, str]:
    """Global options overlaid with one job's options (``meta`` of a parsed fio result)."""
    return {**_global(meta), **meta["job_options"][job_index]}


def _threads(meta: dict[str, Any]) -> list[tuple[int, range, str | None]]:
    """(job_index, fio thread numbers, host) of every job entry, numbered per host."""
    hostnames = meta.get("job_hosts") or [None] * len(meta["job_options"])
    next_thread: dict[str | None, int] = {}
    out = []
    for index, host in enumerate(hostnames):
        opts = job_options(meta, index)
        grouped = opts.get("group_reporting", "0").lower() in _TRUE
        count = int(opts.get("numjobs", "1") or 1) if grouped else 1
        start = next_thread.get(host, 1)
        next_thread[host] = start + count
        out.append((index, range(start, start + count), host))
    return out


_LOG_NAME = re.compile(
    r"(?P<prefix>.+)_(?P<kind>clat_hist|clat|slat|lat|bw|iops)(?:\.(?P<thread>\d+))?\.log"
    r"(?:\.(?P<host>.+))?"
)


class LogIndex:
    """fio log files by directory, prefix, type and host, from names parsed once per
    directory (so pairing thousands of results with tens of thousands of logs stays linear).
    """

    def __init__(self, files: Iterable[Path] = ()):
        self._dirs: dict[Path, dict[tuple[str, str, str | None], list[tuple[int, str]]]] = {}
        by_dir: dict[Path, list[str]] = {}
        for path in files:
            by_dir.setdefault(path.parent, []).append(path.name)
        for directory, names in by_dir.items():
            self._dirs[directory] = self._parse(names)

    @staticmethod
    def _parse(names: Iterable[str]) -> dict[tuple[str, str, str | None], list[tuple[int, str]]]:
        table: dict[tuple[str, str, str | None], list[tuple[int, str]]] = {}
        for name in names:
            m = _LOG_NAME.fullmatch(name)
            if m:
                key = (m["prefix"], m["kind"], m["host"])
                table.setdefault(key, []).append((int(m["thread"] or 1), name))
        return table

    def lookup(
        self, directory: Path, prefix: str, kind: str, host: str | None
    ) -> list[tuple[int, str]]:
        """(thread, file name) of the logs ``<prefix>_<kind>[.<thread>].log[.<host>]``."""
        if directory not in self._dirs:
            names = [p.name for p in directory.iterdir()] if directory.is_dir() else []
            self._dirs[directory] = self._parse(names)
        return self._dirs[directory].get((prefix, kind, host), [])


def find_job_logs(
    meta: dict[str, Any], json_dir: Path, index: LogIndex | None = None
) -> list[JobLog]:
    """The log files of every job of a parsed fio result (its ``meta``), looked up beside its
    JSON (or at the prefix's own path). Pass one ``index`` when pairing many results."""
    index = index or LogIndex()
    found = []
    for job_index, threads, host in _threads(meta):
        opts = job_options(meta, job_index)
        for kind, option in LOG_OPTIONS.items():
            prefix = opts.get(option)
            if prefix is None:
                continue
            if prefix in ("", "1"):  # option given without a name: fio uses the job name
                prefix = meta["job_names"][job_index] or ""
            prefix_path = Path(prefix)
            directory = json_dir / prefix_path.parent
            logs = index.lookup(directory, prefix_path.name, kind, host)
            if not logs and prefix_path.is_absolute():  # written on another machine
                directory = json_dir
                logs = index.lookup(directory, prefix_path.name, kind, host)
            offset = opts.get("log_offset")
            layout = (
                None if offset is None else offset.lower() in _TRUE,
                opts.get("log_window_value", "").lower() == "both",
            )
            found += [
                JobLog(directory / name, kind, job_index, thread, layout)
                for thread, name in logs
                if thread in threads
            ]
    return sorted(found, key=lambda log: (log.job_index, log.kind, log.thread))


def load_job_logs(
    found: Sequence[JobLog],
    ids: Sequence[dict[str, Any]] | None = None,
    data: dict[Path, bytes] | None = None,
) -> tuple[pl.DataFrame, dict[Path, str]]:
    """The iops/bw/clat logs among ``found`` as one frame tagged with ``job_index``,
    ``thread``, ``kind`` (and ``ids[i]`` for ``found[i]``), parsed in bulk; plus the files
    that could not be read, with the reason. ``data`` holds bytes already read."""
    picked = [i for i, log in enumerate(found) if log.kind in TIMESERIES_KINDS]
    paths = [found[i].path for i in picked]
    rows, bad = read_fio_logs(
        paths,
        [data[p] for p in paths] if data is not None else None,
        [found[i].layout for i in picked],
    )
    if not rows.height:
        return pl.DataFrame(), {paths[n]: reason for n, reason in bad.items()}
    tags = pl.DataFrame(
        [
            {"job_index": found[i].job_index, "thread": found[i].thread}
            | {"kind": found[i].kind}
            | (ids[i] if ids else {})
            for i in picked
        ],
        schema_overrides={"job_index": pl.Int64, "thread": pl.Int64},
    )
    # tag rows by position (row n of ``tags`` is file n): a gather, far cheaper than a join
    tagged = rows.with_columns(tags[c].gather(rows["file"]) for c in tags.columns).drop("file")
    return tagged, {paths[n]: reason for n, reason in bad.items()}


def job_runtimes(jobs: pl.DataFrame, keys: Sequence[str] = ()) -> dict[tuple, float]:
    """Measured runtime of every job entry: (*keys, job_index) -> seconds."""
    if jobs.is_empty():
        return {}
    by = [*keys, "job_index"]
    table = jobs.group_by(by).agg(pl.col("runtime_s").max())
    return {tuple(row[:-1]): row[-1] for row in table.iter_rows()}


def log_params(meta: dict[str, Any], runtimes: dict[tuple, float], key: tuple = ()) -> list[dict]:
    """Per job entry of one fio result: what :func:`timeseries` needs to place its log rows
    in time (``window_ms`` = log_avg_msec, ``start_ms`` = job_start, ``runtime_s``);
    ``runtimes`` from :func:`job_runtimes`, ``key`` the result's keys in it."""
    glob = _global(meta)
    return [
        {
            "job_index": index,
            "window_ms": int({**glob, **opts}.get("log_avg_msec") or 0),
            "start_ms": start,
            "runtime_s": float(runtimes.get((*key, index)) or 0.0),
        }
        for index, (opts, start) in enumerate(
            zip(meta["job_options"], meta["job_start_ms"], strict=True)
        )
    ]


def timeseries(logs: pl.DataFrame, params: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """Per job entry, direction and log window: IOPS and bandwidth summed over the entry's
    threads, completion latency IOPS-weighted; for any number of results at once.

    ``logs`` holds rows of iops/bw/clat logs tagged with ``keys`` (e.g. ``step_index``),
    ``job_index``, ``thread`` and ``kind`` (:func:`load_job_logs`); ``params`` has per
    ``keys`` + ``job_index`` the fields of :func:`log_params`. Windowed logs (``log_avg_msec``)
    keep their windows; a window that not every thread logged (fio skips a job's last partial
    window) is dropped rather than undercounted, and a repeated timestamp (fio's final flush)
    keeps the full window. Per-I/O logs are counted into whole 1-second windows. ``t_s`` is
    the end of the window in seconds since the job began measuring (``job_start`` when fio
    gives it, else the first window's start).
    """
    by = [*keys, "job_index"]
    schema = {k: logs.schema.get(k, pl.Int64) for k in keys} | TIMESERIES_SCHEMA
    if logs.is_empty():
        return pl.DataFrame(schema=schema)
    first = logs.group_by(by).agg(first_ms=pl.col("time_ms").min())
    window = pl.col("window_ms")
    placed = params.join(first, on=by).with_columns(
        t0=pl.when(pl.col("start_ms").is_not_null())
        .then(pl.col("start_ms"))
        .when(pl.col("first_ms") >= EPOCH_MS_MIN)
        .then(pl.col("first_ms") - pl.when(window > 0).then(window).otherwise(1000))
        .otherwise(0)
    )
    logs = logs.join(placed.select(*by, "t0", "window_ms", "runtime_s"), on=by).with_columns(
        pl.col("kind").cast(_KINDS), pl.col("direction").cast(_DIRECTIONS)
    )
    per_thread = pl.concat(
        [_windowed(logs.filter(window > 0), by), _per_io(logs.filter(window <= 0), by)],
        how="diagonal_relaxed",
    )
    threads = per_thread.group_by(by).agg(n_threads=pl.col("thread").n_unique())
    return (
        per_thread.group_by(*by, "direction", "t_s")
        .agg(
            iops=pl.col("iops").sum(),
            bw_bytes_s=pl.col("bw").sum(),
            clat_mean_ns=(pl.col("clat") * pl.col("iops")).sum() / pl.col("iops").sum(),
            logged=pl.col("iops").count(),
        )
        .join(threads, on=by)
        .filter(pl.col("logged") == pl.col("n_threads"))
        .sort(*by, "direction", "t_s")
        .select(list(schema))
        .cast(schema)  # type: ignore[arg-type]
    )


_KINDS = pl.Enum(list(LOG_OPTIONS))
_DIRECTIONS = pl.Enum(["read", "write", "trim"])
_THREAD_COLUMNS = {"thread": pl.Int64, "direction": _DIRECTIONS, "t_s": pl.Float64}
_VALUES = {"iops": pl.Float64, "bw": pl.Float64, "clat": pl.Float64}


def _windowed(logs: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """One row per thread, direction and window with that window's iops, bw, clat (the first
    row of a repeated timestamp: fio's final flush of a partial window comes second)."""
    if logs.is_empty():
        return pl.DataFrame(schema={k: logs.schema[k] for k in by} | _THREAD_COLUMNS | _VALUES)
    window = pl.col("window_ms")
    position = ((pl.col("time_ms") - pl.col("t0")) / window).round(0).cast(pl.Int64)

    def first(kind: str) -> pl.Expr:
        return pl.col("value").filter(pl.col("kind") == kind).first().cast(pl.Float64)

    return (
        logs.with_columns(w=position)
        .group_by(*by, "thread", "direction", "w", maintain_order=True)
        .agg(
            iops=first("iops"),
            bw=first("bw") * 1024,  # KiB/s -> bytes/s
            clat=first("clat"),
            window_ms=pl.col("window_ms").first(),
        )
        .with_columns(t_s=pl.col("w") * pl.col("window_ms") / 1000)
        .drop("w", "window_ms")
    )


def _per_io(logs: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Per-I/O rows counted into 1 s windows from the clat log (or the iops log where a job
    has no clat log); a last window cut short by the end of the job is dropped."""
    if logs.is_empty():
        return pl.DataFrame(schema={k: logs.schema[k] for k in by} | _THREAD_COLUMNS | _VALUES)
    has_clat = (pl.col("kind") == "clat").any().over(by)
    rows = logs.filter(
        pl.when(has_clat).then(pl.col("kind") == "clat").otherwise(pl.col("kind") == "iops")
    )
    return (
        rows.with_columns(t_s=((pl.col("time_ms") - pl.col("t0")) // 1000 + 1).cast(pl.Float64))
        .group_by(*by, "thread", "direction", "t_s")
        .agg(
            iops=pl.len().cast(pl.Float64),
            bw=pl.col("bs_bytes").sum().cast(pl.Float64),
            clat=pl.when((pl.col("kind") == "clat").all()).then(pl.col("value").mean()),
            runtime_s=pl.col("runtime_s").first(),
        )
        .filter(pl.col("t_s") <= pl.col("runtime_s") + 0.05)
        .drop("runtime_s")
    )

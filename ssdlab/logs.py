"""Pair fio's log files with the job that wrote them, and turn them into time series.

Pairing is by content: a job's ``write_bw_log``/``write_iops_log``/``write_lat_log``/
``write_hist_log`` options give the file prefix, and fio numbers the files by thread
(``<prefix>_<type>.<thread>.log``, with ``.<host>`` appended in client/server runs). A job
entry covers ``numjobs`` threads with ``group_reporting`` and one thread per clone without.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from .io.fio_log import DIRECTION, LogLayout, read_fio_logs

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


class JobLog(NamedTuple):
    """One log file and the job entry (``job_index`` in the JSON) and thread it belongs to.
    A light tuple with a string ``path``: an import pairs tens of thousands of them."""

    path: str
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
    Directories are normalised paths (:func:`os.path.normpath`).
    """

    def __init__(self, files: Iterable[str] = ()):
        self._dirs: dict[str, dict[tuple[str, str, str | None], list[tuple[int, str]]]] = {}
        by_dir: dict[str, list[str]] = {}
        for path in files:
            directory, _, name = path.rpartition(os.sep)
            by_dir.setdefault(directory or os.sep, []).append(name)
        for directory, names in by_dir.items():
            self._dirs[os.path.normpath(directory)] = self._parse(names)

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
        self, directory: str, prefix: str, kind: str, host: str | None
    ) -> list[tuple[int, str]]:
        """(thread, file name) of the logs ``<prefix>_<kind>[.<thread>].log[.<host>]``."""
        if directory not in self._dirs:
            names = os.listdir(directory) if os.path.isdir(directory) else []
            self._dirs[directory] = self._parse(names)
        return self._dirs[directory].get((prefix, kind, host), [])


def find_job_logs(
    meta: dict[str, Any], json_dir: str | Path, index: LogIndex | None = None
) -> list[JobLog]:
    """The log files of every job of a parsed fio result (its ``meta``), looked up beside its
    JSON (or at the prefix's own path). Pass one ``index`` when pairing many results."""
    index = index or LogIndex()
    json_dir = os.path.normpath(json_dir)
    found = []
    for job_index, threads, host in _threads(meta):
        opts = job_options(meta, job_index)
        for kind, option in LOG_OPTIONS.items():
            prefix = opts.get(option)
            if prefix is None:
                continue
            if prefix in ("", "1"):  # option given without a name: fio uses the job name
                prefix = meta["job_names"][job_index] or ""
            head, name = os.path.split(prefix)
            directory = os.path.normpath(os.path.join(json_dir, head))
            logs = index.lookup(directory, name, kind, host)
            if not logs and os.path.isabs(prefix):  # written on another machine
                directory = json_dir
                logs = index.lookup(directory, name, kind, host)
            base = os.path.join(directory, "")
            offset = opts.get("log_offset")
            layout = (
                None if offset is None else offset.lower() in _TRUE,
                opts.get("log_window_value", "").lower() == "both",
            )
            found += [
                JobLog(f"{base}{name}", kind, job_index, thread, layout)
                for thread, name in logs
                if thread in threads
            ]
    return sorted(found, key=lambda log: (log.job_index, log.kind, log.thread))


@dataclass
class LogRows:
    """Rows of many log files: ``rows`` has :func:`~ssdlab.io.fio_log.read_fio_logs`'
    columns, its ``file`` being the row of ``files``, which tags each file with
    ``job_index``, ``thread``, ``kind`` and the caller's ids (e.g. ``step_index``)."""

    rows: pl.DataFrame
    files: pl.DataFrame


def load_job_logs(
    found: Sequence[JobLog],
    ids: Sequence[dict[str, Any]] | None = None,
    data: dict[str, bytes] | None = None,
) -> tuple[LogRows, dict[str, str]]:
    """The iops/bw/clat logs among ``found``, parsed in bulk and tagged per file (``ids[i]``
    for ``found[i]``); plus the files that could not be read, with the reason. ``data``
    holds bytes already read, by path (a file missing from it is read here)."""
    keep = [i for i, log in enumerate(found) if log.kind in TIMESERIES_KINDS]
    picked = [found[i] for i in keep]
    paths = [log.path for log in picked]
    rows, bad = read_fio_logs(
        paths,
        [data.get(p) for p in paths] if data is not None else None,
        [log.layout for log in picked],
    )
    columns = {
        "job_index": pl.Series([log.job_index for log in picked], dtype=pl.Int64),
        "thread": pl.Series([log.thread for log in picked], dtype=pl.Int64),
        "kind": pl.Series([log.kind for log in picked], dtype=_KINDS),
    }
    if ids:
        columns |= {key: pl.Series([ids[i][key] for i in keep]) for key in ids[0]}
    return LogRows(rows, pl.DataFrame(columns)), {paths[n]: reason for n, reason in bad.items()}


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


def timeseries(logs: LogRows, params: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """Per job entry, direction and log window: IOPS and bandwidth summed over the entry's
    threads, completion latency IOPS-weighted; for any number of results at once.

    ``logs`` holds rows of iops/bw/clat logs tagged per file with ``keys`` (e.g.
    ``step_index``), ``job_index``, ``thread`` and ``kind`` (:func:`load_job_logs`);
    ``params`` has per ``keys`` + ``job_index`` the fields of :func:`log_params`. Windowed
    logs (``log_avg_msec``) keep their windows. The throughput logs (iops, else bw) say
    which windows exist: a window that not every thread logged (fio skips a job's last
    partial window) is dropped rather than undercounted, as is a sum that misses a thread;
    a repeated timestamp (fio's final flush) keeps the full window. Per-I/O logs are
    counted into whole 1-second windows. ``t_s`` is the end of the window in seconds since
    the job began measuring (``job_start`` when fio gives it, else the first window's
    start). A measure whose log the job did not write is null.
    """
    by = [*keys, "job_index"]
    schema = {k: logs.files.schema.get(k, pl.Int64) for k in keys} | TIMESERIES_SCHEMA
    rows = logs.rows
    if rows.is_empty() or params.is_empty():
        return pl.DataFrame(schema=schema)
    # a file's rows are contiguous and in time order: its first row is its start
    heads = rows.filter(rows["file"].ne_missing(rows["file"].shift(1)))
    files = (
        logs.files.with_row_index("file")
        .with_columns(pl.col("file").cast(pl.Int64))
        .join(heads.select("file", first_ms="time_ms"), on="file", how="left")
    )
    window = pl.col("window_ms")
    series = (
        params.join(files.group_by(by).agg(pl.col("first_ms").min()), on=by)
        .with_columns(
            t0=pl.when(pl.col("start_ms").is_not_null())
            .then(pl.col("start_ms"))
            .when(pl.col("first_ms") >= EPOCH_MS_MIN)
            .then(pl.col("first_ms") - pl.when(window > 0).then(window).otherwise(1000))
            .otherwise(0)
        )
        .select(*by, "t0", "window_ms", "runtime_s")
        .with_row_index("series")
    )
    n_threads = max(files["thread"].max() or 0, 0) + 1  # type: ignore[operator]
    files = (
        files.join(series, on=by, how="left")
        .with_columns(unit=pl.col("series").cast(pl.Int64) * n_threads + pl.col("thread"))
        .sort("file")
    )
    per_io = bool(files["window_ms"].le(0).any())
    tags = ["series", "unit", "kind", "t0", "window_ms"] + (["runtime_s"] if per_io else [])
    needed = ["file", "time_ms", "value", "direction"] + (["bs_bytes"] if per_io else [])
    tagged = rows.select(needed).with_columns(files[c].gather(rows["file"]) for c in tags)
    if files["series"].null_count():  # logs of a job entry without parameters
        tagged = tagged.filter(pl.col("series").is_not_null())
    parts = [_windowed(tagged.filter(window > 0) if per_io else tagged)]
    if per_io:
        parts.append(_per_io(tagged.filter(window <= 0)))
    per_thread = pl.concat(parts).with_columns(
        clat_num=pl.col("clat") * pl.col("iops"),
        clat_den=pl.when(pl.col("clat").is_not_null()).then(pl.col("iops")),
    )
    summed = per_thread.group_by("series", "direction", "t_s").agg(
        pl.col("iops", "bw", "clat_num", "clat_den").sum(),
        pl.col("iops", "bw", "clat").count().name.prefix("n_"),
        clat_plain=pl.col("clat").mean(),
    )
    logging = (
        files.filter(pl.col("first_ms").is_not_null())
        .group_by("series")
        .agg(
            threads=pl.col("thread").n_unique(),
            has_iops=(pl.col("kind") == "iops").any(),
            has_bw=(pl.col("kind") == "bw").any(),
        )
    )
    logged = pl.when("has_iops").then("n_iops").when("has_bw").then("n_bw").otherwise("n_clat")
    every = pl.col("threads")
    return (
        summed.join(logging, on="series")
        .filter(logged == every)
        .join(series.select("series", *by), on="series")
        .with_columns(
            iops=pl.when(pl.col("n_iops") == every).then("iops"),
            bw_bytes_s=pl.when(pl.col("n_bw") == every).then("bw"),
            clat_mean_ns=pl.when(pl.col("clat_den") > 0)
            .then(pl.col("clat_num") / pl.col("clat_den"))
            .otherwise("clat_plain"),
        )
        .sort(*by, "direction", "t_s")
        .select(list(schema))
        .cast(schema)  # type: ignore[arg-type]
    )


_KINDS = pl.Enum(list(LOG_OPTIONS))
#: one row per thread, direction and window: the frame both log shapes reduce to
_PER_THREAD = {
    "series": pl.UInt32,
    "unit": pl.Int64,
    "direction": DIRECTION,
    "t_s": pl.Float64,
    "iops": pl.Float64,
    "bw": pl.Float64,  # bytes/s
    "clat": pl.Float64,  # ns
}


def _windowed(rows: pl.DataFrame) -> pl.DataFrame:
    """Windowed log rows as one row per thread, direction and window (its index ``w`` from
    ``t0``). A repeated (file, direction, window) keeps its first row: fio's final flush of
    a partial window comes right after the full one. A thread's iops, bw and clat logs list
    the same windows, so they pair by position; otherwise by (thread, direction, window)."""
    if rows.is_empty():
        return pl.DataFrame(schema=_PER_THREAD)
    w = ((pl.col("time_ms") - pl.col("t0")) / pl.col("window_ms")).round(0).cast(pl.Int64)
    rows = rows.select("file", "series", "unit", "kind", "direction", "value", "window_ms", w=w)
    repeated = pl.any_horizontal(
        pl.all_horizontal(
            pl.col(c).eq_missing(pl.col(c).shift(k)) for c in ("file", "direction", "w")
        )
        for k in (1, 2, 3)  # up to one row per direction (read, write, trim) per window
    )
    rows = rows.filter(~repeated)
    keys = ["series", "unit", "direction", "w", "window_ms"]
    logged = {k: rows.filter(pl.col("kind") == k) for k in TIMESERIES_KINDS}
    logged = {k: part for k, part in logged.items() if part.height}
    base = next(iter(logged.values()))
    if all(
        part.height == base.height and all(part[c].equals(base[c]) for c in keys)
        for part in logged.values()
    ):
        per_thread = base.select(keys).with_columns(
            part["value"].alias(k) for k, part in logged.items()
        )
    else:
        parts = [part.select(*keys, pl.col("value").alias(k)) for k, part in logged.items()]
        per_thread = parts[0]
        for part in parts[1:]:
            per_thread = per_thread.join(part, on=keys, how="full", coalesce=True)
    return per_thread.select(
        "series",
        "unit",
        "direction",
        t_s=pl.col("w") * pl.col("window_ms") / 1000,
        iops=pl.col("iops") if "iops" in logged else pl.lit(None),
        bw=pl.col("bw") * 1024 if "bw" in logged else pl.lit(None),  # KiB/s -> bytes/s
        clat=pl.col("clat") if "clat" in logged else pl.lit(None),
    ).cast(_PER_THREAD)  # type: ignore[arg-type]


def _per_io(rows: pl.DataFrame) -> pl.DataFrame:
    """Per-I/O rows counted into 1 s windows per thread from the clat log (or the iops log
    where a job has no clat log); a last window cut short by the end of the job is dropped."""
    if rows.is_empty():
        return pl.DataFrame(schema=_PER_THREAD)
    has_clat = (pl.col("kind") == "clat").any().over("series")
    rows = rows.filter(
        pl.when(has_clat).then(pl.col("kind") == "clat").otherwise(pl.col("kind") == "iops")
    )
    return (
        rows.with_columns(t_s=((pl.col("time_ms") - pl.col("t0")) // 1000 + 1).cast(pl.Float64))
        .group_by("series", "unit", "direction", "t_s")
        .agg(
            iops=pl.len(),
            bw=pl.col("bs_bytes").sum(),
            clat=pl.when((pl.col("kind") == "clat").all()).then(pl.col("value").mean()),
            runtime_s=pl.col("runtime_s").first(),
        )
        .filter(pl.col("t_s") <= pl.col("runtime_s") + 0.05)
        .select(list(_PER_THREAD))
        .cast(_PER_THREAD)  # type: ignore[arg-type]
    )

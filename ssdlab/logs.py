"""Pair fio's log files with the job that wrote them, and turn them into time series.

Pairing is by content: a job's ``write_bw_log``/``write_iops_log``/``write_lat_log``/
``write_hist_log`` options give the file prefix, and fio numbers the files by thread
(``<prefix>_<type>.<thread>.log``, with ``.<host>`` appended in client/server runs). A job
entry covers ``numjobs`` threads with ``group_reporting`` and one thread per clone without.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from .errors import InputError
from .io.fio_json import AGGREGATE_JOBNAME
from .io.fio_log import DIRECTION, EPOCH_MS_MIN, LogBatch, LogLayout, per_io_sums
from .io.text import read_bytes

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
#: the log columns :func:`timeseries` uses (``bs_bytes`` only of per-I/O logs)
ROW_COLUMNS = ("time_ms", "value", "direction", "bs_bytes")
TIMESERIES_SCHEMA = {
    "job_index": pl.Int64,
    "direction": pl.String,
    "t_s": pl.Float64,
    "iops": pl.Float64,
    "bw_bytes_s": pl.Float64,
    "clat_mean_ns": pl.Float64,
}
_TRUE = {"1", "true", "yes", "on"}


class JobLog(NamedTuple):
    """One log file and the job entry (``job_index`` in the JSON) and thread it belongs to.
    A light tuple with a string ``path``: an import pairs tens of thousands of them."""

    path: str
    kind: str
    job_index: int
    thread: int
    layout: LogLayout = (None, False)
    window_ms: int = 0  #: the job's log_avg_msec (0: a row per I/O)


def _global(meta: dict[str, Any]) -> dict[str, str]:
    glob = meta["global_options"]
    if isinstance(glob, list):  # fio >= 3.39 client mode: one object per host
        glob = {k: v for part in glob for k, v in part.items()}
    return glob


def job_options(meta: dict[str, Any], job_index: int) -> dict[str, str]:
    """Global options overlaid with one job's options (``meta`` of a parsed fio result)."""
    return {**_global(meta), **meta["job_options"][job_index]}


def _threads(meta: dict[str, Any]) -> list[tuple[int, range, str | None]]:
    """(job_index, fio thread numbers, host) of every job entry, numbered per host; not the
    ``All clients`` entry of a client/server result (a sum, no thread of its own)."""
    hostnames = meta.get("job_hosts") or [None] * len(meta["job_options"])
    names = meta.get("job_names") or [None] * len(hostnames)
    next_thread: dict[str | None, int] = {}
    out = []
    for index, host in enumerate(hostnames):
        if names[index] == AGGREGATE_JOBNAME:
            continue
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
    """fio log files by directory, prefix, type and host, from names parsed once (so
    pairing thousands of results with tens of thousands of logs stays linear).
    Directories are normalised paths (:func:`os.path.normpath`).
    """

    def __init__(self, files: Iterable[str] = ()):
        self._dirs: dict[str, dict[tuple[str, str, str | None], list[tuple[int, str]]]] = {}
        self._given: dict[str, dict] = {}  # a directory as spelt in a path -> its table
        for path in files:
            self.add(path)

    def add(self, path: str) -> str | None:
        """Index one file; returns the log type its name gives (None: not a log name)."""
        directory, _, name = path.rpartition(os.sep)
        table = self._given.get(directory)
        if table is None:
            normalised = os.path.normpath(directory or os.sep)
            table = self._given[directory] = self._dirs.setdefault(normalised, {})
        m = _LOG_NAME.fullmatch(name)
        if m is None:
            return None
        prefix, kind, thread, host = m.groups()
        table.setdefault((prefix, kind, host), []).append((int(thread or 1), name))
        return kind

    def lookup(
        self, directory: str, prefix: str, kind: str, host: str | None
    ) -> list[tuple[int, str]]:
        """(thread, file name) of the logs ``<prefix>_<kind>[.<thread>].log[.<host>]``."""
        if directory not in self._dirs:
            self._dirs[directory] = {}
            for name in os.listdir(directory) if os.path.isdir(directory) else []:
                self.add(os.path.join(directory, name))
        return self._dirs[directory].get((prefix, kind, host), [])


class _JobLogSet(NamedTuple):
    """The logs of one kind a job entry asks for: where fio writes them (``directory``,
    file name ``prefix``), its thread numbers and host, and the (thread, file name) found."""

    job_index: int
    kind: str
    threads: range
    host: str | None
    directory: str
    prefix: str
    found: list[tuple[int, str]]
    options: dict[str, str]


def _job_log_sets(
    meta: dict[str, Any], json_dir: str | Path, index: LogIndex
) -> Iterator[_JobLogSet]:
    """Every (job entry, log kind) of a parsed fio result whose options ask for a log."""
    json_dir = os.path.normpath(json_dir)
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
            found = [(thread, file) for thread, file in logs if thread in threads]
            yield _JobLogSet(job_index, kind, threads, host, directory, name, found, opts)


#: the log kinds ssdlab reads, whose every thread's log must be there (a sum over the
#: threads found would understate the job)
READ_KINDS = (*TIMESERIES_KINDS, "clat_hist")
#: why a thread's log that fio writes is not used
MISSING_LOG = "missing (fio writes this log for every thread of the job)"


def job_logs(
    meta: dict[str, Any], json_dir: str | Path, index: LogIndex | None = None
) -> tuple[list[JobLog], list[JobLog]]:
    """The log files of every job of a parsed fio result (its ``meta``), looked up beside its
    JSON (or at the prefix's own path; pass one ``index`` when pairing many results), and
    the logs of :data:`READ_KINDS` fio writes for its job entries (one per thread:
    ``<prefix>_<kind>.<thread>.log[.<host>]``) that are not there, each named where it was
    looked for; one walk of the job entries. A sum over the threads found would understate
    the job: every reader refuses a gap (the pipeline, the importer, ACT's slices)."""
    found: list[JobLog] = []
    missing: list[JobLog] = []
    for wanted in _job_log_sets(meta, json_dir, index or LogIndex()):
        opts = wanted.options
        base = os.path.join(wanted.directory, "")
        offset = opts.get("log_offset")
        layout = (
            None if offset is None else offset.lower() in _TRUE,
            opts.get("log_window_value", "").lower() == "both",
        )
        window = _window_ms(opts)
        found += [
            JobLog(f"{base}{name}", wanted.kind, wanted.job_index, thread, layout, window)
            for thread, name in wanted.found
        ]
        if wanted.kind not in READ_KINDS:
            continue
        there = {thread for thread, _ in wanted.found}
        suffix = f".{wanted.host}" if wanted.host else ""
        stem = os.path.join(wanted.directory, f"{wanted.prefix}_{wanted.kind}")
        missing += [
            JobLog(f"{stem}.{thread}.log{suffix}", wanted.kind, wanted.job_index, thread)
            for thread in wanted.threads
            if thread not in there
        ]
    return sorted(found, key=lambda log: (log.job_index, log.kind, log.thread)), missing


@dataclass
class LogRows:
    """Rows of many log files: ``rows`` has :data:`ROW_COLUMNS` and ``file``, the row of
    ``files``, which tags each file with ``job_index``, ``thread``, ``kind`` and the
    caller's ids (e.g. ``step_index``). A per-I/O log's rows are its I/Os summed per
    millisecond and direction (:data:`~ssdlab.io.fio_log.SUMS_SCHEMA`: ``n`` I/Os,
    ``value`` and ``bs_bytes`` their sums)."""

    rows: pl.DataFrame
    files: pl.DataFrame


class JobLogs:
    """The iops/bw/clat logs of job entries, gathered for one bulk parse
    (:class:`~ssdlab.io.fio_log.LogBatch`), each file tagged with its job and the caller's
    ids (e.g. ``step_index``). A per-I/O log not given as bytes is read from its file a
    chunk at a time when parsed (:func:`~ssdlab.io.fio_log.per_io_sums`). After
    :meth:`parse`, ``partial`` names the logs read whose last line, cut short (a run killed
    mid-row), was dropped, with the number of lines (1)."""

    def __init__(self) -> None:
        self.windowed = LogBatch()
        self.per_io = LogBatch(sums=True)
        self.streamed: list[int] = []  # per-I/O logs read at parse time
        self.found: list[JobLog] = []
        self.ids: list[dict[str, Any]] = []
        self.bad: dict[int, str] = {}
        self.partial: dict[str, int] = {}  # path -> lines cut short, dropped

    @property
    def nbytes(self) -> int:
        """Bytes of logs held."""
        return self.windowed.nbytes + self.per_io.nbytes

    def add(self, log: JobLog, ids: dict[str, Any], data: bytes | None = None) -> None:
        """Queue one log (other kinds are ignored); ``data``: its bytes if already read."""
        if log.kind not in TIMESERIES_KINDS:
            return
        index = len(self.found)
        self.found.append(log)
        self.ids.append(ids)
        if log.window_ms <= 0 and data is None:
            self.streamed.append(index)
            return
        try:
            data = read_bytes(Path(log.path)) if data is None else data
        except InputError as exc:
            self.bad[index] = str(exc).removeprefix(f"{log.path}: ")
            return
        if log.window_ms <= 0:
            self.per_io.add(index, data, log.layout, ROW_COLUMNS)
        else:  # a windowed log's bs column is 0: not read
            self.windowed.add(index, data, log.layout, ROW_COLUMNS[:-1])

    def parse(
        self, on_stream: Callable[[str], None] | None = None
    ) -> tuple[LogRows, dict[str, str]]:
        """The rows of every log queued, and the files that could not be read, with why.
        ``on_stream(path)`` is told of each per-I/O log as it is read from its file."""
        parts = [self.windowed.parse(), self.per_io.parse()]
        for index in self.streamed:
            log = self.found[index]
            if on_stream:
                on_stream(log.path)
            try:
                sums, cut = per_io_sums(log.path, log.layout)
            except InputError as exc:
                self.bad[index] = str(exc).removeprefix(f"{log.path}: ")
                continue
            if cut:
                self.partial[log.path] = cut
            parts.append(sums.with_columns(file=pl.lit(index, dtype=pl.Int64)))
        columns = {
            "job_index": pl.Series([log.job_index for log in self.found], dtype=pl.Int64),
            "thread": pl.Series([log.thread for log in self.found], dtype=pl.Int64),
            "kind": pl.Series([log.kind for log in self.found], dtype=_KINDS),
        }
        if self.ids and self.ids[0]:
            columns |= {key: pl.Series([i[key] for i in self.ids]) for key in self.ids[0]}
        bad = self.bad | self.windowed.bad | self.per_io.bad
        for n, cut in (self.windowed.partial | self.per_io.partial).items():
            if n not in bad:
                self.partial[self.found[n].path] = cut
        rows = pl.concat(parts, how="diagonal_relaxed")
        return LogRows(rows, pl.DataFrame(columns)), {self.found[n].path: r for n, r in bad.items()}


def load_job_logs(found: Iterable[JobLog]) -> tuple[LogRows, dict[str, str]]:
    """The iops/bw/clat logs among ``found``, parsed in bulk (:class:`JobLogs`)."""
    logs = JobLogs()
    for log in found:
        logs.add(log, {})
    return logs.parse()


def _window_ms(options: dict[str, str]) -> int:
    """log_avg_msec (fio checks it is a number; anything else counts as 0)."""
    try:
        return int(options.get("log_avg_msec") or 0)
    except ValueError:
        return 0


def log_params(meta: dict[str, Any], jobs: Iterable[dict[str, Any]]) -> list[dict]:
    """Per job entry of one fio result: what :func:`timeseries` needs to place its log rows
    in time (``window_ms`` = log_avg_msec, ``start_ms`` = job_start, ``runtime_s``).
    ``jobs`` are the result's summary rows; a job entry ran as long as its longest
    direction."""
    runtimes: dict[int, float] = {}
    for row in jobs:
        index = row["job_index"]
        runtimes[index] = max(runtimes.get(index, 0.0), row["runtime_s"] or 0.0)
    glob = _global(meta)
    return [
        {
            "job_index": index,
            "window_ms": _window_ms({**glob, **opts}),
            "start_ms": start,
            "runtime_s": runtimes.get(index, 0.0),
        }
        for index, (opts, start) in enumerate(
            zip(meta["job_options"], meta["job_start_ms"], strict=True)
        )
    ]


def timeseries(logs: LogRows, params: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """Per job entry, direction and log window: IOPS and bandwidth summed over the entry's
    threads, completion latency IOPS-weighted; for any number of results at once.

    ``logs`` holds rows of iops/bw/clat logs (per-I/O logs summed per millisecond) tagged
    per file with ``keys`` (e.g. ``step_index``), ``job_index``, ``thread`` and ``kind``
    (:class:`JobLogs`); ``params`` has per ``keys`` + ``job_index`` the fields of
    :func:`log_params`. Windowed logs (``log_avg_msec``) keep their windows: a row belongs
    to the window whose end is nearest its timestamp (exactly halfway: the later one). The
    throughput logs (iops, else bw) say which windows exist: a window that not every
    thread logged (fio skips a job's last partial window) is dropped rather than
    undercounted, as is a sum that misses a thread; a repeated timestamp (fio's final
    flush) keeps the full window. Per-I/O logs are counted into whole 1-second windows.
    ``t_s`` is the end of the window in seconds since the job began measuring
    (``job_start`` when fio gives it, else the first window's start). A measure whose log
    the job did not write is null.
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
    if files["series"].null_count():  # logs of a job entry without parameters
        rows = rows.filter(_per_file(files["series"].is_not_null()))
    per_io = files["window_ms"] <= 0
    windowed, by_io = rows, rows.clear()
    if per_io.any():
        io_rows = _per_file(per_io)
        windowed, by_io = rows.filter(~io_rows), rows.filter(io_rows)
    parts = [_windowed(windowed, files, n_threads, series["window_ms"]), _per_io(by_io, files)]
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


def _windowed(
    rows: pl.DataFrame, files: pl.DataFrame, n_threads: int, windows: pl.Series
) -> pl.DataFrame:
    """Windowed log rows as one row per thread, direction and window (its index ``w`` from
    the file's ``t0``). A repeated (file, direction, window) keeps its first row: fio's
    final flush of a partial window comes right after the full one. A thread's iops, bw
    and clat logs list the same windows, so they pair by position; otherwise by (thread,
    direction, window). ``files`` tags every file (``unit`` = series x ``n_threads`` +
    thread); ``windows`` has the window length of every series."""
    if rows.is_empty():
        return pl.DataFrame(schema=_PER_THREAD)
    file = pl.col("file")
    since, window = pl.col("time_ms") - _per_file(files["t0"]), _per_file(files["window_ms"])
    w = (2 * since + window) // (2 * window)  # the nearest window; halfway: the later one
    rows = rows.select("file", "direction", "value", w=w)
    repeated = pl.any_horizontal(
        pl.all_horizontal(
            pl.col(c).eq_missing(pl.col(c).shift(k)) for c in ("file", "direction", "w")
        )
        for k in (1, 2, 3)  # up to one row per direction (read, write, trim) per window
    )
    repeats = rows.select(repeated).to_series()
    if repeats.any():
        rows = rows.filter(~repeats)
    rows = rows.with_columns(
        unit=pl.lit(files["unit"]).gather(file), kind=pl.lit(files["kind"]).gather(file)
    )
    keys = ["unit", "direction", "w"]
    logged = {k: rows.filter(pl.col("kind") == k).select(*keys, "value") for k in TIMESERIES_KINDS}
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
        parts = [part.rename({"value": k}) for k, part in logged.items()]
        per_thread = parts[0]
        for part in parts[1:]:
            per_thread = per_thread.join(part, on=keys, how="full", coalesce=True)
    series = pl.col("unit") // n_threads
    return per_thread.select(
        series=series,
        unit="unit",
        direction="direction",
        t_s=pl.col("w") * pl.lit(windows).gather(series) / 1000,
        iops=pl.col("iops") if "iops" in logged else pl.lit(None),
        bw=pl.col("bw") * 1024 if "bw" in logged else pl.lit(None),  # KiB/s -> bytes/s
        clat=pl.col("clat") if "clat" in logged else pl.lit(None),
    ).cast(_PER_THREAD)  # type: ignore[arg-type]


def _per_file(values: pl.Series) -> pl.Expr:
    """A file's value (``values[file]``) on each of its rows; a constant if all agree."""
    return pl.lit(values[0]) if values.n_unique() == 1 else pl.lit(values).gather(pl.col("file"))


def _per_io(rows: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    """Per-I/O logs' millisecond sums counted into 1 s windows per thread from the clat log
    (or the iops log where a job has no clat log); a last window cut short by the end of
    the job is dropped. ``files`` tags every file."""
    if rows.is_empty():
        return pl.DataFrame(schema=_PER_THREAD)
    tags = ("series", "unit", "kind", "t0", "runtime_s")
    rows = rows.with_columns(files[c].gather(rows["file"]) for c in tags)
    has_clat = (pl.col("kind") == "clat").any().over("series")
    rows = rows.filter(
        pl.when(has_clat).then(pl.col("kind") == "clat").otherwise(pl.col("kind") == "iops")
    )
    return (
        rows.with_columns(t_s=((pl.col("time_ms") - pl.col("t0")) // 1000 + 1).cast(pl.Float64))
        .group_by("series", "unit", "direction", "t_s")
        .agg(
            iops=pl.col("n").sum(),
            bw=pl.col("bs_bytes").sum(),
            clat=pl.when((pl.col("kind") == "clat").all()).then(
                pl.col("value").sum() / pl.col("n").sum()
            ),
            runtime_s=pl.col("runtime_s").first(),
        )
        .filter(pl.col("t_s") <= pl.col("runtime_s") + 0.05)
        .select(list(_PER_THREAD))
        .cast(_PER_THREAD)  # type: ignore[arg-type]
    )

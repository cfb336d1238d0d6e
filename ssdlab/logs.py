"""Pair fio's log files with the job that wrote them, and turn them into time series.

Pairing is by content: a job's ``write_bw_log``/``write_iops_log``/``write_lat_log``/
``write_hist_log`` options give the file prefix, and fio numbers the files by thread
(``<prefix>_<type>.<thread>.log``, with ``.<host>`` appended in client/server runs, or in
pbench-fio's ``clients/<host>/`` without it). A job entry covers ``numjobs`` threads with
``group_reporting`` and one thread per clone without. A thread's logs of one interval are
paired into one window, and every row left out of a time series is counted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
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
    "iops": "write_iops_log", "bw": "write_bw_log", "clat": "write_lat_log", "lat": "write_lat_log",
    "slat": "write_lat_log", "clat_hist": "write_hist_log",
}  # fmt: skip
TIMESERIES_KINDS = ("iops", "bw", "clat")
#: the log columns :func:`timeseries` uses (``bs_bytes`` only of per-I/O logs)
ROW_COLUMNS = ("time_ms", "value", "direction", "bs_bytes")
TIMESERIES_SCHEMA = {
    "job_index": pl.Int64, "direction": pl.String, "t_s": pl.Float64, "iops": pl.Float64,
    "bw_bytes_s": pl.Float64, "clat_mean_ns": pl.Float64,
}  # fmt: skip
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


#: pbench-fio's folder of each client's logs beside its ``fio-result.txt``:
#: ``clients/<host>/`` (``localhost`` when fio ran locally), the ``.<host>`` suffix fio's
#: client gives them removed
PBENCH_CLIENTS = "clients"
PBENCH_LOCAL = "localhost"


def _places(json_dir: str, prefix: str, host: str | None) -> list[tuple[str, str | None]]:
    """Where the logs of ``prefix`` of a job entry run on ``host`` may be, in order, as
    (directory, host suffix of their names): where fio writes them (beside the JSON, with
    fio's client/server ``.<host>`` suffix); beside the JSON when the prefix is a path of
    another machine; pbench-fio's ``clients/<host>/`` without the suffix (or with it)."""
    head, _ = os.path.split(prefix)
    places = [(os.path.normpath(os.path.join(json_dir, head)), host)]
    if os.path.isabs(prefix):  # written on another machine
        places.append((json_dir, host))
    plain = host is None or (os.sep not in host and host not in (os.curdir, os.pardir, ""))
    if not head and plain:  # a host that is not one folder's name is not looked for
        folder = os.path.join(json_dir, PBENCH_CLIENTS, host or PBENCH_LOCAL)
        places += [(folder, None)] + ([(folder, host)] if host else [])
    return places


#: the log kinds ssdlab reads, whose every thread's log must be there (a sum over the
#: threads found would understate the job)
READ_KINDS = (*TIMESERIES_KINDS, "clat_hist")
#: why a thread's log that fio writes is not used
MISSING_LOG = "missing (fio writes this log for every thread of the job)"


def job_logs(
    meta: dict[str, Any], json_dir: str | Path, index: LogIndex | None = None
) -> tuple[list[JobLog], list[JobLog]]:
    """The log files of every job of a parsed fio result (its ``meta``), looked up where the
    tools that write them put them (:func:`_places`; pass one ``index`` when pairing many
    results), and
    the logs of :data:`READ_KINDS` fio writes for its job entries (one per thread:
    ``<prefix>_<kind>.<thread>.log[.<host>]``) that are not there, each named where it was
    looked for; one walk of the job entries. A sum over the threads found would understate
    the job: every reader refuses a gap (the pipeline, the importer, ACT's slices)."""
    found: list[JobLog] = []
    missing: list[JobLog] = []
    json_dir, index = os.path.normpath(json_dir), index or LogIndex()
    for job_index, threads, host in _threads(meta):
        opts = job_options(meta, job_index)
        offset = opts.get("log_offset")
        layout = (
            None if offset is None else offset.lower() in _TRUE,
            opts.get("log_window_value", "").lower() == "both",
        )
        for kind, option in LOG_OPTIONS.items():
            prefix = opts.get(option)
            if prefix is None:
                continue
            if prefix in ("", "1"):  # option given without a name: fio uses the job name
                prefix = meta["job_names"][job_index] or ""
            name = os.path.basename(prefix)
            places = _places(json_dir, prefix, host)
            (directory, suffix), there = places[0], []
            for place, on in places:  # the first that holds any of its threads' logs
                logs = index.lookup(place, name, kind, on)
                there = [(thread, file) for thread, file in logs if thread in threads]
                if there:
                    directory, suffix = place, on
                    break
            base = os.path.join(directory, "")
            found += [
                JobLog(f"{base}{file}", kind, job_index, thread, layout, _window_ms(opts))
                for thread, file in there
            ]
            if kind in READ_KINDS:
                end = f".{suffix}" if suffix else ""
                got = {thread for thread, _ in there}
                missing += [
                    JobLog(f"{base}{name}_{kind}.{thread}.log{end}", kind, job_index, thread)
                    for thread in threads
                    if thread not in got
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
            data = read_bytes(Path(log.path), kind="fio logs") if data is None else data
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
    """:func:`timeseries_counted`'s time series."""
    return timeseries_counted(logs, params, keys)[0]


def timeseries_counted(
    logs: LogRows, params: pl.DataFrame, keys: Sequence[str] = ()
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per job entry, direction and log window: IOPS and bandwidth summed over the entry's
    threads, completion latency IOPS-weighted; for any number of results at once.

    ``logs`` holds rows of iops/bw/clat logs (per-I/O logs summed per millisecond) tagged
    per file with ``keys`` (e.g. ``step_index``), ``job_index``, ``thread`` and ``kind``
    (:class:`JobLogs`); ``params`` has per ``keys`` + ``job_index`` the fields of
    :func:`log_params`. Windowed logs (``log_avg_msec``) keep their windows, a thread's
    rows of one interval paired (:func:`_windowed`); per-I/O logs are counted into whole
    1-second windows. A thread runs, per direction, from its first window to its last (its
    own log's: threads of a job may start late, e.g. ``startdelay``, and end early, e.g.
    size-based); outside them it adds 0 IOPS and bandwidth and no latency, so a job spans
    its longest thread (less each thread's last partial interval, which fio's throughput
    logs leave out). The throughput logs (iops, else bw) say which windows exist: a window
    that a running thread did not log is left out rather than undercounted, as is a sum
    that misses a running thread's value. ``t_s`` is the end of the window
    in seconds since the job began measuring (``job_start`` when fio gives it, else the
    first window's start). A measure whose log the job did not write is null. Also the
    windowed logs' rows left out (``file``: its row in ``logs.files``, ``reason``: one of
    :data:`REPEATED`..., ``rows``): no row is dropped uncounted."""
    by = [*keys, "job_index"]
    schema = {k: logs.files.schema.get(k, pl.Int64) for k in keys} | TIMESERIES_SCHEMA
    rows = logs.rows
    if rows.is_empty() or params.is_empty():
        return pl.DataFrame(schema=schema), pl.DataFrame(schema=_LOST)
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
    per_window, lost = _windowed(windowed, files, n_threads, series["window_ms"])
    per_thread = pl.concat([per_window, _per_io(by_io, files)]).with_columns(
        clat_num=pl.col("clat") * pl.col("iops"),
        clat_den=pl.when(pl.col("clat").is_not_null()).then(pl.col("iops")),
    )
    at = ["series", "direction", "t_s"]
    summed = per_thread.group_by(at).agg(
        pl.col("iops", "bw", "clat_num", "clat_den").sum(),
        pl.col("iops", "bw", "clat").count().name.prefix("n_"),
        clat_plain=pl.col("clat").mean(),
    )
    logging = (
        files.filter(pl.col("first_ms").is_not_null())
        .group_by("series")
        .agg(has_iops=(pl.col("kind") == "iops").any(), has_bw=(pl.col("kind") == "bw").any())
    )
    logged = pl.when("has_iops").then("n_iops").when("has_bw").then("n_bw").otherwise("n_clat")
    every = pl.col("running")  # threads between their first and last window (per direction)
    summed = summed.join(_running(per_thread), on=at).join(logging, on="series")
    summed = summed.with_columns(whole=logged == every)
    left_out = per_window.join(summed.filter(~pl.col("whole")), on=at, how="semi")
    if left_out.height:
        lost = pl.concat([lost, _incomplete(left_out, files)])
    series = (
        summed.filter("whole")
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
    return series, lost.group_by("file", "reason").agg(pl.col("rows").sum()).sort("file", "reason")


def _running(per_thread: pl.DataFrame) -> pl.DataFrame:
    """Per series, direction and window (``t_s``) of ``per_thread``: how many threads are
    ``running``, i.e. logged that direction both at or before it and at or after it."""
    at, t_s = ["series", "direction", "t_s"], pl.col("t_s")
    spans = per_thread.group_by(*at[:2], "unit").agg(start=t_s.min(), end=t_s.max())
    windows = per_thread.select(at).unique().join(spans, on=at[:2])
    within = windows.filter(t_s.is_between(pl.col("start"), pl.col("end")))
    return within.group_by(at).agg(running=pl.len())


def _incomplete(left_out: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    """The rows of windows a running thread did not log (``left_out``, per thread), counted
    per file (:data:`PARTIAL`)."""
    by_kind = files.select("file", "unit", kind=pl.col("kind").cast(pl.String))
    per_kind = [
        left_out.filter(pl.col(k).is_not_null()).select("unit", kind=pl.lit(k)) for k in _REF
    ]
    return (
        pl.concat(per_kind)
        .join(by_kind, on=["unit", "kind"])
        .group_by("file")
        .len("rows")
        .select("file", reason=pl.lit(PARTIAL), rows="rows")
    )


_KINDS = pl.Enum(list(LOG_OPTIONS))
#: one row per thread, direction and window: the frame both log shapes reduce to
_PER_THREAD = {
    "series": pl.UInt32, "unit": pl.Int64, "direction": DIRECTION, "t_s": pl.Float64,
    "iops": pl.Float64, "bw": pl.Float64, "clat": pl.Float64,  # bw: bytes/s, clat: ns
}  # fmt: skip


#: why a windowed log's row is left out of the time series (:func:`timeseries_counted`)
REPEATED = "repeating the interval of the row before it (fio's final flush)"
TAIL = "after the last interval of the thread's throughput log (a partial interval)"
UNPAIRED = "with no row of the thread's throughput log within half an interval"
PARTIAL = "in an interval that a thread of the job running then did not log"
#: the reasons fio's way of ending its logs explains; the others are worth a warning
EXPECTED = (REPEATED, TAIL)
_REF = ("iops", "bw", "clat")  # which of a thread's logs places its intervals, by preference
_RANK = {kind: n for n, kind in enumerate(_REF)}
_LOST = {"file": pl.Int64, "reason": pl.String, "rows": pl.UInt32}


def _windowed(
    rows: pl.DataFrame, files: pl.DataFrame, n_threads: int, windows: pl.Series
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Windowed log rows as one row per thread, direction and window (index ``w`` from the
    file's ``t0``) with its iops, bw and clat, and the rows left out, counted per file and
    reason (:data:`REPEATED`...: ``file``, ``reason``, ``rows``).

    A row at most half an interval after the one before it (in its file and direction)
    repeats it: fio's final flush. The thread's iops log (else bw, else clat) places the
    intervals: a row in the window whose end is nearest its time (halfway: the later one),
    or the one after the row before it. fio writes a thread's other logs with it, a row
    per interval: they pair row by row when their times agree within a quarter of the
    interval, else each row with the nearest less than half an interval away (halfway: the
    later), never two with one."""
    if rows.is_empty():
        return pl.DataFrame(schema=_PER_THREAD), pl.DataFrame(schema=_LOST)
    fd, keys = ["file", "direction"], ["unit", "direction"]
    rank = files["kind"].cast(pl.String).replace_strict(_RANK, default=len(_RANK))
    rows = rows.select("file", "direction", "value", "time_ms").with_columns(
        t0=_per_file(files["t0"]),
        W=_per_file(files["window_ms"]),
        unit=_per_file(files["unit"]),
        rank=_per_file(rank),
    )
    gap = pl.col("time_ms") - pl.col("time_ms").shift(1).over(fd)
    rows = rows.with_columns(repeat=(2 * gap <= pl.col("W")).fill_null(False))
    lost = [rows.filter("repeat").select("file", "time_ms", reason=pl.lit(REPEATED))]
    rows = rows.filter(~pl.col("repeat")).with_columns(
        n=pl.int_range(pl.len()).over(fd), ref=pl.col("rank") == pl.col("rank").min().over("unit")
    )
    nearest = (2 * (pl.col("time_ms") - pl.col("t0")) + pl.col("W")) // (2 * pl.col("W"))
    refs = rows.filter("ref").with_columns(
        w=(nearest - pl.col("n")).cum_max().over(fd) + pl.col("n")
    )
    others = rows.filter(~pl.col("ref")).join(
        refs.select(*keys, "n", "w", ref_ms="time_ms"), on=[*keys, "n"], how="left"
    )
    agree = 4 * (pl.col("time_ms") - pl.col("ref_ms")).abs() <= pl.col("W")
    ordered = others.group_by(fd).agg((agree | pl.col("w").is_null()).all().alias("ok"))
    ordered = ordered.filter("ok").select(fd)
    in_order = others.join(ordered, on=fd, how="semi")
    paired = [refs, in_order.filter(pl.col("w").is_not_null())]
    unpaired = [in_order.filter(pl.col("w").is_null())]
    rest = others.join(ordered, on=fd, how="anti").drop("w", "ref_ms").sort("time_ms")
    for window in rest["W"].unique().to_list():
        # times doubled, a row's one later: a row halfway between goes with the later row
        key = 2 * pl.col("time_ms")
        candidates = refs.filter(pl.col("W") == window).select(*keys, "w", at=key)
        near = (  # within less than half an interval (halfway: the later row)
            rest.filter(pl.col("W") == window).with_columns(at=key + 1).sort("at")
            .join_asof(
                candidates.with_columns(ref_at="at").sort("at"), on="at", by=keys,
                strategy="nearest", tolerance=window, check_sortedness=False,  # sorted by time
            )
            .sort((pl.col("at") - pl.col("ref_at")).abs(), nulls_last=True)
            .with_columns(kept=pl.struct(*fd, "w").is_first_distinct() & pl.col("w").is_not_null())
        )  # fmt: skip
        paired.append(near.filter("kept"))
        unpaired.append(near.filter(~pl.col("kept")))
    last = refs.group_by(keys).agg(last_ms=pl.col("time_ms").max())
    tail = pl.when(pl.col("time_ms") > pl.col("last_ms").fill_null(-1)).then(pl.lit(TAIL))
    lost += [
        part.join(last, on=keys, how="left").select(
            "file", "time_ms", reason=tail.otherwise(pl.lit(UNPAIRED))
        )
        for part in unpaired
    ]
    value = pl.col("value")
    per_thread = (
        pl.concat([part.select(*keys, "w", "rank", "value") for part in paired])
        .group_by(*keys, "w")
        .agg(value.filter(pl.col("rank") == r).first().alias(k) for r, k in enumerate(_REF))
    )
    series = pl.col("unit") // n_threads
    t_s = pl.col("w") * pl.lit(windows).gather(series) / 1000
    bw = pl.col("bw") * 1024  # KiB/s -> bytes/s
    per_thread = per_thread.select(
        series=series, unit="unit", direction="direction", t_s=t_s, iops="iops", bw=bw, clat="clat"
    ).cast(_PER_THREAD)  # type: ignore[arg-type]
    return per_thread, pl.concat(lost).group_by("file", "reason").len("rows")


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

"""From fio's output to the core frames: one way for native runs and imports alike.

Each step is parsed once into a :class:`StepData` (its record, folder, fio's JSON rows and
the logs its jobs name). :func:`core_frames` builds ``summary``, ``latency_hist``,
``percentiles`` and ``snapshots`` of all steps at once (:func:`~ssdlab.io.fio_json.fio_frames`)
and :func:`timeseries_frame` tags the summed logs (:func:`~ssdlab.logs.timeseries`) with the
same step columns; :func:`latency_intervals_frame` turns the completion-latency histogram
logs into percentiles per interval. A native run does this when it is loaded
(:func:`native_steps`), and its steps keep what their logs said for later use (each job's
first iops-log time for the power frame, the summed histogram bins for QoS slices:
:func:`hist_log_bins_frame`), so a report reads no file twice; an import when it is
imported, keeping the frames as Parquet (:mod:`ssdlab.importer`).

Every frame has the :data:`ID_COLUMNS` first. ``host`` is the machine the job ran on: the
run's host for a native run, fio's ``hostname`` for an imported client/server result, null
when neither says.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import polars as pl

from . import layout
from .errors import InputError
from .io.fio_json import JSON_KIND, FioJson, FioRows, fio_frames, parse_fio_json
from .io.fio_log import EPOCH_MS_MIN
from .io.text import read_bytes
from .logs import (
    MISSING_LOG,
    JobLog,
    JobLogs,
    LogRows,
    job_logs,
    job_options,
    log_params,
    timeseries_counted,
)
from .manifest import LOADABLE, Manifest, StepRecord
from .units import percentile_name

ID_COLUMNS = [
    "run_id", "label", "host", "step_index", "step", "test", "block", "round", "status"
]  # fmt: skip
SUMMARY_FIRST = [
    *ID_COLUMNS, "fio_json", "direction", "rw", "bs_bytes", "iodepth", "numjobs", "rwmixread",
    "iops", "bw_bytes_s", "io_bytes", "runtime_s", "lat_mean_ns", "clat_mean_ns", "clat_p50_ns",
    "clat_p99_ns", "clat_p99_9_ns", "clat_p99_99_ns", "clat_max_ns", "usr_cpu_pct", "sys_cpu_pct",
]  # fmt: skip
#: the frames built from fio's files, in this order
FIO_FRAMES = (
    "summary", "timeseries", "latency_hist", "percentiles", "snapshots", "latency_intervals"
)  # fmt: skip
T = TypeVar("T")
_STEP_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "test": pl.String,
    "block": pl.String,
    "round": pl.Int64,
    "status": pl.String,
}


class RunContext:
    """What a frame builder is given: the results directory and its manifest; the run's
    ``steps``, parsed once (given by :func:`~ssdlab.results.load`, else parsed on first use;
    an import has none: its frames were built when imported); :meth:`folders`; and
    ``damaged``, where a builder lists a file it leaves out (:class:`Damage`)."""

    def __init__(self, path: Path, manifest: Manifest, steps: list[StepData] | None = None) -> None:
        self.path = path
        self.manifest = manifest
        self._steps = steps
        self.damaged: list[Damage] = []
        self._once: dict[Callable[[RunContext], Any], Any] = {}

    @property
    def steps(self) -> list[StepData]:
        if self._steps is None:
            native = self.manifest.source == "run"
            self._steps = native_steps(self.path, self.manifest) if native else []
        return self._steps

    def folders(self) -> list[tuple[StepRecord, Path]]:
        """Every loadable step of a native run and its folder, also one whose fio output
        cannot be read (its SMART captures still count)."""
        if self.manifest.source != "run":
            return []
        loadable = [r for r in self.manifest.steps if r.status in LOADABLE]
        return [(r, layout.step_dir(self.path, r)) for r in loadable]

    def once(self, func: Callable[[RunContext], T]) -> T:
        """``func(self)``, computed once per loaded run: builders share what they read
        (the SMART snapshots behind ``smart``, ``waf`` and ``endurance``)."""
        if func not in self._once:
            self._once[func] = func(self)
        return self._once[func]


@dataclass
class StepData:
    """One step parsed once: its record, fio's JSON rows, the logs its jobs name, its
    folder (None for an imported step, whose files are its record's ``sources``) and the
    thread logs its jobs ask for that are not there (:func:`~ssdlab.logs.job_logs`:
    the logs of their kind are then left out, never summed over the threads found).
    What its logs said is kept when they are read (:func:`series_of` with ``steps``,
    :func:`latency_intervals_frame` with ``keep_bins``), so nothing reads them again."""

    record: StepRecord
    fio: FioRows
    logs: list[JobLog]
    dir: Path | None = None
    missing: list[JobLog] = field(default_factory=list)
    #: per job entry, the epoch milliseconds of the first row of its iops logs (a job whose
    #: logs hold no row is absent); None until they are read (:func:`log_starts`)
    log_start_ms: dict[int, int] | None = None
    #: why the iops logs cannot place the step in time (a log that cannot be read, or
    #: timestamps that are not epoch times), or None
    log_start_problem: str | None = None
    #: the histogram logs' bins summed over jobs and threads (:func:`hist_log_bins_frame`,
    #: without ``step_index``; empty when one of them is missing or cannot be read); None
    #: when not kept
    hist_bins: pl.DataFrame | None = None


#: what a damaged file leaves out of a native run: the step, or its time series or
#: latency intervals, or rows of its time series (the reason counts them)
LeftOut = Literal["step", "time series", "latency intervals", "rows", "SMART snapshot"]


@dataclass(frozen=True)
class Damage:
    """A file of a native run that could not be read (or a thread's log that is missing),
    why, and what of its step is left out because of it. ``str()`` is the line
    ``ssdlab summary`` prints: ``PATH: reason; step NAME's time series left out``."""

    path: str
    reason: str
    step_index: int
    step: str
    left_out: LeftOut

    def __str__(self) -> str:
        if self.left_out == "rows":
            return f"{self.path}: {self.reason} (step {self.step})"
        what = "" if self.left_out == "step" else f"'s {self.left_out}"
        return f"{self.path}: {self.reason}; step {self.step}{what} left out"


def read_step(results_dir: Path, record: StepRecord) -> StepData:
    """Parse a native step's ``fio.json`` and find its logs, and those missing."""
    folder = layout.step_dir(results_dir, record)
    path = folder / layout.FIO_JSON
    rows = parse_fio_json(read_bytes(path, kind=JSON_KIND), path)
    logs, missing = job_logs(rows.meta, folder)
    return StepData(record, rows, logs, folder, missing)


def fio_error(jobs: Iterable[dict[str, Any]]) -> str | None:
    """Why a fio result is a failed step: the first job (of fio's rows, with ``job_index``,
    ``jobname``, ``hostname``, ``error``) whose ``error`` is not 0 (an errno: the job stopped
    early, or went on past errors with ``continue_on_error``), by name and errno name,
    ``fio job 'fill' reported error 28 ENOSPC (No space left on device)``; None when none."""
    failed: dict[int, dict[str, Any]] = {}
    for row in jobs:
        if row.get("error"):
            failed.setdefault(row["job_index"], row)
    if not failed:
        return None
    first = next(iter(failed.values()))
    code = int(first["error"])
    name = errno.errorcode.get(code)
    host = f" on {first['hostname']}" if first.get("hostname") else ""
    more = f" (and {len(failed) - 1} more job(s))" if len(failed) > 1 else ""
    return (
        f"fio job {first.get('jobname')!r}{host} reported error {code}"
        f"{f' {name}' if name else ''} ({os.strerror(code)}){more}"
    )


def result_jobs(fio: FioJson, path: Path) -> pl.DataFrame:
    """fio's per-direction rows of a step's result (``path``); InputError when it holds no
    job results or a job reported an error (:func:`fio_error`)."""
    jobs = fio.jobs
    if jobs.is_empty():
        raise InputError(f"{path}: holds no job results")
    if error := fio_error(jobs.filter(pl.col("error") != 0).to_dicts()):
        raise InputError(error)
    return jobs


def native_steps(
    results_dir: Path, manifest: Manifest, damaged: list[Damage] | None = None
) -> list[StepData]:
    """The loadable steps of a native run, parsed. A step whose output cannot be read is
    left out: quietly when it was interrupted; an ``ok`` one is an error, or a
    :class:`Damage` in ``damaged`` when it is given."""
    steps = []
    for record in manifest.steps:
        if record.status not in LOADABLE:
            continue
        try:
            steps.append(read_step(results_dir, record))
        except InputError as exc:
            if record.status != "ok":
                continue
            if damaged is None:
                raise
            path = str(layout.step_dir(results_dir, record) / layout.FIO_JSON)
            reason = str(exc).removeprefix(f"{path}: ")
            damaged.append(Damage(path, reason, record.index, record.name, "step"))
    return steps


def front(frame: pl.DataFrame, first: Sequence[str] = ID_COLUMNS) -> pl.DataFrame:
    """``frame`` with the columns of ``first`` it has first, in that order."""
    present = [c for c in first if c in frame.columns]
    return frame.select(present + [c for c in frame.columns if c not in present])


def _step_table(steps: Sequence[StepData]) -> pl.DataFrame:
    records = [s.record for s in steps]
    return pl.DataFrame(
        {
            "step_index": [r.index for r in records],
            "step": [r.name for r in records],
            "test": [r.workload.test if r.workload else None for r in records],
            "block": [r.block for r in records],
            "round": [r.round for r in records],
            "status": [r.status for r in records],
        },
        schema=_STEP_SCHEMA,
    )


def _job_hosts(manifest: Manifest, summary: pl.DataFrame) -> pl.DataFrame | None:
    """``host`` per step and job entry when fio named it (an imported client/server
    result); None when the run's own host applies."""
    if manifest.host is not None or "job_index" not in summary.columns:
        return None
    keys = ["step_index", "job_index"]
    return summary.select(*keys, "host").unique(keys, keep="first", maintain_order=True)


def _tagged(
    frame: pl.DataFrame,
    manifest: Manifest,
    steps: pl.DataFrame,
    hosts: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``frame`` (with ``step_index``) with every id column, first."""
    if hosts is not None and "host" not in frame.columns and "job_index" in frame.columns:
        frame = frame.join(hosts, on=["step_index", "job_index"], how="left", maintain_order="left")
    run = {
        "run_id": pl.lit(manifest.run_id, dtype=pl.String),
        "label": pl.lit(manifest.label, dtype=pl.String),
    }
    if "host" not in frame.columns:
        run["host"] = pl.lit(manifest.host.hostname if manifest.host else None, dtype=pl.String)
    tagged = frame.drop([c for c in _STEP_SCHEMA if c != "step_index"], strict=False)
    tagged = tagged.join(steps, on="step_index", how="left", maintain_order="left")
    return front(tagged.with_columns(**run))


def core_frames(manifest: Manifest, steps: Sequence[StepData]) -> dict[str, pl.DataFrame]:
    """``summary``, ``latency_hist``, ``percentiles`` and ``snapshots`` of ``steps``; the
    summary names each step's fio JSON (``fio_json``, relative to the results directory for
    a native run, the source file for an import)."""
    fio = fio_frames([s.fio for s in steps], [{"step_index": s.record.index} for s in steps])
    table = _step_table(steps)
    summary = fio.jobs
    if manifest.host is None and "hostname" in summary.columns:
        summary = summary.with_columns(host=pl.col("hostname").cast(pl.String))
    summary = _tagged(summary, manifest, table)
    sources = pl.DataFrame(
        {
            "step_index": [s.record.index for s in steps],
            "fio_json": [layout.fio_json_of(s.record) for s in steps],
        },
        schema={"step_index": pl.Int64, "fio_json": pl.String},
    )
    summary = summary.join(sources, on="step_index", how="left", maintain_order="left")
    hosts = _job_hosts(manifest, summary)
    clat = fio.bins.filter(pl.col("stat") == "clat").drop("stat")
    return {
        "summary": front(summary, SUMMARY_FIRST),
        "latency_hist": _tagged(clat, manifest, table, hosts),
        "percentiles": _tagged(fio.percentiles, manifest, table, hosts),
        "snapshots": _tagged(fio.snapshots, manifest, table, hosts),
    }


def step_logs(steps: Sequence[StepData]) -> tuple[JobLogs, list[dict]]:
    """The iops/bw/clat logs of ``steps`` gathered for one parse, and the per-job
    parameters :func:`~ssdlab.logs.timeseries` needs, keyed by ``step_index``."""
    logs, params = JobLogs(), []
    for step in steps:
        ids = {"step_index": step.record.index}
        params += [p | ids for p in log_params(step.fio.meta, step.fio.jobs)]
        for log in step.logs:
            logs.add(log, ids)
    return logs, params


#: log rows left out of a time series: path -> reason (:data:`~ssdlab.logs.REPEATED`...)
#: -> rows
Lost = dict[str, dict[str, int]]


def series_of(
    logs: JobLogs,
    params: list[dict],
    on_stream: Callable[[str], None] | None = None,
    steps: Sequence[StepData] = (),
) -> tuple[pl.DataFrame, dict[str, str], Lost]:
    """The summed time series of ``logs`` (with ``step_index``), the logs that could not
    be read, with why, and the rows left out (:func:`~ssdlab.logs.timeseries_counted`).
    ``on_stream(path)`` is told of each per-I/O log read from its file. ``steps``, whose
    logs these are, get their iops logs' starts recorded (:func:`log_starts`)."""
    rows, bad = logs.parse(on_stream)
    _record_starts(steps, logs, rows, bad)
    series, counted = timeseries_counted(rows, pl.DataFrame(params), keys=["step_index"])
    lost: Lost = {}
    for file, reason, n in counted.iter_rows():
        lost.setdefault(logs.found[file].path, {})[reason] = n
    return series, bad, lost


def lost_rows(reason: str, rows: int) -> str:
    """What a log lost: ``1 row left out of the time series, REASON``."""
    return f"{rows} row{'' if rows == 1 else 's'} left out of the time series, {reason}"


def log_starts(steps: Sequence[StepData]) -> None:
    """Record on each of ``steps`` when its jobs' iops logs begin (``log_start_ms``, or
    ``log_start_problem``), reading the iops logs of the steps whose series were not built
    (:func:`series_of` records the others as it parses their logs)."""
    unread = [step for step in steps if step.log_start_ms is None]
    if not unread:
        return
    logs = JobLogs()
    for step in unread:
        for log in step.logs:
            if log.kind == "iops":
                logs.add(log, {})
    rows, bad = logs.parse()
    _record_starts(unread, logs, rows, bad)


def _record_starts(
    steps: Sequence[StepData], logs: JobLogs, rows: LogRows, bad: dict[str, str]
) -> None:
    """Each step's iops-log starts (:attr:`StepData.log_start_ms`) from the parsed ``rows``
    of ``logs``; its first iops log (in job, thread order) that could not be read, or whose
    times are not epoch times, is its ``log_start_problem``."""
    if not steps:
        return
    firsts = rows.rows.group_by("file").agg(pl.col("time_ms").min())
    first_ms = {logs.found[file].path: start for file, start in firsts.iter_rows()}
    for step in steps:
        starts: dict[int, int] = {}
        problem = None
        for log in step.logs:
            if log.kind != "iops":
                continue
            if log.path in bad:
                problem = f"{log.path}: {bad[log.path]}"
                break
            start = first_ms.get(log.path)
            if start is not None and start < EPOCH_MS_MIN:
                problem = "fio logs lack epoch timestamps (log_unix_epoch=0)"
                break
            if start is not None:
                starts[log.job_index] = min(starts.get(log.job_index, start), start)
        step.log_start_ms, step.log_start_problem = starts, problem


def timeseries_frame(
    manifest: Manifest, steps: Sequence[StepData], series: pl.DataFrame, summary: pl.DataFrame
) -> pl.DataFrame:
    """The time series of ``steps`` with the id columns (``host`` as in ``summary``)."""
    return _tagged(series, manifest, _step_table(steps), _job_hosts(manifest, summary))


#: the percentiles of ``latency_intervals``
INTERVAL_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999)
LATENCY_INTERVALS_SCHEMA = {
    "step_index": pl.Int64,
    "job_index": pl.Int64,
    "direction": pl.String,
    "t_s": pl.Float64,
    "interval_ms": pl.Int64,
    "samples": pl.Int64,
    "lat_min_ns": pl.Float64,
    "lat_mean_ns": pl.Float64,
    **{f"lat_{percentile_name(p)}_ns": pl.Float64 for p in INTERVAL_PERCENTILES},
    "lat_max_ns": pl.Float64,
}
#: non-zero histogram bins held before the intervals of the steps read so far are computed
HIST_ROWS_HELD = 2**22
#: summed histogram bins a loaded run keeps for QoS slices (:attr:`StepData.hist_bins`),
#: about 40 MB: the steps whose bins would go past this read their logs again if asked for
HIST_BINS_KEPT = 2**20
#: what to do with a histogram log that cannot be read: ``on_bad(step, path, reason)``
OnBadLog = Callable[[StepData, str, str], None]


def _hist_interval_ms(options: dict[str, str]) -> int:
    """A job's ``log_hist_msec`` (1000 when it is not a positive number)."""
    try:
        return max(int(options.get("log_hist_msec") or 0), 0) or 1000
    except ValueError:
        return 1000


def _hist_rows(step: StepData, on_bad: OnBadLog) -> Iterator[tuple[int, pl.DataFrame]]:
    """The bins of every histogram log of a step, tagged with their job entry and interval,
    with the number of bins of their layout. A job entry one of whose logs cannot be read
    or is missing is left out whole (its other threads alone would understate it)."""
    broken: set[int] = set()
    for log in step.missing:
        if log.kind == "clat_hist":
            on_bad(step, log.path, MISSING_LOG)
            broken.add(log.job_index)
    logs = [log for log in step.logs if log.kind == "clat_hist" and log.job_index not in broken]
    if not logs:
        return
    # imported here, as in _intervals: numpy (~0.1 s) only when a run has histogram logs
    from .io.fio_hist import interval_end_ms, read_fio_hist_log

    read: list[tuple[JobLog, pl.DataFrame, int]] = []
    for log in logs:
        try:
            hist, meta = read_fio_hist_log(log.path)
        except InputError as exc:
            on_bad(step, log.path, str(exc).removeprefix(f"{log.path}: "))
            broken.add(log.job_index)
            continue
        read.append((log, hist, meta["n_bins"]))
    for log, hist, n_bins in read:
        if log.job_index in broken:
            continue
        interval = _hist_interval_ms(job_options(step.fio.meta, log.job_index))
        yield (
            n_bins,
            hist.select("time_ms", "direction", "bin", "count").with_columns(
                step_index=pl.lit(step.record.index, pl.Int64),
                job_index=pl.lit(log.job_index, pl.Int64),
                interval_ms=pl.lit(interval, pl.Int64),
                end_ms=interval_end_ms(interval),
            ),
        )


def _intervals(rows: list[pl.DataFrame], n_bins: int) -> pl.DataFrame:
    """:data:`LATENCY_INTERVALS_SCHEMA` of histogram rows of one bin layout."""
    from .io.fio_hist import interval_stats

    keys = ("step_index", "job_index", "interval_ms", "direction", "end_ms")
    stats = interval_stats(pl.concat(rows), n_bins, keys, INTERVAL_PERCENTILES)
    first = pl.col("end_ms").min().over("step_index", "job_index")
    t_s = (pl.col("end_ms") - first + pl.col("interval_ms")) / 1000.0
    return stats.with_columns(t_s=t_s).select(list(LATENCY_INTERVALS_SCHEMA))


def latency_intervals_frame(
    manifest: Manifest,
    steps: Sequence[StepData],
    summary: pl.DataFrame,
    on_bad: OnBadLog | None = None,
    keep_bins: bool = False,
) -> pl.DataFrame:
    """Completion latency per step, job entry, direction and histogram-log interval, from
    the jobs' ``write_hist_log`` logs, as ``fiologparser_hist.py --noweight`` computes it
    (:func:`~ssdlab.io.fio_hist.interval_stats`): a job's threads are summed (fio names
    each thread's log, and each host's in client/server runs), intervals are the job's
    ``log_hist_msec``. ``t_s`` is the end of the interval in seconds, the job's first
    interval holding I/Os ending at one interval (so relative and epoch-time logs agree:
    fio's first row, written one interval after the job began, lands in the tool's second
    interval by its +10 ms rule); ``samples`` the I/Os completed in it. A log that cannot be
    read or a thread's log that is missing is an InputError, or is passed to ``on_bad`` with
    why (and its job entry left out). With ``keep_bins``, each step keeps its bins summed
    for QoS slices (:attr:`StepData.hist_bins`) while they fit in :data:`HIST_BINS_KEPT`.
    With the id columns (``host`` as in ``summary``)."""
    broken: set[int] = set()

    def noted(step: StepData, path: str, reason: str) -> None:
        broken.add(step.record.index)
        if on_bad is None:
            raise InputError(f"{path}: {reason}")
        on_bad(step, path, reason)

    frames, pending, held, kept = [], {}, 0, 0
    for step in steps:
        read = list(_hist_rows(step, noted))
        for n_bins, rows in read:
            pending.setdefault(n_bins, []).append(rows)
            held += rows.height
        if keep_bins and kept < HIST_BINS_KEPT:
            bins = _summed_bins([] if step.record.index in broken else read)
            if kept + bins.height <= HIST_BINS_KEPT:
                step.hist_bins = bins
            kept = kept + bins.height if step.hist_bins is not None else HIST_BINS_KEPT
        if held > HIST_ROWS_HELD:  # steps at a time, so memory stays bounded
            frames += [_intervals(rows, n_bins) for n_bins, rows in pending.items()]
            pending, held = {}, 0
    frames += [_intervals(rows, n_bins) for n_bins, rows in pending.items()]
    series = pl.concat(frames) if frames else pl.DataFrame(schema=LATENCY_INTERVALS_SCHEMA)
    series = series.sort("step_index", "job_index", "direction", "t_s")
    return _tagged(series, manifest, _step_table(steps), _job_hosts(manifest, summary))


HIST_LOG_BINS_SCHEMA = {
    "step_index": pl.Int64,
    "direction": pl.String,
    "time_ms": pl.Int64,
    "n_bins": pl.Int64,
    "bin": pl.Int64,
    "count": pl.Int64,
}
_STEP_BINS_SCHEMA = {k: v for k, v in HIST_LOG_BINS_SCHEMA.items() if k != "step_index"}


def _summed_bins(read: Sequence[tuple[int, pl.DataFrame]]) -> pl.DataFrame:
    """One step's histogram rows (:func:`_hist_rows`) summed over its jobs and threads,
    reads and writes: :data:`HIST_LOG_BINS_SCHEMA` without ``step_index``."""
    if not read:
        return pl.DataFrame(schema=_STEP_BINS_SCHEMA)
    rows = pl.concat(
        [
            r.select("direction", "time_ms", "bin", "count", n_bins=pl.lit(n, pl.Int64))
            for n, r in read
        ]
    )
    first = rows["time_ms"].min()
    keys = ["direction", "time_ms", "n_bins", "bin"]
    return (
        rows.filter(pl.col("direction") != "trim")
        .with_columns(time_ms=pl.col("time_ms") - first)
        .group_by(keys)
        .agg(pl.col("count").sum())
        .cast(_STEP_BINS_SCHEMA)  # type: ignore[arg-type]
    )


def _read_bins(step: StepData) -> pl.DataFrame:
    """:func:`_summed_bins` of a step's histogram logs read now (empty when one is missing
    or cannot be read)."""
    bad: list[str] = []
    read = list(_hist_rows(step, lambda _step, path, _why: bad.append(path)))
    return _summed_bins([] if bad else read)


def hist_log_bins_frame(steps: Sequence[StepData], step_indexes: Sequence[int]) -> pl.DataFrame:
    """The completion-latency histogram logs of the steps ``step_indexes`` of ``steps`` (a
    loaded native run's: :attr:`~ssdlab.results.Results.steps`) as
    :data:`HIST_LOG_BINS_SCHEMA`: per step, direction (reads and writes), row time
    (``time_ms`` from the step's first logged row: the logs' epoch milliseconds would cut
    slices at clock boundaries) and bin (of a layout of ``n_bins``), the I/Os of every thread
    and job summed. The bins a step kept when it was loaded (:attr:`StepData.hist_bins`),
    else its logs read now. A step one of whose histogram logs cannot be read or is missing
    is left out, never summed over the threads found (:func:`~ssdlab.results.load` names
    the file in ``damaged``). Empty for an import (its logs were read when it was
    imported)."""
    wanted = set(step_indexes)
    frames = []
    for step in steps:
        if step.record.index not in wanted:
            continue
        bins = step.hist_bins if step.hist_bins is not None else _read_bins(step)
        frames.append(bins.with_columns(step_index=pl.lit(step.record.index, pl.Int64)))
    if not frames:
        return pl.DataFrame(schema=HIST_LOG_BINS_SCHEMA)
    keys = ["step_index", "direction", "time_ms", "n_bins", "bin"]
    return pl.concat(frames).sort(keys).select(list(HIST_LOG_BINS_SCHEMA))

"""Import fio results produced by any tool (bench-fio, pbench, CBT, hand-written jobs).

Files are recognised by content, never by name: fio JSON/json+ results (text around them,
``normal,json`` files and ``--status-interval`` streams included), bw/iops/lat logs and
histogram logs, as the fio formats of the one registry (:mod:`ssdlab.formats`) recognise
them: a plug-in's fio format reads results too (:mod:`ssdlab.io.fio_formats`). Each JSON
result becomes a step; its logs are found through the job's ``write_*_log`` options (see
:mod:`ssdlab.logs`). The results directory gets a manifest
naming every source file and the tidy frames as Parquet under ``frames/``, so
:func:`ssdlab.load`, ``ssdlab summary`` and ``ssdlab report`` treat it like a native run.

Only regular files are opened (a FIFO or ``/dev/zero`` under a tree would hang or fill
memory), a directory that cannot be read or a name that is not UTF-8 is skipped with the
reason, and the output directory is locked (:func:`~ssdlab.lock.results_lock`) while the
import writes it. Files whose names are not fio log names are read first. Each JSON
result among them is parsed and its iops/bw/clat logs are read at once; every
:data:`BATCH_BYTES` of logs go to a worker thread that parses them and sums the time
series (polars releases the GIL) while the main thread reads on (at most :data:`PENDING`
batches ahead), and their bytes are then dropped. A per-I/O log too large to keep is read
by the worker a chunk at a time and summed per millisecond
(:func:`~ssdlab.io.fio_log.per_io_sums`). Histogram logs are read once the files are,
into ``latency_intervals``; the slat/lat logs a result names are only checked to be logs:
nothing is imported from them. Files with log names that no
result names are read last, only to say what they are; a JSON result among them (a result
saved under a log's name) is numbered after the others.

fio writes a log per thread; a step none of whose logs of a kind were kept (a tree of JSON
results alone) simply has none of that kind, but a step that has some of a kind's logs
and misses others (:func:`~ssdlab.logs.job_logs`) is never summed over the threads
found: each missing log is a skipped file, and the step's time series (a histogram log: its
job entry's latency intervals) left out.
"""

from __future__ import annotations

import contextlib
import io
import operator
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from . import __version__
from .atomic import fsync_dir, write_error
from .errors import InputError
from .formats import FORMATS, Format
from .io.fio_formats import SNIFF_BYTES, Recognise, read_result, why_not_fio
from .io.fio_json import JSON_KIND, FioRows, parse_fio_json
from .io.fio_log import log_problem
from .io.text import check_utf8_path, read_bytes
from .layout import FRAMES, MANIFEST, frame_file
from .lock import results_lock
from .logs import (
    EXPECTED,
    MISSING_LOG,
    TIMESERIES_KINDS,
    JobLogs,
    LogIndex,
    job_logs,
    log_params,
)
from .manifest import Manifest, StepRecord, new_run_id, now
from .pipeline import (
    Lost,
    StepData,
    core_frames,
    fio_error,
    latency_intervals_frame,
    lost_rows,
    series_of,
    timeseries_frame,
)

FIRST_READ = 2**16  # one read() takes a file this small whole
KEEP_BYTES = 64 * 2**20  # files up to this size are kept from one read; larger: read again
BATCH_BYTES = 2**20  # log bytes per batch of time series
PENDING = 2  # batches read ahead of the worker
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO does not block
_OPEN_REGULAR = _OPEN_FLAGS | os.O_NOFOLLOW  # a file found regular: a link put in its place fails
NO_RESULT_NAMES = "fio log that no imported JSON result names (write_*_log prefix)"


@dataclass
class Skipped:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{_shown(str(self.path))}: {self.reason}"


def _shown(path: str) -> str:
    """A path as it can be printed: bytes of a name that is not UTF-8 as ``\\xNN``."""
    return path.encode(errors="surrogateescape").decode(errors="backslashreplace")


@dataclass
class ImportReport:
    """What an import read, used and skipped."""

    out: Path
    results: int = 0
    logs: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    #: the results a job of which reported an error (fio's ``error``): failed steps
    failed: list[Skipped] = field(default_factory=list)
    #: why fio logs were not paired with a result, and how many
    unpaired: dict[str, int] = field(default_factory=dict)
    #: log rows left out of the time series for a reason the end of fio's logs does not
    #: explain (all are counted in the manifest's notes)
    notes: list[str] = field(default_factory=list)


def walk_files(paths: Iterable[Path], out: Path) -> tuple[list[str], dict[str, str]]:
    """Every file under ``paths`` but the results directory ``out``, as strings (cheaper
    than Path objects by the ten thousand), and the paths left out with why: directories
    that cannot be read, names that are not UTF-8 (nothing could name them in the results)."""
    files, skipped = _walk(paths, out)
    return list(files), skipped


_NAME = operator.attrgetter("name")


def _walk(paths: Iterable[Path], out: Path) -> tuple[dict[str, bool], dict[str, str]]:
    """:func:`walk_files`, each file with whether its directory entry says it is a regular
    file (then it needs no stat before it is read). Directories are walked as
    :func:`os.walk` does (top-down, names sorted, symbolic links to directories not
    followed), from :func:`os.scandir`'s entries."""
    files: dict[str, bool] = {}  # once each, however the roots overlap
    skipped: dict[str, str] = {}
    excluded = str(out)
    for root in paths:
        if not root.is_dir():
            if not root.exists():
                raise InputError(f"{root}: no such file or directory")
            files.setdefault(str(root), False)  # what it is, read() says
            continue
        stack = [str(root)]
        while stack:
            directory = stack.pop()
            try:
                with os.scandir(directory) as listing:
                    entries = sorted(listing, key=_NAME)
            except OSError as exc:
                skipped[exc.filename] = f"cannot read directory: {exc.strerror}"
                continue
            subdirs = []
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    path = f"{directory}{os.sep}{entry.name}"
                    files.setdefault(path, entry.is_file(follow_symlinks=False))
                elif not entry.is_symlink():  # a link to a directory is not followed
                    sub = os.path.join(directory, entry.name)
                    if sub != excluded:
                        subdirs.append(sub)
            stack += reversed(subdirs)  # the first popped first: os.walk's order
    for path in files:
        if not path.isascii() and _shown(path) != path:
            skipped[path] = "file name is not UTF-8; rename it to import it"
    return {f: regular for f, regular in files.items() if f not in skipped}, skipped


def _step_name(path: str, dirs: list[str]) -> str:
    """A result's path under the directory given (``dirs`` end with a separator), or its
    file name, without its suffix."""
    rel = next((path[len(d) :] for d in dirs if path.startswith(d)), os.path.basename(path))
    stem, suffix = os.path.splitext(rel)
    return stem if suffix else rel


def _series(
    logs: JobLogs, params: list[dict], on_status: Callable[[str], None] | None = None
) -> tuple[pl.DataFrame, dict[str, str], Lost]:
    """The time series of a batch of results' logs (run by the worker thread);
    ``on_status`` is told of each large per-I/O log read."""
    return series_of(logs, params, on_status and (lambda path: on_status(_reading(path))))


def _reading(path: str) -> str:
    """What the import is doing while it reads a large per-I/O log."""
    try:
        size = f" ({os.stat(path).st_size / 1e9:.1f} GB)"
    except OSError:
        size = ""
    return f"reading per-I/O log {_shown(path)}{size}"


def _regular_stat(fd: int, path: str) -> os.stat_result:
    """The stat of an open file; InputError saying what it is unless it is a regular file."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        read_bytes(Path(path), 0)  # raises the InputError that says what it is
    return info


class _Import:
    """One import's files, what each turned out to be, and its batches of time series:
    a result's logs are read (and checked, their lines counted) as soon as it is parsed,
    and every :data:`BATCH_BYTES` of them go to the worker thread to be parsed and summed."""

    def __init__(
        self,
        files: dict[str, bool],
        dirs: list[str],
        strict: bool,
        on_file: Callable[[int, int], None] | None,
        on_status: Callable[[str], None] | None,
        pool: ThreadPoolExecutor,
        formats: list[Format[Any]],
    ) -> None:
        self.recognise = Recognise(formats)
        self.index = LogIndex()
        self.named = {path: self.index.add(path) for path in files}  # the log type a name says
        self.regular = files  # path -> known to be a regular file (its directory entry)
        self.dirs = dirs  # the roots that are directories, as step names are relative to them
        self.strict = strict
        self.on_file = on_file
        self.on_status = on_status
        self.pool = pool
        self.done = 0  # files read, for progress (a file two results name counts twice)
        self.skipped: dict[str, Skipped] = {}  # once per file
        self.partial: dict[str, int] = {}  # log path -> lines cut short and dropped
        self.sniffed: dict[str, str] = {}  # path -> json, log, hist or "" (not fio output)
        self.unknown: dict[str, str] = {}  # path -> why it is not fio output
        self.results: list[StepData] = []  # imported steps, numbered as found
        self.incomplete: set[int] = set()  # steps whose time series are left out
        self.logs = JobLogs()  # read, not yet handed to the worker
        self.params: list[dict] = []
        self.batches: list[tuple[Future[tuple[pl.DataFrame, dict[str, str], Lost]], JobLogs, list]]
        self.batches = []
        self.lost: Lost = {}  # log rows left out of the time series

    def skip(self, path: str, reason: str) -> None:
        if self.strict:
            raise InputError(f"{_shown(path)}: {reason}")
        self.skipped.setdefault(path, Skipped(Path(path), reason))

    def _read(self, path: str, limit: int = KEEP_BYTES) -> tuple[bytes, bool]:
        """A regular file's bytes and True; or, when it is larger than ``limit``, its first
        bytes and False. Counted for progress. InputError for anything but a regular file
        (a FIFO would block, ``/dev/zero`` never ends), OSError when it cannot be read. A
        file its directory entry says is regular is opened without following a symbolic
        link (one put in its place meanwhile is refused) and needs no stat unless its first
        read fills the buffer."""
        self.done += 1
        if self.on_file and self.done % 1000 == 0:
            self.on_file(min(self.done, len(self.named)), len(self.named))
        regular = self.regular.get(path, False)
        fd = os.open(path, _OPEN_REGULAR if regular else _OPEN_FLAGS)
        try:
            info = None if regular else _regular_stat(fd, path)
            first = FIRST_READ if limit >= FIRST_READ else limit + 1
            if info is not None and info.st_size < first:
                first = info.st_size + 1
            data = os.read(fd, first)  # most files: whole in one read
            if len(data) < first:
                return data, True
            if limit < FIRST_READ:
                return data, False
            if (info or _regular_stat(fd, path)).st_size > limit:
                return data, False
            return data + b"".join(iter(lambda: os.read(fd, 2**20), b"")), True
        finally:
            os.close(fd)

    def read(self, paths: Iterable[str], limit: int = KEEP_BYTES) -> None:
        """Read and recognise files (their first ``limit`` bytes, unless a JSON result
        needs more); a JSON result is parsed and its logs read."""
        for path in paths:
            try:
                raw, whole = self._read(path, limit)
            except OSError as exc:
                self.skip(path, f"cannot read: {exc.strerror}")
                continue
            except InputError as exc:
                self.skip(path, str(exc).removeprefix(f"{path}: "))
                continue
            try:
                kind, plugin = self.recognise(path, raw, whole)
            except InputError as exc:
                self.skip(path, str(exc).removeprefix(f"{path}: "))
                continue
            self.sniffed[path] = kind
            if not kind:
                self.unknown[path] = why_not_fio(path, raw)
            elif kind == "json":
                try:
                    if plugin is not None:
                        rows = read_result(plugin, path)
                    else:
                        rows = parse_fio_json(
                            raw if whole else read_bytes(Path(path), kind=JSON_KIND), Path(path)
                        )
                except InputError as exc:
                    self.skip(path, str(exc).removeprefix(f"{path}: "))
                    continue
                self._result(path, rows)

    def _result(self, path: str, rows: FioRows) -> None:
        """A JSON result: a step (a failed one when a job reported an error: its logs are
        paired, not read), its logs read."""
        error = fio_error(rows.jobs)
        if error and self.strict:
            raise InputError(f"{_shown(path)}: {error}")
        folder = os.path.dirname(path)
        logs, gaps = job_logs(rows.meta, folder, self.index)
        kept = {log.kind for log in logs}  # a kind with no log at all was not kept: no gap
        missing = [m for m in gaps if m.kind in kept]
        record = StepRecord(
            index=len(self.results) + 1,
            name=_step_name(path, self.dirs),
            status="failed" if error else "ok",
            error=error,
            sources=[path] + [log.path for log in logs],
        )
        self.results.append(StepData(record, rows, logs, missing=missing))
        if error:
            return
        for log in missing:
            if log.kind in TIMESERIES_KINDS:
                self.skip(log.path, f"{MISSING_LOG}; step {record.name}'s time series left out")
                self.incomplete.add(record.index)
        ids = {"step_index": record.index}
        self.params += [p | ids for p in log_params(rows.meta, rows.jobs)]
        for log in logs:
            if log.kind in TIMESERIES_KINDS:
                try:
                    raw, whole = self._read(log.path, KEEP_BYTES)  # larger: read by the worker
                except (OSError, InputError):
                    raw, whole = b"", False  # JobLogs tries again and records why it cannot
                self.logs.add(log, ids, raw if whole else None)
                continue
            if log.kind == "clat_hist":  # read whole for latency_intervals
                continue
            try:  # nothing is imported from the others: they are only checked to be logs
                head, _ = self._read(log.path, SNIFF_BYTES)
            except OSError as exc:
                self.skip(log.path, f"cannot read: {exc.strerror}")
                continue
            except InputError as exc:
                self.skip(log.path, str(exc).removeprefix(f"{log.path}: "))
                continue
            if why := log_problem(head):
                self.skip(log.path, why)
        if self.logs.nbytes >= BATCH_BYTES or self.logs.streamed:
            self.submit()

    def submit(self) -> None:
        """Hand the logs read so far to the worker; wait while it is :data:`PENDING`
        batches behind, so that what is read stays bounded."""
        if self.params:
            future = self.pool.submit(_series, self.logs, self.params, self.on_status)
            self.batches.append((future, self.logs, self.params))
            if len(self.batches) > PENDING:
                wait([self.batches[-1 - PENDING][0]])
        self.logs, self.params = JobLogs(), []

    def timeseries(self) -> pl.DataFrame:
        """The time series of every batch; bad logs skipped (a measure a thread's bad log
        misses is null: :func:`~ssdlab.logs.timeseries`), the series of :attr:`incomplete`
        steps left out. The worker takes batches from the front, and the main thread, done
        reading, those it has not started from the back."""
        self.submit()
        taken = {}
        for n in reversed(range(len(self.batches))):
            future, logs, params = self.batches[n]
            if not future.cancel():
                break  # the worker has this one, and every one before it
            taken[n] = _series(logs, params, self.on_status)
        parts = []
        for n, (future, logs, _) in enumerate(self.batches):
            part, bad, lost = taken[n] if n in taken else future.result()
            parts.append(part)
            for path, reason in bad.items():
                self.skip(path, reason)
            self.lost |= lost
            self.partial |= logs.partial
        series = pl.concat(parts) if parts else _series(JobLogs(), [])[0]
        return series.filter(~pl.col("step_index").is_in(list(self.incomplete)))


def import_results(
    paths: list[Path],
    out: Path,
    *,
    label: str | None = None,
    strict: bool = False,
    on_file: Callable[[int, int], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    formats: list[Format[Any]] | None = None,
) -> ImportReport:
    """Import every fio output under ``paths`` into the results directory ``out``.

    Results are parsed to rows and the frames of all of them are built together; their
    logs are parsed in bulk, a batch at a time. Bad or unrelated files are skipped with a
    reason (``strict`` makes the first one an error; nothing is left in ``out`` then).
    ``on_file(done, total)`` reports progress, ``on_status(text)`` a long step (reading
    a large per-I/O log). Another process writing ``out`` makes this an error that leaves
    ``out`` as it was. ``formats``: the fio formats files are recognised by (default: the
    registry's, ``FORMATS.all("fio")``).
    """
    check_utf8_path(out, "--out")
    new = not out.exists()
    with results_lock(out, "import"):
        if (out / MANIFEST).exists():  # checked under the lock: a finished import counts
            raise InputError(f"{out} already holds results; import into a new directory")
        made = out if new else made_by_import(out)  # what a failure removes
        roots = [Path(os.path.normpath(p.absolute())) for p in paths]
        out_dir = Path(os.path.normpath(out.absolute()))
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="ssdlab-import") as pool:
                files, unreadable = _walk(roots, out_dir)
                dirs = [os.path.join(root, "") for root in roots if root.is_dir()]
                fio = FORMATS.all("fio") if formats is None else formats
                run = _Import(files, dirs, strict, on_file, on_status, pool, fio)
                try:
                    for path, reason in unreadable.items():
                        run.skip(path, reason)
                    return _import(run, paths, roots, out, label)
                finally:
                    for future, _, _ in run.batches:  # an error stops the work not yet started
                        future.cancel()
        except BaseException:
            if made is not None:  # removed while still locked: no one else has begun in it
                shutil.rmtree(made, ignore_errors=True)
            raise


def made_by_import(out: Path) -> Path | None:
    """What an import into ``out`` makes, so that a failed one removes it: ``out`` when it
    does not exist yet, else its frames folder when that does not (else nothing)."""
    if not out.exists():
        return out
    frames = out / FRAMES
    return None if frames.exists() else frames


def _import(
    run: _Import, paths: list[Path], roots: list[Path], out: Path, label: str | None
) -> ImportReport:
    run.read(path for path, named in run.named.items() if named is None)
    claimed = {log.path for result in run.results for log in result.logs}
    unclaimed = [path for path, named in run.named.items() if named and path not in claimed]
    run.read(unclaimed, SNIFF_BYTES)  # what they are; a JSON result among them still counts
    if run.on_file:
        run.on_file(len(run.named), len(run.named))
    if not run.results:
        why = [
            Skipped(Path(p), run.unknown.get(p) or NO_RESULT_NAMES)
            for p in run.sniffed
            if p not in run.skipped
        ]
        why = sorted([*why, *run.skipped.values()], key=lambda s: str(s.path))
        shown = "; ".join(map(str, why[:3])) + (f" (and {len(why) - 3} more)" if why[3:] else "")
        raise InputError(
            f"no fio JSON result found under {', '.join(map(str, paths))}"
            + (f": {shown}" if shown else "")
        )
    claimed = {log.path for result in run.results for log in result.logs}
    unpaired: dict[str, int] = {}
    for path, kind in run.sniffed.items():
        if path not in claimed and kind != "json":
            run.skip(path, run.unknown.get(path) or NO_RESULT_NAMES)
            if kind:
                unpaired[NO_RESULT_NAMES] = unpaired.get(NO_RESULT_NAMES, 0) + 1
    steps = [s for s in run.results if s.record.status == "ok"]  # a failed one is left out
    if not steps:
        first = run.results[0].record
        raise InputError(
            f"every fio result under {', '.join(map(str, paths))} reported a job error "
            f"(first: {_shown(first.sources[0])}: {first.error}); nothing to import"
        )

    manifest = Manifest(
        run_id=new_run_id(),
        label=label or ", ".join(p.name for p in roots),
        source="import",
        suite="import",
        suite_description=f"imported from {', '.join(map(str, roots))}",
        fio_version=", ".join(sorted({s.fio.meta["fio_version"] for s in run.results})),
        ssdlab_version=__version__,
        status="complete",
        started=now(),
        ended=now(),
        steps=[s.record for s in run.results],
    )
    frames = core_frames(manifest, steps)
    write_frames(out, frames)  # while the worker sums the last batches
    intervals = latency_intervals_frame(
        manifest, steps, frames["summary"], lambda step, log, reason: run.skip(log, reason)
    )
    series = timeseries_frame(manifest, steps, run.timeseries(), frames["summary"])
    manifest.notes += [
        f"{path}: last line cut short (fio stopped mid-write), dropped"
        for path in sorted(run.partial)
    ]
    kept = {s.record.index for s in steps} - run.incomplete  # steps whose series are imported
    owner = {log.path: s.record.index for s in steps for log in s.logs}
    lost = [
        (f"{path}: {lost_rows(reason, n)}", reason in EXPECTED)
        for path, reasons in sorted(run.lost.items())
        if owner[path] in kept
        for reason, n in reasons.items()
    ]
    manifest.notes += [line for line, _ in lost]
    write_import(out, manifest, {"timeseries": series, "latency_intervals": intervals})
    skipped = sorted(run.skipped.values(), key=lambda s: str(s.path))
    failed = [
        Skipped(Path(s.record.sources[0]), f"{s.record.error}; step {s.record.name} left out")
        for s in run.results
        if s.record.status == "failed"
    ]
    return ImportReport(
        out=out,
        results=len(run.results),
        logs=len(claimed),
        skipped=skipped,
        failed=failed,
        unpaired=unpaired,
        notes=[line for line, expected in lost if not expected],
    )


def write_frames(out: Path, frames: dict[str, pl.DataFrame]) -> None:
    """Write frames as Parquet, each atomically: every one to a temporary file beside its
    own, the files synced together (one journal commit rather than two per frame), renamed,
    then their folder synced once. SsdlabError (one line) when a file cannot be written;
    the temporary files are removed."""
    folder = out / FRAMES
    written: list[tuple[int, str, Path]] = []  # (open temporary file, its name, frame file)
    path = folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in frames.items():
            path = frame_file(out, name)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            written.append((fd, tmp, path))
            buf = io.BytesIO()  # polars' own errors apart from the file's (a full disk)
            frame.write_parquet(buf)
            with os.fdopen(fd, "wb", closefd=False) as fh:
                fh.write(buf.getbuffer())
        with ThreadPoolExecutor(len(written) or 1) as pool:  # together: one journal commit
            syncs = [pool.submit(_sync, fd, path) for fd, _, path in written]
        for sync in syncs:
            sync.result()
        for _, tmp, path in written:
            os.replace(tmp, path)
        fsync_dir(folder)
    except BaseException as exc:
        for _, tmp, _ in written:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise
    finally:
        for fd, _, _ in written:
            os.close(fd)


def _sync(fd: int, path: Path) -> None:
    """fsync the temporary file of ``path``; SsdlabError naming ``path`` when it fails."""
    try:
        os.fsync(fd)
    except OSError as exc:
        raise write_error(path, exc) from None


def write_import(out: Path, manifest: Manifest, frames: dict[str, pl.DataFrame]) -> None:
    """Write the frames and then the manifest that makes them count."""
    write_frames(out, frames)
    manifest.save(out)

"""Import fio results produced by any tool (bench-fio, pbench, CBT, hand-written jobs).

Files are recognised by content, never by name: fio JSON/json+ results (text around them,
``normal,json`` files and ``--status-interval`` streams included), bw/iops/lat logs and
histogram logs. Each JSON result becomes a step; its logs are found through the job's
``write_*_log`` options (see :mod:`ssdlab.logs`). The results directory gets a manifest
naming every source file and the tidy frames as Parquet under ``frames/``, so
:func:`ssdlab.load`, ``ssdlab summary`` and ``ssdlab report`` treat it like a native run.

Files whose names are not fio log names are read first. Each JSON result among them is
parsed and its iops/bw/clat logs are read at once; every :data:`BATCH_BYTES` of logs go
to a worker thread that parses them and sums the time series (polars releases the GIL)
while the main thread reads on, and their bytes are then dropped. The slat/lat and
histogram logs a result names are only checked to be logs: nothing is imported from them.
Files with log names that no result names are read last, only to say what they are; a
JSON result among them (a result saved under a log's name) is numbered after the others.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from . import __version__
from .atomic import write_bytes_atomic
from .errors import InputError
from .io.fio_hist import GROUPS
from .io.fio_json import FioJson, FioRows, fio_frames, parse_fio_json
from .io.fio_log import LOG_ROW, log_problem
from .logs import (
    TIMESERIES_KINDS,
    JobLog,
    JobLogs,
    LogIndex,
    find_job_logs,
    log_params,
    timeseries,
)
from .manifest import MANIFEST, Manifest, StepRecord, now
from .results import FRAMES_DIR

SNIFF_BYTES = 8192
FIRST_READ = 2**16  # one read() takes a file this small whole
KEEP_BYTES = 64 * 2**20  # files up to this size are kept from one read; larger: read again
BATCH_BYTES = 16 * 2**20  # log bytes per batch of time series
HIST_MIN_COLUMNS = 3 + GROUPS[2]  # the coarsest histogram log (fio 2.x, coarseness 6)
NO_RESULT_NAMES = "fio log that no imported JSON result names (write_*_log prefix)"


@dataclass
class Skipped:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class ImportReport:
    """What an import read, used and skipped."""

    out: Path
    results: int = 0
    logs: int = 0
    skipped: list[Skipped] = field(default_factory=list)


def sniff(data: bytes) -> str | None:
    """``json``, ``log``, ``hist`` or None, from the first bytes of a file."""
    end = data.find(b"\n", 0, SNIFF_BYTES)
    first = data[: SNIFF_BYTES if end < 0 else end]
    if LOG_ROW.match(first):  # first: a log's first line settles it without a scan
        return "hist" if first.count(b",") + 1 >= HIST_MIN_COLUMNS else "log"
    if data.find(b'"fio version"', 0, SNIFF_BYTES) >= 0:
        return "json"
    return None


def _why_not(head: bytes) -> str:
    if not head.strip():
        return "empty file"
    if b"\0" in head:
        return "binary file, not fio output"
    if b"(groupid=" in head or re.search(rb"^fio-\d", head, re.MULTILINE):
        return "fio normal-format text; import reads JSON (--output-format=json or json+) and logs"
    if head.lstrip()[:1] in (b"{", b"["):
        return 'JSON that is not fio output (no "fio version")'
    return "not fio output (no fio JSON result or log rows)"


def _walk(paths: Iterable[Path]) -> list[str]:
    """Every file under ``paths``, as strings (cheaper than Path objects by the ten thousand)."""
    files: list[str] = []
    for root in paths:
        if root.is_file():
            files.append(str(root))
            continue
        if not root.is_dir():
            raise InputError(f"{root}: no such file or directory")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            files += [f"{dirpath}{os.sep}{f}" for f in sorted(filenames)]
    return list(dict.fromkeys(files))  # once each, however the roots overlap


def _step_name(path: str, dirs: list[str]) -> str:
    """A result's path under the directory given (``dirs`` end with a separator), or its
    file name, without its suffix."""
    rel = next((path[len(d) :] for d in dirs if path.startswith(d)), os.path.basename(path))
    stem, suffix = os.path.splitext(rel)
    return stem if suffix else rel


def _series(logs: JobLogs, params: list[dict]) -> tuple[pl.DataFrame, dict[str, str]]:
    """The time series of a batch of results' logs (run by the worker thread)."""
    rows, bad = logs.parse()
    return timeseries(rows, pl.DataFrame(params), keys=["step_index"]), bad


@dataclass
class _Result:
    path: str
    rows: FioRows
    logs: list[JobLog]


class _Import:
    """One import's files, what each turned out to be, and its batches of time series:
    a result's logs are read (and checked, their lines counted) as soon as it is parsed,
    and every :data:`BATCH_BYTES` of them go to the worker thread to be parsed and summed."""

    def __init__(
        self,
        files: list[str],
        strict: bool,
        on_file: Callable[[int, int], None] | None,
        pool: ThreadPoolExecutor,
    ) -> None:
        self.index = LogIndex()
        self.named = {path: self.index.add(path) for path in files}  # the log type a name says
        self.strict = strict
        self.on_file = on_file
        self.pool = pool
        self.done = 0  # files read, for progress (a file two results name counts twice)
        self.skipped: dict[str, Skipped] = {}  # once per file
        self.sniffed: dict[str, str] = {}  # path -> json, log, hist or "" (not fio output)
        self.unknown: dict[str, str] = {}  # path -> why it is not fio output
        self.results: list[_Result] = []
        self.logs = JobLogs()  # read, not yet handed to the worker
        self.params: list[dict] = []
        self.batches: list[tuple[Future[tuple[pl.DataFrame, dict[str, str]]], JobLogs, list]] = []

    def skip(self, path: str, reason: str) -> None:
        if self.strict:
            raise InputError(f"{path}: {reason}")
        self.skipped.setdefault(path, Skipped(Path(path), reason))

    def _read(self, path: str, limit: int = KEEP_BYTES) -> tuple[bytes, bool]:
        """A file's bytes and True; or, when it is larger than ``limit``, its first bytes
        and False. Counted for progress."""
        self.done += 1
        if self.on_file and self.done % 1000 == 0:
            self.on_file(min(self.done, len(self.named)), len(self.named))
        fd = os.open(path, os.O_RDONLY)
        try:
            first = min(FIRST_READ, limit + 1)
            data = os.read(fd, first)  # most files: whole, without a stat
            if len(data) < first:
                return data, True
            if limit < FIRST_READ or os.fstat(fd).st_size > limit:
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
            kind = self.sniffed[path] = sniff(raw) or ""
            if not kind:
                self.unknown[path] = _why_not(raw[:SNIFF_BYTES])
            elif kind == "json":
                try:
                    rows = parse_fio_json(raw if whole else Path(path).read_bytes(), Path(path))
                except InputError as exc:
                    self.skip(path, str(exc).removeprefix(f"{path}: "))
                    continue
                except OSError as exc:
                    self.skip(path, f"cannot read: {exc.strerror}")
                    continue
                self._result(path, rows)

    def _result(self, path: str, rows: FioRows) -> None:
        logs = find_job_logs(rows.meta, os.path.dirname(path), self.index)
        self.results.append(_Result(path, rows, logs))
        ids = {"step_index": len(self.results)}
        self.params += [p | ids for p in log_params(rows.meta, rows.jobs)]
        for log in logs:
            if log.kind in TIMESERIES_KINDS:
                try:
                    raw, whole = self._read(log.path)
                except OSError:
                    raw, whole = b"", False  # JobLogs tries again and records why it cannot
                self.logs.add(log, ids, raw if whole else None)
                continue
            try:  # nothing is imported from the others: they are only checked to be logs
                head, _ = self._read(log.path, SNIFF_BYTES)
            except OSError as exc:
                self.skip(log.path, f"cannot read: {exc.strerror}")
                continue
            if why := log_problem(head):
                self.skip(log.path, why)
        if self.logs.batch.nbytes >= BATCH_BYTES:
            self.submit()

    def submit(self) -> None:
        """Hand the logs read so far to the worker."""
        if self.params:
            future = self.pool.submit(_series, self.logs, self.params)
            self.batches.append((future, self.logs, self.params))
        self.logs, self.params = JobLogs(), []

    def timeseries(self) -> pl.DataFrame:
        """The time series of every batch; bad logs skipped. The worker takes batches from
        the front, and the main thread, done reading, those it has not started from the
        back."""
        self.submit()
        taken = {}
        for n in reversed(range(len(self.batches))):
            future, logs, params = self.batches[n]
            if not future.cancel():
                break  # the worker has this one, and every one before it
            taken[n] = _series(logs, params)
        parts = []
        for n, (future, _, _) in enumerate(self.batches):
            part, bad = taken[n] if n in taken else future.result()
            parts.append(part)
            for path, reason in bad.items():
                self.skip(path, reason)
        return pl.concat(parts) if parts else _series(JobLogs(), [])[0]


def import_results(
    paths: list[Path],
    out: Path,
    *,
    label: str | None = None,
    strict: bool = False,
    on_file: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every fio output under ``paths`` into the results directory ``out``.

    Results are parsed to rows and the frames of all of them are built together; their
    logs are parsed in bulk, a batch at a time. Bad or unrelated files are skipped with a
    reason (``strict`` makes the first one an error; nothing is left in ``out`` then).
    ``on_file(done, total)`` reports progress.
    """
    if (out / MANIFEST).exists():
        raise InputError(f"{out} already holds results; import into a new directory")
    made = next((d for d in (out, out / FRAMES_DIR) if not d.exists()), None)
    roots = [Path(os.path.normpath(p.absolute())) for p in paths]
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="ssdlab-import") as pool:
            run = _Import(_walk(roots), strict, on_file, pool)
            try:
                return _import(run, paths, roots, out, label)
            finally:
                for future, _, _ in run.batches:  # an error stops the work not yet started
                    future.cancel()
    except BaseException:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise


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
        raise InputError(f"no fio JSON result found under {', '.join(map(str, paths))}")
    claimed = {log.path for result in run.results for log in result.logs}
    for path, kind in run.sniffed.items():
        if path not in claimed and kind != "json":
            run.skip(path, run.unknown.get(path) or NO_RESULT_NAMES)

    dirs = [os.path.join(root, "") for root in roots if root.is_dir()]
    ids = [
        {"step_index": n, "step": _step_name(r.path, dirs)}
        for n, r in enumerate(run.results, start=1)
    ]
    fio = fio_frames([r.rows for r in run.results], ids)
    manifest = Manifest(
        run_id=f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
        label=label or ", ".join(p.name for p in roots),
        source="import",
        suite="import",
        suite_description=f"imported from {', '.join(map(str, roots))}",
        fio_version=", ".join(sorted({r.rows.meta["fio_version"] for r in run.results})),
        ssdlab_version=__version__,
        status="complete",
        started=now(),
        ended=now(),
        steps=[
            StepRecord(
                index=i["step_index"],
                name=i["step"],
                dir=r.path,
                status="ok",
                sources=[r.path] + [log.path for log in r.logs],
            )
            for i, r in zip(ids, run.results, strict=True)
        ],
    )
    write_frames(out, _frames(manifest, fio))  # while the worker sums the last batches
    names = pl.DataFrame(ids, schema={"step_index": pl.Int64, "step": pl.String})
    series = run.timeseries().join(names, on="step_index")
    write_import(out, manifest, {"timeseries": series.with_columns(_common(manifest))})
    skipped = sorted(run.skipped.values(), key=lambda s: str(s.path))
    return ImportReport(out=out, results=len(run.results), logs=len(claimed), skipped=skipped)


def _common(manifest: Manifest, host: pl.Expr | None = None) -> list[pl.Expr]:
    """The columns a native run's frames have and an import's rows take as constants (the
    ``host`` is null unless given)."""
    return [
        pl.lit(manifest.run_id, dtype=pl.String).alias("run_id"),
        pl.lit(manifest.label, dtype=pl.String).alias("label"),
        pl.lit(None, dtype=pl.String).alias("block"),
        pl.lit(None, dtype=pl.Int64).alias("round"),
        pl.lit("ok", dtype=pl.String).alias("status"),
        pl.lit(None, dtype=pl.String).alias("host") if host is None else host.alias("host"),
    ]


def _frames(manifest: Manifest, fio: FioJson) -> dict[str, pl.DataFrame]:
    """The frames of the results themselves (summary, latency bins, percentiles,
    snapshots); the summary keeps fio's hostname as ``host``."""
    hostname = pl.col("hostname").cast(pl.String) if "hostname" in fio.jobs.columns else None
    common = _common(manifest)
    return {
        "summary": fio.jobs.with_columns(_common(manifest, hostname)),
        "latency_hist": fio.bins.filter(pl.col("stat") == "clat").drop("stat").with_columns(common),
        "percentiles": fio.percentiles.with_columns(common),
        "snapshots": fio.snapshots.with_columns(common),
    }


def write_frames(out: Path, frames: dict[str, pl.DataFrame]) -> None:
    """Write frames as Parquet, each atomically."""
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        buf = io.BytesIO()
        frame.write_parquet(buf)
        write_bytes_atomic(out / FRAMES_DIR / f"{name}.parquet", buf.getvalue())


def write_import(out: Path, manifest: Manifest, frames: dict[str, pl.DataFrame]) -> None:
    """Write the frames and then the manifest that makes them count."""
    write_frames(out, frames)
    manifest.save(out)

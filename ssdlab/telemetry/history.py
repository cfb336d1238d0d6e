"""Fleet SMART history: trees of periodic SMART captures of many drives as one frame.

:func:`import_smart_history` walks the trees it is given and recognises every regular file by
its content with the SMART formats of :mod:`ssdlab.formats` (smartctl ``-j`` of any 7.x,
nvme-cli ``smart-log``, ``id-ctrl``, OCP ``smart-add-log``, Intel ``smart-log-add``,
smartctl_exporter dumps, plug-ins).

Snapshots. A capture naming its drive (smartctl, a dump's ``smartctl_device`` line) is one
snapshot. Captures that do not (``nvme smart-log``, OCP, Intel) take the drive named in
their directory (by an ``nvme id-ctrl`` or smartctl capture), else in the nearest parent
directory naming any, when it names exactly one drive (else they are skipped). When every
capture of a directory is of a different format, they were taken together and are merged
into one snapshot (:func:`~ssdlab.telemetry.snapshot.merge_records` says which file gives
which field); otherwise each capture is a snapshot of its own. So both layouts work:
``host/serial/day.json`` (smartctl) and ``serial/id-ctrl.json`` + ``serial/day/{smart-log,
ocp}.json`` (nvme-cli). When a directory holds several captures of each format (no folder per
snapshot), the k-th capture of each format in time order (the capture's time, else its
modification time) make the k-th snapshot, provided every format holding counters has the
same number of captures (and each other format, an ``id-ctrl``, one).

A drive is its model + serial, whichever device read it: the SMART / health log is the
controller's, the same through ``/dev/nvme0`` and ``/dev/nvme0n1`` (``namespace`` says which
namespace device a capture read, null for the controller). Two captures of one drive with
the same capture time (its namespaces read at once) are one snapshot: the first by
namespace (then path) is kept; one whose counters differ is reported as a skipped file.

Time. A snapshot's ``time`` is the capture's own (smartctl's ``local_time.time_t``, a
Prometheus sample's timestamp), else the file's modification time; ``time_source`` says
which (``capture`` or ``mtime``).

The results directory ``out`` gets ``frames/smart_history.parquet`` (:data:`SCHEMA`, one row
per drive and snapshot, sorted by drive and time) and ``smart_history.json``
(:data:`ssdlab.layout.SMART_HISTORY`), what was imported and
every file skipped with why. Units follow the column names (bytes, °C, hours, percent).
WAF is NAND / host bytes written (else NAND / host pages, Micron/Crucial), as
:func:`~ssdlab.telemetry.snapshot.waf`: ``waf`` between the snapshot and the drive's
previous one (null when either lacks a counter, no host bytes were written, or a counter
went down: the drive was reset or replaced), ``lifetime_waf`` over the drive's life.

Only regular files are read (a FIFO or ``/dev/zero`` in a tree is skipped with why), each
once and whole (within the size limit of SMART captures); rows
are collected per column and become polars frames every :data:`CHUNK_ROWS` snapshots, so
memory stays a few columns of numbers.
With ``workers``, processes read whole top-level subtrees in parallel, each building frames.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from .. import __version__
from ..atomic import write_text_atomic
from ..console import plural
from ..errors import InputError
from ..formats import FORMATS, Format, Probe, recognise
from ..importer import Skipped, made_by_import, walk_files, write_frames
from ..io.text import read_file
from ..layout import SMART_HISTORY, frame_file, frame_path
from ..lock import results_lock
from ..manifest import now
from .record import SmartRecord
from .smart import records_of, smartctl_exporter
from .snapshot import SOURCE_PRECEDENCE, merge_records

FRAME = "smart_history"
CAPTURE_LIMIT = "SMART captures"  #: its size limit's name (:data:`~ssdlab.io.text.SIZE_LIMITS`)
CHUNK_ROWS = 100_000
INT64_MAX = 2**63 - 1
DRIVE_KEYS = ("model", "serial")
#: frame column -> SmartRecord field
FIELDS = {
    "firmware": "firmware",
    "capacity_bytes": "capacity_bytes",
    "host": "host",
    "host_written_bytes": "host_bytes_written",
    "host_read_bytes": "host_bytes_read",
    "nand_written_bytes": "nand_bytes_written",
    "nand_pages_written": "nand_pages_written",
    "host_pages_written": "host_pages_written",
    "percent_used": "percent_used",
    "available_spare_percent": "available_spare",
    "media_errors": "media_errors",
    "unsafe_shutdowns": "unsafe_shutdowns",
    "critical_warning": "critical_warning",
    "temperature_c": "temperature_c",
    "power_on_hours": "power_on_hours",
}
#: the input of :func:`history_frame`: one row per snapshot, ``time_s`` in epoch seconds
SNAPSHOT_SCHEMA: dict[str, Any] = {
    "model": pl.String,
    "serial": pl.String,
    "namespace": pl.Int64,
    "firmware": pl.String,
    "capacity_bytes": pl.Int64,
    "host": pl.String,
    "time_s": pl.Float64,
    "time_source": pl.String,
    "source": pl.String,
    "path": pl.String,
    **dict.fromkeys((name for name in list(FIELDS)[3:] if name != "temperature_c"), pl.Int64),
    "temperature_c": pl.Float64,
}
#: the ``smart_history`` frame: the snapshot's columns (``time`` in place of ``time_s``), then
#: the byte deltas from the drive's previous snapshot and the WAFs
SCHEMA: dict[str, Any] = {
    **{
        ("time" if k == "time_s" else k): (pl.Datetime("us", "UTC") if k == "time_s" else v)
        for k, v in SNAPSHOT_SCHEMA.items()
    },
    "host_written_delta_bytes": pl.Int64,
    "nand_written_delta_bytes": pl.Int64,
    "waf": pl.Float64,
    "lifetime_waf": pl.Float64,
}
_ID_FIELDS = ("model", "serial", "firmware", "capacity_bytes", "namespace", "host")
_DATA_FIELDS = tuple(f for f in FIELDS.values() if f not in ("firmware", "capacity_bytes", "host"))


@dataclass
class HistoryReport:
    """What an import of SMART history read, found and skipped."""

    out: Path
    files: int = 0
    snapshots: int = 0
    drives: int = 0
    time_sources: dict[str, int] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class _Snapshot:
    record: SmartRecord
    path: str  # the file, or the directory of captures merged
    mtime: float
    sources: str


def _read(path: str) -> tuple[bytes, float]:
    """A regular file's bytes and modification time; InputError for anything else (a FIFO
    would block, ``/dev/zero`` never ends) or a file too large to be a capture."""
    data, info = read_file(path, CAPTURE_LIMIT)
    return data, info.st_mtime


class _History:
    """One import: the snapshots found, as columns, and what was skipped."""

    def __init__(self, formats: list[Format[Any]]) -> None:
        self.formats = formats
        self.skipped: list[Skipped] = []
        self.columns: dict[str, list[Any]] = {name: [] for name in SNAPSHOT_SCHEMA}
        self.chunks: list[pl.DataFrame] = []
        self.identity: dict[str, SmartRecord | None] = {}  # directory -> its one drive
        self.files = 0

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append(Skipped(Path(path), reason.removeprefix(f"{path}: ")))

    def records(self, path: str) -> list[tuple[SmartRecord, float]]:
        """The records of one file, each with the file's mtime; none when it is skipped."""
        self.files += 1
        try:
            data, mtime = _read(path)
            probe = Probe.of_bytes(path, data)
            return [(r, mtime) for r in records_of(probe, recognise(probe, self.formats, "SMART"))]
        except InputError as exc:
            self.skip(path, str(exc))
        except OSError as exc:
            self.skip(path, f"cannot read: {exc.strerror}")
        except ValidationError as exc:
            problem = exc.errors()[0]
            self.skip(path, f"{'.'.join(map(str, problem['loc']))}: {problem['msg']}")
        return []

    def inherited(self, directory: str) -> SmartRecord | None:
        """The one drive the nearest parent directory naming drives names (None: none)."""
        while (parent := os.path.dirname(directory)) != directory:
            directory = parent
            if directory in self.identity:
                return self.identity[directory]
        return None

    def directory(self, directory: str, paths: Iterable[str]) -> None:
        """The snapshots of one directory's files."""
        found = [(path, rec, mtime) for path in paths for rec, mtime in self.records(path)]
        named = [item for item in found if item[1].serial]
        anonymous = [item for item in found if not item[1].serial]
        drives = {(rec.model, rec.serial) for _, rec, _ in named}
        if len(drives) == 1:
            first = min((rec for _, rec, _ in named), key=lambda r: _rank(r.source))
            ident: SmartRecord | None = SmartRecord.model_construct(  # kept: no raw document
                source=first.source, **{f: getattr(first, f) for f in _ID_FIELDS}
            )
            self.identity[directory] = ident
        elif drives:
            ident = self.identity[directory] = None
        else:
            ident = self.inherited(directory)
        for path, rec, _ in anonymous:
            if rec.source == smartctl_exporter.NAME:
                self.skip(path, f"device {rec.raw.get('device')}: no smartctl_device line names it")
        anonymous = [item for item in anonymous if item[1].source != smartctl_exporter.NAME]
        if anonymous and ident is None:
            why = "captures of several drives" if drives else "no capture naming a drive"
            for path, _, _ in anonymous:
                self.skip(path, f"no model or serial, and its directory has {why}")
            anonymous = []
        groups = _taken_together(named + anonymous) if anonymous else None
        if groups is not None:
            for group in groups:
                record = merge_records({path: rec for path, rec, _ in group}, directory)
                sources = "+".join(sorted({rec.source for _, rec, _ in group}))
                mtime = max(m for _, _, m in group)
                self.add(_Snapshot(_named(record, ident), directory, mtime, sources))
            return
        for path, rec, mtime in named:
            if _has_data(rec):
                self.add(_Snapshot(rec, path, mtime, rec.source))
        for path, rec, mtime in anonymous:
            self.add(_Snapshot(_named(rec, ident), path, mtime, rec.source))

    def add(self, snap: _Snapshot) -> None:
        rec = snap.record
        row: dict[str, Any] = {
            "model": rec.model,
            "serial": rec.serial,
            "namespace": rec.namespace,
            "time_s": rec.captured_s if rec.captured_s is not None else snap.mtime,
            "time_source": "capture" if rec.captured_s is not None else "mtime",
            "source": snap.sources,
            "path": snap.path,
            **{column: getattr(rec, name) for column, name in FIELDS.items()},
        }
        big = next((k for k, v in row.items() if isinstance(v, int) and v > INT64_MAX), None)
        if big is not None:
            self.skip(snap.path, f"{big} = {row[big]} is beyond a 64-bit column")
            return
        for name, value in row.items():
            self.columns[name].append(value)
        if len(self.columns["time_s"]) >= CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.columns["time_s"]:
            self.chunks.append(pl.DataFrame(self.columns, schema=SNAPSHOT_SCHEMA))
            self.columns = {name: [] for name in SNAPSHOT_SCHEMA}

    def frame(self) -> pl.DataFrame:
        """Every snapshot, sorted by drive and time, with deltas and WAF; a capture dropped
        as a repeat of its drive's capture at the same time with other counters is
        skipped, with why."""
        self.flush()
        frame = pl.concat(self.chunks) if self.chunks else pl.DataFrame(schema=SNAPSHOT_SCHEMA)
        for path, reason in _conflicting_repeats(frame):
            self.skip(path, reason)
        return history_frame(frame)


Capture = tuple[str, SmartRecord, float]  # path, record, mtime


def _has_data(record: SmartRecord) -> bool:
    return any(getattr(record, f) is not None for f in _DATA_FIELDS)


def _taken_together(captures: list[Capture]) -> list[list[Capture]] | None:
    """The snapshots a directory's captures make when they were taken together, each a list
    of captures to merge; None when they were not: the k-th capture of each format by time,
    when every format holding data has the same number of captures (one, or several of two
    or more such formats) and every other format one."""
    by_source: dict[str, list[Capture]] = {}
    for capture in sorted(captures, key=lambda c: (_capture_time(c), c[0])):
        by_source.setdefault(capture[1].source, []).append(capture)
    data = {s for s, items in by_source.items() if any(_has_data(c[1]) for c in items)}
    counts = {len(by_source[s]) for s in data}
    if len(counts) != 1 or any(len(by_source[s]) != 1 for s in by_source.keys() - data):
        return None
    (n,) = counts
    if n > 1 and len(data) < 2:
        return None  # one format's captures: each its own snapshot
    return [[items[k if s in data else 0] for s, items in by_source.items()] for k in range(n)]


#: the columns two captures taken at once (through a namespace and the controller) share
_COUNTERS = [column for column, name in FIELDS.items() if name in _DATA_FIELDS]


def _conflicting_repeats(snapshots: pl.DataFrame) -> Iterator[tuple[str, str]]:
    """``(path, why)`` of each capture :func:`history_frame` drops as a repeat of its
    drive's first capture at the same capture time whose counters it does not share."""
    keys = [*DRIVE_KEYS, "time_s"]
    same = (
        snapshots.filter(pl.col("time_source") == "capture")
        .filter(pl.len().over(keys) > 1)
        .sort([*keys, "namespace", "path"], nulls_last=True)
    )
    for _, group in same.group_by(keys, maintain_order=True):
        first, *others = group.select("path", *_COUNTERS).iter_rows(named=True)
        for row in others:
            other = [c for c in _COUNTERS if row[c] != first[c]]
            if other:
                yield (
                    row["path"],
                    (
                        f"same drive and capture time as {first['path']} but other "
                        f"{', '.join(other)}: only the first is kept"
                    ),
                )


def _capture_time(capture: Capture) -> float:
    _, record, mtime = capture
    return record.captured_s if record.captured_s is not None else mtime


def _named(record: SmartRecord, ident: SmartRecord | None) -> SmartRecord:
    """``record`` with the identity fields it lacks taken from ``ident``."""
    if ident is None:
        return record
    update = {f: getattr(ident, f) for f in _ID_FIELDS if getattr(record, f) is None}
    return record.model_copy(update=update)


def _rank(source: str) -> int:
    return (
        SOURCE_PRECEDENCE.index(source) if source in SOURCE_PRECEDENCE else len(SOURCE_PRECEDENCE)
    )


def _ratio(nand: pl.Expr, host: pl.Expr) -> pl.Expr:
    """nand / host where host > 0 and nand >= 0 (null otherwise)."""
    return pl.when((host > 0) & (nand >= 0)).then(nand / host)


def history_frame(snapshots: pl.DataFrame) -> pl.DataFrame:
    """``snapshots`` (one row each, ``time_s`` epoch seconds) as :data:`SCHEMA`, sorted by
    drive and time: deltas from each drive's previous snapshot, ``waf`` and ``lifetime_waf``."""
    keys = list(DRIVE_KEYS)

    def delta(column: str) -> pl.Expr:
        return pl.col(column) - pl.col(column).shift(1).over(keys)

    repeated = (
        (pl.col("time_source") == "capture")
        & (pl.col("time_source").shift(1).over(keys) == "capture")
        & (pl.col("time_s") == pl.col("time_s").shift(1).over(keys))
    )
    frame = (
        snapshots.sort([*keys, "time_s", "namespace", "path"], nulls_last=True).filter(
            ~repeated.fill_null(False)
        )
    ).with_columns(
        time=pl.from_epoch(
            (pl.col("time_s") * 1e6).round().cast(pl.Int64), "us"
        ).dt.replace_time_zone("UTC"),
        host_written_delta_bytes=delta("host_written_bytes"),
        nand_written_delta_bytes=delta("nand_written_bytes"),
        nand_pages_delta=delta("nand_pages_written"),
        host_pages_delta=delta("host_pages_written"),
    )
    return frame.with_columns(
        waf=pl.coalesce(
            _ratio(pl.col("nand_written_delta_bytes"), pl.col("host_written_delta_bytes")),
            _ratio(pl.col("nand_pages_delta"), pl.col("host_pages_delta")),
        ),
        lifetime_waf=pl.coalesce(
            _ratio(pl.col("nand_written_bytes"), pl.col("host_written_bytes")),
            _ratio(pl.col("nand_pages_written"), pl.col("host_pages_written")),
        ),
    ).select(list(SCHEMA))


def scan_smart_history(directory: Path | str) -> pl.LazyFrame:
    """The ``smart_history`` frame of a directory :func:`import_smart_history` wrote, lazily;
    InputError naming the directory when it holds none."""
    directory = Path(directory)
    path = frame_file(directory, FRAME)
    if not (directory / SMART_HISTORY).is_file() or not path.is_file():
        raise InputError(
            f"{directory}: not a SMART history (no {SMART_HISTORY} and {frame_path(FRAME)}; "
            "make one with ssdlab smart import)"
        )
    try:
        schema = pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    missing = [name for name in SCHEMA if name not in schema]
    if missing:
        raise InputError(f"{path}: not a {FRAME} frame: no {', '.join(missing)}")
    return pl.scan_parquet(path, glob=False)  # a [ ] * ? in its path is no pattern


def import_smart_history(
    paths: list[Path],
    out: Path,
    *,
    on_file: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> HistoryReport:
    """Import the SMART captures under ``paths`` into the results directory ``out``.

    Bad or unrelated files are skipped, one line each in the report (and the record);
    InputError when nothing under ``paths`` is a SMART capture or ``out`` already holds
    a history (nothing is left in ``out`` then). ``on_file(done, total)`` reports progress
    every 1000 files. Another process writing ``out`` makes this an error. With ``workers``
    > 1, that many processes read the trees' top-level subtrees in parallel (each takes
    about a second to start: worth it for tens of thousands of files on idle cores).
    """
    new = not out.exists()
    with results_lock(out, "smart import"):
        if (out / SMART_HISTORY).exists():
            raise InputError(f"{out} already holds a SMART history; import into a new directory")
        made = out if new else made_by_import(out)
        try:
            return _import(paths, out, on_file, workers)
        except BaseException:
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)
            raise


Group = tuple[str, list[str]]  # a directory and its files


def _workers(asked: int, formats: list[Format[Any]]) -> int:
    """How many processes to use: 1 when formats registered here cannot be sent to others."""
    if asked > 1:
        try:
            pickle.dumps(formats)
        except (pickle.PicklingError, AttributeError, TypeError):
            return 1
    return max(asked, 1)


def _shards(
    groups: list[Group], roots: list[Path], count: int
) -> tuple[list[Group], list[list[Group]]]:
    """The directories given (read first, here: every subtree inherits their drives) and
    ``count`` batches of whole top-level subtrees (a drive is only inherited inside one)."""
    tops = sorted((str(root) for root in roots), key=len, reverse=True)
    head: list[Group] = []
    subtrees: dict[tuple[str, str], list[Group]] = {}
    for directory, paths in groups:
        root = next((t for t in tops if directory.startswith(t + os.sep)), None)
        if root is None:
            head.append((directory, paths))
            continue
        top = directory[len(root) + 1 :].split(os.sep, 1)[0]
        subtrees.setdefault((root, top), []).append((directory, paths))
    batches: list[list[Group]] = [[] for _ in range(count)]
    sizes = [0] * count
    for subtree in sorted(subtrees.values(), key=lambda t: -sum(len(p) for _, p in t)):
        lightest = sizes.index(min(sizes))
        batches[lightest] += subtree
        sizes[lightest] += sum(len(p) for _, p in subtree)
    return head, [batch for batch in batches if batch]


def _shard(
    formats: list[Format[Any]], identity: dict[str, SmartRecord | None], groups: list[Group]
) -> tuple[pl.DataFrame | None, list[Skipped], int]:
    """The snapshots (unsorted), skipped files and file count of a batch of subtrees."""
    run = _History(formats)
    run.identity = identity
    for directory, paths in groups:
        run.directory(directory, paths)
    run.flush()
    return (pl.concat(run.chunks) if run.chunks else None), run.skipped, run.files


def _import(
    paths: list[Path],
    out: Path,
    on_file: Callable[[int, int], None] | None,
    workers: int,
) -> HistoryReport:
    roots = [Path(os.path.normpath(p.absolute())) for p in paths]
    files, unreadable = walk_files(roots, Path(os.path.normpath(out.absolute())))
    formats = FORMATS.all("SMART")
    run = _History(formats)
    for path, reason in unreadable.items():
        run.skip(path, reason)
    groups = [(directory, list(group)) for directory, group in groupby(files, os.path.dirname)]
    count = _workers(workers, formats)
    told = 0
    if count > 1:
        head, batches = _shards(groups, roots, count * 4)
        for directory, group in head:
            run.directory(directory, group)
        context = multiprocessing.get_context("spawn")  # polars' threads do not survive fork
        with ProcessPoolExecutor(count, mp_context=context) as pool:
            futures = [pool.submit(_shard, formats, run.identity, batch) for batch in batches]
            for future in as_completed(futures):
                chunk, skipped, done = future.result()
                run.chunks += [] if chunk is None else [chunk]
                run.skipped += skipped
                run.files += done
                if on_file and run.files < len(files):
                    on_file(run.files, len(files))
    else:
        for directory, group in groups:
            run.directory(directory, group)
            if on_file and run.files - told >= 1000:
                told = run.files
                on_file(told, len(files))
    if on_file:
        on_file(len(files), len(files))
    frame = run.frame()
    if frame.is_empty():
        why = "; ".join(map(str, run.skipped[:3])) + ("; ..." if len(run.skipped) > 3 else "")
        skipped = f" ({plural(len(run.skipped), 'file')} skipped: {why})" if run.skipped else ""
        raise InputError(f"no SMART capture found under {', '.join(map(str, paths))}{skipped}")
    report = HistoryReport(
        out=out,
        files=len(files),
        snapshots=frame.height,
        drives=frame.select(DRIVE_KEYS).n_unique(),
        time_sources=dict(frame["time_source"].value_counts().iter_rows()),
        skipped=sorted(run.skipped, key=lambda s: str(s.path)),
    )
    write_frames(out, {FRAME: frame})
    record = {
        "kind": FRAME,
        "ssdlab_version": __version__,
        "created": now().isoformat(),
        "sources": [str(root) for root in roots],
        "files": report.files,
        "snapshots": report.snapshots,
        "drives": report.drives,
        "time_sources": report.time_sources,
        "frame": frame_path(FRAME),
        "skipped": [str(s) for s in report.skipped],
    }
    write_text_atomic(out / SMART_HISTORY, json.dumps(record, indent=2) + "\n")
    return report

"""Import fio results produced by any tool (bench-fio, pbench, CBT, hand-written jobs).

Files are recognised by content, never by name: fio JSON/json+ results (text around them,
``normal,json`` files and ``--status-interval`` streams included), bw/iops/lat logs and
histogram logs. Each JSON result becomes a step; its logs are found through the job's
``write_*_log`` options (see :mod:`ssdlab.logs`). The results directory gets a manifest
naming every source file and the tidy frames as Parquet under ``frames/``, so
:func:`ssdlab.load`, ``ssdlab summary`` and ``ssdlab report`` treat it like a native run.
"""

from __future__ import annotations

import io
import os
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from . import __version__
from .atomic import write_bytes_atomic
from .errors import InputError
from .io.fio_json import FioRows, fio_frames, parse_fio_json
from .logs import (
    JobLog,
    LogIndex,
    find_job_logs,
    job_runtimes,
    load_job_logs,
    log_params,
    timeseries,
)
from .manifest import MANIFEST, Manifest, StepRecord, now
from .results import FRAMES_DIR

SNIFF_BYTES = 8192
KEEP_BYTES = 64 * 2**20  # files up to this size are read whole, once
_LOG_ROW = re.compile(rb"^\s*\d+\s*,\s*-?\d+\s*,\s*\d+\s*,\s*\d+")
HIST_MIN_COLUMNS = 3 + 19  # the coarsest histogram log (fio 2.x, coarseness 6)


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


def sniff(head: bytes) -> str | None:
    """``json``, ``log``, ``hist`` or None, from the first bytes of a file; or a reason."""
    end = head.find(b"\n")
    first = head if end < 0 else head[:end]
    if _LOG_ROW.match(first):  # first: a log's first line settles it without a scan
        return "hist" if first.count(b",") + 1 >= HIST_MIN_COLUMNS else "log"
    if b'"fio version"' in head:
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
    return files


def _step_name(path: Path, roots: list[Path]) -> str:
    for root in roots:
        if root.is_dir() and path.is_relative_to(root):
            rel = path.relative_to(root)
            return str(rel.with_suffix("")) if rel.suffix else str(rel)
    return path.stem


def _read(path: str) -> tuple[bytes, bool]:
    """A file's bytes and True, or only its head and False when it is too large to keep."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size > KEEP_BYTES:
            return os.read(fd, SNIFF_BYTES), False
        data = os.read(fd, size + 1)
        if len(data) > size:  # the file grew since fstat: read on to its end
            data += b"".join(iter(lambda: os.read(fd, 2**20), b""))
        return data, True
    finally:
        os.close(fd)


def import_results(
    paths: list[Path],
    out: Path,
    *,
    label: str | None = None,
    strict: bool = False,
    on_file: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every fio output under ``paths`` into the results directory ``out``.

    Every file is read once; results are parsed to rows and the frames of all of them are
    built together, logs parsed in bulk. Bad or unrelated files are skipped with a reason
    (``strict`` makes the first one an error). ``on_file(done, total)`` reports progress.
    """
    if (out / MANIFEST).exists():
        raise InputError(f"{out} already holds results; import into a new directory")
    roots = [Path(os.path.normpath(p.absolute())) for p in paths]
    files = _walk(roots)
    report = ImportReport(out=out)
    data: dict[str, bytes] = {}
    kinds: dict[str, str] = {}
    unknown: dict[str, str] = {}  # skipped unless a JSON names them (an empty log is fine)
    heads_only: set[str] = set()  # files too large to keep: read again when used
    for n, path in enumerate(files, start=1):
        try:
            data[path], whole = _read(path)
            if not whole:
                heads_only.add(path)
        except OSError as exc:
            report.skipped.append(Skipped(Path(path), f"cannot read: {exc.strerror}"))
            continue
        head = data[path][:SNIFF_BYTES]
        kind = sniff(head)
        if kind is None:
            unknown[path] = _why_not(head)
        else:
            kinds[path] = kind
        if on_file and n % 1000 == 0:
            on_file(n, len(files))

    results: list[tuple[Path, FioRows, list[JobLog]]] = []
    index = LogIndex([*kinds, *unknown])
    for name in (p for p, k in kinds.items() if k == "json"):
        path = Path(name)
        try:
            raw = path.read_bytes() if name in heads_only else data[name]
            parsed = parse_fio_json(raw, path)
        except (InputError, OSError) as exc:
            why = str(exc) if isinstance(exc, InputError) else f"{path}: cannot read: {exc}"
            if strict:
                raise InputError(why) from None
            report.skipped.append(Skipped(path, why.removeprefix(f"{path}: ")))
            continue
        results.append((path, parsed, find_job_logs(parsed.meta, os.path.dirname(name), index)))
    if not results:
        raise InputError(f"no fio JSON result found under {', '.join(map(str, paths))}")

    claimed = {log.path for _, _, logs in results for log in logs}
    report.skipped += [Skipped(Path(p), why) for p, why in unknown.items() if p not in claimed]
    report.skipped += [
        Skipped(Path(p), "fio log that no imported JSON result names (write_*_log prefix)")
        for p, kind in kinds.items()
        if kind != "json" and p not in claimed
    ]
    if strict and report.skipped:
        raise InputError(str(report.skipped[0]))

    manifest = Manifest(
        run_id=f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
        label=label or ", ".join(p.name for p in roots),
        source="import",
        suite="import",
        suite_description=f"imported from {', '.join(map(str, roots))}",
        fio_version=", ".join(sorted({r.meta["fio_version"] for _, r, _ in results})),
        ssdlab_version=__version__,
        status="complete",
        started=now(),
        ended=now(),
    )
    ids: list[dict[str, object]] = []
    step_logs: list[JobLog] = []
    log_ids: list[dict[str, object]] = []
    for step_index, (path, _, logs) in enumerate(results, start=1):
        name = _step_name(path, roots)
        sources = [str(path)] + [log.path for log in logs]
        manifest.steps.append(
            StepRecord(index=step_index, name=name, dir=str(path), status="ok", sources=sources)
        )
        ids.append({"step_index": step_index, "step": name})
        step_logs += logs
        log_ids += [{"step_index": step_index}] * len(logs)
    fio = fio_frames([parsed for _, parsed, _ in results], ids)
    runtimes = job_runtimes(fio.jobs, ["step_index"])
    params = [
        p | {"step_index": step_index}
        for step_index, (_, parsed, _) in enumerate(results, start=1)
        for p in log_params(parsed.meta, runtimes, (step_index,))
    ]
    for name in heads_only:  # read in full by the log reader
        del data[name]
    logs, bad = load_job_logs(step_logs, log_ids, data)
    for path, reason in bad.items():
        if strict:
            raise InputError(f"{path}: {reason}")
        report.skipped.append(Skipped(Path(path), reason))
    series = timeseries(logs, pl.DataFrame(params), keys=["step_index"])
    names = pl.DataFrame(ids, schema={"step_index": pl.Int64, "step": pl.String})
    common = [
        pl.lit(manifest.run_id, dtype=pl.String).alias("run_id"),
        pl.lit(manifest.label, dtype=pl.String).alias("label"),
        pl.lit(None, dtype=pl.String).alias("block"),
        pl.lit(None, dtype=pl.Int64).alias("round"),
        pl.lit("ok", dtype=pl.String).alias("status"),
    ]
    no_host = pl.lit(None, dtype=pl.String).alias("host")
    hostname = pl.col("hostname").cast(pl.String).alias("host")
    frames = {
        "summary": fio.jobs.with_columns(
            *common, hostname if "hostname" in fio.jobs.columns else no_host
        ),
        "timeseries": series.join(names, on="step_index").with_columns(*common, no_host),
        "latency_hist": fio.bins.filter(pl.col("stat") == "clat")
        .drop("stat")
        .with_columns(*common, no_host),
        "percentiles": fio.percentiles.with_columns(*common, no_host),
        "snapshots": fio.snapshots.with_columns(*common, no_host),
    }
    report.results = len(results)
    report.logs = len(claimed)
    write_import(out, manifest, frames)
    return report


def write_import(out: Path, manifest: Manifest, frames: dict[str, pl.DataFrame]) -> None:
    """Write the frames (atomically, each) and then the manifest that makes them count."""
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        buf = io.BytesIO()
        frame.write_parquet(buf)
        write_bytes_atomic(out / FRAMES_DIR / f"{name}.parquet", buf.getvalue())
    manifest.save(out)

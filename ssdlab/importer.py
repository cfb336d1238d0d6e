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
from .io import FioJson, read_fio_json
from .io.fio_log import read_fio_logs
from .logs import TIMESERIES_KINDS, JobLog, find_job_logs, timeseries
from .manifest import MANIFEST, Manifest, StepRecord, now
from .results import FRAMES_DIR, RAW_FRAMES

SNIFF_BYTES = 8192
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
    if b'"fio version"' in head:
        return "json"
    first = head.split(b"\n", 1)[0]
    if _LOG_ROW.match(first):
        return "hist" if first.count(b",") + 1 >= HIST_MIN_COLUMNS else "log"
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


def _walk(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for root in paths:
        if root.is_file():
            files.append(root)
            continue
        if not root.is_dir():
            raise InputError(f"{root}: no such file or directory")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            files += [Path(dirpath, f) for f in sorted(filenames)]
    return files


def _step_name(path: Path, roots: list[Path]) -> str:
    for root in roots:
        if root.is_dir() and path.is_relative_to(root):
            rel = path.relative_to(root)
            return str(rel.with_suffix("")) if rel.suffix else str(rel)
    return path.stem


def import_results(
    paths: list[Path],
    out: Path,
    *,
    label: str | None = None,
    strict: bool = False,
    on_file: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every fio output under ``paths`` into the results directory ``out``.

    Bad or unrelated files are skipped with a reason (``strict`` makes the first one an
    error). ``on_file(done, total)`` reports progress.
    """
    if (out / MANIFEST).exists():
        raise InputError(f"{out} already holds results; import into a new directory")
    roots = [p.absolute() for p in paths]
    files = _walk(roots)
    report = ImportReport(out=out)
    kinds: dict[Path, str] = {}
    unknown: dict[Path, str] = {}  # skipped unless a JSON names them (an empty log is fine)
    for path in files:
        try:
            with path.open("rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            report.skipped.append(Skipped(path, f"cannot read: {exc.strerror}"))
            continue
        kind = sniff(head)
        if kind is None:
            unknown[path] = _why_not(head)
        else:
            kinds[path] = kind

    results: list[tuple[Path, FioJson, list[JobLog]]] = []
    json_files = [p for p, k in kinds.items() if k == "json"]
    listing = [*kinds, *unknown]
    for n, path in enumerate(json_files, start=1):
        try:
            fio = read_fio_json(path)
        except InputError as exc:
            if strict:
                raise
            report.skipped.append(Skipped(path, str(exc).removeprefix(f"{path}: ")))
            continue
        results.append((path, fio, find_job_logs(fio, path.parent, listing)))
        if on_file:
            on_file(n, len(json_files))
    if not results:
        raise InputError(f"no fio JSON result found under {', '.join(map(str, paths))}")

    claimed = {log.path for _, _, logs in results for log in logs}
    report.skipped += [Skipped(p, why) for p, why in unknown.items() if p not in claimed]
    for path, kind in kinds.items():
        if kind != "json" and path not in claimed:
            report.skipped.append(
                Skipped(path, "fio log that no imported JSON result names (write_*_log prefix)")
            )
    if strict and report.skipped:
        raise InputError(str(report.skipped[0]))

    ts_logs = [log for _, _, logs in results for log in logs if log.kind in TIMESERIES_KINDS]
    log_rows, bad = read_fio_logs([log.path for log in ts_logs])
    for i, reason in bad.items():
        if strict:
            raise InputError(f"{ts_logs[i].path}: {reason}")
        report.skipped.append(Skipped(ts_logs[i].path, reason))
    meta = pl.DataFrame(
        {
            "file": range(len(ts_logs)),
            "kind": [log.kind for log in ts_logs],
            "job_index": [log.job_index for log in ts_logs],
            "thread": [log.thread for log in ts_logs],
            "step_index": [0] * len(ts_logs),
        },
        schema={
            "file": pl.Int64,
            "kind": pl.String,
            "job_index": pl.Int64,
            "thread": pl.Int64,
            "step_index": pl.Int64,
        },
    )
    step_of_log = {log.path: i for i, (_, _, logs) in enumerate(results, start=1) for log in logs}
    meta = meta.with_columns(
        step_index=pl.Series([step_of_log[log.path] for log in ts_logs], dtype=pl.Int64)
    )
    tagged = log_rows.join(meta, on="file", how="inner") if log_rows.height else log_rows

    run_id = f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    label = label or ", ".join(p.name for p in roots)
    manifest = Manifest(
        run_id=run_id,
        label=label,
        source="import",
        suite="import",
        suite_description=f"imported from {', '.join(map(str, roots))}",
        fio_version=", ".join(sorted({f.meta["fio_version"] for _, f, _ in results})),
        ssdlab_version=__version__,
        status="complete",
        started=now(),
        ended=now(),
    )
    frames: dict[str, list[pl.DataFrame]] = {name: [] for name in RAW_FRAMES}
    for index, (path, fio, logs) in enumerate(results, start=1):
        name = _step_name(path, roots)
        manifest.steps.append(
            StepRecord(
                index=index,
                name=name,
                dir=str(path),
                status="ok",
                sources=[str(path)] + [str(log.path) for log in logs],
            )
        )
        ids = _ids(manifest, index, name)
        host = pl.col("hostname") if "hostname" in fio.jobs.columns else pl.lit(None)
        frames["summary"].append(fio.jobs.with_columns(ids).with_columns(host=host.cast(pl.String)))
        step_logs = tagged.filter(pl.col("step_index") == index) if tagged.height else tagged
        frames["timeseries"].append(timeseries(step_logs, fio).with_columns(ids))
        clat = fio.bins.filter(pl.col("stat") == "clat").drop("stat")
        frames["latency_hist"].append(clat.with_columns(ids))
        frames["percentiles"].append(fio.percentiles.with_columns(ids))
        frames["snapshots"].append(fio.snapshots.with_columns(ids))
    report.results = len(results)
    report.logs = len(claimed)
    write_import(
        out, manifest, {k: pl.concat(v, how="diagonal_relaxed") for k, v in frames.items()}
    )
    return report


def _ids(manifest: Manifest, index: int, name: str) -> list[pl.Expr]:
    return [
        pl.lit(manifest.run_id, dtype=pl.String).alias("run_id"),
        pl.lit(manifest.label, dtype=pl.String).alias("label"),
        pl.lit(None, dtype=pl.String).alias("host"),
        pl.lit(index, dtype=pl.Int64).alias("step_index"),
        pl.lit(name, dtype=pl.String).alias("step"),
        pl.lit(None, dtype=pl.String).alias("block"),
        pl.lit(None, dtype=pl.Int64).alias("round"),
        pl.lit("ok", dtype=pl.String).alias("status"),
    ]


def write_import(out: Path, manifest: Manifest, frames: dict[str, pl.DataFrame]) -> None:
    """Write the frames (atomically, each) and then the manifest that makes them count."""
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        buf = io.BytesIO()
        frame.write_parquet(buf)
        write_bytes_atomic(out / FRAMES_DIR / f"{name}.parquet", buf.getvalue())
    manifest.save(out)

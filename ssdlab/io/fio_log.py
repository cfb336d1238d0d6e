"""fio per-I/O and windowed logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

Canonical columns: ``time_ms`` (ms since job start, or since the epoch with
``log_unix_epoch``), ``value`` (bw: KiB/s, iops: count, lat/clat/slat: ns),
``direction`` (:data:`DIRECTION`: read/write/trim), ``bs_bytes`` (0 in windowed logs), and
when present
``value_max`` (``log_window_value=both``), ``offset_bytes``, ``prio``, ``issue_time_ns``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import InputError

LOG_KINDS = ("bw", "iops", "clat", "slat", "lat")
_NAME_RE = re.compile(r"_(bw|iops|clat|slat|lat)(?:\.\d+)?\.log(?:\.[\w.:-]+)?$")
DIRECTION = pl.Enum(["read", "write", "trim"])  # fio's ddir 0, 1, 2
#: a log row: time, value, ddir, bs, ...
LOG_ROW = re.compile(rb"^\s*\d+\s*,\s*-?\d+\s*,\s*\d+\s*,\s*\d+")
EPOCH_MS_MIN = 10**12  # timestamps above this are epoch milliseconds (after 2001)


def log_kind(path: str | Path) -> str | None:
    """The log type named in a fio log file name (``<prefix>_<type>[.<n>].log``)."""
    m = _NAME_RE.search(Path(path).name)
    return m.group(1) if m else None


def _columns(n: int, log_offset: bool | None, both: bool) -> list[str]:
    cols = ["time_ms", "value"] + (["value_max"] if both else []) + ["ddir", "bs_bytes"]
    extra = n - len(cols)
    if extra <= 0:
        return cols[:n]
    if log_offset is None:
        log_offset = extra >= 2
    tail = (["offset_bytes"] if log_offset else []) + ["prio", "issue_time_ns"]
    return cols + tail[:extra]


def direction(ddir: pl.Expr) -> pl.Expr:
    """fio's ddir numbers as :data:`DIRECTION` (null for any other number)."""
    names = pl.Series(DIRECTION.categories, dtype=DIRECTION)
    return pl.lit(names).gather(pl.when(ddir.is_between(0, 2)).then(ddir))


def _layout(first: bytes, log_offset: bool | None, both: bool) -> tuple[list[str], dict]:
    """Column names and read schema from a file's first line (hex priorities read as text)."""
    n_cols = first.count(b",") + 1 if first.strip() else 5
    names = _columns(n_cols, log_offset, both)
    hex_prio = b"0x" in first
    schema = {n: pl.String if n == "prio" and hex_prio else pl.Int64 for n in names}
    if "ddir" in schema:
        schema["ddir"] = pl.Int16  # 0-2: a narrow column is less memory to fill
    return names, schema


def _parse(source: Path | bytes, schema: dict, keep: list[int] | None = None) -> pl.DataFrame:
    return pl.read_csv(
        source,
        has_header=False,
        new_columns=list(schema),
        schema=schema,
        columns=keep,
        truncate_ragged_lines=True,
    )


def _finish(frame: pl.DataFrame) -> pl.DataFrame:
    """Direction names and integer priorities."""
    if "ddir" in frame.columns:
        names = pl.select(direction(pl.lit(frame["ddir"]))).to_series().alias("direction")
        frame.replace_column(frame.get_column_index("ddir"), names)  # eager: no lazy trip
    if frame.schema.get("prio") == pl.String:
        frame = frame.with_columns(
            pl.col("prio").str.strip_chars().str.replace("^0x", "").str.to_integer(base=16)
        )
    return frame


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    return data if end < 0 else data[:end]


def _problem(first: bytes) -> str | None:
    if b"\0" not in first and (not first.strip() or LOG_ROW.match(first)):
        return None
    return "line 1 is not a fio log row (time, value, ddir, bs, ...)"


def log_problem(data: bytes) -> str | None:
    """Why the bytes (or the first bytes) of a file are no fio log, or None: its first line
    must be a log row, or blank (an empty log)."""
    return _problem(_first_line(data))


def read_fio_log(
    path: str | Path,
    *,
    kind: str | None = None,
    log_offset: bool | None = None,
    window_value_both: bool = False,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Read one fio log file into a frame plus metadata (``kind``, ``epoch``, ``columns``).

    An empty file (a job shorter than one ``log_avg_msec`` window) gives an empty frame.
    ``kind`` defaults to the type in the file name. ``log_offset`` and ``window_value_both``
    come from the job's options when known; otherwise the column count decides.
    """
    path = Path(path)
    kind = kind or log_kind(path)
    if kind not in LOG_KINDS:
        raise InputError(f"{path}: not a fio bw/iops/lat log name; pass kind= explicitly")
    try:
        with path.open("rb") as fh:
            first = fh.readline()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if why := log_problem(first):
        raise InputError(f"{path}: {why}")
    names, schema = _layout(first, log_offset, window_value_both)
    try:
        frame = _parse(path, schema) if first.strip() else pl.DataFrame(schema=schema)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{path}: malformed fio log: {str(exc).splitlines()[0]}") from None
    frame = _finish(frame)
    epoch = bool(frame.height) and frame["time_ms"].min() >= EPOCH_MS_MIN
    return frame, {"path": str(path), "kind": kind, "epoch": epoch, "columns": names}


#: what a job's options say about its log columns: (log_offset or None if unknown,
#: log_window_value=both)
LogLayout = tuple[bool | None, bool]


class LogBatch:
    """Many log files' bytes, gathered per column layout and parsed in one pass per layout:
    far faster than a parser call per file for thousands of small logs.
    """

    def __init__(self) -> None:
        self.bad: dict[int, str] = {}  #: file index -> why it could not be parsed
        self.nbytes = 0
        # (schema, columns kept) -> schema, indices of the columns kept, files, bytes, rows
        self._groups: dict[tuple, tuple[dict, list[int] | None, list[int], list, list]] = {}
        self._keys: dict[tuple, tuple] = {}  # (commas, hex prio, hints, columns) -> group

    def add(
        self,
        index: int,
        data: bytes,
        layout: LogLayout = (None, False),
        columns: Sequence[str] | None = None,
    ) -> None:
        """Queue the bytes of file ``index``, laid out as ``layout`` says (the column hints
        of its job's options), to keep only the canonical ``columns`` of (``direction``
        included; None: all); if it is no fio log, ``bad`` says why."""
        first = _first_line(data)
        if why := _problem(first):
            self.bad[index] = why
            return
        if not first.strip():  # an empty log has no rows
            return
        shape = (first.count(b","), b"0x" in first, layout, columns)
        if (key := self._keys.get(shape)) is None:
            _, schema = _layout(first, *layout)
            wanted = (
                None if columns is None else {"ddir" if c == "direction" else c for c in columns}
            )
            keep = None if wanted is None else [n for n, c in enumerate(schema) if c in wanted]
            key = self._keys[shape] = (tuple(f"{k}:{v}" for k, v in schema.items()), columns)
            self._groups.setdefault(key, (schema, keep, [], [], []))
        _, _, ids, blobs, counts = self._groups[key]
        ids.append(index)
        blobs.append(data if data.endswith(b"\n") else data + b"\n")
        counts.append(blobs[-1].count(b"\n"))
        self.nbytes += len(data)

    def parse(self) -> pl.DataFrame:
        """The columns kept of every file added, plus ``file`` (its index); the bytes are
        let go, so this is done once."""
        groups, self._groups = self._groups, {}
        frames = []
        for schema, keep, ids, blobs, counts in groups.values():
            try:
                frame = _parse(b"".join(blobs), schema, keep)
            except pl.exceptions.PolarsError:
                frame = None
            if frame is None or frame.height != sum(counts):  # a bad file (or blank lines)
                for i, blob in zip(ids, blobs, strict=True):
                    try:
                        one = _parse(blob, schema, keep)
                    except pl.exceptions.PolarsError as exc:
                        self.bad[i] = f"malformed fio log: {str(exc).splitlines()[0]}"
                        continue
                    frames.append(one.with_columns(file=pl.lit(i, dtype=pl.Int64)))
                continue
            file_col = pl.Series("file", np.repeat(np.array(ids, dtype=np.int64), counts))
            frames.append(frame.with_columns(file_col))
        if not frames:
            return pl.DataFrame(schema={"file": pl.Int64, "time_ms": pl.Int64})
        return _finish(pl.concat(frames, how="diagonal_relaxed"))

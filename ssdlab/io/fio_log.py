"""fio per-I/O and windowed logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

:func:`read_fio_log` columns: ``time_ms`` (ms since job start, or since the epoch with
``log_unix_epoch``), the value under its canonical name (:data:`VALUE_COLUMNS`: ``iops``,
``bw_bytes_s`` = fio's KiB/s x 1024, ``lat_ns``/``clat_ns``/``slat_ns``), ``direction``
(:data:`DIRECTION`: read/write/trim), ``bs_bytes`` (0 in windowed logs), and when present
the window's maximum (the value's name + ``_max``, ``log_window_value=both``),
``offset_bytes``, ``prio``, ``issue_time_ns``. Bulk parsing (:class:`LogBatch`) keeps fio's
raw ``value``.

A row fio cannot have written (a missing field, a negative or impossibly large number, a
ddir other than 0-2) makes the file unusable: the error names the line. fio ends every row
with a line end, so a file that does not end with one was cut mid-row (the run was killed or
the disk filled): that last line is dropped (:func:`split_partial`) and counted in the
reader's metadata (``partial_lines``), unless it holds bytes no row starts with. A file cut
inside its first line holds no row: it reads as an empty log. A log read whole is refused
beyond the size limit of fio logs (:data:`~ssdlab.io.text.SIZE_LIMITS`). Per-I/O logs can
be far larger than memory: :func:`per_io_sums` parses one :data:`CHUNK_BYTES` at a time
and keeps only per-millisecond sums (up to the limit of fio per-I/O logs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError
from ..vocab import DIRECTIONS
from .text import open_regular, read_bytes, size_limit, too_large

LOG_KINDS = ("bw", "iops", "clat", "slat", "lat")
LOG_LIMIT = "fio logs"  #: the size limit of a log read whole (:data:`~ssdlab.io.text.SIZE_LIMITS`)
PER_IO_LIMIT = "fio per-I/O logs"  #: that of a per-I/O log streamed (:func:`per_io_sums`)
#: log kind -> (canonical name of its value, factor from fio's unit)
VALUE_COLUMNS = {
    "bw": ("bw_bytes_s", 1024),
    "iops": ("iops", 1),
    "clat": ("clat_ns", 1),
    "slat": ("slat_ns", 1),
    "lat": ("lat_ns", 1),
}
_NAME_RE = re.compile(r"_(bw|iops|clat|slat|lat)(?:\.\d+)?\.log(?:\.[\w.:-]+)?$")
DIRECTION = pl.Enum(list(DIRECTIONS))  # fio's ddir 0, 1, 2
#: a log row: time, value, ddir, bs, ...
LOG_ROW = re.compile(rb"^\s*\d+\s*,\s*-?\d+\s*,\s*\d+\s*,\s*\d+")
#: a row cut short (to match whole): a start of :data:`LOG_ROW`, then the bytes rows hold
ROW_START = re.compile(
    rb"\s*(?:\d+\s*(?:,\s*(?:-?(?:\d+\s*(?:,\s*(?:\d+\s*(?:,\s*(?:\d[\da-fx, -]*)?)?)?)?)?)?)?)?"
)
EPOCH_MS_MIN = 10**12  # timestamps above this are epoch milliseconds (after 2001)
#: the largest number a field can hold: time (ms) and value stay exact as floats, and no I/O
#: is 4 GiB (Linux moves at most 2 GiB per call)
LIMITS = {"time_ms": 2**53, "value": 2**53, "bs_bytes": 2**32}
CHUNK_BYTES = 16 * 2**20  #: bytes of a per-I/O log parsed at a time
#: a per-I/O log summed per millisecond and direction (:func:`per_io_sums`)
SUMS_SCHEMA = {
    "time_ms": pl.Int64,
    "direction": DIRECTION,
    "n": pl.Int64,  # I/Os
    "value": pl.Float64,  # their values summed (exact below 2**53)
    "bs_bytes": pl.Int64,  # their bytes
}


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


def _parse(source: bytes, schema: dict, keep: list[int] | None = None) -> pl.DataFrame:
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


def _bad_rows(frame: pl.DataFrame) -> pl.Expr:
    """True on a row fio cannot have written (columns as parsed: ``ddir`` still a number)."""
    checks = [
        pl.col(c).is_null() | ~pl.col(c).is_between(0, top, closed="left")
        for c, top in LIMITS.items()
        if c in frame.columns
    ]
    if "ddir" in frame.columns:
        checks.append(pl.col("ddir").is_null() | ~pl.col("ddir").is_between(0, 2))
    return pl.any_horizontal(checks)


def _row_problem(row: dict[str, Any]) -> str:
    """What is wrong with a row :func:`_bad_rows` marks."""
    fields = {c: row[c] for c in ("time_ms", "value", "ddir", "bs_bytes") if c in row}
    if None in fields.values():
        return "missing fields (a fio log row is time, value, ddir, bs, ...)"
    if not 0 <= fields.get("ddir", 0) <= 2:
        return f"ddir {fields['ddir']} is not 0, 1 or 2 (read, write, trim)"
    name, value = next((c, v) for c, v in fields.items() if c in LIMITS and not 0 <= v < LIMITS[c])
    return f"negative {name} {value}" if value < 0 else f"{name} {value} is too large for a fio log"


def _impossible(frame: pl.DataFrame, line: int = 1) -> str | None:
    """Why the rows of one file (the first being line ``line``) are not fio's, or None."""
    bad = frame.select(_bad_rows(frame)).to_series()
    if not bad.any():
        return None
    n = int(bad.arg_true()[0])
    return f"line {line + n}: {_row_problem(frame.row(n, named=True))}"


def _malformed(exc: Exception) -> str:
    return f"malformed fio log: {(str(exc).splitlines() or [type(exc).__name__])[0]}"


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    return data if end < 0 else data[:end]


def split_partial(data: bytes) -> tuple[bytes, bytes]:
    """``data`` up to its last line end, and the line cut short after it (b"" when ``data``
    ends with a line end): what a run killed mid-row (SIGKILL, a full disk) leaves."""
    cut = len(data) if data.endswith(b"\n") else data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def cut_problem(lines: bytes, tail: bytes, line: int = 1) -> str | None:
    """Why ``tail``, a last line cut short after ``lines`` (the first of them line ``line``),
    is not the start of a log row, or None."""
    if ROW_START.fullmatch(tail):
        return None
    line += lines.count(b"\n")
    return f"line {line}: cut short, and not the start of a fio log row"


def _problem(first: bytes) -> str | None:
    if b"\0" not in first and (not first.strip() or LOG_ROW.match(first)):
        return None
    return "line 1 is not a fio log row (time, value, ddir, bs, ...)"


def log_problem(data: bytes) -> str | None:
    """Why the bytes (or the first bytes) of a file are no fio log, or None: its first line
    must be a log row, or blank (an empty log), or without a line end the start of a row
    (a log cut inside its first line)."""
    if b"\n" not in data and ROW_START.fullmatch(data):
        return None
    return _problem(_first_line(data))


def read_fio_log(
    path: str | Path,
    *,
    kind: str | None = None,
    log_offset: bool | None = None,
    window_value_both: bool = False,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Read one fio log file into a frame plus metadata (``kind``, ``epoch``, ``columns``).

    An empty file (a job shorter than one ``log_avg_msec`` window) gives an empty frame, as
    does one cut inside its first line; a last line cut short is dropped and counted in
    ``partial_lines`` (0 or 1). ``kind`` defaults to the type in the file name. ``log_offset``
    and ``window_value_both`` come from the job's options when known; otherwise the column
    count decides.
    """
    path = Path(path)
    kind = kind or log_kind(path)
    if kind not in LOG_KINDS:
        raise InputError(f"{path}: not a fio bw/iops/lat log name; pass kind= explicitly")
    lines, tail = split_partial(read_bytes(path, kind=LOG_LIMIT))  # FIFOs, devices refused
    first = _first_line(lines)
    if why := _problem(first) or cut_problem(lines, tail):
        raise InputError(f"{path}: {why}")
    names, schema = _layout(first, log_offset, window_value_both)
    try:
        frame = _parse(lines, schema) if first.strip() else pl.DataFrame(schema=schema)
        if why := _impossible(frame):
            raise InputError(f"{path}: {why}")
        frame = _finish(frame)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{path}: {_malformed(exc)}") from None
    epoch = bool(frame.height) and frame["time_ms"].min() >= EPOCH_MS_MIN
    meta = {"path": str(path), "kind": kind, "epoch": epoch, "columns": names}
    return canonical(frame, kind), meta | {"partial_lines": int(bool(tail))}


def canonical(frame: pl.DataFrame, kind: str) -> pl.DataFrame:
    """Log rows with fio's ``value``/``value_max`` under their canonical, unit-bearing names
    (:data:`VALUE_COLUMNS`)."""
    name, factor = VALUE_COLUMNS[kind]
    present = [c for c in ("value", "value_max") if c in frame.columns]
    return frame.with_columns(pl.col(present) * factor if factor != 1 else pl.col(present)).rename(
        {c: c.replace("value", name) for c in present}
    )


#: what a job's options say about its log columns: (log_offset or None if unknown,
#: log_window_value=both)
LogLayout = tuple[bool | None, bool]


class LogBatch:
    """Many log files' bytes, gathered per column layout and parsed in one pass per layout:
    far faster than a parser call per file for thousands of small logs. With ``sums``
    (per-I/O logs) each file's rows are summed per millisecond and direction
    (:data:`SUMS_SCHEMA`). A last line cut short is dropped and counted in ``partial``.
    """

    def __init__(self, sums: bool = False) -> None:
        self.bad: dict[int, str] = {}  #: file index -> why it could not be parsed
        self.partial: dict[int, int] = {}  #: file index -> lines cut short, dropped
        self.nbytes = 0
        self.sums = sums
        # (schema, columns kept) -> schema, indices of the columns kept, files, bytes, rows
        self._groups: dict[tuple, tuple[dict, list[int] | None, list[int], list, list]] = {}
        self._keys: dict[tuple, tuple] = {}  # (commas, hex prio, hints, columns) -> its group

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
        tail = b""
        if not data.endswith(b"\n"):  # empty, or cut mid-row
            data, tail = split_partial(data)
        end = data.find(b"\n")
        first = data if end < 0 else data[:end]
        if why := _problem(first) or (cut_problem(data, tail) if tail else None):
            self.bad[index] = why
            return
        if tail:
            self.partial[index] = 1
        if not first.strip():  # an empty log has no rows
            return
        shape = (first.count(b","), b"0x" in first, layout, columns)
        if (group := self._keys.get(shape)) is None:
            _, schema = _layout(first, *layout)
            key = (tuple(f"{k}:{v}" for k, v in schema.items()), columns)
            group = self._keys[shape] = self._groups.setdefault(
                key, (schema, _kept(schema, columns), [], [], [])
            )
        _, _, ids, blobs, counts = group
        ids.append(index)
        blobs.append(data)
        counts.append(data.count(b"\n"))
        self.nbytes += len(data)

    def parse(self) -> pl.DataFrame:
        """The columns kept of every file added (or their sums), plus ``file`` (its index);
        the bytes are let go, so this is done once."""
        groups, self._groups, self._keys = self._groups, {}, {}
        frames = []
        for schema, keep, ids, blobs, counts in groups.values():
            try:
                frame = _parse(b"".join(blobs), schema, keep)
            except pl.exceptions.PolarsError:
                frame = None
            if (  # a bad file (or blank lines) is found, and named, file by file
                frame is None
                or frame.height != sum(counts)
                or frame.select(_bad_rows(frame).any()).item()
            ):
                for i, blob in zip(ids, blobs, strict=True):
                    if (one := self._one(i, blob, schema, keep)) is not None:
                        frames.append(one)
                continue
            # each file's index on each of its rows (polars: numpy not needed); every file
            # added holds a row, so no list is empty (which explode would make a null)
            file_col = pl.lit(pl.Series("file", ids, dtype=pl.Int64)).repeat_by(pl.Series(counts))
            file_col = file_col.explode()
            frames.append(frame.with_columns(file_col))
        if not frames:
            return pl.DataFrame(schema={"file": pl.Int64, "time_ms": pl.Int64})
        rows = pl.concat(frames, how="diagonal_relaxed")
        return _finish(_sum(rows, "file") if self.sums else rows)

    def _one(
        self, index: int, blob: bytes, schema: dict, keep: list[int] | None
    ) -> pl.DataFrame | None:
        """One file's rows; None (and ``bad`` says why) when they are no fio log's."""
        try:
            frame = _parse(blob, schema, keep)
        except pl.exceptions.PolarsError as exc:
            self.bad[index] = _malformed(exc)
            return None
        if why := _impossible(frame):
            self.bad[index] = why
            return None
        return frame.with_columns(file=pl.lit(index, dtype=pl.Int64))


def _kept(schema: dict, columns: Sequence[str] | None) -> list[int] | None:
    """Indices of the canonical ``columns`` (``direction`` included) in ``schema``."""
    if columns is None:
        return None
    wanted = {"ddir" if c == "direction" else c for c in columns}
    return [n for n, c in enumerate(schema) if c in wanted]


def _sum(rows: pl.DataFrame, *by: str) -> pl.DataFrame:
    """Per-I/O rows (``ddir`` still a number) summed per ``by``, millisecond and direction,
    in that order (so a file's first row is its start, as with its rows in time order)."""
    keys = [*by, "time_ms", "ddir"]
    return (
        rows.group_by(keys)
        .agg(
            n=pl.len().cast(pl.Int64),
            value=pl.col("value").cast(pl.Float64).sum(),
            bs_bytes=pl.col("bs_bytes").sum(),
        )
        .sort(keys)
    )


def line_chunks(path: str, size: int, kind: str = PER_IO_LIMIT) -> Iterator[bytes]:
    """A regular file's bytes about ``size`` at a time, each chunk but the last ending with a
    line end (the last ends where the file does); InputError naming it when it is no regular
    file or larger than the size limit of ``kind``, before any byte is read (or once it has
    grown past it)."""
    with open_regular(path, kind) as fh:  # a FIFO or a device is refused unread
        pending = fh.read(size)
        done = len(pending)
        while block := fh.read(size):
            done += len(block)
            if done > size_limit(kind):
                raise too_large(path, done, kind)
            cut = pending.rfind(b"\n") + 1
            if not cut:
                raise InputError(f"{path}: a line longer than {size} bytes: not a fio log")
            yield pending[:cut]
            pending = pending[cut:] + block
    yield pending


def per_io_sums(
    path: str, layout: LogLayout = (None, False), chunk_bytes: int | None = None
) -> tuple[pl.DataFrame, int]:
    """A per-I/O log summed per millisecond and direction (:data:`SUMS_SCHEMA`, in time
    order), parsed ``chunk_bytes`` (default :data:`CHUNK_BYTES`) at a time: memory is bounded
    by the chunk and the sums, not by the file; and the lines cut short dropped (0 or 1: only
    the file's end can be). InputError naming the file when it cannot be read, is no fio log
    or holds a row fio cannot have written."""
    parts: list[pl.DataFrame] = []
    schema: dict = {}
    line = 1
    tail = b""
    try:
        for chunk in line_chunks(path, chunk_bytes or CHUNK_BYTES):
            chunk, tail = split_partial(chunk)  # b"" but at the file's end
            if not schema:
                first = _first_line(chunk)
                if why := _problem(first):
                    raise InputError(f"{path}: {why}")
                if not first.strip():  # an empty log has no rows
                    break
                _, schema = _layout(first, *layout)
            frame = _parse(chunk, schema, _kept(schema, SUMS_SCHEMA))
            if why := _impossible(frame, line) or cut_problem(chunk, tail, line):
                raise InputError(f"{path}: {why}")
            line += chunk.count(b"\n")
            parts.append(_sum(frame))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{path}: {_malformed(exc)}") from None
    if not parts:
        if why := cut_problem(b"", tail):  # a log cut inside its first line
            raise InputError(f"{path}: {why}")
        return pl.DataFrame(schema=SUMS_SCHEMA), int(bool(tail))
    sums = pl.concat(parts).group_by("time_ms", "ddir").sum().sort("time_ms", "ddir")
    return _finish(sums).select(list(SUMS_SCHEMA)), int(bool(tail))

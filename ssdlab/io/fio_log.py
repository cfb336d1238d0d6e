"""fio per-I/O and windowed logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

Canonical columns: ``time_ms`` (ms since job start, or since the epoch with
``log_unix_epoch``), ``value`` (bw: KiB/s, iops: count, lat/clat/slat: ns),
``direction`` (read/write/trim), ``bs_bytes`` (0 in windowed logs), and when present
``value_max`` (``log_window_value=both``), ``offset_bytes``, ``prio``, ``issue_time_ns``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError

LOG_KINDS = ("bw", "iops", "clat", "slat", "lat")
_NAME_RE = re.compile(r"_(bw|iops|clat|slat|lat)(?:\.\d+)?\.log(?:\.[\w.:-]+)?$")
_DDIR = {0: "read", 1: "write", 2: "trim"}
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
    n_cols = first.count(b",") + 1 if first.strip() else 5
    if n_cols < 4 or b"\0" in first:
        raise InputError(f"{path}: line 1 is not a fio log row (time, value, ddir, bs, ...)")
    names = _columns(n_cols, log_offset, window_value_both)
    schema = {name: pl.String if name == "prio" else pl.Int64 for name in names}
    if not first.strip():  # fio writes nothing for a job shorter than one log window
        frame = pl.DataFrame(schema=schema)
    else:
        try:
            frame = pl.read_csv(
                path,
                has_header=False,
                new_columns=names,
                schema=schema,
                truncate_ragged_lines=True,
            )
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"{path}: malformed fio log: {str(exc).splitlines()[0]}") from None
    frame = frame.with_columns(
        pl.col("ddir").replace_strict(_DDIR, default=None, return_dtype=pl.String)
    ).rename({"ddir": "direction"})
    if "prio" in frame.columns:
        frame = frame.with_columns(
            pl.col("prio").str.strip_chars().str.replace("^0x", "").str.to_integer(base=16)
        )
    epoch = bool(frame.height) and frame["time_ms"].min() >= EPOCH_MS_MIN
    meta = {"path": str(path), "kind": kind, "epoch": epoch, "columns": names}
    return frame, meta

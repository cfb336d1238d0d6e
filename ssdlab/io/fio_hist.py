"""fio completion-latency histogram logs (``write_hist_log`` with ``log_hist_msec``).

A row is ``time_ms, ddir, bs, bin0 .. binN``: the I/Os completed since that direction's
previous row, counted in fio's log-linear latency bins. fio 3.x writes 29 groups of 64 bins
(1856) in nanoseconds, fio 2.x 19 groups (1216) in microseconds; ``log_hist_coarseness=c``
sums 2^c adjacent bins. The reader detects all of this from the column count.

Canonical frame (long, non-zero bins only): ``time_ms``, ``direction``, ``bs_bytes``, ``bin``
(index in the file), ``lat_lo_ns``, ``lat_hi_ns``, ``count``. A bin holds latencies in
[``lat_lo_ns``, ``lat_hi_ns``). A negative count rejects the log (InputError naming the line).
A last line cut short (no line end: the run was killed or the disk filled) is dropped, as
:mod:`ssdlab.io.fio_log` does, and counted in ``partial_lines``.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import InputError
from ..units import percentile_name
from ..vocab import DIRECTIONS
from .fio_bins import GROUPS, PLAT_BITS, PLAT_VAL
from .fio_log import cut_problem, line_chunks, split_partial
from .text import read_bytes


def plat_idx_to_val(idx: np.ndarray, edge: float = 0.5) -> np.ndarray:
    """fio's ``plat_idx_to_val`` (stat.c), with the position ``edge`` in the bin (0 lower,
    1 upper) of fiologparser_hist.py; like fio it returns the index itself below bin 128."""
    idx = np.asarray(idx, dtype=np.int64)
    small = idx < (PLAT_VAL << 1)
    error_bits = np.where(small, 0, (idx >> PLAT_BITS) - 1)
    base = np.left_shift(1, error_bits + PLAT_BITS)
    value = base + ((idx % PLAT_VAL) + edge) * np.left_shift(1, error_bits)
    return np.where(small, idx, value).astype(float)


def bin_layout(n_bins: int) -> tuple[int, int]:
    """(fio major version, coarseness) for a histogram with ``n_bins`` columns."""
    for major, groups in GROUPS.items():
        full = groups * PLAT_VAL
        for coarseness in range(9):
            if full >> coarseness == n_bins and (full >> coarseness) << coarseness == full:
                return major, coarseness
    raise ValueError(f"{n_bins} histogram columns match no fio bin layout (1856 or 1216 / 2^c)")


def bin_edges(n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of every bin in nanoseconds (a coarse bin spans its 2^c fine
    bins; fio 2.x microsecond bins are converted)."""
    major, coarseness = bin_layout(n_bins)
    stride = 1 << coarseness
    first = np.arange(n_bins) * stride
    last = first + stride - 1
    lower = plat_idx_to_val(first, 0.0)
    upper = np.where(last < (PLAT_VAL << 1), last + 1.0, plat_idx_to_val(last, 1.0))
    unit = 1000.0 if major == 2 else 1.0
    return lower * unit, upper * unit


def parser_bin_values(n_bins: int) -> np.ndarray:
    """The value fiologparser_hist.py gives each bin (``plat_idx_to_val_coarse``), in ns.

    It is the midpoint between the bin's lower edge and the *next* bin's upper edge, i.e.
    about one bin width above the bin's own midpoint; kept so results match fio's tool.
    """
    major, coarseness = bin_layout(n_bins)
    stride = 1 << coarseness
    first = np.arange(n_bins) * stride
    lower = plat_idx_to_val(first, 0.0)
    upper = plat_idx_to_val(first + stride, 1.0)
    return (lower + (upper - lower) * 0.5) * (1000.0 if major == 2 else 1.0)


#: fields of a histogram log parsed at a time (about 200 kB of fio's text): the parse's
#: temporary arrays stay small enough to be reused rather than mapped afresh (the page
#: faults of chunks of megabytes cost more than the parse itself)
CHUNK_CELLS = 2**16
#: the most non-zero bins a log's rows keep (24 bytes each): a day of 1 s rows of 8 jobs has
#: ~70 million; the file's size is capped too (:data:`~ssdlab.io.text.SIZE_LIMITS`)
MAX_BINS = 2**28
HIST_LIMIT = "fio histogram logs"  #: its size limit's name
_CHECKS = (
    "a direction other than 0-2",
    "a negative time or block size",
    "a negative bin count",
    "a bin count of 2**53 or more",
)
_EMPTY_FIELD = re.compile(rb"(?:^|[,\n])[ \t\r]*(?=[,\n])")  # nothing but blanks
#: the rows of a chunk: each row's time, direction and block size (an n x 3 array), and
#: the row, bin and count of its non-zero bins, in row and bin order
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _parse_checked(chunk: bytes, schema: dict, path: Path, line: int) -> np.ndarray:
    """Whole lines the fast parse could not take, parsed field by field: InputError naming
    what is malformed or the first row with a missing field."""
    try:
        wide = pl.read_csv(
            io.BytesIO(chunk), has_header=False, schema=schema, truncate_ragged_lines=True
        )
    except pl.exceptions.PolarsError as exc:
        where = next(
            (f"line {line + n}: " for n, text in enumerate(chunk.splitlines()) if not _ints(text)),
            "",
        )
        raise InputError(
            f"{path}: {where}malformed histogram log: {str(exc).splitlines()[0]}"
        ) from None
    missing = wide.select(pl.any_horizontal(pl.all().is_null()).arg_true().min()).item()
    if missing is not None:
        raise InputError(
            f"{path}: line {line + missing}: a missing field, not a fio histogram log row"
        )
    return wide.to_numpy()


def _ints(text: bytes) -> bool:
    """Whether a line is integers apart by commas (as a histogram log row is)."""
    return all(field.strip().lstrip(b"-").isdigit() for field in text.split(b","))


def _run_values(buf: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The numbers written by the runs of digits that end just before the positions ``ends``
    in ``buf`` (which ends with a line end, so a run at its start stops there), a digit at
    a time for the longer ones; None when a run has more than 18 digits (2**63 or more)."""
    values = np.zeros(ends.size, np.int64)
    at = np.arange(ends.size)
    for k in range(19):
        digit = buf[ends[at] - 1 - k] - ord("0")  # uint8: a byte below "0" wraps to 208 or more
        at, digit = at[digit < 10], digit[digit < 10]
        if not at.size:
            return values
        if k < 18:
            values[at] += digit.astype(np.int64) * 10**k
    return None


def _fio_rows(buf: np.ndarray, n_cols: int) -> Rows | None:
    """Whole lines (the bytes ``buf``) as fio writes them, ``n_cols`` fields of digits (at
    most 18: below 2**63) apart by ``, ``, as :data:`Rows`; None for anything else.

    Why not a dense parse (``np.fromstring``, polars' CSV reader): fio's rows are mostly
    ``0, `` fields, and only the few non-zero ones need a number. Where a field is follows
    from arithmetic: a one-digit field and its ``, `` take 3 bytes, so a byte's field in its
    line is its offset in the line less the digits before it that follow a digit (the few
    of the longer numbers), over 3. No array holds a number per field."""
    newline = buf == ord("\n")
    digit = (buf - ord("0")) < 10  # uint8 arithmetic: a byte below "0" wraps to 208 or more
    comma = buf == ord(",")
    line_end = np.flatnonzero(newline)
    if (  # only digits, ", " and line ends; each field a run of digits ended by "," or "\n"
        not digit[0]
        or np.count_nonzero(digit) + 2 * np.count_nonzero(comma) + line_end.size != buf.size
        or not np.array_equal(comma[:-1], buf[1:] == ord(" "))
        or not np.array_equal(digit[:-1] > digit[1:], (comma | newline)[1:])
    ):
        return None
    line_start = np.append(0, line_end[:-1] + 1)
    tail = np.flatnonzero(digit[:-1] & digit[1:]) + 1  # the digits that follow a digit
    tails_before = np.searchsorted(tail, line_start)
    tails_in_line = np.diff(np.append(tails_before, tail.size))
    if (line_end - line_start - tails_in_line + 2 != 3 * n_cols).any():
        return None  # a line of other than n_cols fields
    at = np.flatnonzero((buf - ord("1")) < 9)  # the non-zero digits
    row = np.searchsorted(line_end, at)
    col = (at - line_start[row] - np.searchsorted(tail, at) + tails_before[row]) // 3
    last = np.append(np.diff(row * n_cols + col) > 0, True)  # each field's last non-zero digit
    row, col, end = row[last], col[last], at[last] + 1
    longer = np.flatnonzero(digit[end])
    for _ in range(18):  # to the field's end: the zeros after its last non-zero digit
        if not longer.size:
            break
        end[longer] += 1
        longer = longer[digit[end[longer]]]
    if longer.size or (values := _run_values(buf, end)) is None:
        return None
    heads = np.zeros((line_end.size, 3), np.int64)
    heads[row[col < 3], col[col < 3]] = values[col < 3]
    return heads, row[col >= 3], col[col >= 3] - 3, values[col >= 3]


def _dense_rows(rows: np.ndarray) -> Rows:
    """:data:`Rows` of a histogram log's rows parsed whole (a row of numbers per line)."""
    bins = rows[:, 3:]
    row, col = np.divmod(np.flatnonzero(bins), bins.shape[1])
    return rows[:, :3], row, col, bins[row, col]


def _whole_rows(buf: np.ndarray, n_rows: int, n_cols: int) -> bool:
    """Whether each of the ``n_rows`` lines (the bytes ``buf``) holds ``n_cols`` fields."""
    ends = np.flatnonzero((buf == ord(",")) | (buf == ord("\n")))
    return ends.size == n_rows * n_cols and (buf[ends[n_cols - 1 :: n_cols]] == ord("\n")).all()


def _parse(chunk: bytes, schema: dict, path: Path, line: int) -> Rows:
    """Whole lines of a histogram log (the first is line ``line``) as :data:`Rows`;
    InputError naming the first line that no fio histogram log holds: a missing field, a
    direction other than 0-2 (read, write, trim), a negative time or block size, or a bin
    count below 0 or of 2**53 and more (beyond exact float arithmetic)."""
    n_cols = len(schema)
    buf = np.frombuffer(chunk, np.uint8)
    parsed = _fio_rows(buf, n_cols)
    if parsed is None:  # numbers written otherwise (signs, tabs, other spacing), or no log
        n_rows = chunk.count(b"\n")
        flat = _numbers(chunk) if _whole_rows(buf, n_rows, n_cols) else None
        if flat is not None and flat.size == n_rows * n_cols:
            parsed = _dense_rows(flat.reshape(n_rows, n_cols))
        else:
            parsed = _dense_rows(_parse_checked(chunk, schema, path, line))
    heads, row, _, counts = parsed
    flagged = (
        np.flatnonzero((heads[:, 1] < 0) | (heads[:, 1] > 2)),
        np.flatnonzero((heads[:, 0] < 0) | (heads[:, 2] < 0)),
        row[counts < 0],
        row[counts >= 2**53],
    )
    bad = {why: int(rows[0]) for why, rows in zip(_CHECKS, flagged, strict=True) if rows.size}
    if bad:
        why = min(bad, key=bad.__getitem__)
        raise InputError(f"{path}: line {line + bad[why]}: {why}, not a fio histogram log row")
    return parsed


def _numbers(chunk: bytes) -> np.ndarray | None:
    """The numbers of whole lines, flat; None when one is not a number (np.fromstring
    would read an empty field as 0)."""
    if _EMPTY_FIELD.search(chunk):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.fromstring(chunk[:-1].replace(b"\n", b","), dtype=np.int64, sep=",")
    except ValueError:
        return None


@dataclass(frozen=True)
class HistRows:
    """A histogram log's rows as read: ``heads`` (one per row, empty rows included: its
    ``time_ms``, ddir 0-2 and ``bs_bytes``) and the non-zero bins, in row and bin order
    (``row``, the index of its row in ``heads``; ``bin``; ``count``); ``meta`` as
    :func:`read_fio_hist_log`'s but ``epoch``."""

    heads: np.ndarray
    row: np.ndarray
    bin: np.ndarray
    count: np.ndarray
    meta: dict[str, Any]


def read_fio_hist_rows(path: str | Path) -> HistRows:
    """Read a histogram log's rows (:class:`HistRows`). A log cut inside its first line
    holds no row: it reads as an empty log (of fio 3.x's bins). Parsed a bounded number of
    rows at a time (:data:`CHUNK_CELLS`): memory holds the non-zero bins (at most
    :data:`MAX_BINS`), not the file."""
    path = Path(path)
    head = read_bytes(path, 2**16)  # a FIFO or a device is refused unread
    first = head.split(b"\n", 1)[0]
    if b"\0" in first:
        raise InputError(f"{path}: binary file, not a fio histogram log")
    n_cols = first.count(b",") + 1 if b"\n" in head else 3 + GROUPS[3] * PLAT_VAL
    try:
        major, coarseness = bin_layout(n_cols - 3)
    except ValueError as exc:
        raise InputError(f"{path}: line 1 is not a fio histogram log row: {exc}") from None
    schema = {"time_ms": pl.Int64, "ddir": pl.Int64, "bs_bytes": pl.Int64}
    schema |= {f"b{i}": pl.Int64 for i in range(n_cols - 3)}
    parts: list[tuple[np.ndarray, ...]] = []
    line, tail, kept = 1, b"", 0
    size = max(2**16, CHUNK_CELLS // n_cols * len(first))
    try:
        for chunk in line_chunks(str(path), size, HIST_LIMIT):
            chunk, tail = split_partial(chunk)  # b"" but at the file's end
            if chunk:
                heads, row, bins, counts = _parse(chunk, schema, path, line)
                parts.append((heads, row + (line - 1), bins, counts))
                line += len(heads)
                kept += len(bins)
                if kept > MAX_BINS:
                    raise InputError(
                        f"{path}: more than {MAX_BINS:,} non-zero bins by line {line - 1}, over "
                        "ssdlab's limit for fio histogram logs (docs/limits.md)"
                    )
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if why := cut_problem(b"", tail, line):
        raise InputError(f"{path}: {why}")
    if parts:
        heads, row, bins, counts = (np.concatenate(c) for c in zip(*parts, strict=True))
    else:
        heads, (row, bins, counts) = np.zeros((0, 3), np.int64), [np.zeros(0, np.int64)] * 3
    meta = {
        "path": str(path),
        "fio_major": major,
        "coarseness": coarseness,
        "n_bins": n_cols - 3,
        "intervals": line - 1,
        "partial_lines": int(bool(tail)),
    }
    return HistRows(heads, row, bins, counts, meta)


def read_fio_hist_log(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Read a histogram log into the long canonical frame plus metadata
    (``fio_major``, ``coarseness``, ``n_bins``, ``epoch``, ``intervals``, ``partial_lines``:
    0, or 1 when a last line cut short was dropped); read as :func:`read_fio_hist_rows`."""
    rows = read_fio_hist_rows(path)
    times, ddirs, sizes = rows.heads[rows.row].T
    lower, upper = bin_edges(rows.meta["n_bins"])
    frame = pl.DataFrame(
        {
            "time_ms": times,
            "direction": pl.Series(DIRECTIONS, dtype=pl.String).gather(ddirs),
            "bs_bytes": sizes,
            "bin": rows.bin,
            "lat_lo_ns": lower[rows.bin],
            "lat_hi_ns": upper[rows.bin],
            "count": rows.count,
        }
    )
    return frame, rows.meta | {"epoch": bool(len(times)) and int(times.min()) >= 10**12}


def interval_end_ms(interval_ms: int | pl.Expr) -> pl.Expr:
    """The end of the interval a histogram row belongs to, as ``fiologparser_hist.py`` puts
    it: rows whose time + 10 ms falls before the end of an interval are counted in it."""
    return ((pl.col("time_ms") + 10) // interval_ms + 1) * interval_ms


def interval_stats(
    hist: pl.DataFrame,
    n_bins: int,
    by: Sequence[str],
    percentiles: Sequence[float],
    thresholds_ns: Sequence[float] = (),
) -> pl.DataFrame:
    """Latency statistics of histogram rows (``bin``, ``count``) summed per ``by``, as
    ``fiologparser_hist.py --noweight`` computes them: ``samples``, ``lat_min_ns``,
    ``lat_mean_ns``, ``lat_pXX_ns`` (numpy's ``interp`` on the CDF of bin midpoints over
    every bin, empty ones included) and ``lat_max_ns``, using the tool's bin values
    (:func:`parser_bin_values`). Rows of any number of files add up (a job's threads).

    ``frac_over_<T>ns`` is the share of I/Os in bins whose upper edge is above T: a bin that
    straddles T counts as over, so the share is an upper bound, too high by at most that one
    bin's share (bins are ~1/64 of their latency wide). Computed from the non-zero bins
    alone (:func:`_stats`): time and memory follow the bins that hold I/Os, not the layout.
    """
    by = list(by)
    keys, group = _groups(hist.select(by))
    cell = group * n_bins + hist["bin"].to_numpy()
    in_order = np.argsort(cell, kind="stable")  # a merge: rows come in runs of ascending bins
    cell = cell[in_order]
    first = np.flatnonzero(np.diff(cell, prepend=-1))
    counts = hist["count"].to_numpy()[in_order]
    counts = np.add.reduceat(counts, first) if first.size else counts
    group, bins = np.divmod(cell[first][counts > 0], n_bins)
    starts = np.flatnonzero(np.diff(group, prepend=-1))
    stats = _stats(
        starts, bins, counts[counts > 0].astype(float), n_bins, percentiles, thresholds_ns
    )
    names = [f"lat_{percentile_name(p)}_ns" for p in percentiles]
    order = ["samples", "lat_min_ns", "lat_mean_ns", *names, "lat_max_ns"]
    order += [f"frac_over_{t:g}ns" for t in thresholds_ns]
    frame = pl.DataFrame({name: stats[name] for name in order})
    frame = frame.with_columns(pl.col("samples").cast(pl.Int64))
    return keys[group[starts]].hstack(frame)


def _groups(frame: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """The distinct rows of ``frame`` in sorted order, and the index among them of each of
    its rows: looked up for the first row of each run of equal rows alone (a histogram log
    row's bins come together)."""
    run = frame.select(pl.struct(frame.columns).rle_id()).to_series().to_numpy()
    firsts = frame[np.flatnonzero(np.diff(run, prepend=-1))]
    keys = firsts.unique().sort(frame.columns)
    index = firsts.join(
        keys.with_row_index("group"),
        on=frame.columns,
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )["group"]
    return keys, index.to_numpy().astype(np.int64)[run]


def _stats(
    starts: np.ndarray,
    bins: np.ndarray,
    counts: np.ndarray,
    n_bins: int,
    percentiles: Sequence[float],
    thresholds_ns: Sequence[float],
) -> dict[str, np.ndarray]:
    """The statistics of :func:`interval_stats` of groups of non-zero bins (``bins``,
    ``counts``; sorted, each group from its index in ``starts``).

    The CDF over every bin is a point per non-zero bin (its midpoint) joined by flat runs
    over the empty bins: numpy's ``interp`` needs only the non-zero bins' points and the
    ends of those runs (the last empty bin before a non-zero one, the first after it).
    """
    values, upper = parser_bin_values(n_bins), bin_edges(n_bins)[1]
    if not len(starts):
        return {name: np.zeros(0) for name in _stat_names(percentiles, thresholds_ns)}
    sizes = np.diff(np.append(starts, len(bins)))
    total = np.add.reduceat(counts, starts)
    last = starts + sizes - 1
    out = {
        "samples": total,
        "lat_min_ns": values[bins[starts]],
        "lat_mean_ns": np.add.reduceat(counts * values[bins], starts) / total,
        "lat_max_ns": values[bins[last]],
    }
    done = np.cumsum(counts)
    before = done - counts - np.repeat(done[starts] - counts[starts], sizes)  # in the group
    t = np.repeat(total, sizes)
    first_of = np.zeros(len(bins), bool)
    first_of[starts] = True
    last_of = np.zeros(len(bins), bool)
    last_of[last] = True
    gap_before = (bins > 0) & (first_of | (np.diff(bins, prepend=-1) > 1))
    gap_after = (bins < n_bins - 1) & (last_of | (np.diff(bins, append=n_bins + 1) > 1))
    # in bin order, each non-zero bin's point between the ends of the empty runs around it
    take = np.stack([gap_before, np.ones_like(gap_before), gap_after], axis=1).ravel()
    point_bin = (bins[:, None] + np.array([-1, 0, 1])).ravel()[take]
    cdf = 100.0 * np.stack([before, before + counts / 2.0, before + counts], axis=1)
    cdf = (cdf / t[:, None]).ravel()[take]
    per_bin = 1 + gap_before.astype(np.int64) + gap_after
    point_starts = (np.cumsum(per_bin) - per_bin)[starts]
    point_last = np.append(point_starts[1:], len(cdf)) - 1
    at = values[point_bin]
    for p in percentiles:  # interp: the last point at or below p, and the next one
        j = point_starts + np.add.reduceat((cdf <= p).astype(np.int64), point_starts) - 1
        inside = (j >= point_starts) & (j < point_last)
        k = np.where(inside, j, 0)
        x0, x1 = cdf[k], cdf[np.minimum(k + 1, len(cdf) - 1)]
        slope = (at[np.minimum(k + 1, len(cdf) - 1)] - at[k]) / np.where(inside, x1 - x0, 1.0)
        edge = np.where(j < point_starts, values[0], values[-1])  # as interp: the ends
        out[f"lat_{percentile_name(p)}_ns"] = np.where(inside, slope * (p - x0) + at[k], edge)
    for threshold in thresholds_ns:
        over = np.add.reduceat(np.where(upper[bins] > threshold, counts, 0.0), starts)
        out[f"frac_over_{threshold:g}ns"] = over / total
    return out


def _stat_names(percentiles: Sequence[float], thresholds_ns: Sequence[float]) -> list[str]:
    names = ["samples", "lat_min_ns", "lat_mean_ns", "lat_max_ns"]
    names += [f"lat_{percentile_name(p)}_ns" for p in percentiles]
    return names + [f"frac_over_{t:g}ns" for t in thresholds_ns]


def hist_intervals(
    hist: pl.DataFrame,
    n_bins: int,
    interval_ms: int,
    percentiles: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0),
    thresholds_ns: tuple[float, ...] = (),
) -> pl.DataFrame:
    """Latency statistics per interval of ``interval_ms`` (``end_ms``) and direction of
    histogram log rows (of any number of files, e.g. numjobs clones): :func:`interval_stats`
    of the rows :func:`interval_end_ms` puts in each interval."""
    ends = hist.with_columns(end_ms=interval_end_ms(interval_ms))
    return interval_stats(ends, n_bins, ("end_ms", "direction"), percentiles, thresholds_ns)

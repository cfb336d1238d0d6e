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
import warnings
from collections.abc import Sequence
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


#: rows of a histogram log parsed at a time (times its columns: the int64 cells in memory)
CHUNK_CELLS = 2**22
_CHECKS = (
    "a direction other than 0-2",
    "a negative time or block size",
    "a negative bin count",
    "a bin count of 2**53 or more",
)


def _parse_checked(chunk: bytes, schema: dict, path: Path, line: int) -> np.ndarray:
    """Whole lines the fast parse could not take, parsed field by field: InputError naming
    what is malformed or the first row with a missing field."""
    try:
        wide = pl.read_csv(
            io.BytesIO(chunk), has_header=False, schema=schema, truncate_ragged_lines=True
        )
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{path}: malformed histogram log: {str(exc).splitlines()[0]}") from None
    missing = wide.select(pl.any_horizontal(pl.all().is_null()).arg_true().min()).item()
    if missing is not None:
        raise InputError(
            f"{path}: line {line + missing}: a missing field, not a fio histogram log row"
        )
    return wide.to_numpy()


def _field_ends(buf: np.ndarray, n_rows: int, n_cols: int) -> np.ndarray | None:
    """The position of the comma or line end after each field of ``n_rows`` lines (the
    bytes ``buf``), or None unless each line holds ``n_cols`` fields."""
    ends = np.flatnonzero((buf == ord(",")) | (buf == ord("\n")))
    if ends.size != n_rows * n_cols or not (buf[ends[n_cols - 1 :: n_cols]] == ord("\n")).all():
        return None
    return ends


def _fio_numbers(chunk: bytes, buf: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The fields of whole lines (``chunk``, ``buf`` its bytes, ``ends`` as
    :func:`_field_ends`) as fio writes them: each an unsigned number of at most 18 digits
    (below 2**63), spaces before it only (``0, 12, 0``); None for anything else.

    Why not ``np.fromstring``: fio's rows are mostly ``0, `` fields, and its text parser
    takes about twice as long over them as these whole-array steps. Each field holds one
    run of digits (as many runs as fields, and no digit followed by a space, which would
    be needed to fit two in a field), ending at the field's end; the numbers are built
    from their first digit on, a digit at a time for the few longer ones."""
    if chunk.translate(None, b"0123456789, \n"):  # a sign, a tab, a letter...: not fio's
        return None
    digit = (buf - ord("0")) < 10  # uint8 arithmetic: a byte below "0" wraps to 208 or more
    if (digit[:-1] & (buf[1:] == ord(" "))).any():
        return None
    run_start = digit.copy()
    run_start[1:] &= ~digit[:-1]
    starts = np.flatnonzero(run_start)
    if starts.size != ends.size:
        return None
    length = ends - starts
    longest = int(length.max(initial=0))
    if longest > 18:
        return None
    values = (buf[starts] - ord("0")).astype(np.int64)
    longer = np.flatnonzero(length > 1)
    for k in range(1, longest):
        longer = longer[length[longer] > k]
        values[longer] = values[longer] * 10 + (buf[starts[longer] + k] - ord("0"))
    return values


def _numbers(chunk: bytes, n_rows: int, n_cols: int) -> np.ndarray | None:
    """The fields of ``n_rows`` whole lines as one int64 array, or None when a line does
    not hold ``n_cols`` numbers (the field-by-field parse says what is wrong)."""
    buf = np.frombuffer(chunk, np.uint8)
    if (ends := _field_ends(buf, n_rows, n_cols)) is None:
        return None
    if (flat := _fio_numbers(chunk, buf, ends)) is not None:
        return flat
    try:  # numbers written otherwise (with signs, tabs, other spacing)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flat = np.fromstring(chunk[:-1].replace(b"\n", b","), dtype=np.int64, sep=",")
    except ValueError:
        return None
    return flat if flat.size == n_rows * n_cols else None


def _rows(chunk: bytes, n_rows: int, schema: dict, path: Path, line: int) -> np.ndarray:
    """``n_rows`` whole lines of a histogram log (the first is line ``line``) as an int64
    array, a row per line; InputError naming the first line that no fio histogram log
    holds: a missing field, a direction other than 0-2 (read, write, trim), a negative time
    or block size, or a bin count below 0 or of 2**53 and more (beyond exact float
    arithmetic)."""
    n_cols = len(schema)
    flat = _numbers(chunk, n_rows, n_cols)
    rows = (
        flat.reshape(n_rows, n_cols)
        if flat is not None
        else _parse_checked(chunk, schema, path, line)
    )
    counts = rows[:, 3:]
    fine = np.zeros(len(rows), bool)
    low, high = (counts.min(), counts.max()) if counts.size else (0, 0)
    tests = (  # the counts row by row only when one of them is out of range
        (rows[:, 1] < 0) | (rows[:, 1] > 2),
        (rows[:, 0] < 0) | (rows[:, 2] < 0),
        (counts < 0).any(axis=1) if low < 0 else fine,
        (counts >= 2**53).any(axis=1) if high >= 2**53 else fine,
    )
    bad = {why: int(np.argmax(t)) for why, t in zip(_CHECKS, tests, strict=True) if t.any()}
    if bad:
        why = min(bad, key=bad.__getitem__)
        raise InputError(f"{path}: line {line + bad[why]}: {why}, not a fio histogram log row")
    return rows


def _sparse(rows: np.ndarray) -> pl.DataFrame:
    """The non-zero bins of rows of a histogram log, long, in row and bin order."""
    at = np.flatnonzero(rows)  # in the flat array: cheaper than np.nonzero of the 2-d one
    row, col = np.divmod(at, rows.shape[1])
    row, col = row[col >= 3], col[col >= 3]
    return pl.DataFrame(
        {
            "time_ms": rows[row, 0],
            "ddir": rows[row, 1],
            "bs_bytes": rows[row, 2],
            "bin": col - 3,
            "count": rows[row, col],
        }
    )


def read_fio_hist_log(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Read a histogram log into the long canonical frame plus metadata
    (``fio_major``, ``coarseness``, ``n_bins``, ``epoch``, ``intervals``, ``partial_lines``:
    0, or 1 when a last line cut short was dropped). A log cut inside its first line holds
    no row: it reads as an empty log (of fio 3.x's bins). Parsed a bounded number of rows
    at a time (:data:`CHUNK_CELLS`): memory holds the non-zero bins, not the file."""
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
    parts, line, tail = [], 1, b""
    try:
        for chunk in line_chunks(str(path), max(2**16, CHUNK_CELLS // n_cols * len(first))):
            chunk, tail = split_partial(chunk)  # b"" but at the file's end
            if chunk:
                n_rows = chunk.count(b"\n")
                parts.append(_sparse(_rows(chunk, n_rows, schema, path, line)))
                line += n_rows
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if why := cut_problem(b"", tail, line):
        raise InputError(f"{path}: {why}")
    lower, upper = bin_edges(n_cols - 3)
    sparse = pl.concat(parts) if parts else _sparse(np.zeros((0, n_cols), np.int64))
    times = sparse["time_ms"]
    frame = sparse.select(
        "time_ms",
        pl.col("ddir")
        .replace_strict(dict(enumerate(DIRECTIONS)), default=None, return_dtype=pl.String)
        .alias("direction"),
        "bs_bytes",
        "bin",
        lat_lo_ns=pl.Series(lower).gather(sparse["bin"]),
        lat_hi_ns=pl.Series(upper).gather(sparse["bin"]),
        count="count",
    )
    meta = {
        "path": str(path),
        "fio_major": major,
        "coarseness": coarseness,
        "n_bins": n_cols - 3,
        "epoch": bool(times.len()) and times.min() >= 10**12,
        "intervals": line - 1,
        "partial_lines": int(bool(tail)),
    }
    return frame, meta


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
    summed = (
        hist.group_by(*by, "bin")
        .agg(pl.col("count").sum())
        .filter(pl.col("count") > 0)
        .sort(*by, "bin")
    )
    keys = summed.select(*by, group=pl.struct(by).rle_id()).with_row_index("at")
    groups = keys.unique("group", keep="first", maintain_order=True)
    stats = _stats(
        groups["at"].to_numpy().astype(np.int64),
        summed["bin"].to_numpy(),
        summed["count"].to_numpy().astype(float),
        n_bins,
        percentiles,
        thresholds_ns,
    )
    names = [f"lat_{percentile_name(p)}_ns" for p in percentiles]
    order = ["samples", "lat_min_ns", "lat_mean_ns", *names, "lat_max_ns"]
    order += [f"frac_over_{t:g}ns" for t in thresholds_ns]
    frame = pl.DataFrame({name: stats[name] for name in order})
    frame = frame.with_columns(pl.col("samples").cast(pl.Int64))
    return groups.select(by).hstack(frame)


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
    group = np.repeat(np.arange(len(starts)), sizes)
    done = np.cumsum(counts)
    before = done - counts - np.repeat(done[starts] - counts[starts], sizes)  # in the group
    t = np.repeat(total, sizes)
    first_of = np.zeros(len(bins), bool)
    first_of[starts] = True
    last_of = np.zeros(len(bins), bool)
    last_of[last] = True
    gap_before = (bins > 0) & (first_of | (np.diff(bins, prepend=-1) > 1))
    gap_after = (bins < n_bins - 1) & (last_of | (np.diff(bins, append=n_bins + 1) > 1))
    point_group = np.concatenate([group, group[gap_before], group[gap_after]])
    point_bin = np.concatenate([bins, bins[gap_before] - 1, bins[gap_after] + 1])
    cdf = np.concatenate(
        [
            100.0 * (before + counts / 2.0) / t,
            100.0 * before[gap_before] / t[gap_before],
            100.0 * (before + counts)[gap_after] / t[gap_after],
        ]
    )
    order = np.lexsort((point_bin, point_group))
    point_bin, cdf, point_group = point_bin[order], cdf[order], point_group[order]
    point_starts = np.searchsorted(point_group, np.arange(len(starts)))
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

"""ACT-style slice tables from fio histogram logs (``write_hist_log`` + ``log_hist_msec``).

A fio 3.x histogram-log row is ``time_ms, ddir, bs, bin_0, ..., bin_n``: completion-latency
counts since that direction's previous row. fio has 1856 bins (stat.h: 29 groups of 64):
bin ``idx < 128`` holds exactly ``idx`` ns; above, with ``eb = (idx >> 6) - 1`` and
``k = idx % 64``, it holds [2^(eb+6) + k 2^eb, 2^(eb+6) + (k+1) 2^eb) ns (fio reports the
midpoint). ``log_hist_coarseness=c`` sums 2^c adjacent bins (found from the column count).

Thresholds. ACT counts a read as over T when its latency is >= T. A bin entirely at or above
T counts as over and a bin entirely below T as under. fio's bins are ~1.6 % wide, so T
usually falls inside one bin (1, 8 and 64 ms all do): that straddling bin is counted as
**over**, so a percentage can be too high but never too low. The bound is exposed twice: the
``pct_edge_<T>ms`` column is the share of the slice's reads in the straddling bin (the most
the ``pct_over`` figure can overstate), and :func:`edge_bin_ns` gives that bin's range, i.e.
the figure is exact for latencies >= its lower edge (999 424 ns for 1 ms without coarseness).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import InputError
from ..io.fio_log import EPOCH_MS_MIN
from .latency import ACT_SLICE_S, pct_column, slice_table

FIO_HIST_BINS = 1856
_HEADER_COLUMNS = 3  # time_ms, ddir, bs
_READ = 0


def bin_edges_ns(coarseness: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edges (ns) of every bin of a row; the top bin is open-ended."""
    idx = np.arange(FIO_HIST_BINS, dtype=np.int64)
    eb = np.maximum((idx >> 6) - 1, 0)
    exact = idx < 128
    lower = np.where(exact, idx, (1 << (eb + 6)) + (idx % 64) * (1 << eb)).astype(float)
    upper = lower + np.where(exact, 1, 1 << eb)
    upper[-1] = np.inf  # fio puts everything beyond its range in the last bin
    stride = 1 << coarseness
    return lower[::stride], upper[stride - 1 :: stride]


def edge_bin_ns(threshold_ms: float, coarseness: int = 0) -> tuple[float, float] | None:
    """The [lower, upper) ns range of the bin straddling a threshold, None if none does."""
    lower, upper = bin_edges_ns(coarseness)
    t = threshold_ms * 1e6
    hit = np.flatnonzero((lower < t) & (upper > t))
    return (float(lower[hit[0]]), float(upper[hit[0]])) if hit.size else None


def _coarseness(path: Path, n_bins: int) -> int:
    for c in range(7):  # 1856 = 29 x 2^6
        if FIO_HIST_BINS >> c == n_bins:
            return c
    raise InputError(
        f"{path}: {n_bins + _HEADER_COLUMNS} columns is not a fio 3.x histogram log "
        f"(time, ddir, bs, then {FIO_HIST_BINS} >> coarseness bins)"
    )


def _read_slices(
    path: Path, hist_msec: int, slice_ms: int
) -> tuple[dict[int, np.ndarray], int, int]:
    """Read rows summed per slice (by the midpoint of each row's window), the last row's
    time and the coarseness. A last line cut short is ignored."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read fio histogram log: {exc}") from None
    sums: dict[int, np.ndarray] = {}
    coarseness, last_ms = 0, 0
    for lineno, line in enumerate(lines, start=1):
        try:
            row = np.fromstring(line, dtype=np.int64, sep=",")
        except ValueError:
            row = np.empty(0, dtype=np.int64)
        if lineno == 1:
            coarseness = _coarseness(path, row.size - _HEADER_COLUMNS)
        if row.size != _HEADER_COLUMNS + (FIO_HIST_BINS >> coarseness):
            if lineno == len(lines):
                break
            raise InputError(f"{path}: line {lineno}: not a histogram row like line 1")
        time_ms, ddir = int(row[0]), int(row[1])
        if time_ms >= EPOCH_MS_MIN:
            raise InputError(f"{path}: epoch timestamps (log_unix_epoch=1) are not supported")
        if ddir != _READ:
            continue
        last_ms = time_ms
        index = (2 * time_ms - hist_msec) // (2 * slice_ms) + 1
        if index in sums:
            sums[index] += row[_HEADER_COLUMNS:]
        else:
            sums[index] = row[_HEADER_COLUMNS:].copy()
    return sums, last_ms, coarseness


def hist_log_table(
    paths: Sequence[str | Path],
    *,
    hist_msec: int,
    slice_s: int = ACT_SLICE_S,
    thresholds_ms: Sequence[float] = (1, 8, 64),
    histogram: str = "reads",
) -> pl.DataFrame:
    """Read latencies of fio histogram logs as an ACT latency table.

    The logs (one per fio job, e.g. every ``act-small-reads`` clone) are added together like
    ACT's ``reads`` histogram adds its service threads. A row belongs to the slice holding the
    midpoint of its ``hist_msec`` window; only slices every log covers to the end are kept
    (fio never writes a final partial window). Columns: as
    :func:`~ssdlab.act.latency.latency_table` (``histogram``, ``slice``, ``pct_over_<T>ms``,
    ``rate``), plus ``pct_edge_<T>ms``, the share in the bin straddling T (counted as over).
    """
    slice_ms = slice_s * 1000
    if hist_msec < 1 or slice_ms % hist_msec:
        raise ValueError(f"slice {slice_s} s is not a multiple of log_hist_msec {hist_msec}")
    if not paths:
        raise ValueError("no histogram logs given")
    read = [_read_slices(Path(p), hist_msec, slice_ms) for p in paths]
    if len({c for _, _, c in read}) > 1:
        raise InputError(f"{', '.join(map(str, paths))}: logs differ in coarseness")
    n_slices = (2 * min(last for _, last, _ in read) + hist_msec) // (2 * slice_ms)
    if n_slices == 0:
        raise InputError(f"{', '.join(map(str, paths))}: could not find {slice_s} seconds of reads")
    lower, upper = bin_edges_ns(read[0][2])
    bins = np.zeros((n_slices, lower.size), dtype=np.int64)
    for sums, _, _ in read:
        for index, counts in sums.items():
            if 1 <= index <= n_slices:
                bins[index - 1] += counts
    over = {pct_column(t): bins[:, upper > t * 1e6].sum(axis=1).tolist() for t in thresholds_ms}
    edge = {
        pct_column(t, "pct_edge"): bins[:, (lower < t * 1e6) & (upper > t * 1e6)]
        .sum(axis=1)
        .tolist()
        for t in thresholds_ms
    }
    return slice_table(histogram, bins.sum(axis=1).tolist(), {**over, **edge}, slice_s)

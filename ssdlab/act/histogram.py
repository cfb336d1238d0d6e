"""ACT-style slice tables from fio histogram logs (``write_hist_log`` + ``log_hist_msec``).

Rows, bins and their edges are fio's, read by :mod:`ssdlab.io.fio_hist`: a row holds the
completions of one direction since its previous row, in log-linear bins ~1.6 % wide
(``log_hist_coarseness=c`` sums 2^c of them); only read rows are used.

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import InputError
from ..io.fio_hist import GROUPS, PLAT_VAL, bin_edges, read_fio_hist_rows
from ..io.fio_log import EPOCH_MS_MIN
from ..vocab import DIRECTIONS
from .latency import ACT_SLICE_S, pct_column, slice_table

FIO_HIST_BINS = GROUPS[3] * PLAT_VAL  # fio 3.x: 1856 bins
_READ = DIRECTIONS.index("read")  # fio's ddir
#: the most cells (read rows x bins, 8 bytes each) :func:`read_hist_reads` lays out: a day
#: of 1 s rows of fio 3.x's 1856 bins is 160 million
MAX_CELLS = 2**28


@dataclass(frozen=True)
class HistReads:
    """The read rows of one histogram log: ``time_ms`` (one per row) and ``bins``
    (rows x bins, completions since the previous read row)."""

    path: Path
    time_ms: np.ndarray
    bins: np.ndarray

    @property
    def n_bins(self) -> int:
        return self.bins.shape[1]


def edge_bin_ns(threshold_ms: float, n_bins: int = FIO_HIST_BINS) -> tuple[float, float] | None:
    """The [lower, upper) ns range of the bin straddling a threshold, None if none does."""
    lower, upper = bin_edges(n_bins)
    t = threshold_ms * 1e6
    hit = np.flatnonzero((lower < t) & (upper > t))
    return (float(lower[hit[0]]), float(upper[hit[0]])) if hit.size else None


def read_hist_reads(path: str | Path) -> HistReads:
    """The read rows of a fio histogram log (fio 3.x or 2.x, any coarseness, times relative
    to the job's start), as :func:`~ssdlab.io.fio_hist.read_fio_hist_rows` reads the log (a
    last line cut short is dropped; an empty log has no rows of fio 3.x's 1856 bins)."""
    log = read_fio_hist_rows(path)
    if log.heads.size and log.heads[:, 0].max() >= EPOCH_MS_MIN:
        raise InputError(f"{path}: epoch timestamps (log_unix_epoch=1) are not supported")
    reads = np.flatnonzero(log.heads[:, 1] == _READ)
    if reads.size * log.meta["n_bins"] > MAX_CELLS:
        raise InputError(
            f"{path}: {reads.size:,} read rows of {log.meta['n_bins']} bins, over ssdlab's "
            f"limit of {MAX_CELLS:,} for an ACT latency table (docs/limits.md)"
        )
    at = np.full(len(log.heads), -1)  # each row's place among the read rows
    at[reads] = np.arange(reads.size)
    keep = at[log.row] >= 0
    bins = np.zeros((reads.size, log.meta["n_bins"]), dtype=np.int64)
    bins[at[log.row[keep]], log.bin[keep]] = log.count[keep]
    return HistReads(Path(path), log.heads[reads, 0], bins)


def over_counts(bins: np.ndarray, thresholds_ms: Sequence[float]) -> dict[str, list[int]]:
    """For rows of bins (slices x bins): per threshold T, ``pct_over_<T>ms`` the reads in
    bins reaching T or above (the straddling bin included) and ``pct_edge_<T>ms`` the reads
    in the straddling bin alone; columns for :func:`~ssdlab.act.latency.slice_table`."""
    lower, upper = bin_edges(bins.shape[1])
    over = {pct_column(t): bins[:, upper > t * 1e6].sum(axis=1).tolist() for t in thresholds_ms}
    edge = {
        pct_column(t, "pct_edge"): bins[:, (lower < t * 1e6) & (upper > t * 1e6)]
        .sum(axis=1)
        .tolist()
        for t in thresholds_ms
    }
    return over | edge


def same_layout(logs: Sequence[HistReads]) -> int:
    """The bin count all ``logs`` share; InputError when they differ."""
    sizes = {log.n_bins for log in logs}
    if len(sizes) > 1:
        raise InputError(f"{', '.join(str(log.path) for log in logs)}: logs differ in bin layout")
    return sizes.pop()


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
    logs = [read_hist_reads(p) for p in paths]
    n_bins = same_layout(logs)
    last_ms = min((int(log.time_ms[-1]) if log.time_ms.size else 0) for log in logs)
    n_slices = (2 * last_ms + hist_msec) // (2 * slice_ms)
    if n_slices == 0:
        raise InputError(f"{', '.join(map(str, paths))}: could not find {slice_s} seconds of reads")
    bins = np.zeros((n_slices, n_bins), dtype=np.int64)
    for log in logs:
        index = (2 * log.time_ms - hist_msec) // (2 * slice_ms)
        keep = (index >= 0) & (index < n_slices)
        np.add.at(bins, index[keep], log.bins[keep])
    return slice_table(
        histogram, bins.sum(axis=1).tolist(), over_counts(bins, thresholds_ms), slice_s
    )

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
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import InputError
from ..units import percentile_name
from ..vocab import DIRECTIONS
from .fio_log import cut_problem, split_partial
from .text import read_bytes

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
GROUPS = {3: 29, 2: 19}  # fio major version -> FIO_IO_U_PLAT_GROUP_NR


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


def _check_rows(wide: pl.DataFrame, path: Path) -> None:
    """InputError naming the first row that no fio histogram log holds: a missing field, a
    direction other than 0-2 (read, write, trim), a negative time or block size, or a bin
    count below 0 or of 2**53 and more (beyond exact float arithmetic)."""
    bins = [c for c in wide.columns if c.startswith("b") and c != "bs_bytes"]
    checks = {
        "a missing field": pl.any_horizontal(pl.all().is_null()),
        "a direction other than 0-2": ~pl.col("ddir").is_between(0, 2),
        "a negative time or block size": (pl.col("time_ms") < 0) | (pl.col("bs_bytes") < 0),
        "a negative bin count": pl.any_horizontal(pl.col(bins) < 0),
        "a bin count of 2**53 or more": pl.any_horizontal(pl.col(bins) >= 2**53),
    }
    found = wide.select(**{why: test.arg_true().min() for why, test in checks.items()}).row(0)
    rows = {why: row for why, row in zip(checks, found, strict=True) if row is not None}
    if rows:
        why = min(rows, key=rows.__getitem__)
        raise InputError(f"{path}: line {rows[why] + 1}: {why}, not a fio histogram log row")


def read_fio_hist_log(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Read a histogram log into the long canonical frame plus metadata
    (``fio_major``, ``coarseness``, ``n_bins``, ``epoch``, ``intervals``, ``partial_lines``:
    0, or 1 when a last line cut short was dropped). A log cut inside its first line holds
    no row: it reads as an empty log (of fio 3.x's bins)."""
    path = Path(path)
    raw, tail = split_partial(read_bytes(path))
    first = raw.split(b"\n", 1)[0]
    if b"\0" in first:
        raise InputError(f"{path}: binary file, not a fio histogram log")
    if why := cut_problem(raw, tail):
        raise InputError(f"{path}: {why}")
    n_cols = first.count(b",") + 1
    if not first.strip():
        n_cols = 3 + GROUPS[3] * PLAT_VAL
    try:
        major, coarseness = bin_layout(n_cols - 3)
    except ValueError as exc:
        raise InputError(f"{path}: line 1 is not a fio histogram log row: {exc}") from None
    lower, upper = bin_edges(n_cols - 3)
    schema = {"time_ms": pl.Int64, "ddir": pl.Int64, "bs_bytes": pl.Int64}
    schema |= {f"b{i}": pl.Int64 for i in range(n_cols - 3)}
    if first.strip():
        try:
            wide = pl.read_csv(
                io.BytesIO(raw), has_header=False, schema=schema, truncate_ragged_lines=True
            )
        except pl.exceptions.PolarsError as exc:
            raise InputError(
                f"{path}: malformed histogram log: {str(exc).splitlines()[0]}"
            ) from None
    else:
        wide = pl.DataFrame(schema=schema)
    edges = pl.DataFrame(
        {"bin": np.arange(n_cols - 3), "lat_lo_ns": lower, "lat_hi_ns": upper},
        schema={"bin": pl.Int64, "lat_lo_ns": pl.Float64, "lat_hi_ns": pl.Float64},
    )
    _check_rows(wide, path)
    long = wide.with_row_index("row").unpivot(
        index=["row", "time_ms", "ddir", "bs_bytes"], variable_name="bin", value_name="count"
    )
    frame = (
        long.filter(pl.col("count") > 0)
        .with_columns(pl.col("bin").str.slice(1).cast(pl.Int64))
        .join(edges, on="bin", how="left")
        .sort("row", "bin")
        .select(
            "time_ms",
            pl.col("ddir")
            .replace_strict(dict(enumerate(DIRECTIONS)), default=None, return_dtype=pl.String)
            .alias("direction"),
            "bs_bytes",
            "bin",
            "lat_lo_ns",
            "lat_hi_ns",
            "count",
        )
    )
    meta = {
        "path": str(path),
        "fio_major": major,
        "coarseness": coarseness,
        "n_bins": n_cols - 3,
        "epoch": bool(wide.height) and wide["time_ms"].min() >= 10**12,
        "intervals": wide.height,
        "partial_lines": int(bool(tail)),
    }
    return frame, meta


def hist_intervals(
    hist: pl.DataFrame,
    n_bins: int,
    interval_ms: int,
    percentiles: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0),
    thresholds_ns: tuple[float, ...] = (),
) -> pl.DataFrame:
    """Latency statistics per interval and direction, as ``fiologparser_hist.py --noweight``
    computes them: rows (of any number of files, e.g. numjobs clones) whose time + 10 ms falls
    before an interval's end are summed into it; ``end_ms``, ``samples``, ``lat_min_ns``,
    ``lat_mean_ns``, ``lat_pXX_ns`` (interpolated on the mid-bin CDF) and ``lat_max_ns`` use
    the tool's bin values (:func:`parser_bin_values`).

    ``frac_over_<T>ns`` is the share of I/Os in bins whose upper edge is above T: a bin that
    straddles T counts as over, so the share is an upper bound, too high by at most that one
    bin's share (bins are ~1/64 of their latency wide).
    """
    values = parser_bin_values(n_bins)
    upper = bin_edges(n_bins)[1]
    summed = (
        hist.with_columns(end_ms=((pl.col("time_ms") + 10) // interval_ms + 1) * interval_ms)
        .group_by("end_ms", "direction", "bin")
        .agg(pl.col("count").sum())
        .sort("end_ms", "direction", "bin")
    )
    rows = []
    for (end_ms, direction), g in summed.group_by("end_ms", "direction", maintain_order=True):
        bins = g["bin"].to_numpy()
        counts = np.zeros(n_bins)
        counts[bins] = g["count"].to_numpy()
        total = counts.sum()
        row: dict[str, Any] = {
            "end_ms": end_ms,
            "direction": direction,
            "samples": int(total),
            "lat_min_ns": float(values[bins[0]]),
            "lat_mean_ns": float((values * counts).sum() / total),
        }
        # the tool's CDF runs over every bin, empty ones included
        cdf = 100.0 * (np.cumsum(counts) - counts / 2.0) / total
        for p in percentiles:
            row[f"lat_{percentile_name(p)}_ns"] = float(np.interp(p, cdf, values))
        row["lat_max_ns"] = float(values[bins[-1]])
        for t in thresholds_ns:
            row[f"frac_over_{t:g}ns"] = float(counts[upper > t].sum() / total)
        rows.append(row)
    return pl.DataFrame(rows)

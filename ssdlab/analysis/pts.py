"""The figures of the SNIA PTS report pages, from the tidy frames.

A round block (``rounds`` in a suite) is one PTS test: rounds of a matrix of cells (block size
x R/W mix) repeated until the tracked cell is steady (:mod:`.steady_state`). The test follows
the tracked metric: IOPS (``iops``), Throughput (``bw_bytes_s``) or Latency (a latency
metric). Its report pages show:

- the convergence plot: every cell's value per round (:func:`round_cells`);
- the measurement window with its bands and fit, and the determination
  (:class:`~.steady_state.SteadyState`);
- the results: each cell over the measurement window (:func:`window_results`): IOPS per
  block size x R/W mix (the 8 x 7 matrix), MB/s per block size for reads and writes, and the
  average, 99.999 % and maximum response time per block size x R/W mix.

Write saturation (WSAT) is one long 4K random-write step from a purged drive: IOPS per second
against time and against the total data written (:func:`write_saturation`).

A cell's figures combine its fio rows (jobs and directions) the way the runner tracks them
(``ssdlab.runner.tracked_value``): rates add up, mean latencies are weighted by IOPS, maxima
take the slowest row. A round's tracked value here equals the one the runner judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ..manifest import Manifest
from .percentiles import fio_percentiles, ios_needed
from .steady_state import SteadyState
from .steps import access_pattern, read_share, rw_mode
from .workloads import label_columns

if TYPE_CHECKING:
    from ..results import Results

#: the PTS test a round block is, by its tracked metric
PTS_TESTS = {
    "iops": "IOPS",
    "bw_bytes_s": "Throughput",
    "lat_mean_ns": "Latency",
    "clat_mean_ns": "Latency",
    "clat_p99_ns": "Latency",
}
#: the PTS IOPS test's matrix: R/W mixes (read %) and block sizes (bytes)
PTS_MIXES = (100, 95, 65, 50, 35, 5, 0)
PTS_BLOCK_SIZES = (1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512)
#: the response-time percentile the PTS 2.0 Latency test reports ("five nines")
FIVE_NINES = 99.999
#: fewer I/Os than this make a 99.999 % figure the slowest I/O or close to it
FIVE_NINES_MIN_IOS = ios_needed(FIVE_NINES)

CELL_KEYS = ("cell", "pattern", "bs_bytes", "read_pct")


def pts_test(metric: str) -> str:
    """``IOPS``, ``Throughput`` or ``Latency``: the PTS test a block tracking ``metric`` is."""
    return PTS_TESTS.get(metric, "IOPS")


def mix_label(read_pct: int) -> str:
    """A R/W mix as the PTS writes it: ``65/35`` (read/write %)."""
    return f"{read_pct}/{100 - read_pct}"


def _tracked(metric: str, direction: str | None) -> pl.Expr:
    """A step's tracked value from its fio rows, as the runner computes it: rates summed
    over jobs and directions (or the tracked direction), latencies weighted by IOPS."""
    mask = pl.lit(True) if direction is None else pl.col("direction") == direction
    if metric in ("iops", "bw_bytes_s"):
        value = pl.col(metric).filter(mask).sum()
    else:
        weight = pl.col("iops").filter(mask)
        value = (pl.col(metric).filter(mask) * weight).sum() / weight.sum()
    has_rows = mask.any() if direction is not None else pl.lit(True)
    return pl.when(has_rows).then(value).otherwise(None).alias("value")


def _weighted(column: str) -> pl.Expr:
    weight = pl.col("iops").fill_null(0)
    mean = (pl.col(column) * weight).sum() / weight.sum()
    return pl.when(weight.sum() > 0).then(mean).otherwise(pl.col(column).mean()).alias(column)


def round_cells(
    summary: pl.DataFrame, block: str, metric: str = "iops", direction: str | None = None
) -> pl.DataFrame:
    """One row per round and cell of round block ``block``, in round order.

    Columns: ``round``, ``step_index``, ``step``, ``cell`` (the sub-step's name, ``r0-4k``),
    ``pattern``, ``bs_bytes``, ``read_pct``, ``workload``, ``qd_label``; ``iops``,
    ``bw_bytes_s``, ``io_bytes``, ``total_ios`` summed over jobs and directions;
    ``lat_mean_ns`` and ``clat_mean_ns`` weighted by IOPS; ``lat_max_ns`` and ``clat_max_ns``
    the slowest; ``value``: ``metric`` as the runner tracks it (of ``direction`` only when
    given; null when the cell has no I/O in it).
    """
    rows = summary.filter(pl.col("block") == block)
    present = set(rows.columns)
    prefix = f"^{re.escape(block)}-r\\d+-"
    sums = [c for c in ("iops", "bw_bytes_s", "io_bytes", "total_ios") if c in present]
    maxima = [c for c in ("lat_max_ns", "clat_max_ns") if c in present]
    means = [c for c in ("lat_mean_ns", "clat_mean_ns") if c in present]
    cells = (
        rows.with_columns(pattern=access_pattern(), read_pct=read_share(), mode=rw_mode())
        .group_by("step_index", maintain_order=True)
        .agg(
            pl.col(
                "round", "step", "pattern", "bs_bytes", "read_pct", "iodepth", "numjobs"
            ).first(),
            *(pl.col(c).sum() for c in sums),
            *(_weighted(c) for c in means),
            *(pl.col(c).max() for c in maxima),
            _tracked(metric, direction) if metric in present else pl.lit(None, pl.Float64),
        )
        .with_columns(cell=pl.col("step").str.replace(prefix, ""))
    )
    if not cells.height:
        return cells.with_columns(
            workload=pl.lit(None, pl.String), qd_label=pl.lit(None, pl.String)
        )
    return cells.with_columns(**label_columns()).sort("round", "step_index")


def window_results(
    cells: pl.DataFrame,
    rounds: list[int] | tuple[int, ...],
    latency_hist: pl.DataFrame | None = None,
    percentiles: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Each cell of :func:`round_cells` over the measurement window ``rounds``: the PTS
    result tables' figures, one row per cell (``cell``, ``pattern``, ``bs_bytes``,
    ``read_pct``, ``workload``, ``qd_label``).

    - ``iops``, ``bw_bytes_s``, ``lat_mean_ns`` (the average response time), ``value``: the
      mean of the window's rounds;
    - ``lat_max_ns``, ``clat_max_ns``: the slowest I/O of the window;
    - ``clat_p99_999_ns``: the 99.999 % completion latency of every I/O of the window (read
      and write), by fio's rule from the json+ bins of ``latency_hist``; without bins, the
      highest of the rounds' fio-reported 99.999 % (``percentiles``). Capped at
      ``clat_max_ns`` (fio's bins lie up to ~1.6 % above their samples): ``p99_999_capped``
      says where; ``p99_999_from``: ``bins``, ``fio`` or null (not reported);
    - ``total_ios``: the I/Os of the window; ``rounds``: how many rounds it averages.
    """
    window = cells.filter(pl.col("round").is_in(list(rounds)))
    keys = [*CELL_KEYS, "workload", "qd_label"]
    present = set(window.columns)
    averaged = ("iops", "bw_bytes_s", "lat_mean_ns", "clat_mean_ns", "value")
    means = [c for c in averaged if c in present]
    maxima = [c for c in ("lat_max_ns", "clat_max_ns") if c in present]
    result = window.group_by(keys, maintain_order=True).agg(
        *(pl.col(c).mean() for c in means),
        *(pl.col(c).max() for c in maxima),
        *(pl.col(c).sum() for c in ("total_ios", "io_bytes") if c in present),
        pl.len().alias("rounds"),
    )
    nines = _five_nines(window, latency_hist, percentiles)
    result = result.join(nines, on="cell", how="left")
    if "clat_max_ns" in result.columns:
        top = pl.col("clat_max_ns")
        result = result.with_columns(
            p99_999_capped=(pl.col("clat_p99_999_ns") > top).fill_null(False),
            clat_p99_999_ns=pl.when(pl.col("clat_p99_999_ns") > top)
            .then(top)
            .otherwise(pl.col("clat_p99_999_ns")),
        )
    else:
        result = result.with_columns(p99_999_capped=pl.lit(False))
    return result


def _five_nines(
    window: pl.DataFrame, latency_hist: pl.DataFrame | None, percentiles: pl.DataFrame | None
) -> pl.DataFrame:
    """Per cell: ``clat_p99_999_ns`` over the window and where it came from."""
    schema = {"cell": pl.String, "clat_p99_999_ns": pl.Float64, "p99_999_from": pl.String}
    steps = window.select("cell", "step_index")
    found: dict[str, tuple[float, str]] = {}
    if latency_hist is not None and latency_hist.height:
        bins = latency_hist.join(steps, on="step_index")
        for (cell,), rows in bins.group_by("cell"):
            merged = rows.group_by("lat_ns").agg(pl.col("count").sum())
            (value,) = fio_percentiles(merged["lat_ns"], merged["count"], [FIVE_NINES])
            if value == value:  # not NaN: the bins hold I/Os
                found[str(cell)] = (value, "bins")
    if percentiles is not None and percentiles.height:
        reported = (
            percentiles.filter((pl.col("stat") == "clat") & (pl.col("percentile") == FIVE_NINES))
            .join(steps, on="step_index")
            .group_by("cell")
            .agg(pl.col("value_ns").max())
        )
        for cell, value in reported.iter_rows():
            found.setdefault(str(cell), (float(value), "fio"))
    rows = [(cell, value, source) for cell, (value, source) in found.items()]
    return pl.DataFrame(rows, schema=schema, orient="row")


@dataclass(frozen=True, eq=False)
class RoundBlock:
    """One round block of a run as a PTS test: its determination (in the metric's own unit,
    ns or bytes/s), every round's cells and the results over the measurement window."""

    name: str
    test: str
    metric: str
    direction: str | None
    track: str
    rounds_run: int
    state: SteadyState
    cells: pl.DataFrame
    results: pl.DataFrame

    @property
    def tracked_cell(self) -> dict | None:
        """The tracked cell's ``cell``, ``pattern``, ``bs_bytes``, ``read_pct``, ``workload``
        and ``qd_label``, if it ran."""
        rows = self.cells.filter(pl.col("cell") == self.track)
        if not rows.height:
            return None
        keys = ("cell", "pattern", "bs_bytes", "read_pct", "workload", "qd_label")
        return rows.select(keys).row(0, named=True)

    @property
    def cell_count(self) -> int:
        return self.cells["cell"].n_unique() if self.cells.height else 0


def round_blocks(results: Results) -> list[RoundBlock]:
    """Every round block of a loaded run with its determination, cells and window results,
    in the order the run recorded them."""
    blocks = []
    for record in results.steady_state.iter_rows(named=True):
        name = record["block"]
        judged = results.rounds.filter((pl.col("block") == name) & pl.col("in_window"))
        state = SteadyState.from_record(record, dict(judged.select("round", "value").iter_rows()))
        cells = round_cells(results.summary, name, record["metric"], record["direction"])
        window = (
            window_results(cells, state.rounds, results.latency_hist, results.percentiles)
            if state.rounds
            else cells.clear()
        )
        blocks.append(
            RoundBlock(
                name=name,
                test=pts_test(record["metric"]),
                metric=record["metric"],
                direction=record["direction"],
                track=record["track"],
                rounds_run=record["rounds_run"],
                state=state,
                cells=cells,
                results=window,
            )
        )
    return blocks


# -- write saturation ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class WriteSaturation:
    """A write-saturation step: per log window ``t_s`` (end of the window, s), ``iops``,
    ``bw_bytes_s`` (summed over jobs), ``written_bytes`` (written by the window's end) and
    ``fills`` (``written_bytes`` in target capacities, null when the capacity is unknown)."""

    step_index: int
    step: str
    workload: str
    capacity_bytes: int | None
    io_bytes: int
    runtime_s: float
    series: pl.DataFrame

    @property
    def written_fills(self) -> float | None:
        """The data written as a multiple of the capacity."""
        return self.io_bytes / self.capacity_bytes if self.capacity_bytes else None


def wsat_steps(steps: pl.DataFrame, manifest: Manifest) -> pl.DataFrame:
    """The write-saturation steps among classified ``steps`` (fills included): random
    writes of a ``snia-wsat`` run, or whose step name holds ``wsat``."""
    writes = steps.filter((pl.col("pattern") == "random") & (pl.col("read_pct") == 0))
    if manifest.suite != "snia-wsat":
        writes = writes.filter(pl.col("step").str.to_lowercase().str.contains("wsat"))
    return writes


def step_series(timeseries: pl.DataFrame, step_index: int) -> pl.DataFrame:
    """One step's log windows summed over jobs and directions, in time order: ``t_s`` (end
    of the window, s), ``iops``, ``bw_bytes_s``, ``window_s`` (the window's length: the time
    since the previous window, the first from 0) and ``written_bytes`` (moved by the
    window's end: the running sum of ``bw_bytes_s`` x ``window_s``).

    fio logs whole windows only, so the last one may fall short of the step's ``io_bytes``
    by up to one partial interval per job; a window fio logged after an idle time spans it."""
    series = (
        timeseries.filter(pl.col("step_index") == step_index)
        .group_by("t_s")
        .agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum())
        .sort("t_s")
    )
    window = pl.col("t_s").diff().fill_null(pl.col("t_s"))
    return series.with_columns(window_s=window).with_columns(
        written_bytes=(pl.col("bw_bytes_s").fill_null(0) * pl.col("window_s")).cum_sum()
    )


def write_saturation(
    steps: pl.DataFrame, timeseries: pl.DataFrame, manifest: Manifest
) -> list[WriteSaturation]:
    """The write-saturation steps (:func:`wsat_steps`) that have a per-window time series
    (:func:`step_series`)."""
    chosen = wsat_steps(steps, manifest)
    if not chosen.height or not timeseries.height:
        return []
    target = manifest.target
    capacity = target.size_bytes if target is not None and target.size_bytes else None
    found = []
    for row in chosen.unique("step_index", keep="first", maintain_order=True).iter_rows(named=True):
        series = step_series(timeseries, row["step_index"])
        if not series.height:
            continue
        series = series.drop("window_s").with_columns(
            fills=pl.col("written_bytes") / capacity if capacity else pl.lit(None, pl.Float64)
        )
        found.append(
            WriteSaturation(
                step_index=row["step_index"],
                step=row["step"],
                workload=f"{row['workload']} {row['qd_label']}",
                capacity_bytes=capacity,
                io_bytes=int(row["io_bytes"]),
                runtime_s=float(row["runtime_s"]),
                series=series,
            )
        )
    return found


def saturation_spans(ws: WriteSaturation) -> pl.DataFrame:
    """IOPS per drive fill: for each capacity written (0-1x, 1-2x, ...; with an unknown
    capacity, quarters of the data written), ``from_bytes``/``to_bytes`` written,
    ``from_s``/``to_s``, the mean ``iops`` of its windows and ``windows``.

    A window counts in the span its end falls in (a window ending exactly on a boundary in
    the span it completes)."""
    series = ws.series
    total = series["written_bytes"].max() or 0.0
    if ws.capacity_bytes:
        unit, label = float(ws.capacity_bytes), "fill"
        edges = list(np.arange(0, np.ceil(total / unit - 1e-9) + 1) * unit) if total else [0.0]
    else:
        unit, label = total / 4 if total else 1.0, "quarter"
        edges = [q * unit for q in range(5)]
    edges[-1] = max(edges[-1], total)
    rows = []
    for i, (low, high) in enumerate(pairwise(edges)):
        inside = series.filter(
            (pl.col("written_bytes") > low if i else pl.col("written_bytes") >= low)
            & (pl.col("written_bytes") <= high)
        )
        start = series.filter(pl.col("written_bytes") <= low)["t_s"].max() or 0.0
        rows.append(
            (
                i + 1,
                label,
                low,
                min(high, total),
                float(start),
                inside["t_s"].max(),
                inside["iops"].mean(),
                inside.height,
            )
        )
    return pl.DataFrame(
        rows,
        schema={
            "span": pl.Int64,
            "unit": pl.String,
            "from_bytes": pl.Float64,
            "to_bytes": pl.Float64,
            "from_s": pl.Float64,
            "to_s": pl.Float64,
            "iops": pl.Float64,
            "windows": pl.Int64,
        },
        orient="row",
    )

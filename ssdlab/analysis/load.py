"""Latency against offered load: load sweeps (:class:`ssdlab.suite.Sweep`) and the SNIA PTS
2.0 Demand Intensity / Response Time Histogram (DIRTH) grid, from a run's frames.

Every latency here is fio's completion latency (``clat``) over all I/Os of a step: its
jobs and directions together. Percentiles come from fio's json+ bins (``latency_hist``,
summed over jobs and directions) by fio's own rule (:func:`fio_percentiles`), capped at the
step's slowest I/O as the tables cap fio's own percentiles; the mean is IOPS-weighted. A step
without bins falls back to the worst job and direction of the summary.

- **Load sweeps**: the requested rate of each step is the manifest's (``StepRecord.load``,
  what the whole per-job ``rate_iops`` add up to: the rate offered, after rounding); the
  achieved IOPS are the frames' (all jobs and directions); a rate step ``reached`` its
  rate when achieved >= ``reach`` x requested (the sweep's tolerance, 0.97 by default).
  The **knee** is the highest load before the p99 passes :data:`KNEE_FACTOR` x its value at
  the lowest load; the **QoS load** is the highest achieved IOPS whose p99.99 stays under a
  limit (:data:`P99_99_LIMIT_NS`, the FioSynth/OCP read target).
- **DIRTH**: one workload (rw, block size, read share) measured at two or more thread counts
  with two or more queue depths each, outside round blocks and load sweeps. Per cell: IOPS,
  ART (average response time), maximum and p99.999; the **operating point** is the cell
  with the most IOPS whose ART stays under a ceiling (:data:`ART_CEILING_NS`), and its
  response-time histogram is its bins grouped into :data:`HIST_BINS_PER_DECADE` bins a
  decade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from ..manifest import Manifest
from ..results import Results
from ..vocab import READ_WRITE_RW
from .percentiles import fio_percentiles
from .steps import RUN_KEYS, per_step, rw_mode
from .workloads import fill_steps, label_columns, workload_columns

#: the p99.99 a load must keep to count as "under the limit" (Meta FioSynth / OCP read QoS
#: target: P99.99 2500 µs)
P99_99_LIMIT_NS = 2_500_000.0
#: the knee: the p99 has grown past this many times its value at the lowest load
KNEE_FACTOR = 2.0
#: DIRTH's operating point: the most IOPS whose average response time is under this
ART_CEILING_NS = 5_000_000.0
#: the response-time histogram's resolution
HIST_BINS_PER_DECADE = 10
#: the percentiles computed per step, by column
PERCENTILES = {"lat_p50_ns": 50.0, "lat_p99_ns": 99.0, "lat_p99_99_ns": 99.99,
               "lat_p99_999_ns": 99.999}  # fmt: skip

POINT_SCHEMA = {
    "run_id": pl.String, "label": pl.String, "sweep": pl.String, "workload": pl.String,
    "step_index": pl.Int64, "step": pl.String, "role": pl.String, "fraction": pl.Float64,
    "max_iops": pl.Float64, "target_iops": pl.Float64, "requested_iops": pl.Float64,
    "rounding": pl.String, "achieved_iops": pl.Float64, "reach": pl.Float64,
    "reached": pl.Boolean, "lat_mean_ns": pl.Float64,
    "lat_p50_ns": pl.Float64, "lat_p99_ns": pl.Float64, "lat_p99_99_ns": pl.Float64,
    "lat_max_ns": pl.Float64, "ios": pl.Int64,
}  # fmt: skip


def step_latency(results: Results, step_indexes: list[int] | None = None) -> pl.DataFrame:
    """Per step (``step_index``): ``iops`` (all jobs and directions), ``lat_mean_ns``,
    ``lat_max_ns``, the :data:`PERCENTILES` and ``ios`` (I/Os in its bins), as the module
    docstring says; ``rw``, ``bs_bytes``, ``iodepth``, ``numjobs``, ``rwmixread`` too."""
    summary = results.summary
    if step_indexes is not None:
        summary = summary.filter(pl.col("step_index").is_in(step_indexes))
    if not summary.height:
        return pl.DataFrame()
    rows = per_step(summary)
    weight = pl.col("iops").fill_null(0)
    steps = rows.group_by(*[c for c in RUN_KEYS if c in rows.columns], "step_index").agg(
        pl.first("step"),
        pl.first("rw"),
        pl.first("bs_bytes"),
        pl.first("iodepth"),
        pl.first("numjobs"),
        pl.first("rwmixread"),
        weight.sum().alias("iops"),
        pl.when(weight.sum() > 0)
        .then((pl.col("clat_mean_ns") * weight).sum() / weight.sum())
        .otherwise(pl.col("clat_mean_ns").mean())
        .alias("lat_mean_ns"),
        pl.col("clat_max_ns").max().alias("lat_max_ns"),
        pl.col("clat_p50_ns").max().alias("fallback_p50"),
        pl.col("clat_p99_ns").max().alias("fallback_p99"),
        pl.col("clat_p99_99_ns").max().alias("fallback_p99_99"),
    )
    hist = results.latency_hist
    computed: dict[int, list[float]] = {}
    counts: dict[int, int] = {}
    if hist.height:
        wanted = set(steps["step_index"].to_list())
        bins = (
            hist.filter(pl.col("step_index").is_in(list(wanted)))
            .group_by("step_index", "lat_ns")
            .agg(pl.col("count").sum())
        )
        for (index,), part in bins.group_by("step_index"):
            total = int(part["count"].sum())
            if total:
                computed[index] = fio_percentiles(
                    part["lat_ns"].to_list(), part["count"].to_list(), list(PERCENTILES.values())
                )
                counts[index] = total
    fallback = {"lat_p50_ns": "fallback_p50", "lat_p99_ns": "fallback_p99",
                "lat_p99_99_ns": "fallback_p99_99", "lat_p99_999_ns": None}  # fmt: skip
    out = []
    for row in steps.sort("step_index").iter_rows(named=True):
        values = computed.get(row["step_index"])
        top = row["lat_max_ns"]
        for i, (column, _) in enumerate(PERCENTILES.items()):
            value = values[i] if values else (row[fallback[column]] if fallback[column] else None)
            if value is not None and top is not None and not math.isnan(value):
                value = min(value, top)
            row[column] = value
        row["ios"] = counts.get(row["step_index"])
        out.append({k: v for k, v in row.items() if not k.startswith("fallback_")})
    return pl.DataFrame(out, infer_schema_length=None)


def _labelled(steps: pl.DataFrame) -> pl.DataFrame:
    """Rows of :func:`step_latency` with the ``workload`` and ``qd_label`` that
    :func:`~.workloads.classify` gives their steps."""
    return steps.with_columns(**workload_columns()).with_columns(**label_columns())


def sweep_steps(manifest: Manifest) -> set[int]:
    """Step indexes of a run's load-sweep steps (every role): analyses of QD and mix sweeps
    should leave them out, as they leave out fills (a rate-limited step is not a
    measurement of what the drive can do)."""
    return {s.index for s in manifest.steps if s.load is not None}


def load_points(results: Results, p99_99_limit_ns: float = P99_99_LIMIT_NS) -> pl.DataFrame:
    """One row per load-sweep step that has results (:data:`POINT_SCHEMA`, in run order):
    its sweep, ``role`` (``max``/``rate``/``unlimited``), ``fraction``, ``max_iops``,
    ``target_iops`` (fraction x maximum, asked), ``requested_iops`` (the manifest's: what
    the whole per-job rates offer), ``rounding`` (what rounding did, when it moved the
    load more than 1 %), ``achieved_iops`` (the frames'), ``reached``
    (recomputed from them with the sweep's ``reach``; None for unlimited steps) and the
    latencies; plus ``under_limit`` (p99.99 < ``p99_99_limit_ns``)."""
    records = {s.index: s for s in results.manifest.steps if s.load is not None}
    if not records or not results.summary.height:
        return pl.DataFrame(schema={**POINT_SCHEMA, "under_limit": pl.Boolean})
    lat = step_latency(results, list(records))
    if not lat.height:
        return pl.DataFrame(schema={**POINT_SCHEMA, "under_limit": pl.Boolean})
    rows = []
    for row in _labelled(lat).iter_rows(named=True):
        record = records[row["step_index"]]
        load = record.load
        assert load is not None
        requested = load.requested_iops if load.role == "rate" else None
        reached = row["iops"] >= (load.reach or 0) * requested if requested is not None else None
        rows.append({
            "run_id": row.get("run_id"), "label": row.get("label"), "sweep": load.sweep,
            "workload": f"{row['workload']} {row['qd_label']}",
            "step_index": row["step_index"], "step": row["step"], "role": load.role,
            "fraction": load.fraction, "max_iops": load.max_iops,
            "target_iops": load.target_iops if requested is not None else None,
            "requested_iops": requested, "rounding": load.rounding,
            "achieved_iops": row["iops"], "reach": load.reach, "reached": reached,
            "lat_mean_ns": row["lat_mean_ns"], "lat_p50_ns": row["lat_p50_ns"],
            "lat_p99_ns": row["lat_p99_ns"], "lat_p99_99_ns": row["lat_p99_99_ns"],
            "lat_max_ns": row["lat_max_ns"], "ios": row["ios"],
        })  # fmt: skip
    frame = pl.DataFrame(rows, schema=POINT_SCHEMA).sort("step_index")
    return frame.with_columns(under_limit=pl.col("lat_p99_99_ns") < p99_99_limit_ns)


@dataclass(frozen=True)
class LoadSweeps:
    """``points``: :func:`load_points`; ``sweeps``: per run and sweep, ``workload``,
    ``max_iops``, ``steps``, ``missed`` (rate steps that did not reach their rate, by name),
    ``knee_iops``/``knee_p99_ns`` (the knee), ``qos_iops``/``qos_p99_99_ns`` (the highest
    achieved IOPS whose p99.99 stays under ``limit_ns``; None when none does)."""

    points: pl.DataFrame
    sweeps: pl.DataFrame
    limit_ns: float


def knee(points: pl.DataFrame, factor: float = KNEE_FACTOR) -> dict | None:
    """The knee of one sweep's points: the row of the highest achieved load before the p99
    first exceeds ``factor`` x the p99 at the lowest load; None when it never does (no knee
    up to the highest load) or without points."""
    curve = points.filter(pl.col("lat_p99_ns").is_not_null()).sort("achieved_iops")
    if not curve.height:
        return None
    base = curve["lat_p99_ns"][0]
    above = curve.with_row_index("i").filter(pl.col("lat_p99_ns") > factor * base)
    if not above.height:
        return None
    return curve.row(max(0, above["i"][0] - 1), named=True)


def load_sweeps(
    results: Results, limit_ns: float = P99_99_LIMIT_NS, knee_factor: float = KNEE_FACTOR
) -> LoadSweeps:
    """Every load sweep of a run, with the figures :class:`LoadSweeps` lists."""
    points = load_points(results, limit_ns)
    out = []
    for (sweep,), rows in points.group_by("sweep", maintain_order=True):
        found = knee(rows, knee_factor)
        under = rows.filter(pl.col("under_limit")).sort("achieved_iops")
        best = under.row(-1, named=True) if under.height else None
        missed = rows.filter(pl.col("reached").not_())["step"].to_list()
        out.append({
            "run_id": rows["run_id"][0], "label": rows["label"][0], "sweep": sweep,
            "workload": rows["workload"][0], "max_iops": rows["max_iops"].drop_nulls().first()
            if rows["max_iops"].drop_nulls().len() else None,
            "steps": rows.height, "missed": missed,
            "knee_iops": found["achieved_iops"] if found else None,
            "knee_p99_ns": found["lat_p99_ns"] if found else None,
            "qos_iops": best["achieved_iops"] if best else None,
            "qos_p99_99_ns": best["lat_p99_99_ns"] if best else None,
        })  # fmt: skip
    schema = {
        "run_id": pl.String, "label": pl.String, "sweep": pl.String, "workload": pl.String,
        "max_iops": pl.Float64, "steps": pl.Int64, "missed": pl.List(pl.String),
        "knee_iops": pl.Float64, "knee_p99_ns": pl.Float64, "qos_iops": pl.Float64,
        "qos_p99_99_ns": pl.Float64,
    }  # fmt: skip
    return LoadSweeps(points, pl.DataFrame(out, schema=schema), limit_ns)


# -- DIRTH ----------------------------------------------------------------------------------


DIRTH_SCHEMA = {
    "run_id": pl.String, "label": pl.String, "workload": pl.String, "step_index": pl.Int64,
    "step": pl.String, "threads": pl.Int64, "qd": pl.Int64, "iops": pl.Float64,
    "art_ns": pl.Float64, "max_ns": pl.Float64, "p99_999_ns": pl.Float64, "ios": pl.Int64,
}  # fmt: skip


def dirth_cells(results: Results) -> pl.DataFrame:
    """The DIRTH grid's cells (:data:`DIRTH_SCHEMA`): steps outside round blocks, load
    sweeps and fills whose workload (rw, block size, read share) was measured at two or
    more thread counts with two or more queue depths each; ``qd`` is the depth per thread.
    A measured point run twice counts once (the later step). Empty when there is no grid."""
    summary = results.summary
    if not summary.height:
        return pl.DataFrame(schema=DIRTH_SCHEMA)
    skip = sweep_steps(results.manifest) | fill_steps(results.manifest)
    pool = summary.filter(pl.col("block").is_null() & ~pl.col("step_index").is_in(list(skip)))
    steps = (
        pool.with_columns(mode=rw_mode())
        .group_by("step_index")
        .agg(
            pl.first("mode"),
            pl.first("bs_bytes"),
            pl.first("rwmixread"),
            pl.first("numjobs"),
            pl.first("iodepth"),
        )
        .filter(pl.col("mode").is_in(READ_WRITE_RW))
    )
    keys = ["mode", "bs_bytes", "rwmixread"]
    steps = steps.filter(
        pl.col("step_index") == pl.col("step_index").max().over([*keys, "numjobs", "iodepth"])
    )
    qds = steps.group_by([*keys, "numjobs"]).agg(pl.col("iodepth").n_unique().alias("qds"))
    grids = (
        qds.filter(pl.col("qds") >= 2)
        .group_by(keys)
        .agg(pl.len().alias("threads"))
        .filter(pl.col("threads") >= 2)
    )
    cells = steps.join(grids, on=keys, nulls_equal=True).join(
        qds.filter(pl.col("qds") >= 2), on=[*keys, "numjobs"], nulls_equal=True
    )
    if not cells.height:
        return pl.DataFrame(schema=DIRTH_SCHEMA)
    lat = step_latency(results, cells["step_index"].to_list())
    rows = [
        {
            "run_id": r.get("run_id"),
            "label": r.get("label"),
            "workload": r["workload"],
            "step_index": r["step_index"],
            "step": r["step"],
            "threads": r["numjobs"],
            "qd": r["iodepth"],
            "iops": r["iops"],
            "art_ns": r["lat_mean_ns"],
            "max_ns": r["lat_max_ns"],
            "p99_999_ns": r["lat_p99_999_ns"],
            "ios": r["ios"],
        }
        for r in _labelled(lat).iter_rows(named=True)
    ]
    return pl.DataFrame(rows, schema=DIRTH_SCHEMA).sort("workload", "threads", "qd")


@dataclass(frozen=True)
class Dirth:
    """``cells``: :func:`dirth_cells`; ``point``: the operating point's cell (None when no
    cell's ART is under ``ceiling_ns``); ``histogram``: its response-time histogram
    (``lat_ns`` lower edge, ``upper_ns``, ``count``, ``share``), empty without one."""

    cells: pl.DataFrame
    point: dict | None
    histogram: pl.DataFrame
    ceiling_ns: float


HIST_SCHEMA = {"lat_ns": pl.Float64, "upper_ns": pl.Float64, "count": pl.Int64,
               "share": pl.Float64}  # fmt: skip


def response_histogram(
    results: Results, step_index: int, per_decade: int = HIST_BINS_PER_DECADE
) -> pl.DataFrame:
    """A step's completion latencies from its json+ bins (all jobs and directions) in
    ``per_decade`` log-spaced bins a decade (:data:`HIST_SCHEMA`), empty bins left out."""
    hist = results.latency_hist
    if not hist.height:
        return pl.DataFrame(schema=HIST_SCHEMA)
    bins = hist.filter((pl.col("step_index") == step_index) & (pl.col("count") > 0))
    if not bins.height:
        return pl.DataFrame(schema=HIST_SCHEMA)
    k = (pl.col("lat_ns").clip(1).log10() * per_decade).floor()
    grouped = (
        bins.with_columns(k=k)
        .group_by("k")
        .agg(pl.col("count").sum())
        .sort("k")
        .select(
            (10 ** (pl.col("k") / per_decade)).alias("lat_ns"),
            (10 ** ((pl.col("k") + 1) / per_decade)).alias("upper_ns"),
            pl.col("count").cast(pl.Int64),
        )
    )
    return grouped.with_columns(share=pl.col("count") / pl.col("count").sum())


def dirth(results: Results, ceiling_ns: float = ART_CEILING_NS) -> Dirth:
    """The DIRTH figures of a run (see :class:`Dirth`); the operating point is taken over
    the first workload's grid when a run has several."""
    cells = dirth_cells(results)
    if not cells.height:
        return Dirth(cells, None, pl.DataFrame(schema=HIST_SCHEMA), ceiling_ns)
    first = cells.filter(pl.col("workload") == cells["workload"][0])
    under = first.filter(pl.col("art_ns") < ceiling_ns).sort("iops")
    point = under.row(-1, named=True) if under.height else None
    histogram = (
        response_histogram(results, point["step_index"])
        if point
        else pl.DataFrame(schema=HIST_SCHEMA)
    )
    return Dirth(cells, point, histogram, ceiling_ns)

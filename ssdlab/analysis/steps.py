"""One row per step and direction: fio's per-job rows combined, for every analysis."""

from __future__ import annotations

import polars as pl

from ..vocab import READ_RW, RWMIXREAD_DEFAULT, WRITE_RW

#: Columns that tell runs apart when frames of several runs are concatenated.
RUN_KEYS = ("run_id", "label")
#: what identifies a step's row besides its figures (when the frame has the column)
STEP_KEYS = (
    *RUN_KEYS, "step_index", "step", "test", "test_group", "fio_json", "block", "round",
    "direction", "rw",
)  # fmt: skip
_TEXT = (
    "run_id", "label", "host", "step", "test", "fio_json", "block", "status", "direction", "rw"
)  # fmt: skip
_WHOLE = (
    "step_index", "round", "bs_bytes", "iodepth", "numjobs", "rwmixread", "io_bytes",
    "iodepth_run",
)  # fmt: skip
_FIGURES = (
    "iops", "bw_bytes_s", "runtime_s", "lat_mean_ns", "clat_mean_ns", "clat_p50_ns",
    "clat_p99_ns", "clat_p99_9_ns", "clat_p99_99_ns", "clat_max_ns",
)  # fmt: skip
#: the summary columns every analysis reads, with their types
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    **dict.fromkeys(_TEXT, pl.String()),
    **dict.fromkeys(_WHOLE, pl.Int64()),
    **dict.fromkeys(_FIGURES, pl.Float64()),
}


def with_summary_columns(summary: pl.DataFrame) -> pl.DataFrame:
    """``summary`` with every :data:`SUMMARY_SCHEMA` column: a run without fio steps (ACT
    trials only) has an empty summary without columns; it gets them, typed and empty, so
    every analysis returns empty frames of the right shape. Columns it has are kept."""
    missing = {c: t for c, t in SUMMARY_SCHEMA.items() if c not in summary.columns}
    if not missing:
        return summary
    if not summary.height:
        return pl.DataFrame(schema={**summary.schema, **missing})
    return summary.with_columns(pl.lit(None, t).alias(c) for c, t in missing.items())


def run_keys(frame: pl.DataFrame) -> list[str]:
    """The :data:`RUN_KEYS` ``frame`` has."""
    return [c for c in RUN_KEYS if c in frame.columns]


def sweep_keys(frame: pl.DataFrame) -> list[str]:
    """What keeps sweeps apart: the :data:`RUN_KEYS` ``frame`` has and, when it has it, the
    ``test_group`` (:func:`~ssdlab.analysis.workloads.classify`): steps of one suite test
    never share a sweep with another test's."""
    return [*run_keys(frame), *(c for c in ("test_group",) if c in frame.columns)]


def per_step(summary: pl.DataFrame) -> pl.DataFrame:
    """One row per step and direction: jobs fio reported separately are combined.

    Rates and byte counts add up; mean latencies are weighted by IOPS (a plain mean when no
    job did I/O); percentiles and maxima take the worst job. A frame that already holds one
    row per step and direction comes back with the same figures.
    """
    summary = with_summary_columns(summary) if not summary.height else summary
    present = set(summary.columns)
    keys = [c for c in STEP_KEYS if c in present]
    first = [c for c in ("bs_bytes", "iodepth", "numjobs", "rwmixread") if c in present]
    worst = [c for c in summary.columns if c.startswith("clat_p") or c == "clat_max_ns"]
    weight = pl.col("iops").fill_null(0)

    def weighted(column: str) -> pl.Expr:
        if column not in present:
            return pl.lit(None, pl.Float64).alias(column)
        mean = (pl.col(column) * weight).sum() / weight.sum()
        return pl.when(weight.sum() > 0).then(mean).otherwise(pl.col(column).mean()).alias(column)

    return summary.group_by(keys, maintain_order=True).agg(
        *(pl.col(c).first() for c in first),
        *(pl.col(c).min() for c in ("iodepth_run",) if c in present),  # the shallowest job
        *(pl.col(c).sum() for c in ("iops", "bw_bytes_s", "io_bytes") if c in present),
        *(pl.col(c).max() for c in ("runtime_s",) if c in present),
        weighted("lat_mean_ns"),
        weighted("clat_mean_ns"),
        *(pl.col(c).max() for c in worst),
    )


def rw_mode() -> pl.Expr:
    """:func:`ssdlab.vocab.base_rw` of the ``rw`` column (``randread:8`` -> ``randread``)."""
    return pl.col("rw").str.split(":").list.first()


def access_pattern() -> pl.Expr:
    """``random`` for the rand* rw modes, else ``sequential``."""
    return (
        pl.when(rw_mode().str.starts_with("rand"))
        .then(pl.lit("random"))
        .otherwise(pl.lit("sequential"))
    )


def read_share() -> pl.Expr:
    """The configured read share in %: 100 for reads, 0 for writes, else ``rwmixread``
    (fio's default :data:`~ssdlab.vocab.RWMIXREAD_DEFAULT` where a mixed step has none)."""
    mode = rw_mode()
    return (
        pl.when(mode.is_in(READ_RW))
        .then(100)
        .when(mode.is_in(WRITE_RW))
        .then(0)
        .otherwise(pl.col("rwmixread").fill_null(RWMIXREAD_DEFAULT))
        .cast(pl.Int64)
    )

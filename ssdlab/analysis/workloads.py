"""Workload classification, QD, mix and block-size sweeps, from the summary columns.

A step of a native run belongs to a suite test (``test``: the ``[[steps]]`` entry it was
expanded from); a sweep is made of one test's steps only (``test_group``), so a point a
block-size sweep also measured never stands in a QD sweep's chart. Steps without a test of
two or more steps (imports, single steps, runs recorded before tests) are grouped by their
summary columns (rw, bs_bytes, iodepth x numjobs, rwmixread), never by step names:

- a **QD sweep** is one pure read or write workload (access pattern, block size, direction)
  measured at two or more queue depths (QD = iodepth x numjobs);
- a **mix sweep** is one access pattern, block size, iodepth and numjobs measured at three or
  more read shares, at least one of them mixed;
- a **block-size sweep** is one pure workload at one QD measured at two or more block sizes
  (three or more when inferred);
- when such a group measured the same point twice, the later step counts
  (:func:`measured_twice` says so); size-based write steps of native runs (``loops``: fills
  such as preconditioning) are not measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..manifest import Manifest
from ..phrases import mix_phrase
from ..units import MB, bs_label, qd_label
from ..vocab import MIXED_RW, READ_WRITE_RW
from .figures import mix_sweep, qd_scaling
from .percentiles import clamp_to_max
from .steps import RUN_KEYS, access_pattern, per_step, read_share, run_keys, rw_mode

#: from this block size on, throughput is reported as MB/s instead of IOPS
BANDWIDTH_BS = 65536


def fill_steps(manifest: Manifest) -> set[int]:
    """Indexes of size-based write steps (preconditioning fills) of a native run."""
    return {
        s.index
        for s in manifest.steps
        if s.workload is not None and s.workload.loops is not None and s.workload.writes
    }


def workload_label(pattern: str, bs_bytes: int | None, read_pct: int) -> str:
    """``4K random read``, ``128K sequential write``, ``4K random 70/30``."""
    return f"{bs_label(bs_bytes)} {pattern} {mix_phrase(read_pct)}"


def workload_columns() -> dict[str, pl.Expr]:
    """``pattern`` (random or sequential) and ``read_pct`` (the configured read share) of
    rows with ``rw`` and ``rwmixread``: what :func:`label_columns` reads."""
    return {"pattern": access_pattern(), "read_pct": read_share()}


def label_columns() -> dict[str, pl.Expr]:
    """``workload`` (:func:`workload_label`) and ``qd_label`` of rows with ``pattern``,
    ``bs_bytes``, ``read_pct``, ``iodepth`` and ``numjobs``."""
    return {
        "workload": pl.struct("pattern", "bs_bytes", "read_pct").map_elements(
            lambda r: workload_label(r["pattern"], r["bs_bytes"], r["read_pct"]),
            return_dtype=pl.String,
        ),
        "qd_label": pl.struct("iodepth", "numjobs").map_elements(
            lambda r: qd_label(r["iodepth"], r["numjobs"]), return_dtype=pl.String
        ),
    }


def _labels(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        **label_columns(),
        metric=pl.when(pl.col("bs_bytes") >= BANDWIDTH_BS)
        .then(pl.lit("MB/s"))
        .otherwise(pl.lit("IOPS")),
    )


def classify(
    summary: pl.DataFrame, manifest: Manifest | None = None, *, combined: bool = False
) -> pl.DataFrame:
    """Measured steps, one row per step and direction, with ``pattern`` (random or
    sequential), ``read_pct``, ``qd``, ``mixed``, ``workload``, ``qd_label`` and ``metric``
    (IOPS, or MB/s from 64K blocks on). Trims and, given the manifest, preconditioning fills
    are left out. Percentiles are capped at the step's maximum (:func:`clamp_to_max`).
    ``combined``: ``summary`` already holds one row per step and direction (rows of
    :func:`per_step`), which are then taken as they are instead of combined again."""
    frame = clamp_to_max(summary if combined else per_step(summary))
    if manifest is not None:
        frame = frame.filter(~pl.col("step_index").is_in(list(fill_steps(manifest))))
    frame = frame.filter(rw_mode().is_in(READ_WRITE_RW)).with_columns(
        **workload_columns(),
        qd=pl.col("iodepth") * pl.col("numjobs"),
        mixed=rw_mode().is_in(MIXED_RW),
    )
    return _labels(_depth_run(_test_groups(frame)))


def _test_groups(frame: pl.DataFrame) -> pl.DataFrame:
    """``test_group``: the step's ``test`` when that test has two or more steps in its run,
    else null (its sweeps are then found from the columns)."""
    if "test" not in frame.columns:
        frame = frame.with_columns(test=pl.lit(None, pl.String))
    steps = pl.col("step_index").n_unique().over([*run_keys(frame), "test"])
    return frame.with_columns(
        test_group=pl.when(pl.col("test").is_not_null() & (steps >= 2)).then(pl.col("test"))
    )


def depth_bucket(depth: pl.Expr) -> pl.Expr:
    """The bucket of fio's ``iodepth_level`` a queue depth falls in (1, 2, 4, ... 64)."""
    return pl.min_horizontal(pl.lit(2.0).pow(depth.cast(pl.Float64).log(2).floor()), 64).cast(
        pl.Int64
    )


def _depth_run(frame: pl.DataFrame) -> pl.DataFrame:
    """``qd_run`` (the depth fio kept most of the time x numjobs; null when fio did not say)
    and ``qd_reached`` (whether that is the configured iodepth's bucket of fio's
    distribution: a sync engine runs at depth 1 whatever ``iodepth`` says)."""
    if "iodepth_run" not in frame.columns:
        frame = frame.with_columns(iodepth_run=pl.lit(None, pl.Int64))
    return frame.with_columns(
        qd_run=pl.col("iodepth_run") * pl.col("numjobs"),
        qd_reached=pl.col("iodepth_run") >= depth_bucket(pl.col("iodepth")),
    )


def throughput() -> pl.Expr:
    """A workload's headline figure ``value``: IOPS, or MB/s for large blocks."""
    return (
        pl.when(pl.col("metric") == "MB/s")
        .then(pl.col("bw_bytes_s") / MB)
        .otherwise(pl.col("iops"))
        .alias("value")
    )


def latest(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """One step at each key (a point measured twice counts once): given a ``charted``
    column (the higher, the more the step is the point's own measurement), the highest;
    then the last step measured."""
    if "charted" in frame.columns:
        charted = pl.col("charted").fill_null(0)
        frame = frame.filter(charted == charted.max().over(keys))
    return frame.filter(pl.col("step_index") == pl.col("step_index").max().over(keys))


def in_review_order(frame: pl.DataFrame) -> pl.DataFrame:
    """Random before sequential, small blocks first, reads before writes (a mix's read
    direction before its write direction); otherwise in the order given."""
    by = [pl.col("pattern") != "random", "bs_bytes", pl.col("read_pct"), "qd"]
    descending = [False, False, True, False]
    if "direction" in frame.columns:
        by.append("direction")
        descending.append(False)
    return frame.sort(by, descending=descending, maintain_order=True)


def qd_points(classified: pl.DataFrame) -> pl.DataFrame:
    """One row per run, QD sweep and QD: ``workload``, ``qd``, ``qd_label``, ``value`` (in
    ``metric``), rates, latencies and ``at_95`` (the lowest QD reaching 95 % of the peak)."""
    workload = [*RUN_KEYS, "test_group", "pattern", "bs_bytes", "direction"]
    pure = latest(classified.filter(~pl.col("mixed")), [*workload, "qd"])
    sweeps = pure.filter(pl.col("qd").n_unique().over(workload) >= 2)
    if not sweeps.height:
        return sweeps.with_columns(value=pl.lit(None, pl.Float64), at_95=pl.lit(False))
    keys = [*RUN_KEYS, "test_group", "rw", "bs_bytes", "direction", "qd"]
    best = qd_scaling(sweeps).select(keys)
    return in_review_order(
        sweeps.join(
            best.with_columns(at_95=pl.lit(True)),
            on=keys,
            how="left",
            nulls_equal=True,
        ).with_columns(throughput(), pl.col("at_95").fill_null(False))
    )


@dataclass(frozen=True)
class Mixes:
    """Mix sweeps: ``steps`` (one row per run, sweep and read share: ``sweep``, ``read_pct``,
    ``value`` in ``metric``) and ``sweeps`` (per run and sweep: ``avg``, ``at_70_30``,
    ``low``, ``low_read_pct``, ``steps``)."""

    steps: pl.DataFrame
    sweeps: pl.DataFrame


def mix_points(classified: pl.DataFrame) -> Mixes:
    """The mix sweeps among classified steps (see the module docstring)."""
    keys = [*RUN_KEYS, "test_group", "pattern", "bs_bytes", "iodepth", "numjobs"]
    chosen_steps = latest(classified, [*keys, "read_pct"])
    shares = chosen_steps.group_by(keys).agg(
        pl.col("read_pct").n_unique().alias("shares"),
        ((pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)).any().alias("has_mix"),
    )
    chosen = chosen_steps.join(
        shares.filter((pl.col("shares") >= 3) & pl.col("has_mix")), on=keys, nulls_equal=True
    )
    if not chosen.height:
        empty = pl.DataFrame(schema={"sweep": pl.String, "pattern": pl.String})
        return Mixes(empty, empty)
    swept = mix_sweep(chosen)
    labels = (
        chosen.select(*keys, "metric")
        .unique()
        .with_columns(
            sweep=pl.struct("pattern", "bs_bytes", "iodepth", "numjobs").map_elements(
                lambda r: (
                    f"{bs_label(r['bs_bytes'])} {r['pattern']} "
                    + qd_label(r["iodepth"], r["numjobs"])
                ),
                return_dtype=pl.String,
            ),
            qd=pl.col("iodepth") * pl.col("numjobs"),
        )
    )
    steps = (
        swept.steps.join(labels, on=keys, nulls_equal=True)
        .with_columns(throughput())
        .sort("bs_bytes", "qd", pl.col("read_pct"), descending=[False, False, True])
    )
    sweeps = (
        steps.group_by(
            *RUN_KEYS,
            "test_group",
            "sweep",
            "pattern",
            "bs_bytes",
            "qd",
            "metric",
            maintain_order=True,
        )
        .agg(
            avg=pl.col("value").mean(),
            at_70_30=pl.col("value").filter(pl.col("read_pct") == 70).first(),
            low=pl.col("value").min(),
            low_read_pct=pl.col("read_pct").sort_by("value").first(),
            steps=pl.len(),
        )
        .sort("bs_bytes", "qd")
    )
    return Mixes(steps, sweeps)


def bs_points(classified: pl.DataFrame) -> pl.DataFrame:
    """One row per run, block-size sweep, direction and block size (see the module
    docstring): ``sweep`` (``random read QD32``), ``bs_bytes``, ``value`` in ``metric``,
    rates, latencies and the step each point came from."""
    keys = [*RUN_KEYS, "test_group", "pattern", "direction", "qd"]
    pure = latest(classified.filter(~pl.col("mixed")), [*keys, "bs_bytes"])
    sizes = pl.col("bs_bytes").n_unique().over(keys)
    least = pl.when(pl.col("test_group").is_null()).then(3).otherwise(2)
    sweeps = pure.filter(sizes >= least)
    return sweeps.with_columns(
        throughput(),
        sweep=pl.concat_str("pattern", pl.lit(" "), "direction", pl.lit(" "), "qd_label"),
    ).sort(pl.col("pattern") != "random", "direction", "qd", "bs_bytes")


#: why :func:`latest` chose a step, by its ``charted`` rank
WHY = {
    3: "its QD sweep's own step",
    2: "its mix sweep's own step",
    1: "its block-size sweep's step",
}


def measured_twice(classified: pl.DataFrame) -> pl.DataFrame:
    """Points (run, workload and QD) that more than one step measured, the step used (by
    :func:`latest`: ``classified`` has ``charted``) and why: ``workload``, ``qd_label``,
    ``used_step``, ``used_test``, ``other_steps``, ``why``."""
    keys = [*RUN_KEYS, "workload", "qd_label"]
    steps = classified.unique([*RUN_KEYS, "step_index"], keep="first", maintain_order=True)
    twice = steps.filter(pl.col("step_index").n_unique().over(keys) >= 2)
    schema = {
        "workload": pl.String, "qd_label": pl.String, "used_step": pl.String,
        "used_test": pl.String, "other_steps": pl.String, "why": pl.String,
    }  # fmt: skip
    if not twice.height:
        return pl.DataFrame(schema={**{k: pl.String for k in RUN_KEYS}, **schema})
    used = latest(twice, keys).select(
        *keys,
        used_step="step",
        used_test="test",
        used_index="step_index",
        why=pl.col("charted").replace_strict(WHY, default="the later step", return_dtype=pl.String),
    )
    others = (
        twice.join(used, on=keys, nulls_equal=True)
        .filter(pl.col("step_index") != pl.col("used_index"))
        .group_by(keys, maintain_order=True)
        .agg(other_steps=pl.col("step").unique().sort().str.join(", "))
    )
    return used.join(others, on=keys, nulls_equal=True).sort(keys).select(*RUN_KEYS, *schema)

"""Repeated steps: the median repeat, a 95 % interval, and whether a lead is larger than noise.

A step run N times (``ssdlab run --repeat N``, see :mod:`ssdlab.repeat`) is reported by its
median repeat: the real fio run whose IOPS is the median of the repeats (the lower of the two
middle ones for an even N), so every headline figure is still one run's numbers, traceable
to its ``fio.json``. Its interval is Student's t interval of the repeats' mean at 95 %
(:func:`interval`): with few repeats it is wide, as it should be.

Latency percentiles are skewed (a tail percentile of one repeat can be several times
another's, never below zero), so their interval is the t interval of the repeats' logarithms
mapped back (:func:`log_interval`): a ratio around the geometric mean, never below zero, as
:func:`lead` compares them. The order-statistic interval of the median is no alternative:
with N repeats [min, max] holds the median with 1 - 2 x 0.5^N, 75 % for three repeats, so it
cannot be a 95 % interval below six. Rates and watts are not skewed: :func:`interval`.

Two drives are compared on the logarithm of their repeats (Welch's t interval of the
difference of means, :func:`lead`), so a lead is a ratio with an interval: "3 % +- 4 %" is
within the noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
from pydantic import ValidationError

from ..manifest import Manifest
from ..repeat import repeat_counts, split_repeat
from ..suite import Step, Suite
from ..units import MB
from .steps import run_keys

#: Student's t quantile t(0.975, df) for df = 1..30 (two-sided 95 %)
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964


def t975(df: float) -> float:
    """Student's t quantile at 0.975 for ``df`` degrees of freedom (a table to 30, then
    interpolated in 1/df towards the normal's 1.96; fractional df of Welch's rule round
    down, the cautious side)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    whole = math.floor(df)
    if whole <= len(_T975):
        return _T975[whole - 1]
    last = len(_T975)
    return _Z975 + (_T975[-1] - _Z975) * last / whole


#: fio's completion-latency percentiles a review quotes: name -> (column, percentile)
LATENCY_PERCENTILES = {
    "p50": ("clat_p50_ns", 50.0),
    "p99": ("clat_p99_ns", 99.0),
    "p99.9": ("clat_p99_9_ns", 99.9),
    "p99.99": ("clat_p99_99_ns", 99.99),
}
#: the power frame's figures a repeated step gets an interval of
POWER_FIGURES = ("avg_w", "iops_per_w", "mb_s_per_w")


@dataclass(frozen=True)
class Interval:
    """Repeats of one figure: ``n``, their median, mean (geometric for
    :func:`log_interval`), the mean's 95 % interval (``lo``..``hi``, None with one repeat)
    and their spread (sample standard deviation over the mean, in percent; None with one
    repeat)."""

    n: int
    median: float
    mean: float
    lo: float | None
    hi: float | None
    spread_pct: float | None


def _mean_sd_half(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean, sample standard deviation and the 95 % t half width of two or more values."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, sd, t975(n - 1) * sd / math.sqrt(n)


def interval(values: Sequence[float]) -> Interval:
    """The :class:`Interval` of a figure's repeats."""
    if not values:
        raise ValueError("no values")
    n = len(values)
    ordered = sorted(values)
    median = ordered[(n - 1) // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    if n == 1:
        return Interval(1, median, values[0], None, None, None)
    mean, sd, half = _mean_sd_half(values)
    spread = 100 * sd / mean if mean else None
    # the figures (rates, latencies) are never negative: nor is the interval's lower end
    return Interval(n, median, mean, max(mean - half, 0.0), mean + half, spread)


def log_interval(values: Sequence[float]) -> Interval:
    """The :class:`Interval` of a skewed figure's repeats (latency percentiles): the t
    interval of their logarithms' mean, mapped back (``mean`` is the geometric mean, ``lo``
    above zero); median and spread as :func:`interval`. A repeat of zero (fio's null engine
    reports 0 ns) has no logarithm: then the plain :func:`interval`."""
    plain = interval(values)
    if plain.n == 1 or min(values) <= 0:
        return plain
    mean, _, half = _mean_sd_half([math.log(v) for v in values])
    return Interval(
        plain.n,
        plain.median,
        math.exp(mean),
        math.exp(mean - half),
        math.exp(mean + half),
        plain.spread_pct,
    )


@dataclass(frozen=True)
class Lead:
    """How much larger ``a`` is than ``b``: ``pct`` (100 x (ratio - 1)), its 95 % half
    width ``plus_minus_pct`` (None without repeats on both sides) and whether the
    interval excludes no difference."""

    pct: float
    plus_minus_pct: float | None

    @property
    def significant(self) -> bool | None:
        """Whether the interval excludes no difference, judged on the logarithms the interval
        is symmetric in (a lead of -40 % is the other side's +67 %); None when the noise is
        unknown (a side without repeats)."""
        if self.plus_minus_pct is None:
            return None
        return abs(math.log1p(self.pct / 100)) > math.log1p(self.plus_minus_pct / 100)

    @property
    def size_pct(self) -> float:
        """How much larger the larger side is, in percent: ``pct`` for a positive lead, the
        other side's lead for a negative one (what ``plus_minus_pct`` is the half width of)."""
        return 100 * math.expm1(abs(math.log1p(self.pct / 100)))


def lead(a: Sequence[float], b: Sequence[float]) -> Lead:
    """The lead of repeats ``a`` over repeats ``b`` (positive values), by Welch's t interval
    of the difference of the logarithms' means."""
    if not a or not b or min(*a, *b) <= 0:
        raise ValueError("a lead needs positive repeats on both sides")
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    ma, mb = sum(la) / len(la), sum(lb) / len(lb)
    pct = 100 * math.expm1(ma - mb)
    if len(la) < 2 or len(lb) < 2:
        return Lead(pct, None)
    va = sum((v - ma) ** 2 for v in la) / (len(la) - 1) / len(la)
    vb = sum((v - mb) ** 2 for v in lb) / (len(lb) - 1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return Lead(pct, 0.0)
    df = se**4 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    # Welch's df lies between the smaller side's n - 1 and na + nb - 2; rounding can step out
    df = min(max(df, min(len(la), len(lb)) - 1), len(la) + len(lb) - 2)
    return Lead(pct, 100 * math.expm1(t975(df) * se))


#: what a repeat shares with the step it repeats (a step merely named ``x.rep2`` is not one)
_WORKLOAD = ("rw", "bs_bytes", "iodepth", "numjobs", "rwmixread")


def with_repeats(steps: pl.DataFrame) -> pl.DataFrame:
    """``steps`` with ``repeat_of`` (the step's name without its repeat suffix) and
    ``repeat`` (1 for a step that was not repeated). The steps of one name without its
    suffix are one step's repeats whichever of them are there (repeat 1 may have been left
    out, its ``fio.json`` unreadable): those that ran the workload of the lowest repeat
    there, when that is repeat 1 or when two or more of them ran it. A name with a repeat
    suffix is its own step otherwise (a step merely named ``x.rep2``)."""
    parts = [split_repeat(name) for name in steps["step"].to_list()]
    marked = steps.with_columns(
        repeat_of=pl.Series([p[0] for p in parts], dtype=pl.String),
        repeat=pl.Series([p[1] for p in parts], dtype=pl.Int64),
    )
    if marked["repeat"].max() in (None, 1):
        return marked
    group = [*run_keys(marked), "repeat_of"]
    keys = [*group, *(c for c in _WORKLOAD if c in marked.columns)]
    named = marked.select(*keys, "repeat", "step").unique()
    first = named.sort("repeat").unique(group, keep="first").drop("step")
    same = named.join(first.drop("repeat"), on=keys, how="semi", nulls_equal=True)
    same = same.join(first.select(*group, lowest="repeat"), on=group, nulls_equal=True)
    real = same.filter((pl.col("lowest") == 1) | (pl.col("step").n_unique().over(group) > 1))[
        "step"
    ]
    mine = pl.col("step").is_in(real.implode()) | (pl.col("repeat") == 1)
    return marked.with_columns(
        repeat_of=pl.when(mine).then("repeat_of").otherwise("step"),
        repeat=pl.when(mine).then("repeat").otherwise(1),
    )


def median_repeats(steps: pl.DataFrame) -> pl.DataFrame:
    """One step per repeated step: the rows (every direction) of its median repeat by total
    IOPS, renamed to the step's own name; steps without repeats are unchanged. ``steps``
    holds one row per step and direction (:func:`~.steps.per_step`)."""
    if not steps.height:
        return steps
    marked = with_repeats(steps)
    if marked["repeat"].max() == 1:
        return steps
    group = [*run_keys(marked), "repeat_of"]
    totals = (
        marked.group_by(*group, "repeat", "step_index")
        .agg(pl.col("iops").fill_null(0).sum().alias("_total"))
        .sort(*group, "_total", "step_index")
        .with_columns(_rank=pl.int_range(pl.len()).over(group), _n=pl.len().over(group))
        .filter(pl.col("_rank") == (pl.col("_n") - 1) // 2)
    )
    chosen = totals.select(*run_keys(marked), "step_index")
    return (
        marked.join(chosen, on=[*run_keys(marked), "step_index"], how="semi")
        .with_columns(pl.col("repeat_of").alias("step"))
        .drop("repeat_of", "repeat")
    )


def planned_repeats(manifest: Manifest) -> dict[str, int]:
    """How many repeats each step of a run has (by its name without a repeat suffix), left
    out ones included (:func:`~ssdlab.repeat.repeat_counts`): the steps its suite definition
    planned and those its manifest recorded (``--max-spread`` adds repeats, a run stopped
    early records fewer). A definition this version cannot read as a
    :class:`~ssdlab.suite.Suite` (an older run's) plans no more than was recorded."""
    names = [record.name for record in manifest.steps]
    if manifest.suite_definition is not None:
        try:
            suite = Suite.model_validate(manifest.suite_definition)
        except ValidationError:
            suite = None
        if suite is not None:
            names += [item.name for item in suite.steps if isinstance(item, Step)]
    return repeat_counts(names)


#: :func:`repeats_found`'s columns
FOUND_SCHEMA = {
    "step": pl.String, "names": pl.List(pl.String), "found": pl.Int64, "planned": pl.Int64,
}  # fmt: skip


def repeats_found(steps: pl.DataFrame, planned: dict[str, int]) -> pl.DataFrame:
    """Per step of ``steps`` (one row per step and direction) by its name without a repeat
    suffix, in run order (:data:`FOUND_SCHEMA`): ``names`` (its repeats among ``steps``, in
    run order), ``found`` (how many) and ``planned`` (:func:`planned_repeats`'s, 1 when it
    names none): a repeat that failed or could not be read is planned but not found."""
    names = steps.sort("step_index", maintain_order=True)["step"].unique(maintain_order=True)
    found: dict[str, list[str]] = {}
    for name in names:
        found.setdefault(split_repeat(name)[0], []).append(name)
    rows = [(step, ran, len(ran), planned.get(step, 1)) for step, ran in found.items()]
    return pl.DataFrame(rows, schema=FOUND_SCHEMA, orient="row")


def step_totals(steps: pl.DataFrame) -> pl.DataFrame:
    """``steps`` (one row per step and direction) with its directions added up: one row per
    step, direction ``all``, ``iops`` and ``bw_bytes_s`` summed, the workload kept."""
    keys = [*run_keys(steps), "step_index", "step", *(c for c in _WORKLOAD if c in steps.columns)]
    return (
        steps.group_by(keys, maintain_order=True)
        .agg(pl.col("iops").fill_null(0).sum(), pl.col("bw_bytes_s").fill_null(0).sum())
        .with_columns(direction=pl.lit("all"))
    )


def _figure_interval(figure: str, values: pl.Series) -> Interval | None:
    """The interval of one figure's repeats: rates count a missing value as none measured,
    latencies (``*_ns``, on logs: :func:`log_interval`) and watts leave it out."""
    if figure in ("iops", "bw_bytes_s"):
        return interval(values.fill_null(0).to_list())
    known = values.drop_nulls().to_list()
    if not known:
        return None
    return log_interval(known) if figure.endswith("_ns") else interval(known)


#: the columns :func:`repeat_figures` gives each figure, after its name
_STATS = ("median", "lo95", "hi95", "spread_pct")


def repeat_figures(
    steps: pl.DataFrame, figures: Sequence[str] = ("iops", "bw_bytes_s")
) -> pl.DataFrame:
    """Per repeated step and direction: ``repeats`` and, for each figure, ``<figure>_median``,
    ``<figure>_lo95``, ``<figure>_hi95`` and ``<figure>_spread_pct`` (see :class:`Interval`;
    latencies, ``*_ns``, by :func:`log_interval`; null where no repeat has the figure).
    Steps that ran once are left out. ``steps``: one row per step and direction."""
    marked = with_repeats(steps)
    keys = [*run_keys(marked), "repeat_of", "direction"]
    repeated = marked.filter(pl.col("repeat").max().over(keys) > 1)
    rows = []
    for key, group in repeated.group_by(keys, maintain_order=True):
        row = dict(zip(keys, key, strict=True)) | {"repeats": group.height}
        for figure in figures:
            found = _figure_interval(figure, group[figure])
            values = (found.median, found.lo, found.hi, found.spread_pct) if found else (None,) * 4
            row |= {f"{figure}_{stat}": v for stat, v in zip(_STATS, values, strict=True)}
        rows.append(row)
    schema = {k: marked.schema[k] for k in keys} | {"repeats": pl.Int64}
    for figure in figures:
        schema |= dict.fromkeys((f"{figure}_{stat}" for stat in _STATS), pl.Float64)
    return pl.DataFrame(rows, schema=schema, orient="row")


def with_intervals(points: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """``points`` (rows with ``step``, ``metric``: IOPS or MB/s, and ``direction``, or none
    for points of a step's directions added up, as mix sweeps) with ``value_lo95`` and
    ``value_hi95``, the 95 % interval of the step's repeats in that metric (null for a step
    run once). ``steps``: one row per step and direction, every repeat included
    (:attr:`~.drive.DriveAnalysis.every_repeat`)."""
    directions = ["direction"] if "direction" in points.columns else []
    figures = repeat_figures(steps if directions else step_totals(steps))
    if not figures.height:
        return points.with_columns(
            value_lo95=pl.lit(None, pl.Float64), value_hi95=pl.lit(None, pl.Float64)
        )
    keys = [*run_keys(figures), "repeat_of", *directions]
    found = points.join(
        figures.select(*keys, "iops_lo95", "iops_hi95", "bw_bytes_s_lo95", "bw_bytes_s_hi95"),
        left_on=[*run_keys(figures), "step", *directions],
        right_on=keys,
        how="left",
        nulls_equal=True,
    )
    mbs = pl.col("metric") == "MB/s"
    return found.with_columns(
        value_lo95=pl.when(mbs).then(pl.col("bw_bytes_s_lo95") / MB).otherwise("iops_lo95"),
        value_hi95=pl.when(mbs).then(pl.col("bw_bytes_s_hi95") / MB).otherwise("iops_hi95"),
    ).drop("iops_lo95", "iops_hi95", "bw_bytes_s_lo95", "bw_bytes_s_hi95")


def percentile_intervals(chosen: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Per chosen series (``series``, ``step``, ``direction``: a review's shown steps, each its
    median repeat named as the step) that was repeated, and per percentile of
    :data:`LATENCY_PERCENTILES`: ``percentile``, ``name`` (``p99``), ``repeats``,
    ``median_ns``, ``lo95_ns``, ``hi95_ns`` (:func:`log_interval` of fio's percentile of each
    repeat). Empty without repeats. ``steps``: every repeat (one row per step and direction)."""
    schema = {
        "series": pl.String,
        "percentile": pl.Float64,
        "name": pl.String,
        "repeats": pl.Int64,
        "median_ns": pl.Float64,
        "lo95_ns": pl.Float64,
        "hi95_ns": pl.Float64,
    }
    columns = [column for column, _ in LATENCY_PERCENTILES.values()]
    figures = repeat_figures(steps, columns) if steps.height else pl.DataFrame()
    if not figures.height or not chosen.height:
        return pl.DataFrame(schema=schema)
    keys = [*run_keys(figures), "repeat_of", "direction"]
    found = chosen.select(*run_keys(figures), "series", "step", "direction").join(
        figures,
        left_on=[*run_keys(figures), "step", "direction"],
        right_on=keys,
        nulls_equal=True,
    )
    long = [
        found.select(
            "series",
            percentile=pl.lit(p),
            name=pl.lit(name),
            repeats=pl.col("repeats").cast(pl.Int64),
            median_ns=f"{column}_median",
            lo95_ns=f"{column}_lo95",
            hi95_ns=f"{column}_hi95",
        )
        for name, (column, p) in LATENCY_PERCENTILES.items()
    ]
    return pl.concat(long).drop_nulls("median_ns").cast(schema)  # type: ignore[arg-type]


def power_figures(power: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Per repeated step whose power was measured: :func:`repeat_figures` of the power frame's
    :data:`POWER_FIGURES` (``avg_w_median``... by :func:`interval`: watts are not skewed; a
    repeat not covered by the trace is left out). ``power``: the run's power frame (one row
    per step); ``steps``: every repeat, one row per step and direction."""
    if not power.height or not steps.height:
        return pl.DataFrame()
    rates = step_totals(steps).join(
        power.select("step_index", *POWER_FIGURES), on="step_index", how="inner"
    )
    return repeat_figures(rates, POWER_FIGURES)


#: a comparison score's metric -> its value of one step (one row per direction)
_SCORE_VALUES = {
    "IOPS": pl.col("iops").fill_null(0).sum(),
    "MB/s": pl.col("bw_bytes_s").fill_null(0).sum() / MB,
    "ns": pl.col("clat_p99_99_ns").max(),
}


def score_repeats(steps: pl.DataFrame) -> dict[tuple[int, str], list[float]]:
    """Per step index and score metric (``IOPS``, ``MB/s``, ``ns`` for p99.99 latency):
    the values of every repeat of that step, for steps run more than once. ``steps``: one
    run's rows per step and direction, every repeat included."""
    if not steps.height:
        return {}
    marked = with_repeats(steps)
    if marked["repeat"].max() == 1:
        return {}
    per = marked.group_by("repeat_of", "step_index").agg(
        **{metric: value for metric, value in _SCORE_VALUES.items()}
    )
    groups = per.group_by("repeat_of").agg(pl.col("step_index"), *_SCORE_VALUES)
    found: dict[tuple[int, str], list[float]] = {}
    for row in groups.filter(pl.col("step_index").list.len() > 1).iter_rows(named=True):
        for metric in _SCORE_VALUES:
            values = [v for v in row[metric] if v is not None]
            for index in row["step_index"]:
                found[(index, metric)] = values
    return found


def direction_repeats(steps: pl.DataFrame, column: str) -> dict[tuple[int, str], list[float]]:
    """Per step index and direction: ``column`` (a latency percentile, say) in every repeat of
    that step, nulls left out, for steps run more than once. ``steps``: one run's rows per
    step and direction, every repeat included."""
    if not steps.height:
        return {}
    marked = with_repeats(steps)
    if marked["repeat"].max() == 1:
        return {}
    groups = marked.group_by("repeat_of", "direction").agg(pl.col("step_index"), pl.col(column))
    found: dict[tuple[int, str], list[float]] = {}
    for row in groups.filter(pl.col("step_index").list.len() > 1).iter_rows(named=True):
        values = [v for v in row[column] if v is not None]
        for index in row["step_index"]:
            found[(index, row["direction"])] = values
    return found

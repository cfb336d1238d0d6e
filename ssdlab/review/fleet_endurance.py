"""Fleet endurance report sections: WAF and wear per drive, by model and firmware, projected
wear-out, outliers and media errors of a SMART history (:class:`FleetEndurance`).

Charts draw aggregates only (histograms of per-drive figures, counts per year), tables the
top :data:`TOP_ROWS` drives, so a report of 10,000 drives stays a few hundred rows of data.
The notebook ``fleet_endurance`` shows the sections in the order of :data:`SECTIONS`.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import polars as pl

from ..analysis.fleet_endurance import (
    MAX_PROJECTION_DAYS,
    MIN_PEERS,
    OUTLIER_RATIO,
    FleetEndurance,
)
from ..charts import WIDTH, axis, present_scale
from ..findings import count
from ..tables import format_bytes
from .section import Registry, Section, table

NOTEBOOK = "fleet_endurance"
SECTIONS = Registry(NOTEBOOK)
#: rows of a table of drives
TOP_ROWS = 25
#: models drawn in their own colour; the others are drawn as one
TOP_MODELS = 8
OTHER_MODELS = "other models"
#: bars of a histogram
BINS = 40
#: a histogram's range ends at this quantile of the figure; drives above are in its last bar
HISTOGRAM_QUANTILE = 0.995
#: years of projected wear-out drawn one bar each; later ones share the last bar
WEAROUT_YEARS = 10
METRIC_NAMES = {
    "lifetime_waf": "lifetime WAF",
    "recent_waf": "recent WAF",
    "wear_pct_per_day": "wear rate (%/day)",
}
#: the model colours (Tableau 10, as vega's default scheme)
PALETTE = (
    "#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b",
    "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
)  # fmt: skip
NO_NAND = (
    "no capture reports NAND writes (NAND bytes or pages: the OCP C0 log, Intel "
    "smart-log-add, vendor SMART attributes), and host writes alone give no write amplification"
)


def _models(drives: pl.DataFrame) -> pl.Expr:
    """The drive's model, or :data:`OTHER_MODELS` beyond the :data:`TOP_MODELS` largest."""
    top = drives["model"].value_counts(sort=True).head(TOP_MODELS)["model"]
    return (
        pl.when(pl.col("model").is_in(top.implode()))
        .then(pl.col("model"))
        .otherwise(pl.lit(OTHER_MODELS))
        .alias("models")
    )


def _drives(n: int, one: str, many: str) -> str:
    """``1 drive has``, ``3 drives have``: a count of drives and its verb."""
    return f"{count(n, 'drive')} {one if n == 1 else many}"


def _model_color(drives: pl.DataFrame, data: pl.DataFrame) -> alt.Color:
    """One colour per model group, the same in every chart of the report; a chart's legend
    names only the models its ``data`` holds."""
    groups = drives.select(_models(drives)).unique().sort("models")["models"].to_list()
    if OTHER_MODELS in groups:
        groups = [g for g in groups if g != OTHER_MODELS] + [OTHER_MODELS]
    colors = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    return alt.Color("models:N", title="Model", scale=present_scale(colors, data["models"]))


def binned(drives: pl.DataFrame, column: str) -> pl.DataFrame:
    """Drives per bar of ``column`` and model (``models``, ``start``, ``end``, ``drives``):
    equal bars (Sturges' number for the drives known, at most :data:`BINS`) from the lowest
    value to the :data:`HISTOGRAM_QUANTILE`, values above counted in the last bar; when
    every drive has the same value, one narrow bar centred on it (a tenth of its leading
    digit's place wide: 1.25 -> 1.2 to 1.3)."""
    known = drives.filter(pl.col(column).is_not_null() & pl.col(column).is_finite())
    if not known.height:
        return pl.DataFrame(
            schema={
                "models": pl.String,
                "start": pl.Float64,
                "end": pl.Float64,
                "drives": pl.UInt32,
            }
        )
    low = known[column].min()
    high = known[column].quantile(HISTOGRAM_QUANTILE, "higher")
    bins = min(BINS, math.ceil(math.log2(known.height)) + 1)
    if high > low:
        width = (high - low) / bins
    else:
        width = 10.0 ** (math.floor(math.log10(abs(low))) - 1) if low else 0.1
        low -= width / 2
    index = ((pl.col(column) - low) / width).floor().clip(0, bins - 1)
    return (
        known.select(_models(drives), index.alias("bin"))
        .group_by("models", "bin")
        .agg(pl.len().alias("drives"))
        .select(
            "models",
            (low + pl.col("bin") * width).alias("start"),
            (low + (pl.col("bin") + 1) * width).alias("end"),
            "drives",
        )
        .sort("start", "models")
    )


def _histogram(drives: pl.DataFrame, column: str, title: str, unit: str) -> alt.Chart:
    """Stacked bars of :func:`binned`, one colour per model."""
    data = binned(drives, column)
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("start:Q", bin="binned", title=unit, axis=axis(WIDTH - 200)),
            x2="end:Q",
            y=alt.Y("sum(drives):Q", title="Drives", axis=axis()),
            color=_model_color(drives, data),
            tooltip=[
                alt.Tooltip("models:N", title="Model"),
                alt.Tooltip("start:Q", title="From", format=".3~f"),
                alt.Tooltip("end:Q", title="To", format=".3~f"),
                alt.Tooltip("drives:Q", title="Drives"),
            ],
        )
        .properties(width=WIDTH - 200, height=220, title=title)
    )


def _spread(metric: str, label: str) -> list[pl.Expr]:
    """Median and quartile range of ``metric`` as table columns."""
    return [
        pl.col(f"{metric}_median").alias(f"Median {label}"),
        pl.format(
            "{} – {}",
            pl.col(f"{metric}_p25").round_sig_figs(3),
            pl.col(f"{metric}_p75").round_sig_figs(3),
        ).alias(f"{label} 25–75 %"),
    ]


def _by_firmware(fleet: FleetEndurance, metrics: dict[str, str], known: str) -> Any:
    rows = fleet.by_firmware.filter(pl.col(known) > 0)
    view = rows.select(
        pl.col("model").alias("Model"),
        pl.col("firmware").fill_null("unknown").alias("Firmware"),
        pl.col("drives").alias("Drives"),
        pl.col(known).alias("With the figure"),
        *[e for metric, label in metrics.items() for e in _spread(metric, label)],
    )
    return table(
        view.head(TOP_ROWS),
        f"By model and firmware (the {min(TOP_ROWS, view.height)} largest of {view.height})",
        numeric=[c for c in view.columns if c.endswith("25–75 %")],
    )


@SECTIONS
def overview_section(fleet: FleetEndurance) -> Section:
    """How many drives, models and snapshots, over which dates, and which figures they give."""
    drives = fleet.drives
    if not drives.height:
        return Section(missing="No drives: the SMART history holds no snapshot.")
    first, last = drives["first_time"].min(), drives["last_time"].max()
    sentences = [
        f"{count(drives.height, 'drive')} of {count(drives['model'].n_unique(), 'model')}, "
        f"{count(fleet.snapshots, 'snapshot')} from {first:%Y-%m-%d} to {last:%Y-%m-%d}."
    ]
    lacking = {
        "lifetime_waf": "no NAND write counter, so no WAF",
        "wear_pct_per_day": "no percentage used over two snapshots or more, so no wear rate",
        "media_errors": "no media error count",
    }
    for column, what in lacking.items():
        if n := drives[column].null_count():
            sentences.append(f"{_drives(n, 'reports', 'report')} {what}.")
    view = fleet.by_model.select(
        pl.col("model").alias("Model"),
        pl.col("drives").alias("Drives"),
        pl.col("drives_with_waf").alias("With WAF"),
        pl.col("drives_with_wear").alias("With wear rate"),
    )
    return Section(sentences, [table(view.head(TOP_ROWS), "Drives per model")])


@SECTIONS
def waf_section(fleet: FleetEndurance) -> Section:
    """Lifetime WAF per drive (histogram by model), and by model and firmware: median and
    quartiles of the lifetime and recent WAF."""
    drives, overall = fleet.drives, fleet.overall
    if not overall["drives_with_waf"]:
        return Section(missing=f"No write amplification: {NO_NAND}.")
    top = fleet.by_model.filter(pl.col("drives_with_waf") > 0).sort(
        "lifetime_waf_median", descending=True
    )
    worst = top.row(0, named=True)
    sentences = [
        f"Median lifetime WAF {overall['lifetime_waf_median']:.2f} over "
        f"{count(overall['drives_with_waf'], 'drive')} (NAND over host bytes written over "
        "each drive's life); "
        f"recent WAF covers the last {fleet.recent_days:g} days before each drive's last "
        "snapshot.",
        f"Highest model median: {worst['model']} at {worst['lifetime_waf_median']:.2f} "
        f"({count(worst['drives_with_waf'], 'drive')}).",
    ]
    if missing := overall["drives"] - overall["drives_with_waf"]:
        sentences.append(f"{_drives(missing, 'has', 'have')} no WAF: {NO_NAND}.")
    chart = _histogram(drives, "lifetime_waf", "Lifetime WAF per drive", "WAF")
    metrics = {"lifetime_waf": "lifetime WAF", "recent_waf": "recent WAF"}
    return Section(sentences, [chart, _by_firmware(fleet, metrics, "drives_with_waf")])


@SECTIONS
def wear_section(fleet: FleetEndurance) -> Section:
    """Wear rate per drive (percentage used per day, histogram by model), and by model and
    firmware: median and quartiles per day and per TB written."""
    drives, overall = fleet.drives, fleet.overall
    if not overall["drives_with_wear"]:
        return Section(
            missing="No wear rate: no drive reports its percentage used in two snapshots or "
            "more, a day or more apart."
        )
    sentences = [
        f"Median wear {overall['wear_pct_per_day_median']:.3g} % of rated life per day over "
        f"{count(overall['drives_with_wear'], 'drive')} (the rise of percentage used between "
        "each drive's first and last snapshot; it moves in whole percent, so a drive that "
        "wore less than 1 % shows 0)."
    ]
    if (per_tb := overall["wear_pct_per_tb_median"]) is not None:
        sentences.append(f"Median {per_tb:.3g} % per TB the host wrote.")
    chart = _histogram(drives, "wear_pct_per_day", "Wear rate per drive", "% used per day")
    metrics = {"wear_pct_per_day": "% used per day", "wear_pct_per_tb": "% used per TB"}
    return Section(sentences, [chart, _by_firmware(fleet, metrics, "drives_with_wear")])


def wearout_years(drives: pl.DataFrame) -> pl.DataFrame:
    """Drives per year of projected wear-out and model (``year`` a label, ``drives``); the
    years :data:`WEAROUT_YEARS` or more after the history's last share the last label."""
    projected = drives.filter(pl.col("wearout_date").is_not_null())
    start = drives["last_time"].max().year
    year = pl.col("wearout_date").dt.year()
    label = (
        pl.when(year >= start + WEAROUT_YEARS)
        .then(pl.lit(f"{start + WEAROUT_YEARS} or later"))
        .otherwise(year.cast(pl.String))
    )
    return (
        projected.select(_models(drives), label.alias("year"))
        .group_by("year", "models")
        .agg(pl.len().alias("drives"))
        .sort("year", "models")
    )


@SECTIONS
def wearout_section(fleet: FleetEndurance) -> Section:
    """Projected wear-out dates: drives per year by model, and the soonest drives."""
    drives = fleet.drives
    projected = drives.filter(pl.col("wearout_date").is_not_null())
    if not projected.height:
        why = (
            "no drive reports a percentage used"
            if drives["percent_used"].null_count() == drives.height
            else "no drive's percentage used rose over its history"
        )
        return Section(missing=f"No projected wear-out: {why}.")
    worn = drives.filter(pl.col("percent_used") >= 100).height
    soon = projected.filter(pl.col("days_to_wearout") <= 365).height
    sentences = [
        "Projected linearly: each drive is assumed to keep wearing at its observed rate "
        "(percentage used per day) until 100 %, its rated endurance; a change of workload "
        "moves the date.",
        f"{_drives(soon, 'reaches', 'reach')} 100 % within a year of their last snapshot"
        + (f", {worn} already have." if worn else "."),
    ]
    if unprojected := drives.height - projected.height:
        sentences.append(
            f"{_drives(unprojected, 'has', 'have')} no date: no wear measured, or more than "
            f"{MAX_PROJECTION_DAYS // 365} years away."
        )
    years = wearout_years(drives)
    chart = (
        alt.Chart(years)
        .mark_bar()
        .encode(
            x=alt.X("year:O", title="Projected wear-out (year)", sort=None),
            y=alt.Y("sum(drives):Q", title="Drives", axis=axis()),
            color=_model_color(drives, years),
            tooltip=["year:O", alt.Tooltip("models:N", title="Model"), "drives:Q"],
        )
        .properties(width=WIDTH - 200, height=220, title="Drives by year of projected wear-out")
    )
    soonest = projected.sort("wearout_date", "serial").head(TOP_ROWS)
    view = soonest.select(
        pl.col("model").alias("Model"),
        pl.col("serial").alias("Serial"),
        pl.col("host").alias("Host"),
        pl.col("percent_used").alias("% used"),
        pl.col("wear_pct_per_day").alias("% used per day"),
        pl.col("wearout_date").dt.date().cast(pl.String).alias("Wear-out"),
    )
    return Section(sentences, [chart, table(view, f"The {soonest.height} soonest to wear out")])


@SECTIONS
def outliers_section(fleet: FleetEndurance) -> Section:
    """Drives whose WAF or wear rate is more than twice their model's median."""
    drives = fleet.drives
    if drives.select(pl.col(list(METRIC_NAMES)).null_count()).row(0) == (drives.height,) * 3:
        return Section(missing="No outliers to find: no drive has a WAF or a wear rate.")
    rows = fleet.outliers
    rule = (
        f"An outlier is a drive whose figure is more than {OUTLIER_RATIO:g} times its model's "
        f"median, among {MIN_PEERS} or more drives of the model with that figure."
    )
    if not rows.height:
        return Section([rule, "No drive is an outlier."])
    sentences = [rule, f"{_drives(rows['serial'].n_unique(), 'is an outlier', 'are outliers')}."]
    for metric, name in METRIC_NAMES.items():
        if n := rows.filter(pl.col("metric") == metric).height:
            sentences.append(f"{count(n, 'drive')} by {name}.")
    view = rows.head(TOP_ROWS).select(
        pl.col("model").alias("Model"),
        pl.col("serial").alias("Serial"),
        pl.col("firmware").alias("Firmware"),
        pl.col("metric").replace_strict(METRIC_NAMES).alias("Figure"),
        pl.col("value").alias("Value"),
        pl.col("model_median").alias("Model median"),
        pl.col("ratio").alias("× median"),
    )
    return Section(sentences, [table(view, f"The {view.height} furthest above their model")])


@SECTIONS
def media_errors_section(fleet: FleetEndurance) -> Section:
    """Drives with media errors (and new ones during the history), and the lowest spare."""
    drives = fleet.drives
    if drives["media_errors"].null_count() == drives.height:
        return Section(missing="No media error counts: no capture reports media errors.")
    erring = drives.filter(pl.col("media_errors") > 0)
    new = erring.filter(pl.col("new_media_errors") > 0).height
    sentences = [
        f"Of the {count(drives['media_errors'].count(), 'drive')} counting media errors, "
        f"{erring.height:,} {'reports' if erring.height == 1 else 'report'} some "
        f"({erring['media_errors'].sum():,} in all); {new:,} had new ones during the history."
    ]
    spare = drives["available_spare_percent"].drop_nulls()
    if spare.len():
        sentences.append(f"Lowest available spare: {spare.min()} %.")
    if not erring.height:
        return Section(sentences)
    view = erring.sort(["media_errors", "serial"], descending=[True, False]).head(TOP_ROWS)
    view = view.select(
        pl.col("model").alias("Model"),
        pl.col("serial").alias("Serial"),
        pl.col("host").alias("Host"),
        pl.col("media_errors").alias("Media errors"),
        pl.col("new_media_errors").alias("New in history"),
        pl.col("available_spare_percent").alias("Spare %"),
        pl.col("host_written_bytes")
        .map_elements(format_bytes, return_dtype=pl.String)
        .alias("Host written"),
    )
    return Section(
        sentences,
        [
            table(
                view,
                f"The {view.height} drives with the most media errors",
                numeric=["Host written"],
            )
        ],
    )

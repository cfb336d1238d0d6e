"""The drive review's endurance section: write amplification per step and per workload, the
convergence of JESD219's WAF, SMART wear and endurance projected from every source."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from .. import charts, findings
from ..analysis.drive import DriveAnalysis
from ..analysis.endurance import JESD219, Endurance, Projections, drive_endurance
from ..tables import format_bytes, format_number
from .section import Section, table

if TYPE_CHECKING:
    from .compare import Comparison

#: SMART frame columns the section's table shows, and their headers
SMART_SHOWN = {
    "step": "Step",
    "phase": "Phase",
    "host_bytes_written": "Host written",
    "nand_bytes_written": "NAND written",
    "percent_used": "% used",
    "temperature_c": "°C",
    "power_on_hours": "Power-on h",
    "media_errors": "Media errors",
}
#: the columns of a table of endurance projections (``Projections.rows``)
PROJECTION_SHOWN = (
    pl.col("source").alias("Source"),
    pl.col("workload").alias("Workload"),
    pl.col("waf").alias("WAF"),
    pl.col("tbw_bytes").map_elements(format_bytes, return_dtype=pl.String).alias("TBW"),
    pl.col("dwpd").alias("DWPD"),
)


def endurance_section(drive: DriveAnalysis) -> Section:
    """Write amplification per step and workload, SMART wear, endurance projections."""
    results = drive.results
    waf, smart, items = results.waf, results.smart, results.endurance
    figures = drive_endurance(drive)
    projected = figures.projections
    if not (waf.height or smart.height or items.height or projected.rows.height):
        return Section(
            missing="No endurance data: no SMART snapshots were taken around the steps (run "
            "with --smart on a block device) and no drive rating was given (drive.toml), so "
            "write amplification, wear and projections are unknown."
        )
    parts: list[Any] = []
    sentences = findings.endurance(waf, items)
    if waf["waf"].drop_nulls().len():
        parts += _waf_parts(waf, figures)
        sentences += _waf_sentences(figures)
    elif smart.height:
        parts.append(_note("Write amplification unknown: " + _why_no_waf(smart)))
    if smart.height:
        parts.append(_smart_table(smart))
    if items.height:
        parts.append(_items_table(items))
    parts += _projection_parts(projected)
    sentences += _projection_sentences(projected)
    return Section(sentences, parts)


def _note(text: str) -> Any:
    """One line of text between a section's charts and tables."""
    from IPython.display import HTML

    return HTML(f'<p class="ssdlab-missing">{escape(text)}</p>')


def _why_no_waf(smart: pl.DataFrame) -> str:
    if smart["nand_bytes_written"].null_count() == smart.height:
        return (
            "the SMART snapshots hold no NAND bytes written (nvme-cli's OCP C0 log, Intel's "
            "smart-log-add or a vendor SMART attribute report them; this drive gave none)."
        )
    return "no step has SMART snapshots before and after it with host writes between them."


def _waf_parts(waf: pl.DataFrame, figures: Endurance) -> list[Any]:
    by_step = figures.by_step.join(
        waf.select("step_index", "cumulative_waf"), on="step_index", how="left"
    )
    parts: list[Any] = [
        charts.waf(waf.sort("step_index")),
        _waf_table(
            by_step,
            {"step": "Step", "workload": "Workload"},
            {"cumulative_waf": "Cumulative WAF"},
            "Write amplification per step",
        ),
    ]
    workloads = figures.workloads
    if workloads.height:
        parts.append(waf_workloads_chart(workloads))
        parts.append(
            _waf_table(
                workloads,
                {"workload": "Workload", "steps": "Steps"},
                {"last_waf": "WAF of the last step"},
                "Write amplification per workload (NAND / host bytes over its steps)",
            )
        )
    if figures.convergence is not None:
        state = figures.convergence
        segments = figures.by_step.filter(pl.col("workload") == JESD219).height
        parts.append(
            table(
                state.to_table("", rounds_run=segments),
                f"{JESD219} WAF per segment: converged by the SNIA PTS rule "
                f"(last {state.window} segments)?",
            )
        )
    return parts


def _waf_table(
    frame: pl.DataFrame, first: dict[str, str], last: dict[str, str], caption: str
) -> Any:
    """Host and NAND GB written and WAF of each row of ``frame``, after the columns ``first``
    and before ``last`` (column -> header)."""
    return table(
        frame.select(
            *(pl.col(column).alias(header) for column, header in first.items()),
            (pl.col("host_bytes") / 1e9).alias("Host GB"),
            (pl.col("nand_bytes") / 1e9).alias("NAND GB"),
            pl.col("waf").alias("WAF"),
            *(pl.col(column).alias(header) for column, header in last.items()),
        ),
        caption,
    )


def waf_workloads_chart(workloads: pl.DataFrame) -> alt.LayerChart:
    """WAF per workload: over all its steps (bars) and of its last step (points)."""
    data = workloads.select("workload", "waf", "last_waf", "steps")
    x = alt.X(
        "workload:N",
        sort=data["workload"].to_list(),
        title=None,
        axis=charts.axis(labelAngle=-30, labelLimit=220),
    )
    tooltip = [
        alt.Tooltip("workload:N", title="Workload"),
        alt.Tooltip("waf:Q", title="WAF", format=".2f"),
        alt.Tooltip("last_waf:Q", title="WAF of the last step", format=".2f"),
        alt.Tooltip("steps:Q", title="Steps"),
    ]
    bars = (
        alt.Chart(data)
        .mark_bar(color=charts.MUTED)
        .encode(
            x=x, y=alt.Y("waf:Q", title="Write amplification", axis=charts.axis()), tooltip=tooltip
        )
    )
    last = (
        alt.Chart(data)
        .mark_point(filled=True, size=70, color=charts.ACCENT)
        .encode(x=x, y="last_waf:Q", tooltip=tooltip)
    )
    return (bars + last).properties(
        width=charts.WIDTH - 60,
        height=220,
        title="Write amplification per workload (bars) and of its last step (points)",
    )


def _waf_sentences(figures: Endurance) -> list[str]:
    """The spread of WAF over workloads, and whether JESD219's converged."""
    workloads = figures.workloads.sort("waf")
    sentences = []
    if workloads.height >= 2:
        low, high = workloads.row(0, named=True), workloads.row(-1, named=True)
        sentences.append(
            f"Write amplification ranges from {low['waf']:.2f}x ({low['workload']}) to "
            f"{high['waf']:.2f}x ({high['workload']})."
        )
    state = figures.convergence
    if state is not None and state.mean is not None:
        verdict = "converged" if state.steady else "had not converged"
        sentences.append(
            f"{JESD219}: its WAF {verdict} over rounds {state.rounds[0]}-{state.rounds[-1]} "
            f"(average {state.mean:.2f}x; {state.verdict})."
        )
    return sentences


def _smart_table(smart: pl.DataFrame) -> Any:
    view = smart.sort("step_index").select(
        pl.col(c).map_elements(format_bytes, return_dtype=pl.String).alias(name)
        if c.endswith("_bytes_written")
        else pl.col(c).alias(name)
        for c, name in SMART_SHOWN.items()
    )
    return table(view, "SMART before and after each step", numeric=("Host written", "NAND written"))


#: ``item``, ``value`` (bytes as ``3.84 TB``, else a number) and ``unit`` (none for bytes)
#: of endurance items and projection inputs
ITEM_SHOWN = (
    pl.col("item").alias("Item"),
    pl.when(pl.col("unit") == "bytes")
    .then(pl.col("value").map_elements(format_bytes, return_dtype=pl.String))
    .otherwise(pl.col("value").map_elements(format_number, return_dtype=pl.String))
    .alias("Value"),
    pl.when(pl.col("unit") == "bytes").then(pl.lit("")).otherwise("unit").alias("Unit"),
)


def _items_table(items: pl.DataFrame) -> Any:
    view = items.select(*ITEM_SHOWN)
    return table(view, "Endurance: rating and what the SMART counters imply", numeric=("Value",))


def _projection_parts(projected: Projections) -> list[Any]:
    parts: list[Any] = []
    if projected.inputs.height:
        view = projected.inputs.select(*ITEM_SHOWN, pl.col("from").alias("From"))
        parts.append(table(view, "What the projections start from", numeric=("Value",)))
    rows = projected.rows
    if rows.height:
        view = rows.select(*PROJECTION_SHOWN, pl.col("assumptions").alias("Assumptions"))
        parts.append(
            table(
                view,
                "Projected endurance over the warranty, per source and workload",
                numeric=("TBW",),
            )
        )
    if projected.missing:
        view = pl.DataFrame(
            list(projected.missing.items()),
            schema=["Source", "Not projected because"],
            orient="row",
        )
        parts.append(table(view, "Sources without a projection"))
    return parts


def _projection_sentences(projected: Projections) -> list[str]:
    """The range of projected TBW over the sources, for JESD219, else the run's writes."""
    rows = projected.rows
    for workload in (JESD219, "the run's writes"):
        chosen = rows.filter(pl.col("workload") == workload)
        if chosen.height:
            low, high = (
                format_number(v / 1e12)
                for v in (chosen["tbw_bytes"].min(), chosen["tbw_bytes"].max())
            )
            span = f"{low} TBW" if low == high else f"{low} to {high} TBW"
            sources = ", ".join(chosen["source"].unique(maintain_order=True))
            years = format_number(chosen["warranty_years"][0])
            return [f"Projected endurance under {workload}: {span} over {years} years ({sources})."]
    return []


def compare_endurance_section(cmp: Comparison) -> Section:
    """Write amplification per workload and the projections for JESD219 (else each run's
    writes), drive by drive: each drive's own rating (its drive.toml) and SMART."""
    frames = []
    for drive, name in zip(cmp.analysis.drives, cmp.names, strict=True):
        figures = drive_endurance(drive)
        frames.append(
            (
                figures.workloads.with_columns(drive=pl.lit(name)),
                figures.projections.rows.with_columns(drive=pl.lit(name)),
            )
        )
    workloads = pl.concat([w for w, _ in frames])
    projected = pl.concat([p for _, p in frames])
    if not (workloads.height or projected.height):
        return Section(
            missing="No endurance data: no drive has SMART snapshots around its steps with "
            "NAND bytes written, and none has a drive rating (drive.toml)."
        )
    parts: list[Any] = []
    if workloads.height:
        parts.append(compare_waf_chart(workloads))
        wide = workloads.pivot(on="drive", index="workload", values="waf", maintain_order=True)
        parts.append(
            table(wide.rename({"workload": "Workload"}), "Write amplification per workload")
        )
    chosen = projected.filter(
        pl.col("workload").is_in([JESD219, f"{JESD219} (the rating's)", "the run's writes"])
    )
    if chosen.height:
        view = chosen.select(pl.col("drive").alias("Drive"), *PROJECTION_SHOWN)
        parts.append(
            table(
                view,
                "Projected endurance per drive and source (assumptions: each drive's review)",
                numeric=("TBW",),
            )
        )
    return Section(parts=parts)


def compare_waf_chart(workloads: pl.DataFrame) -> alt.Chart:
    """WAF per workload, one bar per drive."""
    return (
        alt.Chart(workloads.select("drive", "workload", "waf"))
        .mark_bar()
        .encode(
            x=alt.X("workload:N", title=None, axis=charts.axis(labelAngle=-30, labelLimit=220)),
            xOffset="drive:N",
            y=alt.Y("waf:Q", title="Write amplification", axis=charts.axis()),
            color=alt.Color("drive:N", title="Drive"),
            tooltip=[
                alt.Tooltip("drive:N", title="Drive"),
                alt.Tooltip("workload:N", title="Workload"),
                alt.Tooltip("waf:Q", title="WAF", format=".2f"),
            ],
        )
        .properties(width=charts.WIDTH - 60, height=220, title="Write amplification per workload")
    )

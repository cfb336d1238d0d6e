"""Comparison sections: several runs' scores ranked and their sweeps overlaid.

Each section takes a :class:`Comparison` (loaded runs, display names, the subject drive) and
returns a :class:`~.section.Section`; the notebook ``drive_comparison`` shows them in the
order of :data:`SECTIONS`. The figures come from :class:`~ssdlab.analysis.ComparisonAnalysis`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from .. import charts, findings
from ..analysis.compare import CONDITIONS as CONDITION_NAMES
from ..analysis.compare import ComparisonAnalysis, same_runs
from ..analysis.drive import DriveAnalysis
from ..analysis.latency import percentile_curves
from ..analysis.repeats import percentile_intervals
from ..errors import InputError
from ..manifest import Manifest
from ..results import Results, load
from ..tables import UNKNOWN, latency_in, latency_unit
from ..units import format_capacity
from . import act_findings
from . import endurance as endurance_views
from . import latency as latency_views
from . import load as load_views
from .section import Registry, Section, table

NOTEBOOK = "drive_comparison"
SECTIONS = Registry(NOTEBOOK)


def _device(manifest: Manifest) -> dict[str, Any]:
    return (manifest.target.device or {}) if manifest.target else {}


def display_names(manifests: Sequence[Manifest]) -> list[str]:
    """A unique name per run: its label, with the firmware, host or run id added (the first
    of these that tells the runs apart) where labels repeat."""
    names = [m.label for m in manifests]
    describe = (
        lambda m: _device(m).get("firmware"),
        lambda m: m.host.hostname if m.host else None,
        lambda m: m.run_id,
    )
    for label in sorted({n for n in names if names.count(n) > 1}):
        group = [i for i, n in enumerate(names) if n == label]
        for attribute in describe:
            values = [attribute(manifests[i]) for i in group]
            if None not in values and len(set(values)) == len(values):
                break
        else:
            values = [f"#{n}" for n in range(1, len(group) + 1)]
        for i, value in zip(group, values, strict=True):
            names[i] = f"{label} ({value})"
    return names


def check_subject(names: list[str], subject: str | None) -> str:
    """The display name to highlight: ``subject``, checked, or the first run's."""
    if subject is None:
        return names[0]
    if subject not in names:
        raise InputError(f"subject {subject!r} is none of the compared drives: {', '.join(names)}")
    return subject


@dataclass(eq=False)
class Comparison:
    """Several loaded results directories, named for display, with the subject drive;
    ``like_for_like`` (the default) compares only cells whose workload parameters are equal."""

    runs: list[Results]
    names: list[str]
    subject: str
    like_for_like: bool = True

    @cached_property
    def analysis(self) -> ComparisonAnalysis:
        """The runs' figures and scores."""
        return ComparisonAnalysis(
            [DriveAnalysis(r) for r in self.runs], self.names, self.subject, self.like_for_like
        )

    def ranked(self, test: str) -> alt.LayerChart:
        """The ranked bar chart of one test."""
        rows = self.analysis.scores.filter(pl.col("test") == test)
        first = rows.row(0, named=True)
        unit = "µs" if first["metric"] == "ns" else first["metric"]
        title = f"{test} ({unit})" if unit else test
        return charts.ranked_bars(
            rows, title, first["metric"], first["higher_is_better"], self.subject
        )

    def group(self, group: str) -> tuple[list[str], list[str]]:
        """Tests of a score group and the findings comparing the drives in them."""
        rows = self.analysis.scores.filter(pl.col("group") == group)
        return rows["test"].unique(maintain_order=True).to_list(), findings.leads(rows)

    @cached_property
    def warnings(self) -> list[str]:
        """What is not like for like: the runs' differing parameters, a run compared with
        itself, and parameters imported runs did not record."""
        found = findings.like_for_like(d.as_dict() for d in self.analysis.differences)
        repeated = same_runs(self.runs)
        if repeated:
            found.insert(
                0,
                f"Not like for like: run {', '.join(repeated)} is compared with itself "
                "(the same results directory given twice); its figures are not a second drive.",
            )
        return found


def load_comparison(
    results_dirs: Sequence[str | Path], subject: str | None = None, like_for_like: bool = True
) -> Comparison:
    """Load results directories for a comparison; ``subject`` (a display name, default the
    first run) is highlighted and is the reference the other drives are compared with;
    ``like_for_like=False`` also compares cells whose workload parameters differ."""
    runs = [load(Path(d)) for d in results_dirs]
    names = display_names([r.manifest for r in runs])
    return Comparison(runs, names, check_subject(names, subject), like_for_like)


def _warning_box(sentences: Sequence[str]) -> Any:
    """The like-for-like warnings as a visible box."""
    from IPython.display import HTML

    shown = [s.removeprefix("Not like for like: ") for s in sentences]
    items = "".join(f"<li>{html.escape(s[:1].upper() + s[1:])}</li>" for s in shown)
    return HTML(
        '<div class="ssdlab-warning" role="alert" style="border-left: 4px solid #c2410c; '
        'background: #fff7ed; padding: 0.6em 1em; margin: 0.8em 0;">'
        "<strong>Warning: these runs are not entirely like for like.</strong>"
        f"<ul>{items}</ul></div>"
    )


@SECTIONS
def compare_drives_section(cmp: Comparison) -> Section:
    """Who is compared: identity, host, suite and source of every run."""
    rows = []
    for results, name in zip(cmp.runs, cmp.names, strict=True):
        m, device = results.manifest, _device(results.manifest)
        hosts = (
            m.host.hostname
            if m.host
            else ", ".join(results.summary["hostname"].drop_nulls().unique().sort().to_list())
            if "hostname" in results.summary.columns
            else None
        ) or UNKNOWN
        rows.append(
            (
                name + (" (subject)" if name == cmp.subject else ""),
                device.get("model"),
                device.get("firmware"),
                format_capacity(device["size_bytes"]) if device.get("size_bytes") else None,
                hosts,
                m.suite,
                "import" if m.source == "import" else "ssdlab run",
                f"{m.started:%Y-%m-%d}" if m.started else None,
                m.fio_version or None,
            )
        )
    frame = pl.DataFrame(
        rows,
        schema=["Drive", "Model", "Firmware", "Capacity", "Host", "Suite", "Source", "Date", "fio"],
        orient="row",
    )
    return Section(parts=[table(frame, "Compared runs")])


@SECTIONS
def compare_like_for_like_section(cmp: Comparison) -> Section:
    """Whether the drives ran like for like: suite, scale, settings and the workload
    parameters of their measured cells side by side, and a warning naming what differs."""
    params = cmp.analysis.parameters
    sentences = findings.unknown_parameters(cmp.analysis.unknown)
    parts: list[Any] = []
    if cmp.warnings:
        parts.append(_warning_box(cmp.warnings))
    elif params.height:
        sentences.insert(
            0,
            "Like for like: every drive ran with the same suite, duration scale, settings "
            "and workload parameters where they were recorded.",
        )
    if not cmp.like_for_like:
        sentences.insert(
            0,
            "Every cell is compared, also where the workload parameters differ "
            "(like_for_like = False): read the differences below before the rankings.",
        )
    if params.height:
        view = params.select(
            pl.col("drive").alias("Drive"),
            pl.col("suite").alias("Suite"),
            pl.col("scale").alias("Scale"),
            pl.col("settings").alias("Settings (--set)"),
            pl.col("target").alias("Target"),
            pl.col("span_bytes").alias("LBA span"),
            pl.col("ioengine").alias("ioengine"),
            pl.col("planned_runtime_s").alias("Runtime"),
            pl.col("planned_ramp_s").alias("Ramp"),
            pl.col("direct").alias("Direct"),
            pl.col("fio_options").alias("fio options"),
        )
        parts.append(table(view, "What each drive ran with (over its measured steps)"))
    excluded = cmp.analysis.excluded
    if excluded.height:
        view = excluded.select(
            pl.col("label").alias("Drive"),
            pl.col("cell").alias("Left out"),
            pl.col("differs")
            .list.eval(pl.element().replace_strict(CONDITION_NAMES, default=pl.element()))
            .list.join(", ")
            .alias("Differs from " + cmp.subject + " in"),
            pl.col("reference").alias("Matched to"),
        )
        parts.append(table(view, "Measurements left out: their workload parameters differ"))
    return Section(sentences, parts)


@SECTIONS
def compare_summary_section(cmp: Comparison, limit: int = 6) -> Section:
    """The subject's largest wins and deficits against each rival, every test as a share of
    the best, and the numbers."""
    scores = cmp.analysis.scores
    warnings = cmp.warnings[:1]
    if warnings and len(cmp.warnings) > 1:
        warnings = [
            warnings[0].removesuffix(".")
            + f" (and {findings.count(len(cmp.warnings) - 1, 'more difference')}: see Like "
            "for like)."
        ]
    if not scores.height:
        nothing = "Nothing to compare: no test was run by two or more drives like for like."
        return Section([*warnings, nothing]) if warnings else Section(missing=nothing)
    unit = latency_unit(scores.filter(pl.col("metric") == "ns")["value"])

    def written(row: dict[str, Any]) -> str:
        """A cell in its metric's unit; every latency of the table in one unit."""
        if row["metric"] == "ns":
            return latency_in(row["value"], unit)
        return findings.format_value(row["value"], row["metric"])

    shown = scores.with_columns(
        shown=pl.struct("value", "metric").map_elements(written, return_dtype=pl.String)
    )
    wide = shown.pivot(on="drive", index="test", values="shown", sort_columns=False).rename(
        {"test": "Test"}
    )
    present = [n for n in cmp.names if n in wide.columns]
    parts = [
        charts.score_matrix(shown, present),
        table(wide.select("Test", *present), "Every test, every drive", numeric=present),
    ]
    sentences = [
        *warnings,
        *findings.rivals(cmp.analysis.rivals(), cmp.subject),
        *findings.leads(scores)[:limit],
    ]
    return Section(sentences, parts)


@SECTIONS
def compare_qd_section(cmp: Comparison) -> Section:
    """Overlaid QD sweeps with the peak over the shared queue depths ranked, per workload."""
    tests, sentences = cmp.group("qd")
    if not tests:
        return Section(
            missing="No queue-depth sweep to compare: two or more drives need the same "
            "workload measured like for like at two or more of the same queue depths."
        )
    scores = cmp.analysis.scores.filter(pl.col("group") == "qd")
    parts: list[Any] = []
    for (workload,), rows in cmp.analysis.qd.group_by("workload", maintain_order=True):
        mine = scores.filter(pl.col("workload") == workload)["test"].unique().to_list()
        if not mine:
            continue
        parts.append(
            charts.qd_scaling(
                rows, f"{workload}: throughput and latency by queue depth", cmp.subject, cmp.names
            )
        )
        parts += [cmp.ranked(t) for t in mine]
    return Section(sentences, parts)


def _mix_section(cmp: Comparison, pattern: str) -> Section:
    """Overlaid mix sweeps with the mixed point nearest 70/30 and the average over the read
    shares every drive measured ranked, per sweep."""
    mixes = cmp.analysis.mixes
    steps = mixes.steps.filter(pl.col("pattern") == pattern) if mixes.steps.height else None
    scores = cmp.analysis.scores.filter(pl.col("group") == "mix")
    if steps is None or not steps.height or not scores.height:
        return Section(
            missing=f"No {pattern} mix sweep to compare: two or more drives need the same "
            f"{pattern} mix sweep, measured like for like."
        )
    parts: list[Any] = []
    shown = []
    for (sweep,), rows in steps.group_by("sweep", maintain_order=True):
        mine = scores.filter(pl.col("workload") == sweep)["test"].unique(maintain_order=True)
        if not mine.len():
            continue
        shown += mine.to_list()
        chart = charts.mix_sweep(
            rows.with_columns(series=pl.col("label")),
            mixes.sweeps.filter(pl.col("sweep") == sweep).with_columns(series=pl.col("label")),
            findings.sweep_phrase(sweep),
            cmp.subject,
            cmp.names,
        )
        parts.append(chart)
        parts += [cmp.ranked(t) for t in mine]
    if not parts:
        return Section(missing=f"No {pattern} mix sweep to compare.")
    return Section(findings.leads(scores.filter(pl.col("test").is_in(shown))), parts)


@SECTIONS
def compare_random_mix_section(cmp: Comparison) -> Section:
    """Random mix sweeps compared (see :func:`_mix_section`)."""
    return _mix_section(cmp, "random")


@SECTIONS
def compare_sequential_mix_section(cmp: Comparison) -> Section:
    """Sequential mix sweeps compared (see :func:`_mix_section`)."""
    return _mix_section(cmp, "sequential")


@SECTIONS
def compare_latency_section(cmp: Comparison) -> Section:
    """Percentile curves overlaid and the p99.99 ranked, at the lowest common QD."""
    tests, sentences = cmp.group("latency")
    if not tests:
        return Section(
            missing="No latency test to compare: two or more drives need the same small-block "
            "workload at the same queue depth, measured like for like."
        )
    qd, scores = cmp.analysis.qd, cmp.analysis.scores
    parts: list[Any] = []
    for test in tests:
        rows = scores.filter(pl.col("test") == test)
        curves, intervals = [], []
        for drive, name in zip(cmp.analysis.drives, cmp.names, strict=True):
            step = rows.filter(pl.col("drive") == name)["step_index"]
            if not step.len() or not drive.results.latency_hist.height:
                continue
            direction = qd.filter((pl.col("label") == name) & (pl.col("step_index") == step[0]))[
                "direction"
            ][0]
            chosen = drive.steps.filter(
                (pl.col("step_index") == step[0]) & (pl.col("direction") == direction)
            ).with_columns(series=pl.lit(name))
            curves.append(
                percentile_curves(
                    drive.results.latency_hist, chosen.select("step_index", "direction", "series")
                )
            )
            intervals.append(percentile_intervals(chosen, drive.every_repeat))
        if sum(c.height for c in curves):
            chart = charts.latency_percentiles(pl.concat(curves), cmp.names, pl.concat(intervals))
            what = test.removeprefix("p99.99 latency of ")
            parts.append(chart.properties(title=f"{what}: latency percentiles"))
        parts.append(cmp.ranked(test))
    return Section(sentences, parts)


compare_load_section = SECTIONS(load_views.compare_load_section)
compare_exceedance_section = SECTIONS(latency_views.compare_exceedance_section)
compare_latency_over_time_section = SECTIONS(latency_views.compare_latency_over_time_section)


@SECTIONS
def compare_other_section(cmp: Comparison) -> Section:
    """Single-point tests (no sweep) ranked."""
    tests, sentences = cmp.group("point")
    if not tests:
        return Section(
            missing="No other common test: every workload two or more drives ran like for "
            "like is part of a sweep."
        )
    return Section(sentences, [cmp.ranked(t) for t in tests])


@SECTIONS
def compare_consistency_section(cmp: Comparison) -> Section:
    """Per-second IOPS of each drive's consistency run overlaid; tail averages ranked."""
    tests, sentences = cmp.group("consistency")
    if not tests:
        return Section(
            missing="No consistency run to compare: two or more drives need a long random-"
            "write run with per-second IOPS, of the same workload and parameters."
        )
    series = pl.concat(
        [
            run.series.with_columns(series=pl.lit(name))
            for name, run in cmp.analysis.consistency.items()
        ]
    )
    return Section(
        sentences,
        [charts.consistency_overlay(series, cmp.subject), *(cmp.ranked(t) for t in tests)],
    )


@SECTIONS
def compare_act_endurance_section(cmp: Comparison) -> Section:
    """ACT scores (highest passing load) and worst-slice exceedances at shared loads, and
    write amplification, ranked."""
    act_tests, _ = cmp.group("act")
    waf_tests, waf_sentences = cmp.group("endurance")
    act_scores, exceedances = cmp.analysis.act
    if not act_tests and not waf_tests and act_scores.height < 2:
        return Section(
            missing="No ACT score or write amplification to compare: two or more drives need "
            "ACT trials or SMART snapshots."
        )
    sentences = act_findings.act_comparison(act_scores, exceedances)
    return Section(sentences + waf_sentences, [cmp.ranked(t) for t in (*act_tests, *waf_tests)])


compare_endurance_section = SECTIONS(endurance_views.compare_endurance_section)

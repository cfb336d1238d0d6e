"""Comparison sections: several runs' scores ranked and their sweeps overlaid.

Each section takes a :class:`Comparison` (loaded runs, display names, the subject drive) and
returns a :class:`~.section.Section`; the notebook ``drive_comparison`` shows them in the
order of :data:`SECTIONS`. The figures come from :class:`~ssdlab.analysis.ComparisonAnalysis`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from .. import charts, findings
from ..analysis.compare import ComparisonAnalysis, mix_tests
from ..analysis.drive import DriveAnalysis
from ..analysis.latency import percentile_curves
from ..errors import InputError
from ..manifest import Manifest
from ..results import Results, load
from ..tables import format_bytes
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
    """Several loaded results directories, named for display, with the subject drive."""

    runs: list[Results]
    names: list[str]
    subject: str

    @cached_property
    def analysis(self) -> ComparisonAnalysis:
        """The runs' figures and scores."""
        return ComparisonAnalysis([DriveAnalysis(r) for r in self.runs], self.names)

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


def load_comparison(results_dirs: Sequence[str | Path], subject: str | None = None) -> Comparison:
    """Load results directories for a comparison; ``subject`` (a display name, default the
    first run) is highlighted."""
    runs = [load(Path(d)) for d in results_dirs]
    names = display_names([r.manifest for r in runs])
    return Comparison(runs, names, check_subject(names, subject))


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
        )
        rows.append(
            (
                name + (" (subject)" if name == cmp.subject else ""),
                device.get("model"),
                device.get("firmware"),
                format_bytes(device["size_bytes"]) if device.get("size_bytes") else None,
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
def compare_summary_section(cmp: Comparison, limit: int = 8) -> Section:
    """The largest leads, every test as a share of the best, and the numbers."""
    scores = cmp.analysis.scores
    if not scores.height:
        return Section(missing="Nothing to compare: no test was run by two or more drives.")
    shown = scores.with_columns(
        shown=pl.struct("value", "metric").map_elements(
            lambda r: findings.format_value(r["value"], r["metric"]), return_dtype=pl.String
        )
    )
    wide = shown.pivot(on="drive", index="test", values="shown", sort_columns=False).rename(
        {"test": "Test"}
    )
    present = [n for n in cmp.names if n in wide.columns]
    parts = [
        charts.score_matrix(shown, present),
        table(wide.select("Test", *present), "Every test, every drive", numeric=present),
    ]
    return Section(findings.leads(scores)[:limit], parts)


@SECTIONS
def compare_qd_section(cmp: Comparison) -> Section:
    """Overlaid QD sweeps with the peak ranked, per workload."""
    tests, sentences = cmp.group("qd")
    if not tests:
        return Section(
            missing="No queue-depth sweep to compare: two or more drives need the same "
            "workload measured at several queue depths."
        )
    parts: list[Any] = []
    for (workload,), rows in cmp.analysis.qd.group_by("workload", maintain_order=True):
        test = f"{workload} (peak)"
        if test not in tests:
            continue
        parts.append(
            charts.qd_scaling(
                rows, f"{workload}: throughput and latency by queue depth", cmp.subject, cmp.names
            )
        )
        parts.append(cmp.ranked(test))
    return Section(sentences, parts)


def _mix_section(cmp: Comparison, pattern: str) -> Section:
    """Overlaid mix sweeps with the 70/30 point and the average ranked, per sweep."""
    mixes = cmp.analysis.mixes
    steps = mixes.steps.filter(pl.col("pattern") == pattern) if mixes.steps.height else None
    tests, _ = cmp.group("mix")
    if steps is None or not steps.height or not tests:
        return Section(
            missing=f"No {pattern} mix sweep to compare: two or more drives need the same "
            f"{pattern} mix sweep."
        )
    parts: list[Any] = []
    shown = []
    for (sweep,), rows in steps.group_by("sweep", maintain_order=True):
        mine = [t for t in mix_tests(sweep) if t in tests]
        if not mine:
            continue
        shown += mine
        parts.append(
            charts.mix_sweep(
                rows.with_columns(series=pl.col("label")),
                mixes.sweeps.filter(pl.col("sweep") == sweep).with_columns(series=pl.col("label")),
                f"{sweep} mixes",
                cmp.subject,
                cmp.names,
            )
        )
        parts += [cmp.ranked(t) for t in mine]
    if not parts:
        return Section(missing=f"No {pattern} mix sweep to compare.")
    scores = cmp.analysis.scores
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
            "workload at the same queue depth."
        )
    qd, scores = cmp.analysis.qd, cmp.analysis.scores
    parts: list[Any] = []
    for test in tests:
        rows = scores.filter(pl.col("test") == test)
        curves = []
        for results, name in zip(cmp.runs, cmp.names, strict=True):
            step = rows.filter(pl.col("drive") == name)["step_index"]
            if not step.len() or not results.latency_hist.height:
                continue
            direction = qd.filter((pl.col("label") == name) & (pl.col("step_index") == step[0]))[
                "direction"
            ][0]
            chosen = pl.DataFrame(
                {"step_index": [step[0]], "direction": [direction], "series": [name]}
            )
            curves.append(percentile_curves(results.latency_hist, chosen))
        if sum(c.height for c in curves):
            chart = charts.latency_percentiles(pl.concat(curves), cmp.names)
            parts.append(
                chart.properties(
                    title=f"{test.removesuffix(' p99.99 latency')}: latency percentiles"
                )
            )
        parts.append(cmp.ranked(test))
    return Section(sentences, parts)


@SECTIONS
def compare_other_section(cmp: Comparison) -> Section:
    """Single-point tests (no sweep) ranked."""
    tests, sentences = cmp.group("point")
    if not tests:
        return Section(missing="No other common test: every shared workload is part of a sweep.")
    return Section(sentences, [cmp.ranked(t) for t in tests])


@SECTIONS
def compare_consistency_section(cmp: Comparison) -> Section:
    """Per-second IOPS of each drive's consistency run overlaid; tail averages ranked."""
    tests, sentences = cmp.group("consistency")
    if not tests:
        return Section(
            missing="No consistency run to compare: two or more drives need a long random-"
            "write run with per-second IOPS."
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
    """ACT scores and write amplification ranked."""
    act_tests, act_sentences = cmp.group("act")
    waf_tests, waf_sentences = cmp.group("endurance")
    if not act_tests and not waf_tests:
        return Section(
            missing="No ACT score or write amplification to compare: two or more drives need "
            "ACT trials or SMART snapshots."
        )
    return Section(act_sentences + waf_sentences, [cmp.ranked(t) for t in (*act_tests, *waf_tests)])

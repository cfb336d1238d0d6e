"""The QoS-targets section: a run's steps judged against a QoS profile (:mod:`ssdlab.qos`),
as a table of verdicts and the failures in words; the table ``ssdlab qos check`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis.drive import DriveAnalysis
from ..findings import count, format_value
from ..qos.judge import FAIL, NO_STEP, PASS, UNKNOWN, judge, matched
from ..qos.profile import Profile, builtin_profiles, load_profile
from ..tables import BEYOND_MARK, format_percentile, latency_cells, latency_in, table_latency_unit
from .section import Section, table

#: failures the findings name one by one; the rest are counted
FAILURES_NAMED = 6


@dataclass(eq=False)
class QosReview:
    """A drive review and the QoS profile it is judged against (None: none given): the
    subject of the drive review's QoS section."""

    drive: DriveAnalysis
    profile: str | Path | Profile | None = None


def _measure(value: float | None, unit: str, latency_unit: str | None = None) -> str:
    if value is None or value != value:
        return "–"
    if unit == "ns":
        return latency_in(value, latency_unit)
    return format_value(value, unit)


def limit_text(row: dict[str, Any], latency_unit: str | None = None) -> str:
    """``p99.99 ≤ 2.5 ms``, ``max ≤ 10 ms``, ``≥ 1,000 IOPS per TB``, ``over 1 ms < 5.00 %
    per slice``; latencies in ``latency_unit`` when given (a table's one unit)."""
    limit = _measure(row["limit"], row["unit"], latency_unit)
    comparison = row["comparison"]
    if row["unit"] == "ns":
        return f"{row['limit_name']} {comparison} {limit}"
    if row["unit"] == "%":
        return f"{row['limit_name']} {comparison} {limit} per slice"
    return f"{comparison} {limit}"


def measured_text(row: dict[str, Any], latency_unit: str | None = None) -> str:
    """The measured value; a percentile with the I/Os beyond it (:func:`format_percentile`);
    latencies in ``latency_unit`` when given."""
    if row["percentile"] is not None and row["measured"] is not None:
        return format_percentile(
            row["measured"], row["percentile"], row["ios"], lambda v: latency_in(v, latency_unit)
        )
    return _measure(row["measured"], row["unit"], latency_unit)


def verdict_view(verdicts: pl.DataFrame) -> pl.DataFrame:
    """The verdicts as a table for people: Target, Step, Dir, Limit, Measured, Verdict,
    Note (every cell text)."""
    latencies = verdicts.filter(pl.col("unit") == "ns")
    unit = table_latency_unit(
        latencies.select(limit=latency_cells("limit"), measured=latency_cells("measured"))
    )
    rows = []
    for row in verdicts.iter_rows(named=True):
        if row["verdict"] == NO_STEP:
            rows.append((row["target"], NO_STEP, "", "", "", "–", ""))
            continue
        rows.append(
            (
                row["target"],
                row["step"],
                row["direction"] or "all",
                limit_text(row, unit),
                measured_text(row, unit),
                row["verdict"],
                row["note"] or "",
            )
        )
    schema = ["Target", "Step", "Dir", "Limit", "Measured", "Verdict", "Note"]
    return pl.DataFrame(rows, schema=schema, orient="row")


def verdict_findings(profile: Profile, verdicts: pl.DataFrame) -> list[str]:
    """How the run fares against the profile, then each failure in words (``4K random read
    at QD1 fails p99.99 ≤ 2.5 ms: 7.7 ms.``), the limits that could not be judged (the
    exceedance limits of a step whose histogram logs cover too few of its I/Os in one
    sentence per step), and the percentiles that are the maximum."""
    judged = verdicts.filter(pl.col("verdict") != NO_STEP)
    tally = {v: judged.filter(pl.col("verdict") == v).height for v in (PASS, FAIL, UNKNOWN)}
    steps = judged["step"].n_unique()
    verdict = "passes" if tally[PASS] == judged.height else "does not pass"
    sentences = [
        f"The run {verdict} QoS profile {profile.name}: {tally[PASS]} of "
        f"{count(judged.height, 'limit')} met on {count(steps, 'step')}"
        + (f", {tally[FAIL]} failed" if tally[FAIL] else "")
        + (f", {tally[UNKNOWN]} could not be judged" if tally[UNKNOWN] else "")
        + "."
    ]
    failed = judged.filter(pl.col("verdict") == FAIL).to_dicts()
    for row in failed[:FAILURES_NAMED]:
        sentences.append(
            f"{row['step']} fails {limit_text(row)}: {_measure(row['measured'], row['unit'])}."
        )
    if len(failed) > FAILURES_NAMED:
        sentences.append(
            f"{count(len(failed) - FAILURES_NAMED, 'more limit')} failed (see the table)."
        )
    unknown = judged.filter(pl.col("verdict") == UNKNOWN)
    # unknown though measured: slices of histogram logs that cover too few of the I/Os
    logged = pl.col("measured").is_not_null() & pl.col("coverage_pct").is_not_null()
    for (step, pct), rows in unknown.filter(logged).group_by(
        "step", "coverage_pct", maintain_order=True
    ):
        sentences.append(
            f"{step}: exceedance not judged on {count(rows.height, 'limit')}: no logged slice "
            f"fails, but its histogram logs hold only {pct:.1f} % of its I/Os (a log missing "
            "or cut short, or a short step: fio never logs the last partial interval)."
        )
    for row in unknown.filter(~logged).unique("note", maintain_order=True).to_dicts():
        sentences.append(f"{row['step']}: {limit_text(row)} could not be judged: {row['note']}.")
    thin = judged.filter(pl.col("samples_beyond") < 1)
    if thin.height:
        sentences.append(
            f"{count(thin.height, 'percentile')} ({BEYOND_MARK}) had fewer than one I/O "
            "beyond: each is the slowest I/O measured, not the percentile, which needs a "
            "longer run."
        )
    no_step = verdicts.filter(pl.col("verdict") == NO_STEP)["target"].to_list()
    if no_step:
        targets = "target" if len(no_step) == 1 else "targets"
        sentences.append(f"No step matched the {targets} {', '.join(no_step)}.")
    return sentences


def qos_section(drive: DriveAnalysis, profile: str | Path | Profile | None) -> Section:
    """The steps judged against ``profile`` (a built-in name, a file or a :class:`Profile`):
    findings and the table of verdicts; one line when no profile is given or no step
    matches any of its targets."""
    if profile is None:
        return Section(
            missing="No QoS profile given: render the review with ssdlab report --qos "
            f"NAME|FILE (built-in: {', '.join(builtin_profiles())}) to judge each workload "
            "against latency, throughput and exceedance targets.",
            asked=False,
        )
    profile = load_profile(profile)
    verdicts = judge(drive, profile)
    if not matched(verdicts):
        return Section(
            missing=f"No step matches any target of QoS profile {profile.name} "
            f"({', '.join(profile.target_names())})."
        )
    caption = f"QoS profile {profile.name}: {profile.description}"
    parts = [table(verdict_view(verdicts), caption, numeric=("Measured",))]
    return Section(verdict_findings(profile, verdicts), parts)

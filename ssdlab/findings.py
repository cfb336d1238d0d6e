"""Findings: plain sentences written from the data, the way a review states its results.

Each function takes the figures a report section computed (frames or dataclasses whose names
carry units) and returns sentences; none of them reads files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from .analysis import Consistency
from .tables import format_bw, format_duration, format_iops, format_latency, format_number


def format_value(value: float, metric: str) -> str:
    """A throughput, latency or other figure with its unit, by the metric's name."""
    if metric == "IOPS":
        return format_iops(value)
    if metric == "MB/s":
        return format_bw(value * 1e6)
    if metric == "ns":
        return format_latency(value)
    if metric == "x":
        return f"{value:g}x"
    return f"{value:,.3g} {metric}".rstrip()


def _rounds(rounds: list[int]) -> str:
    return f"rounds {rounds[0]}-{rounds[-1]}" if rounds else "no rounds"


def steady_state(determination: Mapping[str, Any], rounds: list[int], what: str) -> str:
    """``Steady state after 7 rounds: ...`` for one round block's determination."""
    ran = determination["rounds_run"]
    mean = determination.get("mean")
    if not determination["steady"]:
        return f"{what} was not steady after {ran} rounds: {determination['reason']}."
    data = 100 * determination["data_excursion"] / mean
    slope = 100 * determination["slope_excursion"] / mean
    return (
        f"{what} reached steady state after {ran} rounds: {_rounds(rounds)} average "
        f"{mean:,.0f}, with a data excursion of {data:.1f} % (limit 20 %) and a slope "
        f"excursion of {slope:.1f} % (limit 10 %)."
    )


def consistency(what: str, figures: Consistency) -> str:
    """Tail score of a consistency run: average, spread and the slow seconds."""
    tail = format_duration(figures.end_s - figures.start_s + 1)
    spread = figures.iops_stddev / figures.iops_mean if figures.iops_mean else 0.0
    return (
        f"{what}: over the last {tail} ({figures.windows} one-second windows) it averages "
        f"{format_iops(figures.iops_mean)} with a standard deviation of {100 * spread:.1f} % "
        f"(average / standard deviation = {figures.mean_over_stddev:,.1f}); 99 % of the "
        f"seconds stay above {format_iops(figures.iops_p1)}."
    )


def qd_scaling(points: pl.DataFrame) -> list[str]:
    """Per workload, the lowest QD reaching 95 % of the peak, and the peak.

    ``points``: one row per workload and QD with ``workload``, ``qd``, ``qd_label``,
    ``value``, ``metric``, ``clat_p99_ns``, ``at_95`` (the 95 % point) and optionally
    ``efficiency`` and ``efficiency_metric``.
    """
    sentences = []
    for (workload,), rows in points.group_by("workload", maintain_order=True):
        peak = rows.sort("value", "qd", descending=[True, False]).row(0, named=True)
        marked = rows.filter(pl.col("at_95"))
        if not marked.height:
            continue
        at = marked.row(0, named=True)
        figures = f"{format_value(at['value'], at['metric'])}, p99 latency " + format_latency(
            at["clat_p99_ns"]
        )
        if at.get("efficiency") is not None:
            figures += f", {at['efficiency']:,.0f} {at['efficiency_metric']}"
        if at["qd"] < peak["qd"]:
            sentences.append(
                f"{workload} reaches 95 % of its peak throughput at {at['qd_label']} "
                f"({figures}); the peak is {format_value(peak['value'], peak['metric'])} at "
                f"{peak['qd_label']}."
            )
        else:
            sentences.append(
                f"{workload} peaks at {peak['qd_label']} ({figures}); lower queue depths stay "
                "below 95 % of it."
            )
    return sentences


def mix_sweeps(sweeps: pl.DataFrame) -> list[str]:
    """Per sweep: the 70/30 point, the sweep average and the lowest point.

    ``sweeps``: one row per sweep with ``sweep``, ``metric``, ``avg``, ``at_70_30`` (null when
    the sweep has no 70 % step), ``low``, ``low_read_pct`` and ``steps``.
    """
    sentences = []
    for row in sweeps.iter_rows(named=True):
        avg, low = (format_value(row[k], row["metric"]) for k in ("avg", "low"))
        head = f"{row['sweep']} mix"
        if row["at_70_30"] is not None:
            head += f" reaches {format_value(row['at_70_30'], row['metric'])} at 70/30"
        sentences.append(
            f"{head} and averages {avg} over {row['steps']} read shares; its lowest point is "
            f"{low} at {row['low_read_pct']} % reads."
        )
    return sentences


def latency_qos(table: pl.DataFrame, limit: int = 4) -> list[str]:
    """Per series (first ``limit``): p99, p99.99 and the slowest I/O.

    ``table``: ``series``, ``clat_p99_ns``, ``clat_p99_99_ns``, ``clat_max_ns``.
    """
    return [
        f"{row['series']}: 99 % of I/Os complete within {format_latency(row['clat_p99_ns'])}, "
        f"99.99 % within {format_latency(row['clat_p99_99_ns'])}; the slowest took "
        f"{format_latency(row['clat_max_ns'])}."
        for row in table.head(limit).iter_rows(named=True)
        if None not in (row["clat_p99_ns"], row["clat_p99_99_ns"], row["clat_max_ns"])
    ]


def power(steps: pl.DataFrame) -> list[str]:
    """Range of average power, best efficiency, steps without coverage.

    ``steps``: the ``power`` frame's columns with ``label`` (what the step ran).
    """
    covered = steps.filter(pl.col("covered") & pl.col("avg_w").is_not_null())
    sentences = []
    if covered.height:
        low = covered.sort("avg_w").row(0, named=True)
        high = covered.sort("avg_w").row(-1, named=True)
        sentences.append(
            f"Average power ranges from {low['avg_w']:.2f} W ({low['label']}) to "
            f"{high['avg_w']:.2f} W ({high['label']}); the highest sample was "
            f"{covered['max_w'].max():.2f} W."
        )
        for column, unit in (("iops_per_w", "IOPS per watt"), ("mb_s_per_w", "MB/s per watt")):
            rated = covered.drop_nulls(column)
            if rated.height:
                best = rated.sort(column).row(-1, named=True)
                figure = format_number(best[column])
                sentences.append(f"Best efficiency: {figure} {unit} in {best['label']}.")
    missing = steps.filter(~pl.col("covered"))
    if missing.height:
        first = missing.row(0, named=True)
        sentences.append(
            f"{missing.height} step(s) have no power figure (e.g. {first['label']}: "
            f"{first['reason'] or 'not covered'})."
        )
    return sentences


def act(trials: pl.DataFrame) -> list[str]:
    """The ACT score (highest passing load) and the first failing load above it."""
    passed = trials.filter(pl.col("passed"))
    if not passed.height:
        lowest = trials.sort("load").row(0, named=True)
        return [
            f"No ACT load passed; the lowest tried, {lowest['load']:g}x, ended "
            f"{lowest['status']} ({lowest['reason'] or 'no reason given'})."
        ]
    score = passed.sort("load").row(-1, named=True)
    worst = score["max_pct_over_1ms"]
    worst_text = f"; worst slice {worst:.2f} % of reads over 1 ms" if worst is not None else ""
    sentences = [
        f"ACT score: {score['load']:g}x, the highest load that passed "
        f"({2000 * score['load']:,.0f} reads/s and {1000 * score['load']:,.0f} writes/s"
        f"{worst_text})."
    ]
    above = trials.filter(~pl.col("passed") & (pl.col("load") > score["load"])).sort("load")
    if above.height:
        fail = above.row(0, named=True)
        sentences.append(
            f"At {fail['load']:g}x the drive {fail['status'].replace('_', ' ')}: "
            f"{fail['reason'] or 'over the limits'}."
        )
    return sentences


def endurance(waf: pl.DataFrame, items: pl.DataFrame) -> list[str]:
    """Whole-run write amplification (cumulative WAF frame) and, from the endurance table
    (``item``, ``value``, ``unit``), the rating against what the counters imply."""
    sentences = []
    last = waf.sort("step_index").row(-1, named=True) if waf.height else None
    if last and last["cumulative_host_bytes"]:
        sentences.append(
            f"Over the run the host wrote {last['cumulative_host_bytes'] / 1e9:,.1f} GB and the "
            f"NAND {last['cumulative_nand_bytes'] / 1e9:,.1f} GB: a write amplification factor "
            f"of {last['cumulative_waf']:.2f}."
        )
    known = dict(zip(items["item"], items["value"], strict=True)) if items.height else {}
    rating = [
        f"{label} {format_number(known[item])} {unit}"
        for item, label, unit in (
            ("rated endurance", "it is rated for", "TBW"),
            ("implied endurance", "its NAND implies", "TBW at the measured WAF"),
            ("projected life", "the projected life is", "years"),
            ("percent used", "it reports", "% of its life used"),
        )
        if known.get(item) is not None
    ]
    if rating:
        sentences.append(f"Endurance: {'; '.join(rating)}.")
    return sentences


def leads(scores: pl.DataFrame) -> list[str]:
    """Per test, the leader against the runner-up: ``A leads B by 18 % in ...``.

    ``scores``: ``test``, ``drive``, ``value``, ``metric``, ``higher_is_better``; tests with
    one drive are left out. Sentences are ordered by the size of the lead, largest first.
    """
    found: list[tuple[float, str]] = []
    for (test,), rows in scores.group_by("test", maintain_order=True):
        if rows.height < 2:
            continue
        higher = rows["higher_is_better"][0]
        first, second = rows.sort("value", descending=higher).head(2).iter_rows(named=True)
        a, b = first["value"], second["value"]
        if min(a, b) <= 0:
            continue
        ratio = a / b if higher else b / a
        shown = f"{format_value(a, first['metric'])} vs {format_value(b, second['metric'])}"
        if not higher:
            shown += "; lower is better"
        if ratio < 1.01:
            sentence = f"{first['drive']} and {second['drive']} are within 1 % in {test} ({shown})."
        else:
            by = f"{100 * ratio - 100:.0f} %" if ratio < 2 else f"{ratio:,.{ratio < 10:d}f}×"
            sentence = f"{first['drive']} leads {second['drive']} by {by} in {test} ({shown})."
        found.append((ratio, sentence))
    return [sentence for _, sentence in sorted(found, key=lambda f: -f[0])]

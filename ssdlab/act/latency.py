"""ACT latency tables, computed and printed exactly as Aerospike's ``act_latency.py`` (ACT 6.x).

For every slice of ``slice_s`` seconds, the reports at ``after slice_s``, ``after 2 x slice_s``
... are differenced (counts are cumulative), and for each threshold bucket ``b`` the share of
the slice's operations outside buckets ``0 .. b`` (latency >= 2^b ms) is
``round((slice_total - under) * 100.0 / slice_total, 2)``; a slice with no operations shows 0.
``rate`` is ``round(slice_total / slice_s, 1)``. The ``avg`` row is the mean of the rounded
slice values, the ``max`` row their maximum. A trailing partial slice is ignored, as is
everything after the first slice whose closing report is missing.

Microsecond histograms: a threshold of T ms becomes bucket ``log2(T) + 10``, i.e. the
2^(log2(T)+10) µs edge (1 ms -> 1024 µs, 8 -> 8192, 64 -> 65536), which is what
``act_latency.py -s 10 -n 3 -e 3`` shows on such a log; "over 1 ms" then means >= 1.024 ms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ..errors import InputError, SsdlabError
from .log import ActLog, read_act_log

if TYPE_CHECKING:
    from .trials import TrialStatus

#: ACT's pass rule for the ``reads`` histogram: percent of reads at or over T ms must stay
#: strictly below these limits in every slice (classically 1-hour slices).
ACT_LIMITS: dict[float, float] = {1: 5.0, 8: 1.0, 64: 0.1}
ACT_SLICE_S = 3600  # act_latency.py's default slice
#: ACT's rating run: its default test-duration-sec, judged in slices of :data:`ACT_SLICE_S`
ACT_RATING_S = 86_400
US_SHIFT = 10  # 2^10 µs stands in for 1 ms in microsecond histograms
_GAP = "  "


def pct_column(threshold_ms: float, prefix: str = "pct_over") -> str:
    """Column name for a threshold: 1 -> ``pct_over_1ms``, 0.5 -> ``pct_over_0.5ms``."""
    return f"{prefix}_{threshold_ms:g}ms"


def threshold_bucket(threshold_ms: float, microseconds: bool) -> int:
    """ACT bucket index whose upper edge is the threshold (power-of-two milliseconds)."""
    finite = math.isfinite(threshold_ms) and threshold_ms > 0
    exponent = math.log2(threshold_ms) if finite else -1.0
    bucket = int(exponent) + (US_SHIFT if microseconds else 0)
    if exponent != int(exponent) or bucket < 0:
        unit = "2^k ms with k >= -10" if microseconds else "1, 2, 4, 8, ... ms"
        raise ValueError(f"threshold {threshold_ms:g} ms is not an ACT bucket edge ({unit})")
    return bucket


def slice_table(
    histogram: str, totals: Sequence[int], overs: Mapping[str, Sequence[int]], slice_s: int
) -> pl.DataFrame:
    """Per-slice percentages plus ``avg`` and ``max`` rows, by act_latency.py's arithmetic.

    ``totals``: operations per slice; ``overs``: for each output column, the operations per
    slice counted against it (e.g. at or over a threshold).
    """
    columns = {
        name: [
            0.0 if total == 0 else round((over * 100.0) / total, 2)
            for over, total in zip(counts, totals, strict=True)
        ]
        for name, counts in overs.items()
    }
    rates = [round(float(total) / slice_s, 1) for total in totals]
    n = len(totals)
    rows: dict[str, list] = {
        "histogram": [histogram] * (n + 2),
        "slice": [str(i) for i in range(1, n + 1)] + ["avg", "max"],
    }
    for name, values in [*columns.items(), ("rate", rates)]:
        digits = 1 if name == "rate" else 2
        rows[name] = [*values, round(sum(values) / n, digits), max(0.0, *values)]
    return pl.DataFrame(
        rows, schema={k: pl.String if k in ("histogram", "slice") else pl.Float64 for k in rows}
    )


def latency_table(
    log: ActLog,
    histogram: str = "reads",
    slice_s: int | None = None,
    thresholds_ms: Sequence[float] = (1, 8, 64),
) -> pl.DataFrame:
    """Slices of one histogram: ``histogram``, ``slice`` (1, 2, ..., avg, max),
    ``pct_over_<T>ms`` per threshold and ``rate`` (operations/s in the slice).

    ``slice_s`` defaults to act_latency.py's 3600 s and must be a multiple of the log's
    report-interval-sec (act_latency.py would silently round it up).
    """
    slice_s = ACT_SLICE_S if slice_s is None else slice_s
    interval = log.report_interval_s
    if slice_s < 1 or slice_s % interval:
        raise ValueError(f"slice {slice_s} s is not a multiple of report-interval-sec {interval} s")
    if histogram not in log.histogram_names:
        raise InputError(
            f"{log.path}: no histogram {histogram!r}; it has {', '.join(log.histogram_names)}"
        )
    buckets = [threshold_bucket(t, log.microsecond_histograms) for t in thresholds_ms]
    by_time = {r.seconds: r.histograms[histogram] for r in log.reports}
    totals: list[int] = []
    overs: list[list[int]] = [[] for _ in buckets]
    prev_total, prev_under = 0, [0] * len(buckets)
    while (h := by_time.get((len(totals) + 1) * slice_s)) is not None:
        under = [h.count_below(b) for b in buckets]
        total = h.total - prev_total
        totals.append(total)
        for column, now, before in zip(overs, under, prev_under, strict=True):
            column.append(total - (now - before))
        prev_total, prev_under = h.total, under
    if not totals:
        last = log.reports[-1].seconds if log.reports else 0
        raise InputError(
            f"{log.path}: could not find {slice_s} seconds of data (reports end at {last} s)"
        )
    return slice_table(
        histogram,
        totals,
        {pct_column(t): column for t, column in zip(thresholds_ms, overs, strict=True)},
        slice_s,
    )


def _thresholds(df: pl.DataFrame) -> list[tuple[str, float]]:
    prefix = "pct_over_"
    return [(c, float(c[len(prefix) : -2])) for c in df.columns if c.startswith(prefix)]


def format_table(df: pl.DataFrame, *, microseconds: bool = False, rate: bool = False) -> str:
    """The table act_latency.py prints (``-x`` adds ``rate``), histograms side by side.

    ``microseconds``: the log had microsecond histograms, so columns are labelled with the
    µs bucket edges (1024, 8192, 65536) under ``%>(us)``, as act_latency.py labels them.
    """
    thresholds = _thresholds(df)
    labels = "".join(f"{2 ** threshold_bucket(t, microseconds):>7}" for _, t in thresholds) + (
        "       rate" if rate else ""
    )
    underline = " ------" * len(thresholds) + (" ----------" if rate else "")
    width = len(labels)
    parts = df.partition_by("histogram", maintain_order=True)
    names = [p["histogram"][0] for p in parts]
    if len({p.height for p in parts}) > 1:
        raise ValueError("histograms in one table must have the same slices")
    pads = [""] + [" " * max(0, 1 + len(prev) - width) for prev in names[:-1]]
    scale = " %>(us)" if microseconds else " %>(ms)"
    head = [" " * 5, " " * 5, "slice", "-----"]
    for name, pad in zip(names, pads, strict=True):
        head[0] += _GAP + " " + name.ljust(width - 1)
        head[1] += _GAP + pad + scale.ljust(width)
        head[2] += _GAP + pad + labels
        head[3] += _GAP + pad + underline
    body = []
    for i, tag in enumerate(parts[0]["slice"]):
        line = f"{tag:>5}"
        for part, pad in zip(parts, pads, strict=True):
            line += _GAP + pad + "".join(f"{part[c][i]:7.2f}" for c, _ in thresholds)
            line += f"{part['rate'][i]:11.1f}" if rate else ""
        body.append(line)
    return "\n".join([*head, *body[:-2], head[3], *body[-2:]]) + "\n"


def passes(table: pl.DataFrame, limits: Mapping[float, float] = ACT_LIMITS) -> pl.DataFrame:
    """Per numbered slice: ``pass_<T>ms`` (the shown percentage is strictly below the limit)
    and ``passed`` (all of them). ACT judges the ``reads`` histogram only."""
    missing = [pct_column(t) for t in limits if pct_column(t) not in table.columns]
    if missing:
        raise ValueError(f"table has no {', '.join(missing)} column")
    checks = {pct_column(t, "pass"): pl.col(pct_column(t)) < limit for t, limit in limits.items()}
    return (
        table.filter(~pl.col("slice").is_in(["avg", "max"]))
        .select("histogram", "slice", **checks)
        .with_columns(passed=pl.all_horizontal(*checks))
    )


@dataclass(frozen=True)
class LatencyReport:
    """An ACT log's act_latency.py table and ACT's verdict on it (:func:`latency_report`).

    ``table``: None when ACT stopped (an ERROR) before the first slice ended. ``status`` and
    ``reason``: the verdict on the ``reads`` histogram (a native trial's, see
    :func:`~ssdlab.act.trials.native_trial`), ``failed`` with the ERROR when the log has no
    ``reads`` histogram but stopped with one, None when there is nothing to judge.
    """

    log: ActLog
    table: pl.DataFrame | None
    status: TrialStatus | None
    reason: str

    @property
    def failed(self) -> bool:
        """The log fails ACT's rule: a slice over a limit, can't keep up, or an ERROR."""
        return self.status in ("failed", "cant_keep_up")


def latency_report(
    path: Path,
    *,
    slice_s: int = ACT_SLICE_S,
    thresholds_ms: Sequence[float] = (1, 8, 64),
    histograms: Sequence[str] | None = None,
) -> LatencyReport:
    """The table of ``histograms`` (default: every one in the log) of the ACT log ``path``
    at ``slice_s``-second slices and ``thresholds_ms``, and ACT's verdict, as
    ``ssdlab act latency`` prints them; SsdlabError naming the log for a slice or threshold
    the log cannot be cut by."""
    from .trials import native_trial  # trials imports this module's table arithmetic

    log = read_act_log(path)
    trial = None
    try:
        trial = native_trial(log, slice_s=slice_s) if "reads" in log.histogram_names else None
        table: pl.DataFrame | None = pl.concat(
            [
                latency_table(log, h, slice_s, thresholds_ms)
                for h in histograms or log.histogram_names
            ]
        )
    except ValueError as exc:
        raise SsdlabError(f"{path}: {exc}") from None
    except InputError:
        if not log.errors:
            raise
        table = None  # ACT stopped before the first slice ended
    if trial is not None:
        return LatencyReport(log, table, trial.status, trial.reason)
    if log.errors:
        return LatencyReport(log, table, "failed", log.errors[0])
    return LatencyReport(log, table, None, "")

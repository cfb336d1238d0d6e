"""Findings: plain sentences written from the data, the way a review states its results.

Each function takes the figures a report section computed (frames or dataclasses whose names
carry units) and returns sentences; none of them reads files.

Sentences come from a small grammar, so every report words the same things the same way:

- a **workload phrase** names what ran: ``4K random read at QD1``, ``4K random 70/30 at
  QD32``, ``1M sequential write at QD128 (4 jobs x QD32)``; only
  :func:`~ssdlab.phrases.workload_phrase` builds one and
  :func:`~ssdlab.phrases.parse_workload` reads one back (:mod:`ssdlab.phrases`, which
  analysis uses too; labels such as ``4K random write QD1`` are re-phrased through it);
- a **quantity** is a number with its unit: ``106 µs``, ``3,634 MB/s``, ``11,233 IOPS``;
  only :func:`format_value` writes one (with the number formats of :mod:`ssdlab.tables`);
- a **ratio** compares two quantities of one metric: ``2.1x``, ``104x`` or ``18 %``
  (:func:`ratio_phrase`), always with the metric and which way is better.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from .analysis import Consistency, quoted_mix
from .analysis.repeats import Lead, lead
from .phrases import LABEL_RE, mix_phrase, parse_qd, qd_phrase, rephrase, workload_phrase
from .tables import format_bw, format_iops, format_latency, format_number
from .units import MB, format_duration
from .vocab import MIX_DIRECTIONS


def _row_phrase(row: Mapping[str, Any], label: str) -> str:
    """The phrase of a frame row: built from its columns when it has them, else from the
    label column ``label``."""
    keys = ("pattern", "bs_bytes", "read_pct", "iodepth", "numjobs")
    if all(row.get(k) is not None for k in keys):
        phrase = workload_phrase(*(row[k] for k in keys))
        mixed = 0 < row["read_pct"] < 100 and row.get("direction") in MIX_DIRECTIONS
        return f"{phrase}, {row['direction']}s" if mixed else phrase
    return rephrase(str(row[label]))


# -- the grammar: quantities and ratios --------------------------------------------------------

#: how each metric's figures are written, by the metric's name
UNIT_WORDS = {"IOPS": "IOPS", "MB/s": "MB/s", "ns": "latency", "%": "%", "x": "load"}


def is_known(value: Any) -> bool:
    """Not None and not NaN."""
    return value is not None and value == value


def format_value(value: float, metric: str) -> str:
    """A figure with its unit, by the metric's name: ``IOPS``, ``MB/s`` (value in MB/s),
    ``ns`` (a latency in ns, written in ns, µs, ms or s), ``%``, ``x`` (a multiple: an ACT
    load), ``reads/s``, ``W``; a metric without a unit (a factor such as WAF) is written
    bare."""
    if metric == "IOPS":
        return format_iops(value)
    if metric == "MB/s":
        return format_bw(value * MB)
    if metric == "ns":
        return format_latency(value)
    if metric == "x":
        return f"{value:g}x"
    if metric == "%":
        return f"{value:.2f} %"
    if metric == "W":
        return f"{value:.2f} W"
    if metric == "":
        return f"{value:.2f}"
    return f"{format_number(value)} {metric}"


def ratio_phrase(ratio: float) -> str:
    """How many times larger (``2.1x``, ``104x``), or by how much in % below 2x
    (``18 %``). ``ratio`` is at least 1."""
    if ratio < 1.995:
        return f"{100 * ratio - 100:.0f} %"
    return f"{ratio:,.0f}x" if ratio >= 9.95 else f"{ratio:.1f}x"


def count(n: int, word: str) -> str:
    """``1 round``, ``7 rounds``, ``3 read/write mixes``: a count and its noun."""
    return _plural(n, word)


def _plural(n: int, word: str) -> str:
    """``1 round``, ``7 rounds``, ``3 read/write mixes``."""
    if n == 1:
        return f"{n:,} {word}"
    return f"{n:,} {word}" + ("es" if word.endswith(("x", "s", "ch", "sh")) else "s")


def and_list(items: Sequence[str], joint: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (or another ``joint``)."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {joint} {items[-1]}"


# -- a drive's findings ------------------------------------------------------------------------

#: units the steady-state text may name, and how a mean in that unit is written
_STEADY_UNITS = {
    "IOPS": ("IOPS", lambda v: format_iops(v)),
    "MB/s": ("throughput", lambda v: format_bw(v * MB)),
    "µs": ("latency", lambda v: format_latency(v * 1e3)),
}
_METRIC_UNITS = {"iops": "IOPS", "bw_bytes_s": "MB/s"}


def _steady_subject(what: str, metric: str | None) -> tuple[str, str | None]:
    """What a steady-state finding tracks (``Average response time of 4K random write at
    QD1``) and the unit of its figures, from the caller's ``4K random write QD1 average
    response time (µs)`` or ``... QD1 µs``."""
    text = what.strip()
    unit = None
    bracket = re.search(r"\s*\((IOPS|MB/s|µs)\)$", text)
    if bracket:
        unit, text = bracket[1], text[: bracket.start()]
    else:
        bare = re.search(r"\s(IOPS|MB/s|µs)$", text)
        if bare:
            unit, text = bare[1], text[: bare.start()]
            text += f" {_STEADY_UNITS[unit][0]}" if unit != "IOPS" else " IOPS"
    if unit is None and metric:
        unit = _METRIC_UNITS.get(metric, "µs" if metric.endswith("_ns") else None)
    m = LABEL_RE.match(text)
    qd = parse_qd(m["qd"]) if m else None
    if m and qd is not None:
        phrase = f"{m['bs']} {m['pattern']} {m['mix']} at {qd_phrase(*qd)}"
        rest = m["rest"].strip()
        direction = re.match(r"^\((reads|writes)\)\s*", rest)
        if direction:
            phrase += f", {direction[1]}"
            rest = rest[direction.end() :]
        tracked = rest or (_STEADY_UNITS[unit][0] if unit else "the tracked value")
        return f"{tracked[0].upper()}{tracked[1:]} of {phrase}", unit
    return text, unit


def steady_state(determination: Mapping[str, Any], rounds: list[int], what: str) -> str:
    """``IOPS of 4K random write at QD1 reached steady state after 7 rounds: rounds 3-7
    average 106,000 IOPS, ...`` for one round block's determination (figures in the display
    unit ``what`` ends with: IOPS, MB/s or µs)."""
    ran = int(determination["rounds_run"])
    subject, unit = _steady_subject(what, determination.get("metric"))
    mean = determination.get("mean")
    if not determination["steady"]:
        reason = str(determination.get("reason") or "").strip().rstrip(".")
        return f"{subject} was not steady after {_plural(ran, 'round')}" + (
            f": {reason}." if reason else "."
        )
    window = f"rounds {rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else _plural(ran, "round")
    average = _STEADY_UNITS[unit][1](mean) if unit else format_number(mean)
    data = 100 * determination["data_excursion"] / mean
    slope = 100 * determination["slope_excursion"] / mean
    return (
        f"{subject} reached steady state after {_plural(ran, 'round')}: {window} average "
        f"{average}, with a data excursion of {data:.1f} % (limit 20 %) and a slope excursion "
        f"of {slope:.1f} % (limit 10 %)."
    )


def consistency(what: str, figures: Consistency) -> str:
    """Tail score of a consistency run: average, spread and the slow seconds."""
    tail = format_duration(figures.end_s - figures.start_s + 1)
    spread = figures.iops_stddev / figures.iops_mean if figures.iops_mean else 0.0
    windows = _plural(figures.windows, "one-second window")
    ratio = (
        f" (the average is {figures.mean_over_stddev:,.1f}x the standard deviation)"
        if is_known(figures.mean_over_stddev) and figures.iops_stddev
        else ""
    )
    return (
        f"{rephrase(what)}: over the last {tail} ({windows}) it averages "
        f"{format_iops(figures.iops_mean)} with a standard deviation of {100 * spread:.1f} %"
        f"{ratio}; 99 % of the seconds stay above {format_iops(figures.iops_p1)}."
    )


def _qd_of(row: Mapping[str, Any]) -> str:
    if row.get("iodepth") is not None and row.get("numjobs") is not None:
        return qd_phrase(row["iodepth"], row["numjobs"])
    qd = parse_qd(str(row.get("qd_label") or ""))
    return qd_phrase(*qd) if qd else str(row.get("qd_label"))


def qd_scaling(points: pl.DataFrame) -> list[str]:
    """Per workload, the lowest QD reaching 95 % of the peak, and the peak.

    ``points``: one row per workload and QD with ``workload``, ``qd``, ``qd_label``,
    ``value``, ``metric``, ``clat_p99_ns``, ``at_95`` (the 95 % point) and optionally
    ``efficiency`` and ``efficiency_metric``.
    """
    sentences = []
    for (workload,), rows in points.group_by("workload", maintain_order=True):
        rows = rows.filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan())
        if not rows.height:
            continue
        peak = rows.sort("value", "qd", descending=[True, False]).row(0, named=True)
        marked = rows.filter(pl.col("at_95"))
        if not marked.height:
            continue
        at = marked.row(0, named=True)
        figures = format_value(at["value"], at["metric"])
        if is_known(at.get("clat_p99_ns")):
            figures += f", p99 latency {format_latency(at['clat_p99_ns'])}"
        if is_known(at.get("efficiency")) and at.get("efficiency_metric"):
            figures += f", {format_number(at['efficiency'])} {at['efficiency_metric']}"
        if at["qd"] < peak["qd"]:
            sentences.append(
                f"{workload} reaches 95 % of its peak throughput at {_qd_of(at)} "
                f"({figures}); the peak is {format_value(peak['value'], peak['metric'])} at "
                f"{_qd_of(peak)}."
            )
        else:
            sentences.append(
                f"{workload} peaks at {_qd_of(peak)} ({figures}); lower queue depths stay "
                "below 95 % of it."
            )
    return sentences


def sweep_phrase(sweep: str) -> str:
    """``4K random QD128 (4 × 32)`` (a sweep label) as ``4K random mixes at QD128 (4 jobs x
    QD32)``."""
    m = re.match(r"^(\S+)\s(random|sequential)\s(QD.*)$", sweep.strip())
    qd = parse_qd(m[3]) if m else None
    if not m or qd is None:
        return f"{sweep} mixes"
    return f"{m[1]} {m[2]} mixes at {qd_phrase(*qd)}"


def mix_sweeps(sweeps: pl.DataFrame, steps: pl.DataFrame | None = None) -> list[str]:
    """Per sweep: the average over its mixes, the mixed point nearest 70/30 and the lowest.

    ``sweeps``: one row per sweep with ``sweep``, ``metric``, ``avg``, ``at_70_30`` (null when
    the sweep has no 70 % step), ``low``, ``low_read_pct``, ``steps``, optionally ``caveat``
    (the depth fio ran at, when below the configured one). With ``steps`` (the sweeps'
    points: ``sweep``, ``read_pct``, ``value``), the mixes are named and the point nearest
    70/30 is the one the sweep has (``65/35`` in a SNIA sweep).
    """
    sentences = []
    for row in sweeps.iter_rows(named=True):
        if not all(is_known(row[k]) for k in ("avg", "low")):
            continue
        metric = row["metric"]
        shares: list[int] = []
        point: tuple[int, float] | None = None
        if row.get("at_70_30") is not None:
            point = (70, row["at_70_30"])
        if steps is not None and steps.height:
            mine = steps.filter(pl.col("sweep") == row["sweep"])
            for key in ("label", "run_id"):
                if key in mine.columns and key in row:
                    mine = mine.filter(pl.col(key) == row[key])
            mine = mine.filter(pl.col("value").is_not_null())
            shares = sorted(set(mine["read_pct"].to_list()), reverse=True)
            quoted = quoted_mix(mine["read_pct"].to_list())
            if quoted is not None:
                near = mine.filter(pl.col("read_pct") == quoted).row(0, named=True)
                point = (quoted, near["value"])
        count = len(shares) or int(row["steps"])
        mixes = f"{_plural(count, 'read/write mix')}"
        if shares:
            mixes += f" ({', '.join(f'{s}/{100 - s}' for s in shares)})"
        subject = sweep_phrase(row["sweep"])
        if row.get("caveat"):  # the depth configured is in the caveat, beside what fio ran
            subject = re.sub(r" at QD.*$", "", subject) + f" ({row['caveat']})"
        sentence = f"{subject} average {format_value(row['avg'], metric)} over {mixes}"
        if point is not None:
            sentence += f"; {mix_phrase(point[0])} reaches {format_value(point[1], metric)}"
        low = row["low_read_pct"]
        sentence += f"; the lowest is {format_value(row['low'], metric)} at {low}/{100 - low}."
        sentences.append(sentence)
    return sentences


def latency_qos(table: pl.DataFrame, limit: int = 4) -> list[str]:
    """Per series (first ``limit``): p99, p99.99 and the slowest I/O.

    ``table``: ``series``, ``clat_p99_ns``, ``clat_p99_99_ns``, ``clat_max_ns`` (and the
    workload columns, which name the series by the grammar when present).
    """
    return [
        f"{_row_phrase(row, 'series')}: 99 % of I/Os complete within "
        f"{format_latency(row['clat_p99_ns'])}, 99.99 % within "
        f"{format_latency(row['clat_p99_99_ns'])}; the slowest took "
        f"{format_latency(row['clat_max_ns'])}."
        for row in table.head(limit).iter_rows(named=True)
        if all(is_known(row[c]) for c in ("clat_p99_ns", "clat_p99_99_ns", "clat_max_ns"))
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
            rated = covered.drop_nulls(column).filter(pl.col(column).is_not_nan())
            if rated.height:
                best = rated.sort(column).row(-1, named=True)
                figure = format_number(best[column])
                sentences.append(f"Best efficiency: {figure} {unit} in {best['label']}.")
    missing = steps.filter(~pl.col("covered"))
    if missing.height:
        first = missing.row(0, named=True)
        has = "has" if missing.height == 1 else "have"
        sentences.append(
            f"{_plural(missing.height, 'step')} {has} no power figure (e.g. "
            f"{first['label']}: {first['reason'] or 'not covered'})."
        )
    return sentences


def endurance(waf: pl.DataFrame, items: pl.DataFrame) -> list[str]:
    """Whole-run write amplification (cumulative WAF frame) and, from the endurance table
    (``item``, ``value``, ``unit``), the rating against what the counters imply."""
    sentences = []
    last = waf.sort("step_index").row(-1, named=True) if waf.height else None
    if last and last["cumulative_host_bytes"] and is_known(last["cumulative_waf"]):
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
        if is_known(known.get(item))
    ]
    if rating:
        sentences.append(f"Endurance: {'; '.join(rating)}.")
    return sentences


# -- comparisons -------------------------------------------------------------------------------

#: differences smaller than this ratio are not called a win or a deficit
MIN_DIFFERENCE = 1.05


def _better_word(metric: str, wins: bool, higher_is_better: bool = True) -> str:
    if metric == "ns" or not higher_is_better:
        return "better" if wins else "worse"
    return "higher" if wins else "lower"


def _what(metric: str, measure: str | None) -> str:
    """What a compared figure is: ``IOPS``, ``MB/s``, ``p99.99 latency``, ``load``."""
    if measure:
        return measure
    return UNIT_WORDS.get(metric, metric or "value")


def leads(scores: pl.DataFrame) -> list[str]:
    """Per test, the leader against the runner-up: ``A leads B by 18 % in ...``.

    ``scores``: ``test``, ``drive``, ``value``, ``metric``, ``higher_is_better``; tests with
    one drive are left out, and so is a drive's second row in a test (a drive is never
    compared with itself). Sentences are ordered by the size of the lead, largest first.
    """
    found: list[tuple[float, str]] = []
    known = scores.filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan())
    for (test,), rows in known.group_by("test", maintain_order=True):
        rows = rows.unique("drive", keep="first", maintain_order=True)
        if rows.height < 2:
            continue
        higher = rows["higher_is_better"][0]
        first, second = rows.sort("value", descending=higher).head(2).iter_rows(named=True)
        a, b = first["value"], second["value"]
        if min(a, b) < 0:
            continue
        shown = f"{format_value(a, first['metric'])} vs {format_value(b, second['metric'])}"
        if not higher:
            shown += "; lower is better"
        noise = _noise(first, second, higher)
        if noise is not None:
            found.append(
                (
                    noise[0],
                    noise[1].format(a=first["drive"], b=second["drive"], test=test, shown=shown),
                )
            )
            continue
        if a == b or (min(a, b) > 0 and max(a, b) / min(a, b) < 1.01):
            sentence = f"{first['drive']} and {second['drive']} are within 1 % in {test} ({shown})."
            ratio = 1.0
        elif min(a, b) == 0:
            sentence = f"{first['drive']} leads {second['drive']} in {test} ({shown})."
            ratio = float("inf")
        else:
            ratio = a / b if higher else b / a
            sentence = (
                f"{first['drive']} leads {second['drive']} by {ratio_phrase(ratio)} in {test} "
                f"({shown})."
            )
        found.append((ratio, sentence))
    return [sentence for _, sentence in sorted(found, key=lambda f: -f[0])]


def _repeats_lead(
    mine: Sequence[float] | None, theirs: Sequence[float] | None, higher: bool
) -> Lead | None:
    """With two or more positive repeats on both sides, how far ``mine`` leads ``theirs``
    (:func:`~ssdlab.analysis.repeats.lead`; the lower figure leads when not ``higher``, as
    latency); else None."""
    if not mine or not theirs or min(len(mine), len(theirs)) < 2 or min(*mine, *theirs) <= 0:
        return None
    return lead(mine, theirs) if higher else lead(theirs, mine)


def _noise(
    first: Mapping[str, Any], second: Mapping[str, Any], higher: bool
) -> tuple[float, str] | None:
    """With repeats on both sides, the lead of ``first`` over ``second`` with its 95 %
    interval (:func:`~ssdlab.analysis.repeats.lead`): ``(ratio to sort by, a sentence
    template with {a}, {b}, {test}, {shown})``, ratio 1 when within the noise; else None."""
    found = _repeats_lead(first.get("repeats"), second.get("repeats"), higher)
    if found is None:
        return None
    size = f"{found.size_pct:.0f} % ± {found.plus_minus_pct:.0f} %"
    if not found.significant:
        return 1.0, f"{{a}} and {{b}} differ by {size} in {{test}} ({{shown}}): within the noise."
    if found.pct < 0:  # the median and the repeats' mean disagree: say nothing of the noise
        return None
    return 1 + found.pct / 100, f"{{a}} leads {{b}} by {size} in {{test}} ({{shown}})."


def _difference(row: Mapping[str, Any], wins: bool) -> str:
    """``104x lower IOPS in 4K random 70/30 at QD32 (350 IOPS vs 36,393 IOPS)``."""
    mine, theirs, metric = row["value"], row["rival_value"], row["metric"]
    size = ""
    if min(mine, theirs) > 0:
        ratio = max(mine, theirs) / min(mine, theirs)
        size = f"{ratio_phrase(ratio)} "
        if ratio < 1.995:  # a share of the rival's figure
            size = f"{100 * abs(mine - theirs) / theirs:.0f} % "
    word = _better_word(metric, wins, bool(row.get("higher_is_better", True)))
    what = _what(metric, row.get("measure"))
    shown = f"{format_value(mine, metric)} vs {format_value(theirs, metric)}"
    return f"{size}{word} {what} in {row['item']} ({shown})"


def rivals(comparison: pl.DataFrame, subject: str, limit: int = 3) -> list[str]:
    """The subject's largest deficits and wins against each rival.

    ``comparison``: one row per compared item and rival: ``rival``, ``item`` (a workload
    phrase or a test), ``measure`` (``IOPS``, ``p99.99 latency``...), ``metric``,
    ``higher_is_better``, ``value`` (the subject's), ``rival_value``; with ``repeats`` and
    ``rival_repeats`` (steps run with ``--repeat``), a difference within the noise of the
    repeats (:func:`~ssdlab.analysis.repeats.lead`) is neither and is named apart (out of
    how many, the largest ``limit`` listed); the counts of the other sentences are of the
    measurements outside the noise. Differences under 5 % are neither; up to ``limit`` of
    each, largest first.
    """
    sentences = []
    usable = comparison.filter(
        pl.col("value").is_not_null()
        & pl.col("rival_value").is_not_null()
        & (pl.col("value") >= 0)
        & (pl.col("rival_value") >= 0)
        & (pl.col("rival") != subject)
    )
    for rival in comparison["rival"].unique(maintain_order=True).to_list():
        if rival == subject:
            continue
        rows, noisy = _within_noise(usable.filter(pl.col("rival") == rival))
        count = _plural(rows.height, "like-for-like measurement")
        if noisy:
            total = _plural(rows.height + len(noisy), "like-for-like measurement")
            share = f"{len(noisy)} of its {total}" if rows.height else f"all {total}"
            listed = "; ".join(noisy[:limit])
            which = f"; the largest {limit} of them" if len(noisy) > limit else ""
            sentences.append(
                f"Against {rival}, {subject} differs within the noise of the repeats in "
                f"{share} (not significant, neither win nor deficit){which}: {listed}."
            )
            count += " outside the noise"
        if not rows.height:
            continue
        advantage = (
            pl.when(pl.col("higher_is_better"))
            .then(pl.col("value") / pl.col("rival_value"))
            .otherwise(pl.col("rival_value") / pl.col("value"))
        )
        rows = rows.with_columns(
            advantage=pl.when((pl.col("value") == 0) & (pl.col("rival_value") == 0))
            .then(pl.lit(1.0))
            .otherwise(advantage.fill_nan(1.0))
        )
        kind = pl.col("metric") == "ns"  # latencies, then throughput and the rest
        per_kind = pl.int_range(pl.len()).over(kind) < max(1, limit - 1)
        deficits = rows.filter(pl.col("advantage") < 1 / MIN_DIFFERENCE).sort("advantage")
        deficits = deficits.filter(per_kind).sort("advantage")
        wins = rows.filter(pl.col("advantage") > MIN_DIFFERENCE).sort("advantage", descending=True)
        wins = wins.filter(per_kind).sort("advantage", descending=True)
        if not deficits.height and not wins.height:
            sentences.append(f"{subject} and {rival} are within 5 % of each other in all {count}.")
            continue
        for found, word, is_win in ((deficits, "deficits", False), (wins, "wins", True)):
            if not found.height:
                sentences.append(
                    f"Against {rival}, {subject} has no {word[:-1]} over 5 % ({count})."
                )
                continue
            listed = [_difference(r, is_win) for r in found.head(limit).iter_rows(named=True)]
            largest = "largest " + (word if len(listed) > 1 else word[:-1])
            sentences.append(f"Against {rival}, {subject}'s {largest}: {'; '.join(listed)}.")
    return sentences


def _within_noise(rows: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """``rows`` of :func:`rivals` without those whose difference lies within the noise of
    both sides' repeats, and those, described (``IOPS in 4K random read at QD1 (20 % ±
    160 %)``), largest difference first."""
    if "repeats" not in rows.columns or "rival_repeats" not in rows.columns:
        return rows, []
    keep, noisy = [], []
    for row in rows.iter_rows(named=True):
        found = _repeats_lead(row["repeats"], row["rival_repeats"], row["higher_is_better"])
        keep.append(found is None or bool(found.significant))
        if not keep[-1] and found is not None:
            what = _what(row["metric"], row.get("measure"))
            size = f"{found.size_pct:.0f} % ± {found.plus_minus_pct:.0f} %"
            noisy.append((found.size_pct, f"{what} in {row['item']} ({size})"))
    noisy.sort(key=lambda found: -found[0])
    return rows.filter(pl.Series(keep, dtype=pl.Boolean)), [text for _, text in noisy]


def like_for_like(differences: Iterable[Mapping[str, Any]]) -> list[str]:
    """Warnings that the compared runs differ: per run-level parameter (suite, duration
    scale, LBA span, ioengine...) what each drive ran, and what that means for the cells.

    ``differences``: ``parameter`` (what differs), ``values`` (drive -> value as shown) and
    ``excluded`` (measurements left out for it: 0 when it only warns).
    """
    sentences = []
    for d in differences:
        values = d["values"]
        by_value: dict[str, list[str]] = {}
        for drive, value in values.items():
            by_value.setdefault(value, []).append(drive)
        if d.get("listed", True):
            ran = "; ".join(f"{and_list(drives)}: {value}" for value, drives in by_value.items())
        else:  # settings and fio options: the table lists them
            ran = "each drive's is listed in the table below"
        sentence = f"Not like for like: different {d['parameter']} ({ran})"
        excluded = int(d.get("excluded") or 0)
        if excluded:
            are = "is" if excluded == 1 else "are"
            sentence += (
                f"; {_plural(excluded, 'measurement')} that differ in it {are} left out of "
                "the comparison"
            )
        elif d.get("note"):
            sentence += f"; {d['note']}"
        sentences.append(sentence + ".")
    return sentences


def unknown_parameters(drives: Mapping[str, Sequence[str]]) -> list[str]:
    """Drives whose workload parameters were not recorded (imported results): compared on
    block size, mix and queue depth only."""
    return [
        f"{drive}: the {and_list(list(missing))} {'was' if len(missing) == 1 else 'were'} not "
        "recorded (imported results), so its measurements are matched on block size, mix and "
        "queue depth only."
        for drive, missing in drives.items()
        if missing
    ]

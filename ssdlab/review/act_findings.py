"""ACT findings: the sentences of a run's ACT score (:func:`act`), of ACT scores compared
(:func:`act_comparison`), and the phrases ``ssdlab act score`` prints (:func:`act_length`,
:func:`act_caveat`, :func:`act_cap`), in the grammar of :mod:`ssdlab.findings`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ..act.frames import ActScore, act_score
from ..act.latency import ACT_RATING_S, ACT_SLICE_S
from ..findings import and_list, count, is_known, ratio_phrase
from ..units import format_duration


def _status(status: str) -> str:
    """A trial's status in words: ``could not keep up``."""
    return {"cant_keep_up": "could not keep up", "failed": "failed"}.get(
        status, status.replace("_", " ")
    )


def act_length(duration_s: int, slice_s: int) -> str:
    """An ACT trial's length as findings write it: ``6 s judged in slices of 1 s``."""
    return f"{format_duration(duration_s)} judged in slices of {format_duration(slice_s)}"


def act_caveat(duration_s: int, slice_s: int) -> str | None:
    """What a score from a trial of this length is not, when it is not an ACT rating (a run
    of 24 h judged in slices of 1 h); None when it is one."""
    length = format_duration(duration_s)
    if duration_s < ACT_SLICE_S:
        return (
            f"A trial of {length} is a smoke test of the workload, not an ACT rating: ACT rates "
            "a drive by a run of 24 h judged in slices of 1 h."
        )
    if duration_s < ACT_RATING_S:
        return (
            f"A trial of {length} is shorter than ACT's rating run of 24 h (judged in slices "
            "of 1 h): the score is a review's, not a rating."
        )
    if slice_s != ACT_SLICE_S:
        return (
            f"Slices of {format_duration(slice_s)} are not ACT's slices of 1 h: the score is "
            "not a rating."
        )
    return None


def act_cap(max_load: float) -> str:
    """Why a search's score at its ``--max-load`` is a lower bound."""
    return (
        f"no load failed up to --max-load {max_load:g}x, where the search stopped at its cap, "
        "so the score is a lower bound"
    )


def _act_bound(score: ActScore) -> str:
    """What bounds a score from above: the load that failed, else why it is a lower bound."""
    best, fail = score.best, score.failed
    assert best is not None
    if fail is not None:
        length = fail["duration_s"], fail["slice_s"]
        other = ""
        if length != (best["duration_s"], best["slice_s"]):  # a longer trial is harder
            other = f" in a trial of {act_length(*length)}"
        return f"{fail['load']:g}x {_status(fail['status'])}{other}"
    if best["search_cap"]:
        return act_cap(best["load"])
    if score.unjudged:
        loads = and_list([f"{r['load']:g}x" for r in score.unjudged])
        return f"{loads} above it ended without a verdict, so the score is a lower bound"
    where = " on this device" if score.left_out else ""
    return f"no higher load was tried{where}, so the score is a lower bound"


def act(trials: pl.DataFrame, slices: pl.DataFrame | None = None) -> list[str]:
    """The ACT score (highest passing load on the run's device), what bounds it (the first
    failing load above it, or why it is a lower bound: the search's cap, no higher load
    tried), its trial's length and what a trial that short is not; then the failure above,
    failures below, and trials from another device (left out). With ``slices`` (the
    ``act_slices`` frame) the reads/s are those asked of the drive, else ACT's 1x rates
    (2,000 reads/s, 1,000 writes/s)."""
    score = act_score(trials)
    sentences = []
    left = len(score.left_out)
    if score.best is None and score.lowest is not None:
        low = score.lowest
        sentences.append(
            f"No ACT load passed; the lowest tried, {low['load']:g}x, {_status(low['status'])} "
            f"in a trial of {act_length(low['duration_s'], low['slice_s'])} "
            f"({low['reason'] or 'no reason given'})."
        )
        sentences += filter(None, [act_caveat(low["duration_s"], low["slice_s"])])
    elif score.best is not None:
        best = score.best
        rate = act_read_rate(best, slices)
        # ACT's 1x is 2,000 reads/s and 1,000 writes/s; a trial asked other rates names its reads
        writes = f" and {1000 * best['load']:,.0f} writes/s" if rate == 2000 * best["load"] else ""
        worst = best["max_pct_over_1ms"]
        worst_text = f"; worst slice {worst:.2f} % of reads over 1 ms" if is_known(worst) else ""
        bound = "at least " if score.lower_bound else ""
        out = f"; {count(left, 'trial')} from another device left out" if left else ""
        sentences.append(
            f"ACT score: {bound}{best['load']:g}x, the highest load that passed, in a trial of "
            f"{act_length(best['duration_s'], best['slice_s'])} ({rate:,.0f} reads/s{writes}"
            f"{worst_text}); {_act_bound(score)}{out}."
        )
        sentences += filter(None, [act_caveat(best["duration_s"], best["slice_s"])])
        if (fail := score.failed) is not None:
            sentences.append(
                f"At {fail['load']:g}x the drive {_status(fail['status'])}: "
                f"{fail['reason'] or 'over the limits'}."
            )
        if score.below:
            failures = [
                f"{r['load']:g}x {_status(r['status'])} in trial {r['trial']}" for r in score.below
            ]
            sentences.append(f"Below the score, {and_list(failures)}.")
    if left:
        shown = "; ".join(
            f"trial {r['trial']} at {r['load']:g}x on {r['device']}, {_status(r['status'])}"
            for r in score.left_out
        )
        sentences.append(f"Left out of the score, as another device's: {shown}.")
    return sentences


def act_read_rate(trial: Mapping[str, Any], slices: pl.DataFrame | None) -> float:
    """Reads/s asked of the drive in ``trial``: from its slices when known, else 1x = 2,000."""
    if slices is not None and slices.height and "requested_read_rate" in slices.columns:
        mine = slices.filter(pl.col("trial") == trial["trial"])["requested_read_rate"]
        mine = mine.drop_nulls()
        if mine.len():
            return float(mine.max())
    return 2000.0 * trial["load"]


def act_comparison(scores: pl.DataFrame, exceedances: pl.DataFrame) -> list[str]:
    """ACT compared: each drive's score (the highest passing load, the reads/s it asks and
    its trial's length) and, at loads two drives both ran, the worst slice's share of slow
    reads; what the shortest trial is not (:func:`act_caveat`).

    ``scores``: ``drive``, ``load``, ``reads_s``, ``duration_s``, ``slice_s`` and
    ``lower_bound`` (no load above the score failed: a score that is a lower bound ranks
    below another only with a word that the order may not hold); ``exceedances``: ``load``,
    ``drive``, ``threshold_ms``, ``limit_pct``, ``pct`` (the worst slice's reads at or over it).
    """
    sentences = []
    if scores.height >= 2:
        # of equal scores, a lower bound first: it is at least the other
        ranked = scores.sort("reads_s", "load", "lower_bound", descending=True)
        shown = and_list(
            [
                f"{r['drive']} {'at least ' if r['lower_bound'] else ''}{r['load']:g}x "
                f"({r['reads_s']:,.0f} reads/s, a trial of "
                f"{act_length(r['duration_s'], r['slice_s'])})"
                for r in ranked.iter_rows(named=True)
            ]
        )
        best, second = ranked.row(0, named=True), ranked.row(1, named=True)
        least = "at least " if best["lower_bound"] else ""
        if second["lower_bound"]:
            verdict = (
                f"the scores of {best['drive']} and {second['drive']} are lower bounds"
                if least
                else f"{second['drive']}'s score is a lower bound"
            ) + ", so their order may not hold"
        elif best["reads_s"] == second["reads_s"]:
            verdict = (
                f"{best['drive']} passes at least the load of {second['drive']}"
                if least
                else f"{best['drive']} and {second['drive']} pass the same load"
            )
        else:
            ratio = best["reads_s"] / second["reads_s"]
            verdict = (
                f"{best['drive']} sustains {least}{ratio_phrase(ratio)} more load than "
                f"{second['drive']}"
                if ratio < 1.995
                else f"{best['drive']} sustains {least}{ratio_phrase(ratio)} the load of "
                f"{second['drive']}"
            )
        sentences.append(f"ACT scores (highest passing load): {shown}; {verdict}.")
        shortest = ranked.sort("duration_s").row(0, named=True)
        sentences += filter(None, [act_caveat(shortest["duration_s"], shortest["slice_s"])])
    for (load, threshold), rows in exceedances.group_by(
        "load", "threshold_ms", maintain_order=True
    ):
        rows = rows.unique("drive", keep="first", maintain_order=True).drop_nulls("pct")
        if rows.height < 2 or rows["pct"].max() == 0:
            continue
        ranked = rows.sort("pct")
        shown = and_list([f"{r['drive']} {r['pct']:.2f} %" for r in ranked.iter_rows(named=True)])
        sentences.append(
            f"At {load:g}x, reads at or over {threshold:g} ms in the worst slice (limit "
            f"{ranked['limit_pct'][0]:g} %, lower is better): {shown}."
        )
    return sentences

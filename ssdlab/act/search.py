"""Search for a drive's ACT score: the highest load multiple that passes.

Stepping down one load at a time from far above (150x, 149x, ...) takes as many trials as
the distance to the score. Instead: find an upper bound, either by doubling from 1x (1, 2, 4,
... until a load fails) or from a given start (a failing start is the bound; a passing one
doubles on), then bisect between the highest passing and the lowest failing load until they
are ``resolution`` apart. Midpoints are rounded to multiples of the resolution, so the loads
tried are ones a review would quote. About log2(score) + log2(bound / resolution) trials.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .workload import load_problem

#: how :func:`check_search` names find_score's arguments (``act score`` passes its options)
ARGUMENTS = ("start", "resolution", "max_load")


@dataclass
class Search:
    """Outcome: ``score`` (None when no load tried passed) and every load tried, in order.
    ``capped``: the score is ``max_load``, which passed (the drive may do more)."""

    score: float | None
    tried: list[float] = field(default_factory=list)
    capped: bool = False


def _midpoint(low: float, high: float, resolution: float) -> float:
    """Halfway, on the resolution grid when a grid point lies strictly between."""
    mid = round((low + high) / 2 / resolution) * resolution
    return mid if low < mid < high else (low + high) / 2


def check_search(
    start: float | None,
    resolution: float,
    max_load: float,
    names: tuple[str, str, str] = ARGUMENTS,
) -> None:
    """ValueError naming (by ``names``) the first of ``start`` (when given), ``resolution`` and
    ``max_load`` that is not a finite number > 0, or a ``max_load`` below ``start``."""
    for name, value in zip(names, (start, resolution, max_load), strict=True):
        if value is not None and (problem := load_problem(value, name)):
            raise ValueError(problem)
    if start is not None and max_load < start:
        raise ValueError(f"{names[2]} ({max_load:g}) must be at least {names[0]} ({start:g})")


def find_score(
    passes: Callable[[float], bool],
    *,
    start: float | None = None,
    resolution: float = 1.0,
    max_load: float = 1024.0,
) -> Search:
    """Find the highest passing load with ``passes(load)`` (one trial per call); ValueError
    for arguments :func:`check_search` refuses."""
    check_search(start, resolution, max_load)
    search = Search(score=None)
    low, high = 0.0, None
    load = min(start or 1.0, max_load)
    while high is None:
        search.tried.append(load)
        if not passes(load):
            high = load
        elif load >= max_load:
            search.score, search.capped = load, True
            return search
        else:
            low, load = load, min(load * 2, max_load)
    while high - low > resolution:
        mid = _midpoint(low, high, resolution)
        search.tried.append(mid)
        if passes(mid):
            low = mid
        else:
            high = mid
    search.score = low or None
    return search

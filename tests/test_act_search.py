"""The ACT score search: doubling or a given start for an upper bound, then bisection.

The search only sees pass/fail per load, so a known boundary is given as that function here;
tests/test_act_cli.py runs the same search with fio trials.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from ssdlab.act import find_score


def drive(limit: float) -> Callable[[float], bool]:
    """The verdict of a drive that sustains up to ``limit`` x."""
    return lambda load: load <= limit


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 7, 24, 37, 64, 100, 127, 150, 311])
def test_doubling_then_bisection_finds_every_whole_boundary(limit: int) -> None:
    search = find_score(drive(limit + 0.5))
    assert search.score == limit and not search.capped
    assert all(load == int(load) for load in search.tried)  # whole multiples only
    assert len(set(search.tried)) == len(search.tried)  # no load tried twice
    assert len(search.tried) <= 2 * math.ceil(math.log2(limit + 1)) + 1


def test_far_fewer_trials_than_stepping_down() -> None:
    # a reviewer stepping down from 150x to a 37x drive runs 114 trials
    from_start = find_score(drive(37), start=150)
    assert from_start.score == 37
    assert from_start.tried == [150, 75, 38, 19, 28, 33, 36, 37]
    doubling = find_score(drive(37))
    assert doubling.tried == [1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37]


def test_passing_start_doubles_on() -> None:
    search = find_score(drive(100), start=30)
    assert search.tried[:3] == [30, 60, 120] and search.score == 100


def test_resolution() -> None:
    coarse = find_score(drive(37), resolution=4)
    assert coarse.score == 36 and coarse.tried[-1] - coarse.score <= 4
    fine = find_score(drive(2.6), resolution=0.25)
    assert fine.score == 2.5


def test_nothing_passes_and_cap() -> None:
    assert find_score(drive(0.3)).score is None
    assert find_score(drive(0.3), resolution=0.25).score == 0.25
    capped = find_score(drive(10_000), max_load=100)
    assert (capped.score, capped.capped, capped.tried[-1]) == (100, True, 100)


@pytest.mark.parametrize("bad", [{"resolution": 0}, {"start": -1}, {"max_load": 0}])
def test_bad_arguments(bad: dict) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        find_score(drive(1), **bad)

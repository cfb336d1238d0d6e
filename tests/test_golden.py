"""Frames are pinned: the checked-in demo run, the golden native runs (SMART, power, rounds,
ACT) and an imported tree of fio outputs load to exactly the frames recorded in
``tests/fixtures/golden/frames`` (recorded with ssdlab before the issue-14 redesign; see
``tests/fixtures/golden/build.py``). A change here is a change of what users get."""

from __future__ import annotations

import polars as pl
import pytest
from golden import GOLDEN, SOURCES, frames_of
from polars.testing import assert_frame_equal


@pytest.mark.parametrize("name", list(SOURCES))
def test_frames_are_the_recorded_ones(name: str) -> None:
    recorded = {p.stem: pl.read_parquet(p) for p in (GOLDEN / "frames" / name).glob("*.parquet")}
    loaded = frames_of(name)
    assert sorted(loaded) == sorted(recorded)
    for frame, expected in recorded.items():
        got = loaded[frame]
        assert got.schema == expected.schema, frame
        assert_frame_equal(got, expected, check_exact=True), frame

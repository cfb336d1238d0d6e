"""Frames are pinned: the checked-in demo run, the golden native runs (SMART, power, rounds,
ACT) and an imported tree of fio outputs load to exactly the frames recorded in
``tests/fixtures/golden/frames`` (recorded with ssdlab before the issue-14 redesign; see
``tests/fixtures/golden/build.py``). A change here is a change of what users get: a column
renamed on purpose is listed in ``golden.RENAMED`` (the recording is never re-made for it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from golden import ADDED, CORPORA, NEW_FRAMES, RENAMED, SOURCES, frames_of, recorded
from polars.testing import assert_frame_equal

import ssdlab
from ssdlab.results import load_frames


@pytest.mark.parametrize("name", list(SOURCES))
def test_frames_are_the_recorded_ones(name: str) -> None:
    expected_frames = recorded(name)
    loaded = frames_of(name)
    assert sorted(set(loaded) - NEW_FRAMES) == sorted(expected_frames)
    for frame, expected in expected_frames.items():
        got = loaded[frame].drop(ADDED.get(frame, ()), strict=False)
        # a renamed column may sit elsewhere (the summary puts its known columns first);
        # every other column keeps its place
        moved = set(RENAMED.get(frame, {}).values())
        assert [c for c in got.columns if c not in moved] == [
            c for c in expected.columns if c not in moved
        ], frame
        assert dict(got.schema) == dict(expected.schema), frame
        assert_frame_equal(got.select(expected.columns), expected, check_exact=True), frame


def test_the_act_corpus_trial_names_its_target_as_its_device() -> None:
    """The columns :data:`golden.ADDED` leaves out of ``act_trials``, pinned: a fio trial
    recorded before trials named devices ran on its directory's target."""
    added = frames_of("act")["act_trials"].select(ADDED["act_trials"])
    assert added.rows() == [("file /tmp/tmpzun4hw9d/act.bin (1 GiB)", False, False)]


@pytest.mark.parametrize("broken", ["fio.json", "fio_iops.1.log"])
def test_an_interrupted_step_with_unreadable_output_keeps_its_smart_captures(
    tmp_path: Path, broken: str
) -> None:
    """Step 2 interrupted and its fio output unreadable: it is left out of the fio frames,
    but its SMART snapshots (measured on their own) still count, as before the redesign;
    the power figures, read alone (``ssdlab power show``), say why the step has none."""
    run = tmp_path / "run"
    shutil.copytree(CORPORA / "telemetry", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["steps"][1]["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "steps" / "002-write-128k" / broken).write_text("not fio output\n")
    results = ssdlab.load(run)
    assert results.summary["step_index"].unique().to_list() == [1]
    assert results.smart["step_index"].to_list() == [1, 1, 2, 2]
    assert results.waf["step_index"].to_list() == [1, 2]
    power = load_frames(run, ["power"])["power"]
    if broken == "fio.json":
        assert power["step_index"].to_list() == [1]
    else:
        assert power["step_index"].to_list() == [1, 2] and not power["covered"][1]
        assert power["reason"][1].startswith(str(run / "steps" / "002-write-128k" / broken))

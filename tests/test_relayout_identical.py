"""The issue-26 re-layout changes nothing users get: the frames of every golden run and of a
real imported fio tree and ACT log, the text and chart data of their drive reviews, of
comparisons and of a rendered review are those recorded before the move
(``tests/relayout_fingerprint.py``, which says how to re-record)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from relayout_fingerprint import (
    RECORDING,
    REPORT,
    capture,
    fingerprints,
    rendered,
    versions,
    write_artifact,
)


def _recorded() -> dict[str, str]:
    """The recorded sha256 per item; a skip when the pinned packages are not those recorded."""
    recording = json.loads(RECORDING.read_text())
    recorded, installed = recording["versions"], versions()
    if differing := [name for name in installed if recorded.get(name) != installed[name]]:
        pytest.skip(
            "the recording's serialisation needs "
            + ", ".join(f"{n} {recorded.get(n)} (installed: {installed[n]})" for n in differing)
        )
    return recording["items"]


def _check(captured: dict[str, str], recorded: dict[str, str], artifact: str) -> None:
    got = fingerprints(captured)
    if got == recorded:
        return
    current = write_artifact(artifact, captured)
    differing = [item for item in recorded if got.get(item) != recorded[item]]
    added = [item for item in got if item not in recorded]
    pytest.fail(
        f"{len(differing)} items differ or are gone, {len(added)} are new; first: "
        f"{(differing + added)[:5]}; text in {current} (recorded.json beside it is the "
        "recording's, when made here)"
    )


def test_frames_reviews_and_comparisons_are_the_recorded_ones(tmp_path: Path) -> None:
    recorded = _recorded()
    _check(capture(tmp_path), {k: v for k, v in recorded.items() if k != REPORT}, "current")


@pytest.mark.slow
def test_the_rendered_review_is_the_recorded_one(tmp_path: Path) -> None:
    recorded = _recorded()
    _check(rendered(tmp_path), {REPORT: recorded[REPORT]}, "current-report")

"""A size-based step (``loops``) is planned by its bytes; one that ends at its time cap
before they are written is said in the review, not shown as a finished preconditioning."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.analysis.fill import fill_totals, preconditioning_steps
from ssdlab.review.drive import setup_section
from ssdlab.suite import builtin_suites, load_suite

SUITE = """
name = "capped"
[defaults]
ioengine = "psync"
direct = false
bs = "128k"

[[steps]]
name = "precondition-full"
rw = "write"
loops = 2
runtime_s = 600

[[steps]]
name = "precondition-paced"
rw = "write"
loops = 1
runtime_s = 1
options = { rate = "1m" }

[[steps]]
name = "precondition-ramped"  # fio leaves the ramp's bytes out: no plan to judge
rw = "write"
loops = 1
ramp_s = 0.5
runtime_s = 600
options = { rate = "16m" }

[[steps]]
name = "precondition-staggered"  # each job from its own offset to the end: 16 + 8 MiB
rw = "write"
loops = 1
numjobs = 2
runtime_s = 600
options = { offset_increment = "8m" }

[[steps]]
name = "read-4k"
rw = "randread"
bs = "4k"
runtime_s = 1
"""


@pytest.mark.parametrize("name", builtin_suites())
def test_builtin_size_based_steps_are_not_cut_by_a_measurement_time(name: str) -> None:
    """enterprise-review and three SNIA suites capped their 2x-capacity preconditioning at
    the 60 s of a measured step: a real drive got a fraction of it."""
    for step in load_suite(name).all_steps():
        if step.loops:
            assert step.runtime_s is None or step.runtime_s >= 86400, step.name


def test_a_fill_cut_by_its_cap_is_said(tmp_path: Path) -> None:
    suite = tmp_path / "capped.toml"
    suite.write_text(SUITE)
    out = tmp_path / "run"
    done = ssdlab_cli(
        "run", suite, "--out", out, "--target", tmp_path / "t.bin", "--target-size", "16m"
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = "ENDED AT ITS TIME CAP: "
    assert [line for line in done.stdout.splitlines() + done.stderr.splitlines() if said in line]
    notes = {record.name: record.notes for record in ssdlab.load(out).manifest.steps}
    for name in ("precondition-full", "precondition-ramped", "precondition-staggered", "read-4k"):
        assert notes[name] == [], name
    assert [n[:23] for n in notes["precondition-paced"]] == ["ended at its time cap: "]
    drive = DriveAnalysis(ssdlab.load(out))
    manifest = drive.results.manifest
    fills = preconditioning_steps(drive.steps, drive.fills, manifest)
    totals = {row["step"]: row for row in fill_totals(drive.steps, fills, manifest).to_dicts()}
    full, paced = totals["precondition-full"], totals["precondition-paced"]
    assert full["planned_bytes"] == full["io_bytes"] == 2 * 16 * 2**20  # it ran to its end
    # 1 MB/s for 1 s cannot write 16 MiB, however fast or loaded the machine
    assert paced["planned_bytes"] == 16 * 2**20 > 4 * paced["io_bytes"] > 0
    assert paced["cut_at_cap"] and not full["cut_at_cap"]
    for name in ("precondition-ramped", "precondition-staggered"):
        assert totals[name]["planned_bytes"] is None and not totals[name]["cut_at_cap"], name
    assert totals["precondition-staggered"]["io_bytes"] == 24 * 2**20
    said = [s for s in setup_section(drive).findings if "time cap" in s]
    assert len(said) == 1 and said[0].startswith("precondition-paced ended at its time cap")
    assert "of its planned 16.8 MB (" in said[0]

"""The plan of a run from Python (:func:`ssdlab.plan.plan`): the suite built as the run builds
it, each target planned and checked, a results directory that holds the run found, problems
listed rather than raised, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TINY_SUITE

from ssdlab.errors import SsdlabError
from ssdlab.plan import Resume, plan
from ssdlab.runner import RunOptions, prepare_run
from ssdlab.session import open_manifest


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SUITE)
    return path


def test_plan_of_a_file_target_with_a_fill_and_repeats(suite: Path, tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "t.bin"
    options = RunOptions(
        suite, out, targets=[target], target_size=32 * 2**20, fill_first="50%", repeat=2
    )
    planned = plan(options)
    assert planned.problems == [] and planned.kind == "target" and planned.writes
    assert [s.name for s in planned.suite.steps] == [
        "fill-first-seq-write-128k",
        "randread-4k-2jobs",
        "randrw70-8k-qd4",
        "randread-4k-2jobs.rep2",
        "randrw70-8k-qd4.rep2",
    ]
    assert planned.job_files == 5 and planned.fio_version.startswith("fio-")
    (only,) = planned.targets
    assert only.target is not None and only.resume is None and only.refused is None
    assert (only.target.path, only.target.kind, only.target.size_bytes) == (
        str(target),
        "file",
        32 * 2**20,
    )
    assert not out.exists() and not target.exists()  # nothing written


def test_plan_lists_what_the_run_would_refuse_and_finds_the_run_to_resume(
    suite: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    options = RunOptions(suite, out, targets=[tmp_path])  # a directory: no target
    prepared = prepare_run(options)
    open_manifest(out, prepared.suite, None, None, params={}, scale=1.0).save(out)
    planned = plan(options)
    (only,) = planned.targets
    assert only.target is None and only.refused and "regular file" in only.refused
    assert planned.problems == [f"target: {only.refused}"]
    assert only.resume == Resume(out, done=0, complete=False)
    with pytest.raises(SsdlabError, match="--max-spread needs --repeat 2 or more"):
        plan(RunOptions(suite, out, max_spread_pct=5.0))


BIG_BLOCK = """
name = "big-block"
[[steps]]
name = "seq-write-32m"
rw = "write"
bs = "32m"
runtime_s = 1
"""


def test_plan_refuses_what_run_refuses_before_anything_is_written(
    suite: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "big.toml"
    shared.write_text(BIG_BLOCK)
    temporary = plan(RunOptions(shared, tmp_path / "o1", scale=0.01))  # the default file
    assert len(temporary.problems) == 1 and "larger than" in temporary.problems[0]
    assert temporary.size_bytes >= 16 * 2**20  # as the run makes it: 16 MiB at least
    hosts = plan(RunOptions(suite, tmp_path / "o2", hosts="host-b=/dev/nvme0n1"))
    assert any("--destroy-data" in p and "host-b:/dev/nvme0n1" in p for p in hosts.problems)
    for bad, why in [
        ({"targets": "xy"}, "targets takes a list"),
        ({"out": ""}, "not an empty one"),
        ({"hosts": " "}, "--hosts is empty"),
        ({"destroy_data": ["loop0"]}, "destroy_data takes text"),
    ]:
        with pytest.raises(SsdlabError, match=why):
            RunOptions(suite, bad.pop("out", tmp_path / "o3"), **bad)
    existing = tmp_path / "a-file"
    existing.write_text("")
    with pytest.raises(SsdlabError, match="exists and is not a directory"):
        plan(RunOptions(suite, existing))

"""``ssdlab import --each``: several trees of real fio output imported as separate runs in one
process, a failing tree reported while the others import, clashes refused up front."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ssdlab_cli
from polars.testing import assert_frame_equal

import ssdlab
from ssdlab.console import plural
from ssdlab.errors import InputError
from ssdlab.imports import import_each, plan_each

NULL = ["--ioengine=null", "--size=16m", "--time_based=1", "--runtime=600ms", "--bs=4k"]


def fio_tree(root: Path, rws: list[str]) -> Path:
    """A bench-fio-like tree: a json+ result and windowed bw/iops/lat logs per workload."""
    root.mkdir(parents=True)
    for rw in rws:
        prefix = f"{rw}-iodepth-1-numjobs-2"
        subprocess.run(
            ["fio", "--name=bench", *NULL, f"--rw={rw}", "--numjobs=2", "--group_reporting=1",
             f"--write_bw_log={prefix}", f"--write_iops_log={prefix}",
             f"--write_lat_log={prefix}", "--log_avg_msec=200", "--output-format=json+",
             f"--output={rw}.json"],
            cwd=root, check=True, capture_output=True,
        )  # fmt: skip
    return root


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two drives' sweeps and a tree holding no fio result."""
    base = tmp_path_factory.mktemp("trees")
    empty = base / "notes"
    empty.mkdir()
    (empty / "readme.txt").write_text("drive C was not tested\n")
    return [
        fio_tree(base / "drive-a", ["randread", "randwrite"]),
        fio_tree(base / "drive-b", ["read"]),
        empty,
    ]


def test_each_tree_becomes_its_own_run_and_a_failure_does_not_stop_the_rest(
    trees: list[Path], tmp_path: Path
) -> None:
    root = tmp_path / "imported"
    proc = ssdlab_cli("import", "--each", *trees, "--out", root)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    for tree, results in zip(trees, (2, 1), strict=False):
        logs = len(list(tree.glob("*.log")))  # bw, iops, clat, slat, lat per job clone
        assert (
            f"{tree.name}: imported {plural(results, 'fio result')} with {logs} logs; "
            "skipped 0 files" in lines
        )
    assert any(
        line.startswith(f"failed {trees[2]}: ") and "no fio JSON result found" in line
        for line in lines
    )
    assert lines[-1] == "error: 1 of 3 trees failed to import"
    assert proc.stdout.splitlines() == [str(root / "drive-a"), str(root / "drive-b")]
    assert not (root / "notes").exists()

    single = tmp_path / "single"
    assert ssdlab_cli("import", trees[0], "--out", single).returncode == 0
    each, alone = ssdlab.load(root / "drive-a"), ssdlab.load(single)
    assert each.manifest.label == alone.manifest.label == "drive-a"
    for name in ("summary", "timeseries", "latency_hist", "percentiles"):
        frames = [getattr(r, name).drop("run_id") for r in (each, alone)]
        assert_frame_equal(*frames)
    assert ssdlab.load(root / "drive-b").summary["rw"].unique().to_list() == ["read"]


def test_clashes_are_refused_before_anything_is_imported(trees: list[Path], tmp_path: Path) -> None:
    twin = fio_tree(tmp_path / "other" / "drive-a", ["read"])
    proc = ssdlab_cli("import", "--each", trees[1], trees[0], twin, "--out", tmp_path / "r")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (
        f"error: {trees[0]} and {twin} would both import into {tmp_path / 'r' / 'drive-a'}\n"
    )
    assert not (tmp_path / "r").exists()

    held = tmp_path / "held"
    assert ssdlab_cli("import", trees[0], "--out", held / "drive-a").returncode == 0
    proc = ssdlab_cli("import", "--each", trees[1], trees[0], "--out", held)
    assert proc.returncode == 1 and "already holds results" in proc.stderr
    assert not (held / "drive-b").exists()

    proc = ssdlab_cli("import", "--each", *trees[:2], "--label", "x", "--out", tmp_path / "l")
    assert proc.returncode == 1 and "--label names one run" in proc.stderr


def test_outputs_may_not_overlap_the_trees(trees: list[Path]) -> None:
    inside = trees[0] / "imports"
    with pytest.raises(InputError, match="overlaps the tree"):
        plan_each(trees[:2], inside)
    with pytest.raises(InputError, match="overlaps the tree"):
        plan_each([trees[0], trees[0].parent], trees[0].parent / "out")
    plan = plan_each(trees[:2], Path("runs"))
    assert [item.out for item in plan] == [Path("runs/drive-a"), Path("runs/drive-b")]


FORKED = """
import json, os, sys
from pathlib import Path
import ssdlab.imports as imports

real = imports.import_results

def recorded(paths, out, **options):  # which process imported the tree
    report = real(paths, out, **options)
    (out / "pid").write_text(str(os.getpid()))
    return report

imports.import_results = recorded
can_fork = imports._can_fork()
plan = imports.import_each([Path(a) for a in sys.argv[2:]], Path(sys.argv[1]), workers=2)
print(json.dumps({"pid": os.getpid(), "can_fork": can_fork,
                  "errors": {p.tree.name: str(p.error) for p in plan if p.error}}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="trees fork on Linux only")
def test_trees_import_in_forked_children_exactly_as_in_one_process(
    trees: list[Path], tmp_path: Path
) -> None:
    """A fresh process forks a child per tree (polars' threads not yet started in it); what
    the children write equals what one process writes, and a failed tree's error arrives."""
    forked = tmp_path / "forked"
    proc = subprocess.run(
        [sys.executable, "-c", FORKED, forked, *trees],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    said = json.loads(proc.stdout)
    assert said["can_fork"]
    assert list(said["errors"]) == ["notes"] and "no fio JSON result" in said["errors"]["notes"]
    pids = {(forked / t.name / "pid").read_text() for t in trees[:2]}
    assert str(said["pid"]) not in pids and len(pids) == 2

    alone = tmp_path / "alone"
    plan = import_each(trees[:2], alone, workers=1)  # this process: polars has started
    assert all(item.report is not None for item in plan)
    for tree in trees[:2]:
        each, one = ssdlab.load(forked / tree.name), ssdlab.load(alone / tree.name)
        assert each.manifest.steps == one.manifest.steps
        for name in ("summary", "timeseries", "latency_hist", "percentiles"):
            assert_frame_equal(*(getattr(r, name).drop("run_id") for r in (each, one)))

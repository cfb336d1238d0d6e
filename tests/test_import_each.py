"""``ssdlab import --each``: several trees of real fio output imported as separate runs in one
process, a failing tree reported while the others import, clashes refused up front."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import ssdlab_cli
from polars.testing import assert_frame_equal

import ssdlab
from ssdlab.errors import InputError
from ssdlab.imports import plan_each

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
            f"{tree.name}: imported {results} fio results with {logs} logs; skipped 0 files"
            in lines
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

"""The catalog of a results root whose path holds characters SQL or DuckDB's globs give a
meaning to (``[ ] * ?``, quotes, spaces): it shows the runs under that root, never a
sibling's, and never fails with a raw DuckDB error (issue 24)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from ssdlab.catalog import catalog
from ssdlab.telemetry.history import import_smart_history

DEMO = ROOT / "data" / "quick-demo"
SMARTCTL = ROOT / "tests" / "fixtures" / "telemetry" / "smart" / "smartctl_sata_micron.json"


def _run(root: Path, label: str, serial: str) -> None:
    """A results directory (the demo run labelled ``label``) and a SMART history of one
    drive whose serial number is ``serial``, under ``root``."""
    shutil.copytree(DEMO, root / "run")
    manifest = root / "run" / "manifest.json"
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"label": label}))
    captures = root.parent / f"captures-{label}"
    captures.mkdir()
    doc = json.loads(SMARTCTL.read_text()) | {"serial_number": serial}
    (captures / "drive.json").write_text(json.dumps(doc))
    import_smart_history([captures], root / "history")


@pytest.mark.parametrize(
    ("name", "sibling"),
    [("lab[1]", "lab1"), ("a*b", "aXb"), ("x?y", "xZy"), ("it's", None), ("with space", None)],
)
def test_catalog_shows_only_the_runs_under_its_root(
    tmp_path: Path, name: str, sibling: str | None
) -> None:
    root = tmp_path / name
    _run(root, "mine", "MINE")
    if sibling is not None:  # what the root's name would match as a glob
        _run(tmp_path / sibling, "other", "OTHER")
    con = catalog(root, database=":memory:")
    assert con.sql("select label from runs").fetchall() == [("mine",)]
    assert con.sql("select distinct results_dir from summary").fetchall() == [("run",)]
    assert con.sql("select distinct serial from smart_history").fetchall() == [("MINE",)]
    assert con.sql("select serial from fleet_drives").fetchall() == [("MINE",)]
    assert con.sql("select * from skipped").fetchall() == []


def test_catalog_of_a_glob_root_without_sibling(tmp_path: Path) -> None:
    """``lab[1]`` with no ``lab1`` beside it: read as itself (once a raw DuckDB error)."""
    root = tmp_path / "lab[1]"
    _run(root, "mine", "MINE")
    con = catalog(root, database=":memory:")
    assert con.sql("select label from runs").fetchall() == [("mine",)]
    assert con.execute("select count(*) from summary").fetchone()[0] > 0

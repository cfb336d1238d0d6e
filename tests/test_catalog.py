"""The results catalog (Parquet + DuckDB), the explore notebook, and ``ssdlab lab``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import nbformat
import polars as pl
import pytest
from conftest import ROOT, ssdlab_cli
from test_fleet import _free_port

import ssdlab
from ssdlab import results as results_module
from ssdlab.catalog import catalog
from ssdlab.layout import CATALOG_DIR
from ssdlab.pipeline import RunContext
from ssdlab.report import execute_notebook
from ssdlab.report.renderer import VEGA5_MIME, VEGALITE_MIME
from ssdlab.resources import notebook_path
from ssdlab.telemetry import store
from ssdlab.telemetry.attach import ReaderOptions, attach_power

DEMO = ROOT / "data" / "quick-demo"


def power_frame(context: RunContext) -> pl.DataFrame:
    """A registered extra frame: one made-up power row per step (see FRAME_BUILDERS)."""
    steps = context.manifest.steps
    return pl.DataFrame({"step_index": [s.index for s in steps], "avg_w": [5.0] * len(steps)})


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    shutil.copytree(DEMO, root / "lab-a" / "demo")
    proc = ssdlab_cli("import", DEMO / "steps", "--out", root / "imported", "--label", "imp")
    assert proc.returncode == 0, proc.stderr
    (root / "broken").mkdir()
    (root / "broken" / "manifest.json").write_text("{}")
    return root


def test_frames_of_every_run_queryable_with_sql(root: Path, request: pytest.FixtureRequest) -> None:
    results_module.FRAME_BUILDERS.register("power", power_frame)
    request.addfinalizer(lambda: results_module.FRAME_BUILDERS.unregister("power"))
    con = catalog(root)
    tables = set(con.sql("show tables").pl()["name"].to_list())
    assert {
        "runs",
        "summary",
        "timeseries",
        "latency_hist",
        "percentiles",
        "power",
        "skipped",
    } <= tables
    runs = con.table("runs").pl().sort("results_dir")
    assert runs["results_dir"].to_list() == ["imported", "lab-a/demo"]
    assert runs["label"].to_list() == ["imp", ssdlab.load(DEMO).manifest.label]
    counts = con.sql(
        "select results_dir, count(*) as n, sum(iops) as iops from summary group by 1 order by 1"
    ).pl()
    demo = ssdlab.load(DEMO).summary
    assert counts["n"].to_list() == [demo.height, demo.height]
    assert counts["iops"].to_list() == pytest.approx([demo["iops"].sum()] * 2)
    power = con.sql("select results_dir, avg(avg_w) as w, count(*) as n from power group by 1").df()
    assert sorted(power["results_dir"]) == ["imported", "lab-a/demo"]  # pandas too
    assert set(power["w"]) == {5.0}
    (skipped,) = con.table("skipped").pl().iter_rows(named=True)
    assert skipped["results_dir"] == "broken" and "invalid manifest" in skipped["error"]
    con.close()
    assert (root / CATALOG_DIR / "catalog.duckdb").is_file()


def test_cache_is_reused_and_follows_changes(root: Path) -> None:
    catalog(root).close()
    frames = root / CATALOG_DIR / "frames"
    before = {p: p.stat().st_mtime_ns for p in frames.glob("*/[!_]*.parquet")}  # not _empty
    catalog(root).close()
    assert {p: p.stat().st_mtime_ns for p in frames.glob("*/[!_]*.parquet")} == before

    manifest_path = root / "imported" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["label"] = "renamed"
    manifest_path.write_text(json.dumps(manifest))
    con = catalog(root)
    labels = con.sql("select results_dir, label from runs order by 1").pl()["label"]
    assert labels.to_list() == ["renamed", ssdlab.load(DEMO).manifest.label]
    con.close()
    old = Counter(p.stem for p in before)
    new = Counter(p.stem for p in frames.glob("*/[!_]*.parquet"))
    (kept,) = set(old) & set(new)  # the unchanged run's files stay; the renamed one's replaced
    assert len(new) == 2 and sorted(new.values()) == sorted(old.values())
    assert all(p.stat().st_mtime_ns == before[p] for p in frames.glob(f"*/{kept}.parquet"))


def test_explore_notebook_has_interactive_charts(root: Path, tmp_path: Path) -> None:
    nb = execute_notebook(
        notebook_path("explore"), tmp_path / "explore.ipynb", {"results_root": str(root)}
    )
    nbformat.validate(nb)
    charts = [
        o.data
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if VEGALITE_MIME in o.get("data", {})
    ]
    assert len(charts) == 2
    for data in charts:
        spec = json.dumps(data[VEGALITE_MIME])
        assert '"params"' in spec and '"tooltip"' in spec  # selections and tooltips
        assert data[VEGA5_MIME]["$schema"].endswith("vega/v5.json")  # what JupyterLab draws
    assert '"bind": "scales"' in json.dumps(charts[0][VEGALITE_MIME])  # zoom and pan
    tables = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "text/html" in o.get("data", {})
    ]
    assert len(tables) >= 4  # show tables, runs, the SQL query, one run's summary


def test_lab_opens_jupyterlab_on_the_root(root: Path) -> None:
    port, token = _free_port("127.0.0.1"), "ssdlab-test"  # this worker's block of ports
    lab = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ssdlab",
            "lab",
            str(root),
            "--no-browser",
            "--port",
            str(port),
            f"--IdentityProvider.token={token}",
            "--ServerApp.port_retries=0",  # taken meanwhile: fail, never answer elsewhere
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/api/contents/explore.ipynb?content=0&token={token}"
    try:
        for _ in range(120):
            assert lab.poll() is None, lab.stderr.read() if lab.stderr else ""
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    listed = json.load(response)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    assert listed["name"] == "explore.ipynb" and listed["type"] == "notebook"
    copied = nbformat.read(root / "explore.ipynb", as_version=4)
    assert copied.cells[0].source.startswith('results_root = "."')


GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "corpora"


def test_telemetry_act_frames_have_views_and_drive_columns_are_typed(tmp_path: Path) -> None:
    """Power, WAF, endurance and ACT trials are views of any catalog (empty, with their
    columns, when no run has them), and the drive's columns of ``runs`` are typed."""
    only_demo = tmp_path / "demo-only"
    shutil.copytree(DEMO, only_demo / "demo")
    con = catalog(only_demo, database=":memory:")
    for view in ("power", "waf", "endurance", "act_trials", "act_slices", "smart"):
        assert con.execute(f"select count(*) from {view}").fetchone() == (0,), view
    assert "avg_w" in con.table("power").columns and "results_dir" in con.table("power").columns
    types = dict(con.execute("select column_name, column_type from (describe runs)").fetchall())
    assert types["capacity_bytes"] == "BIGINT" and types["target_bytes"] == "BIGINT"
    assert types["logical_block_bytes"] == "INTEGER" and types["model"] == "VARCHAR"
    assert types["started"].startswith("TIMESTAMP") and types["steps_ok"] == "BIGINT"
    con.close()

    mixed = tmp_path / "mixed"
    for name in ("telemetry", "act"):
        shutil.copytree(GOLDEN / name, mixed / name)
    con = catalog(mixed, database=":memory:")
    counts = {
        view: dict(con.sql(f"select results_dir, count(*) from {view} group by 1").fetchall())
        for view in ("power", "waf", "endurance", "act_trials")
    }
    assert counts["power"].get("telemetry", 0) > 0 and counts["waf"].get("telemetry", 0) > 0
    assert counts["endurance"].get("telemetry", 0) > 0
    assert counts["act_trials"] == {"act": ssdlab.load(mixed / "act").act_trials.height}
    runs = con.sql("select results_dir, target_kind, target_bytes from runs order by 1").fetchall()
    assert [r[0] for r in runs] == ["act", "telemetry"] and all(r[2] > 0 for r in runs)
    con.close()

    trace = store.read_trace(mixed / "telemetry")  # replaced at 9.5 W: no manifest changes
    csv = tmp_path / "trace.csv"
    trace.with_columns(power_w=pl.lit(9.5)).write_csv(csv)
    columns = ReaderOptions(columns={"time": "time_s", "power": "power_w"})
    attach_power(mixed / "telemetry", csv, format="csv", options=columns, replace=True)
    con = catalog(mixed, database=":memory:")
    assert set(con.sql("select avg_w from power").pl()["avg_w"]) == {9.5}
    con.close()


def test_smart_histories_have_snapshot_drive_and_model_views(tmp_path: Path) -> None:
    """A SMART history beside a run: its snapshots, its drives' endurance (cached, reused) and
    the by-model figures; a history that cannot be read is listed in ``skipped``."""
    from test_fleet_endurance import fleet_rows, write_history

    shutil.copytree(DEMO, tmp_path / "demo")
    write_history(tmp_path / "fleet" / "h1", fleet_rows())
    (tmp_path / "fleet" / "broken").mkdir()
    (tmp_path / "fleet" / "broken" / "smart_history.json").write_text("{}")
    con = catalog(tmp_path, database=":memory:")
    snapshots = con.sql("select history_dir, count(*) from smart_history group by 1").fetchall()
    assert snapshots == [("fleet/h1", len(fleet_rows()))]
    drives = con.sql(
        "select serial, lifetime_waf, wear_pct_per_day, history_dir from fleet_drives order by 1"
    ).fetchall()
    assert [d[0] for d in drives] == ["S1", "S2", "S3", "S4", "S5"]
    assert drives[0][1:3] == pytest.approx((1.5, 0.1)) and drives[0][3] == "fleet/h1"
    models = dict(con.sql("select model, lifetime_waf_median from fleet_models").fetchall())
    assert models["M"] == pytest.approx(1.5) and models["N"] is None
    (skipped,) = con.table("skipped").fetchall()
    assert skipped[0] == "fleet/broken" and "not a SMART history" in skipped[1]
    assert con.execute("select count(*) from runs").fetchone() == (1,)
    con.close()
    cached = next((tmp_path / CATALOG_DIR / "frames" / "fleet_drives").glob("[!_]*.parquet"))
    before = cached.stat().st_mtime_ns
    catalog(tmp_path, database=":memory:").close()
    assert cached.stat().st_mtime_ns == before

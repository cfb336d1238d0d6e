"""``ssdlab sql``: one read-only query over the catalog's views (issue 25), in every format,
with one-line errors; what DuckDB may not do (write, attach, install, read other files) is
refused, and the command loads DuckDB only when it runs."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT
from test_cli_startup import loaded

from ssdlab.catalog import catalog, query
from ssdlab.errors import InputError
from ssdlab.layout import CATALOG_DIR
from ssdlab.telemetry.history import import_smart_history

DEMO = ROOT / "data" / "quick-demo"
SMARTCTL = ROOT / "tests" / "fixtures" / "telemetry" / "smart" / "smartctl_sata_micron.json"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs (one under a name DuckDB would take as a glob) and a SMART history."""
    root = tmp_path_factory.mktemp("sql")
    shutil.copytree(DEMO, root / "run")
    shutil.copytree(DEMO, root / "lab[1]")
    captures = root.parent / f"{root.name}-captures"
    captures.mkdir()
    shutil.copy(SMARTCTL, captures / "drive.json")
    import_smart_history([captures], root / "history")
    return root


def sql(*args: str | Path, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """``ssdlab sql ARGS`` as a user runs it, on a terminal ``columns`` wide."""
    env = os.environ | {"COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", "sql", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_query_gives_the_catalogs_views(root: Path) -> None:
    con = catalog(root, database=":memory:")
    for text in (
        "select label, results_dir, steps from runs order by results_dir",
        "select results_dir, step, direction, iops from summary order by all",
        "select serial, history_dir from smart_history",
        "select count(*) as n from timeseries",
    ):
        assert query(root, text).equals(con.sql(text).pl()), text
    assert query(root, "select distinct results_dir from summary order by 1")[
        "results_dir"
    ].to_list() == ["lab[1]", "run"]


#: statements that would write, attach, install or change the settings: refused by kind
REFUSED = {
    "copy (select 1 as a) to '{out}/x.csv'": "COPY",
    "copy summary to '{out}/x.parquet' (format parquet)": "COPY",
    "attach '{out}/x.duckdb' as other": "ATTACH",
    "install httpfs": "INSTALL",
    "load httpfs": "LOAD",
    "export database '{out}/x'": "EXPORT",
    "set enable_external_access = true": "SET",
    "create table t as select 1": "CREATE",
    "pragma enable_profiling": "PRAGMA",
    "/* a comment */ copy (select 1) to '{out}/x.csv'": "COPY",
}


@pytest.mark.parametrize("text", list(REFUSED))
def test_writing_statements_are_refused(root: Path, tmp_path: Path, text: str) -> None:
    with pytest.raises(
        InputError, match=f"^SQL: {REFUSED[text]} refused: the catalog is read-only"
    ):
        query(root, text.format(out=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_query_reads_nothing_but_the_views(root: Path, tmp_path: Path) -> None:
    """The statement check is not the only guard: inside a SELECT, DuckDB itself refuses any
    file but the views' (the run's own files included) and cannot be unlocked."""
    for text in (
        "select * from read_csv('/etc/passwd')",
        "select * from read_text('/etc/hostname')",
        f"select * from read_json('{root}/run/manifest.json')",
        "select * from glob('/*')",
    ):
        with pytest.raises(InputError, match=r"^SQL: Permission Error: .* reads its views only"):
            query(root, text)
    with pytest.raises(InputError, match="one query, not 2 statements"):
        query(root, "select 1; copy (select 1) to 'x.csv'")
    with pytest.raises(InputError, match="Expected a single SELECT statement"):
        query(root, f"select * from query('copy (select 1) to ''{tmp_path}/x.csv''')")
    settings = "select current_setting('enable_external_access') as e"
    assert query(root, settings)["e"].to_list() == [False]
    assert list(tmp_path.iterdir()) == []


def test_the_cached_frames_cannot_be_overwritten(root: Path) -> None:
    """The views' own Parquet files are readable, but COPY onto one is refused."""
    cached = sorted((root / CATALOG_DIR).rglob("*.parquet"))[0]
    before = cached.read_bytes()
    with pytest.raises(InputError, match="COPY refused"):
        query(root, f"copy (select 1 as a) to '{cached}' (format parquet, use_tmp_file false)")
    assert cached.read_bytes() == before


def test_errors_are_one_line_naming_the_problem(root: Path, tmp_path: Path) -> None:
    cases = {
        ("select * from summry",): "Table with name summry does not exist",
        ("selec 1",): 'syntax error at or near "selec"',
        ("copy (select 1) to 'x.csv'",): "COPY refused",
        ("select * from read_csv('/etc/passwd')",): "/etc/passwd",
    }
    for (text,), problem in cases.items():
        proc = sql(root, text)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and problem in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    unknown = sql(root, "select * from summry").stderr
    assert "the views: " in unknown and "smart_history" in unknown and "LINE 1" not in unknown
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("")
    for path, problem in (
        (tmp_path / "missing", "missing: no such directory"),
        (tmp_path / "file", "file: not a directory"),
        (tmp_path / "empty", "empty: no results directory (manifest.json) or SMART history"),
    ):
        proc = sql(path, "select 1")
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1
        assert problem in proc.stderr, proc.stderr
    assert not (tmp_path / "empty" / CATALOG_DIR).exists()  # refused before any cache


def test_csv_and_json_give_every_row_exactly(root: Path) -> None:
    text = "select results_dir, step, direction, iops, clat_p99_ns from summary order by all"
    frame = query(root, text)
    csv = sql(root, text, "--format", "csv")
    assert csv.returncode == 0 and csv.stderr == ""
    assert pl.read_csv(io.StringIO(csv.stdout)).equals(frame)
    given = sql(root, text, "-f", "json")
    assert given.returncode == 0 and json.loads(given.stdout) == frame.to_dicts()
    nested = sql(root, "select list(step) as steps from summary", "--format", "csv")
    assert nested.returncode == 1 and "'steps' holds lists" in nested.stderr


def test_json_counts_what_it_cannot_write_as_a_number(root: Path) -> None:
    proc = sql(root, "select 'nan'::double as x, 'inf'::double as y, 1.5 as z", "-f", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == [{"x": None, "y": None, "z": 1.5}]
    assert "2 NaN or infinite value(s) written as null" in proc.stderr


def test_interval_columns_come_as_text(root: Path) -> None:
    frame = query(root, "select max(ended) - min(started) as span, interval 3 day as d from runs")
    assert frame.schema == pl.Schema({"span": pl.String, "d": pl.String})
    assert frame["d"].to_list() == ["3 days"]


def test_table_fits_an_80_column_terminal(root: Path) -> None:
    narrow = sql(root, "select results_dir, steps from runs order by results_dir")
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    assert "results_dir" in lines[1] and "lab[1]" in narrow.stdout and lines[-1] == "(2 rows)"
    wide = sql(root, "select * from summary order by all limit 2")  # about 30 columns
    assert wide.returncode == 0, wide.stderr
    assert max(map(len, wide.stdout.splitlines())) <= 80
    columns = query(root, "select * from summary limit 0").columns
    records = [line.split()[0] for line in wide.stdout.splitlines() if line[:1].isalpha()]
    assert records == columns * 2  # every column of both rows, one a line
    assert "-[ row 2 ]-" in wide.stdout and wide.stdout.endswith("(2 rows)\n")


def test_table_says_when_it_shows_the_first_rows_only(root: Path) -> None:
    proc = sql(root, "select range as n from range(1005)")
    assert proc.stdout.endswith("(1,005 rows; the first 1,000 shown (csv and json give all))\n")
    assert "│ 999 │" in proc.stdout and "│ 1000 │" not in proc.stdout


def test_help_lists_every_view(root: Path) -> None:
    con = catalog(root, database=":memory:")
    names = {
        name
        for (name,) in con.execute(
            "select table_name from duckdb_tables() union select view_name from duckdb_views() "
            "where not internal"
        ).fetchall()
    }
    proc = sql("--help", columns=200)
    assert proc.returncode == 0
    helped = {word.strip(",.;:()") for word in proc.stdout.split()}
    assert names <= helped, names - helped


def test_sql_help_loads_no_data_library(root: Path) -> None:
    assert loaded("sql", "--help") == []
    assert "duckdb" in loaded("sql", str(root), "select 1")  # the probe sees it when run

"""A results root as one dataset: every results directory's tidy frames as Parquet, queried
with SQL through an embedded DuckDB database (no server).

``catalog(root)`` finds every results directory at or below ``root``, caches its frames as
Parquet under ``root/.ssdlab-catalog/frames/<frame>/`` (rebuilt when a manifest changes) and
returns a DuckDB connection to ``root/.ssdlab-catalog/catalog.duckdb`` with one view per
frame over all runs::

    con = ssdlab.catalog("results")
    con.sql("select label, step, iops from summary where direction = 'read'").pl()
    con.table("runs").df()   # pandas

Views: ``runs`` (one row per results directory: the run, its host, and the drive with typed
columns: ``capacity_bytes`` BIGINT, ``logical_block_bytes``/``physical_block_bytes``
INTEGER, ``model``, ``serial``, ``firmware``, ``transport``, the target's path, kind and
bytes), ``summary``, ``timeseries``, ``latency_hist``, ``percentiles``, ``snapshots``,
``rounds``, ``steady_state`` and every registered extra frame: ``smart``, ``waf``,
``power``, ``power_trace``, ``power_idle``, ``endurance``, ``act_trials``, ``act_slices``
and plug-ins'. A frame no run has is still a view, empty, with its columns and types, so a
query over ``power`` or ``act_trials`` works on any catalog. Every row carries ``run_id`` and
``results_dir`` (relative to the root). Results directories that cannot be loaded are listed
in the table ``skipped`` (``results_dir``, ``error``).

Fleet SMART histories (directories ``ssdlab smart import`` wrote) at or below the root have
views too, each row with ``history_dir`` (relative to the root): ``smart_history`` (every
snapshot, read from the history's own Parquet), ``fleet_drives`` (one row per drive and
history: :func:`~ssdlab.analysis.fleet_endurance.drive_endurance`, cached like the frames)
and the table ``fleet_models`` (:func:`~ssdlab.analysis.fleet_endurance.model_endurance` of
every history's drives together). Histories that cannot be read are listed in ``skipped``.

``query(root, sql)`` (``ssdlab sql``) runs one query over the same views, read-only: only a
SELECT statement runs, and DuckDB's configuration is locked with external access off and only
the views' Parquet files allowed, so no query writes, attaches, installs or reads other files.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb
import polars as pl

from . import __version__
from .analysis.fleet_endurance import drive_endurance, model_endurance
from .atomic import write_bytes_atomic
from .discover import find_marked
from .errors import InputError, SsdlabError
from .layout import (
    CATALOG_DATABASE,
    CATALOG_DIR,
    CATALOG_EMPTY,
    MANIFEST,
    POWER_DIR,
    POWER_TRACE,
    SMART_HISTORY,
    cached_frame,
    cached_frames,
    catalog_frames,
    frame_file,
)
from .results import FRAME_BUILDERS, Results, load
from .telemetry.history import FRAME as HISTORY
from .telemetry.history import SCHEMA as HISTORY_SCHEMA
from .telemetry.history import scan_smart_history

#: the layout of the cached frames; a change rebuilds every cache
CATALOG_FORMAT = 2
#: the ``runs`` view: one row per results directory, the drive's columns typed
RUNS_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "run_id": pl.String,
    "label": pl.String,
    "results_dir": pl.String,
    "path": pl.String,
    "source": pl.String,
    "suite": pl.String,
    "status": pl.String,
    "started": pl.Datetime("us", "UTC"),
    "ended": pl.Datetime("us", "UTC"),
    "host": pl.String,
    "model": pl.String,
    "serial": pl.String,
    "firmware": pl.String,
    "transport": pl.String,
    "capacity_bytes": pl.Int64,
    "logical_block_bytes": pl.Int32,
    "physical_block_bytes": pl.Int32,
    "target_path": pl.String,
    "target_kind": pl.String,
    "target_bytes": pl.Int64,
    "temporary_target": pl.Boolean,
    "scale": pl.Float64,
    "fio_version": pl.String,
    "ssdlab_version": pl.String,
    "steps": pl.Int64,
    "steps_ok": pl.Int64,
}
CORE_FRAMES = (
    "summary",
    "timeseries",
    "latency_hist",
    "percentiles",
    "snapshots",
    "rounds",
    "steady_state",
)


def _key(root: Path, results_dir: Path, marker: str = MANIFEST) -> str:
    """Cache key of a results directory (or history): its place under the root, its
    manifest's (record's) state and its power trace's (``power attach --replace`` changes
    no manifest), and the ssdlab version and frame builders that made the frames."""
    stat = (results_dir / marker).stat()
    builders = ",".join(f"{k}={FRAME_BUILDERS.origin(k)}" for k in sorted(FRAME_BUILDERS))
    text = f"{results_dir.relative_to(root)}|{stat.st_mtime_ns}|{stat.st_size}|{__version__}"
    with contextlib.suppress(OSError):
        trace = (results_dir / POWER_DIR / POWER_TRACE).stat()
        text += f"|{trace.st_mtime_ns}|{trace.st_size}"
    text += f"|{CATALOG_FORMAT}"
    return hashlib.sha1(f"{text}|{builders}".encode()).hexdigest()[:16]


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _run_row(results: Results, relative: str) -> pl.DataFrame:
    m = results.manifest
    target = m.target
    device = (target.device or {}) if target else {}
    block = target is not None and target.kind == "block"
    row = {
        "run_id": m.run_id,
        "label": m.label,
        "results_dir": relative,
        "path": str(results.path.resolve()),
        "source": m.source,
        "suite": m.suite,
        "status": m.status,
        "started": m.started,
        "ended": m.ended,
        "host": m.host.hostname if m.host else None,
        "model": device.get("model"),
        "serial": device.get("serial"),
        "firmware": device.get("firmware"),
        "transport": device.get("transport"),
        "capacity_bytes": _int(device.get("size_bytes")) or (target.size_bytes if block else None),
        "logical_block_bytes": _int(device.get("logical_block_bytes")),
        "physical_block_bytes": _int(device.get("physical_block_bytes")),
        "target_path": target.path if target else None,
        "target_kind": target.kind if target else None,
        "target_bytes": target.size_bytes if target else None,
        "temporary_target": target.temporary if target else None,
        "scale": m.scale,
        "fio_version": m.fio_version or None,
        "ssdlab_version": m.ssdlab_version or None,
        "steps": len(m.steps),
        "steps_ok": sum(s.status == "ok" for s in m.steps),
    }
    return pl.DataFrame([row], schema=RUNS_SCHEMA)


def _frames(results: Results, relative: str) -> dict[str, pl.DataFrame]:
    """Every non-empty frame of a run, tagged with ``run_id`` and ``results_dir``."""
    frames = {name: getattr(results, name) for name in CORE_FRAMES} | results.extra
    tagged = {}
    for name, frame in frames.items():
        if "run_id" not in frame.columns:
            frame = frame.with_columns(run_id=pl.lit(results.manifest.run_id, pl.String))
        tagged[name] = frame.with_columns(results_dir=pl.lit(relative, pl.String))
    return tagged | {"runs": _run_row(results, relative)}


def _write_parquet(frame: pl.DataFrame, path: Path) -> None:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    write_bytes_atomic(path, buffer.getvalue())


def sync(
    root: Path | str, found: dict[str, list[Path]] | None = None
) -> tuple[Path, list[tuple[str, str]]]:
    """Bring the Parquet cache of ``root`` up to date; return its frames directory and the
    results directories that could not be loaded (relative path, error). ``found``: what
    :func:`~ssdlab.discover.find_marked` finds under ``root``, when the caller has it."""
    root = Path(root)
    frames_dir = catalog_frames(root)
    found = find_marked(root) if found is None else found
    current = {d: _key(root, d) for d in found[MANIFEST]}
    histories = {d: _key(root, d, SMART_HISTORY) for d in found[SMART_HISTORY]}
    valid = set(current.values()) | set(histories.values())
    for stale in cached_frames(frames_dir):
        if stale.stem not in valid and stale.name != CATALOG_EMPTY:
            stale.unlink()
    skipped = []
    for results_dir, key in current.items():
        if cached_frame(frames_dir, "runs", key).is_file():
            continue
        relative = str(results_dir.relative_to(root))
        try:
            results = load(results_dir)
        except SsdlabError as exc:
            skipped.append((relative, str(exc)))
            continue
        frames = _frames(results, relative)
        runs = frames.pop("runs")
        for name, frame in frames.items():
            if frame.height:
                _write_parquet(frame, cached_frame(frames_dir, name, key))
            # the frame's columns, for a view without rows
            empty = frames_dir / name / CATALOG_EMPTY
            if not empty.is_file() or frame.height == 0:
                _write_parquet(frame.clear(), empty)
        if not (frames_dir / "runs" / CATALOG_EMPTY).is_file():
            _write_parquet(runs.clear(), frames_dir / "runs" / CATALOG_EMPTY)
        _write_parquet(runs, cached_frame(frames_dir, "runs", key))  # last: marks it complete
    skipped += _sync_histories(root, frames_dir, histories)
    return frames_dir, skipped


def _sync_histories(
    root: Path, frames_dir: Path, histories: dict[Path, str]
) -> list[tuple[str, str]]:
    """Cache each SMART history's ``fleet_drives`` rows; the histories that cannot be read."""
    skipped = []
    for history, key in histories.items():
        cached = cached_frame(frames_dir, "fleet_drives", key)
        if cached.is_file():
            continue
        relative = str(history.relative_to(root))
        try:
            drives = drive_endurance(scan_smart_history(history))
        except (SsdlabError, pl.exceptions.PolarsError) as exc:
            skipped.append((relative, str(exc)))
            continue
        _write_parquet(drives.with_columns(history_dir=pl.lit(relative, pl.String)), cached)
    empty = pl.DataFrame(schema=HISTORY_SCHEMA)
    for name, frame in (("fleet_drives", drive_endurance(empty)), (HISTORY, empty)):
        if not (frames_dir / name / CATALOG_EMPTY).is_file():
            tagged = frame.with_columns(history_dir=pl.lit(None, pl.String))
            _write_parquet(tagged, frames_dir / name / CATALOG_EMPTY)
    return skipped


def _quoted(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    """``name`` as an SQL identifier (a view's name)."""
    return '"' + name.replace('"', '""') + '"'


_GLOB = re.compile(r"[][*?]")


def _escaped(path: Path) -> str:
    """``path`` as ``read_parquet`` reads it as named: DuckDB takes ``[ ] * ?`` in it as a
    glob (``lab[1]`` would read ``lab1``), so each is bracketed (``[[]``); a path with a
    backslash cannot be (DuckDB's globs never match one): an error names it."""
    text = str(path)
    if not _GLOB.search(text):
        return text
    if "\\" in text:
        raise SsdlabError(
            f"{text}: DuckDB cannot read a path holding both a backslash and one of "
            "[ ] * ?: rename the directory"
        )
    return _GLOB.sub(r"[\g<0>]", text)


def _files(paths: Iterable[Path]) -> str:
    """The SQL list of files ``read_parquet`` reads as named (:func:`_escaped`)."""
    return "[" + ", ".join(_quoted(_escaped(path)) for path in paths) + "]"


def _history_views(con: duckdb.DuckDBPyConnection, root: Path, frames_dir: Path) -> list[Path]:
    """The ``smart_history`` view over every readable history's own Parquet, and the table
    ``fleet_models`` of every history's drives; the files the view reads."""
    empty = frames_dir / HISTORY / CATALOG_EMPTY
    files = [empty]
    selects = [f"select * from read_parquet({_files([empty])})"]
    for drives in cached_frames(frames_dir, "fleet_drives", "[!_]*"):
        history_dirs = pl.read_parquet(drives, columns=["history_dir"], glob=False)
        for relative in history_dirs["history_dir"].unique():
            frame = frame_file(root / relative, HISTORY)
            files.append(frame)
            selects.append(
                f"select *, {_quoted(relative)} as history_dir from read_parquet({_files([frame])})"
            )
    con.execute(
        f"create or replace view {_ident(HISTORY)} as " + " union all by name ".join(selects)
    )
    drives = pl.scan_parquet(cached_frames(frames_dir, "fleet_drives"), glob=False)
    models = model_endurance(drives)
    con.register("_fleet_models", models)
    con.execute("create or replace table fleet_models as select * from _fleet_models")
    con.unregister("_fleet_models")
    return files


def catalog(root: Path | str, *, database: Path | str | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with one view per frame over every results directory under
    ``root`` (see the module docstring). ``database`` defaults to the catalog's own file;
    ``":memory:"`` keeps it in memory."""
    return _open(Path(root), database)[0]


def _open(
    root: Path, database: Path | str | None, found: dict[str, list[Path]] | None = None
) -> tuple[duckdb.DuckDBPyConnection, list[Path], list[tuple[str, str]]]:
    """:func:`catalog`'s connection, the files its views read and the results directories
    (and histories) it skipped (relative path, error); ``found`` as :func:`sync` takes it."""
    frames_dir, skipped = sync(root, found)
    path = str(database or root / CATALOG_DIR / CATALOG_DATABASE)
    try:
        con = duckdb.connect(path)
    except duckdb.IOException as exc:
        raise SsdlabError(
            f"{path}: cannot open the catalog database ({exc}); another process has it open: "
            "close it, or pass database=':memory:'"
        ) from None
    present = (
        {d.name for d in frames_dir.iterdir() if cached_frames(frames_dir, d.name)}
        if (frames_dir.is_dir())
        else set()
    )
    for (name,) in con.execute(
        "select view_name from duckdb_views() where not internal and schema_name = 'main'"
    ).fetchall():
        if name not in present:
            con.execute(f"drop view {_ident(name)}")
    files = []
    for name in sorted(present):  # the files as listed: no glob of a path DuckDB could misread
        frames = cached_frames(frames_dir, name)
        files += frames
        con.execute(
            f"create or replace view {_ident(name)} as select * from "
            f"read_parquet({_files(frames)}, union_by_name = true)"
        )
    files += _history_views(con, root, frames_dir)
    problems = pl.DataFrame(
        skipped, schema={"results_dir": pl.String, "error": pl.String}, orient="row"
    )
    con.register("_skipped", problems)
    con.execute("create or replace table skipped as select * from _skipped")
    con.unregister("_skipped")
    return con, files, skipped


def _one_line(exc: Exception) -> str:
    """A DuckDB error's message without its ``LINE 1: ...`` excerpt, on one line."""
    message = str(exc).split("\n\nLINE ")[0]
    return " ".join(message.split())


_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def _one_query(sql: str) -> None:
    """InputError unless ``sql`` is one query (a SELECT statement: ``select``, ``with``,
    ``from``, ``values``, ``describe``, ``show``, ``summarize``)."""
    try:
        statements = duckdb.connect(":memory:").extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(f"SQL: {_one_line(exc)}") from None
    if len(statements) != 1:
        raise InputError(f"SQL: give one query, not {len(statements)} statements")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        words = _COMMENTS.sub(" ", statement.query).split()
        raise InputError(
            f"SQL: {(words[0] if words else statement.type.name).upper()} refused: the catalog "
            "is read-only; only a query runs (select, with, from, values, describe, show, "
            "summarize)"
        )


def _lock(con: duckdb.DuckDBPyConnection, files: list[Path]) -> None:
    """From now on ``con`` reads no file but ``files`` (as named and as its views name them)
    and writes none, loads no extension and cannot change that."""
    allowed = sorted({text for path in files for text in (str(path), _escaped(path))})
    con.execute(f"set allowed_paths = [{', '.join(map(_quoted, allowed))}]")
    con.execute("set python_enable_replacements = false")  # no Python variable as a table
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")


def query(root: Path | str, sql: str, *, warn: Callable[[str], None] | None = None) -> pl.DataFrame:
    """The result of one read-only SQL query over the views of :func:`catalog` (kept in
    memory). ``warn`` is given each results directory or history that could not be loaded.

    Only a SELECT statement runs (COPY, ATTACH, INSTALL, SET, PRAGMA... are refused), and
    DuckDB reads no file but the views' Parquet, writes none and loads no extension (its
    configuration is locked): ``read_csv('/etc/passwd')`` fails. INTERVAL columns are given
    as text. InputError (one line) for any problem with the query."""
    root = Path(root)
    _one_query(sql)
    found = find_marked(root)
    if not any(found.values()):
        raise InputError(
            f"{root}: no results directory ({MANIFEST}) or SMART history ({SMART_HISTORY}) "
            "at or below it"
        )
    con, files, skipped = _open(root, ":memory:", found)
    try:
        for relative, error in skipped:
            if warn is not None:
                warn(f"{relative} left out: {error}")
        _lock(con, files)
        return _result(con, sql)
    finally:
        con.close()


def _result(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    """``sql``'s result as a frame (INTERVAL columns, which polars cannot hold, as text)."""
    try:
        relation = con.sql(sql)
        kinds = [str(kind) for kind in relation.types]
        if any("INTERVAL" in kind for kind in kinds):
            relation = relation.project(
                ", ".join(
                    f"cast(#{i} as varchar) as {_ident(name)}" if "INTERVAL" in kind else f"#{i}"
                    for i, (name, kind) in enumerate(
                        zip(relation.columns, kinds, strict=True), start=1
                    )
                )
            )
        return relation.pl()
    except duckdb.CatalogException as exc:
        views = con.execute(
            "select table_name from duckdb_tables() where not internal union "
            "select view_name from duckdb_views() where not internal order by 1"
        ).fetchall()
        names = ", ".join(name for (name,) in views)
        raise InputError(f"SQL: {_one_line(exc)} (the views: {names})") from None
    except duckdb.PermissionException as exc:
        raise InputError(f"SQL: {_one_line(exc)} (ssdlab sql reads its views only)") from None
    except (duckdb.Error, pl.exceptions.PolarsError) as exc:
        raise InputError(f"SQL: {_one_line(exc)}") from None

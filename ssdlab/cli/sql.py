"""``ssdlab sql``: one read-only SQL query over the catalog of a results root."""

from __future__ import annotations

import shutil
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..errors import InputError
from . import app, stderr

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl
    from rich.console import Console

#: rows a table shows; csv and json give every row
MAX_TABLE_ROWS = 1000


class SqlFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


@app.command("sql")
def sql_command(
    results: Annotated[
        Path,
        typer.Argument(
            help="A results directory, or a directory holding results directories and SMART "
            "histories (any depth)."
        ),
    ],
    sql: Annotated[str, typer.Argument(help='One query, e.g. "select * from runs".')],
    format: Annotated[
        SqlFormat,
        typer.Option(
            "--format",
            "-f",
            help="table: for reading (records, one field a line, when too wide for the "
            f"terminal; at most {MAX_TABLE_ROWS} rows); csv, json: every row, for programs.",
        ),
    ] = SqlFormat.table,
) -> None:
    """Run one SQL query (DuckDB) over every results directory and SMART history under
    RESULTS: the views of ssdlab.catalog().

    Views: runs (one row per results directory: run, host, drive, target), summary,
    timeseries, latency_hist, percentiles, snapshots, rounds, steady_state, smart, waf,
    power, power_trace, power_idle, endurance, act_trials, act_slices (and plug-ins'
    frames); SMART histories: smart_history, fleet_drives; tables fleet_models and skipped
    (what could not be loaded). Rows of runs carry run_id and results_dir. "describe
    summary" lists a view's columns.

    Read-only: only a query runs (select, with, from, values, describe, show, summarize);
    COPY, ATTACH, INSTALL, SET and reading any other file (read_csv('/etc/passwd')) are
    refused.
    """
    from ..catalog import query

    def warn(line: str) -> None:
        stderr().print(escape(f"warning: {line}"), soft_wrap=True, highlight=False)

    frame = query(results, sql, warn=warn)
    if format is SqlFormat.table:
        _print_table(frame)
    else:
        sys.stdout.write(_csv(frame) if format is SqlFormat.csv else _json(frame, warn))


def _csv(frame: pl.DataFrame) -> str:
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    if nested:
        raise InputError(
            f"--format csv: column {nested[0]!r} holds lists or structs, which CSV cannot: "
            "use --format json, or to_json() in the query"
        )
    return frame.write_csv()


def _json(frame: pl.DataFrame, warn: Callable[[str], None]) -> str:
    """The rows as a JSON array of objects. Decimals of up to 15 digits (``1.5`` in SQL) are
    numbers (a double holds each exactly), longer ones text; NaN and infinite figures (which
    JSON has no number for) become null, counted in a warning."""
    import polars as pl

    short = [
        name
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Decimal) and (dtype.precision or 38) <= 15
    ]
    frame = frame.with_columns(pl.col(short).cast(pl.Float64))
    floats = frame.select(pl.col(pl.Float32, pl.Float64))
    lost = sum((~series.is_finite()).sum() for series in floats.iter_columns())
    if lost:
        warn(f"{lost} NaN or infinite value(s) written as null: JSON has no number for them")
    return frame.write_json() + "\n"


def _cell(value: object) -> str:
    return "NULL" if value is None else str(value)


def _print_table(frame: pl.DataFrame) -> None:
    """``frame`` as a table as wide as the terminal, or as records when it does not fit;
    the row count below it."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..console import plural

    console = Console(width=shutil.get_terminal_size().columns, highlight=False)
    rows = [[_cell(v) for v in row] for row in frame.head(MAX_TABLE_ROWS).iter_rows()]
    table = Table(header_style="bold")
    for name, dtype in frame.schema.items():
        justify = "right" if dtype.is_numeric() else "left"
        table.add_column(Text(name), justify=justify, overflow="fold")
    for row in rows:
        table.add_row(*map(Text, row))
    if console.measure(table, options=console.options.update_width(10**6)).maximum <= console.width:
        console.print(table)
    else:
        _print_records(console, frame.columns, rows)
    cut = f"; the first {MAX_TABLE_ROWS:,} shown (csv and json give all)"
    console.print(Text(f"({plural(frame.height, 'row')}{cut if len(rows) < frame.height else ''})"))


def _print_records(console: Console, columns: list[str], rows: list[list[str]]) -> None:
    """Each row as lines of column and value (``psql -x``)."""
    from rich.table import Table
    from rich.text import Text

    for number, row in enumerate(rows, start=1):
        console.print(Text(f"-[ row {number} ]-", style="dim"))
        record = Table.grid(padding=(0, 2))
        record.add_column(style="bold", overflow="fold")
        record.add_column(overflow="fold")
        for name, value in zip(columns, row, strict=True):
            record.add_row(Text(name), Text(value))
        console.print(record)

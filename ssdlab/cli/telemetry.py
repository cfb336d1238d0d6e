"""Telemetry commands: ``smart show``/``smart import``, ``power attach``/``power show``,
``endurance compare``, ``endurance project``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..console import plural
from ..errors import InputError
from . import app, check_html, output_path, stderr

if TYPE_CHECKING:
    import polars as pl

smart_app = typer.Typer(help="Read SMART captures (nvme-cli, smartctl JSON).", no_args_is_help=True)
power_app = typer.Typer(help="Power traces aligned with the steps of a run.", no_args_is_help=True)
endurance_app = typer.Typer(help="Endurance and write amplification.", no_args_is_help=True)
app.add_typer(smart_app, name="smart")
app.add_typer(power_app, name="power")
app.add_typer(endurance_app, name="endurance")

#: SmartRecord fields shown by ``smart show`` and the unit each is displayed in
SMART_SHOWN = {
    "model": "",
    "serial": "",
    "firmware": "",
    "capacity_bytes": "capacity",
    "unallocated_bytes": "capacity",
    "host_bytes_written": "bytes",
    "host_bytes_read": "bytes",
    "nand_bytes_written": "bytes",
    "host_pages_written": "pages",
    "nand_pages_written": "pages",
    "percent_used": "%",
    "average_erase_count": "cycles",
    "temperature_c": "°C",
    "power_on_hours": "h",
    "media_errors": "",
    "unsafe_shutdowns": "",
    "critical_warning": "",
    "power_states_w": "W",
    "waf": "",
}


class Format(StrEnum):
    table = "table"
    json = "json"


def _show(value: Any, unit: str) -> str:
    """A value in display form: a capacity with its binary GiB/TiB (as the kernel gives
    capacities), bytes written or read with their decimal GB/TB (as endurance ratings count
    them), floats to 3 decimals."""
    if value is None or value == []:
        return "–"
    if isinstance(value, list):
        return ", ".join(f"{v:g}" for v in value) + f" {unit}"
    if unit == "capacity":
        from ..units import format_capacity

        return f"{value:,} ({format_capacity(value)})"
    if unit == "bytes":
        scale, name = (1e12, "TB") if abs(value) >= 1e12 else (1e9, "GB")
        return f"{value:,} ({value / scale:,.2f} {name})"
    if isinstance(value, float):
        text = f"{value:,.3f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{text} {unit}".strip()


def _print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    from rich.table import Table

    from ..console import stdout_console

    table = Table(header_style="bold")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*map(escape, row))
    stdout_console().print(table)


def _print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")


@smart_app.command("show")
def smart_show(
    snapshot: Annotated[Path, typer.Argument(help="A SMART capture file or a directory of them.")],
    snapshot2: Annotated[
        Path | None, typer.Argument(help="A later snapshot of the same drive: show the deltas.")
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Show a snapshot's canonical fields and lifetime WAF, or two snapshots and their deltas."""
    from ..telemetry import read_snapshot, smart_delta, waf

    records = [read_snapshot(path) for path in (snapshot, snapshot2) if path is not None]
    docs = [r.model_dump(exclude={"raw", "origin", "conflicts"}) | {"waf": waf(r)} for r in records]
    if len(records) == 1:
        if format is Format.json:
            return _print_json(docs[0])
        rows = [(name, _show(docs[0][name], unit)) for name, unit in SMART_SHOWN.items()]
        return _print_table(["Field", str(snapshot)], [r for r in rows if r[1] != "–"])
    delta = smart_delta(*records).model_dump()
    if format is Format.json:
        return _print_json({"before": docs[0], "after": docs[1], "delta": delta})
    rows = [
        (name, _show(docs[0][name], unit), _show(docs[1][name], unit), _show(delta.get(name), unit))
        for name, unit in SMART_SHOWN.items()
    ]
    _print_table(["Field", str(snapshot), str(snapshot2), "Delta"], rows)


@smart_app.command("import")
def smart_import(
    paths: Annotated[list[Path], typer.Argument(help="Files or trees of SMART captures.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", parser=output_path, help="New results directory.")
    ],
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", help="Processes reading the trees' top-level folders.")
    ] = 1,
) -> None:
    """Import periodic SMART captures of many drives (smartctl -j, nvme-cli smart-log and OCP
    JSON, smartctl_exporter dumps) into OUT/frames/smart_history.parquet: per drive and
    snapshot, bytes written, WAF between snapshots and lifetime, wear, spare, errors."""
    from ..telemetry.history import import_smart_history
    from .core import _import_display, print_skipped

    with _import_display() as display:
        report = import_smart_history(paths, out, on_file=display.file, workers=jobs)
    print_skipped(
        report.skipped,
        f"{plural(report.drives, 'drive')}, {plural(report.snapshots, 'snapshot')} from "
        f"{plural(report.files, 'file')}",
    )
    print(out)


@smart_app.command("report")
def smart_report(
    history: Annotated[Path, typer.Argument(help="A directory 'ssdlab smart import' wrote.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", parser=output_path, help="HTML file to write.")
    ] = Path("fleet-endurance.html"),
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    keep_notebook: Annotated[
        bool, typer.Option("--keep-notebook", help="Keep the executed notebook beside it.")
    ] = False,
) -> None:
    """Render the fleet endurance report of a SMART history (WAF, wear rate, projected
    wear-out, outliers and media errors by drive, model and firmware) as one offline HTML."""
    from ..report.fleet_endurance import render_fleet_endurance
    from ..report.notebooks import discard_notebooks

    check_html(output, pdf_option=False)
    path = render_fleet_endurance(history, output, title=title)
    if not keep_notebook:
        discard_notebooks(path)
    print(path)


#: reader option -> the ``power attach`` option giving it
READER_OPTIONS = {
    "columns": "--column",
    "units": "--unit",
    "start_epoch_s": "--start-epoch",
    "tz": "--tz",
}


def _mapping(pairs: list[str] | None, option: str) -> dict[str, str] | None:
    if not pairs:
        return None
    if not all("=" in pair for pair in pairs):
        raise InputError(f"{option} takes KEY=VALUE, e.g. {option} time=ts")
    return dict(pair.split("=", 1) for pair in pairs)


def _print_power(frame: pl.DataFrame) -> None:
    rows = [
        (
            f"{r['step_index']} {r['step']}",
            str(r["samples"]),
            *(_show(r[c], "") for c in ("avg_w", "min_w", "max_w", "mb_s_per_w", "iops_per_w")),
            "covered" if r["covered"] else f"not covered: {r['reason']}",
        )
        for r in frame.iter_rows(named=True)
    ]
    headers = ["Step", "Samples", "Avg W", "Min W", "Max W", "MB/s per W", "IOPS per W", "Trace"]
    _print_table(headers, rows)


@power_app.command("attach")
def power_attach(
    results_dir: Annotated[Path, typer.Argument(help="Results directory of 'ssdlab run'.")],
    trace: Annotated[Path, typer.Argument(help="Power trace: Quarch, yokotool, ipmitool or CSV.")],
    format: Annotated[
        str | None, typer.Option("--format", "-f", help="Trace format (default: detected).")
    ] = None,
    column: Annotated[
        list[str] | None,
        typer.Option(help="csv format: KEY=COLUMN for time, power, voltage, current."),
    ] = None,
    unit: Annotated[
        list[str] | None, typer.Option(help="csv format: KEY=UNIT, e.g. time=ms, power=mW.")
    ] = None,
    start_epoch: Annotated[
        float | None,
        typer.Option(help="Epoch seconds of time 0 for traces with relative times."),
    ] = None,
    tz: Annotated[
        str | None, typer.Option(help="ipmitool: time zone of IPMI timestamps (IANA name).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a trace the run already has.")
    ] = False,
) -> None:
    """Align a power trace recorded separately (wall-clock times) with the steps of a run."""
    from ..results import load_frames
    from ..telemetry.attach import ReaderOptions, attach_power

    options = ReaderOptions(
        columns=_mapping(column, "--column"),
        units=_mapping(unit, "--unit"),
        start_epoch_s=start_epoch,
        tz=tz,
    )
    attached = attach_power(
        results_dir,
        trace,
        format=format,
        options=options,
        replace=replace,
        option_names=READER_OPTIONS,
    )
    frame = load_frames(results_dir, ["power"])["power"]
    times = attached.frame["time_s"]
    span = (
        f"trace: {plural(attached.frame.height, 'sample')}, epoch {times.min():.3f} .. "
        f"{times.max():.3f} s"
    )
    if frame["start_s"].drop_nulls().len():
        span += f"; steps {frame['start_s'].min():.3f} .. {frame['end_s'].max():.3f} s"
    stderr().print(span, soft_wrap=True, highlight=False)
    _print_power(frame)


@power_app.command("show")
def power_show(
    results_dir: Annotated[Path, typer.Argument(help="Results directory.")],
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Per-step power and efficiency of a run with a power trace."""
    from ..telemetry.frames import power_per_step

    frame = power_per_step(results_dir)
    if format is Format.json:
        return _print_json(frame.to_dicts())
    _print_power(frame)


@endurance_app.command("compare")
def endurance_compare(
    results_dirs: Annotated[list[Path], typer.Argument(help="Results directories.")],
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Drives side by side: rated vs implied endurance, data written, WAF per workload, wear.

    Each results directory may hold its drive's rating as drive.toml (or drive.yaml).
    """
    from ..analysis.endurance import compare_endurance

    compared = compare_endurance(results_dirs)
    if len(compared.empty) == len(results_dirs) and not compared.workloads.height:
        raise InputError(
            f"no endurance data to compare: {', '.join(map(str, results_dirs))} "
            f"{'holds' if len(results_dirs) == 1 else 'hold'} no drive spec (drive.toml) and "
            "no SMART snapshots"
        )
    for d in compared.empty:
        stderr().print(
            f"{escape(str(d))}: no drive spec (drive.toml) and no SMART snapshots",
            soft_wrap=True,
            highlight=False,
        )
    if format is Format.json:
        runs = zip(compared.labels, compared.paths, compared.endurance, compared.waf, strict=True)
        return _print_json(
            [
                {"label": label, "path": str(d), "endurance": e.to_dicts(), "waf": w.to_dicts()}
                for label, d, e, w in runs
            ]
        )

    def rows(table: pl.DataFrame) -> list[tuple[str, ...]]:
        return [(key, *(_show(v, "") for v in values)) for key, *values in table.iter_rows()]

    _print_table(["Endurance", *compared.labels], rows(compared.items))
    if compared.workloads.height:
        _print_table(["WAF per workload", *compared.labels], rows(compared.workloads))


@endurance_app.command("project")
def endurance_project(
    results_dir: Annotated[Path, typer.Argument(help="Results directory.")],
    drive: Annotated[
        Path | None,
        typer.Option(help="Drive file (TOML/YAML, see drive.toml); default: the results'."),
    ] = None,
    capacity: Annotated[
        str | None, typer.Option(help="User capacity, decimal TB (3.84, 3840GB).")
    ] = None,
    rated_tbw: Annotated[str | None, typer.Option(help="Rated endurance (7000TB, 7PB).")] = None,
    dwpd: Annotated[float | None, typer.Option(help="Rated drive writes per day.")] = None,
    warranty_years: Annotated[
        float | None, typer.Option(help="Warranty in years (default: the drive file's, else 5).")
    ] = None,
    pe_cycles: Annotated[float | None, typer.Option(help="Rated NAND P/E cycles.")] = None,
    raw_capacity: Annotated[
        str | None, typer.Option(help="Raw NAND capacity, decimal TB (4.9152).")
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Projected TBW and DWPD per source (rating, P/E cycles, wear used) and workload.

    Options override the drive file; without either, SMART alone projects (5-year warranty).
    """
    from ..analysis.endurance import project_results

    figures = project_results(
        results_dir,
        drive,
        capacity=capacity,
        rated_tbw=rated_tbw,
        raw_capacity=raw_capacity,
        dwpd=dwpd,
        warranty_years=warranty_years,
        pe_cycles=pe_cycles,
    )
    projected = figures.projections
    if format is Format.json:
        return _print_json(
            {
                "inputs": projected.inputs.to_dicts(),
                "waf_by_workload": figures.workloads.to_dicts(),
                "projections": projected.rows.to_dicts(),
                "missing": projected.missing,
            }
        )
    from ..tables import format_bytes, format_number

    def shown(value: float | None, unit: str = "") -> str:
        if value is None:
            return "–"
        return format_bytes(value) if unit == "bytes" else f"{format_number(value)} {unit}".strip()

    _print_table(
        ["Input", "Value", "From"],
        [
            (r["item"], shown(r["value"], r["unit"]), r["from"])
            for r in projected.inputs.rows(named=True)
        ],
    )
    if figures.workloads.height:
        columns = {"host_bytes": "bytes", "nand_bytes": "bytes", "waf": "", "last_waf": ""}
        _print_table(
            ["Workload", "Steps", "Host written", "NAND written", "WAF", "WAF of last step"],
            [
                [r["workload"], str(r["steps"]), *(shown(r[c], u) for c, u in columns.items())]
                for r in figures.workloads.rows(named=True)
            ],
        )
    columns = {"waf": "", "tbw_bytes": "bytes", "dwpd": ""}
    _print_table(
        ["Source", "Workload", "WAF", "TBW", "DWPD", "Assumptions"],
        [
            [
                r["source"],
                r["workload"],
                *(shown(r[c], u) for c, u in columns.items()),
                r["assumptions"],
            ]
            for r in projected.rows.rows(named=True)
        ],
    )
    for source, why in projected.missing.items():
        stderr().print(f"{escape(source)}: not projected: {escape(why)}", highlight=False)

"""Core commands: run, devices, summary, import, suites."""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import typing
from collections.abc import Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..atomic import write_error
from ..console import plural
from ..errors import SsdlabError
from . import app, output_path, stderr, suites_app, target_size_option

if TYPE_CHECKING:
    import polars as pl
    from rich.progress import Progress

    from ..importer import ImportReport


class SummaryFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


class OnErrorPolicy(StrEnum):
    stop = "stop"
    continue_ = "continue"


class TargetsMode(StrEnum):
    lockstep = "lockstep"
    sequence = "sequence"


@app.command()
def run(
    suite: Annotated[
        str, typer.Argument(help="Built-in suite name or a suite file (.toml/.yaml).")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", parser=output_path, help="Results directory.")
    ],
    target: Annotated[
        list[Path] | None,
        typer.Option(
            help="File (created if missing) or block device. Default: a temporary file. "
            "Repeat for several targets of this machine in one run (one results directory "
            "each under OUT, see --targets-mode).",
        ),
    ] = None,
    targets_mode: Annotated[
        TargetsMode | None,
        typer.Option(
            "--targets-mode",
            help="With several --target: lockstep (default: each step starts on every target "
            "together, the next when all finished) or sequence (the whole suite on each "
            "target in turn).",
        ),
    ] = None,
    target_size: Annotated[
        str | None,
        typer.Option(
            help="Size of a file target: 8GiB or 8g (8 x 2^30 bytes, as fio reads 8g), 8GB "
            "(8 x 10^9) or bytes (default: what the suite needs)."
        ),
    ] = None,
    label: Annotated[str | None, typer.Option(help="Name of the drive/target in reports.")] = None,
    destroy_data: Annotated[
        str | None,
        typer.Option(
            "--destroy-data",
            help="Confirm writing: a block device's kernel name (nvme0n1) or serial; with "
            "several --target, each device's, comma-separated; with --hosts, comma-separated, "
            "also HOST:PATH for another host's targets.",
        ),
    ] = None,
    purge: Annotated[
        bool, typer.Option("--purge", help="Purge the target before the first step.")
    ] = False,
    scale: Annotated[
        float, typer.Option(help="Multiply every duration and absolute size (0.01 for a test).")
    ] = 1.0,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a suite parameter: name=value (repeatable)."),
    ] = None,
    allow_fio_option: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-fio-option",
            help="Let the suite's steps use this guarded fio option or engine (e.g. exec_prerun, "
            "ioengine); see docs/safety.md (repeatable).",
        ),
    ] = None,
    on_error: Annotated[
        OnErrorPolicy, typer.Option(help="After a failed step: stop, or continue with the next.")
    ] = OnErrorPolicy.stop,
    smart: Annotated[
        str,
        typer.Option(
            help="SMART snapshots before/after each step: auto (nvme-cli or smartctl, block "
            "devices only), none, or a COMMAND printing nvme-cli/smartctl JSON, run for any "
            "target ({device} = the target's path).",
        ),
    ] = "auto",
    power: Annotated[
        str | None,
        typer.Option(
            help="Record power during the run: command:CMD (prints watts), ipmitool[:ARGS] "
            "(dcmi power reading), rapl[:DOMAIN] (CPU only), or NAME[:ARGUMENT] of a source "
            "an installed package adds (entry point group ssdlab.power_sources).",
        ),
    ] = None,
    power_interval: Annotated[float, typer.Option(help="Seconds between power samples.")] = 1.0,
    hosts: Annotated[
        str | None,
        typer.Option(
            help="Run on fio servers at once: HOST[:PORT][=TARGET],... or a hosts file "
            "(one HOST[:PORT] [TARGET] per line); one results directory per host under OUT."
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            min=1,
            max=100,
            help="Run every measured step this many times, interleaved; the review reports "
            "each by its median repeat by IOPS (one fio run) with a 95 % interval of each "
            "figure.",
        ),
    ] = 1,
    max_spread: Annotated[
        str | None,
        typer.Option(
            "--max-spread",
            help="With --repeat: run a step again while its repeats' IOPS spread (standard "
            "deviation over mean) more than this, e.g. 5%, up to --max-repeats runs.",
        ),
    ] = None,
    max_repeats: Annotated[
        int, typer.Option(min=2, max=100, help="The most runs of a step with --max-spread.")
    ] = 10,
    fill_first: Annotated[
        str | None,
        typer.Option(
            "--fill-first",
            help="Fill this share of the target (e.g. 80%) with 128K sequential writes before "
            "the suite; add --purge to start empty.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the steps, their planned time and the target with its size, and check "
            "every job file with fio --parse-only; run nothing and write nothing.",
        ),
    ] = False,
) -> None:
    """Run SUITE against a target and keep every raw result in OUT (re-run to resume)."""
    from ..runner import RunOptions

    options = RunOptions(
        suite=suite,
        out=out,
        targets=target or [],
        targets_mode=targets_mode.value if targets_mode else None,  # type: ignore[arg-type]
        target_size=target_size_option(target_size) if target_size else None,
        label=label,
        destroy_data=destroy_data,
        purge=purge,
        scale=scale,
        params=set_ or [],
        allow_fio_options=allow_fio_option or [],
        on_error=on_error.value,  # type: ignore[arg-type]
        hosts=hosts,
        repeat=repeat,
        max_spread_pct=_percent(max_spread, "--max-spread") if max_spread is not None else None,
        max_repeats=max_repeats,
        fill_first=fill_first,
        smart=smart,
        power=power,
        power_interval_s=power_interval,
    )
    if dry_run:
        from ..plan import plan as plan_of
        from .plan import print_plan

        return print_plan(plan_of(options))
    from ..runner import run as run_options

    stderr().print(run_options(options, console=stderr()).summary)


def _percent(text: str, option: str) -> float:
    """``5%`` or ``5`` as 5.0; a clear error otherwise."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise SsdlabError(f"{option} takes a percentage such as 5%, not {text!r}") from None
    if not 0 < value < 1000:
        raise SsdlabError(f"{option} takes a percentage above 0, not {text!r}")
    return value


def _plan_signature() -> inspect.Signature:
    """``run``'s options but ``--dry-run``, their annotations resolved."""
    hints = typing.get_type_hints(run, include_extras=True)
    signature = inspect.signature(run)
    return signature.replace(
        parameters=[
            p.replace(annotation=hints[p.name])
            for p in signature.parameters.values()
            if p.name != "dry_run"
        ],
        return_annotation=None,
    )


def plan(**options: Any) -> None:
    """Print what 'run' would do with the same options (the steps, their planned time, the
    target and its size) and check every job file with fio --parse-only; run nothing and
    write nothing (ssdlab run --dry-run)."""
    run(**options, dry_run=True)


plan.__signature__ = _plan_signature()  # type: ignore[attr-defined]
plan.__annotations__ = {p.name: p.annotation for p in _plan_signature().parameters.values()}
app.command("plan")(plan)


@app.command()
def devices() -> None:
    """List block devices with identity, size, block sizes and the safety verdict."""
    from rich.table import Table

    from ..console import stdout_console
    from ..devices import list_devices, verdict
    from ..units import format_capacity

    table = Table(header_style="bold")
    for col in (
        "Device",
        "Model",
        "Serial",
        "Firmware",
        "Size",
        "LBA/phys",
        "Transport",
        "Verdict",
    ):
        table.add_column(col)
    for dev in list_devices():
        table.add_row(
            dev.path,
            dev.model or "-",
            dev.serial or "-",
            dev.firmware or "-",
            format_capacity(dev.size_bytes),
            f"{dev.logical_block_bytes}/{dev.physical_block_bytes}",
            dev.transport or "-",
            verdict(dev),
        )
    stdout_console().print(table)


@app.command()
def summary(
    results_dir: Annotated[Path, typer.Argument(help="Results directory.")],
    format: Annotated[SummaryFormat, typer.Option("--format", "-f")] = SummaryFormat.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
) -> None:
    """Print the per step x direction summary of a results directory (as wide as the
    terminal: columns that do not fit are left out, and said so)."""
    from .. import load
    from ..console import stdout_console
    from ..discover import parent_of_runs
    from ..tables import summary_table

    if parent := parent_of_runs(results_dir):
        _refuse_parent(results_dir, *parent)
    results = load(results_dir)
    for line in results.manifest.failures():  # steps whose results do not count
        stderr().print(escape(f"warning: {line}"), soft_wrap=True, highlight=False)
    for line in results.damaged:  # what could not be read, and what it leaves out
        stderr().print(escape(f"warning: {line}"), soft_wrap=True, highlight=False)
    frame = results.summary
    if format is SummaryFormat.table and frame.is_empty():  # not a blank line: say why
        trials = results.extra.get("act_trials")
        held = (
            f"; it holds {plural(trials.height, 'ACT trial')} (ssdlab report {results_dir} "
            "shows them)"
            if trials is not None and trials.height
            else ""
        )
        stderr().print(
            escape(f"{results_dir}: no fio step results to summarise{held}"),
            soft_wrap=True,
            highlight=False,
        )
        return
    if format is SummaryFormat.parquet and output is None and sys.stdout.isatty():
        raise SsdlabError("parquet is binary: give --output FILE or redirect stdout")
    if format is SummaryFormat.table and output is None:
        return _print_fitted(frame)
    if format is SummaryFormat.table:
        text = io.StringIO()
        stdout_console(file=text).print(summary_table(frame))
        data = text.getvalue().encode()
    elif format is SummaryFormat.parquet:
        buffer = io.BytesIO()  # polars would turn a closed pipe into a ComputeError
        frame.write_parquet(buffer)
        data = buffer.getvalue()
    else:
        data = (frame.write_csv() if format is SummaryFormat.csv else frame.write_json()).encode()
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        return
    try:
        output.write_bytes(data)
    except OSError as exc:
        raise write_error(output, exc) from None


#: summary columns left out, in this order, while the table is wider than the terminal
NARROW_LEAVES_OUT = ("p99.9", "Jobs", "Mean", "Max", "QD", "Block", "p99.99", "Job")


def _print_fitted(frame: pl.DataFrame) -> None:
    """The summary table as wide as the terminal: the columns of :data:`NARROW_LEAVES_OUT`
    left out until it fits, and a line on stderr naming them."""
    from ..console import UNLIMITED_WIDTH, stdout_console
    from ..tables import summary_table

    console = stdout_console()
    unlimited = console.options.update_width(UNLIMITED_WIDTH)
    left_out: list[str] = []
    table = summary_table(frame)
    shown = {str(c.header) for c in table.columns}
    for column in (c for c in NARROW_LEAVES_OUT if c in shown):
        if console.measure(table, options=unlimited).maximum <= console.width:
            break
        left_out.append(column)
        table = summary_table(frame, left_out)
    if left_out:
        stderr().print(
            f"left out {', '.join(left_out)} to fit {console.width} columns (--format csv "
            "has every column)",
            highlight=False,
        )
    console.print(table)


def _refuse_parent(path: Path, what: str, dirs: list[Path]) -> typing.NoReturn:
    """Why ``summary`` of a directory holding results directories summarises none: their
    list (a fleet's members with their states), then the command for one of them."""
    from ..fleet import load_fleet
    from ..fleet.store import MODES
    from ..layout import FLEET_FILE, MANIFEST

    lines = []
    if what == "fleet":
        fleet = load_fleet(path)
        noun = "host" if fleet.mode == "hosts" else "target"
        lines.append(
            f"{path} holds a run {MODES.get(fleet.mode, fleet.mode)} ({FLEET_FILE}), one "
            f"results directory per {noun}:"
        )
        for name, directory, state in fleet.states():
            held = "" if directory in dirs else " (no results)"
            lines.append(f"  {directory}{held}: {name}, {state}")
        kind = f"a fleet's root, not a results directory: summarise one {noun}'s results"
    else:
        lines.append(
            f"{path} holds {plural(len(dirs), 'results directory', 'results directories')}:"
        )
        lines += [f"  {directory}" for directory in dirs]
        kind = f"not a results directory (no {MANIFEST}): summarise one"
    for line in lines:
        stderr().print(escape(line), soft_wrap=True, highlight=False)
    raise SsdlabError(f"{path} is {kind} with 'ssdlab summary {dirs[0] if dirs else 'DIR'}'")


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="fio output files or directories.")],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            parser=output_path,
            help="New results directory (with --each: their parent).",
        ),
    ],
    label: Annotated[str | None, typer.Option(help="Name of the drive/target in reports.")] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Stop at the first file that cannot be used.")
    ] = False,
    each: Annotated[
        bool,
        typer.Option(
            "--each",
            help="Import each PATH as its own run into OUT/<PATH's name>, labelled with that "
            "name; a PATH that fails is reported and the others still import.",
        ),
    ] = False,
) -> None:
    """Import fio results (JSON, json+, logs, histogram logs) from any tool into OUT."""
    if each:
        if label is not None:
            raise SsdlabError("--label names one run; with --each each is named after its PATH")
        return _import_each(paths, out, strict)
    from ..importer import import_results

    with _import_display() as display:
        report = import_results(
            paths, out, label=label, strict=strict, on_file=display.file, on_status=display.status
        )
    _print_import(report)
    print(out)


def _import_each(trees: list[Path], root: Path, strict: bool) -> None:
    """``import --each``: a summary line per tree as it ends (or why it failed), then the
    results directories made, and an error when a tree failed."""
    from ..imports import TreeImport, import_each

    def done(item: TreeImport) -> None:
        if item.report is not None:
            return _print_import(item.report, f"{item.out.name}: ")
        stderr().print(
            f"[red]failed[/] {escape(str(item.tree))}: {escape(str(item.error))}",
            soft_wrap=True,
            highlight=False,
        )

    with _import_display(forks=True) as display:
        imported = import_each(
            trees,
            root,
            strict=strict,
            on_start=lambda item: display.start(item.out.name),
            on_file=display.file,
            on_status=display.status,
            on_done=done,
        )
    for item in imported:
        if item.report is not None:
            print(item.out)
    failed = sum(item.error is not None for item in imported)
    if failed:
        raise SsdlabError(f"{failed} of {plural(len(imported), 'tree')} failed to import")


class _ImportDisplay:
    """The transient progress line of an import (of the run named by :meth:`start`)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("parsing fio results", total=None)
        self.prefix = ""

    def start(self, name: str) -> None:
        self.prefix = f"{name}: "
        self.progress.reset(
            self.task, total=None, description=escape(f"{self.prefix}parsing fio results")
        )
        self.progress.refresh()

    def file(self, done: int, total: int) -> None:
        self.progress.update(self.task, completed=done, total=total, refresh=True)

    def status(self, text: str) -> None:
        self.progress.update(self.task, description=escape(self.prefix + text), refresh=True)


@contextlib.contextmanager
def _import_display(forks: bool = False) -> Iterator[_ImportDisplay]:
    """An import's progress line on stderr, shown only when it is a terminal; redrawn by a
    thread, or only at each update when the import ``forks`` (``import --each``: a running
    thread would make forking unsafe)."""
    from rich.progress import Progress

    err = stderr()
    with Progress(
        console=err, disable=not err.is_terminal, transient=True, auto_refresh=not forks
    ) as progress:
        yield _ImportDisplay(progress)


def print_skipped(skipped: Sequence[object], summary: str, failed: Sequence[object] = ()) -> None:
    """The files an import skipped and the results that are failed steps, one line each,
    then its summary line (on stderr)."""
    err = stderr()
    for item in skipped:
        err.print(f"skipped {escape(str(item))}", soft_wrap=True, highlight=False)
    for item in failed:
        err.print(f"[red]failed[/] {escape(str(item))}", soft_wrap=True, highlight=False)
    err.print(f"{summary}; skipped {plural(len(skipped), 'file')}", soft_wrap=True, highlight=False)


def _print_import(report: ImportReport, prefix: str = "") -> None:
    """The skipped files, failed steps and log rows left out of an import, one line each,
    and its summary."""
    for line in report.notes:
        stderr().print(escape(f"warning: {prefix}{line}"), soft_wrap=True, highlight=False)
    failed = f" ({len(report.failed)} failed: a job reported an error)" if report.failed else ""
    unpaired = "".join(
        f"; {plural(n, 'log')} not paired ({why})" for why, n in report.unpaired.items()
    )
    print_skipped(
        report.skipped,
        f"{escape(prefix)}imported {plural(report.results, 'fio result')}{failed} with "
        f"{plural(report.logs, 'log')}{escape(unpaired)}",
        report.failed,
    )


@suites_app.callback()
def suites(ctx: typer.Context) -> None:
    """List the built-in suites."""
    if ctx.invoked_subcommand is None:
        from rich.table import Table
        from rich.text import Text

        from ..console import stdout_console
        from ..suite import builtin_suites, load_suite

        rows = []
        for name in builtin_suites():
            s = load_suite(name)
            runs = f"{'up to ' if s.has_rounds else ''}{plural(s.max_steps, 'fio run')}"
            rows.append((name, runs, s.description.splitlines()[0]))
        table = Table(box=None, show_header=False, pad_edge=False)
        for index, justify in enumerate(("left", "right")):  # never cut: the description is
            width = max(len(row[index]) for row in rows)
            table.add_column(justify=justify, no_wrap=True, min_width=width)
        table.add_column()
        for name, runs, description in rows:
            table.add_row(name, runs, Text(description, overflow="ellipsis", no_wrap=True))
        console = stdout_console()
        console.print(table)
        console.print("ssdlab suites show NAME: a suite's description and steps in full")


@suites_app.command("show")
def suites_show(name: Annotated[str, typer.Argument(help="Suite name or file.")]) -> None:
    """Check a suite and print its definition (a file that does not validate: one error line
    naming the file and what is wrong)."""
    from ..errors import SuiteError
    from ..suite import load_suite, resolve_suite_path

    path = resolve_suite_path(name)
    try:
        load_suite(path)
    except SuiteError as exc:
        text = " ".join(str(exc).split())
        raise SuiteError(text if str(path) in text else f"{path}: {text}") from None
    print(path.read_text(), end="")

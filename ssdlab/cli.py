"""The ``ssdlab`` command line."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Console
from rich.markup import escape

from .errors import SsdlabError
from .runner import RunInterrupted

app = typer.Typer(
    help="Run SSD test suites with fio, load the results as tidy frames, render reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and show the built-in suites.", invoke_without_command=True)
app.add_typer(suites_app, name="suites")
err = Console(stderr=True)


class SummaryFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


@app.command()
def run(
    suite: Annotated[
        str, typer.Argument(help="Built-in suite name or a suite file (.toml/.yaml).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Results directory.")],
    target: Annotated[
        Path | None,
        typer.Option(help="File to test on (created if missing). Default: a temporary file."),
    ] = None,
    label: Annotated[str | None, typer.Option(help="Name of the drive/target in reports.")] = None,
) -> None:
    """Run SUITE against a target and keep every raw result in OUT."""
    from .runner import run_suite
    from .suite import load_suite

    manifest = run_suite(load_suite(suite), out, target=target, label=label, console=err)
    err.print(f"{len(manifest.steps)} steps complete; results in {out}")


@app.command()
def summary(
    results_dir: Annotated[Path, typer.Argument(help="Results directory.")],
    format: Annotated[SummaryFormat, typer.Option("--format", "-f")] = SummaryFormat.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
) -> None:
    """Print the per step x direction summary of a results directory."""
    from . import load
    from .tables import summary_table

    frame = load(results_dir).summary
    if format is SummaryFormat.table:
        Console(file=output.open("w") if output else None, width=200).print(summary_table(frame))
    elif format is SummaryFormat.parquet:
        if output is None and sys.stdout.isatty():
            raise SsdlabError("parquet is binary: give --output FILE or redirect stdout")
        frame.write_parquet(output or sys.stdout.buffer)
    else:
        text = frame.write_csv() if format is SummaryFormat.csv else frame.write_json()
        if output:
            output.write_text(text)
        else:
            sys.stdout.write(text)


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="fio output files or directories.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="New results directory.")],
    label: Annotated[str | None, typer.Option(help="Name of the drive/target in reports.")] = None,
    strict: Annotated[
        bool, typer.Option(help="Stop at the first file that cannot be used.")
    ] = False,
) -> None:
    """Import fio results (JSON, json+, logs, histogram logs) from any tool into OUT."""
    from rich.progress import Progress

    from .importer import import_results

    with Progress(console=err, disable=not err.is_terminal, transient=True) as progress:
        task = progress.add_task("parsing fio results", total=None)
        report = import_results(
            paths,
            out,
            label=label,
            strict=strict,
            on_file=lambda done, total: progress.update(task, completed=done, total=total),
        )
    for skipped in report.skipped:
        err.print(f"skipped {escape(str(skipped))}", soft_wrap=True, highlight=False)
    err.print(
        f"imported {report.results} fio results with {report.logs} logs; "
        f"skipped {len(report.skipped)} files",
        highlight=False,
    )
    print(out)


@app.command()
def report(
    results_dirs: Annotated[list[Path], typer.Argument(help="Results directory.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
) -> None:
    """Render the review report of a results directory as one offline HTML file."""
    from .review import render_review

    if len(results_dirs) != 1:
        raise SsdlabError("comparison reports of several results directories are not built yet")
    path = render_review(results_dirs[0], output, title=title)
    print(path.resolve())


@suites_app.callback()
def suites(ctx: typer.Context) -> None:
    """List the built-in suites."""
    if ctx.invoked_subcommand is None:
        from .suite import builtin_suites, load_suite

        for name in builtin_suites():
            s = load_suite(name)
            print(f"{name:20s} {len(s.steps):3d} steps  {s.description.splitlines()[0]}")


@suites_app.command("show")
def suites_show(name: Annotated[str, typer.Argument(help="Suite name or file.")]) -> None:
    """Print a suite's definition."""
    from .suite import BUILTIN_DIR

    path = BUILTIN_DIR / f"{name}.toml"
    if not path.is_file():
        path = Path(name)
    if not path.is_file():
        raise SsdlabError(f"no built-in suite or file named {name!r}")
    print(path.read_text(), end="")


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and a non-zero exit."""
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="ssdlab", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        err.print("interrupted")
        return 130
    except RunInterrupted as exc:
        err.print(f"[yellow]{escape(str(exc))}[/]", soft_wrap=True, highlight=False)
        return 130
    except SsdlabError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``ssdlab`` command line: one typer app, commands grouped in modules by area."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import SsdlabError
from ..runner import RunInterrupted

app = typer.Typer(
    help="Run SSD test suites with fio, load the results as tidy frames, render reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and show the built-in suites.", invoke_without_command=True)
app.add_typer(suites_app, name="suites")
err = Console(stderr=True)

# Command modules register themselves on ``app`` when imported (one line per module).
from . import act, core, fleet, reports, telemetry


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and a non-zero exit."""
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="ssdlab", standalone_mode=True)
    except SystemExit as exc:  # click's own handling of usage errors, Exit and Abort
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except RunInterrupted as exc:
        err.print(f"[yellow]{escape(str(exc))}[/]", soft_wrap=True, highlight=False)
        return 130
    except SsdlabError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        return 1
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

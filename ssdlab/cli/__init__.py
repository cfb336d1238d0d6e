"""The ``ssdlab`` command line: one typer app, commands grouped in modules by area."""

from __future__ import annotations

import os
import sys

import typer
from rich.markup import escape

from ..errors import SsdlabError
from ..progress import lossy_stderr
from ..runner import RunInterrupted

app = typer.Typer(
    help="Run SSD test suites with fio, load the results as tidy frames, render reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and show the built-in suites.", invoke_without_command=True)
app.add_typer(suites_app, name="suites")
err = lossy_stderr()  # a run goes on when its terminal goes away

# Command modules register themselves on ``app`` when imported (one line per module).
from . import act, core, fleet, reports, telemetry


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and a non-zero exit; a reader
    that stops early (``| head``) ends the command quietly."""
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # as Python's docs advise: no more output, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


def _main(argv: list[str] | None) -> int:
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

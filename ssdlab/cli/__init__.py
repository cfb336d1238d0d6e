"""The ``ssdlab`` command line: one typer app, commands grouped in modules by area.

Parsing and printing only: every command imports the library code it calls inside its own
function, so ``ssdlab --help`` (and any command's ``--help``) starts without polars, DuckDB or
the runner.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import functools
import gc
import inspect
import os
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from ..errors import RunInterrupted, SsdlabError

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(
    help="Run SSD test suites with fio, load the results as tidy frames, render reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and show the built-in suites.", invoke_without_command=True)
app.add_typer(suites_app, name="suites")


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"ssdlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print ssdlab's version and exit."
        ),
    ] = False,
) -> None:
    """Run SSD test suites with fio, load the results as tidy frames, render reports."""


def target_size_option(text: str) -> int:
    """``--target-size`` (of ``run`` and ``act``) in bytes; a clear error when it is no size."""
    from ..units import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise SsdlabError(f"--target-size: {exc}") from None


def output_path(text: str) -> Path:
    """An option naming where results or reports go; refused when empty, which a path
    would read as the current directory (an unset ``$OUT`` in a script)."""
    if not text.strip():
        raise typer.BadParameter("is empty; name a path ('.' for the current directory)")
    return Path(text)


@functools.cache
def stderr() -> Console:
    """The console for messages, made on first use; a run goes on when its terminal goes away."""
    from ..console import lossy_stderr

    return lossy_stderr()


# Command modules register themselves on ``app`` when imported (one line per module).
from . import act, core, fleet, qos, reports, telemetry

#: The cyclic garbage collector's youngest-generation threshold in the ``ssdlab`` program.
#: Python's 700 makes the imports of polars, pydantic and the library (about 50,000
#: tracked objects, hardly any garbage) set off about 150 collections, one of them a full
#: one: 0.04-0.1 s of a drive's 0.5 s import. 10,000 leaves about 10 young ones and no full
#: one; cycles are still collected.
GC_YOUNG_THRESHOLD = 10_000


def run() -> NoReturn:
    """The ``ssdlab`` program: :func:`main` with the process's arguments (the collector's
    threshold raised to :data:`GC_YOUNG_THRESHOLD`), then its exit. When no other thread
    runs, the output is flushed, the ``atexit`` handlers run and the process ends without
    the interpreter's teardown (freeing polars and every module takes about a tenth of a
    second)."""
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    code = main()
    if threading.active_count() == 1:  # no thread the interpreter would wait for
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed, or its reader gone
                stream.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


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


def _unwrap(text: str | None) -> str | None:
    """Help text as paragraphs, each one line (the terminal wraps it, not the source)."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def _tidy_help(command: Any) -> None:
    """Help that reads well at any width: docstrings and option help unwrapped (typer keeps
    their source line breaks), no ``<bool>`` after a flag, ``<str>`` (not ``<list[str]>``)
    after a repeatable option, arguments named as the help text names them (``SUITE``)."""
    command.help = _unwrap(command.help)
    command.short_help = _unwrap(command.short_help)
    context = typer.Context(command)
    help_option = command.get_help_option(context)
    for param in [*command.params, *([help_option] if help_option else [])]:
        if getattr(param, "help", None):
            param.help = _unwrap(param.help)
        if param.param_type_name == "argument":
            param.metavar = param.metavar or (param.name or "").upper()
        elif getattr(param, "is_flag", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.metavar is None:
            shown = param.display_type(context)
            param.metavar = re.sub(r"^<list\[(.*)\]>$", r"<\1>", shown)
    for sub in getattr(command, "commands", {}).values():
        _tidy_help(sub)


def _command(argv: list[str]) -> Any:
    """The click command of ``app``; when ``argv`` names one of its commands or groups, built
    with only that one (building every command takes a few tens of milliseconds)."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    named = typer.main.get_command_name
    commands = [
        c for c in app.registered_commands if (c.name or named(c.callback.__name__)) == name
    ]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return typer.main.get_command(app)
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return typer.main.get_command(only)


def _main(argv: list[str] | None) -> int:
    from rich.markup import escape

    command = _command(sys.argv[1:] if argv is None else argv)
    _tidy_help(command)
    try:
        command.main(args=argv, prog_name="ssdlab", standalone_mode=True)
    except SystemExit as exc:  # click's own handling of usage errors, Exit and Abort
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except RunInterrupted as exc:
        stderr().print(f"[yellow]{escape(str(exc))}[/]", soft_wrap=True, highlight=False)
        return 130
    except SsdlabError as exc:
        stderr().print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        return 1
    except KeyboardInterrupt:
        stderr().print("interrupted")
        return 130
    return 0


if __name__ == "__main__":
    run()

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
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from ..errors import InputError, RunInterrupted, SsdlabError

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
    """``--target-size`` (of ``run`` and ``act``) in bytes, read as written
    (:func:`~ssdlab.units.parse_capacity`); a clear error when it is no size."""
    from ..units import parse_capacity

    try:
        return parse_capacity(text)
    except ValueError as exc:
        raise SsdlabError(f"--target-size: {exc}") from None


def output_path(text: str) -> Path:
    """An option naming where results or reports go; refused when empty, which a path
    would read as the current directory (an unset ``$OUT`` in a script)."""
    if not text.strip():
        raise typer.BadParameter("is empty; name a path ('.' for the current directory)")
    return Path(text)


#: the suffixes of the HTML file a report is written to
HTML_SUFFIXES = (".html", ".htm")


def check_html(output: Path, pdf_option: bool = True) -> None:
    """InputError unless ``output`` (``-o`` of a report) names an HTML file: a report is
    HTML whatever its name says (a PDF comes beside it with ``--pdf``, when the command
    has that option: ``pdf_option``); or when it resolves to a name that is not UTF-8."""
    from ..io.text import check_utf8_path

    check_utf8_path(output, "-o")
    if output.suffix.lower() in HTML_SUFFIXES:
        return
    if output.suffix.lower() == ".pdf":
        html = output.with_suffix(".html")
        how = f"add --pdf for {output} beside it" if pdf_option else "print it from a browser"
        raise InputError(f"-o {output}: a report is an HTML file; give -o {html} and {how}")
    raise InputError(
        f"-o {output}: a report is an HTML file; name it with .html "
        f"(-o {output.with_name(output.name + '.html')})"
    )


@functools.cache
def stderr() -> Console:
    """The console for messages, made on first use; a run goes on when its terminal goes away."""
    from ..console import lossy_stderr

    return lossy_stderr()


# Command modules register themselves on ``app`` when imported (one line per module).
from . import act, core, fleet, qos, reports, sql, telemetry

#: The cyclic garbage collector's youngest-generation threshold in the ``ssdlab`` program.
#: Python's 700 makes the imports of polars, pydantic and the library (about 50,000
#: tracked objects, hardly any garbage) set off about 150 collections, one of them a full
#: one: 0.04-0.1 s of a drive's 0.5 s import. 10,000 leaves about 10 young ones and no full
#: one; cycles are still collected.
GC_YOUNG_THRESHOLD = 10_000


def _no_imports_from_working_directory() -> None:
    """Neither this program nor any Python it starts (report kernels, batch workers, JupyterLab)
    imports modules from the working directory (a results directory, say): ``python -m
    ssdlab`` and relative ``PYTHONPATH`` entries put it on ``sys.path`` (only the directory
    ssdlab itself was imported from stays); ``PYTHONSAFEPATH`` keeps it off theirs."""
    with contextlib.suppress(OSError):  # no working directory any more: nothing to import
        cwd = os.path.realpath(os.getcwd())
        ours = os.path.realpath(Path(__file__).parents[2])
        pythonpath = "" if sys.flags.ignore_environment else os.environ.get("PYTHONPATH", "")
        relative = {
            os.path.realpath(p) for p in pythonpath.split(os.pathsep) if not os.path.isabs(p)
        }
        sys.path[:] = [
            entry
            for entry in sys.path
            if (real := os.path.realpath(entry)) == ours or (real != cwd and real not in relative)
        ]
    os.environ["PYTHONSAFEPATH"] = "1"


def run() -> NoReturn:
    """The ``ssdlab`` program: :func:`main` with the process's arguments (the collector's
    threshold raised to :data:`GC_YOUNG_THRESHOLD`, nothing imported from the working
    directory), then its exit. When no other thread runs, the output is flushed, the
    ``atexit`` handlers run and the process ends without the interpreter's teardown (freeing
    polars and every module takes about a tenth of a second)."""
    _no_imports_from_working_directory()
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


def _bytes(text: str) -> str:
    """``text`` as the bytes it was given as, shown on one line: ``'/tmp/x\\xff'``."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte became
        raw = text.encode("utf-8", "surrogatepass")
    return repr(raw)[1:]


def _check_utf8(args: list[str]) -> None:
    """Refuse an argument that is not UTF-8 text (Python keeps its bytes as lone surrogates,
    which no manifest, JSON file or message can hold), naming it and showing its bytes."""
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
            continue
        except UnicodeEncodeError:
            pass
        option, _, value = arg.partition("=")
        before = args[number - 2] if number > 1 else ""
        if arg.startswith("--") and value and option.isascii():
            which, arg = option, value
        elif before.startswith("-") and before.isascii():
            which = f"argument {number} (after {before})"
        else:
            which = f"argument {number}"
        raise InputError(
            f"{which}: {_bytes(arg)} is not valid UTF-8; ssdlab takes paths and names as UTF-8"
        )


def _main(argv: list[str] | None) -> int:
    from rich.markup import escape

    args = sys.argv[1:] if argv is None else argv
    try:
        _check_utf8(args)
        command = _command(args)
        _tidy_help(command)
        command.main(args=argv, prog_name="ssdlab", standalone_mode=True)
    except SystemExit as exc:  # click's own handling of usage errors, Exit and Abort
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        return _stopped_status() if code == 130 else code  # typer's exit on an interrupt
    except RunInterrupted as exc:
        stderr().print(f"[yellow]{escape(str(exc))}[/]", soft_wrap=True, highlight=False)
        return _stopped_status()
    except SsdlabError as exc:
        stderr().print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        return 1
    except KeyboardInterrupt:
        stderr().print("interrupted")
        return _stopped_status()
    return 0


def _stopped_status() -> int:
    """The exit status of a command the user stopped: 128 + the signal that stopped its run,
    143 for SIGTERM and 130 for Ctrl-C (SIGINT, also when no run noted a signal)."""
    from ..session import stop_signal

    return 128 + (stop_signal() or signal.SIGINT)


if __name__ == "__main__":
    run()

"""The command line starts without the data libraries: ``import ssdlab.cli`` and the help of
every command load none of them (checked in fresh interpreters, by what they import, not by
timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("polars", "duckdb", "altair", "pandas", "numpy", "pyarrow", "ssdlab.runner")

#: ``python -c``: run the CLI with ARGV (none: only import it), then print the heavy modules
#: it loaded as JSON
PROBE = """
import json, sys
import ssdlab.cli
argv = sys.argv[1:]
if argv:
    try:
        ssdlab.cli.main(argv)
    except SystemExit:
        pass
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy or m in heavy)))
"""


def loaded(*argv: str) -> list[str]:
    code = PROBE.format(heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("--help",),
        ("import", "--help"),
        ("run", "--help"),
        ("act", "run", "--help"),
        ("power", "attach", "--help"),
        ("report", "--help"),
        ("plan", "--help"),
        ("sql", "--help"),
        ("--version",),
    ],
)
def test_cli_and_help_load_no_data_library(argv: tuple[str, ...]) -> None:
    assert loaded(*argv) == []


def test_probe_sees_what_a_command_loads(tmp_path) -> None:
    """The probe itself works: a command that reads results does load polars."""
    assert "polars" in loaded("summary", str(tmp_path / "missing"))


def test_a_command_built_alone_has_the_help_of_the_whole_app(capsys) -> None:
    """``ssdlab NAME ...`` builds only command NAME: its help (and every subcommand's, which
    lists the options) is the one the app built with all its commands gives; any other word
    builds them all."""
    import typer

    from ssdlab.cli import _command, _tidy_help, app

    def helps(command, prefix: str = "") -> dict[str, str]:
        found = {}
        for name, sub in getattr(command, "commands", {}).items():
            sub.get_help(typer.Context(sub, info_name=name))  # typer prints it
            found[prefix + name] = capsys.readouterr().out
            assert "Usage" in found[prefix + name]
            found |= helps(sub, f"{prefix}{name} ")
        return found

    whole = typer.main.get_command(app)
    _tidy_help(whole)
    every = helps(whole)
    names = list(whole.commands)
    assert "import" in names and "act" in names
    for name in names:
        alone = _command([name, "--help"])
        _tidy_help(alone)
        assert list(alone.commands) == [name]
        assert helps(alone) == {k: v for k, v in every.items() if k.split()[0] == name}
    assert list(_command(["--help"]).commands) == names
    assert list(_command(["no-such-command"]).commands) == names


RENDERING = {"altair", "vl_convert", "nbconvert", "papermill", "duckdb"}


@pytest.mark.parametrize(
    "argv",
    [("summary", "data/quick-demo"), ("report", "data/quick-demo", "-o", "x.pdf")],
)
def test_commands_that_render_nothing_load_no_renderer(argv: tuple[str, ...]) -> None:
    """``summary``, and ``report`` refusing its arguments, load no chart or notebook library
    (``summary`` took 4.5 s here importing altair to find out whether its path is a fleet)."""
    code = PROBE.replace("{heavy!r}", repr(tuple(RENDERING))).replace("{{", "{").replace("}}", "}")
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[1],
    )
    assert json.loads(proc.stdout.splitlines()[-1]) == []

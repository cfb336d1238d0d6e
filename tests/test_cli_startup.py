"""The command line starts without the data libraries: ``import ssdlab.cli`` and the help of
every command load none of them (checked in fresh interpreters, by what they import, not by
timing)."""

from __future__ import annotations

import json
import subprocess
import sys

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
        ("--version",),
    ],
)
def test_cli_and_help_load_no_data_library(argv: tuple[str, ...]) -> None:
    assert loaded(*argv) == []


def test_probe_sees_what_a_command_loads(tmp_path) -> None:
    """The probe itself works: a command that reads results does load polars."""
    assert "polars" in loaded("summary", str(tmp_path / "missing"))

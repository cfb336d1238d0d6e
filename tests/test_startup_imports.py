"""Commands that render nothing import no chart, notebook or DuckDB library they do not use.

Each command of ``benchmarks/bench_startup.py`` (one list: what the benchmark times is what
is checked here) runs as users run it, ``python -X importtime -m ssdlab ...`` in a fresh
interpreter, on a tiny null-engine run made here and the fixtures; the modules it imported
are read from the ``import time:`` lines on its stderr. Unlike ``sys.modules`` read after
calling the CLI in-process, this sees every import until the process ends however it ends
(``cli.run`` leaves by ``os._exit``), in any thread and in worker processes (which inherit
the flag), and runs the program's real entry. Each command must also have done its work
(output and no error line, or its one error line where it refuses by design), so a command
stopping early cannot pass by importing little.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ssdlab_cli

from benchmarks.bench_startup import (
    FIXTURES,
    FORBIDDEN,
    Data,
    check_ran,
    commands,
    import_times,
    ssdlab,
)

SUITE = """
name = "tiny-null"
description = "One 4K random read step on the null engine."

[defaults]
runtime_s = 1
size = "16m"
ioengine = "null"

[[steps]]
name = "randread-4k"
rw = "randread"
bs = "4k"
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    """A tiny run with a power trace and a drive spec, a copy of it, and their parent."""
    work = tmp_path_factory.mktemp("startup")
    (work / "tiny.toml").write_text(SUITE)
    run = work / "runs" / "a"
    power = ("--power", "command:echo 5", "--power-interval", "0.2")
    proc = ssdlab_cli("run", work / "tiny.toml", "--out", run, "--smart", "none", *power)
    assert proc.returncode == 0, proc.stderr
    shutil.copy(FIXTURES / "endurance" / "drive.toml", run)
    shutil.copytree(run, run.with_name("b"))
    return Data(run, run.with_name("b"), run.parent, run, work / "out")


@pytest.mark.parametrize("name", list(commands(Data(*[Path()] * 5))))
def test_a_command_imports_no_renderer_it_does_not_use(name: str, data: Data) -> None:
    command = commands(data)[name]
    proc = ssdlab(command.args, data.out, "-X", "importtime")
    check_ran(name, command, proc)
    loaded = import_times(proc.stderr)
    assert "ssdlab" in loaded and "typer" in loaded  # the report was read
    if "duckdb" in command.uses:  # sql: a library a command uses is seen
        assert "duckdb" in loaded
    unused = [lib for lib in FORBIDDEN if lib in loaded and lib not in command.uses]
    assert unused == [], f"ssdlab {' '.join(command.args)} imported {unused}"

"""An empty output path (an unset ``$OUT`` in a script) is refused, not read as ``.``."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ssdlab_cli


@pytest.mark.parametrize(
    "command",
    [
        ["run", "quick", "--scale", "0.01", "-o"],
        ["import", "fio.json", "-o"],
        ["report", "results", "-o"],
        ["batch", "results", "-o"],
        ["act", "run", "-o"],
        ["act", "import", "act.log", "-o"],
        ["smart", "import", "captures", "-o"],
        ["smart", "report", "history", "-o"],
    ],
)
def test_an_empty_output_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    done = ssdlab_cli(*command, "")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is empty" in done.stderr and "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())  # nothing written in the current directory

"""``act run`` and ``act score`` refuse a number they cannot use with one line naming the
option, before the results directory or the target exists: a NaN or infinite ``--max-lag``
reached act.json as ``null`` (and every later read of it failed), a negative one gave a
pydantic traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ssdlab_cli

from ssdlab.act.run import act_trials
from ssdlab.errors import SsdlabError

RUN = ["act", "run", "--load", "1", "--duration", "1", "--target-size", "16m"]
SCORE = ["act", "score", "--duration", "1", "--target-size", "16m"]


@pytest.mark.parametrize(
    ("command", "args", "says"),
    [
        (RUN, ["--max-lag", "nan"], "--max-lag must be a finite number of seconds > 0, not nan"),
        (RUN, ["--max-lag", "inf"], "--max-lag must be a finite number of seconds > 0, not inf"),
        (RUN, ["--max-lag", "-1"], "--max-lag must be a finite number of seconds > 0"),
        (RUN, ["--max-lag", "0"], "--max-lag must be a finite number of seconds > 0"),
        (SCORE, ["--max-lag", "-5"], "--max-lag must be a finite number of seconds > 0"),
        (RUN, ["--hist-msec", "0"], "--hist-msec must be a whole number of at least 1, not 0"),
        (RUN, ["--small-read-jobs", "-1"], "--small-read-jobs must be a whole number"),
        (SCORE, ["--slice", "2"], "the duration (1 s) must be whole slices of 2 s"),
    ],
)
def test_a_bad_number_is_one_line_and_creates_nothing(
    tmp_path: Path, command: list[str], args: list[str], says: str
) -> None:
    out = tmp_path / "o"
    proc = ssdlab_cli(*command, "--out", out, *args)
    line = proc.stderr.strip()
    assert proc.returncode != 0 and line.startswith(f"error: {says}") and "\n" not in line, line
    assert not out.exists()


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"duration_s": 0}, "--duration must be a whole number of at least 1, not 0"),
        ({"slice_s": -3}, "--slice must be a whole number of at least 1, not -3"),
        ({"duration_s": 1.5}, "--duration must be a whole number of at least 1, not 1.5"),
        ({"max_lag_s": float("nan")}, "--max-lag must be a finite number of seconds > 0"),
        ({"max_lag_s": True}, "--max-lag must be a finite number of seconds > 0"),
    ],
)
def test_the_library_checks_before_creating_anything(
    tmp_path: Path, given: dict[str, object], says: str
) -> None:
    """``duration_s=0`` silently took ACT's 24-hour default; the API has no typer to check."""
    with pytest.raises(SsdlabError, match="^" + re.escape(says)):
        act_trials(tmp_path / "o", target_size=16 << 20, **given)  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("load", ["nan", "-1", "1e300"])
def test_an_imported_log_with_a_load_that_is_no_load_is_one_line(tmp_path: Path, load: str) -> None:
    log = Path(__file__).parent / "fixtures" / "act" / "act_storage_1x_30s.log"
    proc = ssdlab_cli(
        "act", "import", log, "--slice", "10", "--load", load, "--out", tmp_path / "o"
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "--load must be" in proc.stderr and not (tmp_path / "o").exists()

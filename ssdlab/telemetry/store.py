"""Where telemetry lives in a results directory (beside what :mod:`ssdlab.runner` writes;
every name is :mod:`ssdlab.layout`'s)::

    drive.toml                          the drive's endurance rating, kept there by the user
                                        (or drive.yaml / drive.yml; see telemetry.endurance)
    power/samples.csv                   live samples of ``ssdlab run --power``: time_s,power_w,
                                        appended and flushed one by one as they come
    power/trace.parquet                 the power trace steps are aligned with (time_s epoch
                                        seconds, power_w watts, ...), rewritten atomically
    power/source.json                   what recorded the trace (source, command, counts)
    power/raw/<file>                    a trace attached by ``ssdlab power attach``, as given
    steps/NNN-<step>/smart/before/*     raw SMART tool output captured just before fio started
    steps/NNN-<step>/smart/after/*      ... and just after fio exited
    steps/NNN-<step>/smart/captures.json  when each phase was captured, and what failed

A capture whose output is not a recognised SMART document is kept as ``.<name>.rejected``
(hidden, so that the phase directory still reads as one snapshot).
"""

from __future__ import annotations

import io
import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..atomic import write_bytes_atomic, write_text_atomic
from ..errors import InputError
from ..io.text import parse_json, read_text
from ..layout import (
    DRIVE_SPEC_NAMES,
    POWER_DIR,
    POWER_RAW,
    POWER_SOURCE,
    POWER_TRACE,
    SMART_CAPTURES,
    SMART_DIR,
)
from .power import PowerTrace
from .power.trace import first_line
from .record import SmartRecord
from .snapshot import read_snapshot


def find_drive_spec(results_dir: Path) -> Path | None:
    """The drive spec file of a results directory, None when there is none."""
    found = [results_dir / name for name in DRIVE_SPEC_NAMES if (results_dir / name).is_file()]
    if len(found) > 1:
        raise InputError(f"{results_dir}: several drive specs ({', '.join(p.name for p in found)})")
    return found[0] if found else None


def write_trace(results_dir: Path, trace: PowerTrace) -> None:
    """Save a power trace and its ``meta`` atomically under ``power/``."""
    buffer = io.BytesIO()
    trace.frame.write_parquet(buffer)
    directory = results_dir / POWER_DIR
    write_bytes_atomic(directory / POWER_TRACE, buffer.getvalue())
    write_text_atomic(
        directory / POWER_SOURCE, json.dumps(trace.meta, indent=2, default=str) + "\n"
    )


def replace_trace(results_dir: Path, trace: PowerTrace, raw_name: str, raw: bytes) -> None:
    """Make ``trace`` the run's only power data, with the file it was read from kept as
    ``power/raw/<raw_name>`` (``raw``, as given)."""
    directory = results_dir / POWER_DIR
    shutil.rmtree(directory, ignore_errors=True)
    write_bytes_atomic(directory / POWER_RAW / raw_name, raw)
    write_trace(results_dir, trace)


def read_trace(results_dir: Path) -> pl.DataFrame | None:
    """The saved power trace (time_s, power_w, ...), None when the run has none."""
    path = results_dir / POWER_DIR / POWER_TRACE
    if not path.exists():
        return None
    try:
        return pl.read_parquet(path, glob=False)  # a [ ] * ? in its path is no pattern
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path}: unreadable power trace: {first_line(exc)}") from None


def write_captures(step_dir: Path, phase: str, when: datetime, errors: list[str]) -> None:
    """Record when ``phase`` was captured and which commands failed."""
    path = step_dir / SMART_DIR / SMART_CAPTURES
    done = read_captures(step_dir)
    done[phase] = {"time": when.isoformat(), "errors": errors}
    write_text_atomic(path, json.dumps(done, indent=2) + "\n")


def read_captures(step_dir: Path) -> dict[str, Any]:
    """``captures.json`` of a step: phase -> {time, errors}; empty without SMART captures;
    InputError naming the file when it is not such a record."""
    path = step_dir / SMART_DIR / SMART_CAPTURES
    if not path.exists():
        return {}
    captures = parse_json(read_text(path, "a capture record", "SMART captures"), path)
    if not isinstance(captures, dict) or not all(map(_valid_capture, captures.values())):
        raise InputError(f"{path}: not a capture record (phase: {{time, errors}})")
    return captures


def _valid_capture(capture: Any) -> bool:
    """Whether ``capture`` is ``{time, errors}`` with an ISO 8601 time (or none)."""
    if not isinstance(capture, dict):
        return False
    when = capture.get("time")
    if when is None:
        return True
    try:
        datetime.fromisoformat(when)
    except (TypeError, ValueError):
        return False
    return True


def step_snapshot(step_dir: Path, phase: str) -> SmartRecord | None:
    """The SMART snapshot taken ``phase`` ("before"/"after") the step, None if none was."""
    directory = step_dir / SMART_DIR / phase
    if not directory.is_dir() or not any(not p.name.startswith(".") for p in directory.iterdir()):
        return None
    return read_snapshot(directory)

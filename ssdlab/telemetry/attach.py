"""A power trace recorded separately (wall-clock times) attached to a run of ``ssdlab run``
(``ssdlab power attach``): read with its format's reader, kept as given under ``power/raw/``
and saved as the run's trace (see :mod:`ssdlab.telemetry.store`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError
from ..formats import FORMATS
from ..io.text import read_bytes
from ..layout import POWER_DIR, POWER_TRACE
from ..manifest import Manifest, now
from ..plugins import type_name
from . import store
from .power import POWER_FORMATS, PowerTrace, generic, step_power


@dataclass(frozen=True)
class ReaderOptions:
    """Options for a power reader; each format takes those its ``Format.options`` name."""

    columns: Mapping[str, str] | None = None
    units: Mapping[str, str] | None = None
    start_epoch_s: float | None = None
    tz: str | None = None


def reader_options(
    format: str, options: ReaderOptions, names: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The options given (not None) as keywords for the power format ``format``'s reader;
    InputError naming an unknown format, the options it does not take (its
    ``Format.options``) or the ones it needs (``Format.needs``), by ``names`` (default their
    own)."""
    try:
        fmt = POWER_FORMATS.format(format)
    except KeyError:
        known = ", ".join(POWER_FORMATS)
        raise InputError(f"unknown power format {format!r} (known: {known})") from None
    given = {key: value for key, value in asdict(options).items() if value is not None}
    shown = names or {}
    unknown = [shown.get(key, key) for key in given if key not in fmt.options]
    if unknown:
        raise InputError(f"power format {format!r} takes no {', '.join(unknown)}")
    missing = [shown.get(key, key) for key in fmt.needs if key not in given]
    if missing:
        raise InputError(f"power format {format!r} needs {', '.join(missing)}")
    return given


def attach_power(
    results_dir: Path,
    trace: Path,
    *,
    format: str | None = None,
    options: ReaderOptions | None = None,
    replace: bool = False,
    option_names: Mapping[str, str] | None = None,
) -> PowerTrace:
    """Read ``trace`` (``format``, default: detected) and make it the power trace of the run
    in ``results_dir``; the trace read (its meta with the time it was attached).

    InputError, with nothing changed, for an import (it has no step times), a run that has a
    trace unless ``replace``, an unknown format, options its format does not name (shown by
    ``option_names``, see :func:`reader_options`), a trace without samples and one that
    covers none of the run's steps whole (:func:`_check_covers_a_step`).
    """
    manifest = Manifest.load(results_dir)
    if manifest.source != "run":
        raise InputError(f"{results_dir}: power attach needs a run of 'ssdlab run', not an import")
    existing = results_dir / POWER_DIR / POWER_TRACE
    if existing.exists() and not replace:
        raise InputError(f"{existing}: the run has a power trace; --replace it")
    try:
        name = format or POWER_FORMATS.detect(trace)
    except InputError as exc:  # not a meter ssdlab knows: say how to map a CSV's columns
        if (hint := generic.mapping_hint(trace)) is None:
            raise
        raise InputError(f"{exc}; {hint}") from None
    try:
        keywords = reader_options(name, options or ReaderOptions(), option_names)
    except InputError as exc:
        hint = generic.mapping_hint(trace) if name == generic.NAME else None
        if hint is None:
            raise
        raise InputError(f"{exc}: {hint}") from None
    read = POWER_FORMATS[name](trace, **keywords)
    if not isinstance(read, PowerTrace):
        raise InputError(
            f"{trace}: {FORMATS.label(POWER_FORMATS.format(name))} returned "
            f"{type_name(read)}, not a PowerTrace (frame with time_s, power_w; meta)"
        )
    if read.frame.is_empty():
        raise InputError(f"{trace}: no power samples")
    _check_covers_a_step(results_dir, manifest, trace, read)
    attached = PowerTrace(read.frame, read.meta | {"attached": now()})
    raw = read_bytes(trace, kind="power traces")
    store.replace_trace(results_dir, attached, trace.name, raw)
    return attached


def _when(epoch_s: float) -> str:
    """Epoch seconds as UTC wall-clock time: ``2026-05-01 10:00:00.250 UTC``."""
    return f"{datetime.fromtimestamp(epoch_s, UTC).isoformat(' ', 'milliseconds')[:23]} UTC"


def _check_covers_a_step(
    results_dir: Path, manifest: Manifest, trace: Path, read: PowerTrace
) -> None:
    """InputError unless ``read`` covers the measured window of at least one step of the run
    whole (:func:`~ssdlab.telemetry.power.step_power`), naming the span of the trace and of
    the steps: a trace of another time (or time zone) would be stored only to be replaced."""
    from ..pipeline import RunContext
    from .frames import step_windows

    windows = step_windows(RunContext(results_dir, manifest)).filter(
        pl.col("window_reason").is_null()
    )
    if windows.is_empty():
        raise InputError(f"{results_dir}: no step was placed in time to align {trace} with")
    keyed = windows.select(pl.col("step_index").alias("step"), "start_s", "end_s")
    if step_power(read.frame, keyed)["covered"].any():
        return
    times = read.frame.drop_nulls(["time_s", "power_w"])["time_s"]
    if times.is_empty():
        raise InputError(f"{trace}: no power sample has both a time and a power")
    raise InputError(
        f"{trace}: covers no step of the run whole, nothing attached: the trace spans "
        f"{_when(times.min())} to {_when(times.max())}, the steps {_when(keyed['start_s'].min())} "
        f"to {_when(keyed['end_s'].max())} (for relative or local times see --start-epoch, --tz)"
    )

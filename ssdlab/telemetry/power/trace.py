"""The power trace every power source returns, and helpers shared by the CSV readers.

A trace's frame has ``time_s`` (epoch seconds, float) and ``power_w`` (watts), plus
``voltage_v`` (volts) and ``current_a`` (amperes) where the source measures them; rows are
sorted by time. ``meta`` describes the source (path, sample count, dropped readings, ...).

Samples, not files, are judged: a row whose time or a value is NaN or infinite, or whose
``power_w`` is negative (a drive draws power, it never gives any back), is dropped and counted
in ``meta["dropped_invalid"]`` (with the file in ``meta["path"]``), so one glitch of a meter
does not cost the whole trace. A file that is not in the format is refused with an
:class:`~ssdlab.errors.InputError` naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from ...errors import InputError
from ...io.text import open_regular

CANONICAL = ("time_s", "power_w", "voltage_v", "current_a")
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9}


class PowerTrace(NamedTuple):
    """Power samples (``frame``: time_s, power_w[, voltage_v, current_a]) and ``meta``: the
    readers' ``(frame, meta)``, so ``frame, meta = read_quarch_csv(path)`` works too."""

    frame: pl.DataFrame
    meta: dict[str, Any]


def unit_scale(unit: str, base: str, where: str) -> float:
    """Factor from ``unit`` to the SI ``base`` unit: ``unit_scale("uW", "W", ...)`` = 1e-6."""
    prefix = unit[: -len(base)] if unit.endswith(base) else None
    if prefix not in _PREFIX:
        raise InputError(f"{where}: unit {unit!r} is not a (k, m, u, n) multiple of {base}")
    return _PREFIX[prefix]


def read_csv(path: Path, *, skip_rows: int = 0) -> pl.DataFrame:
    """A CSV file with a header row (after ``skip_rows`` lines), errors naming the file;
    FIFOs, devices and files over the size limit of power traces are refused unread."""
    try:
        with open_regular(path, "power traces") as fh:
            return pl.read_csv(fh, skip_rows=skip_rows, infer_schema_length=None)
    except pl.exceptions.NoDataError:
        raise InputError(f"{path}: empty file") from None
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path}: not a readable CSV file: {first_line(exc)}") from None


def first_line(exc: Exception, limit: int = 200) -> str:
    """The first line of an exception's (polars') multi-line message, at most ``limit`` chars."""
    line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return line if len(line) <= limit else f"{line[: limit - 3]}..."


def require_columns(frame: pl.DataFrame, names: list[str], where: str | Path) -> None:
    """InputError naming ``where`` (a file, or which frame) unless ``frame`` has ``names``."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise InputError(
            f"{where}: missing column(s) {', '.join(map(repr, missing))} "
            f"(found {', '.join(map(repr, frame.columns))})"
        )


def scaled(column: str, factor: float) -> pl.Expr:
    return pl.col(column).cast(pl.Float64) * factor


def make_trace(
    frame: pl.DataFrame, path: Path, columns: dict[str, pl.Expr], meta: dict[str, Any]
) -> PowerTrace:
    """Evaluate ``columns`` (canonical name -> expression) into a time-sorted trace.

    Rows without a time or a power value are dropped and counted in ``meta["dropped_empty"]``.
    """
    first = [name for name in CANONICAL if name in columns]
    names = first + [name for name in columns if name not in first]
    try:
        out = frame.select(columns[name].alias(name) for name in names)
    except pl.exceptions.PolarsError as exc:
        raise InputError(
            f"{path}: non-numeric value in a power column: {first_line(exc)}"
        ) from None
    present = out.drop_nulls(["time_s", "power_w"])
    kept, dropped = drop_invalid(present)
    meta = {"path": str(path), **meta, "samples": kept.height}
    meta["dropped_empty"] = out.height - present.height
    meta["dropped_invalid"] = meta.get("dropped_invalid", 0) + dropped
    return PowerTrace(kept, meta)


def drop_invalid(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``frame`` sorted by time without rows holding NaN or infinity or a negative
    ``power_w``, and how many were dropped (see the module docstring)."""
    valid = pl.all_horizontal(
        pl.col(name).is_finite().fill_null(True)
        for name, dtype in frame.schema.items()
        if dtype.is_float()
    ) & (pl.col("power_w") >= 0)
    kept = frame.filter(valid).sort("time_s")
    return kept, frame.height - kept.height

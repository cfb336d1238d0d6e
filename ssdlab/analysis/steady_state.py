"""SNIA PTS steady-state determination (Enterprise 1.1 / 2.0.x).

The tracked variable y is judged over the measurement window, the last ``window`` rounds
(x = round number, counted from 1):

- data excursion: max(y) - min(y) <= 0.20 x mean(y), and
- slope excursion: |slope of the least-squares line| x (window - 1) <= 0.10 x mean(y).

When ``max_rounds`` (25) pass without steady state, the test stops and reports the last
window (rounds 21-25) as not steady. fio's ``ss=`` option is a different rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

DATA_EXCURSION_LIMIT = 0.20
SLOPE_EXCURSION_LIMIT = 0.10
# The values are measured decimals and the arithmetic is binary: a measured excursion
# exactly on a limit (e.g. 20 for a mean of 100) may come out a few ulps above it.
_REL_TOL = 1e-9


@dataclass(frozen=True)
class SteadyState:
    """The PTS steady-state determination over a measurement window.

    The figures are ``None`` when there were fewer rounds than the window; ``reason`` says
    why the window is or is not steady.
    """

    steady: bool
    reason: str
    window: int
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    mean: float | None = None
    data_excursion: float | None = None
    allowed_data_excursion: float | None = None
    slope: float | None = None
    intercept: float | None = None
    slope_excursion: float | None = None
    allowed_slope_excursion: float | None = None

    def to_table(self) -> pl.DataFrame:
        """The determination as the PTS report's table: columns ``item`` and ``value``."""
        rows = [("Measurement window", _rounds_text(self.rounds, self.window))]
        if self.mean is not None:
            rows += [
                ("Average value", _num(self.mean)),
                ("Allowed maximum data excursion", _num(self.allowed_data_excursion)),
                ("Measured maximum data excursion", _excursion(self.data_excursion, self.mean)),
                ("Allowed maximum slope excursion", _num(self.allowed_slope_excursion)),
                ("Measured maximum slope excursion", _excursion(self.slope_excursion, self.mean)),
                ("Least squares linear fit formula", self._fit()),
            ]
        rows.append(("Steady state", f"{'yes' if self.steady else 'no'}: {self.reason}"))
        return pl.DataFrame(rows, schema=["item", "value"], orient="row")

    def _fit(self) -> str:
        if self.slope is None or self.intercept is None:
            return "-"
        sign = "-" if self.intercept < 0 else "+"
        return f"{_num(self.slope)} x R {sign} {_num(abs(self.intercept))}"


def _num(value: float | None, decimals: int = 3) -> str:
    """A figure for a table: rounded, trailing zeros dropped."""
    if value is None:
        return "-"
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _excursion(excursion: float | None, mean: float) -> str:
    """``300 (2.56 % of average)``."""
    if excursion is None or mean == 0:
        return _num(excursion)
    return f"{_num(excursion)} ({_num(100 * excursion / mean, 2)} % of average)"


def _rounds_text(rounds: tuple[int, ...], window: int) -> str:
    if not rounds:
        return f"no rounds (needs {window})"
    return f"rounds {rounds[0]}-{rounds[-1]}"


def _within(measured: float, allowed: float) -> bool:
    return measured <= allowed or math.isclose(measured, allowed, rel_tol=_REL_TOL)


def snia_steady_state(values: Sequence[float], window: int = 5) -> SteadyState:
    """Judge the last ``window`` of ``values`` (value i is round i + 1) by the PTS rule."""
    if window < 2:
        raise ValueError(f"steady-state window must be at least 2 rounds, got {window}")
    ys = tuple(float(v) for v in values[-window:])
    first = len(values) - len(ys) + 1
    xs = tuple(range(first, first + len(ys)))
    if not all(math.isfinite(y) for y in ys):
        raise ValueError(f"steady-state values must be finite numbers, got {ys}")
    if len(ys) < window:
        reason = f"only {len(ys)} round(s) measured; the window needs {window}"
        return SteadyState(False, reason, window, xs, ys)

    mean = math.fsum(ys) / window
    x_mean = math.fsum(xs) / window
    slope = math.fsum((x - x_mean) * (y - mean) for x, y in zip(xs, ys, strict=True)) / (
        math.fsum((x - x_mean) ** 2 for x in xs)
    )
    data_excursion = max(ys) - min(ys)
    slope_excursion = abs(slope) * (window - 1)
    allowed_data = DATA_EXCURSION_LIMIT * mean
    allowed_slope = SLOPE_EXCURSION_LIMIT * mean
    data_ok = _within(data_excursion, allowed_data)
    slope_ok = _within(slope_excursion, allowed_slope)
    verdicts = [
        f"{name} excursion {_excursion(measured, mean)} "
        f"{'within' if ok else 'exceeds'} the {limit * 100:g} % limit"
        for name, measured, ok, limit in (
            ("data", data_excursion, data_ok, DATA_EXCURSION_LIMIT),
            ("slope", slope_excursion, slope_ok, SLOPE_EXCURSION_LIMIT),
        )
    ]
    return SteadyState(
        steady=data_ok and slope_ok,
        reason="; ".join(verdicts),
        window=window,
        rounds=xs,
        values=ys,
        mean=mean,
        data_excursion=data_excursion,
        allowed_data_excursion=allowed_data,
        slope=slope,
        intercept=mean - slope * x_mean,
        slope_excursion=slope_excursion,
        allowed_slope_excursion=allowed_slope,
    )


def steady_round(
    values: Sequence[float], window: int = 5, max_rounds: int = 25
) -> SteadyState | None:
    """After the latest round: the final determination if the test stops now, else ``None``.

    It stops when the last ``window`` rounds are steady, or at ``max_rounds`` (then the
    result is the not-steady determination of the last window, e.g. rounds 21-25).
    """
    if max_rounds < window:
        raise ValueError(f"max_rounds ({max_rounds}) must be at least the window ({window})")
    if len(values) > max_rounds:
        raise ValueError(f"{len(values)} rounds given, more than max_rounds ({max_rounds})")
    state = snia_steady_state(values, window)
    return state if state.steady or len(values) == max_rounds else None


def run_until_steady(
    measure_round: Callable[[int], float], *, window: int = 5, max_rounds: int = 25
) -> SteadyState:
    """Call ``measure_round(round_number)`` (from 1) until steady or ``max_rounds`` rounds."""
    values: list[float] = []
    while True:
        values.append(measure_round(len(values) + 1))
        state = steady_round(values, window, max_rounds)
        if state is not None:
            return state


def window_averages(
    classified: pl.DataFrame, block: str, rounds: Sequence[int], column: str
) -> pl.DataFrame:
    """Per block size and read share (``bs_bytes``, ``read_pct``), the mean over a round
    block's measurement window ``rounds`` of each cell's ``column`` (``iops`` and
    ``bw_bytes_s`` summed over directions, ``clat_mean_ns`` averaged): the PTS result table,
    as ``value``, highest read share first."""
    cells = classified.filter((pl.col("block") == block) & pl.col("round").is_in(list(rounds)))
    per_cell = cells.group_by("step_index", "bs_bytes", "read_pct").agg(
        pl.col("iops").sum(), pl.col("bw_bytes_s").sum(), pl.col("clat_mean_ns").mean()
    )
    return (
        per_cell.group_by("bs_bytes", "read_pct")
        .agg(pl.col(column).mean().alias("value"))
        .sort("read_pct", descending=True)
    )

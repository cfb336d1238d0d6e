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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

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
    why the window is or is not steady (in the values' own unit).
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

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], window_values: Mapping[int, float]
    ) -> SteadyState:
        """A determination as recorded (a row of the ``steady_state`` frame: ``steady``,
        ``reason``, ``window`` and the figures) with its window's ``round -> value``."""
        rounds = tuple(sorted(window_values))
        return cls(
            steady=bool(record["steady"]),
            reason=record.get("reason") or "",
            window=int(record["window"]),
            rounds=rounds,
            values=tuple(float(window_values[r]) for r in rounds),
            **{name: record.get(name) for name in _FIGURES},
        )

    def scaled(self, factor: float) -> SteadyState:
        """The same determination with every value and figure times ``factor`` (display
        units: ns -> µs, bytes/s -> MB/s); the verdict does not change."""

        def times(value: float | None) -> float | None:
            return None if value is None else value * factor

        return replace(
            self,
            values=tuple(v * factor for v in self.values),
            **{name: times(getattr(self, name)) for name in _FIGURES},
        )

    def fit(self, round_no: float) -> float | None:
        """The least-squares line at ``round_no``."""
        if self.slope is None or self.intercept is None:
            return None
        return self.slope * round_no + self.intercept

    @property
    def data_band(self) -> tuple[float, float] | None:
        """The allowed data excursion as a band: as wide as the allowed excursion (20 % of
        the average), centred between the window's lowest and highest value. Every round of
        the window lies inside it exactly when the data excursion is within the limit."""
        if self.allowed_data_excursion is None or not self.values:
            return None
        centre = (max(self.values) + min(self.values)) / 2
        half = self.allowed_data_excursion / 2
        return centre - half, centre + half

    @property
    def slope_band(self) -> tuple[float, float] | None:
        """The allowed slope excursion as a band: as wide as the allowed excursion (10 % of
        the average), centred on the average. The fit line passes through the average at the
        window's middle round, so it stays inside the band from the window's first to its
        last round exactly when the slope excursion is within the limit."""
        if self.allowed_slope_excursion is None or self.mean is None:
            return None
        half = self.allowed_slope_excursion / 2
        return self.mean - half, self.mean + half

    @property
    def verdict(self) -> str:
        """Why the window is or is not steady, as shares of the average (no unit), e.g.
        ``data excursion 2.56 % of the average (limit 20 %); slope excursion 17.12 % of the
        average exceeds the 10 % limit``; without figures, the recorded reason."""
        if self.mean is None or self.mean == 0:
            return self.reason
        parts = []
        for name, measured, limit in (
            ("data", self.data_excursion, DATA_EXCURSION_LIMIT),
            ("slope", self.slope_excursion, SLOPE_EXCURSION_LIMIT),
        ):
            if measured is None:
                continue
            share = 100 * measured / self.mean
            ok = _within(measured, limit * self.mean)
            parts.append(
                f"{name} excursion {_share(share)} % of the average "
                f"{'within' if ok else 'exceeds'} the {limit * 100:g} % limit"
            )
        return "; ".join(parts) or self.reason

    def to_table(self, unit: str = "", rounds_run: int | None = None) -> pl.DataFrame:
        """The determination as the PTS report's table: columns ``item`` and ``value``;
        figures carry ``unit`` and the excursions their share of the average."""
        rows = [("Measurement window", _rounds_text(self.rounds, self.window, rounds_run))]
        if self.mean is not None:
            rows += [
                ("Average value", _with_unit(self.mean, unit)),
                (
                    "Allowed maximum data excursion",
                    _allowed(self.allowed_data_excursion, unit, DATA_EXCURSION_LIMIT),
                ),
                (
                    "Measured maximum data excursion",
                    _excursion(self.data_excursion, self.mean, unit),
                ),
                (
                    "Allowed maximum slope excursion",
                    _allowed(self.allowed_slope_excursion, unit, SLOPE_EXCURSION_LIMIT),
                ),
                (
                    "Measured maximum slope excursion",
                    _excursion(self.slope_excursion, self.mean, unit),
                ),
                ("Least squares linear fit formula", self._fit()),
            ]
        verdict = self.verdict
        rows.append(("Steady state", f"{'yes' if self.steady else 'no'}: {verdict}"))
        return pl.DataFrame(rows, schema=["item", "value"], orient="row")

    def _fit(self) -> str:
        if self.slope is None or self.intercept is None:
            return "-"
        sign = "-" if self.intercept < 0 else "+"
        return f"{_num(self.slope, trim=True)} x R {sign} {_num(abs(self.intercept), trim=True)}"


#: the figures of a determination, in the values' unit
_FIGURES = (
    "mean",
    "data_excursion",
    "allowed_data_excursion",
    "slope",
    "intercept",
    "slope_excursion",
    "allowed_slope_excursion",
)


def _num(value: float | None, decimals: int = 2, trim: bool = False) -> str:
    """A figure for a table: thousands separated, ``decimals`` decimals (so figures of one
    table line up; ``trim`` drops trailing zeros, for a formula), three significant digits
    below 1."""
    if value is None:
        return "-"
    if value != 0 and abs(value) < 1:
        text = f"{value:.3g}"
    else:
        text = f"{value:,.{decimals}f}"
        if trim and "." in text:
            text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _with_unit(value: float | None, unit: str) -> str:
    return f"{_num(value)} {unit}".rstrip() if value is not None else "-"


def _allowed(value: float | None, unit: str, limit: float) -> str:
    """``2,345.36 IOPS (20 % of the average)``."""
    return f"{_with_unit(value, unit)} ({limit * 100:g} % of the average)"


def _excursion(excursion: float | None, mean: float, unit: str = "") -> str:
    """``300 IOPS (2.56 % of the average)``."""
    if excursion is None or mean == 0:
        return _with_unit(excursion, unit)
    return f"{_with_unit(excursion, unit)} ({_share(100 * excursion / mean)} % of the average)"


def _share(percent: float) -> str:
    """A percentage with at most two decimals: ``2.56``, ``0.22``, ``20``."""
    text = f"{percent:,.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _rounds_text(rounds: tuple[int, ...], window: int, rounds_run: int | None = None) -> str:
    if not rounds:
        return f"no rounds (needs {window})"
    of = f" of {rounds_run}" if rounds_run else ""
    return f"rounds {rounds[0]}-{rounds[-1]}{of}"


def _recorded_excursion(excursion: float, mean: float) -> str:
    """``300 (2.56 % of average)``: the wording of a recorded ``reason`` (kept as runs
    recorded it)."""

    def plain(value: float, decimals: int) -> str:
        text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text

    if mean == 0:
        return plain(excursion, 3)
    return f"{plain(excursion, 3)} ({plain(100 * excursion / mean, 2)} % of average)"


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
        f"{name} excursion {_recorded_excursion(measured, mean)} "
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

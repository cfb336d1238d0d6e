"""SNIA PTS steady-state rule: the examples of methodology.md, hand-computed windows, limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssdlab.analysis import SteadyState, run_until_steady, snia_steady_state, steady_round

# The published sample report gives only the figures of rounds 1-5: average 11726 (shown
# truncated; the allowed excursions 2345.36 = 0.2 x 11726.8 and 1172.68 = 0.1 x 11726.8 fix
# it at 11726.8), measured data excursion 300, slope excursion 25.6 (= |slope| x 4, so slope
# -6.4) and the fit -6.4 x R + 11746 (11746 - 6.4 x 3 = 11726.8, consistent). Any five values
# with sum 5 x 11726.8 = 58634, sum((R - 3) x y) = -6.4 x sum((R - 3)^2) = -64 and
# max - min = 300 reproduce every published figure:
#   11700 + 11900 + 11600 + 11632 + 11802 = 58634
#   -2 x 11700 - 11900 + 0 + 11632 + 2 x 11802 = -64
#   11900 - 11600 = 300
PUBLISHED = [11700, 11900, 11600, 11632, 11802]
COUNTER = [22119.344, 21925.985, 23808.540, 24945.336, 25680.405]


def test_published_example_is_steady() -> None:
    ss = snia_steady_state(PUBLISHED)
    assert ss.steady
    assert ss.rounds == (1, 2, 3, 4, 5)
    assert int(ss.mean) == 11726
    assert ss.mean == pytest.approx(11726.8)
    assert ss.allowed_data_excursion == pytest.approx(2345.36)
    assert ss.data_excursion == 300
    assert ss.allowed_slope_excursion == pytest.approx(1172.68)
    assert ss.slope_excursion == pytest.approx(25.6)
    assert ss.slope == pytest.approx(-6.4)
    assert ss.intercept == pytest.approx(11746)


def test_published_example_table() -> None:
    table = dict(snia_steady_state(PUBLISHED).to_table("IOPS", rounds_run=5).iter_rows())
    assert table == {
        "Measurement window": "rounds 1-5 of 5",
        "Average value": "11,726.80 IOPS",
        "Allowed maximum data excursion": "2,345.36 IOPS (20 % of the average)",
        "Measured maximum data excursion": "300.00 IOPS (2.56 % of the average)",
        "Allowed maximum slope excursion": "1,172.68 IOPS (10 % of the average)",
        "Measured maximum slope excursion": "25.60 IOPS (0.22 % of the average)",
        "Least squares linear fit formula": "-6.4 x R + 11,746",
        "Steady state": "yes: data excursion 2.56 % of the average within the 20 % limit; "
        "slope excursion 0.22 % of the average within the 10 % limit",
    }
    # the recorded reason keeps the wording runs recorded
    assert snia_steady_state(PUBLISHED).reason == (
        "data excursion 300 (2.56 % of average) within the 20 % limit; "
        "slope excursion 25.6 (0.22 % of average) within the 10 % limit"
    )


def test_table_in_display_units_has_one_format_and_no_raw_units() -> None:
    # latency in ns shown in µs: the verdict is in shares, never in the recorded unit
    ns = [208_714.2, 210_100.0, 207_000.5, 209_999.9, 206_500.0]
    state = snia_steady_state(ns)
    table = dict(state.scaled(1e-3).to_table("µs").iter_rows())
    assert table["Average value"] == "208.46 µs"
    assert table["Allowed maximum data excursion"] == "41.69 µs (20 % of the average)"
    assert "208462" not in table["Steady state"] and "% of the average" in table["Steady state"]
    assert table["Steady state"] == f"yes: {state.verdict}"


def test_scaled_keeps_the_verdict_and_scales_every_figure() -> None:
    state = snia_steady_state(COUNTER)
    scaled = state.scaled(1e-3)
    assert scaled.steady is state.steady and scaled.rounds == state.rounds
    assert scaled.verdict == state.verdict
    for name in ("mean", "data_excursion", "slope", "intercept", "allowed_slope_excursion"):
        assert getattr(scaled, name) == pytest.approx(getattr(state, name) * 1e-3)
    assert scaled.values == pytest.approx([v * 1e-3 for v in COUNTER])


def test_from_record_rebuilds_the_determination() -> None:
    state = snia_steady_state([900.0, *PUBLISHED])
    record = {
        "steady": state.steady,
        "reason": state.reason,
        "window": 5,
        **{k: getattr(state, k) for k in ("mean", "slope", "intercept", "data_excursion")},
        "allowed_data_excursion": state.allowed_data_excursion,
        "slope_excursion": state.slope_excursion,
        "allowed_slope_excursion": state.allowed_slope_excursion,
    }
    rebuilt = SteadyState.from_record(record, dict(zip(state.rounds, state.values, strict=True)))
    assert rebuilt == state


def test_fit_is_numpys_least_squares_line() -> None:
    state = snia_steady_state(COUNTER)
    slope, intercept = np.polyfit(state.rounds, state.values, 1)
    assert state.slope == pytest.approx(slope) and state.intercept == pytest.approx(intercept)
    assert state.fit(3) == pytest.approx(slope * 3 + intercept)


def _bands_hold(state: SteadyState) -> tuple[bool, bool]:
    """Whether every round is in the data band, and the fit's ends in the slope band."""
    low, high = state.data_band
    in_data = all(low - 1e-9 * abs(high) <= v <= high + 1e-9 * abs(high) for v in state.values)
    s_low, s_high = state.slope_band
    ends = (state.fit(state.rounds[0]), state.fit(state.rounds[-1]))
    tol = 1e-9 * abs(s_high)
    in_slope = all(s_low - tol <= e <= s_high + tol for e in ends)
    return in_data, in_slope


def test_bands_show_the_published_limits() -> None:
    state = snia_steady_state(PUBLISHED)
    # data band: 20 % of the average wide, centred between 11600 and 11900
    assert state.data_band == pytest.approx((11750 - 1172.68, 11750 + 1172.68))
    # slope band: 10 % of the average wide, centred on the average
    assert state.slope_band == pytest.approx((11726.8 - 586.34, 11726.8 + 586.34))
    assert _bands_hold(state) == (True, True)
    counter = snia_steady_state(COUNTER)
    assert _bands_hold(counter) == (True, False)  # in the data band, the fit leaves its band


def test_counter_example_fails_on_slope() -> None:
    ss = snia_steady_state(COUNTER)
    assert not ss.steady
    assert round(100 * ss.data_excursion / ss.mean, 2) == 15.84
    assert ss.data_excursion <= ss.allowed_data_excursion
    assert round(100 * ss.slope_excursion / ss.mean, 2) == 17.12
    assert ss.slope_excursion > ss.allowed_slope_excursion
    assert "within the 20 % limit" in ss.reason
    assert "exceeds the 10 % limit" in ss.reason


def test_hand_computed_window_uses_last_rounds() -> None:
    # window 100, 102, 104, 106, 108 at rounds 3-7: mean 104, range 8 (allowed 20.8),
    # slope 2 (excursion 8, allowed 10.4), intercept 104 - 2 x 5 = 94.
    ss = snia_steady_state([5, 1000, 100, 102, 104, 106, 108])
    assert ss.steady
    assert ss.rounds == (3, 4, 5, 6, 7)
    assert ss.values == (100, 102, 104, 106, 108)
    assert (ss.mean, ss.data_excursion, ss.slope, ss.slope_excursion) == (104, 8, 2, 8)
    assert ss.intercept == pytest.approx(94)
    assert ss.allowed_data_excursion == pytest.approx(20.8)
    assert ss.allowed_slope_excursion == pytest.approx(10.4)
    assert dict(ss.to_table().iter_rows())["Least squares linear fit formula"] == "2 x R + 94"


def test_hand_computed_window_fails_on_range() -> None:
    # mean 100, range 40 > 20; sum((R - 3) y) = -160 - 120 + 100 + 200 = 20 -> slope 2,
    # slope excursion 8 <= 10.
    ss = snia_steady_state([80, 120, 100, 100, 100])
    assert not ss.steady
    assert (ss.data_excursion, ss.slope, ss.slope_excursion) == (40, 2, 8)
    assert "data excursion 40 (40 % of average) exceeds the 20 % limit" in ss.reason
    assert "slope excursion 8 (8 % of average) within the 10 % limit" in ss.reason


def test_window_of_three() -> None:
    # rounds 2-4: 10, 11, 12 -> mean 11, slope 1, slope excursion 2 > 1.1
    ss = snia_steady_state([50, 10, 11, 12], window=3)
    assert ss.rounds == (2, 3, 4)
    assert ss.slope_excursion == 2
    assert not ss.steady


@pytest.mark.parametrize(
    ("values", "steady"),
    [
        # data excursion exactly 20 % of the mean (slope 1: excursion 4 of allowed 10)
        ([90, 110, 100, 100, 100], True),
        ([90, 110.001, 100, 100, 100], False),
        # the same in binary fractions: 1.1 - 0.9 is 0.20000000000000007 in doubles
        ([0.9, 1.1, 1.0, 1.0, 1.0], True),
        # slope excursion exactly 10 %: y = 37 + R has mean 40 and slope 1 -> 4 = 0.1 x 40
        ([38, 39, 40, 41, 42], True),
        ([37 + 1.001 * r for r in range(1, 6)], False),
    ],
)
def test_limits_are_inclusive(values: list[float], steady: bool) -> None:
    assert snia_steady_state(values).steady is steady


def test_too_few_rounds() -> None:
    ss = snia_steady_state([1.0, 2.0, 3.0])
    assert not ss.steady
    assert ss.rounds == (1, 2, 3)
    assert ss.reason == "only 3 round(s) measured; the window needs 5"
    assert ss.mean is None and ss.slope is None
    assert dict(ss.to_table().iter_rows()) == {
        "Measurement window": "rounds 1-3",
        "Steady state": "no: only 3 round(s) measured; the window needs 5",
    }
    assert snia_steady_state([]).rounds == ()


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        snia_steady_state([1, 2, 3], window=1)
    with pytest.raises(ValueError, match="finite"):
        snia_steady_state([1, 2, 3, 4, float("nan")])
    with pytest.raises(ValueError, match="max_rounds"):
        steady_round([1.0], window=5, max_rounds=4)
    with pytest.raises(ValueError, match="more than max_rounds"):
        steady_round([1.0] * 26)


def test_steady_round_stops_when_steady() -> None:
    # falls from 1000 to 100; rounds 3-7 (100, 101, 100, 99, 100) are the first steady window
    series = [1000, 500, 100, 101, 100, 99, 100]
    decisions = [steady_round(series[:n]) for n in range(1, len(series) + 1)]
    assert decisions[:-1] == [None] * (len(series) - 1)
    final = decisions[-1]
    assert final is not None and final.steady
    assert final.rounds == (3, 4, 5, 6, 7)


def test_steady_round_stops_at_limit_not_steady() -> None:
    series = [100.0 if r % 2 else 200.0 for r in range(1, 26)]
    assert all(steady_round(series[:n]) is None for n in range(1, 25))
    final = steady_round(series)
    assert final is not None and not final.steady
    assert final.rounds == (21, 22, 23, 24, 25)


def test_steady_round_steady_on_last_round_counts() -> None:
    series = [100.0 if r % 2 else 200.0 for r in range(1, 21)] + [150.0] * 5
    final = steady_round(series)
    assert final is not None and final.steady and final.rounds == (21, 22, 23, 24, 25)


def test_run_until_steady_measures_rounds_in_order() -> None:
    series = [1000, 500, 100, 101, 100, 99, 100, 100, 100]
    calls: list[int] = []

    def measure(round_number: int) -> float:
        calls.append(round_number)
        return series[round_number - 1]

    ss = run_until_steady(measure)
    assert calls == [1, 2, 3, 4, 5, 6, 7]
    assert ss.steady and ss.rounds == (3, 4, 5, 6, 7)


def test_run_until_steady_gives_up_at_max_rounds() -> None:
    ss = run_until_steady(lambda r: float(r * r), window=3, max_rounds=6)
    assert not ss.steady
    assert ss.rounds == (4, 5, 6)


positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)
series = st.lists(positive, min_size=5, max_size=12)


@given(value=positive, length=st.integers(min_value=5, max_value=30))
def test_constant_series_is_steady(value: float, length: int) -> None:
    ss = snia_steady_state([value] * length)
    assert ss.steady
    assert ss.data_excursion == 0 and ss.slope == 0
    assert ss.mean == pytest.approx(value)
    assert ss.rounds == tuple(range(length - 4, length + 1))


@given(values=series, exponent=st.integers(min_value=-30, max_value=30))
def test_scaling_by_power_of_two_is_exact(values: list[float], exponent: int) -> None:
    # scaling by 2^k is exact in binary floating point, so every figure scales exactly
    k = 2.0**exponent
    ss, scaled = snia_steady_state(values), snia_steady_state([v * k for v in values])
    assert scaled.steady is ss.steady
    assert scaled.mean == ss.mean * k
    assert scaled.slope == ss.slope * k
    assert scaled.data_excursion == ss.data_excursion * k
    assert scaled.slope_excursion == ss.slope_excursion * k


@given(values=series)
def test_reversing_the_window_negates_the_slope(values: list[float]) -> None:
    ss, rev = snia_steady_state(values[-5:]), snia_steady_state(values[-5:][::-1])
    assert rev.steady is ss.steady
    assert rev.slope == -ss.slope
    assert rev.mean == ss.mean


@given(prefix=st.lists(positive, max_size=10), window=series)
def test_only_the_last_window_counts(prefix: list[float], window: list[float]) -> None:
    alone, after = snia_steady_state(window), snia_steady_state(prefix + window)
    assert after.steady is alone.steady
    assert after.values == alone.values
    assert after.slope == alone.slope
    assert after.rounds == tuple(r + len(prefix) for r in alone.rounds)


@given(values=series)
def test_bands_hold_exactly_when_the_limits_do(values: list[float]) -> None:
    state = snia_steady_state(values)
    data_ok = state.data_excursion <= state.allowed_data_excursion * (1 + 1e-9)
    slope_ok = state.slope_excursion <= state.allowed_slope_excursion * (1 + 1e-9)
    in_data, in_slope = _bands_hold(state)
    # away from the limits (within float noise of them either answer is right)
    if abs(state.data_excursion - state.allowed_data_excursion) > 1e-6 * state.mean:
        assert in_data == data_ok
    if abs(state.slope_excursion - state.allowed_slope_excursion) > 1e-6 * state.mean:
        assert in_slope == slope_ok

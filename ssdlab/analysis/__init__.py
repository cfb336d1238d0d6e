"""Figures computed from tidy frames (percentiles, steady state, derived review figures)."""

from .figures import Consistency, MixSweep, consistency, mix_sweep, qd_scaling
from .percentiles import fio_percentiles
from .steady_state import SteadyState, run_until_steady, snia_steady_state, steady_round

__all__ = [
    "Consistency",
    "MixSweep",
    "SteadyState",
    "consistency",
    "fio_percentiles",
    "mix_sweep",
    "qd_scaling",
    "run_until_steady",
    "snia_steady_state",
    "steady_round",
]

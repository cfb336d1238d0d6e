"""Every computation the reports show, from the tidy frames: the public analysis API.

- :mod:`.steps`: one row per step and direction (fio's per-job rows combined);
- :mod:`.workloads`: workload classification, QD sweeps and mix sweeps;
- :mod:`.figures`: QD scaling, performance consistency and mix-sweep figures of a summary;
- :mod:`.tails`: the long random-write runs a review scores;
- :mod:`.latency`: the QoS choice and percentile curves; :mod:`.percentiles`: fio's rule;
- :mod:`.steady_state`: the SNIA PTS steady-state determination;
- :mod:`.pts`: the SNIA PTS report pages' figures (round blocks, window results, WSAT);
- :mod:`.drive`: :class:`DriveAnalysis`, one run's figures computed once;
- :mod:`.compare`: :class:`ComparisonAnalysis`, the scores of several runs.

Names are imported on first use (the runner needs only the steady-state rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .compare import ComparisonAnalysis
    from .drive import DriveAnalysis
    from .figures import Consistency, MixSweep, consistency, mix_sweep, qd_scaling
    from .latency import percentile_curves, qos_choice
    from .percentiles import fio_percentiles
    from .pts import (
        RoundBlock,
        WriteSaturation,
        round_blocks,
        round_cells,
        saturation_spans,
        window_results,
        write_saturation,
    )
    from .steady_state import SteadyState, run_until_steady, snia_steady_state, steady_round
    from .steps import RUN_KEYS, per_step
    from .tails import ConsistencyRun, consistency_runs
    from .workloads import (
        BANDWIDTH_BS,
        Mixes,
        classify,
        fill_steps,
        mix_points,
        qd_points,
        workload_label,
    )

#: public name -> the module that defines it
_PUBLIC = {
    "BANDWIDTH_BS": ".workloads",
    "classify": ".workloads",
    "ComparisonAnalysis": ".compare",
    "Consistency": ".figures",
    "consistency": ".figures",
    "consistency_runs": ".tails",
    "ConsistencyRun": ".tails",
    "DriveAnalysis": ".drive",
    "fill_steps": ".workloads",
    "fio_percentiles": ".percentiles",
    "mix_points": ".workloads",
    "mix_sweep": ".figures",
    "Mixes": ".workloads",
    "MixSweep": ".figures",
    "per_step": ".steps",
    "percentile_curves": ".latency",
    "qd_points": ".workloads",
    "qd_scaling": ".figures",
    "qos_choice": ".latency",
    "quoted_mix": ".figures",
    "RUN_KEYS": ".steps",
    "round_blocks": ".pts",
    "round_cells": ".pts",
    "RoundBlock": ".pts",
    "saturation_spans": ".pts",
    "window_results": ".pts",
    "write_saturation": ".pts",
    "WriteSaturation": ".pts",
    "run_until_steady": ".steady_state",
    "snia_steady_state": ".steady_state",
    "steady_round": ".steady_state",
    "SteadyState": ".steady_state",
    "workload_label": ".workloads",
}
__all__ = [
    "BANDWIDTH_BS",
    "RUN_KEYS",
    "ComparisonAnalysis",
    "Consistency",
    "ConsistencyRun",
    "DriveAnalysis",
    "MixSweep",
    "Mixes",
    "RoundBlock",
    "SteadyState",
    "WriteSaturation",
    "classify",
    "consistency",
    "consistency_runs",
    "fill_steps",
    "fio_percentiles",
    "mix_points",
    "mix_sweep",
    "per_step",
    "percentile_curves",
    "qd_points",
    "qd_scaling",
    "qos_choice",
    "quoted_mix",
    "round_blocks",
    "round_cells",
    "run_until_steady",
    "saturation_spans",
    "snia_steady_state",
    "steady_round",
    "window_results",
    "workload_label",
    "write_saturation",
]


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())

"""Every computation the reports show, from the tidy frames: the public analysis API.

- :mod:`.steps`: one row per step and direction (fio's per-job rows combined);
- :mod:`.workloads`: workload classification, QD sweeps and mix sweeps;
- :mod:`.figures`: QD scaling, performance consistency and mix-sweep figures of a summary;
- :mod:`.tails`: the long random-write runs a review scores;
- :mod:`.latency`: the QoS choice, percentile curves and percentiles over time;
  :mod:`.percentiles`: fio's rule; :mod:`.exceedance`: share of I/Os at least as slow as
  each latency (json+ bins);
- :mod:`.endurance`: WAF per workload and endurance projections from ratings and SMART;
- :mod:`.fill`: whole-drive fills (where the SLC cache ends); :mod:`.recovery`: the SNIA PTS
  2.0 recovery tests (host idle, cross stimulus);
- :mod:`.load`: latency against offered load (load sweeps, SNIA PTS 2.0 DIRTH);
- :mod:`.repeats`: repeated steps (``--repeat``): the median repeat, 95 % intervals, leads
  larger than the noise;
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
    from .endurance import Endurance, drive_endurance, project, rating, waf_by_workload, waf_steps
    from .exceedance import exceedance
    from .figures import Consistency, MixSweep, consistency, mix_sweep, qd_scaling
    from .fill import Fill, cache_end, fill_totals, fills, preconditioning_steps
    from .latency import (
        downsample_intervals,
        drive_intervals,
        latency_shifts,
        percentile_curves,
        qos_choice,
        time_choice,
    )
    from .load import (
        Dirth,
        LoadSweeps,
        dirth,
        dirth_cells,
        load_points,
        load_sweeps,
        step_latency,
        sweep_steps,
    )
    from .percentiles import fio_percentiles
    from .pts import (
        RoundBlock,
        WriteSaturation,
        round_blocks,
        round_cells,
        saturation_spans,
        step_series,
        window_results,
        write_saturation,
    )
    from .recovery import (
        CrossStimulusRecovery,
        HostIdleRecovery,
        cross_stimulus_recovery,
        host_idle_recovery,
        recovery_time,
    )
    from .repeats import (
        Interval,
        Lead,
        interval,
        lead,
        median_repeats,
        planned_repeats,
        repeat_figures,
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
    "load_sweeps": ".load",
    "load_points": ".load",
    "LoadSweeps": ".load",
    "dirth": ".load",
    "dirth_cells": ".load",
    "Dirth": ".load",
    "sweep_steps": ".load",
    "step_latency": ".load",
    "Endurance": ".endurance",
    "drive_endurance": ".endurance",
    "project": ".endurance",
    "rating": ".endurance",
    "waf_by_workload": ".endurance",
    "waf_steps": ".endurance",
    "cache_end": ".fill",
    "fills": ".fill",
    "fill_totals": ".fill",
    "preconditioning_steps": ".fill",
    "Fill": ".fill",
    "host_idle_recovery": ".recovery",
    "cross_stimulus_recovery": ".recovery",
    "HostIdleRecovery": ".recovery",
    "CrossStimulusRecovery": ".recovery",
    "recovery_time": ".recovery",
    "step_series": ".pts",
    "BANDWIDTH_BS": ".workloads",
    "classify": ".workloads",
    "ComparisonAnalysis": ".compare",
    "Consistency": ".figures",
    "consistency": ".figures",
    "consistency_runs": ".tails",
    "ConsistencyRun": ".tails",
    "DriveAnalysis": ".drive",
    "downsample_intervals": ".latency",
    "drive_intervals": ".latency",
    "exceedance": ".exceedance",
    "Interval": ".repeats",
    "interval": ".repeats",
    "Lead": ".repeats",
    "lead": ".repeats",
    "latency_shifts": ".latency",
    "median_repeats": ".repeats",
    "planned_repeats": ".repeats",
    "repeat_figures": ".repeats",
    "time_choice": ".latency",
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
    "CrossStimulusRecovery",
    "Dirth",
    "DriveAnalysis",
    "Endurance",
    "Fill",
    "HostIdleRecovery",
    "Interval",
    "Lead",
    "LoadSweeps",
    "MixSweep",
    "Mixes",
    "RoundBlock",
    "SteadyState",
    "WriteSaturation",
    "cache_end",
    "classify",
    "consistency",
    "consistency_runs",
    "cross_stimulus_recovery",
    "dirth",
    "dirth_cells",
    "downsample_intervals",
    "drive_endurance",
    "drive_intervals",
    "exceedance",
    "fill_steps",
    "fill_totals",
    "fills",
    "fio_percentiles",
    "host_idle_recovery",
    "interval",
    "latency_shifts",
    "lead",
    "load_points",
    "load_sweeps",
    "median_repeats",
    "mix_points",
    "mix_sweep",
    "per_step",
    "percentile_curves",
    "planned_repeats",
    "preconditioning_steps",
    "project",
    "qd_points",
    "qd_scaling",
    "qos_choice",
    "quoted_mix",
    "rating",
    "recovery_time",
    "repeat_figures",
    "round_blocks",
    "round_cells",
    "run_until_steady",
    "saturation_spans",
    "snia_steady_state",
    "steady_round",
    "step_latency",
    "step_series",
    "sweep_steps",
    "time_choice",
    "waf_by_workload",
    "waf_steps",
    "window_results",
    "workload_label",
    "write_saturation",
]


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())

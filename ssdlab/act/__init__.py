"""Aerospike Certification Tool (ACT) storage workload: native logs, latency tables and the
pass rule (as ``act_latency.py``), ACT's derived rates, a fio emulation of the workload run
slice by slice into results directories (:func:`~ssdlab.act.run.act_trials` runs trials with
ACT's defaults), the search for a drive's ACT score, and native logs added to results
directories (:func:`ssdlab.act.imports.import_act_log`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .histogram import edge_bin_ns, hist_log_table
    from .latency import (
        ACT_LIMITS,
        LatencyReport,
        format_table,
        latency_report,
        latency_table,
        passes,
    )
    from .log import ActLog, read_act_log
    from .run import ActTrials, act_trials
    from .search import Search, find_score
    from .trials import ActRecord, FioSettings, SliceResult, Trial, native_trial
    from .workload import (
        ActConfig,
        DerivedConfig,
        TrialTiming,
        act_config,
        config_text,
        derive,
        fio_jobs,
        fio_settings,
        format_derived,
    )

#: public name -> the module that defines it (imported on first use)
_PUBLIC = {
    "ACT_LIMITS": ".latency",
    "ActConfig": ".workload",
    "ActLog": ".log",
    "ActRecord": ".trials",
    "ActTrials": ".run",
    "DerivedConfig": ".workload",
    "FioSettings": ".trials",
    "LatencyReport": ".latency",
    "Search": ".search",
    "SliceResult": ".trials",
    "Trial": ".trials",
    "TrialTiming": ".workload",
    "act_config": ".workload",
    "act_trials": ".run",
    "config_text": ".workload",
    "derive": ".workload",
    "edge_bin_ns": ".histogram",
    "find_score": ".search",
    "fio_jobs": ".workload",
    "fio_settings": ".workload",
    "format_derived": ".workload",
    "format_table": ".latency",
    "hist_log_table": ".histogram",
    "latency_report": ".latency",
    "latency_table": ".latency",
    "native_trial": ".trials",
    "passes": ".latency",
    "read_act_log": ".log",
}
__all__ = [
    "ACT_LIMITS",
    "ActConfig",
    "ActLog",
    "ActRecord",
    "ActTrials",
    "DerivedConfig",
    "FioSettings",
    "LatencyReport",
    "Search",
    "SliceResult",
    "Trial",
    "TrialTiming",
    "act_config",
    "act_trials",
    "config_text",
    "derive",
    "edge_bin_ns",
    "find_score",
    "fio_jobs",
    "fio_settings",
    "format_derived",
    "format_table",
    "hist_log_table",
    "latency_report",
    "latency_table",
    "native_trial",
    "passes",
    "read_act_log",
]

__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())

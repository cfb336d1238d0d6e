"""Aerospike Certification Tool (ACT) storage workload: native logs, latency tables and the
pass rule (as ``act_latency.py``), ACT's derived rates, a fio emulation of the workload run
slice by slice into results directories (:class:`TrialTiming` and :func:`fio_settings` give a
trial ACT's defaults), the search for a drive's ACT score, and native logs added to results
directories (:func:`ssdlab.act.imports.import_act_log`)."""

from .histogram import edge_bin_ns, hist_log_table
from .latency import ACT_LIMITS, format_table, latency_table, passes
from .log import ActLog, read_act_log
from .search import Search, find_score
from .trials import ActRecord, FioSettings, SliceResult, Trial, native_trial
from .workload import (
    ActConfig,
    DerivedConfig,
    TrialTiming,
    derive,
    fio_jobs,
    fio_settings,
    format_derived,
)

__all__ = [
    "ACT_LIMITS",
    "ActConfig",
    "ActLog",
    "ActRecord",
    "DerivedConfig",
    "FioSettings",
    "Search",
    "SliceResult",
    "Trial",
    "TrialTiming",
    "derive",
    "edge_bin_ns",
    "find_score",
    "fio_jobs",
    "fio_settings",
    "format_derived",
    "format_table",
    "hist_log_table",
    "latency_table",
    "native_trial",
    "passes",
    "read_act_log",
]
